//! Comparing two copies of one partition (two replicas, or a disk and its
//! backup): the longest common prefix of batches, the first offset where
//! they diverge, which copy holds a valid batch there, and how far each
//! extends; then everything else that is not the same — damage one copy
//! holds (a torn tail, junk between batches, a segment of junk), files only
//! one copy has, and files in both whose bytes differ.
//!
//! Two copies that hold the same record at every offset are in sync,
//! whatever the log cleaner of each broker did to their batches (see
//! [`compare`] for the rule, and for the records compaction explains).
//!
//! Both copies are walked in step, one entry at a time, so memory does not
//! grow with the partitions: batches equal byte for byte are passed over,
//! others are compared record by record (one batch of each copy decoded at
//! a time); only a copy that lacks a record the other holds is read once
//! more, for the latest offset of each of its keys.
//!
//! Files are compared byte for byte in fixed chunks, every file of the two
//! folders; only segment files decide whether the copies are identical
//! (indexes, checkpoints and snapshots differ between healthy replicas:
//! each broker writes its own).

use std::collections::{BTreeMap, HashMap, VecDeque};
use std::ffi::OsString;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::format::{DecodeLimits, Entry};
use crate::log::findings::Finding;
use crate::log::{classify, parse_segment_name, Partition, PathKind, Policy, Walk};
use crate::txn::fetch::collect_aborted;

/// Where one batch is and what it holds, kept past the read (two readers
/// cannot lend at once); not its bytes, which may be as large as the
/// segment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchCopy {
    pub file: PathBuf,
    pub position: u64,
    pub base_offset: i64,
    pub last_offset: i64,
    pub crc_valid: bool,
}

