//! What a report shows, gathered from the documents the other commands
//! build (`verify-crc`'s findings and recovery preview, `summary`'s
//! partitions, `transactions`' producer state, `lag`'s rows, `cluster`'s
//! verdict): the renderer reads only this (and, for `--layout`, a
//! [`LayoutDoc`](kaen_log::format::annotation::LayoutDoc)).

use std::collections::BTreeMap;

use kaen_log::cluster::broker_summary::{EpochRun, LogDirSummary, PartitionSummary};
use kaen_log::cluster::merge::{ClusterReport, GroupLag, Source};
use kaen_log::log::findings::{Finding, Severity};
use kaen_log::log::shutdown::ShutdownState;

pub use super::shown::Shown;

/// A whole report.
#[derive(Debug, Clone, Default)]
pub struct ReportDoc {
    /// The inputs, as given.
    pub sources: Vec<String>,
    /// `--now-ms`, when given (expiry and hanging transactions are judged at it).
    pub now_ms: Option<i64>,
    /// What `verify-crc` checked (absent for summary files).
    pub checked: Option<Checked>,
    /// Every finding, each with what Kafka does with it.
    pub findings: Vec<FindingView>,
    /// One per partition replica found.
    pub partitions: Vec<PartitionView>,
    pub lag: LagSection,
    /// `cluster`'s verdict, when several brokers' directories or summaries are given.
    pub cluster: Option<ClusterReport>,
    /// Every replica's runs of leader epochs, for the replica view.
    pub replica_runs: Vec<ReplicaRuns>,
    /// Above this many partitions, timelines are drawn for the most
    /// telling ones only and the heatmap is per topic.
    pub detail_limit: usize,
    /// Lines for people about what the report could not show.
    pub notes: Vec<String>,
    /// How each broker went down and what its restart re-reads, one per
    /// log directory (the page's first section).
    pub restarts: Vec<RestartLine>,
}

/// One log directory's shutdown, for the page's top.
#[derive(Debug, Clone)]
pub struct RestartLine {
    pub node: Option<i32>,
    pub dir: Shown,
    /// Not shut down cleanly (no `.kafka_cleanshutdown`).
    pub unclean: bool,
    /// The headline (klog's words and numbers).
    pub text: String,
}

impl RestartLine {
    /// The line of a summary's log directory (`None`: not a broker's).
    pub fn of_summary(d: &LogDirSummary) -> Option<RestartLine> {
        let state = d.shutdown_state();
        (state != ShutdownState::NotABroker).then(|| RestartLine {
            node: d.node_id,
            dir: Shown::new(&d.path),
            unclean: state == ShutdownState::Unclean,
            text: d.shutdown_line(),
        })
    }
}

/// Counts of what was checked.
#[derive(Debug, Clone, Copy, Default)]
pub struct Checked {
    pub files: u64,
    pub batches: u64,
    pub records: u64,
    pub bytes: u64,
}

/// A finding and what Kafka does with it.
#[derive(Debug, Clone)]
pub struct FindingView {
    pub finding: Finding,
    pub kafka: String,
}

/// The overall verdict.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Verdict {
    Healthy,
    Warnings,
    Damaged,
}

impl Verdict {
    pub fn name(self) -> &'static str {
        match self {
            Verdict::Healthy => "healthy",
            Verdict::Warnings => "warnings",
            Verdict::Damaged => "damaged",
        }
    }
}

impl ReportDoc {
    /// damaged: a finding at error severity, or a partition lost or
    /// diverged; warnings: a finding at warning severity, or a partition
    /// under-replicated; healthy otherwise (notes are what a healthy
    /// broker leaves).
    pub fn verdict(&self) -> Verdict {
        use kaen_log::cluster::merge::PartitionStatus as S;
        let worst_finding = self.findings.iter().map(|f| f.finding.severity).max();
        let worst_partition = self
            .cluster
            .iter()
            .flat_map(|c| &c.partitions)
            .map(|p| p.status)
            .max();
        let damaged_summary = self.partitions.iter().any(|p| p.summary.damage.is_some());
        if worst_finding == Some(Severity::Error)
            || matches!(worst_partition, Some(S::Lost | S::Diverged))
            || damaged_summary
        {
            Verdict::Damaged
        } else if worst_finding == Some(Severity::Warning)
            || worst_partition == Some(S::UnderReplicated)
        {
            Verdict::Warnings
        } else {
            Verdict::Healthy
        }
    }
}

/// One partition replica on one broker.
#[derive(Debug, Clone)]
pub struct PartitionView {
    pub node: Option<i32>,
    /// The log directory.
    pub dir: Shown,
    /// `summary`'s document of it.
    pub summary: PartitionSummary,
    /// The last stable offset (absent for summary files).
    pub last_stable: Option<i64>,
    /// Open transactions: producer id and first offset (they run to the log end).
    pub open_txns: Vec<(i64, i64)>,
    /// Aborted transactions: producer id, first offset, marker offset.
    pub aborted: Vec<(i64, i64, i64)>,
    /// Error findings in its logs.
    pub damage: Vec<DamageMark>,
    /// What a restarting broker's recovery would cut.
    pub recovery: Option<RecoveryCut>,
    /// What `verify-crc --repair --salvage` would lose instead:
    /// `from..=to` ranges (`to` absent: to the end of the log).
    pub salvage_lost: Option<Vec<(i64, Option<i64>)>>,
}

