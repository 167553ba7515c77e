//! `verify-crc --repair --salvage`: on every damaged fixture and on damage
//! made here, the records that survive are the original records minus the
//! damaged batch's, every byte is kept (log + sidecars = original), the
//! offsets of the kept batches do not move, and a salvage that would leave
//! offsets that do not increase is refused.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kaen_log::format::{DecodeLimits, Entry};
use kaen_log::inspect::repair::{execute, plan, Action, Lost, RepairOptions};
use kaen_log::inspect::verify::{verify_path, Options};
use kaen_log::log::read::SegmentReader;
use kaen_log::log::Partition;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn salvage() -> RepairOptions {
    RepairOptions {
        salvage: true,
        ..RepairOptions::default()
    }
}

/// A copy of a partition folder of the fixtures in a temporary directory.
fn copy(rel: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let dst = tmp.path().join("orders-0");
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(repo().join("fixtures").join(rel)).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    (tmp, dst)
}

type Records = BTreeMap<i64, (Option<Vec<u8>>, Option<Vec<u8>>)>;

/// Every record of every CRC-valid batch of a partition folder (or of one
/// segment file), by offset.
fn records_of(logs: &[PathBuf]) -> Records {
    let mut out = BTreeMap::new();
    let mut scratch = Vec::new();
    for log in logs {
        let mut r = SegmentReader::open(log).unwrap();
        while let Some(e) = r.next_entry().unwrap() {
            let Entry::V2(b) = e else { panic!("legacy") };
            if !b.crc_valid() {
                continue;
            }
            for rec in b.records(&mut scratch, DecodeLimits::default()).unwrap() {
                let rec = rec.unwrap();
                out.insert(
                    rec.offset,
                    (rec.key.map(<[u8]>::to_vec), rec.value.map(<[u8]>::to_vec)),
                );
            }
        }
    }
    out
}

fn logs(dir: &Path) -> Vec<PathBuf> {
    Partition::open(dir)
        .unwrap()
        .segments
        .into_iter()
        .map(|s| s.log)
        .collect()
}

/// The offsets of the batch at `position` of `log` (as written, in the clean original).
fn batch_offsets(log: &Path, position: u64) -> Vec<i64> {
    let mut r = SegmentReader::open(log).unwrap();
    let mut scratch = Vec::new();
    while let Some(e) = r.next_entry().unwrap() {
        let Entry::V2(b) = e else { continue };
        if b.position == position {
            return b
                .records(&mut scratch, DecodeLimits::default())
                .unwrap()
                .map(|r| r.unwrap().offset)
                .collect();
        }
    }
    panic!("no batch at {position} in {}", log.display())
}

/// Put the original bytes of each segment back together from the salvaged
/// log and its `.cut-<from>-<to>` / `.cut-<from>` sidecars.
fn reassemble(dir: &Path, log_name: &str) -> Vec<u8> {
    let mut cuts: Vec<(u64, Vec<u8>)> = Vec::new();
    for e in std::fs::read_dir(dir).unwrap() {
        let name = e.unwrap().file_name().into_string().unwrap();
        if let Some(range) = name.strip_prefix(&format!("{log_name}.cut-")) {
            let from: u64 = range.split('-').next().unwrap().parse().unwrap();
            cuts.push((from, std::fs::read(dir.join(&name)).unwrap()));
        }
    }
    cuts.sort();
    let kept = std::fs::read(dir.join(log_name)).unwrap();
    let mut out = Vec::new();
    let mut k = 0usize;
    for (from, bytes) in cuts {
        let take = from as usize - out.len();
        out.extend_from_slice(&kept[k..k + take]);
        k += take;
        out.extend_from_slice(&bytes);
    }
    out.extend_from_slice(&kept[k..]);
    out
}

