//! Producer state of a partition, from one pass over its log: what
//! idempotent and transactional producers left on disk.
//!
//! For every producer id: the latest epoch, the last sequence, the first and
//! last offsets it wrote, and its open transaction, if any. Checked on the
//! way, each with file, position and offsets:
//! - sequences: within one epoch a batch's base sequence must follow the
//!   previous batch's last sequence (+1, wrapping at `i32::MAX` to 0); a gap
//!   is `out_of_order_sequence`, an earlier or equal one `duplicate_sequence`
//!   (the broker should have dropped it); a new epoch starts at 0;
//! - epochs never go backwards (`epoch_regression`, a zombie's write);
//! - a COMMIT/ABORT marker for a producer with no open transaction
//!   (`marker_without_transaction`, a note: a coordinator may write markers
//!   for partitions that received no data);
//! - a transactional batch from an epoch older than one already seen
//!   (`zombie_transactional_write`);
//! - transactions still open at the end (whether one hangs is
//!   [`hanging::judge`]'s to say, with "now" and the coordinator's state).
//!
//! Only batch headers are read, plus the one record of each control batch,
//! so the pass streams: memory is the largest batch plus the producer table.

pub mod coordinator;
pub mod fetch;
pub mod hanging;
pub mod producer;
pub mod snapshot;
pub mod txnlog;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::format::control::{self, ControlRecord, ControlType};
use crate::format::index::TxnEntry;
use crate::format::{BatchHeader, BatchView, DecodeLimits, Entry};
use crate::log::walk::Meter;
use crate::log::{Partition, Policy, SegmentFiles};

/// Which records a consumer reads (Kafka's `IsolationLevel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Isolation {
    /// Everything up to the high watermark (the log end offset when no checkpoint gives it).
    #[default]
    ReadUncommitted,
    /// Up to the last stable offset, without aborted transactions.
    ReadCommitted,
}

impl Isolation {
    /// The command-line spelling.
    pub fn name(self) -> &'static str {
        match self {
            Isolation::ReadUncommitted => "read-uncommitted",
            Isolation::ReadCommitted => "read-committed",
        }
    }
}

impl std::str::FromStr for Isolation {
    type Err = String;

    /// `read-committed` or Kafka's own `read_committed` (likewise uncommitted).
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        match s {
            "read-uncommitted" | "read_uncommitted" => Ok(Isolation::ReadUncommitted),
            "read-committed" | "read_committed" => Ok(Isolation::ReadCommitted),
            _ => Err(format!(
                "'{s}' is not an isolation level: read-uncommitted or read-committed"
            )),
        }
    }
}

/// One producer's state at the end of the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerState {
    pub producer_id: i64,
    pub epoch: i16,
    /// Kafka's `lastSeq`: -1 when the producer wrote no sequenced batch at
    /// this epoch (a marker at a new epoch clears it).
    pub last_sequence: i32,
    /// Kafka's `lastDataOffset`: the last offset of its last data batch at
    /// this epoch (markers do not move it; -1 when cleared) — what a
    /// producer snapshot records.
    pub last_data_offset: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    /// Kafka's `lastTimestamp`: the max timestamp of its last batch, or
    /// the timestamp of its last marker.
    pub last_timestamp: i64,
    /// The coordinator epoch of its last COMMIT/ABORT marker
    /// (`ProducerStateEntry.coordinatorEpoch`), -1 before one.
    pub coordinator_epoch: i32,
    pub batches: u64,
    pub transactional: bool,
    pub committed: u64,
    pub aborted: u64,
    pub open: Option<OpenTxn>,
}

/// A transaction with data but no marker yet.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OpenTxn {
    pub first_offset: i64,
    /// Timestamp of its first batch (max timestamp of that batch).
    pub start_timestamp: i64,
    pub position: u64,
}

/// A transaction ended by an ABORT marker (what `.txnindex` records).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    /// Offset of the ABORT marker.
    pub last_offset: i64,
    /// The last stable offset when it was aborted (see
    /// [`PartitionState::last_stable_at_marker`]): the `.txnindex` field.
    pub last_stable_offset: i64,
}

pub use crate::log::findings::{Finding, Kind as FindingKind};

