//! The partition leader's producer rules, applied to a batch before it is
//! appended: what makes an idempotent producer's retry a duplicate, a gap
//! an error and an older epoch a fenced producer.
//!
//! Kafka's classes, rule by rule:
//! - `UnifiedLog.analyzeAndValidateProducerState`: for a client's batch,
//!   first look for a duplicate among the producer's last
//!   [`NUM_BATCHES_TO_RETAIN`] batches (`ProducerStateEntry.findDuplicateBatch`:
//!   the same epoch and exactly the same first and last sequence). A
//!   duplicate is not appended; the producer is answered with the offsets
//!   the batch got the first time. (`DuplicateSequenceException` exists in
//!   the protocol, but this broker never throws it.)
//! - `ProducerAppendInfo.checkProducerEpoch`: an epoch below the producer's
//!   current one is a fenced producer's (`InvalidProducerEpochException`);
//!   for data and markers alike, except when a follower copies the leader's
//!   log (origin REPLICATION), which only logs it. A marker of transaction
//!   version 2 must be above the current epoch (the coordinator bumps it at
//!   every end of transaction); at the current epoch it is taken only as a
//!   retry of a marker already written (no transaction open, KAFKA-19999).
//! - `ProducerAppendInfo.checkSequence` (client batches only; the group and
//!   transaction coordinators write without sequences): a new epoch must
//!   start at sequence 0 unless the producer had no epoch yet; within an
//!   epoch the first sequence must follow the last one (+1, `i32::MAX`
//!   wraps to 0), unless the producer is unknown (its batches were deleted):
//!   otherwise `OutOfOrderSequenceException`. A retry older than the
//!   batches kept fails here too.
//! - `ProducerAppendInfo.appendDataBatch`: a non-transactional batch while
//!   the producer's transaction is open is `InvalidTxnStateException`; a
//!   transactional one with none open starts one at its first offset.
//! - `ProducerAppendInfo.checkCoordinatorEpoch`: a marker from an older
//!   coordinator epoch than the last marker's is a deposed coordinator's
//!   (`TransactionCoordinatorFencedException`).
//! - `ProducerStateEntry.update` / `maybeUpdateProducerEpoch`: a batch or
//!   marker at a new epoch clears the batches kept, so after an epoch bump
//!   the producer starts again at sequence 0.
//!
//! The state is what a producer snapshot holds (`ProducerStateManager.writeSnapshot`):
//! [`ProducerStateManager::snapshot`] gives its entries. Not modelled:
//! KIP-890's verification guard (a transactional batch needing the
//! coordinator's confirmation that the transaction is ongoing) and producer
//! expiry.

use std::collections::{BTreeMap, VecDeque};
use std::ops::RangeInclusive;

use crate::error::{Error, Result};
use crate::format::control::{self, ControlType};
use crate::format::{BatchSpec, NewRecord};
use crate::log::storage::Storage;
use crate::log::PartitionAppender;
use crate::txn::snapshot::SnapshotEntry;

/// How many of a producer's batches the leader keeps to recognise a retry
/// (`ProducerStateEntry.NUM_BATCHES_TO_RETAIN`).
pub const NUM_BATCHES_TO_RETAIN: usize = 5;

/// `RecordBatch.NO_SEQUENCE`.
pub const NO_SEQUENCE: i32 = -1;
/// `RecordBatch.NO_PRODUCER_EPOCH`.
pub const NO_PRODUCER_EPOCH: i16 = -1;

use crate::format::batch::{decrement_sequence, increment_sequence};

/// One appended batch as the leader remembers it (`BatchMetadata`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchMetadata {
    pub last_seq: i32,
    pub last_offset: i64,
    /// last offset − first offset (= last sequence − first sequence).
    pub offset_delta: i32,
    pub timestamp: i64,
}

impl BatchMetadata {
    /// The batch's first sequence.
    pub fn first_seq(&self) -> i32 {
        decrement_sequence(self.last_seq, self.offset_delta)
    }
    /// The batch's first offset.
    pub fn first_offset(&self) -> i64 {
        self.last_offset - i64::from(self.offset_delta)
    }
}

