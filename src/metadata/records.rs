//! The records of the KRaft metadata log (`__cluster_metadata-0`), its
//! snapshots and `bootstrap.checkpoint`, as schema tables for
//! [`crate::format::schema`].
//!
//! A metadata record's value is a frame (Kafka's `AbstractApiMessageSerde`,
//! server-common): `uvarint frameVersion` (only 1 is valid), `uvarint apiKey`,
//! `uvarint version`, then the message of that apiKey at that version, and
//! nothing after it. The key is null. Each table below is one JSON file of
//! `metadata/src/main/resources/common/metadata/` (the file is named above
//! it); the KRaft control records' values are
//! `clients/src/main/resources/common/message/{LeaderChangeMessage,
//! SnapshotHeaderRecord, SnapshotFooterRecord, KRaftVersionRecord,
//! VotersRecord}.json`, read at the versions of `ControlRecordUtils`
//! (all 0).
//!
//! An apiKey not in these tables is named (`unknown(apiKey)`) and shown raw;
//! a version above the newest a table knows is read field by field at that
//! version, as Kafka's generated `read` methods do (they check no version;
//! the fields of such a version are the newest layout's), except that the
//! class of a nested struct refuses it as Kafka's does (a field's
//! `nested`). Neither stops a dump or a replay: the replay reports both.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use serde::Serialize;
use serde_json::Value;

use crate::error::{DecodeError, DecodeErrorKind};
use crate::format::cursor::Cursor;
use crate::format::schema::{last_version, nested, Field, Leniency, Release, Schema, Ty, OPEN};
use crate::format::trace::{NoTrace, Trace, Traced};

use crate::format::schema::f;
use crate::format::schema::types::*;

/// A KRaft control record schema: flexible from version 0; `since` holds
/// the release that introduced each version from 0.
const fn control(
    name: &'static str,
    since: &'static [Release],
    fields: &'static [Field],
) -> Schema {
    Schema {
        name,
        versions: (0, last_version(since)),
        since,
        flexible_from: Some(0),
        fields,
    }
}

/// A metadata record schema; `since` holds the release that introduced
/// each version from 0 (the schema files of each release's jars).
const fn metadata(
    name: &'static str,
    since: &'static [Release],
    fields: &'static [Field],
) -> Schema {
    // Every metadata record is flexible from version 0 ("flexibleVersions": "0+").
    Schema {
        name,
        versions: (0, last_version(since)),
        since,
        flexible_from: Some(0),
        fields,
    }
}

use Release::{R3_9, R4_0, R4_3, R4_4};
/// Version 0 only, in 3.9's files already.
const V0: &[Release] = &[R3_9];

// The listeners and supported feature ranges a broker or a controller
// registers with (RegisterBrokerRecord, RegisterControllerRecord: each
// its own nested classes, BrokerEndpoint or ControllerEndpoint, of the
// record's versions).
const ENDPOINTS: Ty = Ty::Array(&Ty::Struct(&[
    f!("Name", S),
    f!("Host", S),
    f!("Port", Ty::Uint16),
    f!("SecurityProtocol", I16),
]));
const FEATURES: Ty = Ty::Array(&Ty::Struct(&[
    f!("Name", S),
    f!("MinSupportedVersion", I16),
    f!("MaxSupportedVersion", I16),
]));

