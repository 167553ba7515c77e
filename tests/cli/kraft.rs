//! Kafka 4.x (KRaft) data directories: fixtures/kraft, written by
//! fixtures/kraft.py. Expected values come from that script's definitions
//! (a uuid is the base64url text of the 16 bytes the script names).

use crate::support::{document, dump_batches, stderr, stdout, TestEnv};
use serde_json::Value;

/// Kafka's Uuid.toString of 16 ASCII bytes, as written by hand here.
pub(crate) fn uuid(raw: &[u8; 16]) -> String {
    use base64::Engine;
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(raw)
}

/// Every record of every batch of `klog dump-segment --format json`'s
/// output, as (offset, decoded or control) pairs.
fn records(o: &std::process::Output) -> Vec<(i64, Value)> {
    let mut out = Vec::new();
    for b in &dump_batches(o) {
        for r in b["records"].as_array().unwrap() {
            let d = r.get("decoded").cloned().unwrap_or(Value::Null);
            out.push((r["offset"].as_i64().unwrap(), d));
        }
    }
    out
}

#[test]
fn metadata_log_records_are_decoded() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "fixtures/kraft/__cluster_metadata-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let recs = records(&o);
    assert_eq!(recs.len(), 29);
    // Offset 0: LEADER_CHANGE, leader 1, voters [1].
    let (_, lc) = &recs[0];
    assert_eq!(lc["type"], "LeaderChangeMessage");
    assert_eq!(lc["data"]["leaderId"], 1);
    assert_eq!(lc["data"]["voters"][0]["voterId"], 1);
    let (_, fl) = &recs[1];
    assert_eq!(fl["type"], "FeatureLevelRecord");
    assert_eq!(
        (fl["frameVersion"].as_i64(), fl["apiKey"].as_i64()),
        (Some(1), Some(12))
    );
    assert_eq!(fl["data"]["name"], "metadata.version");
    assert_eq!(fl["data"]["featureLevel"], 25);
    let (_, b1) = &recs[2];
    assert_eq!(b1["type"], "RegisterBrokerRecord");
    assert_eq!(b1["version"], 3);
    assert_eq!(b1["data"]["brokerId"], 1);
    assert_eq!(b1["data"]["rack"], "r1");
    assert_eq!(b1["data"]["fenced"], true);
    assert_eq!(b1["data"]["incarnationId"], uuid(b"incarnation-id-1"));
    assert_eq!(b1["data"]["endPoints"][0]["port"], 9092);
    assert_eq!(b1["data"]["logDirs"][0], uuid(b"log-dir-uuid-one"));
    let (_, t) = &recs[6];
    assert_eq!(t["type"], "TopicRecord");
    assert_eq!(t["data"]["name"], "orders");
    assert_eq!(t["data"]["topicId"], uuid(b"orders-topic-id!"));
    let (_, p1) = &recs[8];
    assert_eq!(p1["data"]["replicas"], serde_json::json!([2, 1]));
    assert_eq!(p1["data"]["leader"], 2);
    // Offset 19: PartitionChangeRecord, only the changed (tagged) fields.
    let (_, pc) = &recs[19];
    assert_eq!(pc["type"], "PartitionChangeRecord");
    assert_eq!(pc["data"]["isr"], serde_json::json!([1]));
    assert_eq!(pc["data"]["leader"], 1);
    assert!(pc["data"].get("replicas").is_none());
    let (_, cfg) = &recs[20];
    assert_eq!(cfg["data"]["value"], Value::Null);
    assert_eq!(recs[24].1["type"], "RemoveTopicRecord");
    assert_eq!(recs[24].1["data"]["topicId"], uuid(b"old-topic-id-016"));
    // Offset 23: a NoOpRecord (apiKey 20), no fields.
    let (_, noop) = &recs[23];
    assert_eq!(noop["type"], "NoOpRecord");
    assert_eq!(noop["data"], serde_json::json!({}));
}

