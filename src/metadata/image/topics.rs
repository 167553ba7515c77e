//! Topics and their partitions (`TopicsDelta`, `TopicDelta`,
//! `PartitionRegistration`).

use serde_json::Value;

use super::fields::{int, ints, text, uuid, uuids};
use super::{Image, PartitionReg, Partitions, Problem, Topic, Uuid};
use crate::log::findings::Kind;

/// `DirectoryId.MIGRATING` (`new Uuid(0, 0)`).
pub const MIGRATING: Uuid = Uuid::ZERO;

impl Image {
    /// TopicRecord: a new topic image, no partitions (a second record for
    /// an id starts it again; `TopicsDelta.replay`).
    pub(super) fn add_topic(&mut self, d: &Value) -> Result<(), Problem> {
        let id = uuid(d, "topicId");
        let name = text(d, "name");
        let taken = self.topic_by_name(&name).map(|t| t.id);
        self.deleted_topics.remove(&id);
        let old = self.put_topic(Topic {
            name: name.clone(),
            id,
            partitions: Partitions::default(),
        });
        if let Some(other) = taken {
            return Err(Problem {
                kind: Kind::DuplicateTopicRecord,
                severity: Kind::DuplicateTopicRecord.severity(),
                detail: format!(
                    "TopicRecord {name:?} (id {id}): {}; a controller replaying this log stops \
                     (ReplicationControlManager.replay(TopicRecord) throws \"Found duplicate TopicRecord\"), \
                     a broker's image takes it (TopicsDelta.replay){}",
                    if other == id {
                        "the topic exists already".to_string()
                    } else {
                        format!("topic id {other} has that name")
                    },
                    match old {
                        Some(o) if !o.partitions.is_empty() => {
                            format!(" and starts the topic again without its {} partitions", o.partitions.len())
                        }
                        _ => String::new(),
                    }
                ),
                not_applied: false,
                incomplete: None,
            });
        }
        Ok(())
    }

    /// PartitionRecord: the registration replaces the partition's whole
    /// (`TopicDelta.replay`), or why Kafka throws.
    pub(super) fn set_partition(
        &mut self,
        d: &Value,
        problems: &mut Vec<Problem>,
    ) -> Result<(), Problem> {
        let (id, p) = partition_key(d);
        let Some(t) = self.topics.get_mut(&id) else {
            return Err(Problem::rejected(format!(
                "PartitionRecord: partition {p} of topic id {id}, which is unknown (TopicsDelta.getOrCreateTopicDelta \
                 has no topic image for it)"
            )));
        };
        let reg = registration(&t.name, p, d)?;
        let invalid = invalid_registration(p, &reg);
        let name = t.name.clone();
        if t.partitions.insert(p, reg).is_some() {
            problems.push(Problem {
                kind: Kind::PartitionRecordAgain,
                severity: Kind::PartitionRecordAgain.severity(),
                detail: format!(
                    "PartitionRecord for {name}-{p}, which has a registration: Kafka's image takes the new \
                     one whole (TopicDelta.replay), a controller logs \"Replayed PartitionRecord for existing \
                     partition\" (ReplicationControlManager.replay); a controller changes a partition with a \
                     PartitionChangeRecord"
                ),
                not_applied: false,
                incomplete: None,
            });
        }
        problems.extend(invalid.map(|what| invalid_problem(&name, p, &what)));
        Ok(())
    }

    /// PartitionChangeRecord: merged into the registration
    /// ([`merge`]), or why Kafka throws.
    pub(super) fn change_partition(
        &mut self,
        d: &Value,
        problems: &mut Vec<Problem>,
    ) -> Result<(), Problem> {
        let (id, p) = partition_key(d);
        let Some(reg) = self
            .topics
            .get_mut(&id)
            .and_then(|t| t.partitions.get_mut(&p))
        else {
            return Err(Problem::rejected(format!(
                "PartitionChangeRecord: partition {p} of topic id {id} is unknown (TopicDelta.replay: \
                 \"Unable to find partition\")"
            )));
        };
        merge(reg, d).map_err(Problem::rejected)?;
        if let Some(what) = invalid_registration(p, reg) {
            let name = self
                .topics
                .get(&id)
                .map_or_else(String::new, |t| t.name.clone());
            problems.push(invalid_problem(&name, p, &what));
        }
        Ok(())
    }

