use crate::support::{check_golden, dump_batches, dump_entries, stderr, stdout, TestEnv};

#[test]
fn partition_text_with_records() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["dump-segment", "--records", "fixtures/data/orders-0"],
        0,
        "dump-segment/orders-records",
    );
}

#[test]
fn segment_json_first_batches() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "dump-segment",
            "--format",
            "json",
            "--max-batches",
            "3",
            "fixtures/data/orders-0/00000000000000000090.log",
        ],
        0,
        "dump-segment/json-first-batches",
    );
}

#[test]
fn index_files() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "dump-segment",
            "fixtures/data/orders-0/00000000000000000000.index",
            "fixtures/data/orders-0/00000000000000000000.timeindex",
            "fixtures/data/payments.eu-west-1/00000000000000000000.index",
        ],
        0,
        "dump-segment/indexes",
    );
}

#[test]
fn from_offset_seeks_with_the_index() {
    let env = TestEnv::new();
    let o = check_golden(
        &env,
        &[
            "dump-segment",
            "--records",
            "--from-offset",
            "122",
            "fixtures/data/orders-0",
        ],
        0,
        "dump-segment/from-offset",
    );
    let out = stdout(&o);
    assert!(
        !out.contains("| offset: 121 "),
        "records below --from-offset are not shown"
    );
    assert!(out.contains("| offset: 122 "));
}

#[test]
fn torn_tail_is_reported_with_exit_1() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["dump-segment", "fixtures/truncated/orders-0"],
        1,
        "dump-segment/torn-tail",
    );
}

