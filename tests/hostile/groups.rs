//! Offsets logs of many groups: `lag` looks each commit's group, member
//! and partition up in maps keyed once, so its cost grows with the
//! commits, not with commits × groups (#49 item 9: 40,000 groups took 8 s
//! and a million did not finish in 5 minutes while each commit scanned the
//! group list). No test here is timed: the quick one checks every group's
//! row of a large log and the memory that took; the measurement of a
//! million groups is `#[ignore]`d and prints its figures:
//!
//! ```text
//! cargo test --release --test hostile -- --ignored --nocapture r49_lag_of_a_million_groups
//! ```
//!
//! (KLOG_GROUPS=N sets another count); klog-reliability(7) lists the figure.

use crate::measure::{klog, klog_in, Run, BASE_BOUND};
use crate::support::{encoded, write_segment, TestEnv};

/// Records of orders-0: every group commits at `i % RECORDS`.
const RECORDS: usize = 100;

/// A data directory `data` holding orders-0 (RECORDS records) and an
/// offsets topic of `groups` groups, each committing once on orders-0 with
/// no group metadata (simple groups, as `assign()` consumers make), appended
/// by klog's own append path from JSON lines of the independent encoder's
/// keys and values. Returns the offsets log's size in bytes.
fn many_groups(env: &TestEnv, groups: usize) -> u64 {
    let orders = encoded(&format!(
        "out = batch(0, [(i, 0, None, b'v') for i in range({RECORDS})])"
    ));
    write_segment(&env.path("data"), "orders-0", &orders);
    let lines = env.path("commits.json");
    let fixtures = crate::support::repo()
        .join("fixtures")
        .display()
        .to_string();
    let program = format!(
        "import base64, json, sys\nsys.path.insert(0, {fixtures:?})\nimport encoder as e\n\
         b = lambda v: base64.b64encode(v).decode()\n\
         with open(sys.argv[1], 'w') as f:\n\
         \x20   for i in range({groups}):\n\
         \x20       k = e.offset_commit_key('group-%07d' % i, 'orders', 0)\n\
         \x20       v = e.offset_commit_value(i % {RECORDS}, 1)\n\
         \x20       f.write('{{\"key\": {{\"base64\": \"%s\"}}, \"value\": {{\"base64\": \"%s\"}}}}\\n' % (b(k), b(v)))\n"
    );
    let o = std::process::Command::new("python3")
        .arg("-c")
        .arg(program)
        .arg(&lines)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let data = env.path("data");
    let run = klog_in(
        &env.path(""),
        &[
            "produce",
            data.to_str().unwrap(),
            "--topic",
            "__consumer_offsets",
            "--input-format",
            "json",
            "--batch-size",
            "2000",
        ],
        Some(&lines),
        Some(std::path::Path::new("/dev/null")),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    std::fs::metadata(data.join("__consumer_offsets-0/00000000000000000000.log"))
        .unwrap()
        .len()
}

/// `lag --by group --format csv` over `data`, its rows written to `out`.
fn lag_by_group(env: &TestEnv, out: &std::path::Path) -> Run {
    let run = klog(
        &env.path(""),
        &[
            "lag",
            "--now-ms",
            "1700000100000",
            "--by",
            "group",
            "--format",
            "csv",
            "data",
        ],
        Some(out),
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    run
}

/// Every group's row comes out with its lag (RECORDS − its commit, the
/// log end with no checkpoint), once, in order; the run's memory grows
/// with the groups, not faster: about 1.3 KB a group (the log holds 58
/// bytes a commit), for the replayed table, each group's view and row,
/// and the rendered table: 305 MiB at 200,000 groups in a debug build.
#[test]
fn r49_lag_of_many_groups_gives_each_group_its_row() {
    let env = TestEnv::new();
    let groups = 200_000;
    let log = many_groups(&env, groups);
    let out = env.path("lag.csv");
    let run = lag_by_group(&env, &out);
    let text = std::fs::read_to_string(&out).unwrap();
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("group,partitions,lag,pending_records"));
    let mut n = 0;
    for (i, line) in lines.enumerate() {
        let lag = RECORDS - i % RECORDS;
        assert_eq!(line, format!("group-{i:07},1,{lag},{lag}"));
        n += 1;
    }
    assert_eq!(n, groups);
    let bound = BASE_BOUND + 30 * log;
    assert!(
        run.peak < bound,
        "peak RSS {} MiB, bound {} MiB",
        run.peak >> 20,
        bound >> 20
    );
}

/// The measurement behind klog-reliability(7): `lag` over a million
/// groups (KLOG_GROUPS overrides the count). Prints the wall time and peak
/// RSS; asserts only the rows.
#[test]
#[ignore = "a measurement: run with --release --ignored --nocapture"]
fn r49_lag_of_a_million_groups() {
    let env = TestEnv::new();
    let groups: usize = std::env::var("KLOG_GROUPS")
        .ok()
        .and_then(|n| n.parse().ok())
        .unwrap_or(1_000_000);
    let log = many_groups(&env, groups);
    let out = env.path("lag.csv");
    let run = lag_by_group(&env, &out);
    let rows = std::fs::read_to_string(&out).unwrap().lines().count() - 1;
    assert_eq!(rows, groups);
    println!(
        "lag --by group over {groups} groups ({} MiB of offsets log): {:.1} s, peak RSS {} MiB",
        log >> 20,
        run.took.as_secs_f64(),
        run.peak >> 20
    );
}
