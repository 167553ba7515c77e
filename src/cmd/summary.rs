//! `klog summary`: a broker's log directories as one compact document for `klog cluster`.

use std::path::PathBuf;

use anyhow::Context;
use kaen_log::cluster::broker_summary::{
    self, EpochRun, LogDirSummary, PartitionSummary, SummaryDoc, SummaryOptions, SCHEMA_VERSION,
};

use schemars::JsonSchema;
use serde::Serialize;

use crate::cmd::args::FailOn;
use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::table::{cell, escape_cell, Column};
use crate::report::Output;
use crate::report::{emit, formats, Report, Table};

/// Summarize a broker's log directories for `klog cluster`, on the broker's host.
///
/// Run it on every broker (`--format json`, one document per run) and give
/// the files to `klog cluster`: the summaries let it compare replicas across
/// brokers without shipping their bytes. Per log directory: node id, cluster
/// id and directory id (meta.properties); per partition: log start, log end,
/// high watermark, recovery point, the leader-epoch-checkpoint entries and
/// the leader-epoch cache as the broker loads it, the segments with their
/// sizes, and per run of batches of one leader epoch its offsets, batch,
/// record and byte counts and a CRC-32C chained over the batches' base
/// offsets and stored CRCs (two replicas holding the same batches under an
/// epoch have the same chain); the last batches (--tail-batches) with the
/// chain at each. With offsets partitions (__consumer_offsets), the
/// committed-offset table as the coordinator loads it; with
/// __cluster_metadata-0, the metadata image (brokers, and every partition's
/// replicas, ISR, leader and leader epoch).
///
/// Batches are read header by header (framing only, no record decoded), up
/// to the first framing damage, where a broker's recovery ends the log;
/// --check-crc also checks each batch's CRC and ends at the first invalid
/// one. Damage and malformed files are findings (stderr, and `findings` in
/// JSON); exit 1 when one reaches --fail-on (default: error), 2 when a path
/// is not a log directory (a folder with meta.properties and no partition,
/// such as a replaced disk, is one that holds nothing).
///
/// JSON: {schema_version, log_dirs: [{path, node_id, cluster_id,
/// directory_id, clean_shutdown, partitions: [{topic, partition, topic_id,
/// log_start_offset, log_end_offset, high_watermark, recovery_point,
/// leader_epoch_checkpoint, leader_epochs, segments, epochs, tail}],
/// committed_offsets, metadata}], findings}.
#[derive(Debug, clap::Args)]
pub struct SummaryArgs {
    /// The broker's log directories.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output format (json: the document `klog cluster` reads). CSV is one
    /// row per partition: its log directory's `path`, `node_id` and
    /// `clean_shutdown` (false: the broker went down uncleanly), then the
    /// partition's JSON fields (its lists as their JSON).
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: crate::report::Format,
    /// The node id, for a directory whose meta.properties has none (or to override it).
    #[arg(long, value_name = "N")]
    pub node_id: Option<i32>,
    /// Also check every batch's CRC (reads the batches whole).
    #[arg(long)]
    pub check_crc: bool,
    /// How many of each partition's last batches to list with their chain.
    #[arg(long, value_name = "N", default_value_t = 16)]
    pub tail_batches: u16,
    /// The least severity that makes the run exit 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

pub fn run(args: &SummaryArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let opts = SummaryOptions {
        node_id: args.node_id,
        check_crc: args.check_crc,
        tail_batches: usize::from(args.tail_batches),
        bounded_names: false,
    };
    let mut doc = SummaryDoc {
        schema_version: SCHEMA_VERSION,
        log_dirs: Vec::new(),
        findings: Vec::new(),
    };
    for dir in &args.dirs {
        let (s, findings) = broker_summary::summarize(dir, &opts)
            .with_context(|| format!("summary {}", dir.display()))?;
        doc.log_dirs.push(s);
        doc.findings.extend(findings);
    }
    emit(&SummaryOut { doc: &doc }, args.format, out)?;
    let fail_on = args.fail_on.severity();
    Ok(Outcome::from_count(
        doc.findings.iter().filter(|f| f.fails(fail_on)).count() as u64,
    ))
}

/// `epoch@first..=last:chain` per run (offsets, both included).
fn runs(epochs: &[EpochRun]) -> String {
    epochs
        .iter()
        .map(|r| {
            format!(
                "{}@{}..={}:{:08x}",
                r.leader_epoch,
                r.start_offset,
                r.end_offset - 1,
                r.crc32c
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// The text columns of a partition of a log directory: its segments
/// counted and summed, its epochs in brief.
fn partition_columns<'r>() -> [Column<&'r PartitionSummary>; 10] {
    [
        Column::text("topic", |p| cell(&p.topic)),
        Column::number("partition", |p| cell(&p.partition)),
        Column::number("log_start_offset", |p| cell(&p.log_start_offset)),
        Column::number("log_end_offset", |p| cell(&p.log_end_offset)),
        Column::number("high_watermark", |p| cell(&p.high_watermark)),
        Column::number("recovery_point", |p| cell(&p.recovery_point)),
        Column::number("segments", |p| cell(&p.segments.len())),
        Column::number("bytes", |p| {
            cell(&p.segments.iter().map(|s| s.bytes).sum::<u64>())
        }),
        Column::text("leader_epochs", |p| {
            Some(crate::report::table::leader_epochs_text(
                p.leader_epochs
                    .iter()
                    .map(|e| (e.leader_epoch, e.start_offset)),
            ))
        }),
        // `epoch@start..end:checksum` per run of batches under one epoch.
        Column::text("epoch_checksums", |p| Some(runs(&p.epochs))),
    ]
}

/// The CSV columns of a partition's log directory (before the partition's
/// JSON fields): its path, node id and whether the broker left it with a
/// clean-shutdown marker.
fn log_dir_columns<'r>() -> [Column<&'r LogDirSummary>; 4] {
    [
        Column::text("path", |d| cell(&d.path)),
        // Only when the path is not UTF-8: its exact bytes, in base64.
        Column::text("path_base64", |d| cell(&d.path_base64)),
        Column::number("node_id", |d| cell(&d.node_id)),
        Column::text("clean_shutdown", |d| cell(&d.clean_shutdown)),
    ]
}

/// `klog summary`'s document (what `klog cluster` reads back).
#[derive(Serialize, JsonSchema)]
pub struct SummaryOut<'a> {
    #[serde(flatten)]
    doc: &'a SummaryDoc,
}

fn or_dash<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

impl Report for SummaryOut<'_> {
    const COMMAND: &'static str = "summary";

    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }

