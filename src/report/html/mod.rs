//! `klog report`'s renderer: a [`ReportDoc`] (or a
//! [`LayoutDoc`](kaen_log::format::annotation::LayoutDoc)) as one
//! self-contained HTML page, pictures as inline SVG (scales and colours:
//! [`svg`]).
//!
//! Every string from the data (topic, group and file names, finding
//! details, decoded values) reaches the page through [`esc`], the one
//! escape: it is text in an element or a quoted attribute value, never
//! markup. Names enter the document bounded and escaped once
//! ([`shown::Shown`]), and are written as they are. Numbers are written as
//! numbers.

pub mod content;
mod cuts;
mod divergence;
mod heatmap;
pub mod hex_view;
mod lanes;
mod marks;
mod overview;
pub mod page;
pub mod shown;
pub mod svg;
mod timeline;

use std::fmt::Write;

pub use content::ReportDoc;

/// Text from the data, for HTML text and quoted attribute values alike:
/// control and format characters as text shows them
/// (`kaen_log::format::escape::escape_cell`: `\x1b`, `\u{202e}`), then `&`, `<`,
/// `>`, `"` and `'` as character references.
pub fn esc(s: &str) -> String {
    entities(&kaen_log::format::escape::escape_cell(s))
}

/// [`esc`] for text already shown as text shows data (the decoded values
/// of `dump-segment --layout`, escaped as they were made): its backslashes
/// are kept (`kaen_log::format::escape::escape_lines`), then the same character
/// references.
pub fn esc_shown(s: &str) -> String {
    entities(&kaen_log::format::escape::escape_lines(s))
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

/// Width of a timeline or replica figure, in pixels: a 1400-pixel
/// window's page (it shrinks with a narrower one).
const WIDTH: f64 = 1340.0;
/// Where the offset strips start (the lanes' labels to their left) and end
/// (room for the flags of a cluster of marks at the log end).
const STRIP_X0: f64 = 176.0;
const STRIP_X1: f64 = WIDTH - 40.0;

/// The label `text` at the start of the block of offsets `from..to` on
/// `sc`, baseline at `y`, when the block is wider than `min_width` pixels.
fn block_label(
    b: &mut String,
    sc: &svg::Scale,
    from: i64,
    to: i64,
    min_width: f64,
    y: usize,
    text: impl std::fmt::Display,
) {
    if sc.x(to) - sc.x(from) > min_width {
        let _ = write!(
            b,
            "<text x=\"{:.1}\" y=\"{y}\">{text}</text>",
            sc.x(from) + 3.0
        );
    }
}

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
                kaen_log::format::time::format_iso_ms(ms)
            ),
            None => " &middot; no --now-ms: offset expiry and hanging transactions not judged"
                .to_string(),
        }
    );
    overview::restart_section(&mut b, doc);
    overview::verdict_section(&mut b, doc, verdict);
    timeline::timeline_section(&mut b, doc);
    heatmap::lag_section(&mut b, doc);
    divergence::replica_section(&mut b, doc);
    if !doc.notes.is_empty() {
        b.push_str("<section id=\"notes\"><h2>Notes</h2><ul>");
        for n in &doc.notes {
            let _ = write!(b, "<li>{}</li>", esc(n));
        }
        b.push_str("</ul></section>\n");
    }
    let mut nav = Vec::new();
    if !doc.restarts.is_empty() || doc.cluster.is_some() {
        nav.push(("restart", "Restart"));
    }
    nav.extend([
        ("verdict", "Verdict"),
        ("timeline", "Timeline"),
        ("lag", "Lag"),
    ]);
    if doc.cluster.is_some() {
        nav.push(("replicas", "Replicas"));
    }
    page::page(&format!("klog report: {}", verdict.name()), &nav, &b)
}

#[cfg(test)]
mod tests {
    use super::content::PartitionView;
    use super::lanes::{partition_figure, PartitionRow};
    use super::*;

