//! The run of `klog group-demo`: a consumer's two numbers (the position it
//! holds in memory, the committed offset on disk), shown by doing it in a
//! data directory. Orders are appended and commits written through the
//! append path ([`DemoDir`]), committed offsets are read back by replaying
//! the offsets log, and every figure of the document comes out of these
//! runs; each part checks its own figures and fails rather than show a
//! wrong one.
//!
//! The parts, in order:
//! 1. at-least-once (read, process, commit) crashing after a record: the
//!    restarted consumer processes again what came after the last commit
//!    (the redelivery window, position − committed);
//! 2. at-most-once (read, commit, process) on a fresh offsets log, the same
//!    crash: what was committed but not processed is lost (the loss
//!    window, committed − position); the two windows add up to the poll
//!    size, since the crash falls inside one poll;
//! 3. the orders log (`cleanup.policy=delete`) beside the offsets log
//!    (`compact`), and the partition of Kafka's `__consumer_offsets` that
//!    would hold the group (`Utils.abs(groupId.hashCode()) % 50`,
//!    [`crate::offsets::partition_for`]);
//! 4. three groups committing to the one offsets log, and the table its
//!    replay gives;
//! 5. deleting a group's offsets: a tombstone (a key with a null value)
//!    appended per committed partition, as the coordinator writes for an
//!    `OffsetDelete` (`kafka-consumer-groups --delete-offsets`);
//! 6. generation fencing: commits and fetches put to a classic group, by
//!    klog's rules beside Kafka's (`ClassicGroup.validateOffsetCommit` and
//!    `validateOffsetFetch`; [`crate::offsets::group_coordinator`] says
//!    where they differ).

use std::path::Path;

use schemars::JsonSchema;
use serde::Serialize;

use super::delivery::{Delivery, DemoDir, Scenario};
use crate::error::{Error, Result};
use crate::format::BatchSpec;
use crate::log::Partition;
use crate::offsets::group_coordinator::{ClassicGroup, GroupError, GroupState};
use crate::offsets::{
    partition_for, tombstone_records, Replay, ReplayOptions, KAFKA_DEFAULT_PARTITIONS,
    KLOG_OFFSETS_TOPIC,
};

/// The orders produced to `orders-0`.
pub const ORDERS: usize = 20;

/// What the run is given.
#[derive(Debug, Clone, Copy)]
pub struct Options<'a> {
    /// The consumer group.
    pub group: &'a str,
    /// Records per poll.
    pub poll_size: u32,
    /// The consumer crashes right after processing this many records.
    pub crash_after: u32,
    /// The time stamped on records and commits (epoch ms).
    pub now_ms: i64,
}

/// One poll of a delivery.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PollOut {
    /// 1 for the first.
    pub poll: u32,
    /// The offsets the poll returned.
    pub offsets: Vec<i64>,
    /// The offsets processed before the poll ended or the crash came.
    pub processed: Vec<i64>,
    pub crashed: bool,
    /// The offset committed in this poll, and the offset of the commit's
    /// record in `__offsets-0` (null: no commit).
    pub committed_offset: Option<u64>,
    pub log_offset: Option<i64>,
}

/// One delivery's run around the crash.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DeliveryOut {
    /// `at_least_once` (read, process, commit) or `at_most_once` (read,
    /// commit, process).
    pub delivery: &'static str,
    pub polls: Vec<PollOut>,
    /// The crashed consumer's position in memory.
    pub position: i64,
    /// The committed offset read back from the offsets log.
    pub committed_offset: u64,
    /// Offsets processed twice, and never.
    pub duplicated: Vec<i64>,
    pub lost: Vec<i64>,
}

/// One of the demo's two partitions.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PartitionOut {
    pub partition: &'static str,
    pub cleanup_policy: &'static str,
    pub log_end_offset: i64,
}

/// A group's commit in section 4, and where it was stored.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct CommitOut {
    pub group: String,
    pub committed_offset: u64,
    pub log_offset: i64,
}

/// A committed offset of the replayed table.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ReplayedOut {
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub committed_offset: i64,
}

