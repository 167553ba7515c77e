//! The one append path: everything klog writes to a log goes through
//! [`PartitionAppender::append`].
//!
//! Opening takes the data directory's lock, then reads the active (last)
//! segment once to learn the log end offset and to refuse a damaged tail.
//! Each append assigns offsets from the log end offset (callers never choose
//! them), encodes one batch with its CRC, appends and `fdatasync`s it, then
//! adds index entries the way Kafka's `LogSegment.append` does: an offset
//! index entry when more than `index_interval_bytes` were appended since the
//! last one (so a segment's first batch never gets one), keyed by the
//! batch's last offset and pointing at its position, and a time index entry
//! at the same moment when the segment's max timestamp grew. A segment rolls
//! when the next batch would push it past `segment_bytes`.
//!
//! Every change goes through a [`Storage`] ([`Disk`] unless a caller brings
//! another), in the order [`durable`] writes down: an append returns only
//! when everything it wrote is durable, so a crash at any point loses no
//! acknowledged record.

use std::ops::RangeInclusive;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{Error, Result};
use crate::format::index::{self, TIME_ENTRY_LEN};
use crate::format::{encode_batch, BatchSpec, Entry, NewRecord};
use crate::log::dir::list_segments;
use crate::log::durable::{self, Disk};
use crate::log::lock::DirLock;
use crate::log::segment_file_name;
use crate::log::storage::{OpenMode, Storage, SyncPoint};

/// How the append path lays out segments.
#[derive(Debug, Clone, Copy)]
pub struct AppendConfig {
    /// Roll to a new segment when the next batch would make it larger (Kafka's `segment.bytes`).
    pub segment_bytes: u64,
    /// Bytes between offset-index entries (`index.interval.bytes`).
    pub index_interval_bytes: u64,
    /// partitionLeaderEpoch stamped on batches (-1 = none).
    pub partition_leader_epoch: i32,
    /// The largest batch accepted, log overhead included (Kafka's
    /// `max.message.bytes`, default `message.max.bytes`: 1 MiB + 12).
    pub max_batch_bytes: u64,
}

/// Kafka's default `message.max.bytes` (1 MiB + the 12-byte log overhead).
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 1024 * 1024 + 12;

impl Default for AppendConfig {
    fn default() -> Self {
        AppendConfig {
            segment_bytes: 1 << 30,
            index_interval_bytes: 4096,
            partition_leader_epoch: 0,
            max_batch_bytes: DEFAULT_MAX_MESSAGE_BYTES,
        }
    }
}

impl AppendConfig {
    /// Refuse what Kafka's config validation refuses: `segment.bytes` and
    /// `max.message.bytes` are 32-bit (`LogConfig`), and a segment's file
    /// positions must fit the index's 32-bit position field.
    fn check(&self) -> Result<()> {
        let max = i32::MAX as u64;
        if self.segment_bytes == 0 || self.segment_bytes > max {
            return Err(Error::Invalid(format!(
                "segment bytes {} out of range: 1..={max} (Kafka's segment.bytes is a 32-bit int)",
                self.segment_bytes
            )));
        }
        if self.max_batch_bytes > max {
            return Err(Error::Invalid(format!(
                "max message bytes {} out of range: at most {max}",
                self.max_batch_bytes
            )));
        }
        Ok(())
    }
}

struct ActiveSegment<F> {
    base_offset: i64,
    log_path: PathBuf,
    log: F,
    index_path: PathBuf,
    index: F,
    timeindex_path: PathBuf,
    timeindex: F,
    size: u64,
    /// When the next index entries are due (Kafka's rule, in one place).
    schedule: index::IndexSchedule,
}

/// Appends batches to one partition, holding the data directory's lock.
pub struct PartitionAppender<S: Storage = Disk> {
    _lock: Arc<DirLock>,
    storage: S,
    dir: PathBuf,
    config: AppendConfig,
    active: ActiveSegment<S::File>,
    next_offset: i64,
}

impl PartitionAppender {
    /// Open `<data_dir>/<topic>-<partition>` for appending, creating it if needed.
    pub fn open(
        data_dir: &Path,
        topic: &str,
        partition: i32,
        config: AppendConfig,
    ) -> Result<Self> {
        Self::open_with(Disk, data_dir, topic, partition, config)
    }

