//! Amplification: a few kilobytes that decompress to millions of messages
//! or records, and one record of tens of MiB. Inner messages and records
//! are handed out one at a time and written as they decode, so the peak
//! stays under 64 MiB plus the one decompressed batch (or the one batch)
//! that must be held. These are scaled-down versions of the attacks
//! (tests/hostile/soak.sh runs them at full size: 10 M messages, 26 M
//! records, a 200 MiB record); the files come from fixtures/encoder.py.

use crate::measure::{klog, Run};
use crate::support::{encoded, write_segment, TestEnv};

/// Inner messages in the legacy bomb (13 MB decompressed; before they
/// were streamed, each cost about 150 bytes more: 100 MB).
const MESSAGES: u64 = 500_000;
/// Bytes of one empty magic-0 message: offset, size, crc, magic,
/// attributes, key length, value length.
const EMPTY_V0: u64 = 8 + 4 + 4 + 1 + 1 + 4 + 4;
/// Records in the v2 bomb (4.4 MB decompressed; collected, each record
/// and its JSON cost about 190 bytes: 95 MB).
const RECORDS: u64 = 500_000;

/// One gzip wrapper (magic 0) of `n` empty messages, all at offset 0 (the
/// most compressible; nothing in a v0 wrapper orders inner offsets).
fn legacy_bomb(n: u64) -> Vec<u8> {
    encoded(&format!(
        "import gzip\n\
         inner = legacy_message(0, None, magic=0) * {n}\n\
         out = legacy_message(0, gzip.compress(inner, mtime=0), magic=0, attributes=GZIP)"
    ))
}

/// One gzip v2 batch of `n` records with null key and value at offset
/// deltas 0..n; and the decompressed size of its records section.
fn records_bomb(n: u64) -> (Vec<u8>, u64) {
    let out = encoded(&format!(
        "import gzip, struct\n\
         section = b''.join(record(i, 0, None, None) for i in range({n}))\n\
         packed = gzip.compress(section, compresslevel=1, mtime=0)\n\
         plain = batch(0, [(0, 0, None, None)], last_offset_delta={n} - 1)\n\
         head = bytearray(plain[:61])\n\
         head[21:23] = struct.pack('>h', 1)\n\
         head[57:61] = struct.pack('>i', {n})\n\
         body = bytes(head[21:]) + packed\n\
         head[8:12] = struct.pack('>i', 49 + len(packed))\n\
         head[17:21] = struct.pack('>I', crc32c(body))\n\
         out = struct.pack('>q', len(section)) + bytes(head) + packed"
    ));
    let section = u64::from_be_bytes(out[..8].try_into().unwrap());
    (out[8..].to_vec(), section)
}

fn assert_ok(run: &Run, what: &str, code: i32) {
    assert_eq!(run.code, Some(code), "{what}: {}", run.stderr);
}

/// `dump-segment --format json bomb/t-0`, bounded by 64 MiB + `held`: its output.
fn dump_json(env: &TestEnv, held: u64) -> Vec<u8> {
    let out = env.path("dump.json");
    let run = klog(
        env.dir.path(),
        &["dump-segment", "--format", "json", "bomb/t-0"],
        Some(&out),
    );
    assert_ok(&run, "dump-segment --format json", 0);
    run.assert_bounded("dump-segment --format json", 30, held);
    std::fs::read(&out).unwrap()
}

