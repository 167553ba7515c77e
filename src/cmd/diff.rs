//! `klog diff`: compare two copies of a partition.

use std::path::PathBuf;

use kaen_log::inspect::replica_diff::{compare, BatchCopy, Comparison, Files, Removed, Rewritten};
use kaen_log::log::findings::Finding;
use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::table::escape_cell;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// Compare two copies of one partition (two replicas' folders, or a disk
/// and its backup): the common prefix of identical batches, the first
/// offset where they diverge, which copy holds a CRC-valid batch there, and
/// how far each extends, so you can tell which copy to keep. Then
/// everything else that is not the same: damage one copy holds (a torn
/// tail, junk, a segment of junk), files only one copy has, and files in
/// both whose bytes differ (indexes and checkpoints included).
///
/// Where batches differ in bytes, the copies are compared record by record:
/// they diverge at an offset whose record (key, value, headers, timestamp),
/// leader epoch, producer or existence differs. Each broker's log cleaner
/// rewrites batches on its own schedule (batch boundaries, the delete
/// horizon), so batches that differ while their records agree are a note,
/// not a divergence; so is a record one copy lacks when that copy's
/// cleaner removed it: a later record of its key in that copy, or, once
/// that copy was cleaned past it, a tombstone, an aborted transaction's
/// record or a transaction marker.
///
/// Both copies are read in step, so memory does not grow with their size
/// (a copy lacking records is read once more for the latest offset of each
/// key: memory grows with its distinct keys).
///
/// Exit 0 when the copies are in sync: the same log byte for byte, or the
/// same records with no damage in either; 1 when they differ. Other files
/// that differ are listed but do not count: each broker writes its own
/// indexes, snapshots and checkpoints.
#[derive(Debug, clap::Args)]
pub struct DiffArgs {
    /// The first copy (a partition folder or a segment file).
    pub a: PathBuf,
    /// The second copy.
    pub b: PathBuf,
    /// Output format. CSV is one row per difference, the JSON document's
    /// `differences`: the divergence (each copy's batch there as `a_*`
    /// and `b_*`), each file only one copy has, each file whose bytes
    /// differ, and each place of damage; no row when the copies are the same.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
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

/// One copy's batch at the divergence.
#[derive(Serialize, JsonSchema)]
struct BatchOut {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    file: kaen_log::log::findings::FileFields,
    position: u64,
    base_offset: i64,
    last_offset: i64,
    crc_valid: bool,
}

fn batch_out(c: &Option<BatchCopy>) -> Option<BatchOut> {
    c.as_ref().map(|c| BatchOut {
        file: kaen_log::log::findings::FileFields::of(&c.file),
        position: c.position,
        base_offset: c.base_offset,
        last_offset: c.last_offset,
        crc_valid: c.crc_valid,
    })
}

/// Where the copies first differ.
#[derive(Serialize, JsonSchema)]
struct DivergenceOut {
    offset: i64,
    /// A's batch there (null: A ends before it).
    a: Option<BatchOut>,
    b: Option<BatchOut>,
}

/// Batches that differ in bytes while the records agree: a note, not a
/// divergence (each broker's log cleaner rewrites batches on its own).
#[derive(Serialize, JsonSchema)]
struct RewrittenOut {
    /// The first offset where batches differ in bytes.
    offset: i64,
    /// Batches of each copy that no batch of the other matches byte for
    /// byte, and their bytes.
    batches_a: u64,
    batches_b: u64,
    bytes_a: u64,
    bytes_b: u64,
    /// The first such batch of each copy (null: that copy had ended).
    a: Option<BatchOut>,
    b: Option<BatchOut>,
    /// Records each copy lacks that its cleaner removed.
    removed_a: Removed,
    removed_b: Removed,
}

fn rewritten_out(r: &Rewritten) -> RewrittenOut {
    RewrittenOut {
        offset: r.first_offset(),
        batches_a: r.batches_a,
        batches_b: r.batches_b,
        bytes_a: r.bytes_a,
        bytes_b: r.bytes_b,
        a: batch_out(&r.first_a),
        b: batch_out(&r.first_b),
        removed_a: r.removed_a,
        removed_b: r.removed_b,
    }
}

fn removed_words(r: &Removed) -> String {
    if r.total() == 0 {
        return "none".into();
    }
    let parts: Vec<String> = [
        (r.superseded, "superseded by a later record of its key"),
        (r.tombstones, "tombstone"),
        (r.aborted, "of an aborted transaction"),
        (r.markers, "transaction marker"),
    ]
    .into_iter()
    .filter(|(n, _)| *n > 0)
    .map(|(n, what)| format!("{n} {what}"))
    .collect();
    format!("{} ({})", r.total(), parts.join(", "))
}

/// The note, in words.
fn rewritten_words(r: &Rewritten) -> String {
    let first = |c: &Option<BatchCopy>| match c {
        Some(c) => format!(", the first at {}:{}", c.file.display(), c.position),
        None => String::new(),
    };
    format!(
        "from offset {} the batches differ in bytes but the records agree: A {} ({} bytes{}), B {} ({} bytes{}); records the cleaner removed: from A {}, from B {}",
        r.first_offset(),
        crate::report::plural(r.batches_a, "batch", "batches"),
        r.bytes_a,
        first(&r.first_a),
        crate::report::plural(r.batches_b, "batch", "batches"),
        r.bytes_b,
        first(&r.first_b),
        removed_words(&r.removed_a),
        removed_words(&r.removed_b),
    )
}

/// One difference between the copies (a row of `differences`, and of CSV).
#[derive(Serialize, JsonSchema)]
struct DifferenceOut {
    /// `divergence`, `only_in_a`, `only_in_b`, `file_differs`, `damage_a`,
    /// `damage_b`, or `rewritten` (a note: batches that differ in bytes
    /// while their records agree; `offset` is the first, `a` and `b` each
    /// copy's first such batch).
    kind: &'static str,
    /// The file concerned: a name in the partition folder, or the damaged
    /// file's path (null for the divergence).
    name: Option<String>,
    /// The offset: where the copies diverge, the damaged batch's, or where
    /// batches first differ in bytes.
    offset: Option<i64>,
    /// The damage's byte position in its file.
    position: Option<u64>,
    /// A file that differs: its length in each copy and its first
    /// differing byte.
    len_a: Option<u64>,
    len_b: Option<u64>,
    first_difference: Option<u64>,
    /// At the divergence: each copy's batch there (null: that copy ends);
    /// for `rewritten`, each copy's first batch that differs in bytes.
    a: Option<BatchOut>,
    b: Option<BatchOut>,
    /// What it is, for a person.
    detail: String,
}

impl DifferenceOut {
    fn new(kind: &'static str, name: Option<String>, detail: String) -> Self {
        DifferenceOut {
            kind,
            name,
            offset: None,
            position: None,
            len_a: None,
            len_b: None,
            first_difference: None,
            a: None,
            b: None,
            detail,
        }
    }
}

/// Every difference of `c`, in the order text lists them: the divergence,
/// the files, then the damage (A's, then B's).
fn differences(c: &Comparison) -> Vec<DifferenceOut> {
    let mut out = Vec::new();
    if let Some((offset, x, y)) = &c.divergence {
        out.push(DifferenceOut {
            offset: Some(*offset),
            a: batch_out(x),
            b: batch_out(y),
            ..DifferenceOut::new(
                "divergence",
                None,
                format!("A: {}; B: {}", describe(x), describe(y)),
            )
        });
    }
    if let Some(r) = &c.rewritten {
        out.push(DifferenceOut {
            offset: Some(r.first_offset()),
            a: batch_out(&r.first_a),
            b: batch_out(&r.first_b),
            ..DifferenceOut::new(
                "rewritten",
                None,
                format!("note: {}; {}", rewritten_words(r), verdict(c)),
            )
        });
    }
    for (kind, names) in [
        ("only_in_a", &c.files.only_in_a),
        ("only_in_b", &c.files.only_in_b),
    ] {
        for n in names {
            out.push(DifferenceOut::new(
                kind,
                Some(n.clone()),
                format!(
                    "{} only in {}",
                    n,
                    if kind == "only_in_a" { "A" } else { "B" }
                ),
            ));
        }
    }
    for d in &c.files.differ {
        out.push(DifferenceOut {
            len_a: Some(d.len_a),
            len_b: Some(d.len_b),
            first_difference: Some(d.first_difference),
            ..DifferenceOut::new(
                "file_differs",
                Some(d.name.clone()),
                format!(
                    "A {} bytes, B {} bytes, first difference at byte {}",
                    d.len_a, d.len_b, d.first_difference
                ),
            )
        });
    }
    for (kind, damage) in [("damage_a", &c.damage_a), ("damage_b", &c.damage_b)] {
        for f in damage {
            out.push(DifferenceOut {
                offset: f.offset,
                position: Some(f.position),
                ..DifferenceOut::new(kind, Some(f.file.display().to_string()), f.to_string())
            });
        }
    }
    out
}

/// `klog diff`'s document.
#[derive(Serialize, JsonSchema)]
pub struct DiffReport {
    a: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    a_base64: Option<String>,
    b: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    b_base64: Option<String>,
    /// The same log: the same batches, every segment file the same bytes.
    identical: bool,
    /// Replicas in sync (the exit status): identical, or the same record
    /// at every offset (but records compaction removed) with no damage in
    /// either copy, whatever their batches' bytes.
    in_sync: bool,
    common_batches: u64,
    common_last_offset: Option<i64>,
    divergence: Option<DivergenceOut>,
    /// With no divergence: the batches that differ in bytes while their
    /// records agree (null: none).
    rewritten: Option<RewrittenOut>,
    /// Each copy's log end offset.
    log_end_offset_a: i64,
    log_end_offset_b: i64,
    /// The files of the two copies compared byte for byte.
    files: Files,
    verdict: String,
    /// The damage each walk met, A's then B's.
    findings: Vec<Finding>,
    /// Every difference, one row each (what `--format csv` prints).
    differences: Vec<DifferenceOut>,
    #[serde(skip)]
    described: Option<(String, String)>,
    #[serde(skip)]
    note: Option<String>,
}

impl Report for DiffReport {
    const COMMAND: &'static str = "diff";

    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }

    fn csv_table(&self) -> Option<Table> {
        Some(Table::flat(&self.differences))
    }

    fn text(&self, _fit: crate::report::table::Fit) -> String {
        let mut out = format!("A: {}\nB: {}\n", escape_cell(&self.a), escape_cell(&self.b));
        match self.common_last_offset {
            Some(last) => out.push_str(&format!(
                "common prefix: {}, offsets up to {last}\n",
                crate::report::plural(self.common_batches, "batch", "batches")
            )),
            None => out.push_str("common prefix: none\n"),
        }
        if let (Some(d), Some((x, y))) = (&self.divergence, &self.described) {
            out.push_str(&format!("diverge at offset {}:\n", d.offset));
            out.push_str(&format!("  A: {}\n", escape_cell(x)));
            out.push_str(&format!("  B: {}\n", escape_cell(y)));
        }
        if let Some(n) = &self.note {
            out.push_str(&format!("note: {}\n", escape_cell(n)));
        }
        out.push_str(&format!(
            "A extends to offset {} (log end), B to {}\n",
            self.log_end_offset_a, self.log_end_offset_b
        ));
        let names = |v: &[String]| {
            v.iter()
                .map(|n| escape_cell(n).into_owned())
                .collect::<Vec<_>>()
                .join(", ")
        };
        if !self.files.only_in_a.is_empty() {
            out.push_str(&format!("only in A: {}\n", names(&self.files.only_in_a)));
        }
        if !self.files.only_in_b.is_empty() {
            out.push_str(&format!("only in B: {}\n", names(&self.files.only_in_b)));
        }
        for d in &self.files.differ {
            out.push_str(&format!(
                "differs: {} (A {} bytes, B {} bytes, first difference at byte {})\n",
                escape_cell(&d.name),
                d.len_a,
                d.len_b,
                d.first_difference
            ));
        }
        for f in &self.findings {
            out.push_str(&format!("damage: {}\n", escape_cell(&f.to_string())));
        }
        out.push_str(&format!("verdict: {}\n", self.verdict));
        out
    }
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
        None if c.identical() && c.files.same() => "identical".to_string(),
        None if c.identical() => "identical logs; other files differ (each broker writes its own indexes, snapshots and checkpoints)".to_string(),
        None if c.in_sync() && c.rewritten.is_some() => "in sync: the same record at every offset, in batches that differ in bytes (each broker's log cleaner rewrites its own)".to_string(),
        None if c.in_sync() => "in sync: the same batches, in segment files that differ (each broker's log cleaner groups its own)".to_string(),
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

pub fn run(args: &DiffArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let c = compare(&args.a, &args.b)?;
    let (a, b) = (args.a.display(), args.b.display());
    let identical = c.identical();
    let in_sync = c.in_sync();
    let report = DiffReport {
        a: a.to_string(),
        a_base64: kaen_log::log::findings::path_base64(&args.a),
        b: b.to_string(),
        b_base64: kaen_log::log::findings::path_base64(&args.b),
        identical,
        in_sync,
        common_batches: c.common_batches,
        common_last_offset: c.common_last_offset,
        divergence: c.divergence.as_ref().map(|(o, x, y)| DivergenceOut {
            offset: *o,
            a: batch_out(x),
            b: batch_out(y),
        }),
        rewritten: c.rewritten.as_ref().map(rewritten_out),
        note: c.rewritten.as_ref().map(rewritten_words),
        log_end_offset_a: c.end_a,
        log_end_offset_b: c.end_b,
        verdict: verdict(&c),
        described: c
            .divergence
            .as_ref()
            .map(|(_, x, y)| (describe(x), describe(y))),
        findings: c.damage_a.iter().chain(&c.damage_b).cloned().collect(),
        differences: differences(&c),
        files: c.files,
    };
    emit(&report, args.format, out)?;
    Ok(if in_sync {
        Outcome::Clean
    } else {
        Outcome::Findings(1)
    })
}

impl crate::cmd::CommandEntry for DiffArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog diff broker1/orders-0 broker2/orders-0",
        "where two replicas diverge",
    )];
    const SEE_ALSO: &'static [&'static str] = &["verify-crc", "brokers(7)"];
    const DETAILS: Option<&'static str> = None;

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<DiffReport>()]
    }
}
