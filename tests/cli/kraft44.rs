//! The metadata log of a Kafka 4.4 cluster (fixtures/kraft44) and one
//! written by a Kafka newer than klog (fixtures/kraft-newer), both written
//! by fixtures/kraft44.py; and metadata logs assembled here with
//! fixtures/encoder.py. Expected values come from those scripts'
//! definitions and from the Kafka rule each test names.

use serde_json::{json, Value};

use crate::kraft::{partition, uuid};
use crate::support::{document, encoded, findings, stderr, stdout, write_segment, TestEnv};

/// `DirectoryId.MIGRATING` (Uuid 0, 0).
const MIGRATING: &str = "AAAAAAAAAAAAAAAAAAAAAA";

/// `klog metadata --format json DIR ARGS…`, its exit code asserted.
fn metadata(env: &TestEnv, dir: &str, extra: &[&str], code: i32) -> Value {
    let mut args = vec!["metadata", "--format", "json", dir];
    args.extend_from_slice(extra);
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(code), "{}", stderr(&o));
    document(&o, "metadata")
}

fn finding(kind: &str, severity: &str, offset: i64) -> (String, String, i64) {
    (kind.to_string(), severity.to_string(), offset)
}

fn topic_names(m: &Value) -> Vec<String> {
    m["topics"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn a_kafka_4_4_metadata_log_replays_as_kafka_loads_it() {
    let env = TestEnv::new();
    let m = metadata(&env, "fixtures/kraft44", &[], 0);
    // Brokers 1-3 registered with RegisterBrokerRecord v4 (epochs 10-12),
    // unfenced by BrokerRegistrationChangeRecord v3 (fenced -1) and
    // UnfenceBrokerRecord; CordonedLogDirs: [] for broker 1, [D2] set by
    // the change of broker 2, never sent (null) for broker 3.
    let brokers = m["brokers"].as_array().unwrap();
    assert_eq!(brokers.len(), 3);
    let d2 = uuid(b"log-dir-uuid-n02");
    for (b, (id, epoch, cordoned)) in brokers.iter().zip([
        (1, 10, json!([])),
        (2, 11, json!([d2])),
        (3, 12, Value::Null),
    ]) {
        assert_eq!((&b["id"], &b["epoch"]), (&json!(id), &json!(epoch)));
        assert_eq!(b["fenced"], false, "broker {id}");
        assert_eq!(b["cordoned_log_dirs"], cordoned, "broker {id}");
    }
    // Controllers 1-3 registered, 3 removed by UnregisterControllerRecord.
    let controllers: Vec<_> = m["controllers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| c["id"].as_i64().unwrap())
        .collect();
    assert_eq!(controllers, [1, 2]);
    // kraft.version's FeatureLevelRecord is not kept (FeaturesDelta, KAFKA-18979).
    assert_eq!(m["features"], json!({"metadata.version": 33}));
    // The committed transaction's topic is there; the aborted one's and the
    // still open one's are not.
    assert_eq!(topic_names(&m), ["big", "legacy"]);
    let big1 = partition(&m, "big", 1);
    assert_eq!(big1["replicas"], json!([2, 3]));
    assert_eq!(big1["directories"], json!([d2, uuid(b"log-dir-uuid-n03")]));
    // legacy-0: PartitionRecord v0 has no directories (MIGRATING per
    // replica); the change to three replicas without directories gives
    // three MIGRATING (PartitionRegistration.merge, defaultToMigrating).
    let legacy = partition(&m, "legacy", 0);
    assert_eq!(legacy["replicas"], json!([1, 2, 3]));
    assert_eq!(
        legacy["directories"],
        json!([MIGRATING, MIGRATING, MIGRATING])
    );
    assert_eq!(legacy["partition_epoch"], 1);
    // The transactions are notes: Kafka's loader does the same on every
    // healthy cluster whose controller failed over.
    assert_eq!(
        findings(&m),
        [
            finding("metadata_transaction_aborted", "note", 19),
            finding("metadata_transaction_open", "note", 24),
        ]
    );
    assert_eq!(m["incomplete"], json!([]));
    assert_eq!(m["not_applied"], json!([]));
    // Records applied: the transaction records counted, "aborted" and
    // "pending" not.
    assert_eq!(m["record_counts"]["TopicRecord"], 2);
    assert_eq!(m["record_counts"]["BeginTransactionRecord"], 3);

    let o = env.run(&["metadata", "fixtures/kraft44"], None);
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(text.contains("CORDONED"), "{text}");
    assert!(!text.contains("incomplete"), "{text}");
}

#[test]
fn the_image_inside_a_transaction_has_none_of_it() {
    let env = TestEnv::new();
    // Before the EndTransactionRecord at 16: big is not published yet.
    let m = metadata(&env, "fixtures/kraft44", &["--as-of", "offset:16"], 0);
    assert_eq!(topic_names(&m), Vec::<String>::new());
    assert_eq!(
        findings(&m),
        [finding("metadata_transaction_open", "note", 12)]
    );
    let m = metadata(&env, "fixtures/kraft44", &["--as-of", "offset:17"], 0);
    assert_eq!(topic_names(&m), ["big"]);
    assert_eq!(findings(&m), []);
}

#[test]
fn a_log_newer_than_klog_is_read_as_kafka_would_and_marked_incomplete() {
    let env = TestEnv::new();
    let m = metadata(&env, "fixtures/kraft-newer", &[], 1);
    // Versions newer than klog's newest are read with the newest layout,
    // as Kafka's generated read does (warnings): TopicRecord v1 and
    // PartitionRecord v3. RegisterBrokerRecord v5 holds endpoints, and the
    // nested BrokerEndpoint's generated read refuses any version above 4
    // (UnsupportedVersionException "Can't read version 5 of BrokerEndpoint",
    // checked on Kafka 4.4.0's class): Kafka's loader fails on it, an error,
    // not applied. The unknown apiKey 30 is an error too
    // (MetadataRecordType.fromId throws).
    assert_eq!(
        findings(&m),
        [
            finding("unknown_version", "error", 1),
            finding("newer_metadata_record", "warning", 2),
            finding("newer_metadata_record", "warning", 3),
            finding("unknown_metadata_record", "error", 4),
        ]
    );
    assert_eq!(m["incomplete"], json!(["all"]));
    let not_applied: Vec<&str> = m["not_applied"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["record"].as_str().unwrap())
        .collect();
    assert_eq!(not_applied, ["RegisterBrokerRecord", "unknown(30)"]);
    assert_eq!(m["brokers"], json!([]));
    assert_eq!(topic_names(&m), ["later", "news"]);
    assert_eq!(partition(&m, "news", 0)["replicas"], json!([1]));
    let detail = m["findings"][0]["detail"].as_str().unwrap();
    assert!(
        detail.contains("Can't read version 5 of BrokerEndpoint"),
        "{detail}"
    );
    let detail = m["findings"][1]["detail"].as_str().unwrap();
    assert!(
        detail.contains("TopicRecord v1") && detail.contains("v0, the newest klog knows"),
        "{detail}"
    );

    // Before the unknown record: only the parts the newer records touch.
    // (The refused RegisterBrokerRecord at 1 makes it exit 1.)
    let m = metadata(&env, "fixtures/kraft-newer", &["--as-of", "offset:4"], 1);
    assert_eq!(m["incomplete"], json!(["brokers", "topics"]));

    // Text: an "incomplete" line and a mark over every table it touches.
    let o = env.run(&["metadata", "fixtures/kraft-newer"], None);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(text.contains("incomplete:   all"), "{text}");
    for t in ["brokers", "controllers", "topics"] {
        assert!(
            text.contains(&format!("{t} (incomplete: see the findings)")),
            "{t}: {text}"
        );
    }
    assert!(stderr(&o).contains("error unknown_metadata_record apiKey 30"));
}

#[test]
fn info_summary_and_cluster_say_the_image_is_incomplete() {
    let env = TestEnv::new();
    let o = env.run(&["info", "fixtures/kraft-newer"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("2 topics, 0 brokers (incomplete: all; see the findings)"),
        "{}",
        stdout(&o)
    );
    assert!(stderr(&o).contains("unknown_metadata_record"));
    let o = env.run(&["info", "--format", "json", "fixtures/kraft-newer"], None);
    let info = document(&o, "info");
    assert_eq!(
        info["directories"][0]["metadata"]["incomplete"],
        json!(["all"])
    );

    // A healthy 4.4 log: complete, the transaction notes only.
    let o = env.run(&["info", "fixtures/kraft44"], None);
    assert!(!stdout(&o).contains("incomplete"), "{}", stdout(&o));

    let o = env.run(
        &["summary", "--format", "json", "fixtures/kraft-newer"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let summary = document(&o, "summary");
    assert_eq!(
        summary["log_dirs"][0]["metadata"]["incomplete"],
        json!(["all"])
    );
    assert!(
        summary["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "unknown_metadata_record" && f["offset"] == 4),
        "{summary}"
    );
    let file = env.path("node-1.json");
    std::fs::write(&file, &o.stdout).unwrap();
    let o = env.run(&["cluster", file.to_str().unwrap()], None);
    assert!(
        stderr(&o).contains("metadata from node 1 (next offset 6; incomplete: all")
            || stdout(&o).contains("metadata from node 1 (next offset 6; incomplete: all"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
}

/// A metadata folder in `env` named `name` whose log is the records
/// `values` (Python expressions over encoder.py, one per record) in one
/// batch each, from offset 0.
fn metadata_log(env: &TestEnv, name: &str, values: &[&str]) -> String {
    let mut script = String::from("out = b''\n");
    for (i, v) in values.iter().enumerate() {
        script.push_str(&format!(
            "out += batch({i}, [(0, 0, None, {v})], first_timestamp=1)\n"
        ));
    }
    let dir = env.path(name);
    write_segment(&dir, "__cluster_metadata-0", &encoded(&script));
    dir.display().to_string()
}

const MV: &str = "feature_level_record('metadata.version', 33)";
const TOPIC: &str = "topic_record('t', b'topic-t-id-00001')";
const P0: &str = "partition_record(0, b'topic-t-id-00001', [1, 2], [1, 2], 1, 0, 0, [b'dir-one-uuid-001', b'dir-two-uuid-002'])";
const BROKER: &str =
    "register_broker_record(1, b'incarnation-n-01', 10, [('PLAINTEXT', 'h', 9092, 0)], [], None, True, log_dirs=[b'dir-one-uuid-001'])";

#[test]
fn transaction_records_out_of_place_are_errors() {
    let env = TestEnv::new();
    // MetadataBatchLoader.replay throws on an End or Abort with no
    // transaction open and on a Begin inside one; the record is ignored.
    let dir = metadata_log(
        &env,
        "txn",
        &[
            MV,
            "end_transaction_record()",
            "abort_transaction_record(None)",
            "begin_transaction_record('a')",
            TOPIC,
            "begin_transaction_record('b')",
            "end_transaction_record()",
        ],
    );
    let m = metadata(&env, &dir, &[], 1);
    assert_eq!(
        findings(&m),
        [
            finding("metadata_replay_rejected", "error", 1),
            finding("metadata_replay_rejected", "error", 2),
            finding("metadata_replay_rejected", "error", 5),
        ]
    );
    // The Begin at 5 is ignored: the End at 6 ends the one begun at 3.
    assert_eq!(topic_names(&m), ["t"]);
}

#[test]
fn changes_kafka_refuses_are_errors_and_not_applied() {
    let env = TestEnv::new();
    let dir = metadata_log(
        &env,
        "refused",
        &[
            MV,
            BROKER,
            TOPIC,
            P0,
            // ClusterDelta.getBrokerOrThrow: epoch 9 is not the registered 10.
            "unfence_broker_record(1, 9)",
            // BrokerRegistrationFencingChange.fromValue(2) is empty: throws.
            "broker_registration_change_record(1, 10, fenced=2)",
            // TopicDelta.replay: no partition 5.
            "partition_change_record(5, b'topic-t-id-00001', isr=[1])",
            // Three replicas, the two old directories kept (not MIGRATING):
            // the PartitionRegistration constructor throws.
            "partition_change_record(0, b'topic-t-id-00001', replicas=[1, 2, 3])",
            // MetadataVersion.fromFeatureLevel(99) throws.
            "feature_level_record('metadata.version', 99)",
        ],
    );
    let m = metadata(&env, &dir, &[], 1);
    let rejected: Vec<_> = (4..=8)
        .map(|o| finding("metadata_replay_rejected", "error", o))
        .collect();
    assert_eq!(findings(&m), rejected);
    // None applied: the broker stays fenced, the partition as it was.
    assert_eq!(m["brokers"][0]["fenced"], true);
    let p = partition(&m, "t", 0);
    assert_eq!(
        (&p["replicas"], &p["partition_epoch"]),
        (&json!([1, 2]), &json!(0))
    );
    assert_eq!(m["features"]["metadata.version"], 33);
    assert_eq!(m["not_applied"].as_array().unwrap().len(), 5);
    // An unknown metadata.version means a newer Kafka: the image is incomplete.
    assert_eq!(m["incomplete"], json!(["all"]));
}

#[test]
fn a_snapshot_holds_no_transaction_records() {
    let env = TestEnv::new();
    let dir = metadata_log(&env, "snap", &[MV]);
    // MetadataLoader.handleLoadSnapshot replays a snapshot's records into
    // MetadataDelta.replay, which has no case for transaction records.
    let snapshot = encoded(
        "out = batch(0, [(0, 0, control_key(3), snapshot_header_value(1))], first_timestamp=1, attributes=CONTROL)\n\
         out += batch(1, [(0, 0, None, begin_transaction_record('x')), (1, 0, None, feature_level_record('metadata.version', 33))], first_timestamp=1)\n\
         out += batch(3, [(0, 0, control_key(4), snapshot_footer_value())], first_timestamp=1, attributes=CONTROL)\n",
    );
    std::fs::write(
        std::path::Path::new(&dir)
            .join("__cluster_metadata-0")
            .join("00000000000000000001-0000000001.checkpoint"),
        snapshot,
    )
    .unwrap();
    let m = metadata(&env, &dir, &[], 1);
    assert_eq!(
        findings(&m),
        [finding("metadata_replay_rejected", "error", 1)]
    );
    assert_eq!(m["features"]["metadata.version"], 33);
}
