//! How each broker went down, said first by every command that reports on
//! a log directory. The oracle matrix's clusters (fixtures/kafka-real):
//! node 3 was killed with SIGKILL in the `killed` scenario, so Kafka left
//! no `.kafka_cleanshutdown` in its directory; nodes 1 and 2 were stopped
//! cleanly, and `LogManager.shutdown` wrote the marker, JSON with the
//! broker epoch (`CleanShutdownFileHandler`; -1 in ZooKeeper mode).

use std::path::Path;

use serde_json::Value;

use crate::kafka_real::each_tree;
use crate::support::{document, stderr, stdout};

fn klog(args: &[&str]) -> std::process::Output {
    let o = assert_cmd::Command::cargo_bin("klog")
        .unwrap()
        .env("COLUMNS", "200")
        .args(args)
        .output()
        .unwrap();
    assert!(
        o.status.code().is_some_and(|c| c < 2),
        "{args:?}: {}",
        stderr(&o)
    );
    o
}

/// (broker folder, shut down cleanly, the marker's broker epoch).
fn brokers(tree: &Path) -> Vec<(String, bool, Option<i64>)> {
    ["broker-1", "broker-2", "broker-3"]
        .iter()
        .map(|b| {
            let marker = tree.join(b).join(".kafka_cleanshutdown");
            let clean = *b != "broker-3";
            assert_eq!(
                marker.exists(),
                clean,
                "{b}: the scenario killed node 3 only"
            );
            let epoch = std::fs::read(&marker)
                .ok()
                .and_then(|m| serde_json::from_slice::<Value>(&m).ok())
                .and_then(|v| v["brokerEpoch"].as_i64());
            (tree.join(b).to_str().unwrap().to_string(), clean, epoch)
        })
        .collect()
}

#[test]
fn every_reporting_command_says_how_each_broker_went_down() {
    each_tree(|tree| {
        let brokers = brokers(tree);
        for (dir, clean, epoch) in &brokers {
            let state = if *clean { "clean" } else { "unclean" };
            // info: JSON and text.
            let doc = document(&klog(&["info", dir, "--format", "json"]), "info");
            let restart = &doc["directories"][0]["restart"];
            assert_eq!(restart["shutdown"]["state"], state, "{dir}");
            assert_eq!(
                restart["shutdown"]["broker_epoch"].as_i64(),
                *epoch,
                "{dir}"
            );
            let text = stdout(&klog(&["info", dir]));
            let line = text.lines().find(|l| l.starts_with("shutdown:")).unwrap();
            assert_eq!(line.contains("UNCLEAN"), !clean, "{dir}: {line}");
            // An unclean start recovers every partition from its recovery
            // point (the active segment at least: LogLoader.recoverLog).
            if !clean {
                let partitions = restart["partitions"].as_u64().unwrap();
                assert_eq!(
                    restart["recovered"].as_array().unwrap().len() as u64,
                    partitions
                );
            }
            // verify-crc: JSON and text, first line.
            let doc = document(
                &klog(&["verify-crc", dir, "--format", "json"]),
                "verify-crc",
            );
            assert_eq!(doc["restarts"][0]["shutdown"]["state"], state, "{dir}");
            let text = stdout(&klog(&["verify-crc", dir]));
            assert!(
                text.lines().next().unwrap().contains(if *clean {
                    "clean shutdown"
                } else {
                    "UNCLEAN shutdown"
                }),
                "{dir}: {text}"
            );
            // summary: text.
            let text = stdout(&klog(&["summary", dir]));
            let line = text.lines().find(|l| l.starts_with("shutdown:")).unwrap();
            assert_eq!(line.contains("UNCLEAN"), !clean, "{dir}: {line}");
            // info and summary: CSV, the state on every row (info's
            // `shutdown`, summary's `clean_shutdown` as its JSON says it).
            for (cmd, column, want) in [
                ("info", "shutdown", state),
                (
                    "summary",
                    "clean_shutdown",
                    if *clean { "true" } else { "false" },
                ),
            ] {
                let csv = stdout(&klog(&[cmd, dir, "--format", "csv"]));
                let mut rows = csv.lines().map(|l| l.split(',').collect::<Vec<_>>());
                let header = rows.next().unwrap();
                let at = header.iter().position(|h| *h == column).unwrap();
                let cells: Vec<String> = rows.map(|r| r[at].to_string()).collect();
                assert!(!cells.is_empty(), "{cmd} {dir}: no rows");
                assert!(cells.iter().all(|c| c == want), "{cmd} {dir}: {cells:?}");
            }
        }
        // cluster, given the directories themselves.
        let dirs: Vec<&str> = brokers.iter().map(|(d, _, _)| d.as_str()).collect();
        let mut args = vec!["cluster", "--format", "json"];
        args.extend(&dirs);
        let doc = document(&klog(&args), "cluster");
        let states: Vec<(i64, String)> = doc["summaries"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                (
                    s["node_id"].as_i64().unwrap(),
                    s["shutdown"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        assert_eq!(
            states,
            [
                (1, "clean".to_string()),
                (2, "clean".to_string()),
                (3, "unclean".to_string())
            ]
        );
        let mut args = vec!["cluster"];
        args.extend(&dirs);
        let text = stdout(&klog(&args));
        let head: Vec<&str> = text.lines().take(3).collect();
        assert!(head[2].contains("node 3: UNCLEAN shutdown"), "{head:?}");
        assert!(head[0].ends_with("node 1: clean shutdown"), "{head:?}");
    });
}

#[test]
fn cluster_reads_directories_stdin_and_pipes_alike() {
    // fixtures/cluster (encoder.py): the same verdict whether each broker
    // comes as its directory, as a summary on stdin, or as a summary file.
    let root = crate::support::repo().join("fixtures/cluster");
    let dir = |b: &str| root.join(b).to_str().unwrap().to_string();
    let (b1, b2, b3) = (dir("broker-1"), dir("broker-2"), dir("broker-3"));
    let from_dirs = document(
        &klog(&["cluster", "--format", "json", &b1, &b2, &b3]),
        "cluster",
    );
    let summary = stdout(&klog(&["summary", &b1, "--format", "json"]));
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("b2.json");
    std::fs::write(&file, stdout(&klog(&["summary", &b2, "--format", "json"]))).unwrap();
    let o = assert_cmd::Command::cargo_bin("klog")
        .unwrap()
        .args([
            "cluster",
            "--format",
            "json",
            "-",
            file.to_str().unwrap(),
            &b3,
        ])
        .write_stdin(summary)
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    // The same partitions and replicas; only where each summary came from differs.
    let without_sources = |doc: &Value| {
        let mut p = doc["partitions"].clone();
        for part in p.as_array_mut().unwrap() {
            for r in part["replicas"].as_array_mut().unwrap() {
                r.as_object_mut().unwrap().remove("summary");
            }
        }
        p
    };
    let mixed = document(&o, "cluster");
    assert_eq!(without_sources(&mixed), without_sources(&from_dirs));
    assert_eq!(mixed["totals"], from_dirs["totals"]);
    // The cluster's verdict (fixtures/README.md, cluster/): orders-0
    // diverged on node 3, audit-0 lost.
    assert_eq!(from_dirs["totals"]["diverged"], 1);
    assert_eq!(from_dirs["totals"]["lost"], 1);
}
