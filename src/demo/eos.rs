//! The scenarios of `klog eos-demo`: what "exactly once" leaves on disk,
//! done for real in a data directory.
//!
//! A small broker runs in-process over the append path: every batch a
//! producer sends is first checked by the leader's producer rules
//! ([`crate::txn::producer`]) and appended only if they pass; the
//! transaction coordinator ([`crate::txn::coordinator`]) logs its states to
//! `__transaction_state-0` and writes its markers through the same path;
//! transactional offset commits are transactional batches in `__offsets-0`.
//! Everything shown is then read back with klog's readers: the consumer
//! ([`crate::consumer`], read_committed through the `.txnindex` files), the
//! offsets replay, [`crate::txn::analyze`] and the producer snapshot check.
//! Each run checks its own figures and fails instead of printing a wrong one.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

use schemars::JsonSchema;
use serde::Serialize;

use crate::consumer::Consumer;
use crate::error::{Error, Result};
use crate::file_layout::{self, FileField, FileKind};
use crate::format::control::encode_marker;
use crate::format::{BatchSpec, Entry, NewRecord};
use crate::log::durable::{self, Disk};
use crate::log::lock::DirLock;
use crate::log::{AppendConfig, Partition, PartitionAppender, Policy};
use crate::offsets::{commit_record_v3, Replay, ReplayOptions, KLOG_OFFSETS_TOPIC};
use crate::txn::coordinator::{Coordinator, CoordinatorError, Step, TransactionVersion, TxnState};
use crate::txn::fetch::{collect_aborted, lso_at_high_watermark};
use crate::txn::producer::{
    append_checked, Incoming, Origin, Produced, ProducerStateManager, Rejection,
};
use crate::txn::txnlog::{encode_key, encode_value, TRANSACTION_STATE_TOPIC};
use crate::txn::{analyze, Isolation, TxnOptions};

/// The input topic.
pub const ORDERS: &str = "orders";
/// The consume-transform-produce loop's output topic.
pub const INVOICES: &str = "invoices";
/// The idempotent producer's topic.
pub const PAYMENTS: &str = "payments";
/// The zombie-fencing topic.
pub const REFUNDS: &str = "refunds";
/// The loop's consumer group.
pub const GROUP: &str = "invoicer";
/// The loop's transactional id.
pub const TRANSACTIONAL_ID: &str = "invoicer-tx";
/// The zombie-fencing transactional id.
pub const FENCING_ID: &str = "refunder";
/// Where the coordinator's producer id block starts.
pub const FIRST_PRODUCER_ID: i64 = 1000;
/// Transactions time out after a minute (the producer's default).
const TXN_TIMEOUT_MS: i32 = 60_000;

/// The partition folders the demo writes.
pub fn folders() -> Vec<String> {
    let mut v: Vec<String> = [
        ORDERS,
        PAYMENTS,
        INVOICES,
        &output_topic(Guarantee::AtLeastOnce),
        &output_topic(Guarantee::Idempotent),
        REFUNDS,
        KLOG_OFFSETS_TOPIC,
        TRANSACTION_STATE_TOPIC,
    ]
    .iter()
    .map(|t| format!("{t}-0"))
    .collect();
    v.sort();
    v
}

/// Where the application crashes in a transaction.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum CrashPoint {
    /// After polling orders, before sending an invoice.
    BeforeProduce,
    /// After the invoices were appended, before the offsets were sent.
    AfterProduce,
    /// After the offsets were written, before commitTransaction.
    AfterOffsets,
    /// After the COMMIT markers were written.
    AfterMarker,
}

impl CrashPoint {
    /// Every crash point, in transaction order.
    pub const ALL: [CrashPoint; 4] = [
        CrashPoint::BeforeProduce,
        CrashPoint::AfterProduce,
        CrashPoint::AfterOffsets,
        CrashPoint::AfterMarker,
    ];

    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            CrashPoint::BeforeProduce => "before-produce",
            CrashPoint::AfterProduce => "after-produce",
            CrashPoint::AfterOffsets => "after-offsets",
            CrashPoint::AfterMarker => "after-marker",
        }
    }
}

impl std::str::FromStr for CrashPoint {
    type Err = String;
    fn from_str(s: &str) -> std::result::Result<Self, String> {
        CrashPoint::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| {
                format!("'{s}' is not a crash point: before-produce, after-produce, after-offsets or after-marker")
            })
    }
}

/// A delivery guarantee of the loop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "kebab-case")]
pub enum Guarantee {
    /// A plain producer, offsets committed after the produce.
    AtLeastOnce,
    /// An idempotent producer, offsets committed after the produce.
    Idempotent,
    /// A transactional producer, offsets committed inside the transaction.
    Transactional,
}

impl Guarantee {
    /// Its name.
    pub fn name(self) -> &'static str {
        match self {
            Guarantee::AtLeastOnce => "at-least-once",
            Guarantee::Idempotent => "idempotent",
            Guarantee::Transactional => "transactional",
        }
    }
}

/// The loop's output topic under `g`.
pub fn output_topic(g: Guarantee) -> String {
    match g {
        Guarantee::Transactional => INVOICES.to_string(),
        g => format!("{INVOICES}.{}", g.name()),
    }
}

/// The loop's group under `g`.
pub fn group_of(g: Guarantee) -> String {
    match g {
        Guarantee::Transactional => GROUP.to_string(),
        g => format!("{GROUP}.{}", g.name()),
    }
}

