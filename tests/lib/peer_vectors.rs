//! Peer vectors: encoded batches and message sets copied from other Kafka
//! clients' test suites (sarama, kafka-python, kafka-go), decoded by klog and
//! compared with what `expected.json` says they decode to.
//!
//! The vectors are public test data kept outside this repository, in
//! `<repo>/../shared/peer-vectors`; nothing of them is copied here. When that
//! folder is missing every test prints that it was skipped and passes —
//! except under CI (`CI` set), which provides the folder: there a missing
//! folder fails, so the vectors are never skipped silently.
//!
//! How `expected.json` renders bytes (read off the file, not assumed):
//! - record keys, record values and header values are lowercase hex of the
//!   raw bytes, whatever the bytes are: the text key `alpha` is `"616c706861"`,
//!   the bytes `[1, 2, 3, 4]` are `"01020304"`, an empty value is `""`;
//! - header keys are text (Kafka header keys are Java `String`s): the key
//!   bytes `[8, 9, 10]` are `"\b\t\n"`, `hkey` is `"hkey"`;
//! - a null key or value is JSON `null`.
//!
//! So expected keys, values and header values are hex-decoded (strictly) and
//! compared with klog's bytes, and header keys are compared as UTF-8 bytes.

use std::path::{Path, PathBuf};

use kaen_log::format::control::{self, ControlType};
use kaen_log::format::{DecodeLimits, Entry, HeaderView, LegacyView, RecordView};
use kaen_log::inspect::verify::{self, Options};
use kaen_log::log::{SegmentReader, Tail};
use serde_json::Value;

/// The shared folder, or `None` (with the skip line printed) when it is absent.
fn vectors_dir() -> Option<PathBuf> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/peer-vectors");
    if dir.is_dir() {
        Some(dir)
    } else {
        assert!(
            std::env::var_os("CI").is_none(),
            "peer vectors: ../shared/peer-vectors not found, and CI provides it"
        );
        eprintln!("peer vectors: ../shared/peer-vectors not found, skipped");
        None
    }
}

/// The folder and its parsed `expected.json`.
fn load() -> Option<(PathBuf, Value)> {
    let dir = vectors_dir()?;
    let path = dir.join("expected.json");
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("peer vectors: cannot read {}: {e}", path.display()));
    let json: Value = serde_json::from_str(&text)
        .unwrap_or_else(|e| panic!("peer vectors: {} is not JSON: {e}", path.display()));
    Some((dir, json))
}

fn array<'a>(v: &'a Value, key: &str, ctx: &str) -> &'a [Value] {
    v.get(key)
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_else(|| panic!("{ctx}: `{key}` is not an array"))
}

fn int(v: &Value, key: &str, ctx: &str) -> i64 {
    v.get(key)
        .and_then(Value::as_i64)
        .unwrap_or_else(|| panic!("{ctx}: `{key}` is not an integer"))
}

fn boolean(v: &Value, key: &str, ctx: &str) -> bool {
    v.get(key)
        .and_then(Value::as_bool)
        .unwrap_or_else(|| panic!("{ctx}: `{key}` is not a boolean"))
}

fn text<'a>(v: &'a Value, key: &str, ctx: &str) -> &'a str {
    v.get(key)
        .and_then(Value::as_str)
        .unwrap_or_else(|| panic!("{ctx}: `{key}` is not a string"))
}

/// Strict lowercase hex to bytes.
fn unhex(s: &str, ctx: &str) -> Vec<u8> {
    assert!(s.len().is_multiple_of(2), "{ctx}: odd-length hex {s:?}");
    let digit = |c: u8| match c {
        b'0'..=b'9' => c - b'0',
        b'a'..=b'f' => c - b'a' + 10,
        _ => panic!("{ctx}: {s:?} is not lowercase hex"),
    };
    s.as_bytes()
        .chunks(2)
        .map(|p| (digit(p[0]) << 4) | digit(p[1]))
        .collect()
}

