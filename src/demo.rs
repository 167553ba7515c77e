//! The scenarios behind `klog group-demo`, run for real against a data
//! directory: records are appended and commits written through the append
//! path, committed offsets are read back by replaying the offsets log, and
//! every number the demo prints comes out of these runs.

use std::collections::BTreeSet;
use std::path::Path;
use std::sync::Arc;

use crate::consumer::Consumer;
use crate::error::{Error, Result};
use crate::format::{BatchSpec, NewRecord};
use crate::log::lock::DirLock;
use crate::log::{AppendConfig, PartitionAppender};
use crate::offsets::{commit_record, KLOG_OFFSETS_TOPIC};

/// When the consumer commits relative to processing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// read → process → commit
    AtLeastOnce,
    /// read → commit → process
    AtMostOnce,
}

/// One poll of a scenario.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PollLog {
    /// Offsets returned by the poll.
    pub offsets: Vec<i64>,
    /// Offsets processed before the poll ended (or the crash came).
    pub processed: Vec<i64>,
    /// The committed offset and where the commit landed in the offsets log.
    pub commit: Option<(u64, i64)>,
    pub crashed: bool,
}

/// What a scenario did and observed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scenario {
    pub polls: Vec<PollLog>,
    /// The crashed consumer's position in memory: one past the last record it processed.
    pub position: i64,
    /// The committed offset read back from the offsets log after the crash.
    pub committed: u64,
    /// Offsets the restarted consumer processed a second time.
    pub duplicated: Vec<i64>,
    /// Offsets never processed by either consumer.
    pub lost: Vec<i64>,
}

/// Appends to one data directory under one lock.
pub struct DemoDir {
    lock: Arc<DirLock>,
    dir: std::path::PathBuf,
    now_ms: i64,
}

impl DemoDir {
    /// Lock `dir` (which must exist).
    pub fn open(dir: &Path, now_ms: i64) -> Result<Self> {
        Ok(DemoDir {
            lock: Arc::new(DirLock::acquire(dir)?),
            dir: dir.to_path_buf(),
            now_ms,
        })
    }

    /// An appender for `topic`-`partition` under the held lock.
    pub fn appender(&self, topic: &str, partition: i32) -> Result<PartitionAppender> {
        PartitionAppender::open_locked(
            self.lock.clone(),
            &self.dir,
            topic,
            partition,
            AppendConfig::default(),
        )
    }

    /// Append `n` orders (`order-00`…) to `topic`-0 in one batch; returns their offsets.
    pub fn produce_orders(&self, topic: &str, n: usize) -> Result<std::ops::RangeInclusive<i64>> {
        let records: Vec<NewRecord> = (0..n)
            .map(|i| NewRecord {
                key: Some(format!("order-{i:02}").into_bytes()),
                value: Some(format!("{} x dish {}", i % 3 + 1, i % 7).into_bytes()),
                headers: Vec::new(),
                timestamp: self.now_ms + i as i64,
            })
            .collect();
        self.appender(topic, 0)?
            .append(&BatchSpec::default(), &records)
    }

    /// Commit `offset` for `group` on `topic`-`partition`; returns the offsets-log offset it got.
    pub fn commit(&self, group: &str, topic: &str, partition: i32, offset: u64) -> Result<i64> {
        let record = commit_record(group, topic, partition, offset, -1, "", self.now_ms);
        Ok(*self
            .appender(KLOG_OFFSETS_TOPIC, 0)?
            .append(&BatchSpec::default(), &[record])?
            .start())
    }

    /// Run a consumer of `group` over `topic`-0 in polls of `poll_size`,
    /// crashing right after it has processed `crash_after` records; then a
    /// restarted consumer reads the committed offset back and processes the
    /// rest (without committing). `end` is the topic's log end offset.
    pub fn run(
        &self,
        delivery: Delivery,
        group: &str,
        topic: &str,
        poll_size: usize,
        crash_after: usize,
        end: i64,
    ) -> Result<Scenario> {
        let mut consumer = Consumer::new(&self.dir, group, topic, 0);
        let mut processed: Vec<i64> = Vec::new();
        let mut polls = Vec::new();
        'run: loop {
            let batch = consumer.poll(poll_size)?;
            if batch.is_empty() {
                return Err(Error::Invalid(format!(
                    "the consumer reached the end before processing {crash_after} records"
                )));
            }
            let mut log = PollLog {
                offsets: batch.iter().map(|r| r.offset).collect(),
                processed: Vec::new(),
                commit: None,
                crashed: false,
            };
            let next = consumer.position as u64;
            if delivery == Delivery::AtMostOnce {
                log.commit = Some((next, self.commit(group, topic, 0, next)?));
            }
            for r in &batch {
                processed.push(r.offset);
                log.processed.push(r.offset);
                if processed.len() == crash_after {
                    log.crashed = true;
                    polls.push(log);
                    break 'run;
                }
            }
            if delivery == Delivery::AtLeastOnce {
                log.commit = Some((next, self.commit(group, topic, 0, next)?));
            }
            polls.push(log);
        }
        // The position the application holds: the next record it would process.
        let position = processed.last().map_or(0, |l| l + 1);
        // The restart: a new consumer knows only what is on disk.
        let mut restarted = Consumer::new(&self.dir, group, topic, 0);
        let committed = restarted.seek_to_committed()? as u64;
        let before: BTreeSet<i64> = processed.iter().copied().collect();
        let mut duplicated = Vec::new();
        let mut after = BTreeSet::new();
        loop {
            let batch = restarted.poll(poll_size)?;
            if batch.is_empty() {
                break;
            }
            for r in batch {
                if before.contains(&r.offset) {
                    duplicated.push(r.offset);
                }
                after.insert(r.offset);
            }
        }
        let lost = (0..end)
            .filter(|o| !before.contains(o) && !after.contains(o))
            .collect();
        Ok(Scenario {
            polls,
            position,
            committed,
            duplicated,
            lost,
        })
    }
}