// RegisterBrokerRecord.json (apiKey 0), validVersions 0-4 (4: CordonedLogDirs, Kafka 4.3).
static REGISTER_BROKER: &[Field] = &[
    f!("BrokerId", I32),
    f!("IsMigratingZkBroker", B, versions: (2, OPEN), default: "false"),
    f!("IncarnationId", U),
    f!("BrokerEpoch", I64),
    f!("EndPoints", ENDPOINTS, nested: nested("BrokerEndpoint", 0, 4)),
    f!("Features", FEATURES, nested: nested("BrokerFeature", 0, 4)),
    f!("Rack", S, nullable_from: Some(0)),
    f!("Fenced", B, default: "true"),
    f!("InControlledShutdown", B, versions: (1, OPEN), default: "false"),
    f!("LogDirs", US, versions: (3, OPEN), tag: Some((0, 3))),
    f!("CordonedLogDirs", US, versions: (4, OPEN), nullable_from: Some(4), tag: Some((1, 4)), default: "null"),
];
// UnregisterBrokerRecord.json (apiKey 1).
static UNREGISTER_BROKER: &[Field] = &[f!("BrokerId", I32), f!("BrokerEpoch", I64)];
// TopicRecord.json (apiKey 2).
static TOPIC: &[Field] = &[f!("Name", S), f!("TopicId", U)];
// PartitionRecord.json (apiKey 3), validVersions 0-2.
static PARTITION: &[Field] = &[
    f!("PartitionId", I32, default: "-1"),
    f!("TopicId", U),
    f!("Replicas", I32S),
    f!("Isr", I32S),
    f!("RemovingReplicas", I32S),
    f!("AddingReplicas", I32S),
    f!("Leader", I32, default: "-1"),
    f!("LeaderRecoveryState", I8, tag: Some((0, 0)), default: "0"),
    f!("LeaderEpoch", I32, default: "-1"),
    f!("PartitionEpoch", I32, default: "-1"),
    f!("Directories", US, versions: (1, OPEN)),
    f!("EligibleLeaderReplicas", I32S, versions: (2, OPEN), nullable_from: Some(2), tag: Some((1, 2)), default: "null"),
    f!("LastKnownElr", I32S, versions: (2, OPEN), nullable_from: Some(2), tag: Some((2, 2)), default: "null"),
];
// ConfigRecord.json (apiKey 4).
static CONFIG: &[Field] = &[
    f!("ResourceType", I8),
    f!("ResourceName", S),
    f!("Name", S),
    f!("Value", S, nullable_from: Some(0)),
];
// PartitionChangeRecord.json (apiKey 5), validVersions 0-2. Every field
// after TopicId is tagged: absent, it is at its default, which means
// "unchanged" (null, Leader's -2, LeaderRecoveryState's -1).
static PARTITION_CHANGE: &[Field] = &[
    f!("PartitionId", I32, default: "-1"),
    f!("TopicId", U),
    f!("Isr", I32S, nullable_from: Some(0), tag: Some((0, 0)), default: "null"),
    f!("Leader", I32, tag: Some((1, 0)), default: "-2"),
    f!("Replicas", I32S, nullable_from: Some(0), tag: Some((2, 0)), default: "null"),
    f!("RemovingReplicas", I32S, nullable_from: Some(0), tag: Some((3, 0)), default: "null"),
    f!("AddingReplicas", I32S, nullable_from: Some(0), tag: Some((4, 0)), default: "null"),
    f!("LeaderRecoveryState", I8, tag: Some((5, 0)), default: "-1"),
    f!("Directories", US, versions: (1, OPEN), nullable_from: Some(1), tag: Some((8, 1)), default: "null"),
    f!("EligibleLeaderReplicas", I32S, versions: (2, OPEN), nullable_from: Some(2), tag: Some((6, 2)), default: "null"),
    f!("LastKnownElr", I32S, versions: (2, OPEN), nullable_from: Some(2), tag: Some((7, 2)), default: "null"),
];
// FenceBrokerRecord.json (apiKey 7) and UnfenceBrokerRecord.json (apiKey 8).
static FENCE_BROKER: &[Field] = &[f!("Id", I32), f!("Epoch", I64)];
// RemoveTopicRecord.json (apiKey 9).
static REMOVE_TOPIC: &[Field] = &[f!("TopicId", U)];
// DelegationTokenRecord.json (apiKey 10).
static DELEGATION_TOKEN: &[Field] = &[
    f!("Owner", S),
    f!("Requester", S),
    f!("Renewers", Ty::Array(&Ty::String)),
    f!("IssueTimestamp", I64),
    f!("MaxTimestamp", I64),
    f!("ExpirationTimestamp", I64),
    f!("TokenId", S),
];
// UserScramCredentialRecord.json (apiKey 11).
static USER_SCRAM: &[Field] = &[
    f!("Name", S),
    f!("Mechanism", I8),
    f!("Salt", Ty::Bytes),
    f!("StoredKey", Ty::Bytes),
    f!("ServerKey", Ty::Bytes),
    f!("Iterations", I32),
];
// FeatureLevelRecord.json (apiKey 12).
static FEATURE_LEVEL: &[Field] = &[f!("Name", S), f!("FeatureLevel", I16)];
// ClientQuotaRecord.json (apiKey 14).
static CLIENT_QUOTA: &[Field] = &[
    f!(
        "Entity",
        Ty::Array(&Ty::Struct(&[
            f!("EntityType", S),
            f!("EntityName", S, nullable_from: Some(0)),
        ])),
        nested: nested("EntityData", 0, 0)
    ),
    f!("Key", S),
    f!("Value", Ty::Float64),
    f!("Remove", B),
];
// ProducerIdsRecord.json (apiKey 15).
static PRODUCER_IDS: &[Field] = &[
    f!("BrokerId", I32),
    f!("BrokerEpoch", I64, default: "-1"),
    f!("NextProducerId", I64),
];
// BrokerRegistrationChangeRecord.json (apiKey 17), validVersions 0-3 (3: CordonedLogDirs, Kafka 4.3).
static BROKER_REGISTRATION_CHANGE: &[Field] = &[
    f!("BrokerId", I32),
    f!("BrokerEpoch", I64),
    f!("Fenced", I8, tag: Some((0, 0))),
    f!("InControlledShutdown", I8, versions: (1, OPEN), tag: Some((1, 1))),
    f!("LogDirs", US, versions: (2, OPEN), tag: Some((2, 2))),
    f!("CordonedLogDirs", US, versions: (3, OPEN), nullable_from: Some(3), tag: Some((3, 3)), default: "null"),
];
// AccessControlEntryRecord.json (apiKey 18).
static ACL: &[Field] = &[
    f!("Id", U),
    f!("ResourceType", I8),
    f!("ResourceName", S),
    f!("PatternType", I8),
    f!("Principal", S),
    f!("Host", S),
    f!("Operation", I8),
    f!("PermissionType", I8),
];
// RemoveAccessControlEntryRecord.json (apiKey 19).
static REMOVE_ACL: &[Field] = &[f!("Id", U)];
// NoOpRecord.json (20), EndTransactionRecord.json (24): no fields.
static NONE: &[Field] = &[];
// ZkMigrationRecord.json (apiKey 21, named ZkMigrationStateRecord).
static ZK_MIGRATION: &[Field] = &[f!("ZkMigrationState", I8)];
// RemoveUserScramCredentialRecord.json (apiKey 22).
static REMOVE_SCRAM: &[Field] = &[f!("Name", S), f!("Mechanism", I8)];
// BeginTransactionRecord.json (apiKey 23).
static BEGIN_TXN: &[Field] =
    &[f!("Name", S, nullable_from: Some(0), tag: Some((0, 0)), default: "null")];