/// The tombstone of section 5.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TombstoneOut {
    pub group: String,
    /// The topic-partitions whose keys it deletes.
    pub partitions: Vec<String>,
    pub log_offset: i64,
    pub live_keys_before: u64,
    pub live_keys_after: u64,
    pub log_end_offset: i64,
    /// The offsets log's end before it was appended.
    #[serde(skip)]
    pub log_end_offset_before: i64,
}

/// A request against the group's generation (section 6).
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct FencingOut {
    pub request: &'static str,
    pub member: &'static str,
    pub generation: i32,
    /// What klog's coordinator answers a commit and a fetch (`ok` or the error).
    pub commit: String,
    pub fetch: String,
    /// Where Kafka's rule answers otherwise (null: the same).
    pub kafka: Option<String>,
}

/// Every step and figure of the run.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct GroupDemo {
    pub group: String,
    pub poll_size: u32,
    pub crash_after: u32,
    /// The orders produced (offsets, both included).
    pub orders_first_offset: i64,
    pub orders_last_offset: i64,
    pub deliveries: Vec<DeliveryOut>,
    pub partitions: Vec<PartitionOut>,
    /// The group's partition of Kafka's `__consumer_offsets` (50 partitions).
    pub kafka_offsets_partition: i32,
    pub commits: Vec<CommitOut>,
    pub replayed: Vec<ReplayedOut>,
    pub tombstone: Option<TombstoneOut>,
    pub fencing: Vec<FencingOut>,
    /// The group the requests of `fencing` were put to: stable at its
    /// generation, its state changed per request.
    #[serde(skip)]
    pub fenced_group: ClassicGroup,
}

/// Run the demo in `dir` (which must exist; locked for the run).
pub fn run(dir: &Path, opts: &Options<'_>) -> Result<GroupDemo> {
    let (poll, crash) = (opts.poll_size as usize, opts.crash_after as usize);
    let demo = DemoDir::open(dir, opts.now_ms)?;
    // Part 1.
    let orders = demo.produce_orders("orders", ORDERS)?;
    let run = CrashRun {
        group: opts.group,
        poll,
        crash,
        end: orders.end() + 1,
    };
    let least = at_least_once(&demo, &run)?;
    // Part 2.
    let most = at_most_once(&demo, &run)?;
    let window = least.position - least.committed_offset as i64;
    let lost_window = most.committed_offset as i64 - most.position;
    // The crash comes after processing a record and before the next commit,
    // so it always falls inside one poll.
    if window + lost_window != poll as i64 {
        return Err(Error::Invalid(format!("self-check failed: windows {window} + {lost_window} do not add up to the poll size {poll}")));
    }
    // Part 3.
    let partitions = side_by_side(dir)?;
    // Part 4.
    let (commits, replay) = three_groups(dir, &demo, opts.group)?;
    // Part 5.
    let tombstone = delete_by_tombstone(dir, &demo, &replay, opts.now_ms)?;
    // Part 6.
    let fenced_group = ClassicGroup {
        group: opts.group.to_string(),
        state: GroupState::Stable,
        generation: 2,
        members: vec!["member-a".to_string(), "member-b".to_string()],
    };
    let fencing = FENCING_CASES
        .into_iter()
        .map(|(who, state, member, generation)| {
            let g = ClassicGroup {
                state,
                ..fenced_group.clone()
            };
            fencing_case(dir, &demo, &g, who, member, generation)
        })
        .collect::<Result<Vec<_>>>()?;
    Ok(GroupDemo {
        group: opts.group.to_string(),
        poll_size: opts.poll_size,
        crash_after: opts.crash_after,
        orders_first_offset: *orders.start(),
        orders_last_offset: *orders.end(),
        deliveries: vec![least, most],
        partitions,
        kafka_offsets_partition: partition_for(opts.group, KAFKA_DEFAULT_PARTITIONS),
        commits,
        replayed: replay
            .commits()
            .map(|(g, t, p, c)| ReplayedOut {
                group: g.to_string(),
                topic: t.to_string(),
                partition: p,
                committed_offset: c.offset,
            })
            .collect(),
        tombstone: Some(tombstone),
        fencing,
        fenced_group,
    })
}

