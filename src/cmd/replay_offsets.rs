//! `klog replay-offsets`: rebuild the committed-offset table from the offsets topic.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use kaen_log::log::DataDir;
use kaen_log::offsets::replay::{AsOf, Replay};
use kaen_log::offsets::{OffsetsTopic, ReplayOptions};

use crate::cli::TableFormat;
use crate::exit::Outcome;
use crate::report::table::render_table_or_csv;
use crate::report::Output;

/// Replay the offsets topic (`__offsets` in a klog data directory,
/// `__consumer_offsets` in a Kafka log directory) in log order and print
/// the committed offset of every (group, topic, partition), sorted by group,
/// topic, partition. The offset is the next record the group will read.
///
/// Tombstones delete keys (and cancel the key in open transactions);
/// transactional commits count only once their producer's COMMIT marker
/// follows, and only if no later commit of the key was stored by then
/// (aborted ones are dropped, open ones are shown as pending). Commits inside
/// legacy compressed wrappers are replayed. A record that does not decode is
/// reported on stderr with its partition, offset and byte position and
/// skipped; the exit code is then 1. What the broker loads but is unusual (a
/// negative committed offset, bytes after a key or value) is a warning on
/// stderr.
#[derive(Debug, clap::Args)]
pub struct ReplayOffsetsArgs {
    /// Data directories (several: the log directories of one broker).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Only this group.
    #[arg(long)]
    pub group: Option<String>,
    /// Only this topic.
    #[arg(long)]
    pub topic: Option<String>,
    /// List every commit and tombstone of the selected keys in log order.
    #[arg(long)]
    pub history: bool,
    /// Replay only up to a point: `offset:N` (records below offset N of each
    /// offsets partition), `time:MS` (records stamped at or before MS), or a
    /// bare number (an offset below 10^11, else a timestamp in ms).
    #[arg(long, value_parser = parse_as_of)]
    pub as_of: Option<AsOf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
}

fn parse_as_of(s: &str) -> Result<AsOf, String> {
    let num = |v: &str| {
        v.parse::<i64>()
            .map_err(|_| format!("{v:?} is not a number"))
    };
    if let Some(v) = s.strip_prefix("offset:") {
        return num(v).map(AsOf::Offset);
    }
    if let Some(v) = s.strip_prefix("time:") {
        return num(v).map(AsOf::Timestamp);
    }
    let n = num(s)?;
    Ok(if n < 100_000_000_000 {
        AsOf::Offset(n)
    } else {
        AsOf::Timestamp(n)
    })
}

/// Open the directories and replay their offsets topic.
pub fn replay_dirs(
    dirs: &[PathBuf],
    opts: ReplayOptions,
) -> anyhow::Result<(Vec<DataDir>, Replay, &'static str)> {
    let opened = dirs
        .iter()
        .map(|d| DataDir::open(d))
        .collect::<Result<Vec<_>, _>>()?;
    let topic = OffsetsTopic::find(&opened).with_context(|| {
        format!(
            "no __offsets or __consumer_offsets partition in {}",
            display_dirs(dirs)
        )
    })?;
    let mut replay = Replay::new(opts);
    for p in &topic.partitions {
        replay.replay_partition(p)?;
    }
    for bad in &replay.bad {
        let at = if bad.log_offset >= 0 {
            format!(" offset {}", bad.log_offset)
        } else {
            String::new()
        };
        eprintln!(
            "klog: {}: partition {}{at}: {}",
            bad.file.display(),
            bad.log_partition,
            bad.error
        );
    }
    if replay.bad_count > replay.bad.len() as u64 {
        eprintln!(
            "klog: and {} more records that do not decode",
            replay.bad_count - replay.bad.len() as u64
        );
    }
    for w in &replay.warnings {
        eprintln!("klog: {w}");
    }
    if replay.warning_count > replay.warnings.len() as u64 {
        eprintln!(
            "klog: and {} more warnings",
            replay.warning_count - replay.warnings.len() as u64
        );
    }
    Ok((opened, replay, topic.name))
}

