//! The annotated layout of every file klog reads beside the logs, for
//! `dump-segment --layout`: binary files (`.index`, `.timeindex`,
//! `.txnindex`, producer-state `.snapshot`) field by field, text files
//! (checkpoints, `partition.metadata`, `meta.properties`, `quorum-state`,
//! `.kafka_cleanshutdown`) line by line, each as `position  raw bytes
//! field  value` with what Kafka does with the value.
//!
//! The fields are the decoders' own reads: the binary files' decoders
//! ([`format::index`](crate::format::index)'s entries,
//! [`txn::snapshot`](crate::txn::snapshot)) hand each field to a
//! [`Trace`](crate::format::trace::Trace) as they read it, and each text
//! line is read by its file's reader ([`log::checkpoint::read_line`](crate::log::checkpoint::read_line),
//! [`parse_partition_metadata`](crate::log::meta::parse_partition_metadata),
//! [`parse_properties`](crate::log::meta::parse_properties));
//! a file that does not decode is annotated up to where its decoder stops,
//! and the decoder's error says where. Fields are handed to a callback one at a time,
//! so a 10 MiB preallocated index costs no memory.

use crate::format::crc::crc32c;
use crate::format::cursor::Cursor;
use crate::format::index::{self, OFFSET_ENTRY_LEN, TIME_ENTRY_LEN, TXN_ENTRY_LEN};
use crate::format::trace::{Each, Read};
use crate::log::checkpoint::{self, Entries, Line};
use crate::log::meta;
use crate::txn::snapshot;

pub use crate::format::annotation::FileField;

/// The kinds of files this module annotates, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileKind {
    /// `<base>.index`.
    OffsetIndex { base_offset: i64 },
    /// `<base>.timeindex`.
    TimeIndex { base_offset: i64 },
    /// `<base>.txnindex`.
    TxnIndex,
    /// `<offset>.snapshot`.
    Snapshot { offset: i64 },
    /// A `topic partition offset` checkpoint: which one says what the offset is.
    OffsetCheckpoint(&'static str),
    /// `leader-epoch-checkpoint`.
    LeaderEpochCheckpoint,
    /// `partition.metadata`.
    PartitionMetadata,
    /// `meta.properties`.
    MetaProperties,
    /// `quorum-state` (KRaft).
    QuorumState,
    /// `.kafka_cleanshutdown`.
    CleanShutdown,
}

impl FileKind {
    /// The kind of the file named `name`, if it is one of these.
    pub fn of(name: &str) -> Option<FileKind> {
        if let Some((n, ext)) = crate::log::parse_any_segment_name(name) {
            return match ext {
                "index" => Some(FileKind::OffsetIndex { base_offset: n }),
                "timeindex" => Some(FileKind::TimeIndex { base_offset: n }),
                "txnindex" => Some(FileKind::TxnIndex),
                "snapshot" => Some(FileKind::Snapshot { offset: n }),
                // A remote segment's copy of its leader-epoch-checkpoint.
                "leader_epoch_checkpoint" => Some(FileKind::LeaderEpochCheckpoint),
                _ => None,
            };
        }
        match name {
            checkpoint::LEADER_EPOCH => Some(FileKind::LeaderEpochCheckpoint),
            crate::log::meta::PARTITION_METADATA => Some(FileKind::PartitionMetadata),
            crate::log::meta::META_PROPERTIES => Some(FileKind::MetaProperties),
            crate::metadata::QUORUM_STATE_FILE => Some(FileKind::QuorumState),
            ".kafka_cleanshutdown" => Some(FileKind::CleanShutdown),
            _ => checkpoint::DIR_CHECKPOINTS
                .iter()
                .find(|c| **c == name)
                .map(|c| FileKind::OffsetCheckpoint(c)),
        }
    }
}

impl FileKind {
    /// Whether dump-segment has another view of it than its layout (its entries).
    pub fn has_entries(self) -> bool {
        matches!(
            self,
            FileKind::OffsetIndex { .. }
                | FileKind::TimeIndex { .. }
                | FileKind::TxnIndex
                | FileKind::Snapshot { .. }
        )
    }

