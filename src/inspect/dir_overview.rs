//! A data directory's overview, from its files alone, as `klog info`
//! shows it: its `meta.properties`, checkpoint files, every partition
//! folder's segments and offsets, quorum-state and the replayed KRaft
//! metadata, with the findings in the order a broker meets them.
//!
//! The severity of a malformed file is what a broker does with it: it
//! resets an unreadable recovery-point, log-start or cleaner-offset
//! checkpoint (a warning), and fails a log directory whose meta.properties,
//! replication-offset or leader-epoch checkpoint, or a partition whose
//! partition.metadata, does not parse (an error). A log's end is checked
//! against its checkpointed start and high watermark as `LogLoader` and
//! `UnifiedLog` load it ([`inspect`]); every directory's folders are
//! checked against the metadata ([`check_against_metadata`]).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use crate::log::checkpoint::{self, DIR_CHECKPOINTS};
use crate::log::findings::{Finding, Kind, Severity};
use crate::log::meta::{self, MetaProperties, PartitionMetadata};
use crate::log::{DataDir, Partition, PartitionState};
use crate::{Error, Result};

/// A file that may be absent, fine, or malformed (reported already).
pub enum Loaded<T> {
    /// The file is not there.
    Absent,
    /// The file does not parse (a finding says why).
    Malformed,
    /// The file as read.
    Found(T),
}

impl<T> Loaded<T> {
    /// The value, when the file was read.
    pub fn ok(&self) -> Option<&T> {
        match self {
            Loaded::Found(v) => Some(v),
            _ => None,
        }
    }
}

/// A read's result; a malformed file becomes a finding of `kind` (at
/// `severity`), any other error (I/O) is returned.
fn load<T>(
    findings: &mut Vec<Finding>,
    (kind, severity): (Kind, Severity),
    r: Result<Option<T>>,
) -> Result<Loaded<T>> {
    match r {
        Ok(None) => Ok(Loaded::Absent),
        Ok(Some(v)) => Ok(Loaded::Found(v)),
        Err(Error::Layout { path, reason }) => {
            findings.push(Finding::new(kind, path, 0, None, reason).with_severity(severity));
            Ok(Loaded::Malformed)
        }
        Err(e) => Err(e),
    }
}

/// The finding a malformed checkpoint file is (see the module docs).
fn checkpoint_finding(name: &str) -> (Kind, Severity) {
    let severity = match name {
        checkpoint::REPLICATION_OFFSET | checkpoint::LEADER_EPOCH => Severity::Error,
        _ => Severity::Warning,
    };
    (Kind::CheckpointMalformed, severity)
}

type Offsets = BTreeMap<(String, i32), i64>;

/// The replayed KRaft metadata, in brief, and its image.
pub struct MetadataSummary {
    pub snapshot: Option<i64>,
    pub next_offset: i64,
    pub topics: usize,
    pub brokers: usize,
    /// The parts of the image klog could not build in full.
    pub incomplete: Vec<crate::metadata::image::Section>,
    /// node.id of the directory's meta.properties (version 1).
    pub node: Option<i32>,
    pub image: crate::metadata::Image,
}

/// One partition folder of a data directory.
pub struct PartitionInfo {
    /// The folder's name.
    pub folder: String,
    pub topic: String,
    pub partition: i32,
    pub state: PartitionState,
    /// None for folders that are not read (-delete, -future, -stray).
    pub live: Option<LiveInfo>,
}

/// What a live partition folder holds: its segments, bytes and offsets
/// (from its files and the directory's checkpoints), its
/// leader-epoch-checkpoint and partition.metadata.
pub struct LiveInfo {
    pub segments: usize,
    pub bytes: u64,
    pub log_start: i64,
    pub local_log_start: i64,
    /// The partition's remote storage, when its topic has tiered storage.
    pub tiered: Option<crate::tiered::Tiered>,
    pub log_end: i64,
    pub high_watermark: Option<i64>,
    pub recovery_point: Option<i64>,
    pub cleaner_offset: Option<i64>,
    pub leader_epochs: Option<Vec<(i32, i64)>>,
    pub topic_id: Option<PartitionMetadata>,
}

