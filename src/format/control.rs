//! Control records: the transaction COMMIT/ABORT markers (and the KRaft
//! types, recognised by name).
//!
//! Key (4 bytes, non-flexible): `version int16` (0) + `type int16`.
//! COMMIT/ABORT value: `version int16` (0) + `coordinatorEpoch int32`.
//! Kafka parses higher versions as version 0 and requires at least those
//! bytes; a negative key version (`ControlRecordType.parseTypeId`) or
//! marker value version (`EndTransactionMarker.deserializeValue`) is
//! refused as "may indicate data corruption". The broker meets the value
//! when it loads producer state (`ProducerAppendInfo.append` deserializes
//! every marker; `LogSegment.recover` cuts the log at the
//! `InvalidRecordException`); the group coordinator's loader reads only the
//! key.

use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};
use crate::format::trace::{NoTrace, Trace, Traced};

/// The type in a control record's key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ControlType {
    Abort,
    Commit,
    LeaderChange,
    SnapshotHeader,
    SnapshotFooter,
    KraftVersion,
    KraftVoters,
    Unknown(i16),
}

impl ControlType {
    /// The type for the id in the key.
    pub fn from_id(id: i16) -> Self {
        match id {
            0 => ControlType::Abort,
            1 => ControlType::Commit,
            2 => ControlType::LeaderChange,
            3 => ControlType::SnapshotHeader,
            4 => ControlType::SnapshotFooter,
            5 => ControlType::KraftVersion,
            6 => ControlType::KraftVoters,
            other => ControlType::Unknown(other),
        }
    }
    /// The id stored in the key.
    pub fn id(self) -> i16 {
        match self {
            ControlType::Abort => 0,
            ControlType::Commit => 1,
            ControlType::LeaderChange => 2,
            ControlType::SnapshotHeader => 3,
            ControlType::SnapshotFooter => 4,
            ControlType::KraftVersion => 5,
            ControlType::KraftVoters => 6,
            ControlType::Unknown(id) => id,
        }
    }
    /// Kafka's name (`ControlRecordType`).
    pub fn name(self) -> &'static str {
        match self {
            ControlType::Abort => "ABORT",
            ControlType::Commit => "COMMIT",
            ControlType::LeaderChange => "LEADER_CHANGE",
            ControlType::SnapshotHeader => "SNAPSHOT_HEADER",
            ControlType::SnapshotFooter => "SNAPSHOT_FOOTER",
            ControlType::KraftVersion => "KRAFT_VERSION",
            ControlType::KraftVoters => "KRAFT_VOTERS",
            ControlType::Unknown(_) => "UNKNOWN",
        }
    }
}

/// A decoded control record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ControlRecord {
    /// Key version.
    pub version: i16,
    /// Key type.
    pub kind: ControlType,
    /// For COMMIT/ABORT: the EndTransactionMarker's coordinatorEpoch.
    pub coordinator_epoch: Option<i32>,
}

/// Decode a control record's key and value; `key_at` is the position used
/// in errors.
pub fn decode(
    key: Option<&[u8]>,
    value: Option<&[u8]>,
    key_at: u64,
) -> Result<ControlRecord, DecodeError> {
    let key = key.ok_or_else(|| bad(key_at, "null key"))?;
    let (version, kind) = decode_key_traced(key, key_at, &mut NoTrace)?;
    let coordinator_epoch = match kind {
        ControlType::Abort | ControlType::Commit => {
            let value = value.ok_or_else(|| bad(key_at, "null transaction marker value"))?;
            Some(decode_marker_traced(value, key_at, key_at, &mut NoTrace)?)
        }
        _ => None,
    };
    Ok(ControlRecord {
        version,
        kind,
        coordinator_epoch,
    })
}

fn bad(at: u64, reason: &'static str) -> DecodeError {
    DecodeError::new(at, DecodeErrorKind::BadControlRecord { reason })
}

