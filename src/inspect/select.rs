//! Which batches and records a reading command shows: offset and time
//! ranges, an exact key, a byte pattern, a byte budget ([`RecordFilter`]),
//! and what a `read_committed` consumer sees of a partition
//! ([`ReadCommittedView`]).

use std::path::Path;

use crate::format::{BatchHeader, BatchView, RecordView};
use crate::log::{classify, Partition, PathKind};
use crate::txn::AbortedTxn;

/// What becomes of a v2 batch, by its header: shown, skipped, or the end
/// of the file's output.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Shown {
    Yes,
    Skip,
    Stop,
}

/// Which records are shown (and so which batches): each bound is
/// inclusive; times are instants in epoch ms.
#[derive(Debug, Clone, Default)]
pub struct RecordFilter {
    from_offset: Option<i64>,
    to_offset: Option<i64>,
    from_time: Option<i64>,
    to_time: Option<i64>,
    /// Only records whose key is exactly this.
    key: Option<Vec<u8>>,
    /// Only records whose key or value contains this.
    grep: Option<Vec<u8>>,
    /// The first bytes of the file only: a batch that does not end within
    /// them ends the output.
    max_bytes: Option<u64>,
    /// Nothing filters records, so [`RecordFilter::wants`] answers at once
    /// (it runs for every record).
    all: bool,
}

impl RecordFilter {
    /// Whether only some batches hold a record to show (a key or a
    /// pattern).
    pub fn selects_batches(&self) -> bool {
        self.key.is_some() || self.grep.is_some()
    }

    /// Whether every record is shown.
    fn everything(&self) -> bool {
        [
            self.from_offset,
            self.to_offset,
            self.from_time,
            self.to_time,
        ]
        .iter()
        .all(Option::is_none)
            && !self.selects_batches()
    }

    /// A filter of offsets and times (each range inclusive, either end
    /// open), a key, a pattern and a byte budget.
    pub fn new(
        (from_offset, to_offset): (Option<i64>, Option<i64>),
        (from_time, to_time): (Option<i64>, Option<i64>),
        (key, grep): (Option<Vec<u8>>, Option<Vec<u8>>),
        max_bytes: Option<u64>,
    ) -> Self {
        let mut f = RecordFilter {
            from_offset,
            to_offset,
            from_time,
            to_time,
            key,
            grep,
            max_bytes,
            all: false,
        };
        f.all = f.everything();
        f
    }

    /// Whether `r` is shown.
    #[inline(always)]
    pub fn wants(&self, r: &RecordView<'_>) -> bool {
        self.all || self.wants_each(r)
    }

    fn wants_each(&self, r: &RecordView<'_>) -> bool {
        let contains = |hay: Option<&[u8]>, needle: &[u8]| {
            hay.is_some_and(|h| needle.is_empty() || h.windows(needle.len()).any(|w| w == needle))
        };
        self.from_offset.is_none_or(|from| r.offset >= from)
            && self.to_offset.is_none_or(|to| r.offset <= to)
            && self.from_time.is_none_or(|t| r.timestamp >= t)
            && self.to_time.is_none_or(|t| r.timestamp <= t)
            && self.key.as_deref().is_none_or(|k| r.key == Some(k))
            && self
                .grep
                .as_deref()
                .is_none_or(|g| contains(r.key, g) || contains(r.value, g))
    }

    /// What becomes of `batch`: past the last offset or the byte budget the
    /// output ends; a batch whose every record is outside the time range
    /// is skipped (a control batch is kept for the upper bound: its time
    /// is the marker's, not its transaction's).
    pub fn batch(&self, batch: &BatchView<'_>) -> Shown {
        let h = &batch.header;
        if self.to_offset.is_some_and(|to| h.base_offset > to)
            || self
                .max_bytes
                .is_some_and(|max| batch.position + batch.bytes().len() as u64 > max)
        {
            Shown::Stop
        } else if self.from_time.is_some_and(|t| h.max_timestamp < t)
            || self
                .to_time
                .is_some_and(|t| h.base_timestamp > t && !h.is_control())
        {
            Shown::Skip
        } else {
            Shown::Yes
        }
    }
}

/// What a read_committed consumer may see of a partition
/// (`Fetcher`/`FetchCollector` with `IsolationLevel.READ_COMMITTED`): up to
/// the last stable offset, without control batches and the batches of
/// aborted transactions.
#[derive(Debug, Clone)]
pub struct ReadCommittedView {
    pub last_stable: i64,
    pub aborted: Vec<AbortedTxn>,
}

impl ReadCommittedView {
    /// The view of the partition holding `log` (or of the file alone when
    /// it is not in a partition folder): its last stable offset and
    /// aborted transactions, the high watermark from the checkpoint beside.
    pub fn of_log(log: &Path) -> crate::Result<Self> {
        let parent = log
            .parent()
            .filter(|d| classify(d).is_ok_and(|k| k == PathKind::Partition));
        let (partition, high_watermark) = match parent {
            Some(dir) => {
                let p = Partition::open(dir)?;
                let hw = crate::log::checkpoint::high_watermark(&p)?;
                (p, hw)
            }
            None => (Partition::single_file(log, 0), None),
        };
        let opts = crate::txn::TxnOptions {
            high_watermark,
            ..Default::default()
        };
        let st = crate::txn::analyze(&partition, &opts)?;
        Ok(ReadCommittedView {
            last_stable: st.last_stable_offset(),
            aborted: st.aborted,
        })
    }

    /// What becomes of a batch: the output stops at the last stable
    /// offset; control batches and aborted transactions' batches are
    /// skipped.
    pub fn shows(&self, h: &BatchHeader) -> Shown {
        if h.base_offset >= self.last_stable {
            Shown::Stop
        } else if h.is_control()
            || h.is_transactional() && self.is_aborted(h.producer_id, h.base_offset)
        {
            Shown::Skip
        } else {
            Shown::Yes
        }
    }

    fn is_aborted(&self, producer_id: i64, offset: i64) -> bool {
        self.aborted.iter().any(|a| {
            a.producer_id == producer_id && a.first_offset <= offset && offset <= a.last_offset
        })
    }
}
