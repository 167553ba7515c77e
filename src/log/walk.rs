//! The one walk over a partition's segments.
//!
//! Everything that reads a partition entry by entry — lag, producer state,
//! committed-offset replay, recovery, the consumer, diff, dump, stats,
//! verify — goes through [`Walk`], so "where a partition starts", "where it
//! ends", "where offset N is" and "what happens at damage" have one
//! definition each:
//!
//! - the walk starts at an offset: in the segment whose base offset is the
//!   largest not above it, at the position its offset index gives
//!   ([`Partition::seek`]), skipping entries that end below it;
//! - [`Policy`] says what is damage and what then happens. Damage is a torn
//!   or corrupt tail (framing breaks), an entry whose offsets run past
//!   `i64::MAX`, and — when the policy checks CRCs — an entry whose checksum
//!   fails. [`OnDamage::Stop`] ends the walk at the first damage, as Kafka's
//!   recovery does (`LogSegment.recover` truncates at the first invalid
//!   batch); [`OnDamage::Resync`] reports it and goes on at the next
//!   CRC-valid batch of the same file ([`resync`]), or the next segment;
//! - every entry handed out carries its checked next offset: no caller adds
//!   1 to a last offset;
//! - a declared length that runs past the end of the file is `torn_tail`
//!   only when nothing valid follows it; when valid batches resume later in
//!   the file it is `length_past_eof` and the detail says where.
//!
//! Memory is the segment reader's: its buffers plus the largest batch.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use crate::error::{DecodeError, DecodeErrorKind, Error, Result};
use crate::format::batch::{self, DecodeLimits, HEADER_LEN};
use crate::format::{index, Entry};
use crate::log::findings::Finding;
use crate::log::read::{BatchCheck, PrepareBatch, Reads, SegmentReader, Tail};
use crate::log::{Partition, SegmentFiles};

/// What happens at damage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OnDamage {
    /// End the walk: everything after the first damage is beyond the valid log.
    Stop,
    /// Report the damage and go on at the next CRC-valid batch.
    Resync,
}

/// Whether the walker checks each entry's CRC.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Checks {
    /// An entry whose CRC fails is damage and is not handed out.
    Crc,
    /// Only the framing and headers are read; every framed entry is handed
    /// out and the caller decides what a CRC failure means.
    HeadersOnly,
}

/// How a walk treats damage and CRCs.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    pub on_damage: OnDamage,
    pub checks: Checks,
    /// Have read-ahead threads check CRCs and records of plain batches on
    /// the way (see [`SegmentReader::check_ahead`]); the result comes with
    /// each entry.
    pub check_ahead: Option<batch::Depth>,
    /// What the walk's readers may do to get their bytes.
    pub reads: Reads,
    /// Where to count the bytes of the entries passed, for a progress
    /// display; `None` counts nothing.
    pub meter: Option<&'static Meter>,
}

impl Policy {
    /// The valid log as Kafka's recovery sees it: CRC-checked, ending at the first damage.
    pub const VALID_PREFIX: Policy = Policy::of(OnDamage::Stop, Checks::Crc);
    /// Every CRC-valid entry, past damage (what analysis and replay read).
    pub const VALID_ENTRIES: Policy = Policy::of(OnDamage::Resync, Checks::Crc);
    /// Every framed entry, CRC-valid or not, past damage (dumps and verification).
    pub const EVERY_ENTRY: Policy = Policy::of(OnDamage::Resync, Checks::HeadersOnly);
    /// Framing and headers only, ending at the first framing damage (cheap counts).
    pub const HEADERS: Policy = Policy::of(OnDamage::Stop, Checks::HeadersOnly);

    /// A policy of `on_damage` and `checks`, reading ahead as it judges
    /// best, with no meter.
    const fn of(on_damage: OnDamage, checks: Checks) -> Policy {
        Policy {
            on_damage,
            checks,
            check_ahead: None,
            reads: Reads::Auto,
            meter: None,
        }
    }
}

