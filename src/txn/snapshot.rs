//! Producer-state snapshots: `<offset>.snapshot` files in a partition folder.
//!
//! ```text
//!  0   version      int16   (1)
//!  2   crc          uint32  CRC-32C of bytes 6..end
//!  6   count        int32
//!  10  entries      46 bytes each:
//!        producerId int64, epoch int16, lastSequence int32, lastOffset int64,
//!        offsetDelta int32, timestamp int64, coordinatorEpoch int32,
//!        currentTxnFirstOffset int64 (-1: no open transaction)
//! ```
//!
//! The file name's offset is where the state is valid (exclusive end). The
//! broker writes snapshots in place, so a torn one fails its CRC; it then
//! falls back to an older snapshot or rebuilds the state from the log.

use std::path::{Path, PathBuf};

use crate::error::{DecodeError, DecodeErrorKind, Error, Result};
use crate::format::crc::crc32c;
use crate::format::cursor::Cursor;
use crate::format::trace::{NoTrace, Trace, Traced};
use crate::log::findings::{Finding, Kind};
use crate::log::{parse_segment_name, Partition};
use crate::txn::{analyze, TxnOptions};

/// One producer in a snapshot.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SnapshotEntry {
    pub producer_id: i64,
    pub epoch: i16,
    pub last_sequence: i32,
    pub last_offset: i64,
    pub offset_delta: i32,
    pub timestamp: i64,
    pub coordinator_epoch: i32,
    pub current_txn_first_offset: i64,
}

/// A decoded snapshot.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Snapshot {
    pub version: i16,
    pub crc: u32,
    pub computed_crc: u32,
    pub entries: Vec<SnapshotEntry>,
}

/// Bytes per entry.
pub const ENTRY_LEN: usize = 46;

/// Decode a snapshot file's bytes.
pub fn decode(bytes: &[u8]) -> Result<Snapshot, DecodeError> {
    decode_traced(bytes, &mut NoTrace)
}

/// Decode a snapshot as [`decode`] does, handing each field to `trace` as
/// it is read (`version`, `crc`, `count`, then each entry's fields from
/// `producerId` to `currentTxnFirstOffset`).
pub fn decode_traced<'a, T: Trace<'a>>(
    bytes: &'a [u8],
    trace: &mut T,
) -> Result<Snapshot, DecodeError> {
    let mut c = Cursor::new(bytes, 0);
    let mut c = Traced::new(&mut c, trace);
    let version = c.i16("version")?;
    if version != 1 {
        return Err(DecodeError::new(
            0,
            DecodeErrorKind::UnknownVersion {
                schema: "ProducerSnapshot",
                version,
            },
        ));
    }
    let crc = c.u32("crc")?;
    let computed_crc = crc32c(bytes.get(6..).unwrap_or(&[]));
    let count_at = c.c.position();
    let count = c.i32("count")?;
    if count < 0 || count as usize > c.c.remaining() / ENTRY_LEN {
        return Err(DecodeError::new(
            count_at,
            DecodeErrorKind::ValueOutOfRange {
                field: "entry count",
                value: i64::from(count),
            },
        ));
    }
    let mut entries = Vec::with_capacity(count as usize);
    for _ in 0..count {
        entries.push(SnapshotEntry {
            producer_id: c.i64("producerId")?,
            epoch: c.i16("epoch")?,
            last_sequence: c.i32("lastSequence")?,
            last_offset: c.i64("lastOffset")?,
            offset_delta: c.i32("offsetDelta")?,
            timestamp: c.i64("timestamp")?,
            coordinator_epoch: c.i32("coordinatorEpoch")?,
            current_txn_first_offset: c.i64("currentTxnFirstOffset")?,
        });
    }
    if !c.c.is_empty() {
        return Err(c.c.error(DecodeErrorKind::TrailingBytes {
            field: "snapshot entries",
            remaining: c.c.remaining() as u64,
        }));
    }
    Ok(Snapshot {
        version,
        crc,
        computed_crc,
        entries,
    })
}

