//! The records of `__remote_log_metadata` (KIP-405's
//! `TopicBasedRemoteLogMetadataManager`), as schema tables for
//! [`crate::format::schema`], and what Kafka makes of them.
//!
//! A record's value is framed as a KRaft metadata record is
//! (`RemoteLogMetadataSerde` → `BytesApiMessageSerde` →
//! `AbstractApiMessageSerde.read`, server-common): `uvarint frameVersion`
//! (only 1), `uvarint apiKey`, `uvarint version`, the message, and nothing
//! after it; the key is null. The tables are the JSON files of the
//! kafka-storage jar's `message/` folder (the same in 3.9 through 4.4),
//! one table each, named above it. Every message is version 0 only and
//! flexible.
//!
//! The decoded message then goes through the transform of its type
//! (`RemoteLogSegmentMetadataTransform` and its siblings,
//! `...metadata.storage.serialization`) into the object
//! `kafka-dump-log --remote-log-metadata-decoder` prints with its
//! `toString` ([`RemoteLogMetadata`]'s `Display`); the objects' constructors
//! check what they are given (`RemoteLogSegmentMetadata`,
//! `RemoteLogSegmentMetadataUpdate`, `RemotePartitionDeleteMetadata`,
//! kafka-storage-api; `RemoteLogSegmentMetadataSnapshot`, kafka-storage).
//! What fails anywhere on the way fails with Kafka's own words
//! ([`RemoteError`]).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::BTreeMap;
use std::fmt;

use base64::Engine;
use serde_json::Value;

use crate::format::cursor::Cursor;
use crate::format::schema::f;
use crate::format::schema::types::*;
use crate::format::schema::{Field, Release, Schema, Ty};

/// Version 0 only, flexible from 0 (every file here).
const fn remote(name: &'static str, fields: &'static [Field]) -> Schema {
    Schema {
        name,
        versions: (0, 0),
        since: &[Release::R3_9],
        flexible_from: Some(0),
        fields,
    }
}

// TopicIdPartitionEntry (a common struct of three of the files).
static TOPIC_ID_PARTITION: &[Field] = &[f!("Name", S), f!("Id", U), f!("Partition", I32)];
// RemoteLogSegmentIdEntry.
static SEGMENT_ID: &[Field] = &[
    f!("TopicIdPartition", Ty::Struct(TOPIC_ID_PARTITION)),
    f!("Id", U),
];
// SegmentLeaderEpochEntry.
const LEADER_EPOCHS: Ty = Ty::Array(&Ty::Struct(&[f!("LeaderEpoch", I32), f!("Offset", I64)]));
// RemoteLogSegmentMetadataRecord.json (apiKey 0).
static SEGMENT: &[Field] = &[
    f!("RemoteLogSegmentId", Ty::Struct(SEGMENT_ID)),
    f!("StartOffset", I64),
    f!("EndOffset", I64),
    f!("BrokerId", I32),
    f!("MaxTimestampMs", I64),
    f!("EventTimestampMs", I64),
    f!("SegmentLeaderEpochs", LEADER_EPOCHS),
    f!("SegmentSizeInBytes", I32),
    f!("CustomMetadata", Ty::Bytes, nullable_from: Some(0)),
    f!("RemoteLogSegmentState", I8),
    f!("TxnIndexEmpty", B, tag: Some((0, 0))),
];
// RemoteLogSegmentMetadataUpdateRecord.json (apiKey 1).
static SEGMENT_UPDATE: &[Field] = &[
    f!("RemoteLogSegmentId", Ty::Struct(SEGMENT_ID)),
    f!("BrokerId", I32),
    f!("EventTimestampMs", I64),
    f!("CustomMetadata", Ty::Bytes, nullable_from: Some(0)),
    f!("RemoteLogSegmentState", I8),
];
// RemotePartitionDeleteMetadataRecord.json (apiKey 2).
static PARTITION_DELETE: &[Field] = &[
    f!("TopicIdPartition", Ty::Struct(TOPIC_ID_PARTITION)),
    f!("BrokerId", I32),
    f!("EventTimestampMs", I64),
    f!("RemotePartitionDeleteState", I8),
];
// RemoteLogSegmentMetadataSnapshotRecord.json (apiKey 3).
static SEGMENT_SNAPSHOT: &[Field] = &[
    f!("SegmentId", U),
    f!("StartOffset", I64),
    f!("EndOffset", I64),
    f!("BrokerId", I32),
    f!("MaxTimestampMs", I64),
    f!("EventTimestampMs", I64),
    f!("SegmentLeaderEpochs", LEADER_EPOCHS),
    f!("SegmentSizeInBytes", I32),
    f!("CustomMetadata", Ty::Bytes, nullable_from: Some(0)),
    f!("RemoteLogSegmentState", I8),
    f!("TxnIndexEmpty", B, tag: Some((0, 0))),
];

