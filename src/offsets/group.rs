//! GroupMetadataValue (offsets-topic record type 2): a classic-protocol
//! group's state, versions 0..=4.
//!
//! After the int16 version: protocolType string, generation int32,
//! protocol string?, leader string?, currentStateTimestamp int64 (v2+),
//! members [memberId string, groupInstanceId string? (v3+), clientId string,
//! clientHost string, rebalanceTimeout int32 (v1+), sessionTimeout int32,
//! subscription bytes, assignment bytes]. v4 is the flexible form of v3.
//! For protocolType `consumer` the subscription and the assignment are the
//! consumer protocol's messages (int16 version, then the struct). All are
//! read with their schema tables.

use base64::Engine;
use serde_json::Value;

use crate::error::DecodeError;
use crate::format::cursor::Cursor;
use crate::format::message::read_value_version;
use crate::format::schema::{Fields, Leniency};
use crate::offsets::records::{
    decode_consumer_protocol, CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION,
    GROUP_METADATA_VALUE,
};

/// One member of a classic group.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Member {
    pub member_id: String,
    pub group_instance_id: Option<String>,
    pub client_id: String,
    pub client_host: String,
    pub rebalance_timeout_ms: Option<i32>,
    pub session_timeout_ms: i32,
    /// The partitions assigned to this member, when the group uses the
    /// consumer protocol and the assignment decodes: (topic, partitions).
    pub assignment: Vec<(String, Vec<i32>)>,
    /// The topics the member subscribes to, when the group uses the
    /// consumer protocol and the subscription decodes
    /// (`ClassicGroup.computeSubscribedTopics`).
    pub subscription: Option<Vec<String>>,
}

/// A decoded GroupMetadataValue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GroupMetadata {
    /// The version stored in the record.
    pub version: i16,
    pub protocol_type: String,
    pub generation: i32,
    pub protocol: Option<String>,
    pub leader: Option<String>,
    /// As stored: `None` before v2, which has no such field; -1 (the
    /// field's default) means "not set". [`GroupMetadata::state_timestamp`]
    /// is the time Kafka loads.
    pub current_state_timestamp: Option<i64>,
    pub members: Vec<Member>,
    /// Bytes after the last field, which the broker's reader ignores.
    pub trailing_bytes: u64,
    /// Where the value was read as Kafka's generated reader reads it and a
    /// strict reading refuses it ([`Leniency`]).
    pub lenient: Vec<Leniency>,
}

impl GroupMetadata {
    /// The same metadata with every name (protocol, leader, member and
    /// instance ids, client ids and hosts, topics) bounded for display
    /// ([`bounded`](crate::format::escape::bounded)).
    pub fn bounded(self) -> Self {
        let b = |s: String| crate::format::escape::bounded(&s).into_owned();
        GroupMetadata {
            protocol_type: b(self.protocol_type),
            protocol: self.protocol.map(b),
            leader: self.leader.map(b),
            members: self
                .members
                .into_iter()
                .map(|m| Member {
                    member_id: b(m.member_id),
                    group_instance_id: m.group_instance_id.map(b),
                    client_id: b(m.client_id),
                    client_host: b(m.client_host),
                    assignment: m.assignment.into_iter().map(|(t, ps)| (b(t), ps)).collect(),
                    subscription: m.subscription.map(|ts| ts.into_iter().map(b).collect()),
                    ..m
                })
                .collect(),
            ..self
        }
    }

    /// When the group entered its current state, as the coordinator loads
    /// it: absent before v2 and when -1 (`GroupMetadataManager.replay`:
    /// `currentStateTimestamp() == -1 ? Optional.empty() : ...`; v0 and v1
    /// read the field's default, -1). An Empty group without it expires
    /// offsets from their commit timestamps (`ClassicGroup.offsetExpirationCondition`).
    pub fn state_timestamp(&self) -> Option<i64> {
        self.current_state_timestamp.filter(|&t| t != -1)
    }
}

