//! Tampered summaries: `klog cluster` refuses a summary whose numbers
//! break Kafka's invariants, naming the file and the field, instead of
//! turning them into a verdict.

use serde_json::{json, Value};

use crate::support::{stderr, stdout, TestEnv};

/// `klog summary --format json` of each broker of fixtures/cluster into
/// `summaries/broker-N.json`.
fn summarize(env: &TestEnv) -> std::path::PathBuf {
    let dir = env.path("summaries");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 1..=3 {
        let o = env.run(
            &[
                "summary",
                "--format",
                "json",
                &format!("fixtures/cluster/broker-{n}"),
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        std::fs::write(dir.join(format!("broker-{n}.json")), &o.stdout).unwrap();
    }
    dir
}

/// An edit of a summary document.
type Tamper = Box<dyn Fn(&mut Value)>;

#[test]
fn round2_tampered_summaries_are_refused_by_file_and_field() {
    let env = TestEnv::new();
    let dir = summarize(&env);
    let b3 = dir.join("broker-3.json");
    let genuine: Value = serde_json::from_slice(&std::fs::read(&b3).unwrap()).unwrap();
    // Broker 3's orders-0 (partitions[1]) diverged from the leader: it
    // holds epoch 1 from offset 4, which the leader never wrote.
    let o = env.run(&["cluster", dir.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("orders                      0  diverged"),
        "{}",
        stdout(&o)
    );
    let orders = "log_dirs[0].partitions[1]";
    let cases: Vec<(&str, Tamper, String)> = vec![
        (
            "a negative log end offset",
            Box::new(|d| d["log_dirs"][0]["partitions"][1]["log_end_offset"] = json!(-5)),
            format!("{orders}.log_end_offset: -5 is not an offset from the log start offset 0 to 2^63-2"),
        ),
        (
            "a log end offset of 2^63-1",
            Box::new(|d| d["log_dirs"][0]["partitions"][1]["log_end_offset"] = json!(i64::MAX)),
            format!("{orders}.log_end_offset: 9223372036854775807 is not an offset"),
        ),
        (
            "a negative log start offset",
            Box::new(|d| d["log_dirs"][0]["partitions"][1]["log_start_offset"] = json!(-1)),
            format!("{orders}.log_start_offset: -1 is not an offset from 0"),
        ),
        (
            "another command's document",
            Box::new(|d| d["command"] = json!("verify-crc")),
            "command: \"verify-crc\" is not \"summary\"".to_string(),
        ),
        (
            "no command",
            Box::new(|d| {
                d.as_object_mut().unwrap().remove("command");
            }),
            "command: missing".to_string(),
        ),
        (
            "leader epochs that go backwards",
            Box::new(|d| {
                d["log_dirs"][0]["partitions"][1]["leader_epochs"] = json!([
                    {"leader_epoch": 1, "start_offset": 0},
                    {"leader_epoch": 0, "start_offset": 4}
                ])
            }),
            format!("{orders}.leader_epochs[1].leader_epoch: epoch 0 follows epoch 1"),
        ),
        (
            "leader epoch start offsets that go backwards",
            Box::new(|d| {
                d["log_dirs"][0]["partitions"][1]["leader_epochs"] = json!([
                    {"leader_epoch": 0, "start_offset": 4},
                    {"leader_epoch": 1, "start_offset": 2}
                ])
            }),
            format!("{orders}.leader_epochs[1].start_offset: epoch 1 starts at 2"),
        ),
        (
            "a negative epoch in the checkpoint",
            Box::new(|d| {
                d["log_dirs"][0]["partitions"][1]["leader_epoch_checkpoint"][0]["leader_epoch"] =
                    json!(-3)
            }),
            format!("{orders}.leader_epoch_checkpoint[0]: epoch -3 at 0"),
        ),
        (
            "segments out of order",
            Box::new(|d| {
                let segs = &mut d["log_dirs"][0]["partitions"][1]["segments"];
                let first = segs[0].clone();
                segs.as_array_mut().unwrap().push(first);
            }),
            format!("{orders}.segments[1].base_offset: 0 does not follow"),
        ),
        (
            "epoch runs out of order",
            Box::new(|d| {
                d["log_dirs"][0]["partitions"][1]["epochs"][1]["leader_epoch"] = json!(0)
            }),
            format!("{orders}.epochs[1].leader_epoch: epoch 0 follows epoch 0"),
        ),
        (
            "a topic longer than a folder name",
            Box::new(|d| d["log_dirs"][0]["partitions"][1]["topic"] = json!("t".repeat(256))),
            format!("{orders}.topic: 256 bytes, over the 255 bytes a folder name can hold (NAME_MAX)"),
        ),
        (
            "a cluster id of 1 MB",
            Box::new(|d| d["log_dirs"][0]["cluster_id"] = json!("c".repeat(1 << 20))),
            "log_dirs[0].cluster_id: 1048576 bytes, over the 255 bytes an id may take".to_string(),
        ),
        (
            "a finding of 1 MB",
            Box::new(|d| {
                d["findings"] = json!([{
                    "kind": "not_a_partition_folder", "severity": "error", "file": "x",
                    "position": 0, "byte": 0, "offset": null, "detail": "d".repeat(1 << 20)
                }])
            }),
            "findings[0].detail: 1048576 bytes, over the 65536 bytes klog writes about a finding"
                .to_string(),
        ),
    ];
    for (what, tamper, field) in cases {
        let mut doc = genuine.clone();
        tamper(&mut doc);
        std::fs::write(&b3, serde_json::to_vec(&doc).unwrap()).unwrap();
        let o = env.run(&["cluster", dir.to_str().unwrap()], None);
        assert_eq!(
            o.status.code(),
            Some(2),
            "{what}: {}{}",
            stdout(&o),
            stderr(&o)
        );
        assert!(stdout(&o).is_empty(), "{what}: {}", stdout(&o));
        let message = stderr(&o);
        assert!(
            message.starts_with(&format!(
                "klog: {}: is not a summary klog can trust: {field}",
                b3.display()
            )),
            "{what}: {message}"
        );
    }
}

#[test]
fn r49_11_a_foreign_folder_is_in_the_cluster_verdict_under_its_broker() {
    // `backup-old/` in broker 2's log directory stops that broker from
    // starting (verify-crc, info and summary say so), but `cluster` given
    // the summaries or the directories said nothing. The summary carries
    // its findings; cluster and report show each broker's under it.
    let env = TestEnv::new();
    let foreign = env.path("fixtures/cluster/broker-2/backup-old");
    std::fs::create_dir(&foreign).unwrap();
    std::fs::write(foreign.join("00000000000000000000.log"), b"old").unwrap();
    let dir = env.path("summaries");
    std::fs::create_dir_all(&dir).unwrap();
    for n in 1..=3 {
        let broker = format!("fixtures/cluster/broker-{n}");
        let o = env.run(&["summary", "--format", "json", &broker], None);
        assert_eq!(
            o.status.code(),
            Some(if n == 2 { 1 } else { 0 }),
            "{}",
            stderr(&o)
        );
        std::fs::write(dir.join(format!("broker-{n}.json")), &o.stdout).unwrap();
    }
    let dirs = [
        "fixtures/cluster/broker-1",
        "fixtures/cluster/broker-2",
        "fixtures/cluster/broker-3",
    ];
    let line = "  error not_a_partition_folder fixtures/cluster/broker-2/backup-old: is not a partition folder";
    for args in [
        vec!["cluster", "summaries"],
        [&["cluster"][..], &dirs].concat(),
    ] {
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let text = stdout(&o);
        let under = text
            .lines()
            .skip_while(|l| !l.starts_with("fixtures/cluster/broker-2: node 2:"))
            .nth(1)
            .unwrap_or_default();
        assert!(under.starts_with(line), "{args:?}: {text}");
        assert_eq!(text.matches("not_a_partition_folder").count(), 1, "{text}");
        assert!(
            stderr(&o).contains("; 1 error in the summaries, of node 2 (listed under each broker)"),
            "{args:?}: {}",
            stderr(&o)
        );
        let json = [&args[..], &["--format", "json"]].concat();
        let doc: Value = serde_json::from_slice(&env.run(&json, None).stdout).unwrap();
        let rows = doc["summaries"].as_array().unwrap();
        for row in rows {
            let kinds: Vec<&str> = row["findings"]
                .as_array()
                .unwrap()
                .iter()
                .map(|f| f["kind"].as_str().unwrap())
                .collect();
            let want: &[&str] = if row["node_id"] == 2 {
                &["not_a_partition_folder"]
            } else {
                &[]
            };
            assert_eq!(kinds, want, "{args:?}: {row}");
        }
    }
    // The report, from the summaries or the directories: under the restart
    // lines, and in the verdict.
    for args in [
        vec![
            "report",
            "summaries/broker-1.json",
            "summaries/broker-2.json",
            "summaries/broker-3.json",
        ],
        [&["report"][..], &dirs].concat(),
    ] {
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {}", stderr(&o));
        let page = stdout(&o);
        assert!(
            page.contains("<li class=\"broker-findings unclean\" data-node=\"2\" data-errors=\"1\" data-findings=\"1\">"),
            "{args:?}"
        );
        assert!(
            page.contains("data-kind=\"not_a_partition_folder\""),
            "{args:?}: not in the verdict"
        );
        assert!(page.contains("data-verdict=\"damaged\""), "{args:?}");
    }
    // Without the folder, no broker has a line of findings.
    std::fs::remove_dir_all(&foreign).unwrap();
    let o = env.run(&[&["cluster"][..], &dirs].concat(), None);
    assert!(!stdout(&o).contains("  error "), "{}", stdout(&o));
    assert!(
        !stderr(&o).contains("in the summaries, of node"),
        "{}",
        stderr(&o)
    );
}
