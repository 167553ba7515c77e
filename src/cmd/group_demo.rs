//! `klog group-demo`: a consumer's two numbers, run for real.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::bail;
use kaen_log::demo::{Delivery, DemoDir, Scenario, Workspace};
use kaen_log::log::{durable, Partition};
use kaen_log::offsets::coordinator::{ClassicGroup, GroupError, GroupState};
use kaen_log::offsets::{
    partition_for, tombstone_records, Replay, ReplayOptions, KAFKA_DEFAULT_PARTITIONS,
    KLOG_OFFSETS_TOPIC,
};

use crate::exit::Outcome;
use crate::report::table::render;
use crate::report::Output;

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
    #[arg(long, default_value_t = 1_700_000_000_000, value_parser = kaen_log::time::parse_instant_ms_non_negative)]
    pub now_ms: i64,
    /// Leave the data directory in place and print commands to explore it.
    #[arg(long)]
    pub keep: bool,
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
    let result = walk(args, out);
    if !args.keep {
        ws.finish(false)?;
    }
    result?;
    if args.keep {
        // What the demo leaves, file by file: a later run removes these
        // only if they are still exactly what it wrote.
        ws.finish(true)?;
        let d = args.dir.display();
        writeln!(out, "\nThe data directory is kept. Explore it with:")?;
        writeln!(out, "  klog dump-segment --records {d}/orders-0")?;
        writeln!(out, "  klog dump-segment --records {d}/__offsets-0")?;
        writeln!(out, "  klog replay-offsets --history {d}")?;
        writeln!(out, "  klog lag {d}")?;
    }
    Ok(Outcome::Clean)
}

fn heading(out: &mut Output, title: &str) -> anyhow::Result<()> {
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

fn print_polls(out: &mut Output, s: &Scenario, commit_first: bool) -> anyhow::Result<()> {
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

fn walk(args: &GroupDemoArgs, out: &mut Output) -> anyhow::Result<()> {
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
    writeln!(
        out,
        "Produced {ORDERS} orders to orders-0 through the append path (offsets {}..={}).",
        orders.start(),
        orders.end()
    )?;
    let end = orders.end() + 1;
    let a = demo.run(Delivery::AtLeastOnce, group, "orders", poll, crash, end)?;
    print_polls(out, &a, false)?;
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

    heading(out, "2. At-most-once: read -> commit -> process")?;
    durable::remove_created_tree(&args.dir.join("__offsets-0"))?;
    writeln!(out, "Same orders, a fresh offsets log, the same crash.")?;
    let b = demo.run(Delivery::AtMostOnce, group, "orders", poll, crash, end)?;
    print_polls(out, &b, true)?;
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
    // The crash comes after processing a record and before the next commit,
    // so it always falls inside one poll.
    if window + lost_window != poll as i64 {
        bail!("self-check failed: windows {window} + {lost_window} do not add up to the poll size {poll}");
    }
    writeln!(out, "The two windows add up to the poll size ({window} + {lost_window} = {poll}): the crash fell inside one poll.")?;

    heading(out, "3. Two partitions side by side")?;
    let orders_end = Partition::open(&args.dir.join("orders-0"))?.log_end_offset()?;
    let offsets_end = Partition::open(&args.dir.join("__offsets-0"))?.log_end_offset()?;
    writeln!(out, "  orders-0     cleanup.policy=delete   log end offset {orders_end:>2}  the orders themselves")?;
    writeln!(out, "  __offsets-0  cleanup.policy=compact  log end offset {offsets_end:>2}  commits: key (group, topic, partition), last value wins")?;
    writeln!(
        out,
        "Kafka keeps commits in __consumer_offsets: {KAFKA_DEFAULT_PARTITIONS} partitions, replication factor 3, and group {group} \
         lives in partition abs(hashCode(\"{group}\")) % {KAFKA_DEFAULT_PARTITIONS} = {}.",
        partition_for(group, KAFKA_DEFAULT_PARTITIONS)
    )?;
    writeln!(out, "Here it is one partition and no replica: a lost disk loses every group's committed offsets.")?;

    heading(out, "4. Three groups on one log")?;
    for (g, offset) in [(group, 7u64), ("courier", 4), ("analytics", 0)] {
        let at = demo.commit(g, "orders", 0, offset)?;
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
    let rows: Vec<Vec<String>> = replay
        .commits()
        .map(|(g, t, p, c)| vec![g.into(), t.into(), p.to_string(), c.offset.to_string()])
        .collect();
    for line in render(&["GROUP", "TOPIC", "PARTITION", "OFFSET"], &rows).lines() {
        writeln!(out, "  {line}")?;
    }

    heading(out, "5. Deleting is appending: a tombstone")?;
    let before = replay.live_keys();
    let end_before = Partition::open(&args.dir.join("__offsets-0"))?.log_end_offset()?;
    let (keys, records): (Vec<_>, Vec<_>) =
        tombstone_records(&replay, "analytics", None, None, args.now_ms)
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

    heading(out, "6. Generation fencing with one i32")?;
    fencing(args, &demo, out)?;
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

fn fencing(args: &GroupDemoArgs, demo: &DemoDir, out: &mut Output) -> anyhow::Result<()> {
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
    let cases = [
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
    let mut rows = Vec::new();
    for (who, state, member, generation) in cases {
        let g = ClassicGroup {
            state,
            ..stable.clone()
        };
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
        if state == GroupState::PreparingRebalance {
            let prev = g.kafka_validate_commit(member, generation - 1);
            if prev != g.validate_commit(member, generation - 1) {
                kafka.push(format!(
                    "also {} for generation {}",
                    outcome(prev),
                    generation - 1
                ));
            }
        }
        rows.push(vec![
            who.to_string(),
            format!("{member}/{generation}"),
            outcome(commit),
            outcome(fetch),
            if kafka.is_empty() {
                "same".into()
            } else {
                kafka.join("; ")
            },
        ]);
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
    Ok(())
}
