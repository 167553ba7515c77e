//! The annotated layout of every file klog reads beside the logs, for
//! `dump-segment --layout`: binary files (`.index`, `.timeindex`,
//! `.txnindex`, producer-state `.snapshot`) field by field, text files
//! (checkpoints, `partition.metadata`, `meta.properties`, `quorum-state`,
//! `.kafka_cleanshutdown`) line by line, each as `position  raw bytes
//! field  value` with what Kafka does with the value.
//!
//! The byte positions and field names follow the decoders'
//! ([`format::index`](crate::format::index), [`txn::snapshot`](crate::txn::snapshot),
//! [`log::checkpoint`](crate::log::checkpoint), [`log::meta`](crate::log::meta)); a
//! file that does not decode is annotated up to the bad byte or line, and
//! the error says where. Fields are handed to a callback one at a time,
//! so a 10 MiB preallocated index costs no memory.

use crate::format::crc::crc32c;
use crate::format::cursor::Cursor;
use crate::format::index::{self, OFFSET_ENTRY_LEN, TIME_ENTRY_LEN, TXN_ENTRY_LEN};
use crate::log::checkpoint;

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
        FileKind::OffsetCheckpoint(name) => text_lines(bytes, emit, |n, line| {
            checkpoint_line(n, line, 3, offset_meaning(name))
        })
        .or_else(|| entry_count(bytes)),
        FileKind::LeaderEpochCheckpoint => text_lines(bytes, emit, |n, line| {
            checkpoint_line(n, line, 2, |parts| {
                format!(
                    "leader epoch {} began at offset {}: the first offset written under it",
                    parts[0], parts[1]
                )
            })
        })
        .or_else(|| entry_count(bytes)),
        FileKind::PartitionMetadata => text_lines(bytes, emit, partition_metadata_line),
        FileKind::MetaProperties => text_lines(bytes, emit, meta_properties_line),
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

/// A binary field read with `read`, shown with `show`.
fn field<'a, T>(
    c: &mut Cursor<'a>,
    depth: u8,
    name: &str,
    read: impl FnOnce(&mut Cursor<'a>) -> Result<T, crate::DecodeError>,
    show: impl FnOnce(&T) -> String,
    emit: &mut dyn FnMut(FileField),
) -> Result<T, crate::DecodeError> {
    let start = c.position();
    let before = c.rest();
    let v = read(c)?;
    let len = (c.position() - start) as usize;
    emit(FileField {
        position: start,
        depth,
        bytes: before.get(..len).unwrap_or(&[]).to_vec(),
        field: name.to_string(),
        value: show(&v),
    });
    Ok(v)
}

/// A number field of a producer entry, shown with `none` when it is
/// negative (Kafka's "no such thing") and else with `some`.
fn num(
    c: &mut Cursor<'_>,
    name: &str,
    read: fn(&mut Cursor<'_>) -> Result<i64, crate::DecodeError>,
    none: Option<&str>,
    some: impl FnOnce(i64) -> String,
    emit: &mut dyn FnMut(FileField),
) -> Result<i64, crate::DecodeError> {
    field(
        c,
        1,
        name,
        read,
        |v| match none {
            Some(n) if *v < 0 => format!("{v}: {n}"),
            _ => some(*v),
        },
        emit,
    )
}

/// A version field (int16) that must be `expected` (the reader refuses any
/// other, so the listing stops there).
fn version(
    c: &mut Cursor<'_>,
    depth: u8,
    schema: &'static str,
    expected: i16,
    shown: &str,
    emit: &mut dyn FnMut(FileField),
) -> Result<(), crate::DecodeError> {
    let at = c.position();
    let v = field(
        c,
        depth,
        "version (int16)",
        Cursor::i16,
        |v| {
            if *v == expected {
                shown.to_string()
            } else {
                format!("{v}: Kafka reads only version {expected}")
            }
        },
        emit,
    )?;
    if v != expected {
        return Err(crate::DecodeError::new(
            at,
            crate::DecodeErrorKind::UnknownVersion { schema, version: v },
        ));
    }
    Ok(())
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
        let rel = field(
            c,
            1,
            "relativeOffset (int32)",
            Cursor::i32,
            |v| {
                format!(
                    "{v}: offset {} (base {base} + {v}), the last offset of the batch below",
                    base + i64::from(*v)
                )
            },
            emit,
        )?;
        field(
            c,
            1,
            "position (int32)",
            Cursor::i32,
            |v| {
                format!(
                    "{v}: the .log byte where the batch holding offset {} starts",
                    base + i64::from(rel)
                )
            },
            emit,
        )?;
        Ok(())
    })
}

