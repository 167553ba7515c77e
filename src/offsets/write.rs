//! Offline writes to a group's offsets partition, in every replica
//! directory given: every replica is planned before any is written, and
//! every replica gets the same bytes.
//!
//! [`Replicas::open`] places the group in each directory
//! ([`write_target`]), takes each directory's lock and checks each tail
//! (through [`PartitionAppender::open`]; a dry run reads the tails without
//! the lock), refuses replicas whose logs end at different offsets, and
//! decides the one leader epoch the batch carries on every replica
//! ([`replicas_agree`]: the newest epoch of the replicas' leader-epoch
//! caches, refused when the caches diverge or the KRaft metadata is older
//! than them). [`Replicas::check_room`] then checks each filesystem has
//! room for the batch, and [`Replicas::append`] writes the batch to each
//! in turn; when one fails, the ones written before it are rolled back, so
//! that the replicas never differ by a klog batch. [`Replicas::close`] ends
//! each append session as a broker's clean shutdown would.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::{BatchSpec, NewRecord};
use crate::log::checkpoint;
use crate::log::epoch_cache::{replicas_agree, EpochCache, ReplicaEpochs};
use crate::log::{AppendConfig, Partition, PartitionAppender};
use crate::metadata::image::{Image, PartitionReg};
use crate::offsets::{write_target, Replay, ReplayOptions, WriteTarget};

/// The append configuration of the offsets topic in a data directory,
/// given the newest KRaft metadata image among the directories written.
pub type ConfigFor<'a> = dyn Fn(&Path, &WriteTarget, Option<&Image>) -> Result<AppendConfig> + 'a;

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
    /// The partitionLeaderEpoch the batch carries on every replica.
    pub leader_epoch: i32,
    /// The append configuration of each replica (its broker's, for its topic).
    pub configs: Vec<AppendConfig>,
    /// One per directory, holding its lock; empty in a dry run.
    appenders: Vec<PartitionAppender>,
    /// What [`ReplicaPolicy`] let through with a warning: replicas left out
    /// under `--allow-missing-replicas` (said before anything is written).
    pub warning: Option<String>,
}

/// Which replicas a write must reach: every one, unless
/// `--allow-missing-replicas`; their count from the KRaft metadata, else
/// `--replication-factor`. A write that would leave one out is refused
/// before any file is created.
#[derive(Debug, Clone, Copy, Default)]
pub struct ReplicaPolicy {
    pub allow_missing: bool,
    pub replication_factor: Option<u32>,
}

