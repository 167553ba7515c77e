//! What `replay-offsets`, `lag`, `groups` and `report` share: the offsets
//! topic of the given data directories, replayed, with what the replay
//! could not use said on stderr in one set of words ([`say_not_replayed`],
//! which the writers `tombstone` and `reset-offsets` say too); each command's
//! document holds the rest.

use std::path::PathBuf;

use anyhow::Context;
use kaen_log::log::DataDir;
use kaen_log::offsets::replay::Replay;
use kaen_log::offsets::{OffsetsTopic, ReplayOptions};

/// Open the directories and replay their offsets topic.
pub fn replay_dirs(
    dirs: &[PathBuf],
    opts: ReplayOptions,
) -> anyhow::Result<(Vec<DataDir>, Replay, &'static str)> {
    let opened = dirs
        .iter()
        .map(|d| DataDir::open(d))
        .collect::<Result<Vec<_>, _>>()?;
    say_elsewhere(&opened);
    // Several brokers' directories: each partition read on its leader's copy.
    let (opened, notes) = kaen_log::inspect::consumer_lag::leader_copies(opened)?;
    for note in &notes {
        crate::report::say!("note: {note}");
    }
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
    say_not_replayed(&replay, None);
    Ok((opened, replay, topic.name))
}

/// Say on stderr which partitions the metadata places in a log directory
/// of the same broker that was not given (JBOD): the groups and offsets
/// they hold are not in what follows.
fn say_elsewhere(opened: &[DataDir]) {
    const LISTED: usize = 8;
    for e in kaen_log::inspect::jbod::partitions_elsewhere(opened) {
        let mut names: Vec<String> = e
            .partitions
            .iter()
            .take(LISTED)
            .map(|(t, p)| crate::report::table::escape_cell(&format!("{t}-{p}")).into_owned())
            .collect();
        if e.partitions.len() > LISTED {
            names.push(format!("and {} more", e.partitions.len() - LISTED));
        }
        crate::report::say!(
            "warning: the metadata places {} partition(s) of node {} in its log directory {}, which was not given: {}; \
             the groups and offsets they hold are not shown (give that directory too)",
            e.partitions.len(),
            e.node,
            e.directory,
            names.join(", ")
        );
    }
}

/// Say on stderr what `replay` could not use: each kept record that does
/// not decode (its file, partition, offset where known, and why), how many
/// more there were, then the replay's warnings. Every command that replays
/// the offsets topic says them in these words; a writer says once more
/// what it does without them (`writing`).
pub fn say_not_replayed(replay: &Replay, writing: Option<&str>) {
    for bad in &replay.bad {
        let at = if bad.log_offset >= 0 {
            format!(" offset {}", bad.log_offset)
        } else {
            String::new()
        };
        crate::report::say!(
            "{}: partition {}{at}: {}",
            bad.file.display(),
            bad.log_partition,
            bad.error
        );
    }
    if replay.bad_count > replay.bad.len() as u64 {
        crate::report::say!(
            "and {} more records that do not decode",
            replay.bad_count - replay.bad.len() as u64
        );
    }
    for w in &replay.warnings {
        crate::report::say!("{w}");
    }
    if replay.warning_count > replay.warnings.len() as u64 {
        crate::report::say!(
            "and {} more warnings",
            replay.warning_count - replay.warnings.len() as u64
        );
    }
    if let (Some(writing), 1..) = (writing, replay.bad_count) {
        let records = match replay.bad_count {
            1 => "the record that does not decode is",
            _ => "the records that do not decode are",
        };
        crate::report::say!("warning: {records} not replayed; {writing}");
    }
}

fn display_dirs(dirs: &[PathBuf]) -> String {
    dirs.iter()
        .map(|d| d.display().to_string())
        .collect::<Vec<_>>()
        .join(", ")
}
