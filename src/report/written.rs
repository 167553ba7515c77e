//! What a writer (`commit`, `tombstone`, `reset-offsets --execute`) wrote:
//! the batch each replica's partition folder got, in every format. Text
//! says it on stderr (`wrote 2 tombstones to DIR/__offsets-0 at offsets
//! 14..=15`), the JSON document in its `written` list, `jsonl` in
//! `written` lines.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use schemars::JsonSchema;
use serde::Serialize;

/// One batch written to one replica.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Written {
    /// The partition folder written (its data directory as given, then
    /// the folder).
    pub path: String,
    /// The partition written (`__consumer_offsets-8`, `__share_group_state-0`).
    pub log_partition: String,
    /// The offset of the batch's first record.
    pub first_offset: i64,
    /// The offset of its last record.
    pub last_offset: i64,
}

impl Written {
    /// The batch `range` written to each of `folders`, partition `log_partition`.
    pub fn batch(
        folders: &[PathBuf],
        log_partition: &str,
        range: &RangeInclusive<i64>,
    ) -> Vec<Written> {
        folders
            .iter()
            .map(|f| Written::one(f, log_partition, range))
            .collect()
    }

    /// The batch `range` written to `folder`.
    pub fn one(folder: &Path, log_partition: &str, range: &RangeInclusive<i64>) -> Written {
        Written {
            path: folder.display().to_string(),
            log_partition: log_partition.to_string(),
            first_offset: *range.start(),
            last_offset: *range.end(),
        }
    }

    /// Say on stderr that `what` (`2 tombstones`) went to this folder.
    pub fn say(&self, what: &str) {
        crate::report::say!(
            "wrote {what} to {} at offsets {}..={}",
            self.path,
            self.first_offset,
            self.last_offset
        );
    }
}

/// The last line of a writer's `jsonl` output.
#[derive(Serialize)]
pub struct Summary<'a> {
    pub group: &'a str,
    /// Whether anything was written (false: a dry run).
    pub executed: bool,
}

/// The rows a writer reports, one kind of them: `commit`'s commits,
/// `tombstone`'s tombstones. A one-field struct, so its field names the
/// rows in the JSON document.
pub trait WrittenRows: Serialize + JsonSchema {
    /// The subcommand, and the `jsonl` line type of a row.
    const COMMAND: &'static str;
    type Row: Serialize + JsonSchema;
    fn rows(&self) -> &[Self::Row];
    /// A row's text line, names escaped.
    fn line(row: &Self::Row) -> String;
}

/// A writer's document: the group, whether anything was written, the
/// rows, and the batch each replica's partition folder got.
#[derive(Serialize, JsonSchema)]
pub struct WriterReport<R> {
    pub group: String,
    /// Whether anything was written (false: a dry run; `commit` always writes).
    pub executed: bool,
    #[serde(flatten)]
    pub rows: R,
    /// The batch each replica's partition folder got (empty in a dry run).
    pub written: Vec<Written>,
}

impl<R: WrittenRows> crate::report::Report for WriterReport<R> {
    const COMMAND: &'static str = R::COMMAND;

    fn tables(&self) -> Vec<crate::report::Table> {
        vec![crate::report::Table::of(self.rows.rows())]
    }

    /// A line per row.
    fn text(&self, _fit: crate::report::table::Fit) -> String {
        self.rows
            .rows()
            .iter()
            .map(|r| format!("{}\n", R::line(r)))
            .collect()
    }

    fn write_lines(&self, lines: &mut crate::report::Jsonl<'_>) -> anyhow::Result<()> {
        let summary = Summary {
            group: &self.group,
            executed: self.executed,
        };
        write_lines(
            lines,
            (R::COMMAND, self.rows.rows()),
            &self.written,
            summary,
        )
    }
}

/// A writer's `jsonl` lines: a line of `kind` per row, a `written` line
/// per batch, then the [`Summary`].
fn write_lines<T: Serialize>(
    lines: &mut crate::report::document::Jsonl<'_>,
    (kind, rows): (&str, &[T]),
    written: &[Written],
    summary: Summary<'_>,
) -> anyhow::Result<()> {
    for r in rows {
        lines.line(kind, r)?;
    }
    for w in written {
        lines.line("written", w)?;
    }
    lines.line("summary", &summary)
}
