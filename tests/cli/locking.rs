//! Dry runs read only, so they run beside a lock holder; writes refuse,
//! and name the holder when the OS reports it.

use crate::support::{snapshot as files, stderr, stdout, LockHolder, TestEnv};

#[test]
fn dry_runs_do_not_need_the_lock() {
    let env = TestEnv::new();
    let groups = env.path("fixtures/groups");
    let truncated = env.path("fixtures/truncated");
    let before = (files(&groups), files(&truncated));
    let holders = (LockHolder::new(&groups), LockHolder::new(&truncated));

    let o = env.run(
        &[
            "tombstone",
            "fixtures/groups",
            "--group",
            "kitchen",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "would delete kitchen orders-0 (was 15): tombstone to __offsets-0 at offset 14\n"
    );
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--dry-run",
            "fixtures/truncated/orders-0",
        ],
        None,
    );
    assert!(
        stdout(&o).contains("repair: would move 20 bytes"),
        "{}{}",
        stdout(&o),
        stderr(&o)
    );
    assert!(!stderr(&o).contains("locked"), "{}", stderr(&o));

    // The writes refuse.
    let o = env.run(
        &["tombstone", "fixtures/groups", "--group", "kitchen"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("locked by another process"),
        "{}",
        stderr(&o)
    );
    drop(holders);
    assert_eq!(
        (files(&groups), files(&truncated)),
        before,
        "a dry run wrote"
    );
}

#[test]
fn a_dry_run_still_refuses_a_damaged_tail() {
    let env = TestEnv::new();
    let log = env.path("fixtures/groups/__offsets-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let torn = bytes[..25].to_vec();
    bytes.extend_from_slice(&torn);
    std::fs::write(&log, &bytes).unwrap();
    let o = env.run(
        &[
            "tombstone",
            "fixtures/groups",
            "--group",
            "kitchen",
            "--dry-run",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("refusing to append behind a damaged tail"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&log).unwrap(), bytes);
}

/// A child process holding a classic POSIX record lock on `lock`, as a
/// broker's JVM takes it (`FileChannel.tryLock`), until its stdin closes.
fn hold_lock(lock: &std::path::Path) -> std::process::Child {
    use std::io::BufRead;
    let mut holder = std::process::Command::new("python3")
        .args([
            "-c",
            "import fcntl, sys\n\
             f = open(sys.argv[1], 'a+')\n\
             fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)\n\
             print('LOCKED', flush=True)\n\
             sys.stdin.read()\n",
        ])
        .arg(lock)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("python3 runs (the tests need it)");
    let mut line = String::new();
    std::io::BufReader::new(holder.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    assert_eq!(line.trim(), "LOCKED");
    holder
}

#[test]
fn the_refusal_names_a_broker_pid() {
    let env = TestEnv::new();
    let mut holder = hold_lock(&env.path("fixtures/groups/.lock"));
    let o = env.run(
        &["tombstone", "fixtures/groups", "--group", "kitchen"],
        None,
    );
    drop(holder.stdin.take());
    holder.wait().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains(&format!("locked by process {}", holder.id())),
        "{}",
        stderr(&o)
    );
}

/// A reading command on a directory a running broker holds reads it, and
/// says once per directory that what it reads may change underneath;
/// without a holder (a `.lock` left behind) it says nothing.
#[test]
fn readers_say_when_a_running_broker_holds_the_directory() {
    let env = TestEnv::new();
    let lock = env.path("fixtures/groups/.lock");
    std::fs::write(&lock, "").unwrap();
    let quiet = env.run(&["replay-offsets", "fixtures/groups"], None);
    assert_eq!(quiet.status.code(), Some(0), "{}", stderr(&quiet));
    assert!(!stderr(&quiet).contains("in use"), "{}", stderr(&quiet));
    let mut holder = hold_lock(&lock);
    let segment = std::fs::read_dir(env.path("fixtures/groups/__offsets-0"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|e| e == "log"))
        .unwrap();
    let runs = [
        env.run(&["replay-offsets", "fixtures/groups"], None),
        env.run(
            &[
                "verify-crc",
                "fixtures/groups",
                "fixtures/groups/__offsets-0",
            ],
            None,
        ),
        env.run(&["dump-segment", segment.to_str().unwrap()], None),
    ];
    drop(holder.stdin.take());
    holder.wait().unwrap();
    let warned = format!(
        "fixtures/groups is in use: process {} (a running broker?) holds its .lock",
        holder.id()
    );
    for o in &runs {
        assert_eq!(o.status.code(), Some(0), "{}", stderr(o));
        assert_eq!(stderr(o).matches(&warned).count(), 1, "{}", stderr(o));
    }
    assert_eq!(stdout(&runs[0]), stdout(&quiet), "the same answer");
    // Another klog writing holds an open-file-description lock, whose
    // owner the OS does not name.
    let klog = LockHolder::new(&env.path("fixtures/groups"));
    let o = env.run(&["replay-offsets", "fixtures/groups"], None);
    drop(klog);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("fixtures/groups is in use: another process (a klog writing?)"),
        "{}",
        stderr(&o)
    );
}

/// A process holding `.lock` with flock(2) (another tool, or a klog
/// between its two locks) holds no fcntl lock: readers warned only about
/// fcntl holders, though writers refuse either. They now try a shared
/// flock too.
#[test]
fn r49_18_readers_say_when_a_flock_holds_the_directory() {
    use std::os::fd::AsRawFd;
    let env = TestEnv::new();
    let lock = env.path("fixtures/groups/.lock");
    let file = std::fs::File::open(&lock).unwrap();
    // SAFETY: an open descriptor; LOCK_NB never waits.
    assert_eq!(
        unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_EX | libc::LOCK_NB) },
        0
    );
    let o = env.run(&["replay-offsets", "fixtures/groups"], None);
    let write = env.run(
        &["tombstone", "fixtures/groups", "--group", "kitchen"],
        None,
    );
    drop(file);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        stderr(&o)
            .matches("fixtures/groups is in use: another process (a klog writing?) holds its .lock")
            .count(),
        1,
        "{}",
        stderr(&o)
    );
    assert_eq!(write.status.code(), Some(2), "{}", stderr(&write));
    assert!(stderr(&write).contains("locked by"), "{}", stderr(&write));
    // Released, nobody holds it, and the check took no lock of its own.
    let o = env.run(&["replay-offsets", "fixtures/groups"], None);
    assert!(!stderr(&o).contains("in use"), "{}", stderr(&o));
}
