//! Consumer lag: each committed offset against its partition's log.
//!
//! For every (group, topic, partition) in the replayed table, the partition
//! is looked up in the data directories. Its ends come from the files:
//! - log start: the first segment's base offset, or the
//!   `log-start-offset-checkpoint` entry when that is higher (after
//!   DeleteRecords it can lie inside the first segment); for a topic with
//!   tiered storage, the checkpoint and the remote log's start
//!   ([`crate::tiered::log_starts`]): the records below the first local
//!   segment are served from remote storage, and a group committed there
//!   resumes there (the pending records there cannot be counted: they are
//!   not on these disks);
//! - log end: one past the last offset of the last whole batch, read from the
//!   last segment's last offset-index entry onwards, so the cost does not
//!   grow with the partition's size;
//! - high watermark: `replication-offset-checkpoint`, when present;
//! - last stable offset (read_committed only; it needs the producer state,
//!   read from the last producer snapshot forward, or from the log start
//!   without one): the first offset of the earliest open transaction, else
//!   the end.
//!
//! lag = end − committed, where end is the high watermark when known, else
//! the log end offset, and the last stable offset under read_committed.
//! That is `kafka-consumer-groups`' LAG (`ConsumerGroupCommand.getLag`:
//! LOG-END-OFFSET − CURRENT-OFFSET, where LOG-END-OFFSET comes from
//! ListOffsets with `OffsetSpec.latest()` at read_uncommitted, which the
//! broker answers with the high watermark). Kafka 4.3's `getLag` clamps
//! nothing (`end - offset0`), so a commit above the high watermark has a
//! negative lag there and here, with the status
//! [`Status::AboveHighWatermark`].
//!
//! The high watermark is the one a broker loads from the checkpoint:
//! `Partition.createLog` hands the entry, whatever its value
//! (`OffsetCheckpointFile.Formatter` parses any long, a negative one too),
//! to `UnifiedLog.updateHighWatermark`, which raises it to the log start
//! and lowers it to the log end.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use crate::cluster::broker_summary::AssignedPartition;
use crate::cluster::broker_summary::{elr_enabled, unclean_leader_election};
use crate::cluster::merge::{choose_leader, registers_unclean, Candidate, LeaderSource, Rules};
use crate::error::{Error, Result};
use crate::format::{DecodeLimits, Entry};
use crate::log::checkpoint;
use crate::log::shutdown::Shutdown;
use crate::log::walk::Meter;
use crate::log::{DataDir, Partition, Policy};
use crate::offsets::standing::{Judge, Standing};
use crate::offsets::Replay;
use crate::tiered::Tiering;

pub use crate::txn::Isolation;

/// A partition's offsets as the files tell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionEnds {
    /// Kafka's log start (ListOffsets `earliest`).
    pub log_start: i64,
    /// Where the local copy starts (ListOffsets `earliest-local`); below
    /// it, down to the log start, the records live in remote storage only.
    pub local_log_start: i64,
    /// The partition's topic has tiered storage.
    pub tiered: bool,
    pub log_end: i64,
    pub high_watermark: Option<i64>,
    pub last_stable: Option<i64>,
}

/// How a committed offset relates to its partition.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    Ok,
    /// Committed records were deleted by retention: the consumer will reset.
    BelowLogStart,
    /// The log was truncated under the group.
    AboveLogEnd,
    /// Between the high watermark and the log end: the group committed
    /// records not known to be replicated (a follower's tail, or a
    /// checkpoint older than the commit), which a restart can truncate.
    /// The lag is negative, as `kafka-consumer-groups` shows it.
    AboveHighWatermark,
    /// No such partition on these disks.
    NoPartition,
    /// A negative committed offset (a non-Java client's): Kafka's clients
    /// read it as no committed offset (`ListConsumerGroupOffsetsHandler`,
    /// `ConsumerCoordinator`), so there is no lag and the consumer resets.
    NoCommittedOffset,
    /// Committed for an earlier topic of the same name (its topic id is not
    /// the topic's current one). kafka-consumer-groups and a classic
    /// consumer fetch it by name and see it, so the lag is theirs against
    /// the new topic; a KIP-848 consumer fetches by topic id, gets no
    /// offset and resets (see [`crate::offsets::standing`]).
    TopicRecreated,
    /// Past the offsets retention: the coordinator removes it at its next
    /// expiration check and the consumer then resets; the lag shown is the
    /// committed offset's (see [`crate::offsets::standing`]).
    Expired,
}

