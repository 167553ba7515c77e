//! Records inside a v2 batch, decoded lazily into borrowed slices.
//!
//! ```text
//!  length          varint   bytes after this varint
//!  attributes      int8     unused, written 0
//!  timestampDelta  varlong  relative to baseTimestamp
//!  offsetDelta     varint   relative to baseOffset
//!  keyLength       varint   -1 = null
//!  key             bytes
//!  valueLength     varint   -1 = null (a tombstone)
//!  value           bytes
//!  headerCount     varint
//!  headers         headerKeyLength varint (>= 0), key, headerValueLength varint (-1 = null), value
//! ```
//!
//! The iterator yields exactly `recordsCount` records and then checks that
//! the section is used up; after the first error it yields nothing more.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::format::batch::{BatchHeader, TimestampType};
use crate::format::cursor::Cursor;

/// One record, borrowing key, value and headers from the batch (or the
/// decompression buffer).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RecordView<'a> {
    /// Position of the record's length varint: absolute in the file for a
    /// plain batch, inside the decompressed data for a compressed one.
    pub position: u64,
    /// Total bytes of the record, length varint included.
    pub size: u32,
    /// attributes: int8 (unused by Kafka).
    pub attributes: i8,
    /// timestampDelta: varlong.
    pub timestamp_delta: i64,
    /// offsetDelta: varint.
    pub offset_delta: i32,
    /// The absolute offset: baseOffset + offsetDelta.
    pub offset: i64,
    /// The record's timestamp (maxTimestamp for LogAppendTime batches).
    pub timestamp: i64,
    /// Key bytes, `None` for a null key.
    pub key: Option<&'a [u8]>,
    /// Value bytes, `None` for a null value (a tombstone).
    pub value: Option<&'a [u8]>,
    /// Number of headers.
    pub header_count: u32,
    headers: &'a [u8],
    headers_at: u64,
}

/// One record header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeaderView<'a> {
    pub key: &'a [u8],
    pub value: Option<&'a [u8]>,
}

impl<'a> RecordView<'a> {
    /// The headers, in stored order (duplicate keys are kept).
    pub fn headers(&self) -> HeaderIter<'a> {
        HeaderIter {
            cursor: Cursor::new(self.headers, self.headers_at),
            left: self.header_count,
        }
    }
}

/// Iterator over a record's headers (already validated when the record was read).
#[derive(Debug, Clone)]
pub struct HeaderIter<'a> {
    cursor: Cursor<'a>,
    left: u32,
}

impl<'a> Iterator for HeaderIter<'a> {
    type Item = HeaderView<'a>;
    fn next(&mut self) -> Option<HeaderView<'a>> {
        if self.left == 0 {
            return None;
        }
        self.left -= 1;
        match read_header(&mut self.cursor) {
            Ok(h) => Some(h),
            Err(_) => {
                self.left = 0;
                None
            }
        }
    }
}

fn read_header<'a>(c: &mut Cursor<'a>) -> Result<HeaderView<'a>, DecodeError> {
    let at = c.position();
    // headerKeyLength: varint (must be >= 0)
    let key = c.varint_bytes("header key")?.ok_or_else(|| {
        DecodeError::new(
            at,
            DecodeErrorKind::NegativeLength {
                field: "header key",
                value: -1,
            },
        )
    })?;
    // headerValueLength: varint (-1 = null)
    let value = c.varint_bytes("header value")?;
    Ok(HeaderView { key, value })
}