    /// RemoveTopicRecord: the topic, its partitions and its configs go
    /// (`TopicsDelta.replay` throws on an unknown id).
    pub(super) fn remove_topic(&mut self, d: &Value) -> Result<(), Problem> {
        let id = uuid(d, "topicId");
        match self.take_topic(&id) {
            Some(t) => {
                self.configs.remove(&(2, t.name.clone()));
                self.deleted_topics.insert(id, t.name);
                Ok(())
            }
            None => Err(Problem::rejected(format!(
                "RemoveTopicRecord: topic id {id} is unknown (TopicsDelta.replay throws)"
            ))),
        }
    }

    /// ClearElrRecord. Empty name: every topic (ClearElrRecord.json); a
    /// name no topic has throws (TopicsDelta.replay(ClearElrRecord)). A
    /// partition with an ELR gets a change that empties both lists, which
    /// bumps its partition epoch (TopicDelta).
    pub(super) fn clear_elr(&mut self, d: &Value) -> Result<(), Problem> {
        let name = text(d, "topicName");
        if !name.is_empty() && self.topic_by_name(&name).is_none() {
            return Err(Problem::rejected(format!(
                "ClearElrRecord: no topic is named {name:?} (TopicsDelta.replay throws)"
            )));
        }
        for t in self
            .topics
            .values_mut()
            .filter(|t| name.is_empty() || t.name == name)
        {
            for p in t.partitions.values_mut() {
                if !p.eligible_leader_replicas.is_empty() || !p.last_known_elr.is_empty() {
                    p.eligible_leader_replicas = Box::default();
                    p.last_known_elr = Box::default();
                    p.partition_epoch = p.partition_epoch.wrapping_add(1);
                }
            }
        }
        Ok(())
    }
}

/// The topic id and partition a partition record names.
fn partition_key(d: &Value) -> (Uuid, i32) {
    (uuid(d, "topicId"), int(d, "partitionId") as i32)
}

/// A PartitionRecord's registration of partition `p` of `topic`, or why
/// Kafka throws.
fn registration(topic: &str, p: i32, d: &Value) -> Result<PartitionReg, Problem> {
    let replicas = ints(d.get("replicas")).unwrap_or_default();
    let dirs = uuids(d.get("directories")).unwrap_or_default();
    let lrs = int(d, "leaderRecoveryState");
    // LeaderRecoveryState.of: 0 or 1, else it throws.
    if !(0..=1).contains(&lrs) {
        return Err(Problem::rejected(format!(
            "PartitionRecord: {topic}-{p} has leaderRecoveryState {lrs} (LeaderRecoveryState.of throws)"
        )));
    }
    // PartitionRegistration.checkDirectories(PartitionRecord).
    if !dirs.is_empty() && dirs.len() != replicas.len() {
        return Err(Problem::rejected(format!(
            "PartitionRecord: {topic}-{p} has {} replicas and {} directories (InvalidReplicaDirectoriesException)",
            replicas.len(),
            dirs.len()
        )));
    }
    Ok(PartitionReg {
        directories: default_to_migrating(dirs, replicas.len()),
        replicas,
        isr: ints(d.get("isr")).unwrap_or_default(),
        removing_replicas: ints(d.get("removingReplicas")).unwrap_or_default(),
        adding_replicas: ints(d.get("addingReplicas")).unwrap_or_default(),
        leader: int(d, "leader") as i32,
        leader_recovery_state: lrs as i8,
        leader_epoch: int(d, "leaderEpoch") as i32,
        partition_epoch: int(d, "partitionEpoch") as i32,
        eligible_leader_replicas: ints(d.get("eligibleLeaderReplicas")).unwrap_or_default(),
        last_known_elr: ints(d.get("lastKnownElr")).unwrap_or_default(),
    })
}

/// `PartitionRegistration.defaultToMigrating`: directories that are empty
/// or all MIGRATING become one MIGRATING per replica.
fn default_to_migrating(dirs: Box<[Uuid]>, replicas: usize) -> Box<[Uuid]> {
    if dirs.iter().all(|d| *d == MIGRATING) {
        vec![MIGRATING; replicas].into_boxed_slice()
    } else {
        dirs
    }
}