fn time_index(bytes: &[u8], base: i64, emit: &mut dyn FnMut(FileField)) -> Option<String> {
    let empty = "entries come with the offset index's";
    sparse_index(bytes, TIME_ENTRY_LEN, empty, emit, |c, emit| {
        let ts = field(
            c,
            1,
            "timestamp (int64)",
            Cursor::i64,
            |v| format!("{v}: the largest timestamp in the segment so far"),
            emit,
        )?;
        field(
            c,
            1,
            "relativeOffset (int32)",
            Cursor::i32,
            |v| {
                format!(
                "{v}: offset {}, where timestamp {ts} was reached; records after {ts} come later",
                base + i64::from(*v)
            )
            },
            emit,
        )?;
        Ok(())
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
        let r = (|| {
            version(&mut c, 1, "AbortedTxn", 0, "0", emit)?;
            field(
                &mut c,
                1,
                "producerId (int64)",
                Cursor::i64,
                |v| v.to_string(),
                emit,
            )?;
            let first = field(
                &mut c,
                1,
                "firstOffset (int64)",
                Cursor::i64,
                |v| format!("{v}: the transaction's first offset (perhaps in an earlier segment)"),
                emit,
            )?;
            let last = field(
                &mut c,
                1,
                "lastOffset (int64)",
                Cursor::i64,
                |v| {
                    format!("{v}: the ABORT marker; a read_committed consumer skips the producer's batches in {first}..={v}")
                },
                emit,
            )?;
            field(
                &mut c,
                1,
                "lastStableOffset (int64)",
                Cursor::i64,
                |v| {
                    format!(
                    "{v}: the last stable offset when the marker was written; a fetch ending at or below it reads no further entries{}",
                    if *v == last + 1 { " (marker + 1: no other transaction was open)" } else { "" }
                )
                },
                emit,
            )
        })();
        if let Err(e) = r {
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
    let mut c = Cursor::new(bytes, 0);
    let r = (|| {
        version(
            &mut c,
            0,
            "ProducerSnapshot",
            1,
            "1 (ProducerSnapshot)",
            emit,
        )?;
        let computed = crc32c(bytes.get(6..).unwrap_or(&[]));
        let crc_at = c.position();
        field(
            &mut c,
            0,
            "crc (uint32)",
            Cursor::u32,
            |v| {
                format!(
                    "0x{v:08x}; CRC-32C of bytes 6..{} is 0x{computed:08x}: {}",
                    bytes.len(),
                    if *v == computed {
                        "valid"
                    } else {
                        "MISMATCH (the broker deletes the snapshot and rebuilds from the log)"
                    }
                )
            },
            emit,
        )?;
        let n = field(
            &mut c,
            0,
            "producer count (int32)",
            Cursor::i32,
            |v| {
                format!("{v}: the producers known at offset {offset} (the file name: the state is valid up to it)")
            },
            emit,
        )?;
        for i in 0..n.max(0) {
            note(
                c.position(),
                0,
                &format!("producer {i}"),
                String::new(),
                emit,
            );
            snapshot_entry(&mut c, emit)?;
        }
        if !c.is_empty() {
            return Err(c.error(crate::DecodeErrorKind::TrailingBytes {
                field: "snapshot entries",
                remaining: c.remaining() as u64,
            }));
        }
        Ok((crc_at, computed))
    })();
    match r {
        Err(e) => Some(e.to_string()),
        Ok((at, computed)) => {
            let stored = bytes
                .get(at as usize..at as usize + 4)
                .and_then(|b| b.try_into().ok())
                .map(u32::from_be_bytes);
            (stored != Some(computed)).then(|| {
                format!(
                    "byte {at}: CRC mismatch: stored 0x{:08X}, computed 0x{computed:08X}",
                    stored.unwrap_or_default()
                )
            })
        }
    }
}

/// A producer's entry of a snapshot, field by field.
fn snapshot_entry(
    c: &mut Cursor<'_>,
    emit: &mut dyn FnMut(FileField),
) -> Result<(), crate::DecodeError> {
    num(
        c,
        "producerId (int64)",
        |c| c.i64(),
        None,
        |v| format!("{v}: the key every check looks up"),
        emit,
    )?;
    num(
        c,
        "epoch (int16)",
        |c| c.i16().map(i64::from),
        None,
        |v| {
            format!("{v}: a batch or marker with a lower epoch is refused (InvalidProducerEpochException)")
        },
        emit,
    )?;
    let last_seq = num(
        c,
        "lastSequence (int32)",
        |c| c.i32().map(i64::from),
        Some("no batch at this epoch; the next must start at sequence 0"),
        |v| {
            format!(
                "{v}: the next batch at this epoch must start at {} (OutOfOrderSequenceException)",
                crate::format::batch::increment_sequence(v as i32, 1)
            )
        },
        emit,
    )?;
    let last_offset = num(
        c,
        "lastOffset (int64)",
        |c| c.i64(),
        Some("no batch kept (the broker reloads no batch metadata)"),
        |v| format!("{v}: the last offset of the producer's last batch"),
        emit,
    )?;
    num(
        c,
        "offsetDelta (int32)",
        |c| c.i32().map(i64::from),
        None,
        |v| {
            if last_offset < 0 {
                v.to_string()
            } else {
                format!(
                "{v}: that batch holds sequences {}..={last_seq} at offsets {}..={last_offset}; a retry of exactly it is a duplicate, answered with these offsets",
                crate::format::batch::decrement_sequence(last_seq as i32, v as i32),
                last_offset - v
            )
            }
        },
        emit,
    )?;
    num(
        c,
        "timestamp (int64)",
        |c| c.i64(),
        None,
        |v| {
            format!("{v}: the last write; a producer idle for producer.id.expiration.ms without an open transaction is dropped")
        },
        emit,
    )?;
    num(
        c,
        "coordinatorEpoch (int32)",
        |c| c.i32().map(i64::from),
        Some("no marker yet"),
        |v| {
            format!("{v}: a marker from an older coordinator epoch is refused (TransactionCoordinatorFencedException)")
        },
        emit,
    )?;
    num(
        c,
        "currentTxnFirstOffset (int64)",
        |c| c.i64(),
        Some("no open transaction"),
        |v| {
            format!("{v}: an open transaction's first offset: the last stable offset stays at or below it")
        },
        emit,
    )?;
    Ok(())
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

/// One line of a checkpoint (`CheckpointFile`): the version, the count,
/// then entries of `fields` whitespace-separated fields.
fn checkpoint_line(
    n: usize,
    line: &str,
    fields: usize,
    meaning: impl Fn(&[&str]) -> String,
) -> Result<(String, String), String> {
    match n {
        1 => match line.trim() {
            "0" => Ok((
                "version".into(),
                "the only version Kafka writes and reads".into(),
            )),
            v => Err(format!(
                "version {v:?}: Kafka expects 0 and refuses the file"
            )),
        },
        2 => line
            .trim()
            .parse::<u32>()
            .map(|c| ("entry count".into(), format!("exactly {c} lines follow")))
            .map_err(|_| "the entry count is not a number".to_string()),
        _ => {
            let parts: Vec<&str> = line.split_whitespace().collect();
            if parts.len() != fields {
                return Err(format!(
                    "{} fields where Kafka wants exactly {fields}: a malformed line fails the whole file",
                    parts.len()
                ));
            }
            if parts
                .iter()
                .skip(fields - 2)
                .any(|p| p.parse::<i64>().is_err())
            {
                return Err("a number does not parse".into());
            }
            Ok((format!("entry {}", n - 2), meaning(&parts)))
        }
    }
}

/// A checkpoint whose count line does not match its entries is refused
/// whole (`CheckpointFile`: "Expected [N] entries").
fn entry_count(bytes: &[u8]) -> Option<String> {
    let text = String::from_utf8_lossy(bytes);
    let mut lines = text.lines();
    let count: usize = lines.nth(1)?.trim().parse().ok()?;
    let found = lines.count();
    (found != count).then(|| {
        format!("line 2: expected {count} entries, found {found}: Kafka refuses the whole file")
    })
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

fn partition_metadata_line(n: usize, line: &str) -> Result<(String, String), String> {
    let value = line.split_once(':').map(|(_, v)| v.trim());
    match (n, value) {
        (1, Some(v)) => match v.parse::<i32>() {
            Ok(n) if n >= 0 => Ok(("version".into(), "PartitionMetadataFile's version (0)".into())),
            _ => Err("the version is not a number of at least 0".into()),
        },
        (2, Some(v)) => crate::log::meta::Uuid::parse(v)
            .map(|_| ("topic_id".into(), "the topic id (16 bytes, URL-safe base64 without padding); a folder with another id is not this topic's".into()))
            .map_err(|why| format!("topic id {why}")),
        (1 | 2, None) => Err("no \"name: value\"".into()),
        _ => Ok((format!("line {n}"), "not read by Kafka".into())),
    }
}

fn meta_properties_line(_n: usize, line: &str) -> Result<(String, String), String> {
    let t = line.trim_start();
    if t.is_empty() {
        return Ok(("blank".into(), String::new()));
    }
    if t.starts_with('#') || t.starts_with('!') {
        return Ok(("comment".into(), "Properties.store's header or date".into()));
    }
    let (key, value) = t
        .split_once(['=', ':'])
        .map(|(k, v)| (k.trim(), v.trim()))
        .unwrap_or((t, ""));
    let meaning = match key {
        "version" => match value {
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
    Ok((key.to_string(), meaning.to_string()))
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
        assert!(err.unwrap().starts_with("line 3: 1 fields"));
    }
}