/// Damage the walk met.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Damage {
    /// The segment file.
    pub file: PathBuf,
    /// Where the damaged entry, or the bytes that cannot be framed, start.
    pub position: u64,
    /// What is wrong, at its exact byte.
    pub error: DecodeError,
    /// The damaged entry's base offset, when its header could be read.
    pub base_offset: Option<i64>,
    /// Whether the framing broke here (a tail), rather than one whole
    /// entry failing its CRC or offset checks.
    pub framing: bool,
    /// The damaged entry's size, when it was framed (`framing` is false).
    pub entry_size: Option<u64>,
    /// With [`OnDamage::Resync`]: where valid batches resume in this file.
    pub resumes: Option<Resynced>,
    /// Where the search for valid batches after the damage gave up (its
    /// checksum budget spent on plausible-looking junk), if it did.
    pub search_gave_up: Option<u64>,
    /// The file's length.
    pub file_len: u64,
}

impl Damage {
    /// The damage as a finding: where it is and what is wrong there (the
    /// one place walk damage becomes a [`Finding`]; a caller that knows
    /// more, such as where valid batches resume, adds it to the detail).
    pub fn finding(&self) -> Finding {
        Finding::decode(&self.file, self.position, self.base_offset, &self.error)
    }
}

/// A whole, CRC-valid v2 batch found by [`resync`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resynced {
    pub position: u64,
    pub base_offset: i64,
}

/// One entry handed out by the walk.
#[derive(Debug, Clone, Copy)]
pub struct Walked<'w, 'p> {
    /// The segment it lies in.
    pub segment: &'p SegmentFiles,
    pub entry: Entry<'w>,
    /// One past its last offset (checked: the walk treats an overflow as damage).
    pub next_offset: i64,
    /// What a read-ahead thread's CRC and record check returned, if one ran.
    pub check: Option<BatchCheck>,
    /// A read-ahead thread's preparation of the entry (see [`Walk::prepare_ahead`]).
    pub prepared: Option<&'w [u8]>,
}

/// A step of the walk.
#[derive(Debug)]
pub enum Step<'w, 'p> {
    /// The walk enters a segment (it will read it from `position`).
    SegmentStart {
        segment: &'p SegmentFiles,
        position: u64,
    },
    /// An entry.
    Entry(Walked<'w, 'p>),
    /// Damage (see [`Policy`]); with [`OnDamage::Stop`] the last step.
    Damage(Damage),
    /// The walk leaves a segment whose file has `file_len` bytes.
    SegmentEnd {
        segment: &'p SegmentFiles,
        file_len: u64,
    },
}

/// A walk over a partition's segments; see the module docs.
pub struct Walk<'p> {
    partition: &'p Partition,
    policy: Policy,
    from: i64,
    /// Index of the segment being read (or to be opened next).
    seg: usize,
    state: State,
    /// Position to open the next segment at.
    start: u64,
    damage: Vec<Damage>,
    /// One past the last offset handed out.
    next_offset: Option<i64>,
    /// What read-ahead threads prepare (see [`Walk::prepare_ahead`]).
    preparer: Option<Arc<dyn PrepareBatch>>,
}

/// Where the walk is.
enum State {
    /// Segment `seg` is to be opened at `start`.
    Open,
    /// Reading segment `seg`.
    Reading(Box<SegmentReader>),
    /// Segment `seg` (of this many bytes) is finished: say so, then go on.
    Ending(u64),
    /// Nothing more.
    Done,
}

