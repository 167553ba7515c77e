//! The group coordinator's newer record types (3 and up) in the offsets
//! topic, and the share coordinator's records in `__share_group_state`, as
//! schema tables for [`crate::format::schema`].
//!
//! A coordinator record (`CoordinatorRecordSerde`, `GroupCoordinatorRecordSerde`,
//! `ShareCoordinatorRecordSerde`): the key is `int16 recordType` then the key
//! struct (never flexible); the value is `int16 version` then the value
//! struct at that version, or null (a tombstone: the coordinator deletes the
//! key). The record types are `CoordinatorRecordType`, generated from the
//! `apiKey` of each `*Key.json` in
//! `group-coordinator/src/main/resources/common/message/` (older files give
//! it as the key's `validVersions`); the tables below name the file of each.
//! A type or value version not here is named `unknown(type)` or shown raw.
//!
//! The layouts are Kafka 4.4's (the `common/message/*.json` resources of
//! the 4.4.0 group- and share-coordinator jars; every value version of
//! every type is 0, OffsetCommit's and GroupMetadata's 0 to 4 and
//! LegacyOffsetCommit's 0 alone, from 4.1 through 4.4:
//! `CoordinatorRecordType`). Later releases added tagged fields only; the
//! release that added each is noted at its row. ShareSnapshot and
//! ShareUpdate have an int32 SnapshotEpoch and ShareSnapshot the
//! Create/WriteTimestamp fields, share and streams group metadata carry an
//! untagged MetadataHash (consumer groups a tagged one), and
//! ShareGroupStatePartitionMetadata lists initializing topics first.
//!
//! Type 9 (ShareGroupPartitionMetadata) was written by Kafka 4.0 (3.9's
//! coordinator read types 0 to 8 only) and is gone from 4.1's
//! `CoordinatorRecordType`: it is decoded with 4.0's layout, and the replay
//! skips it as 4.1 and later do (`UnknownRecordTypeException`). Types 18
//! and 24 were written by no release (4.0 has no streams records; 4.4's
//! types end at 23) and are unknown types.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use serde::Serialize;
use serde_json::Value;

use crate::error::DecodeError;
use crate::format::cursor::Cursor;
use crate::format::schema::{last_version, Field, Leniency, Release, Schema};
use crate::format::trace::{NoTrace, Trace, Traced};
use crate::metadata::records::Hex;

mod classic;
mod group_types;
mod share_state;

pub use classic::{
    decode_consumer_protocol, decode_consumer_protocol_as_generated, CLASSIC_RECORDS,
    CONSUMER_PROTOCOL_ASSIGNMENT, CONSUMER_PROTOCOL_SUBSCRIPTION, GROUP_METADATA_KEY,
    GROUP_METADATA_VALUE, OFFSET_COMMIT_KEY, OFFSET_COMMIT_VALUE,
};
pub use group_types::GROUP_RECORDS;
pub use share_state::{SHARE_RECORDS, SHARE_SNAPSHOT_KEY};

const fn key(name: &'static str, fields: &'static [Field]) -> Schema {
    // Keys: "flexibleVersions": "none"; the struct is read the same at any version.
    Schema {
        name,
        versions: (0, i16::MAX),
        since: &[],
        flexible_from: None,
        fields,
    }
}

/// A value schema; `since` holds the release that introduced each version
/// from 0 (the schema files of each release's jars).
const fn value(name: &'static str, since: &'static [Release], fields: &'static [Field]) -> Schema {
    // Every value here: "flexibleVersions": "0+".
    Schema {
        name,
        versions: (0, last_version(since)),
        since,
        flexible_from: Some(0),
        fields,
    }
}

