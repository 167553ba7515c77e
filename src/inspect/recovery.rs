//! What a broker's log recovery does, as functions klog can show before it
//! does anything: where the first invalid batch of a segment is, what lies
//! beyond it (resync), how indexes are rebuilt from the log, and what a
//! broker restarting after an unclean shutdown would cut and delete.
//!
//! Kafka's recovery (`LogSegment.recover`) checks only each batch's framing
//! and CRC; it truncates the segment at the first batch that fails and
//! deletes every later segment. The same definition of "valid" is used here,
//! so klog's plan and the broker's agree.

use std::path::{Path, PathBuf};

use crate::error::{DecodeError, Error, Result};
use crate::format::index::{encode_offset_entry, encode_time_entry, IndexSchedule};
use crate::log::findings::{Finding, Kind, Severity};
use crate::log::walk::Policy;
use crate::log::{Partition, SegmentFiles};

pub use crate::log::walk::{resync, Resynced};

/// Where a segment stops being valid: where a broker's recovery cuts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Cut {
    /// Position of the first invalid byte (the start of the first bad batch, or of the torn tail).
    pub position: u64,
    /// The file's length.
    pub file_len: u64,
    /// What is wrong there.
    pub error: DecodeError,
    /// The last offset of the valid part (one below the next offset), if any batch is valid.
    pub last_valid_offset: Option<i64>,
}

/// The first position where framing or a CRC fails, as Kafka's recovery
/// sees it (`LogSegment.recover`: `batch.ensureValid()` on each batch, cut at
/// the first that fails).
pub fn first_damage(seg: &SegmentFiles) -> Result<Option<Cut>> {
    let one = Partition::single_file(&seg.log, seg.base_offset);
    let mut walk = one.walk(Policy::VALID_PREFIX);
    while walk.next_entry()?.is_some() {}
    let last_valid_offset = walk.next_offset().map(|n| n - 1);
    Ok(walk.take_damage().into_iter().next().map(|d| Cut {
        position: d.position,
        file_len: d.file_len,
        error: d.error,
        last_valid_offset,
    }))
}

/// `.index` and `.timeindex` bytes rebuilt from the valid part of a log
/// (up to `valid_bytes`), with Kafka's recovery rule: an offset entry (the
/// batch's last offset, its position) when more than `interval` bytes lie
/// between the last entry's position and this batch's; a time entry at the
/// same moments when the max timestamp grew; and a final time entry.
pub fn rebuild_indexes(
    log: &Path,
    base_offset: i64,
    valid_bytes: u64,
    interval: u64,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let one = Partition::single_file(log, base_offset);
    let mut walk = one.walk(Policy::HEADERS);
    let (mut index, mut timeindex) = (Vec::new(), Vec::new());
    let mut schedule = IndexSchedule::new(base_offset, interval, i64::MIN);
    let rel = |offset: i64| (offset - base_offset) as i32;
    let time_entry = |timeindex: &mut Vec<u8>, (ts, offset): (i64, i64)| {
        timeindex.extend_from_slice(&encode_time_entry(ts, rel(offset)));
    };
    while let Some(w) = walk.next_entry()? {
        let e = w.entry;
        if e.position() + e.size() > valid_bytes {
            break;
        }
        let ts = e.max_timestamp();
        if let Some(due) = schedule.batch(e.position(), e.size(), w.next_offset - 1, ts) {
            let (offset, position) = due.offset;
            index.extend_from_slice(&encode_offset_entry(rel(offset), position as i32));
            if let Some(t) = due.time {
                time_entry(&mut timeindex, t);
            }
        }
    }
    if let Some(t) = schedule.time_entry() {
        time_entry(&mut timeindex, t);
    }
    Ok((index, timeindex))
}