#[test]
fn snapshot_and_bootstrap_checkpoints_are_decoded() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "fixtures/kraft/__cluster_metadata-0/00000000000000000019-0000000001.checkpoint",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    let recs = records(&o);
    let names: Vec<_> = recs
        .iter()
        .map(|(_, d)| d["type"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        names.first().map(String::as_str),
        Some("SnapshotHeaderRecord")
    );
    assert_eq!(
        names.last().map(String::as_str),
        Some("SnapshotFooterRecord")
    );
    assert_eq!(recs[1].1["data"]["kRaftVersion"], 1);
    assert_eq!(recs[2].1["type"], "VotersRecord");
    assert_eq!(recs[2].1["data"]["voters"][0]["endpoints"][0]["port"], 9093);
    assert_eq!(
        recs[2].1["data"]["voters"][0]["kRaftVersionFeature"]["maxSupportedVersion"],
        1
    );
    assert_eq!(names.iter().filter(|n| *n == "PartitionRecord").count(), 6);

    let o = env.run(
        &[
            "dump-segment",
            "--records",
            "fixtures/kraft/bootstrap.checkpoint",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(
        text.contains(
            r#"decoded: FeatureLevelRecord v0 {"name":"metadata.version","featureLevel":25}"#
        ),
        "{text}"
    );
    assert!(text.contains("controlType: SNAPSHOT_HEADER(3)"));
}

fn metadata_json(env: &TestEnv, extra: &[&str]) -> Value {
    let mut args = vec!["metadata", "--format", "json", "fixtures/kraft"];
    args.extend_from_slice(extra);
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    document(&o, "metadata")
}

/// Partition `p` of `topic` in `klog metadata --format json`'s document.
pub(crate) fn partition<'a>(image: &'a Value, topic: &str, p: i64) -> &'a Value {
    let t = image["topics"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == topic)
        .unwrap_or_else(|| panic!("no topic {topic}"));
    t["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|x| x["partition"] == p)
        .unwrap()
}

#[test]
fn metadata_replays_the_snapshot_then_the_log() {
    let env = TestEnv::new();
    let m = metadata_json(&env, &[]);
    // The snapshot at 19, then offsets 19..=25.
    assert_eq!(m["snapshot"]["offset"], 19);
    assert_eq!(m["snapshot"]["epoch"], 1);
    assert_eq!(m["log_range"]["first"], 19);
    assert_eq!(m["next_offset"], 29);
    assert_eq!(m["features"]["metadata.version"], 25);
    assert_eq!(m["producer_ids"]["next_producer_id"], 2000);
    let brokers = m["brokers"].as_array().unwrap();
    assert_eq!(brokers.len(), 2);
    assert_eq!(brokers[0]["id"], 1);
    assert_eq!(brokers[0]["fenced"], false);
    assert_eq!(brokers[0]["rack"], "r1");
    assert_eq!(brokers[1]["fenced"], true);
    assert_eq!(m["controllers"][0]["listeners"][0]["port"], 9093);
    let names: Vec<_> = m["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert!(
        names.contains(&"fresh") && !names.contains(&"old"),
        "{names:?}"
    );
    // orders-1: replicas [2, 1], isr [2, 1], leader 2 at epochs 0/0; then
    // PartitionChangeRecord isr [1] leader 1: leader epoch 1, partition epoch 1.
    let p1 = partition(&m, "orders", 1);
    assert_eq!(p1["leader"], 1);
    assert_eq!(p1["isr"], serde_json::json!([1]));
    assert_eq!(p1["replicas"], serde_json::json!([2, 1]));
    assert_eq!(
        (p1["leader_epoch"].as_i64(), p1["partition_epoch"].as_i64()),
        (Some(1), Some(1))
    );
    // retention.ms was deleted (null value); cleanup.policy set.
    let configs = m["configs"].as_array().unwrap();
    assert_eq!(configs.len(), 2);
    assert_eq!(configs[0]["name"], "cleanup.policy");
    assert_eq!(
        (&configs[1]["resource_type"], &configs[1]["resource"]),
        (&Value::from("broker"), &Value::from("(default)"))
    );
    // Every record applied, nothing incomplete.
    assert_eq!(m["not_applied"], serde_json::json!([]));
    assert_eq!(m["incomplete"], serde_json::json!([]));
    assert_eq!(m["findings"], serde_json::json!([]));
}

#[test]
fn metadata_as_of_an_offset_before_the_snapshot_reads_the_log_from_zero() {
    let env = TestEnv::new();
    // Offsets 0..=16: old exists (removed at 17), producer ids next 1000.
    let m = metadata_json(&env, &["--as-of", "offset:17"]);
    assert_eq!(m["snapshot"], Value::Null);
    assert_eq!(m["next_offset"], 17);
    assert_eq!(m["producer_ids"]["next_producer_id"], 1000);
    let names: Vec<_> = m["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names.len(), 3);
    assert!(names.contains(&"old"));
    assert_eq!(partition(&m, "orders", 1)["leader"], 2);
    assert_eq!(m["configs"][0]["value"], "86400000");
    // Broker 1 was registered fenced (offset 2) and unfenced (offset 5).
    assert_eq!(m["brokers"][0]["fenced"], false);
    // Offset 19 exactly: the snapshot, and nothing of the log after it.
    let m = metadata_json(&env, &["--as-of", "offset:19"]);
    assert_eq!(m["snapshot"]["offset"], 19);
    assert_eq!(m["log_range"], Value::Null);
    assert_eq!(partition(&m, "orders", 1)["leader"], 2);
}

#[test]
fn metadata_topic_filter_and_csv() {
    let env = TestEnv::new();
    let csv = |extra: &[&str]| {
        let mut all = vec!["metadata", "--format", "csv"];
        all.extend_from_slice(extra);
        all.push("fixtures/kraft");
        let o = env.run(&all, None);
        assert_eq!(o.status.code(), Some(0), "{all:?}: {}", stderr(&o));
        stdout(&o)
    };
    let id = uuid(b"orders-topic-id!");
    let dir = uuid(b"log-dir-uuid-one");
    let zero = uuid(&[0; 16]);
    // --table chooses the table; --topic filters it. The header is the
    // JSON field names (a partition's after its topic's), a list its JSON.
    assert_eq!(
        csv(&["--table", "partitions", "--topic", "orders"]),
        format!(
            "topic,topic_id,partition,replicas,isr,removing_replicas,adding_replicas,leader,\
             leader_recovery_state,leader_epoch,partition_epoch,directories,\
             eligible_leader_replicas,last_known_elr\n\
             orders,{id},0,[1],[1],[],[],1,0,0,0,\"[\"\"{dir}\"\"]\",[],[]\n\
             orders,{id},1,\"[2,1]\",[1],[],[],1,0,1,1,\"[\"\"{zero}\"\",\"\"{dir}\"\"]\",[],[]\n"
        )
    );
    let partitions = csv(&["--table", "partitions"]);
    assert_eq!(partitions.lines().count(), 1 + 7, "{partitions}");
    assert!(partitions.contains("\nfresh,"), "{partitions}");
    // The brokers table by default, with --topic too: the table is never
    // chosen by a filter.
    let brokers = csv(&[]);
    assert!(
        brokers.starts_with(
            "id,epoch,incarnation_id,rack,listeners,fenced,in_controlled_shutdown,log_dirs,cordoned_log_dirs\n"
        ),
        "{brokers}"
    );
    assert_eq!(brokers.lines().count(), 1 + 2, "{brokers}");
    assert_eq!(csv(&["--table", "brokers"]), brokers);
    assert_eq!(csv(&["--topic", "orders"]), brokers);
    assert_eq!(
        csv(&["--table", "controllers"]),
        format!(
            "id,incarnation_id,listeners\n\
             1,{},\"[{{\"\"name\"\":\"\"CONTROLLER\"\",\"\"host\"\":\"\"localhost\"\",\"\"port\"\":9093,\"\"security_protocol\"\":0}}]\"\n",
            uuid(b"controller-inc-1")
        )
    );
    assert_eq!(
        csv(&["--table", "configs"]),
        "resource_type,resource,name,value\n\
         topic,orders,cleanup.policy,compact\n\
         broker,(default),num.partitions,3\n"
    );
    assert_eq!(
        csv(&["--table", "configs", "--topic", "orders"]),
        "resource_type,resource,name,value\ntopic,orders,cleanup.policy,compact\n"
    );
    // --table is the CSV's: text and JSON show every table.
    for format in ["text", "json"] {
        let o = env.run(
            &[
                "metadata",
                "--format",
                format,
                "--table",
                "brokers",
                "fixtures/kraft",
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(2), "{format}");
        assert_eq!(stdout(&o), "", "{format}");
        assert!(stderr(&o).contains("--table"), "{}", stderr(&o));
    }
    let o = env.run(&["metadata", "fixtures/kraft/orders-0"], None);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn info_checks_the_disk_against_the_metadata() {
    let env = TestEnv::new();
    let o = env.run(&["info", "--format", "json", "fixtures/kraft"], None);
    assert_eq!(o.status.code(), Some(0), "warnings do not fail by default");
    let doc = document(&o, "info");
    let v = &doc["directories"][0];
    assert_eq!(v["quorum_state"]["leader_id"], 1);
    assert_eq!(
        v["quorum_state"]["voted_directory_id"],
        uuid(b"log-dir-uuid-one")
    );
    assert_eq!(v["quorum_state"]["data_version"], 1);
    assert_eq!(v["metadata"]["snapshot_offset"], 19);
    let mut found: Vec<(String, String)> = doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            let file = f["file"].as_str().unwrap();
            let folder = file.rsplit('/').next().unwrap().to_string();
            (f["kind"].as_str().unwrap().to_string(), folder)
        })
        .collect();
    found.sort();
    let ab = "ab".repeat(16);
    let mut want = vec![
        (
            "assigned_partition_missing".to_string(),
            "__consumer_offsets-1".to_string(),
        ),
        (
            "assigned_partition_missing".into(),
            "__consumer_offsets-2".into(),
        ),
        ("assigned_partition_missing".into(), "orders-1".into()),
        ("unknown_topic_id".into(), "ghost-0".into()),
        ("deleted_topic_folder".into(), "old-0".into()),
        ("topic_id_other_name".into(), "payments-0".into()),
        ("delete_folder".into(), format!("orders-5.{ab}-delete")),
        ("stray_folder".into(), format!("orders-5.{ab}-stray")),
    ];
    want.sort();
    assert_eq!(found, want);
    assert!(doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f["severity"] == "warning"));
    let o = env.run(&["info", "--fail-on", "warning", "fixtures/kraft"], None);
    assert_eq!(o.status.code(), Some(1));
    let err = crate::support::stderr(&o);
    assert!(err.contains("payments-0: topic id b3JkZXJzLXRvcGljLWlkIQ is topic \"orders\" in the metadata, not \"payments\""), "{err}");
}

#[test]
fn groups_of_every_protocol() {
    let env = TestEnv::new();
    let o = env.run(&["groups", "--format", "json", "fixtures/kraft"], None);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let v = document(&o, "groups");
    let groups = v["groups"].as_array().unwrap();
    let names: Vec<_> = groups
        .iter()
        .map(|g| g["group"].as_str().unwrap())
        .collect();
    // checkout-app was tombstoned.
    assert_eq!(names, ["checkout", "share-audit", "word-counter"]);
    let c = &groups[0];
    assert_eq!(
        (c["type"].as_str(), c["state"].as_str()),
        (Some("consumer"), Some("Stable"))
    );
    assert_eq!(
        (c["epoch"].as_i64(), c["assignment_epoch"].as_i64()),
        (Some(3), Some(3))
    );
    assert_eq!(c["protocol"], "uniform");
    // Its newest live record is its regular expression at offset 20,
    // stamped TS + 20 (kraft.py: one ms per offset).
    assert_eq!(c["state_timestamp_ms"], 1_700_000_000_020i64);
    let m = &c["members"][0];
    assert_eq!(m["member_id"], "m-1");
    assert_eq!(m["client_id"], "checkout-app");
    assert_eq!(m["client_host"], "/10.0.0.9");
    assert_eq!(m["rack"], "r1");
    assert_eq!(m["member_epoch"], 3);
    // The topic id resolves to its name through the metadata.
    assert_eq!(m["assignment"], serde_json::json!([["orders", [0, 1]]]));
    let sh = &groups[1];
    assert_eq!(
        (sh["type"].as_str(), sh["state"].as_str()),
        (Some("share"), Some("Stable"))
    );
    assert_eq!(
        sh["members"][0]["assignment"],
        serde_json::json!([["orders", [0]]])
    );
    // Snapshot: 0 Acknowledged x1, 1 Available x1; update: 1 Acknowledged x2
    // (the greater delivery count wins the offset). Share-partitions follow
    // the groups, each naming its group.
    let sp: Vec<Value> = v["share_partitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["group"] == "share-audit")
        .cloned()
        .collect();
    let key = |i: usize| {
        (
            sp[i]["topic"].as_str().unwrap().to_string(),
            sp[i]["partition"].as_i64().unwrap(),
        )
    };
    // Sorted by topic name: fresh-0, orders-0, orders-1; old-0 was tombstoned.
    assert_eq!(
        (0..3).map(key).collect::<Vec<_>>(),
        [
            ("fresh".into(), 0),
            ("orders".into(), 0),
            ("orders".to_string(), 1)
        ]
    );
    let batch = |first: i64, last: i64, state: &str, count: i64| serde_json::json!({"first_offset": first, "last_offset": last, "delivery_state": state, "delivery_count": count});
    let ints = |v: &Value, keys: &[&str]| -> Vec<i64> {
        keys.iter().map(|k| v[k].as_i64().unwrap()).collect()
    };
    let o0 = &sp[1];
    assert_eq!(
        ints(
            o0,
            &[
                "start_offset",
                "state_epoch",
                "updates",
                "write_timestamp_ms"
            ]
        ),
        [0, 1, 1, 1_700_000_000_000]
    );
    assert_eq!(
        o0["batches"],
        serde_json::json!([
            batch(0, 0, "Acknowledged", 1),
            batch(1, 1, "Acknowledged", 2)
        ])
    );
    // orders-1: [0-9 Available x1]; + [3-5 Acknowledged x1] splits it; start
    // 4 prunes 0-3 and [8-12 Archived x0] (count 0 < 1) keeps only 10-12;
    // [13-15 Archived x0] is contiguous with the same state: 10-15.
    let o1 = &sp[2];
    assert_eq!(
        ints(
            o1,
            &["start_offset", "leader_epoch", "state_epoch", "updates"]
        ),
        [4, 1, 1, 3]
    );
    assert_eq!(
        o1["batches"],
        serde_json::json!([
            batch(4, 5, "Acknowledged", 1),
            batch(6, 9, "Available", 1),
            batch(10, 15, "Archived", 0)
        ])
    );
    // fresh-0 began with a ShareUpdate: its batches as written, state epoch 0,
    // snapshot epoch 2, no timestamps.
    let f = &sp[0];
    assert_eq!(
        ints(
            f,
            &[
                "start_offset",
                "state_epoch",
                "snapshot_epoch",
                "leader_epoch",
                "create_timestamp_ms"
            ]
        ),
        [5, 0, 2, 3, 0]
    );
    assert_eq!(
        f["batches"],
        serde_json::json!([batch(7, 8, "Acknowledged", 1), batch(5, 6, "Available", 1)])
    );
    let st = &groups[2];
    assert_eq!(st["type"], "streams");
    let m = &st["members"][0];
    assert_eq!(m["client_id"], "wc-app");
    assert_eq!(m["member_state"], "stable");
    // Task 0 of subtopology "0", which reads orders (its topology record).
    assert_eq!(m["active_tasks"], serde_json::json!([["0", [0]]]));
    assert_eq!(m["assignment"], serde_json::json!([["orders", [0]]]));
    // A loaded streams group with members has no configured topology yet.
    assert_eq!(st["state"], "NotReady");
    assert_eq!(
        (st["epoch"].as_i64(), st["assignment_epoch"].as_i64()),
        (Some(1), Some(1))
    );

    // CSV: the share-partition table with --share-state.
    let o = env.run(
        &[
            "groups",
            "--share-state",
            "--format",
            "csv",
            "fixtures/kraft",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "share_group,topic,partition,start_offset,lag,state_epoch,leader_epoch,snapshot_epoch,updates,written_ms,state_batches\n\
         share-audit,fresh,0,5,,0,3,2,1,,7-8:Acknowledgedx1 5-6:Availablex1\n\
         share-audit,orders,0,0,,1,0,0,1,1700000000000,0-0:Acknowledgedx1 1-1:Acknowledgedx2\n\
         share-audit,orders,1,4,,1,1,0,3,1700000000000,4-5:Acknowledgedx1 6-9:Availablex1 10-15:Archivedx0\n"
    );

    let o = env.run(&["groups", "--group", "nope", "fixtures/kraft"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(crate::support::stderr(&o).contains("group does not exist"));
}

#[test]
fn lag_names_new_protocol_members_and_refuses_unknown_groups() {
    let env = TestEnv::new();
    let o = env.run(&["lag", "--format", "json", "fixtures/kraft"], None);
    assert_eq!(o.status.code(), Some(0));
    let v = document(&o, "lag");
    let r = &v["partitions"][0];
    // checkout committed 1 of orders-0 (2 records): lag 1, member m-1.
    assert_eq!(
        (
            r["group"].as_str(),
            r["committed_offset"].as_i64(),
            r["lag"].as_i64()
        ),
        (Some("checkout"), Some(1), Some(1))
    );
    assert_eq!(r["consumer_id"], "m-1");
    assert_eq!(r["host"], "/10.0.0.9");
    assert_eq!(r["client_id"], "checkout-app");
    // word-counter (streams) committed 2 of orders-0: its member st-1 has
    // task 0 of subtopology "0", which reads orders (the topology record).
    let r = &v["partitions"][1];
    assert_eq!(
        (
            r["group"].as_str(),
            r["committed_offset"].as_i64(),
            r["lag"].as_i64()
        ),
        (Some("word-counter"), Some(2), Some(0))
    );
    assert_eq!(
        (
            r["consumer_id"].as_str(),
            r["host"].as_str(),
            r["client_id"].as_str()
        ),
        (Some("st-1"), Some("/10.0.0.11"), Some("wc-app"))
    );
    // An unknown group and a tombstoned one (checkout-app) do not exist.
    for g in ["nope", "checkout-app"] {
        let o = env.run(&["lag", "--group", g, "fixtures/kraft"], None);
        assert_eq!(o.status.code(), Some(2), "{g}");
        assert!(crate::support::stderr(&o).contains("group does not exist"));
        assert_eq!(stdout(&o), "");
    }
}

#[test]
fn coordinator_records_are_named_in_dump_and_replay() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "fixtures/kraft/__consumer_offsets-0",
        ],
        None,
    );
    let recs = records(&o);
    let types: Vec<_> = recs
        .iter()
        .map(|(_, d)| d["key"]["type"].as_str().unwrap_or("?").to_string())
        .collect();
    assert_eq!(types[0], "ConsumerGroupMetadata");
    assert_eq!(types[4], "ConsumerGroupCurrentMemberAssignment");
    assert_eq!(types[13], "StreamsGroupTopology");
    // Every record decodes (kraft.py: one of each type 3..=24 but 2), but
    // types 18 and 24, which no release wrote (4.0 has no streams records,
    // 4.4's CoordinatorRecordType ends at 23): unknown, as to Kafka.
    for (offset, d) in &recs {
        let t = d["key"]["type"].as_str().unwrap_or("?");
        if t == "unknown(18)" || t == "unknown(24)" {
            continue;
        }
        assert!(d.get("error").is_none(), "offset {offset}: {d}");
    }
    assert_eq!(
        types.iter().filter(|t| t.starts_with("unknown(")).count(),
        2,
        "{types:?}"
    );
    let data = |i: usize| &recs[i].1["value"]["data"];
    let sub = &data(13)["subtopologies"][0];
    assert_eq!(sub["sourceTopics"], serde_json::json!(["orders"]));
    assert_eq!(
        sub["stateChangelogTopics"][0]["topicConfigs"][0],
        serde_json::json!({"key": "cleanup.policy", "value": "compact"})
    );
    assert_eq!(data(1)["serverAssignor"], "uniform");
    assert_eq!(recs[15].1["value"], "tombstone");
    let mut all: Vec<i64> = recs
        .iter()
        // Offset commits (type 1) carry their type as the key's version.
        .map(|(_, d)| {
            let k = &d["key"];
            k["record_type"].as_i64().or(k["version"].as_i64()).unwrap()
        })
        .collect();
    all.sort();
    all.dedup();
    assert_eq!(
        all,
        [1, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24]
    );
    assert_eq!(types[17], "ShareGroupPartitionMetadata");
    assert_eq!(data(17)["topics"][0]["numPartitions"], 2);
    assert_eq!(types[19], "ShareGroupStatePartitionMetadata");
    assert_eq!(
        data(19)["initializedTopics"][0]["partitions"],
        serde_json::json!([0, 1])
    );
    // ConsumerGroupRegularExpressionValue has a field named Version: the
    // record's value version stays apart from it.
    assert_eq!(recs[20].1["key"]["data"]["regularExpression"], "ord.*");
    assert_eq!(recs[20].1["value"]["version"], 0);
    assert_eq!(data(20)["version"], 7);
    assert_eq!(types[21], "unknown(18)");
    assert_eq!(
        data(23)["standbyTasks"][0]["partitions"],
        serde_json::json!([1])
    );
    assert_eq!(types[24], "unknown(24)");
    let o = env.run(&["replay-offsets", "fixtures/kraft"], None);
    let text = crate::support::stderr(&o);
    assert!(text.contains("ConsumerGroupMetadata (type 3): 3"), "{text}");
    assert!(text.contains("StreamsGroupTopology (type 23): 1"), "{text}");
    assert!(text.contains("type 24: 1"), "{text}");

    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "fixtures/kraft/__share_group_state-0",
        ],
        None,
    );
    let recs = records(&o);
    assert_eq!(recs[0].1["key"]["type"], "ShareSnapshot");
    assert_eq!(
        recs[0].1["key"]["data"]["topicId"],
        uuid(b"orders-topic-id!")
    );
    assert_eq!(
        recs[0].1["value"]["data"]["stateBatches"][1]["deliveryState"],
        0
    );
    assert_eq!(recs[1].1["key"]["type"], "ShareUpdate");
    assert_eq!(recs[1].1["value"]["data"]["startOffset"], -1);
    assert_eq!(recs[8].1["value"], "tombstone");
}

