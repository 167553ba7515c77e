use crate::support::{
    check_golden, document, document_rows, encoded, stderr, stdout, write_segment, TestEnv,
};

#[test]
fn klog_directory_table_in_btreemap_order() {
    let env = TestEnv::new();
    let o = check_golden(
        &env,
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "fixtures/groups",
        ],
        0,
        "replay-offsets/groups",
    );
    // Groups come out sorted, the tombstoned group is gone, the aborted and the
    // pending transactional commits are not applied. stdout holds the table
    // only; the summary is on stderr.
    let text = stdout(&o);
    let groups: Vec<&str> = text
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        groups,
        ["analytics", "auditor", "auditor", "courier", "kitchen"]
    );
    assert!(stderr(&o).contains("pending: producer 7002 in __offsets-0: courier orders-0 -> 9"));
}

#[test]
fn kafka_directory_with_every_value_version() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "fixtures/kafka",
        ],
        0,
        "replay-offsets/kafka",
    );
    check_golden(
        &env,
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "fixtures/kafka",
        ],
        0,
        "replay-offsets/kafka-json",
    );
    check_golden(
        &env,
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--format",
            "csv",
            "--group",
            "billing",
            "fixtures/kafka",
        ],
        0,
        "replay-offsets/kafka-billing-csv",
    );
}

#[test]
fn json_rows_have_the_documented_fields() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "fixtures/groups",
        ],
        None,
    );
    let doc = document(&o, "replay-offsets");
    let kitchen = doc["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == "kitchen")
        .unwrap();
    for field in [
        "group",
        "topic",
        "partition",
        "committed_offset",
        "leader_epoch",
        "metadata",
        "commit_timestamp_ms",
    ] {
        assert!(kitchen.get(field).is_some(), "{field}");
    }
    assert_eq!(kitchen["committed_offset"], 15);
    assert_eq!(kitchen["metadata"], "batch-7");
    assert_eq!(
        doc["summary"]["live_keys"], 5,
        "the summary is part of the one JSON document"
    );
}

#[test]
fn history_lists_every_event_in_log_order() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--history",
            "--group",
            "kitchen",
            "fixtures/groups",
        ],
        0,
        "replay-offsets/history-kitchen",
    );
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--history",
            "--group",
            "audit",
            "--format",
            "json",
            "fixtures/groups",
        ],
        None,
    );
    let events = document_rows(&o, "replay-offsets", "history");
    let kinds: Vec<&str> = events
        .iter()
        .map(|e| e["event"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["commit", "tombstone"]);
}

