//! `--transaction-log-decoder` of Kafka 3.9 and 4.0: the text of
//! `kafka.coordinator.transaction.TransactionLog.formatRecordKeyAndValue`,
//! read with klog's decoders of `__transaction_state`
//! ([`kaen_log::txn::txnlog`]):
//!
//! - key `transaction_metadata::transactionalId=<id>`, or
//!   `unknown::version=<n>` (and no payload) for a key version other than
//!   TransactionLogKey's 0 (`readTxnRecordKey`);
//! - payload `<DELETE>` for a null value, else
//!   `producerId:<id>,producerEpoch:<epoch>,state=<state>,partitions=[<topic-partition>,…],txnLastUpdateTimestamp=<ms>,txnTimeoutMs=<ms>`,
//!   the partitions of a transaction that is not Empty in the order of
//!   Scala's set ([`super::scala_hash_set`]).

use kaen_log::txn::txnlog::{self, status_name, TRANSACTION_LOG_KEY};

use super::parsed::Parsed;
use super::scala_hash_set::topic_partition_order;

/// The key and payload of one record at `offset`.
pub fn parse(offset: i64, key: Option<&[u8]>, value: Option<&[u8]>) -> Parsed {
    let error = |e: &dyn std::fmt::Display| Parsed::error(offset, e);
    let Some(key) = key else {
        return Parsed::missing_key(offset);
    };
    let version = match key.get(..2).and_then(|b| <[u8; 2]>::try_from(b).ok()) {
        Some(b) => i16::from_be_bytes(b),
        None => return error(&"key shorter than its int16 version"),
    };
    if !TRANSACTION_LOG_KEY.knows(version) {
        return Parsed {
            key: Some(format!("unknown::version={version}")),
            payload: None,
        };
    }
    let id = match txnlog::decode_key(key, 0) {
        Ok(id) => id,
        Err(e) => return error(&e),
    };
    let payload = match value.map(|v| txnlog::decode_value(v, 0)) {
        None => "<DELETE>".to_string(),
        Some(Err(e)) => return error(&e),
        Some(Ok(m)) => {
            // `readTxnRecordValue` adds no partition to an Empty transaction.
            let partitions = match &m.partitions {
                Some(list) if m.status != 0 => topic_partition_order(list),
                _ => Vec::new(),
            };
            let partitions: Vec<String> =
                partitions.iter().map(|(t, p)| format!("{t}-{p}")).collect();
            format!(
                "producerId:{},producerEpoch:{},state={},partitions=[{}],txnLastUpdateTimestamp={},txnTimeoutMs={}",
                m.producer_id,
                m.producer_epoch,
                status_name(m.status),
                partitions.join(","),
                m.last_update_timestamp_ms,
                m.timeout_ms
            )
        }
    };
    Parsed {
        key: Some(format!("transaction_metadata::transactionalId={id}")),
        payload: Some(payload),
    }
}
