//! `klog lag`: committed offsets against the ends of their partitions.

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaen_log::inspect::consumer_lag::{self, LagOptions, LagRow, LagTotal};
use kaen_log::offsets::replay::Incomplete;
use kaen_log::offsets::ReplayOptions;

use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::openmetrics::Metric;

mod lag_metrics;
use lag_metrics::cluster_name;
use crate::report::progress::Progress;
use crate::report::{emit, formats, Format, Output, Report, Table};
use kaen_log::txn::Isolation;

/// `lag`'s formats: a table's, and Prometheus' for monitoring.
const LAG_FORMATS: &[Format] = &[Format::Text, Format::Json, Format::Csv, Format::Prometheus];

/// For every committed offset, how far the group is behind.
///
/// lag = end − committed, where end is the high watermark (from
/// replication-offset-checkpoint) when known, else the log end offset, and
/// the last stable offset with --isolation read_committed. LOG-END-OFFSET
/// is the log end offset; HIGH-WATERMARK is what kafka-consumer-groups
/// calls LOG-END-OFFSET (`--columns kafka` prints its columns and names).
/// PENDING-RECORDS counts the data records (control records
/// excluded) a consumer still has to read: an exactly-once group that has
/// read everything shows 0 even though its lag is 1 (the last COMMIT marker
/// takes an offset). LAG is kafka-consumer-groups' (end − committed,
/// nothing clamped): negative for a commit above the end. STATUS is ok,
/// below_log_start (retention deleted committed records: the consumer will
/// reset), above_log_end (the log was truncated under the group),
/// above_high_watermark (between the high watermark and the log end: the
/// group committed records not known to be replicated, which a restart can
/// truncate), no_committed_offset (a negative committed
/// offset, which Kafka's clients read as none) or no_partition (no such
/// partition on these disks), topic_recreated (committed for an earlier topic
/// of the same name: its OffsetCommitValue v4 topic id is not the topic's
/// current id; kafka-consumer-groups and a classic consumer fetch it by
/// name and see it, and the lag is theirs, while a KIP-848 consumer
/// fetches by topic id, gets none and resets: stderr says so) or expired
/// (past --offsets-retention-minutes at --now-ms: the coordinator removes
/// it at its next check and the consumer resets; the lag is the committed
/// offset's). On a topic with tiered storage (KIP-405: its config in the
/// KRaft metadata, or `__remote_log_metadata` naming the partition) the
/// log start is Kafka's (`log-start-offset-checkpoint` and the remote
/// log's start), LOCAL-LOG-START-OFFSET where the local copy starts (text
/// shows it when it differs): a commit between the two is ok, Kafka serves
/// it from remote storage, and its PENDING-RECORDS are `-` (those records
/// are not on these disks). CONSUMER-ID, HOST and CLIENT-ID name the
/// member whose current assignment holds the partition, in a classic
/// group's metadata or a new-protocol (consumer, share, streams) group's
/// assignment records. Text output holds the partitions' rows alone (the
/// sum of the groups' lags is said on stderr); `--by group` prints each
/// group's total, the sum of its positive lags and pending records (every
/// sum stops at 9223372036854775807 rather than wrap).
///
/// Exit 1 when --fail-above is given and some lag exceeds it, or when the
/// offsets topic has records that do not decode or cannot be applied
/// (then the table is incomplete: stderr says so in text and CSV, the
/// JSON document's `incomplete` list in JSON).
#[derive(Debug, clap::Args)]
pub struct LagArgs {
    /// Data directories (several: the log directories of one broker, merged,
    /// or of several brokers of one cluster).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Only this group.
    #[arg(long)]
    pub group: Option<String>,
    /// Only this topic (repeatable).
    #[arg(long, short = 't')]
    pub topic: Vec<String>,
    /// Only the partitions whose lag is at least N.
    #[arg(long, value_name = "N")]
    pub min_lag: Option<i64>,
    /// Which end the consumer reads to: read-uncommitted (the high watermark)
    /// or read-committed (the last stable offset).
    #[arg(long, value_parser = crate::cmd::args::isolation, default_value = "read-uncommitted")]
    pub isolation: Isolation,
    /// Exit 1 when any partition's lag is above N.
    #[arg(long, value_name = "N")]
    pub fail_above: Option<i64>,
    /// Output format.
    #[arg(long, value_parser = formats(LAG_FORMATS), default_value = "text")]
    pub format: Format,
    /// Which columns text and CSV show.
    #[arg(long, value_enum, default_value_t = Columns::All)]
    pub columns: Columns,
    /// The rows of text and CSV: one per partition (the default), one per
    /// group and topic, or one per group, each summing its partitions'
    /// positive lags and pending records. JSON carries all three lists.
    #[arg(long, value_enum, default_value_t = By::Partition)]
    pub by: By,
    #[command(flatten)]
    pub retention: crate::cmd::args::RetentionArgs,
}

/// `lag --by`: what one row of text and CSV is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum By {
    /// One row per partition of each group.
    Partition,
    /// One row per topic of each group.
    Topic,
    /// One row per group.
    Group,
}

