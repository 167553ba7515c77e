//! Share-partition state (KIP-932): the share coordinator's records in
//! `__share_group_state` replayed as `ShareCoordinatorShard.replay` loads
//! them (share-coordinator module, Kafka 4.1):
//!
//! - a ShareSnapshot replaces a share-partition's state
//!   (`ShareGroupOffset.fromRecord(ShareSnapshotValue)`); a ShareSnapshot
//!   tombstone deletes it (`handleShareSnapshot`);
//! - a ShareUpdate with no state before it becomes the state as it is
//!   (`ShareGroupOffset.fromRecord(ShareUpdateValue)`: state epoch 0,
//!   no timestamps, its batches uncombined);
//! - a ShareUpdate on a state merges into it (`ShareCoordinatorShard.merge`):
//!   start offset and leader epoch from the update unless -1, snapshot and
//!   state epochs and timestamps kept, and the batches combined by
//!   [`combine`] (`PersisterStateBatchCombiner`) with the new start offset;
//! - a ShareUpdate tombstone is never written (Kafka's replay would fail on
//!   it: `handleShareUpdate` reads the value's leader epoch): it is not
//!   applied and reported.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::{BTreeMap, BTreeSet};

use serde::Serialize;
use serde_json::Value;

use std::path::Path;

use crate::error::Result;
use crate::format::{BatchView, DecodeLimits, Entry};
use crate::log::walk::Step;
use crate::log::{DataDir, Partition, PartitionState, Policy};
use crate::offsets::records::{self, CoordinatorRecord, SHARE_GROUP_STATE_TOPIC};

/// A state batch (`PersisterStateBatch`): offsets `first..=last` in one
/// delivery state after `delivery_count` deliveries. The field order is the
/// order `PersisterStateBatch.compareTo` sorts by: first offset, last
/// offset, delivery count, delivery state.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Batch {
    pub first: i64,
    pub last: i64,
    pub count: i16,
    /// `RecordState` id: 0 Available, 1 Acquired, 2 Acknowledged, 4 Archived.
    pub state: i8,
}

impl Batch {
    fn new(first: i64, last: i64, state: i8, count: i16) -> Self {
        Batch {
            first,
            last,
            count,
            state,
        }
    }

    /// `PersisterStateBatchCombiner.compareBatchDeliveryInfo`: delivery
    /// count first, then delivery state; the greater one wins an overlap.
    fn delivery_cmp(&self, other: &Batch) -> std::cmp::Ordering {
        self.count
            .cmp(&other.count)
            .then(self.state.cmp(&other.state))
    }
}

/// Combine a share-partition's batches with an update's, exactly as
/// `PersisterStateBatchCombiner.combineStateBatches` does:
///
/// 1. prune (unless `start_offset` is -1): drop batches ending below the
///    start offset, cut the start offset into the one it falls in;
/// 2. with two or more batches left, keep them in a sorted set and repeat:
///    find the first pair (in set order) that overlaps, or that is
///    contiguous with the same delivery count and state, moving the batches
///    before it to the result; merge a same-state pair into one batch; for
///    an overlapping pair of different states the batch with the greater
///    (delivery count, delivery state) keeps the shared offsets and the
///    other keeps what is left of it on either side.
///
/// Kafka writes batches with `first <= last`; batches that are not could
/// make the loop cycle forever (in Kafka as here), so after a bound on the
/// steps this gives up and returns `None`. Offsets wrap like Java's longs.
pub fn combine(so_far: &[Batch], new: &[Batch], start_offset: i64) -> Option<Vec<Batch>> {
    let mut combined: Vec<Batch> = so_far.iter().chain(new).copied().collect();
    if start_offset != -1 {
        combined = combined
            .into_iter()
            .filter(|b| b.last >= start_offset)
            .map(|b| {
                if b.first >= start_offset {
                    b
                } else {
                    Batch {
                        first: start_offset,
                        ..b
                    }
                }
            })
            .collect();
    }
    if combined.len() < 2 {
        return Some(combined);
    }
    let mut steps = 16 * combined.len().saturating_mul(combined.len()).max(1024);
    let mut sorted: BTreeSet<Batch> = combined.into_iter().collect();
    let mut out = Vec::new();
    while let Some((prev, candidate)) = merge_candidate_pair(&mut sorted, &mut out) {
        steps = steps.checked_sub(1)?;
        sorted.remove(&prev);
        sorted.remove(&candidate);
        if candidate.delivery_cmp(&prev).is_eq() {
            // handleSameStateMerge: overlapping or contiguous, one batch.
            sorted.insert(Batch::new(
                prev.first,
                candidate.last.max(prev.last),
                prev.state,
                prev.count,
            ));
        } else {
            diff_state_overlap(&mut sorted, prev, candidate);
        }
    }
    out.extend(sorted);
    Some(out)
}

