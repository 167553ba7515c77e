use std::io::Read;

use serde_json::Value;

use crate::support::{check_golden, document, dump_batches, stderr, stdout, TestEnv};

/// Run `klog stats --format json ARGS`, asserting the exit code.
fn stats_json(env: &TestEnv, args: &[&str], code: i32) -> Value {
    let mut all = vec!["stats", "--format", "json"];
    all.extend_from_slice(args);
    let o = env.run(&all, None);
    assert_eq!(o.status.code(), Some(code), "klog {all:?}: {}", stderr(&o));
    document(&o, "stats")
}

/// The entry of `codec` in a `codecs` array.
fn codec<'a>(codecs: &'a Value, codec: &str) -> &'a Value {
    codecs
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["codec"] == codec)
        .unwrap_or_else(|| panic!("no codec {codec} in {codecs}"))
}

fn partition<'a>(v: &'a Value, name: &str) -> &'a Value {
    v["partitions"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["name"] == name)
        .unwrap_or_else(|| panic!("no partition {name} in {v}"))
}

/// The batches `klog dump-segment --format json PATH` prints.
fn dump(env: &TestEnv, path: &str) -> Vec<Value> {
    let o = env.run(&["dump-segment", "--format", "json", path], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    dump_batches(&o)
}

fn lower_median(mut v: Vec<u64>) -> u64 {
    v.sort_unstable();
    v[(v.len() - 1) / 2]
}

#[test]
fn golden_text_and_json() {
    let env = TestEnv::new();
    check_golden(&env, &["stats", "fixtures/data"], 0, "stats/data");
    check_golden(
        &env,
        &["stats", "--format", "json", "fixtures/data"],
        0,
        "stats/data-json",
    );
    check_golden(&env, &["stats", "fixtures/groups"], 0, "stats/groups");
    check_golden(
        &env,
        &["stats", "--format", "json", "fixtures/groups"],
        0,
        "stats/groups-json",
    );
}

#[test]
fn figures_match_dump_segment() {
    let env = TestEnv::new();
    let v = stats_json(&env, &["fixtures/data"], 0);
    for (name, dir) in [
        ("orders-0", "fixtures/data/orders-0"),
        ("payments.eu-west-1", "fixtures/data/payments.eu-west-1"),
    ] {
        let p = partition(&v, name);
        let batches = dump(&env, dir);
        let counts: Vec<u64> = batches
            .iter()
            .map(|b| b["record_count"].as_u64().unwrap())
            .collect();
        let sizes: Vec<u64> = batches
            .iter()
            .map(|b| b["size"].as_u64().unwrap())
            .collect();
        assert_eq!(p["batches"], batches.len() as u64, "{name}");
        assert_eq!(p["records"], counts.iter().sum::<u64>(), "{name}");
        assert_eq!(p["bytes"], sizes.iter().sum::<u64>(), "{name}");
        let rpb = &p["records_per_batch"];
        assert_eq!(rpb["min"], *counts.iter().min().unwrap(), "{name}");
        assert_eq!(rpb["max"], *counts.iter().max().unwrap(), "{name}");
        assert_eq!(rpb["median"], lower_median(counts.clone()), "{name}");
        let bb = &p["batch_bytes"];
        assert_eq!(bb["min"], *sizes.iter().min().unwrap(), "{name}");
        assert_eq!(bb["max"], *sizes.iter().max().unwrap(), "{name}");
        assert_eq!(bb["median"], lower_median(sizes.clone()), "{name}");
        let record_ts = batches
            .iter()
            .flat_map(|b| b["records"].as_array().unwrap())
            .map(|r| r["timestamp"].as_i64().unwrap());
        assert_eq!(p["timestamps"]["min"], record_ts.min().unwrap(), "{name}");
        let max_ts = batches.iter().map(|b| b["max_timestamp"].as_i64().unwrap());
        assert_eq!(p["timestamps"]["max"], max_ts.max().unwrap(), "{name}");
        // Per codec: batches, and stored bytes = size - 61 (the header).
        for name_of_codec in ["none", "gzip", "snappy", "lz4", "zstd"] {
            let of_codec: Vec<&Value> = batches
                .iter()
                .filter(|b| b["compression"] == name_of_codec)
                .collect();
            let c = codec(&p["codecs"], name_of_codec);
            assert_eq!(
                c["batches"],
                of_codec.len() as u64,
                "{name} {name_of_codec}"
            );
            let stored: u64 = of_codec
                .iter()
                .map(|b| b["size"].as_u64().unwrap() - 61)
                .sum();
            assert_eq!(c["stored_bytes"], stored, "{name} {name_of_codec}");
        }
    }
    // orders-0 has 128 records in 27 batches, one gzip and one zstd among them.
    let orders = partition(&v, "orders-0");
    assert_eq!(
        (orders["records"].as_u64(), orders["batches"].as_u64()),
        (Some(128), Some(27))
    );
    let gzip = codec(&orders["codecs"], "gzip");
    assert_eq!(gzip["batches"], 1);
    assert!(gzip["ratio"].as_f64().unwrap() > 0.0, "{gzip}");
    assert_eq!(codec(&orders["codecs"], "zstd")["batches"], 1);
    assert!(codec(&orders["codecs"], "zstd")["ratio"].as_f64().unwrap() > 0.0);
    assert_eq!(codec(&orders["codecs"], "none")["ratio"], 1.0);
    assert!(codec(&orders["codecs"], "snappy")["ratio"].is_null());
    // The gzip section really decompresses to what stats reports.
    let b = dump(&env, "fixtures/data/orders-0")
        .into_iter()
        .find(|b| b["compression"] == "gzip")
        .unwrap();
    let file = std::fs::read(env.path(b["file"].as_str().unwrap())).unwrap();
    let pos = b["position"].as_u64().unwrap() as usize;
    let section = &file[pos + 61..pos + b["size"].as_u64().unwrap() as usize];
    let mut plain = Vec::new();
    flate2::read::MultiGzDecoder::new(section)
        .read_to_end(&mut plain)
        .unwrap();
    assert_eq!(gzip["uncompressed_bytes"], plain.len() as u64);
    assert_eq!(gzip["stored_bytes"], section.len() as u64);
}

/// Every additive figure of the total is the sum over the partitions.
#[test]
fn totals_are_the_sum_of_the_partitions() {
    let env = TestEnv::new();
    for dir in ["fixtures/data", "fixtures/groups"] {
        let v = stats_json(&env, &[dir], 0);
        let parts = v["partitions"].as_array().unwrap();
        let total = &v["total"];
        assert_eq!(total["partitions"], parts.len() as u64);
        let mut paths: Vec<Vec<&str>> = [
            "segments",
            "batches",
            "records",
            "bytes",
            "corrupt_batches",
            "undecodable_batches",
            "torn_tails",
            "corrupt_tails",
        ]
        .iter()
        .map(|k| vec![*k])
        .collect();
        for k in ["committed", "aborted", "open", "control_batches"] {
            paths.push(vec!["transactions", k]);
        }
        paths.push(vec!["producers", "plain_batches"]);
        for k in ["entries", "records", "bytes"] {
            paths.push(vec!["legacy", k]);
        }
        for name in ["none", "gzip", "snappy", "lz4", "zstd"] {
            for k in ["batches", "stored_bytes", "uncompressed_bytes"] {
                paths.push(vec!["codecs", name, k]);
            }
        }
        // `codecs` is an array of objects named by their `codec`.
        let get = |v: &Value, path: &[&str]| -> u64 {
            path.iter()
                .fold(v, |v, k| if v.is_array() { codec(v, k) } else { &v[*k] })
                .as_u64()
                .unwrap()
        };
        for path in &paths {
            let sum: u64 = parts.iter().map(|p| get(p, path)).sum();
            assert_eq!(get(total, path), sum, "{dir}: {path:?}");
        }
        let min = parts
            .iter()
            .filter_map(|p| p["timestamps"]["min"].as_i64())
            .min();
        let max = parts
            .iter()
            .filter_map(|p| p["timestamps"]["max"].as_i64())
            .max();
        assert_eq!(total["timestamps"]["min"].as_i64(), min, "{dir}");
        assert_eq!(total["timestamps"]["max"].as_i64(), max, "{dir}");
    }
}

#[test]
fn transactions_come_from_the_producer_state() {
    let env = TestEnv::new();
    let v = stats_json(&env, &["fixtures/groups"], 0);
    let txn = |name: &str| {
        let t = &partition(&v, name)["transactions"];
        (
            t["committed"].as_u64(),
            t["aborted"].as_u64(),
            t["open"].as_u64(),
        )
    };
    assert_eq!(txn("ledger-0"), (Some(2), Some(0), Some(0)));
    assert_eq!(txn("ledger-1"), (Some(0), Some(0), Some(1)));
    assert_eq!(txn("__offsets-0"), (Some(1), Some(1), Some(1)));
    assert_eq!(txn("orders-0"), (Some(0), Some(0), Some(0)));
    let off = partition(&v, "__offsets-0");
    // Producers 7000, 7001 and 7002 are transactional; the rest are plain commits.
    assert_eq!(off["producers"]["transactional"], 3);
    assert_eq!(off["producers"]["idempotent"], 0);
    assert_eq!(off["producers"]["plain_batches"], 9);
    assert_eq!(off["transactions"]["control_batches"], 2);
    let t = &v["total"];
    assert_eq!(t["producers"]["transactional"], 5, "7000-7002, 9000, 9001");
    assert_eq!(t["transactions"]["control_batches"], 4);
}

#[test]
fn corrupt_batch_is_counted_and_skipped() {
    let env = TestEnv::new();
    let o = env.run(
        &["stats", "--format", "json", "fixtures/corrupt/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert!(
        stderr(&o).contains("orders-0: skipped 1 corrupt batch"),
        "{}",
        stderr(&o)
    );
    let v = document(&o, "stats");
    let p = partition(&v, "orders-0");
    assert_eq!(p["corrupt_batches"], 1);
    assert_eq!(v["total"]["corrupt_batches"], 1);
    // The clean original has 27 batches and 128 records; the batch at 950 holds 5.
    assert_eq!(
        (p["batches"].as_u64(), p["records"].as_u64()),
        (Some(26), Some(123))
    );
    assert_eq!(p["torn_tails"], 0);
    // Text output exits 1 too.
    let o = env.run(&["stats", "fixtures/corrupt/orders-0"], None);
    assert_eq!(o.status.code(), Some(1));
}

#[test]
fn torn_tail_exits_1() {
    let env = TestEnv::new();
    let v = stats_json(&env, &["fixtures/truncated/orders-0"], 1);
    let p = partition(&v, "orders-0");
    assert_eq!(p["torn_tails"], 1);
    assert_eq!(p["corrupt_batches"], 0);
    // Everything before the cut batch (offsets 125..127) is counted.
    assert_eq!(p["records"], 125);
}

#[test]
fn unreadable_input_exits_2() {
    let env = TestEnv::new();
    let o = env.run(&["stats", "fixtures/no-such-dir"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("no-such-dir"), "{}", stderr(&o));
    assert!(stdout(&o).is_empty());
    let o = env.run(
        &["stats", "fixtures/data/orders-0/00000000000000000000.index"],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
}

#[test]
fn a_segment_file_and_its_partition_agree() {
    let env = TestEnv::new();
    let seg = "fixtures/data/payments.eu-west-1/00000000000000000000.log";
    let by_file = stats_json(&env, &[seg], 0);
    let by_dir = stats_json(&env, &["fixtures/data/payments.eu-west-1"], 0);
    let f = partition(&by_file, seg);
    assert_eq!(
        (f["topic"].as_str(), f["partition"].as_i64()),
        (Some("payments.eu-west"), Some(1))
    );
    assert_eq!(by_file["total"], by_dir["total"]);
}

#[test]
fn output_is_deterministic() {
    let env = TestEnv::new();
    for format in ["text", "json"] {
        let args = [
            "stats",
            "--format",
            format,
            "fixtures/groups",
            "fixtures/data",
        ];
        let a = env.run(&args, None);
        let b = env.run(&args, None);
        assert_eq!(a.status.code(), Some(0));
        assert!(!a.stdout.is_empty());
        assert_eq!(a.stdout, b.stdout, "{format}");
    }
}

/// Idempotent and transactional producers, lz4 and snappy, and a producer
/// id seen in two partitions counted once in the total.
#[test]
fn producers_and_codecs_of_a_fresh_log() {
    let env = TestEnv::new();
    let lines: String = (0..20)
        .map(|i| format!("the same order line again {}\n", i % 2))
        .collect();
    let produce = |extra: &[&str], stdin: Option<&str>| {
        let mut args = vec![
            "produce",
            "fresh",
            "--timestamp-ms",
            "1700000000000",
            "--batch-size",
            "20",
        ];
        args.extend_from_slice(extra);
        let o = env.run(&args, stdin);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
    };
    for p in ["0", "1"] {
        produce(
            &[
                "--topic",
                "idem",
                "--partition",
                p,
                "--producer-id",
                "42",
                "--compression",
                "lz4",
            ],
            Some(&lines),
        );
    }
    produce(
        &[
            "--topic",
            "tx",
            "--producer-id",
            "43",
            "--transactional",
            "--compression",
            "snappy",
        ],
        Some(&lines),
    );
    produce(
        &[
            "--topic",
            "tx",
            "--producer-id",
            "43",
            "--control",
            "commit",
        ],
        None,
    );
    let v = stats_json(&env, &["fresh"], 0);
    for name in ["idem-0", "idem-1"] {
        let p = partition(&v, name);
        assert_eq!(p["producers"]["idempotent"], 1, "{name}");
        assert_eq!(p["producers"]["transactional"], 0, "{name}");
        assert_eq!(p["producers"]["plain_batches"], 0, "{name}");
        let lz4 = codec(&p["codecs"], "lz4");
        assert_eq!(lz4["batches"], 1, "{name}");
        assert!(
            lz4["ratio"].as_f64().unwrap() > 1.0,
            "repetitive lines compress: {lz4}"
        );
    }
    let tx = partition(&v, "tx-0");
    assert_eq!(tx["producers"]["transactional"], 1);
    assert_eq!(tx["producers"]["idempotent"], 0);
    assert_eq!(tx["transactions"]["committed"], 1);
    assert_eq!(tx["transactions"]["control_batches"], 1);
    assert_eq!(codec(&tx["codecs"], "snappy")["batches"], 1);
    assert!(codec(&tx["codecs"], "snappy")["ratio"].as_f64().unwrap() > 1.0);
    assert_eq!(tx["records"], 21, "20 records and the COMMIT marker");
    let t = &v["total"]["producers"];
    assert_eq!(
        (t["idempotent"].as_u64(), t["transactional"].as_u64()),
        (Some(1), Some(1)),
        "producer 42 wrote to two partitions: one producer"
    );
}

/// One legacy message (magic 0 or 1, null key) as it is framed on disk.
fn legacy_entry(offset: i64, magic: i8, attributes: i8, timestamp: i64, value: &[u8]) -> Vec<u8> {
    let mut body = vec![magic as u8, attributes as u8];
    if magic == 1 {
        body.extend_from_slice(&timestamp.to_be_bytes());
    }
    body.extend_from_slice(&(-1i32).to_be_bytes());
    body.extend_from_slice(&(value.len() as i32).to_be_bytes());
    body.extend_from_slice(value);
    let crc = kaen_log::format::crc::crc32_ieee(&body);
    let mut e = offset.to_be_bytes().to_vec();
    e.extend_from_slice(&((body.len() + 4) as i32).to_be_bytes());
    e.extend_from_slice(&crc.to_be_bytes());
    e.extend_from_slice(&body);
    e
}

#[test]
fn legacy_entries_are_counted_apart() {
    use std::io::Write;
    let env = TestEnv::new();
    let dir = env.path("old/legacy-0");
    std::fs::create_dir_all(&dir).unwrap();
    let ts = 1_600_000_000_000;
    // A plain v0 message, a gzip v1 wrapper of three messages (relative
    // offsets 0..=2, the wrapper carries the last absolute offset 3), and a
    // v1 message with a flipped timestamp byte.
    let mut bytes = legacy_entry(0, 0, 0, -1, b"v0 message");
    let inner: Vec<u8> = (0..3)
        .flat_map(|i| legacy_entry(i, 1, 0, ts, b"inner"))
        .collect();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    gz.write_all(&inner).unwrap();
    bytes.extend(legacy_entry(3, 1, 1, ts, &gz.finish().unwrap()));
    let good_len = bytes.len();
    bytes.extend(legacy_entry(4, 1, 0, ts, b"flipped"));
    bytes[good_len + 20] ^= 0xff;
    std::fs::write(dir.join("00000000000000000000.log"), &bytes).unwrap();
    let v = stats_json(&env, &["old"], 1);
    let p = partition(&v, "legacy-0");
    assert_eq!(p["legacy"]["entries"], 2);
    assert_eq!(p["legacy"]["records"], 4);
    assert_eq!(p["legacy"]["bytes"], good_len as u64);
    assert_eq!(p["corrupt_batches"], 1);
    assert_eq!(
        (p["batches"].as_u64(), p["records"].as_u64()),
        (Some(0), Some(0))
    );
    assert!(p["timestamps"]["min"].is_null());
}

/// A batch whose CRC matches but whose gzip stream is garbage.
#[test]
fn undecodable_batch_is_counted_and_skipped() {
    use kaen_log::format::{encode_batch, BatchSpec, Compression, NewRecord};
    let env = TestEnv::new();
    let dir = env.path("broken/orders-0");
    std::fs::create_dir_all(&dir).unwrap();
    let rec = |v: &str| NewRecord {
        value: Some(v.as_bytes().to_vec()),
        timestamp: 1_700_000_000_000,
        ..NewRecord::default()
    };
    let good = encode_batch(&BatchSpec::default(), &[rec("a"), rec("b")]).unwrap();
    let spec = BatchSpec {
        base_offset: 2,
        compression: Compression::Gzip,
        ..BatchSpec::default()
    };
    let mut bad = encode_batch(&spec, &[rec("c"), rec("d")]).unwrap();
    // Past the 10-byte gzip header, every byte is 0xff (an invalid deflate
    // block type); then the CRC is made to match again.
    for b in &mut bad[61 + 10..] {
        *b = 0xff;
    }
    let crc = kaen_log::format::batch::batch_crc(&bad);
    bad[17..21].copy_from_slice(&crc.to_be_bytes());
    std::fs::write(dir.join("00000000000000000000.log"), [good, bad].concat()).unwrap();
    let v = stats_json(&env, &["broken/orders-0"], 1);
    let p = partition(&v, "orders-0");
    assert_eq!(p["undecodable_batches"], 1);
    assert_eq!(p["corrupt_batches"], 0);
    assert_eq!(
        (p["batches"].as_u64(), p["records"].as_u64()),
        (Some(1), Some(2))
    );
    assert_eq!(codec(&p["codecs"], "gzip")["batches"], 0);
}