// AbortTransactionRecord.json (apiKey 25).
static ABORT_TXN: &[Field] =
    &[f!("Reason", S, nullable_from: Some(0), tag: Some((0, 0)), default: "null")];
// RemoveDelegationTokenRecord.json (apiKey 26).
static REMOVE_TOKEN: &[Field] = &[f!("TokenId", S)];
// RegisterControllerRecord.json (apiKey 27).
static REGISTER_CONTROLLER: &[Field] = &[
    f!("ControllerId", I32),
    f!("IncarnationId", U),
    f!("ZkMigrationReady", B),
    f!("EndPoints", ENDPOINTS, nested: nested("ControllerEndpoint", 0, 0)),
    f!("Features", FEATURES, nested: nested("ControllerFeature", 0, 0)),
];
// ClearElrRecord.json (apiKey 28).
static CLEAR_ELR: &[Field] = &[f!("TopicName", S)];
// UnregisterControllerRecord.json (apiKey 29, Kafka 4.4).
static UNREGISTER_CONTROLLER: &[Field] = &[f!("ControllerId", I32)];

/// The metadata record schemas by apiKey (`MetadataRecordType`, generated
/// from the `apiKey` of each file).
pub static METADATA: &[(u16, Schema)] = &[
    (
        0,
        metadata(
            "RegisterBrokerRecord",
            &[R3_9, R3_9, R3_9, R3_9, R4_3],
            REGISTER_BROKER,
        ),
    ),
    (1, metadata("UnregisterBrokerRecord", V0, UNREGISTER_BROKER)),
    (2, metadata("TopicRecord", V0, TOPIC)),
    (3, metadata("PartitionRecord", &[R3_9; 3], PARTITION)),
    (4, metadata("ConfigRecord", V0, CONFIG)),
    (
        5,
        metadata("PartitionChangeRecord", &[R3_9; 3], PARTITION_CHANGE),
    ),
    (7, metadata("FenceBrokerRecord", V0, FENCE_BROKER)),
    (8, metadata("UnfenceBrokerRecord", V0, FENCE_BROKER)),
    (9, metadata("RemoveTopicRecord", V0, REMOVE_TOPIC)),
    (10, metadata("DelegationTokenRecord", V0, DELEGATION_TOKEN)),
    (11, metadata("UserScramCredentialRecord", V0, USER_SCRAM)),
    (12, metadata("FeatureLevelRecord", V0, FEATURE_LEVEL)),
    (14, metadata("ClientQuotaRecord", V0, CLIENT_QUOTA)),
    (15, metadata("ProducerIdsRecord", V0, PRODUCER_IDS)),
    (
        17,
        metadata(
            "BrokerRegistrationChangeRecord",
            &[R3_9, R3_9, R3_9, R4_3],
            BROKER_REGISTRATION_CHANGE,
        ),
    ),
    (18, metadata("AccessControlEntryRecord", V0, ACL)),
    (
        19,
        metadata("RemoveAccessControlEntryRecord", V0, REMOVE_ACL),
    ),
    (20, metadata("NoOpRecord", V0, NONE)),
    (21, metadata("ZkMigrationStateRecord", V0, ZK_MIGRATION)),
    (
        22,
        metadata("RemoveUserScramCredentialRecord", V0, REMOVE_SCRAM),
    ),
    (23, metadata("BeginTransactionRecord", V0, BEGIN_TXN)),
    (24, metadata("EndTransactionRecord", V0, NONE)),
    (25, metadata("AbortTransactionRecord", V0, ABORT_TXN)),
    (
        26,
        metadata("RemoveDelegationTokenRecord", V0, REMOVE_TOKEN),
    ),
    (
        27,
        metadata("RegisterControllerRecord", V0, REGISTER_CONTROLLER),
    ),
    (28, metadata("ClearElrRecord", &[R4_0], CLEAR_ELR)),
    (
        29,
        metadata("UnregisterControllerRecord", &[R4_4], UNREGISTER_CONTROLLER),
    ),
];

