//! Entries of the offset index (`.index`) and time index (`.timeindex`).
//!
//! `.index`: 8-byte entries, `relativeOffset int32` + `position int32`.
//! `.timeindex`: 12-byte entries, `timestamp int64` + `relativeOffset int32`.
//! Both are sparse and never checksummed. A file preallocated by a broker
//! that crashed ends in zero slots; like kafka-dump-log, readers treat an
//! entry after the first whose offset is not above the previous one as
//! the end of the data.

use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};
use crate::format::trace::{NoTrace, Trace, Traced};

/// Bytes per offset-index entry.
pub const OFFSET_ENTRY_LEN: usize = 8;
/// Bytes per time-index entry.
pub const TIME_ENTRY_LEN: usize = 12;
/// Bytes per transaction-index entry.
pub const TXN_ENTRY_LEN: usize = 34;

/// One `.index` entry, made absolute with the segment's base offset.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OffsetEntry {
    /// Byte position of the entry in the index file.
    pub at: u64,
    pub relative_offset: i32,
    pub offset: i64,
    pub position: i32,
}

/// One `.timeindex` entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TimeEntry {
    pub at: u64,
    pub timestamp: i64,
    pub relative_offset: i32,
    pub offset: i64,
}

/// One `.txnindex` entry: an aborted transaction whose ABORT marker lies in the segment.
///
/// `version int16` (0), `producerId int64`, `firstOffset int64`,
/// `lastOffset int64` (the marker), `lastStableOffset int64` (the LSO when
/// the marker was written).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TxnEntry {
    pub at: u64,
    pub version: i16,
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

/// Decode the whole 34-byte entries of a transaction index. Like Kafka, a
/// partial trailing entry (a torn write) is ignored; its length is returned.
pub fn txn_entries(bytes: &[u8]) -> Result<(Vec<TxnEntry>, usize), DecodeError> {
    let whole = bytes.len() / TXN_ENTRY_LEN * TXN_ENTRY_LEN;
    let mut c = Cursor::new(bytes.get(..whole).unwrap_or(&[]), 0);
    let mut out = Vec::with_capacity(whole / TXN_ENTRY_LEN);
    while !c.is_empty() {
        out.push(txn_entry_traced(&mut c, &mut NoTrace)?);
    }
    Ok((out, bytes.len() - whole))
}

/// One transaction-index entry (`AbortedTxn`: version int16, which must be
/// 0, then producerId, firstOffset, lastOffset, lastStableOffset int64),
/// each field handed to `trace`.
pub fn txn_entry_traced<'a, T: Trace<'a>>(
    c: &mut Cursor<'a>,
    trace: &mut T,
) -> Result<TxnEntry, DecodeError> {
    let at = c.position();
    let mut c = Traced::new(c, trace);
    let version = c.i16("version")?;
    if version != 0 {
        return Err(DecodeError::new(
            at,
            DecodeErrorKind::UnknownVersion {
                schema: "AbortedTxn",
                version,
            },
        ));
    }
    Ok(TxnEntry {
        at,
        version,
        producer_id: c.i64("producerId")?,
        first_offset: c.i64("firstOffset")?,
        last_offset: c.i64("lastOffset")?,
        last_stable_offset: c.i64("lastStableOffset")?,
    })
}

/// Encode a transaction-index entry.
pub fn encode_txn_entry(
    producer_id: i64,
    first_offset: i64,
    last_offset: i64,
    last_stable_offset: i64,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(TXN_ENTRY_LEN);
    out.extend_from_slice(&0i16.to_be_bytes());
    out.extend_from_slice(&producer_id.to_be_bytes());
    out.extend_from_slice(&first_offset.to_be_bytes());
    out.extend_from_slice(&last_offset.to_be_bytes());
    out.extend_from_slice(&last_stable_offset.to_be_bytes());
    out
}

/// `RecordBatch.NO_TIMESTAMP`.
const NO_TIMESTAMP: i64 = -1;

/// Kafka's rule for which batches a segment's indexes record, the one
/// place klog keeps it (`LogSegment.append`, and `LogSegment.recover` when a
/// broker rebuilds indexes): once more than `index.interval.bytes` were
/// appended since the last entry, the next batch gets an offset entry — its
/// last offset at its position — and, when the largest timestamp so far has
/// grown since the last time entry, a time entry (that timestamp, at the
/// offset of the batch that carried it). A segment that stops being active
/// gets a last time entry the same way (`TimeIndex.maybeAppend` on roll).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct IndexSchedule {
    base_offset: i64,
    interval: u64,
    bytes_since_last_entry: u64,
    max_timestamp: i64,
    offset_of_max_timestamp: i64,
    last_time_entry: i64,
}