/// The record schemas by apiKey (the storage module's generated
/// `MetadataRecordType`).
pub static REMOTE_LOG_METADATA: &[(u16, Schema)] = &[
    (0, remote("RemoteLogSegmentMetadataRecord", SEGMENT)),
    (
        1,
        remote("RemoteLogSegmentMetadataUpdateRecord", SEGMENT_UPDATE),
    ),
    (
        2,
        remote("RemotePartitionDeleteMetadataRecord", PARTITION_DELETE),
    ),
    (
        3,
        remote("RemoteLogSegmentMetadataSnapshotRecord", SEGMENT_SNAPSHOT),
    ),
];

/// The schema of an apiKey of `__remote_log_metadata`.
pub fn remote_schema(api_key: u16) -> Option<&'static Schema> {
    REMOTE_LOG_METADATA
        .iter()
        .find(|(k, _)| *k == api_key)
        .map(|(_, s)| s)
}

/// Why a record does not become a [`RemoteLogMetadata`]: the message of
/// the exception Kafka's serde or the object's constructor throws
/// (`Throwable.getMessage`, `null` when it has none), which
/// kafka-dump-log prints after "Error at offset N, skipping.".
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteError(pub String);

impl fmt::Display for RemoteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn err<T>(message: impl Into<String>) -> Result<T, RemoteError> {
    Err(RemoteError(message.into()))
}

/// A record read: its apiKey, its version and its fields (a JSON object,
/// keys as Kafka's JSON converters name them).
#[derive(Debug, Clone)]
pub struct RemoteRecord {
    pub api_key: u16,
    pub version: i16,
    pub schema: &'static Schema,
    pub data: Value,
}

/// `AbstractApiMessageSerde.unsignedIntToShort`: an unsigned varint read as
/// a Java int, refused above `Short.MAX_VALUE` (a negative int passes and
/// is cut to a short).
fn unsigned_int_to_short(c: &mut Cursor<'_>, entity: &str) -> Result<i16, RemoteError> {
    let Ok(v) = c.uvarint() else {
        return err(format!("Error while reading {entity}"));
    };
    let v = v as i32;
    if v > i32::from(i16::MAX) {
        return err(format!("Value for {entity} was too large."));
    }
    Ok(v as i16)
}

