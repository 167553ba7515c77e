//! The directory lock holds while its `DirLock` lives, whatever else the
//! process does with the lock file, and says who holds it when it can.
//!
//! The other processes are `python3` one-liners: `fcntl.lockf` takes a
//! classic POSIX record lock (what a JVM's `FileChannel.tryLock` takes: a
//! Kafka broker), `fcntl.flock` a BSD lock. Skipped when python3 is missing.

use std::io::{BufRead, BufReader, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};

use kaen_log::log::lock::{DirLock, LOCK_FILE};
use kaen_log::Error;

fn python() -> Option<Command> {
    let ok = Command::new("python3")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    ok.then(|| Command::new("python3"))
}

/// From another process: can `kind` (lockf or flock) be taken on the lock file now?
fn free_from_outside(dir: &Path, kind: &str) -> bool {
    let script = format!(
        "import fcntl, sys\n\
         f = open(sys.argv[1], 'r+')\n\
         try:\n    fcntl.{kind}(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n    print('FREE')\n\
         except OSError:\n    print('HELD')\n"
    );
    let o = python()
        .unwrap()
        .args(["-c", &script])
        .arg(dir.join(LOCK_FILE))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{out}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    match out.trim() {
        "FREE" => true,
        "HELD" => false,
        other => panic!("{other}"),
    }
}

#[test]
fn a_failed_second_acquire_keeps_the_first_lock() {
    if python().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let first = DirLock::acquire(tmp.path()).unwrap();
    // Held from outside.
    assert!(!free_from_outside(tmp.path(), "lockf"));
    assert!(!free_from_outside(tmp.path(), "flock"));
    // A second acquire in this process fails, and closes its descriptor of
    // the lock file as it goes: with classic fcntl locks that close
    // released the first lock too.
    for _ in 0..3 {
        let err = DirLock::acquire(tmp.path()).unwrap_err();
        assert!(matches!(err, Error::Locked { holder: None, .. }), "{err:?}");
        assert!(
            err.to_string().contains("locked by another process"),
            "{err}"
        );
    }
    assert!(
        !free_from_outside(tmp.path(), "lockf"),
        "the fcntl lock was lost after a failed second acquire"
    );
    assert!(
        !free_from_outside(tmp.path(), "flock"),
        "the flock was lost after a failed second acquire"
    );
    // Opening and closing the lock file elsewhere in the process does not release it either.
    drop(std::fs::File::open(tmp.path().join(LOCK_FILE)).unwrap());
    assert!(!free_from_outside(tmp.path(), "lockf"));
    drop(first);
    assert!(free_from_outside(tmp.path(), "lockf"));
    assert!(free_from_outside(tmp.path(), "flock"));
    DirLock::acquire(tmp.path()).unwrap();
}

/// A python3 process holding `kind` on the lock file until its stdin closes.
struct Holder(Child);

impl Holder {
    fn new(dir: &Path, kind: &str) -> Self {
        let script = format!(
            "import fcntl, sys\n\
             f = open(sys.argv[1], 'a+')\n\
             fcntl.{kind}(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n\
             print('LOCKED', flush=True)\n\
             sys.stdin.read()\n"
        );
        let mut child = python()
            .unwrap()
            .args(["-c", &script])
            .arg(dir.join(LOCK_FILE))
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .spawn()
            .unwrap();
        let mut line = String::new();
        BufReader::new(child.stdout.take().unwrap())
            .read_line(&mut line)
            .unwrap();
        assert_eq!(line.trim(), "LOCKED");
        Holder(child)
    }
}

impl Drop for Holder {
    fn drop(&mut self) {
        if let Some(mut stdin) = self.0.stdin.take() {
            let _ = stdin.flush();
        }
        let _ = self.0.wait();
    }
}

#[test]
fn the_refusal_names_a_classic_lock_holder() {
    if python().is_none() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    // A classic fcntl lock, as a broker holds it: the OS names its process.
    let holder = Holder::new(tmp.path(), "lockf");
    let pid = holder.0.id();
    let err = DirLock::acquire(tmp.path()).unwrap_err();
    assert!(
        matches!(err, Error::Locked { holder: Some(p), .. } if p == pid),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains(&format!("locked by process {pid}")),
        "{err}"
    );
    drop(holder);
    drop(DirLock::acquire(tmp.path()).unwrap());

    // A flock: no PID to report.
    let holder = Holder::new(tmp.path(), "flock");
    let err = DirLock::acquire(tmp.path()).unwrap_err();
    assert!(matches!(err, Error::Locked { holder: None, .. }), "{err:?}");
    assert!(
        err.to_string().contains("locked by another process"),
        "{err}"
    );
    drop(holder);
    // Refused acquires released what they had taken: the lock is free.
    drop(DirLock::acquire(tmp.path()).unwrap());
    assert!(free_from_outside(tmp.path(), "lockf"));
}