#[test]
fn layout_annotates_metadata_records_field_by_field() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "dump-segment",
            "--layout",
            "fixtures/kraft/bootstrap.checkpoint",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    // FeatureLevelRecord (apiKey 12) v0: compact "metadata.version" (length 16 + 1 = 0x11), level 25.
    let lines: Vec<&str> = text.lines().filter(|l| l.contains("value: ")).collect();
    let find = |name: &str| {
        *lines
            .iter()
            .find(|l| l.contains(name))
            .unwrap_or_else(|| panic!("{name}: {text}"))
    };
    assert!(find("value: apiKey (uvarint)").contains("12 (FeatureLevelRecord)"));
    assert!(find("value: name").contains("11 6d 65 74 61"));
    assert!(find("value: featureLevel").contains("00 19"));
    assert!(find("value: featureLevel").trim_end().ends_with("25"));
}

#[test]
fn groups_with_offsets_only_are_simple_classic_groups() {
    let env = TestEnv::new();
    // fixtures/groups (make.sh): live commits of analytics, auditor, courier
    // and kitchen; audit's were tombstoned; no group records at all. The
    // tombstones of its offsets leave audit's group in place: only a
    // GroupMetadata tombstone removes a group an offset commit created
    // (OffsetMetadataManager.replay, GroupMetadataManager.replay).
    let o = env.run(&["groups", "--format", "csv", "fixtures/groups"], None);
    assert_eq!(o.status.code(), Some(0));
    assert_eq!(
        stdout(&o),
        "group,type,state,epoch,assignment_epoch,protocol,members,state_timestamp_ms\n\
         analytics,classic,Empty,,,,0,\n\
         audit,classic,Empty,,,,0,\n\
         auditor,classic,Empty,,,,0,\n\
         courier,classic,Empty,,,,0,\n\
         kitchen,classic,Empty,,,,0,\n"
    );
}