/// `AbstractApiMessageSerde.read` with the storage module's record types:
/// the frame, then the message at its version, then nothing.
pub fn read_remote_record(value: &[u8]) -> Result<RemoteRecord, RemoteError> {
    let mut c = Cursor::new(value, 0);
    match unsigned_int_to_short(&mut c, "frame version")? {
        1 => {}
        0 => {
            return err(
                "Could not deserialize metadata record with frame version 0. Note that upgrades from the \
                 preview release of KRaft in 2.8 to newer versions are not supported.",
            )
        }
        other => {
            return err(format!(
                "Could not deserialize metadata record due to unknown frame version {other}(only frame \
                 version 1 is supported)"
            ))
        }
    }
    let api_key = unsigned_int_to_short(&mut c, "type")?;
    let version = unsigned_int_to_short(&mut c, "version")?;
    // MetadataRecordType.fromId throws; MetadataParseException(cause) says the cause.
    let Some(schema) = u16::try_from(api_key).ok().and_then(remote_schema) else {
        return err(format!(
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id {api_key}"
        ));
    };
    let failed = || RemoteError(format!("Failed to deserialize record with type {api_key}"));
    // The generated `read` checks no version itself; its nested structs'
    // `read` refuse any version above theirs (0): "Can't read version N of
    // RemoteLogSegmentIdEntry".
    let data = schema
        .decode_prefix_as_kafka(&mut c, 0)
        .map_err(|_| failed())?
        .data;
    if version != 0 && holds_struct(schema.fields, &data) {
        return Err(failed());
    }
    if !c.is_empty() {
        return err(format!(
            "Found {} byte(s) of garbage after {api_key}",
            c.remaining()
        ));
    }
    Ok(RemoteRecord {
        api_key: api_key as u16,
        version,
        schema,
        data,
    })
}

/// Whether a decoded message holds a nested struct (a struct field, or an
/// array of structs with an element).
fn holds_struct(fields: &[Field], data: &Value) -> bool {
    fields.iter().any(|f| match f.ty {
        Ty::Struct(_) => true,
        Ty::Array(Ty::Struct(_)) => data
            .get(crate::format::schema::json_name(f.name))
            .and_then(Value::as_array)
            .is_some_and(|a| !a.is_empty()),
        _ => false,
    })
}

/// `RemoteLogSegmentState`, by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum SegmentState {
    CopySegmentStarted,
    CopySegmentFinished,
    DeleteSegmentStarted,
    DeleteSegmentFinished,
}

impl SegmentState {
    /// `RemoteLogSegmentState.forId` (null for any other id).
    pub fn for_id(id: i64) -> Option<SegmentState> {
        Some(match id {
            0 => SegmentState::CopySegmentStarted,
            1 => SegmentState::CopySegmentFinished,
            2 => SegmentState::DeleteSegmentStarted,
            3 => SegmentState::DeleteSegmentFinished,
            _ => return None,
        })
    }

    /// The enum constant's name.
    pub fn name(self) -> &'static str {
        match self {
            SegmentState::CopySegmentStarted => "COPY_SEGMENT_STARTED",
            SegmentState::CopySegmentFinished => "COPY_SEGMENT_FINISHED",
            SegmentState::DeleteSegmentStarted => "DELETE_SEGMENT_STARTED",
            SegmentState::DeleteSegmentFinished => "DELETE_SEGMENT_FINISHED",
        }
    }
}

/// `RemotePartitionDeleteState`, by its id.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum PartitionDeleteState {
    DeletePartitionMarked,
    DeletePartitionStarted,
    DeletePartitionFinished,
}

impl PartitionDeleteState {
    /// `RemotePartitionDeleteState.forId` (null for any other id).
    pub fn for_id(id: i64) -> Option<PartitionDeleteState> {
        Some(match id {
            0 => PartitionDeleteState::DeletePartitionMarked,
            1 => PartitionDeleteState::DeletePartitionStarted,
            2 => PartitionDeleteState::DeletePartitionFinished,
            _ => return None,
        })
    }

    /// The enum constant's name.
    pub fn name(self) -> &'static str {
        match self {
            PartitionDeleteState::DeletePartitionMarked => "DELETE_PARTITION_MARKED",
            PartitionDeleteState::DeletePartitionStarted => "DELETE_PARTITION_STARTED",
            PartitionDeleteState::DeletePartitionFinished => "DELETE_PARTITION_FINISHED",
        }
    }
}

/// Kafka's `TopicIdPartition`.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct TopicIdPartition {
    /// The topic id as `Uuid.toString` writes it.
    pub topic_id: String,
    pub topic: String,
    pub partition: i32,
}

/// `RemoteLogSegmentId`: the partition and the segment's own uuid.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct SegmentId {
    pub partition: TopicIdPartition,
    pub id: String,
}

