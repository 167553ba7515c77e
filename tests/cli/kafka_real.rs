//! klog against real Kafka: `fixtures/kafka-real/<version>/` holds, for
//! each Apache Kafka release of the oracle matrix, the log directories of a
//! 3-node cluster and Kafka's own answers about them (written by
//! `tests/kafka/run.sh --kafka VERSION`; see fixtures/kafka-real/README.md).
//! Every expected value here comes from those recorded answers, never from
//! klog. Each test runs on every release and names the release that failed.
//!
//! `KLOG_KAFKA_REAL=DIR` points the tests at one other tree of the same
//! shape instead (`tests/kafka/run.sh --check` regenerates one and runs
//! these tests on it).
//!
//! Where klog and Kafka disagree, Kafka is right: every comparison here is
//! expected to pass (a healthy cluster's directories verify with no error
//! and no warning, `--fail-on warning`).

use std::collections::BTreeMap;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{copy_dir, document, dump_entries, one_hanging_answer, repo, stderr, stdout};

/// The fixture trees to compare: `KLOG_KAFKA_REAL` alone when set, else
/// every release folder of `fixtures/kafka-real/`, in name order.
pub fn trees() -> Vec<PathBuf> {
    if let Some(one) = std::env::var_os("KLOG_KAFKA_REAL") {
        return vec![PathBuf::from(one)];
    }
    let root = repo().join("fixtures/kafka-real");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected").is_dir())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no release under {}", root.display());
    out
}

/// Run `test` on every release's tree (the shared copy, see
/// [`Real::shared`]); each failure names its release, and one release
/// failing does not keep the others from running.
pub(crate) fn each_release(test: impl Fn(&Real)) {
    each_release_in(Real::shared, test)
}

fn each_release_in(open: fn(&Path) -> Real, test: impl Fn(&Real)) {
    each_tree(|tree| test(&open(tree)))
}

/// Run `test` on every release's tree as committed; each failure names its
/// release (from `expected/manifest.json`), and one release failing does
/// not keep the others from running.
pub fn each_tree(test: impl Fn(&Path)) {
    let mut failed = Vec::new();
    for tree in trees() {
        if let Err(e) = catch_unwind(AssertUnwindSafe(|| test(&tree))) {
            let why = e
                .downcast_ref::<String>()
                .cloned()
                .or_else(|| e.downcast_ref::<&str>().map(|s| s.to_string()))
                .unwrap_or_default();
            let manifest: Value = serde_json::from_str(
                &std::fs::read_to_string(tree.join("expected/manifest.json")).unwrap_or_default(),
            )
            .unwrap_or_default();
            let release = manifest["kafka"].as_str().unwrap_or("?");
            failed.push(format!("Kafka {release} ({}): {why}", tree.display()));
        }
    }
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}

/// One release's tree, copied with the preallocated indexes given back
/// their real size (git keeps only their used part), and its answers.
pub(crate) struct Real {
    /// The copy of the broker folders klog runs in.
    pub(crate) root: PathBuf,
    /// A private copy's folder (removed on drop); `None` for the shared copy.
    _private: Option<tempfile::TempDir>,
    /// The committed tree: `expected/` is read from here.
    pub(crate) source: PathBuf,
    /// The release, from `expected/manifest.json`.
    pub(crate) release: String,
    /// `expected/manifest.json`: the release, its mode (`kraft` or
    /// `zookeeper`), the partition count of `__consumer_offsets`, the
    /// scenarios the driver ran and the optional answers recorded.
    manifest: Value,
}

/// Copy the broker folders (and `crash/`, the crash scenario's) and
/// `index-sizes.tsv` of `source` into `to`, then give each index listed
/// there its real size.
pub(crate) fn copy_tree(source: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(source).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if name.starts_with("broker-") || name == "crash" {
            copy_dir(&source.join(&name), &to.join(&name));
        }
    }
    let sizes = std::fs::read_to_string(source.join("index-sizes.tsv")).unwrap();
    for line in sizes.lines().filter(|l| !l.starts_with('#')) {
        let (path, size) = line.split_once('\t').unwrap();
        let f = std::fs::OpenOptions::new()
            .write(true)
            .open(to.join(path))
            .unwrap();
        f.set_len(size.parse().unwrap()).unwrap();
    }
}

impl Real {
    fn with_root(source: &Path, root: PathBuf, private: Option<tempfile::TempDir>) -> Self {
        let manifest: Value = serde_json::from_str(
            &std::fs::read_to_string(source.join("expected/manifest.json")).unwrap(),
        )
        .unwrap();
        let release = manifest["kafka"].as_str().unwrap().to_string();
        Real {
            root,
            _private: private,
            source: source.to_path_buf(),
            release,
            manifest,
        }
    }

    /// A private copy, for a test that writes into it.
    fn private(source: &Path) -> Self {
        let dir = tempfile::tempdir().unwrap();
        copy_tree(source, dir.path());
        let root = dir.path().to_path_buf();
        Real::with_root(source, root, Some(dir))
    }

    /// The copy every read-only test of this process shares (copying a
    /// tree of thousands of small files for each test cost minutes): made
    /// once per process under Cargo's CARGO_TARGET_TMPDIR, replacing what
    /// an earlier run left there. klog's reading commands never write.
    fn shared(source: &Path) -> Self {
        use std::hash::{Hash, Hasher};
        static MADE: std::sync::Mutex<BTreeMap<PathBuf, PathBuf>> =
            std::sync::Mutex::new(BTreeMap::new());
        let mut made = MADE.lock().unwrap_or_else(|e| e.into_inner());
        let root = made
            .entry(source.to_path_buf())
            .or_insert_with(|| {
                let mut h = std::collections::hash_map::DefaultHasher::new();
                source.hash(&mut h);
                let name = source.file_name().unwrap().to_string_lossy();
                let root = Path::new(env!("CARGO_TARGET_TMPDIR"))
                    .join("kafka-real")
                    .join(format!("{name}-{:016x}", h.finish()));
                if root.exists() {
                    std::fs::remove_dir_all(&root).unwrap();
                }
                copy_tree(source, &root);
                root
            })
            .clone();
        drop(made);
        Real::with_root(source, root, None)
    }

    /// The driver ran this scenario on this release (the manifest says so).
    fn has(&self, scenario: &str) -> bool {
        self.manifest["scenarios"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == scenario)
    }

    /// This release's tree has these optional answers (`metadata-shell`).
    pub(crate) fn answers(&self, what: &str) -> bool {
        self.manifest["answers"]
            .as_array()
            .unwrap()
            .iter()
            .any(|s| s == what)
    }

    /// A KRaft cluster (else ZooKeeper mode: no `__cluster_metadata`).
    pub(crate) fn kraft(&self) -> bool {
        self.manifest["mode"] == "kraft"
    }

    /// The folders named `<topic>-<n>` in a broker's log directory, sorted.
    fn folders_of(&self, broker: &str, topic: &str) -> Vec<String> {
        let mut out: Vec<String> = std::fs::read_dir(self.path(broker))
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| {
                n.strip_prefix(topic)
                    .and_then(|r| r.strip_prefix('-'))
                    .is_some_and(|p| p.parse::<u32>().is_ok())
            })
            .map(|n| format!("{broker}/{n}"))
            .collect();
        out.sort();
        out
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub(crate) fn run(&self, args: &[&str]) -> Output {
        assert_cmd::Command::cargo_bin("klog")
            .unwrap()
            .current_dir(&self.root)
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env("TZ", "UTC")
            .args(args)
            .output()
            .unwrap()
    }

    /// Run klog (ARGS[0] the command, with `--format json`), require exit
    /// 0, return its one JSON document.
    pub(crate) fn json(&self, args: &[&str]) -> Value {
        let o = self.run(args);
        assert_eq!(
            o.status.code(),
            Some(0),
            "klog {args:?}: stderr: {}",
            stderr(&o)
        );
        document(&o, args[0])
    }

    /// Run `klog dump-segment --format json ARGS`, require exit 0, return
    /// its entries (batches or index entries).
    fn dump(&self, args: &[&str]) -> Vec<Value> {
        let mut all = vec!["dump-segment", "--format", "json"];
        all.extend_from_slice(args);
        let o = self.run(&all);
        assert_eq!(
            o.status.code(),
            Some(0),
            "klog {all:?}: stderr: {}",
            stderr(&o)
        );
        dump_entries(&o)
    }

    /// `klog dump-segment --format json` of many files in one run (a
    /// process per file costs more than the comparisons): each file's
    /// entries, by the path given.
    fn dump_many(&self, paths: &[String]) -> BTreeMap<String, Vec<Value>> {
        let mut out: BTreeMap<String, Vec<Value>> =
            paths.iter().map(|p| (p.clone(), Vec::new())).collect();
        for chunk in paths.chunks(400) {
            let mut args = vec!["dump-segment", "--format", "json"];
            args.extend(chunk.iter().map(String::as_str));
            let o = self.run(&args);
            assert_eq!(
                o.status.code(),
                Some(0),
                "klog dump-segment: {}",
                stderr(&o)
            );
            for e in dump_entries(&o) {
                let file = e["file"].as_str().expect("an entry names its file");
                out.get_mut(file)
                    .unwrap_or_else(|| panic!("an entry of a file not asked for: {file}"))
                    .push(e);
            }
        }
        out
    }

    /// Every file under the broker folders whose name ends in `suffix`,
    /// relative to the tree (`broker-N/...`), sorted.
    fn files(&self, suffix: &str, internal: Option<bool>) -> Vec<String> {
        let mut out = Vec::new();
        for b in brokers() {
            for f in files_with(&self.path(b), suffix) {
                let rel = f
                    .strip_prefix(&self.root)
                    .unwrap()
                    .to_str()
                    .unwrap()
                    .to_string();
                if internal.is_none_or(|i| rel.contains("/__") == i) {
                    out.push(rel);
                }
            }
        }
        out
    }

    fn expected(&self, rel: &str) -> String {
        std::fs::read_to_string(self.source.join("expected").join(rel)).unwrap()
    }

    fn expected_json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.expected(rel)).unwrap()
    }
}

fn brokers() -> [&'static str; 3] {
    ["broker-1", "broker-2", "broker-3"]
}

/// Kafka's consumer groups (classic and consumer protocol) as recorded
/// through the Admin API: group -> (topic, partition) -> entry.
fn kafka_groups(r: &Real) -> BTreeMap<String, BTreeMap<(String, i64), Value>> {
    let mut out = BTreeMap::new();
    for g in r.expected_json("groups.json").as_array().unwrap() {
        if g["type"] == "Share" {
            continue;
        }
        let mut parts = BTreeMap::new();
        for p in g["offsets"].as_array().unwrap() {
            parts.insert(
                (
                    p["topic"].as_str().unwrap().to_string(),
                    p["partition"].as_i64().unwrap(),
                ),
                p.clone(),
            );
        }
        out.insert(g["group"].as_str().unwrap().to_string(), parts);
    }
    out
}

/// The rows of a `kafka-consumer-groups --describe` table, by column name.
fn describe_rows(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = match lines.next() {
        Some(h) => h.split_whitespace().map(str::to_string).collect(),
        None => return Vec::new(),
    };
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split_whitespace().map(str::to_string))
                .collect()
        })
        .collect()
}

// ---- verify-crc -------------------------------------------------------------

#[test]
fn verify_crc_clean_on_the_cleanly_stopped_brokers() {
    each_release(|r| {
        for b in ["broker-1", "broker-2"] {
            let o = r.run(&["verify-crc", b]);
            assert_eq!(
            o.status.code(),
            Some(0),
            "klog verify-crc {b}: Kafka loaded this directory and served from it; klog says:\n{}{}",
            stdout(&o),
            stderr(&o)
        );
        }
    });
}

/// Broker 3 was killed with SIGKILL: its active segments keep their
/// preallocated indexes. Kafka's DumpLogSegments --index-sanity-check
/// passes every one of them (recorded in expected/dump-log), and Kafka
/// recovers such a directory by design (the zero tail is unused space).
#[test]
fn verify_crc_clean_on_the_killed_broker() {
    each_release(|r| {
        for idx in files_with(&r.path("broker-3"), ".index") {
            let rel = idx.strip_prefix(&r.root).unwrap();
            let sanity = r.expected(&format!(
                "dump-log/{}",
                rel.to_str().unwrap().replace(".index", ".index-sanity.txt")
            ));
            assert!(
                sanity.contains("passed sanity check") || sanity.contains("is empty"),
                "{sanity}"
            );
        }
        // No error and no warning: the zero slots are notes.
        let o = r.run(&["verify-crc", "--fail-on", "warning", "broker-3"]);
        assert_eq!(
            o.status.code(),
            Some(0),
            "klog verify-crc broker-3:\n{}{}",
            stdout(&o),
            stderr(&o)
        );
    });
}