/// A producer-state finding at the batch at `position` of `file`.
fn finding(
    kind: FindingKind,
    file: impl Into<PathBuf>,
    position: u64,
    base_offset: i64,
    producer_id: i64,
    detail: String,
) -> Finding {
    let f = Finding::new(kind, file, position, Some(base_offset), detail);
    if producer_id >= 0 {
        f.with_producer(producer_id)
    } else {
        f
    }
}

/// The producer state of one partition.
#[derive(Debug, Clone, Default)]
pub struct PartitionState {
    pub producers: BTreeMap<i64, ProducerState>,
    pub aborted: Vec<AbortedTxn>,
    /// ABORT markers that completed no transaction here, as (producer id,
    /// offset): a coordinator marks every partition of a transaction, and
    /// the log cleaner keeps an aborted transaction's marker after it
    /// removed the transaction's batches.
    pub lone_aborts: Vec<(i64, i64)>,
    pub findings: Vec<Finding>,
    /// One past the last offset of the last whole batch.
    pub log_end: i64,
    /// The first segment's base offset (where the walk started).
    pub log_start: i64,
    pub max_timestamp: i64,
    pub batches: u64,
    pub control_batches: u64,
    /// The high watermark the state was computed against.
    pub high_watermark: Option<i64>,
    /// The first offset of the earliest completed transaction whose marker
    /// is at or above the high watermark (not replicated yet).
    pub first_unreplicated: Option<i64>,
}

impl PartitionState {
    /// The last stable offset, the one definition every command uses
    /// (Kafka's `UnifiedLog.lastStableOffset`: `ProducerStateManager`'s first
    /// unstable offset, bounded by the high watermark): the first offset of
    /// the earliest transaction still open, or completed by a marker at or
    /// above the high watermark, else the high watermark — the log end when
    /// no checkpoint gives one.
    ///
    /// A transaction known only from a producer snapshot, whose first
    /// batches retention deleted, pins the LSO at the log start
    /// (`UnifiedLog.updateFirstUnstableOffset` raises a first unstable
    /// offset below the log start to it).
    pub fn last_stable_offset(&self) -> i64 {
        let end = self.high_watermark.unwrap_or(self.log_end);
        self.producers
            .values()
            .filter_map(|p| p.open.map(|o| o.first_offset))
            .chain(self.first_unreplicated)
            .min()
            .map_or(end, |first| first.max(self.log_start).min(end))
    }

    /// The last stable offset a `.txnindex` entry records for a transaction
    /// of `producer_id` completed by the marker at `marker` (Kafka's
    /// `ProducerStateManager.lastStableOffset(CompletedTxn)`): the first
    /// offset of the earliest other transaction still open, else the
    /// offset after the marker.
    pub fn last_stable_at_marker(&self, producer_id: i64, marker: i64) -> i64 {
        self.producers
            .values()
            .filter(|p| p.producer_id != producer_id)
            .filter_map(|p| p.open.map(|o| o.first_offset))
            .min()
            .unwrap_or(marker + 1)
    }

    /// Open transactions, oldest first: (producer id, transaction).
    pub fn open_transactions(&self) -> Vec<(i64, OpenTxn)> {
        let mut v: Vec<_> = self
            .producers
            .values()
            .filter_map(|p| p.open.map(|o| (p.producer_id, o)))
            .collect();
        v.sort_by_key(|(_, o)| o.first_offset);
        v
    }
}

/// Options of the pass.
#[derive(Debug, Clone, Copy, Default, serde::Serialize, serde::Deserialize)]
pub struct TxnOptions {
    pub limits: DecodeLimits,
    /// Stop before this offset (the state a snapshot at that offset should hold).
    pub end_offset: Option<i64>,
    /// The partition's high watermark, when known: transactions whose
    /// marker is at or above it are not stable yet.
    pub high_watermark: Option<i64>,
    /// Start from the newest usable producer snapshot at or below the log
    /// end (and the high watermark), not from the log start, as a broker
    /// loading the partition does: enough for the last stable offset, at
    /// the cost of the log after the snapshot only. The counts, findings
    /// and aborted transactions then cover only that part of the log.
    pub from_last_snapshot: bool,
    /// Where to count the bytes of log read, for a progress display.
    #[serde(skip)]
    pub meter: Option<&'static Meter>,
}

