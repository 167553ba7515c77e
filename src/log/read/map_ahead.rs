//! A second core's share of checking a mapped segment.
//!
//! A segment read through a map ([`SegmentReader::map`]) is checked where
//! it lies, so there is no read to overlap with the checks; the checks
//! themselves can be shared, though: the CRC of every byte, and the kernel
//! mapping every page. With a core free in the process's
//! [budget](crate::log::cores), one thread walks the map ahead of the
//! reader, framing each entry as the reader does, and checks the plain v2
//! batches that start in every other stretch of the file (the odd ones:
//! `position / stretch` is odd), mapping those stretches' pages as it goes;
//! the reader checks the batches of the even stretches itself, maps only
//! their pages, and takes the thread's results in order. The thread reads
//! the headers of the reader's stretches with positioned reads, not
//! through the map, so as not to fault in, a header at a time, pages the
//! reader maps in one call. As with the
//! read-ahead threads of a file read into buffers, the reader's own framing
//! stays the authority: it uses a result only for a batch at the same
//! position with the same size, computed on the same bytes.
//!
//! The thread hands over a stretch's results when it has checked the whole
//! stretch, through a channel that holds one: it is never more than two of
//! its stretches (four in all) ahead of the reader, so the pages it has
//! mapped ahead stay bounded however large the file. It stops at the first
//! entry it cannot frame (the reader names the defect and checks the rest
//! itself), at the end of the file, and when the reader is dropped, which
//! waits for it.
//!
//! [`SegmentReader::map`]: super::SegmentReader::map

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, SyncSender};
use std::sync::Arc;
use std::thread::JoinHandle;

use super::frame::{frame, plain_v2, Checked, Done, Frame};
use super::mapped::Map;
use crate::format::batch::{BatchView, Depth, HEADER_SIZE_UP_TO_MAGIC};
use crate::log::cores::Permits;

/// The stretches the file is dealt out in. Large enough that a stretch
/// holds many batches (58 KB ones: about 70) and the two threads seldom
/// read the same pages at once; small enough that neither waits long for
/// the other at the start or the end.
pub(crate) const STRETCH: u64 = 4 << 20;

/// Whether stretch `k` is the thread's (the odd ones; the even ones are the reader's).
fn odd(k: u64) -> bool {
    !k.is_multiple_of(2)
}

/// The thread checking a map's odd stretches, and what it has checked.
pub(crate) struct MapAhead {
    /// One stretch's results at a time, with the stretch's number; `None`
    /// once dropped (a thread blocked sending then stops).
    results: Option<Receiver<(u64, Vec<Checked>)>>,
    /// Results received, in order, for batches the reader has not come to yet.
    pending: std::collections::VecDeque<Checked>,
    /// The last stretch handed over.
    handed: Option<u64>,
    /// The last stretch of the reader's own that it has mapped.
    mapped: Option<u64>,
    stretch: u64,
    stop: Arc<AtomicBool>,
    thread: Option<JoinHandle<()>>,
    _core: Permits<'static>,
}

impl MapAhead {
    /// Start the thread on `map` from position `from` (an entry's start),
    /// checking at `depth`, on the core `core` holds; `None` if it cannot
    /// be started.
    pub(crate) fn start(
        map: Arc<Map>,
        file: Arc<File>,
        from: u64,
        depth: Depth,
        stretch: u64,
        core: Permits<'static>,
    ) -> Option<MapAhead> {
        let stretch = stretch.max(1);
        let (out, results) = mpsc::sync_channel(1);
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let thread = std::thread::Builder::new()
            .name("klog-map-ahead".into())
            .spawn(move || check_odd_stretches(&map, &file, from, depth, stretch, &out, &stopped))
            .ok()?;
        Some(MapAhead {
            results: Some(results),
            pending: std::collections::VecDeque::new(),
            handed: None,
            mapped: None,
            stretch,
            stop,
            thread: Some(thread),
            _core: core,
        })
    }

