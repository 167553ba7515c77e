//! Committed offsets: the records of the offsets topic (`__offsets` in a klog
//! data directory, `__consumer_offsets` in a Kafka log directory) and their
//! replay into a table.
//!
//! Key: `int16 recordType` then the key struct at that version.
//! - 0, 1: OffsetCommitKey — group string, topic string, partition int32
//!   (brokers write type 1; the two are identical);
//! - 2: GroupMetadataKey — group string;
//! - 3 and up: newer coordinator records (KIP-848 consumer groups, share
//!   and streams groups): decoded by [`records`] and kept by the replay for
//!   `klog groups`; the committed-offset table does not use them. A
//!   negative or unknown type is skipped (`GroupCoordinatorRecordSerde`
//!   throws `UnknownRecordTypeException` for any type it does not know, and
//!   `CoordinatorLoaderImpl` skips the record with a warning).
//!
//! Bytes after a key's or value's last field are ignored, as Kafka's
//! generated readers (`CoordinatorRecordSerde.readMessage`) never look past
//! the fields of the version they read; the replay warns of them. Keys and
//! values are read as those readers read them (the schema tables of
//! [`records`], read by [`Schema::decode_prefix_any_version_as_kafka`]), and
//! written from the same tables ([`Schema::encode`]): a name's malformed UTF-8 is
//! U+FFFD, a nullable field's negative length null, a known tag read in
//! place; the coordinator loads such a record, and the replay applies it
//! with a warning ([`crate::format::schema::Leniency`]).
//!
//! Value: `int16 version` then the value struct, or null: a tombstone that
//! deletes the key. OffsetCommitValue versions:
//!
//! | v | fields after the version |
//! |---|---|
//! | 0 | offset int64, metadata string, commitTimestamp int64 |
//! | 1 | offset int64, metadata string, commitTimestamp int64, expireTimestamp int64 |
//! | 2 | offset int64, metadata string, commitTimestamp int64 |
//! | 3 | offset int64, leaderEpoch int32, metadata string, commitTimestamp int64 |
//! | 4 | as v3, flexible: compact string, then tagged fields |
//!
//! Version 4 adds the tagged field 0, topicId (uuid, Kafka 4.1+). A value
//! version outside the ones Kafka reads for its key's record type (0 to 4
//! for OffsetCommitValue and GroupMetadataValue, 0 alone under the
//! LegacyOffsetCommit key type 0) is refused: Kafka's coordinator fails to
//! load the partition on it ([`read_value_version`]).
//!
//! The stored offset is the next offset the group will read. A negative one
//! (a non-Java client can commit one; the coordinator stores the int64 as
//! it is) decodes, and the replay warns of it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod group;
pub mod group_coordinator;
pub mod group_state;
pub mod records;
pub mod replay;
pub mod share;
pub mod share_delete;
pub mod standing;
pub mod write;

use std::borrow::Cow;

use crate::error::DecodeError;
use crate::format::cursor::Cursor;
use crate::format::message::read_value_version;
use crate::format::schema::{uuid_string, Fields, Leniency, Schema, ZERO_UUID};
use crate::format::trace::NoTrace;

pub use group::GroupMetadata;
pub use replay::{Replay, ReplayOptions};

/// The name of the offsets topic in klog data directories.
pub const KLOG_OFFSETS_TOPIC: &str = "__offsets";
/// The name of the offsets topic in Kafka log directories.
pub const KAFKA_OFFSETS_TOPIC: &str = "__consumer_offsets";
/// Kafka's default `offsets.topic.num.partitions`.
pub const KAFKA_DEFAULT_PARTITIONS: i32 = 50;

/// Whether `topic` is an offsets topic.
pub fn is_offsets_topic(topic: &str) -> bool {
    topic == KLOG_OFFSETS_TOPIC || topic == KAFKA_OFFSETS_TOPIC
}

/// A decoded offsets-topic key. Its strings are borrowed from the key,
/// and owned only where Kafka's reader replaced malformed UTF-8.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OffsetsKey<'a> {
    /// Types 0 and 1.
    OffsetCommit {
        record_type: i16,
        group: Cow<'a, str>,
        topic: Cow<'a, str>,
        partition: i32,
    },
    /// Type 2.
    GroupMetadata { group: Cow<'a, str> },
    /// Any record type the group coordinator does not read here (3 and up,
    /// or negative), skipped by the replay.
    Other { record_type: i16 },
}

/// A decoded OffsetCommitValue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetCommitValue {
    /// The version stored in the record.
    pub version: i16,
    /// The next offset to read (negative only from a non-Java client).
    pub offset: i64,
    /// -1 when unknown (and before v3).
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp: i64,
    /// v1 only.
    pub expire_timestamp: Option<i64>,
    /// v4's tagged topicId (`Uuid.toString`), when written and not zero.
    pub topic_id: Option<String>,
    /// Bytes after the last field, which the broker's reader ignores.
    pub trailing_bytes: u64,
    /// Where the value was read as Kafka's generated reader reads it and a
    /// strict reading refuses it ([`Leniency`]).
    pub lenient: Vec<Leniency>,
}

/// Decode a key; `at` is the absolute position of its first byte. Bytes
/// after the key's fields are ignored (see [`decode_key_and_rest`]).
pub fn decode_key(key: &[u8], at: u64) -> Result<OffsetsKey<'_>, DecodeError> {
    decode_key_and_rest(key, at).map(|k| k.key)
}

/// A key as [`decode_key_and_rest`] reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyRead<'a> {
    pub key: OffsetsKey<'a>,
    /// The bytes after its fields.
    pub trailing: u64,
    /// Where it was read as Kafka's generated reader reads it and a strict
    /// reading refuses it (a name's malformed UTF-8: [`Leniency`]).
    pub lenient: Vec<Leniency>,
}