/// The `.txnindex` of the segment at `base_offset` rebuilt from its log, as
/// `LogSegment.recover` does (it resets the index and appends every
/// aborted transaction completed in the segment, with the last stable
/// offset at that moment). The partition is the log's folder.
pub fn rebuild_txn_index(log: &Path, base_offset: i64) -> Result<Vec<u8>> {
    let p = match log.parent() {
        Some(dir) => {
            Partition::open(dir).unwrap_or_else(|_| Partition::single_file(log, base_offset))
        }
        None => Partition::single_file(log, base_offset),
    };
    let next_base = p
        .segments
        .iter()
        .map(|s| s.base_offset)
        .find(|&b| b > base_offset)
        .unwrap_or(i64::MAX);
    let st = crate::txn::analyze(&p, &Default::default())?;
    Ok(st
        .aborted
        .iter()
        .filter(|a| a.last_offset >= base_offset && a.last_offset < next_base)
        .flat_map(|a| {
            crate::format::index::encode_txn_entry(
                a.producer_id,
                a.first_offset,
                a.last_offset,
                a.last_stable_offset,
            )
        })
        .collect())
}

/// What a broker restarting on a partition would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryPreview {
    /// The segment recovery starts from (the one holding the recovery point).
    pub from_segment: i64,
    /// The segment that gets truncated, with the damage found in it.
    pub truncate: Option<(SegmentFiles, Cut)>,
    /// Segments deleted after it (all later ones).
    pub deleted: Vec<SegmentFiles>,
    /// Offsets that disappear: [first lost, log end before) — None when nothing is lost.
    pub lost_offsets: Option<(i64, i64)>,
}

/// The broker's recovery of `p` after an unclean shutdown, from the segment
/// holding `recovery_point`: truncate the first segment with damage at the
/// first invalid batch and delete every later segment.
pub fn preview(p: &Partition, recovery_point: i64) -> Result<RecoveryPreview> {
    let start = first_recovered(p, recovery_point);
    let from_segment = p.segments.get(start).map_or(0, |s| s.base_offset);
    let log_end = p.log_end_offset()?;
    for (i, seg) in p.segments.iter().enumerate().skip(start) {
        if let Some(d) = first_damage(seg)? {
            let deleted: Vec<SegmentFiles> = p.segments.iter().skip(i + 1).cloned().collect();
            let first_lost = d.last_valid_offset.map_or(seg.base_offset, |o| o + 1);
            let end = scan_end_including_damage(p, log_end)?;
            let lost = (end > first_lost).then_some((first_lost, end));
            return Ok(RecoveryPreview {
                from_segment,
                truncate: Some((seg.clone(), d)),
                deleted,
                lost_offsets: lost,
            });
        }
    }
    Ok(RecoveryPreview {
        from_segment,
        truncate: None,
        deleted: Vec::new(),
        lost_offsets: None,
    })
}

/// The index in `p.segments` of the first segment an unclean start
/// recovers: the one holding `recovery_point` (`LogSegments.values(recoveryPoint, …)`
/// starts at its floor segment), the first when none does.
pub fn first_recovered(p: &Partition, recovery_point: i64) -> usize {
    p.segments
        .iter()
        .rposition(|s| s.base_offset <= recovery_point)
        .unwrap_or(0)
}

/// The segments a broker recovers even after a clean shutdown
/// (`LogLoader.loadSegmentFiles`): one whose offset index is missing
/// (`NoSuchFileException` from `LogSegment.sanityCheck`) or whose index
/// length is not a whole number of entries (`CorruptIndexException`) is
/// recovered — its indexes rebuilt, and the segment cut at its first
/// damage, if any.
pub fn recovered_after_clean_shutdown(p: &Partition) -> Result<Vec<(SegmentFiles, Option<Cut>)>> {
    let mut out = Vec::new();
    for seg in &p.segments {
        if !trusted_after_clean_shutdown(seg)? {
            out.push((seg.clone(), first_damage(seg)?));
        }
    }
    Ok(out)
}

/// Whether a clean start trusts `seg` as it is: its offset index is there
/// and whole entries, its time index (created empty when missing) whole
/// entries (`LogSegment.sanityCheck`).
pub fn trusted_after_clean_shutdown(seg: &SegmentFiles) -> Result<bool> {
    use crate::format::index::{OFFSET_ENTRY_LEN, TIME_ENTRY_LEN};
    let whole = |path: &Path, entry: usize| -> Result<bool> {
        match std::fs::metadata(path) {
            Ok(m) => Ok(m.len() % entry as u64 == 0),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(false),
            Err(e) => Err(Error::io(path, "stat", e)),
        }
    };
    let index_ok = whole(&seg.log.with_extension("index"), OFFSET_ENTRY_LEN)?;
    let time = seg.log.with_extension("timeindex");
    Ok(index_ok && (!time.exists() || whole(&time, TIME_ENTRY_LEN)?))
}