/// `getMergeCandidatePair`: the first mergeable pair of the sorted set; the
/// batches before it (or all but the last, when there is none) move to `out`.
fn merge_candidate_pair(
    sorted: &mut BTreeSet<Batch>,
    out: &mut Vec<Batch>,
) -> Option<(Batch, Batch)> {
    let mut iter = sorted.iter().copied();
    let mut prev = iter.next()?;
    let mut before = Vec::new();
    let mut pair = None;
    for candidate in iter {
        // Java's `prev.lastOffset() + 1` wraps at Long.MAX_VALUE.
        let contiguous =
            prev.last.wrapping_add(1) == candidate.first && prev.delivery_cmp(&candidate).is_eq();
        if candidate.first <= prev.last || contiguous {
            pair = Some((prev, candidate));
            break;
        }
        before.push(prev);
        prev = candidate;
    }
    for b in &before {
        sorted.remove(b);
    }
    out.extend(before);
    pair
}

/// `handleDiffStateOverlap`: `prev` sorts before `candidate`, they overlap
/// and their delivery count or state differ.
fn diff_state_overlap(sorted: &mut BTreeSet<Batch>, prev: Batch, candidate: Batch) {
    let candidate_wins = !candidate.delivery_cmp(&prev).is_lt();
    let mut add = |b: Batch| {
        sorted.insert(b);
    };
    let prev_head = Batch::new(
        prev.first,
        candidate.first.wrapping_sub(1),
        prev.state,
        prev.count,
    );
    // What a losing, longer candidate keeps: the offsets past prev.
    let candidate_tail = Batch::new(
        prev.last.wrapping_add(1),
        candidate.last,
        candidate.state,
        candidate.count,
    );
    if candidate.first == prev.first {
        if candidate.last == prev.last {
            // Case 1: the set order puts the greater delivery info second.
            add(candidate);
        } else if candidate_wins {
            // Case 3 (candidate longer; case 2 cannot occur in set order).
            add(candidate);
        } else {
            add(prev);
            add(candidate_tail);
        }
    } else if candidate.last < prev.last {
        // Case 4: prev swallows candidate.
        if candidate_wins {
            add(prev_head);
            add(candidate);
            add(Batch::new(
                candidate.last.wrapping_add(1),
                prev.last,
                prev.state,
                prev.count,
            ));
        } else {
            add(prev);
        }
    } else if candidate.last == prev.last {
        // Case 5: last offsets aligned.
        if candidate_wins {
            add(prev_head);
            add(candidate);
        } else {
            add(prev);
        }
    } else if candidate_wins {
        // Case 6: candidate reaches further.
        add(prev_head);
        add(candidate);
    } else {
        add(prev);
        add(candidate_tail);
    }
}

/// A state batch as shown.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct StateBatch {
    pub first_offset: i64,
    pub last_offset: i64,
    pub delivery_state: &'static str,
    pub delivery_count: i16,
}

impl From<&Batch> for StateBatch {
    fn from(b: &Batch) -> Self {
        StateBatch {
            first_offset: b.first,
            last_offset: b.last,
            delivery_state: records::delivery_state_name(i64::from(b.state)),
            delivery_count: b.count,
        }
    }
}

