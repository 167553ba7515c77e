//! TestEnv: runs the klog binary in a temporary copy of the fixtures with a
//! pinned environment, and compares output with golden files byte for byte.
//! `UPDATE_GOLDEN=1 cargo test` rewrites the golden files (review the diff).

use std::path::{Path, PathBuf};
use std::process::Output;

pub fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

pub struct TestEnv {
    pub dir: tempfile::TempDir,
}

impl TestEnv {
    /// A temporary folder holding a copy of `fixtures/` (as `fixtures/`),
    /// without `fixtures/kafka-real/` (a real cluster's directories, which
    /// `kafka_real.rs` copies itself). The index files listed in
    /// `fixtures/broker/PREALLOCATED` get back the size a broker gives them
    /// (see `restore_preallocated`).
    pub fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        // kafka-real/ holds thousands of files, which kafka_real.rs copies itself.
        copy_dir_except(
            &repo().join("fixtures"),
            &dir.path().join("fixtures"),
            &["kafka-real"],
        );
        restore_preallocated(&dir.path().join("fixtures/broker"));
        TestEnv { dir }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    pub fn cmd(&self) -> assert_cmd::Command {
        let mut c = assert_cmd::Command::cargo_bin("klog").unwrap();
        c.current_dir(self.dir.path())
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env("TZ", "UTC");
        c
    }

    /// Run klog with `args` (and `stdin`), returning the output.
    pub fn run(&self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut c = self.cmd();
        c.args(args);
        if let Some(s) = stdin {
            c.write_stdin(s.to_string());
        }
        c.output().unwrap()
    }
}

/// A broker preallocates every new `.index`/`.timeindex` to
/// `segment.index.bytes` (Kafka's `AbstractIndex`), so an active segment's
/// index files are 10 MiB of which only the first entries are used. Git
/// cannot store sparse files, so `fixtures/broker` holds their used part and
/// `PREALLOCATED` lists `path size` per file (`#` lines are comments); this
/// extends each copy to its size with zero bytes (`File::set_len`, sparse).
pub fn restore_preallocated(broker: &Path) {
    let Ok(manifest) = std::fs::read_to_string(broker.join("PREALLOCATED")) else {
        return;
    };
    for line in manifest
        .lines()
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
    {
        let (file, size) = line.rsplit_once(' ').unwrap();
        let size: u64 = size.parse().unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(broker.join(file))
            .unwrap_or_else(|e| panic!("PREALLOCATED lists {file}: {e}"));
        assert!(
            f.metadata().unwrap().len() <= size,
            "{file} is larger than {size}"
        );
        f.set_len(size).unwrap();
    }
}

pub fn copy_dir(from: &Path, to: &Path) {
    copy_dir_except(from, to, &[]);
}

/// [`copy_dir`], leaving out the entries of `from` named in `skip`.
pub fn copy_dir_except(from: &Path, to: &Path, skip: &[&str]) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        if skip.iter().any(|s| entry.file_name() == *s) {
            continue;
        }
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_dir(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// Every file under `dir` with its bytes, the lock file left out (to
/// show that a refused write changed nothing).
pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    walkdir::WalkDir::new(dir)
        .sort_by_file_name()
        .into_iter()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().is_file() && e.file_name() != ".lock")
        .map(|e| (e.path().to_path_buf(), std::fs::read(e.path()).unwrap()))
        .collect()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8(o.stdout.clone()).unwrap()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8(o.stderr.clone()).unwrap()
}

/// Compare `actual` with `tests/golden/<name>` byte for byte.
pub fn golden(name: &str, actual: &str) {
    let path = repo().join("tests/golden").join(name);
    if std::env::var_os("UPDATE_GOLDEN").is_some() {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(&path, actual).unwrap();
        return;
    }
    let expected = std::fs::read_to_string(&path).unwrap_or_else(|_| {
        panic!(
            "missing golden file {}; run with UPDATE_GOLDEN=1",
            path.display()
        )
    });
    if expected != actual {
        let mut diff = String::new();
        let (e, a): (Vec<_>, Vec<_>) = (expected.lines().collect(), actual.lines().collect());
        for i in 0..e.len().max(a.len()) {
            match (e.get(i), a.get(i)) {
                (Some(x), Some(y)) if x == y => {}
                (x, y) => {
                    diff.push_str(&format!(
                        "line {}:\n- {}\n+ {}\n",
                        i + 1,
                        x.unwrap_or(&""),
                        y.unwrap_or(&"")
                    ));
                }
            }
        }
        panic!(
            "{} differs from the output (rerun with UPDATE_GOLDEN=1 to accept, then review the diff):\n{diff}",
            path.display()
        );
    }
}

