//! kaen_log: read, verify and append Kafka-format on-disk logs without a broker.
//!
//! The crate is layered, and imports point down only (a lower layer never
//! names a higher one; a folder's files may use each other):
//!
//! 1. [`format`]: bytes to values and back, no I/O: record batches
//!    (magic 2), legacy messages (magic 0/1), records, control markers,
//!    compression, index entries, the record schemas, the batch encoder and
//!    [`error`], the decode error every layer reports with its absolute
//!    byte position. [`escape`] and [`time`] sit beside it.
//! 2. [`log`]: files: segment names, partition folders and data
//!    directories, the segment reader ([`log::read`]: framing over one
//!    source of bytes), the walk over a partition's segments, the directory
//!    lock, and the one append path ([`log::PartitionAppender`]).
//! 3. The topic models, each reading its topic through `log`: [`offsets`]
//!    (the group coordinator's records and their replay), [`txn`]
//!    (producer state and transactions), [`metadata`] (the KRaft log and
//!    its image) and [`cluster`] (one broker's summary, several merged).
//! 4. What the commands share: [`findings`] (problems and their severity),
//!    [`verify`], [`lag`], [`stats`], [`diff`], [`recovery`], [`repair`],
//!    [`reset`], [`layout`] and [`file_layout`], [`catalog`], [`consumer`],
//!    [`topic_config`]; and [`demo`], the scripted demonstrations.
//!
//! The binary adds three layers above: `report` (renderers that know no
//! command: text tables, CSV, JSON, HTML), `cmd` (one thin file per
//! subcommand: parse options, call the library, hand a document to the
//! renderer) and `cli` (the command line and its dispatch). The library
//! prints nothing; only `cmd` and `report` write to stdout and stderr.
//!
//! To add a subcommand: its arguments, `run` and document in
//! `src/cmd/<name>.rs`, a variant in `cli::Command` and its line in
//! `cli::run`, its document in `cmd/generate/schema.rs`; then regenerate
//! `man/` (`klog generate man man`, `klog generate schema man/schema`). To
//! add a record type: its schema in the table of the topic that holds it
//! (`offsets::records`, `metadata::records`, `txn::txnlog`), which the
//! decoder, `klog-records(7)` and the schema check against Kafka's JSON
//! files all read.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod catalog;
pub mod cluster;
pub mod consumer;
pub mod demo;
pub mod diff;
pub mod escape;
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
pub mod topic_config;
pub mod txn;
pub mod verify;

pub use error::{DecodeError, DecodeErrorKind, Error, Result};
pub use format::error;