/// One coordinator record type: its number, name, key and value schemas
/// (the value's `versions` are the versions Kafka reads: one outside them
/// fails the load, `CoordinatorRecordSerde.deserialize` throwing
/// `UnknownRecordVersionException`).
pub struct RecordType {
    pub id: i16,
    pub name: &'static str,
    pub key: Schema,
    pub value: Schema,
    /// The first release whose coordinator reads the type: 3.9's
    /// `CoordinatorRecordSerde` reads types 0 to 8, 4.0's
    /// `GroupCoordinatorRecordSerde` 0 to 16, and `CoordinatorRecordType`
    /// of 4.1 to 4.4 0 to 8, 10 to 17 and 19 to 23 (their `apiMessageKeyFor`
    /// switches). An earlier release skips it on load
    /// (`UnknownRecordTypeException`), and its kafka-dump-log prints
    /// `Unknown record type N at offset M, skipping.`. (3.9's schema files
    /// already had types 9 to 11, KIP-932's preview, which no 3.9 code read.)
    pub read_since: Release,
    /// The first release whose coordinator no longer knows the type (and
    /// skips it on load, `UnknownRecordTypeException`), if any.
    pub gone_since: Option<Release>,
    /// The first release whose schema files hold this layout under these
    /// names. Before it the files either had no file of the name (type 0
    /// was read through OffsetCommitKey/Value before 4.1 split off
    /// LegacyOffsetCommitKey/Value, the same fields at version 0) or an
    /// early-access layout of the same versions that no later release
    /// reads (the share-group records of 3.9 and 4.0, KIP-932's preview:
    /// 4.1 added untagged fields at version 0 and made SnapshotEpoch an
    /// int32); 3.9 for every other type.
    pub file_since: Release,
}

const fn rt(id: i16, name: &'static str, k: &'static [Field], v: Schema) -> RecordType {
    RecordType {
        id,
        name,
        key: key(name, k),
        value: v,
        read_since: Release::R3_9,
        gone_since: None,
        file_since: Release::R3_9,
    }
}

/// The record type `id` of the offsets topic (classic or newer), if known.
pub fn group_record_type(id: i16) -> Option<&'static RecordType> {
    CLASSIC_RECORDS
        .iter()
        .chain(GROUP_RECORDS)
        .find(|r| r.id == id)
}

/// The share coordinator's topic (`Topic.SHARE_GROUP_STATE_TOPIC_NAME`).
pub const SHARE_GROUP_STATE_TOPIC: &str = "__share_group_state";

/// The name of a group coordinator record type (0..=2 included).
pub fn group_record_name(id: i16) -> String {
    group_record_type(id).map_or_else(|| format!("unknown({id})"), |r| r.name.to_string())
}

/// The share state delivery states (`RecordState`: 0 Available, 1
/// Acquired, 2 Acknowledged, 4 Archived).
pub fn delivery_state_name(s: i64) -> &'static str {
    match s {
        0 => "Available",
        1 => "Acquired",
        2 => "Acknowledged",
        4 => "Archived",
        _ => "unknown",
    }
}

/// A decoded coordinator record.
#[derive(Debug, Clone, PartialEq)]
pub struct CoordinatorRecord {
    pub record_type: i16,
    /// The record type's name, or `unknown(N)`.
    pub name: String,
    /// The key's fields (JSON object), when it decodes.
    pub key: Option<Value>,
    /// The value; `None` for a tombstone.
    pub value: Option<CoordinatorValue>,
    /// Why the key or value does not decode.
    pub error: Option<String>,
    /// The decode error behind `error` (not set for a record type klog
    /// does not know, which Kafka's loader skips).
    pub fault: Option<DecodeError>,
    /// Bytes after the key's or value's last field: Kafka's reader
    /// (`CoordinatorRecordSerde.readMessage`) does not look at them.
    pub trailing_bytes: u64,
    /// Where the key and value were read as Kafka's generated `read`
    /// reads them and a strict reading refuses them ([`Leniency`]).
    pub lenient: Vec<Leniency>,
}

/// A coordinator record's value.
#[derive(Debug, Clone, PartialEq)]
pub enum CoordinatorValue {
    /// The value's version and decoded fields.
    Fields { version: i16, data: Value },
    /// A value that does not decode: its version when its type is known,
    /// and its bytes.
    Raw {
        version: Option<i16>,
        bytes: Vec<u8>,
    },
}

impl CoordinatorValue {
    /// The decoded fields, when the value decodes.
    pub fn fields(&self) -> Option<&Value> {
        match self {
            CoordinatorValue::Fields { data, .. } => Some(data),
            CoordinatorValue::Raw { .. } => None,
        }
    }
}

impl CoordinatorRecord {
    /// The value's fields as Kafka's generated class holds them after
    /// `read`: each field the record does not set (a tagged field its
    /// writer left out, a field of another version) at its table default
    /// ([`Schema::filled`]), what Kafka's replay acts on. `None` for a
    /// tombstone or a value that does not decode.
    pub fn value_as_read(&self) -> Option<Value> {
        let data = self.value.as_ref()?.fields()?;
        let rt = CLASSIC_RECORDS
            .iter()
            .chain(GROUP_RECORDS)
            .chain(SHARE_RECORDS)
            .find(|r| r.name == self.name);
        Some(rt.map_or_else(|| data.clone(), |rt| rt.value.filled(data)))
    }
}