/// What to run.
#[derive(Debug, Clone)]
pub struct Options {
    /// The first timestamp; every request takes the next millisecond.
    pub now_ms: i64,
    /// Orders in the input topic.
    pub orders: usize,
    /// Orders per poll (and per transaction).
    pub poll_size: usize,
    /// Where the application crashes, one crash per attempt at the first
    /// poll, in this order.
    pub crash_points: Vec<CrashPoint>,
    /// The cluster's `transaction.version`.
    pub transaction_version: TransactionVersion,
}

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

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid(format!("self-check failed: {}", what())))
    }
}

/// A partition's leader: its appender and its producer state.
struct Leader {
    appender: PartitionAppender,
    state: ProducerStateManager,
}

/// The broker the demo runs: every partition it leads, the transaction
/// coordinator, and a clock that moves one millisecond per request.
struct Broker {
    dir: PathBuf,
    lock: Arc<DirLock>,
    leaders: BTreeMap<(String, i32), Leader>,
    coordinator: Coordinator,
    clock: i64,
}

impl Broker {
    fn open(dir: &Path, now_ms: i64, version: TransactionVersion) -> Result<Self> {
        Ok(Broker {
            dir: dir.to_path_buf(),
            lock: Arc::new(DirLock::acquire(dir)?),
            leaders: BTreeMap::new(),
            // The coordinator's epoch is its partition's leader epoch: 0.
            coordinator: Coordinator::new(0, FIRST_PRODUCER_ID, version),
            clock: now_ms,
        })
    }

    fn tick(&mut self) -> i64 {
        self.clock += 1;
        self.clock
    }

    fn leader(&mut self, topic: &str, partition: i32) -> Result<&mut Leader> {
        let key = (topic.to_string(), partition);
        if !self.leaders.contains_key(&key) {
            let appender = PartitionAppender::open_locked(
                self.lock.clone(),
                &self.dir,
                topic,
                partition,
                AppendConfig::default(),
            )?;
            self.leaders.insert(
                key.clone(),
                Leader {
                    appender,
                    state: ProducerStateManager::new(),
                },
            );
        }
        self.leaders
            .get_mut(&key)
            .ok_or_else(|| Error::Invalid(format!("no leader for {topic}-{partition}")))
    }

    /// The leader's append: checked, then appended only if it passes (a
    /// marker as written with WriteTxnMarkers' `transaction_version`; 0
    /// for data).
    fn produce(
        &mut self,
        topic: &str,
        partition: i32,
        origin: Origin,
        spec: &BatchSpec,
        records: &[NewRecord],
        transaction_version: i16,
    ) -> Result<Produced> {
        let l = self.leader(topic, partition)?;
        append_checked(
            &mut l.appender,
            &mut l.state,
            origin,
            spec,
            records,
            transaction_version,
        )
    }

    /// Carry out the coordinator's steps through the append path.
    fn run_steps(&mut self, transactional_id: &str, steps: Vec<Step>) -> Result<Written> {
        let mut logged = Vec::new();
        let mut markers = Vec::new();
        for step in steps {
            match step {
                Step::Log(m) => {
                    let ts = self.tick();
                    let record = NewRecord {
                        key: Some(encode_key(transactional_id)),
                        value: Some(encode_value(&m.log_value())),
                        headers: Vec::new(),
                        timestamp: ts,
                    };
                    let offset = match self.produce(
                        TRANSACTION_STATE_TOPIC,
                        0,
                        Origin::Coordinator,
                        &BatchSpec::default(),
                        &[record],
                        0,
                    )? {
                        Produced::Appended(r) => *r.start(),
                        other => {
                            return Err(Error::Invalid(format!(
                                "the transaction log refused a record: {other:?}"
                            )))
                        }
                    };
                    logged.push(Logged {
                        offset,
                        state: m.state.name().to_string(),
                        producer_epoch: m.producer_epoch,
                        partitions: m
                            .partitions
                            .iter()
                            .map(|(t, p)| format!("{t}-{p}"))
                            .collect(),
                    });
                }
                Step::Markers {
                    commit,
                    producer_id,
                    producer_epoch,
                    coordinator_epoch,
                    transaction_version,
                    partitions,
                } => {
                    // `TransactionMarkerChannelManager`: one marker per
                    // partition, appended by the partition's leader
                    // (origin COORDINATOR: epochs checked, not sequences).
                    for (topic, partition) in partitions {
                        let (key, value) = encode_marker(commit, coordinator_epoch);
                        let ts = self.tick();
                        let spec = BatchSpec {
                            transactional: true,
                            control: true,
                            producer_id,
                            producer_epoch,
                            ..BatchSpec::default()
                        };
                        let record = NewRecord {
                            key: Some(key),
                            value: Some(value),
                            headers: Vec::new(),
                            timestamp: ts,
                        };
                        let offset = match self.produce(
                            &topic,
                            partition,
                            Origin::Coordinator,
                            &spec,
                            &[record],
                            transaction_version,
                        )? {
                            Produced::Appended(r) => *r.start(),
                            other => {
                                return Err(Error::Invalid(format!(
                                    "{topic}-{partition} refused a marker: {other:?}"
                                )))
                            }
                        };
                        markers.push(MarkerWritten {
                            topic,
                            partition,
                            offset,
                            marker: if commit { "COMMIT" } else { "ABORT" }.into(),
                            producer_epoch,
                        });
                    }
                }
            }
        }
        Ok((logged, markers))
    }