/// A control record's key at `at` (`ControlRecordType`: int16 version,
/// int16 type), each field handed to `trace`: its version and type.
pub fn decode_key_traced<'a, T: Trace<'a>>(
    key: &'a [u8],
    at: u64,
    trace: &mut T,
) -> Result<(i16, ControlType), DecodeError> {
    let mut c = Cursor::new(key, at);
    let mut c = Traced::new(&mut c, trace);
    let short = |_| bad(at, "key shorter than 4 bytes");
    let version = c.i16("version").map_err(short)?; // version: int16
    let type_id = c.i16("type").map_err(short)?; // type: int16
    if version < 0 {
        return Err(bad(at, "negative key version"));
    }
    Ok((version, ControlType::from_id(type_id)))
}

/// A COMMIT or ABORT marker's value at `at` (`EndTransactionMarker`: int16
/// version, int32 coordinatorEpoch), each field handed to `trace`: its
/// coordinatorEpoch. Errors are positioned at `error_at` (the key's).
pub fn decode_marker_traced<'a, T: Trace<'a>>(
    value: &'a [u8],
    at: u64,
    error_at: u64,
    trace: &mut T,
) -> Result<i32, DecodeError> {
    let mut c = Cursor::new(value, at);
    let mut c = Traced::new(&mut c, trace);
    let short = |_| bad(error_at, "marker value shorter than 6 bytes");
    let version = c.i16("version").map_err(short)?; // version: int16
    let epoch = c.i32("coordinatorEpoch").map_err(short)?; // coordinatorEpoch: int32
    if version < 0 {
        return Err(bad(error_at, "negative transaction marker value version"));
    }
    Ok(epoch)
}

/// Key and value bytes of a COMMIT or ABORT marker.
pub fn encode_marker(commit: bool, coordinator_epoch: i32) -> (Vec<u8>, Vec<u8>) {
    let mut key = Vec::with_capacity(4);
    key.extend_from_slice(&0i16.to_be_bytes());
    key.extend_from_slice(
        &(if commit {
            ControlType::Commit
        } else {
            ControlType::Abort
        })
        .id()
        .to_be_bytes(),
    );
    let mut value = Vec::with_capacity(6);
    value.extend_from_slice(&0i16.to_be_bytes());
    value.extend_from_slice(&coordinator_epoch.to_be_bytes());
    (key, value)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marker_round_trip_and_short_keys() {
        let (k, v) = encode_marker(true, 7);
        assert_eq!(k, [0, 0, 0, 1]);
        assert_eq!(v, [0, 0, 0, 0, 0, 7]);
        let c = decode(Some(&k), Some(&v), 0).unwrap();
        assert_eq!(c.kind, ControlType::Commit);
        assert_eq!(c.coordinator_epoch, Some(7));
        assert!(decode(Some(&[0, 0, 0]), Some(&v), 5).is_err());
        assert!(decode(Some(&k), Some(&[0, 0, 0]), 5).is_err());
        assert_eq!(
            decode(Some(&[0, 0, 0, 9]), None, 0).unwrap().kind,
            ControlType::Unknown(9)
        );
    }

    #[test]
    fn negative_versions_are_refused_higher_ones_read_as_zero() {
        // EndTransactionMarker: version int16, coordinatorEpoch int32.
        let commit_key = [0, 0, 0, 1];
        let e = decode(Some(&commit_key), Some(&[0xff, 0xff, 0, 0, 0, 3]), 0).unwrap_err();
        assert!(
            e.to_string()
                .contains("negative transaction marker value version"),
            "{e}"
        );
        let c = decode(Some(&commit_key), Some(&[0, 5, 0, 0, 0, 3, 9]), 0).unwrap();
        assert_eq!(c.coordinator_epoch, Some(3));
        // ControlRecordType key: version int16, type int16.
        assert!(decode(Some(&[0x80, 0, 0, 1]), Some(&[0, 0, 0, 0, 0, 3]), 0).is_err());
    }
}