/// A hex-rendered nullable byte field (`key`, `value`, header `value`).
fn hex_field(v: &Value, key: &str, ctx: &str) -> Option<Vec<u8>> {
    match v.get(key) {
        Some(Value::Null) => None,
        Some(Value::String(s)) => Some(unhex(s, &format!("{ctx} {key}"))),
        other => panic!("{ctx}: `{key}` is neither null nor a hex string: {other:?}"),
    }
}

/// The vector entries of one kind.
fn vectors<'a>(json: &'a Value, kind: &str) -> Vec<&'a Value> {
    array(json, "vectors", "expected.json")
        .iter()
        .filter(|v| v.get("kind").and_then(Value::as_str) == Some(kind))
        .collect()
}

/// Whether every expected batch of a log vector is magic 2.
fn all_magic2(vector: &Value) -> bool {
    let file = text(vector, "file", "vector");
    array(vector, "batches", file)
        .iter()
        .all(|b| int(b, "magic", file) == 2)
}

/// Compare one decoded record with its expected rendering.
fn check_record(got: &RecordView<'_>, want: &Value, ctx: &str) {
    assert_eq!(got.offset, int(want, "offset", ctx), "{ctx}: offset");
    assert_eq!(
        got.timestamp,
        int(want, "timestamp", ctx),
        "{ctx}: timestamp"
    );
    assert_eq!(
        got.key.map(<[u8]>::to_vec),
        hex_field(want, "key", ctx),
        "{ctx}: key"
    );
    assert_eq!(
        got.value.map(<[u8]>::to_vec),
        hex_field(want, "value", ctx),
        "{ctx}: value"
    );
    let got_headers: Vec<HeaderView<'_>> = got.headers().collect();
    assert_eq!(
        got_headers.len() as u32,
        got.header_count,
        "{ctx}: header iterator stopped early"
    );
    let want_headers = array(want, "headers", ctx);
    assert_eq!(got_headers.len(), want_headers.len(), "{ctx}: header count");
    for (h, (g, w)) in got_headers.iter().zip(want_headers).enumerate() {
        let hctx = format!("{ctx} header {h}");
        assert_eq!(
            g.key,
            text(w, "key", &hctx).as_bytes(),
            "{hctx}: key (text in expected.json)"
        );
        assert_eq!(
            g.value.map(<[u8]>::to_vec),
            hex_field(w, "value", &hctx),
            "{hctx}: value"
        );
    }
}

