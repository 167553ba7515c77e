//! Leader epochs and the truncation they decide, as Kafka's brokers do it.
//!
//! - [`EpochCache`] is `LeaderEpochFileCache`
//!   (`storage/.../internals/epoch/LeaderEpochFileCache.java`): the first
//!   offset written under each leader epoch, kept monotonic in both columns
//!   by `assign`, cut by `truncateFromEnd`/`truncateFromStart`, and asked
//!   `endOffsetFor(epoch)`: the largest epoch at or below the one asked and
//!   the offset where the next epoch starts (the log end for the latest).
//! - [`truncate_follower`] is what a follower does before it fetches
//!   (`AbstractFetcherThread` with truncation on fetch, KIP-595, which every
//!   KRaft cluster uses): it sends its latest epoch and its log end; the
//!   leader answers with its end of that epoch (`Partition.readRecords` →
//!   `lastOffsetForLeaderEpoch`); when that epoch is older or ends earlier,
//!   the follower truncates to `min(its end of the answered epoch, the
//!   leader's end, its log end)` — or, when it does not know the answered
//!   epoch, to the end of its largest epoch below it and asks again
//!   (`getOffsetTruncationState`). A follower with no epochs truncates to its
//!   high watermark (`truncateToHighWatermark`); a fetch the leader cannot
//!   serve (out of range) goes through `fetchOffsetAndTruncate`.
//!
//! Kafka compares epochs and offsets only: two replicas that agree on them
//! are taken to hold the same batches (the checksums of `klog cluster`
//! check that separately).

use std::collections::BTreeMap;
use std::ops::Bound;

/// `RecordBatch.NO_PARTITION_LEADER_EPOCH` / `UNDEFINED_EPOCH`.
pub const UNDEFINED_EPOCH: i32 = -1;
/// `UNDEFINED_EPOCH_OFFSET`.
const UNDEFINED_EPOCH_OFFSET: i64 = -1;

/// A replica's leader-epoch cache: epoch → start offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct EpochCache {
    epochs: BTreeMap<i32, i64>,
}

impl EpochCache {
    /// A cache built as the broker builds it from its checkpoint: each
    /// entry assigned in order.
    pub fn from_entries(entries: impl IntoIterator<Item = (i32, i64)>) -> Self {
        let mut cache = EpochCache::default();
        for (epoch, start) in entries {
            cache.assign(epoch, start);
        }
        cache
    }

    /// (epoch, start offset) pairs in epoch order.
    pub fn entries(&self) -> Vec<(i32, i64)> {
        self.epochs.iter().map(|(&e, &s)| (e, s)).collect()
    }

    /// The latest epoch.
    pub fn latest_epoch(&self) -> Option<i32> {
        self.epochs.last_key_value().map(|(&e, _)| e)
    }

    /// `assign`: record that `epoch` starts at `start`, unless the latest
    /// entry is that epoch at or below `start`; entries with an epoch at or
    /// above it, or a start at or after it, go first
    /// (`maybeTruncateNonMonotonicEntries`). Negative values are not
    /// assigned (Kafka throws). Whether the cache changed.
    pub fn assign(&mut self, epoch: i32, start: i64) -> bool {
        if epoch < 0 || start < 0 {
            return false;
        }
        let needed = self
            .epochs
            .last_key_value()
            .is_none_or(|(&e, &s)| epoch != e || start < s);
        if !needed {
            return false;
        }
        while let Some((&e, &s)) = self.epochs.last_key_value() {
            if e >= epoch || s >= start {
                self.epochs.pop_last();
            } else {
                break;
            }
        }
        self.epochs.insert(epoch, start);
        true
    }

    /// `truncateFromEnd`: drop the entries starting at or after `end`.
    pub fn truncate_from_end(&mut self, end: i64) {
        if end < 0 {
            return;
        }
        while self.epochs.last_key_value().is_some_and(|(_, &s)| s >= end) {
            self.epochs.pop_last();
        }
    }

    /// `truncateFromStart`: drop the entries starting at or before `start`,
    /// and give the last of them `start` as its start.
    pub fn truncate_from_start(&mut self, start: i64) {
        let mut last = None;
        while let Some((&e, &s)) = self.epochs.first_key_value() {
            if s > start {
                break;
            }
            self.epochs.pop_first();
            last = Some(e);
        }
        if let Some(e) = last {
            self.epochs.insert(e, start);
        }
    }

    /// `UnifiedLog.endOffsetForEpoch` over `endOffsetFor(requested, log_end)`:
    /// `(epoch, end offset)`, or `None` where Kafka answers undefined (no
    /// epoch asked, none known, or the one asked above the latest).
    pub fn end_offset_for(&self, requested: i32, log_end: i64) -> Option<(i32, i64)> {
        if requested == UNDEFINED_EPOCH {
            return None;
        }
        let answer = if self.latest_epoch() == Some(requested) {
            (requested, log_end)
        } else {
            let (_, &higher_start) = self
                .epochs
                .range((Bound::Excluded(requested), Bound::Unbounded))
                .next()?;
            match self.epochs.range(..=requested).next_back() {
                // Below every known epoch: the start of the first one above it.
                None => (requested, higher_start),
                Some((&floor, _)) => (floor, higher_start),
            }
        };
        (answer.1 != UNDEFINED_EPOCH_OFFSET).then_some(answer)
    }
}