impl Status {
    /// snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::BelowLogStart => "below_log_start",
            Status::AboveLogEnd => "above_log_end",
            Status::AboveHighWatermark => "above_high_watermark",
            Status::NoPartition => "no_partition",
            Status::NoCommittedOffset => "no_committed_offset",
            Status::TopicRecreated => crate::offsets::standing::TOPIC_RECREATED,
            Status::Expired => "expired",
        }
    }
}

/// One row of the lag report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagRow {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// As stored; negative only from a non-Java client.
    pub committed: i64,
    pub ends: Option<PartitionEnds>,
    /// end − committed (see the module docs); None without the partition.
    pub lag: Option<i64>,
    /// Data records (control records excluded) in [committed, end).
    pub pending_records: Option<u64>,
    pub status: Status,
    /// The member the partition is assigned to, from the group's metadata.
    pub member: Option<String>,
    pub host: Option<String>,
    pub client: Option<String>,
}

/// The sums over lag rows every view shows (`lag --by`, its total rows,
/// `report`'s heatmaps): how many rows, their positive lags and their
/// pending records. Each sum saturates (a lag can be near i64::MAX, and two
/// of them would wrap).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LagTotal {
    pub partitions: u64,
    /// The sum of the positive lags (a negative one owes nothing).
    pub lag: i64,
    pub pending_records: u64,
}

impl LagTotal {
    /// Count one row of `lag` and `pending` records.
    pub fn add(&mut self, lag: Option<i64>, pending: Option<u64>) {
        self.partitions = self.partitions.saturating_add(1);
        self.lag = self.lag.saturating_add(lag.unwrap_or(0).max(0));
        self.pending_records = self.pending_records.saturating_add(pending.unwrap_or(0));
    }

    /// Add the rows `other` counted.
    pub fn merge(&mut self, other: &LagTotal) {
        self.partitions = self.partitions.saturating_add(other.partitions);
        self.lag = self.lag.saturating_add(other.lag);
        self.pending_records = self.pending_records.saturating_add(other.pending_records);
    }
}

/// The sums of lag rows by group, by group and topic, by topic and of them
/// all: what `report`'s heatmaps show beside their cells.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagTotals<K> {
    pub groups: BTreeMap<K, LagTotal>,
    /// With how many of the rows have a known lag.
    pub group_topics: BTreeMap<(K, K), (LagTotal, usize)>,
    /// The sums of each topic's [`group_topics`](Self::group_topics).
    pub topics: BTreeMap<K, LagTotal>,
    pub all: LagTotal,
}

impl<K: Ord + Clone> LagTotals<K> {
    /// The totals of `rows`: a group, a topic, a lag and pending records
    /// each.
    pub fn of<'a>(rows: impl IntoIterator<Item = (&'a K, &'a K, Option<i64>, Option<u64>)>) -> Self
    where
        K: 'a,
    {
        let mut t = LagTotals {
            groups: BTreeMap::new(),
            group_topics: BTreeMap::new(),
            topics: BTreeMap::new(),
            all: LagTotal::default(),
        };
        for (group, topic, lag, pending) in rows {
            t.groups.entry(group.clone()).or_default().add(lag, pending);
            let e = t
                .group_topics
                .entry((group.clone(), topic.clone()))
                .or_default();
            e.0.add(lag, pending);
            e.1 += usize::from(lag.is_some());
        }
        for ((_, topic), (sum, _)) in &t.group_topics {
            t.topics.entry(topic.clone()).or_default().merge(sum);
            t.all.merge(sum);
        }
        t
    }
}

