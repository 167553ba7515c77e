use crate::support::{check_golden, document, findings, stderr, stdout, TestEnv};

const TOPIC_ID: &str = "P3mZr1rGQ2KQz9C0XbVJfA";
const DIR_ID: &str = "ZbAM5nXWSxmsIDlXnGaPQw";
const CLUSTER_ID: &str = "MkU3OEVBNTcwNTJENDM2Qg";

/// `klog info --format json` of one directory: the whole document.
fn json(env: &TestEnv, dir: &str, code: i32) -> serde_json::Value {
    let o = env.run(&["info", "--format", "json", dir], None);
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    let doc = document(&o, "info");
    assert_eq!(
        doc["directories"].as_array().map(Vec::len),
        Some(1),
        "one entry per directory: {doc}"
    );
    doc
}

/// The one directory of `json`'s document.
fn dir0(doc: &serde_json::Value) -> &serde_json::Value {
    &doc["directories"][0]
}

fn partition<'a>(v: &'a serde_json::Value, topic: &str, p: i64) -> &'a serde_json::Value {
    v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["topic"] == topic && r["partition"] == p && r["state"] == "live")
        .unwrap_or_else(|| panic!("no live {topic}-{p} in {v}"))
}

/// The text row of `topic partition` (cells split on runs of spaces).
fn text_row(out: &str, topic: &str, p: &str) -> Vec<String> {
    out.lines()
        .map(|l| l.split("  ").map(str::trim).filter(|c| !c.is_empty()))
        .map(|cells| cells.map(str::to_string).collect::<Vec<_>>())
        .find(|c| c.len() > 2 && c[0] == topic && c[1] == p)
        .unwrap_or_else(|| panic!("no row {topic} {p} in\n{out}"))
}

#[test]
fn golden_text_and_json() {
    let env = TestEnv::new();
    check_golden(&env, &["info", "fixtures/kafka"], 0, "info/kafka");
    check_golden(&env, &["info", "fixtures/data"], 0, "info/data");
    check_golden(
        &env,
        &["info", "--format", "json", "fixtures/kafka"],
        0,
        "info/kafka-json",
    );
}

#[test]
fn checkpoints_of_the_kafka_fixture() {
    let env = TestEnv::new();
    let doc = json(&env, "fixtures/kafka", 0);
    let v = dir0(&doc);
    assert_eq!(v["dir"], "fixtures/kafka");
    assert!(v["meta_properties"].is_null());
    assert_eq!(
        v["checkpoints"],
        serde_json::json!([
            "log-start-offset-checkpoint",
            "replication-offset-checkpoint"
        ])
    );
    // orders-0: 30 records, high watermark 28 from replication-offset-checkpoint.
    let o0 = partition(v, "orders", 0);
    assert_eq!(
        (
            &o0["log_start_offset"],
            &o0["log_end_offset"],
            &o0["high_watermark"]
        ),
        (
            &serde_json::json!(0),
            &serde_json::json!(30),
            &serde_json::json!(28)
        )
    );
    assert!(o0["leader_epochs"].is_null(), "no leader-epoch-checkpoint");
    // orders-1: log start 5 from log-start-offset-checkpoint, above the first segment's 0.
    let o1 = partition(v, "orders", 1);
    assert_eq!(
        (
            &o1["log_start_offset"],
            &o1["log_end_offset"],
            &o1["high_watermark"]
        ),
        (
            &serde_json::json!(5),
            &serde_json::json!(10),
            &serde_json::json!(10)
        )
    );
    assert_eq!(
        (&o1["segments"], &o1["bytes"]),
        (&serde_json::json!(1), &serde_json::json!(242))
    );
    // __consumer_offsets-N carry a leader-epoch-checkpoint with epoch 3 from offset 0.
    for p in [0, 8, 9, 49] {
        assert_eq!(
            partition(v, "__consumer_offsets", p)["leader_epochs"],
            serde_json::json!([{"leader_epoch": 3, "start_offset": 0}]),
            "__consumer_offsets-{p}"
        );
    }
    assert_eq!(v["partitions"].as_array().unwrap().len(), 6);
}