/// The entries due for a batch (see [`IndexSchedule::batch`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DueEntries {
    /// (offset, position): the batch's last offset at its position.
    pub offset: (i64, u64),
    /// (timestamp, offset), when the largest timestamp grew.
    pub time: Option<(i64, i64)>,
}

impl IndexSchedule {
    /// A new segment at `base_offset` whose time index ends at
    /// `last_time_entry` (`i64::MIN` when it is empty).
    ///
    /// Both the largest timestamp so far and the time index start at -1
    /// (`RecordBatch.NO_TIMESTAMP`: `LogSegment`'s `TimestampOffset.UNKNOWN`,
    /// and the last entry `TimeIndex` reports when empty), so a batch
    /// without timestamps (-1, as magic 0 has) never gets a time entry.
    pub fn new(base_offset: i64, interval: u64, last_time_entry: i64) -> Self {
        IndexSchedule {
            base_offset,
            interval,
            bytes_since_last_entry: 0,
            max_timestamp: NO_TIMESTAMP,
            offset_of_max_timestamp: -1,
            last_time_entry: last_time_entry.max(NO_TIMESTAMP),
        }
    }

    /// The same schedule, resumed as a broker resumes a segment it loads:
    /// its largest timestamp so far is the time index's last entry
    /// `(timestamp, offset)`, whatever the batches after that entry carry
    /// (`LogSegment.readMaxTimestampAndOffsetSoFar` takes
    /// `timeIndex.lastEntry()`, which is `(-1, base offset)` for an empty
    /// index: `None` here). Bytes since the last offset entry stay as the
    /// replay over the segment left them.
    pub fn resume_time_index(mut self, last: Option<(i64, i64)>) -> Self {
        let (timestamp, offset) = last.unwrap_or((NO_TIMESTAMP, self.base_offset));
        self.max_timestamp = timestamp.max(NO_TIMESTAMP);
        self.offset_of_max_timestamp = offset;
        self.last_time_entry = timestamp.max(NO_TIMESTAMP);
        self
    }

    /// A batch of `size` bytes at `position`, holding offsets up to
    /// `last_offset` with `max_timestamp`: the entries due for it, if any.
    pub fn batch(
        &mut self,
        position: u64,
        size: u64,
        last_offset: i64,
        max_timestamp: i64,
    ) -> Option<DueEntries> {
        if max_timestamp > self.max_timestamp {
            self.max_timestamp = max_timestamp;
            self.offset_of_max_timestamp = last_offset;
        }
        let due = (self.bytes_since_last_entry > self.interval).then(|| {
            self.bytes_since_last_entry = 0;
            DueEntries {
                offset: (last_offset, position),
                time: self.time_entry(),
            }
        });
        self.bytes_since_last_entry = self.bytes_since_last_entry.saturating_add(size);
        due
    }

    /// The time entry due now, if the largest timestamp grew since the last
    /// one (at an index interval, and when the segment stops being active).
    pub fn time_entry(&mut self) -> Option<(i64, i64)> {
        let due = self.max_timestamp > self.last_time_entry
            && self.offset_of_max_timestamp >= self.base_offset;
        due.then(|| {
            self.last_time_entry = self.max_timestamp;
            (self.max_timestamp, self.offset_of_max_timestamp)
        })
    }
}

/// How many entries of an index are used: whole entries, less the trailing
/// run of all-zero slots that `AbstractIndex` preallocates (the active
/// segment's index is `segment.index.bytes` long until the segment rolls).
/// An all-zero first slot of an offset index is never a real entry:
/// `LogSegment.append` indexes a batch only once more than
/// `index.interval.bytes` lie before it, so no entry points at position 0.
/// A time index can hold one: when a segment rolls,
/// `LogSegment.onBecomeInactiveSegment` appends its largest timestamp and
/// the offset it came with (`TimeIndex.maybeAppend`, which takes any
/// timestamp above the empty index's -1), and trims the file; a segment
/// whose records all carry timestamp 0, its first batch at the base offset,
/// leaves a time index of one entry of zeros. A file of exactly that one
/// slot is that entry (preallocated space is never a single entry long).
pub fn used_entries(bytes: &[u8], entry_len: usize) -> usize {
    let mut used = bytes.len() / entry_len;
    while used > 0
        && bytes
            .get((used - 1) * entry_len..used * entry_len)
            .is_some_and(|e| e.iter().all(|&b| b == 0))
    {
        used -= 1;
    }
    if used == 0 && entry_len == TIME_ENTRY_LEN && bytes.len() == TIME_ENTRY_LEN {
        return 1;
    }
    used
}