/// One share-partition's state (`ShareGroupOffset`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct ShareState {
    pub group: String,
    /// The topic's name when known, else its id.
    pub topic: String,
    pub partition: i32,
    pub snapshot_epoch: i32,
    pub state_epoch: i32,
    pub leader_epoch: i32,
    pub start_offset: i64,
    /// The ShareSnapshot's create and write timestamps (0 for a state that
    /// began with a ShareUpdate).
    pub create_timestamp_ms: i64,
    pub write_timestamp_ms: i64,
    pub batches: Vec<StateBatch>,
    /// ShareUpdate records applied since the state was last replaced.
    pub updates: u32,
    /// DeliveryCompleteCount (Kafka 4.2+): offsets from the start offset
    /// whose delivery is complete, -1 when not known (the schema default,
    /// what a record of 4.1 or earlier reads as); a ShareUpdate replaces it
    /// (`ShareCoordinatorShard.merge`).
    pub delivery_complete_count: i64,
    /// The share-partition's lag as Kafka 4.2+ describes it
    /// (`kafka-share-groups --describe`'s LAG, [`share_lag`]); null when the
    /// state has no DeliveryCompleteCount or no start offset, or the
    /// partition is not in the directories read.
    pub lag: Option<i64>,
}

/// The lag of a share-partition whose log ends at `latest` (ListOffsets
/// LATEST at read_uncommitted: the high watermark):
/// `GroupCoordinatorService.computeShareGroupLagAndBuildResponse` computes
/// "partition end offset - startOffset - deliveryCompleteCount", and only
/// when both are initialized (`shouldComputeSharePartitionLag`: not
/// `PartitionFactory.UNINITIALIZED_START_OFFSET` /
/// `UNINITIALIZED_DELIVERY_COMPLETE_COUNT`, both -1); no lag otherwise.
pub fn share_lag(state: &ShareState, latest: i64) -> Option<i64> {
    (state.start_offset != -1 && state.delivery_complete_count != -1)
        .then(|| latest - state.start_offset - state.delivery_complete_count)
}

/// What the replay could not read or apply: (segment file, offset, reason).
pub type NotApplied = (std::path::PathBuf, i64, String);

#[derive(Debug, Clone)]
struct Offset {
    snapshot_epoch: i32,
    state_epoch: i32,
    leader_epoch: i32,
    start_offset: i64,
    batches: Vec<Batch>,
    create_timestamp: i64,
    write_timestamp: i64,
    updates: u32,
    delivery_complete_count: i64,
}

fn int(v: &Value, k: &str) -> i64 {
    v.get(k).and_then(Value::as_i64).unwrap_or(0)
}

