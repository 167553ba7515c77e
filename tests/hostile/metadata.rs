//! The KRaft metadata log, hostile: records that do not decode, versions
//! and apiKeys no release has, registrations no controller writes, a batch
//! that does not decompress, and a log of many topics. Each is a finding
//! with the severity of what Kafka does with it (named in each test); what
//! klog cannot read is an error (exit 1), never a shorter table. The logs
//! are assembled with fixtures/encoder.py.

use serde_json::{json, Value};

use crate::support::{encoded, findings, stderr, stdout, write_segment, TestEnv};

/// A data directory `name` in `env` whose metadata log holds `values`
/// (Python expressions over encoder.py, one record value each), one batch
/// each from offset 0, after a metadata.version record.
fn metadata_log(env: &TestEnv, name: &str, values: &[&str]) -> String {
    let mut script = String::from(
        "out = batch(0, [(0, 0, None, feature_level_record('metadata.version', 33))], first_timestamp=1)\n",
    );
    for (i, v) in values.iter().enumerate() {
        script.push_str(&format!(
            "out += batch({}, [(0, 0, None, {v})], first_timestamp=1)\n",
            i + 1
        ));
    }
    let dir = env.path(name);
    write_segment(&dir, "__cluster_metadata-0", &encoded(&script));
    dir.display().to_string()
}

/// `klog metadata --format json DIR`: (exit code, document), bounded in time.
fn metadata(env: &TestEnv, dir: &str) -> (i32, Value) {
    let started = std::time::Instant::now();
    let o = env.run(&["metadata", "--format", "json", dir], None);
    assert!(
        started.elapsed().as_secs() < 30,
        "took {:?}",
        started.elapsed()
    );
    assert!(!stderr(&o).contains("panicked"), "{}", stderr(&o));
    let doc = serde_json::from_str(&stdout(&o)).unwrap_or_else(|e| panic!("{e}: {}", stdout(&o)));
    (o.status.code().unwrap(), doc)
}

fn one(kind: &str, severity: &str, offset: i64) -> Vec<(String, String, i64)> {
    vec![(kind.to_string(), severity.to_string(), offset)]
}

const TOPIC: &str = "topic_record('t', b'topic-t-id-00001')";

/// A PartitionRecord v1 of t: `args` are partition, replicas, isr, leader.
fn partition(args: &str) -> String {
    format!(
        "(lambda p, r, i, l: partition_record(p, b'topic-t-id-00001', r, i, l, 0, 0, []))({args})"
    )
}

#[test]
fn metadata_a_malformed_varint_is_an_error() {
    let env = TestEnv::new();
    // The frame's apiKey: an unsigned varint of six bytes (at most five).
    // AbstractApiMessageSerde.read throws MetadataParseException ("Error
    // while reading type"): Kafka's loader fails.
    let dir = metadata_log(&env, "varint", &["b'\\x01\\xff\\xff\\xff\\xff\\xff\\x01'"]);
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(findings(&m), one("varint_overlong", "error", 1));
    assert_eq!(m["incomplete"], json!(["all"]));
}

#[test]
fn metadata_a_replica_count_of_2_to_the_31_is_an_error_without_allocating() {
    let env = TestEnv::new();
    // PartitionRecord v1 whose Replicas array claims 2^31 elements
    // (compact length 2^31 + 1): the generated read takes the unsigned
    // varint as a Java int (`readUnsignedVarint() - 1`: -2^31), so the
    // length is negative and it throws ("non-nullable field replicas was
    // serialized as null"); so does klog's decoder, before any allocation.
    let value = "frame(3, 1, i32(0) + b'topic-t-id-00001' + uvarint(2**31 + 1) + i32(1))";
    let dir = metadata_log(&env, "replicas", &[TOPIC, value]);
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(findings(&m), one("negative_length", "error", 2));
    // 2^30 elements (a length Java reads as positive) past the bytes left:
    // "Tried to allocate a collection of size 1073741824, but there are
    // only 4 bytes remaining".
    let value = "frame(3, 1, i32(0) + b'topic-t-id-00001' + uvarint(2**30 + 1) + i32(1))";
    let dir = metadata_log(&env, "replicas-2", &[TOPIC, value]);
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(findings(&m), one("value_out_of_range", "error", 2));
    assert_eq!(m["incomplete"], json!(["topics"]));
}