/// Where a restarting broker's recovery cuts one partition's log, with what
/// goes with the cut.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RestartCut {
    /// The segment cut.
    pub log: PathBuf,
    /// Where: the first invalid byte.
    pub position: u64,
    /// The bytes cut off, from `position` to the end of the file.
    pub bytes: u64,
    /// The later segments deleted with it (`LogLoader.recoverLog`; none
    /// after a clean shutdown).
    pub deleted: Vec<PathBuf>,
    /// The offsets that disappear, first and last (after an unclean
    /// shutdown).
    pub lost: Option<(i64, i64)>,
}

/// Where a restarting broker's recovery cuts `p`: after a clean shutdown
/// at the first damage of the segments it recovers then
/// ([`recovered_after_clean_shutdown`]: `LogLoader.loadSegmentFiles`),
/// else as [`preview`] says from the recovery point `point`
/// (`LogLoader.recoverLog`: cut, then delete every later segment).
pub fn restart_cut(p: &Partition, clean_shutdown: bool, point: i64) -> Result<Option<RestartCut>> {
    let cut = |seg: &SegmentFiles, d: &Cut| RestartCut {
        log: seg.log.clone(),
        position: d.position,
        bytes: d.file_len.saturating_sub(d.position),
        deleted: Vec::new(),
        lost: None,
    };
    if clean_shutdown {
        let recovered = recovered_after_clean_shutdown(p)?;
        return Ok(recovered
            .iter()
            .find_map(|(seg, damage)| Some(cut(seg, damage.as_ref()?))));
    }
    let pv = preview(p, point)?;
    Ok(pv.truncate.as_ref().map(|(seg, d)| RestartCut {
        deleted: pv.deleted.iter().map(|s| s.log.clone()).collect(),
        lost: pv.lost_offsets.map(|(from, end)| (from, end - 1)),
        ..cut(seg, d)
    }))
}

/// The highest next-offset any readable batch claims, damaged region or not
/// (what the log held before recovery cuts it).
fn scan_end_including_damage(p: &Partition, valid_end: i64) -> Result<i64> {
    let mut end = valid_end;
    let mut walk = p.walk(Policy::VALID_ENTRIES);
    while let Some(w) = walk.next_entry()? {
        end = end.max(w.next_offset);
    }
    Ok(end)
}

/// Check a segment's indexes against its log: lengths are whole entries;
/// offset entries increase and point at the start of a batch whose offsets
/// include the entry's offset; time entries never go back in time or offset
/// and name offsets inside the segment. A trailing run of zero entries (a
/// preallocated index left by an unclean shutdown) is reported as such, not
/// as corruption of the data.
///
/// `is_last`: whether `seg` is its partition's active (last) segment, where
/// preallocated zero slots are normal (see [`IndexChecker::open`]).
pub fn check_indexes(seg: &SegmentFiles, is_last: bool) -> Result<Vec<Finding>> {
    let mut checker = IndexChecker::open(seg, is_last)?;
    let one = Partition::single_file(&seg.log, seg.base_offset);
    let mut walk = one.walk(Policy::HEADERS);
    while let Some(w) = walk.next_entry()? {
        let e = w.entry;
        checker.observe(
            e.position(),
            e.base_offset(),
            w.next_offset - 1,
            e.max_timestamp(),
        );
    }
    let len = std::fs::metadata(&seg.log)
        .map_err(|e| Error::io(&seg.log, "stat", e))?
        .len();
    Ok(checker.finish(len))
}

