//! The summary of a broker's log directory: a compact, versioned document
//! that holds what `klog cluster` needs to compare replicas across brokers
//! without shipping their bytes.
//!
//! Per partition: the ends (log start, log end, high watermark, recovery
//! point), the `leader-epoch-checkpoint` as written and the leader-epoch
//! cache as the broker loads it, the segments with their sizes, and per run
//! of batches of one leader epoch a CRC-32C chained over the batches' own
//! checksums ([`EpochRun`]): two replicas holding the same batches under an
//! epoch have the same chain, so they are compared without their bytes. The
//! chain restarts at each epoch, so replicas whose retention deleted
//! different amounts of the log still compare on the epochs both keep.
//! The last batches (a short tail) carry the chain at each batch, which
//! places a divergence inside the newest epochs exactly.
//!
//! Read with a header-only walk (`Policy::HEADERS`: framing and headers,
//! no record decoded, ending at the first framing damage, where a broker's
//! recovery ends the log); with `check_crc` each batch's CRC is checked too
//! (`Policy::VALID_PREFIX`: ending at the first invalid batch, as recovery).
//!
//! The document's types serialize and deserialize: `klog cluster` reads
//! them back. `schema_version` is the major version; fields may be added
//! without changing it (readers ignore fields they do not know), anything
//! else changes it, and a reader refuses a major version it does not know.

use std::collections::{BTreeMap, VecDeque};
use std::path::Path;

use serde::{Deserialize, Serialize};

use super::epochs::EpochCache;
use crate::error::{Error, Result};
use crate::format::Entry;
use crate::log::checkpoint::{self, read_leader_epochs, read_offsets};
use crate::log::findings::{Finding, Kind, Severity};
use crate::log::meta::{read_meta_properties, read_partition_metadata, META_PROPERTIES};
use crate::log::{DataDir, Partition, Policy, Step};
use crate::metadata::{self, METADATA_TOPIC};
use crate::offsets::replay::BadRecord;
use crate::offsets::{OffsetsTopic, Replay, ReplayOptions};

/// The summary document's major version.
pub const SCHEMA_VERSION: u32 = 1;

/// `LogManager.CleanShutdownFileName`.
const CLEAN_SHUTDOWN: &str = ".kafka_cleanshutdown";

/// One run of `klog summary`: a summary per log directory given.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SummaryDoc {
    /// The envelope's `schema_version` (written by the report layer).
    #[serde(skip_serializing, default)]
    pub schema_version: u32,
    pub log_dirs: Vec<LogDirSummary>,
    /// What the summary met on the way (damage, malformed files, a folder
    /// that stops the broker from starting); read back by `cluster` and
    /// `report`, which show each broker's warnings and errors.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub findings: Vec<Finding>,
}

/// One log directory of one broker.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct LogDirSummary {
    /// The directory as given on the command line.
    pub path: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub path_base64: Option<String>,
    /// `node.id` (or `broker.id`) of `meta.properties`, or `--node-id`.
    pub node_id: Option<i32>,
    pub cluster_id: Option<String>,
    pub directory_id: Option<String>,
    /// `.kafka_cleanshutdown` is present (a broker would skip recovery).
    pub clean_shutdown: bool,
    /// The marker's broker epoch (`CleanShutdownFileHandler`): what the
    /// broker sends as its previous broker epoch when it registers again;
    /// the controller calls the shutdown clean only when it equals the
    /// epoch of the broker's registration (`ClusterControlManager`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub broker_epoch: Option<i64>,
    /// The `meta.properties` version: 0 in ZooKeeper mode, 1 in KRaft mode.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub meta_version: Option<i64>,
    /// Live partition folders, by topic and partition (`__cluster_metadata`
    /// is summarized as `metadata` instead).
    pub partitions: Vec<PartitionSummary>,
    /// The committed offsets of the offsets partitions here, as the group
    /// coordinator loads them.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub committed_offsets: Option<CommittedOffsets>,
    /// The cluster metadata image of `__cluster_metadata-0`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<MetadataSummary>,
}

