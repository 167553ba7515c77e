//! Checks that must not miss: record offsets inside a CRC-valid batch
//! (found when records are decoded: `--records`, `--deep`).

use crate::builder::{batch, record};
use crate::support::{stdout, TestEnv};

#[test]
fn r13_record_offset_deltas_must_increase_within_a_batch() {
    let env = TestEnv::new();
    let dir = env.path("data/t-0");
    std::fs::create_dir_all(&dir).unwrap();
    for (deltas, name) in [([0, 0, 0], "same"), ([2, 1, 0], "backwards")] {
        let records: Vec<u8> = deltas.iter().flat_map(|&d| record(d, b"v")).collect();
        std::fs::write(
            dir.join("00000000000000000000.log"),
            batch(0, 2, 3, &records),
        )
        .unwrap();
        let o = env.run(
            &["verify-crc", "--records", "--no-index-checks", "data/t-0"],
            None,
        );
        assert_eq!(o.status.code(), Some(1), "{name}: {}", stdout(&o));
        assert!(
            stdout(&o).contains("error offset_delta_not_increasing"),
            "{name}: {}",
            stdout(&o)
        );
    }
    // Gaps, as compaction leaves them, are fine.
    let records: Vec<u8> = [0, 2].iter().flat_map(|&d| record(d, b"v")).collect();
    std::fs::write(
        dir.join("00000000000000000000.log"),
        batch(0, 2, 2, &records),
    )
    .unwrap();
    let o = env.run(
        &["verify-crc", "--records", "--no-index-checks", "data/t-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn r14_transactions_reports_the_damage_it_walked_past() {
    // One flipped byte in a batch of fixtures/txn: the batch fails its CRC;
    // transactions must say so (an error, exit 1), not silently skip it.
    let env = TestEnv::new();
    let log = env.path("fixtures/txn/payments-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    // Inside the records of producer 300's transaction (its batch starts at 250).
    bytes[250 + 70] ^= 0x01;
    std::fs::write(&log, &bytes).unwrap();
    let o = env.run(
        &[
            "transactions",
            "--now-ms",
            "1700000000000",
            "fixtures/txn/payments-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("00000000000000000000.log:250 error crc_mismatch"),
        "{}",
        stdout(&o)
    );
    // Random bytes are damage too.
    std::fs::write(&log, [0x5a; 300]).unwrap();
    let o = env.run(&["transactions", "fixtures/txn/payments-0"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}

#[test]
fn r15_now_ms_must_be_a_time() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "transactions",
            "--now-ms=-9223372036854775808",
            "fixtures/txn",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(crate::support::stderr(&o).contains("--now-ms"));
}
