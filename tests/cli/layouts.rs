//! `dump-segment --layout` of every file klog reads beside the logs, on
//! the broker fixture (fixtures/README.md, `broker/`): each field's
//! position, bytes and value are derived here from the file format rules
//! (entry sizes, big-endian fields) and the fixture's definition, never
//! from klog's own output.

use serde_json::Value;

use crate::support::{encoded, stderr, stdout, TestEnv};

const T: i64 = 1_700_000_000_000;

/// The `file_field` entries of `dump-segment --layout --format json PATH`:
/// (position, field, bytes, value), notes included (empty bytes).
fn layout(env: &TestEnv, path: &str, code: i32) -> Vec<(u64, String, Vec<u8>, String)> {
    let o = env.run(
        &["dump-segment", "--layout", "--format", "json", path],
        None,
    );
    assert_eq!(o.status.code(), Some(code), "{path}: {}", stderr(&o));
    let doc: Value = serde_json::from_str(&stdout(&o)).unwrap();
    doc["entries"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["type"] == "file_field")
        .map(|e| {
            assert_eq!(e["file"], path);
            let hex = e["bytes"].as_str().unwrap();
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).unwrap())
                .collect();
            (
                e["position"].as_u64().unwrap(),
                e["field"].as_str().unwrap().to_string(),
                bytes,
                e["value"].as_str().unwrap().to_string(),
            )
        })
        .collect()
}

/// The fields with bytes (notes left out).
fn fields(l: &[(u64, String, Vec<u8>, String)]) -> Vec<&(u64, String, Vec<u8>, String)> {
    l.iter().filter(|f| !f.2.is_empty()).collect()
}

fn be(b: &[u8]) -> i64 {
    let v = b.iter().fold(0i64, |v, x| v << 8 | i64::from(*x));
    // Sign-extend from the field's width.
    let bits = 64 - 8 * b.len() as u32;
    if bits == 0 {
        v
    } else {
        (v << bits) >> bits
    }
}

/// (position, base offset, last offset) of each batch of a segment, by the
/// batch header's fields (baseOffset at 0, batchLength at 8,
/// lastOffsetDelta at 23).
fn batches(log: &[u8]) -> Vec<(i64, i64, i64)> {
    let mut out = Vec::new();
    let mut at = 0;
    while at + 61 <= log.len() {
        let base = be(&log[at..at + 8]);
        let len = be(&log[at + 8..at + 12]) as usize + 12;
        let delta = be(&log[at + 23..at + 27]);
        out.push((at as i64, base, base + delta));
        at += len;
    }
    out
}

#[test]
fn offset_index_entries_point_at_their_batches() {
    let env = TestEnv::new();
    let path = "fixtures/broker/orders-0/00000000000000000014.index";
    let file = std::fs::read(env.path(path)).unwrap();
    let log = std::fs::read(env.path("fixtures/broker/orders-0/00000000000000000014.log")).unwrap();
    let l = layout(&env, path, 0);
    let f = fields(&l);
    // 8-byte entries: relativeOffset int32, position int32.
    assert_eq!(f.len(), file.len() / 8 * 2);
    for (k, pair) in f.chunks(2).enumerate() {
        let at = 8 * k;
        let rel = be(&file[at..at + 4]);
        let pos = be(&file[at + 4..at + 8]);
        assert_eq!(
            (pair[0].0, pair[0].1.as_str(), &pair[0].2[..]),
            (at as u64, "relativeOffset (int32)", &file[at..at + 4])
        );
        assert!(pair[0]
            .3
            .starts_with(&format!("{rel}: offset {}", 14 + rel)));
        assert_eq!(
            (pair[1].0, pair[1].1.as_str(), &pair[1].2[..]),
            (at as u64 + 4, "position (int32)", &file[at + 4..at + 8])
        );
        assert!(pair[1].3.starts_with(&format!("{pos}: ")));
        // What the value says holds: the batch at that position ends at that offset.
        let b = batches(&log)
            .into_iter()
            .find(|b| b.0 == pos)
            .unwrap_or_else(|| panic!("entry {k}: no batch starts at {pos}"));
        assert_eq!(b.2, 14 + rel, "entry {k}");
    }
    // Titles: one note per entry at its position.
    let notes: Vec<(u64, &str)> = l
        .iter()
        .filter(|f| f.2.is_empty())
        .map(|f| (f.0, f.1.as_str()))
        .collect();
    assert_eq!(notes, [(0, "entry 0"), (8, "entry 1"), (16, "entry 2")]);
}

