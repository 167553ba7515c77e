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
use crate::findings::{Kind, Severity};
pub use crate::log::meta::Uuid;

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
    /// The cordoned log directories (RegisterBrokerRecord v4,
    /// BrokerRegistrationChangeRecord v3); `None` until the broker sends them.
    pub cordoned_log_dirs: Option<Vec<String>>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Controller {
    pub id: i32,
    pub incarnation_id: String,
    pub listeners: Vec<Listener>,
}

// Compact: a cluster's image holds one per partition (boxed slices, ids
// as 16 bytes).
/// A partition's registration (`PartitionRegistration`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PartitionReg {
    pub replicas: Box<[i32]>,
    pub isr: Box<[i32]>,
    pub removing_replicas: Box<[i32]>,
    pub adding_replicas: Box<[i32]>,
    pub leader: i32,
    pub leader_recovery_state: i8,
    pub leader_epoch: i32,
    pub partition_epoch: i32,
    pub directories: Box<[Uuid]>,
    pub eligible_leader_replicas: Box<[i32]>,
    pub last_known_elr: Box<[i32]>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Topic {
    pub name: String,
    pub id: Uuid,
    pub partitions: Partitions,
}

/// A topic's partitions by partition id, in order: a sorted vector (a map
/// node per topic would hold room for eleven).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(transparent)]
pub struct Partitions(Vec<(i32, PartitionReg)>);

impl Partitions {
    fn at(&self, p: i32) -> Result<usize, usize> {
        self.0.binary_search_by_key(&p, |(id, _)| *id)
    }

    pub fn get(&self, p: &i32) -> Option<&PartitionReg> {
        self.at(*p).ok().and_then(|i| self.0.get(i)).map(|(_, r)| r)
    }

    pub fn get_mut(&mut self, p: &i32) -> Option<&mut PartitionReg> {
        let i = self.at(*p).ok()?;
        self.0.get_mut(i).map(|(_, r)| r)
    }

    /// Set partition `p`, returning the registration it replaces.
    pub fn insert(&mut self, p: i32, reg: PartitionReg) -> Option<PartitionReg> {
        match self.at(p) {
            Ok(i) => self
                .0
                .get_mut(i)
                .map(|slot| std::mem::replace(&mut slot.1, reg)),
            Err(i) => {
                // Grow by doubling from one: a topic of one partition holds
                // one (a Vec's first growth makes room for four).
                if self.0.len() == self.0.capacity() {
                    self.0.reserve_exact(self.0.len().max(1));
                }
                self.0.insert(i, (p, reg));
                None
            }
        }
    }

    pub fn len(&self) -> usize {
        self.0.len()
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// `(partition, registration)` in partition order.
    pub fn iter(&self) -> impl Iterator<Item = (&i32, &PartitionReg)> {
        self.0.iter().map(|(p, r)| (p, r))
    }

    pub fn keys(&self) -> impl Iterator<Item = &i32> {
        self.0.iter().map(|(p, _)| p)
    }

    pub fn values_mut(&mut self) -> impl Iterator<Item = &mut PartitionReg> {
        self.0.iter_mut().map(|(_, r)| r)
    }
}

impl<'a> IntoIterator for &'a Partitions {
    type Item = (&'a i32, &'a PartitionReg);
    type IntoIter = std::iter::Map<
        std::slice::Iter<'a, (i32, PartitionReg)>,
        fn(&'a (i32, PartitionReg)) -> (&'a i32, &'a PartitionReg),
    >;

    fn into_iter(self) -> Self::IntoIter {
        self.0.iter().map(|(p, r)| (p, r))
    }
}

/// The latest producer id block (`ProducerIdsImage`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ProducerIds {
    pub broker_id: i32,
    pub broker_epoch: i64,
    pub next_producer_id: i64,
}

/// A part of the image as the views show it.
#[derive(
    Debug,
    Clone,
    Copy,
    PartialEq,
    Eq,
    PartialOrd,
    Ord,
    Hash,
    Serialize,
    serde::Deserialize,
    schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Section {
    Brokers,
    Controllers,
    Topics,
    Configs,
    Features,
    ProducerIds,
    Security,
    /// Any part: a record klog cannot name.
    All,
}

impl Section {
    pub fn name(self) -> &'static str {
        match self {
            Section::Brokers => "brokers",
            Section::Controllers => "controllers",
            Section::Topics => "topics",
            Section::Configs => "configs",
            Section::Features => "features",
            Section::ProducerIds => "producer ids",
            Section::Security => "security",
            Section::All => "all",
        }
    }

