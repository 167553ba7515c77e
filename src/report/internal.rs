//! Keys and values of Kafka's internal topics, decoded for `dump-segment`:
//! the offsets topic (`__offsets`, `__consumer_offsets`) and the
//! transaction coordinator's `__transaction_state`, the share coordinator's
//! `__share_group_state`, the KRaft metadata
//! log (`__cluster_metadata-0`, its `<offset>-<epoch>.checkpoint` snapshots
//! and `bootstrap.checkpoint`), and tiered storage's
//! `__remote_log_metadata`.

use std::borrow::Cow;

use kaen_log::format::schema::Leniency;
use kaen_log::metadata::records as metadata;
use kaen_log::offsets::group::{decode_group_metadata, GroupMetadata};
use kaen_log::offsets::records as coordinator;
use kaen_log::offsets::{
    decode_key_and_rest, decode_offset_commit_value_of, is_offsets_topic, OffsetCommitValue,
    OffsetsKey,
};
use kaen_log::txn::txnlog::{self, status_name, TransactionMetadata, TRANSACTION_STATE_TOPIC};
use serde::Serialize;
use serde_json::Value;

/// Which internal topic a partition folder belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Internal {
    Offsets,
    TransactionState,
    ClusterMetadata,
    ShareGroupState,
    RemoteLogMetadata,
}

impl Internal {
    /// The internal topic named `topic`, if it is one.
    pub fn of_topic(topic: &str) -> Option<Internal> {
        if is_offsets_topic(topic) {
            Some(Internal::Offsets)
        } else if topic == TRANSACTION_STATE_TOPIC {
            Some(Internal::TransactionState)
        } else if topic == coordinator::SHARE_GROUP_STATE_TOPIC {
            Some(Internal::ShareGroupState)
        } else if topic == kaen_log::metadata::METADATA_TOPIC {
            Some(Internal::ClusterMetadata)
        } else if topic == kaen_log::tiered::REMOTE_LOG_METADATA_TOPIC {
            Some(Internal::RemoteLogMetadata)
        } else {
            None
        }
    }
}

/// A decoded internal-topic record as `dump-segment` writes it under
/// `decoded`: a record decoded by one of the library's schema tables
/// (metadata, coordinator records), an error, or a key and its value.
#[derive(Serialize)]
#[serde(untagged)]
pub enum Decoded<'a> {
    Schema(Value),
    Coordinator(coordinator::CoordinatorRecord),
    Error(Failed),
    Record {
        key: KeyJson<'a>,
        #[serde(skip_serializing_if = "Option::is_none")]
        value: Option<ValueJson>,
        /// Where the key and value were read as Kafka's generated readers
        /// read them and a strict reading refuses them
        /// ([`kaen_log::format::schema::Leniency`]), in words.
        #[serde(skip_serializing_if = "Vec::is_empty")]
        lenient: Vec<String>,
    },
}

/// What did not decode: `{"error": ...}`.
#[derive(Serialize)]
pub struct Failed {
    error: String,
}

impl Failed {
    fn new(error: impl ToString) -> Self {
        Failed {
            error: error.to_string(),
        }
    }
}

#[derive(Serialize)]
#[serde(untagged)]
pub enum KeyJson<'a> {
    Offsets(OffsetsKeyJson<'a>),
    Transaction { transactional_id: String },
    Error(Failed),
}

/// An offsets-topic key of a record type this module decodes itself.
#[derive(Serialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OffsetsKeyJson<'a> {
    OffsetCommit {
        version: i16,
        group: Cow<'a, str>,
        topic: Cow<'a, str>,
        partition: i32,
    },
    GroupMetadata {
        version: i16,
        group: Cow<'a, str>,
    },
}

