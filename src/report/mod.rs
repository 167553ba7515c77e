//! Rendering: the stdout writer and how bytes from the log are shown.
//!
//! Keys, values and header values are data from outside and are never
//! printed raw: valid UTF-8 is shown as a quoted string with control and
//! format characters escaped (text: `kaen_log::format::escape`) or a JSON string
//! (JSON); anything else as hex
//! (`0x…`, text) or `{"base64": "…"}` (JSON); null stays null.

pub mod annotated;
mod cells;
pub mod cluster_text;
pub mod demo_document;
pub mod document;
pub mod eos_walkthrough;
pub mod group_walkthrough;
pub mod html;
pub mod indexes;
pub mod internal;
pub mod kafka_dump;
pub mod openmetrics;
pub mod progress;
pub mod recovery_text;
pub mod segment_json;
pub mod segment_text;
pub mod table;
pub mod written;

use std::fs::File;
use std::io::{self, BufWriter, Stdout, Write};
use std::os::fd::AsFd;

use base64::Engine;
use serde::ser::{Serialize, SerializeMap, Serializer};

pub use document::{emit, formats, Format, Jsonl, Report};
pub use table::Table;

/// One line for people on stderr, `klog: ` and the message with every
/// control and format character escaped (`kaen_log::format::escape::escape_cell`):
/// the paths and names in messages come from outside. Arguments as
/// `eprintln!`'s; its pieces are not escaped before.
macro_rules! say {
    ($($arg:tt)*) => {
        $crate::report::say_line(&format!($($arg)*))
    };
}
pub(crate) use say;

/// [`say`]'s line.
pub fn say_line(message: &str) {
    eprintln!("klog: {}", kaen_log::format::escape::escape_cell(message));
}

/// Lines for people on stderr (a summary whose pieces from outside were
/// escaped as it was built): whatever was not is escaped now, line ends
/// kept (`kaen_log::format::escape::escape_lines`).
pub fn say_lines(text: &str) {
    eprint!("{}", kaen_log::format::escape::escape_lines(text));
}

/// Buffered stdout, how CSV cells are written to it, and how text shows
/// instants (`--time-format`): the context every command renders with.
pub struct Output {
    out: BufWriter<Sink>,
    csv_cells: kaen_log::format::escape::CsvCells,
    time_format: crate::report::TimeFormat,
    /// `--quiet`: no progress display.
    quiet: bool,
    /// The terminal width tables are fitted to, if any.
    fit: table::Fit,
}

/// Where [`Output`]'s buffer goes: a duplicate of the stdout descriptor,
/// written to directly. `Stdout` (the fallback, when the descriptor cannot
/// be duplicated) is line-buffered: every write larger than the buffer is
/// searched backwards for its last newline, all of it when the newline
/// comes first, as it does in a JSON document's `,\n{entry}` (a large
/// share of `dump-segment --format json`'s CPU time). All of klog's stdout
/// goes through `Output`, so nothing else writes between its bytes.
enum Sink {
    Fd(File),
    Stdout(Stdout),
    /// JSON lines turned into CSV rows on their way out.
    Csv(Box<CsvRows>),
}

impl Write for Sink {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Sink::Fd(f) => f.write(buf),
            Sink::Stdout(s) => s.write(buf),
            Sink::Csv(c) => c.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Sink::Fd(f) => f.flush(),
            Sink::Stdout(s) => s.flush(),
            Sink::Csv(c) => c.inner.flush(),
        }
    }
}

/// A streamed command's CSV (`dump-segment --format csv`): its `jsonl`
/// output, each line of a kind the table holds turned into one row, its
/// cells the line's fields by name (`cells::cell_text`: a list as its
/// JSON, a missing field or null empty); the header line and the lines of
/// other kinds are left out. One renderer: the rows are exactly the JSON
/// lines, so the CSV cannot say anything the JSON does not.
pub struct CsvRows {
    inner: csv::Writer<Sink>,
    /// The bytes of the line not ended yet.
    pending: Vec<u8>,
    columns: Vec<String>,
    kinds: &'static [&'static str],
    cells: kaen_log::format::escape::CsvCells,
}

