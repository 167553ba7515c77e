//! The cluster image: metadata records replayed in order, as the broker's
//! `MetadataDelta` applies them (`metadata/src/main/java/org/apache/kafka/image/`).
//!
//! - brokers (`ClusterDelta`): RegisterBrokerRecord replaces the
//!   registration; UnregisterBrokerRecord removes it; Fence/Unfence and
//!   BrokerRegistrationChangeRecord change a registration of the same epoch
//!   (fenced: 1 fence, -1 unfence, 0 no change —
//!   `BrokerRegistrationFencingChange`; inControlledShutdown 1 sets it, 0
//!   leaves it — `BrokerRegistrationInControlledShutdownChange`; a non-empty
//!   logDirs replaces the directories; a non-null cordonedLogDirs replaces
//!   the cordoned ones). A change for an unknown broker or another epoch,
//!   or another fenced or inControlledShutdown value, throws in Kafka
//!   (`getBrokerOrThrow`, `fromValue(..).orElseThrow`).
//! - controllers: RegisterControllerRecord replaces the registration,
//!   UnregisterControllerRecord removes it.
//! - topics (`TopicsDelta`): TopicRecord adds a topic; PartitionRecord sets a
//!   partition; PartitionChangeRecord merges as `PartitionRegistration.merge`:
//!   each list present replaces the old one, a leader other than -2
//!   (`NO_LEADER_CHANGE`) becomes leader and bumps the leader epoch, the
//!   partition epoch always goes up by one; directories that are absent or
//!   all MIGRATING become one MIGRATING per replica (`defaultToMigrating`);
//!   RemoveTopicRecord drops the topic and its partitions.
//! - configs (`ConfigurationsDelta`): a null value deletes the key.
//! - features (`FeaturesDelta`): level 0 removes a feature other than
//!   metadata.version; kraft.version is not kept (KAFKA-18979); a
//!   metadata.version level Kafka does not know throws
//!   (`MetadataVersion.fromFeatureLevel`).
//! - producer ids (`ProducerIdsDelta`): the latest ProducerIdsRecord.
//! - ACLs, SCRAM credentials, delegation tokens, client quotas: kept by key
//!   (their secrets are not).
//!
//! What Kafka's replay throws on is a [`Problem`] of kind
//! `metadata_replay_rejected` and leaves the image as it was: a controller
//! stops there (its metadata loader's fault handler is fatal), a broker
//! logs it and goes on without the record (`SharedServer`,
//! `metadataLoaderFaultHandler`). A record klog cannot read as it was
//! meant (an unknown apiKey, a newer version) marks the parts of the image
//! it may touch as incomplete ([`Section`]).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use super::records::{Defect, MetadataRecord};
use crate::log::findings::{Kind, Severity};
pub use crate::log::meta::Uuid;

mod brokers;
mod fields;
mod model;
mod settings;
mod topics;

pub use model::{
    Broker, Controller, Listener, PartitionReg, Partitions, ProducerIds, Section, Topic,
};
pub use settings::METADATA_VERSION_LEVELS;
pub use topics::MIGRATING;

/// What applying one record found, as Kafka would react to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub kind: Kind,
    pub severity: Severity,
    pub detail: String,
    /// Whether the record is left out of the image.
    pub not_applied: bool,
    /// The part of the image klog could not build as the record meant it.
    pub incomplete: Option<Section>,
}

impl Problem {
    /// Kafka's replay throws: the record is not applied.
    pub fn rejected(detail: impl Into<String>) -> Problem {
        Problem {
            kind: Kind::MetadataReplayRejected,
            severity: Kind::MetadataReplayRejected.severity(),
            detail: detail.into(),
            not_applied: true,
            incomplete: None,
        }
    }
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
    pub topics: BTreeMap<Uuid, Topic>,
    /// Topic ids removed by a RemoveTopicRecord, with their names.
    pub deleted_topics: BTreeMap<Uuid, String>,
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
    /// The records not applied.
    pub notes: Vec<Note>,
    /// The parts of the image klog could not build in full.
    pub incomplete: BTreeSet<Section>,
    /// Topic ids by the hash of their name ([`name_key`]): lookups by name
    /// without a second copy of every name.
    by_name: BTreeSet<(u64, Uuid)>,
}

