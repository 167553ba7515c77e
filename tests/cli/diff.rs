use crate::support::{check_golden, document, stderr, stdout, TestEnv};

#[test]
fn identical_copies_exit_0() {
    let env = TestEnv::new();
    let o = env.run(
        &["diff", "fixtures/data/orders-0", "fixtures/data/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(0));
    assert!(stdout(&o).contains("verdict: identical"));
}

#[test]
fn a_flipped_byte_and_a_torn_tail() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &[
            "diff",
            "fixtures/data/orders-0",
            "fixtures/corrupt/orders-0",
        ],
        1,
        "diff/corrupt",
    );
    let o = env.run(
        &[
            "diff",
            "--format",
            "json",
            "fixtures/truncated/orders-0",
            "fixtures/data/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let v = document(&o, "diff");
    assert_eq!(v["divergence"]["offset"], 125);
    assert!(
        v["divergence"]["a"].is_null(),
        "the truncated copy ends there"
    );
    assert_eq!(
        (
            v["log_end_offset_a"].as_i64(),
            v["log_end_offset_b"].as_i64()
        ),
        (Some(125), Some(128))
    );
    assert!(v["verdict"].as_str().unwrap().starts_with("keep B"));
}

#[test]
fn replicas_that_diverged_both_valid() {
    let env = TestEnv::new();
    crate::support::copy_dir(
        &env.path("fixtures/data/payments.eu-west-1"),
        &env.path("replica/payments.eu-west-1"),
    );
    let o = env.run(
        &[
            "produce",
            "replica",
            "--topic",
            "payments.eu-west",
            "--partition",
            "1",
            "--timestamp-ms",
            "7",
        ],
        Some("only-here\n"),
    );
    assert_eq!(o.status.code(), Some(0));
    let o = env.run(
        &[
            "produce",
            "fixtures/data",
            "--topic",
            "payments.eu-west",
            "--partition",
            "1",
            "--timestamp-ms",
            "8",
        ],
        Some("different\n"),
    );
    assert_eq!(o.status.code(), Some(0));
    let o = env.run(
        &[
            "diff",
            "fixtures/data/payments.eu-west-1",
            "replica/payments.eu-west-1",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let text = stdout(&o);
    assert!(
        text.contains("common prefix: 2 batches, offsets up to 1"),
        "{text}"
    );
    assert!(text.contains("diverge at offset 2:"), "{text}");
    assert!(
        text.contains("both hold valid but different batches there"),
        "{text}"
    );
}

/// Two brokers' data directories are not two copies of one partition:
/// refused (exit 2) with the ways to compare them, never "identical".
#[test]
fn data_directories_are_refused_not_called_identical() {
    let env = TestEnv::new();
    let o = env.run(
        &[
            "diff",
            "fixtures/cluster/broker-1",
            "fixtures/cluster/broker-2",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(stdout(&o).is_empty(), "{}", stdout(&o));
    assert!(
        stderr(&o).contains("is a data directory, not a copy of one partition"),
        "{}",
        stderr(&o)
    );
    assert!(stderr(&o).contains("klog cluster"), "{}", stderr(&o));
}
