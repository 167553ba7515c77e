//! `dump-segment` of the files beside a log: `.index`, `.timeindex`,
//! `.txnindex` and producer-state `.snapshot` files.

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use kaen_log::format::index;
use kaen_log::inspect::layout::sidecar::{self, FileField, FileKind};
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
    path: &Path,
    base: i64,
    time: bool,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let bytes = kaen_log::log::files::read_regular(path, i32::MAX as u64)?
        .with_context(|| format!("{}: no such file", path.display()))?;
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
    let used = index::used_entries(&bytes, entry_len);
    let body = bytes.get(..used * entry_len).unwrap_or(&[]);
    let mut shown = 0usize;
    if time {
        for e in index::time_entries(body, base)? {
            shown += 1;
            if text {
                writeln!(out, "timestamp: {} offset: {}", e.timestamp, e.offset)?;
            } else {
                sink.entry(
                    out,
                    "time_index_entry",
                    &TimeEntry {
                        file: &fields,
                        position: e.at,
                        timestamp: e.timestamp,
                        offset: e.offset,
                    },
                )?;
            }
        }
    } else {
        for e in index::offset_entries(body, base)? {
            shown += 1;
            if text {
                writeln!(out, "offset: {} position: {}", e.offset, e.position)?;
            } else {
                sink.entry(
                    out,
                    "offset_index_entry",
                    &OffsetEntry {
                        file: &fields,
                        position: e.at,
                        offset: e.offset,
                        log_position: i64::from(e.position),
                    },
                )?;
            }
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

/// Kafka's index checks, instead of an index's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexCheck {
    /// `--index-sanity-check`: the check a broker runs on an index it
    /// opens ([`index::sanity_check`]).
    Sanity,
    /// `--verify-index-only`: every entry against the log beside the index
    /// ([`kaen_log::inspect::recovery::check_indexes`]).
    Verify,
}

/// The result of one sanity check (JSON and jsonl).
#[derive(Serialize, schemars::JsonSchema)]
pub struct SanityEntry<'a> {
    file: &'a str,
    passed: bool,
    /// Why it failed, in Kafka's words.
    reason: Option<String>,
}

/// `check` of the `.index` or `.timeindex` at `path` (base offset `base`),
/// as `DumpLogSegments.dumpIndex` / `dumpTimeIndex` run it: the sanity check
/// prints "passed sanity check." or why not; verification prints nothing
/// per entry, only the entries that disagree with the log. Returns the
/// problems found.
pub fn check_index(
    path: &Path,
    base: i64,
    time: bool,
    check: IndexCheck,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let file = path.display().to_string();
    if sink.is_text() {
        writeln!(out, "Dumping {file}")?;
    }
    match check {
        IndexCheck::Sanity => {
            let bytes = kaen_log::log::files::read_regular(path, i32::MAX as u64)?
                .with_context(|| format!("{}: no such file", path.display()))?;
            // `dumpIndex` says an offset index of no whole entry is empty
            // before it checks anything; `dumpTimeIndex` checks it.
            if !time && bytes.len() < index::OFFSET_ENTRY_LEN && sink.is_text() {
                writeln!(out, "{file} is empty.")?;
                return Ok(0);
            }
            let verdict = index::sanity_check(&bytes, base, time);
            if sink.is_text() {
                match &verdict {
                    Ok(()) => writeln!(out, "{file} passed sanity check.")?,
                    Err((at, why)) => eprintln!("klog: {file}: byte {at}: {why}"),
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
        IndexCheck::Verify => verify_findings(path, base, sink, out),
    }
}

/// `--verify-index-only` by klog's rules: every entry of the `.index` or
/// `.timeindex` at `path` against the log beside it
/// ([`kaen_log::inspect::recovery::check_indexes`]), each disagreement a
/// finding; the problems found.
pub fn verify_findings(
    path: &Path,
    base: i64,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let file = path.display().to_string();
    let log = path.with_extension("log");
    anyhow::ensure!(
        log.is_file(),
        "{file}: no log {} beside it to verify the index against",
        log.display()
    );
    let seg = kaen_log::log::SegmentFiles {
        base_offset: base,
        index: Some(log.with_extension("index")).filter(|p| p.is_file()),
        timeindex: Some(log.with_extension("timeindex")).filter(|p| p.is_file()),
        log,
    };
    let findings = kaen_log::inspect::recovery::check_indexes(&seg, is_active_segment(path, base))?;
    let mut problems = 0;
    for f in findings.iter().filter(|f| f.file == path) {
        let counts = f.fails(kaen_log::log::findings::Severity::Warning);
        problems += u64::from(counts);
        if sink.is_text() {
            eprintln!("klog: {f}");
        } else {
            sink.entry(out, "finding", f)?;
        }
    }
    Ok(problems)
}

/// Whether the segment at `base` is the last of the folder `path` is in
/// (its active segment, whose index may end in preallocated zeros).
fn is_active_segment(path: &Path, base: i64) -> bool {
    let folder = path.parent().unwrap_or(Path::new("."));
    let Ok(entries) = std::fs::read_dir(folder) else {
        return true;
    };
    !entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.strip_suffix(".log")
            .and_then(|n| n.parse::<i64>().ok())
            .is_some_and(|b| b > base)
    })
}

/// A `.txnindex`: one line per aborted transaction.
pub fn dump_txnindex(path: &Path, sink: &mut Entries, out: &mut Output) -> anyhow::Result<u64> {
    let bytes = kaen_log::log::files::read_regular(path, i32::MAX as u64)?
        .with_context(|| format!("{}: no such file", path.display()))?;
    let file = path.display().to_string();
    let fields = kaen_log::log::findings::FileFields::of(path);
    let text = sink.is_text();
    if text {
        writeln!(out, "Dumping {}", super::table::escape_cell(&file))?;
    }
    let (entries, partial) =
        index::txn_entries(&bytes).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
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
    path: &Path,
    offset: i64,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let bytes = kaen_log::log::files::read_regular(path, i32::MAX as u64)?
        .with_context(|| format!("{}: no such file", path.display()))?;
    let file = path.display().to_string();
    let fields = kaen_log::log::findings::FileFields::of(path);
    let snap = snapshot::decode(&bytes).map_err(|e| anyhow::anyhow!("{file}: {e}"))?;
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
    path: &Path,
    tool: crate::report::kafka_dump::Tool,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let bytes = kaen_log::log::files::read_regular(path, i32::MAX as u64)?
        .with_context(|| format!("{}: no such file", path.display()))?;
    writeln!(
        out,
        "Dumping {}",
        super::table::escape_cell(&path.display().to_string())
    )?;
    let snap = match snapshot::decode(&bytes) {
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
/// (text files): `dump-segment --layout`.
pub fn dump_file_layout(
    path: &Path,
    kind: FileKind,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let max = if kind.has_entries() {
        i32::MAX as u64
    } else {
        kaen_log::log::files::MAX_METADATA_FILE
    };
    let bytes = kaen_log::log::files::read_regular(path, max)?
        .with_context(|| format!("{}: no such file", path.display()))?;
    let file = path.display().to_string();
    let fields = kaen_log::log::findings::FileFields::of(path);
    let text = sink.is_text();
    if text {
        writeln!(out, "Dumping {}", super::table::escape_cell(&file))?;
        writeln!(out, "{} bytes: {}", bytes.len(), kind.describe())?;
    }
    let mut failed = None;
    let problem = sidecar::layout(kind, &bytes, &mut |f| {
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