impl Partition {
    /// Walk the whole partition under `policy`.
    pub fn walk(&self, policy: Policy) -> Walk<'_> {
        Walk::new(self, i64::MIN, policy)
    }

    /// Walk from the entry holding `offset` (entries ending below it are skipped).
    pub fn walk_from(&self, offset: i64, policy: Policy) -> Walk<'_> {
        Walk::new(self, offset, policy)
    }

    /// The segment that holds `offset` (by index into `segments`) and the
    /// position to start reading it at, from its offset index (Kafka's
    /// `LogSegment.translateOffset` starts from the index's floor entry too).
    pub fn seek(&self, offset: i64) -> Option<(usize, u64)> {
        let i = self
            .segments
            .partition_point(|s| s.base_offset <= offset)
            .checked_sub(1)?;
        let seg = self.segments.get(i)?;
        Some((i, index_start_position(seg, offset)))
    }

    /// The log end offset: one past the last offset of the last valid batch
    /// of the last segment, read from its last offset-index entry on (so the
    /// cost does not grow with the partition), ending at the first damage.
    /// As Kafka's `LogSegment.readNextOffset` reads it, batches that end
    /// below that entry's offset (below the base offset, without one) are
    /// passed over: a last segment holding only such batches, or none,
    /// ends at its base offset; no segments: 0.
    pub fn log_end_offset(&self) -> Result<i64> {
        let Some(last) = self.segments.last() else {
            return Ok(0);
        };
        let i = self.segments.len() - 1;
        let (from, start) = index_start_entry(last, i64::MAX);
        if let Some(end) = self.segment_end(i, from, start)? {
            return Ok(end);
        }
        // The index pointed somewhere that holds no valid batch: read it all.
        Ok(self
            .segment_end(i, last.base_offset, 0)?
            .unwrap_or(last.base_offset))
    }

    /// One past the last valid offset of the last segment read from
    /// `start`, if any batch there that ends at `from` or later is valid.
    fn segment_end(&self, last: usize, from: i64, start: u64) -> Result<Option<i64>> {
        let mut walk = Walk::new(self, i64::MIN, Policy::VALID_PREFIX);
        walk.seg = last;
        walk.start = start;
        walk.from = from;
        walk.state = State::Open;
        while walk.next_entry()?.is_some() {}
        Ok(walk.next_offset())
    }

    /// The log start offset: the first segment's base offset, or the
    /// `log-start-offset-checkpoint` entry when that is higher (after
    /// DeleteRecords it can lie inside the first segment; Kafka's
    /// `UnifiedLog` takes the larger of the two on load).
    pub fn log_start_offset(&self, checkpointed: Option<i64>) -> i64 {
        let first = self.segments.first().map_or(0, |s| s.base_offset);
        checkpointed.map_or(first, |c| c.max(first))
    }

    /// Where the log ending at `log_end` ends once a broker has loaded it:
    /// one that ends below its log start (segments removed behind the
    /// broker's back) is emptied and starts again there
    /// (`LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd`).
    pub fn loaded_log_end(&self, log_end: i64, checkpointed_start: Option<i64>) -> i64 {
        log_end.max(self.log_start_offset(checkpointed_start))
    }
}

/// A record found by its timestamp ([`Partition::offset_for_timestamp`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimestampOffset {
    pub offset: i64,
    pub timestamp: i64,
}

