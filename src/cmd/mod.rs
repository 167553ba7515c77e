//! One module per subcommand, each with its clap `Args` and its `run`.

pub mod dump_segment;
pub mod generate;
pub mod produce;
pub mod verify_crc;

use crate::cli::Command;
use crate::exit::Outcome;
use crate::report::Output;

/// Run `command`, writing data to `out`.
pub fn run(command: &Command, out: &mut Output) -> anyhow::Result<Outcome> {
    match command {
        Command::DumpSegment(args) => dump_segment::run(args, out),
        Command::VerifyCrc(args) => verify_crc::run(args, out),
        Command::Produce(args) => produce::run(args, out),
        Command::Completions(args) => generate::run_completions(args, out),
        Command::Generate(args) => generate::run(args, out),
    }
}
