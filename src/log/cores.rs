//! One budget of cores for the whole process.
//!
//! Two things run threads of their own: the jobs of a parallel
//! verification (one partition each) and a segment reader's read-ahead.
//! Either would be right alone; together, unchecked, `--jobs 2` on two
//! cores started two read-ahead threads per job and ran six busy threads
//! on two cores. So every such thread first takes a core from this budget
//! and gives it back when it ends, and a reader reads ahead only on a core
//! no one else holds: with as many partitions walked at once as there are
//! cores, nothing reads ahead; with fewer, the spare cores go to read-ahead
//! (a verification of at least as many partitions as cores holds them all
//! itself: see `verify::verify_partitions`).
//!
//! The budget is [`cores`] (`available_parallelism`, which follows the
//! CPU affinity mask: under `taskset -c 0` it is one, and nothing is
//! started beside the main thread). The thread that runs `main` holds one
//! core from the start; a thread that only waits for others (a job
//! runner, a reader whose read-ahead threads do the checking) lends its
//! core to one of them.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Mutex, MutexGuard, OnceLock};

/// [`cores`], once asked or set; 0 before.
static CORES: AtomicUsize = AtomicUsize::new(0);

/// The cores this process may run on.
pub fn cores() -> usize {
    match CORES.load(Ordering::Relaxed) {
        0 => {
            let n = std::thread::available_parallelism().map_or(1, |n| n.get());
            // The first answer stays, whoever gave it.
            match CORES.compare_exchange(0, n, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => n,
                Err(set) => set,
            }
        }
        n => n,
    }
}

/// Run on `n` cores (at least one) instead of [`cores`]' default: a
/// command's `--threads`. Only before anything has asked how many there
/// are; `false` after.
pub fn set_cores(n: usize) -> bool {
    CORES
        .compare_exchange(0, n.max(1), Ordering::Relaxed, Ordering::Relaxed)
        .is_ok()
}

/// Cores not held by any thread.
pub struct Budget {
    free: Mutex<usize>,
}

impl Budget {
    /// A budget of `cores`, one of which the calling thread holds.
    pub const fn new(cores: usize) -> Self {
        Budget {
            free: Mutex::new(cores.saturating_sub(1)),
        }
    }

    fn lock(&self) -> MutexGuard<'_, usize> {
        // A count is consistent even if a holder panicked.
        self.free.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Take up to `want` free cores (possibly none); they come back when
    /// the permits are dropped.
    pub fn take(&self, want: usize) -> Permits<'_> {
        let mut free = self.lock();
        let n = want.min(*free);
        *free -= n;
        Permits { budget: self, n }
    }

    /// Cores no thread holds now.
    pub fn free(&self) -> usize {
        *self.lock()
    }
}

/// Cores taken from a [`Budget`], given back on drop.
#[must_use = "the cores go back when the permits are dropped"]
pub struct Permits<'b> {
    budget: &'b Budget,
    n: usize,
}

impl Permits<'_> {
    /// How many cores these permits hold.
    pub fn count(&self) -> usize {
        self.n
    }
}

impl Drop for Permits<'_> {
    fn drop(&mut self) {
        *self.budget.lock() += self.n;
    }
}

/// The process's budget, of [`cores`].
pub fn budget() -> &'static Budget {
    static BUDGET: OnceLock<Budget> = OnceLock::new();
    BUDGET.get_or_init(|| Budget::new(cores()))
}

/// Take up to `want` cores from the process's budget.
pub fn take(want: usize) -> Permits<'static> {
    budget().take(want)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn permits_never_exceed_the_cores_and_come_back() {
        let b = Budget::new(2);
        assert_eq!(b.free(), 1);
        let first = b.take(2);
        assert_eq!(first.count(), 1);
        let second = b.take(1);
        assert_eq!(second.count(), 0);
        drop(second);
        assert_eq!(b.free(), 0);
        drop(first);
        assert_eq!(b.free(), 1);

        let one = Budget::new(1);
        assert_eq!(one.take(3).count(), 0);
        let none = Budget::new(0);
        assert_eq!(none.take(1).count(), 0);
    }

    #[test]
    fn many_threads_share_one_budget() {
        let b = Budget::new(4);
        let held = std::sync::atomic::AtomicUsize::new(0);
        let most = std::sync::atomic::AtomicUsize::new(0);
        std::thread::scope(|s| {
            for _ in 0..8 {
                s.spawn(|| {
                    for _ in 0..200 {
                        let p = b.take(2);
                        let now = held.fetch_add(p.count(), std::sync::atomic::Ordering::SeqCst)
                            + p.count();
                        most.fetch_max(now, std::sync::atomic::Ordering::SeqCst);
                        held.fetch_sub(p.count(), std::sync::atomic::Ordering::SeqCst);
                    }
                });
            }
        });
        assert!(most.into_inner() <= 3);
        assert_eq!(b.free(), 3);
    }
}
