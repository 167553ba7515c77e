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
//! the fields of the version they read; the replay warns of them.
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
//! A version outside 0..=4 is read as Kafka's generated reader reads it:
//! above 4 as 4 (KIP-915), below 0 as 0; the replay warns of it.
//!
//! The stored offset is the next offset the group will read. A negative one
//! (a non-Java client can commit one; the coordinator stores the int64 as
//! it is) decodes, and the replay warns of it.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod coordinator;
pub mod group;
pub mod groups;
pub mod records;
pub mod replay;
pub mod share;

use crate::error::DecodeError;
use crate::format::cursor::Cursor;
use crate::format::message::{put_string, read_value_version, MessageReader};

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

/// A decoded offsets-topic key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OffsetsKey<'a> {
    /// Types 0 and 1.
    OffsetCommit {
        record_type: i16,
        group: &'a str,
        topic: &'a str,
        partition: i32,
    },
    /// Type 2.
    GroupMetadata { group: &'a str },
    /// Any record type the group coordinator does not read here (3 and up,
    /// or negative), skipped by the replay.
    Other { record_type: i16 },
}

/// A decoded OffsetCommitValue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OffsetCommitValue {
    /// The version stored in the record.
    pub version: i16,
    /// The version whose layout was read (differs outside 0..=4).
    pub read_as: i16,
    /// The next offset to read (negative only from a non-Java client).
    pub offset: i64,
    /// -1 when unknown (and before v3).
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp: i64,
    /// v1 only.
    pub expire_timestamp: Option<i64>,
    /// Bytes after the last field, which the broker's reader ignores.
    pub trailing_bytes: u64,
}

/// Decode a key; `at` is the absolute position of its first byte. Bytes
/// after the key's fields are ignored (see [`decode_key_and_rest`]).
pub fn decode_key(key: &[u8], at: u64) -> Result<OffsetsKey<'_>, DecodeError> {
    decode_key_and_rest(key, at).map(|(k, _)| k)
}

/// Decode a key and count the bytes after its fields. A record type the
/// group coordinator does not know, negative ones included, is
/// [`OffsetsKey::Other`] (`GroupCoordinatorRecordSerde.apiMessageKeyFor`).
pub fn decode_key_and_rest(key: &[u8], at: u64) -> Result<(OffsetsKey<'_>, u64), DecodeError> {
    let mut c = Cursor::new(key, at);
    let record_type = c.i16()?; // recordType: int16
    let mut m = MessageReader::new(&mut c, false);
    let k = match record_type {
        0 | 1 => {
            let group = m.string("group")?; // group: string
            let topic = m.string("topic")?; // topic: string
            let partition = m.c.i32()?; // partition: int32
            OffsetsKey::OffsetCommit {
                record_type,
                group,
                topic,
                partition,
            }
        }
        2 => OffsetsKey::GroupMetadata {
            group: m.string("group")?,
        }, // group: string
        other => return Ok((OffsetsKey::Other { record_type: other }, 0)),
    };
    Ok((k, m.c.remaining() as u64))
}

/// Decode an OffsetCommitValue (versions 0..=4; another version is read
/// with the layout of the nearest, see [`read_value_version`]); `at` is its
/// absolute position. Bytes after the last field are counted, not refused.
pub fn decode_offset_commit_value(value: &[u8], at: u64) -> Result<OffsetCommitValue, DecodeError> {
    let mut c = Cursor::new(value, at);
    let (stored_version, version) = read_value_version(&mut c, 0..=4)?; // version: int16
    let mut m = MessageReader::new(&mut c, version >= 4);
    let offset = m.c.i64()?; // offset: int64
    let leader_epoch = if version >= 3 { m.c.i32()? } else { -1 }; // leaderEpoch: int32 (v3+)
    let metadata = m.string("metadata")?.to_string(); // metadata: string
    let commit_timestamp = m.c.i64()?; // commitTimestamp: int64
    let expire_timestamp = if version == 1 { Some(m.c.i64()?) } else { None }; // expireTimestamp: int64 (v1)
    m.tagged_fields()?;
    Ok(OffsetCommitValue {
        version: stored_version,
        read_as: version,
        offset,
        leader_epoch,
        metadata,
        commit_timestamp,
        expire_timestamp,
        trailing_bytes: m.c.remaining() as u64,
    })
}

/// Encode an OffsetCommitKey (record type 1, as brokers write).
pub fn encode_offset_commit_key(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(8 + group.len() + topic.len());
    out.extend_from_slice(&1i16.to_be_bytes()); // recordType: int16
    put_string(&mut out, group); // group: string
    put_string(&mut out, topic); // topic: string
    out.extend_from_slice(&partition.to_be_bytes()); // partition: int32
    out
}

