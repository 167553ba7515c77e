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

pub use crate::format::batch::RecordsChecked;
use crate::format::batch::{
    BatchHeader, BatchView, DecodeLimits, Depth, TimestampType, HEADER_LEN,
};
use crate::format::compression::{self, Compression};
use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};
use crate::format::trace::{NoTrace, Trace, Traced};
use crate::format::varint;

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

#[inline(always)]
fn read_header<'a>(c: &mut Cursor<'a>) -> Result<HeaderView<'a>, DecodeError> {
    read_header_traced(&mut Traced::new(c, &mut NoTrace))
}

/// One header: headerKeyLength varint (>= 0) and key, headerValueLength
/// varint (-1 = null) and value.
#[inline(always)]
fn read_header_traced<'a, T: Trace<'a>>(
    t: &mut Traced<'a, '_, T>,
) -> Result<HeaderView<'a>, DecodeError> {
    let at = t.c.position();
    let key = t
        .varint_bytes(("headerKeyLength", "headerKey"), "header key")?
        .ok_or_else(|| {
            DecodeError::new(
                at,
                DecodeErrorKind::NegativeLength {
                    field: "header key",
                    value: -1,
                },
            )
        })?;
    let value = t.varint_bytes(("headerValueLength", "headerValue"), "header value")?;
    Ok(HeaderView { key, value })
}

/// Decode one record from `c`: the one parser behind both [`RecordIter`]
/// and [`RecordIter::check_all`] (inlined into each, so the check drops the
/// fields it never looks at). A well-formed record is decoded by
/// [`parse_fast`]; anything else is decoded again by [`read_record_exact`],
/// which applies the same rules and names the defect and its byte.
#[inline(always)]
fn read_record<'a>(c: &mut Cursor<'a>, h: &BatchHeader) -> Result<RecordView<'a>, DecodeError> {
    match parse_fast(c.rest(), h.last_offset_delta) {
        Some(p) => {
            let position = c.position();
            c.skip(p.size);
            Ok(p.view(position, h))
        }
        None => read_record_exact(c, h),
    }
}

/// The fields of a record decoded by [`parse_fast`], relative to the record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Parsed<'a> {
    /// Bytes of the record, length varint included.
    size: usize,
    attributes: i8,
    timestamp_delta: i64,
    offset_delta: i32,
    key: Option<&'a [u8]>,
    value: Option<&'a [u8]>,
    header_count: u32,
    headers: &'a [u8],
    /// Where the headers start, from the record's first byte.
    headers_at: usize,
}

impl<'a> Parsed<'a> {
    #[inline(always)]
    fn view(self, position: u64, h: &BatchHeader) -> RecordView<'a> {
        let timestamp = match h.timestamp_type() {
            TimestampType::LogAppendTime => h.max_timestamp,
            TimestampType::CreateTime => h.base_timestamp.wrapping_add(self.timestamp_delta),
        };
        RecordView {
            position,
            size: self.size as u32,
            attributes: self.attributes,
            timestamp_delta: self.timestamp_delta,
            offset_delta: self.offset_delta,
            offset: h.base_offset.wrapping_add(i64::from(self.offset_delta)),
            timestamp,
            key: self.key,
            value: self.value,
            header_count: self.header_count,
            headers: self.headers,
            headers_at: position + self.headers_at as u64,
        }
    }
}

/// The raw (still zigzag-encoded) 32-bit varint at `bytes[at..]` and the
/// index after it, under [`varint::decode_varint`]'s rules; `None` for any
/// defect. One- and two-byte varints, nearly all of them in a record, take
/// no loop.
#[inline(always)]
fn raw_varint_at(bytes: &[u8], at: usize) -> Option<(u32, usize)> {
    let b0 = *bytes.get(at)?;
    if b0 < 0x80 {
        return Some((u32::from(b0), at + 1));
    }
    let b1 = *bytes.get(at + 1)?;
    if b1 < 0x80 {
        return Some((u32::from(b0 & 0x7f) | u32::from(b1) << 7, at + 2));
    }
    let (raw, n) = varint::decode_uvarint(bytes.get(at..)?).ok()?;
    Some((raw, at + n))
}

/// A zigzag length that must not be negative.
#[inline(always)]
fn non_negative(raw: u32) -> Option<usize> {
    if raw & 1 == 0 {
        Some((raw >> 1) as usize)
    } else {
        None
    }
}

