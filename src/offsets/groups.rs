//! Every group the offsets topic describes, whatever its protocol: classic
//! groups from GroupMetadataValue (and, for a group with committed offsets
//! only, the empty "simple" classic group Kafka creates for it), consumer (KIP-848), share (KIP-932) and
//! streams (KIP-1071) groups from their coordinator records, as the group
//! coordinator rebuilds them when it loads the partition
//! (`GroupMetadataManager.replay`), plus each share-partition's state from
//! `__share_group_state` (`ShareCoordinatorShard.replay`).
//!
//! States as Kafka computes them for a loaded group:
//! - classic (`GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`,
//!   `loadedMembers.isEmpty() ? EMPTY : STABLE`): Empty without
//!   members, else Stable;
//! - consumer and streams (`ConsumerGroup.maybeUpdateGroupState`,
//!   `StreamsGroup.maybeUpdateGroupState`): Empty without members;
//!   Assigning while the target assignment epoch is below the group epoch;
//!   Reconciling while a member is not reconciled to the target assignment
//!   epoch (`ModernGroupMember.isReconciledTo`: member state stable and
//!   member epoch equal to it); else Stable;
//! - share (`ShareGroup.maybeUpdateGroupState`): Empty without members,
//!   else Stable.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::BTreeMap;

use serde::Serialize;
use serde_json::Value;

use crate::error::Result;
use crate::format::{DecodeLimits, Entry};
use crate::log::walk::Step;
use crate::log::{DataDir, PartitionState, Policy};
use crate::offsets::records::{self, SHARE_GROUP_STATE_TOPIC};
use crate::offsets::Replay;

/// One member of a group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct MemberView {
    pub member_id: String,
    pub instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub rack: Option<String>,
    /// The member epoch (new protocols).
    pub member_epoch: Option<i32>,
    /// The member's state (`MemberState`: stable, unrevoked_partitions,
    /// unreleased_partitions, unknown), new protocols.
    pub member_state: Option<&'static str>,
    /// The member's server-side assignor (consumer groups).
    pub assignor: Option<String>,
    /// Its current assignment: topic (name when known, else the id) → partitions.
    pub assignment: Vec<(String, Vec<i32>)>,
}

/// One group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize)]
pub struct GroupView {
    pub group: String,
    /// classic, consumer, share or streams.
    pub kind: &'static str,
    pub state: &'static str,
    /// The generation (classic) or group epoch.
    pub epoch: Option<i32>,
    /// The target assignment epoch (new protocols).
    pub assignment_epoch: Option<i32>,
    /// Classic: protocol type and protocol (`consumer/range`); consumer: the
    /// server assignors in use; share: `simple`.
    pub protocol: Option<String>,
    /// When the state was recorded (ms): classic: currentStateTimestamp;
    /// new protocols: the latest timestamp of the group's live records.
    pub state_timestamp: Option<i64>,
    /// Where the group's last record sits: offsets partition and offset.
    pub log_partition: i32,
    pub log_offset: i64,
    pub members: Vec<MemberView>,
}

fn s(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn opt_s(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(String::from)
}

fn i(v: &Value, k: &str) -> Option<i32> {
    v.get(k).and_then(Value::as_i64).map(|x| x as i32)
}

/// `[{topicId, partitions}]` with ids resolved through `names`.
fn topic_partitions(
    v: Option<&Value>,
    names: &BTreeMap<String, String>,
) -> Vec<(String, Vec<i32>)> {
    let mut out: Vec<(String, Vec<i32>)> = v
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|tp| {
                    let id = s(tp, "topicId");
                    let name = names.get(&id).cloned().unwrap_or(id);
                    let ps = partition_numbers(tp);
                    (name, ps)
                })
                .collect()
        })
        .unwrap_or_default();
    out.sort();
    out
}

/// `MemberState` by id (group-coordinator `modern/MemberState.java`).
fn member_state_name(id: i32) -> &'static str {
    match id {
        0 => "stable",
        1 => "unrevoked_partitions",
        2 => "unreleased_partitions",
        _ => "unknown",
    }
}

