//! klog's writers against real Kafka: the writers scenario of
//! `tests/kafka/run.sh` (see fixtures/kafka-real/README.md). klog wrote into
//! a stopped 3-node cluster's log directories, every replica's directory
//! given to every write (`expected/writers/klog.txt`: the commands, their
//! exit codes and output); `writers/after-klog/` holds the partition folders
//! as klog left them; the cluster then restarted on them, and
//! `expected/writers/` holds Kafka's answers and what the brokers logged;
//! `writers/after-restart/` the same folders after the restarted cluster's
//! controlled shutdown.
//!
//! The bar (issue: writers a broker takes as its own): Kafka's committed
//! offsets are what klog predicts, the salvaged partition serves what klog
//! kept, klog's batches are byte-identical on every replica, no broker
//! truncated, recovered or re-fetched them, and each written segment's time
//! index ends where a broker's clean shutdown leaves it.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::kafka_real::each_tree;
use crate::support::{document, dump_entries, stderr};

/// One release's writers scenario.
struct Writers {
    tree: PathBuf,
}

impl Writers {
    fn expected(&self, rel: &str) -> String {
        let p = self.tree.join("expected/writers").join(rel);
        std::fs::read_to_string(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()))
    }

    fn expected_json(&self, rel: &str) -> Value {
        serde_json::from_str(&self.expected(rel)).unwrap()
    }

    /// Kafka's answers from before klog's writes (the main scenarios).
    fn before_json(&self, rel: &str) -> Value {
        let p = self.tree.join("expected").join(rel);
        serde_json::from_str(&std::fs::read_to_string(p).unwrap()).unwrap()
    }

    fn after_klog(&self, rel: &str) -> PathBuf {
        self.tree.join("writers/after-klog").join(rel)
    }

    fn after_restart(&self, rel: &str) -> PathBuf {
        self.tree.join("writers/after-restart").join(rel)
    }

    /// The writes this release ran (`expected/writers/writes.txt`).
    fn wrote(&self, what: &str) -> bool {
        self.expected("writes.txt").lines().any(|l| l == what)
    }

    fn klog(&self, args: &[&str]) -> std::process::Output {
        assert_cmd::Command::cargo_bin("klog")
            .unwrap()
            .current_dir(&self.tree)
            .env("NO_COLOR", "1")
            .env("TZ", "UTC")
            .args(args)
            .output()
            .unwrap()
    }

    /// The partition folders klog's writes changed, as `topic-N` names.
    fn written_partitions(&self) -> BTreeSet<String> {
        self.expected("changed-by-klog.tsv")
            .lines()
            .filter_map(|l| {
                let path = l.split('\t').next()?;
                let mut parts = path.split('/');
                let _broker = parts.next()?;
                let folder = parts.next()?;
                parts.next().map(|_| folder.to_string())
            })
            .collect()
    }
}

/// Every release's writers scenario (see [`each_tree`]). A tree without
/// the scenario fails: it was recorded before the scenario existed.
fn each_release(test: impl Fn(&Writers)) {
    each_tree(|tree| {
        assert!(
            tree.join("expected/writers").is_dir(),
            "no writers scenario in {} (regenerate it with tests/kafka/run.sh --kafka RELEASE)",
            tree.display()
        );
        test(&Writers {
            tree: tree.to_path_buf(),
        })
    })
}

fn brokers() -> [&'static str; 3] {
    ["broker-1", "broker-2", "broker-3"]
}

/// The group's committed offsets by (topic, partition), from a groups.json.
fn committed(groups: &Value, group: &str) -> Option<BTreeMap<(String, i64), i64>> {
    let g = groups
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == group)?;
    Some(
        g["offsets"]
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    (
                        p["topic"].as_str().unwrap().to_string(),
                        p["partition"].as_i64().unwrap(),
                    ),
                    p["committed"].as_i64().unwrap(),
                )
            })
            .collect(),
    )
}

fn key(topic: &str, partition: i64) -> (String, i64) {
    (topic.to_string(), partition)
}

