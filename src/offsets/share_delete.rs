//! Deleting a share group's share-partition state (KIP-932), as Kafka
//! deletes it when DeleteGroups deletes a share group.
//!
//! `GroupCoordinatorService.deleteGroups` runs `deleteShareGroups` before
//! the group's own records are deleted: `GroupCoordinatorShard.
//! sharePartitionDeleteRequests` → `GroupMetadataManager.
//! shareGroupBuildPartitionDeleteRequest` takes the share-partitions of the
//! group's ShareGroupStatePartitionMetadata — its initialized and
//! initializing topics with their partitions, and its deleting topics with
//! every partition the metadata image gives them — and the persister sends
//! each to the share coordinator that owns its key
//! (`ShareCoordinatorService.partitionFor`: `abs(hashCode("group:topicId:
//! partition")) % partitions of __share_group_state`, the key being
//! `SharePartitionKey.asCoordinatorKey` with the topic id as
//! `Uuid.toString`). There `ShareCoordinatorShard.deleteState` writes a
//! ShareSnapshot tombstone (`ShareCoordinatorRecordHelpers.
//! newShareStateTombstoneRecord`: key type 0, null value) when it holds
//! state for the key, and nothing when it does not.
//!
//! Offline, the state a share coordinator holds for a key is what the
//! key's partition of `__share_group_state` replays to
//! ([`crate::offsets::share::share_states`]), and a deleting topic's
//! partitions are those with state there (the others would get no
//! tombstone anyway). State the group's metadata does not name, or that
//! lies in another partition than its key's, is not Kafka's to delete: it
//! is listed as left.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use base64::Engine;
use serde_json::Value;

use crate::error::{Error, Result};
use crate::format::NewRecord;
use crate::log::{DataDir, PartitionState};
use crate::offsets::records::SHARE_GROUP_STATE_TOPIC;
use crate::offsets::share::{share_states, ShareState};
use crate::offsets::{partition_for, Replay};

/// The record type of ShareGroupStatePartitionMetadata in the offsets topic.
const SHARE_GROUP_STATE_PARTITION_METADATA: i16 = 15;
/// The record type of ShareSnapshot in `__share_group_state`.
const SHARE_SNAPSHOT: i16 = 0;

/// One share-partition whose state is deleted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StateDelete {
    /// The partition of `__share_group_state` that owns its key.
    pub state_partition: i32,
    /// The topic id (`Uuid.toString`) and name.
    pub topic_id: String,
    pub topic: String,
    pub partition: i32,
    /// The ShareSnapshot tombstone's key.
    pub key: Vec<u8>,
}

/// What deleting a share group does to `__share_group_state`.
#[derive(Debug, Clone, Default)]
pub struct SharePlan {
    /// The tombstones to write, by state partition, then topic and partition.
    pub deletes: Vec<StateDelete>,
    /// The group's state left alone, and why.
    pub left: Vec<(ShareState, String)>,
}

/// The share-partitions `group`'s ShareGroupStatePartitionMetadata names:
/// (topic id, name, `Some(partitions)` for initialized and initializing
/// topics, `None` for a deleting topic, all of whose partitions are meant).
fn named(replay: &Replay, group: &str) -> Vec<(String, String, Option<Vec<i32>>)> {
    let Some(v) = replay
        .coordinator
        .iter()
        .find(|((t, _), e)| {
            *t == SHARE_GROUP_STATE_PARTITION_METADATA
                && e.record
                    .key
                    .as_ref()
                    .and_then(|k| k.get("groupId"))
                    .and_then(Value::as_str)
                    == Some(group)
        })
        .and_then(|(_, e)| e.record.value.as_ref())
        .and_then(|v| v.fields())
    else {
        return Vec::new();
    };
    let topics = |field: &str| -> Vec<&Value> {
        v.get(field)
            .and_then(Value::as_array)
            .map(|a| a.iter().collect())
            .unwrap_or_default()
    };
    let text = |t: &Value, k: &str| t.get(k).and_then(Value::as_str).unwrap_or("").to_string();
    let mut out = Vec::new();
    for t in topics("initializedTopics")
        .into_iter()
        .chain(topics("initializingTopics"))
    {
        let partitions = t
            .get("partitions")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_i64)
                    .map(|p| p as i32)
                    .collect()
            })
            .unwrap_or_default();
        out.push((text(t, "topicId"), text(t, "topicName"), Some(partitions)));
    }
    for t in topics("deletingTopics") {
        out.push((text(t, "topicId"), text(t, "topicName"), None));
    }
    out
}

