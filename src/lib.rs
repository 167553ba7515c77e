//! kaen_log: read, verify and append Kafka-format on-disk logs without a broker.
//!
//! - [`format`]: bytes to values and back, no I/O: record batches (magic 2),
//!   legacy messages (magic 0/1), records, control markers, compression,
//!   index entries, and the batch encoder.
//! - [`log`]: files: segment names, partition folders and data directories,
//!   the streaming segment reader with its tail verdict, the directory lock,
//!   and the one append path ([`log::PartitionAppender`]).
//! - [`offsets`]: the offsets topic's records and their replay into the
//!   committed-offset table.
//! - [`verify`]: the integrity checks behind `klog verify-crc`.
//!
//! Every decoding defect is a [`error::DecodeError`] with the absolute byte
//! position where it was found.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod catalog;
pub mod cluster;
pub mod consumer;
pub mod demo;
pub mod diff;
pub mod error;
pub mod file_layout;
pub mod findings;
pub mod format;
pub mod lag;
pub mod layout;
pub mod log;
pub mod metadata;
pub mod offsets;
pub mod recovery;
pub mod repair;
pub mod reset;
pub mod stats;
pub mod time;
pub mod txn;
pub mod verify;

pub use error::{DecodeError, DecodeErrorKind, Error, Result};
