//! `klog group-demo`: a consumer's two numbers, run for real.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use kaen_log::demo::delivery::{Delivery, DemoDir, Scenario, Workspace};
use kaen_log::log::Partition;
use kaen_log::offsets::group_coordinator::{ClassicGroup, GroupError, GroupState};
use kaen_log::offsets::{
    partition_for, tombstone_records, Replay, ReplayOptions, KAFKA_DEFAULT_PARTITIONS,
    KLOG_OFFSETS_TOPIC,
};

use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::table::render;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// A teaching walk-through of a consumer's two numbers: the position it
/// holds in memory and the committed offset on disk. Everything runs for
/// real in DIR through the append path and the replay the other commands
/// use: at-least-once and at-most-once delivery around a crash, the orders
/// log beside the offsets log, three groups on one offsets log, a tombstone,
/// and generation fencing.
///
/// DIR must be new or hold only what an earlier `group-demo --keep` left,
/// unchanged (a kept run records each file it leaves with its size; once
/// one changed, the demo refuses rather than remove data that may be
/// yours); the demo removes its own folders before and after the run
/// unless --keep.
#[derive(Debug, clap::Args)]
pub struct GroupDemoArgs {
    /// The demo's data directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// The consumer group.
    #[arg(long, default_value = "kitchen")]
    pub group: String,
    /// The consumer crashes right after processing this many records.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..20))]
    pub crash_after: u32,
    /// Records per poll.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub poll_size: u32,
    /// The time stamped on records and commits (epoch ms or ISO-8601).
    #[arg(long, default_value_t = 1_700_000_000_000, value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: i64,
    /// Leave the data directory in place and print commands to explore it.
    #[arg(long)]
    pub keep: bool,
    /// Output format. JSON is every step and figure of the run; CSV one
    /// row per poll of the two deliveries (`delivery`, then the poll's
    /// JSON fields).
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
}

/// One poll of a delivery.
#[derive(Serialize, JsonSchema)]
struct PollOut {
    /// 1 for the first.
    poll: u32,
    /// The offsets the poll returned.
    offsets: Vec<i64>,
    /// The offsets processed before the poll ended or the crash came.
    processed: Vec<i64>,
    crashed: bool,
    /// The offset committed in this poll, and the offset of the commit's
    /// record in `__offsets-0` (null: no commit).
    committed_offset: Option<u64>,
    log_offset: Option<i64>,
}

/// One delivery's run around the crash.
#[derive(Serialize, JsonSchema)]
struct DeliveryOut {
    /// `at_least_once` (read, process, commit) or `at_most_once` (read,
    /// commit, process).
    delivery: &'static str,
    polls: Vec<PollOut>,
    /// The crashed consumer's position in memory.
    position: i64,
    /// The committed offset read back from the offsets log.
    committed_offset: u64,
    /// Offsets processed twice, and never.
    duplicated: Vec<i64>,
    lost: Vec<i64>,
}

/// One of the demo's two partitions.
#[derive(Serialize, JsonSchema)]
struct PartitionOut {
    partition: &'static str,
    cleanup_policy: &'static str,
    log_end_offset: i64,
}

/// A group's commit in section 4, and where it was stored.
#[derive(Serialize, JsonSchema)]
struct CommitOut {
    group: String,
    committed_offset: u64,
    log_offset: i64,
}

/// A committed offset of the replayed table.
#[derive(Serialize, JsonSchema)]
struct ReplayedOut {
    group: String,
    topic: String,
    partition: i32,
    committed_offset: i64,
}

/// The tombstone of section 5.
#[derive(Serialize, JsonSchema)]
struct TombstoneOut {
    group: String,
    /// The topic-partitions whose keys it deletes.
    partitions: Vec<String>,
    log_offset: i64,
    live_keys_before: u64,
    live_keys_after: u64,
    log_end_offset: i64,
}

/// A request against the group's generation (section 6).
#[derive(Serialize, JsonSchema)]
struct FencingOut {
    request: &'static str,
    member: &'static str,
    generation: i32,
    /// What klog's coordinator answers a commit and a fetch (`ok` or the error).
    commit: String,
    fetch: String,
    /// Where Kafka's rule answers otherwise (null: the same).
    kafka: Option<String>,
}

