//! Repair copies the bytes it cuts in bounded chunks, and a rerun after an
//! interrupted repair completes the sidecar it started instead of writing a
//! second one.

use crate::measure::klog;
use crate::support::{stderr, stdout, TestEnv};

#[test]
fn r8_an_interrupted_sidecar_is_completed_not_duplicated() {
    let env = TestEnv::new();
    let log = env.path("fixtures/truncated/orders-0/00000000000000000090.log");
    let bytes = std::fs::read(&log).unwrap();
    // The torn tail starts at 2146 (fixtures/README.md): an earlier repair
    // copied only half of it before it was stopped.
    let cut = &bytes[2146..];
    let sidecar = env.path("fixtures/truncated/orders-0/00000000000000000090.log.cut-2146");
    std::fs::write(&sidecar, &cut[..cut.len() / 2]).unwrap();
    let o = env.run(
        &["verify-crc", "--repair", "fixtures/truncated/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(std::fs::read(&sidecar).unwrap(), cut);
    assert!(!env
        .path("fixtures/truncated/orders-0/00000000000000000090.log.cut-2146.2")
        .exists());
    assert_eq!(std::fs::read(&log).unwrap(), &bytes[..2146]);
}

#[test]
fn r8_a_large_cut_is_copied_in_bounded_memory() {
    // 48 MiB of preallocated zeros after the last batch: repair moves them
    // aside. The copy goes through a 1 MiB buffer, so the peak stays far
    // below the cut's size.
    let env = TestEnv::new();
    let log = env.path("fixtures/data/orders-0/00000000000000000090.log");
    let len = std::fs::metadata(&log).unwrap().len();
    let f = std::fs::OpenOptions::new().write(true).open(&log).unwrap();
    f.set_len(len + (48 << 20)).unwrap();
    drop(f);
    let run = klog(
        env.dir.path(),
        &["verify-crc", "--repair", "fixtures/data/orders-0"],
        None,
    );
    assert_eq!(run.code, Some(0), "{}", run.stderr);
    assert!(
        run.peak < 32 << 20,
        "peak RSS {} KiB for a 48 MiB cut",
        run.peak >> 10
    );
    assert_eq!(std::fs::metadata(&log).unwrap().len(), len);
    let sidecar = env.path(&format!(
        "fixtures/data/orders-0/00000000000000000090.log.cut-{len}"
    ));
    assert_eq!(std::fs::metadata(&sidecar).unwrap().len(), 48 << 20);
}
