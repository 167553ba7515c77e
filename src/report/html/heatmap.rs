//! The lag heatmap: groups by partitions, coloured by lag, with per-topic
//! and per-group totals.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use super::content::{LagCell, LagSums, ReportDoc, Shown};
use super::page::folded_table;
use super::svg;
use super::{attr, esc, opt};

/// The heatmap of groups × partitions (or × topics above the detail
/// limit), and the totals per group and per topic.
pub(super) fn lag_section(b: &mut String, doc: &ReportDoc) {
    b.push_str("<section id=\"lag\"><h2>Consumer lag</h2>\n");
    let cells = &doc.lag.cells;
    if cells.is_empty() {
        let _ = writeln!(
            b,
            "<p class=\"muted\">{}</p></section>",
            esc(doc
                .lag
                .missing
                .as_deref()
                .unwrap_or("No committed offsets in these directories."))
        );
        return;
    }
    let max = cells.iter().filter_map(|c| c.lag).max().unwrap_or(0);
    legend(b, max);
    let groups: BTreeSet<&Shown> = cells.iter().map(|c| &c.group).collect();
    let columns: BTreeSet<(&Shown, i32)> = cells.iter().map(|c| (&c.topic, c.partition)).collect();
    let sums = &doc.lag.sums;
    if columns.len() <= doc.detail_limit {
        partition_heatmap(b, cells, sums, &groups, &columns, max);
    } else {
        let _ = writeln!(
            b,
            "<p class=\"aggregate\">{} partitions read by groups: the heatmap is per topic (every cell is in the table below).</p>",
            columns.len()
        );
    }
    topic_heatmap(b, cells, sums, &groups);
    lag_table(b, cells);
    b.push_str("</section>\n");
}

/// The colour scale, stated: linear from no lag to the largest lag or
/// [`LAG_FLOOR`](svg::LAG_FLOOR) records, whichever is more (the only
/// alarm red), with swatches at its quarters.
fn legend(b: &mut String, max: i64) {
    let top = max.max(svg::LAG_FLOOR);
    let _ = write!(
        b,
        "<p class=\"legend\" data-scale-max=\"{top}\">Colour by lag, linear from 0 to {top} records (the largest lag, {max}, or {}, whichever is more; \
         so small lags stay pale: red is the largest lag alone, and only when it is {} or more):<span style=\"background:{}\"></span>0",
        svg::LAG_FLOOR,
        svg::LAG_FLOOR,
        svg::NO_LAG
    );
    for q in [1, 2, 3, 4] {
        let v = top / 4 * q;
        let _ = write!(
            b,
            "<span style=\"background:{}\"></span>{v}",
            svg::lag_colour(Some(v), max)
        );
    }
    let _ = writeln!(
        b,
        "<span style=\"background:{}\"></span>unknown. \
         Lag is the high watermark (else the log end) minus the committed offset; hover a cell for the offsets.</p>",
        svg::UNKNOWN
    );
}

/// Group `g`'s total: the sum of its positive lags and of its pending
/// records.
fn group_total(sums: &LagSums, g: &Shown) -> (i64, u64) {
    sums.groups.get(g).copied().unwrap_or((0, 0))
}

/// The heatmap of groups × partitions, coloured on the scale of the
/// largest lag `max`, with each group's total.
fn partition_heatmap(
    b: &mut String,
    cells: &[LagCell],
    sums: &LagSums,
    groups: &BTreeSet<&Shown>,
    columns: &BTreeSet<(&Shown, i32)>,
    max: i64,
) {
    let by: BTreeMap<(&Shown, &Shown, i32), &LagCell> = cells
        .iter()
        .map(|c| ((&c.group, &c.topic, c.partition), c))
        .collect();
    b.push_str("<h3>Per partition</h3>\n<table class=\"heat\" id=\"heat-partitions\"><thead><tr><th>group</th>");
    for (t, p) in columns {
        let _ = write!(b, "<th>{t}<br>{p}</th>");
    }
    b.push_str("<th>total</th></tr></thead><tbody>");
    for g in groups {
        let _ = write!(b, "<tr data-group=\"{g}\"><th>{g}</th>");
        for (t, p) in columns {
            match by.get(&(*g, *t, *p)) {
                Some(c) => heat_cell(b, c, max),
                None => b.push_str("<td></td>"),
            }
        }
        let (lag, pending) = group_total(sums, g);
        let _ = write!(
            b,
            "<td class=\"total num\" data-group=\"{g}\" data-lag=\"{lag}\" data-pending=\"{pending}\">{lag}</td></tr>"
        );
    }
    b.push_str("</tbody></table>\n");
}