/// `klog group-demo`'s document: every step and figure of the run.
#[derive(Serialize, JsonSchema, Default)]
pub struct GroupDemoReport {
    data_dir: String,
    group: String,
    poll_size: u32,
    crash_after: u32,
    /// The orders produced (offsets, both included).
    orders_first_offset: i64,
    orders_last_offset: i64,
    deliveries: Vec<DeliveryOut>,
    partitions: Vec<PartitionOut>,
    /// The group's partition of Kafka's `__consumer_offsets` (50 partitions).
    kafka_offsets_partition: i32,
    commits: Vec<CommitOut>,
    replayed: Vec<ReplayedOut>,
    tombstone: Option<TombstoneOut>,
    fencing: Vec<FencingOut>,
    /// With --keep: commands to explore what was left.
    explore: Vec<String>,
    /// The walk-through for people, as it was written.
    #[serde(skip)]
    text: String,
}

/// A CSV row: a poll after its delivery.
#[derive(Serialize, JsonSchema)]
struct PollCsv<'a> {
    delivery: &'static str,
    #[serde(flatten)]
    poll: &'a PollOut,
}

impl Report for GroupDemoReport {
    const COMMAND: &'static str = "group-demo";

    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }

    /// One row per poll of both deliveries.
    fn csv_table(&self) -> Option<Table> {
        let rows: Vec<PollCsv> = self
            .deliveries
            .iter()
            .flat_map(|d| {
                d.polls.iter().map(|poll| PollCsv {
                    delivery: d.delivery,
                    poll,
                })
            })
            .collect();
        Some(Table::flat(&rows))
    }

    fn text(&self, _fit: crate::report::table::Fit) -> String {
        self.text.clone()
    }
}

const ORDERS: usize = 20;
/// Written first into the demo's directory: only a directory carrying it
/// (and holding nothing but what the demo writes) is ever cleared.
const MARKER: &str = ".klog-group-demo";

pub fn run(args: &GroupDemoArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let ws = Workspace::prepare(
        &args.dir,
        "group-demo",
        MARKER,
        &["orders-0", "__offsets-0"],
    )?;
    let mut report = GroupDemoReport {
        data_dir: args.dir.display().to_string(),
        group: args.group.clone(),
        poll_size: args.poll_size,
        crash_after: args.crash_after,
        ..GroupDemoReport::default()
    };
    let result = walk(args, &mut report);
    if !args.keep {
        ws.finish(false)?;
    }
    result?;
    if args.keep {
        // What the demo leaves, file by file: a later run removes these
        // only if they are still exactly what it wrote.
        ws.finish(true)?;
        let d = args.dir.display();
        report.explore = vec![
            format!("klog dump-segment --records {d}/orders-0"),
            format!("klog dump-segment --records {d}/__offsets-0"),
            format!("klog replay-offsets --history {d}"),
            format!("klog lag {d}"),
        ];
        let out = &mut report.text;
        writeln!(out, "\nThe data directory is kept. Explore it with:")?;
        for c in &report.explore {
            writeln!(out, "  {c}")?;
        }
    }
    emit(&report, args.format, out)?;
    Ok(Outcome::Clean)
}

fn heading(out: &mut String, title: &str) -> anyhow::Result<()> {
    writeln!(out, "\n{title}\n{}", "-".repeat(title.chars().count()))?;
    Ok(())
}

