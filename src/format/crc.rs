//! The checksums of the on-disk formats.
//!
//! Magic 2 batches use CRC-32C (Castagnoli) over `attributes..end`; magic 0/1
//! messages use CRC-32 (IEEE) over `magic..end`. Both are stored big-endian
//! and shown unsigned.

/// CRC-32C of `bytes` (the covered range of a magic-2 batch).
#[inline]
pub fn crc32c(bytes: &[u8]) -> u32 {
    crc32c::crc32c(bytes)
}

/// CRC-32C of `bytes` continued from `crc` (the CRC of what came before),
/// for a checksum computed in pieces.
#[inline]
pub fn crc32c_append(crc: u32, bytes: &[u8]) -> u32 {
    crc32c::crc32c_append(crc, bytes)
}

/// CRC-32 (IEEE, as zlib) of `bytes` (the covered range of a legacy message).
#[inline]
pub fn crc32_ieee(bytes: &[u8]) -> u32 {
    crc32fast::hash(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_values() {
        // The standard check values of both polynomials over ASCII "123456789".
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32_ieee(b"123456789"), 0xCBF4_3926);
    }
}
