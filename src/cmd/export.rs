//! `klog export`: one broker's log directories as a Parquet tree.

use std::path::PathBuf;

use anyhow::Context;
use kaen_log::export::{self, Decode, ExportOptions, Limits, PageCodec};
use kaen_log::format::time::{parse_instant_ms, parse_when, When};
use kaen_log::format::DecodeLimits;
use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::progress::Progress;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// Write records, batches, partitions, producers, transactions, committed
/// offsets and findings as Parquet files, for DuckDB, Spark or Trino
///
/// DIR... are one broker's log directories (several for JBOD). OUT gets
/// a Hive-partitioned tree: `records/topic=T/partition=P/<segment base
/// offset>.parquet` (one file per segment), and one file each in
/// `batches/`, `partitions/`, `producers/`, `transactions/`, `offsets/`,
/// `findings/` (and `offset_history/` with --history). Columns are named
/// as klog's JSON names the fields; every row carries the broker's
/// `node_id` (from meta.properties; null without one) and `log_dir`, so
/// trees of many brokers can be read together.
///
/// Each file is written under a temporary name (`.NAME.klog-tmp`) and
/// renamed when whole: an interrupted export leaves no file that passes
/// as complete. `OUT/_SUCCESS` (the rows per table, as JSON) is written
/// last: a tree without it is an export that failed or was interrupted. OUT must be missing or empty, unless --overwrite, which
/// replaces the files an earlier export wrote there and touches nothing
/// else.
///
/// Damage in the input (CRC mismatch, torn tail, undecodable records)
/// becomes rows of `findings` and a line on stderr; the export goes on past
/// it. Exit 0 when the input was read whole, 1 when something was damaged,
/// 2 when the export could not be written.
#[derive(Debug, clap::Args)]
pub struct ExportArgs {
    /// One broker's log directories.
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// The folder to write the tree into.
    #[arg(short, long, value_name = "OUT")]
    pub output: PathBuf,
    /// Replace the files of an earlier export in OUT (nothing else there
    /// is touched).
    #[arg(long)]
    pub overwrite: bool,
    /// Only topics matching this glob (`*`, `?`); repeatable.
    #[arg(long, value_name = "GLOB")]
    pub topic: Vec<String>,
    /// Only this partition number; repeatable.
    #[arg(long, value_name = "N")]
    pub partition: Vec<i32>,
    /// Records from this offset on.
    #[arg(long, value_name = "OFFSET")]
    pub from_offset: Option<i64>,
    /// Records up to this offset (inclusive).
    #[arg(long, value_name = "OFFSET")]
    pub to_offset: Option<i64>,
    /// Records stamped at or after this time (epoch ms, ISO-8601, or now
    /// less a duration: now-PT1H).
    #[arg(long, value_name = "TIME", value_parser = parse_when)]
    pub from_time: Option<When>,
    /// Records stamped at or before this time (as --from-time).
    #[arg(long, value_name = "TIME", value_parser = parse_when)]
    pub to_time: Option<When>,
    /// Now, for times given as now less a duration (epoch ms or ISO-8601;
    /// default: the clock).
    #[arg(long, value_name = "MS", value_parser = parse_instant_ms)]
    pub now_ms: Option<i64>,
    /// `read-committed`: leave out what a read_committed consumer does not
    /// see (aborted transactions' records, control records, everything
    /// from the last stable offset on); `read-uncommitted` (the default):
    /// every record.
    #[arg(long, value_name = "LEVEL", value_parser = crate::cmd::args::isolation)]
    pub isolation: Option<kaen_log::txn::Isolation>,
    /// Leave record values out (the `value` column is null).
    #[arg(long)]
    pub no_values: bool,
    /// Add `key_text` and `value_text`: the bytes as text when they are
    /// UTF-8 (`utf8`), or one JSON value (`json`); null otherwise.
    #[arg(long, value_enum)]
    pub decode: Option<DecodeArg>,
    /// Also write `offset_history`: every commit and tombstone of the
    /// offsets topic, in log order.
    #[arg(long)]
    pub history: bool,
    /// Rows per row group (memory grows with it).
    #[arg(long, default_value_t = 65536, value_parser = clap::value_parser!(u64).range(1..))]
    pub row_group_rows: u64,
    /// Page compression.
    #[arg(long, value_enum, default_value_t = CodecArg::Zstd)]
    pub compression: CodecArg,
    /// Partitions exported at once (default: one per core).
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..))]
    pub jobs: Option<u64>,
    /// The most bytes one batch's records may decompress to.
    #[arg(long, default_value_t = DecodeLimits::default().max_decompressed)]
    pub max_decompressed_bytes: u64,
    /// Output format of the summary on stdout.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
}