/// What each write meant to do, checked against Kafka's answers after the
/// restart: the expected offsets come from Kafka's answers before the
/// writes and the rule of each command, not from klog.
#[test]
fn kafka_serves_the_offsets_each_write_set() {
    each_release(|w| {
        let before = w.before_json("groups.json");
        let after = w.expected_json("groups.json");
        let plain_earliest = w
            .before_json("list-offsets.json")
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["topic"] == "plain" && p["partition"] == 0)
            .unwrap()["earliest"]
            .as_i64()
            .unwrap();
        // reset-offsets --to-earliest: plain-0 at the log start.
        let classic = committed(&after, "classic-g").expect("classic-g after the restart");
        assert_eq!(classic.get(&key("plain", 0)), Some(&plain_earliest));
        // reset-offsets --shift-by -3 (KIP-848 group).
        if w.wrote("reset-shift") {
            let was = committed(&before, "consumer-g").unwrap()[&key("plain", 0)];
            let now = committed(&after, "consumer-g").expect("consumer-g after the restart");
            assert_eq!(now.get(&key("plain", 0)), Some(&(was - 3)));
        }
        // commit: a group klog created.
        let new = committed(&after, "klog-commit-g").expect("klog-commit-g after the restart");
        assert_eq!(new, BTreeMap::from([(key("plain", 0), 7)]));
        // tombstone --topic codecs --partition 3: that offset gone, the rest kept.
        let mut want = committed(&before, "codecs-g").unwrap();
        assert!(want.remove(&key("codecs", 3)).is_some());
        assert_eq!(committed(&after, "codecs-g").unwrap(), want);
        // tombstone --delete-group: Kafka no longer lists it.
        assert!(committed(&before, "reset-ts-g").is_some());
        assert!(
            committed(&after, "reset-ts-g").is_none(),
            "reset-ts-g is listed after its deletion"
        );
        let listed = w.expected("tools/groups-list.txt");
        assert!(
            !listed.lines().any(|l| l.trim() == "reset-ts-g"),
            "{listed}"
        );
        assert!(
            listed.lines().any(|l| l.trim() == "klog-commit-g"),
            "{listed}"
        );
        // Every other group is as it was.
        for g in before.as_array().unwrap() {
            let name = g["group"].as_str().unwrap();
            if ["classic-g", "consumer-g", "codecs-g", "reset-ts-g"].contains(&name) {
                continue;
            }
            assert_eq!(
                committed(&after, name),
                committed(&before, name),
                "{name} changed"
            );
        }
    });
}

