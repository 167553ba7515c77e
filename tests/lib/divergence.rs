//! The divergence rule: Kafka's leader-epoch cache (`LeaderEpochFileCache`)
//! and a follower's truncation (`AbstractFetcherThread`), against cases
//! taken from Kafka's own tests (`LeaderEpochFileCacheTest`,
//! `AbstractFetcherThreadTest`), each worked out by hand from Kafka's
//! algorithm in the comment above it.

use kaen_log::cluster::epochs::{truncate_follower, EpochCache, ReplicaLog, Truncation};

fn cache(assigned: &[(i32, i64)]) -> EpochCache {
    let mut c = EpochCache::default();
    for &(epoch, start) in assigned {
        c.assign(epoch, start);
    }
    c
}

#[test]
fn assign_keeps_epochs_and_offsets_monotonic() {
    // shouldNotOverwriteLogEndOffsetForALeaderEpochOnceItHasBeenAssigned:
    // the same epoch at a later offset is no update.
    assert_eq!(cache(&[(2, 9), (2, 10)]).entries(), vec![(2, 9)]);
    // shouldEnforceMonotonicallyIncreasingStartOffsets: a new epoch at the
    // same offset replaces the old one (it wrote nothing).
    assert_eq!(cache(&[(2, 9), (3, 9)]).entries(), vec![(3, 9)]);
    // shouldEnforceOffsetsIncreaseMonotonically: an epoch going forward with
    // an offset going back removes the conflicting entry.
    assert_eq!(cache(&[(2, 6), (3, 5)]).entries(), vec![(3, 5)]);
    // shouldEnforceMonotonicallyIncreasingEpochs: epoch 1 again at 7 removes
    // every entry with an epoch >= 1 or a start >= 7.
    assert_eq!(cache(&[(1, 5), (2, 6), (1, 7)]).entries(), vec![(1, 7)]);
    // Negative epochs or offsets are never assigned (Kafka throws).
    assert_eq!(cache(&[(-1, 0), (0, -5)]).entries(), vec![]);
}

#[test]
fn end_offset_for_follows_leader_epoch_file_cache() {
    // shouldReturnUnsupportedIfNoEpochRecorded.
    assert_eq!(EpochCache::default().end_offset_for(0, 0), None);
    // Undefined epoch requested: undefined.
    assert_eq!(cache(&[(0, 0)]).end_offset_for(-1, 73), None);
    // shouldReturnLogEndOffsetIfLatestEpochRequested.
    assert_eq!(cache(&[(2, 10)]).end_offset_for(2, 17), Some((2, 17)));
    // shouldReturnFirstEpochIfRequestedEpochLessThanFirstEpoch: the
    // requested epoch and the start of the first epoch above it.
    let c = cache(&[(5, 11), (6, 12), (7, 13)]);
    assert_eq!(c.end_offset_for(4, 0), Some((4, 11)));
    // shouldTruncateIfMatchingEpochButEarlierStartingOffset: (7, 12)
    // removes (6, 12) and (7, 13).
    let c = cache(&[(5, 11), (6, 12), (7, 13), (7, 12)]);
    assert_eq!(c.end_offset_for(5, 0), Some((5, 12)));
    assert_eq!(c.end_offset_for(6, 0), Some((5, 12)));
    // shouldGetFirstOffsetOfSubsequentEpochWhenOffsetRequestedForPreviousEpoch.
    let c = cache(&[(1, 11), (1, 12), (2, 13), (2, 14), (3, 15), (3, 16)]);
    assert_eq!(c.end_offset_for(2, 17), Some((2, 15)));
    // shouldReturnNextAvailableEpochIfThereIsNoExactEpochForTheOneRequested:
    // the largest epoch at or below the one asked, ending where the next starts.
    let c = cache(&[(0, 10), (2, 13), (4, 17)]);
    assert_eq!(c.end_offset_for(1, 0), Some((0, 13)));
    assert_eq!(c.end_offset_for(2, 0), Some((2, 17)));
    assert_eq!(c.end_offset_for(3, 0), Some((2, 17)));
    // shouldReturnInvalidOffsetIfEpochIsRequestedWhichIsNotCurrentlyTracked:
    // above the latest epoch.
    assert_eq!(cache(&[(2, 100)]).end_offset_for(3, 100), None);
}

