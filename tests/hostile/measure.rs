//! Running klog as a child process and reading what it cost: wall time and
//! peak resident memory (from `wait4`'s rusage, taken by a small launcher).

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

/// Peak RSS every run may reach beyond the data it must hold: the bound
/// the review set is "64 MiB plus one decompressed batch".
pub const BASE_BOUND: u64 = 64 << 20;

/// What one run of klog cost.
#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub took: Duration,
    /// Peak resident set size in bytes.
    pub peak: u64,
    pub stdout: Vec<u8>,
    pub stderr: String,
}

impl Run {
    /// Assert the run took under `secs` seconds and peaked under
    /// [`BASE_BOUND`] + `held` bytes.
    pub fn assert_bounded(&self, what: &str, secs: u64, held: u64) {
        assert!(
            self.took < Duration::from_secs(secs),
            "{what}: took {:?} (bound {secs} s)",
            self.took
        );
        let bound = BASE_BOUND + held;
        assert!(
            self.peak < bound,
            "{what}: peak RSS {} MiB, bound {} MiB",
            self.peak >> 20,
            bound >> 20
        );
    }
}

/// Run klog with `args` in `dir` through `tests/hostile/peak.py` (see
/// there why a launcher); stdout goes to `stdout_file` when given (large
/// outputs), else it is kept.
pub fn klog(dir: &Path, args: &[&str], stdout_file: Option<&Path>) -> Run {
    klog_in(dir, args, None, stdout_file)
}

/// [`klog`] with stdin read from `stdin_file`.
pub fn klog_in(
    dir: &Path,
    args: &[&str],
    stdin_file: Option<&Path>,
    stdout_file: Option<&Path>,
) -> Run {
    let klog = assert_cmd::cargo::cargo_bin("klog");
    let peak = crate::support::repo().join("tests/hostile/peak.py");
    let id = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let err_path = dir.join(format!(".stderr-{id}"));
    let out_path = stdout_file
        .map(Path::to_path_buf)
        .unwrap_or_else(|| dir.join(format!(".stdout-{id}")));
    let mut launcher = Command::new("python3");
    launcher.arg(&peak).arg(&out_path).arg(&err_path);
    if let Some(file) = stdin_file {
        launcher.arg("--stdin").arg(file);
    }
    let o = launcher
        .arg(&klog)
        .args(args)
        .current_dir(dir)
        .env("COLUMNS", "100")
        .env("NO_COLOR", "1")
        .env("TZ", "UTC")
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let cost: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let stdout = match stdout_file {
        Some(_) => Vec::new(),
        None => std::fs::read(&out_path).unwrap(),
    };
    let stderr = std::fs::read_to_string(&err_path).unwrap_or_default();
    let _ = std::fs::remove_file(&err_path);
    if stdout_file.is_none() {
        let _ = std::fs::remove_file(&out_path);
    }
    Run {
        code: cost["code"].as_i64().map(|c| c as i32),
        took: Duration::from_secs_f64(cost["secs"].as_f64().unwrap()),
        peak: cost["peak_kib"].as_u64().unwrap() * 1024,
        stdout,
        stderr,
    }
}

static NEXT: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