/// Decode one record from `c`.
fn read_record<'a>(c: &mut Cursor<'a>, h: &BatchHeader) -> Result<RecordView<'a>, DecodeError> {
    let position = c.position();
    let len_at = c.position();
    let length = c.varint()?; // length: varint
    if length < 0 {
        return Err(DecodeError::new(
            len_at,
            DecodeErrorKind::NegativeLength {
                field: "record length",
                value: i64::from(length),
            },
        ));
    }
    let prefix = c.position() - position;
    let mut r = c.take(length as usize)?;
    let attributes = r.i8()?; // attributes: int8
    let timestamp_delta = r.varlong()?; // timestampDelta: varlong
    let delta_at = r.position();
    let offset_delta = r.varint()?; // offsetDelta: varint
    if offset_delta < 0 || offset_delta > h.last_offset_delta {
        return Err(DecodeError::new(
            delta_at,
            DecodeErrorKind::OffsetDeltaOutOfRange {
                offset_delta,
                last_offset_delta: h.last_offset_delta,
            },
        ));
    }
    let key = r.varint_bytes("key")?; // keyLength: varint, key: bytes
    let value = r.varint_bytes("value")?; // valueLength: varint, value: bytes
    let count_at = r.position();
    let header_count = r.varint()?; // headerCount: varint
    if header_count < 0 || header_count as usize > r.remaining() {
        return Err(DecodeError::new(
            count_at,
            DecodeErrorKind::ValueOutOfRange {
                field: "header count",
                value: i64::from(header_count),
            },
        ));
    }
    let headers_at = r.position();
    let headers_start = r.rest();
    for _ in 0..header_count {
        read_header(&mut r)?;
    }
    let headers_len = headers_start.len() - r.remaining();
    if !r.is_empty() {
        return Err(DecodeError::new(
            position,
            DecodeErrorKind::RecordLengthMismatch {
                declared: length,
                consumed: r.consumed() as u64,
            },
        ));
    }
    let timestamp = match h.timestamp_type() {
        TimestampType::LogAppendTime => h.max_timestamp,
        TimestampType::CreateTime => h.base_timestamp.wrapping_add(timestamp_delta),
    };
    Ok(RecordView {
        position,
        size: (prefix + length as u64) as u32,
        attributes,
        timestamp_delta,
        offset_delta,
        offset: h.base_offset.wrapping_add(i64::from(offset_delta)),
        timestamp,
        key,
        value,
        header_count: header_count as u32,
        headers: headers_start.get(..headers_len).unwrap_or(&[]),
        headers_at,
    })
}

/// Lazy iterator over the records of one batch.
#[derive(Debug, Clone)]
pub struct RecordIter<'a> {
    cursor: Cursor<'a>,
    header: BatchHeader,
    read: u64,
    done: bool,
    /// File position of the compressed section, when iterating decompressed data.
    compressed_at: Option<u64>,
}

impl<'a> RecordIter<'a> {
    pub(crate) fn new(
        cursor: Cursor<'a>,
        header: &BatchHeader,
        compressed_at: Option<u64>,
    ) -> Self {
        RecordIter {
            cursor,
            header: *header,
            read: 0,
            done: false,
            compressed_at,
        }
    }

    fn locate(&self, mut e: DecodeError) -> DecodeError {
        if let Some(at) = self.compressed_at {
            e.decompressed_at = Some(e.offset);
            e.offset = at;
        }
        e
    }

    fn step(&mut self) -> Option<Result<RecordView<'a>, DecodeError>> {
        let count = self.header.records_count.max(0) as u64;
        if self.read == count {
            self.done = true;
            if self.cursor.is_empty() {
                return None;
            }
            let e = self.cursor.error(DecodeErrorKind::RecordsRemaining {
                count: self.header.records_count,
                remaining: self.cursor.remaining() as u64,
            });
            return Some(Err(e));
        }
        if self.cursor.is_empty() {
            self.done = true;
            let e = self.cursor.error(DecodeErrorKind::RecordCountMismatch {
                header: self.header.records_count,
                actual: self.read,
            });
            return Some(Err(e));
        }
        self.read += 1;
        match read_record(&mut self.cursor, &self.header) {
            Ok(r) => Some(Ok(r)),
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<RecordView<'a>, DecodeError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step();
        item.map(|r| r.map_err(|e| self.locate(e)))
    }
}
