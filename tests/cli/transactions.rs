use kaen_log::log::Partition;
use kaen_log::txn::{self, TxnOptions};

use serde_json::Value;

use crate::support::{
    check_golden, document, encoded, one_hanging_answer, repo, stderr, stdout, write_segment,
    TestEnv,
};

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
fn an_open_transaction_is_a_candidate_only_past_its_timeout() {
    let env = TestEnv::new();
    // fixtures/txn: producer 300's transaction (offsets 6-7) is open and
    // its last write is stamped TS = 1700000000000. find-hanging's rule:
    // a candidate once now - lastTimestamp > 15 minutes (900000 ms),
    // strictly. From payments-0 alone (no coordinator's log) a candidate
    // is not judged: a note, not a warning.
    const TS: i64 = 1_700_000_000_000;
    let kinds = |now: i64, extra: &[&str]| -> Vec<String> {
        let now = now.to_string();
        let mut args = vec![
            "transactions",
            "--format",
            "json",
            "--now-ms",
            &now,
            "fixtures/txn/payments-0",
        ];
        args.extend_from_slice(extra);
        let o = env.run(&args, None);
        // Warnings only: no log byte is damaged, exit 0 by default.
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let v = document(&o, "transactions");
        assert_eq!(v["partitions"][0]["topic"], "payments");
        v["findings"]
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
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    let anomalies = [
        "out_of_order_sequence",
        "duplicate_sequence",
        "epoch_regression",
    ];
    assert_eq!(kinds(TS + 900_000, &[]), anomalies);
    assert_eq!(
        kinds(TS + 900_001, &[]),
        [&anomalies[..], &["hanging_not_judged"]].concat()
    );
    // --transaction-timeout-ms takes ms or an ISO-8601 duration.
    assert_eq!(
        kinds(TS + 60_001, &["--transaction-timeout-ms", "PT1M"]).len(),
        4
    );
    // Without --now-ms nothing is judged (the clock is not taken for
    // now): the note says so, and is no warning.
    let o = env.run(&["transactions", "fixtures/txn"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(
            "note hanging_not_judged producer 300: hanging transactions not judged: no time was \
             given to judge their age at (pass --now-ms);"
        ) && !stdout(&o).contains("hanging_transaction"),
        "{}",
        stdout(&o)
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
        stdout(&o)
            .contains("1 producer snapshot matches the log (the last at offset 17, 4 producers)"),
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
    let o = env.run(
        &[
            "transactions",
            "--format",
            "json",
            "fixtures/txn/payments-0",
        ],
        None,
    );
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let snapshots = doc["partitions"][0]["snapshots"].as_array().unwrap();
    let at_6 = snapshots.iter().find(|s| s["offset"] == 6).unwrap();
    assert_eq!(
        (&at_6["producers"], &at_6["matches_log"]),
        (&2.into(), &true.into())
    );
    let o = env.run(&["transactions", "fixtures/txn/payments-0"], None);
    assert!(
        stdout(&o)
            .contains("2 producer snapshots match the log (the last at offset 17, 4 producers)"),
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
fn an_open_transaction_its_coordinator_lists_is_not_hanging() {
    // kafka-transactions find-hanging drops a candidate whose producer's
    // transactional id lists the partition (TransactionsCommand.
    // filterHangingTransactions). fixtures/txn: slow-app (producer 300) is
    // Ongoing with payments-0 in __transaction_state-0; its last write is
    // 16 minutes before now.
    let env = TestEnv::new();
    let now = ["--now-ms", "1700000960000"];
    let alone = env.run(
        &[&["transactions"][..], &now, &["fixtures/txn/payments-0"]].concat(),
        None,
    );
    // Alone, not judged: no coordinator's state to rule it out.
    assert!(
        stdout(&alone).contains(
            "note hanging_not_judged producer 300: hanging transactions not judged: the \
             coordinator's state is not on these directories (no __transaction_state partition \
             among them)"
        ) && !stdout(&alone).contains("hanging_transaction"),
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
    // The find-hanging view lists it as a candidate its coordinator lists.
    let o = env.run(
        &[
            &["transactions", "--find-hanging", "--format", "json"][..],
            &now,
            &["fixtures/txn"],
        ]
        .concat(),
        None,
    );
    let v = document(&o, "transactions");
    let c = &v["find_hanging"]["candidates"];
    assert_eq!(c.as_array().unwrap().len(), 1, "{v}");
    assert_eq!(
        (
            &c[0]["producer_id"],
            &c[0]["hanging"],
            &c[0]["transactional_id"],
            &c[0]["coordinator_state"],
            &c[0]["duration_min"]
        ),
        (
            &Value::from(300),
            &Value::from(false),
            &Value::from("slow-app"),
            &Value::from("Ongoing"),
            &Value::from(16)
        )
    );
    assert_eq!(v["find_hanging"]["complete"], true);
}

#[test]
fn time_format_iso_shows_the_coordinators_last_update_as_a_date() {
    // make.sh: every __transaction_state value is stamped lastUpdate
    // 1700000000000 = 2023-11-14T22:13:20Z.
    let env = TestEnv::new();
    let o = env.run(
        &[
            "transactions",
            "--now-ms",
            "1700000120000",
            "--time-format",
            "iso",
            "fixtures/txn",
        ],
        None,
    );
    let text = stdout(&o);
    let coordinator = text
        .split("coordinator (")
        .nth(1)
        .expect("the coordinator's table");
    assert!(coordinator.contains("2023-11-14T22:13:20.000Z"), "{text}");
    assert!(!coordinator.contains("1700000000000"), "{text}");
}

/// find-hanging's rules on a partition built by the independent encoder,
/// at now = T + 30 min with the default 15-minute timeout (producer →
/// transactional id in `__transaction_state-0`, all open in ledger-0):
/// - 10 (TV2, data at epoch 5): PrepareCommit logged at epoch 6 listing
///   ledger-0 — listed, not hanging (the epochs differ under TV2);
/// - 17 (TV2, epoch 3): PrepareAbort at epoch 4 listing ledger-0 — listed;
/// - 11: CompleteCommit, no partitions — hanging;
/// - 12: no transactional id — hanging;
/// - 13: Ongoing with ledger-1 only — hanging;
/// - 16: Dead with ledger-0 (ListTransactions never lists Dead) — hanging;
/// - 14: open since T but last wrote at T + 20 min — not a candidate (the
///   age is from the last write, not the start);
/// - 15: last wrote exactly 15 minutes before now — not a candidate.
#[test]
fn hanging_follows_find_hanging_rules() {
    const T: i64 = 1_700_000_000_000;
    const MIN: i64 = 60_000;
    let env = TestEnv::new();
    let dir = env.path("hang");
    let data = encoded(&format!(
        r#"
T = {T}
def txn(base, pid, epoch, seq, ts):
    return batch(base, [(0, 0, b"k", b"v")], first_timestamp=ts, producer_id=pid,
                 producer_epoch=epoch, base_sequence=seq, attributes=TRANSACTIONAL)
out = (txn(0, 10, 5, 0, T) + txn(1, 11, 0, 0, T) + txn(2, 12, 0, 0, T) + txn(3, 13, 0, 0, T)
       + txn(4, 14, 0, 0, T) + txn(5, 14, 0, 1, T + 20 * {MIN}) + txn(6, 15, 0, 0, T + 15 * {MIN})
       + txn(7, 16, 0, 0, T) + txn(8, 17, 3, 0, T))
"#
    ));
    write_segment(&dir, "ledger-0", &data);
    let state = encoded(&format!(
        r#"
T = {T}
rows = [
    ("tv2-app", transaction_log_value(10, 6, 2, [("ledger", [0])], T, T, version=1,
                                      client_transaction_version=2)),
    ("done-app", transaction_log_value(11, 0, 4, [], T, T, version=1)),
    ("other-app", transaction_log_value(13, 0, 1, [("ledger", [1])], T, T)),
    ("dead-app", transaction_log_value(16, 0, 6, [("ledger", [0])], T, T)),
    ("abort-app", transaction_log_value(17, 4, 3, [("ledger", [0])], T, T, version=1,
                                        client_transaction_version=2)),
]
out = batch(0, [(i, 0, transaction_log_key(t), v) for i, (t, v) in enumerate(rows)],
            first_timestamp=T)
"#
    ));
    write_segment(&dir, "__transaction_state-0", &state);
    let now = (T + 30 * MIN).to_string();
    let o = env.run(
        &["transactions", "--format", "json", "--now-ms", &now, "hang"],
        None,
    );
    let v = document(&o, "transactions");
    let candidates: Vec<(i64, bool)> = v["find_hanging"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["producer_id"].as_i64().unwrap(), c["hanging"] == true))
        .collect();
    assert_eq!(
        candidates,
        [
            (10, false),
            (11, true),
            (12, true),
            (13, true),
            (16, true),
            (17, false)
        ]
    );
    let hanging: Vec<i64> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"] == "hanging_transaction")
        .map(|f| f["producer_id"].as_i64().unwrap())
        .collect();
    assert_eq!(hanging, [11, 12, 13, 16]);
    // verify-crc --deep gives the same answer.
    let a = one_hanging_answer(|args| env.run(args, None), &["hang"], Some(T + 30 * MIN));
    let expected: std::collections::BTreeSet<(String, i64)> = [11, 12, 13, 16]
        .map(|pid| ("ledger-0".to_string(), pid))
        .into();
    assert_eq!((a.hanging, a.not_judged.len()), (expected, 0));
    // The coordinator's table tells TV2 from the classic protocol.
    let tv: Vec<(String, i64)> = v["coordinator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["transactional_id"].as_str().unwrap().to_string(),
                m["client_transaction_version"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        tv,
        [
            ("abort-app".to_string(), 2),
            ("dead-app".to_string(), 0),
            ("done-app".to_string(), 0),
            ("other-app".to_string(), 0),
            ("tv2-app".to_string(), 2)
        ]
    );
    // The text view: Kafka's eight columns, one row per hanging transaction.
    let o = env.run(
        &["transactions", "--find-hanging", "--now-ms", &now, "hang"],
        None,
    );
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(
        lines[0].split_whitespace().collect::<Vec<_>>(),
        [
            "TOPIC",
            "PARTITION",
            "PRODUCER-ID",
            "PRODUCER-EPOCH",
            "COORDINATOR-EPOCH",
            "START-OFFSET",
            "LAST-TIMESTAMP",
            "DURATION-MIN"
        ]
    );
    assert_eq!(
        lines[1].split_whitespace().collect::<Vec<_>>(),
        [
            "ledger",
            "0",
            "11",
            "0",
            "-1",
            "1",
            "2023-11-14T22:13:20.000Z",
            "30"
        ]
    );
    assert_eq!(lines.len(), 5, "{text}");
    // --time-format ms: the epoch milliseconds, as kafka-transactions prints them.
    let o = env.run(
        &[
            "transactions",
            "--find-hanging",
            "--now-ms",
            &now,
            "--time-format",
            "ms",
            "hang",
        ],
        None,
    );
    let ms = stdout(&o);
    assert_eq!(
        ms.lines()
            .nth(1)
            .unwrap()
            .split_whitespace()
            .collect::<Vec<_>>(),
        ["ledger", "0", "11", "0", "-1", "1", "1700000000000", "30"]
    );
}

/// A record of a version klog does not know is never applied and never
/// leaves the table looking whole: an error finding names the record, its
/// version, the newest klog knows and what Kafka does (its coordinator
/// skips it with a warning, `TransactionStateManager.loadTransactionMetadata`),
/// the id's row and the coordinator's table say incomplete, and the run
/// exits 1.
#[test]
fn a_transaction_log_record_of_an_unknown_version_is_an_error() {
    const T: i64 = 1_700_000_000_000;
    let env = TestEnv::new();
    let state = encoded(&format!(
        r#"
T = {T}
rows = [
    (transaction_log_key("a"), transaction_log_value(1, 0, 1, [("t", [0])], T, T, version=1)),
    (transaction_log_key("a"), transaction_log_value(1, 1, 2, [("t", [0])], T, T, version=2)),
    (transaction_log_key("z", record_type=1), transaction_log_value(2, 0, 0, None, T, -1)),
    (transaction_log_key("b"), transaction_log_value(3, 0, 0, None, T, -1, version=1,
        previous_producer_id=2, next_producer_id=4, next_producer_epoch=0,
        client_transaction_version=2)),
]
out = batch(0, [(i, 0, k, v) for i, (k, v) in enumerate(rows)], first_timestamp=T)
"#
    ));
    write_segment(&env.path("new"), "__transaction_state-0", &state);
    let o = env.run(
        &["transactions", "--format", "json", "--now-ms", "0", "new"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = document(&o, "transactions");
    assert_eq!(v["coordinator_complete"], false);
    assert_eq!(v["find_hanging"]["complete"], false);
    let rows: Vec<(&str, &str, bool)> = v["coordinator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["transactional_id"].as_str().unwrap(),
                m["state"].as_str().unwrap(),
                m["incomplete"].as_bool().unwrap(),
            )
        })
        .collect();
    // "a" keeps its state before the unknown record, as Kafka's loader does.
    assert_eq!(rows, [("a", "Ongoing", true), ("b", "Empty", false)]);
    // b's v1 tagged fields, by name.
    let b = &v["coordinator"][1];
    assert_eq!(
        [
            &b["previous_producer_id"],
            &b["next_producer_id"],
            &b["next_producer_epoch"],
            &b["client_transaction_version"]
        ],
        [2, 4, 0, 2]
    );
    let findings: Vec<(&str, &str, i64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap(),
                f["severity"].as_str().unwrap(),
                f["offset"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        findings,
        [
            ("unknown_version", "error", 1),
            ("unknown_version", "error", 2)
        ]
    );
    let value = v["findings"][0]["detail"].as_str().unwrap();
    for part in [
        "transactional id \"a\"",
        "offset 1",
        "TransactionLogValue of version 2",
        "the newest is 1",
        "TransactionStateManager.loadTransactionMetadata",
        "Ignoring it",
    ] {
        assert!(value.contains(part), "{part}: {value}");
    }
    let key = v["findings"][1]["detail"].as_str().unwrap();
    assert!(
        key.contains("the record at offset 2 is a TransactionLogKey of version 1"),
        "{key}"
    );
    // Text: the table is labelled incomplete, the row too.
    let o = env.run(&["transactions", "--now-ms", "0", "new"], None);
    let text = stdout(&o);
    assert!(
        text.contains(
            "coordinator (__transaction_state), incomplete: 2 records or batches not read (see the findings):"
        ),
        "{text}"
    );
    assert!(text.contains("a (incomplete)"), "{text}");
    // find-hanging says so too.
    let o = env.run(
        &["transactions", "--find-hanging", "--now-ms", "0", "new"],
        None,
    );
    assert!(
        stderr(&o).contains(
            "klog: incomplete: the coordinator's state (__transaction_state) was not read whole"
        ),
        "{}",
        stderr(&o)
    );
}

/// fixtures/cleaner (see fixtures/cleaner.py): after a pass of the log
/// cleaner, producer 2002's aborted transaction has lost its batch (at
/// offset 1) but kept its ABORT marker (at 2) and its `.txnindex` entry (2002, 1..=2),
/// as `CleanedTransactionMetadata.onControlBatchRead` leaves them: no
/// mismatch, before or after, and no index rebuild. An entry that names no
/// ABORT of its producer, or starts after the transaction's first batch in
/// the log, still is one.
#[test]
fn a_txnindex_entry_the_cleaner_kept_is_no_mismatch() {
    let env = TestEnv::new();
    let kinds = |dir: &str| -> Vec<String> {
        let o = env.run(
            &["transactions", "--format", "json", "--now-ms", "0", dir],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{dir}: {}", stderr(&o));
        document(&o, "transactions")["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| f["kind"].as_str().unwrap().to_string())
            .collect()
    };
    assert_eq!(kinds("fixtures/cleaner/uncleaned"), Vec::<String>::new());
    // The ABORT whose batches are gone completes nothing: a note.
    assert_eq!(
        kinds("fixtures/cleaner/cleaned"),
        ["marker_without_transaction"]
    );
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--dry-run",
            "fixtures/cleaner/cleaned",
        ],
        None,
    );
    assert!(!stdout(&o).contains(".txnindex"), "{}", stdout(&o));
    // Cleaning changes no committed offset.
    let replay = |dir: &str| stdout(&env.run(&["replay-offsets", dir], None));
    assert_eq!(
        replay("fixtures/cleaner/uncleaned"),
        replay("fixtures/cleaner/cleaned")
    );
    let index = |dir: &str| {
        env.path(&format!(
            "fixtures/cleaner/{dir}/__consumer_offsets-0/00000000000000000000.txnindex"
        ))
    };
    let mismatch = |dir: &str, entry: &str, why: &str| {
        std::fs::write(index(dir), encoded(&format!("out = {entry}"))).unwrap();
        let o = env.run(
            &[
                "transactions",
                "--now-ms",
                "0",
                &format!("fixtures/cleaner/{dir}"),
            ],
            None,
        );
        assert!(stdout(&o).contains(why), "{entry}: {}", stdout(&o));
    };
    // Offset 3 is a commit, not an ABORT; producer 2003 wrote nothing.
    mismatch(
        "cleaned",
        "aborted_txn(2002, 1, 3, 4)",
        "entry (producer 2002, offsets 1..=3) is not an aborted transaction in the log: the log has no ABORT marker of producer 2002 at offset 3",
    );
    mismatch(
        "cleaned",
        "aborted_txn(2003, 1, 2, 3)",
        "the log has no ABORT marker of producer 2003 at offset 2",
    );
    // Before cleaning the transaction's first batch is at 1: an entry from 2 is wrong,
    // and the transaction lacks its entry.
    mismatch(
        "uncleaned",
        "aborted_txn(2002, 2, 2, 3)",
        "entry (producer 2002, offsets 2..=2) is not an aborted transaction in the log: the log's transaction of that marker starts at 1, before it",
    );
    mismatch(
        "uncleaned",
        "aborted_txn(2002, 2, 2, 3)",
        "aborted transaction 1..=2 is missing from the index",
    );
}

#[test]
fn csv_is_one_row_per_producer_of_each_partition() {
    let env = TestEnv::new();
    let args = ["transactions", "--now-ms", "1700000120000", "fixtures/txn"];
    let run = |extra: &[&str]| {
        let mut all = args.to_vec();
        all.extend_from_slice(extra);
        let o = env.run(&all, None);
        assert_eq!(o.status.code(), Some(0), "{all:?}: {}", stderr(&o));
        o
    };
    let o = run(&["--format", "csv"]);
    // __transaction_state-0 has no producers: no row.
    assert_eq!(
        stdout(&o),
        "topic,partition,producer_id,producer_epoch,last_sequence,first_offset,last_offset,\
         batches,transactional,committed,aborted,open_transaction_first_offset,\
         open_transaction_start_timestamp_ms\n\
         payments,0,100,0,6,0,14,4,false,0,0,,\n\
         payments,0,200,0,3,3,10,4,true,1,1,,\n\
         payments,0,300,0,1,6,7,1,true,0,0,6,1700000000000\n\
         payments,0,400,1,5,15,16,2,false,0,0,,\n"
    );
    // The findings count for people, as in text.
    assert_eq!(
        stderr(&o),
        "findings: 3 warnings: 1 out_of_order_sequence, 1 duplicate_sequence, 1 epoch_regression\n"
    );
    // One fixed table: --find-hanging and --time-format shape text only.
    let again = run(&["--format", "csv", "--find-hanging", "--time-format", "iso"]);
    assert_eq!(stdout(&again), stdout(&o));
}

/// A partition with no producer (and snapshots, if any, that match the
/// log) has nothing to read: it is only counted, with no line and no
/// empty producer table of its own (fixtures/kafka-real 4.4.0 broker-1:
/// `__cluster_metadata-0` has none; `__consumer_offsets-0` has producer
/// 1002's two committed transactions, Kafka's own coordinator writes).
#[test]
fn a_partition_without_producers_prints_no_empty_table() {
    let env = crate::support::TestEnv::new();
    let dir = crate::support::repo().join("fixtures/kafka-real/4.4.0/broker-1");
    let o = env.run(&["transactions", "--all", dir.to_str().unwrap()], None);
    let text = crate::support::stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    // The partition's counts line and the line under it.
    let at = |name: &str| {
        let i = lines
            .iter()
            .position(|l| l.contains(&format!("{name}:")))
            .unwrap_or_else(|| panic!("no {name} in {text}"));
        (lines[i], lines.get(i + 1).copied().unwrap_or(""))
    };
    assert!(!text.contains("__cluster_metadata-0"), "{text}");
    assert!(
        text.contains("partitions have no idempotent or transactional producers"),
        "{text}"
    );
    assert!(at("__consumer_offsets-0").1.contains("PRODUCER"), "{text}");
}

/// `verify-crc --deep` and `transactions` apply one rule, find-hanging's,
/// to the same inputs: every fixture with producers, with and without
/// --now-ms, gives the same hanging transactions in both. Expected values
/// from fixtures/make.sh and fixtures/README.md (TS = 1700000000000):
/// - txn/: producer 300's transaction (payments-0 6-7, last write TS) is
///   open; slow-app is Ongoing with payments-0 in `__transaction_state-0`,
///   so it is not hanging; from payments-0 alone it is not judged once it
///   is a candidate (now more than 15 minutes past TS);
/// - groups/: producer 7002's transactional commit (`__offsets-0`, last
///   write TS + 9 s) and producer 9001's transaction (ledger-1, TS) are
///   open, and there is no `__transaction_state`: not judged; beside txn/'s
///   `__transaction_state-0` (payments-app 200, slow-app 300, old-app
///   deleted: neither producer has a transactional id) both hang;
/// - broker/: every transaction ends with its marker: nothing open.
#[test]
fn verify_crc_deep_and_transactions_give_one_answer() {
    const TS: i64 = 1_700_000_000_000;
    const MINUTE: i64 = 60_000;
    const DAY: i64 = 24 * 60 * MINUTE;
    let env = TestEnv::new();
    let run = |args: &[&str]| env.run(args, None);
    let answer = |paths: &[&str], now: Option<i64>| one_hanging_answer(run, paths, now);
    let none = std::collections::BTreeSet::new();
    let no_now = "no time was given to judge their age at (pass --now-ms)";
    let no_log = "the coordinator's state is not on these directories";
    for paths in [
        &["fixtures/txn"][..],
        &["fixtures/txn/payments-0"],
        &["fixtures/groups"],
        &["fixtures/broker"],
    ] {
        // Without --now-ms: nothing hanging, and why, once, where a
        // transaction is open.
        let a = answer(paths, None);
        assert_eq!(a.hanging, none, "{paths:?}");
        if paths != ["fixtures/broker"] {
            assert_eq!(a.not_judged.len(), 1, "{paths:?}: {a:?}");
            assert!(a.not_judged[0].contains(no_now), "{a:?}");
        } else {
            assert!(a.not_judged.is_empty(), "{a:?}");
        }
        // A minute after the last writes: no candidate, nothing to judge.
        let a = answer(paths, Some(TS + MINUTE));
        assert_eq!(
            (a.hanging, a.not_judged.len()),
            (none.clone(), 0),
            "{paths:?}"
        );
    }
    // A day after: candidates, judged only beside the coordinator's log.
    let a = answer(&["fixtures/txn"], Some(TS + DAY));
    assert_eq!((a.hanging, a.not_judged.len()), (none.clone(), 0));
    for paths in [&["fixtures/txn/payments-0"][..], &["fixtures/groups"]] {
        let a = answer(paths, Some(TS + DAY));
        assert_eq!(a.hanging, none, "{paths:?}");
        assert_eq!(a.not_judged.len(), 1, "{paths:?}: {a:?}");
        assert!(
            a.not_judged[0].contains(no_log) && !a.not_judged[0].contains(no_now),
            "{a:?}"
        );
    }
    let a = answer(&["fixtures/broker"], Some(TS + DAY));
    assert_eq!((a.hanging, a.not_judged.len()), (none.clone(), 0));
    // groups/ beside a coordinator's log that has neither producer.
    let beside = ["fixtures/groups", "fixtures/txn/__transaction_state-0"];
    let a = answer(&beside, Some(TS + DAY));
    let both = [
        ("__offsets-0".to_string(), 7002),
        ("ledger-1".to_string(), 9001),
    ];
    assert_eq!((a.hanging, a.not_judged.len()), (both.into(), 0));
    assert_eq!(
        answer(&beside, Some(TS + MINUTE)).hanging,
        none,
        "not candidates yet"
    );
    // kafka-transactions find-hanging takes any int for
    // --max-transaction-timeout (minutes; TransactionsCommand): at 0, a
    // minute after the last writes both are candidates, and hanging.
    let mut args = vec!["transactions", "--find-hanging", "--format", "json"];
    args.extend(beside);
    let now = (TS + MINUTE).to_string();
    args.extend(["--now-ms", now.as_str(), "--max-transaction-timeout", "0"]);
    let o = run(&args);
    let doc = crate::support::document(&o, "transactions");
    let mut hanging: Vec<i64> = doc["find_hanging"]["candidates"]
        .as_array()
        .unwrap_or_else(|| panic!("{doc}"))
        .iter()
        .filter(|h| h["hanging"] == true)
        .map(|h| h["producer_id"].as_i64().unwrap())
        .collect();
    hanging.sort();
    assert_eq!(hanging, [7002, 9001]);
}

#[test]
fn the_coordinator_says_how_it_ends_each_transaction_on_its_own() {
    // fixtures/txn/__transaction_state-0 (make.sh): slow-app Ongoing, its
    // transaction started at 1700000000000 with a 60000 ms timeout: the
    // coordinator's timeout check aborts it from 1700000060000 on
    // (TransactionStateManager.timedOutTransactions); payments-app is
    // CompleteAbort: nothing to do. A PrepareCommit or PrepareAbort is
    // completed as soon as the coordinator loads its log
    // (loadTransactionsForTxnTopicPartition).
    let env = TestEnv::new();
    let o = env.run(&["transactions", "--format", "json", "fixtures/txn"], None);
    let doc = crate::support::document(&o, "transactions");
    let rows = doc["coordinator"].as_array().unwrap().clone();
    let end = |id: &str| {
        rows.iter().find(|r| r["transactional_id"] == id).unwrap()["coordinator_end"].clone()
    };
    assert_eq!(
        end("slow-app"),
        serde_json::json!({"kind": "aborts_at", "ms": 1700000060000_i64})
    );
    assert_eq!(end("payments-app"), serde_json::Value::Null);
}

/// Text leads with the answer and lists what is not settled: the
/// partitions with an open transaction are those where Kafka's
/// read_committed end (the last stable offset) stands below its
/// read_uncommitted end (fixtures/kafka-real 4.4.0, `expected/list-offsets.json`);
/// the rest are counted, and `--all` lists them; of the coordinator's
/// transactional ids only the Ongoing one (`tx-open`, the `txn` scenario's
/// open transaction) is one it still acts on.
#[test]
fn text_lists_the_open_transactions_and_counts_the_rest() {
    let env = crate::support::TestEnv::new();
    let real = crate::support::repo().join("fixtures/kafka-real/4.4.0");
    let offsets: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(real.join("expected/list-offsets.json")).unwrap(),
    )
    .unwrap();
    let open: Vec<String> = offsets
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["latest_read_committed"] != p["latest_read_uncommitted"])
        .map(|p| format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]))
        .collect();
    let dir = real.join("broker-1");
    let listed = |all: bool| {
        let mut args = vec!["transactions", dir.to_str().unwrap()];
        if all {
            args.push("--all");
        }
        let text = crate::support::stdout(&env.run(&args, None));
        let names: Vec<String> = text
            .lines()
            .filter(|l| l.contains(": log end "))
            .map(|l| l.split(':').next().unwrap().to_string())
            .collect();
        (text, names)
    };
    let (text, names) = listed(false);
    assert_eq!(names, open, "{text}");
    let first = text.lines().next().unwrap();
    let expected = format!(
        "{} open transaction in {} partition;",
        open.len(),
        open.len()
    );
    assert!(first.starts_with(&expected), "{first}");
    let (all_text, all_names) = listed(true);
    let calm = all_names.len() - names.len();
    assert!(
        text.contains(&format!("{calm} more partitions with producers, nothing open and nothing found (--all lists them)")),
        "{text}"
    );
    // The coordinator: tx-open alone by default, every id with --all.
    let ids = |t: &str| {
        t.lines()
            .skip_while(|l| !l.starts_with("coordinator"))
            .filter(|l| l.starts_with("  tx") || l.starts_with("  ctp"))
            .map(|l| l.split_whitespace().next().unwrap().to_string())
            .collect::<Vec<_>>()
    };
    assert_eq!(ids(&text), ["tx-open"], "{text}");
    assert!(ids(&all_text).len() > 1, "{all_text}");
    assert!(all_text.contains("tx-commit") && !text.contains("tx-commit"));
}
