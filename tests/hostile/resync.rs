//! Resync past damage is linear: junk in the middle of a segment, and a
//! file crafted so that a plausible batch header starts every 64 bytes,
//! are searched in bounded time.

use std::time::{Duration, Instant};

use crate::support::{junk, stdout, TestEnv};

/// A 61-byte v2 header that passes every cheap check (magic 2, no unused
/// attribute bits, counts that fit) and claims `size` bytes, with a CRC that
/// does not match.
fn plausible_header(size: u64) -> Vec<u8> {
    let mut h = Vec::with_capacity(64);
    h.extend_from_slice(&0i64.to_be_bytes()); // baseOffset
    h.extend_from_slice(&((size - 12) as i32).to_be_bytes()); // batchLength
    h.extend_from_slice(&0i32.to_be_bytes()); // partitionLeaderEpoch
    h.push(2); // magic
    h.extend_from_slice(&0xdead_beefu32.to_be_bytes()); // crc (wrong)
    h.extend_from_slice(&0i16.to_be_bytes()); // attributes
    h.extend_from_slice(&0i32.to_be_bytes()); // lastOffsetDelta
    h.extend_from_slice(&0i64.to_be_bytes()); // baseTimestamp
    h.extend_from_slice(&0i64.to_be_bytes()); // maxTimestamp
    h.extend_from_slice(&(-1i64).to_be_bytes()); // producerId
    h.extend_from_slice(&(-1i16).to_be_bytes()); // producerEpoch
    h.extend_from_slice(&(-1i32).to_be_bytes()); // baseSequence
    h.extend_from_slice(&0i32.to_be_bytes()); // recordsCount
    h
}

fn verify_bounded(env: &TestEnv, path: &str) -> String {
    let started = Instant::now();
    let o = env.run(&["verify-crc", "--no-index-checks", path], None);
    let took = started.elapsed();
    assert!(took < Duration::from_secs(15), "verify-crc took {took:?}");
    assert_eq!(o.status.code(), Some(1));
    stdout(&o)
}

#[test]
fn r5_junk_in_the_middle_is_passed_over_and_batches_after_it_are_found() {
    let env = TestEnv::new();
    let dir = env.path("fixtures/data/orders-0");
    let log = dir.join("00000000000000000090.log");
    let clean = std::fs::read(&log).unwrap();
    // 2 MiB of pseudo-random bytes between the first batch and the rest.
    let junk = junk(2 << 20, 0x2545_f491_4f6c_dd1d);
    let mut bytes = clean[..317].to_vec();
    bytes.extend(&junk);
    bytes.extend(&clean[317..]);
    std::fs::write(&log, &bytes).unwrap();
    let text = verify_bounded(&env, "fixtures/data/orders-0");
    let resumes = 317 + junk.len();
    assert!(
        text.contains(&format!("valid batches resume at position {resumes}")),
        "{text}"
    );
}

#[test]
fn r5_a_file_of_plausible_headers_ends_the_search_in_linear_time() {
    // Every 64 bytes a header claims the rest of an 8 MiB file: without a
    // budget each would be checksummed over megabytes (quadratic).
    let env = TestEnv::new();
    let dir = env.path("crafted/t-0");
    std::fs::create_dir_all(&dir).unwrap();
    let len: u64 = 8 << 20;
    let mut bytes = Vec::with_capacity(len as usize);
    while (bytes.len() as u64) + 64 <= len {
        let at = bytes.len() as u64;
        let mut h = plausible_header(len - at);
        h.resize(64, 0);
        bytes.extend(h);
    }
    // The first entry: a size field that is too small, so framing breaks at 0.
    bytes[8..12].copy_from_slice(&3i32.to_be_bytes());
    std::fs::write(dir.join("00000000000000000000.log"), &bytes).unwrap();
    let text = verify_bounded(&env, "crafted/t-0");
    assert!(
        text.contains("the search for valid batches after it gave up at position"),
        "{text}"
    );
}

/// See: hostile input, round three, item 19. A segment that grows while it
/// is read (something appends to a directory whose lock nobody holds):
/// the read saw batch 0 and the first half of batch 1; before the walk
/// reached batch 1, its rest and batch 2 were appended. As read, the file
/// ends in a torn tail (Kafka's `FileLogInputStream.nextBatch` stops at a
/// batch whose size runs past the end); the batch appended after that end
/// must not make it "damage, valid batches resume later".
#[test]
fn r19_a_segment_that_grows_while_read_ends_in_a_torn_tail() {
    use kaen_log::log::{Partition, Policy};
    use kaen_log::DecodeErrorKind;
    use std::io::Write;
    let env = TestEnv::new();
    let batch = |base: i64| {
        crate::support::encoded(&format!(
            "out = batch({base}, [(0, 0, b'k', b'v' * 200)], first_timestamp=1700000000000)"
        ))
    };
    let (b0, b1, b2) = (batch(0), batch(1), batch(2));
    let dir = env.path("grow/t-0");
    std::fs::create_dir_all(&dir).unwrap();
    let log = dir.join("00000000000000000000.log");
    let half = b1.len() / 2;
    std::fs::write(&log, [&b0[..], &b1[..half]].concat()).unwrap();
    let p = Partition::open(&dir).unwrap();
    let mut walk = p.walk(Policy::VALID_ENTRIES);
    let first = walk.next_entry().unwrap().map(|w| w.segment.base_offset);
    assert_eq!(first, Some(0), "batch 0 is read");
    // The writer finishes batch 1 and appends batch 2.
    let mut f = std::fs::OpenOptions::new().append(true).open(&log).unwrap();
    f.write_all(&[&b1[half..], &b2[..]].concat()).unwrap();
    drop(f);
    while walk.next_entry().unwrap().is_some() {}
    let damage = walk.take_damage();
    assert_eq!(damage.len(), 1, "{damage:?}");
    assert_eq!(damage[0].position, b0.len() as u64);
    assert!(
        matches!(damage[0].error.kind, DecodeErrorKind::PastEndOfFile { .. }),
        "a torn tail, as the file was when read: {:?}",
        damage[0].error
    );
    assert!(damage[0].resumes.is_none(), "{damage:?}");
}
