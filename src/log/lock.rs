//! The data directory's `.lock` file.
//!
//! A Kafka broker holds an OS lock on `<log dir>/.lock` while it runs
//! (`FileChannel.tryLock`, which on Linux is a classic POSIX `fcntl` record
//! lock). klog takes two locks on the file, without waiting, and refuses to
//! write when either is held elsewhere:
//! - an open-file-description `fcntl` lock (`F_OFD_SETLK`), which conflicts
//!   with the broker's classic lock and with other klogs;
//! - a `flock` ([`File::try_lock`]), what other tools take.
//!
//! Invariant: both locks belong to the one open file description inside a
//! [`DirLock`], and are released only when it is dropped. Classic `fcntl`
//! locks would not hold: POSIX drops all of a process's classic locks on the
//! close of *any* descriptor of the file, so a failed second acquire in the
//! same process (which opens and closes the file) would release the first.
//! Open-file-description locks are released only by closing their own
//! description.

use std::fs::File;
use std::os::fd::{AsFd, AsRawFd};
use std::path::{Path, PathBuf};

use rustix::fs::{Mode, OFlags};

use crate::error::{Error, Result};
use crate::log::beneath;

/// The lock commands: open-file-description locks where the OS has them.
#[cfg(any(target_os = "linux", target_os = "android"))]
const SET_LOCK: libc::c_int = libc::F_OFD_SETLK;
#[cfg(any(target_os = "linux", target_os = "android"))]
const GET_LOCK: libc::c_int = libc::F_OFD_GETLK;
/// Elsewhere, classic locks: there a failed second acquire in the same
/// process still releases the first one's `fcntl` part (its `flock` holds).
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const SET_LOCK: libc::c_int = libc::F_SETLK;
#[cfg(not(any(target_os = "linux", target_os = "android")))]
const GET_LOCK: libc::c_int = libc::F_GETLK;

/// Name of the lock file inside a data directory.
pub const LOCK_FILE: &str = ".lock";

/// An exclusive lock on a data directory, held until dropped. While it is
/// held, the directory opened when it was taken is the root every write
/// below the directory's path is resolved from ([`beneath`]).
#[derive(Debug)]
pub struct DirLock {
    _file: File,
    path: PathBuf,
    _root: beneath::Registration,
}

impl DirLock {
    /// Lock `data_dir/.lock`, failing at once with [`Error::Locked`] if
    /// another process (or another `DirLock` in this one) holds it.
    pub fn acquire(data_dir: &Path) -> Result<Self> {
        let path = data_dir.join(LOCK_FILE);
        let root = std::sync::Arc::new(beneath::open_root(data_dir)?);
        let file = open_lock_file(&*root, &path)?;
        // The fcntl lock first: it is the one a broker holds, and the only
        // one whose holder the OS can name.
        let mut fl = whole_file(libc::F_WRLCK);
        if let Err(e) = fcntl_lock(&file, SET_LOCK, &mut fl) {
            return Err(match e.raw_os_error() {
                Some(libc::EAGAIN) | Some(libc::EACCES) => Error::Locked {
                    path: data_dir.to_path_buf(),
                    holder: holder_pid(&file),
                },
                _ => Error::io(&path, "fcntl lock", e),
            });
        }
        // Then flock. Failing here drops `file`, which releases the fcntl
        // lock just taken (it belongs to this description only).
        match file.try_lock() {
            Ok(()) => {}
            Err(std::fs::TryLockError::WouldBlock) => {
                return Err(Error::Locked {
                    path: data_dir.to_path_buf(),
                    holder: None,
                })
            }
            Err(std::fs::TryLockError::Error(e)) => return Err(Error::io(&path, "flock", e)),
        }
        Ok(DirLock {
            _file: file,
            path,
            _root: beneath::register(data_dir, root),
        })
    }

    /// The lock file.
    pub fn path(&self) -> &Path {
        &self.path
    }
}

/// A lock request of `kind` over the whole file (`l_len` 0 = to the end,
/// however far it grows), as a JVM's `tryLock()` takes it.
fn whole_file(kind: libc::c_int) -> libc::flock {
    libc::flock {
        l_type: kind as libc::c_short,
        l_whence: libc::SEEK_SET as libc::c_short,
        l_start: 0,
        l_len: 0,
        // Must be 0 for the F_OFD_* commands.
        l_pid: 0,
    }
}

/// Who holds a data directory's `.lock`, seen from a command that only reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Holder {
    /// A process holding a classic `fcntl` lock: a running broker, by PID.
    Process(u32),
    /// A lock whose owner the OS does not name (another klog writing).
    Unknown,
}