/// OffsetMetadataManager.replay creates a simple classic group for every
/// offset commit value, transactional or not: a group whose only commit was
/// aborted stays a group (Kafka 4.4 lists it); a GroupMetadata tombstone
/// removes one, and a consumer group record replaces one (and its tombstone
/// leaves nothing). Kafka 3 in ZooKeeper mode loads the same log otherwise.
#[test]
fn groups_created_by_offset_commits_are_the_ones_kafka_keeps() {
    let env = TestEnv::new();
    let script = "
def commit(at, group, offset, pid=-1):
    txn = pid >= 0
    return batch(at, [(0, 0, offset_commit_key(group, 'orders', 0), offset_commit_value(offset, 1700000000000))],
                 producer_id=pid, producer_epoch=0 if txn else -1, base_sequence=0 if txn else -1,
                 attributes=TRANSACTIONAL if txn else 0)
out = (commit(0, 'aborted', 7, pid=5)                       # pending ...
       + control_batch(1, False, 5, 0)                      # ... and aborted: the group stays
       + commit(2, 'removed', 3)
       + batch(3, [(0, 0, coordinator_key(2, 'removed'), None)])   # GroupMetadata tombstone: gone
       + commit(4, 'replaced', 4)
       + batch(5, [(0, 0, coordinator_key(3, 'replaced'), consumer_group_metadata_value(1))])
       + batch(6, [(0, 0, coordinator_key(3, 'replaced'), None)])  # the consumer group's tombstone
       + commit(7, 'again', 1)
       + batch(8, [(0, 0, coordinator_key(2, 'again'), None)])
       + commit(9, 'again', 2))                             # a commit after the tombstone: back
";
    crate::support::write_segment(
        &env.path("data"),
        "__consumer_offsets-0",
        &crate::support::encoded(script),
    );
    let o = env.run(&["groups", "--format", "csv", "data"], None);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    assert_eq!(
        stdout(&o),
        "group,type,state,epoch,assignment_epoch,protocol,members,state_timestamp_ms\n\
         aborted,classic,Empty,,,,0,\n\
         again,classic,Empty,,,,0,\n"
    );
    // A ZooKeeper-mode directory (meta.properties version 0) is loaded by
    // Kafka 3's GroupMetadataManager.doLoadGroupsAndOffsets: a group for each
    // group left with committed offsets (whatever GroupMetadata tombstone or
    // newer record came), none for the aborted commit.
    std::fs::write(env.path("data/meta.properties"), "version=0\nbroker.id=1\n").unwrap();
    let o = env.run(&["groups", "--format", "csv", "data"], None);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    assert_eq!(
        stdout(&o),
        "group,type,state,epoch,assignment_epoch,protocol,members,state_timestamp_ms\n\
         again,classic,Empty,,,,0,\n\
         removed,classic,Empty,,,,0,\n\
         replaced,classic,Empty,,,,0,\n"
    );
}

