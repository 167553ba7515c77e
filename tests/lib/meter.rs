//! The bytes a progress display shows come from the walks it is handed to:
//! each entry passed is counted once, through the options of the library
//! call that walks (nothing process-wide). On a healthy directory every
//! byte of every `.log` file is an entry, so the count is the files' sizes.

use std::path::{Path, PathBuf};

use kaen_log::inspect::{log_stats, verify};
use kaen_log::log::walk::Meter;
use kaen_log::log::Partition;

fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/data")
}

/// The sizes of the `.log` files under `dir`, summed.
fn log_bytes(dir: &Path) -> u64 {
    let mut total = 0;
    for part in std::fs::read_dir(dir).unwrap() {
        let part = part.unwrap().path();
        if !part.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(&part).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|x| x == "log") {
                total += std::fs::metadata(&f).unwrap().len();
            }
        }
    }
    total
}

#[test]
fn verification_counts_every_byte_of_a_healthy_directory_once() {
    let meter = Meter::for_process();
    let opts = verify::Options {
        meter: Some(meter),
        jobs: 2,
        ..verify::Options::default()
    };
    let report = verify::verify_path(&data(), &opts).unwrap();
    assert!(report.findings.is_empty(), "{:?}", report.findings);
    let want = log_bytes(&data());
    assert!(want > 0);
    assert_eq!(meter.bytes(), want);
}

#[test]
fn statistics_count_every_byte_once() {
    let meter = Meter::for_process();
    let opts = log_stats::StatsOptions {
        meter: Some(meter),
        ..log_stats::StatsOptions::default()
    };
    log_stats::stats_path(&data(), &opts).unwrap();
    assert_eq!(meter.bytes(), log_bytes(&data()));
}

#[test]
fn a_header_walk_counts_the_entries_it_steps_over() {
    let dir = std::fs::read_dir(data())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.is_dir())
        .unwrap();
    let p = Partition::open(&dir).unwrap();
    let meter = Meter::for_process();
    let mut headers = p.headers_from(i64::MIN).metered(Some(meter));
    let mut sizes = 0;
    while let Some(h) = headers.next_header().unwrap() {
        sizes += h.size;
    }
    let on_disk: u64 = p
        .segments
        .iter()
        .map(|s| std::fs::metadata(&s.log).unwrap().len())
        .sum();
    assert_eq!(sizes, on_disk);
    assert_eq!(meter.bytes(), on_disk);
}