    /// InitProducerId: a transactional id's (fencing an open transaction),
    /// or a fresh producer id at epoch 0 without one.
    fn init_producer_id(&mut self, transactional_id: Option<&str>) -> Result<InitDone> {
        let Some(tid) = transactional_id else {
            return Ok(InitDone {
                producer_id: self.coordinator.allocate_producer_id(),
                producer_epoch: 0,
                fenced_with: None,
                logged: Vec::new(),
                markers: Vec::new(),
            });
        };
        let now = self.tick();
        let init = self.coordinator.init_producer_id(tid, TXN_TIMEOUT_MS, now);
        let (logged, markers) = self.run_steps(tid, init.steps)?;
        Ok(InitDone {
            producer_id: init.producer_id,
            producer_epoch: init.producer_epoch,
            fenced_with: init.fenced_with,
            logged,
            markers,
        })
    }

    /// AddPartitionsToTxn / AddOffsetsToTxn.
    fn add_partitions(
        &mut self,
        p: &Producer,
        partitions: &[(String, i32)],
    ) -> Result<std::result::Result<Vec<Logged>, CoordinatorError>> {
        let tid = p.transactional_id.as_deref().unwrap_or_default();
        let now = self.tick();
        match self
            .coordinator
            .add_partitions(tid, p.producer_id, p.epoch, partitions, now)
        {
            Ok(steps) => Ok(Ok(self.run_steps(tid, steps)?.0)),
            Err(e) => Ok(Err(e)),
        }
    }

    /// EndTxn: the coordinator's records and markers, and the epoch the
    /// producer goes on with (bumped under transaction version 2).
    fn end_transaction(
        &mut self,
        p: &Producer,
        commit: bool,
    ) -> Result<std::result::Result<(Written, i16), CoordinatorError>> {
        let tid = p.transactional_id.as_deref().unwrap_or_default();
        let now = self.tick();
        match self
            .coordinator
            .end_transaction(tid, p.producer_id, p.epoch, commit, now)
        {
            Ok(ended) => Ok(Ok((
                self.run_steps(tid, ended.steps)?,
                ended.producer_epoch,
            ))),
            Err(e) => Ok(Err(e)),
        }
    }

    /// An offset commit of `group` for the input partition: plain, or
    /// inside `p`'s transaction (TxnOffsetCommit: the group coordinator
    /// writes a transactional batch of the producer's id and epoch with
    /// sequence 0, origin COORDINATOR).
    fn commit_offset(
        &mut self,
        group: &str,
        offset: i64,
        txn: Option<&Producer>,
    ) -> Result<Produced> {
        let ts = self.tick();
        let record = commit_record_v3(group, ORDERS, 0, offset as u64, -1, "", ts);
        let spec = match txn {
            Some(p) => BatchSpec {
                transactional: true,
                producer_id: p.producer_id,
                producer_epoch: p.epoch,
                base_sequence: 0,
                ..BatchSpec::default()
            },
            None => BatchSpec::default(),
        };
        self.produce(
            KLOG_OFFSETS_TOPIC,
            0,
            Origin::Coordinator,
            &spec,
            &[record],
            0,
        )
    }

    /// Write the producer snapshot a broker would write now (at a roll or
    /// a clean shutdown), named after the offset it is valid up to.
    fn write_snapshot(&mut self, topic: &str, partition: i32) -> Result<(PathBuf, i64, Vec<u8>)> {
        let dir = self.dir.clone();
        let l = self.leader(topic, partition)?;
        let offset = l.state.map_end_offset();
        let bytes = crate::txn::snapshot::encode(&l.state.snapshot());
        let path = dir
            .join(format!("{topic}-{partition}"))
            .join(crate::log::segment_file_name(offset, "snapshot"));
        durable::replace(&Disk, &path, &bytes)?;
        Ok((path, offset, bytes))
    }
}

/// The coordinator's records and markers of one request.
type Written = (Vec<Logged>, Vec<MarkerWritten>);

struct InitDone {
    producer_id: i64,
    producer_epoch: i16,
    fenced_with: Option<i16>,
    logged: Vec<Logged>,
    markers: Vec<MarkerWritten>,
}

/// A producer client: its id and epoch, and the next sequence per partition.
#[derive(Debug, Clone)]
struct Producer {
    transactional_id: Option<String>,
    /// -1: a plain producer.
    producer_id: i64,
    epoch: i16,
    next_sequence: BTreeMap<(String, i32), i32>,
    /// Partitions added to the open transaction.
    in_transaction: BTreeSet<(String, i32)>,
    /// The last request, to resend it.
    last: Option<(String, BatchSpec, Vec<NewRecord>)>,
}

impl Producer {
    fn new(transactional_id: Option<&str>, producer_id: i64, epoch: i16) -> Self {
        Producer {
            transactional_id: transactional_id.map(String::from),
            producer_id,
            epoch,
            next_sequence: BTreeMap::new(),
            in_transaction: BTreeSet::new(),
            last: None,
        }
    }