impl CsvRows {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        let mut rest = buf;
        while let Some(end) = rest.iter().position(|&b| b == b'\n') {
            self.pending.extend_from_slice(&rest[..end]);
            let line = std::mem::take(&mut self.pending);
            self.row(&line)?;
            rest = &rest[end + 1..];
        }
        self.pending.extend_from_slice(rest);
        Ok(buf.len())
    }

    fn row(&mut self, line: &[u8]) -> io::Result<()> {
        let value: serde_json::Value = serde_json::from_slice(line).map_err(io::Error::other)?;
        let kind = value.get("type").and_then(|t| t.as_str()).unwrap_or("");
        if !self.kinds.contains(&kind) {
            return Ok(());
        }
        let cells: Vec<Option<String>> = self
            .columns
            .iter()
            .map(|c| value.get(c).and_then(cells::cell_text))
            .collect();
        table::write_csv_row(&mut self.inner, &cells, self.cells)
    }
}

impl Output {
    /// Standard output, buffered.
    pub fn stdout() -> Self {
        let stdout = io::stdout();
        let sink = match stdout.as_fd().try_clone_to_owned() {
            Ok(fd) => Sink::Fd(File::from(fd)),
            Err(_) => Sink::Stdout(stdout),
        };
        Output {
            out: BufWriter::with_capacity(1 << 16, sink),
            csv_cells: kaen_log::format::escape::CsvCells::default(),
            time_format: crate::report::TimeFormat::default(),
            quiet: false,
            fit: table::Fit::default(),
        }
    }
    /// Fit text tables to `width` columns (a terminal without `--wide`).
    pub fn with_fit(mut self, width: Option<u16>) -> Self {
        self.fit = table::Fit(width);
        self
    }
    /// The width text tables are fitted to.
    pub fn fit(&self) -> table::Fit {
        self.fit
    }
    /// Show no progress display (`--quiet`).
    pub fn with_quiet(mut self, quiet: bool) -> Self {
        self.quiet = quiet;
        self
    }
    /// Whether a command whose output is text (`text`) may show progress
    /// on stderr: not with `--quiet` (and only on a terminal, which
    /// [`progress::Progress`] checks).
    pub fn shows_progress(&self, text: bool) -> bool {
        text && !self.quiet
    }
    /// Show instants in text as `format` says (`--time-format`).
    pub fn with_time_format(mut self, format: crate::report::TimeFormat) -> Self {
        self.time_format = format;
        self
    }
    /// How text shows instants (JSON, JSONL and CSV: epoch milliseconds).
    pub fn time_format(&self) -> crate::report::TimeFormat {
        self.time_format
    }
    /// Write CSV cells as `cells` says (`--csv-cells`).
    pub fn with_csv_cells(mut self, cells: kaen_log::format::escape::CsvCells) -> Self {
        self.csv_cells = cells;
        self
    }
    /// How CSV cells are written.
    pub fn csv_cells(&self) -> kaen_log::format::escape::CsvCells {
        self.csv_cells
    }
    /// From now on, take `jsonl` output and write it as CSV: the header
    /// `columns`, then one row per line whose `type` is one of `kinds`
    /// ([`CsvRows`]), until [`Output::end_csv_rows`].
    pub fn start_csv_rows(
        &mut self,
        columns: Vec<String>,
        kinds: &'static [&'static str],
    ) -> anyhow::Result<()> {
        self.out.flush()?;
        let sink = self.out.get_mut();
        let mut inner = table::csv_writer(std::mem::replace(sink, Sink::Stdout(io::stdout())));
        let header = table::write_csv_row(
            &mut inner,
            &columns.iter().cloned().map(Some).collect::<Vec<_>>(),
            kaen_log::format::escape::CsvCells::Raw,
        );
        *sink = Sink::Csv(Box::new(CsvRows {
            inner,
            pending: Vec::new(),
            columns,
            kinds,
            cells: self.csv_cells,
        }));
        header?;
        Ok(())
    }

    /// Write what [`Output::start_csv_rows`] holds and go back to writing
    /// output as it is.
    pub fn end_csv_rows(&mut self) -> anyhow::Result<()> {
        self.out.flush()?;
        let sink = self.out.get_mut();
        if let Sink::Csv(c) = std::mem::replace(sink, Sink::Stdout(io::stdout())) {
            let mut c = *c;
            if !c.pending.is_empty() {
                let line = std::mem::take(&mut c.pending);
                c.row(&line)?;
            }
            *sink = c.inner.into_inner().map_err(|e| e.into_error())?;
        }
        Ok(())
    }

    /// Flush what is buffered.
    pub fn flush(&mut self) -> anyhow::Result<()> {
        self.out.flush()?;
        Ok(())
    }
}

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.out.write(buf)
    }
    fn flush(&mut self) -> io::Result<()> {
        self.out.flush()
    }
}

