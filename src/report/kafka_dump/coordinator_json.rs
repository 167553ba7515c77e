//! The coordinators' records as kafka-dump-log's decoders print them
//! (`DumpLogSegments.CoordinatorRecordMessageParser`, 4.1 on; 3.9's and
//! 4.0's `OffsetsMessageParser` and 4.0's `ShareGroupStateMessageParser`
//! print the same): the key as `{"type":"<record type>","data":{…}}`, the
//! value as `{"version":"<version>","data":{…}}` or `<DELETE>` for a
//! tombstone, each `data` the generated JSON of the message
//! ([`kaen_log::format::kafka_json`]) read with klog's record tables
//! ([`kaen_log::offsets::records`], [`kaen_log::txn::txnlog`]) as Kafka's
//! generated readers read ([`kaen_log::format::schema::KafkaReads`]). A
//! record type the release does not know prints `Unknown record type
//! <type> at offset <offset>, skipping.` as its key and no payload; one
//! that does not decode `Error at offset <offset>, skipping. <why>`
//! (klog's words for why).

use kaen_log::format::kafka_json::{message_node, to_string};
use kaen_log::format::schema::Release;
use kaen_log::offsets::records::{
    self as records, decode_consumer_protocol_as_generated, CoordinatorRecord, CoordinatorValue,
    RecordType, CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION, SHARE_RECORDS,
};
use kaen_log::txn::txnlog::{
    decode_versioned, status_name, TRANSACTION_LOG_KEY, TRANSACTION_LOG_VALUE,
};
use serde_json::{Map, Value};

use super::parsed::Parsed;
use super::release::Tool;