    /// Send `records` to `topic`-0 as one batch (a transactional producer
    /// adds the partition to its transaction first).
    fn send(
        &mut self,
        broker: &mut Broker,
        topic: &str,
        records: Vec<NewRecord>,
    ) -> Result<std::result::Result<(Produced, Vec<Logged>), CoordinatorError>> {
        let tp = (topic.to_string(), 0);
        let mut logged = Vec::new();
        if self.transactional_id.is_some() && !self.in_transaction.contains(&tp) {
            match broker.add_partitions(self, std::slice::from_ref(&tp))? {
                Ok(l) => logged = l,
                Err(e) => return Ok(Err(e)),
            }
            self.in_transaction.insert(tp.clone());
        }
        let base_sequence = if self.producer_id >= 0 {
            *self.next_sequence.get(&tp).unwrap_or(&0)
        } else {
            -1
        };
        let spec = BatchSpec {
            producer_id: self.producer_id,
            producer_epoch: if self.producer_id >= 0 {
                self.epoch
            } else {
                -1
            },
            base_sequence,
            transactional: self.transactional_id.is_some(),
            ..BatchSpec::default()
        };
        let produced = broker.produce(topic, 0, Origin::Client, &spec, &records, 0)?;
        if self.producer_id >= 0 && !matches!(produced, Produced::Rejected(_)) {
            self.next_sequence.insert(
                tp,
                crate::txn::producer::increment_sequence(base_sequence, records.len() as i32),
            );
        }
        self.last = Some((topic.to_string(), spec, records));
        Ok(Ok((produced, logged)))
    }

    /// The transaction ended, EndTxn answering with `epoch`: a new epoch
    /// (transaction version 2) restarts every sequence at 0
    /// (`TransactionManager` resets them with the epoch bump).
    fn end_transaction(&mut self, epoch: i16) {
        self.in_transaction.clear();
        if epoch != self.epoch {
            self.epoch = epoch;
            self.next_sequence.clear();
        }
    }

    /// Resend the last request as it was (its acknowledgement was lost).
    fn resend(&self, broker: &mut Broker) -> Result<Produced> {
        let Some((topic, spec, records)) = &self.last else {
            return Err(Error::Invalid("nothing to resend".into()));
        };
        broker.produce(topic, 0, Origin::Client, spec, records, 0)
    }
}

/// The order number in a key `order-NN`.
fn order_of(key: Option<&[u8]>) -> Option<u32> {
    std::str::from_utf8(key?)
        .ok()?
        .strip_prefix("order-")?
        .parse()
        .ok()
}

/// Run the whole demo in `dir` (locked for the run).
pub fn run(dir: &Path, opts: &Options) -> Result<EosDemo> {
    let mut broker = Broker::open(dir, opts.now_ms, opts.transaction_version)?;
    let idempotence = idempotence(&mut broker)?;
    produce_orders(&mut broker, opts.orders)?;
    let pipeline = pipeline_run(&mut broker, Guarantee::Transactional, opts)?;
    let state = coordinator_state(dir, TRANSACTIONAL_ID)?;
    check(
        state.as_deref() == Some(TxnState::CompleteCommit.name()),
        || {
            format!(
                "{TRANSACTIONAL_ID} ends {state:?} in __transaction_state-0, not CompleteCommit"
            )
        },
    )?;
    let fencing = fencing(&mut broker)?;
    let mut comparison = Vec::new();
    for g in [Guarantee::AtLeastOnce, Guarantee::Idempotent] {
        let p = pipeline_run(&mut broker, g, opts)?;
        comparison.push(compare(&p, opts.orders)?);
    }
    comparison.push(compare(&pipeline, opts.orders)?);
    Ok(EosDemo {
        transaction_version: opts.transaction_version.level(),
        idempotence,
        pipeline,
        fencing,
        comparison,
    })
}

/// The orders, one batch of a plain producer.
fn produce_orders(broker: &mut Broker, n: usize) -> Result<()> {
    let ts = broker.tick();
    let records: Vec<NewRecord> = (0..n)
        .map(|i| NewRecord {
            key: Some(format!("order-{i:02}").into_bytes()),
            value: Some(format!("{} x dish {}", i % 3 + 1, i % 7).into_bytes()),
            headers: Vec::new(),
            timestamp: ts,
        })
        .collect();
    broker.produce(
        ORDERS,
        0,
        Origin::Client,
        &BatchSpec::default(),
        &records,
        0,
    )?;
    Ok(())
}

fn records(broker: &mut Broker, keys: &[String]) -> Vec<NewRecord> {
    let ts = broker.tick();
    keys.iter()
        .map(|k| NewRecord {
            key: Some(k.clone().into_bytes()),
            value: Some(format!("{k}: paid").into_bytes()),
            headers: Vec::new(),
            timestamp: ts,
        })
        .collect()
}