fn files_with(dir: &Path, suffix: &str) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else if p.to_str().unwrap().ends_with(suffix) {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

/// `--deep` adds the producer-state checks: Kafka accepted every one of
/// these batches (transaction version 2 bumps the epoch at each marker and
/// the next transaction's sequences restart at 0, in data partitions and in
/// `__consumer_offsets` alike, for sendOffsetsToTransaction).
#[test]
fn verify_crc_deep_clean_on_the_cleanly_stopped_brokers() {
    each_release(|r| {
        let mut args: Vec<String> = ["verify-crc", "--deep", "--fail-on", "warning"]
            .map(String::from)
            .to_vec();
        args.extend(r.folders_of("broker-1", "__consumer_offsets"));
        args.extend(
            [
                "broker-1/ctp-out-0",
                "broker-1/idempotent-0",
                "broker-1/plain-0",
            ]
            .map(String::from),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = r.run(&args);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    });
}

// ---- replay-offsets and lag ---------------------------------------------------

/// Every committed offset klog replays from each broker's `__consumer_offsets`
/// copies (the killed broker's included) is the one Kafka's Admin API reported, and no group is missing
/// or extra (deleted-g was deleted, offsets-deleted-g lost idempotent-0).
#[test]
fn replay_offsets_matches_kafka_committed_offsets() {
    each_release(|r| {
        let kafka = kafka_groups(r);
        for b in brokers() {
            let doc = r.json(&["replay-offsets", "--format", "json", b]);
            let mut klog: BTreeMap<String, BTreeMap<(String, i64), i64>> = BTreeMap::new();
            for row in doc["offsets"].as_array().unwrap() {
                klog.entry(row["group"].as_str().unwrap().to_string())
                    .or_default()
                    .insert(
                        (
                            row["topic"].as_str().unwrap().to_string(),
                            row["partition"].as_i64().unwrap(),
                        ),
                        row["committed_offset"].as_i64().unwrap(),
                    );
            }
            // A group with no committed offset (timeout-g: its only commit
            // was aborted) has no row in replay-offsets.
            let want: BTreeMap<String, BTreeMap<(String, i64), i64>> = kafka
                .iter()
                .filter(|(_, parts)| !parts.is_empty())
                .map(|(g, parts)| {
                    (
                        g.clone(),
                        parts
                            .iter()
                            .map(|(k, v)| (k.clone(), v["committed"].as_i64().unwrap()))
                            .collect(),
                    )
                })
                .collect();
            assert_eq!(
                klog, want,
                "{b}: klog replay-offsets vs Kafka's committed offsets"
            );
        }
    });
}

/// `klog lag` on brokers 1 and 2 (stopped cleanly: their
/// replication-offset-checkpoint holds the high watermark) against
/// `kafka-consumer-groups --describe`: CURRENT-OFFSET, LOG-END-OFFSET (the
/// high watermark) and LAG.
#[test]
fn lag_matches_consumer_groups_describe() {
    each_release(|r| {
        for b in ["broker-1", "broker-2"] {
            lag_matches_describe_on(r, &[b]);
        }
    });
}

/// `klog lag` over the three brokers' directories reads each partition on
/// its leader's copy (as `klog cluster` chooses it) and answers what
/// `kafka-consumer-groups --describe` did, where one broker's directory
/// would have been refused before ("two live copies").
#[test]
fn lag_over_every_broker_reads_each_leaders_copy() {
    each_release(|r| {
        let all = brokers();
        lag_matches_describe_on(r, &all);
        let o = r.run(&["lag", "broker-1", "broker-2", "broker-3"]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        assert!(
            stderr(&o).contains(
                "the log directories of nodes 1, 2, 3: each partition is read on its leader's copy"
            ),
            "{}",
            stderr(&o)
        );
        // A directory that names no broker beside them cannot be placed.
        let klogs = crate::support::repo().join("fixtures/groups");
        let o = r.run(&["lag", "broker-1", "broker-2", klogs.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("has no meta.properties to say which broker it belongs to"),
            "{}",
            stderr(&o)
        );
    });
}

fn lag_matches_describe_on(r: &Real, dirs: &[&str]) {
    let broker = dirs.join(" ");
    let kafka = kafka_groups(r);
    let mut args = vec!["lag", "--format", "json"];
    args.extend_from_slice(dirs);
    let doc = r.json(&args);
    let mut klog: BTreeMap<(String, String, i64), &Value> = BTreeMap::new();
    for row in doc["partitions"].as_array().unwrap() {
        klog.insert(
            (
                row["group"].as_str().unwrap().to_string(),
                row["topic"].as_str().unwrap().to_string(),
                row["partition"].as_i64().unwrap(),
            ),
            row,
        );
    }
    let mut compared = 0;
    for group in kafka.keys() {
        let text = r.expected(&format!("tools/groups-describe-{group}.txt"));
        for row in describe_rows(&text) {
            let key = (
                row["GROUP"].clone(),
                row["TOPIC"].clone(),
                row["PARTITION"].parse::<i64>().unwrap(),
            );
            let k = klog
                .get(&key)
                .unwrap_or_else(|| panic!("{broker}: klog lag has no row for {key:?}"));
            // kafka-streams-groups names its lag column OFFSET-LAG.
            let lag = if row.contains_key("LAG") {
                "LAG"
            } else {
                "OFFSET-LAG"
            };
            for (col, field) in [
                ("CURRENT-OFFSET", "committed_offset"),
                ("LOG-END-OFFSET", "high_watermark"),
                (lag, "lag"),
            ] {
                assert_eq!(
                    k[field].as_i64().unwrap().to_string(),
                    row[col],
                    "{broker} {key:?}: klog {field} vs Kafka {col}"
                );
            }
            compared += 1;
        }
    }
    assert_eq!(compared, klog.len(), "klog lag shows rows Kafka does not");
    assert!(compared >= 10);
}

/// `klog lag --isolation read-committed` against the last stable offset
/// Kafka's ListOffsets(READ_COMMITTED) returned (txn-0 has an open
/// transaction: LSO 16 while the high watermark is 20).
#[test]
fn lag_read_committed_matches_kafka_last_stable_offset() {
    each_release(|r| {
        let kafka = kafka_groups(r);
        for broker in ["broker-1", "broker-2"] {
            let doc = r.json(&[
                "lag",
                "--format",
                "json",
                "--isolation",
                "read-committed",
                broker,
            ]);
            assert_eq!(doc["isolation"], "read-committed");
            let mut seen = 0;
            for row in doc["partitions"].as_array().unwrap() {
                let group = row["group"].as_str().unwrap();
                let key = (
                    row["topic"].as_str().unwrap().to_string(),
                    row["partition"].as_i64().unwrap(),
                );
                let want = &kafka[group][&key];
                assert_eq!(
                    row["last_stable_offset"], want["last_stable_offset"],
                    "{broker} {group} {key:?}: LSO"
                );
                assert_eq!(
                    row["lag"], want["lag_read_committed"],
                    "{broker} {group} {key:?}: lag"
                );
                seen += 1;
            }
            assert_eq!(seen, kafka.values().map(|p| p.len()).sum::<usize>());
        }
        let txn = r.expected_json("list-offsets.json");
        let txn = txn
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["topic"] == "txn")
            .unwrap();
        assert!(
            txn["latest_read_committed"].as_i64() < txn["latest_read_uncommitted"].as_i64(),
            "the fixture must keep an open transaction"
        );
    });
}

/// Log start and high watermark per partition, `klog lag`'s columns, against
/// ListOffsets earliest / latest (READ_UNCOMMITTED) for the partitions the
/// groups read.
#[test]
fn lag_log_start_matches_list_offsets_earliest() {
    each_release(|r| {
        let offsets = r.expected_json("list-offsets.json");
        let by_tp: BTreeMap<(String, i64), &Value> = offsets
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    (
                        p["topic"].as_str().unwrap().to_string(),
                        p["partition"].as_i64().unwrap(),
                    ),
                    p,
                )
            })
            .collect();
        let doc = r.json(&["lag", "--format", "json", "broker-1"]);
        for row in doc["partitions"].as_array().unwrap() {
            let key = (
                row["topic"].as_str().unwrap().to_string(),
                row["partition"].as_i64().unwrap(),
            );
            assert_eq!(row["log_start_offset"], by_tp[&key]["earliest"], "{key:?}");
            assert_eq!(
                row["high_watermark"], by_tp[&key]["latest_read_uncommitted"],
                "{key:?}"
            );
        }
    });
}

// ---- info and diff ------------------------------------------------------------

/// `klog info`'s partitions of one broker, by (topic, partition).
fn info_partitions(r: &Real, broker: &str) -> Vec<((String, i64), Value)> {
    let info = r.json(&["info", "--format", "json", broker]);
    info["directories"][0]["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let key = (
                p["topic"].as_str().unwrap().to_string(),
                p["partition"].as_i64().unwrap(),
            );
            (key, p.clone())
        })
        .collect()
}

/// `klog info`: per data partition of brokers 1 and 2 (stopped cleanly), the
/// log start, log end and high watermark are ListOffsets earliest and latest.
#[test]
fn info_matches_list_offsets() {
    each_release(|r| {
        let mut want: BTreeMap<(String, i64), Value> = BTreeMap::new();
        for file in ["list-offsets.json", "list-offsets-killed.json"] {
            for p in r.expected_json(file).as_array().unwrap() {
                want.insert(
                    (
                        p["topic"].as_str().unwrap().to_string(),
                        p["partition"].as_i64().unwrap(),
                    ),
                    p.clone(),
                );
            }
        }
        let mut compared = std::collections::BTreeSet::new();
        for broker in ["broker-1", "broker-2"] {
            for (key, p) in info_partitions(r, broker) {
                let Some(k) = want.get(&key) else {
                    assert!(
                        key.0.starts_with("__"),
                        "Kafka listed no offsets for {key:?}"
                    );
                    continue;
                };
                assert_eq!(
                    p["log_start_offset"], k["earliest"],
                    "{broker} {key:?} log start"
                );
                assert_eq!(
                    p["high_watermark"], k["latest_read_uncommitted"],
                    "{broker} {key:?} HW"
                );
                assert_eq!(
                    p["log_end_offset"], k["latest_read_uncommitted"],
                    "{broker} {key:?} log end"
                );
                compared.insert(key);
            }
        }
        assert_eq!(compared.len(), want.len());
    });
}

/// `kafka-get-offsets --time -1` / `--time -2` (GetOffsetShell: every
/// partition of the cluster, internal topics included) against `klog info`
/// on brokers 1 and 2 (stopped cleanly): each listed partition's high
/// watermark and log start, on every copy those brokers hold.
#[test]
fn info_matches_get_offset_shell() {
    each_release(|r| {
        let listed = |file: &str| -> BTreeMap<(String, i64), i64> {
            r.expected(&format!("tools/{file}"))
                .lines()
                .filter(|l| !l.trim().is_empty())
                .map(|l| {
                    let mut it = l.rsplitn(3, ':');
                    let offset = it.next().unwrap().parse().unwrap();
                    let partition = it.next().unwrap().parse().unwrap();
                    ((it.next().unwrap().to_string(), partition), offset)
                })
                .collect()
        };
        let latest = listed("get-offsets-latest.txt");
        let earliest = listed("get-offsets-earliest.txt");
        assert_eq!(
            latest.keys().collect::<Vec<_>>(),
            earliest.keys().collect::<Vec<_>>()
        );
        assert!(latest.keys().any(|(t, _)| t == "__consumer_offsets"));
        let mut seen = std::collections::BTreeSet::new();
        for broker in ["broker-1", "broker-2"] {
            for (key, p) in info_partitions(r, broker) {
                let Some(&hw) = latest.get(&key) else {
                    // The KRaft metadata log (not a partition the Admin API
                    // lists) and killed-0, made after the tool ran
                    // (info_matches_list_offsets compares it).
                    assert!(
                        key.0 == "__cluster_metadata" || key.0 == "killed",
                        "{broker}: {key:?}"
                    );
                    continue;
                };
                assert_eq!(p["high_watermark"], hw, "{broker} {key:?} HW");
                assert_eq!(
                    p["log_start_offset"], earliest[&key],
                    "{broker} {key:?} log start"
                );
                seen.insert(key);
            }
        }
        assert_eq!(seen.len(), latest.len(), "partitions on neither broker");
    });
}

/// `klog stats`'s largest timestamp of each data partition (brokers 1 and
/// 2) is the timestamp `Admin.listOffsets(OffsetSpec.maxTimestamp())`
/// returned (`list-offsets.json`; a transaction marker's included). klog
/// has no answer for that record's offset, which is not compared.
#[test]
fn stats_max_timestamp_matches_list_offsets_max_timestamp() {
    each_release(|r| {
        let listed = r.expected_json("list-offsets.json");
        let mut compared = 0;
        for broker in ["broker-1", "broker-2"] {
            let mut args = vec!["stats".to_string(), "--format".into(), "json".into()];
            for k in listed.as_array().unwrap() {
                let dir = format!(
                    "{broker}/{}-{}",
                    k["topic"].as_str().unwrap(),
                    k["partition"]
                );
                if r.path(&dir).is_dir() {
                    args.push(dir);
                }
            }
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            let v = r.json(&args);
            for p in v["partitions"].as_array().unwrap() {
                let k = listed
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|k| k["topic"] == p["topic"] && k["partition"] == p["partition"])
                    .unwrap();
                assert_eq!(
                    p["timestamps"]["max"], k["max_timestamp"]["timestamp"],
                    "{broker} {}-{}",
                    k["topic"], k["partition"]
                );
                compared += 1;
            }
        }
        assert!(compared >= listed.as_array().unwrap().len(), "{compared}");
    });
}