/// `n` and the noun that agrees with it: `1 partition`, `2 partitions`.
pub fn plural(n: impl Into<u64>, one: &str, many: &str) -> String {
    let n = n.into();
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The width of the terminal stdout is, or `None` when stdout is not a
/// terminal (then tables are never wrapped): `COLUMNS` when it is a
/// number, else the terminal's own size (`None` when it reports none, 0
/// columns or 0 rows).
pub fn terminal_width() -> Option<u16> {
    use std::io::IsTerminal;
    if !io::stdout().is_terminal() {
        return None;
    }
    if let Some(cols) = std::env::var("COLUMNS").ok().and_then(|c| c.parse().ok()) {
        return Some(cols);
    }
    terminal_size::terminal_size_of(io::stdout()).map(|(terminal_size::Width(w), _)| w)
}

/// Most bytes of a non-UTF-8 value shown as hex in text output.
const HEX_PREVIEW: usize = 64;

/// Bytes for text output, `null`, `"utf-8 text"` or `0x…` hex, written to
/// `out` as they are escaped: a value of any size needs no copy of its own.
pub fn write_text_bytes(out: &mut impl Write, b: Option<&[u8]>) -> io::Result<()> {
    match b {
        None => out.write_all(b"null"),
        Some(b) => match std::str::from_utf8(b) {
            // serde_json escapes the control characters; a format
            // character (U+202E) is escaped too, on a copy, as the rare
            // value that holds one needs.
            Ok(s)
                if s.is_ascii()
                    || !s
                        .chars()
                        .any(|c| !c.is_control() && kaen_log::format::escape::hidden(c)) =>
            {
                serde_json::to_writer(out, s).map_err(io::Error::from)
            }
            Ok(s) => {
                let json = serde_json::to_string(s).map_err(io::Error::from)?;
                out.write_all(kaen_log::format::escape::escape_json_text(&json).as_bytes())
            }
            Err(_) => {
                out.write_all(b"0x")?;
                for byte in b.iter().take(HEX_PREVIEW) {
                    write!(out, "{byte:02x}")?;
                }
                if b.len() > HEX_PREVIEW {
                    write!(out, "...({} bytes)", b.len())?;
                }
                Ok(())
            }
        },
    }
}

/// Bytes for JSON output: null, a string, or `{"base64": "…"}`.
pub struct JsonBytes<'a>(pub Option<&'a [u8]>);

impl schemars::JsonSchema for JsonBytes<'_> {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Bytes".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        schemars::json_schema!({
            "description": "null, a UTF-8 string, or {\"base64\": ...} for other bytes",
            "anyOf": [
                { "type": "null" },
                { "type": "string" },
                {
                    "type": "object",
                    "properties": { "base64": { "type": "string" } },
                    "required": ["base64"],
                    "additionalProperties": false
                }
            ]
        })
    }
}

impl Serialize for JsonBytes<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self.0 {
            None => s.serialize_none(),
            Some(b) => match std::str::from_utf8(b) {
                Ok(text) => s.serialize_str(text),
                Err(_) => {
                    let mut m = s.serialize_map(Some(1))?;
                    m.serialize_entry(
                        "base64",
                        &base64::engine::general_purpose::STANDARD.encode(b),
                    )?;
                    m.end()
                }
            },
        }
    }
}

/// 0x01 in every byte of a word.
const LOW_BITS: u64 = u64::MAX / 255;
/// 0x80 in every byte of a word.
const HIGH_BITS: u64 = LOW_BITS * 0x80;

/// A word whose bytes' high bits are set only where `w` has a byte that
/// serde_json escapes (below 0x20, `"`, `\`) or above one: Bit Twiddling
/// Hacks' `hasless` and `haszero`, whose borrows can flag a byte only
/// above a flagged one, so the word is non-zero under [`HIGH_BITS`]
/// exactly when one byte is to be escaped.
#[inline(always)]
fn escape_flags(w: u64) -> u64 {
    let below = w.wrapping_sub(LOW_BITS * 0x20) & !w;
    let q = w ^ (LOW_BITS * u64::from(b'"'));
    let quote = q.wrapping_sub(LOW_BITS) & !q;
    let b = w ^ (LOW_BITS * u64::from(b'\\'));
    let backslash = b.wrapping_sub(LOW_BITS) & !b;
    (below | quote | backslash) & HIGH_BITS
}

