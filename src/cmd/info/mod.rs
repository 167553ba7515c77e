//! `klog info`: an overview of data directories, from their files alone.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use anyhow::Context;
use kaen_log::log::checkpoint::{self, DIR_CHECKPOINTS};
use kaen_log::log::findings::{Finding, Kind, Severity, Summary};
use kaen_log::log::meta::{self, MetaProperties, PartitionMetadata};
use kaen_log::log::{DataDir, Partition, PartitionState};
use kaen_log::Error;

use kaen_log::log::findings::Counts;
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

/// A file that may be absent, fine, or malformed (reported already).
enum Loaded<T> {
    Absent,
    Malformed,
    Found(T),
}

impl<T> Loaded<T> {
    fn ok(&self) -> Option<&T> {
        match self {
            Loaded::Found(v) => Some(v),
            _ => None,
        }
    }
}

/// A read's result; a malformed file becomes a finding of `kind` (at
/// `severity`), any other error (I/O) ends the command.
fn load<T>(
    findings: &mut Vec<Finding>,
    (kind, severity): (Kind, Severity),
    r: kaen_log::Result<Option<T>>,
) -> anyhow::Result<Loaded<T>> {
    match r {
        Ok(None) => Ok(Loaded::Absent),
        Ok(Some(v)) => Ok(Loaded::Found(v)),
        Err(Error::Layout { path, reason }) => {
            findings.push(Finding::new(kind, path, 0, None, reason).with_severity(severity));
            Ok(Loaded::Malformed)
        }
        Err(e) => Err(e.into()),
    }
}

/// The finding a malformed checkpoint file is (see the command's help).
fn checkpoint_finding(name: &str) -> (Kind, Severity) {
    let severity = match name {
        checkpoint::REPLICATION_OFFSET | checkpoint::LEADER_EPOCH => Severity::Error,
        _ => Severity::Warning,
    };
    (Kind::CheckpointMalformed, severity)
}

type Offsets = BTreeMap<(String, i32), i64>;

struct MetadataSummary {
    snapshot: Option<i64>,
    next_offset: i64,
    topics: usize,
    brokers: usize,
    /// The parts of the image klog could not build in full.
    incomplete: Vec<kaen_log::metadata::image::Section>,
    /// node.id of the directory's meta.properties (version 1).
    node: Option<i32>,
    image: kaen_log::metadata::Image,
}

struct PartitionInfo {
    /// The folder's name.
    folder: String,
    topic: String,
    partition: i32,
    state: PartitionState,
    /// None for folders that are not read (-delete, -future, -stray).
    live: Option<LiveInfo>,
}

struct LiveInfo {
    segments: usize,
    bytes: u64,
    log_start: i64,
    local_log_start: i64,
    /// The partition's remote storage, when its topic has tiered storage.
    tiered: Option<kaen_log::tiered::Tiered>,
    log_end: i64,
    high_watermark: Option<i64>,
    recovery_point: Option<i64>,
    cleaner_offset: Option<i64>,
    leader_epochs: Option<Vec<(i32, i64)>>,
    topic_id: Option<PartitionMetadata>,
}

struct DirInfo {
    path: PathBuf,
    quorum: Loaded<kaen_log::metadata::QuorumState>,
    /// The replayed metadata, when the directory holds a metadata log.
    metadata: Option<MetadataSummary>,
    findings: Vec<Finding>,
    meta: Loaded<MetaProperties>,
    checkpoints: Vec<&'static str>,
    partitions: Vec<PartitionInfo>,
}