/// Where to start reading a segment to find `offset`: the largest usable
/// offset-index entry below it (an entry's offset is the last offset of the
/// batch at its position) as (offset, position), else the base offset at
/// position 0: what Kafka's `OffsetIndex.lookup` returns. Reading stops at
/// the first entry that does not increase; an index that does not decode
/// gives the base offset at 0.
pub fn start_entry(index_bytes: &[u8], base_offset: i64, offset: i64) -> (i64, u64) {
    let used = used_entries(index_bytes, OFFSET_ENTRY_LEN) * OFFSET_ENTRY_LEN;
    let Ok(entries) = offset_entries(index_bytes.get(..used).unwrap_or(&[]), base_offset) else {
        return (base_offset, 0);
    };
    let mut prev = i64::MIN;
    let mut found = (base_offset, 0);
    for e in entries {
        if e.offset <= prev || e.position < 0 {
            break;
        }
        prev = e.offset;
        if e.offset < offset {
            found = (e.offset, e.position as u64);
        }
    }
    found
}

fn check_len(bytes: &[u8], entry: usize) -> Result<(), DecodeError> {
    if !bytes.len().is_multiple_of(entry) {
        let whole = (bytes.len() / entry * entry) as u64;
        return Err(DecodeError::new(
            whole,
            DecodeErrorKind::IndexLength {
                len: bytes.len() as u64,
                entry_size: entry as u64,
            },
        ));
    }
    Ok(())
}

/// Decode every 8-byte entry of an offset index (a partial trailing entry is an error).
pub fn offset_entries(bytes: &[u8], base_offset: i64) -> Result<Vec<OffsetEntry>, DecodeError> {
    every_entry(bytes, OFFSET_ENTRY_LEN, |c| {
        offset_entry_traced(c, base_offset, &mut NoTrace)
    })
}

