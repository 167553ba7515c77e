//! `__transaction_state` batches klog cannot read: `transactions` reports
//! each as an error finding and says the coordinator's table is incomplete
//! (exit 1), never a silently shorter table.

use crate::support::{encoded, stdout, write_segment, TestEnv};

/// Three batches of `__transaction_state-0`: a, then `middle`, then c.
const RECORDS: &str = r#"
T = 1700000000000
def one(base, tid, pid):
    return batch(base, [(0, 0, transaction_log_key(tid), transaction_log_value(pid, 0, 1, [("t", [0])], T, T))],
                 first_timestamp=T)
b = record(0, 0, transaction_log_key("b"), transaction_log_value(2, 0, 1, [("t", [0])], T, T))
"#;

/// The coordinator's table of a `transactions --format json` document:
/// (transactional id, state).
fn coordinator_rows(v: &serde_json::Value) -> Vec<(&str, &str)> {
    v["coordinator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| {
            (
                m["transactional_id"].as_str().unwrap(),
                m["state"].as_str().unwrap(),
            )
        })
        .collect()
}

fn findings(o: &std::process::Output) -> Vec<(String, String, u64)> {
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["kind"].as_str().unwrap().to_string(),
                f["severity"].as_str().unwrap().to_string(),
                f["position"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// Run `transactions` and `verify-crc --records` on `dir`: both must name
/// the same unreadable batch, and `transactions` must exit 1 with the
/// coordinator's table marked incomplete. Returns the transactional ids
/// the table still shows.
fn check(env: &TestEnv, dir: &str, kind: &str, position: u64) -> Vec<String> {
    let o = env.run(
        &["transactions", "--format", "json", "--now-ms", "0", dir],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let want = vec![(kind.to_string(), "error".to_string(), position)];
    assert_eq!(findings(&o), want);
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["coordinator_complete"], false, "{v}");
    let ids = v["coordinator"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["transactional_id"].as_str().unwrap().to_string())
        .collect();
    let o = env.run(
        &[
            "verify-crc",
            "--records",
            "--no-index-checks",
            "--format",
            "json",
            dir,
        ],
        None,
    );
    assert_eq!(findings(&o), want, "verify-crc --records agrees");
    let o = env.run(&["transactions", "--now-ms", "0", dir], None);
    assert!(
        stdout(&o).contains(
            "coordinator (__transaction_state), incomplete: 1 record or batch not read (see the findings):"
        ),
        "{}",
        stdout(&o)
    );
    ids
}

#[test]
fn r_transaction_log_batches_that_do_not_decompress_are_errors_not_a_shorter_table() {
    let env = TestEnv::new();
    // A CRC-valid batch flagged gzip whose records section is not gzip.
    let log = encoded(&format!(
        "{RECORDS}\nout = one(0, 'a', 1) + raw_batch(1, b, 1, attributes=1, timestamp=T) + one(2, 'c', 3)"
    ));
    write_segment(&env.path("bad"), "__transaction_state-0", &log);
    let a = encoded(&format!("{RECORDS}\nout = one(0, 'a', 1)")).len() as u64;
    assert_eq!(check(&env, "bad", "decompress_failed", a), ["a", "c"]);
}

#[test]
fn r_a_transaction_log_gzip_bomb_is_an_error_not_an_empty_table() {
    let env = TestEnv::new();
    // One CRC-valid gzip batch whose records section inflates to 512 MiB
    // of zeros, past the 256 MiB a batch may decompress to.
    let log = encoded(&format!(
        "{RECORDS}\nimport zlib\n\
         c = zlib.compressobj(9, zlib.DEFLATED, 31)\n\
         zero = bytes(1 << 20)\n\
         bomb = b''.join(c.compress(zero) for _ in range(512)) + c.flush()\n\
         out = raw_batch(0, bomb, 1, attributes=1, timestamp=T)"
    ));
    assert!(log.len() < 1 << 20, "{} bytes", log.len());
    write_segment(&env.path("bomb"), "__transaction_state-0", &log);
    assert!(check(&env, "bomb", "decompressed_too_large", 0).is_empty());
}

/// See: hostile input, round three, item 10. Kafka 4.3's
/// `TransactionLog.read` decodes a value with the generated
/// `TransactionLogValue.read`, which never looks at the bytes left after
/// the last field: the coordinator applies such a value. The table must
/// show its state (CompleteAbort, not the Ongoing before it), complete,
/// with a warning that names the trailing bytes. `TransactionLogKey.read`
/// does the same with a key.
#[test]
fn r10_a_transaction_log_value_with_trailing_bytes_is_applied_as_kafka_applies_it() {
    let env = TestEnv::new();
    let log = encoded(&format!(
        "{RECORDS}\n\
         ongoing = transaction_log_value(1, 0, 1, [('t', [0])], T, T)\n\
         # status 5: CompleteAbort, partitions emptied; then three stray bytes\n\
         aborted = transaction_log_value(1, 0, 5, [], T + 1, T) + bytes([0, 0, 7])\n\
         # the key of b with one stray byte: still b's record\n\
         out = batch(0, [(0, 0, transaction_log_key('a'), ongoing), \
                         (1, 0, transaction_log_key('a'), aborted), \
                         (2, 0, transaction_log_key('b') + bytes([9]), ongoing)], first_timestamp=T)"
    ));
    write_segment(&env.path("tail"), "__transaction_state-0", &log);
    let o = env.run(
        &["transactions", "--format", "json", "--now-ms", "0", "tail"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "a warning: {}", stdout(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = coordinator_rows(&v);
    assert_eq!(rows, [("a", "CompleteAbort"), ("b", "Ongoing")]);
    assert_eq!(v["coordinator_complete"], true, "{v}");
    let warning = ("trailing_bytes".to_string(), "warning".to_string(), 0);
    assert_eq!(findings(&o), [warning.clone(), warning]);
    let detail = |i: usize| v["findings"][i]["detail"].as_str().unwrap();
    assert!(
        detail(0).contains("3 bytes after the value's last field"),
        "{}",
        detail(0)
    );
    assert!(
        detail(1).contains("1 byte after the key's last field"),
        "{}",
        detail(1)
    );
    assert!(!detail(0).contains("stops loading"), "{}", detail(0));
}

/// Kafka's `TransactionLog.read` reads the key and value with the
/// generated `TransactionLogKey.read` and `TransactionLogValue.read`: a
/// transactional id with malformed UTF-8 is read with U+FFFD (`new
/// String(bytes, UTF_8)`), a nullable transactionPartitions of length -2 is
/// null (`if (arrayLength < 0) { this.transactionPartitions = null; }`).
/// The coordinator loads such a record: so does klog, with a warning for
/// each place a strict reading refuses.
#[test]
fn a_record_kafka_reads_leniently_is_applied_with_warnings() {
    let env = TestEnv::new();
    let log = encoded(
        "T = 1700000000000\n\
         key = i16(0) + i16(4) + b'tx-\\xff'\n\
         # v0: producer 1, epoch 0, 60000 ms, Empty, partitions of length -2\n\
         value = i16(0) + i64(1) + i16(0) + i32(60000) + i8(0) + i32(-2) + i64(T) + i64(T)\n\
         out = batch(0, [(0, 0, key, value)], first_timestamp=T)",
    );
    write_segment(&env.path("lenient"), "__transaction_state-0", &log);
    let o = env.run(
        &[
            "transactions",
            "--format",
            "json",
            "--now-ms",
            "0",
            "lenient",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "warnings only: {}", stdout(&o));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let rows = coordinator_rows(&v);
    assert_eq!(rows, [("tx-\u{fffd}", "Empty")]);
    assert_eq!(v["coordinator_complete"], true, "{v}");
    let kinds: Vec<(String, String)> = findings(&o)
        .into_iter()
        .map(|(kind, severity, _)| (kind, severity))
        .collect();
    let warning = |kind: &str| (kind.to_string(), "warning".to_string());
    assert_eq!(kinds, [warning("invalid_utf8"), warning("negative_length")]);
    let detail = |i: usize| v["findings"][i]["detail"].as_str().unwrap();
    assert!(
        detail(0).contains("replaces the malformed bytes with U+FFFD"),
        "{}",
        detail(0)
    );
    assert!(
        detail(1).contains("negative length -2 in TransactionPartitions"),
        "{}",
        detail(1)
    );
}
