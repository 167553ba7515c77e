//! The merged verdict `klog cluster` reports: per partition, per replica,
//! per group's committed offset, and the counts.

use serde::Serialize;

/// Where a partition's leader comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LeaderSource {
    /// The metadata image names it, and its summary holds the partition.
    Metadata,
    /// Chosen from the replicas found (see the module docs).
    Chosen,
    /// The metadata names no leader and several replicas are eligible
    /// (ISR, or ELR when the ISR is empty): the controller elects the first
    /// of them to come back unfenced (`PartitionChangeBuilder.electAnyLeader`,
    /// `isAcceptableLeader`), which depends on the order the brokers restart.
    /// The verdict is judged against the first in assignment order; the
    /// partition's `outcomes` give every eligible leader's.
    Undecided,
    /// No replica found.
    None,
}

/// A partition's verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum PartitionStatus {
    Ok,
    UnderReplicated,
    Diverged,
    /// Replicas were found, but none the controller may elect: the
    /// partition has no leader until one that may comes back.
    Offline,
    Lost,
}

impl PartitionStatus {
    pub fn name(self) -> &'static str {
        match self {
            PartitionStatus::Ok => "ok",
            PartitionStatus::UnderReplicated => "under_replicated",
            PartitionStatus::Diverged => "diverged",
            PartitionStatus::Offline => "offline",
            PartitionStatus::Lost => "lost",
        }
    }
}

/// A replica's state against the leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum ReplicaState {
    Leader,
    InSync,
    /// A prefix of the leader's log, shorter.
    Behind,
    /// Holds batches Kafka's truncation cuts, or that differ from the leader's.
    Diverged,
    /// Assigned by the metadata, in no summary.
    Missing,
}

impl ReplicaState {
    pub fn name(self) -> &'static str {
        match self {
            ReplicaState::Leader => "leader",
            ReplicaState::InSync => "in_sync",
            ReplicaState::Behind => "behind",
            ReplicaState::Diverged => "diverged",
            ReplicaState::Missing => "missing",
        }
    }
}

/// One replica of a partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ReplicaVerdict {
    pub node_id: i32,
    pub state: ReplicaState,
    /// Whether the metadata assigns the partition to this node (none without metadata).
    pub assigned: Option<bool>,
    /// The summary file holding it.
    pub summary: Option<String>,
    pub log_start_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub high_watermark: Option<i64>,
    pub leader_epoch: Option<i32>,
    /// Where Kafka's truncation leaves its log end (followers).
    pub truncation_offset: Option<i64>,
    /// The first offset whose batch differs from the leader's: the
    /// truncation offset, or lower where the checksums disagree below it.
    pub divergence_offset: Option<i64>,
    /// Its batches at and after the divergence offset.
    pub batches_beyond: Option<u64>,
    /// False when the divergence falls inside a run of batches older than
    /// the summary's tail: `batches_beyond` is then a lower bound.
    pub batches_beyond_exact: Option<bool>,
    /// Offsets it lacks to reach the leader's log end (after truncation).
    pub behind_by: Option<i64>,
    /// The checksums agree with the leader's from its first batch up to here.
    pub verified_through: Option<i64>,
    pub detail: String,
    /// The records its truncation cuts, read from its log directory when
    /// `cluster` was given the directory (see `merge::lost`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lost: Option<super::lost::LostRecords>,
}

impl ReplicaVerdict {
    /// A replica of `node` in `state`, nothing else known yet.
    pub(super) fn new(node_id: i32, state: ReplicaState) -> Self {
        ReplicaVerdict {
            node_id,
            state,
            assigned: None,
            summary: None,
            log_start_offset: None,
            log_end_offset: None,
            high_watermark: None,
            leader_epoch: None,
            truncation_offset: None,
            divergence_offset: None,
            batches_beyond: None,
            batches_beyond_exact: None,
            behind_by: None,
            verified_through: None,
            detail: String::new(),
            lost: None,
        }
    }
}