    /// What the file is, in a line.
    pub fn describe(self) -> String {
        match self {
            FileKind::OffsetIndex { base_offset } => format!(
                "offset index of the segment at base offset {base_offset}: 8-byte entries, relativeOffset int32 + position int32 (OffsetIndex)"
            ),
            FileKind::TimeIndex { base_offset } => format!(
                "time index of the segment at base offset {base_offset}: 12-byte entries, timestamp int64 + relativeOffset int32 (TimeIndex)"
            ),
            FileKind::TxnIndex => "transaction index: one 34-byte entry per transaction aborted in this segment (TransactionIndex, AbortedTxn)".into(),
            FileKind::Snapshot { offset } => format!(
                "producer state snapshot, valid up to offset {offset}: version, CRC-32C, then 46 bytes per producer (ProducerStateManager.writeSnapshot)"
            ),
            FileKind::OffsetCheckpoint(name) => format!(
                "{name}: a text checkpoint, version line, entry count, then `topic partition offset` lines (CheckpointFile, OffsetCheckpointFile)"
            ),
            FileKind::LeaderEpochCheckpoint => "leader-epoch-checkpoint: a text checkpoint, version line, entry count, then `epoch startOffset` lines (LeaderEpochCheckpointFile)".into(),
            FileKind::PartitionMetadata => "partition.metadata: `version: 0` and `topic_id: <id>` (PartitionMetadataFile)".into(),
            FileKind::MetaProperties => "meta.properties: the log directory's identity, Java properties (MetaProperties)".into(),
            FileKind::QuorumState => "quorum-state: the KRaft election state, one JSON object (FileQuorumStateStore)".into(),
            FileKind::CleanShutdown => ".kafka_cleanshutdown: present after a clean shutdown, so the next start skips recovery (CleanShutdownFileHandler)".into(),
        }
    }
}

/// Annotate `bytes`, a file of `kind`, field by field into `emit`. Returns
/// what does not decode, with its position or line.
pub fn layout(kind: FileKind, bytes: &[u8], emit: &mut dyn FnMut(FileField)) -> Option<String> {
    match kind {
        FileKind::OffsetIndex { base_offset } => offset_index(bytes, base_offset, emit),
        FileKind::TimeIndex { base_offset } => time_index(bytes, base_offset, emit),
        FileKind::TxnIndex => txn_index(bytes, emit),
        FileKind::Snapshot { offset } => snapshot(bytes, offset, emit),
        FileKind::OffsetCheckpoint(name) => checkpoint_lines(
            bytes,
            Entries::TopicPartitionOffset,
            offset_meaning(name),
            emit,
        ),
        FileKind::LeaderEpochCheckpoint => {
            checkpoint_lines(bytes, Entries::EpochStartOffset, leader_epoch_meaning, emit)
        }
        FileKind::PartitionMetadata => {
            let refused = meta::parse_partition_metadata(&String::from_utf8_lossy(bytes)).err();
            text_lines(bytes, emit, |n, _| {
                partition_metadata_line(n, refused.as_ref())
            })
            .or_else(|| refused.map(|(n, why)| format!("line {n}: {why}")))
        }
        FileKind::MetaProperties => {
            // As `read_meta_properties` reads it: ISO 8859-1, Java's rules.
            let text: String = bytes.iter().map(|&b| char::from(b)).collect();
            let props = meta::parse_properties(&text);
            let refused = props.as_ref().err().cloned();
            let props = props.unwrap_or_default();
            text_lines(bytes, emit, |n, line| {
                meta_properties_line(n, line, &props, refused.as_ref())
            })
            .or_else(|| refused.map(|(n, why)| format!("line {n}: {why}")))
        }
        FileKind::QuorumState | FileKind::CleanShutdown => text_lines(bytes, emit, |_, line| {
            match serde_json::from_str::<serde_json::Value>(line) {
                Ok(serde_json::Value::Object(m)) => Ok((
                    "JSON object".to_string(),
                    m.iter()
                        .map(|(k, v)| format!("{k} = {v}"))
                        .collect::<Vec<_>>()
                        .join(", "),
                )),
                _ => Err("not a JSON object".to_string()),
            }
        }),
    }
}

/// A field a decoder read, at `depth`, shown as `value`; named
/// `{name} ({type})`.
fn shown(f: &Read<'_>, depth: u8, name: &str, value: String) -> FileField {
    FileField {
        position: f.position,
        depth,
        bytes: f.bytes.to_vec(),
        field: format!("{name} ({})", f.value.type_name()),
        value,
    }
}

