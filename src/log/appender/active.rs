//! The active segment: scanned once at open (its log end, its damaged
//! tail refused, its indexes trimmed to their entries), created at a roll,
//! and its last time index entry.

use std::path::{Path, PathBuf};

use super::{ActiveSegment, AppendConfig, EpochFile};
use crate::error::{Error, Result};
use crate::format::index::{self, TIME_ENTRY_LEN};
use crate::log::checkpoint;
use crate::log::durable;
use crate::log::epoch_cache::EpochCache;
use crate::log::segment_file_name;
use crate::log::storage::{OpenMode, Storage, SyncPoint};

/// Append the time-index entry (timestamp, offset) the schedule made due,
/// synced at `at`. The count goes up first, so that an undo cuts a torn entry.
pub(super) fn append_time_entry<S: Storage>(
    s: &S,
    a: &mut ActiveSegment<S::File>,
    (timestamp, offset): (i64, i64),
    at: SyncPoint,
) -> Result<()> {
    let rel = (offset - a.base_offset) as i32;
    let entry = index::encode_time_entry(timestamp, rel);
    a.time_entries += 1;
    durable::append_and_sync(s, &mut a.timeindex, &a.timeindex_path, &entry, at)
}

/// Create the segment at `base_offset` (a fresh partition's first, or the
/// one a roll starts), and say which of its files were created: a roll
/// that is undone removes those, and only those. A failure part way
/// removes what it created, leaving the folder as it was.
pub(super) fn create_segment<S: Storage>(
    s: &S,
    dir: &Path,
    base_offset: i64,
    index_interval_bytes: u64,
) -> Result<(ActiveSegment<S::File>, Vec<PathBuf>)> {
    let log_path = dir.join(segment_file_name(base_offset, "log"));
    let index_path = dir.join(segment_file_name(base_offset, "index"));
    let timeindex_path = dir.join(segment_file_name(base_offset, "timeindex"));
    let mut created = Vec::new();
    let opened = (|| -> Result<_> {
        let log = s.open(&log_path, OpenMode::CreateNew)?.file;
        created.push(log_path.clone());
        let index = s.open(&index_path, OpenMode::CreateOrAppend)?;
        if index.created {
            created.push(index_path.clone());
        }
        let timeindex = s.open(&timeindex_path, OpenMode::CreateOrAppend)?;
        if timeindex.created {
            created.push(timeindex_path.clone());
        }
        // The new names must survive a crash before the first append is
        // acknowledged: a synced batch in a file whose name is lost is lost.
        s.sync_dir(dir, SyncPoint::NewSegment)?;
        Ok((log, index.file, timeindex.file))
    })();
    let (log, index, timeindex) = match opened {
        Ok(files) => files,
        Err(e) => {
            // Best effort (the error to report is the one that stopped the
            // creation): files nothing was written to.
            let _ = durable::remove_created(s, dir, &created);
            return Err(e);
        }
    };
    let segment = ActiveSegment {
        base_offset,
        log_path,
        log,
        index_path,
        index,
        timeindex_path,
        timeindex,
        size: 0,
        index_entries: 0,
        time_entries: 0,
        first_batch_timestamp: None,
        schedule: index::IndexSchedule::new(base_offset, index_interval_bytes, i64::MIN),
    };
    Ok((segment, created))
}

/// What reading the active segment once tells the appender.
pub(super) struct ActiveScan {
    pub(super) next_offset: i64,
    size: u64,
    /// The first batch's maxTimestamp, if the segment has a batch.
    first_batch_timestamp: Option<i64>,
    /// The index schedule replayed over the segment's batches.
    schedule: index::IndexSchedule,
}

/// Read the last segment once: its log end offset, its index schedule, and
/// a refusal if anything in it is damaged. Reads only.
pub(super) fn scan_active(
    dir: &Path,
    base_offset: i64,
    config: &AppendConfig,
) -> Result<ActiveScan> {
    let log_path = dir.join(segment_file_name(base_offset, "log"));
    let one = crate::log::Partition::single_file(&log_path, base_offset);
    let mut walk = one.walk(crate::log::Policy::VALID_PREFIX);
    let mut schedule =
        index::IndexSchedule::new(base_offset, config.index_interval_bytes, i64::MIN);
    let mut first_batch_timestamp = None;
    while let Some(w) = walk.next_entry()? {
        let e = w.entry;
        let ts = e.max_timestamp();
        first_batch_timestamp.get_or_insert(ts);
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
        first_batch_timestamp,
        schedule,
    })
}

