//! The storage seam: every change klog makes to a data directory (the append
//! path and `verify-crc --repair`) is a call on a [`Storage`].
//!
//! Invariant: a change is durable only after the sync that covers it — file
//! bytes (and length) after [`Storage::sync_data`] of that file, a created,
//! renamed or removed directory entry after [`Storage::sync_dir`] of its
//! directory. The order in which klog issues these calls is written once, in
//! [`durable`](crate::log::durable), which also holds the real implementation
//! ([`Disk`](crate::log::durable::Disk)). Every sync call names its
//! [`SyncPoint`], so a test double can crash at each one in turn, or skip one
//! to show what it protects.
//!
//! Reading stays outside the seam: readers open files by path. A storage
//! therefore changes files where readers see them (its live image); what it
//! may keep aside is only the model of what would survive a power loss.

use std::path::Path;

use crate::error::Result;
use crate::log::lock::DirLock;

/// How [`Storage::open`] finds or makes the file.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OpenMode {
    /// Create it; it must not exist yet (a new segment, a sidecar).
    CreateNew,
    /// Create it, or empty it (a temporary file left by an earlier crash).
    CreateOrTruncate,
    /// Create it, or open it to append to what it holds.
    CreateOrAppend,
    /// It must exist (a file to cut).
    Existing,
}

/// An open file and whether [`Storage::open`] brought it into existence
/// (then its directory entry needs a [`Storage::sync_dir`] to survive).
#[derive(Debug)]
pub struct Opened<F> {
    /// The open file.
    pub file: F,
    /// True when the file did not exist before.
    pub created: bool,
    /// Its length when opened (0 once `CreateOrTruncate` emptied it): the
    /// file's own, whatever a path names by the time it is read.
    pub len: u64,
}

/// Where a sync is issued. Each variant is one call site in the write paths;
/// the list is what a crash test enumerates and what a mutation test removes
/// one at a time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum SyncPoint {
    /// A created directory's entry in its parent (data directory, partition folder).
    CreateDir,
    /// The names of a new segment's `.log`, `.index` and `.timeindex`.
    NewSegment,
    /// The names of indexes created for an existing active segment that had none.
    IndexCreate,
    /// A batch appended to the active segment: the acknowledgement.
    LogAppend,
    /// An offset-index entry.
    OffsetIndexAppend,
    /// A time-index entry at an index interval.
    TimeIndexAppend,
    /// The time-index entry of a segment rolled away from or closed: its
    /// largest timestamp (`LogSegment.onBecomeInactiveSegment`, `LogSegment.close`).
    TimeIndexClose,
    /// The bytes of a checkpoint file's `.tmp` (a `leader-epoch-checkpoint`).
    CheckpointData,
    /// The rename of that `.tmp` over the checkpoint.
    CheckpointRename,
    /// A file cut back to its length before an append that failed.
    Rollback,
    /// The folder of the files a failed append's roll created, once they
    /// are removed: before the segment rolled from loses its closing time
    /// index entry, so that no crash leaves it inactive without one.
    RollbackRemove,
    /// The bytes of the private copy of a hard-linked file.
    LinkCopyData,
    /// The rename of that copy over the hard-linked name.
    LinkCopyRename,
    /// A `.txnindex` entry for an ABORT marker.
    TxnIndexAppend,
    /// The name of a `.txnindex` created for its first entry.
    TxnIndexCreate,
    /// An index cut back to its whole entries when the appender opens.
    IndexTrim,
    /// The bytes of a repair sidecar (`.cut-<position>`).
    SidecarData,
    /// The name of a repair sidecar.
    SidecarEntry,
    /// A segment truncated by a repair.
    LogTruncate,
    /// A file renamed aside (`.cut-0`, `.cut`, `.old`).
    MoveAside,
    /// The bytes of a file about to replace another (a rebuilt index).
    ReplaceData,
    /// The rename of that file over the old one.
    ReplaceRename,
    /// The bytes of a segment rewritten without its damaged ranges (salvage).
    SalvageData,
    /// The bytes of an export's file (`klog export`), under its temporary
    /// name. Not in [`SyncPoint::ALL`]: an export writes outside every data
    /// directory, so no data-directory write path reaches it.
    ExportData,
    /// The rename of that file to its final name.
    ExportRename,
}

impl SyncPoint {
    /// Every sync point of the data-directory write paths, in write-path
    /// order (an export's two are outside them).
    pub const ALL: [SyncPoint; 23] = [
        SyncPoint::CreateDir,
        SyncPoint::NewSegment,
        SyncPoint::IndexCreate,
        SyncPoint::LinkCopyData,
        SyncPoint::LinkCopyRename,
        SyncPoint::CheckpointData,
        SyncPoint::CheckpointRename,
        SyncPoint::LogAppend,
        SyncPoint::OffsetIndexAppend,
        SyncPoint::TimeIndexAppend,
        SyncPoint::TimeIndexClose,
        SyncPoint::Rollback,
        SyncPoint::RollbackRemove,
        SyncPoint::TxnIndexAppend,
        SyncPoint::TxnIndexCreate,
        SyncPoint::IndexTrim,
        SyncPoint::SidecarData,
        SyncPoint::SidecarEntry,
        SyncPoint::LogTruncate,
        SyncPoint::MoveAside,
        SyncPoint::ReplaceData,
        SyncPoint::ReplaceRename,
        SyncPoint::SalvageData,
    ];
}

/// The operations that change a data directory. Paths are full paths (as
/// readers see them); nothing here reads. The real storage resolves a path
/// below a locked data directory from that directory's descriptor,
/// following no symlink ([`beneath`](crate::log::beneath)).
pub trait Storage {
    /// An open file of this storage.
    type File;

    /// Create one directory; its parent must exist. Durable once its parent is synced.
    fn create_dir(&self, path: &Path) -> Result<()>;

    /// Open `path` for writing as `mode` says. Writes go to the end of the file.
    fn open(&self, path: &Path, mode: OpenMode) -> Result<Opened<Self::File>>;

    /// Append `bytes` at the end of `file`. Durable once `file` is synced.
    fn append(&self, file: &mut Self::File, path: &Path, bytes: &[u8]) -> Result<()>;

    /// Cut or extend `file` to `len` bytes. Durable once `file` is synced.
    fn set_len(&self, file: &mut Self::File, path: &Path, len: u64) -> Result<()>;

    /// Make the bytes and length of `file` durable (`fdatasync`).
    fn sync_data(&self, file: &mut Self::File, path: &Path, at: SyncPoint) -> Result<()>;

    /// Rename `from` to `to`, replacing `to` if it exists. Durable once the directory is synced.
    fn rename(&self, from: &Path, to: &Path) -> Result<()>;

    /// Remove the file `path`. Durable once its directory is synced.
    fn remove_file(&self, path: &Path) -> Result<()>;

    /// Make the entries of directory `dir` durable (`fsync` of the directory).
    fn sync_dir(&self, dir: &Path, at: SyncPoint) -> Result<()>;

    /// Take the data directory's lock (see [`DirLock`]).
    fn lock(&self, data_dir: &Path) -> Result<DirLock> {
        DirLock::acquire(data_dir)
    }
}
