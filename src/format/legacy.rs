//! Legacy message sets (magic 0 and 1), as written before Kafka 0.11.
//!
//! ```text
//!  offset       int64    (of the last inner message for a compressed wrapper)
//!  messageSize  int32    bytes after this field
//!  crc          uint32   CRC-32 (IEEE) of magic..end
//!  magic        int8     0 or 1
//!  attributes   int8     codec in bits 0..2, timestamp type in bit 3 (v1)
//!  timestamp    int64    v1 only
//!  keyLength    int32    -1 = null
//!  key
//!  valueLength  int32    -1 = null
//!  value        (for a compressed wrapper: the compressed inner message set)
//! ```

use crate::format::batch::TimestampType;
use crate::format::compression::Compression;
use crate::format::crc;
use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};

/// Position of the crc field in a legacy entry.
pub const CRC: usize = 12;
/// Position of the magic byte (the start of the CRC-covered range).
pub const MAGIC: usize = 16;

/// One legacy entry (a message, or a compressed wrapper message).
#[derive(Debug, Clone, Copy)]
pub struct LegacyView<'a> {
    pub position: u64,
    pub offset: i64,
    pub magic: i8,
    pub crc: u32,
    pub attributes: i8,
    /// -1 for magic 0 (no timestamp).
    pub timestamp: i64,
    /// The key, or why it cannot be read: its bytes run past the entry's
    /// end. Kafka's `LegacyRecord` reads the sizes at their places and
    /// slices the key and value only when asked (`key()`, `value()`
    /// through `Utils.sizeDelimited`, which throws), so such an entry is
    /// still framed, its header shown and its CRC checked; only reading
    /// what runs past its end fails. (A negative length other than -1,
    /// which Kafka reads as null, refuses the entry whole.)
    pub key: Result<Option<&'a [u8]>, DecodeError>,
    /// The value, or why it cannot be read: its bytes, or its length field
    /// (after a key that runs past the end), run past the entry's end.
    pub value: Result<Option<&'a [u8]>, DecodeError>,
    /// The value length field as stored (Kafka's `valueSize()`), when it
    /// lies inside the entry.
    value_size: Option<i32>,
    bytes: &'a [u8],
}

impl<'a> LegacyView<'a> {
    /// Parse one whole entry (`bytes` = offset..end of message): its header
    /// strictly, its key and value lazily (see [`key`](Self::key)).
    pub fn new(bytes: &'a [u8], position: u64) -> Result<Self, DecodeError> {
        let mut c = Cursor::new(bytes, position);
        let offset = c.i64()?; // offset: int64
        let _size = c.i32()?; // messageSize: int32
        let crc = c.u32()?; // crc: uint32
        let magic_at = c.position();
        let magic = c.i8()?; // magic: int8
        if !(0..=1).contains(&magic) {
            return Err(DecodeError::new(
                magic_at,
                DecodeErrorKind::UnsupportedMagic(magic),
            ));
        }
        let attributes = c.i8()?; // attributes: int8
        let timestamp = if magic == 1 { c.i64()? } else { -1 }; // timestamp: int64 (v1)
        let key = lazily(int32_bytes(&mut c, "key"))?; // keyLength: int32, key
        let (value_size, value) = match key {
            Ok(_) => (
                c.clone().i32().ok(),
                lazily(int32_bytes(&mut c, "value"))?, // valueLength: int32, value
            ),
            Err(e) => (None, Err(e)),
        };
        Ok(LegacyView {
            position,
            offset,
            magic,
            crc,
            attributes,
            timestamp,
            key,
            value,
            value_size,
            bytes,
        })
    }

    /// The key length field as stored (Kafka's `keySize()`), when the key
    /// lies inside the entry.
    pub fn key_size(&self) -> Option<i32> {
        self.key.ok().map(|k| k.map_or(-1, |k| k.len() as i32))
    }
    /// The value length field as stored (Kafka's `valueSize()`), even
    /// when the value runs past the entry; `None` when the field does.
    pub fn value_size(&self) -> Option<i32> {
        self.value_size
    }

