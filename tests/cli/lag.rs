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
    // shipping orders-0: committed 30 = log end, above the checkpointed
    // high watermark 28: kafka-consumer-groups' lag 28 - 30
    // (`ConsumerGroupCommand.getLag` clamps nothing).
    let s = find(&r, "shipping", "orders", 0);
    assert_eq!(
        (s["lag"].as_i64(), s["status"].as_str()),
        (Some(28 - 30), Some("above_high_watermark"))
    );
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

/// A data directory `data` of one partition `orders-0` holding `records`
/// records from offset 0, its high watermark `hw` in
/// replication-offset-checkpoint (when given), and one commit on it for
/// each (group, offset) of `commits`.
fn one_partition(env: &TestEnv, records: usize, hw: Option<&str>, commits: &[(&str, i64)]) {
    let orders = encoded(&format!(
        "out = batch(0, [(i, 0, None, b'v') for i in range({records})])"
    ));
    write_segment(&env.path("data"), "orders-0", &orders);
    let commits: Vec<String> = commits
        .iter()
        .enumerate()
        .map(|(i, (g, o))| {
            format!("({i}, 0, offset_commit_key({g:?}, 'orders', 0), offset_commit_value({o}, 1700000000000))")
        })
        .collect();
    let offsets = encoded(&format!("out = batch(0, [{}])", commits.join(", ")));
    write_segment(&env.path("data"), "__consumer_offsets-0", &offsets);
    if let Some(hw) = hw {
        std::fs::write(
            env.path("data/replication-offset-checkpoint"),
            format!("0\n1\norders 0 {hw}\n"),
        )
        .unwrap();
    }
}

/// A commit between the high watermark and the log end points at records
/// a restart can truncate (a follower's unreplicated tail). Its lag is
/// kafka-consumer-groups' (`ConsumerGroupCommand.getLag`: LOG-END-OFFSET −
/// CURRENT-OFFSET, LOG-END-OFFSET being ListOffsets latest, the high
/// watermark, and nothing clamped): negative, and its status says so.
#[test]
fn a_commit_above_the_high_watermark_is_said_and_its_lag_is_kafkas() {
    let env = TestEnv::new();
    let (hw, log_end, committed) = (20, 50, 50);
    one_partition(&env, log_end, Some(&hw.to_string()), &[("g", committed)]);
    let base = ["lag", "--now-ms", "1700000100000", "data"];
    let r = rows(&env, &[&base[..], &["--format", "json"]].concat());
    let g = find(&r, "g", "orders", 0);
    assert_eq!(
        (
            g["high_watermark"].as_i64(),
            g["log_end_offset"].as_i64(),
            g["lag"].as_i64(),
            g["status"].as_str(),
            g["pending_records"].as_u64(),
        ),
        (
            Some(hw),
            Some(log_end as i64),
            Some(hw - committed),
            Some("above_high_watermark"),
            Some(0)
        )
    );
    let o = env.run(&[&base[..], &["--format", "csv"]].concat(), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = crate::support::csv_objects(&stdout(&o));
    assert_eq!(rows[0]["status"], "above_high_watermark");
    assert_eq!(rows[0]["lag"], (hw - committed).to_string());
    let o = env.run(&base, None);
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("g ") && l.contains("orders"))
        .unwrap()
        .to_string();
    assert!(line.contains("above_high_watermark"), "{line}");
    assert!(line.contains(&(hw - committed).to_string()), "{line}");
    // The group's total sums positive lags only: nothing is owed.
    let o = env.run(
        &[&base[..], &["--format", "csv", "--by", "group"]].concat(),
        None,
    );
    assert_eq!(crate::support::csv_objects(&stdout(&o))[0]["lag"], "0");
}

/// Two partitions each lagging more than i64::MAX / 2: every total
/// (`--by group`, `--by topic`, the sum text says on stderr and the JSON lists)
/// saturates at i64::MAX instead of wrapping to a negative number.
#[test]
fn totals_saturate_instead_of_wrapping() {
    let env = TestEnv::new();
    // Each partition's only batch sits at offset 9e18: log end 9e18 + 1;
    // the group committed 0 on both (the logs start at 0, their segment's base).
    let far: i64 = 9_000_000_000_000_000_000;
    for p in 0..2 {
        let bytes = encoded(&format!("out = batch({far}, [(0, 0, None, b'v')])"));
        write_segment(&env.path("data"), &format!("orders-{p}"), &bytes);
    }
    let offsets = encoded(
        "out = batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), offset_commit_value(0, 1700000000000)),
                         (1, 0, offset_commit_key('g', 'orders', 1), offset_commit_value(0, 1700000000000))])",
    );
    write_segment(&env.path("data"), "__consumer_offsets-0", &offsets);
    let base = ["lag", "--now-ms", "1700000100000", "data"];
    let json = env.run(&[&base[..], &["--format", "json"]].concat(), None);
    assert_eq!(json.status.code(), Some(0), "{}", stderr(&json));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&json)).unwrap();
    for p in doc["partitions"].as_array().unwrap() {
        assert_eq!(p["lag"].as_i64(), Some(far + 1), "{p}");
    }
    // (far + 1) * 2 is past i64::MAX: the sum stops there.
    assert!((far + 1).checked_mul(2).is_none());
    assert_eq!(doc["groups"][0]["lag"].as_i64(), Some(i64::MAX));
    assert_eq!(doc["topics"][0]["lag"].as_i64(), Some(i64::MAX));
    for by in ["group", "topic"] {
        let o = env.run(
            &[&base[..], &["--format", "csv", "--by", by]].concat(),
            None,
        );
        assert_eq!(
            crate::support::csv_objects(&stdout(&o))[0]["lag"],
            i64::MAX.to_string(),
            "{by}"
        );
    }
    let o = env.run(&base, None);
    assert!(
        !stdout(&o).contains("(total)"),
        "text holds partition rows alone"
    );
    let said = stderr(&o);
    assert!(
        said.contains(&format!("1 group, lag {} in all", i64::MAX)),
        "{said}"
    );
}