/// Decode a key as Kafka's generated `OffsetCommitKey` and
/// `GroupMetadataKey` read it (the tables [`records::OFFSET_COMMIT_KEY`]
/// and [`records::GROUP_METADATA_KEY`], read as Kafka reads:
/// [`Schema::decode_prefix_any_version_as_kafka`]) and count the bytes
/// after its fields. A record type the group coordinator does not know,
/// negative ones included, is [`OffsetsKey::Other`]
/// (`GroupCoordinatorRecordSerde.apiMessageKeyFor`).
pub fn decode_key_and_rest(key: &[u8], at: u64) -> Result<KeyRead<'_>, DecodeError> {
    let mut c = Cursor::new(key, at);
    let record_type = records::record_type_traced(&mut c, &mut NoTrace)?;
    let schema = match record_type {
        0 | 1 => &records::OFFSET_COMMIT_KEY,
        2 => &records::GROUP_METADATA_KEY,
        other => {
            return Ok(KeyRead {
                key: OffsetsKey::Other { record_type: other },
                trailing: 0,
                lenient: Vec::new(),
            })
        }
    };
    let read = schema.decode_prefix_any_version_as_kafka(&mut c, 0)?;
    let d = Fields(&read.data);
    let k = match record_type {
        2 => OffsetsKey::GroupMetadata {
            group: Cow::Owned(d.string("group")),
        },
        _ => OffsetsKey::OffsetCommit {
            record_type,
            group: Cow::Owned(d.string("group")),
            topic: Cow::Owned(d.string("topic")),
            partition: d.int("partition") as i32,
        },
    };
    Ok(KeyRead {
        key: k,
        trailing: c.remaining() as u64,
        lenient: read.lenient,
    })
}

/// An OffsetCommitKey as the replay's hot path reads it (see
/// [`offset_commit_value_fast`]): record type 0 or 1, both names in UTF-8,
/// nothing after the partition; its names borrowed. `None` for any other
/// key, which [`decode_key_and_rest`] then reads. Tested to agree with it
/// on every key it accepts.
#[inline]
pub fn offset_commit_key_fast(key: &[u8]) -> Option<(i16, &str, &str, i32)> {
    let fields = offset_commit_fields(key)?;
    let string = |at: usize| -> Option<&str> {
        let len = usize::try_from(i16::from_be_bytes(*fields.get(at..)?.first_chunk::<2>()?));
        std::str::from_utf8(fields.get(at + 2..at + 2 + len.ok()?)?).ok()
    };
    let group = string(0)?; // group: string
    let topic = string(2 + group.len())?; // topic: string
    let partition = i32::from_be_bytes(*fields.last_chunk::<4>()?); // partition: int32
    let record_type = i16::from_be_bytes(*key.first_chunk::<2>()?); // recordType: int16
    Some((record_type, group, topic, partition))
}

/// The bytes of an OffsetCommitKey's fields as written (group, topic,
/// partition: the key after its record type) when `key` is one (type 0 or
/// 1, strings not null) that ends with them; `None` for any other key. The
/// strings are not checked for UTF-8: the replay keys its table by these
/// bytes, and a key goes into the table only once [`decode_key_and_rest`]
/// decoded it.
pub fn offset_commit_fields(key: &[u8]) -> Option<&[u8]> {
    let (record_type, fields) = key.split_first_chunk::<2>()?; // recordType: int16
    if !matches!(i16::from_be_bytes(*record_type), 0 | 1) {
        return None;
    }
    let mut rest = fields;
    for _ in 0..2 {
        // group, topic: string (int16 length, -1 = null)
        let (len, tail) = rest.split_first_chunk::<2>()?;
        let len = usize::try_from(i16::from_be_bytes(*len)).ok()?;
        rest = tail.get(len..)?;
    }
    (rest.len() == 4).then_some(fields) // partition: int32
}

/// Decode an OffsetCommitValue (versions 0..=4, see
/// [`read_value_version`]); `at` is its absolute position. Bytes after the
/// last field are counted, not refused.
pub fn decode_offset_commit_value(value: &[u8], at: u64) -> Result<OffsetCommitValue, DecodeError> {
    decode_offset_commit_value_of(1, value, at)
}

/// [`decode_offset_commit_value`] under key type `record_type` (0 or 1),
/// whose value schema ([`records::CLASSIC_RECORDS`]: type 0 is
/// LegacyOffsetCommitValue, version 0 only, since 4.1) decides the
/// versions read. A v4 tagged topicId is read as the generated reader
/// reads it (`case 0: this.topicId = _readable.readUuid();`, whatever size
/// its header gives: a leniency); the zero uuid (`Uuid.ZERO_UUID`, "no
/// topic id", which `OffsetMetadataManager.isMismatchedTopicId` never
/// compares) is no topic id.
pub fn decode_offset_commit_value_of(
    record_type: i16,
    value: &[u8],
    at: u64,
) -> Result<OffsetCommitValue, DecodeError> {
    let schema = match records::group_record_type(record_type) {
        Some(r) if record_type == 0 => &r.value,
        _ => &records::OFFSET_COMMIT_VALUE,
    };
    let mut c = Cursor::new(value, at);
    let versions = schema.versions.0..=schema.versions.1;
    let version = read_value_version(&mut c, schema.name, versions)?; // version: int16
    let read = schema.decode_prefix_any_version_as_kafka(&mut c, version)?;
    let d = Fields(&read.data);
    Ok(OffsetCommitValue {
        version,
        offset: d.int("offset"),
        leader_epoch: d.opt_int("leaderEpoch").map_or(-1, |e| e as i32), // v3+
        metadata: d.string("metadata"),
        commit_timestamp: d.int("commitTimestamp"),
        expire_timestamp: d.opt_int("expireTimestamp"), // v1
        topic_id: d.opt_string("topicId").filter(|id| id != ZERO_UUID), // v4, tagged
        trailing_bytes: c.remaining() as u64,
        lenient: read.lenient,
    })
}

impl OffsetCommitValue {
    /// Its fields, the metadata borrowed.
    pub fn borrowed(&self) -> CommitValueRef<'_> {
        CommitValueRef {
            version: self.version,
            offset: self.offset,
            leader_epoch: self.leader_epoch,
            metadata: &self.metadata,
            commit_timestamp: self.commit_timestamp,
            expire_timestamp: self.expire_timestamp,
            topic_id: self.topic_id.as_deref(),
        }
    }
}