#[test]
fn r6_a_legacy_wrapper_of_half_a_million_empty_messages_is_streamed() {
    let env = TestEnv::new();
    let bomb = legacy_bomb(MESSAGES);
    assert!(bomb.len() < 100_000, "{} bytes", bomb.len());
    write_segment(env.dir.path(), "bomb/t-0", &bomb);
    let held = MESSAGES * EMPTY_V0;

    let run = klog(env.dir.path(), &["verify-crc", "bomb/t-0"], None);
    assert_ok(&run, "verify-crc", 0);
    // The summary is on stderr.
    assert!(
        run.stderr.contains(&format!("{MESSAGES} records")),
        "{}",
        run.stderr
    );
    run.assert_bounded("verify-crc", 30, held);

    let json = dump_json(&env, held);
    let one =
        br#"{"offset":0,"timestamp":-1,"key":null,"value":null,"headers":[],"crc_valid":true}"#;
    // One document: its head line, the one entry, its closing line.
    assert_eq!(json.iter().filter(|&&b| b == b'\n').count(), 3);
    assert!(json.ends_with(&[one.as_slice(), b"]}\n]}\n"].concat()));
    assert!(json.len() as u64 > MESSAGES * one.len() as u64);

    let run = klog(
        env.dir.path(),
        &["dump-segment", "--records", "bomb/t-0"],
        Some(&env.path("dump.txt")),
    );
    assert_ok(&run, "dump-segment --records", 0);
    run.assert_bounded("dump-segment --records", 30, held);

    let run = klog(env.dir.path(), &["stats", "bomb/t-0"], None);
    assert_ok(&run, "stats", 0);
    run.assert_bounded("stats", 30, held);
}

#[test]
fn r6_four_bombs_verified_by_four_jobs_hold_one_batch_at_a_time() {
    let env = TestEnv::new();
    let bomb = legacy_bomb(MESSAGES);
    for p in 0..4 {
        write_segment(env.dir.path(), &format!("bombs/t-{p}"), &bomb);
    }
    let run = klog(
        env.dir.path(),
        &["verify-crc", "--jobs", "4", "--no-index-checks", "bombs"],
        None,
    );
    assert_ok(&run, "verify-crc --jobs 4", 0);
    assert!(
        run.stderr.contains(&format!("{} records", 4 * MESSAGES)),
        "{}",
        run.stderr
    );
    // One job at a time holds a large decompressed batch; the others wait.
    run.assert_bounded("verify-crc --jobs 4", 60, MESSAGES * EMPTY_V0);
}

#[test]
fn r6_a_batch_of_half_a_million_tiny_records_is_dumped_as_it_decodes() {
    let env = TestEnv::new();
    let (bomb, section) = records_bomb(RECORDS);
    write_segment(env.dir.path(), "bomb/t-0", &bomb);
    let json = dump_json(&env, section);
    let last = format!(
        r#"{{"offset":{},"timestamp":0,"key":null,"value":null,"headers":[]}}]}}"#,
        RECORDS - 1
    );
    assert!(json.ends_with(format!("{last}\n]}}\n").as_bytes()));
    assert_eq!(json.iter().filter(|&&b| b == b'\n').count(), 3);

    let run = klog(env.dir.path(), &["verify-crc", "bomb/t-0"], None);
    assert_ok(&run, "verify-crc", 0);
    run.assert_bounded("verify-crc", 30, section);
}

#[test]
fn r6_offsets_records_that_do_not_decode_are_counted_not_kept() {
    // The same batch in an offsets partition: every record has a null key,
    // which the coordinator's loader refuses. Each was kept with its error
    // and printed (about 165 bytes a record); the first thousand are, the
    // rest are counted.
    let env = TestEnv::new();
    let (bomb, section) = records_bomb(RECORDS);
    write_segment(env.dir.path(), "data/__consumer_offsets-0", &bomb);
    for cmd in ["replay-offsets", "lag", "groups"] {
        let run = klog(env.dir.path(), &[cmd, "data"], None);
        assert_ok(&run, cmd, 1);
        assert!(
            run.stderr.contains(&format!(
                "klog: and {} more records that do not decode",
                RECORDS - 1000
            )),
            "{cmd}: {}",
            &run.stderr[run.stderr.len().saturating_sub(300)..]
        );
        // A line for each of the first thousand, one for the rest, one that
        // says the view is incomplete; the summary lines do not start with "klog:".
        assert_eq!(
            run.stderr
                .lines()
                .filter(|l| l.starts_with("klog: "))
                .count(),
            1002,
            "{cmd}"
        );
        assert!(
            run.stderr.contains(&format!(
                "klog: incomplete: __consumer_offsets-0: {RECORDS} records not read or not applied"
            )),
            "{cmd}"
        );
        run.assert_bounded(cmd, 30, section);
    }
}

