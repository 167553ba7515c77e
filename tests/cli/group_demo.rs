use crate::support::{check_golden, stderr, stdout, TestEnv};

#[test]
fn the_walk_through_is_golden_and_leaves_nothing() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "group-demo",
            "--dir",
            "data",
            "--group",
            "kitchen",
            "--crash-after",
            "12",
            "--now-ms",
            "1700000000000",
        ],
        0,
        "group-demo/kitchen",
    );
    assert!(
        !env.path("data").exists(),
        "the demo removes the directory it created"
    );
}

#[test]
fn keep_leaves_a_valid_directory_to_explore() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "group-demo",
            "--dir",
            "kept",
            "--crash-after",
            "7",
            "--poll-size",
            "3",
            "--keep",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("Redelivery window: 7 - 6 = 1"), "{text}");
    assert!(
        text.contains("The two windows add up to the poll size (1 + 2 = 3)"),
        "{text}"
    );
    assert!(
        text.contains("klog replay-offsets --history kept"),
        "{text}"
    );
    assert_eq!(
        env.run(&["verify-crc", "kept"], None).status.code(),
        Some(0)
    );
    let o = env.run(&["replay-offsets", "--format", "json", "kept"], None);
    let rows = crate::support::document_rows(&o, "replay-offsets", "offsets");
    let table: Vec<(&str, u64)> = rows
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap(),
                r["committed_offset"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(table, [("courier", 4), ("kitchen", 7)]);
    // A second run over what the first kept starts clean.
    let o = env.run(&["group-demo", "--dir", "kept"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(!env.path("kept").join("orders-0").exists());
}

#[test]
fn refuses_a_directory_with_other_data() {
    let env = TestEnv::new();
    let before: Vec<_> = std::fs::read_dir(env.path("fixtures/groups"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let o = env.run(&["group-demo", "--dir", "fixtures/groups"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds other data (.lock, __offsets-0, ledger-0, ledger-1, orders-0)"),
        "{}",
        stderr(&o)
    );
    let after: Vec<_> = std::fs::read_dir(env.path("fixtures/groups"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after, "nothing removed");
    assert!(env.path("fixtures/groups/orders-0").exists());
    // A directory holding only folders named like the demo's, without its marker, is not the demo's.
    std::fs::create_dir_all(env.path("mine/orders-0")).unwrap();
    let o = env.run(&["group-demo", "--dir", "mine"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(env.path("mine/orders-0").exists());
}

#[test]
fn crash_right_after_a_poll_is_processed() {
    let env = TestEnv::new();
    let o = env.run(&["group-demo", "--dir", "d", "--crash-after", "10"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The crash comes after record 9 is processed and before poll 2's commit.
    assert!(
        stdout(&o).contains("Redelivery window: 10 - 5 = 5"),
        "{}",
        stdout(&o)
    );
    assert!(stdout(&o).contains("(5 + 0 = 5)"), "{}", stdout(&o));
}

#[test]
fn records_produced_after_a_kept_run_are_never_removed() {
    // The demo promises to remove only what it wrote: once the user appends
    // to the orders-0 it left, a new run refuses instead of clearing it.
    let env = TestEnv::new();
    let o = env.run(&["group-demo", "--dir", "kept", "--keep"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(
        &[
            "produce",
            "kept",
            "--topic",
            "orders",
            "--timestamp-ms",
            "1",
        ],
        Some("mine\n"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let log = env.path("kept/orders-0/00000000000000000000.log");
    let before = std::fs::read(&log).unwrap();
    let o = env.run(&["group-demo", "--dir", "kept"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o)
            .contains("the demo's files changed since it left them (orders-0/00000000000000000000"),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(&log).unwrap(),
        before,
        "the user's record is kept"
    );
}

/// The CSV rows of a run, from the rule the demo teaches: polls of P
/// offsets from 0; the consumer crashes once it has processed C records;
/// at-least-once commits the next offset after processing a whole poll,
/// at-most-once before processing it; each commit is the next record of
/// the offsets log (a fresh one for each delivery).
fn expected_polls(p: i64, c: i64) -> String {
    let list = |v: &[i64]| {
        let s = format!(
            "[{}]",
            v.iter().map(i64::to_string).collect::<Vec<_>>().join(",")
        );
        if v.len() > 1 {
            format!("\"{s}\"")
        } else {
            s
        }
    };
    let mut out =
        String::from("delivery,poll,offsets,processed,crashed,committed_offset,log_offset\n");
    for delivery in ["at_least_once", "at_most_once"] {
        let (mut done, mut commits) = (0, 0);
        for poll in 1.. {
            let offsets: Vec<i64> = ((poll - 1) * p..poll * p).collect();
            let processed: Vec<i64> = offsets.iter().copied().filter(|&o| o < c).collect();
            done += processed.len() as i64;
            let crashed = done == c && processed.len() < offsets.len();
            let commit = if delivery == "at_most_once" || !crashed {
                commits += 1;
                format!("{},{}", poll * p, commits - 1)
            } else {
                ",".to_string()
            };
            out.push_str(&format!(
                "{delivery},{poll},{},{},{crashed},{commit}\n",
                list(&offsets),
                list(&processed)
            ));
            if crashed {
                break;
            }
        }
    }
    out
}

#[test]
fn csv_is_one_row_per_poll_and_json_the_whole_run() {
    let env = TestEnv::new();
    let run = |format: &str| {
        let o = env.run(
            &[
                "group-demo",
                "--dir",
                "d",
                "--crash-after",
                "7",
                "--poll-size",
                "3",
                "--format",
                format,
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        o
    };
    assert_eq!(stdout(&run("csv")), expected_polls(3, 7));
    let doc = crate::support::document(&run("json"), "group-demo");
    let d = &doc["deliveries"];
    // At-least-once: committed 6 (two whole polls), processed 0..=6 before
    // the crash, so 6 is processed twice; at-most-once committed 9, so 7
    // and 8 are never processed.
    assert_eq!(d[0]["committed_offset"], 6);
    assert_eq!(d[0]["position"], 7);
    assert_eq!(d[0]["duplicated"], serde_json::json!([6]));
    assert_eq!(d[1]["committed_offset"], 9);
    assert_eq!(d[1]["lost"], serde_json::json!([7, 8]));
    assert_eq!(doc["orders_last_offset"], 19);
    // Section 4: three groups' commits, and the replayed table holds each.
    let groups: Vec<&str> = doc["replayed"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["group"].as_str().unwrap())
        .collect();
    assert_eq!(groups, ["analytics", "courier", "kitchen"]);
    assert_eq!(doc["tombstone"]["group"], "analytics");
    assert_eq!(
        doc["tombstone"]["live_keys_before"].as_u64().unwrap(),
        doc["tombstone"]["live_keys_after"].as_u64().unwrap() + 1
    );
    assert!(!env.path("d").exists());
}

/// A crash before the first commit: at-least-once (process, then commit)
/// left no offsets log at all, so the restart is redelivered from offset
/// 0 and the duplicate is record 0; at-most-once (commit, then process)
/// committed 1 before processing record 0, so nothing is lost. The second
/// part starts from a fresh offsets log, which here means none to remove.
#[test]
fn a_crash_before_the_first_commit() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "group-demo",
            "--dir",
            "d",
            "--crash-after",
            "1",
            "--poll-size",
            "1",
            "--format",
            "json",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let runs = doc["deliveries"].as_array().unwrap();
    let least = &runs[0];
    assert_eq!(least["delivery"], "at_least_once");
    // The only poll crashed before its commit: nothing was written.
    assert!(least["polls"][0]["committed_offset"].is_null(), "{least}");
    assert_eq!(least["duplicated"], serde_json::json!([0]));
    let most = &runs[1];
    assert_eq!(most["delivery"], "at_most_once");
    assert_eq!(most["committed_offset"], 1);
    assert_eq!(most["lost"], serde_json::json!([]));
    assert!(!env.path("d").exists(), "the demo removes what it created");
}
