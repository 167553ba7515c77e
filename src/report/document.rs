//! The one output contract: every command builds a typed document and hands
//! it to [`emit`], which renders it in the format asked for.
//!
//! - `text`: the document's tables (comfy-table, cells escaped) on stdout;
//!   its summary on stderr, so `klog replay-offsets DIR | sort` sorts rows.
//! - `csv`: the document's main table, RFC 4180, null as an empty field;
//!   the summary on stderr.
//! - `json`: exactly one JSON document, `{"schema_version": 1, "command":
//!   "...", ...}`, the command's data, findings and summary included.
//! - `jsonl` (commands whose output grows with the data): one object per
//!   line, each with a `"type"`; the first line is the header
//!   `{"type":"header","schema_version":1,"command":"..."}`.
//!
//! [`SCHEMA_VERSION`] changes only when a field is removed or changes
//! meaning; new fields may appear in any release. `klog generate schema DIR`
//! writes the JSON Schema of every command's document (`man/schema/`).

use std::io::Write;

use clap::builder::{PossibleValuesParser, TypedValueParser};
use schemars::JsonSchema;
use serde::Serialize;

use super::table::Table;
use super::Output;

/// The version of every JSON document klog prints.
pub const SCHEMA_VERSION: u32 = 1;

/// An output format (each command offers the ones that fit its data).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// Tables and lines for people.
    Text,
    /// One JSON document.
    Json,
    /// One JSON object per line, streamed.
    Jsonl,
    /// The main table as CSV with a header line.
    Csv,
    /// OpenMetrics text (Prometheus' exposition format), for a
    /// node_exporter textfile.
    Prometheus,
}

impl Format {
    /// The format's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Jsonl => "jsonl",
            Format::Csv => "csv",
            Format::Prometheus => "prometheus",
        }
    }

    fn all() -> [Format; 5] {
        [
            Format::Text,
            Format::Json,
            Format::Jsonl,
            Format::Csv,
            Format::Prometheus,
        ]
    }
}

/// A `--format` parser that accepts exactly `offered` (shown in `--help`).
pub fn formats(offered: &'static [Format]) -> impl TypedValueParser<Value = Format> {
    PossibleValuesParser::new(offered.iter().map(|f| f.name())).map(|name| {
        Format::all()
            .into_iter()
            .find(|f| f.name() == name)
            .unwrap_or(Format::Text)
    })
}

/// Formats of table-shaped commands.
pub const TABLE: &[Format] = &[Format::Text, Format::Json, Format::Csv];
/// Streamed and table-shaped.
pub const STREAM_TABLE: &[Format] = &[Format::Text, Format::Json, Format::Jsonl, Format::Csv];

/// A command's whole output, typed.
pub trait Report: Serialize + JsonSchema {
    /// The command's name, as in the JSON document's `command`.
    const COMMAND: &'static str;

    /// The tables of the text output, in order.
    fn tables(&self) -> Vec<Table>;

    /// The one table `--format csv` prints, whatever the options that
    /// shape text: by default the first of [`Report::tables`]; a command
    /// whose text is not its CSV table says which table it is.
    fn csv_table(&self) -> Option<Table> {
        self.tables().into_iter().next()
    }

    /// Text for stdout; by default the tables, separated by blank lines.
    fn text(&self, fit: crate::report::table::Fit) -> String {
        let tables: Vec<String> = self
            .tables()
            .iter()
            .filter(|t| !t.is_empty() || t.show_empty())
            .map(|t| t.render(fit))
            .collect();
        tables.join("\n")
    }

    /// Lines for people (stderr) in text and CSV output.
    fn summary(&self) -> String {
        String::new()
    }

    /// The lines of `jsonl` output after the header (commands that offer
    /// it stream instead; this is for the ones that hold their rows).
    fn write_lines(&self, _lines: &mut Jsonl<'_>) -> anyhow::Result<()> {
        Ok(())
    }

    /// The metrics of `--format prometheus`, for the commands that offer it.
    fn metrics(&self) -> Vec<crate::report::openmetrics::Metric> {
        Vec::new()
    }
}

/// Findings for people (stderr): one escaped line each, then their counts;
/// nothing when there are none.
pub fn findings_text(findings: &[kaen_log::log::findings::Finding]) -> String {
    if findings.is_empty() {
        return String::new();
    }
    let mut out = String::new();
    for f in findings {
        out.push_str(&format!(
            "klog: {}\n",
            super::table::escape_cell(&f.to_string())
        ));
    }
    out.push_str(&format!(
        "klog: {}\n",
        kaen_log::log::findings::Summary::of(findings)
    ));
    out
}