/// A varint length (-1 = null, other negative lengths a defect) and that
/// many bytes at `bytes[at..]`, with the index after them.
#[inline(always)]
fn nullable_bytes_at(bytes: &[u8], at: usize) -> Option<(Option<&[u8]>, usize)> {
    let (raw, at) = raw_varint_at(bytes, at)?;
    if raw == 1 {
        return Some((None, at));
    }
    let end = at.checked_add(non_negative(raw)?)?;
    Some((Some(bytes.get(at..end)?), end))
}

/// Decode the record at the start of `bytes` under exactly the rules of
/// [`read_record_exact`], but only say whether it is well-formed: `None`
/// for any defect (then the exact parser names it). No positions, no
/// error values: this is the loop `verify-crc` spends its time in.
#[inline(always)]
fn parse_fast(bytes: &[u8], last_offset_delta: i32) -> Option<Parsed<'_>> {
    let (raw, start) = raw_varint_at(bytes, 0)?; // length: varint
    let end = start.checked_add(non_negative(raw)?)?;
    let r = bytes.get(start..end)?;
    let attributes = *r.first()? as i8; // attributes: int8
    let (timestamp_delta, n) = varint::decode_varlong(r.get(1..)?).ok()?; // timestampDelta: varlong
    let (raw, at) = raw_varint_at(r, 1 + n)?; // offsetDelta: varint
    let offset_delta = non_negative(raw)? as i32;
    if offset_delta > last_offset_delta {
        return None;
    }
    let (key, at) = nullable_bytes_at(r, at)?; // keyLength: varint, key: bytes
    let (value, at) = nullable_bytes_at(r, at)?; // valueLength: varint, value: bytes

    // Most records have no headers: then headerCount is the record's last
    // byte, 0, right after the value. Checked this way, the byte is read at
    // an address known from the record's length alone instead of after the
    // value's length, which keeps it off the chain of dependent loads.
    if at + 1 == r.len() && r.last() == Some(&0) {
        return Some(Parsed {
            size: end,
            attributes,
            timestamp_delta,
            offset_delta,
            key,
            value,
            header_count: 0,
            headers: &[],
            headers_at: start + r.len(),
        });
    }
    let (raw, mut at) = raw_varint_at(r, at)?; // headerCount: varint
    let header_count = non_negative(raw)?;
    if header_count > r.len() - at {
        return None;
    }
    let headers_at = at;
    for _ in 0..header_count {
        // headerKeyLength: varint (>= 0), key
        let (raw, key_at) = raw_varint_at(r, at)?;
        at = key_at.checked_add(non_negative(raw)?)?;
        r.get(key_at..at)?;
        // headerValueLength: varint (-1 = null), value
        at = nullable_bytes_at(r, at)?.1;
    }
    if at != r.len() {
        return None;
    }
    Some(Parsed {
        size: end,
        attributes,
        timestamp_delta,
        offset_delta,
        key,
        value,
        header_count: header_count as u32,
        headers: r.get(headers_at..at)?,
        headers_at: start + headers_at,
    })
}

/// Decode one record from `c`, naming the first defect exactly. The
/// reference for [`parse_fast`], and what [`read_record`] falls back to.
#[cold]
#[inline(never)]
fn read_record_exact<'a>(
    c: &mut Cursor<'a>,
    h: &BatchHeader,
) -> Result<RecordView<'a>, DecodeError> {
    read_record_traced(c, h, &mut NoTrace)
}

