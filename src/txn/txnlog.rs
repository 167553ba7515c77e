//! `__transaction_state`: the transaction coordinator's log.
//!
//! Key: `int16 version` (0), then the transactionalId string. Value: `int16
//! version`, then a TransactionLogValue, or null (the transactional id expired).
//! v0 (non-flexible): producerId int64, producerEpoch int16,
//! transactionTimeoutMs int32, transactionStatus int8, transactionPartitions
//! [topic string, partitionIds [int32]]? (null when Empty),
//! transactionLastUpdateTimestampMs int64, transactionStartTimestampMs int64.
//! v1 is the flexible form (compact lengths, tagged fields, skipped here).

use std::collections::BTreeMap;

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::format::cursor::Cursor;
use crate::format::message::{read_version, MessageReader};
use crate::format::{DecodeLimits, Entry};
use crate::log::Partition;
use crate::log::Policy;

/// The name of the transaction coordinator's topic.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";

/// A decoded TransactionLogValue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionMetadata {
    pub version: i16,
    pub producer_id: i64,
    pub producer_epoch: i16,
    pub timeout_ms: i32,
    pub status: i8,
    /// (topic, partitions); None when the value holds null (state Empty).
    pub partitions: Option<Vec<(String, Vec<i32>)>>,
    pub last_update_timestamp_ms: i64,
    pub start_timestamp_ms: i64,
}

impl CoordinatorView {
    /// Whether the coordinator has the transaction of `producer_id` at
    /// `producer_epoch` ongoing with `topic`-`partition` among its partitions:
    /// then an old open transaction there is not hanging, only long
    /// (`TransactionsCommand` find-hanging drops such candidates).
    pub fn has_ongoing(
        &self,
        producer_id: i64,
        producer_epoch: i16,
        topic: &str,
        partition: i32,
    ) -> bool {
        self.transactions.values().any(|m| {
            m.producer_id == producer_id
                && m.producer_epoch == producer_epoch
                && m.status == 1
                && m.partitions.as_ref().is_some_and(|ps| {
                    ps.iter()
                        .any(|(t, ids)| t == topic && ids.contains(&partition))
                })
        })
    }
}

/// Kafka's name for a TransactionStatus id.
pub fn status_name(status: i8) -> &'static str {
    match status {
        0 => "Empty",
        1 => "Ongoing",
        2 => "PrepareCommit",
        3 => "PrepareAbort",
        4 => "CompleteCommit",
        5 => "CompleteAbort",
        6 => "Dead",
        7 => "PrepareEpochFence",
        _ => "Unknown",
    }
}

/// The TransactionLogKey versions read, each with the Kafka release that
/// introduced it (listed by `klog generate`).
pub const KEY_SINCE: &[crate::format::schema::Release] = &[crate::format::schema::Release::R3_9];
/// The TransactionLogValue versions read, each with the Kafka release that
/// introduced it.
pub const VALUE_SINCE: &[crate::format::schema::Release] =
    &[crate::format::schema::Release::R3_9; 2];

/// Decode a key: the transactional id.
pub fn decode_key(key: &[u8], at: u64) -> Result<String, DecodeError> {
    let mut c = Cursor::new(key, at);
    let version = c.i16()?; // version: int16
    if !(0..=crate::format::schema::last_version(KEY_SINCE)).contains(&version) {
        return Err(DecodeError::new(
            at,
            DecodeErrorKind::UnknownVersion {
                schema: "TransactionLogKey",
                version,
            },
        ));
    }
    let mut m = MessageReader::new(&mut c, false);
    let id = m.string("transactionalId")?.to_string(); // transactionalId: string
    m.finish("TransactionLogKey")?;
    Ok(id)
}

/// Encode a key (version 0): the transactional id.
pub fn encode_key(transactional_id: &str) -> Vec<u8> {
    let mut out = 0i16.to_be_bytes().to_vec();
    crate::format::message::put_string(&mut out, transactional_id);
    out
}

