//! `klog summary` and `klog cluster` on fixtures/cluster: three brokers'
//! log directories written by fixtures/cluster.py. Expected values come from
//! that script's definitions (read by Python below) and from Kafka's
//! truncation worked out by hand on them, never from klog's output.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::support::{repo, stderr, stdout, TestEnv};

/// Run Python with fixtures/ on the path and `cluster` and `encoder`
/// imported; `script` prints JSON.
fn python(script: &str) -> Value {
    let fixtures = repo().join("fixtures").display().to_string();
    let program = format!(
        "import json, struct, sys\nsys.dont_write_bytecode = True\nsys.path.insert(0, {fixtures:?})\nimport cluster as c, encoder as e\n{script}\n"
    );
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(program)
        .output()
        .expect("python3 runs");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    serde_json::from_slice(&o.stdout).unwrap()
}

/// What each broker's summary must say, from the definitions in cluster.py:
/// per replica its ends, checkpoint and the epoch runs, each run's chain
/// computed as `klog summary` documents it (CRC-32C from 0 over base offset
/// int64 and stored CRC uint32 of each batch, big-endian), and the
/// committed offsets each broker's offsets log replays to (the last commit
/// of a key wins).
fn expected_summaries() -> Value {
    python(
        r#"
out = {}
for node, replicas in c.BROKERS.items():
    parts = {}
    for (topic, p), (batches, epochs, hw) in replicas.items():
        runs = []
        for b in batches:
            raw = c.encode(topic, [b])
            base, epoch = b[0], b[1]
            stored = struct.unpack(">I", raw[17:21])[0]
            records = 1 if topic == "__consumer_offsets" else len(b[2])
            if not runs or runs[-1]["leader_epoch"] != epoch:
                runs.append({"leader_epoch": epoch, "start_offset": base, "end_offset": base,
                             "batches": 0, "records": 0, "bytes": 0, "crc32c": 0})
            r = runs[-1]
            r["crc32c"] = e.crc32c(struct.pack(">qI", base, stored), r["crc32c"])
            r["end_offset"] = base + records
            r["batches"] += 1
            r["records"] += records
            r["bytes"] += len(raw)
        parts["%s-%d" % (topic, p)] = {
            "log_end_offset": c.log_end(batches), "high_watermark": hw,
            "leader_epoch_checkpoint": [{"leader_epoch": a, "start_offset": b} for a, b in epochs],
            "epochs": runs, "bytes": len(c.encode(topic, batches)),
            "topic_id": e.uuid_text(c.TOPIC_IDS[topic]),
        }
    committed = {}
    offsets = replicas.get(("__consumer_offsets", 0))
    for _, _, (g, t, p, o) in (offsets[0] if offsets else []):
        committed["%s %s %d" % (g, t, p)] = o
    out[str(node)] = {"partitions": parts, "committed": committed,
                      "directory_id": e.uuid_text(c.dir_uuid(node))}
out["cluster_id"] = c.CLUSTER_ID
out["next_offset"] = {"complete": sum(len(b) for b in c.metadata_batches(True)),
                      "broker3": sum(len(b) for b in c.metadata_batches(False))}
print(json.dumps(out))
"#,
    )
}

/// `klog summary --format json fixtures/cluster/broker-N`.
fn broker_summary(env: &TestEnv, n: i32) -> Value {
    let dir = format!("fixtures/cluster/broker-{n}");
    run_json(env, &["summary", "--format", "json", &dir], 0)
}

fn run_json(env: &TestEnv, args: &[&str], code: i32) -> Value {
    let o = env.run(args, None);
    assert_eq!(o.status.code(), Some(code), "klog {args:?}: {}", stderr(&o));
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)))
}

/// `klog summary --format json` of each broker into `summaries/broker-N.json`.
fn summarize(env: &TestEnv, root: &str) -> PathBuf {
    let dir = env.path("summaries");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 1..=3 {
        let o = env.run(
            &["summary", "--format", "json", &format!("{root}/broker-{n}")],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::write(dir.join(format!("broker-{n}.json")), &o.stdout).unwrap();
    }
    dir
}

#[test]
fn each_broker_summary_follows_the_fixture_definitions() {
    let env = TestEnv::new();
    let want = expected_summaries();
    for n in 1..=3 {
        let doc = broker_summary(&env, n);
        assert_eq!(doc["schema_version"], 1);
        let dirs = doc["log_dirs"].as_array().unwrap();
        assert_eq!(dirs.len(), 1);
        let d = &dirs[0];
        let w = &want[n.to_string()];
        assert_eq!(d["node_id"], n);
        assert_eq!(d["cluster_id"], want["cluster_id"]);
        assert_eq!(d["directory_id"], w["directory_id"]);
        assert_eq!(d["clean_shutdown"], false);
        let parts = d["partitions"].as_array().unwrap();
        let names: Vec<String> = parts
            .iter()
            .map(|p| format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]))
            .collect();
        let mut expected_names: Vec<String> = w["partitions"]
            .as_object()
            .unwrap()
            .keys()
            .cloned()
            .collect();
        expected_names.sort();
        assert_eq!(names, expected_names, "broker {n}");
        for (p, name) in parts.iter().zip(&names) {
            let e = &w["partitions"][name];
            let ctx = format!("broker {n} {name}");
            assert_eq!(p["log_start_offset"], 0, "{ctx}");
            assert_eq!(p["log_end_offset"], e["log_end_offset"], "{ctx}");
            assert_eq!(p["high_watermark"], e["high_watermark"], "{ctx}");
            // recovery-point-offset-checkpoint holds the log end.
            assert_eq!(p["recovery_point"], e["log_end_offset"], "{ctx}");
            assert_eq!(p["topic_id"], e["topic_id"], "{ctx}");
            assert_eq!(
                p["leader_epoch_checkpoint"], e["leader_epoch_checkpoint"],
                "{ctx}"
            );
            // The checkpoint is what recovery leaves: its epochs match the batches.
            assert_eq!(p["leader_epochs"], e["leader_epoch_checkpoint"], "{ctx}");
            assert_eq!(p["epochs"], e["epochs"], "{ctx}");
            assert_eq!(
                p["segments"],
                json!([{"base_offset": 0, "bytes": e["bytes"]}]),
                "{ctx}"
            );
            // Every batch is in the tail (fewer than 16), each ending a
            // prefix of its run; the last one's chain is its run's.
            let tail = p["tail"].as_array().unwrap();
            let batches: u64 = e["epochs"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["batches"].as_u64().unwrap())
                .sum();
            assert_eq!(tail.len() as u64, batches, "{ctx}");
            let last_run = e["epochs"].as_array().unwrap().last().unwrap();
            assert_eq!(tail.last().unwrap()["crc32c"], last_run["crc32c"], "{ctx}");
        }
        let committed: Value = d
            .get("committed_offsets")
            .map(|c| {
                assert_eq!(c["offsets_topic"], "__consumer_offsets");
                c["offsets"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|o| {
                        assert_eq!(o["offsets_partition"], 0);
                        (
                            format!(
                                "{} {} {}",
                                o["group"].as_str().unwrap(),
                                o["topic"].as_str().unwrap(),
                                o["partition"]
                            ),
                            o["committed_offset"].clone(),
                        )
                    })
                    .collect::<serde_json::Map<_, _>>()
                    .into()
            })
            .unwrap_or(json!({}));
        assert_eq!(committed, w["committed"], "broker {n}");
        let m = &d["metadata"];
        let next = if n == 3 {
            &want["next_offset"]["broker3"]
        } else {
            &want["next_offset"]["complete"]
        };
        assert_eq!(&m["next_offset"], next, "broker {n}");
        assert_eq!(m["brokers"].as_array().unwrap().len(), 4);
        assert_eq!(
            m["brokers"][3]["fenced"], true,
            "broker 4 was never unfenced"
        );
    }
}

