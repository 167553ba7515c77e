//! Read-only memory maps of segment files, safe against the file shrinking.
//!
//! Checking a batch's CRC through a map reads the page cache where it lies;
//! through `pread` the kernel first copies every byte into the reader's
//! buffer, and on a 1 GiB segment of 58 KB batches that copy is most of a
//! read+CRC pass (see [`SegmentReader::map`](super::SegmentReader::map)).
//!
//! A map has one hazard a read does not: touching a page past the end of a
//! file that shrank after it was mapped (a broker truncating its active
//! segment, a follower cutting a diverged tail) raises `SIGBUS`, which
//! would kill the process. So every map is registered in a fixed table,
//! and a `SIGBUS` handler, installed with the first map, replaces the pages
//! from the faulting one to the end of its map with zero pages, marks the
//! map [`shrank`](Map::shrank) and returns: the read that faulted goes on
//! reading zeros. The reader asks `shrank` before it hands out each entry
//! and at the end, and turns it into the same "file shrank" error a short
//! read gives. A `SIGBUS` at an address no map holds goes to the handler
//! installed before (Rust's own, or the default action), as if this one
//! had not been.
//!
//! Maps are only made while the table has room ([`SLOTS`] at once); a
//! reader that gets none reads with `pread` instead.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Once};

use super::frame::Done;
use super::map_ahead::MapAhead;
use super::source::{shrank, Source};

/// Maps that may exist at once (a reader holds one; jobs run one reader each).
const SLOTS: usize = 64;

/// One registered map: `start..end` (page-aligned), and whether `SIGBUS`
/// has been caught in it. `start == 0` is a free slot.
struct Slot {
    start: AtomicUsize,
    end: AtomicUsize,
    shrank: AtomicBool,
    /// Taken by a map (set before `start`, cleared after it).
    taken: AtomicBool,
}

#[allow(clippy::declare_interior_mutable_const)]
const FREE: Slot = Slot {
    start: AtomicUsize::new(0),
    end: AtomicUsize::new(0),
    shrank: AtomicBool::new(false),
    taken: AtomicBool::new(false),
};

static TABLE: [Slot; SLOTS] = [FREE; SLOTS];

static HANDLER: Once = Once::new();
static HANDLER_OK: AtomicBool = AtomicBool::new(false);

/// The page size as the system reports it (read once, at install; see [`PAGE`]).
fn page_size() -> usize {
    // SAFETY: sysconf has no preconditions.
    match unsafe { libc::sysconf(libc::_SC_PAGESIZE) } {
        n if n > 0 => n as usize,
        _ => 4096,
    }
}

/// The page size, for the handler and the maps (set before the handler is
/// installed, which is before the first map is made).
static PAGE: AtomicUsize = AtomicUsize::new(4096);

/// The `SIGBUS` handler: see the module's documentation. It only loads
/// atomics and calls `mmap`, `signal` and `raise` (system calls).
extern "C" fn on_sigbus(_sig: libc::c_int, info: *mut libc::siginfo_t, _ctx: *mut libc::c_void) {
    // SAFETY: the kernel passes a valid siginfo_t to an SA_SIGINFO handler.
    // A signal sent by a process (si_code <= 0) has no fault address.
    let addr = match unsafe { (*info).si_code } {
        code if code > 0 => unsafe { (*info).si_addr() as usize },
        _ => 0,
    };
    let page = PAGE.load(Ordering::Relaxed);
    for slot in &TABLE {
        let start = slot.start.load(Ordering::Acquire);
        let end = slot.end.load(Ordering::Acquire);
        if start == 0 || addr < start || addr >= end {
            continue;
        }
        let from = addr & !(page - 1);
        // SAFETY: from..end lies inside a live map this module made (its
        // slot is registered until after it is unmapped); MAP_FIXED
        // replaces those pages with anonymous zero pages.
        let p = unsafe {
            libc::mmap(
                from as *mut libc::c_void,
                end - from,
                libc::PROT_READ,
                libc::MAP_PRIVATE | libc::MAP_ANONYMOUS | libc::MAP_FIXED,
                -1,
                0,
            )
        };
        if p != libc::MAP_FAILED {
            slot.shrank.store(true, Ordering::Release);
            return;
        }
        break;
    }
    // Not ours (or the pages could not be replaced): back to the handler
    // there was before (the default action if none), which then gets this
    // signal again: a fault repeats when this returns, a raised one is
    // raised again.
    // SAFETY: sigaction and raise are async-signal-safe; PREVIOUS was set
    // before this handler was installed.
    unsafe {
        match PREVIOUS.get() {
            Some(old) => libc::sigaction(libc::SIGBUS, old, std::ptr::null_mut()),
            None => {
                libc::signal(libc::SIGBUS, libc::SIG_DFL);
                0
            }
        };
        libc::raise(libc::SIGBUS);
    }
}