impl Replicas {
    /// Plan a write for `group` into every directory of `dirs`. With
    /// `dry_run` nothing is locked or written; with `must_exist` the offsets
    /// partition folder must be there already (nothing to delete otherwise).
    /// `config_for` gives the append configuration of the offsets topic in
    /// a directory (its topic and broker configs, from the newest KRaft
    /// metadata image among the directories).
    pub fn open(
        dirs: &[PathBuf],
        group: &str,
        offsets_partitions: Option<i32>,
        dry_run: bool,
        must_exist: bool,
        policy: ReplicaPolicy,
        config_for: &ConfigFor<'_>,
    ) -> Result<Replicas> {
        let newest = crate::metadata::newest_image(dirs);
        // A directory without the metadata log (a broker's copy may be
        // elsewhere) places the group by the count another one's gives.
        let offsets_partitions = offsets_partitions.or_else(|| {
            newest
                .as_ref()?
                .partition_count(crate::offsets::KAFKA_OFFSETS_TOPIC)
                .and_then(|n| i32::try_from(n).ok())
        });
        let mut target: Option<WriteTarget> = None;
        for dir in dirs {
            let t = write_target(dir, group, offsets_partitions)?;
            if let Some(first) = &target {
                if (&first.topic, first.partition) != (&t.topic, t.partition) {
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
            if must_exist && !dir.join(format!("{}-{}", t.topic, t.partition)).is_dir() {
                return Err(Error::layout(
                    dir,
                    format!("no {}-{} here: nothing to delete", t.topic, t.partition),
                ));
            }
            target = Some(t);
        }
        let Some(target) = target else {
            return Err(Error::Invalid("no directory given".into()));
        };
        Self::open_at(dirs, target, newest, dry_run, policy, config_for)
    }

    /// Plan a write to partition `partition` of `topic` (any topic: what
    /// `klog produce` writes) into every directory of `dirs`, under the
    /// same rules as a group's offsets partition: one lock per directory,
    /// one log end, one leader epoch, one cluster. The directories are
    /// Kafka log directories when any of them has a `meta.properties` or
    /// Kafka's own partitions ([`is_kafka_log_dir`]).
    pub fn open_partition(
        dirs: &[PathBuf],
        topic: &str,
        partition: i32,
        policy: ReplicaPolicy,
        config_for: &ConfigFor<'_>,
    ) -> Result<Replicas> {
        let target = WriteTarget {
            topic: topic.to_string(),
            partition,
            kafka: dirs.iter().any(|d| is_kafka_log_dir(d)),
        };
        Self::open_at(
            dirs,
            target,
            crate::metadata::newest_image(dirs),
            false,
            policy,
            config_for,
        )
    }

    /// Open (or, in a dry run, read) `target` in every directory, and
    /// decide the one log end and leader epoch every replica gets. A write
    /// `policy` refuses is refused before any folder or file is created.
    fn open_at(
        dirs: &[PathBuf],
        target: WriteTarget,
        newest: Option<Image>,
        dry_run: bool,
        policy: ReplicaPolicy,
        config_for: &ConfigFor<'_>,
    ) -> Result<Replicas> {
        if dirs.is_empty() {
            return Err(Error::Invalid("no directory given".into()));
        }
        distinct_dirs(dirs)?;
        let partition_dirs: Vec<PathBuf> = dirs
            .iter()
            .map(|d| d.join(format!("{}-{}", target.topic, target.partition)))
            .collect();
        one_cluster(dirs, &partition_dirs)?;
        let registration = registration(newest.as_ref(), &target.topic, target.partition);
        let warning = if dry_run {
            None
        } else {
            missing_replicas(&target, dirs, registration.as_ref(), policy)?
        };
        let mut ends: Vec<i64> = Vec::new();
        let mut appenders = Vec::new();
        let mut configs = Vec::new();
        for dir in dirs {
            let config = config_for(dir, &target, newest.as_ref())?;
            // Opening takes the lock and checks the tail before anything is
            // read; a dry run writes nothing, so it checks the tail without the lock.
            if dry_run {
                ends.push(PartitionAppender::next_offset_of(
                    dir,
                    &target.topic,
                    target.partition,
                    &config,
                )?);
            } else {
                let a = PartitionAppender::open(dir, &target.topic, target.partition, config)?;
                ends.push(a.next_offset());
                appenders.push(a);
            }
            configs.push(config);
        }
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
        let leader_epoch = common_leader_epoch(dirs, &partition_dirs, end, registration.as_ref())?;
        for a in &mut appenders {
            a.set_leader_epoch(leader_epoch);
        }
        Ok(Replicas {
            target,
            dirs: dirs.to_vec(),
            partition_dirs,
            end,
            leader_epoch,
            configs,
            appenders,
            warning,
        })
    }

    /// Stamp the batches with `epoch` instead of the replicas' newest
    /// (an append refuses one below the newest: a leader never writes
    /// under an older epoch).
    pub fn set_leader_epoch(&mut self, epoch: i32) {
        self.leader_epoch = epoch;
        for a in &mut self.appenders {
            a.set_leader_epoch(epoch);
        }
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
    /// they got and the replicas written. When a replica fails, the
    /// replicas written before it are rolled back, and the error says what
    /// remains where.
    pub fn append(
        &mut self,
        spec: &BatchSpec,
        records: &[NewRecord],
    ) -> Result<(RangeInclusive<i64>, Vec<PathBuf>)> {
        let total = self.appenders.len();
        let mut assigned = None;
        let mut failed = None;
        for (i, a) in self.appenders.iter_mut().enumerate() {
            match a.append(spec, records) {
                Ok(range) => assigned = Some(range),
                Err(e) => {
                    failed = Some((i, e));
                    break;
                }
            }
        }
        let Some((at, error)) = failed else {
            let range = assigned.ok_or_else(|| Error::Invalid("no replica to write to".into()))?;
            let written = self
                .appenders
                .iter()
                .map(|a| a.dir().to_path_buf())
                .collect();
            return Ok((range, written));
        };
        let dir = self
            .appenders
            .get(at)
            .map_or(String::new(), |a| a.dir().display().to_string());
        let mut undone = Vec::new();
        let mut kept = Vec::new();
        for a in self.appenders.iter_mut().take(at) {
            match a.undo_last_append() {
                Ok(()) => undone.push(a.dir().display().to_string()),
                Err(e) => kept.push(format!("{} ({e})", a.dir().display())),
            }
        }
        let after = if kept.is_empty() && undone.is_empty() {
            format!("no replica was written before it (of {total})")
        } else if kept.is_empty() {
            format!(
                "the batch written before it to {} was rolled back: no replica holds any of it (of {total})",
                undone.join(", ")
            )
        } else {
            format!(
                "rolling the batch back failed on {}: the replicas now differ (rolled back: {})",
                kept.join(", "),
                if undone.is_empty() {
                    "none".to_string()
                } else {
                    undone.join(", ")
                }
            )
        };
        Err(Error::Failed {
            error: Box::new(Error::Invalid(format!("{dir}: {error}"))),
            after,
        })
    }

    /// End every replica's append session as a broker's clean shutdown
    /// does (`LogSegment.close`: the active segment's time index gets its
    /// largest timestamp).
    pub fn close(&mut self) -> Result<()> {
        let mut failed = Vec::new();
        for a in self.appenders.drain(..) {
            let dir = a.dir().display().to_string();
            if let Err(e) = a.close() {
                failed.push(format!("{dir}: {e}"));
            }
        }
        if failed.is_empty() {
            Ok(())
        } else {
            Err(Error::Invalid(format!(
                "the batch is written, but closing the segment failed ({}): its time index lacks its last \
                 entry; `klog verify-crc --repair` rebuilds it",
                failed.join("; ")
            )))
        }
    }

    /// The lock held on data directory `dir` (one of `dirs`); `None` in a dry run.
    pub fn lock(&self, dir: &Path) -> Option<std::sync::Arc<crate::log::lock::DirLock>> {
        let i = self.dirs.iter().position(|d| d == dir)?;
        self.appenders.get(i).map(PartitionAppender::lock)
    }
}

/// Whether `data_dir` is a Kafka broker's log directory: it has a
/// `meta.properties` (every broker writes one, `MetaPropertiesEnsemble`),
/// or Kafka's own partitions (`__consumer_offsets-N`, `__cluster_metadata-0`).
pub fn is_kafka_log_dir(data_dir: &Path) -> bool {
    data_dir.join(crate::log::meta::META_PROPERTIES).exists()
        || std::fs::read_dir(data_dir).is_ok_and(|entries| {
            entries.filter_map(|e| e.ok()).any(|e| {
                e.file_name().to_str().is_some_and(|n| {
                    n.starts_with(crate::offsets::KAFKA_OFFSETS_TOPIC)
                        || n == crate::metadata::METADATA_FOLDER
                })
            })
        })
}

/// Refuse directories that are not replicas of one partition of one
/// cluster: two `meta.properties` naming different `cluster.id`s (a broker
/// refuses a directory of another cluster, `MetaPropertiesEnsemble.verify`),
/// or two partition folders whose `partition.metadata` name different topic
/// ids (one of them is a deleted topic's, or another cluster's).
/// Refuse one directory given twice (through a symlink, as `d/.`, or any
/// other name of the same inode), before any lock is taken: its second
/// lock would fail against its first, and it is one replica, not two.
fn distinct_dirs(dirs: &[PathBuf]) -> Result<()> {
    let mut seen: Vec<(crate::log::files::Identity, &PathBuf)> = Vec::new();
    for dir in dirs {
        let id = crate::log::files::identity(dir);
        if let Some((_, first)) = seen.iter().find(|(i, _)| *i == id) {
            return Err(Error::Invalid(format!(
                "{} and {} are the same directory, given twice: each replica's log directory is given \
                 once; nothing was written",
                first.display(),
                dir.display()
            )));
        }
        seen.push((id, dir));
    }
    Ok(())
}

fn one_cluster(dirs: &[PathBuf], partition_dirs: &[PathBuf]) -> Result<()> {
    use crate::log::meta::{read_meta_properties, read_partition_metadata, META_PROPERTIES};
    let mut cluster: Option<(String, &PathBuf)> = None;
    let mut without: Option<&PathBuf> = None;
    for dir in dirs {
        let Some(id) = read_meta_properties(&dir.join(META_PROPERTIES))?.and_then(|m| m.cluster_id)
        else {
            without = without.or(Some(dir));
            continue;
        };
        match &cluster {
            Some((first, first_dir)) if *first != id => {
                return Err(Error::Invalid(format!(
                    "{} belongs to cluster {} and {} to cluster {}: not replicas of one partition; nothing was \
                     written",
                    first_dir.display(),
                    crate::format::escape::escape_cell(first),
                    dir.display(),
                    crate::format::escape::escape_cell(&id)
                )))
            }
            Some(_) => {}
            None => cluster = Some((id, dir)),
        }
    }
    // A broker's log directory always names its cluster (meta.properties,
    // both modes): one that names none beside one that does is not a
    // replica of the same cluster's partition.
    if let (Some((id, named)), Some(unnamed)) = (&cluster, without) {
        return Err(Error::Invalid(format!(
            "{} belongs to cluster {} and {} names no cluster (no cluster.id in a meta.properties): not replicas \
             of one partition; nothing was written",
            named.display(),
            crate::format::escape::escape_cell(id),
            unnamed.display()
        )));
    }
    let mut topic: Option<(crate::log::meta::Uuid, &PathBuf)> = None;
    for dir in partition_dirs {
        let Some(meta) = read_partition_metadata(&dir.join(crate::log::meta::PARTITION_METADATA))?
        else {
            continue;
        };
        match &topic {
            Some((first, first_dir)) if *first != meta.topic_id => {
                return Err(Error::Invalid(format!(
                    "{} holds topic id {first} and {} topic id {}: copies of different topics (a deleted one, or \
                     another cluster's), not replicas of one partition; nothing was written",
                    first_dir.display(),
                    dir.display(),
                    meta.topic_id
                )))
            }
            Some(_) => {}
            None => topic = Some((meta.topic_id, dir)),
        }
    }
    Ok(())
}

/// The partition's registration in `image`.
pub fn registration(image: Option<&Image>, topic: &str, partition: i32) -> Option<PartitionReg> {
    image?
        .topic_by_name(topic)?
        .partitions
        .get(&partition)
        .cloned()
}

/// The one leader epoch for a batch at `end` in every replica (see
/// [`replicas_agree`]); 0 where no replica keeps a `leader-epoch-checkpoint`
/// (klog's own data directories).
pub(crate) fn common_leader_epoch(
    dirs: &[PathBuf],
    partition_dirs: &[PathBuf],
    end: i64,
    registration: Option<&PartitionReg>,
) -> Result<i32> {
    let mut replicas = Vec::new();
    let mut without = Vec::new();
    for (data_dir, dir) in dirs.iter().zip(partition_dirs) {
        let Some(entries) = checkpoint::read_leader_epochs(&dir.join(checkpoint::LEADER_EPOCH))?
        else {
            without.push(dir.display().to_string());
            continue;
        };
        let p = Partition::open(dir)?;
        let checkpointed = checkpoint::read_offsets(&data_dir.join(checkpoint::LOG_START_OFFSET))
            .ok()
            .flatten()
            .and_then(|m| m.get(&(p.topic.clone(), p.partition)).copied());
        replicas.push(ReplicaEpochs {
            name: dir.display().to_string(),
            cache: EpochCache::from_entries(entries),
            log_start: p.log_start_offset(checkpointed),
            log_end: end,
        });
    }
    if replicas.is_empty() {
        return Ok(0);
    }
    if !without.is_empty() {
        // A broker loads such a replica with no epochs, and a follower with
        // no epochs truncates to its high watermark: below this batch.
        return Err(Error::Invalid(format!(
            "{} ha{} no leader-epoch-checkpoint while {} has one: the replicas' epochs cannot be made to agree; \
             nothing was written",
            without.join(", "),
            if without.len() == 1 { "s" } else { "ve" },
            replicas.first().map_or(String::new(), |r| r.name.clone())
        )));
    }
    replicas_agree(&replicas, registration.map(|r| r.leader_epoch))
        .map_err(|why| Error::Invalid(format!("{why}; nothing was written")))
}

/// Check that the directories given are every replica of the
/// partition, before anything is written: the KRaft metadata names the
/// replicas and `meta.properties` each directory's node; without
/// metadata (a ZooKeeper-mode cluster keeps the assignment in
/// ZooKeeper) `replication_factor` says how many there are. A write to
/// fewer replicas makes them diverge (and a broker may truncate it when
/// another replica leads), so it is refused unless `allow_missing`,
/// which turns the refusal into the warning returned. klog's own
/// directories have one replica.
fn missing_replicas(
    target: &WriteTarget,
    dirs: &[PathBuf],
    registration: Option<&PartitionReg>,
    policy: ReplicaPolicy,
) -> Result<Option<String>> {
    let (allow_missing, replication_factor) = (policy.allow_missing, policy.replication_factor);
    if !target.kafka {
        return Ok(None);
    }
    let what = format!("{}-{}", target.topic, target.partition);
    let given = dirs.len();
    let missing = match (registration, replication_factor) {
        (Some(reg), _) => {
            let nodes: Vec<Option<i32>> = dirs
                .iter()
                .map(|d| crate::log::meta::node_id(d))
                .collect();
            let missing: Vec<i32> = if nodes.iter().all(Option::is_some) {
                reg.replicas
                    .iter()
                    .copied()
                    .filter(|r| !nodes.contains(&Some(*r)))
                    .collect()
            } else if reg.replicas.len() > given {
                reg.replicas.to_vec()
            } else {
                Vec::new()
            };
            if missing.is_empty() {
                return Ok(None);
            }
            format!(
                "the KRaft metadata gives {what} replicas on nodes {:?}; the directories given ({given}) leave \
                 out {missing:?}",
                reg.replicas
            )
        }
        (None, Some(rf)) if rf as usize <= given => return Ok(None),
        (None, Some(rf)) => format!(
            "{what} has {rf} replicas (--replication-factor); {given} director{} given",
            if given == 1 { "y is" } else { "ies are" }
        ),
        (None, None) => format!(
            "no KRaft metadata here says how many replicas {what} has (a ZooKeeper-mode cluster keeps that in \
             ZooKeeper; give --replication-factor N: offsets.topic.replication.factor for __consumer_offsets, \
             3 by default)"
        ),
    };
    let why = "the replicas not given would not get this write: they diverge, and when the brokers restart \
               it can be truncated away (if one of them leads)";
    if allow_missing {
        Ok(Some(format!(
            "warning: {missing}: writing anyway (--allow-missing-replicas); {why}"
        )))
    } else {
        Err(Error::Invalid(format!(
            "{missing}: refusing to write, {why}. Give every replica's log directory with --replica DIR (each gets the same \
             batch), or --allow-missing-replicas to write only these"
        )))
    }
}
