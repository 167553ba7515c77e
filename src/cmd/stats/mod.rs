//! `klog stats`: per-partition and total statistics of logs.

use std::path::PathBuf;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::inspect::log_stats::{
    self, CodecStats, Distribution, PartitionStats, Stats, StatsOptions, CODECS,
};
use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::progress::Progress;
use crate::report::{emit, formats, Format, Output, Report, Table};

mod stats_document;
pub use stats_document::*;

/// Statistics of logs, per partition and in total
///
/// Batches, records and bytes; records per batch and batch size in bytes (min, lower median,
/// max); per codec the batches, the stored (compressed) bytes of their
/// records sections, the bytes those decompress to and the ratio
/// uncompressed/stored; the range of record timestamps; plain batches (no
/// producer id) and distinct idempotent and transactional producer ids;
/// transactions committed, aborted and still open, and control batches;
/// legacy (magic 0/1) entries and their messages.
///
/// Batches whose CRC fails or whose records do not decode are counted and
/// skipped, as are torn or unframeable tails (`klog verify-crc` shows where
/// they are). In the total, producers are distinct over all partitions.
///
/// Exit 0 when every batch was read, 1 when a batch was skipped or a
/// segment has a damaged tail.
#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// Data directories, partition folders or segment files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format. CSV is one table: a row per partition, as the JSON
    /// document's `partitions` (a nested object's fields as
    /// `parent_child`, the codecs list as its JSON), or the one --table
    /// names.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
    /// With --format csv: the table to print (default: partitions).
    #[arg(long, value_enum)]
    pub table: Option<StatsTable>,
    /// The most bytes one batch's records may decompress to.
    #[arg(long, default_value_t = DecodeLimits::default().max_decompressed)]
    pub max_decompressed_bytes: u64,
}

/// A table of `stats --format csv` (`--table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum StatsTable {
    /// One row per partition (or lone segment file): its JSON object.
    #[default]
    Partitions,
    /// One row per codec used in a partition: the partition's `name`,
    /// then the codec's JSON fields.
    Codecs,
}

pub fn run(args: &StatsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        args.table.is_none() || args.format == Format::Csv,
        "--table chooses the table of --format csv: text shows every table, json the whole document"
    );
    let progress = Progress::over(
        || kaen_log::log::dir::log_bytes(&args.paths),
        out.shows_progress(args.format == Format::Text),
    );
    let opts = StatsOptions {
        limits: DecodeLimits {
            max_decompressed: args.max_decompressed_bytes,
        },
        meter: Progress::meter_of(&progress),
    };
    let mut parts: Vec<PartitionStats> = Vec::new();
    for path in &args.paths {
        parts.extend(
            log_stats::stats_path(path, &opts)
                .with_context(|| format!("stats {}", path.display()))?,
        );
    }
    let total = Stats::total(parts.iter().map(|p| &p.stats));
    let report = StatsReport::of(
        &parts,
        &total,
        out.time_format(),
        args.table.unwrap_or_default(),
    );
    emit(&report, args.format, out)?;
    for p in parts.iter().filter(|p| p.stats.problems() > 0) {
        let said: Vec<String> = p
            .stats
            .skipped()
            .into_iter()
            .map(|(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
            .collect();
        crate::report::say!(
            "{}: skipped {} (`klog verify-crc {}` shows where)",
            p.name,
            said.join(", "),
            p.path.display()
        );
    }
    Ok(Outcome::from_count(total.problems()))
}

impl crate::cmd::CommandEntry for StatsArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog stats DIR",
        "batches, records, codecs and producers per partition",
    )];
    const SEE_ALSO: &'static [&'static str] = &["dump-segment"];
    const DETAILS: Option<&'static str> = Some(include_str!("../generate/pages/stats.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<StatsReport>()]
    }
}
