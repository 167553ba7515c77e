//! The page's first section: the verdict, the findings' counts by
//! severity and kind, and every finding with what Kafka does with it.

use std::collections::BTreeMap;
use std::fmt::Write;

use kaen_log::log::findings::Severity;

use super::content::{ReportDoc, Verdict};
use super::page::paged_table;
use super::{attr, esc, opt};

/// The page's top: how each broker went down and what its restart
/// re-reads (crashed brokers first), then what the cluster's restart costs
/// as `cluster` judges it: the batches followers cut, the partitions lost.
pub(super) fn restart_section(b: &mut String, doc: &ReportDoc) {
    if doc.restarts.is_empty() && doc.cluster.is_none() {
        return;
    }
    let unclean = doc.restarts.iter().filter(|r| r.unclean).count();
    let _ = write!(
        b,
        "<section id=\"restart\" data-unclean=\"{unclean}\"><h2>Restart</h2><ul class=\"restarts\">"
    );
    let mut lines: Vec<_> = doc.restarts.iter().collect();
    lines.sort_by_key(|r| (!r.unclean, r.node, r.dir.clone()));
    for r in lines {
        let _ = write!(
            b,
            "<li class=\"{}\" data-node=\"{}\" data-dir=\"{}\"><span class=\"badge\">{}</span> <span class=\"mono\">{}</span>: {}</li>",
            if r.unclean { "unclean" } else { "clean" },
            attr(r.node),
            r.dir,
            if r.unclean { "crashed" } else { "clean" },
            r.dir,
            esc(&r.text)
        );
    }
    if let Some(c) = &doc.cluster {
        broker_findings(b, c);
        let cut: u64 = c
            .partitions
            .iter()
            .flat_map(|p| &p.replicas)
            .filter_map(|r| r.batches_beyond)
            .sum();
        let t = c.totals;
        let _ = write!(
            b,
            "<li class=\"election\" data-batches-cut=\"{cut}\" data-lost=\"{}\" data-diverged=\"{}\">If the brokers restart as they are: \
             {} where a follower truncates ({} cut), {} lost, {} under-replicated (see Replicas).</li>",
            t.lost,
            t.diverged,
            crate::report::plural(t.diverged as u64, "partition", "partitions"),
            crate::report::plural(cut, "batch", "batches"),
            crate::report::plural(t.lost as u64, "partition", "partitions"),
            t.under_replicated,
        );
    }
    b.push_str("</ul></section>\n");
}

/// The most findings listed on a broker's line (the verdict's table has them all).
const BROKER_FINDINGS_SHOWN: usize = 10;

/// Each broker's warnings and errors from its summary (a folder that stops
/// it from starting, damage), a line per broker under the restart lines.
fn broker_findings(b: &mut String, c: &kaen_log::cluster::merge::ClusterReport) {
    use kaen_log::format::escape::bounded;
    for s in c.summaries.iter().filter(|s| !s.findings.is_empty()) {
        let errors = s
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count();
        let _ = write!(
            b,
            "<li class=\"broker-findings {}\" data-node=\"{}\" data-errors=\"{errors}\" data-findings=\"{}\">\
             <span class=\"badge\">{}</span> node {1} (<span class=\"mono\">{}</span>):",
            if errors > 0 { "unclean" } else { "clean" },
            s.node_id,
            s.findings.len(),
            if errors > 0 { "error" } else { "warning" },
            esc(&bounded(&s.log_dir)),
        );
        for f in s.findings.iter().take(BROKER_FINDINGS_SHOWN) {
            let _ = write!(
                b,
                " {} <b>{}</b> <span class=\"mono\">{}</span>: {}",
                f.severity,
                f.kind,
                esc(&bounded(&f.file.to_string_lossy())),
                esc(&f.detail)
            );
        }
        if let Some(more) = s
            .findings
            .len()
            .checked_sub(BROKER_FINDINGS_SHOWN)
            .filter(|&n| n > 0)
        {
            let _ = write!(
                b,
                " And {more} more (every finding is in the verdict's table)."
            );
        }
        b.push_str("</li>");
    }
}

/// The verdict, the counts by severity and kind, and every finding
/// (notes of one kind in one row with their count: they are what a
/// healthy broker leaves, many times over).
pub(super) fn verdict_section(b: &mut String, doc: &ReportDoc, verdict: Verdict) {
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
    let rows = finding_rows(doc, &by_kind);
    paged_table(
        b,
        "findings",
        "findings",
        "<tr><th>file</th><th>position</th><th>byte</th><th>severity</th><th>kind</th><th>offset</th><th>detail</th><th>what Kafka does</th></tr>",
        &rows,
    );
    b.push_str("</section>\n");
}

/// The findings table's rows: each warning and error, and each kind of
/// note once with its count (`by_kind`, by severity and kind).
fn finding_rows(
    doc: &ReportDoc,
    by_kind: &BTreeMap<(std::cmp::Reverse<Severity>, &str), usize>,
) -> Vec<String> {
    let mut rows: Vec<String> = Vec::new();
    let mut notes_seen: BTreeMap<&str, usize> = BTreeMap::new();
    for v in &doc.findings {
        let f = &v.finding;
        if f.severity == Severity::Note {
            let n = by_kind
                .get(&(std::cmp::Reverse(Severity::Note), f.kind.name()))
                .copied()
                .unwrap_or(1);
            let seen = notes_seen.entry(f.kind.name()).or_default();
            *seen += 1;
            if *seen > 1 {
                continue;
            }
            if n > 1 {
                let file = f.file.display().to_string();
                rows.push(format!(
                    "<tr class=\"finding sev-note collapsed\" data-kind=\"{kind}\" data-count=\"{n}\">\
                     <td class=\"mono\">{file} and {more}</td><td class=\"num\">{pos}</td><td class=\"num\">{byte}</td><td class=\"sev\">note</td>\
                     <td>{kind} &times; {n}</td><td class=\"num\">{offs}</td><td>{detail}</td><td>{kafka}</td></tr>",
                    kind = f.kind.name(),
                    file = esc(&file),
                    more = crate::report::plural(n as u64 - 1, "other", "others"),
                    pos = f.position,
                    byte = f.byte,
                    offs = opt(f.offset),
                    detail = esc(&f.detail),
                    kafka = esc(&v.kafka),
                ));
                continue;
            }
        }
        let file = f.file.display().to_string();
        rows.push(format!(
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
        ));
    }
    rows
}