/// Part 1: one idempotent producer, eight requests.
fn idempotence(broker: &mut Broker) -> Result<Idempotence> {
    let init = broker.init_producer_id(None)?;
    let pid = init.producer_id;
    // (epoch, first sequence, keys, note); sequences follow the keys' numbers.
    let plan: [(i16, i32, [u32; 2], &str); 8] = [
        (0, 0, [0, 1], "the first batch"),
        (0, 2, [2, 3], "the next batch; its acknowledgement is lost"),
        (0, 2, [2, 3], "the producer resends it, same sequences"),
        (0, 6, [6, 7], "a batch sent while the one with sequences 4..5 is still in flight"),
        (0, 4, [4, 5], "the batch with sequences 4..5 arrives"),
        (0, 6, [6, 7], "the producer resends the refused batch"),
        (1, 0, [8, 9], "a batch timed out unanswered: the producer bumps its epoch (KIP-360), restarts at sequence 0"),
        (0, 8, [10, 11], "a request of epoch 0 still in flight arrives late"),
    ];
    let mut requests = Vec::new();
    for (i, (epoch, seq, keys, note)) in plan.iter().enumerate() {
        let keys: Vec<String> = keys.iter().map(|k| format!("payment-{k:02}")).collect();
        let recs = records(broker, &keys);
        let spec = BatchSpec {
            producer_id: pid,
            producer_epoch: *epoch,
            base_sequence: *seq,
            ..BatchSpec::default()
        };
        let incoming = Incoming::of(&spec, &recs)?
            .ok_or_else(|| Error::Invalid("an idempotent batch without a producer id".into()))?;
        let leader = broker.leader(PAYMENTS, 0)?;
        let before = leader.state.clone();
        let position = std::fs::metadata(leader.appender.active_log())
            .map(|m| m.len())
            .unwrap_or(0);
        let produced = broker.produce(PAYMENTS, 0, Origin::Client, &spec, &recs, 0)?;
        let log_end_offset = broker.leader(PAYMENTS, 0)?.appender.next_offset();
        let (outcome, error, range) = match &produced {
            Produced::Appended(r) => ("appended", None, Some(r.clone())),
            Produced::Duplicate(r) => ("duplicate", None, Some(r.clone())),
            Produced::Rejected(r) => ("rejected", Some(r.exception().to_string()), None),
        };
        requests.push(Request {
            request: i as u32 + 1,
            note: note.to_string(),
            producer_epoch: *epoch,
            first_sequence: *seq,
            last_sequence: incoming.last_sequence(),
            outcome: outcome.into(),
            error,
            first_offset: range.as_ref().map(|r| *r.start()),
            last_offset: range.as_ref().map(|r| *r.end()),
            position: matches!(produced, Produced::Appended(_)).then_some(position),
            rule: explain(&before, &incoming, &produced),
            log_end_offset,
        });
    }
    // The figures the story promises, from the rule, not from the run.
    let outcomes: Vec<&str> = requests.iter().map(|r| r.outcome.as_str()).collect();
    check(
        outcomes
            == [
                "appended",
                "appended",
                "duplicate",
                "rejected",
                "appended",
                "appended",
                "appended",
                "rejected",
            ],
        || format!("the leader's answers were {outcomes:?}"),
    )?;
    let (path, offset, bytes) = broker.write_snapshot(PAYMENTS, 0)?;
    let p = Partition::open(&broker.dir.join(format!("{PAYMENTS}-0")))?;
    let log_end_offset = p.log_end_offset()?;
    check(log_end_offset == 10 && offset == 10, || {
        format!("payments-0 ends at {log_end_offset}, the snapshot is at {offset}, not 10")
    })?;
    // klog's own readers agree with what the leader kept.
    let snap = crate::txn::snapshot::decode(&bytes).map_err(|error| Error::Decode {
        path: path.clone(),
        error,
    })?;
    let mismatches = crate::txn::snapshot::check(&p, &path, offset, &snap)?;
    check(mismatches.is_empty(), || {
        format!("the snapshot disagrees with the log: {mismatches:?}")
    })?;
    let state = analyze(&p, &TxnOptions::default())?;
    check(state.findings.is_empty(), || {
        format!("payments-0 has producer findings: {:?}", state.findings)
    })?;
    let mut snapshot = Vec::new();
    if let Some(e) = file_layout::layout(FileKind::Snapshot { offset }, &bytes, &mut |f| {
        snapshot.push(f)
    }) {
        return Err(Error::Invalid(format!("the snapshot's layout: {e}")));
    }
    Ok(Idempotence {
        topic: PAYMENTS.into(),
        partition: 0,
        producer_id: pid,
        requests,
        log_end_offset,
        snapshot_file: relative(&broker.dir, &path),
        snapshot_offset: offset,
        snapshot,
    })
}

fn relative(dir: &Path, path: &Path) -> String {
    path.strip_prefix(dir).unwrap_or(path).display().to_string()
}

/// What the leader compared for `b`, given the state before it.
fn explain(before: &ProducerStateManager, b: &Incoming, produced: &Produced) -> String {
    let entry = before.entry(b.producer_id);
    match produced {
        Produced::Duplicate(r) => format!(
            "epoch {} and sequences {}..={} are those of a batch kept (the last {}), at offsets {}..={}",
            b.epoch,
            b.base_sequence,
            b.last_sequence(),
            crate::txn::producer::NUM_BATCHES_TO_RETAIN,
            r.start(),
            r.end()
        ),
        Produced::Rejected(r) => r.to_string(),
        Produced::Appended(_) => match entry {
            None => format!(
                "producer {} is new to the partition: any first sequence is taken",
                b.producer_id
            ),
            Some(e) if e.epoch != b.epoch => format!(
                "epoch {} is above {}: a new epoch starts at sequence 0, the kept batches are dropped",
                b.epoch, e.epoch
            ),
            Some(e) => format!(
                "sequence {} = last sequence {} + 1",
                b.base_sequence,
                e.last_seq()
            ),
        },
    }
}

