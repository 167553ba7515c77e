//! `verify-crc --jobs N`'s workers as copies of a process that runs one
//! thread (`fork` without `exec`, `src/verify/workers.rs`).
//!
//! The test harness runs each test on a thread of its own, and a process
//! that runs more than one thread never forks its workers, so this target
//! runs without the harness (`harness = false` in Cargo.toml): `main` is
//! the process's only thread until it starts one on purpose.
//!
//! The workers are given a program that only leaves a mark in a file and
//! ends: a worker started from it is lost at once, and its partitions are
//! verified here. So a mark says a worker was started from the program; no
//! mark, and pages faulted in by reaped children
//! (`getrusage(RUSAGE_CHILDREN)`), say a copy of this process verified
//! partitions.

use std::path::{Path, PathBuf};

use kaen_log::log::{DataDir, Partition};
use kaen_log::verify::{self, Options, Report, Workers};

/// Page faults of this process's reaped children so far.
fn children_faults() -> i64 {
    // SAFETY: getrusage fills the zeroed struct it is given.
    unsafe {
        let mut usage: libc::rusage = std::mem::zeroed();
        assert_eq!(libc::getrusage(libc::RUSAGE_CHILDREN, &mut usage), 0);
        usage.ru_minflt + usage.ru_majflt
    }
}

fn copy_folder(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for f in std::fs::read_dir(from).unwrap() {
        let f = f.unwrap().path();
        if f.is_file() {
            std::fs::copy(&f, to.join(f.file_name().unwrap())).unwrap();
        }
    }
}

/// Checked counts and findings, partition by partition.
fn outcome(reports: &[Report]) -> Vec<(verify::Checked, Vec<kaen_log::findings::Finding>)> {
    reports
        .iter()
        .map(|r| (r.checked, r.findings.clone()))
        .collect()
}

fn main() {
    // 24 partitions: copies of a damaged fixture (a CRC mismatch), a torn
    // one and a clean one, in turn.
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let fixtures = ["corrupt/orders-0", "truncated/orders-0", "data/orders-0"];
    for p in 0..24 {
        let from = PathBuf::from("fixtures").join(fixtures[p % 3]);
        copy_folder(&from, &data.join(format!("t-{p}")));
    }
    let dir = DataDir::open(&data).unwrap();
    let parts: Vec<&Partition> = dir.live().collect();
    assert_eq!(parts.len(), 24);
    let one = Options {
        records: true,
        ..Options::default()
    };
    let mark = tmp.path().join("started-from-the-program");
    let forking = Options {
        jobs: 2,
        workers: Some(Workers {
            program: "/bin/sh".into(),
            args: vec![
                "-c".into(),
                format!("echo >> '{}'; exit 3", mark.display()).into(),
            ],
            fork: true,
        }),
        ..one.clone()
    };
    let want = outcome(&verify::verify_partitions(&parts, &one).unwrap());
    assert_eq!(want.iter().filter(|(_, f)| !f.is_empty()).count(), 16);

    // One thread: the second job is a copy of this process.
    let before = children_faults();
    let got = outcome(&verify::verify_partitions(&parts, &forking).unwrap());
    assert_eq!(got, want);
    assert!(!mark.exists(), "a worker was started from the program");
    assert!(
        children_faults() > before,
        "no worker was forked (or it was never reaped)"
    );
    println!("a copy of this process verified a job's partitions: ok");

    // Three jobs: two copies (the second closes its copies of the first's
    // pipes, so that the first's input ends when the parent closes it).
    let three = Options {
        jobs: 3,
        ..forking.clone()
    };
    let before = children_faults();
    let got = outcome(&verify::verify_partitions(&parts, &three).unwrap());
    assert_eq!(got, want);
    assert!(!mark.exists(), "a worker was started from the program");
    assert!(children_faults() > before);
    println!("two copies for three jobs: ok");

    // Another thread running: no copy is made; the worker is started from
    // the program, which leaves its mark and ends without a report. If it
    // was sent a partition by then, that partition fails (which pipe failed
    // first, its input or its output, is the scheduler's choice); a worker
    // that starts late may have been sent none.
    let (stop, wait) = std::sync::mpsc::channel::<()>();
    let other = std::thread::spawn(move || wait.recv());
    match verify::verify_partitions(&parts, &forking) {
        Ok(reports) => assert_eq!(outcome(&reports), want),
        Err(lost) => {
            let lost = lost.to_string();
            assert!(
                lost.contains(
                    ": the worker process verifying this partition ended without a report ("
                ),
                "{lost}"
            );
            assert!(lost.ends_with("; worker exit status: 3)"), "{lost}");
        }
    }
    assert!(mark.exists(), "forked beside another thread");
    drop(stop);
    let _ = other.join();
    println!("no copy beside another thread, the program instead: ok");
}