/// A remote segment's metadata (`RemoteLogSegmentMetadata`, and the
/// fields a `RemoteLogSegmentMetadataSnapshot` shares with it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentMetadata {
    pub start_offset: i64,
    pub end_offset: i64,
    pub broker_id: i32,
    pub max_timestamp_ms: i64,
    pub event_timestamp_ms: i64,
    /// Leader epoch → its first offset in the segment (a `TreeMap`: by epoch).
    pub leader_epochs: BTreeMap<i32, i64>,
    pub size_in_bytes: i32,
    /// The custom metadata's length, when there is any.
    pub custom_metadata: Option<usize>,
    pub state: SegmentState,
    /// `txnIdxEmpty`: the segment's transaction index holds no aborted
    /// transaction.
    pub txn_index_empty: bool,
}

/// What a `__remote_log_metadata` record says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RemoteLogMetadata {
    /// A segment copy started (RemoteLogSegmentMetadataRecord).
    Segment(SegmentId, SegmentMetadata),
    /// A segment's new state (RemoteLogSegmentMetadataUpdateRecord).
    Update {
        id: SegmentId,
        custom_metadata: Option<usize>,
        state: SegmentState,
        event_timestamp_ms: i64,
        broker_id: i32,
    },
    /// A partition's remote data deleted (RemotePartitionDeleteMetadataRecord).
    PartitionDelete {
        partition: TopicIdPartition,
        state: PartitionDeleteState,
        event_timestamp_ms: i64,
        broker_id: i32,
    },
    /// A segment in a metadata snapshot (RemoteLogSegmentMetadataSnapshotRecord).
    Snapshot {
        segment_id: String,
        metadata: SegmentMetadata,
    },
}

/// The remote log metadata a record value holds, as
/// `RemoteLogMetadataSerde.deserialize` builds it; never panics.
pub fn decode_remote_log_metadata(value: &[u8]) -> Result<RemoteLogMetadata, RemoteError> {
    let rec = read_remote_record(value)?;
    transform(&rec)
}

/// The transform of the record's type (`fromApiMessageAndVersion`) and
/// the checks of the object it builds.
pub fn transform(rec: &RemoteRecord) -> Result<RemoteLogMetadata, RemoteError> {
    let d = &rec.data;
    match rec.api_key {
        0 => {
            let id = segment_id(field(d, "remoteLogSegmentId"));
            let m = segment_fields(d)?;
            // Built with COPY_SEGMENT_STARTED first, then given the record's
            // state through an update (`createWithUpdates`).
            check_offsets(m.start_offset, m.end_offset)?;
            check_epochs(&m.leader_epochs)?;
            let state = segment_state(d)?;
            Ok(RemoteLogMetadata::Segment(
                id,
                SegmentMetadata { state, ..m },
            ))
        }
        1 => Ok(RemoteLogMetadata::Update {
            id: segment_id(field(d, "remoteLogSegmentId")),
            custom_metadata: custom_metadata(d),
            state: segment_state(d)?,
            event_timestamp_ms: int(d, "eventTimestampMs"),
            broker_id: int(d, "brokerId") as i32,
        }),
        2 => Ok(RemoteLogMetadata::PartitionDelete {
            partition: topic_id_partition(field(d, "topicIdPartition")),
            // `Objects.requireNonNull(state)`: no message.
            state: PartitionDeleteState::for_id(int(d, "remotePartitionDeleteState"))
                .ok_or_else(|| RemoteError("null".into()))?,
            event_timestamp_ms: int(d, "eventTimestampMs"),
            broker_id: int(d, "brokerId") as i32,
        }),
        _ => {
            let state = segment_state(d)?;
            let m = segment_fields(d)?;
            check_epochs(&m.leader_epochs)?;
            Ok(RemoteLogMetadata::Snapshot {
                segment_id: text(d, "segmentId"),
                metadata: SegmentMetadata { state, ..m },
            })
        }
    }
}