/// Scan the last segment, then make its indexes appendable and open its files.
pub(super) fn open_existing<S: Storage>(
    s: &S,
    dir: &Path,
    base_offset: i64,
    config: &AppendConfig,
) -> Result<(ActiveSegment<S::File>, i64)> {
    let scan = scan_active(dir, base_offset, config)?;
    let log_path = dir.join(segment_file_name(base_offset, "log"));
    let index_path = dir.join(segment_file_name(base_offset, "index"));
    let timeindex_path = dir.join(segment_file_name(base_offset, "timeindex"));
    let txnindex_path = dir.join(segment_file_name(base_offset, "txnindex"));
    // Every file written in place gets a private copy first, or is refused,
    // before anything is written.
    for path in [&log_path, &index_path, &timeindex_path, &txnindex_path] {
        durable::unlink_or_refuse(s, path, config.copy_hard_linked)?;
    }
    let index_entries = trim_index(s, &index_path, index::OFFSET_ENTRY_LEN)?;
    let time_entries = trim_index(s, &timeindex_path, TIME_ENTRY_LEN)?;
    let last_time_entry = last_time_entry(&timeindex_path, base_offset)?;
    let log = s.open(&log_path, OpenMode::Existing)?;
    if log.len != scan.size {
        // The file opened is not the one read (a folder or file swapped
        // meanwhile): positions and a rollback's length would be wrong for it.
        return Err(Error::layout(
            &log_path,
            format!(
                "is {} bytes where klog read {} an instant before: the file changed, or was swapped, \
                 while klog opened it; nothing was written",
                log.len, scan.size
            ),
        ));
    }
    let log = log.file;
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
            index_entries,
            time_entries,
            first_batch_timestamp: scan.first_batch_timestamp,
            // The largest timestamp so far is the time index's last entry,
            // as a broker loading the segment takes it.
            schedule: scan.schedule.resume_time_index(last_time_entry),
        },
        scan.next_offset,
    ))
}

/// The partition's `leader-epoch-checkpoint`, when it has one (every
/// partition a broker created does: `CheckpointFile` creates it), with the
/// cache as `LogLoader` loads it for a log of `log_start..log_end`.
pub(super) fn read_epoch_file(
    dir: &Path,
    log_start: i64,
    log_end: i64,
) -> Result<Option<EpochFile>> {
    let path = dir.join(checkpoint::LEADER_EPOCH);
    let Some(on_disk) = checkpoint::read_leader_epochs(&path)? else {
        return Ok(None);
    };
    let cache = EpochCache::from_entries(on_disk.iter().copied()).as_loaded(log_start, log_end);
    Ok(Some(EpochFile {
        path,
        cache,
        on_disk,
    }))
}

/// Cut an index back to its whole, used entries before appending to it: a
/// torn entry (a crash during the index write) or preallocated zero slots
/// (a broker's unclean shutdown) would misalign every entry appended after
/// them. Indexes hold no data of their own: they are rebuilt from the log.
/// Returns the entries it holds.
fn trim_index<S: Storage>(s: &S, path: &Path, entry_len: usize) -> Result<u64> {
    let Some(bytes) = crate::log::files::read_regular(path, i32::MAX as u64)? else {
        return Ok(0);
    };
    let used = index::used_entries(&bytes, entry_len);
    if used * entry_len < bytes.len() {
        durable::truncate(s, path, (used * entry_len) as u64, SyncPoint::IndexTrim)?;
    }
    Ok(used as u64)
}

/// The time index's last whole entry (timestamp, offset), if any.
fn last_time_entry(path: &Path, base_offset: i64) -> Result<Option<(i64, i64)>> {
    let Some((file, len)) = crate::log::files::open_existing(path)? else {
        return Ok(None);
    };
    let whole = len / TIME_ENTRY_LEN as u64 * TIME_ENTRY_LEN as u64;
    if whole == 0 {
        return Ok(None);
    }
    let mut buf = [0u8; TIME_ENTRY_LEN];
    crate::log::read::read_exact_at(&file, &mut buf, whole - TIME_ENTRY_LEN as u64)
        .map_err(|e| Error::io(path, "read", e))?;
    let entries = index::time_entries(&buf, base_offset).map_err(|error| Error::Decode {
        path: path.to_path_buf(),
        error,
    })?;
    Ok(entries.first().map(|e| (e.timestamp, e.offset)))
}