/// One partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PartitionVerdict {
    pub topic: String,
    pub partition: i32,
    pub status: PartitionStatus,
    /// The metadata's replicas and ISR (none without metadata).
    pub assigned_replicas: Option<Vec<i32>>,
    pub isr: Option<Vec<i32>>,
    pub leader: Option<i32>,
    pub leader_source: LeaderSource,
    /// The metadata's leader epoch.
    pub leader_epoch: Option<i32>,
    /// The leader's.
    pub log_end_offset: Option<i64>,
    pub high_watermark: Option<i64>,
    pub replicas: Vec<ReplicaVerdict>,
    /// With `leader_source` undecided: the outcome under each eligible
    /// leader, in assignment order (the status above is the worst of them).
    pub outcomes: Vec<LeaderOutcome>,
    pub detail: String,
}

/// What a partition looks like if `leader` is elected.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LeaderOutcome {
    pub leader: i32,
    pub status: PartitionStatus,
    pub replicas: Vec<ReplicaVerdict>,
}

/// How a committed offset relates to its partition's leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum LagStatus {
    Ok,
    /// Below the leader's log start: the consumer will reset.
    BelowLogStart,
    /// Above the leader's log end: the log was truncated under the group.
    AboveLogEnd,
    /// Between the leader's high watermark and its log end: records not
    /// known to be replicated, which a restart can truncate (as `klog lag`
    /// says it, `inspect::consumer_lag`).
    AboveHighWatermark,
    /// A negative committed offset: none to Kafka's clients.
    NoCommittedOffset,
    /// Every replica of the partition is missing.
    PartitionLost,
    /// Neither the metadata nor any summary knows the partition.
    NoPartition,
}

impl LagStatus {
    pub fn name(self) -> &'static str {
        match self {
            LagStatus::Ok => "ok",
            LagStatus::BelowLogStart => "below_log_start",
            LagStatus::AboveLogEnd => "above_log_end",
            LagStatus::AboveHighWatermark => "above_high_watermark",
            LagStatus::NoCommittedOffset => "no_committed_offset",
            LagStatus::PartitionLost => "partition_lost",
            LagStatus::NoPartition => "no_partition",
        }
    }
}

/// A group's lag on one partition, across brokers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GroupLag {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub committed_offset: i64,
    pub commit_timestamp_ms: i64,
    /// The offsets partition holding the group, and its leader (the coordinator).
    pub offsets_partition: i32,
    pub coordinator: i32,
    /// The leader of the partition read, whose ends count.
    pub leader: Option<i32>,
    pub log_start_offset: Option<i64>,
    pub log_end_offset: Option<i64>,
    pub high_watermark: Option<i64>,
    /// (high watermark, else log end) − committed offset.
    pub lag: Option<i64>,
    pub status: LagStatus,
    /// The leader epoch the commit carries (OffsetCommitValue v3 on; -1:
    /// none).
    pub committed_leader_epoch: i32,
    /// Where the group's consumer lands when it resumes on this leader
    /// (`None` with no leader).
    pub lands: Option<Landing>,
    /// When the partition's leader after a restart is open (its
    /// `outcomes`), where the consumer lands under each leader that may be
    /// elected, in the order of the outcomes.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub lands_under: Vec<LandsUnder>,
}

/// Where a consumer lands under one leader the controller may elect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LandsUnder {
    pub leader: i32,
    pub lands: Landing,
}

/// Where a consumer resuming from a committed offset lands on the
/// partition's leader (Kafka's consumer, `SubscriptionState`):
/// - a commit with a leader epoch is validated first (KIP-320,
///   `maybeCompleteValidation`): the leader's end of that epoch
///   (`OffsetsForLeaderEpoch`, `LeaderEpochFileCache.endOffsetFor`) below
///   the committed offset is a truncation: the consumer moves to that end
///   (the first offset known to diverge) under any `auto.offset.reset`
///   but `none`, which raises `LogTruncationException`; an epoch the
///   leader does not know resets by `auto.offset.reset`;
/// - a commit without one is fetched as it is: outside `[log start, log
///   end]` it is out of range and `auto.offset.reset` decides (earliest:
///   the log start, latest: the log end, none: an error).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Landing {
    /// Resumes at the committed offset.
    Resumes { offset: i64 },
    /// Truncation detected: moves to the divergence point.
    DivergencePoint { offset: i64 },
    /// `auto.offset.reset` decides: `earliest` lands at the log start,
    /// `latest` at the log end; `none` fails.
    Reset { earliest: i64, latest: i64 },
}