    /// Bytes of the whole entry.
    pub fn bytes(&self) -> &'a [u8] {
        self.bytes
    }
    /// The codec (bits 0..2); `None` for ids that legacy messages cannot use.
    pub fn compression(&self) -> Option<Compression> {
        match self.attributes & 0x07 {
            4..=7 => None,
            id => Compression::from_id(id as u8),
        }
    }
    /// The timestamp type (v1 bit 3).
    pub fn timestamp_type(&self) -> Option<TimestampType> {
        match (self.magic, self.attributes & 0x08 != 0) {
            (0, _) => None,
            (_, true) => Some(TimestampType::LogAppendTime),
            (_, false) => Some(TimestampType::CreateTime),
        }
    }
    /// CRC-32 over magic..end, computed now.
    pub fn computed_crc(&self) -> u32 {
        crc::crc32_ieee(self.bytes.get(MAGIC..).unwrap_or(&[]))
    }
    /// Whether the stored CRC matches.
    pub fn crc_valid(&self) -> bool {
        self.computed_crc() == self.crc
    }
    /// The CRC check as a positioned result.
    pub fn check_crc(&self) -> Result<(), DecodeError> {
        let computed = self.computed_crc();
        if computed == self.crc {
            return Ok(());
        }
        Err(DecodeError::new(
            self.position + CRC as u64,
            DecodeErrorKind::CrcMismatch {
                stored: self.crc,
                computed,
            },
        ))
    }
}

/// A key or value read lazily: bytes past the entry's end are kept as the
/// field's error, any other defect refuses the entry.
fn lazily<T>(read: Result<T, DecodeError>) -> Result<Result<T, DecodeError>, DecodeError> {
    match read {
        Err(e) if !matches!(e.kind, DecodeErrorKind::UnexpectedEof { .. }) => Err(e),
        read => Ok(read),
    }
}

fn int32_bytes<'a>(
    c: &mut Cursor<'a>,
    field: &'static str,
) -> Result<Option<&'a [u8]>, DecodeError> {
    let at = c.position();
    let len = c.i32()?;
    match crate::format::cursor::nullable_length(at, len, field)? {
        None => Ok(None),
        Some(n) => c.bytes(n).map(Some),
    }
}

/// One message of a legacy entry, with its absolute offset: the entry
/// itself when uncompressed, else each message inside the wrapper.
#[derive(Debug, Clone, Copy)]
pub struct LegacyMessage<'a> {
    /// Absolute offset (after the v1 relative-offset rule).
    pub offset: i64,
    /// The message's timestamp (the wrapper's under LogAppendTime; -1 for v0).
    pub timestamp: i64,
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    pub crc_valid: bool,
    /// The message's stored CRC-32.
    pub crc: u32,
    /// Position of the inner entry inside the decompressed data (None when not compressed).
    pub inner_position: Option<u64>,
}

/// The messages of one legacy entry, handed out one at a time (see
/// [`LegacyView::messages`]). The wrapper's inner message set was checked
/// whole before the first is handed out, so iterating cannot fail; nothing
/// is collected, so ten million empty inner messages cost no more memory
/// than their decompressed bytes.
#[derive(Debug, Clone)]
pub struct LegacyMessages<'s> {
    /// The entry itself, for an uncompressed one.
    single: Option<LegacyMessage<'s>>,
    /// The inner message set not handed out yet.
    inner: Cursor<'s>,
    /// Messages left to hand out.
    left: u64,
    /// v1 with a wrapper offset: absolute = base + inner relative offset.
    base: Option<i64>,
    /// The wrapper's timestamp under LogAppendTime.
    log_append: Option<i64>,
    /// The first message's absolute offset.
    first_offset: i64,
}

impl LegacyMessages<'_> {
    /// The first message's absolute offset (the entry's base offset).
    pub fn first_offset(&self) -> i64 {
        self.first_offset
    }
}