/// Count data records with offsets in [from, to), reading from the batch that holds `from`.
pub fn data_records_between(
    p: &Partition,
    from: i64,
    to: i64,
    limits: DecodeLimits,
    meter: Option<&'static Meter>,
) -> Result<u64> {
    if from >= to {
        return Ok(0);
    }
    // From batch headers alone, stepping over the bodies (the cost grows
    // with the batches behind, not their bytes): a batch wholly inside the
    // range counts its recordsCount, a control batch nothing, a batch
    // across an end of the range with no gaps in its offsets the offsets
    // it shares with the range. Only a batch across an end with gaps (a
    // compacted one), and a legacy entry, need their records.
    let mut count = 0u64;
    let mut headers = p.headers_from(from).metered(meter);
    while let Some(h) = headers.next_header()? {
        let Some(b) = h.batch else {
            // A legacy message set (its inner messages need decompressing):
            // count the whole range the slow way.
            return records_between_slowly(p, from, to, limits, meter);
        };
        if b.base_offset >= to {
            break;
        }
        if b.is_control() {
            continue;
        }
        let last = b.base_offset + i64::from(b.last_offset_delta);
        if b.base_offset >= from && last < to {
            count += b.records_count.max(0) as u64;
        } else if i64::from(b.records_count) == i64::from(b.last_offset_delta) + 1 {
            // A batch across an end of the range that holds a record at
            // every offset from base to last (offset deltas strictly
            // increase from 0 to lastOffsetDelta, `LogValidator`): as many
            // records as offsets of the range it covers.
            count += (last.min(to - 1) - b.base_offset.max(from) + 1).max(0) as u64;
        } else {
            count += records_between_slowly(
                p,
                b.base_offset.max(from),
                (last + 1).min(to),
                limits,
                meter,
            )?;
        }
    }
    Ok(count)
}

/// [`data_records_between`] by reading every record: the reference the
/// header count is tested against, and what it falls back to.
pub fn records_between_slowly(
    p: &Partition,
    from: i64,
    to: i64,
    limits: DecodeLimits,
    meter: Option<&'static Meter>,
) -> Result<u64> {
    if from >= to {
        return Ok(0);
    }
    let within = |offset: i64| offset >= from && offset < to;
    let mut count = 0u64;
    let mut scratch = Vec::new();
    let policy = Policy {
        meter,
        ..Policy::VALID_ENTRIES
    };
    let mut walk = p.walk_from(from, policy);
    while let Some(w) = walk.next_entry()? {
        let e = w.entry;
        // A legacy wrapper's offset is its last message's; its first may still be below `to`.
        if matches!(e, Entry::V2(_)) && e.base_offset() >= to {
            break;
        }
        match e {
            Entry::V2(b) if b.header.is_control() => {}
            Entry::V2(b) if b.header.base_offset >= from && w.next_offset <= to => {
                count += b.header.records_count.max(0) as u64;
            }
            Entry::V2(b) => {
                if let Ok(records) = b.records(&mut scratch, limits) {
                    count += records.flatten().filter(|r| within(r.offset)).count() as u64;
                }
            }
            // A compressed wrapper holds many records (`AbstractLegacyRecordBatch`).
            Entry::Legacy(m) => {
                if let Ok(messages) = m.messages(&mut scratch, limits) {
                    count += messages.filter(|r| within(r.offset)).count() as u64;
                }
                if m.offset >= to {
                    break;
                }
            }
        }
    }
    Ok(count)
}

/// Checkpoint files of one data directory.
#[derive(Debug, Default)]
struct DirCheckpoints {
    high_watermarks: BTreeMap<(String, i32), i64>,
    log_starts: BTreeMap<(String, i32), i64>,
}

