//! The only code in klog that creates, writes, syncs, truncates or renames
//! files. Everything that changes a data directory goes through here, so the
//! order of writes and syncs is written down in one place.
//!
//! Append order (see [`append_and_sync`]): the batch bytes are written and
//! `fdatasync`ed before any index entry that points at them is written, so a
//! crash can leave a log without its newest index entries (which a reader
//! and Kafka's recovery tolerate and rebuild) but never an index entry that
//! points past the log.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;

use crate::error::{Error, Result};

/// Open (creating if needed) a file for appending.
pub fn open_append(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .append(true)
        .read(true)
        .open(path)
        .map_err(|e| Error::io(path, "open for append", e))
}

/// Open (creating if needed) the lock file; opened for writing so a POSIX
/// write lock can be taken on it.
pub fn open_lock_file(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create(true)
        .truncate(false)
        .read(true)
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, "open lock file", e))
}

/// Append `bytes` to `file` and `fdatasync` it. When this returns, the bytes
/// are durable. A crash before the sync may leave any prefix of them, which
/// the next open sees as a torn tail.
pub fn append_and_sync(file: &mut File, path: &Path, bytes: &[u8]) -> Result<()> {
    file.write_all(bytes)
        .map_err(|e| Error::io(path, "append", e))?;
    file.sync_data()
        .map_err(|e| Error::io(path, "fdatasync", e))
}

/// Create a directory (and parents) and fsync its parent so the new entry survives a crash.
pub fn create_dir(path: &Path) -> Result<()> {
    std::fs::create_dir_all(path).map_err(|e| Error::io(path, "create directory", e))?;
    if let Some(parent) = path.parent() {
        sync_dir(parent)?;
    }
    Ok(())
}

/// Create an empty file that must not exist yet (a new segment or index).
pub fn create_new(path: &Path) -> Result<File> {
    OpenOptions::new()
        .create_new(true)
        .append(true)
        .read(true)
        .open(path)
        .map_err(|e| Error::io(path, "create", e))
}

/// fsync a directory, making created or renamed entries in it durable.
pub fn sync_dir(path: &Path) -> Result<()> {
    let dir = File::open(if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    })
    .map_err(|e| Error::io(path, "open directory", e))?;
    dir.sync_all()
        .map_err(|e| Error::io(path, "fsync directory", e))
}

/// Remove a folder tree. Used only by `klog group-demo`, for folders it
/// created itself; nothing a user has is ever removed.
pub fn remove_created_tree(path: &Path) -> Result<()> {
    std::fs::remove_dir_all(path).map_err(|e| Error::io(path, "remove", e))
}

/// Remove a file created by `klog group-demo`.
pub fn remove_created_file(path: &Path) -> Result<()> {
    std::fs::remove_file(path).map_err(|e| Error::io(path, "remove", e))
}

/// Create an empty marker file (group-demo marks the directory it owns).
pub fn create_marker(path: &Path) -> Result<()> {
    File::create(path)
        .map(drop)
        .map_err(|e| Error::io(path, "create", e))
}

/// Copy bytes `from..to` of `src` into a new sidecar file and make it
/// durable (file and directory entry). If the sidecar already holds exactly
/// those bytes (an earlier repair stopped after this step), it is kept.
/// A crash during this step leaves the source untouched.
pub fn save_range(src: &Path, from: u64, to: u64, sidecar: &Path) -> Result<()> {
    use std::io::{Read, Seek, SeekFrom};
    let mut input = File::open(src).map_err(|e| Error::io(src, "open", e))?;
    input
        .seek(SeekFrom::Start(from))
        .map_err(|e| Error::io(src, "seek", e))?;
    let mut bytes = Vec::new();
    input
        .take(to.saturating_sub(from))
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(src, "read", e))?;
    if let Ok(existing) = std::fs::read(sidecar) {
        if existing == bytes {
            return Ok(());
        }
        return Err(Error::layout(
            sidecar,
            "already exists with other bytes; move it away first",
        ));
    }
    let mut out = create_new(sidecar)?;
    out.write_all(&bytes)
        .map_err(|e| Error::io(sidecar, "write", e))?;
    out.sync_all().map_err(|e| Error::io(sidecar, "fsync", e))?;
    sync_dir(sidecar.parent().unwrap_or(Path::new(".")))
}

/// Truncate `path` to `len` bytes and fsync it. Only called once the cut
/// bytes are durable in a sidecar ([`save_range`]).
pub fn truncate(path: &Path, len: u64) -> Result<()> {
    let f = OpenOptions::new()
        .write(true)
        .open(path)
        .map_err(|e| Error::io(path, "open", e))?;
    f.set_len(len).map_err(|e| Error::io(path, "truncate", e))?;
    f.sync_all().map_err(|e| Error::io(path, "fsync", e))
}

/// Rename `from` to `to` (which must not exist) and fsync the directory:
/// how files are moved aside instead of deleted.
pub fn move_aside(from: &Path, to: &Path) -> Result<()> {
    if to.exists() {
        return Err(Error::layout(
            to,
            "already exists; refusing to overwrite it",
        ));
    }
    std::fs::rename(from, to).map_err(|e| Error::io(from, "rename", e))?;
    sync_dir(to.parent().unwrap_or(Path::new(".")))
}

/// Replace `path` with `bytes` atomically: write a temporary file in the
/// same directory, fsync it, rename it over `path`, fsync the directory. A
/// crash leaves either the old file or the new one, never a mix.
pub fn rewrite_atomic(path: &Path, bytes: &[u8]) -> Result<()> {
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".klog-tmp");
    let tmp = std::path::PathBuf::from(tmp);
    let mut f = OpenOptions::new()
        .create(true)
        .truncate(true)
        .write(true)
        .open(&tmp)
        .map_err(|e| Error::io(&tmp, "create", e))?;
    f.write_all(bytes)
        .map_err(|e| Error::io(&tmp, "write", e))?;
    f.sync_all().map_err(|e| Error::io(&tmp, "fsync", e))?;
    std::fs::rename(&tmp, path).map_err(|e| Error::io(path, "rename", e))?;
    sync_dir(path.parent().unwrap_or(Path::new(".")))
}
