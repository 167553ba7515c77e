use crate::support::{dump_batches, snapshot, stderr, stdout, LockHolder, TestEnv};

fn dump_records(env: &TestEnv, partition: &str) -> Vec<serde_json::Value> {
    let o = env.run(&["dump-segment", "--format", "json", partition], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    dump_batches(&o)
        .iter()
        .flat_map(|b| b["records"].as_array().unwrap().clone())
        .collect()
}

#[test]
fn records_come_back_identical_through_dump_segment() {
    let env = TestEnv::new();
    let input = [
        r#"{"key": "k1", "value": "v1", "timestamp": 1700000000000}"#,
        r#"{"key": null, "value": "no key", "timestamp": 1700000000005}"#,
        r#"{"key": "gone", "value": null, "timestamp": 1699999999000}"#,
        r#"{"key": "h", "value": "", "headers": [{"key": "a", "value": "1"}, {"key": "a", "value": null}], "timestamp": 1700000000001}"#,
        r#"{"key": "ü", "value": "ünïcödé ✓", "timestamp": 1700000000002}"#,
    ]
    .join("\n");
    let mut expected_offset = 0;
    for codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
        let o = env.run(
            &[
                "produce",
                "out",
                "--topic",
                "rt",
                "--input-format",
                "json",
                "--batch-size",
                "2",
                "--compression",
                codec,
            ],
            Some(&input),
        );
        assert_eq!(o.status.code(), Some(0), "{codec}: {}", stderr(&o));
        assert_eq!(
            stdout(&o),
            format!(
                "rt-0 offsets {}..={} (2 records)\nrt-0 offsets {}..={} (2 records)\nrt-0 offsets {}..={} (1 record)\n",
                expected_offset,
                expected_offset + 1,
                expected_offset + 2,
                expected_offset + 3,
                expected_offset + 4,
                expected_offset + 4
            )
        );
        expected_offset += 5;
    }
    let records = dump_records(&env, "out/rt-0");
    assert_eq!(records.len(), 25);
    for (i, r) in records.iter().enumerate() {
        let want: serde_json::Value =
            serde_json::from_str(input.lines().nth(i % 5).unwrap()).unwrap();
        assert_eq!(r["offset"], i as i64, "record {i}");
        assert_eq!(r["key"], want["key"], "record {i}");
        assert_eq!(r["value"], want["value"], "record {i}");
        assert_eq!(r["timestamp"], want["timestamp"], "record {i}");
        let headers = want
            .get("headers")
            .cloned()
            .unwrap_or(serde_json::json!([]));
        assert_eq!(r["headers"], headers, "record {i}");
    }
    let o = env.run(&["verify-crc", "out"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn text_lines_with_key_separator_and_segment_roll() {
    let env = TestEnv::new();
    let input: String = (0..300)
        .map(|i| format!("key-{i}\tvalue number {i}\n"))
        .collect();
    let o = env.run(
        &[
            "produce",
            "d",
            "--topic",
            "t",
            "--key-separator",
            "\t",
            "--batch-size",
            "7",
            "--segment-bytes",
            "4000",
            "--timestamp-ms",
            "5",
        ],
        Some(&input),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let logs: Vec<_> = std::fs::read_dir(env.path("d/t-0"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert!(logs.len() >= 3, "segments rolled: {logs:?}");
    let records = dump_records(&env, "d/t-0");
    assert_eq!(records.len(), 300);
    for (i, r) in records.iter().enumerate() {
        assert_eq!(r["offset"], i);
        assert_eq!(r["key"], format!("key-{i}"));
        assert_eq!(r["value"], format!("value number {i}"));
        assert_eq!(r["timestamp"], 5);
    }
    assert_eq!(env.run(&["verify-crc", "d"], None).status.code(), Some(0));
}

/// Not a test of its own: when KLOG_TEST_HOLD_LOCK names a data directory,
/// take its lock, say so, and hold it until stdin closes. The lock test
/// runs this test binary as a second process.
#[test]
fn lock_holder() {
    let Some(dir) = std::env::var_os("KLOG_TEST_HOLD_LOCK") else {
        return;
    };
    let _lock = kaen_log::log::lock::DirLock::acquire(std::path::Path::new(&dir)).unwrap();
    println!("LOCKED");
    let mut line = String::new();
    let _ = std::io::stdin().read_line(&mut line);
}

#[test]
fn append_refuses_while_another_process_holds_the_lock() {
    let env = TestEnv::new();
    let data = env.path("fixtures/data");
    let log = data.join("payments.eu-west-1/00000000000000000000.log");
    let before = std::fs::read(&log).unwrap();
    let holder = LockHolder::new(&data);
    let o = env.run(
        &[
            "produce",
            "fixtures/data",
            "--topic",
            "payments.eu-west",
            "--partition",
            "1",
        ],
        Some("x\n"),
    );
    drop(holder);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("locked by another process"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&log).unwrap(), before, "nothing written");
    // Once the holder is gone the same append goes through.
    let o = env.run(
        &[
            "produce",
            "fixtures/data",
            "--topic",
            "payments.eu-west",
            "--partition",
            "1",
        ],
        Some("x\n"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn append_refuses_behind_a_damaged_tail() {
    let env = TestEnv::new();
    let log = env.path("fixtures/truncated/orders-0/00000000000000000090.log");
    let before = std::fs::read(&log).unwrap();
    let o = env.run(
        &["produce", "fixtures/truncated", "--topic", "orders"],
        Some("x\n"),
    );
    assert_eq!(o.status.code(), Some(2));
    let err = stderr(&o);
    assert!(
        err.contains("refusing to append behind a damaged tail") && err.contains("torn tail"),
        "{err}"
    );
    assert!(err.contains("klog verify-crc"), "{err}");
    assert_eq!(std::fs::read(&log).unwrap(), before, "nothing written");
}

#[test]
fn bad_produce_input() {
    let env = TestEnv::new();
    let o = env.run(&["produce", "d", "--topic", "bad topic"], Some("x\n"));
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "Topic name is invalid: \"bad topic\" contains one or more characters other than"
        ),
        "{}",
        stderr(&o)
    );
    let o = env.run(
        &["produce", "d", "--topic", "t", "--input-format", "json"],
        Some("{\"value\": 1}\nnot json\n"),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("stdin line 2"), "{}", stderr(&o));
}

#[test]
fn an_idempotent_producer_continues_its_sequence_across_batches() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "produce",
            "d",
            "--topic",
            "t",
            "--producer-id",
            "9",
            "--base-sequence",
            "2147483646",
            "--batch-size",
            "2",
        ],
        Some("a\nb\nc\nd\ne\n"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "--batches-only",
            "d/t-0",
        ],
        None,
    );
    let seqs: Vec<i64> = dump_batches(&o)
        .iter()
        .map(|b| b["base_sequence"].as_i64().unwrap())
        .collect();
    assert_eq!(seqs, [2147483646, 0, 2], "sequences wrap at i32::MAX to 0");
    let o = env.run(&["transactions", "d"], None);
    assert_eq!(
        o.status.code(),
        Some(0),
        "no sequence findings: {}",
        stdout(&o)
    );
}

#[test]
fn what_was_written_in_every_format() {
    let env = TestEnv::new();
    let input = "a\nb\nc\nd\ne\n";
    let produce = |format: &str| {
        env.run(
            &[
                "produce",
                "d",
                "--topic",
                "t",
                "--batch-size",
                "2",
                "--input-format",
                "text",
                "--format",
                format,
            ],
            Some(input),
        )
    };
    // Five lines in batches of two: offsets 0..=1, 2..=3 and 4 of the
    // first run; each run appends after the last.
    let o = produce("csv");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "topic,partition,first_offset,last_offset,records,control\n\
         t,0,0,1,2,\n\
         t,0,2,3,2,\n\
         t,0,4,4,1,\n"
    );
    let o = produce("json");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = crate::support::document(&o, "produce");
    let spans: Vec<(i64, i64, u64)> = doc["batches"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| {
            assert_eq!(
                (b["topic"].as_str(), b["partition"].as_i64()),
                (Some("t"), Some(0))
            );
            assert!(b["control"].is_null());
            (
                b["first_offset"].as_i64().unwrap(),
                b["last_offset"].as_i64().unwrap(),
                b["records"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(spans, [(5, 6, 2), (7, 8, 2), (9, 9, 1)]);
    let o = produce("text");
    assert_eq!(
        stdout(&o),
        "t-0 offsets 10..=11 (2 records)\nt-0 offsets 12..=13 (2 records)\nt-0 offsets 14..=14 (1 record)\n"
    );
    // A transaction marker is one batch of one control record.
    let o = env.run(
        &[
            "produce",
            "d",
            "--topic",
            "t",
            "--producer-id",
            "7",
            "--control",
            "abort",
            "--format",
            "csv",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "topic,partition,first_offset,last_offset,records,control\nt,0,15,15,1,abort\n"
    );
}

#[test]
fn format_json_is_never_taken_for_the_input_format() {
    let env = TestEnv::new();
    // Earlier releases read `--format json` as the input's format: it is
    // refused unless --input-format says which, and nothing is written.
    let o = env.run(
        &["produce", "d", "--topic", "t", "--format", "json"],
        Some("{\"value\": \"v\"}\n"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert_eq!(stdout(&o), "");
    assert!(stderr(&o).contains("--input-format"), "{}", stderr(&o));
    assert!(!env.path("d/t-0").exists());
    // Said, it is JSON in and JSON out.
    let o = env.run(
        &[
            "produce",
            "d",
            "--topic",
            "t",
            "--input-format",
            "json",
            "--format",
            "json",
        ],
        Some("{\"key\": \"k\", \"value\": \"v\", \"timestamp\": 1700000000000}\n"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = crate::support::document(&o, "produce");
    assert_eq!(doc["batches"][0]["first_offset"], 0);
    assert_eq!(doc["batches"][0]["records"], 1);
    let records = dump_records(&env, "d/t-0");
    assert_eq!(records[0]["key"], "k");
    assert_eq!(records[0]["value"], "v");
}

/// A copy of the three brokers' log directories of the 4.4.0 cluster of
/// the oracle matrix (written by Kafka, not by klog).
fn kafka_cluster() -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    let tree = crate::support::repo().join("fixtures/kafka-real/4.4.0");
    for b in ["broker-1", "broker-2", "broker-3"] {
        crate::support::copy_dir(&tree.join(b), &tmp.path().join(b));
    }
    tmp
}

/// `echo x | klog produce broker-1 --topic recreated --replica broker-2 --replica broker-3`.
fn produce_to_every_replica(env: &TestEnv, cluster: &std::path::Path) -> std::process::Output {
    let dir = |b: &str| cluster.join(b).to_str().unwrap().to_string();
    let (b1, b2, b3) = (dir("broker-1"), dir("broker-2"), dir("broker-3"));
    env.run(
        &[
            "produce",
            &b1,
            "--topic",
            "recreated",
            "--replica",
            &b2,
            "--replica",
            &b3,
        ],
        Some("x\n"),
    )
}

/// `leader-epoch-checkpoint` entries (epoch, start offset).
fn epochs(partition: &std::path::Path) -> Vec<(i32, i64)> {
    let text = std::fs::read_to_string(partition.join("leader-epoch-checkpoint")).unwrap();
    text.lines()
        .skip(2)
        .map(|l| {
            let (e, s) = l.split_once(' ').unwrap();
            (e.parse().unwrap(), s.parse().unwrap())
        })
        .collect()
}

/// The partitionLeaderEpoch of every batch from `from` on.
fn batch_epochs(env: &TestEnv, partition: &str, from: i64) -> Vec<i64> {
    crate::support::batches_from_offset(env, partition, from)
        .iter()
        .map(|b| b["partition_leader_epoch"].as_i64().unwrap())
        .collect()
}

#[test]
fn produce_to_a_kafka_partition_follows_the_writers_rules() {
    // Broker 1 led `recreated-0` last at epoch 3, elected at the log end
    // (3) after the last write: its leader-epoch-checkpoint holds 0@0 and
    // 3@3; brokers 2 and 3 hold 0@0. The KRaft metadata gives the
    // partition replicas on nodes 2, 3 and 1.
    let env = TestEnv::new();
    let cluster = kafka_cluster();
    let dir = |b: &str| cluster.path().join(b);
    let part = |b: &str| dir(b).join("recreated-0");
    let newest = epochs(&part("broker-1"));
    assert_eq!(newest.last(), Some(&(3, 3)), "the fixture's epochs");
    let log_end = 3;
    let b1 = dir("broker-1");
    let b1 = b1.to_str().unwrap();

    // One replica of three: refused, nothing changes, the message names --replica.
    let before = snapshot(cluster.path());
    let o = env.run(&["produce", b1, "--topic", "recreated"], Some("x\n"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--replica DIR"), "{}", stderr(&o));
    assert!(stderr(&o).contains("[2, 3]"), "{}", stderr(&o));
    assert_eq!(snapshot(cluster.path()), before);

    // An epoch below the partition's newest is refused: a leader never
    // writes under an older one, and the checkpoint only ever grows.
    let o = env.run(
        &[
            "produce",
            b1,
            "--topic",
            "recreated",
            "--allow-missing-replicas",
            "--leader-epoch",
            "0",
        ],
        Some("x\n"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(snapshot(cluster.path()), before);

    // Every replica: each gets the batch at the log end, stamped with the
    // newest epoch, and each checkpoint ends with 3@3 (extended, never cut).
    let o = produce_to_every_replica(&env, cluster.path());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), "recreated-0 offsets 3..=3 (1 record)\n");
    for b in ["broker-1", "broker-2", "broker-3"] {
        assert_eq!(epochs(&part(b)), newest, "{b}");
        let p = part(b);
        assert_eq!(batch_epochs(&env, p.to_str().unwrap(), log_end), [3], "{b}");
    }
}

#[test]
fn produce_refuses_replicas_of_another_cluster_or_topic() {
    let env = TestEnv::new();
    let cluster = kafka_cluster();
    let dir = |b: &str| cluster.path().join(b);
    let (b2, b3) = (dir("broker-2"), dir("broker-3"));
    let run = |env: &TestEnv| produce_to_every_replica(env, cluster.path());
    // Broker 3's directory of another cluster (MetaPropertiesEnsemble.verify
    // refuses such a directory at startup).
    let meta = b3.join("meta.properties");
    let text = std::fs::read_to_string(&meta).unwrap();
    let other: String = text
        .lines()
        .map(|l| {
            if l.starts_with("cluster.id=") {
                "cluster.id=AnotherClusterAAAAAAAAA".to_string()
            } else {
                l.to_string()
            }
        })
        .collect::<Vec<_>>()
        .join("\n");
    std::fs::write(&meta, other + "\n").unwrap();
    let before = snapshot(cluster.path());
    let o = run(&env);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("AnotherClusterAAAAAAAAA"),
        "{}",
        stderr(&o)
    );
    assert_eq!(snapshot(cluster.path()), before);
    std::fs::write(&meta, text).unwrap();

    // Broker 2's copy of the partition holds another topic id (the deleted
    // topic of the same name).
    let pm = b2.join("recreated-0/partition.metadata");
    std::fs::write(&pm, "version: 0\ntopic_id: AAAAAAAAAAAAAAAAAAAAAA").unwrap();
    let before = snapshot(cluster.path());
    let o = run(&env);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("topic id"), "{}", stderr(&o));
    assert_eq!(snapshot(cluster.path()), before);
}

/// A segment left by a roll ends its time index with its largest
/// timestamp and the offset it came with (`LogSegment.onBecomeInactiveSegment`
/// appends them through `TimeIndex.maybeAppend`), so klog's own output
/// raises no `time_index_stale`.
// See: #49 (item 14)
#[test]
fn r49_14_a_rolled_segment_ends_its_time_index_with_its_largest_timestamp() {
    let env = TestEnv::new();
    // One record a batch, three batches a segment; the largest timestamp
    // of each segment is not its last batch's.
    let input: String = [5, 3, 9, 1, 7, 2]
        .iter()
        .map(|s| {
            format!(
                "{{\"key\": \"k\", \"value\": \"v\", \"timestamp\": {}}}\n",
                1_700_000_000_000_i64 + s * 1000
            )
        })
        .collect();
    let o = env.run(
        &[
            "produce",
            "d",
            "--topic",
            "t",
            "--input-format",
            "json",
            "--segment-bytes",
            "250",
        ],
        Some(&input),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let entry = |base: &str| {
        let bytes = std::fs::read(env.path(&format!("d/t-0/{base}.timeindex"))).unwrap();
        assert_eq!(bytes.len(), 12, "one entry in {base}.timeindex");
        (
            i64::from_be_bytes(bytes[..8].try_into().unwrap()),
            i32::from_be_bytes(bytes[8..].try_into().unwrap()),
        )
    };
    // Rolled from: timestamp ...9000 at offset 2. Closed: ...7000 at offset 4 (relative 1).
    assert_eq!(entry("00000000000000000000"), (1_700_000_009_000, 2));
    assert_eq!(entry("00000000000000000003"), (1_700_000_007_000, 1));
    let o = env.run(&["verify-crc", "--fail-on", "note", "d"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
}

/// A write the replica rule refuses creates nothing first: fixtures/kafka
/// is a broker's log directory without KRaft metadata, so nothing says how
/// many replicas a new partition has; `produce` to `fresh-topic-0` with one
/// `--replica` and no `--replication-factor` is refused (exit 2), and
/// neither directory gets a `fresh-topic-0` folder or any other change.
#[test]
fn a_refused_write_creates_no_partition_folder() {
    let env = TestEnv::new();
    crate::support::copy_dir(&env.path("fixtures/kafka"), &env.path("replica"));
    let before = (
        snapshot(&env.path("fixtures/kafka")),
        snapshot(&env.path("replica")),
    );
    let o = env.run(
        &[
            "produce",
            "fixtures/kafka",
            "--replica",
            "replica",
            "--topic",
            "fresh-topic",
            "--partition",
            "0",
        ],
        Some("k\tv\n"),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("refusing to write"), "{}", stderr(&o));
    for dir in ["fixtures/kafka", "replica"] {
        assert!(!env.path(dir).join("fresh-topic-0").exists(), "{dir}");
    }
    let after = (
        snapshot(&env.path("fixtures/kafka")),
        snapshot(&env.path("replica")),
    );
    assert!(before == after, "a refused write changed the directories");
}

/// A broker's log directory always names its cluster (meta.properties): a
/// `--replica` that names one beside a directory that names none is not a
/// replica of the same cluster's partition. `commit` is refused (exit 2)
/// and neither directory changes.
#[test]
fn a_replica_naming_a_cluster_beside_one_naming_none_is_refused() {
    let env = TestEnv::new();
    crate::support::copy_dir(&env.path("fixtures/groups"), &env.path("replica"));
    std::fs::write(
        env.path("replica/meta.properties"),
        "version=1\nnode.id=2\ncluster.id=b3RoZXItY2x1c3Rlci0w\n",
    )
    .unwrap();
    let before = (
        snapshot(&env.path("fixtures/groups")),
        snapshot(&env.path("replica")),
    );
    let o = env.run(
        &[
            "commit",
            "fixtures/groups",
            "--replica",
            "replica",
            "--group",
            "billing",
            "--topic",
            "orders",
            "--partition",
            "0",
            "--offset",
            "1",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("names no cluster"), "{}", stderr(&o));
    let after = (
        snapshot(&env.path("fixtures/groups")),
        snapshot(&env.path("replica")),
    );
    assert!(before == after, "a refused write changed the directories");
}
