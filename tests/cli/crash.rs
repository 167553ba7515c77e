//! Fault injection for the append path, and hostile inputs on the command line.
//!
//! - `kill_9_during_produce_loses_no_acknowledged_record`: `klog produce`
//!   is fed lines without end and killed with SIGKILL at pseudo-random
//!   moments (xorshift, fixed seed), round after round on one data
//!   directory; some rounds also get a torn write (a prefix of a batch)
//!   added after the kill. After each round: a producer refuses the
//!   damaged tail, the repair (`verify-crc --repair` when the binary has
//!   it, else `kaen_log::inspect::repair::{plan, execute}`) cuts only what was never
//!   acknowledged, every offset the producer printed is there with the
//!   value sent, and `klog verify-crc` exits 0.
//! - `crash_between_log_write_and_index_write`: the index loses its last
//!   entry (or half of one), as if the process died after the batch's
//!   fsync and before (or during) the index write.
//! - `hostile_inputs`: zero-filled files, random bytes, text, an index read
//!   as a log, huge and negative length fields, deep trees, symlink loops,
//!   unreadable files: exit codes and messages, never a panic.
//! - `repair_in_a_read_only_directory`: a repair that cannot write changes
//!   nothing, and one stopped between its two steps can be run again.
//!
//! Tests run as root, which reads and writes through any permission bits;
//! the permission cases then run their half as user `nobody` (65534) in a
//! child process.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use kaen_log::format::{encode_batch, BatchSpec, DecodeLimits, Entry, NewRecord};
use kaen_log::inspect::recovery::{check_indexes, rebuild_indexes};
use kaen_log::inspect::repair::{execute, plan, Action, RepairOptions};
use kaen_log::log::read::{SegmentReader, Tail};
use kaen_log::log::{DataDir, Partition};

fn klog() -> Command {
    let mut c = Command::new(assert_cmd::cargo::cargo_bin("klog"));
    c.env("NO_COLOR", "1").env("TZ", "UTC");
    c
}

