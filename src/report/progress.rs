//! Progress on stderr, for people only: shown when stderr is a terminal,
//! the output is text and `--quiet` is not given. A background thread
//! polls the [`Meter`] the command hands to its walks (through their
//! options), so a scan pays one relaxed atomic add per batch.

use std::io::IsTerminal;
use std::sync::atomic::{AtomicBool, Ordering};

use kaen_log::log::walk::Meter;
use std::sync::Arc;

/// Whether a progress display may be shown at all: stderr is a terminal.
/// `--quiet` is the caller's to weigh ([`crate::report::Output::shows_progress`]).
fn enabled() -> bool {
    std::io::stderr().is_terminal()
}

/// A bar over the bytes of log the walks pass; cleared when dropped.
pub struct Progress {
    meter: &'static Meter,
    bar: indicatif::ProgressBar,
    stop: Arc<AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    /// Where the walks of the command count the bytes they read.
    pub fn meter(&self) -> &'static Meter {
        self.meter
    }

    /// [`meter`](Self::meter) of a progress display, if one is shown.
    pub fn meter_of(progress: &Option<Progress>) -> Option<&'static Meter> {
        progress.as_ref().map(Progress::meter)
    }

    /// A bar over `total()` bytes (the `.log` bytes the command reads,
    /// counted only when the bar is shown), advanced by the walks given its
    /// [`meter`](Self::meter); `None` when progress is not shown (stderr
    /// not a terminal, or `shown` false: `--quiet`, or the caller's output
    /// is not text).
    pub fn over(total: impl FnOnce() -> u64, shown: bool) -> Option<Progress> {
        if !shown || !enabled() {
            return None;
        }
        Progress::bytes(Some(total()))
    }

    /// A counter of the bytes walked with their rate, no total: for
    /// commands that read part of the log, or parts of it more than once.
    pub fn spinner(shown: bool) -> Option<Progress> {
        if !shown || !enabled() {
            return None;
        }
        Progress::bytes(None)
    }

    /// A bar over `total` bytes (a spinner without one), or `None` when
    /// progress is not shown.
    fn bytes(total: Option<u64>) -> Option<Progress> {
        if !enabled() {
            return None;
        }
        // Shown only once the scan has taken a second (KLOG_PROGRESS_DELAY_MS
        // overrides that, for tests): quick runs stay quiet.
        let delay = std::env::var("KLOG_PROGRESS_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(1000);
        let bar = indicatif::ProgressBar::with_draw_target(
            total,
            indicatif::ProgressDrawTarget::hidden(),
        );
        let template = match total {
            Some(_) => "{bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
            None => "{spinner} {bytes} of log read, {bytes_per_sec}",
        };
        bar.set_style(
            indicatif::ProgressStyle::with_template(template)
                .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
        );
        if delay == 0 {
            // Shown at once (not left to the thread's first turn, which a
            // loaded machine may give only after a short scan has ended).
            bar.set_draw_target(indicatif::ProgressDrawTarget::stderr());
            bar.tick();
        }
        let meter = Meter::for_process();
        let stop = Arc::new(AtomicBool::new(false));
        let (b, s) = (bar.clone(), stop.clone());
        let thread = std::thread::spawn(move || {
            let began = std::time::Instant::now();
            let mut shown = delay == 0;
            while !s.load(Ordering::Relaxed) {
                if !shown && began.elapsed().as_millis() >= delay {
                    b.set_draw_target(indicatif::ProgressDrawTarget::stderr());
                    shown = true;
                }
                b.set_position(meter.bytes());
                std::thread::sleep(std::time::Duration::from_millis(50));
            }
        });
        Some(Progress {
            meter,
            bar,
            stop,
            thread: Some(thread),
        })
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