/// The loop under guarantee `g`, through the crash points of `opts`.
fn pipeline_run(broker: &mut Broker, g: Guarantee, opts: &Options) -> Result<Pipeline> {
    let output = output_topic(g);
    let group = group_of(g);
    let tid = (g == Guarantee::Transactional).then_some(TRANSACTIONAL_ID);
    // The topics exist before the application starts.
    broker.leader(&output, 0)?;
    broker.leader(KLOG_OFFSETS_TOPIC, 0)?;
    let mut crashes = opts.crash_points.iter().copied();
    let mut retry_due = true;
    let mut instances = Vec::new();
    let end_of_orders = opts.orders as i64;
    loop {
        let number = instances.len() as u32 + 1;
        check(number <= 20, || "the loop did not finish".into())?;
        let init = match g {
            Guarantee::AtLeastOnce => InitDone {
                producer_id: -1,
                producer_epoch: -1,
                fenced_with: None,
                logged: Vec::new(),
                markers: Vec::new(),
            },
            _ => broker.init_producer_id(tid)?,
        };
        let mut producer = Producer::new(tid, init.producer_id, init.producer_epoch);
        let mut consumer = Consumer::new(&broker.dir, &group, ORDERS, 0);
        let resumed_from = consumer.seek_to_committed()?;
        let crash_at = crashes.next();
        let mut instance = Instance {
            instance: number,
            producer_id: init.producer_id,
            producer_epoch: init.producer_epoch,
            fenced_with: init.fenced_with,
            coordinator: init.logged,
            markers: init.markers,
            resumed_from,
            polls: Vec::new(),
            crash: None,
        };
        let mut crashed = None;
        loop {
            let polled = consumer.poll(opts.poll_size)?;
            let (Some(first), Some(last)) = (polled.first(), polled.last()) else {
                break;
            };
            let mut poll = Poll {
                first_order: first.offset,
                last_order: last.offset,
                invoices: None,
                resend: None,
                committed_offset: None,
                commit_log_offset: None,
                coordinator: Vec::new(),
                markers: Vec::new(),
                epoch_after_commit: None,
            };
            let first_poll = instance.polls.is_empty();
            let at = |c: CrashPoint| crash_at == Some(c) && first_poll;
            if at(CrashPoint::BeforeProduce) {
                crashed = Some(CrashPoint::BeforeProduce);
                instance.polls.push(poll);
                break;
            }
            let ts = broker.tick();
            let invoices: Vec<NewRecord> = polled
                .iter()
                .map(|r| NewRecord {
                    key: r.key.clone(),
                    value: Some(
                        format!(
                            "invoice for {}",
                            String::from_utf8_lossy(r.value.as_deref().unwrap_or_default())
                        )
                        .into_bytes(),
                    ),
                    headers: Vec::new(),
                    timestamp: ts,
                })
                .collect();
            let (produced, logged) = producer
                .send(broker, &output, invoices)?
                .map_err(|e| Error::Invalid(format!("the coordinator refused the loop: {e}")))?;
            poll.coordinator.extend(logged);
            match produced {
                Produced::Appended(r) => {
                    poll.invoices = Some(Offsets {
                        first_offset: *r.start(),
                        last_offset: *r.end(),
                    })
                }
                other => return Err(Error::Invalid(format!("invoices not appended: {other:?}"))),
            }
            if retry_due {
                retry_due = false;
                poll.resend = Some(match producer.resend(broker)? {
                    Produced::Appended(r) => {
                        format!("appended again at {}..={}", r.start(), r.end())
                    }
                    Produced::Duplicate(r) => {
                        format!("dropped, a duplicate of {}..={}", r.start(), r.end())
                    }
                    Produced::Rejected(r) => format!("rejected: {r}"),
                });
            }
            if at(CrashPoint::AfterProduce) {
                crashed = Some(CrashPoint::AfterProduce);
                instance.polls.push(poll);
                break;
            }
            let next = consumer.position;
            let txn = if g == Guarantee::Transactional {
                // sendOffsetsToTransaction: AddOffsetsToTxn adds the
                // group's offsets partition, then TxnOffsetCommit.
                let logged = broker
                    .add_partitions(&producer, &[(KLOG_OFFSETS_TOPIC.to_string(), 0)])?
                    .map_err(|e| Error::Invalid(format!("AddOffsetsToTxn refused: {e}")))?;
                poll.coordinator.extend(logged);
                Some(&producer)
            } else {
                None
            };
            match broker.commit_offset(&group, next, txn)? {
                Produced::Appended(r) => {
                    poll.committed_offset = Some(next);
                    poll.commit_log_offset = Some(*r.start());
                }
                other => return Err(Error::Invalid(format!("offset commit refused: {other:?}"))),
            }
            if at(CrashPoint::AfterOffsets) {
                crashed = Some(CrashPoint::AfterOffsets);
                instance.polls.push(poll);
                break;
            }
            if g == Guarantee::Transactional {
                let ((logged, markers), epoch) = broker
                    .end_transaction(&producer, true)?
                    .map_err(|e| Error::Invalid(format!("commitTransaction refused: {e}")))?;
                poll.coordinator.extend(logged);
                poll.markers.extend(markers);
                poll.epoch_after_commit = Some(epoch);
                producer.end_transaction(epoch);
            }
            instance.polls.push(poll);
            if at(CrashPoint::AfterMarker) {
                crashed = Some(CrashPoint::AfterMarker);
                break;
            }
        }
        if let Some(at) = crashed {
            instance.crash = Some(Crash {
                at,
                view: view(broker, &output, &group)?,
            });
            instances.push(instance);
            continue;
        }
        instances.push(instance);
        break;
    }
    let end = view(broker, &output, &group)?;
    check(end.committed_offset == Some(end_of_orders), || {
        format!(
            "{group} committed {:?} at the end, not {end_of_orders}",
            end.committed_offset
        )
    })?;
    Ok(Pipeline {
        guarantee: g,
        input: format!("{ORDERS}-0"),
        output: format!("{output}-0"),
        group,
        transactional_id: tid.map(String::from),
        orders: opts.orders,
        poll_size: opts.poll_size,
        crash_points: opts.crash_points.clone(),
        instances,
        end,
    })
}

