use crate::support::{
    check_golden, csv_objects, document, dump_batches, jsonl, stderr, stdout, TestEnv,
};

#[test]
fn clean_data_directory() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["verify-crc", "fixtures/data"],
        0,
        "verify-crc/clean",
    );
}

#[test]
fn flipped_byte_is_found_with_position() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["verify-crc", "fixtures/corrupt/orders-0"],
        1,
        "verify-crc/corrupt",
    );
    check_golden(
        &env,
        &[
            "verify-crc",
            "--format",
            "json",
            "fixtures/corrupt/orders-0",
        ],
        1,
        "verify-crc/corrupt-json",
    );
}

#[test]
fn torn_tail_is_found() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["verify-crc", "fixtures/truncated/orders-0"],
        1,
        "verify-crc/truncated",
    );
}

#[test]
fn json_report_shape() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "verify-crc",
            "--format",
            "json",
            "fixtures/truncated/orders-0",
        ],
        None,
    );
    let v = document(&o, "verify-crc");
    assert_eq!(v["ok"], false);
    assert_eq!(v["checked"]["files"], 2);
    let p = &v["findings"][0];
    assert_eq!(p["kind"], "torn_tail");
    assert_eq!(p["severity"], "error");
    assert_eq!(
        p["file"],
        "fixtures/truncated/orders-0/00000000000000000090.log"
    );
    assert!(p["position"].as_u64().unwrap() > 0);
}

#[test]
fn jsonl_streams_each_finding_then_the_summary() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "verify-crc",
            "--format",
            "jsonl",
            "fixtures/truncated/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(stderr(&o), "", "no summary on stderr: it is the last line");
    let lines = jsonl(&o, "verify-crc");
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["finding", "summary"]);
    assert_eq!(lines[0]["kind"], "torn_tail");
    assert_eq!(lines[0]["position"], 2146);
    let summary = &lines[1];
    assert_eq!(summary["ok"], false);
    assert_eq!(summary["checked"]["files"], 2);
    assert_eq!(summary["finding_counts"]["kinds"]["torn_tail"], 1);
}

#[test]
fn repair_in_json_and_jsonl_names_the_plan_and_what_was_written() {
    let env = TestEnv::new();
    let cut = "fixtures/truncated/orders-0/00000000000000000090.log.cut-2146";
    // The document: the check before, then the repair and the check after.
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--dry-run",
            "--format",
            "json",
            "fixtures/truncated/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let v = document(&o, "verify-crc");
    assert_eq!(v["repair"]["dry_run"], true);
    assert_eq!(v["repair"]["actions"][0]["action"], "truncate");
    assert_eq!(v["repair"]["actions"][0]["sidecar"], cut);
    assert_eq!(v["repair"]["actions"][0]["bytes"], 20);
    assert!(
        v["repair"]["after"].is_null(),
        "a dry run checks nothing after"
    );
    // jsonl: a `repair` line follows the summary, with the same fields.
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--format",
            "jsonl",
            "fixtures/truncated/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let lines = jsonl(&o, "verify-crc");
    let types: Vec<&str> = lines.iter().map(|l| l["type"].as_str().unwrap()).collect();
    assert_eq!(types, ["finding", "summary", "repair"]);
    let repair = &lines[2];
    assert_eq!(repair["dry_run"], false);
    // The cut, and the time index the rebuild after it replaced (entries
    // of earlier clean closes, which a rebuild from the log does not repeat).
    assert_eq!(
        repair["written"],
        serde_json::json!([
            cut,
            "fixtures/truncated/orders-0/00000000000000000090.timeindex.old"
        ])
    );
    assert_eq!(repair["after"]["ok"], true);
    assert_eq!(repair["after"]["checked"]["bytes"], 7848);
    assert!(env.path(cut).is_file());
}