fn display_dirs(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

pub fn run(args: &ReplayOffsetsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let opts = ReplayOptions {
        as_of: args.as_of,
        history: args.history,
        group: args.group.clone(),
        topic: args.topic.clone(),
        ..ReplayOptions::default()
    };
    let (_, replay, topic) = replay_dirs(&args.dirs, opts)?;
    if args.history {
        write_history(&replay, args.format, out)?;
    } else {
        write_table(&replay, args, out)?;
    }
    let summary = summary(&replay, topic);
    match args.format {
        TableFormat::Text => write!(out, "{summary}")?,
        _ => eprint!("{summary}"),
    }
    Ok(Outcome::from_count(replay.bad_count))
}

fn write_table(replay: &Replay, args: &ReplayOffsetsArgs, out: &mut Output) -> anyhow::Result<()> {
    let selected: Vec<_> = replay
        .commits()
        .filter(|(g, t, _, _)| {
            args.group.as_deref().is_none_or(|x| x == *g)
                && args.topic.as_deref().is_none_or(|x| x == *t)
        })
        .collect();
    if args.format == TableFormat::Json {
        let rows: Vec<_> = selected
            .iter()
            .map(|(g, t, p, c)| {
                serde_json::json!({
                    "group": g, "topic": t, "partition": p, "offset": c.offset,
                    "leader_epoch": c.leader_epoch, "metadata": c.metadata,
                    "commit_timestamp_ms": c.commit_timestamp, "expire_timestamp_ms": c.expire_timestamp,
                    "value_version": c.value_version, "log_partition": c.log_partition, "log_offset": c.log_offset,
                })
            })
            .collect();
        serde_json::to_writer(&mut *out, &rows)?;
        writeln!(out)?;
        return Ok(());
    }
    let headers = [
        "GROUP",
        "TOPIC",
        "PARTITION",
        "OFFSET",
        "LEADER-EPOCH",
        "METADATA",
        "COMMIT-TIMESTAMP",
    ];
    let rows: Vec<Vec<String>> = selected
        .iter()
        .map(|(g, t, p, c)| {
            vec![
                g.to_string(),
                t.to_string(),
                p.to_string(),
                c.offset.to_string(),
                c.leader_epoch.to_string(),
                c.metadata.clone(),
                c.commit_timestamp.to_string(),
            ]
        })
        .collect();
    let text = render_table_or_csv(args.format == TableFormat::Csv, &headers, &rows);
    out.write_all(text.as_bytes())?;
    Ok(())
}

fn write_history(replay: &Replay, format: TableFormat, out: &mut Output) -> anyhow::Result<()> {
    let opt = |v: Option<String>| v.unwrap_or_else(|| "-".to_string());
    if format == TableFormat::Json {
        let rows: Vec<_> = replay
            .history
            .iter()
            .map(|e| {
                serde_json::json!({
                    "log_partition": e.log_partition, "log_offset": e.log_offset, "position": e.position,
                    "event": e.kind.name(), "group": e.group, "topic": e.topic, "partition": e.partition,
                    "offset": e.offset, "commit_timestamp_ms": e.commit_timestamp,
                })
            })
            .collect();
        serde_json::to_writer(&mut *out, &rows)?;
        writeln!(out)?;
        return Ok(());
    }
    let headers = [
        "LOG-PARTITION",
        "LOG-OFFSET",
        "POSITION",
        "EVENT",
        "GROUP",
        "TOPIC",
        "PARTITION",
        "OFFSET",
        "COMMIT-TIMESTAMP",
    ];
    let rows: Vec<Vec<String>> = replay
        .history
        .iter()
        .map(|e| {
            vec![
                e.log_partition.to_string(),
                e.log_offset.to_string(),
                e.position.to_string(),
                e.kind.name().to_string(),
                e.group.clone(),
                e.topic.clone(),
                e.partition.to_string(),
                opt(e.offset.map(|o| o.to_string())),
                opt(e.commit_timestamp.map(|t| t.to_string())),
            ]
        })
        .collect();
    let text = render_table_or_csv(format == TableFormat::Csv, &headers, &rows);
    out.write_all(text.as_bytes())?;
    Ok(())
}

fn summary(replay: &Replay, topic: &str) -> String {
    let s = &replay.stats;
    let skipped = if s.skipped_types.is_empty() {
        "0".to_string()
    } else {
        let by_type: Vec<String> = s
            .skipped_types
            .iter()
            .map(|(t, n)| {
                let name = kaen_log::offsets::records::group_record_name(*t);
                if name.starts_with("unknown") {
                    format!("type {t}: {n}")
                } else {
                    format!("{name} (type {t}): {n}")
                }
            })
            .collect();
        format!(
            "{} ({})",
            s.skipped_types.values().sum::<u64>(),
            by_type.join(", ")
        )
    };
    let ends: Vec<String> = s
        .log_end_offsets
        .iter()
        .map(|(p, e)| format!("{topic}-{p}: {e}"))
        .collect();
    let mut text = format!(
        "records read: {}\noffset commits: {}\ntombstones: {}\ngroup metadata records: {}\nlive keys: {}\n\
         skipped record types: {skipped}\ntransactional commits applied: {}, aborted: {}, superseded: {}, cancelled: {}, pending: {}\n\
         bad records: {}\nwarnings: {}\nlog end offsets: {}\n",
        s.records,
        s.offset_commits,
        s.tombstones,
        s.group_metadata,
        replay.live_keys(),
        s.txn_commits_applied,
        s.txn_commits_aborted,
        s.txn_commits_superseded,
        s.txn_commits_cancelled,
        replay.pending_count(),
        replay.bad_count,
        replay.warning_count,
        ends.join(", "),
    );
    for (lp, pid, g, t, p, o) in replay.pending() {
        text.push_str(&format!("pending: producer {pid} in {topic}-{lp}: {g} {t}-{p} -> {o} (no COMMIT or ABORT marker yet)\n"));
    }
    text
}
