//! The tables of an export: their columns (named as klog's JSON names the
//! same fields: `dump-segment --format json`, `replay-offsets`,
//! `transactions`, findings) and where each is written in the output tree.
//!
//! `records` is Hive-partitioned (`records/topic=T/partition=P/<base
//! offset>.parquet`, one file per segment), so its files hold neither
//! `topic` nor `partition`: engines take both from the folder names. Every
//! other table is one file (`NAME/NAME.parquet`) whose rows name their
//! topic and partition. Every table names the broker (`node_id`, from the
//! log directory's `meta.properties`) and the log directory, so trees from
//! many brokers can be queried together.

use super::parquet::{opt, opt_dict, opt_plain, req, req_dict, Col, Kind::*};

/// The columns of `records`, with `$text` columns after `value`.
macro_rules! records_cols {
    ($($text:expr),*) => {
        [
            req("offset", I64),
            req("timestamp", TimestampMs),
            opt_dict("timestamp_type"),
            opt("key", Bytes),
            opt_plain("value", Bytes),
            $($text,)*
            req("headers", Headers),
            req("producer_id", I64),
            req("producer_epoch", I16),
            req("sequence", I32),
            req("is_transactional", Bool),
            req("is_control", Bool),
            opt_dict("transaction_outcome"),
            req("base_offset", I64),
            req("partition_leader_epoch", I32),
            req_dict("compression"),
            req("magic", I32),
            req_dict("file"),
            req("position", I64),
            opt("node_id", I32),
            req_dict("log_dir"),
        ]
    };
}

/// Columns of `records` without `--decode`.
pub const RECORDS: &[Col] = &records_cols!();
/// Columns of `records` with `--decode` (`key_text`, `value_text` after `value`).
pub const RECORDS_TEXT: &[Col] = &records_cols!(opt("key_text", Str), opt_plain("value_text", Str));

/// Columns of `batches`: one row per batch (or legacy entry) read.
pub const BATCHES: &[Col] = &[
    req_dict("topic"),
    req("partition", I32),
    req_dict("file"),
    req("position", I64),
    req("base_offset", I64),
    req("last_offset", I64),
    req("record_count", I32),
    req("size", I64),
    req("magic", I32),
    req("crc", I64),
    req("attributes", I32),
    req_dict("compression"),
    opt_dict("timestamp_type"),
    req("is_transactional", Bool),
    req("is_control", Bool),
    req("producer_id", I64),
    req("producer_epoch", I16),
    req("base_sequence", I32),
    req("last_sequence", I32),
    req("partition_leader_epoch", I32),
    opt("base_timestamp", TimestampMs),
    req("max_timestamp", TimestampMs),
    opt_dict("transaction_outcome"),
    opt("high_watermark", I64),
    opt("node_id", I32),
    req_dict("log_dir"),
];

/// Columns of `partitions`: one row per partition exported. `shutdown`
/// is how the broker left the log directory: `clean` (its
/// `.kafka_cleanshutdown` marker is there), `unclean` (a crash: the next
/// start recovers), `running` (a process holds its lock) or
/// `not_a_broker`.
pub const PARTITIONS: &[Col] = &[
    req("topic", Str),
    req("partition", I32),
    req("segments", I64),
    req("log_start_offset", I64),
    req("log_end_offset", I64),
    opt("high_watermark", I64),
    req("last_stable_offset", I64),
    req("dir", Str),
    req("shutdown", Str),
    opt("node_id", I32),
    req("log_dir", Str),
];

/// Columns of `findings`: what is damaged in the input, one row each.
pub const FINDINGS: &[Col] = &[
    opt("topic", Str),
    opt("partition", I32),
    req("kind", Str),
    req("severity", Str),
    req("file", Str),
    req("position", I64),
    req("byte", I64),
    opt("offset", I64),
    opt("producer_id", I64),
    req("detail", Str),
    opt("node_id", I32),
    req("log_dir", Str),
];

/// Columns of `producers`: the producer state of each partition.
pub const PRODUCERS: &[Col] = &[
    req("topic", Str),
    req("partition", I32),
    req("producer_id", I64),
    req("producer_epoch", I16),
    req("last_sequence", I32),
    req("first_offset", I64),
    req("last_offset", I64),
    req("last_timestamp", TimestampMs),
    req("transactional", Bool),
    req("batches", I64),
    req("committed", I64),
    req("aborted", I64),
    opt("open_transaction_first_offset", I64),
    opt("node_id", I32),
    req("log_dir", Str),
];

/// Columns of `transactions`: the aborted transactions (`first_offset` to
/// `last_offset`, the ABORT marker's offset) and the open ones (no last
/// offset) of each partition. Committed transactions are counted in
/// `producers`; their records say `committed` in `records`.
pub const TRANSACTIONS: &[Col] = &[
    req("topic", Str),
    req("partition", I32),
    req("producer_id", I64),
    req("first_offset", I64),
    opt("last_offset", I64),
    req("outcome", Str),
    opt("node_id", I32),
    req("log_dir", Str),
];

/// Columns of `offsets`: the replayed committed offsets (`replay-offsets`).
pub const OFFSETS: &[Col] = &[
    req("group", Str),
    req("topic", Str),
    req("partition", I32),
    req("committed_offset", I64),
    req("leader_epoch", I32),
    req("metadata", Str),
    req("commit_timestamp_ms", TimestampMs),
    opt("node_id", I32),
    req("log_dir", Str),
];

/// Columns of `offset_history` (`--history`): every commit, tombstone and
/// transactional commit event of the offsets topic, in log order.
pub const OFFSET_HISTORY: &[Col] = &[
    req("log_partition", I32),
    req("log_offset", I64),
    req("position", I64),
    req("event", Str),
    req("group", Str),
    req("topic", Str),
    req("partition", I32),
    opt("committed_offset", I64),
    opt("commit_timestamp_ms", TimestampMs),
    opt("node_id", I32),
    req("log_dir", Str),
];

/// The one-file tables, by name: the folder and file name in the output.
pub const SINGLE: [&str; 7] = [
    "batches",
    "partitions",
    "findings",
    "producers",
    "transactions",
    "offsets",
    "offset_history",
];
