//! `dump-segment` prints kafka-dump-log's lines: on every segment a real
//! Kafka cluster of each release of the oracle matrix wrote
//! (fixtures/kafka-real/<version>/), klog's output is that release's
//! `DumpLogSegments --deep-iteration --print-data-log --files SEG` output
//! byte for byte (as `tests/kafka/run.sh` ran it, from the tree's root):
//! data topics without a decoder flag, and each internal topic with the
//! decoder flag run.sh gave it (`--offsets-decoder`,
//! `--transaction-log-decoder`, `--share-group-state-decoder`,
//! `--cluster-metadata-decoder`), klog told the release with
//! `--kafka-release`.

/// The decoder flag kafka-dump-log ran with on a partition folder's
/// segments (tests/kafka/run.sh), if any.
fn decoder_flag(folder: &str) -> Option<&'static str> {
    [
        ("__consumer_offsets-", "--offsets-decoder"),
        ("__transaction_state-", "--transaction-log-decoder"),
        ("__share_group_state-", "--share-group-state-decoder"),
        ("__cluster_metadata-", "--cluster-metadata-decoder"),
    ]
    .into_iter()
    .find(|(prefix, _)| folder.starts_with(prefix))
    .map(|(_, flag)| flag)
}

#[test]
fn print_data_log_is_kafka_dump_log_byte_for_byte() {
    crate::kafka_real::each_tree(|root| {
        let compared = compare_segments(root, Mode::AsRecorded);
        let data = compared.get(&None).copied().unwrap_or(0);
        assert!(data >= 100, "only {data} data-topic segments compared");
        let internal: usize = compared
            .iter()
            .filter(|(flag, _)| flag.is_some())
            .map(|(_, n)| n)
            .sum();
        assert!(
            internal >= 20,
            "only {internal} internal-topic segments compared: {compared:?}"
        );
        for flag in ["--offsets-decoder", "--transaction-log-decoder"] {
            assert!(
                compared.get(&Some(flag)).is_some_and(|n| *n > 0),
                "no segment compared with {flag}: {compared:?}"
            );
        }
    });
}

/// kafka-dump-log's `--deep-iteration` without `--print-data-log` prints
/// each record's metadata and not its key and payload (`printContents`
/// false); `--skip-record-metadata` prints only the key and payload
/// (`printRecordContents`' prefix `| ` before the first, in the Scala tool
/// of 3.9 to 4.2 not before a payload after no key) and an empty line for
/// a control record. Kafka's recorded lines with those parts left out are
/// what it prints then.
#[test]
fn deep_iteration_and_skip_record_metadata_are_kafka_dump_logs() {
    crate::kafka_real::each_tree(|root| {
        for mode in [Mode::DeepIterationOnly, Mode::SkipRecordMetadata] {
            let compared: usize = compare_segments(root, mode).values().sum();
            assert!(
                compared >= 120,
                "{mode:?}: only {compared} segments compared"
            );
        }
    });
}

/// What `compare_segments` runs klog with, and what of Kafka's recorded
/// output it expects.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// `--deep-iteration --print-data-log`, as run.sh ran kafka-dump-log.
    AsRecorded,
    /// `--deep-iteration` alone (data topics only: a decoder flag implies
    /// `--print-data-log`).
    DeepIterationOnly,
    /// `--deep-iteration --print-data-log --skip-record-metadata`.
    SkipRecordMetadata,
}

impl Mode {
    fn args(self) -> &'static [&'static str] {
        match self {
            Mode::AsRecorded => &["--deep-iteration", "--print-data-log"],
            Mode::DeepIterationOnly => &["--deep-iteration"],
            Mode::SkipRecordMetadata => &[
                "--deep-iteration",
                "--print-data-log",
                "--skip-record-metadata",
            ],
        }
    }

    /// Kafka's recorded output as it prints in this mode (`scala`: the
    /// release's tool is 3.9 to 4.2's).
    fn expect(self, kafka: &str, scala: bool) -> String {
        kafka
            .split_inclusive('\n')
            .map(|line| match line.strip_prefix("| ") {
                Some(_) if self != Mode::AsRecorded => {
                    let (metadata, contents) = split_record_line(line.trim_end_matches('\n'));
                    let kept = match self {
                        Mode::DeepIterationOnly
                            if contents.starts_with(" key: ")
                                || contents.starts_with(" payload: ") =>
                        {
                            metadata.to_string()
                        }
                        Mode::DeepIterationOnly => format!("{metadata}{contents}"),
                        _ if contents.starts_with(" key: ") => format!("|{contents}"),
                        _ if contents.starts_with(" payload: ") && !scala => format!("|{contents}"),
                        _ if contents.starts_with(" payload: ") => contents.to_string(),
                        // A control record, or neither key nor payload.
                        _ => String::new(),
                    };
                    kept + "\n"
                }
                _ => line.to_string(),
            })
            .collect()
    }
}