#[test]
fn metadata_files_show_up() {
    let env = TestEnv::new();
    let dir = env.path("fixtures/kafka");
    std::fs::write(
        dir.join("meta.properties"),
        format!(
            "#\n#Thu Nov 30 05:32:00 UTC 2023\nnode.id=3\ndirectory.id={DIR_ID}\nversion=1\n\
             cluster.id={CLUSTER_ID}\n"
        ),
    )
    .unwrap();
    std::fs::write(
        dir.join("orders-0/partition.metadata"),
        format!("version: 0\ntopic_id: {TOPIC_ID}"),
    )
    .unwrap();
    std::fs::write(
        dir.join("recovery-point-offset-checkpoint"),
        "0\n1\norders 0 25\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("cleaner-offset-checkpoint"),
        "0\n1\n__consumer_offsets 9 4\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("orders-0/leader-epoch-checkpoint"),
        "0\n2\n0 0\n3 12\n",
    )
    .unwrap();

    let o = env.run(&["info", "fixtures/kafka"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "meta.properties:  version=1 node.id=3 cluster.id={CLUSTER_ID} directory.id={DIR_ID}\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "checkpoints:      cleaner-offset-checkpoint, log-start-offset-checkpoint, \
             recovery-point-offset-checkpoint, replication-offset-checkpoint\n"
        ),
        "{text}"
    );
    assert_eq!(
        text_row(&text, "orders", "0"),
        ["orders", "0", "live", "1", "563", "0", "30", "28", "25", "-", "0@0,3@12", TOPIC_ID]
    );
    assert_eq!(
        text_row(&text, "__consumer_offsets", "9")[9],
        "4",
        "cleaner offset"
    );

    let doc = json(&env, "fixtures/kafka", 0);
    let v = dir0(&doc);
    assert_eq!(
        v["meta_properties"],
        serde_json::json!({
            "version": 1,
            "broker_id": null,
            "node_id": 3,
            "cluster_id": CLUSTER_ID,
            "directory_id": DIR_ID,
        })
    );
    assert_eq!(v["checkpoints"].as_array().unwrap().len(), 4);
    let o0 = partition(v, "orders", 0);
    assert_eq!(o0["topic_id"], TOPIC_ID);
    assert_eq!(o0["recovery_point"], 25);
    assert_eq!(
        o0["leader_epochs"],
        serde_json::json!([
            {"leader_epoch": 0, "start_offset": 0},
            {"leader_epoch": 3, "start_offset": 12}
        ])
    );
    assert!(partition(v, "orders", 1)["topic_id"].is_null());
    assert_eq!(partition(v, "__consumer_offsets", 9)["cleaner_offset"], 4);

    // A ZooKeeper-era file: version 0 with broker.id (Java separators and comments).
    std::fs::write(
        dir.join("meta.properties"),
        "# written by hand\n! another comment\n\nversion : 0\nbroker.id 7\n",
    )
    .unwrap();
    let doc = json(&env, "fixtures/kafka", 0);
    assert_eq!(
        dir0(&doc)["meta_properties"],
        serde_json::json!({
            "version": 0,
            "broker_id": 7,
            "node_id": null,
            "cluster_id": null,
            "directory_id": null,
        })
    );
    let text = stdout(&env.run(&["info", "fixtures/kafka"], None));
    assert!(
        text.contains("meta.properties:  version=0 broker.id=7\n"),
        "{text}"
    );
}

