//! `__transaction_state`: the transaction coordinator's log.
//!
//! A record (`TransactionLog.keyToBytes`, `valueToBytes`; read back by
//! `TransactionLog.read`): the key is `int16` record type 0
//! (`CoordinatorRecordType.TRANSACTION_LOG`) then a TransactionLogKey (the
//! transactionalId); the value is `int16 version` then a
//! TransactionLogValue at that version, or null (the transactional id
//! expired). The schemas are the tables [`TRANSACTION_LOG_KEY`] and
//! [`TRANSACTION_LOG_VALUE`], read by the one message interpreter
//! ([`crate::format::schema`]), so every field is decoded by its name:
//!
//! - v0 (non-flexible): producerId, producerEpoch, transactionTimeoutMs,
//!   transactionStatus, transactionPartitions [topic, partitionIds] (null
//!   when Empty), transactionLastUpdateTimestampMs,
//!   transactionStartTimestampMs;
//! - v1 (flexible, KIP-915) adds tagged fields: PreviousProducerId (tag 0),
//!   NextProducerId (1), ClientTransactionVersion (2) — Kafka 4.0, KIP-890 —
//!   and NextProducerEpoch (3, Kafka 4.1). A writer leaves out a tagged
//!   field at its default. A cluster at `transaction.version` 1 or more
//!   writes v1 (`TransactionVersion.transactionLogValueVersion`);
//!   ClientTransactionVersion is 2 for a client using transaction version 2
//!   (an epoch bump at every commit and abort), else 0.
//!
//! Keys and values are read as the generated readers read them
//! ([`Schema::decode_prefix_as_kafka`]): `TransactionLog.read` calls them,
//! and the coordinator applies what they read, so the replay applies a
//! record read leniently (a transactional id's malformed UTF-8 as U+FFFD,
//! say) with a warning.
//!
//! TransactionLogKey has version 0 and TransactionLogValue versions 0 and
//! 1 in every Kafka release from 3.9.2 to 4.4.0 (the schema files and the
//! generated classes' `HIGHEST_SUPPORTED_VERSION`). A record of another
//! version is not read: Kafka's loader (`TransactionStateManager.
//! loadTransactionMetadata`, 4.3 and 4.4) logs "Unknown message key/value
//! with version N ... Ignoring it" and skips it; klog reports it as an
//! error finding and marks the coordinator's view incomplete.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::format::cursor::Cursor;
use crate::format::schema::types::*;
use crate::format::schema::{f, nested, Field, Fields, Leniency, Release, Schema, Ty, OPEN};
use crate::format::{DecodeLimits, Entry};
use crate::log::findings::{Finding, Kind, Severity};
use crate::log::Partition;
use crate::log::Policy;

/// The name of the transaction coordinator's topic.
pub const TRANSACTION_STATE_TOPIC: &str = "__transaction_state";

/// TransactionLogKey.json: validVersions "0", flexibleVersions "none"
/// (3.9.2 to 4.4.0). The int16 before it is the record type, 0.
pub static TRANSACTION_LOG_KEY: Schema = Schema {
    name: "TransactionLogKey",
    versions: (0, 0),
    since: &[Release::R3_9],
    flexible_from: None,
    fields: &[f!("TransactionalId", S)],
};