    /// One row per partition of every log directory.
    fn csv_table(&self) -> Option<Table> {
        let (dirs, partitions): (Vec<_>, Vec<_>) = self
            .doc
            .log_dirs
            .iter()
            .flat_map(|d| d.partitions.iter().map(move |p| (d, p)))
            .unzip();
        Some(Table::listed(dirs, &log_dir_columns()).beside(Table::flat(&partitions)))
    }

    fn text(&self, fit: crate::report::table::Fit) -> String {
        let mut out = String::new();
        for (i, d) in self.doc.log_dirs.iter().enumerate() {
            if i > 0 {
                out.push('\n');
            }
            out.push_str(&format!(
                "log dir {}: node {}, cluster {}, directory {}\n",
                escape_cell(&d.path),
                or_dash(d.node_id),
                escape_cell(&or_dash(d.cluster_id.as_deref())),
                escape_cell(&or_dash(d.directory_id.as_deref())),
            ));
            if d.shutdown_state() != kaen_log::log::shutdown::ShutdownState::NotABroker {
                out.push_str(&format!("shutdown: {}\n", d.shutdown_line()));
            }
            if let Some(m) = &d.metadata {
                out.push_str(&format!(
                    "metadata: next offset {}, {}, {}{}\n",
                    m.next_offset,
                    crate::report::plural(m.brokers.len() as u64, "broker", "brokers"),
                    crate::report::plural(m.topics.len() as u64, "topic", "topics"),
                    kaen_log::metadata::image::Section::remark(&m.incomplete)
                ));
            }
            if let Some(c) = &d.committed_offsets {
                out.push_str(&format!(
                    "committed offsets: {} in {}\n",
                    c.offsets.len(),
                    c.offsets_topic
                ));
            }
            out.push_str(&Table::listed(&d.partitions, &partition_columns()).render(fit));
        }
        out
    }

    fn summary(&self) -> String {
        crate::report::document::findings_text(&self.doc.findings)
    }
}

impl crate::cmd::CommandEntry for SummaryArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog summary --format json /var/lib/kafka/data > broker-1.json",
        "a broker's summary, to merge with the others'",
    )];
    const SEE_ALSO: &'static [&'static str] = &["cluster", "info", "brokers(7)"];
    const DETAILS: Option<&'static str> = None;

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<SummaryOut<'static>>()]
    }
}
