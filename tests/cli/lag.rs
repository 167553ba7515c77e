use crate::support::{
    check_golden, document_rows, encoded, stderr, stdout, write_segment, TestEnv,
};

/// The `partitions` rows of `klog lag --format json`.
fn rows(env: &TestEnv, args: &[&str]) -> Vec<serde_json::Value> {
    let o = env.run(args, None);
    assert!(
        o.status.code() == Some(0) || o.status.code() == Some(1),
        "{}",
        stderr(&o)
    );
    document_rows(&o, "lag", "partitions")
}

fn find<'a>(
    rows: &'a [serde_json::Value],
    group: &str,
    topic: &str,
    partition: i64,
) -> &'a serde_json::Value {
    rows.iter()
        .find(|r| r["group"] == group && r["topic"] == topic && r["partition"] == partition)
        .unwrap()
}

#[test]
fn golden_text_and_json() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["lag", "--now-ms", "1700000100000", "fixtures/kafka"],
        0,
        "lag/kafka",
    );
    check_golden(
        &env,
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "fixtures/kafka",
        ],
        0,
        "lag/kafka-json",
    );
    check_golden(
        &env,
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--isolation",
            "read-committed",
            "fixtures/groups",
        ],
        0,
        "lag/groups-read-committed",
    );
}

#[test]
fn every_status_is_exercised() {
    let env = TestEnv::new();
    let r = rows(
        &env,
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "fixtures/kafka",
        ],
    );
    // billing orders-0: committed 25, high watermark 28 (checkpoint) below the log end 30.
    let b = find(&r, "billing", "orders", 0);
    assert_eq!(
        (
            b["status"].as_str(),
            b["lag"].as_i64(),
            b["log_end_offset"].as_i64(),
            b["high_watermark"].as_i64()
        ),
        (Some("ok"), Some(3), Some(30), Some(28))
    );
    assert_eq!(b["consumer_id"], "member-1");
    assert_eq!(b["client_id"], "billing-app");
    // shipping orders-1: committed 2 but the log starts at 5 (log-start-offset-checkpoint).
    let s = find(&r, "shipping", "orders", 1);
    assert_eq!(
        (
            s["status"].as_str(),
            s["log_start_offset"].as_i64(),
            s["pending_records"].as_u64()
        ),
        (Some("below_log_start"), Some(5), Some(5))
    );
    // reports orders-0: committed 99 on a log that ends at 30.
    assert_eq!(find(&r, "reports", "orders", 0)["status"], "above_log_end");
    // reports orders-7: no such partition here.
    let n = find(&r, "reports", "orders", 7);
    assert_eq!(
        (n["status"].as_str(), n["lag"].is_null()),
        (Some("no_partition"), true)
    );
    // shipping orders-0: committed 30 = log end, above the checkpointed high watermark 28: nothing left.
    assert_eq!(find(&r, "shipping", "orders", 0)["lag"], 0);
}

#[test]
fn a_log_that_ends_below_its_checkpointed_start_is_empty_at_that_start() {
    // fixtures/kafka's orders-1 starts at 5 by log-start-offset-checkpoint;
    // with its segment emptied the log on disk ends at 0. A broker loading
    // it deletes every segment and starts the log empty at 5
    // (LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd), so shipping's
    // commit at 2 lies below the log start with nothing left to read, and
    // the checkpointed high watermark 10 is clamped to 5.
    let env = TestEnv::new();
    std::fs::write(
        env.path("fixtures/kafka/orders-1/00000000000000000000.log"),
        b"",
    )
    .unwrap();
    let args = ["--now-ms", "1700000100000", "fixtures/kafka"];
    let r = rows(&env, &[&["lag", "--format", "json"][..], &args].concat());
    let s = find(&r, "shipping", "orders", 1);
    let ends = ["log_start_offset", "log_end_offset", "high_watermark"].map(|f| s[f].as_i64());
    assert_eq!(ends, [Some(5); 3]);
    assert_eq!(s["status"], "below_log_start");
    assert_eq!(s["pending_records"], 0);
    // The report draws the same lag: it runs to the end.
    let o = env.run(&[&["report", "-o", "r.html"][..], &args].concat(), None);
    assert!(matches!(o.status.code(), Some(0 | 1)), "{}", stderr(&o));
}