/// Whether `s` is UTF-8 that serde_json writes between quotes as it is
/// (nothing to escape). Printable ASCII, nearly every key and value of a
/// text topic, is settled 16 bytes at a time ([`printable_ascii`]); the
/// rest by [`plain_json_words`].
fn plain_json_string(s: &[u8]) -> bool {
    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
    // SAFETY: `printable_ascii` needs only SSE2, which this build targets
    // (the cfg above; every x86-64 has it).
    if unsafe { printable_ascii(s) } {
        return true;
    }
    plain_json_words(s)
}

/// Whether every byte of `s` is ASCII that serde_json does not escape
/// (0x20..=0x7f except `"` and `\`), with SSE2 (part of every x86-64):
/// one signed compare flags the controls and the non-ASCII bytes (0x80 and
/// up are negative), two more the quote and the backslash. `false` sends
/// `s` to [`plain_json_words`], which tells non-ASCII text from bytes to
/// escape.
#[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
#[target_feature(enable = "sse2")]
fn printable_ascii(s: &[u8]) -> bool {
    if s.len() < 16 {
        return printable_ascii_short(s);
    }
    use std::arch::x86_64::{
        __m128i, _mm_cmpeq_epi8, _mm_cmplt_epi8, _mm_movemask_epi8, _mm_or_si128, _mm_set1_epi8,
        _mm_set_epi64x, _mm_setzero_si128,
    };
    // The bytes go into the register as they lie in memory (one unaligned
    // load); which lane holds which byte does not matter, only whether any
    // is flagged.
    #[expect(
        clippy::host_endian_bytes,
        reason = "lane order is irrelevant here; a byte swap would only cost"
    )]
    let lanes = |b: &[u8; 16]| -> __m128i {
        let (lo, hi) = b.split_at(8);
        let word = |w: &[u8]| i64::from_ne_bytes(w.try_into().unwrap_or_default());
        _mm_set_epi64x(word(hi), word(lo))
    };
    let (space, quote, backslash) = (
        _mm_set1_epi8(0x20),
        _mm_set1_epi8(b'"' as i8),
        _mm_set1_epi8(b'\\' as i8),
    );
    let flags = |v: __m128i| {
        let odd = _mm_or_si128(_mm_cmpeq_epi8(v, quote), _mm_cmpeq_epi8(v, backslash));
        _mm_or_si128(_mm_cmplt_epi8(v, space), odd)
    };
    let (blocks, rest) = s.as_chunks::<16>();
    let mut acc = _mm_setzero_si128();
    for b in blocks {
        acc = _mm_or_si128(acc, flags(lanes(b)));
    }
    if let Some(last) = s.last_chunk::<16>().filter(|_| !rest.is_empty()) {
        // The last 16 bytes: a byte seen twice changes nothing.
        acc = _mm_or_si128(acc, flags(lanes(last)));
    }
    _mm_movemask_epi8(acc) == 0
}

/// [`printable_ascii`] for fewer than 16 bytes (most keys), from at most
/// two loads of the string itself, overlapping when it is shorter than
/// 16 and each padded with spaces in a word, through [`escape_flags`]. A
/// short string copied into a 16-byte block first cost a stalled load
/// (the block's read waits for the copy's smaller stores).
#[inline(always)]
fn printable_ascii_short(s: &[u8]) -> bool {
    let spaces = LOW_BITS * u64::from(b' ');
    let n = s.len();
    let (a, b) = match (s.first_chunk::<8>(), s.last_chunk::<8>()) {
        (Some(a), Some(b)) => (u64::from_be_bytes(*a), u64::from_be_bytes(*b)),
        _ => match (s.first_chunk::<4>(), s.last_chunk::<4>()) {
            (Some(a), Some(b)) => (
                u64::from(u32::from_be_bytes(*a)) | spaces << 32,
                u64::from(u32::from_be_bytes(*b)) | spaces << 32,
            ),
            // 1 to 3 bytes: the first, the middle and the last are all of them.
            _ => match (s.first(), s.get(n / 2), s.last()) {
                (Some(&x), Some(&y), Some(&z)) => {
                    let w = u64::from(x) | u64::from(y) << 8 | u64::from(z) << 16 | spaces << 24;
                    (w, w)
                }
                _ => return true,
            },
        },
    };
    (escape_flags(a) | escape_flags(b) | (a | b) & HIGH_BITS) == 0
}

