//! RecordBatch v2: the 61-byte header and a lazy view over one batch.
//!
//! ```text
//!  offset  size  field                  type     CRC-32C covered
//!  0       8     baseOffset             int64    no
//!  8       4     batchLength            int32    no   (bytes after this field)
//!  12      4     partitionLeaderEpoch   int32    no
//!  16      1     magic                  int8     no   (2)
//!  17      4     crc                    uint32   no
//!  21      2     attributes             int16    yes  (codec | ts type | txn | control | delete horizon)
//!  23      4     lastOffsetDelta        int32    yes
//!  27      8     baseTimestamp          int64    yes
//!  35      8     maxTimestamp           int64    yes
//!  43      8     producerId             int64    yes
//!  51      2     producerEpoch          int16    yes
//!  53      4     baseSequence           int32    yes
//!  57      4     recordsCount           int32    yes
//!  61      ...   records (plain, or one compressed stream)
//! ```
//!
//! Bytes 0..17 are shared by every magic: offset, size, then four
//! magic-dependent bytes and the magic itself at byte 16.

use crate::format::codec::Compression;
use crate::format::crc;
use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};
use crate::format::trace::{NoTrace, Trace, Traced};

/// Byte position of each header field.
pub const BASE_OFFSET: usize = 0;
pub const BATCH_LENGTH: usize = BASE_OFFSET + 8;
pub const PARTITION_LEADER_EPOCH: usize = BATCH_LENGTH + 4;
pub const MAGIC: usize = PARTITION_LEADER_EPOCH + 4;
pub const CRC: usize = MAGIC + 1;
pub const ATTRIBUTES: usize = CRC + 4;
pub const LAST_OFFSET_DELTA: usize = ATTRIBUTES + 2;
pub const BASE_TIMESTAMP: usize = LAST_OFFSET_DELTA + 4;
pub const MAX_TIMESTAMP: usize = BASE_TIMESTAMP + 8;
pub const PRODUCER_ID: usize = MAX_TIMESTAMP + 8;
pub const PRODUCER_EPOCH: usize = PRODUCER_ID + 8;
pub const BASE_SEQUENCE: usize = PRODUCER_EPOCH + 2;
pub const RECORDS_COUNT: usize = BASE_SEQUENCE + 4;
/// Size of the fixed v2 header (`RECORD_BATCH_OVERHEAD`).
pub const HEADER_LEN: usize = RECORDS_COUNT + 4;
/// offset + size: the bytes before what `batchLength` counts (`LOG_OVERHEAD`).
pub const LOG_OVERHEAD: usize = 12;
/// Bytes up to and including the magic byte (`HEADER_SIZE_UP_TO_MAGIC`).
pub const HEADER_SIZE_UP_TO_MAGIC: usize = MAGIC + 1;
/// The smallest size field any magic allows (`RECORD_OVERHEAD_V0`).
pub const MIN_ENTRY_SIZE: i32 = 14;

const _: () = assert!(HEADER_LEN == 61);
const _: () = assert!(HEADER_SIZE_UP_TO_MAGIC == 17);

/// Attribute bits of a v2 batch.
pub mod attr {
    pub const COMPRESSION_MASK: i16 = 0x07;
    pub const TIMESTAMP_TYPE: i16 = 0x08;
    pub const TRANSACTIONAL: i16 = 0x10;
    pub const CONTROL: i16 = 0x20;
    pub const DELETE_HORIZON: i16 = 0x40;
}

/// Which clock the batch's timestamps come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampType {
    /// Set by the producer (attribute bit 3 clear).
    CreateTime,
    /// Set by the broker on append; every record's timestamp is maxTimestamp.
    LogAppendTime,
}

impl TimestampType {
    /// snake_case name used in JSON.
    pub fn name(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "create_time",
            TimestampType::LogAppendTime => "log_append_time",
        }
    }
    /// Kafka's label, as kafka-dump-log prints it.
    pub fn label(self) -> &'static str {
        match self {
            TimestampType::CreateTime => "CreateTime",
            TimestampType::LogAppendTime => "LogAppendTime",
        }
    }
}

/// The decoded 61-byte header of a v2 batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BatchHeader {
    pub base_offset: i64,
    pub batch_length: i32,
    pub partition_leader_epoch: i32,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i16,
    pub last_offset_delta: i32,
    pub base_timestamp: i64,
    pub max_timestamp: i64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub base_sequence: i32,
    pub records_count: i32,
}