/// One partition replica.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct PartitionSummary {
    pub topic: String,
    pub partition: i32,
    /// `partition.metadata`.
    pub topic_id: Option<String>,
    /// Kafka's log start (for a topic with tiered storage, below the first
    /// local segment: [`crate::tiered::log_starts`]).
    pub log_start_offset: i64,
    /// Where the local copy starts (absent in summaries of klog before
    /// tiered storage: the log start).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub local_log_start_offset: Option<i64>,
    pub log_end_offset: i64,
    /// `replication-offset-checkpoint`, as written.
    pub high_watermark: Option<i64>,
    /// `recovery-point-offset-checkpoint`, as written.
    pub recovery_point: Option<i64>,
    /// `cleaner-offset-checkpoint` (the first offset the log cleaner has
    /// not compacted), as written: below it the batches are this replica's
    /// own compaction, which differs from other replicas'.
    #[serde(default)]
    pub cleaner_offset: Option<i64>,
    /// `leader-epoch-checkpoint`, as written (absent: none, or malformed).
    pub leader_epoch_checkpoint: Option<Vec<EpochEntry>>,
    /// The leader-epoch cache as the broker loads it: the checkpoint, plus
    /// the epochs recovery finds in batches after an unclean shutdown, cut
    /// to the log's ends (`LogLoader`).
    pub leader_epochs: Vec<EpochEntry>,
    pub segments: Vec<SegmentSummary>,
    /// Runs of consecutive batches of one leader epoch, in log order.
    pub epochs: Vec<EpochRun>,
    /// The last batches, oldest first.
    pub tail: Vec<TailBatch>,
    /// Where the walk stopped at damage, if it did.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub damage: Option<String>,
}

/// An entry of a leader-epoch cache or checkpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EpochEntry {
    pub leader_epoch: i32,
    pub start_offset: i64,
}

/// A segment and its `.log` size.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct SegmentSummary {
    pub base_offset: i64,
    pub bytes: u64,
}

/// Consecutive batches stamped with one partition leader epoch (legacy
/// messages, which carry none, count as epoch -1; a batch stamped below
/// the epoch of the batches before it counts in their run).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct EpochRun {
    pub leader_epoch: i32,
    /// The first batch's base offset.
    pub start_offset: i64,
    /// One past the last batch's last offset.
    pub end_offset: i64,
    pub batches: u64,
    /// Records by the batch headers (a legacy message counts one).
    pub records: u64,
    pub bytes: u64,
    /// The chain over the run's batches (see [`chain`]).
    pub crc32c: u32,
}

/// One of the last batches, with the chain of its run through it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TailBatch {
    pub base_offset: i64,
    /// One past its last offset.
    pub end_offset: i64,
    /// Its run's epoch.
    pub leader_epoch: i32,
    /// The run's chain up to and including this batch.
    pub crc32c: u32,
}

/// The committed-offset table of the offsets partitions of a directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommittedOffsets {
    /// `__consumer_offsets` (or klog's `__offsets`).
    pub offsets_topic: String,
    pub offsets: Vec<CommittedOffset>,
}

/// One live committed offset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct CommittedOffset {
    /// The offsets partition holding it.
    pub offsets_partition: i32,
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub committed_offset: i64,
    pub leader_epoch: i32,
    pub commit_timestamp_ms: i64,
}

/// The parts of the KRaft metadata image `klog cluster` uses.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct MetadataSummary {
    /// The offset after the last record applied: the more advanced of two images is the later one.
    pub next_offset: i64,
    /// The snapshot the replay started from.
    pub snapshot_offset: Option<i64>,
    pub brokers: Vec<BrokerSummary>,
    /// By topic name.
    pub topics: Vec<TopicSummary>,
    /// KIP-966's eligible leader replicas are on
    /// (`eligible.leader.replicas.version` ≥ 1,
    /// `FeatureControlManager.isElrFeatureEnabled`): a broker that
    /// registers after an unclean shutdown leaves every ISR and ELR first.
    #[serde(default)]
    pub elr_enabled: bool,
    /// The parts of the image klog could not build in full (a record newer
    /// than klog or unreadable: see the findings); brokers and topics may
    /// be missing there.
    #[serde(default)]
    pub incomplete: Vec<crate::metadata::image::Section>,
}

