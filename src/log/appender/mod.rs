//! The one append path: everything klog writes to a log goes through
//! [`PartitionAppender::append`], and ends with [`PartitionAppender::close`].
//!
//! Opening takes the data directory's lock, then reads the active (last)
//! segment once to learn the log end offset and to refuse a damaged tail.
//! Each append follows `UnifiedLog.append` and `LogSegment.append`:
//! - it assigns offsets from the log end offset (callers never choose them)
//!   and stamps the batch with the partition's leader epoch; with
//!   `message.timestamp.type=LogAppendTime` the batch's maxTimestamp is the
//!   append time (`LogValidator`);
//! - it refuses a batch over `max.message.bytes` or `segment.bytes`;
//! - a partition with a `leader-epoch-checkpoint` gets the batch's epoch
//!   assigned at its base offset (`LeaderEpochFileCache.assign`), the
//!   checkpoint rewritten as `CheckpointFile.write` does, before the batch;
//! - the segment rolls when the batch would not fit in `segment.bytes`, when
//!   `segment.ms` passed since the segment's first batch, or when an index
//!   holds `segment.index.bytes` (`LogSegment.shouldRoll`);
//! - the batch is appended and `fdatasync`ed, then index entries are added:
//!   an offset index entry when more than `index.interval.bytes` were
//!   appended since the last one (so a segment's first batch never gets
//!   one), keyed by the batch's last offset and pointing at its position,
//!   and a time index entry at the same moment when the largest timestamp
//!   grew.
//!
//! A segment left (by a roll) or closed gets a last time index entry, its
//! largest timestamp, as `LogSegment.onBecomeInactiveSegment` and
//! `LogSegment.close` add it: klog's offline append ends like a broker's
//! clean shutdown, so a broker that trusts the files (`.kafka_cleanshutdown`)
//! finds the segment's largest timestamp where it looks for it.
//!
//! An append that fails (a full disk, a file size limit) is undone: the
//! files it wrote to are cut back to their lengths before it and synced,
//! and the error says what remains. A roll it made is undone with it: the
//! files the roll created are emptied and removed, and the segment it
//! rolled from is active again, without the closing entry the roll gave
//! its time index. (The binary ignores SIGXFSZ, so that a write past a
//! file size limit fails with EFBIG here instead of killing klog halfway.)
//! Files with other hard links are not written through (see
//! [`durable::check_single_link`]) unless `copy_hard_linked` asks for a
//! private copy first.
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
use crate::format::{encode_batch, BatchSpec, NewRecord, TimestampType};
use crate::log::checkpoint;
use crate::log::dir::list_segments;
use crate::log::durable::{self, Disk};
use crate::log::epoch_cache::EpochCache;
use crate::log::lock::DirLock;
use crate::log::segment_file_name;
use crate::log::storage::{OpenMode, Storage, SyncPoint};

mod active;
mod names;

use active::{append_time_entry, create_segment, open_existing, read_epoch_file, scan_active};
use names::check_name;
pub use names::{check_real_parent, validate_topic_name, MAX_TOPIC_NAME};

/// How the append path lays out segments: a topic's log configuration
/// (Kafka's `LogConfig`), with Kafka's defaults.
#[derive(Debug, Clone, Copy)]
pub struct AppendConfig {
    /// Roll to a new segment when the next batch would make it larger (Kafka's `segment.bytes`).
    pub segment_bytes: u64,
    /// Bytes between offset-index entries (`index.interval.bytes`).
    pub index_interval_bytes: u64,
    /// partitionLeaderEpoch stamped on batches. `None`: the partition's
    /// latest leader epoch (its `leader-epoch-checkpoint`), 0 without one.
    pub partition_leader_epoch: Option<i32>,
    /// The largest batch accepted, log overhead included (Kafka's
    /// `max.message.bytes`, default `message.max.bytes`: 1 MiB + 12).
    pub max_batch_bytes: u64,
    /// The most bytes an index file holds (`segment.index.bytes`): a
    /// segment whose offset index holds `segment.index.bytes / 8` entries,
    /// or whose time index holds `/ 12`, rolls (`AbstractIndex.isFull`).
    pub segment_index_bytes: u64,
    /// Roll when the batch's largest timestamp is more than this many ms
    /// past the segment's first batch's (`segment.ms`,
    /// `LogSegment.timeWaitedForRoll`; `segment.jitter.ms`, random per
    /// segment in Kafka, is taken as 0).
    pub segment_ms: i64,
    /// `message.timestamp.type=LogAppendTime`: the broker's clock at the
    /// append, stamped as every batch's maxTimestamp. `None`: CreateTime.
    pub log_append_time: Option<i64>,
    /// Write to a private copy of a segment file that has other hard
    /// links, instead of refusing it.
    pub copy_hard_linked: bool,
    /// Where an ABORT marker's `.txnindex` entry comes from: the producer
    /// state, which Kafka keeps beside the log (`ProducerStateManager`) and
    /// klog models above it ([`crate::txn::aborted_txn`]). Whoever appends
    /// transaction markers hands it in; without it an ABORT marker is
    /// refused rather than left out of the index.
    pub aborted_txn: Option<AbortedTxnLookup>,
}

