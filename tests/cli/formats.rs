//! The output contract, command by command and format by format: `json` is
//! one document (`schema_version` 1, then `command`), `jsonl` a header line
//! then objects that each have a `type`, `csv` a header of field names then
//! rows of as many fields, and `text` keeps what is for people on stderr so
//! that stdout holds only data.

use serde_json::Value;

use crate::support::{document, document_rows, jsonl, parse_csv, stderr, stdout, TestEnv};

/// Every inspection command on a fixture: its arguments, its exit code
/// there, and the formats it offers.
const COMMANDS: &[(&[&str], i32, &[&str])] = &[
    (
        &["dump-segment", "fixtures/data/orders-0"],
        0,
        &["text", "json", "jsonl", "csv"],
    ),
    (
        &["verify-crc", "fixtures/truncated/orders-0"],
        1,
        &["text", "json", "jsonl", "csv"],
    ),
    (
        &[
            "diff",
            "fixtures/data/orders-0",
            "fixtures/corrupt/orders-0",
        ],
        1,
        &["text", "json", "csv"],
    ),
    (
        &["replay-offsets", "fixtures/groups"],
        0,
        &["text", "json", "jsonl", "csv"],
    ),
    (&["lag", "fixtures/kafka"], 0, &["text", "json", "csv"]),
    (
        &["transactions", "--now-ms", "1700000120000", "fixtures/txn"],
        0,
        &["text", "json", "csv"],
    ),
    (&["info", "fixtures/kafka"], 0, &["text", "json", "csv"]),
    (&["metadata", "fixtures/kraft"], 0, &["text", "json", "csv"]),
    (&["groups", "fixtures/kraft"], 0, &["text", "json", "csv"]),
    (&["stats", "fixtures/data"], 0, &["text", "json", "csv"]),
    (&["summary", "fixtures/kafka"], 0, &["text", "json", "csv"]),
    (
        &["export", "--overwrite", "-o", "exported", "fixtures/data"],
        0,
        &["text", "json", "csv"],
    ),
];

const FORMATS: [&str; 4] = ["text", "json", "jsonl", "csv"];

/// A JSON value as its CSV cell: null empty, strings as they are, other
/// values as JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

#[test]
fn every_command_in_every_format_it_offers() {
    let env = TestEnv::new();
    for &(args, code, offered) in COMMANDS {
        let command = args[0];
        for format in FORMATS {
            let mut all = vec![args[0], "--format", format];
            all.extend_from_slice(&args[1..]);
            let o = env.run(&all, None);
            let ctx = format!("klog {}", all.join(" "));
            if !offered.contains(&format) {
                assert_eq!(o.status.code(), Some(2), "{ctx}: {}", stdout(&o));
                assert!(stdout(&o).is_empty(), "{ctx}: {}", stdout(&o));
                assert!(
                    stderr(&o).contains("invalid value"),
                    "{ctx}: {}",
                    stderr(&o)
                );
                continue;
            }
            assert_eq!(o.status.code(), Some(code), "{ctx}: {}", stderr(&o));
            assert!(!stdout(&o).is_empty(), "{ctx}");
            match format {
                "json" => {
                    document(&o, command);
                    assert_eq!(stderr(&o), "", "{ctx}: all of it is in the document");
                }
                "jsonl" => {
                    assert!(!jsonl(&o, command).is_empty(), "{ctx}");
                    assert_eq!(stderr(&o), "", "{ctx}: all of it is in the lines");
                }
                "csv" => {
                    let rows = parse_csv(&stdout(&o));
                    let (header, rows) = rows.split_first().unwrap();
                    assert!(
                        header
                            .iter()
                            .all(|f| f.starts_with(|c: char| c.is_ascii_lowercase())
                                && f.chars().all(|c| c.is_ascii_lowercase()
                                    || c.is_ascii_digit()
                                    || c == '_')),
                        "{ctx}: the header is field names: {header:?}"
                    );
                    assert!(!rows.is_empty(), "{ctx}");
                    for r in rows {
                        assert_eq!(r.len(), header.len(), "{ctx}: {r:?}");
                    }
                }
                _ => {
                    assert!(
                        serde_json::from_str::<Value>(&stdout(&o)).is_err(),
                        "{ctx}: text is not JSON"
                    );
                }
            }
        }
    }
}