/// The schema of a metadata apiKey.
pub fn metadata_schema(api_key: u16) -> Option<&'static Schema> {
    METADATA.iter().find(|(k, _)| *k == api_key).map(|(_, s)| s)
}

// LeaderChangeMessage.json: the Voter common struct (VoterDirectoryId from v1).
static VOTER: &[Field] = &[
    f!("VoterId", I32),
    f!("VoterDirectoryId", U, versions: (1, OPEN)),
];
static LEADER_CHANGE: &[Field] = &[
    f!("Version", I16),
    f!("LeaderId", I32),
    f!("Voters", Ty::Array(&Ty::Struct(VOTER))),
    f!("GrantingVoters", Ty::Array(&Ty::Struct(VOTER))),
];
// SnapshotHeaderRecord.json.
static SNAPSHOT_HEADER: &[Field] = &[f!("Version", I16), f!("LastContainedLogTimestamp", I64)];
// SnapshotFooterRecord.json.
static SNAPSHOT_FOOTER: &[Field] = &[f!("Version", I16)];
// KRaftVersionRecord.json.
static KRAFT_VERSION: &[Field] = &[f!("Version", I16), f!("KRaftVersion", I16)];
// VotersRecord.json.
static VOTERS: &[Field] = &[
    f!("Version", I16),
    f!(
        "Voters",
        Ty::Array(&Ty::Struct(&[
            f!("VoterId", I32),
            f!("VoterDirectoryId", U),
            f!(
                "Endpoints",
                Ty::Array(&Ty::Struct(&[
                    f!("Name", S),
                    f!("Host", S),
                    f!("Port", Ty::Uint16)
                ])),
                nested: nested("Endpoint", 0, 0)
            ),
            f!(
                "KRaftVersionFeature",
                Ty::Struct(&[
                    f!("MinSupportedVersion", I16),
                    f!("MaxSupportedVersion", I16)
                ]),
                nested: nested("KRaftVersionFeature", 0, 0)
            ),
        ])),
        nested: nested("Voter", 0, 0)
    ),
];

