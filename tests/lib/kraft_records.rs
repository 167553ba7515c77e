//! Hostile input for the schema-driven decoders: every record value and key
//! of fixtures/kraft (metadata records, KRaft control records, coordinator
//! and share coordinator records), cut at every length and with every byte
//! replaced by 0x00, 0x7f, 0x80 and 0xff, must decode or fail with an error:
//! never panic, never take long, never report a position outside the input.

use std::time::{Duration, Instant};

use kaen_log::format::{DecodeLimits, Entry};
use kaen_log::log::walk::Step;
use kaen_log::log::{Partition, Policy};
use kaen_log::metadata::records::{decode_control_value, decode_metadata};
use kaen_log::offsets::records::{decode, GROUP_RECORDS, SHARE_RECORDS};

fn repo() -> std::path::PathBuf {
    std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// (is control, key, value) of a record.
type Rec = (bool, Option<Vec<u8>>, Option<Vec<u8>>);

/// Every record in a partition folder or file.
fn records(path: &std::path::Path) -> Vec<Rec> {
    let p = if path.is_dir() {
        Partition::open(path).unwrap()
    } else {
        Partition::single_file(path, 0)
    };
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let mut walk = p.walk(Policy::VALID_ENTRIES);
    while let Some(step) = walk.next_step().unwrap() {
        let Step::Entry(w) = step else { continue };
        let Entry::V2(b) = w.entry else { continue };
        for r in b.records(&mut scratch, DecodeLimits::default()).unwrap() {
            let r = r.unwrap();
            out.push((
                b.header.is_control(),
                r.key.map(<[u8]>::to_vec),
                r.value.map(<[u8]>::to_vec),
            ));
        }
    }
    out
}

fn variants(bytes: &[u8]) -> Vec<Vec<u8>> {
    let mut out: Vec<Vec<u8>> = (0..bytes.len()).map(|n| bytes[..n].to_vec()).collect();
    for i in 0..bytes.len() {
        for b in [0x00, 0x7f, 0x80, 0xff] {
            let mut v = bytes.to_vec();
            v[i] = b;
            out.push(v);
        }
    }
    out
}

#[test]
fn metadata_and_control_values_never_panic() {
    let k = repo().join("fixtures/kraft");
    let mut recs = records(&k.join("__cluster_metadata-0"));
    recs.extend(records(&k.join(
        "__cluster_metadata-0/00000000000000000019-0000000001.checkpoint",
    )));
    assert!(recs.len() > 40);
    let start = Instant::now();
    let mut decoded = 0;
    for (control, key, value) in recs {
        let value = value.unwrap();
        for v in variants(&value) {
            if control {
                let t = i16::from_be_bytes([key.as_ref().unwrap()[2], key.as_ref().unwrap()[3]]);
                let _ = decode_control_value(t, Some(&v), 1000);
            } else {
                let r = decode_metadata(&v, 1000);
                if r.error.is_none() {
                    decoded += 1;
                }
                // Errors are positioned inside the input.
                if let Some(e) = r.error {
                    if let Some(at) = e
                        .strip_prefix("byte ")
                        .and_then(|s| s.split(':').next())
                        .and_then(|s| s.parse::<u64>().ok())
                    {
                        assert!(at <= 1000 + v.len() as u64, "{e}");
                    }
                }
            }
        }
    }
    assert!(decoded > 0);
    assert!(start.elapsed() < Duration::from_secs(60));
}

#[test]
fn coordinator_keys_and_values_never_panic() {
    let k = repo().join("fixtures/kraft");
    for (dir, table) in [
        ("__consumer_offsets-0", GROUP_RECORDS),
        ("__share_group_state-0", SHARE_RECORDS),
    ] {
        for (_, key, value) in records(&k.join(dir)) {
            let key = key.unwrap();
            for kv in variants(&key) {
                let _ = decode(table, &kv, value.as_deref(), 0);
            }
            if let Some(value) = value {
                for vv in variants(&value) {
                    let _ = decode(table, &key, Some(&vv), 0);
                }
            }
        }
    }
}

/// The bytes of every v2 batch in a partition folder or file.
fn batches(path: &std::path::Path) -> Vec<Vec<u8>> {
    let p = if path.is_dir() {
        Partition::open(path).unwrap()
    } else {
        Partition::single_file(path, 0)
    };
    let mut out = Vec::new();
    let mut walk = p.walk(Policy::VALID_ENTRIES);
    while let Some(step) = walk.next_step().unwrap() {
        if let Step::Entry(w) = step {
            if let Entry::V2(b) = w.entry {
                out.push(b.bytes().to_vec());
            }
        }
    }
    out
}

#[test]
fn layout_of_damaged_internal_records_never_panics() {
    use kaen_log::format::BatchView;
    use kaen_log::inspect::layout::{batch_layout, Topic};
    let k = repo().join("fixtures/kraft");
    let start = Instant::now();
    for (path, topic) in [
        ("__cluster_metadata-0", Topic::Metadata),
        (
            "__cluster_metadata-0/00000000000000000019-0000000001.checkpoint",
            Topic::Metadata,
        ),
        ("__consumer_offsets-0", Topic::Offsets),
        ("__share_group_state-0", Topic::ShareGroupState),
    ] {
        for bytes in batches(&k.join(path)) {
            let len = bytes.len() as u64;
            for v in variants(&bytes) {
                let Ok(b) = BatchView::new(&v, 100) else {
                    continue;
                };
                // Every field lies inside the batch.
                let err = batch_layout(&b, topic, DecodeLimits::default(), &mut |f| {
                    if !f.decompressed {
                        assert!(f.position + f.bytes.len() as u64 <= 100 + len, "{f:?}");
                    }
                });
                if let Some(e) = err {
                    assert!(e.offset <= 100 + len, "{e}");
                }
            }
        }
    }
    assert!(start.elapsed() < Duration::from_secs(120));
}
