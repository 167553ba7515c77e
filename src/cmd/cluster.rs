//! `klog cluster`: every broker's summary merged into one verdict.

use std::io::Write;
use std::path::PathBuf;

use kaen_log::cluster::merge::{self, ClusterReport, GroupLag, PartitionVerdict, ReplicaVerdict};

use crate::cli::TableFormat;
use crate::exit::Outcome;
use crate::report::table::{cell, render, render_csv};
use crate::report::Output;

/// Merge the summaries of every broker into one verdict: diverged, lost and
/// under-replicated partitions, and each group's lag across brokers.
///
/// SUMMARY is a file written by `klog summary --format json` on a broker, or
/// a directory of them (its *.json files). Collect them with the tools you
/// already use (ssh, Ansible, kubectl exec): they are plain files.
///
/// Per partition: the replicas found, and those the metadata image (the
/// most advanced __cluster_metadata among the summaries) assigns but no
/// summary holds (MISSING, with why). The leader is the metadata's; when it
/// names none (a stopped KRaft 4.x cluster keeps an empty ISR and its ELR)
/// or its leader left no copy, the one Kafka's controller would elect
/// (the first replica in assignment order in the ISR, or the ELR when the
/// ISR is empty; else the last known ELR; else, uncleanly, the first with
/// a copy); without metadata, the replica with the newest leader epoch,
/// then the longest log, then the lowest node id (ISR members all
/// hold the newest epoch). Each follower is truncated as Kafka's fetcher
/// would (its latest leader epoch against the leader's end of that epoch,
/// `LeaderEpochFileCache.endOffsetFor`; the largest common epoch and its
/// end offset decide): TRUNCATE-TO is where that leaves its log end; below
/// it, the epoch checksums of both replicas must agree, and where they do
/// not, DIVERGES-AT is lower than TRUNCATE-TO (a difference Kafka does not
/// see; batches the log cleaner rewrote, below either replica's cleaner
/// offset, are not compared). BATCHES-BEYOND counts the follower's batches from DIVERGES-AT on
/// (`>=N` when the summaries place it only roughly), BEHIND the offsets it
/// lacks to reach the leader's log end.
///
/// STATUS: lost (no assigned replica found), diverged (a replica holds
/// batches Kafka cuts, or that differ), under_replicated (a replica is
/// missing or behind the leader's log end), ok.
///
/// Group lag: committed offsets from each offsets partition's leader (the
/// group coordinator), against the high watermark (else the log end) of the
/// leader of the partition read; STATUS ok, below_log_start, above_log_end,
/// no_committed_offset, partition_lost or no_partition.
///
/// Text: the partitions, their replicas, and the group lag; --lag shows
/// only the lag. CSV: one row per replica, or with --lag per committed
/// offset. JSON: one document {schema_version, cluster_id, summaries,
/// metadata, totals, partitions: [{..., replicas: [...]}], groups}.
///
/// Exit 1 when a replica diverged or a partition is lost; 2 when a summary
/// cannot be read, is of a schema version this klog does not read, or
/// contradicts another (two clusters, one directory twice).
#[derive(Debug, clap::Args)]
pub struct ClusterArgs {
    /// Summary files, or directories of them.
    #[arg(required = true, value_name = "SUMMARY")]
    pub summaries: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
    /// Only the group lag (text and csv).
    #[arg(long)]
    pub lag: bool,
}

pub fn run(args: &ClusterArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let sources = merge::read_sources(&args.summaries)?;
    let report = merge::merge(&sources)?;
    match args.format {
        TableFormat::Json => {
            serde_json::to_writer(&mut *out, &report)?;
            writeln!(out)?;
        }
        TableFormat::Csv if args.lag => write!(out, "{}", lag_csv(&report.groups))?,
        TableFormat::Csv => write!(out, "{}", replicas_csv(&report.partitions))?,
        TableFormat::Text => write_text(out, &report, args.lag)?,
    }
    eprintln!("klog: {}", totals(&report));
    Ok(Outcome::from_count(u64::from(report.failed())))
}

fn nodes(v: Option<&[i32]>) -> String {
    v.map_or_else(
        || "-".to_string(),
        |ns| ns.iter().map(i32::to_string).collect::<Vec<_>>().join(","),
    )
}

/// `7 partitions: 1 diverged, 1 lost, 3 under_replicated, 2 ok; metadata from node 1 (next offset 23)`.
fn totals(r: &ClusterReport) -> String {
    let t = r.totals;
    let metadata = match &r.metadata {
        Some(m) => format!(
            "metadata from node {} (next offset {})",
            m.node_id, m.next_offset
        ),
        None => "no metadata image in the summaries".to_string(),
    };
    format!(
        "{} partitions: {} diverged, {} lost, {} under_replicated, {} ok; {} summaries of {} nodes; {metadata}",
        t.partitions,
        t.diverged,
        t.lost,
        t.under_replicated,
        t.ok,
        r.summaries.len(),
        r.summaries
            .iter()
            .map(|s| s.node_id)
            .collect::<std::collections::BTreeSet<_>>()
            .len()
    )
}