#[test]
fn as_of_replays_only_up_to_that_point() {
    let env = TestEnv::new();
    // Offsets 0..6 of __offsets-0: the six plain commits, before any transaction or tombstone.
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--as-of",
            "offset:6",
            "--format",
            "json",
            "fixtures/groups",
        ],
        None,
    );
    let rows = document_rows(&o, "replay-offsets", "offsets");
    let table: Vec<(String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap().to_string(),
                r["committed_offset"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        table,
        [
            ("analytics".into(), 0),
            ("audit".into(), 20),
            ("courier".into(), 4),
            ("kitchen".into(), 10)
        ]
    );
    // By time: the first three commits were stamped TS+1000..TS+3000.
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--as-of",
            "time:1700000003000",
            "--format",
            "json",
            "fixtures/groups",
        ],
        None,
    );
    let rows = document_rows(&o, "replay-offsets", "offsets");
    assert_eq!(rows.len(), 3, "{rows:?}");
    // The same instant in ISO-8601 (TS = 2023-11-14T22:13:20Z), with and
    // without the prefix, in UTC and at another offset.
    for as_of in [
        "time:2023-11-14T22:13:23Z",
        "2023-11-14T22:13:23.000Z",
        "2023-11-15T00:13:23+02:00",
    ] {
        let o = env.run(
            &[
                "replay-offsets",
                "--now-ms",
                "1700000100000",
                "--as-of",
                as_of,
                "--format",
                "json",
                "fixtures/groups",
            ],
            None,
        );
        let iso = crate::support::document_rows(&o, "replay-offsets", "offsets");
        assert_eq!(iso, rows, "{as_of}");
    }
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--as-of",
            "soon",
            "fixtures/groups",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn undecodable_records_are_reported_and_skipped() {
    let env = TestEnv::new();
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let key = |g: &str| {
        let mut k = vec![0, 1];
        k.extend_from_slice(&(g.len() as i16).to_be_bytes());
        k.extend_from_slice(g.as_bytes());
        k.extend_from_slice(&[0, 6]);
        k.extend_from_slice(b"orders");
        k.extend_from_slice(&0i32.to_be_bytes());
        k
    };
    let lines = [
        // A value of version 9: read as version 4 (KIP-915), whose offset
        // does not fit in the 2 bytes left.
        format!(
            r#"{{"key": {{"base64": "{}"}}, "value": {{"base64": "{}"}}}}"#,
            b64(&key("zeta")),
            b64(&[0, 9, 0, 0])
        ),
        // A key whose group string claims 200 bytes.
        format!(
            r#"{{"key": {{"base64": "{}"}}, "value": null}}"#,
            b64(&[0, 1, 0, 200, b'x'])
        ),
        // A negative committed offset: loaded, with a warning (a non-Java
        // client's commit; OffsetMetadataManager stores it as it is).
        format!(
            r#"{{"key": {{"base64": "{}"}}, "value": {{"base64": "{}"}}}}"#,
            b64(&key("eta")),
            b64(&[
                0, 3, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0,
                0, 0, 0, 0, 0, 0, 0, 0
            ])
        ),
    ];
    let o = env.run(
        &[
            "produce",
            "fixtures/groups",
            "--topic",
            "__offsets",
            "--input-format",
            "json",
            "--timestamp-ms",
            "1",
        ],
        Some(&lines.join("\n")),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "fixtures/groups",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    // Version 9 is one Kafka does not read: its coordinator fails the load.
    assert!(
        err.lines()
            .any(|l| l.contains("partition 0 offset 14: byte ")
                && l.contains("OffsetCommitValue version 9: klog knows versions 0 to 4")),
        "{err}"
    );
    assert!(
        err.lines()
            .any(|l| l.contains("partition 0 offset 15: byte ")
                && l.contains("unexpected end of data")),
        "{err}"
    );
    assert!(
        err.contains("klog: incomplete: __offsets-0: 2 records not read or not applied (the first at offset 14: "),
        "{err}"
    );
    assert!(
        err.contains("warning negative_committed_offset offset 16: eta orders-0"),
        "{err}"
    );
    assert!(stdout(&o)
        .lines()
        .any(|l| l.starts_with("eta") && l.contains(" -1 ")));
    // The rest of the table is intact; the summary (stderr) counts the problems.
    assert!(err.contains("bad records: 2\nwarnings: 1\n"), "{err}");
    assert!(stdout(&o)
        .lines()
        .any(|l| l.starts_with("kitchen") && l.contains(" 15 ")));
}

#[test]
fn no_offsets_topic_is_a_clear_error() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "fixtures/data",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no __offsets or __consumer_offsets partition in fixtures/data"),
        "{}",
        stderr(&o)
    );
}

/// A replayed table: (group, topic, partition) → offset.
type Rows = Vec<((String, String, i64), i64)>;

/// Replay `segment` (encoder.py script) as `__consumer_offsets-0` of a fresh
/// directory: (exit code, JSON rows as (group, topic, partition) → offset,
/// stderr, the whole JSON document).
fn replay_encoded(script: &str, extra: &[&str]) -> (Option<i32>, Rows, String, serde_json::Value) {
    let env = TestEnv::new();
    write_segment(&env.path("data"), "__consumer_offsets-0", &encoded(script));
    let mut args = vec![
        "replay-offsets",
        "--now-ms",
        "1700000100000",
        "--format",
        "json",
    ];
    args.extend_from_slice(extra);
    args.push("data");
    let o = env.run(&args, None);
    let doc = document(&o, "replay-offsets");
    let table = doc["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                (
                    r["group"].as_str().unwrap().to_string(),
                    r["topic"].as_str().unwrap().to_string(),
                    r["partition"].as_i64().unwrap(),
                ),
                r["committed_offset"].as_i64().unwrap(),
            )
        })
        .collect();
    (o.status.code(), table, stderr(&o), doc)
}

/// The summary's transactional commits: applied, aborted, superseded,
/// cancelled, pending.
fn txn_commits(doc: &serde_json::Value) -> [u64; 5] {
    ["applied", "aborted", "superseded", "cancelled", "pending"]
        .map(|k| doc["summary"][format!("txn_commits_{k}")].as_u64().unwrap())
}

