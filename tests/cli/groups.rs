//! `klog groups` and the coordinator records of Kafka 4.2 to 4.4: tagged
//! fields decoded by name, and streams group states as
//! `StreamsGroup.maybeUpdateGroupState` computes them.

use serde_json::Value;

use crate::support::{document_rows, encoded, write_segment, TestEnv};

const ORDERS: &str = "b'\\x05' * 16";

/// A streams group "wc" (encoder.py): metadata (epoch 3, validated
/// topology epoch `validated`, Python `None` for a 4.1 record without the
/// tag), topology at epoch 2, one member, target assignment epoch
/// `target`, the member's current assignment at `member_epoch`, stable.
fn streams(validated: &str, target: i32, member_epoch: i32) -> String {
    format!(
        "recs = [
  (coordinator_key(17, 'wc'), streams_group_metadata_value(3, 0, {validated}, [('num.standby.replicas', '0')], 2, -1)),
  (coordinator_key(23, 'wc'), streams_topology_value(2, [('0', ['orders'], [], [], [], [], [])])),
  (coordinator_key(19, 'wc', 'st-1'), streams_member_metadata_value(None, None, 'app', '/h', 1000, 2, 'p', None, [])),
  (coordinator_key(20, 'wc'), assignment_epoch_value({target}, 1700000000000)),
  (coordinator_key(22, 'wc', 'st-1'), streams_current_assignment_value({member_epoch}, 2, 1, [('0', [0], [3])])),
  (coordinator_key(3, 'cg'), consumer_group_metadata_value(1)),
  (coordinator_key(8, 'cg', 'm-1'), consumer_current_assignment_value(1, 0, 0, [({ORDERS}, [0, 1], [1, 1])], [])),
]
out = batch(0, [(i, i, k, v) for i, (k, v) in enumerate(recs)], first_timestamp=1700000000000)"
    )
}

fn state(env: &TestEnv, script: &str) -> String {
    write_segment(&env.path("data"), "__consumer_offsets-0", &encoded(script));
    let o = env.run(&["groups", "--format", "json", "data"], None);
    assert_eq!(o.status.code(), Some(0));
    let g = document_rows(&o, "groups", "groups");
    let wc = g.iter().find(|g| g["group"] == "wc").unwrap();
    wc["state"].as_str().unwrap().to_string()
}

#[test]
fn streams_groups_are_in_the_state_kafka_computes() {
    // StreamsGroup.maybeUpdateGroupState: NotReady unless the topology's epoch
    // is the validated one (-1 when the 4.2 tag is absent); then Assigning
    // while the group epoch is above the target assignment epoch, Reconciling
    // while a member is not stable at that epoch, else Stable.
    let env = TestEnv::new();
    assert_eq!(state(&env, &streams("2", 3, 3)), "Stable");
    assert_eq!(state(&env, &streams("None", 3, 3)), "NotReady");
    assert_eq!(state(&env, &streams("1", 3, 3)), "NotReady");
    assert_eq!(state(&env, &streams("2", 2, 2)), "Assigning");
    assert_eq!(state(&env, &streams("2", 3, 2)), "Reconciling");
}

/// A streams group "wc" with no StreamsGroupMetadata record (type 17): a
/// topology at epoch 0, one stable member at epoch 0 with its assignment,
/// target assignment epoch 0.
const STREAMS_WITHOUT_METADATA: &str = "recs = [
  (coordinator_key(23, 'wc'), streams_topology_value(0, [('0', ['orders'], [], [], [], [], [])])),
  (coordinator_key(19, 'wc', 'st-1'), streams_member_metadata_value(None, None, 'app', '/h', 1000, 0, 'p', None, [])),
  (coordinator_key(20, 'wc'), assignment_epoch_value(0)),
  (coordinator_key(22, 'wc', 'st-1'), streams_current_assignment_value(0, 0, 1, [('0', [0])])),
]
out = batch(0, [(i, i, k, v) for i, (k, v) in enumerate(recs)], first_timestamp=1700000000000)";

/// (state, state_from_4_4) of group wc in `klog groups --format json data`.
fn states(env: &TestEnv) -> (String, Value) {
    let o = env.run(&["groups", "--format", "json", "data"], None);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let g = document_rows(&o, "groups", "groups");
    let wc = g.iter().find(|g| g["group"] == "wc").unwrap();
    (
        wc["state"].as_str().unwrap().to_string(),
        wc["state_from_4_4"].clone(),
    )
}