    fn partition() -> PartitionView {
        use kaen_log::cluster::broker_summary::{PartitionSummary, SegmentSummary};
        PartitionView {
            node: Some(1),
            dir: content::Shown::new("d"),
            summary: PartitionSummary {
                topic: "orders".into(),
                partition: 0,
                topic_id: None,
                log_start_offset: 0,
                local_log_start_offset: None,
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
            damage: vec![content::DamageMark {
                file: "d/orders-0/00000000000000000000.log".into(),
                position: 950,
                offset: Some(15),
                kind: "crc_mismatch",
            }],
            recovery: Some(content::RecoveryCut {
                file: "d/orders-0/00000000000000000000.log".into(),
                position: 950,
                bytes: 3050,
                deleted_segments: vec!["d/orders-0/00000000000000000090.log".into()],
                lost: Some((15, 99)),
            }),
            salvage_lost: Some(vec![(15, Some(19))]),
        }
    }

    /// Offsets 0..100 on the strip's pixels.
    fn x(offset: f64) -> String {
        format!("{:.1}", STRIP_X0 + offset * (STRIP_X1 - STRIP_X0) / 100.0)
    }

    fn figure(views: &[PartitionView]) -> String {
        let refs: Vec<&PartitionView> = views.iter().collect();
        let mut b = String::new();
        partition_figure(&mut b, &PartitionRow::of(&refs));
        b
    }

    #[test]
    fn a_partition_maps_onto_its_strip_by_the_offset_scale() {
        let b = figure(&[partition()]);
        let w = |from: f64, to: f64| format!("{:.1}", (to - from) * (STRIP_X1 - STRIP_X0) / 100.0);
        // Segments: 0..90 and 90..100.
        for (from, to) in [(0.0, 90.0), (90.0, 100.0)] {
            assert!(b.contains(&format!(
                "x=\"{}\" y=\"12\" width=\"{}\" height=\"20\" data-base-offset=\"{from}\"",
                x(from),
                w(from, to)
            )));
        }
        // The marks, each at its offset.
        for (class, o) in [
            ("m-log-start", 0.0),
            ("m-recovery-point", 50.0),
            ("m-high-watermark", 80.0),
            ("m-last-stable", 60.0),
            ("m-log-end", 100.0),
        ] {
            assert!(
                b.contains(&format!("class=\"mark {class}\" data-offset=\"{o}\""))
                    && b.contains(&format!("x1=\"{0}\" x2=\"{0}\" y1=\"10\"", x(o))),
                "{class}"
            );
        }
        // The damage mark at its batch's offset, the aborted transaction
        // through its marker (20..=24 is 5 offsets wide), the open one to
        // the log end, recovery's drop 15..=99 and salvage's loss 15..=19.
        assert!(b.contains(&format!("class=\"damage\" d=\"M{},14", x(15.0))));
        for (class, from, to, y) in [
            ("txn txn-aborted", 20.0, 25.0, 32),
            ("txn txn-open", 60.0, 100.0, 32),
            ("kafka-drops", 15.0, 100.0, 44),
            ("salvage-loses", 15.0, 20.0, 56),
        ] {
            assert!(
                b.contains(&format!(
                    "class=\"{class}\" x=\"{}\" width=\"{}\" y=\"{y}\"",
                    x(from),
                    w(from, to)
                )),
                "{class}: {b}"
            );
        }
        // An axis of round offsets, three rows below the segments: the
        // lane is 68 pixels high, under a 22-pixel axis, 4 below it.
        for t in [0, 20, 40, 100] {
            assert!(b.contains(&format!(
                "class=\"tick\" x1=\"{0}\" x2=\"{0}\"",
                x(t as f64)
            )));
        }
        assert!(b.contains("height=\"94\" viewBox=\"0 0 1340 94\""));
        assert!(b.contains("data-lo=\"0\" data-hi=\"100\""));
    }

    #[test]
    fn replicas_drawn_alike_share_a_lane_on_one_axis() {
        let mut a = partition();
        (a.damage, a.recovery, a.salvage_lost) = (Vec::new(), None, None);
        let mut c = a.clone();
        c.node = Some(3);
        c.summary.log_end_offset = 120;
        let mut b2 = a.clone();
        b2.node = Some(2);
        let b = figure(&[a, b2, c]);
        assert!(b.contains("data-replicas=\"3\" data-lanes=\"2\""));
        assert!(b.contains(">brokers 1, 2 identical</text>"));
        assert!(b.contains(">broker 3</text>"));
        // One axis, 0..120, for both lanes: the segment at 90 at one x.
        let x90 = format!("{:.1}", STRIP_X0 + 90.0 * (STRIP_X1 - STRIP_X0) / 120.0);
        assert_eq!(
            b.matches(&format!("x=\"{x90}\" y=\"12\"")).count(),
            2,
            "{b}"
        );
    }

    #[test]
    fn names_in_a_figure_are_text() {
        let mut p = partition();
        p.summary.topic = "<script>alert(1)</script>".into();
        let b = figure(&[p]);
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
