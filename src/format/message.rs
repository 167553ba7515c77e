//! The "Kafka protocol" encoding of internal-topic keys and values (and
//! other generated messages): non-flexible versions use int16-length
//! strings and int32-length bytes/arrays (-1 = null); flexible versions use
//! unsigned varint (length + 1) lengths (0 = null) and end every struct with
//! a tagged-field section (`count`, then `tag`, `size`, `size` bytes each),
//! whose unknown tags a reader skips.

use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};

/// A reader for one message version.
pub struct MessageReader<'a, 'c> {
    pub c: &'c mut Cursor<'a>,
    pub flexible: bool,
}

impl<'a, 'c> MessageReader<'a, 'c> {
    /// Wrap a cursor; `flexible` selects compact lengths and tagged fields.
    pub fn new(c: &'c mut Cursor<'a>, flexible: bool) -> Self {
        MessageReader { c, flexible }
    }

    fn length(&mut self, field: &'static str, int16: bool) -> Result<Option<usize>, DecodeError> {
        let at = self.c.position();
        let len: i64 = if self.flexible {
            i64::from(self.c.uvarint()?) - 1
        } else if int16 {
            i64::from(self.c.i16()?)
        } else {
            i64::from(self.c.i32()?)
        };
        match len {
            -1 => Ok(None),
            n if n < 0 => Err(DecodeError::new(
                at,
                DecodeErrorKind::NegativeLength { field, value: n },
            )),
            n => Ok(Some(n as usize)),
        }
    }

    /// A nullable string.
    pub fn nullable_string(&mut self, field: &'static str) -> Result<Option<&'a str>, DecodeError> {
        let at = self.c.position();
        match self.length(field, true)? {
            None => Ok(None),
            Some(n) => {
                let bytes = self.c.bytes(n)?;
                std::str::from_utf8(bytes)
                    .map(Some)
                    .map_err(|_| DecodeError::new(at, DecodeErrorKind::InvalidUtf8 { field }))
            }
        }
    }

    /// A non-nullable string.
    pub fn string(&mut self, field: &'static str) -> Result<&'a str, DecodeError> {
        let at = self.c.position();
        self.nullable_string(field)?
            .ok_or_else(|| DecodeError::new(at, DecodeErrorKind::UnexpectedNull { field }))
    }

    /// Nullable bytes.
    pub fn nullable_bytes(&mut self, field: &'static str) -> Result<Option<&'a [u8]>, DecodeError> {
        match self.length(field, false)? {
            None => Ok(None),
            Some(n) => self.c.bytes(n).map(Some),
        }
    }

    /// An array's element count; `None` for a null array. The count is
    /// checked against the bytes that remain (every element takes at least
    /// one byte), so a hostile count cannot drive a huge allocation.
    pub fn array_len(&mut self, field: &'static str) -> Result<Option<usize>, DecodeError> {
        let at = self.c.position();
        let n = self.length(field, false)?;
        if let Some(n) = n {
            if n > self.c.remaining() {
                return Err(DecodeError::new(
                    at,
                    DecodeErrorKind::ValueOutOfRange {
                        field,
                        value: n as i64,
                    },
                ));
            }
        }
        Ok(n)
    }

    /// Skip the tagged-field section at the end of a struct (flexible versions only).
    pub fn tagged_fields(&mut self) -> Result<(), DecodeError> {
        if !self.flexible {
            return Ok(());
        }
        let count = self.c.uvarint()?;
        for _ in 0..count {
            let _tag = self.c.uvarint()?;
            let size = self.c.uvarint()?;
            self.c.bytes(size as usize)?;
        }
        Ok(())
    }
}

/// Read the int16 version that starts a coordinator record value and check
/// it against the versions Kafka reads for its schema: one outside them is
/// refused, as `CoordinatorRecordSerde.deserialize` refuses it (it throws
/// `UnknownRecordVersionException` before the generated reader runs, and
/// `CoordinatorLoaderImpl` fails the partition's load).
pub fn read_value_version(
    c: &mut Cursor<'_>,
    schema: &'static str,
    known: std::ops::RangeInclusive<i16>,
) -> Result<i16, DecodeError> {
    let at = c.position();
    let version = c.i16()?;
    if !known.contains(&version) {
        return Err(DecodeError::new(
            at,
            DecodeErrorKind::RecordVersion {
                schema,
                version,
                lowest: *known.start(),
                newest: *known.end(),
            },
        ));
    }
    Ok(version)
}

/// Append a non-flexible string.
pub fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}
