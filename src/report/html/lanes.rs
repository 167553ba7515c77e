//! One partition's figure: its replicas stacked as lanes on one offset
//! axis (replicas drawn alike share a lane, labelled with every broker
//! that holds them), each lane's segments, marks, transactions, damage,
//! and what recovery and salvage would do.

use std::fmt::Write;

use kaen_log::cluster::broker_summary::PartitionSummary;

use super::content::PartitionView;
use super::marks::{mark_flags, marks};
use super::svg::Scale;
use super::{attr, block_label, esc, STRIP_X0, STRIP_X1, WIDTH};

/// Replicas of one partition drawn alike, and the brokers that hold them.
pub struct Lane<'a> {
    pub nodes: Vec<Option<i32>>,
    pub view: &'a PartitionView,
}

/// One partition's lanes, in node order of their first replica.
pub struct PartitionRow<'a> {
    pub lanes: Vec<Lane<'a>>,
}

impl<'a> PartitionRow<'a> {
    /// The row of `replicas` (one partition's, in node order).
    pub fn of(replicas: &[&'a PartitionView]) -> Self {
        let mut lanes: Vec<Lane<'a>> = Vec::new();
        for v in replicas {
            match lanes.iter_mut().find(|l| l.view.drawn_alike(v)) {
                Some(l) => l.nodes.push(v.node),
                None => lanes.push(Lane {
                    nodes: vec![v.node],
                    view: v,
                }),
            }
        }
        PartitionRow { lanes }
    }

    /// Every replica of the row.
    pub fn replicas(&self) -> usize {
        self.lanes.iter().map(|l| l.nodes.len()).sum()
    }

    /// How telling its most telling replica's timeline is.
    pub fn telling(&self) -> u8 {
        self.lanes
            .iter()
            .map(|l| l.view.telling())
            .max()
            .unwrap_or(0)
    }

    /// How much it needs attention, most first: how telling its timeline
    /// is, then whether its replicas differ (more than one lane).
    pub fn attention(&self) -> (u8, bool) {
        (self.telling(), self.lanes.len() > 1)
    }
}

impl Lane<'_> {
    /// "broker 1", "brokers 1, 2, 3 identical", or "log directory" for a
    /// directory with no node id.
    fn label(&self) -> String {
        let known: Vec<String> = self.nodes.iter().flatten().map(i32::to_string).collect();
        match (known.len(), self.nodes.len()) {
            (0, 1) => "log directory".to_string(),
            (0, n) => format!("{n} log directories identical"),
            (1, 1) => format!("broker {}", known[0]),
            _ => format!("brokers {} identical", known.join(", ")),
        }
    }
}

/// What "identical" means on a lane's label, on hover.
const IDENTICAL: &str = " data-tip=\"identical as drawn: the same segments (base offsets and sizes), log start, \
                         recovery point, high watermark, last stable offset, log end and transactions (the bytes are not compared)\"";

/// Height of the axis above the lanes.
const AXIS: i32 = 22;
/// Height of a lane's flags and segments, and of each bar row below.
const LANE: i32 = 32;
const ROW: i32 = 12;
/// Space between lanes.
const GAP: i32 = 4;
/// The most characters of a partition's name in the label column (all of
/// it on hover).
const NAME_CHARS: usize = 26;

/// `s`, its first `n` characters and "…" when longer.
fn short(s: &str, n: usize) -> String {
    match s.char_indices().nth(n) {
        Some((at, _)) => format!("{}…", &s[..at]),
        None => s.to_string(),
    }
}

/// The y of each bar row below a lane's segments (relative to the lane),
/// and the lane's height.
struct Rows {
    txn: i32,
    drop: i32,
    salvage: i32,
    height: i32,
}

impl Rows {
    /// The rows of `p`'s lane, only those with something to draw.
    fn of(p: &PartitionView) -> Self {
        let mut y = LANE;
        let mut row = |used: bool| {
            y += if used { ROW } else { 0 };
            y - ROW
        };
        let txn = row(!p.aborted.is_empty() || !p.open_txns.is_empty());
        let drop = row(p.recovery.as_ref().is_some_and(|c| c.lost.is_some()));
        let salvage = row(p.salvage_lost.as_ref().is_some_and(|l| !l.is_empty()));
        Rows {
            txn,
            drop,
            salvage,
            height: y,
        }
    }
}