/// Which columns the table shows.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum Columns {
    /// Every column klog computes.
    #[default]
    All,
    /// Exactly kafka-consumer-groups --describe's (GROUP TOPIC PARTITION
    /// CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID, where
    /// LOG-END-OFFSET is the high watermark).
    Kafka,
}

pub fn run(args: &LagArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let progress = Progress::spinner(out.shows_progress(args.format == Format::Text));
    let opts = ReplayOptions {
        group: args.group.clone(),
        meter: Progress::meter_of(&progress),
        ..ReplayOptions::default()
    };
    let (dirs, replay, _) = crate::cmd::replayed::replay_dirs(&args.dirs, opts)?;
    if let Some(g) = &args.group {
        let known = replay.knows_group(g);
        anyhow::ensure!(known, "group {g:?}: group does not exist");
    }
    let isolation = args.isolation;
    let rows = consumer_lag::compute(
        &dirs,
        &replay,
        &LagOptions {
            isolation,
            group: args.group.clone(),
            retention: Some(args.retention.retention()),
            meter: Progress::meter_of(&progress),
            ..LagOptions::default()
        },
    )?;
    drop(progress);
    for t in &args.topic {
        let known = rows.iter().any(|r| &r.topic == t)
            || dirs.iter().any(|d| d.live().any(|p| &p.topic == t));
        anyhow::ensure!(
            known,
            "topic {t:?}: no partition of it in these directories and no offset committed for it"
        );
    }
    let rows: Vec<_> = rows
        .into_iter()
        .filter(|r| args.topic.is_empty() || args.topic.contains(&r.topic))
        .filter(|r| args.min_lag.is_none_or(|n| r.lag.is_some_and(|l| l >= n)))
        .collect();
    let report = LagReport {
        incomplete: replay.incomplete.values().cloned().collect(),
        isolation: isolation.name(),
        partitions: rows.iter().map(LagOut::from).collect(),
        groups: group_totals(&rows),
        topics: topic_totals(&rows),
        columns: args.columns,
        by: args.by,
        cluster_name: cluster_name(&dirs),
    };
    emit(&report, args.format, out)?;
    // Text on stdout is the partitions alone, so sort and awk see rows of
    // one shape; the sum is for people, on stderr (each group's: --by group).
    let shown = args.format == Format::Text && args.columns == Columns::All;
    if shown && args.by == By::Partition && !report.groups.is_empty() {
        let lag = report.groups.iter().fold(0i64, |a, t| a.saturating_add(t.lag));
        let n = report.groups.len();
        crate::report::say!(
            "{n} group{}, lag {lag} in all (each group's: --by group)",
            if n == 1 { "" } else { "s" }
        );
    }
    let remote = rows
        .iter()
        .filter(|r| {
            r.ends.is_some_and(|e| {
                e.tiered && r.committed >= e.log_start && r.committed < e.local_log_start
            })
        })
        .count();
    if remote > 0 {
        crate::report::say!(
            "note: {remote} committed offset{} below the first local segment of a topic with tiered storage: \
             Kafka serves {} from remote storage (their pending records are not on these disks)",
            if remote == 1 { " lies" } else { "s lie" },
            if remote == 1 { "it" } else { "them" }
        );
    }
    let over = args.fail_above.map_or(0, |n| {
        rows.iter().filter(|r| r.lag.is_some_and(|l| l > n)).count()
    });
    if let Some(n) = args.fail_above {
        if over > 0 {
            crate::report::say!(
                "{} more than {n}",
                if over == 1 {
                    "1 partition lags".to_string()
                } else {
                    format!("{over} partitions lag")
                }
            );
        }
    }
    Ok(Outcome::from_count(over as u64 + replay.bad_count))
}

/// One partition of one group (the JSON and CSV row).
#[derive(Serialize, JsonSchema)]
struct LagOut {
    group: String,
    topic: String,
    partition: i32,
    committed_offset: i64,
    /// Kafka's log start (ListOffsets earliest).
    log_start_offset: Option<i64>,
    /// Where the local copy starts (ListOffsets earliest-local): below it,
    /// down to the log start, the records live in tiered storage only.
    /// Text shows the column only when it differs from the log start.
    local_log_start_offset: Option<i64>,
    log_end_offset: Option<i64>,
    high_watermark: Option<i64>,
    last_stable_offset: Option<i64>,
    lag: Option<i64>,
    pending_records: Option<u64>,
    status: &'static str,
    consumer_id: Option<String>,
    host: Option<String>,
    client_id: Option<String>,
}

impl From<&LagRow> for LagOut {
    fn from(r: &LagRow) -> Self {
        let e = r.ends;
        LagOut {
            group: r.group.clone(),
            topic: r.topic.clone(),
            partition: r.partition,
            committed_offset: r.committed,
            log_start_offset: e.map(|e| e.log_start),
            local_log_start_offset: e.map(|e| e.local_log_start),
            log_end_offset: e.map(|e| e.log_end),
            high_watermark: e.and_then(|e| e.high_watermark),
            last_stable_offset: e.and_then(|e| e.last_stable),
            lag: r.lag,
            pending_records: r.pending_records,
            status: r.status.name(),
            consumer_id: r.member.clone(),
            host: r.host.clone(),
            client_id: r.client.clone(),
        }
    }
}

