//! `klog cluster`: every broker's summary merged into one verdict.

use std::path::PathBuf;

use kaen_log::cluster::merge::{self, ClusterReport, GroupLag, ReplicaVerdict};

use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::cluster_text;
use crate::report::document::TABLE;
use crate::report::table::escape_cell;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// Merge the summaries of every broker into one verdict: diverged, lost and
/// under-replicated partitions, and each group's lag across brokers.
///
/// SUMMARY is a file written by `klog summary --format json` on a broker, or
/// a directory of them (its *.json files). Collect them with the tools you
/// already use (ssh, Ansible, kubectl exec): they are plain files.
///
/// Per partition: the replicas found, and those the metadata image (the
/// most advanced __cluster_metadata among the summaries) assigns but no
/// summary holds (MISSING, with why). The leader is the one after the
/// brokers restart on these directories, as KRaft's controller elects it:
/// the metadata's leader, unless with eligible leader replicas on (KIP-966)
/// its broker went down uncleanly (no .kafka_cleanshutdown, or one whose
/// broker epoch is not its registration's: `ClusterControlManager`), which
/// takes it out of the ISR and ELR when it registers again. Otherwise the
/// replica the controller elects when it comes back: one in the ISR, or the
/// ELR when the ISR is empty (`PartitionChangeBuilder.electAnyLeader`);
/// with both empty, the last known leader (`lastKnownElr`); and, when the
/// topic allows an unclean election (its config or the cluster default in
/// the metadata, or --unclean-election), any replica back first. When
/// several can be elected, the order of the returns decides: the leader is
/// undecided (LEADER empty) and a third table shows every replica under
/// each of them (IF-LEADER), the STATUS being the worst; when none can, the
/// partition is offline. If the metadata's leader left no copy: the first
/// ISR (or ELR) member with one, else the last known ELR, else uncleanly
/// the first with a copy. Without metadata, the replica with the newest
/// leader epoch, then the longest log, then the lowest node id (ISR
/// members all hold the newest epoch). In ZooKeeper mode (meta.properties
/// version 0) the controller's leader, ISR and topic configs are in
/// ZooKeeper, not on disk: every replica whose log reaches the highest high
/// watermark can be an ISR member, so when such replicas end differently
/// the leader is undecided and each one's outcome is shown (every replica's
/// for a topic named by --unclean-election); the elected leader starts a
/// new epoch above every replica's at its log end, as
/// `Partition.makeLeader` does. Each follower is truncated as Kafka's fetcher
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
/// Given the log directories themselves (not only summaries), each
/// follower's truncation is read record by record: "If the brokers restart
/// as they are" lists, per truncating replica (and per eligible leader when
/// the leader is undecided), the records it loses by key and offset, how
/// many were below its high watermark (it had counted them committed), and
/// those an idempotent producer re-sent to the new leader (same producer
/// id, epoch and sequence: they survive at the leader's offset). JSON:
/// each replica's `lost`.
///
/// Each committed offset says where its consumer lands on the leader
/// (LANDS; JSON `lands`; when the leader is undecided, under each leader
/// that may be elected, JSON `lands_under`): a commit with a leader epoch is validated
/// (KIP-320: the leader's end of that epoch below the commit is a
/// truncation, and the consumer moves to it under any auto.offset.reset
/// but none, which fails with LogTruncationException; an epoch the leader
/// does not know resets by auto.offset.reset); a commit without one
/// outside the leader's log is out of range and auto.offset.reset decides
/// (earliest: the log start, latest: the log end).
///
/// STATUS: lost (no assigned replica found), offline (replicas found, none
/// the controller may elect), diverged (a replica holds batches Kafka
/// cuts, or that differ), under_replicated (a replica is missing or behind
/// the leader's log end), ok.
///
/// Group lag: committed offsets from each offsets partition's leader (the
/// group coordinator), against the high watermark (else the log end) of the
/// leader of the partition read, as `klog lag` computes it (negative above
/// the end); STATUS ok, below_log_start, above_log_end,
/// above_high_watermark (between the high watermark and the log end),
/// no_committed_offset, partition_lost or no_partition.
///
/// Text: how each broker went down, then the partitions that are not ok
/// and their replicas (every one with --all; "every partition ok: N
/// partitions" when none is), and the group lag; --lag shows only the
/// lag. CSV: one row per replica, or with --lag per committed
/// offset. JSON: one document {schema_version, cluster_id, summaries,
/// metadata, totals, partitions: [{..., replicas: [...]}], groups}.
///
/// Each broker's line is followed by the warnings and errors of its
/// summary (a folder in the log directory that is not a partition folder,
/// which stops the broker from starting; damage; malformed files).
///
/// Exit 1 when a replica diverged, a partition is offline or lost, or a
/// summary holds an error finding; 2 when a summary
/// cannot be read, is of a schema version this klog does not read, or
/// contradicts another (two clusters, one directory twice).
#[derive(Debug, clap::Args)]
pub struct ClusterArgs {
    /// Log directories (summarized as `klog summary` would), summary files
    /// (`-` for standard input), or directories of summary files.
    #[arg(required = true, value_name = "SUMMARY|DIR")]
    pub summaries: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
    /// Only the group lag (text and csv).
    #[arg(long)]
    pub lag: bool,
    /// Text: every partition and replica, the ok ones too (by default text
    /// lists only the partitions that are not ok). CSV and JSON always
    /// hold every one.
    #[arg(long)]
    pub all: bool,
    /// A topic whose `unclean.leader.election.enable` is true where the
    /// disks do not say so: in ZooKeeper mode (topic configs live in
    /// ZooKeeper) or when the controllers' server.properties turn it on.
    /// Any replica of it may then lead after a restart, if it comes back
    /// first. Repeatable. KRaft topic and cluster configs are read from
    /// the metadata without it.
    #[arg(long, value_name = "TOPIC")]
    pub unclean_election: Vec<String>,
}