fn metadata_dir_with_snapshot(env: &TestEnv, name: &str, snapshot: &str) -> String {
    let dir = env.path(name);
    let folder = dir.join("__cluster_metadata-0");
    let log = crate::support::encoded(
        "out = batch(0, [(0, 0, None, feature_level_record('metadata.version', 25))], first_timestamp=1)",
    );
    crate::support::write_segment(&dir, "__cluster_metadata-0", &log);
    std::fs::write(
        folder.join("00000000000000000001-0000000001.checkpoint"),
        crate::support::encoded(snapshot),
    )
    .unwrap();
    dir.display().to_string()
}

// Snapshot pieces for encoder.py: header, kraft version, data, footer batches.
const HEADER: &str =
    "h = batch(0, [(0, 0, control_key(3), snapshot_header_value(1))], first_timestamp=1, attributes=CONTROL)\n";
const DATA: &str =
    "d = batch(1, [(0, 0, None, feature_level_record('metadata.version', 25))], first_timestamp=1)\n";
const FOOTER: &str =
    "f = batch(2, [(0, 0, control_key(4), snapshot_footer_value())], first_timestamp=1, attributes=CONTROL)\n";

fn kinds(findings: &Value) -> Vec<(String, String)> {
    findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["kind"].as_str().unwrap().starts_with("snapshot_"))
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