#[test]
fn crc_mismatch_is_shown_and_exit_1() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "dump-segment",
            "fixtures/corrupt/orders-0/00000000000000000000.log",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("position: 950 ") && stdout(&o).contains("isvalid: false"));
    assert!(
        stderr(&o).contains("byte 967: CRC mismatch"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn bad_inputs_get_one_clear_message() {
    let env = TestEnv::new();
    std::fs::create_dir(env.path("empty")).unwrap();
    std::fs::write(
        env.path("notes.txt"),
        b"hello, this is not a segment at all\n",
    )
    .unwrap();
    std::fs::write(
        env.path("huge.bin"),
        [
            0, 0, 0, 0, 0, 0, 0, 0, 0x7f, 0xff, 0xff, 0xff, 0, 0, 0, 0, 2, 0, 0, 0,
        ],
    )
    .unwrap();
    let cases: &[(&[&str], i32, &str)] = &[
        (
            &["dump-segment", "missing.log"],
            2,
            "missing.log: stat: No such file or directory",
        ),
        (
            &["dump-segment", "empty"],
            2,
            "empty: holds no partition folders",
        ),
        (
            &["dump-segment", "notes.txt"],
            2,
            "notes.txt: byte 0: torn tail: entry declares 1751741228 bytes but only 36 remain in the file (the file does not start with a record batch: is it a Kafka log segment?)",
        ),
        (
            &["dump-segment", "huge.bin"],
            2,
            "huge.bin: byte 0: torn tail: entry declares 2147483659 bytes but only 20 remain",
        ),
        (&["dump-segment", "--from-offset"], 2, "a value is required"),
    ];
    for (args, code, needle) in cases {
        let o = env.run(args, None);
        assert_eq!(o.status.code(), Some(*code), "{args:?}: {}", stderr(&o));
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
        assert!(!stderr(&o).contains("panicked"), "{args:?}");
    }
}

#[test]
fn layout_annotates_every_field() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "dump-segment",
            "--layout",
            "--max-batches",
            "1",
            "fixtures/groups/__offsets-0",
        ],
        0,
        "dump-segment/layout-offsets",
    );
    // A compressed batch: the records are shown inside the decompressed data.
    let o = env.run(
        &[
            "dump-segment",
            "--layout",
            "--from-offset",
            "120",
            "--max-batches",
            "1",
            "fixtures/data/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    let text = stdout(&o);
    assert!(
        text.contains("-- records (compressed) 71 bytes of gzip"),
        "{text}"
    );
    assert!(
        text.contains("        +0  "),
        "positions in the decompressed data are marked +N: {text}"
    );
    // JSON: the fields' bytes add up to the batch.
    let o = env.run(
        &[
            "dump-segment",
            "--layout",
            "--format",
            "json",
            "--max-batches",
            "1",
            "fixtures/data/orders-0",
        ],
        None,
    );
    let entries = dump_entries(&o);
    assert_eq!(entries.len(), 1, "--max-batches 1");
    let v = &entries[0];
    assert_eq!(v["type"], "layout");
    let total: usize = v["fields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["bytes"].as_str().unwrap().len() / 2)
        .sum();
    assert_eq!(total, 316);
}

#[test]
fn read_committed_hides_aborted_and_stops_at_the_last_stable_offset() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "dump-segment",
            "--records",
            "--isolation",
            "read-committed",
            "fixtures/txn/payments-0",
        ],
        0,
        "dump-segment/txn-read-committed",
    );
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "--isolation",
            "read-committed",
            "fixtures/txn/payments-0",
        ],
        None,
    );
    let offsets: Vec<i64> = dump_batches(&o)
        .iter()
        .flat_map(|b| {
            b["records"]
                .as_array()
                .unwrap()
                .iter()
                .map(|r| r["offset"].as_i64().unwrap())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(
        offsets,
        [0, 1, 2, 3, 4],
        "the COMMIT marker at 5 is hidden, and the open transaction at 6 stops the view"
    );
    let o = env.run(
        &[
            "dump-segment",
            "--format",
            "json",
            "--isolation",
            "read-committed",
            "fixtures/groups/ledger-0",
        ],
        None,
    );
    let n = dump_entries(&o).len();
    assert_eq!(n, 2, "two data batches, their markers hidden");
}

#[test]
fn internal_topics_are_decoded() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "dump-segment",
            "--format",
            "json",
            "fixtures/kafka/__consumer_offsets-9",
        ],
        0,
        "dump-segment/consumer-offsets-json",
    );
    let o = env.run(
        &[
            "dump-segment",
            "--records",
            "fixtures/txn/__transaction_state-0",
        ],
        None,
    );
    let text = stdout(&o);
    assert!(
        text.contains(r#""transactional_id":"slow-app""#) && text.contains(r#""state":"Ongoing""#),
        "{text}"
    );
    assert!(
        text.contains(r#"decoded: {"key":{"transactional_id":"old-app"},"value":"tombstone"}"#),
        "{text}"
    );
}

#[test]
fn transaction_index_and_snapshot_files() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "dump-segment",
            "fixtures/txn/payments-0/00000000000000000000.txnindex",
        ],
        0,
        "dump-segment/txnindex",
    );
    use kaen_log::txn::snapshot::{encode, SnapshotEntry};
    let entry = SnapshotEntry {
        producer_id: 300,
        epoch: 0,
        last_sequence: 1,
        last_offset: 7,
        offset_delta: 1,
        timestamp: 1_700_000_000_000,
        coordinator_epoch: 0,
        current_txn_first_offset: 6,
    };
    std::fs::write(
        env.path("fixtures/txn/payments-0/00000000000000000017.snapshot"),
        encode(&[entry]),
    )
    .unwrap();
    let o = env.run(
        &[
            "dump-segment",
            "fixtures/txn/payments-0/00000000000000000017.snapshot",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(
        stdout(&o).contains("Snapshot end offset: 17 version: 1"),
        "{}",
        stdout(&o)
    );
    assert!(
        stdout(&o).contains(
            "producerId: 300 producerEpoch: 0 coordinatorEpoch: 0 currentTxnFirstOffset: 6"
        ),
        "{}",
        stdout(&o)
    );
}

#[test]
fn max_batches_counts_per_path_across_a_folders_segments() {
    let env = TestEnv::new();
    let files = |args: &[&str]| -> Vec<String> {
        let mut all = vec!["dump-segment", "--format", "json", "--batches-only"];
        all.extend_from_slice(args);
        let o = env.run(&all, None);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        dump_batches(&o)
            .iter()
            .map(|b| b["file"].as_str().unwrap().to_string())
            .collect()
    };
    let first = "fixtures/data/orders-0/00000000000000000000.log";
    let second = "fixtures/data/orders-0/00000000000000000090.log";
    let everything = files(&["fixtures/data/orders-0"]);
    let in_first = everything.iter().filter(|f| *f == first).count();
    assert!(in_first > 0 && everything.len() > in_first + 2);
    // Two more than the first segment holds: all of it, then two of the second.
    let limit = in_first + 2;
    let shown = files(&[
        "--max-batches",
        &limit.to_string(),
        "fixtures/data/orders-0",
    ]);
    assert_eq!(shown.len(), limit);
    assert_eq!(shown.iter().filter(|f| *f == second).count(), 2);
    // Each path given has its own count.
    let shown = files(&[
        "--max-batches",
        "1",
        "fixtures/data/orders-0",
        "fixtures/data/payments.eu-west-1",
    ]);
    assert_eq!(
        shown,
        [
            first,
            "fixtures/data/payments.eu-west-1/00000000000000000000.log"
        ]
    );
}

/// Batches of every kind dump-segment renders, from the independent
/// encoder, all at base offset 0: plain batches with keys, values and
/// headers that need escaping (quotes, control characters, multi-byte and
/// invalid UTF-8, nulls), transactional batches and their COMMIT and ABORT
/// markers, a gzip batch and a legacy message.
const VARIED_BATCHES: &str = r#"
import gzip
values = [b"plain", b'quote " back \\ slash', b"tab\tnl\ncr\r\x01\x1f", "é€😀".encode(),
          b"\xff\xfe not utf-8 \xc3", b"", b"x" * 700]
out = b""
for i in range(40):
    records = []
    for j in range(1 + i % 7):
        key = None if (i + j) % 5 == 0 else values[(i * 3 + j) % len(values)][:40]
        value = None if (i + j) % 11 == 0 else values[(i + j) % len(values)]
        headers = [(b"h\"%d" % j, values[j % len(values)][:20])] if j % 3 == 1 else []
        records.append((j, j * 7, key, value, headers))
    out += batch(0, records, first_timestamp=1_700_000_000_000 + i * 1000)
    if i % 10 == 3:
        out += batch(0, records[:2], producer_id=7, producer_epoch=1,
                     base_sequence=i, attributes=TRANSACTIONAL)
        out += control_batch(0, i % 20 == 3, 7, 1, timestamp=1_700_000_000_000 + i * 1000)
body = b"".join(record(j, j, b"k", b"gz%d" % j) for j in range(5))
compressed = gzip.compress(body, mtime=0)
after_crc = struct.pack(">hiqqqhii", 1, 4, 0, 4, -1, -1, -1, 5) + compressed
out += struct.pack(">qiibI", 0, 9 + len(after_crc), 0, 2, crc32c(after_crc)) + after_crc
out += legacy_message(0, b"legacy value", key=b"legacy key", timestamp=5)
"#;

/// `VARIED_BATCHES` repeated until the segment passes `min_len`, each
/// batch given the next base offset (the base offset is outside both
/// checksums), with the value bytes of one batch in the middle flipped.
fn varied_segment(min_len: usize) -> Vec<u8> {
    let template = crate::support::encoded(VARIED_BATCHES);
    let mut pieces = Vec::new();
    let mut at = 0;
    while at < template.len() {
        let len = i32::from_be_bytes(template[at + 8..at + 12].try_into().unwrap()) as usize;
        pieces.push(&template[at..at + 12 + len]);
        at += 12 + len;
    }
    let (mut out, mut next, mut damaged) = (Vec::new(), 0i64, false);
    while out.len() < min_len {
        for piece in &pieces {
            let start = out.len();
            out.extend_from_slice(piece);
            out[start..start + 8].copy_from_slice(&next.to_be_bytes());
            // v2: lastOffsetDelta at 23; a legacy message holds one offset.
            next += if piece[16] == 2 {
                1 + i32::from_be_bytes(piece[23..27].try_into().unwrap()) as i64
            } else {
                1
            };
            if !damaged && out.len() > min_len / 2 && piece[16] == 2 && piece.len() > 200 {
                let last = out.len() - 1;
                out[last] ^= 0x20;
                damaged = true;
            }
        }
    }
    out
}

/// JSON rendered on read-ahead threads (`--threads 2`, a segment past the
/// read-ahead threshold) is byte for byte the JSON rendered on the
/// reading thread (`--threads 1`), whatever the options.
#[test]
fn json_rendered_ahead_equals_json_rendered_inline() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("00000000000000000000.log");
    let segment = varied_segment(17 << 20);
    std::fs::write(&path, &segment).unwrap();
    let file = path.to_str().unwrap();
    let cases: &[&[&str]] = &[
        &["--format", "jsonl"],
        &["--format", "json"],
        &[
            "--format",
            "jsonl",
            "--from-offset",
            "30000",
            "--to-offset",
            "90000",
        ],
        &["--format", "jsonl", "--batches-only", "--decoder", "none"],
        &[
            "--format",
            "jsonl",
            "--from-time",
            "1700000020000",
            "--max-batches",
            "20000",
        ],
    ];
    for args in cases {
        let run = |threads: &str| {
            assert_cmd::Command::cargo_bin("klog")
                .unwrap()
                .arg("dump-segment")
                .args(*args)
                .args(["--threads", threads, file])
                .output()
                .unwrap()
        };
        let (one, two) = (run("1"), run("2"));
        assert_eq!(
            one.status.code(),
            Some(1),
            "{args:?}: the damaged batch is a finding"
        );
        assert_eq!(two.status.code(), one.status.code(), "{args:?}");
        assert_eq!(stderr(&two), stderr(&one), "{args:?}");
        assert!(one.stdout.len() > 1 << 20, "{args:?}");
        assert!(one.stdout == two.stdout, "{args:?}: the outputs differ");
    }
}