/// A v2 record's line as its metadata (up to its header keys) and what
/// follows (a control record's marker, or its key and payload).
fn split_record_line(line: &str) -> (&str, &str) {
    let keys = line.find(" headerKeys: [").expect("a v2 record line");
    let end = keys + line[keys..].find(']').unwrap() + 1;
    line.split_at(end)
}

/// Compare every segment Kafka dumped in one release's tree (in `mode`);
/// the number compared by decoder flag (`None`: data topics). klog runs
/// once per flag for a batch of segments (`--files` as kafka-dump-log
/// takes them), each file's output starting at its `Dumping` line.
fn compare_segments(
    root: &std::path::Path,
    mode: Mode,
) -> std::collections::BTreeMap<Option<&'static str>, usize> {
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("expected/manifest.json")).unwrap(),
    )
    .unwrap();
    let release = manifest["kafka"].as_str().unwrap().to_string();
    // kafka.tools.DumpLogSegments was Scala up to 4.2.
    let scala = ["3.", "4.0.", "4.1.", "4.2."]
        .iter()
        .any(|p| release.starts_with(p));
    let expected = root.join("expected/dump-log");
    let mut want: std::collections::BTreeMap<Option<&str>, Vec<(String, Vec<u8>)>> =
        Default::default();
    for broker in std::fs::read_dir(&expected).unwrap() {
        let broker = broker.unwrap().path();
        for folder in std::fs::read_dir(&broker).unwrap() {
            let folder = folder.unwrap().path();
            let name = folder.file_name().unwrap().to_string_lossy().into_owned();
            for txt in std::fs::read_dir(&folder).unwrap() {
                let txt = txt.unwrap().path();
                let stem = txt.file_name().unwrap().to_string_lossy().into_owned();
                // Only <base>.txt, a segment's dump: the other answers beside it (indexes,
                // snapshots, decoders, stderr) are named <file>.<what>.txt.
                let Some(base) = stem.strip_suffix(".txt") else {
                    continue;
                };
                if base.is_empty() || !base.bytes().all(|b| b.is_ascii_digit()) {
                    continue;
                }
                // expected/dump-log/<broker>/<folder>/<base>.txt for <broker>/<folder>/<base>.log
                let seg = txt.strip_prefix(&expected).unwrap().with_extension("log");
                want.entry(decoder_flag(&name)).or_default().push((
                    seg.to_str().unwrap().to_string(),
                    std::fs::read(&txt).unwrap(),
                ));
            }
        }
    }
    let mut compared = std::collections::BTreeMap::new();
    for (flag, mut segments) in want {
        if mode == Mode::DeepIterationOnly && flag.is_some() {
            continue;
        }
        segments.sort();
        for chunk in segments.chunks(200) {
            let files: Vec<&str> = chunk.iter().map(|(seg, _)| seg.as_str()).collect();
            let o = assert_cmd::Command::cargo_bin("klog")
                .unwrap()
                .current_dir(root)
                .arg("dump-segment")
                .args(mode.args())
                .args(["--kafka-release", &release, "--files", &files.join(",")])
                .args(flag)
                .output()
                .unwrap();
            assert_eq!(
                o.status.code(),
                Some(0),
                "{flag:?}: {}",
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
                    mode.expect(&String::from_utf8_lossy(kafka), scala),
                    "{seg} ({flag:?}, {mode:?}) of {}",
                    root.display()
                );
                *compared.entry(flag).or_insert(0) += 1;
            }
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

    // The Scala tool (3.9 to 4.2) ends a legacy record's metadata with a
    // stray brace: `s" isValid: ${r.isValid} crc: ${r.checksum}}"`
    // (kafka.tools.DumpLogSegments.dumpLog).
    let o = env.run(
        &[
            "dump-segment",
            "--print-data-log",
            "--kafka-release",
            "4.2",
            "--files",
            path,
        ],
        None,
    );
    let scala: Vec<String> = want
        .iter()
        .map(|line| match line.strip_prefix("| ") {
            Some(_) => {
                let at = line.find(" crc: ").unwrap() + " crc: ".len();
                let digits = line[at..].find(|c: char| !c.is_ascii_digit());
                let end = digits.map_or(line.len(), |d| at + d);
                format!("{}}}{}", &line[..end], &line[end..])
            }
            None => line.clone(),
        })
        .collect();
    assert_eq!(crate::support::stdout(&o), scala.join("\n") + "\n");
}

