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

/// How tables show times (JSON always carries epoch milliseconds).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, ValueEnum)]
pub enum TimeFormat {
    /// Epoch milliseconds, as Kafka stores them.
    #[default]
    Ms,
    /// ISO-8601 in UTC with milliseconds (2023-11-14T22:13:20.000Z).
    Iso,
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

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn cli_definition_is_consistent() {
        Cli::command().debug_assert();
    }
}
