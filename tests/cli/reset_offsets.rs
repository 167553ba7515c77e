//! `klog reset-offsets` on copies of the fixtures, checked by replaying the
//! offsets topic afterwards. The expected offsets come from the fixtures'
//! definitions (fixtures/make.sh, make_broker.py, README.md) and the rules
//! of `kafka-consumer-groups --reset-offsets`, not from klog's output.

use std::collections::BTreeMap;
use std::path::Path;

use crate::support::{encoded, stderr, stdout, LockHolder, TestEnv};

const NOW: &str = "1700000100000";

/// The committed offsets of `group` after replaying every offsets
/// partition of `dir` (through the library's replay).
fn committed(dir: &Path, group: &str) -> BTreeMap<(String, i32), i64> {
    let d = kaen_log::log::DataDir::open(dir).unwrap();
    let topic = kaen_log::offsets::OffsetsTopic::find(&[d]).unwrap();
    let mut replay = kaen_log::offsets::Replay::new(Default::default());
    for p in &topic.partitions {
        replay.replay_partition(p).unwrap();
    }
    replay
        .commits()
        .filter(|(g, ..)| *g == group)
        .map(|(_, t, p, c)| ((t.to_string(), p), c.offset))
        .collect()
}

fn map(rows: &[(&str, i32, i64)]) -> BTreeMap<(String, i32), i64> {
    rows.iter()
        .map(|(t, p, o)| ((t.to_string(), *p), *o))
        .collect()
}

/// Run `reset-offsets DIR ARGS --execute` on a fresh copy; return the env.
fn execute(dir: &str, args: &[&str]) -> (TestEnv, std::process::Output) {
    let env = TestEnv::new();
    let mut all = vec!["reset-offsets", dir];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--execute", "--now-ms", NOW]);
    let o = env.run(&all, None);
    (env, o)
}

/// fixtures/kafka (make.sh): orders-0 holds 30 records with high watermark
/// 28 (replication-offset-checkpoint); orders-1 holds 10 with log start 5
/// (log-start-offset-checkpoint). Group shipping (in __consumer_offsets-8
/// of 50) committed orders-0 30 and orders-1 2.
const KAFKA: &[&str] = &[
    "--offsets-partitions",
    "50",
    "--replication-factor",
    "1",
    "--group",
    "shipping",
];
/// reset-offsets on the kafka fixture, the group still to be named.
const ON_KAFKA: &[&str] = &[
    "reset-offsets",
    "fixtures/kafka",
    "--offsets-partitions",
    "50",
    "--replication-factor",
    "1",
];

fn kafka_reset(spec: &[&str]) -> BTreeMap<(String, i32), i64> {
    let args = [KAFKA, &["--all-topics"], spec].concat();
    let (env, o) = execute("fixtures/kafka", &args);
    assert_eq!(o.status.code(), Some(0), "{spec:?}: {}", stderr(&o));
    committed(&env.path("fixtures/kafka"), "shipping")
}

#[test]
fn earliest_latest_and_current() {
    for (spec, expected) in [
        // The log start offsets.
        ("--to-earliest", [0, 5]),
        // The high watermark (ListOffsets "latest" at read_uncommitted).
        ("--to-latest", [28, 10]),
        // ConsumerGroupCommand takes the committed offset as it is, unclamped.
        ("--to-current", [30, 2]),
    ] {
        let want = map(&[("orders", 0, expected[0]), ("orders", 1, expected[1])]);
        assert_eq!(kafka_reset(&[spec]), want, "{spec}");
    }
}

#[test]
fn to_offset_and_shift_by_are_clamped_with_a_note() {
    // checkOffsetsRange: above the latest -> the latest; below the start -> the start.
    let args = [KAFKA, &["--all-topics", "--to-offset", "999"]].concat();
    let (env, o) = execute("fixtures/kafka", &args);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "note: orders-0: new offset 999 is higher than the latest offset 28; set to 28"
        ),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        committed(&env.path("fixtures/kafka"), "shipping"),
        map(&[("orders", 0, 28), ("orders", 1, 10)])
    );
    assert_eq!(
        kafka_reset(&["--to-offset", "3"]),
        map(&[("orders", 0, 3), ("orders", 1, 5)])
    );
    // 30 - 1 = 29 > 28; 2 - 1 = 1 < 5.
    assert_eq!(
        kafka_reset(&["--shift-by", "-1"]),
        map(&[("orders", 0, 28), ("orders", 1, 5)])
    );
    assert_eq!(
        kafka_reset(&["--shift-by", "-27"]),
        map(&[("orders", 0, 3), ("orders", 1, 5)])
    );
}