/// The `SIGBUS` action installed before this module's.
static PREVIOUS: std::sync::OnceLock<libc::sigaction> = std::sync::OnceLock::new();

fn install_handler() -> bool {
    HANDLER.call_once(|| {
        PAGE.store(page_size(), Ordering::Relaxed);
        // SAFETY: a zeroed sigaction is valid; the handler has the
        // SA_SIGINFO signature.
        let ok = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_sigbus as *const () as usize;
            action.sa_flags = libc::SA_SIGINFO;
            libc::sigemptyset(&mut action.sa_mask);
            let mut old: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(libc::SIGBUS, std::ptr::null(), &mut old) == 0 {
                let _ = PREVIOUS.set(old);
            }
            libc::sigaction(libc::SIGBUS, &action, std::ptr::null_mut()) == 0
        };
        HANDLER_OK.store(ok, Ordering::Release);
    });
    HANDLER_OK.load(Ordering::Acquire)
}

/// A read-only map of a whole file, as long as it was when mapped.
pub struct Map {
    ptr: *mut libc::c_void,
    len: usize,
    slot: &'static Slot,
}

// SAFETY: the map is read-only and owned; its bytes may be read from any thread.
unsafe impl Send for Map {}
// SAFETY: as above: shared references only read.
unsafe impl Sync for Map {}

impl Map {
    /// Map the first `len` bytes of `file`; `None` when the handler cannot
    /// be installed, the table is full or `mmap` fails (read instead).
    pub fn new(file: &File, len: u64) -> Option<Map> {
        let len = usize::try_from(len).ok().filter(|&l| l > 0)?;
        if !install_handler() {
            return None;
        }
        let slot = TABLE.iter().find(|s| {
            s.taken
                .compare_exchange(false, true, Ordering::AcqRel, Ordering::Acquire)
                .is_ok()
        })?;
        // SAFETY: a fresh shared read-only mapping of an open file; the
        // kernel picks the address.
        let ptr = unsafe {
            libc::mmap(
                std::ptr::null_mut(),
                len,
                libc::PROT_READ,
                libc::MAP_SHARED,
                file.as_raw_fd(),
                0,
            )
        };
        if ptr == libc::MAP_FAILED {
            slot.taken.store(false, Ordering::Release);
            return None;
        }
        let page = PAGE.load(Ordering::Relaxed);
        let end = (ptr as usize).saturating_add(len.div_ceil(page) * page);
        slot.shrank.store(false, Ordering::Relaxed);
        slot.end.store(end, Ordering::Release);
        slot.start.store(ptr as usize, Ordering::Release);
        Some(Map { ptr, len, slot })
    }

    /// The file's bytes. Past the end of a file that shrank they read as zeros.
    pub fn bytes(&self) -> &[u8] {
        // SAFETY: ptr..ptr+len is mapped readable for the life of self: a
        // fault in it is answered with zero pages (see on_sigbus).
        unsafe { std::slice::from_raw_parts(self.ptr as *const u8, self.len) }
    }

    /// Whether a read touched a page the file no longer has.
    pub fn shrank(&self) -> bool {
        self.slot.shrank.load(Ordering::Acquire)
    }

    /// Let the kernel drop the page-table entries of `range` (the bytes
    /// stay in the page cache; reading them again maps them again), so the
    /// process's resident size does not grow with the file. Only whole
    /// pages inside the range are dropped.
    pub fn release(&self, range: std::ops::Range<usize>) {
        let page = PAGE.load(Ordering::Relaxed);
        // MADV_DONTNEED on a shared file map only drops page-table
        // entries, never the file's bytes.
        self.advise(
            range.start.div_ceil(page) * page,
            range.end.min(self.len) / page * page,
            libc::MADV_DONTNEED,
        );
    }

