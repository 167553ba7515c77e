//! Comparing two copies of one partition (two replicas, or a disk and its
//! backup): the longest common prefix of batches, the first offset where
//! they diverge, which copy holds a valid batch there, and how far each
//! extends; then everything else that is not the same — damage one copy
//! holds (a torn tail, junk between batches, a segment of junk), files only
//! one copy has, and files in both whose bytes differ.
//!
//! Both copies are walked in step, one entry at a time, so memory does not
//! grow with the partitions: only the two batches at the divergence are
//! copied. Files are compared byte for byte in fixed chunks, every file of
//! the two folders; only segment files decide whether the copies are
//! identical (indexes, checkpoints and snapshots differ between healthy
//! replicas: each broker writes its own).

use std::collections::BTreeMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::Entry;
use crate::log::findings::Finding;
use crate::log::{classify, parse_segment_name, Partition, PathKind, Policy, Walk};

/// One batch, owned (two readers cannot lend at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchCopy {
    pub file: PathBuf,
    pub position: u64,
    pub base_offset: i64,
    pub last_offset: i64,
    pub crc_valid: bool,
    pub bytes: Vec<u8>,
}

impl BatchCopy {
    fn of(file: &Path, e: &Entry<'_>, next_offset: i64) -> Self {
        let bytes = match e {
            Entry::V2(b) => b.bytes(),
            Entry::Legacy(l) => l.bytes(),
        };
        BatchCopy {
            file: file.to_path_buf(),
            position: e.position(),
            base_offset: e.base_offset(),
            last_offset: next_offset - 1,
            crc_valid: e.crc_valid(),
            bytes: bytes.to_vec(),
        }
    }
}

/// A file both copies hold, with different bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct FileDifference {
    /// Its name in the partition folder (lossy UTF-8), or the file given.
    pub name: String,
    pub len_a: u64,
    pub len_b: u64,
    /// The first byte that differs (the shorter file's length when it is a
    /// prefix of the other).
    pub first_difference: u64,
}

impl FileDifference {
    /// Whether the file is a segment (`.log`): part of the log itself.
    pub fn is_log(&self) -> bool {
        is_log_name(&self.name)
    }
}

/// How the files of the two copies compare.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Files {
    /// Names only the first copy's folder holds (lossy UTF-8, sorted).
    pub only_in_a: Vec<String>,
    pub only_in_b: Vec<String>,
    /// Files in both whose bytes differ.
    pub differ: Vec<FileDifference>,
}

impl Files {
    /// Whether no file differs.
    pub fn same(&self) -> bool {
        self.only_in_a.is_empty() && self.only_in_b.is_empty() && self.differ.is_empty()
    }

    /// Whether a segment file (`.log`) differs or is in one copy only.
    pub fn logs_differ(&self) -> bool {
        self.only_in_a.iter().any(|n| is_log_name(n))
            || self.only_in_b.iter().any(|n| is_log_name(n))
            || self.differ.iter().any(FileDifference::is_log)
    }
}

fn is_log_name(name: &str) -> bool {
    name.ends_with(".log")
}

/// How two copies compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// Batches identical in both, from the start.
    pub common_batches: u64,
    /// The last offset of the common prefix, if any.
    pub common_last_offset: Option<i64>,
    /// The first offset where the batches differ, and each side's batch there (None: that copy ended).
    pub divergence: Option<(i64, Option<BatchCopy>, Option<BatchCopy>)>,
    /// One past the last offset of each copy's last CRC-valid batch.
    pub end_a: i64,
    pub end_b: i64,
    /// The damage each walk met: bytes that cannot be framed (a torn
    /// tail, junk), entries whose offsets overflow. Its files name the copy.
    pub damage_a: Vec<Finding>,
    pub damage_b: Vec<Finding>,
    /// The files of the two copies, compared byte for byte.
    pub files: Files,
}