/// The pending commits of the document: (offsets-topic partition, producer
/// id, group, topic, partition, committed offset).
fn pending(doc: &serde_json::Value) -> Vec<(i64, i64, String, String, i64, i64)> {
    doc["pending"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["log_partition"].as_i64().unwrap(),
                p["producer_id"].as_i64().unwrap(),
                p["group"].as_str().unwrap().to_string(),
                p["topic"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
                p["committed_offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn key(topic: &str, partition: i64) -> (String, String, i64) {
    ("g".to_string(), topic.to_string(), partition)
}

/// Python helpers shared by the scripts below: one-record batches of group g's commits.
const COMMITS: &str = r#"
def commit(at, topic, part, offset, pid=-1):
    txn = pid >= 0
    return batch(at, [(0, 0, offset_commit_key("g", topic, part),
                       None if offset is None else offset_commit_value(offset, 1700000000000 + at))],
                 producer_id=pid, producer_epoch=0 if txn else -1, base_sequence=0 if txn else -1,
                 attributes=TRANSACTIONAL if txn else 0)
"#;

#[test]
fn a_pending_commit_older_than_the_stored_one_is_not_applied_at_commit() {
    // OffsetMetadataManager.replayEndTransactionMarker: at COMMIT a pending
    // commit replaces the stored one only if its record offset is greater.
    let script = format!(
        "{COMMITS}
out = (commit(0, 'orders', 0, 10, pid=5)      # pending, record offset 0
       + commit(1, 'orders', 0, 20)           # plain, record offset 1: stored
       + control_batch(2, True, 5, 0)         # COMMIT: 0 > 1 is false, 20 stays
       + commit(3, 'orders', 1, 4)            # plain, record offset 3
       + commit(4, 'orders', 1, 7, pid=6)     # pending, record offset 4
       + control_batch(5, True, 6, 0))        # COMMIT: 4 > 3, 7 is stored
"
    );
    let (code, table, err, doc) = replay_encoded(&script, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(table, [(key("orders", 0), 20), (key("orders", 1), 7)]);
    // Applied, aborted, superseded, cancelled, pending.
    assert_eq!(txn_commits(&doc), [1, 0, 1, 0, 0], "{doc}");
    // The history says why the pending commit did not land.
    let env = TestEnv::new();
    write_segment(&env.path("data"), "__consumer_offsets-0", &encoded(&script));
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--history",
            "--format",
            "json",
            "data",
        ],
        None,
    );
    let events = document_rows(&o, "replay-offsets", "history");
    let kinds: Vec<(i64, &str)> = events
        .iter()
        .map(|e| {
            (
                e["log_offset"].as_i64().unwrap(),
                e["event"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            (0, "pending"),
            (1, "commit"),
            (2, "txn_superseded"),
            (3, "commit"),
            (4, "pending"),
            (5, "txn_committed")
        ]
    );
}

#[test]
fn tombstones_cancel_pending_commits_and_delete_at_once() {
    // OffsetMetadataManager.replay, null value: the key is deleted from the
    // store and from every open transaction's pending commits of the group,
    // whether the tombstone's batch is transactional or not.
    let script = format!(
        "{COMMITS}
out = (commit(0, 'orders', 0, 10, pid=5)       # pending for producer 5
       + commit(1, 'orders', 0, None)          # plain tombstone: cancels it
       + control_batch(2, True, 5, 0)          # COMMIT: nothing left to apply
       + commit(3, 'orders', 1, 4)             # plain commit
       + commit(4, 'orders', 1, None, pid=6)   # transactional tombstone: deletes now
       + control_batch(5, False, 6, 0)         # ABORT does not bring the commit back
       + commit(6, 'orders', 2, 9, pid=7)      # pending for producer 7
       + commit(7, 'orders', 2, None, pid=8)   # another producer's tombstone cancels it
       + control_batch(8, True, 7, 0)          # COMMIT of 7: nothing left
       + control_batch(9, True, 8, 0)
       + commit(10, 'orders', 3, 5))           # a survivor, so the table is not empty
"
    );
    let (code, table, err, doc) = replay_encoded(&script, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(table, [(key("orders", 3), 5)]);
    // Two pending commits were cancelled: producer 5's by the tombstone at
    // offset 1, producer 7's by the one at offset 7; the tombstone at offset 4
    // had nothing pending to drop.
    assert_eq!(txn_commits(&doc), [0, 0, 0, 2, 0], "{doc}");
    // Before its ABORT (offset 5), the transactional tombstone already deleted orders-1.
    let (_, table, _, _) = replay_encoded(&script, &["--as-of", "offset:5"]);
    assert_eq!(table, []);
    let (_, table, _, _) = replay_encoded(&script, &["--as-of", "offset:4"]);
    assert_eq!(table, [(key("orders", 1), 4)]);
}

#[test]
fn commits_inside_a_legacy_gzip_wrapper_are_replayed() {
    // A 0.10-era broker with offsets.topic.compression.codec=gzip wrote magic-1
    // wrappers; AbstractLegacyRecordBatch yields the inner messages at their
    // absolute offsets: wrapper offset 2 − last relative offset 2 + relative 0..2.
    let script = format!(
        "{COMMITS}
ts = 1700000000000
out = (legacy_gzip_wrapper(2, [
          (offset_commit_key('g', 'orders', 0), offset_commit_value(3, ts, version=1, expire_timestamp=ts + 1), ts),
          (offset_commit_key('g', 'orders', 1), offset_commit_value(4, ts, version=1, expire_timestamp=ts + 1), ts),
          (offset_commit_key('g', 'orders', 0), offset_commit_value(6, ts, version=1, expire_timestamp=ts + 1), ts)])
       + commit(3, 'orders', 1, 8))    # after the upgrade, a v2 batch
"
    );
    let (code, table, err, doc) = replay_encoded(&script, &[]);
    assert_eq!(code, Some(0), "{err}");
    // orders-0: the wrapper's last commit for it (6); orders-1: the v2 batch (8).
    assert_eq!(table, [(key("orders", 0), 6), (key("orders", 1), 8)]);
    assert_eq!(doc["summary"]["records"], 4, "{doc}");
    // Inner offsets are the messages' own: below offset 2 only the first two count.
    let (_, table, _, _) = replay_encoded(&script, &["--as-of", "offset:2"]);
    assert_eq!(table, [(key("orders", 0), 3), (key("orders", 1), 4)]);
}

#[test]
fn what_the_broker_loads_is_loaded_with_a_warning() {
    // A non-Java client's negative committed offset: OffsetMetadataManager
    // stores it. A negative record type: GroupCoordinatorRecordSerde knows no
    // such type and CoordinatorLoaderImpl skips the record. Bytes after a
    // value: the generated reader stops after the version's fields.
    let script = format!(
        "{COMMITS}
import struct
neg = struct.pack('>h', 3) + struct.pack('>q', -1) + struct.pack('>i', -1) + string16('') + struct.pack('>q', 1)
out = (batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), neg)])
       + batch(1, [(0, 0, struct.pack('>h', -1) + b'junk', b'whatever')])
       + batch(2, [(0, 0, offset_commit_key('g', 'orders', 1), offset_commit_value(7, 1) + b'extra')])
       + batch(3, [(0, 0, offset_commit_key('g', 'orders', 2) + b'!', offset_commit_value(8, 1))]))
"
    );
    let (code, table, err, doc) = replay_encoded(&script, &[]);
    assert_eq!(code, Some(0), "warnings do not fail the run: {err}");
    assert_eq!(
        table,
        [
            (key("orders", 0), -1),
            (key("orders", 1), 7),
            (key("orders", 2), 8),
        ]
    );
    assert_eq!(
        doc["summary"]["other_record_types"],
        serde_json::json!({"type -1": 1}),
        "{doc}"
    );
    assert_eq!(
        (&doc["summary"]["bad_records"], &doc["summary"]["warnings"]),
        (&serde_json::json!(0), &serde_json::json!(3)),
        "{doc}"
    );
    assert_eq!(doc["incomplete"], serde_json::json!([]), "{doc}");
    assert!(
        err.contains(" warning negative_committed_offset offset 0: g orders-0: committed offset -1 is negative"),
        "{err}"
    );
    assert!(
        err.contains(" warning trailing_bytes offset 2: 5 bytes after the value's last field"),
        "{err}"
    );
    assert!(
        err.contains(" warning trailing_bytes offset 3: 1 byte after the key's last field"),
        "{err}"
    );
}

#[test]
fn a_marker_with_a_negative_version_is_refused() {
    // EndTransactionMarker.deserializeValue refuses a negative version ("may
    // indicate data corruption"): the COMMIT is a bad record and the
    // transaction's commit stays pending.
    let script = format!(
        "{COMMITS}
out = commit(0, 'orders', 0, 10, pid=5) + control_batch(1, True, 5, 0, marker_version=-1)
"
    );
    let (code, table, err, doc) = replay_encoded(&script, &[]);
    assert_eq!(code, Some(1), "{err}");
    assert_eq!(table, []);
    assert!(
        err.contains("negative transaction marker value version"),
        "{err}"
    );
    assert_eq!(doc["summary"]["topic"], "__consumer_offsets");
    assert_eq!(
        pending(&doc),
        [(0, 5, "g".into(), "orders".into(), 0, 10)],
        "{doc}"
    );
}

#[test]
fn a_commit_in_any_batch_with_a_producer_id_waits_for_its_marker() {
    // CoordinatorLoaderImpl hands OffsetMetadataManager.replay the batch's
    // producer id, and a commit is pending whenever that id is not -1, the
    // batch's transactional flag aside.
    let script = "import struct
out = (batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), offset_commit_value(3, 1))],
             producer_id=9, producer_epoch=0, base_sequence=0)
       + batch(1, [(0, 0, offset_commit_key('g', 'orders', 1), offset_commit_value(4, 1))]))";
    let (code, table, err, doc) = replay_encoded(script, &[]);
    assert_eq!(code, Some(0), "{err}");
    assert_eq!(table, [(key("orders", 1), 4)]);
    assert_eq!(doc["summary"]["topic"], "__consumer_offsets");
    assert_eq!(
        pending(&doc),
        [(0, 9, "g".into(), "orders".into(), 0, 3)],
        "{doc}"
    );
    let (_, table, _, _) = replay_encoded(
        &format!("{script}\nout += control_batch(2, True, 9, 0)"),
        &[],
    );
    assert_eq!(table, [(key("orders", 0), 3), (key("orders", 1), 4)]);
}