/// kafka-dump-log's `--index-sanity-check`: `OffsetIndex.sanityCheck` and
/// `TimeIndex.sanityCheck` on every whole slot, Kafka's words on stdout
/// when it passes, the reason and exit 1 when it does not.
#[test]
fn index_sanity_check_is_kafkas() {
    let env = TestEnv::new();
    let dir = "fixtures/data/orders-0";
    let index = format!("{dir}/00000000000000000000.index");
    let time = format!("{dir}/00000000000000000000.timeindex");
    let o = env.run(
        &["dump-segment", "--index-sanity-check", &index, &time],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let want = format!(
        "Dumping {index}\n{index} passed sanity check.\nDumping {time}\n{time} passed sanity check.\n"
    );
    assert_eq!(stdout(&o), want);
    // A partial entry at the end: 3 bytes more than whole entries.
    let len = std::fs::metadata(env.path(&index)).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(&index))
        .unwrap();
    f.set_len(len + 3).unwrap();
    let o = env.run(&["dump-segment", "--index-sanity-check", &index], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(!stdout(&o).contains("passed"), "{}", stdout(&o));
    let why = format!(
        "byte {len}: index is corrupt, found {} bytes which is neither positive nor a multiple of 8",
        len + 3
    );
    assert!(stderr(&o).contains(&why), "{}", stderr(&o));
    // A preallocated time index (zero slots after the entries) fails the
    // check when read as kafka-dump-log reads it: the last slot's
    // timestamp, 0, is below the first.
    let tlen = std::fs::metadata(env.path(&time)).unwrap().len();
    let f = std::fs::OpenOptions::new()
        .append(true)
        .open(env.path(&time))
        .unwrap();
    f.set_len(tlen + 24).unwrap();
    let o = env.run(&["dump-segment", "--index-sanity-check", &time], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stderr(&o).contains("the last timestamp is 0 which is less than the first timestamp"),
        "{}",
        stderr(&o)
    );
    // An empty offset index is "empty", as kafka-dump-log says.
    let empty = "fixtures/00000000000000000007.index";
    std::fs::write(env.path(empty), b"").unwrap();
    let o = env.run(&["dump-segment", "--index-sanity-check", empty], None);
    assert_eq!(stdout(&o), format!("Dumping {empty}\n{empty} is empty.\n"));
}

/// `--verify-index-only` prints no entries, only the entries that disagree
/// with the log, and exits 1 when one does.
#[test]
fn verify_index_only_prints_what_disagrees() {
    let env = TestEnv::new();
    let index = "fixtures/data/orders-0/00000000000000000000.index";
    let o = env.run(&["dump-segment", "--verify-index-only", index], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert_eq!(stdout(&o), format!("Dumping {index}\n"));
    // Point the first entry 1 byte past its batch's start.
    let mut bytes = std::fs::read(env.path(index)).unwrap();
    assert!(bytes.len() >= 8, "the fixture's index has an entry");
    let position = i32::from_be_bytes(bytes[4..8].try_into().unwrap());
    bytes[4..8].copy_from_slice(&(position + 1).to_be_bytes());
    std::fs::write(env.path(index), &bytes).unwrap();
    let o = env.run(&["dump-segment", "--verify-index-only", index], None);
    assert_eq!(o.status.code(), Some(1));
    assert_eq!(stdout(&o), format!("Dumping {index}\n"));
    assert!(
        stderr(&o).contains(&format!(
            "points at position {}, which is not the start of a batch",
            position + 1
        )),
        "{}",
        stderr(&o)
    );
}

/// kafka-dump-log's decoder flags mean `--print-data-log` with klog's
/// decoder of that topic; two of them, or one with `--decoder`, are refused.
#[test]
fn kafka_decoder_flags_print_the_data_log() {
    let env = TestEnv::new();
    let seg = "fixtures/kafka/__consumer_offsets-0/00000000000000000000.log";
    let kafka = env.run(&["dump-segment", "--offsets-decoder", seg], None);
    let klog = env.run(
        &[
            "dump-segment",
            "--print-data-log",
            "--decoder",
            "offsets",
            seg,
        ],
        None,
    );
    assert_eq!(kafka.status.code(), Some(0), "{}", stderr(&kafka));
    assert_eq!(stdout(&kafka), stdout(&klog));
    assert!(stdout(&kafka).contains("| offset: 0 "));
    // klog's own --decoder does not mix with kafka-dump-log's flags.
    let o = env.run(
        &["dump-segment", "--offsets-decoder", "--decoder=none", seg],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    // Two decoder flags: kafka-dump-log takes them, and the first of
    // offsets, transaction log, cluster metadata, remote log metadata and
    // share group state wins (DumpLogSegmentsOptions.messageParser).
    let both = env.run(
        &[
            "dump-segment",
            "--transaction-log-decoder",
            "--offsets-decoder",
            seg,
        ],
        None,
    );
    assert_eq!(both.status.code(), Some(0), "{}", stderr(&both));
    assert_eq!(stdout(&both), stdout(&kafka));
}

/// `--from-time` and `--to-time` take ISO-8601 as every time option does:
/// 2023-11-14T22:13:20.005Z is epoch ms 1700000000005.
#[test]
fn time_filters_take_iso_8601() {
    let env = TestEnv::new();
    let run = |from: &str, to: &str| {
        let o = env.run(
            &[
                "dump-segment",
                "--records",
                "--from-time",
                from,
                "--to-time",
                to,
                "fixtures/data/orders-0",
            ],
            None,
        );
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stdout(&o)
    };
    let ms = run("1700000000005", "1700000000010");
    assert_eq!(
        run("2023-11-14T22:13:20.005Z", "2023-11-15T00:13:20.010+02:00"),
        ms
    );
    assert_ne!(run("0", "9999999999999"), ms, "the window selects records");
}

#[test]
fn a_segment_whose_first_batch_is_torn_is_damaged_not_foreign() {
    // A crash just after a roll can leave a segment holding only part of
    // its first batch. Kafka loads `<offset>.log` as a segment by its name
    // (LogLoader), and kafka-dump-log reports the bytes it cannot read in
    // its "Found N invalid bytes at the end of" line: damage (exit 1), not
    // a file that is no segment (exit 2).
    let env = TestEnv::new();
    let batch = crate::support::encoded("out = batch(26, [(i, i, b'k', b'v') for i in range(3)])");
    let torn = &batch[..batch.len() - 20];
    std::fs::create_dir_all(env.path("data/t-0")).unwrap();
    std::fs::write(env.path("data/t-0/00000000000000000026.log"), torn).unwrap();
    let path = "data/t-0/00000000000000000026.log";
    let o = env.run(&["dump-segment", "--print-data-log", "--files", path], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        format!(
            "Dumping {path}\nLog starting offset: 26\n\
             Found {} invalid bytes at the end of 00000000000000000026.log\n",
            torn.len()
        )
    );
    let o = env.run(&["verify-crc", path], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(stdout(&o).contains("torn_tail"), "{}", stdout(&o));
    assert!(
        !stdout(&o).contains("is it a Kafka log segment?"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn print_data_log_shows_the_records_of_a_batch_that_fails_its_crc() {
    // kafka-dump-log's deep iteration decodes every batch whatever its CRC
    // says (DumpLogSegments: `isvalid` on the batch line, then the
    // records). One byte of the last record's value changed: the batch
    // fails its CRC, its records still decode, and all three are shown,
    // the changed value as it now reads. klog's own text shows none.
    let env = TestEnv::new();
    let mut log = crate::support::encoded(
        "out = batch(0, [(i, i, b'k%d' % i, b'v%d' % i) for i in range(3)], first_timestamp=1700000000000)",
    );
    // The last record ends with its value `v2` and a header count of 0.
    let at = log.len() - 3;
    assert_eq!(&log[at..], b"v2\0");
    log[at] = b'w';
    std::fs::create_dir_all(env.path("data/t-0")).unwrap();
    std::fs::write(env.path("data/t-0/00000000000000000000.log"), &log).unwrap();
    let path = "data/t-0/00000000000000000000.log";
    let o = env.run(&["dump-segment", "--print-data-log", "--files", path], None);
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    let lines: Vec<&str> = text.lines().collect();
    assert!(
        lines[2].starts_with("baseOffset: 0 lastOffset: 2 count: 3"),
        "{text}"
    );
    assert!(lines[2].ends_with("isvalid: false"), "{text}");
    let records: Vec<String> = lines[3..]
        .iter()
        .map(|l| l.split(" key: ").nth(1).unwrap_or_default().to_string())
        .collect();
    assert_eq!(
        records,
        ["k0 payload: v0", "k1 payload: v1", "k2 payload: w2"]
    );
    let o = env.run(&["dump-segment", "--records", path], None);
    assert!(!stdout(&o).contains("| offset:"), "{}", stdout(&o));
}

/// kafka-dump-log's decoder classes: klog knows Kafka's own and refuses
/// any other class before printing anything (exit 2), DefaultDecoder too
/// (Kafka prints its byte array as `[B@` and a hash code).
#[test]
fn decoder_classes_other_than_kafkas_are_refused() {
    let env = TestEnv::new();
    let seg = "fixtures/data/orders-0/00000000000000000000.log";
    for class in [
        "com.example.AvroDecoder",
        "org.apache.kafka.tools.api.DefaultDecoder",
        "kafka.serializer.StringDecoder",
    ] {
        let o = env.run(&["dump-segment", "--value-decoder-class", class, seg], None);
        assert_eq!(o.status.code(), Some(2), "{class}: {}", stderr(&o));
        assert!(stdout(&o).is_empty(), "{class}");
        assert!(stderr(&o).contains(class), "{}", stderr(&o));
    }
    // The deprecated name is 3.9's, said after the Dumping line.
    let o = env.run(
        &[
            "dump-segment",
            "--kafka-release",
            "3.9",
            "--value-decoder-class",
            "kafka.serializer.StringDecoder",
            seg,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines: Vec<String> = stdout(&o).lines().map(str::to_string).collect();
    assert_eq!(
        lines[1],
        "kafka.serializer.StringDecoder is deprecated. Please use \
         org.apache.kafka.tools.api.StringDecoder instead"
    );
}
