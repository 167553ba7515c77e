//! Offline writes to a group's offsets partition, in every replica
//! directory given: every replica is planned before any is written.
//!
//! [`Replicas::open`] places the group in each directory
//! ([`write_target`]), takes each directory's lock and checks each tail
//! (through [`PartitionAppender::open`]; a dry run reads the tails without
//! the lock), and refuses replicas whose logs end at different offsets.
//! [`Replicas::check_room`] then checks each filesystem has room for the
//! batch, and [`Replicas::append`] writes the same batch to each in turn.
//! A failure after the first replica was written says which were.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::{BatchSpec, NewRecord};
use crate::log::{AppendConfig, Partition, PartitionAppender};
use crate::offsets::{write_target, Replay, ReplayOptions, WriteTarget};

/// The offsets partition of one group in every replica directory given.
pub struct Replicas {
    /// Where the group lives (the same in every directory).
    pub target: WriteTarget,
    /// The data directories, as given.
    pub dirs: Vec<PathBuf>,
    /// The partition folder in each.
    pub partition_dirs: Vec<PathBuf>,
    /// The offset the next append gets (the same in every replica).
    pub end: i64,
    /// One per directory, holding its lock; empty in a dry run.
    appenders: Vec<PartitionAppender>,
}

impl Replicas {
    /// Plan a write for `group` into every directory of `dirs`. With
    /// `dry_run` nothing is locked or written; with `must_exist` the offsets
    /// partition folder must be there already (nothing to delete otherwise).
    pub fn open(
        dirs: &[PathBuf],
        group: &str,
        offsets_partitions: Option<i32>,
        dry_run: bool,
        must_exist: bool,
    ) -> Result<Replicas> {
        let mut target: Option<WriteTarget> = None;
        let mut partition_dirs = Vec::new();
        let mut ends: Vec<i64> = Vec::new();
        let mut appenders = Vec::new();
        for dir in dirs {
            let t = write_target(dir, group, offsets_partitions)?;
            if let Some(first) = &target {
                if (first.topic, first.partition) != (t.topic, t.partition) {
                    return Err(Error::Invalid(format!(
                        "{} places group {group:?} in {}-{}, the first directory in {}-{}: not replicas of one partition",
                        dir.display(),
                        t.topic,
                        t.partition,
                        first.topic,
                        first.partition
                    )));
                }
            }
            let partition_dir = dir.join(format!("{}-{}", t.topic, t.partition));
            if must_exist && !partition_dir.is_dir() {
                return Err(Error::layout(
                    dir,
                    format!("no {}-{} here: nothing to delete", t.topic, t.partition),
                ));
            }
            let config = AppendConfig {
                partition_leader_epoch: t.leader_epoch,
                ..AppendConfig::default()
            };
            // Opening takes the lock and checks the tail before anything is
            // read; a dry run writes nothing, so it checks the tail without the lock.
            if dry_run {
                ends.push(PartitionAppender::next_offset_of(
                    dir,
                    t.topic,
                    t.partition,
                    &config,
                )?);
            } else {
                let a = PartitionAppender::open(dir, t.topic, t.partition, config)?;
                ends.push(a.next_offset());
                appenders.push(a);
            }
            partition_dirs.push(partition_dir);
            target = Some(t);
        }
        let Some(target) = target else {
            return Err(Error::Invalid("no directory given".into()));
        };
        let end = ends.first().copied().unwrap_or(0);
        if let Some(i) = ends.iter().position(|&e| e != end) {
            return Err(Error::Invalid(format!(
                "the replicas differ: {} ends at offset {end}, {} at {}; refusing to write",
                partition_dirs
                    .first()
                    .map_or(String::new(), |d| d.display().to_string()),
                partition_dirs
                    .get(i)
                    .map_or(String::new(), |d| d.display().to_string()),
                ends.get(i).copied().unwrap_or(0)
            )));
        }
        Ok(Replicas {
            target,
            dirs: dirs.to_vec(),
            partition_dirs,
            end,
            appenders,
        })
    }

    /// Replay the first replica's offsets partition (the replicas end at the
    /// same offset; an empty or missing partition replays to nothing).
    pub fn replay(&self) -> Result<Replay> {
        let mut replay = Replay::new(ReplayOptions::default());
        if let Some(dir) = self.partition_dirs.first().filter(|d| d.is_dir()) {
            replay.replay_partition(&Partition::open(dir)?)?;
        }
        Ok(replay)
    }

