//! `klog cluster`: the summaries of every broker merged into one verdict.
//!
//! Per partition: the replicas found (one per node) and the ones the
//! metadata assigns that no summary holds; the leader (the metadata's, or
//! when it has none or left no summary, the replica with the newest leader
//! epoch, then the longest log, then the lowest node id: Kafka elects a
//! leader from the ISR, and every ISR member holds the newest epoch and
//! every acknowledged offset); each follower's divergence as Kafka's
//! truncation computes it ([`truncate_follower`] against the leader, whose
//! cache gets the metadata's leader epoch at its log end, as
//! `Partition.makeLeader` assigns it), then checked by the epoch checksums
//! below the truncation point: a run both replicas hold whose checksums
//! differ is a divergence Kafka does not see. A partition is `lost` when no
//! assigned replica is found, `diverged` when a replica holds batches Kafka
//! would cut or that differ from the leader's, `under_replicated` when a
//! replica is missing or behind the leader's log end, else `ok`.
//!
//! Group lag: each offsets partition's committed offsets are taken from
//! its leader's summary (the group coordinator's), and compared with the
//! high watermark of the leader of each partition the group read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use super::epochs::{truncate_follower, EpochCache, ReplicaLog};
use super::summary::{
    AssignedPartition, LogDirSummary, MetadataSummary, PartitionSummary, SummaryDoc, SCHEMA_VERSION,
};
use crate::error::{Error, Result};

/// The largest summary file read.
pub const MAX_SUMMARY_FILE: u64 = 1 << 30;

/// A summary document and the file it came from.
#[derive(Debug, Clone)]
pub struct Source {
    pub file: PathBuf,
    pub doc: SummaryDoc,
}

/// Parse a summary document, refusing a major version this klog does not read.
pub fn parse(bytes: &[u8], file: &Path) -> Result<SummaryDoc> {
    #[derive(Deserialize)]
    struct Probe {
        schema_version: Option<serde_json::Value>,
        command: Option<serde_json::Value>,
    }
    let not_summary = |why: String| {
        Error::layout(
            file,
            format!("is not a klog summary (`klog summary --format json`): {why}"),
        )
    };
    let probe: Probe = serde_json::from_slice(bytes).map_err(|e| not_summary(e.to_string()))?;
    let version = probe
        .schema_version
        .ok_or_else(|| not_summary("no schema_version".into()))?;
    if version.as_u64() != Some(u64::from(SCHEMA_VERSION)) {
        return Err(Error::layout(
            file,
            format!(
                "summary schema version {version} is not one this klog reads ({SCHEMA_VERSION}); \
                 summarize with the same klog version as the one merging"
            ),
        ));
    }
    let doc: SummaryDoc = serde_json::from_slice(bytes).map_err(|e| not_summary(e.to_string()))?;
    let command = probe
        .command
        .as_ref()
        .map(|c| c.as_str().unwrap_or("(not a string)"));
    super::check::check(command, &doc)
        .map_err(|v| Error::layout(file, format!("is not a summary klog can trust: {v}")))?;
    Ok(doc)
}

/// Read the summaries named by `paths`: files, or directories whose
/// `*.json` files (in name order) are summaries.
pub fn read_sources(paths: &[PathBuf]) -> Result<Vec<Source>> {
    let mut files = Vec::new();
    for path in paths {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "stat", e))?;
        if !meta.is_dir() {
            files.push(path.clone());
            continue;
        }
        let mut found = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| Error::io(path, "list directory", e))? {
            let entry = entry.map_err(|e| Error::io(path, "list directory", e))?;
            let p = entry.path();
            if p.extension().is_some_and(|e| e == "json") && p.is_file() {
                found.push(p);
            }
        }
        if found.is_empty() {
            return Err(Error::layout(path, "holds no summaries (*.json files)"));
        }
        found.sort();
        files.extend(found);
    }
    files
        .into_iter()
        .map(|file| {
            let bytes = crate::log::files::read_regular(&file, MAX_SUMMARY_FILE)?
                .ok_or_else(|| Error::layout(&file, "does not exist"))?;
            let doc = parse(&bytes, &file)?;
            Ok(Source { file, doc })
        })
        .collect()
}

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
    Lost,
}

