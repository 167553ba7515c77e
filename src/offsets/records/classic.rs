//! The classic group coordinator's record types (0 and 1 offset commits,
//! 2 group metadata) as schema tables.

use super::{rt, RecordType};
use crate::error::{DecodeError, DecodeErrorKind};
use crate::format::schema::f;
use crate::format::schema::types::*;
use crate::format::schema::{nested, Field, Release, Schema, Ty, OPEN};

// The classic record types as schema tables: the replay's decoders
// (`crate::offsets`, `crate::offsets::group`) and encoders read and write
// them, and `dump-segment --layout` traces them. OffsetCommitKey.json (types 0 and 1; type 0 is
// LegacyOffsetCommitKey.json, the same fields) and GroupMetadataKey.json.
static OFFSET_COMMIT_KEY_FIELDS: &[Field] = &[f!("group", S), f!("topic", S), f!("partition", I32)];
static GROUP_KEY_FIELDS: &[Field] = &[f!("group", S)];
// OffsetCommitValue.json, validVersions 0-4, flexibleVersions 4+
// (LegacyOffsetCommitValue.json is its version 0).
static OFFSET_COMMIT_VALUE_FIELDS: &[Field] = &[
    f!("offset", I64),
    f!("leaderEpoch", I32, versions: (3, OPEN), default: "-1"),
    f!("metadata", S),
    f!("commitTimestamp", I64),
    f!("expireTimestamp", I64, versions: (1, 1), default: "-1"),
    f!(
        "topicId",
        U,
        versions: (4, OPEN),
        tag: Some((0, 4)),
        since: Release::R4_1
    ),
];
// GroupMetadataValue.json, validVersions 0-4, flexibleVersions 4+.
static GROUP_METADATA_VALUE_FIELDS: &[Field] = &[
    f!("protocolType", S),
    f!("generation", I32),
    f!("protocol", S, nullable_from: Some(0)),
    f!("leader", S, nullable_from: Some(0)),
    f!("currentStateTimestamp", I64, versions: (2, OPEN), default: "-1"),
    f!(
        "members",
        Ty::Array(&Ty::Struct(&[
            f!("memberId", S),
            f!("groupInstanceId", S, versions: (3, OPEN), nullable_from: Some(3), default: "null"),
            f!("clientId", S),
            f!("clientHost", S),
            f!("rebalanceTimeout", I32, versions: (1, OPEN), default: "-1"),
            f!("sessionTimeout", I32),
            f!("subscription", Ty::Bytes),
            f!("assignment", Ty::Bytes),
        ]))
    ),
];

/// OffsetCommitKey.json: the key of record types 0 and 1.
pub const OFFSET_COMMIT_KEY: Schema = super::key("OffsetCommit", OFFSET_COMMIT_KEY_FIELDS);
/// OffsetCommitValue.json: record type 1's value, versions 0 to 4.
pub const OFFSET_COMMIT_VALUE: Schema =
    classic_value("OffsetCommitValue", OFFSET_COMMIT_VALUE_FIELDS);
/// GroupMetadataKey.json: the key of record type 2.
pub const GROUP_METADATA_KEY: Schema = super::key("GroupMetadata", GROUP_KEY_FIELDS);
/// GroupMetadataValue.json: record type 2's value, versions 0 to 4.
pub const GROUP_METADATA_VALUE: Schema =
    classic_value("GroupMetadataValue", GROUP_METADATA_VALUE_FIELDS);

/// The classic group coordinator record types (0 and 1 offset commits, 2
/// group metadata).
pub static CLASSIC_RECORDS: &[RecordType] = &[
    // LegacyOffsetCommitKey/Value.json: the value's version 0 only (Kafka
    // 4.0 read any OffsetCommitValue version under key type 0, 4.1 and later
    // fail the load on one above 0).
    RecordType {
        file_since: Release::R4_1,
        ..rt(
            0,
            "LegacyOffsetCommit",
            OFFSET_COMMIT_KEY_FIELDS,
            Schema {
                name: "LegacyOffsetCommitValue",
                versions: (0, 0),
                since: &[Release::R3_9],
                flexible_from: None,
                fields: OFFSET_COMMIT_VALUE_FIELDS,
            },
        )
    },
    rt(
        1,
        "OffsetCommit",
        OFFSET_COMMIT_KEY_FIELDS,
        OFFSET_COMMIT_VALUE,
    ),
    rt(2, "GroupMetadata", GROUP_KEY_FIELDS, GROUP_METADATA_VALUE),
];

