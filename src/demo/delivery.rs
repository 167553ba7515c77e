//! The scenarios [`super::group_run`] runs for `klog group-demo`, for real in a
//! data directory: records are appended and commits written through the append
//! path, committed offsets are read back by replaying the offsets log, and
//! every number the demo prints comes out of these runs. [`super::eos`] holds the
//! scenarios of `klog eos-demo`; [`Workspace`] the directory contract both
//! demos keep.
//!
//! A demo only uses a directory that is new or empty, or one it marked
//! itself in an earlier `--keep` run, and removes only what it wrote: a
//! kept run records every file it leaves with its size, and a later run
//! refuses once any of them changed (records produced into a topic it left
//! are the user's).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::{BatchSpec, NewRecord};
use crate::inspect::consumer::Consumer;
use crate::log::durable;
use crate::log::lock::DirLock;
use crate::log::{AppendConfig, PartitionAppender};
use crate::offsets::{commit_record_v3, KLOG_OFFSETS_TOPIC};

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

    /// Remove the offsets log the demo wrote, for a run from a fresh one;
    /// none is there when no commit was written yet (a crash before the
    /// first commit).
    pub fn remove_offsets_log(&self) -> Result<()> {
        let log = self.dir.join(format!("{KLOG_OFFSETS_TOPIC}-0"));
        if log.is_dir() {
            durable::remove_created_tree(&log)?;
        }
        Ok(())
    }

    /// Commit `offset` for `group` on `topic`-`partition`; returns the offsets-log offset it got.
    pub fn commit(&self, group: &str, topic: &str, partition: i32, offset: u64) -> Result<i64> {
        let record = commit_record_v3(group, topic, partition, offset, -1, "", self.now_ms);
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

/// A demo's data directory, prepared so that the demo removes only what it
/// wrote.
#[derive(Debug)]
pub struct Workspace {
    pub dir: PathBuf,
    marker: &'static str,
    folders: Vec<String>,
    created: bool,
}

impl Workspace {
    /// Take `dir` for `command`, whose partition folders are `folders` and
    /// whose mark is the file `marker`: create it, or refuse it when it
    /// holds anything else than an earlier run left unchanged; clear an
    /// earlier run's files; mark it.
    pub fn prepare(
        dir: &Path,
        command: &'static str,
        marker: &'static str,
        folders: &[&str],
    ) -> Result<Self> {
        let ws = Workspace {
            dir: dir.to_path_buf(),
            marker,
            folders: folders.iter().map(|f| f.to_string()).collect(),
            created: !dir.exists(),
        };
        if ws.created {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, "create", e))?;
        } else {
            let mut names = Vec::new();
            for entry in std::fs::read_dir(dir).map_err(|e| Error::io(dir, "list", e))? {
                let entry = entry.map_err(|e| Error::io(dir, "list", e))?;
                names.push(entry.file_name().to_string_lossy().into_owned());
            }
            names.sort();
            let ours = names.iter().any(|n| n == marker);
            let others: Vec<_> = names
                .iter()
                .filter(|n| !ours || !ws.own(n))
                .cloned()
                .collect();
            if !others.is_empty() {
                return Err(Error::Invalid(format!(
                    "{} holds other data ({}); {command} only uses a new or empty directory, or one an earlier run left",
                    dir.display(),
                    others.join(", ")
                )));
            }
            if ours {
                ws.check_extents()?;
            }
            ws.clean()?;
        }
        durable::create_marker(&dir.join(marker))?;
        Ok(ws)
    }

    /// Whether `name` (an entry of the directory) is the demo's.
    fn own(&self, name: &str) -> bool {
        name == self.marker || name == ".lock" || self.folders.iter().any(|f| f == name)
    }

    /// Every file under the demo's folders with its size, one
    /// `path<TAB>size` line each, sorted: what a `--keep` run left.
    fn extents(&self) -> Result<String> {
        let mut lines = Vec::new();
        for name in &self.folders {
            for entry in walkdir::WalkDir::new(self.dir.join(name)).sort_by_file_name() {
                let entry = entry.map_err(|e| {
                    let path = e.path().map(Path::to_path_buf).unwrap_or_default();
                    Error::io(&path, "list", e.into())
                })?;
                if entry.file_type().is_file() {
                    let rel = entry
                        .path()
                        .strip_prefix(&self.dir)
                        .unwrap_or(entry.path())
                        .to_string_lossy()
                        .into_owned();
                    let len = entry
                        .metadata()
                        .map_err(|e| Error::io(entry.path(), "stat", e.into()))?
                        .len();
                    lines.push(format!("{rel}\t{len}"));
                }
            }
        }
        Ok(lines.join("\n"))
    }

    /// Refuse to clear what an earlier `--keep` run left once anything in
    /// it changed. (A marker without extents is a run that stopped before
    /// it finished.)
    fn check_extents(&self) -> Result<()> {
        let path = self.dir.join(self.marker);
        let recorded = std::fs::read_to_string(&path).map_err(|e| Error::io(&path, "read", e))?;
        if recorded.trim().is_empty() {
            return Ok(());
        }
        let now = self.extents()?;
        if now.trim() != recorded.trim() {
            let was: BTreeSet<&str> = recorded.lines().collect();
            let changed: Vec<&str> = now
                .lines()
                .filter(|l| !was.contains(l))
                .filter_map(|l| l.split('\t').next())
                .collect();
            return Err(Error::Invalid(format!(
                "{}: the demo's files changed since it left them ({}): they may hold your data now; \
                 move the directory away or remove it yourself",
                self.dir.display(),
                if changed.is_empty() {
                    "files removed".to_string()
                } else {
                    changed.join(", ")
                }
            )));
        }
        Ok(())
    }

    /// Remove the demo's folders, lock file and marker.
    pub fn clean(&self) -> Result<()> {
        let names = self
            .folders
            .iter()
            .map(String::as_str)
            .chain([".lock", self.marker]);
        for name in names {
            let path = self.dir.join(name);
            if path.is_dir() {
                durable::remove_created_tree(&path)?;
            } else if path.exists() {
                durable::remove_created_file(&path)?;
            }
        }
        Ok(())
    }

    /// End the run that gave `result`: without `keep`, remove it all,
    /// whatever the result; with `keep`, once the run succeeded, record
    /// what it leaves, file by file, so that a later run removes these only
    /// if they are still exactly what it wrote ([`finish`](Self::finish)).
    pub fn close<T>(&self, keep: bool, result: Result<T>) -> Result<T> {
        if !keep {
            self.finish(false)?;
        }
        let value = result?;
        if keep {
            self.finish(true)?;
        }
        Ok(value)
    }

    /// End the run: with `keep`, record what it leaves in the marker;
    /// otherwise remove it all (and the directory, if the demo created it).
    pub fn finish(&self, keep: bool) -> Result<()> {
        if keep {
            return durable::write_marker(&self.dir.join(self.marker), &self.extents()?);
        }
        self.clean()?;
        if self.created {
            std::fs::remove_dir(&self.dir).map_err(|e| Error::io(&self.dir, "remove", e))?;
        }
        Ok(())
    }
}