/// Every group of `replay`, sorted by name; `names` maps topic ids to names.
pub fn groups(replay: &Replay, names: &BTreeMap<String, String>) -> Vec<GroupView> {
    let mut out: BTreeMap<String, GroupView> = BTreeMap::new();
    for (name, g) in &replay.groups {
        out.insert(
            name.clone(),
            GroupView {
                group: name.clone(),
                kind: "classic",
                state: if g.members.is_empty() {
                    "Empty"
                } else {
                    "Stable"
                },
                epoch: Some(g.generation),
                protocol: Some(match &g.protocol {
                    Some(p) => format!("{}/{p}", g.protocol_type),
                    None => g.protocol_type.clone(),
                })
                .filter(|p| !p.is_empty()),
                state_timestamp: g.current_state_timestamp,
                log_partition: -1,
                log_offset: -1,
                members: g
                    .members
                    .iter()
                    .map(|m| MemberView {
                        member_id: m.member_id.clone(),
                        instance_id: m.group_instance_id.clone(),
                        client_id: m.client_id.clone(),
                        client_host: m.client_host.clone(),
                        assignment: m.assignment.clone(),
                        ..MemberView::default()
                    })
                    .collect(),
                ..GroupView::default()
            },
        );
    }
    // New protocols: members by (group, member id), then the group records.
    let mut members: BTreeMap<(String, String), MemberView> = BTreeMap::new();
    for ((t, _), e) in &replay.coordinator {
        let (lp, off, r) = (&e.log_partition, &e.log_offset, &e.record);
        let (Some(k), Some((_, v))) = (&r.key, &r.value) else {
            continue;
        };
        let group = s(k, "groupId");
        let kind = match t {
            3..=8 | 16 => "consumer",
            9..=15 => "share",
            _ => "streams",
        };
        let g = out.entry(group.clone()).or_insert_with(|| GroupView {
            group: group.clone(),
            kind,
            state: "Empty",
            log_partition: *lp,
            log_offset: *off,
            ..GroupView::default()
        });
        if g.log_offset < *off {
            (g.log_partition, g.log_offset) = (*lp, *off);
        }
        g.state_timestamp = g.state_timestamp.max(Some(e.timestamp));
        match t {
            3 | 11 | 17 => g.epoch = i(v, "epoch"),
            6 | 12 | 20 => g.assignment_epoch = i(v, "assignmentEpoch"),
            5 | 10 | 19 | 8 | 14 | 22 => {
                let m = members
                    .entry((group.clone(), s(k, "memberId")))
                    .or_insert_with(|| MemberView {
                        member_id: s(k, "memberId"),
                        ..MemberView::default()
                    });
                match t {
                    5 | 10 | 19 => {
                        m.instance_id = opt_s(v, "instanceId");
                        m.client_id = s(v, "clientId");
                        m.client_host = s(v, "clientHost");
                        m.rack = opt_s(v, "rackId");
                        m.assignor = opt_s(v, "serverAssignor");
                    }
                    22 => {
                        m.member_epoch = i(v, "memberEpoch");
                        m.member_state = i(v, "state").map(member_state_name);
                        // Streams tasks: subtopology → partitions.
                        m.assignment = v
                            .get("activeTasks")
                            .and_then(Value::as_array)
                            .map(|a| {
                                a.iter()
                                    .map(|t| {
                                        let ps = partition_numbers(t);
                                        (format!("subtopology {}", s(t, "subtopologyId")), ps)
                                    })
                                    .collect()
                            })
                            .unwrap_or_default();
                    }
                    _ => {
                        m.member_epoch = i(v, "memberEpoch");
                        m.member_state = i(v, "state").map(member_state_name);
                        m.assignment = topic_partitions(v.get("assignedPartitions"), names);
                    }
                }
            }
            _ => {}
        }
    }
    for ((group, _), m) in members {
        if let Some(g) = out.get_mut(&group) {
            g.members.push(m);
        }
    }
    // A group with committed offsets and no group record is a "simple
    // consumer group": an empty classic group without a protocol type
    // (OffsetMetadataManager.replay creates it with getOrMaybeCreateClassicGroup).
    for group in replay.table.keys() {
        out.entry(group.clone()).or_insert_with(|| GroupView {
            group: group.clone(),
            kind: "classic",
            state: "Empty",
            log_partition: -1,
            log_offset: -1,
            ..GroupView::default()
        });
    }
    for g in out.values_mut().filter(|g| g.kind != "classic") {
        let mut assignors: Vec<String> = g
            .members
            .iter()
            .filter_map(|m| m.assignor.clone())
            .collect();
        assignors.sort();
        assignors.dedup();
        g.protocol = match g.kind {
            "share" => Some("simple".into()),
            _ if assignors.is_empty() => None,
            _ => Some(assignors.join(",")),
        };
        g.state = if g.members.is_empty() {
            "Empty"
        } else if g.kind == "share" {
            "Stable"
        } else if g.assignment_epoch.unwrap_or(-1) < g.epoch.unwrap_or(-1) {
            "Assigning"
        } else if g
            .members
            .iter()
            .any(|m| m.member_epoch != g.assignment_epoch)
        {
            "Reconciling"
        } else {
            "Stable"
        };
    }
    out.into_values().collect()
}

