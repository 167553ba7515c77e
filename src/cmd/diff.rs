//! `klog diff`: compare two copies of a partition.

use std::io::Write;
use std::path::PathBuf;

use kaen_log::diff::{compare, BatchCopy};
use serde_json::json;

use crate::cli::OutputFormat;
use crate::exit::Outcome;
use crate::report::Output;

/// Compare two copies of one partition (two replicas' folders, or a disk
/// and its backup) batch by batch: the common prefix, the first offset where
/// they diverge, which copy holds a CRC-valid batch there, and how far each
/// extends, so you can tell which copy to keep.
///
/// Exit 0 when the copies are identical, 1 when they differ.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The first copy (a partition folder or a segment file).
    pub a: PathBuf,
    /// The second copy.
    pub b: PathBuf,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
}

fn describe(c: &Option<BatchCopy>) -> String {
    match c {
        None => "no batch (this copy ends here)".into(),
        Some(c) => format!(
            "{}:{} offsets {}..={}, CRC {}",
            c.file.display(),
            c.position,
            c.base_offset,
            c.last_offset,
            if c.crc_valid { "valid" } else { "INVALID" }
        ),
    }
}

fn json_batch(c: &Option<BatchCopy>) -> serde_json::Value {
    c.as_ref().map_or(serde_json::Value::Null, |c| {
        json!({"file": c.file.display().to_string(), "position": c.position, "base_offset": c.base_offset, "last_offset": c.last_offset, "crc_valid": c.crc_valid})
    })
}

pub fn run(args: &DiffArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let c = compare(&args.a, &args.b)?;
    let (a, b) = (args.a.display(), args.b.display());
    let verdict = match &c.divergence {
        None => "identical".to_string(),
        Some((_, x, y)) => {
            let valid = |v: &Option<BatchCopy>| v.as_ref().is_some_and(|c| c.crc_valid);
            match (valid(x), valid(y)) {
                (true, false) => format!("keep A: at the divergence only A's batch is valid, and A extends to {}", c.end_a),
                (false, true) => format!("keep B: at the divergence only B's batch is valid, and B extends to {}", c.end_b),
                (true, true) => format!("both hold valid but different batches there (replicas that diverged): A extends to {}, B to {}", c.end_a, c.end_b),
                (false, false) => "neither copy has a valid batch at the divergence".to_string(),
            }
        }
    };
    match args.format {
        OutputFormat::Text => {
            writeln!(out, "A: {a}\nB: {b}")?;
            match c.common_last_offset {
                Some(last) => writeln!(
                    out,
                    "common prefix: {} batches, offsets up to {last}",
                    c.common_batches
                )?,
                None => writeln!(out, "common prefix: none")?,
            }
            if let Some((offset, x, y)) = &c.divergence {
                writeln!(out, "diverge at offset {offset}:")?;
                writeln!(out, "  A: {}", describe(x))?;
                writeln!(out, "  B: {}", describe(y))?;
            }
            writeln!(
                out,
                "A extends to offset {} (log end), B to {}",
                c.end_a, c.end_b
            )?;
            writeln!(out, "verdict: {verdict}")?;
        }
        OutputFormat::Json => {
            let doc = json!({
                "a": a.to_string(), "b": b.to_string(),
                "identical": c.divergence.is_none(),
                "common_batches": c.common_batches, "common_last_offset": c.common_last_offset,
                "divergence": c.divergence.as_ref().map(|(o, x, y)| json!({"offset": o, "a": json_batch(x), "b": json_batch(y)})),
                "end_a": c.end_a, "end_b": c.end_b, "verdict": verdict,
            });
            serde_json::to_writer(&mut *out, &doc)?;
            writeln!(out)?;
        }
    }
    Ok(if c.divergence.is_none() {
        Outcome::Clean
    } else {
        Outcome::Findings(1)
    })
}
