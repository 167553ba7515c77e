//! `.index` and `.timeindex` files in text as kafka-dump-log dumps them
//! when their log is beside them: its entries up to where it stops, its
//! checks against the log ([`kaen_log::inspect::dump_log`]) kept for the
//! end of the run ([`AfterRun`]), and a stop where it throws.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::inspect::dump_log::{self, LogReads};

use super::KafkaStops;
use crate::report::document::Entries;
use crate::report::kafka_dump::after_run::AfterRun;
use crate::report::table::escape_cell;
use crate::report::Output;

/// How an index is dumped.
pub(super) struct IndexArgs {
    pub time: bool,
    /// `--verify-index-only`: no entry printed.
    pub verify_only: bool,
    pub max_message_size: i32,
    pub limits: DecodeLimits,
    /// The Java tool's time-index walk ([`dump_log::time_index`]).
    pub eager: bool,
}

/// Dump the index at `path` (base offset `base`) whose log is `log`.
/// Its "Dumping" line is written already.
pub(super) fn dump(
    path: &Path,
    log: &Path,
    base: i64,
    args: &IndexArgs,
    (sink, after): (&mut Entries, &mut AfterRun),
    out: &mut Output,
) -> anyhow::Result<()> {
    let read = |p: &Path| -> anyhow::Result<Vec<u8>> {
        Ok(kaen_log::log::files::read_regular(p, i32::MAX as u64)?.unwrap_or_default())
    };
    let bytes = read(path)?;
    let file = std::fs::File::open(log).with_context(|| format!("{}", log.display()))?;
    let len = file.metadata()?.len();
    let reads = LogReads { file: &file, len };
    let found = if args.time {
        // The offset index beside it finds each entry's batch (an absent
        // one is empty: every search starts at position 0).
        let index = read(&path.with_extension("index"))?;
        dump_log::time_index(&bytes, &index, base, &reads, (args.limits, args.eager))?
    } else {
        if bytes.len() < 8 {
            writeln!(
                out,
                "{} is empty.",
                escape_cell(&path.display().to_string())
            )?;
            return Ok(());
        }
        dump_log::offset_index(&bytes, base, &reads, args.max_message_size)?
    };
    if !args.verify_only {
        for (a, b) in &found.shown {
            if args.time {
                writeln!(out, "timestamp: {a} offset: {b}")?;
            } else {
                writeln!(out, "offset: {a} position: {b}")?;
            }
        }
    }
    after.index(&absolute(path), &found.disagreements);
    let slot = if args.time { 12 } else { 8 };
    let slots = bytes.len() / slot;
    if found.threw.is_none() && found.shown.len() < slots {
        crate::report::say!(
            "{}: entry {} names the base offset again: kafka-dump-log takes it and the {} slots after it \
             for preallocated space, and stops",
            escape_cell(&path.display().to_string()),
            found.shown.len(),
            slots - found.shown.len() - 1
        );
    }
    match found.threw {
        Some(t) => Err(KafkaStops {
            file: log.display().to_string(),
            position: t.position,
            what: format!(
                "{} (for {})",
                t.why,
                escape_cell(&path.display().to_string())
            ),
            // Kafka's tool reads the first slot as an entry even where it
            // is preallocated space: whether the index is wrong is klog's
            // own check's to say.
            problems: super::index_verify::verify_findings(path, base, sink, out)?,
        }
        .into()),
        None => Ok(()),
    }
}

/// `File.getAbsolutePath`: a relative path after the working directory,
/// as given (not normalized).
pub(super) fn absolute(path: &Path) -> String {
    std::env::current_dir()
        .map(|d| d.join(path))
        .unwrap_or_else(|_| path.to_path_buf())
        .display()
        .to_string()
}
