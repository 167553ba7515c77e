//! Producer state as Kafka keeps it, on hand-assembled batches: transaction
//! version 2 markers, coordinator-written batches, and transactions whose
//! marker the high watermark has not passed. Each expectation is Kafka's
//! rule, named in the test.

use std::path::Path;

use kaen_log::log::Partition;
use kaen_log::txn::{self, PartitionState, TxnOptions};

use crate::builder::ByteBuilder;

const TRANSACTIONAL: i16 = 0x10;
const CONTROL: i16 = 0x20;

/// A v2 batch of `count` one-byte records from producer `pid`.
fn batch(base: i64, count: i32, pid: i64, epoch: i16, seq: i32, attributes: i16) -> Vec<u8> {
    let mut records = Vec::new();
    for i in 0..count {
        records.extend(crate::builder::record(i64::from(i), b"x"));
    }
    header(base, count, pid, epoch, seq, attributes, &records)
}

fn header(
    base: i64,
    count: i32,
    pid: i64,
    epoch: i16,
    seq: i32,
    attributes: i16,
    records: &[u8],
) -> Vec<u8> {
    ByteBuilder::new()
        .i64(base) // baseOffset
        .len_gap() // batchLength
        .i32(0) // partitionLeaderEpoch
        .i8(2) // magic
        .crc_gap() // crc
        .i16(attributes) // attributes
        .i32(count - 1) // lastOffsetDelta
        .i64(1_700_000_000_000) // baseTimestamp
        .i64(1_700_000_000_000) // maxTimestamp
        .i64(pid) // producerId
        .i16(epoch) // producerEpoch
        .i32(seq) // baseSequence
        .i32(count) // recordsCount
        .raw(records)
        .finish()
}

/// A COMMIT (or ABORT) marker: key (version 0, type 1/0), value (version 0, coordinator epoch 0).
fn marker(base: i64, pid: i64, epoch: i16, commit: bool) -> Vec<u8> {
    marker_with_version(base, pid, epoch, commit, 0)
}

fn marker_with_version(base: i64, pid: i64, epoch: i16, commit: bool, version: i16) -> Vec<u8> {
    let key = ByteBuilder::new().i16(0).i16(i16::from(commit)).bytes;
    let value = ByteBuilder::new().i16(version).i32(0).bytes;
    let body = ByteBuilder::new()
        .i8(0) // attributes
        .varint(0) // timestampDelta
        .varint(0) // offsetDelta
        .varint(key.len() as i64)
        .raw(&key)
        .varint(value.len() as i64)
        .raw(&value)
        .varint(0) // headerCount
        .bytes;
    let record = ByteBuilder::new()
        .varint(body.len() as i64)
        .raw(&body)
        .bytes;
    header(base, 1, pid, epoch, -1, TRANSACTIONAL | CONTROL, &record)
}

fn partition(root: &Path, folder: &str, batches: &[Vec<u8>]) -> Partition {
    let dir = root.join(folder);
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("00000000000000000000.log"), batches.concat()).unwrap();
    Partition::open(&dir).unwrap()
}

fn analyze(p: &Partition, high_watermark: Option<i64>) -> PartitionState {
    let opts = TxnOptions {
        high_watermark,
        ..TxnOptions::default()
    };
    txn::analyze(p, &opts).unwrap()
}

fn kinds(st: &PartitionState) -> Vec<&'static str> {
    st.findings.iter().map(|f| f.kind.name()).collect()
}