/// TransactionLogValue.json: validVersions "0-1", flexibleVersions "1+"
/// (3.9.2 to 4.4.0; tags 0 to 2 from 4.0, tag 3 from 4.1).
pub static TRANSACTION_LOG_VALUE: Schema = Schema {
    name: "TransactionLogValue",
    versions: (0, 1),
    since: &[Release::R3_9, Release::R3_9],
    flexible_from: Some(1),
    fields: &[
        f!("ProducerId", I64),
        f!("PreviousProducerId", I64, versions: (1, OPEN), tag: Some((0, 1)), since: Release::R4_0, default: "-1"),
        f!("NextProducerId", I64, versions: (1, OPEN), tag: Some((1, 1)), since: Release::R4_0, default: "-1"),
        f!("ProducerEpoch", I16),
        f!("NextProducerEpoch", I16, versions: (1, OPEN), tag: Some((3, 1)), since: Release::R4_1, default: "-1"),
        f!("TransactionTimeoutMs", I32),
        f!("TransactionStatus", I8),
        f!(
            "TransactionPartitions",
            Ty::Array(&Ty::Struct(&[f!("Topic", S), f!("PartitionIds", I32S)])),
            nullable_from: Some(0),
            nested: nested("PartitionsSchema", 0, 1)
        ),
        f!("TransactionLastUpdateTimestampMs", I64),
        f!("TransactionStartTimestampMs", I64),
        f!("ClientTransactionVersion", I16, versions: (1, OPEN), tag: Some((2, 1)), since: Release::R4_0, default: "0"),
    ],
};

/// The Kafka release that introduced each TransactionLogValue version
/// (index = version): v0 with transactions (KIP-98); v1, flexible, readable
/// from 3.4.1 and 3.5.0 (KIP-915: 3.4.0's schema file still says "0") and
/// written from 4.0 on a cluster at `transaction.version` 1 or more.
pub static VALUE_VERSION_RELEASES: [&str; 2] = ["0.11.0", "3.4.1"];

/// The Kafka release that introduced each TransactionLogKey version.
pub static KEY_VERSION_RELEASES: [&str; 1] = ["0.11.0"];

/// The default of a TransactionLogValue field (its table row's `default`:
/// -1 for the producer ids and NextProducerEpoch, 0 for
/// ClientTransactionVersion), what a record that leaves the tagged field
/// out holds.
fn default_of(name: &str) -> i64 {
    value_field(name)
        .and_then(|f| f.default_value().as_i64())
        .unwrap_or(0)
}

fn value_field(name: &str) -> Option<&'static Field> {
    TRANSACTION_LOG_VALUE.fields.iter().find(|f| f.name == name)
}

/// A decoded TransactionLogValue.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TransactionMetadata {
    pub version: i16,
    pub producer_id: i64,
    /// PreviousProducerId (v1, tag 0): the producer id of the last committed
    /// transaction, when an epoch overflow gave the transactional id a new
    /// one; -1 otherwise.
    pub previous_producer_id: i64,
    /// NextProducerId (v1, tag 1): the producer id sent to the producer
    /// after an epoch overflow; -1 otherwise.
    pub next_producer_id: i64,
    pub producer_epoch: i16,
    /// NextProducerEpoch (v1, tag 3, Kafka 4.1); -1 when absent.
    pub next_producer_epoch: i16,
    pub timeout_ms: i32,
    pub status: i8,
    /// (topic, partitions); None when the value holds null (state Empty).
    pub partitions: Option<Vec<(String, Vec<i32>)>>,
    pub last_update_timestamp_ms: i64,
    pub start_timestamp_ms: i64,
    /// ClientTransactionVersion (v1, tag 2): 2 when the client runs
    /// transaction version 2 (KIP-890: the epoch is bumped at every commit
    /// and abort, the markers carry the bumped epoch), 0 for the classic
    /// protocol (and for a v0 record).
    pub client_transaction_version: i16,
}

impl TransactionMetadata {
    /// A record of the classic protocol at `version` with the tagged
    /// fields at their defaults.
    pub fn new(
        version: i16,
        producer_id: i64,
        producer_epoch: i16,
        timeout_ms: i32,
        status: i8,
    ) -> Self {
        TransactionMetadata {
            version,
            producer_id,
            previous_producer_id: default_of("PreviousProducerId"),
            next_producer_id: default_of("NextProducerId"),
            producer_epoch,
            next_producer_epoch: default_of("NextProducerEpoch") as i16,
            timeout_ms,
            status,
            partitions: None,
            last_update_timestamp_ms: -1,
            start_timestamp_ms: -1,
            client_transaction_version: default_of("ClientTransactionVersion") as i16,
        }
    }