    /// Like [`open`](Self::open), with the data directory's lock already
    /// held: several partitions of one directory are appended to under one
    /// lock (a second lock on the same file fails even in one process).
    pub fn open_locked(
        lock: Arc<DirLock>,
        data_dir: &Path,
        topic: &str,
        partition: i32,
        config: AppendConfig,
    ) -> Result<Self> {
        Self::open_locked_with(Disk, lock, data_dir, topic, partition, config)
    }

    /// The offset the next append to `<data_dir>/<topic>-<partition>` would
    /// get, with the refusals of [`open`](Self::open) (a bad name, a damaged
    /// tail) but without the lock and without writing anything: what a dry
    /// run needs. A missing partition folder ends at 0.
    pub fn next_offset_of(
        data_dir: &Path,
        topic: &str,
        partition: i32,
        config: &AppendConfig,
    ) -> Result<i64> {
        check_name(topic, partition)?;
        config.check()?;
        let dir = data_dir.join(format!("{topic}-{partition}"));
        if !dir.is_dir() {
            return Ok(0);
        }
        match list_segments(&dir)?.last() {
            Some(last) => Ok(scan_active(&dir, last.base_offset, config)?.next_offset),
            None => Ok(0),
        }
    }
}

impl<S: Storage> PartitionAppender<S> {
    /// Like [`open`](PartitionAppender::open), writing through `storage`.
    pub fn open_with(
        storage: S,
        data_dir: &Path,
        topic: &str,
        partition: i32,
        config: AppendConfig,
    ) -> Result<Self> {
        check_name(topic, partition)?;
        config.check()?;
        if !data_dir.is_dir() {
            durable::create_dir_all(&storage, data_dir)?;
        }
        let lock = Arc::new(storage.lock(data_dir)?);
        Self::open_locked_with(storage, lock, data_dir, topic, partition, config)
    }

    /// Like [`open_locked`](PartitionAppender::open_locked), writing through `storage`.
    pub fn open_locked_with(
        storage: S,
        lock: Arc<DirLock>,
        data_dir: &Path,
        topic: &str,
        partition: i32,
        config: AppendConfig,
    ) -> Result<Self> {
        check_name(topic, partition)?;
        config.check()?;
        let dir = data_dir.join(format!("{topic}-{partition}"));
        if lock.path().parent() != Some(data_dir) {
            return Err(Error::Invalid(format!(
                "the lock held is not {}'s",
                data_dir.display()
            )));
        }
        if !dir.is_dir() {
            durable::create_dir_all(&storage, &dir)?;
        }
        check_real_parent(&dir, data_dir)?;
        let segments = list_segments(&dir)?;
        let (active, next_offset) = match segments.last() {
            Some(last) => open_existing(&storage, &dir, last.base_offset, &config)?,
            None => (
                create_segment(&storage, &dir, 0, config.index_interval_bytes)?,
                0,
            ),
        };
        Ok(PartitionAppender {
            _lock: lock,
            storage,
            dir,
            config,
            active,
            next_offset,
        })
    }

    /// The data directory's lock this appender holds, for appending to
    /// another partition of the directory under it ([`PartitionAppender::open_locked`]).
    pub fn lock(&self) -> Arc<DirLock> {
        self._lock.clone()
    }

    /// The offset the next record will get (the log end offset).
    pub fn next_offset(&self) -> i64 {
        self.next_offset
    }

    /// The partition folder.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The active segment's `.log` file.
    pub fn active_log(&self) -> &Path {
        &self.active.log_path
    }