/// The key of a topic name in the name index: a hash fixed across runs
/// (SipHash with zero keys), the names themselves compared on a match.
fn name_key(name: &str) -> u64 {
    use std::hash::{Hash, Hasher};
    #[allow(deprecated)]
    let mut h = std::hash::SipHasher::new();
    name.hash(&mut h);
    h.finish()
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
    /// The topic named `name` (the one with the highest id, should two be).
    pub fn topic_by_name(&self, name: &str) -> Option<&Topic> {
        let key = name_key(name);
        self.by_name
            .range((key, Uuid::ZERO)..=(key, Uuid([0xff; 16])))
            .rev()
            .filter_map(|(_, id)| self.topics.get(id))
            .find(|t| t.name == name)
    }

    /// Add or replace a topic, keeping the name index.
    fn put_topic(&mut self, t: Topic) -> Option<Topic> {
        self.by_name.insert((name_key(&t.name), t.id));
        let old = self.topics.insert(t.id, t);
        if let Some(o) = &old {
            if self.topics.get(&o.id).is_some_and(|n| n.name != o.name) {
                self.by_name.remove(&(name_key(&o.name), o.id));
            }
        }
        old
    }

    /// Remove a topic, keeping the name index.
    fn take_topic(&mut self, id: &Uuid) -> Option<Topic> {
        let t = self.topics.remove(id)?;
        self.by_name.remove(&(name_key(&t.name), t.id));
        Some(t)
    }

    /// The partition count of `name`, when the topic exists.
    pub fn partition_count(&self, name: &str) -> Option<usize> {
        self.topic_by_name(name).map(|t| t.partitions.len())
    }

    /// Apply one decoded record found at `offset`, as `MetadataDelta.replay`
    /// does; what Kafka would reject or klog cannot read as it was meant is
    /// returned (and a record not applied is listed in `notes`).
    pub fn apply(&mut self, offset: i64, r: &MetadataRecord) -> Vec<Problem> {
        let mut problems = Vec::new();
        match (r.data_as_read(), r.defect) {
            (Some(d), _) => {
                if let (Some(f), Some(read_as)) = (r.frame, r.read_as) {
                    problems.push(Problem {
                        kind: Kind::NewerMetadataRecord,
                        severity: Kind::NewerMetadataRecord.severity(),
                        detail: format!(
                            "{} v{} is newer than v{read_as}, the newest klog knows: Kafka 4.4 reads it with the v{read_as} \
                             layout (its generated {}.read checks no version) and applies it, and so does klog, \
                             without whatever the newer version added",
                            r.name, f.version, r.name
                        ),
                        not_applied: false,
                        incomplete: Some(Section::of_record(&r.name)),
                    });
                }
                for l in &r.lenient {
                    problems.push(Problem {
                        kind: Kind::of_decode(&l.defect.kind),
                        severity: Severity::Warning,
                        detail: format!(
                            "{}: {l}; applied as Kafka's loader reads it (the generated {}.read)",
                            r.name, r.name
                        ),
                        not_applied: false,
                        incomplete: None,
                    });
                }
                if let Err(p) = self.replay(r, &d, &mut problems) {
                    problems.push(p);
                }
            }
            (None, defect) => problems.push(unreadable(r, defect)),
        }
        for p in problems.iter().filter(|p| p.not_applied) {
            self.notes.push(Note {
                offset,
                record: r.name.clone(),
                detail: p.detail.clone(),
            });
        }
        if problems.iter().all(|p| !p.not_applied) {
            *self.record_counts.entry(r.name.clone()).or_default() += 1;
        }
        self.incomplete
            .extend(problems.iter().filter_map(|p| p.incomplete));
        problems
    }

    /// The record's change to the image (`MetadataDelta.replay` and the
    /// deltas it calls), or why Kafka refuses it; what a record applied
    /// leaves that no controller writes goes to `problems`.
    fn replay(
        &mut self,
        r: &MetadataRecord,
        d: &Value,
        problems: &mut Vec<Problem>,
    ) -> Result<(), Problem> {
        match r.name.as_str() {
            "RegisterBrokerRecord" => self.register_broker(d),
            "UnregisterBrokerRecord" => {
                self.brokers.remove(&(fields::int(d, "brokerId") as i32));
            }
            "FenceBrokerRecord" | "UnfenceBrokerRecord" | "BrokerRegistrationChangeRecord" => {
                self.change_broker(&r.name, d)?;
            }
            "RegisterControllerRecord" => self.register_controller(d),
            "UnregisterControllerRecord" => {
                // ClusterDelta.replay(UnregisterControllerRecord): removed, known or not.
                self.controllers
                    .remove(&(fields::int(d, "controllerId") as i32));
            }
            "TopicRecord" => self.add_topic(d)?,
            "PartitionRecord" => self.set_partition(d, problems)?,
            "PartitionChangeRecord" => self.change_partition(d, problems)?,
            "RemoveTopicRecord" => self.remove_topic(d)?,
            "ClearElrRecord" => self.clear_elr(d)?,
            "ConfigRecord" => self.set_config(d),
            "FeatureLevelRecord" => self.set_feature_level(d)?,
            "ProducerIdsRecord" => self.set_producer_ids(d),
            name if Section::of_record(name) == Section::Security => self.apply_security(name, d),
            // NoOpRecord, ZkMigrationStateRecord: nothing to replay
            // (MetadataDelta.replay); the transaction records are the
            // loader's (MetadataBatchLoader).
            _ => {}
        }
        Ok(())
    }
}