impl PartitionStatus {
    pub fn name(self) -> &'static str {
        match self {
            PartitionStatus::Ok => "ok",
            PartitionStatus::UnderReplicated => "under_replicated",
            PartitionStatus::Diverged => "diverged",
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
}

impl ReplicaVerdict {
    /// A replica of `node` in `state`, nothing else known yet.
    fn new(node_id: i32, state: ReplicaState) -> Self {
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
}

/// A summary given, by log directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct SourceRow {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    pub file: crate::findings::FileFields,
    pub node_id: i32,
    pub log_dir: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub log_dir_base64: Option<String>,
    pub directory_id: Option<String>,
    pub partitions: usize,
}

/// The metadata image used.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct MetadataSource {
    pub node_id: i32,
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    pub file: crate::findings::FileFields,
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
    /// Whether a replica diverged or a partition is lost (exit 1).
    pub fn failed(&self) -> bool {
        self.totals.diverged + self.totals.lost > 0
    }
}

/// A log directory of a summary.
struct Dir<'a> {
    file: &'a Path,
    node: i32,
    dir: &'a LogDirSummary,
}

/// A replica found in a summary.
#[derive(Clone, Copy)]
struct Found<'a> {
    file: &'a Path,
    dir: &'a LogDirSummary,
    p: &'a PartitionSummary,
}

