//! `klog transactions`: producers, open and hanging transactions, and the
//! coordinator's view.

use std::io::Write;
use std::path::PathBuf;

use kaen_log::findings::{Finding, Kind, Summary};
use kaen_log::log::{classify, DataDir, Partition, PathKind};
use kaen_log::txn::txnlog::{self, status_name, TRANSACTION_STATE_TOPIC};
use kaen_log::txn::{self, snapshot, PartitionState, TxnOptions};
use serde_json::json;

use crate::cli::{FailOn, OutputFormat, TimeFormat};
use crate::exit::Outcome;
use crate::report::table::render;
use crate::report::Output;

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
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// How text tables show LAST-UPDATE (JSON: always ms).
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
    match args.format {
        OutputFormat::Text => {
            text(&reports, view.as_ref(), args.time_format, out)?;
            let all = reports.iter().flat_map(|(_, st, _)| &st.findings);
            writeln!(out, "findings: {}", Summary::of(all))?;
        }
        OutputFormat::Json => {
            let parts: Vec<_> = reports
                .iter()
                .map(|(p, st, snaps)| json_partition(p, st, snaps))
                .collect();
            let coord = view.as_ref().map(|v| {
                v.transactions
                    .iter()
                    .map(|(id, m)| {
                        json!({"transactional_id": id, "producer_id": m.producer_id, "producer_epoch": m.producer_epoch,
                               "state": status_name(m.status), "timeout_ms": m.timeout_ms,
                               "partitions": m.partitions.as_ref().map(|ps| ps.iter().map(|(t, ids)| json!({"topic": t, "partitions": ids})).collect::<Vec<_>>()),
                               "last_update_timestamp_ms": m.last_update_timestamp_ms, "start_timestamp_ms": m.start_timestamp_ms})
                    })
                    .collect::<Vec<_>>()
            });
            serde_json::to_writer(
                &mut *out,
                &json!({"partitions": parts, "coordinator": coord}),
            )?;
            writeln!(out)?;
        }
    }
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

type Report<'a> = (&'a Partition, PartitionState, Vec<SnapshotCheck>);

fn text(
    reports: &[Report<'_>],
    view: Option<&txnlog::CoordinatorView>,
    time: TimeFormat,
    out: &mut Output,
) -> anyhow::Result<()> {
    let quiet = reports
        .iter()
        .filter(|(_, st, snaps)| st.producers.is_empty() && snaps.is_empty())
        .count();
    for (p, st, snaps) in reports
        .iter()
        .filter(|(_, st, snaps)| !st.producers.is_empty() || !snaps.is_empty())
    {
        let open = st.open_transactions();
        let committed: u64 = st.producers.values().map(|s| s.committed).sum();
        writeln!(
            out,
            "{}: log end {}, last stable offset {}, {} producers, {committed} transactions committed, {} aborted, {} open",
            p.name(),
            st.log_end,
            st.last_stable_offset(),
            st.producers.len(),
            st.aborted.len(),
            open.len()
        )?;
        let rows: Vec<Vec<String>> = st
            .producers
            .values()
            .map(|s| {
                vec![
                    s.producer_id.to_string(),
                    s.epoch.to_string(),
                    s.last_sequence.to_string(),
                    s.first_offset.to_string(),
                    s.last_offset.to_string(),
                    s.batches.to_string(),
                    if s.transactional { "yes" } else { "no" }.to_string(),
                    s.committed.to_string(),
                    s.aborted.to_string(),
                    s.open
                        .map_or("-".to_string(), |o| o.first_offset.to_string()),
                ]
            })
            .collect();
        let headers = [
            "PRODUCER",
            "EPOCH",
            "LAST-SEQUENCE",
            "FIRST-OFFSET",
            "LAST-OFFSET",
            "BATCHES",
            "TXN",
            "COMMITTED",
            "ABORTED",
            "OPEN-SINCE",
        ];
        for line in render(&headers, &rows).lines() {
            writeln!(out, "  {line}")?;
        }
        for f in &st.findings {
            writeln!(out, "  {f}")?;
        }
        for s in snaps.iter().filter(|s| s.findings.is_empty()) {
            writeln!(
                out,
                "  {}: snapshot at offset {} ({} producers) matches the log",
                s.path.display(),
                s.offset,
                s.producers
            )?;
        }
    }
    if quiet > 0 {
        writeln!(
            out,
            "{quiet} partitions have no idempotent or transactional producers"
        )?;
    }
    if let Some(v) = view {
        writeln!(out, "coordinator ({TRANSACTION_STATE_TOPIC}):")?;
        let rows: Vec<Vec<String>> = v
            .transactions
            .iter()
            .map(|(id, m)| {
                let parts = m.partitions.as_ref().map_or("-".to_string(), |ps| {
                    ps.iter()
                        .flat_map(|(t, ids)| ids.iter().map(move |i| format!("{t}-{i}")))
                        .collect::<Vec<_>>()
                        .join(",")
                });
                vec![
                    id.clone(),
                    m.producer_id.to_string(),
                    m.producer_epoch.to_string(),
                    status_name(m.status).to_string(),
                    m.timeout_ms.to_string(),
                    parts,
                    time.show(m.last_update_timestamp_ms),
                ]
            })
            .collect();
        for line in render(
            &[
                "TRANSACTIONAL-ID",
                "PRODUCER",
                "EPOCH",
                "STATE",
                "TIMEOUT-MS",
                "PARTITIONS",
                "LAST-UPDATE",
            ],
            &rows,
        )
        .lines()
        {
            writeln!(out, "  {line}")?;
        }
        for (offset, e) in &v.bad {
            eprintln!("klog: {TRANSACTION_STATE_TOPIC}: offset {offset}: {e}");
        }
    }
    Ok(())
}

fn json_partition(
    p: &Partition,
    st: &PartitionState,
    snaps: &[SnapshotCheck],
) -> serde_json::Value {
    json!({
        "topic": p.topic,
        "partition": p.partition,
        "log_end": st.log_end,
        "last_stable": st.last_stable_offset(),
        "producers": st.producers.values().map(|s| json!({
            "producer_id": s.producer_id, "epoch": s.epoch, "last_sequence": s.last_sequence,
            "first_offset": s.first_offset, "last_offset": s.last_offset, "batches": s.batches,
            "transactional": s.transactional, "committed": s.committed, "aborted": s.aborted,
            "open_transaction": s.open.map(|o| json!({"first_offset": o.first_offset, "start_timestamp": o.start_timestamp})),
        })).collect::<Vec<_>>(),
        "aborted": st.aborted.iter().map(|a| json!({"producer_id": a.producer_id, "first_offset": a.first_offset, "last_offset": a.last_offset})).collect::<Vec<_>>(),
        "snapshots": snaps.iter().map(|s| json!({
            "file": s.path.display().to_string(), "offset": s.offset, "producers": s.producers,
            "matches_log": s.findings.is_empty(),
        })).collect::<Vec<_>>(),
        "findings": st.findings,
    })
}