#[test]
fn shift_by_needs_a_committed_offset() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            ON_KAFKA,
            &[
                // make.sh: reports (in __consumer_offsets-49) has no commit on orders-1.
                "--group",
                "reports",
                "--topic",
                "orders:1",
                "--shift-by",
                "1",
            ],
        ]
        .concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("has no committed offset there"),
        "{}",
        stderr(&o)
    );
}

/// broker/orders-0 (make_broker.py): offsets 0, 1 stamped T − 2 days, then
/// request i (0..19) at offsets 2 + 2i (T + 1000·i) and 3 + 2i (+1); high
/// watermark and log end 42. Group ledger-writer (__consumer_offsets-39)
/// committed orders-0 14.
fn broker_datetime(env: &TestEnv, spec: &[&str]) -> (i64, String) {
    let args = [
        &[
            "reset-offsets",
            "fixtures/broker",
            "--offsets-partitions",
            "50",
            "--replication-factor",
            "1",
            "--group",
            "ledger-writer",
        ][..],
        &["--topic", "orders", "--execute", "--now-ms", NOW],
        spec,
    ]
    .concat();
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(0), "{spec:?}: {}", stderr(&o));
    let c = committed(&env.path("fixtures/broker"), "ledger-writer");
    (c[&("orders".to_string(), 0)], stderr(&o))
}

#[test]
fn to_datetime_takes_the_first_offset_stamped_at_or_after() {
    // Each run appends a commit to the same copy; the replay takes the last.
    let env = TestEnv::new();
    // T + 5000 = 2023-11-14T22:13:25Z: request 5, offset 12.
    for t in [
        "2023-11-14T22:13:25Z",
        "2023-11-14T22:13:25.000Z",
        "2023-11-15T00:13:25+02:00",
        "1700000005000",
    ] {
        assert_eq!(broker_datetime(&env, &["--to-datetime", t]).0, 12, "{t}");
    }
    // One ms later: the next record, offset 13 (stamped T + 5001).
    assert_eq!(
        broker_datetime(&env, &["--to-datetime", "2023-11-14T22:13:25.001Z"]).0,
        13
    );
    // Before everything: offset 0; between the backfill and the orders: offset 2.
    assert_eq!(
        broker_datetime(&env, &["--to-datetime", "2020-01-01T00:00:00Z"]).0,
        0
    );
    assert_eq!(
        broker_datetime(&env, &["--to-datetime", "2023-11-14T00:00:00Z"]).0,
        2
    );
    // After the last record (T + 19001): the latest offset, with the tool's fallback note.
    let (offset, err) = broker_datetime(&env, &["--to-datetime", "2023-11-14T22:13:40Z"]);
    assert_eq!(offset, 42);
    assert!(
        err.contains("falling back to the latest offset 42"),
        "{err}"
    );
}

/// A segment the cleaner emptied: Kafka's `LogSegment.largestTimestamp` of
/// a segment without a batch is its log file's last-modified time, so
/// `UnifiedLog.searchOffsetInLocalLog` stops at the empty segment when that
/// time is at or after the target and finds no offset there, and
/// `kafka-consumer-groups --to-datetime` then takes the latest offset; when
/// the file is older than the target, the search goes on past it.
#[test]
fn to_datetime_stops_at_an_empty_segment_modified_after_the_target() {
    let env = TestEnv::new();
    // Segment 14 (offsets 14-27, requests 6 to 12) emptied; request 13 is
    // offset 28 in segment 28, stamped T + 13000.
    let dir = env.path("fixtures/broker/orders-0");
    for ext in ["log", "index", "timeindex"] {
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(dir.join(format!("00000000000000000014.{ext}")))
            .unwrap();
        f.set_len(0).unwrap();
    }
    let touch = |ms: u64| {
        let f = std::fs::File::options()
            .write(true)
            .open(dir.join("00000000000000000014.log"))
            .unwrap();
        f.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_millis(ms))
            .unwrap();
    };
    let target = "1700000013000";
    // Modified after the target: no offset for it, the latest offset.
    touch(1_700_000_100_000);
    assert_eq!(broker_datetime(&env, &["--to-datetime", target]).0, 42);
    // Modified before it: segment 28's first record at or after it.
    touch(1_600_000_000_000);
    assert_eq!(broker_datetime(&env, &["--to-datetime", target]).0, 28);
    // A target in segment 0 is found before the empty segment.
    assert_eq!(
        broker_datetime(&env, &["--to-datetime", "1700000005000"]).0,
        12
    );
}

