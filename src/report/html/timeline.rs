//! Per partition, its segments on an offset strip with the marks
//! (log start, recovery point, high watermark, last stable offset),
//! transactions, damage, and what recovery and salvage would do; and the
//! per-topic totals.

use std::collections::BTreeMap;
use std::fmt::Write;

use kaen_log::cluster::broker_summary::PartitionSummary;

use super::content::{PartitionView, RecoveryCut, ReportDoc};
use super::page::paged_table;
use super::svg::Scale;
use super::{attr, block_label, esc, opt, LEFT, RIGHT, WIDTH};

/// The partitions whose timelines are drawn: all of them up to the
/// detail limit, else the most telling ones (damage, then open and
/// aborted transactions), in name order within each kind.
fn drawn(doc: &ReportDoc) -> Vec<&PartitionView> {
    if doc.partitions.len() <= doc.detail_limit {
        return doc.partitions.iter().collect();
    }
    let mut ranked: Vec<(std::cmp::Reverse<u8>, usize)> = doc
        .partitions
        .iter()
        .enumerate()
        .filter(|(_, p)| p.telling() > 0)
        .map(|(i, p)| (std::cmp::Reverse(p.telling()), i))
        .collect();
    ranked.sort();
    ranked.truncate(doc.detail_limit);
    let mut keep: Vec<usize> = ranked.into_iter().map(|(_, i)| i).collect();
    keep.sort_unstable();
    keep.into_iter().map(|i| &doc.partitions[i]).collect()
}

