//! fixtures/broker: a crashed KRaft broker's log directory written by the
//! independent encoder (fixtures/make_broker.py; every file is described in
//! fixtures/README.md). A healthy broker's states must verify clean, and
//! replay and lag must give what Kafka loads.
//!
//! Every expected value below is derived from the generator's definition of
//! the directory (restated in the constants) and Kafka's rule (named in the
//! comment), not taken from klog's output.

use crate::support::{document, stderr, stdout, TestEnv};

const DIR: &str = "fixtures/broker";

// The directory's definition, as make_broker.py writes it.

/// orders-0: one batch of 2 records of an expired producer, then 20 produce
/// requests of one batch of 2 records, as leader; every record replicated
/// (high watermark = log end offset).
const ORDERS_EXPIRED_PRODUCER_RECORDS: i64 = 2;
const ORDERS_REQUESTS: i64 = 20;
const ORDERS_RECORDS_PER_BATCH: i64 = 2;
/// payments-0, written as a follower: the record counts of the batches of
/// each fetch. Its high watermark is what the leader sent with the last
/// fetch: the follower's log end offset before that fetch.
const PAYMENTS_FETCHES: [&[i64]; 6] = [
    &[2, 1, 3],
    &[2, 1],
    &[2, 3, 1, 2],
    &[2, 3],
    &[1, 2, 2],
    &[3, 2],
];
/// ledger-0: producer 4000 (transaction version 2) starts at epoch 7; four
/// transactions of these record counts, each ended by one marker with the
/// epoch + 1; the third is aborted. Then one ABORT of another producer with
/// no data (a marker takes an offset). All replicated.
const LEDGER0_FIRST_EPOCH: i64 = 7;
const LEDGER0_TXN_RECORDS: [i64; 4] = [3, 2, 2, 1];
const LEDGER0_STRAY_MARKERS: i64 = 1;
/// ledger-1: 3 records of one transaction, then its COMMIT marker; the
/// high watermark checkpoint is the marker's offset (not replicated).
const LEDGER1_RECORDS: i64 = 3;

fn orders_end() -> i64 {
    ORDERS_EXPIRED_PRODUCER_RECORDS + ORDERS_REQUESTS * ORDERS_RECORDS_PER_BATCH
}

fn payments_end() -> i64 {
    PAYMENTS_FETCHES.iter().flat_map(|f| f.iter()).sum()
}

fn payments_hw() -> i64 {
    payments_end() - PAYMENTS_FETCHES.last().unwrap().iter().sum::<i64>()
}

fn ledger0_end() -> i64 {
    LEDGER0_TXN_RECORDS.iter().sum::<i64>()
        + LEDGER0_TXN_RECORDS.len() as i64
        + LEDGER0_STRAY_MARKERS
}

/// (log end, high watermark, last stable offset) of each partition groups read.
fn ends(topic: &str, partition: i64) -> (i64, i64, i64) {
    match (topic, partition) {
        // No transactions: the last stable offset is the high watermark.
        ("orders", 0) => (orders_end(), orders_end(), orders_end()),
        ("payments", 0) => (payments_end(), payments_hw(), payments_hw()),
        // Every marker is below the high watermark: nothing unstable.
        ("ledger", 0) => (ledger0_end(), ledger0_end(), ledger0_end()),
        // The COMMIT at offset LEDGER1_RECORDS is not below the high
        // watermark (LEDGER1_RECORDS), so the transaction is still unstable
        // (ProducerStateManager keeps it in unreplicatedTxns): the last
        // stable offset is its first offset, 0 (UnifiedLog.lastStableOffset).
        ("ledger", 1) => (LEDGER1_RECORDS + 1, LEDGER1_RECORDS, 0),
        _ => panic!("no partition {topic}-{partition} in {DIR}"),
    }
}