/// Merge the summaries (see the module docs). Summaries that contradict
/// each other (another cluster, the same directory twice, a partition twice
/// on one node, no node id) are refused.
pub fn merge(sources: &[Source]) -> Result<ClusterReport> {
    let mut dirs: Vec<Dir<'_>> = Vec::new();
    let mut seen: BTreeMap<(i32, String), &Path> = BTreeMap::new();
    let mut cluster_id: Option<(&str, &Path)> = None;
    for s in sources {
        for d in &s.doc.log_dirs {
            let node = d.node_id.ok_or_else(|| {
                Error::layout(
                    &s.file,
                    format!(
                        "log directory {:?} has no node id (meta.properties missing or unreadable): summarize it with --node-id N",
                        d.path
                    ),
                )
            })?;
            if let Some(c) = &d.cluster_id {
                match cluster_id {
                    Some((other, from)) if other != c => {
                        return Err(Error::layout(
                            &s.file,
                            format!(
                            "cluster id {c:?} differs from {other:?} in {}: summaries of two clusters",
                            from.display()
                        ),
                        ))
                    }
                    Some(_) => {}
                    None => cluster_id = Some((c, &s.file)),
                }
            }
            let key = (
                node,
                d.directory_id.clone().unwrap_or_else(|| d.path.clone()),
            );
            if let Some(other) = seen.insert(key, &s.file) {
                return Err(Error::layout(
                    &s.file,
                    format!(
                        "node {node}'s log directory {:?} is also summarized in {}",
                        d.path,
                        other.display()
                    ),
                ));
            }
            dirs.push(Dir {
                file: &s.file,
                node,
                dir: d,
            });
        }
    }
    let metadata = dirs
        .iter()
        .filter_map(|d| d.dir.metadata.as_ref().map(|m| (d, m)))
        .max_by_key(|(d, m)| (m.next_offset, std::cmp::Reverse(d.node)));
    let mut found: BTreeMap<(&str, i32), BTreeMap<i32, Found<'_>>> = BTreeMap::new();
    for d in &dirs {
        for p in &d.dir.partitions {
            let replicas = found.entry((p.topic.as_str(), p.partition)).or_default();
            let f = Found {
                file: d.file,
                dir: d.dir,
                p,
            };
            if let Some(other) = replicas.insert(d.node, f) {
                return Err(Error::layout(
                    d.file,
                    format!(
                        "node {} holds {:?} partition {} in two log directories ({:?} and {:?})",
                        d.node, p.topic, p.partition, other.dir.path, d.dir.path
                    ),
                ));
            }
        }
    }
    let nodes: BTreeSet<i32> = dirs.iter().map(|d| d.node).collect();
    let assigned: BTreeMap<(&str, i32), (&AssignedPartition, &str)> = metadata
        .iter()
        .flat_map(|(_, m)| &m.topics)
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |a| ((t.topic.as_str(), a.partition), (a, t.topic_id.as_str())))
        })
        .collect();
    let keys: BTreeSet<(&str, i32)> = assigned.keys().chain(found.keys()).copied().collect();
    let empty = BTreeMap::new();
    let mut partitions = Vec::new();
    let mut leaders: BTreeMap<(&str, i32), Found<'_>> = BTreeMap::new();
    for key in keys {
        let replicas = found.get(&key).unwrap_or(&empty);
        let (verdict, leader) =
            partition_verdict(key, replicas, assigned.get(&key).copied(), &nodes);
        if let Some(l) = leader {
            leaders.insert(key, l);
        }
        partitions.push(verdict);
    }
    let groups = group_lag(&partitions, &leaders, &assigned);
    let mut totals = Totals {
        partitions: partitions.len(),
        ..Totals::default()
    };
    for p in &partitions {
        match p.status {
            PartitionStatus::Ok => totals.ok += 1,
            PartitionStatus::UnderReplicated => totals.under_replicated += 1,
            PartitionStatus::Diverged => totals.diverged += 1,
            PartitionStatus::Lost => totals.lost += 1,
        }
        totals.diverged_replicas += p
            .replicas
            .iter()
            .filter(|r| r.state == ReplicaState::Diverged && r.assigned != Some(false))
            .count();
    }
    Ok(ClusterReport {
        schema_version: SCHEMA_VERSION,
        cluster_id: cluster_id.map(|(c, _)| c.to_string()),
        summaries: dirs
            .iter()
            .map(|d| SourceRow {
                file: crate::findings::FileFields::of(d.file),
                node_id: d.node,
                log_dir: d.dir.path.clone(),
                log_dir_base64: d.dir.path_base64.clone(),
                directory_id: d.dir.directory_id.clone(),
                partitions: d.dir.partitions.len(),
            })
            .collect(),
        metadata: metadata.map(|(d, m): (&Dir<'_>, &MetadataSummary)| MetadataSource {
            node_id: d.node,
            file: crate::findings::FileFields::of(d.file),
            next_offset: m.next_offset,
            incomplete: m.incomplete.clone(),
        }),
        totals,
        partitions,
        groups,
    })
}

/// The high watermark as the broker loads it: the checkpointed one within
/// the log's ends (`UnifiedLog.updateHighWatermark`), else the log start.
fn loaded_high_watermark(p: &PartitionSummary) -> i64 {
    p.high_watermark
        .unwrap_or(p.log_start_offset)
        .max(p.log_start_offset)
        .min(p.log_end_offset)
}

fn replica_log(p: &PartitionSummary) -> ReplicaLog {
    ReplicaLog {
        cache: EpochCache::from_entries(
            p.leader_epochs
                .iter()
                .map(|e| (e.leader_epoch, e.start_offset)),
        ),
        log_start: p.log_start_offset,
        log_end: p.log_end_offset,
        high_watermark: loaded_high_watermark(p),
    }
}

fn latest_epoch(p: &PartitionSummary) -> Option<i32> {
    p.leader_epochs.iter().map(|e| e.leader_epoch).max()
}

/// A replica with a copy of a partition, as the leader choice sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub node: i32,
    /// The newest epoch of its leader-epoch cache.
    pub latest_epoch: Option<i32>,
    pub log_end: i64,
}

