//! The four codecs of a compressed records section.
//!
//! Only the records section (bytes 61..end) is compressed, as one stream:
//! - gzip (1): RFC 1952, concatenated members accepted and the reserved FLG
//!   bits of the first ignored (as the JDK reads them);
//! - snappy (2): snappy-java's stream framing as the Java client writes it
//!   (`82 'SNAPPY' 00`, version, compatible version, then blocks of
//!   int32 length + raw snappy); input without that header is read as one raw
//!   snappy block, as snappy-java does and as some other clients write;
//! - lz4 (3): the LZ4 frame format, independent blocks;
//! - zstd (4): zstd frames.
//!
//! Decompression grows its buffer only as data actually comes out, and stops
//! at a limit, so a small hostile input cannot make klog allocate gigabytes.

use std::io::Read;

pub use crate::format::codec::Compression;
use crate::format::error::DecodeErrorKind;

/// The header snappy-java writes before its blocks.
pub const XERIAL_MAGIC: [u8; 8] = [0x82, b'S', b'N', b'A', b'P', b'P', b'Y', 0];
const XERIAL_HEADER_LEN: usize = 16;
const XERIAL_BLOCK: usize = 32 * 1024;

/// Decompress `input` into `out` (cleared first), failing past `limit` bytes.
pub fn decompress(
    codec: Compression,
    input: &[u8],
    out: &mut Vec<u8>,
    limit: u64,
) -> Result<(), DecodeErrorKind> {
    out.clear();
    let fail = |reason| DecodeErrorKind::Decompress { codec, reason };
    match codec {
        Compression::None => {
            if input.len() as u64 > limit {
                return Err(DecodeErrorKind::DecompressedTooLarge { limit });
            }
            out.extend_from_slice(input);
            Ok(())
        }
        Compression::Gzip => {
            let input = gzip_as_the_jdk_reads_it(input);
            read_bounded(
                flate2::read::MultiGzDecoder::new(&*input),
                out,
                limit,
                codec,
            )
        }
        Compression::Lz4 => {
            read_bounded(lz4_flex::frame::FrameDecoder::new(input), out, limit, codec)
        }
        Compression::Zstd => zstd_as_kafka_reads_it(input, out, limit),
        Compression::Snappy => {
            if input.starts_with(&XERIAL_MAGIC) {
                let mut rest = input
                    .get(XERIAL_HEADER_LEN..)
                    .ok_or(fail("truncated snappy-java header"))?;
                while !rest.is_empty() {
                    let len_bytes: [u8; 4] = rest
                        .get(..4)
                        .and_then(|b| b.try_into().ok())
                        .ok_or(fail("truncated snappy-java block length"))?;
                    let len = i32::from_be_bytes(len_bytes);
                    if len < 0 {
                        return Err(fail("negative snappy-java block length"));
                    }
                    let block = rest
                        .get(4..4 + len as usize)
                        .ok_or(fail("snappy-java block runs past the records section"))?;
                    snappy_block(block, out, limit)?;
                    rest = rest.get(4 + len as usize..).unwrap_or(&[]);
                }
                Ok(())
            } else {
                snappy_block(input, out, limit)
            }
        }
    }
}

/// The JDK's `GZIPInputStream` (Kafka's gzip reader) ignores the reserved
/// bits of a member's FLG byte, which RFC 1952 and flate2 refuse: a copy
/// with them cleared when the first member sets any (the only member the
/// Java producer writes).
fn gzip_as_the_jdk_reads_it(input: &[u8]) -> std::borrow::Cow<'_, [u8]> {
    const FLG: usize = 3;
    const RESERVED: u8 = 0xe0;
    match input.get(FLG) {
        Some(flags) if input.starts_with(&[0x1f, 0x8b]) && flags & RESERVED != 0 => {
            let mut copy = input.to_vec();
            if let Some(f) = copy.get_mut(FLG) {
                *f &= !RESERVED;
            }
            std::borrow::Cow::Owned(copy)
        }
        _ => std::borrow::Cow::Borrowed(input),
    }
}

