//! Exhaustive corruption sweeps over a small segment (three batches, the
//! last gzip-compressed): every single-bit flip of the whole file and every
//! truncation length, each run through `verify_segment`. Nothing may panic
//! or run long, every problem must lie inside the file, and detection is
//! counted per header field of each batch ("detected" = `verify_segment`
//! reports any problem). The table printed on stderr (`cargo test --test
//! lib sweeps -- --nocapture`) is the one in klog-reliability(7)
//! (src/cmd/generate/pages/reliability.7.md).
//!
//! What must hold, and why:
//! - a flip anywhere in `attributes..end` or in the `crc` field itself is
//!   a `crc_mismatch` at that batch: CRC-32C detects every single-bit error;
//! - `magic` and `batchLength` flips break the framing or move the CRC's
//!   range: always a problem at that batch;
//! - `baseOffset` is not CRC-covered; a flip is caught exactly when the
//!   offsets stop increasing, fall below the segment's base (0, from the
//!   file name) or overflow its 32-bit relative range. Raising the last
//!   batch's base offset by less than 2^31 is a legal gap (compaction makes
//!   gaps), so those flips are undetectable;
//! - `partitionLeaderEpoch` is not CRC-covered (it is rewritten by the
//!   leader on append, after the producer computed the CRC) and nothing in
//!   a segment constrains it (the leader-epoch-checkpoint is a separate
//!   file that klog does not compare with): flips are never detected;
//! - a truncation inside a batch is a `torn_tail` at that batch; a cut at
//!   a batch boundary leaves a shorter, valid log.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::time::{Duration, Instant};

use kaen_log::format::{encode_batch, BatchSpec, Compression, DecodeLimits, NewRecord};
use kaen_log::inspect::verify::{verify_segment, Options, Report};

/// (name, first byte, length) of each v2 header field; "records" is the rest.
const FIELDS: [(&str, usize, usize); 13] = [
    ("baseOffset", 0, 8),
    ("batchLength", 8, 4),
    ("partitionLeaderEpoch", 12, 4),
    ("magic", 16, 1),
    ("crc", 17, 4),
    ("attributes", 21, 2),
    ("lastOffsetDelta", 23, 4),
    ("baseTimestamp", 27, 8),
    ("maxTimestamp", 35, 8),
    ("producerId", 43, 8),
    ("producerEpoch", 51, 2),
    ("baseSequence", 53, 4),
    ("recordsCount", 57, 4),
];

/// The most one case may take (a debug build verifies this file in well
/// under a millisecond; the bound is there to fail loudly, not to be tight).
const CASE_BUDGET: Duration = Duration::from_secs(2);

fn field_of(i: usize) -> &'static str {
    FIELDS
        .iter()
        .find(|(_, at, len)| (*at..at + len).contains(&i))
        .map_or("records", |f| f.0)
}

fn records(n: usize, tag: &str) -> Vec<NewRecord> {
    (0..n)
        .map(|i| NewRecord {
            key: Some(format!("{tag}-{i}").into_bytes()),
            value: Some(format!("value {tag} {i}").into_bytes()),
            headers: vec![(b"trace".to_vec(), Some(vec![i as u8]))],
            timestamp: 1_700_000_000_000 + i as i64,
        })
        .collect()
}

struct Batch {
    pos: usize,
    size: usize,
    base: i64,
    last_offset_delta: i64,
    codec: Compression,
}

/// Batches of offsets 0..3, 3..5 and 5..9 (the last gzip), leader epoch 0.
fn segment() -> (Vec<u8>, Vec<Batch>) {
    let mut bytes = Vec::new();
    let mut batches = Vec::new();
    for (base, n, codec) in [
        (0, 3, Compression::None),
        (3, 2, Compression::None),
        (5, 4, Compression::Gzip),
    ] {
        let spec = BatchSpec {
            base_offset: base,
            partition_leader_epoch: 0,
            compression: codec,
            ..BatchSpec::default()
        };
        let b = encode_batch(&spec, &records(n, &format!("b{base}"))).unwrap();
        batches.push(Batch {
            pos: bytes.len(),
            size: b.len(),
            base,
            last_offset_delta: n as i64 - 1,
            codec,
        });
        bytes.extend_from_slice(&b);
    }
    (bytes, batches)
}