/// A file's last-modified time in epoch milliseconds, 0 when it cannot be
/// read (Java's `File.lastModified`).
fn last_modified_ms(path: &std::path::Path) -> i64 {
    std::fs::metadata(path)
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

impl Partition {
    /// Walk from `position` of segment `seg` on, every entry handed out (the
    /// walk goes on into later segments).
    pub fn walk_at(&self, seg: usize, position: u64, policy: Policy) -> Walk<'_> {
        let mut walk = Walk::new(self, i64::MIN, policy);
        walk.seg = seg;
        walk.start = position;
        walk
    }

    /// The largest timestamp of segment `seg`'s valid entries (Kafka's
    /// `LogSegment.largestTimestamp`, which recovery recomputes from the
    /// batches); `None` for an empty segment.
    pub fn segment_max_timestamp(&self, seg: usize) -> Result<Option<i64>> {
        let mut walk = self.walk_at(seg, 0, Policy::VALID_ENTRIES);
        let mut max = None;
        while let Some(w) = walk.next_entry()? {
            if w.segment.base_offset != self.segments.get(seg).map_or(0, |s| s.base_offset) {
                break;
            }
            let ts = w.entry.max_timestamp();
            max = max.max(Some(ts));
        }
        Ok(max)
    }

    /// The first record stamped at or after `target` with an offset at or
    /// above `start` (the log start offset), as a broker answers ListOffsets
    /// for a timestamp (`UnifiedLog.fetchOffsetByTimestamp` →
    /// `searchOffsetInLocalLog`): the first segment (not wholly below
    /// `start`) whose largest timestamp is at least `target`; in it (`LogSegment.findOffsetByTimestamp`) the
    /// time index's last entry stamped at or below `target` (else the
    /// segment's base offset), the offset index's position for the larger
    /// of that offset and `start`, and from there the first batch whose max
    /// timestamp reaches `target` and its first record that does
    /// (`FileRecords.searchForTimestamp`). `None` when no record is that late.
    pub fn offset_for_timestamp(
        &self,
        target: i64,
        start: i64,
        limits: DecodeLimits,
    ) -> Result<Option<TimestampOffset>> {
        let mut found_seg = None;
        for i in 0..self.segments.len() {
            // A segment wholly below the log start offset is one the broker
            // deletes (`UnifiedLog.deleteLogStartOffsetBreachedSegments`): not searched.
            let next_base = self.segments.get(i + 1).map_or(i64::MAX, |s| s.base_offset);
            if next_base <= start {
                continue;
            }
            let largest = match self.segment_max_timestamp(i)? {
                Some(m) => m,
                // No batch (a segment the cleaner emptied): Kafka's
                // `LogSegment.largestTimestamp` is then the log file's
                // last-modified time (its time index has no entry, so
                // `maxTimestampSoFar` is -1), which stops the search at this
                // segment and finds nothing in it: no offset, as
                // `kafka-consumer-groups --to-datetime` then falls back to
                // the log end (`OffsetsUtils.getLogTimestampOffsets`).
                None => self.segments.get(i).map_or(0, |s| last_modified_ms(&s.log)),
            };
            if largest >= target {
                found_seg = Some(i);
                break;
            }
        }
        let Some(i) = found_seg else { return Ok(None) };
        let Some(seg) = self.segments.get(i) else {
            return Ok(None);
        };
        let time_bytes = seg
            .timeindex
            .as_ref()
            .and_then(|p| {
                crate::log::files::read_regular(p, i32::MAX as u64)
                    .ok()
                    .flatten()
            })
            .unwrap_or_default();
        let used = index::used_entries(&time_bytes, index::TIME_ENTRY_LEN);
        let from_time = time_bytes
            .get(..used * index::TIME_ENTRY_LEN)
            .and_then(|b| index::time_entries(b, seg.base_offset).ok())
            .and_then(|entries| entries.into_iter().rfind(|e| e.timestamp <= target))
            .map_or(seg.base_offset, |e| e.offset);
        let position = index_start_position(seg, from_time.max(start));
        let mut walk = self.walk_at(i, position, Policy::VALID_ENTRIES);
        let mut scratch = Vec::new();
        let decode = |error| Error::Decode {
            path: seg.log.clone(),
            error,
        };
        while let Some(w) = walk.next_entry()? {
            if w.segment.base_offset != seg.base_offset {
                break;
            }
            match w.entry {
                Entry::V2(b) if b.header.max_timestamp >= target => {
                    for r in b.records(&mut scratch, limits).map_err(decode)?.flatten() {
                        if r.timestamp >= target && r.offset >= start {
                            return Ok(Some(TimestampOffset {
                                offset: r.offset,
                                timestamp: r.timestamp,
                            }));
                        }
                    }
                }
                Entry::Legacy(l) if l.timestamp >= target => {
                    for m in l.messages(&mut scratch, limits).map_err(decode)? {
                        if m.timestamp >= target && m.offset >= start {
                            return Ok(Some(TimestampOffset {
                                offset: m.offset,
                                timestamp: m.timestamp,
                            }));
                        }
                    }
                }
                _ => {}
            }
        }
        Ok(None)
    }
}

