//! What kafka-dump-log (`DumpLogSegments`) finds in an index besides the
//! lines it prints: `dumpIndex` reads the batch at each offset-index entry's
//! position and compares its last offset with the entry; `dumpTimeIndex`
//! finds each time-index entry's batch through the offset index
//! (`OffsetIndex.lookup`) and compares offsets and timestamps. Both read the
//! log the way the tool does (`FileRecords.slice`,
//! `FileLogInputStream.nextBatch`), so klog finds what it finds, and stops
//! where it throws. Unlike the broker's checks ([`super::recovery`]), these
//! are the tool's: `dump-segment` prints them in its words.

use std::collections::HashMap;
use std::fs::File;
use std::io;

use crate::format::{BatchView, DecodeLimits, LegacyView};

/// `FileLogInputStream.HEADER_SIZE_UP_TO_MAGIC`: offset, size, CRC or
/// partition leader epoch, magic.
const HEADER_UP_TO_MAGIC: u64 = 17;
/// `LegacyRecord.RECORD_OVERHEAD_V0`: the smallest size `nextBatch` takes.
const MIN_SIZE: i32 = 14;
/// `DefaultRecordBatch.RECORD_BATCH_OVERHEAD`: what `lastOffset()` reads.
const V2_HEADER: u64 = 61;
/// `AbstractIndex.warmEntries()` for 8-byte entries: 8192 / 8.
const WARM_ENTRIES: usize = 1024;

/// What the tool found in one index file.
#[derive(Debug, Default)]
pub struct IndexDump {
    /// The entries it prints (unless `--verify-index-only`): (offset,
    /// position) of an offset index, (timestamp, offset) of a time index.
    pub shown: Vec<(i64, i64)>,
    /// What it says on stderr after every file, in the order found.
    pub disagreements: Vec<Disagreement>,
    /// Where it threw (and stopped, the whole tool with it).
    pub threw: Option<Threw>,
}

/// One thing kafka-dump-log reports about an index entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Disagreement {
    /// `dumpIndex`: the batch at the entry's position ends at `log_offset`.
    Offset { index_offset: i64, log_offset: i64 },
    /// `dumpTimeIndex`: the entry's batch's largest record timestamp.
    Timestamp {
        index_timestamp: i64,
        log_timestamp: i64,
    },
    /// `dumpTimeIndex`: an entry whose timestamp is not above the one
    /// before it.
    OutOfOrder { index_timestamp: i64, previous: i64 },
    /// `dumpTimeIndex`: no batch ends at the entry's offset: `log_offset`
    /// is the last offset of the first batch past it, or -1.
    NotFound { index_offset: i64, log_offset: i64 },
}

/// An exception that ends the tool: what it was and where in the log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Threw {
    pub position: u64,
    pub why: String,
}

/// The log beside an index, read at positions as the tool's channel reads.
pub struct LogReads<'a> {
    pub file: &'a File,
    pub len: u64,
}