    /// The partitions as (topic, partition) pairs.
    pub fn topic_partitions(&self) -> impl Iterator<Item = (&str, i32)> {
        self.partitions
            .iter()
            .flatten()
            .flat_map(|(t, ids)| ids.iter().map(move |p| (t.as_str(), *p)))
    }
}

/// Kafka's name for a TransactionStatus id (`TransactionState.fromId`).
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

/// What the transaction coordinator does with a transactional id on its
/// own once it has loaded `__transaction_state` (after a restart, or a new
/// coordinator's election):
/// - `PrepareCommit`/`PrepareAbort`: it completes the transaction at once,
///   sending the COMMIT or ABORT markers that may be missing
///   (`TransactionStateManager.loadTransactionsForTxnTopicPartition`);
/// - `Ongoing`: once `transactionStartTimestamp + timeout` is past, its
///   periodic check (`transaction.abort.timed.out.transaction.cleanup.interval.ms`,
///   10 s by default) aborts it (`TransactionStateManager.timedOutTransactions`,
///   `TransactionCoordinator.abortTimedOutTransactions`; Kafka 4.3 exempts
///   two-phase-commit transactions, KIP-939): the producer is fenced and an
///   ABORT marker is written to each of its partitions;
/// - anything else: nothing.
///
/// Each marker lands at its partition's log end when the leader appends it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum CoordinatorEnd {
    /// Completed when the coordinator loads: markers of this result.
    CompletesOnLoad { commit: bool },
    /// Aborted by the timeout check from this time (epoch ms) on.
    AbortsAt { ms: i64 },
}

impl TransactionMetadata {
    /// How the coordinator ends this transaction on its own (see
    /// [`CoordinatorEnd`]); `None` when it does nothing.
    pub fn coordinator_end(&self) -> Option<CoordinatorEnd> {
        match self.status {
            1 => Some(CoordinatorEnd::AbortsAt {
                ms: self
                    .start_timestamp_ms
                    .saturating_add(i64::from(self.timeout_ms)),
            }),
            2 => Some(CoordinatorEnd::CompletesOnLoad { commit: true }),
            3 => Some(CoordinatorEnd::CompletesOnLoad { commit: false }),
            _ => None,
        }
    }
}

/// The status id of `Dead`: a transactional id being expired, which
/// `TransactionStateManager.listTransactionStates` never lists.
pub const STATUS_DEAD: i8 = 6;

/// The version span klog reads, for messages: `0 to 1`.
fn known(schema: &Schema) -> String {
    match schema.versions {
        (a, b) if a == b => format!("version {a}"),
        (a, b) => format!("versions {a} to {b}"),
    }
}

/// Decode a key: the transactional id. The int16 before the struct is the
/// record type (`TransactionLog.read`: anything but 0 is an unknown key
/// version). Bytes after the struct are ignored, as Kafka ignores them
/// (see `decode_versioned`).
pub fn decode_key(key: &[u8], at: u64) -> Result<String, DecodeError> {
    decode_key_rest(key, at).map(|r| r.value)
}

/// A key or value as `TransactionLog.read` reads it, with what Kafka's
/// reader ignores or takes leniently.
#[derive(Debug, Clone, PartialEq)]
pub struct Read<T> {
    pub value: T,
    /// The bytes after its last field.
    pub trailing: u64,
    /// Where it was read as Kafka's generated `read` reads it and a strict
    /// reading refuses it ([`Leniency`]).
    pub lenient: Vec<Leniency>,
}

/// [`decode_key`], with the bytes after the key's last field and the
/// leniencies.
pub fn decode_key_rest(key: &[u8], at: u64) -> Result<Read<String>, DecodeError> {
    let v = decode_versioned(&TRANSACTION_LOG_KEY, key, at)?;
    Ok(Read {
        value: Fields(&v.data).string("transactionalId"),
        trailing: v.trailing,
        lenient: v.lenient,
    })
}