#[test]
fn r6_the_layout_of_a_batch_of_tiny_records_is_written_field_by_field() {
    // Nine fields a record: collected as JSON values, 50,000 records took
    // 160 MB (a million: 19 GB).
    let env = TestEnv::new();
    let (bomb, section) = records_bomb(50_000);
    write_segment(env.dir.path(), "bomb/t-0", &bomb);
    let out = env.path("layout.out");
    for (args, what) in [
        (
            &["dump-segment", "--layout", "--format", "json", "bomb/t-0"][..],
            "json",
        ),
        (&["dump-segment", "--layout", "bomb/t-0"][..], "text"),
    ] {
        let run = klog(env.dir.path(), args, Some(&out));
        assert_ok(&run, what, 0);
        run.assert_bounded(what, 30, section);
        let shown = std::fs::read(&out).unwrap();
        let last = b"record 49999";
        assert!(shown.windows(last.len()).any(|w| w == last), "{what}");
    }
}

#[test]
fn r6_one_record_of_32_mib_is_written_out_without_copies() {
    // Zero bytes are valid UTF-8 that JSON escapes as \u0000: six bytes
    // out for each byte in, 192 MiB of output from one value.
    let env = TestEnv::new();
    let size: u64 = 32 << 20;
    let bytes = encoded(&format!(
        "out = batch(0, [(0, 0, None, bytes({size}))], first_timestamp=1700000000000)"
    ));
    write_segment(env.dir.path(), "big/t-0", &bytes);
    let held = bytes.len() as u64;
    let out = env.path("dump.out");
    for (args, what) in [
        (&["dump-segment", "--format", "json", "big/t-0"][..], "json"),
        (&["dump-segment", "--records", "big/t-0"][..], "text"),
    ] {
        let run = klog(env.dir.path(), args, Some(&out));
        assert_ok(&run, what, 0);
        run.assert_bounded(what, 60, held);
        let len = std::fs::metadata(&out).unwrap().len();
        assert!(len > 6 * size, "{what}: {len} bytes of output");
    }
}

/// Plain (uncompressed) batches of tiny records render to JSON ten times
/// their size. A segment past the read-ahead threshold has its batches
/// rendered on the read-ahead threads, which stop at a bound per chunk and
/// leave the rest to the reading thread: the rendered bytes in flight stay
/// bounded (96 MiB for these 24 MiB before the bound; 8 MiB on one thread).
#[test]
fn r6_plain_batches_of_tiny_records_rendered_ahead_stay_bounded() {
    let env = TestEnv::new();
    // One batch of 5,000 records with null key and value, from the
    // encoder; copied with the base offset moved on (outside the CRC).
    let one = encoded("out = batch(0, [(i, 0, None, None) for i in range(5000)])");
    let mut segment = Vec::new();
    for i in 0..(24 << 20) / one.len() as i64 {
        let start = segment.len();
        segment.extend_from_slice(&one);
        segment[start..start + 8].copy_from_slice(&(i * 5000).to_be_bytes());
    }
    write_segment(env.dir.path(), "tiny/t-0", &segment);
    let mut outputs = Vec::new();
    for threads in ["1", "2"] {
        let out = env.path(&format!("dump-{threads}.jsonl"));
        let args = [
            "dump-segment",
            "--format",
            "jsonl",
            "--threads",
            threads,
            "tiny/t-0",
        ];
        let run = klog(env.dir.path(), &args, Some(&out));
        assert_ok(&run, "dump-segment --format jsonl", 0);
        run.assert_bounded(&format!("dump-segment --threads {threads}"), 60, 0);
        outputs.push(std::fs::read(&out).unwrap());
    }
    let records = (segment.len() / one.len()) * 5000;
    let shown = outputs[0]
        .windows(10)
        .filter(|w| w == b"{\"offset\":")
        .count();
    assert_eq!(shown, records);
    assert!(outputs[0] == outputs[1], "--threads 1 and 2 differ");
}

