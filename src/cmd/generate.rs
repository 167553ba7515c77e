//! `klog completions` and the hidden `klog generate man DIR`, both built
//! from the clap definitions so they cannot drift from `--help`.

use std::path::PathBuf;

use anyhow::Context;
use clap::CommandFactory;

use crate::cli::Cli;
use crate::exit::Outcome;
use crate::report::Output;

/// Print shell completions for klog.
#[derive(Debug, clap::Args)]
pub struct CompletionsArgs {
    /// The shell.
    #[arg(value_enum)]
    pub shell: clap_complete::Shell,
}

/// Generate man pages (klog.1 and one page per subcommand) into a folder.
#[derive(Debug, clap::Args)]
pub struct GenerateArgs {
    /// What to generate: only `man` is known.
    #[arg(value_parser = ["man"])]
    pub what: String,
    /// Output folder.
    pub dir: PathBuf,
}

pub fn run_completions(args: &CompletionsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    // The hidden `generate` builds the man pages; it is not for users'
    // shells, so it is left out of the completions.
    clap_complete::generate(args.shell, &mut completions_command(), "klog", out);
    Ok(Outcome::Clean)
}

/// klog's command line without its hidden subcommands.
fn completions_command() -> clap::Command {
    let full = Cli::command();
    let visible: Vec<clap::Command> = full
        .get_subcommands()
        .filter(|s| !s.is_hide_set())
        .cloned()
        .collect();
    let mut cmd = clap::Command::new("klog")
        .version(env!("CARGO_PKG_VERSION"))
        .subcommand_required(true);
    for sub in visible {
        cmd = cmd.subcommand(sub);
    }
    cmd
}

pub fn run(args: &GenerateArgs, _out: &mut Output) -> anyhow::Result<Outcome> {
    std::fs::create_dir_all(&args.dir).with_context(|| format!("create {}", args.dir.display()))?;
    let cmd = Cli::command();
    clap_mangen::generate_to(cmd, &args.dir)
        .with_context(|| format!("write man pages to {}", args.dir.display()))?;
    Ok(Outcome::Clean)
}
