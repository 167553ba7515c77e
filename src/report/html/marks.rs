//! A lane's marks (log start, recovery point, high watermark, last stable
//! offset, log end): a line each at its offset and a lettered flag above
//! the segments. Marks closer than [`NEAR`] pixels form one cluster: their
//! flags stand side by side so that none hides another, and every line
//! and flag of a cluster tells, on hover, all the cluster's values.

use std::fmt::Write;

use super::content::PartitionView;
use super::svg::Scale;

/// A mark: class, label, letter on its flag, and offset (absent when
/// unknown).
pub type Mark = (&'static str, &'static str, char, Option<i64>);

/// The marks of `p` in strip order.
pub fn marks(p: &PartitionView) -> [Mark; 5] {
    let s = &p.summary;
    [
        ("log-start", "log start", 'S', Some(s.log_start_offset)),
        ("recovery-point", "recovery point", 'R', s.recovery_point),
        ("high-watermark", "high watermark", 'H', s.high_watermark),
        ("last-stable", "last stable offset", 'L', p.last_stable),
        ("log-end", "log end", 'E', Some(s.log_end_offset)),
    ]
}

/// Marks nearer than this many pixels share a cluster.
pub const NEAR: f64 = 12.0;
/// A flag's width and the step between flags of a cluster.
const FLAG: f64 = 12.0;
const STEP: f64 = 13.0;

/// The known marks, by x, in clusters of marks nearer than [`NEAR`]
/// pixels to the previous one.
fn clusters<'m>(marks: &'m [Mark], sc: &Scale) -> Vec<Vec<(&'m Mark, i64)>> {
    let mut known: Vec<(&Mark, i64)> = marks.iter().filter_map(|m| m.3.map(|v| (m, v))).collect();
    known.sort_by_key(|(_, v)| *v);
    let mut out: Vec<Vec<(&Mark, i64)>> = Vec::new();
    for (m, v) in known {
        match out.last_mut() {
            Some(c) if sc.x(v) - sc.x(c[c.len() - 1].1) < NEAR => c.push((m, v)),
            _ => out.push(vec![(m, v)]),
        }
    }
    out
}

/// Each mark's line (down to `height`) and flag; the flags of a cluster
/// side by side from its first mark (moved left at the strip's end), each
/// with the tip of every value in the cluster.
pub fn mark_flags(b: &mut String, marks: &[Mark], sc: &Scale, height: i32) {
    for c in clusters(marks, sc) {
        let tip: Vec<String> = c
            .iter()
            .map(|((_, label, _, _), v)| format!("{label} {v}"))
            .collect();
        let tip = tip.join(" · ");
        let k = c.len() as f64;
        let start = (sc.x(c[0].1) - FLAG / 2.0).min(sc.x1 + FLAG / 2.0 - k * STEP);
        for (i, ((class, label, letter, _), v)) in c.iter().enumerate() {
            let fx = start + i as f64 * STEP;
            let _ = write!(
                b,
                "<g class=\"mark m-{class}\" data-offset=\"{v}\" data-label=\"{label}\" data-cluster=\"{}\" data-tip=\"{tip}\">\
                 <line x1=\"{x}\" x2=\"{x}\" y1=\"10\" y2=\"{height}\"/>\
                 <rect class=\"flag\" x=\"{fx:.1}\" y=\"0\" width=\"{FLAG}\" height=\"11\"/>\
                 <text class=\"flag-letter\" x=\"{:.1}\" y=\"9\">{letter}</text></g>",
                c.len(),
                fx + FLAG / 2.0,
                x = sc.px(*v)
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_marks_cluster_and_each_tells_all_values() {
        // Offsets 0..100 on 0..1000 px: 10 px per offset.
        let sc = Scale::new(0, 100, 0.0, 1000.0);
        let marks: [Mark; 5] = [
            ("log-start", "log start", 'S', Some(0)),
            ("recovery-point", "recovery point", 'R', Some(50)),
            ("high-watermark", "high watermark", 'H', Some(100)),
            ("last-stable", "last stable offset", 'L', Some(99)),
            ("log-end", "log end", 'E', Some(100)),
        ];
        let c = clusters(&marks, &sc);
        assert_eq!(c.iter().map(Vec::len).collect::<Vec<_>>(), [1, 1, 3]);
        let mut b = String::new();
        mark_flags(&mut b, &marks, &sc, 40);
        let all = "last stable offset 99 · high watermark 100 · log end 100";
        assert_eq!(b.matches(&format!("data-tip=\"{all}\"")).count(), 3);
        // The three flags side by side, the last ending past the strip's
        // end by half a flag: 1000 + 6 - 3 × 13 = 967.
        for x in ["967.0", "980.0", "993.0"] {
            assert!(b.contains(&format!("class=\"flag\" x=\"{x}\"")), "{x}: {b}");
        }
        // The line stays at the mark's offset.
        assert!(b.contains("x1=\"990.0\" x2=\"990.0\""));
    }
}
