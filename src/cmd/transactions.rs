//! `klog transactions`: producers, open and hanging transactions, and the
//! coordinator's view.

use std::path::PathBuf;

use kaen_log::findings::Counts;
use kaen_log::findings::{Finding, Kind, Summary};
use kaen_log::log::{classify, DataDir, Partition, PathKind};
use kaen_log::txn::txnlog::{self, status_name, TRANSACTION_STATE_TOPIC};
use kaen_log::txn::{self, snapshot, PartitionState, TxnOptions};
use schemars::JsonSchema;
use serde::Serialize;

use crate::cli::{FailOn, TimeFormat};
use crate::exit::Outcome;
use crate::report::document::DOCUMENT;
use crate::report::progress::Progress;
use crate::report::table::escape_cell;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// What idempotent and transactional producers left on disk, per partition:
/// each producer's epoch, last sequence and offsets, committed and aborted
/// transactions, transactions still open (hanging when older than
/// --transaction-timeout-ms against --now-ms, default the log's max
/// timestamp), the last stable offset, and sequence and epoch violations
/// (out-of-order or duplicate sequences, epoch regressions, zombie
/// transactional writes). When a `__transaction_state-N` folder is present,
/// the coordinator's view of every transactional id follows.
///
/// Each segment's `.txnindex` is checked against the aborted transactions in
/// the log. Producer-state snapshots (`<offset>.snapshot`) in a partition folder are
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
    /// "Now" (epoch ms or ISO-8601) for the age of open transactions; default: each log's max timestamp.
    #[arg(long, value_parser = kaen_log::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// An open transaction older than this (ms, or an ISO-8601 duration) is hanging.
    #[arg(long, default_value = "60000", value_parser = kaen_log::time::parse_duration_or_ms)]
    pub transaction_timeout_ms: i64,
    /// Output format.
    #[arg(long, value_parser = formats(DOCUMENT), default_value = "text")]
    pub format: Format,
    /// How text tables show LAST-UPDATE-MS (JSON: always ms).
    #[arg(long, value_enum, default_value_t = TimeFormat::Ms)]
    pub time_format: TimeFormat,
    /// The least severity that makes the run exit 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

pub fn run(args: &TransactionsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let opts = TxnOptions {
        now_ms: args.now_ms,
        transaction_timeout_ms: args.transaction_timeout_ms,
        ..TxnOptions::default()
    };
    let progress = Progress::spinner(args.format == Format::Text);
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
    let coordinator: Vec<&Partition> = partitions
        .iter()
        .filter(|p| p.topic == TRANSACTION_STATE_TOPIC)
        .collect();
    let view = if coordinator.is_empty() {
        None
    } else {
        Some(txnlog::replay(&coordinator, Default::default())?)
    };
    let mut failing = 0u64;
    let fail_on = args.fail_on.severity();
    let mut reports = Vec::new();
    for p in &partitions {
        let opts = TxnOptions {
            high_watermark: kaen_log::log::checkpoint::high_watermark(p)?,
            ..opts
        };
        let mut st = txn::analyze(p, &opts)?;
        // An old open transaction its coordinator has ongoing for this
        // partition is long, not hanging (find-hanging's rule).
        if let Some(v) = &view {
            let producers = &st.producers;
            st.findings.retain(|f| {
                f.kind != Kind::HangingTransaction
                    || !f.producer_id.is_some_and(|pid| {
                        producers
                            .get(&pid)
                            .is_some_and(|s| v.has_ongoing(pid, s.epoch, &p.topic, p.partition))
                    })
            });
        }
        let index_findings = txn::check_txn_indexes(p, &st)?;
        st.findings.extend(index_findings);
        let snaps = snapshots(p)?;
        for s in &snaps {
            st.findings.extend(s.findings.iter().cloned());
        }
        failing += st.findings.iter().filter(|f| f.fails(fail_on)).count() as u64;
        reports.push((p, st, snaps));
    }
    drop(progress);
    let report = TransactionsReport::new(&reports, view.as_ref(), args.time_format);
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
    file: String,
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
}

#[derive(Serialize, JsonSchema)]
struct TopicPartitions {
    topic: String,
    partitions: Vec<i32>,
}

/// The text row of a transactional id.
#[derive(Serialize, JsonSchema)]
struct CoordinatorRow<'a> {
    transactional_id: &'a str,
    producer: i64,
    epoch: i16,
    state: &'a str,
    timeout_ms: i32,
    partitions: String,
    last_update_ms: i64,
}

