//! `CrashStorage`: a [`Storage`] that loses power on request.
//!
//! It writes through to a real directory (the live image: what readers, and
//! a process killed with SIGKILL, see) and keeps beside it a model of the
//! durable image, what survives a power loss:
//! - a file's bytes and length as of its last `sync_data`;
//! - a directory's entries as of its last `sync_dir` (a created or renamed
//!   file or folder exists after a crash only once its directory is synced;
//!   a folder whose own entry is not durable takes its whole tree with it).
//!
//! This is the pessimistic outcome of a crash: nothing unsynced reached the
//! disk. Real disks may keep more: [`CrashStorage::torn_image`] adds half of
//! each file's unsynced appends (a torn tail); renames that reach the disk
//! ahead of their sync are not modelled.
//!
//! Sync calls are numbered in the order they are made. `crash_at(n)` makes
//! call `n` fail before it takes effect, and every later call fail too: the
//! machine is off. `ignoring(point)` turns the syncs of one [`SyncPoint`]
//! into no-ops, as if that line of the write path had been deleted.
//!
//! `failing_append(ext, n)` makes the `n`th append to a file named
//! `*.ext` write half its bytes and fail, as a full disk or a file size
//! limit does: the writer must undo it.
//!
//! Files that exist when the storage is made are taken as durable; the
//! lock file is left to the real [`DirLock`](kaen_log::log::lock::DirLock)
//! and is not part of either image.

use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};

use kaen_log::log::durable::Disk;
use kaen_log::log::storage::{OpenMode, Opened, Storage, SyncPoint};
use kaen_log::{Error, Result};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Node {
    Dir,
    File(usize),
}

#[derive(Debug, Default)]
struct Inode {
    live: Vec<u8>,
    durable: Vec<u8>,
}

#[derive(Debug)]
struct State {
    root: PathBuf,
    inodes: Vec<Inode>,
    live: BTreeMap<PathBuf, Node>,
    durable: BTreeMap<PathBuf, Node>,
    syncs: usize,
    crash_at: Option<usize>,
    ignore: Option<SyncPoint>,
    crashed: bool,
    /// Every sync call made, in order (the crash call included).
    calls: Vec<SyncPoint>,
    /// Appends that fail: (file extension, nth append to such a file).
    failing: Vec<(String, usize)>,
    /// Appends made so far, by file extension.
    appends: BTreeMap<String, usize>,
    /// Appends that failed as asked.
    failed: usize,
}

/// See the module documentation.
#[derive(Debug, Clone)]
pub struct CrashStorage(Arc<Mutex<State>>);

/// An open file: the real one, and its inode in the model.
#[derive(Debug)]
pub struct CrashFile {
    real: File,
    ino: usize,
}

fn power_lost(path: &Path, op: &'static str) -> Error {
    Error::io(
        path,
        op,
        std::io::Error::other("power lost (simulated crash)"),
    )
}

impl CrashStorage {
    /// A storage over `root`, whose current files and folders are all durable.
    pub fn new(root: &Path) -> Self {
        let mut state = State {
            root: root.to_path_buf(),
            inodes: Vec::new(),
            live: BTreeMap::new(),
            durable: BTreeMap::new(),
            syncs: 0,
            crash_at: None,
            ignore: None,
            crashed: false,
            calls: Vec::new(),
            failing: Vec::new(),
            appends: BTreeMap::new(),
            failed: 0,
        };
        for entry in walkdir::WalkDir::new(root).min_depth(1) {
            let entry = entry.unwrap();
            let node = if entry.file_type().is_dir() {
                Node::Dir
            } else {
                let bytes = std::fs::read(entry.path()).unwrap();
                state.inodes.push(Inode {
                    live: bytes.clone(),
                    durable: bytes,
                });
                Node::File(state.inodes.len() - 1)
            };
            state.live.insert(entry.path().to_path_buf(), node);
            state.durable.insert(entry.path().to_path_buf(), node);
        }
        CrashStorage(Arc::new(Mutex::new(state)))
    }

    /// Lose power at sync call `n` (0-based): it and everything after it fail.
    pub fn crash_at(self, n: usize) -> Self {
        self.state().crash_at = Some(n);
        self
    }

