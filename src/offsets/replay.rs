//! Replaying the offsets topic into the committed-offset table.
//!
//! Records are applied in log order, partition by partition: the last value
//! for a (group, topic, partition) wins and a null value (tombstone) deletes
//! it. Offset commits written inside a transaction are held as pending for
//! their producer and applied only when that producer's COMMIT marker
//! follows in the same partition; an ABORT discards them. A record that
//! does not decode is reported with its partition, offset and byte position
//! and skipped, so one bad record never hides the rest of the table.
//!
//! The table is a `BTreeMap` keyed by group, then topic, then partition, so
//! every listing comes out in the same order on every run.

use std::collections::BTreeMap;
use std::path::PathBuf;

use crate::error::{DecodeError, Result};
use crate::format::control::{self, ControlType};
use crate::format::{DecodeLimits, Entry};
use crate::log::walk::Step;
use crate::log::Partition;
use crate::log::Policy;
use crate::offsets::group::{decode_group_metadata, GroupMetadata};
use crate::offsets::records::{self, CoordinatorRecord};
use crate::offsets::{decode_key, decode_offset_commit_value, OffsetsKey};

/// One committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Commit {
    /// The next offset the group will read.
    pub offset: u64,
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp: i64,
    pub expire_timestamp: Option<i64>,
    pub value_version: i16,
    /// Where the record sits in the offsets topic.
    pub log_partition: i32,
    pub log_offset: i64,
}

/// Committed offsets: group → topic → partition → commit.
pub type Table = BTreeMap<String, BTreeMap<String, BTreeMap<i32, Commit>>>;

/// A record that could not be decoded (or a damaged batch or tail).
#[derive(Debug, Clone)]
pub struct BadRecord {
    pub file: PathBuf,
    pub log_partition: i32,
    /// The record's (or batch's) offset; -1 when unknown (a torn tail).
    pub log_offset: i64,
    pub error: DecodeError,
}

/// What happened to a key, for `--history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Commit,
    Tombstone,
    /// A transactional commit, not yet applied.
    Pending,
    /// A pending commit applied by its producer's COMMIT marker.
    TxnCommitted,
    /// A pending commit discarded by an ABORT marker.
    TxnAborted,
}

impl EventKind {
    /// snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Commit => "commit",
            EventKind::Tombstone => "tombstone",
            EventKind::Pending => "pending",
            EventKind::TxnCommitted => "txn_committed",
            EventKind::TxnAborted => "txn_aborted",
        }
    }
}

/// One entry of the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub log_partition: i32,
    pub log_offset: i64,
    /// Byte position of the batch holding the record.
    pub position: u64,
    pub kind: EventKind,
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub offset: Option<u64>,
    pub commit_timestamp: Option<i64>,
}

/// Counters for the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub records: u64,
    pub offset_commits: u64,
    pub tombstones: u64,
    pub group_metadata: u64,
    /// Newer record types (3 and up), by type.
    pub skipped_types: BTreeMap<i16, u64>,
    pub control_records: u64,
    pub txn_commits_applied: u64,
    pub txn_commits_aborted: u64,
    /// Log end offset of each offsets partition read.
    pub log_end_offsets: BTreeMap<i32, i64>,
}

/// Where to stop replaying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsOf {
    /// Replay records with offsets below this one (in every offsets partition).
    Offset(i64),
    /// Replay records up to the first one stamped later than this (ms).
    Timestamp(i64),
}

/// How to replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub as_of: Option<AsOf>,
    /// Keep every event (for `--history`), filtered by `group` and `topic`.
    pub history: bool,
    pub group: Option<String>,
    pub topic: Option<String>,
    pub limits: DecodeLimits,
}

#[derive(Debug, Clone)]
struct PendingCommit {
    group: String,
    topic: String,
    partition: i32,
    value: Option<Commit>,
    position: u64,
}

/// A live coordinator record and where it was written.
#[derive(Debug, Clone)]
pub struct CoordinatorEntry {
    pub log_partition: i32,
    pub log_offset: i64,
    /// The record's timestamp (ms): when the coordinator wrote this state.
    pub timestamp: i64,
    pub record: CoordinatorRecord,
}