/// One producer's state in a partition (`ProducerStateEntry`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ProducerEntry {
    pub producer_id: i64,
    pub epoch: i16,
    /// The coordinator epoch of the last marker (-1: none yet).
    pub coordinator_epoch: i32,
    pub last_timestamp: i64,
    /// The first offset of the producer's open transaction.
    pub current_txn_first_offset: Option<i64>,
    /// The last batches, oldest first, at most [`NUM_BATCHES_TO_RETAIN`].
    pub batches: VecDeque<BatchMetadata>,
}

impl ProducerEntry {
    /// A producer not seen before (`ProducerStateEntry.empty`).
    pub fn empty(producer_id: i64) -> Self {
        ProducerEntry {
            producer_id,
            epoch: NO_PRODUCER_EPOCH,
            coordinator_epoch: -1,
            last_timestamp: -1,
            current_txn_first_offset: None,
            batches: VecDeque::new(),
        }
    }

    /// The last sequence written at this epoch (-1: none).
    pub fn last_seq(&self) -> i32 {
        self.batches.back().map_or(NO_SEQUENCE, |b| b.last_seq)
    }

    /// The last offset of the last data batch at this epoch (-1: none).
    pub fn last_data_offset(&self) -> i64 {
        self.batches.back().map_or(-1, |b| b.last_offset)
    }

    /// The kept batch with exactly these sequences at this epoch.
    pub fn find_duplicate(
        &self,
        epoch: i16,
        first_seq: i32,
        last_seq: i32,
    ) -> Option<BatchMetadata> {
        if epoch != self.epoch {
            return None;
        }
        self.batches
            .iter()
            .find(|b| b.first_seq() == first_seq && b.last_seq == last_seq)
            .copied()
    }

    /// A new epoch clears the batches kept.
    fn maybe_update_epoch(&mut self, epoch: i16) {
        if self.epoch != epoch {
            self.batches.clear();
            self.epoch = epoch;
        }
    }

    fn add_batch(&mut self, b: BatchMetadata) {
        if self.batches.len() == NUM_BATCHES_TO_RETAIN {
            self.batches.pop_front();
        }
        self.batches.push_back(b);
    }

    /// What a snapshot records of this producer (`writeSnapshot`): only
    /// the last batch.
    pub fn snapshot_entry(&self) -> SnapshotEntry {
        let last = self.batches.back();
        SnapshotEntry {
            producer_id: self.producer_id,
            epoch: self.epoch,
            last_sequence: self.last_seq(),
            last_offset: self.last_data_offset(),
            offset_delta: last.map_or(0, |b| b.offset_delta),
            timestamp: self.last_timestamp,
            coordinator_epoch: self.coordinator_epoch,
            current_txn_first_offset: self.current_txn_first_offset.unwrap_or(-1),
        }
    }
}

/// Who is appending (`AppendOrigin`): it decides how much is checked.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A producer: epochs, sequences and duplicates are checked.
    Client,
    /// The group or transaction coordinator (offset commits, markers):
    /// epochs only.
    Coordinator,
    /// A follower copying the leader's log: nothing is refused.
    Replication,
}

/// A transaction marker's fields.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Marker {
    pub commit: bool,
    pub coordinator_epoch: i32,
    /// The transaction version the coordinator wrote it with
    /// (WriteTxnMarkers' `TransactionVersion`; not stored in the log): 2
    /// makes the epoch check strict.
    pub transaction_version: i16,
}

/// The producer fields of a batch offered to the leader.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Incoming {
    pub producer_id: i64,
    pub epoch: i16,
    pub base_sequence: i32,
    /// Records in the batch (the last sequence is base + records − 1).
    pub records: i32,
    pub transactional: bool,
    /// A COMMIT or ABORT marker.
    pub marker: Option<Marker>,
    pub max_timestamp: i64,
}