#[test]
fn a_transaction_version_2_producer_restarts_at_sequence_zero_after_each_marker() {
    // KIP-890: the coordinator bumps the epoch with every COMMIT/ABORT, and
    // the marker carries the new epoch. ProducerStateEntry.
    // maybeUpdateProducerEpoch clears the batches kept on an epoch change, so
    // the next transaction starts at sequence 0 (ProducerAppendInfo.checkSequence:
    // inSequence(NO_SEQUENCE, 0)).
    let tmp = tempfile::tempdir().unwrap();
    let t = TRANSACTIONAL;
    let p = partition(
        tmp.path(),
        "payments-0",
        &[
            batch(0, 2, 7, 0, 0, t), // epoch 0, sequences 0-1
            marker(2, 7, 1, true),   // COMMIT at epoch 1
            batch(3, 2, 7, 1, 0, t), // epoch 1 restarts at 0
            marker(5, 7, 2, false),  // ABORT at epoch 2
            batch(6, 1, 7, 2, 0, t), // epoch 2 restarts at 0, left open
        ],
    );
    let st = analyze(&p, None);
    assert_eq!(kinds(&st), Vec::<&str>::new(), "{:?}", st.findings);
    let s = &st.producers[&7];
    assert_eq!((s.epoch, s.last_sequence, s.last_data_offset), (2, 0, 6));
    assert_eq!((s.committed, s.aborted), (1, 1));
    assert_eq!(s.open.map(|o| o.first_offset), Some(6));
    assert_eq!(st.last_stable_offset(), 6);

    // After a marker at a new epoch, anything but 0 is out of order.
    let p = partition(
        tmp.path(),
        "payments-1",
        &[
            batch(0, 2, 7, 0, 0, t),
            marker(2, 7, 1, true),
            batch(3, 1, 7, 1, 2, t),
        ],
    );
    assert_eq!(kinds(&analyze(&p, None)), ["out_of_order_sequence"]);

    // Transaction version 1: the marker keeps the epoch, sequences go on.
    let p = partition(
        tmp.path(),
        "payments-2",
        &[
            batch(0, 2, 7, 0, 0, t),
            marker(2, 7, 0, true),
            batch(3, 1, 7, 0, 2, t),
        ],
    );
    let st = analyze(&p, None);
    assert_eq!(kinds(&st), Vec::<&str>::new());
    assert_eq!(st.producers[&7].last_sequence, 2);
}

#[test]
fn coordinator_batches_are_not_sequence_checked() {
    // The group coordinator writes every transactional offset commit with
    // baseSequence 0 (origin COORDINATOR); ProducerAppendInfo checks
    // sequences only for client appends.
    let tmp = tempfile::tempdir().unwrap();
    let t = TRANSACTIONAL;
    let batches = [
        batch(0, 1, 5, 0, 0, t),
        marker(1, 5, 0, true),
        batch(2, 1, 5, 0, 0, t),
        marker(3, 5, 0, true),
    ];
    for folder in [
        "__consumer_offsets-3",
        "__offsets-0",
        "__transaction_state-0",
    ] {
        let st = analyze(&partition(tmp.path(), folder, &batches), None);
        assert_eq!(kinds(&st), Vec::<&str>::new(), "{folder}");
        assert_eq!(st.producers[&5].committed, 2, "{folder}");
    }
    // The same batches from a client on an ordinary topic: a duplicate.
    let st = analyze(&partition(tmp.path(), "orders-0", &batches), None);
    assert_eq!(kinds(&st), ["duplicate_sequence"]);
}

#[test]
fn a_marker_not_below_the_high_watermark_leaves_its_transaction_unstable() {
    // ProducerStateManager keeps a completed transaction among the
    // unreplicated ones until the high watermark passes its marker; the
    // first unstable offset is the least first offset of ongoing and
    // unreplicated transactions, and UnifiedLog.lastStableOffset caps it at
    // the high watermark.
    let tmp = tempfile::tempdir().unwrap();
    let p = partition(
        tmp.path(),
        "payments-0",
        &[batch(0, 3, 9, 0, 0, TRANSACTIONAL), marker(3, 9, 0, true)],
    );
    // Data 0..=2, COMMIT at 3, log end 4.
    assert_eq!(analyze(&p, Some(3)).last_stable_offset(), 0);
    assert_eq!(analyze(&p, Some(4)).last_stable_offset(), 4);
    // A high watermark below the data caps the LSO.
    assert_eq!(analyze(&p, Some(2)).last_stable_offset(), 0);
    // Without a checkpoint the high watermark is the log end: stable.
    assert_eq!(analyze(&p, None).last_stable_offset(), 4);
}

#[test]
fn loading_a_log_takes_a_fenced_batch_as_kafka_does() {
    // ProducerAppendInfo.checkProducerEpoch rejects a client's batch from an
    // older epoch, but a log being loaded (origin REPLICATION) only warns:
    // the state moves to that epoch. klog reports the regression and keeps
    // the state Kafka would load.
    let tmp = tempfile::tempdir().unwrap();
    let p = partition(
        tmp.path(),
        "t-0",
        &[batch(0, 1, 4, 2, 0, 0), batch(1, 1, 4, 1, 5, 0)],
    );
    let st = analyze(&p, None);
    assert_eq!(kinds(&st), ["epoch_regression"]);
    let s = &st.producers[&4];
    assert_eq!((s.epoch, s.last_sequence, s.last_data_offset), (1, 5, 1));
}