/// The replayed state of one or more offsets partitions.
#[derive(Debug, Default)]
pub struct Replay {
    pub opts: ReplayOptions,
    pub table: Table,
    /// Classic groups' latest metadata, by group.
    pub groups: BTreeMap<String, GroupMetadata>,
    pub stats: Stats,
    pub bad: Vec<BadRecord>,
    pub history: Vec<Event>,
    /// The newer coordinator records (types 3 and up: consumer, share and
    /// streams groups) that are live: keyed by type and key, the last value
    /// wins and a tombstone deletes, as the coordinator loads them. The
    /// value is the record's offsets partition, offset and timestamp with the record.
    pub coordinator: BTreeMap<(i16, String), CoordinatorEntry>,
    /// The timestamp of the record being applied.
    timestamp: i64,
    /// Transactional commits still waiting for a marker: (offsets partition, producer id) → commits.
    pending: BTreeMap<(i32, i64), Vec<PendingCommit>>,
}

impl Replay {
    /// An empty replay.
    pub fn new(opts: ReplayOptions) -> Self {
        Replay {
            opts,
            ..Replay::default()
        }
    }

    /// Number of live keys in the table.
    pub fn live_keys(&self) -> usize {
        self.table
            .values()
            .flat_map(|t| t.values())
            .map(BTreeMap::len)
            .sum()
    }

    /// Transactional commits still pending (no marker yet), as (partition, producer id, group, topic, partition, offset).
    pub fn pending(&self) -> impl Iterator<Item = (i32, i64, &str, &str, i32, Option<u64>)> {
        self.pending.iter().flat_map(|((lp, pid), list)| {
            list.iter().map(move |p| {
                (
                    *lp,
                    *pid,
                    p.group.as_str(),
                    p.topic.as_str(),
                    p.partition,
                    p.value.as_ref().map(|v| v.offset),
                )
            })
        })
    }

    /// Number of pending transactional commits.
    pub fn pending_count(&self) -> usize {
        self.pending.values().map(Vec::len).sum()
    }

    /// Every live commit in table order.
    pub fn commits(&self) -> impl Iterator<Item = (&str, &str, i32, &Commit)> {
        self.table.iter().flat_map(|(g, topics)| {
            topics.iter().flat_map(move |(t, parts)| {
                parts
                    .iter()
                    .map(move |(p, c)| (g.as_str(), t.as_str(), *p, c))
            })
        })
    }

    /// The commit for one key, if live.
    pub fn get(&self, group: &str, topic: &str, partition: i32) -> Option<&Commit> {
        self.table.get(group)?.get(topic)?.get(&partition)
    }

    fn wanted(&self, group: &str, topic: &str) -> bool {
        self.opts.group.as_deref().is_none_or(|g| g == group)
            && self.opts.topic.as_deref().is_none_or(|t| t == topic)
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        lp: i32,
        log_offset: i64,
        position: u64,
        kind: EventKind,
        group: &str,
        topic: &str,
        partition: i32,
        c: Option<&Commit>,
    ) {
        if self.opts.history && self.wanted(group, topic) {
            self.history.push(Event {
                log_partition: lp,
                log_offset,
                position,
                kind,
                group: group.to_string(),
                topic: topic.to_string(),
                partition,
                offset: c.map(|c| c.offset),
                commit_timestamp: c.map(|c| c.commit_timestamp),
            });
        }
    }

    fn apply(&mut self, group: &str, topic: &str, partition: i32, value: Option<Commit>) {
        match value {
            Some(c) => {
                let topics = match self.table.get_mut(group) {
                    Some(t) => t,
                    None => self.table.entry(group.to_string()).or_default(),
                };
                let parts = match topics.get_mut(topic) {
                    Some(p) => p,
                    None => topics.entry(topic.to_string()).or_default(),
                };
                parts.insert(partition, c);
            }
            None => {
                if let Some(topics) = self.table.get_mut(group) {
                    if let Some(parts) = topics.get_mut(topic) {
                        parts.remove(&partition);
                        if parts.is_empty() {
                            topics.remove(topic);
                        }
                    }
                    if topics.is_empty() {
                        self.table.remove(group);
                    }
                }
            }
        }
    }