fn value_batches(v: &Value) -> Vec<Batch> {
    v.get("stateBatches")
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|b| {
                    Batch::new(
                        int(b, "firstOffset"),
                        int(b, "lastOffset"),
                        int(b, "deliveryState") as i8,
                        int(b, "deliveryCount") as i16,
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

/// What the replay of `__share_group_state` gives: the share-partitions
/// sorted by group, topic and partition, the records not applied, and the
/// places of applied records read as Kafka's generated `read` reads them
/// where a strict reading refuses them (a warning each; see
/// [`crate::format::schema::Leniency`]).
#[derive(Debug, Default)]
pub struct ShareReplayed {
    pub states: Vec<ShareState>,
    pub not_applied: Vec<NotApplied>,
    pub read_as_kafka: Vec<NotApplied>,
}

/// Replay `__share_group_state` of every directory (see the module docs);
/// `names` maps topic ids to names.
pub fn share_states(dirs: &[DataDir], names: &BTreeMap<String, String>) -> Result<ShareReplayed> {
    let mut replay = ShareReplay::default();
    let mut scratch = Vec::new();
    for d in dirs {
        for p in d
            .partitions
            .iter()
            .filter(|p| p.state == PartitionState::Live && p.topic == SHARE_GROUP_STATE_TOPIC)
        {
            replay.read_partition(p, &mut scratch)?;
        }
    }
    Ok(replay.finish(names))
}

/// A share-partition: (group, topic id, partition).
type ShareKey = (String, String, i32);

/// The states replayed so far, and the records not applied.
#[derive(Default)]
struct ShareReplay {
    states: BTreeMap<ShareKey, Offset>,
    not_applied: Vec<NotApplied>,
    read_as_kafka: Vec<NotApplied>,
}

impl ShareReplay {
    /// Every batch of one `__share_group_state` partition, in order.
    fn read_partition(&mut self, p: &Partition, scratch: &mut Vec<u8>) -> Result<()> {
        let mut walk = p.walk(Policy::VALID_ENTRIES);
        while let Some(step) = walk.next_step()? {
            let w = match step {
                Step::Entry(w) => w,
                // Damaged bytes are not read: say where.
                Step::Damage(d) => {
                    self.not_applied.push((
                        d.file,
                        d.base_offset.unwrap_or(-1),
                        d.error.to_string(),
                    ));
                    continue;
                }
                _ => continue,
            };
            let file = w.segment.log.clone();
            let Entry::V2(batch) = w.entry else {
                self.not_applied.push((
                    file,
                    w.entry.base_offset(),
                    "a magic 0/1 message set, which the share coordinator never writes".into(),
                ));
                continue;
            };
            if batch.header.is_control() {
                continue;
            }
            self.read_batch(&file, &batch, scratch);
        }
        Ok(())
    }

    /// The records of one data batch of `file`; a record that does not
    /// decode ends the batch.
    fn read_batch(&mut self, file: &Path, batch: &BatchView<'_>, scratch: &mut Vec<u8>) {
        let iter = match batch.records(scratch, DecodeLimits::default()) {
            Ok(iter) => iter,
            Err(e) => {
                self.not_applied.push((
                    file.to_path_buf(),
                    batch.header.base_offset,
                    e.to_string(),
                ));
                return;
            }
        };
        for r in iter {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    self.not_applied.push((
                        file.to_path_buf(),
                        batch.header.base_offset,
                        e.to_string(),
                    ));
                    break;
                }
            };
            let Some(key) = r.key else {
                self.not_applied.push((
                    file.to_path_buf(),
                    r.offset,
                    "a record without a key".into(),
                ));
                continue;
            };
            let rec = records::decode(records::SHARE_RECORDS, key, r.value, r.position);
            match self.apply(&rec) {
                Err(why) => self.not_applied.push((file.to_path_buf(), r.offset, why)),
                // The share coordinator loads it as its generated reader reads it.
                Ok(()) => self.read_as_kafka.extend(rec.lenient.iter().map(|l| {
                    let why = format!("{l}; loaded as the share coordinator reads it");
                    (file.to_path_buf(), r.offset, why)
                })),
            }
        }
    }

    /// One decoded record, as `ShareCoordinatorShard.replay` applies it;
    /// why it is not applied, if it is not.
    fn apply(&mut self, rec: &CoordinatorRecord) -> std::result::Result<(), String> {
        // A record of a known type that does not decode fails the load.
        if rec.fault.is_some() {
            return Err(rec.error.clone().unwrap_or_default());
        }
        let Some(k) = &rec.key else {
            // A type the share coordinator does not know: skipped on
            // load (CoordinatorLoaderImpl, UnknownRecordTypeException).
            return Ok(());
        };
        let id = (
            k.get("groupId")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            k.get("topicId")
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            int(k, "partition") as i32,
        );
        if let Some(e) = &rec.error {
            return Err(e.clone());
        }
        // The value as read: DeliveryCompleteCount -1, its default, when
        // the record has no such tag (written before 4.2).
        let value = rec.value_as_read();
        match (rec.record_type, &rec.value, &value) {
            (0, None, _) => {
                self.states.remove(&id);
            }
            (0, Some(_), Some(v)) => {
                self.states.insert(id, Offset::of_snapshot(v));
            }
            (1, None, _) => {
                return Err(
                    "a ShareUpdate tombstone: Kafka's share coordinator cannot replay one".into(),
                )
            }
            (1, Some(_), Some(v)) => match self.states.get_mut(&id) {
                None => {
                    self.states.insert(id, Offset::of_update(v));
                }
                Some(st) => st.merge(v)?,
            },
            _ => {}
        }
        Ok(())
    }

    /// The share-partitions sorted by group, topic and partition (topic
    /// ids named by `names`), and what was not applied or read leniently.
    fn finish(self, names: &BTreeMap<String, String>) -> ShareReplayed {
        let mut out: Vec<ShareState> = self
            .states
            .into_iter()
            .map(|((group, topic_id, partition), o)| ShareState {
                group,
                topic: names.get(&topic_id).cloned().unwrap_or(topic_id),
                partition,
                snapshot_epoch: o.snapshot_epoch,
                state_epoch: o.state_epoch,
                leader_epoch: o.leader_epoch,
                start_offset: o.start_offset,
                create_timestamp_ms: o.create_timestamp,
                write_timestamp_ms: o.write_timestamp,
                batches: o.batches.iter().map(StateBatch::from).collect(),
                updates: o.updates,
                delivery_complete_count: o.delivery_complete_count,
                lag: None,
            })
            .collect();
        out.sort_by(|a, b| {
            (&a.group, &a.topic, a.partition).cmp(&(&b.group, &b.topic, b.partition))
        });
        ShareReplayed {
            states: out,
            not_applied: self.not_applied,
            read_as_kafka: self.read_as_kafka,
        }
    }
}

impl Offset {
    /// A ShareSnapshot's state (`ShareGroupOffset.fromRecord(ShareSnapshotValue)`).
    fn of_snapshot(v: &Value) -> Offset {
        Offset {
            snapshot_epoch: int(v, "snapshotEpoch") as i32,
            state_epoch: int(v, "stateEpoch") as i32,
            leader_epoch: int(v, "leaderEpoch") as i32,
            start_offset: int(v, "startOffset"),
            batches: value_batches(v),
            create_timestamp: int(v, "createTimestamp"),
            write_timestamp: int(v, "writeTimestamp"),
            updates: 0,
            delivery_complete_count: int(v, "deliveryCompleteCount"),
        }
    }

    /// A ShareUpdate's state with no state before it
    /// (`ShareGroupOffset.fromRecord(ShareUpdateValue)`).
    fn of_update(v: &Value) -> Offset {
        Offset {
            snapshot_epoch: int(v, "snapshotEpoch") as i32,
            state_epoch: 0,
            leader_epoch: int(v, "leaderEpoch") as i32,
            start_offset: int(v, "startOffset"),
            batches: value_batches(v),
            create_timestamp: 0,
            write_timestamp: 0,
            updates: 1,
            delivery_complete_count: int(v, "deliveryCompleteCount"),
        }
    }

    /// A ShareUpdate merged into the state (`ShareCoordinatorShard.merge`),
    /// or why it cannot be.
    fn merge(&mut self, v: &Value) -> std::result::Result<(), String> {
        let (start, leader) = (int(v, "startOffset"), int(v, "leaderEpoch") as i32);
        let start = if start == -1 {
            self.start_offset
        } else {
            start
        };
        let Some(b) = combine(&self.batches, &value_batches(v), start) else {
            return Err(
                "its state batches do not combine with the state's (a batch ends before it starts)"
                    .into(),
            );
        };
        self.batches = b;
        self.start_offset = start;
        if leader != -1 {
            self.leader_epoch = leader;
        }
        self.updates += 1;
        self.delivery_complete_count = int(v, "deliveryCompleteCount");
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `first-last/SN` batches separated by spaces: S the state (A
    /// Available 0, K acKnowledged 2, R aRchived 4), N the delivery count.
    fn batches(s: &str) -> Vec<Batch> {
        s.split_whitespace()
            .map(|t| {
                let (range, rest) = t.split_once('/').unwrap();
                let (first, last) = range.split_once("..").unwrap();
                let state = match &rest[..1] {
                    "A" => 0,
                    "K" => 2,
                    _ => 4,
                };
                Batch::new(
                    first.parse().unwrap(),
                    last.parse().unwrap(),
                    state,
                    rest[1..].parse().unwrap(),
                )
            })
            .collect()
    }

    /// `what | state | update | start offset | combined`, each worked out by
    /// hand from PersisterStateBatchCombiner: prune, then the TreeSet order
    /// (first, last, count, state) and the pair loop; "case N" is the class's
    /// own numbering of overlaps.
    const CASES: &[&str] = &[
        "nothing |  |  | 5 | ",
        "one batch is only pruned | 0..9/A1 |  | 5 | 5..9/A1",
        "a batch below the start is dropped | 0..4/A1 |  | 5 | ",
        "-1: no pruning | 0..4/A1 |  | -1 | 0..4/A1",
        "case 4, the greater state splits the batch it falls in \
         | 0..10/A1 | 5..7/K1 | -1 | 0..4/A1 5..7/K1 8..10/A1",
        "case 4, a smaller delivery count loses the overlap, newer or not \
         | 0..10/K3 | 5..7/A1 | -1 | 0..10/K3",
        "case 6, a losing candidate keeps what lies past prev \
         | 6..9/A1 | 8..12/R0 | -1 | 6..9/A1 10..12/R0",
        "case 6, a winning candidate (same count, greater state) cuts prev \
         | 0..5/A1 | 3..9/K1 | -1 | 0..2/A1 3..9/K1",
        "case 5, last offsets aligned, candidate loses | 0..9/K1 | 4..9/A1 | -1 | 0..9/K1",
        "case 1, the same offsets: the set puts the greater second, it wins \
         | 1..1/A1 | 1..1/K2 | -1 | 1..1/K2",
        "case 3, a longer candidate that loses keeps what follows prev \
         | 0..5/K2 | 0..9/A1 | -1 | 0..5/K2 6..9/A1",
        "case 3, a longer candidate that wins replaces prev | 0..5/A1 | 0..9/K2 | -1 | 0..9/K2",
        "contiguous, same state: one batch | 0..4/K1 | 5..9/K1 | -1 | 0..9/K1",
        "overlapping, same state: one batch | 0..6/K1 | 3..9/K1 | -1 | 0..9/K1",
        "contiguous, another state: apart | 0..4/K1 | 5..9/A1 | -1 | 0..4/K1 5..9/A1",
        "a duplicate collapses in the set | 0..4/K1 | 0..4/K1 | -1 | 0..4/K1",
        // fixtures/kraft.py, share-audit orders-1: a snapshot, then three updates.
        "fixture update 1 | 0..9/A1 | 3..5/K1 | 0 | 0..2/A1 3..5/K1 6..9/A1",
        "fixture update 2 | 0..2/A1 3..5/K1 6..9/A1 | 8..12/R0 | 4 | 4..5/K1 6..9/A1 10..12/R0",
        "fixture update 3 | 4..5/K1 6..9/A1 10..12/R0 | 13..15/R0 | 4 | 4..5/K1 6..9/A1 10..15/R0",
    ];

    #[test]
    fn combine_as_persister_state_batch_combiner() {
        for case in CASES {
            let parts: Vec<&str> = case.split('|').map(str::trim).collect();
            let [what, so_far, new, start, want] = parts[..] else {
                panic!("{case}")
            };
            assert_eq!(
                combine(&batches(so_far), &batches(new), start.parse().unwrap()),
                Some(batches(want)),
                "{what}"
            );
        }
    }

    #[test]
    fn malformed_batches_do_not_hang() {
        // first > last: Kafka's loop would cycle; here it gives up.
        assert_eq!(combine(&batches("0..10/A1"), &batches("5..2/K1"), -1), None);
        // Offsets at the ends of the range wrap instead of overflowing.
        let (min, max) = (i64::MIN, i64::MAX);
        let _ = combine(
            &[Batch::new(min, max, 0, 1)],
            &[Batch::new(min, min, 2, 1), Batch::new(max, max, 4, 2)],
            -1,
        );
    }

    /// Lag = end offset - start offset - DeliveryCompleteCount, none when
    /// either is -1 (GroupCoordinatorService.shouldComputeSharePartitionLag).
    #[test]
    fn share_lag_as_describe_share_group_offsets_computes_it() {
        let state = |start_offset, delivery_complete_count| ShareState {
            group: "g".into(),
            topic: "t".into(),
            partition: 0,
            snapshot_epoch: 0,
            state_epoch: 0,
            leader_epoch: 0,
            start_offset,
            create_timestamp_ms: 0,
            write_timestamp_ms: 0,
            batches: Vec::new(),
            updates: 0,
            delivery_complete_count,
            lag: None,
        };
        // 10 records, 6 accepted and 2 rejected of them: 2 still to deliver.
        assert_eq!(share_lag(&state(0, 8), 10), Some(2));
        assert_eq!(share_lag(&state(4, 0), 10), Some(6));
        assert_eq!(share_lag(&state(0, -1), 10), None);
        assert_eq!(share_lag(&state(-1, 0), 10), None);
    }
}
