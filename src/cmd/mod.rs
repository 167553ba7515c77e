//! One module per subcommand, each with its clap `Args` and its `run`.

pub mod cluster;
pub mod commit;
pub mod diff;
pub mod dump_segment;
pub mod eos_demo;
pub mod generate;
pub mod group_demo;
pub mod groups;
pub mod info;
pub mod lag;
pub mod metadata;
pub mod produce;
pub mod replay_offsets;
pub mod reset_offsets;
pub mod stats;
pub mod summary;
pub mod tombstone;
pub mod transactions;
pub mod verify_crc;

use crate::cli::Command;
use crate::exit::Outcome;
use crate::report::Output;

/// Run `command`, writing data to `out`.
pub fn run(command: &Command, out: &mut Output) -> anyhow::Result<Outcome> {
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
        Command::Tombstone(args) => tombstone::run(args, out),
        Command::ResetOffsets(args) => reset_offsets::run(args, out),
        Command::Commit(args) => commit::run(args, out),
        Command::Transactions(args) => transactions::run(args, out),
        Command::Stats(args) => stats::run(args, out),
        Command::Produce(args) => produce::run(args, out),
        Command::GroupDemo(args) => group_demo::run(args, out),
        Command::EosDemo(args) => eos_demo::run(args, out),
        Command::Groups(args) => groups::run(args, out),
        Command::Completions(args) => generate::run_completions(args, out),
        Command::Generate(args) => generate::run(args, out),
    }
}

/// `n` (from `flag`) clamped to the cores this process may run on
/// (`available_parallelism`, which follows the CPU affinity mask): more
/// workers than cores only take turns on them, and thousands of them cost
/// more in starting and switching than they gain. Said once on stderr when
/// it clamps; the output is the same whatever the number.
pub fn clamp_to_cores(flag: &str, n: usize) -> usize {
    let cores = std::thread::available_parallelism().map_or(1, |c| c.get());
    if n > cores {
        crate::report::say!("note: {flag} {n} clamped to the {cores} cores available");
        cores
    } else {
        n
    }
}

/// Milliseconds since the Unix epoch, now (for commands without `--now-ms`).
pub fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0)
}