/// The index checks of [`check_indexes`], fed batch by batch by a walk over
/// the log that is under way anyway (so `verify-crc` reads each segment
/// once). Holds the index entries only: memory is bounded by the index
/// files, not the log.
#[derive(Debug)]
pub struct IndexChecker {
    base_offset: i64,
    index_path: std::path::PathBuf,
    time_path: std::path::PathBuf,
    problems: Vec<Finding>,
    /// Offset-index entries to meet at batch starts: (position, offset, entry position), by position.
    targets: Vec<(u64, i64, u64)>,
    next: usize,
    /// Time-index entries: (offset, entry position).
    time_offsets: Vec<(i64, u64)>,
    last_offset: i64,
    /// The offset entry met last, until the next one: (offset, entry
    /// position, log position, last offset of the batches from its position on).
    open: Option<(i64, u64, u64, i64)>,
    /// The time index's last entry (timestamp, entry position), when the
    /// broker takes the segment's largest timestamp from it (see
    /// [`IndexChecker::open`]); `(-1, 0)` for an empty index.
    time_last: Option<(i64, u64)>,
    /// The largest timestamp of the batches observed (-1: none).
    max_timestamp: i64,
}

/// Whether a broker loading the segment recovers it, rebuilding its
/// indexes (`LogLoader`): the active segment after an unclean shutdown (no
/// `.kafka_cleanshutdown` in its data directory, `CleanShutdownFileHandler`;
/// recovery runs from the recovery point, so always reaches the active
/// segment), and every segment of the KRaft metadata log, which
/// `KafkaRaftLog.createLog` opens with `hadCleanShutdown = false` and
/// recovery point 0 (a broker's shutdown leaves its indexes unclosed,
/// still preallocated).
fn recovered_on_load(seg: &SegmentFiles, is_last: bool) -> bool {
    let Some(partition) = seg.log.parent() else {
        return false;
    };
    if partition
        .file_name()
        .is_some_and(|n| n == crate::metadata::METADATA_FOLDER)
    {
        return true;
    }
    is_last
        && !partition
            .parent()
            .is_some_and(|d| d.join(".kafka_cleanshutdown").exists())
}

/// The largest index Kafka writes or opens: `segment.index.bytes` is an
/// int (`LogConfig`), and `AbstractIndex` maps the whole file, which
/// `FileChannel.map` refuses past `Integer.MAX_VALUE`.
const MAX_INDEX_BYTES: u64 = i32::MAX as u64;

/// The used entries of an index file, after the length and zero-slot checks.
fn index_body(
    path: &Path,
    entry_len: usize,
    is_last: bool,
    problems: &mut Vec<Finding>,
) -> Result<Option<Vec<u8>>> {
    let mut bytes = match crate::log::files::open_existing(path) {
        Ok(Some((_, len))) if len > MAX_INDEX_BYTES => {
            problems.push(Finding::new(
                Kind::IndexTooLarge,
                path,
                0,
                None,
                format!(
                    "is {len} bytes: larger than any index Kafka writes (an index is \
                     preallocated to segment.index.bytes, an int, so at most {MAX_INDEX_BYTES} \
                     bytes, and trimmed to its entries: LogConfig, AbstractIndex), and more than \
                     Kafka can open (AbstractIndex maps the whole file, and FileChannel.map \
                     refuses a size over Integer.MAX_VALUE): not read"
                ),
            ));
            return Ok(None);
        }
        Ok(Some((file, len))) => crate::log::files::read_up_to(file, path, MAX_INDEX_BYTES, len)?,
        Err(e @ Error::Layout { .. }) => {
            problems.push(Finding::new(
                Kind::NotRegularFile,
                path,
                0,
                None,
                e.to_string(),
            ));
            return Ok(None);
        }
        Ok(None) => {
            // `LogLoader` rebuilds a missing index on load: a warning.
            problems.push(Finding::new(
                Kind::IndexMissing,
                path,
                0,
                None,
                "missing: a broker rebuilds it from the log on load",
            ));
            return Ok(None);
        }
        Err(e) => return Err(e),
    };
    let mut push = |position: u64, kind: Kind, detail: String| {
        problems.push(Finding::new(kind, path, position, None, detail))
    };
    let whole = bytes.len() / entry_len * entry_len;
    if whole != bytes.len() {
        push(
            whole as u64,
            Kind::IndexLength,
            format!(
                "{} bytes is not a whole number of {entry_len}-byte entries",
                bytes.len()
            ),
        );
    }
    // A run of all-zero entries at the end (after the first entry) is preallocated space.
    let used = crate::format::index::used_entries(&bytes, entry_len);
    if used < whole / entry_len {
        // `AbstractIndex` preallocates the active segment's indexes and trims
        // them when the segment rolls or the broker shuts down cleanly: zero
        // slots are normal in the last segment (a note), and left by an
        // unclean shutdown in an older one (a warning: the broker rebuilds).
        let (severity, why) = if is_last {
            (Severity::Note, "preallocated space of the active segment")
        } else {
            (
                Severity::Warning,
                "preallocated space left by an unclean shutdown",
            )
        };
        problems.push(
            Finding::new(
                Kind::IndexTrailingZeros,
                path,
                (used * entry_len) as u64,
                None,
                format!(
                    "{} zero entries at the end: {why}",
                    whole / entry_len - used
                ),
            )
            .with_severity(severity),
        );
    }
    bytes.truncate(used * entry_len);
    Ok(Some(bytes))
}

