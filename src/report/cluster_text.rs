//! The text of `klog cluster` beside its tables: how each broker went
//! down and what its summary found, what a restart as they are cuts, and
//! the totals line, from the merged verdict
//! ([`kaen_log::cluster::merge::ClusterReport`]).

use kaen_log::cluster::merge::{self, ClusterReport, PartitionVerdict, ReplicaVerdict};
use kaen_log::log::findings::Severity;

use crate::report::plural;
use crate::report::table::escape_cell;

/// What the restart cuts, a line per truncating replica whose directory was
/// read (and per eligible leader when the leader is undecided), the first
/// records by key and offset; empty when nothing is cut.
pub fn losses_text(r: &ClusterReport) -> String {
    let mut out = String::new();
    let mut line = |p: &PartitionVerdict, leader: Option<i32>, x: &ReplicaVerdict| {
        let Some(l) = &x.lost else {
            return;
        };
        let keys: Vec<String> = l
            .records
            .iter()
            .take(8)
            .map(|k| {
                let key = k.key.as_deref().map_or("null".into(), escape_cell);
                match k.resent_at {
                    Some(at) => format!("{key}@{} (re-sent: at {at})", k.offset),
                    None => format!("{key}@{}", k.offset),
                }
            })
            .collect();
        let more = l.count.saturating_sub(keys.len() as u64);
        out.push_str(&format!(
            "{}-{}: under leader {}, node {} truncates to {} and loses {} ({} below its high watermark, {} re-sent): {}{}\n",
            escape_cell(&p.topic),
            p.partition,
            leader.map_or("-".to_string(), |l| l.to_string()),
            x.node_id,
            x.truncation_offset.unwrap_or_default(),
            plural(l.count, "record", "records"),
            l.below_high_watermark,
            l.resent,
            keys.join(", "),
            if more > 0 { format!(" and {more} more") } else { String::new() }
        ));
    };
    for p in &r.partitions {
        for x in &p.replicas {
            line(p, p.leader, x);
        }
        for o in &p.outcomes {
            for x in &o.replicas {
                line(p, Some(o.leader), x);
            }
        }
    }
    if out.is_empty() {
        return out;
    }
    format!("If the brokers restart as they are:\n{out}\n")
}

/// The most findings listed per broker in text (JSON has them all).
const FINDINGS_SHOWN: usize = 10;

/// A broker's warnings and errors, a line each under its headline
/// (`  error not_a_partition_folder d/backup-old: …`), the first
/// [`FINDINGS_SHOWN`] of them.
pub fn findings_text(s: &merge::SourceRow) -> String {
    let mut out = String::new();
    for f in s.findings.iter().take(FINDINGS_SHOWN) {
        out.push_str(&format!(
            "  {} {} {}: {}\n",
            f.severity,
            f.kind,
            escape_cell(&f.file.to_string_lossy()),
            escape_cell(&f.detail)
        ));
    }
    if let Some(more) = s
        .findings
        .len()
        .checked_sub(FINDINGS_SHOWN)
        .filter(|&n| n > 0)
    {
        out.push_str(&format!(
            "  and {} more (the summary's findings, and JSON's summaries[].findings, have them all)\n",
            more
        ));
    }
    out
}

/// `node 3: UNCLEAN shutdown (…)`: how a summary's broker left its directory.
pub fn shutdown_words(node: i32, state: kaen_log::log::shutdown::ShutdownState) -> String {
    use kaen_log::log::shutdown::ShutdownState;
    match state {
        ShutdownState::Unclean => format!(
            "node {node}: UNCLEAN shutdown (no .kafka_cleanshutdown): its restart recovers each partition from its \
             recovery point"
        ),
        state => format!("node {node}: {}", state.name()),
    }
}

/// `7 partitions: 1 diverged, 1 lost, 3 under_replicated, 2 ok; metadata from node 1 (next offset 23)`.
pub fn totals(r: &ClusterReport) -> String {
    let t = r.totals;
    let metadata = match &r.metadata {
        Some(m) if m.incomplete.is_empty() => format!(
            "metadata from node {} (next offset {})",
            m.node_id, m.next_offset
        ),
        Some(m) => format!(
            "metadata from node {} (next offset {}; incomplete: {}, see that summary's findings)",
            m.node_id,
            m.next_offset,
            kaen_log::metadata::image::Section::list(&m.incomplete)
        ),
        None => "no metadata image in the summaries".to_string(),
    };
    let errors = match r.errors() {
        0 => String::new(),
        n => {
            let nodes = r.error_nodes();
            format!(
                "; {} in the summaries, of {} {} (listed under each broker)",
                Severity::Error.counted(n as u64),
                if nodes.len() == 1 { "node" } else { "nodes" },
                nodes
                    .iter()
                    .map(i32::to_string)
                    .collect::<Vec<_>>()
                    .join(", ")
            )
        }
    };
    format!(
        "{}: {} diverged, {} lost, {} under_replicated, {} ok; {} of {}; {metadata}{errors}",
        plural(t.partitions as u64, "partition", "partitions"),
        t.diverged,
        t.lost,
        t.under_replicated,
        t.ok,
        plural(r.summaries.len() as u64, "summary", "summaries"),
        plural(r.nodes() as u64, "node", "nodes")
    )
}