/// Compare one magic-2 entry with its expected batch, records included.
fn check_v2_batch(entry: &Entry<'_>, want: &Value, ctx: &str) {
    let Entry::V2(batch) = entry else {
        panic!("{ctx}: expected a magic-2 batch, klog framed a legacy entry");
    };
    let h = &batch.header;
    assert_eq!(
        batch.position,
        int(want, "position", ctx) as u64,
        "{ctx}: position"
    );
    assert_eq!(i64::from(h.magic), int(want, "magic", ctx), "{ctx}: magic");
    assert_eq!(
        h.base_offset,
        int(want, "base_offset", ctx),
        "{ctx}: base_offset"
    );
    assert_eq!(
        h.last_offset(),
        int(want, "last_offset", ctx),
        "{ctx}: last_offset"
    );
    assert_eq!(i64::from(h.crc), int(want, "crc", ctx), "{ctx}: crc");
    assert_eq!(
        batch.crc_valid(),
        boolean(want, "crc_valid", ctx),
        "{ctx}: crc_valid"
    );
    assert_eq!(
        h.compression().map(|c| c.name()),
        Some(text(want, "compression", ctx)),
        "{ctx}: compression"
    );
    assert_eq!(
        h.is_transactional(),
        boolean(want, "is_transactional", ctx),
        "{ctx}: is_transactional"
    );
    assert_eq!(
        h.is_control(),
        boolean(want, "is_control", ctx),
        "{ctx}: is_control"
    );
    assert_eq!(
        h.producer_id,
        int(want, "producer_id", ctx),
        "{ctx}: producer_id"
    );
    assert_eq!(
        i64::from(h.producer_epoch),
        int(want, "producer_epoch", ctx),
        "{ctx}: producer_epoch"
    );
    assert_eq!(
        i64::from(h.base_sequence),
        int(want, "base_sequence", ctx),
        "{ctx}: base_sequence"
    );
    assert_eq!(
        i64::from(h.partition_leader_epoch),
        int(want, "partition_leader_epoch", ctx),
        "{ctx}: partition_leader_epoch"
    );
    assert_eq!(
        h.base_timestamp,
        int(want, "first_timestamp", ctx),
        "{ctx}: first_timestamp (klog's base_timestamp)"
    );
    assert_eq!(
        h.max_timestamp,
        int(want, "max_timestamp", ctx),
        "{ctx}: max_timestamp"
    );
    assert_eq!(
        i64::from(h.records_count),
        int(want, "record_count", ctx),
        "{ctx}: record_count"
    );
    batch
        .check_header()
        .unwrap_or_else(|e| panic!("{ctx}: header rules: {e}"));

    let mut scratch = Vec::new();
    let records: Vec<RecordView<'_>> = batch
        .records(&mut scratch, DecodeLimits::default())
        .unwrap_or_else(|e| panic!("{ctx}: records: {e}"))
        .collect::<Result<_, _>>()
        .unwrap_or_else(|e| panic!("{ctx}: records: {e}"));
    let want_records = array(want, "records", ctx);
    assert_eq!(records.len(), want_records.len(), "{ctx}: records decoded");
    for (i, (g, w)) in records.iter().zip(want_records).enumerate() {
        check_record(g, w, &format!("{ctx} record {i}"));
    }
}

/// Compare one legacy (magic 0/1) entry with its expected entry: the framing
/// position, magic, the stored offset, the CRC verdict, the codec, and every
/// record (a compressed wrapper's inner messages).
fn check_legacy_entry(entry: &Entry<'_>, want: &Value, ctx: &str) {
    let Entry::Legacy(msg) = entry else {
        panic!("{ctx}: expected a legacy message, klog framed a magic-2 batch");
    };
    let msg: &LegacyView<'_> = msg;
    assert_eq!(
        msg.position,
        int(want, "position", ctx) as u64,
        "{ctx}: position"
    );
    assert_eq!(
        i64::from(msg.magic),
        int(want, "magic", ctx),
        "{ctx}: magic"
    );
    assert_eq!(
        msg.offset,
        int(want, "entry_offset", ctx),
        "{ctx}: entry_offset"
    );
    assert_eq!(
        msg.crc_valid(),
        boolean(want, "crc_valid", ctx),
        "{ctx}: crc_valid"
    );
    // A wrapper's stored offset is its last inner offset.
    assert_eq!(
        entry.last_offset(),
        int(want, "last_offset", ctx),
        "{ctx}: last_offset"
    );
    let codec = text(want, "compression", ctx);
    assert_eq!(
        msg.compression().map(|c| c.name()),
        Some(codec),
        "{ctx}: compression"
    );
    // Every message, the inner messages of a compressed wrapper included,
    // with its absolute offset (v0 absolute, v1 relative to the wrapper).
    let records = array(want, "records", ctx);
    let mut scratch = Vec::new();
    let messages: Vec<_> = msg
        .messages(&mut scratch, DecodeLimits::default())
        .unwrap_or_else(|e| panic!("{ctx}: messages: {e}"))
        .collect();
    assert_eq!(messages.len(), records.len(), "{ctx}: record count");
    assert_eq!(
        messages.first().map(|m| m.offset),
        Some(int(want, "base_offset", ctx)),
        "{ctx}: base_offset"
    );
    for (i, (m, w)) in messages.iter().zip(records).enumerate() {
        let rctx = format!("{ctx} record {i}");
        assert_eq!(m.offset, int(w, "offset", &rctx), "{rctx}: offset");
        assert_eq!(m.timestamp, int(w, "timestamp", &rctx), "{rctx}: timestamp");
        assert_eq!(
            m.key.map(<[u8]>::to_vec),
            hex_field(w, "key", &rctx),
            "{rctx}: key"
        );
        assert_eq!(
            m.value.map(<[u8]>::to_vec),
            hex_field(w, "value", &rctx),
            "{rctx}: value"
        );
        assert!(m.crc_valid, "{rctx}: inner CRC");
        assert!(
            array(w, "headers", &rctx).is_empty(),
            "{rctx}: legacy messages have no headers"
        );
    }
}