/// A key or value read by [`decode_versioned`].
#[derive(Debug, Clone, PartialEq)]
pub struct Versioned {
    pub version: i16,
    /// The message's fields.
    pub data: Value,
    /// The bytes after its last field.
    pub trailing: u64,
    /// See [`Read::lenient`].
    pub lenient: Vec<Leniency>,
}

/// `bytes` as an int16 version then `schema` at that version, read as
/// Kafka's generated `read` reads it ([`Schema::decode_prefix_as_kafka`]):
/// the version, the message, the number of bytes after its last field and
/// the leniencies. A version outside the schema's is an unknown version at
/// `at`, the int16 that gives it.
///
/// Bytes after the last field are not an error: Kafka 4.3's
/// `TransactionLog.read` builds the key and the value with the generated
/// `TransactionLogKey(readable, version)` and `TransactionLogValue(readable,
/// version)`, whose `read` reads the fields (from v1 the tagged fields too)
/// and returns without looking at `remaining()`, and the coordinator
/// applies the record (`TransactionStateManager.loadTransactionMetadata`).
pub fn decode_versioned(
    schema: &'static Schema,
    bytes: &[u8],
    at: u64,
) -> Result<Versioned, DecodeError> {
    let mut c = Cursor::new(bytes, at);
    let version = c.i16()?; // version (the key's record type): int16
    if !schema.knows(version) {
        return Err(DecodeError::new(
            at,
            DecodeErrorKind::UnknownVersion {
                schema: schema.name,
                version,
            },
        ));
    }
    let read = schema.decode_prefix_as_kafka(&mut c, version)?;
    Ok(Versioned {
        version,
        data: read.data,
        trailing: c.remaining() as u64,
        lenient: read.lenient,
    })
}

/// TransactionLogKey.json's field.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TransactionLogKeyFields<'a> {
    transactional_id: &'a str,
}

/// TransactionLogValue.json's fields, by their JSON names.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TransactionLogValueFields<'a> {
    producer_id: i64,
    previous_producer_id: i64,
    next_producer_id: i64,
    producer_epoch: i16,
    next_producer_epoch: i16,
    transaction_timeout_ms: i32,
    transaction_status: i8,
    transaction_partitions: Option<Vec<TopicPartitionIds<'a>>>,
    transaction_last_update_timestamp_ms: i64,
    transaction_start_timestamp_ms: i64,
    client_transaction_version: i16,
}

/// A TransactionLogValue's `[]PartitionsSchema` element.
#[derive(serde::Serialize)]
#[serde(rename_all = "camelCase")]
struct TopicPartitionIds<'a> {
    topic: &'a str,
    partition_ids: &'a [i32],
}

/// Encode a key (version 0): the transactional id
/// ([`TRANSACTION_LOG_KEY`]).
pub fn encode_key(transactional_id: &str) -> Vec<u8> {
    let mut out = 0i16.to_be_bytes().to_vec(); // version: int16
    let key = TransactionLogKeyFields { transactional_id };
    out.extend(TRANSACTION_LOG_KEY.encode(0, &key));
    out
}

/// Decode a TransactionLogValue at the version it starts with, every
/// field by its name in [`TRANSACTION_LOG_VALUE`]; a tagged field the
/// writer left out takes the schema's default. Bytes after the last field
/// are ignored, as Kafka's reader ignores them (see `decode_versioned`).
pub fn decode_value(value: &[u8], at: u64) -> Result<TransactionMetadata, DecodeError> {
    decode_value_rest(value, at).map(|r| r.value)
}

