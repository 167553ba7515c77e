//! klog against a real Kafka cluster with tiered storage (KIP-405):
//! `fixtures/kafka-tiered/<version>/` holds its log directories, its
//! remote storage folder (Kafka's LocalTieredStorage) and Kafka's own
//! answers (written by `tests/kafka/tiered.sh`; see
//! fixtures/kafka-tiered/README.md). Every expected value here comes from
//! those recorded answers, never from klog.
//!
//! `KLOG_KAFKA_TIERED=DIR` points the tests at one other tree of the same
//! shape instead (`tests/kafka/tiered.sh --check`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::support::{copy_dir, document, repo, stderr, stdout};

/// The log directories of the three nodes.
const BROKERS: [&str; 3] = ["broker-1", "broker-2", "broker-3"];

/// The trees to compare: `KLOG_KAFKA_TIERED` alone when set, else every
/// release folder of `fixtures/kafka-tiered/`.
fn trees() -> Vec<PathBuf> {
    if let Some(one) = std::env::var_os("KLOG_KAFKA_TIERED") {
        return vec![PathBuf::from(one)];
    }
    let root = repo().join("fixtures/kafka-tiered");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected").is_dir())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no release under {}", root.display());
    out
}

/// One release's tree, copied (the preallocated indexes given back their
/// real size), and its answers.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    source: PathBuf,
    /// `X.Y` of the release (`expected/VERSION`).
    release: String,
}

impl Tree {
    fn open(source: &Path) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        for entry in std::fs::read_dir(source).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name != "expected" && source.join(&name).is_dir() {
                copy_dir(&source.join(&name), &root.join(&name));
            }
        }
        let sizes = std::fs::read_to_string(source.join("index-sizes.tsv")).unwrap();
        for line in sizes.lines().filter(|l| !l.starts_with('#')) {
            let (path, size) = line.split_once('\t').unwrap();
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(root.join(path))
                .unwrap();
            f.set_len(size.parse().unwrap()).unwrap();
        }
        let version = std::fs::read_to_string(source.join("expected/VERSION")).unwrap();
        let full = version.lines().next().unwrap().trim_start_matches("kafka ");
        let release = full.rsplit_once('.').unwrap().0.to_string();
        Tree {
            _dir: dir,
            root,
            source: source.to_path_buf(),
            release,
        }
    }

    fn run(&self, args: &[&str]) -> Output {
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

    /// Run klog with `--format json`, require exit `code`, return its document.
    fn json(&self, code: i32, args: &[&str]) -> Value {
        let mut all = args.to_vec();
        all.extend(["--format", "json"]);
        let o = self.run(&all);
        assert_eq!(o.status.code(), Some(code), "klog {all:?}: {}", stderr(&o));
        document(&o, args[0])
    }

    fn expected(&self, rel: &str) -> String {
        std::fs::read_to_string(self.source.join("expected").join(rel)).unwrap()
    }

    fn expected_json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.expected(rel)).unwrap()
    }

    /// Kafka's ListOffsets answers (`list-offsets.json`), by topic.
    fn offsets(&self) -> BTreeMap<String, Value> {
        let all = self.expected_json("list-offsets.json");
        all.as_array()
            .unwrap()
            .iter()
            .map(|p| (p["topic"].as_str().unwrap().to_string(), p.clone()))
            .collect()
    }

    /// Every file under `expected/dump-log/<under>` ending in `suffix`,
    /// relative to `expected/dump-log/`.
    fn dumps(&self, under: &str, suffix: &str) -> Vec<String> {
        let base = self.source.join("expected/dump-log");
        let mut out = Vec::new();
        let mut stack = vec![base.join(under)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_str().unwrap().ends_with(suffix) {
                    out.push(p.strip_prefix(&base).unwrap().to_str().unwrap().to_string());
                }
            }
        }
        out.sort();
        out
    }
}

/// Run `test` on every release's tree; each failure names its tree.
fn each_tree(test: impl Fn(&Tree)) {
    for source in trees() {
        let t = Tree::open(&source);
        test(&t);
    }
}

