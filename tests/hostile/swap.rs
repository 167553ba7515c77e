//! Partition folders swapped for symlinks while a writer runs: a writer
//! that checks "inside the locked data directory" and then opens by path
//! can be sent outside between the two. Writes go through descriptors
//! opened from the locked data directory's own, no symlink followed, so a
//! swap makes a writer refuse or write inside, never outside.

use std::ffi::CString;
use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use crate::support::{stderr, TestEnv};

/// Every regular file under `dir` with its bytes, by name.
fn contents(dir: &Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<_> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap_or_default(),
            )
        })
        .collect();
    out.sort();
    out
}

/// The bytes of the `.log` files under `dir`.
fn log_bytes(dir: &Path) -> u64 {
    std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .map(|e| e.metadata().map_or(0, |m| m.len()))
        .sum()
}

/// Exchange the two names atomically (`renameat2(RENAME_EXCHANGE)`): the
/// folder is never missing, so a writer never creates it anew.
fn exchange(a: &Path, b: &Path) {
    let a = CString::new(a.as_os_str().as_bytes()).unwrap();
    let b = CString::new(b.as_os_str().as_bytes()).unwrap();
    // SAFETY: two valid NUL-terminated paths.
    let rc = unsafe {
        libc::renameat2(
            libc::AT_FDCWD,
            a.as_ptr(),
            libc::AT_FDCWD,
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    assert_eq!(rc, 0, "{}", std::io::Error::last_os_error());
}

/// A thread swapping `folder` for a symlink to `outside` and back, as fast
/// as it can, until the returned flag is set; joined by [`stop`].
fn swapper(folder: PathBuf, outside: &Path) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let link = folder.with_extension("swap");
    std::os::unix::fs::symlink(outside, &link).unwrap();
    let done = Arc::new(AtomicBool::new(false));
    let flag = done.clone();
    let handle = std::thread::spawn(move || {
        while !flag.load(Ordering::Relaxed) {
            exchange(&folder, &link);
            std::thread::yield_now();
            exchange(&folder, &link);
            std::thread::yield_now();
        }
        std::fs::remove_file(&link).unwrap();
    });
    (done, handle)
}

fn stop((done, handle): (Arc<AtomicBool>, std::thread::JoinHandle<()>)) {
    done.store(true, Ordering::Relaxed);
    handle.join().unwrap();
}

/// Run `args` `runs` times (with `stdin`) while `part` (a folder of
/// `data`) is swapped for a symlink to a copy of it outside the data
/// directory. Asserts the copy outside is never written, every run ends
/// with 0, 1 or 2 (a refusal saying why), and what the runs that
/// succeeded wrote is inside: the folder's logs grew by exactly their
/// batches. Returns how many runs succeeded and how many refused.
fn race(env: &TestEnv, part: &str, args: &[&str], stdin: Option<&str>, runs: usize) -> (u64, u64) {
    let folder = env.path(part);
    // One run before the race: what one run appends, and a partition in
    // the state every later run finds it in (a produce may roll once).
    let o = env.run(args, stdin);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let before = log_bytes(&folder);
    let o = env.run(args, stdin);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let batch = log_bytes(&folder) - before;
    assert!(batch > 0);
    let start = log_bytes(&folder);

    let elsewhere = tempfile::tempdir().unwrap();
    let outside = elsewhere.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    for (name, bytes) in contents(&folder) {
        std::fs::write(outside.join(name), bytes).unwrap();
    }
    let outside_before = contents(&outside);

    let swapping = swapper(folder.clone(), &outside);
    let (mut wrote, mut refused) = (0, 0);
    let mut messages = Vec::new();
    for _ in 0..runs {
        let o = env.run(args, stdin);
        let err = stderr(&o);
        assert!(!err.contains("panicked"), "{err}");
        match o.status.code() {
            Some(0) => wrote += 1,
            Some(1 | 2) => {
                assert!(err.starts_with("klog: "), "no message: {err:?}");
                refused += 1;
                messages.push(err);
            }
            other => panic!("exit {other:?}: {err}"),
        }
    }
    stop(swapping);
    assert!(
        contents(&outside) == outside_before,
        "a write landed outside the data directory ({wrote} runs said they wrote, {refused} refused)"
    );
    assert_eq!(
        log_bytes(&folder),
        start + wrote * batch,
        "the runs that succeeded did not all write inside"
    );
    for m in &messages {
        assert!(
            m.contains("symlink")
                || m.contains("outside the locked data directory")
                || m.contains("swapped, while klog opened it"),
            "a refusal that does not say why: {m}"
        );
    }
    (wrote, refused)
}

#[test]
fn r49_4_a_partition_folder_swapped_for_a_symlink_never_sends_a_commit_outside() {
    let env = TestEnv::new();
    let commit = [
        "commit",
        "fixtures/groups",
        "-g",
        "kitchen",
        "-t",
        "orders",
        "-p",
        "0",
        "--offset",
        "3",
        "--now-ms",
        "1",
    ];
    let (wrote, refused) = race(&env, "fixtures/groups/__offsets-0", &commit, None, 60);
    eprintln!("commit: {wrote} wrote, {refused} refused");
}

#[test]
fn r49_4_a_partition_folder_swapped_for_a_symlink_never_sends_a_produce_outside() {
    let env = TestEnv::new();
    let produce = ["produce", "fixtures/groups", "--topic", "orders"];
    let (wrote, refused) = race(&env, "fixtures/groups/orders-0", &produce, Some("x\n"), 60);
    eprintln!("produce: {wrote} wrote, {refused} refused");
}

#[test]
fn r49_4_every_write_below_a_locked_directory_refuses_a_swapped_folder() {
    // Each operation of the storage every writer goes through (the append
    // path, checkpoints, verify-crc --repair), on a partition folder that
    // is a symlink out of the data directory once the lock is held: each
    // refuses, naming the folder, and nothing changes outside.
    use kaen_log::log::durable::{self, Disk};
    use kaen_log::log::lock::DirLock;
    use kaen_log::log::storage::{OpenMode, Storage, SyncPoint};

    let tmp = tempfile::tempdir().unwrap();
    let (data, outside) = (tmp.path().join("data"), tmp.path().join("outside"));
    std::fs::create_dir_all(data.join("t-0")).unwrap();
    std::fs::create_dir(&outside).unwrap();
    std::fs::write(outside.join("a.log"), b"theirs").unwrap();
    let lock = DirLock::acquire(&data).unwrap();
    std::fs::rename(data.join("t-0"), data.join("t-0.real")).unwrap();
    std::os::unix::fs::symlink(&outside, data.join("t-0")).unwrap();
    let part = data.join("t-0");
    let refused = |what: &str, r: kaen_log::error::Result<()>| {
        let e = r.expect_err(what).to_string();
        assert!(
            e.contains("t-0: is a symlink or not a folder"),
            "{what}: {e}"
        );
    };
    for mode in [
        OpenMode::CreateNew,
        OpenMode::CreateOrTruncate,
        OpenMode::CreateOrAppend,
        OpenMode::Existing,
    ] {
        refused("open a.log", Disk.open(&part.join("a.log"), mode).map(drop));
        refused("open b.log", Disk.open(&part.join("b.log"), mode).map(drop));
    }
    refused("create_dir", Disk.create_dir(&part.join("sub")));
    refused(
        "rename",
        Disk.rename(&part.join("a.log"), &part.join("c.log")),
    );
    refused("remove_file", Disk.remove_file(&part.join("a.log")));
    refused("sync_dir", Disk.sync_dir(&part, SyncPoint::NewSegment));
    refused(
        "write_checkpoint",
        durable::write_checkpoint(&Disk, &part.join("leader-epoch-checkpoint"), "0\n0\n"),
    );
    refused(
        "replace",
        durable::replace(&Disk, &part.join("a.log"), b"mine"),
    );
    // Spelled with `.` components, the path is the same directory's.
    let dotted = tmp.path().join("./data/./t-0/b.log");
    refused("open ./", Disk.open(&dotted, OpenMode::CreateNew).map(drop));
    let names: Vec<_> = std::fs::read_dir(&outside)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["a.log"]);
    assert_eq!(std::fs::read(outside.join("a.log")).unwrap(), b"theirs");
    // The real folder, by its own name, is written.
    let mut f = Disk
        .open(&data.join("t-0.real/b.log"), OpenMode::CreateNew)
        .unwrap();
    Disk.append(&mut f.file, &data.join("t-0.real/b.log"), b"ok")
        .unwrap();
    drop(lock);
}