/// The sequence after `seq` (Kafka's `incrementSequence` by 1).
fn next_sequence(seq: i32) -> i32 {
    if seq == i32::MAX {
        0
    } else {
        seq + 1
    }
}

/// Kafka's `ProducerAppendInfo.checkSequence` for a client's data batch,
/// from the producer's state so far (`None`: not seen in this log, whose
/// earlier batches may be gone — any sequence is accepted, as Kafka does for
/// an unknown epoch). A new epoch starts at 0; within an epoch the base
/// sequence follows the last one (after a marker cleared it: 0).
fn sequence_problem(
    known: Option<&ProducerState>,
    h: &BatchHeader,
) -> Option<(FindingKind, String)> {
    let k = known?;
    if h.producer_epoch != k.epoch {
        return (h.base_sequence != 0).then(|| {
            (
                FindingKind::SequenceNotZeroOnNewEpoch,
                format!(
                    "epoch {} starts at sequence {} (expected 0)",
                    h.producer_epoch, h.base_sequence
                ),
            )
        });
    }
    let expected = next_sequence(k.last_sequence);
    if h.base_sequence == expected {
        return None;
    }
    // At or below the last sequence: written before (a duplicate); above: a gap.
    let kind = if k.last_sequence >= 0 && h.base_sequence <= k.last_sequence {
        FindingKind::DuplicateSequence
    } else {
        FindingKind::OutOfOrderSequence
    };
    Some((
        kind,
        format!(
            "base sequence {} after last sequence {} (expected {expected})",
            h.base_sequence, k.last_sequence
        ),
    ))
}

/// Start from the newest producer snapshot at or below `bound`, as a
/// broker loading the partition does (`ProducerStateManager.truncateAndReload`
/// and `loadFromSnapshot` load the latest snapshot, and
/// `UnifiedLog.rebuildProducerState` replays the log from its offset):
/// producers whose batches retention deleted keep their state, and a
/// transaction still open there stays open. An unreadable snapshot (torn,
/// a CRC mismatch, an unknown version) is passed over for the one before
/// it, as `loadFromSnapshot` does on a `CorruptSnapshotException`.
/// Returns the snapshot's offset, if one was loaded.
fn seed_from_snapshot(p: &Partition, st: &mut PartitionState, bound: i64) -> Option<i64> {
    let snapshots = snapshot::list(&p.dir).ok()?;
    let (offset, newest) = snapshots
        .iter()
        .rev()
        .filter(|(offset, _)| *offset <= bound)
        .find_map(|(offset, path)| {
            let bytes = crate::log::files::read_regular(path, i32::MAX as u64).ok()??;
            snapshot::decode(&bytes)
                .ok()
                .filter(|s| s.crc == s.computed_crc)
                .map(|s| (*offset, s))
        })?;
    for e in newest.entries {
        let open = (e.current_txn_first_offset >= 0).then_some(OpenTxn {
            first_offset: e.current_txn_first_offset,
            start_timestamp: e.timestamp,
            position: 0,
        });
        st.producers.insert(
            e.producer_id,
            ProducerState {
                producer_id: e.producer_id,
                epoch: e.epoch,
                last_sequence: e.last_sequence,
                last_data_offset: e.last_offset,
                first_offset: e.last_offset,
                last_offset: e.last_offset,
                last_timestamp: e.timestamp,
                coordinator_epoch: e.coordinator_epoch,
                batches: 0,
                transactional: open.is_some(),
                committed: 0,
                aborted: 0,
                open,
            },
        );
    }
    Some(offset)
}

/// Topics whose batches the coordinators write (no client sequences).
pub fn is_coordinator_topic(topic: &str) -> bool {
    matches!(
        topic,
        crate::offsets::KAFKA_OFFSETS_TOPIC
            | crate::offsets::KLOG_OFFSETS_TOPIC
            | txnlog::TRANSACTION_STATE_TOPIC
            | "__share_group_state"
    )
}

