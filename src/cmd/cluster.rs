//! `klog cluster`: every broker's summary merged into one verdict.

use std::path::PathBuf;

use kaen_log::cluster::merge::{self, ClusterReport, GroupLag, ReplicaVerdict};

use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::cluster_text;
use crate::report::document::TABLE;
use crate::report::table::{cell, escape_cell, Column};
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

type Replica<'r> = (&'r merge::PartitionVerdict, &'r ReplicaVerdict);

/// A partition's verdict (text): the leader only when the election is
/// decided (the outcomes table has each otherwise).
fn partition_columns<'r>() -> [Column<&'r merge::PartitionVerdict>; 11] {
    [
        Column::text("topic", |p| cell(&p.topic)),
        Column::number("partition", |p| cell(&p.partition)),
        Column::text("status", |p| cell(p.status.name())),
        Column::number("leader", |p| {
            cell(&p.leader.filter(|_| p.leader_source != merge::LeaderSource::Undecided))
        }),
        Column::number("leader_epoch", |p| cell(&p.leader_epoch)),
        Column::number("log_end_offset", |p| cell(&p.log_end_offset)),
        Column::number("high_watermark", |p| cell(&p.high_watermark)),
        Column::text("replicas", |p| nodes(p.assigned_replicas.as_deref())),
        Column::text("isr", |p| nodes(p.isr.as_deref())),
        Column::text("missing", |p| nodes(p.missing_nodes().as_deref())),
        Column::text("detail", |p| cell(&p.detail)),
    ]
}

/// A replica, with its partition's status and leader: the counts exact
/// and whether each is (CSV), and `batches_beyond_shown`, `>=N` when only
/// a lower bound is known (text).
fn replica_columns<'r>() -> [Column<Replica<'r>>; 19] {
    [
        Column::text("topic", |(p, _)| cell(&p.topic)),
        Column::number("partition", |(p, _)| cell(&p.partition)),
        Column::text("status", |(p, _)| cell(p.status.name())),
        Column::number("leader", |(p, _)| cell(&p.leader)),
        Column::number("node_id", |(_, x)| cell(&x.node_id)),
        Column::text("state", |(_, x)| cell(x.state.name())),
        Column::number("log_start_offset", |(_, x)| cell(&x.log_start_offset)),
        Column::number("log_end_offset", |(_, x)| cell(&x.log_end_offset)),
        Column::number("high_watermark", |(_, x)| cell(&x.high_watermark)),
        Column::number("leader_epoch", |(_, x)| cell(&x.leader_epoch)),
        Column::number("truncation_offset", |(_, x)| cell(&x.truncation_offset)),
        Column::number("divergence_offset", |(_, x)| cell(&x.divergence_offset)),
        Column::number("batches_beyond", |(_, x)| cell(&x.batches_beyond)),
        Column::number("behind_by", |(_, x)| cell(&x.behind_by)),
        Column::text("batches_beyond_exact", |(_, x)| cell(&x.batches_beyond_exact)),
        Column::number("verified_through", |(_, x)| cell(&x.verified_through)),
        Column::text("assigned", |(_, x)| cell(&x.assigned)),
        Column::text("detail", |(_, x)| cell(&x.detail)),
        Column::number("batches_beyond_shown", |(_, x)| beyond(x)),
    ]
}

/// The replicas table of text: its columns, under their headers.
const REPLICA_TEXT: &[(&str, &str)] = &[
    ("topic", "TOPIC"),
    ("partition", "PARTITION"),
    ("node_id", "NODE"),
    ("state", "STATE"),
    ("log_start_offset", "LOG-START-OFFSET"),
    ("log_end_offset", "LOG-END-OFFSET"),
    ("high_watermark", "HIGH-WATERMARK"),
    ("leader_epoch", "LEADER-EPOCH"),
    ("truncation_offset", "TRUNCATE-TO"),
    ("divergence_offset", "DIVERGES-AT"),
    ("batches_beyond_shown", "BATCHES-BEYOND"),
    ("behind_by", "BEHIND"),
    ("detail", "DETAIL"),
];

/// A replica under one of the leaders a stopped cluster may elect.
type Elected<'r> = (
    &'r merge::PartitionVerdict,
    &'r merge::LeaderOutcome,
    &'r ReplicaVerdict,
);

fn outcome_columns<'r>() -> [Column<Elected<'r>>; 10] {
    [
        Column::text("topic", |(p, _, _)| cell(&p.topic)),
        Column::number("partition", |(p, _, _)| cell(&p.partition)),
        Column::number("if_leader", |(_, o, _)| cell(&o.leader)),
        Column::text("status", |(_, o, _)| cell(o.status.name())),
        Column::number("node", |(_, _, x)| cell(&x.node_id)),
        Column::text("state", |(_, _, x)| cell(x.state.name())),
        Column::number("truncate_to", |(_, _, x)| cell(&x.truncation_offset)),
        Column::number("diverges_at", |(_, _, x)| cell(&x.divergence_offset)),
        Column::number("batches_beyond", |(_, _, x)| beyond(x)),
        Column::number("behind", |(_, _, x)| cell(&x.behind_by)),
    ]
}

/// A committed offset against its partition's leader.
fn lag_columns<'r>() -> [Column<&'r GroupLag>; 12] {
    [
        Column::text("group", |g| cell(&g.group)),
        Column::text("topic", |g| cell(&g.topic)),
        Column::number("partition", |g| cell(&g.partition)),
        Column::number("committed_offset", |g| cell(&g.committed_offset)),
        Column::number("coordinator", |g| cell(&g.coordinator)),
        Column::number("leader", |g| cell(&g.leader)),
        Column::number("log_start_offset", |g| cell(&g.log_start_offset)),
        Column::number("log_end_offset", |g| cell(&g.log_end_offset)),
        Column::number("high_watermark", |g| cell(&g.high_watermark)),
        Column::number("lag", |g| cell(&g.lag)),
        Column::text("status", |g| cell(g.status.name())),
        // Where the group's consumer lands on the leader (see `Landing`);
        // when the leader after a restart is open, under each that may be
        // elected.
        Column::text("lands", |g| lands_cell(g)),
    ]
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
    Table::listed(groups, &lag_columns())
}

impl Report for ClusterOut<'_> {
    const COMMAND: &'static str = "cluster";

    /// CSV: one row per replica, or per committed offset with --lag.
    fn tables(&self) -> Vec<Table> {
        if self.lag_only {
            return vec![lag_table(&self.report.groups)];
        }
        let replicas = self
            .report
            .partitions
            .iter()
            .flat_map(|p| p.replicas.iter().map(move |r| (p, r)));
        let table = Table::listed(replicas, &replica_columns());
        vec![table.without("batches_beyond_shown")]
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
        let replicas = shown
            .iter()
            .flat_map(|&p| p.replicas.iter().map(move |x| (p, x)));
        let outcomes: Vec<Elected> = shown
            .iter()
            .flat_map(|&p| {
                p.outcomes
                    .iter()
                    .flat_map(move |o| o.replicas.iter().map(move |x| (p, o, x)))
            })
            .collect();
        let outcomes = if outcomes.is_empty() {
            String::new()
        } else {
            format!(
                "{}\n",
                Table::listed(outcomes, &outcome_columns()).render(fit)
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
                Table::listed(shown.iter().copied(), &partition_columns()).render(fit),
                Table::listed(replicas, &replica_columns())
                    .pick(REPLICA_TEXT)
                    .render(fit)
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
