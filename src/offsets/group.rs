//! GroupMetadataValue (offsets-topic record type 2): a classic-protocol
//! group's state, versions 0..=4.
//!
//! After the int16 version: protocolType string, generation int32,
//! protocol string?, leader string?, currentStateTimestamp int64 (v2+),
//! members [memberId string, groupInstanceId string? (v3+), clientId string,
//! clientHost string, rebalanceTimeout int32 (v1+), sessionTimeout int32,
//! subscription bytes, assignment bytes]. v4 is the flexible form of v3.
//! For protocolType `consumer` the subscription and the assignment are the
//! consumer protocol's messages (int16 version, then the struct), read
//! with their schema tables.

use std::borrow::Cow;

use crate::error::DecodeError;
use crate::format::cursor::Cursor;
use crate::format::message::{read_value_version, MessageReader};
use crate::format::schema::Leniency;
use crate::offsets::records::{
    decode_consumer_protocol, CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION,
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

/// Decode a GroupMetadataValue; `at` is its absolute position.
pub fn decode_group_metadata(value: &[u8], at: u64) -> Result<GroupMetadata, DecodeError> {
    let mut c = Cursor::new(value, at);
    let version = read_value_version(&mut c, "GroupMetadataValue", 0..=4)?; // version: int16
    let mut m = MessageReader::new(&mut c, version >= 4);
    let protocol_type = m.string("protocolType")?.into_owned(); // protocolType: string
    let generation = m.c.i32()?; // generation: int32
    let protocol = m.nullable_string("protocol")?.map(Cow::into_owned); // protocol: string?
    let leader = m.nullable_string("leader")?.map(Cow::into_owned); // leader: string?
    let current_state_timestamp = if version >= 2 { Some(m.c.i64()?) } else { None }; // currentStateTimestamp: int64 (v2+)
    let count = m.array_len("members")?; // members: array
    let mut members = Vec::new();
    for _ in 0..count {
        let member_id = m.string("memberId")?.into_owned();
        let group_instance_id = if version >= 3 {
            m.nullable_string("groupInstanceId")?.map(Cow::into_owned)
        } else {
            None
        };
        let client_id = m.string("clientId")?.into_owned();
        let client_host = m.string("clientHost")?.into_owned();
        let rebalance_timeout_ms = if version >= 1 { Some(m.c.i32()?) } else { None };
        let session_timeout_ms = m.c.i32()?;
        let subscription_bytes = m.nullable_bytes("subscription")?;
        let assignment_bytes = m.nullable_bytes("assignment")?;
        m.tagged_fields()?;
        let assignment = match assignment_bytes {
            Some(b) if protocol_type == "consumer" => decode_assignment(b).unwrap_or_default(),
            _ => Vec::new(),
        };
        let subscription = match subscription_bytes {
            Some(b) if protocol_type == "consumer" => decode_subscription(b).ok(),
            _ => None,
        };
        members.push(Member {
            subscription,
            member_id,
            group_instance_id,
            client_id,
            client_host,
            rebalance_timeout_ms,
            session_timeout_ms,
            assignment,
        });
    }
    m.tagged_fields()?;
    Ok(GroupMetadata {
        trailing_bytes: m.c.remaining() as u64,
        lenient: m.lenient,
        version,
        protocol_type,
        generation,
        protocol,
        leader,
        current_state_timestamp,
        members,
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