/// The last stable offset of `p` against `high_watermark` (the log end
/// when `None`), from the newest usable producer snapshot forward (see
/// [`TxnOptions::from_last_snapshot`]); what a full [`analyze`] gives,
/// without reading the log before the snapshot.
pub fn last_stable_offset(
    p: &Partition,
    high_watermark: Option<i64>,
    limits: DecodeLimits,
    meter: Option<&'static Meter>,
) -> Result<i64> {
    let opts = TxnOptions {
        limits,
        high_watermark,
        meter,
        from_last_snapshot: true,
        ..TxnOptions::default()
    };
    Ok(analyze(p, &opts)?.last_stable_offset())
}

/// The transaction an ABORT marker of `producer_id` at `marker` ends, for
/// its `.txnindex` entry: the producer's open transaction's first offset,
/// and the last stable offset at marker time
/// ([`PartitionState::last_stable_at_marker`]). `None` when the producer
/// has no open transaction. The append path's
/// [`AppendConfig::aborted_txn`](crate::log::AppendConfig::aborted_txn).
pub fn aborted_txn(
    p: &Partition,
    producer_id: i64,
    marker: i64,
) -> Result<Option<crate::log::AbortedTxn>> {
    let state = analyze(p, &TxnOptions::default())?;
    let open = state.producers.get(&producer_id).and_then(|p| p.open);
    Ok(open.map(|o| crate::log::AbortedTxn {
        first_offset: o.first_offset,
        last_stable_offset: state.last_stable_at_marker(producer_id, marker),
    }))
}

/// One pass over `p`.
pub fn analyze(p: &Partition, opts: &TxnOptions) -> Result<PartitionState> {
    let mut st = PartitionState {
        max_timestamp: i64::MIN,
        high_watermark: opts.high_watermark,
        ..PartitionState::default()
    };
    let check_sequences = !is_coordinator_topic(&p.topic);
    st.log_start = p.log_start_offset(None);
    let bound = snapshot_bound(p, opts, st.log_start)?;
    let from = seed_from_snapshot(p, &mut st, bound).filter(|&o| o > st.log_start);
    let mut scratch = Vec::new();
    let policy = Policy {
        meter: opts.meter,
        ..Policy::VALID_ENTRIES
    };
    let mut walk = match from {
        Some(offset) => p.walk_from(offset, policy),
        None => p.walk(policy),
    };
    let mut read_to = from;
    while let Some(w) = walk.next_entry()? {
        let (seg, entry) = (w.segment, w.entry);
        if opts
            .end_offset
            .is_some_and(|end| entry.base_offset() >= end)
        {
            break;
        }
        read_to = Some(w.next_offset);
        let Entry::V2(b) = entry else { continue };
        st.read_batch(&seg.log, &b, opts, check_sequences, &mut scratch);
    }
    // Damage the walk stepped over hides batches: say where.
    for d in walk.take_damage() {
        st.findings.push(d.finding());
    }
    st.log_end = match opts.end_offset {
        Some(_) => read_to.unwrap_or(st.log_start),
        None => p.log_end_offset()?,
    };
    if st.max_timestamp == i64::MIN {
        st.max_timestamp = -1;
    }
    Ok(st)
}

/// Where the pass may start from a snapshot: the full pass reads from the
/// log start (seeded with the state a snapshot there holds); from the last
/// snapshot, the snapshot must not lie past the log end
/// (`truncateAndReload` deletes those), nor past the high watermark, so
/// that every marker at or above it is read.
fn snapshot_bound(p: &Partition, opts: &TxnOptions, log_start: i64) -> Result<i64> {
    Ok(match opts.from_last_snapshot {
        false => log_start,
        true => [
            Some(p.log_end_offset()?),
            opts.high_watermark,
            opts.end_offset,
        ]
        .into_iter()
        .flatten()
        .min()
        .unwrap_or(log_start),
    })
}

impl ProducerState {
    /// A producer's state before its first batch `h` in this log.
    fn first_seen(h: &BatchHeader) -> ProducerState {
        ProducerState {
            producer_id: h.producer_id,
            epoch: h.producer_epoch,
            last_sequence: -1,
            last_data_offset: -1,
            first_offset: h.base_offset,
            last_offset: h.last_offset(),
            last_timestamp: h.max_timestamp,
            coordinator_epoch: -1,
            batches: 0,
            transactional: false,
            committed: 0,
            aborted: 0,
            open: None,
        }
    }