/// A record klog cannot decode: Kafka's `AbstractApiMessageSerde.read`
/// throws `MetadataParseException`, so its loader fails on it.
fn unreadable(r: &MetadataRecord, defect: Option<Defect>) -> Problem {
    let (kind, what) = match defect {
        Some(Defect::UnknownApiKey(key)) => (
            Kind::UnknownMetadataRecord,
            format!("apiKey {key} is not a metadata record type Kafka 4.4 or klog knows (MetadataRecordType.fromId throws)"),
        ),
        Some(Defect::Malformed(e)) => (
            Kind::of_decode(&e.kind),
            format!(
                "{} does not decode: {}",
                r.name,
                r.error.clone().unwrap_or_else(|| e.to_string())
            ),
        ),
        None => (Kind::UnknownMetadataRecord, format!("{} does not decode", r.name)),
    };
    Problem {
        kind,
        severity: Severity::Error,
        detail: format!(
            "{what}; Kafka's metadata loader fails on it (AbstractApiMessageSerde.read throws MetadataParseException): \
             a controller stops, a broker loses the batch"
        ),
        not_applied: true,
        incomplete: Some(match defect {
            Some(Defect::Malformed(_)) if r.frame.is_some() => Section::of_record(&r.name),
            _ => Section::All,
        }),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// A topic id, as the decoded records give it (text).
    const T: &str = "dG9waWMtdC1pZC0wMDAwMQ";

    fn id() -> Uuid {
        Uuid::parse(T).unwrap()
    }

    fn rec(name: &str, data: Value) -> MetadataRecord {
        MetadataRecord {
            frame: None,
            name: name.into(),
            data: Some(data),
            error: None,
            defect: None,
            read_as: None,
            lenient: Vec::new(),
        }
    }

    #[test]
    fn partition_change_merges_as_partition_registration_merge() {
        let mut img = Image::default();
        img.apply(0, &rec("TopicRecord", json!({"name": "t", "topicId": T})));
        img.apply(
            1,
            &rec(
                "PartitionRecord",
                json!({"partitionId": 0, "topicId": T, "replicas": [1, 2], "isr": [1, 2],
                       "leader": 1, "leaderEpoch": 4, "partitionEpoch": 7,
                       "eligibleLeaderReplicas": [2]}),
            ),
        );
        // No leader change (absent = -2): leader epoch kept, partition epoch + 1.
        img.apply(
            2,
            &rec(
                "PartitionChangeRecord",
                json!({"partitionId": 0, "topicId": T, "isr": [1]}),
            ),
        );
        let p = |img: &Image| img.topics[&id()].partitions.get(&0).unwrap().clone();
        assert_eq!(
            (
                p(&img).leader,
                p(&img).leader_epoch,
                p(&img).partition_epoch
            ),
            (1, 4, 8)
        );
        assert_eq!(*p(&img).isr, [1]);
        // An explicit -2 is no change either; a new leader bumps the leader epoch.
        img.apply(
            3,
            &rec(
                "PartitionChangeRecord",
                json!({"partitionId": 0, "topicId": T, "leader": -2}),
            ),
        );
        assert_eq!((p(&img).leader_epoch, p(&img).partition_epoch), (4, 9));
        img.apply(
            4,
            &rec(
                "PartitionChangeRecord",
                json!({"partitionId": 0, "topicId": T, "leader": 2}),
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
                json!({"partitionId": 9, "topicId": T}),
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
        img.apply(8, &rec("RemoveTopicRecord", json!({"topicId": T})));
        assert!(img.topics.is_empty() && img.configs.is_empty());
        assert_eq!(img.deleted_topics[&id()], "t");
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
        // Features: level 0 removes a feature; kraft.version is not kept
        // (FeaturesDelta, KAFKA-18979); a metadata.version level Kafka does
        // not know is refused (MetadataVersion.fromFeatureLevel).
        let feature = |img: &mut Image, name: &str, level: i64| {
            img.apply(
                6,
                &rec(
                    "FeatureLevelRecord",
                    json!({"name": name, "featureLevel": level}),
                ),
            )
        };
        assert!(feature(&mut img, "group.version", 1).is_empty());
        assert!(feature(&mut img, "kraft.version", 1).is_empty());
        assert_eq!(img.features.keys().collect::<Vec<_>>(), ["group.version"]);
        assert!(feature(&mut img, "group.version", 0).is_empty());
        assert!(img.features.is_empty());
        assert!(feature(&mut img, "metadata.version", 33).is_empty());
        let refused = feature(&mut img, "metadata.version", 0);
        assert_eq!(refused[0].kind, Kind::MetadataReplayRejected);
        assert_eq!(img.features["metadata.version"], 33);
    }
}