fn read_checkpoints(dir: &Path) -> Result<DirCheckpoints> {
    Ok(DirCheckpoints {
        high_watermarks: checkpoint::read_offsets(&dir.join(checkpoint::REPLICATION_OFFSET))?
            .unwrap_or_default(),
        log_starts: checkpoint::read_offsets(&dir.join(checkpoint::LOG_START_OFFSET))?
            .unwrap_or_default(),
    })
}

/// How a partition's ends are read: its isolation, the decode limits, the
/// progress meter and what is known of tiered storage.
struct EndsOf<'a> {
    isolation: Isolation,
    limits: DecodeLimits,
    meter: Option<&'static Meter>,
    tiering: &'a Tiering,
}

/// A partition's ends, with its directory's checkpoints.
fn ends_of(p: &Partition, cps: &DirCheckpoints, how: &EndsOf<'_>) -> Result<PartitionEnds> {
    let EndsOf {
        isolation,
        limits,
        meter,
        tiering,
    } = *how;
    let key = (p.topic.clone(), p.partition);
    let checkpointed_start = cps.log_starts.get(&key).copied();
    let starts = tiering.log_starts(p, checkpointed_start);
    let log_start = starts.log_start;
    let log_end = p.loaded_log_end(p.log_end_offset()?, checkpointed_start);
    // As a broker loads it (`Partition.createLog` then
    // `UnifiedLog.updateHighWatermark`): raised to the log start (a
    // negative entry too), lowered to the log end.
    let high_watermark = cps
        .high_watermarks
        .get(&key)
        .map(|&hw| hw.clamp(log_start, log_end));
    let last_stable = match isolation {
        Isolation::ReadUncommitted => None,
        // From the last producer snapshot forward, as a broker loads it.
        Isolation::ReadCommitted => Some(crate::txn::last_stable_offset(
            p,
            high_watermark,
            limits,
            meter,
        )?),
    };
    Ok(PartitionEnds {
        log_start,
        local_log_start: starts.local_log_start,
        tiered: starts.tiered.is_some(),
        log_end,
        high_watermark,
        last_stable,
    })
}

/// The ends of partition `p` of the data directory `data_dir`, as
/// ListOffsets answers them at read_uncommitted: the log start (with
/// `log-start-offset-checkpoint` and `tiering`), the log end and the high
/// watermark (`replication-offset-checkpoint`, clamped into the log).
pub fn partition_ends(p: &Partition, data_dir: &Path, tiering: &Tiering) -> Result<PartitionEnds> {
    let cps = read_checkpoints(data_dir)?;
    let how = EndsOf {
        isolation: Isolation::ReadUncommitted,
        limits: DecodeLimits::default(),
        meter: None,
        tiering,
    };
    ends_of(p, &cps, &how)
}

impl PartitionEnds {
    /// What ListOffsets answers for "latest" at read_uncommitted: the high
    /// watermark, or the log end when no checkpoint gives one.
    pub fn latest(&self) -> i64 {
        self.high_watermark.unwrap_or(self.log_end)
    }
}

