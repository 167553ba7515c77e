//! The readers of the internal topics (`replay-offsets`, `lag`, `groups`)
//! say what they could not read: a finding, exit 1 and `incomplete`,
//! never a silently shorter table. And `reset-offsets` reads its inputs
//! within bounds.

use crate::measure::klog;
use crate::support::{encoded, write_segment, TestEnv};

/// A CRC-valid batch whose attributes say gzip but whose records are
/// plain (the CRC covers the attributes, so only decompressing finds it).
const NOT_GZIP: &str = "batch(1, [(0, 0, KEY, VALUE)], attributes=1)";

/// A CRC-valid gzip batch of 257 MiB of zeros: past the 256 MiB a batch
/// may decompress to (`DecodeLimits`), as `verify-crc --records` finds it.
const BOMB: &str = "bomb(2)";

const HELPERS: &str = "import gzip, struct
def bomb(base):
    packed = gzip.compress(bytes(257 << 20), compresslevel=9, mtime=0)
    plain = batch(base, [(0, 0, None, None)])
    head = bytearray(plain[:61])
    head[21:23] = struct.pack('>h', 1)
    body = bytes(head[21:]) + packed
    head[8:12] = struct.pack('>i', 49 + len(packed))
    head[17:21] = struct.pack('>I', crc32c(body))
    return bytes(head) + packed
";

fn directory(env: &TestEnv) {
    let offsets = format!(
        "{HELPERS}
KEY = offset_commit_key('g', 'orders', 0)
VALUE = offset_commit_value(5, 1)
out = batch(0, [(0, 0, KEY, VALUE)]) + {NOT_GZIP} + {BOMB}"
    );
    write_segment(
        &env.path("data"),
        "__consumer_offsets-0",
        &encoded(&offsets),
    );
    let share = format!(
        "{HELPERS}
O = b'\\x05' * 16
KEY = coordinator_key(0, 'sg', O, 0)
VALUE = share_snapshot_value(0, 1, 0, 0, 1, 1, [(0, 9, 0, 1)])
out = batch(0, [(0, 0, KEY, VALUE)]) + {NOT_GZIP} + {BOMB}"
    );
    write_segment(&env.path("data"), "__share_group_state-0", &encoded(&share));
}

#[test]
fn round2_undecompressable_internal_batches_make_every_view_incomplete() {
    let env = TestEnv::new();
    directory(&env);
    // verify-crc --records names both batches; the views reuse its words.
    let v = klog(env.dir.path(), &["verify-crc", "--records", "data"], None);
    assert_eq!(v.code, Some(1), "{}", v.stderr);
    let out = String::from_utf8_lossy(&v.stdout).to_string() + &v.stderr;
    assert!(out.contains("decompress_failed"), "{out}");
    assert!(out.contains("decompressed_too_large"), "{out}");
    for (args, partitions) in [
        (
            &["replay-offsets", "--format", "json", "data"][..],
            &["__consumer_offsets-0"][..],
        ),
        (
            &["lag", "--format", "json", "data"][..],
            &["__consumer_offsets-0"][..],
        ),
        (
            &["groups", "--format", "json", "data"][..],
            &["__consumer_offsets-0", "__share_group_state-0"][..],
        ),
    ] {
        let run = klog(env.dir.path(), args, None);
        assert_eq!(run.code, Some(1), "{args:?}: {}", run.stderr);
        run.assert_bounded(args[0], 60, 257 << 20);
        let doc: serde_json::Value = serde_json::from_slice(&run.stdout).unwrap();
        let got: Vec<(&str, i64, i64)> = doc["incomplete"]
            .as_array()
            .unwrap()
            .iter()
            .map(|i| {
                (
                    i["partition"].as_str().unwrap(),
                    i["unread"].as_i64().unwrap(),
                    i["first_offset"].as_i64().unwrap(),
                )
            })
            .collect();
        let want: Vec<(&str, i64, i64)> = partitions.iter().map(|p| (*p, 2, 1)).collect();
        assert_eq!(got, want, "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("offset 1"), "{args:?}: {}", run.stderr);
        assert!(run.stderr.contains("offset 2"), "{args:?}: {}", run.stderr);
    }
}

/// `reset-offsets` of group kitchen from the plan file `plan`, with `extra` arguments.
fn reset_plan(env: &TestEnv, plan: &str, extra: &[&str]) -> crate::measure::Run {
    let mut args = vec![
        "reset-offsets",
        "fixtures/groups",
        "--group",
        "kitchen",
        "--from-file",
        plan,
    ];
    args.extend_from_slice(extra);
    klog(env.dir.path(), &args, None)
}

#[test]
fn round2_a_reset_plan_is_read_within_bounds() {
    let env = TestEnv::new();
    // /dev/zero: no line end, ever. Refused at its first line, in bounded memory.
    let run = reset_plan(&env, "/dev/zero", &[]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("/dev/zero") && run.stderr.contains("line 1: longer than 131072 bytes"),
        "{}",
        run.stderr
    );
    run.assert_bounded("reset-offsets --from-file /dev/zero", 30, 0);
    // A bad row names its line.
    std::fs::write(env.path("bad.csv"), "orders,0,5\norders,x,5\n").unwrap();
    let run = reset_plan(&env, "bad.csv", &[]);
    assert_eq!(run.code, Some(2), "{}", run.stderr);
    assert!(
        run.stderr.contains("bad.csv")
            && run
                .stderr
                .contains("line 2: the partition \"x\" is not a number"),
        "{}",
        run.stderr
    );
}

#[test]
fn round2_a_reset_plan_is_csv() {
    // kafka-consumer-groups' CsvUtils quotes a group name holding a comma or
    // a quote: the row of group `a,"b` is its own, not a five-field line.
    let env = TestEnv::new();
    std::fs::write(
        env.path("plan.csv"),
        "\"a,\"\"b\",orders,0,3\nkitchen,orders,0,2\n",
    )
    .unwrap();
    let run = reset_plan(&env, "plan.csv", &["--export"]);
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert_eq!(String::from_utf8_lossy(&run.stdout), "orders,0,2\n");
}

#[test]
fn r49_19_the_last_date_time_of_year_9999_is_an_instant() {
    // 9999-12-31T23:59:59.999Z was refused as outside the date-times klog
    // reads (the date library's instants end a day earlier); Kafka's
    // Utils.getDateTime reads it, and so does klog: past every record, it
    // resets to the log end.
    let env = TestEnv::new();
    for when in ["9999-12-31T23:59:59.999Z", "9999-12-31T23:59:59Z"] {
        let run = klog(
            env.dir.path(),
            &[
                "reset-offsets",
                "fixtures/groups",
                "--group",
                "kitchen",
                "--topic",
                "orders",
                "--to-datetime",
                when,
            ],
            None,
        );
        assert_eq!(run.code, Some(0), "{}", run.stderr);
        assert!(!run.stderr.contains("outside"), "{}", run.stderr);
    }
}