#[derive(Serialize)]
#[serde(untagged)]
pub enum ValueJson {
    /// `"tombstone"`: a null value.
    Tombstone(&'static str),
    Group(GroupJson),
    Commit(CommitJson),
    Transaction(TransactionJson),
    Error(Failed),
}

impl ValueJson {
    /// A null value as `"tombstone"`, else what `decode` makes of the bytes.
    fn of<T>(
        value: Option<&[u8]>,
        decode: impl FnOnce(&[u8]) -> Result<T, kaen_log::DecodeError>,
        json: impl FnOnce(T) -> ValueJson,
    ) -> ValueJson {
        match value.map(decode) {
            None => ValueJson::Tombstone("tombstone"),
            Some(Ok(v)) => json(v),
            Some(Err(e)) => ValueJson::Error(Failed::new(e)),
        }
    }
}

#[derive(Serialize)]
pub struct GroupJson {
    version: i16,
    protocol_type: String,
    generation: i32,
    protocol: Option<String>,
    leader: Option<String>,
    current_state_timestamp: Option<i64>,
    members: Vec<MemberJson>,
}

#[derive(Serialize)]
pub struct MemberJson {
    member_id: String,
    group_instance_id: Option<String>,
    client_id: String,
    client_host: String,
    rebalance_timeout_ms: Option<i32>,
    session_timeout_ms: i32,
    assignment: Vec<TopicPartitions>,
}

#[derive(Serialize)]
pub struct TopicPartitions {
    topic: String,
    partitions: Vec<i32>,
}

fn topic_partitions(list: Vec<(String, Vec<i32>)>) -> Vec<TopicPartitions> {
    list.into_iter()
        .map(|(topic, partitions)| TopicPartitions { topic, partitions })
        .collect()
}

#[derive(Serialize)]
pub struct CommitJson {
    version: i16,
    offset: i64,
    leader_epoch: i32,
    metadata: String,
    commit_timestamp: i64,
    expire_timestamp: Option<i64>,
    /// v4's topicId (Kafka 4.1+), when written.
    #[serde(skip_serializing_if = "Option::is_none")]
    topic_id: Option<String>,
}

#[derive(Serialize)]
pub struct TransactionJson {
    version: i16,
    producer_id: i64,
    producer_epoch: i16,
    timeout_ms: i32,
    state: &'static str,
    partitions: Option<Vec<TopicPartitions>>,
    last_update_timestamp: i64,
    start_timestamp: i64,
    /// v1 tagged fields, at their defaults when absent (0, -1, -1, -1).
    client_transaction_version: i16,
    previous_producer_id: i64,
    next_producer_id: i64,
    next_producer_epoch: i16,
}

impl From<GroupMetadata> for GroupJson {
    fn from(g: GroupMetadata) -> Self {
        GroupJson {
            version: g.version,
            protocol_type: g.protocol_type,
            generation: g.generation,
            protocol: g.protocol,
            leader: g.leader,
            current_state_timestamp: g.current_state_timestamp,
            members: g
                .members
                .into_iter()
                .map(|m| MemberJson {
                    member_id: m.member_id,
                    group_instance_id: m.group_instance_id,
                    client_id: m.client_id,
                    client_host: m.client_host,
                    rebalance_timeout_ms: m.rebalance_timeout_ms,
                    session_timeout_ms: m.session_timeout_ms,
                    assignment: topic_partitions(m.assignment),
                })
                .collect(),
        }
    }
}

impl From<OffsetCommitValue> for CommitJson {
    fn from(c: OffsetCommitValue) -> Self {
        CommitJson {
            version: c.version,
            offset: c.offset,
            leader_epoch: c.leader_epoch,
            metadata: c.metadata,
            commit_timestamp: c.commit_timestamp,
            expire_timestamp: c.expire_timestamp,
            topic_id: c.topic_id,
        }
    }
}

impl From<TransactionMetadata> for TransactionJson {
    fn from(m: TransactionMetadata) -> Self {
        TransactionJson {
            version: m.version,
            producer_id: m.producer_id,
            producer_epoch: m.producer_epoch,
            timeout_ms: m.timeout_ms,
            state: status_name(m.status),
            partitions: m.partitions.map(topic_partitions),
            last_update_timestamp: m.last_update_timestamp_ms,
            start_timestamp: m.start_timestamp_ms,
            client_transaction_version: m.client_transaction_version,
            previous_producer_id: m.previous_producer_id,
            next_producer_id: m.next_producer_id,
            next_producer_epoch: m.next_producer_epoch,
        }
    }
}

/// The decoded key and value (`{"error": ...}` for what does not decode).
pub fn decode<'a>(
    kind: Internal,
    key: Option<&'a [u8]>,
    value: Option<&[u8]>,
    at: u64,
) -> Decoded<'a> {
    let bad_key = |e: String| Decoded::Record {
        key: KeyJson::Error(Failed { error: e }),
        value: None,
        lenient: Vec::new(),
    };
    let words = |l: &[Leniency]| l.iter().map(ToString::to_string).collect::<Vec<_>>();
    if kind == Internal::ClusterMetadata {
        // The key is null; the value is a framed metadata record.
        return match value {
            Some(v) => Decoded::Schema(metadata::decode_metadata(v, at).to_json(v)),
            None => Decoded::Error(Failed::new("null value")),
        };
    }
    if kind == Internal::RemoteLogMetadata {
        // Framed the same way, with the storage module's record types.
        return match value.map(remote_json) {
            Some(Ok(json)) => Decoded::Schema(json),
            Some(Err(e)) => Decoded::Error(Failed::new(e)),
            None => Decoded::Error(Failed::new("null value")),
        };
    }
    let Some(key) = key else {
        return bad_key("null key".into());
    };
    match kind {
        Internal::ClusterMetadata | Internal::RemoteLogMetadata => Decoded::Schema(Value::Null),
        Internal::ShareGroupState => Decoded::Coordinator(coordinator::decode(
            coordinator::SHARE_RECORDS,
            key,
            value,
            at,
        )),
        Internal::Offsets => {
            let read = match decode_key_and_rest(key, at) {
                Ok(read) => read,
                Err(e) => return bad_key(e.to_string()),
            };
            let mut lenient = words(&read.lenient);
            let (key, value) = match read.key {
                OffsetsKey::OffsetCommit {
                    record_type,
                    group,
                    topic,
                    partition,
                } => (
                    OffsetsKeyJson::OffsetCommit {
                        version: record_type,
                        group,
                        topic,
                        partition,
                    },
                    ValueJson::of(
                        value,
                        |v| decode_offset_commit_value_of(record_type, v, at),
                        |c| {
                            lenient.extend(words(&c.lenient));
                            ValueJson::Commit(c.into())
                        },
                    ),
                ),
                OffsetsKey::GroupMetadata { group } => (
                    OffsetsKeyJson::GroupMetadata { version: 2, group },
                    ValueJson::of(
                        value,
                        |v| decode_group_metadata(v, at),
                        |g| {
                            lenient.extend(words(&g.lenient));
                            ValueJson::Group(g.into())
                        },
                    ),
                ),
                OffsetsKey::Other { .. } => {
                    return Decoded::Coordinator(coordinator::decode(
                        coordinator::GROUP_RECORDS,
                        key,
                        value,
                        at,
                    ))
                }
            };
            Decoded::Record {
                key: KeyJson::Offsets(key),
                value: Some(value),
                lenient,
            }
        }
        Internal::TransactionState => match txnlog::decode_key_rest(key, at) {
            Ok(read) => {
                let mut lenient = words(&read.lenient);
                let value = ValueJson::of(
                    value,
                    |v| txnlog::decode_value_rest(v, at),
                    |m| {
                        lenient.extend(words(&m.lenient));
                        ValueJson::Transaction(m.value.into())
                    },
                );
                Decoded::Record {
                    key: KeyJson::Transaction {
                        transactional_id: read.value,
                    },
                    value: Some(value),
                    lenient,
                }
            }
            Err(e) => bad_key(e.to_string()),
        },
    }
}