/// What no Kafka controller writes in partition `p`'s registration, though
/// Kafka's image takes it as written (`TopicDelta.replay`, and the
/// `PartitionRegistration` constructor checks only the directories): the
/// controller numbers partitions from 0, assigns distinct non-negative
/// replicas (`ReplicationControlManager.validateManualPartitionAssignment`,
/// `Replicas.validate`), keeps the ISR a subset of the replicas without
/// duplicates (`Replicas.validateIsr`, checked on AlterPartition) and
/// elects the leader among the replicas (`PartitionChangeBuilder`), or
/// none (-1).
fn invalid_registration(p: i32, reg: &PartitionReg) -> Option<String> {
    let mut what = Vec::new();
    if p < 0 {
        what.push(format!("partition {p} is negative"));
    }
    let mut sorted = reg.replicas.to_vec();
    sorted.sort_unstable();
    if sorted.windows(2).any(|w| matches!(w, [a, b] if a == b)) {
        what.push(format!("replicas {:?} repeat a broker", reg.replicas));
    }
    if sorted.first().is_some_and(|r| *r < 0) {
        what.push(format!(
            "replicas {:?} hold a negative broker id",
            reg.replicas
        ));
    }
    if reg.leader != -1 && !reg.replicas.contains(&reg.leader) {
        what.push(format!(
            "leader {} is not one of the replicas {:?}",
            reg.leader, reg.replicas
        ));
    }
    let mut isr = reg.isr.to_vec();
    isr.sort_unstable();
    if isr.windows(2).any(|w| matches!(w, [a, b] if a == b))
        || isr.iter().any(|b| !reg.replicas.contains(b))
    {
        what.push(format!(
            "the ISR {:?} is not a set of the replicas {:?}",
            reg.isr, reg.replicas
        ));
    }
    (!what.is_empty()).then(|| what.join("; "))
}

fn invalid_problem(topic: &str, p: i32, what: &str) -> Problem {
    Problem {
        kind: Kind::PartitionRegistrationInvalid,
        severity: Kind::PartitionRegistrationInvalid.severity(),
        detail: format!(
            "{topic}-{p}: {what}: Kafka's image takes the registration as written (TopicDelta.replay), \
             but no Kafka controller writes it"
        ),
        not_applied: false,
        incomplete: None,
    }
}

/// `PartitionRegistration.merge`: the lists a PartitionChangeRecord holds
/// replace the old ones; or why Kafka throws.
fn merge(reg: &mut PartitionReg, d: &Value) -> Result<(), String> {
    // LeaderRecoveryState: -1, its default (the record left it out), is
    // NO_CHANGE; another value than 0 or 1 throws (LeaderRecoveryState.changeTo, of).
    let lrs = d
        .get("leaderRecoveryState")
        .and_then(Value::as_i64)
        .filter(|s| *s != -1);
    if let Some(s) = lrs.filter(|s| !(0..=1).contains(s)) {
        return Err(format!(
            "PartitionChangeRecord: leaderRecoveryState {s} (LeaderRecoveryState.of throws)"
        ));
    }
    let replicas = ints(d.get("replicas"));
    let new_dirs = uuids(d.get("directories"));
    // checkDirectories(PartitionChangeRecord).
    if let (Some(r), Some(dirs)) = (&replicas, &new_dirs) {
        if !dirs.is_empty() && r.len() != dirs.len() {
            return Err(format!(
                "PartitionChangeRecord: {} replicas and {} directories (InvalidReplicaDirectoriesException)",
                r.len(),
                dirs.len()
            ));
        }
    }
    let replicas = replicas.unwrap_or_else(|| reg.replicas.clone());
    let dirs = default_to_migrating(
        new_dirs.unwrap_or_else(|| reg.directories.clone()),
        replicas.len(),
    );
    // The PartitionRegistration constructor.
    if !dirs.is_empty() && dirs.len() != replicas.len() {
        return Err(format!(
            "PartitionChangeRecord: {} replicas and {} directories after the change (the PartitionRegistration \
             constructor throws: \"The lengths for replicas and directories do not match\")",
            replicas.len(),
            dirs.len()
        ));
    }
    reg.replicas = replicas;
    reg.directories = dirs;
    if let Some(v) = ints(d.get("isr")) {
        reg.isr = v;
    }
    if let Some(v) = ints(d.get("removingReplicas")) {
        reg.removing_replicas = v;
    }
    if let Some(v) = ints(d.get("addingReplicas")) {
        reg.adding_replicas = v;
    }
    // Leader: -2, its default (the record left it out), is NO_LEADER_CHANGE.
    if let Some(l) = d.get("leader").and_then(Value::as_i64).filter(|l| *l != -2) {
        reg.leader = l as i32;
        reg.leader_epoch = reg.leader_epoch.wrapping_add(1);
    }
    if let Some(s) = lrs {
        reg.leader_recovery_state = s as i8;
    }
    if let Some(v) = ints(d.get("eligibleLeaderReplicas")) {
        reg.eligible_leader_replicas = v;
    }
    if let Some(v) = ints(d.get("lastKnownElr")) {
        reg.last_known_elr = v;
    }
    reg.partition_epoch = reg.partition_epoch.wrapping_add(1);
    Ok(())
}