    /// `madvise(advice)` on `from..to` (page-aligned `from`) of the map,
    /// unless the range is empty; the result is ignored (advice only).
    fn advise(&self, from: usize, to: usize, advice: libc::c_int) {
        if from >= to || to > self.len {
            return;
        }
        // SAFETY: from..to lies inside the map, and neither advice given
        // here changes what its bytes read as.
        unsafe {
            libc::madvise(
                (self.ptr as *mut u8).add(from) as *mut libc::c_void,
                to - from,
                advice,
            );
        }
    }
}

impl Map {
    /// Map the pages of `range` now, in one system call, instead of a page
    /// fault at a time as they are first read (`MADV_POPULATE_READ`, Linux
    /// 5.14; a kernel without it, or a range past the end of a file that
    /// shrank, leaves them to fault as before).
    pub fn populate(&self, range: std::ops::Range<usize>) {
        let page = PAGE.load(Ordering::Relaxed);
        self.advise(
            range.start / page * page,
            range.end.min(self.len),
            libc::MADV_POPULATE_READ,
        );
    }
}

impl Drop for Map {
    fn drop(&mut self) {
        self.slot.start.store(0, Ordering::Release);
        // SAFETY: unmapping the map this value made, once.
        unsafe {
            libc::munmap(self.ptr, self.len);
        }
        self.slot.taken.store(false, Ordering::Release);
    }
}

/// Files smaller than this are read, not mapped, even when a map is asked
/// for (see [`SegmentReader::map`](super::SegmentReader::map)): a map and
/// its page faults cost about what one read of a small file does.
pub(super) const MAP_MIN: u64 = 1 << 20;
/// A mapped reader lets the kernel drop the page-table entries of what it
/// has passed every this many bytes, so its resident share of the file
/// stays this much plus what it has populated ahead ([`MAP_POPULATE`]
/// to twice that), however large the file.
const MAP_RELEASE_EVERY: u64 = 8 << 20;
/// A mapped reader keeps at least this many bytes ahead of it mapped, and
/// maps twice as many at once when it is not (see [`Map::populate`]).
pub(super) const MAP_POPULATE: u64 = 4 << 20;

/// The whole file through a map, as one chunk from the starting position,
/// read in place; with a core to spare, a thread checks every other
/// stretch of it ([`MapAhead`]).
pub(super) struct Mapped {
    map: Arc<Map>,
    file: Arc<File>,
    from: u64,
    len: u64,
    /// Whether the one chunk was handed out.
    handed: bool,
    ahead: Option<MapAhead>,
    /// The file position below which page-table entries were released.
    released: u64,
    /// Read by the reader's thread alone: the position up to which pages were populated.
    populated: u64,
    /// How many times pages were populated (one system call each).
    populates: u32,
}

impl Mapped {
    /// `file` (of `len` bytes) mapped, read from `from`; `None` when it
    /// cannot be mapped. `ahead` starts the thread checking every other
    /// stretch, given the map.
    pub(super) fn open(
        file: &Arc<File>,
        len: u64,
        from: u64,
        ahead: impl FnOnce(&Arc<Map>) -> Option<MapAhead>,
    ) -> Option<Mapped> {
        let map = Arc::new(Map::new(file, len)?);
        Some(Mapped {
            ahead: ahead(&map),
            map,
            file: Arc::clone(file),
            from,
            len,
            handed: false,
            released: from,
            populated: 0,
            populates: 0,
        })
    }
}

impl Source for Mapped {
    fn next_chunk(&mut self) -> io::Result<Range<usize>> {
        let start = usize::try_from(self.from).unwrap_or(usize::MAX);
        let end = self.map.bytes().len();
        if self.handed || start >= end {
            return Err(shrank());
        }
        self.handed = true;
        Ok(start..end)
    }

    fn bytes(&self) -> &[u8] {
        self.map.bytes()
    }

    fn take_done(&mut self, at: u64, size: usize) -> Option<Done> {
        self.ahead.as_mut()?.take(at, size)
    }

    fn before_entry(&mut self, pos: u64) {
        let map = &self.map;
        if pos - self.released >= MAP_RELEASE_EVERY {
            map.release(self.released as usize..pos as usize);
            self.released = pos;
        }
        if let Some(ahead) = &mut self.ahead {
            // Only this thread's own stretches (the other thread maps
            // its own), each once, as the first entry in it comes.
            if let Some(end) = ahead.enters_own_stretch(pos) {
                map.populate(pos as usize..(end.min(self.len)) as usize);
                self.populates += 1;
            }
        } else if self.populated < pos + MAP_POPULATE && self.populated < self.len {
            // Not past the end: the last page would be advised again
            // before every entry of the file's last MAP_POPULATE bytes.
            let from = self.populated.max(pos);
            self.populated = (pos + 2 * MAP_POPULATE).min(self.len);
            map.populate(from as usize..self.populated as usize);
            self.populates += 1;
        }
    }