/// Salvage `dir`, check every rule, return the plan's lost offsets.
fn salvage_and_check(dir: &Path, original: &Records, damaged: &[i64]) -> Vec<Lost> {
    let before: BTreeMap<String, Vec<u8>> = logs(dir)
        .iter()
        .map(|l| (name(l), std::fs::read(l).unwrap()))
        .collect();
    let p = Partition::open(dir).unwrap();
    let plan = plan(&p, &salvage()).unwrap();
    assert!(plan.refused.is_empty(), "{:?}", plan.refused);
    let lost = plan.salvage.clone().expect("a salvage report").lost;
    execute(&plan, &salvage()).unwrap();
    // Every byte kept: each log plus its sidecars is the original.
    for (log, bytes) in &before {
        assert_eq!(
            &reassemble(dir, log),
            bytes,
            "{log}: log + sidecars = original"
        );
    }
    // The records that survive: the original ones minus the damaged batch's.
    let mut expected = original.clone();
    for o in damaged {
        expected.remove(o);
    }
    assert_eq!(records_of(&logs(dir)), expected);
    // Clean afterwards (indexes rebuilt), and nothing left to do.
    let report = verify_path(dir, &Options::default()).unwrap();
    assert!(
        report.ok() && report.findings.is_empty(),
        "{:?}",
        report.findings
    );
    let again = plan_of(dir);
    assert!(
        again.actions.is_empty() && again.refused.is_empty(),
        "{again:?}"
    );
    lost
}

fn plan_of(dir: &Path) -> kaen_log::inspect::repair::Plan {
    plan(&Partition::open(dir).unwrap(), &salvage()).unwrap()
}

fn name(p: &Path) -> String {
    p.file_name().unwrap().to_string_lossy().into_owned()
}

/// The clean original of the damaged fixtures (fixtures/README.md).
fn clean() -> (tempfile::TempDir, PathBuf, Records) {
    let (tmp, dir) = copy("data/orders-0");
    let recs = records_of(&logs(&dir));
    (tmp, dir, recs)
}

#[test]
fn corrupt_fixture_loses_only_the_damaged_batch() {
    // corrupt/orders-0: byte 1020 of the first segment inverted, inside the
    // batch at position 950 of data/orders-0.
    let (_c, clean_dir, original) = clean();
    let damaged = batch_offsets(&clean_dir.join("00000000000000000000.log"), 950);
    assert_eq!(
        damaged,
        (15..=19).collect::<Vec<_>>(),
        "batches of 5 (make.sh)"
    );
    let (_t, dir) = copy("corrupt/orders-0");
    let lost = salvage_and_check(&dir, &original, &damaged);
    assert_eq!(
        lost,
        [Lost {
            from: 15,
            to: Some(19)
        }]
    );
    // The later segment stays as it was.
    assert_eq!(
        std::fs::read(dir.join("00000000000000000090.log")).unwrap(),
        std::fs::read(clean_dir.join("00000000000000000090.log")).unwrap()
    );
}

#[test]
fn truncated_fixture_is_cut_like_a_torn_tail() {
    // truncated/orders-0: the last batch of the last segment cut 20 bytes in.
    let (_c, clean_dir, original) = clean();
    let last = clean_dir.join("00000000000000000090.log");
    let position = 2146;
    let damaged = batch_offsets(&last, position);
    let (_t, dir) = copy("truncated/orders-0");
    let p = Partition::open(&dir).unwrap();
    let plan = plan(&p, &salvage()).unwrap();
    assert!(
        matches!(
            plan.actions.first(),
            Some(Action::Truncate {
                at: 2146,
                len: 20,
                ..
            })
        ),
        "{plan:?}"
    );
    let lost = salvage_and_check(&dir, &original, &damaged);
    assert_eq!(
        lost,
        [Lost {
            from: damaged[0],
            to: None
        }]
    );
}

