//! Every group the offsets topic describes, whatever its protocol: classic
//! groups from GroupMetadataValue (and, for a group with committed offsets
//! only, the empty "simple" classic group Kafka creates for it), consumer (KIP-848), share (KIP-932) and
//! streams (KIP-1071) groups from their coordinator records, as the group
//! coordinator rebuilds them when it loads the partition
//! (`GroupMetadataManager.replay`). Share-partition state is in
//! [`crate::offsets::share`].
//!
//! States as Kafka computes them for a loaded group:
//! - classic (`GroupMetadataManager.replay(GroupMetadataKey, GroupMetadataValue)`,
//!   `loadedMembers.isEmpty() ? EMPTY : STABLE`): Empty without
//!   members, else Stable;
//! - consumer (`ConsumerGroup.maybeUpdateGroupState`): Empty without
//!   members; Assigning while the target assignment epoch is below the
//!   group epoch; Reconciling while a member is not reconciled to the
//!   target assignment epoch (`ModernGroupMember.isReconciledTo`: member
//!   state stable and member epoch equal to it); else Stable;
//! - streams (`StreamsGroup.maybeUpdateGroupState`): Empty without members;
//!   NotReady without a topology, or while the topology's epoch is not the
//!   group's validated topology epoch (StreamsGroupMetadataValue's tagged
//!   ValidatedTopologyEpoch, Kafka 4.2+; -1, its default, when absent);
//!   else Assigning, Reconciling and Stable by the consumer rule (a member
//!   is reconciled when its state is stable and its member epoch is the
//!   target assignment epoch, `StreamsGroupMember.isReconciledTo`). A
//!   group with no metadata record keeps the epoch `StreamsGroup`'s
//!   constructor starts with, which depends on the release: a new
//!   `TimelineInteger`, 0, in 4.2 and 4.3, and -1 from 4.4 (its
//!   constructor sets it). The release is the one whose coordinator loads
//!   the partition, the broker that restarts, which the offsets log does
//!   not name: its records carry no version or field only 4.4 writes but
//!   the metadata record that is missing (every streams record is v0).
//!   So [`GroupView::state`] is 4.2 and 4.3's and
//!   [`GroupView::state_from_4_4`] 4.4's when they differ, until
//!   [`settle_release`] finds the cluster's metadata.version at 4.4-IV1 or
//!   later, which only 4.4 and later brokers run at: then 4.4's alone;
//! - share (`ShareGroup.maybeUpdateGroupState`): Empty without members,
//!   else Stable.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use crate::log::{DataDir, PartitionState};
use crate::offsets::replay::CoordinatorEntry;
use crate::offsets::Replay;

/// One member of a group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
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
    /// Its current assignment: topic (name when known, else the id) →
    /// partitions; for a streams member, its active tasks' topics.
    pub assignment: Vec<(String, Vec<i32>)>,
    /// A streams member's active tasks: subtopology → partitions.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub active_tasks: Vec<(String, Vec<i32>)>,
}

/// One group.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct GroupView {
    pub group: String,
    /// classic, consumer, share or streams.
    #[serde(rename = "type")]
    pub kind: &'static str,
    pub state: &'static str,
    /// The generation (classic) or group epoch.
    pub epoch: Option<i32>,
    /// The target assignment epoch (new protocols).
    pub assignment_epoch: Option<i32>,
    /// The state Kafka 4.4 and later compute when it is not `state`, which
    /// is then 4.2 and 4.3's, and the data does not say which release
    /// loads the group: a streams group without a StreamsGroupMetadata
    /// record (see the module docs); null otherwise.
    pub state_from_4_4: Option<&'static str>,
    /// Classic: protocol type and protocol (`consumer/range`); consumer: the
    /// server assignors in use; share: `simple`.
    pub protocol: Option<String>,
    /// When the state was recorded (ms): classic: currentStateTimestamp
    /// (none before GroupMetadataValue v2, or when -1);
    /// new protocols: the latest timestamp of the group's live records.
    #[serde(rename = "state_timestamp_ms")]
    pub state_timestamp: Option<i64>,
    /// Where the group's last record sits: offsets partition and offset.
    pub log_partition: i32,
    pub log_offset: i64,
    pub members: Vec<MemberView>,
    /// A streams group's topology epoch (StreamsGroupTopologyValue).
    #[serde(skip)]
    pub topology_epoch: Option<i32>,
    /// A streams group's validated topology epoch (see the module docs).
    #[serde(skip)]
    pub validated_topology_epoch: Option<i32>,
    /// The topics whose offsets do not expire while the group holds them
    /// (`isSubscribedToTopic`): a consumer group's members' subscribed
    /// topics and the topics its regular expressions resolved to, a
    /// non-empty streams group's topology source topics, a classic
    /// `consumer` group's members' subscriptions; `None` when Kafka does not
    /// know them (a classic group whose subscriptions do not decode).
    #[serde(skip)]
    pub subscribed_topics: Option<BTreeSet<String>>,
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