impl Incoming {
    /// The batch `spec` would write for `records`; `None` without a
    /// producer id (a plain producer's batch, which nothing checks).
    pub fn of(spec: &BatchSpec, records: &[NewRecord]) -> Result<Option<Self>> {
        if spec.producer_id < 0 {
            return Ok(None);
        }
        let marker = if spec.control {
            let r = records
                .first()
                .ok_or_else(|| Error::Invalid("a control batch without a record".into()))?;
            let c = control::decode(r.key.as_deref(), r.value.as_deref(), 0)
                .map_err(|e| Error::Invalid(format!("control record: {e}")))?;
            match c.kind {
                ControlType::Commit | ControlType::Abort => Some(Marker {
                    commit: c.kind == ControlType::Commit,
                    coordinator_epoch: c.coordinator_epoch.unwrap_or(-1),
                    transaction_version: 0,
                }),
                _ => None,
            }
        } else {
            None
        };
        Ok(Some(Incoming {
            producer_id: spec.producer_id,
            epoch: spec.producer_epoch,
            base_sequence: spec.base_sequence,
            records: i32::try_from(records.len()).unwrap_or(i32::MAX),
            transactional: spec.transactional,
            marker,
            max_timestamp: records.iter().map(|r| r.timestamp).max().unwrap_or(-1),
        }))
    }

    /// The batch's last sequence (-1 without sequences).
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence < 0 {
            NO_SEQUENCE
        } else {
            increment_sequence(self.base_sequence, self.records.saturating_sub(1).max(0))
        }
    }
}

/// Why the leader refused a batch: each is the exception Kafka answers with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rejection {
    /// The first sequence does not follow the last one (`OutOfOrderSequenceException`).
    OutOfOrderSequence {
        epoch: i16,
        first_seq: i32,
        /// The producer's last sequence at that epoch (-1: none).
        last_seq: i32,
        /// The batch is at a new epoch, which must start at 0.
        new_epoch: bool,
    },
    /// The epoch is below the producer's (`InvalidProducerEpochException`);
    /// `strict`: a transaction version 2 marker, not above it.
    InvalidProducerEpoch {
        epoch: i16,
        current: i16,
        strict: bool,
    },
    /// A non-transactional batch while the producer's transaction is open
    /// (`InvalidTxnStateException`).
    InvalidTxnState { first_offset: i64 },
    /// A marker from an older coordinator (`TransactionCoordinatorFencedException`).
    CoordinatorFenced {
        coordinator_epoch: i32,
        current: i32,
    },
}

impl Rejection {
    /// The Java exception Kafka answers with.
    pub fn exception(&self) -> &'static str {
        match self {
            Rejection::OutOfOrderSequence { .. } => "OutOfOrderSequenceException",
            Rejection::InvalidProducerEpoch { .. } => "InvalidProducerEpochException",
            Rejection::InvalidTxnState { .. } => "InvalidTxnStateException",
            Rejection::CoordinatorFenced { .. } => "TransactionCoordinatorFencedException",
        }
    }
}

impl std::fmt::Display for Rejection {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match *self {
            Rejection::OutOfOrderSequence {
                epoch,
                first_seq,
                last_seq,
                new_epoch: true,
            } => write!(
                f,
                "epoch {epoch} starts at sequence {first_seq}, not 0 (the last sequence seen was {last_seq})"
            ),
            Rejection::OutOfOrderSequence {
                first_seq,
                last_seq,
                ..
            } => write!(
                f,
                "sequence {first_seq} after last sequence {last_seq} (expected {})",
                increment_sequence(last_seq, 1)
            ),
            Rejection::InvalidProducerEpoch {
                epoch,
                current,
                strict: false,
            } => {
                write!(f, "epoch {epoch} is below the current epoch {current}")
            }
            Rejection::InvalidProducerEpoch {
                epoch,
                current,
                strict: true,
            } => write!(
                f,
                "epoch {epoch} is not above the current epoch {current} (a transaction version 2 marker)"
            ),
            Rejection::InvalidTxnState { first_offset } => write!(
                f,
                "a non-transactional batch while the transaction from offset {first_offset} is open"
            ),
            Rejection::CoordinatorFenced {
                coordinator_epoch,
                current,
            } => write!(
                f,
                "coordinator epoch {coordinator_epoch} is below the last marker's {current}"
            ),
        }
    }
}