/// The replica followers are judged against: the metadata's leader when
/// its copy is in a summary; else the one Kafka's controller would elect
/// if every broker with a copy were up (`PartitionChangeBuilder.electAnyLeader`:
/// the first replica in assignment order in the ISR, or in the ELR when
/// the ISR is empty; else the first of the last known ELR; else, unclean,
/// the first replica); without metadata, the replica with the newest leader
/// epoch, then the longest log, then the lowest node id (an ISR member
/// holds the newest epoch and every acknowledged offset).
pub fn choose_leader(
    candidates: &[Candidate],
    assigned: Option<&AssignedPartition>,
) -> (Option<i32>, LeaderSource, String) {
    let has = |n: &i32| candidates.iter().any(|c| c.node == *n);
    let Some(a) = assigned else {
        let chosen = candidates
            .iter()
            .max_by_key(|c| (c.latest_epoch, c.log_end, std::cmp::Reverse(c.node)))
            .map(|c| c.node);
        return match chosen {
            Some(n) => (
                Some(n),
                LeaderSource::Chosen,
                format!("no metadata: node {n}, the replica with the newest leader epoch and the longest log"),
            ),
            None => (None, LeaderSource::None, String::new()),
        };
    };
    if a.leader >= 0 && has(&a.leader) {
        return (Some(a.leader), LeaderSource::Metadata, String::new());
    }
    let why = if a.leader < 0 {
        "no leader in the metadata".to_string()
    } else {
        format!("the metadata's leader {} left no copy", a.leader)
    };
    let pick = |n: i32, how: String| {
        (
            Some(n),
            LeaderSource::Chosen,
            format!("{why}: node {n}, {how}"),
        )
    };
    let (set, electable) = electable(candidates, a);
    if let [first, _, ..] = electable.as_slice() {
        let names: Vec<String> = electable.iter().map(i32::to_string).collect();
        return (
            Some(*first),
            LeaderSource::Undecided,
            format!(
                "{why}: the controller elects whichever of nodes {} (the {set}) comes back first, which \
                 cannot be known offline: the outcome under each is shown (judged here against node {first})",
                names.join(", ")
            ),
        );
    }
    if let Some(&n) = electable.first() {
        return pick(n, format!("the first replica in the {set} with a copy"));
    }
    if let Some(&n) = a.last_known_elr.first().filter(|n| has(n)) {
        return pick(n, "the last known ELR member".to_string());
    }
    match a.replicas.iter().find(|r| has(r)) {
        Some(&n) => pick(
            n,
            "the first replica with a copy (an unclean election)".to_string(),
        ),
        None => (None, LeaderSource::None, String::new()),
    }
}

/// The replicas with a copy the controller may elect cleanly, in assignment
/// order: those in the ISR, or in the ELR when the ISR is empty
/// (`PartitionChangeBuilder.isValidNewLeader`); and which set that is.
fn electable(candidates: &[Candidate], a: &AssignedPartition) -> (&'static str, Vec<i32>) {
    let (set, eligible) = if a.isr.is_empty() {
        ("ELR", &a.eligible_leader_replicas)
    } else {
        ("ISR", &a.isr)
    };
    let mut out: Vec<i32> = Vec::new();
    for r in &a.replicas {
        if candidates.iter().any(|c| c.node == *r) && eligible.contains(r) && !out.contains(r) {
            out.push(*r);
        }
    }
    (set, out)
}

