//! The only code in klog that creates, writes, syncs, truncates, renames or
//! removes files. Everything that changes a data directory goes through
//! here: the real [`Storage`] ([`Disk`]), and the order of writes and
//! syncs, written down once as functions generic over the storage.
//!
//! Invariant: a write is acknowledged only after the sync that makes it
//! durable, and nothing durable ever points at something that is not:
//! - append ([`append_and_sync`]): the batch bytes are written and
//!   `fdatasync`ed before any index entry that points at them is written, so
//!   a crash can leave a log without its newest index entries (which a reader
//!   and Kafka's recovery tolerate and rebuild) but never an index entry that
//!   points past the log;
//! - a created file or directory is followed by an `fsync` of its directory
//!   before anything is acknowledged that lives in it ([`create_dir_all`]);
//! - repair: cut bytes are durable in a sidecar (bytes, then name) before
//!   the log is cut ([`save_range`], then [`truncate`], or for a salvage
//!   [`rewrite_keeping`]); renames are followed by an `fsync` of the
//!   directory ([`move_aside`], [`replace`]; a salvage's rewrite by the
//!   index rebuild's).

use std::fs::File;
use std::io::Write;

use std::os::unix::fs::MetadataExt;
use std::path::Path;

use rustix::fs::{AtFlags, Mode, OFlags};

use crate::error::{Error, Result};
use crate::log::beneath;
use crate::log::storage::{OpenMode, Opened, Storage, SyncPoint};

/// The real storage: the local file system, with `fdatasync` and directory `fsync`.
#[derive(Debug, Clone, Copy, Default)]
pub struct Disk;

impl Storage for Disk {
    type File = File;

    fn create_dir(&self, path: &Path) -> Result<()> {
        let at = beneath::resolve(path)?;
        rustix::fs::mkdirat(&at.dir, &at.name, Mode::from_raw_mode(0o777))
            .map_err(|e| Error::io(path, "create directory", e.into()))
    }

    fn open(&self, path: &Path, mode: OpenMode) -> Result<Opened<File>> {
        let at = beneath::resolve(path)?;
        let (file, created) = open_at(&at, path, mode)?;
        // Never write through a second name either: a file with other hard
        // links (a backup made with `cp -al`, a file linked in from outside
        // the data directory) would change under those names too. Checked
        // on the file opened, before `CreateOrTruncate` empties it.
        let meta = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
        if !meta.is_file() {
            return Err(Error::layout(
                path,
                "is not a regular file: klog writes only to regular files",
            ));
        }
        if !created {
            check_links(path, meta.nlink())?;
        }
        let len = if mode == OpenMode::CreateOrTruncate && meta.len() > 0 {
            file.set_len(0)
                .map_err(|e| Error::io(path, "truncate", e))?;
            0
        } else {
            meta.len()
        };
        Ok(Opened { file, created, len })
    }

    fn append(&self, file: &mut File, path: &Path, bytes: &[u8]) -> Result<()> {
        file.write_all(bytes)
            .map_err(|e| Error::io(path, "append", e))
    }

    fn set_len(&self, file: &mut File, path: &Path, len: u64) -> Result<()> {
        file.set_len(len)
            .map_err(|e| Error::io(path, "truncate", e))
    }

    fn sync_data(&self, file: &mut File, path: &Path, _at: SyncPoint) -> Result<()> {
        // fdatasync covers a changed length too (it is needed to read the data back).
        file.sync_data()
            .map_err(|e| Error::io(path, "fdatasync", e))
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let (old, new) = (beneath::resolve(from)?, beneath::resolve(to)?);
        rustix::fs::renameat(&old.dir, &old.name, &new.dir, &new.name)
            .map_err(|e| Error::io(from, "rename", e.into()))
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let at = beneath::resolve(path)?;
        rustix::fs::unlinkat(&at.dir, &at.name, AtFlags::empty())
            .map_err(|e| Error::io(path, "remove", e.into()))
    }

    fn sync_dir(&self, dir: &Path, _at: SyncPoint) -> Result<()> {
        let fd = beneath::open_dir(dir)?;
        rustix::fs::fsync(&fd).map_err(|e| Error::io(dir, "fsync directory", e.into()))
    }
}