impl<'s> Iterator for LegacyMessages<'s> {
    type Item = LegacyMessage<'s>;

    fn next(&mut self) -> Option<LegacyMessage<'s>> {
        if let Some(m) = self.single.take() {
            self.left = 0;
            return Some(m);
        }
        if self.left == 0 {
            return None;
        }
        // Checked by `inner_set`: a failure here cannot happen, and ends the walk.
        let Ok((m, key, value)) =
            next_inner(&mut self.inner).and_then(|m| Ok((m, m.key?, m.value?)))
        else {
            self.left = 0;
            return None;
        };
        self.left -= 1;
        let offset = match self.base {
            None => m.offset,
            Some(base) => base.checked_add(m.offset)?,
        };
        Some(LegacyMessage {
            offset,
            timestamp: self.log_append.unwrap_or(m.timestamp),
            key,
            value,
            crc_valid: m.crc_valid(),
            crc: m.crc,
            inner_position: Some(m.position),
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        let n = usize::try_from(self.left).unwrap_or(usize::MAX);
        (n, Some(n))
    }
}

impl ExactSizeIterator for LegacyMessages<'_> {}

/// What a pass over a wrapper's inner message set found.
struct InnerSet {
    count: u64,
    first: i64,
    last: i64,
    min: i64,
    max: i64,
}

/// The next inner message of a decompressed message set (positions inside it).
fn next_inner<'s>(c: &mut Cursor<'s>) -> Result<LegacyView<'s>, DecodeError> {
    let at = c.position();
    let mut head = c.clone();
    head.i64()?;
    let size = head.i32()?;
    if size < 14 {
        return Err(DecodeError::new(
            at + 8,
            DecodeErrorKind::SizeTooSmall { size },
        ));
    }
    let bytes = c.bytes(12 + size as usize)?;
    let view = LegacyView::new(bytes, at)?;
    // An inner message is read whole when its wrapper is, key and value included.
    view.key?;
    view.value?;
    Ok(view)
}

