//! The page's first section: the verdict, the findings' counts by
//! severity and kind, and every finding with what Kafka does with it.

use std::collections::BTreeMap;
use std::fmt::Write;

use kaen_log::log::findings::Severity;

use super::content::{ReportDoc, Verdict};
use super::page::paged_table;
use super::{attr, esc, opt};

/// The verdict, the counts by severity and kind, and every finding.
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