/// An OffsetCommitValue as the replay's hot path reads it: the fields of a
/// value of version 0 to 3 that ends with its last field, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CommitValueRef<'a> {
    pub version: i16,
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: &'a str,
    pub commit_timestamp: i64,
    pub expire_timestamp: Option<i64>,
    pub topic_id: Option<&'a str>,
}

/// [`decode_offset_commit_value`] for the values a replay meets millions
/// of times: versions 0 to 3 (fixed layout, no tagged fields), nothing
/// after the last field, metadata in UTF-8. `None` for anything else,
/// which the exact decoder then reads (and names, or warns of). Tested to
/// agree with it on every value it accepts and to accept every such value
/// the exact decoder reads without a leniency.
#[inline]
pub fn offset_commit_value_fast(value: &[u8]) -> Option<CommitValueRef<'_>> {
    let be64 = |at: usize| Some(i64::from_be_bytes(*value.get(at..)?.first_chunk::<8>()?));
    let (version, _) = value.split_first_chunk::<2>()?; // version: int16
    let version = i16::from_be_bytes(*version);
    if !(0..=3).contains(&version) {
        return None;
    }
    let offset = be64(2)?; // offset: int64
    let (leader_epoch, at) = match version {
        // leaderEpoch: int32 (v3)
        3 => (
            i32::from_be_bytes(*value.get(10..)?.first_chunk::<4>()?),
            14,
        ),
        _ => (-1, 10),
    };
    // metadata: string (int16 length; null is the exact decoder's to refuse)
    let len = usize::try_from(i16::from_be_bytes(*value.get(at..)?.first_chunk::<2>()?)).ok()?;
    let metadata = std::str::from_utf8(value.get(at + 2..at + 2 + len)?).ok()?;
    let at = at + 2 + len;
    let commit_timestamp = be64(at)?; // commitTimestamp: int64
    let (expire_timestamp, end) = match version {
        1 => (Some(be64(at + 8)?), at + 16), // expireTimestamp: int64 (v1)
        _ => (None, at + 8),
    };
    (end == value.len()).then_some(CommitValueRef {
        version,
        offset,
        leader_epoch,
        metadata,
        commit_timestamp,
        expire_timestamp,
        topic_id: None,
    })
}

/// OffsetCommitKey.json's fields.
#[derive(serde::Serialize)]
struct OffsetCommitKeyFields<'a> {
    group: &'a str,
    topic: &'a str,
    partition: i32,
}

/// OffsetCommitValue.json's fields, by their JSON names (topicId, tagged,
/// left out when unknown: the writer then leaves the tag out).
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct OffsetCommitValueFields<'a> {
    offset: i64,
    leader_epoch: i32,
    metadata: &'a str,
    commit_timestamp: i64,
    #[serde(skip_serializing_if = "Option::is_none")]
    topic_id: Option<String>,
}

/// GroupMetadataKey.json's field.
#[derive(serde::Serialize)]
struct GroupMetadataKeyFields<'a> {
    group: &'a str,
}

/// A record type or value version, then `schema`'s fields of `data` at
/// `version` ([`Schema::encode`]).
fn encode_with<T: serde::Serialize>(
    first: i16,
    schema: &Schema,
    version: i16,
    data: &T,
) -> Vec<u8> {
    let mut out = first.to_be_bytes().to_vec(); // recordType or version: int16
    out.extend(schema.encode(version, data));
    out
}

/// Encode an OffsetCommitKey (record type 1, as brokers write).
pub fn encode_offset_commit_key(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let key = OffsetCommitKeyFields {
        group,
        topic,
        partition,
    };
    encode_with(1, &records::OFFSET_COMMIT_KEY, 0, &key)
}

/// Encode an OffsetCommitValue in `format`: v3, as Kafka 4.0 brokers
/// write, or v4, as Kafka 4.1 and later write every commit without an
/// expire timestamp (`GroupCoordinatorRecordHelpers`:
/// `offsetCommitValueVersion` returns 4; no metadata.version or feature
/// gates it): flexible, and the tagged field 0 topicId when the topic's id
/// is known (the generated writer leaves a tagged field at its default,
/// the zero uuid, out).
pub fn encode_offset_commit_value(
    format: CommitFormat,
    offset: u64,
    leader_epoch: i32,
    metadata: &str,
    commit_timestamp: i64,
) -> Vec<u8> {
    let (version, topic_id) = match format {
        CommitFormat::V3 => (3, None),
        CommitFormat::V4(id) => (4, id),
    };
    let value = OffsetCommitValueFields {
        offset: offset as i64,
        leader_epoch,
        metadata,
        commit_timestamp,
        topic_id: topic_id.map(|id| uuid_string(&id)),
    };
    encode_with(version, &records::OFFSET_COMMIT_VALUE, version, &value)
}

/// Java's `String.hashCode`: `h = 31 * h + c` over UTF-16 code units, wrapping.
pub fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16().fold(0i32, |h, unit| {
        h.wrapping_mul(31).wrapping_add(i32::from(unit))
    })
}