#[test]
fn a_preallocated_index_ends_in_zero_slots() {
    // The active segment's index is 10485760 bytes on the broker's disk
    // (PREALLOCATED), of which the used entries are the committed file's.
    let env = TestEnv::new();
    let path = "fixtures/broker/orders-0/00000000000000000028.index";
    let used = std::fs::read(crate::support::repo().join(path))
        .unwrap()
        .len();
    let l = layout(&env, path, 0);
    assert_eq!(fields(&l).len(), used / 8 * 2);
    let last = l.last().unwrap();
    assert_eq!(
        (last.0, last.1.as_str()),
        (used as u64, "preallocated slots")
    );
    assert!(
        last.3
            .starts_with(&format!("{} zero slots of 8 bytes", (10485760 - used) / 8)),
        "{}",
        last.3
    );
}

#[test]
fn time_index_entries() {
    let env = TestEnv::new();
    let path = "fixtures/broker/orders-0/00000000000000000014.timeindex";
    let file = std::fs::read(env.path(path)).unwrap();
    let l = layout(&env, path, 0);
    let f = fields(&l);
    // 12-byte entries: timestamp int64, relativeOffset int32.
    assert_eq!(f.len(), file.len() / 12 * 2);
    for (k, pair) in f.chunks(2).enumerate() {
        let at = 12 * k;
        let ts = be(&file[at..at + 8]);
        let rel = be(&file[at + 8..at + 12]);
        assert_eq!(
            (pair[0].0, pair[0].1.as_str()),
            (at as u64, "timestamp (int64)")
        );
        assert!(pair[0].3.starts_with(&format!("{ts}: ")));
        assert_eq!(
            (pair[1].0, pair[1].1.as_str()),
            (at as u64 + 8, "relativeOffset (int32)")
        );
        assert!(pair[1]
            .3
            .starts_with(&format!("{rel}: offset {}", 14 + rel)));
    }
}

#[test]
fn transaction_index_entry() {
    // ledger-0: producer 4000's transaction 7..8 aborted by the marker at 9,
    // last stable offset 10 (fixtures/README.md).
    let env = TestEnv::new();
    let path = "fixtures/broker/ledger-0/00000000000000000000.txnindex";
    let file = std::fs::read(env.path(path)).unwrap();
    assert_eq!(file, encoded("out = aborted_txn(4000, 7, 9, 10)"));
    let l = layout(&env, path, 0);
    let got: Vec<(u64, &str, &[u8], &str)> = fields(&l)
        .iter()
        .map(|f| (f.0, f.1.as_str(), &f.2[..], f.3.split(':').next().unwrap()))
        .collect();
    assert_eq!(
        got,
        [
            (0, "version (int16)", &file[0..2], "0"),
            (2, "producerId (int64)", &file[2..10], "4000"),
            (10, "firstOffset (int64)", &file[10..18], "7"),
            (18, "lastOffset (int64)", &file[18..26], "9"),
            (26, "lastStableOffset (int64)", &file[26..34], "10"),
        ]
    );
}

