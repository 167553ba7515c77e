//! Metadata text files: `partition.metadata` in a partition folder and
//! `meta.properties` at the root of a log directory.
//!
//! ```text
//! version: 0                       partition.metadata (no trailing newline)
//! topic_id: P3mZr1rGQ2KQz9C0XbVJfA
//! ```
//!
//! Both are read as the broker reads them, so klog neither rejects a file
//! the broker would load nor accepts one it would refuse:
//!
//! - `partition.metadata` (`PartitionMetadataReadBuffer`): the first two
//!   lines are each split at `:` followed by whitespace and must give
//!   exactly 2 parts; the first value is the version, which must be at
//!   least 0 (`PartitionMetadataReadBuffer` accepts any version from
//!   `PartitionMetadataFile.CURRENT_VERSION` up, for downgrades, and refuses
//!   negative ones); the second is the topic id, a
//!   Kafka UUID (16 bytes as URL-safe base64, 22 characters without padding;
//!   `==` padding is accepted as Java's decoder does), and the all-zero id is
//!   refused. The names before the `:` are not checked and anything after
//!   line 2 is ignored, as the broker does.
//! - `meta.properties` (`MetaProperties`): a Java properties file, read
//!   with `java.util.Properties.load` rules (ISO-8859-1; `#`/`!` comment
//!   lines; blank lines; the key ends at the first unescaped `=`, `:` or
//!   whitespace, so a line with no `=` is a key with an empty value, not an
//!   error; backslash escapes, `\uXXXX`, and continuation lines ending in an
//!   odd number of backslashes; the last of duplicate keys wins). Then:
//!   `version` is 0 when absent, else 0 (ZooKeeper era: optional `broker.id`
//!   and `cluster.id`) or 1 (KRaft: `node.id` and `cluster.id` required);
//!   ids are base-10 32-bit integers; an optional `directory.id` must be a
//!   Kafka UUID. Unknown keys are ignored.
//!
//! Errors name the file and the line (`line N: ...`; for a missing required
//! key, the `version` line that requires it). A missing file is `Ok(None)`.

use std::fmt;
use std::path::Path;

use base64::alphabet;
use base64::engine::{DecodePaddingMode, GeneralPurpose, GeneralPurposeConfig};
use base64::Engine;

use crate::error::{Error, Result};

/// A partition folder's topic id file.
pub const PARTITION_METADATA: &str = "partition.metadata";
/// A log directory's identity file.
pub const META_PROPERTIES: &str = "meta.properties";

/// Kafka's `Uuid`: 16 bytes, shown as URL-safe base64 without padding.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Uuid(pub [u8; 16]);

/// Encodes without padding; decodes like `java.util.Base64.getUrlDecoder()`
/// (padding optional, unused trailing bits ignored).
const KAFKA_BASE64: GeneralPurpose = GeneralPurpose::new(
    &alphabet::URL_SAFE,
    GeneralPurposeConfig::new()
        .with_encode_padding(false)
        .with_decode_padding_mode(DecodePaddingMode::Indifferent)
        .with_decode_allow_trailing_bits(true),
);

impl Uuid {
    /// The reserved all-zero id (`Uuid.ZERO_UUID`).
    pub const ZERO: Uuid = Uuid([0; 16]);

    /// Parse the text form (`Uuid.fromString`); the reason when it is not one.
    pub fn parse(s: &str) -> std::result::Result<Uuid, String> {
        if s.len() > 24 {
            return Err(format!("{s:?} is too long for a base64 UUID"));
        }
        let bytes = KAFKA_BASE64
            .decode(s)
            .map_err(|e| format!("{s:?} is not URL-safe base64 ({e})"))?;
        let arr: [u8; 16] = bytes.as_slice().try_into().map_err(|_| {
            format!(
                "{s:?} decodes to {} bytes, not the 16 of a UUID",
                bytes.len()
            )
        })?;
        Ok(Uuid(arr))
    }
}

impl fmt::Display for Uuid {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&KAFKA_BASE64.encode(self.0))
    }
}

