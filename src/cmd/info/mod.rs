//! `klog info`: an overview of data directories, from their files alone.

use std::collections::BTreeMap;
use std::path::PathBuf;

use anyhow::Context;
use kaen_log::inspect::dir_overview::{self, DirInfo, Loaded};
use kaen_log::log::findings::{Counts, Finding, Summary};
use kaen_log::log::DataDir;
use schemars::JsonSchema;
use serde::Serialize;

use crate::cmd::args::FailOn;
use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::table::escape_cell;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// Show what a data directory holds, from its files alone.
///
/// For each directory: its meta.properties (version, broker.id or node.id,
/// cluster.id, directory.id), which checkpoint files it has
/// (cleaner-offset-, log-start-offset-, recovery-point-offset- and
/// replication-offset-checkpoint), then one row per partition folder,
/// sorted by topic and partition: segments, BYTES (the sum of the .log
/// files), LOG-START-OFFSET (the first segment's base offset, or
/// log-start-offset-checkpoint when higher; for a topic with tiered
/// storage, Kafka's: the checkpoint, raised to the start of the remote log
/// when `__remote_log_metadata` is in a directory given), then, when some
/// partition's local copy starts above its log start (tiered storage, KIP-405:
/// the topic's config in the KRaft metadata, or `__remote_log_metadata`
/// naming the partition), LOCAL-LOG-START-OFFSET (where the local copy
/// starts: the offsets below it live in remote segments only) and
/// REMOTE-OFFSETS (the first and last offsets of the readable remote
/// segments, `none`, or `?` when no directory given holds the partition's
/// remote log metadata), LOG-END-OFFSET (one past the last
/// valid batch), HIGH-WATERMARK, RECOVERY-POINT and CLEANER-OFFSET (the
/// checkpointed values as written), LEADER-EPOCHS (leader-epoch-checkpoint,
/// as epoch@start_offset) and TOPIC-ID (partition.metadata). Folders marked
/// -delete, -future or -stray are listed with their state but not read.
///
/// meta.properties is read with Java Properties rules: a line without `=`
/// is a key with an empty value (ignored unless the key is one klog reads).
///
/// A malformed checkpoint, meta.properties or partition.metadata is a
/// finding with its path and line number (on stderr in text output, under
/// `findings` in JSON); its values are shown as `-` and the rest is still
/// shown. The severity is what a broker does with the file: it resets an
/// unreadable recovery-point, log-start or cleaner-offset checkpoint (a
/// warning), and fails a log directory whose meta.properties,
/// replication-offset or leader-epoch checkpoint, or a partition whose
/// partition.metadata does not parse (an error). A log that ends below its
/// log-start-offset-checkpoint entry is missing segments, and a broker
/// loading it deletes every segment and starts it empty at that offset
/// (log_end_below_log_start, an error); one that ends below its
/// replication-offset-checkpoint high watermark lacks records the cluster
/// had committed, and a broker lowers the high watermark to its end
/// (high_watermark_above_log_end, a warning); a high watermark below the
/// log start (negative, which Kafka never writes, or older than the log
/// start's checkpoint) is raised to the log start by a broker loading it
/// (high_watermark_below_log_start, a warning).
///
/// A KRaft directory (with `__cluster_metadata-0`) also shows its
/// quorum-state (leader, epoch, vote) and the replayed metadata, and every
/// directory given is checked against that metadata, as warnings naming the
/// folders: partitions the metadata assigns to this node (node.id of
/// meta.properties) with no folder in any directory given
/// (assigned_partition_missing); folders whose topic id (partition.metadata)
/// the metadata does not know (unknown_topic_id), knows under another name
/// (topic_id_other_name) or removed (deleted_topic_folder); and -delete and
/// -stray folders. Each snapshot of the metadata log and
/// `bootstrap.checkpoint` must begin with a SNAPSHOT_HEADER
/// (snapshot_header_missing: Kafka refuses such a snapshot, an error) and
/// end with a SNAPSHOT_FOOTER (snapshot_footer_missing, a warning). Exit 1
/// when a finding reaches --fail-on (default: error). A path that is not a
/// data directory exits 2.
#[derive(Debug, clap::Args)]
pub struct InfoArgs {
    /// Data directories (a broker's log directories, or ones klog wrote).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Output format (csv: one row per partition folder of each directory,
    /// after the directory's `dir` and `shutdown`: how the broker left it,
    /// clean, unclean or running, empty for a directory not a broker's).
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
    /// The least severity that makes the run exit 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

pub fn run(args: &InfoArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    // Open every directory first: a bad path exits 2 before anything is printed.
    let dirs = args
        .dirs
        .iter()
        .map(|d| DataDir::open(d))
        .collect::<Result<Vec<_>, _>>()?;
    // Tiered storage: from the remote log metadata and topic configs of every directory given.
    let tiering = kaen_log::tiered::Tiering::for_dirs(&dirs)?;
    let mut infos = Vec::new();
    for d in &dirs {
        infos.push(
            dir_overview::inspect(d, &tiering)
                .with_context(|| format!("info {}", d.path.display()))?,
        );
    }
    dir_overview::check_against_metadata(&mut infos, &dir_overview::live_partitions(&dirs));
    let findings: Vec<Finding> = infos.iter().flat_map(|i| i.findings.clone()).collect();
    let fail_on = args.fail_on.severity();
    let failing = findings.iter().filter(|f| f.fails(fail_on)).count() as u64;
    emit(&InfoReport::new(&infos, findings), args.format, out)?;
    Ok(Outcome::from_count(failing))
}

mod info_document;
pub use info_document::InfoReport;

impl crate::cmd::CommandEntry for InfoArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog info DIR1 DIR2",
        "what a broker's log directories hold, checked against the KRaft metadata",
    )];
    const SEE_ALSO: &'static [&'static str] = &["metadata", "verify-crc", "kafka(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("../generate/pages/info.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<InfoReport>()]
    }
}