#[test]
fn snapshots_begin_with_a_header_and_end_with_a_footer() {
    let env = TestEnv::new();
    let pair = |k: &str, s: &str| vec![(k.to_string(), s.to_string())];
    // (exit code, the snapshot findings, the document) of `klog CMD --format json DIR`.
    let run = |cmd: &str, dir: &str| {
        let o = env.run(&[cmd, "--format", "json", dir], None);
        let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
        (o.status.code().unwrap(), kinds(&v["findings"]), v)
    };
    // A whole snapshot: nothing to say; 2 files: the log segment and the snapshot.
    let good = metadata_dir_with_snapshot(
        &env,
        "good",
        &format!("{HEADER}{DATA}{FOOTER}out = h + d + f"),
    );
    let (code, found, v) = run("verify-crc", &good);
    assert_eq!((code, found), (0, vec![]));
    assert_eq!(v["checked"]["files"], 2);

    // Cut after the data batch: no footer. Kafka reads it (a warning), at
    // the data batch right after the header batch.
    let cut = metadata_dir_with_snapshot(&env, "cut", &format!("{HEADER}{DATA}out = h + d"));
    let (code, found, v) = run("verify-crc", &cut);
    assert_eq!(
        (code, found),
        (0, pair("snapshot_footer_missing", "warning"))
    );
    let header_len = crate::support::encoded(&format!("{HEADER}out = h")).len() as i64;
    let f = snapshot_finding(&v["findings"]);
    assert_eq!(
        (f["position"].as_i64(), f["offset"].as_i64()),
        (Some(header_len), Some(1))
    );
    let (code, found, m) = run("metadata", &cut);
    assert_eq!(
        (code, found),
        (0, pair("snapshot_footer_missing", "warning"))
    );
    assert_eq!(m["snapshot"]["offset"], 1);

    // No header: Kafka's RecordsSnapshotReader refuses it (an error, exit 1).
    let headless =
        metadata_dir_with_snapshot(&env, "headless", &format!("{DATA}{FOOTER}out = d + f"));
    for cmd in ["verify-crc", "info"] {
        let (code, found, v) = run(cmd, &headless);
        assert_eq!(
            (code, found),
            (1, pair("snapshot_header_missing", "error")),
            "{cmd}"
        );
        let detail = snapshot_finding(&v["findings"])["detail"].to_string();
        assert!(
            detail.contains("it is a data batch at offset 1"),
            "{detail}"
        );
    }
    let o = env.run(&["metadata", &headless], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr_has(&o, "snapshot_header_missing"));
    let snap =
        format!("{headless}/__cluster_metadata-0/00000000000000000001-0000000001.checkpoint");
    let o = env.run(&["dump-segment", &snap], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr_has(&o, "RecordsSnapshotReader refuses the snapshot"));

    // An empty snapshot has no header either; a footer alone is no header.
    for (name, script) in [
        ("empty", "out = b''".to_string()),
        ("footer-only", format!("{FOOTER}out = f")),
    ] {
        let dir = metadata_dir_with_snapshot(&env, name, &script);
        let (code, found, _) = run("verify-crc", &dir);
        assert_eq!(
            (code, found),
            (1, pair("snapshot_header_missing", "error")),
            "{name}"
        );
    }

    // bootstrap.checkpoint: BootstrapDirectory reads it without looking for
    // either, so both are warnings.
    std::fs::write(
        env.path("good/bootstrap.checkpoint"),
        crate::support::encoded(&format!("{DATA}out = d")),
    )
    .unwrap();
    let (code, mut found, _) = run("verify-crc", &good);
    found.sort();
    assert_eq!(code, 0);
    assert_eq!(
        found,
        [
            ("snapshot_footer_missing".to_string(), "warning".to_string()),
            ("snapshot_header_missing".to_string(), "warning".to_string())
        ]
    );
}

