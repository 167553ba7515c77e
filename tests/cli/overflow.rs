//! Offsets at the top of the range, through every command. A CRC-valid batch
//! whose offsets reach past 2^63 − 1 (baseOffset 2^63 − 1, or 2^63 − 2 with
//! lastOffsetDelta 5) is damage: no command panics, wraps an offset to a
//! negative number, or treats what follows as a log end. The batches are the
//! hand-made fuzz regressions in tests/fuzz/regressions/segment/ (written by
//! fixtures/encoder.py, see tests/fuzz/README.md).

use crate::support::{repo, stderr, stdout, TestEnv};

const INPUTS: [&str; 2] = [
    "i64-max-base-offset.log",
    "i64-max-minus-1-last-offset-delta-5.log",
];

/// A data directory with the batch as the only segment of a topic partition
/// and of an offsets partition.
fn env_with(input: &str) -> TestEnv {
    let env = TestEnv::new();
    let bytes = std::fs::read(repo().join("tests/fuzz/regressions/segment").join(input)).unwrap();
    for part in ["t-0", "__consumer_offsets-0"] {
        let dir = env.path("data").join(part);
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("00000000000000000000.log"), &bytes).unwrap();
    }
    env
}

#[test]
fn offsets_past_i64_max_through_every_command() {
    let log = "data/t-0/00000000000000000000.log";
    let commands: [&[&str]; 15] = [
        &["dump-segment", log],
        &["dump-segment", "--format", "json", "data/t-0"],
        &["dump-segment", "--isolation", "read-committed", log],
        &["verify-crc", "data"],
        &["verify-crc", "--deep", "data"],
        &["verify-crc", "--format", "json", log],
        &["verify-crc", "--recovery-preview", "data"],
        &["verify-crc", "--repair", "--dry-run", "data"],
        &["transactions", "--now-ms", "1700000000000", "data"],
        &["stats", "data"],
        &["info", "data"],
        &["lag", "data"],
        &["lag", "--isolation", "read-committed", "data"],
        &["replay-offsets", "data"],
        &["diff", "data/t-0", "data/__consumer_offsets-0"],
    ];
    for input in INPUTS {
        let env = env_with(input);
        for args in commands {
            let o = env.run(args, None);
            let (out, err) = (stdout(&o), stderr(&o));
            let code = o.status.code();
            assert!(
                matches!(code, Some(0..=2)),
                "{input}: klog {args:?} exited {code:?}: {err}"
            );
            assert!(!err.contains("panicked"), "{input}: klog {args:?}: {err}");
            // No offset wrapped below zero (i64::MIN or near it), in the
            // data or in the summary (stderr).
            assert!(
                !out.contains("-92233720368547758") && !err.contains("-92233720368547758"),
                "{input}: klog {args:?} printed a wrapped offset:\n{out}{err}"
            );
        }
        // verify-crc names the damage: the batch's offsets overflow.
        let o = env.run(&["verify-crc", "data/t-0"], None);
        assert_eq!(o.status.code(), Some(1), "{input}");
        assert!(
            stdout(&o).contains("00000000000000000000.log:0 error offset_overflow"),
            "{input}: {}",
            stdout(&o)
        );
        // The valid log is empty: the log end is the segment's base offset.
        let p = kaen_log::log::Partition::open(&env.path("data/t-0")).unwrap();
        assert_eq!(p.log_end_offset().unwrap(), 0, "{input}");
    }
}
