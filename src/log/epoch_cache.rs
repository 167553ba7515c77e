//! A partition's leader-epoch cache, as Kafka keeps it
//! (`storage/.../internals/epoch/LeaderEpochFileCache.java`): the first
//! offset written under each leader epoch, kept monotonic in both columns by
//! `assign`, cut by `truncateFromEnd`/`truncateFromStart`, and asked
//! `endOffsetFor(epoch)`. The append path keeps a partition's
//! `leader-epoch-checkpoint` with it; `klog cluster` uses it to decide
//! truncation; [`replicas_agree`] is what a write to several replicas at
//! once checks before it stamps one epoch on all of them.

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

    /// How many epochs the cache holds.
    pub fn len(&self) -> usize {
        self.epochs.len()
    }

    /// Whether the cache holds no epoch.
    pub fn is_empty(&self) -> bool {
        self.epochs.is_empty()
    }

    /// `epochForOffset`: the epoch of the last entry starting at or below `offset`.
    pub fn epoch_for_offset(&self, offset: i64) -> Option<i32> {
        self.epochs
            .iter()
            .rev()
            .find(|(_, &s)| s <= offset)
            .map(|(&e, _)| e)
    }

    /// The cache as a broker holds it once it has loaded a log of
    /// `log_start..log_end` (`LogLoader.load`: `truncateFromEnd` at the
    /// recovered log end, then `truncateFromStart` at the checkpointed log
    /// start offset): an entry at or past the log end (a leader elected
    /// after the last write) is dropped.
    pub fn as_loaded(&self, log_start: i64, log_end: i64) -> EpochCache {
        let mut c = self.clone();
        c.truncate_from_end(log_end);
        c.truncate_from_start(log_start);
        c
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

/// One replica's leader-epoch cache (as its `leader-epoch-checkpoint`
/// holds it) and the offsets its log holds.
#[derive(Debug, Clone)]
pub struct ReplicaEpochs {
    /// How messages name the replica (its partition folder).
    pub name: String,
    pub cache: EpochCache,
    pub log_start: i64,
    pub log_end: i64,
}

/// The one partitionLeaderEpoch a batch appended at the replicas' common
/// log end must carry so that no follower truncates it when the brokers
/// restart: the newest epoch any replica's cache holds (0 when none holds
/// one). With every replica's cache given that epoch at the batch
/// (`assign`), each follower's latest epoch is the one the new leader's
/// cache holds just below its own new epoch, so the leader's
/// `endOffsetFor` answers the follower's log end and nothing is cut
/// (`AbstractFetcherThread`, truncation on fetch).
///
/// Refused (the reason in the error) when
/// - the caches, as each broker loads them ([`EpochCache::as_loaded`]),
///   name different epochs for an offset every replica holds: the replicas
///   diverged there, and a batch stamped on top would hide it (the follower
///   whose epochs differ would no longer truncate what the leader lacks);
/// - the newest epoch is above `metadata_epoch`, the partition's leader
///   epoch in the KRaft metadata: the metadata image is older than the logs,
///   and a leader elected from it could take a lower epoch than the batch's
///   (`Partition.makeLeader`, `assign` then drops the newer entries).
///
/// `replicas` must end at the same offset (the caller checks).
pub fn replicas_agree(
    replicas: &[ReplicaEpochs],
    metadata_epoch: Option<i32>,
) -> std::result::Result<i32, String> {
    let epoch = replicas
        .iter()
        .filter_map(|r| r.cache.latest_epoch())
        .max()
        .unwrap_or(0);
    if let Some(m) = metadata_epoch.filter(|&m| epoch > m) {
        let holder = replicas
            .iter()
            .find(|r| r.cache.latest_epoch() == Some(epoch))
            .map_or(String::new(), |r| r.name.clone());
        return Err(format!(
            "{holder}'s leader-epoch-checkpoint holds epoch {epoch}, above the KRaft metadata's leader epoch \
             {m}: the metadata image is older than the logs; no epoch stamped now is safe from a leader elected \
             from that image"
        ));
    }
    let loaded: Vec<EpochCache> = replicas
        .iter()
        .map(|r| r.cache.as_loaded(r.log_start, r.log_end))
        .collect();
    let start = replicas.iter().map(|r| r.log_start).max().unwrap_or(0);
    let end = replicas.iter().map(|r| r.log_end).min().unwrap_or(0);
    let mut boundaries: Vec<i64> = loaded
        .iter()
        .flat_map(|c| c.entries().into_iter().map(|(_, s)| s.max(start)))
        .chain(std::iter::once(start))
        .filter(|&b| b < end)
        .collect();
    boundaries.sort_unstable();
    boundaries.dedup();
    for b in boundaries {
        let epochs: Vec<Option<i32>> = loaded.iter().map(|c| c.epoch_for_offset(b)).collect();
        if epochs.windows(2).any(|w| w.first() != w.get(1)) {
            let named: Vec<String> = replicas
                .iter()
                .zip(&epochs)
                .map(|(r, e)| match e {
                    Some(e) => format!("{}: epoch {e}", r.name),
                    None => format!("{}: no epoch", r.name),
                })
                .collect();
            return Err(format!(
                "the replicas' leader-epoch-checkpoints disagree on the epoch of offset {b} ({}): the replicas \
                 diverged there (`klog cluster` shows how Kafka would truncate them), and one batch stamped on all \
                 of them would hide that",
                named.join(", ")
            ));
        }
    }
    Ok(epoch)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cluster::epochs::{truncate_follower, ReplicaLog};

    fn replica(name: &str, entries: &[(i32, i64)], end: i64) -> ReplicaEpochs {
        ReplicaEpochs {
            name: name.into(),
            cache: EpochCache::from_entries(entries.iter().copied()),
            log_start: 0,
            log_end: end,
        }
    }

    #[test]
    fn assign_keeps_both_columns_monotonic() {
        // LeaderEpochFileCache.assign: the same epoch at a later offset is
        // no change; a lower epoch or start drops the entries above it.
        let mut c = EpochCache::from_entries([(0, 0), (2, 10)]);
        assert!(!c.assign(2, 15));
        assert!(c.assign(3, 20));
        assert_eq!(c.entries(), [(0, 0), (2, 10), (3, 20)]);
        assert!(c.assign(1, 12));
        assert_eq!(c.entries(), [(0, 0), (1, 12)]);
    }

    #[test]
    fn the_batch_takes_the_newest_epoch_and_no_restart_truncates_it() {
        // The newest epoch among the replicas' caches, here node 1's epoch 2
        // (a leader elected at the log end, 10, before the brokers stopped:
        // Partition.makeLeader assigns it there).
        let end = 10;
        let replicas = [
            replica("n1", &[(0, 0), (2, end)], end),
            replica("n2", &[(0, 0)], end),
            replica("n3", &[(0, 0)], end),
        ];
        let epoch = replicas_agree(&replicas, Some(2)).unwrap();
        assert_eq!(epoch, 2);
        // Each replica gets the batch at `end` and the epoch assigned there.
        let after: Vec<ReplicaLog> = replicas
            .iter()
            .map(|r| {
                let mut cache = r.cache.clone();
                cache.assign(epoch, end);
                ReplicaLog {
                    cache,
                    log_start: 0,
                    log_end: end + 1,
                    high_watermark: end + 1,
                }
            })
            .collect();
        // Whichever is elected next (at epoch 3, from its log end), no
        // follower cuts anything (AbstractFetcherThread, truncation on fetch).
        for (l, leader) in after.iter().enumerate() {
            let mut leader = leader.clone();
            leader.cache.assign(3, leader.log_end);
            for (f, follower) in after.iter().enumerate().filter(|(f, _)| *f != l) {
                let t = truncate_follower(follower, &leader);
                assert_eq!(t.offset, end + 1, "leader {l}, follower {f}: {t:?}");
            }
        }
        // Stamped with a replica's own older epoch (0) instead, node 1's
        // followers would cut the batch: what writing each copy alone did.
        let mut stale = after[1].clone();
        stale.cache = EpochCache::from_entries([(0, 0)]);
        let mut leader = after[0].clone();
        leader.cache = EpochCache::from_entries([(0, 0), (2, end)]);
        leader.cache.assign(3, leader.log_end);
        assert_eq!(truncate_follower(&stale, &leader).offset, end);
    }

    #[test]
    fn caches_that_disagree_below_the_log_end_are_refused() {
        // Node 2 holds epoch 1 from offset 5, node 1 epoch 0 there: the
        // replicas diverged at 5; a batch stamped on both would hide it.
        let replicas = [
            replica("n1", &[(0, 0)], 10),
            replica("n2", &[(0, 0), (1, 5)], 10),
        ];
        let why = replicas_agree(&replicas, None).unwrap_err();
        assert!(why.contains("disagree on the epoch of offset 5"), "{why}");
        assert!(
            why.contains("n1: epoch 0") && why.contains("n2: epoch 1"),
            "{why}"
        );
        // An epoch starting at the log end (a leader elected after the last
        // write) is dropped when the broker loads the log (LogLoader:
        // truncateFromEnd): no disagreement.
        let replicas = [
            replica("n1", &[(0, 0)], 10),
            replica("n2", &[(0, 0), (1, 10)], 10),
        ];
        assert_eq!(replicas_agree(&replicas, None), Ok(1));
        // An epoch newer than the metadata's leader epoch: the metadata
        // image is older than the logs.
        let why = replicas_agree(&replicas, Some(0)).unwrap_err();
        assert!(
            why.contains("above the KRaft metadata's leader epoch 0"),
            "{why}"
        );
        // No cache anywhere: epoch 0.
        assert_eq!(replicas_agree(&[replica("n1", &[], 3)], None), Ok(0));
    }
}