    /// A client's data batch `h` at `position` (`ProducerStateEntry.addBatch`:
    /// a new epoch clears the batches kept). A batch in the log moves the
    /// state as loading it does — a duplicate the leader should have
    /// dropped included.
    fn add_data_batch(&mut self, h: &BatchHeader, position: u64) {
        self.epoch = h.producer_epoch;
        self.last_sequence = h.last_sequence();
        self.last_data_offset = h.last_offset();
        if h.is_transactional() && self.open.is_none() {
            self.open = Some(OpenTxn {
                first_offset: h.base_offset,
                start_timestamp: h.max_timestamp,
                position,
            });
        }
    }
}

/// Epochs only go up (`ProducerAppendInfo.checkProducerEpoch`): a client's
/// batch from an older epoch is a fenced producer's, which the leader
/// rejects. One in the log is reported; loading the log (origin
/// REPLICATION) Kafka only warns and takes the batch, so the state moves to
/// its epoch as there. Whether `h` is such a batch.
fn check_epoch(
    known: Option<&ProducerState>,
    h: &BatchHeader,
    found: &mut Vec<(FindingKind, String)>,
) -> bool {
    let Some(k) = known.filter(|k| h.producer_epoch < k.epoch) else {
        return false;
    };
    found.push((
        FindingKind::EpochRegression,
        format!(
            "epoch {} after epoch {} (a fenced producer wrote)",
            h.producer_epoch, k.epoch
        ),
    ));
    if h.is_transactional() && !h.is_control() {
        found.push((
            FindingKind::ZombieTransactionalWrite,
            format!(
                "transactional batch from epoch {} after epoch {}",
                h.producer_epoch, k.epoch
            ),
        ));
    }
    true
}

/// The marker of a transactional control batch. One that does not decode
/// (a negative version, a short key) is refused by the broker when it
/// loads producer state (`EndTransactionMarker`, in
/// `ProducerAppendInfo.append`; `LogSegment.recover` cuts the log there):
/// an error in `found`, and its transaction stays open.
fn decode_marker(
    b: &BatchView<'_>,
    scratch: &mut Vec<u8>,
    limits: DecodeLimits,
    found: &mut Vec<(FindingKind, String)>,
) -> Option<ControlRecord> {
    let decoded = b
        .records(scratch, limits)
        .and_then(|mut it| {
            it.next().unwrap_or(Err(crate::error::DecodeError::new(
                b.position,
                crate::error::DecodeErrorKind::BadControlRecord {
                    reason: "a control batch without a record",
                },
            )))
        })
        .and_then(|r| control::decode(r.key, r.value, r.position));
    match decoded {
        Ok(m) => Some(m),
        Err(e) => {
            found.push((FindingKind::of_decode(&e.kind), e.to_string()));
            None
        }
    }
}

impl PartitionState {
    /// One batch of the pass, from `log`: the counts, and for a producer's
    /// batch its checks and its producer's new state.
    fn read_batch(
        &mut self,
        log: &Path,
        b: &BatchView<'_>,
        opts: &TxnOptions,
        check_sequences: bool,
        scratch: &mut Vec<u8>,
    ) {
        let h = b.header;
        self.batches += 1;
        self.max_timestamp = self.max_timestamp.max(h.max_timestamp);
        if h.producer_id < 0 {
            return;
        }
        let mut found = Vec::new();
        let known = self.producers.get(&h.producer_id).cloned();
        let mut state = known
            .clone()
            .unwrap_or_else(|| ProducerState::first_seen(&h));
        let fenced = check_epoch(known.as_ref(), &h, &mut found);
        state.batches += 1;
        state.last_offset = h.last_offset();
        state.last_timestamp = h.max_timestamp;
        if h.is_control() {
            self.control_batches += 1;
        }
        if h.is_transactional() {
            state.transactional = true;
        }
        if !h.is_control() {
            // Sequences are checked only for what clients append
            // (`ProducerAppendInfo`: origin CLIENT); the group and
            // transaction coordinators write their batches with any
            // sequence (every transactional offset commit at 0).
            let problem = (check_sequences && h.base_sequence >= 0 && !fenced)
                .then(|| sequence_problem(known.as_ref(), &h))
                .flatten();
            found.extend(problem);
            state.add_data_batch(&h, b.position);
        } else if h.is_transactional() {
            let marker = decode_marker(b, scratch, opts.limits, &mut found);
            if let Some(m) =
                marker.filter(|m| matches!(m.kind, ControlType::Commit | ControlType::Abort))
            {
                self.end_transaction(&mut state, &h, &m, opts.high_watermark, &mut found);
            }
        }
        self.producers.insert(h.producer_id, state);
        for (kind, detail) in found {
            self.findings.push(finding(
                kind,
                log,
                b.position,
                h.base_offset,
                h.producer_id,
                detail,
            ));
        }
    }

