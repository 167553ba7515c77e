//! The text of `klog group-demo`: the walk-through, every figure taken from
//! the run's document ([`kaen_log::demo::group_run::GroupDemo`]).

use std::fmt::Write;

use kaen_log::demo::group_run::{DeliveryOut, GroupDemo, ORDERS};
use kaen_log::offsets::KAFKA_DEFAULT_PARTITIONS;

use super::eos_walkthrough::heading;
use crate::report::table::{render, Fit};
use crate::report::Table;

/// The walk-through of `run`, done in `data_dir`.
pub fn text(data_dir: &str, run: &GroupDemo) -> String {
    let mut out = String::new();
    let (group, poll, crash) = (run.group.as_str(), run.poll_size, run.crash_after);
    let _ = writeln!(out, "klog group-demo: a consumer's two numbers");
    let _ = writeln!(
        out,
        "Data directory: {data_dir} (group {group}, polls of {poll}, crash after {crash} records)"
    );
    heading(&mut out, "1. At-least-once: read -> process -> commit");
    let _ = writeln!(
        out,
        "Produced {ORDERS} orders to orders-0 through the append path (offsets {}..={}).",
        run.orders_first_offset, run.orders_last_offset
    );
    if let [least, most] = run.deliveries.as_slice() {
        let window = at_least_once(&mut out, least);
        heading(&mut out, "2. At-most-once: read -> commit -> process");
        let lost_window = at_most_once(&mut out, most);
        let _ = writeln!(out, "The two windows add up to the poll size ({window} + {lost_window} = {poll}): the crash fell inside one poll.");
    }
    heading(&mut out, "3. Two partitions side by side");
    side_by_side(&mut out, run);
    heading(&mut out, "4. Three groups on one log");
    for c in &run.commits {
        let _ = writeln!(
            out,
            "  {} commits {}: stored at __offsets-0 offset {}",
            c.group, c.committed_offset, c.log_offset
        );
    }
    let _ = writeln!(
        out,
        "Replayed table (BTreeMap order: group, topic, partition; offset = next to read):"
    );
    let replayed = Table::of(&run.replayed).header("committed_offset", "OFFSET");
    indented(&mut out, &replayed.render(Fit::default()));
    heading(&mut out, "5. Deleting is appending: a tombstone");
    if let Some(t) = &run.tombstone {
        let _ = writeln!(
            out,
            "  tombstone for {} {}: key with a null value, appended at __offsets-0 offset {}",
            t.group,
            t.partitions.join(", "),
            t.log_offset
        );
        let _ = writeln!(out, "Live keys: {} before, {} after; the offsets log grew by {} record (log end offset {}).", t.live_keys_before, t.live_keys_after, t.log_end_offset - t.log_end_offset_before, t.log_end_offset);
    }
    heading(&mut out, "6. Generation fencing with one i32");
    fencing(&mut out, run);
    out
}