/// The committed offsets Kafka's group coordinator loads from the three
/// __consumer_offsets partitions (OffsetMetadataManager.replay and
/// replayEndTransactionMarker), in klog's sort order.
fn kafka_offsets() -> Vec<(&'static str, &'static str, i64, i64)> {
    vec![
        // __consumer_offsets-39: transactional commits 6, 10, 14 (aborted),
        // 14, each made visible by its COMMIT: the last committed one.
        ("ledger-writer", "orders", 0, 14),
        // __consumer_offsets-19: the magic-1 gzip wrapper's three commits;
        // the coordinator loads every inner record of a legacy wrapper.
        ("legacy-etl", "ledger", 0, 4),
        ("legacy-etl", "orders", 0, 8),
        ("legacy-etl", "payments", 0, 12),
        // Plain commits 30 then 36: the last one.
        ("orders-etl", "orders", 0, 36),
        // __consumer_offsets-45: a transactional commit of 10 at record
        // offset 0, a plain commit of 20 at record offset 1, then the COMMIT:
        // the pending commit is applied only if its record offset is above
        // the stored commit's (0 < 1), so 20 stays.
        ("payouts", "payments", 0, 20),
        // A plain commit of 0. refunds' transactional commit of payments 0
        // (15) was removed from the open transaction by the plain tombstone
        // of that key, so the COMMIT brings nothing back: no row.
        ("refunds", "ledger", 1, 0),
    ]
}

/// Run `klog ARGS` (ARGS[0] the command, with `--format json`): the exit
/// code and its one JSON document.
fn json(env: &TestEnv, args: &[&str]) -> (Option<i32>, serde_json::Value) {
    let o = env.run(args, None);
    assert!(!o.stdout.is_empty(), "klog {args:?}: {}", stderr(&o));
    (o.status.code(), document(&o, args[0]))
}

/// The findings above the note severity (preallocated slots and a marker with
/// no transaction are notes).
fn warnings_and_errors(findings: &serde_json::Value) -> Vec<String> {
    findings
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] != "note")
        .map(|f| f.to_string())
        .collect()
}

#[test]
fn preallocated_indexes_are_restored_in_the_copy() {
    // AbstractIndex preallocates segment.index.bytes (10 MiB) rounded down
    // to the entry size: 8 bytes for .index, 12 for .timeindex.
    let env = TestEnv::new();
    let max = 10 * 1024 * 1024u64;
    let active = env.path(DIR).join("orders-0/00000000000000000028");
    let len = |ext: &str| std::fs::metadata(active.with_extension(ext)).unwrap().len();
    assert_eq!(len("index"), max / 8 * 8);
    assert_eq!(len("timeindex"), max / 12 * 12);
    // A rolled segment's indexes are trimmed to their entries
    // (LogSegment.onBecomeInactiveSegment), so they are not listed.
    let manifest = std::fs::read_to_string(env.path(DIR).join("PREALLOCATED")).unwrap();
    assert!(!manifest.contains("orders-0/00000000000000000000."));
    assert!(!manifest.contains("orders-0/00000000000000000014."));
}