/// A coordinator record key's type, its first field
/// (`CoordinatorRecordSerde.readMessage`: int16 recordType), handed to
/// `trace`.
pub fn record_type_traced<'a, T: Trace<'a>>(
    c: &mut Cursor<'a>,
    trace: &mut T,
) -> Result<i16, DecodeError> {
    Traced::new(c, trace).i16("recordType")
}

/// A coordinator record value's version, its first field (int16
/// version), handed to `trace`.
pub fn value_version_traced<'a, T: Trace<'a>>(
    c: &mut Cursor<'a>,
    trace: &mut T,
) -> Result<i16, DecodeError> {
    Traced::new(c, trace).i16("version")
}

/// Decode a coordinator record of `table` (GROUP_RECORDS or SHARE_RECORDS).
/// Never fails: what does not decode is described in `error`.
pub fn decode(
    table: &'static [RecordType],
    key: &[u8],
    value: Option<&[u8]>,
    at: u64,
) -> CoordinatorRecord {
    decode_by(|id| table.iter().find(|r| r.id == id), key, value, at)
}

/// Decode a record of the offsets topic: the classic record types (0 to
/// 2) and the newer ones ([`group_record_type`]), as [`decode`] does.
pub fn decode_group(key: &[u8], value: Option<&[u8]>, at: u64) -> CoordinatorRecord {
    decode_by(group_record_type, key, value, at)
}

/// [`decode`] with the record types `lookup` knows.
fn decode_by(
    lookup: impl Fn(i16) -> Option<&'static RecordType>,
    key: &[u8],
    value: Option<&[u8]>,
    at: u64,
) -> CoordinatorRecord {
    let mut c = Cursor::new(key, at);
    let record_type = match record_type_traced(&mut c, &mut NoTrace) {
        Ok(t) => t,
        Err(e) => {
            return CoordinatorRecord {
                record_type: -1,
                name: "unknown".into(),
                key: None,
                value: None,
                error: Some(e.to_string()),
                fault: Some(e),
                trailing_bytes: 0,
                lenient: Vec::new(),
            }
        }
    };
    let Some(rt) = lookup(record_type) else {
        return CoordinatorRecord {
            record_type,
            name: format!("unknown({record_type})"),
            key: None,
            value: value.map(|v| CoordinatorValue::Raw {
                version: None,
                bytes: v.to_vec(),
            }),
            error: Some(format!("record type {record_type} is not one klog knows")),
            fault: None,
            trailing_bytes: 0,
            lenient: Vec::new(),
        };
    };
    let mut out = CoordinatorRecord {
        record_type,
        name: rt.name.into(),
        key: None,
        value: None,
        error: None,
        fault: None,
        trailing_bytes: 0,
        lenient: Vec::new(),
    };
    // CoordinatorRecordSerde.readMessage: the generated `read` of the key
    // and of the value, Kafka's reading.
    match rt.key.decode_prefix_as_kafka(&mut c, 0) {
        Ok(k) => {
            out.key = Some(k.data);
            out.lenient = k.lenient;
            out.trailing_bytes = c.remaining() as u64;
        }
        Err(e) => {
            out.error = Some(format!("key: {e}"));
            out.fault = Some(e);
            return out;
        }
    }
    let Some(v) = value else { return out };
    let mut vc = Cursor::new(v, at);
    let version = match value_version_traced(&mut vc, &mut NoTrace) {
        Ok(x) => x,
        Err(e) => {
            out.error = Some(format!("value: {e}"));
            out.fault = Some(e);
            return out;
        }
    };
    // CoordinatorRecordSerde.deserialize: a version outside the value
    // schema's fails the load (UnknownRecordVersionException).
    let decoded = if rt.value.knows(version) {
        rt.value.decode_prefix_as_kafka(&mut vc, version)
    } else {
        Err(DecodeError::new(
            at,
            crate::error::DecodeErrorKind::RecordVersion {
                schema: rt.value.name,
                version,
                lowest: rt.value.versions.0,
                newest: rt.value.versions.1,
            },
        ))
    };
    match decoded {
        Ok(read) => {
            out.value = Some(CoordinatorValue::Fields {
                version,
                data: read.data,
            });
            out.lenient.extend(read.lenient);
            out.trailing_bytes += vc.remaining() as u64;
        }
        Err(e) => {
            out.value = Some(CoordinatorValue::Raw {
                version: Some(version),
                bytes: v.to_vec(),
            });
            out.error = Some(format!("value: {e}"));
            out.fault = Some(e);
        }
    }
    out
}

