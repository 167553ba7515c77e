//! `klog report`'s renderer: a [`ReportDoc`] (or a [`LayoutDoc`]) as one
//! self-contained HTML page, pictures as inline SVG (scales and colours:
//! [`svg`]).
//!
//! Every string from the data (topic, group and file names, finding
//! details, decoded values) reaches the page through [`esc`], the one
//! escape: it is text in an element or a quoted attribute value, never
//! markup. Numbers are written as numbers.

pub mod layout;
pub mod model;
pub mod page;
pub mod svg;

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use kaen_log::findings::Severity;

pub use model::ReportDoc;
use model::{LagCell, PartitionView, Verdict};
use page::paged_table;
use svg::Scale;

/// Text from the data, for HTML text and quoted attribute values alike:
/// control and format characters as text shows them
/// (`kaen_log::escape::escape_cell`: `\x1b`, `\u{202e}`), then `&`, `<`,
/// `>`, `"` and `'` as character references.
pub fn esc(s: &str) -> String {
    entities(&kaen_log::escape::escape_cell(s))
}

/// [`esc`] for text already shown as text shows data (the decoded values
/// of `dump-segment --layout`, escaped as they were made): its backslashes
/// are kept (`kaen_log::escape::escape_lines`), then the same character
/// references.
pub fn esc_shown(s: &str) -> String {
    entities(&kaen_log::escape::escape_lines(s))
}

/// `&`, `<`, `>`, `"` and `'` as character references.
fn entities(shown: &str) -> String {
    let mut out = String::with_capacity(shown.len());
    for c in shown.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            c => out.push(c),
        }
    }
    out
}

/// An optional number, or `-`.
fn opt<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// An optional number as an attribute value (empty when absent).
fn attr<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(String::new, |v| v.to_string())
}

/// Width of a timeline strip, in pixels.
const WIDTH: f64 = 960.0;
const LEFT: f64 = 8.0;
const RIGHT: f64 = WIDTH - 8.0;

/// The report page.
pub fn render(doc: &ReportDoc) -> String {
    let mut b = String::new();
    let verdict = doc.verdict();
    let _ = writeln!(
        b,
        "<header><h1>klog report</h1><p class=\"sources\">{}{}</p></header>",
        doc.sources
            .iter()
            .map(|s| esc(s))
            .collect::<Vec<_>>()
            .join(", "),
        match doc.now_ms {
            Some(ms) => format!(
                " &middot; judged at {} (--now-ms {ms})",
                kaen_log::time::format_iso_ms(ms)
            ),
            None => " &middot; no --now-ms: offset expiry and hanging transactions not judged"
                .to_string(),
        }
    );
    verdict_section(&mut b, doc, verdict);
    timeline_section(&mut b, doc);
    lag_section(&mut b, doc);
    replica_section(&mut b, doc);
    if !doc.notes.is_empty() {
        b.push_str("<section id=\"notes\"><h2>Notes</h2><ul>");
        for n in &doc.notes {
            let _ = write!(b, "<li>{}</li>", esc(n));
        }
        b.push_str("</ul></section>\n");
    }
    let mut nav = vec![
        ("verdict", "Verdict"),
        ("timeline", "Timeline"),
        ("lag", "Lag"),
    ];
    if doc.cluster.is_some() {
        nav.push(("replicas", "Replicas"));
    }
    page::page(&format!("klog report: {}", verdict.name()), &nav, &b)
}