/// `MemberState` by value (group-coordinator `modern/MemberState.java`:
/// STABLE 0, UNREVOKED_PARTITIONS 1, UNRELEASED_PARTITIONS 2, UNKNOWN 127).
fn member_state_name(id: i32) -> &'static str {
    match id {
        0 => "stable",
        1 => "unrevoked_partitions",
        2 => "unreleased_partitions",
        _ => "unknown",
    }
}

/// A streams member's `MemberState` by value (`streams/MemberState.java`:
/// STABLE 1, UNREVOKED_TASKS 2, UNRELEASED_TASKS 3, UNKNOWN 127).
fn streams_member_state_name(id: i32) -> &'static str {
    match id {
        1 => "stable",
        2 => "unrevoked_tasks",
        3 => "unreleased_tasks",
        _ => "unknown",
    }
}

/// The group coordinator that loads the offsets partitions, which decides
/// the groups an offset commit alone makes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Loader {
    /// Kafka 4 (`GroupCoordinatorService`): `OffsetMetadataManager.replay`
    /// makes a simple classic group of every offset commit value,
    /// transactional or not, until a GroupMetadata tombstone.
    #[default]
    Service,
    /// Kafka 3 in ZooKeeper mode (the Scala `GroupMetadataManager`):
    /// `doLoadGroupsAndOffsets` makes an empty group of each group left with
    /// committed offsets, or with transactional offsets still pending, once
    /// the whole partition is read (an aborted commit or tombstoned offsets
    /// leave none).
    ZooKeeper,
}

impl Loader {
    /// ZooKeeper when every directory's `meta.properties` is version 0
    /// (what a broker in ZooKeeper mode writes; only 3.x brokers run in that
    /// mode, with the Scala coordinator), else the Kafka 4 coordinator.
    pub fn of(dirs: &[DataDir]) -> Loader {
        let zk = |d: &DataDir| {
            crate::log::meta::read_meta_properties(&d.path.join(crate::log::meta::META_PROPERTIES))
                .ok()
                .flatten()
                .is_some_and(|m| m.version == 0)
        };
        if !dirs.is_empty() && dirs.iter().all(zk) {
            Loader::ZooKeeper
        } else {
            Loader::Service
        }
    }
}

/// Every group of `replay`, sorted by name; `names` maps topic ids to names.
pub fn groups(replay: &Replay, names: &BTreeMap<String, String>, loader: Loader) -> Vec<GroupView> {
    let mut out: BTreeMap<String, GroupView> = BTreeMap::new();
    for (name, g) in &replay.groups {
        out.insert(name.clone(), classic_view(name, g));
    }
    // New protocols: members by (group, member id), then the group records.
    let mut modern = ModernRecords::default();
    for ((t, _), e) in &replay.coordinator {
        modern.apply(&mut out, *t, e, names);
    }
    for ((group, _), mut m) in modern.members {
        if let Some(g) = out.get_mut(&group) {
            if g.kind == "streams" {
                m.assignment = task_topics(&m.active_tasks, modern.topologies.get(&group));
            }
            g.members.push(m);
        }
    }
    add_simple_groups(&mut out, replay, loader);
    for g in out.values_mut().filter(|g| g.kind == "streams") {
        // StreamsGroup.isSubscribedToTopic: a non-empty group's topology source topics.
        g.subscribed_topics = Some(if g.members.is_empty() {
            BTreeSet::new()
        } else {
            modern
                .topologies
                .get(&g.group)
                .map(|t| t.values().flatten().cloned().collect())
                .unwrap_or_default()
        });
    }
    for g in out.values_mut().filter(|g| g.kind != "classic") {
        let mut assignors: Vec<String> = g
            .members
            .iter()
            .filter_map(|m| m.assignor.clone())
            .collect();
        g.protocol = match g.kind {
            "share" => Some("simple".into()),
            "consumer" => Some(preferred_server_assignor(&assignors)),
            _ if assignors.is_empty() => None,
            _ => {
                assignors.sort();
                assignors.dedup();
                Some(assignors.join(","))
            }
        };
        g.state = loaded_state(g, VALIDATED_WITHOUT_METADATA_4_2);
        if g.kind == "streams" && g.validated_topology_epoch.is_none() {
            let from_4_4 = loaded_state(g, VALIDATED_WITHOUT_METADATA_4_4);
            g.state_from_4_4 = Some(from_4_4).filter(|s| *s != g.state);
        }
    }
    out.into_values().collect()
}

