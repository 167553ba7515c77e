//! Repair copies the bytes it cuts in bounded chunks, and a rerun after an
//! interrupted repair completes the sidecar it started instead of writing a
//! second one.

use crate::support::{stderr, stdout, TestEnv};

#[test]
fn r8_an_interrupted_sidecar_is_completed_not_duplicated() {
    let env = TestEnv::new();
    let log = env.path("fixtures/truncated/orders-0/00000000000000000090.log");
    let bytes = std::fs::read(&log).unwrap();
    // The torn tail starts at 2153 (fixtures/README.md): an earlier repair
    // copied only half of it before it was stopped.
    let cut = &bytes[2153..];
    let sidecar = env.path("fixtures/truncated/orders-0/00000000000000000090.log.cut-2153");
    std::fs::write(&sidecar, &cut[..cut.len() / 2]).unwrap();
    let o = env.run(
        &["verify-crc", "--repair", "fixtures/truncated/orders-0"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}{}", stdout(&o), stderr(&o));
    assert_eq!(std::fs::read(&sidecar).unwrap(), cut);
    assert!(!env
        .path("fixtures/truncated/orders-0/00000000000000000090.log.cut-2153.2")
        .exists());
    assert_eq!(std::fs::read(&log).unwrap(), &bytes[..2153]);
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
    let klog = assert_cmd::cargo::cargo_bin("klog");
    #[allow(
        clippy::zombie_processes,
        reason = "reaped below by wait4, to read its rusage"
    )]
    let child = std::process::Command::new(&klog)
        .args(["verify-crc", "--repair", "fixtures/data/orders-0"])
        .current_dir(env.dir.path())
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap();
    // wait4 reports the child's own peak RSS (ru_maxrss, KiB on Linux).
    let mut status = 0;
    // SAFETY: an all-zero rusage is a valid value for wait4 to fill.
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    // SAFETY: the pid is our own child, not yet reaped; both pointers are valid.
    let pid = unsafe { libc::wait4(child.id() as i32, &mut status, 0, &mut usage) };
    assert_eq!(pid, child.id() as i32);
    assert!(
        libc::WIFEXITED(status) && libc::WEXITSTATUS(status) == 0,
        "status {status}"
    );
    let peak_kib = usage.ru_maxrss as u64;
    assert!(
        peak_kib < 32 * 1024,
        "peak RSS {peak_kib} KiB for a 48 MiB cut"
    );
    assert_eq!(std::fs::metadata(&log).unwrap().len(), len);
    let sidecar = env.path(&format!(
        "fixtures/data/orders-0/00000000000000000090.log.cut-{len}"
    ));
    assert_eq!(std::fs::metadata(&sidecar).unwrap().len(), 48 << 20);
}