/// One gzip batch of offset commits by `groups` groups, each named 32,760
/// `<` and a number (32,767 bytes, the most an offsets key holds), each
/// committing orders-0 at 5: a few KB of log that name megabytes.
fn long_named_groups(groups: u64) -> Vec<u8> {
    encoded(&format!(
        "import gzip, struct\n\
         recs = [(i, 0, offset_commit_key('<' * 32760 + '%07d' % i, 'orders', 0),\n\
                  offset_commit_value(5, 1700000000000)) for i in range({groups})]\n\
         section = b''.join(record(*r) for r in recs)\n\
         packed = gzip.compress(section, compresslevel=9, mtime=0)\n\
         after = struct.pack('>hiqqqhii', 1, {groups} - 1, 0, 0, -1, -1, -1, {groups}) + packed\n\
         out = struct.pack('>qiibI', 0, 9 + len(after), 0, 2, crc32c(after)) + after"
    ))
}

#[test]
fn r49_8_a_report_on_long_group_names_shows_each_bounded_once() {
    // 200 groups named 32 KB of `<` in a 13 KB gzip log made a 262 MB
    // page (each name copied and escaped about ten times in full); 1,000
    // made 1.3 GB and 2.7 GB of RSS. Names enter the report bounded
    // (their start, length and hash) and escaped once.
    for groups in [200, 1000] {
        let env = TestEnv::new();
        let log = long_named_groups(groups);
        write_segment(env.dir.path(), "names/__consumer_offsets-0", &log);
        let page = env.path("page.html");
        let run = klog(env.dir.path(), &["report", "names"], Some(&page));
        assert_ok(&run, "report", 0);
        let size = std::fs::metadata(&page).unwrap().len();
        eprintln!(
            "{groups} groups, {} bytes of log: page {size} bytes, peak RSS {} KiB",
            log.len(),
            run.peak >> 10
        );
        // Under 4x the input plus 64 MiB.
        run.assert_bounded(
            &format!("report on {groups} groups"),
            120,
            4 * log.len() as u64,
        );
        assert!(
            size < groups * 16 * 1024,
            "{groups} groups: a page of {size} bytes"
        );
        let html = std::fs::read_to_string(&page).unwrap();
        assert!(
            html.contains("(32767 bytes, sha256 "),
            "the names are not shown"
        );
        assert!(!html.contains(&"&lt;".repeat(200)), "a name shown in full");
        // Every group is a row of the heatmap, told apart by its hash.
        assert_eq!(
            html.matches("<tr data-group=\"").count() as u64,
            2 * groups,
            "a row per group in each heatmap"
        );
    }
}

#[test]
fn r49_8_a_summary_with_a_100_mb_path_is_refused_without_copying_it() {
    // A 100 MB "path" in a summary: `cluster` wrote it into a 100 MB table
    // in 200 s, `report` into a 1.6 GB page (or aborted allocating it).
    // A summary's strings are refused past what they can be (a path past
    // PATH_MAX), naming the field, before anything shows them.
    let env = TestEnv::new();
    let o = env.run(&["summary", "--format", "json", "fixtures/groups"], None);
    assert_eq!(o.status.code(), Some(0));
    let mut doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    doc["log_dirs"][0]["path"] = format!("/{}", "<".repeat(100 << 20)).into();
    doc["log_dirs"][0]["node_id"] = 1.into();
    let file = env.path("big.json");
    std::fs::write(&file, serde_json::to_vec(&doc).unwrap()).unwrap();
    let len = std::fs::metadata(&file).unwrap().len();
    for command in ["cluster", "report"] {
        let run = klog(env.dir.path(), &[command, "big.json"], None);
        assert_ok(&run, command, 2);
        assert!(
            run.stderr.contains(
                "big.json: is not a summary klog can trust: log_dirs[0].path: 104857601 bytes, \
                 over the 4096 bytes a path can hold (PATH_MAX)"
            ),
            "{command}: {}",
            &run.stderr[..run.stderr.len().min(500)]
        );
        assert!(run.stderr.len() < 1024, "{command}: the path was printed");
        assert!(run.stdout.is_empty(), "{command}");
        run.assert_bounded(command, 60, 4 * len);
    }
}
