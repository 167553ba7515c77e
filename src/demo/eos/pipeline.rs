//! Part 2: the consume-transform-produce loop through the crash points,
//! what readers see after each crash, and each guarantee's figures.

use std::collections::BTreeSet;

use super::broker::{Broker, InitDone, Producer};
use super::{
    check, group_of, output_topic, Aborted, Comparison, Crash, CrashPoint, Guarantee, Instance,
    Offsets, Options, Pending, Pipeline, Poll, View, ORDERS, TRANSACTIONAL_ID,
};
use crate::error::{Error, Result};
use crate::format::NewRecord;
use crate::inspect::consumer::{Consumed, Consumer};
use crate::log::Partition;
use crate::offsets::{Replay, ReplayOptions, KLOG_OFFSETS_TOPIC};
use crate::txn::fetch::{collect_aborted, lso_at_high_watermark};
use crate::txn::producer::Produced;
use crate::txn::Isolation;

/// The loop under guarantee `g`, through the crash points of `opts`.
pub(super) fn pipeline_run(broker: &mut Broker, g: Guarantee, opts: &Options) -> Result<Pipeline> {
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
        let mut app = App::start(broker, g, tid, number, &output, &group)?;
        let crash_at = crashes.next();
        let crashed = app.run(broker, crash_at, opts.poll_size, &mut retry_due)?;
        let mut instance = app.instance;
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

/// One instance of the application under a guarantee: its producer, its
/// consumer of the orders, and what it did.
struct App<'a> {
    guarantee: Guarantee,
    output: &'a str,
    group: &'a str,
    producer: Producer,
    consumer: Consumer,
    instance: Instance,
}

impl<'a> App<'a> {
    /// Instance `number` starts: InitProducerId for `tid` (none for a plain
    /// producer), and its consumer resumes from the group's commit.
    fn start(
        broker: &mut Broker,
        guarantee: Guarantee,
        tid: Option<&str>,
        number: u32,
        output: &'a str,
        group: &'a str,
    ) -> Result<Self> {
        let init = match guarantee {
            Guarantee::AtLeastOnce => InitDone {
                producer_id: -1,
                producer_epoch: -1,
                fenced_with: None,
                logged: Vec::new(),
                markers: Vec::new(),
            },
            _ => broker.init_producer_id(tid)?,
        };
        let producer = Producer::new(tid, init.producer_id, init.producer_epoch);
        let mut consumer = Consumer::new(&broker.dir, group, ORDERS, 0);
        let resumed_from = consumer.seek_to_committed()?;
        let instance = Instance {
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
        Ok(App {
            guarantee,
            output,
            group,
            producer,
            consumer,
            instance,
        })
    }

    /// Poll until the orders run out, or until the crash at `crash_at`
    /// (at the instance's first poll); the crash point, if it crashed.
    fn run(
        &mut self,
        broker: &mut Broker,
        crash_at: Option<CrashPoint>,
        poll_size: usize,
        retry_due: &mut bool,
    ) -> Result<Option<CrashPoint>> {
        loop {
            let polled = self.consumer.poll(poll_size)?;
            let (Some(first), Some(last)) = (polled.first(), polled.last()) else {
                return Ok(None);
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
            let first_poll = self.instance.polls.is_empty();
            let at = |c: CrashPoint| crash_at == Some(c) && first_poll;
            let crashed = self.process(broker, &polled, &mut poll, at, retry_due)?;
            self.instance.polls.push(poll);
            if crashed.is_some() {
                return Ok(crashed);
            }
        }
    }

    /// One poll's work: the invoices, the offsets, the commit; it stops at
    /// the first crash point `at` holds, which it returns.
    fn process(
        &mut self,
        broker: &mut Broker,
        polled: &[Consumed],
        poll: &mut Poll,
        at: impl Fn(CrashPoint) -> bool,
        retry_due: &mut bool,
    ) -> Result<Option<CrashPoint>> {
        if at(CrashPoint::BeforeProduce) {
            return Ok(Some(CrashPoint::BeforeProduce));
        }
        self.send_invoices(broker, polled, poll, retry_due)?;
        if at(CrashPoint::AfterProduce) {
            return Ok(Some(CrashPoint::AfterProduce));
        }
        self.commit_offsets(broker, poll)?;
        if at(CrashPoint::AfterOffsets) {
            return Ok(Some(CrashPoint::AfterOffsets));
        }
        if self.guarantee == Guarantee::Transactional {
            let ((logged, markers), epoch) = broker
                .end_transaction(&self.producer, true)?
                .map_err(|e| Error::Invalid(format!("commitTransaction refused: {e}")))?;
            poll.coordinator.extend(logged);
            poll.markers.extend(markers);
            poll.epoch_after_commit = Some(epoch);
            self.producer.end_transaction(epoch);
        }
        Ok(at(CrashPoint::AfterMarker).then_some(CrashPoint::AfterMarker))
    }

    /// An invoice per order polled, one batch; the first run of all
    /// resends it once, as after a lost acknowledgement.
    fn send_invoices(
        &mut self,
        broker: &mut Broker,
        polled: &[Consumed],
        poll: &mut Poll,
        retry_due: &mut bool,
    ) -> Result<()> {
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
        let (produced, logged) = self
            .producer
            .send(broker, self.output, invoices)?
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
        if *retry_due {
            *retry_due = false;
            poll.resend = Some(match self.producer.resend(broker)? {
                Produced::Appended(r) => {
                    format!("appended again at {}..={}", r.start(), r.end())
                }
                Produced::Duplicate(r) => {
                    format!("dropped, a duplicate of {}..={}", r.start(), r.end())
                }
                Produced::Rejected(r) => format!("rejected: {r}"),
            });
        }
        Ok(())
    }

    /// The group's commit of the consumer's position: plain, or inside the
    /// transaction (sendOffsetsToTransaction).
    fn commit_offsets(&mut self, broker: &mut Broker, poll: &mut Poll) -> Result<()> {
        let next = self.consumer.position;
        let txn = if self.guarantee == Guarantee::Transactional {
            // sendOffsetsToTransaction: AddOffsetsToTxn adds the
            // group's offsets partition, then TxnOffsetCommit.
            let logged = broker
                .add_partitions(&self.producer, &[(KLOG_OFFSETS_TOPIC.to_string(), 0)])?
                .map_err(|e| Error::Invalid(format!("AddOffsetsToTxn refused: {e}")))?;
            poll.coordinator.extend(logged);
            Some(&self.producer)
        } else {
            None
        };
        match broker.commit_offset(self.group, next, txn)? {
            Produced::Appended(r) => {
                poll.committed_offset = Some(next);
                poll.commit_log_offset = Some(*r.start());
            }
            other => return Err(Error::Invalid(format!("offset commit refused: {other:?}"))),
        }
        Ok(())
    }
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
pub(super) fn compare(p: &Pipeline, orders: usize) -> Result<Comparison> {
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

/// The order number in a key `order-NN`.
fn order_of(key: Option<&[u8]>) -> Option<u32> {
    std::str::from_utf8(key?)
        .ok()?
        .strip_prefix("order-")?
        .parse()
        .ok()
}
