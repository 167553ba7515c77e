//! Filesystem objects that are not what they seem: a FIFO or a device in
//! place of a file klog reads never blocks it.

use std::time::Duration;

use crate::support::{encoded, stderr, stdout, write_segment, TestEnv};

fn mkfifo(path: &std::path::Path) {
    let _ = std::fs::remove_file(path);
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo only creates a node.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0, "{path:?}");
}

#[test]
fn r9_fifos_in_place_of_every_file_klog_reads_do_not_block() {
    let env = TestEnv::new();
    let txn = env.path("fixtures/txn/payments-0");
    let kafka = env.path("fixtures/kafka");
    for f in [
        txn.join("00000000000000000000.index"),
        txn.join("00000000000000000000.timeindex"),
        txn.join("00000000000000000000.txnindex"),
        txn.join("00000000000000000017.snapshot"),
        kafka.join("meta.properties"),
        kafka.join("replication-offset-checkpoint"),
        kafka.join("orders-0/partition.metadata"),
        kafka.join("__consumer_offsets-8/leader-epoch-checkpoint"),
    ] {
        mkfifo(&f);
    }
    let runs: [&[&str]; 9] = [
        &["verify-crc", "fixtures/txn"],
        &["verify-crc", "--deep", "fixtures/txn"],
        &[
            "dump-segment",
            "--from-offset",
            "5",
            "fixtures/txn/payments-0",
        ],
        &[
            "dump-segment",
            "fixtures/txn/payments-0/00000000000000000000.index",
        ],
        &["transactions", "fixtures/txn"],
        &["stats", "fixtures/txn"],
        &["info", "fixtures/kafka"],
        &["lag", "fixtures/kafka"],
        &["diff", "fixtures/txn/payments-0", "fixtures/txn/payments-0"],
    ];
    for args in runs {
        let o = env
            .cmd()
            .args(args)
            .timeout(Duration::from_secs(20))
            .output()
            .unwrap();
        let code = o.status.code();
        assert!(
            matches!(code, Some(0..=2)),
            "klog {args:?} did not finish cleanly ({code:?}): {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(!stderr(&o).contains("panicked"), "{args:?}: {}", stderr(&o));
    }
    // The FIFO is named where it matters.
    let o = env.run(&["verify-crc", "fixtures/txn/payments-0"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("00000000000000000000.index:0 error not_regular_file"),
        "{}",
        stdout(&o)
    );
    // A checkpoint that is a device is refused, not read without end.
    std::fs::remove_file(kafka.join("replication-offset-checkpoint")).unwrap();
    std::os::unix::fs::symlink("/dev/zero", kafka.join("replication-offset-checkpoint")).unwrap();
    let o = env
        .cmd()
        .args(["info", "fixtures/kafka"])
        .timeout(Duration::from_secs(20))
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a regular file"), "{}", stderr(&o));
}

#[test]
fn r10_writes_never_follow_a_planted_symlink() {
    // A symlink at a repair's temporary name, or in place of an index the
    // append path writes, would send the write outside the data directory.
    let env = TestEnv::new();
    let outside = env.path("outside.txt");
    std::fs::write(&outside, b"precious").unwrap();
    // Repair: data/orders-0's first segment gets a preallocated tail (a
    // warning: rebuilt), and its temporary index name is a planted link.
    let index = env.path("fixtures/data/orders-0/00000000000000000000.index");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes.extend_from_slice(&[0; 16]);
    std::fs::write(&index, &bytes).unwrap();
    let tmp = env.path("fixtures/data/orders-0/00000000000000000000.index.klog-tmp");
    std::os::unix::fs::symlink(&outside, &tmp).unwrap();
    let o = env.run(&["verify-crc", "--repair", "fixtures/data/orders-0"], None);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("does not write through symlinks"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
    // The append path: the active segment's index is a link.
    let dir = env.path("fixtures/data/payments.eu-west-1");
    let active = dir.join("00000000000000000000.index");
    std::fs::remove_file(&active).ok();
    std::os::unix::fs::symlink(&outside, &active).unwrap();
    let o = env.run(
        &[
            "produce",
            "fixtures/data",
            "--topic",
            "payments.eu-west",
            "--partition",
            "1",
        ],
        Some("x\n"),
    );
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(std::fs::read(&outside).unwrap(), b"precious");
}

#[test]
fn r11_a_partition_symlinked_from_another_data_directory_is_not_written_under_the_wrong_lock() {
    // data/t-0 is a link to other/t-0: the lock of data/ does not cover it.
    let env = TestEnv::new();
    let other = env.path("other");
    crate::support::copy_dir(&env.path("fixtures/truncated"), &other);
    let data = env.path("data");
    std::fs::create_dir_all(&data).unwrap();
    std::os::unix::fs::symlink(other.join("orders-0"), data.join("orders-0")).unwrap();
    let log = other.join("orders-0/00000000000000000090.log");
    let before = std::fs::read(&log).unwrap();
    let o = env.run(&["produce", "data", "--topic", "orders"], Some("x\n"));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("outside the locked data directory"),
        "{}",
        stderr(&o)
    );
    // A data directory lists only real folders, so the link is not repaired through it.
    let o = env.run(&["verify-crc", "--repair", "data"], None);
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(std::fs::read(&log).unwrap(), before, "nothing written");
    // Given as the partition itself, the real parent's lock is taken: while
    // another process holds other/'s lock, the repair is refused.
    let mut holder = std::process::Command::new("python3")
        .args([
            "-c",
            "import fcntl, sys\n\
             f = open(sys.argv[1] + '/.lock', 'a')\n\
             fcntl.flock(f, fcntl.LOCK_EX)\n\
             print('LOCKED', flush=True)\n\
             sys.stdin.read()",
        ])
        .arg(&other)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "LOCKED");
    let o = env.run(&["verify-crc", "--repair", "data/orders-0"], None);
    drop(holder.stdin.take());
    holder.wait().unwrap();
    assert_eq!(o.status.code(), Some(2), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(std::fs::read(&log).unwrap(), before);
}

#[test]
fn r12_odd_entries_are_findings_and_dot_is_a_partition() {
    // A dangling symlink and a FIFO named like segments: reported, the rest
    // of the partition still verified.
    let env = TestEnv::new();
    let dir = env.path("fixtures/data/orders-0");
    std::os::unix::fs::symlink(env.path("nowhere"), dir.join("00000000000000000200.log")).unwrap();
    mkfifo(&dir.join("00000000000000000300.log"));
    // Folders that are not partition folders: a name that is not UTF-8, and
    // one Kafka's LocalLog.parseTopicPartitionName refuses.
    use std::os::unix::ffi::OsStrExt;
    let data = env.path("fixtures/data");
    std::fs::create_dir(data.join(std::ffi::OsStr::from_bytes(b"t\xff-0"))).unwrap();
    std::fs::create_dir(data.join("lost+found")).unwrap();
    let o = env.run(&["verify-crc", "--no-index-checks", "fixtures/data"], None);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let text = stdout(&o);
    assert!(
        text.contains("00000000000000000200.log:0 error not_regular_file is a symlink that does not lead to a file"),
        "{text}"
    );
    assert!(
        text.contains("00000000000000000300.log:0 error not_regular_file is not a regular file"),
        "{text}"
    );
    let text = format!("{}{}", stdout(&o), stderr(&o));
    assert!(text.contains("checked 3 files, 29 batches"), "{text}");
    assert!(
        text.contains(
            "fixtures/data/lost+found:0 error not_a_partition_folder is not a partition folder"
        ),
        "{text}"
    );
    assert!(
        text.contains("-0:0 error not_a_partition_folder is a folder whose name is not UTF-8"),
        "{text}"
    );
    assert!(text.contains("2 not_a_partition_folder"), "{text}");
    // `verify-crc .` from inside a partition folder.
    let o = env
        .cmd()
        .current_dir(env.path("fixtures/data/payments.eu-west-1"))
        .args(["verify-crc", "."])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).starts_with("ok: checked 1 file, 2 batches"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn no_output_lands_on_what_a_command_reads() {
    // `report -o` over a segment of the directory it reads, over the file
    // --layout reads, or into its partition folder: refused before a byte
    // is written, every file as it was.
    let env = TestEnv::new();
    let seg = "fixtures/data/orders-0/00000000000000000000.log";
    let before = std::fs::read(env.path(seg)).unwrap();
    for args in [
        vec!["report", "fixtures/data", "-o", seg],
        vec![
            "report",
            "fixtures/data",
            "-o",
            "fixtures/data/orders-0/new.html",
        ],
        vec!["report", "--layout", seg, "-o", seg],
        vec!["report", "--layout", seg, "-o", "fixtures/data/page.html"],
    ] {
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("nothing was written"),
            "{args:?}: {}",
            stderr(&o)
        );
        assert!(stdout(&o).is_empty(), "{args:?}");
        assert_eq!(std::fs::read(env.path(seg)).unwrap(), before, "{args:?}");
        assert!(!env.path("fixtures/data/orders-0/new.html").exists());
        assert!(!env.path("fixtures/data/page.html").exists());
    }
    // stdout appended (`>>`) to a segment of the directory read.
    let file = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(seg))
        .unwrap();
    let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("klog"))
        .current_dir(env.path(""))
        .args(["dump-segment", "fixtures/data/orders-0"])
        .stdout(file)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert_eq!(std::fs::read(env.path(seg)).unwrap(), before);
    // Elsewhere is fine.
    let o = env.run(&["report", "--layout", seg, "-o", "page.html"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(env.path("page.html").is_file());
}

/// See: hostile input, round three, item 11. A folder that is not
/// `<topic>-<partition>` in a broker's log directory: Kafka 4.3's
/// `LogManager.loadLogs` calls `UnifiedLog.parseTopicPartitionName` on it,
/// which throws `KafkaException` (`backup-old`: partition "old" is not an
/// int), and the broker fails to start ("Error starting LogManager").
/// `verify-crc`, `info` and `summary` each report it as the same error.
#[test]
fn r11_a_foreign_folder_in_a_log_directory_is_an_error_for_every_command() {
    let env = TestEnv::new();
    let backup = env.path("fixtures/kafka/backup-old");
    crate::support::copy_dir(&env.path("fixtures/kafka/orders-0"), &backup);
    let want = (
        "not_a_partition_folder".to_string(),
        "error".to_string(),
        backup.canonicalize().unwrap(),
    );
    let found = |args: &[&str]| {
        let o = env.run(args, None);
        assert_eq!(
            o.status.code(),
            Some(1),
            "{args:?}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let f: Vec<_> = v["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["kind"] == "not_a_partition_folder")
            .map(|f| {
                let detail = f["detail"].as_str().unwrap();
                assert!(detail.contains("fails to start"), "{args:?}: {detail}");
                (
                    f["kind"].as_str().unwrap().to_string(),
                    f["severity"].as_str().unwrap().to_string(),
                    env.path(f["file"].as_str().unwrap())
                        .canonicalize()
                        .unwrap(),
                )
            })
            .collect();
        assert_eq!(f, std::slice::from_ref(&want), "{args:?}");
    };
    found(&[
        "verify-crc",
        "--no-index-checks",
        "--format",
        "json",
        "fixtures/kafka",
    ]);
    found(&[
        "info",
        "--fail-on",
        "note",
        "--format",
        "json",
        "fixtures/kafka",
    ]);
    found(&["summary", "--format", "json", "fixtures/kafka"]);
}

/// See: hostile input, round three, item 19. An index over 2 GiB is no
/// index Kafka wrote: `segment.index.bytes` is an int (LogConfig), and
/// AbstractIndex maps the whole file, which FileChannel.map refuses past
/// Integer.MAX_VALUE. It is an `index_too_large` error, not a file that is
/// not regular. (A sparse file: no disk is used.)
#[test]
fn r19_an_index_over_2_gib_is_too_large_not_irregular() {
    let env = TestEnv::new();
    let index = env.path("fixtures/data/orders-0/00000000000000000000.index");
    std::fs::OpenOptions::new()
        .write(true)
        .open(&index)
        .unwrap()
        .set_len((i32::MAX as u64) + 1)
        .unwrap();
    let o = env.run(
        &["verify-crc", "--format", "json", "fixtures/data/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let on_index: Vec<(&str, &str)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| {
            f["file"]
                .as_str()
                .unwrap()
                .ends_with("00000000000000000000.index")
        })
        .map(|f| (f["kind"].as_str().unwrap(), f["severity"].as_str().unwrap()))
        .collect();
    assert_eq!(on_index, [("index_too_large", "error")]);
    let detail = v["findings"][0]["detail"].as_str().unwrap();
    assert!(detail.contains("is 2147483648 bytes"), "{detail}");
}

/// See: hostile input, round three, item 19. `stat` calls `/proc/self/mem`
/// and `/proc/self/status` regular files of 0 bytes; they are kernel
/// interfaces, not files Kafka wrote. Given as a path, they are refused
/// (exit 2), never read as an empty segment that verifies "ok".
#[test]
fn r19_a_kernel_interface_file_is_refused_not_read_as_a_segment() {
    let env = TestEnv::new();
    for args in [
        &["verify-crc", "/proc/self/mem"][..],
        &["verify-crc", "/proc/self/status"],
        &["dump-segment", "/proc/self/status"],
    ] {
        let o = env.run(args, None);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{args:?}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        let err = stderr(&o);
        assert!(
            err.contains("is not a regular file: it is on proc"),
            "{args:?}: {err}"
        );
        assert!(!stdout(&o).contains("ok"), "{args:?}: {}", stdout(&o));
    }
}

/// Bytes the shell read, with those of the children it waited for
/// (Linux's I/O accounting: `rchar` of /proc/PID/io), after running
/// `klog ARGS` in `dir`.
fn bytes_read_by(dir: &std::path::Path, args: &str) -> (u64, String) {
    let klog = assert_cmd::cargo::cargo_bin("klog");
    let o = std::process::Command::new("sh")
        .current_dir(dir)
        .arg("-c")
        .arg(format!(
            "{} {args} > out.json 2>/dev/null; echo \"exit $?\"; grep '^rchar:' /proc/$$/io",
            klog.display()
        ))
        .output()
        .unwrap();
    let text = String::from_utf8(o.stdout).unwrap();
    let rchar = text
        .lines()
        .find_map(|l| l.strip_prefix("rchar: "))
        .unwrap()
        .parse()
        .unwrap();
    (rchar, text)
}

/// See: hostile input, round three, item 12. A segment extended by 8 GiB
/// of holes after its one batch (preallocated space never written, as
/// `File::set_len` leaves it). Kafka's `FileLogInputStream.nextBatch`
/// meets the zero size field and throws `CorruptRecordException`, and
/// `LogSegment.recover` truncates there: the zeros are the end of valid
/// data. klog reports them as one `trailing_zeros` region at the batch's
/// end, finding that only holes follow (`lseek(SEEK_DATA)`) instead of
/// reading 8 GiB of zeros.
#[test]
fn r12_a_sparse_segment_reports_its_zero_region_without_reading_it() {
    let env = TestEnv::new();
    let one = encoded("out = batch(0, [(0, 0, b'k', b'v' * 100)], first_timestamp=1700000000000)");
    let dir = env.path("sparse");
    write_segment(&dir, "t-0", &one);
    let log = dir.join("t-0/00000000000000000000.log");
    let size = 8u64 << 30;
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(size)
        .unwrap();
    let (read, text) = bytes_read_by(&dir, "verify-crc --format json --no-index-checks t-0");
    assert!(text.starts_with("exit 0\n"), "a warning: {text}");
    let v: serde_json::Value =
        serde_json::from_slice(&std::fs::read(dir.join("out.json")).unwrap()).unwrap();
    let findings: Vec<(&str, u64)> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["kind"].as_str().unwrap(), f["position"].as_u64().unwrap()))
        .collect();
    assert_eq!(findings, [("trailing_zeros", one.len() as u64)]);
    let detail = v["findings"][0]["detail"].as_str().unwrap();
    let zeros = size - one.len() as u64;
    assert!(
        detail.contains(&format!("{zeros} trailing zero bytes")),
        "{detail}"
    );
    assert!(
        read < 64 << 20,
        "read {read} bytes of an 8 GiB file of holes"
    );
}
