//! Offsets by timestamp (Kafka's ListOffsets rule) on the broker fixture,
//! against the timestamps `fixtures/make_broker.py` stamps on `orders-0`.

use kaen_log::format::DecodeLimits;
use kaen_log::log::Partition;

const T: i64 = 1_700_000_000_000;

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (offset, timestamp) of every record of broker/orders-0, from its
/// definition in make_broker.py: a backfill batch of two records two days
/// before T (offsets 0, 1), then 20 requests of one batch of two records,
/// request i stamped T + 1000·i and T + 1000·i + 1 (offsets 2 + 2i, 3 + 2i).
fn records() -> Vec<(i64, i64)> {
    let old = T - 2 * 86_400_000;
    let mut out = vec![(0, old), (1, old + 1)];
    for i in 0..20 {
        for j in 0..2 {
            out.push((2 + 2 * i + j, T + 1000 * i + j));
        }
    }
    out
}

#[test]
fn the_first_record_at_or_after_the_time() {
    let p = Partition::open(&repo().join("fixtures/broker/orders-0")).unwrap();
    assert_eq!(p.segments.len(), 3, "the fixture has three segments");
    let recs = records();
    let mut targets: Vec<i64> = recs
        .iter()
        .flat_map(|&(_, ts)| [ts - 1, ts, ts + 1])
        .collect();
    targets.extend([i64::MIN, 0, T - 1, T + 500, T + 19_002, i64::MAX]);
    for start in [0, 1, 5, 30] {
        for &t in &targets {
            // Timestamps rise with offsets here, so the rule's answer is the
            // first record (by offset) stamped at or after t, at or above start.
            let expected = recs
                .iter()
                .find(|&&(o, ts)| ts >= t && o >= start)
                .map(|&(o, ts)| (o, ts));
            let got = p
                .offset_for_timestamp(t, start, DecodeLimits::default())
                .unwrap()
                .map(|f| (f.offset, f.timestamp));
            assert_eq!(got, expected, "target {t}, start {start}");
        }
    }
}

#[test]
fn segment_largest_timestamps() {
    let p = Partition::open(&repo().join("fixtures/broker/orders-0")).unwrap();
    let recs = records();
    for (i, seg) in p.segments.iter().enumerate() {
        let next = p.segments.get(i + 1).map_or(i64::MAX, |s| s.base_offset);
        let expected = recs
            .iter()
            .filter(|&&(o, _)| o >= seg.base_offset && o < next)
            .map(|&(_, ts)| ts)
            .max();
        assert_eq!(p.segment_max_timestamp(i).unwrap(), expected, "segment {i}");
    }
}
