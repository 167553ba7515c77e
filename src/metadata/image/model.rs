//! What the image holds: broker and controller registrations, topics and
//! their partition registrations, the producer id block, and the parts of
//! the image as the views name them ([`Section`]).

use serde::Serialize;

use super::Uuid;

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
