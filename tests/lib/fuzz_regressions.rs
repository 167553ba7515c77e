//! The fuzz targets' checks in `cargo test`: every saved crash input under
//! `tests/fuzz/regressions/<target>/` goes through the target that found it,
//! and every fixture file (`*.log`, `*.index`, `*.timeindex`, `*.txnindex`,
//! `*.snapshot`) through all four targets, so the harness itself runs even
//! when there are no regressions. The checks are `tests/fuzz/src/lib.rs`,
//! included here as a module: the same code the fuzzer runs.
//!
//! `tests/fuzz/regressions/<target>/open/` holds inputs of bugs not fixed
//! yet: each must still fail its target (the test says which do). Once a
//! fix makes one pass, this test fails until the file is moved up to
//! `regressions/<target>/`, where it must pass from then on.

use std::path::{Path, PathBuf};

use kaen_log::format::Entry;
use kaen_log::log::SegmentReader;

#[path = "../fuzz/src/lib.rs"]
mod targets;

type Target = fn(&[u8]);

const TARGETS: [(&str, Target); 5] = [
    ("batch", targets::batch),
    ("records", targets::records),
    ("offsets", targets::offsets),
    ("segment", targets::segment),
    ("partition", targets::partition),
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries {
        let path = e.unwrap().path();
        if path.is_file() {
            out.push(path);
        }
    }
    out.sort();
}

fn all_files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    files_under(dir, out);
    for e in std::fs::read_dir(dir).into_iter().flatten() {
        let path = e.unwrap().path();
        if path.is_dir() {
            all_files_under(&path, out);
        }
    }
}

#[test]
fn saved_crash_inputs_no_longer_crash() {
    let (mut fixed, mut open) = (0, 0);
    for (name, target) in TARGETS {
        let dir = repo().join("tests/fuzz/regressions").join(name);
        let mut files = Vec::new();
        files_under(&dir, &mut files);
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            eprintln!("{name}: {} ({} bytes)", f.display(), bytes.len());
            target(&bytes);
            fixed += 1;
        }
        let mut files = Vec::new();
        files_under(&dir.join("open"), &mut files);
        for f in files {
            let bytes = std::fs::read(&f).unwrap();
            let outcome = std::panic::catch_unwind(|| target(&bytes));
            assert!(
                outcome.is_err(),
                "{} no longer fails the {name} target: the bug is fixed? \
                 Move it up to tests/fuzz/regressions/{name}/",
                f.display()
            );
            eprintln!("{name}: {} still fails (open bug)", f.display());
            open += 1;
        }
    }
    eprintln!("{fixed} regression inputs pass, {open} open ones still fail");
}

#[test]
fn every_fixture_file_through_every_target() {
    let mut files = Vec::new();
    all_files_under(&repo().join("fixtures"), &mut files);
    let kinds = ["log", "index", "timeindex", "txnindex", "snapshot"];
    let files: Vec<_> = files
        .into_iter()
        .filter(|f| {
            f.extension()
                .and_then(|e| e.to_str())
                .is_some_and(|e| kinds.contains(&e))
        })
        .collect();
    let (mut logs, mut entries) = (0, 0);
    for f in &files {
        let bytes = std::fs::read(f).unwrap();
        for (name, target) in TARGETS {
            if name == "partition" {
                // Flags 0: the rest is the segment as it is.
                target(&[&[0u8][..], &bytes].concat());
            } else {
                target(&bytes);
            }
        }
        if f.extension().is_some_and(|e| e == "log") {
            logs += 1;
            // Each entry alone too, as the batch target's seeds are.
            let mut r = SegmentReader::open(f).unwrap();
            while let Some(e) = r.next_entry().unwrap() {
                let b = match e {
                    Entry::V2(b) => b.bytes(),
                    Entry::Legacy(l) => l.bytes(),
                };
                targets::batch(b);
                targets::segment(b);
                entries += 1;
            }
        }
    }
    assert!(
        logs >= 10 && entries >= 50,
        "{logs} logs, {entries} entries"
    );
    // A damaged fixture goes through the segment checks with its damage.
    let corrupt =
        std::fs::read(repo().join("fixtures/corrupt/orders-0/00000000000000000000.log")).unwrap();
    assert_ne!(targets::fix_crcs(&corrupt), corrupt);
}

/// The `offsets` target over every key and value of fixtures/kraft (the
/// seeds `seed.sh` gives it from that folder), so its schema-driven checks
/// run in `cargo test` too.
#[test]
fn offsets_target_on_the_kraft_fixture_records() {
    use kaen_log::format::{DecodeLimits, Entry};
    use kaen_log::log::walk::Step;
    use kaen_log::log::{Partition, Policy};
    let k = repo().join("fixtures/kraft");
    let mut n = 0;
    for dir in [
        "__cluster_metadata-0",
        "__consumer_offsets-0",
        "__share_group_state-0",
    ] {
        let p = Partition::open(&k.join(dir)).unwrap();
        let mut scratch = Vec::new();
        let mut walk = p.walk(Policy::VALID_ENTRIES);
        while let Some(step) = walk.next_step().unwrap() {
            let Step::Entry(w) = step else { continue };
            let Entry::V2(b) = w.entry else { continue };
            for r in b.records(&mut scratch, DecodeLimits::default()).unwrap() {
                let r = r.unwrap();
                for bytes in [r.key, r.value].into_iter().flatten() {
                    targets::offsets(bytes);
                    n += 1;
                }
            }
        }
    }
    assert!(n > 50, "{n}");
}
