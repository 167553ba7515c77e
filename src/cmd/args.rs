//! Arguments several subcommands share (their parsers and the values
//! they stand for): `--fail-on`, `--isolation`, `--reads`, the replicas a
//! writer writes to and the writers' options.

use clap::ValueEnum;

/// `--reads`: how segment files are read. The output is the same whichever.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, ValueEnum)]
pub enum ReadsArg {
    /// Read a file of 16 MiB or more ahead on threads, on cores no job
    /// holds (checking or rendering its batches as they come).
    #[default]
    Auto,
    /// Positioned reads on the calling thread only: no thread.
    Plain,
}

impl From<ReadsArg> for kaen_log::log::Reads {
    fn from(r: ReadsArg) -> Self {
        match r {
            ReadsArg::Auto => Self::Auto,
            ReadsArg::Plain => Self::Plain,
        }
    }
}

/// The least severity of finding that makes a run exit 1.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FailOn {
    /// Damaged or lost log bytes (the default).
    Error,
    /// Also state a broker rebuilds on load (indexes, snapshots) or does not
    /// re-validate (producer sequences), and hanging transactions.
    Warning,
    /// Also what a healthy broker normally leaves (preallocated index slots).
    Note,
}

impl FailOn {
    /// The severity it names.
    pub fn severity(self) -> kaen_log::log::findings::Severity {
        use kaen_log::log::findings::Severity;
        match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Note => Severity::Note,
        }
    }
}

/// Parse `--isolation` into the library's one `Isolation` (Kafka's
/// `read_committed` spelling is accepted too).
pub fn isolation(s: &str) -> Result<kaen_log::txn::Isolation, String> {
    s.parse()
}

/// What the offsets writers (`commit`, `reset-offsets`, `tombstone`) take
/// to know they were given every replica of the partition they write.
#[derive(Debug, Clone, clap::Args)]
pub struct ReplicaArgs {
    /// The log directory of another broker's replica of the partition
    /// written (repeatable, one for each broker): it gets the same batch.
    #[arg(long = "replica", value_name = "DIR")]
    pub replica_dirs: Vec<std::path::PathBuf>,
    /// Write although the directories given are not every replica of the
    /// partition: the ones left out diverge, and a broker may truncate the
    /// write when one of them leads.
    #[arg(long)]
    pub allow_missing_replicas: bool,
    /// How many replicas the partition has, where no KRaft metadata says
    /// (a ZooKeeper-mode cluster): offsets.topic.replication.factor for
    /// __consumer_offsets (3 by default).
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub replication_factor: Option<u32>,
}

impl ReplicaArgs {
    /// The directories a writer writes, one for each replica: of this
    /// broker's log directories (`dirs`: its `log.dirs`, JBOD included) the
    /// one that holds the group's offsets partition (the first when none
    /// does yet), then every `--replica DIR`. `dirs` of several brokers
    /// (their `meta.properties` name different nodes) are taken as the
    /// replicas' directories, as klog took them before `--replica`, with a
    /// note.
    pub fn write_dirs(
        &self,
        dirs: &[std::path::PathBuf],
        group: &str,
        offsets_partitions: Option<i32>,
    ) -> anyhow::Result<Vec<std::path::PathBuf>> {
        let nodes: std::collections::BTreeSet<i32> = dirs
            .iter()
            .filter_map(|d| kaen_log::log::meta::node_id(d))
            .collect();
        if nodes.len() > 1 {
            anyhow::ensure!(
                self.replica_dirs.is_empty(),
                "DIRs of several brokers (nodes {nodes:?}) and --replica: give this broker's log directories \
                 as DIRs and each other broker's with --replica DIR"
            );
            crate::report::say!(
                "note: DIRs of several brokers (nodes {nodes:?}) are taken as the partition's replicas; \
                 `DIR --replica DIR2 --replica DIR3` says so"
            );
            return Ok(dirs.to_vec());
        }
        let mut out = vec![broker_dir(dirs, group, offsets_partitions)?];
        out.extend(self.replica_dirs.iter().cloned());
        Ok(out)
    }

    /// What a writer must reach (see `ReplicaPolicy`): checked when the
    /// replicas are opened, before anything is created.
    pub fn policy(&self) -> kaen_log::offsets::write::ReplicaPolicy {
        kaen_log::offsets::write::ReplicaPolicy {
            allow_missing: self.allow_missing_replicas,
            replication_factor: self.replication_factor,
        }
    }

    /// Say the warning of a write that leaves replicas out under
    /// --allow-missing-replicas.
    pub fn say_warning(&self, replicas: &kaen_log::offsets::write::Replicas) {
        if let Some(w) = &replicas.warning {
            crate::report::say!("{w}");
        }
    }
}

