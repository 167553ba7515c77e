//! Writers never acknowledge what they cannot store: limits are checked
//! before a byte is written.

use std::time::{Duration, Instant};

use crate::measure::klog_in;
use crate::support::{stderr, stdout, TestEnv};

/// Run klog and assert it ends within `limit`.
fn run_bounded(env: &TestEnv, args: &[&str], stdin: Option<&str>) -> std::process::Output {
    let started = Instant::now();
    let o = env.run(args, stdin);
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(20),
        "klog {args:?} took {took:?}"
    );
    o
}

fn log_bytes(env: &TestEnv, partition: &str) -> u64 {
    let dir = env.path("data").join(partition);
    std::fs::read_dir(dir)
        .map(|d| {
            d.flatten()
                .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
                .map(|e| e.metadata().map_or(0, |m| m.len()))
                .sum()
        })
        .unwrap_or(0)
}

#[test]
fn r1_produce_refuses_a_batch_over_max_message_bytes() {
    // Kafka answers RecordTooLargeException for a batch over
    // max.message.bytes (default message.max.bytes, 1 MiB + 12); klog refuses
    // before writing, so nothing is acknowledged that is not stored.
    let env = TestEnv::new();
    let line = "x".repeat(600 * 1024);
    let input = format!("{line}\n{line}\n");
    let o = run_bounded(
        &env,
        &["produce", "data", "--topic", "big", "--batch-size", "2"],
        Some(&input),
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o)
            .contains("over the limit of 1048588 (Kafka's max.message.bytes); nothing was written"),
        "{}",
        stderr(&o)
    );
    assert_eq!(stdout(&o), "", "nothing acknowledged");
    assert_eq!(log_bytes(&env, "big-0"), 0);
    // Under the limit, one record at a time, both are stored.
    let o = run_bounded(&env, &["produce", "data", "--topic", "big"], Some(&input));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(log_bytes(&env, "big-0") > 2 * 600 * 1024);
    // A smaller limit of one's own.
    let o = run_bounded(
        &env,
        &[
            "produce",
            "data",
            "--topic",
            "small",
            "--max-message-bytes",
            "100",
        ],
        Some(&"y".repeat(200)),
    );
    assert_eq!(o.status.code(), Some(2));
    assert_eq!(log_bytes(&env, "small-0"), 0);
}

#[test]
fn r1_a_batch_that_grows_past_the_limit_is_refused_before_it_is_read_whole() {
    // 2,100 lines of 1 MiB in one batch were read, held and encoded (over
    // 6 GB) before the refusal; 200 lines of 512 KiB are enough to tell: the
    // batch is refused at its second line, in bounded memory.
    let env = TestEnv::new();
    let input = env.path("lines.txt");
    let line = format!("{}\n", "x".repeat(512 << 10));
    std::fs::write(&input, line.repeat(200)).unwrap();
    let run = klog_in(
        env.dir.path(),
        &["produce", "data", "--topic", "big", "--batch-size", "5000"],
        Some(&input),
        None,
    );
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains(
            "big-0: a batch of 2 records (stdin lines 1..=2) is at least 1048651 bytes, \
             over the limit of 1048588 (Kafka's max.message.bytes); nothing was written"
        ),
        "{}",
        run.stderr
    );
    assert!(run.stdout.is_empty(), "nothing acknowledged");
    assert_eq!(log_bytes(&env, "big-0"), 0);
    run.assert_bounded("produce", 10, 0);
}

#[test]
fn r2_commit_refuses_strings_an_offsets_record_cannot_hold() {
    // OffsetCommitKey/Value strings carry an int16 length: at most 32,767 bytes.
    let env = TestEnv::new();
    let long = "m".repeat(40_000);
    for (flag, value) in [("--metadata", long.as_str()), ("--group", long.as_str())] {
        let mut args = vec![
            "commit",
            "data",
            "--group",
            "g",
            "--topic",
            "t",
            "--partition",
            "0",
            "--offset",
            "1",
        ];
        if flag == "--group" {
            args[3] = value;
        } else {
            args.extend([flag, value]);
        }
        let o = run_bounded(&env, &args, None);
        assert_eq!(o.status.code(), Some(2), "{flag}");
        assert!(
            stderr(&o).contains("is 40000 bytes; an offsets record holds at most 32767"),
            "{flag}: {}",
            stderr(&o)
        );
    }
    assert!(!env.path("data/__offsets-0").exists(), "nothing written");
}

