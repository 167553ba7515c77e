//! klog's restart prediction against Kafka's restart. The crash scenario of
//! `tests/kafka/run.sh` (`Driver.crash`) brings a real cluster down as a
//! crash would: the leader of crash-all (acks=all, an idempotent producer)
//! and crash-one (acks=1) killed while a follower was paused, then a second
//! broker killed and the last stopped; node 3's copy of crash-one loses the
//! second half of its last batch. `crash/broker-N` are the directories as
//! they were then. The cluster was restarted on them (node 1, node 3, node
//! 2) and what it served is `expected/crash/outcome.json`; what the brokers
//! logged of those partitions is `expected/crash/broker-log.txt`.
//!
//! `klog cluster crash/broker-*` is the prediction: per partition the
//! leader (or, when the order of the returns decides, every leader it may
//! be), each follower's truncation and the records it loses, where each
//! group's consumer lands. Every expectation here is Kafka's.

use std::collections::BTreeMap;

use serde_json::Value;

use crate::kafka_real::{each_release, kafka_restart, trees, Real};

/// `node-N: … Truncating partition T-P with TruncationState(offset=X, …`:
/// (node, partition) -> X, Kafka's follower truncations after the restart.
fn truncations(log: &str) -> BTreeMap<(i64, String), i64> {
    let mut out = BTreeMap::new();
    for line in log.lines() {
        let Some(node) = line
            .strip_prefix("node-")
            .and_then(|r| r.split(':').next())
            .and_then(|n| n.parse().ok())
        else {
            continue;
        };
        let Some(rest) = line.split("Truncating partition ").nth(1) else {
            continue;
        };
        let partition = rest.split(' ').next().unwrap().to_string();
        let offset = rest
            .split("TruncationState(offset=")
            .nth(1)
            .and_then(|r| r.split(',').next())
            .and_then(|o| o.parse().ok())
            .unwrap();
        out.insert((node, partition), offset);
    }
    out
}

/// The lines of one node in broker-log.txt, without their `node-N: ` prefix.
fn node_lines(log: &str, node: i64) -> String {
    let prefix = format!("node-{node}: ");
    log.lines()
        .filter_map(|l| l.strip_prefix(&prefix))
        .map(|l| format!("{l}\n"))
        .collect()
}

fn offset(landing: &Value, auto_offset_reset: &str) -> i64 {
    match landing["kind"].as_str().unwrap() {
        "resumes" | "divergence_point" => landing["offset"].as_i64().unwrap(),
        "reset" => landing[auto_offset_reset].as_i64().unwrap(),
        other => panic!("landing {other}"),
    }
}

fn crash_tree(real: &Real) -> Option<(Value, String)> {
    if !real.answers("crash") {
        return None;
    }
    let read =
        |f: &str| std::fs::read_to_string(real.source.join("expected/crash").join(f)).unwrap();
    Some((
        serde_json::from_str(&read("outcome.json")).unwrap(),
        read("broker-log.txt"),
    ))
}

fn cluster(real: &Real) -> Value {
    let mut args = vec![
        "cluster",
        "--format",
        "json",
        "crash/broker-1",
        "crash/broker-2",
        "crash/broker-3",
    ];
    // KRaft: the topic's config is in the metadata klog reads. ZooKeeper
    // mode keeps it in ZooKeeper: the operator says it.
    if !real.kraft() {
        args.extend(["--unclean-election", "crash-unclean"]);
    }
    let o = real.run(&args);
    // Exit 1: crash-one's and crash-unclean's followers diverge.
    assert!(
        o.status.code().is_some_and(|c| c < 2),
        "{}",
        crate::support::stderr(&o)
    );
    serde_json::from_slice(&o.stdout).unwrap()
}