fn run(args: &[&str]) -> Output {
    klog().args(args).output().unwrap()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// xorshift64: the kill moments, torn lengths and random files.
struct XorShift(u64);

impl XorShift {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Whether this `klog` has `verify-crc --repair`.
fn has_repair_flag() -> bool {
    let o = run(&["verify-crc", "--help"]);
    text(&o.stdout).contains("--repair")
}

/// Repair every partition of `data` the way `verify-crc --repair` would;
/// returns the (partition, plan) pairs that did something.
fn repair(data: &Path, with_flag: bool) -> Vec<(PathBuf, kaen_log::inspect::repair::Plan)> {
    if !data.join("t-0").is_dir() {
        return Vec::new();
    }
    if with_flag {
        let o = run(&["verify-crc", "--repair", data.to_str().unwrap()]);
        assert!(
            matches!(o.status.code(), Some(0 | 1)),
            "verify-crc --repair: {}",
            text(&o.stderr)
        );
        return Vec::new();
    }
    let mut done = Vec::new();
    for p in DataDir::open(data).unwrap().live() {
        let plan = plan(p, &RepairOptions::default()).unwrap();
        assert!(plan.refused.is_empty(), "repair refused: {plan:?}");
        if !plan.actions.is_empty() {
            execute(&plan, &RepairOptions::default()).unwrap();
            done.push((p.dir.clone(), plan));
        }
    }
    done
}

/// Every record of a partition in log order: (offset, value). The whole
/// partition must read cleanly.
fn read_partition(dir: &Path) -> Vec<(i64, String)> {
    let p = Partition::open(dir).unwrap();
    let mut out = Vec::new();
    let mut scratch = Vec::new();
    for seg in &p.segments {
        let mut r = SegmentReader::open(&seg.log).unwrap();
        while let Some(e) = r.next_entry().unwrap() {
            let Entry::V2(b) = e else {
                panic!("a legacy entry in {}", seg.log.display())
            };
            assert!(b.crc_valid(), "{}:{}", seg.log.display(), b.position);
            for rec in b.records(&mut scratch, DecodeLimits::default()).unwrap() {
                let rec = rec.unwrap();
                out.push((rec.offset, text(rec.value.unwrap())));
            }
        }
        assert_eq!(r.tail(), Some(Tail::Clean), "{}", seg.log.display());
    }
    out
}

/// The value of line `k` of round `round`: its own name and a padding of
/// varying length, so batches differ in size and index entries get written.
fn value(round: usize, k: usize) -> String {
    format!("r{round:02}-{k:05}-{}", "x".repeat(k * 37 % 211))
}

fn parse_value(v: &str) -> (usize, usize) {
    let mut it = v.splitn(3, '-');
    let round = it.next().unwrap().trim_start_matches('r').parse().unwrap();
    let k = it.next().unwrap().parse().unwrap();
    assert_eq!(v, value(round, k), "a value that was never sent");
    (round, k)
}

/// `t-0 offsets A..=B (n records)` -> A (batches of one record: A == B).
fn parse_ack(line: &str) -> i64 {
    let rest = line
        .strip_prefix("t-0 offsets ")
        .unwrap_or_else(|| panic!("{line:?}"));
    let (range, _) = rest.split_once(' ').unwrap();
    let (a, b) = range.split_once("..=").unwrap();
    assert_eq!(a, b, "{line:?}");
    assert!(line.ends_with("(1 record)\n"), "{line:?}");
    a.parse().unwrap()
}

fn last_log(dir: &Path) -> PathBuf {
    last_log_if_any(dir).unwrap()
}

/// The partition's last segment, if it has one yet (a producer killed
/// between creating the folder and its first segment leaves none).
fn last_log_if_any(dir: &Path) -> Option<PathBuf> {
    Partition::open(dir)
        .ok()?
        .segments
        .last()
        .map(|s| s.log.clone())
}

/// What one producer process acknowledged before it was killed.
struct Round {
    acked: Vec<i64>,
    stderr: String,
}

/// Start `klog produce DIR --topic t --batch-size 1`, feed it round
/// `round`'s lines from a thread, read its acknowledgements from another,
/// and SIGKILL it after `delay`.
fn produce_and_kill(bin_args: &[&str], round: usize, delay: Duration) -> Round {
    let mut child = klog()
        .args(bin_args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let feeder = std::thread::spawn(move || {
        // Until the pipe breaks: the child is dead.
        for k in 0..1_000_000 {
            if writeln!(stdin, "{}", value(round, k)).is_err() {
                break;
            }
        }
    });
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut acked = Vec::new();
        let mut out = BufReader::new(stdout);
        let mut line = String::new();
        loop {
            line.clear();
            match out.read_line(&mut line) {
                Ok(0) | Err(_) => break,
                // A line cut short by the kill acknowledges nothing.
                Ok(_) if line.ends_with('\n') => acked.push(parse_ack(&line)),
                Ok(_) => {}
            }
        }
        acked
    });
    std::thread::sleep(delay);
    // SAFETY: kill(2) on the pid of a child we have not waited for yet.
    let rc = unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGKILL) };
    assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
    let status = child.wait().unwrap();
    feeder.join().unwrap();
    let acked = reader.join().unwrap();
    let mut stderr = String::new();
    let _ = std::io::Read::read_to_string(&mut child.stderr.take().unwrap(), &mut stderr);
    assert_eq!(
        std::os::unix::process::ExitStatusExt::signal(&status),
        Some(libc::SIGKILL),
        "the producer exited by itself: {status:?}, stderr: {stderr}"
    );
    Round { acked, stderr }
}

