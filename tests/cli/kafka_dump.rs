//! `dump-segment --print-data-log` prints kafka-dump-log's lines: on every
//! data-topic segment a real Kafka cluster of each release of the oracle
//! matrix wrote (fixtures/kafka-real/<version>/), klog's output is that
//! release's `DumpLogSegments --deep-iteration --print-data-log` output byte
//! for byte. (Internal topics are left out:
//! Kafka printed those through its offsets, transaction and metadata
//! decoders, which klog's `decoded` JSON field covers instead.)

const INTERNAL: &[&str] = &[
    "__cluster_metadata",
    "__consumer_offsets",
    "__share_group_state",
    "__transaction_state",
];

#[test]
fn print_data_log_is_kafka_dump_log_byte_for_byte() {
    for root in crate::kafka_real::trees() {
        let compared = print_data_log_matches(&root);
        assert!(
            compared >= 100,
            "{}: only {compared} segments compared",
            root.display()
        );
    }
}

/// Compare every data-topic segment of one release's tree; the count
/// compared. klog runs once for all of them (`--files` as kafka-dump-log
/// takes them), each file's output starting at its `Dumping` line.
fn print_data_log_matches(root: &std::path::Path) -> usize {
    let expected = root.join("expected/dump-log");
    let mut want: Vec<(String, Vec<u8>)> = Vec::new();
    for broker in std::fs::read_dir(&expected).unwrap() {
        let broker = broker.unwrap().path();
        for folder in std::fs::read_dir(&broker).unwrap() {
            let folder = folder.unwrap().path();
            let name = folder.file_name().unwrap().to_string_lossy().into_owned();
            if INTERNAL.iter().any(|t| name.starts_with(t)) {
                continue;
            }
            for txt in std::fs::read_dir(&folder).unwrap() {
                let txt = txt.unwrap().path();
                let stem = txt.file_name().unwrap().to_string_lossy().into_owned();
                if stem.contains("index") {
                    continue;
                }
                // expected/dump-log/<broker>/<folder>/<base>.txt for <broker>/<folder>/<base>.log
                let seg = txt.strip_prefix(&expected).unwrap().with_extension("log");
                want.push((
                    seg.to_str().unwrap().to_string(),
                    std::fs::read(&txt).unwrap(),
                ));
            }
        }
    }
    want.sort();
    let mut compared = 0;
    for chunk in want.chunks(400) {
        let o = assert_cmd::Command::cargo_bin("klog")
            .unwrap()
            .current_dir(root)
            .args(["dump-segment", "--print-data-log"])
            .args(chunk.iter().map(|(seg, _)| seg))
            .output()
            .unwrap();
        assert_eq!(
            o.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&o.stderr)
        );
        let text = String::from_utf8_lossy(&o.stdout);
        let mut outputs: Vec<String> = Vec::new();
        for line in text.split_inclusive('\n') {
            if line.starts_with("Dumping ") || outputs.is_empty() {
                outputs.push(String::new());
            }
            outputs.last_mut().unwrap().push_str(line);
        }
        assert_eq!(outputs.len(), chunk.len(), "one output per segment");
        for ((seg, kafka), klog) in chunk.iter().zip(&outputs) {
            assert_eq!(
                klog.as_str(),
                String::from_utf8_lossy(kafka),
                "{seg} of {}",
                root.display()
            );
            compared += 1;
        }
    }
    compared
}

/// The digging filters on `data/orders-0` (fixtures/README.md: records
/// `order-NNN` at offset NNN for 0..119, batches of 5 records of 316 or 317
/// bytes, timestamps 1700000000000 + offset in the first batches).
#[test]
fn filters_select_records_by_offset_key_bytes_and_pattern() {
    let env = crate::support::TestEnv::new();
    let records = |extra: &[&str]| -> Vec<String> {
        let mut args = vec!["dump-segment", "--print-data-log", "fixtures/data/orders-0"];
        args.extend_from_slice(extra);
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {o:?}");
        String::from_utf8(o.stdout)
            .unwrap()
            .lines()
            .filter(|l| l.starts_with('|'))
            .map(str::to_string)
            .collect()
    };
    let key_of = |line: &str| {
        line.split(" key: ")
            .nth(1)
            .and_then(|rest| rest.split(' ').next())
            .unwrap_or_default()
            .to_string()
    };
    let one = records(&["--key", "order-042"]);
    assert_eq!(one.len(), 1, "{one:?}");
    assert!(one[0].starts_with("| offset: 42 "), "{one:?}");

    let range = records(&["--from-offset", "10", "--to-offset", "14"]);
    let keys: Vec<String> = range.iter().map(|l| key_of(l)).collect();
    assert_eq!(
        keys,
        [
            "order-010",
            "order-011",
            "order-012",
            "order-013",
            "order-014"
        ]
    );

    let grep = records(&["--grep", "order-11", "--skip-record-metadata"]);
    let keys: Vec<String> = grep.iter().map(|l| key_of(l)).collect();
    let want: Vec<String> = (110..120).map(|n| format!("order-{n}")).collect();
    assert_eq!(keys, want);
    assert!(
        grep.iter().all(|l| l.starts_with("| key: order-11")),
        "{grep:?}"
    );

    // The first file's first 400 bytes hold only its first batch (316 bytes).
    let o = env.run(
        &[
            "dump-segment",
            "--print-data-log",
            "--max-bytes",
            "400",
            "fixtures/data/orders-0/00000000000000000000.log",
        ],
        None,
    );
    let text = String::from_utf8(o.stdout).unwrap();
    assert_eq!(
        text.lines()
            .filter(|l| l.starts_with("baseOffset:"))
            .count(),
        1,
        "{text}"
    );
    assert_eq!(
        text.lines().filter(|l| l.starts_with('|')).count(),
        5,
        "{text}"
    );
}