impl IndexChecker {
    /// Read and check the segment's `.index` and `.timeindex` on their own.
    /// `is_last`: whether `seg` is the partition's active segment.
    pub fn open(seg: &SegmentFiles, is_last: bool) -> Result<Self> {
        use crate::format::index::{
            offset_entries, time_entries, OFFSET_ENTRY_LEN, TIME_ENTRY_LEN,
        };
        let index_path = seg.log.with_extension("index");
        let time_path = seg.log.with_extension("timeindex");
        let mut problems = Vec::new();
        let mut targets = Vec::new();
        if let Some(body) = index_body(&index_path, OFFSET_ENTRY_LEN, is_last, &mut problems)? {
            let entries =
                offset_entries(&body, seg.base_offset).map_err(|error| Error::Decode {
                    path: index_path.clone(),
                    error,
                })?;
            let mut prev = i64::MIN;
            for e in entries {
                if e.offset <= prev {
                    problems.push(Finding::new(
                        Kind::IndexOrder,
                        index_path.clone(),
                        e.at,
                        None,
                        format!("offset {} does not increase (previous {prev})", e.offset),
                    ));
                }
                prev = e.offset;
                if e.position < 0 {
                    problems.push(Finding::new(
                        Kind::IndexPastLog,
                        index_path.clone(),
                        e.at,
                        None,
                        format!("negative position {}", e.position),
                    ));
                } else {
                    targets.push((e.position as u64, e.offset, e.at));
                }
            }
        }
        targets.sort_by_key(|&(position, _, at)| (position, at));
        let mut time_offsets = Vec::new();
        let mut time_last = None;
        if let Some(body) = index_body(&time_path, TIME_ENTRY_LEN, is_last, &mut problems)? {
            let entries = time_entries(&body, seg.base_offset).map_err(|error| Error::Decode {
                path: time_path.clone(),
                error,
            })?;
            let (mut prev_ts, mut prev_off) = (i64::MIN, i64::MIN);
            for e in entries {
                if e.timestamp < prev_ts || e.offset < prev_off {
                    problems.push(Finding::new(
                        Kind::IndexOrder,
                        &time_path,
                        e.at,
                        None,
                        format!(
                            "entry ({}, offset {}) goes back after ({prev_ts}, offset {prev_off})",
                            e.timestamp, e.offset
                        ),
                    ));
                }
                prev_ts = e.timestamp;
                prev_off = e.offset;
                time_offsets.push((e.offset, e.at));
            }
            // A broker loading the segment takes its largest timestamp from
            // the time index's last entry (`LogSegment.readMaxTimestampAndOffsetSoFar`),
            // which `LogSegment.onBecomeInactiveSegment` (a roll, the cleaner)
            // and `LogSegment.close` (a clean shutdown) leave at the
            // segment's largest timestamp. It rebuilds the index in the
            // segments it recovers (see `recovered_on_load`): there a short
            // time index is the state a running or killed broker leaves, and
            // not reported.
            if !recovered_on_load(seg, is_last) {
                let last = body.len().checked_sub(TIME_ENTRY_LEN).map(|at| at as u64);
                time_last = Some((prev_ts.max(-1), last.unwrap_or(0)));
            }
        }
        Ok(IndexChecker {
            base_offset: seg.base_offset,
            index_path,
            time_path,
            problems,
            targets,
            next: 0,
            time_offsets,
            last_offset: seg.base_offset - 1,
            open: None,
            time_last,
            max_timestamp: -1,
        })
    }