/// Several brokers' log directories (their `meta.properties` name more
/// than one node): each partition with copies on several nodes is read on
/// the copy of the replica that leads it, chosen as `klog cluster` chooses
/// ([`choose_leader`]): the KRaft metadata's leader when it has a copy,
/// else the one the controller would elect (ISR, then ELR), else without
/// metadata the newest leader epoch, then the longest log, then the lowest
/// node id. Returns the directories with the other copies left out, and a
/// note for each partition whose leader was chosen rather than named by the
/// metadata. One broker's directories (JBOD) come back as they are.
///
/// Directories whose `meta.properties` name two cluster ids are refused
/// ([`same_cluster`]).
pub fn leader_copies(dirs: Vec<DataDir>) -> Result<(Vec<DataDir>, Vec<String>)> {
    same_cluster(&dirs)?;
    let nodes: Vec<Option<i32>> = dirs
        .iter()
        .map(|d| crate::log::meta::node_id(&d.path))
        .collect();
    let distinct: BTreeSet<i32> = nodes.iter().flatten().copied().collect();
    if distinct.len() <= 1 {
        return Ok((dirs, Vec::new()));
    }
    if let Some(d) = nodes
        .iter()
        .zip(&dirs)
        .find_map(|(n, d)| n.is_none().then_some(d))
    {
        return Err(Error::layout(
            &d.path,
            "has no meta.properties to say which broker it belongs to, beside the log directories of several brokers",
        ));
    }
    let paths: Vec<std::path::PathBuf> = dirs.iter().map(|d| d.path.clone()).collect();
    let image = crate::metadata::newest_image(&paths);
    let shutdowns: Vec<Shutdown> = dirs.iter().map(|d| Shutdown::read(&d.path)).collect();
    // (topic, partition) -> every live copy: (directory index, node, partition).
    type Copies<'a> = BTreeMap<(String, i32), Vec<(usize, i32, &'a Partition)>>;
    let mut copies: Copies<'_> = BTreeMap::new();
    for (i, (d, node)) in dirs.iter().zip(&nodes).enumerate() {
        for p in d.live() {
            copies
                .entry((p.topic.clone(), p.partition))
                .or_default()
                .push((i, node.unwrap_or(-1), p));
        }
    }
    let mut left_out: BTreeSet<(usize, String, i32)> = BTreeSet::new();
    let mut choices = LeaderChoices::default();
    for ((topic, partition), held) in &copies {
        if held.iter().map(|h| h.1).collect::<BTreeSet<_>>().len() < 2 {
            continue;
        }
        let mut candidates = Vec::new();
        for &(i, node, p) in held {
            let epochs = checkpoint::read_leader_epochs(&p.dir.join(checkpoint::LEADER_EPOCH))?;
            let shutdown = &shutdowns[i];
            let registered = image
                .as_ref()
                .and_then(|im| im.brokers.get(&node))
                .map(|b| b.epoch);
            candidates.push(Candidate {
                node,
                latest_epoch: epochs.and_then(|e| e.iter().map(|&(epoch, _)| epoch).max()),
                log_end: p.log_end_offset()?,
                unclean_restart: registers_unclean(
                    shutdown.state,
                    shutdown.broker_epoch,
                    registered,
                ),
            });
        }
        let assigned = image
            .as_ref()
            .and_then(|im| im.topic_by_name(topic)?.partitions.get(partition))
            .map(|r| AssignedPartition::of(*partition, r));
        let rules = Rules {
            elr: image.as_ref().is_some_and(elr_enabled),
            unclean: image
                .as_ref()
                .and_then(|im| unclean_leader_election(im, topic))
                .unwrap_or(false),
        };
        let chosen = choose_leader(&candidates, assigned.as_ref(), rules);
        let (Some(leader), source, detail) = (chosen.leader, chosen.source, chosen.detail) else {
            continue;
        };
        match source {
            LeaderSource::Undecided => choices
                .undecided
                .push(format!("{topic}-{partition} (node {leader})")),
            LeaderSource::Chosen if assigned.is_none() => choices.by_epoch += 1,
            LeaderSource::Chosen => choices
                .chosen
                .push(format!("{topic}-{partition}: {detail}")),
            _ => {}
        }
        for &(i, node, _) in held {
            if node != leader {
                left_out.insert((i, topic.clone(), *partition));
            }
        }
    }
    let notes = choices.notes(&distinct);
    let dirs = dirs
        .into_iter()
        .enumerate()
        .map(|(i, mut d)| {
            d.partitions.retain(|p| {
                p.state != crate::log::PartitionState::Live
                    || !left_out.contains(&(i, p.topic.clone(), p.partition))
            });
            d
        })
        .collect();
    Ok((dirs, notes))
}

