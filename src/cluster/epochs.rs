//! Leader epochs and the truncation they decide, as Kafka's brokers do it.
//!
//! - [`EpochCache`] is `LeaderEpochFileCache` (kept in
//!   [`crate::log::epoch_cache`], where the append path maintains it too):
//!   asked `endOffsetFor(epoch)`, it answers the largest epoch at or below
//!   the one asked and the offset where the next epoch starts (the log end
//!   for the latest).
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

pub use crate::log::epoch_cache::{EpochCache, UNDEFINED_EPOCH};

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
    let rounds = f.cache.len() * 2 + 4;
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
                "the fetch at {} is outside the leader's log (log start {}, log end {})",
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