/// Issue #48 E. Without a StreamsGroupMetadata record the validated
/// topology epoch is where `StreamsGroup`'s constructor starts it: a new
/// `TimelineInteger`, 0, in Kafka 4.2 and 4.3 (4.3.1's StreamsGroup.java,
/// javap of 4.2.0), and -1 in 4.4 (javap of 4.4.0: `iconst_m1`,
/// `TimelineInteger.set`). `maybeUpdateGroupState` then finds the
/// topology (epoch 0) validated in 4.2 and 4.3, so a reconciled member
/// makes the group Stable, and not in 4.4: NotReady. The release that
/// loads the group is the one that restarts; the data settles it only
/// through the cluster's metadata.version: from 4.4-IV1 (level 32), which
/// no 4.3 knows (4.3.1's MetadataVersion ends at IBP_4_4_IV0, 31, an
/// unstable level there), every broker runs 4.4 or later. Otherwise klog
/// shows 4.2 and 4.3's state and 4.4's beside it.
#[test]
fn a_streams_group_without_metadata_is_in_the_state_of_the_release_that_loads_it() {
    let env = TestEnv::new();
    write_segment(
        &env.path("data"),
        "__consumer_offsets-0",
        &encoded(STREAMS_WITHOUT_METADATA),
    );
    // No KRaft metadata: both.
    assert_eq!(
        states(&env),
        ("Stable".to_string(), Value::from("NotReady"))
    );
    let o = env.run(&["groups", "data"], None);
    let err = crate::support::stderr(&o);
    for needle in [
        "wc",
        "4.2 and 4.3",
        "Stable",
        "4.4",
        "NotReady",
        "StreamsGroupMetadata",
    ] {
        assert!(err.contains(needle), "{needle}: {err}");
    }
    // metadata.version 4.0-IV3 (fixtures/kraft, level 25): a 4.4 broker
    // may run at it, so still both.
    crate::support::copy_dir(
        &env.path("fixtures/kraft/__cluster_metadata-0"),
        &env.path("data/__cluster_metadata-0"),
    );
    assert_eq!(
        states(&env),
        ("Stable".to_string(), Value::from("NotReady"))
    );
    // metadata.version 4.4-IV2 (fixtures/kraft44, level 33): 4.4's state alone.
    std::fs::remove_dir_all(env.path("data/__cluster_metadata-0")).unwrap();
    crate::support::copy_dir(
        &env.path("fixtures/kraft44/__cluster_metadata-0"),
        &env.path("data/__cluster_metadata-0"),
    );
    assert_eq!(states(&env), ("NotReady".to_string(), Value::Null));
    let o = env.run(&["groups", "data"], None);
    assert!(
        !crate::support::stderr(&o).contains("StreamsGroupMetadata"),
        "{}",
        crate::support::stderr(&o)
    );
    // With its metadata record every release agrees: no second state.
    write_segment(
        &env.path("data"),
        "__consumer_offsets-0",
        &encoded(&streams("2", 3, 3)),
    );
    std::fs::remove_dir_all(env.path("data/__cluster_metadata-0")).unwrap();
    assert_eq!(states(&env), ("Stable".to_string(), Value::Null));
}

#[test]
fn tagged_fields_of_4_2_to_4_4_are_decoded_by_name() {
    let env = TestEnv::new();
    write_segment(
        &env.path("data"),
        "__consumer_offsets-0",
        &encoded(&streams("2", 3, 3)),
    );
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "data/__consumer_offsets-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    let data: Vec<Value> = crate::support::dump_batches(&o)[0]["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["decoded"]["value"]["data"].clone())
        .collect();
    let meta = &data[0];
    assert_eq!(meta["validatedTopologyEpoch"], 2, "{meta}");
    assert_eq!(
        meta["lastAssignmentConfigs"],
        serde_json::json!([{"key": "num.standby.replicas", "value": "0"}])
    );
    assert_eq!(meta["storedDescriptionTopologyEpoch"], 2);
    assert_eq!(meta["failedDescriptionTopologyEpoch"], -1);
    assert!(meta.get("unknownTaggedFields").is_none(), "{meta}");
    assert_eq!(data[3]["assignmentTimestamp"], 1_700_000_000_000i64);
    assert_eq!(
        data[4]["activeTasks"][0]["assignmentEpochs"],
        serde_json::json!([3])
    );
    assert_eq!(
        data[6]["assignedPartitions"][0]["assignmentEpochs"],
        serde_json::json!([1, 1])
    );
}