#[test]
fn the_restart_klog_predicts_is_the_restart_kafka_did() {
    each_release(|real| {
        let Some((kafka, log)) = crash_tree(real) else {
            return;
        };
        let doc = cluster(real);
        let release = &real.release;
        let truncated = truncations(&log);
        for p in kafka["partitions"].as_array().unwrap() {
            let topic = p["topic"].as_str().unwrap();
            let name = format!("{topic}-0");
            let what = format!("{release} {name}");
            let v = doc["partitions"]
                .as_array()
                .unwrap()
                .iter()
                .find(|v| v["topic"] == topic && v["partition"] == 0)
                .unwrap_or_else(|| panic!("{what}: no verdict"));
            let leader = p["leader"].as_i64().unwrap();
            // The leader Kafka elected is klog's, or one of those it lists
            // when the order of the returns decides.
            let replicas = match v["outcomes"].as_array().unwrap().as_slice() {
                [] => {
                    assert_eq!(
                        v["leader"].as_i64(),
                        Some(leader),
                        "{what}: {}",
                        v["detail"]
                    );
                    &v["replicas"]
                }
                outcomes => {
                    let o = outcomes
                        .iter()
                        .find(|o| o["leader"].as_i64() == Some(leader))
                        .unwrap_or_else(|| {
                            panic!("{what}: Kafka elected {leader}, not among {}", v["detail"])
                        });
                    &o["replicas"]
                }
            };
            let served: BTreeMap<i64, String> = p["records"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| (r[0].as_i64().unwrap(), r[1].as_str().unwrap().to_string()))
                .collect();
            for r in replicas.as_array().unwrap() {
                let node = r["node_id"].as_i64().unwrap();
                let what = format!("{what} node {node}");
                if node == leader {
                    // What the new leader loads is what Kafka serves.
                    assert_eq!(r["log_end_offset"].as_i64(), p["latest"].as_i64(), "{what}");
                    assert_eq!(
                        r["log_start_offset"].as_i64(),
                        p["earliest"].as_i64(),
                        "{what}"
                    );
                    continue;
                }
                let end = r["log_end_offset"].as_i64().unwrap();
                let at = r["truncation_offset"].as_i64().unwrap_or(end);
                // Kafka's fetcher truncates where klog says, or not at all
                // when klog cuts nothing.
                match truncated.get(&(node, name.clone())) {
                    Some(&kafka_at) => assert_eq!(at.min(end), kafka_at.min(end), "{what}"),
                    None => assert!(
                        at >= end,
                        "{what}: klog cuts at {at}, Kafka did not truncate"
                    ),
                }
                // Every record it cuts is gone from what Kafka serves at its
                // offset, unless its producer re-sent it, and then Kafka
                // serves it where klog says.
                let lost = &r["lost"];
                if at < end {
                    assert_eq!(lost["count"].as_i64(), Some(end - at), "{what}: {lost}");
                }
                for rec in lost["records"].as_array().into_iter().flatten() {
                    let key = rec["key"].as_str().unwrap();
                    let o = rec["offset"].as_i64().unwrap();
                    match rec["resent_at"].as_i64() {
                        Some(x) => assert_eq!(
                            served.get(&x).map(String::as_str),
                            Some(key),
                            "{what}: {rec}"
                        ),
                        None => assert_ne!(
                            served.get(&o).map(String::as_str),
                            Some(key),
                            "{what}: {rec}"
                        ),
                    }
                }
            }
        }
        // Where each group's consumer lands: under the leader Kafka elected.
        for g in kafka["groups"].as_array().unwrap() {
            let reset = g["auto_offset_reset"].as_str().unwrap();
            for o in g["offsets"].as_array().unwrap() {
                let what = format!("{release} {} {}", g["group"], o["topic"]);
                let row = doc["groups"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|r| {
                        r["group"] == g["group"] && r["topic"] == o["topic"] && r["partition"] == 0
                    })
                    .unwrap_or_else(|| panic!("{what}: no row"));
                assert_eq!(row["committed_offset"], o["committed"], "{what}");
                let leader = kafka["partitions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|p| p["topic"] == o["topic"])
                    .unwrap()["leader"]
                    .as_i64();
                let landing = match row["lands_under"].as_array() {
                    Some(under) => &under
                        .iter()
                        .find(|u| u["leader"].as_i64() == leader)
                        .unwrap_or_else(|| panic!("{what}: no landing under {leader:?}"))["lands"],
                    None => {
                        assert_eq!(row["leader"].as_i64(), leader, "{what}");
                        &row["lands"]
                    }
                };
                assert_eq!(
                    offset(landing, reset),
                    o["lands"].as_i64().unwrap(),
                    "{what}: {landing}"
                );
            }
        }
        // Node 3's start after the SIGKILL: its recovery cuts crash-one-0's
        // torn batch, and every crash partition loads where klog says.
        let restart = kafka_restart(&node_lines(&log, 3));
        // Exit 1: the torn batch is a finding.
        let o = real.run(&[
            "verify-crc",
            "--recovery-preview",
            "--format",
            "json",
            "crash/broker-3",
        ]);
        assert!(
            o.status.code().is_some_and(|c| c < 2),
            "{}",
            crate::support::stderr(&o)
        );
        let preview: Value = serde_json::from_slice(&o.stdout).unwrap();
        let mut loaded = 0;
        for pv in preview["partitions"].as_array().unwrap() {
            let name = format!("{}-{}", pv["topic"].as_str().unwrap(), pv["partition"]);
            let Some(&(start, end)) = restart.loaded.get(&name) else {
                continue;
            };
            loaded += 1;
            assert_eq!(
                pv["log_start_offset"].as_i64(),
                Some(start),
                "{release} {name}"
            );
            assert_eq!(pv["log_end_offset"].as_i64(), Some(end), "{release} {name}");
            if name == "crash-one-0" {
                assert!(
                    !pv["cuts"].as_array().unwrap().is_empty(),
                    "{release} {name}: {pv}"
                );
            }
        }
        assert!(
            loaded >= 3,
            "{release}: Kafka's loads of node 3's crash partitions: {:?}",
            restart.loaded
        );
    });
    let without: Vec<String> = trees()
        .iter()
        .filter(|t| {
            !std::fs::read_to_string(t.join("expected/manifest.json"))
                .unwrap()
                .contains("\"crash\"")
        })
        .map(|t| t.display().to_string())
        .collect();
    if !without.is_empty() {
        eprintln!("the_restart_klog_predicts: trees recorded before run.sh had the crash scenario: {without:?}");
    }
    assert!(
        without.len() < trees().len(),
        "no tree of the matrix has the crash scenario"
    );
}
