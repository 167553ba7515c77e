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
//! markers from its log.
//!
//! Two transaction versions (the cluster's `transaction.version`,
//! `TransactionVersion`; both log TransactionLogValue v1,
//! `transactionLogValueVersion`): with version 2 (KIP-890, the default from
//! Kafka 4.0, `LATEST_PRODUCTION`) every end of transaction bumps the
//! producer's epoch (`TransactionMetadata.prepareAbortOrCommit` with a
//! client version that `supportsEpochBump`): Prepare and Complete are
//! logged with epoch + 1, the markers carry it, and the producer goes on
//! with it (EndTxn answers with the new epoch). With version 1 clients
//! speak the classic protocol (`TV_0`): the epoch moves only at
//! InitProducerId.

use std::collections::{BTreeMap, BTreeSet};

use crate::txn::txnlog::TransactionMetadata;

/// The cluster's `transaction.version` and the protocol its clients speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TransactionVersion {
    /// Flexible transaction log records, the classic protocol (`TV_1`).
    V1,
    /// An epoch bump at every commit and abort (`TV_2`, KIP-890).
    V2,
}

impl TransactionVersion {
    /// The feature level.
    pub fn level(self) -> i16 {
        match self {
            TransactionVersion::V1 => 1,
            TransactionVersion::V2 => 2,
        }
    }

    /// What a client of this cluster speaks, as logged in
    /// ClientTransactionVersion and sent with the markers
    /// (`TransactionVersion.transactionVersionForEndTxn`: TV_2 or TV_0).
    pub fn client_version(self) -> i16 {
        match self {
            TransactionVersion::V1 => 0,
            TransactionVersion::V2 => 2,
        }
    }

    /// Whether every end of transaction bumps the epoch (`supportsEpochBump`).
    pub fn bumps_epoch(self) -> bool {
        self == TransactionVersion::V2
    }
}

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
    /// The protocol of the client's last transaction request (0 for a new
    /// id: `TransactionMetadata` starts at `TV_0`).
    pub client_transaction_version: i16,
}

impl TxnMetadata {
    /// The TransactionLogValue (v1, as a cluster at transaction version 1
    /// or 2 writes) logged for this state (`TransactionLog.valueToBytes`:
    /// no partitions when Empty).
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
            client_transaction_version: self.client_transaction_version,
            ..TransactionMetadata::new(
                1,
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
        /// WriteTxnMarkers' transaction version (the client's).
        transaction_version: i16,
        partitions: Vec<(String, i32)>,
    },
}

/// An EndTxn answer: the steps, and the epoch the producer goes on with
/// (bumped under transaction version 2).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Ended {
    pub steps: Vec<Step>,
    pub producer_epoch: i16,
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
    /// The cluster's transaction version.
    pub version: TransactionVersion,
    next_producer_id: i64,
    txns: BTreeMap<String, TxnMetadata>,
}

