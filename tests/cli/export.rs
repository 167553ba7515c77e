//! `klog export`: the Parquet tree, read back with the parquet crate's
//! record reader (and, in `duckdb_reads_every_real_fixture...`, with
//! DuckDB), against what the test wrote, what the fixtures' README says
//! Kafka wrote, and what Kafka's tools recorded.
//!
//! The DuckDB check needs python3 with venv and pip (it installs its
//! pinned duckdb into a venv under the target directory); without them it
//! fails, unless `KLOG_SKIP_DUCKDB=1` says to skip it (what `.ci/run`
//! sets, after a SKIPPED line, when they are missing).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::record::Field;

use crate::support::{repo, TestEnv};

/// Every row of a Parquet file, each as its fields by name.
fn rows(path: &Path) -> Vec<BTreeMap<String, Field>> {
    let file = std::fs::File::open(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let reader = SerializedFileReader::new(file).unwrap();
    reader
        .get_row_iter(None)
        .unwrap()
        .map(|r| {
            r.unwrap()
                .get_column_iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect()
        })
        .collect()
}

/// The rows of a one-file table of the tree at `out`.
fn table(out: &Path, name: &str) -> Vec<BTreeMap<String, Field>> {
    rows(&out.join(name).join(format!("{name}.parquet")))
}

/// Every `records` row of the tree at `out` (the files an export names
/// by a segment's base offset), with `topic` and `partition`
/// from the folder names, in file order.
fn records(out: &Path) -> Vec<BTreeMap<String, Field>> {
    let mut files: Vec<PathBuf> = walkdir::WalkDir::new(out.join("records"))
        .into_iter()
        .map(|e| e.unwrap().into_path())
        .filter(|p| p.extension().is_some_and(|e| e == "parquet"))
        .filter(|p| p.file_stem().is_some_and(|s| s.len() == 20))
        .collect();
    files.sort();
    let mut all = Vec::new();
    for f in files {
        let part = f.parent().unwrap();
        let topic = part
            .parent()
            .unwrap()
            .file_name()
            .unwrap()
            .to_str()
            .unwrap();
        let partition = part.file_name().unwrap().to_str().unwrap();
        for mut r in rows(&f) {
            r.insert(
                "topic".into(),
                Field::Str(topic.strip_prefix("topic=").unwrap().into()),
            );
            r.insert(
                "partition".into(),
                Field::Int(
                    partition
                        .strip_prefix("partition=")
                        .unwrap()
                        .parse()
                        .unwrap(),
                ),
            );
            all.push(r);
        }
    }
    all
}

fn long(r: &BTreeMap<String, Field>, col: &str) -> i64 {
    match &r[col] {
        Field::Long(v) => *v,
        Field::Int(v) => i64::from(*v),
        Field::Short(v) => i64::from(*v),
        Field::TimestampMillis(v) => *v,
        other => panic!("{col}: {other:?}"),
    }
}

fn bytes(r: &BTreeMap<String, Field>, col: &str) -> Option<Vec<u8>> {
    match &r[col] {
        Field::Null => None,
        Field::Bytes(b) => Some(b.data().to_vec()),
        Field::Str(s) => Some(s.as_bytes().to_vec()),
        other => panic!("{col}: {other:?}"),
    }
}

fn text(r: &BTreeMap<String, Field>, col: &str) -> Option<String> {
    bytes(r, col).map(|b| String::from_utf8(b).unwrap())
}

/// A record's headers: (key, value) pairs.
fn headers(r: &BTreeMap<String, Field>) -> Vec<(String, Option<Vec<u8>>)> {
    let Field::ListInternal(list) = &r["headers"] else {
        panic!("headers: {:?}", r["headers"]);
    };
    list.elements()
        .iter()
        .map(|h| {
            let Field::Group(g) = h else {
                panic!("a header: {h:?}")
            };
            let fields: BTreeMap<String, Field> = g
                .get_column_iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect();
            (text(&fields, "key").unwrap(), bytes(&fields, "value"))
        })
        .collect()
}

/// `klog export ARGS -o OUT`.
fn klog_export(env: &TestEnv, out: &Path, args: &[&str]) -> std::process::Output {
    let mut all = vec!["export"];
    all.extend_from_slice(args);
    all.extend(["-o", out.to_str().unwrap()]);
    env.run(&all, None)
}

/// A real cluster's log directory (read in place: export only reads).
fn real(release_dir: &str) -> String {
    repo()
        .join("fixtures/kafka-real")
        .join(release_dir)
        .display()
        .to_string()
}

/// Records produced with headers, null keys and values, bytes that are not
/// UTF-8 and JSON values come out with exactly those bytes, and with
/// `--decode json` the JSON ones as text; `--no-values` leaves values out.
#[test]
fn records_keep_the_produced_keys_values_and_headers() {
    let env = TestEnv::new();
    let dir = env.path("data");
    let input = [
        r#"{"key": "k1", "value": "{\"a\": 1}", "headers": [{"key": "trace", "value": "t-1"}, {"key": "empty", "value": null}]}"#,
        r#"{"key": null, "value": "plain text", "headers": []}"#,
        r#"{"key": {"base64": "/wA="}, "value": null, "headers": [{"key": "bin", "value": {"base64": "AP8="}}]}"#,
    ]
    .join("\n");
    let produced = env.run(
        &[
            "produce",
            "--topic",
            "orders",
            "--input-format",
            "json",
            "--timestamp-ms",
            "1700000000000",
            dir.to_str().unwrap(),
        ],
        Some(&input),
    );
    assert!(produced.status.success(), "{produced:?}");
    let out = env.path("out");
    let o = klog_export(&env, &out, &[dir.to_str().unwrap(), "--decode", "json"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let recs = records(&out);
    assert_eq!(recs.len(), 3);
    let r = &recs[0];
    assert_eq!(text(r, "topic").as_deref(), Some("orders"));
    assert_eq!(long(r, "offset"), 0);
    assert_eq!(long(r, "timestamp"), 1_700_000_000_000);
    assert_eq!(bytes(r, "key"), Some(b"k1".to_vec()));
    assert_eq!(bytes(r, "value"), Some(br#"{"a": 1}"#.to_vec()));
    assert_eq!(text(r, "value_text").as_deref(), Some(r#"{"a": 1}"#));
    assert_eq!(text(r, "key_text"), None, "k1 is not JSON");
    assert_eq!(
        headers(r),
        vec![
            ("trace".to_string(), Some(b"t-1".to_vec())),
            ("empty".to_string(), None)
        ]
    );
    let r = &recs[1];
    assert_eq!(bytes(r, "key"), None);
    assert_eq!(bytes(r, "value"), Some(b"plain text".to_vec()));
    assert_eq!(text(r, "value_text"), None, "plain text is not JSON");
    assert_eq!(headers(r), vec![]);
    let r = &recs[2];
    assert_eq!(bytes(r, "key"), Some(vec![0xff, 0x00]));
    assert_eq!(bytes(r, "value"), None);
    assert_eq!(
        headers(r),
        vec![("bin".to_string(), Some(vec![0x00, 0xff]))]
    );
    for r in &recs {
        assert_eq!(text(r, "log_dir").as_deref(), Some(dir.to_str().unwrap()));
        assert_eq!(
            r["node_id"],
            Field::Null,
            "a klog data directory has no meta.properties"
        );
        assert_eq!(r["is_transactional"], Field::Bool(false));
        assert_eq!(r["transaction_outcome"], Field::Null);
    }

    let out = env.path("out-no-values");
    let o = klog_export(&env, &out, &[dir.to_str().unwrap(), "--no-values"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let recs = records(&out);
    assert_eq!(recs.len(), 3);
    assert!(recs.iter().all(|r| r["value"] == Field::Null));
    assert!(
        !recs[0].contains_key("value_text"),
        "no text columns without --decode"
    );
    assert_eq!(bytes(&recs[0], "key"), Some(b"k1".to_vec()));
}

/// `plain-0` holds 30 records, offset i stamped BASE + i ms (BASE =
/// 2026-01-01T00:00:00Z; fixtures/kafka-real/README.md). A topic glob,
/// a partition, a time range given as now less a duration (with --now-ms)
/// and an offset bound choose exactly the records they name.
#[test]
fn filters_choose_records_by_topic_partition_time_and_offset() {
    const BASE: i64 = 1_767_225_600_000;
    let env = TestEnv::new();
    let out = env.path("out");
    let now = (BASE + 29).to_string();
    let o = klog_export(
        &env,
        &out,
        &[
            &real("4.4.0/broker-1"),
            "--topic",
            "pla*",
            "--partition",
            "0",
            "--now-ms",
            &now,
            "--from-time",
            "now-PT0.010S",
            "--to-offset",
            "25",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let recs = records(&out);
    let offsets: Vec<i64> = recs.iter().map(|r| long(r, "offset")).collect();
    assert_eq!(offsets, (19..=25).collect::<Vec<_>>());
    for r in &recs {
        assert_eq!(text(r, "topic").as_deref(), Some("plain"));
        assert_eq!(long(r, "timestamp"), BASE + long(r, "offset"));
        let key = format!("key-{}", long(r, "offset"));
        assert_eq!(bytes(r, "key"), Some(key.into_bytes()));
        assert_eq!(r["node_id"], Field::Int(1), "node.id=1 in meta.properties");
    }
    // Only the partitions chosen are in the other tables.
    let parts = table(&out, "partitions");
    assert_eq!(parts.len(), 1);
    assert_eq!(text(&parts[0], "topic").as_deref(), Some("plain"));
    assert_eq!(long(&parts[0], "log_end_offset"), 30);
    assert_eq!(
        text(&parts[0], "shutdown").as_deref(),
        Some("clean"),
        "nodes 1 and 2 were stopped cleanly"
    );
    // Written last, with the rows of each table.
    let done: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("_SUCCESS")).unwrap()).unwrap();
    assert_eq!(done["rows"]["records"], 7);
    assert_eq!(done["rows"]["partitions"], 1);
}

/// An existing folder that holds anything is refused; --overwrite replaces
/// the files an export wrote there and leaves every other file alone.
#[test]
fn a_used_output_is_refused_and_overwrite_keeps_files_not_its_own() {
    let env = TestEnv::new();
    let out = env.path("out");
    let dir = real("4.4.0/broker-1");
    let first = klog_export(&env, &out, &[&dir, "--topic", "plain"]);
    assert_eq!(first.status.code(), Some(0), "{first:?}");
    std::fs::write(out.join("NOTES.md"), "mine").unwrap();
    std::fs::write(
        out.join("records/topic=plain/partition=0/mine.parquet"),
        "mine",
    )
    .unwrap();
    let again = klog_export(&env, &out, &[&dir, "--topic", "txn"]);
    assert_eq!(again.status.code(), Some(2), "{again:?}");
    assert!(String::from_utf8_lossy(&again.stderr).contains("--overwrite"));
    assert!(
        out.join("records/topic=plain").is_dir(),
        "nothing was removed"
    );

    let o = klog_export(&env, &out, &[&dir, "--topic", "txn", "--overwrite"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(out.join("NOTES.md")).unwrap(),
        "mine"
    );
    assert_eq!(
        std::fs::read_to_string(out.join("records/topic=plain/partition=0/mine.parquet")).unwrap(),
        "mine"
    );
    let left: Vec<String> = walkdir::WalkDir::new(out.join("records/topic=plain"))
        .into_iter()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".parquet"))
        .collect();
    assert_eq!(
        left,
        vec!["mine.parquet"],
        "the earlier export's plain files are gone"
    );
    assert!(records(&out)
        .iter()
        .all(|r| text(r, "topic").as_deref() == Some("txn")));
    // No temporary name is left behind.
    assert!(walkdir::WalkDir::new(&out).into_iter().all(|e| !e
        .unwrap()
        .file_name()
        .to_string_lossy()
        .ends_with(".klog-tmp")));
}

/// The crash scenario cut the last batch of node 3's `crash-one-0` in half
/// (fixtures/kafka-real/README.md): the export says so on stderr, writes a
/// `findings` row at that batch (an error: torn tail), keeps every record
/// before it, and exits 1.
#[test]
fn a_torn_tail_is_a_findings_row_and_exit_1() {
    let env = TestEnv::new();
    let out = env.path("out");
    let o = klog_export(
        &env,
        &out,
        &[&real("4.4.0/crash/broker-3"), "--topic", "crash-one"],
    );
    assert_eq!(o.status.code(), Some(1), "{o:?}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("torn tail"), "{stderr}");
    let findings = table(&out, "findings");
    assert_eq!(findings.len(), 1, "{findings:?}");
    let f = &findings[0];
    assert_eq!(text(f, "kind").as_deref(), Some("torn_tail"));
    assert_eq!(text(f, "severity").as_deref(), Some("error"));
    let file = PathBuf::from(text(f, "file").unwrap());
    let dir = file.parent().unwrap();
    assert!(dir.ends_with("crash-one-0"), "{}", file.display());
    let mut logs: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "log"))
        .collect();
    logs.sort();
    assert_eq!(Some(&file), logs.last(), "the cut batch is the last one");
    let len = std::fs::metadata(&file).unwrap().len() as i64;
    assert!(long(f, "position") < len);
    // Every record before the cut is exported: the batches end where the cut batch starts.
    let batches = table(&out, "batches");
    let in_file: Vec<&BTreeMap<String, Field>> = batches
        .iter()
        .filter(|b| text(b, "file").as_deref() == Some(file.to_str().unwrap()))
        .collect();
    let end = in_file
        .iter()
        .map(|b| long(b, "position") + long(b, "size"))
        .max()
        .unwrap_or(0);
    assert_eq!(end, long(f, "position"));
    let n: i64 = batches.iter().map(|b| long(b, "record_count")).sum();
    assert_eq!(records(&out).len() as i64, n);
    let parts = table(&out, "partitions");
    assert_eq!(
        text(&parts[0], "shutdown").as_deref(),
        Some("unclean"),
        "node 3 was killed"
    );
}

/// DuckDB (the Python package, pinned in the script) reads the export of
/// every log directory of every real-cluster fixture, and every column of
/// every row equals `klog dump-segment`'s JSON and what Kafka's tools
/// recorded (tests/export/duckdb_check.py says what is compared).
#[test]
fn duckdb_reads_every_real_fixture_as_klog_and_kafka_tools_saw_it() {
    if std::env::var("KLOG_SKIP_DUCKDB").as_deref() == Ok("1") {
        eprintln!("SKIPPED: the DuckDB check of klog export (KLOG_SKIP_DUCKDB=1)");
        return;
    }
    let venv = Path::new(env!("CARGO_TARGET_TMPDIR")).join("export-duckdb-venv");
    let work = tempfile::tempdir().unwrap();
    let o = Command::new("python3")
        .arg(repo().join("tests/export/duckdb_check.py"))
        .arg("--klog")
        .arg(assert_cmd::cargo::cargo_bin("klog"))
        .arg("--venv")
        .arg(&venv)
        .arg("--work")
        .arg(work.path())
        .output()
        .unwrap_or_else(|e| panic!("python3: {e} (KLOG_SKIP_DUCKDB=1 skips the DuckDB check)"));
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stdout}\n{stderr}");
    assert!(stdout.contains("records compared"), "{stdout}");
}

/// An export that fails part way (here: a file of the user's stands where
/// a partition's folder must go) exits 2 and leaves no partial file: every
/// `.parquet` file left is whole (its footer reads), no temporary name is
/// left, no `_SUCCESS` says the tree is whole, and the user's file is
/// untouched.
#[test]
fn a_failed_export_leaves_only_whole_files() {
    let env = TestEnv::new();
    let out = env.path("out");
    // A whole export first (its _SUCCESS written), then one over it that fails.
    let o = klog_export(&env, &out, &[&real("4.4.0/broker-1"), "--topic", "plain"]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    assert!(out.join("_SUCCESS").is_file());
    std::fs::write(out.join("records/topic=txn"), "mine").unwrap();
    let o = klog_export(
        &env,
        &out,
        &[&real("4.4.0/broker-1"), "--overwrite", "--jobs", "2"],
    );
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert_eq!(
        std::fs::read_to_string(out.join("records/topic=txn")).unwrap(),
        "mine"
    );
    for e in walkdir::WalkDir::new(&out) {
        let e = e.unwrap();
        let name = e.file_name().to_string_lossy().into_owned();
        assert!(
            !name.ends_with(".klog-tmp"),
            "{} left behind",
            e.path().display()
        );
        if name.ends_with(".parquet") {
            rows(e.path());
        }
    }
    assert!(
        !out.join("batches/batches.parquet").exists(),
        "the one-file tables were not finished: they must not exist"
    );
    assert!(
        !out.join("_SUCCESS").exists(),
        "the earlier export's marker is removed first: this one is not whole"
    );
}

/// A broker's log directories (JBOD) are exported together, each row
/// naming the directory its partition is in; a partition found in two of
/// them is refused (two log directories of one broker never hold the same
/// partition).
#[test]
fn log_directories_of_one_broker_export_together() {
    let env = TestEnv::new();
    for (dir, topic) in [("d1", "alpha"), ("d2", "beta"), ("d3", "alpha")] {
        let o = env.run(
            &["produce", "--topic", topic, env.path(dir).to_str().unwrap()],
            Some("one\ntwo\n"),
        );
        assert!(o.status.success(), "{o:?}");
    }
    let (d1, d2, d3) = (env.path("d1"), env.path("d2"), env.path("d3"));
    let out = env.path("out");
    let o = klog_export(&env, &out, &[d1.to_str().unwrap(), d2.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let recs = records(&out);
    let got: Vec<(String, String, Vec<u8>)> = recs
        .iter()
        .map(|r| {
            (
                text(r, "topic").unwrap(),
                text(r, "log_dir").unwrap(),
                bytes(r, "value").unwrap(),
            )
        })
        .collect();
    let d1s = d1.to_str().unwrap().to_string();
    let d2s = d2.to_str().unwrap().to_string();
    assert_eq!(
        got,
        vec![
            ("alpha".into(), d1s.clone(), b"one".to_vec()),
            ("alpha".into(), d1s, b"two".to_vec()),
            ("beta".into(), d2s.clone(), b"one".to_vec()),
            ("beta".into(), d2s, b"two".to_vec()),
        ]
    );
    let out = env.path("out2");
    let o = klog_export(&env, &out, &[d1.to_str().unwrap(), d3.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{o:?}");
    assert!(String::from_utf8_lossy(&o.stderr).contains("holds the partition"));
}

/// Rows are written a row group at a time (`--row-group-rows`): `plain-0`'s
/// first segment holds offsets 0-9 (segments at 0, 10 and 20;
/// fixtures/kafka-real/README.md), so 4 rows a group make groups of 4, 4
/// and 2.
#[test]
fn rows_are_written_a_row_group_at_a_time() {
    let env = TestEnv::new();
    let out = env.path("out");
    let o = klog_export(
        &env,
        &out,
        &[
            &real("4.4.0/broker-1"),
            "--topic",
            "plain",
            "--row-group-rows",
            "4",
        ],
    );
    assert_eq!(o.status.code(), Some(0), "{o:?}");
    let file = out.join("records/topic=plain/partition=0/00000000000000000000.parquet");
    let reader = SerializedFileReader::new(std::fs::File::open(&file).unwrap()).unwrap();
    let groups: Vec<i64> = reader
        .metadata()
        .row_groups()
        .iter()
        .map(|g| g.num_rows())
        .collect();
    assert_eq!(groups, vec![4, 4, 2]);
    let offsets: Vec<i64> = rows(&file).iter().map(|r| long(r, "offset")).collect();
    assert_eq!(offsets, (0..10).collect::<Vec<_>>());
}
