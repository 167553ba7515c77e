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
//!
//! [`judge`] is the one place the rule is applied: every command that
//! speaks of hanging transactions (`verify-crc --deep`, `transactions`,
//! `report --deep`) calls it with the same [`Inputs`]. The rule needs a
//! "now" (step 1) and the coordinator's state (steps 2 and 3); offline
//! neither is implied. The wall clock is not "now" (a copy of a log
//! directory examined a year later would hang everything), and without
//! a `__transaction_state` partition no candidate can be ruled out, so
//! calling every candidate hanging would contradict find-hanging on any
//! healthy cluster. When either is missing klog judges nothing: the open
//! transactions are [`NotJudged`], and one note ([`not_judged_note`])
//! says why, never a `hanging_transaction` warning.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::Result;
use crate::format::DecodeLimits;
use crate::log::findings::{Finding, Kind};
use crate::log::{classify, DataDir, Partition, PathKind};
use crate::txn::txnlog::{self, status_name, CoordinatorView, TRANSACTION_STATE_TOPIC};
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

/// Every open transaction of one partition, oldest first, in the shape of
/// a candidate (its age not looked at).
pub fn open_transactions(p: &Partition, st: &PartitionState) -> Vec<Candidate> {
    let mut out: Vec<Candidate> = st
        .producers
        .values()
        .filter_map(|s| s.open.map(|o| (s, o)))
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

/// The candidates of one partition (rule 1), oldest transaction first.
pub fn candidates(
    p: &Partition,
    st: &PartitionState,
    now_ms: i64,
    max_transaction_timeout_ms: i64,
) -> Vec<Candidate> {
    open_transactions(p, st)
        .into_iter()
        .filter(|c| now_ms.saturating_sub(c.last_timestamp) > max_transaction_timeout_ms)
        .collect()
}

/// What the coordinator's log says of a candidate (rules 2 and 3).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
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
    /// Whether find-hanging prints it: every verdict but `Listed`.
    pub fn is_hanging(&self) -> bool {
        !matches!(self, Verdict::Listed { .. })
    }
}

/// Rules 2 and 3 for a candidate of `topic`-`partition`.
pub fn verdict(view: &CoordinatorView, c: &Candidate, topic: &str, partition: i32) -> Verdict {
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

/// What the rule needs besides a partition's producer state.
#[derive(Debug, Clone)]
pub struct Inputs {
    /// "Now" (a command's `--now-ms`); `None`: nothing is judged.
    pub now_ms: Option<i64>,
    /// find-hanging's `--max-transaction-timeout`, in ms.
    pub max_transaction_timeout_ms: i64,
    /// The coordinator's state: the `__transaction_state` partitions among
    /// the directories read ([`coordinator_view`]); `None`: nothing is judged.
    pub coordinator: Option<Arc<CoordinatorView>>,
}

impl Default for Inputs {
    fn default() -> Self {
        Inputs {
            now_ms: None,
            max_transaction_timeout_ms: DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
            coordinator: None,
        }
    }
}

impl Inputs {
    /// Now and the coordinator's state, or why the rule cannot be applied.
    fn ready(&self) -> std::result::Result<(i64, &CoordinatorView), NotJudged> {
        match (self.now_ms, self.coordinator.as_deref()) {
            (Some(now), Some(view)) => Ok((now, view)),
            (now, view) => Err(NotJudged {
                no_now: now.is_none(),
                no_coordinator_log: view.is_none(),
            }),
        }
    }

    /// Why the rule cannot be applied with these inputs, or `None`.
    pub fn not_judged(&self) -> Option<NotJudged> {
        self.ready().err()
    }
}

/// Why open transactions were not judged.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NotJudged {
    /// No "now" was given (`--now-ms`): no age, so no candidate (step 1).
    pub no_now: bool,
    /// No `__transaction_state` partition was among the directories read:
    /// no candidate can be ruled out (steps 2 and 3).
    pub no_coordinator_log: bool,
}

impl std::fmt::Display for NotJudged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let now = "no time was given to judge their age at (pass --now-ms)";
        let log = "the coordinator's state is not on these directories (no \
                   __transaction_state partition among them)";
        match (self.no_now, self.no_coordinator_log) {
            (true, true) => write!(f, "{now}, and {log}"),
            (true, false) => f.write_str(now),
            (false, _) => f.write_str(log),
        }
    }
}

/// One open transaction and what the rule says of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Judgement {
    pub candidate: Candidate,
    /// Steps 2 and 3, or why the rule could not be applied.
    pub verdict: std::result::Result<Verdict, NotJudged>,
}