    /// Append `records` as one batch. `spec` gives the producer fields and
    /// attributes; its base offset is ignored (the partition assigns it).
    /// Returns the assigned offsets once the batch is durable.
    pub fn append(
        &mut self,
        spec: &BatchSpec,
        records: &[NewRecord],
    ) -> Result<RangeInclusive<i64>> {
        if records.is_empty() {
            return Err(Error::Invalid("an append needs at least one record".into()));
        }
        let base = self.next_offset;
        let last = base
            .checked_add(records.len() as i64 - 1)
            .ok_or_else(|| Error::Invalid("offsets would overflow".into()))?;
        let spec = BatchSpec {
            base_offset: base,
            partition_leader_epoch: self.config.partition_leader_epoch,
            ..*spec
        };
        let batch =
            encode_batch(&spec, records).map_err(|e| Error::io(&self.dir, "encode batch", e))?;
        // Refused before a byte is written, as a broker answers
        // RecordTooLargeException (`LogValidator`, `max.message.bytes`).
        if batch.len() as u64 > self.config.max_batch_bytes {
            return Err(Error::Invalid(format!(
                "a batch of {} records is {} bytes, over the limit of {} (Kafka's \
                 max.message.bytes); nothing was written",
                records.len(),
                batch.len(),
                self.config.max_batch_bytes
            )));
        }
        let needs_roll = self.active.size > 0
            && (self.active.size + batch.len() as u64 > self.config.segment_bytes
                || last - self.active.base_offset > i64::from(i32::MAX));
        if needs_roll {
            self.roll()?;
        }
        // An ABORT marker is indexed in .txnindex, as the broker does, so that
        // read_committed readers that trust the index skip the aborted data.
        let aborted = if spec.control && records.len() == 1 && is_abort(records) {
            self.aborted_txn_entry(spec.producer_id, base)?
        } else {
            None
        };
        let max_ts = records
            .iter()
            .map(|r| r.timestamp)
            .max()
            .unwrap_or(i64::MIN);
        let s = &self.storage;
        let a = &mut self.active;
        let position = a.size;
        // 1. The batch itself, synced: from here on it is acknowledged. A
        //    crash before the sync may leave any prefix of it: a torn tail.
        durable::append_and_sync(s, &mut a.log, &a.log_path, &batch, SyncPoint::LogAppend)?;
        a.size += batch.len() as u64;
        // 2. Index entries, which only ever point at synced batches. A crash
        //    before them leaves an index that stops early: harmless.
        if let Some(due) = a.schedule.batch(position, batch.len() as u64, last, max_ts) {
            let (offset, at) = due.offset;
            let rel = (offset - a.base_offset) as i32;
            let entry = index::encode_offset_entry(rel, at as i32);
            durable::append_and_sync(
                s,
                &mut a.index,
                &a.index_path,
                &entry,
                SyncPoint::OffsetIndexAppend,
            )?;
            if let Some(t) = due.time {
                append_time_entry(s, a, t)?;
            }
        }
        if let Some(entry) = aborted {
            let path = self.dir.join(segment_file_name(a.base_offset, "txnindex"));
            let mut opened = s.open(&path, OpenMode::CreateOrAppend)?;
            durable::append_and_sync(
                s,
                &mut opened.file,
                &path,
                &entry,
                SyncPoint::TxnIndexAppend,
            )?;
            if opened.created {
                // A crash before this loses the new file's name, and with it the entry.
                s.sync_dir(&self.dir, SyncPoint::TxnIndexCreate)?;
            }
        }
        self.next_offset = last
            .checked_add(1)
            .ok_or_else(|| Error::Invalid("offsets would overflow".into()))?;
        Ok(base..=last)
    }

    /// The `.txnindex` entry for an ABORT marker of `producer_id` at `marker`:
    /// the transaction's first offset, and the last stable offset at marker
    /// time (the earliest other open transaction, else the marker + 1).
    /// `None` when the producer has no open transaction here: Kafka indexes
    /// only transactions with data (`ProducerAppendInfo.appendEndTxnMarker`
    /// completes a transaction only when it has a first offset).
    fn aborted_txn_entry(&self, producer_id: i64, marker: i64) -> Result<Option<Vec<u8>>> {
        let state = crate::txn::analyze(
            &crate::log::Partition::open(&self.dir)?,
            &Default::default(),
        )?;
        let Some(first) = state
            .producers
            .get(&producer_id)
            .and_then(|p| p.open)
            .map(|o| o.first_offset)
        else {
            return Ok(None);
        };
        let lso = state.last_stable_at_marker(producer_id, marker);
        Ok(Some(index::encode_txn_entry(
            producer_id,
            first,
            marker,
            lso,
        )))
    }

    /// Close the active segment (final time-index entry) and start a new one at the log end.
    fn roll(&mut self) -> Result<()> {
        if let Some(t) = self.active.schedule.time_entry() {
            append_time_entry(&self.storage, &mut self.active, t)?;
        }
        self.active = create_segment(
            &self.storage,
            &self.dir,
            self.next_offset,
            self.config.index_interval_bytes,
        )?;
        Ok(())
    }
}

fn is_abort(records: &[NewRecord]) -> bool {
    use crate::format::control::{decode, ControlType};
    records.first().is_some_and(|r| {
        decode(r.key.as_deref(), r.value.as_deref(), 0).is_ok_and(|c| c.kind == ControlType::Abort)
    })
}