#[test]
fn truncation_of_the_cache_follows_leader_epoch_file_cache() {
    let base = || cache(&[(2, 6), (3, 8), (4, 11)]);
    // shouldDropEntriesOnEpochBoundaryWhenRemovingLatestEntries.
    let mut c = base();
    c.truncate_from_end(8);
    assert_eq!(c.entries(), vec![(2, 6)]);
    // shouldDropEntriesBetweenEpochBoundaryWhenRemovingNewest.
    let mut c = base();
    c.truncate_from_end(9);
    assert_eq!(c.entries(), vec![(2, 6), (3, 8)]);
    // shouldPreserveResetOffsetOnClearEarliestIfOneExists.
    let mut c = base();
    c.truncate_from_start(8);
    assert_eq!(c.entries(), vec![(3, 8), (4, 11)]);
    // shouldUpdateSavedOffsetWhenOffsetToClearToIsBetweenEpochs.
    let mut c = base();
    c.truncate_from_start(9);
    assert_eq!(c.entries(), vec![(3, 9), (4, 11)]);
    // shouldRetainLatestEpochOnClearAllEarliestAndUpdateItsOffset.
    let mut c = base();
    c.truncate_from_start(15);
    assert_eq!(c.entries(), vec![(4, 15)]);
    // shouldNotClearAnythingIfOffsetToEarly.
    let mut c = base();
    c.truncate_from_start(1);
    assert_eq!(c.entries(), vec![(2, 6), (3, 8), (4, 11)]);
}

fn replica(epochs: &[(i32, i64)], log_start: i64, log_end: i64, hw: i64) -> ReplicaLog {
    ReplicaLog {
        cache: cache(epochs),
        log_start,
        log_end,
        high_watermark: hw,
    }
}

fn outcome(t: &Truncation) -> (i64, bool) {
    (t.offset, t.fully)
}

#[test]
fn diverging_epochs_truncate_to_the_common_epochs_end() {
    // testDivergingEpochs: follower batches at 0 (epoch 0), 1 (2), 2 (4);
    // leader at 0 (0), 1 (2), 2 (5). The follower fetches at 3 with last
    // epoch 4; the leader's end of epoch 4 is (2, 2) (floor epoch 2, epoch 5
    // starts at 2): diverging. The follower's end of epoch 2 is 2 as well:
    // truncate to min(2, 2, 3) = 2, one batch cut.
    let f = replica(&[(0, 0), (2, 1), (4, 2)], 0, 3, 0);
    let l = replica(&[(0, 0), (2, 1), (5, 2)], 0, 3, 2);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (2, false));
    assert_eq!(t.common_epoch, Some(2));
}

#[test]
fn truncation_iterates_until_the_epochs_agree() {
    // testTruncation: follower epochs 0@0, 2@1, 4@2 (end 3); leader 1@0,
    // 3@1, 5@2 (end 3).
    // 1. last epoch 4: leader ends epoch 3 at 2 (3 < 4: diverging); the
    //    follower has no epoch 3, its floor 2 ends at 2: truncate to 2,
    //    not complete (epoch 4 goes).
    // 2. last epoch 2, fetch 2: leader's floor of 2 is 1, ending at 1; the
    //    follower's floor of 1 is 0, ending at 1: truncate to 1 (epoch 2 goes).
    // 3. last epoch 0, fetch 1: the leader has no epoch at or below 0: it
    //    answers (0, 0), the start of its first epoch; 0 < 1: diverging; the
    //    follower's end of epoch 0 is its log end 1: truncate to min(1, 0, 1) = 0.
    // Nothing is left: every batch differs.
    let f = replica(&[(0, 0), (2, 1), (4, 2)], 0, 3, 0);
    let l = replica(&[(1, 0), (3, 1), (5, 2)], 0, 3, 2);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (0, false));
    assert_eq!(t.steps.len(), 3, "{:?}", t.steps);
}

