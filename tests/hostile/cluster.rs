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
