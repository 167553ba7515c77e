use crate::support::{check_golden, document, stderr, stdout, TestEnv};

#[test]
fn identical_copies_exit_0() {
    let env = TestEnv::new();
    let o = env.run(
        &["diff", "fixtures/data/orders-0", "fixtures/data/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("verdict: identical"));
}

#[test]
fn a_flipped_byte_and_a_torn_tail() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "diff",
            "fixtures/data/orders-0",
            "fixtures/corrupt/orders-0",
        ],
        1,
        "diff/corrupt",
    );
    let o = env.run(
        &[
            "diff",
            "--format",
            "json",
            "fixtures/truncated/orders-0",
            "fixtures/data/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let v = document(&o, "diff");
    assert_eq!(v["divergence"]["offset"], 125);
    assert!(
        v["divergence"]["a"].is_null(),
        "the truncated copy ends there"
    );
    assert_eq!(
        (
            v["log_end_offset_a"].as_i64(),
            v["log_end_offset_b"].as_i64()
        ),
        (Some(125), Some(128))
    );
    assert!(v["verdict"].as_str().unwrap().starts_with("keep B"));
}

#[test]
fn replicas_that_diverged_both_valid() {
    let env = TestEnv::new();
    crate::support::copy_dir(
        &env.path("fixtures/data/payments.eu-west-1"),
        &env.path("replica/payments.eu-west-1"),
    );
    let o = env.run(
        &[
            "produce",
            "replica",
            "--topic",
            "payments.eu-west",
            "--partition",
            "1",
            "--timestamp-ms",
            "7",
        ],
        Some("only-here\n"),
    );
    assert_eq!(o.status.code(), Some(0));
    let o = env.run(
        &[
            "produce",
            "fixtures/data",
            "--topic",
            "payments.eu-west",
            "--partition",
            "1",
            "--timestamp-ms",
            "8",
        ],
        Some("different\n"),
    );
    assert_eq!(o.status.code(), Some(0));
    let o = env.run(
        &[
            "diff",
            "fixtures/data/payments.eu-west-1",
            "replica/payments.eu-west-1",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains("common prefix: 2 batches, offsets up to 1"),
        "{text}"
    );
    assert!(text.contains("diverge at offset 2:"), "{text}");
    assert!(
        text.contains("both hold valid but different batches there"),
        "{text}"
    );
}

/// Two brokers' data directories are not two copies of one partition:
/// refused (exit 2) with the ways to compare them, never "identical".
#[test]
fn data_directories_are_refused_not_called_identical() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "diff",
            "fixtures/cluster/broker-1",
            "fixtures/cluster/broker-2",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("is a data directory, not a copy of one partition"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("klog cluster"), "{}", stderr(&o));
}

/// One pass of Kafka's log cleaner on one copy (fixtures/cleaner, written
/// by cleaner.py with the independent encoder): the cleaned copy lacks
/// offset 0 (superseded by offset 3, same key) and offset 1 (an aborted
/// transaction's commit of the same key), and its first batches differ in
/// bytes. The records at every offset both hold agree: in sync, with a note.
#[test]
fn a_copy_and_its_cleaned_copy_are_in_sync() {
    let env = TestEnv::new();
    let (a, b) = (
        "fixtures/cleaner/uncleaned/__consumer_offsets-0",
        "fixtures/cleaner/cleaned/__consumer_offsets-0",
    );
    let o = env.run(&["diff", a, b], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = stdout(&o);
    for line in [
        "note: from offset 0 the batches differ in bytes but the records agree: A 3 batches (296 bytes, ",
        "records the cleaner removed: from A none, from B 2 (2 superseded by a later record of its key)",
        "differs: 00000000000000000000.log (A 405 bytes, B 187 bytes, first difference at byte 7)",
        "verdict: in sync: the same record at every offset",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    assert!(!text.contains("diverge"), "{text}");

    let o = env.run(&["diff", "--format", "json", a, b], None);
    assert_eq!(o.status.code(), Some(0));
    let v = document(&o, "diff");
    assert_eq!(v["identical"], false);
    assert_eq!(v["in_sync"], true);
    assert!(v["divergence"].is_null(), "{v}");
    assert_eq!(v["rewritten"]["offset"], 0);
    // Uncleaned: batches 0, 1 and the ABORT at 2 (78 + 140 + 78 bytes);
    // cleaned: the ABORT only. Offset 3 and segment 4 are the same bytes.
    assert_eq!(v["rewritten"]["batches_a"], 3);
    assert_eq!(v["rewritten"]["batches_b"], 1);
    assert_eq!(v["rewritten"]["b"]["base_offset"], 2);
    assert_eq!(v["rewritten"]["removed_b"]["superseded"], 2);
    assert_eq!(v["rewritten"]["removed_a"]["superseded"], 0);

    // CSV: the note is a row of its own, carrying the verdict.
    let o = env.run(&["diff", "--format", "csv", b, a], None);
    assert_eq!(o.status.code(), Some(0));
    let rows = crate::support::csv_objects(&stdout(&o));
    let note = rows.iter().find(|r| r["kind"] == "rewritten").unwrap();
    assert_eq!(note["offset"], "0");
    assert!(
        note["detail"].contains("from A 2 (2 superseded"),
        "{note:?}"
    );
    assert!(note["detail"].contains("; in sync: "), "{note:?}");
    assert!(rows.iter().all(|r| r["kind"] != "divergence"), "{rows:?}");
}

/// Brokers 1 and 3 of fixtures/cluster hold different epoch-1 batches at
/// offsets 4..6 (fixtures/README.md): still a divergence, at offset 4.
#[test]
fn replicas_with_different_records_still_diverge() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "diff",
            "--format",
            "json",
            "fixtures/cluster/broker-1/orders-0",
            "fixtures/cluster/broker-3/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let v = document(&o, "diff");
    assert_eq!(v["in_sync"], false);
    assert_eq!(v["divergence"]["offset"], 4);
    assert!(v["rewritten"].is_null());
}

/// Kafka 4.4.0's three replicas of `__consumer_offsets-2` are in sync (the
/// cluster ran with them in the ISR), but each broker's cleaner rewrote the
/// batch at offsets 11..=15 on its own: the same length, other bytes.
#[test]
fn kafka_replicas_cleaned_apart_are_in_sync() {
    let env = TestEnv::new();
    let real = crate::support::repo().join("fixtures/kafka-real/4.4.0");
    let (a, b) = (
        real.join("broker-1/__consumer_offsets-2"),
        real.join("broker-3/__consumer_offsets-2"),
    );
    let o = env.run(
        &[
            "diff",
            "--format",
            "json",
            a.to_str().unwrap(),
            b.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = document(&o, "diff");
    assert_eq!(v["in_sync"], true);
    assert_eq!(v["identical"], false);
    assert_eq!(v["common_last_offset"], 10);
    assert_eq!(v["rewritten"]["offset"], 11);
    assert_eq!(v["rewritten"]["a"]["position"], 567);
    assert_eq!(v["rewritten"]["b"]["position"], 567);
}

/// Three records as one batch (copy A) against copy B, whose batches are
/// `b_batches`: the encoder's Python for B's segment.
fn split_copies(env: &TestEnv, b_batches: &str, checkpoint: Option<&str>) -> std::process::Output {
    let a = crate::support::encoded(
        "out = batch(0, [(0, 0, b'k0', b'v0'), (1, 1, b'k1', b'v1'), (2, 2, b'k2', b'v2')], first_timestamp=1000)",
    );
    let b = crate::support::encoded(&format!("out = {b_batches}"));
    crate::support::write_segment(&env.path("a"), "t-0", &a);
    crate::support::write_segment(&env.path("b"), "t-0", &b);
    if let Some(c) = checkpoint {
        std::fs::write(
            env.path("b/cleaner-offset-checkpoint"),
            crate::support::encoded(&format!("out = checkpoint({c})")),
        )
        .unwrap();
    }
    env.run(&["diff", "a/t-0", "b/t-0"], None)
}

#[test]
fn the_same_records_in_other_batches_are_in_sync() {
    let env = TestEnv::new();
    let o = split_copies(
        &env,
        "batch(0, [(0, 0, b'k0', b'v0')], first_timestamp=1000) + batch(1, [(0, 0, b'k1', b'v1'), (1, 1, b'k2', b'v2')], first_timestamp=1001)",
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains(
            "note: from offset 0 the batches differ in bytes but the records agree: A 1 batch"
        ),
        "{text}"
    );
}

#[test]
fn one_value_that_differs_at_one_offset_is_a_divergence() {
    let env = TestEnv::new();
    let o = split_copies(
        &env,
        "batch(0, [(0, 0, b'k0', b'v0')], first_timestamp=1000) + batch(1, [(0, 0, b'k1', b'v1!'), (1, 1, b'k2', b'v2')], first_timestamp=1001)",
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(text.contains("diverge at offset 1:"), "{text}");
    assert!(
        text.contains("b/t-0/00000000000000000000.log:72 offsets 1..=2"),
        "{text}"
    );
    assert!(!text.contains("note:"), "{text}");
}

#[test]
fn a_leader_epoch_that_differs_is_a_divergence() {
    let env = TestEnv::new();
    let o = split_copies(
        &env,
        "batch(0, [(0, 0, b'k0', b'v0'), (1, 1, b'k1', b'v1'), (2, 2, b'k2', b'v2')], first_timestamp=1000, leader_epoch=1)",
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("diverge at offset 0:"),
        "{}",
        stdout(&o)
    );
}

/// A record one copy lacks is compaction's doing only when the rules say
/// so: not for a key with no later record in that copy, even when the
/// cleaner has run on it; a tombstone once the cleaner has passed it.
#[test]
fn a_missing_record_is_explained_only_by_compaction() {
    let env = TestEnv::new();
    // B lacks offset 1 (k1, no later k1): a divergence at 1, checkpoint or not.
    for checkpoint in [None, Some("[('t', 0, 3)]")] {
        let env = TestEnv::new();
        let o = split_copies(
            &env,
            "batch(0, [(0, 0, b'k0', b'v0'), (2, 2, b'k2', b'v2')], first_timestamp=1000)",
            checkpoint,
        );
        assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
        assert!(
            stdout(&o).contains("diverge at offset 1:"),
            "{}",
            stdout(&o)
        );
    }
    // A's k0 at 0 superseded by k0 at 2 in both; B lacks offset 0: in sync.
    let a = crate::support::encoded(
        "out = batch(0, [(0, 0, b'k0', b'v0'), (1, 1, b'k1', None), (2, 2, b'k0', b'v2')], first_timestamp=1000)",
    );
    crate::support::write_segment(&env.path("a"), "t-0", &a);
    let superseded = "batch(0, [(1, 1, b'k1', None), (2, 2, b'k0', b'v2')], first_timestamp=1000)";
    let b = crate::support::encoded(&format!("out = {superseded}"));
    crate::support::write_segment(&env.path("b"), "t-0", &b);
    let o = env.run(&["diff", "a/t-0", "b/t-0"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("from B 1 (1 superseded"),
        "{}",
        stdout(&o)
    );
    // B lacks the tombstone at 1 as well: in sync only once B's cleaner
    // has passed it (its data directory's cleaner-offset-checkpoint).
    let b = crate::support::encoded("out = batch(0, [(2, 2, b'k0', b'v2')], first_timestamp=1000)");
    crate::support::write_segment(&env.path("b"), "t-0", &b);
    let o = env.run(&["diff", "a/t-0", "b/t-0"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("diverge at offset 1:"),
        "{}",
        stdout(&o)
    );
    std::fs::write(
        env.path("b/cleaner-offset-checkpoint"),
        crate::support::encoded("out = checkpoint([('t', 0, 3)])"),
    )
    .unwrap();
    let o = env.run(&["diff", "a/t-0", "b/t-0"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("from B 2 (1 superseded by a later record of its key, 1 tombstone)"),
        "{}",
        stdout(&o)
    );
}