impl BatchHeader {
    /// Parse the header from the first 61 bytes of `bytes` (at file position `position`).
    #[inline]
    pub fn parse(bytes: &[u8], position: u64) -> Result<Self, DecodeError> {
        Self::parse_traced(bytes, position, &mut NoTrace)
    }

    /// Parse the header as [`parse`](Self::parse) does, handing each field
    /// to `trace` as it is read.
    #[inline(always)]
    pub fn parse_traced<'a, T: Trace<'a>>(
        bytes: &'a [u8],
        position: u64,
        trace: &mut T,
    ) -> Result<Self, DecodeError> {
        let mut c = Cursor::new(bytes, position);
        let mut c = Traced::new(&mut c, trace);
        Ok(BatchHeader {
            base_offset: c.i64("baseOffset")?,
            batch_length: c.i32("batchLength")?,
            partition_leader_epoch: c.i32("partitionLeaderEpoch")?,
            magic: c.i8("magic")?,
            crc: c.u32("crc")?,
            attributes: c.i16("attributes")?,
            last_offset_delta: c.i32("lastOffsetDelta")?,
            base_timestamp: c.i64("baseTimestamp")?,
            max_timestamp: c.i64("maxTimestamp")?,
            producer_id: c.i64("producerId")?,
            producer_epoch: c.i16("producerEpoch")?,
            base_sequence: c.i32("baseSequence")?,
            records_count: c.i32("recordsCount")?,
        })
    }

    /// The codec id in the low three attribute bits. Kafka reads only the
    /// low byte of the attributes; so do we.
    pub fn compression_id(&self) -> u8 {
        (self.attributes & attr::COMPRESSION_MASK) as u8
    }
    /// The codec, or `None` for ids 5..7.
    pub fn compression(&self) -> Option<Compression> {
        Compression::from_id(self.compression_id())
    }
    /// CreateTime or LogAppendTime.
    pub fn timestamp_type(&self) -> TimestampType {
        if self.attributes & attr::TIMESTAMP_TYPE != 0 {
            TimestampType::LogAppendTime
        } else {
            TimestampType::CreateTime
        }
    }
    /// Attribute bit 4.
    pub fn is_transactional(&self) -> bool {
        self.attributes & attr::TRANSACTIONAL != 0
    }
    /// Attribute bit 5.
    pub fn is_control(&self) -> bool {
        self.attributes & attr::CONTROL != 0
    }
    /// Attribute bit 6: baseTimestamp holds the delete horizon.
    pub fn has_delete_horizon(&self) -> bool {
        self.attributes & attr::DELETE_HORIZON != 0
    }
    /// baseOffset + lastOffsetDelta.
    pub fn last_offset(&self) -> i64 {
        self.base_offset
            .wrapping_add(i64::from(self.last_offset_delta))
    }
    /// Total bytes on disk: 12 + batchLength.
    pub fn size(&self) -> u64 {
        (LOG_OVERHEAD as i64 + i64::from(self.batch_length)).max(0) as u64
    }
    /// `DefaultRecordBatch.lastSequence`: NO_SEQUENCE (-1) stays, any other
    /// base (a negative one too) plus lastOffsetDelta by [`increment_sequence`].
    pub fn last_sequence(&self) -> i32 {
        if self.base_sequence == -1 {
            return -1;
        }
        increment_sequence(self.base_sequence, self.last_offset_delta)
    }
    /// A record's sequence (`DefaultRecord.readFrom`): the base plus its
    /// offset delta when the base is not negative, else NO_SEQUENCE (-1).
    pub fn record_sequence(&self, offset_delta: i32) -> i32 {
        if self.base_sequence < 0 {
            return -1;
        }
        increment_sequence(self.base_sequence, offset_delta)
    }
}

/// `sequence` + `increment`, wrapping past `i32::MAX` to 0, in Java's
/// wrapping int arithmetic (`DefaultRecordBatch.incrementSequence`).
pub fn increment_sequence(sequence: i32, increment: i32) -> i32 {
    if sequence > i32::MAX.wrapping_sub(increment) {
        increment
            .wrapping_sub(i32::MAX.wrapping_sub(sequence))
            .wrapping_sub(1)
    } else {
        sequence.wrapping_add(increment)
    }
}

/// `sequence` − `decrement`, wrapping below 0 to `i32::MAX`, in Java's
/// wrapping int arithmetic (`DefaultRecordBatch.decrementSequence`).
pub fn decrement_sequence(sequence: i32, decrement: i32) -> i32 {
    if sequence < decrement {
        i32::MAX
            .wrapping_sub(decrement.wrapping_sub(sequence))
            .wrapping_add(1)
    } else {
        sequence.wrapping_sub(decrement)
    }
}