/// The offsets partition that owns `group`: `Utils.abs(hashCode) % partitions`,
/// where Kafka's `Utils.abs` maps `Integer.MIN_VALUE` to 0.
pub fn partition_for(group: &str, partitions: i32) -> i32 {
    let h = java_string_hash(group);
    let abs = if h == i32::MIN { 0 } else { h.abs() };
    if partitions <= 0 {
        0
    } else {
        abs % partitions
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::DecodeErrorKind;

    #[test]
    fn the_fast_commit_value_agrees_with_the_exact_decoder() {
        use crate::format::record::tests::Rng;
        let mut rng = Rng(7);
        let (mut fast, mut exact_only) = (0, 0);
        for _ in 0..200_000 {
            let version = rng.pick(&[-1i16, 0, 1, 2, 3, 3, 3, 4, 5]);
            let mut v = version.to_be_bytes().to_vec();
            v.extend_from_slice(&(rng.next() as i64).to_be_bytes());
            if version >= 3 {
                v.extend_from_slice(&(rng.next() as i32).to_be_bytes());
            }
            let meta: Vec<u8> = match rng.below(4) {
                0 => Vec::new(),
                1 => b"m\xc3\xa9ta".to_vec(),
                2 => vec![0xff, b'x'],
                _ => (0..rng.below(6)).map(|_| rng.below(256) as u8).collect(),
            };
            let len = match rng.below(20) {
                0 => -1i16,
                1 => meta.len() as i16 + 1,
                _ => meta.len() as i16,
            };
            if version >= 4 {
                v.push(len.wrapping_add(1) as u8); // compact length
            } else {
                v.extend_from_slice(&len.to_be_bytes());
            }
            v.extend_from_slice(&meta);
            v.extend_from_slice(&(rng.next() as i64).to_be_bytes());
            if version == 1 {
                v.extend_from_slice(&(rng.next() as i64).to_be_bytes());
            }
            if version >= 4 {
                v.push(0); // no tagged fields
            }
            match rng.below(10) {
                0 => v.truncate(rng.below(v.len() as u64 + 1) as usize),
                1 => v.push(rng.below(256) as u8),
                _ => {}
            }
            // A value read leniently (malformed UTF-8 in its metadata) is
            // the exact path's, which warns of it.
            let exact = decode_offset_commit_value(&v, 0).ok().filter(|d| {
                d.trailing_bytes == 0 && (0..=3).contains(&d.version) && d.lenient.is_empty()
            });
            let quick = offset_commit_value_fast(&v);
            match (&exact, quick) {
                (Some(d), Some(q)) => {
                    fast += 1;
                    assert_eq!(
                        (d.version, d.offset, d.leader_epoch, d.metadata.as_str()),
                        (q.version, q.offset, q.leader_epoch, q.metadata),
                        "{v:02x?}"
                    );
                    assert_eq!(
                        (d.commit_timestamp, d.expire_timestamp),
                        (q.commit_timestamp, q.expire_timestamp)
                    );
                }
                (None, None) => exact_only += 1,
                _ => panic!("{v:02x?}: exact {exact:?}, fast {quick:?}"),
            }
        }
        assert!(fast > 50_000 && exact_only > 50_000, "{fast} {exact_only}");
    }

    #[test]
    fn the_fast_commit_key_agrees_with_the_exact_decoder() {
        use crate::format::record::tests::Rng;
        let mut rng = Rng(11);
        let (mut fast, mut exact_only) = (0, 0);
        for _ in 0..100_000 {
            let mut k = rng.pick(&[-1i16, 0, 1, 1, 1, 2, 3]).to_be_bytes().to_vec();
            for _ in 0..2 {
                let s: Vec<u8> = match rng.below(4) {
                    0 => b"g\xc3\xa9".to_vec(),
                    1 => vec![0xff, b'x'],
                    _ => (0..rng.below(5)).map(|_| rng.below(128) as u8).collect(),
                };
                let len = if rng.below(20) == 0 {
                    -1
                } else {
                    s.len() as i16
                };
                k.extend_from_slice(&len.to_be_bytes());
                k.extend_from_slice(&s);
            }
            k.extend_from_slice(&(rng.next() as i32).to_be_bytes());
            match rng.below(10) {
                0 => k.truncate(rng.below(k.len() as u64 + 1) as usize),
                1 => k.push(rng.below(256) as u8),
                _ => {}
            }
            // A key read leniently or with bytes after it is the exact
            // path's, which warns of it.
            let exact = decode_key_and_rest(&k, 0)
                .ok()
                .filter(|r| r.trailing == 0 && r.lenient.is_empty());
            let exact = exact.and_then(|r| match r.key {
                OffsetsKey::OffsetCommit {
                    record_type,
                    group,
                    topic,
                    partition,
                } => Some((
                    record_type,
                    group.into_owned(),
                    topic.into_owned(),
                    partition,
                )),
                _ => None,
            });
            let quick = offset_commit_key_fast(&k)
                .map(|(t, g, tp, p)| (t, g.to_string(), tp.to_string(), p));
            match (&exact, &quick) {
                (Some(e), Some(q)) => {
                    fast += 1;
                    assert_eq!(e, q, "{k:02x?}");
                }
                (None, None) => exact_only += 1,
                _ => panic!("{k:02x?}: exact {exact:?}, fast {quick:?}"),
            }
        }
        assert!(fast > 20_000 && exact_only > 20_000, "{fast} {exact_only}");
    }

    #[test]
    fn commit_fields_are_the_decoded_keys_fields() {
        // Keys of every type, cut at every length, with bytes added, with
        // each byte changed: the fields are found exactly when the key
        // decodes as an OffsetCommitKey with nothing after it (or fails
        // only for its strings' UTF-8), and they are what the encoder writes.
        let mut keys = vec![
            encode_offset_commit_key("group", "topic", 7),
            encode_offset_commit_key("", "é", -1),
            [&[0, 2][..], &encode_offset_commit_key("g", "t", 0)[2..]].concat(),
            [&[0, 0][..], &encode_offset_commit_key("g", "t", 0)[2..]].concat(),
        ];
        let base = keys.clone();
        for k in &base {
            keys.extend((0..k.len()).map(|n| k[..n].to_vec()));
            keys.push([k.as_slice(), b"x"].concat());
            for at in 0..k.len() {
                for b in [0x00, 0x01, 0x80, 0xff] {
                    let mut m = k.clone();
                    m[at] = b;
                    keys.push(m);
                }
            }
        }
        for k in &keys {
            let fields = offset_commit_fields(k);
            match decode_key_and_rest(k, 0) {
                Ok(KeyRead {
                    key:
                        OffsetsKey::OffsetCommit {
                            group,
                            topic,
                            partition,
                            ..
                        },
                    trailing: 0,
                    lenient,
                }) if lenient.is_empty() => {
                    let encoded = encode_offset_commit_key(&group, &topic, partition);
                    assert_eq!(fields, Some(&encoded[2..]), "{k:02x?}");
                }
                // A name with malformed UTF-8, read with U+FFFD as Kafka
                // reads it: the fields are the key's bytes as written.
                Ok(KeyRead {
                    key: OffsetsKey::OffsetCommit { .. },
                    trailing: 0,
                    lenient,
                }) => {
                    assert!(lenient
                        .iter()
                        .all(|l| matches!(l.defect.kind, DecodeErrorKind::InvalidUtf8 { .. })));
                    assert_eq!(fields, k.get(2..), "{k:02x?}");
                }
                _ => assert_eq!(fields, None, "{k:02x?}"),
            }
        }
    }

    #[test]
    fn java_hash_known_values() {
        // Values from the reference (Java String.hashCode).
        assert_eq!(java_string_hash("g"), 103);
        assert_eq!(java_string_hash("my-group"), -1_906_497_762);
        assert_eq!(java_string_hash(""), 0);
        for min in ["polygenelubricants", "GydZG_", "DESIGNING WORKHOUSES"] {
            assert_eq!(java_string_hash(min), i32::MIN, "{min}");
            assert_eq!(
                partition_for(min, 50),
                0,
                "{min}: Utils.abs(MIN_VALUE) is 0"
            );
        }
        assert_eq!(partition_for("my-group", 50), 12);
        assert_eq!(partition_for("g", 50), 3);
        // A character outside the BMP counts as two UTF-16 units.
        assert_eq!(java_string_hash("😀"), 0xD83D * 31 + 0xDE00);
    }

    #[test]
    fn reference_key_and_value_bytes() {
        // kafka-on-disk.md §8.3 and §8.4.
        assert_eq!(
            encode_offset_commit_key("g", "t", 0),
            [0, 1, 0, 1, 0x67, 0, 1, 0x74, 0, 0, 0, 0]
        );
        let v = encode_offset_commit_value(CommitFormat::V3, 42, -1, "", 1_700_000_000_000);
        assert_eq!(
            v,
            [
                0, 3, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0, 1, 0x8b, 0xcf,
                0xe5, 0x68, 0
            ]
        );
        let d = decode_offset_commit_value(&v, 0).unwrap();
        assert_eq!(
            (d.offset, d.leader_epoch, d.commit_timestamp),
            (42, -1, 1_700_000_000_000)
        );
        assert_eq!(
            decode_key(&encode_offset_commit_key("g", "t", 7), 0).unwrap(),
            OffsetsKey::OffsetCommit {
                record_type: 1,
                group: "g".into(),
                topic: "t".into(),
                partition: 7
            }
        );
    }

    #[test]
    fn versions_kafka_does_not_read_are_refused() {
        // CoordinatorRecordSerde.deserialize: OffsetCommitValue 0..=4 under
        // key type 1, LegacyOffsetCommitValue 0 alone under key type 0; any
        // other version fails the load, at the version's position.
        let v3 = encode_offset_commit_value(CommitFormat::V3, 42, -1, "", 0);
        for version in [-1i16, 5, 7, i16::MAX] {
            let mut v = v3.clone();
            v[0..2].copy_from_slice(&version.to_be_bytes());
            let e = decode_offset_commit_value(&v, 50).unwrap_err();
            assert_eq!(e.offset, 50);
            assert_eq!(
                e.kind,
                DecodeErrorKind::RecordVersion {
                    schema: "OffsetCommitValue",
                    version,
                    lowest: 0,
                    newest: 4
                }
            );
        }
        assert_eq!(
            decode_offset_commit_value_of(0, &v3, 0).unwrap_err().kind,
            DecodeErrorKind::RecordVersion {
                schema: "LegacyOffsetCommitValue",
                version: 3,
                lowest: 0,
                newest: 0
            }
        );
        let mut v0 = encode_offset_commit_value(CommitFormat::V3, 42, -1, "", 0);
        v0[0..2].copy_from_slice(&0i16.to_be_bytes());
        v0.drain(10..14); // no leaderEpoch before v3
        assert_eq!(decode_offset_commit_value_of(0, &v0, 0).unwrap().offset, 42);
        // v4 with the tagged topicId, as klog writes it and the rule reads it.
        let id = [7u8; 16];
        let v4 = encode_offset_commit_value(CommitFormat::V4(Some(id)), 9, 3, "m", 5);
        let d = decode_offset_commit_value(&v4, 0).unwrap();
        assert_eq!(
            (
                d.version,
                d.offset,
                d.leader_epoch,
                d.metadata.as_str(),
                d.commit_timestamp
            ),
            (4, 9, 3, "m", 5)
        );
        assert_eq!(
            d.topic_id.as_deref(),
            Some(crate::format::schema::uuid_string(&id).as_str())
        );
        assert_eq!(d.trailing_bytes, 0);
        // The zero uuid is "no topic id": not written, and read as none.
        let v4 = encode_offset_commit_value(CommitFormat::V4(Some([0; 16])), 9, 3, "m", 5);
        assert_eq!(*v4.last().unwrap(), 0);
        assert_eq!(decode_offset_commit_value(&v4, 0).unwrap().topic_id, None);
    }

    #[test]
    fn bad_values_are_positioned() {
        // Version 4's int64 offset does not fit in 1 byte.
        let e = decode_offset_commit_value(&[0, 4, 0], 100).unwrap_err();
        assert_eq!(e.offset, 102);
        assert!(matches!(e.kind, DecodeErrorKind::UnexpectedEof { .. }));
        let e = decode_key(&[0, 1, 0, 5, b'a'], 10).unwrap_err();
        assert_eq!(e.offset, 14);
        assert_eq!(
            decode_key(&[0, 9, 1, 2, 3], 0).unwrap(),
            OffsetsKey::Other { record_type: 9 }
        );
    }

    #[test]
    fn what_the_broker_tolerates_decodes() {
        // A negative offset (a non-Java client's commit) is an int64 like any other.
        let mut v = encode_offset_commit_value(CommitFormat::V3, 42, -1, "", 0);
        v[2..10].copy_from_slice(&(-5i64).to_be_bytes());
        assert_eq!(decode_offset_commit_value(&v, 0).unwrap().offset, -5);
        // Bytes after the last field are counted, not refused.
        v.extend_from_slice(&[7, 7, 7]);
        assert_eq!(decode_offset_commit_value(&v, 0).unwrap().trailing_bytes, 3);
        let mut k = encode_offset_commit_key("g", "t", 1);
        k.push(0);
        let read = decode_key_and_rest(&k, 0).unwrap();
        assert_eq!(read.trailing, 1);
        assert!(matches!(
            read.key,
            OffsetsKey::OffsetCommit { partition: 1, .. }
        ));
        // A negative record type is one the coordinator does not know: skipped, not refused.
        assert_eq!(
            decode_key(&[0xff, 0xfe, 0, 1, b'g'], 0).unwrap(),
            OffsetsKey::Other { record_type: -2 }
        );
    }
}

/// The offsets topic found in some data directories.
#[derive(Debug, Clone)]
pub struct OffsetsTopic {
    /// `__offsets` or `__consumer_offsets`.
    pub name: &'static str,
    /// Its live partitions on these disks, in (partition, directory) order.
    pub partitions: Vec<crate::log::Partition>,
}

impl OffsetsTopic {
    /// Find the offsets topic among `dirs`' live partitions. A Kafka
    /// directory's `__consumer_offsets` wins over klog's `__offsets` when both exist.
    pub fn find(dirs: &[crate::log::DataDir]) -> Option<OffsetsTopic> {
        for name in [KAFKA_OFFSETS_TOPIC, KLOG_OFFSETS_TOPIC] {
            let mut partitions: Vec<_> = dirs
                .iter()
                .flat_map(|d| d.live())
                .filter(|p| p.topic == name)
                .cloned()
                .collect();
            if !partitions.is_empty() {
                partitions.sort_by_key(|p| p.partition);
                return Some(OffsetsTopic { name, partitions });
            }
        }
        None
    }
}

/// Where an offline write for a group goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTarget {
    /// `__offsets` or `__consumer_offsets` (any topic for `klog produce`).
    pub topic: String,
    /// The partition that owns the group.
    pub partition: i32,
    /// Whether the directory is a Kafka log directory.
    pub kafka: bool,
}

