//! Kafka's on-disk record format: bytes in, values out, no I/O.
//!
//! A log segment is a sequence of entries sharing one frame:
//!
//! ```text
//!  0   baseOffset / offset   int64
//!  8   batchLength / size    int32   bytes after this field
//!  12  (4 bytes that depend on the magic)
//!  16  magic                 int8    0, 1 (legacy message) or 2 (record batch)
//! ```
//!
//! [`batch`] has the v2 header diagram, [`record`] the record layout,
//! [`legacy`] the magic 0/1 message, [`index`] the index entries. Every
//! decoder here works on borrowed slices through [`cursor::Cursor`], never
//! panics and reports defects as [`DecodeError`](crate::format::error::DecodeError)s
//! positioned at absolute file offsets.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod annotation;
pub mod batch;
pub mod codec;
pub mod compression;
pub mod control;
pub mod crc;
pub mod cursor;
pub mod encode;
pub mod error;
pub mod escape;
pub mod index;
pub mod kafka_json;
pub mod legacy;
pub mod message;
pub mod record;
pub mod schema;
pub mod time;
pub mod trace;
pub mod varint;

pub use batch::{BatchHeader, BatchView, DecodeLimits, TimestampType};
pub use codec::Compression;
pub use encode::{encode_batch, BatchSpec, NewRecord};
pub use legacy::LegacyView;
pub use record::{HeaderView, RecordView};

/// One entry of a log: a v2 batch or a legacy message.
#[derive(Debug, Clone, Copy)]
pub enum Entry<'a> {
    V2(BatchView<'a>),
    Legacy(LegacyView<'a>),
}

impl<'a> Entry<'a> {
    /// Absolute file position.
    pub fn position(&self) -> u64 {
        match self {
            Entry::V2(b) => b.position,
            Entry::Legacy(l) => l.position,
        }
    }
    /// Bytes on disk.
    pub fn size(&self) -> u64 {
        match self {
            Entry::V2(b) => b.bytes().len() as u64,
            Entry::Legacy(l) => l.bytes().len() as u64,
        }
    }
    /// First offset (for a legacy entry: its offset).
    pub fn base_offset(&self) -> i64 {
        match self {
            Entry::V2(b) => b.header.base_offset,
            Entry::Legacy(l) => l.offset,
        }
    }
    /// Last offset.
    pub fn last_offset(&self) -> i64 {
        match self {
            Entry::V2(b) => b.header.last_offset(),
            Entry::Legacy(l) => l.offset,
        }
    }
    /// One past the last offset, or `None` when that overflows an i64
    /// (a header that claims offsets past `i64::MAX`).
    pub fn checked_next_offset(&self) -> Option<i64> {
        match self {
            Entry::V2(b) => b
                .header
                .base_offset
                .checked_add(i64::from(b.header.last_offset_delta))?
                .checked_add(1),
            Entry::Legacy(l) => l.offset.checked_add(1),
        }
    }
    /// The largest timestamp, as `LogSegment.append` indexes it: a v2
    /// batch's maxTimestamp, a legacy entry's (shallow) timestamp, -1 for
    /// magic 0.
    pub fn max_timestamp(&self) -> i64 {
        match self {
            Entry::V2(b) => b.header.max_timestamp,
            Entry::Legacy(l) => l.timestamp,
        }
    }
    /// Whether the stored checksum matches.
    pub fn crc_valid(&self) -> bool {
        match self {
            Entry::V2(b) => b.crc_valid(),
            Entry::Legacy(l) => l.crc_valid(),
        }
    }
    /// The checksum check as a positioned result.
    pub fn check_crc(&self) -> Result<(), crate::format::error::DecodeError> {
        match self {
            Entry::V2(b) => b.check_crc(),
            Entry::Legacy(l) => l.check_crc(),
        }
    }
}