#[test]
fn r3_segment_bytes_past_i32_max_is_refused() {
    // segment.bytes is a 32-bit int in Kafka's LogConfig; a larger segment
    // would need index positions past 2^31 - 1.
    let env = TestEnv::new();
    let o = run_bounded(
        &env,
        &[
            "produce",
            "data",
            "--topic",
            "t",
            "--segment-bytes",
            "4294967296",
        ],
        Some("a\n"),
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("--segment-bytes"), "{}", stderr(&o));
    assert!(!env.path("data/t-0").exists());
}

#[test]
fn r17_topic_names_over_249_characters_are_refused() {
    // Kafka's Topic.validate: at most 249 characters.
    let env = TestEnv::new();
    for len in [250, 251, 252] {
        let topic = "t".repeat(len);
        let o = run_bounded(&env, &["produce", "data", "--topic", &topic], Some("a\n"));
        assert_eq!(o.status.code(), Some(2), "{len}");
        assert!(
            stderr(&o).contains(&format!(
                "topic name of {len} characters: Kafka allows at most 249"
            )),
            "{}",
            stderr(&o)
        );
    }
    let topic = "t".repeat(249);
    let o = run_bounded(&env, &["produce", "data", "--topic", &topic], Some("a\n"));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
}

#[test]
fn r2_an_undecodable_offsets_record_does_not_lock_a_group_in() {
    // A commit whose value does not decode (version 3 cut short) sits in the
    // offsets log: replay reports it with its position and goes on, and
    // tombstone still deletes the group's other keys, with a warning.
    let env = TestEnv::new();
    // The topic must exist, and hold 5 records for offset 5 to stand unclamped.
    let o = env.run(
        &["produce", "data", "--topic", "orders"],
        Some("1\n2\n3\n4\n5\n"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let ok = env.run(
        &[
            "commit", "data", "-g", "g", "-t", "orders", "-p", "0", "--offset", "5", "--now-ms",
            "1",
        ],
        None,
    );
    assert_eq!(ok.status.code(), Some(0), "{}", stderr(&ok));
    // key: version 1, group "g", topic "orders", partition 1; value: version 3, then 2 bytes.
    let key = [&[0u8, 1, 0, 1, b'g', 0, 6][..], b"orders", &[0, 0, 0, 1]].concat();
    let value = [0u8, 3, 0, 0];
    let b64 = |b: &[u8]| {
        use base64::Engine;
        base64::engine::general_purpose::STANDARD.encode(b)
    };
    let line = format!(
        "{{\"key\": {{\"base64\": \"{}\"}}, \"value\": {{\"base64\": \"{}\"}}}}\n",
        b64(&key),
        b64(&value)
    );
    let o = env.run(
        &[
            "produce",
            "data",
            "--topic",
            "__offsets",
            "--input-format",
            "json",
        ],
        Some(&line),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(&["tombstone", "data", "-g", "g"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(stderr(&o).contains("warning"), "{}", stderr(&o));
    assert!(stderr(&o).contains("offset 1:"), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("deleted g orders-0 (was 5)"),
        "{}",
        stdout(&o)
    );
}

/// The size of every file under `dir`, by name.
fn sizes(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    out.sort();
    out
}

/// A commit of group kitchen's orders-0 at offset 3 into fixtures/groups.
const COMMIT_KITCHEN: [&str; 12] = [
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

/// klog run by bash under `ulimit -f blocks` (1 KiB blocks) with SIGXFSZ
/// ignored, so that a write past the limit fails with EFBIG.
fn run_with_file_limit(env: &TestEnv, blocks: u32, args: &[&str]) -> std::process::Output {
    run_limited(env, &format!("ulimit -f {blocks}; trap '' XFSZ"), args)
}

/// klog run by bash after `setup` (shell commands that set limits).
fn run_limited(env: &TestEnv, setup: &str, args: &[&str]) -> std::process::Output {
    let klog = assert_cmd::cargo::cargo_bin("klog");
    std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("{setup}; exec \"$0\" \"$@\""))
        .arg(klog)
        .args(args)
        .current_dir(env.path(""))
        .env("NO_COLOR", "1")
        .output()
        .unwrap()
}

#[test]
fn r36_2_an_append_that_fails_past_a_file_size_limit_is_rolled_back() {
    // (ulimit -f 2; trap '' XFSZ; klog commit ... --metadata <1000 chars>):
    // the batch does not fit under 2048 bytes. The write fails half done
    // (EFBIG); the log and its indexes are cut back to their lengths before
    // the append and synced, and the message says nothing remains.
    let env = TestEnv::new();
    let part = env.path("fixtures/groups/__offsets-0");
    let before = sizes(&part);
    let metadata = "m".repeat(1000);
    let args = [&COMMIT_KITCHEN[..], &["--metadata", &metadata]].concat();
    let o = run_with_file_limit(&env, 2, &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("rolled back: nothing of this append remains"),
        "{}",
        stderr(&o)
    );
    assert_eq!(sizes(&part), before, "the failed append left bytes behind");
    assert_eq!(stdout(&o), "", "nothing acknowledged");
    // Nothing torn is left: the same commit goes through without the limit.
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(&["verify-crc", "fixtures/groups"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

/// The bytes of every file under `dir`, by name.
fn contents(dir: &std::path::Path) -> Vec<(String, Vec<u8>)> {
    let mut out: Vec<(String, Vec<u8>)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                std::fs::read(e.path()).unwrap(),
            )
        })
        .collect();
    out.sort();
    out
}

#[test]
fn r49_3_a_plain_file_size_limit_does_not_kill_an_append_midway() {
    // (ulimit -f 2; klog commit ... --metadata <1000 chars>), SIGXFSZ at
    // its default action: klog was killed by the signal halfway through
    // the batch and left a 531-byte torn tail. klog ignores SIGXFSZ
    // itself, so the write fails with EFBIG and the append is undone.
    let env = TestEnv::new();
    let part = env.path("fixtures/groups/__offsets-0");
    let before = contents(&part);
    let metadata = "m".repeat(1000);
    let args = [&COMMIT_KITCHEN[..], &["--metadata", &metadata]].concat();
    let o = run_limited(&env, "ulimit -f 2", &args);
    assert_eq!(o.status.code(), Some(2), "{:?} {}", o.status, stderr(&o));
    assert!(
        stderr(&o).contains("File too large")
            && stderr(&o).contains("rolled back: nothing of this append remains"),
        "{}",
        stderr(&o)
    );
    assert!(
        contents(&part) == before,
        "the failed append changed the files"
    );
    assert_eq!(stdout(&o), "", "nothing acknowledged");
}

/// `cp -al from to`: every file of `from` hard-linked under `to`.
fn copy_linked(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for e in std::fs::read_dir(from).unwrap().flatten() {
        let target = to.join(e.file_name());
        if e.file_type().unwrap().is_dir() {
            copy_linked(&e.path(), &target);
        } else {
            std::fs::hard_link(e.path(), target).unwrap();
        }
    }
}

#[test]
fn r36_3_writers_refuse_hard_linked_files_or_copy_them_first() {
    // `cp -al data backup; klog verify-crc --repair data` cut the backup's
    // log too, and commit appended through a link to a file outside the
    // data directory: a writer refuses a file with other hard links, or
    // with --copy-hard-linked writes to a private copy of it.
    let env = TestEnv::new();
    copy_linked(&env.path("fixtures/truncated"), &env.path("backup"));
    let backup_log = env.path("backup/orders-0/00000000000000000090.log");
    let backup = std::fs::read(&backup_log).unwrap();
    let o = env.run(&["verify-crc", "--repair", "fixtures/truncated"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("hard links") && stderr(&o).contains("--copy-hard-linked"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&backup_log).unwrap(), backup);
    let data_log = env.path("fixtures/truncated/orders-0/00000000000000000090.log");
    assert_eq!(
        std::fs::read(&data_log).unwrap(),
        backup,
        "refused before any change"
    );
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--copy-hard-linked",
            "fixtures/truncated",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(
        std::fs::read(&backup_log).unwrap(),
        backup,
        "the backup was cut"
    );
    assert!(std::fs::read(&data_log).unwrap().len() < backup.len());

    // commit into a directory whose offsets log is linked from elsewhere.
    copy_linked(&env.path("fixtures/groups"), &env.path("groups-backup"));
    let linked = env.path("groups-backup/__offsets-0/00000000000000000000.log");
    let old = std::fs::read(&linked).unwrap();
    let args = COMMIT_KITCHEN;
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("hard links"), "{}", stderr(&o));
    assert_eq!(stdout(&o), "");
    let o = env.run(&[&args[..], &["--copy-hard-linked"]].concat(), None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(
        std::fs::read(&linked).unwrap(),
        old,
        "the other name changed"
    );
    let mine =
        std::fs::read(env.path("fixtures/groups/__offsets-0/00000000000000000000.log")).unwrap();
    assert!(mine.len() > old.len());
}

#[test]
fn r49_17_a_lock_file_that_is_a_symlink_is_refused_and_nothing_is_created_outside() {
    // `.lock` a symlink to a missing path in another directory: a writer
    // created that file (open with O_CREAT follows the link). The lock is
    // opened with O_NOFOLLOW, and a `.lock` that is not a regular file is
    // refused before anything is written.
    let env = TestEnv::new();
    let elsewhere = tempfile::tempdir().unwrap();
    let target = elsewhere.path().join("planted");
    let lock = env.path("fixtures/groups/.lock");
    std::fs::remove_file(&lock).unwrap();
    std::os::unix::fs::symlink(&target, &lock).unwrap();
    let part = env.path("fixtures/groups/__offsets-0");
    let before = contents(&part);
    let o = env.run(&COMMIT_KITCHEN, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(".lock: is not a regular file"),
        "{}",
        stderr(&o)
    );
    assert!(
        !target.exists(),
        "a file was created outside the data directory"
    );
    assert!(contents(&part) == before, "the refused commit wrote");
    // A FIFO in its place is refused as well, without hanging.
    std::fs::remove_file(&lock).unwrap();
    let path = std::ffi::CString::new(lock.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(path.as_ptr(), 0o600) }, 0);
    let o = run_bounded(&env, &COMMIT_KITCHEN, None);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains(".lock: is not a regular file"),
        "{}",
        stderr(&o)
    );
    assert!(contents(&part) == before, "the refused commit wrote");
}

#[test]
fn r49_16_one_directory_given_twice_is_named_so_and_read_once() {
    // `klog commit d --replica d-link` (d-link a symlink to d) was refused
    // as "locked by another process (a running broker...)": its second
    // lock failed against its first. It is refused as the same directory
    // given twice, before any lock is taken.
    let env = TestEnv::new();
    std::os::unix::fs::symlink(env.path("fixtures/groups"), env.path("groups-link")).unwrap();
    let part = env.path("fixtures/groups/__offsets-0");
    let before = contents(&part);
    for replica in ["groups-link", "fixtures/groups/."] {
        let args = [&COMMIT_KITCHEN[..], &["--replica", replica]].concat();
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(&format!(
                "fixtures/groups and {replica} are the same directory, given twice"
            )) && !stderr(&o).contains("locked"),
            "{}",
            stderr(&o)
        );
        assert!(contents(&part) == before, "the refused commit wrote");
    }

    // `verify-crc d d/.` counted every batch (and finding) twice: a reader
    // reads one directory once, and says so.
    let once = env.run(&["verify-crc", "fixtures/groups"], None);
    for twice in ["fixtures/groups/.", "groups-link"] {
        let o = env.run(&["verify-crc", "fixtures/groups", twice], None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert_eq!(stdout(&o), stdout(&once), "counted twice");
        assert_eq!(
            stderr(&o)
                .matches(&format!(
                    "note: {twice} is fixtures/groups again (the same directory or file); read once"
                ))
                .count(),
            1,
            "{}",
            stderr(&o)
        );
    }
    let o = env.run(
        &["verify-crc", "fixtures/truncated", "fixtures/truncated/."],
        None,
    );
    let single = env.run(&["verify-crc", "fixtures/truncated"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stdout(&o), stdout(&single), "findings reported twice");
}

#[test]
fn r49_19_an_append_that_fails_after_a_roll_undoes_the_roll() {
    // (ulimit -f 1; klog commit --config segment.bytes=1600 ... --metadata
    // <1100 characters>): the batch rolls to a new segment and fails in
    // it. The rollback cut the new segment's log back to 0 bytes but left
    // its empty .log, .index and .timeindex, while saying nothing remains.
    let env = TestEnv::new();
    let part = env.path("fixtures/groups/__offsets-0");
    let before = contents(&part);
    let metadata = "m".repeat(1100);
    let args = [
        &COMMIT_KITCHEN[..],
        &["--metadata", &metadata, "--config", "segment.bytes=1600"],
    ]
    .concat();
    let o = run_limited(&env, "ulimit -f 1", &args);
    assert_eq!(o.status.code(), Some(2), "{:?} {}", o.status, stderr(&o));
    assert!(
        stderr(&o).contains("rolled back: nothing of this append remains")
            && stderr(&o).contains("the segment it rolled to")
            && stderr(&o).contains("00000000000000000014.log, removed"),
        "{}",
        stderr(&o)
    );
    assert!(
        contents(&part) == before,
        "the failed append after a roll left files"
    );

    // Two replicas, the second one's roll failing (a symlink where its new
    // offset index goes, which klog does not write through): the first
    // one's append, roll included, is undone, and the second one's
    // half-made segment removed.
    let input = r#"{"key": "k", "value": "v", "timestamp": 1700000000000}"#;
    let produce = [
        "produce",
        "a",
        "--replica",
        "b",
        "--topic",
        "t",
        "--input-format",
        "json",
        "--segment-bytes",
        "100",
    ];
    let o = env.run(&produce, Some(input));
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let planted = env.path("b/t-0/00000000000000000001.index");
    std::os::unix::fs::symlink(env.path("nowhere"), &planted).unwrap();
    let (a, b) = (env.path("a/t-0"), env.path("b/t-0"));
    let (a_before, b_names) = (contents(&a), sizes_of_regular(&b));
    let o = env.run(&produce, Some(input));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is a symlink")
            && stderr(&o).contains("was rolled back: no replica holds any of it"),
        "{}",
        stderr(&o)
    );
    assert!(contents(&a) == a_before, "the undone roll left files in a");
    assert_eq!(
        sizes_of_regular(&b),
        b_names,
        "the failed roll left files in b"
    );
    assert!(!env.path("nowhere").exists());
}

/// [`sizes`] of the regular files only (a planted symlink left out).
fn sizes_of_regular(dir: &std::path::Path) -> Vec<(String, u64)> {
    let mut out: Vec<(String, u64)> = std::fs::read_dir(dir)
        .unwrap()
        .flatten()
        .filter(|e| e.file_type().unwrap().is_file())
        .map(|e| {
            (
                e.file_name().to_string_lossy().into_owned(),
                e.metadata().unwrap().len(),
            )
        })
        .collect();
    out.sort();
    out
}