pub fn run(args: &InfoArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    // Open every directory first: a bad path exits 2 before anything is printed.
    let dirs = args
        .dirs
        .iter()
        .map(|d| DataDir::open(d))
        .collect::<Result<Vec<_>, _>>()?;
    let live: BTreeSet<(String, i32)> = dirs
        .iter()
        .flat_map(|d| &d.partitions)
        .filter(|p| p.state == PartitionState::Live)
        .map(|p| (p.topic.clone(), p.partition))
        .collect();
    // Tiered storage: from the remote log metadata and topic configs of every directory given.
    let tiering = kaen_log::tiered::Tiering::for_dirs(&dirs)?;
    let mut infos = Vec::new();
    for d in &dirs {
        infos.push(inspect(d, &tiering).with_context(|| format!("info {}", d.path.display()))?);
    }
    // The disk against the metadata: the first directory holding a metadata
    // log speaks for the broker (its metadata.log.dir); every directory's
    // folders are checked against it.
    let checks: Vec<Vec<Finding>> = match infos
        .iter()
        .find_map(|i| Some((&i.path, i.metadata.as_ref()?)))
    {
        None => vec![Vec::new(); infos.len()],
        Some((meta_dir, m)) => infos
            .iter()
            .map(|i| {
                let mut f = Vec::new();
                if &i.path == meta_dir {
                    if let Some(node) = m.node {
                        f.extend(assigned_missing(&i.path, &m.image, node, &live));
                    }
                }
                f.extend(topic_id_findings(&i.path, &m.image, &i.partitions));
                f
            })
            .collect(),
    };
    for (info, found) in infos.iter_mut().zip(checks) {
        // Before the -delete and -stray folders, as a broker would find them.
        let at = info
            .findings
            .iter()
            .position(|f| matches!(f.kind, Kind::DeleteFolder | Kind::StrayFolder))
            .unwrap_or(info.findings.len());
        info.findings.splice(at..at, found);
    }
    let findings: Vec<Finding> = infos.iter().flat_map(|i| i.findings.clone()).collect();
    let fail_on = args.fail_on.severity();
    let failing = findings.iter().filter(|f| f.fails(fail_on)).count() as u64;
    emit(&InfoReport::new(&infos, findings), args.format, out)?;
    Ok(Outcome::from_count(failing))
}

/// Partitions the metadata assigns to `node` with no folder among `others`,
/// the live partition folders of every directory given (a broker's
/// partitions may sit in any of its log directories); reported under
/// `dir`, the directory holding the metadata.
fn assigned_missing(
    dir: &Path,
    image: &kaen_log::metadata::Image,
    node: i32,
    others: &BTreeSet<(String, i32)>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    let mut topics: Vec<_> = image.topics.values().collect();
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    for t in topics {
        for (p, reg) in &t.partitions {
            if reg.replicas.contains(&node) && !others.contains(&(t.name.clone(), *p)) {
                out.push(Finding::new(
                    Kind::AssignedPartitionMissing,
                    dir.join(format!("{}-{p}", t.name)),
                    0,
                    None,
                    format!(
                        "{}-{p}: the metadata assigns it to node {node} (replicas {:?}, leader {}) and no directory given has this folder",
                        t.name, reg.replicas, reg.leader
                    ),
                ));
            }
        }
    }
    out
}

/// The folders of one directory whose topic id (partition.metadata) the
/// metadata does not know, knows under another name, or removed.
fn topic_id_findings(
    dir: &Path,
    image: &kaen_log::metadata::Image,
    partitions: &[PartitionInfo],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in partitions {
        let Some(id) = p.live.as_ref().and_then(|l| l.topic_id).map(|m| m.topic_id) else {
            continue;
        };
        if p.topic == kaen_log::metadata::METADATA_TOPIC {
            continue;
        }
        let path = dir.join(&p.folder);
        let finding = match (image.topics.get(&id), image.deleted_topics.get(&id)) {
            (Some(t), _) if t.name == p.topic => continue,
            (Some(t), _) => Finding::new(
                Kind::TopicIdOtherName,
                path,
                0,
                None,
                format!(
                    "{}: topic id {id} is topic {:?} in the metadata, not {:?}",
                    p.folder, t.name, p.topic
                ),
            ),
            (None, Some(name)) => Finding::new(
                Kind::DeletedTopicFolder,
                path,
                0,
                None,
                format!(
                    "{}: topic {name:?} (id {id}) was deleted from the metadata",
                    p.folder
                ),
            ),
            (None, None) => Finding::new(
                Kind::UnknownTopicId,
                path,
                0,
                None,
                format!(
                    "{}: topic id {id} is not in the metadata{}",
                    p.folder,
                    match image.topic_by_name(&p.topic) {
                        Some(t) => format!(" (topic {:?} there has id {})", p.topic, t.id),
                        None => String::new(),
                    }
                ),
            ),
        };
        out.push(finding);
    }
    out
}

/// One data directory as `klog info` shows it: meta.properties, the
/// checkpoints, each partition folder, quorum-state and the replayed
/// metadata, with the findings in the order they are met.
fn inspect(d: &DataDir, tiering: &kaen_log::tiered::Tiering) -> anyhow::Result<DirInfo> {
    let mut findings = d.foreign_folder_findings();
    let meta = load(
        &mut findings,
        (Kind::MetaPropertiesMalformed, Severity::Error),
        meta::read_meta_properties(&d.path.join(meta::META_PROPERTIES)),
    )?;
    let (checkpoints, offsets) = dir_checkpoints(d, &mut findings)?;
    let mut partitions = Vec::new();
    for p in &d.partitions {
        partitions.push(partition_info(p, &offsets, tiering, &mut findings)?);
    }
    let folder = d.path.join(kaen_log::metadata::METADATA_FOLDER);
    let quorum = load(
        &mut findings,
        (Kind::QuorumStateMalformed, Severity::Error),
        kaen_log::metadata::read_quorum_state(&folder),
    )?;
    findings.extend(snapshot_findings(d, &folder)?);
    let metadata = if folder.is_dir() {
        replay_metadata(&folder, &meta, &mut findings)
    } else {
        None
    };
    findings.extend(marked_folder_findings(d, &partitions));
    Ok(DirInfo {
        path: d.path.clone(),
        quorum,
        metadata,
        findings,
        meta,
        checkpoints,
        partitions,
    })
}

