//! The cluster image: metadata records replayed in order, as the broker's
//! `MetadataDelta` applies them (`metadata/src/main/java/org/apache/kafka/image/`).
//!
//! - brokers (`ClusterDelta`): RegisterBrokerRecord replaces the
//!   registration; UnregisterBrokerRecord removes it; Fence/Unfence and
//!   BrokerRegistrationChangeRecord change a registration of the same epoch
//!   (fenced: 1 fence, -1 unfence, 0 no change —
//!   `BrokerRegistrationFencingChange`; inControlledShutdown 1 sets it —
//!   `BrokerRegistrationInControlledShutdownChange`; a non-empty logDirs
//!   replaces the directories). A change for an unknown broker or another
//!   epoch is an error in Kafka (`getBrokerOrThrow`): here a replay note.
//! - controllers: RegisterControllerRecord replaces the registration.
//! - topics (`TopicsDelta`): TopicRecord adds a topic; PartitionRecord sets a
//!   partition; PartitionChangeRecord merges as `PartitionRegistration.merge`:
//!   each list present replaces the old one, a leader other than -2
//!   (`NO_LEADER_CHANGE`) becomes leader and bumps the leader epoch, the
//!   partition epoch always goes up by one; RemoveTopicRecord drops the
//!   topic and its partitions.
//! - configs (`ConfigurationsDelta`): a null value deletes the key.
//! - features (`FeaturesDelta`): level 0 removes a feature other than
//!   metadata.version.
//! - producer ids (`ProducerIdsDelta`): the latest ProducerIdsRecord.
//! - ACLs, SCRAM credentials, delegation tokens, client quotas: kept by key
//!   (their secrets are not).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::records::MetadataRecord;

/// A listener (`EndPoints` of a registration).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Listener {
    pub name: String,
    pub host: String,
    pub port: u16,
    pub security_protocol: i16,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Broker {
    pub id: i32,
    pub epoch: i64,
    pub incarnation_id: String,
    pub rack: Option<String>,
    pub listeners: Vec<Listener>,
    pub fenced: bool,
    pub in_controlled_shutdown: bool,
    pub log_dirs: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Controller {
    pub id: i32,
    pub incarnation_id: String,
    pub listeners: Vec<Listener>,
}

/// A partition's registration (`PartitionRegistration`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PartitionReg {
    pub replicas: Vec<i32>,
    pub isr: Vec<i32>,
    pub removing_replicas: Vec<i32>,
    pub adding_replicas: Vec<i32>,
    pub leader: i32,
    pub leader_recovery_state: i8,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub directories: Vec<String>,
    pub eligible_leader_replicas: Vec<i32>,
    pub last_known_elr: Vec<i32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Topic {
    pub name: String,
    pub id: String,
    pub partitions: BTreeMap<i32, PartitionReg>,
}

/// The latest producer id block (`ProducerIdsImage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProducerIds {
    pub broker_id: i32,
    pub broker_epoch: i64,
    pub next_producer_id: i64,
}

/// A record the replay could not apply: why, and where.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Note {
    pub offset: i64,
    pub record: String,
    pub detail: String,
}

/// The cluster image.
#[derive(Debug, Clone, Default)]
pub struct Image {
    pub brokers: BTreeMap<i32, Broker>,
    pub controllers: BTreeMap<i32, Controller>,
    /// By topic id.
    pub topics: BTreeMap<String, Topic>,
    /// Topic ids removed by a RemoveTopicRecord, with their names.
    pub deleted_topics: BTreeMap<String, String>,
    /// `(resource type, resource name)` → key → value. Resource types are
    /// `ConfigResource.Type` ids: 2 topic, 4 broker, 8 broker logger,
    /// 16 client metrics, 32 group.
    pub configs: BTreeMap<(i8, String), BTreeMap<String, String>>,
    pub features: BTreeMap<String, i16>,
    pub producer_ids: Option<ProducerIds>,
    /// ACL ids (`AclsDelta`).
    pub acls: BTreeSet<String>,
    /// `(user, mechanism)` (`ScramDelta`).
    pub scram_credentials: BTreeSet<(String, i64)>,
    /// Token ids (`DelegationTokenDelta`).
    pub delegation_tokens: BTreeSet<String>,
    /// `(entity, quota key)` → value (`ClientQuotasDelta`).
    pub client_quotas: BTreeMap<(String, String), f64>,
    /// Records applied, by type name.
    pub record_counts: BTreeMap<String, u64>,
    pub notes: Vec<Note>,
}