/// Refuse a partition folder whose real location is not inside the locked
/// data directory: a folder symlinked from another data directory is under
/// that directory's lock (perhaps a running broker's), not this one.
pub fn check_real_parent(partition_dir: &Path, data_dir: &Path) -> Result<()> {
    let real =
        std::fs::canonicalize(partition_dir).map_err(|e| Error::io(partition_dir, "resolve", e))?;
    let locked = std::fs::canonicalize(data_dir).map_err(|e| Error::io(data_dir, "resolve", e))?;
    if real.parent() != Some(locked.as_path()) {
        return Err(Error::layout(
            partition_dir,
            format!(
                "is really {}, outside the locked data directory {}: refusing to write \
                 under another directory's lock",
                real.display(),
                locked.display()
            ),
        ));
    }
    Ok(())
}

/// Kafka's `Topic.validate`: at most 249 characters of [a-zA-Z0-9._-], not
/// `.` or `..`; and a partition number that is not negative.
fn check_name(topic: &str, partition: i32) -> Result<()> {
    validate_topic_name(topic).map_err(Error::Invalid)?;
    if partition < 0 {
        return Err(Error::Invalid(format!(
            "invalid topic/partition {topic:?}/{partition}: a partition number is not negative"
        )));
    }
    Ok(())
}

/// Kafka's `Topic.validate` (`detectInvalidTopic`), with its messages: not
/// empty, `.` or `..`, at most 249 characters, only ASCII alphanumerics,
/// `.`, `_` and `-`.
pub fn validate_topic_name(topic: &str) -> std::result::Result<(), String> {
    let why = if topic.is_empty() {
        "the empty string is not allowed".to_string()
    } else if topic == "." || topic == ".." {
        format!("'{topic}' is not allowed")
    } else if topic.len() > MAX_TOPIC_NAME {
        format!(
            "topic name of {} characters: Kafka allows at most {MAX_TOPIC_NAME}",
            topic.len()
        )
    } else if !topic
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        format!(
            "{topic:?} contains one or more characters other than ASCII alphanumerics, '.', '_' and '-'"
        )
    } else {
        return Ok(());
    };
    Err(format!("Topic name is invalid: {why}"))
}

/// Kafka's `Topic.MAX_NAME_LENGTH`.
pub const MAX_TOPIC_NAME: usize = 249;

/// Append the time-index entry (timestamp, offset) the schedule made due.
fn append_time_entry<S: Storage>(
    s: &S,
    a: &mut ActiveSegment<S::File>,
    (timestamp, offset): (i64, i64),
) -> Result<()> {
    let rel = (offset - a.base_offset) as i32;
    let entry = index::encode_time_entry(timestamp, rel);
    durable::append_and_sync(
        s,
        &mut a.timeindex,
        &a.timeindex_path,
        &entry,
        SyncPoint::TimeIndexAppend,
    )
}

fn create_segment<S: Storage>(
    s: &S,
    dir: &Path,
    base_offset: i64,
    index_interval_bytes: u64,
) -> Result<ActiveSegment<S::File>> {
    let log_path = dir.join(segment_file_name(base_offset, "log"));
    let index_path = dir.join(segment_file_name(base_offset, "index"));
    let timeindex_path = dir.join(segment_file_name(base_offset, "timeindex"));
    let log = s.open(&log_path, OpenMode::CreateNew)?.file;
    let index = s.open(&index_path, OpenMode::CreateOrAppend)?.file;
    let timeindex = s.open(&timeindex_path, OpenMode::CreateOrAppend)?.file;
    // The new names must survive a crash before the first append is
    // acknowledged: a synced batch in a file whose name is lost is lost.
    s.sync_dir(dir, SyncPoint::NewSegment)?;
    Ok(ActiveSegment {
        base_offset,
        log_path,
        log,
        index_path,
        index,
        timeindex_path,
        timeindex,
        size: 0,
        schedule: index::IndexSchedule::new(base_offset, index_interval_bytes, i64::MIN),
    })
}

/// What reading the active segment once tells the appender.
struct ActiveScan {
    next_offset: i64,
    size: u64,
    /// The index schedule replayed over the segment's batches.
    schedule: index::IndexSchedule,
}

