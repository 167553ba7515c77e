//! The report's lag section: every group's lag over the directories, or why there is none.

use super::*;

/// `lag`'s rows over the directories (several brokers: each partition on
/// its leader's copy), each with the last stable offset of the copy read
/// (`transactions`' producer state in `partitions`: `lag` reads at
/// read_uncommitted, which has none).
pub(super) fn lag_of_dirs(args: &ReportArgs, partitions: &[PartitionView]) -> LagSection {
    let rows = match lag_rows(args) {
        Ok(rows) => rows,
        Err(e) => return lag_section(Vec::new(), Some(format!("No lag: {e:#}"))),
    };
    let cells = rows
        .iter()
        .map(|r| LagCell {
            group: Shown::new(&r.group),
            topic: Shown::new(&r.topic),
            partition: r.partition,
            committed: r.committed,
            log_start: r.ends.map(|e| e.log_start),
            log_end: r.ends.map(|e| e.log_end),
            high_watermark: r.ends.and_then(|e| e.high_watermark),
            last_stable: r
                .ends
                .and_then(|e| e.last_stable.or_else(|| last_stable_of(r, partitions))),
            lag: r.lag,
            pending: r.pending_records,
            status: r.status.name(),
        })
        .collect();
    lag_section(cells, None)
}

/// The last stable offset of the copy of `r`'s partition that `lag` read:
/// the replica with its log end and high watermark.
fn last_stable_of(r: &LagRow, partitions: &[PartitionView]) -> Option<i64> {
    let ends = r.ends?;
    partitions
        .iter()
        .filter(|p| {
            let s = &p.summary;
            (s.topic.as_str(), s.partition, s.log_end_offset, s.high_watermark)
                == (r.topic.as_str(), r.partition, ends.log_end, ends.high_watermark)
        })
        .find_map(|p| p.last_stable)
}

/// The rows of `lag` over the directories.
fn lag_rows(args: &ReportArgs) -> anyhow::Result<Vec<LagRow>> {
    // The page shows names, bounded where they enter: never a 32 KB group
    // id held, or written, in full.
    let opts = ReplayOptions {
        bounded_names: true,
        ..ReplayOptions::default()
    };
    let (dirs, replay, _) = crate::cmd::replayed::replay_dirs(&args.paths, opts)?;
    let opts = LagOptions {
        retention: args
            .now_ms
            .map(|now_ms| kaen_log::offsets::standing::Retention {
                retention_ms: args.offsets_retention_minutes * 60_000,
                now_ms,
            }),
        ..LagOptions::default()
    };
    Ok(consumer_lag::compute(&dirs, &replay, &opts)?)
}

/// The lag section of `cells`, with their sums (`missing`: why there are
/// none).
pub(super) fn lag_section(cells: Vec<LagCell>, missing: Option<String>) -> LagSection {
    let t = LagTotals::of(cells.iter().map(|c| (&c.group, &c.topic, c.lag, c.pending)));
    let sums = LagSums {
        groups: (t.groups.into_iter())
            .map(|(g, s)| (g, (s.lag, s.pending_records)))
            .collect(),
        group_topics: (t.group_topics.into_iter())
            .map(|(k, (s, known))| (k, ((known > 0).then_some(s.lag), s.partitions)))
            .collect(),
        topics: t.topics.into_iter().map(|(k, s)| (k, s.lag)).collect(),
        all: t.all.lag,
    };
    LagSection {
        cells,
        missing,
        sums,
    }
}