/// A copy of data/orders-0 with `patch` applied to its first segment.
fn patched(patch: impl Fn(&mut Vec<u8>)) -> (tempfile::TempDir, PathBuf) {
    let (tmp, dir) = copy("data/orders-0");
    let log = dir.join("00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    patch(&mut bytes);
    std::fs::write(&log, bytes).unwrap();
    (tmp, dir)
}

/// Positions and sizes of the batches of a log.
fn batches(log: &Path) -> Vec<(u64, u64)> {
    let mut r = SegmentReader::open(log).unwrap();
    let mut out = Vec::new();
    while let Some(e) = r.next_entry().unwrap() {
        out.push((e.position(), e.size()));
    }
    out
}

#[test]
fn a_broken_frame_is_cut_up_to_where_valid_batches_resume() {
    let (_c, clean_dir, original) = clean();
    let log = clean_dir.join("00000000000000000000.log");
    let b = batches(&log);
    // The 3rd batch's length smashed (bytes 8..12): the frame breaks there,
    // and valid batches resume at the 4th.
    let (at, _) = b[2];
    let damaged = batch_offsets(&log, at);
    let (_t, dir) = patched(|bytes| {
        bytes[at as usize + 8..at as usize + 12].copy_from_slice(&0x7fff_0000u32.to_be_bytes())
    });
    let p = Partition::open(&dir).unwrap();
    let plan = plan(&p, &salvage()).unwrap();
    let Some(Action::CutRanges { ranges, .. }) = plan.actions.first() else {
        panic!("{plan:?}")
    };
    assert_eq!((ranges[0].0, ranges[0].1), (at, b[3].0));
    assert!(name(&ranges[0].2).ends_with(&format!(".cut-{at}-{}", b[3].0)));
    let lost = salvage_and_check(&dir, &original, &damaged);
    assert_eq!(
        lost,
        [Lost {
            from: damaged[0],
            to: Some(*damaged.last().unwrap())
        }]
    );
}

#[test]
fn two_damaged_batches_in_one_segment() {
    let (_c, clean_dir, original) = clean();
    let log = clean_dir.join("00000000000000000000.log");
    let b = batches(&log);
    let (first, second) = (b[1].0, b[5].0);
    let mut damaged = batch_offsets(&log, first);
    damaged.extend(batch_offsets(&log, second));
    let (_t, dir) = patched(|bytes| {
        bytes[first as usize + 70] ^= 0xff;
        bytes[second as usize + 70] ^= 0xff;
    });
    let lost = salvage_and_check(&dir, &original, &damaged);
    assert_eq!(lost.len(), 2, "{lost:?}");
}

#[test]
fn refused_when_the_offsets_after_the_damage_would_not_increase() {
    // The 2nd batch damaged, and a copy of the 1st batch (CRC-valid,
    // offsets 0..4) written over the 3rd's place: kept after the cut, its
    // offsets would go back.
    let (_c, clean_dir, _) = clean();
    let log = clean_dir.join("00000000000000000000.log");
    let b = batches(&log);
    let (_t, dir) = patched(|bytes| {
        let first = bytes[..b[0].1 as usize].to_vec();
        let rest = bytes.split_off(b[2].0 as usize);
        bytes[b[1].0 as usize + 70] ^= 0xff;
        bytes.extend_from_slice(&first);
        bytes.extend_from_slice(&rest[b[2].1 as usize..]);
    });
    let before = std::fs::read(dir.join("00000000000000000000.log")).unwrap();
    let p = plan_of(&dir);
    assert!(p.actions.is_empty(), "{p:?}");
    assert_eq!(p.refused.len(), 1);
    assert!(
        p.refused[0].reason.contains("offsets that do not increase"),
        "{:?}",
        p.refused
    );
    execute(&p, &salvage()).unwrap();
    assert_eq!(
        std::fs::read(dir.join("00000000000000000000.log")).unwrap(),
        before
    );
}

#[test]
fn kafka_would_lose_everything_from_the_damage_on() {
    // What the report compares with: Kafka's recovery cuts at 950 and
    // deletes the later segment, losing 15 up to the log end (128).
    let (_t, dir) = copy("corrupt/orders-0");
    let s = plan_of(&dir).salvage.unwrap();
    assert_eq!(s.kafka_lost, Some((15, 128)));
    assert_eq!(s.kafka_deleted.len(), 1);
    assert_eq!(s.kafka_cut.as_ref().map(|c| c.1), Some(950));
}