/// The directory's checkpoint files that exist, and the offsets of each
/// that parses (a malformed one is a finding).
fn dir_checkpoints(
    d: &DataDir,
    problems: &mut Vec<Finding>,
) -> anyhow::Result<(Vec<&'static str>, BTreeMap<&'static str, Offsets>)> {
    let mut checkpoints = Vec::new();
    let mut offsets: BTreeMap<&str, Offsets> = BTreeMap::new();
    for name in DIR_CHECKPOINTS {
        let path = d.path.join(name);
        if path.exists() {
            checkpoints.push(name);
        }
        if let Loaded::Found(m) = load(
            problems,
            checkpoint_finding(name),
            checkpoint::read_offsets(&path),
        )? {
            offsets.insert(name, m);
        }
    }
    Ok((checkpoints, offsets))
}

/// One partition folder's row: of a live folder its segments, bytes and
/// offsets (from its files and the directory's checkpoints), its
/// leader-epoch-checkpoint and partition.metadata; a folder marked -delete,
/// -future or -stray is not read.
fn partition_info(
    p: &Partition,
    offsets: &BTreeMap<&str, Offsets>,
    tiering: &kaen_log::tiered::Tiering,
    problems: &mut Vec<Finding>,
) -> anyhow::Result<PartitionInfo> {
    let lookup = |name: &str, p: &Partition| {
        offsets
            .get(name)
            .and_then(|m| m.get(&(p.topic.clone(), p.partition)))
            .copied()
    };
    let live = if p.state == PartitionState::Live {
        let checkpointed_start = lookup(checkpoint::LOG_START_OFFSET, p);
        let starts = tiering.log_starts(p, checkpointed_start);
        let log_end = p.log_end_offset()?;
        let high_watermark = lookup(checkpoint::REPLICATION_OFFSET, p);
        problems.extend(ends_findings(
            p,
            log_end,
            (checkpointed_start, starts.log_start),
            high_watermark,
        ));
        Some(LiveInfo {
            segments: p.segments.len(),
            bytes: log_bytes(p)?,
            log_start: starts.log_start,
            local_log_start: starts.local_log_start,
            tiered: starts.tiered,
            log_end,
            high_watermark,
            recovery_point: lookup(checkpoint::RECOVERY_POINT, p),
            cleaner_offset: lookup(checkpoint::CLEANER_OFFSET, p),
            leader_epochs: match load(
                problems,
                checkpoint_finding(checkpoint::LEADER_EPOCH),
                checkpoint::read_leader_epochs(&p.dir.join(checkpoint::LEADER_EPOCH)),
            )? {
                Loaded::Found(v) => Some(v),
                _ => None,
            },
            topic_id: load(
                problems,
                (Kind::PartitionMetadataMalformed, Severity::Error),
                meta::read_partition_metadata(&p.dir.join(meta::PARTITION_METADATA)),
            )?
            .ok()
            .copied(),
        })
    } else {
        None
    };
    Ok(PartitionInfo {
        folder: p
            .dir
            .file_name()
            .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
        topic: p.topic.clone(),
        partition: p.partition,
        state: p.state,
        live,
    })
}