/// (base offset, last offset, CRC) of every batch kafka-dump-log printed for
/// one partition folder, in offset order.
fn kafka_batches(r: &Real, dir: &str) -> Vec<(i64, i64, i64)> {
    let mut segs: Vec<PathBuf> = files_with(&r.path(dir), ".log");
    segs.sort();
    let mut out = Vec::new();
    for seg in segs {
        let rel = seg.strip_prefix(&r.root).unwrap().to_str().unwrap();
        let text = r.expected(&format!(
            "dump-log/{}.txt",
            rel.strip_suffix(".log").unwrap()
        ));
        for l in text.lines().filter(|l| l.starts_with("baseOffset:")) {
            let f = dump_log_fields(l);
            out.push((
                f["baseOffset"].parse().unwrap(),
                f["lastOffset"].parse().unwrap(),
                f["crc"].parse().unwrap(),
            ));
        }
    }
    out
}

/// Every record kafka-dump-log printed for one partition folder, each with
/// the fields of its batch that replication keeps (leader epoch, producer,
/// flags): what two replicas in sync agree on whatever their cleaners did.
fn kafka_records(r: &Real, dir: &str) -> Vec<String> {
    let mut segs: Vec<PathBuf> = files_with(&r.path(dir), ".log");
    segs.sort();
    let mut out = Vec::new();
    for seg in segs {
        let rel = seg.strip_prefix(&r.root).unwrap().to_str().unwrap();
        let text = r.expected(&format!(
            "dump-log/{}.txt",
            rel.strip_suffix(".log").unwrap()
        ));
        let mut batch = String::new();
        for l in text.lines() {
            if l.starts_with("baseOffset:") {
                let f = dump_log_fields(l);
                batch = [
                    "partitionLeaderEpoch",
                    "producerId",
                    "producerEpoch",
                    "isTransactional",
                    "isControl",
                ]
                .map(|k| f[k].clone())
                .join(" ");
            } else if l.starts_with("| ") {
                out.push(format!("{batch} {l}"));
            }
        }
    }
    out
}

/// The partitionLeaderEpoch of the last batch kafka-dump-log printed for one
/// partition folder.
fn last_batch_epoch(r: &Real, dir: &str) -> i64 {
    let mut segs = files_with(&r.path(dir), ".log");
    segs.sort();
    let seg = segs.last().expect("a segment");
    let rel = seg.strip_prefix(&r.root).unwrap().to_str().unwrap();
    let text = r.expected(&format!(
        "dump-log/{}.txt",
        rel.strip_suffix(".log").unwrap()
    ));
    let line = text
        .lines()
        .rfind(|l| l.starts_with("baseOffset:"))
        .expect("a batch");
    dump_log_fields(line)["partitionLeaderEpoch"]
        .parse()
        .unwrap()
}

/// `klog diff` of every two brokers' copies of each data partition: the common
/// prefix and where each copy ends are what Kafka's dumps of the two copies
/// show (identical everywhere, diverged-0 included once node 2 truncated its
/// divergent tail, except killed-0, where broker 3 stops at the kill, and
/// compacted-0, whose cleaners set different delete horizons); the copies
/// are in sync (exit 0) when Kafka's dumps show the same batches or the
/// same records.
#[test]
fn diff_of_replicas_matches_their_dump_logs() {
    each_release(|r| {
        let mut diverging = 0;
        for (one, other) in [
            ("broker-1", "broker-2"),
            ("broker-1", "broker-3"),
            ("broker-2", "broker-3"),
        ] {
            for entry in std::fs::read_dir(r.path(one)).unwrap() {
                let name = entry.unwrap().file_name().into_string().unwrap();
                if name.starts_with("__") || !r.path(other).join(&name).is_dir() {
                    continue;
                }
                let (a, b) = (format!("{one}/{name}"), format!("{other}/{name}"));
                let (ka, kb) = (kafka_batches(r, &a), kafka_batches(r, &b));
                let in_sync = ka == kb || kafka_records(r, &a) == kafka_records(r, &b);
                let common = ka.iter().zip(&kb).take_while(|(x, y)| x == y).count();
                let o = r.run(&["diff", "--format", "json", &a, &b]);
                let v = document(&o, "diff");
                assert_eq!(v["identical"], ka == kb, "{a} vs {b}: {v}");
                assert_eq!(v["common_batches"], common, "{a} vs {b}: {v}");
                assert_eq!(
                    v["log_end_offset_a"],
                    ka.last().map_or(0, |x| x.1 + 1),
                    "{a}: {v}"
                );
                assert_eq!(
                    v["log_end_offset_b"],
                    kb.last().map_or(0, |x| x.1 + 1),
                    "{b}: {v}"
                );
                assert_eq!(v["in_sync"], in_sync, "{a} vs {b}: {v}");
                assert_eq!(
                    o.status.code(),
                    Some(if in_sync { 0 } else { 1 }),
                    "{a} vs {b}: {v}"
                );
                if ka != kb {
                    diverging += 1;
                }
            }
        }
        assert!(
            diverging >= 1,
            "killed-0 must differ between broker 1 and broker 3"
        );
    });
}

// ---- dump-segment vs kafka-dump-log ------------------------------------------

/// The `name: value` pairs of a DumpLogSegments batch line.
fn dump_log_fields(line: &str) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut it = line.split_whitespace().peekable();
    while let Some(tok) = it.next() {
        if let Some(name) = tok.strip_suffix(':') {
            if let Some(v) = it.peek() {
                if !v.ends_with(':') {
                    out.insert(name.to_string(), it.next().unwrap().to_string());
                    continue;
                }
            }
            out.insert(name.to_string(), String::new());
        }
    }
    out
}

/// A DumpLogSegments record line (`| offset: ...`): its leading fields, and
/// key and payload as printed (data topics only, where both are plain text).
fn dump_log_record(line: &str) -> (BTreeMap<String, String>, Option<(String, String)>) {
    let body = line.strip_prefix("| ").unwrap();
    let head = body
        .split(" key: ")
        .next()
        .unwrap()
        .split(" endTxnMarker: ")
        .next()
        .unwrap();
    let fields = dump_log_fields(head);
    let kv = body
        .split_once(" key: ")
        .map(|(_, rest)| match rest.split_once(" payload: ") {
            Some((k, v)) => (k.to_string(), v.to_string()),
            None => (rest.to_string(), String::from("<null>")),
        });
    (fields, kv)
}

/// Compare one segment's `klog dump-segment --format json` with Kafka's
/// `kafka-dump-log --deep-iteration --print-data-log` of the same file.
fn compare_segment(r: &Real, seg: &str, klog: &[Value], data_topic: bool) -> usize {
    let kafka = r.expected(&format!(
        "dump-log/{}.txt",
        seg.strip_suffix(".log").unwrap()
    ));
    assert!(klog.iter().all(|e| e["type"] == "batch"), "{seg}");
    let batches: Vec<&str> = kafka
        .lines()
        .filter(|l| l.starts_with("baseOffset:"))
        .collect();
    let records: Vec<&str> = kafka.lines().filter(|l| l.starts_with("| ")).collect();
    assert_eq!(klog.len(), batches.len(), "{seg}: batch count");
    let mut rec_iter = records.iter();
    for (k, line) in klog.iter().zip(batches) {
        let f = dump_log_fields(line);
        let ctx = format!("{seg} batch at {}", f["position"]);
        let num = |name: &str| f[name].parse::<i64>().unwrap();
        assert_eq!(
            k["base_offset"].as_i64().unwrap(),
            num("baseOffset"),
            "{ctx}"
        );
        assert_eq!(
            k["last_offset"].as_i64().unwrap(),
            num("lastOffset"),
            "{ctx}"
        );
        assert_eq!(k["record_count"].as_i64().unwrap(), num("count"), "{ctx}");
        assert_eq!(
            k["base_sequence"].as_i64().unwrap(),
            num("baseSequence"),
            "{ctx}"
        );
        assert_eq!(
            k["last_sequence"].as_i64().unwrap(),
            num("lastSequence"),
            "{ctx}"
        );
        assert_eq!(
            k["producer_id"].as_i64().unwrap(),
            num("producerId"),
            "{ctx}"
        );
        assert_eq!(
            k["producer_epoch"].as_i64().unwrap(),
            num("producerEpoch"),
            "{ctx}"
        );
        assert_eq!(
            k["partition_leader_epoch"].as_i64().unwrap(),
            num("partitionLeaderEpoch"),
            "{ctx}"
        );
        assert_eq!(
            k["is_transactional"].to_string(),
            f["isTransactional"],
            "{ctx}"
        );
        assert_eq!(k["is_control"].to_string(), f["isControl"], "{ctx}");
        assert_eq!(
            k["has_delete_horizon"].as_bool().unwrap(),
            f["deleteHorizonMs"] != "OptionalLong.empty",
            "{ctx}"
        );
        assert_eq!(k["position"].as_i64().unwrap(), num("position"), "{ctx}");
        // For CreateTime batches DumpLogSegments prints the batch's max timestamp.
        assert_eq!(k["timestamp_type"], "create_time", "{ctx}");
        assert_eq!(
            k["max_timestamp"].as_i64().unwrap(),
            num("CreateTime"),
            "{ctx}"
        );
        assert_eq!(k["size"].as_i64().unwrap(), num("size"), "{ctx}");
        assert_eq!(k["magic"].as_i64().unwrap(), num("magic"), "{ctx}");
        assert_eq!(
            k["compression"].as_str().unwrap(),
            f["compresscodec"],
            "{ctx}"
        );
        assert_eq!(k["crc"].as_i64().unwrap(), num("crc"), "{ctx}");
        assert_eq!(k["crc_valid"].to_string(), f["isvalid"], "{ctx}");
        for rec in k["records"].as_array().unwrap() {
            let (rf, kv) = dump_log_record(rec_iter.next().expect("Kafka printed fewer records"));
            let rctx = format!("{ctx}, record {}", rf["offset"]);
            assert_eq!(
                rec["offset"].as_i64().unwrap().to_string(),
                rf["offset"],
                "{rctx}"
            );
            assert_eq!(
                rec["timestamp"].as_i64().unwrap().to_string(),
                rf["CreateTime"],
                "{rctx}"
            );
            let seq = if num("baseSequence") < 0 {
                -1
            } else {
                num("baseSequence") + rec["offset"].as_i64().unwrap() - num("baseOffset")
            };
            assert_eq!(seq.to_string(), rf["sequence"], "{rctx}: sequence");
            let headers = rec["headers"].as_array().unwrap();
            let keys: Vec<&str> = headers
                .iter()
                .map(|h| h["key"].as_str().unwrap_or(""))
                .collect();
            assert_eq!(format!("[{}]", keys.join(",")), rf["headerKeys"], "{rctx}");
            if data_topic && !k["is_control"].as_bool().unwrap() {
                let (key, payload) = kv.expect("a data record prints key and payload");
                let size = |v: &Value| v.as_str().map_or(-1, |s| s.len() as i64);
                assert_eq!(
                    size(&rec["key"]).to_string(),
                    rf["keySize"],
                    "{rctx}: keySize"
                );
                assert_eq!(
                    size(&rec["value"]).to_string(),
                    rf["valueSize"],
                    "{rctx}: valueSize"
                );
                assert_eq!(rec["key"].as_str().unwrap_or("null"), key, "{rctx}: key");
                if !rec["value"].is_null() {
                    assert_eq!(rec["value"].as_str().unwrap(), payload, "{rctx}: payload");
                }
            }
        }
    }
    assert!(
        rec_iter.next().is_none(),
        "{seg}: Kafka printed more records"
    );
    klog.len()
}

/// Every data segment of every broker (plain, every codec, idempotent,
/// transactional with markers, compacted with a tombstone, the follower's
/// and the killed broker's copies): every batch and record field.
#[test]
fn dump_segment_matches_dump_log_on_data_topics() {
    each_release(|r| {
        let mut batches = 0;
        for (seg, klog) in r.dump_many(&r.files(".log", Some(false))) {
            batches += compare_segment(r, &seg, &klog, true);
        }
        assert!(batches > 100, "{batches} batches compared");
    });
}

/// The internal topics' segments (`__consumer_offsets`, `__transaction_state`,
/// `__share_group_state`, `__cluster_metadata`): batch fields and record
/// offsets, timestamps, sequences and header keys.
#[test]
fn dump_segment_matches_dump_log_on_internal_topics() {
    each_release(|r| {
        for (seg, klog) in r.dump_many(&r.files(".log", Some(true))) {
            compare_segment(r, &seg, &klog, false);
        }
    });
}