    /// Make every sync at `point` a no-op.
    pub fn ignoring(self, point: Option<SyncPoint>) -> Self {
        self.state().ignore = point;
        self
    }

    /// Make the `n`th append (0-based) to a file named `*.ext` write half
    /// its bytes and fail with "no space left".
    pub fn failing_append(self, ext: &str, n: usize) -> Self {
        self.state().failing.push((ext.to_string(), n));
        self
    }

    /// How many appends failed as asked.
    pub fn failed_appends(&self) -> usize {
        self.state().failed
    }

    /// Whether the power was lost.
    pub fn crashed(&self) -> bool {
        self.state().crashed
    }

    /// The sync calls made so far, in order.
    pub fn calls(&self) -> Vec<SyncPoint> {
        self.state().calls.clone()
    }

    /// Write the durable image into `dest` (a new folder).
    pub fn durable_image(&self, dest: &Path) {
        let s = self.state();
        s.write_image(&s.durable, dest, |i| &s.inodes[i].durable);
    }

    /// Write a torn image into `dest` (a new folder): the durable one, where
    /// each file that was appended to since its last sync also keeps the
    /// first half of those bytes (a crash in the middle of a write-back).
    pub fn torn_image(&self, dest: &Path) {
        let s = self.state();
        let torn: Vec<Vec<u8>> = s
            .inodes
            .iter()
            .map(|i| {
                if i.live.len() > i.durable.len() && i.live.starts_with(&i.durable) {
                    let half = (i.live.len() - i.durable.len()).div_ceil(2);
                    i.live[..i.durable.len() + half].to_vec()
                } else {
                    i.durable.clone()
                }
            })
            .collect();
        s.write_image(&s.durable, dest, |i| &torn[i]);
    }

    /// Write the live image into `dest` (a new folder).
    pub fn live_image(&self, dest: &Path) {
        let s = self.state();
        s.write_image(&s.live, dest, |i| &s.inodes[i].live);
    }

    fn state(&self) -> MutexGuard<'_, State> {
        self.0.lock().unwrap_or_else(|e| e.into_inner())
    }

    fn alive(&self, path: &Path, op: &'static str) -> Result<MutexGuard<'_, State>> {
        let s = self.state();
        if s.crashed {
            return Err(power_lost(path, op));
        }
        Ok(s)
    }

    /// Count a sync call; `Ok(true)` when it is to take effect.
    fn sync_call(&self, path: &Path, at: SyncPoint) -> Result<(MutexGuard<'_, State>, bool)> {
        let mut s = self.alive(path, "sync")?;
        let n = s.syncs;
        s.syncs += 1;
        s.calls.push(at);
        if s.crash_at == Some(n) {
            s.crashed = true;
            return Err(power_lost(path, "sync"));
        }
        let effective = s.ignore != Some(at);
        Ok((s, effective))
    }
}

impl State {
    fn write_image<'a>(
        &self,
        entries: &BTreeMap<PathBuf, Node>,
        dest: &Path,
        content: impl Fn(usize) -> &'a Vec<u8>,
    ) {
        std::fs::create_dir_all(dest).unwrap();
        // Sorted: a folder comes before what it holds.
        for (path, node) in entries {
            let rel = path.strip_prefix(&self.root).unwrap();
            let reachable = rel
                .ancestors()
                .skip(1)
                .filter(|a| !a.as_os_str().is_empty())
                .all(|a| entries.get(&self.root.join(a)) == Some(&Node::Dir));
            if !reachable {
                continue;
            }
            match node {
                Node::Dir => std::fs::create_dir(dest.join(rel)).unwrap(),
                Node::File(ino) => std::fs::write(dest.join(rel), content(*ino)).unwrap(),
            }
        }
    }
}

impl Storage for CrashStorage {
    type File = CrashFile;

    fn create_dir(&self, path: &Path) -> Result<()> {
        let mut s = self.alive(path, "create directory")?;
        Disk.create_dir(path)?;
        s.live.insert(path.to_path_buf(), Node::Dir);
        Ok(())
    }

