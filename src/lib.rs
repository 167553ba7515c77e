//! kaen_log: read, verify and append Kafka-format on-disk logs without a broker.
//!
//! The crate is layered, and imports point down only (a lower layer never
//! names a higher one; a folder's files may use each other). Each layer is
//! a folder:
//!
//! 1. [`format`](mod@format): bytes to values and back, no I/O: record batches
//!    (magic 2), legacy messages (magic 0/1), records, control markers,
//!    compression, index entries, the record schemas, the batch encoder,
//!    [`error`] (the decode error every layer reports with its absolute
//!    byte position), how values are shown ([`format::escape`],
//!    [`format::time`]), and [`format::trace`]: each decoder hands the
//!    fields it reads to a trace, which `dump-segment --layout` shows and
//!    everything else passes as a no-op.
//! 2. [`log`]: files: segment names, partition folders and data
//!    directories, the segment reader ([`log::read`]: framing over one
//!    source of bytes), the walk over a partition's segments, the directory
//!    lock, a topic's log configuration and the one append path
//!    ([`log::PartitionAppender`]).
//! 3. The topic models, each reading its topic through `log`: [`offsets`]
//!    (the group coordinator's records and their replay), [`txn`]
//!    (producer state and transactions), [`metadata`] (the KRaft log and
//!    its image) and [`cluster`] (one broker's summary, several merged).
//! 4. [`inspect`]: what the commands share: findings (the one problem
//!    type), verification, recovery and repair, lag, statistics, replica
//!    comparison, offset resets, the transactions of a set of partitions,
//!    annotated layouts, the record catalog; [`export`], the Parquet
//!    tree of `klog export` (its rows built from the walk and the topic
//!    models, written through [`log::durable`]); and [`demo`], the
//!    scripted demonstrations.
//!
//! The binary adds three layers above: `report` (renderers that know no
//! command: text tables, CSV, JSON, HTML), `cmd` (one thin file per
//! subcommand, named after it: parse options, call the library, hand a
//! document to the renderer) and `cli` (the command line and its
//! dispatch). The library prints nothing; only `cmd` and `report` write to
//! stdout and stderr. No two files below `src/` share a name (`mod.rs`
//! aside). `tests/lib/layers.rs` checks these rules on the source: imports
//! point down and run in no circle, `report` opens no file and takes only
//! documents (types) from `inspect`, every read of a log's files goes
//! through the read seam, no `cmd` file has more than 400 lines of code,
//! every row a command reports has one shape: its JSON (a library type
//! or the document's row) is what text and CSV pick their columns from
//! (`report::table::Column`), with no struct of their own, and the layout
//! views (`inspect::layout`) read no field themselves: they show the
//! decoders' trace.
//!
//! To add a subcommand: one file, `src/cmd/<name>.rs`, with its clap
//! arguments, its `run`, its document, and its `cmd::CommandEntry` on the
//! arguments (its man page's EXAMPLES, SEE ALSO and DETAILS, the JSON
//! Schema of its document); then one line in the `commands!` list of
//! `src/cmd/mod.rs`, from which its module, its variant of the command
//! line, the dispatch, the man pages and the schemas come (a test fails when a subcommand declares no examples, or prints
//! JSON without a schema). Regenerate `man/` (`klog generate man man`,
//! `klog generate schema man/schema`). To add a record type: its schema in the table of the
//! topic that holds it (`offsets::records`, `metadata::records`,
//! `txn::txnlog`), which the decoder, `klog-records(7)` and the schema
//! check against Kafka's JSON files all read.

#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::expect_used))]

pub mod cluster;
pub mod demo;
pub mod export;
pub mod format;
pub mod inspect;
pub mod log;
pub mod metadata;
pub mod offsets;
pub mod tiered;
pub mod txn;

pub use error::{DecodeError, DecodeErrorKind, Error, Result};
pub use format::error;