/// A registered broker.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct BrokerSummary {
    pub node_id: i32,
    pub rack: Option<String>,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    /// The epoch of its registration (`RegisterBrokerRecord.brokerEpoch`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub epoch: Option<i64>,
}

/// A topic and its partitions' registrations.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct TopicSummary {
    pub topic: String,
    pub topic_id: String,
    pub partitions: Vec<AssignedPartition>,
    /// `unclean.leader.election.enable` as the metadata sets it: the
    /// topic's config, else the cluster's default
    /// (`ConfigurationControlManager.uncleanLeaderElectionEnabledForTopic`);
    /// `None` when neither sets it, and the controller's own configuration
    /// (false unless its server.properties says otherwise) decides.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unclean_leader_election: Option<bool>,
}

/// A partition's registration (`PartitionRegistration`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
pub struct AssignedPartition {
    pub partition: i32,
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    /// -1: no leader.
    pub leader: i32,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    /// KIP-966: replicas that may lead although out of the (empty) ISR.
    #[serde(default)]
    pub eligible_leader_replicas: Vec<i32>,
    #[serde(default)]
    pub last_known_elr: Vec<i32>,
}

impl AssignedPartition {
    /// Partition `partition`'s registration in a metadata image.
    pub fn of(partition: i32, r: &crate::metadata::image::PartitionReg) -> Self {
        AssignedPartition {
            partition,
            replicas: r.replicas.to_vec(),
            isr: r.isr.to_vec(),
            leader: r.leader,
            leader_epoch: r.leader_epoch,
            partition_epoch: r.partition_epoch,
            eligible_leader_replicas: r.eligible_leader_replicas.to_vec(),
            last_known_elr: r.last_known_elr.to_vec(),
        }
    }
}

impl LogDirSummary {
    /// How the broker left the directory, as far as its summary says (see
    /// [`crate::log::shutdown`]): the marker, else a broker's directory
    /// (`meta.properties` named a cluster or a directory id) went down
    /// uncleanly; a directory with neither is not a broker's.
    pub fn shutdown_state(&self) -> crate::log::shutdown::ShutdownState {
        use crate::log::shutdown::ShutdownState;
        if self.clean_shutdown {
            ShutdownState::Clean
        } else if self.cluster_id.is_some() || self.directory_id.is_some() {
            ShutdownState::Unclean
        } else {
            ShutdownState::NotABroker
        }
    }

    /// `node 3: UNCLEAN shutdown (…)`, the line `summary` and `cluster` put first.
    pub fn shutdown_line(&self) -> String {
        use crate::log::shutdown::ShutdownState;
        let who = self
            .node_id
            .map_or("this directory".to_string(), |n| format!("node {n}"));
        match self.shutdown_state() {
            ShutdownState::Clean => format!(
                "{who}: clean shutdown (.kafka_cleanshutdown): a restart trusts its partitions' files"
            ),
            ShutdownState::Unclean => format!(
                "{who}: UNCLEAN shutdown (no .kafka_cleanshutdown: the broker was killed, crashed or lost power): \
                 a restart recovers each partition from its recovery point"
            ),
            state => format!("{who}: {}", state.name()),
        }
    }
}

/// Options of [`summarize`].
#[derive(Debug, Clone, Copy)]
pub struct SummaryOptions {
    /// The node id when `meta.properties` has none (or to override it).
    pub node_id: Option<i32>,
    /// Check every batch's CRC (the walk ends at the first invalid one).
    pub check_crc: bool,
    /// How many of the last batches to list per partition.
    pub tail_batches: usize,
    /// Committed offsets' names bounded for display (a page's summary, not
    /// a document: [`ReplayOptions::bounded_names`]).
    pub bounded_names: bool,
}

impl Default for SummaryOptions {
    fn default() -> Self {
        SummaryOptions {
            node_id: None,
            check_crc: false,
            tail_batches: 16,
            bounded_names: false,
        }
    }
}