/// [`decode_value`], with the number of bytes after the value's last
/// field, which Kafka's reader ignores (see `decode_versioned`), and the
/// leniencies.
pub fn decode_value_rest(value: &[u8], at: u64) -> Result<Read<TransactionMetadata>, DecodeError> {
    let Versioned {
        version,
        data,
        trailing,
        lenient,
    } = decode_versioned(&TRANSACTION_LOG_VALUE, value, at)?;
    let filled = TRANSACTION_LOG_VALUE.filled(&data);
    let v = Fields(&filled);
    let partitions = v
        .get("transactionPartitions")
        .and_then(Value::as_array)
        .map(|topics| {
            topics
                .iter()
                .map(|t| {
                    let ids = t
                        .get("partitionIds")
                        .and_then(Value::as_array)
                        .map(|ids| {
                            ids.iter()
                                .filter_map(Value::as_i64)
                                .map(|p| p as i32)
                                .collect()
                        })
                        .unwrap_or_default();
                    (Fields(t).string("topic"), ids)
                })
                .collect()
        });
    let meta = TransactionMetadata {
        version,
        producer_id: v.int("producerId"),
        previous_producer_id: v.int("previousProducerId"),
        next_producer_id: v.int("nextProducerId"),
        producer_epoch: v.int("producerEpoch") as i16,
        next_producer_epoch: v.int("nextProducerEpoch") as i16,
        timeout_ms: v.int("transactionTimeoutMs") as i32,
        status: v.int("transactionStatus") as i8,
        partitions,
        last_update_timestamp_ms: v.int("transactionLastUpdateTimestampMs"),
        start_timestamp_ms: v.int("transactionStartTimestampMs"),
        client_transaction_version: v.int("clientTransactionVersion") as i16,
    };
    Ok(Read {
        value: meta,
        trailing,
        lenient,
    })
}

/// Encode a value at `m.version` (0 or 1) from [`TRANSACTION_LOG_VALUE`],
/// as Kafka's generated writer does ([`Schema::encode`]): in v1 compact
/// lengths, and the tagged fields that differ from their defaults, in tag
/// order.
pub fn encode_value(m: &TransactionMetadata) -> Vec<u8> {
    let partitions = m.partitions.as_ref().map(|ps| {
        ps.iter()
            .map(|(topic, ids)| TopicPartitionIds {
                topic,
                partition_ids: ids,
            })
            .collect()
    });
    let value = TransactionLogValueFields {
        producer_id: m.producer_id,
        previous_producer_id: m.previous_producer_id,
        next_producer_id: m.next_producer_id,
        producer_epoch: m.producer_epoch,
        next_producer_epoch: m.next_producer_epoch,
        transaction_timeout_ms: m.timeout_ms,
        transaction_status: m.status,
        transaction_partitions: partitions,
        transaction_last_update_timestamp_ms: m.last_update_timestamp_ms,
        transaction_start_timestamp_ms: m.start_timestamp_ms,
        client_transaction_version: m.client_transaction_version,
    };
    let mut out = m.version.to_be_bytes().to_vec(); // version: int16
    out.extend(TRANSACTION_LOG_VALUE.encode(m.version, &value));
    out
}

/// The coordinator's view: the latest metadata per transactional id, and
/// what could not be read.
#[derive(Debug, Clone, Default)]
pub struct CoordinatorView {
    pub transactions: BTreeMap<String, TransactionMetadata>,
    /// Records and batches not read (errors): an unknown key or value
    /// version, a record that does not decode, a batch that does not
    /// decompress. The table lacks what they hold. Also warnings about
    /// records read as Kafka reads them (bytes after a value's last field).
    pub findings: Vec<Finding>,
    /// Batches the walk stepped over (a CRC mismatch, a torn tail): the
    /// producer-state pass of the same partition reports each.
    pub damaged_batches: u64,
    /// Transactional ids with a record that was not read: their row may
    /// be older than the log.
    pub unread_ids: BTreeSet<String>,
}

impl CoordinatorView {
    /// Whether every record of the partitions replayed was read.
    pub fn is_complete(&self) -> bool {
        self.findings.iter().all(|f| f.severity < Severity::Error) && self.damaged_batches == 0
    }

