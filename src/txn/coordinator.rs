//! The transaction coordinator's state machine: for each request, the
//! records it logs to `__transaction_state` and the markers it has written
//! to the partitions of the transaction, in order. No I/O: the caller
//! carries out the [`Step`]s through the append path.
//!
//! Kafka's classes: `TransactionCoordinator` (`handleInitProducerId`,
//! `handleAddPartitionsToTransaction`, `endTransaction`),
//! `TransactionMetadata` (the transitions: `prepareIncrementProducerEpoch`,
//! `prepareFenceProducerEpoch`, `prepareAddPartitions`,
//! `prepareAbortOrCommit`, `prepareComplete`), `TransactionLog` (the value
//! logged: partitions null when Empty), `TransactionMarkerChannelManager`
//! (the markers, written with the producer's id and epoch and the
//! coordinator's epoch, before the Complete state is logged).
//!
//! The order is what makes a transaction atomic: `PrepareCommit` is logged
//! before any marker, so a coordinator that fails over finishes the
//! markers from its log. This is transaction version 1 (the producer's
//! epoch is bumped by InitProducerId only, not by every commit as with
//! KIP-890's version 2).

use std::collections::{BTreeMap, BTreeSet};

use crate::txn::txnlog::TransactionMetadata;

/// A transaction's state (`TransactionState`; the id is what is logged).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TxnState {
    Empty,
    Ongoing,
    PrepareCommit,
    PrepareAbort,
    CompleteCommit,
    CompleteAbort,
}

impl TxnState {
    /// The TransactionStatus id logged.
    pub fn id(self) -> i8 {
        match self {
            TxnState::Empty => 0,
            TxnState::Ongoing => 1,
            TxnState::PrepareCommit => 2,
            TxnState::PrepareAbort => 3,
            TxnState::CompleteCommit => 4,
            TxnState::CompleteAbort => 5,
        }
    }

    /// Kafka's name.
    pub fn name(self) -> &'static str {
        crate::txn::txnlog::status_name(self.id())
    }
}

/// One transactional id's metadata (`TransactionMetadata`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TxnMetadata {
    pub transactional_id: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub timeout_ms: i32,
    pub state: TxnState,
    /// The partitions in the transaction, as (topic, partition).
    pub partitions: BTreeSet<(String, i32)>,
    pub start_timestamp_ms: i64,
    pub last_update_timestamp_ms: i64,
}

impl TxnMetadata {
    /// The TransactionLogValue (v0) logged for this state
    /// (`TransactionLog.valueToBytes`: no partitions when Empty).
    pub fn log_value(&self) -> TransactionMetadata {
        let mut by_topic: BTreeMap<&str, Vec<i32>> = BTreeMap::new();
        for (t, p) in &self.partitions {
            by_topic.entry(t).or_default().push(*p);
        }
        TransactionMetadata {
            partitions: (self.state != TxnState::Empty).then(|| {
                by_topic
                    .into_iter()
                    .map(|(t, ps)| (t.to_string(), ps))
                    .collect()
            }),
            last_update_timestamp_ms: self.last_update_timestamp_ms,
            start_timestamp_ms: self.start_timestamp_ms,
            ..TransactionMetadata::new(
                0,
                self.producer_id,
                self.producer_epoch,
                self.timeout_ms,
                self.state.id(),
            )
        }
    }
}

/// What the coordinator refuses a request with (`Errors`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CoordinatorError {
    /// The request's epoch is not the current one: a newer instance took over.
    ProducerFenced,
    /// The producer id is not the transactional id's.
    InvalidProducerIdMapping,
    /// The request does not fit the transaction's state.
    InvalidTxnState,
}

impl CoordinatorError {
    /// The error code's name.
    pub fn name(self) -> &'static str {
        match self {
            CoordinatorError::ProducerFenced => "PRODUCER_FENCED",
            CoordinatorError::InvalidProducerIdMapping => "INVALID_PRODUCER_ID_MAPPING",
            CoordinatorError::InvalidTxnState => "INVALID_TXN_STATE",
        }
    }
}

impl std::fmt::Display for CoordinatorError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// One thing the coordinator does, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Log this state to `__transaction_state`.
    Log(TxnMetadata),
    /// Write a COMMIT or ABORT marker to each partition.
    Markers {
        commit: bool,
        producer_id: i64,
        producer_epoch: i16,
        coordinator_epoch: i32,
        partitions: Vec<(String, i32)>,
    },
}