/// What the leader decides before appending.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Append it.
    Append,
    /// A retry of this kept batch: answer with its offsets, append nothing.
    Duplicate(BatchMetadata),
}

/// A transaction a marker completed (`CompletedTxn`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CompletedTxn {
    pub producer_id: i64,
    pub first_offset: i64,
    /// The marker's offset.
    pub last_offset: i64,
    pub aborted: bool,
}

/// The producers of one partition (`ProducerStateManager`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ProducerStateManager {
    producers: BTreeMap<i64, ProducerEntry>,
    map_end_offset: i64,
}

impl ProducerStateManager {
    /// No producers, at offset 0.
    pub fn new() -> Self {
        Self::default()
    }

    /// The state of `producer_id`, if it has written here.
    pub fn entry(&self, producer_id: i64) -> Option<&ProducerEntry> {
        self.producers.get(&producer_id)
    }

    /// The offset the state is valid up to (what a snapshot is named after).
    pub fn map_end_offset(&self) -> i64 {
        self.map_end_offset
    }

    /// Decide about a batch without changing anything: the duplicate check
    /// of a client's batch, then `ProducerAppendInfo`'s rules.
    pub fn check(&self, b: &Incoming, origin: Origin) -> std::result::Result<Verdict, Rejection> {
        let current = self.producers.get(&b.producer_id);
        if origin == Origin::Client && b.marker.is_none() {
            if let Some(dup) =
                current.and_then(|e| e.find_duplicate(b.epoch, b.base_sequence, b.last_sequence()))
            {
                return Ok(Verdict::Duplicate(dup));
            }
        }
        self.append_info(b, origin, self.map_end_offset)
            .map(|_| Verdict::Append)
    }

    /// `ProducerAppendInfo.append` of one batch at `first_offset`: the
    /// producer's entry after it, and the transaction a marker completed.
    fn append_info(
        &self,
        b: &Incoming,
        origin: Origin,
        first_offset: i64,
    ) -> std::result::Result<(ProducerEntry, Option<CompletedTxn>), Rejection> {
        let empty = ProducerEntry::empty(b.producer_id);
        let current = self.producers.get(&b.producer_id).unwrap_or(&empty);
        // `withProducerIdAndBatchMetadata`: the current entry without its batches.
        let mut updated = ProducerEntry {
            batches: VecDeque::new(),
            ..current.clone()
        };
        let strict = b.marker.is_some_and(|m| m.transaction_version >= 2);
        let invalid = if strict {
            b.epoch <= updated.epoch
        } else {
            b.epoch < updated.epoch
        };
        // A TV2 marker at the current epoch with no transaction open is a
        // retry of one already written: taken.
        let retry = strict
            && b.epoch == updated.epoch
            && (updated.current_txn_first_offset.is_none() || b.epoch == i16::MAX);
        if invalid && !retry && origin != Origin::Replication {
            return Err(Rejection::InvalidProducerEpoch {
                epoch: b.epoch,
                current: updated.epoch,
                strict,
            });
        }
        if let Some(m) = b.marker {
            if updated.coordinator_epoch > m.coordinator_epoch && origin != Origin::Replication {
                return Err(Rejection::CoordinatorFenced {
                    coordinator_epoch: m.coordinator_epoch,
                    current: updated.coordinator_epoch,
                });
            }
            let completed = updated.current_txn_first_offset.map(|first| CompletedTxn {
                producer_id: b.producer_id,
                first_offset: first,
                last_offset: first_offset,
                aborted: !m.commit,
            });
            updated.maybe_update_epoch(b.epoch);
            updated.coordinator_epoch = m.coordinator_epoch;
            updated.current_txn_first_offset = None;
            updated.last_timestamp = b.max_timestamp;
            return Ok((updated, completed));
        }
        if origin == Origin::Client {
            check_sequence(current, &updated, b)?;
        }
        let offset_delta = b.records.saturating_sub(1).max(0);
        updated.maybe_update_epoch(b.epoch);
        updated.add_batch(BatchMetadata {
            last_seq: b.last_sequence(),
            last_offset: first_offset + i64::from(offset_delta),
            offset_delta,
            timestamp: b.max_timestamp,
        });
        updated.last_timestamp = b.max_timestamp;
        match (updated.current_txn_first_offset, b.transactional) {
            (Some(first), false) => {
                return Err(Rejection::InvalidTxnState {
                    first_offset: first,
                })
            }
            (None, true) => updated.current_txn_first_offset = Some(first_offset),
            _ => {}
        }
        Ok((updated, None))
    }