fn list(offsets: &[i64]) -> String {
    offsets
        .iter()
        .map(i64::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn span(offsets: &[i64]) -> String {
    match (offsets.first(), offsets.last()) {
        (Some(a), Some(b)) if a != b => format!("{a}..={b}"),
        (Some(a), _) => a.to_string(),
        _ => "none".into(),
    }
}

/// The polls of `s`, as the document has them.
fn delivery_out(delivery: &'static str, s: &Scenario) -> DeliveryOut {
    DeliveryOut {
        delivery,
        polls: s
            .polls
            .iter()
            .enumerate()
            .map(|(i, p)| PollOut {
                poll: i as u32 + 1,
                offsets: p.offsets.clone(),
                processed: p.processed.clone(),
                crashed: p.crashed,
                committed_offset: p.commit.map(|(o, _)| o),
                log_offset: p.commit.map(|(_, at)| at),
            })
            .collect(),
        position: s.position,
        committed_offset: s.committed,
        duplicated: s.duplicated.clone(),
        lost: s.lost.clone(),
    }
}

fn print_polls(out: &mut String, s: &Scenario, commit_first: bool) -> anyhow::Result<()> {
    for (i, p) in s.polls.iter().enumerate() {
        let commit = p
            .commit
            .map(|(o, at)| format!("committed {o} (__offsets-0 offset {at})"));
        let processed = if p.crashed {
            format!("processed {} -- crash", list(&p.processed))
        } else {
            "processed".to_string()
        };
        let steps = match (commit_first, commit) {
            (true, Some(c)) => format!("{c}, {processed}"),
            (false, Some(c)) => format!("{processed}, {c}"),
            (_, None) => processed,
        };
        writeln!(
            out,
            "  poll {}: offsets {}: {steps}",
            i + 1,
            span(&p.offsets)
        )?;
    }
    Ok(())
}

fn walk(args: &GroupDemoArgs, report: &mut GroupDemoReport) -> anyhow::Result<()> {
    let mut text = String::new();
    let result = walk_text(args, report, &mut text);
    report.text = text;
    result
}

/// The walk-through, part by part, into `out` (the text) and `report`.
fn walk_text(
    args: &GroupDemoArgs,
    report: &mut GroupDemoReport,
    out: &mut String,
) -> anyhow::Result<()> {
    let (group, poll, crash) = (
        args.group.as_str(),
        args.poll_size as usize,
        args.crash_after as usize,
    );
    let demo = DemoDir::open(&args.dir, args.now_ms)?;
    writeln!(out, "klog group-demo: a consumer's two numbers")?;
    writeln!(
        out,
        "Data directory: {} (group {group}, polls of {poll}, crash after {crash} records)",
        args.dir.display()
    )?;

    heading(out, "1. At-least-once: read -> process -> commit")?;
    let orders = demo.produce_orders("orders", ORDERS)?;
    report.orders_first_offset = *orders.start();
    report.orders_last_offset = *orders.end();
    writeln!(
        out,
        "Produced {ORDERS} orders to orders-0 through the append path (offsets {}..={}).",
        orders.start(),
        orders.end()
    )?;
    let run = CrashRun {
        group,
        poll,
        crash,
        end: orders.end() + 1,
    };
    let window = at_least_once(&demo, &run, report, out)?;

    heading(out, "2. At-most-once: read -> commit -> process")?;
    let lost_window = at_most_once(&demo, &run, report, out)?;
    // The crash comes after processing a record and before the next commit,
    // so it always falls inside one poll.
    if window + lost_window != poll as i64 {
        bail!("self-check failed: windows {window} + {lost_window} do not add up to the poll size {poll}");
    }
    writeln!(out, "The two windows add up to the poll size ({window} + {lost_window} = {poll}): the crash fell inside one poll.")?;

    heading(out, "3. Two partitions side by side")?;
    side_by_side(args, report, out)?;

    heading(out, "4. Three groups on one log")?;
    let replay = three_groups(args, &demo, report, out)?;

    heading(out, "5. Deleting is appending: a tombstone")?;
    delete_by_tombstone(args, &demo, &replay, report, out)?;

    heading(out, "6. Generation fencing with one i32")?;
    report.fencing = fencing(args, &demo, out)?;
    Ok(())
}

/// The crash both deliveries run into: the group, the poll size, the
/// record after which the consumer crashes, and one past the last order.
struct CrashRun<'a> {
    group: &'a str,
    poll: usize,
    crash: usize,
    end: i64,
}

impl CrashRun<'_> {
    /// Consume the orders with `delivery` until the crash, then restart
    /// from the committed offset.
    fn run(&self, demo: &DemoDir, delivery: Delivery) -> anyhow::Result<Scenario> {
        Ok(demo.run(
            delivery, self.group, "orders", self.poll, self.crash, self.end,
        )?)
    }
}