/// The chain of a run: CRC-32C, from 0 at the run's first batch, over each
/// batch's base offset (int64) and stored CRC (uint32), big-endian. The
/// stored CRC covers everything of a v2 batch but its base offset, length,
/// leader epoch and magic (a legacy message's, its magic onwards); the run
/// fixes the epoch and the base offset is added.
pub fn chain(crc: u32, base_offset: i64, batch_crc: u32) -> u32 {
    let mut bytes = [0u8; 12];
    let (offset, stored) = bytes.split_at_mut(8);
    offset.copy_from_slice(&base_offset.to_be_bytes());
    stored.copy_from_slice(&batch_crc.to_be_bytes());
    crate::format::crc::crc32c_append(crc, &bytes)
}

/// A malformed file is a finding of `kind` at `severity` (and `None`); any
/// other error ends the summary.
fn or_finding<T>(
    r: Result<Option<T>>,
    kind: Kind,
    severity: Severity,
    findings: &mut Vec<Finding>,
) -> Result<Option<T>> {
    match r {
        Err(Error::Layout { path, reason }) => {
            findings.push(Finding::new(kind, path, 0, None, reason).with_severity(severity));
            Ok(None)
        }
        r => r,
    }
}

/// A directory-level checkpoint; a malformed one is a finding (an error for
/// the replication-offset checkpoint, which fails the log directory; a
/// warning for the others, which `LogManager` resets).
fn dir_checkpoint(
    dir: &Path,
    name: &str,
    findings: &mut Vec<Finding>,
) -> Result<BTreeMap<(String, i32), i64>> {
    let severity = if name == checkpoint::REPLICATION_OFFSET {
        Severity::Error
    } else {
        Severity::Warning
    };
    Ok(or_finding(
        read_offsets(&dir.join(name)),
        Kind::CheckpointMalformed,
        severity,
        findings,
    )?
    .unwrap_or_default())
}

/// The directory's checkpoints, by partition.
struct DirState {
    high_watermarks: BTreeMap<(String, i32), i64>,
    log_starts: BTreeMap<(String, i32), i64>,
    recovery_points: BTreeMap<(String, i32), i64>,
    cleaner_offsets: BTreeMap<(String, i32), i64>,
    clean_shutdown: bool,
    /// What is known of tiered storage (the directory's own remote log metadata and metadata).
    tiering: crate::tiered::Tiering,
}

/// Summarize the log directory at `path`; findings are what it met on the way.
pub fn summarize(path: &Path, opts: &SummaryOptions) -> Result<(LogDirSummary, Vec<Finding>)> {
    let dir = match DataDir::open(path) {
        // A formatted log directory with no partition yet (a replaced
        // disk): summarized, so that `cluster` sees the node hold nothing.
        Err(Error::Layout { .. }) if path.is_dir() && path.join(META_PROPERTIES).is_file() => {
            DataDir {
                path: path.to_path_buf(),
                partitions: Vec::new(),
                other_dirs: Vec::new(),
            }
        }
        r => r?,
    };
    let mut findings = dir.foreign_folder_findings();
    let meta = or_finding(
        read_meta_properties(&path.join(META_PROPERTIES)),
        Kind::MetaPropertiesMalformed,
        Severity::Error,
        &mut findings,
    )?;
    let state = DirState {
        high_watermarks: dir_checkpoint(path, checkpoint::REPLICATION_OFFSET, &mut findings)?,
        log_starts: dir_checkpoint(path, checkpoint::LOG_START_OFFSET, &mut findings)?,
        recovery_points: dir_checkpoint(path, checkpoint::RECOVERY_POINT, &mut findings)?,
        cleaner_offsets: dir_checkpoint(path, checkpoint::CLEANER_OFFSET, &mut findings)?,
        clean_shutdown: path.join(CLEAN_SHUTDOWN).exists(),
        tiering: crate::tiered::Tiering::for_dirs(std::slice::from_ref(&dir))?,
    };
    let mut partitions = Vec::new();
    for p in dir.live().filter(|p| p.topic != METADATA_TOPIC) {
        partitions.push(summarize_partition(p, &state, opts, &mut findings)?);
    }
    let committed_offsets = committed_offsets(&dir, opts.bounded_names, &mut findings)?;
    let metadata = match metadata::metadata_folder(path) {
        None => None,
        Some(folder) => metadata_summary(&folder, &mut findings)?,
    };
    let summary = LogDirSummary {
        path: path.display().to_string(),
        path_base64: crate::log::findings::path_base64(path),
        node_id: opts.node_id.or(meta.as_ref().and_then(|m| m.node_id)),
        cluster_id: meta.as_ref().and_then(|m| m.cluster_id.clone()),
        directory_id: meta
            .as_ref()
            .and_then(|m| m.directory_id)
            .map(|d| d.to_string()),
        clean_shutdown: state.clean_shutdown,
        broker_epoch: crate::log::shutdown::Shutdown::read(path).broker_epoch,
        meta_version: meta.as_ref().map(|m| i64::from(m.version)),
        partitions,
        committed_offsets,
        metadata,
    };
    Ok((summary, findings))
}

