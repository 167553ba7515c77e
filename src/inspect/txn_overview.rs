//! The transactions of a set of partitions, read offline: what idempotent
//! and transactional producers left in each log, what the transaction
//! coordinator's log (`__transaction_state`) says of every transactional
//! id, and which open transactions hang. The document of `klog
//! transactions`; [`survey`] builds it, nothing here prints.
//!
//! Per partition, in this order, each from the one place that defines it:
//! - the producer state of one pass over the log ([`crate::txn::analyze`]:
//!   sequences, epochs, open and aborted transactions, the last stable
//!   offset below the high watermark of `replication-offset-checkpoint`);
//! - find-hanging's rule (`TransactionsCommand.FindHangingTransactionsCommand`,
//!   [`crate::txn::hanging::judge`]) with the inputs `verify-crc --deep`
//!   gives it: "now", the maximum transaction timeout and the
//!   coordinator's state of the `__transaction_state` partitions among
//!   those read; without a now or that state nothing is judged, and one
//!   note (`hanging_not_judged`) goes under the partition of the first
//!   transaction not judged;
//! - each segment's `.txnindex` against the aborted transactions of the
//!   log ([`crate::txn::check_txn_indexes`]; `LogSegment.recover` rebuilds
//!   it);
//! - of a partition with tiered storage (KIP-405), the offsets only remote
//!   segments hold and which of them hold aborted transactions
//!   ([`crate::tiered::Tiering::unread_transactions`]): only the local log
//!   is read;
//! - each producer-state snapshot (`<offset>.snapshot`,
//!   `ProducerStateManager`) decoded and compared with the state the log
//!   gives up to its offset ([`crate::txn::snapshot::check`]).
//!
//! The coordinator's view is the state a coordinator loads
//! (`TransactionStateManager.loadTransactionsForTxnTopicPartition`), each
//! id with what the coordinator does on its own once loaded
//! ([`crate::txn::txnlog::TransactionMetadata::coordinator_end`]: a
//! Prepare state completed at once, an Ongoing transaction aborted once
//! `TransactionStateManager.timedOutTransactions` finds its timeout
//! passed). A record or batch of it that cannot be read is an error
//! finding, and the rows it may affect say so.
//!
//! The field names of the rows are the JSON document's (`man/schema/`).

use std::path::PathBuf;
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::Result;
use crate::log::findings::{Counts, FileFields, Finding, Kind, Severity, Summary};
use crate::log::walk::Meter;
use crate::log::Partition;
use crate::txn::hanging::{self, Judgement, NotJudged, Verdict};
use crate::txn::txnlog::{self, status_name, CoordinatorEnd, CoordinatorView};
use crate::txn::{self, snapshot, PartitionState, TxnOptions};

/// What [`survey`] needs besides the partitions.
#[derive(Debug, Clone, Copy)]
pub struct Options {
    /// "Now" (epoch ms) for the age of open transactions; `None`: no
    /// transaction is judged hanging.
    pub now_ms: Option<i64>,
    /// find-hanging's `--max-transaction-timeout`, in ms.
    pub max_transaction_timeout_ms: i64,
    /// Where to count the bytes of log read, for a progress display.
    pub meter: Option<&'static Meter>,
}

/// The transactions of `partitions` (data directories' partitions and lone
/// partition folders alike; the `__transaction_state` ones among them are
/// also the coordinator's state).
pub fn survey(partitions: &[Partition], opts: &Options) -> Result<TxnOverview> {
    // Tiered storage: what lives in remote segments is not read.
    let tiering = crate::tiered::Tiering::for_partitions(partitions)?;
    let view =
        hanging::coordinator_view(&partitions.iter().collect::<Vec<_>>(), Default::default())?
            .map(Arc::new);
    // find-hanging's rule, with the inputs verify-crc --deep gives it.
    let inputs = hanging::Inputs {
        now_ms: opts.now_ms,
        max_transaction_timeout_ms: opts.max_transaction_timeout_ms,
        coordinator: view.clone(),
    };
    let mut analysed = Vec::new();
    let mut candidates = Vec::new();
    // Every partition's judgements, for the one note when some were not judged.
    let mut judged: Vec<(usize, Judgement)> = Vec::new();
    for p in partitions {
        let txn_opts = TxnOptions {
            high_watermark: crate::log::checkpoint::high_watermark(p)?,
            meter: opts.meter,
            ..TxnOptions::default()
        };
        let mut st = txn::analyze(p, &txn_opts)?;
        let judgements = hanging::judge(p, &st, &inputs);
        st.findings
            .extend(hanging::findings(p, &judgements, &inputs));
        if let Some(now) = opts.now_ms {
            // find-hanging's candidates (step 1) need a now.
            candidates.extend(judgements.iter().map(|j| HangingOut::new(p, j, now)));
        }
        judged.extend(judgements.into_iter().map(|j| (analysed.len(), j)));
        let index_findings = txn::check_txn_indexes(p, &st)?;
        st.findings.extend(index_findings);
        st.findings.extend(tiering.unread_transactions(p));
        let snaps = snapshots(p)?;
        for s in &snaps {
            st.findings.extend(s.findings.iter().cloned());
        }
        analysed.push((p, st, snaps));
    }
    // Said once, under the partition of the first transaction not judged.
    if let Some(note) = hanging::not_judged_note(judged.iter().map(|(_, j)| j)) {
        let first = judged.iter().find(|(_, j)| j.verdict.is_err());
        if let Some((_, st, _)) = first.and_then(|(i, _)| analysed.get_mut(*i)) {
            st.findings.push(note);
        }
    }
    Ok(TxnOverview::new(
        &analysed,
        view.as_deref(),
        candidates,
        opts,
        inputs.not_judged(),
    ))
}

