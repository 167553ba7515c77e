//! A minimal offline consumer: it reads a partition from a position and
//! learns its committed offset by replaying the offsets topic, the two
//! numbers a real consumer keeps (the position in memory, the committed
//! offset on disk). `klog group-demo` and `klog eos-demo` drive it; commits
//! go through the append path like every other write.
//!
//! Under `read_committed` it reads as Kafka's consumer does: up to the last
//! stable offset, with the aborted transactions the broker reads from the
//! `.txnindex` files ([`crate::txn::fetch`]), skipping their batches and
//! every control batch.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::format::{DecodeLimits, Entry};
use crate::log::Partition;
use crate::log::Policy;
use crate::offsets::{Replay, ReplayOptions, KLOG_OFFSETS_TOPIC};
use crate::txn::fetch::{collect_aborted, lso_at_high_watermark, AbortedFilter};
use crate::txn::Isolation;

/// A record handed to the application.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Consumed {
    pub offset: i64,
    pub key: Option<Vec<u8>>,
    pub value: Option<Vec<u8>>,
}

/// One group member reading one partition.
#[derive(Debug, Clone)]
pub struct Consumer {
    data_dir: PathBuf,
    pub group: String,
    pub topic: String,
    pub partition: i32,
    /// The next offset this consumer will read (in memory only).
    pub position: i64,
    /// What it reads: everything, or committed transactions only.
    pub isolation: Isolation,
}

impl Consumer {
    /// A consumer positioned at offset 0.
    pub fn new(data_dir: &Path, group: &str, topic: &str, partition: i32) -> Self {
        Consumer {
            data_dir: data_dir.to_path_buf(),
            group: group.into(),
            topic: topic.into(),
            partition,
            position: 0,
            isolation: Isolation::ReadUncommitted,
        }
    }

    /// The same consumer reading with `isolation`.
    pub fn with_isolation(mut self, isolation: Isolation) -> Self {
        self.isolation = isolation;
        self
    }

    /// The group's committed offset for this partition, replayed from the
    /// data directory's `__offsets` partition(s); `None` when it has none.
    pub fn committed(&self) -> Result<Option<u64>> {
        let mut replay = Replay::new(ReplayOptions::default());
        for p in crate::log::DataDir::open(&self.data_dir)?
            .live()
            .filter(|p| p.topic == KLOG_OFFSETS_TOPIC)
        {
            replay.replay_partition(p)?;
        }
        // A negative stored offset is no committed offset to a consumer
        // (`ConsumerCoordinator`: "-1 indicates no committed offset").
        Ok(replay
            .get(&self.group, &self.topic, self.partition)
            .and_then(|c| u64::try_from(c.offset).ok()))
    }

    /// Move the position to the committed offset (or 0): what a restarted consumer does.
    pub fn seek_to_committed(&mut self) -> Result<i64> {
        self.position = self.committed()?.map_or(0, |o| o as i64);
        Ok(self.position)
    }

    /// Up to `max` data records from the position on; the position moves
    /// past them (and past the control batches and aborted batches a
    /// read_committed consumer skips).
    pub fn poll(&mut self, max: usize) -> Result<Vec<Consumed>> {
        let p = Partition::open(
            &self
                .data_dir
                .join(format!("{}-{}", self.topic, self.partition)),
        )?;
        // What a fetch may return (`UnifiedLog.read`): read_committed up
        // to the last stable offset, with the aborted transactions of the
        // .txnindex files (`FetchIsolation.TXN_COMMITTED`).
        let (upper, mut filter) = match self.isolation {
            // read_uncommitted: up to the high watermark, when a checkpoint gives it.
            Isolation::ReadUncommitted => (
                crate::log::checkpoint::high_watermark(&p)?.unwrap_or(i64::MAX),
                None,
            ),
            Isolation::ReadCommitted => {
                let lso = lso_at_high_watermark(&p)?;
                let aborted = collect_aborted(&p, self.position, lso)?;
                (lso, Some(AbortedFilter::new(aborted)))
            }
        };
        let mut out = Vec::new();
        let mut next = self.position;
        let mut scratch = Vec::new();
        // Start in the segment holding the position, where its index says.
        let mut walk = p.walk_from(self.position, Policy::VALID_ENTRIES);
        while let Some(w) = walk.next_entry()? {
            if out.len() >= max {
                break;
            }
            let Entry::V2(batch) = w.entry else { continue };
            if batch.header.base_offset >= upper {
                break;
            }
            let skipped = match filter.as_mut() {
                Some(f) => f.skips(&batch),
                None => batch.header.is_control(),
            };
            if skipped {
                if filter.is_some() {
                    next = next.max(batch.header.last_offset() + 1);
                }
                continue;
            }
            let Ok(records) = batch.records(&mut scratch, DecodeLimits::default()) else {
                continue;
            };
            for r in records.flatten() {
                if r.offset >= self.position && out.len() < max {
                    next = r.offset + 1;
                    out.push(Consumed {
                        offset: r.offset,
                        key: r.key.map(<[u8]>::to_vec),
                        value: r.value.map(<[u8]>::to_vec),
                    });
                }
            }
        }
        self.position = next;
        Ok(out)
    }
}