/// One data directory as `klog info` shows it.
pub struct DirInfo {
    pub path: PathBuf,
    pub quorum: Loaded<crate::metadata::QuorumState>,
    /// The replayed metadata, when the directory holds a metadata log.
    pub metadata: Option<MetadataSummary>,
    pub findings: Vec<Finding>,
    pub meta: Loaded<MetaProperties>,
    pub checkpoints: Vec<&'static str>,
    pub partitions: Vec<PartitionInfo>,
}

/// The live partition folders of every directory given (a broker's
/// partitions may sit in any of its log directories).
pub fn live_partitions(dirs: &[DataDir]) -> BTreeSet<(String, i32)> {
    dirs.iter()
        .flat_map(|d| &d.partitions)
        .filter(|p| p.state == PartitionState::Live)
        .map(|p| (p.topic.clone(), p.partition))
        .collect()
}

/// The disk against the metadata: the first directory holding a metadata
/// log speaks for the broker (its `metadata.log.dir`); every directory's
/// folders are checked against it (`live`: [`live_partitions`]), the
/// findings going before the -delete and -stray folders', as a broker
/// would find them.
pub fn check_against_metadata(infos: &mut [DirInfo], live: &BTreeSet<(String, i32)>) {
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
                        f.extend(assigned_missing(&i.path, &m.image, node, live));
                    }
                }
                f.extend(topic_id_findings(&i.path, &m.image, &i.partitions));
                f
            })
            .collect(),
    };
    for (info, found) in infos.iter_mut().zip(checks) {
        let at = info
            .findings
            .iter()
            .position(|f| matches!(f.kind, Kind::DeleteFolder | Kind::StrayFolder))
            .unwrap_or(info.findings.len());
        info.findings.splice(at..at, found);
    }
}

/// `dir`, the directory holding the metadata.
fn assigned_missing(
    dir: &Path,
    image: &crate::metadata::Image,
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
    image: &crate::metadata::Image,
    partitions: &[PartitionInfo],
) -> Vec<Finding> {
    let mut out = Vec::new();
    for p in partitions {
        let Some(id) = p.live.as_ref().and_then(|l| l.topic_id).map(|m| m.topic_id) else {
            continue;
        };
        if p.topic == crate::metadata::METADATA_TOPIC {
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
pub fn inspect(d: &DataDir, tiering: &crate::tiered::Tiering) -> Result<DirInfo> {
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
    let folder = d.path.join(crate::metadata::METADATA_FOLDER);
    let quorum = load(
        &mut findings,
        (Kind::QuorumStateMalformed, Severity::Error),
        crate::metadata::read_quorum_state(&folder),
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
) -> Result<(Vec<&'static str>, BTreeMap<&'static str, Offsets>)> {
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
    tiering: &crate::tiered::Tiering,
    problems: &mut Vec<Finding>,
) -> Result<PartitionInfo> {
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
fn snapshot_findings(d: &DataDir, folder: &Path) -> Result<Vec<Finding>> {
    let mut snapshot_files: Vec<PathBuf> = if folder.is_dir() {
        crate::metadata::snapshots(folder)?
            .into_iter()
            .map(|(_, _, p)| p)
            .collect()
    } else {
        Vec::new()
    };
    let bootstrap = d.path.join(crate::metadata::BOOTSTRAP_FILE);
    if bootstrap.is_file() {
        snapshot_files.push(bootstrap);
    }
    let mut findings = Vec::new();
    for f in &snapshot_files {
        findings.extend(crate::metadata::check_snapshot(f)?);
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
    match crate::metadata::replay(folder, None) {
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

/// The sum of the partition's `.log` files.
fn log_bytes(p: &Partition) -> Result<u64> {
    let mut total = 0;
    for s in &p.segments {
        total += std::fs::metadata(&s.log)
            .map_err(|e| Error::io(&s.log, "stat", e))?
            .len();
    }
    Ok(total)
}
