//! A lane's damage, and what a restarting broker's recovery and a salvage
//! would do to it, in words under its partition's figure.

use std::fmt::Write;

use super::content::{PartitionView, RecoveryCut};
use super::esc;

/// A lane's damage and what recovery and salvage would do, in words,
/// each line after `who` (the lane's label, or nothing).
pub(super) fn cut_lines(b: &mut String, p: &PartitionView, who: &str) {
    for d in &p.damage {
        let _ = write!(
            b,
            "<p class=\"damage-line\">{who}damage: <code>{}</code> at position <b>{}</b> ({}{})</p>",
            esc(&d.file),
            d.position,
            d.kind,
            d.offset
                .map_or_else(String::new, |o| format!(", batch at offset {o}"))
        );
    }
    if let Some(c) = &p.recovery {
        recovery_line(b, c, who);
    }
    if let Some(lost) = &p.salvage_lost {
        salvage_line(b, lost, who);
    }
}

/// Where a restarting broker's recovery cuts the log, in words.
fn recovery_line(b: &mut String, c: &RecoveryCut, who: &str) {
    let _ = write!(
        b,
        "<p class=\"recovery\" data-file=\"{}\" data-position=\"{}\">{who}A restarting broker's recovery cuts <code>{}</code> at position <b>{}</b> ({} bytes){}{}.</p>",
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
fn salvage_line(b: &mut String, lost: &[(i64, Option<i64>)], who: &str) {
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
        "<p class=\"salvage\">{who}A salvage (<code>verify-crc --repair --salvage</code>) keeps every valid batch and loses only offsets {}.</p>",
        if ranges.is_empty() {
            "none".to_string()
        } else {
            ranges.join(", ")
        }
    );
}