/// A version field's value: `expected` as `shown`, any other as one the
/// reader refuses (the decoder then stops the listing).
fn version_text(v: i64, expected: i64, shown: &str) -> String {
    if v == expected {
        shown.to_string()
    } else {
        format!("{v}: Kafka reads only version {expected}")
    }
}

/// A number that is negative for Kafka's "no such thing": `none` then,
/// else `some`.
fn or_none(v: i64, none: &str, some: impl FnOnce() -> String) -> String {
    if v < 0 {
        format!("{v}: {none}")
    } else {
        some()
    }
}

fn note(position: u64, depth: u8, name: &str, value: String, emit: &mut dyn FnMut(FileField)) {
    emit(FileField {
        position,
        depth,
        bytes: Vec::new(),
        field: name.to_string(),
        value,
    });
}

/// Whole entries, the zero slots a broker preallocated after them, and a
/// torn tail: the entries' bytes, and a note for the rest.
fn entries_of<'b>(bytes: &'b [u8], entry_len: usize, emit: &mut dyn FnMut(FileField)) -> &'b [u8] {
    let whole = bytes.len() / entry_len;
    let used = index::used_entries(bytes, entry_len);
    let body = bytes.get(..used * entry_len).unwrap_or(&[]);
    if used < whole {
        note(
            (used * entry_len) as u64,
            0,
            "preallocated slots",
            format!(
                "{} zero slots of {entry_len} bytes (AbstractIndex preallocates the active segment's index; not entries)",
                whole - used
            ),
            emit,
        );
    }
    if whole * entry_len < bytes.len() {
        note(
            (whole * entry_len) as u64,
            0,
            "torn entry",
            format!(
                "{} trailing bytes, not a whole {entry_len}-byte entry (a crash during the write)",
                bytes.len() - whole * entry_len
            ),
            emit,
        );
    }
    body
}

/// The entries of a sparse index, each titled and read by `entry`, then the
/// preallocated slots and a torn tail.
fn sparse_index(
    bytes: &[u8],
    entry_len: usize,
    empty: &str,
    emit: &mut dyn FnMut(FileField),
    mut entry: impl FnMut(&mut Cursor<'_>, &mut dyn FnMut(FileField)) -> Result<(), crate::DecodeError>,
) -> Option<String> {
    let mut pending = Vec::new();
    let body = entries_of(bytes, entry_len, &mut |f| pending.push(f));
    if body.is_empty() && pending.is_empty() {
        note(0, 0, "no entries", empty.to_string(), emit);
    }
    let mut c = Cursor::new(body, 0);
    let mut i = 0u64;
    while !c.is_empty() {
        note(c.position(), 0, &format!("entry {i}"), String::new(), emit);
        if let Err(e) = entry(&mut c, emit) {
            return Some(e.to_string());
        }
        i += 1;
    }
    pending.into_iter().for_each(&mut *emit);
    torn(bytes.len(), entry_len)
}

/// A partial entry at the end: a problem to report (the reader stops before it).
fn torn(len: usize, entry_len: usize) -> Option<String> {
    let partial = len % entry_len;
    (partial > 0).then(|| {
        format!(
            "byte {}: {partial} bytes of a torn entry at the end",
            len - partial
        )
    })
}

fn offset_index(bytes: &[u8], base: i64, emit: &mut dyn FnMut(FileField)) -> Option<String> {
    let empty =
        "a segment gets its first entry once more than index.interval.bytes (4096) were appended";
    sparse_index(bytes, OFFSET_ENTRY_LEN, empty, emit, |c, emit| {
        let mut offset = base;
        let each = |f: Read<'_>| {
            let v = f.value.number();
            let value = match f.name {
                "relativeOffset" => {
                    offset = base + v;
                    format!("{v}: offset {offset} (base {base} + {v}), the last offset of the batch below")
                }
                _ => format!("{v}: the .log byte where the batch holding offset {offset} starts"),
            };
            emit(shown(&f, 1, f.name, value));
        };
        index::offset_entry_traced(c, base, &mut Each(each)).map(|_| ())
    })
}