#[test]
fn exactly_once_group_has_no_pending_records() {
    let env = TestEnv::new();
    let r = rows(
        &env,
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "fixtures/groups",
        ],
    );
    let done = find(&r, "auditor", "ledger", 0);
    assert_eq!(
        (done["lag"].as_i64(), done["pending_records"].as_u64()),
        (Some(1), Some(0)),
        "the last COMMIT marker takes an offset"
    );
    let open = find(&r, "auditor", "ledger", 1);
    assert_eq!(
        (open["lag"].as_i64(), open["last_stable_offset"].is_null()),
        (Some(2), true)
    );
    let rc = rows(
        &env,
        &[
            "lag",
            "--format",
            "json",
            "--isolation",
            "read-committed",
            "fixtures/groups",
        ],
    );
    let open = find(&rc, "auditor", "ledger", 1);
    assert_eq!(
        (open["last_stable_offset"].as_i64(), open["lag"].as_i64()),
        (Some(0), Some(0)),
        "the open transaction pins the LSO at its first offset"
    );
    assert_eq!(
        find(&rc, "kitchen", "orders", 0)["last_stable_offset"],
        20,
        "no transaction: LSO = log end"
    );
}

#[test]
fn fail_above_sets_the_exit_code() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--fail-above",
            "20",
            "fixtures/groups",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--fail-above",
            "19",
            "fixtures/groups",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("1 partition lags more than 19"),
        "{}",
        stderr(&o)
    );
    let o = env.run(
        &[
            "lag",
            "--fail-above",
            "19",
            "--group",
            "kitchen",
            "fixtures/groups",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
}

#[test]
fn several_directories_are_merged() {
    let env = TestEnv::new();
    // Move orders-1 to a second log directory: the same report comes out.
    std::fs::create_dir(env.path("disk2")).unwrap();
    std::fs::rename(
        env.path("fixtures/kafka/orders-1"),
        env.path("disk2/orders-1"),
    )
    .unwrap();
    std::fs::copy(
        env.path("fixtures/kafka/log-start-offset-checkpoint"),
        env.path("disk2/log-start-offset-checkpoint"),
    )
    .unwrap();
    std::fs::copy(
        env.path("fixtures/kafka/replication-offset-checkpoint"),
        env.path("disk2/replication-offset-checkpoint"),
    )
    .unwrap();
    let merged = rows(
        &env,
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "fixtures/kafka",
            "disk2",
        ],
    );
    assert_eq!(
        find(&merged, "shipping", "orders", 1)["status"],
        "below_log_start"
    );
    assert_eq!(find(&merged, "billing", "orders", 1)["lag"], 3);
}

#[test]
fn log_end_comes_from_the_index_and_tail() {
    // orders-0 of fixtures/data has an index entry in its first segment and
    // three segments' worth of data; the log end is the last batch's end.
    let p = kaen_log::log::Partition::open(&crate::support::repo().join("fixtures/data/orders-0"))
        .unwrap();
    assert_eq!(p.log_end_offset().unwrap(), 128);
}

#[test]
fn isolation_accepts_kafkas_spelling_too() {
    let env = TestEnv::new();
    let a = env.run(
        &[
            "lag",
            "--format",
            "json",
            "--isolation",
            "read_committed",
            "fixtures/groups",
        ],
        None,
    );
    let b = env.run(
        &[
            "lag",
            "--format",
            "json",
            "--isolation",
            "read-committed",
            "fixtures/groups",
        ],
        None,
    );
    assert_eq!(a.status.code(), Some(0), "{}", stderr(&a));
    assert_eq!(stdout(&a), stdout(&b));
}

#[test]
fn a_legacy_wrappers_messages_each_count_and_a_negative_commit_is_none() {
    let env = TestEnv::new();
    // orders-0: a magic-1 gzip wrapper of three messages (offsets 0, 1, 2),
    // then a v2 batch of two records (offsets 3, 4): the log ends at 5.
    let orders = encoded(
        "out = (legacy_gzip_wrapper(2, [(None, b'a', 1), (None, b'b', 2), (None, b'c', 3)])
       + batch(3, [(0, 0, None, b'd'), (1, 0, None, b'e')]))",
    );
    write_segment(&env.path("data"), "orders-0", &orders);
    // Group g committed 1; group h (a non-Java client) committed -1.
    let offsets = encoded(
        "import struct
neg = struct.pack('>hqi', 3, -1, -1) + string16('') + struct.pack('>q', 1)
out = (batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), offset_commit_value(1, 1))])
       + batch(1, [(0, 0, offset_commit_key('h', 'orders', 0), neg)]))",
    );
    write_segment(&env.path("data"), "__consumer_offsets-0", &offsets);
    let r = rows(
        &env,
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--format",
            "json",
            "data",
        ],
    );
    // No high watermark checkpoint: end = log end = 2 records after the wrapper's 3 = 5.
    let (log_end, committed) = (3 + 2, 1);
    let g = find(&r, "g", "orders", 0);
    assert_eq!(g["log_end_offset"].as_i64(), Some(log_end));
    assert_eq!(g["lag"].as_i64(), Some(log_end - committed));
    // Records at offsets 1..5: two inside the wrapper (1, 2), two in the batch (3, 4).
    assert_eq!(g["pending_records"].as_u64(), Some(2 + 2));
    // A negative committed offset is no committed offset to Kafka's clients
    // (ListConsumerGroupOffsetsHandler): no lag.
    let h = find(&r, "h", "orders", 0);
    assert_eq!(
        (
            h["status"].as_str(),
            h["lag"].is_null(),
            h["committed_offset"].as_i64()
        ),
        (Some("no_committed_offset"), true, Some(-1))
    );
}