    /// A COMMIT or ABORT marker `m` in batch `h` of the producer in
    /// `state`.
    fn end_transaction(
        &mut self,
        state: &mut ProducerState,
        h: &BatchHeader,
        m: &ControlRecord,
        high_watermark: Option<i64>,
        found: &mut Vec<(FindingKind, String)>,
    ) {
        // `ProducerStateEntry.update`: the marker's coordinator epoch.
        if let Some(epoch) = m.coordinator_epoch {
            state.coordinator_epoch = epoch;
        }
        // `ProducerAppendInfo.appendEndTxnMarker`: a transaction with data
        // completes (a marker alone completes nothing); until the marker
        // is below the high watermark the transaction still pins the LSO
        // (`ProducerStateManager`'s unreplicated transactions).
        match state.open.take() {
            Some(open) => {
                if m.kind == ControlType::Commit {
                    state.committed += 1;
                } else {
                    state.aborted += 1;
                    let last_stable_offset =
                        self.last_stable_at_marker(h.producer_id, h.base_offset);
                    self.aborted.push(AbortedTxn {
                        producer_id: h.producer_id,
                        first_offset: open.first_offset,
                        last_offset: h.base_offset,
                        last_stable_offset,
                    });
                }
                if high_watermark.is_some_and(|hw| h.base_offset >= hw) {
                    self.first_unreplicated = Some(
                        self.first_unreplicated
                            .map_or(open.first_offset, |f| f.min(open.first_offset)),
                    );
                }
            }
            None => {
                if m.kind == ControlType::Abort {
                    self.lone_aborts.push((h.producer_id, h.base_offset));
                }
                found.push((
                    FindingKind::MarkerWithoutTransaction,
                    format!("{} marker with no open transaction", m.kind.name()),
                ));
            }
        }
        // `ProducerStateEntry.maybeUpdateProducerEpoch`: a marker at another
        // epoch (transaction version 2 bumps it on every commit and abort)
        // clears the batches kept, so the next transaction starts again at
        // sequence 0.
        if h.producer_epoch != state.epoch {
            state.epoch = h.producer_epoch;
            state.last_sequence = -1;
            state.last_data_offset = -1;
        }
    }
}

/// Compare every segment's `.txnindex` with the aborted transactions the log
/// shows (`state` from [`analyze`] over the same partition): each ABORT
/// marker that completed a transaction must have an entry (producer, first
/// offset, marker offset) in the index of the segment holding the marker,
/// and every entry must name an ABORT marker of its producer in the log.
/// Entries must increase in lastOffset.
///
/// An entry's first offset may lie before the first batch the log still
/// holds of its transaction: the log cleaner discards an aborted
/// transaction's batches (`CleanedTransactionMetadata.onBatchRead`) but
/// keeps its ABORT marker and re-appends its `.txnindex` entry, first
/// offset unchanged, while it saw any of them (`onControlBatchRead`); after
/// the next cleaning the marker and the entry go too. So an entry is
/// consistent with the log when the marker at its last offset is an ABORT
/// of its producer that completed a transaction starting at or after the
/// entry's first offset, or completed none (all its batches cleaned away),
/// and an aborted transaction is indexed when an entry with its producer
/// and marker offset starts at or before it.
pub fn check_txn_indexes(p: &Partition, state: &PartitionState) -> Result<Vec<Finding>> {
    let mut out = Vec::new();
    // (segment base offset, producer id, first offset, last offset) of
    // every entry read.
    let mut indexed = Vec::new();
    for seg in &p.segments {
        check_segment_txn_index(seg, state, &mut out, &mut indexed);
    }
    let segment_of = |offset: i64| p.segments.iter().rev().find(|s| s.base_offset <= offset);
    for a in &state.aborted {
        let Some(seg) = segment_of(a.last_offset) else {
            continue;
        };
        let has_entry = indexed.iter().any(|&(base, pid, first, last)| {
            (base, pid, last) == (seg.base_offset, a.producer_id, a.last_offset)
                && first <= a.first_offset
        });
        if !has_entry {
            out.push(finding(
                FindingKind::TxnIndexMismatch,
                seg.log.with_extension("txnindex"),
                0,
                a.last_offset,
                a.producer_id,
                format!(
                    "aborted transaction {}..={} is missing from the index: read_committed readers that trust it would see aborted records",
                    a.first_offset, a.last_offset
                ),
            ));
        }
    }
    Ok(out)
}

