use crate::support::{check_golden, stderr, stdout, TestEnv};

#[test]
fn klog_directory_table_in_btreemap_order() {
    let env = TestEnv::new();
    let o = check_golden(
        &env,
        &["replay-offsets", "fixtures/groups"],
        0,
        "replay-offsets/groups",
    );
    // Groups come out sorted, the tombstoned group is gone, the aborted and the
    // pending transactional commits are not applied.
    let text = stdout(&o);
    let groups: Vec<&str> = text
        .lines()
        .skip(1)
        .take_while(|l| !l.starts_with("records read"))
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(
        groups,
        ["analytics", "auditor", "auditor", "courier", "kitchen"]
    );
    assert!(stdout(&o).contains("pending: producer 7002 in __offsets-0: courier orders-0 -> 9"));
}

#[test]
fn kafka_directory_with_every_value_version() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["replay-offsets", "fixtures/kafka"],
        0,
        "replay-offsets/kafka",
    );
    check_golden(
        &env,
        &["replay-offsets", "--format", "json", "fixtures/kafka"],
        0,
        "replay-offsets/kafka-json",
    );
    check_golden(
        &env,
        &[
            "replay-offsets",
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
        &["replay-offsets", "--format", "json", "fixtures/groups"],
        None,
    );
    let rows: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let kitchen = rows
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["group"] == "kitchen")
        .unwrap();
    for field in [
        "group",
        "topic",
        "partition",
        "offset",
        "leader_epoch",
        "metadata",
        "commit_timestamp_ms",
    ] {
        assert!(kitchen.get(field).is_some(), "{field}");
    }
    assert_eq!(kitchen["offset"], 15);
    assert_eq!(kitchen["metadata"], "batch-7");
    assert!(
        stderr(&o).contains("live keys: 5"),
        "summary goes to stderr in JSON mode: {}",
        stderr(&o)
    );
}

#[test]
fn history_lists_every_event_in_log_order() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "replay-offsets",
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
            "--history",
            "--group",
            "audit",
            "--format",
            "json",
            "fixtures/groups",
        ],
        None,
    );
    let events: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
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
            "--as-of",
            "offset:6",
            "--format",
            "json",
            "fixtures/groups",
        ],
        None,
    );
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
    let table: Vec<(String, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap().to_string(),
                r["offset"].as_u64().unwrap(),
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
            "--as-of",
            "time:1700000003000",
            "--format",
            "json",
            "fixtures/groups",
        ],
        None,
    );
    let rows: Vec<serde_json::Value> = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(rows.len(), 3, "{rows:?}");
    let o = env.run(
        &["replay-offsets", "--as-of", "soon", "fixtures/groups"],
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
        // A value of unknown version 9.
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
        // A negative committed offset.
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
            "--format",
            "json",
            "--timestamp-ms",
            "1",
        ],
        Some(&lines.join("\n")),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(&["replay-offsets", "fixtures/groups"], None);
    assert_eq!(o.status.code(), Some(1));
    let err = stderr(&o);
    assert!(
        err.contains("partition 0 offset 14: byte ")
            && err.contains("unknown OffsetCommitValue version 9"),
        "{err}"
    );
    assert!(
        err.contains("partition 0 offset 15: byte ") && err.contains("unexpected end of data"),
        "{err}"
    );
    assert!(
        err.contains("partition 0 offset 16: byte ")
            && err.contains("committed offset -1 is out of range"),
        "{err}"
    );
    // The rest of the table is intact.
    assert!(stdout(&o).contains("bad records: 3"));
    assert!(stdout(&o)
        .lines()
        .any(|l| l.starts_with("kitchen") && l.contains(" 15 ")));
}

#[test]
fn no_offsets_topic_is_a_clear_error() {
    let env = TestEnv::new();
    let o = env.run(&["replay-offsets", "fixtures/data"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("no __offsets or __consumer_offsets partition in fixtures/data"),
        "{}",
        stderr(&o)
    );
}