fn time_index(bytes: &[u8], base: i64, emit: &mut dyn FnMut(FileField)) -> Option<String> {
    let empty = "entries come with the offset index's";
    sparse_index(bytes, TIME_ENTRY_LEN, empty, emit, |c, emit| {
        let mut ts = 0;
        let each = |f: Read<'_>| {
            let v = f.value.number();
            let value = match f.name {
                "timestamp" => {
                    ts = v;
                    format!("{v}: the largest timestamp in the segment so far")
                }
                _ => format!(
                    "{v}: offset {}, where timestamp {ts} was reached; records after {ts} come later",
                    base + v
                ),
            };
            emit(shown(&f, 1, f.name, value));
        };
        index::time_entry_traced(c, base, &mut Each(each)).map(|_| ())
    })
}

fn txn_index(bytes: &[u8], emit: &mut dyn FnMut(FileField)) -> Option<String> {
    let whole = bytes.len() / TXN_ENTRY_LEN * TXN_ENTRY_LEN;
    let mut c = Cursor::new(bytes.get(..whole).unwrap_or(&[]), 0);
    let mut i = 0u64;
    while !c.is_empty() {
        note(
            c.position(),
            0,
            &format!("aborted transaction {i}"),
            String::new(),
            emit,
        );
        let (mut first, mut last) = (0, 0);
        let each = |f: Read<'_>| {
            let v = f.value.number();
            let value = match f.name {
                "version" => version_text(v, 0, "0"),
                "firstOffset" => {
                    first = v;
                    format!("{v}: the transaction's first offset (perhaps in an earlier segment)")
                }
                "lastOffset" => {
                    last = v;
                    format!("{v}: the ABORT marker; a read_committed consumer skips the producer's batches in {first}..={v}")
                }
                "lastStableOffset" => format!(
                    "{v}: the last stable offset when the marker was written; a fetch ending at or below it reads no further entries{}",
                    if v == last + 1 { " (marker + 1: no other transaction was open)" } else { "" }
                ),
                _ => v.to_string(),
            };
            emit(shown(&f, 1, f.name, value));
        };
        if let Err(e) = index::txn_entry_traced(&mut c, &mut Each(each)) {
            return Some(e.to_string());
        }
        i += 1;
    }
    if whole < bytes.len() {
        note(
            whole as u64,
            0,
            "torn entry",
            format!(
                "{} trailing bytes, not a whole 34-byte entry: ignored, as Kafka's reader does",
                bytes.len() - whole
            ),
            emit,
        );
    }
    if bytes.is_empty() {
        note(0, 0, "no entries", "no aborted transaction".into(), emit);
    }
    torn(bytes.len(), TXN_ENTRY_LEN)
}

/// What each snapshot field of a producer is for, in Kafka's rules.
fn snapshot(bytes: &[u8], offset: i64, emit: &mut dyn FnMut(FileField)) -> Option<String> {
    let computed = crc32c(bytes.get(6..).unwrap_or(&[]));
    let mut producer = 0;
    let (mut last_seq, mut last_offset) = (0, 0);
    let each = |f: Read<'_>| {
        let v = f.value.number();
        let (depth, name, value) = match f.name {
            "version" => (0, "version", version_text(v, 1, "1 (ProducerSnapshot)")),
            "crc" => (
                0,
                "crc",
                format!(
                    "0x{v:08x}; CRC-32C of bytes 6..{} is 0x{computed:08x}: {}",
                    bytes.len(),
                    if v == i64::from(computed) {
                        "valid"
                    } else {
                        "MISMATCH (the broker deletes the snapshot and rebuilds from the log)"
                    }
                ),
            ),
            "count" => (0, "producer count", format!("{v}: the producers known at offset {offset} (the file name: the state is valid up to it)")),
            name => (1, name, entry_text(name, v, &mut last_seq, &mut last_offset)),
        };
        if f.name == "producerId" {
            note(
                f.position,
                0,
                &format!("producer {producer}"),
                String::new(),
                emit,
            );
            producer += 1;
        }
        emit(shown(&f, depth, name, value));
    };
    match snapshot::decode_traced(bytes, &mut Each(each)) {
        Err(e) => Some(e.to_string()),
        Ok(s) => (s.crc != s.computed_crc).then(|| {
            format!(
                "byte 2: CRC mismatch: stored 0x{:08X}, computed 0x{:08X}",
                s.crc, s.computed_crc
            )
        }),
    }
}