/// The figure of one partition: its caption, the shared axis and a lane
/// per group of replicas drawn alike, then the damage and cuts in words.
pub fn partition_figure(b: &mut String, row: &PartitionRow) {
    let Some(first) = row.lanes.first() else {
        return;
    };
    let sc = row_scale(row);
    let rows: Vec<Rows> = row.lanes.iter().map(|l| Rows::of(l.view)).collect();
    let height = AXIS + rows.iter().map(|r| r.height + GAP).sum::<i32>();
    let s = &first.view.summary;
    let name = first.view.name();
    let _ = write!(
        b,
        "<figure class=\"partition\" data-topic=\"{}\" data-partition=\"{}\" data-replicas=\"{}\" data-lanes=\"{}\">\
         <svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" \
         role=\"img\" aria-label=\"timeline of {}\" data-lo=\"{}\" data-hi=\"{}\" data-x0=\"{}\" data-x1=\"{}\">\
         <text class=\"partition-name\" x=\"4\" y=\"14\" data-tip=\"{} ({})\">{}</text>",
        esc(&s.topic),
        s.partition,
        row.replicas(),
        row.lanes.len(),
        esc(&name),
        sc.lo,
        sc.hi,
        sc.x0,
        sc.x1,
        esc(&name),
        match row.replicas() {
            1 => first.view.dir.to_string(),
            n => format!("{n} replicas"),
        },
        esc(&short(&name, NAME_CHARS)),
    );
    axis(b, &sc, AXIS, height);
    let mut y = AXIS;
    for (lane, r) in row.lanes.iter().zip(&rows) {
        lane_group(b, lane, &sc, y, r);
        y += r.height + GAP;
    }
    b.push_str("</svg>\n");
    for lane in &row.lanes {
        let who = match row.lanes.len() {
            1 => String::new(),
            _ => format!("{}: ", lane.label()),
        };
        super::cuts::cut_lines(b, lane.view, &who);
    }
    b.push_str("</figure>\n");
}

/// The offsets a partition's lanes span: from the lowest first segment's
/// base offset or log start to the highest log end, mark and end of what
/// recovery drops, over every replica.
fn row_scale(row: &PartitionRow) -> Scale {
    let (mut lo, mut hi) = (i64::MAX, i64::MIN);
    for l in &row.lanes {
        let (a, z) = span(l.view);
        lo = lo.min(a);
        hi = hi.max(z);
    }
    Scale::new(lo, hi, STRIP_X0, STRIP_X1)
}

/// The offsets one replica spans.
fn span(p: &PartitionView) -> (i64, i64) {
    let s = &p.summary;
    let first_base = s
        .segments
        .first()
        .map_or(s.log_start_offset, |x| x.base_offset);
    let mut hi = s.log_end_offset;
    for v in [s.high_watermark, p.last_stable, s.recovery_point]
        .into_iter()
        .flatten()
    {
        hi = hi.max(v);
    }
    if let Some((_, last)) = p.recovery.as_ref().and_then(|c| c.lost) {
        hi = hi.max(last.saturating_add(1));
    }
    (first_base.min(s.log_start_offset), hi)
}

/// The offset axis above the lanes (baseline at `y`), its round offsets
/// ticked and labelled, with faint grid lines down to `height`.
pub fn axis(b: &mut String, sc: &Scale, y: i32, height: i32) {
    let _ = write!(
        b,
        "<g class=\"axis\"><line class=\"axis-line\" x1=\"{:.1}\" x2=\"{:.1}\" y1=\"{y}\" y2=\"{y}\"/>",
        sc.x0, sc.x1
    );
    for t in sc.ticks() {
        let _ = write!(
            b,
            "<line class=\"grid\" x1=\"{x}\" x2=\"{x}\" y1=\"{y}\" y2=\"{height}\"/>\
             <line class=\"tick\" x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{y}\" data-offset=\"{t}\"/>\
             <text class=\"tick-label\" x=\"{x}\" y=\"{}\">{t}</text>",
            y - 5,
            y - 8,
            x = sc.px(t)
        );
    }
    b.push_str("</g>");
}

/// One lane at `y`: its label, segments, transactions, losses, marks and
/// damage.
fn lane_group(b: &mut String, lane: &Lane, sc: &Scale, y: i32, rows: &Rows) {
    let p = lane.view;
    let s = &p.summary;
    let nodes: Vec<String> = lane.nodes.iter().map(|n| attr(*n)).collect();
    let _ = write!(
        b,
        "<g class=\"lane\" transform=\"translate(0,{y})\" data-topic=\"{}\" data-partition=\"{}\" data-nodes=\"{}\" data-identical=\"{}\" \
         data-log-start=\"{}\" data-log-end=\"{}\" data-high-watermark=\"{}\" data-last-stable=\"{}\" data-recovery-point=\"{}\">\
         <text class=\"lane-label\" x=\"4\" y=\"25\"{}>{}</text>",
        esc(&s.topic),
        s.partition,
        nodes.join(" "),
        lane.nodes.len(),
        s.log_start_offset,
        s.log_end_offset,
        attr(s.high_watermark),
        attr(p.last_stable),
        attr(s.recovery_point),
        match lane.nodes.len() {
            1 => "",
            _ => IDENTICAL,
        },
        lane.label()
    );
    segment_blocks(b, s, sc);
    transaction_bars(b, p, sc, rows.txn);
    loss_bars(b, p, sc, rows);
    mark_flags(b, &marks(p), sc, rows.height);
    damage_pointers(b, p, sc);
    b.push_str("</g>");
}

