//! What `klog eos-demo` did and read back: the run's document.

use schemars::JsonSchema;
use serde::Serialize;

use super::{CrashPoint, Guarantee};
use crate::inspect::layout::sidecar::FileField;

/// Everything the demo did and read back.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct EosDemo {
    /// The cluster's `transaction.version`: 2 bumps the producer's epoch at
    /// every commit and abort, 1 only at InitProducerId.
    pub transaction_version: i16,
    pub idempotence: Idempotence,
    pub pipeline: Pipeline,
    pub fencing: Fencing,
    /// The three guarantees through the same faults.
    pub comparison: Vec<Comparison>,
}

/// Part 1: an idempotent producer's requests and the leader's answers.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Idempotence {
    pub topic: String,
    pub partition: i32,
    pub producer_id: i64,
    pub requests: Vec<Request>,
    pub log_end_offset: i64,
    /// The snapshot file written, relative to the data directory.
    pub snapshot_file: String,
    pub snapshot_offset: i64,
    /// Its bytes, field by field.
    pub snapshot: Vec<FileField>,
}

/// One produce request.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Request {
    pub request: u32,
    /// What the producer is doing.
    pub note: String,
    pub producer_epoch: i16,
    pub first_sequence: i32,
    pub last_sequence: i32,
    /// `appended`, `duplicate` or `rejected`.
    pub outcome: String,
    /// The exception Kafka answers a rejected batch with.
    pub error: Option<String>,
    /// The offsets appended, or a duplicate's original offsets.
    pub first_offset: Option<i64>,
    pub last_offset: Option<i64>,
    /// Where an appended batch starts in the `.log`.
    pub position: Option<u64>,
    /// What the leader compared.
    pub rule: String,
    pub log_end_offset: i64,
}

/// A `__transaction_state` record the coordinator logged.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Logged {
    /// Its offset in `__transaction_state-0`.
    pub offset: i64,
    pub state: String,
    pub producer_epoch: i16,
    pub partitions: Vec<String>,
}

/// A marker the coordinator wrote.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct MarkerWritten {
    pub topic: String,
    pub partition: i32,
    pub offset: i64,
    /// `COMMIT` or `ABORT`.
    pub marker: String,
    pub producer_epoch: i16,
}

/// Part 2: the consume-transform-produce loop.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Pipeline {
    pub guarantee: Guarantee,
    pub input: String,
    pub output: String,
    pub group: String,
    pub transactional_id: Option<String>,
    pub orders: usize,
    pub poll_size: usize,
    pub crash_points: Vec<CrashPoint>,
    pub instances: Vec<Instance>,
    /// What the output holds at the end.
    pub end: View,
}

/// One run of the application, from its start to its crash or the end of the orders.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Instance {
    pub instance: u32,
    /// -1 for a plain producer.
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// The epoch the coordinator fenced the previous instance's open transaction with.
    pub fenced_with: Option<i16>,
    /// What InitProducerId logged.
    pub coordinator: Vec<Logged>,
    /// The ABORT markers the fencing wrote.
    pub markers: Vec<MarkerWritten>,
    /// The committed offset it read back and started from.
    pub resumed_from: i64,
    pub polls: Vec<Poll>,
    /// Where it crashed, and what a consumer would see right then.
    pub crash: Option<Crash>,
}

/// One poll and what was written for it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Poll {
    /// The orders read (input offsets).
    pub first_order: i64,
    pub last_order: i64,
    /// The invoices appended.
    pub invoices: Option<Offsets>,
    /// The resend of the first produce request, whose acknowledgement was lost.
    pub resend: Option<String>,
    /// The offset committed and where the commit record is in `__offsets-0`.
    pub committed_offset: Option<i64>,
    pub commit_log_offset: Option<i64>,
    pub coordinator: Vec<Logged>,
    pub markers: Vec<MarkerWritten>,
    /// The epoch commitTransaction's EndTxn answered with: the transaction's
    /// epoch + 1 under transaction version 2, the same under version 1.
    pub epoch_after_commit: Option<i16>,
}

/// A range of offsets.
#[derive(Debug, Clone, Copy, Serialize, JsonSchema)]
pub struct Offsets {
    pub first_offset: i64,
    pub last_offset: i64,
}

/// A crash and the view right after it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Crash {
    pub at: CrashPoint,
    pub view: View,
}

/// What readers see of the output topic and the group's offsets.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct View {
    pub log_end_offset: i64,
    pub last_stable_offset: i64,
    /// The aborted transactions a read_committed fetch from 0 is answered
    /// with (from the `.txnindex` files).
    pub aborted: Vec<Aborted>,
    /// The orders whose invoices a read_committed consumer reads, in order.
    pub read_committed: Vec<u32>,
    /// The same for read_uncommitted.
    pub read_uncommitted: Vec<u32>,
    /// The group's committed offset of the input partition.
    pub committed_offset: Option<i64>,
    /// Transactional commits waiting for their marker.
    pub pending: Vec<Pending>,
}

/// An aborted transaction of a `.txnindex`.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Aborted {
    pub producer_id: i64,
    pub first_offset: i64,
    pub last_offset: i64,
    pub last_stable_offset: i64,
}

/// A transactional offset commit without its marker yet.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Pending {
    pub producer_id: i64,
    pub committed_offset: i64,
}

/// Part 3: a zombie fenced by a newer instance.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Fencing {
    pub topic: String,
    pub partition: i32,
    pub transactional_id: String,
    pub steps: Vec<FenceStep>,
    /// The batches on disk afterwards.
    pub batches: Vec<OnDisk>,
    pub log_end_offset: i64,
    /// The keys a read_committed consumer reads.
    pub read_committed: Vec<String>,
    /// The epoch the partition's producer state holds for the producer.
    pub producer_epoch: i16,
}

/// One request of the fencing story.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FenceStep {
    /// `A` (the first instance) or `B`.
    pub instance: String,
    pub action: String,
    pub result: String,
}

/// A batch on disk.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct OnDisk {
    pub first_offset: i64,
    pub last_offset: i64,
    pub position: u64,
    pub producer_id: i64,
    pub producer_epoch: i16,
    /// `data`, `COMMIT` or `ABORT`.
    pub kind: String,
    pub keys: Vec<String>,
}

/// Part 4: one guarantee's figures.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Comparison {
    pub guarantee: Guarantee,
    pub topic: String,
    /// What became of the resent request.
    pub resend: String,
    /// Invoices a read_uncommitted consumer reads.
    pub read_uncommitted: usize,
    pub read_uncommitted_duplicates: usize,
    /// Invoices a read_committed consumer reads.
    pub read_committed: usize,
    pub read_committed_duplicates: usize,
    /// Orders without an invoice in the read_committed view.
    pub missing: usize,
}