/// Encode a snapshot (for tests and fixtures).
pub fn encode(entries: &[SnapshotEntry]) -> Vec<u8> {
    let mut body = Vec::with_capacity(4 + entries.len() * ENTRY_LEN);
    body.extend_from_slice(&(entries.len() as i32).to_be_bytes());
    for e in entries {
        body.extend_from_slice(&e.producer_id.to_be_bytes());
        body.extend_from_slice(&e.epoch.to_be_bytes());
        body.extend_from_slice(&e.last_sequence.to_be_bytes());
        body.extend_from_slice(&e.last_offset.to_be_bytes());
        body.extend_from_slice(&e.offset_delta.to_be_bytes());
        body.extend_from_slice(&e.timestamp.to_be_bytes());
        body.extend_from_slice(&e.coordinator_epoch.to_be_bytes());
        body.extend_from_slice(&e.current_txn_first_offset.to_be_bytes());
    }
    let mut out = 1i16.to_be_bytes().to_vec();
    out.extend_from_slice(&crc32c(&body).to_be_bytes());
    out.extend_from_slice(&body);
    out
}

/// The `.snapshot` files of a partition folder, sorted by offset.
pub fn list(dir: &Path) -> Result<Vec<(i64, PathBuf)>> {
    let mut out = Vec::new();
    for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, "list directory", e))? {
        let entry = entry.map_err(|e| Error::io(dir, "list directory", e))?;
        if let Some((offset, "snapshot")) = entry.file_name().to_str().and_then(parse_segment_name)
        {
            out.push((offset, entry.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// Compare a snapshot valid up to `offset` with the producer state the log
/// gives up to that offset: every producer's epoch, last sequence, last
/// offset and open transaction.
/// Each disagreement is a `snapshot_mismatch` finding about `path`.
pub fn check(p: &Partition, path: &Path, offset: i64, snap: &Snapshot) -> Result<Vec<Finding>> {
    let mismatch = |producer_id: i64, detail: String| {
        let f = Finding::new(Kind::SnapshotMismatch, path, 0, Some(offset), detail);
        if producer_id >= 0 {
            f.with_producer(producer_id)
        } else {
            f
        }
    };
    let state = analyze(
        p,
        &TxnOptions {
            end_offset: Some(offset),
            ..TxnOptions::default()
        },
    )?;
    let mut out = Vec::new();
    if snap.crc != snap.computed_crc {
        out.push(mismatch(
            -1,
            format!(
                "CRC mismatch: stored 0x{:08X}, computed 0x{:08X}",
                snap.crc, snap.computed_crc
            ),
        ));
        return Ok(out);
    }
    // A producer in the snapshot but not in the log had its batches deleted
    // by retention, and one in the log but not in the snapshot expired
    // (`producer.id.expiration.ms`, `ProducerStateManager.removeExpiredProducers`):
    // neither is a mismatch. Producers in both must agree.
    for e in &snap.entries {
        let Some(s) = state.producers.get(&e.producer_id) else {
            continue;
        };
        let open = s.open.map_or(-1, |o| o.first_offset);
        // The snapshot holds `ProducerStateEntry`: the epoch, the last
        // sequence and last *data* offset at that epoch (a marker moves
        // neither; a marker at a new epoch clears both), and the open
        // transaction's first offset.
        for (field, snap_v, log_v) in [
            ("epoch", i64::from(e.epoch), i64::from(s.epoch)),
            (
                "last sequence",
                i64::from(e.last_sequence),
                i64::from(s.last_sequence),
            ),
            ("last offset", e.last_offset, s.last_data_offset),
            (
                "open transaction first offset",
                e.current_txn_first_offset,
                open,
            ),
        ] {
            if snap_v != log_v {
                out.push(mismatch(
                    e.producer_id,
                    format!("{field}: snapshot {snap_v}, log {log_v}"),
                ));
            }
        }
    }
    Ok(out)
}
