//! Worker counts past the cores: clamped, said once on stderr, the output
//! unchanged.

use crate::support::{stderr, stdout, TestEnv};

#[test]
fn round2_jobs_past_the_cores_are_clamped_and_said_once() {
    let env = TestEnv::new();
    let cores = std::thread::available_parallelism().unwrap().get();
    let dirs = ["fixtures/data", "fixtures/groups", "fixtures/kafka"];
    let run = |jobs: &str| {
        let mut args = vec!["verify-crc", "--format", "json", "--jobs", jobs];
        args.extend(dirs);
        env.run(&args, None)
    };
    let one = run("1");
    let many = run("3000");
    assert_eq!(many.status.code(), one.status.code(), "{}", stderr(&many));
    assert_eq!(stdout(&many), stdout(&one));
    let note = format!("klog: note: --jobs 3000 clamped to the {cores} cores available\n");
    assert_eq!(stderr(&many).matches(&note).count(), 1, "{}", stderr(&many));
    assert!(!stderr(&one).contains("clamped"), "{}", stderr(&one));
    // dump-segment's --threads likewise.
    let o = env.run(
        &[
            "dump-segment",
            "--threads",
            "60000",
            "fixtures/data/orders-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let note = format!("klog: note: --threads 60000 clamped to the {cores} cores available\n");
    assert_eq!(stderr(&o).matches(&note).count(), 1, "{}", stderr(&o));
}
