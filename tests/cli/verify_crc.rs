use crate::support::{check_golden, stderr, stdout, TestEnv};

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
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["ok"], false);
    assert_eq!(v["checked"]["files"], 2);
    let p = &v["problems"][0];
    assert_eq!(p["kind"], "torn_tail");
    assert_eq!(
        p["file"],
        "fixtures/truncated/orders-0/00000000000000000090.log"
    );
    assert!(p["position"].as_u64().unwrap() > 0);
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
    // A deterministic xorshift stream: hostile bytes of many sizes.
    let mut x: u64 = 0x9E37_79B9_7F4A_7C15;
    for len in [1usize, 17, 18, 61, 200, 4096, 65_536] {
        let bytes: Vec<u8> = (0..len)
            .map(|_| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                x as u8
            })
            .collect();
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