/// An object with its nested objects flattened: `{"a": {"b": 1}}` is
/// `{"a_b": 1}` (how a CSV row names a JSON row's nested fields).
fn flat(row: &Value) -> serde_json::Map<String, Value> {
    let mut out = serde_json::Map::new();
    for (k, v) in row.as_object().unwrap() {
        match v {
            Value::Object(inner) => {
                for (k2, v2) in inner {
                    out.insert(format!("{k}_{k2}"), v2.clone());
                }
            }
            v => {
                out.insert(k.clone(), v.clone());
            }
        }
    }
    out
}

/// The rows of the document's array `field`, flattened.
fn top_rows(doc: &Value, field: &str) -> Vec<serde_json::Map<String, Value>> {
    doc[field].as_array().unwrap().iter().map(flat).collect()
}

/// The rows of `parent`'s array `field`, each after `carry` (the fields
/// of its parent that say where it belongs; `name=/json/pointer` for one
/// deeper in the parent), flattened.
fn nested_rows(
    parents: &Value,
    carry: &[&str],
    field: &str,
) -> Vec<serde_json::Map<String, Value>> {
    let mut out = Vec::new();
    for parent in parents.as_array().unwrap() {
        for row in parent[field].as_array().unwrap() {
            let mut r = serde_json::Map::new();
            for c in carry {
                let (name, v) = match c.split_once('=') {
                    Some((name, pointer)) => (name, parent.pointer(pointer)),
                    None => (*c, parent.get(*c)),
                };
                r.insert(name.to_string(), v.cloned().unwrap_or(Value::Null));
            }
            r.extend(flat(row));
            out.push(r);
        }
    }
    out
}