/// A group's total: the sum of its positive lags and its pending records,
/// over its `partitions` rows (each sum saturates: [`LagTotal`]).
#[derive(Serialize, JsonSchema)]
struct GroupTotal {
    group: String,
    partitions: u64,
    lag: i64,
    pending_records: u64,
}

/// The same sums for one topic of one group.
#[derive(Serialize, JsonSchema)]
struct TopicTotal {
    group: String,
    topic: String,
    partitions: u64,
    lag: i64,
    pending_records: u64,
}

/// The [`LagTotal`] of each key, in key order.
fn sums<'r, K: Ord>(rows: &'r [LagRow], key: impl Fn(&'r LagRow) -> K) -> BTreeMap<K, LagTotal> {
    let mut totals: BTreeMap<K, LagTotal> = BTreeMap::new();
    for r in rows {
        totals
            .entry(key(r))
            .or_default()
            .add(r.lag, r.pending_records);
    }
    totals
}

fn group_totals(rows: &[LagRow]) -> Vec<GroupTotal> {
    sums(rows, |r| r.group.as_str())
        .into_iter()
        .map(|(group, t)| GroupTotal {
            group: group.to_string(),
            partitions: t.partitions,
            lag: t.lag,
            pending_records: t.pending_records,
        })
        .collect()
}

fn topic_totals(rows: &[LagRow]) -> Vec<TopicTotal> {
    sums(rows, |r| (r.group.as_str(), r.topic.as_str()))
        .into_iter()
        .map(|((group, topic), t)| TopicTotal {
            group: group.to_string(),
            topic: topic.to_string(),
            partitions: t.partitions,
            lag: t.lag,
            pending_records: t.pending_records,
        })
        .collect()
}

/// `klog lag`'s document.
#[derive(Serialize, JsonSchema)]
pub struct LagReport {
    /// The offsets partitions not read whole: the lags of their groups are
    /// missing or stale (empty when every record was read and applied).
    incomplete: Vec<Incomplete>,
    /// `read-uncommitted` or `read-committed`.
    isolation: &'static str,
    partitions: Vec<LagOut>,
    /// Each group's sums over its partitions (`--by group`).
    groups: Vec<GroupTotal>,
    /// Each group's sums per topic (`--by topic`).
    topics: Vec<TopicTotal>,
    #[serde(skip)]
    columns: Columns,
    #[serde(skip)]
    by: By,
    /// `--format prometheus`'s `cluster_name`: the cluster id of the
    /// directories' meta.properties (empty when none says one).
    #[serde(skip)]
    cluster_name: String,
}


/// kafka-consumer-groups `--describe`'s columns, in its order and names.
const KAFKA_COLUMNS: &[(&str, &str)] = &[
    ("group", "GROUP"),
    ("topic", "TOPIC"),
    ("partition", "PARTITION"),
    ("committed_offset", "CURRENT-OFFSET"),
    ("high_watermark", "LOG-END-OFFSET"),
    ("lag", "LAG"),
    ("consumer_id", "CONSUMER-ID"),
    ("host", "HOST"),
    ("client_id", "CLIENT-ID"),
];

impl Report for LagReport {
    const COMMAND: &'static str = "lag";

    fn metrics(&self) -> Vec<Metric> {
        self.exporter_metrics()
    }

    fn summary(&self) -> String {
        let mut text = crate::report::document::incomplete_text(&self.incomplete);
        text += &crate::report::document::topic_recreated_text(
            self.partitions.iter().map(|r| r.status),
        );
        text
    }

    fn tables(&self) -> Vec<Table> {
        match self.by {
            By::Topic => return vec![Table::of(&self.topics)],
            By::Group => return vec![Table::of(&self.groups)],
            By::Partition => {}
        }
        let table = Table::of(&self.partitions);
        if self.columns == Columns::Kafka {
            return vec![table.pick(KAFKA_COLUMNS)];
        }
        vec![table]
    }

    fn text(&self, fit: crate::report::table::Fit) -> String {
        if self.columns == Columns::Kafka || self.by != By::Partition {
            return self.tables()[0].render(fit);
        }
        let mut table = Table::of(&self.partitions);
        if self
            .partitions
            .iter()
            .all(|r| r.local_log_start_offset == r.log_start_offset)
        {
            table = table.without("local_log_start_offset");
        }
        table.render(fit)
    }
}

impl crate::cmd::CommandEntry for LagArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[
        (
            "klog lag DIR",
            "every group's lag against the high watermark",
        ),
        (
            "klog lag --columns kafka --group billing DIR",
            "kafka-consumer-groups --describe's columns",
        ),
        (
            "klog lag --fail-above 1000 --format csv DIR",
            "CSV; exit 1 when a partition lags more than 1000",
        ),
    ];
    const SEE_ALSO: &'static [&'static str] =
        &["replay-offsets", "groups", "transactions", "brokers(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("../generate/pages/lag.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<LagReport>()]
    }
}
