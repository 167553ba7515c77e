//! Names that attack whoever reads the output: terminal escape sequences
//! (OSC, clear screen), carriage returns and backspaces that rewrite a
//! line, bidi controls that reorder it, and spreadsheet formulas. Text and
//! messages show them escaped, CSV makes formulas inert (or is exact with
//! `--csv-cells raw`), JSON carries the exact text.

use crate::support::{stderr, stdout, TestEnv};

/// A group name that runs a command in a spreadsheet, sets the terminal's
/// title (OSC 0 ... BEL), clears the screen, returns to the line start and
/// backs over a character, then reverses what follows (U+202E).
const GROUP: &str = "=cmd|'/C calc'!A0\u{1b}]0;pwned\u{7}\u{1b}[2J\r\u{8}X\u{202e}evil";

/// Characters no output for people may hold raw: control characters other
/// than the line end, and Unicode's format characters (category Cf) that
/// reorder or hide text (bidi marks, embeddings, overrides, isolates,
/// zero-width characters, the byte order mark), and the line and
/// paragraph separators.
fn hidden(c: char) -> bool {
    (c.is_control() && c != '\n')
        || matches!(c,
            '\u{ad}' | '\u{200b}'..='\u{200f}' | '\u{202a}'..='\u{202e}' | '\u{2028}' | '\u{2029}'
            | '\u{2060}'..='\u{2064}' | '\u{2066}'..='\u{206f}' | '\u{feff}')
}

fn assert_shown_escaped(what: &str, text: &str) {
    let raw: Vec<char> = text.chars().filter(|&c| hidden(c)).collect();
    assert!(raw.is_empty(), "{what}: {raw:?} raw in:\n{text}");
}