/// The assignor a consumer group (KIP-848) is described with, as
/// kafka-consumer-groups shows it: the server assignor most of its members
/// name (`ConsumerGroup.preferredServerAssignor`; a tie goes to the first
/// name in order, where Kafka's map order decides), else the coordinator's
/// default, the first of `group.consumer.assignors` (`uniform` unless the
/// broker's configuration, not on these disks, says otherwise;
/// `GroupMetadataManager.consumerGroupDescribe`).
fn preferred_server_assignor(assignors: &[String]) -> String {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for a in assignors {
        *counts.entry(a.as_str()).or_default() += 1;
    }
    let most = counts.values().copied().max().unwrap_or(0);
    counts.into_iter().find(|&(_, n)| n == most).map_or_else(
        || DEFAULT_CONSUMER_GROUP_ASSIGNOR.to_string(),
        |(name, _)| name.to_string(),
    )
}

/// The first of `group.consumer.assignors` by default (`GroupCoordinatorConfig`).
const DEFAULT_CONSUMER_GROUP_ASSIGNOR: &str = "uniform";

/// A streams group's validated topology epoch before any metadata record:
/// `StreamsGroup`'s constructor in Kafka 4.2 and 4.3 (a new
/// `TimelineInteger`: 0) and from 4.4 (set to -1).
const VALIDATED_WITHOUT_METADATA_4_2: i32 = 0;
const VALIDATED_WITHOUT_METADATA_4_4: i32 = -1;

/// Settle the states that depend on the loading release (see the module
/// docs) by the metadata.version of the KRaft metadata in `dirs`: from
/// 4.4-IV1 on, every broker runs 4.4 or later, so 4.4's state is the
/// group's. Below it, or without metadata, both stay. Reads the metadata
/// log only when some group needs it.
pub fn settle_release(views: &mut [GroupView], dirs: &[DataDir]) {
    if views.iter().all(|g| g.state_from_4_4.is_none()) {
        return;
    }
    if crate::offsets::metadata_version(dirs)
        .is_some_and(|level| level >= crate::offsets::METADATA_VERSION_4_4_IV1)
    {
        for g in views {
            if let Some(s) = g.state_from_4_4.take() {
                g.state = s;
            }
        }
    }
}

/// A classic group as its latest GroupMetadata describes it.
fn classic_view(name: &str, g: &crate::offsets::GroupMetadata) -> GroupView {
    GroupView {
        group: name.to_string(),
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
        state_timestamp: g.state_timestamp(),
        log_partition: -1,
        log_offset: -1,
        subscribed_topics: classic_subscriptions(g),
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
    }
}

/// A group an offset commit created and no group record describes is a
/// "simple consumer group": an empty classic group without a protocol type
/// (see `Loader` for which commits make one).
fn add_simple_groups(out: &mut BTreeMap<String, GroupView>, replay: &Replay, loader: Loader) {
    let simple: Vec<&str> = match loader {
        Loader::Service => replay.offset_groups.iter().map(String::as_str).collect(),
        Loader::ZooKeeper => {
            let mut g: Vec<&str> = replay.committed_groups();
            g.extend(replay.pending().map(|(_, _, group, ..)| group));
            g
        }
    };
    for group in simple {
        out.entry(group.to_string()).or_insert_with(|| GroupView {
            group: group.to_string(),
            kind: "classic",
            state: "Empty",
            log_partition: -1,
            log_offset: -1,
            ..GroupView::default()
        });
    }
}