    /// Take in a batch appended at `first_offset` (after [`check`](Self::check)
    /// said to append it): `ProducerAppendInfo.append`, then
    /// `ProducerStateManager.update`. Returns the transaction a marker
    /// completed.
    pub fn apply(
        &mut self,
        b: &Incoming,
        origin: Origin,
        first_offset: i64,
    ) -> std::result::Result<Option<CompletedTxn>, Rejection> {
        let (next, completed) = self.append_info(b, origin, first_offset)?;
        let last = first_offset + i64::from(b.records.saturating_sub(1).max(0));
        match self.producers.get_mut(&b.producer_id) {
            // `ProducerStateEntry.update`: a new epoch clears the kept batches.
            Some(entry) => {
                entry.maybe_update_epoch(next.epoch);
                for batch in next.batches {
                    entry.add_batch(batch);
                }
                entry.coordinator_epoch = next.coordinator_epoch;
                entry.current_txn_first_offset = next.current_txn_first_offset;
                entry.last_timestamp = next.last_timestamp;
            }
            None => {
                self.producers.insert(b.producer_id, next);
            }
        }
        self.map_end_offset = self.map_end_offset.max(last + 1);
        Ok(completed)
    }

    /// The log end moved past a batch without a producer id.
    pub fn advance(&mut self, end_offset: i64) {
        self.map_end_offset = self.map_end_offset.max(end_offset);
    }

    /// The entries of the snapshot a broker would write now, by producer id.
    pub fn snapshot(&self) -> Vec<SnapshotEntry> {
        self.producers
            .values()
            .map(ProducerEntry::snapshot_entry)
            .collect()
    }
}

/// `ProducerAppendInfo.checkSequence` for a client's data batch.
fn check_sequence(
    current: &ProducerEntry,
    updated: &ProducerEntry,
    b: &Incoming,
) -> std::result::Result<(), Rejection> {
    let first_seq = b.base_sequence;
    if b.epoch != updated.epoch {
        if first_seq != 0 && updated.epoch != NO_PRODUCER_EPOCH {
            return Err(Rejection::OutOfOrderSequence {
                epoch: b.epoch,
                first_seq,
                last_seq: current.last_seq(),
                new_epoch: true,
            });
        }
        return Ok(());
    }
    let last_seq = if b.epoch == current.epoch {
        current.last_seq()
    } else {
        NO_SEQUENCE
    };
    // An unknown producer (its batches deleted by retention) may start anywhere.
    let in_sequence =
        i64::from(first_seq) == i64::from(last_seq) + 1 || (first_seq == 0 && last_seq == i32::MAX);
    if current.epoch == NO_PRODUCER_EPOCH || in_sequence {
        Ok(())
    } else {
        Err(Rejection::OutOfOrderSequence {
            epoch: b.epoch,
            first_seq,
            last_seq,
            new_epoch: false,
        })
    }
}

/// What the leader did with a produce request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Produced {
    /// Appended at these offsets.
    Appended(RangeInclusive<i64>),
    /// A retry of a batch already in the log: these are its offsets; nothing was appended.
    Duplicate(RangeInclusive<i64>),
    /// Refused; nothing was appended.
    Rejected(Rejection),
}