/// Decode one record from `c` with the exact rules (the checks behind
/// [`RecordIter`] when a record is not well-formed), handing each
/// field to `trace` as it is read (`dump-segment --layout`).
pub fn read_record_traced<'a, T: Trace<'a>>(
    c: &mut Cursor<'a>,
    h: &BatchHeader,
    trace: &mut T,
) -> Result<RecordView<'a>, DecodeError> {
    let position = c.position();
    let mut t = Traced::new(c, trace);
    let length = t.varint("length")?; // length: varint
    if length < 0 {
        return Err(DecodeError::new(
            position,
            DecodeErrorKind::NegativeLength {
                field: "record length",
                value: i64::from(length),
            },
        ));
    }
    let prefix = t.c.position() - position;
    let mut r = t.c.take(length as usize)?;
    let mut t = Traced::new(&mut r, t.trace);
    let attributes = t.i8("attributes")?; // attributes: int8
    let timestamp_delta = t.varlong("timestampDelta")?; // timestampDelta: varlong
    let delta_at = t.c.position();
    let offset_delta = t.varint("offsetDelta")?; // offsetDelta: varint
    if offset_delta < 0 || offset_delta > h.last_offset_delta {
        return Err(DecodeError::new(
            delta_at,
            DecodeErrorKind::OffsetDeltaOutOfRange {
                offset_delta,
                last_offset_delta: h.last_offset_delta,
            },
        ));
    }
    let key = t.varint_bytes(("keyLength", "key"), "key")?; // keyLength: varint, key: bytes
    let value = t.varint_bytes(("valueLength", "value"), "value")?; // valueLength: varint, value: bytes
    let count_at = t.c.position();
    let header_count = t.varint("headerCount")?; // headerCount: varint
    if header_count < 0 || header_count as usize > t.c.remaining() {
        return Err(DecodeError::new(
            count_at,
            DecodeErrorKind::ValueOutOfRange {
                field: "header count",
                value: i64::from(header_count),
            },
        ));
    }
    let headers_at = t.c.position();
    let headers_start = t.c.rest();
    for _ in 0..header_count {
        read_header_traced(&mut t)?;
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
    /// The previous record's offset delta (-1 before the first).
    last_delta: i32,
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
            last_delta: -1,
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

    #[inline(always)]
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
            // Offsets increase within a batch: a client's batch is refused
            // otherwise (`LogValidator`: inner offsets in order), and
            // compaction only removes records, leaving gaps.
            Ok(r) if r.offset_delta <= self.last_delta => {
                self.done = true;
                Some(Err(DecodeError::new(
                    r.position,
                    DecodeErrorKind::OffsetDeltaNotIncreasing {
                        offset_delta: r.offset_delta,
                        previous: self.last_delta,
                    },
                )))
            }
            Ok(r) => {
                self.last_delta = r.offset_delta;
                Some(Ok(r))
            }
            Err(e) => {
                self.done = true;
                Some(Err(e))
            }
        }
    }
}

impl RecordIter<'_> {
    /// Walk the remaining records without keeping them: the records that
    /// decode and the first error, exactly as iterating would report them
    /// ([`try_each`](Self::try_each) with nothing to do per record: the
    /// views it builds are never read, so they are never built).
    pub fn check_all(self) -> RecordsChecked {
        let mut records = 0;
        let Ok(error) = self.try_each(|_| {
            records += 1;
            Ok::<_, std::convert::Infallible>(true)
        });
        RecordsChecked { records, error }
    }
}

impl<'a> RecordIter<'a> {
    /// Hand each remaining record to `f`, in order, by reference, until `f`
    /// returns `Ok(false)` or a record does not decode: then `Ok(Some(e))`,
    /// the very error iterating would give there. `Err` is `f`'s.
    ///
    /// The same records as iterating, well-formed ones decoded by
    /// `parse_fast` with the position in a register, the iterator taking
    /// over at the first record it rejects (so every defect and the
    /// end-of-section rules are reported by the same code as always). Each
    /// view is built where `f` reads it instead of moved through
    /// `Option<Result<…>>`: a view stored field by field and copied out
    /// whole stalls on every record. [`check_all`](Self::check_all) is this
    /// loop with nothing to do per record.
    #[inline]
    pub fn try_each<E>(
        mut self,
        mut f: impl FnMut(&RecordView<'a>) -> Result<bool, E>,
    ) -> Result<Option<DecodeError>, E> {
        let count = self.header.records_count.max(0) as u64;
        let bytes = self.cursor.rest();
        let base = self.cursor.position();
        let mut at = 0;
        while self.read < count && !self.done {
            let Some(p) = bytes
                .get(at..)
                .and_then(|b| parse_fast(b, self.header.last_offset_delta))
                .filter(|p| p.offset_delta > self.last_delta)
            else {
                break;
            };
            self.last_delta = p.offset_delta;
            self.read += 1;
            let view = p.view(base + at as u64, &self.header);
            at += p.size;
            if !f(&view)? {
                return Ok(None);
            }
        }
        self.cursor.skip(at);
        for r in self {
            match r {
                Ok(r) => {
                    if !f(&r)? {
                        return Ok(None);
                    }
                }
                Err(e) => return Ok(Some(e)),
            }
        }
        Ok(None)
    }
}

impl<'a> Iterator for RecordIter<'a> {
    type Item = Result<RecordView<'a>, DecodeError>;

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.done {
            return None;
        }
        let item = self.step();
        item.map(|r| r.map_err(|e| self.locate(e)))
    }
}

