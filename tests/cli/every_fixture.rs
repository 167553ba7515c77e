//! The output, time and exit-code rules, checked mechanically: every
//! reading command on every fixture directory in every format it offers
//! (read from its own `--help`). Each run exits 0, 1 or 2 (README, "Exit
//! codes"); one that cannot run (2) prints nothing on stdout and says why
//! on stderr; one that ran prints what the format promises: one JSON
//! document, JSON lines, a CSV header of field names and rows as wide, or
//! text that is not JSON; and a table in text shows no raw epoch
//! milliseconds (ISO-8601 by default, README "Output"). Every reader offers
//! CSV, and its header is the field names of the JSON document's rows in
//! the same run (a nested object's fields as `parent_child`): the JSON is
//! rendered apart, so the two agree only if the CSV follows the rule.

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

/// Commands whose CSV shows some of its JSON rows' fields, not all: a
/// narrower table (each column still a JSON field).
const CSV_SUBSET: &[&str] = &["replay-offsets", "groups"];

/// `row`'s field names as CSV names them: a nested object's fields as
/// `parent_child` (deeper ones likewise), anything else (null, a list, a
/// scalar) as its own name.
fn flat_names(prefix: &str, row: &Value, out: &mut Vec<String>) {
    for (k, v) in row.as_object().into_iter().flatten() {
        let name = format!("{prefix}{k}");
        match v {
            Value::Object(_) => flat_names(&format!("{name}_"), v, out),
            _ => out.push(name),
        }
    }
}

/// The rows of `command`'s JSON document that its CSV rows are, each with
/// the fields of its parent that say where it belongs.
fn json_rows(command: &str, doc: &Value) -> Vec<Value> {
    let list = |v: &Value| v.as_array().cloned().unwrap_or_default();
    // `field`'s rows of each of `parents`, after `carry` of the parent
    // (`(parent field, CSV name)`).
    let nested = |parents: &Value, carry: &[(&str, &str)], field: &str| -> Vec<Value> {
        let mut out = Vec::new();
        for p in list(parents) {
            for r in list(&p[field]) {
                let mut row = serde_json::Map::new();
                for (from, to) in carry {
                    // A JSON pointer (`/restart/…`) reaches into the parent.
                    let v = if from.starts_with('/') {
                        p.pointer(from)
                    } else {
                        p.get(*from)
                    };
                    if let Some(v) = v {
                        row.insert(to.to_string(), v.clone());
                    }
                }
                row.extend(r.as_object().cloned().unwrap_or_default());
                out.push(Value::Object(row));
            }
        }
        out
    };
    match command {
        "dump-segment" => list(&doc["entries"])
            .into_iter()
            .filter(|e| matches!(e["type"].as_str(), Some("batch" | "legacy_batch")))
            .collect(),
        "verify-crc" => list(&doc["findings"]),
        "replay-offsets" => list(&doc["offsets"]),
        "lag" | "stats" => list(&doc["partitions"]),
        "groups" => list(&doc["groups"]),
        "info" => nested(
            &doc["directories"],
            &[
                ("dir", "dir"),
                ("dir_base64", "dir_base64"),
                ("/restart/shutdown/state", "shutdown"),
            ],
            "partitions",
        ),
        "transactions" => nested(
            &doc["partitions"],
            &[("topic", "topic"), ("partition", "partition")],
            "producers",
        )
        .into_iter()
        .map(|mut p| {
            // The producer's JSON names, as its CSV row says them.
            let o = p.as_object_mut().unwrap();
            for (from, to) in [
                ("producer_id", "producer_id"),
                ("producer_epoch", "producer_epoch"),
            ] {
                if let Some(v) = o.remove(from) {
                    o.insert(to.into(), v);
                }
            }
            p
        })
        .collect(),
        "metadata" => list(&doc["brokers"]),
        "summary" => nested(
            &doc["log_dirs"],
            &[
                ("path", "path"),
                ("path_base64", "path_base64"),
                ("node_id", "node_id"),
                ("clean_shutdown", "clean_shutdown"),
            ],
            "partitions",
        ),
        other => panic!("no JSON rows known for {other}"),
    }
}

/// The CSV `header` and `cells` of `ctx` against the JSON rows of the
/// same run: each column is a field of a row, or empty in every row (a
/// field JSON leaves out when null, a null nested object's fields); and
/// unless `subset`, each field of a row is a column (a nested object's
/// as its `parent_child` columns).
fn check_header(ctx: &str, header: &[String], cells: &[Vec<String>], rows: &[Value], subset: bool) {
    if rows.is_empty() {
        return;
    }
    let mut names = Vec::new();
    for r in rows {
        flat_names("", r, &mut names);
    }
    names.sort();
    names.dedup();
    for (i, h) in header.iter().enumerate() {
        assert!(
            names.contains(h) || cells.iter().all(|r| r[i].is_empty()),
            "{ctx}: CSV column {h} is no field of the JSON rows {names:?}"
        );
    }
    if !subset {
        for n in &names {
            assert!(
                header.contains(n) || header.iter().any(|h| h.starts_with(&format!("{n}_"))),
                "{ctx}: JSON field {n} has no CSV column: {header:?}"
            );
        }
    }
}

/// Every fixture directory a reader may be pointed at.
fn fixture_dirs() -> Vec<String> {
    let mut out: Vec<String> = std::fs::read_dir(repo().join("fixtures"))
        .unwrap()
        .map(|e| e.unwrap())
        .filter(|e| e.file_type().unwrap().is_dir())
        .map(|e| format!("fixtures/{}", e.file_name().to_str().unwrap()))
        .filter(|d| {
            !d.ends_with("kafka-real") && !d.ends_with("kafka-tiered") && !d.ends_with("cluster")
        })
        .collect();
    for b in ["broker-1", "broker-2", "broker-3"] {
        out.push(format!("fixtures/cluster/{b}"));
    }
    out.push("fixtures/kafka-real/4.4.0/broker-1".into());
    out.push("fixtures/kafka-real/3.9.2/broker-2".into());
    out.push("fixtures/kafka-tiered/4.3.2/broker-2".into());
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
    let mut csv_checked = 0;
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
                        // The same run in JSON: its rows' field names.
                        let json_args: Vec<&str> = args
                            .iter()
                            .map(|a| if *a == "csv" { "json" } else { a })
                            .collect();
                        let j = env.run(&json_args, None);
                        assert_eq!(j.status.code(), code, "{ctx}: JSON and CSV exit alike");
                        let doc: Value = serde_json::from_str(&stdout(&j))
                            .unwrap_or_else(|e| panic!("{ctx}: JSON: {e}"));
                        let json = json_rows(command, &doc);
                        assert_eq!(json.len(), rows.len(), "{ctx}: one CSV row per JSON row");
                        check_header(&ctx, header, rows, &json, CSV_SUBSET.contains(&command));
                        csv_checked += usize::from(!json.is_empty());
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
    // Every reader offers CSV, and most CSV runs had rows to compare.
    for &(command, _) in COMMANDS {
        assert!(
            formats(&env, command).iter().any(|f| f == "csv"),
            "{command}"
        );
    }
    assert!(csv_checked >= 60, "{csv_checked} CSV headers compared");
}