    /// `brokers, topics`.
    pub fn list(sections: &[Section]) -> String {
        sections
            .iter()
            .map(|s| s.name())
            .collect::<Vec<_>>()
            .join(", ")
    }

    /// ` (incomplete: brokers, topics; see the findings)`, or nothing.
    pub fn remark(sections: &[Section]) -> String {
        if sections.is_empty() {
            String::new()
        } else {
            format!(
                " (incomplete: {}; see the findings)",
                Section::list(sections)
            )
        }
    }

    /// The part a metadata record type changes.
    pub fn of_record(name: &str) -> Section {
        match name {
            "RegisterBrokerRecord"
            | "UnregisterBrokerRecord"
            | "FenceBrokerRecord"
            | "UnfenceBrokerRecord"
            | "BrokerRegistrationChangeRecord" => Section::Brokers,
            "RegisterControllerRecord" | "UnregisterControllerRecord" => Section::Controllers,
            "TopicRecord"
            | "PartitionRecord"
            | "PartitionChangeRecord"
            | "RemoveTopicRecord"
            | "ClearElrRecord" => Section::Topics,
            "ConfigRecord" => Section::Configs,
            "FeatureLevelRecord" => Section::Features,
            "ProducerIdsRecord" => Section::ProducerIds,
            "AccessControlEntryRecord"
            | "RemoveAccessControlEntryRecord"
            | "UserScramCredentialRecord"
            | "RemoveUserScramCredentialRecord"
            | "DelegationTokenRecord"
            | "RemoveDelegationTokenRecord"
            | "ClientQuotaRecord" => Section::Security,
            _ => Section::All,
        }
    }
}

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

/// The metadata.version feature levels Kafka 4.4 knows
/// (`MetadataVersion`: IBP_3_3_IV3 = 7 … IBP_4_5_IV0 = 34);
/// `MetadataVersion.fromFeatureLevel` throws on any other.
pub const METADATA_VERSION_LEVELS: std::ops::RangeInclusive<i64> = 7..=34;

/// `DirectoryId.MIGRATING` (`new Uuid(0, 0)`).
pub const MIGRATING: Uuid = Uuid::ZERO;

/// `PartitionRegistration.defaultToMigrating`: directories that are empty
/// or all MIGRATING become one MIGRATING per replica.
fn default_to_migrating(dirs: Box<[Uuid]>, replicas: usize) -> Box<[Uuid]> {
    if dirs.iter().all(|d| *d == MIGRATING) {
        vec![MIGRATING; replicas].into_boxed_slice()
    } else {
        dirs
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

fn int(v: &Value, k: &str) -> i64 {
    v.get(k).and_then(Value::as_i64).unwrap_or(0)
}

fn text(v: &Value, k: &str) -> String {
    v.get(k).and_then(Value::as_str).unwrap_or("").to_string()
}

fn ints(v: Option<&Value>) -> Option<Box<[i32]>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(Value::as_i64)
            .map(|x| x as i32)
            .collect()
    })
}

/// A uuid field (its text form in the decoded record).
fn uuid(v: &Value, k: &str) -> Uuid {
    v.get(k)
        .and_then(Value::as_str)
        .and_then(|s| Uuid::parse(s).ok())
        .unwrap_or(Uuid::ZERO)
}