/// `dump-segment --isolation`: the data records klog shows are exactly the
/// offsets a real consumer of that isolation level received (the read_committed
/// consumer stops at the LSO and skips the aborted transaction).
#[test]
fn dump_segment_isolation_matches_what_consumers_received() {
    each_release(|r| {
        for read in r.expected_json("consumed.json").as_array().unwrap() {
            let topic = read["topic"].as_str().unwrap();
            let iso = read["isolation"].as_str().unwrap().replace('_', "-");
            let dir = format!("broker-1/{topic}-{}", read["partition"]);
            let klog: Vec<i64> = r
                .dump(&["--isolation", &iso, &dir])
                .iter()
                .filter(|b| !b["is_control"].as_bool().unwrap())
                .flat_map(|b| b["records"].as_array().unwrap().clone())
                .map(|rec| rec["offset"].as_i64().unwrap())
                .collect();
            let kafka: Vec<i64> = read["offsets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_i64().unwrap())
                .collect();
            assert_eq!(klog, kafka, "{dir} --isolation {iso}");
        }
    });
}

/// Every `.index` and `.timeindex` of every broker (leader-written,
/// follower-written, and the killed broker's preallocated ones): the
/// entries klog lists are the ones kafka-dump-log lists.
#[test]
fn dump_segment_index_entries_match_dump_log() {
    each_release(|r| {
        let mut entries = 0;
        for suffix in [".index", ".timeindex"] {
            for (rel, klog) in r.dump_many(&r.files(suffix, None)) {
                let idx = r.path(&rel);
                let kafka: Vec<(i64, i64)> = r
                    .expected(&format!("dump-log/{rel}.txt"))
                    .lines()
                    .filter_map(|l| {
                        let f = dump_log_fields(l);
                        if let (Some(o), Some(p)) = (f.get("offset"), f.get("position")) {
                            Some((o.parse().unwrap(), p.parse().unwrap()))
                        } else if let (Some(t), Some(o)) = (f.get("timestamp"), f.get("offset")) {
                            Some((t.parse().unwrap(), o.parse().unwrap()))
                        } else {
                            None
                        }
                    })
                    .collect();
                // DumpLogSegments prints slot 0 unconditionally and stops at
                // the first all-zero slot after it, so a preallocated index
                // with no entry shows one line (offset = base, position 0;
                // timestamp 0). That slot is not an entry (AbstractIndex
                // zero-fills; LogSegment.append never indexes position 0),
                // and klog does not show it. (On an empty segment 3.9's
                // DumpLogSegments fails reading that slot's batch and prints
                // no entry at all.)
                let base: i64 = idx
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(|n| n.split('.').next())
                    .and_then(|d| d.parse().ok())
                    .unwrap();
                let bogus = |&(a, b): &(i64, i64)| {
                    if suffix == ".index" {
                        (a, b) == (base, 0)
                    } else {
                        (a, b) == (0, base)
                    }
                };
                let mut kafka = kafka;
                if kafka.len() == 1 && bogus(&kafka[0]) {
                    use std::io::Read;
                    let width = if suffix == ".index" { 8 } else { 12 };
                    let mut slot = vec![0u8; width];
                    let mut f = std::fs::File::open(&idx).unwrap();
                    if f.read_exact(&mut slot).is_ok() && slot.iter().all(|&b| b == 0) {
                        kafka.clear();
                    }
                }
                let klog: Vec<(i64, i64)> = klog
                    .iter()
                    .map(|e| {
                        if suffix == ".index" {
                            (
                                e["offset"].as_i64().unwrap(),
                                e["log_position"].as_i64().unwrap(),
                            )
                        } else {
                            (
                                e["timestamp"].as_i64().unwrap(),
                                e["offset"].as_i64().unwrap(),
                            )
                        }
                    })
                    .collect();
                assert_eq!(klog, kafka, "{rel}");
                entries += kafka.len();
            }
        }
        assert!(entries > 100, "{entries} index entries compared");
    });
}

// ---- transactions vs kafka-transactions -----------------------------------

/// The rows of a kafka-transactions table (tab-separated, padded).
pub(crate) fn tx_rows(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Vec<String> = match lines.next() {
        Some(h) => h.split('\t').map(|s| s.trim().to_string()).collect(),
        None => return Vec::new(),
    };
    lines
        .map(|l| {
            header
                .iter()
                .cloned()
                .zip(l.split('\t').map(|s| s.trim().to_string()))
                .filter(|(h, _)| !h.is_empty())
                .collect()
        })
        .collect()
}

fn klog_partition<'a>(report: &'a Value, topic: &str) -> &'a Value {
    report["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == topic)
        .unwrap_or_else(|| panic!("klog transactions shows no {topic} partition"))
}

/// The last stable offset and each transactional producer's id, epoch and
/// open transaction, against `kafka-transactions describe-producers` and
/// ListOffsets(READ_COMMITTED), on the leader's copy of txn-0.
#[test]
fn transactions_producers_and_lso_match_kafka() {
    each_release(|r| {
        let mut topics = vec!["txn"];
        // The transaction its coordinator aborted once the producer was killed.
        if r.has("transaction-timed-out") {
            topics.push("txn-timeout");
        }
        for topic in topics {
            let dir = format!("broker-1/{topic}-0");
            let report = r.json(&["transactions", "--format", "json", &dir]);
            let p = klog_partition(&report, topic);
            let offsets = r.expected_json("list-offsets.json");
            let listed = offsets
                .as_array()
                .unwrap()
                .iter()
                .find(|p| p["topic"] == topic)
                .unwrap();
            assert_eq!(
                p["last_stable_offset"], listed["latest_read_committed"],
                "{dir}"
            );
            assert_eq!(
                p["log_end_offset"], listed["latest_read_uncommitted"],
                "{dir}"
            );
            let kafka = tx_rows(&r.expected(&format!(
                "tools/transactions-describe-producers-{topic}-0.txt"
            )));
            let producers = p["producers"].as_array().unwrap();
            assert_eq!(producers.len(), kafka.len(), "{dir}");
            for row in &kafka {
                let id: i64 = row["ProducerId"].parse().unwrap();
                let k = producers
                    .iter()
                    .find(|x| x["producer_id"] == id)
                    .unwrap_or_else(|| panic!("{dir}: klog has no producer {id}"));
                assert_eq!(
                    k["producer_epoch"].as_i64().unwrap().to_string(),
                    row["ProducerEpoch"],
                    "{dir} producer {id}"
                );
                let open = match row["CurrentTransactionStartOffset"].as_str() {
                    "None" => Value::Null,
                    n => Value::from(n.parse::<i64>().unwrap()),
                };
                assert_eq!(
                    k["open_transaction"]
                        .get("first_offset")
                        .cloned()
                        .unwrap_or(Value::Null),
                    open,
                    "{dir} producer {id}"
                );
            }
        }
    });
}

/// LastSequence per producer: after a transaction version 2 marker (which
/// bumps the epoch) Kafka's producer state holds -1.
#[test]
fn transactions_last_sequence_matches_describe_producers() {
    each_release(|r| {
        for topic in ["txn", "idempotent"] {
            let report = r.json(&[
                "transactions",
                "--format",
                "json",
                &format!("broker-1/{topic}-0"),
            ]);
            let p = klog_partition(&report, topic);
            for row in tx_rows(&r.expected(&format!(
                "tools/transactions-describe-producers-{topic}-0.txt"
            ))) {
                let id: i64 = row["ProducerId"].parse().unwrap();
                let k = p["producers"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["producer_id"] == id)
                    .unwrap();
                assert_eq!(
                    k["last_sequence"].as_i64().unwrap().to_string(),
                    row["LastSequence"],
                    "{topic} producer {id}"
                );
            }
        }
    });
}

/// Kafka finds no hanging transaction (find-hanging is empty: tx-open is
/// Ongoing at its coordinator, which lists txn-0), the snapshots Kafka
/// wrote are its own producer state, and the TV2 producers' sequences
/// restart at 0 with each bumped epoch: klog should report nothing.
#[test]
fn transactions_report_no_problem_kafka_does_not_see() {
    each_release(|r| {
        let hanging = tx_rows(&r.expected("tools/transactions-find-hanging-broker-1.txt"));
        assert!(hanging.is_empty());
        let mut args: Vec<String> = [
            "transactions",
            "--fail-on",
            "warning",
            "--transaction-timeout-ms",
            "900000",
            "broker-1/txn-0",
            "broker-1/ctp-out-0",
            "broker-1/idempotent-0",
        ]
        .map(String::from)
        .to_vec();
        // The transaction its coordinator aborted after the producer was killed
        // (its offsets went to __consumer_offsets).
        if r.has("transaction-timed-out") {
            args.push("broker-1/txn-timeout-0".into());
        }
        args.extend(r.folders_of("broker-1", "__transaction_state"));
        args.extend(r.folders_of("broker-1", "__consumer_offsets"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let o = r.run(&args);
        assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    });
}

/// The coordinator's view (`__transaction_state`) against `kafka-transactions
/// describe`: producer id, epoch, state, timeout and partitions.
#[test]
fn transactions_coordinator_view_matches_describe() {
    each_release(|r| {
        let mut args = vec!["transactions".to_string(), "--format".into(), "json".into()];
        args.extend(r.folders_of("broker-1", "__transaction_state"));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let report = r.json(&args);
        let ids = report["coordinator"]
            .as_array()
            .unwrap_or_else(|| panic!("no coordinator view: {report}"));
        let mut compared = 0;
        let mut wanted = vec!["tx-commit", "tx-abort", "tx-open", "ctp-app-tx"];
        if r.has("transaction-timed-out") {
            wanted.push("tx-timeout");
        }
        for &id in &wanted {
            let rows = tx_rows(&r.expected(&format!("tools/transactions-describe-{id}.txt")));
            let row = &rows[0];
            let k = ids
                .iter()
                .find(|x| x["transactional_id"] == id)
                .unwrap_or_else(|| panic!("klog has no transactional id {id}"));
            assert_eq!(
                k["producer_id"].as_i64().unwrap().to_string(),
                row["ProducerId"],
                "{id}"
            );
            assert_eq!(
                k["producer_epoch"].as_i64().unwrap().to_string(),
                row["ProducerEpoch"],
                "{id}"
            );
            assert_eq!(
                k["state"].as_str().unwrap(),
                row["TransactionState"],
                "{id}"
            );
            assert_eq!(
                k["timeout_ms"].as_i64().unwrap().to_string(),
                row["TransactionTimeoutMs"],
                "{id}"
            );
            let parts: Vec<String> = k["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .flat_map(|t| {
                    let topic = t["topic"].as_str().unwrap().to_string();
                    t["partitions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(move |n| format!("{topic}-{n}"))
                        .collect::<Vec<_>>()
                })
                .collect();
            assert_eq!(parts.join(","), row["TopicPartitions"], "{id}");
            compared += 1;
        }
        assert_eq!(compared, wanted.len());
        // kafka-transactions list: every transactional id, its producer id
        // and state.
        let listed = tx_rows(&r.expected("tools/transactions-list.txt"));
        assert_eq!(listed.len(), ids.len(), "{report}");
        for row in &listed {
            let id = row["TransactionalId"].as_str();
            let k = ids
                .iter()
                .find(|x| x["transactional_id"] == id)
                .unwrap_or_else(|| panic!("klog has no transactional id {id}"));
            assert_eq!(k["producer_id"].to_string(), row["ProducerId"], "{id}");
            assert_eq!(k["state"], row["TransactionState"].as_str(), "{id}");
        }
    });
}

/// Share groups: each share-partition's start offset, and from Kafka 4.2
/// its lag, against `kafka-share-groups --describe` (GROUP TOPIC PARTITION
/// [LEADER-EPOCH] START-OFFSET [LAG]: 4.1 prints no LAG and its records
/// carry no DeliveryCompleteCount, so klog shows none), from the share
/// coordinator's `__share_group_state` records; and the state the
/// consumer's acknowledgements left (ACCEPT 0-5, RELEASE 6-7, REJECT 8-9:
/// Acknowledged, Available, Archived by `SharePartition`'s
/// ackTypeToRecordStateMapping, each delivered once).
#[test]
fn groups_share_partitions_match_kafka_share_groups() {
    each_release(|r| {
        if !r.has("share-group") {
            return;
        }
        let text = r.expected("tools/groups-describe-share-g.txt");
        let rows = describe_rows(&text);
        assert!(!rows.is_empty(), "{text}");
        let v = r.json(&[
            "groups", "--format", "json", "--group", "share-g", "broker-1", "broker-2", "broker-3",
        ]);
        let parts = v["share_partitions"].as_array().unwrap();
        assert!(parts.iter().all(|p| p["group"] == "share-g"), "{v}");
        for row in &rows {
            let (topic, partition, start) = (
                row["TOPIC"].as_str(),
                row["PARTITION"].as_str(),
                row["START-OFFSET"].as_str(),
            );
            let p = parts
                .iter()
                .find(|p| p["topic"] == topic && p["partition"].as_i64() == partition.parse().ok())
                .unwrap_or_else(|| panic!("klog shows no share-partition {topic}-{partition}"));
            let at = format!("{topic}-{partition}");
            assert_eq!(p["start_offset"].to_string(), start, "{at}");
            match row.get("LAG") {
                Some(lag) => assert_eq!(p["lag"].to_string(), *lag, "{at}"),
                None => assert_eq!(p["lag"], Value::Null, "{at}"),
            }
        }
        let share = parts.iter().find(|p| p["topic"] == "share").unwrap();
        let batches: Vec<(i64, i64, &str, i64)> = share["batches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["first_offset"].as_i64().unwrap(),
                    b["last_offset"].as_i64().unwrap(),
                    b["delivery_state"].as_str().unwrap(),
                    b["delivery_count"].as_i64().unwrap(),
                )
            })
            .collect();
        assert_eq!(
            batches,
            [
                (0, 5, "Acknowledged", 1),
                (6, 7, "Available", 1),
                (8, 9, "Archived", 1)
            ]
        );
    });
}