/// One magic-2 batch whose bytes are all present (size already checked
/// against the file). Only the header is decoded; records are decoded lazily.
#[derive(Debug, Clone, Copy)]
pub struct BatchView<'a> {
    /// Absolute file position of the batch's first byte.
    pub position: u64,
    /// The decoded header.
    pub header: BatchHeader,
    bytes: &'a [u8],
}

/// What [`RecordIter::check_all`](crate::format::record::RecordIter::check_all) found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordsChecked {
    /// Records that decoded, before the error if there is one.
    pub records: u64,
    /// The first defect (the iterator's error, positioned the same way).
    pub error: Option<DecodeError>,
}

/// How deep `verify-crc` checks a batch (see [`BatchView::check`]).
#[derive(Debug, Clone, Copy)]
pub enum Depth {
    /// The CRC and the header, as Kafka's recovery does; records counted
    /// from the header.
    Batch,
    /// Also every record, decompressed when needed, under these limits.
    Records(DecodeLimits),
}

/// Limits applied while decoding records.
#[derive(Debug, Clone, Copy, serde::Serialize, serde::Deserialize)]
pub struct DecodeLimits {
    /// The most bytes one batch's records may decompress to.
    pub max_decompressed: u64,
}

impl Default for DecodeLimits {
    fn default() -> Self {
        DecodeLimits {
            max_decompressed: 256 << 20,
        }
    }
}

/// CRC of a whole magic-2 batch: CRC-32C over bytes 21 (the attributes)
/// to the end. Reader and writer share this function so they cannot
/// disagree on the range.
#[inline]
pub fn batch_crc(batch: &[u8]) -> u32 {
    crc::crc32c(batch.get(ATTRIBUTES..).unwrap_or(&[]))
}

impl<'a> BatchView<'a> {
    /// A view over `bytes`, which must hold exactly one whole v2 batch.
    /// Checks the magic and that the declared size is the slice's length and at least 61.
    pub fn new(bytes: &'a [u8], position: u64) -> Result<Self, DecodeError> {
        let header = BatchHeader::parse(bytes, position)?;
        if header.magic != 2 {
            return Err(DecodeError::new(
                position + MAGIC as u64,
                DecodeErrorKind::UnsupportedMagic(header.magic),
            ));
        }
        if header.size() < HEADER_LEN as u64 {
            return Err(DecodeError::new(
                position + BATCH_LENGTH as u64,
                DecodeErrorKind::BatchTooSmall {
                    size: header.size() as i64,
                },
            ));
        }
        if header.size() != bytes.len() as u64 {
            return Err(DecodeError::new(
                position + BATCH_LENGTH as u64,
                DecodeErrorKind::PastEndOfFile {
                    declared: header.size(),
                    available: bytes.len() as u64,
                },
            ));
        }
        Ok(BatchView {
            position,
            header,
            bytes,
        })
    }

    /// The batch's bytes, header included.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }

    /// The records section as stored (compressed or not).
    pub fn records_section(&self) -> &'a [u8] {
        self.bytes.get(HEADER_LEN..).unwrap_or(&[])
    }

    /// CRC-32C over attributes..end, computed now.
    pub fn computed_crc(&self) -> u32 {
        batch_crc(self.bytes)
    }

    /// Whether the stored CRC matches.
    pub fn crc_valid(&self) -> bool {
        self.computed_crc() == self.header.crc
    }

    /// The CRC check as a result positioned at the crc field.
    pub fn check_crc(&self) -> Result<(), DecodeError> {
        self.crc_result(self.computed_crc())
    }

    fn crc_result(&self, computed: u32) -> Result<(), DecodeError> {
        if computed == self.header.crc {
            Ok(())
        } else {
            Err(DecodeError::new(
                self.position + CRC as u64,
                DecodeErrorKind::CrcMismatch {
                    stored: self.header.crc,
                    computed,
                },
            ))
        }
    }

    /// Header rules that hold for every batch on disk, compacted or not:
    /// known codec, lastOffsetDelta ≥ 0, 0 ≤ recordsCount ≤ lastOffsetDelta + 1.
    pub fn check_header(&self) -> Result<(), DecodeError> {
        let h = &self.header;
        let at = |field: usize| self.position + field as u64;
        if h.compression().is_none() {
            return Err(DecodeError::new(
                at(ATTRIBUTES),
                DecodeErrorKind::UnknownCompression(h.compression_id()),
            ));
        }
        if h.last_offset_delta < 0 {
            return Err(DecodeError::new(
                at(LAST_OFFSET_DELTA),
                DecodeErrorKind::NegativeLastOffsetDelta(h.last_offset_delta),
            ));
        }
        if h.records_count < 0 {
            return Err(DecodeError::new(
                at(RECORDS_COUNT),
                DecodeErrorKind::InvalidRecordCount(h.records_count),
            ));
        }
        if i64::from(h.records_count) > i64::from(h.last_offset_delta) + 1 {
            return Err(DecodeError::new(
                at(RECORDS_COUNT),
                DecodeErrorKind::TooManyRecords {
                    count: h.records_count,
                    last_offset_delta: h.last_offset_delta,
                },
            ));
        }
        Ok(())
    }

    /// What Kafka's recovery checks of a batch: `LogSegment.recover` calls
    /// `RecordBatch.ensureValid` (the size and the CRC) and
    /// `ensureOffsetInRange` on each batch and never iterates its records.
    /// Here the header rules are checked too
    /// ([`check_header`](Self::check_header)); the records are counted from
    /// the header, not decoded. `Err` is the CRC mismatch.
    pub fn check_crc_and_header(&self) -> Result<RecordsChecked, DecodeError> {
        self.check_crc()?;
        Ok(match self.check_header() {
            Ok(()) => RecordsChecked {
                records: u64::try_from(self.header.records_count).unwrap_or(0),
                error: None,
            },
            Err(e) => RecordsChecked {
                records: 0,
                error: Some(e),
            },
        })
    }
}