/// Part 1, at-least-once (process, then commit): the restarted consumer
/// processes again what was processed since the last commit; the
/// redelivery window (position - committed), checked against the
/// duplicates seen.
fn at_least_once(
    demo: &DemoDir,
    run: &CrashRun<'_>,
    report: &mut GroupDemoReport,
    out: &mut String,
) -> anyhow::Result<i64> {
    let a = run.run(demo, Delivery::AtLeastOnce)?;
    print_polls(out, &a, false)?;
    report.deliveries.push(delivery_out("at_least_once", &a));
    let window = a.position - a.committed as i64;
    writeln!(
        out,
        "Position in memory: {} (the next record the application would process)",
        a.position
    )?;
    writeln!(
        out,
        "Committed offset on disk: {} (replayed from __offsets-0)",
        a.committed
    )?;
    writeln!(
        out,
        "Redelivery window: {} - {} = {window}",
        a.position, a.committed
    )?;
    writeln!(
        out,
        "A restarted consumer reads {} back from the offsets log and re-processes offsets [{}].",
        a.committed,
        list(&a.duplicated)
    )?;
    if a.duplicated.len() as i64 != window || !a.lost.is_empty() {
        bail!(
            "self-check failed: {} duplicates and {} lost observed, window {window}",
            a.duplicated.len(),
            a.lost.len()
        );
    }
    writeln!(
        out,
        "Nothing lost, {} duplicated: exactly the redelivery window.",
        a.duplicated.len()
    )?;
    Ok(window)
}

/// Part 2, at-most-once (commit, then process) on a fresh offsets log: the
/// restarted consumer skips what was committed but not processed; the
/// loss window (committed - position), checked against the losses seen.
fn at_most_once(
    demo: &DemoDir,
    run: &CrashRun<'_>,
    report: &mut GroupDemoReport,
    out: &mut String,
) -> anyhow::Result<i64> {
    demo.remove_offsets_log()?;
    writeln!(out, "Same orders, a fresh offsets log, the same crash.")?;
    let b = run.run(demo, Delivery::AtMostOnce)?;
    print_polls(out, &b, true)?;
    report.deliveries.push(delivery_out("at_most_once", &b));
    let lost_window = b.committed as i64 - b.position;
    writeln!(
        out,
        "Position in memory: {}; committed offset on disk: {}",
        b.position, b.committed
    )?;
    writeln!(
        out,
        "A restarted consumer starts at {}: offsets {} are never processed.",
        b.committed,
        span(&b.lost)
    )?;
    if b.lost.len() as i64 != lost_window || !b.duplicated.is_empty() {
        bail!(
            "self-check failed: {} lost and {} duplicates observed, window {lost_window}",
            b.lost.len(),
            b.duplicated.len()
        );
    }
    writeln!(
        out,
        "Lost: {} orders never processed; nothing duplicated.",
        b.lost.len()
    )?;
    Ok(lost_window)
}

/// Part 3: the orders log (cleanup.policy=delete) beside the offsets log
/// (compact), and the `__consumer_offsets` partition Kafka would keep the
/// group's commits in.
fn side_by_side(
    args: &GroupDemoArgs,
    report: &mut GroupDemoReport,
    out: &mut String,
) -> anyhow::Result<()> {
    let group = args.group.as_str();
    let orders_end = Partition::open(&args.dir.join("orders-0"))?.log_end_offset()?;
    let offsets_end = Partition::open(&args.dir.join("__offsets-0"))?.log_end_offset()?;
    report.partitions = vec![
        PartitionOut {
            partition: "orders-0",
            cleanup_policy: "delete",
            log_end_offset: orders_end,
        },
        PartitionOut {
            partition: "__offsets-0",
            cleanup_policy: "compact",
            log_end_offset: offsets_end,
        },
    ];
    report.kafka_offsets_partition = partition_for(group, KAFKA_DEFAULT_PARTITIONS);
    writeln!(out, "  orders-0     cleanup.policy=delete   log end offset {orders_end:>2}  the orders themselves")?;
    writeln!(out, "  __offsets-0  cleanup.policy=compact  log end offset {offsets_end:>2}  commits: key (group, topic, partition), last value wins")?;
    writeln!(
        out,
        "Kafka keeps commits in __consumer_offsets: {KAFKA_DEFAULT_PARTITIONS} partitions, replication factor 3, and group {group} \
         lives in partition abs(hashCode(\"{group}\")) % {KAFKA_DEFAULT_PARTITIONS} = {}.",
        partition_for(group, KAFKA_DEFAULT_PARTITIONS)
    )?;
    writeln!(out, "Here it is one partition and no replica: a lost disk loses every group's committed offsets.")?;
    Ok(())
}