/// `groups --format json` over a data directory whose share-group state
/// partition holds the batch `script` encodes (and an empty offsets topic).
fn groups_of_share_state(env: &TestEnv, script: &str) -> std::process::Output {
    write_segment(&env.path("data"), "__share_group_state-0", &encoded(script));
    write_segment(
        &env.path("data"),
        "__consumer_offsets-0",
        &encoded("out = b''"),
    );
    env.run(&["groups", "--format", "json", "data"], None)
}

#[test]
fn share_state_keeps_the_delivery_complete_count() {
    // ShareCoordinatorShard.merge: a ShareUpdate's DeliveryCompleteCount
    // replaces the state's; absent (a 4.1 record) it is -1.
    let env = TestEnv::new();
    let script = format!(
        "recs = [
  (coordinator_key(0, 'sg', {ORDERS}, 0), share_snapshot_value(0, 1, 0, 0, 1, 1, [(0, 9, 0, 1)], 4)),
  (coordinator_key(1, 'sg', {ORDERS}, 0), share_update_value(0, -1, -1, [(3, 5, 2, 1)], 7)),
  (coordinator_key(0, 'sg', {ORDERS}, 1), share_snapshot_value(0, 1, 0, 0, 1, 1, [])),
]
out = batch(0, [(i, i, k, v) for i, (k, v) in enumerate(recs)])"
    );
    let o = groups_of_share_state(&env, &script);
    assert_eq!(o.status.code(), Some(0));
    let s = document_rows(&o, "groups", "share_partitions");
    let counts: Vec<i64> = s
        .iter()
        .map(|p| p["delivery_complete_count"].as_i64().unwrap())
        .collect();
    assert_eq!(counts, [7, -1]);
}

/// A ShareSnapshotKey whose groupId holds malformed UTF-8: Kafka's
/// generated reader (`Readable.readString`, `new String(bytes, UTF_8)`)
/// reads it with U+FFFD and the share coordinator loads the state; klog
/// does so too and says it on stderr, a warning (exit 0).
#[test]
fn a_share_state_read_as_kafka_reads_it_is_loaded_with_a_warning() {
    let env = TestEnv::new();
    let script = format!(
        "key = i16(0) + i16(3) + b's\\xffg' + {ORDERS} + i32(0)
out = batch(0, [(0, 0, key, share_snapshot_value(0, 1, 0, 0, 1, 1, [(0, 9, 0, 1)], 4))])"
    );
    let o = groups_of_share_state(&env, &script);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let s = document_rows(&o, "groups", "share_partitions");
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["group"], "s\u{FFFD}g");
    let err = crate::support::stderr(&o);
    assert!(
        err.contains("warning: ")
            && err.contains("offset 0: ")
            && err.contains("U+FFFD; loaded as the share coordinator reads it"),
        "{err}"
    );
}