/// A replica as truncation sees it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReplicaLog {
    pub cache: EpochCache,
    pub log_start: i64,
    pub log_end: i64,
    pub high_watermark: i64,
}

/// What a follower does to its log before it fetches from the leader.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Truncation {
    /// The follower's log end after truncation (its log end when nothing is cut).
    pub offset: i64,
    /// Everything is cut and the log restarts at the leader's log start
    /// (`truncateFullyAndStartAt`).
    pub fully: bool,
    /// The epoch the last exchange agreed on, when the epochs decided.
    pub common_epoch: Option<i32>,
    /// Each exchange that cut the log, for people.
    pub steps: Vec<String>,
    log_end: i64,
}

impl Truncation {
    /// Whether anything is cut.
    pub fn truncated(&self) -> bool {
        self.fully || self.offset < self.log_end
    }
}

/// The truncation `follower` does against `leader` (see the module docs).
pub fn truncate_follower(follower: &ReplicaLog, leader: &ReplicaLog) -> Truncation {
    let mut f = Follower {
        cache: follower.cache.clone(),
        end: follower.log_end,
        t: Truncation {
            offset: follower.log_end,
            fully: false,
            common_epoch: None,
            steps: Vec::new(),
            log_end: follower.log_end,
        },
    };
    let Some(mut epoch) = f.cache.latest_epoch() else {
        // No epochs: the fetcher starts in Truncating state and cuts to the
        // high watermark (`truncateToHighWatermark`), then fetches from there.
        let to = follower.high_watermark.min(f.end);
        if to < f.end {
            f.step(format!(
                "no leader epochs: truncate to the high watermark {to}"
            ));
        }
        f.cut(to);
        f.fetch_without_epoch(leader);
        return f.done();
    };
    // Each round either cuts the log or ends; the bound only guards
    // against input no broker writes.
    let rounds = f.cache.epochs.len() * 2 + 4;
    for _ in 0..rounds {
        let fetch = f.end;
        let Some((leader_epoch, leader_end)) = leader.cache.end_offset_for(epoch, leader.log_end)
        else {
            f.step(format!(
                "the leader knows no end of epoch {epoch}: the fetch at {fetch} is out of range"
            ));
            f.out_of_range(leader);
            break;
        };
        if fetch < leader.log_start {
            f.step(format!(
                "the fetch at {fetch} is below the leader's log start {}",
                leader.log_start
            ));
            f.out_of_range(leader);
            break;
        }
        if leader_epoch >= epoch && leader_end >= fetch {
            f.t.common_epoch = Some(leader_epoch);
            break;
        }
        let before = (f.end, f.cache.latest_epoch());
        let ours = f.cache.end_offset_for(leader_epoch, f.end);
        let (to, why) = match ours {
            Some((e, end)) if e != leader_epoch => (
                end.min(f.end),
                format!("this replica has no epoch {leader_epoch}; its epoch {e} ends at {end}"),
            ),
            Some((_, end)) => (
                end.min(leader_end).min(f.end),
                format!("this replica's epoch {leader_epoch} ends at {end}"),
            ),
            None => (
                leader_end.min(f.end),
                format!("this replica has no epoch at or below {leader_epoch}"),
            ),
        };
        f.step(format!(
            "last epoch {epoch}, fetch at {fetch}: the leader's epoch {leader_epoch} ends at {leader_end}; {why}: truncate to {to}"
        ));
        f.cut(to);
        match f.cache.latest_epoch() {
            Some(e) if (f.end, Some(e)) != before => epoch = e,
            Some(_) => break,
            None => {
                f.fetch_without_epoch(leader);
                break;
            }
        }
    }
    f.done()
}

/// The follower's state during [`truncate_follower`].
struct Follower {
    cache: EpochCache,
    end: i64,
    t: Truncation,
}

impl Follower {
    fn step(&mut self, s: String) {
        self.t.steps.push(s);
    }

    /// `log.truncateTo(to)`: nothing when `to` is at or past the end.
    fn cut(&mut self, to: i64) {
        if to < self.end {
            self.end = to;
            self.cache.truncate_from_end(to);
        }
    }

    /// A fetch with no last epoch: the leader serves it unless the offset
    /// is outside its log.
    fn fetch_without_epoch(&mut self, leader: &ReplicaLog) {
        if self.end < leader.log_start || self.end > leader.log_end {
            self.step(format!(
                "the fetch at {} is outside the leader's log {}..{}",
                self.end, leader.log_start, leader.log_end
            ));
            self.out_of_range(leader);
        }
    }

    /// `fetchOffsetAndTruncate`: to the leader's log end when that is
    /// below ours; everything, restarting at the leader's log start, when
    /// that is above our end.
    fn out_of_range(&mut self, leader: &ReplicaLog) {
        if leader.log_end < self.end {
            let to = leader.log_end;
            self.step(format!("truncate to the leader's log end {to}"));
            self.cut(to);
        } else if leader.log_start > self.end {
            self.step(format!(
                "below the leader's log start: truncate fully and start at {}",
                leader.log_start
            ));
            self.t.fully = true;
            self.end = leader.log_start;
            self.cache = EpochCache::default();
        }
    }

    fn done(mut self) -> Truncation {
        self.t.offset = self.end;
        self.t
    }
}