/// [`plain_json_string`] for any bytes, in one pass over 8-byte words that
/// looks for bytes to escape and for non-ASCII bytes at once
/// ([`escape_flags`], and the words OR-ed for their high bits), in
/// registers. Only a string with a non-ASCII byte is then checked by
/// `std::str::from_utf8`.
fn plain_json_words(s: &[u8]) -> bool {
    let (words, rest) = s.as_chunks::<8>();
    let (mut escape, mut high) = (0, 0);
    for w in words {
        let w = u64::from_be_bytes(*w);
        escape |= escape_flags(w);
        high |= w;
    }
    if !rest.is_empty() {
        // The last 8 bytes (again: a byte read twice changes nothing), or
        // for a shorter string its bytes after spaces.
        let w = match s.last_chunk::<8>() {
            Some(last) => u64::from_be_bytes(*last),
            None => rest
                .iter()
                .fold(LOW_BITS * u64::from(b' '), |w, &b| w << 8 | u64::from(b)),
        };
        escape |= escape_flags(w);
        high |= w;
    }
    escape == 0 && (high & HIGH_BITS == 0 || std::str::from_utf8(s).is_ok())
}

/// Append `b` to `out` exactly as `serde_json` serializes [`JsonBytes`]:
/// `null`, a JSON string, or `{"base64":"…"}`. A string with nothing to
/// escape is copied between quotes; anything else goes through serde_json.
pub fn write_json_bytes(out: &mut Vec<u8>, b: Option<&[u8]>) -> serde_json::Result<()> {
    match b {
        None => out.extend_from_slice(b"null"),
        Some(b) if plain_json_string(b) => {
            out.reserve(b.len() + 2);
            out.push(b'"');
            out.extend_from_slice(b);
            out.push(b'"');
        }
        Some(_) => serde_json::to_writer(&mut *out, &JsonBytes(b))?,
    }
    Ok(())
}

/// [`write_json_bytes`] written straight to `out`, piece by piece: the
/// same bytes serde_json writes for [`JsonBytes`], without building the
/// string (or its base64) first, for values too large to copy.
pub fn stream_json_bytes(out: &mut impl Write, b: Option<&[u8]>) -> io::Result<()> {
    match b {
        None => out.write_all(b"null"),
        Some(b) => match std::str::from_utf8(b) {
            Ok(text) => serde_json::to_writer(out, text).map_err(io::Error::from),
            Err(_) => {
                out.write_all(b"{\"base64\":\"")?;
                let mut enc = base64::write::EncoderWriter::new(
                    &mut *out,
                    &base64::engine::general_purpose::STANDARD,
                );
                enc.write_all(b)?;
                enc.finish()?;
                drop(enc);
                out.write_all(b"\"}")
            }
        },
    }
}

/// How text output shows instants (JSON, JSONL and CSV always carry epoch
/// milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum TimeFormat {
    /// ISO-8601 in UTC with milliseconds (2023-11-14T22:13:20.000Z).
    #[default]
    Iso,
    /// Epoch milliseconds, as Kafka stores them.
    Ms,
}