/// `klog summary` on each broker, then `klog cluster`: nothing diverged
/// (diverged-0's node 2 found its divergence and truncated, as Kafka's
/// driver recorded; compacted-0's copies were each compacted by their own
/// cleaner, which the checksums leave aside) and nothing is lost; killed-0's
/// copy on node 3 ends where the kill left it, behind the 60 offsets Kafka
/// listed afterwards; every partition's high watermark and log start are
/// what Kafka listed, and every group's committed offset, high watermark
/// and lag what its Admin API reported.
#[test]
fn cluster_matches_list_offsets_and_group_lag() {
    each_release(|r| {
        // The summaries go beside the shared tree, not into it.
        let summaries = tempfile::tempdir().unwrap();
        let dir = summaries.path();
        for b in brokers() {
            let o = r.run(&["summary", "--format", "json", b]);
            assert_eq!(o.status.code(), Some(0), "{b}: {}", stderr(&o));
            std::fs::write(dir.join(format!("{b}.json")), &o.stdout).unwrap();
        }
        let report = r.json(&["cluster", "--format", "json", dir.to_str().unwrap()]);
        assert_eq!(report["totals"]["diverged"], 0, "{}", report["totals"]);
        assert_eq!(report["totals"]["lost"], 0);
        let partition = |topic: &str, p: i64| {
            report["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["topic"] == topic && v["partition"] == p)
                .unwrap_or_else(|| panic!("{topic}-{p}"))
        };
        for file in ["list-offsets.json", "list-offsets-killed.json"] {
            for k in r.expected_json(file).as_array().unwrap() {
                let v = partition(
                    k["topic"].as_str().unwrap(),
                    k["partition"].as_i64().unwrap(),
                );
                let ctx = format!("{}-{}", k["topic"], k["partition"]);
                assert_eq!(v["high_watermark"], k["latest_read_uncommitted"], "{ctx}");
                let leader = v["replicas"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["state"] == "leader")
                    .unwrap();
                assert_eq!(leader["log_start_offset"], k["earliest"], "{ctx}");
            }
        }
        let killed = partition("killed", 0);
        let k = &r.expected_json("list-offsets-killed.json")[0];
        assert_eq!(killed["leader"], k["leader"]);
        let node3 = killed["replicas"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["node_id"] == 3)
            .unwrap();
        assert_eq!(node3["state"], "behind");
        assert_eq!(
            node3["log_end_offset"], 40,
            "40 records acked before the kill"
        );
        assert_eq!(
            node3["behind_by"],
            k["latest_read_uncommitted"].as_i64().unwrap() - 40
        );
        let diverged = partition("diverged", 0);
        for x in diverged["replicas"].as_array().unwrap() {
            assert!(x["state"] == "leader" || x["state"] == "in_sync", "{x}");
            // Both hold the unclean election's epoch from offset 10: the
            // partitionLeaderEpoch of the last batch kafka-dump-log printed.
            let dir = format!("broker-{}/diverged-0", x["node_id"]);
            assert_eq!(x["leader_epoch"], last_batch_epoch(r, &dir), "{x}");
        }
        let kafka = kafka_groups(r);
        let mut compared = 0;
        for g in report["groups"].as_array().unwrap() {
            let key = (
                g["topic"].as_str().unwrap().to_string(),
                g["partition"].as_i64().unwrap(),
            );
            let k = &kafka[g["group"].as_str().unwrap()][&key];
            let ctx = format!("{} {key:?}", g["group"]);
            assert_eq!(g["committed_offset"], k["committed"], "{ctx}");
            assert_eq!(g["high_watermark"], k["high_watermark"], "{ctx}");
            assert_eq!(g["lag"], k["lag"], "{ctx}");
            assert_eq!(g["status"], "ok", "{ctx}");
            compared += 1;
        }
        assert_eq!(compared, kafka.values().map(BTreeMap::len).sum::<usize>());
    });
}

// ---- groups, metadata and coordinator records ---------------------------------

/// Every record of a segment's `dump-segment` entries, by offset: klog's
/// `decoded` (null for a control record).
fn decoded_by_offset(entries: &[Value]) -> BTreeMap<i64, Value> {
    let mut out = BTreeMap::new();
    for b in entries.iter().filter(|e| e["type"] == "batch") {
        for rec in b["records"].as_array().unwrap() {
            let d = rec.get("decoded").cloned().unwrap_or(Value::Null);
            out.insert(rec["offset"].as_i64().unwrap(), d);
        }
    }
    out
}

/// Each record `kafka-dump-log` printed for the segments of the internal
/// topics named `topics` (every broker's), beside klog's decoding of the
/// same record: (segment, offset, the rest of Kafka's line after `| offset:
/// N `, klog's `decoded`).
fn dumped_records(r: &Real, topics: &[&str]) -> Vec<(String, i64, String, Value)> {
    let segments: Vec<String> = r
        .files(".log", Some(true))
        .into_iter()
        .filter(|s| topics.iter().any(|t| s.contains(&format!("/{t}-"))))
        .collect();
    let mut out = Vec::new();
    for (rel, entries) in r.dump_many(&segments) {
        let mut ours = decoded_by_offset(&entries);
        let dump = r.expected(&format!(
            "dump-log/{}.txt",
            rel.strip_suffix(".log").unwrap()
        ));
        for line in dump.lines() {
            let Some(rest) = line.strip_prefix("| offset: ") else {
                continue;
            };
            let (offset, rest) = rest.split_once(' ').unwrap();
            let offset: i64 = offset.parse().unwrap();
            let d = ours
                .remove(&offset)
                .unwrap_or_else(|| panic!("{rel}: klog has no record at offset {offset}"));
            out.push((rel.clone(), offset, rest.to_string(), d));
        }
    }
    out
}

/// `a` (Kafka's JSON) and `b` (klog's) are the same message: equal values,
/// where Kafka writes a null for a tagged field the record does not carry
/// and klog leaves the field out.
fn same_message(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            x.iter().all(|(k, v)| match y.get(k) {
                Some(w) => same_message(v, w),
                None => v.is_null(),
            }) && y.keys().all(|k| x.contains_key(k))
        }
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(v, w)| same_message(v, w))
        }
        _ => a == b,
    }
}

/// Every record of the metadata log and of the group and share coordinators
/// decodes (no `raw` value, no error), on every broker.
#[test]
fn every_metadata_and_coordinator_record_decodes() {
    each_release(|r| {
        let mut decoded = 0;
        let segments: Vec<String> = r
            .files(".log", Some(true))
            .into_iter()
            .filter(|s| {
                [
                    "/__cluster_metadata-",
                    "/__consumer_offsets-",
                    "/__share_group_state-",
                ]
                .iter()
                .any(|t| s.contains(t))
            })
            .collect();
        for (seg, entries) in r.dump_many(&segments) {
            for (offset, d) in decoded_by_offset(&entries) {
                if d.is_null() {
                    continue; // transaction markers
                }
                let undecoded = d.get("error").is_some()
                    || d["value"].get("raw").is_some()
                    || d.get("raw").is_some();
                assert!(!undecoded, "{seg} offset {offset}: {d}");
                decoded += 1;
            }
        }
        assert!(decoded > 100, "{decoded} records decoded");
    });
}

/// `klog groups` on the three brokers: every group with the type and state
/// Kafka's admin client listed (Admin.listGroups; listConsumerGroups on
/// 3.x), classic, consumer, share and streams groups alike.
#[test]
fn groups_types_and_states_match_kafka() {
    each_release(|r| {
        let v = r.json(&[
            "groups", "--format", "json", "broker-1", "broker-2", "broker-3",
        ]);
        let got: Vec<(String, String, String)> = v["groups"]
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["group"].as_str().unwrap().into(),
                    g["type"].as_str().unwrap().into(),
                    g["state"].as_str().unwrap().into(),
                )
            })
            .collect();
        let want: Vec<(String, String, String)> = r
            .expected_json("groups.json")
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["group"].as_str().unwrap().into(),
                    g["type"].as_str().unwrap().to_lowercase(),
                    g["state"].as_str().unwrap().into(),
                )
            })
            .collect();
        assert_eq!(got, want);
    });
}

/// `kafka-consumer-groups --list` (the groups of the consumer protocols,
/// classic and KIP-848) and each group's `--describe --state` (STATE and
/// #MEMBERS; share groups by `kafka-share-groups`) against `klog groups`.
/// A streams group's answers were recorded while its application ran
/// (kafka-streams-groups describes a running group only), so its final
/// state is the Admin API's (`groups_types_and_states_match_kafka`).
#[test]
fn groups_list_and_state_match_kafka_consumer_groups() {
    each_release(|r| {
        let v = r.json(&[
            "groups", "--format", "json", "broker-1", "broker-2", "broker-3",
        ]);
        let groups = v["groups"].as_array().unwrap();
        let mut consumer: Vec<&str> = groups
            .iter()
            .filter(|g| g["type"] == "classic" || g["type"] == "consumer")
            .map(|g| g["group"].as_str().unwrap())
            .collect();
        consumer.sort();
        let mut listed: Vec<&str> = Vec::new();
        let list = r.expected("tools/groups-list.txt");
        listed.extend(list.lines().map(str::trim).filter(|l| !l.is_empty()));
        listed.sort();
        assert_eq!(
            consumer, listed,
            "klog groups vs kafka-consumer-groups --list"
        );
        let mut compared = 0;
        for g in groups.iter().filter(|g| g["type"] != "streams") {
            let name = g["group"].as_str().unwrap();
            let text = r.expected(&format!("tools/groups-state-{name}.txt"));
            let rows = describe_rows(&text);
            assert_eq!(rows.len(), 1, "{name}: {text}");
            // COORDINATOR (ID) is two words: STATE and #MEMBERS are the last two.
            let words: Vec<&str> = text
                .lines()
                .filter(|l| l.starts_with(&format!("{name} ")))
                .flat_map(str::split_whitespace)
                .collect();
            let (state, members) = (words[words.len() - 2], words[words.len() - 1]);
            assert_eq!(g["state"], state, "{name}: {text}");
            // A KIP-848 group's ASSIGNMENT-STRATEGY: its preferred server
            // assignor, else the coordinator's default (uniform).
            if g["type"] == "consumer" {
                assert_eq!(g["protocol"], words[words.len() - 3], "{name}: {text}");
            }
            assert_eq!(
                g["members"].as_array().unwrap().len().to_string(),
                members,
                "{name}: {text}"
            );
            compared += 1;
        }
        assert!(compared >= 9, "{compared} groups compared");
    });
}

/// Every committed offset klog replays lives in the `__consumer_offsets`
/// partition Kafka's coordinator used for its group (`abs(hash) % N`, with
/// N the cluster's offsets.topic.num.partitions: 50 in ZooKeeper mode).
#[test]
fn replay_offsets_finds_each_group_in_its_coordinator_partition() {
    each_release(|r| {
        let want: BTreeMap<String, i64> = r
            .expected_json("groups.json")
            .as_array()
            .unwrap()
            .iter()
            .map(|g| {
                (
                    g["group"].as_str().unwrap().to_string(),
                    g["coordinator_partition"].as_i64().unwrap(),
                )
            })
            .collect();
        let n = r.manifest["consumer_offsets_partitions"].as_u64().unwrap();
        assert_eq!(
            r.folders_of("broker-1", "__consumer_offsets").len() as u64,
            n
        );
        let doc = r.json(&["replay-offsets", "--format", "json", "broker-1"]);
        let rows = doc["offsets"].as_array().unwrap();
        assert!(!rows.is_empty());
        for row in rows {
            let group = row["group"].as_str().unwrap();
            assert_eq!(row["log_partition"], want[group], "{group}: {row}");
        }
    });
}

