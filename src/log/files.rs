//! Opening the files a reader is given: only regular files, never blocking.
//!
//! A FIFO in place of an index or a checkpoint would block a plain `open`
//! forever, and a checkpoint symlinked to `/dev/zero` would be read without
//! end. Every reader opens through [`open_regular`]: `O_NONBLOCK` (so
//! opening a FIFO returns at once), then `fstat` on the opened file (so a
//! file swapped between a check and the open is still caught), and only a
//! regular file is read. Metadata files are also read up to a bound.

use std::fs::File;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use crate::error::{Error, Result};

/// The largest checkpoint, properties or metadata file read (a checkpoint
/// of a million partitions is about 40 MiB).
pub const MAX_METADATA_FILE: u64 = 64 << 20;

/// Open `path` read-only if it is a regular file (following symlinks, as
/// Kafka does); anything else is refused with a layout error naming it.
pub fn open_regular(path: &Path) -> Result<File> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK)
        .open(path)
        .map_err(|e| Error::io(path, "open", e))?;
    let meta = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
    if meta.is_dir() {
        return Err(Error::layout(path, "is a directory, not a file"));
    }
    if !meta.is_file() {
        return Err(Error::layout(
            path,
            "is not a regular file (a FIFO, a device or a socket): not read",
        ));
    }
    if let Some(fs) = kernel_filesystem(&file) {
        return Err(Error::layout(
            path,
            format!(
                "is not a regular file: it is on {fs}, a kernel interface whose files hold no \
                 stored bytes (their size says nothing of what a read returns, and reading some \
                 reads process memory): not read"
            ),
        ));
    }
    Ok(file)
}

/// The name of the pseudo-filesystem `file` is on, when it is one whose
/// "regular" files are kernel interfaces (`/proc/self/mem`,
/// `/sys/...`): `stat` calls them regular files of size 0, yet a read
/// returns what the kernel makes up, or fails. No Kafka file lives there.
/// `fstatfs` on the opened file, so it is the file read that is checked.
#[cfg(any(target_os = "linux", target_os = "android"))]
fn kernel_filesystem(file: &File) -> Option<&'static str> {
    use std::os::fd::AsRawFd;
    // SAFETY: an all-zero statfs is a valid value for fstatfs to fill.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    // SAFETY: the descriptor is open for the call's duration and `st` a
    // valid out-pointer.
    if unsafe { libc::fstatfs(file.as_raw_fd(), &mut st) } != 0 {
        return None;
    }
    // The magic numbers of linux/magic.h.
    #[allow(clippy::unnecessary_cast)]
    match st.f_type as i64 {
        0x9fa0 => Some("proc"),
        0x6265_6572 => Some("sysfs"),
        0x6462_6720 => Some("debugfs"),
        0x7472_6163 => Some("tracefs"),
        0x7363_6673 => Some("securityfs"),
        0x0027_e0eb => Some("cgroup"),
        0x6367_7270 => Some("cgroup2"),
        0xcafe_4a11 => Some("bpf"),
        0x6265_6570 => Some("configfs"),
        0xde5e_81e4 => Some("efivarfs"),
        0x6165_676c => Some("pstore"),
        _ => None,
    }
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
fn kernel_filesystem(_file: &File) -> Option<&'static str> {
    None
}

/// [`open_regular`] with the file's length; `None` when it does not exist.
pub fn open_existing(path: &Path) -> Result<Option<(File, u64)>> {
    let file = match open_regular(path) {
        Ok(f) => f,
        Err(Error::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            return Ok(None)
        }
        Err(e) => return Err(e),
    };
    let len = length(&file, path)?;
    Ok(Some((file, len)))
}

/// The length of `file`, opened at `path`.
fn length(file: &File, path: &Path) -> Result<u64> {
    Ok(file
        .metadata()
        .map_err(|e| Error::io(path, "stat", e))?
        .len())
}

/// Read the regular file at `path`, refusing one over `max` bytes; `None`
/// when it does not exist.
pub fn read_regular(path: &Path, max: u64) -> Result<Option<Vec<u8>>> {
    let Some((file, len)) = open_existing(path)? else {
        return Ok(None);
    };
    if len > max {
        return Err(Error::layout(
            path,
            format!("is {len} bytes, more than such a file may be ({max}): not read"),
        ));
    }
    read_up_to(file, path, max, len).map(Some)
}

/// The first `max` bytes of the regular file at `path` (all of it when it
/// is shorter) and its length.
pub fn read_head(path: &Path, max: u64) -> Result<(Vec<u8>, u64)> {
    let file = open_regular(path)?;
    let len = length(&file, path)?;
    Ok((read_up_to(file, path, max, len)?, len))
}