/// `--decoder` decodes a segment copied out of its folder: the offsets
/// partition 39 of fixtures/broker holds ledger-writer's commits of
/// orders-0 (fixtures/make_broker.py); outside `__consumer_offsets-39`
/// nothing says so until `--decoder offsets` does.
#[test]
fn decoder_names_the_internal_topic_of_a_copied_segment() {
    let env = crate::support::TestEnv::new();
    std::fs::copy(
        env.path("fixtures/broker/__consumer_offsets-39/00000000000000000000.log"),
        env.path("copied.log"),
    )
    .unwrap();
    let first_key = |extra: &[&str]| -> Option<serde_json::Value> {
        let mut args = vec!["dump-segment", "--format", "jsonl", "copied.log"];
        args.extend_from_slice(extra);
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let text = String::from_utf8(o.stdout).unwrap();
        let batch: serde_json::Value = serde_json::from_str(text.lines().nth(1).unwrap()).unwrap();
        batch["records"][0].get("decoded").map(|d| d["key"].clone())
    };
    assert_eq!(first_key(&[]), None);
    assert_eq!(first_key(&["--decoder", "none"]), None);
    let key = first_key(&["--decoder", "offsets"]).expect("decoded");
    assert_eq!(key["group"], "ledger-writer");
    assert_eq!(key["topic"], "orders");
    assert_eq!(key["partition"], 0);
}

#[test]
fn print_data_log_prints_legacy_entries_as_kafka_dump_log() {
    // Magic 0 and 1 entries (a null key, a null value) and gzip wrappers of
    // both, from the independent encoder. Kafka's DumpLogSegments prints a
    // legacy entry as `offset: <last> position: …` (printBatchLevel) and
    // each message as `| offset: … keySize: … valueSize: … isValid: … crc:
    // …` (printRecordMetadata), then its key and payload; the lines below
    // follow those format strings, and Kafka 4.4.0's tool printed exactly
    // them for these bytes. A CRC is the one the encoder stored.
    let env = crate::support::TestEnv::new();
    let log = crate::support::encoded(
        "out = legacy_message(0, b'v0', magic=0) \
         + legacy_message(1, b'v1', key=b'k1', magic=0) \
         + legacy_message(2, b'v2', key=b'k2', magic=1, timestamp=1700000000000) \
         + legacy_message(3, None, key=b'k3', magic=1, timestamp=1700000000001) \
         + legacy_gzip_wrapper(6, [(b'a', b'x4', 1700000000004), (None, b'x5', 1700000000005), \
           (b'c', b'x6', 1700000000006)], stored=True)",
    );
    let crc = |at: usize| u32::from_be_bytes(log[at + 12..at + 16].try_into().unwrap());
    // The wrapper's inner messages: its value (after its 34-byte v1 head
    // with a null key) is a gzip member of stored blocks, a 10-byte header
    // and a 5-byte block head before them; they are 37, 36 and 37 bytes.
    let inner = 132 + 34 + 10 + 5;
    let inner_crc = |n: usize| crc(inner + [0, 37, 73][n]);
    std::fs::create_dir_all(env.path("data/t-0")).unwrap();
    std::fs::write(env.path("data/t-0/00000000000000000000.log"), &log).unwrap();
    let path = "data/t-0/00000000000000000000.log";
    let o = env.run(&["dump-segment", "--print-data-log", "--files", path], None);
    assert_eq!(o.status.code(), Some(0), "{}", crate::support::stderr(&o));
    let want = [
        format!("Dumping {path}"),
        "Log starting offset: 0".into(),
        format!("offset: 0 position: 0 NoTimestampType: -1 size: 28 magic: 0 compresscodec: none crc: {} isvalid: true", crc(0)),
        format!("| offset: 0 NoTimestampType: -1 keySize: -1 valueSize: 2 isValid: true crc: {} payload: v0", crc(0)),
        format!("offset: 1 position: 28 NoTimestampType: -1 size: 30 magic: 0 compresscodec: none crc: {} isvalid: true", crc(28)),
        format!("| offset: 1 NoTimestampType: -1 keySize: 2 valueSize: 2 isValid: true crc: {} key: k1 payload: v1", crc(28)),
        format!("offset: 2 position: 58 CreateTime: 1700000000000 size: 38 magic: 1 compresscodec: none crc: {} isvalid: true", crc(58)),
        format!("| offset: 2 CreateTime: 1700000000000 keySize: 2 valueSize: 2 isValid: true crc: {} key: k2 payload: v2", crc(58)),
        format!("offset: 3 position: 96 CreateTime: 1700000000001 size: 36 magic: 1 compresscodec: none crc: {} isvalid: true", crc(96)),
        format!("| offset: 3 CreateTime: 1700000000001 keySize: 2 valueSize: -1 isValid: true crc: {} key: k3", crc(96)),
        format!("offset: 6 position: 132 CreateTime: 1700000000006 size: {} magic: 1 compresscodec: gzip crc: {} isvalid: true", log.len() - 132, crc(132)),
        format!("| offset: 4 CreateTime: 1700000000004 keySize: 1 valueSize: 2 isValid: true crc: {} key: a payload: x4", inner_crc(0)),
        format!("| offset: 5 CreateTime: 1700000000005 keySize: -1 valueSize: 2 isValid: true crc: {} payload: x5", inner_crc(1)),
        format!("| offset: 6 CreateTime: 1700000000006 keySize: 1 valueSize: 2 isValid: true crc: {} key: c payload: x6", inner_crc(2)),
    ];
    assert_eq!(crate::support::stdout(&o), want.join("\n") + "\n");
}