/// Encode an OffsetCommitValue v3 (what current brokers write).
pub fn encode_offset_commit_value_v3(
    offset: u64,
    leader_epoch: i32,
    metadata: &str,
    commit_timestamp: i64,
) -> Vec<u8> {
    let mut out = Vec::with_capacity(24 + metadata.len());
    out.extend_from_slice(&3i16.to_be_bytes()); // version: int16
    out.extend_from_slice(&(offset as i64).to_be_bytes()); // offset: int64
    out.extend_from_slice(&leader_epoch.to_be_bytes()); // leaderEpoch: int32
    put_string(&mut out, metadata); // metadata: string
    out.extend_from_slice(&commit_timestamp.to_be_bytes()); // commitTimestamp: int64
    out
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
        let v = encode_offset_commit_value_v3(42, -1, "", 1_700_000_000_000);
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
                group: "g",
                topic: "t",
                partition: 7
            }
        );
    }

    #[test]
    fn bad_values_are_positioned() {
        // Version 9 reads as version 4, whose int64 offset does not fit in 1 byte.
        let e = decode_offset_commit_value(&[0, 9, 0], 100).unwrap_err();
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
        let mut v = encode_offset_commit_value_v3(42, -1, "", 0);
        v[2..10].copy_from_slice(&(-5i64).to_be_bytes());
        assert_eq!(decode_offset_commit_value(&v, 0).unwrap().offset, -5);
        // Versions outside 0..=4 read with the nearest layout (the generated
        // reader's `version >= N` guards): 7 as flexible v4, -1 as v0.
        let mut v5 = v.clone();
        v5[0..2].copy_from_slice(&7i16.to_be_bytes());
        v5[14] = 1; // compact metadata: length 0 + 1
        v5.truncate(23);
        v5.push(0); // no tagged fields
        let d = decode_offset_commit_value(&v5, 0).unwrap();
        assert_eq!(
            (d.version, d.read_as, d.offset, d.leader_epoch),
            (7, 4, -5, -1)
        );
        let mut neg = (-1i16).to_be_bytes().to_vec();
        neg.extend_from_slice(&9i64.to_be_bytes());
        neg.extend_from_slice(&[0, 0]);
        neg.extend_from_slice(&3i64.to_be_bytes());
        let d = decode_offset_commit_value(&neg, 0).unwrap();
        assert_eq!(
            (d.version, d.read_as, d.offset, d.commit_timestamp),
            (-1, 0, 9, 3)
        );
        // Bytes after the last field are counted, not refused.
        v.extend_from_slice(&[7, 7, 7]);
        assert_eq!(decode_offset_commit_value(&v, 0).unwrap().trailing_bytes, 3);
        let mut k = encode_offset_commit_key("g", "t", 1);
        k.push(0);
        let (key, rest) = decode_key_and_rest(&k, 0).unwrap();
        assert_eq!(rest, 1);
        assert!(matches!(key, OffsetsKey::OffsetCommit { partition: 1, .. }));
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

    /// Whether this is a Kafka log directory's `__consumer_offsets`.
    pub fn is_kafka(&self) -> bool {
        self.name == KAFKA_OFFSETS_TOPIC
    }
}

/// Where an offline write for a group goes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WriteTarget {
    /// `__offsets` or `__consumer_offsets`.
    pub topic: &'static str,
    /// The partition that owns the group.
    pub partition: i32,
    /// Whether the directory is a Kafka log directory.
    pub kafka: bool,
    /// partitionLeaderEpoch to stamp: the partition's current leader epoch
    /// (its `leader-epoch-checkpoint`), 0 in klog directories.
    pub leader_epoch: i32,
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
            topic: KLOG_OFFSETS_TOPIC,
            partition: 0,
            kafka: false,
            leader_epoch: 0,
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
            return Err(Error::Invalid(format!(
                "the partition count of {KAFKA_OFFSETS_TOPIC} is unknown: {} has no KRaft metadata naming the topic; \
                 pass --offsets-partitions (the cluster's offsets.topic.num.partitions) to place the group",
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
    let dir = data_dir.join(format!("{KAFKA_OFFSETS_TOPIC}-{partition}"));
    let epochs = crate::log::checkpoint::read_leader_epochs(
        &dir.join(crate::log::checkpoint::LEADER_EPOCH),
    )?;
    let leader_epoch = epochs
        .and_then(|e| e.last().map(|(epoch, _)| *epoch))
        .unwrap_or(0);
    Ok(WriteTarget {
        topic: KAFKA_OFFSETS_TOPIC,
        partition,
        kafka: true,
        leader_epoch,
    })
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

/// The warning printed before an offline write into a Kafka log directory.
pub fn replicated_write_warning(target: &WriteTarget, dirs: usize) -> String {
    format!(
        "warning: writing {}-{} offline on this disk only. If that partition has replicas on other brokers, \
         they do not get this write: when the brokers restart it can be truncated away (if another replica \
         becomes leader) or the replicas diverge. It is safe when the partition has a single replica, or when \
         every replica's log directory is given ({} given here) and they hold the same log.",
        target.topic, target.partition, dirs
    )
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

/// The record of an offset commit (key v1, value v3), ready to append.
pub fn commit_record(
    group: &str,
    topic: &str,
    partition: i32,
    offset: u64,
    leader_epoch: i32,
    metadata: &str,
    now_ms: i64,
) -> crate::format::NewRecord {
    crate::format::NewRecord {
        key: Some(encode_offset_commit_key(group, topic, partition)),
        value: Some(encode_offset_commit_value_v3(
            offset,
            leader_epoch,
            metadata,
            now_ms,
        )),
        headers: Vec::new(),
        timestamp: now_ms,
    }
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
