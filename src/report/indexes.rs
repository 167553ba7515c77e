//! `dump-segment` of the files beside a log: `.index`, `.timeindex`,
//! `.txnindex` and producer-state `.snapshot` files.

use std::io::Write;
use std::path::Path;

use kaen_log::format::index;
use kaen_log::inspect::layout::sidecar::{FileField, FileKind};
use kaen_log::txn::snapshot;
use serde::Serialize;

use crate::report::document::Entries;
use crate::report::Output;

#[derive(Serialize, schemars::JsonSchema)]
pub struct TimeEntry<'a> {
    #[serde(flatten)]
    file: &'a kaen_log::log::findings::FileFields,
    position: u64,
    timestamp: i64,
    offset: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct OffsetEntry<'a> {
    #[serde(flatten)]
    file: &'a kaen_log::log::findings::FileFields,
    position: u64,
    offset: i64,
    log_position: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct TxnEntry<'a> {
    #[serde(flatten)]
    file: &'a kaen_log::log::findings::FileFields,
    position: u64,
    version: i16,
    producer_id: i64,
    first_offset: i64,
    last_offset: i64,
    last_stable_offset: i64,
}

#[derive(Serialize, schemars::JsonSchema)]
pub struct SnapshotEntry<'a> {
    #[serde(flatten)]
    file: &'a kaen_log::log::findings::FileFields,
    snapshot_offset: i64,
    crc_valid: bool,
    producer_id: i64,
    producer_epoch: i16,
    coordinator_epoch: i32,
    current_txn_first_offset: i64,
    last_timestamp_ms: i64,
    last_sequence: i32,
    last_offset: i64,
    offset_delta: i32,
}

pub fn dump_index(
    (path, bytes): (&Path, &[u8]),
    base: i64,
    time: bool,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let file = path.display().to_string();
    let fields = kaen_log::log::findings::FileFields::of(path);
    let text = sink.is_text();
    if text {
        writeln!(out, "Dumping {}", super::table::escape_cell(&file))?;
    }
    let mut problems = 0;
    // A partial trailing entry is reported; the whole entries before it are still shown.
    let entry_len = if time {
        index::TIME_ENTRY_LEN
    } else {
        index::OFFSET_ENTRY_LEN
    };
    let whole = bytes.len() / entry_len * entry_len;
    if whole != bytes.len() {
        problems += 1;
        crate::report::say!(
            "{file}: byte {whole}: index length {} is not a multiple of the entry size {entry_len}",
            bytes.len()
        );
    }
    let total = whole / entry_len;
    // Preallocated zero slots at the end are not entries (see index::used_entries).
    let used = index::used_entries(bytes, entry_len);
    let body = bytes.get(..used * entry_len).unwrap_or(&[]);
    let mut shown = 0usize;
    if time {
        for e in index::time_entries(body, base)? {
            shown += 1;
            let line = || format!("timestamp: {} offset: {}", e.timestamp, e.offset);
            let doc = TimeEntry {
                file: &fields,
                position: e.at,
                timestamp: e.timestamp,
                offset: e.offset,
            };
            sink.line_or_entry(out, line, "time_index_entry", &doc)?;
        }
    } else {
        for e in index::offset_entries(body, base)? {
            shown += 1;
            let line = || format!("offset: {} position: {}", e.offset, e.position);
            let doc = OffsetEntry {
                file: &fields,
                position: e.at,
                offset: e.offset,
                log_position: i64::from(e.position),
            };
            sink.line_or_entry(out, line, "offset_index_entry", &doc)?;
        }
    }
    if text && total == 0 {
        writeln!(out, "{} is empty.", super::table::escape_cell(&file))?;
    }
    if shown < total {
        crate::report::say!(
            "{file}: {} preallocated zero slots after entry {shown} (not entries); not shown",
            total - shown
        );
    }
    Ok(problems)
}

/// The result of one sanity check (JSON and jsonl).
#[derive(Serialize, schemars::JsonSchema)]
pub struct SanityEntry<'a> {
    file: &'a str,
    passed: bool,
    /// Why it failed, in Kafka's words.
    reason: Option<String>,
}

