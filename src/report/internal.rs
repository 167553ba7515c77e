//! Keys and values of Kafka's internal topics, decoded for `dump-segment`:
//! the offsets topic (`__offsets`, `__consumer_offsets`) and the
//! transaction coordinator's `__transaction_state`, the share coordinator's
//! `__share_group_state`, and the KRaft metadata
//! log (`__cluster_metadata-0`, its `<offset>-<epoch>.checkpoint` snapshots
//! and `bootstrap.checkpoint`).

use std::path::Path;

use kaen_log::metadata::records as metadata;
use kaen_log::offsets::group::decode_group_metadata;
use kaen_log::offsets::records as coordinator;
use kaen_log::offsets::{decode_key, decode_offset_commit_value, is_offsets_topic, OffsetsKey};
use kaen_log::txn::txnlog::{self, status_name, TRANSACTION_STATE_TOPIC};
use serde_json::{json, Value};

/// Which internal topic a partition folder belongs to.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Internal {
    Offsets,
    TransactionState,
    ClusterMetadata,
    ShareGroupState,
}

/// The internal topic of the partition folder holding `log` (or of `log` itself when it is a folder).
pub fn detect(log: &Path) -> Option<Internal> {
    if log.file_name().and_then(|n| n.to_str()) == Some(kaen_log::metadata::BOOTSTRAP_FILE) {
        return Some(Internal::ClusterMetadata);
    }
    let dir = if log.is_dir() { log } else { log.parent()? };
    let (topic, _, _) = kaen_log::log::parse_partition_dir(dir.file_name()?.to_str()?)?;
    if is_offsets_topic(&topic) {
        Some(Internal::Offsets)
    } else if topic == TRANSACTION_STATE_TOPIC {
        Some(Internal::TransactionState)
    } else if topic == coordinator::SHARE_GROUP_STATE_TOPIC {
        Some(Internal::ShareGroupState)
    } else if topic == kaen_log::metadata::METADATA_TOPIC {
        Some(Internal::ClusterMetadata)
    } else {
        None
    }
}

/// The decoded key and value as JSON (`{"error": ...}` for what does not decode).
pub fn decode(kind: Internal, key: Option<&[u8]>, value: Option<&[u8]>, at: u64) -> Value {
    let err = |e: kaen_log::DecodeError| json!({"error": e.to_string()});
    if kind == Internal::ClusterMetadata {
        // The key is null; the value is a framed metadata record.
        return match value {
            Some(v) => metadata::decode_metadata(v, at).to_json(v),
            None => json!({"error": "null value"}),
        };
    }
    let Some(key) = key else {
        return json!({"key": {"error": "null key"}});
    };
    match kind {
        Internal::ClusterMetadata => json!(null),
        Internal::ShareGroupState => {
            coordinator::decode(coordinator::SHARE_RECORDS, key, value, at).to_json()
        }
        Internal::Offsets => {
            let (k, group_record) = match decode_key(key, at) {
                Ok(OffsetsKey::OffsetCommit {
                    record_type,
                    group,
                    topic,
                    partition,
                }) => (
                    json!({"type": "offset_commit", "version": record_type, "group": group, "topic": topic, "partition": partition}),
                    false,
                ),
                Ok(OffsetsKey::GroupMetadata { group }) => (
                    json!({"type": "group_metadata", "version": 2, "group": group}),
                    true,
                ),
                Ok(OffsetsKey::Other { .. }) => {
                    return coordinator::decode(coordinator::GROUP_RECORDS, key, value, at)
                        .to_json()
                }
                Err(e) => return json!({"key": err(e)}),
            };
            let v = match value {
                None => json!("tombstone"),
                Some(v) if group_record => match decode_group_metadata(v, at) {
                    Ok(g) => json!({
                        "version": g.version, "protocol_type": g.protocol_type, "generation": g.generation,
                        "protocol": g.protocol, "leader": g.leader, "current_state_timestamp": g.current_state_timestamp,
                        "members": g.members.iter().map(|m| json!({
                            "member_id": m.member_id, "group_instance_id": m.group_instance_id, "client_id": m.client_id,
                            "client_host": m.client_host, "rebalance_timeout_ms": m.rebalance_timeout_ms,
                            "session_timeout_ms": m.session_timeout_ms,
                            "assignment": m.assignment.iter().map(|(t, ps)| json!({"topic": t, "partitions": ps})).collect::<Vec<_>>(),
                        })).collect::<Vec<_>>(),
                    }),
                    Err(e) => err(e),
                },
                Some(v) => match decode_offset_commit_value(v, at) {
                    Ok(c) => json!({
                        "version": c.version, "offset": c.offset, "leader_epoch": c.leader_epoch, "metadata": c.metadata,
                        "commit_timestamp": c.commit_timestamp, "expire_timestamp": c.expire_timestamp,
                    }),
                    Err(e) => err(e),
                },
            };
            json!({"key": k, "value": v})
        }
        Internal::TransactionState => {
            let k = match txnlog::decode_key(key, at) {
                Ok(id) => json!({"transactional_id": id}),
                Err(e) => return json!({"key": err(e)}),
            };
            let v = match value {
                None => json!("tombstone"),
                Some(v) => match txnlog::decode_value(v, at) {
                    Ok(m) => json!({
                        "version": m.version, "producer_id": m.producer_id, "producer_epoch": m.producer_epoch,
                        "timeout_ms": m.timeout_ms, "state": status_name(m.status),
                        "partitions": m.partitions.as_ref().map(|ps| ps.iter().map(|(t, ids)| json!({"topic": t, "partitions": ids})).collect::<Vec<_>>()),
                        "last_update_timestamp": m.last_update_timestamp_ms, "start_timestamp": m.start_timestamp_ms,
                    }),
                    Err(e) => err(e),
                },
            };
            json!({"key": k, "value": v})
        }
    }
}

/// The decoded record for a text line: metadata records as
/// `TopicRecord v0 {…}`, the others as their JSON.
pub fn decode_text(kind: Internal, key: Option<&[u8]>, value: Option<&[u8]>, at: u64) -> String {
    match (kind, value) {
        (Internal::ClusterMetadata, Some(v)) => metadata::decode_metadata(v, at).to_text(v),
        _ => decode(kind, key, value, at).to_string(),
    }
}
