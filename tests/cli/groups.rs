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
    write_segment(
        &env.path("data"),
        "__share_group_state-0",
        &encoded(&script),
    );
    write_segment(
        &env.path("data"),
        "__consumer_offsets-0",
        &encoded("out = b''"),
    );
    let o = env.run(&["groups", "--format", "json", "data"], None);
    assert_eq!(o.status.code(), Some(0));
    let s = document_rows(&o, "groups", "share_partitions");
    let counts: Vec<i64> = s
        .iter()
        .map(|p| p["delivery_complete_count"].as_i64().unwrap())
        .collect();
    assert_eq!(counts, [7, -1]);
}