#[test]
fn a_classic_group_without_a_state_time_expires_offsets_from_their_commit() {
    // GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue):
    // `currentStateTimestamp() == -1 ? Optional.empty() : ...`; v0 and v1
    // have no such field (its default is -1). ClassicGroup.offsetExpirationCondition:
    // an Empty group with a protocol type counts from
    // `currentStateTimestamp.orElse(commitTimestampMs)`, and
    // OffsetExpirationConditionImpl expires when now - base >= retention.
    // Three Empty consumer groups commit orders-0 at T: `minus` (v2, -1),
    // `old` (v1) and `set` (v2, T + 30 min). With a 60-minute retention
    // minus and old expire at T + 60 min, set at T + 90 min.
    const T: i64 = 1_700_000_000_000;
    const MIN: i64 = 60_000;
    let env = TestEnv::new();
    let script = format!(
        "recs = [
  (coordinator_key(2, 'minus'), group_metadata_value('consumer', 1, None, None, version=2, current_state_timestamp=-1)),
  (coordinator_key(2, 'old'), group_metadata_value('consumer', 1, None, None, version=1)),
  (coordinator_key(2, 'set'), group_metadata_value('consumer', 1, None, None, version=2, current_state_timestamp={T} + 30 * 60000)),
] + [(offset_commit_key(g, 'orders', 0), offset_commit_value(4, {T})) for g in ('minus', 'old', 'set')]
out = batch(0, [(i, 0, k, v) for i, (k, v) in enumerate(recs)], first_timestamp={T})"
    );
    write_segment(&env.path("data"), "__consumer_offsets-0", &encoded(&script));
    write_segment(
        &env.path("data"),
        "orders-0",
        &encoded("out = batch(0, [(i, i, None, b'x') for i in range(10)])"),
    );

    // The state time: absent for minus and old, null in JSON.
    let o = env.run(&["groups", "--format", "json", "data"], None);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let times: Vec<(String, Value)> = document_rows(&o, "groups", "groups")
        .iter()
        .map(|g| {
            (
                g["group"].as_str().unwrap().into(),
                g["state_timestamp_ms"].clone(),
            )
        })
        .collect();
    assert_eq!(
        times,
        [
            ("minus".into(), Value::Null),
            ("old".into(), Value::Null),
            ("set".into(), Value::from(T + 30 * MIN)),
        ]
    );
    // In text, `-` in STATE-TIMESTAMP (the last column); never the Unix epoch's eve.
    let o = env.run(&["groups", "data"], None);
    let text = crate::support::stdout(&o);
    assert!(!text.contains("1969"), "{text}");
    assert!(
        text.lines().next().unwrap().ends_with("STATE-TIMESTAMP"),
        "{text}"
    );
    for g in ["minus", "old"] {
        let line = text.lines().find(|l| l.starts_with(g)).unwrap();
        assert_eq!(line.split_whitespace().last(), Some("-"), "{line}");
    }

    // replay-offsets, lag and report judge expiry alike.
    let statuses = |now: i64| -> [Vec<String>; 3] {
        let now = now.to_string();
        let judged = ["--now-ms", &now, "--offsets-retention-minutes", "60"];
        let rows = |cmd: &str, field: &str| -> Vec<String> {
            let o = env.run(
                &[&[cmd, "--format", "json"][..], &judged, &["data"]].concat(),
                None,
            );
            document_rows(&o, cmd, field)
                .iter()
                .map(|r| r["status"].as_str().unwrap().to_string())
                .collect()
        };
        let page = env.path("r.html");
        let o = env.run(
            &[
                &["report", "-o", page.to_str().unwrap()][..],
                &judged,
                &["data"],
            ]
            .concat(),
            None,
        );
        assert!(matches!(o.status.code(), Some(0 | 1)), "{o:?}");
        let html = std::fs::read_to_string(&page).unwrap();
        let report = ["minus", "old", "set"]
            .iter()
            .flat_map(|g| crate::support::report_lag_statuses(&html, g))
            .collect();
        [
            rows("replay-offsets", "offsets"),
            rows("lag", "partitions"),
            report,
        ]
    };
    let all = |s: [&str; 3]| -> [Vec<String>; 3] { [0; 3].map(|_| s.map(String::from).to_vec()) };
    assert_eq!(statuses(T + 60 * MIN - 1), all(["ok", "ok", "ok"]));
    assert_eq!(statuses(T + 60 * MIN), all(["expired", "expired", "ok"]));
    assert_eq!(
        statuses(T + 90 * MIN - 1),
        all(["expired", "expired", "ok"])
    );
    assert_eq!(
        statuses(T + 90 * MIN),
        all(["expired", "expired", "expired"])
    );
}

/// One of a JBOD broker's log directories: fixtures/kraft's metadata
/// places node 1's `__consumer_offsets-1`, `-2` and `orders-1` in log
/// directory `bG9nLWRpci11dWlkLW9uZQ` (PartitionRecord.directories,
/// KIP-858), with no folder of them here. Given as a directory whose
/// meta.properties has another directory.id, the groups, lag and replayed
/// offsets say that the other directory holds them; given as that very
/// directory, they say nothing of the kind (the folders are simply absent).
#[test]
fn the_log_directory_of_the_same_broker_that_was_not_given_is_named() {
    let env = TestEnv::new();
    let meta = env.path("fixtures/kraft/meta.properties");
    let text = std::fs::read_to_string(&meta).unwrap();
    for cmd in ["groups", "lag", "replay-offsets"] {
        let o = env.run(&[cmd, "fixtures/kraft"], None);
        assert!(
            !crate::support::stderr(&o).contains("which was not given"),
            "{cmd}: {}",
            crate::support::stderr(&o)
        );
    }
    std::fs::write(
        &meta,
        text.replace(
            "directory.id=bG9nLWRpci11dWlkLW9uZQ",
            "directory.id=b3RoZXItbG9nLWRpci0xMg",
        ),
    )
    .unwrap();
    for cmd in ["groups", "lag", "replay-offsets"] {
        let o = env.run(&[cmd, "fixtures/kraft"], None);
        let err = crate::support::stderr(&o);
        let line = err
            .lines()
            .find(|l| l.contains("which was not given"))
            .unwrap_or_else(|| panic!("{cmd}: {err}"));
        assert!(
            line.contains("node 1 in its log directory bG9nLWRpci11dWlkLW9uZQ"),
            "{line}"
        );
        assert!(
            line.contains("__consumer_offsets-1, __consumer_offsets-2, orders-1;"),
            "{line}"
        );
    }
}