fn summarize_partition(
    p: &Partition,
    state: &DirState,
    opts: &SummaryOptions,
    findings: &mut Vec<Finding>,
) -> Result<PartitionSummary> {
    let key = (p.topic.clone(), p.partition);
    let segments = segment_sizes(p)?;
    let checkpointed = or_finding(
        read_leader_epochs(&p.dir.join(checkpoint::LEADER_EPOCH)),
        Kind::CheckpointMalformed,
        Severity::Error,
        findings,
    )?
    .map(|entries| {
        entries
            .into_iter()
            .map(|(leader_epoch, start_offset)| EpochEntry {
                leader_epoch,
                start_offset,
            })
            .collect::<Vec<_>>()
    });
    let topic_id = or_finding(
        read_partition_metadata(&p.dir.join(crate::log::meta::PARTITION_METADATA)),
        Kind::PartitionMetadataMalformed,
        Severity::Error,
        findings,
    )?
    .map(|m| m.topic_id.to_string());
    // The leader-epoch cache as `LogLoader` leaves it: the checkpoint's
    // entries assigned in order; after an unclean shutdown, each batch from
    // the segment holding the recovery point on whose epoch is above the
    // latest (`LogSegment.recover`); then `truncateFromEnd(log end)` and
    // `truncateFromStart(log-start-offset checkpoint, 0 when absent)`.
    let mut cache = EpochCache::from_entries(
        checkpointed
            .iter()
            .flatten()
            .map(|e| (e.leader_epoch, e.start_offset)),
    );
    let recovery_point = state.recovery_points.get(&key).copied();
    // Recovery (after an unclean shutdown) reads from the segment holding
    // the recovery point (`LogSegments.values(recoveryPoint, ...)`).
    let recover_from = (!state.clean_shutdown).then(|| {
        let rp = recovery_point.unwrap_or(0);
        p.segments
            .iter()
            .rev()
            .find(|s| s.base_offset <= rp)
            .map_or(i64::MIN, |s| s.base_offset)
    });
    let pass = EpochPass::over(p, opts, recover_from, &mut cache, findings)?;
    // No batch: an empty log ends at its last segment's base offset; a log
    // damaged before its first batch ends where recovery would cut it.
    let log_end = pass.log_end.unwrap_or_else(|| {
        let seg = if pass.damage.is_some() {
            p.segments.first()
        } else {
            p.segments.last()
        };
        seg.map_or(0, |s| s.base_offset)
    });
    let log_start_checkpoint = state.log_starts.get(&key).copied();
    cache.truncate_from_end(log_end);
    cache.truncate_from_start(log_start_checkpoint.unwrap_or(0));
    let starts = state.tiering.log_starts(p, log_start_checkpoint);
    Ok(PartitionSummary {
        topic: p.topic.clone(),
        partition: p.partition,
        topic_id,
        log_start_offset: starts.log_start,
        local_log_start_offset: Some(starts.local_log_start),
        log_end_offset: log_end,
        high_watermark: state.high_watermarks.get(&key).copied(),
        recovery_point,
        cleaner_offset: state.cleaner_offsets.get(&key).copied(),
        leader_epoch_checkpoint: checkpointed,
        leader_epochs: cache
            .entries()
            .into_iter()
            .map(|(leader_epoch, start_offset)| EpochEntry {
                leader_epoch,
                start_offset,
            })
            .collect(),
        segments,
        epochs: pass.runs,
        tail: pass.tail.into(),
        damage: pass.damage,
    })
}