/// The topics of the KRaft metadata (`klog metadata`) are the ones Kafka's
/// admin client listed at the end of the run (internal topics included), and
/// the ones `kafka-metadata-shell` lists where the release has it.
#[test]
fn metadata_topics_match_kafka() {
    each_release(|r| {
        if !r.kraft() {
            return;
        }
        let v = r.json(&["metadata", "--format", "json", "broker-1"]);
        let mut names: Vec<String> = v["topics"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_string())
            .collect();
        names.sort();
        let listed: Vec<String> = r.expected("topics.txt").lines().map(String::from).collect();
        assert_eq!(names, listed, "klog metadata vs Admin.listTopics");
        if r.answers("metadata-shell") {
            let mut shell: Vec<String> = r
                .expected("metadata-shell/ls_image_topics_byName.txt")
                .lines()
                .filter(|l| !l.is_empty())
                .map(String::from)
                .collect();
            shell.sort();
            // The shell read the metadata log as it was when the brokers stopped.
            assert_eq!(names, shell, "klog metadata vs kafka-metadata-shell");
            // `find /image/topics/byName`: each topic's partition numbers.
            let mut found: BTreeMap<String, Vec<i64>> = BTreeMap::new();
            for line in r
                .expected("metadata-shell/find_image_topics_byName.txt")
                .lines()
            {
                let parts: Vec<&str> = line.split('/').collect();
                if let [_, "image", "topics", "byName", topic, n] = parts[..] {
                    if let Ok(n) = n.parse() {
                        found.entry(topic.to_string()).or_default().push(n);
                    }
                }
            }
            for ns in found.values_mut() {
                ns.sort();
            }
            let ours: BTreeMap<String, Vec<i64>> = v["topics"]
                .as_array()
                .unwrap()
                .iter()
                .map(|t| {
                    let ns = t["partitions"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|p| p["partition"].as_i64().unwrap())
                        .collect();
                    (t["name"].as_str().unwrap().to_string(), ns)
                })
                .collect();
            if r.release.starts_with("4.0.") && found.is_empty() {
                // Kafka 4.0's shell has printed the directory alone on
                // some runs (its image loaded after the command ran), the
                // children on others.
            } else {
                assert_eq!(
                    ours, found,
                    "partitions: klog metadata vs find /image/topics/byName"
                );
            }
            // `ls /image/features`: the finalized features other than
            // metadata.version (metadataVersion) and the ZooKeeper migration.
            let mut finalized: Vec<String> = r
                .expected("metadata-shell/ls_image_features.txt")
                .lines()
                .filter_map(|l| l.strip_prefix("finalized_"))
                .map(String::from)
                .collect();
            finalized.sort();
            let mut features: Vec<String> = v["features"]
                .as_object()
                .unwrap()
                .keys()
                .filter(|k| *k != "metadata.version")
                .cloned()
                .collect();
            features.sort();
            assert_eq!(features, finalized, "klog metadata vs ls /image/features");
        }
    });
}

/// `klog metadata` lists the cluster's three brokers as their last
/// registration in the metadata log has them (the RegisterBrokerRecord
/// `kafka-dump-log --cluster-metadata-decoder` printed last for each:
/// incarnation id, broker epoch, listeners, log directories), with the
/// cordoned log directories of the last record that carries them
/// (RegisterBrokerRecord v4, BrokerRegistrationChangeRecord v3: Kafka 4.3
/// on; none before), and its text table has a CORDONED column.
#[test]
fn metadata_brokers_match_their_registrations() {
    each_release(|r| {
        if !r.kraft() {
            return; // no metadata log: metadata_records_match_kafka_dump_log
        }
        let mut registered: BTreeMap<i64, Value> = BTreeMap::new();
        let mut cordoned: BTreeMap<i64, Value> = BTreeMap::new();
        for (_, _, rest, _) in dumped_records(r, &["__cluster_metadata"]) {
            let Some((_, p)) = rest.split_once(" payload: ") else {
                continue;
            };
            let p: Value = serde_json::from_str(p).unwrap();
            let d = &p["data"];
            if ![
                "REGISTER_BROKER_RECORD",
                "BROKER_REGISTRATION_CHANGE_RECORD",
            ]
            .contains(&p["type"].as_str().unwrap())
            {
                continue;
            }
            let id = d["brokerId"].as_i64().unwrap();
            if let Some(c) = d.get("cordonedLogDirs") {
                cordoned.insert(id, c.clone());
            }
            if p["type"] == "REGISTER_BROKER_RECORD" {
                registered.insert(id, d.clone());
                if d.get("cordonedLogDirs").is_none() {
                    cordoned.remove(&id);
                }
            }
        }
        assert_eq!(registered.keys().copied().collect::<Vec<_>>(), [1, 2, 3]);
        let v = r.json(&["metadata", "--format", "json", "broker-1"]);
        let brokers = v["brokers"].as_array().unwrap();
        assert_eq!(brokers.len(), 3, "{}", v["brokers"]);
        for b in brokers {
            let id = b["id"].as_i64().unwrap();
            let k = &registered[&id];
            assert_eq!(b["incarnation_id"], k["incarnationId"], "broker {id}");
            assert_eq!(b["epoch"], k["brokerEpoch"], "broker {id}");
            assert_eq!(b["log_dirs"], k["logDirs"], "broker {id}");
            let addresses = |list: &Value| -> Vec<(Value, Value, Value)> {
                list.as_array()
                    .unwrap()
                    .iter()
                    .map(|l| (l["name"].clone(), l["host"].clone(), l["port"].clone()))
                    .collect()
            };
            assert_eq!(
                addresses(&b["listeners"]),
                addresses(&k["endPoints"]),
                "broker {id}"
            );
            // Null (not known) until a record carries them: before 4.3.
            let want = cordoned.get(&id).cloned().unwrap_or(Value::Null);
            assert_eq!(b["cordoned_log_dirs"], want, "broker {id}");
        }
        let text = stdout(&r.run(&["metadata", "broker-1"]));
        let header = text
            .lines()
            .find(|l| l.starts_with("BROKER "))
            .unwrap_or_else(|| panic!("no broker table: {text}"));
        assert!(header.trim_end().ends_with("CORDONED"), "{header}");
    });
}

/// The newer coordinator records (types 3 and up) and every share
/// coordinator record, decoded by klog, are the messages `kafka-dump-log
/// --offsets-decoder` / `--share-group-state-decoder` printed for them.
#[test]
fn coordinator_records_match_kafka_dump_log() {
    each_release(|r| {
        let mut compared = 0;
        let topics = ["__consumer_offsets", "__share_group_state"];
        for (rel, offset, rest, d) in dumped_records(r, &topics) {
            let share = rel.contains("/__share_group_state-");
            let Some((_, kv)) = rest.split_once(" key: ") else {
                continue;
            };
            let (key, payload) = kv.split_once(" payload: ").unwrap();
            let key: Value = serde_json::from_str(key).unwrap();
            let record_type: i64 = key["type"].as_str().unwrap().parse().unwrap();
            if !share && record_type < 3 {
                continue; // offset commits and classic groups: their own shapes
            }
            let at = format!("{rel} offset {offset}");
            assert_eq!(d["key"]["record_type"], record_type, "{at}");
            assert!(
                same_message(&key["data"], &d["key"]["data"]),
                "{at}: {key} vs {d}"
            );
            if payload == "<DELETE>" {
                assert_eq!(d["value"], "tombstone", "{at}");
            } else {
                let p: Value = serde_json::from_str(payload).unwrap();
                assert_eq!(
                    d["value"]["version"].to_string(),
                    p["version"].as_str().unwrap(),
                    "{at}"
                );
                assert!(
                    same_message(&p["data"], &d["value"]["data"]),
                    "{at}: {p} vs {d}"
                );
            }
            compared += 1;
        }
        // KIP-848 consumer groups (and share and streams groups) write them.
        if r.has("consumer-group") {
            assert!(compared > 0, "no coordinator record compared");
        }
    });
}

/// The classic group coordinator records (types 0 and 1 offset commits, 2
/// group metadata), decoded by klog in their own shape, against the JSON
/// `kafka-dump-log --offsets-decoder` printed: key, tombstone, value
/// version, every field klog shows (a field of another version is null in
/// klog and absent in Kafka's JSON; Kafka also decodes each member's
/// subscription, which klog does not show, and names the member timeouts
/// without `_ms`).
#[test]
fn classic_coordinator_records_match_kafka_dump_log() {
    each_release(|r| {
        let mut compared = 0;
        for (rel, offset, rest, d) in dumped_records(r, &["__consumer_offsets"]) {
            let Some((_, kv)) = rest.split_once(" key: ") else {
                continue; // a transaction marker
            };
            let (key, payload) = kv.split_once(" payload: ").unwrap();
            let key: Value = serde_json::from_str(key).unwrap();
            let record_type: i64 = key["type"].as_str().unwrap().parse().unwrap();
            if record_type > 2 {
                continue; // coordinator_records_match_kafka_dump_log
            }
            let at = format!("{rel} offset {offset}");
            let k = &key["data"];
            assert_eq!(d["key"]["group"], k["group"], "{at}");
            if record_type < 2 {
                assert_eq!(d["key"]["topic"], k["topic"], "{at}");
                assert_eq!(d["key"]["partition"], k["partition"], "{at}");
            }
            compared += 1;
            if payload == "<DELETE>" {
                assert_eq!(d["value"], "tombstone", "{at}");
                continue;
            }
            let p: Value = serde_json::from_str(payload).unwrap();
            let v = &d["value"];
            assert_eq!(
                v["version"].to_string(),
                p["version"].as_str().unwrap(),
                "{at}"
            );
            let kafka = &p["data"];
            // (klog's field, Kafka's field); null where Kafka leaves it out.
            let fields: &[(&str, &str)] = if record_type < 2 {
                &[
                    ("offset", "offset"),
                    ("leader_epoch", "leaderEpoch"),
                    ("metadata", "metadata"),
                    ("commit_timestamp", "commitTimestamp"),
                    ("expire_timestamp", "expireTimestamp"),
                    ("topic_id", "topicId"),
                ]
            } else {
                &[
                    ("protocol_type", "protocolType"),
                    ("generation", "generation"),
                    ("protocol", "protocol"),
                    ("leader", "leader"),
                    ("current_state_timestamp", "currentStateTimestamp"),
                ]
            };
            for (ours, theirs) in fields {
                let want = match (kafka.get(*theirs), *ours) {
                    (Some(x), _) => x.clone(),
                    // LeaderEpoch: versions 3+, -1 before (OffsetCommitValue.json).
                    (None, "leader_epoch") => Value::from(-1),
                    // CurrentStateTimestamp: versions 2+, -1 before.
                    (None, "current_state_timestamp") => Value::from(-1),
                    (None, _) => Value::Null,
                };
                assert_eq!(v[*ours], want, "{at} {ours}");
            }
            if record_type == 2 {
                let members = |list: &Value, fields: [&str; 7]| -> Vec<Vec<Value>> {
                    list.as_array()
                        .unwrap()
                        .iter()
                        .map(|m| {
                            let mut row: Vec<Value> =
                                fields[..6].iter().map(|f| m[*f].clone()).collect();
                            // The assignment: [{topic, partitions}].
                            row.push(m.pointer(fields[6]).cloned().unwrap_or(Value::Null));
                            row
                        })
                        .collect()
                };
                assert_eq!(
                    members(
                        &v["members"],
                        [
                            "member_id",
                            "group_instance_id",
                            "client_id",
                            "client_host",
                            "rebalance_timeout_ms",
                            "session_timeout_ms",
                            "/assignment",
                        ]
                    ),
                    members(
                        &kafka["members"],
                        [
                            "memberId",
                            "groupInstanceId",
                            "clientId",
                            "clientHost",
                            "rebalanceTimeout",
                            "sessionTimeout",
                            "/assignment/assignedPartitions",
                        ]
                    ),
                    "{at}"
                );
            }
        }
        assert!(compared > 50, "{compared} classic records compared");
    });
}

/// Every record of the KRaft metadata log, decoded by klog, is the message
/// `kafka-dump-log --cluster-metadata-decoder` printed for it: the same
/// version and fields (the leader change: the same message).
#[test]
fn metadata_records_match_kafka_dump_log() {
    each_release(|r| {
        if !r.kraft() {
            assert!(r.folders_of("broker-1", "__cluster_metadata").is_empty());
            return;
        }
        let mut compared = 0;
        for (_, offset, rest, d) in dumped_records(r, &["__cluster_metadata"]) {
            if let Some((_, p)) = rest.split_once(" payload: ") {
                let p: Value = serde_json::from_str(p).unwrap();
                assert_eq!(d["version"], p["version"], "offset {offset}");
                assert!(
                    same_message(&p["data"], &d["data"]),
                    "offset {offset}: {p} vs {d}"
                );
            } else if let Some((_, m)) = rest.split_once(" LeaderChange: ") {
                let m: Value = serde_json::from_str(m).unwrap();
                assert_eq!(d["type"], "LeaderChangeMessage");
                assert!(same_message(&m, &d["data"]), "offset {offset}: {m} vs {d}");
            } else {
                // 4.0's DumpLogSegments names the control type only.
                assert!(
                    rest.ends_with(" controlType: LEADER_CHANGE(2)"),
                    "offset {offset}: {rest}"
                );
                assert_eq!(d["type"], "LeaderChangeMessage", "offset {offset}");
            }
            compared += 1;
        }
        assert!(compared > 100, "{compared} metadata records compared");
    });
}