const fn classic_value(name: &'static str, fields: &'static [Field]) -> Schema {
    Schema {
        name,
        versions: (0, 4),
        since: &[Release::R3_9; 5],
        flexible_from: Some(4),
        fields,
    }
}

/// The consumer protocol's subscription, embedded as bytes in a member of a
/// classic group whose protocolType is `consumer`
/// (clients/src/main/resources/common/message/ConsumerProtocolSubscription.json:
/// validVersions 0-3, not flexible).
pub static CONSUMER_PROTOCOL_SUBSCRIPTION: Schema = Schema {
    name: "ConsumerProtocolSubscription",
    versions: (0, 3),
    since: &[Release::R3_9; 4],
    flexible_from: None,
    fields: &[
        f!("Topics", STRS),
        f!("UserData", Ty::Bytes, nullable_from: Some(0), default: "null"),
        f!(
            "OwnedPartitions",
            TOPIC_PARTITIONS,
            versions: (1, OPEN),
            nested: nested("TopicPartition", 1, 3)
        ),
        f!("GenerationId", I32, versions: (2, OPEN), default: "-1"),
        f!("RackId", S, versions: (3, OPEN), nullable_from: Some(3), default: "null"),
    ],
};

/// The consumer protocol's assignment, embedded as the member's
/// `assignment` bytes (ConsumerProtocolAssignment.json: validVersions 0-3,
/// not flexible).
pub static CONSUMER_PROTOCOL_ASSIGNMENT: Schema = Schema {
    name: "ConsumerProtocolAssignment",
    versions: (0, 3),
    since: &[Release::R3_9; 4],
    flexible_from: None,
    fields: &[
        f!(
            "AssignedPartitions",
            TOPIC_PARTITIONS,
            nested: nested("TopicPartition", 0, 3)
        ),
        f!("UserData", Ty::Bytes, nullable_from: Some(0), default: "null"),
    ],
};

/// The consumer protocol's `[]TopicPartition`: a topic and its partitions.
const TOPIC_PARTITIONS: Ty = Ty::Array(&Ty::Struct(&[f!("Topic", S), f!("Partitions", I32S)]));

/// Read an embedded consumer-protocol message (`int16 version`, then the
/// struct) as the clients' `ConsumerProtocol` reads it
/// (`deserializeConsumerProtocolSubscription`, `...Assignment`): its
/// version and fields. A negative version is refused ("Unsupported
/// subscription version"); one above the schema's is read as the newest
/// (`checkSubscriptionVersion`: "When it encounters a newer version, it
/// parses it using the current format"); the struct is read as the
/// generated constructor reads it ([`Schema::decode_prefix_as_kafka`]),
/// and bytes after it are not looked at.
pub fn decode_consumer_protocol(
    schema: &'static Schema,
    bytes: &[u8],
    at: u64,
) -> Result<(i16, serde_json::Value), DecodeError> {
    read_consumer_protocol(schema, bytes, at, |version| {
        if version < schema.versions.0 {
            let schema = schema.name;
            let kind = DecodeErrorKind::UnknownVersion { schema, version };
            return Err(DecodeError::new(at, kind));
        }
        Ok(version.min(schema.versions.1))
    })
}

/// Read an embedded consumer-protocol message as kafka-dump-log reads a
/// classic group member's subscription and assignment
/// (`OffsetsMessageParser.prepareGroupMetadataValue` → `replaceField`:
/// `new ConsumerProtocolAssignment(accessor, version)` at the version the
/// bytes start with): no version is refused and each field is read by the
/// layout of the nearest version the schema has, but the nested
/// `TopicPartition` class throws for a version above 3 as soon as one is
/// read ("Can't read version 4 of TopicPartition"), so a message of a
/// newer version reads only when it holds no partition. Bytes after the
/// struct are not looked at.
pub fn decode_consumer_protocol_as_generated(
    schema: &'static Schema,
    bytes: &[u8],
    at: u64,
) -> Result<(i16, serde_json::Value), DecodeError> {
    read_consumer_protocol(schema, bytes, at, Ok)
}

/// The int16 version, then the struct at the version `read_as` gives for
/// it; the version and the fields.
fn read_consumer_protocol(
    schema: &'static Schema,
    bytes: &[u8],
    at: u64,
    read_as: impl FnOnce(i16) -> Result<i16, DecodeError>,
) -> Result<(i16, serde_json::Value), DecodeError> {
    let mut c = crate::format::cursor::Cursor::new(bytes, at);
    let version = c.i16()?; // version: int16
    let read = schema.decode_prefix_any_version_as_kafka(&mut c, read_as(version)?)?;
    Ok((version, read.data))
}