    /// The transactional ids whose current producer id is `producer_id`,
    /// as `ListTransactions` filtered by producer id answers
    /// (`TransactionStateManager.listTransactionStates`: the metadata's
    /// `producerId`, never a `Dead` one).
    pub fn by_producer(
        &self,
        producer_id: i64,
    ) -> impl Iterator<Item = (&str, &TransactionMetadata)> {
        self.transactions
            .iter()
            .filter(move |(_, m)| m.producer_id == producer_id && m.status != STATUS_DEAD)
            .map(|(id, m)| (id.as_str(), m))
    }
}

/// What Kafka's coordinator does when a record or batch of its log does
/// not load: `TransactionStateManager.loadTransactionMetadata` catches the
/// error and stops loading the partition.
const LOAD_STOPS: &str = "Kafka's transaction coordinator stops loading the partition here \
     (TransactionStateManager.loadTransactionMetadata), so the transactional ids after it are not \
     loaded; klog reads on, and its table lacks this";

/// Replay `__transaction_state` partitions as the coordinator loads them
/// (`TransactionStateManager.loadTransactionMetadata`): last value wins,
/// null deletes. Every record or batch that is not read is an error
/// finding (see [`CoordinatorView`]).
pub fn replay(partitions: &[&Partition], limits: DecodeLimits) -> Result<CoordinatorView> {
    let mut view = CoordinatorView::default();
    let mut scratch = Vec::new();
    for p in partitions {
        let mut walk = p.walk(Policy::VALID_ENTRIES);
        while let Some(w) = walk.next_entry()? {
            let file = w.segment.log.clone();
            let bad = |view: &mut CoordinatorView, position: u64, offset: i64, e: &DecodeError| {
                let mut f = Finding::decode(&file, position, Some(offset), e);
                f.detail = format!("{}: {LOAD_STOPS}", f.detail);
                view.findings.push(f);
            };
            match w.entry {
                Entry::V2(b) => {
                    if b.header.is_control() {
                        continue;
                    }
                    let records = match b.records(&mut scratch, limits) {
                        Ok(it) => it,
                        Err(e) => {
                            bad(&mut view, b.position, b.header.base_offset, &e);
                            continue;
                        }
                    };
                    for r in records {
                        match r {
                            Ok(r) => {
                                view.apply(&file, b.position, r.offset, r.key, r.value, r.position)
                            }
                            Err(e) => {
                                bad(&mut view, b.position, b.header.base_offset, &e);
                                break;
                            }
                        }
                    }
                }
                Entry::Legacy(m) => match m.messages(&mut scratch, limits) {
                    Ok(messages) => {
                        for msg in messages {
                            view.apply(
                                &file, m.position, msg.offset, msg.key, msg.value, m.position,
                            );
                        }
                    }
                    Err(e) => bad(&mut view, m.position, m.offset, &e),
                },
            }
        }
        view.damaged_batches += walk.take_damage().len() as u64;
    }
    Ok(view)
}