/// Read `path` entry by entry and check each against `batches`. Returns the
/// number of entries read.
fn check_log_file(path: &Path, file: &str, batches: &[Value]) -> usize {
    let mut reader =
        SegmentReader::open(path).unwrap_or_else(|e| panic!("{file}: cannot open: {e}"));
    let mut index = 0;
    while let Some(entry) = reader
        .next_entry()
        .unwrap_or_else(|e| panic!("{file}: batch {index}: read error: {e}"))
    {
        let ctx = format!("{file}: batch {index}");
        let want = batches
            .get(index)
            .unwrap_or_else(|| panic!("{ctx}: klog framed more entries than expected.json lists"));
        match int(want, "magic", &ctx) {
            2 => check_v2_batch(&entry, want, &ctx),
            0 | 1 => check_legacy_entry(&entry, want, &ctx),
            m => panic!("{ctx}: unexpected magic {m} in expected.json"),
        }
        index += 1;
    }
    assert_eq!(
        index,
        batches.len(),
        "{file}: batch {index}: klog framed {index} entries, expected.json lists {}",
        batches.len()
    );
    assert_eq!(
        reader.tail(),
        Some(Tail::Clean),
        "{file}: batch {index}: the file should end cleanly after the last entry"
    );
    index
}

/// Every magic-2 log vector decodes to exactly what expected.json lists:
/// each header field and each record (offset, timestamp, key, value, headers).
#[test]
fn magic2_vectors_decode_as_expected() {
    let Some((dir, json)) = load() else { return };
    let mut checked = 0;
    for vector in vectors(&json, "log").into_iter().filter(|v| all_magic2(v)) {
        let file = text(vector, "file", "vector");
        let batches = array(vector, "batches", file);
        assert_eq!(
            check_log_file(&dir.join(file), file, batches),
            batches.len()
        );
        checked += 1;
    }
    // sarama: empty, control, none, gzip, snappy, lz4; kafka-python v2; kafka-go v2, v2c.
    assert!(checked >= 9, "only {checked} magic-2 vectors found");
}

/// Vectors with magic 0/1 entries (alone or mixed with magic 2): klog frames
/// every entry at the expected position with the expected CRC verdict and
/// does not panic; magic-2 batches among them are checked in full, legacy
/// messages as far as klog decodes them (full legacy decoding is a later issue).
#[test]
fn legacy_and_mixed_vectors_decode_as_expected() {
    let Some((dir, json)) = load() else { return };
    let mut checked = 0;
    for vector in vectors(&json, "log").into_iter().filter(|v| !all_magic2(v)) {
        let file = text(vector, "file", "vector");
        let batches = array(vector, "batches", file);
        // A panic inside the decoder fails this test like any assertion.
        assert_eq!(
            check_log_file(&dir.join(file), file, batches),
            batches.len()
        );
        checked += 1;
    }
    // sarama v0 wrapper; kafka-python v0, v1; kafka-go v1c-v1-v1c, mixed.
    assert!(checked >= 5, "only {checked} legacy vectors found");
}