/// Decode a GroupMetadataValue (the table [`GROUP_METADATA_VALUE`], read
/// as Kafka's generated reader reads it); `at` is its absolute position.
pub fn decode_group_metadata(value: &[u8], at: u64) -> Result<GroupMetadata, DecodeError> {
    let mut c = Cursor::new(value, at);
    let schema = &GROUP_METADATA_VALUE;
    let versions = schema.versions.0..=schema.versions.1;
    let version = read_value_version(&mut c, schema.name, versions)?; // version: int16
    let read = schema.decode_prefix_any_version_as_kafka(&mut c, version)?;
    let d = Fields(&read.data);
    let protocol_type = d.string("protocolType");
    let members = d.get("members").and_then(Value::as_array);
    let members = members.into_iter().flatten().map(|m| {
        let m = Fields(m);
        // subscription, assignment: bytes (base64 in the decoded message).
        let bytes = |name| base64::engine::general_purpose::STANDARD.decode(m.string(name));
        let consumer = protocol_type == "consumer";
        Member {
            member_id: m.string("memberId"),
            group_instance_id: m.opt_string("groupInstanceId"), // v3+
            client_id: m.string("clientId"),
            client_host: m.string("clientHost"),
            rebalance_timeout_ms: m.opt_int("rebalanceTimeout").map(|t| t as i32), // v1+
            session_timeout_ms: m.int("sessionTimeout") as i32,
            assignment: match bytes("assignment") {
                Ok(b) if consumer => decode_assignment(&b).unwrap_or_default(),
                _ => Vec::new(),
            },
            subscription: match bytes("subscription") {
                Ok(b) if consumer => decode_subscription(&b).ok(),
                _ => None,
            },
        }
    });
    Ok(GroupMetadata {
        version,
        members: members.collect(),
        generation: d.int("generation") as i32,
        protocol: d.opt_string("protocol"),
        leader: d.opt_string("leader"),
        current_state_timestamp: d.opt_int("currentStateTimestamp"), // v2+
        protocol_type,
        trailing_bytes: c.remaining() as u64,
        lenient: read.lenient,
    })
}

/// The subscribed topics of a ConsumerProtocolSubscription, as the group
/// coordinator reads them (`ClassicGroup.computeSubscribedTopics`: the
/// int16 version, whatever it is, then the struct at version 0, "the
/// based prefix of all versions", with the generated reader; the schema
/// table [`CONSUMER_PROTOCOL_SUBSCRIPTION`]).
fn decode_subscription(bytes: &[u8]) -> Result<Vec<String>, DecodeError> {
    let mut c = Cursor::new(bytes, 0);
    c.i16()?; // version: int16 (ConsumerProtocol.deserializeVersion)
    let v = CONSUMER_PROTOCOL_SUBSCRIPTION
        .decode_prefix_as_kafka(&mut c, 0)?
        .data;
    Ok(v.get("topics")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|t| t.as_str().map(str::to_string))
        .collect())
}

/// The assigned partitions of a ConsumerProtocolAssignment (the schema
/// table [`CONSUMER_PROTOCOL_ASSIGNMENT`]).
fn decode_assignment(bytes: &[u8]) -> Result<Vec<(String, Vec<i32>)>, DecodeError> {
    let (_, v) = decode_consumer_protocol(&CONSUMER_PROTOCOL_ASSIGNMENT, bytes, 0)?;
    let ints = |p: &serde_json::Value| -> Vec<i32> {
        p.as_array()
            .into_iter()
            .flatten()
            .filter_map(|n| n.as_i64().and_then(|n| i32::try_from(n).ok()))
            .collect()
    };
    Ok(v.get("assignedPartitions")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .map(|tp| {
            let field = |name| tp.get(name).unwrap_or(&serde_json::Value::Null);
            let topic = field("topic").as_str().unwrap_or_default().to_string();
            (topic, ints(field("partitions")))
        })
        .collect())
}