/// Run, assert the exit code and empty stderr, compare stdout with a golden file.
pub fn check_golden(env: &TestEnv, args: &[&str], code: i32, name: &str) -> Output {
    let o = env.run(args, None);
    assert_eq!(
        o.status.code(),
        Some(code),
        "klog {args:?}: stderr: {}",
        stderr(&o)
    );
    golden(&format!("{name}.stdout"), &stdout(&o));
    let err = stderr(&o);
    let err_path = repo().join("tests/golden").join(format!("{name}.stderr"));
    if !err.is_empty() || err_path.exists() {
        golden(&format!("{name}.stderr"), &err);
    }
    o
}

/// A second process holding `data_dir`'s lock until dropped (it runs this
/// test binary's `produce::lock_holder`).
pub struct LockHolder(
    std::process::Child,
    #[allow(dead_code)] std::io::BufReader<std::process::ChildStdout>,
);

impl LockHolder {
    pub fn new(data_dir: &Path) -> Self {
        use std::io::{BufRead, BufReader};
        let mut child = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "produce::lock_holder",
                "--nocapture",
                "--test-threads=1",
            ])
            .env("KLOG_TEST_HOLD_LOCK", data_dir)
            .stdin(std::process::Stdio::piped())
            .stdout(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let mut out = BufReader::new(child.stdout.take().unwrap());
        let mut line = String::new();
        while !line.contains("LOCKED") {
            line.clear();
            assert!(
                out.read_line(&mut line).unwrap() > 0,
                "the lock holder exited early"
            );
        }
        LockHolder(child, out)
    }
}

impl Drop for LockHolder {
    fn drop(&mut self) {
        drop(self.0.stdin.take());
        let _ = self.0.wait();
    }
}

/// Bytes from the independent encoder `fixtures/encoder.py`: `script` is
/// Python that sets `out` (bytes) with the encoder's functions in scope.
pub fn encoded(script: &str) -> Vec<u8> {
    let fixtures = repo().join("fixtures").display().to_string();
    let program = format!(
        "import sys\nsys.path.insert(0, {fixtures:?})\nfrom encoder import *\n{script}\nsys.stdout.buffer.write(out)\n"
    );
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(program)
        .output()
        .expect("python3 runs fixtures/encoder.py");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    o.stdout
}

/// Write `bytes` as the first segment of partition folder `partition` under `dir`.
pub fn write_segment(dir: &Path, partition: &str, bytes: &[u8]) {
    let p = dir.join(partition);
    std::fs::create_dir_all(&p).unwrap();
    std::fs::write(p.join("00000000000000000000.log"), bytes).unwrap();
}

/// (kind, severity, offset) of every finding of a JSON document (-1: no offset).
pub fn findings(doc: &serde_json::Value) -> Vec<(String, String, i64)> {
    doc["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["offset"].as_i64().unwrap_or(-1),
            )
        })
        .collect()
}

/// stdout as klog's one JSON document: an object whose first fields are
/// `"schema_version": 1` and `"command": command`, then the command's data.
pub fn document(o: &Output, command: &str) -> serde_json::Value {
    let text = stdout(o);
    let v: serde_json::Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("stdout is not one JSON document ({e}): {text}"));
    let keys: Vec<&str> = v
        .as_object()
        .unwrap_or_else(|| panic!("the document is not an object: {text}"))
        .keys()
        .map(String::as_str)
        .take(2)
        .collect();
    assert_eq!(keys, ["schema_version", "command"], "{text}");
    assert_eq!(v["schema_version"], 1, "{text}");
    assert_eq!(v["command"], command, "{text}");
    v
}

/// The array `field` of klog's JSON document of `command` on stdout.
pub fn document_rows(o: &Output, command: &str, field: &str) -> Vec<serde_json::Value> {
    document(o, command)[field]
        .as_array()
        .unwrap_or_else(|| panic!("{command}: no array {field:?} in {}", stdout(o)))
        .clone()
}