#[test]
fn commit_timestamps_show_as_dates_in_text_and_as_ms_in_csv_and_json() {
    let env = TestEnv::new();
    let run = |format: &str| {
        let args = [
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--group",
            "kitchen",
        ];
        let o = env.run(
            &[&args[..], &["--format", format, "fixtures/groups"]].concat(),
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    // make.sh: kitchen's 15 is the 8th commit, stamped TS + 8 s, and TS =
    // 1700000000000 ms = 2023-11-14T22:13:20Z.
    let text = run("text");
    assert!(text.contains("  2023-11-14T22:13:28.000Z  ok\n"), "{text}");
    // CSV and JSON keep epoch milliseconds whatever the time format.
    let csv = run("csv");
    assert!(
        csv.contains("kitchen,orders,0,15,-1,batch-7,1700000008000,ok\n"),
        "{csv}"
    );
    let doc: serde_json::Value = serde_json::from_str(&run("json")).unwrap();
    assert_eq!(
        doc["offsets"][0]["commit_timestamp_ms"],
        1_700_000_008_000i64
    );
}

#[test]
fn a_value_version_kafka_does_not_read_fails_the_load() {
    // CoordinatorRecordSerde.deserialize throws UnknownRecordVersionException
    // for a value version outside the schema's (OffsetCommitValue 0..=4,
    // LegacyOffsetCommitValue 0 alone under key type 0) and
    // CoordinatorLoaderImpl fails the partition's load: never applied, never
    // read with another version's layout, and the table says it is incomplete.
    let script = "
import struct
v6 = struct.pack('>hqi', 6, 11, -1) + bytes([1]) + struct.pack('>q', 1) + bytes([0])
out = (batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), offset_commit_value(5, 1))])
       + batch(1, [(0, 0, offset_commit_key('g', 'orders', 0), v6)])
       + batch(2, [(0, 0, offset_commit_key('g', 'orders', 1, record_type=0), offset_commit_value(7, 1, version=1))])
       + batch(3, [(0, 0, offset_commit_key('g', 'orders', 2, record_type=0), offset_commit_value(8, 1, version=0))]))";
    let (code, table, err, doc) = replay_encoded(script, &[]);
    assert_eq!(code, Some(1), "{err}");
    // orders-0 keeps the commit before the refused one; orders-1's v1 under key type 0 is refused.
    assert_eq!(table, [(key("orders", 0), 5), (key("orders", 2), 8)]);
    assert!(
        err.contains("offset 1: byte ")
            && err.contains("OffsetCommitValue version 6: klog knows versions 0 to 4"),
        "{err}"
    );
    assert!(
        err.contains("offset 2: byte ")
            && err.contains("LegacyOffsetCommitValue version 1: klog knows version 0 only")
            && err.contains("UnknownRecordVersionException"),
        "{err}"
    );
    let inc = &doc["incomplete"][0];
    assert_eq!(
        (&inc["partition"], &inc["unread"], &inc["first_offset"]),
        (
            &serde_json::json!("__consumer_offsets-0"),
            &serde_json::json!(2),
            &serde_json::json!(1)
        ),
        "{doc}"
    );
    // Text and CSV say it on stderr; jsonl in a line of its own.
    let env = TestEnv::new();
    write_segment(&env.path("data"), "__consumer_offsets-0", &encoded(script));
    for format in ["text", "csv"] {
        let o = env.run(&["replay-offsets", "--format", format, "data"], None);
        assert_eq!(o.status.code(), Some(1));
        assert!(
            stderr(&o).contains(
                "klog: incomplete: __consumer_offsets-0: 2 records not read or not applied"
            ),
            "{}",
            stderr(&o)
        );
    }
    let o = env.run(&["replay-offsets", "--format", "jsonl", "data"], None);
    let lines = crate::support::jsonl(&o, "replay-offsets");
    assert_eq!(lines[0]["type"], "incomplete", "{lines:?}");
}

