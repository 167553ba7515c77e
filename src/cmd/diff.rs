//! `klog diff`: compare two copies of a partition.

use std::io::Write;
use std::path::PathBuf;

use kaen_log::diff::{compare, BatchCopy, Comparison, FileDifference};
use kaen_log::findings::Finding;
use serde::Serialize;

use crate::cli::OutputFormat;
use crate::exit::Outcome;
use crate::report::table::escape_cell;
use crate::report::Output;

/// Compare two copies of one partition (two replicas' folders, or a disk
/// and its backup) batch by batch: the common prefix, the first offset where
/// they diverge, which copy holds a CRC-valid batch there, and how far each
/// extends, so you can tell which copy to keep. Then everything else that is
/// not the same: damage one copy holds (a torn tail, junk, a segment of
/// junk), files only one copy has, and files in both whose bytes differ
/// (indexes and checkpoints included).
///
/// Both copies are read in step, so memory does not grow with their size.
///
/// Exit 0 when the copies hold the same log (the same batches, every
/// segment file the same byte for byte), 1 when they differ. Other files
/// that differ are listed but do not count: each broker writes its own
/// indexes, snapshots and checkpoints.
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

/// A batch at the divergence, in JSON.
#[derive(Serialize)]
struct BatchJson {
    file: String,
    position: u64,
    base_offset: i64,
    last_offset: i64,
    crc_valid: bool,
}

impl BatchJson {
    fn of(c: &Option<BatchCopy>) -> Option<Self> {
        c.as_ref().map(|c| BatchJson {
            file: c.file.display().to_string(),
            position: c.position,
            base_offset: c.base_offset,
            last_offset: c.last_offset,
            crc_valid: c.crc_valid,
        })
    }
}

#[derive(Serialize)]
struct DivergenceJson {
    offset: i64,
    a: Option<BatchJson>,
    b: Option<BatchJson>,
}

#[derive(Serialize)]
struct FileJson<'a> {
    name: &'a str,
    len_a: u64,
    len_b: u64,
    first_difference: u64,
}

#[derive(Serialize)]
struct FilesJson<'a> {
    only_in_a: &'a [String],
    only_in_b: &'a [String],
    differ: Vec<FileJson<'a>>,
}

/// The JSON document.
#[derive(Serialize)]
struct DiffJson<'a> {
    a: String,
    b: String,
    identical: bool,
    common_batches: u64,
    common_last_offset: Option<i64>,
    divergence: Option<DivergenceJson>,
    end_a: i64,
    end_b: i64,
    files: FilesJson<'a>,
    verdict: String,
    /// The damage each walk met, A's then B's.
    findings: Vec<&'a Finding>,
}

/// Which copy to keep, in words.
fn verdict(c: &Comparison) -> String {
    let damage = |d: &[Finding]| match d.first() {
        None => "no damage".to_string(),
        Some(f) => format!(
            "{} damaged place{} (the first: {} at {}:{})",
            d.len(),
            if d.len() == 1 { "" } else { "s" },
            f.kind,
            escape_cell(&f.file.display().to_string()),
            f.position
        ),
    };
    match &c.divergence {
        Some((_, x, y)) => {
            let valid = |v: &Option<BatchCopy>| v.as_ref().is_some_and(|c| c.crc_valid);
            match (valid(x), valid(y)) {
                (true, false) => format!("keep A: at the divergence only A's batch is valid, and A extends to {}", c.end_a),
                (false, true) => format!("keep B: at the divergence only B's batch is valid, and B extends to {}", c.end_b),
                (true, true) => format!("both hold valid but different batches there (replicas that diverged): A extends to {}, B to {}", c.end_a, c.end_b),
                // A copy that ends where the other holds only a batch that
                // fails its CRC, with nothing valid beyond it, is the
                // other one repaired.
                (false, false) if c.end_a == c.end_b && (x.is_none() || y.is_none()) => {
                    let (keep, other) = if x.is_none() { ("A", "B") } else { ("B", "A") };
                    format!("keep {keep}: at the divergence {other} holds only a batch that fails its CRC, and nothing valid beyond it; both extend to {}", c.end_a)
                }
                (false, false) => format!("neither copy has a valid batch at the divergence: A extends to {}, B to {}", c.end_a, c.end_b),
            }
        }
        None if c.files.same() => "identical".to_string(),
        None if !c.files.logs_differ() => "identical logs; other files differ (each broker writes its own indexes, snapshots and checkpoints)".to_string(),
        None => {
            match (c.damage_a.is_empty(), c.damage_b.is_empty()) {
                (false, true) => format!(
                    "keep B: the same batches, but A's log also holds bytes that are not batches: {}",
                    damage(&c.damage_a)
                ),
                (true, false) => format!(
                    "keep A: the same batches, but B's log also holds bytes that are not batches: {}",
                    damage(&c.damage_b)
                ),
                _ => format!(
                    "the same batches, but the logs differ outside them: A: {}; B: {}",
                    damage(&c.damage_a),
                    damage(&c.damage_b)
                ),
            }
        }
    }
}

fn write_file_lines(out: &mut Output, c: &Comparison) -> anyhow::Result<()> {
    let names = |v: &[String]| {
        v.iter()
            .map(|n| escape_cell(n).into_owned())
            .collect::<Vec<_>>()
            .join(", ")
    };
    if !c.files.only_in_a.is_empty() {
        writeln!(out, "only in A: {}", names(&c.files.only_in_a))?;
    }
    if !c.files.only_in_b.is_empty() {
        writeln!(out, "only in B: {}", names(&c.files.only_in_b))?;
    }
    for FileDifference {
        name,
        len_a,
        len_b,
        first_difference,
    } in &c.files.differ
    {
        writeln!(
            out,
            "differs: {} (A {len_a} bytes, B {len_b} bytes, first difference at byte {first_difference})",
            escape_cell(name)
        )?;
    }
    for f in c.damage_a.iter().chain(&c.damage_b) {
        writeln!(out, "damage: {}", escape_cell(&f.to_string()))?;
    }
    Ok(())
}

pub fn run(args: &DiffArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let c = compare(&args.a, &args.b)?;
    let (a, b) = (args.a.display(), args.b.display());
    let verdict = verdict(&c);
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
            write_file_lines(out, &c)?;
            writeln!(out, "verdict: {verdict}")?;
        }
        OutputFormat::Json => {
            let doc = DiffJson {
                a: a.to_string(),
                b: b.to_string(),
                identical: c.identical(),
                common_batches: c.common_batches,
                common_last_offset: c.common_last_offset,
                divergence: c.divergence.as_ref().map(|(o, x, y)| DivergenceJson {
                    offset: *o,
                    a: BatchJson::of(x),
                    b: BatchJson::of(y),
                }),
                end_a: c.end_a,
                end_b: c.end_b,
                files: FilesJson {
                    only_in_a: &c.files.only_in_a,
                    only_in_b: &c.files.only_in_b,
                    differ: c
                        .files
                        .differ
                        .iter()
                        .map(|d| FileJson {
                            name: &d.name,
                            len_a: d.len_a,
                            len_b: d.len_b,
                            first_difference: d.first_difference,
                        })
                        .collect(),
                },
                verdict,
                findings: c.damage_a.iter().chain(&c.damage_b).collect(),
            };
            serde_json::to_writer(&mut *out, &doc)?;
            writeln!(out)?;
        }
    }
    Ok(if c.identical() {
        Outcome::Clean
    } else {
        Outcome::Findings(1)
    })
}
