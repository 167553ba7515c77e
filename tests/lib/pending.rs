//! lag's pending-record count from batch headers agrees exactly with
//! counting every record, on every partition of the fixtures, for every
//! range of offsets.

use kaen_log::format::DecodeLimits;
use kaen_log::inspect::consumer_lag::{data_records_between, records_between_slowly};
use kaen_log::log::DataDir;

#[test]
fn the_header_count_equals_the_record_count_for_every_range() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut compared = 0;
    for dir in ["data", "groups", "kafka", "txn", "broker"] {
        let d = DataDir::open(&root.join(dir)).unwrap();
        for p in d.live() {
            let end = p.log_end_offset().unwrap();
            let start = p.log_start_offset(None);
            for from in start..=end {
                for to in from..=end + 1 {
                    let limits = DecodeLimits::default();
                    assert_eq!(
                        data_records_between(p, from, to, limits, None).unwrap(),
                        records_between_slowly(p, from, to, limits, None).unwrap(),
                        "{}: [{from}, {to})",
                        p.name()
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 1000, "{compared} ranges");
}

/// Batches of many sizes, small ones (read several to a window) between
/// large ones (read a header at a time), edges everywhere across the
/// header reader's windows: the headers it gives are the entries the
/// segment reader frames, and the count from them is the records'.
#[test]
fn headers_read_in_windows_are_the_entries_framed_and_counted() {
    use crate::builder::{batch, record};
    use kaen_log::format::Entry;
    use kaen_log::log::{Partition, SegmentReader};

    let mut rng = 0x9e37_79b9_7f4a_7c15u64;
    let mut next = move |n: u64| {
        rng ^= rng << 13;
        rng ^= rng >> 7;
        rng ^= rng << 17;
        rng % n
    };
    let mut log = Vec::new();
    let mut offset = 0i64;
    for _ in 0..600 {
        // Mostly small batches, a large one now and then.
        let records = if next(8) == 0 {
            40 + next(200)
        } else {
            1 + next(6)
        };
        let value_len = next(180) as usize;
        let body: Vec<u8> = (0..records)
            .flat_map(|d| record(d as i64, &vec![b'v'; value_len]))
            .collect();
        log.extend(batch(offset, records as i32 - 1, records as i32, &body));
        offset += records as i64;
    }
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("t-0");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.join("00000000000000000000.log");
    std::fs::write(&path, &log).unwrap();
    assert!(log.len() > 20 * 16 * 1024, "{} bytes", log.len());

    let mut framed = Vec::new();
    let mut reader = SegmentReader::open(&path).unwrap();
    while let Some(e) = reader.next_entry().unwrap() {
        let Entry::V2(b) = e else {
            panic!("a v2 batch")
        };
        framed.push((b.position, b.bytes().len() as u64, b.header.base_offset));
    }
    let p = Partition::open(&folder).unwrap();
    let mut walked = Vec::new();
    let mut headers = p.headers_from(0);
    while let Some(h) = headers.next_header().unwrap() {
        walked.push((h.position, h.size, h.batch.unwrap().base_offset));
    }
    assert_eq!(walked, framed);
    let limits = DecodeLimits::default();
    for _ in 0..200 {
        let from = next(offset as u64 + 1) as i64;
        let to = from + next((offset - from) as u64 + 2) as i64;
        assert_eq!(
            data_records_between(&p, from, to, limits, None).unwrap(),
            records_between_slowly(&p, from, to, limits, None).unwrap(),
            "[{from}, {to})"
        );
    }
}