/// Where to start reading `seg` to find `offset` (see [`index::start_entry`]).
fn index_start_position(seg: &SegmentFiles, offset: i64) -> u64 {
    index_start_entry(seg, offset).1
}

/// [`index_start_position`] with the offset of the index entry (see [`index::start_entry`]).
fn index_start_entry(seg: &SegmentFiles, offset: i64) -> (i64, u64) {
    let bytes = seg
        .index
        .as_ref()
        .and_then(|path| {
            crate::log::files::read_regular(path, i32::MAX as u64)
                .ok()
                .flatten()
        })
        .unwrap_or_default();
    index::start_entry(&bytes, seg.base_offset, offset)
}

impl<'p> Walk<'p> {
    fn new(partition: &'p Partition, from: i64, policy: Policy) -> Self {
        let (seg, start) = if from == i64::MIN {
            (0, 0)
        } else {
            partition.seek(from).unwrap_or((0, 0))
        };
        Walk {
            partition,
            policy,
            from,
            seg,
            state: State::Open,
            start,
            damage: Vec::new(),
            next_offset: None,
            preparer: None,
        }
    }

    /// Have the read-ahead threads of the segments this walk opens from
    /// now on prepare their plain batches with `preparer` (see
    /// [`SegmentReader::prepare_ahead`]); each entry's preparation comes in
    /// [`Walked::prepared`].
    pub fn prepare_ahead(&mut self, preparer: Arc<dyn PrepareBatch>) {
        self.preparer = Some(preparer);
    }

    /// One past the last offset handed out so far (`None` before the first entry).
    pub fn next_offset(&self) -> Option<i64> {
        self.next_offset
    }

    /// The damage met so far (every [`Step::Damage`] also lands here).
    pub fn damage(&self) -> &[Damage] {
        &self.damage
    }

    /// Take the damage met so far out of the walk.
    pub fn take_damage(&mut self) -> Vec<Damage> {
        std::mem::take(&mut self.damage)
    }

    /// The next entry, skipping segment boundaries and recording damage.
    pub fn next_entry(&mut self) -> Result<Option<Walked<'_, 'p>>> {
        loop {
            match self.advance()? {
                Advanced::Entry => break,
                Advanced::End => return Ok(None),
                Advanced::SegmentStart(..) | Advanced::SegmentEnd(..) | Advanced::Damage => {}
            }
        }
        Ok(self.current())
    }

    /// The next step (segment boundaries, entries and damage in file order).
    pub fn next_step(&mut self) -> Result<Option<Step<'_, 'p>>> {
        Ok(match self.advance()? {
            Advanced::End => None,
            Advanced::SegmentStart(segment, position) => {
                Some(Step::SegmentStart { segment, position })
            }
            Advanced::SegmentEnd(segment, file_len) => Some(Step::SegmentEnd { segment, file_len }),
            Advanced::Damage => self.damage.last().cloned().map(Step::Damage),
            Advanced::Entry => self.current().map(Step::Entry),
        })
    }

    fn current(&self) -> Option<Walked<'_, 'p>> {
        let State::Reading(reader) = &self.state else {
            return None;
        };
        let segment = self.partition.segments.get(self.seg)?;
        let (entry, check) = reader.current()?;
        Some(Walked {
            segment,
            entry,
            next_offset: entry.checked_next_offset()?,
            check,
            prepared: reader.prepared(),
        })
    }