fn missing(p: &PartitionVerdict) -> Option<Vec<i32>> {
    let m: Vec<i32> = p
        .replicas
        .iter()
        .filter(|r| r.state == merge::ReplicaState::Missing)
        .map(|r| r.node_id)
        .collect();
    (!m.is_empty()).then_some(m)
}

fn beyond(r: &ReplicaVerdict) -> String {
    match (r.batches_beyond, r.batches_beyond_exact) {
        (Some(n), Some(false)) => format!(">={n}"),
        (n, _) => cell(n),
    }
}

fn write_text(out: &mut Output, r: &ClusterReport, lag_only: bool) -> anyhow::Result<()> {
    if !lag_only {
        let rows: Vec<Vec<String>> = r
            .partitions
            .iter()
            .map(|p| {
                vec![
                    p.topic.clone(),
                    p.partition.to_string(),
                    p.status.name().to_string(),
                    cell(p.leader),
                    cell(p.leader_epoch),
                    cell(p.log_end_offset),
                    cell(p.high_watermark),
                    nodes(p.assigned_replicas.as_deref()),
                    nodes(p.isr.as_deref()),
                    nodes(missing(p).as_deref()),
                    p.detail.clone(),
                ]
            })
            .collect();
        let headers = [
            "TOPIC",
            "PARTITION",
            "STATUS",
            "LEADER",
            "LEADER-EPOCH",
            "LOG-END",
            "HIGH-WATERMARK",
            "REPLICAS",
            "ISR",
            "MISSING",
            "DETAIL",
        ];
        write!(out, "{}", render(&headers, &rows))?;
        writeln!(out)?;
        write!(
            out,
            "{}",
            render(&REPLICA_HEADERS, &replica_rows(&r.partitions, false))
        )?;
        writeln!(out)?;
    }
    write!(out, "{}", render(&LAG_HEADERS, &lag_rows(&r.groups)))?;
    Ok(())
}

const REPLICA_HEADERS: [&str; 13] = [
    "TOPIC",
    "PARTITION",
    "NODE",
    "STATE",
    "LOG-START",
    "LOG-END",
    "HIGH-WATERMARK",
    "LEADER-EPOCH",
    "TRUNCATE-TO",
    "DIVERGES-AT",
    "BATCHES-BEYOND",
    "BEHIND",
    "DETAIL",
];

/// One row per replica; for CSV, with the partition's status and leader.
fn replica_rows(partitions: &[PartitionVerdict], csv: bool) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for p in partitions {
        for r in &p.replicas {
            let mut row = vec![p.topic.clone(), p.partition.to_string()];
            if csv {
                row.push(p.status.name().to_string());
                row.push(cell(p.leader));
            }
            row.extend([
                r.node_id.to_string(),
                r.state.name().to_string(),
                cell(r.log_start_offset),
                cell(r.log_end_offset),
                cell(r.high_watermark),
                cell(r.leader_epoch),
                cell(r.truncation_offset),
                cell(r.divergence_offset),
                if csv {
                    cell(r.batches_beyond)
                } else {
                    beyond(r)
                },
                cell(r.behind_by),
            ]);
            if csv {
                row.push(cell(r.batches_beyond_exact));
                row.push(cell(r.verified_through));
                row.push(cell(r.assigned));
            }
            row.push(r.detail.clone());
            rows.push(row);
        }
    }
    rows
}

fn replicas_csv(partitions: &[PartitionVerdict]) -> String {
    render_csv(
        &[
            "topic",
            "partition",
            "status",
            "leader",
            "node_id",
            "state",
            "log_start_offset",
            "log_end_offset",
            "high_watermark",
            "leader_epoch",
            "truncation_offset",
            "divergence_offset",
            "batches_beyond",
            "behind_by",
            "batches_beyond_exact",
            "verified_through",
            "assigned",
            "detail",
        ],
        &replica_rows(partitions, true),
    )
}

const LAG_HEADERS: [&str; 11] = [
    "GROUP",
    "TOPIC",
    "PARTITION",
    "COMMITTED",
    "COORDINATOR",
    "LEADER",
    "LOG-START",
    "LOG-END",
    "HIGH-WATERMARK",
    "LAG",
    "STATUS",
];

fn lag_rows(groups: &[GroupLag]) -> Vec<Vec<String>> {
    groups
        .iter()
        .map(|g| {
            vec![
                g.group.clone(),
                g.topic.clone(),
                g.partition.to_string(),
                g.committed_offset.to_string(),
                g.coordinator.to_string(),
                cell(g.leader),
                cell(g.log_start_offset),
                cell(g.log_end_offset),
                cell(g.high_watermark),
                cell(g.lag),
                g.status.name().to_string(),
            ]
        })
        .collect()
}

fn lag_csv(groups: &[GroupLag]) -> String {
    render_csv(
        &[
            "group",
            "topic",
            "partition",
            "committed_offset",
            "coordinator",
            "leader",
            "log_start_offset",
            "log_end_offset",
            "high_watermark",
            "lag",
            "status",
        ],
        &lag_rows(groups),
    )
}