/// One snapshot file and how it compares with the log.
#[derive(Debug, Clone)]
pub struct SnapshotCheck {
    pub path: PathBuf,
    /// The offset in its name: the log up to it is what it holds.
    pub offset: i64,
    /// The producers it holds (0 when unreadable).
    pub producers: usize,
    /// Findings about it: unreadable, or where it disagrees with the log.
    pub findings: Vec<Finding>,
}

/// Every producer-state snapshot of `p`, decoded and compared with the
/// log up to its offset: a snapshot that is not a regular file or does not
/// decode is a finding, not an error (`ProducerStateManager` skips it and
/// rebuilds from the log).
pub fn snapshots(p: &Partition) -> Result<Vec<SnapshotCheck>> {
    let mut out = Vec::new();
    for (offset, path) in snapshot::list(&p.dir)? {
        let bytes = match crate::log::files::read_regular(&path, i32::MAX as u64) {
            Ok(b) => b.unwrap_or_default(),
            Err(e) => {
                out.push(SnapshotCheck {
                    producers: 0,
                    findings: vec![Finding::new(
                        Kind::NotRegularFile,
                        &path,
                        0,
                        Some(offset),
                        e.to_string(),
                    )],
                    path,
                    offset,
                });
                continue;
            }
        };
        let check = match snapshot::decode(&bytes) {
            Ok(snap) => SnapshotCheck {
                producers: snap.entries.len(),
                findings: snapshot::check(p, &path, offset, &snap)?,
                path,
                offset,
            },
            Err(e) => SnapshotCheck {
                producers: 0,
                findings: vec![
                    Finding::decode(&path, 0, Some(offset), &e).with_kind(Kind::SnapshotUnreadable)
                ],
                path,
                offset,
            },
        };
        out.push(check);
    }
    Ok(out)
}

/// A partition, its producer state and its snapshots' checks.
type Analysed<'a> = (&'a Partition, PartitionState, Vec<SnapshotCheck>);

/// One producer's state in one partition.
#[derive(Serialize, JsonSchema)]
pub struct ProducerOut {
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub last_sequence: i32,
    pub first_offset: i64,
    pub last_offset: i64,
    pub batches: u64,
    pub transactional: bool,
    pub committed: u64,
    pub aborted: u64,
    pub open_transaction: Option<OpenOut>,
}

impl ProducerOut {
    /// One producer's state as the document has it.
    fn of(s: &txn::ProducerState) -> Self {
        ProducerOut {
            producer_id: s.producer_id,
            producer_epoch: s.epoch,
            last_sequence: s.last_sequence,
            first_offset: s.first_offset,
            last_offset: s.last_offset,
            batches: s.batches,
            transactional: s.transactional,
            committed: s.committed,
            aborted: s.aborted,
            open_transaction: s.open.map(|o| OpenOut {
                first_offset: o.first_offset,
                start_timestamp_ms: o.start_timestamp,
            }),
        }
    }
}

/// A transaction with no marker yet.
#[derive(Serialize, JsonSchema)]
pub struct OpenOut {
    pub first_offset: i64,
    pub start_timestamp_ms: i64,
}

/// An aborted transaction (what `.txnindex` records).
#[derive(Serialize, JsonSchema)]
pub struct AbortedOut {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
}

/// A producer-state snapshot file.
#[derive(Serialize, JsonSchema)]
pub struct SnapshotOut {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    pub file: FileFields,
    pub offset: i64,
    pub producers: u64,
    pub matches_log: bool,
}