/// What a field of a producer's snapshot entry says (`last_seq` and
/// `last_offset` remember the entry's own, for the fields after them).
fn entry_text(name: &str, v: i64, last_seq: &mut i64, last_offset: &mut i64) -> String {
    use crate::format::batch::{decrement_sequence, increment_sequence};
    match name {
        "producerId" => format!("{v}: the key every check looks up"),
        "epoch" => format!("{v}: a batch or marker with a lower epoch is refused (InvalidProducerEpochException)"),
        "lastSequence" => {
            *last_seq = v;
            or_none(v, "no batch at this epoch; the next must start at sequence 0", || {
                format!(
                    "{v}: the next batch at this epoch must start at {} (OutOfOrderSequenceException)",
                    increment_sequence(v as i32, 1)
                )
            })
        }
        "lastOffset" => {
            *last_offset = v;
            or_none(v, "no batch kept (the broker reloads no batch metadata)", || {
                format!("{v}: the last offset of the producer's last batch")
            })
        }
        "offsetDelta" if *last_offset < 0 => v.to_string(),
        "offsetDelta" => format!(
            "{v}: that batch holds sequences {}..={} at offsets {}..={}; a retry of exactly it is a duplicate, answered with these offsets",
            decrement_sequence(*last_seq as i32, v as i32),
            last_seq,
            *last_offset - v,
            last_offset
        ),
        "timestamp" => format!("{v}: the last write; a producer idle for producer.id.expiration.ms without an open transaction is dropped"),
        "coordinatorEpoch" => or_none(v, "no marker yet", || {
            format!("{v}: a marker from an older coordinator epoch is refused (TransactionCoordinatorFencedException)")
        }),
        "currentTxnFirstOffset" => or_none(v, "no open transaction", || {
            format!("{v}: an open transaction's first offset: the last stable offset stays at or below it")
        }),
        _ => v.to_string(),
    }
}

/// Annotate a text file line by line: `annotate` gives a line's field name
/// and value, or why Kafka refuses it.
fn text_lines(
    bytes: &[u8],
    emit: &mut dyn FnMut(FileField),
    mut annotate: impl FnMut(usize, &str) -> Result<(String, String), String>,
) -> Option<String> {
    if bytes.is_empty() {
        note(
            0,
            0,
            "empty file",
            "nothing in it (Kafka reads an empty checkpoint as no entries)".into(),
            emit,
        );
        return None;
    }
    let mut at = 0usize;
    let mut n = 0usize;
    let mut problem = None;
    for raw in bytes.split_inclusive(|&b| b == b'\n') {
        n += 1;
        let text = String::from_utf8_lossy(raw);
        let line = text.trim_end_matches('\n').trim_end_matches('\r');
        // The line in quotes as it is: each renderer escapes what it must
        // (text its control characters, JSON its quotes), once.
        let (name, value) = match annotate(n, line) {
            Ok((name, meaning)) if meaning.is_empty() => (name, format!("\"{line}\"")),
            Ok((name, meaning)) => (name, format!("\"{line}\": {meaning}")),
            Err(why) => {
                problem.get_or_insert_with(|| format!("line {n}: {why}"));
                (format!("line {n}"), format!("\"{line}\": {why}"))
            }
        };
        emit(FileField {
            position: at as u64,
            depth: 0,
            bytes: raw.to_vec(),
            field: name,
            value,
        });
        at += raw.len();
    }
    problem
}

/// A checkpoint line by line as [`checkpoint::read_line`] reads it: the
/// version, the count, then entries, each said by `meaning`; then whether
/// the count matches the entry lines, which refuses the whole file
/// otherwise (`CheckpointFile`: "Expected \[N\] entries").
fn checkpoint_lines(
    bytes: &[u8],
    entries: Entries,
    meaning: impl Fn(&[&str]) -> String,
    emit: &mut dyn FnMut(FileField),
) -> Option<String> {
    let (mut count, mut lines) = (None, 0);
    let refused = text_lines(bytes, emit, |n, line| {
        lines = n;
        match checkpoint::read_line(n, line, entries) {
            Ok(Line::Version) => Ok((
                "version".into(),
                "the only version Kafka writes and reads".into(),
            )),
            Ok(Line::Count(c)) => {
                count = Some(c);
                Ok(("entry count".into(), format!("exactly {c} lines follow")))
            }
            Ok(Line::Entry(parts)) => Ok((format!("entry {}", n - 2), meaning(&parts))),
            Err(why) => Err(format!("{why}: Kafka refuses the whole file")),
        }
    });
    refused.or_else(|| {
        let why = checkpoint::count_mismatch(count?, lines.saturating_sub(2))?;
        Some(format!("line 2: {why}: Kafka refuses the whole file"))
    })
}