    /// The thread's check of the batch of `size` bytes at `at`, waiting for
    /// it if need be; `None` when the batch is not the thread's, or the
    /// thread stopped before it.
    /// Whether the entry at `at` is the first the reader reads of a
    /// stretch of its own: the end of that stretch, up to which the reader
    /// then maps the pages.
    pub(crate) fn enters_own_stretch(&mut self, at: u64) -> Option<u64> {
        let k = at / self.stretch;
        if odd(k) || self.mapped == Some(k) {
            return None;
        }
        self.mapped = Some(k);
        Some((k + 1) * self.stretch)
    }

    pub(crate) fn take(&mut self, at: u64, size: usize) -> Option<Done> {
        let k = at / self.stretch;
        if !odd(k) {
            return None;
        }
        loop {
            while let Some(c) = self.pending.front().copied() {
                if c.position > at {
                    return None;
                }
                self.pending.pop_front();
                if c.position == at {
                    return (c.size == size).then_some(c.done);
                }
            }
            if self.handed.is_some_and(|h| h >= k) {
                return None;
            }
            let (handed, checked) = self.results.as_ref()?.recv().ok()?;
            self.handed = Some(handed);
            self.pending.extend(checked);
        }
    }
}

impl Drop for MapAhead {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
        self.results = None;
        if let Some(thread) = self.thread.take() {
            let _ = thread.join();
        }
    }
}

/// The thread: frame every entry from `at`, check the plain v2 batches
/// that start in odd stretches, until the end, an entry it cannot frame,
/// `stop`, or a reader that no longer takes results.
fn check_odd_stretches(
    map: &Map,
    file: &File,
    mut at: u64,
    depth: Depth,
    stretch: u64,
    out: &SyncSender<(u64, Vec<Checked>)>,
    stop: &AtomicBool,
) {
    let bytes = map.bytes();
    let end = bytes.len() as u64;
    let mut scratch = Vec::new();
    // The odd stretch being checked, and its results so far.
    let mut current: Option<(u64, Vec<Checked>)> = None;
    let hand_over = |done: Option<(u64, Vec<Checked>)>| done.is_none_or(|d| out.send(d).is_ok());
    while !stop.load(Ordering::Relaxed) && end - at > HEADER_SIZE_UP_TO_MAGIC as u64 {
        let start = at as usize;
        let k = at / stretch;
        let mut head = [0u8; HEADER_SIZE_UP_TO_MAGIC];
        if !odd(k) {
            // The reader's stretch, whose pages the reader maps when it
            // comes to it: read the header from the file, not the map (a
            // page fault each, and the kernel's work done twice).
            match file.read_at(&mut head, at) {
                Ok(n) if n == head.len() => {}
                _ => break,
            }
        } else {
            match bytes.get(start..start + HEADER_SIZE_UP_TO_MAGIC) {
                Some(h) => head.copy_from_slice(h),
                None => break,
            }
        }
        // A torn tail, trailing zeros or corruption: the reader's to name.
        let Frame::Whole { total, magic } = frame(&head, end - at) else {
            break;
        };
        if current.as_ref().is_some_and(|(c, _)| *c != k) && !hand_over(current.take()) {
            return;
        }
        if odd(k) {
            let checked = match &mut current {
                Some((_, checked)) => checked,
                None => {
                    map.populate(start..((k + 1) * stretch).min(end) as usize);
                    &mut current.insert((k, Vec::new())).1
                }
            };
            // attributes (int16 at 21): the codec is in the low 3 bits.
            let whole = bytes.get(start..start + total as usize);
            if let Some(b) = whole.filter(|b| plain_v2(magic, b)) {
                if let Ok(view) = BatchView::new(b, at) {
                    checked.push(Checked {
                        position: at,
                        size: total as usize,
                        done: Done::Checked(view.check(depth, &mut scratch)),
                    });
                }
            }
        }
        at += total;
    }
    hand_over(current);
}