#[test]
fn a_transaction_open_in_a_snapshot_below_the_log_start_stays_unstable() {
    // ProducerStateManager loads the latest snapshot and replays the log
    // after it. Retention deleted offsets 0..10; the snapshot at 10 says
    // producer 9 has a transaction open since offset 5. Its first offset is
    // below the log start, so UnifiedLog.updateFirstUnstableOffset raises
    // it to the log start: LSO 10, not the log end 11.
    use kaen_log::txn::snapshot::{encode, SnapshotEntry};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("payments-0");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("00000000000000000010.log");
    std::fs::write(&log, batch(10, 1, 3, 0, 0, 0)).unwrap();
    let open = SnapshotEntry {
        producer_id: 9,
        epoch: 0,
        last_sequence: 4,
        last_offset: 8,
        offset_delta: 0,
        timestamp: 1_700_000_000_000,
        coordinator_epoch: 0,
        current_txn_first_offset: 5,
    };
    std::fs::write(dir.join("00000000000000000010.snapshot"), encode(&[open])).unwrap();
    let p = Partition::open(&dir).unwrap();
    let st = analyze(&p, None);
    assert_eq!((st.log_start, st.log_end), (10, 11));
    assert_eq!(st.last_stable_offset(), 10);
    assert_eq!(st.producers[&9].open.map(|o| o.first_offset), Some(5));
    // Its COMMIT arrives: stable again, to the log end.
    let mut bytes = std::fs::read(&log).unwrap();
    bytes.extend(marker(11, 9, 0, true));
    std::fs::write(&log, bytes).unwrap();
    let st = analyze(&Partition::open(&dir).unwrap(), None);
    assert_eq!(st.last_stable_offset(), 12);
    assert_eq!(st.producers[&9].committed, 1);
}

#[test]
fn a_marker_that_does_not_decode_is_an_error_and_completes_nothing() {
    // EndTransactionMarker refuses a negative value version ("may indicate
    // data corruption"); the broker refuses the batch when it loads
    // producer state, so the transaction it would end stays open.
    let tmp = tempfile::tempdir().unwrap();
    let p = partition(
        tmp.path(),
        "payments-0",
        &[
            batch(0, 2, 7, 0, 0, TRANSACTIONAL),
            marker_with_version(2, 7, 0, true, -1),
        ],
    );
    let st = analyze(&p, None);
    assert_eq!(st.findings.len(), 1, "{:?}", st.findings);
    assert_eq!(
        st.findings[0].severity,
        kaen_log::log::findings::Severity::Error
    );
    assert_eq!(st.producers[&7].open.map(|o| o.first_offset), Some(0));
    assert_eq!(st.last_stable_offset(), 0);
}

/// Every partition folder under `dir`, at any depth.
fn partition_folders(dir: &Path, out: &mut Vec<Partition>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut dirs: Vec<_> = entries
        .map(|e| e.unwrap().path())
        .filter(|d| d.is_dir())
        .collect();
    dirs.sort();
    for d in dirs {
        if kaen_log::log::classify(&d).is_ok_and(|k| k == kaen_log::log::PathKind::Partition) {
            if let Ok(p) = Partition::open(&d) {
                out.push(p);
            }
        }
        partition_folders(&d, out);
    }
}

