//! Zigzag varints as Kafka's `ByteUtils` writes them.
//!
//! A 32-bit varint takes at most 5 bytes and a varlong at most 10; a longer
//! encoding is [`DecodeErrorKind::VarintOverlong`], as in Kafka. Like Kafka,
//! non-minimal encodings (`80 00` for 0) are accepted. Unlike some clients,
//! a fifth byte whose bits overflow 32 bits is accepted only as Kafka does:
//! the excess bits are dropped.

use crate::format::error::DecodeErrorKind;

/// Decode a zigzag varint; returns the value and the bytes it took.
#[inline]
pub fn decode_varint(bytes: &[u8]) -> Result<(i32, usize), DecodeErrorKind> {
    let (raw, len) = decode_unsigned(bytes, 5)?;
    let raw = raw as u32;
    Ok((((raw >> 1) as i32) ^ -((raw & 1) as i32), len))
}

/// Decode a zigzag varlong; returns the value and the bytes it took.
#[inline]
pub fn decode_varlong(bytes: &[u8]) -> Result<(i64, usize), DecodeErrorKind> {
    let (raw, len) = decode_unsigned(bytes, 10)?;
    Ok((((raw >> 1) as i64) ^ -((raw & 1) as i64), len))
}

/// Decode an unsigned (non-zigzag) 32-bit varint.
#[inline]
pub fn decode_uvarint(bytes: &[u8]) -> Result<(u32, usize), DecodeErrorKind> {
    let (raw, len) = decode_unsigned(bytes, 5)?;
    Ok((raw as u32, len))
}

/// The unsigned value of the varint at the start of `bytes` and its length.
/// Most varints in a record (attributes aside, every field of a small
/// record) take one or two bytes: those are decoded here without a loop;
/// longer ones, and every error, by [`decode_unsigned_long`] (same rules).
#[inline(always)]
fn decode_unsigned(bytes: &[u8], max_len: usize) -> Result<(u64, usize), DecodeErrorKind> {
    // Both limits (5 and 10) exceed two bytes.
    debug_assert!(max_len >= 2);
    if let Some(&b0) = bytes.first() {
        if b0 < 0x80 {
            return Ok((u64::from(b0), 1));
        }
        if let Some(&b1) = bytes.get(1) {
            if b1 < 0x80 {
                return Ok((u64::from(b0 & 0x7f) | u64::from(b1) << 7, 2));
            }
        }
    }
    decode_unsigned_long(bytes, max_len)
}

#[inline(never)]
fn decode_unsigned_long(bytes: &[u8], max_len: usize) -> Result<(u64, usize), DecodeErrorKind> {
    let mut value: u64 = 0;
    for (i, &b) in bytes.iter().take(max_len).enumerate() {
        value |= u64::from(b & 0x7f) << (7 * i as u32);
        if b & 0x80 == 0 {
            return Ok((value, i + 1));
        }
    }
    if bytes.len() >= max_len {
        Err(DecodeErrorKind::VarintOverlong)
    } else {
        Err(DecodeErrorKind::UnexpectedEof {
            needed: bytes.len() as u64 + 1,
            available: bytes.len() as u64,
        })
    }
}

/// Append a zigzag varint.
pub fn put_varint(out: &mut Vec<u8>, value: i32) {
    put_unsigned(out, u64::from(((value << 1) ^ (value >> 31)) as u32));
}

/// Append a zigzag varlong.
pub fn put_varlong(out: &mut Vec<u8>, value: i64) {
    put_unsigned(out, ((value << 1) ^ (value >> 63)) as u64);
}

/// Append an unsigned varint.
pub fn put_uvarint(out: &mut Vec<u8>, value: u32) {
    put_unsigned(out, u64::from(value));
}

fn put_unsigned(out: &mut Vec<u8>, mut value: u64) {
    while value >= 0x80 {
        out.push((value as u8) | 0x80);
        value >>= 7;
    }
    out.push(value as u8);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spec_examples() {
        // From Kafka's ByteUtils zigzag rule: 0->00, -1->01, 1->02, -2->03, 2->04, 63->7e, -64->7f, 64->80 01
        for (v, enc) in [
            (0, vec![0x00]),
            (-1, vec![0x01]),
            (1, vec![0x02]),
            (-2, vec![0x03]),
            (2, vec![0x04]),
            (63, vec![0x7e]),
            (-64, vec![0x7f]),
            (64, vec![0x80, 0x01]),
        ] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert_eq!(out, enc, "encode {v}");
            assert_eq!(decode_varint(&enc).unwrap(), (v, enc.len()), "decode {v}");
        }
    }

    #[test]
    fn extremes_round_trip() {
        for v in [i32::MIN, i32::MAX, 0, -1, 1 << 20] {
            let mut out = Vec::new();
            put_varint(&mut out, v);
            assert!(out.len() <= 5);
            assert_eq!(decode_varint(&out).unwrap(), (v, out.len()));
        }
        for v in [i64::MIN, i64::MAX, 0, -1, 1 << 40] {
            let mut out = Vec::new();
            put_varlong(&mut out, v);
            assert!(out.len() <= 10);
            assert_eq!(decode_varlong(&out).unwrap(), (v, out.len()));
        }
    }

    #[test]
    fn short_paths_agree_with_the_loop() {
        let mut bufs: Vec<Vec<u8>> = vec![vec![]];
        for b0 in 0..=255u8 {
            bufs.push(vec![b0]);
            for b1 in 0..=255u8 {
                bufs.push(vec![b0, b1]);
                for b2 in [0x00, 0x01, 0x7f, 0x80, 0xff] {
                    bufs.push(vec![b0, b1, b2]);
                    bufs.push(vec![
                        b0, b1, b2, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01,
                    ]);
                }
            }
        }
        for b in &bufs {
            for max_len in [5, 10] {
                assert_eq!(
                    decode_unsigned(b, max_len),
                    decode_unsigned_long(b, max_len),
                    "{b:02x?} max {max_len}"
                );
            }
        }
    }

    #[test]
    fn overlong_and_unterminated() {
        assert_eq!(
            decode_varint(&[0x80; 6]),
            Err(DecodeErrorKind::VarintOverlong)
        );
        assert_eq!(
            decode_varint(&[0x80; 5]),
            Err(DecodeErrorKind::VarintOverlong)
        );
        assert_eq!(
            decode_varlong(&[0x80; 10]),
            Err(DecodeErrorKind::VarintOverlong)
        );
        assert_eq!(
            decode_varint(&[0x80, 0x80]),
            Err(DecodeErrorKind::UnexpectedEof {
                needed: 3,
                available: 2
            })
        );
        // Non-minimal encodings are accepted, as Kafka does.
        assert_eq!(decode_varint(&[0x80, 0x00]).unwrap(), (0, 2));
        // A varlong delta that needs more than 5 bytes (kafka-protocol reads it as a varint).
        let mut out = Vec::new();
        put_varlong(&mut out, 1 << 40);
        assert!(decode_varint(&out).is_err());
    }
}