impl LogReads<'_> {
    /// `Utils.readFullyOrFail`: `n` bytes at `at`, or the EOFException.
    fn read(&self, at: u64, n: u64, what: &str) -> Result<Vec<u8>, Step> {
        if at.checked_add(n).is_none_or(|end| end > self.len) {
            return Err(Step::Threw(Threw {
                position: at,
                why: format!(
                    "java.io.EOFException: reading the {what} ({n} bytes) runs past the end of the file ({} bytes)",
                    self.len
                ),
            }));
        }
        let mut buf = vec![0u8; n as usize];
        crate::log::read::read_exact_at(self.file, &mut buf, at).map_err(Step::Io)?;
        Ok(buf)
    }

    /// `FileLogInputStream.nextBatch` at `position` of a slice ending at
    /// `end`: the batch's size on disk and last offset, or None where the
    /// iteration ends quietly.
    fn next_batch(&self, position: u64, end: u64) -> Result<Option<(u64, i64)>, Step> {
        // `position >= end - HEADER_SIZE_UP_TO_MAGIC`
        if position.saturating_add(HEADER_UP_TO_MAGIC) >= end {
            return Ok(None);
        }
        let head = self.read(position, HEADER_UP_TO_MAGIC, "log header")?;
        let offset = i64::from_be_bytes(head[0..8].try_into().unwrap_or_default());
        let size = i32::from_be_bytes(head[8..12].try_into().unwrap_or_default());
        if size < MIN_SIZE {
            return Err(Step::Threw(Threw {
                position,
                why: format!(
                    "org.apache.kafka.common.errors.CorruptRecordException: Found record size {size} smaller than minimum record overhead ({MIN_SIZE})"
                ),
            }));
        }
        let on_disk = 12 + size as u64;
        if position + on_disk > end {
            return Ok(None);
        }
        let magic = head[16] as i8;
        let last = if magic < 2 {
            offset
        } else {
            let header = self.read(position, V2_HEADER, "record batch header")?;
            let base = i64::from_be_bytes(header[0..8].try_into().unwrap_or_default());
            let delta = i32::from_be_bytes(header[23..27].try_into().unwrap_or_default());
            base.wrapping_add(i64::from(delta))
        };
        Ok(Some((on_disk, last)))
    }

    /// The largest record timestamp of the batch at `position` of
    /// `on_disk` bytes (`for (Record record : batch)`), which reads and
    /// decodes the whole batch.
    fn max_timestamp(
        &self,
        position: u64,
        on_disk: u64,
        limits: DecodeLimits,
    ) -> Result<i64, Step> {
        let bytes = self.read(position, on_disk, "full record batch")?;
        let threw = |why: String| Step::Threw(Threw { position, why });
        let mut scratch = Vec::new();
        let mut max = -1i64;
        if bytes.get(16).is_some_and(|&m| (m as i8) < 2) {
            let view = LegacyView::new(&bytes, position).map_err(|e| threw(e.to_string()))?;
            for m in view
                .messages(&mut scratch, limits)
                .map_err(|e| threw(e.to_string()))?
            {
                max = max.max(m.timestamp);
            }
        } else {
            let view = BatchView::new(&bytes, position).map_err(|e| threw(e.to_string()))?;
            for r in view
                .records(&mut scratch, limits)
                .map_err(|e| threw(e.to_string()))?
            {
                let r = r.map_err(|e| threw(e.to_string()))?;
                max = max.max(r.timestamp);
            }
        }
        Ok(max)
    }
}

/// Why a read stopped: the tool threw, or the file could not be read.
enum Step {
    Threw(Threw),
    Io(io::Error),
}

/// Entries of `len`-byte slots as the tool's read-only index holds them:
/// every whole slot of the file, preallocated zeros included.
fn slots(bytes: &[u8], len: usize) -> impl Iterator<Item = &[u8]> {
    bytes.chunks_exact(len)
}

fn offset_slot(slot: &[u8], base: i64) -> (i64, i32) {
    let rel = i32::from_be_bytes(slot[0..4].try_into().unwrap_or_default());
    let pos = i32::from_be_bytes(slot[4..8].try_into().unwrap_or_default());
    (base.wrapping_add(i64::from(rel)), pos)
}

/// `DumpLogSegments.dumpIndex`: each entry (up to the first after the
/// first whose offset is the base offset: the tool takes it for
/// preallocated space) against the first batch of the log sliced at its
/// position to `max_message_size` bytes.
pub fn offset_index(
    index: &[u8],
    base: i64,
    log: &LogReads<'_>,
    max_message_size: i32,
) -> io::Result<IndexDump> {
    let mut dump = IndexDump::default();
    for (i, slot) in slots(index, 8).enumerate() {
        let (offset, position) = offset_slot(slot, base);
        if offset == base && i > 0 {
            break;
        }
        match first_batch_at(log, position, max_message_size) {
            Ok(last) => {
                if last != offset {
                    dump.disagreements.push(Disagreement::Offset {
                        index_offset: offset,
                        log_offset: last,
                    });
                }
                dump.shown.push((offset, i64::from(position)));
            }
            Err(Step::Threw(t)) => {
                dump.threw = Some(t);
                break;
            }
            Err(Step::Io(e)) => return Err(e),
        }
    }
    Ok(dump)
}

