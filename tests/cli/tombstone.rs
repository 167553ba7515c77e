use crate::support::{document_rows, dump_batches, stderr, stdout, LockHolder, TestEnv};

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
    assert!(
        stderr(&o).contains("warning: writing __consumer_offsets-9 offline on this disk only"),
        "{}",
        stderr(&o)
    );
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
    // A fresh directory gets klog's own __offsets-0.
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
