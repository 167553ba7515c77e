//! Hand-assembled bytes for edge cases: the tests write every field
//! themselves instead of getting bytes from the code under test.

/// A byte builder with big-endian fields, zigzag varints and back-filled gaps.
#[derive(Default)]
pub struct ByteBuilder {
    pub bytes: Vec<u8>,
    len_gap: Option<usize>,
    crc_gap: Option<usize>,
}

impl ByteBuilder {
    pub fn new() -> Self {
        Self::default()
    }
    pub fn i8(mut self, v: i8) -> Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn i16(mut self, v: i16) -> Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn i32(mut self, v: i32) -> Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn i64(mut self, v: i64) -> Self {
        self.bytes.extend_from_slice(&v.to_be_bytes());
        self
    }
    pub fn raw(mut self, b: &[u8]) -> Self {
        self.bytes.extend_from_slice(b);
        self
    }
    /// Zigzag varint, written by hand (not with the crate's encoder).
    pub fn varint(self, v: i64) -> Self {
        let mut z = ((v << 1) ^ (v >> 63)) as u64;
        let mut out = Vec::new();
        while z >= 0x80 {
            out.push((z as u8) | 0x80);
            z >>= 7;
        }
        out.push(z as u8);
        self.raw(&out)
    }
    /// A 4-byte gap for batchLength (filled with end - 12 by `finish`).
    pub fn len_gap(mut self) -> Self {
        self.len_gap = Some(self.bytes.len());
        self.i32(0)
    }
    /// A 4-byte gap for the CRC-32C of bytes 21..end (filled by `finish`).
    pub fn crc_gap(mut self) -> Self {
        self.crc_gap = Some(self.bytes.len());
        self.i32(0)
    }
    pub fn finish(mut self) -> Vec<u8> {
        if let Some(at) = self.len_gap {
            let len = (self.bytes.len() - 12) as i32;
            self.bytes[at..at + 4].copy_from_slice(&len.to_be_bytes());
        }
        if let Some(at) = self.crc_gap {
            let crc = crc32c::crc32c(&self.bytes[21..]);
            self.bytes[at..at + 4].copy_from_slice(&crc.to_be_bytes());
        }
        self.bytes
    }
}

/// A v2 batch header (61 bytes with gaps) for `count` records, then `records`.
pub fn batch(base_offset: i64, last_offset_delta: i32, count: i32, records: &[u8]) -> Vec<u8> {
    ByteBuilder::new()
        .i64(base_offset) // baseOffset
        .len_gap() // batchLength
        .i32(0) // partitionLeaderEpoch
        .i8(2) // magic
        .crc_gap() // crc
        .i16(0) // attributes
        .i32(last_offset_delta) // lastOffsetDelta
        .i64(1_700_000_000_000) // baseTimestamp
        .i64(1_700_000_000_000) // maxTimestamp
        .i64(-1) // producerId
        .i16(-1) // producerEpoch
        .i32(-1) // baseSequence
        .i32(count) // recordsCount
        .raw(records)
        .finish()
}

/// One record: value only, offset delta `delta`.
pub fn record(delta: i64, value: &[u8]) -> Vec<u8> {
    let body = ByteBuilder::new()
        .i8(0) // attributes
        .varint(0) // timestampDelta
        .varint(delta) // offsetDelta
        .varint(-1) // keyLength (null)
        .varint(value.len() as i64) // valueLength
        .raw(value)
        .varint(0) // headerCount
        .bytes;
    ByteBuilder::new()
        .varint(body.len() as i64)
        .raw(&body)
        .bytes
}
