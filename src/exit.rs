//! The exit-code contract, documented once:
//!
//! - 0: the command ran and found nothing wrong;
//! - 1: the command ran and found problems (corruption, a torn tail, lag over
//!   a threshold, nothing to tombstone);
//! - 2: the command could not do its job (bad arguments — clap's own usage
//!   errors also exit 2 — or unreadable input, a held lock, an I/O error).
//!
//! A closed stdout (`klog dump-segment … | head`) is not an error: exit 0.

use std::process::ExitCode;

/// What a command that ran to the end found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Nothing wrong.
    Clean,
    /// This many problems were found (reported already).
    Findings(u64),
}

impl Outcome {
    /// Clean when `n` is 0, else findings.
    pub fn from_count(n: u64) -> Self {
        if n == 0 {
            Outcome::Clean
        } else {
            Outcome::Findings(n)
        }
    }
}

/// Map a command's result to the process exit code, printing an error once.
pub fn finish(result: anyhow::Result<Outcome>) -> ExitCode {
    match result {
        Ok(Outcome::Clean) => ExitCode::SUCCESS,
        Ok(Outcome::Findings(_)) => ExitCode::from(1),
        Err(err) if is_broken_pipe(&err) => ExitCode::SUCCESS,
        Err(err) => {
            crate::report::say!("{err:#}");
            ExitCode::from(2)
        }
    }
}

fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|e| {
        e.downcast_ref::<std::io::Error>()
            .is_some_and(|io| io.kind() == std::io::ErrorKind::BrokenPipe)
    })
}