/// Read the last segment once: its log end offset, its index schedule, and
/// a refusal if anything in it is damaged. Reads only.
fn scan_active(dir: &Path, base_offset: i64, config: &AppendConfig) -> Result<ActiveScan> {
    let log_path = dir.join(segment_file_name(base_offset, "log"));
    let one = crate::log::Partition::single_file(&log_path, base_offset);
    let mut walk = one.walk(crate::log::Policy::VALID_PREFIX);
    let mut schedule =
        index::IndexSchedule::new(base_offset, config.index_interval_bytes, i64::MIN);
    while let Some(w) = walk.next_entry()? {
        let e = w.entry;
        let ts = match e {
            Entry::V2(b) => b.header.max_timestamp,
            Entry::Legacy(l) => l.timestamp,
        };
        // The entries due were written when the batch was appended.
        let _ = schedule.batch(e.position(), e.size(), w.next_offset - 1, ts);
    }
    let next_offset = walk.next_offset().unwrap_or(base_offset);
    if let Some(d) = walk.take_damage().into_iter().next() {
        return Err(Error::DamagedTail {
            path: log_path,
            error: d.error,
        });
    }
    let size = std::fs::metadata(&log_path)
        .map_err(|e| Error::io(&log_path, "stat", e))?
        .len();
    Ok(ActiveScan {
        next_offset,
        size,
        schedule,
    })
}

/// Scan the last segment, then make its indexes appendable and open its files.
fn open_existing<S: Storage>(
    s: &S,
    dir: &Path,
    base_offset: i64,
    config: &AppendConfig,
) -> Result<(ActiveSegment<S::File>, i64)> {
    let scan = scan_active(dir, base_offset, config)?;
    let log_path = dir.join(segment_file_name(base_offset, "log"));
    let index_path = dir.join(segment_file_name(base_offset, "index"));
    let timeindex_path = dir.join(segment_file_name(base_offset, "timeindex"));
    trim_index(s, &index_path, index::OFFSET_ENTRY_LEN)?;
    trim_index(s, &timeindex_path, TIME_ENTRY_LEN)?;
    let last_time_entry_timestamp = last_time_entry(&timeindex_path, base_offset)?;
    let log = s.open(&log_path, OpenMode::Existing)?.file;
    let index = s.open(&index_path, OpenMode::CreateOrAppend)?;
    let timeindex = s.open(&timeindex_path, OpenMode::CreateOrAppend)?;
    // A missing index is created here: its name must be durable before an
    // entry in it is acknowledged.
    if index.created || timeindex.created {
        s.sync_dir(dir, SyncPoint::IndexCreate)?;
    }
    let (index, timeindex) = (index.file, timeindex.file);
    Ok((
        ActiveSegment {
            base_offset,
            log,
            log_path,
            index,
            index_path,
            timeindex,
            timeindex_path,
            size: scan.size,
            // The time index on disk says where it really ends.
            schedule: scan.schedule.resume_time_index(last_time_entry_timestamp),
        },
        scan.next_offset,
    ))
}

/// Cut an index back to its whole, used entries before appending to it: a
/// torn entry (a crash during the index write) or preallocated zero slots
/// (a broker's unclean shutdown) would misalign every entry appended after
/// them. Indexes hold no data of their own: they are rebuilt from the log.
fn trim_index<S: Storage>(s: &S, path: &Path, entry_len: usize) -> Result<()> {
    let Some(bytes) = crate::log::files::read_regular(path, i32::MAX as u64)? else {
        return Ok(());
    };
    let used = index::used_entries(&bytes, entry_len);
    if used * entry_len < bytes.len() {
        durable::truncate(s, path, (used * entry_len) as u64, SyncPoint::IndexTrim)?;
    }
    Ok(())
}

/// The timestamp of the time index's last whole entry (`i64::MIN` if none).
fn last_time_entry(path: &Path, base_offset: i64) -> Result<i64> {
    use std::os::unix::fs::FileExt;
    let file = match crate::log::files::open_regular(path) {
        Ok(f) => f,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(i64::MIN)
        }
        Err(e) => return Err(e),
    };
    let len = file
        .metadata()
        .map_err(|e| Error::io(path, "stat", e))?
        .len();
    let whole = len / TIME_ENTRY_LEN as u64 * TIME_ENTRY_LEN as u64;
    if whole == 0 {
        return Ok(i64::MIN);
    }
    let mut buf = [0u8; TIME_ENTRY_LEN];
    file.read_exact_at(&mut buf, whole - TIME_ENTRY_LEN as u64)
        .map_err(|e| Error::io(path, "read", e))?;
    let entries = index::time_entries(&buf, base_offset).map_err(|error| Error::Decode {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(entries.first().map_or(i64::MIN, |e| e.timestamp))
}