/// The verdict, the counts by severity and kind, and every finding.
fn verdict_section(b: &mut String, doc: &ReportDoc, verdict: Verdict) {
    let count = |s: Severity| {
        doc.findings
            .iter()
            .filter(|f| f.finding.severity == s)
            .count()
    };
    let (errors, warnings, notes) = (
        count(Severity::Error),
        count(Severity::Warning),
        count(Severity::Note),
    );
    let _ = write!(
        b,
        "<section id=\"verdict\" data-verdict=\"{}\" data-errors=\"{errors}\" data-warnings=\"{warnings}\" data-notes=\"{notes}\">\
         <h2>Verdict</h2><p class=\"verdict v-{0}\"><span class=\"badge\">{0}</span> ",
        verdict.name()
    );
    if let Some(c) = doc.checked {
        let _ = write!(
            b,
            "checked {}, {}, {}, {}; ",
            crate::report::plural(c.files, "file", "files"),
            crate::report::plural(c.batches, "batch", "batches"),
            crate::report::plural(c.records, "record", "records"),
            crate::report::plural(c.bytes, "byte", "bytes"),
        );
    }
    let _ = write!(
        b,
        "{}, {}, {}",
        crate::report::plural(errors as u64, "error", "errors"),
        crate::report::plural(warnings as u64, "warning", "warnings"),
        crate::report::plural(notes as u64, "note", "notes"),
    );
    if let Some(c) = &doc.cluster {
        let t = c.totals;
        let _ = write!(
            b,
            "; {}: {} diverged, {} lost, {} under-replicated",
            crate::report::plural(t.partitions as u64, "partition", "partitions"),
            t.diverged,
            t.lost,
            t.under_replicated
        );
    }
    b.push_str("</p>\n");
    if doc.findings.is_empty() {
        b.push_str("<p class=\"muted\">No findings.</p></section>\n");
        return;
    }
    let mut by_kind: BTreeMap<(std::cmp::Reverse<Severity>, &str), usize> = BTreeMap::new();
    for f in &doc.findings {
        *by_kind
            .entry((std::cmp::Reverse(f.finding.severity), f.finding.kind.name()))
            .or_default() += 1;
    }
    b.push_str("<table class=\"counts\"><thead><tr><th>severity</th><th>kind</th><th>findings</th></tr></thead><tbody>");
    for ((sev, kind), n) in &by_kind {
        let _ = write!(
            b,
            "<tr class=\"sev-{0}\" data-severity=\"{0}\" data-kind=\"{1}\" data-count=\"{n}\"><td class=\"sev\">{0}</td><td>{1}</td><td class=\"num\">{n}</td></tr>",
            sev.0.name(),
            kind
        );
    }
    b.push_str("</tbody></table>\n");
    let rows: Vec<String> = doc
        .findings
        .iter()
        .map(|v| {
            let f = &v.finding;
            let file = f.file.display().to_string();
            format!(
                "<tr class=\"finding sev-{sev}\" data-kind=\"{kind}\" data-file=\"{file}\" data-position=\"{pos}\" data-offset=\"{off}\">\
                 <td class=\"mono\">{file}</td><td class=\"num\">{pos}</td><td class=\"num\">{byte}</td><td class=\"sev\">{sev}</td>\
                 <td>{kind}</td><td class=\"num\">{offs}</td><td>{detail}</td><td>{kafka}</td></tr>",
                sev = f.severity.name(),
                kind = f.kind.name(),
                file = esc(&file),
                pos = f.position,
                byte = f.byte,
                off = attr(f.offset),
                offs = opt(f.offset),
                detail = esc(&f.detail),
                kafka = esc(&v.kafka),
            )
        })
        .collect();
    paged_table(
        b,
        "findings",
        "findings",
        "<tr><th>file</th><th>position</th><th>byte</th><th>severity</th><th>kind</th><th>offset</th><th>detail</th><th>what Kafka does</th></tr>",
        &rows,
    );
    b.push_str("</section>\n");
}

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
fn timeline_section(b: &mut String, doc: &ReportDoc) {
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
    let sc = Scale::new(lo, hi, LEFT, RIGHT);
    let name = esc(&p.name());
    let _ = write!(
        b,
        "<figure class=\"partition\" data-topic=\"{}\" data-partition=\"{}\" data-node=\"{}\" data-log-start=\"{}\" data-log-end=\"{}\" \
         data-high-watermark=\"{}\" data-last-stable=\"{}\" data-recovery-point=\"{}\" data-lo=\"{lo}\" data-hi=\"{}\">\
         <figcaption><b>{name}</b>{}</figcaption>",
        esc(&s.topic),
        s.partition,
        attr(p.node),
        s.log_start_offset,
        s.log_end_offset,
        attr(s.high_watermark),
        attr(p.last_stable),
        attr(s.recovery_point),
        sc.hi,
        match p.node {
            Some(n) => format!(" <span class=\"muted\">node {n}, {}</span>", esc(&p.dir)),
            None => format!(" <span class=\"muted\">{}</span>", esc(&p.dir)),
        }
    );
    // Rows below the segments, only those with something to draw.
    let mut y = 48;
    let mut row = |used: bool| {
        used.then(|| {
            y += 14;
            y - 14
        })
    };
    let txn_y = row(!p.aborted.is_empty() || !p.open_txns.is_empty());
    let drop_y = row(p.recovery.as_ref().is_some_and(|c| c.lost.is_some()));
    let salvage_y = row(p.salvage_lost.as_ref().is_some_and(|l| !l.is_empty()));
    let height = y + 4;
    let _ = write!(
        b,
        "<svg class=\"timeline\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\" role=\"img\" aria-label=\"timeline of {name}\">"
    );
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
        if sc.x(end) - sc.x(seg.base_offset) > 40.0 {
            let _ = write!(
                b,
                "<text x=\"{:.1}\" y=\"35\">{}</text>",
                sc.x(seg.base_offset) + 3.0,
                seg.base_offset
            );
        }
    }
    for (pid, first, marker) in &p.aborted {
        let _ = write!(
            b,
            "<rect class=\"txn txn-aborted\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" data-producer-id=\"{pid}\" data-first=\"{first}\" data-last=\"{marker}\" \
             data-tip=\"producer {pid}: transaction aborted, offsets {first}..={marker} (marker)\"/>",
            sc.px(*first),
            txn_y.unwrap_or(48),
            sc.width(*first, marker.saturating_add(1))
        );
    }
    for (pid, first) in &p.open_txns {
        let _ = write!(
            b,
            "<rect class=\"txn txn-open\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" data-producer-id=\"{pid}\" data-first=\"{first}\" \
             data-tip=\"producer {pid}: transaction open from offset {first}\"/>",
            sc.px(*first),
            txn_y.unwrap_or(48),
            sc.width(*first, s.log_end_offset)
        );
    }
    if let Some(c) = &p.recovery {
        if let Some((from, last)) = c.lost {
            let _ = write!(
                b,
                "<rect class=\"kafka-drops\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" data-from=\"{from}\" data-last=\"{last}\" \
                 data-tip=\"a restarting broker's recovery drops offsets {from}..={last}\"/>",
                sc.px(from),
                drop_y.unwrap_or(48),
                sc.width(from, last.saturating_add(1))
            );
        }
    }
    for (from, to) in p.salvage_lost.iter().flatten() {
        let end = to.map_or(s.log_end_offset, |t| t.saturating_add(1));
        let _ = write!(
            b,
            "<rect class=\"salvage-loses\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"10\" data-from=\"{from}\" data-last=\"{}\" \
             data-tip=\"a salvage loses offsets {from}..{}\"/>",
            sc.px(*from),
            salvage_y.unwrap_or(48),
            sc.width(*from, end),
            attr(*to),
            to.map_or_else(|| " (to the end)".to_string(), |t| format!("={t}"))
        );
    }
    let marks = [
        ("log-start", "log start", Some(s.log_start_offset)),
        ("recovery-point", "recovery point", s.recovery_point),
        ("high-watermark", "high watermark", s.high_watermark),
        ("last-stable", "last stable offset", p.last_stable),
        ("log-end", "log end", Some(s.log_end_offset)),
    ];
    for (class, label, v) in marks {
        if let Some(v) = v {
            let _ = write!(
                b,
                "<line class=\"mark m-{class}\" x1=\"{x}\" x2=\"{x}\" y1=\"12\" y2=\"{}\" data-offset=\"{v}\" data-tip=\"{label} {v}\"/>",
                height - 4,
                x = sc.px(v)
            );
        }
    }
    for d in &p.damage {
        let at = d.offset.unwrap_or(lo);
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
    if let Some(lost) = &p.salvage_lost {
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
    b.push_str("</figure>\n");
}

/// The heatmap of groups × partitions (or × topics above the detail
/// limit), and the totals per group and per topic.
fn lag_section(b: &mut String, doc: &ReportDoc) {
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
    let _ = writeln!(
        b,
        "<p class=\"legend\">Colour by lag (logarithmic, largest {max}):<span style=\"background:{}\"></span>0\
         <span style=\"background:{}\"></span>1<span style=\"background:{}\"></span>{max}<span style=\"background:{}\"></span>unknown. \
         Lag is the high watermark (else the log end) minus the committed offset; hover a cell for the offsets.</p>",
        svg::NO_LAG,
        svg::lag_colour(Some(1), max),
        svg::lag_colour(Some(max), max),
        svg::UNKNOWN
    );
    let groups: BTreeSet<&str> = cells.iter().map(|c| c.group.as_str()).collect();
    let columns: BTreeSet<(&str, i32)> = cells
        .iter()
        .map(|c| (c.topic.as_str(), c.partition))
        .collect();
    let by: BTreeMap<(&str, &str, i32), &LagCell> = cells
        .iter()
        .map(|c| ((c.group.as_str(), c.topic.as_str(), c.partition), c))
        .collect();
    let group_total = |g: &str| -> (i64, u64) {
        cells
            .iter()
            .filter(|c| c.group == g)
            .fold((0i64, 0u64), |(l, p), c| {
                (
                    l.saturating_add(c.lag.unwrap_or(0).max(0)),
                    p.saturating_add(c.pending.unwrap_or(0)),
                )
            })
    };
    if columns.len() <= doc.detail_limit {
        b.push_str("<h3>Per partition</h3>\n<table class=\"heat\" id=\"heat-partitions\"><thead><tr><th>group</th>");
        for (t, p) in &columns {
            let _ = write!(b, "<th>{}<br>{p}</th>", esc(t));
        }
        b.push_str("<th>total</th></tr></thead><tbody>");
        for g in &groups {
            let _ = write!(b, "<tr data-group=\"{0}\"><th>{0}</th>", esc(g));
            for (t, p) in &columns {
                match by.get(&(*g, *t, *p)) {
                    Some(c) => heat_cell(b, c, max),
                    None => b.push_str("<td></td>"),
                }
            }
            let (lag, pending) = group_total(g);
            let _ = write!(
                b,
                "<td class=\"total num\" data-group=\"{}\" data-lag=\"{lag}\" data-pending=\"{pending}\">{lag}</td></tr>",
                esc(g)
            );
        }
        b.push_str("</tbody></table>\n");
    } else {
        let _ = writeln!(
            b,
            "<p class=\"aggregate\">{} partitions read by groups: the heatmap is per topic (every cell is in the table below).</p>",
            columns.len()
        );
    }
    // Per topic: the sum of the positive lags of each group's partitions.
    let topics: BTreeSet<&str> = cells.iter().map(|c| c.topic.as_str()).collect();
    // (sum of the positive lags, partitions, partitions with a lag)
    let mut sums: BTreeMap<(&str, &str), (i64, usize, usize)> = BTreeMap::new();
    for c in cells {
        let e = sums
            .entry((c.group.as_str(), c.topic.as_str()))
            .or_default();
        e.0 = e.0.saturating_add(c.lag.unwrap_or(0).max(0));
        e.1 += 1;
        e.2 += usize::from(c.lag.is_some());
    }
    let topic_max = sums.values().map(|v| v.0).max().unwrap_or(0);
    b.push_str(
        "<h3>Per topic</h3>\n<table class=\"heat\" id=\"heat-topics\"><thead><tr><th>group</th>",
    );
    for t in &topics {
        let _ = write!(b, "<th>{}</th>", esc(t));
    }
    b.push_str("<th>total</th></tr></thead><tbody>");
    for g in &groups {
        let _ = write!(b, "<tr data-group=\"{0}\"><th>{0}</th>", esc(g));
        for t in &topics {
            match sums.get(&(*g, *t)) {
                Some((lag, n, known)) => {
                    let lag = (*known > 0).then_some(*lag);
                    let _ = write!(
                        b,
                        "<td class=\"cell topic-cell num\" style=\"background:{}\" data-group=\"{}\" data-topic=\"{}\" data-lag=\"{}\" data-tip=\"{} on {}: lag {} over {}\">{}</td>",
                        svg::lag_colour(lag, topic_max),
                        esc(g),
                        esc(t),
                        attr(lag),
                        esc(g),
                        esc(t),
                        opt(lag),
                        crate::report::plural(*n as u64, "partition", "partitions"),
                        opt(lag)
                    );
                }
                None => b.push_str("<td></td>"),
            }
        }
        let (lag, _) = group_total(g);
        let _ = write!(b, "<td class=\"total num\">{lag}</td></tr>");
    }
    b.push_str("<tr class=\"topic-totals\"><th>total</th>");
    let mut all = 0i64;
    for t in &topics {
        let sum: i64 = sums
            .iter()
            .filter(|((_, tt), _)| tt == t)
            .fold(0i64, |acc, (_, v)| acc.saturating_add(v.0));
        all = all.saturating_add(sum);
        let _ = write!(
            b,
            "<td class=\"total num\" data-topic=\"{}\" data-lag=\"{sum}\">{sum}</td>",
            esc(t)
        );
    }
    let _ = writeln!(b, "<td class=\"total num\">{all}</td></tr></tbody></table>");
    let rows: Vec<String> = cells
        .iter()
        .map(|c| {
            format!(
                "<tr><td>{}</td><td>{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                esc(&c.group),
                esc(&c.topic),
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
    b.push_str("<h3>Every committed offset</h3>\n");
    paged_table(
        b,
        "lag-rows",
        "lag-rows",
        "<tr><th>group</th><th>topic</th><th>partition</th><th>committed</th><th>log start</th><th>log end</th><th>high watermark</th><th>last stable</th><th>lag</th><th>pending records</th><th>status</th></tr>",
        &rows,
    );
    b.push_str("</section>\n");
}

/// One heatmap cell: the colour of its lag, the numbers on hover.
fn heat_cell(b: &mut String, c: &LagCell, max: i64) {
    let tip = format!(
        "{} {}-{}: committed {}, log end {}, high watermark {}, last stable {}, lag {}, pending records {}, {}",
        c.group,
        c.topic,
        c.partition,
        c.committed,
        opt(c.log_end),
        opt(c.high_watermark),
        opt(c.last_stable),
        opt(c.lag),
        opt(c.pending),
        c.status
    );
    let _ = write!(
        b,
        "<td class=\"cell num\" style=\"background:{}\" data-group=\"{}\" data-topic=\"{}\" data-partition=\"{}\" data-committed=\"{}\" \
         data-log-end=\"{}\" data-high-watermark=\"{}\" data-last-stable=\"{}\" data-lag=\"{}\" data-pending=\"{}\" data-status=\"{}\" data-tip=\"{}\">{}</td>",
        svg::lag_colour(c.lag, max),
        esc(&c.group),
        esc(&c.topic),
        c.partition,
        c.committed,
        attr(c.log_end),
        attr(c.high_watermark),
        attr(c.last_stable),
        attr(c.lag),
        attr(c.pending),
        c.status,
        esc(&tip),
        opt(c.lag)
    );
}

/// Per partition, each replica's leader-epoch runs side by side, where
/// they diverge and what Kafka's truncation cuts.
fn replica_section(b: &mut String, doc: &ReportDoc) {
    let Some(c) = &doc.cluster else {
        return;
    };
    let t = c.totals;
    let _ = writeln!(
        b,
        "<section id=\"replicas\"><h2>Replicas</h2><p class=\"totals\" data-partitions=\"{}\" data-ok=\"{}\" data-under-replicated=\"{}\" data-diverged=\"{}\" data-lost=\"{}\">\
         {}: {} ok, {} under-replicated, {} diverged, {} lost. Each strip is one replica's log, coloured by leader epoch; \
         a thick red line marks where a replica diverges from the leader, a dashed one where Kafka's truncation leaves its log end.</p>",
        t.partitions,
        t.ok,
        t.under_replicated,
        t.diverged,
        t.lost,
        crate::report::plural(t.partitions as u64, "partition", "partitions"),
        t.ok,
        t.under_replicated,
        t.diverged,
        t.lost
    );
    let detailed = c.partitions.len() <= doc.detail_limit;
    for p in &c.partitions {
        if !detailed && p.status == kaen_log::cluster::merge::PartitionStatus::Ok {
            continue;
        }
        let runs_of = |node: i32| {
            doc.replica_runs
                .iter()
                .find(|r| r.node == node && r.topic == p.topic && r.partition == p.partition)
        };
        let hi = p
            .replicas
            .iter()
            .filter_map(|r| r.log_end_offset)
            .chain(p.log_end_offset)
            .max()
            .unwrap_or(1);
        let lo = p
            .replicas
            .iter()
            .filter_map(|r| r.log_start_offset)
            .min()
            .unwrap_or(0)
            .min(hi);
        let sc = Scale::new(lo, hi, 120.0, RIGHT - 110.0);
        let name = format!("{}-{}", p.topic, p.partition);
        let height = 22 * p.replicas.len().max(1) + 14;
        let _ = write!(
            b,
            "<figure class=\"replicas\" data-topic=\"{}\" data-partition=\"{}\" data-status=\"{}\" data-leader=\"{}\">\
             <figcaption><b>{}</b> <span class=\"st st-{2}\">{2}</span> <span class=\"muted\">leader {}, leader epoch {}, replicas {}, ISR {}</span></figcaption>\
             <svg class=\"replica-strips\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\">",
            esc(&p.topic),
            p.partition,
            p.status.name(),
            attr(p.leader),
            esc(&name),
            opt(p.leader),
            opt(p.leader_epoch),
            p.assigned_replicas.as_ref().map_or("-".to_string(), |v| format!("{v:?}")),
            p.isr.as_ref().map_or("-".to_string(), |v| format!("{v:?}")),
        );
        for (i, r) in p.replicas.iter().enumerate() {
            let y = 4 + 22 * i;
            let _ = write!(
                b,
                "<text x=\"2\" y=\"{}\">node {} {}</text>",
                y + 14,
                r.node_id,
                r.state.name()
            );
            for run in runs_of(r.node_id).map(|x| x.runs.as_slice()).unwrap_or(&[]) {
                let _ = write!(
                    b,
                    "<rect class=\"run\" x=\"{}\" y=\"{y}\" width=\"{}\" height=\"18\" fill=\"{}\" data-node=\"{}\" data-epoch=\"{}\" data-start=\"{}\" data-end=\"{}\" \
                     data-tip=\"node {}: leader epoch {}, offsets {}..{}, {} batches\"/>",
                    sc.px(run.start_offset),
                    sc.width(run.start_offset, run.end_offset),
                    svg::epoch_colour(run.leader_epoch),
                    r.node_id,
                    run.leader_epoch,
                    run.start_offset,
                    run.end_offset,
                    r.node_id,
                    run.leader_epoch,
                    run.start_offset,
                    run.end_offset,
                    run.batches
                );
                if sc.x(run.end_offset) - sc.x(run.start_offset) > 30.0 {
                    let _ = write!(
                        b,
                        "<text x=\"{:.1}\" y=\"{}\">e{}</text>",
                        sc.x(run.start_offset) + 3.0,
                        y + 13,
                        run.leader_epoch
                    );
                }
            }
            if let Some(o) = r
                .truncation_offset
                .filter(|&o| r.log_end_offset.is_some_and(|end| o < end))
            {
                let _ = write!(
                    b,
                    "<line class=\"truncation\" x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{}\" data-node=\"{}\" data-offset=\"{o}\" data-tip=\"node {}: Kafka's truncation leaves the log end at {o}\"/>",
                    y,
                    y + 18,
                    r.node_id,
                    r.node_id,
                    x = sc.px(o)
                );
            }
            if let Some(o) = r.divergence_offset {
                let _ = write!(
                    b,
                    "<line class=\"divergence\" x1=\"{x}\" x2=\"{x}\" y1=\"{}\" y2=\"{}\" data-node=\"{}\" data-offset=\"{o}\" data-tip=\"node {}: diverges from the leader at offset {o}\"/>\
                     <text class=\"divergence-label\" x=\"{:.1}\" y=\"{}\">diverges at {o}</text>",
                    y.saturating_sub(2),
                    y + 20,
                    r.node_id,
                    r.node_id,
                    sc.x(r.log_end_offset.unwrap_or(o)) + 6.0,
                    y + 13,
                    x = sc.px(o)
                );
            }
        }
        b.push_str("</svg>\n<table class=\"replica-table\"><thead><tr><th>node</th><th>state</th><th>log start</th><th>log end</th><th>high watermark</th><th>epoch</th><th>truncate to</th><th>diverges at</th><th>batches beyond</th><th>behind by</th><th>detail</th></tr></thead><tbody>");
        for r in &p.replicas {
            let _ = write!(
                b,
                "<tr class=\"replica\" data-node=\"{}\" data-state=\"{}\" data-divergence=\"{}\" data-truncation=\"{}\" data-behind=\"{}\"><td class=\"num\">{0}</td><td>{1}</td>\
                 <td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td><td>{}</td></tr>",
                r.node_id,
                r.state.name(),
                attr(r.divergence_offset),
                attr(r.truncation_offset),
                attr(r.behind_by),
                opt(r.log_start_offset),
                opt(r.log_end_offset),
                opt(r.high_watermark),
                opt(r.leader_epoch),
                opt(r.truncation_offset),
                opt(r.divergence_offset),
                opt(r.batches_beyond),
                opt(r.behind_by),
                esc(&r.detail)
            );
        }
        b.push_str("</tbody></table>");
        if !p.detail.is_empty() {
            let _ = write!(b, "<p class=\"muted\">{}</p>", esc(&p.detail));
        }
        b.push_str("</figure>\n");
    }
    b.push_str("</section>\n");
}

#[cfg(test)]
mod tests {
    use super::*;

    fn partition() -> PartitionView {
        use kaen_log::cluster::summary::{PartitionSummary, SegmentSummary};
        PartitionView {
            node: Some(1),
            dir: "d".into(),
            summary: PartitionSummary {
                topic: "orders".into(),
                partition: 0,
                topic_id: None,
                log_start_offset: 0,
                log_end_offset: 100,
                high_watermark: Some(80),
                recovery_point: Some(50),
                cleaner_offset: None,
                leader_epoch_checkpoint: None,
                leader_epochs: Vec::new(),
                segments: vec![
                    SegmentSummary {
                        base_offset: 0,
                        bytes: 4000,
                    },
                    SegmentSummary {
                        base_offset: 90,
                        bytes: 500,
                    },
                ],
                epochs: Vec::new(),
                tail: Vec::new(),
                damage: None,
            },
            last_stable: Some(60),
            open_txns: vec![(7, 60)],
            aborted: vec![(5, 20, 24)],
            damage: vec![model::DamageMark {
                file: "d/orders-0/00000000000000000000.log".into(),
                position: 950,
                offset: Some(15),
                kind: "crc_mismatch",
            }],
            recovery: Some(model::RecoveryCut {
                file: "d/orders-0/00000000000000000000.log".into(),
                position: 950,
                bytes: 3050,
                deleted_segments: vec!["d/orders-0/00000000000000000090.log".into()],
                lost: Some((15, 99)),
            }),
            salvage_lost: Some(vec![(15, Some(19))]),
        }
    }

    /// Offsets 0..100 on pixels 8..952: 9.44 pixels per offset.
    fn x(offset: f64) -> String {
        format!("{:.1}", LEFT + offset * (RIGHT - LEFT) / 100.0)
    }

    #[test]
    fn a_partition_maps_onto_its_strip_by_the_offset_scale() {
        let mut b = String::new();
        partition_figure(&mut b, &partition());
        // Segments: 0..90 and 90..100.
        assert!(b.contains(&format!(
            "x=\"{}\" y=\"18\" width=\"{}\" height=\"26\" data-base-offset=\"0\"",
            x(0.0),
            "849.6"
        )));
        assert!(b.contains(&format!(
            "x=\"{}\" y=\"18\" width=\"{}\" height=\"26\" data-base-offset=\"90\"",
            x(90.0),
            "94.4"
        )));
        // The marks, each at its offset.
        for (class, o) in [
            ("m-log-start", 0.0),
            ("m-recovery-point", 50.0),
            ("m-high-watermark", 80.0),
            ("m-last-stable", 60.0),
            ("m-log-end", 100.0),
        ] {
            let v = o as i64;
            assert!(
                b.contains(&format!(
                    "class=\"mark {class}\" x1=\"{0}\" x2=\"{0}\"",
                    x(o)
                )) && b.contains(&format!("data-offset=\"{v}\" data-tip=")),
                "{class}"
            );
        }
        // The damage mark at its batch's offset, the aborted transaction
        // through its marker (20..=24 is 5 offsets wide), the open one to
        // the log end, recovery's drop 15..=99 and salvage's loss 15..=19.
        assert!(b.contains(&format!("class=\"damage\" d=\"M{},18", x(15.0))));
        assert!(b.contains(&format!(
            "class=\"txn txn-aborted\" x=\"{}\" y=\"48\" width=\"47.2\"",
            x(20.0)
        )));
        assert!(b.contains(&format!(
            "class=\"txn txn-open\" x=\"{}\" y=\"48\" width=\"377.6\"",
            x(60.0)
        )));
        assert!(b.contains(&format!(
            "class=\"kafka-drops\" x=\"{}\" y=\"62\" width=\"802.4\"",
            x(15.0)
        )));
        assert!(b.contains(&format!(
            "class=\"salvage-loses\" x=\"{}\" y=\"76\" width=\"47.2\"",
            x(15.0)
        )));
        // Three rows below the segments: the strip is 94 pixels high.
        assert!(b.contains("height=\"94\" viewBox=\"0 0 960 94\""));
    }

    #[test]
    fn names_in_a_figure_are_text() {
        let mut p = partition();
        p.summary.topic = "<script>alert(1)</script>".into();
        let mut b = String::new();
        partition_figure(&mut b, &p);
        assert!(!b.contains("<script>"));
        assert!(b.contains("&lt;script&gt;alert(1)&lt;/script&gt;-0"));
    }

    #[test]
    fn esc_leaves_no_markup_and_no_control_characters() {
        assert_eq!(
            esc("<script>alert(1)</script>"),
            "&lt;script&gt;alert(1)&lt;/script&gt;"
        );
        assert_eq!(esc("a\"b'c&d"), "a&quot;b&#39;c&amp;d");
        assert_eq!(esc("evil\x1b[31m\n"), "evil\\x1b[31m\\n");
        assert_eq!(esc("x\u{202e}y"), "x\\u{202e}y");
        // Text already escaped keeps its backslashes; what is left raw is escaped.
        assert_eq!(esc_shown("\"a\\\"b\"<"), "&quot;a\\&quot;b&quot;&lt;");
        assert_eq!(esc_shown("x\x1by"), "x\\x1by");
    }
}