/// As its text form.
impl serde::Serialize for Uuid {
    fn serialize<S: serde::Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

/// A string (the text form).
impl schemars::JsonSchema for Uuid {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Uuid".into()
    }

    fn json_schema(generator: &mut schemars::SchemaGenerator) -> schemars::Schema {
        String::json_schema(generator)
    }

    fn inline_schema() -> bool {
        true
    }
}

/// The content of `partition.metadata`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionMetadata {
    /// 0 as brokers write it; a higher one (a newer broker's) is read the same way.
    pub version: i32,
    pub topic_id: Uuid,
}

/// Read `<partition folder>/partition.metadata`; `None` when it does not exist.
pub fn read_partition_metadata(path: &Path) -> Result<Option<PartitionMetadata>> {
    let Some(bytes) = read_if_exists(path)? else {
        return Ok(None);
    };
    let text = String::from_utf8_lossy(&bytes);
    parse_partition_metadata(&text)
        .map(Some)
        .map_err(|(line, why)| Error::layout(path, format!("line {line}: {why}")))
}

/// Parse the text of `partition.metadata`; errors are (line number, reason).
pub fn parse_partition_metadata(
    text: &str,
) -> std::result::Result<PartitionMetadata, (usize, String)> {
    let mut lines = natural_lines(text).into_iter();
    let value = |n: usize, line: Option<(usize, &str)>, what: &str, example: &str| {
        let Some((_, line)) = line else {
            return Err((n, format!("missing {what} line (expected `{example}`)")));
        };
        match java_split_colon_space(line).as_slice() {
            [_, v] if v.split_whitespace().count() > 1 => Err((
                n,
                format!(
                    "malformed line {line:?}: {} fields where `{example}` has 2",
                    line.split_whitespace().count()
                ),
            )),
            [_, v] => Ok(v.to_string()),
            parts => Err((
                n,
                format!(
                    "malformed line {line:?}: {} part(s) where `{example}` has 2",
                    parts.len()
                ),
            )),
        }
    };
    let v = value(1, lines.next(), "version", "version: 0")?;
    let version: i32 = v
        .parse()
        .map_err(|_| (1, format!("version {v:?} is not a number")))?;
    // `PartitionMetadataReadBuffer`: "To ensure downgrade compatibility,
    // check if version is at least 0"; only a lower one is refused.
    if version < 0 {
        return Err((1, format!("negative version {version}")));
    }
    let id = value(2, lines.next(), "topic_id", "topic_id: <22-character id>")?;
    let topic_id = Uuid::parse(&id).map_err(|why| (2, format!("topic id {why}")))?;
    if topic_id == Uuid::ZERO {
        return Err((
            2,
            "the all-zero topic id is not a valid topic id".to_string(),
        ));
    }
    Ok(PartitionMetadata { version, topic_id })
}

/// `line.split(":\\s+")` as Java does it: a leading empty part is kept,
/// trailing empty parts are dropped.
fn java_split_colon_space(line: &str) -> Vec<&str> {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\n' | '\x0b' | '\x0c' | '\r');
    let mut parts = Vec::new();
    let mut start = 0;
    let mut rest = line;
    let mut at = 0;
    while let Some(i) = rest.find(':') {
        let after = &rest[i + 1..];
        let ws = after.len() - after.trim_start_matches(is_ws).len();
        if ws > 0 {
            parts.push(&line[start..at + i]);
            start = at + i + 1 + ws;
        }
        at += i + 1 + ws;
        rest = &line[at..];
    }
    parts.push(&line[start..]);
    while parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    parts
}

/// The content of `meta.properties`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MetaProperties {
    /// 0 (ZooKeeper era) or 1 (KRaft).
    pub version: u8,
    /// `broker.id` in version 0 (optional there), `node.id` in version 1.
    pub node_id: Option<i32>,
    /// `cluster.id` (required in version 1).
    pub cluster_id: Option<String>,
    /// `directory.id` (KIP-858), when present.
    pub directory_id: Option<Uuid>,
}