/// What a broker does on load with a log's end against its checkpointed
/// start and high watermark, where that loses or lowers something: a log
/// ending below its start is emptied at it
/// (`LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd`); a high
/// watermark above the (loaded) end is lowered to it
/// (`UnifiedLog.updateHighWatermark`).
fn ends_findings(
    p: &Partition,
    log_end: i64,
    (checkpointed_start, log_start): (Option<i64>, i64),
    high_watermark: Option<i64>,
) -> Vec<Finding> {
    let mut out = Vec::new();
    if let Some(start) = checkpointed_start.filter(|&s| s > log_end) {
        out.push(Finding::new(
            Kind::LogEndBelowLogStart,
            &p.dir,
            0,
            Some(log_end),
            format!(
                "the log ends at {log_end}, below its log start {start} in {}: segments are missing; \
                 a broker loading it deletes every segment and starts the log empty at {start}",
                checkpoint::LOG_START_OFFSET
            ),
        ));
    }
    let loaded_end = p.loaded_log_end(log_end, checkpointed_start);
    // `OffsetCheckpointFile.Formatter` parses any long; `Partition.createLog`
    // hands it to `UnifiedLog.updateHighWatermark`, which raises it to the
    // log start.
    if let Some(hw) = high_watermark.filter(|&hw| hw < log_start) {
        let why = if hw < 0 {
            "a negative high watermark, which Kafka never writes"
        } else {
            "the checkpoint is older than the log start"
        };
        out.push(Finding::new(
            Kind::HighWatermarkBelowLogStart,
            &p.dir,
            0,
            Some(log_start),
            format!(
                "the high watermark {hw} in {} is below the log start {log_start} ({why}): \
                 a broker raises it to {log_start}",
                checkpoint::REPLICATION_OFFSET
            ),
        ));
    }
    if let Some(hw) = high_watermark.filter(|&hw| hw > loaded_end) {
        let loaded = if loaded_end == log_end {
            ""
        } else {
            " as a broker loads it"
        };
        out.push(Finding::new(
            Kind::HighWatermarkAboveLogEnd,
            &p.dir,
            0,
            Some(loaded_end),
            format!(
                "the log ends at {loaded_end}{loaded}, below its high watermark {hw} in {}: \
                 the committed offsets {loaded_end}..={} are not on this copy; \
                 a broker lowers the high watermark to {loaded_end}",
                checkpoint::REPLICATION_OFFSET,
                hw - 1
            ),
        ));
    }
    out
}

/// Every snapshot's frame (header first, footer last) in the metadata
/// folder, bootstrap.checkpoint's too.
fn snapshot_findings(d: &DataDir, folder: &Path) -> anyhow::Result<Vec<Finding>> {
    let mut snapshot_files: Vec<PathBuf> = if folder.is_dir() {
        kaen_log::metadata::snapshots(folder)?
            .into_iter()
            .map(|(_, _, p)| p)
            .collect()
    } else {
        Vec::new()
    };
    let bootstrap = d.path.join(kaen_log::metadata::BOOTSTRAP_FILE);
    if bootstrap.is_file() {
        snapshot_files.push(bootstrap);
    }
    let mut findings = Vec::new();
    for f in &snapshot_files {
        findings.extend(kaen_log::metadata::check_snapshot(f)?);
    }
    Ok(findings)
}

/// The directory's KRaft metadata (`__cluster_metadata-0`) replayed: its
/// summary and image, with what the replay could not read or apply among
/// the findings; a log that cannot be replayed at all is a finding.
fn replay_metadata(
    folder: &Path,
    meta: &Loaded<MetaProperties>,
    findings: &mut Vec<Finding>,
) -> Option<MetadataSummary> {
    match kaen_log::metadata::replay(folder, None) {
        Ok(r) => {
            let node = meta.ok().filter(|m| m.version == 1).and_then(|m| m.node_id);
            // What the replay could not read or apply (the snapshots'
            // framing is checked apart, every snapshot's: `snapshot_findings`).
            findings.extend(r.findings.iter().cloned());
            Some(MetadataSummary {
                snapshot: r.snapshot.as_ref().map(|s| s.1),
                next_offset: r.next_offset,
                topics: r.image.topics.len(),
                brokers: r.image.brokers.len(),
                incomplete: r.incomplete(),
                node,
                image: r.image,
            })
        }
        Err(e) => {
            findings.push(Finding::new(
                Kind::MetadataUnreadable,
                folder,
                0,
                None,
                e.to_string(),
            ));
            None
        }
    }
}

/// The -delete and -stray folders of the directory, a finding each.
fn marked_folder_findings(d: &DataDir, partitions: &[PartitionInfo]) -> Vec<Finding> {
    let mut findings = Vec::new();
    for p in partitions {
        let kind = match p.state {
            PartitionState::Delete => Kind::DeleteFolder,
            PartitionState::Stray => Kind::StrayFolder,
            _ => continue,
        };
        findings.push(Finding::new(
            kind,
            d.path.join(&p.folder),
            0,
            None,
            format!(
                "{}: {} partition {} is marked {}",
                p.folder,
                p.topic,
                p.partition,
                p.state.name()
            ),
        ));
    }
    findings
}

fn log_bytes(p: &Partition) -> anyhow::Result<u64> {
    let mut total = 0;
    for s in &p.segments {
        total += std::fs::metadata(&s.log)
            .with_context(|| format!("stat {}", s.log.display()))?
            .len();
    }
    Ok(total)
}

mod info_document;
pub use info_document::InfoReport;