/// Where `FileRecords.slice(position, …)` starts, or the
/// IllegalArgumentException it throws for a position outside the log.
fn slice_start(log: &LogReads<'_>, position: i32) -> Result<u64, Step> {
    let threw = |at: u64, why: String| Err(Step::Threw(Threw { position: at, why }));
    match u64::try_from(position) {
        Err(_) => threw(
            0,
            format!("java.lang.IllegalArgumentException: Invalid position: {position}"),
        ),
        Ok(at) if at > log.len => threw(
            at,
            format!(
                "java.lang.IllegalArgumentException: Slice from position {position} exceeds end position of the log ({} bytes)",
                log.len
            ),
        ),
        Ok(at) => Ok(at),
    }
}

/// `fileRecords.slice(position, size).batches().iterator().next().lastOffset()`.
fn first_batch_at(log: &LogReads<'_>, position: i32, size: i32) -> Result<i64, Step> {
    let at = slice_start(log, position)?;
    let end = at
        .saturating_add(u64::try_from(size).unwrap_or(0))
        .min(log.len);
    match log.next_batch(at, end)? {
        Some((_, last)) => Ok(last),
        None => Err(Step::Threw(Threw {
            position: at,
            why: format!(
            "java.util.NoSuchElementException: no whole batch within {} bytes at position {position}",
            end - at
        ),
        })),
    }
}

/// `OffsetIndex.lookup(target)` over every slot of `index`
/// (`AbstractIndex.largestLowerBoundSlotFor`, its warm section and binary
/// search as they are): the entry's position, or 0.
pub fn lookup_position(index: &[u8], base: i64, target: i64) -> i32 {
    let entries: Vec<(i64, i32)> = slots(index, 8).map(|s| offset_slot(s, base)).collect();
    if entries.is_empty() {
        return 0;
    }
    let n = entries.len();
    let search = |begin: usize, end: usize| -> usize {
        let (mut lo, mut hi) = (begin, end);
        while lo < hi {
            let mid = (lo + hi).div_ceil(2);
            match entries[mid].0.cmp(&target) {
                std::cmp::Ordering::Greater => hi = mid - 1,
                std::cmp::Ordering::Less => lo = mid,
                std::cmp::Ordering::Equal => return mid,
            }
        }
        lo
    };
    let first_hot = (n - 1).saturating_sub(WARM_ENTRIES);
    let slot = if entries[first_hot].0 < target {
        Some(search(first_hot, n - 1))
    } else if entries[0].0 > target {
        None
    } else {
        Some(search(0, first_hot))
    };
    slot.map_or(0, |s| entries[s].1)
}