/// Verify `bytes` as segment 0 of a partition, bounded in time and memory,
/// and check that every problem lies inside the file.
fn verify(path: &Path, bytes: &[u8], what: &str) -> Report {
    std::fs::write(path, bytes).unwrap();
    let opts = Options {
        limits: DecodeLimits {
            max_decompressed: 1 << 20,
        },
        ..Options::default()
    };
    let started = Instant::now();
    let mut report = Report::default();
    verify_segment(path, Some(0), &mut None, &opts, &mut report).unwrap();
    let took = started.elapsed();
    assert!(took < CASE_BUDGET, "{what}: took {took:?}");
    let len = bytes.len() as u64;
    assert_eq!(report.checked.bytes, len, "{what}: every byte counted once");
    for p in &report.findings {
        assert!(
            p.position < len && p.position <= p.byte && p.byte <= len,
            "{what}: problem outside the file ({len} bytes): {p:?}"
        );
    }
    report
}

#[derive(Default)]
struct Tally {
    detected: u32,
    total: u32,
    kinds: BTreeSet<&'static str>,
}

#[test]
fn every_bit_flip_and_every_truncation() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.log");
    let (clean, batches) = segment();
    assert!(verify(&path, &clean, "clean").ok());
    let started = Instant::now();

    // (field, batch index) -> tally
    let mut tally: BTreeMap<(&str, usize), Tally> = BTreeMap::new();
    let mut bytes = clean.clone();
    for (bi, b) in batches.iter().enumerate() {
        for i in 0..b.size {
            let field = field_of(i);
            for bit in 0..8 {
                bytes[b.pos + i] ^= 1 << bit;
                let what = format!("bit {bit} of byte {i} ({field}) of batch {bi} @{}", b.pos);
                let r = verify(&path, &bytes, &what);
                bytes[b.pos + i] ^= 1 << bit;
                let at_batch: Vec<&str> = r
                    .findings
                    .iter()
                    .filter(|p| p.position == b.pos as u64)
                    .map(|p| p.kind.name())
                    .collect();
                let t = tally.entry((field, bi)).or_default();
                t.total += 1;
                if !r.ok() {
                    t.detected += 1;
                    t.kinds.extend(r.findings.iter().map(|p| p.kind.name()));
                }
                let ctx = format!("{what}: {:?}", r.findings);
                match field {
                    "partitionLeaderEpoch" => assert!(r.ok(), "{ctx}"),
                    "magic" | "batchLength" => assert!(!at_batch.is_empty(), "{ctx}"),
                    "baseOffset" => {
                        let base = b.base ^ (1i64 << (8 * (7 - i) + bit));
                        let last = base.wrapping_add(b.last_offset_delta);
                        let prev_last = bi
                            .checked_sub(1)
                            .map(|p| batches[p].base + batches[p].last_offset_delta);
                        let next_base = batches.get(bi + 1).map(|n| n.base);
                        let expected = base < 0
                            || last > i64::from(i32::MAX)
                            || prev_last.is_some_and(|p| base <= p)
                            || next_base.is_some_and(|n| n <= last);
                        assert_eq!(!r.ok(), expected, "{ctx}");
                    }
                    // crc and everything it covers
                    _ => assert!(at_batch.contains(&"crc_mismatch"), "{ctx}"),
                }
            }
        }
    }
    assert_eq!(bytes, clean);

    // Every truncation length, 0 (an empty file) to the whole file.
    let boundaries: Vec<usize> = batches.iter().map(|b| b.pos).collect();
    let (mut cuts, mut cuts_detected) = (0, 0);
    for cut in 0..=clean.len() {
        let r = verify(&path, &clean[..cut], &format!("cut at {cut}"));
        if cut == clean.len() || boundaries.contains(&cut) {
            assert!(
                r.ok(),
                "a cut at a batch boundary ({cut}): {:?}",
                r.findings
            );
            continue;
        }
        cuts += 1;
        let b = batches.iter().rev().find(|b| b.pos < cut).unwrap();
        assert_eq!(r.findings.len(), 1, "cut at {cut}: {:?}", r.findings);
        let p = &r.findings[0];
        assert_eq!(
            (p.position, p.kind.name()),
            (b.pos as u64, "torn_tail"),
            "cut at {cut}"
        );
        cuts_detected += 1;
    }
    let took = started.elapsed();

    // The table for klog-reliability(7).
    eprintln!(
        "\nsingle-bit flips of a {}-byte segment (batches of {} bytes plain, {} plain, {} {:?}) \
         and every truncation, in {took:.1?}:\n",
        clean.len(),
        batches[0].size,
        batches[1].size,
        batches[2].size,
        batches[2].codec
    );
    eprintln!("| field | batch 0 | batch 1 | batch 2 (gzip) | total | reported as |");
    eprintln!("|---|---|---|---|---|---|");
    let mut names: Vec<&str> = FIELDS.iter().map(|f| f.0).collect();
    names.push("records");
    let (mut all_detected, mut all_total) = (0, 0);
    for name in names {
        let mut row = format!("| {name} |");
        let (mut d, mut t) = (0, 0);
        let mut kinds = BTreeSet::new();
        for bi in 0..batches.len() {
            let x = &tally[&(name, bi)];
            row.push_str(&format!(" {}/{} |", x.detected, x.total));
            d += x.detected;
            t += x.total;
            kinds.extend(x.kinds.iter().copied());
        }
        all_detected += d;
        all_total += t;
        let kinds: Vec<_> = kinds.into_iter().collect();
        let how = if kinds.is_empty() {
            "-".to_string()
        } else {
            kinds.join(", ")
        };
        eprintln!(
            "{row} {d}/{t} ({:.0}%) | {how} |",
            100.0 * f64::from(d) / f64::from(t)
        );
    }
    eprintln!(
        "| all bits | | | | {all_detected}/{all_total} ({:.1}%) | |",
        100.0 * f64::from(all_detected) / f64::from(all_total)
    );
    eprintln!(
        "| truncations inside a batch | | | | {cuts_detected}/{cuts} | torn_tail at the cut batch |"
    );
    eprintln!(
        "| truncations at a batch boundary (0, {}, {}, {}) | | | | 0/{} | a shorter valid log |",
        boundaries[1],
        boundaries[2],
        clean.len(),
        boundaries.len() + 1
    );

    // The rates that must hold (asserted per case above; restated here).
    let rate = |name: &str| {
        (0..batches.len()).fold((0, 0), |(d, t), bi| {
            let x = &tally[&(name, bi)];
            (d + x.detected, t + x.total)
        })
    };
    for name in [
        "batchLength",
        "magic",
        "crc",
        "attributes",
        "lastOffsetDelta",
        "baseTimestamp",
        "maxTimestamp",
        "producerId",
        "producerEpoch",
        "baseSequence",
        "recordsCount",
        "records",
    ] {
        let (d, t) = rate(name);
        assert_eq!(d, t, "{name}: every flip must be detected");
    }
    assert_eq!(rate("partitionLeaderEpoch").0, 0);
    // baseOffset: every flip of the first two batches; of the last, the
    // flips that lower it or push it past the 32-bit relative range.
    assert_eq!(tally[&("baseOffset", 0)].detected, 64);
    assert_eq!(tally[&("baseOffset", 1)].detected, 64);
    assert!(tally[&("baseOffset", 2)].detected < 64);
    assert_eq!(cuts_detected, cuts);
    assert!(took < Duration::from_secs(30), "the sweep took {took:?}");
}