/// The offsets partition of `data_dir` that owns `group`. A directory with
/// `__consumer_offsets-N` folders is a Kafka log directory: the partition
/// is `abs(hashCode(group)) % partitions` (`GroupCoordinatorService.partitionFor`)
/// and must exist. The partition count is the one the KRaft metadata of
/// `data_dir` gives `__consumer_offsets` when it has the topic (`partitions`
/// must then agree), else `partitions`; with neither the write is refused:
/// no count is assumed. Otherwise it is klog's single `__offsets-0`.
pub fn write_target(
    data_dir: &std::path::Path,
    group: &str,
    partitions: Option<i32>,
) -> crate::Result<WriteTarget> {
    use crate::error::Error;
    let kafka_dirs: Vec<i32> = match std::fs::read_dir(data_dir) {
        Ok(entries) => entries
            .filter_map(|e| e.ok())
            .filter_map(|e| {
                e.file_name()
                    .to_str()
                    .and_then(crate::log::parse_partition_dir)
            })
            .filter(|(t, _, s)| t == KAFKA_OFFSETS_TOPIC && *s == crate::log::PartitionState::Live)
            .map(|(_, p, _)| p)
            .collect(),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        Err(e) => return Err(Error::io(data_dir, "list directory", e)),
    };
    if kafka_dirs.is_empty() {
        let n = partitions.unwrap_or(1);
        if n != 1 {
            return Err(Error::Invalid(format!(
                "{KLOG_OFFSETS_TOPIC} has one partition; --offsets-partitions {n} does not apply"
            )));
        }
        return Ok(WriteTarget {
            topic: KLOG_OFFSETS_TOPIC.to_string(),
            partition: 0,
            kafka: false,
        });
    }
    let from_metadata = offsets_partitions_in_metadata(data_dir);
    let n = match (from_metadata, partitions) {
        (Some(m), Some(p)) if m != p => {
            return Err(Error::Invalid(format!(
                "the KRaft metadata in {} gives {KAFKA_OFFSETS_TOPIC} {m} partitions, not --offsets-partitions {p}",
                data_dir.display()
            )))
        }
        (Some(m), _) => m,
        (None, Some(p)) => p,
        (None, None) => {
            // A broker in ZooKeeper mode writes meta.properties version 0 and keeps
            // the topic's partition count in ZooKeeper, not on its disk.
            let zookeeper = crate::log::meta::read_meta_properties(
                &data_dir.join(crate::log::meta::META_PROPERTIES),
            )
            .ok()
            .flatten()
            .is_some_and(|m| m.version == 0);
            let hint = if zookeeper {
                " (a ZooKeeper-mode directory: the count is in ZooKeeper, /brokers/topics/__consumer_offsets; \
                 Kafka's default is 50)"
            } else {
                ""
            };
            return Err(Error::Invalid(format!(
                "the partition count of {KAFKA_OFFSETS_TOPIC} is unknown: {} has no KRaft metadata naming the topic; \
                 pass --offsets-partitions (the cluster's offsets.topic.num.partitions) to place the group{hint}",
                data_dir.display()
            )))
        }
    };
    if n <= 0 {
        return Err(Error::Invalid(format!(
            "--offsets-partitions {n}: the topic has at least one partition"
        )));
    }
    if let Some(max) = kafka_dirs.iter().max().filter(|&&m| m >= n) {
        return Err(Error::Invalid(format!(
            "{} holds {KAFKA_OFFSETS_TOPIC}-{max}, so the topic has more than {n} partitions: pass --offsets-partitions",
            data_dir.display()
        )));
    }
    let partition = partition_for(group, n);
    if !kafka_dirs.contains(&partition) {
        return Err(Error::layout(
            data_dir,
            format!(
                "group {group:?} lives in {KAFKA_OFFSETS_TOPIC}-{partition} (of {n} partitions), which is not in this \
                 log directory (another broker's, or another of this broker's log directories)"
            ),
        ));
    }
    Ok(WriteTarget {
        topic: KAFKA_OFFSETS_TOPIC.to_string(),
        partition,
        kafka: true,
    })
}