impl Judgement {
    /// Whether the rule calls it hanging (never when not judged).
    pub fn is_hanging(&self) -> bool {
        self.verdict.as_ref().is_ok_and(Verdict::is_hanging)
    }
}

/// find-hanging's rule for one partition: with "now" and the coordinator's
/// state, each candidate (step 1) with its verdict (steps 2 and 3); with
/// "now" alone, each candidate not judged (an open transaction younger
/// than the timeout is not hanging whatever the coordinator says); without
/// "now", every open transaction not judged.
pub fn judge(p: &Partition, st: &PartitionState, inputs: &Inputs) -> Vec<Judgement> {
    let timeout = inputs.max_transaction_timeout_ms;
    match inputs.ready() {
        Ok((now, view)) => candidates(p, st, now, timeout)
            .into_iter()
            .map(|candidate| Judgement {
                verdict: Ok(verdict(view, &candidate, &p.topic, p.partition)),
                candidate,
            })
            .collect(),
        Err(why) => match inputs.now_ms {
            Some(now) => candidates(p, st, now, timeout),
            None => open_transactions(p, st),
        }
        .into_iter()
        .map(|candidate| Judgement {
            candidate,
            verdict: Err(why),
        })
        .collect(),
    }
}

/// The `hanging_transaction` findings of one partition's judgements.
pub fn findings(p: &Partition, judgements: &[Judgement], inputs: &Inputs) -> Vec<Finding> {
    let Some(now) = inputs.now_ms else {
        return Vec::new();
    };
    judgements
        .iter()
        .filter_map(|j| match &j.verdict {
            Ok(v) if v.is_hanging() => Some(finding(
                &j.candidate,
                v,
                &p.name(),
                now,
                inputs.max_transaction_timeout_ms,
            )),
            _ => None,
        })
        .collect()
}

/// The one note of a run whose open transactions were not judged (at the
/// first of them), or `None` when every one was. `judgements` are the
/// run's, every partition's.
pub fn not_judged_note<'a>(judgements: impl IntoIterator<Item = &'a Judgement>) -> Option<Finding> {
    let mut not = judgements
        .into_iter()
        .filter_map(|j| j.verdict.as_ref().err().map(|why| (j, *why)));
    let (first, why) = not.next()?;
    let more = not.count();
    let what = match (why.no_now, more) {
        (true, 0) => "this open transaction".to_string(),
        (true, n) => format!("{} open transactions (this one first)", n + 1),
        (false, 0) => "this open transaction, whose producer last wrote more than the maximum \
                       transaction timeout ago,"
            .to_string(),
        (false, n) => format!(
            "{} open transactions whose producers last wrote more than the maximum transaction \
             timeout ago (this one first)",
            n + 1
        ),
    };
    let c = &first.candidate;
    Some(
        Finding::new(
            Kind::HangingNotJudged,
            &c.file,
            c.position,
            Some(c.start_offset),
            format!(
                "hanging transactions not judged: {why}; kafka-transactions find-hanging's rule \
                 needs both a now and the coordinator's state to call {what} hanging or not"
            ),
        )
        .with_producer(c.producer_id),
    )
}

/// The coordinator's state in `partitions`: the `__transaction_state`
/// ones replayed ([`txnlog::replay`]), `None` when there is none.
pub fn coordinator_view(
    partitions: &[&Partition],
    limits: DecodeLimits,
) -> Result<Option<CoordinatorView>> {
    let coordinator: Vec<&Partition> = partitions
        .iter()
        .copied()
        .filter(|p| p.topic == TRANSACTION_STATE_TOPIC)
        .collect();
    if coordinator.is_empty() {
        return Ok(None);
    }
    txnlog::replay(&coordinator, limits).map(Some)
}

/// [`coordinator_view`] of the live partitions under `paths` (data
/// directories, partition folders; a lone file is no partition).
pub fn coordinator_in(paths: &[PathBuf], limits: DecodeLimits) -> Result<Option<CoordinatorView>> {
    let mut partitions = Vec::new();
    for path in paths {
        collect(path, &mut partitions)?;
    }
    coordinator_view(&partitions.iter().collect::<Vec<_>>(), limits)
}

/// The `__transaction_state` partitions at `path`.
fn collect(path: &Path, out: &mut Vec<Partition>) -> Result<()> {
    match classify(path)? {
        PathKind::Partition => {
            let p = Partition::open(path)?;
            if p.topic == TRANSACTION_STATE_TOPIC {
                out.push(p);
            }
        }
        PathKind::DataDir => out.extend(
            DataDir::open(path)?
                .live()
                .filter(|p| p.topic == TRANSACTION_STATE_TOPIC)
                .cloned(),
        ),
        PathKind::File => {}
    }
    Ok(())
}