    /// Move to the next step; an entry is left current in the reader.
    fn advance(&mut self) -> Result<Advanced<'p>> {
        loop {
            let Some(segment) = self.partition.segments.get(self.seg) else {
                self.state = State::Done;
                return Ok(Advanced::End);
            };
            let reader = match &mut self.state {
                State::Done => return Ok(Advanced::End),
                State::Ending(file_len) => {
                    let file_len = *file_len;
                    self.seg += 1;
                    self.start = 0;
                    self.state = State::Open;
                    return Ok(Advanced::SegmentEnd(segment, file_len));
                }
                State::Open => {
                    let position = self.start;
                    self.state = State::Reading(Box::new(self.open(&segment.log, position)?));
                    return Ok(Advanced::SegmentStart(segment, position));
                }
                State::Reading(reader) => reader,
            };
            if !reader.advance()? {
                let file_len = reader.file_len();
                let Some(Tail::Truncated { at, error, .. } | Tail::Corrupt { at, error, .. }) =
                    reader.tail()
                else {
                    self.state = State::Ending(file_len);
                    continue;
                };
                self.framing_damage(segment, at, error, file_len)?;
                return Ok(Advanced::Damage);
            }
            let file_len = reader.file_len();
            let Some((entry, _)) = reader.current() else {
                continue;
            };
            let position = entry.position();
            let base_offset = entry.base_offset();
            let entry_size = entry.size();
            let next = entry.checked_next_offset();
            let problem = match next {
                None => Some(DecodeError::new(
                    position,
                    DecodeErrorKind::OffsetOverflow {
                        base_offset,
                        last_offset_delta: entry.last_offset().wrapping_sub(base_offset),
                    },
                )),
                Some(_) if self.policy.checks == Checks::Crc => entry.check_crc().err(),
                Some(_) => None,
            };
            if let Some(error) = problem {
                self.damage.push(Damage {
                    file: segment.log.clone(),
                    position,
                    error,
                    base_offset: Some(base_offset),
                    framing: false,
                    entry_size: Some(entry_size),
                    resumes: None,
                    search_gave_up: None,
                    file_len,
                });
                if self.policy.on_damage == OnDamage::Stop {
                    self.state = State::Done;
                }
                return Ok(Advanced::Damage);
            }
            let Some(next) = next else { continue };
            if next <= self.from {
                continue;
            }
            self.next_offset = Some(next);
            if let Some(m) = self.policy.meter {
                m.add(entry_size);
            }
            return Ok(Advanced::Entry);
        }
    }

    /// Record the damage that ended the framing of `segment` at `at`, with
    /// where valid batches resume after it (if they do), and go on as the
    /// policy says: from there, at the next segment, or not at all.
    fn framing_damage(
        &mut self,
        segment: &SegmentFiles,
        at: u64,
        error: DecodeError,
        file_len: u64,
    ) -> Result<()> {
        // Searched within the bytes the read saw: a segment that grows
        // while it is read (a writer appending to a directory whose lock
        // nobody holds) has its last batch half-written at `file_len`, and
        // the batches appended after it are past that length. Found there,
        // they would turn a torn tail (what the file was when read) into
        // "damage, valid batches resume later".
        // Zeros to the end of the file hold no batch: nothing to search.
        let search = match error.kind {
            DecodeErrorKind::TrailingZeros { .. } => Resync::NotFound,
            _ => resync_within(&segment.log, at.saturating_add(1), file_len)?,
        };
        let (resumes, search_gave_up) = match search {
            Resync::Found(r) => (Some(r), None),
            Resync::NotFound => (None, None),
            Resync::GaveUp { at } => (None, Some(at)),
        };
        let error = match (error.kind, resumes) {
            (
                DecodeErrorKind::PastEndOfFile {
                    declared,
                    available,
                },
                Some(r),
            ) => DecodeError::new(
                error.offset,
                DecodeErrorKind::LengthPastEof {
                    declared,
                    available,
                    resumes_at: r.position,
                },
            ),
            _ => error,
        };
        let resync_here = self.policy.on_damage == OnDamage::Resync;
        self.damage.push(Damage {
            file: segment.log.clone(),
            position: at,
            error,
            base_offset: None,
            framing: true,
            entry_size: None,
            resumes: resumes.filter(|_| resync_here),
            search_gave_up,
            file_len,
        });
        self.state = match (self.policy.on_damage, resumes) {
            (OnDamage::Resync, Some(r)) => {
                State::Reading(Box::new(self.open(&segment.log, r.position)?))
            }
            (OnDamage::Resync, None) => State::Ending(file_len),
            (OnDamage::Stop, _) => State::Done,
        };
        Ok(())
    }

    fn open(&self, log: &Path, position: u64) -> Result<SegmentReader> {
        let mut reader = SegmentReader::open_at(log, position)?;
        reader.reads(self.policy.reads);
        if let Some(depth) = self.policy.check_ahead {
            reader.check_ahead(depth);
        }
        if let Some(r) = &self.preparer {
            reader.prepare_ahead(Arc::clone(r));
        }
        Ok(reader)
    }
}