impl CoordinatorView {
    /// Apply one record (`TransactionLog.read`, then the loader's match).
    fn apply(
        &mut self,
        file: &std::path::Path,
        batch_position: u64,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        at: u64,
    ) {
        let mut finding = |kind: Kind, byte: u64, detail: String, read: bool| {
            let mut f = Finding::new(kind, file, batch_position, Some(offset), detail);
            f.byte = byte;
            if read {
                // Read as Kafka reads it: a warning, the record applied.
                f = f.with_severity(Severity::Warning);
            }
            self.findings.push(f);
        };
        let Some(key) = key else {
            finding(
                Kind::UnexpectedNull,
                at,
                format!(
                    "the record at offset {offset} has no key: Kafka requires one (\"Transaction state \
                     log's key should not be null\"); {LOAD_STOPS}"
                ),
                false,
            );
            return;
        };
        let trailing = |what: &str, id: &str, n: u64| {
            let s = if n == 1 { "" } else { "s" };
            format!(
                "transactional id {id:?}: the record at offset {offset}: {n} byte{s} after the \
                 {what}'s last field; read and applied, as Kafka's coordinator reads it \
                 (TransactionLog.read ignores the bytes after the last field)"
            )
        };
        let lenient = |what: &str, id: &str, l: &Leniency| {
            format!(
                "transactional id {id:?}: the record at offset {offset}: the {what}: {l}; read \
                 and applied, as Kafka's coordinator reads it (TransactionLog.read: the generated \
                 TransactionLogKey and TransactionLogValue readers)"
            )
        };
        let mut warnings = Vec::new();
        let id = match decode_key_rest(key, at) {
            Ok(read) => {
                if read.trailing > 0 {
                    warnings.push((
                        Kind::TrailingBytes,
                        at,
                        trailing("key", &read.value, read.trailing),
                    ));
                }
                for l in &read.lenient {
                    let kind = Kind::of_decode(&l.defect.kind);
                    warnings.push((kind, l.defect.offset, lenient("key", &read.value, l)));
                }
                read.value
            }
            Err(e) => {
                let (kind, detail) = unreadable(
                    &TRANSACTION_LOG_KEY,
                    &e,
                    &format!("the record at offset {offset}"),
                );
                finding(kind, e.offset, detail, false);
                return;
            }
        };
        let meta = value.map(|v| decode_value_rest(v, at));
        if let Some(Ok(read)) = &meta {
            if read.trailing > 0 {
                warnings.push((
                    Kind::TrailingBytes,
                    at,
                    trailing("value", &id, read.trailing),
                ));
            }
            for l in &read.lenient {
                let kind = Kind::of_decode(&l.defect.kind);
                warnings.push((kind, l.defect.offset, lenient("value", &id, l)));
            }
        }
        for (kind, byte, detail) in warnings {
            finding(kind, byte, detail, true);
        }
        match meta {
            None => {
                self.transactions.remove(&id);
            }
            Some(Ok(read)) => {
                self.transactions.insert(id, read.value);
            }
            Some(Err(e)) => {
                let (kind, detail) = unreadable(
                    &TRANSACTION_LOG_VALUE,
                    &e,
                    &format!("transactional id {id:?}: the record at offset {offset}"),
                );
                finding(kind, e.offset, detail, false);
                self.unread_ids.insert(id);
            }
        }
    }
}

