//! The "Kafka protocol" encoding of internal-topic keys and values (and
//! other generated messages): non-flexible versions use int16-length
//! strings and int32-length bytes/arrays (-1 = null); flexible versions use
//! unsigned varint (length + 1) lengths (0 = null) and end every struct with
//! a tagged-field section (`count`, then `tag`, `size`, `size` bytes each),
//! whose unknown tags a reader skips.

use std::borrow::Cow;

use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};
use crate::format::schema::{KafkaReads, Leniency};

/// A reader for one message version, reading as Kafka's generated `read`
/// methods read (the rules of [`crate::format::schema`]'s module docs): a
/// compact length is a Java `int` (`readUnsignedVarint() - 1`), a nullable
/// field's negative length is null, and a string's malformed UTF-8 is
/// U+FFFD (`new String(bytes, UTF_8)`). What a strict reading would refuse
/// there is kept in `lenient`.
pub struct MessageReader<'a, 'c> {
    pub c: &'c mut Cursor<'a>,
    pub flexible: bool,
    /// Each place read as Kafka reads it and a strict reading refuses.
    pub lenient: Vec<Leniency>,
}

impl<'a, 'c> MessageReader<'a, 'c> {
    /// Wrap a cursor; `flexible` selects compact lengths and tagged fields.
    pub fn new(c: &'c mut Cursor<'a>, flexible: bool) -> Self {
        MessageReader {
            c,
            flexible,
            lenient: Vec::new(),
        }
    }

    /// A length (`None` for null), refused when negative for a field that
    /// is not `nullable` ("non-nullable field X was serialized as null").
    fn length(
        &mut self,
        field: &'static str,
        int16: bool,
        nullable: bool,
    ) -> Result<Option<usize>, DecodeError> {
        let at = self.c.position();
        let len: i64 = if self.flexible {
            i64::from((self.c.uvarint()? as i32).wrapping_sub(1))
        } else if int16 {
            i64::from(self.c.i16()?)
        } else {
            i64::from(self.c.i32()?)
        };
        let kind = match len {
            n if n >= 0 => return Ok(Some(n as usize)),
            -1 if nullable => return Ok(None),
            -1 => DecodeErrorKind::UnexpectedNull { field },
            value => DecodeErrorKind::NegativeLength { field, value },
        };
        if !nullable {
            return Err(DecodeError::new(at, kind));
        }
        self.lenient.push(Leniency {
            defect: DecodeError::new(at, kind),
            kafka_reads: KafkaReads::Null,
        });
        Ok(None)
    }

    fn read_string(
        &mut self,
        field: &'static str,
        nullable: bool,
    ) -> Result<Option<Cow<'a, str>>, DecodeError> {
        let at = self.c.position();
        let Some(n) = self.length(field, true, nullable)? else {
            return Ok(None);
        };
        if n > 0x7fff {
            // "string field had invalid length" (a compact length only).
            let value = n as i64;
            return Err(DecodeError::new(
                at,
                DecodeErrorKind::ValueOutOfRange { field, value },
            ));
        }
        let bytes = self.c.bytes(n)?;
        Ok(Some(match std::str::from_utf8(bytes) {
            Ok(s) => Cow::Borrowed(s),
            Err(_) => {
                self.lenient.push(Leniency {
                    defect: DecodeError::new(at, DecodeErrorKind::InvalidUtf8 { field }),
                    kafka_reads: KafkaReads::Replaced,
                });
                Cow::Owned(String::from_utf8_lossy(bytes).into_owned())
            }
        }))
    }

    /// A nullable string.
    pub fn nullable_string(
        &mut self,
        field: &'static str,
    ) -> Result<Option<Cow<'a, str>>, DecodeError> {
        self.read_string(field, true)
    }

    /// A non-nullable string.
    pub fn string(&mut self, field: &'static str) -> Result<Cow<'a, str>, DecodeError> {
        let at = self.c.position();
        self.read_string(field, false)?
            .ok_or_else(|| DecodeError::new(at, DecodeErrorKind::UnexpectedNull { field }))
    }

    /// Nullable bytes.
    pub fn nullable_bytes(&mut self, field: &'static str) -> Result<Option<&'a [u8]>, DecodeError> {
        match self.length(field, false, true)? {
            None => Ok(None),
            Some(n) => self.c.bytes(n).map(Some),
        }
    }

    /// The element count of a non-nullable array. The count is checked
    /// against the bytes that remain (every element takes at least one
    /// byte, and Kafka's reader refuses a count above them: "Tried to
    /// allocate a collection of size N, but there are only M bytes
    /// remaining"), so a hostile count cannot drive a huge allocation.
    pub fn array_len(&mut self, field: &'static str) -> Result<usize, DecodeError> {
        let at = self.c.position();
        let n = self.length(field, false, false)?.unwrap_or(0);
        if n > self.c.remaining() {
            return Err(DecodeError::new(
                at,
                DecodeErrorKind::ValueOutOfRange {
                    field,
                    value: n as i64,
                },
            ));
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