/// `klog info` reads each broker's `meta.properties` as Kafka wrote it:
/// version 0 with `broker.id` in ZooKeeper mode, version 1 with `node.id`
/// in KRaft mode, and the cluster id of the run (the manifest's).
#[test]
fn info_reads_meta_properties_as_kafka_wrote_them() {
    each_release(|r| {
        for (n, b) in brokers().iter().enumerate() {
            let v = r.json(&["info", "--format", "json", b]);
            let m = &v["directories"][0]["meta_properties"];
            let id = n as i64 + 1;
            if r.kraft() {
                assert_eq!(m["version"], 1, "{b}: {m}");
                assert_eq!(m["node_id"], id, "{b}: {m}");
            } else {
                assert_eq!(m["version"], 0, "{b}: {m}");
                assert_eq!(m["broker_id"], id, "{b}: {m}");
            }
            assert_eq!(m["cluster_id"], r.manifest["cluster_id"], "{b}: {m}");
        }
    });
}

/// `klog reset-offsets --to-datetime` (a dry run) finds, for every data
/// partition, the offset `Admin.listOffsets(OffsetSpec.forTimestamp(BASE+12))`
/// returned (`list-offsets.json`), or the log end where Kafka found none
/// (`OffsetsUtils.getLogTimestampOffsets` falls back to the latest offset):
/// on broker 1, or broker 2 for a partition broker 1 holds no copy of.
#[test]
fn reset_to_datetime_finds_the_offset_list_offsets_found() {
    each_release_in(Real::private, |r| {
        let listed = r.expected_json("list-offsets.json");
        let mut compared = 0;
        for broker in [1, 2] {
            let mine: Vec<&Value> = listed
                .as_array()
                .unwrap()
                .iter()
                .filter(|p| {
                    let replicas = p["replicas"].as_array().unwrap();
                    let first = if replicas.contains(&Value::from(1)) {
                        1
                    } else {
                        2
                    };
                    first == broker
                })
                .collect();
            if mine.is_empty() {
                continue;
            }
            let query = mine[0]["for_timestamp"]["query"].to_string();
            let dir = format!("broker-{broker}");
            let mut args = vec![
                "reset-offsets",
                dir.as_str(),
                "--group",
                "to-datetime-g",
                "--to-datetime",
                &query,
                "--format",
                "json",
            ];
            // Broker 2 keeps no metadata log (broker 1 alone does), and a
            // ZooKeeper-mode directory has none: the partition count is given.
            let n = r.manifest["consumer_offsets_partitions"].to_string();
            args.extend(["--offsets-partitions", &n]);
            let topics: std::collections::BTreeSet<&str> =
                mine.iter().map(|p| p["topic"].as_str().unwrap()).collect();
            for t in &topics {
                args.extend(["--topic", t]);
            }
            let plan = r.json(&args);
            for k in mine {
                let (topic, partition) = (&k["topic"], &k["partition"]);
                let row = plan["partitions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|x| x["topic"] == *topic && x["partition"] == *partition)
                    .unwrap_or_else(|| panic!("{dir}: no plan for {topic}-{partition}"));
                let f = &k["for_timestamp"];
                let want = if f["offset"] == -1 {
                    &k["latest_read_uncommitted"]
                } else {
                    &f["offset"]
                };
                assert_eq!(row["new_offset"], *want, "{dir} {topic}-{partition}: {f}");
                compared += 1;
            }
        }
        assert_eq!(compared, listed.as_array().unwrap().len());
    });
}

/// `klog commit` writes each group's commit into the `__consumer_offsets`
/// partition its Kafka coordinator used (`groups.json`). In KRaft mode the
/// partition count comes from the metadata log; a ZooKeeper-mode directory
/// has none (the count lived in ZooKeeper), so klog asks for
/// `--offsets-partitions` rather than guess, and places the group with it.
#[test]
fn commit_places_each_group_where_kafka_did() {
    each_release_in(Real::private, |r| {
        let n = r.manifest["consumer_offsets_partitions"].to_string();
        let base = [
            "commit",
            "broker-1",
            "--topic",
            "plain",
            "--partition",
            "0",
            "--offset",
            "1",
            "--now-ms",
            "1767225600000",
        ];
        if !r.kraft() {
            let o = r.run(&[&base[..], &["--group", "placement-g"]].concat());
            assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
            assert!(
                stderr(&o).contains("--offsets-partitions")
                    && stderr(&o).contains("a ZooKeeper-mode directory"),
                "{}",
                stderr(&o)
            );
        }
        // One broker's directory of a partition with three replicas: the
        // metadata names the two left out (a ZooKeeper-mode directory has
        // no metadata, and klog asks how many replicas there are); refused,
        // nothing written.
        let mut one = [&base[..], &["--group", "placement-g"]].concat();
        if !r.kraft() {
            one.extend(["--offsets-partitions", &n]);
        }
        let before = crate::support::snapshot(&r.path("broker-1"));
        let o = r.run(&one);
        assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
        let why = if r.kraft() {
            "the directories given (1) leave out"
        } else {
            "give --replication-factor N"
        };
        assert!(stderr(&o).contains(why), "{}", stderr(&o));
        assert!(
            stderr(&o).contains("--allow-missing-replicas"),
            "{}",
            stderr(&o)
        );
        assert_eq!(crate::support::snapshot(&r.path("broker-1")), before);
        let groups = r.expected_json("groups.json");
        for g in groups.as_array().unwrap() {
            if g["type"] != "Classic" {
                continue; // klog refuses to write for a group of another protocol
            }
            let group = g["group"].as_str().unwrap();
            let mut args = base.to_vec();
            // The placement is what is tested here: one replica is enough.
            args.extend(["--group", group, "--allow-missing-replicas"]);
            if !r.kraft() {
                args.extend(["--offsets-partitions", &n]);
            }
            let o = r.run(&args);
            assert_eq!(o.status.code(), Some(0), "{group}: {}", stderr(&o));
            let v = r.json(&[
                "replay-offsets",
                "--format",
                "json",
                "--group",
                group,
                "--topic",
                "plain",
                "broker-1",
            ]);
            let row = &v["offsets"][0];
            assert_eq!(row["committed_offset"], 1, "{group}: {v}");
            assert_eq!(
                row["log_partition"], g["coordinator_partition"],
                "{group}: {v}"
            );
        }
    });
}

/// The rebalances left the group's `__consumer_offsets` partition cleaned
/// on every broker (its `cleaner-offset-checkpoint` entry is past 0: the
/// cleaner compacted it), and klog reads the cleaned partition: every
/// committed offset of rebalance-g is the one Kafka's Admin API reported
/// (checked on each broker by `replay_offsets_matches_kafka_committed_offsets`).
#[test]
fn rebalances_leave_a_cleaned_consumer_offsets_partition() {
    each_release(|r| {
        let groups = r.expected_json("groups.json");
        let g = groups
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["group"] == "rebalance-g")
            .expect("rebalance-g");
        let key = format!("__consumer_offsets {} ", g["coordinator_partition"]);
        for b in brokers() {
            let text =
                std::fs::read_to_string(r.path(b).join("cleaner-offset-checkpoint")).unwrap();
            let cleaned: i64 = text
                .lines()
                .find_map(|l| l.strip_prefix(key.as_str()))
                .unwrap_or_else(|| panic!("{b}: no cleaner checkpoint for {key}: {text}"))
                .trim()
                .parse()
                .unwrap();
            assert!(cleaned > 0, "{b}: {key}{cleaned}");
        }
        let v = r.json(&[
            "replay-offsets",
            "--format",
            "json",
            "--group",
            "rebalance-g",
            "broker-1",
        ]);
        assert_eq!(v["offsets"].as_array().unwrap().len(), 3, "{v}");
    });
}