/// The value schemas of the KRaft control record types (`ControlRecordType`
/// 2..=6), each read at version 0 as `ControlRecordUtils` does.
pub static CONTROL: &[(i16, Schema)] = &[
    (
        2,
        control("LeaderChangeMessage", &[R3_9, R3_9], LEADER_CHANGE),
    ),
    (3, control("SnapshotHeaderRecord", V0, SNAPSHOT_HEADER)),
    (4, control("SnapshotFooterRecord", V0, SNAPSHOT_FOOTER)),
    (5, control("KRaftVersionRecord", V0, KRAFT_VERSION)),
    (6, control("VotersRecord", V0, VOTERS)),
];

/// A KRaft control record's value as dump-segment shows it: its schema's
/// name, then its fields, or why they do not decode and its bytes.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ControlValue {
    #[serde(rename = "type")]
    pub name: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub data: Option<Value>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The value's bytes in hex, when they do not decode.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<String>,
}

/// Compact JSON, as in the JSON output.
impl std::fmt::Display for ControlValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&serde_json::to_string(self).map_err(|_| std::fmt::Error)?)
    }
}

/// The decoded value of a KRaft control record of `control_type`, or `None`
/// for the transaction markers and unknown types. Read like
/// `ControlRecordUtils.deserialize*`: at version 0 with the generated
/// reader ([`Schema::decode_prefix_as_kafka`]), bytes after the message
/// ignored.
pub fn decode_control_value(
    control_type: i16,
    value: Option<&[u8]>,
    at: u64,
) -> Option<ControlValue> {
    let (_, schema) = CONTROL.iter().find(|(t, _)| *t == control_type)?;
    let mut out = ControlValue {
        name: schema.name,
        data: None,
        error: None,
        raw: None,
    };
    match value {
        None => out.error = Some("null value".into()),
        Some(value) => match schema.decode_prefix_as_kafka(&mut Cursor::new(value, at), 0) {
            Ok(read) => out.data = Some(read.data),
            Err(e) => {
                out.error = Some(e.to_string());
                out.raw = Some(hex(value));
            }
        },
    }
    Some(out)
}

/// A metadata record's frame.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Frame {
    pub frame_version: u16,
    pub api_key: u16,
    pub version: i16,
}

/// A decoded metadata record: its frame, its schema (when known) and its
/// fields, or the reason it does not decode.
#[derive(Debug, Clone, PartialEq)]
pub struct MetadataRecord {
    pub frame: Option<Frame>,
    /// `TopicRecord`, or `unknown(apiKey)`.
    pub name: String,
    /// The fields (a JSON object) when the record decodes.
    pub data: Option<Value>,
    /// Why it does not decode (an unknown apiKey or version included).
    pub error: Option<String>,
    /// What keeps it from decoding, when it does not.
    pub defect: Option<Defect>,
    /// The newest version klog knows, whose layout was read, when the
    /// record's version is newer.
    pub read_as: Option<i16>,
    /// Where the record was read as Kafka's generated `read` reads it and
    /// a strict reading refuses it ([`Leniency`]).
    pub lenient: Vec<Leniency>,
}