/// Refuse log directories whose `meta.properties` name two cluster ids:
/// their offsets topics and partitions are two clusters', which no
/// consumer sees together. A broker refuses such a set of log directories
/// (`MetaPropertiesEnsemble.verify`: "Invalid cluster.id"), and
/// `klog cluster` refuses summaries of two clusters (`merge::log_dirs`).
/// A directory without a readable `meta.properties` names none.
pub fn same_cluster(dirs: &[DataDir]) -> Result<()> {
    let mut first: Option<(String, &Path)> = None;
    for d in dirs {
        let Some(id) = crate::log::meta::read_meta_properties(&d.path.join("meta.properties"))
            .ok()
            .flatten()
            .and_then(|m| m.cluster_id)
        else {
            continue;
        };
        match &first {
            Some((other, from)) if *other != id => {
                return Err(Error::layout(
                    &d.path,
                    format!(
                        "cluster id {id:?} differs from {other:?} in {}: the log directories of two clusters",
                        from.display()
                    ),
                ))
            }
            Some(_) => {}
            None => first = Some((id, &d.path)),
        }
    }
    Ok(())
}

/// The partitions whose leader the metadata does not name.
#[derive(Default)]
struct LeaderChoices {
    /// Several replicas the controller may elect: `topic-partition (node N)`.
    undecided: Vec<String>,
    /// Chosen from the metadata's ISR or ELR: `topic-partition: why`.
    chosen: Vec<String>,
    /// Chosen without metadata, by epoch and log end.
    by_epoch: usize,
}

impl LeaderChoices {
    /// The notes on reading the copies of the nodes `distinct`.
    fn notes(&self, distinct: &BTreeSet<i32>) -> Vec<String> {
        let (undecided, chosen, by_epoch) = (&self.undecided, &self.chosen, self.by_epoch);
        let names: Vec<String> = distinct.iter().map(i32::to_string).collect();
        let mut notes = vec![format!(
            "the log directories of nodes {}: each partition is read on its leader's copy",
            names.join(", ")
        )];
        let some = |v: &[String]| {
            let shown = v.iter().take(3).cloned().collect::<Vec<_>>().join("; ");
            if v.len() > 3 {
                format!("{shown}; and {} more", v.len() - 3)
            } else {
                shown
            }
        };
        if !undecided.is_empty() {
            notes.push(format!(
                "{} partition{} no leader in the metadata and several replicas the controller may elect when the \
                 brokers come back: read on the first in assignment order ({}); `klog cluster` shows the outcome \
                 under each",
                undecided.len(),
                if undecided.len() == 1 { " has" } else { "s have" },
                some(undecided)
            ));
        }
        if !chosen.is_empty() {
            notes.push(format!(
                "leaders chosen, not named by the metadata: {}",
                some(chosen)
            ));
        }
        if by_epoch > 0 {
            notes.push(format!(
                "no KRaft metadata names the leaders of {by_epoch} partition{}: each is read on the replica with the \
                 newest leader epoch, then the longest log, then the lowest node id (every ISR member holds the \
                 newest epoch and every acknowledged offset)",
                if by_epoch == 1 { "" } else { "s" }
            ));
        }
        notes
    }
}

/// Options of a lag computation.
#[derive(Debug, Clone, Default)]
pub struct LagOptions {
    pub isolation: Isolation,
    pub group: Option<String>,
    pub limits: DecodeLimits,
    /// The offsets retention to judge expiry by; none: nothing expires.
    pub retention: Option<crate::offsets::standing::Retention>,
    /// Where to count the bytes of log read, for a progress display.
    pub meter: Option<&'static Meter>,
}