/// The note on offsets committed for an earlier topic of the same name
/// (stderr in text and CSV output): once, when one of `statuses` is
/// `topic_recreated`; nothing otherwise.
pub fn topic_recreated_text<'a>(statuses: impl IntoIterator<Item = &'a str>) -> String {
    let n = statuses
        .into_iter()
        .filter(|s| *s == kaen_log::offsets::standing::TOPIC_RECREATED)
        .count();
    if n == 0 {
        return String::new();
    }
    format!(
        "klog: topic_recreated: {n} offset{} {}\n",
        if n == 1 { "" } else { "s" },
        kaen_log::offsets::standing::TOPIC_RECREATED_NOTE
    )
}

/// What a view of the internal topics lacks, for people (stderr in text
/// and CSV output): one `klog: incomplete: ...` line per partition not read
/// whole; nothing when every record was read and applied. JSON output says
/// the same in the document's `incomplete` list (`jsonl`: `incomplete` lines).
pub fn incomplete_text<'a>(
    incomplete: impl IntoIterator<Item = &'a kaen_log::offsets::replay::Incomplete>,
) -> String {
    incomplete
        .into_iter()
        .map(|i| format!("klog: {}\n", super::table::escape_cell(&i.line())))
        .collect()
}

/// The JSON document: the version and command, then the report's fields.
#[derive(Serialize, JsonSchema)]
pub struct Document<'a, R: Report> {
    /// [`SCHEMA_VERSION`].
    pub schema_version: u32,
    /// The subcommand that printed it.
    pub command: &'a str,
    /// The command's data.
    #[serde(flatten)]
    pub report: &'a R,
}

/// Print `report` in `format`: data on stdout, the summary on stderr.
pub fn emit<R: Report>(report: &R, format: Format, out: &mut Output) -> anyhow::Result<()> {
    match format {
        Format::Text => {
            // Names are escaped as the text is built; whatever a renderer
            // missed is escaped here (`escape_lines` keeps the escapes made).
            let text = report.text(out.fit());
            out.write_all(kaen_log::format::escape::escape_lines(&text).as_bytes())?;
            out.flush()?;
            crate::report::say_lines(&report.summary());
        }
        Format::Csv => {
            if let Some(table) = report.csv_table() {
                let cells = out.csv_cells();
                table.write_csv(&mut *out, cells)?;
            }
            out.flush()?;
            crate::report::say_lines(&report.summary());
        }
        Format::Json => {
            let doc = Document {
                schema_version: SCHEMA_VERSION,
                command: R::COMMAND,
                report,
            };
            serde_json::to_writer(&mut *out, &doc)?;
            writeln!(out)?;
        }
        Format::Jsonl => {
            let mut lines = Jsonl::start(out, R::COMMAND)?;
            report.write_lines(&mut lines)?;
        }
        Format::Prometheus => {
            let text = crate::report::openmetrics::render(&report.metrics());
            // Exact bytes for a textfile; on a terminal, names escaped as in text.
            if std::io::IsTerminal::is_terminal(&std::io::stdout()) {
                out.write_all(kaen_log::format::escape::escape_lines(&text).as_bytes())?;
            } else {
                out.write_all(text.as_bytes())?;
            }
            out.flush()?;
            crate::report::say_lines(&report.summary());
        }
    }
    Ok(())
}

/// A `jsonl` stream: the header line, then one object per line.
pub struct Jsonl<'o> {
    out: &'o mut Output,
}

#[derive(Serialize)]
struct Header<'a> {
    r#type: &'a str,
    schema_version: u32,
    command: &'a str,
}

/// A line of a `jsonl` stream: `{"type": ..., <fields of T>}`.
#[derive(Serialize)]
pub struct Line<'a, T: Serialize> {
    /// What the line holds (`batch`, `record`, `finding`, `commit`, `summary`).
    pub r#type: &'a str,
    /// Its fields.
    #[serde(flatten)]
    pub fields: &'a T,
}

impl<'o> Jsonl<'o> {
    /// Write the header line of `command`.
    pub fn start(out: &'o mut Output, command: &str) -> anyhow::Result<Self> {
        serde_json::to_writer(
            &mut *out,
            &Header {
                r#type: "header",
                schema_version: SCHEMA_VERSION,
                command,
            },
        )?;
        writeln!(out)?;
        Ok(Jsonl { out })
    }

    /// One line `{"type": kind, ...fields}`.
    pub fn line<T: Serialize>(&mut self, kind: &str, fields: &T) -> anyhow::Result<()> {
        self.value(&Line {
            r#type: kind,
            fields,
        })
    }

    fn value<T: Serialize>(&mut self, v: &T) -> anyhow::Result<()> {
        serde_json::to_writer(&mut *self.out, v)?;
        writeln!(self.out)?;
        Ok(())
    }
}

/// The entries of a command whose output grows with the data
/// (`dump-segment`), streamed in either JSON shape: `json` is one document
/// `{"schema_version":1,"command":…,"entries":[…]}` with one entry per line,
/// `jsonl` the header line and then one entry per line. Every entry is an
/// object whose first field is its `"type"`.
pub struct Entries {
    format: Format,
    written: u64,
}