/// A negative high watermark in replication-offset-checkpoint: Kafka
/// parses it (`OffsetCheckpointFile.Formatter` takes any long) and
/// `Partition.createLog` hands it to `UnifiedLog.updateHighWatermark`,
/// which raises it to the log start. `info` reports the entry; `lag`
/// reads the high watermark a broker would load, the log start 0, so the
/// groups at 5 and 20 are above it, not "ok" with no lag.
#[test]
fn a_negative_checkpointed_high_watermark_is_a_finding_and_no_group_is_ok_on_it() {
    let env = TestEnv::new();
    one_partition(&env, 25, Some("-100"), &[("a", 5), ("b", 20), ("c", 0)]);
    let o = env.run(&["info", "--format", "json", "data"], None);
    let doc = crate::support::document(&o, "info");
    let found = crate::support::findings(&doc);
    assert!(
        found.iter().any(
            |(kind, severity, _)| kind == "high_watermark_below_log_start" && severity == "warning"
        ),
        "{found:?}"
    );
    // A warning, as high_watermark_above_log_end is: info exits 0.
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text =
        stdout(&env.run(&["info", "data"], None)) + &stderr(&env.run(&["info", "data"], None));
    assert!(text.contains("-100"), "{text}");
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
    let log_start = 0;
    for (group, committed) in [("a", 5), ("b", 20)] {
        let g = find(&r, group, "orders", 0);
        assert_eq!(
            (
                g["high_watermark"].as_i64(),
                g["lag"].as_i64(),
                g["status"].as_str()
            ),
            (
                Some(log_start),
                Some(log_start - committed),
                Some("above_high_watermark")
            ),
            "{group}"
        );
    }
    // At the log start itself there is nothing to read: ok, lag 0.
    let c = find(&r, "c", "orders", 0);
    assert_eq!(
        (c["lag"].as_i64(), c["status"].as_str()),
        (Some(0), Some("ok"))
    );
}

/// `lag`, `groups` and `replay-offsets` refuse the directories of two
/// clusters (meta.properties naming two cluster.id), as `cluster` refuses
/// summaries of two: exit 2, naming both directories and both ids.
#[test]
fn directories_of_two_clusters_are_refused() {
    let env = TestEnv::new();
    one_partition(&env, 5, None, &[("g", 1)]);
    let other = encoded("out = batch(0, [(0, 0, None, b'v')])");
    write_segment(&env.path("other"), "payments-0", &other);
    std::fs::write(
        env.path("data/meta.properties"),
        "version=1\ncluster.id=ClusterAAAAAAAAAAAAAAA\nnode.id=1\n",
    )
    .unwrap();
    std::fs::write(
        env.path("other/meta.properties"),
        "version=1\ncluster.id=ClusterBBBBBBBBBBBBBBB\nnode.id=2\n",
    )
    .unwrap();
    for cmd in ["lag", "groups", "replay-offsets"] {
        let o = env.run(&[cmd, "data", "other"], None);
        assert_eq!(o.status.code(), Some(2), "{cmd}: {}", stderr(&o));
        let err = stderr(&o);
        for needle in [
            "data",
            "other",
            "ClusterAAAAAAAAAAAAAAA",
            "ClusterBBBBBBBBBBBBBBB",
        ] {
            assert!(err.contains(needle), "{cmd}: {needle}: {err}");
        }
        // The same cluster's two brokers are read together.
        std::fs::write(
            env.path("other/meta.properties"),
            "version=1\ncluster.id=ClusterAAAAAAAAAAAAAAA\nnode.id=2\n",
        )
        .unwrap();
        let o = env.run(&[cmd, "data", "other"], None);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", stderr(&o));
        std::fs::write(
            env.path("other/meta.properties"),
            "version=1\ncluster.id=ClusterBBBBBBBBBBBBBBB\nnode.id=2\n",
        )
        .unwrap();
    }
}