/// `klog transactions --find-hanging` against `kafka-transactions
/// find-hanging --broker-id 1 --max-transaction-timeout 1`: Kafka found
/// nothing hanging (tx-open's producer last wrote long before, but tx-open
/// is Ongoing with txn-0 at its coordinator). Without the coordinator's log
/// klog cannot rule it out, and its row then holds what Kafka's
/// DescribeProducers said of that producer (the columns find-hanging prints).
#[test]
fn find_hanging_matches_kafka_transactions_find_hanging() {
    each_release(|r| {
        let tool = |name: &str| r.expected(&format!("tools/{name}"));
        // find-hanging ran right after `describe --transactional-id tx-open`,
        // whose start time plus duration is the moment of that run.
        let open = &tx_rows(&tool("transactions-describe-tx-open.txt"))[0];
        let now = open["CurrentTransactionStartTimeMs"]
            .parse::<i64>()
            .unwrap()
            + open["TransactionDurationMs"].parse::<i64>().unwrap();
        let kafka = tx_rows(&tool("transactions-find-hanging-broker-1.txt"));
        let run = |paths: &[&str]| {
            let now = now.to_string();
            let mut args = vec![
                "transactions",
                "--find-hanging",
                "--format",
                "json",
                "--now-ms",
                &now,
                // Kafka's flag, in Kafka's unit (minutes), as the tool was run.
                "--max-transaction-timeout",
                "1",
            ];
            args.extend_from_slice(paths);
            document(&r.run(&args), "transactions")
        };
        const COLUMNS: [(&str, &str); 7] = [
            ("Topic", "topic"),
            ("Partition", "partition"),
            ("ProducerId", "producer_id"),
            ("ProducerEpoch", "producer_epoch"),
            ("CoordinatorEpoch", "coordinator_epoch"),
            ("StartOffset", "start_offset"),
            ("LastTimestamp", "last_timestamp"),
        ];
        let rows = |v: &Value, all: bool| -> Vec<Vec<String>> {
            v["find_hanging"]["candidates"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|c| all || c["hanging"] == true)
                .map(|c| {
                    COLUMNS
                        .iter()
                        .map(|(_, k)| match &c[*k] {
                            Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect()
                })
                .collect()
        };
        let kafka: Vec<Vec<String>> = kafka
            .iter()
            .map(|r| COLUMNS.iter().map(|(h, _)| r[*h].clone()).collect())
            .collect();
        let v = run(&["broker-1"]);
        assert_eq!(rows(&v, false), kafka);
        assert!(kafka.is_empty());
        // Not vacuous: tx-open's transaction was a candidate, ruled out by
        // its coordinator's state.
        let candidates = v["find_hanging"]["candidates"].as_array().unwrap();
        assert_eq!(candidates.len(), 1, "{v}");
        assert_eq!(candidates[0]["transactional_id"], "tx-open");
        assert_eq!(v["find_hanging"]["complete"], true);
        // txn-0 alone: the candidate's columns are DescribeProducers' answer.
        let v = run(&["broker-1/txn-0"]);
        assert_eq!(v["find_hanging"]["complete"], false);
        let described: Vec<Vec<String>> =
            tx_rows(&tool("transactions-describe-producers-txn-0.txt"))
                .iter()
                .filter(|r| r["CurrentTransactionStartOffset"] != "None")
                .map(|r| {
                    vec![
                        "txn".to_string(),
                        "0".to_string(),
                        r["ProducerId"].clone(),
                        r["ProducerEpoch"].clone(),
                        r["LatestCoordinatorEpoch"].clone(),
                        r["CurrentTransactionStartOffset"].clone(),
                        r["LastTimestamp"].clone(),
                    ]
                })
                .collect();
        assert_eq!(described.len(), 1);
        assert_eq!(rows(&v, true), described);
    });
}

/// One `__transaction_state` record as `kafka-dump-log
/// --transaction-log-decoder` printed it, in the fields every release
/// prints: 4.1 on print the message as JSON (`transactionStatus` a number
/// in 4.1, its name from 4.2: TransactionLogValue's JSON converter), and
/// before 4.1 `TransactionLog.formatRecordKeyAndValue` printed
/// `producerId:P,producerEpoch:E,state=S,partitions=[t-p,...],
/// txnLastUpdateTimestamp=T,txnTimeoutMs=M`. `None` for a tombstone.
struct DumpedTxn {
    /// The value's version (the JSON form only).
    version: Option<i64>,
    producer_id: i64,
    producer_epoch: i64,
    timeout_ms: i64,
    state: String,
    last_update: i64,
    /// The JSON form only, with the tagged fields (absent: their defaults,
    /// ClientTransactionVersion 0, the producer ids and NextProducerEpoch -1).
    json: Option<Value>,
    /// `topic-partition`, sorted (the old form prints a set).
    partitions: Vec<String>,
}

/// `topic-partition` of each partition of a list of `{topic, IDS: [..]}`
/// (none for null), sorted.
fn partition_names(topics: &Value, ids: &str) -> Vec<String> {
    let mut out: Vec<String> = topics
        .as_array()
        .into_iter()
        .flatten()
        .flat_map(|t| {
            let topic = t["topic"].as_str().unwrap().to_string();
            t[ids]
                .as_array()
                .unwrap()
                .iter()
                .map(move |p| format!("{topic}-{p}"))
                .collect::<Vec<_>>()
        })
        .collect();
    out.sort();
    out
}

fn dumped_txn(payload: &str) -> Option<DumpedTxn> {
    // TransactionState ids (TransactionState.java).
    const STATES: [&str; 8] = [
        "Empty",
        "Ongoing",
        "PrepareCommit",
        "PrepareAbort",
        "CompleteCommit",
        "CompleteAbort",
        "Dead",
        "PrepareEpochFence",
    ];
    if payload == "<DELETE>" {
        return None;
    }
    if payload.starts_with('{') {
        let k: Value = serde_json::from_str(payload).unwrap();
        let d = k["data"].clone();
        let field = |name: &str| d[name].as_i64().unwrap();
        let state = match &d["transactionStatus"] {
            Value::String(s) => s.clone(),
            n => STATES[n.as_i64().unwrap() as usize].to_string(),
        };
        let partitions = partition_names(&d["transactionPartitions"], "partitionIds");
        return Some(DumpedTxn {
            version: Some(k["version"].as_str().unwrap().parse().unwrap()),
            producer_id: field("producerId"),
            producer_epoch: field("producerEpoch"),
            timeout_ms: field("transactionTimeoutMs"),
            state,
            last_update: field("transactionLastUpdateTimestampMs"),
            partitions,
            json: Some(d),
        });
    }
    // producerId:P,producerEpoch:E,state=S,partitions=[...],txnLastUpdateTimestamp=T,txnTimeoutMs=M
    let (head, rest) = payload.split_once(",partitions=[").unwrap();
    let (parts, tail) = rest.split_once("],").unwrap();
    let kv: BTreeMap<&str, &str> = head
        .split(',')
        .chain(tail.split(','))
        .map(|f| f.split_once([':', '=']).unwrap())
        .collect();
    let num = |k: &str| kv[k].parse::<i64>().unwrap();
    let mut partitions: Vec<String> = parts
        .split(',')
        .filter(|p| !p.is_empty())
        .map(String::from)
        .collect();
    partitions.sort();
    Some(DumpedTxn {
        version: None,
        producer_id: num("producerId"),
        producer_epoch: num("producerEpoch"),
        timeout_ms: num("txnTimeoutMs"),
        state: kv["state"].to_string(),
        last_update: num("txnLastUpdateTimestamp"),
        partitions,
        json: None,
    })
}

/// Every `__transaction_state` record: klog's decoded value, field by
/// field, is what `kafka-dump-log --transaction-log-decoder` printed for it
/// (values v0 from transaction version 1 clients, v1 with the tagged fields
/// of transaction version 2).
#[test]
fn transaction_log_records_decode_as_kafka_dump_log_prints_them() {
    each_release(|r| {
        let mut compared = 0;
        for (rel, offset, rest, d) in dumped_records(r, &["__transaction_state"]) {
            let at = format!("{rel} offset {offset}");
            let payload = rest.split_once(" payload: ").unwrap().1;
            let v = &d["value"];
            let Some(k) = dumped_txn(payload) else {
                assert_eq!(*v, "tombstone", "{at}");
                compared += 1;
                continue;
            };
            if let Some(version) = k.version {
                assert_eq!(v["version"], version, "{at}");
            }
            assert_eq!(v["producer_id"], k.producer_id, "{at}");
            assert_eq!(v["producer_epoch"], k.producer_epoch, "{at}");
            assert_eq!(v["timeout_ms"], k.timeout_ms, "{at}");
            assert_eq!(v["state"], k.state.as_str(), "{at}");
            assert_eq!(v["last_update_timestamp"], k.last_update, "{at}");
            assert_eq!(
                partition_names(&v["partitions"], "partitions"),
                k.partitions,
                "{at}"
            );
            if let Some(d) = &k.json {
                let field = |name: &str, default: i64| {
                    d.get(name)
                        .filter(|x| !x.is_null())
                        .map_or(default, |x| x.as_i64().unwrap())
                };
                assert_eq!(
                    v["start_timestamp"],
                    field("transactionStartTimestampMs", 0),
                    "{at}"
                );
                for (ours, theirs, default) in [
                    ("client_transaction_version", "clientTransactionVersion", 0),
                    ("previous_producer_id", "previousProducerId", -1),
                    ("next_producer_id", "nextProducerId", -1),
                    ("next_producer_epoch", "nextProducerEpoch", -1),
                ] {
                    assert_eq!(v[ours], field(theirs, default), "{at} {ours}");
                }
            }
            compared += 1;
        }
        assert!(compared >= 20, "{compared} records compared");
    });
}

/// `dump-segment --index-sanity-check` prints what `kafka-dump-log
/// --index-sanity-check` printed for every `.index` of every release, byte
/// for byte ("passed sanity check." or "is empty."), on the indexes as the
/// brokers left them (preallocated ones at their real size).
#[test]
fn index_sanity_check_is_kafka_dump_logs() {
    each_release(|r| {
        let expected = r.source.join("expected/dump-log");
        let mut want: Vec<(String, String)> = Vec::new();
        for broker in std::fs::read_dir(&expected).unwrap() {
            for folder in std::fs::read_dir(broker.unwrap().path()).unwrap() {
                for txt in std::fs::read_dir(folder.unwrap().path()).unwrap() {
                    let txt = txt.unwrap().path();
                    let name = txt.file_name().unwrap().to_string_lossy().into_owned();
                    let Some(base) = name.strip_suffix(".index-sanity.txt") else {
                        continue;
                    };
                    let rel = txt.parent().unwrap().strip_prefix(&expected).unwrap();
                    let index = rel.join(format!("{base}.index"));
                    want.push((
                        index.to_str().unwrap().to_string(),
                        std::fs::read_to_string(&txt).unwrap(),
                    ));
                }
            }
        }
        want.sort();
        assert!(
            want.len() >= 100,
            "only {} sanity checks recorded",
            want.len()
        );
        for chunk in want.chunks(400) {
            let mut args = vec!["dump-segment", "--index-sanity-check"];
            args.extend(chunk.iter().map(|(index, _)| index.as_str()));
            let o = r.run(&args);
            assert_eq!(
                o.status.code(),
                Some(0),
                "{}",
                String::from_utf8_lossy(&o.stderr)
            );
            let kafka: String = chunk.iter().map(|(_, text)| text.as_str()).collect();
            assert_eq!(String::from_utf8_lossy(&o.stdout), kafka);
        }
    });
}

/// `verify-crc --deep` and `transactions` give one answer about hanging
/// transactions on every broker of every release (find-hanging's rule,
/// with the same now and the same `__transaction_state`). README: the data
/// topics are stamped BASE = 1767225600000 plus a few ms, and the one
/// transaction left open is tx-open's in txn-0, Ongoing at its coordinator
/// (Kafka's find-hanging lists nothing): a day after BASE it is a
/// candidate but not hanging; a minute after it is no candidate; from
/// txn-0 alone, a day after, it is not judged.
#[test]
fn verify_crc_deep_and_find_hanging_give_one_answer() {
    const BASE: i64 = 1_767_225_600_000;
    const DAY: i64 = 24 * 60 * 60_000;
    each_release(|r| {
        assert!(tx_rows(&r.expected("tools/transactions-find-hanging-broker-1.txt")).is_empty());
        let run = |args: &[&str]| r.run(args);
        for broker in ["broker-1", "broker-2", "broker-3"] {
            for now in [Some(BASE + 60_000), Some(BASE + DAY)] {
                let a = one_hanging_answer(run, &[broker], now);
                assert!(
                    a.hanging.is_empty() && a.not_judged.is_empty(),
                    "{broker}: {a:?}"
                );
            }
            let a = one_hanging_answer(run, &[broker], None);
            assert!(a.hanging.is_empty(), "{broker}: {a:?}");
            assert_eq!(a.not_judged.len(), 1, "{broker}: {a:?}");
            assert!(a.not_judged[0].contains("pass --now-ms"), "{a:?}");
            let txn = format!("{broker}/txn-0");
            let a = one_hanging_answer(run, &[&txn], Some(BASE + DAY));
            assert!(a.hanging.is_empty(), "{txn}: {a:?}");
            assert_eq!(a.not_judged.len(), 1, "{txn}: {a:?}");
            assert!(a.not_judged[0].contains("no __transaction_state"), "{a:?}");
        }
    });
}

/// Kafka's own log of node 3's first start after the SIGKILL
/// (`expected/restart/node-3.log`, recorded by run.sh from the broker's
/// output): per partition, the segments its `LogLoader` recovered
/// ("Recovering unflushed segment N"), and the log start and end each log
/// loaded (`LogManager`: "Completed load of Log(…)"); whether it skipped
/// recovery for a clean shutdown.
pub(crate) struct KafkaRestart {
    pub(crate) recovered: BTreeMap<String, Vec<i64>>,
    pub(crate) loaded: BTreeMap<String, (i64, i64)>,
    pub(crate) clean: bool,
}

pub(crate) fn kafka_restart(log: &str) -> KafkaRestart {
    let mut r = KafkaRestart {
        recovered: BTreeMap::new(),
        loaded: BTreeMap::new(),
        clean: false,
    };
    let field = |line: &str, name: &str| -> Option<String> {
        let at = line.find(name)? + name.len();
        let rest = &line[at..];
        let end = rest.find([',', ')', ']', ' ']).unwrap_or(rest.len());
        Some(rest[..end].to_string())
    };
    for line in log.lines() {
        if line.contains("since clean shutdown") {
            r.clean = true;
        } else if let Some(seg) = field(line, "Recovering unflushed segment ") {
            let part = field(line, "[LogLoader partition=").unwrap();
            let seg: i64 = seg.trim_end_matches('.').parse().unwrap();
            r.recovered.entry(part).or_default().push(seg);
        } else if line.contains("Completed load of Log(") {
            let topic = field(line, "topic=").unwrap();
            let partition = field(line, "partition=").unwrap();
            let start = field(line, "logStartOffset=").unwrap().parse().unwrap();
            let end = field(line, "logEndOffset=").unwrap().parse().unwrap();
            r.loaded
                .insert(format!("{topic}-{partition}"), (start, end));
        }
    }
    r
}

#[test]
fn recovery_preview_of_the_killed_broker_is_what_its_restart_did() {
    let mut compared = 0;
    let mut without = Vec::new();
    each_release(|real| {
        if !real.answers("restart") {
            return;
        }
        let log = std::fs::read_to_string(real.source.join("expected/restart/node-3.log")).unwrap();
        let kafka = kafka_restart(&log);
        // Node 3 was killed: no clean-shutdown marker, every log recovered.
        assert!(
            !kafka.clean,
            "{}: Kafka found a clean shutdown",
            real.release
        );
        assert!(!kafka.loaded.is_empty(), "{}: no log loaded", real.release);
        let doc = real.json(&[
            "verify-crc",
            "--recovery-preview",
            "--format",
            "json",
            "broker-3",
        ]);
        assert_eq!(doc["restarts"][0]["shutdown"]["state"], "unclean");
        let mut checked = 0;
        for p in doc["partitions"].as_array().unwrap() {
            let name = format!(
                "{}-{}",
                p["topic"].as_str().unwrap(),
                p["partition"].as_i64().unwrap()
            );
            let Some(&(start, end)) = kafka.loaded.get(&name) else {
                // The metadata log is loaded by the raft layer, not LogManager.
                assert_eq!(p["topic"], "__cluster_metadata", "{}: {name}", real.release);
                continue;
            };
            checked += 1;
            let what = format!("{} {name}", real.release);
            // What the log loads.
            assert_eq!(p["log_start_offset"].as_i64(), Some(start), "{what}");
            assert_eq!(p["log_end_offset"].as_i64(), Some(end), "{what}");
            assert!(p["cuts"].as_array().unwrap().is_empty(), "{what}");
            // The segments recovered: from the one holding the recovery point on.
            let recovered = kafka.recovered.get(&name).cloned().unwrap_or_default();
            assert_eq!(
                p["rescanned_segments"].as_u64(),
                Some(recovered.len() as u64),
                "{what}: Kafka recovered {recovered:?}"
            );
            if let Some(first) = recovered.first() {
                assert_eq!(p["from_segment"].as_i64(), Some(*first), "{what}");
            }
        }
        assert_eq!(
            checked,
            kafka.loaded.len(),
            "{}: every log Kafka loaded",
            real.release
        );
    });
    for tree in trees() {
        let manifest: Value = serde_json::from_str(
            &std::fs::read_to_string(tree.join("expected/manifest.json")).unwrap(),
        )
        .unwrap();
        if manifest["answers"]
            .as_array()
            .is_some_and(|a| a.iter().any(|x| x == "restart"))
        {
            compared += 1;
        } else {
            without.push(manifest["kafka"].as_str().unwrap_or("?").to_string());
        }
    }
    if !without.is_empty() {
        eprintln!(
            "recovery_preview_of_the_killed_broker: releases recorded before run.sh kept the restart log: {without:?} \
             (regenerate them: tests/kafka/run.sh --kafka VERSION)"
        );
    }
    assert!(
        compared > 0,
        "no release of the matrix has expected/restart/node-3.log"
    );
}