/// Topic id → name: from the KRaft metadata of any directory, then from the
/// partition.metadata files of the live partitions.
pub fn topic_names(dirs: &[DataDir]) -> BTreeMap<String, String> {
    let mut names = BTreeMap::new();
    for d in dirs {
        for p in d
            .partitions
            .iter()
            .filter(|p| p.state == PartitionState::Live)
        {
            if let Ok(Some(m)) = crate::log::meta::read_partition_metadata(
                &p.dir.join(crate::log::meta::PARTITION_METADATA),
            ) {
                names.insert(m.topic_id.to_string(), p.topic.clone());
            }
        }
    }
    for d in dirs {
        if let Some(folder) = crate::metadata::metadata_folder(&d.path) {
            if let Ok(r) = crate::metadata::replay(&folder, None) {
                for t in r.image.topics.values() {
                    names.insert(t.id.clone(), t.name.clone());
                }
            }
        }
    }
    names
}

/// A state batch of a share-partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StateBatch {
    pub first_offset: i64,
    pub last_offset: i64,
    pub delivery_state: &'static str,
    pub delivery_count: i16,
}

/// One share-partition's state (`ShareCoordinatorShard`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ShareState {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub state_epoch: i32,
    pub leader_epoch: i32,
    pub start_offset: i64,
    /// The snapshot's batches, then the later updates' batches (an update
    /// overrides what it overlaps, as `StateBatchUtil.combineStateBatches`).
    pub batches: Vec<StateBatch>,
    /// ShareUpdate records since the last ShareSnapshot.
    pub updates: u32,
}