impl Coordinator {
    /// A coordinator at `epoch` handing out producer ids from
    /// `first_producer_id`, on a cluster at `version`.
    pub fn new(epoch: i32, first_producer_id: i64, version: TransactionVersion) -> Self {
        Coordinator {
            epoch,
            version,
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

    /// InitProducerId for `transactional_id` (`handleInitProducerId`). A
    /// new id gets a producer id at epoch 0; a known one gets its epoch
    /// bumped. An ongoing transaction is fenced first: the epoch is bumped
    /// (version 1: `prepareFenceProducerEpoch`; version 2: by
    /// `prepareAbortOrCommit`, the fence's own bump never logged),
    /// PrepareAbort logged, ABORT markers written with that epoch,
    /// CompleteAbort logged; the producer's retry then bumps the epoch once
    /// more ("this epoch is never returned"). Either way the markers carry
    /// epoch + 1 and the producer gets epoch + 2.
    pub fn init_producer_id(&mut self, transactional_id: &str, timeout_ms: i32, now: i64) -> Init {
        let mut steps = Vec::new();
        let mut fenced_with = None;
        let producer_id = if self.txns.contains_key(transactional_id) {
            -1
        } else {
            self.allocate_producer_id()
        };
        let epoch = self.epoch;
        let version = self.version;
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
                client_transaction_version: 0,
            });
        if m.state == TxnState::Ongoing {
            if !version.bumps_epoch() {
                m.producer_epoch += 1;
            }
            // Not from the client: the abort speaks the server's version.
            fenced_with = Some(complete(m, false, epoch, now, &mut steps, version));
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
        let version = self.version;
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
        m.client_transaction_version = version.client_version();
        m.partitions.extend(partitions.iter().cloned());
        m.last_update_timestamp_ms = now;
        Ok(vec![Step::Log(m.clone())])
    }

    /// EndTxn (commitTransaction, abortTransaction): PrepareCommit (or
    /// PrepareAbort) logged, the markers, then CompleteCommit
    /// (CompleteAbort); under version 2 at the bumped epoch, which the
    /// producer gets back.
    pub fn end_transaction(
        &mut self,
        transactional_id: &str,
        producer_id: i64,
        producer_epoch: i16,
        commit: bool,
        now: i64,
    ) -> Result<Ended, CoordinatorError> {
        let (epoch, version) = (self.epoch, self.version);
        let m = self.current(transactional_id, producer_id, producer_epoch)?;
        if m.state != TxnState::Ongoing {
            return Err(CoordinatorError::InvalidTxnState);
        }
        let mut steps = Vec::new();
        let producer_epoch = complete(m, commit, epoch, now, &mut steps, version);
        Ok(Ended {
            steps,
            producer_epoch,
        })
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

/// Prepare, markers, complete: the end of an ongoing transaction
/// (`prepareAbortOrCommit`, `TransactionMarkerChannelManager`,
/// `prepareComplete`). Returns the epoch of the markers.
fn complete(
    m: &mut TxnMetadata,
    commit: bool,
    coordinator_epoch: i32,
    now: i64,
    steps: &mut Vec<Step>,
    version: TransactionVersion,
) -> i16 {
    if version.bumps_epoch() {
        m.producer_epoch += 1;
    }
    m.client_transaction_version = version.client_version();
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
        transaction_version: version.client_version(),
        partitions: m.partitions.iter().cloned().collect(),
    });
    m.state = if commit {
        TxnState::CompleteCommit
    } else {
        TxnState::CompleteAbort
    };
    m.partitions.clear();
    steps.push(Step::Log(m.clone()));
    m.producer_epoch
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

    /// InitProducerId while "tx" is Ongoing at epoch 1: fenced and aborted
    /// at epoch 2 (both versions), the retry gets 3.
    fn fenced_at_epoch_1(c: &mut Coordinator, now: i64) {
        let init = c.init_producer_id("tx", 60000, now);
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
    }

    #[test]
    fn a_committed_transaction_then_a_fenced_one() {
        let mut c = Coordinator::new(0, 1000, TransactionVersion::V1);
        let init = c.init_producer_id("tx", 60000, 1);
        assert_eq!((init.producer_id, init.producer_epoch), (1000, 0));
        assert_eq!(states(&init.steps), ["Empty e0"]);
        let p = vec![("out".to_string(), 0)];
        let s = c.add_partitions("tx", 1000, 0, &p, 2).unwrap();
        assert_eq!(states(&s), ["Ongoing e0"]);
        assert!(c.add_partitions("tx", 1000, 0, &p, 3).unwrap().is_empty());
        let s = c.end_transaction("tx", 1000, 0, true, 4).unwrap();
        assert_eq!(s.producer_epoch, 0, "version 1: the epoch stays");
        let s = s.steps;
        assert_eq!(
            states(&s),
            ["PrepareCommit e0", "COMMIT e0 x1", "CompleteCommit e0"]
        );
        // A completed transaction: the next instance only bumps the epoch.
        let init = c.init_producer_id("tx", 60000, 5);
        assert_eq!((init.producer_epoch, init.fenced_with), (1, None));
        c.add_partitions("tx", 1000, 1, &p, 6).unwrap();
        // An ongoing one is fenced with epoch 2 and aborted; the retry gets 3.
        fenced_at_epoch_1(&mut c, 7);
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
        let m = &c.txns["tx"];
        assert_eq!(m.log_value().partitions, None);
        c.add_partitions("tx", 1000, 3, &p, 9).unwrap();
        assert_eq!(
            c.txns["tx"].log_value().partitions,
            Some(vec![("out".to_string(), vec![0])])
        );
    }

    /// Transaction version 2 (TransactionMetadata.prepareAbortOrCommit with
    /// a client version that supportsEpochBump): every end of transaction
    /// logs Prepare and Complete at epoch + 1, the markers carry it, EndTxn
    /// answers with it; ClientTransactionVersion 2 from the first
    /// AddPartitions on (the new id's Empty record has 0, TV_0). Fencing an
    /// ongoing transaction gives the same epochs as version 1: the abort at
    /// epoch + 1, the producer at epoch + 2.
    #[test]
    fn transaction_version_2_bumps_the_epoch_at_every_end() {
        let mut c = Coordinator::new(0, 1000, TransactionVersion::V2);
        let init = c.init_producer_id("tx", 60000, 1);
        assert_eq!(init.producer_epoch, 0);
        let tv = |steps: &[Step]| -> Vec<i16> {
            steps
                .iter()
                .filter_map(|s| match s {
                    Step::Log(m) => Some(m.client_transaction_version),
                    Step::Markers { .. } => None,
                })
                .collect()
        };
        assert_eq!(tv(&init.steps), [0]);
        let p = vec![("out".to_string(), 0)];
        let s = c.add_partitions("tx", 1000, 0, &p, 2).unwrap();
        assert_eq!(
            (states(&s), tv(&s)),
            (vec!["Ongoing e0".to_string()], vec![2])
        );
        let end = c.end_transaction("tx", 1000, 0, true, 3).unwrap();
        assert_eq!(end.producer_epoch, 1);
        assert_eq!(
            states(&end.steps),
            ["PrepareCommit e1", "COMMIT e1 x1", "CompleteCommit e1"]
        );
        assert!(end.steps.iter().all(|s| match s {
            Step::Markers {
                transaction_version,
                ..
            } => *transaction_version == 2,
            Step::Log(m) => {
                m.log_value().version == 1 && m.log_value().client_transaction_version == 2
            }
        }));
        // The old epoch is fenced; the next transaction runs at epoch 1.
        assert_eq!(
            c.add_partitions("tx", 1000, 0, &p, 4),
            Err(CoordinatorError::ProducerFenced)
        );
        c.add_partitions("tx", 1000, 1, &p, 5).unwrap();
        fenced_at_epoch_1(&mut c, 6);
    }
}