#[cfg(test)]
pub(crate) mod tests_support {
    /// The vector of kafka-on-disk.md §1.7: value "hi", CreateTime 1700000000000.
    pub(crate) const HI: [u8; 70] = [
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x3a, 0, 0, 0, 0, 2, 0xbb, 0xcc, 0x41, 0x15, 0, 0, 0, 0,
        0, 0, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 0, 0, 1, 0x8b, 0xcf, 0xe5, 0x68, 0, 0xff, 0xff,
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 1, 0x10,
        0, 0, 0, 1, 4, 0x68, 0x69, 0,
    ];
}

#[cfg(test)]
mod tests {
    use super::tests_support::HI;
    use super::*;

    #[test]
    fn header_of_the_reference_vector() {
        let b = BatchView::new(&HI, 0).unwrap();
        let h = b.header;
        assert_eq!(h.batch_length, 58);
        assert_eq!(h.crc, 3_150_725_397);
        assert!(b.crc_valid());
        assert_eq!(h.base_timestamp, 1_700_000_000_000);
        assert_eq!(h.producer_id, -1);
        assert_eq!(h.records_count, 1);
        assert_eq!(h.last_sequence(), -1);
        let mut scratch = Vec::new();
        let recs: Vec<_> = b
            .records(&mut scratch, DecodeLimits::default())
            .unwrap()
            .collect();
        assert_eq!(recs.len(), 1);
        let r = recs[0].unwrap();
        assert_eq!(r.key, None);
        assert_eq!(r.value, Some(&b"hi"[..]));
    }

    #[test]
    fn last_sequence_wraps_like_kafka() {
        let mut h = BatchView::new(&HI, 0).unwrap().header;
        h.base_sequence = i32::MAX - 1;
        h.last_offset_delta = 3;
        assert_eq!(h.last_sequence(), 1);
        // Only NO_SEQUENCE (-1) has no last sequence; another negative base
        // is incremented as Java's ints are (DefaultRecordBatch.incrementSequence).
        h.base_sequence = -131_073;
        h.last_offset_delta = 4;
        assert_eq!(h.last_sequence(), -131_069);
        h.base_sequence = -1;
        assert_eq!(h.last_sequence(), -1);
        // A negative delta: Integer.MAX_VALUE - (-2) wraps to
        // Integer.MIN_VALUE + 1, so 5 > it and Java returns
        // -2 - (Integer.MAX_VALUE - 5) - 1 = -2147483645.
        h.base_sequence = 5;
        h.last_offset_delta = -2;
        assert_eq!(h.last_sequence(), -2_147_483_645);
    }

    #[test]
    fn flipped_covered_byte_is_a_crc_mismatch_at_the_crc_field() {
        let mut bytes = HI;
        bytes[68] ^= 0x01;
        let b = BatchView::new(&bytes, 4096).unwrap();
        let err = b.check_crc().unwrap_err();
        assert_eq!(err.offset, 4096 + 17);
        assert!(matches!(
            err.kind,
            DecodeErrorKind::CrcMismatch {
                stored: 0xBBCC_4115,
                ..
            }
        ));
    }
}
