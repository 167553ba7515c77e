use crate::support::{document_rows, dump_batches, encoded, stderr, stdout, LockHolder, TestEnv};

fn size(env: &TestEnv, rel: &str) -> u64 {
    std::fs::metadata(env.path(rel)).unwrap().len()
}

fn table(env: &TestEnv, dir: &str) -> Vec<(String, String, i64, u64)> {
    let o = env.run(&["replay-offsets", "--format", "json", dir], None);
    let rows = document_rows(&o, "replay-offsets", "offsets");
    rows.iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap().into(),
                r["topic"].as_str().unwrap().into(),
                r["partition"].as_i64().unwrap(),
                r["committed_offset"].as_u64().unwrap(),
            )
        })
        .collect()
}

const OFFSETS_LOG: &str = "fixtures/groups/__offsets-0/00000000000000000000.log";

#[test]
fn tombstone_then_replay_the_keys_are_gone() {
    let env = TestEnv::new();
    let before_rows = table(&env, "fixtures/groups");
    let end_before = kaen_log::log::Partition::open(&env.path("fixtures/groups/__offsets-0"))
        .unwrap()
        .log_end_offset()
        .unwrap();
    let o = env.run(
        &[
            "tombstone",
            "fixtures/groups",
            "--group",
            "auditor",
            "--now-ms",
            "1700000099000",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "deleted auditor ledger-0 (was 6): tombstone at __offsets-0 offset {}\ndeleted auditor ledger-1 (was 0): tombstone at __offsets-0 offset {}\n",
            end_before,
            end_before + 1
        )
    );
    let after_rows = table(&env, "fixtures/groups");
    let expected: Vec<_> = before_rows
        .into_iter()
        .filter(|r| r.0 != "auditor")
        .collect();
    assert_eq!(after_rows, expected);
    let end_after = kaen_log::log::Partition::open(&env.path("fixtures/groups/__offsets-0"))
        .unwrap()
        .log_end_offset()
        .unwrap();
    assert_eq!(end_after, end_before + 2, "one record per removed key");
    assert_eq!(
        env.run(&["verify-crc", "fixtures/groups"], None)
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn dry_run_and_no_match_write_nothing() {
    let env = TestEnv::new();
    let before = size(&env, OFFSETS_LOG);
    let o = env.run(
        &[
            "tombstone",
            "fixtures/groups",
            "--group",
            "kitchen",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "would delete kitchen orders-0 (was 15): tombstone to __offsets-0 at offset 14\n"
    );
    let o = env.run(&["tombstone", "fixtures/groups", "--group", "nobody"], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("no live committed offsets match group \"nobody\""),
        "{}",
        stderr(&o)
    );
    let o = env.run(
        &[
            "tombstone",
            "fixtures/groups",
            "--group",
            "kitchen",
            "--topic",
            "payments",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(size(&env, OFFSETS_LOG), before);
}

#[test]
fn refuses_behind_a_damaged_offsets_log() {
    let env = TestEnv::new();
    let len = size(&env, OFFSETS_LOG);
    let f = std::fs::OpenOptions::new()
        .write(true)
        .open(env.path(OFFSETS_LOG))
        .unwrap();
    f.set_len(len - 7).unwrap();
    let o = env.run(
        &["tombstone", "fixtures/groups", "--group", "kitchen"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("refusing to append behind a damaged tail"),
        "{}",
        stderr(&o)
    );
    assert_eq!(size(&env, OFFSETS_LOG), len - 7);
}

#[test]
fn kafka_layout_uses_the_java_hash_partition_and_leader_epoch() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "tombstone",
            "fixtures/kafka",
            "--offsets-partitions",
            "50",
            "--replication-factor",
            "1",
            "--group",
            "billing",
            "--partition",
            "1",
            "--now-ms",
            "5",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with(
            "deleted billing orders-1 (was 7): tombstone at __consumer_offsets-9 offset 7"
        ),
        "{}",
        stdout(&o)
    );
    // One directory of a partition said to have one replica: nothing to warn of.
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
    // The batch carries the partition's leader epoch from leader-epoch-checkpoint (3).
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "--from-offset",
            "7",
            "fixtures/kafka/__consumer_offsets-9",
        ],
        None,
    );
    let batches = dump_batches(&o);
    let last = batches.last().unwrap();
    assert_eq!(
        (
            last["partition_leader_epoch"].as_i64(),
            last["records"][0]["value"].is_null()
        ),
        (Some(3), true)
    );
    let rows = table(&env, "fixtures/kafka");
    assert!(
        rows.iter().any(|r| r.0 == "billing" && r.2 == 0)
            && !rows.iter().any(|r| r.0 == "billing" && r.2 == 1)
    );
}

#[test]
fn commit_appends_an_offset_commit() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "commit",
            "fixtures/groups",
            "--group",
            "kitchen",
            "--topic",
            "orders",
            "--partition",
            "0",
            "--offset",
            "18",
            "--now-ms",
            "1700000050000",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).starts_with("kitchen orders-0 -> 18 committed at __offsets-0 offset "),
        "{}",
        stdout(&o)
    );
    assert!(table(&env, "fixtures/groups").contains(&("kitchen".into(), "orders".into(), 0, 18)));
    let before = size(&env, OFFSETS_LOG);
    let o = env.run(
        &[
            "commit",
            "fixtures/groups",
            "--group",
            "kitchen",
            "--topic",
            "orders",
            "--partition",
            "0",
            "--offset",
            "-1",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("--offset -1 is negative"),
        "{}",
        stderr(&o)
    );
    assert_eq!(size(&env, OFFSETS_LOG), before);
    // A fresh directory gets klog's own __offsets-0 (the topic must exist).
    let o = env.run(&["produce", "fresh", "--topic", "t"], Some("a\nb\nc\n"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(
        &[
            "commit",
            "fresh",
            "--group",
            "g",
            "--topic",
            "t",
            "--partition",
            "0",
            "--offset",
            "3",
            "--now-ms",
            "1",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(table(&env, "fresh"), [("g".into(), "t".into(), 0, 3)]);
}

#[test]
fn group_outside_this_log_directory() {
    let env = TestEnv::new();
    // "kitchen" hashes to __consumer_offsets-6, which this broker does not have.
    let o = env.run(
        &[
            "commit",
            "fixtures/kafka",
            "--offsets-partitions",
            "50",
            "--replication-factor",
            "1",
            "--group",
            "kitchen",
            "--topic",
            "orders",
            "--partition",
            "0",
            "--offset",
            "1",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(
            "lives in __consumer_offsets-6 (of 50 partitions), which is not in this log directory"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn refuses_while_the_lock_is_held() {
    let env = TestEnv::new();
    let before = size(&env, OFFSETS_LOG);
    let holder = LockHolder::new(&env.path("fixtures/groups"));
    let o = env.run(
        &["tombstone", "fixtures/groups", "--group", "kitchen"],
        None,
    );
    drop(holder);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("locked by another process"),
        "{}",
        stderr(&o)
    );
    assert_eq!(size(&env, OFFSETS_LOG), before);
}

#[test]
fn placement_needs_a_partition_count_and_takes_the_metadata_one() {
    let env = TestEnv::new();
    // fixtures/kafka has no KRaft metadata: no count is assumed.
    let o = env.run(
        &[
            "tombstone",
            "fixtures/kafka",
            "--group",
            "billing",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("pass --offsets-partitions"),
        "{}",
        stderr(&o)
    );
    // fixtures/kraft's metadata gives __consumer_offsets 3 partitions (kraft.py):
    // checkout hashes to partition 0 of 3.
    let o = env.run(
        &[
            "tombstone",
            "fixtures/kraft",
            "--group",
            "checkout",
            "--now-ms",
            "5",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        crate::support::stdout(&o).contains("__consumer_offsets-0"),
        "{}",
        crate::support::stdout(&o)
    );
    // A count that disagrees with the metadata is refused.
    let o = env.run(
        &[
            "tombstone",
            "fixtures/kraft",
            "--group",
            "checkout",
            "--offsets-partitions",
            "50",
            "--replication-factor",
            "1",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("gives __consumer_offsets 3 partitions"),
        "{}",
        stderr(&o)
    );
}

/// The keys of the records appended at `from` and after in `partition`.
fn keys_from(env: &TestEnv, partition: &str, from: i64) -> Vec<Vec<u8>> {
    let p = kaen_log::log::Partition::open(&env.path(partition)).unwrap();
    let mut walk = p.walk_from(from, kaen_log::log::Policy::VALID_ENTRIES);
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    while let Some(w) = walk.next_entry().unwrap() {
        let kaen_log::format::Entry::V2(b) = w.entry else {
            panic!("legacy")
        };
        for r in b.records(&mut scratch, Default::default()).unwrap() {
            let r = r.unwrap();
            if r.offset >= from {
                assert!(r.value.is_none(), "a tombstone");
                out.push(r.key.unwrap().to_vec());
            }
        }
    }
    out
}

#[test]
fn delete_group_tombstones_a_consumer_groups_records_in_the_coordinators_order() {
    let env = TestEnv::new();
    let args = [
        "tombstone",
        "fixtures/kraft",
        "--group",
        "checkout",
        "--delete-group",
    ];
    // checkout has member m-1 recorded (kraft.py offsets 1-4): refused.
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("has 1 member recorded in the offsets log (\"m-1\")")
            && stderr(&o).contains("--force"),
        "{}",
        stderr(&o)
    );
    let o = env.run(&[&args[..], &["--force", "--dry-run"]].concat(), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // GroupCoordinatorShard.deleteGroups: the offsets, then
    // ConsumerGroup.createGroupTombstoneRecords (Kafka 4.1.1): current
    // assignment (8), target assignment (7), target assignment epoch (6),
    // member subscription (5), resolved regular expressions (16), the
    // subscription metadata (4), then the group epoch (3). kraft.py writes
    // checkout's records at offsets 1-4 and 16-24 (one partition-metadata
    // record, regular expression "ord.*"); the next offset is 26.
    assert_eq!(
        stdout(&o),
        "would delete checkout OffsetCommit orders-0 (was 1): tombstone to __consumer_offsets-0 at offset 26\n\
         would delete checkout ConsumerGroupCurrentMemberAssignment m-1: tombstone to __consumer_offsets-0 at offset 27\n\
         would delete checkout ConsumerGroupTargetAssignmentMember m-1: tombstone to __consumer_offsets-0 at offset 28\n\
         would delete checkout ConsumerGroupTargetAssignmentMetadata group checkout: tombstone to __consumer_offsets-0 at offset 29\n\
         would delete checkout ConsumerGroupMemberMetadata m-1: tombstone to __consumer_offsets-0 at offset 30\n\
         would delete checkout ConsumerGroupRegularExpression ord.*: tombstone to __consumer_offsets-0 at offset 31\n\
         would delete checkout ConsumerGroupPartitionMetadata group checkout: tombstone to __consumer_offsets-0 at offset 32\n\
         would delete checkout ConsumerGroupMetadata group checkout: tombstone to __consumer_offsets-0 at offset 33\n"
    );
    let o = env.run(
        &[&args[..], &["--force", "--now-ms", "2023-11-14T22:15:00Z"]].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The metadata gives __consumer_offsets-0 one replica, on node 1, which
    // is this directory's node: no replication warning.
    assert!(
        !stderr(&o).contains("warning: the metadata"),
        "{}",
        stderr(&o)
    );
    let expected = crate::support::encoded(
        "out = b''.join(len(k).to_bytes(2, 'big') + k for k in [\n\
         coordinator_key(1, 'checkout', 'orders', 0), coordinator_key(8, 'checkout', 'm-1'),\n\
         coordinator_key(7, 'checkout', 'm-1'), coordinator_key(6, 'checkout'),\n\
         coordinator_key(5, 'checkout', 'm-1'), coordinator_key(16, 'checkout', 'ord.*'),\n\
         coordinator_key(4, 'checkout'), coordinator_key(3, 'checkout')])",
    );
    let got: Vec<u8> = keys_from(&env, "fixtures/kraft/__consumer_offsets-0", 26)
        .into_iter()
        .flat_map(|k| [(k.len() as u16).to_be_bytes().to_vec(), k].concat())
        .collect();
    assert_eq!(
        got, expected,
        "the tombstones' keys, as Kafka's encoder writes them"
    );
    let o = env.run(&["groups", "fixtures/kraft"], None);
    let text = stdout(&o);
    let names: Vec<&str> = text.lines().filter_map(|l| l.split(' ').next()).collect();
    assert!(!names.contains(&"checkout"), "{text}");
    assert!(names.contains(&"share-audit"), "{names:?}");
}

#[test]
fn delete_group_of_a_classic_group_and_its_pending_commit() {
    let env = TestEnv::new();
    // courier (make.sh): committed 4 on orders-0, and a pending
    // transactional commit of 9 (producer 7002) on the same key.
    let o = env.run(
        &[
            "tombstone",
            "fixtures/groups",
            "--group",
            "courier",
            "--delete-group",
            "--now-ms",
            "1700000099000",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 2, "{lines:?}");
    assert!(lines[0].starts_with(
        "deleted courier OffsetCommit orders-0 (was 4): tombstone at __offsets-0 offset"
    ));
    assert!(lines[1].starts_with(
        "deleted courier GroupMetadata group courier: tombstone at __offsets-0 offset"
    ));
    let o = env.run(&["replay-offsets", "fixtures/groups"], None);
    let text = stdout(&o);
    assert!(!text.contains("courier"), "{text}");
    // The tombstone also cancels the pending commit of the same key (the
    // summary is on stderr).
    assert!(stderr(&o).contains("pending: 0\n"), "{}", stderr(&o));
    let o = env.run(
        &[
            "tombstone",
            "fixtures/groups",
            "--group",
            "nobody",
            "--delete-group",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn commit_checks_the_partition_and_clamps_the_offset() {
    let env = TestEnv::new();
    let before = size(&env, OFFSETS_LOG);
    let commit = |topic: &str, partition: &str, offset: &str| {
        env.run(
            &[
                "commit",
                "fixtures/groups",
                "-g",
                "kitchen",
                "-t",
                topic,
                "-p",
                partition,
                "--offset",
                offset,
                "--now-ms",
                "2023-11-14T22:15:00Z",
            ],
            None,
        )
    };
    for (topic, partition, message) in [
        ("NoSuchTopic", "0", "unknown topic \"NoSuchTopic\""),
        ("odd,topic", "0", "Topic name is invalid"),
        ("orders", "3", "unknown partition orders-3"),
    ] {
        let o = commit(topic, partition, "1");
        assert_eq!(o.status.code(), Some(2), "{topic}");
        assert!(stderr(&o).contains(message), "{topic}: {}", stderr(&o));
    }
    assert_eq!(size(&env, OFFSETS_LOG), before, "nothing written");
    // orders-0 holds 20 records (make.sh): 999 is clamped to the log end, 20.
    let o = commit("orders", "0", "999");
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "note: orders-0: new offset 999 is higher than the latest offset 20; set to 20"
        ),
        "{}",
        stderr(&o)
    );
    assert!(
        stdout(&o).starts_with("kitchen orders-0 -> 20 committed at __offsets-0"),
        "{}",
        stdout(&o)
    );
    let rows = table(&env, "fixtures/groups");
    assert!(
        rows.contains(&("kitchen".into(), "orders".into(), 0, 20)),
        "{rows:?}"
    );
}

/// A commit of group shipping's offset 7 on orders-1 (at time 1).
const SHIPPING_ORDERS_1_AT_7: &[&str] = &[
    "-g", "shipping", "-t", "orders", "-p", "1", "--offset", "7", "--now-ms", "1",
];

#[test]
fn commit_writes_every_replica_and_warns_only_after_the_lock() {
    let env = TestEnv::new();
    crate::support::copy_dir(&env.path("fixtures/kafka"), &env.path("replica-2"));
    let args = [
        &[
            "commit",
            "fixtures/kafka",
            "--replica",
            "replica-2",
            "--offsets-partitions",
            "50",
            "--replication-factor",
            "3",
            "--allow-missing-replicas",
        ][..],
        SHIPPING_ORDERS_1_AT_7,
    ]
    .concat();
    let holder = LockHolder::new(&env.path("replica-2"));
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        !stderr(&o).contains("warning"),
        "no warning before the locks: {}",
        stderr(&o)
    );
    drop(holder);
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(
            "has 3 replicas (--replication-factor); 2 directories are given: writing anyway \
             (--allow-missing-replicas)"
        ),
        "{}",
        stderr(&o)
    );
    for dir in ["fixtures/kafka", "replica-2"] {
        let rows = table(&env, dir);
        assert!(
            rows.contains(&("shipping".into(), "orders".into(), 1, 7)),
            "{dir}: {rows:?}"
        );
    }
    // The KRaft metadata gives __consumer_offsets-0 one replica, on this
    // directory's node 1: nothing is missing, nothing to warn of.
    let o = env.run(
        &[
            "commit",
            "fixtures/kraft",
            "-g",
            "checkout",
            "-t",
            "orders",
            "-p",
            "0",
            "--offset",
            "2",
            "--now-ms",
            "1",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!stderr(&o).contains("warning"), "{}", stderr(&o));
}

#[test]
fn delete_group_escapes_member_ids_from_the_log() {
    // A member id with an escape sequence in a klog directory's __offsets-0
    // (ConsumerGroupMemberMetadata, type 5, with a value the coordinator
    // loads: one it cannot decode it would not apply).
    let env = TestEnv::new();
    let key = crate::support::encoded("out = coordinator_key(5, 'g', 'm\\x1b[31m')");
    let value = crate::support::encoded(
        "out = consumer_group_member_metadata_value(None, None, 'c', '/h', ['orders'], None, 30000, 'uniform')",
    );
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let line = format!(
        "{{\"key\": {{\"base64\": \"{}\"}}, \"value\": {{\"base64\": \"{}\"}}}}\n",
        b64(&key),
        b64(&value)
    );
    let o = env.run(
        &[
            "produce",
            "d",
            "--topic",
            "__offsets",
            "--input-format",
            "json",
        ],
        Some(&line),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let args = [
        "tombstone",
        "d",
        "--group",
        "g",
        "--delete-group",
        "--dry-run",
    ];
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        !stderr(&o).contains('\x1b') && stderr(&o).contains("\\u{1b}"),
        "{}",
        stderr(&o)
    );
    let o = env.run(&[&args[..], &["--force"]].concat(), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "would delete g ConsumerGroupMemberMetadata m\\x1b[31m: tombstone to __offsets-0 at offset 1\n"
    );
}

/// The number of batches at `from` and after in `partition`.
fn batches_from(env: &TestEnv, partition: &str, from: i64) -> usize {
    let p = kaen_log::log::Partition::open(&env.path(partition)).unwrap();
    let mut walk = p.walk_from(from, kaen_log::log::Policy::VALID_ENTRIES);
    let mut n = 0;
    while let Some(w) = walk.next_entry().unwrap() {
        if w.entry.base_offset() >= from {
            n += 1;
        }
    }
    n
}

/// DeleteGroups of a share group deletes its share-partitions' state
/// first (GroupCoordinatorService.deleteShareGroups, then
/// ShareCoordinatorShard.deleteState): a ShareSnapshot tombstone, one
/// batch each, for every share-partition the group's
/// ShareGroupStatePartitionMetadata names that has state. kraft.py:
/// share-audit's metadata names orders [0, 1] (initialized); its state
/// holds orders-0, orders-1 and fresh-0 (a ShareUpdate with no snapshot),
/// in __share_group_state-0 (9 records, the topic's one partition in the
/// metadata). fresh-0 is not named: Kafka leaves it.
#[test]
fn delete_group_of_a_share_group_deletes_its_share_state_first() {
    let env = TestEnv::new();
    let state = "fixtures/kraft/__share_group_state-0/00000000000000000000.log";
    let before = size(&env, state);
    // share-audit has member s-1 recorded: refused, nothing written anywhere.
    let args = [
        "tombstone",
        "fixtures/kraft",
        "--group",
        "share-audit",
        "--delete-group",
        "--now-ms",
        "1700000100000",
    ];
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(size(&env, state), before);
    let o = env.run(&[&args[..], &["--force"]].concat(), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.starts_with(
            "deleted share-audit share state of orders-0: ShareSnapshot tombstone at __share_group_state-0 offset 9\n\
             deleted share-audit share state of orders-1: ShareSnapshot tombstone at __share_group_state-0 offset 10\n\
             deleted share-audit ShareGroupCurrentMemberAssignment s-1: tombstone at __consumer_offsets-0 offset 26\n"
        ),
        "{text}"
    );
    assert!(
        stderr(&o).contains(
            "klog: note: share-audit state of fresh-0 left: the group's ShareGroupStatePartitionMetadata \
             does not name it"
        ),
        "{}",
        stderr(&o)
    );
    // The keys are ShareSnapshotKey (type 0) as the independent encoder
    // writes them; one batch per share-partition.
    let expected = crate::support::encoded(
        "ORDERS = b'orders-topic-id!'\n\
         out = b''.join(len(k).to_bytes(2, 'big') + k for k in [\n\
         coordinator_key(0, 'share-audit', ORDERS, 0), coordinator_key(0, 'share-audit', ORDERS, 1)])",
    );
    let got: Vec<u8> = keys_from(&env, "fixtures/kraft/__share_group_state-0", 9)
        .into_iter()
        .flat_map(|k| [(k.len() as u16).to_be_bytes().to_vec(), k].concat())
        .collect();
    assert_eq!(got, expected);
    assert_eq!(
        batches_from(&env, "fixtures/kraft/__share_group_state-0", 9),
        2
    );
    // What is left of the group's state: fresh-0 only.
    let o = env.run(&["groups", "--share-state", "fixtures/kraft"], None);
    let rows: Vec<Vec<String>> = stdout(&o)
        .lines()
        .skip(1)
        .map(|l| l.split_whitespace().take(3).map(String::from).collect())
        .collect();
    assert_eq!(rows, [["share-audit", "fresh", "0"]]);
    assert_eq!(
        env.run(&["verify-crc", "fixtures/kraft"], None)
            .status
            .code(),
        Some(0)
    );
}

/// Each share-partition's tombstone goes to the partition of
/// __share_group_state that owns its key: abs(hashCode("group:topicId:
/// partition")) % partitions (ShareCoordinatorService.partitionFor), here
/// computed by the independent encoder's Java hash. Share group sg (empty)
/// names T [0, 1, 2]; its state for each lies in its key's partition of 3,
/// and a stray copy of T-1's in another partition is left alone.
#[test]
fn share_state_tombstones_go_to_the_partition_that_owns_the_key() {
    let env = TestEnv::new();
    let dir = env.path("share");
    let script = r#"
T = 1700000000000
TID = b"share-topic-id-1"
def owner(p):
    return abs(java_hash("sg:%s:%d" % (uuid_text(TID), p))) % 3
coordinator = [
    (coordinator_key(11, "sg"), group_epoch_and_hash_value(1, 0)),
    (coordinator_key(15, "sg"), share_state_partition_metadata_value([], [(TID, "T", [0, 1, 2])], [])),
]
state = {0: [], 1: [], 2: []}
for p in range(3):
    state[owner(p)].append((coordinator_key(0, "sg", TID, p), share_snapshot_value(0, 1, 0, 0, T, T, [])))
stray = [q for q in range(3) if q != owner(1)][0]
state[stray].append((coordinator_key(0, "sg", TID, 1), share_snapshot_value(0, 1, 0, 0, T, T, [])))
def log(records):
    return batch(0, [(i, 0, k, v) for i, (k, v) in enumerate(records)], first_timestamp=T) if records else b""
"#;
    let int = |expr: &str| -> i64 {
        let b = encoded(&format!("{script}\nout = str({expr}).encode()"));
        String::from_utf8(b).unwrap().parse().unwrap()
    };
    let offsets = encoded(&format!("{script}\nout = log(coordinator)"));
    crate::support::write_segment(&dir, "__consumer_offsets-0", &offsets);
    let mut ends = Vec::new();
    for n in 0..3 {
        let bytes = encoded(&format!("{script}\nout = log(state[{n}])"));
        crate::support::write_segment(&dir, &format!("__share_group_state-{n}"), &bytes);
        ends.push(int(&format!("len(state[{n}])")));
    }
    let owner: Vec<i64> = (0..3).map(|p| int(&format!("owner({p})"))).collect();
    // Not vacuous: the keys land in more than one partition.
    assert!(owner.iter().any(|&o| o != owner[0]), "{owner:?}");
    let stray = int("stray");
    let base = [
        "tombstone",
        "share",
        "--group",
        "sg",
        "--delete-group",
        "--offsets-partitions",
        "1",
        "--replication-factor",
        "1",
    ];
    // Without the metadata or --share-state-partitions the state cannot be placed.
    let o = env.run(&base, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("pass --share-state-partitions"),
        "{}",
        stderr(&o)
    );
    let o = env.run(
        &[&base[..], &["--share-state-partitions", "3"]].concat(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // Each tombstone at the end of its key's partition, in partition order.
    let mut next = ends.clone();
    let mut want: Vec<(i64, i64)> = (0..3).map(|p| (owner[p as usize], p)).collect();
    want.sort();
    let expected: String = want
        .iter()
        .map(|&(n, p)| {
            let at = next[n as usize];
            next[n as usize] += 1;
            format!(
                "deleted sg share state of T-{p}: ShareSnapshot tombstone at __share_group_state-{n} offset {at}\n"
            )
        })
        .collect();
    assert!(
        stdout(&o).starts_with(&expected),
        "{}\n{expected}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains(&format!(
            "klog: note: sg state of T-1 left: it lies in __share_group_state-{stray}, not in the partition that owns its key"
        )),
        "{}",
        stderr(&o)
    );
}

/// The log end of `part` (one past its last batch's last offset).
fn log_end(env: &TestEnv, part: &str) -> i64 {
    let o = env.run(&["dump-segment", "--format", "json", part], None);
    dump_batches(&o)
        .last()
        .map_or(0, |b| b["last_offset"].as_i64().unwrap() + 1)
}

#[test]
fn commit_stamps_one_epoch_on_every_replica_and_assigns_it_in_each_checkpoint() {
    // Three replicas of __consumer_offsets-8 (group shipping, 50
    // partitions): node 1 was elected at epoch 5 after the last write
    // (`Partition.makeLeader` assigns the new epoch at the log end), nodes 2
    // and 3 still end at epoch 3. The batch must be the same bytes on all
    // three, stamped 5, the newest epoch (a lower one would make node 1's
    // followers truncate it: `AbstractFetcherThread`, truncation by
    // `LeaderEpochFileCache.endOffsetFor`), and each checkpoint gets
    // (5, its start) as `LeaderEpochFileCache.assign` records it.
    let env = TestEnv::new();
    let dirs = ["r1", "r2", "r3"];
    for d in dirs {
        crate::support::copy_dir(&env.path("fixtures/kafka"), &env.path(d));
    }
    let part = "__consumer_offsets-8";
    let end = log_end(&env, &format!("r1/{part}"));
    let checkpoint = |d: &str| env.path(d).join(part).join("leader-epoch-checkpoint");
    std::fs::write(checkpoint("r1"), format!("0\n2\n3 0\n5 {end}\n")).unwrap();
    let commit: Vec<&str> =
        "commit r1 --replica r2 --replica r3 --offsets-partitions 50 --replication-factor 3 -g shipping -t orders -p 1 --offset 7 --now-ms 1"
            .split(' ')
            .collect();
    let o = env.run(&commit, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let logs: Vec<Vec<u8>> = dirs
        .iter()
        .map(|d| std::fs::read(env.path(d).join(part).join("00000000000000000000.log")).unwrap())
        .collect();
    assert!(
        logs.windows(2).all(|w| w[0] == w[1]),
        "the replicas' logs differ"
    );
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "--from-offset",
            &end.to_string(),
            &format!("r2/{part}"),
        ],
        None,
    );
    let batches = dump_batches(&o);
    assert_eq!(batches.len(), 1);
    assert_eq!(batches[0]["partition_leader_epoch"].as_i64(), Some(5));
    for d in dirs {
        assert_eq!(
            std::fs::read_to_string(checkpoint(d)).unwrap(),
            format!("0\n2\n3 0\n5 {end}\n"),
            "{d}"
        );
    }

    // Node 2 now says epoch 6 began below the log end, where the others
    // hold epoch 5: the replicas diverged there, and no one batch suits
    // them all. Refused, nothing written anywhere.
    std::fs::write(checkpoint("r2"), format!("0\n3\n3 0\n5 {end}\n6 {end}\n")).unwrap();
    let before: Vec<Vec<u8>> = dirs
        .iter()
        .map(|d| std::fs::read(env.path(d).join(part).join("00000000000000000000.log")).unwrap())
        .collect();
    let o = env.run(&commit, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(&format!("disagree on the epoch of offset {end}"))
            && stderr(&o).contains("nothing was written"),
        "{}",
        stderr(&o)
    );
    for (d, b) in dirs.iter().zip(&before) {
        let now = std::fs::read(env.path(d).join(part).join("00000000000000000000.log")).unwrap();
        assert_eq!(&now, b, "{d} was written");
    }
}

#[test]
fn a_commit_to_kafkas_three_replicas_is_the_same_batch_and_epoch_everywhere() {
    // The three brokers of fixtures/kafka-real/4.1.1 (written by Kafka 4.1.1);
    // only broker 1 keeps the KRaft metadata, which places classic-g in
    // __consumer_offsets-1 (3 partitions) for all three and gives the
    // topic's segment.bytes. Each replica gets the same bytes; each
    // leader-epoch-checkpoint ends with the batch's epoch; and verify-crc
    // stays clean, the closing time-index entry included
    // (`.kafka_cleanshutdown` makes brokers 1 and 2 trust it).
    let env = TestEnv::new();
    for b in 1..=3 {
        crate::support::copy_dir(
            &crate::support::repo().join(format!("fixtures/kafka-real/4.1.1/broker-{b}")),
            &env.path(&format!("b{b}")),
        );
    }
    // --verbose says the configuration each replica appends with.
    let o = env.run(
        &"commit b1 --replica b2 --replica b3 -g classic-g -t plain -p 0 --offset 3 --now-ms 1767225600000 -v"
            .split(' ')
            .collect::<Vec<_>>(),
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("at __consumer_offsets-1"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("b3: __consumer_offsets: segment.bytes=104857600 (topic config)"),
        "{}",
        stderr(&o)
    );
    let file = |b: u8, name: &str| env.path(&format!("b{b}/__consumer_offsets-1/{name}"));
    let log = |b| std::fs::read(file(b, "00000000000000000000.log")).unwrap();
    assert!(log(1) == log(2) && log(2) == log(3), "the replicas differ");
    let epochs: Vec<String> = (1..=3)
        .map(|b| std::fs::read_to_string(file(b, "leader-epoch-checkpoint")).unwrap())
        .collect();
    assert!(epochs.iter().all(|e| *e == epochs[0]), "{epochs:?}");
    let o = env.run(&["verify-crc", "b1", "b2", "b3"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(!stdout(&o).contains("time_index_stale"), "{}", stdout(&o));
}

/// The rows a writer printed in `format`, as JSON objects: the document's
/// array `field` (json), the lines of type `kind` (jsonl), or the CSV rows
/// (every cell a string); and the `written` entries (json and jsonl).
fn written_rows(
    o: &std::process::Output,
    command: &str,
    format: &str,
    field: &str,
    kind: &str,
) -> (Vec<serde_json::Value>, Vec<serde_json::Value>) {
    match format {
        "json" => {
            let doc = crate::support::document(o, command);
            assert_eq!(doc["executed"], true, "{doc}");
            (
                doc[field].as_array().unwrap().clone(),
                doc["written"].as_array().unwrap().clone(),
            )
        }
        "jsonl" => {
            let lines = crate::support::jsonl(o, command);
            let of = |t: &str| -> Vec<serde_json::Value> {
                lines
                    .iter()
                    .filter(|l| l["type"] == t)
                    .map(|l| {
                        let mut l = l.clone();
                        l.as_object_mut().unwrap().remove("type");
                        l
                    })
                    .collect()
            };
            let summary = of("summary");
            assert_eq!(summary.len(), 1, "{lines:?}");
            assert_eq!(summary[0]["executed"], true, "{lines:?}");
            (of(kind), of("written"))
        }
        "csv" => {
            let rows = crate::support::csv_objects(&stdout(o))
                .into_iter()
                .map(|r| serde_json::to_value(r).unwrap())
                .collect();
            (rows, Vec::new())
        }
        other => panic!("{other}"),
    }
}

/// `expected` (JSON values) against `got` (JSON, or CSV cells as strings):
/// each field of each expected row.
fn assert_rows(got: &[serde_json::Value], expected: &[serde_json::Value], ctx: &str) {
    assert_eq!(got.len(), expected.len(), "{ctx}: {got:?}");
    for (g, e) in got.iter().zip(expected) {
        for (field, value) in e.as_object().unwrap() {
            let g = &g[field];
            if g.is_string() && !value.is_string() {
                assert_eq!(
                    g.as_str().unwrap(),
                    crate::support::cell(value),
                    "{ctx}: {field}"
                );
            } else {
                assert_eq!(g, value, "{ctx}: {field}");
            }
        }
    }
}

#[test]
fn tombstone_reports_what_it_wrote_in_json_jsonl_and_csv() {
    for format in ["json", "jsonl", "csv"] {
        let env = TestEnv::new();
        let part = "fixtures/groups/__offsets-0";
        let before = table(&env, "fixtures/groups");
        let end = crate::support::dumped_log_end(&env, part);
        let o = env.run(
            &[
                "tombstone",
                "fixtures/groups",
                "--group",
                "auditor",
                "--now-ms",
                "1700000099000",
                "--format",
                format,
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        // What the log holds now: one batch of tombstones after the old end.
        let batches = crate::support::batches_from_offset(&env, part, end);
        assert_eq!(batches.len(), 1, "{format}");
        let b = &batches[0];
        let expected: Vec<serde_json::Value> = b["records"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                assert!(r["value"].is_null(), "a tombstone: {r}");
                let key = &r["decoded"]["key"];
                let (t, p) = (
                    key["topic"].as_str().unwrap(),
                    key["partition"].as_i64().unwrap(),
                );
                let was = before
                    .iter()
                    .find(|x| x.0 == "auditor" && x.1 == t && x.2 == p)
                    .map(|x| x.3)
                    .unwrap();
                serde_json::json!({
                    "group": key["group"],
                    "record": "OffsetCommit",
                    "topic": t,
                    "partition": p,
                    "committed_offset": was,
                    "deleted": format!("{t}-{p} (was {was})"),
                    "log_partition": "__offsets-0",
                    "log_offset": r["offset"],
                })
            })
            .collect();
        assert_eq!(expected.len(), 2, "auditor has two offsets (make.sh)");
        let (rows, written) = written_rows(&o, "tombstone", format, "tombstones", "tombstone");
        assert_rows(&rows, &expected, format);
        let (first, last) = (b["base_offset"].clone(), b["last_offset"].clone());
        if format != "csv" {
            assert_eq!(
                written,
                [serde_json::json!({
                    "path": part,
                    "log_partition": "__offsets-0",
                    "first_offset": first,
                    "last_offset": last,
                })],
                "{format}"
            );
        }
        // People read what was written on stderr, in every format.
        assert!(
            stderr(&o).contains(&format!(
                "klog: wrote 2 tombstones to {part} at offsets {first}..={last}\n"
            )),
            "{format}: {}",
            stderr(&o)
        );
        assert!(
            !table(&env, "fixtures/groups")
                .iter()
                .any(|r| r.0 == "auditor"),
            "{format}"
        );
    }
}

#[test]
fn tombstone_dry_run_document_says_nothing_was_written() {
    let env = TestEnv::new();
    let part = "fixtures/groups/__offsets-0";
    let before = std::fs::read(env.path(OFFSETS_LOG)).unwrap();
    let end = crate::support::dumped_log_end(&env, part);
    let o = env.run(
        &[
            "tombstone",
            "fixtures/groups",
            "--group",
            "kitchen",
            "--dry-run",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = crate::support::document(&o, "tombstone");
    assert_eq!(doc["executed"], false);
    assert_eq!(doc["written"], serde_json::json!([]));
    let was = table(&env, "fixtures/groups")
        .into_iter()
        .find(|r| r.0 == "kitchen" && r.1 == "orders" && r.2 == 0)
        .unwrap()
        .3;
    assert_rows(
        doc["tombstones"].as_array().unwrap(),
        &[serde_json::json!({
            "group": "kitchen",
            "record": "OffsetCommit",
            "topic": "orders",
            "partition": 0,
            "committed_offset": was,
            "log_partition": "__offsets-0",
            "log_offset": end,
        })],
        "dry run",
    );
    assert_eq!(std::fs::read(env.path(OFFSETS_LOG)).unwrap(), before);
}

#[test]
fn delete_group_json_holds_the_names_exactly_and_share_state_rows() {
    // A member id with an escape sequence: text escapes it (above), JSON
    // carries it exactly.
    let env = TestEnv::new();
    let key = crate::support::encoded("out = coordinator_key(5, 'g', 'm\\x1b[31m')");
    let value = crate::support::encoded(
        "out = consumer_group_member_metadata_value(None, None, 'c', '/h', ['orders'], None, 30000, 'uniform')",
    );
    use base64::Engine;
    let b64 = |b: &[u8]| base64::engine::general_purpose::STANDARD.encode(b);
    let line = format!(
        "{{\"key\": {{\"base64\": \"{}\"}}, \"value\": {{\"base64\": \"{}\"}}}}\n",
        b64(&key),
        b64(&value)
    );
    let o = env.run(
        &[
            "produce",
            "d",
            "--topic",
            "__offsets",
            "--input-format",
            "json",
        ],
        Some(&line),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(
        &[
            "tombstone",
            "d",
            "--group",
            "g",
            "--delete-group",
            "--force",
            "--now-ms",
            "5",
            "--format",
            "csv",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = crate::support::csv_objects(&stdout(&o));
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0]["record"], "ConsumerGroupMemberMetadata");
    // CSV cells are escaped as text shows them (--csv-cells raw: exact).
    assert_eq!(rows[0]["deleted"], "m\\x1b[31m");
    assert!(!stdout(&o).contains('\x1b'));

    // share-audit (kraft.py): its share state first, in
    // __share_group_state-0, one batch each, then its group's records.
    let env = TestEnv::new();
    let state = "fixtures/kraft/__share_group_state-0";
    let offsets = "fixtures/kraft/__consumer_offsets-0";
    let (state_end, offsets_end) = (
        crate::support::dumped_log_end(&env, state),
        crate::support::dumped_log_end(&env, offsets),
    );
    let o = env.run(
        &[
            "tombstone",
            "fixtures/kraft",
            "--group",
            "share-audit",
            "--delete-group",
            "--force",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = crate::support::document(&o, "tombstone");
    let rows = doc["tombstones"].as_array().unwrap();
    let mut expected_written = Vec::new();
    let mut expected_rows = Vec::new();
    for b in crate::support::batches_from_offset(&env, state, state_end) {
        for r in b["records"].as_array().unwrap() {
            let key = &r["decoded"]["key"];
            expected_rows.push(serde_json::json!({
                "group": "share-audit",
                "record": "ShareSnapshot",
                "partition": key["data"]["partition"],
                "log_partition": "__share_group_state-0",
                "log_offset": r["offset"],
            }));
        }
        expected_written.push(serde_json::json!({
            "path": state,
            "log_partition": "__share_group_state-0",
            "first_offset": b["base_offset"],
            "last_offset": b["last_offset"],
        }));
    }
    assert_eq!(expected_written.len(), 2, "orders-0 and orders-1");
    let ours = crate::support::batches_from_offset(&env, offsets, offsets_end);
    assert_eq!(ours.len(), 1);
    for r in ours[0]["records"].as_array().unwrap() {
        expected_rows.push(serde_json::json!({
            "group": "share-audit",
            "log_partition": "__consumer_offsets-0",
            "log_offset": r["offset"],
        }));
    }
    expected_written.push(serde_json::json!({
        "path": offsets,
        "log_partition": "__consumer_offsets-0",
        "first_offset": ours[0]["base_offset"],
        "last_offset": ours[0]["last_offset"],
    }));
    assert_rows(rows, &expected_rows, "share-audit");
    assert!(rows[..2].iter().all(|r| r["topic"] == "orders"), "{rows:?}");
    assert_eq!(doc["written"].as_array().unwrap(), &expected_written);
}

#[test]
fn commit_reports_what_it_wrote_in_every_format() {
    let part = "__consumer_offsets-8";
    for format in ["text", "json", "jsonl", "csv"] {
        let env = TestEnv::new();
        crate::support::copy_dir(&env.path("fixtures/kafka"), &env.path("replica-2"));
        let dirs = ["fixtures/kafka", "replica-2"];
        let end = crate::support::dumped_log_end(&env, &format!("fixtures/kafka/{part}"));
        let o = env.run(
            &[
                "commit",
                "fixtures/kafka",
                "--replica",
                "replica-2",
                "--offsets-partitions",
                "50",
                "--replication-factor",
                "2",
                "-g",
                "shipping",
                "-t",
                "orders",
                "-p",
                "1",
                "--offset",
                "999",
                "--now-ms",
                "1",
                "--format",
                format,
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{format}: {}", stderr(&o));
        // Each replica holds one new batch of one commit, the same offset.
        let mut got = Vec::new();
        let mut expected_written = Vec::new();
        for d in dirs {
            let path = format!("{d}/{part}");
            let batches = crate::support::batches_from_offset(&env, &path, end);
            assert_eq!(batches.len(), 1, "{format}: {d}");
            let r = &batches[0]["records"][0];
            let key = &r["decoded"]["key"];
            assert_eq!(
                (&key["group"], &key["topic"], &key["partition"]),
                (&"shipping".into(), &"orders".into(), &1.into())
            );
            let (offset, at) = (
                r["decoded"]["value"]["offset"].as_i64().unwrap(),
                r["offset"].as_i64().unwrap(),
            );
            got.push((offset, at));
            // The replay of the directory shows the commit.
            assert!(
                table(&env, d).contains(&("shipping".into(), "orders".into(), 1, offset as u64)),
                "{format}: {d}"
            );
            expected_written.push(serde_json::json!({
                "path": path,
                "log_partition": part,
                "first_offset": at,
                "last_offset": at,
            }));
            // commit says what it wrote on stderr, as tombstone and reset-offsets do.
            assert!(
                stderr(&o).contains(&format!(
                    "klog: wrote 1 offset commit to {path} at offsets {at}..={at}\n"
                )),
                "{format}: {}",
                stderr(&o)
            );
        }
        assert_eq!(got[0], got[1], "{format}: the same batch on both");
        let (offset, at) = got[0];
        // 999 was clamped: a note, and the row says so.
        assert!(offset < 999, "{offset}");
        if format == "text" {
            assert_eq!(
                stdout(&o),
                format!("shipping orders-1 -> {offset} committed at {part} offset {at}\n")
            );
            continue;
        }
        let (rows, written) = written_rows(&o, "commit", format, "commits", "commit");
        assert_rows(
            &rows,
            &[serde_json::json!({
                "group": "shipping",
                "topic": "orders",
                "partition": 1,
                "new_offset": offset,
                "log_partition": part,
                "log_offset": at,
            })],
            format,
        );
        assert!(
            crate::support::cell(&rows[0]["note"]).contains("999"),
            "{format}: {rows:?}"
        );
        if format != "csv" {
            assert_eq!(written, expected_written, "{format}");
        }
    }
}

/// Positional DIRs are one broker's log directories (JBOD included): a
/// writer writes the one holding the group's offsets partition, and another
/// broker's replica is given with --replica; two copies of the partition on
/// one broker are refused, writing nothing.
#[test]
fn writers_write_the_brokers_log_dir_that_holds_the_partition() {
    let env = TestEnv::new();
    // A second log directory of the same broker, holding another partition.
    std::fs::create_dir_all(env.path("jbod-2/other-0")).unwrap();
    let commit = |dirs: &[&str]| {
        let args = [
            &["commit"][..],
            dirs,
            &["--offsets-partitions", "50", "--replication-factor", "1"],
            SHIPPING_ORDERS_1_AT_7,
        ]
        .concat();
        env.run(&args, None)
    };
    let o = commit(&["jbod-2", "fixtures/kafka"]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        table(&env, "fixtures/kafka").contains(&("shipping".into(), "orders".into(), 1, 7)),
        "{}",
        stderr(&o)
    );
    let names: Vec<String> = std::fs::read_dir(env.path("jbod-2"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    assert_eq!(names, ["other-0"], "the other log directory is left alone");
    // The same partition in two of one broker's directories: refused.
    crate::support::copy_dir(&env.path("fixtures/kafka"), &env.path("jbod-3"));
    let before = crate::support::snapshot(&env.path("fixtures/kafka"));
    let o = commit(&["fixtures/kafka", "jbod-3"]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("both hold group"), "{}", stderr(&o));
    assert!(stderr(&o).contains("--replica DIR"), "{}", stderr(&o));
    assert_eq!(
        crate::support::snapshot(&env.path("fixtures/kafka")),
        before
    );
}

#[test]
fn a_record_that_does_not_decode_is_said_alike_by_every_command_that_replays() {
    // Offsets partition 0: a live commit of group g (batch 0), then a batch
    // whose attributes say gzip over plain records (CRC-valid: only
    // decompressing finds it). Its records start after the 61-byte v2
    // batch header (DefaultRecordBatch.RECORD_BATCH_OVERHEAD). orders-0
    // holds 8 records.
    let env = TestEnv::new();
    let first = encoded(
        "out = batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), \
         offset_commit_value(5, 1700000000000))])",
    );
    let second = encoded(
        "out = batch(1, [(0, 0, offset_commit_key('g', 'orders', 1), \
         offset_commit_value(6, 1700000000000))], attributes=1)",
    );
    let segment = [first.clone(), second].concat();
    crate::support::write_segment(&env.path("data"), "__consumer_offsets-0", &segment);
    let orders = encoded("out = batch(0, [(i, i, b'k', b'v') for i in range(8)])");
    crate::support::write_segment(&env.path("data"), "orders-0", &orders);
    let said = format!(
        "klog: data/__consumer_offsets-0/00000000000000000000.log: partition 0 offset 1: \
         byte {}: gzip records do not decompress",
        first.len() + 61
    );
    let now = ["--now-ms", "1700000100000"];
    let o = env.run(&[&["replay-offsets", "data"][..], &now].concat(), None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains(&said), "{said}\n{}", stderr(&o));
    let writers = [
        (
            &["tombstone", "data", "--group", "g", "--dry-run"][..],
            "tombstoning the keys the rest of the log holds",
        ),
        (
            &[
                "reset-offsets",
                "data",
                "--group",
                "g",
                "--all-topics",
                "--to-earliest",
            ][..],
            "the current offsets are those the rest of the log holds",
        ),
    ];
    let one = ["--offsets-partitions", "1", "--replication-factor", "1"];
    for (args, writing) in writers {
        let o = env.run(&[args, &one, &now].concat(), None);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let warning =
            format!("klog: warning: the record that does not decode is not replayed; {writing}");
        for line in [&said, &warning] {
            assert!(
                stderr(&o).contains(line.as_str()),
                "{args:?}: {line}\n{}",
                stderr(&o)
            );
        }
    }
}

#[test]
fn a_write_says_its_append_configuration_only_with_verbose() {
    // The three brokers of Kafka 4.4.0: a commit of each kind of run, the
    // configuration line on stderr only with -v (the topic's segment.bytes
    // comes from its topic config in the KRaft metadata).
    let env = TestEnv::new();
    for b in 1..=3 {
        crate::support::copy_dir(
            &crate::support::repo().join(format!("fixtures/kafka-real/4.4.0/broker-{b}")),
            &env.path(&format!("b{b}")),
        );
    }
    let commit =
        "commit b1 --replica b2 --replica b3 -g classic-g -t plain -p 0 --now-ms 1767225600000";
    for (extra, said) in [("--offset 3", false), ("--offset 4 -v", true)] {
        let args = format!("{commit} {extra}");
        let o = env.run(&args.split(' ').collect::<Vec<_>>(), None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(
            stderr(&o).contains("__consumer_offsets: segment.bytes="),
            said,
            "{args}: {}",
            stderr(&o)
        );
    }
}