/// Each segment's base offset and size.
fn segment_sizes(p: &Partition) -> Result<Vec<SegmentSummary>> {
    let mut segments = Vec::with_capacity(p.segments.len());
    for s in &p.segments {
        let len = std::fs::metadata(&s.log)
            .map_err(|e| Error::io(&s.log, "stat", e))?
            .len();
        segments.push(SegmentSummary {
            base_offset: s.base_offset,
            bytes: len,
        });
    }
    Ok(segments)
}

/// One pass over a partition's batches: its epoch runs, its last batches,
/// where it ends and what damage stopped it first.
struct EpochPass {
    runs: Vec<EpochRun>,
    tail: VecDeque<TailBatch>,
    tail_batches: usize,
    log_end: Option<i64>,
    damage: Option<String>,
}

impl EpochPass {
    /// The pass over `p` (every batch's CRC checked when `opts` says so);
    /// after an unclean shutdown (`recover_from`: the segment holding the
    /// recovery point), each batch from there with a newer epoch is
    /// assigned in `cache`, as `LogSegment.recover` does.
    fn over(
        p: &Partition,
        opts: &SummaryOptions,
        recover_from: Option<i64>,
        cache: &mut EpochCache,
        findings: &mut Vec<Finding>,
    ) -> Result<EpochPass> {
        let policy = if opts.check_crc {
            Policy::VALID_PREFIX
        } else {
            Policy::HEADERS
        };
        let mut pass = EpochPass {
            runs: Vec::new(),
            tail: VecDeque::with_capacity(opts.tail_batches + 1),
            tail_batches: opts.tail_batches,
            log_end: None,
            damage: None,
        };
        let mut walk = p.walk(policy);
        while let Some(step) = walk.next_step()? {
            let w = match step {
                Step::Entry(w) => w,
                Step::Damage(d) => {
                    let f = d.finding();
                    pass.damage.get_or_insert_with(|| f.to_string());
                    findings.push(f);
                    continue;
                }
                Step::SegmentStart { .. } | Step::SegmentEnd { .. } => continue,
            };
            let base = w.entry.base_offset();
            let bytes = w.entry.size();
            let (epoch, crc, records) = match w.entry {
                Entry::V2(b) => {
                    let epoch = b.header.partition_leader_epoch;
                    let recovering = recover_from.is_some_and(|from| base >= from);
                    if recovering && epoch >= 0 && cache.latest_epoch().is_none_or(|l| epoch > l) {
                        cache.assign(epoch, base);
                    }
                    (epoch, b.header.crc, b.header.records_count.max(0) as u64)
                }
                Entry::Legacy(l) => (super::epochs::UNDEFINED_EPOCH, l.crc, 1),
            };
            pass.add(base, w.next_offset, epoch, crc, records, bytes)?;
        }
        Ok(pass)
    }

    /// A batch of offsets `base..next` stamped `epoch`, its CRC, record
    /// count and size. A new run starts where the epoch goes up; a batch
    /// stamped below its run's epoch (no broker writes one) counts in that
    /// run, so runs never outnumber the batches nor need more memory than
    /// them.
    fn add(
        &mut self,
        base: i64,
        next: i64,
        epoch: i32,
        crc: u32,
        records: u64,
        bytes: u64,
    ) -> Result<()> {
        let run = match self.runs.last_mut() {
            Some(r) if r.leader_epoch >= epoch => r,
            _ => {
                self.runs.push(EpochRun {
                    leader_epoch: epoch,
                    start_offset: base,
                    end_offset: base,
                    batches: 0,
                    records: 0,
                    bytes: 0,
                    crc32c: 0,
                });
                self.runs
                    .last_mut()
                    .ok_or_else(|| Error::Invalid("run".into()))?
            }
        };
        run.crc32c = chain(run.crc32c, base, crc);
        run.end_offset = next;
        run.batches += 1;
        run.records = run.records.saturating_add(records);
        run.bytes = run.bytes.saturating_add(bytes);
        if self.tail_batches > 0 {
            if self.tail.len() == self.tail_batches {
                self.tail.pop_front();
            }
            self.tail.push_back(TailBatch {
                base_offset: base,
                end_offset: next,
                leader_epoch: run.leader_epoch,
                crc32c: run.crc32c,
            });
        }
        self.log_end = Some(next);
        Ok(())
    }
}

