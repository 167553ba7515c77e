//! What the commands share: the inspections built on the log and the topic
//! models, each returning values for a renderer (nothing here prints).
//!
//! - [`verify`]: checks of partitions and data directories, in parallel
//!   over partitions;
//! - [`recovery`]: a broker's log recovery, shown before it happens;
//!   [`repair`] carries it out, moving bytes aside, never deleting them;
//!   [`restart`]: what a broker's next start does, and [`targets`]: the
//!   partitions a repair or a recovery preview works on;
//!   [`fate`]: what a broker does with each finding;
//! - [`consumer_lag`], [`log_stats`], [`replica_diff`]: lag, statistics
//!   and the comparison of two copies of a partition;
//! - [`reset`]: offline offset resets by Kafka's rules;
//! - [`txn_overview`]: producers, open and hanging transactions and the
//!   coordinator's view, from the transaction models;
//! - [`topic_config`]: a topic's log configuration as its broker resolves
//!   it (files, the KRaft metadata, overrides), for the writers;
//! - [`layout`]: the annotated bytes of a segment and of the files beside
//!   it ([`layout::sidecar`]);
//! - [`dir_overview`]: a data directory's files, offsets and metadata,
//!   checked as a broker loads them;
//! - [`catalog`]: every record type klog decodes; [`consumer`]: a minimal
//!   offline consumer.

pub mod catalog;
pub mod consumer;
pub mod consumer_lag;
pub mod dir_overview;
pub mod dump_log;
pub mod fate;
pub mod jbod;
pub mod layout;
pub mod log_stats;
pub mod recovery;
pub mod repair;
pub mod replica_diff;
pub mod reset;
pub mod restart;
pub mod select;
pub mod targets;
pub mod topic_config;
pub mod txn_overview;
pub mod verify;