/// A `__remote_log_metadata` record as JSON shows it.
#[derive(serde::Serialize)]
struct RemoteRecordJson<'a> {
    #[serde(rename = "type")]
    kind: &'a str,
    version: i16,
    data: &'a Value,
}

/// A `__remote_log_metadata` record as `{"type": "<record>", "version":
/// N, "data": {…}}`, or Kafka's words for why it does not read.
fn remote_json(v: &[u8]) -> Result<Value, kaen_log::tiered::remote_records::RemoteError> {
    let rec = kaen_log::tiered::remote_records::read_remote_record(v)?;
    kaen_log::tiered::remote_records::transform(&rec)?;
    let json = RemoteRecordJson {
        kind: rec.schema.name,
        version: rec.version,
        data: &rec.data,
    };
    // A struct of a name, a number and a JSON value always serializes.
    Ok(serde_json::to_value(json).unwrap_or(Value::Null))
}

/// The decoded record for a text line: metadata records as
/// `TopicRecord v0 {…}`, remote log metadata as Kafka prints it, the
/// others as their JSON.
pub fn decode_text(kind: Internal, key: Option<&[u8]>, value: Option<&[u8]>, at: u64) -> String {
    let text = match (kind, value) {
        (Internal::ClusterMetadata, Some(v)) => metadata::decode_metadata(v, at).to_text(v),
        (Internal::RemoteLogMetadata, Some(v)) => {
            match kaen_log::tiered::remote_records::decode_remote_log_metadata(v) {
                Ok(m) => m.to_string(),
                Err(e) => format!("error: {e}"),
            }
        }
        _ => serde_json::to_string(&decode(kind, key, value, at)).unwrap_or_default(),
    };
    kaen_log::format::escape::escape_json_text(&text).into_owned()
}