/// Open the file `at` names, as `mode` says, never through a symlink: one
/// planted at a temporary or index name would send the write (or a
/// truncation) outside the data directory; `O_NOFOLLOW` makes such an open
/// fail (ELOOP). Returns the file and whether this open created it. Writes
/// go to the end of the file (`O_APPEND`), but for `CreateOrTruncate`,
/// which the caller empties, written from its start.
fn open_at(at: &beneath::At, path: &Path, mode: OpenMode) -> Result<(File, bool)> {
    let mut flags = OFlags::RDWR | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    if mode != OpenMode::CreateOrTruncate {
        flags |= OFlags::APPEND;
    }
    let open = |extra: OFlags| {
        rustix::fs::openat(&at.dir, &at.name, flags | extra, Mode::from_raw_mode(0o666))
    };
    let err = |e: rustix::io::Errno| {
        if e == rustix::io::Errno::LOOP {
            Error::layout(
                path,
                "is a symlink: klog does not write through symlinks (move the file in place, or remove the link)",
            )
        } else {
            Error::io(path, "open for writing", e.into())
        }
    };
    let (fd, created) = match mode {
        OpenMode::CreateNew => (open(OFlags::CREATE | OFlags::EXCL).map_err(err)?, true),
        OpenMode::Existing => (open(OFlags::empty()).map_err(err)?, false),
        // Try to create first, so `created` says what happened.
        OpenMode::CreateOrTruncate | OpenMode::CreateOrAppend => {
            match open(OFlags::CREATE | OFlags::EXCL) {
                Ok(fd) => (fd, true),
                Err(rustix::io::Errno::EXIST) => (open(OFlags::empty()).map_err(err)?, false),
                Err(e) => return Err(err(e)),
            }
        }
    };
    Ok((File::from(fd), created))
}

/// Refuse a regular file with more than one hard link (see [`Disk`]'s
/// `open`); a missing file passes (it is about to be created).
pub fn check_single_link(path: &Path) -> Result<()> {
    match std::fs::symlink_metadata(path) {
        Ok(m) if m.is_file() => check_links(path, m.nlink()),
        _ => Ok(()),
    }
}

/// Refuse `path`, a regular file, when it has `nlink` > 1 names.
fn check_links(path: &Path, nlink: u64) -> Result<()> {
    if nlink <= 1 {
        return Ok(());
    }
    Err(Error::layout(
        path,
        format!(
            "has {nlink} hard links: writing it would change the file under its other names too (a copy made \
             with `cp -al`, or a file linked from outside the data directory); give --copy-hard-linked to \
             write to a private copy of it instead, or copy the directory with `cp -a`"
        ),
    ))
}

/// Whether `path` is a regular file with other hard links.
pub fn is_hard_linked(path: &Path) -> bool {
    check_single_link(path).is_err()
}

/// Before `path` is written in place: when it has other hard links, give
/// it a private copy ([`break_link`]) if `copy` says so, else refuse it
/// ([`check_single_link`]).
pub fn unlink_or_refuse<S: Storage>(s: &S, path: &Path, copy: bool) -> Result<()> {
    if !is_hard_linked(path) {
        Ok(())
    } else if copy {
        break_link(s, path)
    } else {
        check_single_link(path)
    }
}

/// The directory holding `path` (`.` for a bare name).
pub fn parent_dir(path: &Path) -> &Path {
    match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    }
}

/// Append `bytes` to `file` and sync it. When this returns, the bytes are
/// durable. A crash before the sync may leave any prefix of them, which the
/// next open sees as a torn tail.
pub fn append_and_sync<S: Storage>(
    s: &S,
    file: &mut S::File,
    path: &Path,
    bytes: &[u8],
    at: SyncPoint,
) -> Result<()> {
    s.append(file, path, bytes)?;
    s.sync_data(file, path, at)
}