impl PartitionView {
    /// The view of `summary`, on broker `node` in the log directory `dir`,
    /// before producer state and damage are added.
    pub fn new(node: Option<i32>, dir: Shown, summary: PartitionSummary) -> Self {
        PartitionView {
            node,
            dir,
            summary,
            last_stable: None,
            open_txns: Vec::new(),
            aborted: Vec::new(),
            damage: Vec::new(),
            recovery: None,
            salvage_lost: None,
        }
    }
    /// `topic-partition`.
    pub fn name(&self) -> String {
        format!("{}-{}", self.summary.topic, self.summary.partition)
    }
    /// Whether its timeline is drawn as `other`'s: the same segments,
    /// marks and transactions, and no damage in either.
    pub fn drawn_alike(&self, other: &PartitionView) -> bool {
        let (s, t) = (&self.summary, &other.summary);
        let plain = |p: &PartitionView| {
            p.damage.is_empty() && p.recovery.is_none() && p.salvage_lost.is_none()
        };
        (
            s.log_start_offset,
            s.log_end_offset,
            s.high_watermark,
            s.recovery_point,
        ) == (
            t.log_start_offset,
            t.log_end_offset,
            t.high_watermark,
            t.recovery_point,
        ) && s.segments == t.segments
            && (self.last_stable, &self.open_txns, &self.aborted)
                == (other.last_stable, &other.open_txns, &other.aborted)
            && plain(self)
            && plain(other)
    }
    /// Whether its timeline says more than its row in the table.
    pub fn telling(&self) -> u8 {
        if !self.damage.is_empty() || self.recovery.is_some() {
            3
        } else if !self.open_txns.is_empty() {
            2
        } else if !self.aborted.is_empty() {
            1
        } else {
            0
        }
    }
}

/// An error finding placed on a timeline.
#[derive(Debug, Clone)]
pub struct DamageMark {
    pub file: String,
    pub position: u64,
    pub offset: Option<i64>,
    pub kind: &'static str,
}

impl DamageMark {
    /// The mark of an error finding in a log segment.
    pub fn of(f: &Finding) -> DamageMark {
        DamageMark {
            file: f.file.display().to_string(),
            position: f.position,
            offset: f.offset,
            kind: f.kind.name(),
        }
    }
}

/// A cut a restarting broker's recovery would make.
#[derive(Debug, Clone)]
pub struct RecoveryCut {
    pub file: String,
    pub position: u64,
    pub bytes: u64,
    pub deleted_segments: Vec<String>,
    /// The offsets that disappear, first and last.
    pub lost: Option<(i64, i64)>,
}

/// The lag heatmap's cells.
#[derive(Debug, Clone, Default)]
pub struct LagSection {
    pub cells: Vec<LagCell>,
    /// Why there is no lag, when there is none.
    pub missing: Option<String>,
    /// The cells' sums (each saturating, as `lag`'s totals).
    pub sums: LagSums,
}

/// The sums the heatmaps show beside their cells.
#[derive(Debug, Clone, Default)]
pub struct LagSums {
    /// Per group: the sum of its positive lags and of its pending records.
    pub groups: BTreeMap<Shown, (i64, u64)>,
    /// Per group and topic: the sum of the positive lags (`None` when no
    /// partition's lag is known) and the partitions.
    pub group_topics: BTreeMap<(Shown, Shown), (Option<i64>, u64)>,
    /// Per topic: the sum of its groups' lags.
    pub topics: BTreeMap<Shown, i64>,
    /// The sum of every topic's.
    pub all: i64,
}

/// One group's lag on one partition.
#[derive(Debug, Clone)]
pub struct LagCell {
    pub group: Shown,
    pub topic: Shown,
    pub partition: i32,
    pub committed: i64,
    pub log_start: Option<i64>,
    pub log_end: Option<i64>,
    pub high_watermark: Option<i64>,
    pub last_stable: Option<i64>,
    pub lag: Option<i64>,
    pub pending: Option<u64>,
    pub status: &'static str,
}

impl LagCell {
    /// The cell of one of `cluster`'s committed offsets (pending records
    /// and the last stable offset are not in a summary).
    pub fn of_cluster(g: &GroupLag) -> LagCell {
        LagCell {
            group: Shown::new(&g.group),
            topic: Shown::new(&g.topic),
            partition: g.partition,
            committed: g.committed_offset,
            log_start: g.log_start_offset,
            log_end: g.log_end_offset,
            high_watermark: g.high_watermark,
            last_stable: None,
            lag: g.lag,
            pending: None,
            status: g.status.name(),
        }
    }
}

/// A replica's runs of leader epochs.
#[derive(Debug, Clone)]
pub struct ReplicaRuns {
    pub node: i32,
    pub topic: String,
    pub partition: i32,
    pub runs: Vec<EpochRun>,
}

impl ReplicaRuns {
    /// Every replica's epoch runs in the summaries, by node.
    pub fn of(sources: &[Source]) -> Vec<ReplicaRuns> {
        sources
            .iter()
            .flat_map(|s| &s.doc.log_dirs)
            .filter_map(|d| Some((d.node_id?, d)))
            .flat_map(|(node, d)| {
                d.partitions.iter().map(move |p| ReplicaRuns {
                    node,
                    topic: p.topic.clone(),
                    partition: p.partition,
                    runs: p.epochs.clone(),
                })
            })
            .collect()
    }
}