/// Per partition: its segments on an offset strip, the marks, the
/// transactions, the damage, and what recovery and salvage would do.
pub(super) fn timeline_section(b: &mut String, doc: &ReportDoc) {
    b.push_str("<section id=\"timeline\"><h2>Segment timeline</h2>\n");
    b.push_str(
        "<p class=\"muted\">Offsets run left to right (linear in each partition's range). \
         Grey blocks: segments; lines: log start, recovery point, high watermark, last stable offset, log end; \
         amber: open transactions, brown: aborted ones; red marks: damage; \
         red band: what a restarting broker's recovery drops, crimson: what a salvage would lose instead.</p>\n",
    );
    let shown = drawn(doc);
    if shown.len() < doc.partitions.len() {
        let _ = writeln!(
            b,
            "<p class=\"aggregate\" data-drawn=\"{}\" data-partitions=\"{}\">{} partitions: timelines are drawn for the {} with damage or transactions (at most {}); every partition is in the tables below.</p>",
            shown.len(),
            doc.partitions.len(),
            doc.partitions.len(),
            shown.len(),
            doc.detail_limit
        );
    }
    for p in &shown {
        partition_figure(b, p);
    }
    if doc.partitions.len() > doc.detail_limit {
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
    b.push_str("<h3>Every partition</h3>\n");
    paged_table(
        b,
        "partitions",
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

/// One partition's strip.
pub fn partition_figure(b: &mut String, p: &PartitionView) {
    let sc = offset_scale(p);
    let name = esc(&p.name());
    figure_head(b, p, &sc, &name);
    let rows = Rows::of(p);
    let height = rows.height;
    let _ = write!(
        b,
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"timeline of {name}\">"
    );
    segment_blocks(b, &p.summary, &sc);
    transaction_bars(b, p, &sc, rows.txn);
    loss_bars(b, p, &sc, &rows);
    let marks = marks(p);
    mark_lines(b, &marks, &sc, height);
    damage_pointers(b, p, &sc);
    b.push_str("</svg>\n<p class=\"marks\">");
    for (class, label, v) in marks {
        if let Some(v) = v {
            let _ = write!(b, "<span class=\"v-{class}\">{label} <b>{v}</b></span>");
        }
    }
    b.push_str("</p>\n");
    for d in &p.damage {
        let _ = write!(
            b,
            "<p class=\"damage-line\">damage: <code>{}</code> at position <b>{}</b> ({}{})</p>",
            esc(&d.file),
            d.position,
            d.kind,
            d.offset
                .map_or_else(String::new, |o| format!(", batch at offset {o}"))
        );
    }
    if let Some(c) = &p.recovery {
        recovery_line(b, c);
    }
    if let Some(lost) = &p.salvage_lost {
        salvage_line(b, lost);
    }
    b.push_str("</figure>\n");
}

/// The offsets a partition's strip spans: from its first segment's base
/// offset or its log start, whichever is lower, to the highest of its log
/// end, marks and the end of what recovery drops.
fn offset_scale(p: &PartitionView) -> Scale {
    let s = &p.summary;
    let first_base = s
        .segments
        .first()
        .map_or(s.log_start_offset, |x| x.base_offset);
    let lo = first_base.min(s.log_start_offset);
    let mut hi = s.log_end_offset;
    for v in [s.high_watermark, p.last_stable, s.recovery_point]
        .into_iter()
        .flatten()
    {
        hi = hi.max(v);
    }
    if let Some(c) = &p.recovery {
        if let Some((_, last)) = c.lost {
            hi = hi.max(last.saturating_add(1));
        }
    }
    Scale::new(lo, hi, LEFT, RIGHT)
}

/// The opening `<figure>` of a partition, its offsets as data attributes,
/// and its caption (`name`, node and directory).
fn figure_head(b: &mut String, p: &PartitionView, sc: &Scale, name: &str) {
    let s = &p.summary;
    let _ = write!(
        b,
        "<figure class=\"partition\" data-topic=\"{}\" data-partition=\"{}\" data-node=\"{}\" data-log-start=\"{}\" data-log-end=\"{}\" \
         data-high-watermark=\"{}\" data-last-stable=\"{}\" data-recovery-point=\"{}\" data-lo=\"{}\" data-hi=\"{}\">\
         <figcaption><b>{name}</b>{}</figcaption>",
        esc(&s.topic),
        s.partition,
        attr(p.node),
        s.log_start_offset,
        s.log_end_offset,
        attr(s.high_watermark),
        attr(p.last_stable),
        attr(s.recovery_point),
        sc.lo,
        sc.hi,
        match p.node {
            Some(n) => format!(" <span class=\"muted\">node {n}, {}</span>", p.dir),
            None => format!(" <span class=\"muted\">{}</span>", p.dir),
        }
    );
}

/// The y of each bar row below a strip's segments, and the strip's height.
struct Rows {
    txn: Option<i32>,
    drop: Option<i32>,
    salvage: Option<i32>,
    height: i32,
}

impl Rows {
    /// The rows of `p`'s strip.
    fn of(p: &PartitionView) -> Self {
        // Rows below the segments, only those with something to draw.
        let mut y = 48;
        let mut row = |used: bool| {
            used.then(|| {
                y += 14;
                y - 14
            })
        };
        let txn = row(!p.aborted.is_empty() || !p.open_txns.is_empty());
        let drop = row(p.recovery.as_ref().is_some_and(|c| c.lost.is_some()));
        let salvage = row(p.salvage_lost.as_ref().is_some_and(|l| !l.is_empty()));
        Rows {
            txn,
            drop,
            salvage,
            height: y + 4,
        }
    }
}

/// The segments as blocks (labelled with their base offset where wide
/// enough), after the offsets below the log start.
fn segment_blocks(b: &mut String, s: &PartitionSummary, sc: &Scale) {
    let lo = sc.lo;
    // Offsets below the log start: deleted by retention or a DeleteRecords.
    if s.log_start_offset > lo {
        let _ = write!(
            b,
            "<rect class=\"before-start\" x=\"{}\" y=\"18\" width=\"{}\" height=\"26\" data-tip=\"offsets {lo}..{}: below the log start\"/>",
            sc.px(lo),
            sc.width(lo, s.log_start_offset),
            s.log_start_offset
        );
    }
    for (i, seg) in s.segments.iter().enumerate() {
        let end = s
            .segments
            .get(i + 1)
            .map_or(s.log_end_offset, |n| n.base_offset)
            .max(seg.base_offset);
        let _ = write!(
            b,
            "<rect class=\"segment seg-{}\" x=\"{}\" y=\"18\" width=\"{}\" height=\"26\" data-base-offset=\"{}\" data-bytes=\"{}\" \
             data-tip=\"segment {:020}.log: offsets from {}, {} bytes\"/>",
            if i % 2 == 0 { "a" } else { "b" },
            sc.px(seg.base_offset),
            sc.width(seg.base_offset, end),
            seg.base_offset,
            seg.bytes,
            seg.base_offset,
            seg.base_offset,
            seg.bytes
        );
        block_label(b, sc, seg.base_offset, end, 40.0, 35, seg.base_offset);
    }
}

/// The aborted transactions (first offset to marker) and the open ones
/// (first offset to the log end), on row `y`.
fn transaction_bars(b: &mut String, p: &PartitionView, sc: &Scale, y: Option<i32>) {
    for (pid, first, marker) in &p.aborted {
        let _ = write!(
            b,
            "<rect class=\"txn txn-aborted\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" data-producer-id=\"{pid}\" data-first=\"{first}\" data-last=\"{marker}\" \
             data-tip=\"producer {pid}: transaction aborted, offsets {first}..={marker} (marker)\"/>",
            sc.px(*first),
            y.unwrap_or(48),
            sc.width(*first, marker.saturating_add(1))
        );
    }
    for (pid, first) in &p.open_txns {
        let _ = write!(
            b,
            "<rect class=\"txn txn-open\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" data-producer-id=\"{pid}\" data-first=\"{first}\" \
             data-tip=\"producer {pid}: transaction open from offset {first}\"/>",
            sc.px(*first),
            y.unwrap_or(48),
            sc.width(*first, p.summary.log_end_offset)
        );
    }
}

/// What a restarting broker's recovery drops and, on the row below, what
/// a salvage would lose instead.
fn loss_bars(b: &mut String, p: &PartitionView, sc: &Scale, rows: &Rows) {
    if let Some(c) = &p.recovery {
        if let Some((from, last)) = c.lost {
            let _ = write!(
                b,
                "<rect class=\"kafka-drops\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" data-from=\"{from}\" data-last=\"{last}\" \
                 data-tip=\"a restarting broker's recovery drops offsets {from}..={last}\"/>",
                sc.px(from),
                rows.drop.unwrap_or(48),
                sc.width(from, last.saturating_add(1))
            );
        }
    }
    for (from, to) in p.salvage_lost.iter().flatten() {
        let end = to.map_or(p.summary.log_end_offset, |t| t.saturating_add(1));
        let _ = write!(
            b,
            "<rect class=\"salvage-loses\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" data-from=\"{from}\" data-last=\"{}\" \
             data-tip=\"a salvage loses offsets {from}..{}\"/>",
            sc.px(*from),
            rows.salvage.unwrap_or(48),
            sc.width(*from, end),
            attr(*to),
            to.map_or_else(|| " (to the end)".to_string(), |t| format!("={t}"))
        );
    }
}

/// A partition's marks in strip order: class, label and offset (absent
/// when unknown).
type Marks = [(&'static str, &'static str, Option<i64>); 5];

/// The marks of `p`: log start, recovery point, high watermark, last
/// stable offset and log end.
fn marks(p: &PartitionView) -> Marks {
    let s = &p.summary;
    [
        ("log-start", "log start", Some(s.log_start_offset)),
        ("recovery-point", "recovery point", s.recovery_point),
        ("high-watermark", "high watermark", s.high_watermark),
        ("last-stable", "last stable offset", p.last_stable),
        ("log-end", "log end", Some(s.log_end_offset)),
    ]
}

/// Each known mark as a vertical line through a strip `height` high.
fn mark_lines(b: &mut String, marks: &Marks, sc: &Scale, height: i32) {
    for (class, label, v) in marks {
        if let Some(v) = v {
            let _ = write!(
                b,
                "<line class=\"mark m-{class}\" x1=\"{x}\" x2=\"{x}\" y1=\"12\" y2=\"{}\" data-offset=\"{v}\" data-tip=\"{label} {v}\"/>",
                height - 4,
                x = sc.px(*v)
            );
        }
    }
}

/// A red pointer above the strip at each damaged batch's offset (at the
/// strip's start when the offset is unknown).
fn damage_pointers(b: &mut String, p: &PartitionView, sc: &Scale) {
    for d in &p.damage {
        let at = d.offset.unwrap_or(sc.lo);
        let _ = write!(
            b,
            "<path class=\"damage\" d=\"M{x},18 l-6,-12 h12 z\" data-file=\"{}\" data-position=\"{}\" data-offset=\"{}\" data-kind=\"{}\" \
             data-tip=\"{}: {} at byte position {}{}\"/>",
            esc(&d.file),
            d.position,
            attr(d.offset),
            d.kind,
            esc(&d.file),
            d.kind,
            d.position,
            d.offset.map_or_else(String::new, |o| format!(", batch at offset {o}")),
            x = sc.px(at)
        );
    }
}

/// Where a restarting broker's recovery cuts the log, in words.
fn recovery_line(b: &mut String, c: &RecoveryCut) {
    let _ = write!(
        b,
        "<p class=\"recovery\" data-file=\"{}\" data-position=\"{}\">A restarting broker's recovery cuts <code>{}</code> at position <b>{}</b> ({} bytes){}{}.</p>",
        esc(&c.file),
        c.position,
        esc(&c.file),
        c.position,
        c.bytes,
        if !c.deleted_segments.is_empty() {
            format!(
                " and deletes {}",
                crate::report::plural(
                    c.deleted_segments.len() as u64,
                    "later segment",
                    "later segments"
                )
            )
        } else {
            String::new()
        },
        c.lost
            .map_or_else(String::new, |(f, l)| format!(": offsets {f}..={l} disappear"))
    );
}

/// The offset ranges a salvage would lose, in words.
fn salvage_line(b: &mut String, lost: &[(i64, Option<i64>)]) {
    let ranges: Vec<String> = lost
        .iter()
        .map(|(f, t)| match t {
            Some(t) if t == f => t.to_string(),
            Some(t) => format!("{f}..={t}"),
            None => format!("{f} and on"),
        })
        .collect();
    let _ = write!(
        b,
        "<p class=\"salvage\">A salvage (<code>verify-crc --repair --salvage</code>) keeps every valid batch and loses only offsets {}.</p>",
        if ranges.is_empty() {
            "none".to_string()
        } else {
            ranges.join(", ")
        }
    );
}