/// What an `epoch startOffset` line of a leader-epoch-checkpoint is.
fn leader_epoch_meaning(parts: &[&str]) -> String {
    format!(
        "leader epoch {} began at offset {}: the first offset written under it",
        parts[0], parts[1]
    )
}

/// What the offset of a `topic partition offset` checkpoint is.
fn offset_meaning(name: &'static str) -> impl Fn(&[&str]) -> String {
    move |p: &[&str]| {
        let tp = format!("{}-{}", p[0], p[1]);
        let o = p[2];
        match name {
            checkpoint::REPLICATION_OFFSET => format!("{tp}: high watermark {o} (read_uncommitted consumers read below it)"),
            checkpoint::RECOVERY_POINT => format!("{tp}: recovery point {o} (flushed below it: after a crash recovery starts at the segment holding it)"),
            checkpoint::LOG_START_OFFSET => format!("{tp}: log start offset {o} (above the first segment's base: offsets below it are gone)"),
            checkpoint::CLEANER_OFFSET => format!("{tp}: first dirty offset {o} (the cleaner compacts from here)"),
            _ => format!("{tp}: {o}"),
        }
    }
}

/// Line `n` of a `partition.metadata` that its reader
/// ([`meta::parse_partition_metadata`]) refused at a line, or read.
fn partition_metadata_line(
    n: usize,
    refused: Option<&(usize, String)>,
) -> Result<(String, String), String> {
    match (n, refused) {
        (n, Some((at, why))) if *at == n => Err(why.clone()),
        (1, _) => Ok(("version".into(), "PartitionMetadataFile's version (0)".into())),
        (2, _) => Ok(("topic_id".into(), "the topic id (16 bytes, URL-safe base64 without padding); a folder with another id is not this topic's".into())),
        _ => Ok((format!("line {n}"), "not read by Kafka".into())),
    }
}