#[test]
fn malformed_files_are_reported_with_their_line() {
    let env = TestEnv::new();
    let dir = env.path("fixtures/kafka");
    // Line 4 has two fields where three belong.
    std::fs::write(
        dir.join("replication-offset-checkpoint"),
        "0\n2\norders 0 28\norders 1\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("orders-0/partition.metadata"),
        format!("version: 0\ntopic_id: {TOPIC_ID} {TOPIC_ID}"),
    )
    .unwrap();
    std::fs::write(
        dir.join("__consumer_offsets-8/leader-epoch-checkpoint"),
        "0\n1\n3\n",
    )
    .unwrap();
    // A line without `=` is a key with an empty value, as Java reads it:
    // harmless here, but broker.id must then be a number.
    std::fs::write(dir.join("meta.properties"), "# hi\nstray line\nbroker.id\n").unwrap();

    let o = check_golden(&env, &["info", "fixtures/kafka"], 1, "info/malformed");
    let err = stderr(&o);
    for needle in [
        "klog: fixtures/kafka/meta.properties:0 error meta_properties_malformed line 3: broker.id \"\" is not a base-10 32-bit integer\n",
        "klog: fixtures/kafka/replication-offset-checkpoint:0 error checkpoint_malformed line 4: malformed line \"orders 1\" (expected 3 fields)\n",
        "klog: fixtures/kafka/__consumer_offsets-8/leader-epoch-checkpoint:0 error checkpoint_malformed line 3: malformed line \"3\" (expected 2 fields)\n",
        "klog: fixtures/kafka/orders-0/partition.metadata:0 error partition_metadata_malformed line 2: malformed line",
        "klog: 4 errors: 1 meta_properties_malformed, 2 checkpoint_malformed, 1 partition_metadata_malformed\n",
    ] {
        assert!(err.contains(needle), "{needle}\nnot in\n{err}");
    }
    assert_eq!(err.lines().count(), 5, "{err}");
    // The rest is still shown.
    let text = stdout(&o);
    assert!(
        text.contains("meta.properties:  malformed (see the findings)\n"),
        "{text}"
    );
    let row = text_row(&text, "orders", "1");
    assert_eq!((row[5].as_str(), row[7].as_str()), ("5", "-"), "{row:?}");
    assert_eq!(text_row(&text, "orders", "0")[11], "-");
    assert_eq!(text_row(&text, "__consumer_offsets", "9")[10], "3@0");

    let doc = json(&env, "fixtures/kafka", 1);
    assert_eq!(doc["findings"].as_array().unwrap().len(), 4);
    assert_eq!(doc["findings"][0]["severity"], "error");
    assert_eq!(doc["finding_counts"]["errors"], 4);
    let v = dir0(&doc);
    assert!(v["meta_properties"].is_null());
    assert!(partition(v, "orders", 0)["high_watermark"].is_null());
    assert!(partition(v, "__consumer_offsets", 8)["leader_epochs"].is_null());

    // Fixed, the exit code is 0 again: every finding above came from one file.
    std::fs::remove_file(dir.join("meta.properties")).unwrap();
    std::fs::remove_file(dir.join("replication-offset-checkpoint")).unwrap();
    std::fs::remove_file(dir.join("orders-0/partition.metadata")).unwrap();
    std::fs::write(
        dir.join("__consumer_offsets-8/leader-epoch-checkpoint"),
        "0\n1\n3 0\n",
    )
    .unwrap();
    json(&env, "fixtures/kafka", 0);
}

#[test]
fn partition_metadata_with_three_fields() {
    let env = TestEnv::new();
    std::fs::write(
        env.path("fixtures/data/orders-0/partition.metadata"),
        "version: 0 1\ntopic_id: P3mZr1rGQ2KQz9C0XbVJfA",
    )
    .unwrap();
    let o = env.run(&["info", "fixtures/data"], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stderr(&o),
        "klog: fixtures/data/orders-0/partition.metadata:0 error partition_metadata_malformed \
         line 1: malformed line \"version: 0 1\": 3 fields where `version: 0` has 2\n\
         klog: 1 error: 1 partition_metadata_malformed\n"
    );
}