/// Part 4: three groups commit to the one offsets log; the committed
/// offsets its replay gives, as a table.
fn three_groups(
    args: &GroupDemoArgs,
    demo: &DemoDir,
    report: &mut GroupDemoReport,
    out: &mut String,
) -> anyhow::Result<Replay> {
    let group = args.group.as_str();
    for (g, offset) in [(group, 7u64), ("courier", 4), ("analytics", 0)] {
        let at = demo.commit(g, "orders", 0, offset)?;
        report.commits.push(CommitOut {
            group: g.to_string(),
            committed_offset: offset,
            log_offset: at,
        });
        writeln!(
            out,
            "  {g} commits {offset}: stored at __offsets-0 offset {at}"
        )?;
    }
    let replay = replay(&args.dir)?;
    writeln!(
        out,
        "Replayed table (BTreeMap order: group, topic, partition; offset = next to read):"
    )?;
    report.replayed = replay
        .commits()
        .map(|(g, t, p, c)| ReplayedOut {
            group: g.to_string(),
            topic: t.to_string(),
            partition: p,
            committed_offset: c.offset,
        })
        .collect();
    let rows: Vec<Vec<String>> = replay
        .commits()
        .map(|(g, t, p, c)| vec![g.into(), t.into(), p.to_string(), c.offset.to_string()])
        .collect();
    for line in render(
        &["GROUP", "TOPIC", "PARTITION", "OFFSET"],
        &rows,
        crate::report::table::Fit::default(),
    )
    .lines()
    {
        writeln!(out, "  {line}")?;
    }
    Ok(replay)
}

/// Part 5: deleting a group's offsets appends a tombstone (a key with a
/// null value) per committed partition: the live keys drop, the log grows.
fn delete_by_tombstone(
    args: &GroupDemoArgs,
    demo: &DemoDir,
    replay: &Replay,
    report: &mut GroupDemoReport,
    out: &mut String,
) -> anyhow::Result<()> {
    let before = replay.live_keys();
    let end_before = Partition::open(&args.dir.join("__offsets-0"))?.log_end_offset()?;
    let (keys, records): (Vec<_>, Vec<_>) =
        tombstone_records(replay, "analytics", None, None, args.now_ms)
            .into_iter()
            .unzip();
    let at = demo
        .appender(KLOG_OFFSETS_TOPIC, 0)?
        .append(&kaen_log::format::BatchSpec::default(), &records)?;
    let after = replay_live(&args.dir)?;
    let new_end = Partition::open(&args.dir.join("__offsets-0"))?.log_end_offset()?;
    writeln!(
        out,
        "  tombstone for analytics {}: key with a null value, appended at __offsets-0 offset {}",
        keys.iter()
            .map(|(t, p)| format!("{t}-{p}"))
            .collect::<Vec<_>>()
            .join(", "),
        at.start()
    )?;
    writeln!(out, "Live keys: {before} before, {after} after; the offsets log grew by {} record (log end offset {new_end}).", new_end - end_before)?;
    report.tombstone = Some(TombstoneOut {
        group: "analytics".to_string(),
        partitions: keys.iter().map(|(t, p)| format!("{t}-{p}")).collect(),
        log_offset: *at.start(),
        live_keys_before: before as u64,
        live_keys_after: after as u64,
        log_end_offset: new_end,
    });
    Ok(())
}

fn replay(dir: &Path) -> anyhow::Result<Replay> {
    let mut r = Replay::new(ReplayOptions::default());
    r.replay_partition(&Partition::open(&dir.join("__offsets-0"))?)?;
    Ok(r)
}

fn replay_live(dir: &Path) -> anyhow::Result<usize> {
    Ok(replay(dir)?.live_keys())
}

fn outcome(r: Result<(), GroupError>) -> String {
    r.map_or_else(|e| e.to_string(), |()| "ok".to_string())
}