/// The lag of every committed offset in `replay` against the partitions in `dirs`.
/// Several directories (a JBOD broker) are merged; a partition present in two is an error.
pub fn compute(dirs: &[DataDir], replay: &Replay, opts: &LagOptions) -> Result<Vec<LagRow>> {
    let (partitions, cps) = live_partitions(dirs)?;
    let tiering = Tiering::for_dirs(dirs)?;
    let how = EndsOf {
        isolation: opts.isolation,
        limits: opts.limits,
        meter: opts.meter,
        tiering: &tiering,
    };
    let mut ends_cache: BTreeMap<(String, i32), PartitionEnds> = BTreeMap::new();
    let mut rows = Vec::new();
    // Every protocol's members and current assignments (topic ids resolved).
    let views = crate::offsets::group_state::groups(
        replay,
        &crate::offsets::group_state::topic_names(dirs),
        crate::offsets::group_state::Loader::of(dirs),
    );
    let topic_ids = crate::offsets::group_state::topic_ids(dirs);
    let judge = Judge::new(replay, &views, &topic_ids, opts.retention);
    let members = assigned_members(&views);
    for (group, topic, partition, commit) in replay.commits() {
        if opts.group.as_deref().is_some_and(|g| g != group) {
            continue;
        }
        let key = (topic.to_string(), partition);
        let (member, host, client) =
            members
                .get(&(group, topic, partition))
                .map_or((None, None, None), |m| {
                    (
                        Some(m.member_id.clone()),
                        Some(m.client_host.clone()).filter(|h| !h.is_empty()),
                        Some(m.client_id.clone()),
                    )
                });
        let row = |committed, ends, lag, pending_records, status| LagRow {
            group: group.to_string(),
            topic: topic.to_string(),
            partition,
            committed,
            ends,
            lag,
            pending_records,
            status,
            member,
            host,
            client,
        };
        let standing = judge.standing(group, topic, partition, commit);
        let Some(&(p, dir_index)) = partitions.get(&key) else {
            // Without the partition, the stale topic id is still news.
            let status = match standing {
                Standing::TopicRecreated { .. } => Status::TopicRecreated,
                _ => Status::NoPartition,
            };
            rows.push(row(commit.offset, None, None, None, status));
            continue;
        };
        let ends = match ends_cache.get(&key) {
            Some(e) => *e,
            None => {
                let cp = cps
                    .get(dir_index)
                    .ok_or_else(|| Error::Invalid("checkpoint index".into()))?;
                let e = ends_of(p, cp, &how)?;
                ends_cache.insert(key.clone(), e);
                e
            }
        };
        let committed = commit.offset;
        if committed < 0 {
            rows.push(row(
                committed,
                Some(ends),
                None,
                None,
                Status::NoCommittedOffset,
            ));
            continue;
        }
        let (status, lag, pending) = lag_of(p, &ends, committed, &standing, opts)?;
        rows.push(row(commit.offset, Some(ends), Some(lag), pending, status));
    }
    Ok(rows)
}

/// Live partitions by (topic, partition), with the index of their directory.
type LivePartitions<'a> = BTreeMap<(String, i32), (&'a Partition, usize)>;

/// The live partitions of `dirs` by (topic, partition), with the index of
/// their directory, and each directory's checkpoints; a partition live in
/// two directories is refused.
fn live_partitions(dirs: &[DataDir]) -> Result<(LivePartitions<'_>, Vec<DirCheckpoints>)> {
    let mut partitions: LivePartitions<'_> = BTreeMap::new();
    let mut cps = Vec::new();
    for (i, d) in dirs.iter().enumerate() {
        cps.push(read_checkpoints(&d.path)?);
        for p in d.live() {
            if let Some((other, _)) = partitions.insert((p.topic.clone(), p.partition), (p, i)) {
                return Err(Error::layout(
                    &p.dir,
                    format!(
                        "the same partition is also in {} (two live copies)",
                        other.dir.display()
                    ),
                ));
            }
        }
    }
    Ok((partitions, cps))
}