/// The heatmap of groups × topics, with each group's and each topic's
/// total.
fn topic_heatmap(b: &mut String, cells: &[LagCell], sums: &LagSums, groups: &BTreeSet<&Shown>) {
    // Per topic: the sum of the positive lags of each group's partitions.
    let topics: BTreeSet<&Shown> = cells.iter().map(|c| &c.topic).collect();
    let topic_max = sums
        .group_topics
        .values()
        .map(|v| v.0.unwrap_or(0))
        .max()
        .unwrap_or(0);
    b.push_str(
        "<h3>Per topic</h3>\n<table class=\"heat\" id=\"heat-topics\"><thead><tr><th>group</th>",
    );
    for t in &topics {
        let _ = write!(b, "<th>{t}</th>");
    }
    b.push_str("<th>total</th></tr></thead><tbody>");
    for g in groups {
        let _ = write!(b, "<tr data-group=\"{g}\"><th>{g}</th>");
        for t in &topics {
            match sums.group_topics.get(&((*g).clone(), (*t).clone())) {
                Some(&(lag, n)) => {
                    let _ = write!(
                        b,
                        "<td class=\"cell topic-cell num\" style=\"background:{}\" data-group=\"{g}\" data-topic=\"{t}\" data-lag=\"{}\" data-tip=\"{g} on {t}: lag {} over {}\">{}</td>",
                        svg::lag_colour(lag, topic_max),
                        attr(lag),
                        opt(lag),
                        crate::report::plural(n, "partition", "partitions"),
                        opt(lag)
                    );
                }
                None => b.push_str("<td></td>"),
            }
        }
        let (lag, _) = group_total(sums, g);
        let _ = write!(b, "<td class=\"total num\">{lag}</td></tr>");
    }
    topic_totals_row(b, &topics, sums);
}

/// The last row of the per-topic heatmap: each topic's total lag and the
/// sum of them all.
fn topic_totals_row(b: &mut String, topics: &BTreeSet<&Shown>, sums: &LagSums) {
    b.push_str("<tr class=\"topic-totals\"><th>total</th>");
    for t in topics {
        let sum = sums.topics.get(*t).copied().unwrap_or(0);
        let _ = write!(
            b,
            "<td class=\"total num\" data-topic=\"{t}\" data-lag=\"{sum}\">{sum}</td>"
        );
    }
    let _ = writeln!(
        b,
        "<td class=\"total num\">{}</td></tr></tbody></table>",
        sums.all
    );
}

/// Every committed offset, a row each, in a paged table.
fn lag_table(b: &mut String, cells: &[LagCell]) {
    let rows: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                c.group,
                c.topic,
                c.partition,
                c.committed,
                opt(c.log_start),
                opt(c.log_end),
                opt(c.high_watermark),
                opt(c.last_stable),
                opt(c.lag),
                opt(c.pending),
                c.status
            )
        })
        .collect();
    folded_table(
        b,
        &format!("Every committed offset: {} rows", rows.len()),
        "lag-rows",
        "<tr><th>group</th><th>topic</th><th>partition</th><th>committed</th><th>log start</th><th>log end</th><th>high watermark</th><th>last stable</th><th>lag</th><th>pending records</th><th>status</th></tr>",
        &rows,
    );
}

/// One heatmap cell: the colour of its lag, the numbers on hover (the
/// tip's names are already escaped; the rest is numbers and klog's words).
fn heat_cell(b: &mut String, c: &LagCell, max: i64) {
    let (g, t, p) = (&c.group, &c.topic, c.partition);
    let _ = write!(
        b,
        "<td class=\"cell num\" style=\"background:{}\" data-group=\"{g}\" data-topic=\"{t}\" data-partition=\"{p}\" data-committed=\"{}\" \
         data-log-end=\"{}\" data-high-watermark=\"{}\" data-last-stable=\"{}\" data-lag=\"{}\" data-pending=\"{}\" data-status=\"{}\" \
         data-tip=\"{g} {t}-{p}: committed {}, log end {}, high watermark {}, last stable {}, lag {}, pending records {}, {}\">{}</td>",
        svg::lag_colour(c.lag, max),
        c.committed,
        attr(c.log_end),
        attr(c.high_watermark),
        attr(c.last_stable),
        attr(c.lag),
        attr(c.pending),
        c.status,
        c.committed,
        opt(c.log_end),
        opt(c.high_watermark),
        opt(c.last_stable),
        opt(c.lag),
        opt(c.pending),
        c.status,
        opt(c.lag)
    );
}