/// What the new protocols' member and topology records describe, beside
/// the groups themselves.
#[derive(Default)]
struct ModernRecords {
    /// Members by (group, member id).
    members: BTreeMap<(String, String), MemberView>,
    /// Streams groups' topologies: group → subtopology → its source topics.
    topologies: BTreeMap<String, BTreeMap<String, Vec<String>>>,
}

impl ModernRecords {
    /// One live record of type `t` of the consumer, share or streams
    /// protocol, on its group in `out` (made on its first record).
    fn apply(
        &mut self,
        out: &mut BTreeMap<String, GroupView>,
        t: i16,
        e: &CoordinatorEntry,
        names: &BTreeMap<String, String>,
    ) {
        let (lp, off, r) = (&e.log_partition, &e.log_offset, &e.record);
        let (Some(k), Some(v)) = (&r.key, r.value_as_read()) else {
            return;
        };
        let v = &v;
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
            17 => {
                g.epoch = i(v, "epoch");
                // ValidatedTopologyEpoch: tagged, -1 (its default) when absent.
                g.validated_topology_epoch = i(v, "validatedTopologyEpoch");
            }
            3 | 11 => g.epoch = i(v, "epoch"),
            6 | 12 | 20 => g.assignment_epoch = i(v, "assignmentEpoch"),
            23 => {
                g.topology_epoch = i(v, "epoch");
                self.topologies.insert(group.clone(), source_topics(v));
            }
            16 => {
                // ConsumerGroupRegularExpressionValue: the topics it resolved to.
                let topics = strings(v, "topics");
                g.subscribed_topics.get_or_insert_default().extend(topics);
            }
            5 | 10 | 19 | 8 | 14 | 22 => {
                let m = self
                    .members
                    .entry((group.clone(), s(k, "memberId")))
                    .or_insert_with(|| MemberView {
                        member_id: s(k, "memberId"),
                        ..MemberView::default()
                    });
                apply_member_record(g, m, t, v, names);
            }
            _ => {}
        }
    }
}