#[test]
fn unreadable_input_exits_2() {
    let env = TestEnv::new();
    std::fs::create_dir(env.path("empty")).unwrap();
    for (args, needle) in [
        (
            vec!["verify-crc", "nope"],
            "nope: stat: No such file or directory",
        ),
        (
            vec!["verify-crc", "empty"],
            "empty: holds no partition folders",
        ),
        (vec!["verify-crc"], "required"),
    ] {
        let o = env.run(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        assert!(stderr(&o).contains(needle), "{args:?}: {}", stderr(&o));
    }
}

#[test]
fn random_bytes_are_problems_not_panics() {
    let env = TestEnv::new();
    // Deterministic hostile bytes of many sizes.
    for len in [1usize, 17, 18, 61, 200, 4096, 65_536] {
        let bytes = crate::support::junk(len, 0x9E37_79B9_7F4A_7C15 ^ len as u64);
        std::fs::write(env.path("random.bin"), &bytes).unwrap();
        let o = env.run(&["verify-crc", "random.bin"], None);
        assert_eq!(o.status.code(), Some(1), "len {len}: {}", stderr(&o));
        assert!(
            stdout(&o).contains("random.bin:0 "),
            "len {len}: {}",
            stdout(&o)
        );
    }
}

#[test]
fn repair_moves_a_torn_tail_aside_and_leaves_a_clean_log() {
    let env = TestEnv::new();
    let log = env.path("fixtures/truncated/orders-0/00000000000000000090.log");
    let before = std::fs::read(&log).unwrap();
    // --dry-run prints the plan and touches nothing.
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--dry-run",
            "fixtures/truncated/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("repair: would move 20 bytes of fixtures/truncated/orders-0/00000000000000000090.log from position 2146 to fixtures/truncated/orders-0/00000000000000000090.log.cut-2146"), "{}", stdout(&o));
    assert_eq!(std::fs::read(&log).unwrap(), before);
    check_golden(
        &env,
        &["verify-crc", "--repair", "fixtures/truncated/orders-0"],
        0,
        "verify-crc/repair-truncated",
    );
    let cut =
        std::fs::read(env.path("fixtures/truncated/orders-0/00000000000000000090.log.cut-2146"))
            .unwrap();
    assert_eq!(
        [std::fs::read(&log).unwrap(), cut].concat(),
        before,
        "nothing lost"
    );
    assert_eq!(
        env.run(&["verify-crc", "fixtures/truncated/orders-0"], None)
            .status
            .code(),
        Some(0)
    );
}

#[test]
fn mid_log_damage_needs_force_truncate() {
    let env = TestEnv::new();
    let o = env.run(
        &["verify-crc", "--repair", "fixtures/corrupt/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o)
            .contains("repair: left alone fixtures/corrupt/orders-0/00000000000000000000.log:950"),
        "{}",
        stdout(&o)
    );
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--force-truncate",
            "fixtures/corrupt/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains("repair: wrote fixtures/corrupt/orders-0/00000000000000000000.log.cut-950"),
        "{text}"
    );
    assert!(
        text.contains("repair: wrote fixtures/corrupt/orders-0/00000000000000000090.log.cut-0"),
        "{text}"
    );
    assert!(text.ends_with("after repair:\n"), "{text}");
    // The summaries are on stderr, the one after the repair last.
    assert!(
        stderr(&o).ends_with("ok: checked 1 file, 3 batches, 15 records, 950 bytes; no findings\n"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn repair_refuses_while_the_lock_is_held() {
    let env = TestEnv::new();
    let log = env.path("fixtures/truncated/orders-0/00000000000000000090.log");
    let before = std::fs::read(&log).unwrap();
    std::fs::write(env.path("fixtures/truncated/.lock"), b"").unwrap();
    let holder = crate::support::LockHolder::new(&env.path("fixtures/truncated"));
    let o = env.run(
        &["verify-crc", "--repair", "fixtures/truncated/orders-0"],
        None,
    );
    drop(holder);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("locked by another process"),
        "{}",
        stderr(&o)
    );
    assert_eq!(std::fs::read(&log).unwrap(), before);
}

#[test]
fn recovery_preview_says_what_a_broker_would_do() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "verify-crc",
            "--recovery-preview",
            "fixtures/corrupt/orders-0",
        ],
        1,
        "verify-crc/recovery-preview",
    );
    std::fs::write(env.path("fixtures/corrupt/.kafka_cleanshutdown"), b"").unwrap();
    let o = env.run(
        &[
            "verify-crc",
            "--recovery-preview",
            "fixtures/corrupt/orders-0",
        ],
        None,
    );
    assert!(
        stdout(&o).contains("a broker would skip recovery and trust these files"),
        "{}",
        stdout(&o)
    );
    // Even after a clean shutdown, LogLoader recovers a segment whose offset
    // index is missing: its indexes are rebuilt and it is cut at its damage.
    std::fs::remove_file(env.path("fixtures/corrupt/orders-0/00000000000000000000.index")).unwrap();
    let o = env.run(
        &[
            "verify-crc",
            "--recovery-preview",
            "fixtures/corrupt/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains(
            "orders-0: .kafka_cleanshutdown is present, but fixtures/corrupt/orders-0/00000000000000000000.log \
             has no usable offset index: a broker recovers that segment and rebuilds its indexes\n\
             orders-0: and cuts fixtures/corrupt/orders-0/00000000000000000000.log at position 950"
        ),
        "{text}"
    );
    assert!(!text.contains("00000000000000000090"), "{text}");
}

