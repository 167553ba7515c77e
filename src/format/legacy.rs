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

use crate::error::{DecodeError, DecodeErrorKind};
use crate::format::batch::TimestampType;
use crate::format::compression::Compression;
use crate::format::crc;
use crate::format::cursor::Cursor;

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
    pub key: Option<&'a [u8]>,
    pub value: Option<&'a [u8]>,
    bytes: &'a [u8],
}

impl<'a> LegacyView<'a> {
    /// Parse one whole entry (`bytes` = offset..end of message).
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
        let key = int32_bytes(&mut c, "key")?;
        let value = int32_bytes(&mut c, "value")?;
        Ok(LegacyView {
            position,
            offset,
            magic,
            crc,
            attributes,
            timestamp,
            key,
            value,
            bytes,
        })
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

fn int32_bytes<'a>(
    c: &mut Cursor<'a>,
    field: &'static str,
) -> Result<Option<&'a [u8]>, DecodeError> {
    let at = c.position();
    match c.i32()? {
        -1 => Ok(None),
        n if n < 0 => Err(DecodeError::new(
            at,
            DecodeErrorKind::NegativeLength {
                field,
                value: i64::from(n),
            },
        )),
        n => c.bytes(n as usize).map(Some),
    }
}
