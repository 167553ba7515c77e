//! Part 1: one idempotent producer's requests and the leader's answers.

use std::path::Path;

use super::broker::Broker;
use super::{check, records, Idempotence, Request, PAYMENTS};
use crate::error::{Error, Result};
use crate::format::BatchSpec;
use crate::inspect::layout::sidecar::{self, FileKind};
use crate::log::Partition;
use crate::txn::producer::{Incoming, Origin, Produced, ProducerStateManager};
use crate::txn::{analyze, TxnOptions};

/// Part 1: one idempotent producer, eight requests.
pub(super) fn idempotence(broker: &mut Broker) -> Result<Idempotence> {
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
        let spec = BatchSpec {
            producer_id: pid,
            producer_epoch: *epoch,
            base_sequence: *seq,
            ..BatchSpec::default()
        };
        requests.push(send_payments(broker, i as u32 + 1, note, &spec, keys)?);
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
    let log_end_offset = check_payments(broker, &path, offset, &bytes)?;
    let mut snapshot = Vec::new();
    if let Some(e) = sidecar::layout(FileKind::Snapshot { offset }, &bytes, &mut |f| {
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

/// Request `number` (`note` says what the producer is doing): the
/// payments `keys` (`payment-NN`) in one batch as `spec` says, and the
/// leader's answer.
fn send_payments(
    broker: &mut Broker,
    number: u32,
    note: &str,
    spec: &BatchSpec,
    keys: &[u32],
) -> Result<Request> {
    let keys: Vec<String> = keys.iter().map(|k| format!("payment-{k:02}")).collect();
    let recs = records(broker, &keys);
    let incoming = Incoming::of(spec, &recs)?
        .ok_or_else(|| Error::Invalid("an idempotent batch without a producer id".into()))?;
    let leader = broker.leader(PAYMENTS, 0)?;
    let before = leader.state.clone();
    let position = std::fs::metadata(leader.appender.active_log())
        .map(|m| m.len())
        .unwrap_or(0);
    let produced = broker.produce(PAYMENTS, 0, Origin::Client, spec, &recs, 0)?;
    let log_end_offset = broker.leader(PAYMENTS, 0)?.appender.next_offset();
    let (outcome, error, range) = match &produced {
        Produced::Appended(r) => ("appended", None, Some(r.clone())),
        Produced::Duplicate(r) => ("duplicate", None, Some(r.clone())),
        Produced::Rejected(r) => ("rejected", Some(r.exception().to_string()), None),
    };
    Ok(Request {
        request: number,
        note: note.to_string(),
        producer_epoch: spec.producer_epoch,
        first_sequence: spec.base_sequence,
        last_sequence: incoming.last_sequence(),
        outcome: outcome.into(),
        error,
        first_offset: range.as_ref().map(|r| *r.start()),
        last_offset: range.as_ref().map(|r| *r.end()),
        position: matches!(produced, Produced::Appended(_)).then_some(position),
        rule: explain(&before, &incoming, &produced),
        log_end_offset,
    })
}

/// klog's own readers agree with what the leader kept: payments-0 ends at
/// 10, where the snapshot written (`path`, `bytes`) is, the snapshot
/// matches the log and the producer state has no findings. The log end.
fn check_payments(broker: &Broker, path: &Path, offset: i64, bytes: &[u8]) -> Result<i64> {
    let p = Partition::open(&broker.dir.join(format!("{PAYMENTS}-0")))?;
    let log_end_offset = p.log_end_offset()?;
    check(log_end_offset == 10 && offset == 10, || {
        format!("payments-0 ends at {log_end_offset}, the snapshot is at {offset}, not 10")
    })?;
    let snap = crate::txn::snapshot::decode(bytes).map_err(|error| Error::Decode {
        path: path.to_path_buf(),
        error,
    })?;
    let mismatches = crate::txn::snapshot::check(&p, path, offset, &snap)?;
    check(mismatches.is_empty(), || {
        format!("the snapshot disagrees with the log: {mismatches:?}")
    })?;
    let state = analyze(&p, &TxnOptions::default())?;
    check(state.findings.is_empty(), || {
        format!("payments-0 has producer findings: {:?}", state.findings)
    })?;
    Ok(log_end_offset)
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