/// Which OffsetCommitValue an offline commit writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CommitFormat {
    /// Version 3, as Kafka 4.0 and earlier write.
    V3,
    /// Version 4 with the topic's id when known, as Kafka 4.1 and later write.
    V4(Option<[u8; 16]>),
}

/// `IBP_4_1_IV0`'s metadata.version feature level (`MetadataVersion`): a
/// cluster finalized at it or later runs Kafka 4.1 or later on every broker.
pub const METADATA_VERSION_4_1: i16 = 26;

/// `IBP_4_4_IV1`'s metadata.version feature level (`MetadataVersion`):
/// the first no Kafka 4.3 knows (4.3.1's `MetadataVersion` ends at
/// `IBP_4_4_IV0`, 31, an unstable level there), so a cluster finalized at
/// it or later runs Kafka 4.4 or later on every broker.
pub const METADATA_VERSION_4_4_IV1: i16 = 32;

/// The metadata.version feature level the KRaft metadata of `dirs`
/// finalizes (the highest of their metadata logs); `None` without one.
/// A broker runs only at a level its release knows, so this bounds the
/// release of every broker of the cluster from below.
pub fn metadata_version(dirs: &[crate::log::DataDir]) -> Option<i16> {
    dirs.iter()
        .filter_map(|d| crate::metadata::metadata_folder(&d.path))
        .filter_map(|f| crate::metadata::replay(&f, None).ok())
        .filter_map(|r| r.image.features.get("metadata.version").copied())
        .max()
}