fn int(v: &Value, k: &str) -> i64 {
    v.get(k).and_then(Value::as_i64).unwrap_or(0)
}

fn text(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn ints(v: Option<&Value>) -> Option<Vec<i32>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_i64)
            .map(|x| x as i32)
            .collect()
    })
}

fn strings(v: Option<&Value>) -> Option<Vec<String>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_str)
            .map(String::from)
            .collect()
    })
}

fn listeners(v: &Value) -> Vec<Listener> {
    v.get("endPoints")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|e| Listener {
                    name: text(e, "name"),
                    host: text(e, "host"),
                    port: int(e, "port") as u16,
                    security_protocol: int(e, "securityProtocol") as i16,
                })
                .collect()
        })
        .unwrap_or_default()
}

/// `ConfigResource.Type` name of a resource type id.
pub fn resource_type_name(t: i8) -> &'static str {
    match t {
        2 => "topic",
        4 => "broker",
        8 => "broker_logger",
        16 => "client_metrics",
        32 => "group",
        _ => "unknown",
    }
}

impl Image {
    /// The topic named `name`.
    pub fn topic_by_name(&self, name: &str) -> Option<&Topic> {
        self.topics.values().find(|t| t.name == name)
    }

    /// The partition count of `name`, when the topic exists.
    pub fn partition_count(&self, name: &str) -> Option<usize> {
        self.topic_by_name(name).map(|t| t.partitions.len())
    }

    fn note(&mut self, offset: i64, record: &str, detail: impl Into<String>) {
        self.notes.push(Note {
            offset,
            record: record.to_string(),
            detail: detail.into(),
        });
    }