/// Decode a TransactionLogValue (v0 or v1).
pub fn decode_value(value: &[u8], at: u64) -> Result<TransactionMetadata, DecodeError> {
    let mut c = Cursor::new(value, at);
    let version = read_version(
        &mut c,
        "TransactionLogValue",
        0..=crate::format::schema::last_version(VALUE_SINCE),
    )?; // version: int16
    let mut m = MessageReader::new(&mut c, version >= 1);
    let producer_id = m.c.i64()?; // producerId: int64
    let producer_epoch = m.c.i16()?; // producerEpoch: int16
    let timeout_ms = m.c.i32()?; // transactionTimeoutMs: int32
    let status = m.c.i8()?; // transactionStatus: int8
    let partitions = match m.array_len("transactionPartitions")? {
        None => None,
        Some(n) => {
            let mut v = Vec::new();
            for _ in 0..n {
                let topic = m.string("topic")?.to_string();
                let count = m.array_len("partitionIds")?.unwrap_or(0);
                let mut ids = Vec::new();
                for _ in 0..count {
                    ids.push(m.c.i32()?);
                }
                m.tagged_fields()?;
                v.push((topic, ids));
            }
            Some(v)
        }
    };
    let last_update_timestamp_ms = m.c.i64()?; // transactionLastUpdateTimestampMs: int64
    let start_timestamp_ms = m.c.i64()?; // transactionStartTimestampMs: int64
    m.tagged_fields()?;
    m.finish("TransactionLogValue")?;
    Ok(TransactionMetadata {
        version,
        producer_id,
        producer_epoch,
        timeout_ms,
        status,
        partitions,
        last_update_timestamp_ms,
        start_timestamp_ms,
    })
}

/// The coordinator's view: the latest metadata per transactional id, and records that did not decode.
#[derive(Debug, Clone, Default)]
pub struct CoordinatorView {
    pub transactions: BTreeMap<String, TransactionMetadata>,
    pub bad: Vec<(i64, DecodeError)>,
}

/// Replay `__transaction_state` partitions: last value wins, null deletes.
pub fn replay(partitions: &[&Partition], limits: DecodeLimits) -> Result<CoordinatorView> {
    let mut view = CoordinatorView::default();
    let mut scratch = Vec::new();
    for p in partitions {
        let mut walk = p.walk(Policy::VALID_ENTRIES);
        {
            while let Some(w) = walk.next_entry()? {
                let Entry::V2(b) = w.entry else { continue };
                if b.header.is_control() {
                    continue;
                }
                let Ok(records) = b.records(&mut scratch, limits) else {
                    continue;
                };
                for r in records.flatten() {
                    let Some(key) = r.key else { continue };
                    let id = match decode_key(key, r.position) {
                        Ok(id) => id,
                        Err(e) => {
                            view.bad.push((r.offset, e));
                            continue;
                        }
                    };
                    match r.value {
                        None => {
                            view.transactions.remove(&id);
                        }
                        Some(v) => match decode_value(v, r.position) {
                            Ok(meta) => {
                                view.transactions.insert(id, meta);
                            }
                            Err(e) => view.bad.push((r.offset, e)),
                        },
                    }
                }
            }
        }
        // A batch that fails its CRC is not read: say which.
        for d in walk.take_damage() {
            view.bad.push((d.base_offset.unwrap_or(-1), d.error));
        }
    }
    Ok(view)
}

/// Encode a v0 value (for fixtures and tests).
pub fn encode_value_v0(m: &TransactionMetadata) -> Vec<u8> {
    use crate::format::message::put_string;
    let mut out = Vec::new();
    out.extend_from_slice(&0i16.to_be_bytes());
    out.extend_from_slice(&m.producer_id.to_be_bytes());
    out.extend_from_slice(&m.producer_epoch.to_be_bytes());
    out.extend_from_slice(&m.timeout_ms.to_be_bytes());
    out.push(m.status as u8);
    match &m.partitions {
        None => out.extend_from_slice(&(-1i32).to_be_bytes()),
        Some(ps) => {
            out.extend_from_slice(&(ps.len() as i32).to_be_bytes());
            for (topic, ids) in ps {
                put_string(&mut out, topic);
                out.extend_from_slice(&(ids.len() as i32).to_be_bytes());
                for id in ids {
                    out.extend_from_slice(&id.to_be_bytes());
                }
            }
        }
    }
    out.extend_from_slice(&m.last_update_timestamp_ms.to_be_bytes());
    out.extend_from_slice(&m.start_timestamp_ms.to_be_bytes());
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn value_round_trip_and_key() {
        let m = TransactionMetadata {
            version: 0,
            producer_id: 9000,
            producer_epoch: 2,
            timeout_ms: 60000,
            status: 1,
            partitions: Some(vec![("ledger".into(), vec![0, 1])]),
            last_update_timestamp_ms: 5,
            start_timestamp_ms: 4,
        };
        assert_eq!(decode_value(&encode_value_v0(&m), 0).unwrap(), m);
        assert_eq!(status_name(1), "Ongoing");
        assert_eq!(decode_key(&[0, 0, 0, 2, b't', b'x'], 0).unwrap(), "tx");
        assert_eq!(encode_key("tx"), [0, 0, 0, 2, b't', b'x']);
        assert!(decode_key(&[0, 1, 0, 0], 0).is_err());
    }
}
