//! `klog verify-crc`: check every batch of segments, partitions or data directories.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::verify::{self, Report};

use crate::cli::OutputFormat;
use crate::exit::Outcome;
use crate::report::Output;

/// Check every batch's CRC-32C (CRC-32 for legacy messages), its framing and
/// header, its records (decompressed when needed), the order of offsets
/// within and across segments, each segment's base offset against its file
/// name, and how each file ends (torn tail, trailing zero bytes).
///
/// Each problem is printed as `file:position kind detail`, where position is
/// the byte where the damaged batch (or torn tail) starts and the detail
/// names the exact byte. Exit 0 when clean, 1 when anything was found.
#[derive(Debug, clap::Args)]
pub struct VerifyCrcArgs {
    /// Data directories, partition folders or segment files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// The most bytes one batch's records may decompress to.
    #[arg(long, default_value_t = DecodeLimits::default().max_decompressed)]
    pub max_decompressed_bytes: u64,
}

pub fn run(args: &VerifyCrcArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let opts = verify::Options {
        limits: DecodeLimits {
            max_decompressed: args.max_decompressed_bytes,
        },
    };
    let mut total = Report::default();
    for path in &args.paths {
        let r = verify::verify_path(path, &opts)
            .with_context(|| format!("verify-crc {}", path.display()))?;
        total.checked.files += r.checked.files;
        total.checked.batches += r.checked.batches;
        total.checked.records += r.checked.records;
        total.checked.bytes += r.checked.bytes;
        total.problems.extend(r.problems);
    }
    match args.format {
        OutputFormat::Text => {
            for p in &total.problems {
                writeln!(
                    out,
                    "{}:{} {} {}",
                    p.file.display(),
                    p.position,
                    p.kind,
                    p.detail
                )?;
            }
            let c = total.checked;
            let verdict = match total.problems.len() {
                0 => "ok".to_string(),
                1 => "1 problem".to_string(),
                n => format!("{n} problems"),
            };
            writeln!(
                out,
                "{verdict}: checked {} files, {} batches, {} records, {} bytes",
                c.files, c.batches, c.records, c.bytes
            )?;
        }
        OutputFormat::Json => {
            let problems: Vec<_> = total
                .problems
                .iter()
                .map(|p| {
                    serde_json::json!({
                        "file": p.file.display().to_string(),
                        "position": p.position,
                        "kind": p.kind,
                        "detail": p.detail,
                        "base_offset": p.base_offset,
                    })
                })
                .collect();
            let c = total.checked;
            let doc = serde_json::json!({
                "ok": total.ok(),
                "checked": {"files": c.files, "batches": c.batches, "records": c.records, "bytes": c.bytes},
                "problems": problems,
            });
            serde_json::to_writer(&mut *out, &doc)?;
            writeln!(out)?;
        }
    }
    Ok(Outcome::from_count(total.problems.len() as u64))
}
