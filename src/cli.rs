//! The command line: global options and one variant per subcommand.

use clap::{CommandFactory, Parser, Subcommand, ValueEnum};

use crate::report::TimeFormat;

use crate::cmd;
use crate::exit::Outcome;
use crate::report::Output;

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
    pub fn mode(self) -> kaen_log::format::escape::CsvCells {
        match self {
            CsvCells::Escape => kaen_log::format::escape::CsvCells::Escape,
            CsvCells::Raw => kaen_log::format::escape::CsvCells::Raw,
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
    Export(cmd::export::ExportArgs),
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
            Command::Export(a) => all(&a.dirs),
            Command::ResetOffsets(a) if !a.execute => all(&a.dirs),
            Command::Tombstone(a) if a.dry_run => all(&a.dirs),
            _ => return None,
        })
    }
}

impl Command {
    /// A command's list of data paths that are read (or, for
    /// `verify-crc`, repaired) as a set: one named twice (`d d/.`, or `d`
    /// and a symlink to it) is read once ([`crate::cmd::dedupe_paths`]).
    pub fn dedupe_paths(&mut self) {
        let paths = match self {
            Command::VerifyCrc(a) => &mut a.paths,
            Command::ReplayOffsets(a) => &mut a.dirs,
            Command::Lag(a) => &mut a.dirs,
            Command::Groups(a) => &mut a.dirs,
            Command::Info(a) => &mut a.dirs,
            Command::Summary(a) => &mut a.dirs,
            Command::Transactions(a) => &mut a.paths,
            Command::Stats(a) => &mut a.paths,
            Command::Export(a) => &mut a.dirs,
            _ => return,
        };
        crate::cmd::dedupe_paths(paths);
    }

    /// Every data path the command reads or writes: its output must land
    /// on none of them (`cmd::output_guard`).
    pub fn data_paths(&self) -> Vec<&std::path::Path> {
        use std::path::{Path, PathBuf};
        fn all(paths: &[PathBuf]) -> Vec<&Path> {
            paths.iter().map(PathBuf::as_path).collect()
        }
        if let Some(paths) = self.read_paths() {
            return paths;
        }
        let mut paths = match self {
            Command::VerifyCrc(a) => all(&a.paths),
            Command::Cluster(a) => all(&a.summaries),
            Command::Tombstone(a) => all(&a.dirs),
            Command::ResetOffsets(a) => all(&a.dirs),
            Command::Commit(a) => all(&a.dirs),
            Command::Produce(a) => vec![a.dir.as_path()],
            Command::GroupDemo(a) => vec![a.dir.as_path()],
            Command::EosDemo(a) => vec![a.dir.as_path()],
            _ => Vec::new(),
        };
        let replicas = match self {
            Command::Tombstone(a) => Some(&a.replicas),
            Command::ResetOffsets(a) => Some(&a.replicas),
            Command::Commit(a) => Some(&a.replicas),
            Command::Produce(a) => Some(&a.replicas),
            _ => None,
        };
        if let Some(r) = replicas {
            paths.extend(all(&r.replica_dirs));
        }
        paths
    }

    /// The file `-o` names, for the commands that take one.
    pub fn output_file(&self) -> Option<&std::path::Path> {
        match self {
            Command::Report(a) => a.output.as_deref(),
            Command::Export(a) => Some(a.output.as_path()),
            _ => None,
        }
    }
}

/// Run `command`, writing data to `out`.
pub fn run(command: &Command, out: &mut Output) -> anyhow::Result<Outcome> {
    use crate::cmd::*;
    crate::cmd::output_guard::check(command.output_file(), &command.data_paths())?;
    if let Some(paths) = command.read_paths() {
        crate::cmd::warn_if_in_use(&paths);
    }
    match command {
        Command::DumpSegment(args) => dump_segment::run(args, out),
        Command::VerifyCrc(args) => verify_crc::run(args, out),
        Command::Diff(args) => diff::run(args, out),
        Command::ReplayOffsets(args) => replay_offsets::run(args, out),
        Command::Lag(args) => lag::run(args, out),
        Command::Info(args) => info::run(args, out),
        Command::Metadata(args) => metadata::run(args, out),
        Command::Summary(args) => summary::run(args, out),
        Command::Cluster(args) => cluster::run(args, out),
        Command::Report(args) => report::run(args, out),
        Command::Tombstone(args) => tombstone::run(args, out),
        Command::ResetOffsets(args) => reset_offsets::run(args, out),
        Command::Commit(args) => commit::run(args, out),
        Command::Transactions(args) => transactions::run(args, out),
        Command::Stats(args) => stats::run(args, out),
        Command::Export(args) => export::run(args, out),
        Command::Produce(args) => produce::run(args, out),
        Command::GroupDemo(args) => group_demo::run(args, out),
        Command::EosDemo(args) => eos_demo::run(args, out),
        Command::Groups(args) => groups::run(args, out),
        Command::Completions(args) => generate::run_completions(args, Cli::command(), out),
        Command::Generate(args) => generate::run(args, Cli::command(), out),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