#[test]
fn remote_log_metadata_decoder_matches_kafka_dump_log() {
    each_tree(|t| {
        let dumps: Vec<String> = t
            .dumps("", ".log.txt")
            .into_iter()
            .filter(|d| d.contains("/__remote_log_metadata-"))
            .collect();
        assert!(dumps.len() >= 7, "{dumps:?}");
        let mut records = 0;
        for d in dumps {
            let seg = d.trim_end_matches(".txt");
            let o = t.run(&[
                "dump-segment",
                "--deep-iteration",
                "--print-data-log",
                "--remote-log-metadata-decoder",
                "--kafka-release",
                &t.release,
                "--files",
                seg,
            ]);
            let kafka = t.expected(&format!("dump-log/{d}"));
            assert_eq!(stdout(&o), kafka, "{seg}: {}", stderr(&o));
            records += kafka.lines().filter(|l| l.starts_with("| offset:")).count();
        }
        // The crafted segment's 21 records and the cluster's own.
        assert!(records > 21, "{records} records compared");
    });
}

#[test]
fn remote_segment_files_are_read_by_their_kind() {
    // kafka-dump-log fails on the remote names (`<offset>-<segment id>.txnindex`):
    // its answer is for a copy renamed as a local file. klog reads the remote
    // name itself, by its suffix; the lines after `Dumping <path>` are the same
    // (an empty index's line names its path).
    each_tree(|t| {
        let mut compared = 0;
        for d in t.dumps("remote-as-local", ".txt") {
            let local = d
                .trim_start_matches("remote-as-local/")
                .trim_end_matches(".txt");
            let (folder, name) = local.rsplit_once('/').unwrap();
            let (base, suffix) = name.split_once('.').unwrap();
            // klog prints producer snapshots in its own form, not kafka-dump-log's.
            if suffix == "snapshot" {
                continue;
            }
            let remote = std::fs::read_dir(t.root.join(folder))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .find(|n| n.starts_with(&format!("{base}-")) && n.ends_with(&format!(".{suffix}")))
                .unwrap();
            let path = format!("{folder}/{remote}");
            let o = t.run(&[
                "dump-segment",
                "--deep-iteration",
                "--print-data-log",
                "--kafka-release",
                &t.release,
                &path,
            ]);
            assert_eq!(o.status.code(), Some(0), "{path}: {}", stderr(&o));
            let kafka = t
                .expected(&format!("dump-log/{d}"))
                .replace(&format!("remote-as-local/{local}"), &path);
            let klog = stdout(&o);
            assert_eq!(
                klog.lines().skip(1).collect::<Vec<_>>(),
                kafka.lines().skip(1).collect::<Vec<_>>(),
                "{path}"
            );
            compared += 1;
        }
        assert!(compared >= 15, "{compared} remote files compared");
        // A file of a kind klog does not know is refused, not read as a log.
        let folder = std::fs::read_dir(t.root.join("remote/kafka-tiered-storage"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let manifest = folder.join("00000000000000000000-AAAAAAAAAAAAAAAAAAAAAA.rsm-manifest");
        std::fs::write(&manifest, b"{}").unwrap();
        let o = t.run(&["dump-segment", manifest.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        assert!(stderr(&o).contains("remote segment"), "{}", stderr(&o));
    });
}

/// A partition of klog's JSON (`info` directories, `lag` rows...) by topic.
fn by_topic<'a>(rows: &'a Value, topic: &str) -> &'a Value {
    rows.as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == topic && p["partition"] == 0)
        .unwrap_or_else(|| panic!("no {topic}-0 in {rows}"))
}

#[test]
fn info_log_start_is_kafkas_with_the_local_log_start_beside_it() {
    // Kafka's answers, on every replica (the restart logged each one's own):
    // ListOffsets earliest is the log start, earliest-local the local log
    // start, latest-tiered the last offset in remote storage.
    each_tree(|t| {
        let kafka = t.offsets();
        for broker in BROKERS {
            let doc = t.json(0, &["info", broker]);
            let parts = &doc["directories"][0]["partitions"];
            for (topic, k) in &kafka {
                let p = by_topic(parts, topic);
                let ctx = format!("{broker} {topic}: {p}");
                assert_eq!(p["log_start_offset"], k["earliest"], "{ctx}");
                assert_eq!(p["local_log_start_offset"], k["earliest_local"], "{ctx}");
                assert_eq!(p["remote_end_offset"], k["latest_tiered"], "{ctx}");
                assert_eq!(p["high_watermark"], k["latest_read_uncommitted"], "{ctx}");
                // Broker 1 holds the KRaft metadata (the topic's config says it).
                let by = if broker == "broker-1" {
                    "topic_config"
                } else {
                    "remote_log_metadata"
                };
                assert_eq!(p["tiered_by"], by, "{ctx}");
            }
            // A healthy cluster's directories: nothing to warn of.
            let counts = &doc["finding_counts"];
            assert_eq!(
                (counts["errors"].as_u64(), counts["warnings"].as_u64()),
                (Some(0), Some(0)),
                "{broker}: {doc}"
            );
        }
        // The same after a restart on these directories.
        let restarted = t.expected_json("list-offsets-restarted.json");
        for k in restarted.as_array().unwrap() {
            let o = &t.offsets()[k["topic"].as_str().unwrap()];
            assert_eq!(
                (&k["earliest"], &k["earliest_local"]),
                (&o["earliest"], &o["earliest_local"])
            );
        }
        let text = stdout(&t.run(&["info", "broker-2"]));
        assert!(
            text.contains("LOCAL-LOG-START-OFFSET") && text.contains("REMOTE-OFFSETS"),
            "{text}"
        );
    });
}

#[test]
fn info_without_the_remote_log_metadata_takes_the_log_start_from_the_checkpoint() {
    // Broker 1 without `__remote_log_metadata`: the topic's config (KRaft
    // metadata) says it has tiered storage; the checkpoint says the log start.
    each_tree(|t| {
        for e in std::fs::read_dir(t.root.join("broker-1")).unwrap() {
            let path = e.unwrap().path();
            if path
                .file_name()
                .unwrap()
                .to_str()
                .unwrap()
                .starts_with("__remote_log_metadata-")
            {
                std::fs::remove_dir_all(path).unwrap();
            }
        }
        let doc = t.json(0, &["info", "broker-1"]);
        let parts = &doc["directories"][0]["partitions"];
        for (topic, k) in t.offsets() {
            let p = by_topic(parts, &topic);
            assert_eq!(p["log_start_offset"], k["earliest"], "{topic}: {p}");
            assert_eq!(
                p["local_log_start_offset"], k["earliest_local"],
                "{topic}: {p}"
            );
            assert_eq!(p["tiered_by"], "topic_config");
            assert_eq!(p["remote_end_offset"], Value::Null);
        }
    });
}

/// kafka-consumer-groups --describe's rows: column name → value.
fn describe_rows(text: &str) -> Vec<BTreeMap<String, String>> {
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let Some(head) = lines.next() else {
        return Vec::new();
    };
    let names: Vec<&str> = head.split_whitespace().collect();
    lines
        .map(|l| {
            names
                .iter()
                .map(|n| n.to_string())
                .zip(l.split_whitespace().map(str::to_string))
                .collect()
        })
        .collect()
}

#[test]
fn lag_resumes_where_kafka_resumes_and_matches_consumer_groups() {
    each_tree(|t| {
        let kafka = t.offsets();
        let resumed = t.expected_json("resume.json");
        for broker in BROKERS {
            let doc = t.json(0, &["lag", broker]);
            let rows = doc["partitions"].as_array().unwrap();
            for g in t.expected_json("groups.json").as_array().unwrap() {
                let group = g["group"].as_str().unwrap();
                let row = rows.iter().find(|r| r["group"] == group).unwrap();
                let ctx = format!("{broker} {group}: {row}");
                assert_eq!(row["committed_offset"], g["committed"], "{ctx}");
                // kafka-consumer-groups: CURRENT-OFFSET, LOG-END-OFFSET (the high watermark), LAG.
                let describe =
                    describe_rows(&t.expected(&format!("tools/groups-describe-{group}.txt")));
                let d = &describe[0];
                assert_eq!(
                    row["high_watermark"].to_string(),
                    d["LOG-END-OFFSET"],
                    "{ctx}"
                );
                assert_eq!(row["lag"].to_string(), d["LAG"], "{ctx}");
                assert_eq!(
                    row["log_start_offset"], kafka["tiered"]["earliest"],
                    "{ctx}"
                );
                assert_eq!(
                    row["local_log_start_offset"], kafka["tiered"]["earliest_local"],
                    "{ctx}"
                );
                // A consumer of the group (auto.offset.reset=none) resumed at the
                // committed offset, in remote storage or not: no reset.
                for r in resumed
                    .as_array()
                    .unwrap()
                    .iter()
                    .filter(|r| r["group"] == group)
                {
                    assert_eq!(r["error"], Value::Null, "{ctx}: {r}");
                    assert_eq!(r["position"], g["committed"], "{ctx}: {r}");
                    assert_eq!(row["status"], "ok", "{ctx}: Kafka resumed it at {r}");
                }
                // Pending records below the local log start are not on these disks.
                let remote =
                    row["committed_offset"].as_i64() < kafka["tiered"]["earliest_local"].as_i64();
                assert_eq!(row["pending_records"].is_null(), remote, "{ctx}");
            }
        }
        // `klog cluster` over the three: each group lands where Kafka resumed it.
        let doc = t.json(0, &["cluster", "broker-1", "broker-2", "broker-3"]);
        for r in resumed.as_array().unwrap() {
            let g = doc["groups"]
                .as_array()
                .unwrap()
                .iter()
                .find(|g| g["group"] == r["group"])
                .unwrap();
            assert_eq!(g["status"], "ok", "{g}");
            assert_eq!(g["lands"]["kind"], "resumes", "{g}");
            assert_eq!(g["lands"]["offset"], r["position"], "{g}");
        }
    });
}

#[test]
fn reset_to_earliest_goes_to_kafkas_log_start() {
    each_tree(|t| {
        let kafka = t.offsets();
        for broker in BROKERS {
            for topic in kafka.keys() {
                // Brokers 2 and 3 hold no KRaft metadata: the offsets topic's
                // partition count (3, as the cluster has it) is given.
                let doc = t.json(
                    0,
                    &[
                        "reset-offsets",
                        broker,
                        "--offsets-partitions",
                        "3",
                        "--group",
                        "tiered-g",
                        "--topic",
                        topic,
                        "--to-earliest",
                    ],
                );
                let row = by_topic(&doc["partitions"], topic);
                assert_eq!(
                    row["new_offset"], kafka[topic]["earliest"],
                    "{broker} {topic}: {row}"
                );
            }
        }
    });
}

/// What each node logged of the tiered partitions it loaded on its restart:
/// (node, topic) → (logStartOffset, local-log-start-offset, log-end-offset).
fn loaded(t: &Tree) -> BTreeMap<(String, String), (i64, i64, i64)> {
    let mut out = BTreeMap::new();
    for n in 1..=3 {
        for line in t.expected(&format!("restart/node-{n}.log")).lines() {
            let Some(rest) = line.split("Completed load of Log(").nth(1) else {
                continue;
            };
            let field = |name: &str, end: char| -> i64 {
                let at = rest.split(name).nth(1).unwrap();
                at[..at.find(end).unwrap()].trim().parse().unwrap()
            };
            let topic = rest
                .split("topic=")
                .nth(1)
                .unwrap()
                .split(',')
                .next()
                .unwrap();
            out.insert(
                (format!("broker-{n}"), topic.to_string()),
                (
                    field("logStartOffset=", ','),
                    field("local-log-start-offset ", ' '),
                    field("log-end-offset ", ' '),
                ),
            );
        }
    }
    out
}

#[test]
fn restart_prediction_loads_what_the_brokers_loaded() {
    each_tree(|t| {
        let loaded = loaded(t);
        assert_eq!(loaded.len(), 6, "{loaded:?}");
        for ((broker, topic), (start, local, end)) in loaded {
            let doc = t.json(0, &["verify-crc", "--recovery-preview", &broker]);
            let p = by_topic(&doc["partitions"], &topic);
            let ctx = format!("{broker} {topic}: {p}");
            assert_eq!(p["log_start_offset"], start, "{ctx}");
            assert_eq!(p["local_log_start_offset"], local, "{ctx}");
            assert_eq!(p["log_end_offset"], end, "{ctx}");
        }
    });
}

#[test]
fn transactions_say_what_lives_in_remote_segments() {
    each_tree(|t| {
        let kafka = t.offsets();
        // The remote segments whose transaction index holds aborted
        // transactions, as kafka-dump-log decoded `__remote_log_metadata`.
        let mut aborted = Vec::new();
        for d in t
            .dumps("broker-1", ".log.txt")
            .iter()
            .filter(|d| d.contains("__remote_log_metadata"))
        {
            for line in t.expected(&format!("dump-log/{d}")).lines() {
                if line.contains(":tiered-0, ") && line.contains("txnIdxEmpty=false") {
                    let num = |k: &str| {
                        line.split(k)
                            .nth(1)
                            .unwrap()
                            .split(',')
                            .next()
                            .unwrap()
                            .to_string()
                    };
                    aborted.push(format!("{}..={}", num("startOffset="), num("endOffset=")));
                }
            }
        }
        assert!(!aborted.is_empty());
        // A read_committed consumer skipped records the local log does not hold.
        let consumed = t.expected_json("consumed.json");
        let offsets = |iso: &str| -> Vec<i64> {
            let c = consumed
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["topic"] == "tiered" && c["isolation"] == iso)
                .unwrap();
            c["offsets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_i64().unwrap())
                .collect()
        };
        let local = kafka["tiered"]["earliest_local"].as_i64().unwrap();
        let skipped: Vec<i64> = offsets("read_uncommitted")
            .into_iter()
            .filter(|o| !offsets("read_committed").contains(o))
            .collect();
        assert!(
            !skipped.is_empty() && skipped.iter().all(|&o| o < local),
            "{skipped:?}"
        );
        let range = format!("offsets {}..={}", kafka["tiered"]["earliest"], local - 1);
        for broker in BROKERS {
            let doc = t.json(0, &["transactions", broker]);
            let notes: Vec<&Value> = doc["findings"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|f| f["kind"] == "transactions_in_remote_storage")
                .collect();
            // tiered-trim's local log starts at its log start: nothing remote to say.
            assert_eq!(notes.len(), 1, "{broker}: {notes:?}");
            let detail = notes[0]["detail"].as_str().unwrap();
            assert!(
                detail.starts_with("tiered-0: ") && detail.contains(&range),
                "{detail}"
            );
            for a in &aborted {
                assert!(detail.contains(a), "{broker}: {detail} does not name {a}");
            }
        }
    });
}

#[test]
fn reset_to_datetime_never_answers_other_than_kafka() {
    // Kafka looks for a time in the remote segments first
    // (`RemoteLogManager.findOffsetByTimestamp`): where the answer may lie
    // there klog refuses (it cannot read them); elsewhere it answers what
    // ListOffsets answered.
    each_tree(|t| {
        for (topic, k) in t.offsets() {
            for q in k["for_timestamp"].as_array().unwrap() {
                let time = q["query"].as_i64().unwrap().to_string();
                let args = [
                    "reset-offsets",
                    "broker-1",
                    "--group",
                    "tiered-g",
                    "--topic",
                    &topic,
                    "--to-datetime",
                    &time,
                    "--format",
                    "json",
                ];
                let o = t.run(&args);
                let ctx = format!("{topic} at {time}: Kafka {q}");
                match o.status.code() {
                    Some(2) => assert!(
                        stderr(&o).contains("tiered storage"),
                        "{ctx}: {}",
                        stderr(&o)
                    ),
                    Some(0) => {
                        let doc = document(&o, "reset-offsets");
                        let row = by_topic(&doc["partitions"], &topic);
                        // No record at or after the time: the tool falls back to the latest offset.
                        let kafka = match q["offset"].as_i64().unwrap() {
                            -1 => k["latest_read_uncommitted"].as_i64().unwrap(),
                            o => o,
                        };
                        assert_eq!(row["new_offset"], kafka, "{ctx}");
                    }
                    other => panic!("{ctx}: exit {other:?}: {}", stderr(&o)),
                }
            }
        }
        // Where the local log is all there is, klog answers.
        let trim = &t.offsets()["tiered-trim"];
        let local = trim["earliest_local"].as_i64().unwrap();
        assert!(trim["for_timestamp"]
            .as_array()
            .unwrap()
            .iter()
            .any(|q| q["offset"].as_i64().unwrap() >= local));
    });
}
