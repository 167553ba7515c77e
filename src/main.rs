//! The `klog` binary: parse the command line, run the subcommand, map the
//! outcome to the exit-code contract (see `exit.rs`).

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

mod cli;
mod cmd;
mod exit;
mod report;

use std::process::ExitCode;

use clap::Parser;

fn main() -> ExitCode {
    ignore_file_size_signal();
    let mut cli = match cli::Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) if e.use_stderr() => {
            // A usage error quotes the command line: shown escaped, as every
            // message is (clap strips only terminal escape sequences).
            report::say_lines(&e.render().to_string());
            return ExitCode::from(2);
        }
        Err(e) => e.exit(),
    };
    cli.command.dedupe_paths();
    let mut out = report::Output::stdout()
        .with_csv_cells(cli.csv_cells.mode())
        .with_time_format(cli.time_format)
        .with_quiet(cli.quiet)
        .with_fit(report::terminal_width().filter(|_| !cli.wide));
    let result = cli::run(&cli.command, &mut out).and_then(|o| out.flush().map(|_| o));
    exit::finish(result)
}

/// Ignore SIGXFSZ, whose default action kills the process: a write past a
/// file size limit (`ulimit -f`) then fails with EFBIG instead, and the
/// append path cuts back what the write left (`PartitionAppender::append`),
/// where a kill would leave a torn tail behind.
fn ignore_file_size_signal() {
    // SAFETY: setting a signal's disposition to SIG_IGN installs no handler
    // and runs before any thread is started.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}
