//! What a `read_committed` fetch returns, from the files a broker serves it
//! from: the aborted transactions come from the `.txnindex` files, not from
//! a pass over the log.
//!
//! - The broker (`LocalLog.collectAbortedTransactions`,
//!   `TransactionIndex.collectAbortedTxns`): for a fetch of `[fetch_offset,
//!   upper_bound)`, the entries with `lastOffset >= fetch_offset` and
//!   `firstOffset < upper_bound`, read from the segment holding
//!   `fetch_offset` on, stopping after the first entry whose
//!   `lastStableOffset >= upper_bound`. The upper bound of a
//!   read_committed fetch is the last stable offset
//!   (`UnifiedLog.read` with `FetchIsolation.TXN_COMMITTED`).
//! - The consumer (`CompletedFetch`): before each batch with a producer id,
//!   every aborted transaction whose first offset is at or below the
//!   batch's last offset moves into the set of aborted producers; an ABORT
//!   marker takes its producer out again; a transactional batch of a
//!   producer in the set is skipped; control batches are never returned.

use std::collections::{BTreeSet, VecDeque};

use crate::error::Result;
use crate::format::control::{self, ControlType};
use crate::format::index::txn_entries;
use crate::format::{BatchView, DecodeLimits};
use crate::log::Partition;
use crate::txn::{last_stable_offset, AbortedTxn};

/// The last stable offset of a fetch from `p`: against the high watermark
/// its data directory's `replication-offset-checkpoint` gives (the log end
/// without one), from the last producer snapshot forward.
pub fn lso_at_high_watermark(p: &Partition) -> Result<i64> {
    last_stable_offset(
        p,
        crate::log::checkpoint::high_watermark(p)?,
        DecodeLimits::default(),
        None,
    )
}

/// The aborted transactions a read_committed fetch of `[fetch_offset,
/// upper_bound)` is answered with, from the partition's `.txnindex` files.
pub fn collect_aborted(
    p: &Partition,
    fetch_offset: i64,
    upper_bound: i64,
) -> Result<Vec<AbortedTxn>> {
    let start = p
        .segments
        .iter()
        .rposition(|s| s.base_offset <= fetch_offset)
        .unwrap_or(0);
    let mut out = Vec::new();
    for seg in p.segments.iter().skip(start) {
        let path = seg.log.with_extension("txnindex");
        let Some(bytes) = crate::log::files::read_regular(&path, i32::MAX as u64)? else {
            continue;
        };
        let (entries, _) = txn_entries(&bytes).map_err(|error| crate::Error::Decode {
            path: path.clone(),
            error,
        })?;
        for e in entries {
            if e.last_offset >= fetch_offset && e.first_offset < upper_bound {
                out.push(AbortedTxn {
                    producer_id: e.producer_id,
                    first_offset: e.first_offset,
                    last_offset: e.last_offset,
                    last_stable_offset: e.last_stable_offset,
                });
            }
            if e.last_stable_offset >= upper_bound {
                return Ok(out);
            }
        }
    }
    Ok(out)
}

/// The consumer's side of a read_committed fetch (`CompletedFetch`): fed
/// the batches in log order, it says which to skip.
#[derive(Debug, Clone, Default)]
pub struct AbortedFilter {
    /// Aborted transactions not reached yet, by first offset.
    pending: VecDeque<AbortedTxn>,
    aborted_producers: BTreeSet<i64>,
    scratch: Vec<u8>,
}

impl AbortedFilter {
    /// A filter for the aborted transactions a fetch returned.
    pub fn new(mut aborted: Vec<AbortedTxn>) -> Self {
        aborted.sort_by_key(|a| a.first_offset);
        AbortedFilter {
            pending: aborted.into(),
            ..AbortedFilter::default()
        }
    }

    /// Whether the consumer skips `batch`: a control batch, or a
    /// transactional batch of an aborted transaction.
    pub fn skips(&mut self, batch: &BatchView<'_>) -> bool {
        let h = batch.header;
        if h.producer_id >= 0 {
            while self
                .pending
                .front()
                .is_some_and(|a| a.first_offset <= h.last_offset())
            {
                if let Some(a) = self.pending.pop_front() {
                    self.aborted_producers.insert(a.producer_id);
                }
            }
            if h.is_control() {
                if self.is_abort_marker(batch) {
                    self.aborted_producers.remove(&h.producer_id);
                }
            } else if h.is_transactional() && self.aborted_producers.contains(&h.producer_id) {
                return true;
            }
        }
        h.is_control()
    }

    fn is_abort_marker(&mut self, batch: &BatchView<'_>) -> bool {
        let Ok(mut records) = batch.records(&mut self.scratch, DecodeLimits::default()) else {
            return false;
        };
        matches!(
            records.next(),
            Some(Ok(r)) if control::decode(r.key, r.value, r.position)
                .is_ok_and(|c| c.kind == ControlType::Abort)
        )
    }
}