pub fn run(args: &ClusterArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let sources = merge::read_sources(&args.summaries)?;
    let report = merge::merge_with(
        &sources,
        &merge::MergeOptions {
            unclean_election: args.unclean_election.clone(),
        },
    )?;
    emit(
        &ClusterOut {
            report: &report,
            lag_only: args.lag,
            all: args.all,
        },
        args.format,
        out,
    )?;
    Ok(Outcome::from_count(u64::from(report.failed())))
}

/// `klog cluster`'s document: the merged verdict.
#[derive(Serialize, JsonSchema)]
pub struct ClusterOut<'a> {
    #[serde(flatten)]
    report: &'a ClusterReport,
    #[serde(skip)]
    lag_only: bool,
    #[serde(skip)]
    all: bool,
}

fn nodes(v: Option<&[i32]>) -> Option<String> {
    v.map(|ns| ns.iter().map(i32::to_string).collect::<Vec<_>>().join(","))
}

/// `>=N` when the count is a lower bound.
fn beyond(r: &ReplicaVerdict) -> Option<String> {
    match (r.batches_beyond, r.batches_beyond_exact) {
        (Some(n), Some(false)) => Some(format!(">={n}")),
        (n, _) => n.map(|n| n.to_string()),
    }
}

/// One partition's verdict (text).
#[derive(Serialize, JsonSchema)]
struct PartitionRow<'a> {
    topic: &'a str,
    partition: i32,
    status: &'static str,
    leader: Option<i32>,
    leader_epoch: Option<i32>,
    log_end_offset: Option<i64>,
    high_watermark: Option<i64>,
    replicas: Option<String>,
    isr: Option<String>,
    missing: Option<String>,
    detail: &'a str,
}

/// One replica (text; CSV adds the partition's status and leader and the
/// exactness of the counts).
#[derive(Serialize, JsonSchema)]
struct ReplicaRow<'a> {
    topic: &'a str,
    partition: i32,
    node: i32,
    state: &'static str,
    log_start_offset: Option<i64>,
    log_end_offset: Option<i64>,
    high_watermark: Option<i64>,
    leader_epoch: Option<i32>,
    truncate_to: Option<i64>,
    diverges_at: Option<i64>,
    /// `>=N` when only a lower bound is known.
    batches_beyond: Option<String>,
    behind: Option<i64>,
    detail: &'a str,
}