    fn intact(&self, len_too: bool, len: u64) -> io::Result<()> {
        if self.map.shrank() {
            return Err(shrank());
        }
        // Past the end of a file, the rest of its last page reads as zeros
        // without a fault.
        if len_too && self.file.metadata()?.len() < len {
            return Err(shrank());
        }
        Ok(())
    }

    #[cfg(test)]
    fn name(&self) -> &'static str {
        match self.ahead {
            Some(_) => "map+thread",
            None => "map",
        }
    }

    #[cfg(test)]
    fn populates(&self) -> u32 {
        self.populates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    #[test]
    fn a_map_reads_the_file() {
        let mut f = tempfile::tempfile().unwrap();
        let bytes: Vec<u8> = (0..20_000u32).map(|i| (i % 251) as u8).collect();
        f.write_all(&bytes).unwrap();
        let m = Map::new(&f, bytes.len() as u64).unwrap();
        assert_eq!(m.bytes(), &bytes[..]);
        m.release(0..bytes.len());
        assert_eq!(m.bytes(), &bytes[..], "released pages read the same again");
        assert!(!m.shrank());
    }

    #[test]
    fn a_file_that_shrinks_under_its_map_reads_zeros_and_says_so() {
        let page = page_size();
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&vec![7u8; 4 * page]).unwrap();
        let m = Map::new(&f, 4 * page as u64).unwrap();
        assert_eq!(m.bytes()[3 * page], 7);
        m.release(0..4 * page);
        f.set_len(page as u64 + 10).unwrap();
        // Without the handler this read would kill the test binary.
        let past = std::hint::black_box(m.bytes())[3 * page];
        assert_eq!(past, 0);
        assert!(m.shrank());
        assert_eq!(
            m.bytes()[page],
            7,
            "the bytes the file still has are intact"
        );
        let other = Map::new(&f, page as u64).unwrap();
        assert!(!other.shrank(), "a slot freed and taken again starts clean");
        drop(m);
    }

    #[test]
    fn a_fault_in_a_map_of_someone_else_still_ends_the_process() {
        const CHILD: &str = "KLOG_MAPPED_TEST_CHILD";
        if std::env::var_os(CHILD).is_some() {
            // In the child: with the handler installed (a map exists), a
            // fault in a map this module did not make is not swallowed.
            let page = page_size();
            let mut f = tempfile::tempfile().unwrap();
            f.write_all(&vec![1u8; 2 * page]).unwrap();
            let _m = Map::new(&f, 1).unwrap();
            // SAFETY: a fresh read-only map of the file's two pages.
            let p = unsafe {
                libc::mmap(
                    std::ptr::null_mut(),
                    2 * page,
                    libc::PROT_READ,
                    libc::MAP_SHARED,
                    f.as_raw_fd(),
                    0,
                )
            };
            assert_ne!(p, libc::MAP_FAILED);
            f.set_len(0).unwrap();
            // SAFETY: inside the map; the file no longer has the page, so
            // this read faults with SIGBUS.
            let b = unsafe { std::ptr::read_volatile((p as *const u8).add(page)) };
            std::process::exit(i32::from(b) + 3);
        }
        use std::os::unix::process::ExitStatusExt;
        let status = std::process::Command::new(std::env::current_exe().unwrap())
            .args([
                "--exact",
                "log::read::mapped::tests::a_fault_in_a_map_of_someone_else_still_ends_the_process",
                "--test-threads=1",
            ])
            .env(CHILD, "1")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .status()
            .unwrap();
        assert_eq!(status.signal(), Some(libc::SIGBUS), "{status:?}");
    }

    #[test]
    fn the_table_is_bounded_and_slots_come_back() {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(b"x").unwrap();
        // One more than the table holds is asked for (other tests may hold
        // slots, so fewer may be had): never more than SLOTS at once.
        let maps: Vec<_> = (0..=SLOTS).map_while(|_| Map::new(&f, 1)).collect();
        assert!(maps.len() <= SLOTS);
        assert!(Map::new(&f, 1).is_none() || maps.len() < SLOTS);
        drop(maps);
        assert!(Map::new(&f, 1).is_some());
    }
}