#[test]
fn verify_crc_is_clean() {
    // A healthy (crashed) broker's directory: preallocated slots are notes,
    // a follower's multi-batch-append index entries are valid
    // (LogSegment.append: the append's largest offset at its first position).
    let env = TestEnv::new();
    let (code, v) = json(&env, &["verify-crc", "--format", "json", DIR]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(warnings_and_errors(&v["findings"]), Vec::<String>::new());
}

#[test]
fn verify_crc_deep_is_clean() {
    let env = TestEnv::new();
    let (code, v) = json(&env, &["verify-crc", "--deep", "--format", "json", DIR]);
    assert_eq!(code, Some(0), "{v}");
    assert_eq!(warnings_and_errors(&v["findings"]), Vec::<String>::new());
}

#[test]
fn transactions_finds_nothing_and_gives_kafkas_producer_state() {
    let env = TestEnv::new();
    let (code, v) = json(&env, &["transactions", "--format", "json", DIR]);
    assert_eq!(code, Some(0), "{v}");
    // Every partition's findings are the document's.
    let bad = warnings_and_errors(&v["findings"]);
    assert!(bad.is_empty(), "{bad:?}");
    for p in v["partitions"].as_array().unwrap() {
        // orders-0's snapshots hold producer 1000 only: producer 900 expired
        // (ProducerStateManager.removeExpiredProducers) before the rolls, and
        // an absent expired producer is no mismatch.
        for s in p["snapshots"].as_array().unwrap() {
            assert_eq!(s["matches_log"], true, "{s}");
            assert_eq!(s["producers"], 1, "{s}");
        }
        let (topic, partition) = (
            p["topic"].as_str().unwrap(),
            p["partition"].as_i64().unwrap(),
        );
        if topic != "__consumer_offsets" {
            let (log_end, _, last_stable) = ends(topic, partition);
            assert_eq!(p["log_end_offset"], log_end, "{topic}-{partition}");
            assert_eq!(p["last_stable_offset"], last_stable, "{topic}-{partition}");
        }
    }
    // TV2: every marker carries the epoch + 1 and the broker takes it as the
    // producer's epoch (ProducerStateEntry.maybeUpdateProducerEpoch).
    let ledger0 = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["topic"] == "ledger" && p["partition"] == 0)
        .unwrap();
    let producer = ledger0["producers"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["producer_id"] == 4000)
        .unwrap();
    assert_eq!(
        producer["producer_epoch"],
        LEDGER0_FIRST_EPOCH + LEDGER0_TXN_RECORDS.len() as i64
    );
}

/// The rows of `replay-offsets --format json` as (group, topic, partition, offset).
fn replayed(env: &TestEnv) -> Vec<(String, String, i64, i64)> {
    let (code, v) = json(env, &["replay-offsets", "--format", "json", DIR]);
    assert_eq!(code, Some(0), "{v}");
    v["offsets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| {
            (
                r["group"].as_str().unwrap().to_string(),
                r["topic"].as_str().unwrap().to_string(),
                r["partition"].as_i64().unwrap(),
                r["committed_offset"].as_i64().unwrap(),
            )
        })
        .collect()
}

fn kafka_rows(groups: &[&str]) -> Vec<(String, String, i64, i64)> {
    kafka_offsets()
        .into_iter()
        .filter(|(g, ..)| groups.contains(g))
        .map(|(g, t, p, o)| (g.to_string(), t.to_string(), p, o))
        .collect()
}

#[test]
fn replay_commits_tv2_transactions_and_drops_the_aborted_one() {
    let env = TestEnv::new();
    let rows: Vec<_> = replayed(&env)
        .into_iter()
        .filter(|r| r.0 == "ledger-writer" || r.0 == "orders-etl")
        .collect();
    assert_eq!(rows, kafka_rows(&["ledger-writer", "orders-etl"]));
}

type Key = (&'static str, &'static str, i64);

/// lag's rows for `keys` (all of them when `None`) against Kafka's: the
/// committed offset Kafka loads, and LAG = HW − committed (read-uncommitted)
/// or LSO − committed (read-committed), as `kafka-consumer-groups` computes it.
fn check_lag(env: &TestEnv, isolation: &str, keys: Option<&[Key]>) {
    let (code, v) = json(
        env,
        &[
            "lag",
            "--now-ms",
            "0",
            "--format",
            "json",
            "--isolation",
            isolation,
            DIR,
        ],
    );
    assert_eq!(code, Some(0), "{v}");
    let wanted = |g: &str, t: &str, p: i64| keys.is_none_or(|k| k.contains(&(g, t, p)));
    let rows: Vec<_> = v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| {
            wanted(
                r["group"].as_str().unwrap(),
                r["topic"].as_str().unwrap(),
                r["partition"].as_i64().unwrap(),
            )
        })
        .collect();
    let expected: Vec<_> = kafka_offsets()
        .into_iter()
        .filter(|&(g, t, p, _)| wanted(g, t, p))
        .collect();
    assert_eq!(rows.len(), expected.len(), "{isolation}: {rows:?}");
    for (r, (group, topic, partition, committed)) in rows.iter().zip(&expected) {
        let (log_end, hw, lso) = ends(topic, *partition);
        let end = if isolation == "read-committed" {
            lso
        } else {
            hw
        };
        assert_eq!(r["group"], *group, "{r}");
        assert_eq!(r["topic"], *topic, "{r}");
        assert_eq!(r["partition"], *partition, "{r}");
        assert_eq!(r["committed_offset"], *committed, "{isolation}: {r}");
        assert_eq!(r["log_end_offset"], log_end, "{r}");
        assert_eq!(r["high_watermark"], hw, "{r}");
        assert_eq!(r["lag"], end - committed, "{isolation}: {r}");
        assert_eq!(r["status"], "ok", "{r}");
        if isolation == "read-committed" {
            assert_eq!(r["last_stable_offset"], lso, "{r}");
        }
    }
}