impl<'a> LegacyView<'a> {
    /// The messages of this entry. A compressed wrapper is decompressed into
    /// `scratch`; its inner messages must be uncompressed, share the
    /// wrapper's magic, and number at least one. Inner offsets are absolute
    /// in v0; in v1 they are relative: absolute = wrapper offset − last inner
    /// relative offset + inner relative offset (a wrapper offset of 0 means
    /// base 0, as some clients wrote). Every inner message is checked before
    /// this returns (Kafka's `AbstractLegacyRecordBatch` reads the whole
    /// inner set of a v1 wrapper to find the last relative offset too); the
    /// messages are then handed out one at a time, not collected.
    pub fn messages<'s>(
        &'s self,
        scratch: &'s mut Vec<u8>,
        limits: crate::format::DecodeLimits,
    ) -> Result<LegacyMessages<'s>, DecodeError> {
        let codec = match self.compression() {
            Some(c) => c,
            None => {
                return Err(DecodeError::new(
                    self.position + MAGIC as u64 + 1,
                    DecodeErrorKind::UnknownCompression((self.attributes & 0x07) as u8),
                ))
            }
        };
        let key = self.key?;
        let value = self.value?;
        if codec == Compression::None {
            return Ok(LegacyMessages {
                single: Some(LegacyMessage {
                    offset: self.offset,
                    timestamp: self.timestamp,
                    key,
                    value,
                    crc_valid: self.crc_valid(),
                    crc: self.crc,
                    inner_position: None,
                }),
                inner: Cursor::new(&[], 0),
                left: 1,
                base: None,
                log_append: None,
                first_offset: self.offset,
            });
        }
        let value_at =
            self.position + self.bytes.len() as u64 - value.map_or(0, |v| v.len() as u64);
        let bad = |reason| DecodeError::new(value_at, DecodeErrorKind::BadWrapper { reason });
        let wrapped = value.ok_or_else(|| bad("compressed wrapper with a null value"))?;
        let fixed;
        let input = if codec == Compression::Lz4 && self.magic == 0 {
            // Kafka's magic-0 LZ4 writer computed the frame header checksum
            // over the magic number too; recompute it so a strict decoder accepts the frame.
            fixed = fix_lz4_header_checksum(wrapped);
            fixed.as_slice()
        } else {
            wrapped
        };
        crate::format::compression::decompress(codec, input, scratch, limits.max_decompressed)
            .map_err(|kind| DecodeError::new(value_at, kind))?;
        let set = self.inner_set(scratch).map_err(|e| match e {
            Inner::Decode(e) => DecodeError {
                offset: value_at,
                decompressed_at: Some(e.offset),
                kind: e.kind,
            },
            Inner::Bad(reason) => bad(reason),
        })?;
        if set.count == 0 {
            return Err(bad("compressed wrapper holds no messages"));
        }
        if self.magic == 1 && self.offset != 0 && self.offset < set.last {
            return Err(bad(
                "wrapper offset is below its last inner relative offset",
            ));
        }
        // Offsets grow with the relative offset: checking the smallest and
        // the largest checks them all.
        let overflow = bad("inner relative offsets overflow the wrapper's offset");
        let base = match (self.magic, self.offset) {
            (0, _) | (_, 0) => None,
            (_, w) => Some(w.checked_sub(set.last).ok_or(overflow)?),
        };
        let first_offset = match base {
            None => set.first,
            Some(b) => {
                b.checked_add(set.min).ok_or(overflow)?;
                b.checked_add(set.max).ok_or(overflow)?;
                b.checked_add(set.first).ok_or(overflow)?
            }
        };
        let log_append = self.timestamp_type() == Some(TimestampType::LogAppendTime);
        Ok(LegacyMessages {
            single: None,
            inner: Cursor::new(scratch, 0),
            left: set.count,
            base,
            log_append: log_append.then_some(self.timestamp),
            first_offset,
        })
    }

    /// Check every message of a decompressed inner message set, without keeping any.
    fn inner_set(&self, set: &[u8]) -> Result<InnerSet, Inner> {
        let mut c = Cursor::new(set, 0);
        let mut out = InnerSet {
            count: 0,
            first: 0,
            last: 0,
            min: i64::MAX,
            max: i64::MIN,
        };
        while !c.is_empty() {
            let m = next_inner(&mut c).map_err(Inner::Decode)?;
            if m.magic != self.magic {
                return Err(Inner::Bad("inner message magic differs from the wrapper's"));
            }
            if m.compression() != Some(Compression::None) {
                return Err(Inner::Bad("inner messages must not be compressed"));
            }
            if out.count == 0 {
                out.first = m.offset;
            }
            out.count += 1;
            out.last = m.offset;
            out.min = out.min.min(m.offset);
            out.max = out.max.max(m.offset);
        }
        Ok(out)
    }
}