/// A commit for an earlier topic of the same name (issue #48 C): group g
/// committed 3 on `orders` (topic id 16 bytes of 1, OffsetCommitValue v4),
/// `orders` was deleted and created again (id 16 bytes of 2, in
/// partition.metadata) and holds 10 records, high watermark 10.
/// `kafka-consumer-groups --describe` lists the group's offsets with
/// `Admin.listConsumerGroupOffsets` for every topic (topics null:
/// `ListConsumerGroupOffsetsHandler`, OffsetFetch by name), which the
/// coordinator answers from `OffsetMetadataManager.fetchAllOffsets`, which
/// never compares topic ids: CURRENT-OFFSET 3, LOG-END-OFFSET 10, LAG 7
/// (`ConsumerGroupCommand.getLag`). klog shows the same numbers and says
/// in the status which clients see the offset: only a fetch by topic id
/// (OffsetFetch v10, the KIP-848 consumer's `CommitRequestManager`) is
/// refused it (`OffsetMetadataManager.isOffsetInvalid`).
#[test]
fn a_commit_for_a_recreated_topic_has_kafka_consumer_groups_numbers() {
    let env = TestEnv::new();
    let orders = encoded("out = batch(0, [(i, 0, None, b'v') for i in range(10)])");
    write_segment(&env.path("data"), "orders-0", &orders);
    std::fs::write(
        env.path("data/orders-0/partition.metadata"),
        "version: 0\ntopic_id: AgICAgICAgICAgICAgICAg\n",
    )
    .unwrap();
    std::fs::write(
        env.path("data/replication-offset-checkpoint"),
        "0\n1\norders 0 10\n",
    )
    .unwrap();
    let offsets = encoded(
        "out = batch(0, [(0, 0, offset_commit_key('g', 'orders', 0), offset_commit_value_v4(3, -1, '', 1700000000000, b'\\x01' * 16))])",
    );
    write_segment(&env.path("data"), "__consumer_offsets-0", &offsets);
    let base = ["lag", "--now-ms", "1700000100000", "data"];
    let r = rows(&env, &[&base[..], &["--format", "json"]].concat());
    let g = find(&r, "g", "orders", 0);
    assert_eq!(
        (
            g["committed_offset"].as_i64(),
            g["high_watermark"].as_i64(),
            g["lag"].as_i64(),
            g["pending_records"].as_u64(),
            g["status"].as_str(),
        ),
        (Some(3), Some(10), Some(7), Some(7), Some("topic_recreated")),
        "{g}"
    );
    // kafka-consumer-groups' columns: 3, 10, 7.
    let o = env.run(&[&base[..], &["--columns", "kafka"]].concat(), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let line = stdout(&o)
        .lines()
        .find(|l| l.starts_with("g "))
        .unwrap()
        .to_string();
    let cells: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(cells[..6], ["g", "orders", "0", "3", "10", "7"], "{line}");
    // The total owes the 7, as kafka-consumer-groups counts it.
    let o = env.run(
        &[&base[..], &["--format", "csv", "--by", "group"]].concat(),
        None,
    );
    assert_eq!(crate::support::csv_objects(&stdout(&o))[0]["lag"], "7");
    // stderr says which clients see the offset; stdout stays data.
    let err = stderr(&o);
    for needle in [
        "topic_recreated",
        "classic consumer",
        "kafka-consumer-groups",
        "topic id",
        "auto.offset.reset",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    let o = env.run(&[&base[..], &["--format", "json"]].concat(), None);
    assert!(!stderr(&o).contains("classic consumer"), "{}", stderr(&o));
}

/// `--format prometheus` is OpenMetrics text that the Prometheus project's
/// own parser reads (prometheus_client, pinned in the script), and its
/// samples are `--format json`'s numbers under kafka-lag-exporter's names
/// and labels (tests/lag/prometheus_check.py says which).
#[test]
fn prometheus_output_parses_and_equals_the_json() {
    if std::env::var("KLOG_SKIP_PROMETHEUS").as_deref() == Ok("1") {
        eprintln!("SKIPPED: the Prometheus parser check of klog lag (KLOG_SKIP_PROMETHEUS=1)");
        return;
    }
    let repo = crate::support::repo();
    let venv = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("lag-prometheus-venv");
    let mut cmd = std::process::Command::new("python3");
    cmd.arg(repo.join("tests/lag/prometheus_check.py"))
        .arg("--klog")
        .arg(assert_cmd::cargo::cargo_bin("klog"))
        .arg("--venv")
        .arg(&venv)
        .arg(repo.join("fixtures/kafka"))
        .arg(repo.join("fixtures/kraft"));
    for r in ["3.9.2", "4.4.0"] {
        for b in 1..=3 {
            cmd.arg(repo.join(format!("fixtures/kafka-real/{r}/broker-{b}")));
        }
    }
    let o = cmd.output().unwrap_or_else(|e| {
        panic!("python3: {e} (KLOG_SKIP_PROMETHEUS=1 skips the Prometheus check)")
    });
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.contains("samples compared over 8 directories"),
        "{stdout}"
    );
}