/// stdout as `--format jsonl`: the header line
/// `{"type":"header","schema_version":1,"command":command}`, then one
/// object per line, each with a `"type"` (returned, header left out).
pub fn jsonl(o: &Output, command: &str) -> Vec<serde_json::Value> {
    let text = stdout(o);
    let mut lines = text.lines().map(|l| {
        serde_json::from_str::<serde_json::Value>(l)
            .unwrap_or_else(|e| panic!("not a JSON line ({e}): {l}"))
    });
    let header = lines.next().unwrap_or_else(|| panic!("no header line"));
    assert_eq!(
        header,
        serde_json::json!({"type": "header", "schema_version": 1, "command": command})
    );
    lines
        .map(|v| {
            assert!(v["type"].is_string(), "a line without a type: {v}");
            v
        })
        .collect()
}

/// The entries of `klog dump-segment --format json` (one document), each an
/// object whose first field is its `"type"`.
pub fn dump_entries(o: &Output) -> Vec<serde_json::Value> {
    let entries = document_rows(o, "dump-segment", "entries");
    for e in &entries {
        assert_eq!(
            e.as_object()
                .and_then(|m| m.keys().next())
                .map(String::as_str),
            Some("type"),
            "an entry's first field is its type: {e}"
        );
    }
    entries
}

/// The `batch` entries of `klog dump-segment --format json`.
pub fn dump_batches(o: &Output) -> Vec<serde_json::Value> {
    dump_entries(o)
        .into_iter()
        .filter(|e| e["type"] == "batch")
        .collect()
}

/// RFC 4180: records of fields; a quoted field may hold commas, quotes
/// (doubled) and line breaks.
pub fn parse_csv(text: &str) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        match (quoted, c) {
            (true, '"') if chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            (true, '"') => quoted = false,
            (true, c) => field.push(c),
            (false, '"') if field.is_empty() => quoted = true,
            (false, ',') => record.push(std::mem::take(&mut field)),
            (false, '\n') => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
            }
            (false, c) => field.push(c),
        }
    }
    assert!(!quoted, "an unterminated quoted field: {text}");
    assert!(
        field.is_empty() && record.is_empty(),
        "CSV ends with a line break: {text:?}"
    );
    records
}
/// `len` pseudo-random bytes (xorshift64 from `seed`): deterministic junk.
pub fn junk(len: usize, seed: u64) -> Vec<u8> {
    let mut x = seed;
    (0..len)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            x as u8
        })
        .collect()
}

