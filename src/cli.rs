//! The command line: global options and one variant per subcommand.

use clap::{CommandFactory, Parser, ValueEnum};

use crate::report::TimeFormat;

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
    /// Never fit tables to the terminal: on a terminal (`COLUMNS` wide, or
    /// its window) a table too wide has its headers broken after a hyphen
    /// and its longest text cells cut short with `…`, or shows one record
    /// per block when even that does not fit. Never when stdout is not a
    /// terminal.
    #[arg(long, global = true, visible_alias = "no-wrap")]
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

use crate::cmd::dispatch;
pub use crate::cmd::Command;

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
    crate::cmd::output_guard::check(command.output_file(), &command.data_paths())?;
    if let Some(paths) = command.read_paths() {
        crate::cmd::warn_if_in_use(&paths);
    }
    dispatch(command, out, Cli::command)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    /// Every declared subcommand is the command line's, in its order, and
    /// declares examples, related pages and, when it prints JSON (a
    /// `--format` that takes `json`), the schema of its document.
    #[test]
    fn every_subcommand_declares_its_page_and_schema() {
        let cli = Cli::command();
        let names: Vec<&str> = cli
            .get_subcommands()
            .map(|c| c.get_name())
            .filter(|n| !["completions", "generate"].contains(n))
            .collect();
        let declared = crate::cmd::declared();
        assert_eq!(declared.iter().map(|d| d.name).collect::<Vec<_>>(), names);
        for d in &declared {
            assert!(!d.examples.is_empty(), "{}: no EXAMPLES", d.name);
            assert!(!d.see_also.is_empty(), "{}: no SEE ALSO", d.name);
            let sub = cli.find_subcommand(d.name).unwrap();
            let json = sub
                .get_arguments()
                .find(|a| a.get_long() == Some("format"))
                .is_some_and(|a| {
                    a.get_possible_values()
                        .iter()
                        .any(|v| v.get_name() == "json")
                });
            assert_eq!(
                (d.schemas)().is_empty(),
                !json,
                "{}: a JSON document needs its schema, and only then",
                d.name
            );
        }
    }
}