#[test]
fn metadata_a_topic_record_of_version_99_is_read_as_kafka_reads_it() {
    let env = TestEnv::new();
    // TopicRecord.read checks no version: Kafka 4.4 reads v99 with v0's
    // layout and applies it. A warning, and the topics are incomplete.
    let dir = metadata_log(
        &env,
        "v99",
        &["topic_record('t', b'topic-t-id-00001', version=99)"],
    );
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 0);
    assert_eq!(findings(&m), one("newer_metadata_record", "warning", 1));
    assert_eq!(m["topics"][0]["name"], "t");
    assert_eq!(m["incomplete"], json!(["topics"]));
    // With bytes after v0's fields, Kafka's read fails ("Found 1 byte(s) of
    // garbage"): an error, not applied.
    let dir = metadata_log(
        &env,
        "v99-garbage",
        &["frame(2, 99, cstr('t') + b'topic-t-id-00001' + tags() + b'\\x07')"],
    );
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(findings(&m), one("trailing_bytes", "error", 1));
    assert_eq!(m["topics"], json!([]));
}

#[test]
fn metadata_frame_version_7_is_an_error() {
    let env = TestEnv::new();
    // AbstractApiMessageSerde.read: "unknown frame version 7".
    let dir = metadata_log(
        &env,
        "frame",
        &["b'\\x07' + topic_record('t', b'topic-t-id-00001')[1:]"],
    );
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(findings(&m), one("unknown_version", "error", 1));
    assert_eq!(m["topics"], json!([]));
}

/// The registration attacks: Kafka's image takes each as written
/// (TopicDelta.replay), and no controller writes it: a warning each.
#[test]
fn metadata_registrations_no_controller_writes_are_warnings() {
    let env = TestEnv::new();
    for (name, record, says) in [
        (
            "negative",
            partition("-1, [1], [1], 1"),
            "partition -1 is negative",
        ),
        (
            "leader",
            partition("0, [1, 2], [1, 2], 3"),
            "leader 3 is not one of the replicas [1, 2]",
        ),
        (
            "isr",
            partition("0, [1, 2], [1, 3], 1"),
            "the ISR [1, 3] is not a set of the replicas [1, 2]",
        ),
        (
            "duplicates",
            partition("0, [1, 1], [1], 1"),
            "replicas [1, 1] repeat a broker",
        ),
    ] {
        let dir = metadata_log(&env, name, &[TOPIC, &record]);
        let (code, m) = metadata(&env, &dir);
        assert_eq!(code, 0, "{name}");
        assert_eq!(
            findings(&m),
            one("partition_registration_invalid", "warning", 2),
            "{name}"
        );
        let detail = m["findings"][0]["detail"].as_str().unwrap();
        assert!(detail.contains(says), "{name}: {detail}");
        // Shown as Kafka holds it.
        assert_eq!(m["topics"][0]["partitions"].as_array().unwrap().len(), 1);
    }
}

#[test]
fn metadata_a_second_partition_record_is_a_warning() {
    let env = TestEnv::new();
    let dir = metadata_log(
        &env,
        "again",
        &[
            TOPIC,
            &partition("0, [1], [1], 1"),
            &partition("0, [2], [2], 2"),
        ],
    );
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 0);
    assert_eq!(findings(&m), one("partition_record_again", "warning", 3));
    // Kafka's image takes the second whole.
    assert_eq!(m["topics"][0]["partitions"][0]["replicas"], json!([2]));
}