/// The leader's append: check `records` against `state` as Kafka's leader
/// does, append them through the append path only if they pass, then take
/// them into the state. A marker is checked as written with
/// `marker_transaction_version` (WriteTxnMarkers' field; 0 for data).
pub fn append_checked<S: Storage>(
    appender: &mut PartitionAppender<S>,
    state: &mut ProducerStateManager,
    origin: Origin,
    spec: &BatchSpec,
    records: &[NewRecord],
    marker_transaction_version: i16,
) -> Result<Produced> {
    let Some(mut incoming) = Incoming::of(spec, records)? else {
        let range = appender.append(spec, records)?;
        state.advance(range.end() + 1);
        return Ok(Produced::Appended(range));
    };
    if let Some(m) = incoming.marker.as_mut() {
        m.transaction_version = marker_transaction_version;
    }
    match state.check(&incoming, origin) {
        Ok(Verdict::Duplicate(b)) => {
            return Ok(Produced::Duplicate(b.first_offset()..=b.last_offset))
        }
        Err(r) => return Ok(Produced::Rejected(r)),
        Ok(Verdict::Append) => {}
    }
    let range = appender.append(spec, records)?;
    state
        .apply(&incoming, origin, *range.start())
        .map_err(|r| Error::Invalid(format!("checked batch refused after its append: {r}")))?;
    Ok(Produced::Appended(range))
}

#[cfg(test)]
mod tests {
    //! Kafka's `ProducerStateManagerTest` cases, on klog's rule.
    use super::*;

    const PID: i64 = 1;

    fn data(epoch: i16, seq: i32, records: i32, transactional: bool) -> Incoming {
        Incoming {
            producer_id: PID,
            epoch,
            base_sequence: seq,
            records,
            transactional,
            marker: None,
            max_timestamp: 0,
        }
    }

    fn marker(epoch: i16, commit: bool, coordinator_epoch: i32) -> Incoming {
        Incoming {
            marker: Some(Marker {
                commit,
                coordinator_epoch,
                transaction_version: 0,
            }),
            transactional: true,
            base_sequence: NO_SEQUENCE,
            records: 1,
            ..data(epoch, NO_SEQUENCE, 1, true)
        }
    }

    /// Check, then apply at `offset`, as the leader appends.
    fn append(
        s: &mut ProducerStateManager,
        b: Incoming,
        offset: i64,
        origin: Origin,
    ) -> std::result::Result<Verdict, Rejection> {
        let v = s.check(&b, origin)?;
        if v == Verdict::Append {
            s.apply(&b, origin, offset)?;
        }
        Ok(v)
    }

    /// `ProducerAppendInfo.checkProducerEpoch` with transaction version 2:
    /// a marker must bump the epoch; at the current epoch it is taken only
    /// as the retry of a marker already written (KAFKA-19999).
    #[test]
    fn a_tv2_marker_must_be_above_the_producer_epoch() {
        let tv2 = |epoch: i16| {
            let mut m = marker(epoch, true, 0);
            if let Some(x) = m.marker.as_mut() {
                x.transaction_version = 2;
            }
            m
        };
        let mut s = ProducerStateManager::new();
        append(&mut s, data(5, 0, 2, true), 0, Origin::Client).unwrap();
        // The transaction is open at epoch 5: a TV2 marker at 5 is refused.
        assert_eq!(
            s.check(&tv2(5), Origin::Coordinator),
            Err(Rejection::InvalidProducerEpoch {
                epoch: 5,
                current: 5,
                strict: true
            })
        );
        // A legacy marker at 5 is fine.
        assert_eq!(
            s.check(&marker(5, true, 0), Origin::Coordinator),
            Ok(Verdict::Append)
        );
        append(&mut s, tv2(6), 2, Origin::Coordinator).unwrap();
        assert_eq!(s.entry(PID).map(|e| e.epoch), Some(6));
        // Its retry (no transaction open) is taken; an older one is not.
        assert_eq!(s.check(&tv2(6), Origin::Coordinator), Ok(Verdict::Append));
        assert!(s.check(&tv2(5), Origin::Coordinator).is_err());
        // A follower copies whatever the leader wrote.
        assert_eq!(s.check(&tv2(5), Origin::Replication), Ok(Verdict::Append));
    }

