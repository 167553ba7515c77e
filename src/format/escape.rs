//! How text from outside is shown: the one place that decides.
//!
//! Group names, topics, client ids, keys, header keys and paths come from
//! the log or the command line and may hold anything. Shown raw, a control
//! character could colour or clear the terminal, set its title (OSC), move
//! the cursor or forge a line, and a format character could reorder what
//! is read (`evil` U+202E `txt.exe`, with the right-to-left override,
//! shows as `evilexe.txt`) or hide text (zero-width characters). So:
//!
//! - text (tables, lines, messages on stderr): [`escape_cell`] shows every
//!   control character (Unicode category Cc), format character (Cf: bidi
//!   marks, embeddings, overrides and isolates, zero-width characters, the
//!   byte order mark) and line or paragraph separator (Zl, Zp) as an
//!   escape (`\x1b`, `\n`, `\u{202e}`), backslashes doubled so no escape
//!   can be forged; [`escape_lines`] does the same to text already made
//!   of lines, keeping the line ends and every backslash;
//! - JSON shown inside text (`dump-segment`'s keys, values and decoded
//!   records): [`escape_json_text`] writes the same characters as JSON
//!   `\uXXXX` escapes, so the text is still the JSON of the same string;
//! - CSV: [`csv_cell`] (the default, `--csv-cells escape`) is the text
//!   escape, then a cell that a spreadsheet would evaluate as a formula
//!   gets a leading `'` (OWASP's CSV injection guidance); `--csv-cells raw`
//!   gives the exact text;
//! - JSON documents carry the exact text: that is data (serde_json escapes
//!   control characters, and a reader that shows a string escapes it).

use std::borrow::Cow;

use unicode_general_category::{get_general_category, GeneralCategory};

/// Whether `c` is shown escaped: a control character (Cc), a format
/// character (Cf) or a line or paragraph separator (Zl, Zp).
pub fn hidden(c: char) -> bool {
    // No ASCII character is a format character or a separator: the table
    // is looked up only above it.
    c.is_control()
        || !c.is_ascii()
            && matches!(
                get_general_category(c),
                GeneralCategory::Format
                    | GeneralCategory::LineSeparator
                    | GeneralCategory::ParagraphSeparator
            )
}

/// Whether every byte of `s` is printable ASCII other than the backslash:
/// nearly every name, decided without decoding characters.
fn plain(s: &str) -> bool {
    s.bytes().all(|b| (0x20..0x7f).contains(&b) && b != b'\\')
}

/// `c` as an escape in text: `\n`, `\r`, `\t`, `\x1b` below 0x80, else
/// `\u{202e}`.
fn push_escape(out: &mut String, c: char) {
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if (c as u32) < 0x80 => out.push_str(&format!("\\x{:02x}", c as u32)),
        c => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
    }
}

/// `s` for text: every [`hidden`] character escaped (`\n`, `\t`, `\x1b`,
/// `\u{85}`, `\u{202e}`) and backslashes doubled, so the escapes cannot be
/// forged. One line whatever `s` holds.
pub fn escape_cell(s: &str) -> Cow<'_, str> {
    if plain(s) {
        return Cow::Borrowed(s);
    }
    escape_where(s, |c| hidden(c) || c == '\\')
}

/// `s` with each character `escaped` picks written as its escape (a
/// backslash doubled), the others as they are.
fn escape_where(s: &str, escaped: impl Fn(char) -> bool) -> Cow<'_, str> {
    if !s.chars().any(&escaped) {
        return Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' if escaped(c) => out.push_str("\\\\"),
            c if escaped(c) => push_escape(&mut out, c),
            c => out.push(c),
        }
    }
    Cow::Owned(out)
}

/// Lines for people (stderr), built from pieces that were escaped with
/// [`escape_cell`] or were klog's own words: every [`hidden`] character
/// but the line end escaped, backslashes left as they are (so the escapes
/// already made stay as they were). Whatever was not escaped on the way
/// can then neither reach the terminal nor add a line.
pub fn escape_lines(s: &str) -> Cow<'_, str> {
    escape_where(s, |c| c != '\n' && hidden(c))
}