/// The first stretch of data of `file` at or after `at`, below `len`:
/// `(start, end)`, or `None` when only holes are left. Where the
/// filesystem cannot tell (`lseek` fails other than with ENXIO, or the
/// platform has no SEEK_DATA), the whole rest is data.
#[cfg(any(target_os = "linux", target_os = "android"))]
pub fn data_extent(file: &File, at: u64, len: u64) -> Option<(u64, u64)> {
    use std::os::fd::AsRawFd;
    let fd = file.as_raw_fd();
    let Ok(off) = libc::off_t::try_from(at) else {
        return Some((at, len));
    };
    // SAFETY: lseek on an open descriptor; only the file offset changes,
    // and every read of this file is positioned (pread).
    let data = unsafe { libc::lseek(fd, off, libc::SEEK_DATA) };
    if data < 0 {
        return match std::io::Error::last_os_error().raw_os_error() {
            Some(libc::ENXIO) => None,
            _ => Some((at, len)),
        };
    }
    let data = (data as u64).max(at);
    if data >= len {
        return None;
    }
    // SAFETY: as above.
    let hole = unsafe { libc::lseek(fd, data as libc::off_t, libc::SEEK_HOLE) };
    let hole = if hole < 0 {
        len
    } else {
        (hole as u64).min(len)
    };
    Some((data, hole.max(data + 1).min(len)))
}

#[cfg(not(any(target_os = "linux", target_os = "android")))]
pub fn data_extent(_file: &File, at: u64, len: u64) -> Option<(u64, u64)> {
    (at < len).then_some((at, len))
}

/// Bytes free to unprivileged writers on the filesystem of `dir`, when the
/// OS says (`statvfs`): what a writer checks before it starts a change
/// that must land in several places or none.
pub fn free_bytes(dir: &Path) -> Option<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(dir.as_os_str().as_bytes()).ok()?;
    // SAFETY: an all-zero statvfs is a valid value for statvfs to fill.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: `c` is a valid NUL-terminated path and `st` a valid out-pointer.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return None;
    }
    Some(st.f_bavail.saturating_mul(st.f_frsize))
}

/// Up to `max` bytes of `file` (`path`), `len` long: the whole read of an
/// index, a checkpoint or another small file beside a log.
pub fn read_up_to(file: File, path: &Path, max: u64, len: u64) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::with_capacity(len.min(max) as usize);
    file.take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, "read", e))?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_fifo_is_refused_at_once() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("00000000000000000000.index");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        let err = read_regular(&fifo, 10).unwrap_err().to_string();
        assert!(err.contains("not a regular file"), "{err}");
        assert!(read_regular(&dir.path().join("absent"), 10)
            .unwrap()
            .is_none());
        std::fs::write(dir.path().join("big"), [0; 11]).unwrap();
        assert!(read_regular(&dir.path().join("big"), 10).is_err());
    }

    #[test]
    fn read_head_reads_the_first_bytes_and_tells_the_length() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.log");
        std::fs::write(&path, [1, 2, 3, 4, 5]).unwrap();
        assert_eq!(read_head(&path, 3).unwrap(), (vec![1, 2, 3], 5));
        assert_eq!(read_head(&path, 9).unwrap(), (vec![1, 2, 3, 4, 5], 5));
        let err = read_head(&dir.path().join("absent"), 3).unwrap_err();
        assert!(err.to_string().contains("open: No such file"), "{err}");
        let err = read_head(dir.path(), 3).unwrap_err().to_string();
        assert!(err.contains("is a directory"), "{err}");
    }
}

/// What makes two paths name the same file or directory: its device and
/// inode when it exists (however it is reached: a symlink, `d/.`, a bind
/// mount), else its absolute path with the part that exists resolved.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Identity {
    /// An existing file or directory (`st_dev`, `st_ino`).
    Inode(u64, u64),
    /// A path not created yet.
    Missing(std::path::PathBuf),
}

/// The [`Identity`] of `path`.
pub fn identity(path: &Path) -> Identity {
    use std::os::unix::fs::MetadataExt;
    if let Ok(m) = std::fs::metadata(path) {
        return Identity::Inode(m.dev(), m.ino());
    }
    let absolute = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
    // The longest prefix that exists, resolved, then the rest as given.
    let mut rest = Vec::new();
    let mut head = absolute.as_path();
    while let Some(parent) = head.parent() {
        if let Ok(real) = head.canonicalize() {
            let mut out = real;
            out.extend(rest.iter().rev());
            return Identity::Missing(out);
        }
        if let Some(name) = head.file_name() {
            rest.push(name.to_os_string());
        }
        head = parent;
    }
    Identity::Missing(absolute)
}