/// `--index-sanity-check` of the `.index` or `.timeindex` at `path` (base
/// offset `base`), as `DumpLogSegments.dumpIndex` / `dumpTimeIndex` run
/// it: "passed sanity check." or why not (`verdict`: klog's
/// [`index::sanity_check`]). Returns the problems found.
pub fn sanity_check(
    (path, bytes): (&Path, &[u8]),
    base: i64,
    time: bool,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let file = path.display().to_string();
    let shown = super::table::escape_cell(&file);
    if sink.is_text() {
        writeln!(out, "Dumping {shown}")?;
    }
    // `dumpIndex` says an offset index of no whole entry is empty
    // before it checks anything; `dumpTimeIndex` checks it.
    if !time && bytes.len() < index::OFFSET_ENTRY_LEN && sink.is_text() {
        writeln!(out, "{shown} is empty.")?;
        return Ok(0);
    }
    let verdict = index::sanity_check(bytes, base, time);
    if sink.is_text() {
        match &verdict {
            Ok(()) => writeln!(out, "{shown} passed sanity check.")?,
            Err((at, why)) => eprintln!("klog: {shown}: byte {at}: {why}"),
        }
    } else {
        sink.entry(
            out,
            "index_sanity",
            &SanityEntry {
                file: &file,
                passed: verdict.is_ok(),
                reason: verdict
                    .as_ref()
                    .err()
                    .map(|(at, why)| format!("byte {at}: {why}")),
            },
        )?;
    }
    Ok(u64::from(verdict.is_err()))
}

/// A `.txnindex`: one line per aborted transaction.
pub fn dump_txnindex(
    (path, bytes): (&Path, &[u8]),
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let file = path.display().to_string();
    let fields = kaen_log::log::findings::FileFields::of(path);
    let text = sink.is_text();
    if text {
        writeln!(out, "Dumping {}", super::table::escape_cell(&file))?;
    }
    let (entries, partial) =
        index::txn_entries(bytes).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    for e in &entries {
        if text {
            writeln!(
                out,
                "version: {} producerId: {} firstOffset: {} lastOffset: {} lastStableOffset: {}",
                e.version, e.producer_id, e.first_offset, e.last_offset, e.last_stable_offset
            )?;
        } else {
            sink.entry(
                out,
                "txn_index_entry",
                &TxnEntry {
                    file: &fields,
                    position: e.at,
                    version: e.version,
                    producer_id: e.producer_id,
                    first_offset: e.first_offset,
                    last_offset: e.last_offset,
                    last_stable_offset: e.last_stable_offset,
                },
            )?;
        }
    }
    if partial > 0 {
        crate::report::say!(
            "{file}: byte {}: {partial} bytes of a torn entry at the end (ignored, as Kafka does)",
            bytes.len() - partial
        );
        return Ok(1);
    }
    Ok(0)
}

/// A producer-state snapshot: one line per producer.
pub fn dump_snapshot(
    (path, bytes): (&Path, &[u8]),
    offset: i64,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let file = path.display().to_string();
    let fields = kaen_log::log::findings::FileFields::of(path);
    let snap = snapshot::decode(bytes).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
    let crc_valid = snap.crc == snap.computed_crc;
    let text = sink.is_text();
    if text {
        writeln!(out, "Dumping {}", super::table::escape_cell(&file))?;
        writeln!(
            out,
            "Snapshot end offset: {offset} version: {} crc: {} isvalid: {crc_valid}",
            snap.version, snap.crc
        )?;
    }
    for e in &snap.entries {
        if text {
            writeln!(
                out,
                "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {} lastTimestamp: {} lastSequence: {} lastOffset: {} offsetDelta: {}",
                e.producer_id, e.epoch, e.coordinator_epoch, e.current_txn_first_offset, e.timestamp, e.last_sequence, e.last_offset, e.offset_delta
            )?;
        } else {
            sink.entry(
                out,
                "snapshot_entry",
                &SnapshotEntry {
                    file: &fields,
                    snapshot_offset: offset,
                    crc_valid,
                    producer_id: e.producer_id,
                    producer_epoch: e.epoch,
                    coordinator_epoch: e.coordinator_epoch,
                    current_txn_first_offset: e.current_txn_first_offset,
                    last_timestamp_ms: e.timestamp,
                    last_sequence: e.last_sequence,
                    last_offset: e.last_offset,
                    offset_delta: e.offset_delta,
                },
            )?;
        }
    }
    if !crc_valid {
        crate::report::say!(
            "{file}: byte 2: CRC mismatch: stored 0x{:08X}, computed 0x{:08X}",
            snap.crc,
            snap.computed_crc
        );
        return Ok(1);
    }
    Ok(0)
}