    #[test]
    fn basic_id_mapping() {
        let mut s = ProducerStateManager::new();
        append(&mut s, data(0, 0, 1, false), 0, Origin::Client).unwrap();
        append(&mut s, data(0, 1, 1, false), 1, Origin::Client).unwrap();
        // The same sequence again is a duplicate the leader answers with the first offsets ...
        assert_eq!(
            s.check(&data(0, 1, 1, false), Origin::Client).unwrap(),
            Verdict::Duplicate(BatchMetadata {
                last_seq: 1,
                last_offset: 1,
                offset_delta: 0,
                timestamp: 0
            })
        );
        // ... and out of order if it reached ProducerAppendInfo.
        assert!(matches!(
            s.append_info(&data(0, 1, 1, false), Origin::Client, 2),
            Err(Rejection::OutOfOrderSequence { .. })
        ));
        // A gap.
        assert_eq!(
            s.check(&data(0, 5, 1, false), Origin::Client),
            Err(Rejection::OutOfOrderSequence {
                epoch: 0,
                first_seq: 5,
                last_seq: 1,
                new_epoch: false
            })
        );
        // A new epoch starts at 0; the old one is fenced.
        append(&mut s, data(1, 0, 1, false), 3, Origin::Client).unwrap();
        assert_eq!(
            s.check(&data(0, 0, 1, false), Origin::Client),
            Err(Rejection::InvalidProducerEpoch {
                epoch: 0,
                current: 1,
                strict: false
            })
        );
    }

    #[test]
    fn marker_with_no_producer_state_still_fences() {
        let mut s = ProducerStateManager::new();
        append(&mut s, marker(2, true, 0), 27, Origin::Coordinator).unwrap();
        let e = s.entry(PID).unwrap();
        assert_eq!((e.epoch, e.last_seq()), (2, NO_SEQUENCE));
        assert!(matches!(
            s.check(&data(0, 0, 1, false), Origin::Client),
            Err(Rejection::InvalidProducerEpoch { .. })
        ));
        assert!(matches!(
            s.check(&data(2, 17, 1, false), Origin::Client),
            Err(Rejection::OutOfOrderSequence { .. })
        ));
        append(&mut s, data(2, 0, 1, false), 28, Origin::Client).unwrap();
        assert_eq!(s.entry(PID).unwrap().last_seq(), 0);
    }

    #[test]
    fn sequences_wrap_at_i32_max() {
        let mut s = ProducerStateManager::new();
        append(
            &mut s,
            data(15, i32::MAX, 1, false),
            735,
            Origin::Replication,
        )
        .unwrap();
        assert!(matches!(
            s.check(&data(15, 1, 1, false), Origin::Client),
            Err(Rejection::OutOfOrderSequence { .. })
        ));
        append(&mut s, data(15, 0, 1, false), 1235, Origin::Client).unwrap();
        let e = s.entry(PID).unwrap();
        assert_eq!((e.batches[0].first_seq(), e.last_seq()), (i32::MAX, 0));
        // A batch whose sequences wrap: first MAX − 10, 21 records, last 9.
        let b = data(16, i32::MAX - 10, 21, false);
        assert_eq!(b.last_sequence(), 9);
        let mut s = ProducerStateManager::new();
        append(&mut s, b, 2000, Origin::Replication).unwrap();
        let e = s.entry(PID).unwrap();
        assert_eq!(
            (
                e.batches[0].first_seq(),
                e.last_seq(),
                e.batches[0].first_offset()
            ),
            (i32::MAX - 10, 9, 2000)
        );
        assert_eq!(e.last_data_offset(), 2020);
    }

    #[test]
    fn no_validation_when_loading_and_unknown_producers_start_anywhere() {
        let mut s = ProducerStateManager::new();
        append(&mut s, data(5, 16, 1, false), 735, Origin::Replication).unwrap();
        assert_eq!(s.entry(PID).unwrap().last_seq(), 16);
        let mut s = ProducerStateManager::new();
        append(&mut s, data(0, 42, 1, false), 0, Origin::Client).unwrap();
        assert_eq!(s.entry(PID).unwrap().last_seq(), 42);
    }