/// The crash both deliveries run into: the group, the poll size, the
/// record after which the consumer crashes, and one past the last order.
struct CrashRun<'a> {
    group: &'a str,
    poll: usize,
    crash: usize,
    end: i64,
}

impl CrashRun<'_> {
    /// Consume the orders with `delivery` until the crash, then restart
    /// from the committed offset.
    fn run(&self, demo: &DemoDir, delivery: Delivery) -> Result<Scenario> {
        demo.run(
            delivery, self.group, "orders", self.poll, self.crash, self.end,
        )
    }
}

/// The polls of `s`, as the document has them.
fn delivery_out(delivery: &'static str, s: &Scenario) -> DeliveryOut {
    DeliveryOut {
        delivery,
        polls: s
            .polls
            .iter()
            .enumerate()
            .map(|(i, p)| PollOut {
                poll: i as u32 + 1,
                offsets: p.offsets.clone(),
                processed: p.processed.clone(),
                crashed: p.crashed,
                committed_offset: p.commit.map(|(o, _)| o),
                log_offset: p.commit.map(|(_, at)| at),
            })
            .collect(),
        position: s.position,
        committed_offset: s.committed,
        duplicated: s.duplicated.clone(),
        lost: s.lost.clone(),
    }
}

/// Part 1, at-least-once (process, then commit): the restarted consumer
/// processes again what was processed since the last commit; the
/// redelivery window (position - committed), checked against the
/// duplicates seen.
fn at_least_once(demo: &DemoDir, run: &CrashRun<'_>) -> Result<DeliveryOut> {
    let a = run.run(demo, Delivery::AtLeastOnce)?;
    let window = a.position - a.committed as i64;
    if a.duplicated.len() as i64 != window || !a.lost.is_empty() {
        return Err(Error::Invalid(format!(
            "self-check failed: {} duplicates and {} lost observed, window {window}",
            a.duplicated.len(),
            a.lost.len()
        )));
    }
    Ok(delivery_out("at_least_once", &a))
}

/// Part 2, at-most-once (commit, then process) on a fresh offsets log: the
/// restarted consumer skips what was committed but not processed; the
/// loss window (committed - position), checked against the losses seen.
fn at_most_once(demo: &DemoDir, run: &CrashRun<'_>) -> Result<DeliveryOut> {
    demo.remove_offsets_log()?;
    let b = run.run(demo, Delivery::AtMostOnce)?;
    let lost_window = b.committed as i64 - b.position;
    if b.lost.len() as i64 != lost_window || !b.duplicated.is_empty() {
        return Err(Error::Invalid(format!(
            "self-check failed: {} lost and {} duplicates observed, window {lost_window}",
            b.lost.len(),
            b.duplicated.len()
        )));
    }
    Ok(delivery_out("at_most_once", &b))
}

/// Part 3: the orders log (cleanup.policy=delete) beside the offsets log
/// (compact), with their log end offsets.
fn side_by_side(dir: &Path) -> Result<Vec<PartitionOut>> {
    Ok(vec![
        PartitionOut {
            partition: "orders-0",
            cleanup_policy: "delete",
            log_end_offset: Partition::open(&dir.join("orders-0"))?.log_end_offset()?,
        },
        PartitionOut {
            partition: "__offsets-0",
            cleanup_policy: "compact",
            log_end_offset: offsets_end(dir)?,
        },
    ])
}

/// The offsets log's log end offset.
fn offsets_end(dir: &Path) -> Result<i64> {
    Partition::open(&dir.join("__offsets-0"))?.log_end_offset()
}

/// Part 4: three groups commit to the one offsets log; its replay.
fn three_groups(dir: &Path, demo: &DemoDir, group: &str) -> Result<(Vec<CommitOut>, Replay)> {
    let mut commits = Vec::new();
    for (g, offset) in [(group, 7u64), ("courier", 4), ("analytics", 0)] {
        let at = demo.commit(g, "orders", 0, offset)?;
        commits.push(CommitOut {
            group: g.to_string(),
            committed_offset: offset,
            log_offset: at,
        });
    }
    Ok((commits, replay(dir)?))
}