#[test]
fn kill_9_during_produce_loses_no_acknowledged_record() {
    // tests/hostile/soak.sh runs 200 rounds.
    let rounds: usize = std::env::var("KLOG_CRASH_ROUNDS")
        .ok()
        .and_then(|r| r.parse().ok())
        .unwrap_or(30);
    let with_flag = has_repair_flag();
    let tmp = tempfile::tempdir().unwrap();
    let data = tmp.path().join("data");
    let data_s = data.to_str().unwrap().to_string();
    let part = data.join("t-0");
    let args = [
        "produce",
        &data_s,
        "--topic",
        "t",
        "--batch-size",
        "1",
        "--segment-bytes",
        "32768",
    ];
    let mut rng = XorShift(0x9E37_79B9_7F4A_7C15);
    let started = Instant::now();
    // offset -> (round, line) of every acknowledged record
    let mut acked: BTreeMap<i64, (usize, usize)> = BTreeMap::new();
    let mut acked_per_round = vec![0usize; rounds];
    // Records on disk after the previous round: where the next one starts.
    let mut log_end = 0i64;
    let (mut torn_injected, mut cuts, mut index_rebuilds) = (0, 0, 0);
    let mut last_torn_at = None;
    for round in 0..rounds {
        // Some kills land during start-up (lock, reading the active segment),
        // the rest while batches are being appended.
        let delay = match rng.below(5) {
            0 => rng.below(15),
            _ => 15 + rng.below(150),
        };
        let r = produce_and_kill(&args, round, Duration::from_millis(delay));
        for (k, offset) in r.acked.iter().enumerate() {
            // The k-th acknowledgement is the k-th line (batches of one),
            // at the log end the producer found.
            assert_eq!(
                *offset,
                log_end + k as i64,
                "round {round}: {:?} {}",
                r.acked,
                r.stderr
            );
            acked.insert(*offset, (round, k));
        }
        acked_per_round[round] = r.acked.len();

        // Every fifth round, a torn write: a prefix of the next batch, as if
        // the process had died inside write(2).
        let mut torn = None;
        if let Some(log) = last_log_if_any(&part).filter(|_| round % 5 == 2) {
            let at = std::fs::metadata(&log).unwrap().len();
            // A second tear at the same position would meet the first's
            // sidecar (repair refuses to overwrite it): tear elsewhere.
            if last_torn_at != Some((log.clone(), at)) {
                let batch = encode_batch(
                    &BatchSpec {
                        base_offset: 1 << 40,
                        partition_leader_epoch: 0,
                        ..BatchSpec::default()
                    },
                    &[NewRecord {
                        value: Some(value(round, 99_999).into_bytes()),
                        timestamp: 1_700_000_000_000,
                        ..NewRecord::default()
                    }],
                )
                .unwrap();
                let cut = 1 + rng.below(batch.len() as u64 - 1) as usize;
                let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
                f.write_all(&batch[..cut]).unwrap();
                drop(f);
                torn = Some((log.clone(), at, batch[..cut].to_vec()));
                last_torn_at = Some((log, at));
                torn_injected += 1;
                // The append path refuses to write behind it.
                let o = klog().args(args).write_stdin_str("refused\n");
                assert_eq!(
                    o.status.code(),
                    Some(2),
                    "round {round}: {}",
                    text(&o.stderr)
                );
                assert!(o.stdout.is_empty(), "{}", text(&o.stdout));
            }
        }

        for (dir, plan) in repair(&data, with_flag) {
            for a in &plan.actions {
                match a {
                    Action::Truncate {
                        log,
                        at,
                        len,
                        sidecar,
                        ..
                    } => {
                        cuts += 1;
                        // Only the torn bytes are cut, and they are kept.
                        let (tlog, tat, tbytes) = torn.as_ref().unwrap_or_else(|| {
                            panic!("round {round}: a cut with no torn write: {plan:?}")
                        });
                        assert_eq!((log, at, *len), (tlog, tat, tbytes.len() as u64));
                        assert_eq!(&std::fs::read(sidecar).unwrap(), tbytes);
                    }
                    Action::RebuildIndexes { .. } => index_rebuilds += 1,
                    Action::MoveAside { .. } | Action::CutRanges { .. } => {
                        panic!("round {round}: {a:?} in {dir:?}")
                    }
                }
            }
        }
        if !part.is_dir() {
            assert!(acked.is_empty());
            continue;
        }
        // Every acknowledged offset is there with the value sent; the log is
        // round after round a prefix of the lines sent, each record once.
        let records = read_partition(&part);
        let mut per_round = vec![0usize; rounds];
        for (i, (offset, v)) in records.iter().enumerate() {
            assert_eq!(*offset, i as i64, "offsets are dense from 0");
            let (rr, k) = parse_value(v);
            assert!(
                rr <= round && per_round[rr] == k,
                "out of order: {v} at {offset}"
            );
            assert!(
                per_round[rr + 1..].iter().all(|&n| n == 0),
                "{v} after a later round"
            );
            per_round[rr] += 1;
        }
        for (offset, &(ar, ak)) in &acked {
            let got = records.get(*offset as usize).map(|(_, v)| v.as_str());
            assert_eq!(
                got,
                Some(value(ar, ak).as_str()),
                "round {round}: acknowledged offset {offset}"
            );
        }
        for r in 0..=round {
            assert!(per_round[r] >= acked_per_round[r], "round {r} lost records");
        }
        log_end = records.len() as i64;
        // The indexes are consistent with the log, and verify-crc is clean.
        for seg in &Partition::open(&part).unwrap().segments {
            assert_eq!(check_indexes(seg, true).unwrap(), vec![], "round {round}");
        }
        let o = run(&["verify-crc", &data_s]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "round {round}: {}",
            text(&o.stdout)
        );
    }
    let took = started.elapsed();
    let records = read_partition(&part);
    let segments = Partition::open(&part).unwrap().segments.len();
    let acked_total: usize = acked_per_round.iter().sum();
    eprintln!(
        "{rounds} rounds killed with SIGKILL in {took:.1?}: {acked_total} records acknowledged, \
         {} on disk ({} written but not yet acknowledged when killed), {segments} segments; \
         {torn_injected} torn writes injected, {cuts} cut by repair, {index_rebuilds} index rebuilds; \
         repair via {}",
        records.len(),
        records.len() - acked_total,
        if with_flag {
            "verify-crc --repair"
        } else {
            "kaen_log::inspect::repair"
        },
    );
    assert_eq!(acked.len(), acked_total);
    assert!(
        acked_total > 0 && segments > 1,
        "the rounds appended too little"
    );
    if !with_flag {
        assert_eq!(cuts, torn_injected);
    }
    // Three seconds a round (the kill comes within 165 ms; the checks read
    // the whole partition each round).
    assert!(
        took < Duration::from_secs(3 * rounds as u64),
        "took {took:?}"
    );
}