/// fixtures/data with GROUP's committed offset for orders-0 and a record
/// whose key, value and header carry the same sequences.
fn hostile_data(env: &TestEnv) {
    let o = env.run(
        &[
            "commit",
            "fixtures/data",
            "--group",
            GROUP,
            "--topic",
            "orders",
            "--partition",
            "0",
            "--offset",
            "1",
            "--now-ms",
            "1700000000000",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_shown_escaped("commit", &format!("{}{}", stdout(&o), stderr(&o)));
    let record = serde_json::json!({
        "key": GROUP,
        "value": "v\u{202e}\u{1b}[2J",
        "headers": [{"key": "h\u{2066}", "value": "x\u{200f}\u{feff}"}],
        "timestamp": 1700000000000i64,
    });
    let o = env.run(
        &[
            "produce",
            "fixtures/data",
            "--topic",
            "orders",
            "--input-format",
            "json",
        ],
        Some(&format!("{record}\n")),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn round2_names_reach_neither_the_terminal_nor_a_spreadsheet_raw() {
    let env = TestEnv::new();
    hostile_data(&env);
    let now = ["--now-ms", "1700000100000"];
    let runs: Vec<Vec<&str>> = vec![
        vec!["replay-offsets", "fixtures/data"],
        vec!["replay-offsets", "--format", "csv", "fixtures/data"],
        vec!["lag", "fixtures/data"],
        vec!["lag", "--format", "csv", "fixtures/data"],
        vec!["groups", "fixtures/data"],
        vec!["groups", "--format", "csv", "fixtures/data"],
        vec!["dump-segment", "--records", "fixtures/data/__offsets-0"],
        vec!["dump-segment", "--records", "fixtures/data/orders-0"],
        vec!["dump-segment", "--print-data-log", "fixtures/data/orders-0"],
        vec!["verify-crc", "--records", "fixtures/data"],
        vec!["stats", "fixtures/data"],
        vec!["info", "fixtures/data"],
        vec!["tombstone", "fixtures/data", "--group", GROUP, "--dry-run"],
    ];
    for args in runs {
        let mut args = args.clone();
        if matches!(args[0], "replay-offsets" | "lag") {
            args.extend(now);
        }
        let o = env.run(&args, None);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "{args:?}: {}",
            stderr(&o)
        );
        assert_shown_escaped(&format!("{args:?} stdout"), &stdout(&o));
        assert_shown_escaped(&format!("{args:?} stderr"), &stderr(&o));
    }
    // The text shows the escapes; a dump's JSON-in-text reads back as the
    // same string.
    let o = env.run(&["replay-offsets", "fixtures/data"], None);
    assert!(
        stdout(&o)
            .contains("=cmd|'/C calc'!A0\\x1b]0;pwned\\x07\\x1b[2J\\r\\x08X\\u{202e}evil  orders"),
        "{}",
        stdout(&o)
    );
    let o = env.run(
        &["dump-segment", "--records", "fixtures/data/orders-0"],
        None,
    );
    let line = stdout(&o)
        .lines()
        .find(|l| l.contains("offset: 128 "))
        .unwrap()
        .to_string();
    let key = line.split(" key: ").nth(1).unwrap();
    let key = key.split(" value: ").next().unwrap();
    assert_eq!(
        serde_json::from_str::<String>(key).unwrap(),
        GROUP,
        "{line}"
    );
    assert!(
        line.contains("headers: [\"h\\u2066\"=\"x\\u200f\\ufeff\"]"),
        "{line}"
    );
}

#[test]
fn round2_csv_cells_a_spreadsheet_would_run_are_inert_unless_raw() {
    let env = TestEnv::new();
    hostile_data(&env);
    // `klog BEFORE replay-offsets ... AFTER`.
    let csv = |before: &[&str], after: &[&str]| {
        let mut args = before.to_vec();
        args.extend([
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--format",
            "csv",
            "fixtures/data",
        ]);
        args.extend(after);
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o.stdout
    };
    let rows = |bytes: Vec<u8>| -> Vec<Vec<String>> {
        csv::Reader::from_reader(bytes.as_slice())
            .records()
            .map(|r| r.unwrap().iter().map(str::to_string).collect())
            .collect()
    };
    // Default: escaped as text shows it, then a leading `'` (OWASP), while
    // numbers such as the leader epoch -1 stay numbers.
    let escaped = rows(csv(&[], &[]));
    let row = escaped
        .iter()
        .find(|r| r[1] == "orders" && r[0].contains("cmd"))
        .unwrap();
    assert_eq!(
        row[0],
        "'=cmd|'/C calc'!A0\\x1b]0;pwned\\x07\\x1b[2J\\r\\x08X\\u{202e}evil"
    );
    assert_eq!(row[4], "-1", "{row:?}");
    // The same as a global option before the command.
    assert_eq!(rows(csv(&["--csv-cells", "escape"], &[])), escaped);
    // Raw: the exact bytes, RFC 4180 quoted.
    let raw = rows(csv(&[], &["--csv-cells", "raw"]));
    assert!(raw.iter().any(|r| r[0] == GROUP), "{raw:?}");
    // JSON is data: exact.
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "fixtures/data",
        ],
        None,
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert!(
        doc["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .any(|o| o["group"] == GROUP),
        "{doc}"
    );
}

#[test]
fn round2_paths_and_arguments_in_messages_are_escaped() {
    let env = TestEnv::new();
    let path = "nowhere\u{1b}]0;pwned\u{7}\u{202e}gol.exe";
    // Usage errors: clap drops the escape sequences, klog escapes the rest.
    let usage = [
        vec!["verify-crc", "--jobs", path, "fixtures/data"],
        vec![path],
    ];
    for args in [
        vec!["verify-crc", path],
        vec!["dump-segment", path],
        vec!["replay-offsets", path],
    ]
    .into_iter()
    .chain(usage.clone())
    {
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert_shown_escaped(&format!("{args:?}"), &stderr(&o));
        let shown = if usage.contains(&args) {
            "nowhere\\u{202e}gol.exe"
        } else {
            "nowhere\\x1b]0;pwned\\x07\\u{202e}gol.exe"
        };
        assert!(stderr(&o).contains(shown), "{args:?}: {}", stderr(&o));
    }
    // A folder named so: a dump of its segment says which file, escaped.
    let dir = env.path("or\u{202e}ders\u{1b}[2J-0");
    crate::support::copy_dir(&env.path("fixtures/data/orders-0"), &dir);
    let folder = dir.to_str().unwrap();
    let segment = dir.join("00000000000000000000.log");
    let o = env.run(&["dump-segment", segment.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_shown_escaped("dump-segment", &stdout(&o));
    assert!(
        stdout(&o).contains("or\\u{202e}ders\\x1b[2J-0/00000000000000000000.log"),
        "{}",
        stdout(&o)
    );
    let o = env.run(&["verify-crc", folder], None);
    assert_shown_escaped("verify-crc", &format!("{}{}", stdout(&o), stderr(&o)));
}

#[test]
fn round2_a_path_that_is_not_utf8_keeps_its_bytes_in_json() {
    use base64::Engine;
    use std::os::unix::ffi::OsStrExt;
    let env = TestEnv::new();
    // fixtures/truncated (orders-0's last batch cut short) in a folder
    // whose name is not UTF-8.
    let name = std::ffi::OsStr::from_bytes(b"data\xff\xfe");
    let data = env.dir.path().join(name);
    crate::support::copy_dir(&env.path("fixtures/truncated"), &data);
    let b64 = |p: &std::path::Path| {
        base64::engine::general_purpose::STANDARD.encode(p.as_os_str().as_bytes())
    };
    let run = |args: &[&std::ffi::OsStr]| {
        let o = env.cmd().args(args).output().unwrap();
        assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
        o
    };
    let json = std::ffi::OsStr::new("json");
    let format = std::ffi::OsStr::new("--format");
    // verify-crc: the torn tail's finding names the file exactly.
    let o = run(&[
        std::ffi::OsStr::new("verify-crc"),
        format,
        json,
        data.as_os_str(),
    ]);
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let torn = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"] == "torn_tail")
        .unwrap_or_else(|| panic!("{doc}"));
    let log = data.join("orders-0/00000000000000000090.log");
    assert_eq!(torn["file"], log.to_string_lossy().as_ref());
    assert_eq!(torn["file_base64"], b64(&log), "{torn}");
    // dump-segment: every entry, the problem at the torn tail included.
    let o = run(&[
        std::ffi::OsStr::new("dump-segment"),
        format,
        std::ffi::OsStr::new("jsonl"),
        log.as_os_str(),
    ]);
    let lines: Vec<serde_json::Value> = o
        .stdout
        .split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|l| serde_json::from_slice(l).unwrap())
        .collect();
    let entries: Vec<&serde_json::Value> = lines.iter().filter(|l| l["type"] != "header").collect();
    assert!(entries.iter().any(|e| e["type"] == "error"), "{lines:?}");
    for e in entries {
        assert_eq!(e["file_base64"], b64(&log), "{e}");
    }
    // The other documents that name a path: stats, info, summary, diff.
    let json_of = |args: &[&std::ffi::OsStr]| -> serde_json::Value {
        let mut all = vec![args[0], format, json];
        all.extend(&args[1..]);
        serde_json::from_slice(&run(&all).stdout).unwrap()
    };
    let part = data.join("orders-0");
    let doc = json_of(&[std::ffi::OsStr::new("stats"), data.as_os_str()]);
    assert_eq!(doc["partitions"][0]["path_base64"], b64(&part), "{doc}");
    let doc = json_of(&[std::ffi::OsStr::new("info"), data.as_os_str()]);
    assert_eq!(doc["directories"][0]["dir_base64"], b64(&data), "{doc}");
    let doc = json_of(&[
        std::ffi::OsStr::new("summary"),
        std::ffi::OsStr::new("--node-id=1"),
        data.as_os_str(),
    ]);
    assert_eq!(doc["log_dirs"][0]["path_base64"], b64(&data), "{doc}");
    let doc = json_of(&[
        std::ffi::OsStr::new("diff"),
        part.as_os_str(),
        env.path("fixtures/truncated/orders-0").as_os_str(),
    ]);
    assert_eq!(doc["a_base64"], b64(&part), "{doc}");
    assert!(doc.get("b_base64").is_none(), "{doc}");
    // A UTF-8 path has no file_base64.
    let o = env.run(
        &["verify-crc", "--format", "json", "fixtures/truncated"],
        None,
    );
    assert!(!stdout(&o).contains("file_base64"), "{}", stdout(&o));
}