impl Landing {
    /// How the landing is said in text.
    pub fn describe(&self) -> String {
        match self {
            Landing::Resumes { offset } => format!("resumes at {offset}"),
            Landing::DivergencePoint { offset } => format!(
                "truncation detected: moves to {offset} (auto.offset.reset=none: LogTruncationException)"
            ),
            Landing::Reset { earliest, latest } => format!(
                "out of range: auto.offset.reset decides (earliest {earliest}, latest {latest}, none fails)"
            ),
        }
    }
}

/// A summary given, by log directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SourceRow {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    pub file: crate::log::findings::FileFields,
    pub node_id: i32,
    pub log_dir: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_dir_base64: Option<String>,
    pub directory_id: Option<String>,
    pub partitions: usize,
    /// How the broker left this log directory (`.kafka_cleanshutdown`).
    pub shutdown: crate::log::shutdown::ShutdownState,
    /// The summary's warnings and errors about this directory: a foreign
    /// folder that stops the broker from starting, damage, malformed files.
    pub findings: Vec<crate::log::findings::Finding>,
}

/// The metadata image used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MetadataSource {
    pub node_id: i32,
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    pub file: crate::log::findings::FileFields,
    pub next_offset: i64,
    /// The parts of that image klog could not build in full: the verdicts
    /// there may miss partitions or replicas.
    pub incomplete: Vec<crate::metadata::image::Section>,
}

/// Counts of the verdicts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Totals {
    pub partitions: usize,
    pub ok: usize,
    pub under_replicated: usize,
    pub diverged: usize,
    pub offline: usize,
    pub lost: usize,
    pub diverged_replicas: usize,
}

/// The merged verdict.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ClusterReport {
    /// The envelope carries `schema_version` (the report layer writes it).
    #[serde(skip)]
    pub schema_version: u32,
    pub cluster_id: Option<String>,
    pub summaries: Vec<SourceRow>,
    pub metadata: Option<MetadataSource>,
    pub totals: Totals,
    pub partitions: Vec<PartitionVerdict>,
    pub groups: Vec<GroupLag>,
}

impl ClusterReport {
    /// Whether a replica diverged, a partition is offline or lost, or a
    /// summary holds an error (a folder that stops its broker from
    /// starting, damage): exit 1.
    pub fn failed(&self) -> bool {
        self.totals.diverged + self.totals.offline + self.totals.lost > 0 || self.errors() > 0
    }

    /// The summaries' findings at error severity.
    pub fn errors(&self) -> usize {
        self.summaries
            .iter()
            .flat_map(|s| &s.findings)
            .filter(|f| f.severity == crate::log::findings::Severity::Error)
            .count()
    }

    /// The nodes whose summaries hold a finding at error severity.
    pub fn error_nodes(&self) -> std::collections::BTreeSet<i32> {
        self.summaries
            .iter()
            .filter(|s| {
                s.findings
                    .iter()
                    .any(|f| f.severity == crate::log::findings::Severity::Error)
            })
            .map(|s| s.node_id)
            .collect()
    }

    /// How many nodes the summaries come from (a node may send several).
    pub fn nodes(&self) -> usize {
        self.summaries
            .iter()
            .map(|s| s.node_id)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    }
}

impl PartitionVerdict {
    /// The nodes assigned a replica that no summary holds (MISSING), or
    /// `None` when there is none.
    pub fn missing_nodes(&self) -> Option<Vec<i32>> {
        let m: Vec<i32> = self
            .replicas
            .iter()
            .filter(|r| r.state == ReplicaState::Missing)
            .map(|r| r.node_id)
            .collect();
        (!m.is_empty()).then_some(m)
    }
}