/// The `node.id` in `data_dir`'s `meta.properties`, when it says.
pub fn node_id(data_dir: &Path) -> Option<i32> {
    read_meta_properties(&data_dir.join("meta.properties"))
        .ok()
        .flatten()
        .and_then(|m| m.node_id)
}

/// The `cluster.id` in `data_dir`'s `meta.properties`, when it says.
pub fn cluster_id(data_dir: &Path) -> Option<String> {
    read_meta_properties(&data_dir.join(META_PROPERTIES))
        .ok()
        .flatten()
        .and_then(|m| m.cluster_id)
}

/// Read `<log dir>/meta.properties`; `None` when it does not exist.
pub fn read_meta_properties(path: &Path) -> Result<Option<MetaProperties>> {
    let Some(bytes) = read_if_exists(path)? else {
        return Ok(None);
    };
    // Properties.load(InputStream) reads ISO-8859-1: every byte is one char.
    let text: String = bytes.iter().map(|&b| char::from(b)).collect();
    parse_meta_properties(&text)
        .map(Some)
        .map_err(|(line, why)| Error::layout(path, format!("line {line}: {why}")))
}

/// Parse the text of `meta.properties`; errors are (line number, reason).
pub fn parse_meta_properties(text: &str) -> std::result::Result<MetaProperties, (usize, String)> {
    let props = parse_properties(text)?;
    let get = |key: &str| props.iter().rev().find(|p| p.key == key);
    let (version, version_line) = match get("version") {
        None => (0, 0),
        Some(p) => {
            let n: i32 = p
                .value
                .trim()
                .parse()
                .map_err(|_| (p.line, format!("version {:?} is not a number", p.value)))?;
            match n {
                0 => (0u8, p.line),
                1 => (1u8, p.line),
                n => {
                    return Err((
                        p.line,
                        format!("unsupported meta.properties version {n} (expected 0 or 1)"),
                    ))
                }
            }
        }
    };
    let int = |p: &Property| {
        p.value.parse::<i32>().map_err(|_| {
            (
                p.line,
                format!("{} {:?} is not a base-10 32-bit integer", p.key, p.value),
            )
        })
    };
    let node_key = if version == 0 { "broker.id" } else { "node.id" };
    let node_id = match get(node_key) {
        Some(p) => Some(int(p)?),
        None if version == 0 => None,
        None => {
            return Err((
                version_line,
                "version 1 requires node.id, which is missing".to_string(),
            ))
        }
    };
    let cluster_id = get("cluster.id").map(|p| p.value.clone());
    if version == 1 && cluster_id.is_none() {
        return Err((
            version_line,
            "version 1 requires cluster.id, which is missing".to_string(),
        ));
    }
    let directory_id = match get("directory.id") {
        None => None,
        Some(p) => {
            Some(Uuid::parse(&p.value).map_err(|why| (p.line, format!("directory.id {why}")))?)
        }
    };
    Ok(MetaProperties {
        version,
        node_id,
        cluster_id,
        directory_id,
    })
}

/// One `key=value` of a properties file and the line it starts on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Property {
    pub key: String,
    pub value: String,
    /// 1-based line number where the (possibly continued) line starts.
    pub line: usize,
}

