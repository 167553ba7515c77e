//! Consumer lag: each committed offset against its partition's log.
//!
//! For every (group, topic, partition) in the replayed table, the partition
//! is looked up in the data directories. Its ends come from the files:
//! - log start: the first segment's base offset, or the
//!   `log-start-offset-checkpoint` entry when that is higher (after
//!   DeleteRecords it can lie inside the first segment);
//! - log end: one past the last offset of the last whole batch, read from the
//!   last segment's last offset-index entry onwards, so the cost does not
//!   grow with the partition's size;
//! - high watermark: `replication-offset-checkpoint`, when present;
//! - last stable offset (read_committed only; it needs a pass over the
//!   partition): the first offset of the earliest open transaction, else the
//!   end.
//!
//! lag = end − committed, where end is the high watermark when known, else
//! the log end offset, and the last stable offset under read_committed.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};
use crate::format::control::{self, ControlType};
use crate::format::{index, DecodeLimits, Entry};
use crate::log::checkpoint;
use crate::log::segment::SegmentReader;
use crate::log::{DataDir, Partition, SegmentFiles};
use crate::offsets::Replay;

/// Which end a consumer can read to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// Up to the high watermark (or log end).
    #[default]
    ReadUncommitted,
    /// Up to the last stable offset.
    ReadCommitted,
}

/// A partition's offsets as the files tell them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PartitionEnds {
    pub log_start: i64,
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
    /// No such partition on these disks.
    NoPartition,
}

impl Status {
    /// snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            Status::Ok => "ok",
            Status::BelowLogStart => "below_log_start",
            Status::AboveLogEnd => "above_log_end",
            Status::NoPartition => "no_partition",
        }
    }
}

/// One row of the lag report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LagRow {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub committed: u64,
    pub ends: Option<PartitionEnds>,
    /// end − committed (see the module docs); None without the partition.
    pub lag: Option<i64>,
    /// Data records (control records excluded) in [committed, end).
    pub pending_records: Option<u64>,
    pub status: Status,
    /// The member the partition is assigned to, from the group's metadata.
    pub member: Option<String>,
    pub client: Option<String>,
}

/// The log end offset of a partition: scan the last segment from its last
/// offset-index entry. Stops at the first damaged byte (the end of the valid log).
pub fn log_end_offset(p: &Partition) -> Result<i64> {
    let Some(last) = p.segments.last() else {
        return Ok(0);
    };
    let start = last_index_position(last);
    match scan_end(last, start) {
        Ok(Some(end)) => Ok(end),
        // The index pointed somewhere that is not a batch: scan the whole segment.
        _ => Ok(scan_end(last, 0)?.unwrap_or(last.base_offset)),
    }
}

fn scan_end(seg: &SegmentFiles, start: u64) -> Result<Option<i64>> {
    let mut r = SegmentReader::open_at(&seg.log, start)?;
    let mut end = None;
    while let Some(e) = r.next_entry()? {
        if !e.crc_valid() {
            break;
        }
        end = Some(e.last_offset() + 1);
    }
    if start > 0 && end.is_none() {
        return Ok(None);
    }
    Ok(Some(end.unwrap_or(seg.base_offset)))
}

/// Where to start reading `seg` to find `offset` (see [`index::start_position`]).
fn start_position(seg: &SegmentFiles, offset: i64) -> u64 {
    let bytes = seg
        .index
        .as_ref()
        .and_then(|path| std::fs::read(path).ok())
        .unwrap_or_default();
    index::start_position(&bytes, seg.base_offset, offset)
}

/// Position of the last usable offset-index entry (0 without one).
fn last_index_position(seg: &SegmentFiles) -> u64 {
    start_position(seg, i64::MAX)
}

/// The segment that holds `offset` and where to start reading in it.
fn seek(p: &Partition, offset: i64) -> Option<(&SegmentFiles, u64)> {
    let i = p
        .segments
        .partition_point(|s| s.base_offset <= offset)
        .checked_sub(1)?;
    let seg = p.segments.get(i)?;
    Some((seg, start_position(seg, offset)))
}

/// Count data records with offsets in [from, to), reading from the batch that holds `from`.
pub fn data_records_between(
    p: &Partition,
    from: i64,
    to: i64,
    limits: DecodeLimits,
) -> Result<u64> {
    if from >= to {
        return Ok(0);
    }
    let first = match seek(p, from) {
        Some((seg, pos)) => (seg.base_offset, pos),
        None => (p.segments.first().map_or(0, |s| s.base_offset), 0),
    };
    let mut count = 0u64;
    let mut scratch = Vec::new();
    for seg in p.segments.iter().filter(|s| s.base_offset >= first.0) {
        let start = if seg.base_offset == first.0 {
            first.1
        } else {
            0
        };
        let mut r = SegmentReader::open_at(&seg.log, start)?;
        while let Some(e) = r.next_entry()? {
            if e.base_offset() >= to {
                return Ok(count);
            }
            if e.last_offset() < from || !e.crc_valid() {
                continue;
            }
            match e {
                Entry::V2(b) if b.header.is_control() => {}
                Entry::V2(b) if b.header.base_offset >= from && b.header.last_offset() < to => {
                    count += b.header.records_count.max(0) as u64;
                }
                Entry::V2(b) => {
                    if let Ok(records) = b.records(&mut scratch, limits) {
                        count += records
                            .flatten()
                            .filter(|r| r.offset >= from && r.offset < to)
                            .count() as u64;
                    }
                }
                Entry::Legacy(_) => count += 1,
            }
        }
    }
    Ok(count)
}