/// Why an inner message set does not read.
enum Inner {
    /// An inner message does not decode (positions inside the set).
    Decode(DecodeError),
    /// The set breaks a wrapper rule.
    Bad(&'static str),
}

/// A copy of an LZ4 frame whose header checksum byte is recomputed over the
/// frame descriptor (FLG .. before HC), as the LZ4 frame format defines it.
fn fix_lz4_header_checksum(frame: &[u8]) -> Vec<u8> {
    let mut out = frame.to_vec();
    let Some(&flg) = frame.get(4) else { return out };
    let mut end = 6; // FLG, BD
    if flg & 0x08 != 0 {
        end += 8; // content size
    }
    if flg & 0x01 != 0 {
        end += 4; // dictionary id
    }
    if let (Some(desc), Some(hc)) = (frame.get(4..end), out.get_mut(end)) {
        *hc = (twox_hash::XxHash32::oneshot(0, desc) >> 8) as u8;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::DecodeLimits;

    /// A legacy entry built by hand from the spec: offset, size, crc (CRC-32), magic, attributes, [timestamp], key, value.
    fn entry(
        offset: i64,
        magic: i8,
        attributes: i8,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Vec<u8> {
        let mut msg = vec![magic as u8, attributes as u8];
        if magic == 1 {
            msg.extend_from_slice(&timestamp.to_be_bytes());
        }
        for field in [key, value] {
            match field {
                None => msg.extend_from_slice(&(-1i32).to_be_bytes()),
                Some(b) => {
                    msg.extend_from_slice(&(b.len() as i32).to_be_bytes());
                    msg.extend_from_slice(b);
                }
            }
        }
        let crc = crc32fast::hash(&msg);
        let mut out = offset.to_be_bytes().to_vec();
        out.extend_from_slice(&((msg.len() + 4) as i32).to_be_bytes());
        out.extend_from_slice(&crc.to_be_bytes());
        out.extend_from_slice(&msg);
        out
    }

    fn gzip(b: &[u8]) -> Vec<u8> {
        crate::format::compression::compress(Compression::Gzip, b).unwrap()
    }

    #[test]
    fn plain_v0_and_v1_messages() {
        let v0 = entry(7, 0, 0, -1, Some(b"k"), Some(b"v"));
        let m = LegacyView::new(&v0, 100).unwrap();
        assert!(m.crc_valid());
        assert_eq!(
            (m.offset, m.timestamp, m.key.unwrap(), m.value.unwrap()),
            (7, -1, Some(&b"k"[..]), Some(&b"v"[..]))
        );
        let v1 = entry(8, 1, 0, 1_700_000_000_000, None, Some(b"hello"));
        let m = LegacyView::new(&v1, 0).unwrap();
        assert_eq!(
            (m.timestamp, m.timestamp_type()),
            (1_700_000_000_000, Some(TimestampType::CreateTime))
        );
        let mut flipped = v1.clone();
        *flipped.last_mut().unwrap() ^= 1;
        let m = LegacyView::new(&flipped, 0).unwrap();
        assert!(!m.crc_valid());
        assert_eq!(m.check_crc().unwrap_err().offset, 12);
    }

    #[test]
    fn gzip_wrappers_v0_absolute_and_v1_relative_offsets() {
        // v0: inner offsets are absolute; the wrapper carries the last one.
        let inner: Vec<u8> = [
            entry(10, 0, 0, -1, None, Some(b"a")),
            entry(11, 0, 0, -1, None, Some(b"b")),
        ]
        .concat();
        let wrapper = entry(11, 0, 1, -1, None, Some(&gzip(&inner)));
        let w = LegacyView::new(&wrapper, 0).unwrap();
        assert!(w.crc_valid());
        let mut scratch = Vec::new();
        let msgs: Vec<_> = w
            .messages(&mut scratch, DecodeLimits::default())
            .unwrap()
            .collect();
        assert_eq!(msgs.iter().map(|m| m.offset).collect::<Vec<_>>(), [10, 11]);
        assert_eq!(msgs[1].value, Some(&b"b"[..]));
        // v1: inner offsets 0, 1, 2 relative; wrapper offset 42 is the last: 40, 41, 42.
        let inner: Vec<u8> = (0..3)
            .map(|i| entry(i, 1, 0, 1000 + i, None, Some(b"x")))
            .collect::<Vec<_>>()
            .concat();
        let wrapper = entry(42, 1, 1, 1002, None, Some(&gzip(&inner)));
        let w = LegacyView::new(&wrapper, 0).unwrap();
        let mut scratch = Vec::new();
        let msgs: Vec<_> = w
            .messages(&mut scratch, DecodeLimits::default())
            .unwrap()
            .collect();
        assert_eq!(
            msgs.iter().map(|m| m.offset).collect::<Vec<_>>(),
            [40, 41, 42]
        );
        assert_eq!(msgs[0].timestamp, 1000);
        // LogAppendTime on the wrapper: every inner message takes the wrapper's timestamp.
        let wrapper = entry(42, 1, 1 | 0x08, 5555, None, Some(&gzip(&inner)));
        let w = LegacyView::new(&wrapper, 0).unwrap();
        let mut scratch = Vec::new();
        assert!(w
            .messages(&mut scratch, DecodeLimits::default())
            .unwrap()
            .all(|m| m.timestamp == 5555));
        // A wrapper offset below the last relative offset is invalid.
        let wrapper = entry(1, 1, 1, 0, None, Some(&gzip(&inner)));
        let w = LegacyView::new(&wrapper, 0).unwrap();
        let mut scratch = Vec::new();
        assert!(w.messages(&mut scratch, DecodeLimits::default()).is_err());
    }

    #[test]
    fn magic0_lz4_with_kafkas_broken_header_checksum() {
        let inner = entry(3, 0, 0, -1, None, Some(b"lz4 message"));
        let mut frame = crate::format::compression::compress(Compression::Lz4, &inner).unwrap();
        // Kafka's old writer hashed magic + FLG + BD.
        frame[6] = (twox_hash::XxHash32::oneshot(0, &frame[0..6]) >> 8) as u8;
        let wrapper = entry(3, 0, 3, -1, None, Some(&frame));
        let w = LegacyView::new(&wrapper, 0).unwrap();
        let mut scratch = Vec::new();
        let msgs: Vec<_> = w
            .messages(&mut scratch, DecodeLimits::default())
            .unwrap()
            .collect();
        assert_eq!(msgs[0].value, Some(&b"lz4 message"[..]));
    }

    /// Kafka's `LegacyRecord` reads the fixed header and the sizes at their
    /// places and slices the value only when asked (`Utils.sizeDelimited`,
    /// which throws "newLimit > capacity"): an entry whose value length runs
    /// past its end is framed, its header and CRC read; only its value fails.
    #[test]
    fn a_value_past_the_entry_fails_only_when_read() {
        let mut bytes = entry(5, 1, 0, 77, Some(b"k"), Some(b"abc"));
        // The value length field sits 7 bytes before the end (4 + "abc").
        let at = bytes.len() - 7;
        bytes[at..at + 4].copy_from_slice(&1000i32.to_be_bytes());
        let m = LegacyView::new(&bytes, 100).unwrap();
        assert_eq!((m.offset, m.timestamp, m.key), (5, 77, Ok(Some(&b"k"[..]))));
        assert_eq!((m.key_size(), m.value_size()), (Some(1), Some(1000)));
        assert!(!m.crc_valid());
        let error = m.value.unwrap_err();
        assert_eq!(error.offset, 100 + at as u64 + 4);
        assert_eq!(
            error.kind,
            DecodeErrorKind::UnexpectedEof {
                needed: 1000,
                available: 3
            }
        );
        let mut scratch = Vec::new();
        let refused = m
            .messages(&mut scratch, DecodeLimits::default())
            .unwrap_err();
        assert_eq!(refused, error);
        // A key past the end: the value's length field is past it too
        // (Kafka's `valueSize()` throws), both fail, the header reads.
        // (The key length sits after offset, size, crc, magic, attributes
        // and timestamp: bytes 26..30.)
        let mut bytes = entry(5, 1, 0, 77, Some(b"k"), Some(b"abc"));
        bytes[26..30].copy_from_slice(&500i32.to_be_bytes());
        let m = LegacyView::new(&bytes, 0).unwrap();
        assert_eq!(
            (m.offset, m.timestamp, m.key_size(), m.value_size()),
            (5, 77, None, None)
        );
        assert_eq!(m.key.unwrap_err().offset, 30);
        assert_eq!(m.value.unwrap_err().offset, 30);
        // A negative length other than -1 refuses the entry whole.
        bytes[26..30].copy_from_slice(&(-2i32).to_be_bytes());
        assert!(LegacyView::new(&bytes, 0).is_err());
        // So does a header cut short: a v1 entry that ends in its timestamp.
        let short = [&bytes[..8], &10i32.to_be_bytes(), &bytes[12..22]].concat();
        assert!(LegacyView::new(&short, 0).is_err());
    }
}