/// For an ABORT marker of a producer (second argument) at an offset
/// (third) in a partition: the transaction it ends, `None` when the
/// producer has no open transaction there.
pub type AbortedTxnLookup = fn(&crate::log::Partition, i64, i64) -> Result<Option<AbortedTxn>>;

/// What `.txnindex` records of an aborted transaction besides its producer
/// and marker (`AbortedTxn` in Kafka's `TransactionIndex`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct AbortedTxn {
    /// The transaction's first offset.
    pub first_offset: i64,
    /// The last stable offset when the marker is written: the earliest
    /// other open transaction's first offset, else the marker + 1.
    pub last_stable_offset: i64,
}

/// Kafka's default `message.max.bytes` (1 MiB + the 12-byte log overhead).
pub const DEFAULT_MAX_MESSAGE_BYTES: u64 = 1024 * 1024 + 12;

impl Default for AppendConfig {
    /// Kafka's defaults (`LogConfig`, `ServerLogConfigs`): segment.bytes
    /// 1 GiB, index.interval.bytes 4096, max.message.bytes 1048588,
    /// segment.index.bytes 10 MiB, segment.ms 7 days, CreateTime.
    fn default() -> Self {
        AppendConfig {
            segment_bytes: 1 << 30,
            index_interval_bytes: 4096,
            partition_leader_epoch: None,
            max_batch_bytes: DEFAULT_MAX_MESSAGE_BYTES,
            segment_index_bytes: 10 * 1024 * 1024,
            segment_ms: 7 * 24 * 60 * 60 * 1000,
            log_append_time: None,
            copy_hard_linked: false,
            aborted_txn: None,
        }
    }
}