fn partition_verdict<'a>(
    (topic, partition): (&str, i32),
    all_found: &BTreeMap<i32, Found<'a>>,
    registration: Option<(&AssignedPartition, &str)>,
    nodes: &BTreeSet<i32>,
) -> (PartitionVerdict, Option<Found<'a>>) {
    let assigned = registration.map(|(a, _)| a);
    // A copy whose partition.metadata names another topic id belongs to a
    // deleted topic of the same name: not a replica of this one.
    let other_topic = |f: &Found<'_>| match (registration, f.p.topic_id.as_deref()) {
        (Some((_, id)), Some(theirs)) => theirs != id,
        _ => false,
    };
    let found: BTreeMap<i32, Found<'a>> = all_found
        .iter()
        .filter(|(_, f)| !other_topic(f))
        .map(|(n, f)| (*n, *f))
        .collect();
    let found = &found;
    let is_assigned = |n: i32| assigned.map(|a| a.replicas.contains(&n));
    // Copies the metadata does not place here are reported, not judged.
    let candidates: Vec<(i32, Found<'a>)> = found
        .iter()
        .filter(|(n, _)| is_assigned(**n) != Some(false))
        .map(|(n, f)| (*n, *f))
        .collect();
    let copies: Vec<Candidate> = candidates
        .iter()
        .map(|(n, f)| Candidate {
            node: *n,
            latest_epoch: latest_epoch(f.p),
            log_end: f.p.log_end_offset,
        })
        .collect();
    let (leader, source, mut detail) = choose_leader(&copies, assigned);
    let leader_found = leader.and_then(|l| found.get(&l).copied());
    let judge = |leader: Option<i32>, source: LeaderSource| {
        judge_replicas(
            leader,
            source,
            found,
            all_found,
            assigned,
            nodes,
            &candidates,
        )
    };
    let (replicas, mut status) = judge(leader, source);
    let mut outcomes = Vec::new();
    if let (LeaderSource::Undecided, Some(a)) = (source, assigned) {
        for n in electable(&copies, a).1 {
            let (replicas, outcome) = judge(Some(n), source);
            status = status.max(outcome);
            outcomes.push(LeaderOutcome {
                leader: n,
                status: outcome,
                replicas,
            });
        }
    }
    if status == PartitionStatus::Lost {
        let strays: Vec<String> = found.keys().map(|n| n.to_string()).collect();
        detail = if strays.is_empty() {
            "no replica in any summary".to_string()
        } else {
            format!(
                "no assigned replica in any summary; a copy the metadata does not assign is on node {}",
                strays.join(", ")
            )
        };
    }
    let verdict = PartitionVerdict {
        topic: topic.to_string(),
        partition,
        status,
        assigned_replicas: assigned.map(|a| a.replicas.clone()),
        isr: assigned.map(|a| a.isr.clone()),
        leader,
        leader_source: source,
        leader_epoch: assigned.map(|a| a.leader_epoch),
        log_end_offset: leader_found.map(|f| f.p.log_end_offset),
        high_watermark: leader_found
            .and_then(|f| f.p.high_watermark.map(|_| loaded_high_watermark(f.p))),
        replicas,
        outcomes,
        detail,
    };
    (verdict, leader_found)
}