/// Every `entry_len`-byte entry of `bytes`, each read by `read` (a partial
/// trailing entry is an error).
fn every_entry<E>(
    bytes: &[u8],
    entry_len: usize,
    mut read: impl FnMut(&mut Cursor<'_>) -> Result<E, DecodeError>,
) -> Result<Vec<E>, DecodeError> {
    check_len(bytes, entry_len)?;
    let mut c = Cursor::new(bytes, 0);
    let mut out = Vec::with_capacity(bytes.len() / entry_len);
    while !c.is_empty() {
        out.push(read(&mut c)?);
    }
    Ok(out)
}

/// One offset-index entry (relativeOffset int32, position int32), each
/// field handed to `trace`.
pub fn offset_entry_traced<'a, T: Trace<'a>>(
    c: &mut Cursor<'a>,
    base_offset: i64,
    trace: &mut T,
) -> Result<OffsetEntry, DecodeError> {
    let at = c.position();
    let mut c = Traced::new(c, trace);
    let relative_offset = c.i32("relativeOffset")?;
    let offset = base_offset.wrapping_add(i64::from(relative_offset));
    let position = c.i32("position")?;
    Ok(OffsetEntry {
        at,
        relative_offset,
        offset,
        position,
    })
}

/// Decode every 12-byte entry of a time index.
pub fn time_entries(bytes: &[u8], base_offset: i64) -> Result<Vec<TimeEntry>, DecodeError> {
    every_entry(bytes, TIME_ENTRY_LEN, |c| {
        time_entry_traced(c, base_offset, &mut NoTrace)
    })
}

/// One time-index entry (timestamp int64, relativeOffset int32), each
/// field handed to `trace`.
pub fn time_entry_traced<'a, T: Trace<'a>>(
    c: &mut Cursor<'a>,
    base_offset: i64,
    trace: &mut T,
) -> Result<TimeEntry, DecodeError> {
    let at = c.position();
    let mut c = Traced::new(c, trace);
    let timestamp = c.i64("timestamp")?;
    let relative_offset = c.i32("relativeOffset")?;
    let offset = base_offset.wrapping_add(i64::from(relative_offset));
    Ok(TimeEntry {
        at,
        timestamp,
        relative_offset,
        offset,
    })
}

/// Why an index fails the check Kafka runs on an index it opens, if it
/// does: `OffsetIndex.sanityCheck` and `TimeIndex.sanityCheck`, over every
/// whole slot of the file (`AbstractIndex` counts a pre-existing file's
/// slots as entries, preallocated zeros included). `Err((position, why))`,
/// in Kafka's words; `position` is the byte the reason is about.
pub fn sanity_check(bytes: &[u8], base_offset: i64, time: bool) -> Result<(), (u64, String)> {
    let entry_len = if time {
        TIME_ENTRY_LEN
    } else {
        OFFSET_ENTRY_LEN
    };
    let entries = bytes.len() / entry_len;
    let slot = |i: usize| bytes.get(i * entry_len..(i + 1) * entry_len).unwrap_or(&[]);
    let int = |b: &[u8]| b.try_into().map(i32::from_be_bytes).unwrap_or(0);
    let long = |b: &[u8]| b.try_into().map(i64::from_be_bytes).unwrap_or(0);
    if entries > 0 {
        let last_at = ((entries - 1) * entry_len) as u64;
        let last = slot(entries - 1);
        if time {
            let ts = |entry: &[u8]| long(entry.get(..8).unwrap_or(&[]));
            let (first_ts, last_ts) = (ts(slot(0)), ts(last));
            if last_ts < first_ts {
                return Err((
                    last_at,
                    format!(
                        "time index has non-zero size but the last timestamp is {last_ts} \
                         which is less than the first timestamp {first_ts}"
                    ),
                ));
            }
        }
        let relative = if time { last.get(8..) } else { last.get(..4) };
        let last_offset = base_offset.wrapping_add(i64::from(int(relative.unwrap_or(&[]))));
        if last_offset < base_offset {
            return Err((
                last_at,
                format!(
                    "index has non-zero size but the last offset is {last_offset} \
                     which is less than the base offset {base_offset}"
                ),
            ));
        }
    }
    if !bytes.len().is_multiple_of(entry_len) {
        return Err((
            (entries * entry_len) as u64,
            format!(
                "index is corrupt, found {} bytes which is neither positive nor a multiple of {entry_len}",
                bytes.len()
            ),
        ));
    }
    Ok(())
}

/// Encode an offset-index entry.
pub fn encode_offset_entry(relative_offset: i32, position: i32) -> [u8; OFFSET_ENTRY_LEN] {
    let mut out = [0u8; OFFSET_ENTRY_LEN];
    let (a, b) = out.split_at_mut(4);
    a.copy_from_slice(&relative_offset.to_be_bytes());
    b.copy_from_slice(&position.to_be_bytes());
    out
}

/// Encode a time-index entry.
pub fn encode_time_entry(timestamp: i64, relative_offset: i32) -> [u8; TIME_ENTRY_LEN] {
    let mut out = [0u8; TIME_ENTRY_LEN];
    let (a, b) = out.split_at_mut(8);
    a.copy_from_slice(&timestamp.to_be_bytes());
    b.copy_from_slice(&relative_offset.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {

    /// `OffsetIndex.sanityCheck` / `TimeIndex.sanityCheck`, case by case.
    #[test]
    fn sanity_check_is_kafkas() {
        let off = |rel: i32, pos: i32| encode_offset_entry(rel, pos).to_vec();
        let time = |ts: i64, rel: i32| encode_time_entry(ts, rel).to_vec();
        // Empty files pass; whole entries at or above the base pass.
        assert_eq!(sanity_check(&[], 100, false), Ok(()));
        assert_eq!(
            sanity_check(&[off(0, 0), off(5, 300)].concat(), 100, false),
            Ok(())
        );
        // A last entry below the base offset (a negative relative offset).
        let e = sanity_check(&[off(0, 0), off(-1, 300)].concat(), 100, false).unwrap_err();
        assert_eq!(e.0, 8);
        assert!(
            e.1.contains("last offset is 99 which is less than the base offset 100"),
            "{}",
            e.1
        );
        // A partial entry: 13 bytes are one entry and 5 bytes.
        let e = sanity_check(&[off(0, 0), vec![0; 5]].concat(), 100, false).unwrap_err();
        assert_eq!(
            e,
            (
                8,
                "index is corrupt, found 13 bytes which is neither positive nor a multiple of 8"
                    .into()
            )
        );
        // Preallocated zeros count as entries: a zero last slot has
        // relative offset 0 (the base), which passes in an offset index...
        assert_eq!(
            sanity_check(&[off(3, 90), vec![0; 16]].concat(), 100, false),
            Ok(())
        );
        // ...and timestamp 0 in a time index, below the first timestamp.
        let e = sanity_check(
            &[time(1_700_000_000_000, 3), vec![0; 12]].concat(),
            100,
            true,
        )
        .unwrap_err();
        assert_eq!(e.0, 12);
        assert!(
            e.1.contains(
                "last timestamp is 0 which is less than the first timestamp 1700000000000"
            ),
            "{}",
            e.1
        );
        assert_eq!(
            sanity_check(&[time(5, 0), time(7, 2)].concat(), 100, true),
            Ok(())
        );
        let e = sanity_check(&[time(5, 0), time(7, -2)].concat(), 100, true).unwrap_err();
        assert!(e.1.contains("last offset is 98"), "{}", e.1);
    }

    use super::*;

    #[test]
    fn one_zero_time_entry_is_a_rolled_segment_of_timestamp_0() {
        // Kafka trims a rolled segment's time index to its entries, the
        // last one appended on roll: (0, base offset) is 12 zero bytes.
        assert_eq!(used_entries(&[0; 12], TIME_ENTRY_LEN), 1);
        // More zero slots than that are preallocated space.
        assert_eq!(used_entries(&[0; 24], TIME_ENTRY_LEN), 0);
        assert_eq!(used_entries(&[0; 10 << 10], TIME_ENTRY_LEN), 0);
        // An offset index never holds an entry at position 0.
        assert_eq!(used_entries(&[0; 8], OFFSET_ENTRY_LEN), 0);
        let mut real = vec![0; 12];
        real[7] = 5; // (5, +0), then preallocated slots
        real.extend_from_slice(&[0; 36]);
        assert_eq!(used_entries(&real, TIME_ENTRY_LEN), 1);
    }

    #[test]
    fn no_time_entry_for_timestamps_at_or_below_minus_one() {
        let mut s = IndexSchedule::new(0, 0, i64::MIN);
        // Batches with no timestamp (-1): offset entries only.
        assert_eq!(
            s.batch(0, 10, 0, -1),
            None,
            "the first batch is never indexed"
        );
        let due = s.batch(10, 10, 1, -1).unwrap();
        assert_eq!((due.offset, due.time), ((1, 10), None));
        assert_eq!(s.time_entry(), None);
        // A real timestamp gets one.
        let due = s.batch(20, 10, 2, 5).unwrap();
        assert_eq!(due.time, Some((5, 2)));
    }

    #[test]
    fn txn_entries_round_trip_and_ignore_a_torn_tail() {
        let mut bytes = encode_txn_entry(7, 10, 14, 10);
        bytes.extend_from_slice(&encode_txn_entry(8, 20, 21, 22));
        bytes.extend_from_slice(&[0, 0, 1]);
        let (entries, partial) = txn_entries(&bytes).unwrap();
        assert_eq!(partial, 3);
        assert_eq!(
            entries[1],
            TxnEntry {
                at: 34,
                version: 0,
                producer_id: 8,
                first_offset: 20,
                last_offset: 21,
                last_stable_offset: 22
            }
        );
        let mut bad = encode_txn_entry(7, 10, 14, 10);
        bad[1] = 1;
        assert!(txn_entries(&bad).is_err());
    }

    #[test]
    fn entries_round_trip_and_partial_entry_is_positioned() {
        let mut bytes = Vec::new();
        bytes.extend_from_slice(&encode_offset_entry(5, 4200));
        bytes.extend_from_slice(&encode_offset_entry(9, 8400));
        let e = offset_entries(&bytes, 100).unwrap();
        assert_eq!(
            e[1],
            OffsetEntry {
                at: 8,
                relative_offset: 9,
                offset: 109,
                position: 8400
            }
        );
        bytes.push(0);
        let err = offset_entries(&bytes, 100).unwrap_err();
        assert_eq!(err.offset, 16);
        let t = time_entries(&encode_time_entry(1_700_000_000_000, 3), 10).unwrap();
        assert_eq!(t[0].offset, 13);
        assert_eq!(t[0].timestamp, 1_700_000_000_000);
    }
}