#[test]
fn the_two_epoch_runs_agree_where_the_replicas_hold_the_same_batches() {
    // Epoch 0 of orders-0 ([0..3]) is on every broker: one chain; broker 3's
    // epoch 1 and the leader's epoch 2 hold other batches.
    let env = TestEnv::new();
    let run = |n: i32| {
        let doc = broker_summary(&env, n);
        let orders = doc["log_dirs"][0]["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["topic"] == "orders")
            .unwrap()
            .clone();
        orders["epochs"].clone()
    };
    let (b1, b2, b3) = (run(1), run(2), run(3));
    assert_eq!(b1, b2);
    assert_eq!(b1[0], b3[0]);
    assert_eq!(
        (b1[1]["leader_epoch"].clone(), b3[1]["leader_epoch"].clone()),
        (json!(2), json!(1))
    );
    assert_ne!(b1[1]["crc32c"], b3[1]["crc32c"]);
}

fn partition<'a>(report: &'a Value, topic: &str, p: i64) -> &'a Value {
    report["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|v| v["topic"] == topic && v["partition"] == p)
        .unwrap_or_else(|| panic!("{topic}-{p} not in the report"))
}

fn replica(v: &Value, node: i64) -> &Value {
    v["replicas"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["node_id"] == node)
        .unwrap_or_else(|| panic!("node {node} not among {}", v["replicas"]))
}

/// (state, truncation offset, divergence offset, batches beyond, behind by).
fn verdict(r: &Value) -> (String, Value, Value, Value, Value) {
    (
        r["state"].as_str().unwrap().to_string(),
        r["truncation_offset"].clone(),
        r["divergence_offset"].clone(),
        r["batches_beyond"].clone(),
        r["behind_by"].clone(),
    )
}

fn v(state: &str, t: Value, d: Value, n: Value, b: Value) -> (String, Value, Value, Value, Value) {
    (state.to_string(), t, d, n, b)
}

