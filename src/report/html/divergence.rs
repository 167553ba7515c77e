//! With several brokers: each replica's leader-epoch runs side by side,
//! where they diverge, what Kafka's truncation would cut, and lost and
//! under-replicated partitions.

use std::fmt::Write;

use kaen_log::cluster::broker_summary::EpochRun;
use kaen_log::cluster::merge::{PartitionStatus, PartitionVerdict, ReplicaVerdict};

use super::content::{ReplicaRuns, ReportDoc};
use super::lanes::axis;
use super::page::folded;
use super::svg::{self, Scale};
use super::{attr, block_label, esc, opt, STRIP_X0, STRIP_X1, WIDTH};

/// Per partition, each replica's leader-epoch runs side by side, where
/// they diverge and what Kafka's truncation cuts.
pub(super) fn replica_section(b: &mut String, doc: &ReportDoc) {
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
    // What needs attention drawn; the partitions that are fine folded
    // away (above the detail limit, not drawn).
    let (ok, attention): (Vec<_>, Vec<_>) = c
        .partitions
        .iter()
        .partition(|p| p.status == PartitionStatus::Ok);
    for p in attention {
        replica_figure(b, p, &doc.replica_runs);
    }
    if !ok.is_empty() && c.partitions.len() <= doc.detail_limit {
        let summary = format!(
            "{}: each replica's leader epochs",
            crate::report::plural(ok.len() as u64, "partition ok", "partitions ok")
        );
        folded(b, &summary, |b| {
            for p in ok {
                replica_figure(b, p, &doc.replica_runs);
            }
        });
    }
    b.push_str("</section>\n");
}

/// One partition: its status and leader, a strip per replica, and the
/// replicas' table.
fn replica_figure(b: &mut String, p: &PartitionVerdict, replica_runs: &[ReplicaRuns]) {
    let runs_of = |node: i32| {
        replica_runs
            .iter()
            .find(|r| r.node == node && r.topic == p.topic && r.partition == p.partition)
    };
    let sc = replica_scale(p);
    let name = format!("{}-{}", p.topic, p.partition);
    let height = 22 + 22 * p.replicas.len().max(1) + 14;
    let _ = write!(
        b,
        "<figure class=\"replicas\" data-topic=\"{}\" data-partition=\"{}\" data-status=\"{}\" data-leader=\"{}\">\
         <figcaption><b>{}</b> <span class=\"st st-{2}\">{2}</span> <span class=\"muted\">{}, leader epoch {}, replicas {}, ISR {}</span></figcaption>\
         <svg class=\"replica-strips\" xmlns=\"http://www.w3.org/2000/svg\" width=\"{WIDTH}\" height=\"{height}\" viewBox=\"0 0 {WIDTH} {height}\">",
        esc(&p.topic),
        p.partition,
        p.status.name(),
        attr(p.leader),
        esc(&name),
        leader_caption(p),
        opt(p.leader_epoch),
        p.assigned_replicas.as_ref().map_or("-".to_string(), |v| format!("{v:?}")),
        p.isr.as_ref().map_or("-".to_string(), |v| format!("{v:?}")),
    );
    axis(b, &sc, 20, height as i32);
    for (i, r) in p.replicas.iter().enumerate() {
        let runs = runs_of(r.node_id).map(|x| x.runs.as_slice()).unwrap_or(&[]);
        replica_strip(b, r, runs, &sc, 26 + 22 * i);
    }
    b.push_str("</svg>\n<table class=\"replica-table\"><thead><tr><th>node</th><th>state</th><th>log start</th><th>log end</th><th>high watermark</th><th>epoch</th><th>truncate to</th><th>diverges at</th><th>batches beyond</th><th>behind by</th><th>detail</th></tr></thead><tbody>");
    for r in &p.replicas {
        replica_row(b, r);
    }
    b.push_str("</tbody></table>");
    if !p.detail.is_empty() {
        let _ = write!(b, "<p class=\"muted\">{}</p>", esc(&p.detail));
    }
    b.push_str("</figure>\n");
}

/// Who leads, as the verdict found it: the metadata's leader, or the one
/// the controller elects when the brokers restart (the detail under the
/// figure says why), or every one it may elect.
fn leader_caption(p: &PartitionVerdict) -> String {
    use kaen_log::cluster::merge::LeaderSource;
    let nodes = |v: &[i32]| v.iter().map(i32::to_string).collect::<Vec<_>>().join(", ");
    match (p.leader_source, p.leader) {
        (LeaderSource::Metadata, Some(n)) => format!("leader {n}"),
        (LeaderSource::Chosen, Some(n)) => format!("leader after a restart: {n}"),
        (LeaderSource::Undecided, _) => {
            let leaders: Vec<i32> = p.outcomes.iter().map(|o| o.leader).collect();
            format!("leader after a restart: one of {}", nodes(&leaders))
        }
        _ => "no leader".to_string(),
    }
}

/// The offsets the replicas' strips span: the lowest log start to the
/// highest log end (the leader's included), right of the node labels,
/// with room on the right for "diverges at" labels.
fn replica_scale(p: &PartitionVerdict) -> Scale {
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
    Scale::new(lo, hi, STRIP_X0, STRIP_X1 - 80.0)
}

/// One replica's strip at `y`: its node and state, its epoch runs, where
/// Kafka's truncation leaves its log end and where it diverges.
fn replica_strip(b: &mut String, r: &ReplicaVerdict, runs: &[EpochRun], sc: &Scale, y: usize) {
    let _ = write!(
        b,
        "<text x=\"2\" y=\"{}\">node {} {}</text>",
        y + 14,
        r.node_id,
        r.state.name()
    );
    for run in runs {
        epoch_run(b, r.node_id, run, sc, y);
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

/// One run of a leader epoch on node `node`'s strip, in the epoch's colour
/// (labelled with the epoch where wide enough).
fn epoch_run(b: &mut String, node: i32, run: &EpochRun, sc: &Scale, y: usize) {
    let _ = write!(
        b,
        "<rect class=\"run\" x=\"{}\" y=\"{y}\" width=\"{}\" height=\"18\" fill=\"{}\" data-node=\"{}\" data-epoch=\"{}\" data-start=\"{}\" data-end=\"{}\" \
         data-tip=\"node {}: leader epoch {}, offsets {}..{}, {} batches\"/>",
        sc.px(run.start_offset),
        sc.width(run.start_offset, run.end_offset),
        svg::epoch_colour(run.leader_epoch),
        node,
        run.leader_epoch,
        run.start_offset,
        run.end_offset,
        node,
        run.leader_epoch,
        run.start_offset,
        run.end_offset,
        run.batches
    );
    block_label(
        b,
        sc,
        run.start_offset,
        run.end_offset,
        30.0,
        y + 13,
        format_args!("e{}", run.leader_epoch),
    );
}

/// One replica's row of the table.
fn replica_row(b: &mut String, r: &ReplicaVerdict) {
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