/// The bytes of entries walks have passed, for a progress display: a
/// command makes one ([`Meter::for_process`]), hands it to the walks it
/// starts ([`Policy::meter`], [`HeaderWalk::metered`](crate::log::headers::HeaderWalk::metered)) and reads it from
/// its display's thread. One relaxed add per entry.
#[derive(Debug, Default)]
pub struct Meter(AtomicU64);

impl Meter {
    /// A meter that lives until the process ends, so that walks and option
    /// values can hold it as a plain reference (one per command run).
    pub fn for_process() -> &'static Meter {
        Box::leak(Box::default())
    }

    pub(crate) fn add(&self, bytes: u64) {
        self.0.fetch_add(bytes, Ordering::Relaxed);
    }

    /// The bytes counted so far.
    pub fn bytes(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }
}

/// What [`Walk::advance`] moved to.
enum Advanced<'p> {
    End,
    SegmentStart(&'p SegmentFiles, u64),
    SegmentEnd(&'p SegmentFiles, u64),
    Damage,
    Entry,
}

/// How a search for the next valid batch ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resync {
    /// A whole, CRC-valid v2 batch starts here.
    Found(Resynced),
    /// No valid batch starts anywhere after the damage.
    NotFound,
    /// The search spent its budget of checksum work before `at` (a file
    /// crafted to look like batches everywhere): the rest is not searched.
    GaveUp { at: u64 },
}

/// The largest batch a resync candidate may claim: Kafka's
/// `max.message.bytes` is an int32, but a batch larger than this is
/// implausible enough to pass over when searching through junk.
const RESYNC_MAX_BATCH: u64 = 256 << 20;

/// Search `log` forward from `from` for the next position where a plausible
/// v2 batch starts; see [`resync_bounded`]. `None` when there is none (or
/// the search gave up).
pub fn resync(log: &Path, from: u64) -> Result<Option<Resynced>> {
    Ok(match resync_bounded(log, from)? {
        Resync::Found(r) => Some(r),
        Resync::NotFound | Resync::GaveUp { .. } => None,
    })
}

/// Search `log` forward from `from` for the next position where a whole,
/// CRC-valid v2 batch starts. A candidate must pass cheap header checks
/// first — magic 2, no unused attribute bits (Kafka's writers set only bits
/// 0-6), a known codec, a size within the file and below
/// `RESYNC_MAX_BATCH`, counts that fit the offsets and the bytes,
/// producer fields that agree: random bytes pass them about once in 10^8
/// positions. Only then is its CRC computed, in fixed chunks (memory does
/// not grow with the claimed size). The checksum work is capped at four
/// times the bytes searched plus 64 MiB, so a file crafted to look like
/// batches everywhere ends the search in linear time.
pub fn resync_bounded(log: &Path, from: u64) -> Result<Resync> {
    resync_within(log, from, u64::MAX)
}