#[test]
fn a_checkpoint_the_broker_resets_is_a_warning() {
    // LogManager resets an unreadable recovery-point checkpoint to 0 (and
    // recovers every segment): a warning, exit 0 unless --fail-on warning.
    let env = TestEnv::new();
    std::fs::write(
        env.path("fixtures/kafka/recovery-point-offset-checkpoint"),
        "0\n1\norders\n",
    )
    .unwrap();
    let o = env.run(&["info", "fixtures/kafka"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The finding is for people (stderr); stdout holds the directory only.
    assert!(
        !stdout(&o).contains("checkpoint_malformed"),
        "{}",
        stdout(&o)
    );
    assert!(
        stderr(&o).contains("warning checkpoint_malformed line 3"),
        "{}",
        stderr(&o)
    );
    let o = env.run(&["info", "--fail-on", "warning", "fixtures/kafka"], None);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn a_log_that_ends_below_its_checkpointed_start_is_an_error() {
    // fixtures/kafka's orders-1 starts at 5 by log-start-offset-checkpoint;
    // with its segment emptied the log ends at 0. LogLoader deletes every
    // segment of such a log on load (deleteSegmentsIfLogStartGreaterThanLogEnd):
    // an error naming both offsets. The healthy fixture has no such finding.
    let env = TestEnv::new();
    assert!(findings(&json(&env, "fixtures/kafka", 0)).is_empty());
    std::fs::write(
        env.path("fixtures/kafka/orders-1/00000000000000000000.log"),
        b"",
    )
    .unwrap();
    let doc = json(&env, "fixtures/kafka", 1);
    // Loaded, the log ends at 5, below the high watermark 10 of
    // replication-offset-checkpoint: a warning too.
    assert_eq!(
        findings(&doc),
        [
            ("log_end_below_log_start".into(), "error".into(), 0),
            ("high_watermark_above_log_end".into(), "warning".into(), 5)
        ]
    );
    let f = &doc["findings"][0];
    assert!(f["file"].as_str().unwrap().ends_with("orders-1"), "{f}");
    assert_eq!(f["offset"], 0);
    let detail = f["detail"].as_str().unwrap();
    assert!(
        detail.contains("ends at 0, below its log start 5"),
        "{detail}"
    );
    // The row still shows the files as they are.
    let row = partition(dir0(&doc), "orders", 1);
    assert_eq!(
        (
            row["log_start_offset"].as_i64(),
            row["log_end_offset"].as_i64()
        ),
        (Some(5), Some(0))
    );
}

#[test]
fn a_log_that_ends_below_its_high_watermark_is_a_warning() {
    // fixtures/kafka's orders-0: batches at positions 0, 181 and 372
    // (offsets 0..=9, 10..=19, 20..=29), high watermark 28 in
    // replication-offset-checkpoint. Cut at 372, the log ends at 20: the
    // committed offsets 20..=27 are not on this copy, and a broker lowers
    // its high watermark to 20 (UnifiedLog.updateHighWatermark).
    let env = TestEnv::new();
    let log = env.path("fixtures/kafka/orders-0/00000000000000000000.log");
    let bytes = std::fs::read(&log).unwrap();
    std::fs::write(&log, &bytes[..372]).unwrap();
    let doc = json(&env, "fixtures/kafka", 0);
    assert_eq!(
        findings(&doc),
        [("high_watermark_above_log_end".into(), "warning".into(), 20)]
    );
    let detail = doc["findings"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("the committed offsets 20..=27"), "{detail}");
    let o = env.run(&["info", "--fail-on", "warning", "fixtures/kafka"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
}

#[test]
fn other_states_are_listed_but_not_read() {
    let env = TestEnv::new();
    let dir = env.path("fixtures/kafka");
    let deleted = dir.join("orders-0.0123456789abcdef0123456789abcdef-delete");
    crate::support::copy_dir(&dir.join("orders-1"), &deleted);
    // Not read: a broken file in it is no finding.
    std::fs::write(deleted.join("partition.metadata"), "garbage").unwrap();
    std::fs::write(deleted.join("leader-epoch-checkpoint"), "garbage").unwrap();
    let o = env.run(&["info", "fixtures/kafka"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("partitions:       7 (6 live, 1 delete)\n"),
        "{text}"
    );
    let lines: Vec<&str> = text.lines().collect();
    let live = lines
        .iter()
        .position(|l| l.starts_with("orders  ") && l.contains(" live "))
        .unwrap();
    assert!(
        lines[live + 1].contains(" delete "),
        "sorted after the live orders-0:\n{text}"
    );
    assert_eq!(
        text_row(lines[live + 1], "orders", "0"),
        ["orders", "0", "delete", "-", "-", "-", "-", "-", "-", "-", "-", "-"]
    );

    let doc = json(&env, "fixtures/kafka", 0);
    let d = dir0(&doc)["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["state"] == "delete")
        .unwrap();
    assert_eq!(
        (&d["topic"], &d["partition"]),
        (&serde_json::json!("orders"), &serde_json::json!(0))
    );
    for k in [
        "segments",
        "bytes",
        "log_start_offset",
        "log_end_offset",
        "leader_epochs",
        "topic_id",
    ] {
        assert!(d[k].is_null(), "{k}: {d}");
    }
}

#[test]
fn not_a_data_directory_exits_2() {
    let env = TestEnv::new();
    let o = env.run(&["info", "fixtures/missing"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).starts_with("klog: fixtures/missing: stat: "),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());
    // A partition folder is not a data directory; nothing is printed for the
    // good directory given first either.
    let o = env.run(&["info", "fixtures/data", "fixtures/data/orders-0"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("fixtures/data/orders-0: holds no partition folders"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).is_empty());
}

#[test]
fn several_directories() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "info",
            "--format",
            "json",
            "fixtures/data",
            "fixtures/kafka",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = document(&o, "info");
    let dirs = doc["directories"].as_array().unwrap();
    assert_eq!(dirs.len(), 2);
    assert_eq!(
        (&dirs[0]["dir"], &dirs[1]["dir"]),
        (
            &serde_json::json!("fixtures/data"),
            &serde_json::json!("fixtures/kafka")
        )
    );
    let text = stdout(&env.run(&["info", "fixtures/data", "fixtures/kafka"], None));
    assert!(
        text.contains("\n\ndirectory:        fixtures/kafka\n"),
        "{text}"
    );
}

/// A folder whose subfolders merely have partition-like names (`/etc`
/// holds `dbus-1` and `polkit-1`) is not a Kafka log directory: every
/// reader says so the same way and exits 2, none lists them as partitions
/// or reports them as damage. (An empty partition folder would count: a
/// log's folder exists before its first segment.)
#[test]
fn a_folder_that_is_not_a_log_directory_is_refused_alike() {
    let env = TestEnv::new();
    let dir = env.path("etc");
    std::fs::create_dir_all(dir.join("dbus-1/system.d")).unwrap();
    std::fs::write(dir.join("dbus-1/system.d/a.conf"), b"<busconfig/>").unwrap();
    std::fs::create_dir_all(dir.join("polkit-1/rules.d")).unwrap();
    for command in [
        "info",
        "verify-crc",
        "lag",
        "replay-offsets",
        "groups",
        "transactions",
        "stats",
        "summary",
    ] {
        let o = env.run(&[command, "etc"], None);
        assert_eq!(o.status.code(), Some(2), "{command}: {}", stdout(&o));
        assert!(
            stderr(&o).contains("etc: is not a Kafka log directory"),
            "{command}: {}",
            stderr(&o)
        );
        assert!(!stdout(&o).contains("dbus"), "{command}: {}", stdout(&o));
    }
}

#[test]
fn csv_is_one_row_per_partition_folder_of_each_directory() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "info",
            "--format",
            "csv",
            "fixtures/kraft",
            "fixtures/kafka",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = document(
        &env.run(
            &[
                "info",
                "--format",
                "json",
                "fixtures/kraft",
                "fixtures/kafka",
            ],
            None,
        ),
        "info",
    );
    let rows = crate::support::parse_csv(&stdout(&o));
    assert_eq!(
        rows[0],
        [
            "dir",
            "dir_base64",
            "shutdown",
            "topic",
            "partition",
            "state",
            "segments",
            "bytes",
            "log_start_offset",
            "local_log_start_offset",
            "tiered_by",
            "remote_start_offset",
            "remote_end_offset",
            "log_end_offset",
            "high_watermark",
            "recovery_point",
            "cleaner_offset",
            "leader_epochs",
            "topic_id"
        ]
    );
    let folders: usize = doc["directories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["partitions"].as_array().unwrap().len())
        .sum();
    assert_eq!(rows.len() - 1, folders);
    let row = |dir: &str, topic: &str, state: &str| {
        rows.iter()
            .find(|r| r[0] == dir && r[3] == topic && r[5] == state)
            .unwrap_or_else(|| panic!("{dir} {topic} {state}: {rows:?}"))
            .join("|")
    };
    // fixtures/kraft has meta.properties and no .kafka_cleanshutdown: its
    // broker went down uncleanly; fixtures/kafka is no broker's.
    assert_eq!(
        row("fixtures/kraft", "orders", "live"),
        "fixtures/kraft||unclean|orders|0|live|1|92|0|0||||2|||||b3JkZXJzLXRvcGljLWlkIQ"
    );
    // A folder not read: its numbers are empty.
    assert_eq!(
        row("fixtures/kraft", "orders", "stray"),
        "fixtures/kraft||unclean|orders|5|stray|||||||||||||"
    );
    assert!(row("fixtures/kafka", "__consumer_offsets", "live").starts_with("fixtures/kafka|||"));
    // Leader epochs are the JSON list.
    assert_eq!(
        row("fixtures/kafka", "__consumer_offsets", "live")
            .split('|')
            .nth(17),
        Some(r#"[{"leader_epoch":3,"start_offset":0}]"#)
    );
    // Findings stay on stderr, as in text.
    assert!(
        stderr(&o).contains("warning unknown_topic_id"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn csv_cells_of_a_hostile_directory_name_are_escaped_or_exact() {
    let env = TestEnv::new();
    // Topic names are Kafka's legal characters; a directory's path is
    // anything: an escape sequence, a separator, quotes, a line end, and
    // a leading `=` a spreadsheet would run.
    let name = "=evil\x1b[31m,\"q\"\nrow";
    crate::support::copy_dir(
        &env.path("fixtures/truncated/orders-0"),
        &env.path(name).join("orders-0"),
    );
    let shown = "'=evil\\x1b[31m,\"q\"\\nrow";
    for (cells, want) in [("escape", shown), ("raw", name)] {
        let o = env.run(
            &["info", "--format", "csv", "--csv-cells", cells, name],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        if cells == "escape" {
            assert!(!stdout(&o).contains('\x1b'), "{}", stdout(&o));
        }
        let rows = crate::support::parse_csv(&stdout(&o));
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            // No meta.properties, no marker: not a broker's, no shutdown state.
            rows[1][..6],
            [want, "", "", "orders", "0", "live"],
            "--csv-cells {cells}"
        );
        // verify-crc's file cell likewise.
        let o = env.run(
            &["verify-crc", "--format", "csv", "--csv-cells", cells, name],
            None,
        );
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let rows = crate::support::parse_csv(&stdout(&o));
        assert_eq!(rows.len(), 2, "{rows:?}");
        assert_eq!(
            rows[1][0],
            format!("{want}/orders-0/00000000000000000090.log"),
            "--csv-cells {cells}"
        );
        assert_eq!(rows[1][5], "torn_tail");
    }
}