#[test]
fn producer_snapshot_fields() {
    // orders-0's snapshot at the roll to 14: producer 1000, epoch 0, its
    // request 5 (sequences 10..11 at offsets 12..13, stamped T + 5000 and
    // + 1) the last batch, no coordinator epoch, no transaction.
    let env = TestEnv::new();
    let path = "fixtures/broker/orders-0/00000000000000000014.snapshot";
    let file = std::fs::read(env.path(path)).unwrap();
    assert_eq!(
        file,
        encoded(&format!(
            "out = producer_snapshot([(1000, 0, 11, 13, 1, {}, -1, -1)])",
            T + 5001
        ))
    );
    let l = layout(&env, path, 0);
    let got: Vec<(u64, &str, &[u8], String)> = fields(&l)
        .iter()
        .map(|f| {
            (
                f.0,
                f.1.as_str(),
                &f.2[..],
                f.3.split(':').next().unwrap().to_string(),
            )
        })
        .collect();
    let crc = u32::from_be_bytes(file[2..6].try_into().unwrap());
    let want: Vec<(u64, &str, &[u8], String)> = vec![
        (
            0,
            "version (int16)",
            &file[0..2],
            "1 (ProducerSnapshot)".into(),
        ),
        (
            2,
            "crc (uint32)",
            &file[2..6],
            format!("0x{crc:08x}; CRC-32C of bytes 6..56 is 0x{crc:08x}"),
        ),
        (6, "producer count (int32)", &file[6..10], "1".into()),
        (10, "producerId (int64)", &file[10..18], "1000".into()),
        (18, "epoch (int16)", &file[18..20], "0".into()),
        (20, "lastSequence (int32)", &file[20..24], "11".into()),
        (24, "lastOffset (int64)", &file[24..32], "13".into()),
        (32, "offsetDelta (int32)", &file[32..36], "1".into()),
        (
            36,
            "timestamp (int64)",
            &file[36..44],
            (T + 5001).to_string(),
        ),
        (44, "coordinatorEpoch (int32)", &file[44..48], "-1".into()),
        (
            48,
            "currentTxnFirstOffset (int64)",
            &file[48..56],
            "-1".into(),
        ),
    ];
    assert_eq!(got, want);
    // What the rule reads from them.
    let value = |name: &str| l.iter().find(|f| f.1 == name).unwrap().3.clone();
    assert!(value("lastSequence (int32)").contains("must start at 12"));
    assert!(value("offsetDelta (int32)").contains("sequences 10..=11 at offsets 12..=13"));
    // A flipped CRC byte: the layout is still shown, and exit 1 names the byte.
    let bad = env.path("bad/00000000000000000014.snapshot");
    std::fs::create_dir_all(bad.parent().unwrap()).unwrap();
    let mut flipped = file.clone();
    flipped[3] ^= 0xff;
    std::fs::write(&bad, flipped).unwrap();
    let o = env.run(
        &[
            "dump-segment",
            "--layout",
            "bad/00000000000000000014.snapshot",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("byte 2: CRC mismatch"),
        "{}",
        stderr(&o)
    );
    assert!(stdout(&o).contains("MISMATCH"), "{}", stdout(&o));
}

/// The lines of a text file with their byte positions.
fn lines(text: &str) -> Vec<(u64, &str)> {
    let mut at = 0;
    text.split_inclusive('\n')
        .map(|l| {
            let p = at;
            at += l.len() as u64;
            (p, l.trim_end_matches('\n'))
        })
        .collect()
}

#[test]
fn checkpoint_files_line_by_line() {
    let env = TestEnv::new();
    let what = [
        ("replication-offset-checkpoint", "high watermark"),
        ("recovery-point-offset-checkpoint", "recovery point"),
        ("log-start-offset-checkpoint", "log start offset"),
    ];
    for (name, meaning) in what {
        let path = format!("fixtures/broker/{name}");
        let text = std::fs::read_to_string(env.path(&path)).unwrap();
        let l = layout(&env, &path, 0);
        let want = lines(&text);
        assert_eq!(l.len(), want.len(), "{name}");
        for (n, (f, (at, line))) in l.iter().zip(&want).enumerate() {
            assert_eq!(f.0, *at, "{name} line {}", n + 1);
            assert_eq!(f.2, format!("{line}\n").as_bytes());
            assert!(f.3.starts_with(&format!("{line:?}")), "{}", f.3);
            match n {
                0 => assert_eq!(f.1, "version"),
                1 => assert_eq!(f.1, "entry count"),
                _ => {
                    let p: Vec<&str> = line.split(' ').collect();
                    assert_eq!(f.1, format!("entry {}", n - 1));
                    assert!(
                        f.3.contains(&format!("{}-{}: {meaning} {}", p[0], p[1], p[2])),
                        "{}",
                        f.3
                    );
                }
            }
        }
    }
    // The high watermarks the fixture defines: payments-0 27, ledger-1 3.
    let l = layout(&env, "fixtures/broker/replication-offset-checkpoint", 0);
    assert!(l
        .iter()
        .any(|f| f.3.contains("payments-0: high watermark 27")));
    assert!(l.iter().any(|f| f.3.contains("ledger-1: high watermark 3")));
    // Kafka refuses a checkpoint whose count is wrong, or with a bad line.
    std::fs::create_dir_all(env.path("bad")).unwrap();
    std::fs::write(
        env.path("bad/recovery-point-offset-checkpoint"),
        "0\n2\norders 0 5\n",
    )
    .unwrap();
    let o = env.run(
        &["dump-segment", "bad/recovery-point-offset-checkpoint"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("line 2: expected 2 entries, found 1"),
        "{}",
        stderr(&o)
    );
    std::fs::write(env.path("bad/leader-epoch-checkpoint"), "0\n1\n3\n").unwrap();
    let o = env.run(&["dump-segment", "bad/leader-epoch-checkpoint"], None);
    assert_eq!(o.status.code(), Some(1));
    // CheckpointFile: "Malformed line in checkpoint file".
    assert!(
        stderr(&o).contains("line 3: malformed line \"3\" (expected 2 fields)"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn leader_epochs_topic_ids_and_the_directory_identity() {
    let env = TestEnv::new();
    // __consumer_offsets-19: legacy messages have no epoch, so epoch 5 starts at 3.
    let l = layout(
        &env,
        "fixtures/broker/__consumer_offsets-19/leader-epoch-checkpoint",
        0,
    );
    assert_eq!(
        l.iter().map(|f| (f.0, f.1.as_str())).collect::<Vec<_>>(),
        [(0, "version"), (2, "entry count"), (4, "entry 1")]
    );
    assert!(
        l[2].3.contains("leader epoch 5 began at offset 3"),
        "{}",
        l[2].3
    );
    // partition.metadata: two lines, no newline at the end.
    let path = "fixtures/broker/orders-0/partition.metadata";
    let text = std::fs::read_to_string(env.path(path)).unwrap();
    let l = layout(&env, path, 0);
    assert_eq!(
        l.iter()
            .map(|f| (f.0, f.1.as_str(), String::from_utf8(f.2.clone()).unwrap()))
            .collect::<Vec<_>>(),
        lines(&text)
            .iter()
            .zip(["version", "topic_id"])
            .map(|((at, _), name)| (*at, name, {
                let end = text[*at as usize..]
                    .find('\n')
                    .map_or(text.len(), |e| *at as usize + e + 1);
                text[*at as usize..end].to_string()
            }))
            .collect::<Vec<_>>()
    );
    // meta.properties: every line, keys as Kafka reads them.
    let path = "fixtures/broker/meta.properties";
    let text = std::fs::read_to_string(env.path(path)).unwrap();
    let l = layout(&env, path, 0);
    let want: Vec<(u64, String)> = lines(&text)
        .iter()
        .map(|(at, line)| {
            let key = if line.starts_with('#') {
                "comment".to_string()
            } else {
                line.split('=').next().unwrap().to_string()
            };
            (*at, key)
        })
        .collect();
    assert_eq!(
        l.iter().map(|f| (f.0, f.1.clone())).collect::<Vec<_>>(),
        want
    );
    assert!(l.iter().any(|f| f.1 == "version" && f.3.contains("KRaft")));
}

#[test]
fn text_output_names_each_file_kind() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "dump-segment",
            "--layout",
            "fixtures/broker/ledger-0/00000000000000000000.txnindex",
            "fixtures/broker/cleaner-offset-checkpoint",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let text = stdout(&o);
    assert!(text.contains("34 bytes: transaction index"), "{text}");
    assert!(
        text.contains("0 bytes: cleaner-offset-checkpoint"),
        "{text}"
    );
    assert!(text.contains("-- empty file: nothing in it"), "{text}");
    // Without --layout, an index keeps its entry view and a checkpoint has only the layout.
    let o = env.run(
        &[
            "dump-segment",
            "fixtures/broker/ledger-0/00000000000000000000.txnindex",
        ],
        None,
    );
    assert!(stdout(&o).contains("version: 0 producerId: 4000 firstOffset: 7"));
}

/// A text sidecar's line is shown as it is, in quotes, and escaped once by
/// the renderer: `.kafka_cleanshutdown` (Kafka 3.9 on writes one JSON
/// object, `CleanShutdownFileHandler`) in JSON holds the object's text
/// itself, not a second escaping of it.
#[test]
fn a_json_line_of_a_sidecar_is_escaped_once() {
    let env = crate::support::TestEnv::new();
    let line = r#"{"version":0,"brokerEpoch":5}"#;
    let path = env.path(".kafka_cleanshutdown");
    std::fs::write(&path, format!("{line}\n")).unwrap();
    let o = env.run(
        &["dump-segment", "--format", "json", path.to_str().unwrap()],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let v: serde_json::Value = serde_json::from_str(&crate::support::stdout(&o)).unwrap();
    let value = v["entries"][0]["value"].as_str().unwrap();
    assert_eq!(value, format!("\"{line}\": version = 0, brokerEpoch = 5"));
    let o = env.run(&["dump-segment", path.to_str().unwrap()], None);
    assert!(crate::support::stdout(&o).contains(&format!("\"{line}\": version = 0")));
}

/// A string field of a KRaft record holding DEL (0x7f, which JSON leaves
/// raw) is shown escaped in the layout, as every value is: the byte itself
/// never reaches the terminal.
#[test]
fn a_metadata_string_with_del_is_escaped_in_the_layout() {
    let env = crate::support::TestEnv::new();
    let mut log =
        std::fs::read(env.path("fixtures/kraft44/__cluster_metadata-0/00000000000000000000.log"))
            .unwrap();
    let at = log
        .windows(13)
        .position(|w| w == b"kraft.version")
        .expect("the fixture's FeatureLevelRecord names kraft.version");
    log[at + 12] = 0x7f;
    let dir = env.path("del/__cluster_metadata-0");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("00000000000000000000.log");
    std::fs::write(&path, &log).unwrap();
    // The CRC no longer matches (exit 1); the layout is shown whole.
    let o = env.run(&["dump-segment", "--layout", path.to_str().unwrap()], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(!out.contains('\u{7f}'), "a raw DEL in the layout");
    assert!(out.contains(r#"kraft.versio\u007f"#), "{out}");
}