/// Why a metadata record does not decode. Kafka fails on both
/// (`AbstractApiMessageSerde.read` throws `MetadataParseException`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Defect {
    /// The frame or the message is malformed, at the error's byte.
    Malformed(DecodeError),
    /// An apiKey that is no metadata record type (`MetadataRecordType.fromId`
    /// throws `UnsupportedVersionException`).
    UnknownApiKey(u16),
}

fn unsigned_short<'a, T: Trace<'a>>(
    c: &mut Traced<'a, '_, T>,
    (name, field): (&'static str, &'static str),
) -> Result<u16, DecodeError> {
    let at = c.c.position();
    let v = c.uvarint(name)?;
    // AbstractApiMessageSerde.unsignedIntToShort: above Short.MAX_VALUE is an error.
    if v > i16::MAX as u32 {
        return Err(DecodeError::new(
            at,
            DecodeErrorKind::ValueOutOfRange {
                field,
                value: i64::from(v),
            },
        ));
    }
    Ok(v as u16)
}

/// A metadata record's frame (`AbstractApiMessageSerde.read`: uvarint
/// frameVersion, which must be 1, uvarint apiKey, uvarint version), each
/// field handed to `trace`.
pub fn frame_traced<'a, T: Trace<'a>>(
    c: &mut Cursor<'a>,
    trace: &mut T,
) -> Result<Frame, DecodeError> {
    let mut c = Traced::new(c, trace);
    let fv_at = c.c.position();
    let frame_version = unsigned_short(&mut c, ("frameVersion", "frame version"))?;
    if frame_version != 1 {
        // Version 0 was KRaft's 2.8 preview; only frame version 1 is read.
        return Err(DecodeError::new(
            fv_at,
            DecodeErrorKind::UnknownVersion {
                schema: "metadata record frame",
                version: frame_version as i16,
            },
        ));
    }
    let api_key = unsigned_short(&mut c, ("apiKey", "apiKey"))?;
    let version = unsigned_short(&mut c, ("version", "version"))? as i16;
    Ok(Frame {
        frame_version,
        api_key,
        version,
    })
}

/// Decode a metadata record value (`AbstractApiMessageSerde.read`); `at` is
/// the position of its first byte. Never fails: what does not decode is
/// described in `error`.
pub fn decode_metadata(value: &[u8], at: u64) -> MetadataRecord {
    let mut c = Cursor::new(value, at);
    let frame = frame_traced(&mut c, &mut NoTrace);
    let frame = match frame {
        Ok(f) => f,
        Err(e) => {
            return MetadataRecord {
                frame: None,
                name: "unknown".into(),
                data: None,
                error: Some(e.to_string()),
                defect: Some(Defect::Malformed(e)),
                read_as: None,
                lenient: Vec::new(),
            }
        }
    };
    let Some(schema) = metadata_schema(frame.api_key) else {
        return MetadataRecord {
            frame: Some(frame),
            name: format!("unknown({})", frame.api_key),
            data: None,
            error: Some(format!(
                "apiKey {} is not a metadata record type klog knows",
                frame.api_key
            )),
            defect: Some(Defect::UnknownApiKey(frame.api_key)),
            read_as: None,
            lenient: Vec::new(),
        };
    };
    // A version above the newest known is read field by field at that
    // version, as the generated `read(Readable, short)` of a metadata
    // record reads it: it tests only `version >= N` for its fields and never
    // rejects a version (TopicRecord.read, RegisterBrokerRecord.read); the
    // classes of its nested structs do (the table's `nested`:
    // `RegisterBrokerRecord.BrokerEndpoint.read` throws
    // UnsupportedVersionException "Can't read version 5 of
    // BrokerEndpoint"), which `AbstractApiMessageSerde.read` turns into
    // MetadataParseException: a newer record holding such a struct does not
    // load.
    let read_as = (frame.version > schema.versions.1).then_some(schema.versions.1);
    let body_at = c.position();
    match schema.decode_any_version_as_kafka(c.rest(), body_at, frame.version) {
        Ok(read) => MetadataRecord {
            frame: Some(frame),
            name: schema.name.into(),
            data: Some(read.data),
            error: None,
            defect: None,
            read_as,
            lenient: read.lenient,
        },
        Err(e) => MetadataRecord {
            frame: Some(frame),
            name: schema.name.into(),
            data: None,
            error: Some(match (read_as, e.kind) {
                (Some(newest), DecodeErrorKind::UnknownVersion { schema: class, .. }) => format!(
                    "{e}: version {} is newer than {}'s newest, {newest}, and the class of its \
                     nested {class} refuses it (Kafka: \"Can't read version {} of {class}\")",
                    frame.version, schema.name, frame.version
                ),
                (Some(v), _) => format!("version {} read as version {v}: {e}", frame.version),
                (None, _) => e.to_string(),
            }),
            defect: Some(Defect::Malformed(e)),
            read_as,
            lenient: Vec::new(),
        },
    }
}