fn snappy_block(block: &[u8], out: &mut Vec<u8>, limit: u64) -> Result<(), DecodeErrorKind> {
    let fail = |reason| DecodeErrorKind::Decompress {
        codec: Compression::Snappy,
        reason,
    };
    let len = snap::raw::decompress_len(block).map_err(|_| fail("bad raw snappy length header"))?;
    if out.len() as u64 + len as u64 > limit {
        return Err(DecodeErrorKind::DecompressedTooLarge { limit });
    }
    // A raw block can expand at most about 21x per byte of input beyond its
    // header; a length beyond that is a lie we must not allocate for.
    if len > block.len().saturating_mul(64) + 64 {
        return Err(fail(
            "declared snappy length is impossible for the block size",
        ));
    }
    let start = out.len();
    out.resize(start + len, 0);
    let written = snap::raw::Decoder::new()
        .decompress(block, out.get_mut(start..).unwrap_or(&mut []))
        .map_err(|_| fail("corrupt raw snappy block"))?;
    out.truncate(start + written);
    Ok(())
}

/// Bytes of decompressed output Kafka asks zstd for at a time
/// (`ZstdCompression.decompressionOutputSize`, filled by
/// `ChunkedBytesStream.fill`).
const ZSTD_OUTPUT_WINDOW: usize = 16 * 1024;

/// Decompress a zstd records section with the windows Kafka gives libzstd,
/// so that klog accepts and refuses exactly the sections Kafka does, whatever
/// capacity `out` already has.
///
/// The windows matter: libzstd (`ZSTD_decompressStream`) decodes a frame in
/// one pass when its declared content size fits the output at hand, and that
/// pass checks the size; streamed, a frame whose last block is empty skips
/// the check. Kafka reads through zstd-jni's `ZstdInputStreamNoFinalizer`
/// (input `ZSTD_DStreamInSize` bytes at a time) into a 16 KiB intermediate
/// buffer (`ZstdCompression.wrapForInput`), so a frame declaring up to 16 KiB
/// must hold exactly that much, and a larger one is streamed.
fn zstd_as_kafka_reads_it(
    input: &[u8],
    out: &mut Vec<u8>,
    limit: u64,
) -> Result<(), DecodeErrorKind> {
    use zstd::stream::raw::{Decoder, InBuffer, Operation, OutBuffer};
    let fail = |reason| DecodeErrorKind::Decompress {
        codec: Compression::Zstd,
        reason,
    };
    let in_chunk = zstd::zstd_safe::DCtx::in_size().max(1);
    let mut decoder = Decoder::new().map_err(|_| fail("cannot start the zstd decoder"))?;
    // Input is handed over as zstd-jni reads it: the rest of the current
    // chunk of `in_chunk` bytes, the next chunk once that one is consumed.
    let (mut at, mut chunk_end) = (0, in_chunk.min(input.len()));
    loop {
        if out.len() as u64 > limit {
            out.truncate(limit as usize);
            return Err(DecodeErrorKind::DecompressedTooLarge { limit });
        }
        let start = out.len();
        out.resize(start + ZSTD_OUTPUT_WINDOW, 0);
        let mut written = 0;
        let ended = loop {
            let mut src = InBuffer::around(input.get(at..chunk_end).unwrap_or(&[]));
            let mut dst = OutBuffer::around(out.get_mut(start + written..).unwrap_or(&mut []));
            // Zero: a frame ended and all its output is out.
            let hint = decoder
                .run(&mut src, &mut dst)
                .map_err(|_| fail("corrupt compressed data"))?;
            let (read, wrote) = (src.pos(), dst.pos());
            at += read;
            written += wrote;
            if hint == 0 && at == input.len() {
                break Ok(());
            }
            if written == ZSTD_OUTPUT_WINDOW {
                break Err(None);
            }
            if at == chunk_end {
                if chunk_end == input.len() {
                    // All input given, room left, and the frame unfinished.
                    break Err(Some(fail("stream ends early")));
                }
                chunk_end = (chunk_end + in_chunk).min(input.len());
            } else if read == 0 && wrote == 0 {
                break Err(Some(fail("corrupt compressed data")));
            }
        };
        out.truncate(start + written);
        match ended {
            Ok(()) if out.len() as u64 > limit => {
                return Err(DecodeErrorKind::DecompressedTooLarge { limit });
            }
            Ok(()) => return Ok(()),
            Err(Some(e)) => return Err(e),
            // The window is full: another one.
            Err(None) => {}
        }
    }
}

