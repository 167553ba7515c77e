//! Progress on stderr, for people only: shown when stderr is a terminal,
//! the output is text and `--quiet` is not given. A background thread
//! polls a shared byte counter the scan advances, so the scan itself pays
//! one relaxed atomic add per batch.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

static QUIET: OnceLock<bool> = OnceLock::new();

/// Silence every progress display (`--quiet`).
pub fn set_quiet(quiet: bool) {
    let _ = QUIET.set(quiet);
}

/// Whether a progress display may be shown at all.
pub fn enabled() -> bool {
    !QUIET.get().copied().unwrap_or(false) && std::io::stderr().is_terminal()
}

/// A bar over a number of bytes; cleared when dropped.
pub struct Progress {
    bar: indicatif::ProgressBar,
    done: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// A bar over `total` bytes, or `None` when progress is not shown.
    pub fn bytes(total: u64) -> Option<Progress> {
        if !enabled() {
            return None;
        }
        let bar = indicatif::ProgressBar::new(total);
        bar.set_style(
            indicatif::ProgressStyle::with_template(
                "{bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            )
            .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        let done = Arc::new(AtomicU64::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let (b, d, s) = (bar.clone(), done.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            while !s.load(Ordering::Relaxed) {
                b.set_position(d.load(Ordering::Relaxed));
                std::thread::sleep(std::time::Duration::from_millis(100));
            }
        });
        Some(Progress {
            bar,
            done,
            stop,
            thread: Some(thread),
        })
    }

    /// The counter the scan adds its bytes to.
    pub fn counter(&self) -> Arc<AtomicU64> {
        self.done.clone()
    }
}

impl Drop for Progress {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}
