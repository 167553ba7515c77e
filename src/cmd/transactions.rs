//! `klog transactions`: producers, open and hanging transactions, and the
//! coordinator's view.

use std::path::PathBuf;

use kaen_log::log::findings::Counts;
use kaen_log::log::findings::{Finding, Kind, Summary};
use kaen_log::log::{classify, DataDir, Partition, PathKind};
use kaen_log::txn::hanging::{self, Judgement, Verdict};
use kaen_log::txn::txnlog::CoordinatorEnd;
use kaen_log::txn::txnlog::{self, status_name, TRANSACTION_STATE_TOPIC};
use kaen_log::txn::{self, snapshot, PartitionState, TxnOptions};
use schemars::JsonSchema;
use serde::Serialize;

use crate::cmd::args::FailOn;
use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::progress::Progress;
use crate::report::table::escape_cell;
use crate::report::TimeFormat;
use crate::report::{emit, formats, plural, Format, Output, Report, Table};

/// What idempotent and transactional producers left on disk, per partition:
/// each producer's epoch, last sequence and offsets, committed and aborted
/// transactions, transactions still open, the last stable offset, and
/// sequence and epoch violations (out-of-order or duplicate sequences,
/// epoch regressions, zombie transactional writes). When a
/// `__transaction_state-N` folder is present, the coordinator's view of
/// every transactional id follows, with its transaction version (TV 2:
/// the epoch is bumped at every commit and abort) and what the coordinator
/// does with it on its own once it loads its log again (COORDINATOR-END):
/// a PrepareCommit or PrepareAbort is completed at once, its markers
/// written; an Ongoing transaction is aborted once its start plus its
/// timeout has passed (`TransactionStateManager.timedOutTransactions`),
/// an ABORT marker landing at the log end of each of its partitions.
///
/// Hanging transactions follow `kafka-transactions find-hanging`, as
/// `verify-crc --deep` does: an open transaction whose producer last wrote
/// more than --transaction-timeout-ms (15 minutes) before --now-ms is
/// hanging unless the coordinator's state (the `__transaction_state`
/// partitions among the paths given) lists the partition in its
/// producer's transaction. Without --now-ms, or without a
/// `__transaction_state` partition, none is judged: a note
/// (`hanging_not_judged`) says why instead. --find-hanging prints only
/// the hanging ones, in find-hanging's columns.
/// A `__transaction_state` record or batch klog cannot read (an unknown
/// version, a batch that does not decompress) is an error finding, and the
/// views it affects say "incomplete".
///
/// Each segment's `.txnindex` is checked against the aborted transactions in
/// the log. Of a partition with tiered storage (KIP-405) only the local log
/// is read: a note (`transactions_in_remote_storage`) says which offsets
/// live in remote segments only, and, from `__remote_log_metadata` when a
/// directory given holds it, which of those segments hold aborted
/// transactions. Producer-state snapshots (`<offset>.snapshot`) in a partition folder are
/// decoded and compared with the state the log gives up to their offset.
///
/// Every finding has a severity: damage the walk stepped over is an error;
/// hanging transactions, sequence and epoch anomalies (which a broker does
/// not re-validate when it loads a log), transaction indexes and snapshots
/// that disagree with the log (which it rebuilds) are warnings; a marker
/// with no transaction is a note. Exit 1 when a finding reaches --fail-on
/// (default: error).
#[derive(Debug, clap::Args)]
pub struct TransactionsArgs {
    /// Data directories or partition folders.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// "Now" (epoch ms or ISO-8601) for the age of open transactions.
    /// Without it no transaction is judged hanging: a note says so (the
    /// clock is not taken for now, see klog-transactions(1)).
    #[arg(long, value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// An open transaction whose producer last wrote more than this long
    /// ago (ms, or an ISO-8601 duration) may be hanging: find-hanging's
    /// --max-transaction-timeout, 15 minutes by default.
    #[arg(
        long,
        default_value_t = txn::hanging::DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
        value_parser = kaen_log::format::time::parse_duration_or_ms
    )]
    pub transaction_timeout_ms: i64,
    /// The same in minutes, in `kafka-transactions find-hanging`'s spelling:
    /// any Java int, as its argument parser takes it (0 makes every open
    /// transaction a candidate once its producer has written at all).
    #[arg(long, value_name = "MINUTES", conflicts_with = "transaction_timeout_ms",
          allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(i64::from(i32::MIN)..=i64::from(i32::MAX)))]
    pub max_transaction_timeout: Option<i64>,
    /// Print only the hanging transactions, in the columns of
    /// `kafka-transactions find-hanging` (text; JSON has every candidate
    /// under `find_hanging`, CSV is always the producers table).
    #[arg(long)]
    pub find_hanging: bool,
    /// Output format (csv: one row per producer of each partition, after
    /// its topic and partition, `open_transaction`'s fields as
    /// `open_transaction_first_offset` and
    /// `open_transaction_start_timestamp_ms`).
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
    /// The least severity that makes the run exit 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

