//! `verify-crc --recovery-preview`: what a broker restarting on these directories would do, partition by partition.

use super::*;

/// What a broker's recovery would do to one partition: the library's
/// prediction, and its text lines.
#[derive(Serialize, JsonSchema)]
struct PreviewOut {
    #[serde(flatten)]
    restart: PartitionRestart,
    #[serde(skip)]
    lines: Vec<String>,
}

/// `verify-crc --recovery-preview`'s document.
#[derive(Serialize, JsonSchema)]
pub struct RecoveryReport {
    /// Each broker log directory given: how its broker went down and what
    /// its next start re-reads (first in text).
    restarts: Vec<crate::cmd::RestartOut>,
    partitions: Vec<PreviewOut>,
    /// Partitions recovery would change.
    changes: u64,
}

impl Report for RecoveryReport {
    const COMMAND: &'static str = "verify-crc";

    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }

    fn text(&self, _fit: crate::report::table::Fit) -> String {
        let heads = self.restarts.iter().map(|r| format!("{}\n", r.headline));
        heads
            .chain(
                self.partitions
                    .iter()
                    .flat_map(|p| &p.lines)
                    .map(|l| format!("{}\n", escape_cell(l))),
            )
            .collect()
    }

    fn write_lines(&self, lines: &mut Jsonl<'_>) -> anyhow::Result<()> {
        for p in &self.partitions {
            lines.line("recovery", p)?;
        }
        Ok(())
    }
}

/// `--recovery-preview`: what a broker restarting on each partition given
/// would cut and delete (`kaen_log::inspect::restart`); exit 1 when it
/// would change any.
pub(super) fn recovery_preview(args: &VerifyCrcArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let restarts = crate::cmd::restarts_of(&args.paths);
    let partitions = targets::partitions(&args.paths, Folders::Loaded)?;
    let mut changes = 0;
    let mut partitions_out = Vec::new();
    for (data_dir, restart) in kaen_log::inspect::restart::preview(partitions)? {
        // A log directory given has its headline; a partition folder given
        // alone says its shutdown on its own line.
        let headline = args.paths.contains(&data_dir) && !restarts.is_empty();
        let lines = preview_lines(&restart, headline);
        changes += restart.changes();
        partitions_out.push(PreviewOut { restart, lines });
    }
    emit(
        &RecoveryReport {
            restarts,
            partitions: partitions_out,
            changes,
        },
        args.format,
        out,
    )?;
    Ok(Outcome::from_count(changes))
}