#[test]
fn lag_uses_the_high_watermark_and_the_last_stable_offset() {
    // orders-0 (leader, replicated), and ledger-1 whose COMMIT is not below
    // the high watermark: read-uncommitted HW − 0, read-committed LSO (0) − 0.
    let env = TestEnv::new();
    let keys: &[Key] = &[
        ("ledger-writer", "orders", 0),
        ("orders-etl", "orders", 0),
        ("refunds", "ledger", 1),
    ];
    for isolation in ["read-uncommitted", "read-committed"] {
        check_lag(&env, isolation, Some(keys));
    }
}

/// GroupCoordinator.partitionFor: Utils.abs(groupId.hashCode()) % 50, with
/// Java's String.hashCode over UTF-16 units and Utils.abs(MIN_VALUE) = 0.
fn offsets_partition(group: &str) -> i64 {
    let h = group
        .encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
    i64::from(if h == i32::MIN { 0 } else { h.abs() }) % 50
}

#[test]
fn replay_reads_each_group_from_its_partition() {
    let env = TestEnv::new();
    let (code, v) = json(&env, &["replay-offsets", "--format", "json", DIR]);
    assert_eq!(code, Some(0), "{v}");
    for r in v["offsets"].as_array().unwrap() {
        let group = r["group"].as_str().unwrap();
        assert_eq!(r["log_partition"], offsets_partition(group), "{r}");
    }
    // The generator put every group in its partition.
    for (group, ..) in kafka_offsets() {
        let folder = format!("__consumer_offsets-{}", offsets_partition(group));
        assert!(env.path(DIR).join(&folder).is_dir(), "{group}: {folder}");
    }
}

#[test]
fn recovery_preview_recovers_from_the_recovery_point_and_cuts_nothing() {
    // LogLoader.recoverLog after an unclean shutdown (no .kafka_cleanshutdown)
    // recovers every segment from the one holding the recovery point; every
    // batch is valid, so nothing is cut. orders-0 rolled twice, so its
    // recovery point is its active segment's base offset (UnifiedLog.roll
    // flushes up to the new segment); the others never rolled: 0.
    let env = TestEnv::new();
    let dir = env.path(DIR);
    assert!(!dir.join(".kafka_cleanshutdown").exists());
    let active = std::fs::read_dir(dir.join("orders-0"))
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().into_string().unwrap();
            name.strip_suffix(".log")?.parse::<i64>().ok()
        })
        .max()
        .unwrap();
    let checkpoint = std::fs::read_to_string(dir.join("recovery-point-offset-checkpoint")).unwrap();
    assert!(checkpoint.contains(&format!("\norders 0 {active}\n")));
    let o = env.run(&["verify-crc", "--recovery-preview", DIR], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for partition in [
        "__consumer_offsets-19",
        "__consumer_offsets-39",
        "__consumer_offsets-45",
        "ledger-0",
        "ledger-1",
        "payments-0",
    ] {
        let line =
            format!("{partition}: recovery from segment 0 (recovery point 0) finds nothing to cut");
        assert!(out.contains(&line), "{out}");
    }
    let line = format!(
        "orders-0: recovery from segment {active} (recovery point {active}) finds nothing to cut"
    );
    assert!(out.contains(&line), "{out}");
}