#[derive(Serialize, JsonSchema)]
struct ReplicaCsvRow<'a> {
    topic: &'a str,
    partition: i32,
    status: &'static str,
    leader: Option<i32>,
    node_id: i32,
    state: &'static str,
    log_start_offset: Option<i64>,
    log_end_offset: Option<i64>,
    high_watermark: Option<i64>,
    leader_epoch: Option<i32>,
    truncation_offset: Option<i64>,
    divergence_offset: Option<i64>,
    batches_beyond: Option<u64>,
    behind_by: Option<i64>,
    batches_beyond_exact: Option<bool>,
    verified_through: Option<i64>,
    assigned: Option<bool>,
    detail: &'a str,
}

/// One replica under one of the leaders a stopped cluster may elect.
#[derive(Serialize, JsonSchema)]
struct OutcomeRow<'a> {
    topic: &'a str,
    partition: i32,
    if_leader: i32,
    status: &'static str,
    node: i32,
    state: &'static str,
    truncate_to: Option<i64>,
    diverges_at: Option<i64>,
    batches_beyond: Option<String>,
    behind: Option<i64>,
}

/// One committed offset against its partition's leader.
#[derive(Serialize, JsonSchema)]
struct LagRow<'a> {
    group: &'a str,
    topic: &'a str,
    partition: i32,
    committed_offset: i64,
    coordinator: i32,
    leader: Option<i32>,
    log_start_offset: Option<i64>,
    log_end_offset: Option<i64>,
    high_watermark: Option<i64>,
    lag: Option<i64>,
    status: &'static str,
    /// Where the group's consumer lands on the leader (see `Landing`);
    /// when the leader after a restart is open, under each that may be
    /// elected.
    lands: Option<String>,
}

/// The LANDS cell: the landing on the leader judged against, then, when
/// the election is open, the landing under each other leader it may elect.
fn lands_cell(g: &GroupLag) -> Option<String> {
    let first = g.lands?.describe();
    let others: Vec<String> = g
        .lands_under
        .iter()
        .filter(|u| Some(u.leader) != g.leader)
        .map(|u| format!("under node {}: {}", u.leader, u.lands.describe()))
        .collect();
    if others.is_empty() {
        return Some(first);
    }
    let leader = g
        .leader
        .map_or(String::new(), |l| format!("under node {l}: "));
    Some(format!("{leader}{first}; {}", others.join("; ")))
}

fn lag_table(groups: &[GroupLag]) -> Table {
    let rows: Vec<LagRow> = groups
        .iter()
        .map(|g| LagRow {
            group: &g.group,
            topic: &g.topic,
            partition: g.partition,
            committed_offset: g.committed_offset,
            coordinator: g.coordinator,
            leader: g.leader,
            log_start_offset: g.log_start_offset,
            log_end_offset: g.log_end_offset,
            high_watermark: g.high_watermark,
            lag: g.lag,
            status: g.status.name(),
            lands: lands_cell(g),
        })
        .collect();
    Table::of(&rows)
}

