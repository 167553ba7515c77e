use kaen_log::log::Partition;
use kaen_log::txn::{self, TxnOptions};

use crate::support::{check_golden, document, repo, stderr, stdout, TestEnv};

#[test]
fn golden_producers_findings_and_coordinator() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "transactions",
            "--fail-on",
            "warning",
            "--now-ms",
            "1700000120000",
            "fixtures/txn",
        ],
        1,
        "transactions/txn-hanging",
    );
    check_golden(
        &env,
        &[
            "transactions",
            "--format",
            "json",
            "--now-ms",
            "1700000120000",
            "fixtures/txn",
        ],
        0,
        "transactions/txn-json",
    );
}

#[test]
fn an_open_transaction_is_hanging_only_past_its_timeout() {
    let env = TestEnv::new();
    // The log's own max timestamp is "now": the open transaction is 0 ms old,
    // but the sequence and epoch anomalies are warnings: exit 1 under
    // --fail-on warning (and 0 by default: no log byte is damaged).
    let args = [
        "transactions",
        "--format",
        "json",
        "fixtures/txn/payments-0",
    ];
    assert_eq!(env.run(&args, None).status.code(), Some(0));
    let o = env.run(&[&args[..], &["--fail-on", "warning"]].concat(), None);
    assert_eq!(o.status.code(), Some(1));
    let v = document(&o, "transactions");
    assert_eq!(v["partitions"][0]["topic"], "payments");
    // The document's findings, all of the one partition given.
    let kinds: Vec<&str> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .inspect(|f| {
            assert!(
                f["file"]
                    .as_str()
                    .unwrap()
                    .starts_with("fixtures/txn/payments-0/"),
                "{f}"
            )
        })
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "out_of_order_sequence",
            "duplicate_sequence",
            "epoch_regression"
        ]
    );
    // A directory with only clean transactions: exit 0.
    let o = env.run(&["transactions", "fixtures/groups/ledger-0"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn last_stable_offset_is_the_first_open_transaction_or_the_end() {
    for (dir, lso, end) in [
        ("fixtures/txn/payments-0", 6, 17),
        ("fixtures/groups/ledger-1", 0, 2),
        ("fixtures/groups/ledger-0", 7, 7),
        ("fixtures/data/orders-0", 128, 128),
    ] {
        let st = txn::analyze(
            &Partition::open(&repo().join(dir)).unwrap(),
            &TxnOptions::default(),
        )
        .unwrap();
        assert_eq!((st.last_stable_offset(), st.log_end), (lso, end), "{dir}");
    }
}

#[test]
fn the_append_path_indexes_aborted_transactions() {
    let bytes = std::fs::read(repo().join("fixtures/txn/payments-0/00000000000000000000.txnindex"))
        .unwrap();
    let (entries, partial) = kaen_log::format::index::txn_entries(&bytes).unwrap();
    assert_eq!(partial, 0);
    assert_eq!(entries.len(), 1);
    let e = entries[0];
    // Producer 200's transaction 8-9 was aborted at 10 while producer 300's (from 6) was open.
    assert_eq!(
        (
            e.producer_id,
            e.first_offset,
            e.last_offset,
            e.last_stable_offset
        ),
        (200, 8, 10, 6)
    );
    let st = txn::analyze(
        &Partition::open(&repo().join("fixtures/txn/payments-0")).unwrap(),
        &TxnOptions::default(),
    )
    .unwrap();
    assert_eq!(st.aborted.len(), 1);
    assert_eq!(
        (st.aborted[0].first_offset, st.aborted[0].last_offset),
        (e.first_offset, e.last_offset)
    );
}

#[test]
fn snapshots_are_checked_against_the_log() {
    use kaen_log::txn::snapshot::{encode, SnapshotEntry};
    let env = TestEnv::new();
    let dir = env.path("fixtures/txn/payments-0");
    let entry = |pid, epoch, seq, last, open| SnapshotEntry {
        producer_id: pid,
        epoch,
        last_sequence: seq,
        last_offset: last,
        offset_delta: 0,
        timestamp: 1_700_000_000_000,
        coordinator_epoch: 0,
        current_txn_first_offset: open,
    };
    // What Kafka's ProducerStateManager holds at offset 17 (the end), loading
    // the log: each producer's last sequence and last *data* offset (markers
    // move neither: producer 200's ABORT is at 10, its last data at 9),
    // producer 100 at sequence 6 (its duplicate at 14 is the last batch: a
    // log is loaded without sequence checks), and producer 400 at epoch 1
    // with sequence 5 at 16 — loading a log Kafka only warns about the older
    // epoch (origin REPLICATION) and takes the batch.
    let good = [
        entry(100, 0, 6, 14, -1),
        entry(200, 0, 3, 9, -1),
        entry(300, 0, 1, 7, 6),
        entry(400, 1, 5, 16, -1),
    ];
    std::fs::write(dir.join("00000000000000000017.snapshot"), encode(&good)).unwrap();
    let o = env.run(&["transactions", "fixtures/txn/payments-0"], None);
    assert!(
        stdout(&o).contains(
            "00000000000000000017.snapshot: snapshot at offset 17 (4 producers) matches the log"
        ),
        "{}",
        stdout(&o)
    );
    // At offset 6 only producers 100 and 200 exist, 200 with its transaction
    // committed (data 3-4, COMMIT at 5: its last data offset is 4).
    std::fs::write(
        dir.join("00000000000000000006.snapshot"),
        encode(&[entry(100, 0, 2, 2, -1), entry(200, 0, 1, 4, -1)]),
    )
    .unwrap();
    let o = env.run(&["transactions", "fixtures/txn/payments-0"], None);
    assert!(
        stdout(&o).contains(
            "00000000000000000006.snapshot: snapshot at offset 6 (2 producers) matches the log"
        ),
        "{}",
        stdout(&o)
    );
    // A stale epoch and a missing open transaction are mismatches.
    let mut bad = good;
    bad[3].epoch = 2;
    bad[2].current_txn_first_offset = -1;
    std::fs::write(dir.join("00000000000000000017.snapshot"), encode(&bad)).unwrap();
    let o = env.run(
        &[
            "transactions",
            "fixtures/groups/ledger-0",
            "fixtures/txn/payments-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "a stale snapshot is a warning");
    let text = stdout(&o);
    assert!(
        text.contains("snapshot_mismatch producer 400: epoch: snapshot 2, log 1"),
        "{text}"
    );
    assert!(
        text.contains(
            "snapshot_mismatch producer 300: open transaction first offset: snapshot -1, log 6"
        ),
        "{text}"
    );
    // A torn snapshot fails its CRC.
    let mut torn = encode(&good);
    torn.truncate(torn.len() - 10);
    torn.extend_from_slice(&[0; 10]);
    std::fs::write(dir.join("00000000000000000017.snapshot"), torn).unwrap();
    let o = env.run(&["transactions", "fixtures/txn/payments-0"], None);
    assert!(
        stdout(&o).contains("warning snapshot_mismatch CRC mismatch"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn transaction_index_is_checked_against_the_log() {
    let env = TestEnv::new();
    let index = env.path("fixtures/txn/payments-0/00000000000000000000.txnindex");
    let good = std::fs::read(&index).unwrap();
    let o = env.run(
        &[
            "transactions",
            "--format",
            "json",
            "fixtures/txn/payments-0",
        ],
        None,
    );
    assert!(!stdout(&o).contains("txn_index_mismatch"), "{}", stdout(&o));
    // Missing: read_committed readers would see the aborted records.
    std::fs::remove_file(&index).unwrap();
    let o = env.run(&["transactions", "fixtures/txn/payments-0"], None);
    assert!(
        stdout(&o).contains(
            "txn_index_mismatch producer 200: aborted transaction 8..=10 is missing from the index"
        ),
        "{}",
        stdout(&o)
    );
    // An entry for a transaction the log committed, and a torn trailing entry.
    let mut bad = kaen_log::format::index::encode_txn_entry(200, 3, 5, 6);
    bad.extend_from_slice(&good);
    bad.extend_from_slice(&[0, 0, 0]);
    std::fs::write(&index, bad).unwrap();
    let o = env.run(&["transactions", "fixtures/txn/payments-0"], None);
    let text = stdout(&o);
    assert!(
        text.contains(
            "entry (producer 200, offsets 3..=5) is not an aborted transaction in the log"
        ),
        "{text}"
    );
    assert!(
        text.contains(".txnindex:68 warning txn_index_mismatch 3 trailing bytes of a torn entry"),
        "{text}"
    );
}

#[test]
fn an_abort_with_no_transaction_is_not_indexed() {
    // ProducerAppendInfo.appendEndTxnMarker completes a transaction only when
    // the producer has one open (a first offset): a marker alone, which a
    // coordinator writes to every partition of a transaction, adds nothing
    // to the .txnindex.
    let env = TestEnv::new();
    let run = |args: &[&str]| {
        let o = env.run(args, None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    };
    let base = ["produce", "data", "--topic", "t", "--producer-id", "7"];
    run(&[&base[..], &["--control", "abort"]].concat());
    let index = env.path("data/t-0/00000000000000000000.txnindex");
    assert!(std::fs::read(&index).unwrap_or_default().is_empty());
    // With data before it, the ABORT is indexed (one 34-byte entry).
    let o = env.run(&[&base[..], &["--transactional"]].concat(), Some("a\nb\n"));
    assert_eq!(o.status.code(), Some(0));
    run(&[&base[..], &["--control", "abort"]].concat());
    let (entries, _) =
        kaen_log::format::index::txn_entries(&std::fs::read(&index).unwrap()).unwrap();
    assert_eq!(entries.len(), 1);
    assert_eq!((entries[0].first_offset, entries[0].last_offset), (1, 3));
}

#[test]
fn repair_rebuilds_a_missing_transaction_index() {
    // LogSegment.recover resets and rebuilds the .txnindex with the other
    // indexes. In fixtures/txn, producer 200's transaction 8-9 was aborted at
    // 10 while producer 300's, from 6, was open: entry (200, 8, 10, LSO 6).
    let env = TestEnv::new();
    let index = env.path("fixtures/txn/payments-0/00000000000000000000.txnindex");
    std::fs::remove_file(&index).unwrap();
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--dry-run",
            "fixtures/txn/payments-0",
        ],
        None,
    );
    assert!(
        stdout(&o).contains("its .txnindex disagrees with the aborted transactions in the log"),
        "{}",
        stdout(&o)
    );
    let o = env.run(&["verify-crc", "--repair", "fixtures/txn/payments-0"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let (entries, partial) =
        kaen_log::format::index::txn_entries(&std::fs::read(&index).unwrap()).unwrap();
    assert_eq!(partial, 0);
    let got: Vec<_> = entries
        .iter()
        .map(|e| {
            (
                e.producer_id,
                e.first_offset,
                e.last_offset,
                e.last_stable_offset,
            )
        })
        .collect();
    assert_eq!(got, [(200, 8, 10, 6)]);
}

#[test]
fn an_open_transaction_its_coordinator_has_ongoing_is_not_hanging() {
    // kafka-transactions find-hanging drops a candidate whose coordinator
    // reports it Ongoing, same producer and epoch, with the partition in it.
    // fixtures/txn: slow-app (producer 300, epoch 0) is Ongoing with
    // payments-0 in __transaction_state-0.
    let env = TestEnv::new();
    let now = ["--now-ms", "1700000120000"];
    let alone = env.run(
        &[&["transactions"][..], &now, &["fixtures/txn/payments-0"]].concat(),
        None,
    );
    assert!(
        stdout(&alone).contains("hanging_transaction producer 300"),
        "{}",
        stdout(&alone)
    );
    let both = env.run(
        &[&["transactions"][..], &now, &["fixtures/txn"]].concat(),
        None,
    );
    // Neither a finding (stdout) nor in the count (stderr).
    assert!(
        !stdout(&both).contains("hanging_transaction")
            && !stderr(&both).contains("hanging_transaction"),
        "{}{}",
        stdout(&both),
        stderr(&both)
    );
}
