use crate::support::{check_golden, stderr, stdout, TestEnv};

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