/// Of one broker's log directories, the one holding `group`'s offsets
/// partition (Kafka keeps a partition in one of them); the first when none
/// does yet. Two holding it are two live copies on one broker: refused.
fn broker_dir(
    dirs: &[std::path::PathBuf],
    group: &str,
    offsets_partitions: Option<i32>,
) -> anyhow::Result<std::path::PathBuf> {
    let (Some(first), [_, _, ..]) = (dirs.first(), dirs) else {
        return dirs
            .first()
            .cloned()
            .ok_or_else(|| anyhow::anyhow!("no directory given"));
    };
    let n = offsets_partitions.or_else(|| {
        kaen_log::metadata::newest_image(dirs)?
            .partition_count(kaen_log::offsets::KAFKA_OFFSETS_TOPIC)
            .and_then(|n| i32::try_from(n).ok())
    });
    let mut holders = Vec::new();
    for d in dirs {
        // A directory that cannot place the group (one without offsets
        // partitions of its own) does not hold it; opening the one chosen
        // says what is wrong with it.
        let Ok(t) = kaen_log::offsets::write_target(d, group, n) else {
            continue;
        };
        if d.join(format!("{}-{}", t.topic, t.partition)).is_dir() {
            holders.push(d);
        }
    }
    match holders.as_slice() {
        [] => Ok(first.clone()),
        [one] => Ok((*one).clone()),
        [a, b, ..] => anyhow::bail!(
            "{} and {} both hold group {group:?}'s offsets partition: one broker keeps one copy (another \
             broker's directory is given with --replica DIR)",
            a.display(),
            b.display()
        ),
    }
}

/// What every writer takes: the topic configuration it writes with, and
/// what it does with hard-linked files.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct WriteArgs {
    /// A topic config as the broker holds it (segment.bytes, segment.ms,
    /// segment.index.bytes, index.interval.bytes, max.message.bytes,
    /// message.timestamp.type), over the topic, broker and cluster configs
    /// of the KRaft metadata and Kafka's defaults: e.g. a value set only in
    /// server.properties, which a log directory does not hold. Repeatable.
    #[arg(long = "config", value_name = "KEY=VALUE")]
    pub config: Vec<String>,
    /// Write to a private copy of a file that has other hard links (a
    /// backup made with `cp -al`), instead of refusing it: the other names
    /// keep the old bytes.
    #[arg(long)]
    pub copy_hard_linked: bool,
    /// Say on stderr the topic configuration the write uses (segment.bytes,
    /// segment.ms, index.interval.bytes, ..., each with where its value
    /// comes from: topic config, broker config, --config or Kafka's
    /// default).
    #[arg(short, long)]
    pub verbose: bool,
}

impl WriteArgs {
    /// The append configuration of `topic` in `data_dir`, from `image`
    /// (see `kaen_log::inspect::topic_config`). With `--verbose`, when
    /// `writing` (not a dry run, which appends nothing), it is said on
    /// stderr.
    pub fn append_config(
        &self,
        image: Option<&kaen_log::metadata::image::Image>,
        (data_dir, topic): (&std::path::Path, &str),
        now_ms: i64,
        writing: bool,
    ) -> kaen_log::Result<kaen_log::log::AppendConfig> {
        let overrides = kaen_log::inspect::topic_config::parse_overrides(&self.config)?;
        let resolved = kaen_log::inspect::topic_config::resolve(image, data_dir, topic, &overrides);
        if writing && self.verbose {
            eprintln!(
                "klog: {}: {topic}: {}",
                data_dir.display(),
                resolved.describe()
            );
        }
        Ok(kaen_log::log::AppendConfig {
            copy_hard_linked: self.copy_hard_linked,
            ..resolved.append_config(now_ms)?
        })
    }
}

/// How offset expiry is judged.
#[derive(Debug, Clone, clap::Args)]
pub struct RetentionArgs {
    /// The cluster's offsets.retention.minutes: an offset older than this
    /// (counted as Kafka counts it) shows as expired.
    #[arg(long, value_name = "MINUTES", default_value_t = kaen_log::offsets::standing::DEFAULT_RETENTION_MINUTES,
          value_parser = clap::value_parser!(i64).range(1..=i64::from(i32::MAX)))]
    pub offsets_retention_minutes: i64,
    /// The time (epoch ms) to judge expiry at; default: now.
    #[arg(long, value_name = "MS")]
    pub now_ms: Option<i64>,
}

impl RetentionArgs {
    /// The retention to judge by.
    pub fn retention(&self) -> kaen_log::offsets::standing::Retention {
        kaen_log::offsets::standing::Retention {
            retention_ms: self.offsets_retention_minutes * 60_000,
            now_ms: self.now_ms.unwrap_or_else(crate::cmd::now_ms),
        }
    }
}

/// The internal topic of the partition folder holding `log` (or of `log`
/// itself when it is a folder); a KRaft bootstrap snapshot is the
/// metadata topic's.
pub fn internal_topic(log: &std::path::Path) -> Option<crate::report::internal::Internal> {
    use crate::report::internal::Internal;
    if log.file_name().and_then(|n| n.to_str()) == Some(kaen_log::metadata::BOOTSTRAP_FILE) {
        return Some(Internal::ClusterMetadata);
    }
    let dir = if log.is_dir() { log } else { log.parent()? };
    let (topic, _, _) = kaen_log::log::parse_partition_dir(dir.file_name()?.to_str()?)?;
    Internal::of_topic(&topic)
}

/// The annotated layout a partition's internal topic gets: its keys and
/// values field by field where the layout knows them.
pub fn layout_topic(
    internal: Option<crate::report::internal::Internal>,
) -> kaen_log::inspect::layout::Topic {
    use crate::report::internal::Internal;
    use kaen_log::inspect::layout::Topic;
    match internal {
        Some(Internal::Offsets) => Topic::Offsets,
        Some(Internal::ClusterMetadata) => Topic::Metadata,
        Some(Internal::ShareGroupState) => Topic::ShareGroupState,
        _ => Topic::Plain,
    }
}