/// What readers see of `topic`-0 and of `group`'s commit now.
fn view(broker: &Broker, topic: &str, group: &str) -> Result<View> {
    let p = Partition::open(&broker.dir.join(format!("{topic}-0")))?;
    let lso = lso_at_high_watermark(&p)?;
    let aborted = collect_aborted(&p, 0, lso)?
        .into_iter()
        .map(|a| Aborted {
            producer_id: a.producer_id,
            first_offset: a.first_offset,
            last_offset: a.last_offset,
            last_stable_offset: a.last_stable_offset,
        })
        .collect();
    let read = |isolation: Isolation| -> Result<Vec<u32>> {
        let mut c = Consumer::new(&broker.dir, "reader", topic, 0).with_isolation(isolation);
        let mut out = Vec::new();
        loop {
            let batch = c.poll(100)?;
            if batch.is_empty() {
                break;
            }
            out.extend(batch.iter().filter_map(|r| order_of(r.key.as_deref())));
        }
        Ok(out)
    };
    let mut replay = Replay::new(ReplayOptions::default());
    replay.replay_partition(&Partition::open(
        &broker.dir.join(format!("{KLOG_OFFSETS_TOPIC}-0")),
    )?)?;
    let pending = replay
        .pending()
        .filter(|(_, _, g, t, p, _)| *g == group && *t == ORDERS && *p == 0)
        .map(|(_, pid, _, _, _, offset)| Pending {
            producer_id: pid,
            committed_offset: offset,
        })
        .collect();
    Ok(View {
        log_end_offset: p.log_end_offset()?,
        last_stable_offset: lso,
        aborted,
        read_committed: read(Isolation::ReadCommitted)?,
        read_uncommitted: read(Isolation::ReadUncommitted)?,
        committed_offset: replay.get(group, ORDERS, 0).map(|c| c.offset),
        pending,
    })
}

/// A run's figures, checked against each other.
fn compare(p: &Pipeline, orders: usize) -> Result<Comparison> {
    let dups = |seen: &[u32]| seen.len() - seen.iter().collect::<BTreeSet<_>>().len();
    let e = &p.end;
    let missing = (0..orders as u32)
        .filter(|o| !e.read_committed.contains(o))
        .count();
    check(missing == 0, || {
        format!("{}: {missing} orders without an invoice", p.output)
    })?;
    if p.guarantee == Guarantee::Transactional {
        let sorted: Vec<u32> = (0..orders as u32).collect();
        check(e.read_committed == sorted, || {
            format!(
                "read_committed saw {:?}, not every order once",
                e.read_committed
            )
        })?;
    } else {
        check(e.read_committed == e.read_uncommitted, || {
            "without transactions both isolation levels read the same".into()
        })?;
    }
    let resend = p
        .instances
        .iter()
        .flat_map(|i| &i.polls)
        .find_map(|poll| poll.resend.clone())
        .unwrap_or_else(|| "not sent".into());
    Ok(Comparison {
        guarantee: p.guarantee,
        topic: p.output.clone(),
        resend,
        read_uncommitted: e.read_uncommitted.len(),
        read_uncommitted_duplicates: dups(&e.read_uncommitted),
        read_committed: e.read_committed.len(),
        read_committed_duplicates: dups(&e.read_committed),
        missing,
    })
}

