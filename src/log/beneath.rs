//! Writes below a locked data directory reach only its own folders.
//!
//! A writer checks that a partition folder is inside the data directory it
//! locked, then opens files in it. Between the two, the folder could be
//! swapped for a symlink to anywhere, and an open by path would follow it
//! out. So every path a write names below a locked data directory is
//! resolved here, from the descriptor of the data directory opened when
//! its lock was taken ([`DirLock`](crate::log::lock::DirLock) registers
//! it, [`register`]), one component at a time, none followed if it is a
//! symlink (`openat` with `O_NOFOLLOW | O_DIRECTORY`). The write then
//! names the last component relative to the folder found (`openat`,
//! `mkdirat`, `renameat`, `unlinkat`): a swap makes the write fail (a
//! symlink, said so) or land in the real folder, never outside.
//!
//! Invariant: a path below a data directory this process holds the lock
//! of resolves only through real folders below that directory's
//! descriptor, and never through `..`. Paths elsewhere (the data
//! directory itself and its parents, created before the lock; a demo's
//! own files) are used as they are.

use std::ffi::OsStr;
use std::os::fd::{AsFd, BorrowedFd, OwnedFd};
use std::path::{Component, Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rustix::fs::{Mode, OFlags};

use crate::error::{Error, Result};

/// A data directory whose lock this process holds: the path it was locked
/// by (its `.` components dropped) and the descriptor opened then.
struct Root {
    id: u64,
    path: PathBuf,
    fd: Arc<OwnedFd>,
}

/// The locked data directories, registered while their lock is held.
static ROOTS: Mutex<Vec<Root>> = Mutex::new(Vec::new());
static NEXT_ID: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// A data directory registered as locked; unregistered when dropped.
#[derive(Debug)]
pub struct Registration {
    id: u64,
}

impl Drop for Registration {
    fn drop(&mut self) {
        roots().retain(|r| r.id != self.id);
    }
}

fn roots() -> std::sync::MutexGuard<'static, Vec<Root>> {
    // The list stays whole whatever a panicking holder did: each change is one call.
    ROOTS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// Open the data directory `path` (following a symlink given as the
/// directory itself: that is the user's choice) as the root its writes
/// are resolved from.
pub fn open_root(path: &Path) -> Result<OwnedFd> {
    let path = non_empty(path);
    rustix::fs::open(
        path,
        OFlags::RDONLY | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )
    .map_err(|e| Error::io(path, "open directory", e.into()))
}

/// Register `fd`, opened by [`open_root`] from `path`, as a locked data
/// directory until the returned registration is dropped.
pub fn register(path: &Path, fd: Arc<OwnedFd>) -> Registration {
    let id = NEXT_ID.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    roots().push(Root {
        id,
        path: normalized(path),
        fd,
    });
    Registration { id }
}

/// `path` without its `.` components (`./d/./x` is `d/x`).
fn normalized(path: &Path) -> PathBuf {
    path.components()
        .filter(|c| *c != Component::CurDir)
        .collect()
}

/// `.` for an empty path.
fn non_empty(path: &Path) -> &Path {
    if path.as_os_str().is_empty() {
        Path::new(".")
    } else {
        path
    }
}

/// A folder to name a file relative to: a locked data directory's own
/// descriptor, one opened below it, or the working directory (a path
/// outside every locked data directory, used as it is).
#[derive(Debug)]
pub enum Dir {
    Root(Arc<OwnedFd>),
    Below(OwnedFd),
    Cwd,
}

impl AsFd for Dir {
    fn as_fd(&self) -> BorrowedFd<'_> {
        match self {
            Dir::Root(fd) => fd.as_fd(),
            Dir::Below(fd) => fd.as_fd(),
            Dir::Cwd => rustix::fs::CWD,
        }
    }
}

/// Where a write goes: a folder and the name in it.
#[derive(Debug)]
pub struct At {
    pub dir: Dir,
    pub name: PathBuf,
}

/// The locked data directory `path` is below (the deepest, should one be
/// inside another), and `path`'s components below it.
fn root_of(path: &Path) -> Option<(Arc<OwnedFd>, PathBuf, PathBuf)> {
    let path = normalized(path);
    let roots = roots();
    let root = roots
        .iter()
        .filter(|r| path.starts_with(&r.path))
        .max_by_key(|r| r.path.components().count())?;
    let rel = path.strip_prefix(&root.path).ok()?.to_path_buf();
    Some((root.fd.clone(), root.path.clone(), rel))
}

/// Resolve `path` for a write: below a locked data directory, its folder
/// opened from the directory's descriptor through real folders only; else
/// the path as it is. The last component is not looked at (the write
/// names it with `O_NOFOLLOW`, or creates, renames or removes the entry).
pub fn resolve(path: &Path) -> Result<At> {
    let Some((root, root_path, rel)) = root_of(path) else {
        return Ok(At {
            dir: Dir::Cwd,
            name: non_empty(path).to_path_buf(),
        });
    };
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        // The data directory itself: named from its parent, as given.
        return Ok(At {
            dir: Dir::Cwd,
            name: non_empty(path).to_path_buf(),
        });
    };
    let dir = walk(root, &root_path, parent)?;
    Ok(At {
        dir,
        name: PathBuf::from(name),
    })
}

/// Open the folder `path` itself (to sync it): below a locked data
/// directory through real folders only, the directory itself by its
/// descriptor; elsewhere by path.
pub fn open_dir(path: &Path) -> Result<Dir> {
    match root_of(path) {
        Some((root, root_path, rel)) => walk(root, &root_path, &rel),
        None => open_root(path).map(Dir::Below),
    }
}

/// Open the folders `rel` below the root, one component at a time,
/// following no symlink.
fn walk(root: Arc<OwnedFd>, root_path: &Path, rel: &Path) -> Result<Dir> {
    let mut dir = Dir::Root(root);
    let mut at = root_path.to_path_buf();
    for component in rel.components() {
        let Component::Normal(name) = component else {
            return Err(Error::layout(
                root_path.join(rel),
                "leaves the locked data directory (a `..` in the path): klog writes only below it",
            ));
        };
        at.push(name);
        dir = Dir::Below(open_folder(&dir, name, &at)?);
    }
    Ok(dir)
}

/// `name` in `dir`, opened as a folder without following a symlink.
fn open_folder(dir: &Dir, name: &OsStr, path: &Path) -> Result<OwnedFd> {
    let flags = OFlags::RDONLY | OFlags::DIRECTORY | OFlags::NOFOLLOW | OFlags::CLOEXEC;
    rustix::fs::openat(dir, name, flags, Mode::empty()).map_err(|e| match e {
        // ELOOP for a symlink, ENOTDIR for anything else but a folder (or,
        // on some kernels, a symlink).
        rustix::io::Errno::LOOP | rustix::io::Errno::NOTDIR => Error::layout(
            path,
            "is a symlink or not a folder: klog writes below a locked data directory only through \
             its real folders, never through a symlink out of it (was the folder swapped while klog \
             ran?); nothing was written there",
        ),
        _ => Error::io(path, "open directory", e.into()),
    })
}