impl TimeFormat {
    /// `ms` as this format shows it.
    pub fn show(self, ms: i64) -> String {
        match self {
            TimeFormat::Ms => ms.to_string(),
            TimeFormat::Iso => kaen_log::format::time::format_iso_ms(ms),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether serde_json would escape any byte of `s`: a control character
    /// (below 0x20), `"` or `\` (its escape table: nothing else, not even
    /// DEL or non-ASCII).
    fn needs_json_escape(s: &[u8]) -> bool {
        s.iter().any(|&b| b < 0x20 || b == b'"' || b == b'\\')
    }

    /// [`plain_json_string`]'s exact path: valid UTF-8 and nothing to escape.
    fn plain_utf8(s: &[u8]) -> bool {
        std::str::from_utf8(s).is_ok() && !needs_json_escape(s)
    }

    fn text_bytes(b: Option<&[u8]>) -> String {
        let mut out = Vec::new();
        write_text_bytes(&mut out, b).unwrap();
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn bytes_render_safely() {
        assert_eq!(text_bytes(None), "null");
        assert_eq!(text_bytes(Some(b"a\"b\n")), r#""a\"b\n""#);
        assert_eq!(text_bytes(Some(&[0xff, 0x00])), "0xff00");
        assert_eq!(
            serde_json::to_string(&JsonBytes(Some(&[0xff]))).unwrap(),
            r#"{"base64":"/w=="}"#
        );
        assert_eq!(
            serde_json::to_string(&JsonBytes(Some(b"x"))).unwrap(),
            r#""x""#
        );
        assert_eq!(serde_json::to_string(&JsonBytes(None)).unwrap(), "null");
    }

    #[test]
    fn fast_json_bytes_are_serde_json_bytes() {
        let same = |b: Option<&[u8]>| {
            let mut fast = Vec::new();
            write_json_bytes(&mut fast, b).unwrap();
            assert_eq!(fast, serde_json::to_vec(&JsonBytes(b)).unwrap(), "{b:02x?}");
            let mut streamed = Vec::new();
            stream_json_bytes(&mut streamed, b).unwrap();
            assert_eq!(streamed, fast, "{b:02x?}");
        };
        same(None);
        same(Some(b""));
        // Every byte alone, and at every place of a block and past it.
        for byte in 0..=255u8 {
            for len in [
                1, 2, 3, 4, 5, 6, 7, 8, 9, 12, 15, 16, 17, 31, 32, 33, 64, 70,
            ] {
                let places: Vec<usize> = if len < 16 {
                    (0..len).collect()
                } else {
                    vec![0, len / 2, len - 1]
                };
                for at in places {
                    let mut v = vec![b'a'; len];
                    v[at] = byte;
                    same(Some(&v));
                    assert_eq!(plain_json_words(&v), plain_utf8(&v), "{v:02x?}");
                    #[cfg(all(target_arch = "x86_64", target_feature = "sse2"))]
                    {
                        let printable = (0x20..0x80).contains(&byte) && !b"\"\\".contains(&byte);
                        // SAFETY: SSE2, as the cfg says.
                        assert_eq!(unsafe { printable_ascii(&v) }, printable, "{v:02x?}");
                    }
                }
            }
        }
        for text in [
            "ünïcödé ✓ 😀",
            "a\u{7f}b",
            "</script>",
            "tab\there",
            "q\"uote",
            "back\\slash",
        ] {
            same(Some(text.as_bytes()));
        }
        same(Some(&[0xc3]));
        same(Some(&[0xff, 0xfe, b'x']));
        same(Some(&[0x80; 16]));
        // Non-ASCII (whole, cut, invalid) at every place of two blocks,
        // after ASCII and escapes.
        for piece in [
            &b"\xc3\xa9"[..],
            b"\xe2\x9c\x93",
            b"\xf0\x9f\x98\x80",
            b"\xc3",
            b"\xe2\x9c",
            b"\xed\xa0\x80",
            b"\xc0\x80",
            b"\xf4\x90\x80\x80",
            b"\x80",
        ] {
            for len in [0, 1, 15, 16, 17, 31, 32, 40] {
                for at in 0..=len {
                    for fill in [b'a', b'\n', b'"'] {
                        let mut v = vec![b'a'; len];
                        if len > 0 {
                            v[(at * 7) % len] = fill;
                        }
                        v.splice(at..at, piece.iter().copied());
                        same(Some(&v));
                    }
                }
            }
        }
    }

    #[test]
    fn one_pass_check_is_the_two_pass_check() {
        // Random byte strings over an alphabet that favours what matters:
        // ASCII, controls, quote, backslash, DEL, UTF-8 sequences whole,
        // cut and overlong, surrogates, bytes that never start one.
        let alphabet: [&[u8]; 16] = [
            b"a",
            b"Z9",
            b"\x00",
            b"\x1f",
            b"\"",
            b"\\",
            b"\x7f",
            b"\xc3\xa9",
            b"\xe2\x82\xac",
            b"\xf0\x9f\x98\x80",
            b"\xc3",
            b"\xed\xa0\x80",
            b"\xc0\xaf",
            b"\xff",
            b"\x80",
            b"abcdefghijklmnop",
        ];
        // (An LCG's high bits: deterministic, and enough for a mix.)
        let mut state = 0x5eed_u64;
        let mut below = |n: u64| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % n
        };
        for _ in 0..20_000 {
            let mut v = Vec::new();
            let pieces = below(24);
            let plain_odds = below(4) + 1;
            for _ in 0..pieces {
                // Often long ASCII runs, so that later blocks are reached.
                let piece = if below(plain_odds) == 0 {
                    alphabet[below(16) as usize]
                } else {
                    alphabet[below(2) as usize]
                };
                v.extend_from_slice(piece);
            }
            assert_eq!(plain_json_string(&v), plain_utf8(&v), "{v:02x?}");
            assert_eq!(plain_json_words(&v), plain_utf8(&v), "{v:02x?}");
            let mut fast = Vec::new();
            write_json_bytes(&mut fast, Some(&v)).unwrap();
            assert_eq!(
                fast,
                serde_json::to_vec(&JsonBytes(Some(&v))).unwrap(),
                "{v:02x?}"
            );
        }
    }
}
