//! The command line: global options and one variant per subcommand.

use clap::{Parser, Subcommand, ValueEnum};

use crate::cmd;

/// klog reads Kafka-format partition folders directly, with no broker
/// running: dump and verify segments and indexes, and append through one
/// append path that takes the data directory's lock.
///
/// Exit codes: 0 = done and clean, 1 = ran and found problems,
/// 2 = could not run (bad arguments, unreadable input, lock held).
#[derive(Debug, Parser)]
#[command(name = "klog", version, max_term_width = 100)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
    /// Never wrap table cells to fit the terminal (tables are never wrapped
    /// when stdout is not a terminal).
    #[arg(long, global = true)]
    pub wide: bool,
    /// No progress display on stderr.
    #[arg(long, short, global = true)]
    pub quiet: bool,
    /// How `--format csv` writes its cells. `escape` (the default): control
    /// and format characters as text shows them (`\x1b`, `\u{202e}`), and a
    /// cell that a spreadsheet would run as a formula (one that starts with
    /// `=`, `+`, `-`, `@`, a tab or a line end, and is not a number such as
    /// `-1`) prefixed with `'`, as OWASP advises against CSV injection.
    /// `raw`: the exact text, RFC 4180 quoting only.
    #[arg(long, global = true, value_enum, default_value_t = CsvCells::Escape)]
    pub csv_cells: CsvCells,
    /// How text output shows instants (commit, batch and transaction
    /// times): `iso` (the default), ISO-8601 in UTC with milliseconds
    /// (2023-11-14T22:13:20.000Z); `ms`, epoch milliseconds as Kafka stores
    /// them. JSON, JSONL and CSV always carry epoch milliseconds.
    #[arg(long, global = true, value_enum, default_value_t = TimeFormat::Iso)]
    pub time_format: TimeFormat,
}

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

/// `--csv-cells`: how CSV cells are written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CsvCells {
    /// Escaped as text shows them, formulas made inert with a leading `'`.
    Escape,
    /// The exact text.
    Raw,
}

impl CsvCells {
    /// The library's name for it.
    pub fn mode(self) -> kaen_log::escape::CsvCells {
        match self {
            CsvCells::Escape => kaen_log::escape::CsvCells::Escape,
            CsvCells::Raw => kaen_log::escape::CsvCells::Raw,
        }
    }
}

/// The subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    DumpSegment(cmd::dump_segment::DumpSegmentArgs),
    VerifyCrc(cmd::verify_crc::VerifyCrcArgs),
    Diff(cmd::diff::DiffArgs),
    ReplayOffsets(cmd::replay_offsets::ReplayOffsetsArgs),
    Lag(cmd::lag::LagArgs),
    Groups(cmd::groups::GroupsArgs),
    Info(cmd::info::InfoArgs),
    Metadata(cmd::metadata::MetadataArgs),
    Summary(cmd::summary::SummaryArgs),
    Cluster(cmd::cluster::ClusterArgs),
    Report(cmd::report::ReportArgs),
    Tombstone(cmd::tombstone::TombstoneArgs),
    ResetOffsets(cmd::reset_offsets::ResetOffsetsArgs),
    Commit(cmd::commit::CommitArgs),
    Transactions(cmd::transactions::TransactionsArgs),
    Stats(cmd::stats::StatsArgs),
    Produce(cmd::produce::ProduceArgs),
    GroupDemo(cmd::group_demo::GroupDemoArgs),
    EosDemo(cmd::eos_demo::EosDemoArgs),
    Completions(cmd::generate::CompletionsArgs),
    #[command(hide = true)]
    Generate(cmd::generate::GenerateArgs),
}

impl Command {
    /// The paths a command only reads; `None` for a command that writes,
    /// which takes the data directories' locks and refuses a running
    /// broker's (dry runs only read).
    pub fn read_paths(&self) -> Option<Vec<&std::path::Path>> {
        use std::path::{Path, PathBuf};
        fn all(paths: &[PathBuf]) -> Vec<&Path> {
            paths.iter().map(PathBuf::as_path).collect()
        }
        Some(match self {
            Command::DumpSegment(a) => a
                .paths
                .iter()
                .chain(&a.files)
                .map(PathBuf::as_path)
                .collect(),
            Command::VerifyCrc(a) if !a.repair || a.dry_run => all(&a.paths),
            Command::Diff(a) => vec![a.a.as_path(), a.b.as_path()],
            Command::ReplayOffsets(a) => all(&a.dirs),
            Command::Lag(a) => all(&a.dirs),
            Command::Groups(a) => all(&a.dirs),
            Command::Info(a) => all(&a.dirs),
            Command::Metadata(a) => vec![a.dir.as_path()],
            Command::Summary(a) => all(&a.dirs),
            Command::Transactions(a) => all(&a.paths),
            Command::Report(a) => a.read_paths(),
            Command::Stats(a) => all(&a.paths),
            Command::ResetOffsets(a) if !a.execute => all(&a.dirs),
            Command::Tombstone(a) if a.dry_run => all(&a.dirs),
            _ => return None,
        })
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
    pub fn severity(self) -> kaen_log::findings::Severity {
        use kaen_log::findings::Severity;
        match self {
            FailOn::Error => Severity::Error,
            FailOn::Warning => Severity::Warning,
            FailOn::Note => Severity::Note,
        }
    }
}

/// Parse `--isolation` into the library's one [`Isolation`] (Kafka's
/// `read_committed` spelling is accepted too).
pub fn isolation(s: &str) -> Result<kaen_log::txn::Isolation, String> {
    s.parse()
}

/// How text output shows instants (JSON, JSONL and CSV always carry epoch
/// milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum TimeFormat {
    /// ISO-8601 in UTC with milliseconds (2023-11-14T22:13:20.000Z).
    #[default]
    Iso,
    /// Epoch milliseconds, as Kafka stores them.
    Ms,
}

impl TimeFormat {
    /// `ms` as this format shows it.
    pub fn show(self, ms: i64) -> String {
        match self {
            TimeFormat::Ms => ms.to_string(),
            TimeFormat::Iso => kaen_log::time::format_iso_ms(ms),
        }
    }
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

    /// Refuse (or, with --allow-missing-replicas, warn about) a write that
    /// leaves replicas of the partition out.
    pub fn check(&self, replicas: &kaen_log::offsets::write::Replicas) -> kaen_log::Result<()> {
        if let Some(w) =
            replicas.check_replicas(self.allow_missing_replicas, self.replication_factor)?
        {
            crate::report::say!("{w}");
        }
        Ok(())
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
}

impl WriteArgs {
    /// The append configuration of `topic` in `data_dir`, from `image`
    /// (see `kaen_log::topic_config`), said on stderr when anything but Kafka's
    /// defaults is used or the directory is a Kafka log directory.
    pub fn append_config(
        &self,
        image: Option<&kaen_log::metadata::image::Image>,
        data_dir: &std::path::Path,
        topic: &str,
        now_ms: i64,
        kafka: bool,
    ) -> kaen_log::Result<kaen_log::log::AppendConfig> {
        let overrides = kaen_log::topic_config::parse_overrides(&self.config)?;
        let resolved = kaen_log::topic_config::resolve(image, data_dir, topic, &overrides);
        if kafka || !resolved.all_defaults() {
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
