//! The JSON contract: every command's `--format json` document validates
//! against its committed JSON Schema (`man/schema/`), and those files are
//! what the document types generate.

use crate::support::{repo, TestEnv};

/// Generating the schemas again reproduces `man/schema/` byte for byte.
#[test]
fn schemas_are_up_to_date() {
    let env = TestEnv::new();
    let o = env.run(&["generate", "schema", "schema-out"], None);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let mut names: Vec<_> = std::fs::read_dir(env.path("schema-out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut committed: Vec<_> = std::fs::read_dir(repo().join("man/schema"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    committed.sort();
    assert_eq!(
        names, committed,
        "run `cargo run -- generate schema man/schema`"
    );
    for n in &names {
        assert_eq!(
            std::fs::read_to_string(env.path("schema-out").join(n)).unwrap(),
            std::fs::read_to_string(repo().join("man/schema").join(n)).unwrap(),
            "man/schema/{n} is stale: run `cargo run -- generate schema man/schema`"
        );
    }
}

fn validator(command: &str) -> jsonschema::Validator {
    let path = repo().join(format!("man/schema/{command}.schema.json"));
    let schema: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    jsonschema::validator_for(&schema).unwrap()
}

/// Run `klog <args> --format json` and validate its one document.
fn check(env: &TestEnv, command: &str, args: &[&str]) {
    let mut all = vec![command];
    all.extend_from_slice(args);
    all.extend_from_slice(&["--format", "json"]);
    let o = env.run(&all, None);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "{all:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout)
        .unwrap_or_else(|e| panic!("{all:?}: not one JSON document: {e}"));
    assert_eq!(doc["schema_version"], 1, "{all:?}");
    assert_eq!(doc["command"], command, "{all:?}");
    // The recovery preview is its own document (its own schema file).
    let schema = if args.contains(&"--recovery-preview") {
        "verify-crc-recovery-preview"
    } else {
        command
    };
    let v = validator(schema);
    let errors: Vec<String> = v
        .iter_errors(&doc)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(
        errors.is_empty(),
        "{all:?} does not match its schema:\n{}",
        errors.join("\n")
    );
}

#[test]
fn every_document_matches_its_schema() {
    let env = TestEnv::new();
    for dir in ["fixtures/broker", "fixtures/kraft", "fixtures/data"] {
        check(&env, "verify-crc", &[dir]);
        check(&env, "info", &[dir]);
        check(&env, "stats", &[dir]);
    }
    for dir in ["fixtures/broker", "fixtures/kraft"] {
        check(&env, "replay-offsets", &[dir]);
        check(&env, "replay-offsets", &["--history", dir]);
        check(&env, "lag", &[dir]);
        check(&env, "lag", &["--isolation", "read-committed", dir]);
        check(&env, "groups", &[dir]);
    }
    check(&env, "metadata", &["fixtures/kraft"]);
    check(&env, "export", &["fixtures/broker", "-o", "exported"]);
    check(
        &env,
        "produce",
        &["produced", "--topic", "t", "--input-format", "text"],
    );
    // Summaries of the three brokers, then the cluster verdict over them.
    std::fs::create_dir_all(env.path("summaries")).unwrap();
    for n in 1..=3 {
        let dir = format!("fixtures/cluster/broker-{n}");
        check(&env, "summary", &[&dir]);
        let o = env.run(&["summary", "--format", "json", &dir], None);
        std::fs::write(env.path(&format!("summaries/{n}.json")), &o.stdout).unwrap();
    }
    check(&env, "cluster", &["summaries"]);
    check(
        &env,
        "verify-crc",
        &["--recovery-preview", "fixtures/truncated"],
    );
    check(
        &env,
        "transactions",
        &["--now-ms", "1700000120000", "fixtures/txn"],
    );
    check(&env, "verify-crc", &["fixtures/corrupt/orders-0"]);
    check(
        &env,
        "verify-crc",
        &["--deep", "--now-ms", "0", "fixtures/txn"],
    );
    check(
        &env,
        "verify-crc",
        &["--repair", "--dry-run", "fixtures/truncated"],
    );
    check(
        &env,
        "diff",
        &["fixtures/data/orders-0", "fixtures/corrupt/orders-0"],
    );
    for path in [
        "fixtures/data/orders-0",
        "fixtures/corrupt/orders-0",
        "fixtures/broker/__consumer_offsets-39",
        "fixtures/kraft/__cluster_metadata-0",
        "fixtures/data/orders-0/00000000000000000000.index",
        "fixtures/data/orders-0/00000000000000000000.timeindex",
    ] {
        check(&env, "dump-segment", &[path]);
    }
    check(
        &env,
        "dump-segment",
        &[
            "--layout",
            "--max-batches",
            "2",
            "fixtures/broker/__consumer_offsets-39",
        ],
    );
    for entry in std::fs::read_dir(env.path("fixtures/txn")).unwrap() {
        let p = entry.unwrap().path();
        if !p.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&p).unwrap() {
            let f = file.unwrap().path();
            if f.extension()
                .is_some_and(|x| x == "txnindex" || x == "snapshot")
            {
                check(&env, "dump-segment", &[f.to_str().unwrap()]);
            }
        }
    }
    // The byte layouts of the files beside a log, and eos-demo's document.
    for path in [
        "fixtures/broker/orders-0/00000000000000000014.index",
        "fixtures/broker/orders-0/00000000000000000014.snapshot",
        "fixtures/broker/ledger-0/00000000000000000000.txnindex",
    ] {
        check(&env, "dump-segment", &["--layout", path]);
    }
    check(
        &env,
        "dump-segment",
        &["fixtures/broker/replication-offset-checkpoint"],
    );
    check(&env, "group-demo", &["--dir", "group"]);
    check(
        &env,
        "eos-demo",
        &["--dir", "eos", "--crash-at", "after-offsets"],
    );
    // The writers' documents: what was written (or would be).
    check(
        &env,
        "tombstone",
        &["fixtures/groups", "--group", "kitchen", "--dry-run"],
    );
    check(
        &env,
        "tombstone",
        &["fixtures/groups", "--group", "auditor", "--now-ms", "5"],
    );
    check(
        &env,
        "commit",
        &[
            "fixtures/groups",
            "-g",
            "kitchen",
            "-t",
            "orders",
            "-p",
            "0",
            "--offset",
            "999",
            "--now-ms",
            "5",
        ],
    );
    for execute in [&[][..], &["--execute", "--now-ms", "5"]] {
        let args = [
            &[
                "fixtures/groups",
                "--group",
                "courier",
                "--all-topics",
                "--to-earliest",
            ][..],
            execute,
        ]
        .concat();
        check(&env, "reset-offsets", &args);
    }
}