/// `text`'s lines, each indented by two spaces.
fn indented(out: &mut String, text: &str) {
    for line in text.lines() {
        let _ = writeln!(out, "  {line}");
    }
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

/// A delivery's polls, one line each; at-most-once commits before it
/// processes.
fn polls(out: &mut String, d: &DeliveryOut, commit_first: bool) {
    for p in &d.polls {
        let commit = p
            .committed_offset
            .zip(p.log_offset)
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
        let _ = writeln!(
            out,
            "  poll {}: offsets {}: {steps}",
            p.poll,
            span(&p.offsets)
        );
    }
}

/// Part 1: the polls, the two numbers and the redelivery window.
fn at_least_once(out: &mut String, a: &DeliveryOut) -> i64 {
    polls(out, a, false);
    let window = a.position - a.committed_offset as i64;
    let (position, committed) = (a.position, a.committed_offset);
    lines(
        out,
        [
            format!("Position in memory: {position} (the next record the application would process)"),
            format!("Committed offset on disk: {committed} (replayed from __offsets-0)"),
            format!("Redelivery window: {position} - {committed} = {window}"),
            format!(
                "A restarted consumer reads {committed} back from the offsets log and re-processes offsets [{}].",
                list(&a.duplicated)
            ),
            format!(
                "Nothing lost, {} duplicated: exactly the redelivery window.",
                a.duplicated.len()
            ),
        ],
    );
    window
}

/// Part 2: the polls, the two numbers and the loss window.
fn at_most_once(out: &mut String, b: &DeliveryOut) -> i64 {
    let _ = writeln!(out, "Same orders, a fresh offsets log, the same crash.");
    polls(out, b, true);
    let (position, committed) = (b.position, b.committed_offset);
    lines(
        out,
        [
            format!("Position in memory: {position}; committed offset on disk: {committed}"),
            format!(
                "A restarted consumer starts at {committed}: offsets {} are never processed.",
                span(&b.lost)
            ),
            format!(
                "Lost: {} orders never processed; nothing duplicated.",
                b.lost.len()
            ),
        ],
    );
    committed as i64 - position
}

/// Each of `lines`, a line of its own.
fn lines<const N: usize>(out: &mut String, lines: [String; N]) {
    for line in lines {
        out.push_str(&line);
        out.push('\n');
    }
}

/// Part 3: the two logs and the `__consumer_offsets` partition of the group.
fn side_by_side(out: &mut String, run: &GroupDemo) {
    let end = |name: &str| {
        run.partitions
            .iter()
            .find(|p| p.partition == name)
            .map_or(0, |p| p.log_end_offset)
    };
    let (orders_end, offsets_end) = (end("orders-0"), end("__offsets-0"));
    let group = run.group.as_str();
    let _ = writeln!(out, "  orders-0     cleanup.policy=delete   log end offset {orders_end:>2}  the orders themselves");
    let _ = writeln!(out, "  __offsets-0  cleanup.policy=compact  log end offset {offsets_end:>2}  commits: key (group, topic, partition), last value wins");
    let _ = writeln!(
        out,
        "Kafka keeps commits in __consumer_offsets: {KAFKA_DEFAULT_PARTITIONS} partitions, replication factor 3, and group {group} \
         lives in partition abs(hashCode(\"{group}\")) % {KAFKA_DEFAULT_PARTITIONS} = {}.",
        run.kafka_offsets_partition
    );
    let _ = writeln!(out, "Here it is one partition and no replica: a lost disk loses every group's committed offsets.");
}

/// Part 6: the group, then each request with klog's answers beside Kafka's.
fn fencing(out: &mut String, run: &GroupDemo) {
    let g = &run.fenced_group;
    let _ = writeln!(
        out,
        "Group {}: state {}, generation {}, members [{}].",
        g.group,
        g.state,
        g.generation,
        g.members
            .iter()
            .map(|m| format!("{m:?}"))
            .collect::<Vec<_>>()
            .join(", ")
    );
    let _ = writeln!(out, "Each request carries (member id, generation); the coordinator checks them before it writes a commit or answers a fetch.");
    let rows: Vec<Vec<String>> = run
        .fencing
        .iter()
        .map(|case| {
            vec![
                case.request.to_string(),
                format!("{}/{}", case.member, case.generation),
                case.commit.clone(),
                case.fetch.clone(),
                case.kafka.clone().unwrap_or_else(|| "same".into()),
            ]
        })
        .collect();
    let table = render(
        &[
            "REQUEST",
            "MEMBER/GEN",
            "COMMIT",
            "FETCH",
            "KAFKA'S RULE WHERE IT DIFFERS",
        ],
        &rows,
        Fit::default(),
    );
    indented(out, &table);
    let _ = writeln!(
        out,
        "klog is stricter than Kafka in two places. A refused commit leaves the older committed offset\n\
         in place, so the cost is a wider redelivery window after a rebalance, never a lost order."
    );
}