/// The committed offsets of the offsets partitions in `dir`, replayed as
/// the coordinator loads them; records that do not decode are findings.
fn committed_offsets(
    dir: &DataDir,
    bounded_names: bool,
    findings: &mut Vec<Finding>,
) -> Result<Option<CommittedOffsets>> {
    let Some(topic) = OffsetsTopic::find(std::slice::from_ref(dir)) else {
        return Ok(None);
    };
    let mut replay = Replay::new(ReplayOptions {
        bounded_names,
        ..ReplayOptions::default()
    });
    for p in &topic.partitions {
        replay.replay_partition(p)?;
    }
    findings.extend(replay.bad.iter().map(BadRecord::finding));
    findings.extend(replay.warnings.iter().cloned());
    let offsets = replay
        .commits()
        .map(|(group, topic, partition, c)| CommittedOffset {
            offsets_partition: c.log_partition,
            group: group.to_string(),
            topic: topic.to_string(),
            partition,
            committed_offset: c.offset,
            leader_epoch: c.leader_epoch,
            commit_timestamp_ms: c.commit_timestamp,
        })
        .collect();
    Ok(Some(CommittedOffsets {
        offsets_topic: topic.name.to_string(),
        offsets,
    }))
}

/// The image of the metadata log in `folder`; one that cannot be replayed is a finding.
fn metadata_summary(folder: &Path, findings: &mut Vec<Finding>) -> Result<Option<MetadataSummary>> {
    let replayed = match metadata::replay(folder, None) {
        Ok(r) => r,
        Err(Error::Layout { path, reason }) => {
            findings.push(Finding::new(
                Kind::MetadataUnreadable,
                path,
                0,
                None,
                reason,
            ));
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    // What the replay could not read or apply, damage included.
    findings.extend(replayed.findings.iter().cloned());
    let image = &replayed.image;
    let brokers = image
        .brokers
        .values()
        .map(|b| BrokerSummary {
            node_id: b.id,
            rack: b.rack.clone(),
            fenced: b.fenced,
            in_controlled_shutdown: b.in_controlled_shutdown,
            epoch: Some(b.epoch),
        })
        .collect();
    let mut topics: Vec<TopicSummary> = image
        .topics
        .values()
        .map(|t| TopicSummary {
            topic: t.name.clone(),
            topic_id: t.id.to_string(),
            partitions: t
                .partitions
                .iter()
                .map(|(&partition, r)| AssignedPartition::of(partition, r))
                .collect(),
            unclean_leader_election: unclean_leader_election(image, &t.name),
        })
        .collect();
    topics.sort_by(|a, b| (&a.topic, &a.topic_id).cmp(&(&b.topic, &b.topic_id)));
    Ok(Some(MetadataSummary {
        next_offset: replayed.next_offset,
        snapshot_offset: replayed.snapshot.as_ref().map(|s| s.1),
        incomplete: replayed.incomplete(),
        brokers,
        topics,
        elr_enabled: elr_enabled(image),
    }))
}

/// KIP-966's eligible leader replicas are on in `image`
/// (`FeatureControlManager.isElrFeatureEnabled`).
pub fn elr_enabled(image: &crate::metadata::image::Image) -> bool {
    image
        .features
        .get("eligible.leader.replicas.version")
        .is_some_and(|&v| v >= 1)
}

/// `unclean.leader.election.enable` of `topic` as the metadata sets it:
/// the topic's ConfigRecord, else the cluster default's (the broker
/// resource with an empty name).
pub fn unclean_leader_election(image: &crate::metadata::image::Image, topic: &str) -> Option<bool> {
    const KEY: &str = "unclean.leader.election.enable";
    const TOPIC: i8 = 2;
    const BROKER: i8 = 4;
    [(TOPIC, topic), (BROKER, "")]
        .iter()
        .find_map(|(kind, name)| image.configs.get(&(*kind, name.to_string()))?.get(KEY))
        .map(|v| v.eq_ignore_ascii_case("true"))
}