/// A field of a decoded message (null when absent).
fn field<'a>(d: &'a Value, key: &str) -> &'a Value {
    d.get(key).unwrap_or(&Value::Null)
}

fn int(d: &Value, key: &str) -> i64 {
    d.get(key).and_then(Value::as_i64).unwrap_or(0)
}

fn text(d: &Value, key: &str) -> String {
    d.get(key).and_then(Value::as_str).unwrap_or("").to_string()
}

fn topic_id_partition(d: &Value) -> TopicIdPartition {
    TopicIdPartition {
        topic_id: text(d, "id"),
        topic: text(d, "name"),
        partition: int(d, "partition") as i32,
    }
}

fn segment_id(d: &Value) -> SegmentId {
    SegmentId {
        partition: topic_id_partition(field(d, "topicIdPartition")),
        id: text(d, "id"),
    }
}

/// `Optional.ofNullable(record.customMetadata()).map(CustomMetadata::new)`.
fn custom_metadata(d: &Value) -> Option<usize> {
    let b64 = d.get("customMetadata")?.as_str()?;
    let bytes = base64::engine::general_purpose::STANDARD.decode(b64).ok()?;
    Some(bytes.len())
}

/// `RemoteLogSegmentState.forId`, and the constructor's
/// `Objects.requireNonNull(state, "state can not be null")`.
fn segment_state(d: &Value) -> Result<SegmentState, RemoteError> {
    SegmentState::for_id(int(d, "remoteLogSegmentState"))
        .ok_or_else(|| RemoteError("state can not be null".into()))
}

/// The fields a segment record and a snapshot record share (state
/// COPY_SEGMENT_STARTED until the caller sets it).
fn segment_fields(d: &Value) -> Result<SegmentMetadata, RemoteError> {
    let mut leader_epochs = BTreeMap::new();
    for e in field(d, "segmentLeaderEpochs")
        .as_array()
        .into_iter()
        .flatten()
    {
        // A HashMap first: a later entry for the same epoch wins.
        leader_epochs.insert(int(e, "leaderEpoch") as i32, int(e, "offset"));
    }
    Ok(SegmentMetadata {
        start_offset: int(d, "startOffset"),
        end_offset: int(d, "endOffset"),
        broker_id: int(d, "brokerId") as i32,
        max_timestamp_ms: int(d, "maxTimestampMs"),
        event_timestamp_ms: int(d, "eventTimestampMs"),
        leader_epochs,
        size_in_bytes: int(d, "segmentSizeInBytes") as i32,
        custom_metadata: custom_metadata(d),
        state: SegmentState::CopySegmentStarted,
        txn_index_empty: d
            .get("txnIndexEmpty")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    })
}

/// `RemoteLogSegmentMetadata`'s constructor: the offsets.
fn check_offsets(start: i64, end: i64) -> Result<(), RemoteError> {
    if start < 0 {
        return err(format!(
            "Unexpected start offset = {start}. StartOffset for a remote segment cannot be negative"
        ));
    }
    if end < start {
        return err(format!(
            "Unexpected end offset = {end}. EndOffset for a remote segment cannot be less than \
             startOffset = {start}"
        ));
    }
    Ok(())
}

/// The constructors' "segmentLeaderEpochs can not be null or empty".
fn check_epochs(epochs: &BTreeMap<i32, i64>) -> Result<(), RemoteError> {
    if epochs.is_empty() {
        return err("segmentLeaderEpochs can not be null or empty");
    }
    Ok(())
}

impl fmt::Display for TopicIdPartition {
    /// `TopicIdPartition.toString`: `<topic id>:<topic>-<partition>`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}-{}", self.topic_id, self.topic, self.partition)
    }
}

impl fmt::Display for SegmentId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "RemoteLogSegmentId{{topicIdPartition={}, id={}}}",
            self.partition, self.id
        )
    }
}

/// `Optional<CustomMetadata>.toString`.
fn optional_custom(len: Option<usize>) -> String {
    match len {
        None => "Optional.empty".into(),
        Some(n) => format!("Optional[CustomMetadata{{{n} bytes}}]"),
    }
}