fn snapshot_finding(findings: &Value) -> &Value {
    findings
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["kind"].as_str().unwrap().starts_with("snapshot_"))
        .unwrap()
}

fn stderr_has(o: &std::process::Output, s: &str) -> bool {
    crate::support::stderr(o).contains(s)
}

#[test]
fn info_checks_every_log_directory_against_the_metadata() {
    let env = TestEnv::new();
    // A second log directory of node 1 (JBOD): it holds orders-1, which the
    // metadata assigns to node 1, and a folder of an unknown topic id.
    let disk2 = env.path("disk2");
    let folder = |name: &str, id: &[u8; 16]| {
        let log = crate::support::encoded("out = b''");
        crate::support::write_segment(&disk2, name, &log);
        std::fs::write(
            disk2.join(name).join("partition.metadata"),
            format!("version: 0\ntopic_id: {}", uuid(id)),
        )
        .unwrap();
    };
    folder("orders-1", b"orders-topic-id!");
    folder("lost-0", b"lost-topic-id-01");
    std::fs::write(
        disk2.join("meta.properties"),
        "node.id=1\ndirectory.id=ZGlzay10d28tdXVpZC0yMg\nversion=1\ncluster.id=a2xvZy1maXh0dXJlLTAx\n",
    )
    .unwrap();
    let o = env.run(
        &[
            "info",
            "--format",
            "json",
            "fixtures/kraft",
            disk2.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    // One document; each finding names its file, under the directory it is about.
    let doc = document(&o, "info");
    let under = |dir: &str| -> Value {
        let mine: Vec<Value> = doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["file"].as_str().unwrap().starts_with(dir))
            .cloned()
            .collect();
        serde_json::json!({ "findings": mine })
    };
    let docs = [under("fixtures/kraft"), under(disk2.to_str().unwrap())];
    let found = |v: &Value| -> Vec<(String, String)> {
        v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .map(|f| {
                let file = f["file"].as_str().unwrap();
                (
                    f["kind"].as_str().unwrap().to_string(),
                    file.rsplit('/').next().unwrap().to_string(),
                )
            })
            .collect()
    };
    let first = found(&docs[0]);
    // orders-1 is on disk2 now: only the offsets partitions are missing.
    assert!(first.contains(&(
        "assigned_partition_missing".into(),
        "__consumer_offsets-1".into()
    )));
    assert!(!first.iter().any(|(_, f)| f == "orders-1"), "{first:?}");
    // disk2 has no metadata log; its folders are checked against fixtures/kraft's.
    assert_eq!(
        found(&docs[1]),
        [("unknown_topic_id".to_string(), "lost-0".to_string())]
    );
}

/// The `--layout --format json` fields of every batch of `path`: (field, bytes in hex, value).
fn layout_fields(env: &TestEnv, path: &str) -> Vec<(String, String, String)> {
    let o = env.run(
        &["dump-segment", "--layout", "--format", "json", path],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    crate::support::dump_entries(&o)
        .iter()
        .filter(|e| e["type"] == "layout")
        .flat_map(|b| b["fields"].as_array().unwrap().clone())
        .map(|f| {
            (
                f["field"].as_str().unwrap().to_string(),
                f["bytes"].as_str().unwrap().to_string(),
                f["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The first field named `name`: (bytes in hex, value).
fn field<'a>(fields: &'a [(String, String, String)], name: &str) -> (&'a str, &'a str) {
    fields
        .iter()
        .find(|f| f.0 == name)
        .map(|f| (f.1.as_str(), f.2.as_str()))
        .unwrap_or_else(|| panic!("no field {name:?} in {fields:#?}"))
}

#[test]
fn layout_traces_control_and_coordinator_records_field_by_field() {
    let env = TestEnv::new();
    // The metadata log's offset 0: LEADER_CHANGE (key version 0, type 2),
    // LeaderChangeMessage v0: version 0, leader 1, voters [1], granting [1].
    let m = layout_fields(&env, "fixtures/kraft/__cluster_metadata-0");
    assert_eq!(field(&m, "key: version (int16)"), ("0000", "0"));
    assert_eq!(
        field(&m, "key: type (int16)"),
        ("0002", "2 (LEADER_CHANGE)")
    );
    assert_eq!(field(&m, "value: leaderId (int32)"), ("00000001", "1"));
    assert_eq!(
        field(&m, "value: voters[0].voterId (int32)"),
        ("00000001", "1")
    );
    // The snapshot: SNAPSHOT_HEADER's lastContainedLogTimestamp TS, and the
    // voters record's endpoint port 9093 (0x2385).
    let s = layout_fields(
        &env,
        "fixtures/kraft/__cluster_metadata-0/00000000000000000019-0000000001.checkpoint",
    );
    assert_eq!(
        field(&s, "value: lastContainedLogTimestamp (int64)"),
        ("0000018bcfe56800", "1700000000000")
    );
    assert_eq!(
        field(&s, "value: voters[0].endpoints[0].port (uint16)"),
        ("2385", "9093")
    );
    assert_eq!(
        field(&s, "key: type (int16)"),
        ("0003", "3 (SNAPSHOT_HEADER)")
    );

    // A COMMIT marker (EndTransactionMarker v0, coordinator epoch 5).
    let dir = env.path("txn");
    crate::support::write_segment(
        &dir,
        "t-0",
        &crate::support::encoded("out = control_batch(0, True, 7, 1, coordinator_epoch=5)"),
    );
    let t = layout_fields(&env, dir.join("t-0").to_str().unwrap());
    assert_eq!(field(&t, "key: type (int16)"), ("0001", "1 (COMMIT)"));
    assert_eq!(
        field(&t, "value: coordinatorEpoch (int32)"),
        ("00000005", "5")
    );

    // Coordinator records (kraft.py): ConsumerGroupMetadata with its tagged
    // MetadataHash 77, the streams topology's nested fields.
    let c = layout_fields(&env, "fixtures/kraft/__consumer_offsets-0");
    assert_eq!(
        field(&c, "key: recordType (int16)"),
        ("0003", "3 (ConsumerGroupMetadata)")
    );
    assert_eq!(field(&c, "key: groupId (string)").1, "\"checkout\"");
    assert_eq!(field(&c, "value: epoch (int32)"), ("00000003", "3"));
    assert_eq!(
        field(&c, "value: metadataHash (int64, tag 0)"),
        ("000000000000004d", "77")
    );
    assert_eq!(
        field(
            &c,
            "value: subtopologies[0].sourceTopics[0] (compact string)"
        ),
        ("076f7264657273", "\"orders\"")
    );
    assert_eq!(
        field(&c, "value: subtopologies[0].stateChangelogTopics[0].topicConfigs[0].value (compact string)").1,
        "\"compact\""
    );
    assert!(c
        .iter()
        .any(|f| f.0 == "value" && f.2 == "null: a tombstone, the key is deleted"));

    // The share coordinator's records: a ShareSnapshot's key and batches.
    let sh = layout_fields(&env, "fixtures/kraft/__share_group_state-0");
    assert_eq!(
        field(&sh, "key: recordType (int16)"),
        ("0000", "0 (ShareSnapshot)")
    );
    assert_eq!(field(&sh, "key: partition (int32)"), ("00000000", "0"));
    assert_eq!(field(&sh, "value: stateEpoch (int32)"), ("00000001", "1"));
    assert_eq!(
        field(&sh, "value: stateBatches[0].deliveryState (int8)"),
        ("02", "2")
    );
    // Nothing in these files fails to decode.
    for all in [&m, &s, &t, &c, &sh] {
        assert!(
            !all.iter().any(|f| f.2.contains("does not decode")),
            "{all:#?}"
        );
    }
}

#[test]
fn a_coordinator_record_that_does_not_decode_is_not_applied() {
    let env = TestEnv::new();
    // Group g: ConsumerGroupMetadata epoch 4, then a value of version 9
    // (ConsumerGroupMetadataValue has only version 0): Kafka's loader fails
    // on it, so klog reports it (exit 1) and keeps epoch 4.
    let dir = env.path("bad");
    crate::support::write_segment(
        &dir,
        "__consumer_offsets-0",
        &crate::support::encoded(
            "out = batch(0, [(0, 0, coordinator_key(3, 'g'), consumer_group_metadata_value(4)), \
             (1, 1, coordinator_key(3, 'g'), i16(9) + i32(5) + tags())])",
        ),
    );
    let o = env.run(&["groups", "--format", "json", dir.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    let v = crate::support::document_rows(&o, "groups", "groups");
    assert_eq!(
        (v[0]["group"].as_str(), v[0]["epoch"].as_i64()),
        (Some("g"), Some(4))
    );
    let o = env.run(&["replay-offsets", dir.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(stderr_has(&o, "offset 1"), "{}", crate::support::stderr(&o));
}