/// The replicas of a partition judged against `leader` (chosen as
/// `source` says), those the metadata assigns but no summary holds
/// included, and the partition's status under that leader.
fn judge_replicas(
    leader: Option<i32>,
    source: LeaderSource,
    found: &BTreeMap<i32, Found<'_>>,
    all_found: &BTreeMap<i32, Found<'_>>,
    assigned: Option<&AssignedPartition>,
    nodes: &BTreeSet<i32>,
    candidates: &[(i32, Found<'_>)],
) -> (Vec<ReplicaVerdict>, PartitionStatus) {
    let is_assigned = |n: i32| assigned.map(|a| a.replicas.contains(&n));
    let leader_found = leader.and_then(|l| found.get(&l).copied());
    let mut leader_log = leader_found.map(|f| replica_log(f.p));
    if let (Some(l), Some(a)) = (&mut leader_log, assigned) {
        // Partition.makeLeader: the leader's epoch starts at its log end; a
        // leader the controller has yet to elect gets the next epoch.
        let epoch = match source {
            LeaderSource::Metadata => a.leader_epoch,
            _ => a.leader_epoch.saturating_add(1),
        };
        l.cache.assign(epoch, l.log_end);
    }
    let leader_side = match (leader, &leader_log, leader_found) {
        (Some(n), Some(log), Some(f)) => Some(LeaderSide {
            node: n,
            log,
            checkpoints: checkpoints(f.p),
            cleaner_offset: f.p.cleaner_offset,
        }),
        _ => None,
    };
    let mut replicas = Vec::new();
    for (&node, f) in found {
        replicas.push(replica_verdict(
            node,
            *f,
            leader_side.as_ref(),
            is_assigned(node),
        ));
    }
    let mut missing = Vec::new();
    for &node in assigned.map(|a| a.replicas.as_slice()).unwrap_or_default() {
        if found.contains_key(&node) || missing.contains(&node) {
            continue;
        }
        missing.push(node);
        let why = if let Some(f) = all_found.get(&node) {
            format!(
                "node {node}'s copy is of another topic of this name (topic id {})",
                f.p.topic_id.as_deref().unwrap_or("-")
            )
        } else if nodes.contains(&node) {
            format!("node {node}'s summaries have no folder for it")
        } else {
            format!("no summary from node {node}")
        };
        replicas.push(ReplicaVerdict {
            assigned: Some(true),
            detail: why,
            ..ReplicaVerdict::new(node, ReplicaState::Missing)
        });
    }
    let judged = || replicas.iter().filter(|r| r.assigned != Some(false));
    let status = if candidates.is_empty() {
        PartitionStatus::Lost
    } else if judged().any(|r| r.state == ReplicaState::Diverged) {
        PartitionStatus::Diverged
    } else if judged().any(|r| matches!(r.state, ReplicaState::Missing | ReplicaState::Behind)) {
        PartitionStatus::UnderReplicated
    } else {
        PartitionStatus::Ok
    };
    (replicas, status)
}

/// The leader, as followers are judged against it.
struct LeaderSide<'a> {
    node: i32,
    log: &'a ReplicaLog,
    checkpoints: Checkpoints,
    cleaner_offset: Option<i64>,
}

fn replica_verdict(
    node: i32,
    f: Found<'_>,
    leader: Option<&LeaderSide<'_>>,
    assigned: Option<bool>,
) -> ReplicaVerdict {
    let p = f.p;
    let mut v = ReplicaVerdict {
        assigned,
        summary: Some(f.file.display().to_string()),
        log_start_offset: Some(p.log_start_offset),
        log_end_offset: Some(p.log_end_offset),
        high_watermark: p.high_watermark,
        leader_epoch: latest_epoch(p),
        detail: if assigned == Some(false) {
            "not assigned to this node by the metadata (a stray copy)".to_string()
        } else {
            String::new()
        },
        ..ReplicaVerdict::new(node, ReplicaState::InSync)
    };
    let Some(leader) = leader else {
        return v;
    };
    if leader.node == node {
        v.state = ReplicaState::Leader;
        return v;
    }
    let t = truncate_follower(&replica_log(p), leader.log);
    let leader_summary_end = leader.log.log_end;
    v.truncation_offset = Some(t.offset);
    // Below the truncation point, the checksums of what both hold must agree.
    let cleaned = p.cleaner_offset.max(leader.cleaner_offset);
    let check = compare(
        p,
        &leader.checkpoints,
        t.offset,
        cleaned.unwrap_or(i64::MIN),
    );
    let cut = !t.fully && t.offset < p.log_end_offset;
    let differs = check.mismatch.filter(|&m| m < p.log_end_offset);
    v.verified_through = check.verified_through;
    let note = |v: &mut ReplicaVerdict, s: String| {
        if !v.detail.is_empty() {
            v.detail.push_str("; ");
        }
        v.detail.push_str(&s);
    };
    if cut || differs.is_some() {
        let from = differs.map_or(t.offset, |m| m.min(t.offset));
        let (n, exact) = batches_from(p, from);
        v.state = ReplicaState::Diverged;
        v.divergence_offset = Some(from);
        v.batches_beyond = Some(n);
        v.batches_beyond_exact = Some(exact);
        v.behind_by = Some(leader_summary_end.saturating_sub(from).max(0));
        let batches = if exact {
            format!("{n} batches")
        } else {
            format!("at least {n} batches")
        };
        match differs {
            Some(m) if m < t.offset || !cut => note(
                &mut v,
                format!(
                    "its batches from offset {m} differ from the leader's (epoch checksums), below where Kafka truncates ({}): Kafka keeps them; {batches} from {from}",
                    t.offset
                ),
            ),
            _ => note(
                &mut v,
                format!(
                    "Kafka truncates it to {} ({}); {batches} from {from} to its log end {} go",
                    t.offset,
                    t.steps.join("; "),
                    p.log_end_offset
                ),
            ),
        }
    } else if t.fully {
        v.state = ReplicaState::Behind;
        v.behind_by = Some(leader_summary_end.saturating_sub(t.offset).max(0));
        note(&mut v, t.steps.join("; "));
    } else if p.log_end_offset < leader_summary_end {
        v.state = ReplicaState::Behind;
        v.behind_by = Some(leader_summary_end.saturating_sub(p.log_end_offset));
    }
    if check.compacted && v.state != ReplicaState::Diverged {
        if let Some(c) = cleaned {
            note(
                &mut v,
                format!("compacted by the log cleaner below {c}: the epoch checksums are compared only above it"),
            );
        }
    }
    v
}

/// Checksum checkpoints: (end offset, epoch, run start) → the run's chain there.
type Checkpoints = BTreeMap<(i64, i32, i64), u32>;

/// A replica's checkpoints: each run's end, and each tail batch.
fn checkpoints(p: &PartitionSummary) -> Checkpoints {
    let mut out = BTreeMap::new();
    for r in &p.epochs {
        out.insert((r.end_offset, r.leader_epoch, r.start_offset), r.crc32c);
    }
    for t in &p.tail {
        let run = p.epochs.iter().rev().find(|r| {
            r.leader_epoch == t.leader_epoch
                && r.start_offset <= t.base_offset
                && t.base_offset < r.end_offset
        });
        if let Some(r) = run {
            out.insert((t.end_offset, t.leader_epoch, r.start_offset), t.crc32c);
        }
    }
    out
}

/// What the checksums say below an offset.
struct Comparison {
    /// The first offset from which the batches differ, as far as the
    /// checkpoints place it.
    mismatch: Option<i64>,
    verified_through: Option<i64>,
    /// Some checkpoints were passed over as compacted.
    compacted: bool,
}

/// Compare `p`'s checkpoints up to `upto` with the leader's.
/// Runs starting below `cleaned` hold batches the log cleaner rewrote on
/// one replica or the other (each compacts on its own, and a tombstone's
/// delete horizon is the cleaning time): they are not compared.
fn compare(p: &PartitionSummary, leader: &Checkpoints, upto: i64, cleaned: i64) -> Comparison {
    let mut covered = p.epochs.first().map(|r| r.start_offset);
    let start = covered;
    let mut last_match: BTreeMap<(i32, i64), i64> = BTreeMap::new();
    let mut out = Comparison {
        mismatch: None,
        verified_through: None,
        compacted: false,
    };
    for ((end, epoch, run_start), crc) in checkpoints(p) {
        if end > upto {
            break;
        }
        if run_start < cleaned {
            out.compacted = true;
            continue;
        }
        let Some(&theirs) = leader.get(&(end, epoch, run_start)) else {
            continue;
        };
        if theirs != crc {
            out.mismatch = Some(
                last_match
                    .get(&(epoch, run_start))
                    .copied()
                    .unwrap_or(run_start),
            );
            break;
        }
        last_match.insert((epoch, run_start), end);
        if covered.is_some_and(|c| run_start <= c) {
            covered = covered.map(|c| c.max(end));
        }
    }
    out.verified_through = covered.filter(|&c| Some(c) != start);
    out
}

/// `p`'s batches at and after `from`, and whether the count is exact.
fn batches_from(p: &PartitionSummary, from: i64) -> (u64, bool) {
    let mut n = 0u64;
    let mut exact = true;
    for r in &p.epochs {
        if r.end_offset <= from {
            continue;
        }
        if r.start_offset >= from {
            n = n.saturating_add(r.batches);
            continue;
        }
        // `from` falls inside this run: count its batches from the tail.
        let tail: Vec<_> = p
            .tail
            .iter()
            .filter(|t| {
                t.leader_epoch == r.leader_epoch
                    && r.start_offset <= t.base_offset
                    && t.base_offset < r.end_offset
            })
            .collect();
        let covers =
            tail.first().is_some_and(|t| t.base_offset <= from) || tail.len() as u64 == r.batches;
        exact &= covers;
        n = n.saturating_add(tail.iter().filter(|t| t.end_offset > from).count() as u64);
    }
    (n, exact)
}

/// The lag of every committed offset, from each offsets partition's leader.
fn group_lag(
    partitions: &[PartitionVerdict],
    leaders: &BTreeMap<(&str, i32), Found<'_>>,
    assigned: &BTreeMap<(&str, i32), (&AssignedPartition, &str)>,
) -> Vec<GroupLag> {
    let by_key: BTreeMap<(&str, i32), &PartitionVerdict> = partitions
        .iter()
        .map(|p| ((p.topic.as_str(), p.partition), p))
        .collect();
    let mut rows = Vec::new();
    for (&(topic, partition), coordinator) in leaders {
        let Some(c) = &coordinator.dir.committed_offsets else {
            continue;
        };
        if c.offsets_topic != topic {
            continue;
        }
        let Some(&coordinator_node) = by_key
            .get(&(topic, partition))
            .and_then(|v| v.leader.as_ref())
        else {
            continue;
        };
        for o in c
            .offsets
            .iter()
            .filter(|o| o.offsets_partition == partition)
        {
            let key = (o.topic.as_str(), o.partition);
            let target = leaders.get(&key);
            let verdict = by_key.get(&key);
            let known = verdict.is_some() || assigned.contains_key(&key);
            let ends = target.map(|t| {
                let hw = t.p.high_watermark.map(|_| loaded_high_watermark(t.p));
                (t.p.log_start_offset, t.p.log_end_offset, hw)
            });
            let (status, lag) = match ends {
                _ if o.committed_offset < 0 && known => (LagStatus::NoCommittedOffset, None),
                None if verdict.is_some_and(|v| v.status == PartitionStatus::Lost) => {
                    (LagStatus::PartitionLost, None)
                }
                None => (LagStatus::NoPartition, None),
                Some((start, end, hw)) => {
                    let upto = hw.unwrap_or(end);
                    let lag = upto.saturating_sub(o.committed_offset);
                    if o.committed_offset < start {
                        (LagStatus::BelowLogStart, Some(lag))
                    } else if o.committed_offset > end {
                        (LagStatus::AboveLogEnd, Some(lag))
                    } else {
                        // A commit past a stale checkpointed high watermark: nothing left.
                        (LagStatus::Ok, Some(lag.max(0)))
                    }
                }
            };
            rows.push(GroupLag {
                group: o.group.clone(),
                topic: o.topic.clone(),
                partition: o.partition,
                committed_offset: o.committed_offset,
                commit_timestamp_ms: o.commit_timestamp_ms,
                offsets_partition: partition,
                coordinator: coordinator_node,
                leader: verdict.and_then(|v| v.leader),
                log_start_offset: ends.map(|e| e.0),
                log_end_offset: ends.map(|e| e.1),
                high_watermark: ends.and_then(|e| e.2),
                lag,
                status,
            });
        }
    }
    rows.sort_by(|a, b| (&a.group, &a.topic, a.partition).cmp(&(&b.group, &b.topic, b.partition)));
    rows
}