/// `klog replay-offsets` of the partitions as klog left them predicts every
/// committed offset Kafka serves from them after the restart.
#[test]
fn replay_offsets_of_what_klog_wrote_is_what_kafka_serves() {
    each_release(|w| {
        let dir = w.after_klog("broker-1");
        let o = w.klog(&["replay-offsets", "--format", "json", dir.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let doc = document(&o, "replay-offsets");
        let mut klog: BTreeMap<String, BTreeMap<(String, i64), i64>> = BTreeMap::new();
        for row in doc["offsets"].as_array().unwrap() {
            klog.entry(row["group"].as_str().unwrap().to_string())
                .or_default()
                .insert(
                    key(
                        row["topic"].as_str().unwrap(),
                        row["partition"].as_i64().unwrap(),
                    ),
                    row["committed_offset"].as_i64().unwrap(),
                );
        }
        // Kafka's groups whose coordinator partition klog wrote (and that
        // have committed offsets).
        let written = w.written_partitions();
        let groups = w.expected_json("groups.json");
        let mut kafka = BTreeMap::new();
        for g in groups.as_array().unwrap() {
            let part = format!(
                "__consumer_offsets-{}",
                g["coordinator_partition"].as_i64().unwrap()
            );
            let name = g["group"].as_str().unwrap();
            let offsets = committed(&groups, name).unwrap();
            if written.contains(&part) && !offsets.is_empty() && g["type"] != "Share" {
                kafka.insert(name.to_string(), offsets);
            }
        }
        let klog: BTreeMap<_, _> = klog
            .into_iter()
            .filter(|(g, _)| {
                groups
                    .as_array()
                    .unwrap()
                    .iter()
                    .all(|k| k["group"] != g.as_str() || k["type"] != "Share")
            })
            .collect();
        assert!(kafka.contains_key("klog-commit-g"), "{kafka:?}");
        assert_eq!(klog, kafka, "klog's prediction vs Kafka after the restart");
    });
}

/// klog appended the same bytes to every replica: for each file klog's
/// writes grew, the bytes it added are equal on the three brokers.
#[test]
fn every_replica_got_the_same_bytes() {
    each_release(|w| {
        let mut grown: BTreeMap<String, BTreeMap<String, (u64, u64)>> = BTreeMap::new();
        for line in w.expected("changed-by-klog.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let (path, before, after): (&str, i64, i64) =
                (f[0], f[1].parse().unwrap(), f[2].parse().unwrap());
            let (broker, rel) = path.split_once('/').unwrap();
            // Offsets partitions only: the repairs of codecs-0 and codecs-1
            // undo damage each replica has its own copy of.
            if rel.starts_with("__consumer_offsets-") && rel.ends_with(".log") {
                assert!(after > before, "{path}: klog shrank a log it appended to");
                grown
                    .entry(rel.to_string())
                    .or_default()
                    .insert(broker.to_string(), (before.max(0) as u64, after as u64));
            }
        }
        assert!(!grown.is_empty(), "klog appended to no offsets partition");
        for (rel, by_broker) in &grown {
            assert_eq!(
                by_broker.keys().cloned().collect::<Vec<_>>(),
                brokers(),
                "{rel}: not appended to on every replica"
            );
            let added: Vec<Vec<u8>> = by_broker
                .iter()
                .map(|(b, (from, to))| {
                    let data = std::fs::read(w.after_klog(&format!("{b}/{rel}"))).unwrap();
                    data[*from as usize..*to as usize].to_vec()
                })
                .collect();
            assert!(
                added.windows(2).all(|p| p[0] == p[1]),
                "{rel}: the replicas got different bytes"
            );
        }
    });
}

/// The segment files (`.log`) of a partition folder, in offset order.
fn segments(folder: &Path) -> Vec<PathBuf> {
    let mut logs: Vec<PathBuf> = std::fs::read_dir(folder)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    logs
}

/// The log end offset of a partition folder (the last batch's last offset + 1).
fn log_end(w: &Writers, folder: &Path) -> i64 {
    let logs = segments(folder);
    let last = logs.last().expect("a segment");
    let o = w.klog(&["dump-segment", "--format", "json", last.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    dump_entries(&o)
        .iter()
        .filter_map(|e| e["last_offset"].as_i64())
        .max()
        .map_or(0, |o| o + 1)
}

/// Whether a broker log line names partition `part` (`__consumer_offsets-1`
/// and not `__consumer_offsets-10`).
fn names(line: &str, part: &str) -> bool {
    line.match_indices(part).any(|(at, _)| {
        !line[at + part.len()..]
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
    })
}

/// No broker truncated, recovered or found invalid batches in what klog
/// wrote, and none met a corrupt batch or a record version it does not know
/// anywhere: every truncation the brokers logged of a written partition
/// after the restart is to an offset at or past the log end klog left.
/// (The KRaft metadata log is recovered on every start, clean or not: its
/// recovery lines are not klog's doing and name no written partition.)
#[test]
fn no_broker_truncated_or_recovered_what_klog_wrote() {
    each_release(|w| {
        let log = w.expected("broker-log.txt");
        for line in log.lines() {
            for bad in ["orrupt", "UnknownRecordVersion", "Unknown record"] {
                assert!(!line.contains(bad), "a broker logged: {line}");
            }
        }
        for part in w.written_partitions() {
            // The end klog left (codecs-1 was written on broker 2 only).
            let end = brokers()
                .iter()
                .map(|b| w.after_klog(&format!("{b}/{part}")))
                .filter(|f| f.is_dir())
                .map(|f| log_end(w, &f))
                .max()
                .unwrap();
            for line in log.lines().filter(|l| names(l, &part)) {
                for bad in ["Found invalid", "Recovering", "recovering"] {
                    assert!(!line.contains(bad), "{part}: a broker logged: {line}");
                }
                if !line.contains("Truncat") {
                    continue;
                }
                // `TruncationState(offset=N, …)` (the fetcher), `Truncating to
                // offset N` and `Truncating to N has no effect` (the log).
                let offset: i64 = ["offset=", "to offset ", "Truncating to "]
                    .iter()
                    .find_map(|p| line.split(p).nth(1))
                    .and_then(|r| r.split(|c: char| !c.is_ascii_digit()).next()?.parse().ok())
                    .unwrap_or_else(|| panic!("no offset in: {line}"));
                assert!(
                    offset >= end,
                    "{part}: truncated to {offset}, below klog's end {end}: {line}"
                );
            }
        }
    });
}

/// The bytes klog wrote are the bytes the brokers kept: each written
/// segment as klog left it begins the same segment after the restart.
#[test]
fn the_brokers_kept_klogs_bytes() {
    each_release(|w| {
        for part in w.written_partitions() {
            for b in brokers() {
                let folder = w.after_klog(&format!("{b}/{part}"));
                if !folder.is_dir() {
                    continue;
                }
                for e in std::fs::read_dir(&folder).unwrap() {
                    let p = e.unwrap().path();
                    if p.extension().is_none_or(|x| x != "log") {
                        continue;
                    }
                    let name = p.file_name().unwrap().to_str().unwrap().to_string();
                    let mine = std::fs::read(&p).unwrap();
                    let theirs = std::fs::read(w.after_restart(&format!("{b}/{part}/{name}")))
                        .unwrap_or_default();
                    // A segment the log cleaner rewrote after the restart is not compared.
                    if part.starts_with("__consumer_offsets") && theirs.len() < mine.len() {
                        continue;
                    }
                    assert!(
                        theirs.starts_with(&mine),
                        "{b}/{part}/{name}: the broker's copy after the restart does not begin with klog's"
                    );
                }
            }
        }
    });
}

/// Each offsets segment klog appended to ends its time index as a broker's
/// clean shutdown does (`LogSegment.onBecomeInactiveSegment`/`close` append
/// the segment's largest timestamp): the last entry's timestamp is the
/// largest batch max timestamp of the segment; and Kafka's ListOffsets
/// MAX_TIMESTAMP after the restart (read from the time index it loaded)
/// finds that timestamp.
#[test]
fn time_indexes_end_at_the_largest_timestamp() {
    each_release(|w| {
        let kafka_max: BTreeMap<String, i64> = w
            .expected_json("list-offsets.json")
            .as_array()
            .unwrap()
            .iter()
            .map(|p| {
                (
                    format!(
                        "{}-{}",
                        p["topic"].as_str().unwrap(),
                        p["partition"].as_i64().unwrap()
                    ),
                    p["max_timestamp"]["timestamp"].as_i64().unwrap(),
                )
            })
            .collect();
        let mut checked = 0;
        for part in w.written_partitions() {
            if !part.starts_with("__consumer_offsets-") {
                continue;
            }
            for b in brokers() {
                let logs = segments(&w.after_klog(&format!("{b}/{part}")));
                let mut largest = i64::MIN;
                for log in &logs {
                    let o = w.klog(&["dump-segment", "--format", "json", log.to_str().unwrap()]);
                    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
                    let seg_max = dump_entries(&o)
                        .iter()
                        .filter_map(|e| e["max_timestamp"].as_i64())
                        .max()
                        .unwrap_or(i64::MIN);
                    largest = largest.max(seg_max);
                    if log == logs.last().unwrap() {
                        let ti = std::fs::read(log.with_extension("timeindex")).unwrap();
                        let used = ti.len() / 12 * 12;
                        let entries: Vec<&[u8]> = ti[..used]
                            .chunks(12)
                            .filter(|c| c.iter().any(|&x| x != 0))
                            .collect();
                        let last = entries
                            .last()
                            .unwrap_or_else(|| panic!("{}: no time index entry", log.display()));
                        let ts = i64::from_be_bytes(last[..8].try_into().unwrap());
                        assert_eq!(
                            ts,
                            seg_max,
                            "{}: the time index's last entry",
                            log.display()
                        );
                        checked += 1;
                    }
                }
                assert_eq!(
                    kafka_max.get(&part),
                    Some(&largest),
                    "{part}: Kafka's MAX_TIMESTAMP after the restart"
                );
            }
        }
        assert!(checked >= 3, "no written offsets segment checked");
    });
}

/// The salvaged partition serves what klog kept: the damaged second batch
/// (offsets 4-7 of 12 records in batches of 4) is gone, every other record
/// is read, with the consumer's CRC checks on; the partition whose torn tail
/// klog cut on one replica serves all 12.
#[test]
fn kafka_serves_what_salvage_and_repair_kept() {
    each_release(|w| {
        let consumed = w.expected_json("consumed.json");
        let read = |topic: &str, partition: i64| -> Vec<i64> {
            consumed
                .as_array()
                .unwrap()
                .iter()
                .find(|c| c["topic"] == topic && c["partition"] == partition)
                .unwrap()["offsets"]
                .as_array()
                .unwrap()
                .iter()
                .map(|o| o.as_i64().unwrap())
                .collect()
        };
        let kept: Vec<i64> = (0..12).filter(|o| !(4..8).contains(o)).collect();
        assert_eq!(read("codecs", 0), kept);
        assert_eq!(read("codecs", 1), (0..12).collect::<Vec<_>>());
        assert_eq!(read("plain", 0), (0..30).collect::<Vec<_>>());
        // klog's own reading of the salvaged replicas says the same.
        for b in brokers() {
            let logs = segments(&w.after_klog(&format!("{b}/codecs-0")));
            let mut args = vec!["dump-segment", "--format", "json"];
            args.extend(logs.iter().map(|p| p.to_str().unwrap()));
            let o = w.klog(&args);
            assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
            let offsets: Vec<i64> = dump_entries(&o)
                .iter()
                .flat_map(|e| e["records"].as_array().cloned().unwrap_or_default())
                .map(|r| r["offset"].as_i64().unwrap())
                .collect();
            assert_eq!(offsets, kept, "{b}: klog's dump of the salvaged segment");
        }
    });
}

/// klog's writes touched only the partitions they wrote, and deleted
/// nothing: the offsets partitions of the groups written, codecs-0
/// (salvaged on every replica) and codecs-1 on broker 2 (repaired).
#[test]
fn writes_touch_only_their_partitions_and_delete_nothing() {
    each_release(|w| {
        let placed: BTreeSet<String> = w
            .expected_json("groups.json")
            .as_array()
            .unwrap()
            .iter()
            .chain(w.before_json("groups.json").as_array().unwrap())
            .filter(|g| {
                [
                    "classic-g",
                    "consumer-g",
                    "klog-commit-g",
                    "codecs-g",
                    "reset-ts-g",
                ]
                .contains(&g["group"].as_str().unwrap())
            })
            .map(|g| {
                format!(
                    "__consumer_offsets-{}",
                    g["coordinator_partition"].as_i64().unwrap()
                )
            })
            .collect();
        for line in w.expected("changed-by-klog.tsv").lines() {
            let f: Vec<&str> = line.split('\t').collect();
            let path = f[0];
            assert_ne!(f[2], "-1", "{path}: klog removed a file");
            let (broker, rel) = path.split_once('/').unwrap();
            // The data directory's lock file, which a broker's own start
            // creates as well (and its clean shutdown removes).
            if rel == ".lock" {
                continue;
            }
            let folder = rel.split('/').next().unwrap();
            let ok = placed.contains(folder)
                || folder == "codecs-0"
                || (folder == "codecs-1" && broker == "broker-2");
            assert!(ok, "klog changed {path}, which none of its writes names");
        }
        // klog's verdict on its own writes, and on what the brokers left.
        for root in ["writers/after-klog", "writers/after-restart"] {
            let dirs: Vec<String> = brokers().iter().map(|b| format!("{root}/{b}")).collect();
            let mut args = vec!["verify-crc"];
            args.extend(dirs.iter().map(String::as_str));
            let o = w.klog(&args);
            assert_eq!(o.status.code(), Some(0), "{root}: {}", stderr(&o));
        }
    });
}