/// `--decode`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecodeArg {
    Utf8,
    Json,
}

/// `--compression`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CodecArg {
    Zstd,
    Snappy,
    None,
}

/// What the export wrote: rows per table.
#[derive(Serialize, JsonSchema)]
pub struct ExportReport {
    /// The output folder.
    output: String,
    /// Parquet files written.
    files: u64,
    /// Partitions exported.
    partitions: u64,
    /// Rows per table.
    tables: Vec<TableOut>,
    /// Findings of severity error (damage in the input).
    errors: u64,
}

/// One table's rows.
#[derive(Serialize, JsonSchema)]
struct TableOut {
    table: &'static str,
    rows: u64,
}

impl Report for ExportReport {
    const COMMAND: &'static str = "export";

    fn tables(&self) -> Vec<Table> {
        vec![Table::flat(&self.tables)]
    }
}

pub fn run(args: &ExportArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    export::prepare_out(&args.output, args.overwrite)
        .with_context(|| format!("export to {}", args.output.display()))?;
    let progress = Progress::over(
        || kaen_log::log::dir::log_bytes(&args.dirs),
        out.shows_progress(args.format == Format::Text),
    );
    let now = args.now_ms.unwrap_or_else(crate::cmd::now_ms);
    let jobs = match args.jobs {
        Some(n) => crate::cmd::clamp_to_cores("--jobs", n as usize),
        None => kaen_log::log::read::available_cores(),
    };
    let opts = ExportOptions {
        topics: args.topic.clone(),
        partitions: args.partition.clone(),
        offsets: (args.from_offset, args.to_offset),
        times: (
            args.from_time.map(|w| w.at(now)),
            args.to_time.map(|w| w.at(now)),
        ),
        read_committed: args.isolation == Some(kaen_log::txn::Isolation::ReadCommitted),
        values: !args.no_values,
        decode: match args.decode {
            None => Decode::None,
            Some(DecodeArg::Utf8) => Decode::Utf8,
            Some(DecodeArg::Json) => Decode::Json,
        },
        history: args.history,
        jobs,
        limits: Limits {
            rows: usize::try_from(args.row_group_rows).unwrap_or(usize::MAX),
            bytes: 128 << 20,
        },
        codec: match args.compression {
            CodecArg::Zstd => PageCodec::Zstd,
            CodecArg::Snappy => PageCodec::Snappy,
            CodecArg::None => PageCodec::None,
        },
        decode_limits: DecodeLimits {
            max_decompressed: args.max_decompressed_bytes,
        },
        meter: Progress::meter_of(&progress),
    };
    let done = export::export(&args.dirs, &args.output, &opts)
        .with_context(|| format!("export to {}", args.output.display()))?;
    drop(progress);
    for f in &done.findings {
        crate::report::say!("{f}");
    }
    let report = ExportReport {
        output: args.output.display().to_string(),
        files: done.files,
        partitions: done.partitions,
        tables: done
            .rows
            .iter()
            .map(|(&table, &rows)| TableOut { table, rows })
            .collect(),
        errors: done.errors(),
    };
    emit(&report, args.format, out)?;
    Ok(Outcome::from_count(done.errors()))
}

impl crate::cmd::CommandEntry for ExportArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog export --topic 'orders*' --from-time now-PT1H -o /srv/export/broker-1 /var/lib/kafka/data",
        "the last hour of the orders topics as Parquet, for DuckDB or Spark",
    )];
    const SEE_ALSO: &'static [&'static str] = &["dump-segment", "stats", "summary", "output(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/export.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        vec![crate::cmd::generate::json_schema::entry::<ExportReport>()]
    }
}