/// The first offset of the earliest transaction still open at the end of the log, if any.
pub fn first_open_transaction(p: &Partition, limits: DecodeLimits) -> Result<Option<i64>> {
    let mut open: BTreeMap<i64, i64> = BTreeMap::new();
    let mut scratch = Vec::new();
    for seg in &p.segments {
        let mut r = SegmentReader::open(&seg.log)?;
        while let Some(e) = r.next_entry()? {
            let Entry::V2(b) = e else { continue };
            let h = b.header;
            if !h.is_transactional() || !b.crc_valid() {
                continue;
            }
            if h.is_control() {
                let ends = b
                    .records(&mut scratch, limits)
                    .ok()
                    .and_then(|mut it| it.next())
                    .and_then(|r| r.ok())
                    .and_then(|r| control::decode(r.key, r.value, r.position).ok());
                if ends
                    .is_some_and(|c| c.kind == ControlType::Commit || c.kind == ControlType::Abort)
                {
                    open.remove(&h.producer_id);
                }
            } else {
                open.entry(h.producer_id).or_insert(h.base_offset);
            }
        }
    }
    Ok(open.values().min().copied())
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

/// A partition's ends, with its directory's checkpoints.
fn ends_of(
    p: &Partition,
    cps: &DirCheckpoints,
    isolation: Isolation,
    limits: DecodeLimits,
) -> Result<PartitionEnds> {
    let key = (p.topic.clone(), p.partition);
    let first_base = p.segments.first().map_or(0, |s| s.base_offset);
    let log_end = log_end_offset(p)?;
    let log_start = cps
        .log_starts
        .get(&key)
        .copied()
        .unwrap_or(first_base)
        .max(first_base);
    let high_watermark = cps
        .high_watermarks
        .get(&key)
        .map(|&hw| hw.clamp(log_start, log_end));
    let last_stable = match isolation {
        Isolation::ReadUncommitted => None,
        Isolation::ReadCommitted => {
            let end = high_watermark.unwrap_or(log_end);
            Some(first_open_transaction(p, limits)?.map_or(end, |first| first.min(end)))
        }
    };
    Ok(PartitionEnds {
        log_start,
        log_end,
        high_watermark,
        last_stable,
    })
}

/// Options of a lag computation.
#[derive(Debug, Clone, Default)]
pub struct LagOptions {
    pub isolation: Isolation,
    pub group: Option<String>,
    pub limits: DecodeLimits,
}

/// The lag of every committed offset in `replay` against the partitions in `dirs`.
/// Several directories (a JBOD broker) are merged; a partition present in two is an error.
pub fn compute(dirs: &[DataDir], replay: &Replay, opts: &LagOptions) -> Result<Vec<LagRow>> {
    let mut partitions: BTreeMap<(String, i32), (&Partition, usize)> = BTreeMap::new();
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
    let mut ends_cache: BTreeMap<(String, i32), PartitionEnds> = BTreeMap::new();
    let mut rows = Vec::new();
    for (group, topic, partition, commit) in replay.commits() {
        if opts.group.as_deref().is_some_and(|g| g != group) {
            continue;
        }
        let key = (topic.to_string(), partition);
        let (member, client) = assigned_member(replay, group, topic, partition);
        let Some(&(p, dir_index)) = partitions.get(&key) else {
            rows.push(LagRow {
                group: group.to_string(),
                topic: topic.to_string(),
                partition,
                committed: commit.offset,
                ends: None,
                lag: None,
                pending_records: None,
                status: Status::NoPartition,
                member,
                client,
            });
            continue;
        };
        let ends = match ends_cache.get(&key) {
            Some(e) => *e,
            None => {
                let cp = cps
                    .get(dir_index)
                    .ok_or_else(|| Error::Invalid("checkpoint index".into()))?;
                let e = ends_of(p, cp, opts.isolation, opts.limits)?;
                ends_cache.insert(key.clone(), e);
                e
            }
        };
        let end = match opts.isolation {
            Isolation::ReadCommitted => ends.last_stable.unwrap_or(ends.log_end),
            Isolation::ReadUncommitted => ends.high_watermark.unwrap_or(ends.log_end),
        };
        let committed = i64::try_from(commit.offset).unwrap_or(i64::MAX);
        let status = if committed < ends.log_start {
            Status::BelowLogStart
        } else if committed > ends.log_end {
            Status::AboveLogEnd
        } else {
            Status::Ok
        };
        // A committed offset between the checkpointed high watermark and the
        // log end means the checkpoint is older than the commit: nothing is left.
        let lag = if status == Status::Ok {
            (end - committed).max(0)
        } else {
            end - committed
        };
        let pending_from = committed.max(ends.log_start);
        let pending = data_records_between(p, pending_from, end, opts.limits)?;
        rows.push(LagRow {
            group: group.to_string(),
            topic: topic.to_string(),
            partition,
            committed: commit.offset,
            ends: Some(ends),
            lag: Some(lag),
            pending_records: Some(pending),
            status,
            member,
            client,
        });
    }
    Ok(rows)
}

fn assigned_member(
    replay: &Replay,
    group: &str,
    topic: &str,
    partition: i32,
) -> (Option<String>, Option<String>) {
    let Some(g) = replay.groups.get(group) else {
        return (None, None);
    };
    for m in &g.members {
        if m.assignment
            .iter()
            .any(|(t, parts)| t == topic && parts.contains(&partition))
        {
            return (Some(m.member_id.clone()), Some(m.client_id.clone()));
        }
    }
    (None, None)
}