fn read_bounded(
    reader: impl Read,
    out: &mut Vec<u8>,
    limit: u64,
    codec: Compression,
) -> Result<(), DecodeErrorKind> {
    let mut bounded = reader.take(limit.saturating_add(1));
    match bounded.read_to_end(out) {
        Ok(_) if out.len() as u64 > limit => Err(DecodeErrorKind::DecompressedTooLarge { limit }),
        Ok(_) => Ok(()),
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            Err(DecodeErrorKind::Decompress {
                codec,
                reason: "stream ends early",
            })
        }
        Err(_) => Err(DecodeErrorKind::Decompress {
            codec,
            reason: "corrupt compressed data",
        }),
    }
}

/// Compress `input` the way the Java client does for `codec`.
pub fn compress(codec: Compression, input: &[u8]) -> std::io::Result<Vec<u8>> {
    use std::io::Write;
    match codec {
        Compression::None => Ok(input.to_vec()),
        Compression::Gzip => {
            let mut enc = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
            enc.write_all(input)?;
            enc.finish()
        }
        Compression::Snappy => {
            let mut out = Vec::with_capacity(input.len() / 2 + XERIAL_HEADER_LEN);
            out.extend_from_slice(&XERIAL_MAGIC);
            out.extend_from_slice(&1i32.to_be_bytes()); // version
            out.extend_from_slice(&1i32.to_be_bytes()); // minimum compatible version
            let mut enc = snap::raw::Encoder::new();
            for chunk in input.chunks(XERIAL_BLOCK) {
                let block = enc.compress_vec(chunk).map_err(std::io::Error::other)?;
                out.extend_from_slice(&(block.len() as i32).to_be_bytes());
                out.extend_from_slice(&block);
            }
            Ok(out)
        }
        Compression::Lz4 => {
            let info = lz4_flex::frame::FrameInfo::new()
                .block_size(lz4_flex::frame::BlockSize::Max64KB)
                .block_mode(lz4_flex::frame::BlockMode::Independent);
            let mut enc = lz4_flex::frame::FrameEncoder::with_frame_info(info, Vec::new());
            enc.write_all(input)?;
            enc.finish().map_err(std::io::Error::other)
        }
        Compression::Zstd => zstd::stream::encode_all(input, 3),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_codec_round_trips() {
        let data: Vec<u8> = (0..100_000u32)
            .flat_map(|i| (i % 251).to_be_bytes())
            .collect();
        for codec in [
            Compression::None,
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let packed = compress(codec, &data).unwrap();
            let mut out = Vec::new();
            decompress(codec, &packed, &mut out, 1 << 30).unwrap();
            assert_eq!(out, data, "{codec}");
        }
    }

    #[test]
    fn gzip_with_reserved_flag_bits_is_read_as_the_jdk_reads_it() {
        // java.util.zip.GZIPInputStream reads a member whose FLG sets the
        // reserved bits 5..7 (checked with JDK 17: "hello kafka" back).
        let mut packed = compress(Compression::Gzip, b"hello kafka").unwrap();
        packed[3] |= 0xe0;
        let mut out = Vec::new();
        decompress(Compression::Gzip, &packed, &mut out, 1 << 20).unwrap();
        assert_eq!(out, b"hello kafka");
    }

    #[test]
    fn raw_snappy_without_framing_is_read() {
        let raw = snap::raw::Encoder::new()
            .compress_vec(b"hello hello hello")
            .unwrap();
        let mut out = Vec::new();
        decompress(Compression::Snappy, &raw, &mut out, 1 << 20).unwrap();
        assert_eq!(out, b"hello hello hello");
    }

    #[test]
    fn limit_stops_a_bomb() {
        let zeros = vec![0u8; 10 << 20];
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let packed = compress(codec, &zeros).unwrap();
            let mut out = Vec::new();
            let err = decompress(codec, &packed, &mut out, 1 << 20).unwrap_err();
            assert_eq!(
                err,
                DecodeErrorKind::DecompressedTooLarge { limit: 1 << 20 },
                "{codec}"
            );
        }
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        let garbage = [0x1f, 0x8b, 8, 0, 0xde, 0xad, 0xbe, 0xef, 0, 0, 1, 2, 3];
        for codec in [
            Compression::Gzip,
            Compression::Snappy,
            Compression::Lz4,
            Compression::Zstd,
        ] {
            let mut out = Vec::new();
            assert!(
                decompress(codec, &garbage, &mut out, 1 << 20).is_err(),
                "{codec}"
            );
        }
    }

    /// A zstd frame of raw blocks, by hand (RFC 8878 §3.1.1): single-segment
    /// with the declared content size `fcs` (1 byte up to 255, 2 bytes up to
    /// 65,791), no checksum, the last block empty.
    #[allow(clippy::little_endian_bytes)] // zstd's fields are little-endian
    fn raw_frame(fcs: u64, blocks: &[&[u8]]) -> Vec<u8> {
        let mut f = vec![0x28, 0xb5, 0x2f, 0xfd];
        if fcs < 256 {
            f.extend([0x20, fcs as u8]);
        } else {
            f.push(0x60);
            f.extend(((fcs - 256) as u16).to_le_bytes());
        }
        for b in blocks {
            f.extend(&((b.len() as u32) << 3).to_le_bytes()[..3]);
            f.extend_from_slice(b);
        }
        f.extend([1, 0, 0]); // an empty raw block, the last
        f
    }

    fn zstd_of(frame: &[u8], capacity: usize) -> Result<Vec<u8>, DecodeErrorKind> {
        let mut out = Vec::with_capacity(capacity);
        decompress(Compression::Zstd, frame, &mut out, 1 << 20).map(|()| out)
    }

    #[test]
    fn zstd_declared_size_up_to_16_kib_is_checked_as_kafka_checks_it() {
        // 50 bytes where the frame declares 100. Kafka asks for 16 KiB of
        // output, so libzstd decodes the frame in one pass and refuses it.
        let data: Vec<u8> = (0..50u8).collect();
        let frame = raw_frame(100, &[&data]);
        for capacity in [0, 8, 64, 1 << 20] {
            assert!(
                matches!(
                    zstd_of(&frame, capacity),
                    Err(DecodeErrorKind::Decompress {
                        codec: Compression::Zstd,
                        ..
                    })
                ),
                "capacity {capacity}"
            );
        }
        // Why the window matters: streamed a few bytes at a time, libzstd
        // passes the empty last block without comparing sizes.
        let mut streamed = Vec::new();
        let mut reader = zstd::stream::read::Decoder::with_buffer(&frame[..]).unwrap();
        let mut small = [0u8; 4];
        loop {
            match reader.read(&mut small).unwrap() {
                0 => break,
                n => streamed.extend_from_slice(&small[..n]),
            }
        }
        assert_eq!(streamed, data);
        // The same frame declaring its true size decodes.
        assert_eq!(zstd_of(&raw_frame(50, &[&data]), 0).unwrap(), data);
    }

    #[test]
    fn zstd_declared_size_over_16_kib_is_streamed_as_kafka_streams_it() {
        // 17,000 bytes where the frame declares 20,000: more than Kafka's
        // 16 KiB window, so libzstd streams it and never compares.
        let data: Vec<u8> = (0..17_000u32).map(|i| (i % 253) as u8).collect();
        let frame = raw_frame(20_000, &[&data]);
        for capacity in [0, 1 << 20] {
            assert_eq!(zstd_of(&frame, capacity).unwrap(), data, "{capacity}");
        }
    }

    #[test]
    fn zstd_frames_ending_on_a_window_edge_and_concatenated() {
        for len in [0usize, 1, 16_383, 16_384, 16_385, 32_768, 200_000] {
            let data: Vec<u8> = (0..len as u32).map(|i| (i * 7 % 251) as u8).collect();
            let one = compress(Compression::Zstd, &data).unwrap();
            assert_eq!(zstd_of(&one, 0).unwrap(), data, "{len}");
            let two = [&one[..], &one[..]].concat();
            assert_eq!(zstd_of(&two, 0).unwrap(), [&data[..], &data[..]].concat());
            // Cut anywhere inside the frame, it ends early.
            if len > 0 {
                assert!(zstd_of(&one[..one.len() - 1], 0).is_err(), "{len}");
            }
        }
        // A 4 MiB frame (input beyond zstd-jni's 128 KiB chunks) under a
        // 1 MiB limit is refused; under 8 MiB it decodes.
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let big: Vec<u8> = (0..4u32 << 20)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                (x >> 56) as u8
            })
            .collect();
        let packed = compress(Compression::Zstd, &big).unwrap();
        assert!(packed.len() > 128 * 1024);
        assert_eq!(
            zstd_of(&packed, 0),
            Err(DecodeErrorKind::DecompressedTooLarge { limit: 1 << 20 })
        );
        let mut out = Vec::new();
        decompress(Compression::Zstd, &packed, &mut out, 8 << 20).unwrap();
        assert_eq!(out, big);
    }
}