#[test]
fn by_duration_counts_back_from_now() {
    // now T + 10 s, minus 5 s: T + 5000, offset 12.
    let args = [
        "--offsets-partitions",
        "50",
        "--replication-factor",
        "1",
        "--group",
        "ledger-writer",
        "--topic",
        "orders:0",
        "--by-duration",
        "PT5S",
        "--execute",
        "--now-ms",
        "2023-11-14T22:13:30Z",
    ];
    let env = TestEnv::new();
    let o = env.run(
        &[&["reset-offsets", "fixtures/broker"][..], &args].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let c = committed(&env.path("fixtures/broker"), "ledger-writer");
    assert_eq!(c[&("orders".to_string(), 0)], 12);
    let env = TestEnv::new();
    // NOW = T + 100 s; 26 hours before it lies between the backfill (T − 2
    // days) and the first order (T): offset 2.
    assert_eq!(broker_datetime(&env, &["--by-duration", "P1DT2H"]).0, 2);
}

#[test]
fn from_file_takes_the_export_format_and_is_clamped() {
    let env = TestEnv::new();
    let plan = env.path("plan.csv");
    let run = |extra: &[&str]| {
        let base = [&["reset-offsets", "fixtures/kafka"][..], KAFKA];
        let from = ["--from-file", plan.to_str().unwrap()];
        let o = env.run(&[&base.concat()[..], &from, extra].concat(), None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    std::fs::write(&plan, "orders,0,3\norders,1,999\n").unwrap();
    run(&["--execute", "--now-ms", NOW]);
    assert_eq!(
        committed(&env.path("fixtures/kafka"), "shipping"),
        map(&[("orders", 0, 3), ("orders", 1, 10)])
    );
    // The with-group format keeps only this group's lines.
    std::fs::write(&plan, "other,orders,0,1\nshipping,orders,0,7\n").unwrap();
    assert_eq!(run(&["--export"]), "orders,0,7\n");
}

#[test]
fn export_round_trips_through_from_file() {
    let env = TestEnv::new();
    let base = [
        "reset-offsets",
        "fixtures/kafka",
        "--offsets-partitions",
        "50",
        "--replication-factor",
        "1",
        "--group",
        "shipping",
    ];
    let o = env.run(
        &[&base[..], &["--all-topics", "--to-offset", "6", "--export"]].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // kafka-consumer-groups' CsvRecordNoGroup: topic,partition,offset.
    assert_eq!(stdout(&o), "orders,0,6\norders,1,6\n");
    let plan = env.path("plan.csv");
    std::fs::write(&plan, stdout(&o)).unwrap();
    let o2 = env.run(
        &[
            &base[..],
            &["--from-file", plan.to_str().unwrap(), "--export"],
        ]
        .concat(),
        None,
    );
    assert_eq!(stdout(&o2), stdout(&o));
}

#[test]
fn export_quotes_a_long_topic_name_as_kafka_does() {
    // kafka-consumer-groups' CsvUtils (Jackson's CsvEncoder) quotes a value
    // longer than 24 characters: a legal 25-character topic is written
    // quoted, and the plan reads back the same.
    let env = TestEnv::new();
    let topic = "abcdefghijklmnopqrstuvwxy";
    let segment = encoded("out = batch(0, [(i, i, b'k', b'v') for i in range(3)])");
    crate::support::write_segment(&env.path("data"), &format!("{topic}-0"), &segment);
    let base = [
        "reset-offsets",
        "data",
        "--offsets-partitions",
        "1",
        "--replication-factor",
        "1",
        "--group",
        "g",
    ];
    let o = env.run(
        &[
            &base[..],
            &["--topic", topic, "--to-offset", "2", "--export"],
        ]
        .concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("\"{topic}\",0,2\n"));
    let plan = env.path("plan.csv");
    std::fs::write(&plan, stdout(&o)).unwrap();
    let again = [
        &base[..],
        &["--from-file", plan.to_str().unwrap(), "--export"],
    ]
    .concat();
    assert_eq!(stdout(&env.run(&again, None)), stdout(&o));
}

#[test]
fn dry_run_prints_the_plan_and_writes_nothing() {
    let env = TestEnv::new();
    let log = env.path("fixtures/kafka/__consumer_offsets-8/00000000000000000000.log");
    let before = std::fs::read(&log).unwrap();
    let o = env.run(
        &[
            ON_KAFKA,
            &["--group", "shipping", "--all-topics", "--to-earliest"],
        ]
        .concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // LAG-AFTER = latest − new: 28 − 0 and 10 − 5.
    assert_eq!(
        stdout(&o),
        "GROUP     TOPIC   PARTITION  CURRENT-OFFSET  NEW-OFFSET  LAG-AFTER\n\
         shipping  orders          0              30           0         28\n\
         shipping  orders          1               2           5          5\n"
    );
    assert_eq!(std::fs::read(&log).unwrap(), before);
    // `--dry-run`, kafka-consumer-groups' spelling of the default, is the
    // same plan; with `--execute` it is refused.
    let args = [
        ON_KAFKA,
        &["--group", "shipping", "--all-topics", "--to-earliest"],
    ]
    .concat();
    let dry = env.run(&[args.as_slice(), &["--dry-run"]].concat(), None);
    assert_eq!(dry.status.code(), Some(0), "{}", stderr(&dry));
    assert_eq!(stdout(&dry), stdout(&o));
    let both = env.run(
        &[args.as_slice(), &["--dry-run", "--execute"]].concat(),
        None,
    );
    assert_eq!(both.status.code(), Some(2));
    assert_eq!(std::fs::read(&log).unwrap(), before);
}

#[test]
fn unknown_and_invalid_topics_and_partitions_are_refused() {
    let env = TestEnv::new();
    let base = [
        "reset-offsets",
        "fixtures/groups",
        "--group",
        "kitchen",
        "--to-latest",
        "--execute",
    ];
    let log = env.path("fixtures/groups/__offsets-0/00000000000000000000.log");
    let before = std::fs::read(&log).unwrap();
    for (topic, message) in [
        ("NoSuchTopic", "unknown topic \"NoSuchTopic\""),
        ("orders:3", "unknown partition orders-3"),
        (
            "odd,topic",
            "Topic name is invalid: \"odd,topic\" contains one or more characters",
        ),
        ("orders:x", "invalid partition"),
    ] {
        let o = env.run(&[&base[..], &["--topic", topic]].concat(), None);
        assert_eq!(o.status.code(), Some(2), "{topic}");
        assert!(stderr(&o).contains(message), "{topic}: {}", stderr(&o));
    }
    // With KRaft metadata, the metadata says what exists: orders has
    // partitions 0 and 1 there though only orders-0 has a folder here.
    let kraft = [
        "reset-offsets",
        "fixtures/kraft",
        "--group",
        "checkout",
        "--to-latest",
    ];
    for (topic, message) in [
        (
            "orders:2",
            "unknown partition orders-2: orders has the partitions [0, 1] (by the KRaft metadata",
        ),
        (
            "orders:1",
            "orders-1 has no folder in the directories given",
        ),
    ] {
        let o = env.run(&[&kraft[..], &["--topic", topic]].concat(), None);
        assert_eq!(o.status.code(), Some(2), "{topic}");
        assert!(stderr(&o).contains(message), "{topic}: {}", stderr(&o));
    }
    assert_eq!(std::fs::read(&log).unwrap(), before);
}

#[test]
fn a_group_with_members_is_refused_unless_forced() {
    // billing's GroupMetadataValue (make.sh) has member-1.
    let base = [
        "--offsets-partitions",
        "50",
        "--replication-factor",
        "1",
        "--group",
        "billing",
        "--topic",
        "orders:0",
        "--to-offset",
        "1",
    ];
    let (env, o) = execute("fixtures/kafka", &base);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("has 1 member recorded in the offsets log (\"member-1\")")
            && stderr(&o).contains("overwriting the reset"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        committed(&env.path("fixtures/kafka"), "billing")[&("orders".to_string(), 0)],
        25
    );
    let (env, o) = execute("fixtures/kafka", &[&base[..], &["--force"]].concat());
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        committed(&env.path("fixtures/kafka"), "billing")[&("orders".to_string(), 0)],
        1
    );
}

#[test]
fn the_commit_is_what_the_coordinator_writes() {
    // A new group on klog's own directory: key v1, value v3, leader epoch -1,
    // empty metadata, the commit timestamp now.
    let (env, o) = execute(
        "fixtures/groups",
        &["--group", "fresh", "--topic", "orders", "--to-offset", "7"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("wrote 1 offset commit to"),
        "{}",
        stderr(&o)
    );
    let expected = encoded(&format!(
        "out = coordinator_key(1, 'fresh', 'orders', 0) + offset_commit_value_v3(7, -1, '', {NOW})"
    ));
    assert_eq!(
        last_record(&env.path("fixtures/groups/__offsets-0")),
        expected
    );
    assert_eq!(
        committed(&env.path("fixtures/groups"), "fresh"),
        map(&[("orders", 0, 7)])
    );
}

/// Every replica's directory gets the same batch; without KRaft metadata
/// klog must be told how many replicas there are (`--replication-factor`),
/// and refuses, writing nothing, when fewer directories are given, unless
/// `--allow-missing-replicas`.
#[test]
fn every_replica_directory_gets_the_batch() {
    let env = TestEnv::new();
    crate::support::copy_dir(&env.path("fixtures/kafka"), &env.path("replica-2"));
    let both = |spec: &str, rf: &[&str]| {
        let base = [
            "reset-offsets",
            "fixtures/kafka",
            "--replica",
            "replica-2",
            "--offsets-partitions",
            "50",
            "--group",
            "shipping",
        ];
        let args = ["--all-topics", spec, "--execute", "--now-ms", NOW];
        env.run(&[&base[..], rf, &args].concat(), None)
    };
    let before = crate::support::snapshot(&env.path("fixtures/kafka"));
    for (rf, why) in [
        (&[][..], "give --replication-factor N"),
        (
            &["--replication-factor", "3"][..],
            "has 3 replicas (--replication-factor); 2 directories are given",
        ),
    ] {
        let o = both("--to-earliest", rf);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
        assert_eq!(
            crate::support::snapshot(&env.path("fixtures/kafka")),
            before
        );
    }
    let rf2 = ["--replication-factor", "2"];
    let o = both("--to-earliest", &rf2);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let expected = map(&[("orders", 0, 0), ("orders", 1, 5)]);
    assert_eq!(committed(&env.path("fixtures/kafka"), "shipping"), expected);
    assert_eq!(committed(&env.path("replica-2"), "shipping"), expected);
    // One replica alone only with --allow-missing-replicas, and a warning.
    let tombstone = [
        "tombstone",
        "replica-2",
        "--group",
        "shipping",
        "--now-ms",
        NOW,
        "--offsets-partitions",
        "50",
        "--replication-factor",
        "2",
    ];
    let o = env.run(&tombstone, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let o = env.run(
        &[&tombstone[..], &["--allow-missing-replicas"]].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("writing anyway (--allow-missing-replicas)"),
        "{}",
        stderr(&o)
    );
    // Replicas that differ are refused before anything is written.
    let o = both("--to-latest", &rf2);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("the replicas differ"), "{}", stderr(&o));
    assert_eq!(committed(&env.path("fixtures/kafka"), "shipping"), expected);
}

#[test]
fn execute_refuses_while_the_lock_is_held() {
    let env = TestEnv::new();
    let _holder = LockHolder::new(&env.path("fixtures/groups"));
    let o = env.run(
        &[
            "reset-offsets",
            "fixtures/groups",
            "--group",
            "kitchen",
            "--topic",
            "orders",
            "--to-earliest",
            "--execute",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(
        committed(&env.path("fixtures/groups"), "kitchen"),
        map(&[("orders", 0, 15)])
    );
}

/// A Kafka log directory whose KRaft metadata is finalized at
/// metadata.version `mv` and names the topic `orders` (id 16 bytes of 5) and
/// `__consumer_offsets` (one partition), with both partition folders.
fn kraft_dir(env: &TestEnv, mv: i16) -> std::path::PathBuf {
    let dir = env.path(&format!("mv{mv}"));
    let script = format!(
        "O = b'\\x05' * 16
C = b'\\x06' * 16
vals = [feature_level_record('metadata.version', {mv}), topic_record('orders', O),
        partition_record(0, O, [1], [1], 1, 0, 0, [bytes(16)]), topic_record('__consumer_offsets', C),
        partition_record(0, C, [1], [1], 1, 0, 0, [bytes(16)])]
out = batch(0, [(i, 0, None, v) for i, v in enumerate(vals)])"
    );
    crate::support::write_segment(&dir, "__cluster_metadata-0", &encoded(&script));
    crate::support::write_segment(
        &dir,
        "orders-0",
        &encoded("out = batch(0, [(i, i, None, b'x') for i in range(10)])"),
    );
    std::fs::create_dir_all(dir.join("__consumer_offsets-0")).unwrap();
    dir
}

#[test]
fn commit_writes_what_the_metadata_version_writes() {
    // GroupCoordinatorRecordHelpers.offsetCommitValueVersion: Kafka 4.1 and
    // later write v4 with the topic id (no feature gates it), 4.0 wrote v3;
    // offline the release shows only through metadata.version: 4.1-IV0 (26)
    // and later get v4 with the id from the KRaft metadata, earlier get v3.
    let env = TestEnv::new();
    for (mv, expected) in [
        (
            26,
            "offset_commit_value_v4(7, -1, '', 1700000000000, b'\\x05' * 16)",
        ),
        (25, "offset_commit_value_v3(7, -1, '', 1700000000000)"),
    ] {
        let dir = kraft_dir(&env, mv);
        let d = dir.display().to_string();
        let o = env.run(
            &[
                "commit",
                &d,
                "--group",
                "g",
                "--topic",
                "orders",
                "--partition",
                "0",
                "--offset",
                "7",
                "--now-ms",
                "1700000000000",
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let key = "coordinator_key(1, 'g', 'orders', 0)";
        assert_eq!(
            last_record(&dir.join("__consumer_offsets-0")),
            encoded(&format!("out = {key} + {expected}")),
            "mv {mv}"
        );
    }
}

/// The key and value of the last record of the partition folder `dir`, concatenated.
fn last_record(dir: &Path) -> Vec<u8> {
    let p = kaen_log::log::Partition::open(dir).unwrap();
    let end = p.log_end_offset().unwrap();
    let mut walk = p.walk_from(end - 1, kaen_log::log::Policy::VALID_ENTRIES);
    let w = walk.next_entry().unwrap().unwrap();
    let kaen_log::format::Entry::V2(b) = w.entry else {
        panic!()
    };
    let mut scratch = Vec::new();
    let r = b
        .records(&mut scratch, Default::default())
        .unwrap()
        .last()
        .unwrap()
        .unwrap();
    [r.key.unwrap(), r.value.unwrap()].concat()
}

/// `--execute --format json|csv` holds what was written: each partition's
/// commit's offset in the offsets partition, and (JSON) the batch each
/// replica directory got, as `dump-segment` of each directory shows them.
#[test]
fn execute_reports_what_it_wrote_in_json_and_csv() {
    let part = "__consumer_offsets-8";
    for format in ["json", "csv"] {
        let env = TestEnv::new();
        crate::support::copy_dir(&env.path("fixtures/kafka"), &env.path("replica-2"));
        let dirs = ["fixtures/kafka", "replica-2"];
        let end = crate::support::dumped_log_end(&env, &format!("fixtures/kafka/{part}"));
        let o = env.run(
            &[
                "reset-offsets",
                "fixtures/kafka",
                "--replica",
                "replica-2",
                "--offsets-partitions",
                "50",
                "--replication-factor",
                "2",
                "--group",
                "shipping",
                "--all-topics",
                "--to-earliest",
                "--execute",
                "--now-ms",
                NOW,
                "--format",
                format,
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        let mut batches = Vec::new();
        for d in dirs {
            let path = format!("{d}/{part}");
            let b = crate::support::batches_from_offset(&env, &path, end);
            assert_eq!(b.len(), 1, "{format}: {d}: one batch");
            let (first, last) = (&b[0]["base_offset"], &b[0]["last_offset"]);
            assert!(
                stderr(&o).contains(&format!(
                    "klog: wrote 2 offset commits to {path} at offsets {first}..={last}\n"
                )),
                "{format}: {}",
                stderr(&o)
            );
            batches.push((path, b[0].clone()));
        }
        assert_eq!(
            batches[0].1["records"], batches[1].1["records"],
            "the same batch"
        );
        // (topic, partition, new offset, log offset) of each commit written.
        let written: Vec<(String, i64, i64, i64)> = batches[0].1["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                let key = &r["decoded"]["key"];
                assert_eq!(key["group"], "shipping");
                (
                    key["topic"].as_str().unwrap().to_string(),
                    key["partition"].as_i64().unwrap(),
                    r["decoded"]["value"]["offset"].as_i64().unwrap(),
                    r["offset"].as_i64().unwrap(),
                )
            })
            .collect();
        let replayed: BTreeMap<(String, i32), i64> = written
            .iter()
            .map(|(t, p, o, _)| ((t.clone(), *p as i32), *o))
            .collect();
        for d in dirs {
            assert_eq!(committed(&env.path(d), "shipping"), replayed, "{d}");
        }
        // The rows, as JSON values (CSV: every cell a string).
        let (rows, doc) = if format == "json" {
            let doc = crate::support::document(&o, "reset-offsets");
            (doc["partitions"].as_array().unwrap().clone(), Some(doc))
        } else {
            let rows = crate::support::csv_objects(&stdout(&o));
            let rows = rows
                .into_iter()
                .map(|r| serde_json::to_value(r).unwrap())
                .collect();
            (rows, None)
        };
        let show = |v: serde_json::Value| match format {
            "json" => v,
            _ => serde_json::Value::String(crate::support::cell(&v)),
        };
        let got: Vec<_> = rows
            .iter()
            .map(|r| {
                (
                    r["topic"].clone(),
                    r["partition"].clone(),
                    r["new_offset"].clone(),
                    r["log_partition"].clone(),
                    r["log_offset"].clone(),
                )
            })
            .collect();
        let expected: Vec<_> = written
            .iter()
            .map(|(t, p, o, at)| {
                (
                    show(t.as_str().into()),
                    show((*p).into()),
                    show((*o).into()),
                    show(part.into()),
                    show((*at).into()),
                )
            })
            .collect();
        assert_eq!(got, expected, "{format}");
        if let Some(doc) = doc {
            assert_eq!(doc["executed"], true);
            let expected: Vec<_> = batches
                .iter()
                .map(|(path, b)| {
                    serde_json::json!({
                        "path": path,
                        "log_partition": part,
                        "first_offset": b["base_offset"],
                        "last_offset": b["last_offset"],
                    })
                })
                .collect();
            assert_eq!(doc["written"].as_array().unwrap(), &expected);
            assert_eq!(
                doc["log_offsets"],
                serde_json::json!([batches[0].1["base_offset"], batches[0].1["last_offset"]])
            );
        }
    }
    // A dry run's CSV is the plan alone: nothing was written.
    let env = TestEnv::new();
    let o = env.run(
        &[
            ON_KAFKA,
            &[
                "--group",
                "shipping",
                "--all-topics",
                "--to-earliest",
                "--format",
                "csv",
            ],
        ]
        .concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("group,topic,partition,committed_offset,new_offset,lag_after\n"),
        "{}",
        stdout(&o)
    );
}

/// A group the offsets topic does not know is a bad argument, as `lag`
/// and `groups` say it: "group does not exist", exit 2 (Kafka's
/// kafka-consumer-groups says the same words). A dry run appends nothing,
/// so it does not say the append configuration it would use.
#[test]
fn an_unknown_group_does_not_exist_as_lag_says() {
    let env = crate::support::TestEnv::new();
    let dir = env.path("broker-1");
    crate::support::copy_dir(
        &crate::support::repo().join("fixtures/kafka-real/4.4.0/broker-1"),
        &dir,
    );
    let dir = dir.to_str().unwrap();
    for args in [
        &[
            "reset-offsets",
            "--group",
            "nosuch",
            "--all-topics",
            "--to-earliest",
            dir,
        ][..],
        &["lag", "--group", "nosuch", dir][..],
    ] {
        let o = env.run(args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = crate::support::stderr(&o);
        assert!(
            err.contains("group \"nosuch\": group does not exist"),
            "{err}"
        );
        assert!(!err.contains("segment.bytes="), "{err}");
    }
}