    /// Check that every replica's filesystem has room for `records`, before
    /// any is written.
    pub fn check_room(&self, records: &[NewRecord]) -> Result<()> {
        let need: u64 = records
            .iter()
            .map(|r| {
                64 + r.key.as_ref().map_or(0, |k| k.len() as u64)
                    + r.value.as_ref().map_or(0, |v| v.len() as u64)
            })
            .sum::<u64>()
            + 4096;
        for a in &self.appenders {
            if let Some(free) = crate::log::files::free_bytes(a.dir()) {
                if free < need {
                    return Err(Error::Invalid(format!(
                        "{}: {free} bytes free, the batch needs about {need}: nothing was written to any replica",
                        a.dir().display()
                    )));
                }
            }
        }
        Ok(())
    }

    /// Append `records` in one batch to every replica. Returns the offsets
    /// they got and the replicas written; a failure names the replicas
    /// written before it.
    pub fn append(
        &mut self,
        spec: &BatchSpec,
        records: &[NewRecord],
    ) -> Result<(RangeInclusive<i64>, Vec<PathBuf>)> {
        let total = self.appenders.len();
        let mut written: Vec<PathBuf> = Vec::new();
        let mut assigned = None;
        for a in &mut self.appenders {
            match a.append(spec, records) {
                Ok(range) => {
                    written.push(a.dir().to_path_buf());
                    assigned = Some(range);
                }
                Err(e) => {
                    let list: Vec<String> =
                        written.iter().map(|d| d.display().to_string()).collect();
                    return Err(Error::Invalid(format!(
                        "{}: {e}; written before the failure: {} (of {total} replicas){}",
                        a.dir().display(),
                        if list.is_empty() {
                            "none".to_string()
                        } else {
                            list.join(", ")
                        },
                        if list.is_empty() {
                            ""
                        } else {
                            ": the replicas now differ"
                        }
                    )));
                }
            }
        }
        let range = assigned.ok_or_else(|| Error::Invalid("no replica to write to".into()))?;
        Ok((range, written))
    }

    /// The warning to print before writing, when some replica of the
    /// partition is not among the directories given: the KRaft metadata
    /// names the replicas and `meta.properties` each directory's node. In a
    /// Kafka directory without metadata klog cannot tell, and warns.
    pub fn missing_replicas_warning(&self) -> Option<String> {
        if !self.target.kafka {
            return None;
        }
        let replicas = self.dirs.iter().find_map(|d| {
            let folder = crate::metadata::metadata_folder(d)?;
            let image = crate::metadata::replay(&folder, None).ok()?.image;
            let topic = image.topic_by_name(self.target.topic)?;
            topic
                .partitions
                .get(&self.target.partition)
                .map(|p| p.replicas.to_vec())
        });
        let nodes: Vec<Option<i32>> = self.dirs.iter().map(|d| node_id(d)).collect();
        let what = format!("{}-{}", self.target.topic, self.target.partition);
        let given = self.dirs.len();
        let unsafe_text = "the replicas not given do not get this write: when the brokers restart it can be \
                           truncated away (if one of them becomes leader) or the replicas diverge. Give every \
                           replica's log directory to write the same batch to each.";
        match replicas {
            Some(replicas) => {
                let missing: Vec<i32> = if nodes.iter().all(Option::is_some) {
                    replicas
                        .iter()
                        .copied()
                        .filter(|r| !nodes.contains(&Some(*r)))
                        .collect()
                } else if replicas.len() > given {
                    replicas.clone()
                } else {
                    Vec::new()
                };
                (!missing.is_empty()).then(|| {
                    format!(
                        "warning: the metadata gives {what} replicas on nodes {replicas:?}; the directories given \
                         ({given}) leave out {missing:?}: {unsafe_text}"
                    )
                })
            }
            None => Some(format!(
                "warning: writing {what} offline on {given} log director{} without KRaft metadata to say where its \
                 replicas are. If it has replicas on other brokers, {unsafe_text} It is safe when the partition has a \
                 single replica, or when every replica's log directory is given.",
                if given == 1 { "y" } else { "ies" }
            )),
        }
    }

    /// The lock held on data directory `dir` (one of `dirs`); `None` in a dry run.
    pub fn lock(&self, dir: &Path) -> Option<std::sync::Arc<crate::log::lock::DirLock>> {
        let i = self.dirs.iter().position(|d| d == dir)?;
        self.appenders.get(i).map(PartitionAppender::lock)
    }

    /// The directories being written, for messages.
    pub fn partition_dir(&self) -> &Path {
        self.partition_dirs
            .first()
            .map_or(Path::new("."), PathBuf::as_path)
    }
}

/// The node id in `dir`'s `meta.properties`, when it says.
fn node_id(dir: &Path) -> Option<i32> {
    crate::log::meta::read_meta_properties(&dir.join("meta.properties"))
        .ok()
        .flatten()
        .and_then(|m| m.node_id)
}