#[test]
fn csv_rows_are_the_json_rows() {
    let env = TestEnv::new();
    type Rows = fn(&Value) -> Vec<serde_json::Map<String, Value>>;
    let partitions: Rows = |doc| top_rows(doc, "partitions");
    let offsets: Rows = |doc| top_rows(doc, "offsets");
    let history: Rows = |doc| top_rows(doc, "history");
    let findings: Rows = |doc| top_rows(doc, "findings");
    // One row per producer of each partition, after its topic and partition.
    let producers: Rows =
        |doc| nested_rows(&doc["partitions"], &["topic", "partition"], "producers");
    // One row per partition folder of each directory, after the directory.
    let folders: Rows = |doc| {
        nested_rows(
            &doc["directories"],
            &["dir", "dir_base64", "shutdown=/restart/shutdown/state"],
            "partitions",
        )
    };
    let differences: Rows = |doc| top_rows(doc, "differences");
    // One row per batch: the entries that are batches, `type` included.
    let batches: Rows = |doc| {
        top_rows(doc, "entries")
            .into_iter()
            .filter(|e| matches!(e["type"].as_str(), Some("batch" | "legacy_batch")))
            .collect()
    };
    // One row per partition of each log directory, after the directory's
    // path and node.
    let log_dir_partitions: Rows = |doc| {
        nested_rows(
            &doc["log_dirs"],
            &["path", "path_base64", "node_id", "clean_shutdown"],
            "partitions",
        )
    };
    let brokers: Rows = |doc| top_rows(doc, "brokers");
    let controllers: Rows = |doc| top_rows(doc, "controllers");
    let configs: Rows = |doc| top_rows(doc, "configs");
    // One row per partition of each topic, after the topic's name and id.
    let registrations: Rows = |doc| {
        let mut out = Vec::new();
        for t in doc["topics"].as_array().unwrap() {
            for p in t["partitions"].as_array().unwrap() {
                let mut r = serde_json::Map::new();
                r.insert("topic".into(), t["name"].clone());
                r.insert("topic_id".into(), t["id"].clone());
                r.extend(flat(p));
                out.push(r);
            }
        }
        out
    };
    // Each copy's batch at the divergence, null where there is none.
    let batch_fields: &[&str] = &[
        "a_file",
        "a_file_base64",
        "a_position",
        "a_base_offset",
        "a_last_offset",
        "a_crc_valid",
        "b_file",
        "b_file_base64",
        "b_position",
        "b_base_offset",
        "b_last_offset",
        "b_crc_valid",
    ];
    // (command and arguments, its exit code, the document's rows the CSV
    // rows are, the fields a JSON row may leave out when null).
    let cases: &[(&[&str], i32, Rows, &[&str])] = &[
        (&["lag", "fixtures/kafka"], 0, partitions, &[]),
        (
            &["lag", "--columns", "kafka", "fixtures/kafka"],
            0,
            partitions,
            &[],
        ),
        (&["replay-offsets", "fixtures/groups"], 0, offsets, &[]),
        (
            &["replay-offsets", "--history", "fixtures/groups"],
            0,
            history,
            &[],
        ),
        (
            &["verify-crc", "fixtures/truncated/orders-0"],
            1,
            findings,
            &["file_base64", "producer_id"],
        ),
        (
            &[
                "verify-crc",
                "--deep",
                "--now-ms",
                "1700000120000",
                "fixtures/txn",
            ],
            0,
            findings,
            &["file_base64", "producer_id"],
        ),
        (
            &["verify-crc", "fixtures/corrupt"],
            1,
            findings,
            &["file_base64", "producer_id"],
        ),
        (
            &["transactions", "--now-ms", "1700000120000", "fixtures/txn"],
            0,
            producers,
            &[
                "open_transaction_first_offset",
                "open_transaction_start_timestamp_ms",
            ],
        ),
        (&["info", "fixtures/kafka"], 0, folders, &["dir_base64"]),
        (
            &[
                "diff",
                "fixtures/data/orders-0",
                "fixtures/corrupt/orders-0",
            ],
            1,
            differences,
            batch_fields,
        ),
        (
            &[
                "diff",
                "fixtures/truncated/orders-0",
                "fixtures/data/orders-0",
            ],
            1,
            differences,
            batch_fields,
        ),
        (
            &[
                "dump-segment",
                "--csv-cells",
                "raw",
                "fixtures/data/orders-0",
            ],
            0,
            batches,
            &["file_base64"],
        ),
        (
            &[
                "dump-segment",
                "--batches-only",
                "fixtures/corrupt/orders-0",
                "fixtures/txn/payments-0",
                "fixtures/broker/__consumer_offsets-19",
            ],
            1,
            batches,
            // With --batches-only no records; a legacy entry has none of
            // v2's producer and sequence fields.
            &[
                "file_base64",
                "records",
                "record_count",
                "is_transactional",
                "is_control",
                "has_delete_horizon",
                "producer_id",
                "producer_epoch",
                "base_sequence",
                "last_sequence",
                "partition_leader_epoch",
                "base_timestamp",
            ],
        ),
        (&["stats", "fixtures/data"], 0, partitions, &["path_base64"]),
        (
            &["stats", "fixtures/corrupt", "fixtures/txn"],
            1,
            partitions,
            &["path_base64"],
        ),
        (
            &["summary", "fixtures/cluster/broker-1"],
            0,
            log_dir_partitions,
            &["path_base64", "damage"],
        ),
        (
            &["summary", "fixtures/kafka", "fixtures/data"],
            0,
            log_dir_partitions,
            &["path_base64", "damage"],
        ),
        (&["metadata", "fixtures/kraft"], 0, brokers, &[]),
        (
            &["metadata", "--table", "controllers", "fixtures/kraft"],
            0,
            controllers,
            &[],
        ),
        (
            &["metadata", "--table", "partitions", "fixtures/kraft"],
            0,
            registrations,
            &[],
        ),
        (
            &["metadata", "--table", "configs", "fixtures/kraft"],
            0,
            configs,
            &[],
        ),
        (
            &["info", "fixtures/kraft", "fixtures/data"],
            0,
            folders,
            &["dir_base64"],
        ),
    ];
    for &(args, code, rows, optional) in cases {
        let run = |format: &str| {
            let mut all = vec![args[0], "--format", format];
            // --table is CSV's alone: the JSON document holds every table.
            let mut rest = args[1..].iter();
            while let Some(&a) = rest.next() {
                if a == "--table" && format != "csv" {
                    rest.next();
                } else {
                    all.push(a);
                }
            }
            let o = env.run(&all, None);
            assert_eq!(o.status.code(), Some(code), "{all:?}: {}", stderr(&o));
            o
        };
        let json = rows(&document(&run("json"), args[0]));
        let csv = parse_csv(&stdout(&run("csv")));
        let (header, csv) = csv.split_first().unwrap();
        assert!(!csv.is_empty(), "{args:?}: no rows to compare");
        assert_eq!(csv.len(), json.len(), "{args:?}: one CSV row per JSON row");
        for (c, j) in csv.iter().zip(&json) {
            assert_eq!(c.len(), header.len(), "{args:?}: {c:?}");
            for (field, value) in header.iter().zip(c) {
                let v = match j.get(field) {
                    Some(v) => v,
                    None if optional.contains(&field.as_str()) => &Value::Null,
                    None => panic!("{args:?}: no field {field} in {j:?}"),
                };
                assert_eq!(*value, cell(v), "{args:?}: {field} of {j:?}");
            }
        }
    }
}

