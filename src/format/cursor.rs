//! A panic-free reader over a byte slice that knows absolute file positions.
//!
//! Every read checks the bytes that remain first and returns a
//! [`DecodeError`] positioned at the field that did not fit, so a decoder
//! built on it cannot index out of bounds or trust a length it has not
//! checked.

use crate::format::error::{DecodeError, DecodeErrorKind};
use crate::format::varint;

/// A position-aware, big-endian reader over borrowed bytes.
#[derive(Debug, Clone)]
pub struct Cursor<'a> {
    bytes: &'a [u8],
    /// File position of `bytes[0]`.
    base: u64,
    pos: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor over `bytes`, the first of which sits at file position `base`.
    #[inline]
    pub fn new(bytes: &'a [u8], base: u64) -> Self {
        Cursor {
            bytes,
            base,
            pos: 0,
        }
    }

    /// Absolute file position of the next byte.
    #[inline]
    pub fn position(&self) -> u64 {
        self.base + self.pos as u64
    }

    /// Bytes consumed so far.
    #[inline]
    pub fn consumed(&self) -> usize {
        self.pos
    }

    /// Bytes not yet read.
    #[inline]
    pub fn remaining(&self) -> usize {
        self.bytes.len().saturating_sub(self.pos)
    }

    /// Whether every byte has been read.
    #[inline]
    pub fn is_empty(&self) -> bool {
        self.remaining() == 0
    }

    /// The unread bytes.
    #[inline]
    pub fn rest(&self) -> &'a [u8] {
        self.bytes.get(self.pos..).unwrap_or(&[])
    }

    /// An error of `kind` at the current position.
    #[inline]
    pub fn error(&self, kind: DecodeErrorKind) -> DecodeError {
        DecodeError::new(self.position(), kind)
    }

    #[cold]
    #[inline(never)]
    fn eof(&self, needed: usize) -> DecodeError {
        self.error(DecodeErrorKind::UnexpectedEof {
            needed: needed as u64,
            available: self.remaining() as u64,
        })
    }

    /// Read `len` bytes as a borrowed slice.
    #[inline(always)]
    pub fn bytes(&mut self, len: usize) -> Result<&'a [u8], DecodeError> {
        let end = self.pos.checked_add(len).ok_or_else(|| self.eof(len))?;
        let slice = self.bytes.get(self.pos..end).ok_or_else(|| self.eof(len))?;
        self.pos = end;
        Ok(slice)
    }

    /// Skip `len` bytes (at most the bytes that remain).
    #[inline(always)]
    pub fn skip(&mut self, len: usize) {
        self.pos = self.pos.saturating_add(len).min(self.bytes.len());
    }

    /// Split off the next `len` bytes as a cursor that keeps absolute positions.
    #[inline(always)]
    pub fn take(&mut self, len: usize) -> Result<Cursor<'a>, DecodeError> {
        let base = self.position();
        let bytes = self.bytes(len)?;
        Ok(Cursor::new(bytes, base))
    }

    #[inline]
    fn array<const N: usize>(&mut self) -> Result<[u8; N], DecodeError> {
        let slice = self.bytes(N)?;
        let mut out = [0u8; N];
        out.copy_from_slice(slice);
        Ok(out)
    }

    /// int8
    #[inline(always)]
    pub fn i8(&mut self) -> Result<i8, DecodeError> {
        Ok(i8::from_be_bytes(self.array()?))
    }

    /// int16, big-endian
    #[inline]
    pub fn i16(&mut self) -> Result<i16, DecodeError> {
        Ok(i16::from_be_bytes(self.array()?))
    }

    /// uint16, big-endian
    #[inline]
    pub fn u16(&mut self) -> Result<u16, DecodeError> {
        Ok(u16::from_be_bytes(self.array()?))
    }

    /// int32, big-endian
    #[inline]
    pub fn i32(&mut self) -> Result<i32, DecodeError> {
        Ok(i32::from_be_bytes(self.array()?))
    }

    /// uint32, big-endian
    #[inline]
    pub fn u32(&mut self) -> Result<u32, DecodeError> {
        Ok(u32::from_be_bytes(self.array()?))
    }

    /// int64, big-endian
    #[inline]
    pub fn i64(&mut self) -> Result<i64, DecodeError> {
        Ok(i64::from_be_bytes(self.array()?))
    }

    /// Zigzag varint (at most 5 bytes).
    #[inline(always)]
    pub fn varint(&mut self) -> Result<i32, DecodeError> {
        let at = self.position();
        let (value, len) =
            varint::decode_varint(self.rest()).map_err(|k| DecodeError::new(at, k))?;
        self.pos += len;
        Ok(value)
    }

    /// Zigzag varlong (at most 10 bytes).
    #[inline(always)]
    pub fn varlong(&mut self) -> Result<i64, DecodeError> {
        let at = self.position();
        let (value, len) =
            varint::decode_varlong(self.rest()).map_err(|k| DecodeError::new(at, k))?;
        self.pos += len;
        Ok(value)
    }

    /// Unsigned varint (compact lengths of flexible message versions).
    #[inline]
    pub fn uvarint(&mut self) -> Result<u32, DecodeError> {
        let at = self.position();
        let (value, len) =
            varint::decode_uvarint(self.rest()).map_err(|k| DecodeError::new(at, k))?;
        self.pos += len;
        Ok(value)
    }

    /// A varint length followed by that many bytes; -1 is null, other
    /// negative lengths are an error naming `field`.
    #[inline(always)]
    pub fn varint_bytes(&mut self, field: &'static str) -> Result<Option<&'a [u8]>, DecodeError> {
        let at = self.position();
        let len = self.varint()?;
        match nullable_length(at, len, field)? {
            None => Ok(None),
            Some(n) => self.bytes(n).map(Some),
        }
    }
}