/// A non-negative committed offset of `p` against its `ends`: its status,
/// its lag and the data records pending between it and the end the
/// isolation reads to (`None` when some of them live in remote storage
/// only, where klog cannot count them).
fn lag_of(
    p: &Partition,
    ends: &PartitionEnds,
    committed: i64,
    standing: &Standing,
    opts: &LagOptions,
) -> Result<(Status, i64, Option<u64>)> {
    let end = match opts.isolation {
        Isolation::ReadCommitted => ends.last_stable.unwrap_or(ends.log_end),
        Isolation::ReadUncommitted => ends.high_watermark.unwrap_or(ends.log_end),
    };
    // A commit for an earlier topic first: which clients see it at all
    // decides what its position means (its lag is still
    // kafka-consumer-groups', which fetches it by name). Then where the
    // offset lies in the log: a consumer resets from either end, a commit
    // above the high watermark may point at records a restart truncates,
    // and expiry is news only for an offset that is otherwise ok.
    let status = if let Standing::TopicRecreated { .. } = standing {
        Status::TopicRecreated
    } else if committed < ends.log_start {
        Status::BelowLogStart
    } else if committed > ends.log_end {
        Status::AboveLogEnd
    } else if ends.high_watermark.is_some_and(|hw| committed > hw) {
        Status::AboveHighWatermark
    } else if let Standing::Expired { .. } = standing {
        Status::Expired
    } else {
        Status::Ok
    };
    // kafka-consumer-groups' lag, unclamped (`ConsumerGroupCommand.getLag`:
    // `end - offset0`): negative above the high watermark or the log end.
    // Only under read_committed can an ok commit (at most the high
    // watermark) lie above the end, the last stable offset: the consumer
    // has nothing to read until the transaction ends, lag 0.
    let lag = end.saturating_sub(committed);
    let lag = if matches!(status, Status::Ok | Status::Expired) {
        lag.max(0)
    } else {
        lag
    };
    let pending_from = committed.max(ends.log_start);
    if pending_from < ends.local_log_start.min(end) {
        // From remote segments (`RemoteLogManager.read`): not on these disks.
        return Ok((status, lag, None));
    }
    let pending = data_records_between(p, pending_from, end, opts.limits, opts.meter)?;
    Ok((status, lag, Some(pending)))
}

/// Each (group, topic, partition) of a current assignment, with the
/// member it is assigned to (a classic group's GroupMetadataValue or a
/// new-protocol group's current member assignment; the first member in
/// the group's order when two claim it), keyed once so each commit's
/// lookup costs O(1) whatever the number of groups and members.
fn assigned_members(
    views: &[crate::offsets::group_state::GroupView],
) -> HashMap<(&str, &str, i32), &crate::offsets::group_state::MemberView> {
    let mut members = HashMap::new();
    for g in views {
        for m in &g.members {
            for (topic, partitions) in &m.assignment {
                for &p in partitions {
                    members
                        .entry((g.group.as_str(), topic.as_str(), p))
                        .or_insert(m);
                }
            }
        }
    }
    members
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn totals_sum_by_group_topic_and_all_saturating() {
        let (a, b, x, y) = ("a", "b", "x", "y");
        let rows = [
            (&a, &x, Some(5), Some(2)),
            (&a, &x, Some(-3), None),
            (&a, &y, None, None),
            (&b, &x, Some(i64::MAX), Some(1)),
            (&b, &y, Some(1), None),
        ];
        let t = LagTotals::of(rows);
        let total = |partitions, lag, pending_records| LagTotal {
            partitions,
            lag,
            pending_records,
        };
        assert_eq!(t.groups[&a], total(3, 5, 2));
        assert_eq!(t.group_topics[&(a, x)], (total(2, 5, 2), 2));
        // A row without a known lag counts, with no lag.
        assert_eq!(t.group_topics[&(a, y)], (total(1, 0, 0), 0));
        assert_eq!(t.topics[&x], total(3, i64::MAX, 3));
        assert_eq!(t.topics[&y], total(2, 1, 0));
        assert_eq!(t.all, total(5, i64::MAX, 3));
    }
}