#[test]
fn a_prefix_of_the_leader_is_not_truncated() {
    // The follower's last epoch is the leader's latest: the leader answers
    // with its log end, at or past the follower's: no divergence.
    let f = replica(&[(0, 0), (2, 4)], 0, 7, 7);
    let l = replica(&[(0, 0), (2, 4)], 0, 9, 9);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (7, false));
    // A follower behind in an older epoch: the leader's end of epoch 0 is 4,
    // past the follower's fetch offset 3: no divergence either.
    let f = replica(&[(0, 0)], 0, 3, 3);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (3, false));
}

#[test]
fn an_unclean_election_cuts_the_old_leaders_later_epoch() {
    // Epoch 0 wrote 0..3 everywhere; the follower then led epoch 1 alone
    // (4..6); the leader, elected uncleanly, writes epoch 2 from 4. Last
    // epoch 1: the leader's floor of 1 is epoch 0, ending where epoch 2
    // starts (4); the follower's end of epoch 0 is 4 too: truncate to 4.
    let f = replica(&[(0, 0), (1, 4)], 0, 7, 7);
    let l = replica(&[(0, 0), (2, 4)], 0, 9, 9);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (4, false));
    assert_eq!(t.common_epoch, Some(0));
    // The same, but the leader had replicated two of the follower's epoch-1
    // batches (epoch 1 ends at 6 on the leader): truncate to 6.
    let l = replica(&[(0, 0), (1, 4), (2, 6)], 0, 9, 9);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (6, false));
    assert_eq!(t.common_epoch, Some(1));
}

#[test]
fn out_of_range_fetches_follow_fetch_offset_and_truncate() {
    // testFollowerFetchOutOfRangeHigh: the leader's log was emptied (end 0,
    // no epochs): it cannot answer for epoch 4 (undefined): out of range;
    // the leader's end 0 is below the follower's 3: truncate to 0.
    let f = replica(&[(0, 0), (2, 1), (4, 2)], 0, 3, 0);
    let l = replica(&[], 0, 0, 0);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (0, false));
    // testFollowerFetchOutOfRangeLow: the follower (0..0, end 1) is below
    // the leader's log start 2: out of range; the leader's end 3 is past
    // the follower's, its start 2 above the follower's end: truncate fully
    // and start at 2.
    let f = replica(&[(0, 0)], 0, 1, 0);
    let l = replica(&[(4, 2)], 2, 3, 2);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (2, true));
}

#[test]
fn a_follower_without_epochs_truncates_to_its_high_watermark() {
    // testTruncateToHighWatermarkIfLeaderEpochInfoNotAvailable: no leader
    // epoch in the follower's cache (log end 3, high watermark 2): truncate
    // to the high watermark.
    let f = replica(&[], 0, 3, 2);
    let l = replica(&[(0, 0)], 0, 3, 3);
    let t = truncate_follower(&f, &l);
    assert_eq!(outcome(&t), (2, false));
    // ... and when that is past the leader's end, out of range: to the leader's end.
    let f = replica(&[], 0, 5, 5);
    let l = replica(&[(0, 0)], 0, 2, 2);
    assert_eq!(outcome(&truncate_follower(&f, &l)), (2, false));
}

#[test]
fn hostile_numbers_end_the_simulation() {
    // Epochs and offsets at the edges of their types: no panic, no endless loop.
    let f = replica(&[(0, 0), (i32::MAX, i64::MAX - 1)], 0, i64::MAX, i64::MIN);
    let l = replica(&[(0, 0), (1, i64::MAX)], i64::MIN, i64::MIN, 0);
    let _ = truncate_follower(&f, &l);
    let _ = truncate_follower(&l, &f);
}