/// The requests group-demo puts to the group: what each is, the group's
/// state, and the member id and generation the request carries.
const FENCING_CASES: [(&str, GroupState, &str, i32); 6] = [
    (
        "current member and generation",
        GroupState::Stable,
        "member-a",
        2,
    ),
    ("ghost from generation 1", GroupState::Stable, "member-a", 1),
    ("unknown member", GroupState::Stable, "member-z", 2),
    (
        "PreparingRebalance, current generation",
        GroupState::PreparingRebalance,
        "member-a",
        2,
    ),
    (
        "CompletingRebalance",
        GroupState::CompletingRebalance,
        "member-a",
        2,
    ),
    ("Dead", GroupState::Dead, "member-a", 2),
];

/// Part 6: each of [`FENCING_CASES`] put to a stable group of two members
/// at generation 2; klog's answers beside Kafka's, as a table.
fn fencing(
    args: &GroupDemoArgs,
    demo: &DemoDir,
    out: &mut String,
) -> anyhow::Result<Vec<FencingOut>> {
    let members = vec!["member-a".to_string(), "member-b".to_string()];
    let stable = ClassicGroup {
        group: args.group.clone(),
        state: GroupState::Stable,
        generation: 2,
        members,
    };
    writeln!(
        out,
        "Group {}: state {}, generation {}, members [{}].",
        stable.group,
        stable.state,
        stable.generation,
        stable
            .members
            .iter()
            .map(|m| format!("{m:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    )?;
    writeln!(out, "Each request carries (member id, generation); the coordinator checks them before it writes a commit or answers a fetch.")?;
    let mut rows = Vec::new();
    let mut cases_out = Vec::new();
    for (who, state, member, generation) in FENCING_CASES {
        let g = ClassicGroup {
            state,
            ..stable.clone()
        };
        let case = fencing_case(args, demo, &g, who, member, generation)?;
        rows.push(vec![
            who.to_string(),
            format!("{member}/{generation}"),
            case.commit.clone(),
            case.fetch.clone(),
            case.kafka.clone().unwrap_or_else(|| "same".into()),
        ]);
        cases_out.push(case);
    }
    for line in render(
        &[
            "REQUEST",
            "MEMBER/GEN",
            "COMMIT",
            "FETCH",
            "KAFKA'S RULE WHERE IT DIFFERS",
        ],
        &rows,
        crate::report::table::Fit::default(),
    )
    .lines()
    {
        writeln!(out, "  {line}")?;
    }
    writeln!(
        out,
        "klog is stricter than Kafka in two places. A refused commit leaves the older committed offset\n\
         in place, so the cost is a wider redelivery window after a rebalance, never a lost order."
    )?;
    Ok(cases_out)
}

/// One request put to `g`: what klog's coordinator answers a commit and a
/// fetch (an accepted commit is written for real, an accepted fetch
/// replays the offsets log), and where Kafka's rule answers otherwise.
fn fencing_case(
    args: &GroupDemoArgs,
    demo: &DemoDir,
    g: &ClassicGroup,
    who: &'static str,
    member: &'static str,
    generation: i32,
) -> anyhow::Result<FencingOut> {
    let commit = g.validate_commit(member, generation);
    if commit.is_ok() {
        // An accepted commit is written for real.
        demo.commit(&g.group, "orders", 0, 7)?;
    }
    let fetch = g.validate_fetch(member, generation);
    if fetch.is_ok() {
        replay(&args.dir)?;
    }
    let (kc, kf) = (
        g.kafka_validate_commit(member, generation),
        g.kafka_validate_fetch(member, generation),
    );
    let mut kafka = Vec::new();
    if kc != commit {
        kafka.push(format!("commit {}", outcome(kc)));
    }
    if kf != fetch {
        kafka.push(format!(
            "fetch {} (fetch is allowed in every state)",
            outcome(kf)
        ));
    }
    if g.state == GroupState::PreparingRebalance {
        let prev = g.kafka_validate_commit(member, generation - 1);
        if prev != g.validate_commit(member, generation - 1) {
            kafka.push(format!(
                "also {} for generation {}",
                outcome(prev),
                generation - 1
            ));
        }
    }
    Ok(FencingOut {
        request: who,
        member,
        generation,
        commit: outcome(commit),
        fetch: outcome(fetch),
        kafka: (!kafka.is_empty()).then(|| kafka.join("; ")),
    })
}