/// CSV into a pipe that nobody reads ends the run as any closed stdout
/// does: exit 0, no message (`exit.rs`), for streamed rows (`dump-segment`)
/// and a table (`lag`) alike.
#[test]
fn csv_into_a_closed_pipe_exits_0() {
    let env = TestEnv::new();
    for args in [
        &["dump-segment", "--format", "csv", "fixtures/data/orders-0"][..],
        &["lag", "--format", "csv", "fixtures/kafka"],
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let o = std::process::Command::new(assert_cmd::cargo::cargo_bin("klog"))
            .args(args)
            .current_dir(env.dir.path())
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env("TZ", "UTC")
            .stdout(writer)
            .output()
            .unwrap();
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        assert!(
            !stderr(&o).contains("Broken pipe"),
            "{args:?}: {}",
            stderr(&o)
        );
    }
}

#[test]
fn text_stdout_holds_only_the_table_and_stderr_the_summary() {
    let env = TestEnv::new();
    // `klog replay-offsets DIR | sort` sorts rows: stdout is the header and
    // one line per committed offset, nothing else.
    let doc = document(
        &env.run(
            &["replay-offsets", "--format", "json", "fixtures/groups"],
            None,
        ),
        "replay-offsets",
    );
    let o = env.run(&["replay-offsets", "fixtures/groups"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    assert!(lines.next().unwrap().starts_with("GROUP "), "{text}");
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    let offsets = doc["offsets"].as_array().unwrap();
    assert_eq!(rows.len(), offsets.len(), "{text}");
    for (r, j) in rows.iter().zip(offsets) {
        assert_eq!(
            r[..4],
            [
                cell(&j["group"]),
                cell(&j["topic"]),
                cell(&j["partition"]),
                cell(&j["committed_offset"])
            ],
            "{text}"
        );
    }
    let summary = stderr(&o);
    assert!(summary.starts_with("records read: 14\n"), "{summary}");
    assert!(
        summary.contains("pending: producer 7002 in __offsets-0: courier orders-0 -> 9"),
        "{summary}"
    );
    // The same through a pipe: sort sees the rows only.
    let bin = assert_cmd::cargo::cargo_bin("klog");
    let piped = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!(
            "{} replay-offsets fixtures/groups 2>/dev/null | sort",
            bin.display()
        ))
        .current_dir(env.dir.path())
        .output()
        .unwrap();
    let mut sorted: Vec<&str> = text.lines().collect();
    sorted.sort_unstable();
    assert_eq!(
        String::from_utf8(piped.stdout).unwrap(),
        sorted.iter().map(|l| format!("{l}\n")).collect::<String>()
    );

    // verify-crc: one finding per stdout line; the verdict on stderr.
    let o = env.run(&["verify-crc", "fixtures/truncated/orders-0"], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(
        stdout(&o),
        "fixtures/truncated/orders-0/00000000000000000090.log:2146 error torn_tail byte 2146: \
         torn tail: entry declares 145 bytes but only 20 remain in the file\n"
    );
    assert!(
        stderr(&o).starts_with("damaged: checked 2 files, "),
        "{}",
        stderr(&o)
    );

    // transactions: the findings count on stderr.
    let args = ["transactions", "--now-ms", "1700000120000", "fixtures/txn"];
    let o = env.run(&args, None);
    assert!(!stdout(&o).contains("findings:"), "{}", stdout(&o));
    assert_eq!(
        stderr(&o),
        "findings: 3 warnings: 1 out_of_order_sequence, 1 duplicate_sequence, 1 epoch_regression\n"
    );
}

#[test]
fn jsonl_lines_are_the_documents_entries() {
    let env = TestEnv::new();
    let run = |args: &[&str]| {
        let o = env.run(args, None);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        o
    };
    // dump-segment: the same entries, typed, in both shapes.
    let json = document_rows(
        &run(&[
            "dump-segment",
            "--format",
            "json",
            "fixtures/txn/payments-0",
        ]),
        "dump-segment",
        "entries",
    );
    let lines = jsonl(
        &run(&[
            "dump-segment",
            "--format",
            "jsonl",
            "fixtures/txn/payments-0",
        ]),
        "dump-segment",
    );
    assert_eq!(lines, json);
    // replay-offsets: the document's arrays as typed lines, the summary last.
    let doc = document(
        &run(&["replay-offsets", "--format", "json", "fixtures/groups"]),
        "replay-offsets",
    );
    let lines = jsonl(
        &run(&["replay-offsets", "--format", "jsonl", "fixtures/groups"]),
        "replay-offsets",
    );
    let mut expected = Vec::new();
    for (field, kind) in [
        ("offsets", "offset"),
        ("pending", "pending"),
        ("bad_records", "bad_record"),
        ("findings", "finding"),
    ] {
        for row in doc[field].as_array().unwrap() {
            let mut line = serde_json::json!({"type": kind});
            line.as_object_mut()
                .unwrap()
                .extend(row.as_object().unwrap().clone());
            expected.push(line);
        }
    }
    let mut summary = serde_json::json!({"type": "summary"});
    summary
        .as_object_mut()
        .unwrap()
        .extend(doc["summary"].as_object().unwrap().clone());
    expected.push(summary);
    assert_eq!(lines, expected);
}

#[test]
fn lag_columns_kafka_are_kafka_consumer_groups_describe() {
    let env = TestEnv::new();
    let doc = document(
        &env.run(&["lag", "--format", "json", "fixtures/kafka"], None),
        "lag",
    );
    let o = env.run(&["lag", "--columns", "kafka", "fixtures/kafka"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    let mut lines = text.lines();
    assert_eq!(
        lines.next().unwrap().split_whitespace().collect::<Vec<_>>(),
        [
            "GROUP",
            "TOPIC",
            "PARTITION",
            "CURRENT-OFFSET",
            "LOG-END-OFFSET",
            "LAG",
            "CONSUMER-ID",
            "HOST",
            "CLIENT-ID"
        ]
    );
    // One row per partition, no total rows; LOG-END-OFFSET is the high
    // watermark, as kafka-consumer-groups names it.
    let rows: Vec<Vec<&str>> = lines.map(|l| l.split_whitespace().collect()).collect();
    let partitions = doc["partitions"].as_array().unwrap();
    assert_eq!(rows.len(), partitions.len(), "{text}");
    let text_cell = |v: &Value| match v {
        Value::Null => "-".to_string(),
        v => cell(v),
    };
    for (r, p) in rows.iter().zip(partitions) {
        let want: Vec<String> = [
            "group",
            "topic",
            "partition",
            "committed_offset",
            "high_watermark",
            "lag",
            "consumer_id",
            "host",
            "client_id",
        ]
        .iter()
        .map(|f| text_cell(&p[*f]))
        .collect();
        assert_eq!(*r, want, "{text}");
    }
    // JSON is the whole document whatever the columns.
    let o = env.run(
        &[
            "lag",
            "--columns",
            "kafka",
            "--format",
            "json",
            "fixtures/kafka",
        ],
        None,
    );
    assert_eq!(document(&o, "lag"), doc);
}