impl Comparison {
    /// Whether the copies hold the same log: the same batches, and every
    /// segment file the same byte for byte (damage included). Other files
    /// (indexes, checkpoints, snapshots) may differ between healthy
    /// replicas — each broker writes its own — and are only reported.
    pub fn identical(&self) -> bool {
        self.divergence.is_none() && !self.files.logs_differ()
    }
}

/// The walk of one copy: a partition folder, or a segment file as a
/// partition of one segment.
fn open(path: &Path) -> Result<(Partition, bool)> {
    Ok(match classify(path)? {
        PathKind::File => (Partition::single_file(path, 0), false),
        PathKind::Partition => (Partition::open(path)?, true),
        // Two brokers' directories hold many partitions, each replicated
        // on its own terms: comparing their top-level entries would call
        // them identical with every partition folder "only in" one.
        PathKind::DataDir => {
            return Err(Error::layout(
                path,
                "is a data directory, not a copy of one partition: give two partition folders \
                 (A/topic-0 B/topic-0) or segment files; to compare brokers, run `klog summary` \
                 on each and `klog cluster` on the summaries"
                    .to_string(),
            ))
        }
    })
}

/// One side of the walk in step.
struct Side<'p> {
    walk: Walk<'p>,
    damage: Vec<Finding>,
    /// One past the last offset of the last CRC-valid batch so far.
    end: i64,
}

impl<'p> Side<'p> {
    fn new(p: &'p Partition) -> Self {
        Side {
            walk: p.walk(Policy::EVERY_ENTRY),
            damage: Vec::new(),
            end: 0,
        }
    }

    /// The next entry (damage on the way is kept by the walk), with its
    /// next offset and segment file; the valid end moves past it when its
    /// CRC holds.
    fn next(&mut self) -> Result<Option<(Entry<'_>, i64, &'p Path)>> {
        self.drain();
        let Some(w) = self.walk.next_entry()? else {
            return Ok(None);
        };
        if w.entry.crc_valid() {
            self.end = self.end.max(w.next_offset);
        }
        Ok(Some((w.entry, w.next_offset, w.segment.log.as_path())))
    }

    /// Move the damage the walk met so far into findings.
    fn drain(&mut self) {
        for d in self.walk.take_damage() {
            self.damage.push(d.finding());
        }
    }
}

/// Compare copy `a` with copy `b`.
pub fn compare(a: &Path, b: &Path) -> Result<Comparison> {
    let (pa, a_is_dir) = open(a)?;
    let (pb, b_is_dir) = open(b)?;
    let (mut sa, mut sb) = (Side::new(&pa), Side::new(&pb));
    let mut common = 0u64;
    let mut common_last_offset = None;
    let mut divergence = None;
    loop {
        let x = sa.next()?;
        let y = sb.next()?;
        let same = match (&x, &y) {
            (Some((ea, _, _)), Some((eb, _, _))) => entry_bytes(ea) == entry_bytes(eb),
            _ => false,
        };
        if same {
            common += 1;
            common_last_offset = x.as_ref().map(|(_, next, _)| next - 1);
            continue;
        }
        if x.is_some() || y.is_some() {
            let copy = |i: &Option<(Entry<'_>, i64, &Path)>| {
                i.as_ref().map(|(e, next, f)| BatchCopy::of(f, e, *next))
            };
            let (ca, cb) = (copy(&x), copy(&y));
            let offset = [&ca, &cb]
                .into_iter()
                .flatten()
                .map(|c| c.base_offset)
                .min()
                .unwrap_or(0);
            divergence = Some((offset, ca, cb));
        }
        break;
    }
    // Past the divergence, each copy is read on alone for its valid end.
    sa.drain();
    sb.drain();
    for side in [&mut sa, &mut sb] {
        while side.next()?.is_some() {}
        side.drain();
    }
    // With the same batches and no damage on either side, every byte of
    // every segment lies in a batch both hold in the same order: segment
    // files of the same name and length are then the same bytes.
    let logs_proven_same = divergence.is_none() && sa.damage.is_empty() && sb.damage.is_empty();
    let files = match (a_is_dir, b_is_dir) {
        (true, true) => compare_folders(a, b, logs_proven_same)?,
        (false, false) => compare_files(a, b)?,
        // A folder and a file: only their batches compare.
        _ => Files::default(),
    };
    Ok(Comparison {
        common_batches: common,
        common_last_offset,
        divergence,
        end_a: sa.end,
        end_b: sb.end,
        damage_a: sa.damage,
        damage_b: sb.damage,
        files,
    })
}

