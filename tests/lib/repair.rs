//! Repair and recovery: nothing is lost, indexes rebuild to what the append
//! path wrote, and the plan matches what a broker's recovery would do.

use std::path::{Path, PathBuf};

use kaen_log::inspect::recovery::{check_indexes, first_damage, preview, rebuild_indexes, resync};
use kaen_log::inspect::repair::{execute, plan, Action, RepairOptions};
use kaen_log::inspect::verify::{verify_path, Options};
use kaen_log::log::Partition;

fn fixture_copy(name: &str) -> (tempfile::TempDir, PathBuf) {
    let tmp = tempfile::tempdir().unwrap();
    let src = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures")
        .join(name);
    let dst = tmp.path().join("orders-0");
    std::fs::create_dir_all(&dst).unwrap();
    for e in std::fs::read_dir(src).unwrap() {
        let e = e.unwrap();
        std::fs::copy(e.path(), dst.join(e.file_name())).unwrap();
    }
    (tmp, dst)
}

fn seg(dir: &Path, base: i64, ext: &str) -> PathBuf {
    dir.join(format!("{base:020}.{ext}"))
}

#[test]
fn torn_tail_is_cut_into_a_sidecar_and_nothing_is_lost() {
    let (_tmp, dir) = fixture_copy("truncated/orders-0");
    let log = seg(&dir, 90, "log");
    let original = std::fs::read(&log).unwrap();
    let p = Partition::open(&dir).unwrap();
    let plan = plan(&p, &RepairOptions::default()).unwrap();
    assert!(plan.refused.is_empty());
    let Some(Action::Truncate {
        at, len, sidecar, ..
    }) = plan.actions.first()
    else {
        panic!("{plan:?}")
    };
    assert_eq!((*at, *len), (2146, 20));
    let written = execute(&plan, &RepairOptions::default()).unwrap();
    // The cut, then the time index the rebuild replaced: the segment was
    // never closed, and the rebuild adds its closing entry (LogSegment.recover).
    assert_eq!(written, [sidecar.clone(), seg(&dir, 90, "timeindex.old")]);
    let (kept, cut) = (
        std::fs::read(&log).unwrap(),
        std::fs::read(sidecar).unwrap(),
    );
    assert_eq!(
        [kept, cut].concat(),
        original,
        "the log plus its sidecar are the original bytes"
    );
    assert!(verify_path(&dir, &Options::default()).unwrap().ok());
    // A second repair has nothing to do.
    assert!(plan_of(&dir).actions.is_empty());
}

fn plan_of(dir: &Path) -> kaen_log::inspect::repair::Plan {
    plan(&Partition::open(dir).unwrap(), &RepairOptions::default()).unwrap()
}

#[test]
fn damage_in_a_segment_that_is_not_the_last_needs_force() {
    let (_tmp, dir) = fixture_copy("corrupt/orders-0");
    let refused = plan_of(&dir);
    assert!(refused.actions.is_empty());
    assert_eq!(refused.refused.len(), 1);
    assert_eq!(refused.refused[0].position, 950);
    assert!(
        refused.refused[0]
            .reason
            .contains("valid batch resumes at position"),
        "{:?}",
        refused.refused
    );
    let before: Vec<u8> = [
        std::fs::read(seg(&dir, 0, "log")).unwrap(),
        std::fs::read(seg(&dir, 90, "log")).unwrap(),
    ]
    .concat();
    let opts = RepairOptions {
        force_truncate: true,
        ..RepairOptions::default()
    };
    let forced = plan(&Partition::open(&dir).unwrap(), &opts).unwrap();
    let written = execute(&forced, &opts).unwrap();
    assert!(
        written
            .iter()
            .any(|p| p.ends_with("00000000000000000000.log.cut-950")),
        "{written:?}"
    );
    assert!(
        written
            .iter()
            .any(|p| p.ends_with("00000000000000000090.log.cut-0")),
        "{written:?}"
    );
    assert!(
        !seg(&dir, 90, "log").exists(),
        "the later segment was moved aside"
    );
    let after: Vec<u8> = [
        std::fs::read(seg(&dir, 0, "log")).unwrap(),
        std::fs::read(dir.join("00000000000000000000.log.cut-950")).unwrap(),
        std::fs::read(dir.join("00000000000000000090.log.cut-0")).unwrap(),
    ]
    .concat();
    assert_eq!(after, before, "every byte is still on disk");
    let r = verify_path(&dir, &Options::default()).unwrap();
    assert!(r.ok(), "{:?}", r.findings);
}

