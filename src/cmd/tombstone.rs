//! `klog tombstone`: delete a group's committed offsets by appending tombstones.

use std::io::Write;
use std::path::PathBuf;

use anyhow::bail;
use kaen_log::format::BatchSpec;
use kaen_log::log::{AppendConfig, Partition, PartitionAppender};
use kaen_log::offsets::{
    replicated_write_warning, tombstone_records, write_target, Replay, ReplayOptions,
};

use crate::exit::Outcome;
use crate::report::Output;

/// Delete a group's committed offsets offline: append a tombstone (the key
/// with a null value) for every live key of the group that matches, in one
/// batch, through the append path, into the offsets partition that owns the
/// group. Deleting is appending: the old commits stay in the log until
/// compaction, and a replay no longer shows them.
///
/// Refuses (exit 1, nothing written) when nothing matches; refuses (exit 2)
/// when the directory lock is held or the offsets log has a damaged tail.
/// Several DIRs are the log directories of the partition's replicas: each
/// gets the same batch, and they must hold logs of the same length.
#[derive(Debug, clap::Args)]
pub struct TombstoneArgs {
    /// Data directories (one per replica of the offsets partition).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The consumer group whose committed offsets are deleted.
    #[arg(long, short = 'g')]
    pub group: String,
    /// Only this topic's offsets.
    #[arg(long, short = 't')]
    pub topic: Option<String>,
    /// Only this partition's offsets.
    #[arg(long, short = 'p')]
    pub partition: Option<i32>,
    /// Print what would be deleted; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The tombstones' timestamp (ms); default: now.
    #[arg(long, value_parser = clap::value_parser!(i64).range(0..))]
    pub now_ms: Option<i64>,
    /// Partitions of __consumer_offsets (offsets.topic.num.partitions), to
    /// place the group in a Kafka log directory. Taken from the KRaft
    /// metadata when the directory has it; without either, refused.
    #[arg(long)]
    pub offsets_partitions: Option<i32>,
}

pub fn run(args: &TombstoneArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let mut appenders = Vec::new();
    // (partition folder, log end offset) per replica.
    let mut ends = Vec::new();
    let mut target = None;
    for dir in &args.dirs {
        let t = write_target(dir, &args.group, args.offsets_partitions)?;
        if t.kafka && !args.dry_run && target.is_none() {
            eprintln!("klog: {}", replicated_write_warning(&t, args.dirs.len()));
        }
        let partition_dir = dir.join(format!("{}-{}", t.topic, t.partition));
        if !partition_dir.is_dir() {
            bail!(
                "{}: no {}-{} here: nothing to delete",
                dir.display(),
                t.topic,
                t.partition
            );
        }
        let config = AppendConfig {
            partition_leader_epoch: t.leader_epoch,
            ..AppendConfig::default()
        };
        // Opening takes the lock and checks the tail before anything is read;
        // a dry run writes nothing, so it checks the tail without the lock.
        if args.dry_run {
            let end = PartitionAppender::next_offset_of(dir, t.topic, t.partition, &config)?;
            ends.push((partition_dir, end));
        } else {
            let a = PartitionAppender::open(dir, t.topic, t.partition, config)?;
            ends.push((a.dir().to_path_buf(), a.next_offset()));
            appenders.push(a);
        }
        target = Some(t);
    }
    let Some(target) = target else {
        bail!("no directory given")
    };
    if let Some(first) = ends.first() {
        if let Some(other) = ends.iter().find(|e| e.1 != first.1) {
            bail!(
                "the replicas differ: {} ends at offset {}, {} at {}; refusing to write",
                first.0.display(),
                first.1,
                other.0.display(),
                other.1
            );
        }
    }
    let first_dir = ends.first().map(|e| e.0.clone()).unwrap_or_default();
    let mut replay = Replay::new(ReplayOptions::default());
    replay.replay_partition(&Partition::open(&first_dir)?)?;
    // A record that does not decode is reported and passed over, as the
    // coordinator's loader would: it must not lock a group in for good.
    for bad in &replay.bad {
        eprintln!(
            "klog: warning: {}: offset {}: {}: this record is not replayed; \
             tombstoning the keys the rest of the log holds",
            bad.file.display(),
            bad.log_offset,
            bad.error
        );
    }
    if replay.bad_count > replay.bad.len() as u64 {
        eprintln!(
            "klog: warning: and {} more records that are not replayed",
            replay.bad_count - replay.bad.len() as u64
        );
    }
    let now = args.now_ms.unwrap_or_else(crate::cmd::now_ms);
    let (keys, records): (Vec<_>, Vec<_>) = tombstone_records(
        &replay,
        &args.group,
        args.topic.as_deref(),
        args.partition,
        now,
    )
    .into_iter()
    .unzip();
    if keys.is_empty() {
        eprintln!(
            "klog: no live committed offsets match group {:?} in {}-{}; nothing written",
            args.group, target.topic, target.partition
        );
        return Ok(Outcome::Findings(1));
    }
    let mut assigned = None;
    if !args.dry_run {
        // Every replica was planned above (locked, tails checked, ends
        // equal); check each has room for the batch before writing any.
        let need: u64 = records
            .iter()
            .map(|r| 64 + r.key.as_ref().map_or(0, |k| k.len() as u64))
            .sum::<u64>()
            + 4096;
        for a in &appenders {
            if let Some(free) = kaen_log::log::files::free_bytes(a.dir()) {
                if free < need {
                    bail!(
                        "{}: {free} bytes free, the tombstones need about {need}: nothing was written to any replica",
                        a.dir().display()
                    );
                }
            }
        }
        let mut written: Vec<String> = Vec::new();
        for a in &mut appenders {
            match a.append(&BatchSpec::default(), &records) {
                Ok(range) => {
                    eprintln!(
                        "klog: wrote {} tombstones to {} at offsets {}..={}",
                        records.len(),
                        a.dir().display(),
                        range.start(),
                        range.end()
                    );
                    written.push(a.dir().display().to_string());
                    assigned = Some(range);
                }
                Err(e) => bail!(
                    "{}: {e}; written before the failure: {} (of {} replicas): the replicas now differ",
                    a.dir().display(),
                    if written.is_empty() { "none".to_string() } else { written.join(", ") },
                    args.dirs.len()
                ),
            }
        }
    }
    for (i, (t, p)) in keys.iter().enumerate() {
        let was = replay.get(&args.group, t, *p).map_or(0, |c| c.offset);
        match &assigned {
            Some(range) => writeln!(
                out,
                "deleted {} {t}-{p} (was {was}): tombstone at {}-{} offset {}",
                args.group,
                target.topic,
                target.partition,
                range.start() + i as i64
            )?,
            None => writeln!(out, "would delete {} {t}-{p} (was {was})", args.group)?,
        }
    }
    Ok(Outcome::Clean)
}