#[test]
fn the_cluster_verdict_follows_kafkas_truncation() {
    let env = TestEnv::new();
    let dir = summarize(&env, "fixtures/cluster");
    let files: Vec<String> = (1..=3)
        .map(|n| dir.join(format!("broker-{n}.json")).display().to_string())
        .collect();
    let mut args = vec!["cluster", "--format", "json"];
    args.extend(files.iter().map(String::as_str));
    let r = run_json(&env, &args, 1);
    assert_eq!(r["schema_version"], 1);
    // The metadata of broker 1: brokers 1 and 2 hold the complete log,
    // broker 3's lacks the last batch; the lower node id wins the tie.
    assert_eq!(r["metadata"]["node_id"], 1);
    assert_eq!(
        r["totals"],
        json!({"partitions": 5, "ok": 0, "under_replicated": 3, "diverged": 1, "offline": 0, "lost": 1,
               "diverged_replicas": 1})
    );

    // orders-0: leader 1 at epoch 2 (two leader changes since epoch 0),
    // ISR [1, 2] from the last metadata batch, which broker 3 lacks.
    let orders = partition(&r, "orders", 0);
    assert_eq!(orders["status"], "diverged");
    assert_eq!(
        (
            orders["leader"].clone(),
            orders["leader_source"].clone(),
            orders["leader_epoch"].clone()
        ),
        (json!(1), json!("metadata"), json!(2))
    );
    assert_eq!(orders["isr"], json!([1, 2]));
    assert_eq!(orders["log_end_offset"], 9);
    // Broker 2 has the leader's epochs (0@0, 2@4) and its log end: the
    // leader's end of epoch 2 is its log end 9, not below 9: in sync.
    assert_eq!(
        verdict(replica(orders, 2)),
        v("in_sync", json!(9), json!(null), json!(null), json!(null))
    );
    // Broker 3 (0@0, 1@4, end 7) asks for the end of epoch 1; the leader
    // (0@0, 2@4) has no epoch 1: its floor is epoch 0, ending where epoch 2
    // starts, at 4. Broker 3's epoch 0 ends at 4 too: truncate to
    // min(4, 4, 7) = 4. Its two epoch-1 batches ([4..5], [6]) go, and it
    // must fetch 9 - 4 = 5 offsets.
    let b3 = replica(orders, 3);
    assert_eq!(
        verdict(b3),
        v("diverged", json!(4), json!(4), json!(2), json!(5))
    );
    assert_eq!(b3["batches_beyond_exact"], true);
    // Epoch 0's two batches are the leader's: the checksums agree up to 4.
    assert_eq!(b3["verified_through"], 4);

    // payments-0: broker 3 holds the first 2 of the leader's 4 batches
    // (end 5), all in epoch 0, the leader's latest: the leader answers its
    // log end 8, not below 5: no truncation, 3 offsets behind.
    let payments = partition(&r, "payments", 0);
    assert_eq!(payments["status"], "under_replicated");
    assert_eq!(
        verdict(replica(payments, 3)),
        v("behind", json!(5), json!(null), json!(null), json!(3))
    );
    assert_eq!(replica(payments, 3)["verified_through"], 5);
    assert_eq!(replica(payments, 1)["state"], "in_sync");
    assert_eq!(replica(payments, 2)["state"], "leader");

    // audit-0: assigned to 3 and 1, whose summaries have no folder: lost.
    let audit0 = partition(&r, "audit", 0);
    assert_eq!(audit0["status"], "lost");
    for n in [3, 1] {
        let m = replica(audit0, n);
        assert_eq!(m["state"], "missing");
        assert!(
            m["detail"].as_str().unwrap().contains("have no folder"),
            "{m}"
        );
    }
    // audit-1: broker 4 left no summary; broker 2 leads it.
    let audit1 = partition(&r, "audit", 1);
    assert_eq!(audit1["status"], "under_replicated");
    assert_eq!(audit1["leader"], 2);
    assert_eq!(audit1["leader_epoch"], 1);
    let m = replica(audit1, 4);
    assert_eq!(m["state"], "missing");
    assert!(m["detail"]
        .as_str()
        .unwrap()
        .contains("no summary from node 4"));

    // __consumer_offsets-0: leader 3 (5 commits), broker 1 has 2.
    let offsets = partition(&r, "__consumer_offsets", 0);
    assert_eq!(offsets["status"], "under_replicated");
    assert_eq!(
        verdict(replica(offsets, 1)),
        v("behind", json!(2), json!(null), json!(null), json!(3))
    );

    // Group lag: the coordinator is broker 3 (the leader of
    // __consumer_offsets-0), whose log holds billing's latest commits
    // (orders 7, payments 5; broker 1's stale copy says 2 and 3). The
    // partitions' leaders are brokers 1 (orders-0, high watermark 9) and 2
    // (payments-0, 8): lags 2 and 3. auditor read audit-0, which is lost
    // (no leader to count from).
    type Row = (String, String, i64, i64, i64, Value, Value, String);
    let lag: Vec<Row> = r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| {
            (
                g["group"].as_str().unwrap().to_string(),
                g["topic"].as_str().unwrap().to_string(),
                g["committed_offset"].as_i64().unwrap(),
                g["coordinator"].as_i64().unwrap(),
                g["offsets_partition"].as_i64().unwrap(),
                g["leader"].clone(),
                g["lag"].clone(),
                g["status"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let row = |g: &str, t: &str, c, l: Value, lag: Value, s: &str| {
        (g.to_string(), t.to_string(), c, 3, 0, l, lag, s.to_string())
    };
    assert_eq!(
        lag,
        vec![
            row(
                "auditor",
                "audit",
                1,
                json!(null),
                json!(null),
                "partition_lost"
            ),
            row("billing", "orders", 7, json!(1), json!(2), "ok"),
            row("billing", "payments", 5, json!(2), json!(3), "ok"),
        ]
    );
    assert_eq!(r["groups"][1]["high_watermark"], 9);
    assert_eq!(r["groups"][2]["high_watermark"], 8);

    // A directory of summaries gives the same verdict.
    let from_dir = run_json(
        &env,
        &["cluster", "--format", "json", dir.to_str().unwrap()],
        1,
    );
    let strip = |mut v: Value| {
        v["summaries"] = Value::Null;
        v["metadata"]["file"] = Value::Null;
        for p in v["partitions"].as_array_mut().unwrap() {
            for r in p["replicas"].as_array_mut().unwrap() {
                r["summary"] = Value::Null;
            }
        }
        v
    };
    assert_eq!(strip(from_dir), strip(r));
}

#[test]
fn text_and_csv_show_the_same_verdicts() {
    let env = TestEnv::new();
    let dir = summarize(&env, "fixtures/cluster");
    let o = env.run(&["cluster", dir.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    let line = |prefix: &[&str]| {
        text.lines()
            .find(|l| {
                let words: Vec<&str> = l.split_whitespace().collect();
                words.starts_with(prefix)
            })
            .unwrap_or_else(|| panic!("no line {prefix:?} in\n{text}"))
            .to_string()
    };
    line(&[
        "orders", "0", "diverged", "1", "2", "9", "9", "1,2,3", "1,2",
    ]);
    assert!(
        line(&["orders", "0", "3", "diverged", "0", "7", "7", "1", "4", "4", "2", "5"])
            .contains("Kafka truncates it to 4")
    );
    line(&[
        "billing", "orders", "0", "7", "3", "1", "0", "9", "9", "2", "ok",
    ]);
    assert!(stderr(&o).contains("5 partitions: 1 diverged, 1 lost, 3 under_replicated, 0 ok"));

    let o = env.run(&["cluster", "--format", "csv", dir.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1));
    let csv = stdout(&o);
    let mut lines = csv.lines();
    assert_eq!(
        lines.next().unwrap(),
        "topic,partition,status,leader,node_id,state,log_start_offset,log_end_offset,\
         high_watermark,leader_epoch,truncation_offset,divergence_offset,batches_beyond,\
         behind_by,batches_beyond_exact,verified_through,assigned,detail"
    );
    // 2 + 2 + 2 + 3 + 3 replicas (missing ones included).
    assert_eq!(lines.clone().count(), 12);
    assert!(
        lines.any(|l| l.starts_with("orders,0,diverged,1,3,diverged,0,7,7,1,4,4,2,5,true,4,true,"))
    );

    let o = env.run(
        &["cluster", "--lag", "--format", "csv", dir.to_str().unwrap()],
        None,
    );
    assert_eq!(
        stdout(&o),
        // The commits carry no leader epoch and lie within the leaders'
        // logs: each consumer resumes at its committed offset.
        "group,topic,partition,committed_offset,coordinator,leader,log_start_offset,\
         log_end_offset,high_watermark,lag,status,lands\n\
         auditor,audit,0,1,3,,,,,,partition_lost,\n\
         billing,orders,0,7,3,1,0,9,9,2,ok,resumes at 7\n\
         billing,payments,0,5,3,2,0,8,8,3,ok,resumes at 5\n"
    );
}

/// A copy of fixtures/cluster under `name` without the metadata logs.
fn without_metadata(env: &TestEnv, name: &str) -> String {
    let root = env.path(name);
    crate::support::copy_dir(&env.path("fixtures/cluster"), &root);
    for n in 1..=3 {
        std::fs::remove_dir_all(root.join(format!("broker-{n}/__cluster_metadata-0"))).unwrap();
    }
    name.to_string()
}

#[test]
fn without_metadata_the_leader_is_the_replica_with_the_newest_epoch() {
    let env = TestEnv::new();
    let root = without_metadata(&env, "bare");
    let dir = summarize(&env, &root);
    let r = run_json(
        &env,
        &["cluster", "--format", "json", dir.to_str().unwrap()],
        1,
    );
    assert_eq!(r["metadata"], Value::Null);
    // No assignment is known, so nothing can be missing or lost: the
    // partitions are the ones the summaries hold.
    assert_eq!(
        r["totals"],
        json!({"partitions": 4, "ok": 1, "under_replicated": 2, "diverged": 1, "offline": 0, "lost": 0,
               "diverged_replicas": 1})
    );
    // orders-0: brokers 1 and 2 hold epoch 2, broker 3 only 1; 1 and 2 both
    // end at 9: the lower node id, 1. Broker 3 diverges as before.
    let orders = partition(&r, "orders", 0);
    assert_eq!(
        (orders["leader"].clone(), orders["leader_source"].clone()),
        (json!(1), json!("chosen"))
    );
    assert_eq!(
        verdict(replica(orders, 3)),
        v("diverged", json!(4), json!(4), json!(2), json!(5))
    );
    // payments-0: all in epoch 0; 1 and 2 end at 8, 3 at 5: node 1.
    let payments = partition(&r, "payments", 0);
    assert_eq!(payments["leader"], 1);
    assert_eq!(replica(payments, 3)["state"], "behind");
    // __consumer_offsets-0: broker 3 ends at 5, broker 1 at 2: node 3.
    assert_eq!(partition(&r, "__consumer_offsets", 0)["leader"], 3);
    // audit-1: only broker 2 holds it: ok (its replication factor is unknown).
    assert_eq!(partition(&r, "audit", 1)["status"], "ok");
    let statuses: Vec<(&str, &str)> = r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| (g["topic"].as_str().unwrap(), g["status"].as_str().unwrap()))
        .collect();
    assert_eq!(
        statuses,
        vec![
            ("audit", "no_partition"),
            ("orders", "ok"),
            ("payments", "ok")
        ]
    );
    assert_eq!(r["groups"][1]["lag"], 2);
}

#[test]
fn checksums_find_a_difference_kafka_does_not_see() {
    // Broker 2's orders-0 with the batch at 2 ([2..3]) rewritten with other
    // values under the same epoch: its leader epochs and log end are the
    // leader's, so Kafka's truncation keeps everything (9). The chains
    // agree after the batch at 0 (end 2) and disagree at the end of the
    // batch at 2 (end 4): the first differing batch starts at 2; from
    // there broker 2 holds that batch and the 3 of epoch 2.
    let env = TestEnv::new();
    let log = env.path("fixtures/cluster/broker-2/orders-0/00000000000000000000.log");
    let bytes = crate::support::encoded(
        "import cluster as c\n\
         out = c.encode('orders', [(0, 0, ['o-0', 'o-1']), (2, 0, ['o-2', 'not-o-3'])] + c.ORDERS_LEADER)",
    );
    std::fs::write(&log, bytes).unwrap();
    let dir = summarize(&env, "fixtures/cluster");
    let r = run_json(
        &env,
        &["cluster", "--format", "json", dir.to_str().unwrap()],
        1,
    );
    let b2 = replica(partition(&r, "orders", 0), 2);
    assert_eq!(
        verdict(b2),
        v("diverged", json!(9), json!(2), json!(4), json!(7))
    );
    assert_eq!(b2["batches_beyond_exact"], true);
    assert_eq!(b2["verified_through"], 2);
    assert!(
        b2["detail"].as_str().unwrap().contains("Kafka keeps them"),
        "{b2}"
    );
    assert_eq!(r["totals"]["diverged_replicas"], 2);
}

fn write_json(path: &Path, v: &Value) {
    std::fs::write(path, serde_json::to_vec(v).unwrap()).unwrap();
}

#[test]
fn summaries_that_cannot_be_merged_are_refused() {
    let env = TestEnv::new();
    let dir = summarize(&env, "fixtures/cluster");
    let b1 = dir.join("broker-1.json");
    let doc: Value = serde_json::from_slice(&std::fs::read(&b1).unwrap()).unwrap();
    let refused = |args: &[&str], needle: &str| {
        let o = env.run(args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(stdout(&o).is_empty());
    };
    let other = env.path("other.json");
    let p = other.to_str().unwrap();
    // A newer major version.
    let mut v2 = doc.clone();
    v2["schema_version"] = json!(2);
    write_json(&other, &v2);
    refused(
        &["cluster", p],
        "summary schema version 2 is not one this klog reads (1)",
    );
    // Not a summary.
    std::fs::write(&other, "TOPIC PARTITION\n").unwrap();
    refused(&["cluster", p], "is not a klog summary");
    write_json(&other, &json!({"schema_version": 1}));
    refused(&["cluster", p], "missing field `log_dirs`");
    // The same directory twice.
    refused(
        &["cluster", b1.to_str().unwrap(), b1.to_str().unwrap()],
        "node 1's log directory \"fixtures/cluster/broker-1\" is also summarized in",
    );
    // Another cluster.
    let mut foreign = doc.clone();
    foreign["log_dirs"][0]["cluster_id"] = json!("another-cluster");
    foreign["log_dirs"][0]["node_id"] = json!(7);
    write_json(&other, &foreign);
    refused(
        &["cluster", b1.to_str().unwrap(), p],
        "summaries of two clusters",
    );
    // No node id: klog's own data directory has no meta.properties.
    let o = env.run(&["summary", "--format", "json", "fixtures/data"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    std::fs::write(&other, &o.stdout).unwrap();
    refused(
        &["cluster", p],
        "has no node id (meta.properties missing or unreadable): summarize it with --node-id N",
    );
    let o = env.run(
        &[
            "summary",
            "--format",
            "json",
            "--node-id",
            "5",
            "fixtures/data",
        ],
        None,
    );
    std::fs::write(&other, &o.stdout).unwrap();
    let r = run_json(&env, &["cluster", "--format", "json", p], 0);
    assert_eq!(r["partitions"][0]["leader"], 5);
    // A directory without summaries.
    std::fs::create_dir_all(env.path("empty")).unwrap();
    refused(&["cluster", "empty"], "holds no summaries (*.json files)");
}

#[test]
fn hostile_summaries_never_panic() {
    // Numbers at the edges of their types in every offset and epoch.
    let env = TestEnv::new();
    let dir = summarize(&env, "fixtures/cluster");
    let b3 = dir.join("broker-3.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&b3).unwrap()).unwrap();
    const I32: [&str; 5] = [
        "leader_epoch",
        "partition",
        "leader",
        "partition_epoch",
        "offsets_partition",
    ];
    fn edge(v: &mut Value, flip: &mut bool) {
        match v {
            Value::Object(m) => {
                for (k, x) in m.iter_mut() {
                    if x.is_i64() || x.is_u64() {
                        *flip = !*flip;
                        *x = match (k.as_str(), *flip) {
                            ("schema_version", _) => json!(1),
                            ("node_id", _) => json!(3),
                            (k, true) if I32.contains(&k) => json!(i32::MAX),
                            (k, false) if I32.contains(&k) => json!(i32::MIN),
                            ("crc32c", _) => json!(u32::MAX),
                            ("batches" | "records" | "bytes", _) => json!(u64::MAX),
                            (_, true) => json!(i64::MAX),
                            (_, false) => json!(i64::MIN),
                        };
                    } else {
                        edge(x, flip);
                    }
                }
            }
            Value::Array(a) => a.iter_mut().for_each(|x| edge(x, flip)),
            _ => {}
        }
    }
    edge(&mut doc, &mut false);
    write_json(&b3, &doc);
    let o = env.run(&["cluster", dir.to_str().unwrap()], None);
    // The document is well-formed, but its offsets are not Kafka's: refused
    // with the first field that breaks an invariant (tests/hostile/cluster.rs).
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("is not a summary klog can trust: log_dirs[0].partitions[0]."),
        "{}",
        stderr(&o)
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
}

#[test]
fn summary_reads_headers_and_stops_at_damage() {
    let env = TestEnv::new();
    // fixtures/truncated: the last batch of orders-0 is cut 20 bytes in
    // (position 2146 of its last segment): the walk ends before it, as a
    // broker's recovery would, and the damage is an error.
    let o = env.run(&["summary", "--format", "json", "fixtures/truncated"], None);
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    // The findings are in the document (stderr holds them in text output).
    assert!(
        doc["findings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|f| f["kind"] == "torn_tail"),
        "{doc}"
    );
    let p = &doc["log_dirs"][0]["partitions"][0];
    assert!(p["damage"]
        .as_str()
        .unwrap()
        .contains(":2146 error torn_tail"));
    // data/orders-0 without the cut batch: the same log end as verify-crc's valid prefix.
    let full = run_json(&env, &["summary", "--format", "json", "fixtures/data"], 0);
    let full_end = full["log_dirs"][0]["partitions"][0]["log_end_offset"]
        .as_i64()
        .unwrap();
    assert!(p["log_end_offset"].as_i64().unwrap() < full_end);
    // fixtures/corrupt: one byte flipped inside the records of the batch at
    // position 950: the header walk does not see it; --check-crc ends the
    // log there (base offset 15 of that batch).
    let plain = run_json(
        &env,
        &["summary", "--format", "json", "fixtures/corrupt"],
        0,
    );
    assert_eq!(
        plain["log_dirs"][0]["partitions"][0]["log_end_offset"],
        full_end
    );
    let o = env.run(
        &[
            "summary",
            "--format",
            "json",
            "--check-crc",
            "fixtures/corrupt",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(doc["log_dirs"][0]["partitions"][0]["log_end_offset"], 15);
    assert_eq!(doc["findings"][0]["kind"], "crc_mismatch");
}

#[test]
fn summary_of_a_crashed_broker_matches_its_fixture() {
    // fixtures/broker (see fixtures/README.md): payments-0 ends at 32 with
    // high watermark 27; __consumer_offsets-19 starts with a magic-1 gzip
    // wrapper (offsets 0..2, no leader epoch), then v2 batches of epoch 5
    // (its leader-epoch-checkpoint starts epoch 5 at 3).
    let env = TestEnv::new();
    let doc = run_json(&env, &["summary", "--format", "json", "fixtures/broker"], 0);
    let d = &doc["log_dirs"][0];
    assert_eq!(d["node_id"], 1);
    let find = |name: &str, p: i64| {
        d["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|x| x["topic"] == name && x["partition"] == p)
            .unwrap()
            .clone()
    };
    let payments = find("payments", 0);
    assert_eq!(
        (
            payments["log_end_offset"].clone(),
            payments["high_watermark"].clone()
        ),
        (json!(32), json!(27))
    );
    let legacy = find("__consumer_offsets", 19);
    assert_eq!(legacy["epochs"][0]["leader_epoch"], -1);
    assert_eq!(legacy["epochs"][0]["start_offset"], 2);
    assert_eq!(legacy["epochs"][0]["end_offset"], 3);
    assert_eq!(legacy["epochs"][1]["leader_epoch"], 5);
    assert_eq!(legacy["epochs"][1]["start_offset"], 3);
    assert_eq!(
        legacy["leader_epochs"],
        json!([{"leader_epoch": 5, "start_offset": 3}])
    );
    assert_eq!(find("orders", 0)["log_end_offset"], 42);
}

#[test]
fn a_batch_stamped_below_its_runs_epoch_counts_in_that_run() {
    // Batches at 0 (epoch 0), 1 (2), 2 (1: below 2, no broker writes it), 3
    // (3): three runs, the second holding two batches; the leader-epoch
    // cache (no checkpoint, recovered from the batches) has 0, 2 and 3.
    let env = TestEnv::new();
    let bytes = crate::support::encoded(
        "out = b''.join(batch(o, [(0, 0, b'k', b'v')], leader_epoch=e) for o, e in [(0, 0), (1, 2), (2, 1), (3, 3)])",
    );
    crate::support::write_segment(&env.path("odd"), "t-0", &bytes);
    let doc = run_json(
        &env,
        &["summary", "--format", "json", "--node-id", "1", "odd"],
        0,
    );
    let p = &doc["log_dirs"][0]["partitions"][0];
    let runs: Vec<(i64, i64, i64, i64)> = p["epochs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["leader_epoch"].as_i64().unwrap(),
                r["start_offset"].as_i64().unwrap(),
                r["end_offset"].as_i64().unwrap(),
                r["batches"].as_i64().unwrap(),
            )
        })
        .collect();
    assert_eq!(runs, vec![(0, 0, 1, 1), (2, 1, 3, 2), (3, 3, 4, 1)]);
    assert_eq!(
        p["leader_epochs"],
        json!([{"leader_epoch": 0, "start_offset": 0}, {"leader_epoch": 2, "start_offset": 1},
               {"leader_epoch": 3, "start_offset": 3}])
    );
    assert_eq!(
        p["tail"][2]["leader_epoch"], 2,
        "the batch of epoch 1 is in epoch 2's run"
    );
}

#[test]
fn a_partition_in_two_log_directories_of_one_node_is_refused() {
    // Kafka refuses to start with two live copies of one partition
    // ("Duplicate log directories"); so does the merge.
    let env = TestEnv::new();
    let copy = env.path("fixtures/cluster/broker-1b");
    crate::support::copy_dir(&env.path("fixtures/cluster/broker-1"), &copy);
    let props = copy.join("meta.properties");
    let text = std::fs::read_to_string(&props).unwrap();
    std::fs::write(
        &props,
        text.replace("bG9nLWRpci1icm9rZXItMQ", "YW5vdGhlci1sb2dkaXItMQ"),
    )
    .unwrap();
    let dir = summarize(&env, "fixtures/cluster");
    let o = env.run(
        &["summary", "--format", "json", "fixtures/cluster/broker-1b"],
        None,
    );
    std::fs::write(dir.join("broker-1b.json"), &o.stdout).unwrap();
    let o = env.run(&["cluster", dir.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o)
            .contains("node 1 holds \"__consumer_offsets\" partition 0 in two log directories"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn with_no_leader_in_the_metadata_every_eligible_leaders_outcome_is_shown() {
    // A stopped KRaft 4.x cluster keeps leader -1, an empty ISR and the
    // ELR (KIP-966). PartitionChangeBuilder.electAnyLeader elects the first
    // replica in assignment order that is in the ELR (the ISR being empty)
    // *and* acceptable, i.e. unfenced: whichever of them comes back first.
    // payments-0 has replicas [2, 3, 1] and ELR [1, 3]: node 3 (0..4) or
    // node 1 (0..7) may lead, with different outcomes; one guess is wrong
    // half the time.
    let env = TestEnv::new();
    let dir = summarize(&env, "fixtures/cluster");
    let b1 = dir.join("broker-1.json");
    let mut doc: Value = serde_json::from_slice(&std::fs::read(&b1).unwrap()).unwrap();
    for t in doc["log_dirs"][0]["metadata"]["topics"]
        .as_array_mut()
        .unwrap()
    {
        if t["topic"] == "payments" {
            let p = &mut t["partitions"][0];
            p["leader"] = json!(-1);
            p["isr"] = json!([]);
            p["eligible_leader_replicas"] = json!([1, 3]);
        }
    }
    write_json(&b1, &doc);
    let r = run_json(
        &env,
        &["cluster", "--format", "json", dir.to_str().unwrap()],
        1,
    );
    let payments = partition(&r, "payments", 0);
    assert_eq!(payments["leader_source"], json!("undecided"));
    assert!(
        payments["detail"]
            .as_str()
            .unwrap()
            .contains("whichever of nodes 3 (in the ELR), 1 (in the ELR) comes back first"),
        "{}",
        payments["detail"]
    );
    let outcomes = payments["outcomes"].as_array().unwrap();
    let leaders: Vec<&Value> = outcomes.iter().map(|o| &o["leader"]).collect();
    assert_eq!(leaders, [&json!(3), &json!(1)], "in assignment order");
    // Node 3 leads: nodes 1 and 2 hold epoch 0 past 5; the leader (epoch 0,
    // then the controller's next epoch 1 from its log end 5) ends epoch 0 at
    // 5: both truncate to 5 and lose their last 2 batches.
    let under_3 = &outcomes[0];
    assert_eq!(under_3["status"], "diverged");
    for n in [1, 2] {
        assert_eq!(
            verdict(replica(under_3, n)),
            v("diverged", json!(5), json!(5), json!(2), json!(0))
        );
    }
    // Node 1 leads: node 2 holds the same log, node 3 a prefix 3 short.
    let under_1 = &outcomes[1];
    assert_eq!(under_1["status"], "under_replicated");
    assert_eq!(replica(under_1, 1)["state"], "leader");
    assert_eq!(replica(under_1, 2)["state"], "in_sync");
    assert_eq!(
        (
            replica(under_1, 3)["state"].clone(),
            replica(under_1, 3)["behind_by"].clone()
        ),
        (json!("behind"), json!(3))
    );
    // The partition's status is the worst outcome.
    assert_eq!(payments["status"], "diverged");
    // Text: no one leader; a table of every replica under each.
    let o = env.run(&["cluster", dir.to_str().unwrap()], None);
    let text = stdout(&o);
    assert!(text.contains("IF-LEADER"), "{text}");
}

#[test]
fn a_replaced_empty_disk_is_a_node_that_holds_nothing() {
    // Broker 3's disk replaced and formatted (meta.properties only): its
    // summary has no partition, so its replicas are missing from a node
    // that did report, and audit-0 (replicas 3, 1) is still lost.
    let env = TestEnv::new();
    let b3 = env.path("fixtures/cluster/broker-3");
    let props = std::fs::read(b3.join("meta.properties")).unwrap();
    std::fs::remove_dir_all(&b3).unwrap();
    std::fs::create_dir_all(&b3).unwrap();
    std::fs::write(b3.join("meta.properties"), props).unwrap();
    let dir = summarize(&env, "fixtures/cluster");
    let r = run_json(
        &env,
        &["cluster", "--format", "json", dir.to_str().unwrap()],
        1,
    );
    let orders = partition(&r, "orders", 0);
    assert_eq!(orders["status"], "under_replicated");
    let m = replica(orders, 3);
    assert_eq!(m["state"], "missing");
    assert!(m["detail"]
        .as_str()
        .unwrap()
        .contains("node 3's summaries have no folder"));
    // __consumer_offsets-0's leader 3 lost its copy and the ISR is [3]:
    // the controller could only elect uncleanly, and broker 1's copy is the
    // first replica with one; billing's stale commits are what it holds.
    let offsets = partition(&r, "__consumer_offsets", 0);
    assert_eq!(offsets["leader"], 1);
    assert!(offsets["detail"]
        .as_str()
        .unwrap()
        .contains("unclean election"));
    assert_eq!(r["groups"][0]["committed_offset"], 2, "{}", r["groups"]);
}

#[test]
fn a_copy_of_another_topic_of_the_same_name_is_not_a_replica() {
    // Broker 2's payments-0 names another topic id (a deleted topic's folder
    // left behind): the metadata's leader 2 has no copy of this payments,
    // so the controller's choice is the first ISR member ([2, 1]) with one: 1.
    let env = TestEnv::new();
    std::fs::write(
        env.path("fixtures/cluster/broker-2/payments-0/partition.metadata"),
        "version: 0\ntopic_id: b2xkLXBheW1lbnRzLWlkMQ",
    )
    .unwrap();
    let dir = summarize(&env, "fixtures/cluster");
    let r = run_json(
        &env,
        &["cluster", "--format", "json", dir.to_str().unwrap()],
        1,
    );
    let payments = partition(&r, "payments", 0);
    assert_eq!(payments["leader"], 1);
    let m = replica(payments, 2);
    assert_eq!(m["state"], "missing");
    assert!(
        m["detail"]
            .as_str()
            .unwrap()
            .contains("b2xkLXBheW1lbnRzLWlkMQ"),
        "{m}"
    );
    assert_eq!(replica(payments, 3)["state"], "behind");
}

#[test]
fn each_group_lands_where_kafkas_consumer_resumes() {
    // fixtures/cluster with broker 3's offsets log (it leads
    // __consumer_offsets-0, so it is billing's coordinator) rewritten by
    // encoder.py: billing commits orders-0 = 7 with leader epoch 1 (read
    // from broker 3 when it led epoch 1), payments-0 = 20 without an epoch,
    // and auditor audit-1 = 0 with epoch 5.
    // - orders-0's leader (1) has epochs 0@0 and 2@4: endOffsetFor(1) is
    //   (0, 4), below 7: truncation detected, the consumer moves to 4
    //   (SubscriptionState.maybeCompleteValidation);
    // - payments-0's leader (2) ends at 8: 20 is out of range,
    //   auto.offset.reset decides between 0 and 8;
    // - audit-1's leader (2) knows no epoch 5 (its checkpoint holds epoch
    //   0 only): UNDEFINED, auto.offset.reset decides between 0 and 1.
    let env = TestEnv::new();
    let root = env.path("fixtures/cluster");
    let bytes = crate::support::encoded(
        "T = 1700000000000\n\
         commits = [('billing', 'orders', 0, 7, 1), ('billing', 'payments', 0, 20, -1), ('auditor', 'audit', 1, 0, 5)]\n\
         out = b''.join(batch(i, [(0, 0, offset_commit_key(g, t, p), offset_commit_value(o, T + i, leader_epoch=e))], leader_epoch=0) for i, (g, t, p, o, e) in enumerate(commits))",
    );
    let part = root.join("broker-3/__consumer_offsets-0");
    for f in std::fs::read_dir(&part).unwrap() {
        let f = f.unwrap().path();
        if f.extension()
            .is_some_and(|e| e == "log" || e == "index" || e == "timeindex")
        {
            std::fs::remove_file(f).unwrap();
        }
    }
    std::fs::write(part.join("00000000000000000000.log"), bytes).unwrap();
    let doc = cluster_of_dirs(&env);
    let lands = |group: &str, topic: &str| {
        doc["groups"]
            .as_array()
            .unwrap()
            .iter()
            .find(|g| g["group"] == group && g["topic"] == topic)
            .unwrap_or_else(|| panic!("{group} {topic}: {doc}"))["lands"]
            .clone()
    };
    assert_eq!(
        lands("billing", "orders"),
        serde_json::json!({"kind": "divergence_point", "offset": 4})
    );
    assert_eq!(
        lands("billing", "payments"),
        serde_json::json!({"kind": "reset", "earliest": 0, "latest": 8})
    );
    assert_eq!(
        lands("auditor", "audit"),
        serde_json::json!({"kind": "reset", "earliest": 0, "latest": 1})
    );
}

/// `klog cluster --format json` of fixtures/cluster's three directories in `env`.
fn cluster_of_dirs(env: &TestEnv) -> Value {
    cluster_of(env, "fixtures/cluster")
}

/// `klog cluster --format json` of the three brokers' directories under `rel` in `env`.
fn cluster_of(env: &TestEnv, rel: &str) -> Value {
    let root = env.path(rel);
    let dirs: Vec<String> = (1..=3)
        .map(|n| {
            root.join(format!("broker-{n}"))
                .to_str()
                .unwrap()
                .to_string()
        })
        .collect();
    let mut args = vec!["cluster", "--format", "json"];
    args.extend(dirs.iter().map(String::as_str));
    run_json(env, &args, 1)
}

#[test]
fn the_records_a_truncation_cuts_are_named_by_offset_and_key() {
    // fixtures/cluster (cluster.py): broker 3 holds orders-0's batches at
    // 4..6 under epoch 1, keys k4..k6, high watermark 7; broker 1 leads at
    // epoch 2 from 4, so broker 3 truncates to 4 and those three records
    // are gone (all below its high watermark: it had counted them committed).
    let env = TestEnv::new();
    let doc = cluster_of_dirs(&env);
    let lost = &replica(partition(&doc, "orders", 0), 3)["lost"];
    assert_eq!(lost["count"], 3);
    assert_eq!(lost["below_high_watermark"], 3);
    assert_eq!(lost["resent"], 0);
    let keys: Vec<(i64, &str)> = lost["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["offset"].as_i64().unwrap(), r["key"].as_str().unwrap()))
        .collect();
    assert_eq!(keys, [(4, "k4"), (5, "k5"), (6, "k6")]);
    // No other replica loses anything.
    for p in doc["partitions"].as_array().unwrap() {
        for r in p["replicas"].as_array().unwrap() {
            if (p["topic"].as_str(), r["node_id"].as_i64()) != (Some("orders"), Some(3)) {
                assert!(r.get("lost").is_none(), "{p}");
            }
        }
    }
    // From summaries alone the records are not read.
    let summaries = summarize(&env, "fixtures/cluster");
    let doc = run_json(
        &env,
        &["cluster", "--format", "json", summaries.to_str().unwrap()],
        1,
    );
    assert!(replica(partition(&doc, "orders", 0), 3)
        .get("lost")
        .is_none());
}

#[test]
fn a_record_its_idempotent_producer_resent_to_the_new_leader_survives() {
    // broker 3's epoch-1 batch at 4..6 comes from idempotent producer 77
    // (epoch 0, sequences 0..2); the new leader (broker 1, and broker 2
    // with it) got sequences 0..1 re-sent at 4..5 under epoch 2, then
    // other records at 6..8. The truncation cuts broker 3's 4..6; the
    // records of sequences 0 and 1 survive at the leader's 4 and 5
    // (ProducerStateManager answers a duplicate sequence, never appends it
    // twice); sequence 2 is lost.
    let env = TestEnv::new();
    let root = env.path("fixtures/cluster");
    let common = "T = 1700000000000\n\
                  def data(base, n, epoch, **kw):\n    return batch(base, [(i, i, b'k%d' % (base + i), b'v') for i in range(n)], first_timestamp=T + base, leader_epoch=epoch, **kw)\n\
                  head = data(0, 2, 0) + data(2, 2, 0)\n";
    let follower = crate::support::encoded(&format!(
        "{common}out = head + data(4, 3, 1, producer_id=77, producer_epoch=0, base_sequence=0)"
    ));
    let leader = crate::support::encoded(&format!(
        "{common}out = head + data(4, 2, 2, producer_id=77, producer_epoch=0, base_sequence=0) + data(6, 3, 2)"
    ));
    for (n, bytes) in [(1, &leader), (2, &leader), (3, &follower)] {
        std::fs::write(
            root.join(format!("broker-{n}/orders-0/00000000000000000000.log")),
            bytes,
        )
        .unwrap();
    }
    let doc = cluster_of_dirs(&env);
    let lost = &replica(partition(&doc, "orders", 0), 3)["lost"];
    assert_eq!(
        (lost["count"].as_i64(), lost["resent"].as_i64()),
        (Some(3), Some(2))
    );
    let resent: Vec<(i64, Option<i64>, Option<i64>)> = lost["records"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["offset"].as_i64().unwrap(),
                r["sequence"].as_i64(),
                r["resent_at"].as_i64(),
            )
        })
        .collect();
    assert_eq!(
        resent,
        [
            (4, Some(0), Some(4)),
            (5, Some(1), Some(5)),
            (6, Some(2), None)
        ]
    );
}

/// `cluster` draws the group lag by `klog lag`'s rule: a commit between
/// the leader's high watermark and its log end is above_high_watermark,
/// with kafka-consumer-groups' unclamped lag (`ConsumerGroupCommand.getLag`:
/// high watermark − committed). fixtures/cluster: billing committed 7 on
/// orders-0, whose leader, broker 1, ends at 9; its summary is edited to
/// say high watermark 5.
#[test]
fn a_commit_above_the_leaders_high_watermark_is_said() {
    let env = TestEnv::new();
    let dir = summarize(&env, "fixtures/cluster");
    let file = dir.join("broker-1.json");
    let mut s: Value = serde_json::from_slice(&std::fs::read(&file).unwrap()).unwrap();
    let (hw, committed) = (5, 7);
    for d in s["log_dirs"].as_array_mut().unwrap() {
        for p in d["partitions"].as_array_mut().unwrap() {
            if p["topic"] == "orders" && p["partition"] == 0 {
                p["high_watermark"] = json!(hw);
            }
        }
    }
    write_json(&file, &s);
    let r = run_json(
        &env,
        &["cluster", "--format", "json", dir.to_str().unwrap()],
        1,
    );
    let g = r["groups"]
        .as_array()
        .unwrap()
        .iter()
        .find(|g| g["group"] == "billing" && g["topic"] == "orders")
        .unwrap();
    assert_eq!(
        (
            g["committed_offset"].as_i64(),
            g["high_watermark"].as_i64(),
            g["lag"].as_i64(),
            g["status"].as_str()
        ),
        (
            Some(committed),
            Some(hw),
            Some(hw - committed),
            Some("above_high_watermark")
        )
    );
}

#[test]
fn in_zookeeper_mode_every_replica_that_can_be_elected_has_its_outcome() {
    // fixtures/cluster as a ZooKeeper-mode cluster: no metadata log, and
    // meta.properties version 0 (broker.id, cluster.id), as a 3.x broker
    // writes it. The leader and ISR live in ZooKeeper, not on disk. The
    // controller elects a live ISR member, and every ISR member holds every
    // record below the high watermark: with orders-0's high watermarks at
    // 7 on every node, nodes 1 and 2 (epoch 2, log end 9) and node 3
    // (epoch 1, log end 7) can all be elected, in that order. Under 1 or 2,
    // node 3 truncates to 4 (its epoch 1 ends where the leader's epoch 0
    // does); under 3, nodes 1 and 2 truncate to 4 (epoch 2 is unknown to
    // node 3, whose epoch 0 ends at 4).
    let env = TestEnv::new();
    let root = without_metadata(&env, "zk");
    for n in 1..=3 {
        let dir = env.path(&format!("{root}/broker-{n}"));
        std::fs::write(
            dir.join("meta.properties"),
            format!("#\nversion=0\nbroker.id={n}\ncluster.id=Y2x1c3Rlci1maXh0dXJlIQ\n"),
        )
        .unwrap();
        let hw = std::fs::read_to_string(dir.join("replication-offset-checkpoint")).unwrap();
        let hw: String = hw
            .lines()
            .map(|l| {
                if l.starts_with("orders 0 ") {
                    "orders 0 7"
                } else {
                    l
                }
            })
            .map(|l| format!("{l}\n"))
            .collect();
        std::fs::write(dir.join("replication-offset-checkpoint"), hw).unwrap();
    }
    let doc = cluster_of(&env, &root);
    let p = partition(&doc, "orders", 0);
    assert_eq!(p["leader_source"], "undecided");
    assert!(p["detail"].as_str().unwrap().contains("ZooKeeper"), "{p}");
    // (leader, [(diverged follower, where it truncates)]) per outcome.
    type Outcome = (i64, Vec<(i64, Option<i64>)>);
    let outcomes: Vec<Outcome> = p["outcomes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|o| {
            let cut = o["replicas"]
                .as_array()
                .unwrap()
                .iter()
                .filter(|r| r["state"] == "diverged")
                .map(|r| {
                    (
                        r["node_id"].as_i64().unwrap(),
                        r["truncation_offset"].as_i64(),
                    )
                })
                .collect();
            (o["leader"].as_i64().unwrap(), cut)
        })
        .collect();
    assert_eq!(
        outcomes,
        [
            (1, vec![(3, Some(4))]),
            (2, vec![(3, Some(4))]),
            (3, vec![(1, Some(4)), (2, Some(4))]),
        ]
    );
    // The records each outcome loses are named: under 3, nodes 1 and 2
    // lose 4..8 (keys k4..k8, fixtures/cluster).
    let under_3 = &p["outcomes"][2]["replicas"];
    let lost = under_3
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["node_id"] == 1)
        .unwrap()["lost"]["count"]
        .clone();
    assert_eq!(lost, 5);
}

/// Text lists the partitions that need attention, not every partition:
/// the rows of its partitions table are exactly those whose status in the
/// JSON document is not `ok`; `--all` lists every one (as JSON and CSV
/// always do).
#[test]
fn text_lists_only_the_partitions_that_are_not_ok() {
    let env = crate::support::TestEnv::new();
    let root = crate::support::repo().join("fixtures/kafka-real/4.4.0");
    let dirs: Vec<String> = (1..=3)
        .map(|b| root.join(format!("broker-{b}")).display().to_string())
        .collect();
    let dirs: Vec<&str> = dirs.iter().map(String::as_str).collect();
    let json = env.run(
        &[&["cluster", "--format", "json"][..], &dirs].concat(),
        None,
    );
    let doc: serde_json::Value = serde_json::from_str(&crate::support::stdout(&json)).unwrap();
    let all = doc["partitions"].as_array().unwrap();
    let not_ok: Vec<String> = all
        .iter()
        .filter(|p| p["status"] != "ok")
        .map(|p| format!("{} {}", p["topic"].as_str().unwrap(), p["partition"]))
        .collect();
    assert!(!not_ok.is_empty() && not_ok.len() < all.len(), "{not_ok:?}");
    let rows = |args: &[&str]| -> Vec<String> {
        let o = env.run(&[&["cluster"][..], args, &dirs].concat(), None);
        let text = crate::support::stdout(&o);
        // The first table after the brokers' lines: its rows until a blank line.
        text.split("\n\n")
            .nth(1)
            .unwrap()
            .lines()
            .skip(1)
            .map(|l| l.split_whitespace().take(2).collect::<Vec<_>>().join(" "))
            .collect()
    };
    assert_eq!(rows(&[]), not_ok);
    assert_eq!(rows(&["--all"]).len(), all.len());
}