fn batches(v: &Value) -> Vec<StateBatch> {
    v.get("stateBatches")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|b| StateBatch {
                    first_offset: b.get("firstOffset").and_then(Value::as_i64).unwrap_or(0),
                    last_offset: b.get("lastOffset").and_then(Value::as_i64).unwrap_or(0),
                    delivery_state: records::delivery_state_name(
                        b.get("deliveryState").and_then(Value::as_i64).unwrap_or(-1),
                    ),
                    delivery_count: b.get("deliveryCount").and_then(Value::as_i64).unwrap_or(0)
                        as i16,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Replay `__share_group_state` of every directory as
/// `ShareCoordinatorShard.handleShareSnapshot`/`handleShareUpdate` do: a
/// ShareSnapshot replaces a share-partition's state; a ShareUpdate merges
/// into it (`merge`: start offset and leader epoch unless -1, batches
/// combined by `PersisterStateBatchCombiner`, here: an update's batch
/// replaces the offsets it covers, batches below the start offset dropped),
/// or becomes the state when there is none. A tombstone deletes it.
pub fn share_states(dirs: &[DataDir], names: &BTreeMap<String, String>) -> Result<Vec<ShareState>> {
    let mut states: BTreeMap<(String, String, i32), ShareState> = BTreeMap::new();
    let mut scratch = Vec::new();
    for d in dirs {
        for p in d
            .partitions
            .iter()
            .filter(|p| p.state == PartitionState::Live && p.topic == SHARE_GROUP_STATE_TOPIC)
        {
            let mut walk = p.walk(Policy::VALID_ENTRIES);
            while let Some(step) = walk.next_step()? {
                let Step::Entry(w) = step else { continue };
                let Entry::V2(batch) = w.entry else { continue };
                if batch.header.is_control() {
                    continue;
                }
                let Ok(iter) = batch.records(&mut scratch, DecodeLimits::default()) else {
                    continue;
                };
                for r in iter.flatten() {
                    let Some(key) = r.key else { continue };
                    let rec = records::decode(records::SHARE_RECORDS, key, r.value, r.position);
                    let Some(k) = &rec.key else { continue };
                    let topic_id = s(k, "topicId");
                    let id = (
                        s(k, "groupId"),
                        topic_id.clone(),
                        i(k, "partition").unwrap_or(-1),
                    );
                    let Some((_, v)) = &rec.value else {
                        states.remove(&id);
                        continue;
                    };
                    if rec.error.is_some() {
                        continue;
                    }
                    if rec.record_type == 0 {
                        states.insert(
                            id.clone(),
                            ShareState {
                                group: id.0.clone(),
                                topic: names.get(&topic_id).cloned().unwrap_or(topic_id),
                                partition: id.2,
                                state_epoch: i(v, "stateEpoch").unwrap_or(0),
                                leader_epoch: i(v, "leaderEpoch").unwrap_or(0),
                                start_offset: v
                                    .get("startOffset")
                                    .and_then(Value::as_i64)
                                    .unwrap_or(0),
                                batches: batches(v),
                                updates: 0,
                            },
                        );
                    } else if !states.contains_key(&id) {
                        // An update with no state yet becomes the state
                        // (ShareGroupOffset.fromRecord(ShareUpdateValue): state epoch -1).
                        states.insert(
                            id.clone(),
                            ShareState {
                                group: id.0.clone(),
                                topic: names.get(&topic_id).cloned().unwrap_or(topic_id),
                                partition: id.2,
                                state_epoch: -1,
                                leader_epoch: i(v, "leaderEpoch").unwrap_or(-1),
                                start_offset: v
                                    .get("startOffset")
                                    .and_then(Value::as_i64)
                                    .unwrap_or(-1),
                                batches: batches(v),
                                updates: 1,
                            },
                        );
                    } else if let Some(st) = states.get_mut(&id) {
                        st.updates += 1;
                        if let Some(l) = i(v, "leaderEpoch").filter(|l| *l != -1) {
                            st.leader_epoch = l;
                        }
                        if let Some(so) = v
                            .get("startOffset")
                            .and_then(Value::as_i64)
                            .filter(|o| *o != -1)
                        {
                            st.start_offset = so;
                        }
                        for nb in batches(v) {
                            // Cut what the new batch covers out of the old ones.
                            let mut kept = Vec::new();
                            for b in st.batches.drain(..) {
                                if b.last_offset < nb.first_offset
                                    || b.first_offset > nb.last_offset
                                {
                                    kept.push(b);
                                    continue;
                                }
                                if b.first_offset < nb.first_offset {
                                    kept.push(StateBatch {
                                        last_offset: nb.first_offset - 1,
                                        ..b.clone()
                                    });
                                }
                                if b.last_offset > nb.last_offset {
                                    kept.push(StateBatch {
                                        first_offset: nb.last_offset + 1,
                                        ..b
                                    });
                                }
                            }
                            kept.push(nb);
                            st.batches = kept;
                        }
                        let start = st.start_offset;
                        st.batches.retain(|b| b.last_offset >= start);
                        st.batches.sort_by_key(|b| b.first_offset);
                    }
                }
            }
        }
    }
    Ok(states.into_values().collect())
}

/// The `partitions` array of a decoded topic-partitions entry.
fn partition_numbers(v: &Value) -> Vec<i32> {
    v.get("partitions")
        .and_then(Value::as_array)
        .map(|ps| {
            ps.iter()
                .filter_map(Value::as_i64)
                .filter_map(|p| i32::try_from(p).ok())
                .collect()
        })
        .unwrap_or_default()
}

/// Why `group` may not be changed offline while `replay` records live
/// members for it, if it does: a running consumer keeps its position in
/// memory and commits it, overwriting an offline reset or deletion. Kafka
/// refuses the same (`ConsumerGroupCommand.resetOffsets`: "Assignments can
/// only be reset if the group is inactive"; `validateDeleteGroup`:
/// NON_EMPTY_GROUP) unless the group is Empty or Dead.
pub fn live_members_refusal(replay: &Replay, group: &str, what: &str) -> Option<String> {
    let g = groups(replay, &BTreeMap::new())
        .into_iter()
        .find(|g| g.group == group && !g.members.is_empty())?;
    // Member ids come from the log: quoted and escaped.
    let ids: Vec<String> = g
        .members
        .iter()
        .map(|m| format!("{:?}", m.member_id))
        .collect();
    Some(format!(
        "group {group:?} ({} group, state {}) has {} member{} recorded in the offsets log ({}): a consumer \
         that is still running, or that rejoins when the brokers restart, keeps its position in memory and \
         commits it, overwriting the {what}. Kafka refuses this unless the group is Empty; stop every consumer \
         of the group first, or pass --force if they are known to be gone",
        g.kind,
        g.state,
        ids.len(),
        if ids.len() == 1 { "" } else { "s" },
        ids.join(", ")
    ))
}
