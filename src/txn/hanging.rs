//! Hanging transactions, by the rules of `kafka-transactions find-hanging`
//! (`TransactionsCommand.FindHangingTransactionsCommand`, Kafka 4.3):
//!
//! 1. a candidate is an open transaction of a partition (the producer's
//!    `currentTransactionStartOffset` is set) whose producer last wrote more
//!    than the maximum transaction timeout ago (`collectCandidateOpenTransactions`:
//!    `now - lastTimestamp > maxTransactionTimeoutMs`; `--max-transaction-timeout`,
//!    15 minutes by default). The age is from the producer's last write
//!    (`ProducerStateEntry.lastTimestamp`: the max timestamp of its last
//!    batch, or its last marker's timestamp), not from the transaction's start;
//! 2. its producer id is looked up among the coordinator's transactional
//!    ids (`ListTransactions` filtered by producer id: the metadata's current
//!    producer id, never a `Dead` one); with none, it is hanging;
//! 3. otherwise it is hanging unless that transactional id's partitions
//!    (`DescribeTransactions`: the partitions of an Ongoing transaction, and
//!    of a PrepareCommit or PrepareAbort one whose markers are not all
//!    written) include the partition: the coordinator will still write its
//!    marker (`filterHangingTransactions`). Epochs are not compared: under
//!    transaction version 2 the Prepare states are logged with the epoch
//!    after the data's.
//!
//! Offline the coordinator's state is what `__transaction_state` holds
//! (the state a coordinator loads, [`CoordinatorView`]); a Prepare record
//! lists every partition of the transaction, including those whose marker
//! a live coordinator may have written since (their transaction is then
//! not open in the partition).

use crate::log::findings::{Finding, Kind};
use crate::log::Partition;
use crate::txn::txnlog::{status_name, CoordinatorView};
use crate::txn::PartitionState;

/// `--max-transaction-timeout`'s default in `kafka-transactions find-hanging`: 15 minutes.
pub const DEFAULT_MAX_TRANSACTION_TIMEOUT_MS: i64 = 15 * 60 * 1000;

/// An open transaction whose producer last wrote more than the timeout ago.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Candidate {
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// The coordinator epoch of the producer's last marker, -1 before one.
    pub coordinator_epoch: i32,
    /// `currentTransactionStartOffset`.
    pub start_offset: i64,
    /// `lastTimestamp`.
    pub last_timestamp: i64,
    /// Where the transaction's first batch is (file, position), when the log holds it.
    pub file: std::path::PathBuf,
    pub position: u64,
}

impl Candidate {
    /// find-hanging's `Duration(min)`: whole minutes since the last write
    /// (`TimeUnit.MILLISECONDS.toMinutes`, which truncates).
    pub fn duration_minutes(&self, now_ms: i64) -> i64 {
        now_ms.saturating_sub(self.last_timestamp) / 60_000
    }
}

/// The candidates of one partition (rule 1), oldest transaction first.
pub fn candidates(
    p: &Partition,
    st: &PartitionState,
    now_ms: i64,
    max_transaction_timeout_ms: i64,
) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = st
        .producers
        .values()
        .filter_map(|s| s.open.map(|o| (s, o)))
        .filter(|(s, _)| now_ms.saturating_sub(s.last_timestamp) > max_transaction_timeout_ms)
        .map(|(s, o)| Candidate {
            producer_id: s.producer_id,
            producer_epoch: s.epoch,
            coordinator_epoch: s.coordinator_epoch,
            start_offset: o.first_offset,
            last_timestamp: s.last_timestamp,
            file: p
                .segments
                .iter()
                .rev()
                .find(|seg| seg.base_offset <= o.first_offset)
                .map_or_else(std::path::PathBuf::new, |seg| seg.log.clone()),
            position: o.position,
        })
        .collect();
    out.sort_by_key(|c| (c.start_offset, c.producer_id));
    out
}

/// What the coordinator's log says of a candidate (rules 2 and 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// No `__transaction_state` was read: the coordinator's state is unknown.
    NoCoordinatorLog,
    /// No transactional id has the producer id: hanging.
    NoTransactionalId,
    /// The transactional id's partitions do not include the partition: hanging.
    NotListed {
        transactional_id: String,
        state: &'static str,
    },
    /// The transactional id lists the partition: not hanging, the
    /// coordinator will write the marker (or time the transaction out).
    Listed {
        transactional_id: String,
        state: &'static str,
    },
}

impl Verdict {
    /// Whether find-hanging prints it (every verdict but `Listed`; without
    /// the coordinator's log klog cannot rule a candidate out).
    pub fn is_hanging(&self) -> bool {
        !matches!(self, Verdict::Listed { .. })
    }
}

/// Rules 2 and 3 for a candidate of `topic`-`partition`.
pub fn verdict(
    view: Option<&CoordinatorView>,
    c: &Candidate,
    topic: &str,
    partition: i32,
) -> Verdict {
    let Some(view) = view else {
        return Verdict::NoCoordinatorLog;
    };
    let mut ids = view.by_producer(c.producer_id).peekable();
    if ids.peek().is_none() {
        return Verdict::NoTransactionalId;
    }
    let mut first = None;
    for (id, m) in ids {
        let state = status_name(m.status);
        if m.topic_partitions()
            .any(|(t, p)| t == topic && p == partition)
        {
            return Verdict::Listed {
                transactional_id: id.to_string(),
                state,
            };
        }
        first.get_or_insert((id, state));
    }
    let (id, state) = first.unwrap_or_default();
    Verdict::NotListed {
        transactional_id: id.to_string(),
        state,
    }
}

/// The `hanging_transaction` finding of a candidate with its verdict.
pub fn finding(
    c: &Candidate,
    verdict: &Verdict,
    name: &str,
    now_ms: i64,
    max_transaction_timeout_ms: i64,
) -> Finding {
    let why = match verdict {
        Verdict::NoCoordinatorLog => {
            "no __transaction_state was read, so its coordinator's state is unknown (kafka-transactions \
             find-hanging would ask it)"
                .to_string()
        }
        Verdict::NoTransactionalId => format!(
            "no transactional id of the __transaction_state read has producer {}: no coordinator will \
             write its marker",
            c.producer_id
        ),
        Verdict::NotListed {
            transactional_id,
            state,
        } => format!(
            "its transactional id {transactional_id:?} is {state} and does not list {name}: its \
             coordinator will not write a marker here"
        ),
        Verdict::Listed {
            transactional_id,
            state,
        } => format!("its transactional id {transactional_id:?} is {state} with {name} in it"),
    };
    Finding::new(
        Kind::HangingTransaction,
        &c.file,
        c.position,
        Some(c.start_offset),
        format!(
            "open since offset {}; the producer's last write ({}) is {} before now, more than the {} \
             maximum transaction timeout; {why}. It pins the last stable offset",
            c.start_offset,
            crate::format::time::format_iso_ms(c.last_timestamp),
            crate::format::time::human_duration_ms(now_ms.saturating_sub(c.last_timestamp)),
            crate::format::time::human_duration_ms(max_transaction_timeout_ms)
        ),
    )
    .with_producer(c.producer_id)
}
