//! Full decode of one segment with kaen_log, the counterpart of
//! `kafka_protocol_decode.rs`: [`SegmentReader`] frames the batches,
//! [`BatchView::check_crc`] checks each one's CRC-32C (kafka-protocol's
//! decoder always does), and [`BatchView::records`] decodes every record
//! (decompressing when the batch is compressed). Each record's key and
//! value lengths are summed so nothing can be optimised away.
//!
//! A Cargo example (`cargo build --release --example klog_decode`), built
//! and timed by `tests/bench/run.sh`.
//!
//! Usage: klog_decode FILE [--no-crc]
//!
//! Prints `<records> records in <batches> batches (<key bytes> key bytes,
//! <value bytes> value bytes)`; exits 1 on the first defect (a CRC
//! mismatch, a record that does not decode, a torn or corrupt tail, a
//! legacy magic 0/1 entry).
//!
//! [`SegmentReader`]: kaen_log::log::SegmentReader
//! [`BatchView::check_crc`]: kaen_log::format::batch::BatchView::check_crc
//! [`BatchView::records`]: kaen_log::format::batch::BatchView::records

use std::path::PathBuf;
use std::process::ExitCode;

use kaen_log::format::batch::DecodeLimits;
use kaen_log::format::Entry;
use kaen_log::log::SegmentReader;

#[derive(Default)]
struct Totals {
    batches: u64,
    records: u64,
    key_bytes: u64,
    value_bytes: u64,
}

fn decode(path: &std::path::Path, check_crc: bool) -> Result<Totals, String> {
    let mut reader = SegmentReader::open(path).map_err(|e| e.to_string())?;
    let limits = DecodeLimits::default();
    let mut scratch = Vec::new();
    let mut t = Totals::default();
    while let Some(entry) = reader.next_entry().map_err(|e| e.to_string())? {
        let batch = match entry {
            Entry::V2(b) => b,
            Entry::Legacy(l) => {
                return Err(format!(
                    "position {}: a legacy (magic 0/1) entry; this benchmark decodes magic 2 only",
                    l.position
                ))
            }
        };
        if check_crc {
            batch.check_crc().map_err(|e| e.to_string())?;
        }
        t.batches += 1;
        for record in batch
            .records(&mut scratch, limits)
            .map_err(|e| e.to_string())?
        {
            let r = record.map_err(|e| e.to_string())?;
            t.records += 1;
            t.key_bytes += r.key.map_or(0, |k| k.len() as u64);
            t.value_bytes += r.value.map_or(0, |v| v.len() as u64);
        }
    }
    if let Some(e) = reader.tail().and_then(|tail| tail.error()) {
        return Err(e.to_string());
    }
    Ok(t)
}

fn main() -> ExitCode {
    let mut path = None;
    let mut check_crc = true;
    for arg in std::env::args_os().skip(1) {
        if arg == "--no-crc" {
            check_crc = false;
        } else if path.is_none() {
            path = Some(PathBuf::from(arg));
        } else {
            path = None;
            break;
        }
    }
    let Some(path) = path else {
        eprintln!("usage: klog_decode FILE [--no-crc]");
        return ExitCode::from(2);
    };
    match decode(&path, check_crc) {
        Ok(t) => {
            println!(
                "{} records in {} batches ({} key bytes, {} value bytes)",
                t.records, t.batches, t.key_bytes, t.value_bytes
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("klog_decode: {}: {e}", path.display());
            ExitCode::FAILURE
        }
    }
}