/// A data directory with `__consumer_offsets-0` from `script` and a folder
/// `orders-0` whose partition.metadata gives the topic id `id` (base64).
fn with_orders(env: &TestEnv, script: &str, id: &str) {
    write_segment(&env.path("data"), "__consumer_offsets-0", &encoded(script));
    write_segment(
        &env.path("data"),
        "orders-0",
        &encoded("out = batch(0, [(i, i, None, b'x') for i in range(10)])"),
    );
    std::fs::write(
        env.path("data/orders-0/partition.metadata"),
        format!("version: 0\ntopic_id: {id}\n"),
    )
    .unwrap();
}

#[test]
fn an_offset_of_a_recreated_topic_is_stale() {
    // OffsetMetadataManager.isMismatchedTopicId: a v4 value's topic id that is
    // set and not the topic's current id (partition.metadata here) fetches no
    // offset for a request by topic id (OffsetFetch v10: isOffsetInvalid);
    // by name (topic id zero) and in fetchAllOffsets it is returned. A v4
    // without the id, or with the current one, is live.
    let env = TestEnv::new();
    let old = "b'\\x01' * 16";
    let script = format!(
        "out = (batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), offset_commit_value_v4(4, -1, '', 1700000000000, {old}))])
       + batch(1, [(0, 0, offset_commit_key('h', 'orders', 0), offset_commit_value_v4(6, -1, '', 1700000000000, b'\\x02' * 16))])
       + batch(2, [(0, 0, offset_commit_key('i', 'orders', 0), offset_commit_value_v4(7, -1, '', 1700000000000))]))"
    );
    // The current id: 16 bytes of 2, as Uuid.toString writes them.
    let current = "AgICAgICAgICAgICAgICAg";
    with_orders(&env, &script, current);
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "data",
        ],
        None,
    );
    let rows = document_rows(&o, "replay-offsets", "offsets");
    let status: Vec<(&str, &str, Option<&str>)> = rows
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap(),
                r["status"].as_str().unwrap(),
                r["topic_id"].as_str(),
            )
        })
        .collect();
    assert_eq!(
        status,
        [
            ("g", "topic_recreated", Some("AQEBAQEBAQEBAQEBAQEBAQ")),
            ("h", "ok", Some(current)),
            ("i", "ok", None)
        ]
    );
    // Text says on stderr which clients see the stale offset.
    let o = env.run(
        &["replay-offsets", "--now-ms", "1700000100000", "data"],
        None,
    );
    assert!(
        stderr(&o).contains("topic_recreated") && stderr(&o).contains("classic consumer"),
        "{}",
        stderr(&o)
    );
    // lag: the stale offset's lag on the new topic, as kafka-consumer-groups
    // shows it (its admin client fetches by name): log end 10 (no
    // checkpointed high watermark) - 4.
    let o = env.run(
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "data",
        ],
        None,
    );
    let rows = document_rows(&o, "lag", "partitions");
    let g = rows.iter().find(|r| r["group"] == "g").unwrap();
    assert_eq!(
        (g["status"].as_str(), g["lag"].as_i64()),
        (Some("topic_recreated"), Some(6)),
        "{g}"
    );
    let h = rows.iter().find(|r| r["group"] == "h").unwrap();
    assert_eq!(
        (h["status"].as_str(), h["lag"].as_i64()),
        (Some("ok"), Some(4)),
        "{h}"
    );
}