/// The kind and text of a finding about a key or value (of `schema`)
/// that was not read: an unknown version, which Kafka's coordinator skips
/// (`TransactionStateManager.loadTransactionMetadata` logs "Unknown message
/// key/value with version N ... Ignoring it" for `TransactionLog.read`'s
/// UnknownKeyVersion / UnknownValueVersion), or a malformed one, at which
/// its load stops.
fn unreadable(schema: &Schema, e: &DecodeError, record: &str) -> (Kind, String) {
    match e.kind {
        DecodeErrorKind::UnknownVersion { version, .. } => {
            let part = if std::ptr::eq(schema, &TRANSACTION_LOG_KEY) {
                "key"
            } else {
                "value"
            };
            (
                Kind::UnknownVersion,
                format!(
                    "{record} is a {} of version {version}; klog knows {} (the newest is {}), as \
                     Kafka 4.4 does. Not applied: Kafka's coordinator skips it with a warning when \
                     it loads the partition (TransactionStateManager.loadTransactionMetadata: \
                     \"Unknown message {part} with version {version} ... Ignoring it\") and keeps \
                     what it had before it; the Kafka that wrote it would apply it, so the \
                     coordinator's table may be stale here",
                    schema.name,
                    known(schema),
                    schema.versions.1
                ),
            )
        }
        _ => (
            Kind::of_decode(&e.kind),
            format!("{record}: {e}; {LOAD_STOPS}"),
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ongoing(version: i16) -> TransactionMetadata {
        TransactionMetadata {
            partitions: Some(vec![("ledger".into(), vec![0, 1])]),
            last_update_timestamp_ms: 5,
            start_timestamp_ms: 4,
            ..TransactionMetadata::new(version, 9000, 2, 60000, 1)
        }
    }

    #[test]
    fn value_round_trip_and_key() {
        let m = ongoing(0);
        assert_eq!(decode_value(&encode_value(&m), 0).unwrap(), m);
        assert_eq!(status_name(1), "Ongoing");
        assert_eq!(decode_key(&[0, 0, 0, 2, b't', b'x'], 0).unwrap(), "tx");
        assert_eq!(encode_key("tx"), [0, 0, 0, 2, b't', b'x']);
        assert!(decode_key(&[0, 1, 0, 0], 0).is_err());
    }

    #[test]
    fn v1_tagged_fields_by_name() {
        // TransactionLogValue v1, hand-assembled from the schema file:
        // compact lengths, then the tagged fields in tag order.
        let mut v = vec![0, 1]; // version 1
        v.extend_from_slice(&9000i64.to_be_bytes()); // producerId
        v.extend_from_slice(&7i16.to_be_bytes()); // producerEpoch
        v.extend_from_slice(&60000i32.to_be_bytes()); // transactionTimeoutMs
        v.push(2); // transactionStatus: PrepareCommit
        v.extend_from_slice(&[2, 7, b'l', b'e', b'd', b'g', b'e', b'r', 2]); // 1 topic "ledger", 1 id
        v.extend_from_slice(&3i32.to_be_bytes()); // partition 3
        v.push(0); // the topic's tagged fields
        v.extend_from_slice(&5i64.to_be_bytes()); // transactionLastUpdateTimestampMs
        v.extend_from_slice(&4i64.to_be_bytes()); // transactionStartTimestampMs
        v.push(4); // four tagged fields
        v.extend_from_slice(&[0, 8]); // tag 0, PreviousProducerId
        v.extend_from_slice(&8999i64.to_be_bytes());
        v.extend_from_slice(&[1, 8]); // tag 1, NextProducerId
        v.extend_from_slice(&9001i64.to_be_bytes());
        v.extend_from_slice(&[2, 2, 0, 2]); // tag 2, ClientTransactionVersion 2
        v.extend_from_slice(&[3, 2, 0, 0]); // tag 3, NextProducerEpoch 0
        let m = decode_value(&v, 0).unwrap();
        assert_eq!(
            (
                m.previous_producer_id,
                m.next_producer_id,
                m.client_transaction_version,
                m.next_producer_epoch
            ),
            (8999, 9001, 2, 0)
        );
        assert_eq!(m.partitions, Some(vec![("ledger".into(), vec![3])]));
        assert_eq!(encode_value(&m), v);
        // Left out, each tagged field is its default.
        let plain = ongoing(1);
        let bytes = encode_value(&plain);
        assert_eq!(*bytes.last().unwrap(), 0, "no tagged field written");
        let back = decode_value(&bytes, 0).unwrap();
        assert_eq!(back, plain);
        assert_eq!(
            (
                back.previous_producer_id,
                back.next_producer_id,
                back.next_producer_epoch
            ),
            (-1, -1, -1)
        );
        assert_eq!(back.client_transaction_version, 0);
    }

    #[test]
    fn versions_klog_does_not_know_are_refused_by_name() {
        let mut v = encode_value(&ongoing(1));
        v[1] = 2;
        let e = decode_value(&v, 100).unwrap_err();
        assert_eq!(e.offset, 100);
        assert!(matches!(
            e.kind,
            DecodeErrorKind::UnknownVersion {
                schema: "TransactionLogValue",
                version: 2
            }
        ));
        // One release per version, from the table's own range.
        assert_eq!(
            VALUE_VERSION_RELEASES.len() as i16,
            TRANSACTION_LOG_VALUE.versions.1 + 1
        );
        assert_eq!(
            KEY_VERSION_RELEASES.len() as i16,
            TRANSACTION_LOG_KEY.versions.1 + 1
        );
    }
}