fn entry_bytes<'e>(e: &Entry<'e>) -> &'e [u8] {
    match e {
        Entry::V2(b) => b.bytes(),
        Entry::Legacy(l) => l.bytes(),
    }
}

/// Two files given as the copies.
fn compare_files(a: &Path, b: &Path) -> Result<Files> {
    let mut files = Files::default();
    if let Some(at) = crate::log::files::first_difference(a, b)? {
        let len = |p: &Path| {
            std::fs::metadata(p)
                .map(|m| m.len())
                .map_err(|e| Error::io(p, "stat", e))
        };
        files.differ.push(FileDifference {
            name: a
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned()),
            len_a: len(a)?,
            len_b: len(b)?,
            first_difference: at,
        });
    }
    Ok(files)
}

/// The entries of a folder by name: whether each is a regular file, and its length.
fn entries(dir: &Path) -> Result<BTreeMap<OsString, Option<u64>>> {
    let mut out = BTreeMap::new();
    let list = std::fs::read_dir(dir).map_err(|e| Error::io(dir, "list directory", e))?;
    for entry in list {
        let entry = entry.map_err(|e| Error::io(dir, "list directory", e))?;
        // Followed like every reader follows a symlinked segment.
        let meta = std::fs::metadata(entry.path()).ok();
        let regular = meta.filter(|m| m.is_file()).map(|m| m.len());
        out.insert(entry.file_name(), regular);
    }
    Ok(out)
}

/// Every entry of two partition folders: names in one only, and files in
/// both whose bytes differ (entries that are not regular files on either
/// side are not read). With `logs_proven_same`, segment files of equal
/// length are known to be equal and are not read again.
fn compare_folders(a: &Path, b: &Path, logs_proven_same: bool) -> Result<Files> {
    let (ea, eb) = (entries(a)?, entries(b)?);
    let name = |n: &OsString| n.to_string_lossy().into_owned();
    let mut files = Files {
        only_in_a: ea
            .keys()
            .filter(|n| !eb.contains_key(*n))
            .map(name)
            .collect(),
        only_in_b: eb
            .keys()
            .filter(|n| !ea.contains_key(*n))
            .map(name)
            .collect(),
        differ: Vec::new(),
    };
    for (n, kind_a) in &ea {
        let Some(kind_b) = eb.get(n) else { continue };
        let difference = match (kind_a, kind_b) {
            (Some(len_a), Some(len_b))
                if logs_proven_same
                    && len_a == len_b
                    && n.to_str()
                        .and_then(parse_segment_name)
                        .is_some_and(|(_, ext)| ext == "log") =>
            {
                None
            }
            (Some(len_a), Some(len_b)) => {
                crate::log::files::first_difference(&a.join(n), &b.join(n))?
                    .map(|at| (*len_a, *len_b, at))
            }
            // A regular file on one side only: it differs from its first byte.
            (Some(len), None) => Some((*len, 0, 0)),
            (None, Some(len)) => Some((0, *len, 0)),
            (None, None) => None,
        };
        if let Some((len_a, len_b, first_difference)) = difference {
            files.differ.push(FileDifference {
                name: name(n),
                len_a,
                len_b,
                first_difference,
            });
        }
    }
    Ok(files)
}
