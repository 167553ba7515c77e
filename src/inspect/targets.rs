//! The partitions `verify-crc --repair` and `--recovery-preview` work on:
//! each partition folder under the paths given, with the data directory
//! whose lock and checkpoints it is read under.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::log::{checkpoint, classify, DataDir, Partition, PathKind};

/// Which partition folders of a data directory [`partitions`] lists.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Folders {
    /// The live ones (what `--repair` writes to).
    Live,
    /// Every one a broker's start loads ([`DataDir::loaded`]: `-delete`,
    /// `-future` and `-stray` folders too), for `--recovery-preview`.
    Loaded,
}

/// The partitions under the given paths, with the data directory each belongs to.
pub fn partitions(paths: &[PathBuf], which: Folders) -> Result<Vec<(PathBuf, Partition)>> {
    let mut out = Vec::new();
    for path in paths {
        match classify(path)? {
            PathKind::DataDir => {
                let dir = DataDir::open(path)?;
                let folders: Vec<&Partition> = match which {
                    Folders::Live => dir.live().collect(),
                    Folders::Loaded => dir.loaded().collect(),
                };
                for p in folders {
                    out.push((path.clone(), p.clone()));
                }
            }
            PathKind::Partition => {
                let (data_dir, path) = partition_under_lock(path)?;
                out.push((data_dir, Partition::open(&path)?));
            }
            PathKind::File => {
                return Err(Error::layout(
                    path,
                    "give a partition folder or a data directory to repair or preview (a lone file has no segments around it)",
                ))
            }
        }
    }
    Ok(out)
}

/// The data directory whose lock a partition folder given alone is
/// repaired under, and the path to repair it by, which begins with that
/// directory's: writes below a locked directory are resolved from its own
/// descriptor ([`crate::log::beneath`]). The lock to take is the real
/// parent's: a partition folder symlinked from another data directory is
/// under that one's, and is then named by its real path.
fn partition_under_lock(path: &Path) -> Result<(PathBuf, PathBuf)> {
    let real = std::fs::canonicalize(path)
        .map_err(|e| Error::Invalid(format!("resolve {}: {e}", path.display())))?;
    let real_parent = real
        .parent()
        .map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
    let given_parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => Path::new("."),
    };
    if std::fs::canonicalize(given_parent).is_ok_and(|p| p == real_parent) {
        Ok((given_parent.to_path_buf(), path.to_path_buf()))
    } else {
        Ok((real_parent, real))
    }
}

/// The recovery point of `p` in `data_dir`'s checkpoint (0 without one).
pub fn recovery_point(data_dir: &Path, p: &Partition) -> Result<i64> {
    let points =
        checkpoint::read_offsets(&data_dir.join(checkpoint::RECOVERY_POINT))?.unwrap_or_default();
    Ok(points
        .get(&(p.topic.clone(), p.partition))
        .copied()
        .unwrap_or(0))
}