/// An InitProducerId answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Init {
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// The epoch the coordinator fenced an ongoing transaction with (its
    /// ABORT markers carry it), when there was one.
    pub fenced_with: Option<i16>,
    pub steps: Vec<Step>,
}

/// The coordinator of a set of transactional ids.
#[derive(Debug, Clone)]
pub struct Coordinator {
    /// The coordinator's epoch: the leader epoch of its `__transaction_state` partition.
    pub epoch: i32,
    next_producer_id: i64,
    txns: BTreeMap<String, TxnMetadata>,
}

impl Coordinator {
    /// A coordinator at `epoch` handing out producer ids from `first_producer_id`.
    pub fn new(epoch: i32, first_producer_id: i64) -> Self {
        Coordinator {
            epoch,
            next_producer_id: first_producer_id,
            txns: BTreeMap::new(),
        }
    }

    /// A fresh producer id (`ProducerIdManager.generateProducerId`): what
    /// an idempotent producer without a transactional id gets, at epoch 0.
    pub fn allocate_producer_id(&mut self) -> i64 {
        let id = self.next_producer_id;
        self.next_producer_id += 1;
        id
    }

    /// The metadata of `transactional_id`.
    pub fn get(&self, transactional_id: &str) -> Option<&TxnMetadata> {
        self.txns.get(transactional_id)
    }

    /// InitProducerId for `transactional_id` (`handleInitProducerId`). A
    /// new id gets a producer id at epoch 0; a known one gets its epoch
    /// bumped. An ongoing transaction is fenced first: the epoch is bumped,
    /// PrepareAbort logged, ABORT markers written with that epoch,
    /// CompleteAbort logged; the producer's retry then bumps the epoch once
    /// more (`prepareFenceProducerEpoch`: "this epoch is never returned").
    pub fn init_producer_id(&mut self, transactional_id: &str, timeout_ms: i32, now: i64) -> Init {
        let mut steps = Vec::new();
        let mut fenced_with = None;
        let producer_id = if self.txns.contains_key(transactional_id) {
            -1
        } else {
            self.allocate_producer_id()
        };
        let epoch = self.epoch;
        let m = self
            .txns
            .entry(transactional_id.to_string())
            .or_insert_with(|| TxnMetadata {
                transactional_id: transactional_id.to_string(),
                producer_id,
                producer_epoch: -1,
                timeout_ms,
                state: TxnState::Empty,
                partitions: BTreeSet::new(),
                start_timestamp_ms: -1,
                last_update_timestamp_ms: now,
            });
        if m.state == TxnState::Ongoing {
            m.producer_epoch += 1;
            fenced_with = Some(m.producer_epoch);
            complete(m, false, epoch, now, &mut steps);
        }
        // `prepareIncrementProducerEpoch`: bump, Empty, no partitions.
        m.producer_epoch += 1;
        m.timeout_ms = timeout_ms;
        m.state = TxnState::Empty;
        m.partitions.clear();
        m.start_timestamp_ms = -1;
        m.last_update_timestamp_ms = now;
        steps.push(Step::Log(m.clone()));
        Init {
            producer_id: m.producer_id,
            producer_epoch: m.producer_epoch,
            fenced_with,
            steps,
        }
    }

    /// AddPartitionsToTxn (and AddOffsetsToTxn, for the group's offsets
    /// partition): Ongoing is logged with the partitions added, unless they
    /// are all in the transaction already.
    pub fn add_partitions(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        partitions: &[(String, i32)],
        now: i64,
    ) -> Result<Vec<Step>, CoordinatorError> {
        let m = self.current(transactional_id, producer_id, producer_epoch)?;
        if m.state == TxnState::Ongoing && partitions.iter().all(|p| m.partitions.contains(p)) {
            return Ok(Vec::new());
        }
        if matches!(m.state, TxnState::PrepareCommit | TxnState::PrepareAbort) {
            return Err(CoordinatorError::InvalidTxnState);
        }
        if m.state != TxnState::Ongoing {
            m.start_timestamp_ms = now;
        }
        m.state = TxnState::Ongoing;
        m.partitions.extend(partitions.iter().cloned());
        m.last_update_timestamp_ms = now;
        Ok(vec![Step::Log(m.clone())])
    }

    /// EndTxn (commitTransaction, abortTransaction): PrepareCommit (or
    /// PrepareAbort) logged, the markers, then CompleteCommit (CompleteAbort).
    pub fn end_transaction(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        commit: bool,
        now: i64,
    ) -> Result<Vec<Step>, CoordinatorError> {
        let epoch = self.epoch;
        let m = self.current(transactional_id, producer_id, producer_epoch)?;
        if m.state != TxnState::Ongoing {
            return Err(CoordinatorError::InvalidTxnState);
        }
        let mut steps = Vec::new();
        complete(m, commit, epoch, now, &mut steps);
        Ok(steps)
    }