/// A length field read at `at`: -1 is null, another negative length an
/// error naming `field`.
#[inline(always)]
pub fn nullable_length(
    at: u64,
    len: i32,
    field: &'static str,
) -> Result<Option<usize>, DecodeError> {
    match len {
        -1 => Ok(None),
        n if n < 0 => Err(DecodeError::new(
            at,
            DecodeErrorKind::NegativeLength {
                field,
                value: i64::from(n),
            },
        )),
        n => Ok(Some(n as usize)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_big_endian_and_tracks_absolute_positions() {
        let bytes = [0x00, 0x01, 0xff, 0xff, 0xff, 0xfe, 0x09];
        let mut c = Cursor::new(&bytes, 100);
        assert_eq!(c.i16().unwrap(), 1);
        assert_eq!(c.position(), 102);
        assert_eq!(c.i32().unwrap(), -2);
        let err = c.i16().unwrap_err();
        assert_eq!(err.offset, 106);
        assert_eq!(
            err.kind,
            DecodeErrorKind::UnexpectedEof {
                needed: 2,
                available: 1
            }
        );
    }

    #[test]
    fn take_keeps_positions_and_never_overruns() {
        let bytes = [1, 2, 3, 4];
        let mut c = Cursor::new(&bytes, 10);
        c.i8().unwrap();
        let mut inner = c.take(2).unwrap();
        assert_eq!(inner.position(), 11);
        assert_eq!(inner.bytes(2).unwrap(), &[2, 3]);
        assert!(c.take(2).is_err());
        assert!(c.bytes(usize::MAX).is_err());
    }

    #[test]
    fn varint_bytes_null_and_negative() {
        let mut c = Cursor::new(&[0x01, 0x03], 0);
        assert_eq!(c.varint_bytes("key").unwrap(), None);
        let err = c.varint_bytes("key").unwrap_err();
        assert_eq!(err.offset, 1);
        assert_eq!(
            err.kind,
            DecodeErrorKind::NegativeLength {
                field: "key",
                value: -2
            }
        );
    }
}