#[test]
fn offsets_past_the_retention_are_expired() {
    // OffsetExpirationConditionImpl: now - base >= offsets.retention.ms, the
    // base being the commit timestamp for a group with committed offsets only
    // (a classic group without a protocol type); a v1 value's
    // expireTimestamp: now >= expireTimestamp.
    const T: i64 = 1_700_000_000_000;
    const WEEK: i64 = 7 * 24 * 60 * 60 * 1000;
    let env = TestEnv::new();
    let script = format!(
        "out = (batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), offset_commit_value(4, {T}))])
       + batch(1, [(0, 0, offset_commit_key('v1', 'orders', 0), offset_commit_value(5, {T}, version=1, expire_timestamp={T} + 1000))]))"
    );
    with_orders(&env, &script, "AgICAgICAgICAgICAgICAg");
    let status = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["replay-offsets", "--format", "json"];
        args.extend_from_slice(extra);
        args.push("data");
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        document_rows(&o, "replay-offsets", "offsets")
            .iter()
            .map(|r| r["status"].as_str().unwrap().to_string())
            .collect()
    };
    let at = |ms: i64| ms.to_string();
    assert_eq!(status(&["--now-ms", &at(T + 999)]), ["ok", "ok"]);
    assert_eq!(status(&["--now-ms", &at(T + 1000)]), ["ok", "expired"]);
    assert_eq!(status(&["--now-ms", &at(T + WEEK - 1)]), ["ok", "expired"]);
    assert_eq!(status(&["--now-ms", &at(T + WEEK)]), ["expired", "expired"]);
    assert_eq!(
        status(&[
            "--now-ms",
            &at(T + 60_000),
            "--offsets-retention-minutes",
            "1"
        ]),
        ["expired", "expired"]
    );
    // lag keeps the committed offset's lag and says expired.
    let o = env.run(
        &["lag", "--now-ms", &at(T + WEEK), "--format", "json", "data"],
        None,
    );
    let rows = document_rows(&o, "lag", "partitions");
    let g = rows.iter().find(|r| r["group"] == "g").unwrap();
    assert_eq!(
        (g["status"].as_str(), g["lag"].as_i64()),
        (Some("expired"), Some(6)),
        "{g}"
    );
}