/// Part 5: deleting a group's offsets appends a tombstone (a key with a
/// null value) per committed partition: the live keys drop, the log grows.
fn delete_by_tombstone(
    dir: &Path,
    demo: &DemoDir,
    replay: &Replay,
    now_ms: i64,
) -> Result<TombstoneOut> {
    let before = replay.live_keys();
    let end_before = offsets_end(dir)?;
    let (keys, records): (Vec<_>, Vec<_>) =
        tombstone_records(replay, "analytics", None, None, now_ms)
            .into_iter()
            .unzip();
    let at = demo
        .appender(KLOG_OFFSETS_TOPIC, 0)?
        .append(&BatchSpec::default(), &records)?;
    let after = self::replay(dir)?.live_keys();
    Ok(TombstoneOut {
        group: "analytics".to_string(),
        partitions: keys.iter().map(|(t, p)| format!("{t}-{p}")).collect(),
        log_offset: *at.start(),
        live_keys_before: before as u64,
        live_keys_after: after as u64,
        log_end_offset: offsets_end(dir)?,
        log_end_offset_before: end_before,
    })
}

/// The committed offsets of the demo's offsets log.
fn replay(dir: &Path) -> Result<Replay> {
    let mut r = Replay::new(ReplayOptions::default());
    r.replay_partition(&Partition::open(&dir.join("__offsets-0"))?)?;
    Ok(r)
}

fn outcome(r: std::result::Result<(), GroupError>) -> String {
    r.map_or_else(|e| e.to_string(), |()| "ok".to_string())
}

/// The requests group-demo puts to the group: what each is, the group's
/// state, and the member id and generation the request carries.
const FENCING_CASES: [(&str, GroupState, &str, i32); 6] = [
    (
        "current member and generation",
        GroupState::Stable,
        "member-a",
        2,
    ),
    ("ghost from generation 1", GroupState::Stable, "member-a", 1),
    ("unknown member", GroupState::Stable, "member-z", 2),
    (
        "PreparingRebalance, current generation",
        GroupState::PreparingRebalance,
        "member-a",
        2,
    ),
    (
        "CompletingRebalance",
        GroupState::CompletingRebalance,
        "member-a",
        2,
    ),
    ("Dead", GroupState::Dead, "member-a", 2),
];

/// One request put to `g`: what klog's coordinator answers a commit and a
/// fetch (an accepted commit is written for real, an accepted fetch
/// replays the offsets log), and where Kafka's rule answers otherwise.
fn fencing_case(
    dir: &Path,
    demo: &DemoDir,
    g: &ClassicGroup,
    who: &'static str,
    member: &'static str,
    generation: i32,
) -> Result<FencingOut> {
    let commit = g.validate_commit(member, generation);
    if commit.is_ok() {
        // An accepted commit is written for real.
        demo.commit(&g.group, "orders", 0, 7)?;
    }
    let fetch = g.validate_fetch(member, generation);
    if fetch.is_ok() {
        replay(dir)?;
    }
    let (kc, kf) = (
        g.kafka_validate_commit(member, generation),
        g.kafka_validate_fetch(member, generation),
    );
    let mut kafka = Vec::new();
    if kc != commit {
        kafka.push(format!("commit {}", outcome(kc)));
    }
    if kf != fetch {
        kafka.push(format!(
            "fetch {} (fetch is allowed in every state)",
            outcome(kf)
        ));
    }
    if g.state == GroupState::PreparingRebalance {
        let prev = g.kafka_validate_commit(member, generation - 1);
        if prev != g.validate_commit(member, generation - 1) {
            kafka.push(format!(
                "also {} for generation {}",
                outcome(prev),
                generation - 1
            ));
        }
    }
    Ok(FencingOut {
        request: who,
        member,
        generation,
        commit: outcome(commit),
        fetch: outcome(fetch),
        kafka: (!kafka.is_empty()).then(|| kafka.join("; ")),
    })
}