/// Create a directory and every missing parent, each made durable (its
/// parent synced) before the next level is created in it: a crash leaves a
/// prefix of the path, never a folder whose own entry can vanish.
pub fn create_dir_all<S: Storage>(s: &S, path: &Path) -> Result<()> {
    let missing: Vec<&Path> = path
        .ancestors()
        .take_while(|p| !p.as_os_str().is_empty() && !p.is_dir())
        .collect();
    for dir in missing.into_iter().rev() {
        match s.create_dir(dir) {
            // Another thread of this process (an export's jobs, each making
            // its partition's folders) made it first: it is there all the
            // same, and synced below like one made here.
            Err(_) if dir.is_dir() => {}
            other => other?,
        }
        s.sync_dir(parent_dir(dir), SyncPoint::CreateDir)?;
    }
    Ok(())
}

/// Copy bytes `from..to` of `src` into the sidecar file and make it
/// durable: its bytes, then its name. The bytes go through a fixed 1 MiB
/// buffer, so a cut of any size costs no more memory. If the sidecar
/// already holds exactly those bytes (an earlier repair stopped after this
/// step), it is kept; if it holds a prefix of them (an earlier copy was
/// interrupted, by a crash or a full disk), the rest is appended. A crash
/// during this step leaves the source untouched.
pub fn save_range<S: Storage>(s: &S, src: &Path, from: u64, to: u64, sidecar: &Path) -> Result<()> {
    use crate::log::files::open_regular;
    use crate::log::read::compare::{compare_range, RangeCopy};
    let (mut out, at) = match compare_range(sidecar, src, from, to) {
        Ok(RangeCopy::Equal) => return Ok(()),
        Ok(RangeCopy::Prefix(n)) => (s.open(sidecar, OpenMode::Existing)?.file, from + n),
        Ok(RangeCopy::Different) => {
            return Err(Error::layout(
                sidecar,
                "already exists with other bytes; move it away first",
            ))
        }
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            (s.open(sidecar, OpenMode::CreateNew)?.file, from)
        }
        Err(e) => return Err(e),
    };
    let input = open_regular(src)?;
    copy_range(s, (&input, src), at..to, (&mut out, sidecar))?;
    // Bytes before name: the name must never survive without its bytes.
    s.sync_data(&mut out, sidecar, SyncPoint::SidecarData)?;
    s.sync_dir(parent_dir(sidecar), SyncPoint::SidecarEntry)
}

/// Append bytes `range` of the file `input` (named `src`) to `out`, through
/// a fixed 1 MiB buffer: memory does not grow with the range.
fn copy_range<S: Storage>(
    s: &S,
    (input, src): (&File, &Path),
    range: std::ops::Range<u64>,
    (out, dst): (&mut S::File, &Path),
) -> Result<()> {
    let mut buf = crate::log::read::buffer::AlignedBuf::zeroed(1 << 20);
    let mut at = range.start;
    while at < range.end {
        let n = ((range.end - at) as usize).min(buf.len());
        let part = buf.get_mut(..n).unwrap_or(&mut []);
        crate::log::read::read_exact_at(input, part, at).map_err(|e| Error::io(src, "read", e))?;
        s.append(out, dst, part)?;
        at += n as u64;
    }
    Ok(())
}

/// Truncate `path` to `len` bytes and sync it. Only called once the cut
/// bytes are durable in a sidecar ([`save_range`]).
pub fn truncate<S: Storage>(s: &S, path: &Path, len: u64, at: SyncPoint) -> Result<()> {
    let mut f = s.open(path, OpenMode::Existing)?.file;
    s.set_len(&mut f, path, len)?;
    s.sync_data(&mut f, path, at)
}

/// Cut `file` back to `len` bytes and sync it: an append that failed
/// (a full disk, a file size limit) is undone, so that what it wrote in
/// part is neither acknowledged nor left behind as a torn tail.
pub fn cut_back<S: Storage>(s: &S, file: &mut S::File, path: &Path, len: u64) -> Result<()> {
    s.set_len(file, path, len)?;
    s.sync_data(file, path, SyncPoint::Rollback)
}