impl AppendConfig {
    /// Refuse what Kafka's config validation refuses: `segment.bytes`,
    /// `max.message.bytes` and `segment.index.bytes` are 32-bit (`LogConfig`;
    /// `segment.index.bytes` at least 4, `segment.ms` at least 1), and a
    /// segment's file positions must fit the index's 32-bit position field.
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
        if !(4..=max).contains(&self.segment_index_bytes) {
            return Err(Error::Invalid(format!(
                "segment.index.bytes {} out of range: 4..={max}",
                self.segment_index_bytes
            )));
        }
        if self.segment_ms < 1 {
            return Err(Error::Invalid(format!(
                "segment.ms {} out of range: at least 1",
                self.segment_ms
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
    /// Entries in `.index` and `.timeindex` (`AbstractIndex.entries`).
    index_entries: u64,
    time_entries: u64,
    /// The first batch's maxTimestamp (`LogSegment.rollingBasedTimestamp`),
    /// `None` while the segment is empty.
    first_batch_timestamp: Option<i64>,
    /// When the next index entries are due (Kafka's rule, in one place).
    schedule: index::IndexSchedule,
}

/// A partition's `leader-epoch-checkpoint` and the cache it holds.
#[derive(Debug, Clone)]
struct EpochFile {
    path: PathBuf,
    /// The cache as the broker loads it, with every append's epoch assigned.
    cache: EpochCache,
    /// The entries the file holds.
    on_disk: Vec<(i32, i64)>,
}

/// What an append changed, to undo it: the state before the batch (and
/// before the roll it made, if any).
#[derive(Debug, Clone)]
struct Mark {
    base_offset: i64,
    size: u64,
    index_entries: u64,
    time_entries: u64,
    first_batch_timestamp: Option<i64>,
    schedule: index::IndexSchedule,
    next_offset: i64,
    /// The `.txnindex` appended to, its length before, and whether the
    /// append created it.
    txn_index: Option<(PathBuf, u64, bool)>,
    /// The leader-epoch cache before the append, if the append changed the file.
    epochs: Option<EpochFile>,
}

/// A roll made by the last append, while that append can still be undone.
struct Rolled<F> {
    /// The segment rolled from, its closing time index entry appended.
    previous: ActiveSegment<F>,
    /// The new segment's files the roll created.
    created: Vec<PathBuf>,
}

/// Appends batches to one partition, holding the data directory's lock.
pub struct PartitionAppender<S: Storage = Disk> {
    _lock: Arc<DirLock>,
    storage: S,
    dir: PathBuf,
    config: AppendConfig,
    active: ActiveSegment<S::File>,
    next_offset: i64,
    epochs: Option<EpochFile>,
    /// The last append, while it can still be undone.
    last_append: Option<Mark>,
    /// The roll the last append made, if any, to undo with it.
    rolled: Option<Rolled<S::File>>,
    closed: bool,
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
                create_segment(&storage, &dir, 0, config.index_interval_bytes)?.0,
                0,
            ),
        };
        let log_start = checkpoint::read_offsets(&data_dir.join(checkpoint::LOG_START_OFFSET))
            .ok()
            .flatten()
            .and_then(|m| m.get(&(topic.to_string(), partition)).copied())
            .unwrap_or(0);
        let epochs = read_epoch_file(&dir, log_start, next_offset)?;
        Ok(PartitionAppender {
            _lock: lock,
            storage,
            dir,
            config,
            active,
            next_offset,
            epochs,
            last_append: None,
            rolled: None,
            closed: false,
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

    /// Stamp every later batch with `epoch` (a write to several replicas
    /// decides one epoch for all of them).
    pub fn set_leader_epoch(&mut self, epoch: i32) {
        self.config.partition_leader_epoch = Some(epoch);
    }

    /// The partitionLeaderEpoch the next batch gets: the one set, else the
    /// newest epoch the `leader-epoch-checkpoint` holds (an epoch starting
    /// at the log end included: a leader elected after the last write,
    /// which a broker's load drops from its cache but which is still the
    /// partition's epoch), else 0.
    pub fn leader_epoch(&self) -> i32 {
        self.config
            .partition_leader_epoch
            .unwrap_or(self.newest_epoch().unwrap_or(0))
    }

    /// The newest epoch of the `leader-epoch-checkpoint`, as the file holds it.
    fn newest_epoch(&self) -> Option<i32> {
        let file = self.epochs.as_ref()?;
        let loaded = file.cache.latest_epoch();
        let on_disk = file.on_disk.iter().map(|&(e, _)| e).max();
        loaded.max(on_disk)
    }

    /// Append `records` as one batch. `spec` gives the producer fields and
    /// attributes; its base offset is ignored (the partition assigns it).
    /// Returns the assigned offsets once the batch is durable. On failure
    /// nothing of the batch remains (the error says so, or says what does).
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
        let epoch = self.leader_epoch();
        if let Some(latest) = self.newest_epoch().filter(|&l| epoch < l) {
            // A leader stamps its own epoch, never an older one; assigning an
            // older epoch would drop the newer ones from the cache
            // (`LeaderEpochFileCache.maybeTruncateNonMonotonicEntries`) and
            // from the checkpoint: the checkpoint is only ever extended.
            return Err(Error::Invalid(format!(
                "{}: partitionLeaderEpoch {epoch} is below the partition's latest leader epoch {latest} \
                 (its leader-epoch-checkpoint): a leader never writes under an older epoch; nothing was written",
                self.dir.display()
            )));
        }
        let spec = BatchSpec {
            base_offset: base,
            partition_leader_epoch: epoch,
            timestamp_type: match self.config.log_append_time {
                Some(_) => TimestampType::LogAppendTime,
                None => spec.timestamp_type,
            },
            log_append_time: self.config.log_append_time.or(spec.log_append_time),
            ..*spec
        };
        let batch =
            encode_batch(&spec, records).map_err(|e| Error::io(&self.dir, "encode batch", e))?;
        // Refused before a byte is written, as a broker answers
        // RecordTooLargeException (`LogValidator`, `max.message.bytes`) and
        // RecordBatchTooLargeException (`UnifiedLog.append`, `segment.bytes`).
        if batch.len() as u64 > self.config.max_batch_bytes {
            return Err(Error::Invalid(format!(
                "a batch of {} records is {} bytes, over the limit of {} (Kafka's \
                 max.message.bytes); nothing was written",
                records.len(),
                batch.len(),
                self.config.max_batch_bytes
            )));
        }
        if batch.len() as u64 > self.config.segment_bytes {
            return Err(Error::Invalid(format!(
                "a batch of {} records is {} bytes, over the segment size of {} (Kafka's \
                 segment.bytes); nothing was written",
                records.len(),
                batch.len(),
                self.config.segment_bytes
            )));
        }
        let max_ts = match spec.log_append_time {
            Some(now) if spec.timestamp_type == TimestampType::LogAppendTime => now,
            _ => records
                .iter()
                .map(|r| r.timestamp)
                .max()
                .unwrap_or(i64::MIN),
        };
        // The epoch goes into the cache before the batch goes into the log
        // (`UnifiedLog.append` assigns it first): a crash between the two
        // leaves an epoch starting at the log end, as a newly elected
        // leader's cache holds, never a batch whose epoch the cache lacks.
        let epochs_before = self.assign_epoch(epoch, base)?;
        // The state before the roll too: an append that fails after
        // rolling undoes the roll (the previous segment's closing time
        // index entry, the new segment's files) with the batch.
        self.last_append = None;
        self.rolled = None;
        let mut mark = self.mark();
        mark.epochs = epochs_before;
        if let Err(error) = self.maybe_roll(batch.len() as u64, last, max_ts) {
            return Err(self.undo(&mark, error));
        }
        match self.write_batch(&mut mark, &spec, records, &batch, base, last, max_ts) {
            Ok(()) => {
                self.last_append = Some(mark);
                Ok(base..=last)
            }
            Err(error) => Err(self.undo(&mark, error)),
        }
    }

    /// Undo the last append (it succeeded; a write to another replica did
    /// not): its batch, index entries and leader epoch are cut back.
    pub fn undo_last_append(&mut self) -> Result<()> {
        let Some(mark) = self.last_append.take() else {
            return Ok(());
        };
        self.rollback(&mark)
    }

    /// End the append session as a broker closes a segment
    /// (`LogSegment.close`): the active segment's time index gets its
    /// largest timestamp, unless its last entry already is that.
    pub fn close(mut self) -> Result<()> {
        self.closed = true;
        self.seal()
    }

    /// The state before a batch, to undo it.
    fn mark(&self) -> Mark {
        let a = &self.active;
        Mark {
            base_offset: a.base_offset,
            size: a.size,
            index_entries: a.index_entries,
            time_entries: a.time_entries,
            first_batch_timestamp: a.first_batch_timestamp,
            schedule: a.schedule,
            next_offset: self.next_offset,
            txn_index: None,
            epochs: None,
        }
    }

    /// `LeaderEpochFileCache.assign(epoch, base)` and, when the cache then
    /// differs from the file, the checkpoint rewritten. Returns the file's
    /// state before, when it changed.
    fn assign_epoch(&mut self, epoch: i32, base: i64) -> Result<Option<EpochFile>> {
        let Some(file) = self.epochs.as_mut() else {
            return Ok(None);
        };
        let mut cache = file.cache.clone();
        cache.assign(epoch, base);
        let entries = cache.entries();
        if entries == file.on_disk {
            file.cache = cache;
            return Ok(None);
        }
        let before = file.clone();
        durable::write_checkpoint(
            &self.storage,
            &file.path,
            &checkpoint::render_leader_epochs(&entries),
        )?;
        file.cache = cache;
        file.on_disk = entries;
        Ok(Some(before))
    }

    /// Roll when `LogSegment.shouldRoll` would: the batch does not fit in
    /// segment.bytes, segment.ms passed since the first batch, an index is
    /// full, or an offset would not fit the index's relative offset.
    fn maybe_roll(&mut self, len: u64, last: i64, max_ts: i64) -> Result<()> {
        let a = &self.active;
        let c = &self.config;
        let waited = match a.first_batch_timestamp {
            // With no timestamp in the first batch Kafka counts from the
            // segment's creation on the broker's clock, which klog cannot know.
            Some(first) if first >= 0 => max_ts.saturating_sub(first) > c.segment_ms,
            _ => false,
        };
        let needs_roll = a.size > 0
            && (a.size + len > c.segment_bytes
                || waited
                || a.index_entries >= c.segment_index_bytes / index::OFFSET_ENTRY_LEN as u64
                || a.time_entries >= c.segment_index_bytes / TIME_ENTRY_LEN as u64
                || last - a.base_offset > i64::from(i32::MAX));
        if needs_roll {
            self.roll()?;
        }
        Ok(())
    }

    /// Write the encoded batch and its index entries. `mark`, taken before
    /// the batch, is what a failure is undone to (the `.txnindex` appended
    /// to is added to it).
    #[allow(clippy::too_many_arguments)]
    fn write_batch(
        &mut self,
        mark: &mut Mark,
        spec: &BatchSpec,
        records: &[NewRecord],
        batch: &[u8],
        base: i64,
        last: i64,
        max_ts: i64,
    ) -> Result<()> {
        // An ABORT marker is indexed in .txnindex, as the broker does, so that
        // read_committed readers that trust the index skip the aborted data.
        let aborted = if spec.control && records.len() == 1 && is_abort(records) {
            self.aborted_txn_entry(spec.producer_id, base)?
        } else {
            None
        };
        let s = &self.storage;
        let a = &mut self.active;
        let position = a.size;
        // 1. The batch itself, synced: from here on it is durable. A crash
        //    before the sync may leave any prefix of it: a torn tail.
        durable::append_and_sync(s, &mut a.log, &a.log_path, batch, SyncPoint::LogAppend)?;
        a.size += batch.len() as u64;
        a.first_batch_timestamp.get_or_insert(max_ts);
        // 2. Index entries, which only ever point at synced batches. A crash
        //    before them leaves an index that stops early: harmless. Each
        //    count goes up before its write, so that an undo cuts a torn entry.
        if let Some(due) = a.schedule.batch(position, batch.len() as u64, last, max_ts) {
            let (offset, at) = due.offset;
            let rel = (offset - a.base_offset) as i32;
            let entry = index::encode_offset_entry(rel, at as i32);
            a.index_entries += 1;
            durable::append_and_sync(
                s,
                &mut a.index,
                &a.index_path,
                &entry,
                SyncPoint::OffsetIndexAppend,
            )?;
            if let Some(t) = due.time {
                append_time_entry(s, a, t, SyncPoint::TimeIndexAppend)?;
            }
        }
        if let Some(entry) = aborted {
            let path = self.dir.join(segment_file_name(a.base_offset, "txnindex"));
            let mut opened = s.open(&path, OpenMode::CreateOrAppend)?;
            mark.txn_index = Some((path.clone(), opened.len, opened.created));
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
        Ok(())
    }

    /// Undo a failed append and say what remains.
    fn undo(&mut self, mark: &Mark, error: Error) -> Error {
        let log = self.active.log_path.clone();
        let rolled_to = self.rolled.as_ref().map(|_| log.clone());
        let after = match self.rollback(mark) {
            Ok(()) => format!(
                "rolled back: nothing of this append remains ({} is back to {} bytes, its indexes and \
                 leader epochs as they were{})",
                self.active.log_path.display(),
                mark.size,
                rolled_to.map_or(String::new(), |new| format!(
                    "; the segment it rolled to, {}, removed",
                    new.display()
                ))
            ),
            Err(e) => format!(
                "rolling it back failed too ({e}): {} may end in a part of the batch, which appending refuses \
                 until `klog verify-crc --repair` cuts it",
                log.display()
            ),
        };
        Error::Failed {
            error: Box::new(error),
            after,
        }
    }

    /// Cut every file an append wrote back to its length in `mark`, and
    /// restore the leader-epoch checkpoint. The indexes go first: they point
    /// at the log, so a crash during the undo never leaves an entry that
    /// points past it.
    ///
    /// An append that rolled first removes the files the roll created
    /// (nothing but the undone batch is in them) and makes the segment it
    /// rolled from active again, its closing time index entry cut with the
    /// rest: a broker adds that entry when the segment stops being active
    /// (`LogSegment.onBecomeInactiveSegment`), which it no longer is.
    fn rollback(&mut self, mark: &Mark) -> Result<()> {
        self.last_append = None;
        let s = &self.storage;
        let mut created = Vec::new();
        if let Some((path, len, new)) = &mark.txn_index {
            let mut f = s.open(path, OpenMode::Existing)?.file;
            durable::cut_back(s, &mut f, path, *len)?;
            if *new {
                created.push(path.clone());
            }
        }
        if self.active.base_offset != mark.base_offset {
            if let Some(rolled) = self.rolled.take() {
                let mut new = std::mem::replace(&mut self.active, rolled.previous);
                // Emptied (indexes first) and synced before the names go,
                // so that no crash brings back a batch that was undone.
                if new.time_entries > 0 {
                    durable::cut_back(s, &mut new.timeindex, &new.timeindex_path, 0)?;
                }
                if new.index_entries > 0 {
                    durable::cut_back(s, &mut new.index, &new.index_path, 0)?;
                }
                durable::cut_back(s, &mut new.log, &new.log_path, 0)?;
                drop(new);
                created.extend(rolled.created);
            }
        }
        self.rolled = None;
        if !created.is_empty() {
            durable::remove_created(s, &self.dir, &created)?;
        }
        let a = &mut self.active;
        if a.base_offset == mark.base_offset {
            if a.index_entries != mark.index_entries {
                let len = mark.index_entries * index::OFFSET_ENTRY_LEN as u64;
                durable::cut_back(s, &mut a.index, &a.index_path, len)?;
                a.index_entries = mark.index_entries;
            }
            if a.time_entries != mark.time_entries {
                let len = mark.time_entries * TIME_ENTRY_LEN as u64;
                durable::cut_back(s, &mut a.timeindex, &a.timeindex_path, len)?;
                a.time_entries = mark.time_entries;
            }
            durable::cut_back(s, &mut a.log, &a.log_path, mark.size)?;
            a.size = mark.size;
            a.first_batch_timestamp = mark.first_batch_timestamp;
            a.schedule = mark.schedule;
            self.next_offset = mark.next_offset;
        }
        if let Some(before) = &mark.epochs {
            durable::write_checkpoint(
                s,
                &before.path,
                &checkpoint::render_leader_epochs(&before.on_disk),
            )?;
            self.epochs = Some(before.clone());
        }
        Ok(())
    }

    /// The time index's closing entry (see [`close`](Self::close)).
    fn seal(&mut self) -> Result<()> {
        match self.active.schedule.time_entry() {
            Some(t) => append_time_entry(
                &self.storage,
                &mut self.active,
                t,
                SyncPoint::TimeIndexClose,
            ),
            None => Ok(()),
        }
    }

    /// The `.txnindex` entry for an ABORT marker of `producer_id` at
    /// `marker`, from [`AppendConfig::aborted_txn`]. `None` when the
    /// producer has no open transaction here: Kafka indexes only
    /// transactions with data (`ProducerAppendInfo.appendEndTxnMarker`
    /// completes a transaction only when it has a first offset).
    fn aborted_txn_entry(&self, producer_id: i64, marker: i64) -> Result<Option<Vec<u8>>> {
        let Some(lookup) = self.config.aborted_txn else {
            return Err(Error::Invalid(format!(
                "{}: an ABORT marker needs the producer state that indexes it in .txnindex \
                 (AppendConfig::aborted_txn)",
                self.dir.display()
            )));
        };
        let found = lookup(
            &crate::log::Partition::open(&self.dir)?,
            producer_id,
            marker,
        )?;
        Ok(found.map(|t| {
            index::encode_txn_entry(producer_id, t.first_offset, marker, t.last_stable_offset)
        }))
    }

    /// Close the active segment (its final time-index entry: its largest
    /// timestamp and the offset it came with, as
    /// `LogSegment.onBecomeInactiveSegment` appends it through
    /// `TimeIndex.maybeAppend`, synced) and start a new one at the log end.
    /// The segment rolled from is kept until the append is done with, to
    /// undo the roll with it ([`rollback`](Self::rollback)).
    fn roll(&mut self) -> Result<()> {
        self.seal()?;
        let (new, created) = create_segment(
            &self.storage,
            &self.dir,
            self.next_offset,
            self.config.index_interval_bytes,
        )?;
        let previous = std::mem::replace(&mut self.active, new);
        self.rolled = Some(Rolled { previous, created });
        Ok(())
    }
}

impl<S: Storage> Drop for PartitionAppender<S> {
    /// An appender dropped without [`close`](PartitionAppender::close)
    /// still closes its segment, as `LogSegment.close` does, swallowing an
    /// error (`Utils.swallow`): the time index then lacks its last entry,
    /// which `klog verify-crc` reports and `--repair` rebuilds.
    fn drop(&mut self) {
        if !self.closed {
            let _ = self.seal();
        }
    }
}

fn is_abort(records: &[NewRecord]) -> bool {
    use crate::format::control::{decode, ControlType};
    records.first().is_some_and(|r| {
        decode(r.key.as_deref(), r.value.as_deref(), 0).is_ok_and(|c| c.kind == ControlType::Abort)
    })
}