/// Reading a batch's records: decompressing them and checking each one.
impl BatchView<'_> {
    /// The records, decompressing into `scratch` when the batch is compressed.
    /// Positions of plain records are absolute file positions; for compressed
    /// batches errors carry the position inside the decompressed data.
    pub fn records<'s>(
        &'s self,
        scratch: &'s mut Vec<u8>,
        limits: DecodeLimits,
    ) -> Result<RecordIter<'s>, DecodeError> {
        self.check_header()?;
        let section_at = self.position + HEADER_LEN as u64;
        let codec = self.header.compression().unwrap_or(Compression::None);
        if self.header.records_count == 0 {
            return Ok(RecordIter::new(
                Cursor::new(&[], section_at),
                &self.header,
                None,
            ));
        }
        match codec {
            Compression::None => Ok(RecordIter::new(
                Cursor::new(self.records_section(), section_at),
                &self.header,
                None,
            )),
            codec => {
                compression::decompress(
                    codec,
                    self.records_section(),
                    scratch,
                    limits.max_decompressed,
                )
                .map_err(|kind| DecodeError::new(section_at, kind))?;
                Ok(RecordIter::new(
                    Cursor::new(scratch, 0),
                    &self.header,
                    Some(section_at),
                ))
            }
        }
    }

    /// Everything `verify-crc` checks in one batch at `depth`: the CRC, then
    /// (when it matches) the header rules, and at [`Depth::Records`] every
    /// record. `Err` is the CRC mismatch, exactly as
    /// [`check_crc`](Self::check_crc) reports it: a batch that fails it is
    /// not read further.
    pub fn check(
        &self,
        depth: Depth,
        scratch: &mut Vec<u8>,
    ) -> Result<RecordsChecked, DecodeError> {
        match depth {
            Depth::Batch => self.check_crc_and_header(),
            Depth::Records(limits) => self.check_crc_and_records(scratch, limits),
        }
    }

    /// The CRC, then (when it matches) the header rules and every record,
    /// as [`validate_records`](Self::validate_records) does. `Err` is the
    /// CRC mismatch.
    pub fn check_crc_and_records(
        &self,
        scratch: &mut Vec<u8>,
        limits: DecodeLimits,
    ) -> Result<RecordsChecked, DecodeError> {
        self.check_crc()?;
        Ok(self.validate_records(scratch, limits))
    }

    /// Check the records without keeping them (what `verify-crc` needs):
    /// the header rules, then every record as [`records`](Self::records)
    /// would decode it. Returns the records that decoded and the first
    /// error, positioned exactly as iterating would report it.
    pub fn validate_records(&self, scratch: &mut Vec<u8>, limits: DecodeLimits) -> RecordsChecked {
        match self.records(scratch, limits) {
            Ok(records) => records.check_all(),
            Err(e) => RecordsChecked {
                records: 0,
                error: Some(e),
            },
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use crate::format::varint::{put_varint, put_varlong};

    /// xorshift64*: deterministic and dependency-free.
    pub(crate) struct Rng(pub u64);
    impl Rng {
        pub fn next(&mut self) -> u64 {
            self.0 ^= self.0 >> 12;
            self.0 ^= self.0 << 25;
            self.0 ^= self.0 >> 27;
            self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
        }
        pub fn below(&mut self, n: u64) -> u64 {
            self.next() % n
        }
        pub fn pick<T: Copy>(&mut self, xs: &[T]) -> T {
            xs[self.below(xs.len() as u64) as usize]
        }
    }

    fn header(last_offset_delta: i32, records_count: i32, attributes: i16) -> BatchHeader {
        BatchHeader {
            base_offset: 1000,
            batch_length: 0,
            partition_leader_epoch: 0,
            magic: 2,
            crc: 0,
            attributes,
            last_offset_delta,
            base_timestamp: 1_700_000_000_000,
            max_timestamp: 1_700_000_000_999,
            producer_id: -1,
            producer_epoch: -1,
            base_sequence: -1,
            records_count,
        }
    }

    /// A length: mostly valid, sometimes null or negative, at 1..3 bytes.
    fn length(rng: &mut Rng, valid: i32) -> i32 {
        match rng.below(40) {
            0 => -1,
            1 => rng.pick(&[-2, -3, -64, -65, i32::MIN]),
            2 => valid + rng.pick(&[1, -1, 200]),
            _ => valid,
        }
    }

    fn bytes_field(rng: &mut Rng, out: &mut Vec<u8>, nullable: bool) {
        let n = rng.pick(&[0, 1, 5, 63, 64, 100, 8191, 8192]);
        if nullable && rng.below(8) == 0 {
            put_varint(out, -1);
            return;
        }
        let declared = length(rng, n);
        put_varint(out, declared);
        out.extend((0..n).map(|i| (i as u8).wrapping_mul(31)));
    }

    /// One record, well-formed or close to it.
    fn record(rng: &mut Rng, last_offset_delta: i32) -> Vec<u8> {
        let mut body = vec![rng.below(256) as u8];
        put_varlong(
            &mut body,
            rng.pick(&[0, 1, -1, 63, 64, 8191, 8192, 1 << 40, -(1 << 40), i64::MAX]),
        );
        let delta = match rng.below(10) {
            0 => rng.pick(&[-1, last_offset_delta.wrapping_add(1), i32::MIN, i32::MAX]),
            _ => rng.below(last_offset_delta as u64 + 1) as i32,
        };
        put_varint(&mut body, delta);
        bytes_field(rng, &mut body, true);
        bytes_field(rng, &mut body, true);
        let headers = rng.pick(&[0, 0, 0, 1, 2, 3]);
        put_varint(&mut body, length(rng, headers));
        for _ in 0..headers {
            let nullable_key = rng.below(10) == 0;
            bytes_field(rng, &mut body, nullable_key);
            bytes_field(rng, &mut body, true);
        }
        let mut out = Vec::new();
        put_varint(&mut out, length(rng, body.len() as i32));
        out.extend_from_slice(&body);
        match rng.below(6) {
            0 if !out.is_empty() => {
                let i = rng.below(out.len() as u64) as usize;
                out[i] ^= 1 << rng.below(8);
            }
            1 => out.truncate(rng.below(out.len() as u64 + 1) as usize),
            2 => out.extend_from_slice(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01]),
            _ => {}
        }
        out
    }

    #[test]
    fn fast_path_agrees_with_the_exact_parser() {
        let mut rng = Rng(0x9E37_79B9_7F4A_7C15);
        let (mut fast, mut exact_only) = (0, 0);
        for round in 0..40_000 {
            let lod = rng.pick(&[0, 1, 63, 64, 499, 70_000, i32::MAX]);
            let attributes = if round % 2 == 0 { 0 } else { 0x08 };
            let h = header(lod, 1, attributes);
            let bytes = record(&mut rng, lod);
            let mut c = Cursor::new(&bytes, 5000);
            let exact = read_record_exact(&mut c, &h);
            match (parse_fast(&bytes, lod), exact) {
                (Some(p), Ok(v)) => {
                    assert_eq!(p.view(5000, &h), v, "{bytes:02x?}");
                    assert_eq!(p.size, c.consumed(), "{bytes:02x?}");
                    fast += 1;
                }
                (None, Err(_)) => exact_only += 1,
                (f, e) => panic!("disagree on {bytes:02x?}: fast {f:?}, exact {e:?}"),
            }
            // The public path: the same outcome as the exact parser.
            let mut c2 = Cursor::new(&bytes, 5000);
            let mut c3 = Cursor::new(&bytes, 5000);
            assert_eq!(read_record(&mut c2, &h), read_record_exact(&mut c3, &h));
            assert_eq!(c2.consumed(), c3.consumed());
        }
        // Both kinds were exercised.
        assert!(fast > 10_000 && exact_only > 5_000, "{fast} {exact_only}");
    }

    /// The traced decoder decodes what the exact parser decodes, and the
    /// fields it hands out, in order, tile the record: each starts where
    /// the last ended, and a whole record's fields cover its every byte.
    #[test]
    fn the_trace_tiles_each_record_it_decodes() {
        use crate::format::trace::{Each, Read};
        let mut rng = Rng(11);
        let mut whole = 0;
        for _ in 0..20_000 {
            let lod = rng.pick(&[0, 3, 64]);
            let h = header(lod, 1, 0);
            let bytes = record(&mut rng, lod);
            let mut fields: Vec<(&'static str, u64, usize)> = Vec::new();
            let mut c = Cursor::new(&bytes, 700);
            let traced = read_record_traced(
                &mut c,
                &h,
                &mut Each(|f: Read<'_>| fields.push((f.name, f.position, f.bytes.len()))),
            );
            assert_eq!(traced, read_record_exact(&mut Cursor::new(&bytes, 700), &h));
            let mut at = 700;
            for (name, position, len) in &fields {
                assert_eq!(*position, at, "{name} in {bytes:02x?}");
                at += *len as u64;
            }
            if let Some((first, _, _)) = fields.first() {
                assert_eq!(*first, "length", "{bytes:02x?}");
            }
            if let Ok(r) = traced {
                assert_eq!(at - 700, u64::from(r.size), "{bytes:02x?}");
                let names: Vec<&str> = fields.iter().map(|f| f.0).collect();
                assert_eq!(
                    names[..5],
                    [
                        "length",
                        "attributes",
                        "timestampDelta",
                        "offsetDelta",
                        "keyLength"
                    ]
                );
                whole += 1;
            }
        }
        assert!(whole > 5_000, "{whole}");
    }

    /// Call `f` with iterators over 5,000 random records sections (0 to 5
    /// records, some malformed, the header's count sometimes one off), read
    /// in place and as decompressed, and with the section's bytes.
    fn each_random_iter(seed: u64, mut f: impl FnMut(&mut Rng, RecordIter<'_>, &[u8])) {
        let mut rng = Rng(seed);
        for _ in 0..5_000 {
            let lod = rng.pick(&[3, 64, 500]);
            let n = rng.below(6) as i32;
            let mut section = Vec::new();
            for _ in 0..n {
                section.extend_from_slice(&record(&mut rng, lod));
            }
            let count = (n + rng.pick(&[0, 0, 0, -1, 1])).max(0);
            let h = header(lod, count, 0);
            for compressed_at in [None, Some(77)] {
                let it = RecordIter::new(Cursor::new(&section, 300), &h, compressed_at);
                f(&mut rng, it, &section);
            }
        }
    }

    /// What iterating yields: the records up to the first error, and it.
    fn iterated(it: RecordIter<'_>) -> (Vec<RecordView<'_>>, Option<DecodeError>) {
        let mut records = Vec::new();
        for r in it {
            match r {
                Ok(r) => records.push(r),
                Err(e) => return (records, Some(e)),
            }
        }
        (records, None)
    }

    #[test]
    fn check_all_matches_iteration() {
        each_random_iter(42, |_, it, what| {
            let (records, error) = iterated(it.clone());
            let expected = RecordsChecked {
                records: records.len() as u64,
                error,
            };
            assert_eq!(it.check_all(), expected, "{what:02x?}");
        });
    }

    #[test]
    fn try_each_hands_out_what_iteration_yields() {
        each_random_iter(7, |rng, it, what| {
            let (expected, expected_error) = iterated(it.clone());
            let mut got = Vec::new();
            let error = it.clone().try_each(|r| {
                got.push(*r);
                Ok::<_, ()>(true)
            });
            assert_eq!(got, expected, "{what:02x?}");
            assert_eq!(error, Ok(expected_error), "{what:02x?}");
            // Stopped by `f` after `stop` records: those, and no error.
            let stop = rng.below(4) as usize;
            let mut seen = 0;
            let stopped = it.clone().try_each(|_| {
                seen += 1;
                Ok::<_, ()>(seen < stop)
            });
            if stop > 0 && stop <= expected.len() {
                assert_eq!((seen, stopped), (stop, Ok(None)));
            }
            // `f`'s error comes back as it is, at the first record.
            if !expected.is_empty() {
                assert_eq!(it.try_each(|_| Err::<bool, _>("stop")), Err("stop"));
            }
        });
    }
}
