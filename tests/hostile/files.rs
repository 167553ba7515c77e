//! Filesystem objects that are not what they seem: a FIFO or a device in
//! place of a file klog reads never blocks it.

use std::time::Duration;

use crate::support::{stderr, stdout, TestEnv};

fn mkfifo(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "{path:?}");
}

#[test]
fn r9_fifos_in_place_of_every_file_klog_reads_do_not_block() {
    let env = TestEnv::new();
    let txn = env.path("fixtures/txn/payments-0");
    let kafka = env.path("fixtures/kafka");
    for f in [
        txn.join("00000000000000000000.index"),
        txn.join("00000000000000000000.timeindex"),
        txn.join("00000000000000000000.txnindex"),
        txn.join("00000000000000000017.snapshot"),
        kafka.join("meta.properties"),
        kafka.join("replication-offset-checkpoint"),
        kafka.join("orders-0/partition.metadata"),
        kafka.join("__consumer_offsets-8/leader-epoch-checkpoint"),
    ] {
        mkfifo(&f);
    }
    let runs: [&[&str]; 9] = [
        &["verify-crc", "fixtures/txn"],
        &["verify-crc", "--deep", "fixtures/txn"],
        &[
            "dump-segment",
            "--from-offset",
            "5",
            "fixtures/txn/payments-0",
        ],
        &[
            "dump-segment",
            "fixtures/txn/payments-0/00000000000000000000.index",
        ],
        &["transactions", "fixtures/txn"],
        &["stats", "fixtures/txn"],
        &["info", "fixtures/kafka"],
        &["lag", "fixtures/kafka"],
        &["diff", "fixtures/txn/payments-0", "fixtures/txn/payments-0"],
    ];
    for args in runs {
        let o = env
            .cmd()
            .args(args)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let code = o.status.code();
        assert!(
            matches!(code, Some(0..=2)),
            "klog {args:?} did not finish cleanly ({code:?}): {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
    // The FIFO is named where it matters.
    let o = env.run(&["verify-crc", "fixtures/txn/payments-0"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("00000000000000000000.index:0 error not_regular_file"),
        "{}",
        stdout(&o)
    );
    // A checkpoint that is a device is refused, not read without end.
    std::fs::remove_file(kafka.join("replication-offset-checkpoint")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", kafka.join("replication-offset-checkpoint")).unwrap();
    let o = env
        .cmd()
        .args(["info", "fixtures/kafka"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}