/// Parse Java properties text (`Properties.load` rules, see the module
/// docs). Every entry is returned in file order, duplicates included (the
/// last one is the one Java keeps). The only malformed input is a bad
/// `\uXXXX` escape.
pub fn parse_properties(text: &str) -> std::result::Result<Vec<Property>, (usize, String)> {
    let is_ws = |c: char| matches!(c, ' ' | '\t' | '\x0c');
    let lines = natural_lines(text);
    let mut out = Vec::new();
    let mut it = lines.into_iter();
    while let Some((n, raw)) = it.next() {
        let s = raw.trim_start_matches(is_ws);
        if s.is_empty() || s.starts_with('#') || s.starts_with('!') {
            continue;
        }
        let mut logical: Vec<char> = s.chars().collect();
        // An odd number of trailing backslashes continues the line (the
        // backslash is dropped, also at the end of the file).
        while logical.iter().rev().take_while(|&&c| c == '\\').count() % 2 == 1 {
            logical.pop();
            match it.next() {
                Some((_, next)) => logical.extend(next.trim_start_matches(is_ws).chars()),
                None => break,
            }
        }
        let len = logical.len();
        let mut key_len = 0;
        let mut value_start = len;
        let mut has_sep = false;
        let mut escaped = false;
        while let Some(&c) = logical.get(key_len) {
            if (c == '=' || c == ':') && !escaped {
                value_start = key_len + 1;
                has_sep = true;
                break;
            }
            if is_ws(c) && !escaped {
                value_start = key_len + 1;
                break;
            }
            escaped = c == '\\' && !escaped;
            key_len += 1;
        }
        while let Some(&c) = logical.get(value_start) {
            if !is_ws(c) {
                if !has_sep && (c == '=' || c == ':') {
                    has_sep = true;
                } else {
                    break;
                }
            }
            value_start += 1;
        }
        let key = unescape(logical.get(..key_len).unwrap_or(&[])).map_err(|e| (n, e))?;
        let value = unescape(logical.get(value_start..).unwrap_or(&[])).map_err(|e| (n, e))?;
        out.push(Property {
            key,
            value,
            line: n,
        });
    }
    Ok(out)
}

/// `Properties.loadConvert`: `\t \n \r \f`, `\uXXXX` (UTF-16 units, pairs
/// joined), any other escaped character stands for itself.
fn unescape(chars: &[char]) -> std::result::Result<String, String> {
    let mut units: Vec<u16> = Vec::with_capacity(chars.len());
    let mut it = chars.iter().copied();
    while let Some(c) = it.next() {
        let c = if c == '\\' {
            match it.next() {
                None => break,
                Some('u') => {
                    let hex: String = it.by_ref().take(4).collect();
                    let unit = (hex.len() == 4 && hex.chars().all(|h| h.is_ascii_hexdigit()))
                        .then(|| u16::from_str_radix(&hex, 16).ok())
                        .flatten()
                        .ok_or_else(|| format!("malformed \\uxxxx escape \\u{hex}"))?;
                    units.push(unit);
                    continue;
                }
                Some('t') => '\t',
                Some('r') => '\r',
                Some('n') => '\n',
                Some('f') => '\x0c',
                Some(other) => other,
            }
        } else {
            c
        };
        let mut buf = [0u16; 2];
        units.extend_from_slice(c.encode_utf16(&mut buf));
    }
    Ok(String::from_utf16_lossy(&units))
}

/// Lines as `BufferedReader.readLine` splits them (`\n`, `\r\n` or `\r`),
/// numbered from 1.
fn natural_lines(text: &str) -> Vec<(usize, &str)> {
    let mut out = Vec::new();
    let mut rest = text;
    while !rest.is_empty() {
        let (line, next) = match rest.find(['\n', '\r']) {
            None => (rest, ""),
            Some(i) => {
                let skip = if rest[i..].starts_with("\r\n") { 2 } else { 1 };
                (&rest[..i], &rest[i + skip..])
            }
        };
        out.push((out.len() + 1, line));
        rest = next;
    }
    out
}

fn read_if_exists(path: &Path) -> Result<Option<Vec<u8>>> {
    crate::log::files::read_regular(path, crate::log::files::MAX_METADATA_FILE)
}

#[cfg(test)]
mod tests {
    use super::*;

    const ID: &str = "P3mZr1rGQ2KQz9C0XbVJfA";

    /// What a broker writes for a `meta.properties`: the reader's tests
    /// read it back.
    impl MetaProperties {
        /// The key the node id is stored under in this version.
        fn node_id_key(&self) -> &'static str {
            if self.version == 0 {
                "broker.id"
            } else {
                "node.id"
            }
        }