/// `Command::output` with `input` on stdin.
trait WriteStdin {
    fn write_stdin_str(&mut self, input: &str) -> Output;
}

impl WriteStdin for Command {
    fn write_stdin_str(&mut self, input: &str) -> Output {
        let mut child = self
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let input = input.to_string();
        let feeder = std::thread::spawn(move || {
            let _ = stdin.write_all(input.as_bytes());
        });
        let out = child.wait_with_output().unwrap();
        feeder.join().unwrap();
        out
    }
}

fn produce_lines(data: &str, lines: std::ops::Range<usize>) -> Vec<String> {
    let input: String = lines.clone().map(|k| value(0, k) + "\n").collect();
    let o = klog()
        .args(["produce", data, "--topic", "t", "--batch-size", "1"])
        .write_stdin_str(&input);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let acks: Vec<String> = text(&o.stdout).lines().map(str::to_string).collect();
    assert_eq!(acks.len(), lines.len());
    acks
}

fn truncate_by(path: &Path, n: u64) {
    let len = std::fs::metadata(path).unwrap().len();
    std::fs::OpenOptions::new()
        .write(true)
        .open(path)
        .unwrap()
        .set_len(len - n)
        .unwrap();
}

#[test]
fn crash_between_log_write_and_index_write() {
    for (cut_index, cut_timeindex) in [(8, 12), (8, 0), (3, 5)] {
        let tmp = tempfile::tempdir().unwrap();
        let data = tmp.path().join("data");
        let data_s = data.to_str().unwrap();
        let part = data.join("t-0");
        // ~170-byte batches: an offset-index entry every ~24 batches.
        let acks = produce_lines(data_s, 0..200);
        assert_eq!(acks[199], "t-0 offsets 199..=199 (1 record)");
        let seg = Partition::open(&part).unwrap().segments[0].clone();
        let index = seg.index.clone().unwrap();
        let timeindex = seg.timeindex.clone().unwrap();
        let entries = std::fs::metadata(&index).unwrap().len() / 8;
        assert!(entries >= 5, "{entries} index entries");
        assert_eq!(check_indexes(&seg, true).unwrap(), vec![]);

        // The process died after the last batch's fsync, before (or in the
        // middle of) its index write: the index lacks (part of) its last entry.
        truncate_by(&index, cut_index);
        truncate_by(&timeindex, cut_timeindex);
        let torn = cut_index % 8 != 0;
        let problems = check_indexes(&seg, true).unwrap();
        if torn {
            // Reported as it is: a partial entry.
            assert!(
                problems.iter().any(|p| p.kind == "index_length"),
                "{problems:?}"
            );
        } else {
            // A sparse index missing its newest entry is still a valid index.
            assert_eq!(problems, vec![], "an index one entry short");
        }
        // verify-crc checks the indexes too: a torn entry is a warning (a
        // broker rebuilds the index on load), a missing newest entry is nothing.
        let o = run(&["verify-crc", "--fail-on", "warning", data_s]);
        assert_eq!(
            o.status.code(),
            Some(if torn { 1 } else { 0 }),
            "{}",
            text(&o.stdout)
        );
        let o = run(&["verify-crc", data_s]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));

        // A new producer appends after the records, at the next offset.
        let acks = produce_lines(data_s, 200..250);
        assert_eq!(acks[0], "t-0 offsets 200..=200 (1 record)");
        let records = read_partition(&part);
        assert_eq!(records.len(), 250);
        for (i, (offset, v)) in records.iter().enumerate() {
            assert_eq!((*offset, v.as_str()), (i as i64, value(0, i).as_str()));
        }
        let o = run(&["verify-crc", data_s]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
        let index_len = std::fs::metadata(&index).unwrap().len();
        let problems = check_indexes(&seg, true).unwrap();
        if !index_len.is_multiple_of(8) {
            // Whatever the append path did with the partial entry, the check
            // must say the index is not whole.
            assert!(
                problems.iter().any(|p| p.kind == "index_length"),
                "a {index_len}-byte index passes check_indexes: {problems:?}"
            );
        }
        if !torn {
            assert_eq!(problems, vec![], "after appending to a short index");
        }

        // Repair leaves the log alone and the indexes whole.
        let p = Partition::open(&part).unwrap();
        let plan = plan(&p, &RepairOptions::default()).unwrap();
        assert!(plan.refused.is_empty(), "{plan:?}");
        assert!(
            !plan
                .actions
                .iter()
                .any(|a| matches!(a, Action::Truncate { .. } | Action::MoveAside { .. })),
            "{plan:?}"
        );
        execute(&plan, &RepairOptions::default()).unwrap();
        assert_eq!(check_indexes(&seg, true).unwrap(), vec![]);
        if !problems.is_empty() {
            let len = std::fs::metadata(&seg.log).unwrap().len();
            let (rebuilt, _) = rebuild_indexes(&seg.log, 0, len, 4096).unwrap();
            assert_eq!(std::fs::read(&index).unwrap(), rebuilt);
        }
        let o = run(&["verify-crc", data_s]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
        assert_eq!(read_partition(&part).len(), 250);
        // --from-offset seeks with the index and still finds every record.
        let o = run(&[
            "dump-segment",
            "--records",
            "--from-offset",
            "230",
            "--max-batches",
            "1",
            part.to_str().unwrap(),
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        assert!(
            text(&o.stdout).contains("baseOffset: 230 "),
            "{}",
            text(&o.stdout)
        );
    }
}

/// A partition folder `<root>/<name>/t-0` with the empty index files of
/// segment 0 (what klog and a broker create with the segment).
fn segment_name_dir(root: &Path, name: &str) -> PathBuf {
    let dir = root.join(name).join("t-0");
    std::fs::create_dir_all(&dir).unwrap();
    for ext in ["index", "timeindex"] {
        std::fs::write(dir.join(format!("00000000000000000000.{ext}")), b"").unwrap();
    }
    dir
}

/// Whether `nobody` can run the test's binaries (the checkout may sit in a
/// folder only root can enter); when it cannot, the permission cases are
/// skipped with a note instead of failing for a reason unrelated to klog.
fn nobody_can_run() -> bool {
    if unsafe { libc::geteuid() } != 0 {
        return true;
    }
    let probe = |c: &mut Command| {
        as_unprivileged(c)
            .output()
            .is_ok_and(|o| o.status.success())
    };
    let ok = probe(klog().arg("--version"))
        && probe(Command::new(std::env::current_exe().unwrap()).arg("--list"));
    if !ok {
        eprintln!(
            "permission cases skipped: user nobody cannot run the binaries under this checkout"
        );
    }
    ok
}

/// Run klog as `nobody` when we are root (root reads through chmod 000).
fn as_unprivileged(c: &mut Command) -> &mut Command {
    if unsafe { libc::geteuid() } == 0 {
        c.uid(65534).gid(65534);
    }
    c
}

/// Open up `path` and its ancestors inside the temporary folder, so that
/// `nobody` can reach it.
fn world_traversable(tmp: &Path) {
    std::fs::set_permissions(tmp, std::fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn hostile_inputs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    let mut rng = XorShift(7);
    let clean = {
        let data = root.join("clean");
        produce_lines(data.to_str().unwrap(), 0..40);
        std::fs::read(data.join("t-0/00000000000000000000.log")).unwrap()
    };
    let mut huge = 0i64.to_be_bytes().to_vec();
    huge.extend_from_slice(&i32::MAX.to_be_bytes());
    huge.extend_from_slice(&[0, 0, 0, 0, 2]);
    huge.extend_from_slice(&[0; 60]);
    let mut negative = 0i64.to_be_bytes().to_vec();
    negative.extend_from_slice(&(-5i32).to_be_bytes());
    negative.extend_from_slice(&[2; 60]);
    let random: Vec<u8> = (0..4096).map(|_| rng.next() as u8).collect();
    let cases: Vec<(&str, Vec<u8>, i32, &str)> = vec![
        ("zeros.log", vec![0; 4096], 0, "warning trailing_zeros"),
        ("random.log", random, 1, "is it a Kafka log segment?"),
        (
            "notes.txt",
            b"not a log, just text\n".to_vec(),
            1,
            "torn_tail",
        ),
        ("huge-length.log", huge, 1, "torn_tail"),
        ("negative-length.log", negative, 1, "size_too_small"),
        ("empty.log", Vec::new(), 0, "ok: checked 1 file, 0 batches"),
        (
            "truncated.log",
            clean[..clean.len() - 7].to_vec(),
            1,
            "torn_tail",
        ),
    ];
    for (name, bytes, code, expect) in &cases {
        let path = root.join(name);
        std::fs::write(&path, bytes).unwrap();
        let o = run(&["verify-crc", path.to_str().unwrap()]);
        let out = text(&o.stdout) + &text(&o.stderr);
        assert_eq!(o.status.code(), Some(*code), "{name}: {out}");
        assert!(out.contains(expect), "{name}: {out}");
        assert!(!out.contains("panicked"), "{name}: {out}");
        // Every reader survives it too.
        for cmd in ["dump-segment", "stats"] {
            let o = run(&[cmd, path.to_str().unwrap()]);
            let err = text(&o.stderr);
            assert!(
                matches!(o.status.code(), Some(0..=2)),
                "{cmd} {name}: {err}"
            );
            assert!(!err.contains("panicked"), "{cmd} {name}: {err}");
        }
    }

    // An offset index given to verify-crc is read as a log (and fails);
    // dump-segment reads it as an index by its name.
    let index = root.join("clean/t-0/00000000000000000000.index");
    assert!(std::fs::metadata(&index).unwrap().len() >= 8);
    let o = run(&["verify-crc", index.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stdout));
    assert!(text(&o.stdout).contains("is it a Kafka log segment?"));
    let o = run(&["dump-segment", index.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(text(&o.stdout).contains("offset: "), "{}", text(&o.stdout));

    // A partition 200 folders down: klog reads only the path it is given.
    let mut deep = root.join("deep");
    for _ in 0..200 {
        deep.push("d");
    }
    let part = deep.join("t-0");
    std::fs::create_dir_all(&part).unwrap();
    std::fs::write(part.join("00000000000000000000.log"), &clean).unwrap();
    // It has no index files: the batches verify, the indexes are reported
    // missing (a warning: a broker rebuilds them on load).
    let o = run(&["verify-crc", part.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(
        text(&o.stdout).contains("index_missing"),
        "{}",
        text(&o.stdout)
    );
    let o = run(&["verify-crc", "--no-index-checks", part.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let o = run(&["verify-crc", root.join("deep").to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("holds no partition folders"));

    // Symlink loops: a link to itself, and links back up from a partition.
    let selfloop = root.join("selfloop.log");
    std::os::unix::fs::symlink(&selfloop, &selfloop).unwrap();
    let o = run(&["verify-crc", selfloop.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        text(&o.stderr).contains("symbolic links"),
        "{}",
        text(&o.stderr)
    );
    let looped = segment_name_dir(root, "looped");
    std::fs::write(looped.join("00000000000000000000.log"), &clean).unwrap();
    std::os::unix::fs::symlink("..", looped.join("up")).unwrap();
    std::os::unix::fs::symlink("../t-0", looped.join("self")).unwrap();
    for cmd in ["verify-crc", "stats", "info", "dump-segment"] {
        // dump-segment takes a partition folder, the others the data directory.
        let path = match cmd {
            "dump-segment" => looped.clone(),
            _ => root.join("looped"),
        };
        let o = run(&[cmd, path.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{cmd}: {}", text(&o.stderr));
    }

    // A segment that is a symlink is read through its link.
    let linked = segment_name_dir(root, "linked");
    std::os::unix::fs::symlink(
        root.join("clean/t-0/00000000000000000000.log"),
        linked.join("00000000000000000000.log"),
    )
    .unwrap();
    let o = run(&["verify-crc", linked.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0));
    assert!(
        text(&o.stderr).contains("checked 1 file"),
        "{}",
        text(&o.stderr)
    );
    // A dangling one is an error finding, not a silently shorter log (and
    // not the end of the run: the rest is still checked).
    let dangling = segment_name_dir(root, "dangling");
    std::os::unix::fs::symlink(
        root.join("nowhere.log"),
        dangling.join("00000000000000000000.log"),
    )
    .unwrap();
    let o = run(&["verify-crc", dangling.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stdout)
            .contains("error not_regular_file is a symlink that does not lead to a file"),
        "{}",
        text(&o.stdout)
    );

    // Unreadable files and folders: exit 2 naming the path and the errno.
    if !nobody_can_run() {
        return;
    }
    world_traversable(root);
    let locked = segment_name_dir(root, "unreadable");
    let seg = locked.join("00000000000000000000.log");
    std::fs::write(&seg, &clean).unwrap();
    std::fs::set_permissions(
        root.join("unreadable"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::fs::set_permissions(&seg, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut c = klog();
    let o = as_unprivileged(&mut c)
        .args(["verify-crc", locked.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stdout));
    let err = text(&o.stderr);
    assert!(
        err.contains("00000000000000000000.log: open: Permission denied"),
        "{err}"
    );
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o000)).unwrap();
    let mut c = klog();
    let o = as_unprivileged(&mut c)
        .args(["verify-crc", root.join("unreadable").to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(err.contains("list directory: Permission denied"), "{err}");
    std::fs::set_permissions(&locked, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Run by `repair_in_a_read_only_directory` in a child process (as
/// `nobody` when the test runs as root): plan and execute the repair of the
/// partition in `KLOG_TEST_REPAIR`, print the outcome.
#[test]
fn repair_child() {
    let Some(dir) = std::env::var_os("KLOG_TEST_REPAIR") else {
        return;
    };
    let p = Partition::open(Path::new(&dir)).unwrap();
    let plan = plan(&p, &RepairOptions::default()).unwrap();
    match execute(&plan, &RepairOptions::default()) {
        Ok(_) => println!("REPAIR-OK"),
        Err(e) => println!("REPAIR-ERROR {e}"),
    }
}

fn repair_as_unprivileged(part: &Path) -> String {
    let mut c = Command::new(std::env::current_exe().unwrap());
    c.args([
        "--exact",
        "crash::repair_child",
        "--nocapture",
        "--test-threads=1",
    ])
    .env("KLOG_TEST_REPAIR", part);
    let o = as_unprivileged(&mut c).output().unwrap();
    let out = text(&o.stdout);
    assert!(
        out.contains("REPAIR-"),
        "the repair child did not run: {out}{}",
        text(&o.stderr)
    );
    out
}

#[test]
fn repair_in_a_read_only_directory() {
    if !nobody_can_run() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    world_traversable(tmp.path());
    let data = tmp.path().join("data");
    let part = data.join("t-0");
    produce_lines(data.to_str().unwrap(), 0..40);
    std::fs::set_permissions(&data, std::fs::Permissions::from_mode(0o755)).unwrap();
    let log = last_log(&part);
    let clean = std::fs::read(&log).unwrap();
    // A torn last batch: its first 30 bytes, written twice over.
    let mut torn = clean.clone();
    torn.extend_from_slice(&clean[..30]);
    std::fs::write(&log, &torn).unwrap();
    let sidecar = PathBuf::from(format!("{}.cut-{}", log.display(), clean.len()));

    // 1. The folder cannot be written: nothing changes.
    std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o555)).unwrap();
    let out = repair_as_unprivileged(&part);
    assert!(
        out.contains("REPAIR-ERROR") && out.contains("Permission denied"),
        "{out}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), torn, "the log changed");
    assert!(!sidecar.exists());

    // 2. The folder can be written, the log cannot: the cut bytes are saved
    //    to the sidecar, the truncation fails, the log is untouched.
    std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o777)).unwrap();
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o444)).unwrap();
    let out = repair_as_unprivileged(&part);
    assert!(
        out.contains("REPAIR-ERROR") && out.contains("Permission denied"),
        "{out}"
    );
    assert_eq!(std::fs::read(&log).unwrap(), torn, "the log changed");
    assert_eq!(std::fs::read(&sidecar).unwrap(), &clean[..30]);

    // 3. Run again with the rights: the sidecar is kept, the log is cut.
    std::fs::set_permissions(&log, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::set_permissions(&part, std::fs::Permissions::from_mode(0o755)).unwrap();
    let plan = plan(&Partition::open(&part).unwrap(), &RepairOptions::default()).unwrap();
    execute(&plan, &RepairOptions::default()).unwrap();
    assert_eq!(std::fs::read(&log).unwrap(), clean);
    assert_eq!(std::fs::read(&sidecar).unwrap(), &clean[..30]);
    let o = run(&["verify-crc", data.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
}