fn uuids(v: Option<&Value>) -> Option<Box<[Uuid]>> {
    v?.as_array().map(|a| {
        a.iter()
            .filter_map(|u| u.as_str().and_then(|s| Uuid::parse(s).ok()))
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
        match (&r.data, r.defect) {
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
                if let Err(p) = self.replay(r, d, &mut problems) {
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
            "RegisterBrokerRecord" => {
                // BrokerRegistration.fromRecord.
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
                        cordoned_log_dirs: strings(d.get("cordonedLogDirs")),
                    },
                );
            }
            "UnregisterBrokerRecord" => {
                self.brokers.remove(&(int(d, "brokerId") as i32));
            }
            "FenceBrokerRecord" | "UnfenceBrokerRecord" | "BrokerRegistrationChangeRecord" => {
                let change = r.name == "BrokerRegistrationChangeRecord";
                let (id, epoch) = if change {
                    (int(d, "brokerId") as i32, int(d, "brokerEpoch"))
                } else {
                    (int(d, "id") as i32, int(d, "epoch"))
                };
                // ClusterDelta.getBrokerOrThrow.
                let b = match self.brokers.get_mut(&id) {
                    Some(b) if b.epoch == epoch => b,
                    Some(b) => {
                        return Err(Problem::rejected(format!(
                            "{}: broker {id} is registered with epoch {}, not {epoch} (ClusterDelta.getBrokerOrThrow throws)",
                            r.name, b.epoch
                        )))
                    }
                    None => {
                        return Err(Problem::rejected(format!(
                            "{}: broker {id} is not registered (ClusterDelta.getBrokerOrThrow throws)",
                            r.name
                        )))
                    }
                };
                match r.name.as_str() {
                    "FenceBrokerRecord" => b.fenced = true,
                    "UnfenceBrokerRecord" => b.fenced = false,
                    _ => {
                        // BrokerRegistrationFencingChange and
                        // BrokerRegistrationInControlledShutdownChange:
                        // any other value throws.
                        let fenced = match int(d, "fenced") {
                            1 => Some(true),
                            -1 => Some(false),
                            0 => None,
                            v => {
                                return Err(Problem::rejected(format!(
                                    "{}: fenced {v} is not 1, 0 or -1 (BrokerRegistrationFencingChange.fromValue)",
                                    r.name
                                )))
                            }
                        };
                        let shutdown = match int(d, "inControlledShutdown") {
                            1 => true,
                            0 => false,
                            v => {
                                return Err(Problem::rejected(format!(
                                    "{}: inControlledShutdown {v} is not 0 or 1 \
                                     (BrokerRegistrationInControlledShutdownChange.fromValue)",
                                    r.name
                                )))
                            }
                        };
                        if let Some(f) = fenced {
                            b.fenced = f;
                        }
                        if shutdown {
                            b.in_controlled_shutdown = true;
                        }
                        if let Some(dirs) = strings(d.get("logDirs")).filter(|v| !v.is_empty()) {
                            b.log_dirs = dirs;
                        }
                        // Optional.ofNullable(record.cordonedLogDirs()): null is no change.
                        if let Some(dirs) = strings(d.get("cordonedLogDirs")) {
                            b.cordoned_log_dirs = Some(dirs);
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
            "UnregisterControllerRecord" => {
                // ClusterDelta.replay(UnregisterControllerRecord): removed, known or not.
                self.controllers.remove(&(int(d, "controllerId") as i32));
            }
            "TopicRecord" => {
                // TopicsDelta.replay: a new topic image, no partitions (a
                // second record for an id starts it again).
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
            }
            "PartitionRecord" => {
                let id = uuid(d, "topicId");
                let p = int(d, "partitionId") as i32;
                let Some(t) = self.topics.get_mut(&id) else {
                    return Err(Problem::rejected(format!(
                        "PartitionRecord: partition {p} of topic id {id}, which is unknown (TopicsDelta.getOrCreateTopicDelta \
                         has no topic image for it)"
                    )));
                };
                let replicas = ints(d.get("replicas")).unwrap_or_default();
                let dirs = uuids(d.get("directories")).unwrap_or_default();
                let lrs = int(d, "leaderRecoveryState");
                // LeaderRecoveryState.of: 0 or 1, else it throws.
                if !(0..=1).contains(&lrs) {
                    return Err(Problem::rejected(format!(
                        "PartitionRecord: {}-{p} has leaderRecoveryState {lrs} (LeaderRecoveryState.of throws)",
                        t.name
                    )));
                }
                // PartitionRegistration.checkDirectories(PartitionRecord).
                if !dirs.is_empty() && dirs.len() != replicas.len() {
                    return Err(Problem::rejected(format!(
                        "PartitionRecord: {}-{p} has {} replicas and {} directories (InvalidReplicaDirectoriesException)",
                        t.name,
                        replicas.len(),
                        dirs.len()
                    )));
                }
                let reg = PartitionReg {
                    directories: default_to_migrating(dirs, replicas.len()),
                    replicas,
                    isr: ints(d.get("isr")).unwrap_or_default(),
                    removing_replicas: ints(d.get("removingReplicas")).unwrap_or_default(),
                    adding_replicas: ints(d.get("addingReplicas")).unwrap_or_default(),
                    leader: int(d, "leader") as i32,
                    leader_recovery_state: lrs as i8,
                    leader_epoch: int(d, "leaderEpoch") as i32,
                    partition_epoch: int(d, "partitionEpoch") as i32,
                    eligible_leader_replicas: ints(d.get("eligibleLeaderReplicas"))
                        .unwrap_or_default(),
                    last_known_elr: ints(d.get("lastKnownElr")).unwrap_or_default(),
                };
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
            }
            "PartitionChangeRecord" => {
                let id = uuid(d, "topicId");
                let p = int(d, "partitionId") as i32;
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
            }
            "RemoveTopicRecord" => {
                let id = uuid(d, "topicId");
                match self.take_topic(&id) {
                    Some(t) => {
                        self.configs.remove(&(2, t.name.clone()));
                        self.deleted_topics.insert(id, t.name);
                    }
                    None => {
                        return Err(Problem::rejected(format!(
                        "RemoveTopicRecord: topic id {id} is unknown (TopicsDelta.replay throws)"
                    )))
                    }
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
                let level = int(d, "featureLevel");
                match name.as_str() {
                    "metadata.version" if !METADATA_VERSION_LEVELS.contains(&level) => {
                        return Err(Problem {
                            incomplete: Some(Section::All),
                            ..Problem::rejected(format!(
                                "FeatureLevelRecord: metadata.version level {level} is not one Kafka 4.4 knows \
                                 ({}..={}; MetadataVersion.fromFeatureLevel throws): a newer Kafka wrote this log",
                                METADATA_VERSION_LEVELS.start(),
                                METADATA_VERSION_LEVELS.end()
                            ))
                        });
                    }
                    "metadata.version" => {
                        self.features.insert(name, level as i16);
                    }
                    // FeaturesDelta.replay skips kraft.version (KAFKA-18979).
                    "kraft.version" => {}
                    _ if level == 0 => {
                        self.features.remove(&name);
                    }
                    _ => {
                        self.features.insert(name, level as i16);
                    }
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
                // Empty name: every topic (ClearElrRecord.json); a name no
                // topic has throws (TopicsDelta.replay(ClearElrRecord)). A
                // partition with an ELR gets a change that empties both
                // lists, which bumps its partition epoch (TopicDelta).
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
            }
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
            format!("{} does not decode: {e}", r.name),
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
    // LeaderRecoveryState: absent means -1, no change; another value than
    // 0 or 1 throws (LeaderRecoveryState.changeTo, of).
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
    // Leader: absent means -2, NO_LEADER_CHANGE.
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