/// The start of an entry of `kind`: `{"type":kind`, the object left open
/// for its fields.
pub fn entry_head(buf: &mut Vec<u8>, kind: &str) -> serde_json::Result<()> {
    buf.extend_from_slice(b"{\"type\":");
    serde_json::to_writer(&mut *buf, kind)
}

impl Entries {
    /// Start the output of `command` (nothing is written for text).
    pub fn start(format: Format, out: &mut Output, command: &str) -> anyhow::Result<Self> {
        match format {
            Format::Json => {
                write!(
                    out,
                    "{{\"schema_version\":{SCHEMA_VERSION},\"command\":{},\"entries\":[",
                    serde_json::to_string(command)?
                )?;
            }
            Format::Jsonl => {
                Jsonl::start(out, command)?;
            }
            Format::Text | Format::Csv | Format::Prometheus => {}
        }
        Ok(Entries { format, written: 0 })
    }

    /// Whether the output is text (the caller writes its own lines).
    pub fn is_text(&self) -> bool {
        matches!(self.format, Format::Text | Format::Csv)
    }

    /// Begin an entry of `kind` in `buf`: the separator JSON needs, then
    /// `{"type":kind` with the object left open for the caller's fields.
    /// Returns the bytes that end the entry (`}`, and a line end in jsonl).
    pub fn open_entry(&mut self, buf: &mut Vec<u8>, kind: &str) -> anyhow::Result<&'static [u8]> {
        buf.extend_from_slice(self.separator());
        entry_head(buf, kind)?;
        Ok(self.entry_end())
    }

    /// What goes before the next entry (`,` and a line end between the
    /// entries of a JSON document; nothing in jsonl), counting the entry:
    /// for an entry built apart with [`entry_head`] and [`entry_end`].
    pub fn separator(&mut self) -> &'static [u8] {
        self.written += 1;
        match (self.format, self.written) {
            (Format::Json, 1) => b"\n",
            (Format::Json, _) => b",\n",
            _ => b"",
        }
    }

    /// The bytes that end an entry: `}`, and a line end in jsonl.
    pub fn entry_end(&self) -> &'static [u8] {
        if self.format == Format::Jsonl {
            b"}\n"
        } else {
            b"}"
        }
    }

    /// One entry from `object`, a JSON object (`{…}`), given `"type": kind`
    /// as its first field.
    pub fn raw(&mut self, out: &mut Output, kind: &str, object: &[u8]) -> anyhow::Result<()> {
        if self.is_text() {
            return Ok(());
        }
        let body = object
            .strip_prefix(b"{")
            .and_then(|b| b.strip_suffix(b"}"))
            .ok_or_else(|| anyhow::anyhow!("an entry is a JSON object"))?;
        let mut head = Vec::with_capacity(32);
        let end = self.open_entry(&mut head, kind)?;
        out.write_all(&head)?;
        if !body.is_empty() {
            out.write_all(b",")?;
            out.write_all(body)?;
        }
        out.write_all(end)?;
        Ok(())
    }

    /// One entry serialized from `fields` (a struct).
    pub fn entry<T: Serialize>(
        &mut self,
        out: &mut Output,
        kind: &str,
        fields: &T,
    ) -> anyhow::Result<()> {
        if self.is_text() {
            return Ok(());
        }
        let object = serde_json::to_vec(fields)?;
        self.raw(out, kind, &object)
    }

    /// One entry: in text its line (`line`, without its line end), else
    /// the entry serialized from `fields`.
    pub fn line_or_entry<T: Serialize>(
        &mut self,
        out: &mut Output,
        line: impl FnOnce() -> String,
        kind: &str,
        fields: &T,
    ) -> anyhow::Result<()> {
        if self.is_text() {
            writeln!(out, "{}", line())?;
            return Ok(());
        }
        self.entry(out, kind, fields)
    }

    /// A problem: on stderr always (`klog: file: message`), and as an
    /// `error` entry in JSON output.
    pub fn problem(
        &mut self,
        out: &mut Output,
        file: &kaen_log::log::findings::FileFields,
        message: &str,
    ) -> anyhow::Result<()> {
        crate::report::say!("{}: {message}", file.file);
        self.entry(
            out,
            "error",
            &Problem {
                file,
                detail: message,
            },
        )
    }

    /// End the output.
    pub fn finish(self, out: &mut Output) -> anyhow::Result<()> {
        if self.format == Format::Json {
            out.write_all(if self.written == 0 {
                b"]}\n"
            } else {
                b"\n]}\n"
            })?;
        }
        Ok(())
    }
}

/// A problem entry of a stream: the file and what is wrong.
#[derive(Serialize, JsonSchema)]
pub struct Problem<'a> {
    #[serde(flatten)]
    pub file: &'a kaen_log::log::findings::FileFields,
    pub detail: &'a str,
}