/// A JSON value as its CSV cell: null empty, strings as they are, other
/// values as JSON.
pub fn cell(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::Null => String::new(),
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The rows of a CSV table with a header line, each a map from field name
/// to cell.
pub fn csv_objects(text: &str) -> Vec<std::collections::BTreeMap<String, String>> {
    let rows = parse_csv(text);
    let (header, rows) = rows
        .split_first()
        .unwrap_or_else(|| panic!("no CSV header: {text:?}"));
    rows.iter()
        .map(|r| {
            assert_eq!(r.len(), header.len(), "{r:?}");
            header.iter().cloned().zip(r.iter().cloned()).collect()
        })
        .collect()
}

/// The batches `klog dump-segment --format json --from-offset FROM` shows
/// in partition folder `partition` that start at `from` or after: what a
/// writer appended there, read back from the log.
pub fn batches_from_offset(env: &TestEnv, partition: &str, from: i64) -> Vec<serde_json::Value> {
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "--from-offset",
            &from.to_string(),
            partition,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    dump_batches(&o)
        .into_iter()
        .filter(|b| b["base_offset"].as_i64().unwrap() >= from)
        .collect()
}

/// The log end of partition folder `partition` (one past its last batch's
/// last offset), as `klog dump-segment --format json` shows it.
pub fn dumped_log_end(env: &TestEnv, partition: &str) -> i64 {
    let o = env.run(&["dump-segment", "--format", "json", partition], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    dump_batches(&o)
        .last()
        .map_or(0, |b| b["last_offset"].as_i64().unwrap() + 1)
}

/// Commit `offset` for `group` on orders-0 of the copy of fixtures/groups in
/// `env`, through klog's append path (`klog commit`).
pub fn commit_orders_0(env: &TestEnv, group: &str, offset: usize) -> Output {
    let offset = offset.to_string();
    env.run(
        &[
            "commit",
            "fixtures/groups",
            "--group",
            group,
            "--topic",
            "orders",
            "--partition",
            "0",
            "--offset",
            &offset,
            "--now-ms",
            "1700000050000",
        ],
        None,
    )
}

/// What `verify-crc --deep` and `transactions` each say of hanging
/// transactions, for the one-rule comparison.
#[derive(Debug, PartialEq, Eq)]
pub struct HangingAnswer {
    /// (partition folder, producer id) of each `hanging_transaction`.
    pub hanging: std::collections::BTreeSet<(String, i64)>,
    /// The details of the `hanging_not_judged` notes.
    pub not_judged: Vec<String>,
}

/// The `hanging_transaction` and `hanging_not_judged` findings of a JSON
/// document (the partition is the folder of the finding's file).
pub fn hanging_answer(doc: &serde_json::Value) -> HangingAnswer {
    let findings = doc["findings"].as_array().unwrap();
    let of_kind = |kind: &'static str| findings.iter().filter(move |f| f["kind"] == kind);
    HangingAnswer {
        hanging: of_kind("hanging_transaction")
            .map(|f| {
                let file = Path::new(f["file"].as_str().unwrap());
                let folder = file.parent().unwrap().file_name().unwrap();
                (
                    folder.to_string_lossy().into_owned(),
                    f["producer_id"].as_i64().unwrap(),
                )
            })
            .collect(),
        not_judged: of_kind("hanging_not_judged")
            .map(|f| f["detail"].as_str().unwrap().to_string())
            .collect(),
    }
}

/// Run `verify-crc --deep` and `transactions` (JSON) with `now` on
/// `paths` through `run`, require them to give the same answer about
/// hanging transactions (and `transactions`' find-hanging view to list
/// the same ones), and return it.
pub fn one_hanging_answer(
    run: impl Fn(&[&str]) -> Output,
    paths: &[&str],
    now: Option<i64>,
) -> HangingAnswer {
    let now = now.map(|n| n.to_string());
    let mut common = vec!["--format", "json"];
    if let Some(now) = &now {
        common.extend(["--now-ms", now.as_str()]);
    }
    common.extend_from_slice(paths);
    let verify = run(&[&["verify-crc", "--deep"][..], &common].concat());
    let verify = hanging_answer(&document(&verify, "verify-crc"));
    let o = run(&[&["transactions"][..], &common].concat());
    let v = document(&o, "transactions");
    let transactions = hanging_answer(&v);
    assert_eq!(verify, transactions, "{paths:?} at {now:?}");
    // find-hanging's view (--find-hanging prints these) agrees.
    let listed: std::collections::BTreeSet<(String, i64)> = v["find_hanging"]["candidates"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|c| c["hanging"] == true)
        .map(|c| {
            (
                format!("{}-{}", c["topic"].as_str().unwrap(), c["partition"]),
                c["producer_id"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(listed, transactions.hanging, "{paths:?} at {now:?}");
    // Said at most once per run, and only when nothing is called hanging.
    assert!(transactions.not_judged.len() <= 1, "{transactions:?}");
    assert!(
        transactions.not_judged.is_empty() || transactions.hanging.is_empty(),
        "{transactions:?}"
    );
    assert_eq!(
        v["find_hanging"]["not_judged"].is_null(),
        now.is_some() && v["coordinator"].is_array(),
        "{paths:?} at {now:?}"
    );
    transactions
}

/// The status of group `group`'s lag cell (`data-status`) on the report
/// page `html`, for each of its cells in page order.
pub fn report_lag_statuses(html: &str, group: &str) -> Vec<String> {
    let needle = format!("data-group=\"{group}\"");
    html.match_indices(&needle)
        .filter_map(|(at, _)| {
            let tag = &html[at..at + html[at..].find('>')?];
            let s = tag.find("data-status=\"")? + "data-status=\"".len();
            Some(tag[s..s + tag[s..].find('"')?].to_string())
        })
        .collect()
}