#[test]
fn the_last_stable_offset_from_the_last_snapshot_is_the_full_pass_s() {
    // UnifiedLog.rebuildProducerState loads the latest snapshot at or below
    // the log end (ProducerStateManager.truncateAndReload, loadFromSnapshot)
    // and reads the log forward from its offset; over a log whose snapshots
    // hold what the log before them says, that is the state a pass from the
    // log start reaches. Every fixture partition, against every high
    // watermark from the log start to the log end.
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut parts = Vec::new();
    partition_folders(&fixtures, &mut parts);
    let (mut compared, mut with_snapshots, mut unstable) = (0, 0, 0);
    for p in &parts {
        let Ok(full) = txn::analyze(p, &TxnOptions::default()) else {
            continue; // a fixture the pass refuses (unreadable on purpose)
        };
        let snapshots = txn::snapshot::list(&p.dir).unwrap();
        with_snapshots += usize::from(snapshots.iter().any(|(o, _)| *o > full.log_start));
        let ends = (full.log_start..=full.log_end).map(Some).chain([None]);
        for hw in ends {
            let expected = analyze(p, hw).last_stable_offset();
            let got = txn::last_stable_offset(p, hw, Default::default(), None).unwrap();
            assert_eq!(
                got,
                expected,
                "{} at high watermark {hw:?}",
                p.dir.display()
            );
            unstable += usize::from(expected < hw.unwrap_or(full.log_end));
            compared += 1;
        }
    }
    // The fixtures hold real brokers' snapshots and open transactions.
    assert!(with_snapshots >= 10, "{with_snapshots}");
    assert!(unstable >= 10, "{unstable}");
    assert!(compared >= 200, "{compared}");
}

#[test]
fn the_last_stable_offset_reads_only_the_log_after_the_last_snapshot() {
    // Segment 0 holds offsets 0..=9: producer 3 (idempotent) and producer
    // 9's transaction from offset 1; segment 10 holds 10..=13. The broker
    // rolled at 10 and took a snapshot there (UnifiedLog.roll,
    // ProducerStateManager.takeSnapshot): producer 3 at last sequence 7,
    // offset 9; producer 9 at last sequence 1, offset 2, its transaction
    // open since offset 1.
    use kaen_log::txn::snapshot::{encode, SnapshotEntry};
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("payments-0");
    std::fs::create_dir_all(&dir).unwrap();
    let first = [
        batch(0, 1, 3, 0, 0, 0),
        batch(1, 2, 9, 0, 0, TRANSACTIONAL),
        batch(3, 3, 3, 0, 1, 0),
        batch(6, 4, 3, 0, 4, 0),
    ]
    .concat();
    let second = [
        batch(10, 2, 3, 0, 8, 0),
        batch(12, 1, 9, 0, 2, TRANSACTIONAL),
        batch(13, 1, 3, 0, 10, 0),
    ]
    .concat();
    std::fs::write(dir.join("00000000000000000000.log"), &first).unwrap();
    std::fs::write(dir.join("00000000000000000010.log"), &second).unwrap();
    let entry = |producer_id, last_sequence, last_offset, offset_delta, txn| SnapshotEntry {
        producer_id,
        epoch: 0,
        last_sequence,
        last_offset,
        offset_delta,
        timestamp: 1_700_000_000_000,
        coordinator_epoch: -1,
        current_txn_first_offset: txn,
    };
    let snap = encode(&[entry(3, 7, 9, 3, -1), entry(9, 1, 2, 1, 1)]);
    std::fs::write(dir.join("00000000000000000010.snapshot"), snap).unwrap();
    let from_snapshot = |p: &Partition| {
        let opts = TxnOptions {
            from_last_snapshot: true,
            ..TxnOptions::default()
        };
        txn::analyze(p, &opts).unwrap()
    };

    let p = Partition::open(&dir).unwrap();
    let full = analyze(&p, None);
    let quick = from_snapshot(&p);
    assert_eq!(
        (full.last_stable_offset(), quick.last_stable_offset()),
        (1, 1)
    );
    assert_eq!(
        txn::last_stable_offset(&p, None, Default::default(), None).unwrap(),
        1
    );
    // Seven batches from the log start, three from the snapshot.
    assert_eq!((full.batches, quick.batches), (7, 3));
    // The snapshot agrees with the log before it.
    assert_eq!(
        txn::snapshot::check(
            &p,
            &dir.join("00000000000000000010.snapshot"),
            10,
            &txn::snapshot::decode(
                &std::fs::read(dir.join("00000000000000000010.snapshot")).unwrap()
            )
            .unwrap()
        )
        .unwrap(),
        []
    );

    // The first segment is not read at all: made unreadable, it changes
    // nothing from the snapshot on (the pass from the log start, which
    // cannot see the transaction's start any more, takes its batch at 12
    // for the start).
    std::fs::write(
        dir.join("00000000000000000000.log"),
        vec![0xFF; first.len()],
    )
    .unwrap();
    let p = Partition::open(&dir).unwrap();
    let quick = from_snapshot(&p);
    assert_eq!((quick.last_stable_offset(), quick.batches), (1, 3));
    assert!(quick.findings.is_empty(), "{:?}", quick.findings);
    assert_eq!(analyze(&p, None).last_stable_offset(), 12);

    // Its COMMIT at 14: stable to the log end.
    let mut bytes = second.clone();
    bytes.extend(marker(14, 9, 0, true));
    std::fs::write(dir.join("00000000000000000010.log"), bytes).unwrap();
    let p = Partition::open(&dir).unwrap();
    assert_eq!(
        txn::last_stable_offset(&p, None, Default::default(), None).unwrap(),
        15
    );
    // ...but not while the high watermark is at or below the marker: the
    // snapshot used is then one at or below it, so the marker is read.
    assert_eq!(
        txn::last_stable_offset(&p, Some(14), Default::default(), None).unwrap(),
        1
    );

    // No usable snapshot (a torn one fails its CRC, and the broker passes
    // it over): from the log start.
    std::fs::write(dir.join("00000000000000000000.log"), &first).unwrap();
    let snap_path = dir.join("00000000000000000010.snapshot");
    let mut torn = std::fs::read(&snap_path).unwrap();
    let last = torn.len() - 1;
    torn[last] ^= 1;
    std::fs::write(&snap_path, torn).unwrap();
    let p = Partition::open(&dir).unwrap();
    let quick = from_snapshot(&p);
    assert_eq!((quick.last_stable_offset(), quick.batches), (15, 8));
}