/// The partition of `__share_group_state` that owns the state of
/// `group`'s `topic_id`-`partition` (`ShareCoordinatorService.partitionFor`).
pub fn state_partition_for(group: &str, topic_id: &str, partition: i32, partitions: i32) -> i32 {
    partition_for(&format!("{group}:{topic_id}:{partition}"), partitions)
}

/// ShareSnapshotKey.json's fields, by their JSON names.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct ShareKeyFields<'a> {
    group_id: &'a str,
    topic_id: &'a str,
    partition: i32,
}

/// ShareSnapshotKey (type 0): GroupId string, TopicId uuid, Partition int32.
fn snapshot_key(group: &str, topic_id: &str, partition: i32) -> Result<Vec<u8>> {
    let uuid = base64::engine::general_purpose::URL_SAFE_NO_PAD.decode(topic_id);
    if !uuid.is_ok_and(|b| b.len() == 16) {
        return Err(Error::Invalid(format!(
            "topic id {topic_id:?} is not a uuid"
        )));
    }
    let fields = ShareKeyFields {
        group_id: group,
        topic_id,
        partition,
    };
    let mut key = SHARE_SNAPSHOT.to_be_bytes().to_vec(); // recordType: int16
    key.extend(crate::offsets::records::SHARE_SNAPSHOT_KEY.encode(0, &fields));
    Ok(key)
}

/// The partition count of `__share_group_state` for `dir`: the KRaft
/// metadata's, else `given` (`share.coordinator.state.topic.num.partitions`);
/// `None` when the directory holds no `__share_group_state` folder (no state
/// to delete).
pub fn state_partitions(dir: &Path, given: Option<i32>) -> Result<Option<i32>> {
    let folders: Vec<i32> = DataDir::open(dir)?
        .partitions
        .iter()
        .filter(|p| p.topic == SHARE_GROUP_STATE_TOPIC && p.state == PartitionState::Live)
        .map(|p| p.partition)
        .collect();
    let from_metadata = crate::metadata::metadata_folder(dir)
        .and_then(|f| crate::metadata::replay(&f, None).ok())
        .and_then(|r| r.image.partition_count(SHARE_GROUP_STATE_TOPIC))
        .and_then(|n| i32::try_from(n).ok());
    let n = match (from_metadata, given) {
        (Some(m), Some(g)) if m != g => {
            return Err(Error::Invalid(format!(
                "the KRaft metadata in {} gives {SHARE_GROUP_STATE_TOPIC} {m} partitions, not --share-state-partitions {g}",
                dir.display()
            )))
        }
        (Some(m), _) => m,
        (None, Some(g)) => g,
        (None, None) if folders.is_empty() => return Ok(None),
        (None, None) => {
            return Err(Error::Invalid(format!(
                "the partition count of {SHARE_GROUP_STATE_TOPIC} is unknown: {} has no KRaft metadata naming the \
                 topic; pass --share-state-partitions (the cluster's share.coordinator.state.topic.num.partitions) \
                 to place the group's share-partition state",
                dir.display()
            )))
        }
    };
    if n <= 0 {
        return Err(Error::Invalid(format!(
            "--share-state-partitions {n}: the topic has at least one partition"
        )));
    }
    if let Some(max) = folders.iter().max().filter(|&&m| m >= n) {
        return Err(Error::Invalid(format!(
            "{} holds {SHARE_GROUP_STATE_TOPIC}-{max}, so the topic has more than {n} partitions: pass \
             --share-state-partitions",
            dir.display()
        )));
    }
    Ok(Some(n))
}