#[test]
fn every_reader_of_the_metadata_log_reports_what_it_cannot_read() {
    let env = TestEnv::new();
    // A CRC-valid batch marked gzip whose records are not gzip: Kafka's raft
    // layer cannot read it. metadata, info and summary: an error, exit 1.
    let script = "out = batch(0, [(0, 0, None, feature_level_record('metadata.version', 33))], first_timestamp=1)\n\
                  out += batch(1, [(0, 0, None, topic_record('t', b'topic-t-id-00001'))], first_timestamp=1, attributes=1)\n";
    let dir = env.path("gzip");
    write_segment(&dir, "__cluster_metadata-0", &encoded(script));
    let dir = dir.display().to_string();
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 1);
    assert_eq!(findings(&m), one("decompress_failed", "error", 1));
    assert_eq!(m["incomplete"], json!(["all"]));
    for cmd in ["info", "summary"] {
        let o = env.run(&[cmd, &dir], None);
        assert_eq!(o.status.code(), Some(1), "{cmd}: {}", stderr(&o));
        assert!(
            stderr(&o).contains("decompress_failed"),
            "{cmd}: {}",
            stderr(&o)
        );
        assert!(
            stdout(&o).contains("incomplete: all"),
            "{cmd}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn metadata_of_many_topics_is_held_compactly() {
    let env = TestEnv::new();
    // 50,000 topics of one partition (three replicas and directories),
    // appended with klog's own append path from JSON lines.
    let n = 50_000;
    let lines = env.path("lines.json");
    let fixtures = crate::support::repo()
        .join("fixtures")
        .display()
        .to_string();
    let program = format!(
        "import base64, json, sys\nsys.path.insert(0, {fixtures:?})\nimport encoder as e\n\
         b = lambda v: {{'base64': base64.b64encode(v).decode()}}\n\
         dirs = [b'dir-one-uuid-001', b'dir-two-uuid-002', b'dir-thr-uuid-003']\n\
         with open(sys.argv[1], 'w') as f:\n\
         \x20   f.write(json.dumps({{'key': None, 'value': b(e.feature_level_record('metadata.version', 33))}}) + '\\n')\n\
         \x20   for i in range({n}):\n\
         \x20       tid = ('t%015d' % i).encode()\n\
         \x20       f.write(json.dumps({{'key': None, 'value': b(e.topic_record('topic-%07d' % i, tid))}}) + '\\n')\n\
         \x20       f.write(json.dumps({{'key': None, 'value': b(e.partition_record(0, tid, [1, 2, 3], [1, 2, 3], 1, 0, 0, dirs))}}) + '\\n')\n"
    );
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(program)
        .arg(&lines)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let data = env.path("many");
    let run = crate::measure::klog_in(
        &env.path(""),
        &[
            "produce",
            data.to_str().unwrap(),
            "--topic",
            "__cluster_metadata",
            "--input-format",
            "json",
            "--batch-size",
            "2000",
        ],
        Some(&lines),
        Some(std::path::Path::new("/dev/null")),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    let log = std::fs::metadata(data.join("__cluster_metadata-0/00000000000000000000.log"))
        .unwrap()
        .len();
    let run = crate::measure::klog(
        &env.path(""),
        &["metadata", "--format", "json", data.to_str().unwrap()],
        Some(std::path::Path::new("/dev/null")),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    // The image holds about 560 bytes a topic here (3.4 times the log's
    // 165); it held 3.7 KB before (a map node per topic's partitions,
    // ids and directories as text).
    run.assert_bounded("metadata of 50,000 topics", 60, 5 * log);
}

#[test]
fn metadata_records_kafka_reads_leniently_are_applied_with_warnings() {
    let env = TestEnv::new();
    // The generated readers the metadata loader calls (TopicRecord.read,
    // PartitionChangeRecord.read) read a name's malformed UTF-8 as U+FFFD
    // (`new String(bytes, UTF_8)`) and a known tag where it starts, its
    // size unused (`case 1: this.leader = _readable.readInt();`): Kafka
    // applies both records, and so does klog, with a warning for each.
    let topic = "frame(2, 0, uvarint(3) + b't\\xff' + b'topic-t-id-00001' + tags())";
    let partition = "partition_record(0, b'topic-t-id-00001', [1, 2], [1, 2], 1, 0, 0, [])";
    // Tag 1 (Leader) whose size says 0 for its 4 bytes.
    let change =
        "frame(5, 0, i32(0) + b'topic-t-id-00001' + uvarint(1) + uvarint(1) + uvarint(0) + i32(2))";
    let dir = metadata_log(&env, "lenient", &[topic, partition, change]);
    let (code, m) = metadata(&env, &dir);
    assert_eq!(code, 0, "{m}");
    let mut want = one("invalid_utf8", "warning", 1);
    want.extend(one("unexpected_eof", "warning", 3));
    assert_eq!(findings(&m), want, "{m}");
    assert_eq!(m["topics"][0]["name"], "t\u{fffd}");
    assert_eq!(m["topics"][0]["partitions"][0]["leader"], 2, "{m}");
}