    #[test]
    fn a_marker_at_a_new_epoch_resets_sequences() {
        let mut s = ProducerStateManager::new();
        append(&mut s, data(0, 0, 1, true), 0, Origin::Client).unwrap();
        append(&mut s, data(0, 1, 1, true), 1, Origin::Client).unwrap();
        append(&mut s, marker(1, false, 0), 2, Origin::Coordinator).unwrap();
        let e = s.entry(PID).unwrap();
        assert_eq!(
            (e.epoch, e.last_seq(), e.current_txn_first_offset),
            (1, -1, None)
        );
        assert!(matches!(
            s.check(&data(1, 2, 1, true), Origin::Client),
            Err(Rejection::OutOfOrderSequence { .. })
        ));
        assert!(matches!(
            s.check(&data(2, 2, 1, true), Origin::Client),
            Err(Rejection::OutOfOrderSequence {
                new_epoch: true,
                ..
            })
        ));
        append(&mut s, data(1, 0, 1, true), 3, Origin::Client).unwrap();
        assert_eq!(s.entry(PID).unwrap().last_seq(), 0);
    }

    #[test]
    fn non_transactional_write_inside_a_transaction() {
        let mut s = ProducerStateManager::new();
        append(&mut s, data(0, 0, 1, true), 0, Origin::Client).unwrap();
        assert_eq!(
            s.check(&data(0, 1, 1, false), Origin::Client),
            Err(Rejection::InvalidTxnState { first_offset: 0 })
        );
    }

    #[test]
    fn fencing_abort_marker_clears_data_state() {
        let mut s = ProducerStateManager::new();
        append(&mut s, data(0, 0, 1, true), 0, Origin::Client).unwrap();
        let c = s
            .apply(&marker(1, false, 0), Origin::Coordinator, 1)
            .unwrap();
        assert_eq!(
            c,
            Some(CompletedTxn {
                producer_id: PID,
                first_offset: 0,
                last_offset: 1,
                aborted: true
            })
        );
        let e = s.entry(PID).unwrap();
        assert_eq!(
            (e.current_txn_first_offset, e.last_data_offset()),
            (None, -1)
        );
    }

    #[test]
    fn coordinator_sequences_are_not_checked_epochs_are() {
        let mut s = ProducerStateManager::new();
        append(
            &mut s,
            data(0, NO_SEQUENCE, 1, true),
            99,
            Origin::Coordinator,
        )
        .unwrap();
        append(
            &mut s,
            data(0, NO_SEQUENCE, 1, true),
            100,
            Origin::Coordinator,
        )
        .unwrap();
        let mut s = ProducerStateManager::new();
        append(&mut s, data(5, 0, 1, true), 99, Origin::Client).unwrap();
        assert_eq!(
            s.check(&marker(3, true, 0), Origin::Coordinator),
            Err(Rejection::InvalidProducerEpoch {
                epoch: 3,
                current: 5,
                strict: false
            })
        );
    }

    #[test]
    fn coordinator_fencing() {
        let mut s = ProducerStateManager::new();
        append(&mut s, data(5, 0, 1, true), 99, Origin::Client).unwrap();
        append(&mut s, marker(5, true, 1), 100, Origin::Coordinator).unwrap();
        assert_eq!(s.entry(PID).unwrap().coordinator_epoch, 1);
        append(&mut s, marker(5, true, 1), 101, Origin::Coordinator).unwrap();
        append(&mut s, marker(5, true, 2), 102, Origin::Coordinator).unwrap();
        assert_eq!(
            s.check(&marker(5, true, 1), Origin::Coordinator),
            Err(Rejection::CoordinatorFenced {
                coordinator_epoch: 1,
                current: 2
            })
        );
    }

    #[test]
    fn only_the_last_five_batches_recognise_a_retry() {
        let mut s = ProducerStateManager::new();
        for i in 0..6 {
            append(
                &mut s,
                data(0, i * 2, 2, false),
                i64::from(i) * 2,
                Origin::Client,
            )
            .unwrap();
        }
        assert!(matches!(
            s.check(&data(0, 2, 2, false), Origin::Client),
            Ok(Verdict::Duplicate(_))
        ));
        // The first batch fell out of the cache: its retry is out of order.
        assert!(matches!(
            s.check(&data(0, 0, 2, false), Origin::Client),
            Err(Rejection::OutOfOrderSequence { .. })
        ));
    }
}