    fn target_problem(&mut self, at: u64, detail: String) {
        self.problems.push(Finding::new(
            Kind::IndexTarget,
            self.index_path.clone(),
            at,
            None,
            detail,
        ));
    }

    /// The batch at `position` holds offsets `base..=last`.
    ///
    /// `LogSegment.append` writes one offset entry per append: the append's
    /// largest offset at the position of its first batch. A producer's
    /// append is one batch, but a follower's (`appendAsFollower`) or a
    /// multi-batch produce carries many, so an entry's offset may be a later
    /// batch's: it must lie between the base offset of the batch at its
    /// position and the last offset before the next entry's position.
    /// `max_timestamp`: the batch's largest timestamp ([`crate::format::Entry::max_timestamp`]).
    pub fn observe(&mut self, position: u64, base: i64, last: i64, max_timestamp: i64) {
        self.last_offset = self.last_offset.max(last);
        self.max_timestamp = self.max_timestamp.max(max_timestamp);
        let mut opened = false;
        while let Some(&(p, offset, at)) = self.targets.get(self.next) {
            if p > position {
                break;
            }
            self.next += 1;
            if p < position {
                self.target_problem(
                    at,
                    format!(
                        "offset {offset} points at position {p}, which is not the start of a batch"
                    ),
                );
            } else if offset < base {
                self.target_problem(
                    at,
                    format!("offset {offset} points at position {p}, a batch of offsets {base}..={last}"),
                );
            } else {
                if !opened {
                    self.close_open();
                    opened = true;
                }
                self.open = Some((offset, at, p, last));
            }
        }
        if let Some(open) = self.open.as_mut().filter(|_| !opened) {
            open.3 = open.3.max(last);
        }
    }

    /// Check the entry met last against the batches up to the next entry.
    fn close_open(&mut self) {
        if let Some((offset, at, p, range_last)) = self.open.take() {
            if offset > range_last {
                self.target_problem(
                    at,
                    format!(
                        "offset {offset} points at position {p}, but the batches from there to \
                         the next entry end at offset {range_last}"
                    ),
                );
            }
        }
    }

    /// The problems found, once every batch of a log of `log_len` bytes was observed.
    pub fn finish(mut self, log_len: u64) -> Vec<Finding> {
        self.close_open();
        while let Some(&(p, offset, at)) = self.targets.get(self.next) {
            self.next += 1;
            if p >= log_len {
                self.problems.push(Finding::new(
                    Kind::IndexPastLog,
                    self.index_path.clone(),
                    at,
                    None,
                    format!("position {p} lies past the end of the log ({log_len} bytes)"),
                ));
            } else {
                self.target_problem(
                    at,
                    format!(
                        "offset {offset} points at position {p}, which is not the start of a batch"
                    ),
                );
            }
        }
        if let Some((ts, at)) = self.time_last.filter(|&(ts, _)| ts < self.max_timestamp) {
            self.problems.push(Finding::new(
                Kind::TimeIndexStale,
                &self.time_path,
                at,
                None,
                format!(
                    "the last entry says {ts}, but the segment's largest timestamp is {}: a broker takes the \
                     older one as the segment's (time-based retention, offsetsForTimes); a clean shutdown or a \
                     roll leaves the largest (LogSegment.close, LogSegment.onBecomeInactiveSegment)",
                    self.max_timestamp
                ),
            ));
        }
        for &(offset, at) in &self.time_offsets {
            if offset < self.base_offset || offset > self.last_offset {
                self.problems.push(Finding::new(
                    Kind::IndexPastLog,
                    &self.time_path,
                    at,
                    None,
                    format!(
                        "offset {offset} lies outside the segment's offsets {}..={}",
                        self.base_offset, self.last_offset
                    ),
                ));
            }
        }
        self.problems
    }
}