/// The append path indexes an ABORT marker from the producer state it is
/// handed (`ProducerStateManager` beside `UnifiedLog` in Kafka): the
/// `.txnindex` entry holds the transaction's first offset and the last
/// stable offset at the marker. Without producer state the marker is
/// refused and nothing is written, rather than left out of the index.
#[test]
fn an_abort_marker_is_indexed_from_the_producer_state_it_is_handed() {
    use kaen_log::format::{control, BatchSpec, NewRecord};
    use kaen_log::log::{AppendConfig, PartitionAppender};
    let dir = tempfile::tempdir().unwrap();
    let txn = BatchSpec {
        producer_id: 42,
        producer_epoch: 0,
        base_sequence: 0,
        transactional: true,
        ..BatchSpec::default()
    };
    let data = NewRecord {
        value: Some(b"v".to_vec()),
        timestamp: 1_700_000_000_000,
        ..NewRecord::default()
    };
    let (key, value) = control::encode_marker(false, 0);
    let abort = NewRecord {
        key: Some(key),
        value: Some(value),
        headers: Vec::new(),
        timestamp: 1_700_000_000_001,
    };
    let marker = BatchSpec {
        control: true,
        base_sequence: -1,
        ..txn
    };
    let txnindex = dir.path().join("t-0/00000000000000000000.txnindex");

    let mut bare = PartitionAppender::open(dir.path(), "t", 0, AppendConfig::default()).unwrap();
    bare.append(&BatchSpec::default(), std::slice::from_ref(&data))
        .unwrap();
    bare.append(&txn, std::slice::from_ref(&data)).unwrap();
    let err = bare
        .append(&marker, std::slice::from_ref(&abort))
        .unwrap_err();
    assert!(err.to_string().contains("ABORT marker"), "{err}");
    bare.close().unwrap();
    assert_eq!(std::fs::metadata(&txnindex).map_or(0, |m| m.len()), 0);
    assert_eq!(
        Partition::open(&dir.path().join("t-0"))
            .unwrap()
            .log_end_offset()
            .unwrap(),
        2
    );

    let config = AppendConfig {
        aborted_txn: Some(txn::aborted_txn),
        ..AppendConfig::default()
    };
    let mut a = PartitionAppender::open(dir.path(), "t", 0, config).unwrap();
    let at = a.append(&marker, std::slice::from_ref(&abort)).unwrap();
    a.close().unwrap();
    assert_eq!(*at.start(), 2);
    // TransactionIndex entry: version i16 0, producerId, firstOffset,
    // lastOffset (the marker), lastStableOffset: with no other open
    // transaction, the marker + 1 (`ProducerStateManager.lastStableOffset`).
    let entry = std::fs::read(&txnindex).unwrap();
    let mut want = vec![0u8, 0];
    for v in [42i64, 1, 2, 3] {
        want.extend(v.to_be_bytes());
    }
    assert_eq!(entry, want);
}