/// A `TreeMap<Integer, Long>.toString`: `{0=0, 2=15}`.
fn epochs_text(epochs: &BTreeMap<i32, i64>) -> String {
    let inner: Vec<String> = epochs.iter().map(|(e, o)| format!("{e}={o}")).collect();
    format!("{{{}}}", inner.join(", "))
}

impl fmt::Display for RemoteLogMetadata {
    /// The `toString` of the object (what kafka-dump-log prints).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RemoteLogMetadata::Segment(id, m) => write!(
                f,
                "RemoteLogSegmentMetadata{{remoteLogSegmentId={id}, startOffset={}, endOffset={}, \
                 brokerId={}, maxTimestampMs={}, eventTimestampMs={}, segmentLeaderEpochs={}, \
                 segmentSizeInBytes={}, customMetadata={}, state={}, txnIdxEmpty={}}}",
                m.start_offset,
                m.end_offset,
                m.broker_id,
                m.max_timestamp_ms,
                m.event_timestamp_ms,
                epochs_text(&m.leader_epochs),
                m.size_in_bytes,
                optional_custom(m.custom_metadata),
                m.state.name(),
                m.txn_index_empty
            ),
            RemoteLogMetadata::Update {
                id,
                custom_metadata,
                state,
                event_timestamp_ms,
                broker_id,
            } => write!(
                f,
                "RemoteLogSegmentMetadataUpdate{{remoteLogSegmentId={id}, customMetadata={}, state={}, \
                 eventTimestampMs={event_timestamp_ms}, brokerId={broker_id}}}",
                optional_custom(*custom_metadata),
                state.name()
            ),
            RemoteLogMetadata::PartitionDelete {
                partition,
                state,
                event_timestamp_ms,
                broker_id,
            } => write!(
                f,
                "RemotePartitionDeleteMetadata{{topicPartition={partition}, state={}, \
                 eventTimestampMs={event_timestamp_ms}, brokerId={broker_id}}}",
                state.name()
            ),
            RemoteLogMetadata::Snapshot {
                segment_id,
                metadata: m,
            } => write!(
                f,
                "RemoteLogSegmentMetadataSnapshot{{segmentId={segment_id}, startOffset={}, endOffset={}, \
                 maxTimestampMs={}, segmentLeaderEpochs={}, segmentSizeInBytes={}, customMetadata={}, \
                 state={}, txnIdxEmpty={}}}",
                m.start_offset,
                m.end_offset,
                m.max_timestamp_ms,
                epochs_text(&m.leader_epochs),
                m.size_in_bytes,
                optional_custom(m.custom_metadata),
                m.state.name(),
                m.txn_index_empty
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A segment record: frame 1, apiKey 0, version 0, then its fields.
    fn segment_record(start: i64, end: i64, state: u8, epochs: &[(i32, i64)]) -> Vec<u8> {
        let mut b = vec![1, 0, 0];
        b.push(2); // compact string "t"
        b.push(b't');
        b.extend([7u8; 16]); // topic id
        b.extend(3i32.to_be_bytes());
        b.push(0); // tags of TopicIdPartitionEntry
        b.extend([9u8; 16]); // segment id
        b.push(0); // tags of RemoteLogSegmentIdEntry
        b.extend(start.to_be_bytes());
        b.extend(end.to_be_bytes());
        b.extend(1i32.to_be_bytes());
        b.extend(100i64.to_be_bytes());
        b.extend(200i64.to_be_bytes());
        b.push(epochs.len() as u8 + 1);
        for (e, o) in epochs {
            b.extend(e.to_be_bytes());
            b.extend(o.to_be_bytes());
            b.push(0);
        }
        b.extend(42i32.to_be_bytes());
        b.push(0); // null custom metadata
        b.push(state);
        b.extend([1, 0, 1, 1]); // TxnIndexEmpty = true
        b
    }

    #[test]
    fn a_segment_prints_as_kafka_prints_it() {
        let v = segment_record(0, 9, 1, &[(2, 5), (0, 0)]);
        let m = decode_remote_log_metadata(&v).unwrap();
        assert_eq!(
            m.to_string(),
            "RemoteLogSegmentMetadata{remoteLogSegmentId=RemoteLogSegmentId{topicIdPartition=\
             BwcHBwcHBwcHBwcHBwcHBw:t-3, id=CQkJCQkJCQkJCQkJCQkJCQ}, startOffset=0, endOffset=9, \
             brokerId=1, maxTimestampMs=100, eventTimestampMs=200, segmentLeaderEpochs={0=0, 2=5}, \
             segmentSizeInBytes=42, customMetadata=Optional.empty, state=COPY_SEGMENT_FINISHED, \
             txnIdxEmpty=true}"
        );
    }

    #[test]
    fn kafka_words_for_what_fails() {
        let msg = |v: &[u8]| decode_remote_log_metadata(v).unwrap_err().0;
        assert_eq!(msg(&[]), "Error while reading frame version");
        assert!(
            msg(&[0]).starts_with("Could not deserialize metadata record with frame version 0.")
        );
        assert_eq!(
            msg(&[1, 9, 0]),
            "org.apache.kafka.common.errors.UnsupportedVersionException: Unknown metadata id 9"
        );
        assert_eq!(
            msg(&[0xff, 0xff, 0x03]),
            "Value for frame version was too large."
        );
        let good = segment_record(0, 9, 1, &[(0, 0)]);
        let mut v1 = good.clone();
        v1[2] = 1;
        assert_eq!(msg(&v1), "Failed to deserialize record with type 0");
        let mut long = good.clone();
        long.push(0);
        assert_eq!(msg(&long), "Found 1 byte(s) of garbage after 0");
        assert_eq!(
            msg(&segment_record(-4, 9, 1, &[(0, 0)])),
            "Unexpected start offset = -4. StartOffset for a remote segment cannot be negative"
        );
        assert_eq!(
            msg(&segment_record(5, 1, 1, &[(0, 0)])),
            "Unexpected end offset = 1. EndOffset for a remote segment cannot be less than startOffset = 5"
        );
        assert_eq!(
            msg(&segment_record(0, 1, 1, &[])),
            "segmentLeaderEpochs can not be null or empty"
        );
        assert_eq!(
            msg(&segment_record(0, 1, 9, &[(0, 0)])),
            "state can not be null"
        );
        for cut in 0..good.len() {
            let _ = decode_remote_log_metadata(&good[..cut]);
        }
    }

    #[test]
    fn any_byte_anywhere_never_panics() {
        // Every byte of a record of each type set to each value, and every cut.
        let mut update = vec![1, 1, 0, 2, b't'];
        update.extend([7u8; 16]);
        update.extend(0i32.to_be_bytes());
        update.push(0);
        update.extend([9u8; 16]);
        update.push(0);
        update.extend(1i32.to_be_bytes());
        update.extend(5i64.to_be_bytes());
        update.extend([4, 1, 2, 3]); // custom metadata, 3 bytes
        update.extend([1, 0]);
        assert!(decode_remote_log_metadata(&update)
            .unwrap()
            .to_string()
            .contains("customMetadata=Optional[CustomMetadata{3 bytes}]"));
        for good in [segment_record(0, 9, 1, &[(0, 0), (1, 4)]), update] {
            for at in 0..good.len() {
                for b in 0..=255u8 {
                    let mut v = good.clone();
                    v[at] = b;
                    let _ = decode_remote_log_metadata(&v).map(|m| m.to_string());
                }
                let _ = decode_remote_log_metadata(&good[..at]);
            }
        }
    }

    #[test]
    fn a_tagged_field_is_read_in_place_whatever_its_size_says() {
        let mut v = segment_record(0, 9, 1, &[(0, 0)]);
        let n = v.len();
        v[n - 2] = 9; // the tag's size
        assert!(decode_remote_log_metadata(&v).is_ok());
    }
}