/// `--topic` keeps one topic's rows (a topic neither on disk nor committed
/// is an error, exit 2); `--min-lag N` keeps the rows lagging N or more.
/// fixtures/groups (make.sh): on orders-0 (20 records) kitchen committed 15,
/// courier 4, analytics 0.
#[test]
fn topic_and_min_lag_filter_the_rows() {
    let env = TestEnv::new();
    let base = [
        "lag",
        "fixtures/groups",
        "--format",
        "json",
        "--now-ms",
        "1700000000000",
    ];
    let all = rows(&env, &base);
    let orders = rows(&env, &[base.as_slice(), &["--topic", "orders"]].concat());
    assert!(!orders.is_empty());
    assert!(orders.iter().all(|r| r["topic"] == "orders"));
    assert_eq!(
        orders.len(),
        all.iter().filter(|r| r["topic"] == "orders").count()
    );
    assert!(
        all.iter().any(|r| r["topic"] != "orders"),
        "the fixture has another topic"
    );
    let behind = rows(
        &env,
        &[base.as_slice(), &["--topic", "orders", "--min-lag", "16"]].concat(),
    );
    let groups: Vec<_> = behind
        .iter()
        .map(|r| r["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["analytics", "courier"]);
    let o = env.run(&[base.as_slice(), &["--topic", "nope"]].concat(), None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("topic \"nope\""), "{}", stderr(&o));
}

/// `--by topic` and `--by group` sum each group's partitions: the count of
/// rows, the positive lags and the pending records. fixtures/kafka
/// (make.sh): billing committed orders-0 at 25 (high watermark 28) and
/// orders-1 at 7 (log end 10): 2 partitions, lag 3 + 3. Every group's sums
/// agree with its partition rows in the JSON document of the same run.
#[test]
fn by_topic_and_by_group_sum_the_partitions() {
    let env = TestEnv::new();
    let base = ["lag", "fixtures/kafka", "--now-ms", "1700000100000"];
    let json = env.run(&[base.as_slice(), &["--format", "json"]].concat(), None);
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    let parts = doc["partitions"].as_array().unwrap();
    for by in ["topic", "group"] {
        let o = env.run(
            &[base.as_slice(), &["--format", "csv", "--by", by]].concat(),
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{by}");
        let table = crate::support::parse_csv(&stdout(&o));
        let header = &table[0];
        let col = |name: &str| header.iter().position(|h| h == name).unwrap();
        let mut keys = Vec::new();
        for row in &table[1..] {
            let group = &row[col("group")];
            let topic = (by == "topic").then(|| row[col("topic")].clone());
            let mine: Vec<_> = parts
                .iter()
                .filter(|p| p["group"] == group.as_str())
                .filter(|p| topic.as_ref().is_none_or(|t| p["topic"] == t.as_str()))
                .collect();
            let lag: i64 = mine
                .iter()
                .map(|p| p["lag"].as_i64().unwrap_or(0).max(0))
                .sum();
            let pending: u64 = mine
                .iter()
                .map(|p| p["pending_records"].as_u64().unwrap_or(0))
                .sum();
            assert_eq!(
                row[col("partitions")],
                mine.len().to_string(),
                "{by} {group}"
            );
            assert_eq!(row[col("lag")], lag.to_string(), "{by} {group}");
            assert_eq!(
                row[col("pending_records")],
                pending.to_string(),
                "{by} {group}"
            );
            if group == "billing" {
                assert_eq!(
                    (row[col("partitions")].as_str(), row[col("lag")].as_str()),
                    ("2", "6")
                );
            }
            keys.push((group.clone(), topic));
        }
        let mut sorted = keys.clone();
        sorted.sort();
        sorted.dedup();
        assert_eq!(keys, sorted, "{by}: one row per key, in order");
        assert!(keys.iter().any(|(g, _)| g == "billing"), "{by}");
    }
    // The JSON document carries both lists whatever --by says.
    assert!(doc["topics"].as_array().is_some_and(|t| !t.is_empty()));
    assert!(doc["groups"].as_array().is_some_and(|g| !g.is_empty()));
}