/// Plan the deletion of `group`'s share-partition state in the data
/// directories `dirs` (the replicas given), with the offsets replay of the
/// group's coordinator. See the module docs.
pub fn plan(
    replay: &Replay,
    group: &str,
    dirs: &[PathBuf],
    given: Option<i32>,
) -> Result<SharePlan> {
    let mut plan = SharePlan::default();
    // Every share-partition's state in each state partition, over every directory.
    let mut held: BTreeMap<(String, i32), (i32, ShareState)> = BTreeMap::new();
    let mut elsewhere: Vec<(ShareState, i32)> = Vec::new();
    let mut count = None;
    let opened: Vec<DataDir> = dirs
        .iter()
        .map(|d| DataDir::open(d))
        .collect::<Result<_>>()?;
    let known_names = crate::offsets::group_state::topic_names(&opened);
    for (dir, all) in dirs.iter().zip(&opened) {
        let Some(n) = state_partitions(dir, given)? else {
            continue;
        };
        if count.is_some_and(|c| c != n) {
            return Err(Error::Invalid(format!(
                "{} gives {SHARE_GROUP_STATE_TOPIC} {n} partitions, another directory {}",
                dir.display(),
                count.unwrap_or(n)
            )));
        }
        count = Some(n);
        for p in all
            .partitions
            .iter()
            .filter(|p| p.topic == SHARE_GROUP_STATE_TOPIC && p.state == PartitionState::Live)
        {
            let one = DataDir {
                partitions: vec![p.clone()],
                ..all.clone()
            };
            // No names: `topic` stays the topic id.
            let states = share_states(&[one], &BTreeMap::new())?.states;
            for s in states.into_iter().filter(|s| s.group == group) {
                let owner = state_partition_for(group, &s.topic, s.partition, n);
                if owner == p.partition {
                    held.insert((s.topic.clone(), s.partition), (p.partition, s));
                } else {
                    elsewhere.push((s, p.partition));
                }
            }
        }
    }
    let named = named(replay, group);
    let names: BTreeMap<&str, &str> = named
        .iter()
        .map(|(id, name, _)| (id.as_str(), name.as_str()))
        .collect();
    let is_named = |topic_id: &str, partition: i32| {
        named.iter().any(|(id, _, ps)| {
            id == topic_id && ps.as_ref().is_none_or(|ps| ps.contains(&partition))
        })
    };
    // The group's metadata names a topic id; else the KRaft metadata does.
    let name_of = |topic_id: &str| {
        names
            .get(topic_id)
            .map(|n| n.to_string())
            .or_else(|| known_names.get(topic_id).cloned())
            .unwrap_or_else(|| topic_id.to_string())
    };
    for ((topic_id, partition), (state_partition, s)) in held {
        let name = name_of(&topic_id);
        if is_named(&topic_id, partition) {
            plan.deletes.push(StateDelete {
                state_partition,
                key: snapshot_key(group, &topic_id, partition)?,
                topic_id,
                topic: name,
                partition,
            });
        } else {
            plan.left.push((
                ShareState { topic: name, ..s },
                "the group's ShareGroupStatePartitionMetadata does not name it, so Kafka's DeleteGroups \
                 leaves it"
                    .into(),
            ));
        }
    }
    for (mut s, found_in) in elsewhere {
        s.topic = name_of(&s.topic);
        let why = format!(
            "it lies in {SHARE_GROUP_STATE_TOPIC}-{found_in}, not in the partition that owns its key: no share \
             coordinator reads it there"
        );
        plan.left.push((s, why));
    }
    plan.deletes.sort_by(|a, b| {
        (a.state_partition, &a.topic, a.partition).cmp(&(b.state_partition, &b.topic, b.partition))
    });
    Ok(plan)
}

/// The ShareSnapshot tombstone of `d`, stamped `now_ms`.
pub fn tombstone(d: &StateDelete, now_ms: i64) -> NewRecord {
    NewRecord {
        key: Some(d.key.clone()),
        value: None,
        headers: Vec::new(),
        timestamp: now_ms,
    }
}