impl MetadataRecord {
    /// The decoded fields as Kafka's generated class holds them after
    /// `read`: each field the record does not set (a tagged field its
    /// writer left out at its default, a field of another version) at its
    /// table's default ([`Schema::filled`]), what Kafka's replay acts on.
    pub fn data_as_read(&self) -> Option<Value> {
        let data = self.data.as_ref()?;
        let schema = METADATA.iter().find(|(_, s)| s.name == self.name);
        Some(schema.map_or_else(|| data.clone(), |(_, s)| s.filled(data)))
    }

    /// The record as the `decoded` JSON of dump-segment; `raw` is the value
    /// (shown in hex when it does not decode).
    pub fn to_json(&self, raw: &[u8]) -> Value {
        let mut o = serde_json::Map::new();
        if let Some(f) = self.frame {
            o.insert("frameVersion".into(), f.frame_version.into());
            o.insert("apiKey".into(), f.api_key.into());
            o.insert("version".into(), f.version.into());
        }
        if let Some(v) = self.read_as {
            o.insert("readAs".into(), v.into());
        }
        o.insert("type".into(), self.name.clone().into());
        if let Some(d) = &self.data {
            o.insert("data".into(), d.clone());
        }
        if let Some(e) = &self.error {
            o.insert("error".into(), e.clone().into());
            o.insert("raw".into(), hex(raw).into());
        }
        if !self.lenient.is_empty() {
            let words = self.lenient.iter().map(|l| Value::from(l.to_string()));
            o.insert("lenient".into(), Value::Array(words.collect()));
        }
        Value::Object(o)
    }

    /// One line for people: `TopicRecord v0 {"name":"orders",…}`.
    pub fn to_text(&self, raw: &[u8]) -> String {
        let v = self.frame.map_or(String::new(), |f| match self.read_as {
            Some(r) => format!(" v{} (newer than klog knows: read as v{r})", f.version),
            None => format!(" v{}", f.version),
        });
        match (&self.data, &self.error) {
            (Some(d), _) => format!("{}{v} {d}", self.name),
            (None, Some(e)) => format!("{}{v} undecoded ({e}) raw: {}", self.name, hex(raw)),
            (None, None) => self.name.clone(),
        }
    }
}

/// Lowercase hex.
pub fn hex(bytes: &[u8]) -> String {
    Hex(bytes).to_string()
}