/// What a commit of `topic` into the data directories `dirs` writes: what
/// their brokers write. Kafka 4.1 and later write v4 with the topic id
/// (`GroupCoordinatorRecordHelpers.offsetCommitValueVersion`, not gated by
/// any feature), 4.0 v3; the release is known offline only through the
/// KRaft metadata's metadata.version: v4 (with the topic's current id, from
/// the KRaft metadata or partition.metadata) from 4.1-IV0 on, else v3 (a
/// klog data directory, a directory without metadata, or an older one).
pub fn commit_format(dirs: &[std::path::PathBuf], topic: &str) -> crate::Result<CommitFormat> {
    let opened = dirs
        .iter()
        .map(|d| crate::log::DataDir::open(d))
        .collect::<crate::Result<Vec<_>>>()?;
    if metadata_version(&opened).is_none_or(|level| level < METADATA_VERSION_4_1) {
        return Ok(CommitFormat::V3);
    }
    let id = group_state::topic_ids(&opened)
        .get(topic)
        .and_then(|id| crate::log::meta::Uuid::parse(id).ok())
        .map(|u| u.0);
    Ok(CommitFormat::V4(id))
}

/// The partition count of `__consumer_offsets` in the KRaft metadata of
/// `data_dir` (its `__cluster_metadata-0`), when it has the topic.
pub fn offsets_partitions_in_metadata(data_dir: &std::path::Path) -> Option<i32> {
    let folder = crate::metadata::metadata_folder(data_dir)?;
    let r = crate::metadata::replay(&folder, None).ok()?;
    r.image
        .partition_count(KAFKA_OFFSETS_TOPIC)
        .and_then(|n| i32::try_from(n).ok())
}

/// Check the strings of an offset commit: each is an int16-length string in
/// OffsetCommitKey/Value, so at most 32,767 bytes (what Kafka's generated
/// writers refuse to write).
pub fn check_commit_strings(group: &str, topic: &str, metadata: &str) -> crate::Result<()> {
    for (field, s) in [("group", group), ("topic", topic), ("metadata", metadata)] {
        if s.len() > i16::MAX as usize {
            return Err(crate::Error::Invalid(format!(
                "the {field} is {} bytes; an offsets record holds at most {} (an int16-length string)",
                s.len(),
                i16::MAX
            )));
        }
    }
    Ok(())
}

/// The record of an offset commit in `format` (key type 1, value v3 or v4:
/// see [`commit_format`]), ready to append: what `commit` and
/// `reset-offsets` write.
#[allow(clippy::too_many_arguments)]
pub fn commit_record(
    group: &str,
    topic: &str,
    partition: i32,
    offset: u64,
    leader_epoch: i32,
    metadata: &str,
    now_ms: i64,
    format: CommitFormat,
) -> crate::format::NewRecord {
    let value = encode_offset_commit_value(format, offset, leader_epoch, metadata, now_ms);
    crate::format::NewRecord {
        key: Some(encode_offset_commit_key(group, topic, partition)),
        value: Some(value),
        headers: Vec::new(),
        timestamp: now_ms,
    }
}

/// The record of an offset commit as Kafka 4.0 wrote it (key type 1, value
/// v3), for the demo directories, whose walk-throughs show v3.
pub fn commit_record_v3(
    group: &str,
    topic: &str,
    partition: i32,
    offset: u64,
    leader_epoch: i32,
    metadata: &str,
    now_ms: i64,
) -> crate::format::NewRecord {
    let format = CommitFormat::V3;
    commit_record(
        group,
        topic,
        partition,
        offset,
        leader_epoch,
        metadata,
        now_ms,
        format,
    )
}

