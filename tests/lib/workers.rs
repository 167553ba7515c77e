//! `verify-crc --jobs N` through worker processes: klog's own
//! `verify-worker`, started as the CLI starts it, gives the reports
//! verifying in this process gives, damage and all.

use std::path::Path;

use kaen_log::log::DataDir;
use kaen_log::verify::{self, Options, Workers};

use crate::builder::{batch, record};

/// A partition of `batches` batches of one 1 KiB record each; with
/// `damage`, one byte of the middle batch's value flipped (a CRC mismatch).
fn write_partition(dir: &Path, batches: i64, damage: bool) {
    std::fs::create_dir_all(dir).unwrap();
    let mut log = Vec::new();
    let mut flip = None;
    for b in 0..batches {
        if damage && b == batches / 2 {
            flip = Some(log.len() + 100);
        }
        log.extend(batch(b, 0, 1, &record(0, &[b as u8; 1024])));
    }
    if let Some(at) = flip {
        log[at] ^= 0x40;
    }
    std::fs::write(dir.join("00000000000000000000.log"), log).unwrap();
}

#[test]
fn worker_processes_report_what_one_job_finds() {
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    // Large enough (2 MiB a partition) that the first job is still at work
    // when the worker has started, so the worker verifies some of them.
    for p in 0..16 {
        write_partition(&data.join(format!("t-{p}")), 2000, p % 3 == 1);
    }
    let log = tmp.path().join("sent.log");
    // The worker's input, also copied to a file: what it was sent.
    let script = format!(
        "tee -a '{}' | exec '{}' verify-worker",
        log.display(),
        env!("CARGO_BIN_EXE_klog")
    );
    let dir = DataDir::open(&data).unwrap();
    let parts: Vec<_> = dir.live().collect();
    for records in [false, true] {
        let one = Options {
            records,
            no_indexes: true,
            ..Options::default()
        };
        let two = Options {
            jobs: 2,
            workers: Some(Workers {
                program: "/bin/sh".into(),
                args: vec!["-c".into(), script.clone().into()],
                fork: false,
            }),
            ..one.clone()
        };
        std::fs::write(&log, "").unwrap();
        let want = verify::verify_partitions(&parts, &one).unwrap();
        let got = verify::verify_partitions(&parts, &two).unwrap();
        assert_eq!(got.len(), parts.len());
        for ((g, w), p) in got.iter().zip(&want).zip(&parts) {
            assert_eq!(g.checked, w.checked, "{}", p.dir.display());
            assert_eq!(g.findings, w.findings, "{}", p.dir.display());
        }
        let damaged = want.iter().filter(|r| !r.findings.is_empty()).count();
        assert_eq!(damaged, 5);
        let sent = std::fs::read_to_string(&log).unwrap();
        assert!(sent.starts_with("{\"Start\":"), "{sent}");
        assert!(
            sent.contains("{\"Verify\":"),
            "the worker verified nothing: {sent}"
        );
    }
}

#[test]
fn runs_larger_than_a_pipe_holds_both_ways_do_not_stall() {
    // 1,600 partitions with long names and no indexes (two findings each):
    // the first run for the worker, 400 folders, is about 150 KB of input,
    // and its reports about 400 KB of output, both more than a pipe holds.
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("d".repeat(100));
    let log = batch(0, 0, 1, &record(0, b"v"));
    for p in 0..1600 {
        let dir = data.join(format!("{}-{p}", "t".repeat(60)));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("00000000000000000000.log"), &log).unwrap();
    }
    let dir = DataDir::open(&data).unwrap();
    let opts = Options {
        jobs: 2,
        workers: Some(Workers {
            program: env!("CARGO_BIN_EXE_klog").into(),
            args: vec!["verify-worker".into()],
            fork: false,
        }),
        ..Options::default()
    };
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let parts: Vec<_> = dir.live().collect();
        tx.send(verify::verify_partitions(&parts, &opts).map(|r| {
            r.iter()
                .map(|r| (r.checked.batches, r.findings.len()))
                .collect::<Vec<_>>()
        }))
        .unwrap();
    });
    let got = rx
        .recv_timeout(std::time::Duration::from_secs(120))
        .expect("verify_partitions stalled")
        .unwrap();
    assert_eq!(got.len(), 1600);
    assert!(
        got.iter()
            .all(|&(batches, findings)| batches == 1 && findings == 2),
        "{:?}",
        &got[..4]
    );
}