/// The `.txnindex` of `seg` against the log's aborted transactions
/// (`state`): what does not match goes to `out`, the entries to `indexed`.
fn check_segment_txn_index(
    seg: &SegmentFiles,
    state: &PartitionState,
    out: &mut Vec<Finding>,
    indexed: &mut Vec<(i64, i64, i64, i64)>,
) {
    use crate::format::index::txn_entries;
    let path = seg.log.with_extension("txnindex");
    let bytes = match crate::log::files::read_regular(&path, i32::MAX as u64) {
        Ok(Some(b)) => b,
        Ok(None) => return,
        Err(e) => {
            out.push(finding(
                FindingKind::NotRegularFile,
                &path,
                0,
                seg.base_offset,
                -1,
                e.to_string(),
            ));
            return;
        }
    };
    let push = |out: &mut Vec<Finding>, position: u64, pid: i64, base: i64, detail: String| {
        out.push(finding(
            FindingKind::TxnIndexMismatch,
            &path,
            position,
            base,
            pid,
            detail,
        ))
    };
    let (entries, partial) = match txn_entries(&bytes) {
        Ok(e) => e,
        Err(e) => {
            push(out, e.offset, -1, seg.base_offset, e.to_string());
            return;
        }
    };
    if partial > 0 {
        push(
            out,
            (bytes.len() - partial) as u64,
            -1,
            seg.base_offset,
            format!("{partial} trailing bytes of a torn entry (ignored, as Kafka does)"),
        );
    }
    let mut prev = i64::MIN;
    for e in entries {
        if e.last_offset <= prev {
            push(
                out,
                e.at,
                e.producer_id,
                e.last_offset,
                format!(
                    "lastOffset {} does not increase (previous {prev})",
                    e.last_offset
                ),
            );
        }
        prev = e.last_offset;
        if let Some(detail) = txn_entry_mismatch(&e, state) {
            push(out, e.at, e.producer_id, e.last_offset, detail);
        }
        indexed.push((
            seg.base_offset,
            e.producer_id,
            e.first_offset,
            e.last_offset,
        ));
    }
}

/// Why the `.txnindex` entry `e` is not an aborted transaction of the log
/// (`state`), if it is not: the ABORT marker at its last offset must have
/// completed a transaction of its producer starting at or after its first
/// offset, or completed none.
fn txn_entry_mismatch(e: &TxnEntry, state: &PartitionState) -> Option<String> {
    let completed = state
        .aborted
        .iter()
        .find(|a| a.producer_id == e.producer_id && a.last_offset == e.last_offset);
    let consistent = match completed {
        Some(a) => e.first_offset <= a.first_offset,
        None => state.lone_aborts.contains(&(e.producer_id, e.last_offset)),
    };
    if consistent {
        return None;
    }
    let log = match completed {
        Some(a) => format!(
            "the log's transaction of that marker starts at {}, before it",
            a.first_offset
        ),
        None => format!(
            "the log has no ABORT marker of producer {} at offset {}",
            e.producer_id, e.last_offset
        ),
    };
    Some(format!(
        "entry (producer {}, offsets {}..={}) is not an aborted transaction in the log: {log}",
        e.producer_id, e.first_offset, e.last_offset
    ))
}