/// A producer-state snapshot as kafka-dump-log prints it
/// (`DumpLogSegments.dumpProducerIdSnapshot`, which reads it with
/// `ProducerStateManager.readSnapshot`): a line per producer, its last
/// batch's sequence range when the entry has one (a last offset of 0 or
/// more), or on stderr why the snapshot does not load. The Scala tool (up
/// to 4.2) ends the producer's fields with a space; the Java one starts the
/// batch's with one. Returns the problems found.
pub fn dump_snapshot_as_kafka(
    (path, bytes): (&Path, &[u8]),
    tool: crate::report::kafka_dump::Tool,
    out: &mut Output,
) -> anyhow::Result<u64> {
    writeln!(
        out,
        "Dumping {}",
        super::table::escape_cell(&path.display().to_string())
    )?;
    let snap = match snapshot::decode(bytes) {
        Ok(snap) => snap,
        Err(e) => {
            let why = match e.kind {
                kaen_log::format::error::DecodeErrorKind::UnknownVersion { version, .. } => {
                    format!("Snapshot contained an unknown file version {version}")
                }
                _ => e.to_string(),
            };
            eprintln!("Snapshot failed schema validation: {why}");
            return Ok(1);
        }
    };
    if snap.crc != snap.computed_crc {
        eprintln!(
            "Snapshot is corrupt (CRC is no longer valid). Stored crc: {}. Computed crc: {}",
            snap.crc, snap.computed_crc
        );
        return Ok(1);
    }
    for e in &snap.entries {
        let txn = if e.current_txn_first_offset >= 0 {
            format!("OptionalLong[{}]", e.current_txn_first_offset)
        } else {
            "OptionalLong.empty".to_string()
        };
        let mut line = format!(
            "producerId: {} producerEpoch: {} coordinatorEpoch: {} currentTxnFirstOffset: {txn} lastTimestamp: {}",
            e.producer_id, e.epoch, e.coordinator_epoch, e.timestamp
        );
        if tool.scala() {
            line.push(' ');
        }
        if e.last_offset >= 0 {
            if !tool.scala() {
                line.push(' ');
            }
            line.push_str(&format!(
                "firstSequence: {} lastSequence: {} lastOffset: {} offsetDelta: {} timestamp: {}",
                kaen_log::format::batch::decrement_sequence(e.last_sequence, e.offset_delta),
                e.last_sequence,
                e.last_offset,
                e.offset_delta,
                e.timestamp
            ));
        }
        writeln!(out, "{line}")?;
    }
    Ok(0)
}

/// One field or line of `--layout` on a file beside a log.
#[derive(Serialize, schemars::JsonSchema)]
pub struct FileFieldEntry<'a> {
    #[serde(flatten)]
    file: &'a kaen_log::log::findings::FileFields,
    #[serde(flatten)]
    field: FileField,
}

/// Any file beside a log, field by field (binary files) or line by line
/// (text files): `dump-segment --layout`. `layout` reads the file's
/// fields into the callback it is given and returns the problem that
/// stopped it, if any.
pub fn dump_file_layout(
    (path, bytes): (&Path, &[u8]),
    kind: FileKind,
    layout: impl FnOnce(&mut dyn FnMut(FileField)) -> Option<String>,
    (sink, out): (&mut Entries, &mut Output),
) -> anyhow::Result<u64> {
    let file = path.display().to_string();
    let fields = kaen_log::log::findings::FileFields::of(path);
    let text = sink.is_text();
    if text {
        writeln!(out, "Dumping {}", super::table::escape_cell(&file))?;
        writeln!(out, "{} bytes: {}", bytes.len(), kind.describe())?;
    }
    let mut failed = None;
    let problem = layout(&mut |f| {
        if failed.is_some() {
            return;
        }
        let r = if text {
            crate::report::annotated::write_file_fields(out, "", std::slice::from_ref(&f))
                .map_err(anyhow::Error::from)
        } else {
            sink.entry(
                out,
                "file_field",
                &FileFieldEntry {
                    file: &fields,
                    field: f,
                },
            )
        };
        if let Err(e) = r {
            failed = Some(e);
        }
    });
    if let Some(e) = failed {
        return Err(e);
    }
    match problem {
        Some(p) => {
            sink.problem(out, &fields, &p)?;
            Ok(1)
        }
        None => Ok(0),
    }
}