/// Remove files the append path created itself (a new segment's, a new
/// `.txnindex`) for an append that is being undone, once they are empty
/// (cut back with [`cut_back`] when anything was written to them), then
/// sync their folder. They hold nothing of anyone else's. The sync comes
/// before the rest of the undo: a crash after it cannot bring back an empty
/// segment after the one rolled from, whose closing time index entry the
/// undo cuts next.
pub fn remove_created<S: Storage>(s: &S, dir: &Path, paths: &[std::path::PathBuf]) -> Result<()> {
    for path in paths {
        s.remove_file(path)?;
    }
    s.sync_dir(dir, SyncPoint::RollbackRemove)
}

/// Write a checkpoint file as Kafka's `CheckpointFile.write` does: the text
/// into `<path>.tmp`, synced, then renamed over `path` and the directory
/// synced (`Utils.atomicMoveWithFallback`). A crash leaves the old
/// checkpoint or the new one (and perhaps a stale `.tmp`, which the next
/// write empties first, as Kafka's does).
pub fn write_checkpoint<S: Storage>(s: &S, path: &Path, text: &str) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = s.open(&tmp, OpenMode::CreateOrTruncate)?.file;
    s.append(&mut f, &tmp, text.as_bytes())?;
    // Bytes before the rename, or the name could come to point at an empty file.
    s.sync_data(&mut f, &tmp, SyncPoint::CheckpointData)?;
    s.rename(&tmp, path)?;
    s.sync_dir(parent_dir(path), SyncPoint::CheckpointRename)
}

/// Give `path`, a file with other hard links, a private copy of its bytes:
/// they are streamed into `<path>.klog-link`, synced, and the copy is
/// renamed over `path` (the directory synced). The other names keep the
/// old inode, untouched by what is written to `path` next. A crash leaves
/// `path` linked as before, or the private copy.
pub fn break_link<S: Storage>(s: &S, path: &Path) -> Result<()> {
    use crate::log::files::open_regular;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".klog-link");
    let tmp = std::path::PathBuf::from(tmp);
    let input = open_regular(path)?;
    let len = input
        .metadata()
        .map_err(|e| Error::io(path, "stat", e))?
        .len();
    let mut out = s.open(&tmp, OpenMode::CreateOrTruncate)?.file;
    copy_range(s, (&input, path), 0..len, (&mut out, &tmp))?;
    s.sync_data(&mut out, &tmp, SyncPoint::LinkCopyData)?;
    s.rename(&tmp, path)?;
    s.sync_dir(parent_dir(path), SyncPoint::LinkCopyRename)
}

/// Rename `from` to `to` (which must not exist) and sync the directory:
/// how files are moved aside instead of deleted.
pub fn move_aside<S: Storage>(s: &S, from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        return Err(Error::layout(
            to,
            "already exists; refusing to overwrite it",
        ));
    }
    s.rename(from, to)?;
    s.sync_dir(parent_dir(to), SyncPoint::MoveAside)
}

/// Replace `path` with `bytes` atomically: write a temporary file in the
/// same directory, sync it, rename it over `path`, sync the directory. A
/// crash leaves either the old file (or none) or the new one, never a mix.
pub fn replace<S: Storage>(s: &S, path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".klog-tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = s.open(&tmp, OpenMode::CreateOrTruncate)?.file;
    s.append(&mut f, &tmp, bytes)?;
    // Without this sync the rename could become durable first, naming an
    // empty or partial file.
    s.sync_data(&mut f, &tmp, SyncPoint::ReplaceData)?;
    s.rename(&tmp, path)?;
    s.sync_dir(parent_dir(path), SyncPoint::ReplaceRename)
}

/// Rewrite `path` keeping only its byte ranges `keep` (in order), streamed
/// through a fixed 1 MiB buffer into a temporary file in the same
/// directory, which is synced and renamed over `path`: a crash leaves the
/// old file or the new one, never a mix. Called only once the bytes left
/// out are durable in sidecars ([`save_range`]), so either file loses
/// nothing. The rename is not synced here: the salvage rebuilds the
/// segment's indexes right after, whose [`replace`] syncs this directory;
/// until then a crash leaves the old log (and the sidecars), which the next
/// salvage finds and cuts again, reusing the sidecars.
pub fn rewrite_keeping<S: Storage>(s: &S, path: &Path, keep: &[(u64, u64)]) -> Result<()> {
    use crate::log::files::open_regular;
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".klog-tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut out = s.open(&tmp, OpenMode::CreateOrTruncate)?.file;
    let input = open_regular(path)?;
    for &(from, to) in keep {
        copy_range(s, (&input, path), from..to, (&mut out, &tmp))?;
    }
    // Bytes before the rename, or the name could come to point at an empty file.
    s.sync_data(&mut out, &tmp, SyncPoint::SalvageData)?;
    s.rename(&tmp, path)
}