/// The `decoded` JSON of dump-segment, shaped like `kafka-dump-log
/// --offsets-decoder` prints it (`CoordinatorRecordMessageFormatter`):
/// `{"key": {"type", "record_type", "data"}, "value": {"version", "data"}}`
/// (the value `"tombstone"` when null), plus `error`, `trailing_bytes` and
/// `lenient` (each [`Leniency`] in words). The fields sit under
/// `data` because a schema may have a field named like the envelope's
/// (ConsumerGroupRegularExpressionValue has `Version`).
impl Serialize for CoordinatorRecord {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        #[derive(Serialize)]
        struct Key<'a> {
            #[serde(rename = "type")]
            name: &'a str,
            record_type: i16,
            #[serde(skip_serializing_if = "Option::is_none")]
            data: Option<&'a Value>,
        }
        #[derive(Serialize)]
        #[serde(untagged)]
        enum Val<'a> {
            Tombstone(&'static str),
            /// A value that does not decode: its version (when its type is
            /// known) and its bytes.
            Raw {
                #[serde(skip_serializing_if = "Option::is_none")]
                version: Option<i16>,
                raw: Hex<'a>,
            },
            Data {
                version: i16,
                data: &'a Value,
            },
        }
        #[derive(Serialize)]
        struct Record<'a> {
            key: Key<'a>,
            value: Val<'a>,
            #[serde(skip_serializing_if = "Option::is_none")]
            error: Option<&'a str>,
            #[serde(skip_serializing_if = "is_zero")]
            trailing_bytes: u64,
            /// Where the bytes were read as Kafka reads them ([`Leniency`]).
            #[serde(skip_serializing_if = "Vec::is_empty")]
            lenient: Vec<String>,
        }
        fn is_zero(n: &u64) -> bool {
            *n == 0
        }
        let value = match &self.value {
            None => Val::Tombstone("tombstone"),
            Some(CoordinatorValue::Raw { version, bytes }) => Val::Raw {
                version: *version,
                raw: Hex(bytes),
            },
            Some(CoordinatorValue::Fields { version, data }) => Val::Data {
                version: *version,
                data,
            },
        };
        Record {
            key: Key {
                name: &self.name,
                record_type: self.record_type,
                data: self.key.as_ref(),
            },
            value,
            error: self.error.as_deref(),
            trailing_bytes: self.trailing_bytes,
            lenient: self.lenient.iter().map(ToString::to_string).collect(),
        }
        .serialize(s)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DecodeErrorKind;

    #[test]
    fn every_record_type_and_value_version_of_kafka_4_4_is_known() {
        // Kafka 4.4.0's CoordinatorRecordType (group coordinator, then share
        // coordinator): id, name, lowest and highest value version, as its
        // enum constants give them (the same from 4.1.1 on).
        let group = [
            (0, "LegacyOffsetCommit", 0, 0),
            (1, "OffsetCommit", 0, 4),
            (2, "GroupMetadata", 0, 4),
            (3, "ConsumerGroupMetadata", 0, 0),
            (4, "ConsumerGroupPartitionMetadata", 0, 0),
            (5, "ConsumerGroupMemberMetadata", 0, 0),
            (6, "ConsumerGroupTargetAssignmentMetadata", 0, 0),
            (7, "ConsumerGroupTargetAssignmentMember", 0, 0),
            (8, "ConsumerGroupCurrentMemberAssignment", 0, 0),
            (10, "ShareGroupMemberMetadata", 0, 0),
            (11, "ShareGroupMetadata", 0, 0),
            (12, "ShareGroupTargetAssignmentMetadata", 0, 0),
            (13, "ShareGroupTargetAssignmentMember", 0, 0),
            (14, "ShareGroupCurrentMemberAssignment", 0, 0),
            (15, "ShareGroupStatePartitionMetadata", 0, 0),
            (16, "ConsumerGroupRegularExpression", 0, 0),
            (17, "StreamsGroupMetadata", 0, 0),
            (19, "StreamsGroupMemberMetadata", 0, 0),
            (20, "StreamsGroupTargetAssignmentMetadata", 0, 0),
            (21, "StreamsGroupTargetAssignmentMember", 0, 0),
            (22, "StreamsGroupCurrentMemberAssignment", 0, 0),
            (23, "StreamsGroupTopology", 0, 0),
        ];
        for (id, name, lo, hi) in group {
            let rt = group_record_type(id).unwrap();
            assert_eq!(
                (rt.name, rt.value.versions, rt.gone_since),
                (name, (lo, hi), None)
            );
        }
        let current = CLASSIC_RECORDS
            .iter()
            .chain(GROUP_RECORDS)
            .filter(|r| r.gone_since.is_none())
            .count();
        assert_eq!(current, group.len());
        // 9: Kafka 4.0's, skipped since 4.1; 18 and 24: no release's.
        assert_eq!(
            group_record_type(9).unwrap().gone_since,
            Some(Release::R4_1)
        );
        assert!(group_record_type(18).is_none() && group_record_type(24).is_none());
        let share: Vec<_> = SHARE_RECORDS
            .iter()
            .map(|r| (r.id, r.name, r.value.versions))
            .collect();
        assert_eq!(
            share,
            [(0, "ShareSnapshot", (0, 0)), (1, "ShareUpdate", (0, 0))]
        );
    }

    #[test]
    fn a_value_version_outside_the_schemas_is_refused() {
        // CoordinatorRecordSerde.deserialize: UnknownRecordVersionException.
        let r = decode(
            GROUP_RECORDS,
            &[0, 3, 0, 1, b'g'],
            Some(&[0, 1, 0, 0, 0, 5, 0]),
            40,
        );
        assert_eq!(
            r.fault.map(|e| (e.offset, e.kind)),
            Some((
                40,
                crate::error::DecodeErrorKind::RecordVersion {
                    schema: "ConsumerGroupMetadataValue",
                    version: 1,
                    lowest: 0,
                    newest: 0
                }
            ))
        );
    }

    #[test]
    fn consumer_group_metadata_and_unknown_types() {
        // type 3, group "g"; value version 0, epoch 5, no tags.
        let r = decode(
            GROUP_RECORDS,
            &[0, 3, 0, 1, b'g'],
            Some(&[0, 0, 0, 0, 0, 5, 0]),
            0,
        );
        assert_eq!(r.name, "ConsumerGroupMetadata");
        assert_eq!(r.key.unwrap()["groupId"], "g");
        assert_eq!(r.value.unwrap().fields().unwrap()["epoch"], 5);
        let u = decode(GROUP_RECORDS, &[0, 99, 0, 1, b'g'], None, 0);
        assert_eq!(u.name, "unknown(99)");
        let t = decode(GROUP_RECORDS, &[0, 3, 0, 1, b'g'], None, 0);
        assert!(t.value.is_none() && t.error.is_none());
        let bad = decode(GROUP_RECORDS, &[0, 3, 0, 1, b'g'], Some(&[0, 9, 0]), 0);
        assert!(bad
            .error
            .as_deref()
            .unwrap()
            .contains("klog knows version 0 only"));
        // What does not decode is shown as its bytes: with its version when
        // the type is known, alone when it is not.
        let json = serde_json::to_value(&bad).unwrap();
        assert_eq!(
            json["value"],
            serde_json::json!({"version": 9, "raw": "000900"})
        );
        assert!(bad.error.unwrap().contains("version 9"));
        let unknown = decode(GROUP_RECORDS, &[0, 99, 0, 1, b'g'], Some(&[0xab, 1]), 0);
        let json = serde_json::to_value(&unknown).unwrap();
        assert_eq!(json["value"], serde_json::json!({"raw": "ab01"}));
        // Bytes after the fields are not read (CoordinatorRecordSerde.readMessage).
        let extra = decode(
            GROUP_RECORDS,
            &[0, 3, 0, 1, b'g', 9],
            Some(&[0, 0, 0, 0, 0, 5, 0, 7, 7]),
            0,
        );
        assert_eq!((extra.error, extra.trailing_bytes), (None, 3));
    }

    /// A record that leaves its tagged fields out holds their defaults as
    /// read (ConsumerGroupMetadataValue.json: MetadataHash, tag 0,
    /// default 0; ShareSnapshotValue.json: DeliveryCompleteCount, tag 0,
    /// default -1); one that sends them holds what it sent.
    #[test]
    fn a_value_as_read_holds_the_defaults_of_the_tags_left_out() {
        let r = decode(
            GROUP_RECORDS,
            &[0, 3, 0, 1, b'g'],
            Some(&[0, 0, 0, 0, 0, 5, 0]),
            0,
        );
        assert!(r
            .value
            .as_ref()
            .unwrap()
            .fields()
            .unwrap()
            .get("metadataHash")
            .is_none());
        assert_eq!(
            r.value_as_read(),
            Some(serde_json::json!({"epoch": 5, "metadataHash": 0}))
        );
        // ShareSnapshot of group "g", topic zero, partition 0; value v0:
        // epochs 1, 2, 3, start offset 10, no tag, timestamps, no batches.
        let mut key = vec![0, 0, 0, 1, b'g'];
        key.extend_from_slice(&[0; 20]);
        let mut value = vec![0, 0, 0, 0, 0, 1, 0, 0, 0, 2, 0, 0, 0, 3];
        value.extend_from_slice(&10i64.to_be_bytes());
        value.extend_from_slice(&[0; 16]);
        value.extend_from_slice(&[1, 0]);
        let r = decode(SHARE_RECORDS, &key, Some(&value), 0);
        assert_eq!(r.value_as_read().unwrap()["deliveryCompleteCount"], -1);
        // The same with tag 0 = 7.
        let tagged = [&value[..value.len() - 1], &[1, 0, 4, 0, 0, 0, 7]].concat();
        let r = decode(SHARE_RECORDS, &key, Some(&tagged), 0);
        assert_eq!(r.value_as_read().unwrap()["deliveryCompleteCount"], 7);
        assert!(decode(SHARE_RECORDS, &key, None, 0)
            .value_as_read()
            .is_none());
    }

    /// A string at `version`: compact in the flexible version 4, else int16-prefixed.
    fn string(out: &mut Vec<u8>, s: &str, version: i16) {
        if version >= 4 {
            out.push(s.len() as u8 + 1);
        } else {
            out.extend((s.len() as i16).to_be_bytes());
        }
        out.extend(s.as_bytes());
    }

    /// An OffsetCommitValue at `version` written field by field from
    /// OffsetCommitValue.json: offset 7, leaderEpoch 5 (v3+), metadata "m",
    /// commitTimestamp 1,700, expireTimestamp 99 (v1), no tags (v4).
    fn commit_value(version: i16) -> Vec<u8> {
        let mut v = version.to_be_bytes().to_vec();
        v.extend(7i64.to_be_bytes());
        if version >= 3 {
            v.extend(5i32.to_be_bytes());
        }
        string(&mut v, "m", version);
        v.extend(1_700i64.to_be_bytes());
        if version == 1 {
            v.extend(99i64.to_be_bytes());
        }
        if version >= 4 {
            v.push(0);
        }
        v
    }

    /// A GroupMetadataValue at `version` from GroupMetadataValue.json:
    /// protocolType "consumer", generation 3, protocol "range", leader
    /// "m-1", currentStateTimestamp 1,800 (v2+), one member: "m-1",
    /// instance "i-1" (v3+), client "c", host "/h", rebalance timeout 30
    /// (v1+), session timeout 10, then `subscription` and `assignment`
    /// as their int32 (or compact) lengths and bytes.
    fn group_value(version: i16, subscription: Option<&[u8]>, assignment: &[u8]) -> Vec<u8> {
        let mut g = version.to_be_bytes().to_vec();
        string(&mut g, "consumer", version);
        g.extend(3i32.to_be_bytes());
        string(&mut g, "range", version);
        string(&mut g, "m-1", version);
        if version >= 2 {
            g.extend(1_800i64.to_be_bytes());
        }
        if version >= 4 {
            g.push(2);
        } else {
            g.extend(1i32.to_be_bytes());
        }
        string(&mut g, "m-1", version);
        if version >= 3 {
            string(&mut g, "i-1", version);
        }
        string(&mut g, "c", version);
        string(&mut g, "/h", version);
        if version >= 1 {
            g.extend(30i32.to_be_bytes());
        }
        g.extend(10i32.to_be_bytes());
        for b in [subscription, Some(assignment)] {
            match (version >= 4, b) {
                (true, None) => g.push(0),
                (true, Some(b)) => g.push(b.len() as u8 + 1),
                (false, None) => g.extend((-1i32).to_be_bytes()),
                (false, Some(b)) => g.extend((b.len() as i32).to_be_bytes()),
            }
            g.extend(b.unwrap_or_default());
        }
        if version >= 4 {
            g.extend([0, 0]); // the member's and the value's tags
        }
        g
    }

    #[test]
    fn classic_values_read_every_field_of_every_version() {
        for version in 0..=4i16 {
            let c = crate::offsets::decode_offset_commit_value(&commit_value(version), 0).unwrap();
            assert_eq!(
                (c.version, c.offset, c.metadata.as_str()),
                (version, 7, "m")
            );
            assert_eq!(c.leader_epoch, if version >= 3 { 5 } else { -1 });
            assert_eq!(c.commit_timestamp, 1_700);
            assert_eq!(c.expire_timestamp, (version == 1).then_some(99));
            assert_eq!((c.topic_id, c.trailing_bytes), (None, 0));

            // The consumer protocol's assignment v0: topic "t", partitions
            // [0, 2], UserData null.
            let assignment = [
                0, 0, 0, 0, 0, 1, 0, 1, b't', 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 2, 255, 255, 255,
                255,
            ];
            let g = group_value(version, Some(&[]), &assignment);
            let g = crate::offsets::group::decode_group_metadata(&g, 0).unwrap();
            assert_eq!((g.protocol_type.as_str(), g.generation), ("consumer", 3));
            assert_eq!(g.protocol.as_deref(), Some("range"));
            assert_eq!(g.leader.as_deref(), Some("m-1"));
            assert_eq!(g.current_state_timestamp, (version >= 2).then_some(1_800));
            let m = &g.members[..];
            assert_eq!(m.len(), 1);
            assert_eq!(
                (m[0].member_id.as_str(), m[0].client_id.as_str()),
                ("m-1", "c")
            );
            assert_eq!(
                m[0].group_instance_id.as_deref(),
                (version >= 3).then_some("i-1")
            );
            assert_eq!(m[0].client_host, "/h");
            assert_eq!(m[0].rebalance_timeout_ms, (version >= 1).then_some(30));
            assert_eq!(m[0].session_timeout_ms, 10);
            assert_eq!(m[0].assignment, [("t".to_string(), vec![0, 2])]);
            assert_eq!(g.trailing_bytes, 0);
        }
    }

    /// A member's subscription is `bytes`, not nullable: the generated
    /// `GroupMetadataValue.MemberMetadata.read` throws "non-nullable field
    /// subscription was serialized as null", and the load fails.
    #[test]
    fn a_null_subscription_fails_as_in_kafka() {
        for version in [0, 4] {
            let g = group_value(version, None, &[]);
            let e = crate::offsets::group::decode_group_metadata(&g, 0).unwrap_err();
            assert!(
                matches!(
                    e.kind,
                    DecodeErrorKind::UnexpectedNull {
                        field: "subscription"
                    }
                ),
                "{e:?}"
            );
        }
    }

    /// The encoders write what the brokers write, byte for byte
    /// (OffsetCommitKey.json, OffsetCommitValue.json v3 and v4,
    /// GroupMetadataKey.json), and the decoders read it back.
    #[test]
    fn classic_encoders_write_the_schema_files_layouts() {
        use crate::offsets::*;
        let key = encode_offset_commit_key("g", "t", 3);
        assert_eq!(key, [0, 1, 0, 1, b'g', 0, 1, b't', 0, 0, 0, 3]);
        assert_eq!(encode_group_metadata_key("g"), [0, 2, 0, 1, b'g']);
        let v3 = encode_offset_commit_value(CommitFormat::V3, 7, 5, "m", 1_700);
        assert_eq!(v3, commit_value(3));
        let v4 = encode_offset_commit_value(CommitFormat::V4(None), 7, 5, "m", 1_700);
        assert_eq!(v4, commit_value(4));
        let id: [u8; 16] = std::array::from_fn(|i| i as u8 + 1);
        let tagged = encode_offset_commit_value(CommitFormat::V4(Some(id)), 7, 5, "m", 1_700);
        let mut expected = commit_value(4);
        expected.pop();
        expected.extend([1, 0, 16]); // one tagged field: tag 0, 16 bytes
        expected.extend(id);
        assert_eq!(tagged, expected);
        let read = decode_offset_commit_value(&tagged, 0).unwrap();
        assert_eq!(read.topic_id, Some(crate::format::schema::uuid_string(&id)));
        assert!(read.lenient.is_empty());
    }
}