    fn open(&self, path: &Path, mode: OpenMode) -> Result<Opened<CrashFile>> {
        let mut s = self.alive(path, "open")?;
        let opened = Disk.open(path, mode)?;
        let ino = if opened.created {
            s.inodes.push(Inode::default());
            let ino = s.inodes.len() - 1;
            s.live.insert(path.to_path_buf(), Node::File(ino));
            ino
        } else {
            match s.live.get(path) {
                Some(Node::File(ino)) => *ino,
                _ => panic!("{}: a file the model does not know", path.display()),
            }
        };
        if mode == OpenMode::CreateOrTruncate {
            s.inodes[ino].live.clear();
        }
        Ok(Opened {
            file: CrashFile {
                real: opened.file,
                ino,
            },
            created: opened.created,
            len: opened.len,
        })
    }

    fn append(&self, file: &mut CrashFile, path: &Path, bytes: &[u8]) -> Result<()> {
        let mut s = self.alive(path, "append")?;
        let ext = path
            .extension()
            .map_or(String::new(), |e| e.to_string_lossy().into_owned());
        let n = *s
            .appends
            .entry(ext.clone())
            .and_modify(|n| *n += 1)
            .or_insert(0);
        if s.failing.contains(&(ext, n)) {
            let half = &bytes[..bytes.len() / 2];
            Disk.append(&mut file.real, path, half)?;
            s.inodes[file.ino].live.extend_from_slice(half);
            s.failed += 1;
            return Err(Error::io(
                path,
                "append",
                std::io::Error::from_raw_os_error(libc::ENOSPC),
            ));
        }
        Disk.append(&mut file.real, path, bytes)?;
        s.inodes[file.ino].live.extend_from_slice(bytes);
        Ok(())
    }

    fn set_len(&self, file: &mut CrashFile, path: &Path, len: u64) -> Result<()> {
        let mut s = self.alive(path, "truncate")?;
        Disk.set_len(&mut file.real, path, len)?;
        s.inodes[file.ino].live.resize(len as usize, 0);
        Ok(())
    }

    fn sync_data(&self, file: &mut CrashFile, path: &Path, at: SyncPoint) -> Result<()> {
        let (mut s, effective) = self.sync_call(path, at)?;
        if effective {
            let inode = &mut s.inodes[file.ino];
            inode.durable = inode.live.clone();
        }
        Ok(())
    }

    fn rename(&self, from: &Path, to: &Path) -> Result<()> {
        let mut s = self.alive(from, "rename")?;
        Disk.rename(from, to)?;
        let node = s
            .live
            .remove(from)
            .unwrap_or_else(|| panic!("{}: a file the model does not know", from.display()));
        assert!(matches!(node, Node::File(_)), "only files are renamed");
        s.live.insert(to.to_path_buf(), node);
        Ok(())
    }

    fn remove_file(&self, path: &Path) -> Result<()> {
        let mut s = self.alive(path, "remove")?;
        Disk.remove_file(path)?;
        s.live.remove(path);
        Ok(())
    }

    fn sync_dir(&self, dir: &Path, at: SyncPoint) -> Result<()> {
        let (mut s, effective) = self.sync_call(dir, at)?;
        if effective {
            let dir = if dir == Path::new(".") {
                std::env::current_dir().unwrap()
            } else {
                dir.to_path_buf()
            };
            let in_dir = |p: &PathBuf| p.parent() == Some(dir.as_path());
            s.durable.retain(|p, _| !in_dir(p));
            let now: Vec<_> = s
                .live
                .iter()
                .filter(|(p, _)| in_dir(p))
                .map(|(p, n)| (p.clone(), *n))
                .collect();
            s.durable.extend(now);
        }
        Ok(())
    }

    fn lock(&self, data_dir: &Path) -> Result<kaen_log::log::lock::DirLock> {
        drop(self.alive(data_dir, "lock")?);
        Disk.lock(data_dir)
    }
}

/// Every file under `root` with its bytes, by path relative to `root`
/// (the lock file left out: it belongs to neither image).
pub fn tree(root: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    if !root.exists() {
        return out;
    }
    for entry in walkdir::WalkDir::new(root).min_depth(1) {
        let entry = entry.unwrap();
        if entry.file_type().is_file() && entry.file_name() != ".lock" {
            out.insert(
                entry.path().strip_prefix(root).unwrap().to_path_buf(),
                std::fs::read(entry.path()).unwrap(),
            );
        }
    }
    out
}