/// Every file the `checks` section runs `verify-crc` on verifies as it says:
/// for these vectors, clean (`ok: true`, no problems).
#[test]
fn verify_crc_checks_hold() {
    let Some((dir, json)) = load() else { return };
    let mut checked = 0;
    for check in array(&json, "checks", "expected.json") {
        let id = text(check, "id", "check");
        if text(check, "command", id) != "verify-crc" {
            continue;
        }
        let file = text(check, "path", id);
        let expect = check
            .get("expect")
            .unwrap_or_else(|| panic!("{id}: no `expect`"));
        let report = verify::verify_path(&dir.join(file), &Options::default())
            .unwrap_or_else(|e| panic!("{file}: batch -: verify failed to run: {e}"));
        let want_problems = array(expect, "problems", id);
        let vector = array(&json, "vectors", "expected.json")
            .iter()
            .find(|v| v.get("file").and_then(Value::as_str) == Some(file))
            .unwrap_or_else(|| panic!("{id}: no vector describes {file}"));
        let batches = array(vector, "batches", file);
        // Name each problem by the index of the batch it belongs to.
        let batch_index = |position: u64| {
            batches
                .iter()
                .position(|b| b.get("position").and_then(Value::as_u64) == Some(position))
                .map_or_else(|| format!("@{position}"), |i| i.to_string())
        };
        let got: Vec<String> = report
            .findings
            .iter()
            .map(|p| format!("batch {} {}: {}", batch_index(p.position), p.kind, p.detail))
            .collect();
        assert_eq!(
            report.ok(),
            boolean(expect, "ok", id),
            "{file}: verify-crc ok (check {id}); problems: {got:?}"
        );
        assert_eq!(
            report.findings.len(),
            want_problems.len(),
            "{file}: verify-crc problems (check {id}): {got:?}"
        );
        for (p, w) in report.findings.iter().zip(want_problems) {
            let at = batch_index(p.position);
            if let Some(kind) = w.get("kind").and_then(Value::as_str) {
                assert_eq!(
                    p.kind, kind,
                    "{file}: batch {at}: problem kind (check {id})"
                );
            }
            if let Some(pos) = w.get("position").and_then(Value::as_u64) {
                assert_eq!(
                    p.position, pos,
                    "{file}: batch {at}: problem position (check {id})"
                );
            }
        }
        assert_eq!(
            report.checked.batches,
            batches.len() as u64,
            "{file}: batch -: entries verified (check {id})"
        );
        checked += 1;
    }
    assert!(checked >= 14, "only {checked} verify-crc checks found");
}

/// The control record (key then value, concatenated) decodes to COMMIT with
/// coordinator epoch 15.
#[test]
fn control_record_vector_decodes() {
    let Some((dir, json)) = load() else { return };
    let found = vectors(&json, "control-record");
    assert!(!found.is_empty(), "no control-record vector");
    for vector in found {
        let file = text(vector, "file", "vector");
        let ctx = format!("{file}: batch 0 record 0");
        let bytes = std::fs::read(dir.join(file)).unwrap_or_else(|e| panic!("{ctx}: {e}"));
        // The transform says: a 4-byte key and a 6-byte value, concatenated.
        assert_eq!(bytes.len(), 10, "{ctx}: size");
        let (key, value) = bytes.split_at(4);
        let rec = control::decode(Some(key), Some(value), 0)
            .unwrap_or_else(|e| panic!("{ctx}: control::decode: {e}"));
        assert_eq!(
            i64::from(rec.version),
            int(vector, "key_version", &ctx),
            "{ctx}: key version"
        );
        assert_eq!(
            i64::from(rec.kind.id()),
            int(vector, "control_type_id", &ctx),
            "{ctx}: control type id"
        );
        assert_eq!(
            rec.kind.name(),
            text(vector, "control_type", &ctx),
            "{ctx}: control type"
        );
        assert_eq!(rec.kind, ControlType::Commit, "{ctx}: control type");
        assert_eq!(
            rec.coordinator_epoch.map(i64::from),
            Some(int(vector, "coordinator_epoch", &ctx)),
            "{ctx}: coordinator epoch"
        );
        // klog does not keep the marker's value version; read it from the bytes.
        assert_eq!(
            i64::from(i16::from_be_bytes([value[0], value[1]])),
            int(vector, "value_version", &ctx),
            "{ctx}: value version"
        );
        // The same bytes with the value cut short are rejected, not misread.
        assert!(
            control::decode(Some(key), Some(&value[..5]), 0).is_err(),
            "{ctx}: a 5-byte marker value must be rejected"
        );
    }
}

