//! `diff` compares every byte, not only the batches it decodes, and reads
//! both copies in step instead of holding them.

use crate::measure::klog;
use crate::support::{copy_dir, encoded, junk, stdout, TestEnv};

#[test]
fn r7_a_torn_copy_and_its_repaired_copy_differ() {
    // fixtures/truncated/orders-0 ends in a torn tail at 2146 of its second
    // segment (fixtures/README.md); its repaired copy holds the same batches.
    let env = TestEnv::new();
    copy_dir(
        &env.path("fixtures/truncated/orders-0"),
        &env.path("repaired/orders-0"),
    );
    let o = env.run(&["verify-crc", "--repair", "repaired/orders-0"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
    let run = klog(
        env.dir.path(),
        &["diff", "fixtures/truncated/orders-0", "repaired/orders-0"],
        None,
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let text = String::from_utf8_lossy(&run.stdout);
    for line in [
        "common prefix: 26 batches, offsets up to 124",
        "only in B: 00000000000000000090.log.cut-2146",
        "differs: 00000000000000000090.log (A 2166 bytes, B 2146 bytes, first difference at byte 2146)",
        "damage: fixtures/truncated/orders-0/00000000000000000090.log:2146 error torn_tail",
        "verdict: keep B: the same batches, but A's log also holds bytes that are not batches",
    ] {
        assert!(text.contains(line), "{line}\n{text}");
    }
    run.assert_bounded("diff", 10, 0);
}

#[test]
fn r7_a_copy_with_a_trailing_batch_that_fails_its_crc_is_the_other_unrepaired() {
    // A torn header followed by junk frames as one more batch whose CRC
    // fails: the copy without it is the one to keep.
    let env = TestEnv::new();
    copy_dir(
        &env.path("fixtures/data/orders-0"),
        &env.path("torn/orders-0"),
    );
    let log = env.path("torn/orders-0/00000000000000000090.log");
    let mut bytes = std::fs::read(&log).unwrap();
    // The last batch again at base offset 200, one byte of its records flipped.
    let last = bytes.len() - 145;
    let mut extra = bytes[last..].to_vec();
    extra[..8].copy_from_slice(&200i64.to_be_bytes());
    extra[100] ^= 0xff;
    bytes.extend_from_slice(&extra);
    std::fs::write(&log, &bytes).unwrap();
    let o = env.run(&["diff", "torn/orders-0", "fixtures/data/orders-0"], None);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
    let text = stdout(&o);
    assert!(
        text.contains("verdict: keep B: at the divergence A holds only a batch that fails its CRC, and nothing valid beyond it; both extend to 128"),
        "{text}"
    );
}

#[test]
fn r7_an_extra_segment_of_junk_is_a_difference() {
    let env = TestEnv::new();
    copy_dir(
        &env.path("fixtures/data/orders-0"),
        &env.path("copy/orders-0"),
    );
    // 100 KB of junk named like a segment between the two real ones.
    std::fs::write(
        env.path("copy/orders-0/00000000000000000050.log"),
        junk(100_000, 0x9e37_79b9_7f4a_7c15),
    )
    .unwrap();
    let run = klog(
        env.dir.path(),
        &[
            "diff",
            "--format",
            "json",
            "fixtures/data/orders-0",
            "copy/orders-0",
        ],
        None,
    );
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let v: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
    assert_eq!(v["identical"], false);
    assert!(v["divergence"].is_null(), "the same batches");
    assert_eq!(
        v["files"]["only_in_b"],
        serde_json::json!(["00000000000000000050.log"])
    );
    assert_eq!(
        v["findings"][0]["file"],
        "copy/orders-0/00000000000000000050.log"
    );
    assert_eq!(v["findings"][0]["position"], 0);
    assert!(v["verdict"].as_str().unwrap().starts_with("keep A"), "{v}");
    run.assert_bounded("diff", 10, 0);
}

#[test]
fn r7_two_copies_of_64_mib_are_compared_in_step() {
    // 64 batches of one 1 MiB record each, identical in both copies but for
    // the last batch's value. Holding both copies took twice their size.
    let env = TestEnv::new();
    let one =
        encoded("out = batch(0, [(0, 0, None, b'v' * (1 << 20))], first_timestamp=1700000000000)");
    let mut log = Vec::with_capacity(64 * one.len());
    for i in 0..64i64 {
        let mut b = one.clone();
        // baseOffset lies outside the CRC (Kafka assigns it on append).
        b[..8].copy_from_slice(&i.to_be_bytes());
        log.extend_from_slice(&b);
    }
    for copy in ["a/t-0", "b/t-0"] {
        std::fs::create_dir_all(env.path(copy)).unwrap();
        std::fs::write(env.path(copy).join("00000000000000000000.log"), &log).unwrap();
    }
    let run = klog(env.dir.path(), &["diff", "a/t-0", "b/t-0"], None);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(String::from_utf8_lossy(&run.stdout).contains("verdict: identical"));
    run.assert_bounded("diff of identical copies", 20, one.len() as u64);

    // The last batch's value differs by one byte: its CRC no longer holds.
    let at = log.len() - 2;
    log[at] ^= 1;
    std::fs::write(env.path("b/t-0/00000000000000000000.log"), &log).unwrap();
    let run = klog(env.dir.path(), &["diff", "a/t-0", "b/t-0"], None);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    let text = String::from_utf8_lossy(&run.stdout);
    assert!(text.contains("diverge at offset 63:"), "{text}");
    assert!(text.contains("verdict: keep A"), "{text}");
    assert!(
        text.contains(&format!(
            "differs: 00000000000000000000.log (A {0} bytes, B {0} bytes, first difference at byte {at})",
            log.len()
        )),
        "{text}"
    );
    run.assert_bounded("diff of copies that differ", 20, 2 * one.len() as u64);
}

/// A copy whose only batch claims 512 MiB (its size field raised, the file
/// extended by holes to hold it): the batch is read once to be compared,
/// and not kept, copied or cloned past the read; the bytes held stay
/// those of one batch (before, a copy of it was kept for the report and
/// cloned at each step: four times its size).
#[test]
fn a_huge_batch_is_held_once() {
    let env = TestEnv::new();
    let one = encoded("out = batch(0, [(0, 0, b'k', b'v' * 100)], first_timestamp=1700000000000)");
    let (a, b) = (env.path("a/t-0"), env.path("b/t-0"));
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    std::fs::write(b.join("00000000000000000000.log"), &one).unwrap();
    let claimed: u64 = 512 << 20;
    let mut huge = one.clone();
    huge[8..12].copy_from_slice(&((claimed - 12) as i32).to_be_bytes());
    let log = a.join("00000000000000000000.log");
    std::fs::write(&log, &huge).unwrap();
    std::fs::OpenOptions::new()
        .write(true)
        .open(&log)
        .unwrap()
        .set_len(claimed)
        .unwrap();
    let run = klog(env.dir.path(), &["diff", "a/t-0", "b/t-0"], None);
    assert_eq!(run.code, Some(1), "{}", run.stderr);
    run.assert_bounded("diff", 60, claimed + (claimed >> 3));
}
