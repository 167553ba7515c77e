//! The output, time and exit-code rules, checked mechanically: every
//! reading command on every fixture directory in every format it offers
//! (read from its own `--help`). Each run exits 0, 1 or 2 (README, "Exit
//! codes"); one that cannot run (2) prints nothing on stdout and says why
//! on stderr; one that ran prints what the format promises: one JSON
//! document, JSON lines, a CSV header of field names and rows as wide, or
//! text that is not JSON; and a table in text shows no raw epoch
//! milliseconds (ISO-8601 by default, README "Output").

use serde_json::Value;

use crate::support::{parse_csv, repo, stderr, stdout, TestEnv};

/// The reading commands, each with the arguments it needs besides a
/// directory.
const COMMANDS: &[(&str, &[&str])] = &[
    ("dump-segment", &["--batches-only"]),
    ("verify-crc", &[]),
    ("replay-offsets", &[]),
    ("lag", &["--now-ms", "1700000120000"]),
    ("groups", &[]),
    ("info", &[]),
    ("transactions", &["--now-ms", "1700000120000"]),
    ("stats", &[]),
    ("metadata", &[]),
    ("summary", &[]),
];

/// Commands whose text is a table of their own (not Kafka's dump format,
/// not findings that quote a file's raw values).
const TABLES: &[&str] = &[
    "replay-offsets",
    "lag",
    "groups",
    "info",
    "stats",
    "metadata",
    "summary",
];

/// Every fixture directory a reader may be pointed at.
fn fixture_dirs() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(repo().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| format!("fixtures/{}", e.file_name().to_str().unwrap()))
        .filter(|d| !d.ends_with("kafka-real") && !d.ends_with("cluster"))
        .collect();
    for b in ["broker-1", "broker-2", "broker-3"] {
        out.push(format!("fixtures/cluster/{b}"));
    }
    out.push("fixtures/kafka-real/4.4.0/broker-1".into());
    out.push("fixtures/kafka-real/3.9.2/broker-2".into());
    out.sort();
    out
}

/// The values `--format` takes, from the command's `--help`.
fn formats(env: &TestEnv, command: &str) -> Vec<String> {
    let help = stdout(&env.run(&[command, "--help"], None));
    let at = help.find("--format <FORMAT>").expect("a --format option");
    let values = help[at..]
        .split("[possible values: ")
        .nth(1)
        .and_then(|r| r.split(']').next())
        .expect("its possible values");
    values.split(", ").map(str::to_string).collect()
}

/// A 13-digit number that reads as an instant between 2001 and 2100 in
/// epoch milliseconds, standing alone.
fn raw_epoch_ms(text: &str) -> Option<&str> {
    text.split(|c: char| !c.is_ascii_digit()).find(|t| {
        t.len() == 13
            && t.parse::<u64>()
                .is_ok_and(|n| (1_000_000_000_000..4_102_444_800_000).contains(&n))
    })
}

#[test]
fn every_reader_on_every_fixture_in_every_format() {
    let env = TestEnv::new();
    let mut runs = 0;
    let mut ran = 0;
    for &(command, extra) in COMMANDS {
        for format in formats(&env, command) {
            for dir in fixture_dirs() {
                let mut args = vec![command, "--format", format.as_str()];
                args.extend_from_slice(extra);
                args.push(dir.as_str());
                let o = env.run(&args, None);
                let ctx = format!("klog {}", args.join(" "));
                runs += 1;
                let code = o.status.code();
                assert!(
                    matches!(code, Some(0..=2)),
                    "{ctx}: exit {code:?}: {}",
                    stderr(&o)
                );
                assert!(!stderr(&o).contains("panicked"), "{ctx}: {}", stderr(&o));
                if code == Some(2) {
                    assert!(
                        stdout(&o).is_empty(),
                        "{ctx}: exit 2 with data: {}",
                        stdout(&o)
                    );
                    assert!(
                        stderr(&o).starts_with("klog"),
                        "{ctx}: no reason given: {}",
                        stderr(&o)
                    );
                    continue;
                }
                ran += 1;
                let out = stdout(&o);
                match format.as_str() {
                    "json" => {
                        let doc: Value = serde_json::from_str(&out)
                            .unwrap_or_else(|e| panic!("{ctx}: not one JSON document: {e}"));
                        assert_eq!(doc["schema_version"], 1, "{ctx}");
                        assert_eq!(doc["command"], command, "{ctx}");
                    }
                    "jsonl" => {
                        for line in out.lines() {
                            serde_json::from_str::<Value>(line).unwrap_or_else(|e| {
                                panic!("{ctx}: a line is not JSON ({e}): {line}")
                            });
                        }
                    }
                    "csv" => {
                        let rows = parse_csv(&out);
                        let (header, rows) = rows
                            .split_first()
                            .unwrap_or_else(|| panic!("{ctx}: no header"));
                        assert!(
                            header.iter().all(|f| !f.is_empty()
                                && f.chars().all(|c| c.is_ascii_lowercase()
                                    || c.is_ascii_digit()
                                    || c == '_')),
                            "{ctx}: the header is field names: {header:?}"
                        );
                        for r in rows {
                            assert_eq!(r.len(), header.len(), "{ctx}: {r:?}");
                        }
                    }
                    _ => {
                        assert!(
                            out.trim().is_empty() || serde_json::from_str::<Value>(&out).is_err(),
                            "{ctx}: text is not JSON"
                        );
                        if TABLES.contains(&command) {
                            assert_eq!(
                                raw_epoch_ms(&out),
                                None,
                                "{ctx}: a raw epoch-ms time in text:\n{out}"
                            );
                        }
                    }
                }
            }
        }
    }
    // Not vacuous: most runs ran.
    assert!(runs >= 300, "{runs} runs");
    assert!(ran * 2 > runs, "{ran} of {runs} runs ran");
}