/// One partition's producers and transactions.
#[derive(Serialize, JsonSchema)]
pub struct PartitionOut {
    pub topic: String,
    pub partition: i32,
    pub log_end_offset: i64,
    pub last_stable_offset: i64,
    pub producers: Vec<ProducerOut>,
    pub aborted: Vec<AbortedOut>,
    pub snapshots: Vec<SnapshotOut>,
    /// Text only: the partition's findings (JSON has them all in `findings`).
    #[serde(skip)]
    pub findings: Vec<Finding>,
    /// Its folder's name (`topic-partition`).
    #[serde(skip)]
    pub name: String,
    /// How many transactions are open at its log end.
    #[serde(skip)]
    pub open: u64,
}

impl PartitionOut {
    /// One analysed partition: its producers, aborted transactions and
    /// snapshots.
    fn of((p, st, snaps): &Analysed<'_>) -> Self {
        PartitionOut {
            topic: p.topic.clone(),
            partition: p.partition,
            log_end_offset: st.log_end,
            last_stable_offset: st.last_stable_offset(),
            producers: st.producers.values().map(ProducerOut::of).collect(),
            aborted: st
                .aborted
                .iter()
                .map(|a| AbortedOut {
                    producer_id: a.producer_id,
                    first_offset: a.first_offset,
                    last_offset: a.last_offset,
                })
                .collect(),
            snapshots: snaps
                .iter()
                .map(|s| SnapshotOut {
                    file: FileFields::of(&s.path),
                    offset: s.offset,
                    producers: s.producers as u64,
                    matches_log: s.findings.is_empty(),
                })
                .collect(),
            findings: st.findings.clone(),
            name: p.name(),
            open: st.open_transactions().len() as u64,
        }
    }
}

/// One transactional id as the coordinator (`__transaction_state`) has it.
#[derive(Serialize, JsonSchema)]
pub struct CoordinatorTxn {
    pub transactional_id: String,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub state: &'static str,
    pub timeout_ms: i32,
    /// Its partitions by topic (null when the record has none).
    pub partitions: Option<Vec<TopicPartitions>>,
    pub last_update_timestamp_ms: i64,
    pub start_timestamp_ms: i64,
    /// The TransactionLogValue version of its last record.
    pub record_version: i16,
    /// ClientTransactionVersion: 2 for transaction version 2 (KIP-890: the
    /// epoch is bumped at every commit and abort), 0 for the classic
    /// protocol (transaction versions 0 and 1).
    pub client_transaction_version: i16,
    /// PreviousProducerId, NextProducerId, NextProducerEpoch (-1 unless an
    /// epoch overflow moved the transactional id to a new producer id).
    pub previous_producer_id: i64,
    pub next_producer_id: i64,
    pub next_producer_epoch: i16,
    /// A later record of this id could not be read: the row may be stale.
    pub incomplete: bool,
    /// What the coordinator does with it on its own once it loads its log:
    /// completes a Prepare state at once, aborts an Ongoing transaction
    /// once its timeout has passed (null: nothing).
    pub coordinator_end: Option<CoordinatorEnd>,
}

impl CoordinatorTxn {
    /// Transactional id `id` as the coordinator's view `v` has it.
    fn of(id: &str, m: &txnlog::TransactionMetadata, v: &txnlog::CoordinatorView) -> Self {
        CoordinatorTxn {
            transactional_id: id.to_string(),
            producer_id: m.producer_id,
            producer_epoch: m.producer_epoch,
            state: status_name(m.status),
            timeout_ms: m.timeout_ms,
            partitions: m.partitions.as_ref().map(|ps| {
                ps.iter()
                    .map(|(t, ids)| TopicPartitions {
                        topic: t.clone(),
                        partitions: ids.clone(),
                    })
                    .collect()
            }),
            last_update_timestamp_ms: m.last_update_timestamp_ms,
            start_timestamp_ms: m.start_timestamp_ms,
            record_version: m.version,
            client_transaction_version: m.client_transaction_version,
            previous_producer_id: m.previous_producer_id,
            next_producer_id: m.next_producer_id,
            next_producer_epoch: m.next_producer_epoch,
            incomplete: v.unread_ids.contains(id),
            coordinator_end: m.coordinator_end(),
        }
    }
}

#[derive(Serialize, JsonSchema)]
pub struct TopicPartitions {
    pub topic: String,
    pub partitions: Vec<i32>,
}

/// An open transaction whose producer last wrote more than the maximum
/// transaction timeout ago: the columns of `kafka-transactions
/// find-hanging`, and what the coordinator's log says of it.
#[derive(Serialize, JsonSchema)]
pub struct HangingOut {
    pub topic: String,
    pub partition: i32,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub coordinator_epoch: i32,
    pub start_offset: i64,
    pub last_timestamp: i64,
    /// Whole minutes from the last write to now.
    pub duration_min: i64,
    /// Whether find-hanging lists it: false when its transactional id
    /// lists the partition (the coordinator will write the marker), and
    /// when it was not judged (`find_hanging.not_judged`).
    pub hanging: bool,
    /// Its producer's transactional id in the `__transaction_state` read.
    pub transactional_id: Option<String>,
    /// That id's state.
    pub coordinator_state: Option<&'static str>,
}