impl Report for ClusterOut<'_> {
    const COMMAND: &'static str = "cluster";

    /// CSV: one row per replica, or per committed offset with --lag.
    fn tables(&self) -> Vec<Table> {
        if self.lag_only {
            return vec![lag_table(&self.report.groups)];
        }
        let rows: Vec<ReplicaCsvRow> = self
            .report
            .partitions
            .iter()
            .flat_map(|p| {
                p.replicas.iter().map(move |r| ReplicaCsvRow {
                    topic: &p.topic,
                    partition: p.partition,
                    status: p.status.name(),
                    leader: p.leader,
                    node_id: r.node_id,
                    state: r.state.name(),
                    log_start_offset: r.log_start_offset,
                    log_end_offset: r.log_end_offset,
                    high_watermark: r.high_watermark,
                    leader_epoch: r.leader_epoch,
                    truncation_offset: r.truncation_offset,
                    divergence_offset: r.divergence_offset,
                    batches_beyond: r.batches_beyond,
                    behind_by: r.behind_by,
                    batches_beyond_exact: r.batches_beyond_exact,
                    verified_through: r.verified_through,
                    assigned: r.assigned,
                    detail: &r.detail,
                })
            })
            .collect();
        vec![Table::of(&rows)]
    }

    /// Partitions, then replicas, then group lag (only the lag with --lag).
    fn text(&self, fit: crate::report::table::Fit) -> String {
        let r = self.report;
        let lag = lag_table(&r.groups).render(fit);
        if self.lag_only {
            return lag;
        }
        // How each broker went down, first: what an operator asks first;
        // and what its summary found that stops it or costs it data.
        let mut head = String::new();
        for s in &r.summaries {
            head.push_str(&format!(
                "{}: {}\n",
                escape_cell(&s.log_dir),
                cluster_text::shutdown_words(s.node_id, s.shutdown)
            ));
            head.push_str(&cluster_text::findings_text(s));
        }
        // What needs attention: the partitions that are not ok (all with --all).
        let shown: Vec<&merge::PartitionVerdict> = r
            .partitions
            .iter()
            .filter(|p| self.all || p.status != merge::PartitionStatus::Ok)
            .collect();
        let partitions: Vec<PartitionRow> = shown
            .iter()
            .map(|p| PartitionRow {
                topic: &p.topic,
                partition: p.partition,
                status: p.status.name(),
                // Undecided: no one leader; the outcomes table has each.
                leader: p
                    .leader
                    .filter(|_| p.leader_source != merge::LeaderSource::Undecided),
                leader_epoch: p.leader_epoch,
                log_end_offset: p.log_end_offset,
                high_watermark: p.high_watermark,
                replicas: nodes(p.assigned_replicas.as_deref()),
                isr: nodes(p.isr.as_deref()),
                missing: nodes(p.missing_nodes().as_deref()),
                detail: &p.detail,
            })
            .collect();
        let replicas: Vec<ReplicaRow> = shown
            .iter()
            .flat_map(|p| {
                p.replicas.iter().map(move |x| ReplicaRow {
                    topic: &p.topic,
                    partition: p.partition,
                    node: x.node_id,
                    state: x.state.name(),
                    log_start_offset: x.log_start_offset,
                    log_end_offset: x.log_end_offset,
                    high_watermark: x.high_watermark,
                    leader_epoch: x.leader_epoch,
                    truncate_to: x.truncation_offset,
                    diverges_at: x.divergence_offset,
                    batches_beyond: beyond(x),
                    behind: x.behind_by,
                    detail: &x.detail,
                })
            })
            .collect();
        let outcomes: Vec<OutcomeRow> = shown
            .iter()
            .flat_map(|p| {
                p.outcomes.iter().flat_map(move |o| {
                    o.replicas.iter().map(move |x| OutcomeRow {
                        topic: &p.topic,
                        partition: p.partition,
                        if_leader: o.leader,
                        status: o.status.name(),
                        node: x.node_id,
                        state: x.state.name(),
                        truncate_to: x.truncation_offset,
                        diverges_at: x.divergence_offset,
                        batches_beyond: beyond(x),
                        behind: x.behind_by,
                    })
                })
            })
            .collect();
        let outcomes = if outcomes.is_empty() {
            String::new()
        } else {
            format!(
                "{}\n",
                Table::of(&outcomes).numeric("batches_beyond").render(fit)
            )
        };
        let losses = cluster_text::losses_text(r);
        let tables = if shown.is_empty() {
            format!(
                "every partition ok: {} partitions (--all lists them)\n",
                r.partitions.len()
            )
        } else {
            format!(
                "{}\n{}",
                Table::of(&partitions).render(fit),
                Table::of(&replicas).numeric("batches_beyond").render(fit)
            )
        };
        format!("{head}\n{tables}\n{outcomes}{losses}{lag}")
    }

    fn summary(&self) -> String {
        format!("klog: {}\n", cluster_text::totals(self.report))
    }
}

impl crate::cmd::CommandEntry for ClusterArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog cluster summaries/",
        "replica divergence, lost partitions and group lag across brokers",
    )];
    const SEE_ALSO: &'static [&'static str] = &["summary", "lag", "brokers(7)"];
    const DETAILS: Option<&'static str> = None;

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<ClusterOut<'static>>()]
    }
}