#[test]
fn a_consumer_groups_subscribed_topics_do_not_expire() {
    // OffsetMetadataManager.cleanupExpiredOffsets expires only offsets of
    // topics the group is not subscribed to (ModernGroup.isSubscribedToTopic:
    // its members' subscribed topic names); a consumer group counts from the
    // commit timestamp (ConsumerGroup.offsetExpirationCondition).
    const T: i64 = 1_700_000_000_000;
    const WEEK: i64 = 7 * 24 * 60 * 60 * 1000;
    let env = TestEnv::new();
    let script = format!(
        "recs = [
  (coordinator_key(3, 'cg'), consumer_group_metadata_value(1)),
  (coordinator_key(5, 'cg', 'm-1'), consumer_group_member_metadata_value(None, None, 'app', '/h', ['orders'], None, 1000, 'uniform')),
  (offset_commit_key('cg', 'orders', 0), offset_commit_value(4, {T})),
  (offset_commit_key('cg', 'gone', 0), offset_commit_value(4, {T})),
]
out = batch(0, [(i, i, k, v) for i, (k, v) in enumerate(recs)])"
    );
    with_orders(&env, &script, "AgICAgICAgICAgICAgICAg");
    let now = (T + WEEK).to_string();
    let o = env.run(
        &[
            "replay-offsets",
            "--now-ms",
            &now,
            "--format",
            "json",
            "data",
        ],
        None,
    );
    let status: Vec<(String, String)> = document_rows(&o, "replay-offsets", "offsets")
        .iter()
        .map(|r| {
            (
                r["topic"].as_str().unwrap().to_string(),
                r["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    assert_eq!(
        status,
        [
            ("gone".to_string(), "expired".to_string()),
            ("orders".to_string(), "ok".to_string())
        ]
    );
}

#[test]
fn a_classic_group_counts_as_kafka_counts_it() {
    // ClassicGroup.offsetExpirationCondition: an Empty group with a protocol
    // type counts from its currentStateTimestamp (when it became Empty); a
    // group with members whose subscriptions the coordinator cannot read
    // (billing: an empty subscription) expires nothing; a group with
    // committed offsets only counts from each commit, and a v1 value from
    // its expireTimestamp.
    const T: i64 = 1_700_000_000_000;
    const DAY: i64 = 24 * 60 * 60 * 1000;
    let env = TestEnv::new();
    let script = format!(
        "group = (i16(3) + s16('consumer') + i32(2) + s16('range') + i16(-1) + i64({T} + {DAY})
         + i32(0))
out = batch(0, [(0, 0, offset_commit_key('quiet', 'orders', 0), offset_commit_value(4, {T})),
                (1, 1, i16(2) + s16('quiet'), group)])"
    );
    with_orders(&env, &script, "AgICAgICAgICAgICAgICAg");
    let status = |dir: &str, now: i64| -> Vec<(String, String)> {
        let now = now.to_string();
        let o = env.run(
            &["replay-offsets", "--now-ms", &now, "--format", "json", dir],
            None,
        );
        document_rows(&o, "replay-offsets", "offsets")
            .iter()
            .map(|r| {
                (
                    r["group"].as_str().unwrap().to_string(),
                    r["status"].as_str().unwrap().to_string(),
                )
            })
            .collect()
    };
    let quiet = |s: &str| vec![("quiet".to_string(), s.to_string())];
    assert_eq!(status("data", T + 8 * DAY - 1), quiet("ok"));
    assert_eq!(status("data", T + 8 * DAY), quiet("expired"));
    let kafka: Vec<(String, String)> = status("fixtures/kafka", T + 30 * DAY);
    let want = [
        ("billing", "ok"),
        ("billing", "ok"),
        ("polygenelubricants", "expired"),
        ("reports", "expired"),
        ("reports", "expired"),
        ("shipping", "expired"),
        ("shipping", "expired"),
    ];
    assert_eq!(
        kafka,
        want.iter()
            .map(|(g, s)| (g.to_string(), s.to_string()))
            .collect::<Vec<_>>()
    );
}

#[test]
fn a_minus_one_expire_timestamp_is_not_set() {
    // OffsetAndMetadata.fromRecord reads a v1 value's expireTimestamp through
    // Utils.ofSentinel: -1 is no expire timestamp, so
    // OffsetExpirationConditionImpl uses now - base >= offsets.retention.ms
    // (base: the commit timestamp, for a group with committed offsets only)
    // instead of now >= expireTimestamp. `later` keeps its expireTimestamp.
    const T: i64 = 1_700_000_000_000;
    const WEEK: i64 = 7 * 24 * 60 * 60 * 1000;
    let env = TestEnv::new();
    let script = format!(
        "out = (batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), offset_commit_value(4, {T}, version=1, expire_timestamp=-1))])
       + batch(1, [(0, 0, offset_commit_key('later', 'orders', 0), offset_commit_value(5, {T}, version=1, expire_timestamp={T} + 1000))]))"
    );
    with_orders(&env, &script, "AgICAgICAgICAgICAgICAg");
    let run = |cmd: &str, now: i64, extra: &[&str], field: &str| -> Vec<serde_json::Value> {
        let now = now.to_string();
        let args = [
            &[cmd, "--format", "json", "--now-ms", &now][..],
            extra,
            &["data"],
        ]
        .concat();
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        document_rows(&o, cmd, field)
    };
    let status = |cmd: &str, now: i64, extra: &[&str]| -> Vec<String> {
        let field = if cmd == "lag" {
            "partitions"
        } else {
            "offsets"
        };
        run(cmd, now, extra, field)
            .iter()
            .map(|r| {
                format!(
                    "{}:{}",
                    r["group"].as_str().unwrap(),
                    r["status"].as_str().unwrap()
                )
            })
            .collect()
    };
    // The value's -1 is shown as absent.
    let rows = run("replay-offsets", T, &[], "offsets");
    let expire: Vec<_> = rows
        .iter()
        .map(|r| r["expire_timestamp_ms"].clone())
        .collect();
    assert_eq!(
        expire,
        [serde_json::Value::Null, serde_json::Value::from(T + 1000)]
    );
    let o = env.run(
        &["replay-offsets", "--now-ms", &T.to_string(), "data"],
        None,
    );
    let text = stdout(&o);
    assert!(!text.contains("1969"), "{text}");
    // An hour after the commit Kafka keeps g's offset; a week after, it is past the retention.
    for cmd in ["replay-offsets", "lag"] {
        assert_eq!(
            status(cmd, T + 3_600_000, &[]),
            ["g:ok", "later:expired"],
            "{cmd}"
        );
        assert_eq!(
            status(cmd, T + WEEK - 1, &[]),
            ["g:ok", "later:expired"],
            "{cmd}"
        );
        assert_eq!(
            status(cmd, T + WEEK, &[]),
            ["g:expired", "later:expired"],
            "{cmd}"
        );
        let one = ["--offsets-retention-minutes", "1"];
        assert_eq!(
            status(cmd, T + 59_999, &one),
            ["g:ok", "later:expired"],
            "{cmd}"
        );
        assert_eq!(
            status(cmd, T + 60_000, &one),
            ["g:expired", "later:expired"],
            "{cmd}"
        );
    }
    // The report's lag cells say the same.
    let page = env.path("r.html");
    let now = (T + 3_600_000).to_string();
    let o = env.run(
        &[
            "report",
            "-o",
            page.to_str().unwrap(),
            "--now-ms",
            &now,
            "data",
        ],
        None,
    );
    assert!(matches!(o.status.code(), Some(0 | 1)), "{o:?}");
    let html = std::fs::read_to_string(&page).unwrap();
    assert_eq!(crate::support::report_lag_statuses(&html, "g"), ["ok"]);
    assert_eq!(
        crate::support::report_lag_statuses(&html, "later"),
        ["expired"]
    );
}