impl BatchCopy {
    fn of(file: &Path, e: &Entry<'_>, next_offset: i64) -> Self {
        BatchCopy {
            file: file.to_path_buf(),
            position: e.position(),
            base_offset: e.base_offset(),
            last_offset: next_offset - 1,
            crc_valid: e.crc_valid(),
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

impl Files {
    /// Whether a file named `.log` but not like a segment (which no walk
    /// reads) differs or is in one copy only.
    pub fn unwalked_logs_differ(&self) -> bool {
        let unwalked =
            |n: &str| is_log_name(n) && parse_segment_name(n).is_none_or(|(_, ext)| ext != "log");
        self.only_in_a.iter().any(|n| unwalked(n))
            || self.only_in_b.iter().any(|n| unwalked(n))
            || self.differ.iter().any(|d| unwalked(&d.name))
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
    /// The first offset where the copies diverge (see [`compare`]), and
    /// each side's batch there (None: that copy ended).
    pub divergence: Option<(i64, Option<BatchCopy>, Option<BatchCopy>)>,
    /// With no divergence: where batches differ in bytes while their
    /// records agree (`None`: every batch is the same bytes).
    pub rewritten: Option<Rewritten>,
    /// Whether either folder holds an entry named like a segment that
    /// cannot be read (its bytes were not compared).
    pub unreadable: bool,
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
        self.divergence.is_none() && self.rewritten.is_none() && !self.files.logs_differ()
    }

    /// Whether the copies are replicas in sync: identical, or the same
    /// record at every offset (but what compaction explains, see
    /// [`compare`]) with no damage in either copy and every segment read,
    /// whatever the batches' bytes and the segment files.
    pub fn in_sync(&self) -> bool {
        self.identical()
            || (self.divergence.is_none()
                && self.damage_a.is_empty()
                && self.damage_b.is_empty()
                && !self.unreadable
                && !self.files.unwalked_logs_differ())
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

/// Records one copy lacks at offsets the other holds, each explained by
/// compaction (see [`compare`] for the rules).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Removed {
    /// Data records with a later record of the same key in this copy.
    pub superseded: u64,
    /// Tombstones (null values) with no later record of their key.
    pub tombstones: u64,
    /// Data records of aborted transactions.
    pub aborted: u64,
    /// Control records (transaction markers).
    pub markers: u64,
}

impl Removed {
    /// All the records counted.
    pub fn total(&self) -> u64 {
        self.superseded + self.tombstones + self.aborted + self.markers
    }
}

/// Where the copies hold the same records in batches that differ in bytes:
/// what each broker's log cleaner does on its own schedule (batch
/// boundaries, the delete horizon in the attributes and baseTimestamp,
/// records it removed).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rewritten {
    /// Batches of each copy that no batch of the other copy matches byte
    /// for byte, and their bytes.
    pub batches_a: u64,
    pub batches_b: u64,
    pub bytes_a: u64,
    pub bytes_b: u64,
    /// The first such batch of each copy (`None`: that copy had ended).
    pub first_a: Option<BatchCopy>,
    pub first_b: Option<BatchCopy>,
    /// Records each copy lacks, explained by compaction.
    pub removed_a: Removed,
    pub removed_b: Removed,
}

impl Rewritten {
    /// The first offset where batches differ in bytes.
    pub fn first_offset(&self) -> i64 {
        [&self.first_a, &self.first_b]
            .into_iter()
            .flatten()
            .map(|c| c.base_offset)
            .min()
            .unwrap_or(0)
    }
}

/// One record with what its batch says about it, owned: the unit the copies
/// are compared in once their batches differ in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Rec {
    offset: i64,
    timestamp: i64,
    key: Option<Vec<u8>>,
    value: Option<Vec<u8>>,
    headers: Vec<(Vec<u8>, Option<Vec<u8>>)>,
    leader_epoch: i32,
    producer_id: i64,
    producer_epoch: i16,
    transactional: bool,
    control: bool,
}

/// The records of one entry, or `None` when they cannot be read (a CRC
/// that fails, records that do not decode): such a batch is compared by
/// its bytes only.
fn records_of(e: &Entry<'_>, scratch: &mut Vec<u8>) -> Option<Vec<Rec>> {
    if !e.crc_valid() {
        return None;
    }
    let limits = DecodeLimits::default();
    let mut out = Vec::new();
    match e {
        Entry::V2(b) => {
            let h = &b.header;
            for r in b.records(scratch, limits).ok()? {
                let r = r.ok()?;
                out.push(Rec {
                    offset: r.offset,
                    timestamp: r.timestamp,
                    key: r.key.map(<[u8]>::to_vec),
                    value: r.value.map(<[u8]>::to_vec),
                    headers: r
                        .headers()
                        .map(|x| (x.key.to_vec(), x.value.map(<[u8]>::to_vec)))
                        .collect(),
                    leader_epoch: h.partition_leader_epoch,
                    producer_id: h.producer_id,
                    producer_epoch: h.producer_epoch,
                    transactional: h.is_transactional(),
                    control: h.is_control(),
                });
            }
        }
        Entry::Legacy(l) => {
            for m in l.messages(scratch, limits).ok()? {
                if !m.crc_valid {
                    return None;
                }
                out.push(Rec {
                    offset: m.offset,
                    timestamp: m.timestamp,
                    key: m.key.map(<[u8]>::to_vec),
                    value: m.value.map(<[u8]>::to_vec),
                    headers: Vec::new(),
                    leader_epoch: -1,
                    producer_id: -1,
                    producer_epoch: -1,
                    transactional: false,
                    control: false,
                });
            }
        }
    }
    Some(out)
}

/// What one copy says about the cleaner's work on it: read in a pass of
/// its own, only when the copy lacks a record the other holds.
struct Cleaned {
    /// The latest offset of each key among the copy's data records. Memory
    /// grows with the number of distinct keys (not with the records): the
    /// cleaner's own offset map holds the same (`Cleaner.buildOffsetMap`).
    latest: HashMap<Vec<u8>, i64>,
    /// How far the cleaner has certainly cleaned this copy: the
    /// `cleaner-offset-checkpoint` of its data directory, or one past the
    /// last batch carrying a delete horizon (only the cleaner sets it, and
    /// each pass cleans from the log start); 0 without either.
    cleaned_to: i64,
}

impl Cleaned {
    fn read(p: &Partition) -> Result<Self> {
        let mut cleaned_to = match p.dir.parent() {
            Some(dir) => crate::log::checkpoint::read_offsets(
                &dir.join(crate::log::checkpoint::CLEANER_OFFSET),
            )
            .ok()
            .flatten()
            .and_then(|m| m.get(&(p.topic.clone(), p.partition)).copied())
            .unwrap_or(0),
            None => 0,
        };
        let mut latest = HashMap::new();
        let mut scratch = Vec::new();
        let mut walk = p.walk(Policy::VALID_ENTRIES);
        while let Some(w) = walk.next_entry()? {
            if let Entry::V2(b) = &w.entry {
                if b.header.has_delete_horizon() {
                    cleaned_to = cleaned_to.max(w.next_offset);
                }
            }
            for r in records_of(&w.entry, &mut scratch).unwrap_or_default() {
                if let (false, Some(key)) = (r.control, r.key) {
                    let at = latest.entry(key).or_insert(r.offset);
                    *at = (*at).max(r.offset);
                }
            }
        }
        Ok(Cleaned { latest, cleaned_to })
    }
}

/// One copy's walk: the entries, the damage on the way, the valid end.
struct Reader<'p> {
    walk: Walk<'p>,
    damage: Vec<Finding>,
    /// One past the last offset of the last CRC-valid batch so far.
    end: i64,
    ended: bool,
}

impl<'p> Reader<'p> {
    /// The next entry (damage on the way is kept by the walk), with its
    /// next offset and segment file; the valid end moves past it when its
    /// CRC holds.
    fn next(&mut self) -> Result<Option<(Entry<'_>, i64, &'p Path)>> {
        self.drain();
        let Some(w) = self.walk.next_entry()? else {
            self.ended = true;
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

/// One copy's records once the copies are compared record by record.
#[derive(Default)]
struct Records {
    /// The records of the batch being compared not yet matched, and that batch.
    pending: VecDeque<Rec>,
    batch: Option<BatchCopy>,
    scratch: Vec<u8>,
    cleaned: Option<Cleaned>,
    removed: Removed,
    batches: u64,
    bytes: u64,
    first: Option<BatchCopy>,
}

impl Records {
    /// Take an entry that no batch of the other copy matches byte for
    /// byte: its records become the pending ones (`false`: they cannot be
    /// read).
    fn take(&mut self, e: &Entry<'_>, next: i64, file: &Path) -> bool {
        let copy = BatchCopy::of(file, e, next);
        self.batches += 1;
        self.bytes += e.size();
        if self.first.is_none() {
            self.first = Some(copy.clone());
        }
        self.batch = Some(copy);
        match records_of(e, &mut self.scratch) {
            Some(records) => {
                self.pending.extend(records);
                true
            }
            None => false,
        }
    }

    /// The batch of the next pending record (`None`: the copy has ended).
    fn here(&self) -> Option<BatchCopy> {
        self.batch.clone().filter(|_| !self.pending.is_empty())
    }
}

/// One side of the walk in step.
struct Side<'p> {
    partition: &'p Partition,
    reader: Reader<'p>,
    records: Records,
}

impl<'p> Side<'p> {
    fn new(p: &'p Partition) -> Self {
        Side {
            partition: p,
            reader: Reader {
                walk: p.walk(Policy::EVERY_ENTRY),
                damage: Vec::new(),
                end: 0,
                ended: false,
            },
            records: Records::default(),
        }
    }

    /// Read on until a record is pending or the copy ends (`false`: a
    /// batch whose records cannot be read).
    fn fill(&mut self) -> Result<bool> {
        while self.records.pending.is_empty() {
            let Some((e, next, file)) = self.reader.next()? else {
                return Ok(true);
            };
            if !self.records.take(&e, next, file) {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Whether this copy's lacking `r` (a record the other copy holds at
    /// an offset this copy passes over) is the cleaner's doing, under the
    /// rules of [`compare`]; counted when it is.
    fn explains_absence(&mut self, r: &Rec, other: &Partition) -> Result<bool> {
        if self.records.cleaned.is_none() {
            self.records.cleaned = Some(Cleaned::read(self.partition)?);
        }
        let Some(c) = &self.records.cleaned else {
            return Ok(false);
        };
        let removed = &mut self.records.removed;
        let cleaned_past = r.offset < c.cleaned_to;
        if r.control {
            removed.markers += u64::from(cleaned_past);
            return Ok(cleaned_past);
        }
        let Some(key) = &r.key else {
            return Ok(false);
        };
        if c.latest.get(key).is_some_and(|&latest| latest > r.offset) {
            removed.superseded += 1;
            return Ok(true);
        }
        if !cleaned_past {
            return Ok(false);
        }
        if r.value.is_none() {
            removed.tombstones += 1;
            return Ok(true);
        }
        if r.transactional && r.producer_id >= 0 {
            // A `.txnindex` that cannot be read explains nothing.
            let aborted = |p: &Partition| -> Result<bool> {
                Ok(collect_aborted(p, r.offset, r.offset.saturating_add(1))
                    .unwrap_or_default()
                    .iter()
                    .any(|t| {
                        t.producer_id == r.producer_id
                            && t.first_offset <= r.offset
                            && r.offset <= t.last_offset
                    }))
            };
            if aborted(other)? || aborted(self.partition)? {
                self.records.removed.aborted += 1;
                return Ok(true);
            }
        }
        Ok(false)
    }
}

/// A divergence at a batch compared by bytes only: at its base offset,
/// the lower of the two.
fn at_batches(
    x: Option<BatchCopy>,
    y: Option<BatchCopy>,
) -> (i64, Option<BatchCopy>, Option<BatchCopy>) {
    let offset = [&x, &y]
        .into_iter()
        .flatten()
        .map(|c| c.base_offset)
        .min()
        .unwrap_or(0);
    (offset, x, y)
}

/// Compare copy `a` with copy `b`.
///
/// Both copies are walked in step. Batches equal byte for byte are passed
/// over whole; from the first pair that differs, both copies are compared
/// record by record in offset order, decoding every batch (compressed ones
/// too). Two records at one offset agree when their key, value, headers
/// and timestamp, and their batch's partition leader epoch, producer id
/// and epoch, and transactional and control flags are the same: that is
/// what a replica fetched from its leader, and what the log cleaner keeps
/// when it rewrites a batch (`MemoryRecords.filterTo` builds the retained
/// records into a batch with the original's base offset, producer fields,
/// leader epoch and, with the delete horizon, a new baseTimestamp but the
/// same record timestamps). Batch boundaries, the delete horizon flag and
/// baseTimestamp, compression and sequences are not compared: each broker's
/// cleaner rewrites them on its own schedule (`LogCleaner`), and
/// replication checks only offsets and leader epochs
/// (`AbstractFetcherThread` truncating by `LeaderEpochFileCache.endOffsetFor`).
///
/// A record one copy holds at an offset the other copy lacks (while that
/// copy holds later records) is not a divergence only when the lacking
/// copy's cleaner removed it, under these rules and no others:
///
/// - a data record with a key, when the lacking copy holds a later data
///   record with the same key (the cleaner keeps the latest offset of each
///   key: `Cleaner.buildOffsetMap`, `LogCleaner.shouldRetainRecord`);
/// - a tombstone (a null value) with a key, when the lacking copy was
///   cleaned past it (tombstones go after the delete horizon:
///   `LogCleaner.shouldRetainRecord`);
/// - a transactional data record that a `.txnindex` of either copy lists as
///   aborted (its producer id, between the transaction's first and last
///   offsets), when the lacking copy was cleaned past it (aborted batches
///   are discarded: `CleanedTransactionMetadata.onBatchRead`);
/// - a control record (a transaction marker), when the lacking copy was
///   cleaned past it (`CleanedTransactionMetadata.onControlBatchRead`
///   removes a marker whose transaction has no data left, after the delete
///   horizon).
///
/// "Cleaned past" an offset: the copy's data directory's
/// `cleaner-offset-checkpoint` names a larger offset for the partition, or
/// the copy holds a batch with the delete horizon set at or after it. A
/// record with a null key, a record past the other copy's last record,
/// and any record of a copy with no sign of cleaning other than the key
/// rule are divergences. The later record of the key rule is not checked
/// for being in an aborted transaction itself (which the cleaner's offset
/// map would skip).
///
/// A batch that fails its CRC or whose records do not decode is compared
/// by its bytes only: where the copies differ there, they diverge.
pub fn compare(a: &Path, b: &Path) -> Result<Comparison> {
    let (pa, a_is_dir) = open(a)?;
    let (pb, b_is_dir) = open(b)?;
    let (mut sa, mut sb) = (Side::new(&pa), Side::new(&pb));
    let mut common = 0u64;
    let mut common_last_offset = None;
    let mut divergence = None;
    // Whether the copies are past their byte-identical prefix.
    let mut past_prefix = false;
    loop {
        // Both copies between batches: try the next batches whole, by bytes.
        if sa.records.pending.is_empty()
            && sb.records.pending.is_empty()
            && !sa.reader.ended
            && !sb.reader.ended
        {
            let x = sa.reader.next()?;
            let y = sb.reader.next()?;
            if x.is_none() && y.is_none() {
                break;
            }
            if let (Some((ea, next, _)), Some((eb, _, _))) = (&x, &y) {
                if entry_bytes(ea) == entry_bytes(eb) {
                    if !past_prefix {
                        common += 1;
                        common_last_offset = Some(next - 1);
                    }
                    continue;
                }
            }
            past_prefix = true;
            let ok_a = x.as_ref().is_none_or(|(e, n, f)| sa.records.take(e, *n, f));
            let ok_b = y.as_ref().is_none_or(|(e, n, f)| sb.records.take(e, *n, f));
            if !ok_a || !ok_b {
                let batch = |s: &Records, v: &Option<_>| v.as_ref().and(s.batch.clone());
                divergence = Some(at_batches(batch(&sa.records, &x), batch(&sb.records, &y)));
                break;
            }
            continue;
        }
        let (ok_a, ok_b) = (sa.fill()?, sb.fill()?);
        if !ok_a || !ok_b {
            // At a batch that cannot be read record by record: its own offset.
            let batch = |s: &Records, ok: bool| if ok { s.here() } else { s.batch.clone() };
            let (x, y) = (batch(&sa.records, ok_a), batch(&sb.records, ok_b));
            let offset = [(&x, ok_a), (&y, ok_b)]
                .into_iter()
                .filter(|(_, ok)| !ok)
                .filter_map(|(c, _)| c.as_ref().map(|c| c.base_offset))
                .min()
                .unwrap_or(0);
            divergence = Some((offset, x, y));
            break;
        }
        let x = sa.records.pending.front().cloned();
        let y = sb.records.pending.front().cloned();
        let (r, lacking_a) = match (x, y) {
            (None, None) => break,
            (Some(r), Some(s)) if r.offset == s.offset => {
                if r != s {
                    divergence = Some((r.offset, sa.records.here(), sb.records.here()));
                    break;
                }
                sa.records.pending.pop_front();
                sb.records.pending.pop_front();
                continue;
            }
            // The lower offset is the one the other copy lacks.
            (Some(r), Some(s)) if s.offset < r.offset => (s, true),
            (Some(r), _) => (r, false),
            (None, Some(s)) => (s, true),
        };
        // A copy that has ended lacks no record the cleaner removed: the
        // cleaner keeps the log's end (it never cleans the active segment).
        let explained = if lacking_a {
            !sa.records.pending.is_empty() && sa.explains_absence(&r, &pb)?
        } else {
            !sb.records.pending.is_empty() && sb.explains_absence(&r, &pa)?
        };
        if !explained {
            divergence = Some((r.offset, sa.records.here(), sb.records.here()));
            break;
        }
        if lacking_a {
            sb.records.pending.pop_front();
        } else {
            sa.records.pending.pop_front();
        }
    }
    // Past the divergence, each copy is read on alone for its valid end.
    for side in [&mut sa, &mut sb] {
        side.reader.drain();
        while side.reader.next()?.is_some() {}
        side.reader.drain();
    }
    let rewritten = (divergence.is_none() && past_prefix).then(|| Rewritten {
        batches_a: sa.records.batches,
        batches_b: sb.records.batches,
        bytes_a: sa.records.bytes,
        bytes_b: sb.records.bytes,
        first_a: sa.records.first.take(),
        first_b: sb.records.first.take(),
        removed_a: sa.records.removed,
        removed_b: sb.records.removed,
    });
    let unreadable = !pa.unreadable.is_empty() || !pb.unreadable.is_empty();
    // With the same batches and no damage on either side, every byte of
    // every segment lies in a batch both hold in the same order: segment
    // files of the same name and length are then the same bytes.
    let logs_proven_same = divergence.is_none()
        && !past_prefix
        && sa.reader.damage.is_empty()
        && sb.reader.damage.is_empty();
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
        rewritten,
        unreadable,
        end_a: sa.reader.end,
        end_b: sb.reader.end,
        damage_a: sa.reader.damage,
        damage_b: sb.reader.damage,
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
    if let Some(at) = crate::log::read::compare::first_difference(a, b)? {
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
                crate::log::read::compare::first_difference(&a.join(n), &b.join(n))?
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
