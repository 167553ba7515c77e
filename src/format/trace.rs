//! What a decoder read, field by field, for the views that show it
//! (`dump-segment --layout`, `report --layout`).
//!
//! A decoder that takes a [`Trace`] reads through a [`Traced`] cursor: each
//! field it reads is handed to the trace with its name, position, bytes and
//! value, in the order read, before the decoder checks the value. With
//! [`NoTrace`] the calls are empty and inlined away, so the decoders that
//! check and iterate segments are the same code the layout follows.

use crate::format::cursor::{nullable_length, Cursor};
use crate::format::error::DecodeError;

/// A field's value as the wire type read it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Value<'a> {
    I8(i8),
    I16(i16),
    I32(i32),
    U32(u32),
    I64(i64),
    Varint(i32),
    Varlong(i64),
    Uvarint(u32),
    Bytes(&'a [u8]),
}

impl Value<'_> {
    /// The wire type's name, as Kafka's schema files write it.
    pub fn type_name(&self) -> &'static str {
        match self {
            Value::I8(_) => "int8",
            Value::I16(_) => "int16",
            Value::I32(_) => "int32",
            Value::U32(_) => "uint32",
            Value::I64(_) => "int64",
            Value::Varint(_) => "varint",
            Value::Varlong(_) => "varlong",
            Value::Uvarint(_) => "uvarint",
            Value::Bytes(_) => "bytes",
        }
    }

    /// The value as a number (bytes: their length).
    pub fn number(&self) -> i64 {
        match *self {
            Value::I8(v) => v.into(),
            Value::I16(v) => v.into(),
            Value::I32(v) | Value::Varint(v) => v.into(),
            Value::U32(v) | Value::Uvarint(v) => v.into(),
            Value::I64(v) | Value::Varlong(v) => v,
            Value::Bytes(b) => b.len() as i64,
        }
    }
}

/// One field read.
#[derive(Debug, Clone, Copy)]
pub struct Read<'a> {
    /// The field's name in Kafka's layout (`baseOffset`, `keyLength`).
    pub name: &'static str,
    /// Where it starts: a file position, or a position in the decompressed
    /// records, as the decoder's cursor counts.
    pub position: u64,
    /// Its bytes.
    pub bytes: &'a [u8],
    pub value: Value<'a>,
}

/// Where a decoder says what it read.
pub trait Trace<'a> {
    fn read(&mut self, field: Read<'a>);
}

/// A trace that keeps nothing: the decoders' everyday mode.
pub struct NoTrace;

impl<'a> Trace<'a> for NoTrace {
    #[inline(always)]
    fn read(&mut self, _: Read<'a>) {}
}

/// The [`Traced`] read of each of [`Cursor`]'s number reads: the same read,
/// its value handed to the trace as the [`Value`] variant named.
macro_rules! reads {
    ($($(#[$doc:meta])* $read:ident: $t:ty => $variant:ident;)*) => {
        $(
            $(#[$doc])*
            #[inline(always)]
            pub fn $read(&mut self, name: &'static str) -> Result<$t, DecodeError> {
                self.read(name, Cursor::$read, Value::$variant)
            }
        )*
    };
}

/// A cursor that hands every field it reads to a trace.
pub struct Traced<'a, 'b, T> {
    pub c: &'b mut Cursor<'a>,
    pub trace: &'b mut T,
}

impl<'a, 'b, T: Trace<'a>> Traced<'a, 'b, T> {
    #[inline(always)]
    pub fn new(c: &'b mut Cursor<'a>, trace: &'b mut T) -> Self {
        Traced { c, trace }
    }

    #[inline(always)]
    fn read<V: Copy>(
        &mut self,
        name: &'static str,
        read: impl FnOnce(&mut Cursor<'a>) -> Result<V, DecodeError>,
        value: impl FnOnce(V) -> Value<'a>,
    ) -> Result<V, DecodeError> {
        let position = self.c.position();
        let before = self.c.rest();
        let v = read(self.c)?;
        let len = (self.c.position() - position) as usize;
        self.trace.read(Read {
            name,
            position,
            bytes: before.get(..len).unwrap_or(&[]),
            value: value(v),
        });
        Ok(v)
    }

    reads! {
        /// int8
        i8: i8 => I8;
        /// int16
        i16: i16 => I16;
        /// int32
        i32: i32 => I32;
        /// uint32
        u32: u32 => U32;
        /// int64
        i64: i64 => I64;
        /// varint (zigzag)
        varint: i32 => Varint;
        /// varlong (zigzag)
        varlong: i64 => Varlong;
        /// unsigned varint
        uvarint: u32 => Uvarint;
    }

    /// `len` bytes.
    #[inline(always)]
    pub fn bytes(&mut self, name: &'static str, len: usize) -> Result<&'a [u8], DecodeError> {
        self.read(name, |c| c.bytes(len), Value::Bytes)
    }

    /// A varint length named `len_name` (-1: null), then that many bytes
    /// named `name`; a length below -1 is refused as `field`'s, as
    /// [`Cursor::varint_bytes`] refuses it.
    #[inline(always)]
    pub fn varint_bytes(
        &mut self,
        (len_name, name): (&'static str, &'static str),
        field: &'static str,
    ) -> Result<Option<&'a [u8]>, DecodeError> {
        let at = self.c.position();
        let len = self.varint(len_name)?;
        match nullable_length(at, len, field)? {
            None => Ok(None),
            Some(n) => self.bytes(name, n).map(Some),
        }
    }
}

/// A trace that hands each field to a closure.
pub struct Each<F>(pub F);

impl<'a, F: FnMut(Read<'a>)> Trace<'a> for Each<F> {
    fn read(&mut self, field: Read<'a>) {
        (self.0)(field)
    }
}
