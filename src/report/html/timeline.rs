//! The timeline section: a figure per partition (its replicas as lanes on
//! one offset axis: [`lanes`](super::lanes)), the table of every
//! partition, and the per-topic totals; damage and cuts in words.

use std::collections::BTreeMap;
use std::fmt::Write;

use super::content::{PartitionView, ReportDoc};
use super::lanes::{partition_figure, PartitionRow};
use super::page::{folded_table, paged_table};
use super::{attr, esc, opt};

/// Every partition's row of lanes (the replicas sorted by topic,
/// partition and node).
fn partition_rows(doc: &ReportDoc) -> Vec<PartitionRow<'_>> {
    let all: Vec<&PartitionView> = doc.partitions.iter().collect();
    all.chunk_by(|a, b| {
        (&a.summary.topic, a.summary.partition) == (&b.summary.topic, b.summary.partition)
    })
    .map(PartitionRow::of)
    .collect()
}

/// The partitions whose timelines are drawn: all of them up to the
/// detail limit, else the most telling ones (damage, then open and
/// aborted transactions), in name order within each kind.
fn drawn(rows: Vec<PartitionRow<'_>>, limit: usize) -> Vec<PartitionRow<'_>> {
    if rows.len() <= limit {
        return rows;
    }
    let mut ranked: Vec<(std::cmp::Reverse<u8>, usize)> = rows
        .iter()
        .enumerate()
        .filter(|(_, r)| r.telling() > 0)
        .map(|(i, r)| (std::cmp::Reverse(r.telling()), i))
        .collect();
    ranked.sort();
    ranked.truncate(limit);
    let mut keep: Vec<bool> = vec![false; rows.len()];
    for (_, i) in ranked {
        keep[i] = true;
    }
    rows.into_iter()
        .zip(keep)
        .filter_map(|(r, k)| k.then_some(r))
        .collect()
}

/// Per partition: its segments on an offset strip, the marks, the
/// transactions, the damage, and what recovery and salvage would do.
pub(super) fn timeline_section(b: &mut String, doc: &ReportDoc) {
    b.push_str("<section id=\"timeline\"><h2>Segment timeline</h2>\n");
    b.push_str(
        "<p class=\"muted\">One row per partition, those that need attention first (damage, what recovery drops, transactions, \
         replicas that differ), its replicas stacked on one offset axis (linear in the partition's range over \
         every replica); replicas drawn alike share one lane, labelled with every broker that holds them. \
         Grey blocks: segments; lines and their flags: S log start, R recovery point, H high watermark, L last stable offset, E log end \
         (flags of marks closer than a few pixels stand side by side; hover one for all their values); \
         amber: open transactions, brown: aborted ones (at least 6 pixels wide); red marks: damage; \
         red band: what a restarting broker's recovery drops, crimson: what a salvage would lose instead.</p>\n",
    );
    let all = partition_rows(doc);
    let total = all.len();
    let mut shown = drawn(all, doc.detail_limit);
    // What needs attention first (damage, what recovery drops, transactions,
    // replicas that differ), the rest in name order.
    shown.sort_by_key(|r| std::cmp::Reverse(r.attention()));
    if shown.len() < total {
        let _ = writeln!(
            b,
            "<p class=\"aggregate\" data-drawn=\"{}\" data-partitions=\"{}\">{} partitions: timelines are drawn for the {} with damage or transactions (at most {}); every partition is in the tables below.</p>",
            shown.len(),
            total,
            total,
            shown.len(),
            doc.detail_limit
        );
    }
    for r in &shown {
        partition_figure(b, r);
    }
    if total > doc.detail_limit {
        topic_totals(b, doc);
    }
    let rows: Vec<String> = doc
        .partitions
        .iter()
        .map(|p| {
            let s = &p.summary;
            format!(
                "<tr class=\"partition-row\" data-topic=\"{t}\" data-partition=\"{part}\" data-node=\"{node}\"><td>{nodes}</td><td>{t}</td><td class=\"num\">{part}</td>\
                 <td class=\"num\">{segs}</td><td class=\"num\">{bytes}</td><td class=\"num\">{ls}</td><td class=\"num\">{le}</td>\
                 <td class=\"num\">{hw}</td><td class=\"num\">{lso}</td><td class=\"num\">{rp}</td><td class=\"num\">{open}</td><td class=\"num\">{dmg}</td></tr>",
                node = attr(p.node),
                nodes = opt(p.node),
                t = esc(&s.topic),
                part = s.partition,
                segs = s.segments.len(),
                bytes = s
                    .segments
                    .iter()
                    .fold(0u64, |acc, x| acc.saturating_add(x.bytes)),
                ls = s.log_start_offset,
                le = s.log_end_offset,
                hw = opt(s.high_watermark),
                lso = opt(p.last_stable),
                rp = opt(s.recovery_point),
                open = p.open_txns.len(),
                dmg = p.damage.len(),
            )
        })
        .collect();
    folded_table(
        b,
        &format!(
            "Every partition: {}, their offsets",
            crate::report::plural(rows.len() as u64, "replica", "replicas")
        ),
        "partitions",
        "<tr><th>node</th><th>topic</th><th>partition</th><th>segments</th><th>bytes</th><th>log start</th><th>log end</th><th>high watermark</th><th>last stable</th><th>recovery point</th><th>open txns</th><th>damage</th></tr>",
        &rows,
    );
    b.push_str("</section>\n");
}

/// Per topic (and node): partitions, bytes and offsets held.
fn topic_totals(b: &mut String, doc: &ReportDoc) {
    let mut t: BTreeMap<(Option<i32>, &str), (u64, u64, i64)> = BTreeMap::new();
    for p in &doc.partitions {
        let e = t.entry((p.node, &p.summary.topic)).or_default();
        e.0 += 1;
        e.1 =
            e.1.saturating_add(p.summary.segments.iter().map(|s| s.bytes).sum::<u64>());
        e.2 = e.2.saturating_add(
            p.summary
                .log_end_offset
                .saturating_sub(p.summary.log_start_offset),
        );
    }
    let rows: Vec<String> = t
        .iter()
        .map(|((node, topic), (n, bytes, offsets))| {
            format!(
                "<tr class=\"topic-row\" data-topic=\"{t}\"><td>{}</td><td>{t}</td><td class=\"num\">{n}</td><td class=\"num\">{bytes}</td><td class=\"num\">{offsets}</td></tr>",
                opt(*node),
                t = esc(topic)
            )
        })
        .collect();
    b.push_str("<h3>Per topic</h3>\n");
    paged_table(
        b,
        "topics",
        "topics",
        "<tr><th>node</th><th>topic</th><th>partitions</th><th>bytes</th><th>offsets held</th></tr>",
        &rows,
    );
}
