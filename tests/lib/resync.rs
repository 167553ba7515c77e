//! The search for the next valid batch after damage (`walk::resync_bounded`)
//! finds the same position whether the batch lies wholly inside the window
//! it reads (checked from memory) or runs past it (read again in chunks),
//! and passes over a plausible header whose CRC does not match.

use kaen_log::log::walk::{resync_bounded, Resync};

use crate::builder::{batch, record};

/// The window the search reads at a time.
const WINDOW: usize = 1 << 20;

fn found_at(bytes: &[u8], from: u64) -> Option<(u64, i64)> {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("00000000000000000000.log");
    std::fs::write(&log, bytes).unwrap();
    match resync_bounded(&log, from).unwrap() {
        Resync::Found(r) => Some((r.position, r.base_offset)),
        Resync::NotFound => None,
        Resync::GaveUp { at } => panic!("gave up at {at}"),
    }
}

#[test]
fn a_batch_inside_the_window_and_one_across_its_end_are_found_where_they_start() {
    let good = batch(40, 0, 1, &record(0, b"v"));
    let mut bad = batch(7, 0, 1, &record(0, b"w"));
    bad[20] ^= 0xff; // a byte of the stored CRC: the header stays plausible
    for at in [100, WINDOW - good.len(), WINDOW - 30, WINDOW + 5] {
        // Zero bytes, the bad batch just before `at`, the good one at it.
        let mut bytes = vec![0u8; at - bad.len()];
        bytes.extend(&bad);
        bytes.extend(&good);
        bytes.extend(vec![0u8; 300]);
        assert_eq!(found_at(&bytes, 1), Some((at as u64, 40)), "batch at {at}");
        // With the good one damaged too, nothing is found.
        let n = bytes.len();
        bytes[at + 20] ^= 0xff;
        assert_eq!(found_at(&bytes[..n], 1), None, "batch at {at}");
    }
}