    /// Replay every segment of one offsets partition.
    pub fn replay_partition(&mut self, p: &Partition) -> Result<()> {
        let lp = p.partition;
        let mut scratch = Vec::new();
        let mut read_to = None;
        let mut walk = p.walk(Policy::VALID_ENTRIES);
        'segments: loop {
            let w = match walk.next_step()? {
                None => break,
                Some(Step::Entry(w)) => w,
                // A batch that fails its CRC, or bytes that cannot be framed, are not replayed: say where.
                Some(Step::Damage(d)) => {
                    self.bad.push(BadRecord {
                        file: d.file,
                        log_partition: lp,
                        log_offset: d.base_offset.unwrap_or(-1),
                        error: d.error,
                    });
                    continue;
                }
                Some(_) => continue,
            };
            let (seg, entry) = (w.segment, w.entry);
            {
                if let Some(AsOf::Offset(end)) = self.opts.as_of {
                    if entry.base_offset() >= end {
                        break 'segments;
                    }
                }
                read_to = Some(w.next_offset);
                let bad = |error| BadRecord {
                    file: seg.log.clone(),
                    log_partition: lp,
                    log_offset: entry.base_offset(),
                    error,
                };
                match entry {
                    Entry::V2(batch) => {
                        let h = batch.header;
                        let records = match batch.records(&mut scratch, self.opts.limits) {
                            Ok(r) => r,
                            Err(e) => {
                                self.bad.push(bad(e));
                                continue;
                            }
                        };
                        for r in records {
                            let r = match r {
                                Ok(r) => r,
                                Err(e) => {
                                    self.bad.push(bad(e));
                                    break;
                                }
                            };
                            match self.opts.as_of {
                                Some(AsOf::Offset(end)) if r.offset >= end => break 'segments,
                                Some(AsOf::Timestamp(ts)) if r.timestamp > ts => break 'segments,
                                _ => {}
                            }
                            self.stats.records += 1;
                            let at = if r.position >= batch.position {
                                r.position
                            } else {
                                batch.position
                            };
                            if h.is_control() {
                                self.stats.control_records += 1;
                                match control::decode(r.key, r.value, at) {
                                    Ok(c)
                                        if c.kind == ControlType::Commit
                                            || c.kind == ControlType::Abort =>
                                    {
                                        self.end_transaction(
                                            lp,
                                            h.producer_id,
                                            c.kind == ControlType::Commit,
                                            r.offset,
                                        );
                                    }
                                    Ok(_) => {}
                                    Err(error) => self.bad.push(BadRecord {
                                        file: seg.log.clone(),
                                        log_partition: lp,
                                        log_offset: r.offset,
                                        error,
                                    }),
                                }
                                continue;
                            }
                            let txn = h.is_transactional().then_some(h.producer_id);
                            self.timestamp = r.timestamp;
                            if let Err(error) =
                                self.record(lp, r.offset, batch.position, at, r.key, r.value, txn)
                            {
                                self.bad.push(BadRecord {
                                    file: seg.log.clone(),
                                    log_partition: lp,
                                    log_offset: r.offset,
                                    error,
                                });
                            }
                        }
                    }
                    Entry::Legacy(m) => {
                        if m.compression() != Some(crate::format::Compression::None) {
                            // Compressed legacy wrappers need the legacy inner-message reader.
                            continue;
                        }
                        if let Some(AsOf::Offset(end)) = self.opts.as_of {
                            if m.offset >= end {
                                break 'segments;
                            }
                        }
                        self.stats.records += 1;
                        self.timestamp = m.timestamp;
                        if let Err(error) =
                            self.record(lp, m.offset, m.position, m.position, m.key, m.value, None)
                        {
                            self.bad.push(BadRecord {
                                file: seg.log.clone(),
                                log_partition: lp,
                                log_offset: m.offset,
                                error,
                            });
                        }
                    }
                }
            }
        }
        let log_end = match self.opts.as_of {
            Some(_) => read_to.unwrap_or_else(|| p.log_start_offset(None)),
            None => p.log_end_offset()?,
        };
        self.stats.log_end_offsets.insert(lp, log_end);
        Ok(())
    }

    /// Apply one offsets-topic record.
    #[allow(clippy::too_many_arguments)]
    fn record(
        &mut self,
        lp: i32,
        log_offset: i64,
        batch_position: u64,
        at: u64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        txn_producer: Option<i64>,
    ) -> Result<(), DecodeError> {
        let key = key.ok_or(DecodeError::new(
            at,
            crate::error::DecodeErrorKind::UnexpectedNull {
                field: "offsets record key",
            },
        ))?;
        match decode_key(key, at)? {
            OffsetsKey::OffsetCommit {
                group,
                topic,
                partition,
                ..
            } => {
                let commit = match value {
                    None => None,
                    Some(v) => {
                        let d = decode_offset_commit_value(v, at)?;
                        Some(Commit {
                            offset: d.offset,
                            leader_epoch: d.leader_epoch,
                            metadata: d.metadata,
                            commit_timestamp: d.commit_timestamp,
                            expire_timestamp: d.expire_timestamp,
                            value_version: d.version,
                            log_partition: lp,
                            log_offset,
                        })
                    }
                };
                if let Some(pid) = txn_producer {
                    self.event(
                        lp,
                        log_offset,
                        batch_position,
                        EventKind::Pending,
                        group,
                        topic,
                        partition,
                        commit.as_ref(),
                    );
                    self.pending
                        .entry((lp, pid))
                        .or_default()
                        .push(PendingCommit {
                            group: group.to_string(),
                            topic: topic.to_string(),
                            partition,
                            value: commit,
                            position: batch_position,
                        });
                    return Ok(());
                }
                match &commit {
                    Some(_) => self.stats.offset_commits += 1,
                    None => self.stats.tombstones += 1,
                }
                let kind = if commit.is_some() {
                    EventKind::Commit
                } else {
                    EventKind::Tombstone
                };
                self.event(
                    lp,
                    log_offset,
                    batch_position,
                    kind,
                    group,
                    topic,
                    partition,
                    commit.as_ref(),
                );
                self.apply(group, topic, partition, commit);
            }
            OffsetsKey::GroupMetadata { group } => {
                self.stats.group_metadata += 1;
                match value {
                    None => {
                        self.groups.remove(group);
                    }
                    Some(v) => {
                        let g = decode_group_metadata(v, at)?;
                        self.groups.insert(group.to_string(), g);
                    }
                }
            }
            OffsetsKey::Other { record_type } => {
                *self.stats.skipped_types.entry(record_type).or_default() += 1;
                let r = records::decode(records::GROUP_RECORDS, key, value, at);
                if let Some(k) = &r.key {
                    let id = (record_type, k.to_string());
                    if r.value.is_none() {
                        self.coordinator.remove(&id);
                    } else {
                        self.coordinator.insert(
                            id,
                            CoordinatorEntry {
                                log_partition: lp,
                                log_offset,
                                timestamp: self.timestamp,
                                record: r,
                            },
                        );
                    }
                }
            }
        }
        Ok(())
    }

    fn end_transaction(&mut self, lp: i32, pid: i64, commit: bool, marker_offset: i64) {
        let Some(list) = self.pending.remove(&(lp, pid)) else {
            return;
        };
        for p in list {
            let kind = if commit {
                EventKind::TxnCommitted
            } else {
                EventKind::TxnAborted
            };
            self.event(
                lp,
                marker_offset,
                p.position,
                kind,
                &p.group,
                &p.topic,
                p.partition,
                p.value.as_ref(),
            );
            if commit {
                self.stats.txn_commits_applied += 1;
                match &p.value {
                    Some(_) => self.stats.offset_commits += 1,
                    None => self.stats.tombstones += 1,
                }
                self.apply(&p.group, &p.topic, p.partition, p.value);
            } else {
                self.stats.txn_commits_aborted += 1;
            }
        }
    }
}