/// Whether another process holds `data_dir/.lock` (a running broker, or a
/// klog writing, or another tool holding a `flock`), so that what a reader
/// sees may change as it reads. Tested with `F_OFD_GETLK`, which sees
/// `fcntl` locks, then with a shared `flock` tried without waiting and
/// released at once, which sees an exclusive `flock` (the other lock
/// [`DirLock`] takes, and the one a writer refuses to run beside); creating
/// nothing. `None` when there is no `.lock` (or it is not a regular file),
/// or nobody holds it.
pub fn holder(data_dir: &Path) -> Option<Holder> {
    use std::os::unix::fs::OpenOptionsExt;
    let path = data_dir.join(LOCK_FILE);
    if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
        return None;
    }
    // Non-blocking: a `.lock` swapped for a FIFO after the check cannot hang the open.
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(&path)
        .ok()?;
    let mut fl = whole_file(libc::F_WRLCK);
    fcntl_lock(&file, GET_LOCK, &mut fl).ok()?;
    if fl.l_type == libc::F_UNLCK as libc::c_short {
        return flock_held(&file).then_some(Holder::Unknown);
    }
    Some(
        u32::try_from(fl.l_pid)
            .ok()
            .filter(|&pid| pid > 0)
            .map_or(Holder::Unknown, Holder::Process),
    )
}

/// The PID of the process holding a lock that conflicts with a write lock
/// on `file`, when the OS knows it: `F_OFD_GETLK` reports the PID of a
/// classic-lock holder (a broker) and -1 for an open-file-description lock
/// (another klog), whose owner is a description, not a process.
fn holder_pid(file: &File) -> Option<u32> {
    let mut fl = whole_file(libc::F_WRLCK);
    fcntl_lock(file, GET_LOCK, &mut fl).ok()?;
    if fl.l_type == libc::F_UNLCK as libc::c_short {
        // Released in the meantime.
        return None;
    }
    u32::try_from(fl.l_pid).ok().filter(|&pid| pid > 0)
}

/// Whether another open file description holds an exclusive `flock` on
/// `file`: a shared one is tried without waiting (it needs only a
/// read-only descriptor) and, when it is granted, released at once.
fn flock_held(file: &File) -> bool {
    let fd = file.as_raw_fd();
    // SAFETY: the descriptor is open for as long as `file` is borrowed;
    // LOCK_NB makes the call return at once.
    let rc = unsafe { libc::flock(fd, libc::LOCK_SH | libc::LOCK_NB) };
    if rc == -1 {
        return std::io::Error::last_os_error().raw_os_error() == Some(libc::EWOULDBLOCK);
    }
    // SAFETY: as above; releasing the lock just taken (closing `file`
    // would release it too).
    unsafe { libc::flock(fd, libc::LOCK_UN) };
    false
}

/// `fcntl(fd, cmd, fl)` for the non-blocking lock commands.
fn fcntl_lock(file: &File, cmd: libc::c_int, fl: &mut libc::flock) -> std::io::Result<()> {
    // SAFETY: the descriptor is open for as long as `file` is borrowed, and
    // `fl` is a valid, initialised `struct flock` that fcntl may write to
    // (F_OFD_GETLK does); the commands used never block.
    let rc = unsafe { libc::fcntl(file.as_raw_fd(), cmd, fl as *mut libc::flock) };
    if rc == -1 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(())
}

/// Open (creating if needed) the lock file `path`, named in the data
/// directory opened as `root` (so that it is that directory's own); opened for writing so a POSIX
/// write lock can be taken on it. Its contents never matter, so it is not synced.
///
/// Never through a symlink (O_NOFOLLOW): a `.lock` linked to a missing
/// path would otherwise create that file outside the data directory, and
/// a lock taken through a link is not the directory's own. Anything but a
/// regular file (a FIFO, a device, a directory) is refused too; the open
/// does not block (O_NONBLOCK) should it be a FIFO. A broker opens the
/// same name (`LogManager.lockLogDirs` through `FileLock`, with
/// `StandardOpenOption.CREATE`) and follows a link, locking (and creating)
/// its target: klog refuses instead of taking a lock that is not the
/// directory's own.
pub fn open_lock_file(root: impl AsFd, path: &Path) -> Result<File> {
    let not_regular = || {
        Error::layout(
            path,
            "is not a regular file (a symlink, a FIFO or a directory): klog locks only the data \
             directory's own .lock file; remove it (a broker or klog creates it again)",
        )
    };
    let flags =
        OFlags::CREATE | OFlags::RDWR | OFlags::NOFOLLOW | OFlags::NONBLOCK | OFlags::CLOEXEC;
    let name = path.file_name().unwrap_or(path.as_os_str());
    let fd =
        rustix::fs::openat(root, name, flags, Mode::from_raw_mode(0o666)).map_err(|e| match e {
            rustix::io::Errno::LOOP | rustix::io::Errno::ISDIR => not_regular(),
            _ => Error::io(path, "open lock file", e.into()),
        })?;
    let file = File::from(fd);
    let meta = file
        .metadata()
        .map_err(|e| Error::io(path, "stat lock file", e))?;
    if !meta.is_file() {
        return Err(not_regular());
    }
    Ok(file)
}