/// The segments as blocks (labelled with their base offset where wide
/// enough), after the offsets below the log start.
fn segment_blocks(b: &mut String, s: &PartitionSummary, sc: &Scale) {
    let lo = s
        .segments
        .first()
        .map_or(s.log_start_offset, |x| x.base_offset);
    // Offsets below the log start: deleted by retention or a DeleteRecords.
    if s.log_start_offset > lo {
        let _ = write!(
            b,
            "<rect class=\"before-start\" x=\"{}\" y=\"12\" width=\"{}\" height=\"20\" data-tip=\"offsets {lo}..{}: below the log start\"/>",
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
            "<rect class=\"segment seg-{}\" x=\"{}\" y=\"12\" width=\"{}\" height=\"20\" data-base-offset=\"{}\" data-bytes=\"{}\" \
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
        block_label(b, sc, seg.base_offset, end, 40.0, 26, seg.base_offset);
    }
}

/// The aborted transactions (first offset to marker) and the open ones
/// (first offset to the log end), on row `y`, each at least
/// [`MIN_BAR`](super::svg::MIN_BAR) wide.
fn transaction_bars(b: &mut String, p: &PartitionView, sc: &Scale, y: i32) {
    for (pid, first, marker) in &p.aborted {
        let _ = write!(
            b,
            "<rect class=\"txn txn-aborted\" {} y=\"{y}\" height=\"9\" data-producer-id=\"{pid}\" data-first=\"{first}\" data-last=\"{marker}\" \
             data-tip=\"producer {pid}: transaction aborted, offsets {first}..={marker} (marker)\"/>",
            sc.bar(*first, marker.saturating_add(1)),
        );
    }
    for (pid, first) in &p.open_txns {
        let _ = write!(
            b,
            "<rect class=\"txn txn-open\" {} y=\"{y}\" height=\"9\" data-producer-id=\"{pid}\" data-first=\"{first}\" \
             data-tip=\"producer {pid}: transaction open from offset {first}\"/>",
            sc.bar(*first, p.summary.log_end_offset),
        );
    }
}

/// What a restarting broker's recovery drops and, on the row below, what
/// a salvage would lose instead (each at least
/// [`MIN_BAR`](super::svg::MIN_BAR) wide).
fn loss_bars(b: &mut String, p: &PartitionView, sc: &Scale, rows: &Rows) {
    if let Some((from, last)) = p.recovery.as_ref().and_then(|c| c.lost) {
        let _ = write!(
            b,
            "<rect class=\"kafka-drops\" {} y=\"{}\" height=\"9\" data-from=\"{from}\" data-last=\"{last}\" \
             data-tip=\"a restarting broker's recovery drops offsets {from}..={last}\"/>",
            sc.bar(from, last.saturating_add(1)),
            rows.drop,
        );
    }
    for (from, to) in p.salvage_lost.iter().flatten() {
        let end = to.map_or(p.summary.log_end_offset, |t| t.saturating_add(1));
        let _ = write!(
            b,
            "<rect class=\"salvage-loses\" {} y=\"{}\" height=\"9\" data-from=\"{from}\" data-last=\"{}\" \
             data-tip=\"a salvage loses offsets {from}..{}\"/>",
            sc.bar(*from, end),
            rows.salvage,
            attr(*to),
            to.map_or_else(|| " (to the end)".to_string(), |t| format!("={t}"))
        );
    }
}

/// A red pointer above the segments at each damaged batch's offset (at
/// the strip's start when the offset is unknown).
fn damage_pointers(b: &mut String, p: &PartitionView, sc: &Scale) {
    for d in &p.damage {
        let at = d.offset.unwrap_or(sc.lo);
        let _ = write!(
            b,
            "<path class=\"damage\" d=\"M{x},14 l-6,-12 h12 z\" data-file=\"{}\" data-position=\"{}\" data-offset=\"{}\" data-kind=\"{}\" \
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
