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
//! ([`crate::inspect::consumer`], read_committed through the `.txnindex` files), the
//! offsets replay, [`crate::txn::analyze`] and the producer snapshot check.
//! Each run checks its own figures and fails instead of printing a wrong one.

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use crate::error::{Error, Result};
use crate::format::{BatchSpec, NewRecord};
use crate::log::Partition;
use crate::offsets::KLOG_OFFSETS_TOPIC;
use crate::txn::coordinator::{TransactionVersion, TxnState};
use crate::txn::producer::Origin;
use crate::txn::txnlog::TRANSACTION_STATE_TOPIC;

mod broker;
mod fencing;
mod idempotence;
mod pipeline;
mod results;

use broker::Broker;
use fencing::fencing;
use idempotence::idempotence;
use pipeline::{compare, pipeline_run};
pub use results::{
    Aborted, Comparison, Crash, EosDemo, FenceStep, Fencing, Idempotence, Instance, Logged,
    MarkerWritten, Offsets, OnDisk, Pending, Pipeline, Poll, Request, View,
};

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

fn check(ok: bool, what: impl FnOnce() -> String) -> Result<()> {
    if ok {
        Ok(())
    } else {
        Err(Error::Invalid(format!("self-check failed: {}", what())))
    }
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

/// The state `__transaction_state` holds for `transactional_id` now, by replaying it.
pub fn coordinator_state(dir: &Path, transactional_id: &str) -> Result<Option<String>> {
    let p = Partition::open(&dir.join(format!("{TRANSACTION_STATE_TOPIC}-0")))?;
    let view = crate::txn::txnlog::replay(&[&p], crate::format::DecodeLimits::default())?;
    Ok(view
        .transactions
        .get(transactional_id)
        .map(|m| crate::txn::txnlog::status_name(m.status).to_string()))
}