pub fn run(args: &TransactionsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let now = args.now_ms;
    let max_timeout = args
        .max_transaction_timeout
        .map_or(args.transaction_timeout_ms, |minutes| minutes * 60_000);
    let progress = Progress::spinner(out.shows_progress(args.format == Format::Text));
    let mut partitions = Vec::new();
    for path in &args.paths {
        match classify(path)? {
            PathKind::Partition => partitions.push(Partition::open(path)?),
            PathKind::DataDir => partitions.extend(DataDir::open(path)?.live().cloned()),
            PathKind::File => anyhow::bail!(
                "{}: give a data directory or a partition folder",
                path.display()
            ),
        }
    }
    // Tiered storage: what lives in remote segments is not read.
    let tiering = kaen_log::tiered::Tiering::for_partitions(&partitions)?;
    let view =
        hanging::coordinator_view(&partitions.iter().collect::<Vec<_>>(), Default::default())?
            .map(std::sync::Arc::new);
    // find-hanging's rule, with the inputs verify-crc --deep gives it.
    let inputs = hanging::Inputs {
        now_ms: now,
        max_transaction_timeout_ms: max_timeout,
        coordinator: view.clone(),
    };
    let view = view.as_deref();
    let fail_on = args.fail_on.severity();
    let mut reports = Vec::new();
    let mut hanging = Vec::new();
    // Every partition's judgements, for the one note when some were not judged.
    let mut judged: Vec<(usize, Judgement)> = Vec::new();
    for p in &partitions {
        let opts = TxnOptions {
            high_watermark: kaen_log::log::checkpoint::high_watermark(p)?,
            meter: Progress::meter_of(&progress),
            ..TxnOptions::default()
        };
        let mut st = txn::analyze(p, &opts)?;
        let judgements = hanging::judge(p, &st, &inputs);
        st.findings
            .extend(hanging::findings(p, &judgements, &inputs));
        if let Some(now) = now {
            // find-hanging's candidates (step 1) need a now.
            hanging.extend(judgements.iter().map(|j| HangingOut::new(p, j, now)));
        }
        judged.extend(judgements.into_iter().map(|j| (reports.len(), j)));
        let index_findings = txn::check_txn_indexes(p, &st)?;
        st.findings.extend(index_findings);
        st.findings.extend(tiering.unread_transactions(p));
        let snaps = snapshots(p)?;
        for s in &snaps {
            st.findings.extend(s.findings.iter().cloned());
        }
        reports.push((p, st, snaps));
    }
    // Said once, under the partition of the first transaction not judged.
    if let Some(note) = hanging::not_judged_note(judged.iter().map(|(_, j)| j)) {
        let first = judged.iter().find(|(_, j)| j.verdict.is_err());
        if let Some((_, st, _)) = first.and_then(|(i, _)| reports.get_mut(*i)) {
            st.findings.push(note);
        }
    }
    drop(progress);
    let report = TransactionsReport::new(
        &reports,
        view,
        hanging,
        Hanging {
            now_ms: now,
            max_transaction_timeout_ms: max_timeout,
            not_judged: inputs.not_judged(),
        },
        args,
        out.time_format(),
    );
    let failing = report.findings.iter().filter(|f| f.fails(fail_on)).count() as u64;
    emit(&report, args.format, out)?;
    Ok(Outcome::from_count(failing))
}

/// One snapshot file and how it compares with the log.
struct SnapshotCheck {
    path: PathBuf,
    offset: i64,
    producers: usize,
    /// Findings about it: unreadable, or where it disagrees with the log.
    findings: Vec<Finding>,
}