#[test]
fn past_framing_damage_the_walk_resumes() {
    let env = TestEnv::new();
    // Overwrite the size field of the batch at 317 in segment 90 with zeros and garbage.
    let log = env.path("fixtures/data/orders-0/00000000000000000090.log");
    let mut bytes = std::fs::read(&log).unwrap();
    bytes[317 + 8..317 + 12].copy_from_slice(&[0, 0, 0, 3]);
    std::fs::write(&log, &bytes).unwrap();
    let o = env.run(
        &["verify-crc", "--no-index-checks", "fixtures/data/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains("00000000000000000090.log:317 error size_too_small"),
        "{text}"
    );
    assert!(
        text.contains(
            "317 bytes cannot be framed; valid batches resume at position 634 (offset 100)"
        ),
        "{text}"
    );
    // Everything after the damaged batch was still read (the summary, on stderr).
    assert!(
        stderr(&o).contains("batches, 123 records"),
        "{}",
        stderr(&o)
    );
}

#[test]
fn index_checks_and_deep_producer_checks() {
    let env = TestEnv::new();
    let index = env.path("fixtures/data/orders-0/00000000000000000000.index");
    let mut bytes = std::fs::read(&index).unwrap();
    bytes.extend_from_slice(&[0; 16]);
    std::fs::write(&index, &bytes).unwrap();
    // Zero slots in a segment that is not the last: a clean roll would have
    // trimmed them, so the broker rebuilds the index on load (a warning,
    // which fails the run only with --fail-on warning).
    let o = env.run(
        &["verify-crc", "--index-only", "fixtures/data/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(stdout(&o).contains("00000000000000000000.index:8 warning index_trailing_zeros 2 zero entries at the end: preallocated space"), "{}", stdout(&o));
    assert!(
        stderr(&o).ends_with("; 1 warning: 1 index_trailing_zeros\n"),
        "{}",
        stderr(&o)
    );
    let o = env.run(
        &[
            "verify-crc",
            "--index-only",
            "--fail-on",
            "warning",
            "fixtures/data/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    // Repair rebuilds it; the old file is kept.
    let o = env.run(&["verify-crc", "--repair", "fixtures/data/orders-0"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(env
        .path("fixtures/data/orders-0/00000000000000000000.index.old")
        .exists());
    // --deep reports what klog transactions reports: producer-state
    // anomalies are warnings (a broker does not re-validate sequences when it
    // loads a log), so they fail the run only with --fail-on warning.
    let o = env.run(&["verify-crc", "--deep", "fixtures/txn"], None);
    assert_eq!(o.status.code(), Some(0));
    let o = env.run(
        &[
            "verify-crc",
            "--deep",
            "--fail-on",
            "warning",
            "fixtures/txn",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    for kind in [
        "out_of_order_sequence",
        "duplicate_sequence",
        "epoch_regression",
    ] {
        assert!(text.contains(kind), "{kind}: {text}");
    }
    assert!(env.run(&["verify-crc", "fixtures/txn"], None).status.code() == Some(0));
    // A lone segment file gets the producer-state pass too.
    let o = env.run(
        &[
            "verify-crc",
            "--deep",
            "--fail-on",
            "warning",
            "fixtures/txn/payments-0/00000000000000000000.log",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("out_of_order_sequence"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn jobs_do_not_change_the_output_and_special_folders_are_listed() {
    let env = TestEnv::new();
    crate::support::copy_dir(
        &env.path("fixtures/data/orders-0"),
        &env.path("fixtures/data/orders-0.0123456789abcdef0123456789abcdef-delete"),
    );
    let one = env.run(
        &[
            "verify-crc",
            "--jobs",
            "1",
            "fixtures/data",
            "fixtures/groups",
            "fixtures/kafka",
        ],
        None,
    );
    let two = env.run(
        &[
            "verify-crc",
            "--jobs",
            "2",
            "fixtures/data",
            "fixtures/groups",
            "fixtures/kafka",
        ],
        None,
    );
    assert_eq!(stdout(&one), stdout(&two));
    assert!(stdout(&one).starts_with("fixtures/data/orders-0.0123456789abcdef0123456789abcdef-delete: skipped, a partition folder marked delete\n"), "{}", stdout(&one));
}

#[test]
fn a_directory_of_only_log_files_verifies_clean_with_warnings() {
    // klog's own seed layout and `__offsets` keep only .log files; a broker
    // rebuilds missing indexes on load (LogLoader), so each is a warning
    // and the run exits 0.
    let env = TestEnv::new();
    let mut logs = 0;
    for part in std::fs::read_dir(env.path("fixtures/data")).unwrap() {
        let part = part.unwrap().path();
        if !part.is_dir() {
            continue;
        }
        for f in std::fs::read_dir(part).unwrap() {
            let f = f.unwrap().path();
            match f.extension().and_then(|e| e.to_str()) {
                Some("index" | "timeindex") => std::fs::remove_file(&f).unwrap(),
                Some("log") => logs += 1,
                _ => {}
            }
        }
    }
    let o = env.run(&["verify-crc", "fixtures/data"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let missing = 2 * logs;
    assert!(
        stderr(&o).ends_with(&format!("; {missing} warnings: {missing} index_missing\n")),
        "{}",
        stderr(&o)
    );
    let o = env.run(
        &["verify-crc", "--fail-on", "warning", "fixtures/data"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let o = env.run(&["verify-crc", "--format", "json", "fixtures/data"], None);
    let v = document(&o, "verify-crc");
    assert_eq!(v["ok"], true);
    let findings = v["findings"].as_array().unwrap();
    assert_eq!(findings.len(), missing);
    assert!(findings
        .iter()
        .all(|f| f["severity"] == "warning" && f["kind"] == "index_missing"));
}

#[test]
fn a_length_past_the_end_is_a_torn_tail_only_when_nothing_valid_follows() {
    // Batch 2 of segment 90 (position 317) claims a batchLength that runs
    // past the end of the file. With the valid batches after it still in
    // place this is damage in the middle (length_past_eof, naming where they
    // resume); cut the file right after its header and it is a torn tail.
    let env = TestEnv::new();
    let log = env.path("fixtures/data/orders-0/00000000000000000090.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let len = bytes.len();
    bytes[317 + 8..317 + 12].copy_from_slice(&(len as i32).to_be_bytes());
    std::fs::write(&log, &bytes).unwrap();
    let o = env.run(
        &["verify-crc", "--no-index-checks", "fixtures/data/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains(
            "00000000000000000090.log:317 error length_past_eof byte 317: entry declares"
        ),
        "{text}"
    );
    assert!(
        text.contains("valid batches resume at position 634: damage, not a torn tail"),
        "{text}"
    );
    assert!(
        !text.contains("torn_tail") && !stderr(&o).contains("torn_tail"),
        "{text}{}",
        stderr(&o)
    );
    std::fs::write(&log, &bytes[..317 + 61]).unwrap();
    let o = env.run(
        &["verify-crc", "--no-index-checks", "fixtures/data/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        stdout(&o).contains("00000000000000000090.log:317 error torn_tail"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn salvage_keeps_the_batches_after_mid_log_damage() {
    let env = TestEnv::new();
    let dir = "fixtures/corrupt/orders-0";
    let log = env.path(&format!("{dir}/00000000000000000000.log"));
    let before = std::fs::read(&log).unwrap();
    let o = env.run(
        &["verify-crc", "--repair", "--salvage", "--dry-run", dir],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let text = stdout(&o);
    // fixtures/README.md: the damaged batch at 950 holds offsets 15..=19
    // (batches of 5); the partition ends at 128 (offsets 0..127), so
    // Kafka's recovery, cutting at 950 and deleting the later segment,
    // loses 15..=127.
    for line in [
        "salvage: orders-0: offsets lost: 15..=19 (5 offsets, ",
        "salvage: orders-0: Kafka's recovery would cut fixtures/corrupt/orders-0/00000000000000000000.log at position 950 and delete 1 later segment(s), losing offsets 15..=127 (113 offsets)",
        "repair: would move bytes 950..",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    assert_eq!(
        std::fs::read(&log).unwrap(),
        before,
        "a dry run writes nothing"
    );
    let o = env.run(&["verify-crc", "--repair", "--salvage", dir], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    // The check after the repair finds nothing: its summary (stderr) says ok.
    assert!(stdout(&o).contains("after repair:\n"), "{}", stdout(&o));
    assert!(stderr(&o).contains("\nok: "), "{}", stderr(&o));
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--salvage",
            "--force-truncate",
            dir,
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "the two are exclusive");
}

/// A segment whose records all carry timestamp 0 rolls with a time index of
/// one entry, (0, base offset), which Kafka appends on roll and trims to
/// (`LogSegment.onBecomeInactiveSegment`): 12 zero bytes that are an entry,
/// not preallocated space. It verifies without a finding, older segment or
/// active one.
#[test]
fn a_time_index_of_one_zero_entry_is_an_entry() {
    let env = TestEnv::new();
    let part = env.path("zero-ts/t-0");
    std::fs::create_dir_all(&part).unwrap();
    let first = crate::support::encoded("out = batch(0, [(0, 0, b'k', b'v')])");
    let second = crate::support::encoded(
        "out = batch(1, [(0, 0, b'k', b'w')], first_timestamp=1_700_000_000_000)",
    );
    for (base, log, time) in [
        (0u64, &first, vec![0u8; 12]),
        // The active segment, shut down cleanly: its time index trimmed too.
        (1, &second, {
            let mut e = 1_700_000_000_000i64.to_be_bytes().to_vec();
            e.extend_from_slice(&0i32.to_be_bytes());
            e
        }),
    ] {
        std::fs::write(part.join(format!("{base:020}.log")), log).unwrap();
        std::fs::write(part.join(format!("{base:020}.index")), b"").unwrap();
        std::fs::write(part.join(format!("{base:020}.timeindex")), time).unwrap();
    }
    let o = env.run(&["verify-crc", "--format", "json", "zero-ts"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = document(&o, "verify-crc");
    assert_eq!(v["findings"], serde_json::json!([]), "{}", stdout(&o));
    // As the active segment too.
    std::fs::remove_file(part.join(format!("{:020}.log", 1))).unwrap();
    std::fs::remove_file(part.join(format!("{:020}.index", 1))).unwrap();
    std::fs::remove_file(part.join(format!("{:020}.timeindex", 1))).unwrap();
    let o = env.run(&["verify-crc", "--format", "json", "zero-ts"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let v = document(&o, "verify-crc");
    assert_eq!(v["findings"], serde_json::json!([]), "{}", stdout(&o));
}

#[test]
fn rebuilt_indexes_follow_the_topics_index_interval() {
    // LogSegment.recover rebuilds the offset index at the segment's
    // configured index.interval.bytes: an entry (batch's last offset, its
    // position) when more than the interval lies between the last entry's
    // position and the batch's. The interval here comes from --config
    // (standing for the topic's ConfigRecord), and with -v stderr says so.
    let env = TestEnv::new();
    let seg = "fixtures/data/orders-0/00000000000000000000";
    std::fs::remove_file(env.path(&format!("{seg}.index"))).unwrap();
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "-v",
            "--config",
            "index.interval.bytes=512",
            "fixtures/data/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains(
            "indexes rebuilt with segment.index.bytes=10485760 (Kafka's default), \
             index.interval.bytes=512 (--config)"
        ),
        "{}",
        stderr(&o)
    );
    // The entries the rule gives, from the batches' positions.
    let o = env.run(
        &["dump-segment", "--format", "json", &format!("{seg}.log")],
        None,
    );
    let mut expected = Vec::new();
    let mut last_entry = 0;
    for b in dump_batches(&o) {
        let position = b["position"].as_i64().unwrap();
        if position - last_entry > 512 {
            expected.extend_from_slice(&(b["last_offset"].as_i64().unwrap() as i32).to_be_bytes());
            expected.extend_from_slice(&(position as i32).to_be_bytes());
            last_entry = position;
        }
    }
    assert!(expected.len() >= 16, "the segment spans several intervals");
    assert_eq!(
        std::fs::read(env.path(&format!("{seg}.index"))).unwrap(),
        expected
    );
    // An unknown key is refused by name.
    let o = env.run(
        &[
            "verify-crc",
            "--repair",
            "--config",
            "retention.ms=1",
            "fixtures/data/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("klog uses only the topic configs"),
        "{}",
        stderr(&o)
    );
}

/// Flip one byte inside the records of the second batch of `log`.
fn damage_second_batch(env: &TestEnv, log: &str) {
    let o = env.run(&["dump-segment", "--format", "json", log], None);
    let batches = dump_batches(&o);
    let at = batches[1]["position"].as_u64().unwrap() as usize + 61 + 2;
    let path = env.path(log);
    let mut bytes = std::fs::read(&path).unwrap();
    bytes[at] ^= 0xff;
    std::fs::write(&path, bytes).unwrap();
}

#[test]
fn salvaging_fewer_than_all_replicas_is_refused_with_the_brokers_remedy() {
    // orders-0 of fixtures/cluster is replicated on nodes 1, 2 and 3 (the
    // KRaft metadata). A salvage that cuts offsets on one replica only leaves
    // a hole no broker repairs: after the restart the replicas' log ends and
    // leader epochs agree, so no follower fetches what it lacks.
    let env = TestEnv::new();
    let seg = |n: u8| format!("fixtures/cluster/broker-{n}/orders-0/00000000000000000000.log");
    damage_second_batch(&env, &seg(2));
    let one = [
        "verify-crc",
        "--repair",
        "--salvage",
        "fixtures/cluster/broker-2/orders-0",
    ];
    let before = std::fs::read(env.path(&seg(2))).unwrap();
    let o = env.run(&one, None);
    assert_eq!(o.status.code(), Some(1), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stdout(&o).contains("replicated on nodes 1, 2, 3 and node(s) 1, 3 not given")
            && stdout(&o).contains("remove this replica's partition folder")
            && stdout(&o).contains("salvage every replica alike")
            && stdout(&o).contains("--salvage-some-replicas"),
        "{}",
        stdout(&o)
    );
    assert_eq!(
        std::fs::read(env.path(&seg(2))).unwrap(),
        before,
        "refused: nothing cut"
    );
    // Every replica given, but only broker 2 is damaged: the others would
    // keep what it loses. Refused too.
    let all = [
        "verify-crc",
        "--repair",
        "--salvage",
        "fixtures/cluster/broker-1",
        "fixtures/cluster/broker-2",
        "fixtures/cluster/broker-3",
    ];
    let o = env.run(&all, None);
    assert!(
        stdout(&o).contains("the replicas given would lose different offsets"),
        "{}",
        stdout(&o)
    );
    assert_eq!(std::fs::read(env.path(&seg(2))).unwrap(), before);
    // Damaged alike on every replica and all given: salvaged.
    damage_second_batch(&env, &seg(1));
    damage_second_batch(&env, &seg(3));
    let o = env.run(&all, None);
    assert!(!stdout(&o).contains("different"), "{}", stdout(&o));
    assert!(
        stdout(&o).contains("salvage: orders-0: offsets lost"),
        "{}",
        stdout(&o)
    );
    assert_ne!(
        std::fs::read(env.path(&seg(2))).unwrap(),
        before,
        "salvaged"
    );
    // One replica alone, accepted explicitly.
    let env2 = TestEnv::new();
    damage_second_batch(&env2, &seg(2));
    let o = env2.run(&[&one[..], &["--salvage-some-replicas"]].concat(), None);
    assert!(
        stdout(&o).contains("(accepted: --salvage-some-replicas)")
            && stdout(&o).contains("offsets lost"),
        "{}",
        stdout(&o)
    );
}

#[test]
fn indexes_rebuilt_from_kafkas_topic_config_equal_kafkas_own() {
    // plain-0 of fixtures/kafka-real/4.1.1 was written by Kafka 4.1.1 with the
    // topic config index.interval.bytes=100 (a ConfigRecord in the KRaft
    // metadata): one offset entry per segment, and the time index of each
    // rolled segment as LogSegment.append and onBecomeInactiveSegment left
    // it. Rebuilt from the logs at the topic's interval, both indexes are
    // Kafka's bytes again (at Kafka's default 4096 the offset index would
    // be empty).
    let env = TestEnv::new();
    let real = crate::support::repo().join("fixtures/kafka-real/4.1.1/broker-1");
    let data = env.path("real");
    for name in ["meta.properties", "__cluster_metadata-0", "plain-0"] {
        let from = real.join(name);
        if from.is_dir() {
            crate::support::copy_dir(&from, &data.join(name));
        } else {
            std::fs::create_dir_all(&data).unwrap();
            std::fs::copy(&from, data.join(name)).unwrap();
        }
    }
    let mut kafkas = Vec::new();
    for base in [0, 10, 20] {
        for ext in ["index", "timeindex"] {
            let name = format!("{base:020}.{ext}");
            kafkas.push((
                name.clone(),
                std::fs::read(real.join("plain-0").join(&name)).unwrap(),
            ));
            std::fs::remove_file(data.join("plain-0").join(&name)).unwrap();
        }
    }
    let o = env.run(&["verify-crc", "--repair", "-v", "real/plain-0"], None);
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert!(
        stderr(&o).contains("index.interval.bytes=100 (topic config)"),
        "{}",
        stderr(&o)
    );
    for (name, bytes) in kafkas {
        assert!(bytes.len() >= 8, "{name}: Kafka wrote entries");
        assert_eq!(
            std::fs::read(data.join("plain-0").join(&name)).unwrap(),
            bytes,
            "{name}"
        );
    }
}

#[test]
fn csv_is_one_row_per_finding_and_the_verdict_on_stderr() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "verify-crc",
            "--format",
            "csv",
            "fixtures/truncated/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    assert_eq!(
        stdout(&o),
        "file,file_base64,position,byte,severity,kind,offset,producer_id,detail\n\
         fixtures/truncated/orders-0/00000000000000000090.log,,2146,2146,error,torn_tail,,,\
         byte 2146: torn tail: entry declares 145 bytes but only 20 remain in the file\n"
    );
    assert!(
        stderr(&o).starts_with("damaged: checked 2 files, "),
        "{}",
        stderr(&o)
    );

    // Producer-state findings fill producer_id; folders not read are
    // said on stderr, not as rows.
    let o = env.run(
        &[
            "verify-crc",
            "--deep",
            "--now-ms",
            "1700000120000",
            "--format",
            "csv",
            "fixtures/txn",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = csv_objects(&stdout(&o));
    let producers: Vec<(&str, &str)> = rows
        .iter()
        .map(|r| (r["kind"].as_str(), r["producer_id"].as_str()))
        .collect();
    assert_eq!(
        producers,
        [
            ("out_of_order_sequence", "100"),
            ("duplicate_sequence", "100"),
            ("epoch_regression", "400")
        ]
    );
    let o = env.run(&["verify-crc", "--format", "csv", "fixtures/kraft"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let rows = csv_objects(&stdout(&o));
    // 14 of the live folders, 2 of the -stray one (a broker loads and
    // recovers it: LogManager.loadLog), none of the -delete one.
    assert_eq!(rows.len(), 16);
    assert_eq!(
        rows.iter()
            .filter(|r| r["file"].contains("-stray/"))
            .count(),
        2
    );
    assert!(
        rows.iter().all(|r| r["kind"] == "index_missing"),
        "{rows:?}"
    );
    assert!(!stdout(&o).contains("skipped"), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(
            "klog: fixtures/kraft/orders-5.abababababababababababababababab-delete: skipped, \
             a partition folder marked delete\n"
        ),
        "{}",
        stderr(&o)
    );
}

#[test]
fn csv_is_refused_where_the_output_is_no_findings_table() {
    let env = TestEnv::new();
    for args in [&["--repair", "--dry-run"][..], &["--recovery-preview"][..]] {
        let mut all = vec!["verify-crc", "--format", "csv"];
        all.extend_from_slice(args);
        all.push("fixtures/truncated/orders-0");
        let o = env.run(&all, None);
        assert_eq!(o.status.code(), Some(2), "{all:?}");
        assert_eq!(stdout(&o), "", "{all:?}");
        assert!(stderr(&o).contains("--format csv"), "{}", stderr(&o));
    }
}

/// The unique id Kafka puts in a `-delete`, `-future` or `-stray` folder's
/// name (`LocalLog.logDirNameWithSuffix`: a uuid without dashes).
const UNIQUE: &str = "0123456789abcdef0123456789abcdef";

/// A data directory `data` (a broker's: meta.properties, no
/// `.kafka_cleanshutdown`) holding `fixtures/truncated/orders-0` as
/// `orders-0.<UNIQUE>-<suffix>`; returns the folder's name.
fn special_folder(env: &TestEnv, suffix: &str) -> String {
    let name = format!("orders-0.{UNIQUE}-{suffix}");
    crate::support::copy_dir(
        &env.path("fixtures/truncated/orders-0"),
        &env.path(&format!("data/{name}")),
    );
    std::fs::write(
        env.path("data/meta.properties"),
        "version=1\nnode.id=1\ncluster.id=a2xvZy1maXh0dXJlLTAx\n",
    )
    .unwrap();
    name
}

/// Issue #48 D. `LogManager.loadLogs` (Kafka 4.3 `LogManager.scala`, 4.4
/// `LogManager.java`) loads every folder of a log directory but
/// `remote-log-index-cache` and the metadata topic's, and `loadLog` runs
/// `UnifiedLog.create` (`LogLoader.load`: recovery from the recovery point
/// after an unclean shutdown) before it looks at the suffix: a `-future`
/// folder becomes the partition's future replica, a `-stray` one is kept
/// aside ("Loaded stray log"). Both are recovered as a live folder is,
/// with the recovery point of their topic-partition
/// (`recoveryPoints.getOrDefault(topicPartition, 0)`): the torn tail of
/// `truncated/orders-0` (20 bytes at 2146 of segment 90) is cut.
#[test]
fn future_and_stray_folders_are_recovered_as_kafka_loads_them() {
    for suffix in ["future", "stray"] {
        let env = TestEnv::new();
        let name = special_folder(&env, suffix);
        let segment = format!("data/{name}/00000000000000000090.log");
        let o = env.run(&["verify-crc", "--recovery-preview", "data"], None);
        assert_eq!(o.status.code(), Some(1), "{suffix}: {}", stderr(&o));
        let text = stdout(&o);
        assert!(
            text.contains(&format!(
                "{name}: recovery from segment 0 (recovery point 0) cuts {segment} at position 2146 (20 bytes)"
            )),
            "{text}"
        );
        // The directory's headline counts it among the partitions a start re-reads.
        assert!(
            text.starts_with("data: node 1: UNCLEAN shutdown")
                && text.contains("re-reading 1 of 1 partition: 2 segments"),
            "{text}"
        );
        let o = env.run(
            &[
                "verify-crc",
                "--recovery-preview",
                "--format",
                "json",
                "data",
            ],
            None,
        );
        let doc = document(&o, "verify-crc");
        let p = &doc["partitions"][0];
        assert_eq!(
            (
                p["folder"].as_str(),
                p["state"].as_str(),
                p["topic"].as_str(),
                p["cuts"][0]["position"].as_u64(),
                p["cuts"][0]["bytes"].as_u64(),
                p["log_end_offset"].as_i64(),
            ),
            (
                Some(name.as_str()),
                Some(suffix),
                Some("orders"),
                Some(2146),
                Some(20),
                Some(125)
            ),
            "{p}"
        );
        assert_eq!(doc["restarts"][0]["recovered"][0]["folder"], name.as_str());
        // The recovery point is the topic-partition's: from segment 90.
        std::fs::write(
            env.path("data/recovery-point-offset-checkpoint"),
            "0\n1\norders 0 100\n",
        )
        .unwrap();
        let o = env.run(&["verify-crc", "--recovery-preview", "data"], None);
        assert!(
            stdout(&o).contains(&format!(
                "{name}: recovery from segment 90 (recovery point 100) cuts {segment} at position 2146"
            )),
            "{}",
            stdout(&o)
        );
        // verify-crc checks the folder as it checks it given alone.
        let o = env.run(&["verify-crc", "--format", "csv", "data"], None);
        assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
        let rows = csv_objects(&stdout(&o));
        assert!(
            rows.iter().any(|r| r["kind"] == "torn_tail"
                && r["file"] == segment
                && r["position"] == "2146"),
            "{rows:?}"
        );
        assert!(!stderr(&o).contains("skipped"), "{}", stderr(&o));
    }
}

/// A `-delete` folder is loaded too, but `LogLoader.load` skips
/// `recoverLog` for a folder whose name ends in `-delete` (recovery
/// offsets 0, 0), and `LogManager.loadLog` then schedules it for deletion
/// (`addLogToBeDeleted`, file.delete.delay.ms later): the torn tail stays
/// until the folder goes. Only `loadSegmentFiles`, which runs before,
/// recovers a segment whose offset index is missing (`sanityCheck`'s
/// NoSuchFileException: `recoverSegment`), cutting it at its damage. A
/// folder of the metadata topic is not loaded by `LogManager` at all.
#[test]
fn a_delete_folder_is_loaded_without_recovery() {
    let env = TestEnv::new();
    let name = special_folder(&env, "delete");
    let metadata = format!("__cluster_metadata-0.{UNIQUE}-delete");
    crate::support::copy_dir(
        &env.path("fixtures/truncated/orders-0"),
        &env.path(&format!("data/{metadata}")),
    );
    let o = env.run(&["verify-crc", "--recovery-preview", "data"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains(&format!(
            "{name}: a -delete folder: a start loads it without recovery"
        )) && text.contains("deletes it file.delete.delay.ms later"),
        "{text}"
    );
    assert!(!text.contains("cuts"), "{text}");
    assert!(!text.contains(&metadata), "{text}");
    // Plain verify-crc does not read it: Kafka checks none of its batches.
    let o = env.run(&["verify-crc", "data"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(&format!(
            "data/{name}: skipped, a partition folder marked delete"
        )),
        "{}",
        stdout(&o)
    );
    // Without segment 90's offset index, loadSegmentFiles recovers it.
    std::fs::remove_file(env.path(&format!("data/{name}/00000000000000000090.index"))).unwrap();
    let o = env.run(&["verify-crc", "--recovery-preview", "data"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(
        stdout(&o).contains(&format!(
            "{name}: and cuts data/{name}/00000000000000000090.log at position 2146 (20 bytes)"
        )),
        "{}",
        stdout(&o)
    );
    // Given alone, the folder is loaded the same way.
    let o = env.run(
        &["verify-crc", "--recovery-preview", &format!("data/{name}")],
        None,
    );
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    assert!(stdout(&o).contains("at position 2146"), "{}", stdout(&o));
}

/// A legacy entry whose value length runs past its end but whose size and
/// CRC hold: Kafka's recovery keeps it, since `LogSegment.recover` runs
/// only `ensureValid` (the size and the CRC: `LegacyRecord.ensureValid`)
/// and reads the entry's last offset and timestamp, never its value. The
/// verifier still reports the value it cannot read, with its byte, and
/// checks the entry after it.
#[test]
fn a_legacy_value_past_its_entry_is_reported_and_kept_by_recovery() {
    let env = TestEnv::new();
    let log = crate::support::encoded(
        "out = legacy_message(0, b'abc', key=b'k', timestamp=1000, value_size=1000) \
         + legacy_message(1, b'v', key=b'k2', timestamp=1001)",
    );
    crate::support::write_segment(&env.path("data"), "t-0", &log);
    let o = env.run(&["verify-crc", "data", "--format", "json"], None);
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&crate::support::stdout(&o)).unwrap();
    let errors: Vec<&serde_json::Value> = v["findings"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["severity"] == "error")
        .collect();
    assert_eq!(errors.len(), 1, "{v}");
    // The value starts after offset, size, crc, magic, attributes,
    // timestamp, the key (4 + 1) and the value's length: byte 35.
    assert_eq!(errors[0]["kind"], "unexpected_eof");
    assert_eq!(
        (errors[0]["position"].as_u64(), errors[0]["byte"].as_u64()),
        (Some(0), Some(35))
    );
    assert_eq!(v["checked"]["batches"], 2, "{v}");
    let o = env.run(&["verify-crc", "data", "--recovery-preview"], None);
    let out = crate::support::stdout(&o);
    assert!(out.contains("finds nothing to cut"), "{out}");
    assert!(out.contains("log end 2"), "{out}");
}