/// `DumpLogSegments.dumpTimeIndex`: each entry (up to the first after the
/// first whose offset is the base offset) found through the offset index:
/// the batches from the position it gives to the end of the log, the first
/// that ends at or past the entry's offset, and its largest timestamp.
///
/// `eager`: the Java tool (4.3 on) lists every batch to the end of the log
/// before it looks (and throws on a bad one past the batch it wants); the
/// Scala tool's `find` stops at that batch.
pub fn time_index(
    time: &[u8],
    index: &[u8],
    base: i64,
    log: &LogReads<'_>,
    (limits, eager): (DecodeLimits, bool),
) -> io::Result<IndexDump> {
    let mut dump = IndexDump::default();
    let mut walks = Walks::default();
    let mut previous = -1i64;
    for (i, slot) in slots(time, 12).enumerate() {
        let timestamp = i64::from_be_bytes(slot[0..8].try_into().unwrap_or_default());
        let rel = i32::from_be_bytes(slot[8..12].try_into().unwrap_or_default());
        let offset = base.wrapping_add(i64::from(rel));
        if offset == base && i > 0 {
            break;
        }
        let position = lookup_position(index, base, offset);
        let found =
            first_batch_from(log, &mut walks, (position, eager), offset).and_then(|batch| {
                match batch {
                    None => Ok(Err(-1)),
                    Some((at, size, last)) if last == offset => {
                        log.max_timestamp(at, size, limits).map(Ok)
                    }
                    Some((_, _, last)) => Ok(Err(last)),
                }
            });
        match found {
            Ok(Err(last)) => dump.disagreements.push(Disagreement::NotFound {
                index_offset: offset,
                log_offset: last,
            }),
            Ok(Ok(max)) => {
                if max != timestamp {
                    dump.disagreements.push(Disagreement::Timestamp {
                        index_timestamp: timestamp,
                        log_timestamp: max,
                    });
                }
                if previous >= timestamp {
                    dump.disagreements.push(Disagreement::OutOfOrder {
                        index_timestamp: timestamp,
                        previous,
                    });
                }
            }
            Err(Step::Threw(t)) => {
                dump.threw = Some(t);
                break;
            }
            Err(Step::Io(e)) => return Err(e),
        }
        dump.shown.push((timestamp, offset));
        previous = timestamp;
    }
    Ok(dump)
}

/// The batches from each position to the end of the log, as `nextBatch`
/// frames them, each read once. Kafka's tool lists every batch to the end
/// for each entry (and throws on a bad one, even past the batch it
/// wants); the outcome of the walk from a position is remembered, so the
/// answer is the same without reading the log once per entry.
#[derive(Default)]
struct Walks {
    /// Position → (size on disk, last offset) of the batch there.
    next: HashMap<u64, (u64, i64)>,
    /// Position → how the walk from it ends: quietly, or in the exception
    /// of that index in `threw`.
    outcome: HashMap<u64, Option<usize>>,
    threw: Vec<Threw>,
}

impl Walks {
    /// How the walk from `start` to the end of the log ends.
    fn outcome_from(&mut self, log: &LogReads<'_>, start: u64) -> Result<Option<usize>, Step> {
        let mut path = Vec::new();
        let mut at = start;
        let outcome = loop {
            if let Some(&known) = self.outcome.get(&at) {
                break known;
            }
            match log.next_batch(at, log.len) {
                Ok(Some((size, last))) => {
                    self.next.insert(at, (size, last));
                    path.push(at);
                    at += size;
                }
                Ok(None) => break None,
                Err(Step::Threw(t)) => {
                    self.threw.push(t);
                    break Some(self.threw.len() - 1);
                }
                Err(e) => return Err(e),
            }
        };
        self.outcome.insert(at, outcome);
        for p in path {
            self.outcome.insert(p, outcome);
        }
        Ok(outcome)
    }
}