/// A legacy entry whose value length runs past its end (a v2 batch whose
/// magic byte became 1 reads so): Kafka's `LegacyRecord` reads its header
/// and sizes in place and slices the value only when asked
/// (`Utils.sizeDelimited` throws "newLimit > capacity"). So
/// kafka-dump-log prints the entry and its record's metadata with the
/// stored sizes; the offsets decoder calls `record.value()` inside its
/// `try` and prints `Error at offset N, skipping. …`, while the default
/// decoder lets the exception out and the tool stops after `crc: N`.
/// Kafka 4.4.0's tool printed these lines (up to klog's own words after
/// "skipping. ") for these bytes. klog says on stderr where the value
/// fails and goes on to the next entry.
#[test]
fn a_legacy_value_past_its_entry_fails_only_where_kafka_reads_it() {
    let env = crate::support::TestEnv::new();
    let key = "offset_commit_key('g', 't', 0)";
    let log = crate::support::encoded(&format!(
        "out = legacy_message(0, b'abc', key={key}, timestamp=1000, value_size=1000) \
         + legacy_message(1, None, key={key}, timestamp=1001)"
    ));
    let crc = |at: usize| u32::from_be_bytes(log[at + 12..at + 16].try_into().unwrap());
    // Key 12 bytes, value 3: entries of 12 + 22 + 12 + 3 = 49 and 12 + 22 + 12 = 46 bytes.
    assert_eq!(log.len(), 49 + 46);
    for (dir, flag) in [
        ("__consumer_offsets-0", Some("--offsets-decoder")),
        ("t-0", None),
    ] {
        std::fs::create_dir_all(env.path(&format!("data/{dir}"))).unwrap();
        let path = format!("data/{dir}/00000000000000000000.log");
        std::fs::write(env.path(&path), &log).unwrap();
        let mut args = vec!["dump-segment", "--print-data-log", "--files", &path];
        args.extend(flag);
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(1), "{}", crate::support::stderr(&o));
        let out = crate::support::stdout(&o);
        let lines: Vec<&str> = out.lines().collect();
        assert_eq!(lines[2], format!("offset: 0 position: 0 CreateTime: 1000 size: 49 magic: 1 compresscodec: none crc: {} isvalid: true", crc(0)));
        let head = format!(
            "| offset: 0 CreateTime: 1000 keySize: 12 valueSize: 1000 isValid: true crc: {}",
            crc(0)
        );
        match flag {
            Some(_) => {
                let (line, words) = lines[3].split_once(" skipping. ").unwrap();
                assert_eq!(line, format!("{head} key: Error at offset 0,"));
                assert!(words.contains("1000") && words.contains('3'), "{words}");
                assert_eq!(lines[5], format!("| offset: 1 CreateTime: 1001 keySize: 12 valueSize: -1 isValid: true crc: {} key: {{\"type\":\"1\",\"data\":{{\"group\":\"g\",\"topic\":\"t\",\"partition\":0}}}} payload: <DELETE>", crc(49)));
            }
            None => {
                assert_eq!(lines[3], head);
                assert!(
                    lines[5].starts_with("| offset: 1 CreateTime: 1001 keySize: 12 valueSize: -1")
                );
            }
        }
        assert_eq!(lines[4], format!("offset: 1 position: 49 CreateTime: 1001 size: 46 magic: 1 compresscodec: none crc: {} isvalid: true", crc(49)));
        assert_eq!(lines.len(), 6, "{out}");
        // Offset 0 was iterated, as in Kafka: no gap before offset 1.
        let err = crate::support::stderr(&o);
        assert!(!err.contains("Non-consecutive"), "{err}");
        assert!(err.contains("byte 46"), "{err}");
    }
}