#[test]
fn rebuilt_indexes_equal_what_the_append_path_wrote() {
    // Segment 0 of orders-0 was rolled, so it has its final time-index entry.
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/data/orders-0");
    let log = seg(&dir, 0, "log");
    let len = std::fs::metadata(&log).unwrap().len();
    let (index, timeindex) = rebuild_indexes(&log, 0, len, 4096).unwrap();
    assert!(!index.is_empty());
    assert_eq!(index, std::fs::read(seg(&dir, 0, "index")).unwrap());
    assert_eq!(timeindex, std::fs::read(seg(&dir, 0, "timeindex")).unwrap());
}

#[test]
fn broken_and_missing_indexes_are_found_and_rebuilt() {
    let (_tmp, dir) = fixture_copy("data/orders-0");
    let original = std::fs::read(seg(&dir, 0, "index")).unwrap();
    // Preallocated zero slots alone: reported as such, and rebuilt away.
    let mut padded = original.clone();
    padded.extend_from_slice(&[0; 80]);
    std::fs::write(seg(&dir, 0, "index"), &padded).unwrap();
    let segs = Partition::open(&dir).unwrap().segments;
    let kinds: Vec<_> = check_indexes(&segs[0], false)
        .unwrap()
        .iter()
        .map(|p| p.kind)
        .collect();
    assert_eq!(kinds, ["index_trailing_zeros"]);
    assert_eq!(plan_of(&dir).actions.len(), 1);
    // An entry pointing inside a batch.
    let mut bad = original.clone();
    bad[7] ^= 0x01;
    std::fs::write(seg(&dir, 0, "index"), &bad).unwrap();
    let problems = check_indexes(&segs[0], false).unwrap();
    assert_eq!(problems[0].kind, "index_target", "{problems:?}");
    // A missing time index.
    std::fs::remove_file(seg(&dir, 90, "timeindex")).unwrap();
    let p = plan_of(&dir);
    assert_eq!(p.actions.len(), 2, "{p:?}");
    let written = execute(&p, &RepairOptions::default()).unwrap();
    assert!(written
        .iter()
        .any(|w| w.ends_with("00000000000000000000.index.old")));
    assert_eq!(std::fs::read(seg(&dir, 0, "index")).unwrap(), original);
    assert!(seg(&dir, 90, "timeindex").exists());
    assert!(plan_of(&dir).actions.is_empty());
}

#[test]
fn recovery_preview_says_what_a_broker_would_cut() {
    let (_tmp, dir) = fixture_copy("corrupt/orders-0");
    let p = Partition::open(&dir).unwrap();
    let pv = preview(&p, 0).unwrap();
    let (segment, damage) = pv.truncate.unwrap();
    assert_eq!((segment.base_offset, damage.position), (0, 950));
    assert_eq!(
        pv.deleted.iter().map(|s| s.base_offset).collect::<Vec<_>>(),
        [90]
    );
    assert_eq!(pv.lost_offsets, Some((15, 128)));
    // From a recovery point in the last segment, the damage in segment 0 is not looked at.
    assert!(preview(&p, 100).unwrap().truncate.is_none());
    assert!(first_damage(&p.segments[1]).unwrap().is_none());
    let r = resync(&seg(&dir, 0, "log"), 951).unwrap().unwrap();
    assert_eq!(r.base_offset, 20, "the batch after the damaged one");
}