/// Bytes as a lowercase hex string, written as serialized (no copy).
pub struct Hex<'a>(pub &'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl serde::Serialize for Hex<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn topic_record_and_unknowns() {
        // frame 1, apiKey 2, version 0, compact "ab", uuid, no tags.
        let mut b = vec![1, 2, 0, 3, b'a', b'b'];
        b.extend_from_slice(&[0; 16]);
        b.push(0);
        let r = decode_metadata(&b, 0);
        assert_eq!(r.name, "TopicRecord");
        let d = r.data.unwrap();
        assert_eq!(d["name"], "ab");
        assert_eq!(d["topicId"], crate::format::schema::ZERO_UUID);
        let u = decode_metadata(&[1, 99, 0, 5], 0);
        assert_eq!(u.name, "unknown(99)");
        assert!(u.error.is_some());
        // Version 7 of TopicRecord (v0 only): read with v0's layout.
        let mut b7 = b.clone();
        b7[2] = 7;
        let v = decode_metadata(&b7, 0);
        assert_eq!((v.name.as_str(), v.read_as), ("TopicRecord", Some(0)));
        assert_eq!(v.data.unwrap()["name"], "ab");
        let v = decode_metadata(&[1, 2, 7, 0], 0);
        assert!(v.error.unwrap().contains("version 7 read as version 0"));
        assert!(matches!(v.defect, Some(Defect::Malformed(_))));
        assert!(decode_metadata(&[0, 2, 0], 0).error.is_some());
        assert!(decode_metadata(&[], 0).error.is_some());
    }

    /// A PartitionChangeRecord that changes only the ISR holds, as read,
    /// the defaults of PartitionChangeRecord.json for the tags it leaves
    /// out: Leader -2 (NO_LEADER_CHANGE), LeaderRecoveryState -1, the other
    /// lists null (no change).
    #[test]
    fn a_record_as_read_holds_the_defaults_of_the_tags_left_out() {
        // frame 1, apiKey 5, version 0; PartitionId 3, TopicId zero; tag 0 (Isr) = [1].
        let mut b = vec![1, 5, 0, 0, 0, 0, 3];
        b.extend_from_slice(&[0; 16]);
        b.extend_from_slice(&[1, 0, 5, 2, 0, 0, 0, 1]);
        let r = decode_metadata(&b, 0);
        assert_eq!(r.data.as_ref().unwrap().get("leader"), None);
        let read = r.data_as_read().unwrap();
        assert_eq!(read["partitionId"], 3);
        assert_eq!(read["isr"], serde_json::json!([1]));
        assert_eq!(read["leader"], -2);
        assert_eq!(read["leaderRecoveryState"], -1);
        assert_eq!(read["replicas"], Value::Null);
        assert_eq!(read["directories"], Value::Null);
    }

    /// A ClientQuotaRecord (apiKey 14, validVersions 0) newer than Kafka
    /// 4.4's: its generated read checks no version, the nested EntityData's
    /// class reads version 0 only (ClientQuotaRecord.json declares it
    /// inline; `EntityData.HIGHEST_SUPPORTED_VERSION` is 0 in 4.4.0's
    /// jar), so the record fails unless its Entity list is empty. Kafka
    /// 4.4.0's `new ClientQuotaRecord(readable, 1)` throws "Can't read
    /// version 1 of EntityData" on these bytes, and reads the record
    /// whose Entity list is empty.
    #[test]
    fn a_newer_record_fails_in_a_nested_struct_that_refuses_the_version() {
        // Entity [("user", null)], Key "k", Value 1.0, Remove false, no tags.
        let mut entity = vec![2, 5, b'u', b's', b'e', b'r', 0, 0];
        let rest = [&[2, b'k'][..], &1.0f64.to_be_bytes(), &[0, 0]].concat();
        entity.extend_from_slice(&rest);
        let record = |version: u8, body: &[u8]| [&[1, 14, version][..], body].concat();
        let v0 = decode_metadata(&record(0, &entity), 0);
        assert_eq!(v0.data.unwrap()["entity"][0]["entityType"], "user");
        let v1 = decode_metadata(&record(1, &entity), 0);
        assert_eq!(v1.read_as, Some(0));
        assert!(
            v1.error
                .as_deref()
                .unwrap()
                .contains("Can't read version 1 of EntityData"),
            "{:?}",
            v1.error
        );
        assert!(matches!(
            v1.defect,
            Some(Defect::Malformed(DecodeError {
                kind: DecodeErrorKind::UnknownVersion {
                    schema: "EntityData",
                    version: 1
                },
                ..
            }))
        ));
        // No entity: nothing reads the nested struct, the record loads.
        let empty = [&[1][..], &rest].concat();
        let v1 = decode_metadata(&record(1, &empty), 0);
        assert_eq!(v1.data.unwrap()["key"], "k");
    }
}