fn snapshots(p: &Partition) -> anyhow::Result<Vec<SnapshotCheck>> {
    let mut out = Vec::new();
    for (offset, path) in snapshot::list(&p.dir)? {
        let bytes = match kaen_log::log::files::read_regular(&path, i32::MAX as u64) {
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

type Analysed<'a> = (&'a Partition, PartitionState, Vec<SnapshotCheck>);

/// One producer's state in one partition.
#[derive(Serialize, JsonSchema)]
struct ProducerOut {
    producer_id: i64,
    producer_epoch: i16,
    last_sequence: i32,
    first_offset: i64,
    last_offset: i64,
    batches: u64,
    transactional: bool,
    committed: u64,
    aborted: u64,
    open_transaction: Option<OpenOut>,
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
struct OpenOut {
    first_offset: i64,
    start_timestamp_ms: i64,
}

/// An aborted transaction (what `.txnindex` records).
#[derive(Serialize, JsonSchema)]
struct AbortedOut {
    producer_id: i64,
    first_offset: i64,
    last_offset: i64,
}

/// A producer-state snapshot file.
#[derive(Serialize, JsonSchema)]
struct SnapshotOut {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    file: kaen_log::log::findings::FileFields,
    offset: i64,
    producers: u64,
    matches_log: bool,
}

/// One partition's producers and transactions.
#[derive(Serialize, JsonSchema)]
struct PartitionOut {
    topic: String,
    partition: i32,
    log_end_offset: i64,
    last_stable_offset: i64,
    producers: Vec<ProducerOut>,
    aborted: Vec<AbortedOut>,
    snapshots: Vec<SnapshotOut>,
    /// Text only: the partition's findings (JSON has them all in `findings`).
    #[serde(skip)]
    findings: Vec<Finding>,
    #[serde(skip)]
    name: String,
    #[serde(skip)]
    open: u64,
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
                    file: kaen_log::log::findings::FileFields::of(&s.path),
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

/// The text row of a producer.
#[derive(Serialize, JsonSchema)]
struct ProducerRow {
    producer: i64,
    epoch: i16,
    last_sequence: i32,
    first_offset: i64,
    last_offset: i64,
    batches: u64,
    txn: &'static str,
    committed: u64,
    aborted: u64,
    open_since: Option<i64>,
}

/// The CSV row of a producer: its JSON fields after its partition's, the
/// open transaction's flattened.
#[derive(Serialize, JsonSchema)]
struct ProducerCsv<'a> {
    topic: &'a str,
    partition: i32,
    #[serde(flatten)]
    producer: &'a ProducerOut,
}

/// One transactional id as the coordinator (`__transaction_state`) has it.
#[derive(Serialize, JsonSchema)]
struct CoordinatorTxn {
    transactional_id: String,
    producer_id: i64,
    producer_epoch: i16,
    state: &'static str,
    timeout_ms: i32,
    /// Its partitions by topic (null when the record has none).
    partitions: Option<Vec<TopicPartitions>>,
    last_update_timestamp_ms: i64,
    start_timestamp_ms: i64,
    /// The TransactionLogValue version of its last record.
    record_version: i16,
    /// ClientTransactionVersion: 2 for transaction version 2 (KIP-890: the
    /// epoch is bumped at every commit and abort), 0 for the classic
    /// protocol (transaction versions 0 and 1).
    client_transaction_version: i16,
    /// PreviousProducerId, NextProducerId, NextProducerEpoch (-1 unless an
    /// epoch overflow moved the transactional id to a new producer id).
    previous_producer_id: i64,
    next_producer_id: i64,
    next_producer_epoch: i16,
    /// A later record of this id could not be read: the row may be stale.
    incomplete: bool,
    /// What the coordinator does with it on its own once it loads its log:
    /// completes a Prepare state at once, aborts an Ongoing transaction
    /// once its timeout has passed (null: nothing).
    coordinator_end: Option<kaen_log::txn::txnlog::CoordinatorEnd>,
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
struct TopicPartitions {
    topic: String,
    partitions: Vec<i32>,
}

/// The text row of a transactional id.
#[derive(Serialize, JsonSchema)]
struct CoordinatorRow<'a> {
    transactional_id: String,
    producer: i64,
    epoch: i16,
    tv: i16,
    state: &'a str,
    timeout_ms: i32,
    partitions: String,
    last_update_ms: i64,
    /// What the coordinator does on its own once it loads its log.
    coordinator_end: &'static str,
    /// When its timeout check aborts an Ongoing transaction (start + timeout).
    aborts_at_ms: Option<i64>,
}

/// The settings of the hanging check.
#[derive(Clone, Copy)]
struct Hanging {
    now_ms: Option<i64>,
    max_transaction_timeout_ms: i64,
    not_judged: Option<hanging::NotJudged>,
}

/// An open transaction whose producer last wrote more than the maximum
/// transaction timeout ago: the columns of `kafka-transactions
/// find-hanging`, and what the coordinator's log says of it.
#[derive(Serialize, JsonSchema)]
struct HangingOut {
    topic: String,
    partition: i32,
    producer_id: i64,
    producer_epoch: i16,
    coordinator_epoch: i32,
    start_offset: i64,
    last_timestamp: i64,
    /// Whole minutes from the last write to now.
    duration_min: i64,
    /// Whether find-hanging lists it: false when its transactional id
    /// lists the partition (the coordinator will write the marker), and
    /// when it was not judged (`find_hanging.not_judged`).
    hanging: bool,
    /// Its producer's transactional id in the `__transaction_state` read.
    transactional_id: Option<String>,
    /// That id's state.
    coordinator_state: Option<&'static str>,
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
struct FindHanging {
    /// --now-ms (null without it: then no candidate, nothing judged).
    now_ms: Option<i64>,
    max_transaction_timeout_ms: i64,
    /// Why find-hanging's rule could not be applied (no --now-ms, or no
    /// `__transaction_state` among the paths given), or null: when set,
    /// no transaction is called hanging.
    not_judged: Option<String>,
    /// Whether the coordinator's state was read whole: false when no
    /// `__transaction_state` was given (then nothing is judged) or some of
    /// it could not be read (then a transaction listed as hanging may not be).
    complete: bool,
    /// Every candidate, hanging or not.
    candidates: Vec<HangingOut>,
}

/// `klog transactions`'s document.
#[derive(Serialize, JsonSchema)]
pub struct TransactionsReport {
    partitions: Vec<PartitionOut>,
    /// The coordinator's view, when a `__transaction_state` folder was given.
    coordinator: Option<Vec<CoordinatorTxn>>,
    /// Whether every `__transaction_state` record and batch was read (null
    /// without a `__transaction_state` folder). When false the coordinator's
    /// table is incomplete: the findings say what was not read.
    coordinator_complete: Option<bool>,
    find_hanging: FindHanging,
    findings: Vec<Finding>,
    finding_counts: Counts,
    #[serde(skip)]
    time_format: TimeFormat,
    #[serde(skip)]
    only_hanging: bool,
    #[serde(skip)]
    coordinator_findings: Vec<Finding>,
    #[serde(skip)]
    damaged_batches: u64,
}

impl TransactionsReport {
    fn new(
        reports: &[Analysed<'_>],
        view: Option<&txnlog::CoordinatorView>,
        candidates: Vec<HangingOut>,
        hanging: Hanging,
        args: &TransactionsArgs,
        time_format: TimeFormat,
    ) -> Self {
        let partitions = reports.iter().map(PartitionOut::of).collect::<Vec<_>>();
        let all_coordinator = view.map(|v| v.findings.clone()).unwrap_or_default();
        let findings: Vec<Finding> = reports
            .iter()
            .flat_map(|(_, st, _)| st.findings.iter().cloned())
            .chain(all_coordinator.iter().cloned())
            .collect();
        // The records not read: the errors (a warning is about a record
        // read as Kafka reads it).
        let coordinator_findings = all_coordinator
            .into_iter()
            .filter(|f| f.severity == kaen_log::log::findings::Severity::Error)
            .collect();
        let coordinator = view.map(|v| {
            v.transactions
                .iter()
                .map(|(id, m)| CoordinatorTxn::of(id, m, v))
                .collect()
        });
        TransactionsReport {
            partitions,
            coordinator,
            coordinator_complete: view.map(txnlog::CoordinatorView::is_complete),
            find_hanging: FindHanging {
                now_ms: hanging.now_ms,
                max_transaction_timeout_ms: hanging.max_transaction_timeout_ms,
                not_judged: hanging.not_judged.map(|why| why.to_string()),
                complete: view.is_some_and(txnlog::CoordinatorView::is_complete),
                candidates,
            },
            finding_counts: Summary::of(&findings).counts(),
            findings,
            time_format,
            only_hanging: args.find_hanging,
            coordinator_findings,
            damaged_batches: view.map_or(0, |v| v.damaged_batches),
        }
    }

    /// The find-hanging table: the hanging candidates in Kafka's columns.
    fn hanging_table(&self) -> Table {
        let rows: Vec<&HangingOut> = self
            .find_hanging
            .candidates
            .iter()
            .filter(|c| c.hanging)
            .collect();
        Table::of(&rows)
            .only(&[
                "topic",
                "partition",
                "producer_id",
                "producer_epoch",
                "coordinator_epoch",
                "start_offset",
                "last_timestamp",
                "duration_min",
            ])
            .times(&["last_timestamp"], self.time_format)
    }

    /// Why the coordinator's table may lack something, or `None`.
    fn coordinator_incomplete(&self) -> Option<String> {
        if self.coordinator_complete != Some(false) {
            return None;
        }
        let mut why = Vec::new();
        if !self.coordinator_findings.is_empty() {
            why.push(format!(
                "{} not read (see the findings)",
                plural(
                    self.coordinator_findings.len() as u64,
                    "record or batch",
                    "records or batches"
                )
            ));
        }
        if self.damaged_batches > 0 {
            why.push(format!(
                "{} damaged",
                plural(self.damaged_batches, "batch", "batches")
            ));
        }
        Some(why.join(", "))
    }
}

impl Report for TransactionsReport {
    const COMMAND: &'static str = "transactions";

    /// One row per producer of each partition, whatever --find-hanging.
    fn csv_table(&self) -> Option<Table> {
        let rows: Vec<ProducerCsv> = self
            .partitions
            .iter()
            .flat_map(|p| {
                p.producers.iter().map(|s| ProducerCsv {
                    topic: &p.topic,
                    partition: p.partition,
                    producer: s,
                })
            })
            .collect();
        Some(Table::flat(&rows))
    }

    fn tables(&self) -> Vec<Table> {
        if self.only_hanging {
            return vec![self.hanging_table()];
        }
        let mut tables: Vec<Table> = self
            .partitions
            .iter()
            .map(|p| {
                let rows: Vec<ProducerRow> = p
                    .producers
                    .iter()
                    .map(|s| ProducerRow {
                        producer: s.producer_id,
                        epoch: s.producer_epoch,
                        last_sequence: s.last_sequence,
                        first_offset: s.first_offset,
                        last_offset: s.last_offset,
                        batches: s.batches,
                        txn: if s.transactional { "yes" } else { "no" },
                        committed: s.committed,
                        aborted: s.aborted,
                        open_since: s.open_transaction.as_ref().map(|o| o.first_offset),
                    })
                    .collect();
                Table::of(&rows)
            })
            .collect();
        if let Some(coordinator) = &self.coordinator {
            let rows: Vec<CoordinatorRow> = coordinator
                .iter()
                .map(|m| CoordinatorRow {
                    transactional_id: if m.incomplete {
                        format!("{} (incomplete)", m.transactional_id)
                    } else {
                        m.transactional_id.clone()
                    },
                    producer: m.producer_id,
                    epoch: m.producer_epoch,
                    tv: m.client_transaction_version,
                    state: m.state,
                    timeout_ms: m.timeout_ms,
                    partitions: m.partitions.as_ref().map_or("-".to_string(), |ps| {
                        ps.iter()
                            .flat_map(|tp| {
                                tp.partitions
                                    .iter()
                                    .map(move |i| format!("{}-{i}", tp.topic))
                            })
                            .collect::<Vec<_>>()
                            .join(",")
                    }),
                    last_update_ms: m.last_update_timestamp_ms,
                    coordinator_end: match m.coordinator_end {
                        Some(CoordinatorEnd::AbortsAt { .. }) => "aborts on timeout",
                        Some(CoordinatorEnd::CompletesOnLoad { commit: true }) => {
                            "completes on load (COMMIT)"
                        }
                        Some(CoordinatorEnd::CompletesOnLoad { commit: false }) => {
                            "completes on load (ABORT)"
                        }
                        None => "-",
                    },
                    aborts_at_ms: match m.coordinator_end {
                        Some(CoordinatorEnd::AbortsAt { ms }) => Some(ms),
                        _ => None,
                    },
                })
                .collect();
            tables.push(
                Table::of(&rows).times(&["last_update_ms", "aborts_at_ms"], self.time_format),
            );
        }
        tables
    }

    /// Per partition with producers or snapshots: a line, the producers
    /// table and the findings, indented; then the coordinator's table and
    /// what of its log was not read. With --find-hanging: find-hanging's
    /// table alone.
    fn text(&self, fit: crate::report::table::Fit) -> String {
        if self.only_hanging {
            return self.hanging_table().render(fit);
        }
        let indent =
            |text: String| -> String { text.lines().map(|l| format!("  {l}\n")).collect() };
        let mut tables = self.tables().into_iter();
        let mut out = String::new();
        let mut quiet = 0;
        for p in &self.partitions {
            let table = tables.next().unwrap_or_default();
            if p.producers.is_empty() && p.snapshots.is_empty() {
                quiet += 1;
                continue;
            }
            let committed: u64 = p.producers.iter().map(|s| s.committed).sum();
            out.push_str(&format!(
                "{}: log end {}, last stable offset {}, {}, {} committed, {} aborted, {} open\n",
                escape_cell(&p.name),
                p.log_end_offset,
                p.last_stable_offset,
                plural(p.producers.len() as u64, "producer", "producers"),
                plural(committed, "transaction", "transactions"),
                p.aborted.len(),
                p.open
            ));
            // No producers: the counts say it, with no empty table under them.
            if !p.producers.is_empty() {
                out.push_str(&indent(table.render(fit)));
            }
            for f in &p.findings {
                out.push_str(&indent(escape_cell(&f.to_string()).into_owned()));
            }
            for s in p.snapshots.iter().filter(|s| s.matches_log) {
                out.push_str(&format!(
                    "  {}: snapshot at offset {} ({}) matches the log\n",
                    escape_cell(&s.file.file),
                    s.offset,
                    plural(s.producers, "producer", "producers")
                ));
            }
        }
        if quiet > 0 {
            out.push_str(&format!(
                "{} no idempotent or transactional producers\n",
                if quiet == 1 {
                    "1 partition has".to_string()
                } else {
                    format!("{quiet} partitions have")
                }
            ));
        }
        if self.coordinator.is_some() {
            match self.coordinator_incomplete() {
                None => out.push_str(&format!("coordinator ({TRANSACTION_STATE_TOPIC}):\n")),
                Some(why) => out.push_str(&format!(
                    "coordinator ({TRANSACTION_STATE_TOPIC}), incomplete: {why}:\n"
                )),
            }
            out.push_str(&indent(tables.next().unwrap_or_default().render(fit)));
            for f in &self.coordinator_findings {
                out.push_str(&indent(escape_cell(&f.to_string()).into_owned()));
            }
        }
        out
    }

    fn summary(&self) -> String {
        let mut out = String::new();
        if self.only_hanging {
            let h = &self.find_hanging;
            if let Some(now) = h.now_ms {
                let listed = h.candidates.iter().filter(|c| !c.hanging).count();
                let hanging = h.candidates.len() - listed;
                out.push_str(&format!(
                    "klog: {} whose producer last wrote more than {} before {}: {}\n",
                    plural(
                        h.candidates.len() as u64,
                        "open transaction",
                        "open transactions"
                    ),
                    kaen_log::format::time::human_duration_ms(h.max_transaction_timeout_ms),
                    kaen_log::format::time::format_iso_ms(now),
                    match h.not_judged {
                        None => format!("{hanging} hanging, {listed} listed by their coordinator"),
                        Some(_) => "none judged".to_string(),
                    }
                ));
            }
            match (&h.not_judged, self.coordinator_incomplete()) {
                (Some(why), _) => out.push_str(&format!(
                    "klog: hanging transactions not judged: {why}\n"
                )),
                (None, Some(why)) => out.push_str(&format!(
                    "klog: incomplete: the coordinator's state ({TRANSACTION_STATE_TOPIC}) was not read whole: {why}\n"
                )),
                (None, None) => {}
            }
        }
        out.push_str(&format!("findings: {}\n", Summary::of(&self.findings)));
        out
    }
}