/// `--offsets-decoder` (`OffsetsMessageParser`): the group coordinator's
/// records.
pub fn offsets(tool: Tool, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Parsed {
    let Some(key) = key else {
        return Parsed::missing_key(offset);
    };
    let rec = records::decode_group(key, value, 0);
    envelope(tool, offset, &rec, records::group_record_type, "version")
}

/// `--share-group-state-decoder` (`ShareGroupStateMessageParser`): the
/// share coordinator's records.
pub fn share_state(tool: Tool, offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Parsed {
    let Some(key) = key else {
        return Parsed::missing_key(offset);
    };
    let rec = records::decode(SHARE_RECORDS, key, value, 0);
    let lookup = |id| SHARE_RECORDS.iter().find(|r| r.id == id);
    envelope(tool, offset, &rec, lookup, tool.share_value_version_key())
}

/// `--transaction-log-decoder` from 4.1 (`TransactionLogMessageParser`):
/// record type 0, TransactionLogKey and TransactionLogValue; from 4.4 the
/// status by name.
pub fn transaction_log(
    tool: Tool,
    offset: i64,
    key: Option<&[u8]>,
    value: Option<&[u8]>,
) -> Parsed {
    let Some(key) = key else {
        return Parsed::missing_key(offset);
    };
    // TransactionCoordinatorRecordSerde: the only record type is 0.
    match key.get(..2).and_then(|b| <[u8; 2]>::try_from(b).ok()) {
        Some(t) if i16::from_be_bytes(t) != 0 => {
            return Parsed::unknown_type(offset, i16::from_be_bytes(t))
        }
        Some(_) => {}
        None => return Parsed::error(offset, &"key shorter than its int16 record type"),
    }
    let key_data = match decode_versioned(&TRANSACTION_LOG_KEY, key, 0) {
        Ok(read) => read.data,
        Err(e) => return Parsed::error(offset, &e),
    };
    let payload = match value.map(|v| decode_versioned(&TRANSACTION_LOG_VALUE, v, 0)) {
        None => "<DELETE>".to_string(),
        Some(Err(e)) => return Parsed::error(offset, &e),
        Some(Ok(read)) => {
            let version = read.version;
            let mut node = message_node(&TRANSACTION_LOG_VALUE, version, &read.data, tool.0);
            if tool.transaction_status_name() {
                name_status(&mut node);
            }
            envelope_text("version", version, node)
        }
    };
    Parsed {
        key: Some(envelope_text(
            "type",
            0,
            message_node(&TRANSACTION_LOG_KEY, 0, &key_data, tool.0),
        )),
        payload: Some(payload),
    }
}

/// `transactionStatus` by its name (`TransactionState.stateName`), a
/// status Kafka does not know as its number in a string.
fn name_status(node: &mut Value) {
    if let Some(status) = node.get_mut("transactionStatus") {
        let id = status.as_i64().unwrap_or(-1);
        let name = match i8::try_from(id).map(status_name) {
            Ok(name) if name != "Unknown" => name.to_string(),
            _ => id.to_string(),
        };
        *status = Value::String(name);
    }
}

/// The key and payload of a decoded coordinator record; `version_key`
/// names the value's version.
fn envelope<'t>(
    tool: Tool,
    offset: i64,
    rec: &CoordinatorRecord,
    lookup: impl Fn(i16) -> Option<&'t RecordType>,
    version_key: &str,
) -> Parsed {
    let Some(rt) = lookup(rec.record_type).filter(|rt| known(rt, tool.0)) else {
        return match &rec.fault {
            Some(e) if rec.record_type < 0 => Parsed::error(offset, e),
            _ => Parsed::unknown_type(offset, rec.record_type),
        };
    };
    if let Some(e) = &rec.error {
        return Parsed::error(offset, e);
    }
    let key = rec.key.as_ref().map_or_else(
        || Value::Object(Map::new()),
        |k| message_node(&rt.key, 0, k, tool.0),
    );
    let payload = match &rec.value {
        None => "<DELETE>".to_string(),
        Some(CoordinatorValue::Raw { .. }) => {
            return Parsed::error(offset, &"the value does not decode")
        }
        Some(CoordinatorValue::Fields { version, data }) => {
            let mut node = message_node(&rt.value, *version, data, tool.0);
            if rt.id == GROUP_METADATA {
                consumer_protocol_members(&mut node, tool.0);
            }
            envelope_text(version_key, *version, node)
        }
    };
    Parsed {
        key: Some(envelope_text("type", rt.id, key)),
        payload: Some(payload),
    }
}

/// Whether `release`'s coordinator reads the record type: it came with
/// `read_since` (3.9 reads types 0 to 8, 4.0 0 to 16), and type 9,
/// ShareGroupPartitionMetadata, is gone from 4.1's `CoordinatorRecordType`.
fn known(rt: &RecordType, release: Release) -> bool {
    rt.read_since <= release && rt.gone_since.is_none_or(|gone| release < gone)
}

/// GroupMetadata, the classic group's record type.
const GROUP_METADATA: i16 = 2;

/// `{"<name>":"<number>","data":<data>}`: the number as a string, as
/// `prepareKey` and `prepareValue` write it (`TextNode`).
fn envelope_text(name: &str, number: i16, data: Value) -> String {
    let mut o = Map::new();
    o.insert(name.into(), Value::String(number.to_string()));
    o.insert("data".into(), data);
    to_string(&Value::Object(o))
}

/// `OffsetsMessageParser.prepareGroupMetadataValue`: in a group whose
/// protocolType is `consumer`, each member's `subscription` and
/// `assignment` bytes replaced by their consumer-protocol JSON, read and
/// written at the version the bytes start with
/// ([`decode_consumer_protocol_as_generated`]); bytes that do not read
/// stay.
fn consumer_protocol_members(node: &mut Value, release: Release) {
    if node.get("protocolType").and_then(Value::as_str) != Some("consumer") {
        return;
    }
    let Some(members) = node.get_mut("members").and_then(Value::as_array_mut) else {
        return;
    };
    for member in members {
        for (field, schema) in [
            ("subscription", &CONSUMER_PROTOCOL_SUBSCRIPTION),
            ("assignment", &CONSUMER_PROTOCOL_ASSIGNMENT),
        ] {
            let Some(slot) = member.get_mut(field) else {
                continue;
            };
            let Some(bytes) = slot.as_str().and_then(unbase64) else {
                continue;
            };
            if let Ok((version, data)) = decode_consumer_protocol_as_generated(schema, &bytes, 0) {
                // The converter writes the fields of versions "0+" at any version.
                let version = version.max(schema.versions.0);
                *slot = message_node(schema, version, &data, release);
            }
        }
    }
}

/// The bytes of a `bytes` field, which the decoder gives in base64.
fn unbase64(text: &str) -> Option<Vec<u8>> {
    use base64::Engine;
    base64::engine::general_purpose::STANDARD.decode(text).ok()
}