/// A file written in one stream (an export's Parquet file) under a
/// temporary name beside its final one, and renamed to it only once it is
/// whole ([`Staged::commit`]): its bytes synced, then the rename, then the
/// directory synced. A crash, an error or an interrupt before that leaves
/// at most the temporary file (a dot name ending `.klog-tmp`, which no
/// `*.parquet` glob and no Hive-style reader takes for data), never a
/// truncated file under the final name. Dropped without a commit, it
/// removes its temporary file.
#[derive(Debug)]
pub struct Staged {
    file: Option<File>,
    tmp: std::path::PathBuf,
    path: std::path::PathBuf,
}

/// The temporary name [`Staged`] writes `path` under: `.NAME.klog-tmp` in
/// the same directory.
pub fn staged_name(path: &Path) -> std::path::PathBuf {
    let mut name = std::ffi::OsString::from(".");
    name.push(path.file_name().unwrap_or_default());
    name.push(".klog-tmp");
    parent_dir(path).join(name)
}

impl Staged {
    /// Start writing `path` (its directory must exist): its temporary
    /// name is created, or emptied when an earlier run left it.
    pub fn create(path: &Path) -> Result<Self> {
        let tmp = staged_name(path);
        let file = Disk.open(&tmp, OpenMode::CreateOrTruncate)?.file;
        Ok(Staged {
            file: Some(file),
            tmp,
            path: path.to_path_buf(),
        })
    }

    /// The final name.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file is whole: make its bytes durable, rename it to its final
    /// name (replacing a file of that name), and make the name durable.
    pub fn commit(mut self) -> Result<()> {
        let Some(mut file) = self.file.take() else {
            return Ok(());
        };
        // Bytes before the rename, or the final name could come to point
        // at an empty or partial file.
        Disk.sync_data(&mut file, &self.tmp, SyncPoint::ExportData)?;
        drop(file);
        Disk.rename(&self.tmp, &self.path)?;
        Disk.sync_dir(parent_dir(&self.path), SyncPoint::ExportRename)
    }
}

impl Write for Staged {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        match &mut self.file {
            Some(f) => f.write(buf),
            None => Err(std::io::Error::other("the file is already committed")),
        }
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }
}

impl Drop for Staged {
    fn drop(&mut self) {
        if self.file.take().is_some() {
            // Not committed: what was written is not a whole file. Best
            // effort; a crash leaves the temporary name, never the final.
            let _ = Disk.remove_file(&self.tmp);
        }
    }
}

/// Remove a file an earlier `klog export` wrote (the caller checked that
/// the name is one of an export's), for `--overwrite`. Nothing else is
/// ever removed from an export's folder.
pub fn remove_exported(path: &Path) -> Result<()> {
    Disk.remove_file(path)
}

/// Remove a folder tree. Used only by the demos (`group-demo`, `eos-demo`),
/// for folders they created themselves; nothing a user has is ever removed.
pub fn remove_created_tree(path: &Path) -> Result<()> {
    std::fs::remove_dir_all(path).map_err(|e| Error::io(path, "remove", e))
}

/// Remove a file a demo created.
pub fn remove_created_file(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| Error::io(path, "remove", e))
}

/// Write `text` into the marker file (a demo records what it left).
pub fn write_marker(path: &Path, text: &str) -> Result<()> {
    std::fs::write(path, text).map_err(|e| Error::io(path, "write", e))
}

/// Create an empty marker file (a demo marks the directory it owns).
pub fn create_marker(path: &Path) -> Result<()> {
    File::create(path)
        .map(drop)
        .map_err(|e| Error::io(path, "create", e))
}
