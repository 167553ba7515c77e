//! The data directory's `.lock` file.
//!
//! A Kafka broker holds an OS lock on `<log dir>/.lock` while it runs
//! (`FileChannel.tryLock`, which on Linux is a POSIX `fcntl` record lock).
//! klog takes both kinds of lock a process can hold on it, `fcntl` (what the
//! JVM takes) and `flock` (what other tools take), without waiting, and
//! refuses to write when either is held elsewhere. The locks are released
//! when the [`DirLock`] is dropped (the file is closed).

use std::fs::File;
use std::os::fd::AsRawFd;
use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::log::durable;

/// Name of the lock file inside a data directory.
pub const LOCK_FILE: &str = ".lock";

/// An exclusive lock on a data directory, held until dropped.
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    path: PathBuf,
}

impl DirLock {
    /// Lock `data_dir/.lock`, failing at once with [`Error::Locked`] if another process holds it.
    pub fn acquire(data_dir: &Path) -> Result<Self> {
        let path = data_dir.join(LOCK_FILE);
        let file = durable::open_lock_file(&path)?;
        let fd = file.as_raw_fd();
        // fcntl(F_SETLK) write lock over the whole file: what a JVM holds.
        // SAFETY: `fl` is a valid, fully initialised flock struct and `fd` is open.
        let mut fl: libc::flock = unsafe { std::mem::zeroed() };
        fl.l_type = libc::F_WRLCK as libc::c_short;
        fl.l_whence = libc::SEEK_SET as libc::c_short;
        // SAFETY: see above; F_SETLK does not block.
        let rc = unsafe { libc::fcntl(fd, libc::F_SETLK, &fl) };
        if rc != 0 {
            return Err(lock_error(&path, data_dir));
        }
        // flock(LOCK_EX | LOCK_NB): what other tools (and other klogs) may hold.
        // SAFETY: `fd` is open for the lifetime of `file`.
        let rc = unsafe { libc::flock(fd, libc::LOCK_EX | libc::LOCK_NB) };
        if rc != 0 {
            return Err(lock_error(&path, data_dir));
        }
        Ok(DirLock { _file: file, path })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

fn lock_error(lock_path: &Path, data_dir: &Path) -> Error {
    let err = std::io::Error::last_os_error();
    match err.raw_os_error() {
        Some(libc::EAGAIN) | Some(libc::EACCES) => Error::Locked {
            path: data_dir.to_path_buf(),
        },
        _ => Error::io(lock_path, "lock", err),
    }
}