/// JSON text (serde_json's output, which escapes only what JSON requires)
/// for showing inside text: every [`hidden`] character left raw written as
/// `\uXXXX` (UTF-16, a pair of them above U+FFFF), so the text still reads
/// back as the same JSON value. Only call it on JSON: a `hidden` character
/// is never raw outside a string there.
pub fn escape_json_text(json: &str) -> Cow<'_, str> {
    if json.bytes().all(|b| (0x20..0x7f).contains(&b)) || !json.chars().any(hidden) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 8);
    let mut units = [0u16; 2];
    for c in json.chars() {
        if hidden(c) {
            for u in c.encode_utf16(&mut units) {
                out.push_str(&format!("\\u{u:04x}"));
            }
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

/// The longest name shown whole, in bytes: every Kafka topic name (249
/// characters), every file name (255 bytes) and nearly every group or
/// client id.
pub const SHOWN_NAME_BYTES: usize = 256;

/// The bytes of a longer name shown before its length and hash.
const SHOWN_PREFIX_BYTES: usize = 128;

/// A name from the data bounded for people (an HTML page, a text line):
/// whole up to [`SHOWN_NAME_BYTES`] bytes; a longer one (a group id can be
/// 32,767 bytes, a path in a summary anything) as its first characters,
/// then its length and the start of its SHA-256, as
/// `<<<<…(32767 bytes, sha256 1f2e3d4c5b6a7980)`: the same name always
/// shows the same, two long names alike in their first characters still
/// differ. Bound once where the name enters what is shown, not at each
/// use; data outputs (JSON, CSV) keep the exact name.
pub fn bounded(s: &str) -> Cow<'_, str> {
    use sha2::Digest as _;
    if s.len() <= SHOWN_NAME_BYTES {
        return Cow::Borrowed(s);
    }
    let mut end = SHOWN_PREFIX_BYTES;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    let digest = sha2::Sha256::digest(s.as_bytes());
    let mut out = String::with_capacity(end + 48);
    out.push_str(s.get(..end).unwrap_or_default());
    out.push_str(&format!("\u{2026}({} bytes, sha256 ", s.len()));
    for b in digest.iter().take(8) {
        out.push_str(&format!("{b:02x}"));
    }
    out.push(')');
    Cow::Owned(out)
}

/// How CSV cells are written (`--csv-cells`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum CsvCells {
    /// As text shows them ([`escape_cell`]), and a cell a spreadsheet would
    /// read as a formula prefixed with `'`.
    #[default]
    Escape,
    /// The exact text (RFC 4180 quoting only).
    Raw,
}

/// Whether `s` is a decimal number (`-1`, `0.5`): a spreadsheet reads it
/// as that number, so a leading `-` there is no formula.
fn decimal(s: &str) -> bool {
    let digits = s.strip_prefix('-').unwrap_or(s);
    let (whole, frac) = digits.split_once('.').unwrap_or((digits, "0"));
    !whole.is_empty()
        && !frac.is_empty()
        && whole.bytes().all(|b| b.is_ascii_digit())
        && frac.bytes().all(|b| b.is_ascii_digit())
}

/// The characters that make a spreadsheet read a cell as a formula when it
/// starts with one (OWASP, "CSV Injection": `=`, `+`, `-`, `@`, tab,
/// carriage return, line feed; ASVS 1.2.10 adds NUL).
const FORMULA_STARTS: [char; 8] = ['=', '+', '-', '@', '\t', '\r', '\n', '\0'];