/// A `__transaction_state` record that did not decode.
#[derive(Serialize, JsonSchema)]
struct BadOut {
    offset: i64,
    error: String,
}

/// `klog transactions`'s document.
#[derive(Serialize, JsonSchema)]
pub struct TransactionsReport {
    partitions: Vec<PartitionOut>,
    /// The coordinator's view, when a `__transaction_state` folder was given.
    coordinator: Option<Vec<CoordinatorTxn>>,
    coordinator_bad_records: Vec<BadOut>,
    findings: Vec<Finding>,
    finding_counts: Counts,
    #[serde(skip)]
    time_format: TimeFormat,
}

impl TransactionsReport {
    fn new(
        reports: &[Analysed<'_>],
        view: Option<&txnlog::CoordinatorView>,
        time_format: TimeFormat,
    ) -> Self {
        let partitions = reports
            .iter()
            .map(|(p, st, snaps)| PartitionOut {
                topic: p.topic.clone(),
                partition: p.partition,
                log_end_offset: st.log_end,
                last_stable_offset: st.last_stable_offset(),
                producers: st
                    .producers
                    .values()
                    .map(|s| ProducerOut {
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
                    })
                    .collect(),
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
                        file: s.path.display().to_string(),
                        offset: s.offset,
                        producers: s.producers as u64,
                        matches_log: s.findings.is_empty(),
                    })
                    .collect(),
                findings: st.findings.clone(),
                name: p.name(),
                open: st.open_transactions().len() as u64,
            })
            .collect::<Vec<_>>();
        let findings: Vec<Finding> = reports
            .iter()
            .flat_map(|(_, st, _)| st.findings.iter().cloned())
            .collect();
        let coordinator = view.map(|v| {
            v.transactions
                .iter()
                .map(|(id, m)| CoordinatorTxn {
                    transactional_id: id.clone(),
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
                })
                .collect()
        });
        TransactionsReport {
            partitions,
            coordinator,
            coordinator_bad_records: view
                .map(|v| {
                    v.bad
                        .iter()
                        .map(|(offset, e)| BadOut {
                            offset: *offset,
                            error: e.to_string(),
                        })
                        .collect()
                })
                .unwrap_or_default(),
            finding_counts: Summary::of(&findings).counts(),
            findings,
            time_format,
        }
    }
}

impl Report for TransactionsReport {
    const COMMAND: &'static str = "transactions";

    fn tables(&self) -> Vec<Table> {
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
                    transactional_id: &m.transactional_id,
                    producer: m.producer_id,
                    epoch: m.producer_epoch,
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
                })
                .collect();
            tables.push(Table::of(&rows).times(&["last_update_ms"], self.time_format));
        }
        tables
    }

    /// Per partition with producers or snapshots: a line, the producers
    /// table and the findings, indented; then the coordinator's table.
    fn text(&self) -> String {
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
                "{}: log end {}, last stable offset {}, {} producers, {committed} transactions committed, {} aborted, {} open\n",
                escape_cell(&p.name),
                p.log_end_offset,
                p.last_stable_offset,
                p.producers.len(),
                p.aborted.len(),
                p.open
            ));
            out.push_str(&indent(table.render()));
            for f in &p.findings {
                out.push_str(&indent(escape_cell(&f.to_string()).into_owned()));
            }
            for s in p.snapshots.iter().filter(|s| s.matches_log) {
                out.push_str(&format!(
                    "  {}: snapshot at offset {} ({} producers) matches the log\n",
                    escape_cell(&s.file),
                    s.offset,
                    s.producers
                ));
            }
        }
        if quiet > 0 {
            out.push_str(&format!(
                "{quiet} partitions have no idempotent or transactional producers\n"
            ));
        }
        if self.coordinator.is_some() {
            out.push_str(&format!("coordinator ({TRANSACTION_STATE_TOPIC}):\n"));
            out.push_str(&indent(tables.next().unwrap_or_default().render()));
        }
        out
    }

    fn summary(&self) -> String {
        let mut out = String::new();
        for b in &self.coordinator_bad_records {
            out.push_str(&format!(
                "klog: {TRANSACTION_STATE_TOPIC}: offset {}: {}\n",
                b.offset,
                escape_cell(&b.error)
            ));
        }
        out.push_str(&format!("findings: {}\n", Summary::of(&self.findings)));
        out
    }
}