    /// The metadata a request with this producer id and epoch may change.
    fn current(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
    ) -> Result<&mut TxnMetadata, CoordinatorError> {
        let m = self
            .txns
            .get_mut(transactional_id)
            .ok_or(CoordinatorError::InvalidProducerIdMapping)?;
        if m.producer_id != producer_id {
            return Err(CoordinatorError::InvalidProducerIdMapping);
        }
        if m.producer_epoch != producer_epoch {
            return Err(CoordinatorError::ProducerFenced);
        }
        Ok(m)
    }
}

/// Prepare, markers, complete: the end of an ongoing transaction.
fn complete(
    m: &mut TxnMetadata,
    commit: bool,
    coordinator_epoch: i32,
    now: i64,
    steps: &mut Vec<Step>,
) {
    m.state = if commit {
        TxnState::PrepareCommit
    } else {
        TxnState::PrepareAbort
    };
    m.last_update_timestamp_ms = now;
    steps.push(Step::Log(m.clone()));
    steps.push(Step::Markers {
        commit,
        producer_id: m.producer_id,
        producer_epoch: m.producer_epoch,
        coordinator_epoch,
        partitions: m.partitions.iter().cloned().collect(),
    });
    m.state = if commit {
        TxnState::CompleteCommit
    } else {
        TxnState::CompleteAbort
    };
    m.partitions.clear();
    steps.push(Step::Log(m.clone()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn states(steps: &[Step]) -> Vec<String> {
        steps
            .iter()
            .map(|s| match s {
                Step::Log(m) => format!("{} e{}", m.state.name(), m.producer_epoch),
                Step::Markers {
                    commit,
                    producer_epoch,
                    partitions,
                    ..
                } => format!(
                    "{} e{producer_epoch} x{}",
                    if *commit { "COMMIT" } else { "ABORT" },
                    partitions.len()
                ),
            })
            .collect()
    }

    #[test]
    fn a_committed_transaction_then_a_fenced_one() {
        let mut c = Coordinator::new(0, 1000);
        let init = c.init_producer_id("tx", 60000, 1);
        assert_eq!((init.producer_id, init.producer_epoch), (1000, 0));
        assert_eq!(states(&init.steps), ["Empty e0"]);
        let p = vec![("out".to_string(), 0)];
        let s = c.add_partitions("tx", 1000, 0, &p, 2).unwrap();
        assert_eq!(states(&s), ["Ongoing e0"]);
        assert!(c.add_partitions("tx", 1000, 0, &p, 3).unwrap().is_empty());
        let s = c.end_transaction("tx", 1000, 0, true, 4).unwrap();
        assert_eq!(
            states(&s),
            ["PrepareCommit e0", "COMMIT e0 x1", "CompleteCommit e0"]
        );
        // A completed transaction: the next instance only bumps the epoch.
        let init = c.init_producer_id("tx", 60000, 5);
        assert_eq!((init.producer_epoch, init.fenced_with), (1, None));
        c.add_partitions("tx", 1000, 1, &p, 6).unwrap();
        // An ongoing one is fenced with epoch 2 and aborted; the retry gets 3.
        let init = c.init_producer_id("tx", 60000, 7);
        assert_eq!((init.producer_epoch, init.fenced_with), (3, Some(2)));
        assert_eq!(
            states(&init.steps),
            [
                "PrepareAbort e2",
                "ABORT e2 x1",
                "CompleteAbort e2",
                "Empty e3"
            ]
        );
        // The old instance is fenced everywhere.
        assert_eq!(
            c.add_partitions("tx", 1000, 1, &p, 8),
            Err(CoordinatorError::ProducerFenced)
        );
        assert_eq!(
            c.end_transaction("tx", 1000, 1, true, 8),
            Err(CoordinatorError::ProducerFenced)
        );
        assert_eq!(
            c.end_transaction("tx", 1000, 3, true, 8),
            Err(CoordinatorError::InvalidTxnState)
        );
        // Empty is logged with null partitions, Ongoing with them by topic.
        let m = c.get("tx").unwrap();
        assert_eq!(m.log_value().partitions, None);
        c.add_partitions("tx", 1000, 3, &p, 9).unwrap();
        assert_eq!(
            c.get("tx").unwrap().log_value().partitions,
            Some(vec![("out".to_string(), vec![0])])
        );
    }
}