/// [`resync_bounded`] over the first `limit` bytes of the file at most: a
/// batch found must end within them.
pub fn resync_within(log: &Path, from: u64, limit: u64) -> Result<Resync> {
    let file = crate::log::files::open_regular(log)?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(log, "stat", e))?
        .len()
        .min(limit);
    const WINDOW: u64 = 1 << 20;
    // Buffers no larger than what is left to search: a small damaged file
    // does not pay for zeroing a megabyte.
    let left = len.saturating_sub(from);
    let mut buf = vec![0u8; left.min(WINDOW + HEADER_LEN as u64) as usize];
    let mut chunk = vec![0u8; left.clamp(1, 1 << 16) as usize];
    let mut start = from;
    let mut budget = len.saturating_sub(from).saturating_mul(4) + (64 << 20);
    while start + (HEADER_LEN as u64) <= len {
        // Skip the holes of a sparse file: they read as zeros, and a batch
        // header has a non-zero batchLength at bytes 8..12, so a batch
        // starts at most a header's length before the data that follows.
        match crate::log::files::data_extent(&file, start, len) {
            None => break,
            Some((data, _)) => start = start.max(data.saturating_sub(HEADER_LEN as u64)),
        }
        if start + (HEADER_LEN as u64) > len {
            break;
        }
        let n = (len - start).min(buf.len() as u64) as usize;
        let window = buf.get_mut(..n).unwrap_or(&mut []);
        crate::log::read::read_exact_at(&file, window, start)
            .map_err(|e| Error::io(log, "read", e))?;
        let candidates = n.saturating_sub(HEADER_LEN) + 1;
        for i in 0..candidates.min(WINDOW as usize) {
            let Some(head) = window.get(i..i + HEADER_LEN) else {
                break;
            };
            let pos = start + i as u64;
            let Some(size) = plausible_header(head, pos, len) else {
                continue;
            };
            let cost = size;
            if cost > budget {
                return Ok(Resync::GaveUp { at: pos });
            }
            budget -= cost;
            // A candidate inside the window is checked from the bytes at
            // hand; only a longer one is read again, in chunks.
            let crc_ok = match window.get(i..i + size as usize) {
                Some(entry) => batch::BatchView::new(entry, pos).is_ok_and(|b| b.crc_valid()),
                None => crc_matches(&file, log, pos, size, &mut chunk)?,
            };
            if crc_ok {
                let base_offset = batch::BatchHeader::parse(head, pos).map_or(0, |h| h.base_offset);
                return Ok(Resync::Found(Resynced {
                    position: pos,
                    base_offset,
                }));
            }
        }
        start += WINDOW;
    }
    Ok(Resync::NotFound)
}

/// The entry size a v2 batch header at `pos` claims, if it is plausible.
fn plausible_header(head: &[u8], pos: u64, len: u64) -> Option<u64> {
    if head.get(batch::MAGIC) != Some(&2) {
        return None;
    }
    let h = batch::BatchHeader::parse(head, pos).ok()?;
    let size = h.size();
    let unused_attributes = h.attributes & !0x7f;
    let codec = h.compression_id();
    let records = i64::from(h.records_count);
    let plausible = size >= HEADER_LEN as u64
        && size <= RESYNC_MAX_BATCH
        && pos + size <= len
        && unused_attributes == 0
        && codec <= 4
        && h.last_offset_delta >= 0
        && records >= 0
        && records <= i64::from(h.last_offset_delta) + 1
        // An uncompressed record takes at least 7 bytes.
        && (codec != 0 || records * 7 <= (size - HEADER_LEN as u64) as i64)
        && h.partition_leader_epoch >= -1
        && (h.producer_id >= 0 || (h.producer_epoch == -1 && h.base_sequence == -1));
    plausible.then_some(size)
}

/// Whether the stored CRC of the `size`-byte batch at `pos` matches, read in chunks.
fn crc_matches(
    file: &std::fs::File,
    log: &Path,
    pos: u64,
    size: u64,
    chunk: &mut [u8],
) -> Result<bool> {
    let mut stored = [0u8; 4];
    crate::log::read::read_exact_at(file, &mut stored, pos + batch::CRC as u64)
        .map_err(|e| Error::io(log, "read", e))?;
    let mut crc = 0u32;
    let mut at = pos + batch::ATTRIBUTES as u64;
    let end = pos + size;
    while at < end {
        let n = ((end - at) as usize).min(chunk.len());
        let part = chunk.get_mut(..n).unwrap_or(&mut []);
        crate::log::read::read_exact_at(file, part, at).map_err(|e| Error::io(log, "read", e))?;
        crc = crate::format::crc::crc32c_append(crc, part);
        at += n as u64;
    }
    Ok(crc == u32::from_be_bytes(stored))
}