/// The folder and expected.json agree: every vector's file exists with the
/// stated size, every `.bin` is described, every check names a vector, the
/// `rejected` items were not shipped as vectors, and `not_found` is a list of
/// notes (no files to read).
#[test]
fn manifest_matches_folder() {
    let Some((dir, json)) = load() else { return };
    let vectors = array(&json, "vectors", "expected.json");
    let mut described = Vec::new();
    for vector in vectors {
        let file = text(vector, "file", "vector");
        let len = std::fs::metadata(dir.join(file))
            .unwrap_or_else(|e| panic!("{file}: batch -: missing: {e}"))
            .len();
        assert_eq!(
            len as i64,
            int(vector, "size_bytes", file),
            "{file}: size_bytes"
        );
        if text(vector, "kind", file) == "log" {
            // Positions lie inside the file and strictly increase.
            let mut prev = None;
            for (i, b) in array(vector, "batches", file).iter().enumerate() {
                let pos = int(b, "position", file);
                assert!(
                    (0..len as i64).contains(&pos) && prev.is_none_or(|p| p < pos),
                    "{file}: batch {i}: position {pos} out of order or outside the file"
                );
                prev = Some(pos);
            }
        }
        described.push(file.to_string());
    }
    for item in std::fs::read_dir(&dir).expect("read peer-vectors folder") {
        let name = item.expect("folder entry").file_name();
        let name = name.to_string_lossy();
        if name.ends_with(".bin") {
            assert!(
                described.iter().any(|d| *d == name),
                "{name}: batch -: not described in expected.json"
            );
        }
    }
    for check in array(&json, "checks", "expected.json") {
        let id = text(check, "id", "check");
        let path = text(check, "path", id);
        assert!(
            described.iter().any(|d| d == path),
            "{id}: unknown vector {path}"
        );
        if let Some(v) = check.get("expect_vector") {
            assert_eq!(
                v.as_str(),
                Some(path),
                "{id}: expect_vector names another file"
            );
        }
    }
    // Every log vector has both checks (verify-crc and dump-segment).
    for vector in vectors {
        let file = text(vector, "file", "vector");
        if text(vector, "kind", file) != "log" {
            continue;
        }
        for command in ["verify-crc", "dump-segment"] {
            assert!(
                array(&json, "checks", "expected.json").iter().any(|c| {
                    c.get("command").and_then(Value::as_str) == Some(command)
                        && c.get("path").and_then(Value::as_str) == Some(file)
                }),
                "{file}: batch -: no {command} check"
            );
        }
    }
    // Rejected sources (e.g. a batch with a wrong CRC that its own suite never
    // validates) are documented with a reason and are not among the vectors.
    // Their bytes are not shipped, so the stated CRCs cannot be recomputed here.
    for rejected in array(&json, "rejected", "expected.json") {
        let source = rejected.get("source").expect("rejected item has a source");
        let reason = text(rejected, "reason", "rejected item");
        assert!(!reason.is_empty(), "rejected item without a reason");
        assert!(
            !vectors.iter().any(|v| v.get("source") == Some(source)),
            "rejected source {source} is also shipped as a vector"
        );
    }
    for note in array(&json, "not_found", "expected.json") {
        assert!(note.is_string(), "not_found holds notes, got {note}");
    }
}