/// The replicas of one `__share_group_state` partition that tombstones go
/// to: every directory given that holds its folder.
pub struct Target {
    pub state_partition: i32,
    /// The partition folder in each directory.
    pub folders: Vec<PathBuf>,
    /// The offset the next tombstone gets (the same in every replica).
    pub next_offset: i64,
    /// One per folder, holding its directory's lock; empty in a dry run.
    appenders: Vec<crate::log::PartitionAppender>,
}

impl Target {
    /// Append `records` in one batch to every replica (through the append
    /// path: each append syncs). Returns the offsets they got.
    pub fn append(&mut self, records: &[NewRecord]) -> Result<std::ops::RangeInclusive<i64>> {
        let mut got = None;
        for a in &mut self.appenders {
            got = Some(a.append(&crate::format::BatchSpec::default(), records)?);
        }
        let range = got.ok_or_else(|| Error::Invalid("a dry run writes nothing".into()))?;
        self.next_offset = range.end() + 1;
        Ok(range)
    }

    /// Close every replica's segment as a broker closes it (the time
    /// index sealed, `LogSegment.close`).
    pub fn close(self) -> Result<()> {
        for a in self.appenders {
            a.close()?;
        }
        Ok(())
    }
}

/// Open the `__share_group_state` partitions `plan` deletes from, in each
/// of `dirs` that holds them, under the lock `lock` gives for the
/// directory (`None`: a dry run, nothing is opened for writing). Replicas
/// that end at different offsets are refused before anything is written.
pub fn targets(
    plan: &SharePlan,
    dirs: &[PathBuf],
    lock: impl Fn(&Path) -> Option<std::sync::Arc<crate::log::lock::DirLock>>,
) -> Result<Vec<Target>> {
    use crate::log::{AppendConfig, PartitionAppender};
    let mut partitions: Vec<i32> = plan.deletes.iter().map(|d| d.state_partition).collect();
    partitions.dedup();
    let mut out = Vec::new();
    for n in partitions {
        let mut t = Target {
            state_partition: n,
            folders: Vec::new(),
            next_offset: 0,
            appenders: Vec::new(),
        };
        let mut ends = Vec::new();
        let mut t_dirs = Vec::new();
        for dir in dirs {
            let folder = dir.join(format!("{SHARE_GROUP_STATE_TOPIC}-{n}"));
            if !folder.is_dir() {
                continue;
            }
            // The epoch is decided for every replica at once, below.
            let config = AppendConfig::default();
            match lock(dir) {
                Some(l) => {
                    let a =
                        PartitionAppender::open_locked(l, dir, SHARE_GROUP_STATE_TOPIC, n, config)?;
                    ends.push(a.next_offset());
                    t.appenders.push(a);
                }
                None => ends.push(PartitionAppender::next_offset_of(
                    dir,
                    SHARE_GROUP_STATE_TOPIC,
                    n,
                    &config,
                )?),
            }
            t.folders.push(folder);
            t_dirs.push(dir.clone());
        }
        if let Some(i) = ends.iter().position(|&e| Some(&e) != ends.first()) {
            return Err(Error::Invalid(format!(
                "the replicas differ: {} ends at offset {}, {} at {}; refusing to write",
                t.folders
                    .first()
                    .map_or(String::new(), |f| f.display().to_string()),
                ends.first().copied().unwrap_or(0),
                t.folders
                    .get(i)
                    .map_or(String::new(), |f| f.display().to_string()),
                ends.get(i).copied().unwrap_or(0)
            )));
        }
        t.next_offset = ends.first().copied().unwrap_or(0);
        // One batch, the same bytes on every replica: the epoch every
        // replica's cache and the metadata agree on, as for offsets.
        if !t.appenders.is_empty() {
            let image = crate::metadata::newest_image(dirs);
            let registration =
                crate::offsets::write::registration(image.as_ref(), SHARE_GROUP_STATE_TOPIC, n);
            let epoch = crate::offsets::write::common_leader_epoch(
                &t_dirs,
                &t.folders,
                t.next_offset,
                registration.as_ref(),
            )?;
            for a in &mut t.appenders {
                a.set_leader_epoch(epoch);
            }
        }
        out.push(t);
    }
    Ok(out)
}