/// A member record of type `t` (metadata 5, 10, 19; current assignment 8,
/// 14, 22) on member `m` of group `g`.
fn apply_member_record(
    g: &mut GroupView,
    m: &mut MemberView,
    t: i16,
    v: &Value,
    names: &BTreeMap<String, String>,
) {
    match t {
        5 | 10 | 19 => {
            if t == 5 {
                let topics = strings(v, "subscribedTopicNames");
                g.subscribed_topics.get_or_insert_default().extend(topics);
            }
            m.instance_id = opt_s(v, "instanceId");
            m.client_id = s(v, "clientId");
            m.client_host = s(v, "clientHost");
            m.rack = opt_s(v, "rackId");
            m.assignor = opt_s(v, "serverAssignor");
        }
        22 => {
            m.member_epoch = i(v, "memberEpoch");
            m.member_state = i(v, "state").map(streams_member_state_name);
            // Active tasks: subtopology → partitions.
            m.active_tasks = v
                .get("activeTasks")
                .and_then(Value::as_array)
                .map(|a| {
                    a.iter()
                        .map(|t| (s(t, "subtopologyId"), partition_numbers(t)))
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

/// The state of a loaded new-protocol group (see the module docs). Epochs
/// a group or member has no record of are 0 and a member's state is
/// stable, as Kafka's `TimelineInteger`s and member builders start; a
/// streams group's validated topology epoch is `validated_without_metadata`
/// without its metadata record.
fn loaded_state(g: &GroupView, validated_without_metadata: i32) -> &'static str {
    if g.members.is_empty() {
        return "Empty";
    }
    match g.kind {
        "share" => "Stable",
        // StreamsGroup.maybeUpdateGroupState: a topology at the validated
        // epoch first.
        "streams"
            if g.topology_epoch.is_none()
                || g.topology_epoch
                    != Some(
                        g.validated_topology_epoch
                            .unwrap_or(validated_without_metadata),
                    ) =>
        {
            "NotReady"
        }
        _ => {
            let target = g.assignment_epoch.unwrap_or(0);
            if g.epoch.unwrap_or(0) > target {
                "Assigning"
            } else if g.members.iter().any(|m| {
                // A member without an assignment record is stable at epoch 0,
                // as the member builders start.
                m.member_state.unwrap_or("stable") != "stable"
                    || m.member_epoch.unwrap_or(0) != target
            }) {
                "Reconciling"
            } else {
                "Stable"
            }
        }
    }
}

/// The strings of array field `k`.
fn strings(v: &Value, k: &str) -> Vec<String> {
    v.get(k)
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .map(String::from)
        .collect()
}

/// A classic group's subscribed topics as `ClassicGroup.computeSubscribedTopics`
/// finds them: none without the `consumer` protocol type (or a protocol),
/// the empty set without members, else every member's subscription's
/// topics, `None` when one does not decode.
fn classic_subscriptions(g: &crate::offsets::GroupMetadata) -> Option<BTreeSet<String>> {
    if g.protocol_type != "consumer" {
        return None;
    }
    if g.members.is_empty() {
        return Some(BTreeSet::new());
    }
    g.protocol.as_ref()?;
    let mut all = BTreeSet::new();
    for m in &g.members {
        all.extend(m.subscription.clone()?);
    }
    Some(all)
}

/// A StreamsGroupTopologyValue's subtopologies and the topics each reads:
/// its source topics and repartition source topics (a task's partition N
/// is partition N of each). Source topic regexes are not resolved.
fn source_topics(v: &Value) -> BTreeMap<String, Vec<String>> {
    let mut out = BTreeMap::new();
    for st in v
        .get("subtopologies")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        let names = |k: &str| -> Vec<String> {
            st.get(k)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
                .filter_map(|t| t.as_str().or_else(|| t.get("name").and_then(Value::as_str)))
                .map(String::from)
                .collect()
        };
        let mut topics = names("sourceTopics");
        topics.extend(names("repartitionSourceTopics"));
        out.insert(s(st, "subtopologyId"), topics);
    }
    out
}

/// A streams member's active tasks as topic partitions through the
/// group's topology; a subtopology the topology does not list (or no
/// topology) stays `subtopology ID`.
fn task_topics(
    tasks: &[(String, Vec<i32>)],
    topology: Option<&BTreeMap<String, Vec<String>>>,
) -> Vec<(String, Vec<i32>)> {
    let mut out: BTreeMap<String, Vec<i32>> = BTreeMap::new();
    for (sub, ps) in tasks {
        match topology.and_then(|t| t.get(sub)).filter(|t| !t.is_empty()) {
            Some(topics) => {
                for t in topics {
                    out.entry(t.clone()).or_default().extend(ps);
                }
            }
            None => out
                .entry(format!("subtopology {sub}"))
                .or_default()
                .extend(ps),
        }
    }
    out.into_iter()
        .map(|(t, mut ps)| {
            ps.sort_unstable();
            ps.dedup();
            (t, ps)
        })
        .collect()
}

/// Topic id → name: from the partition.metadata files of the live
/// partitions, then from the KRaft metadata of any directory (which wins).
pub fn topic_names(dirs: &[DataDir]) -> BTreeMap<String, String> {
    topic_id_pairs(dirs).into_iter().collect()
}

/// Topic name → its current id: from the partition.metadata files of the
/// live partitions, then from the KRaft metadata of any directory, which
/// wins (the controller's image is the cluster's record of the topic).
pub fn topic_ids(dirs: &[DataDir]) -> BTreeMap<String, String> {
    topic_id_pairs(dirs)
        .into_iter()
        .map(|(id, name)| (name, id))
        .collect()
}

/// (id, name) of every topic the directories know, partition.metadata
/// files first, then the KRaft metadata's topics.
fn topic_id_pairs(dirs: &[DataDir]) -> Vec<(String, String)> {
    let mut pairs = Vec::new();
    for d in dirs {
        for p in d
            .partitions
            .iter()
            .filter(|p| p.state == PartitionState::Live)
        {
            if let Ok(Some(m)) = crate::log::meta::read_partition_metadata(
                &p.dir.join(crate::log::meta::PARTITION_METADATA),
            ) {
                pairs.push((m.topic_id.to_string(), p.topic.clone()));
            }
        }
    }
    for d in dirs {
        if let Some(folder) = crate::metadata::metadata_folder(&d.path) {
            if let Ok(r) = crate::metadata::replay(&folder, None) {
                for t in r.image.topics.values() {
                    pairs.push((t.id.to_string(), t.name.clone()));
                }
            }
        }
    }
    pairs
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
    // Only groups with members matter here: the loader does not.
    let g = groups(replay, &BTreeMap::new(), Loader::default())
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
