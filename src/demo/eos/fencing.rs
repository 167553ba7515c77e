//! Part 3: a zombie instance fenced by a newer one of the same
//! transactional id.

use super::broker::{Broker, Producer};
use super::{check, records, FenceStep, Fencing, MarkerWritten, OnDisk, FENCING_ID, REFUNDS};
use crate::error::{Error, Result};
use crate::format::Entry;
use crate::inspect::consumer::Consumer;
use crate::log::{Partition, Policy};
use crate::txn::coordinator::CoordinatorError;
use crate::txn::producer::{Produced, Rejection};
use crate::txn::Isolation;

/// Part 3: instance B fences instance A.
pub(super) fn fencing(broker: &mut Broker) -> Result<Fencing> {
    let mut steps = Vec::new();
    let (a, b) = b_fences_a(broker, &mut steps)?;
    let end_before = zombie_wakes_up(broker, a, &b, &mut steps)?;
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

/// One step of the story: what `instance` did and what came of it.
fn step(steps: &mut Vec<FenceStep>, instance: &str, action: String, result: String) {
    steps.push(FenceStep {
        instance: instance.into(),
        action,
        result,
    });
}

/// `partition offset` of each marker, comma-separated.
fn marker_places(markers: &[MarkerWritten]) -> String {
    markers
        .iter()
        .map(|m| format!("{}-{} offset {}", m.topic, m.partition, m.offset))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A starts a transaction and sends refund-1; B, a new instance of the
/// same transactional id, fences it (its InitProducerId aborts A's
/// transaction), sends refund-1 again and commits. The producers A and B.
fn b_fences_a(broker: &mut Broker, steps: &mut Vec<FenceStep>) -> Result<(Producer, Producer)> {
    let a_init = broker.init_producer_id(Some(FENCING_ID))?;
    let mut a = Producer::new(Some(FENCING_ID), a_init.producer_id, a_init.producer_epoch);
    step(
        steps,
        "A",
        format!("InitProducerId({FENCING_ID})"),
        format!("producer {}, epoch {}", a.producer_id, a.epoch),
    );
    let recs = records(broker, &["refund-1".to_string()]);
    let (produced, _) = a
        .send(broker, REFUNDS, recs)?
        .map_err(|e| Error::Invalid(format!("A's first send: {e}")))?;
    step(
        steps,
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
        steps,
        "B",
        format!("InitProducerId({FENCING_ID}): A's transaction is Ongoing"),
        format!(
            "fenced with epoch {fenced}: ABORT at {}; B gets epoch {}",
            marker_places(&b_init.markers),
            b.epoch
        ),
    );
    let recs = records(broker, &["refund-1".to_string()]);
    let (produced, _) = b
        .send(broker, REFUNDS, recs)?
        .map_err(|e| Error::Invalid(format!("B's send: {e}")))?;
    step(
        steps,
        "B",
        "send refund-1 in a transaction".into(),
        describe(&produced),
    );
    let ((_, markers), epoch) = broker
        .end_transaction(&b, true)?
        .map_err(|e| Error::Invalid(format!("B's commit: {e}")))?;
    b.end_transaction(epoch);
    step(
        steps,
        "B",
        "commitTransaction".into(),
        format!("COMMIT at {}", marker_places(&markers)),
    );
    Ok((a, b))
}

/// A wakes up: its partition is already in its (old) transaction, so it
/// sends refund-2 straight to the leader, which refuses its epoch, and the
/// coordinator fences its commit. The log end before A's write.
fn zombie_wakes_up(
    broker: &mut Broker,
    mut a: Producer,
    b: &Producer,
    steps: &mut Vec<FenceStep>,
) -> Result<i64> {
    let end_before = broker.leader(REFUNDS, 0)?.appender.next_offset();
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
        steps,
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
        steps,
        "A",
        "commitTransaction".into(),
        format!(
            "{}: the coordinator knows epoch {}",
            CoordinatorError::ProducerFenced.name(),
            b.epoch
        ),
    );
    Ok(end_before)
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