#[test]
fn replay_applies_a_pending_commit_only_above_the_stored_record_offset() {
    // OffsetMetadataManager.replayEndTransactionMarker: payouts keeps 20.
    let env = TestEnv::new();
    let rows: Vec<_> = replayed(&env)
        .into_iter()
        .filter(|r| r.0 == "payouts")
        .collect();
    assert_eq!(rows, kafka_rows(&["payouts"]));
}

#[test]
fn replay_a_plain_tombstone_cancels_a_pending_commit() {
    // OffsetMetadataManager.replay, null value: refunds payments 0 stays deleted.
    let env = TestEnv::new();
    let rows: Vec<_> = replayed(&env)
        .into_iter()
        .filter(|r| r.0 == "refunds")
        .collect();
    assert_eq!(rows, kafka_rows(&["refunds"]));
}

#[test]
fn replay_reads_a_legacy_gzip_wrapper() {
    // The coordinator loads every inner record of a magic-1 wrapper.
    let env = TestEnv::new();
    let rows: Vec<_> = replayed(&env)
        .into_iter()
        .filter(|r| r.0 == "legacy-etl")
        .collect();
    assert_eq!(rows, kafka_rows(&["legacy-etl"]));
}

#[test]
fn replay_offsets_is_kafkas_table() {
    let env = TestEnv::new();
    let all: Vec<_> = kafka_offsets().iter().map(|r| r.0).collect();
    assert_eq!(replayed(&env), kafka_rows(&all));
}

#[test]
fn lag_of_every_group_is_kafkas() {
    let env = TestEnv::new();
    for isolation in ["read-uncommitted", "read-committed"] {
        check_lag(&env, isolation, None);
    }
}

#[test]
fn recovery_preview_predicts_what_the_restart_loads_and_rereads() {
    // The broker crashed (no .kafka_cleanshutdown): every partition is
    // recovered from the segment holding its recovery point
    // (LogLoader.recoverLog), each recovered segment's three indexes
    // rebuilt (LogSegment.recover); the high watermark loaded is the
    // checkpointed one clamped into the log (UnifiedLog.updateHighWatermark).
    // Ends from fixtures/README.md, broker/: orders-0 log end and high
    // watermark 42, recovery point 28 (its active segment); payments-0
    // log end 32, high watermark 27; ledger-1 log end 4, high watermark 3.
    let env = TestEnv::new();
    let o = env.run(
        &["verify-crc", "--recovery-preview", "--format", "json", DIR],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let doc = crate::support::document(&o, "verify-crc");
    assert_eq!(doc["restarts"][0]["shutdown"]["state"], "unclean");
    let part = |topic: &str, n: i64| {
        doc["partitions"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["topic"] == topic && p["partition"] == n)
            .unwrap()
            .clone()
    };
    let log_len = |rel: &str| {
        std::fs::metadata(env.path(&format!("{DIR}/{rel}")))
            .unwrap()
            .len()
    };
    let orders = part("orders", 0);
    assert_eq!(orders["from_segment"], 28);
    assert_eq!(orders["rescanned_segments"], 1);
    assert_eq!(
        orders["rescanned_bytes"],
        log_len("orders-0/00000000000000000028.log")
    );
    assert_eq!(orders["rebuilt_indexes"], 3);
    assert_eq!(
        (
            orders["log_end_offset"].as_i64(),
            orders["high_watermark"].as_i64()
        ),
        (Some(42), Some(42))
    );
    let payments = part("payments", 0);
    assert_eq!(
        (
            payments["log_end_offset"].as_i64(),
            payments["high_watermark"].as_i64()
        ),
        (Some(32), Some(27))
    );
    let ledger = part("ledger", 1);
    assert_eq!(
        (
            ledger["log_end_offset"].as_i64(),
            ledger["high_watermark"].as_i64()
        ),
        (Some(4), Some(3))
    );
    assert!(doc["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["cuts"].as_array().unwrap().is_empty()));
}