/// One CSV cell's text under `mode` (quoting is the writer's): escaped, a
/// leading formula character made inert with a `'` (OWASP's guidance) unless the
/// cell is a plain number; or exactly `s`.
pub fn csv_cell(s: &str, mode: CsvCells) -> Cow<'_, str> {
    match mode {
        CsvCells::Raw => Cow::Borrowed(s),
        CsvCells::Escape => {
            let text = escape_cell(s);
            if s.starts_with(FORMULA_STARTS) && !decimal(s) {
                Cow::Owned(format!("'{text}"))
            } else {
                text
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn controls_format_characters_and_separators_are_escaped() {
        assert_eq!(escape_cell("orders"), "orders");
        assert_eq!(escape_cell("a\\b"), "a\\\\b");
        assert_eq!(
            escape_cell("a\u{1b}]0;x\u{7}\r\n\u{8}"),
            "a\\x1b]0;x\\x07\\r\\n\\x08"
        );
        assert_eq!(escape_cell("\u{85}"), "\\u{85}");
        // Bidi controls (Cf): marks, embeddings and overrides, isolates.
        for c in [
            '\u{200e}', '\u{200f}', '\u{202a}', '\u{202e}', '\u{2066}', '\u{2069}',
        ] {
            assert_eq!(
                escape_cell(&format!("x{c}y")),
                format!("x\\u{{{:x}}}y", c as u32)
            );
        }
        // Zero-width and the byte order mark (Cf), the separators (Zl, Zp),
        // a tag character above U+FFFF (Cf).
        for c in ['\u{200b}', '\u{feff}', '\u{2028}', '\u{2029}', '\u{e0041}'] {
            assert!(hidden(c), "{c:?}");
        }
        // Letters of every script stay: only what hides or moves text goes.
        for s in ["ünïcødé", "注文", "طلبات", "🦀", "a\u{301}"] {
            assert_eq!(escape_cell(s), s);
        }
    }

    #[test]
    fn long_names_are_shown_by_their_start_length_and_hash() {
        let short = "o".repeat(SHOWN_NAME_BYTES);
        assert_eq!(bounded(&short), short.as_str());
        let long = "<".repeat(32767);
        let shown = bounded(&long);
        assert!(shown.starts_with(&"<".repeat(SHOWN_PREFIX_BYTES)));
        assert!(shown.contains("\u{2026}(32767 bytes, sha256 "), "{shown}");
        assert_eq!(
            shown.len(),
            SHOWN_PREFIX_BYTES + "\u{2026}(32767 bytes, sha256 )".len() + 16
        );
        // Alike in their start, told apart by their hash; each always the same.
        let other = format!("{}>", "<".repeat(32766));
        assert_ne!(bounded(&other), shown);
        assert_eq!(bounded(&long), shown);
        // Cut at a character boundary.
        let wide = "注".repeat(200);
        assert!(bounded(&wide).starts_with(&"注".repeat(42)));
    }

    #[test]
    fn lines_keep_their_ends_and_their_escapes() {
        assert_eq!(escape_lines("a\\x1b\nb\u{1b}\n"), "a\\x1b\nb\\x1b\n");
        assert_eq!(escape_lines("x\u{202e}y"), "x\\u{202e}y");
    }

    #[test]
    fn json_in_text_stays_json() {
        let s = "k\u{202e}\u{1b}\u{e0041}";
        let json = serde_json::to_string(s).unwrap();
        let shown = escape_json_text(&json);
        assert_eq!(shown, "\"k\\u202e\\u001b\\udb40\\udc41\"");
        assert_eq!(serde_json::from_str::<String>(&shown).unwrap(), s);
    }

    #[test]
    fn formulas_are_inert_and_numbers_stay() {
        let e = |s| csv_cell(s, CsvCells::Escape).into_owned();
        assert_eq!(e("=cmd|'/C calc'!A0"), "'=cmd|'/C calc'!A0");
        assert_eq!(e("+1+1"), "'+1+1");
        assert_eq!(e("@SUM(A1)"), "'@SUM(A1)");
        assert_eq!(e("-2+3"), "'-2+3");
        assert_eq!(e("\tx"), "'\\tx");
        assert_eq!(e("\r=x"), "'\\r=x");
        assert_eq!(e("\0x"), "'\\x00x");
        assert_eq!(e("-1"), "-1");
        assert_eq!(e("-0.5"), "-0.5");
        assert_eq!(e("orders"), "orders");
        assert_eq!(e("a=b"), "a=b");
        assert_eq!(csv_cell("=1+1\u{1b}", CsvCells::Raw), "=1+1\u{1b}");
    }
}