/// Part 3: instance B fences instance A.
fn fencing(broker: &mut Broker) -> Result<Fencing> {
    let mut steps = Vec::new();
    let mut step = |instance: &str, action: String, result: String| {
        steps.push(FenceStep {
            instance: instance.into(),
            action,
            result,
        })
    };
    let a_init = broker.init_producer_id(Some(FENCING_ID))?;
    let mut a = Producer::new(Some(FENCING_ID), a_init.producer_id, a_init.producer_epoch);
    step(
        "A",
        format!("InitProducerId({FENCING_ID})"),
        format!("producer {}, epoch {}", a.producer_id, a.epoch),
    );
    let recs = records(broker, &["refund-1".to_string()]);
    let (produced, _) = a
        .send(broker, REFUNDS, recs)?
        .map_err(|e| Error::Invalid(format!("A's first send: {e}")))?;
    step(
        "A",
        "send refund-1 in a transaction".into(),
        describe(&produced),
    );
    let b_init = broker.init_producer_id(Some(FENCING_ID))?;
    let mut b = Producer::new(Some(FENCING_ID), b_init.producer_id, b_init.producer_epoch);
    let fenced = b_init
        .fenced_with
        .ok_or_else(|| Error::Invalid("B's InitProducerId fenced nothing".into()))?;
    step(
        "B",
        format!("InitProducerId({FENCING_ID}): A's transaction is Ongoing"),
        format!(
            "fenced with epoch {fenced}: ABORT at {}; B gets epoch {}",
            b_init
                .markers
                .iter()
                .map(|m| format!("{}-{} offset {}", m.topic, m.partition, m.offset))
                .collect::<Vec<_>>()
                .join(", "),
            b.epoch
        ),
    );
    let recs = records(broker, &["refund-1".to_string()]);
    let (produced, _) = b
        .send(broker, REFUNDS, recs)?
        .map_err(|e| Error::Invalid(format!("B's send: {e}")))?;
    step(
        "B",
        "send refund-1 in a transaction".into(),
        describe(&produced),
    );
    let ((_, markers), epoch) = broker
        .end_transaction(&b, true)?
        .map_err(|e| Error::Invalid(format!("B's commit: {e}")))?;
    b.end_transaction(epoch);
    step(
        "B",
        "commitTransaction".into(),
        format!(
            "COMMIT at {}",
            markers
                .iter()
                .map(|m| format!("{}-{} offset {}", m.topic, m.partition, m.offset))
                .collect::<Vec<_>>()
                .join(", ")
        ),
    );
    let end_before = broker.leader(REFUNDS, 0)?.appender.next_offset();
    // A wakes up: its partition is already in its (old) transaction, so it
    // sends straight to the leader.
    let recs = records(broker, &["refund-2".to_string()]);
    let (late, _) = a
        .send(broker, REFUNDS, recs)?
        .map_err(|e| Error::Invalid(format!("A's late send: {e}")))?;
    check(
        matches!(
            late,
            Produced::Rejected(Rejection::InvalidProducerEpoch { .. })
        ),
        || format!("A's late write was not refused: {late:?}"),
    )?;
    step(
        "A",
        format!("send refund-2 with epoch {} (the zombie wakes up)", a.epoch),
        describe(&late),
    );
    let commit = broker.end_transaction(&a, true)?;
    check(
        matches!(commit, Err(CoordinatorError::ProducerFenced)),
        || format!("A's commit was not fenced: {commit:?}"),
    )?;
    step(
        "A",
        "commitTransaction".into(),
        format!(
            "{}: the coordinator knows epoch {}",
            CoordinatorError::ProducerFenced.name(),
            b.epoch
        ),
    );
    let dir = broker.dir.join(format!("{REFUNDS}-0"));
    let p = Partition::open(&dir)?;
    let log_end_offset = p.log_end_offset()?;
    check(log_end_offset == end_before && log_end_offset == 4, || {
        format!("refunds-0 ends at {log_end_offset}, not 4")
    })?;
    let batches = on_disk(&p)?;
    let mut reader =
        Consumer::new(&broker.dir, "reader", REFUNDS, 0).with_isolation(Isolation::ReadCommitted);
    let read_committed: Vec<String> = reader
        .poll(100)?
        .iter()
        .map(|r| String::from_utf8_lossy(r.key.as_deref().unwrap_or_default()).into_owned())
        .collect();
    check(read_committed == ["refund-1"], || {
        format!("read_committed saw {read_committed:?}")
    })?;
    let producer_epoch = broker
        .leader(REFUNDS, 0)?
        .state
        .entry(b.producer_id)
        .map_or(-1, |e| e.epoch);
    check(producer_epoch == b.epoch, || {
        format!(
            "the partition holds epoch {producer_epoch}, not B's {}",
            b.epoch
        )
    })?;
    Ok(Fencing {
        topic: REFUNDS.into(),
        partition: 0,
        transactional_id: FENCING_ID.into(),
        steps,
        batches,
        log_end_offset,
        read_committed,
        producer_epoch,
    })
}

fn describe(p: &Produced) -> String {
    match p {
        Produced::Appended(r) if r.start() == r.end() => {
            format!("appended at offset {}", r.start())
        }
        Produced::Appended(r) => format!("appended at offsets {}..={}", r.start(), r.end()),
        Produced::Duplicate(r) => format!("duplicate of {}..={}", r.start(), r.end()),
        Produced::Rejected(r) => format!("{}: {r}; nothing appended", r.exception()),
    }
}

/// Every batch of `p`: offsets, producer, epoch, kind and keys.
fn on_disk(p: &Partition) -> Result<Vec<OnDisk>> {
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    let mut walk = p.walk(Policy::VALID_ENTRIES);
    while let Some(w) = walk.next_entry()? {
        let Entry::V2(b) = w.entry else { continue };
        let h = b.header;
        let mut kind = "data".to_string();
        let mut keys = Vec::new();
        if let Ok(records) = b.records(&mut scratch, crate::format::DecodeLimits::default()) {
            for r in records.flatten() {
                if h.is_control() {
                    if let Ok(c) = crate::format::control::decode(r.key, r.value, r.position) {
                        kind = c.kind.name().to_string();
                    }
                } else {
                    keys.push(String::from_utf8_lossy(r.key.unwrap_or_default()).into_owned());
                }
            }
        }
        out.push(OnDisk {
            first_offset: h.base_offset,
            last_offset: h.last_offset(),
            position: b.position,
            producer_id: h.producer_id,
            producer_epoch: h.producer_epoch,
            kind,
            keys,
        });
    }
    Ok(out)
}

/// The state `__transaction_state` holds for `transactional_id` now, by replaying it.
pub fn coordinator_state(dir: &Path, transactional_id: &str) -> Result<Option<String>> {
    let p = Partition::open(&dir.join(format!("{TRANSACTION_STATE_TOPIC}-0")))?;
    let view = crate::txn::txnlog::replay(&[&p], crate::format::DecodeLimits::default())?;
    Ok(view
        .transactions
        .get(transactional_id)
        .map(|m| crate::txn::txnlog::status_name(m.status).to_string()))
}