/// The first batch from `position` whose last offset is at least `target`
/// (its position, size, last offset), where the walk to the end of the
/// log does not throw.
fn first_batch_from(
    log: &LogReads<'_>,
    walks: &mut Walks,
    (position, eager): (i32, bool),
    target: i64,
) -> Result<Option<(u64, u64, i64)>, Step> {
    let start = slice_start(log, position)?;
    if eager {
        if let Some(t) = walks.outcome_from(log, start)? {
            return Err(Step::Threw(walks.threw[t].clone()));
        }
    }
    let mut at = start;
    loop {
        let batch = match walks.next.get(&at) {
            Some(&known) => Some(known),
            None => log.next_batch(at, log.len)?,
        };
        let Some((size, last)) = batch else {
            return Ok(None);
        };
        walks.next.insert(at, (size, last));
        if last >= target {
            return Ok(Some((at, size, last)));
        }
        at += size;
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    /// A v2 batch's first 61 bytes as `nextBatch` and `lastOffset()` read
    /// them (base offset, size, magic, last offset delta), padded to `len`.
    fn batch(base: i64, last_delta: i32, len: usize) -> Vec<u8> {
        let mut b = vec![0u8; len];
        b[0..8].copy_from_slice(&base.to_be_bytes());
        b[8..12].copy_from_slice(&((len - 12) as i32).to_be_bytes());
        b[16] = 2;
        b[23..27].copy_from_slice(&last_delta.to_be_bytes());
        b
    }

    fn entry(rel: i32, pos: i32) -> Vec<u8> {
        [rel.to_be_bytes(), pos.to_be_bytes()].concat()
    }

    fn log_of(bytes: &[u8]) -> tempfile::NamedTempFile {
        let mut f = tempfile::NamedTempFile::new().unwrap();
        f.write_all(bytes).unwrap();
        f
    }

    #[test]
    fn offset_index_entries_against_the_batch_at_their_position() {
        let log = [batch(100, 4, 70), batch(105, 2, 80)].concat();
        let f = log_of(&log);
        let file = f.reopen().unwrap();
        let reads = LogReads {
            file: &file,
            len: log.len() as u64,
        };
        // (104, 0) and (107, 70) name their batches' last offsets; (105, 70)
        // does not; slot 3 names the base offset again: the tool stops.
        let index = [
            entry(4, 0),
            entry(7, 70),
            entry(5, 70),
            entry(0, 0),
            entry(9, 0),
        ]
        .concat();
        let d = offset_index(&index, 100, &reads, 5 << 20).unwrap();
        assert_eq!(d.shown, vec![(104, 0), (107, 70), (105, 70)]);
        assert_eq!(
            d.disagreements,
            vec![Disagreement::Offset {
                index_offset: 105,
                log_offset: 107
            }]
        );
        assert!(d.threw.is_none());
        // A slice of 75 bytes holds the first batch (70) but not the second (80).
        let d = offset_index(&index, 100, &reads, 75).unwrap();
        assert_eq!(d.shown, vec![(104, 0)]);
        assert!(d
            .threw
            .unwrap()
            .why
            .starts_with("java.util.NoSuchElementException"));
        // A size under 14 is CorruptRecordException, past the end IllegalArgumentException.
        let mut bad = batch(100, 0, 70);
        bad[8..12].copy_from_slice(&13i32.to_be_bytes());
        let g = log_of(&bad);
        let file = g.reopen().unwrap();
        let reads = LogReads {
            file: &file,
            len: 70,
        };
        let d = offset_index(&entry(0, 0), 100, &reads, 5 << 20).unwrap();
        assert!(d.threw.unwrap().why.contains("CorruptRecordException"));
        let d = offset_index(&entry(0, 71), 100, &reads, 5 << 20).unwrap();
        assert!(d.threw.unwrap().why.contains("IllegalArgumentException"));
    }

    #[test]
    fn lookup_is_kafkas_search_over_every_slot() {
        let index = [entry(4, 0), entry(9, 70), entry(15, 150)].concat();
        // The largest entry at or below the target; below the first: 0.
        assert_eq!(lookup_position(&index, 100, 109), 70);
        assert_eq!(lookup_position(&index, 100, 114), 70);
        assert_eq!(lookup_position(&index, 100, 120), 150);
        assert_eq!(lookup_position(&index, 100, 103), 0);
        // Preallocated zero slots after the entries are searched too: a
        // target above the last entry lands on the slot the binary search
        // reaches, as in AbstractIndex.
        let zeros = [index.clone(), vec![0u8; 16]].concat();
        assert_eq!(lookup_position(&zeros, 100, 200), 0);
        assert_eq!(lookup_position(&[], 100, 5), 0);
    }
}