    /// Apply one decoded record found at `offset`.
    pub fn apply(&mut self, offset: i64, r: &MetadataRecord) {
        let Some(d) = &r.data else {
            let detail = r.error.clone().unwrap_or_default();
            self.note(offset, &r.name, detail);
            return;
        };
        *self.record_counts.entry(r.name.clone()).or_default() += 1;
        match r.name.as_str() {
            "RegisterBrokerRecord" => {
                let id = int(d, "brokerId") as i32;
                self.brokers.insert(
                    id,
                    Broker {
                        id,
                        epoch: int(d, "brokerEpoch"),
                        incarnation_id: text(d, "incarnationId"),
                        rack: d.get("rack").and_then(Value::as_str).map(String::from),
                        listeners: listeners(d),
                        // RegisterBrokerRecord's Fenced defaults to true.
                        fenced: d.get("fenced").and_then(Value::as_bool).unwrap_or(true),
                        in_controlled_shutdown: d
                            .get("inControlledShutdown")
                            .and_then(Value::as_bool)
                            .unwrap_or(false),
                        log_dirs: strings(d.get("logDirs")).unwrap_or_default(),
                    },
                );
            }
            "UnregisterBrokerRecord" => {
                self.brokers.remove(&(int(d, "brokerId") as i32));
            }
            "FenceBrokerRecord" | "UnfenceBrokerRecord" | "BrokerRegistrationChangeRecord" => {
                let (id, epoch) = if r.name == "BrokerRegistrationChangeRecord" {
                    (int(d, "brokerId") as i32, int(d, "brokerEpoch"))
                } else {
                    (int(d, "id") as i32, int(d, "epoch"))
                };
                let Some(b) = self.brokers.get_mut(&id).filter(|b| b.epoch == epoch) else {
                    self.note(
                        offset,
                        &r.name,
                        format!("broker {id} epoch {epoch} is not registered"),
                    );
                    return;
                };
                match r.name.as_str() {
                    "FenceBrokerRecord" => b.fenced = true,
                    "UnfenceBrokerRecord" => b.fenced = false,
                    _ => {
                        match int(d, "fenced") {
                            1 => b.fenced = true,
                            -1 => b.fenced = false,
                            _ => {}
                        }
                        if int(d, "inControlledShutdown") == 1 {
                            b.in_controlled_shutdown = true;
                        }
                        if let Some(dirs) = strings(d.get("logDirs")).filter(|v| !v.is_empty()) {
                            b.log_dirs = dirs;
                        }
                    }
                }
            }
            "RegisterControllerRecord" => {
                let id = int(d, "controllerId") as i32;
                self.controllers.insert(
                    id,
                    Controller {
                        id,
                        incarnation_id: text(d, "incarnationId"),
                        listeners: listeners(d),
                    },
                );
            }
            "TopicRecord" => {
                let id = text(d, "topicId");
                self.deleted_topics.remove(&id);
                self.topics.insert(
                    id.clone(),
                    Topic {
                        name: text(d, "name"),
                        id,
                        partitions: BTreeMap::new(),
                    },
                );
            }
            "PartitionRecord" => {
                let id = text(d, "topicId");
                let Some(t) = self.topics.get_mut(&id) else {
                    self.note(offset, &r.name, format!("topic id {id} is unknown"));
                    return;
                };
                let reg = PartitionReg {
                    replicas: ints(d.get("replicas")).unwrap_or_default(),
                    isr: ints(d.get("isr")).unwrap_or_default(),
                    removing_replicas: ints(d.get("removingReplicas")).unwrap_or_default(),
                    adding_replicas: ints(d.get("addingReplicas")).unwrap_or_default(),
                    leader: int(d, "leader") as i32,
                    leader_recovery_state: int(d, "leaderRecoveryState") as i8,
                    leader_epoch: int(d, "leaderEpoch") as i32,
                    partition_epoch: int(d, "partitionEpoch") as i32,
                    directories: strings(d.get("directories")).unwrap_or_default(),
                    eligible_leader_replicas: ints(d.get("eligibleLeaderReplicas"))
                        .unwrap_or_default(),
                    last_known_elr: ints(d.get("lastKnownElr")).unwrap_or_default(),
                };
                t.partitions.insert(int(d, "partitionId") as i32, reg);
            }
            "PartitionChangeRecord" => {
                let id = text(d, "topicId");
                let p = int(d, "partitionId") as i32;
                let Some(reg) = self
                    .topics
                    .get_mut(&id)
                    .and_then(|t| t.partitions.get_mut(&p))
                else {
                    self.note(
                        offset,
                        &r.name,
                        format!("partition {p} of topic id {id} is unknown"),
                    );
                    return;
                };
                if let Some(v) = ints(d.get("replicas")) {
                    reg.replicas = v;
                }
                if let Some(v) = strings(d.get("directories")) {
                    reg.directories = v;
                }
                if let Some(v) = ints(d.get("isr")) {
                    reg.isr = v;
                }
                if let Some(v) = ints(d.get("removingReplicas")) {
                    reg.removing_replicas = v;
                }
                if let Some(v) = ints(d.get("addingReplicas")) {
                    reg.adding_replicas = v;
                }
                // Leader: absent means -2, NO_LEADER_CHANGE.
                if let Some(l) = d.get("leader").and_then(Value::as_i64).filter(|l| *l != -2) {
                    reg.leader = l as i32;
                    reg.leader_epoch = reg.leader_epoch.wrapping_add(1);
                }
                // LeaderRecoveryState: absent means -1, no change.
                if let Some(s) = d
                    .get("leaderRecoveryState")
                    .and_then(Value::as_i64)
                    .filter(|s| *s != -1)
                {
                    reg.leader_recovery_state = s as i8;
                }
                if let Some(v) = ints(d.get("eligibleLeaderReplicas")) {
                    reg.eligible_leader_replicas = v;
                }
                if let Some(v) = ints(d.get("lastKnownElr")) {
                    reg.last_known_elr = v;
                }
                reg.partition_epoch = reg.partition_epoch.wrapping_add(1);
            }
            "RemoveTopicRecord" => {
                let id = text(d, "topicId");
                match self.topics.remove(&id) {
                    Some(t) => {
                        self.configs.remove(&(2, t.name.clone()));
                        self.deleted_topics.insert(id, t.name);
                    }
                    None => self.note(offset, &r.name, format!("topic id {id} is unknown")),
                }
            }
            "ConfigRecord" => {
                let key = (int(d, "resourceType") as i8, text(d, "resourceName"));
                let name = text(d, "name");
                match d.get("value").and_then(Value::as_str) {
                    Some(v) => {
                        self.configs
                            .entry(key)
                            .or_default()
                            .insert(name, v.to_string());
                    }
                    None => {
                        if let Some(m) = self.configs.get_mut(&key) {
                            m.remove(&name);
                            if m.is_empty() {
                                self.configs.remove(&key);
                            }
                        }
                    }
                }
            }
            "FeatureLevelRecord" => {
                let name = text(d, "name");
                let level = int(d, "featureLevel") as i16;
                if level == 0 && name != "metadata.version" {
                    self.features.remove(&name);
                } else {
                    self.features.insert(name, level);
                }
            }
            "ProducerIdsRecord" => {
                self.producer_ids = Some(ProducerIds {
                    broker_id: int(d, "brokerId") as i32,
                    broker_epoch: int(d, "brokerEpoch"),
                    next_producer_id: int(d, "nextProducerId"),
                });
            }
            "AccessControlEntryRecord" => {
                self.acls.insert(text(d, "id"));
            }
            "RemoveAccessControlEntryRecord" => {
                self.acls.remove(&text(d, "id"));
            }
            "UserScramCredentialRecord" => {
                self.scram_credentials
                    .insert((text(d, "name"), int(d, "mechanism")));
            }
            "RemoveUserScramCredentialRecord" => {
                self.scram_credentials
                    .remove(&(text(d, "name"), int(d, "mechanism")));
            }
            "DelegationTokenRecord" => {
                self.delegation_tokens.insert(text(d, "tokenId"));
            }
            "RemoveDelegationTokenRecord" => {
                self.delegation_tokens.remove(&text(d, "tokenId"));
            }
            "ClientQuotaRecord" => {
                let entity = d.get("entity").map(Value::to_string).unwrap_or_default();
                let key = (entity, text(d, "key"));
                if d.get("remove").and_then(Value::as_bool) == Some(true) {
                    self.client_quotas.remove(&key);
                } else {
                    let v = d.get("value").and_then(Value::as_f64).unwrap_or(0.0);
                    self.client_quotas.insert(key, v);
                }
            }
            "ClearElrRecord" => {
                // Empty name: every topic (ClearElrRecord.json). A partition
                // with an ELR gets a change that empties both lists, which
                // bumps its partition epoch (TopicDelta).
                let name = text(d, "topicName");
                for t in self
                    .topics
                    .values_mut()
                    .filter(|t| name.is_empty() || t.name == name)
                {
                    for p in t.partitions.values_mut() {
                        if !p.eligible_leader_replicas.is_empty() || !p.last_known_elr.is_empty() {
                            p.eligible_leader_replicas.clear();
                            p.last_known_elr.clear();
                            p.partition_epoch = p.partition_epoch.wrapping_add(1);
                        }
                    }
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn rec(name: &str, data: Value) -> MetadataRecord {
        MetadataRecord {
            frame: None,
            name: name.into(),
            data: Some(data),
            error: None,
        }
    }

    #[test]
    fn partition_change_merges_as_partition_registration_merge() {
        let mut img = Image::default();
        img.apply(0, &rec("TopicRecord", json!({"name": "t", "topicId": "T"})));
        img.apply(
            1,
            &rec(
                "PartitionRecord",
                json!({"partitionId": 0, "topicId": "T", "replicas": [1, 2], "isr": [1, 2],
                       "leader": 1, "leaderEpoch": 4, "partitionEpoch": 7,
                       "eligibleLeaderReplicas": [2]}),
            ),
        );
        // No leader change (absent = -2): leader epoch kept, partition epoch + 1.
        img.apply(
            2,
            &rec(
                "PartitionChangeRecord",
                json!({"partitionId": 0, "topicId": "T", "isr": [1]}),
            ),
        );
        let p = |img: &Image| img.topics["T"].partitions[&0].clone();
        assert_eq!(
            (
                p(&img).leader,
                p(&img).leader_epoch,
                p(&img).partition_epoch
            ),
            (1, 4, 8)
        );
        assert_eq!(p(&img).isr, [1]);
        // An explicit -2 is no change either; a new leader bumps the leader epoch.
        img.apply(
            3,
            &rec(
                "PartitionChangeRecord",
                json!({"partitionId": 0, "topicId": "T", "leader": -2}),
            ),
        );
        assert_eq!((p(&img).leader_epoch, p(&img).partition_epoch), (4, 9));
        img.apply(
            4,
            &rec(
                "PartitionChangeRecord",
                json!({"partitionId": 0, "topicId": "T", "leader": 2}),
            ),
        );
        assert_eq!(
            (
                p(&img).leader,
                p(&img).leader_epoch,
                p(&img).partition_epoch
            ),
            (2, 5, 10)
        );
        // ClearElrRecord for every topic: the ELR goes, the partition epoch moves.
        img.apply(5, &rec("ClearElrRecord", json!({"topicName": ""})));
        assert!(p(&img).eligible_leader_replicas.is_empty());
        assert_eq!(p(&img).partition_epoch, 11);
        // A change for an unknown partition is a note, not a failure.
        img.apply(
            6,
            &rec(
                "PartitionChangeRecord",
                json!({"partitionId": 9, "topicId": "T"}),
            ),
        );
        assert_eq!(img.notes.len(), 1);
        // RemoveTopicRecord drops the topic and its configs, remembering the name.
        img.apply(
            7,
            &rec(
                "ConfigRecord",
                json!({"resourceType": 2, "resourceName": "t", "name": "a", "value": "b"}),
            ),
        );
        img.apply(8, &rec("RemoveTopicRecord", json!({"topicId": "T"})));
        assert!(img.topics.is_empty() && img.configs.is_empty());
        assert_eq!(img.deleted_topics["T"], "t");
    }

    #[test]
    fn broker_changes_need_the_registered_epoch() {
        let mut img = Image::default();
        img.apply(
            0,
            &rec(
                "RegisterBrokerRecord",
                json!({"brokerId": 1, "brokerEpoch": 10, "fenced": true}),
            ),
        );
        // Another epoch: Kafka throws (getBrokerOrThrow); here a note.
        img.apply(1, &rec("UnfenceBrokerRecord", json!({"id": 1, "epoch": 9})));
        assert!(img.brokers[&1].fenced);
        assert_eq!(img.notes.len(), 1);
        img.apply(
            2,
            &rec("UnfenceBrokerRecord", json!({"id": 1, "epoch": 10})),
        );
        assert!(!img.brokers[&1].fenced);
        // BrokerRegistrationChangeRecord: fenced 1 fences, -1 unfences, 0 leaves it.
        img.apply(
            3,
            &rec(
                "BrokerRegistrationChangeRecord",
                json!({"brokerId": 1, "brokerEpoch": 10, "fenced": 1}),
            ),
        );
        assert!(img.brokers[&1].fenced);
        img.apply(
            4,
            &rec(
                "BrokerRegistrationChangeRecord",
                json!({"brokerId": 1, "brokerEpoch": 10, "inControlledShutdown": 1}),
            ),
        );
        assert!(img.brokers[&1].fenced && img.brokers[&1].in_controlled_shutdown);
        img.apply(
            5,
            &rec(
                "UnregisterBrokerRecord",
                json!({"brokerId": 1, "brokerEpoch": 10}),
            ),
        );
        assert!(img.brokers.is_empty());
        // Features: level 0 removes a feature, never metadata.version.
        img.apply(
            6,
            &rec(
                "FeatureLevelRecord",
                json!({"name": "kraft.version", "featureLevel": 1}),
            ),
        );
        img.apply(
            7,
            &rec(
                "FeatureLevelRecord",
                json!({"name": "kraft.version", "featureLevel": 0}),
            ),
        );
        img.apply(
            8,
            &rec(
                "FeatureLevelRecord",
                json!({"name": "metadata.version", "featureLevel": 0}),
            ),
        );
        assert_eq!(img.features.len(), 1);
        assert_eq!(img.features["metadata.version"], 0);
    }
}
