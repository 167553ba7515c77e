//! The compression floor for `klog export`: what writing one segment's
//! record values zstd-compressed costs at least, with no Parquet around
//! them. The segment is read and its records decoded as the export reads
//! them ([`SegmentReader`], [`BatchView::records`]); the values are laid
//! out as Parquet's plain encoding lays out a binary column (a 4-byte
//! length, then the bytes) in row groups of the export's default size
//! (65536 rows), and each row group is compressed in pages of Parquet's
//! default page size (1 MiB) at the zstd level the export writes (1, the
//! `parquet` crate's default), one compressor context reused, as the
//! writer does. One thread, as the export of one partition.
//!
//! A Cargo example (`cargo build --release --example zstd_floor`), built
//! and timed by `tests/bench/export.sh`.
//!
//! Usage: zstd_floor FILE [ROWS_PER_ROW_GROUP]
//!
//! Prints `<values> values, <raw> bytes laid out, <compressed> bytes
//! compressed; decode <s> s, compress <s> s`; exits 1 on the first defect
//! of the segment.
//!
//! [`SegmentReader`]: kaen_log::log::SegmentReader
//! [`BatchView::records`]: kaen_log::format::batch::BatchView::records

use std::path::Path;
use std::process::ExitCode;
use std::time::{Duration, Instant};

use kaen_log::format::batch::DecodeLimits;
use kaen_log::format::Entry;
use kaen_log::log::SegmentReader;

/// Parquet's default data page size (`parquet::file::properties::DEFAULT_PAGE_SIZE`).
const PAGE_BYTES: usize = 1 << 20;
/// The zstd level of `klog export`'s pages (`ZstdLevel::default()`).
const LEVEL: i32 = 1;

#[derive(Default)]
struct Totals {
    values: u64,
    raw: u64,
    compressed: u64,
    decode: Duration,
    compress: Duration,
}

/// Compress one row group's laid-out values in pages of [`PAGE_BYTES`].
fn compress_row_group(
    z: &mut zstd::bulk::Compressor<'_>,
    group: &[u8],
    out: &mut Vec<u8>,
    t: &mut Totals,
) -> Result<(), String> {
    let start = Instant::now();
    for page in group.chunks(PAGE_BYTES) {
        out.clear();
        out.reserve(zstd::zstd_safe::compress_bound(page.len()));
        z.compress_to_buffer(page, out).map_err(|e| e.to_string())?;
        t.compressed += out.len() as u64;
    }
    t.compress += start.elapsed();
    t.raw += group.len() as u64;
    Ok(())
}

fn run(path: &Path, rows_per_group: usize) -> Result<Totals, String> {
    let mut reader = SegmentReader::open(path).map_err(|e| e.to_string())?;
    let limits = DecodeLimits::default();
    let mut z = zstd::bulk::Compressor::new(LEVEL).map_err(|e| e.to_string())?;
    let (mut scratch, mut group, mut out) = (Vec::new(), Vec::new(), Vec::new());
    let mut rows = 0;
    let mut t = Totals::default();
    let mut decoding = Instant::now();
    while let Some(entry) = reader.next_entry().map_err(|e| e.to_string())? {
        let Entry::V2(batch) = entry else {
            return Err("a legacy (magic 0/1) entry; this floor reads magic 2 only".into());
        };
        for record in batch
            .records(&mut scratch, limits)
            .map_err(|e| e.to_string())?
        {
            let r = record.map_err(|e| e.to_string())?;
            let Some(v) = r.value else { continue };
            // The length's byte order does not change what zstd does with it.
            group.extend_from_slice(&(v.len() as u32).to_be_bytes());
            group.extend_from_slice(v);
            t.values += 1;
            rows += 1;
            if rows == rows_per_group {
                t.decode += decoding.elapsed();
                compress_row_group(&mut z, &group, &mut out, &mut t)?;
                group.clear();
                rows = 0;
                decoding = Instant::now();
            }
        }
    }
    t.decode += decoding.elapsed();
    if let Some(e) = reader.tail().and_then(|tail| tail.error()) {
        return Err(e.to_string());
    }
    if !group.is_empty() {
        compress_row_group(&mut z, &group, &mut out, &mut t)?;
    }
    Ok(t)
}

fn main() -> ExitCode {
    let mut args = std::env::args_os().skip(1);
    let Some(path) = args.next() else {
        eprintln!("usage: zstd_floor FILE [ROWS_PER_ROW_GROUP]");
        return ExitCode::from(2);
    };
    let rows = args
        .next()
        .and_then(|s| s.to_str()?.parse().ok())
        .filter(|&n: &usize| n > 0)
        .unwrap_or(65536);
    match run(Path::new(&path), rows) {
        Ok(t) => {
            println!(
                "{} values, {} bytes laid out, {} bytes compressed; decode {:.3} s, compress {:.3} s",
                t.values,
                t.raw,
                t.compressed,
                t.decode.as_secs_f64(),
                t.compress.as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("zstd_floor: {}: {e}", path.to_string_lossy());
            ExitCode::FAILURE
        }
    }
}