impl HangingOut {
    fn new(p: &Partition, j: &Judgement, now_ms: i64) -> Self {
        let c = &j.candidate;
        let (transactional_id, coordinator_state) = match &j.verdict {
            Ok(
                Verdict::Listed {
                    transactional_id,
                    state,
                }
                | Verdict::NotListed {
                    transactional_id,
                    state,
                },
            ) => (Some(transactional_id.clone()), Some(*state)),
            Ok(Verdict::NoTransactionalId) | Err(_) => (None, None),
        };
        HangingOut {
            topic: p.topic.clone(),
            partition: p.partition,
            producer_id: c.producer_id,
            producer_epoch: c.producer_epoch,
            coordinator_epoch: c.coordinator_epoch,
            start_offset: c.start_offset,
            last_timestamp: c.last_timestamp,
            duration_min: c.duration_minutes(now_ms),
            hanging: j.is_hanging(),
            transactional_id,
            coordinator_state,
        }
    }
}

/// The find-hanging view.
#[derive(Serialize, JsonSchema)]
pub struct FindHanging {
    /// --now-ms (null without it: then no candidate, nothing judged).
    pub now_ms: Option<i64>,
    pub max_transaction_timeout_ms: i64,
    /// Why find-hanging's rule could not be applied (no --now-ms, or no
    /// `__transaction_state` among the paths given), or null: when set,
    /// no transaction is called hanging.
    pub not_judged: Option<String>,
    /// Whether the coordinator's state was read whole: false when no
    /// `__transaction_state` was given (then nothing is judged) or some of
    /// it could not be read (then a transaction listed as hanging may not be).
    pub complete: bool,
    /// Every candidate, hanging or not.
    pub candidates: Vec<HangingOut>,
}

/// The transactions of the partitions read: `klog transactions`'s document.
#[derive(Serialize, JsonSchema)]
pub struct TxnOverview {
    pub partitions: Vec<PartitionOut>,
    /// The coordinator's view, when a `__transaction_state` folder was given.
    pub coordinator: Option<Vec<CoordinatorTxn>>,
    /// Whether every `__transaction_state` record and batch was read (null
    /// without a `__transaction_state` folder). When false the coordinator's
    /// table is incomplete: the findings say what was not read.
    pub coordinator_complete: Option<bool>,
    pub find_hanging: FindHanging,
    pub findings: Vec<Finding>,
    pub finding_counts: Counts,
    /// The coordinator's records and batches not read (its error findings).
    #[serde(skip)]
    pub coordinator_findings: Vec<Finding>,
    /// The coordinator's batches the walk stepped over.
    #[serde(skip)]
    pub damaged_batches: u64,
}

impl TxnOverview {
    fn new(
        analysed: &[Analysed<'_>],
        view: Option<&CoordinatorView>,
        candidates: Vec<HangingOut>,
        opts: &Options,
        not_judged: Option<NotJudged>,
    ) -> Self {
        let partitions = analysed.iter().map(PartitionOut::of).collect::<Vec<_>>();
        let all_coordinator = view.map(|v| v.findings.clone()).unwrap_or_default();
        let findings: Vec<Finding> = analysed
            .iter()
            .flat_map(|(_, st, _)| st.findings.iter().cloned())
            .chain(all_coordinator.iter().cloned())
            .collect();
        // The records not read: the errors (a warning is about a record
        // read as Kafka reads it).
        let coordinator_findings = all_coordinator
            .into_iter()
            .filter(|f| f.severity == Severity::Error)
            .collect();
        let coordinator = view.map(|v| {
            v.transactions
                .iter()
                .map(|(id, m)| CoordinatorTxn::of(id, m, v))
                .collect()
        });
        TxnOverview {
            partitions,
            coordinator,
            coordinator_complete: view.map(CoordinatorView::is_complete),
            find_hanging: FindHanging {
                now_ms: opts.now_ms,
                max_transaction_timeout_ms: opts.max_transaction_timeout_ms,
                not_judged: not_judged.map(|why| why.to_string()),
                complete: view.is_some_and(CoordinatorView::is_complete),
                candidates,
            },
            finding_counts: Summary::of(&findings).counts(),
            findings,
            coordinator_findings,
            damaged_batches: view.map_or(0, |v| v.damaged_batches),
        }
    }
}