        /// `key=value` lines as `Properties.store` writes them (without its
        /// date comment), keys in a fixed order.
        fn render(&self) -> String {
            let mut s = String::from("#\n");
            let mut put = |k: &str, v: &str| {
                s.push_str(&escape_property(k, true));
                s.push('=');
                s.push_str(&escape_property(v, false));
                s.push('\n');
            };
            put("version", &self.version.to_string());
            if let Some(id) = self.node_id {
                put(self.node_id_key(), &id.to_string());
            }
            if let Some(c) = &self.cluster_id {
                put("cluster.id", c);
            }
            if let Some(d) = &self.directory_id {
                put("directory.id", &d.to_string());
            }
            s
        }
    }

    /// `Properties.saveConvert`: escape what `load` would read differently.
    fn escape_property(s: &str, is_key: bool) -> String {
        let mut out = String::with_capacity(s.len());
        for (i, c) in s.chars().enumerate() {
            match c {
                ' ' if i == 0 || is_key => out.push_str("\\ "),
                '\\' => out.push_str("\\\\"),
                '\t' => out.push_str("\\t"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\x0c' => out.push_str("\\f"),
                '=' | ':' | '#' | '!' => {
                    out.push('\\');
                    out.push(c);
                }
                c if (' '..='~').contains(&c) => out.push(c),
                c => {
                    let mut buf = [0u16; 2];
                    for unit in c.encode_utf16(&mut buf) {
                        out.push_str(&format!("\\u{unit:04X}"));
                    }
                }
            }
        }
        out
    }

    fn err_pm(text: &str) -> (usize, String) {
        parse_partition_metadata(text).unwrap_err()
    }

    fn err_mp(text: &str) -> (usize, String) {
        parse_meta_properties(text).unwrap_err()
    }

    #[test]
    fn uuid_text_form() {
        let id = Uuid::parse(ID).unwrap();
        assert_eq!(id.to_string(), ID);
        // Java's URL decoder takes padding; the text form has none.
        assert_eq!(Uuid::parse(&format!("{ID}==")).unwrap(), id);
        assert_eq!(Uuid::parse("AAAAAAAAAAAAAAAAAAAAAA").unwrap(), Uuid::ZERO);
        assert_eq!(
            Uuid::parse("AAAAAAAAAAAAAAAAAAAAAQ").unwrap().0[15],
            1,
            "big-endian, as ByteBuffer.getLong"
        );
        for bad in [
            "",
            "abc",
            "P3mZr1rGQ2KQz9C0XbVJf",
            "P3mZr1rGQ2KQz9C0XbVJfA1",
            "P3mZr1rGQ2KQz9C0XbVJ+A",
            "P3mZr1rGQ2KQz9C0XbVJfAAAAAA",
        ] {
            assert!(Uuid::parse(bad).is_err(), "{bad:?}");
        }
    }

    #[test]
    fn partition_metadata_round_trip() {
        let pm = PartitionMetadata {
            version: 0,
            topic_id: Uuid::parse(ID).unwrap(),
        };
        // The bytes the broker writes (no trailing newline).
        let text = format!("version: 0\ntopic_id: {ID}");
        assert_eq!(parse_partition_metadata(&text).unwrap(), pm);
        // A trailing newline, CRLF and more lines are all fine.
        assert_eq!(parse_partition_metadata(&format!("{text}\n")).unwrap(), pm);
        assert_eq!(
            parse_partition_metadata(&format!("version: 0\r\ntopic_id: {ID}\r\n")).unwrap(),
            pm
        );
        assert_eq!(
            parse_partition_metadata(&format!("version:\t0\ntopic_id:  {ID}\nextra")).unwrap(),
            pm
        );
        // A version above 0 (a newer broker's file) is read as the broker reads it:
        // PartitionMetadataReadBuffer refuses only versions below 0.
        assert_eq!(
            parse_partition_metadata(&format!("version: 3\ntopic_id: {ID}")).unwrap(),
            PartitionMetadata { version: 3, ..pm }
        );

        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(PARTITION_METADATA);
        assert_eq!(read_partition_metadata(&p).unwrap(), None);
        std::fs::write(&p, &text).unwrap();
        assert_eq!(read_partition_metadata(&p).unwrap(), Some(pm));
        std::fs::write(&p, format!("version: 0\ntopic_id: {ID}x")).unwrap();
        let e = read_partition_metadata(&p).unwrap_err().to_string();
        assert!(
            e.starts_with(&format!("{}: line 2: topic id", p.display())),
            "{e}"
        );
    }

    #[test]
    fn partition_metadata_malformed_lines() {
        for (text, line, needle) in [
            ("", 1, "missing version line"),
            (
                "version 0\ntopic_id: x",
                1,
                "malformed line \"version 0\": 1 part(s)",
            ),
            ("version:0\ntopic_id: x", 1, "malformed line"),
            ("version: 0: 1\ntopic_id: x", 1, "3 part(s)"),
            (
                "version: 0 \ntopic_id: x",
                1,
                "version \"0 \" is not a number",
            ),
            ("version: x\n", 1, "version \"x\" is not a number"),
            ("version: -1\n", 1, "negative version -1"),
            ("version: 0", 2, "missing topic_id line"),
            ("version: 0\n", 2, "missing topic_id line"),
            ("version: 0\ntopic_id:", 2, "1 part(s)"),
            ("version: 0\ntopic_id: a: b", 2, "3 part(s)"),
            ("version: 0\ntopic_id: abc", 2, "topic id \"abc\""),
            (
                "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA",
                2,
                "all-zero",
            ),
        ] {
            let (l, why) = err_pm(text);
            assert_eq!(l, line, "{text:?}: {why}");
            assert!(why.contains(needle), "{text:?}: {why}");
        }
        // Three whitespace-separated fields on the topic id line.
        let (l, why) = err_pm(&format!("version: 0\ntopic_id: {ID} {ID}"));
        assert_eq!(l, 2);
        assert!(why.contains("3 fields where"), "{why}");
    }

    #[test]
    fn java_split() {
        assert_eq!(java_split_colon_space("version: 0"), ["version", "0"]);
        assert_eq!(java_split_colon_space("a:b: c:  d"), ["a:b", "c", "d"]);
        assert_eq!(java_split_colon_space(": 0"), ["", "0"]);
        assert_eq!(java_split_colon_space("version: "), ["version"]);
        assert_eq!(java_split_colon_space("version:"), ["version:"]);
        assert_eq!(java_split_colon_space("é: ü"), ["é", "ü"]);
    }

    #[test]
    fn properties_follow_java_rules() {
        let text = "# comment\n! also a comment\n\n   \n  key1 = value one \nkey2:v2\nkey3 v3\n\
                    lonely\nk\\=e\\ y=a\\:b\\u0041\\t\nmulti = first \\\n     second\\\\\n\
                    dup=1\ndup=2\nempty=\n  # indented comment \\\nnot.continued=yes\r\n\
                    cr=1\rlast=x\\";
        let props = parse_properties(text).unwrap();
        let got: Vec<(&str, &str, usize)> = props
            .iter()
            .map(|p| (p.key.as_str(), p.value.as_str(), p.line))
            .collect();
        assert_eq!(
            got,
            vec![
                ("key1", "value one ", 5),
                ("key2", "v2", 6),
                ("key3", "v3", 7),
                ("lonely", "", 8),
                ("k=e y", "a:bA\t", 9),
                ("multi", "first second\\", 10),
                ("dup", "1", 12),
                ("dup", "2", 13),
                ("empty", "", 14),
                ("not.continued", "yes", 16),
                ("cr", "1", 17),
                ("last", "x", 18),
            ]
        );
        assert_eq!(
            parse_properties("a=1\nb=\\u12G4\n").unwrap_err(),
            (2, "malformed \\uxxxx escape \\u12G4".to_string())
        );
        assert_eq!(
            parse_properties("a=\\uD83D\\uDE00").unwrap()[0].value,
            "\u{1F600}"
        );
    }

    #[test]
    fn meta_properties_round_trip() {
        let kraft = MetaProperties {
            version: 1,
            node_id: Some(3),
            cluster_id: Some("MkU3OEVBNTcwNTJENDM2Qg".to_string()),
            directory_id: Some(Uuid::parse(ID).unwrap()),
        };
        let zk = MetaProperties {
            version: 0,
            node_id: Some(-7),
            cluster_id: Some("we:ird #id! \u{e9}\\".to_string()),
            directory_id: None,
        };
        let bare = MetaProperties {
            version: 0,
            node_id: None,
            cluster_id: None,
            directory_id: None,
        };
        for m in [&kraft, &zk, &bare] {
            assert_eq!(
                &parse_meta_properties(&m.render()).unwrap(),
                m,
                "{}",
                m.render()
            );
        }
        assert!(kraft.render().contains("\nnode.id=3\n"));
        assert!(zk.render().contains("\nbroker.id=-7\n"));
        assert_eq!(parse_meta_properties("").unwrap(), bare);

        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join(META_PROPERTIES);
        assert_eq!(read_meta_properties(&p).unwrap(), None);
        // What a KRaft broker writes.
        std::fs::write(
            &p,
            format!(
                "#\n#Thu Nov 30 05:32:00 UTC 2023\nnode.id=3\ndirectory.id={ID}\n\
                 version=1\ncluster.id=MkU3OEVBNTcwNTJENDM2Qg\n"
            ),
        )
        .unwrap();
        assert_eq!(read_meta_properties(&p).unwrap(), Some(kraft));
        std::fs::write(&p, "version=1\nnode.id=x\ncluster.id=c\n").unwrap();
        let e = read_meta_properties(&p).unwrap_err().to_string();
        assert_eq!(
            e,
            format!(
                "{}: line 2: node.id \"x\" is not a base-10 32-bit integer",
                p.display()
            )
        );
    }

    #[test]
    fn meta_properties_malformed_lines() {
        for (text, line, needle) in [
            ("#\nversion=2\n", 2, "unsupported meta.properties version 2"),
            ("version=one\n", 1, "version \"one\" is not a number"),
            ("\n\nversion=1\ncluster.id=c\n", 3, "requires node.id"),
            ("version=1\nnode.id=1\n", 1, "requires cluster.id"),
            (
                "version=1\nnode.id=1\ncluster.id=c\nnode.id=\n",
                4,
                "node.id \"\"",
            ),
            ("broker.id=2147483648\n", 1, "broker.id \"2147483648\""),
            ("broker.id=1 \n", 1, "broker.id \"1 \""),
            // A line without `=` is a key with an empty value, as in Java:
            // harmless for unknown keys, an error for an id.
            ("x\n\nbroker.id\n", 3, "broker.id \"\""),
            (
                "broker.id=1\ndirectory.id=nope\n",
                2,
                "directory.id \"nope\"",
            ),
            ("broker.id=1\ncluster.id=\\uXYZW\n", 2, "malformed \\uxxxx"),
        ] {
            let (l, why) = err_mp(text);
            assert_eq!(l, line, "{text:?}: {why}");
            assert!(why.contains(needle), "{text:?}: {why}");
        }
        // Java separators: whitespace and `:` work like `=`; unknown keys and
        // lines without `=` are ignored.
        let m =
            parse_meta_properties("version : 0\nbroker.id 5\ngarbage line\nzk.thing\n").unwrap();
        assert_eq!((m.version, m.node_id, m.cluster_id), (0, Some(5), None));
        // The version is trimmed (fromNumberString), and defaults to 0.
        assert_eq!(
            parse_meta_properties("version= 1 \nnode.id=1\ncluster.id=c")
                .unwrap()
                .version,
            1
        );
        // Version 0 ignores node.id; version 1 ignores broker.id.
        assert_eq!(parse_meta_properties("node.id=4\n").unwrap().node_id, None);
        assert_eq!(
            parse_meta_properties("version=1\nbroker.id=x\nnode.id=4\ncluster.id=c")
                .unwrap()
                .node_id,
            Some(4)
        );
    }
}