/// Tombstones for every live key of `group` in `replay` (optionally one
/// topic and/or partition): the keys, in table order, and their records.
pub fn tombstone_records(
    replay: &Replay,
    group: &str,
    topic: Option<&str>,
    partition: Option<i32>,
    now_ms: i64,
) -> Vec<((String, i32), crate::format::NewRecord)> {
    replay
        .commits()
        .filter(|(g, t, p, _)| {
            *g == group && topic.is_none_or(|x| x == *t) && partition.is_none_or(|x| x == *p)
        })
        .map(|(_, t, p, _)| {
            let record = crate::format::NewRecord {
                key: Some(encode_offset_commit_key(group, t, p)),
                value: None,
                headers: Vec::new(),
                timestamp: now_ms,
            };
            ((t.to_string(), p), record)
        })
        .collect()
}

/// One key a group deletion tombstones, for the dry run and the report.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DeletedKey {
    /// The record type's name (`OffsetCommit`, `GroupMetadata`,
    /// `ConsumerGroupMemberMetadata`, ...).
    pub record: String,
    /// What the key names: `topic-partition (was N)`, a member id, or the group.
    pub what: String,
    /// The topic and partition of an offset commit's key.
    pub topic_partition: Option<(String, i32)>,
    /// The offset the key held: the committed one, else the pending
    /// transactional commit's.
    pub offset: Option<i64>,
}

/// The rank of a coordinator record type in a group's deletion: the order
/// in which the coordinator writes its tombstones (`ConsumerGroup`,
/// `ShareGroup`, `StreamsGroup.createGroupTombstoneRecords`), which its
/// replay requires (`GroupMetadataManager.replay` refuses a member's
/// metadata tombstone before its assignment's, a target assignment epoch
/// tombstone while members' target assignments remain, and the group
/// epoch's while members remain). Kafka 4.1.1's order, read from its
/// classes: assignments, target assignments, the target assignment epoch,
/// member metadata, a consumer group's resolved regular expressions, the
/// partition (subscription) metadata, the group epoch, and a streams
/// group's topology after its epoch.
fn deletion_rank(record_type: i16) -> u8 {
    match record_type {
        8 | 14 | 22 => 0,     // current member assignment
        7 | 13 | 21 => 1,     // target assignment member
        6 | 12 | 20 => 2,     // target assignment epoch
        5 | 10 | 19 => 3,     // member metadata (subscription)
        16 => 4,              // resolved regular expressions
        4 | 9 | 15 | 18 => 5, // partition (subscription) metadata
        3 | 11 | 17 => 6,     // group epoch
        23 => 7,              // a streams group's topology: after its epoch
        _ => 5,
    }
}

/// The tombstones that delete `group` whole, as the coordinator's
/// DeleteGroups writes them (`GroupCoordinatorShard.deleteGroups`):
/// `OffsetMetadataManager.deleteAllOffsets` — every committed offset, and
/// every pending transactional offset whose key has no committed one —
/// then the group's own records (`createGroupTombstoneRecords`): for a
/// classic group its GroupMetadata; for the new protocols every live record
/// of the group, member records first and the group epoch last (see
/// `deletion_rank`). Offline the records tombstoned are the keys the
/// replay holds live for the group, which for a group the coordinator
/// would let delete (Empty) are the keys it writes.
pub fn group_tombstone_records(
    replay: &Replay,
    group: &str,
    now_ms: i64,
) -> Vec<(DeletedKey, crate::format::NewRecord)> {
    let tombstone = |key: Vec<u8>| crate::format::NewRecord {
        key: Some(key),
        value: None,
        headers: Vec::new(),
        timestamp: now_ms,
    };
    let mut out: Vec<(DeletedKey, crate::format::NewRecord)> = Vec::new();
    let mut offsets: std::collections::BTreeMap<(String, i32), (String, i64)> = replay
        .commits()
        .filter(|(g, ..)| *g == group)
        .map(|(_, t, p, c)| {
            let what = format!("{t}-{p} (was {})", c.offset);
            ((t.to_string(), p), (what, c.offset))
        })
        .collect();
    for (_, _, g, t, p, o) in replay.pending() {
        if g == group {
            offsets.entry((t.to_string(), p)).or_insert_with(|| {
                let what = format!("{t}-{p} (pending transactional commit of {o})");
                (what, o)
            });
        }
    }
    for ((t, p), (what, offset)) in offsets {
        let key = encode_offset_commit_key(group, &t, p);
        out.push((
            DeletedKey {
                record: "OffsetCommit".into(),
                what,
                topic_partition: Some((t, p)),
                offset: Some(offset),
            },
            tombstone(key),
        ));
    }
    let mut own: Vec<(u8, i16, String, Vec<u8>)> = replay
        .coordinator
        .iter()
        .filter(|(_, e)| {
            e.record
                .key
                .as_ref()
                .and_then(|k| k.get("groupId"))
                .and_then(serde_json::Value::as_str)
                == Some(group)
        })
        .map(|((t, _), e)| {
            let member = e
                .record
                .key
                .as_ref()
                .and_then(|k| k.get("memberId").or_else(|| k.get("regularExpression")))
                .and_then(serde_json::Value::as_str)
                .map_or_else(|| format!("group {group}"), |m| m.to_string());
            (deletion_rank(*t), *t, member, e.key.clone())
        })
        .collect();
    own.sort();
    let new_protocol = !own.is_empty();
    let has_offsets = !out.is_empty();
    for (_, t, what, key) in own {
        out.push((
            DeletedKey {
                record: records::group_record_name(t),
                what,
                topic_partition: None,
                offset: None,
            },
            tombstone(key),
        ));
    }
    // A classic group, or one with committed offsets only (the coordinator
    // keeps it as an empty classic group): its GroupMetadata. A group the
    // log does not know gets nothing.
    if replay.groups.contains_key(group) || (has_offsets && !new_protocol) {
        out.push((
            DeletedKey {
                record: "GroupMetadata".into(),
                what: format!("group {group}"),
                topic_partition: None,
                offset: None,
            },
            tombstone(encode_group_metadata_key(group)),
        ));
    }
    out
}

/// Encode a GroupMetadataKey (record type 2).
pub fn encode_group_metadata_key(group: &str) -> Vec<u8> {
    let key = GroupMetadataKeyFields { group };
    encode_with(2, &records::GROUP_METADATA_KEY, 0, &key)
}