/// Line `n` of a `meta.properties` whose properties
/// ([`meta::parse_properties`]) are `props`, or which it refused at a line.
fn meta_properties_line(
    n: usize,
    line: &str,
    props: &[meta::Property],
    refused: Option<&(usize, String)>,
) -> Result<(String, String), String> {
    if let Some((_, why)) = refused.filter(|(at, _)| *at == n) {
        return Err(why.clone());
    }
    let t = line.trim_start();
    if t.is_empty() {
        return Ok(("blank".into(), String::new()));
    }
    if t.starts_with('#') || t.starts_with('!') {
        return Ok(("comment".into(), "Properties.store's header or date".into()));
    }
    let Some(p) = props.iter().find(|p| p.line == n) else {
        return Ok(("continued".into(), "the line before continues here".into()));
    };
    let meaning = match p.key.as_str() {
        "version" => match p.value.as_str() {
            "0" => "ZooKeeper-era layout (broker.id)",
            "1" => "KRaft (node.id and cluster.id required)",
            _ => "a version Kafka refuses (0 or 1)",
        },
        "node.id" => "this node's id (KRaft)",
        "broker.id" => "this broker's id (ZooKeeper era)",
        "cluster.id" => "the cluster this directory belongs to",
        "directory.id" => {
            "this log directory's id (KIP-858), named by the metadata's partition assignments"
        }
        _ => "not read by Kafka",
    };
    Ok((p.key.clone(), meaning.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn all(kind: FileKind, bytes: &[u8]) -> (Vec<FileField>, Option<String>) {
        let mut out = Vec::new();
        let err = layout(kind, bytes, &mut |f| out.push(f));
        (out, err)
    }

    #[test]
    fn kinds_by_name() {
        assert_eq!(
            FileKind::of("00000000000000000014.snapshot"),
            Some(FileKind::Snapshot { offset: 14 })
        );
        assert_eq!(
            FileKind::of("replication-offset-checkpoint"),
            Some(FileKind::OffsetCheckpoint(checkpoint::REPLICATION_OFFSET))
        );
        assert_eq!(FileKind::of("00000000000000000000.log"), None);
        assert_eq!(FileKind::of("notes.txt"), None);
    }

    /// A snapshot of one producer (7, epoch 1, last sequence 3 at offset 9).
    fn one_producer(coordinator_epoch: i32, current_txn_first_offset: i64) -> Vec<u8> {
        crate::txn::snapshot::encode(&[crate::txn::snapshot::SnapshotEntry {
            producer_id: 7,
            epoch: 1,
            last_sequence: 3,
            last_offset: 9,
            offset_delta: 1,
            timestamp: 5,
            coordinator_epoch,
            current_txn_first_offset,
        }])
    }

    #[test]
    fn every_byte_of_a_snapshot_is_one_field() {
        let bytes = one_producer(-1, -1);
        let (fields, err) = all(FileKind::Snapshot { offset: 10 }, &bytes);
        assert_eq!(err, None);
        assert_eq!(
            fields.iter().map(|f| f.bytes.len()).sum::<usize>(),
            bytes.len()
        );
        let at = |name: &str| fields.iter().find(|f| f.field == name).unwrap().position;
        assert_eq!(
            [
                at("epoch (int16)"),
                at("lastSequence (int32)"),
                at("currentTxnFirstOffset (int64)")
            ],
            [18, 20, 48]
        );
    }

    #[test]
    fn every_cut_and_flip_is_annotated_without_panicking() {
        let snap = one_producer(2, 4);
        let txn = crate::format::index::encode_txn_entry(7, 1, 9, 10);
        let index = [0u8, 0, 0, 5, 0, 0, 1, 2, 0, 0, 0, 9, 0, 0, 2, 4];
        let text = b"0\n2\norders 0 5\norders 1 6\n".to_vec();
        let kinds = [
            (FileKind::Snapshot { offset: 10 }, snap),
            (FileKind::TxnIndex, txn),
            (FileKind::OffsetIndex { base_offset: 3 }, index.to_vec()),
            (FileKind::TimeIndex { base_offset: 3 }, index.to_vec()),
            (
                FileKind::OffsetCheckpoint(checkpoint::RECOVERY_POINT),
                text.clone(),
            ),
            (FileKind::LeaderEpochCheckpoint, text.clone()),
            (FileKind::PartitionMetadata, text.clone()),
            (FileKind::MetaProperties, text.clone()),
            (FileKind::QuorumState, text),
        ];
        for (kind, bytes) in kinds {
            for cut in 0..=bytes.len() {
                let mut n = 0;
                layout(kind, &bytes[..cut], &mut |f| {
                    assert!(f.position <= cut as u64, "{kind:?} cut {cut}: {f:?}");
                    n += f.bytes.len();
                });
                assert!(n <= cut, "{kind:?} cut {cut}");
            }
            for at in 0..bytes.len() {
                let mut flipped = bytes.clone();
                flipped[at] ^= 0xff;
                layout(kind, &flipped, &mut |_| {});
            }
        }
    }

    #[test]
    fn checkpoint_lines_and_a_malformed_one() {
        let (fields, err) = all(
            FileKind::OffsetCheckpoint(checkpoint::REPLICATION_OFFSET),
            b"0\n1\norders 0 28\n",
        );
        assert_eq!(err, None);
        assert_eq!(
            fields
                .iter()
                .map(|f| (f.position, f.field.as_str()))
                .collect::<Vec<_>>(),
            [(0, "version"), (2, "entry count"), (4, "entry 1")]
        );
        assert!(fields[2].value.contains("orders-0: high watermark 28"));
        let (_, err) = all(FileKind::LeaderEpochCheckpoint, b"0\n1\n3\n");
        assert_eq!(
            err.unwrap(),
            "line 3: malformed line \"3\" (expected 2 fields): Kafka refuses the whole file"
        );
        let (_, err) = all(FileKind::LeaderEpochCheckpoint, b"0\n1\n3000000000 5\n");
        assert!(err.unwrap().starts_with("line 3: epoch is not a number"));
    }
}
