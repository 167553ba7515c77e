//! Streaming reader over one segment file, entry by entry, with a verdict
//! on how the file ends.
//!
//! It frames entries the way Kafka's `FileLogInputStream` does: offset +
//! size, then the magic at byte 16. A size that runs past the end of the
//! file is a torn tail; a size below 14, an unknown magic or a v2 batch
//! shorter than its header is corruption, after which nothing can be framed
//! and the reader stops. A CRC mismatch does not break the framing, so the
//! reader goes on and leaves the CRC to the caller.
//!
//! Bytes come in chunks of 2 MiB (never more than the file holds); see
//! [`READ_CHUNK`] for why. An entry inside one chunk is handed out as a slice of it; only an entry
//! that straddles two chunks is copied, into a carry buffer that grows to
//! the largest such entry, and only after checking that the file really
//! has that many bytes. A large file is read ahead by background threads
//! (positioned reads, into two recycled buffers each), which overlaps
//! reading from the page cache with the caller's work, but only on cores
//! that the process's [budget](crate::log::cores) has free: when every
//! core already walks a partition of its own, a reader reads on its own
//! thread. Memory is bounded by those buffers plus the largest batch. With
//! [`SegmentReader::check_ahead`] the threads also run
//! [`BatchView::check`] on the plain batches of the chunk
//! they just read, while its bytes are in their cache, and the reader
//! hands the result out with the entry (see
//! [`SegmentReader::next_entry_checked`]); with
//! [`SegmentReader::render_ahead`] they render those batches instead (a
//! dump's JSON), and the reader hands out the rendering with the entry
//! (see [`SegmentReader::rendered`]).
//!
//! A reader's chunk buffers outlive it: when it is dropped they go to a
//! small list kept per thread, and the next reader that thread opens (the
//! next segment, the next partition of a job) reads into them instead of
//! allocating and faulting in fresh ones.

use std::cell::RefCell;
use std::fs::File;
use std::io;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::error::{DecodeError, DecodeErrorKind, Error, Result};
use crate::format::batch::{
    self, BatchView, Depth, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_ENTRY_SIZE,
};
use crate::format::record::RecordsChecked;
use crate::format::{Entry, LegacyView};
use crate::log::buffer::AlignedBuf;
use crate::log::cores::{self, Permits};
use crate::log::map_ahead::{self, MapAhead};
use crate::log::mapped::Map;

/// Bytes per read, and the size of each chunk buffer, on the calling
/// thread and on read-ahead threads alike. Large, because a batch that
/// straddles two chunks is gathered in the carry buffer (and, when reading
/// ahead, checked by the reader's own thread rather than by the one that
/// read it): at 2 MiB a few percent of 58 KB batches do, at 64 KiB nearly
/// all. Buffers are [page-aligned](crate::log::buffer), without which a
/// large buffer costs four times the system time per read. Measured on an
/// AMD EPYC (1 MiB L2 per core), `verify-crc` of a 1 GiB segment of 58 KB
/// batches on one core: 0.236 s of CPU with 2 MiB chunks, 0.238 s with
/// 1 MiB, 0.245 s with 256 KiB, 0.266 s with 64 KiB; read ahead on two
/// cores: 0.254 s with 2 MiB, 0.259 s with 1 MiB, 0.300 s with 256 KiB.
const READ_CHUNK: usize = 2 << 20;
/// Read-ahead buffers per thread (being filled, queued, being parsed).
const BUFFERS_PER_THREAD: usize = 2;
/// Read-ahead threads that also check batches, at most; one when they only
/// read. Checking threads do nearly all the work, so the reader's own core
/// goes to the first of them and the others need a free core each.
const CHECK_THREADS: usize = 2;
/// Files (from the starting position) smaller than this are read on the
/// calling thread: threads would cost more than they save.
const READ_AHEAD_MIN: u64 = 16 << 20;
/// Files smaller than this are read, not mapped, even when a map is asked
/// for (see [`SegmentReader::map`]): a map and its page faults cost about
/// what one read of a small file does.
const MAP_MIN: u64 = 1 << 20;
/// A mapped reader lets the kernel drop the page-table entries of what it
/// has passed every this many bytes, so its resident share of the file
/// stays this much plus what it has populated ahead ([`MAP_POPULATE`]
/// to twice that), however large the file.
const MAP_RELEASE_EVERY: u64 = 8 << 20;
/// A mapped reader keeps at least this many bytes ahead of it mapped, and
/// maps twice as many at once when it is not (see
/// [`Map::populate`](crate::log::mapped::Map::populate)).
const MAP_POPULATE: u64 = 4 << 20;

/// What [`BatchView::check`] returned for a batch.
pub type BatchCheck = std::result::Result<RecordsChecked, DecodeError>;

/// A rendering of whole batches into bytes that read-ahead threads run
/// (see [`SegmentReader::render_ahead`]).
pub trait RenderBatch: Send + Sync {
    /// Append `batch` rendered to `out` and return `true`; or return
    /// `false` to leave the batch to the caller (whatever was appended is
    /// dropped). `scratch` is the thread's, kept from batch to batch.
    /// Once `out` holds more than `limit` bytes the renderer gives up
    /// (returns `false`), checking as it goes: rendered bytes in flight stay
    /// bounded however much a batch's rendering outgrows its bytes.
    fn render(
        &self,
        batch: &BatchView<'_>,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> bool;
}

/// The rendered bytes a chunk may hold, as a multiple of its size. JSON of
/// records of about 100 bytes is about twice their size, so such chunks are
/// rendered whole; records of a few bytes render to ten times their size,
/// and the batches past the bound are left to the reading thread. With
/// every chunk in flight at the bound (6), a reader holds 12 MiB of chunks
/// and 36 MiB of rendered bytes, plus what one record renders to past the
/// bound on each thread.
const RENDERED_PER_CHUNK: usize = 3;

/// What read-ahead threads do with the plain v2 batches (uncompressed,
/// wholly inside the chunk) of each chunk they read.
#[derive(Clone)]
enum Ahead {
    Check(Depth),
    Render(Arc<dyn RenderBatch>),
}

/// What a read-ahead thread made of one batch.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Done {
    Checked(BatchCheck),
    /// Rendered as `rendered[start..end]` of its chunk.
    Rendered {
        start: usize,
        end: usize,
    },
}

/// How a segment ends.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tail {
    /// Every byte belongs to a whole entry.
    Clean,
    /// The last entry is cut short: `len` bytes from `at` do not form a whole
    /// entry (its declared size runs past the end, or fewer than 18 bytes remain).
    Truncated {
        at: u64,
        len: u64,
        error: DecodeError,
    },
    /// Bytes from `at` cannot be framed at all.
    Corrupt {
        at: u64,
        len: u64,
        error: DecodeError,
    },
}

impl Tail {
    /// Position of the first byte that is not part of a whole entry, if any.
    pub fn valid_bytes(&self, file_len: u64) -> u64 {
        match *self {
            Tail::Clean => file_len,
            Tail::Truncated { at, .. } | Tail::Corrupt { at, .. } => at,
        }
    }
    /// The defect, if the tail is not clean.
    pub fn error(&self) -> Option<DecodeError> {
        match *self {
            Tail::Clean => None,
            Tail::Truncated { error, .. } | Tail::Corrupt { error, .. } => Some(error),
        }
    }
}

/// Reads the entries of one `.log` file in order.
pub struct SegmentReader {
    path: PathBuf,
    file: Arc<File>,
    file_len: u64,
    /// File position of the next unread byte (the next entry).
    pos: u64,
    tail: Option<Tail>,
    /// The chunk being parsed; `chunk[chunk_start..chunk_end]` is unread.
    chunk: AlignedBuf,
    chunk_start: usize,
    chunk_end: usize,
    /// Batches of the chunk checked by the thread that read it, by position;
    /// `checks[check_at..]` may still be handed out.
    checks: Vec<Checked>,
    check_at: usize,
    /// Unread bytes that come before the chunk's: the start of an entry
    /// that straddles chunks, gathered in one place.
    carry: Vec<u8>,
    carry_start: usize,
    source: Source,
    /// Bytes per read: [`READ_CHUNK`] (tests set others).
    chunk_size: usize,
    read_ahead: ReadAhead,
    ahead: Option<Ahead>,
    /// The renderings of the current chunk's batches (see `Done::Rendered`).
    rendered: Vec<u8>,
    /// Whether [`map`](SegmentReader::map) was asked for.
    want_map: bool,
    /// The smallest file (from the starting position) that is mapped: [`MAP_MIN`] (tests set others).
    map_min: u64,
    /// The whole file, mapped, in place of `chunk` (see `Source::Mapped`).
    map: Option<Arc<Map>>,
    /// With `map` and a core to spare: the thread that checks every other
    /// stretch of it ([`map_ahead`]).
    map_ahead: Option<MapAhead>,
    /// The stretches `map_ahead` deals the file out in:
    /// [`map_ahead::STRETCH`] (tests set others).
    stretch: u64,
    /// With `map`: the file position below which page-table entries were released.
    released: u64,
    /// With `map` read by this thread alone: the file position up to which
    /// pages were populated.
    populated: u64,
    /// With `map`: how many times pages were populated (one system call each).
    populates: u32,
    /// Where the entry last handed out lies, for [`current`](SegmentReader::current).
    current: Option<Current>,
}

/// The entry last handed out: in the carry buffer or the chunk, at `range`.
#[derive(Debug, Clone)]
struct Current {
    from_carry: bool,
    range: std::ops::Range<usize>,
    at: u64,
    magic: i8,
    done: Option<Done>,
}

/// When to read ahead on threads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum ReadAhead {
    /// For files of at least [`READ_AHEAD_MIN`] bytes, when there is a spare core.
    Auto,
    #[cfg(test)]
    Never,
    #[cfg(test)]
    Always,
}

/// Where the chunks come from.
enum Source {
    /// Nothing read yet.
    Idle,
    /// Read on the calling thread; `next` is the position of the next read.
    Inline { next: u64 },
    /// Read by background threads.
    Threads(Pool),
    /// The whole file is `map`, read in place: `chunk_start..chunk_end`
    /// are file positions, and there is no next chunk.
    Mapped,
}

/// A batch checked or rendered by a read-ahead thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checked {
    pub(crate) position: u64,
    pub(crate) size: usize,
    pub(crate) done: Done,
}

/// A chunk read by a read-ahead thread: `buf[..len]`, the batches in it the
/// thread checked or rendered, and their renderings.
struct Filled {
    buf: AlignedBuf,
    len: usize,
    checks: Vec<Checked>,
    rendered: Vec<u8>,
}

type Message = io::Result<Filled>;

/// The current chunk's bytes: the buffer, or the whole file when it is
/// mapped. Takes the two fields, not the reader, so that a caller may
/// borrow its other fields beside the bytes.
fn chunk_of<'a>(map: &'a Option<Arc<Map>>, chunk: &'a AlignedBuf) -> &'a [u8] {
    map.as_ref().map_or(&chunk[..], |m| m.bytes())
}

/// The read-ahead threads. Thread `w` of `n` reads chunks `w, w + n, ...`
/// (chunk `k` starts `k` chunk sizes after the starting position) and sends
/// them, in order, on its own channel, so taking chunk `k` from channel
/// `k % n` puts them back in file order.
struct Pool {
    chunks: Vec<Receiver<Message>>,
    /// Buffers handed back, to the thread that filled them.
    recycle: Vec<Sender<AlignedBuf>>,
    chain: Arc<Chain>,
    /// Each returns the buffers it holds when it ends.
    threads: Vec<JoinHandle<Vec<AlignedBuf>>>,
    /// The chunk to take next.
    next: usize,
    /// Rendering buffers handed back, for any thread to render into.
    rendered: Arc<Spares>,
    /// The cores the threads run on beyond the reader's own, given back
    /// after they have stopped (field order: dropped after `Drop::drop`).
    _permits: Permits<'static>,
}

impl Pool {
    /// Stop the threads and gather every buffer: those they filled and
    /// have not handed over, and those they hold.
    fn stop(&mut self) -> Vec<AlignedBuf> {
        // Wake threads waiting on the chain or for a recycled buffer, so
        // that each stops at its next wait or turn of its loop; take what
        // they send until they hang up (at most one read each is in
        // progress), then wait for them.
        self.chain.stop();
        self.recycle.clear();
        let mut bufs = Vec::new();
        for chunks in self.chunks.drain(..) {
            bufs.extend(chunks.iter().filter_map(|m| m.ok()).map(|f| f.buf));
        }
        for t in self.threads.drain(..) {
            bufs.extend(t.join().unwrap_or_default());
        }
        bufs
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Rendering buffers the reader has finished with, kept for the threads to
/// render the next chunks into (a fresh buffer per chunk would be faulted
/// in page by page).
#[derive(Default)]
struct Spares(Mutex<Vec<Vec<u8>>>);

impl Spares {
    fn take(&self) -> Vec<u8> {
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        v.pop().unwrap_or_default()
    }

    fn give(&self, mut buf: Vec<u8>) {
        if buf.capacity() == 0 {
            return;
        }
        buf.clear();
        let mut v = self.0.lock().unwrap_or_else(|e| e.into_inner());
        // As many as there are chunks in flight.
        if v.len() < CHECK_THREADS * (BUFFERS_PER_THREAD + 1) {
            v.push(buf);
        }
    }
}

/// Where entries start, passed from the thread that read chunk `k - 1` to
/// the one that reads chunk `k`, so that each can frame the batches of its
/// own chunk: a thread frames its chunk from the position it is given and
/// hands on the position of the first entry past the chunk's end.
struct Chain {
    state: Mutex<ChainState>,
    ready: Condvar,
}

struct ChainState {
    /// The next chunk to frame.
    chunk: usize,
    /// Where its first entry starts (or the first entry after it, when a
    /// batch spans the whole chunk); `None` once framing has stopped at a
    /// defect, an error or the end of the file.
    at: Option<u64>,
    stop: bool,
}

impl Chain {
    fn new(at: u64) -> Self {
        Chain {
            state: Mutex::new(ChainState {
                chunk: 0,
                at: Some(at),
                stop: false,
            }),
            ready: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, ChainState> {
        // Nothing panics while holding the lock; if something did, its
        // state is still consistent.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Wait for the position where framing of `chunk` starts; `None` when
    /// it has stopped.
    fn wait(&self, chunk: usize) -> Option<u64> {
        let mut s = self.lock();
        loop {
            if s.stop || s.at.is_none() || s.chunk > chunk {
                return None;
            }
            if s.chunk == chunk {
                return s.at;
            }
            s = self.ready.wait(s).unwrap_or_else(|e| e.into_inner());
        }
    }

    /// Framing of `chunk` starts at `at` (`None`: stops).
    fn hand_on(&self, chunk: usize, at: Option<u64>) {
        let mut s = self.lock();
        if s.at.is_some() && s.chunk < chunk {
            s.chunk = chunk;
            s.at = at;
        }
        self.ready.notify_all();
    }

    fn stop(&self) {
        self.lock().stop = true;
        self.ready.notify_all();
    }

    fn stopped(&self) -> bool {
        self.lock().stop
    }
}

thread_local! {
    /// Chunk buffers of the readers this thread has dropped, for the next
    /// one it opens.
    static SPARE: RefCell<Vec<AlignedBuf>> = const { RefCell::new(Vec::new()) };
}

/// Buffers a thread keeps: enough for one reader's read-ahead threads
/// (the reader's own chunk is one of theirs).
const SPARE_MAX: usize = CHECK_THREADS * BUFFERS_PER_THREAD;

/// A buffer of at least `len` bytes: a spare one if this thread has one.
fn spare_buffer(len: usize) -> AlignedBuf {
    let mut buf = SPARE
        .with(|s| s.try_borrow_mut().ok().and_then(|mut s| s.pop()))
        .unwrap_or_default();
    buf.grow_to(len);
    buf
}

/// Keep `buf` for the next reader of this thread (if it is worth keeping).
fn keep_spare(buf: AlignedBuf) {
    if buf.is_empty() || buf.len() > READ_CHUNK {
        return;
    }
    SPARE.with(|s| {
        if let Ok(mut s) = s.try_borrow_mut() {
            if s.len() < SPARE_MAX {
                s.push(buf);
            }
        }
    });
}

fn shrank() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank while being read")
}

/// Read into `buf` from file position `at` until it is full or the file
/// ends; returns the bytes read.
fn read_full_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
    let mut done = 0;
    while let Some(dst) = buf.get_mut(done..).filter(|d| !d.is_empty()) {
        match file.read_at(dst, at + done as u64) {
            Ok(0) => break,
            Ok(n) => done += n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
    Ok(done)
}

/// What one read-ahead thread does.
struct Job {
    file: Arc<File>,
    /// Read `start..end`, in chunks of `chunk_size`.
    start: u64,
    end: u64,
    chunk_size: usize,
    /// This thread reads chunks `index, index + threads, ...`.
    index: usize,
    threads: usize,
    /// Check or render the plain batches of each chunk.
    ahead: Option<Ahead>,
    /// Buffers to render into.
    rendered: Arc<Spares>,
    chain: Arc<Chain>,
    /// Buffers to read into before allocating any.
    buffers: Vec<AlignedBuf>,
}

impl Job {
    /// Read (and check) this thread's chunks; returns the buffers it still
    /// holds when it ends.
    fn run(mut self, out: SyncSender<Message>, recycle: Receiver<AlignedBuf>) -> Vec<AlignedBuf> {
        let mut kept = Vec::new();
        self.fill(&out, &recycle, &mut kept);
        // The reader has hung up or taken everything: what it handed back
        // and this thread has not used yet is the reader's again.
        drop(out);
        kept.extend(recycle.try_iter());
        kept
    }

    fn fill(
        &mut self,
        out: &SyncSender<Message>,
        recycle: &Receiver<AlignedBuf>,
        kept: &mut Vec<AlignedBuf>,
    ) {
        let mut allocated = self.buffers.len();
        let mut k = self.index;
        loop {
            let at = (k as u64)
                .checked_mul(self.chunk_size as u64)
                .and_then(|o| o.checked_add(self.start))
                .unwrap_or(u64::MAX);
            if at >= self.end || self.chain.stopped() {
                return;
            }
            let left = usize::try_from(self.end - at).unwrap_or(usize::MAX);
            let want = self.chunk_size.min(left);
            let mut buf = match self.buffers.pop().map_or_else(|| recycle.try_recv(), Ok) {
                Ok(buf) => buf,
                Err(TryRecvError::Empty) if allocated < BUFFERS_PER_THREAD => {
                    allocated += 1;
                    AlignedBuf::default()
                }
                Err(TryRecvError::Empty) => match recycle.recv() {
                    Ok(buf) => buf,
                    Err(_) => return self.chain.hand_on(k, None),
                },
                Err(TryRecvError::Disconnected) => return self.chain.hand_on(k, None),
            };
            // A buffer from an earlier reader may be smaller (or larger)
            // than this file's chunks: read exactly one chunk into it.
            buf.grow_to(want);
            let len = match read_full_at(&self.file, buf.get_mut(..want).unwrap_or(&mut []), at) {
                Ok(len) => len,
                Err(e) => {
                    self.chain.hand_on(k, None);
                    kept.push(buf);
                    let _ = out.send(Err(e));
                    return;
                }
            };
            let bytes = buf.get(..len).unwrap_or(&[]);
            let (checks, rendered) = match &self.ahead {
                Some(ahead) if len == want => self.frame_and_check(k, at, bytes, ahead),
                _ => {
                    self.chain.hand_on(k + 1, None);
                    (Vec::new(), Vec::new())
                }
            };
            if len == 0 {
                kept.push(buf);
            } else if let Err(mpsc::SendError(Ok(filled))) = out.send(Ok(Filled {
                buf,
                len,
                checks,
                rendered,
            })) {
                kept.push(filled.buf);
                return;
            }
            if len < want {
                let _ = out.send(Err(shrank()));
                return;
            }
            k += self.threads;
        }
    }

    /// Frame chunk `k` (`bytes`, read from `at`) once the chain says where
    /// its first entry starts, hand on where the next chunk's starts, then
    /// check or render the plain v2 batches that lie wholly inside the
    /// chunk (the renderings, one after the other, come second).
    ///
    /// The framing here only decides which batches to check: the reader's
    /// own framing stays the authority, and uses a result only for a batch
    /// at the same position with the same size, read from this very buffer.
    fn frame_and_check(
        &self,
        k: usize,
        at: u64,
        bytes: &[u8],
        ahead: &Ahead,
    ) -> (Vec<Checked>, Vec<u8>) {
        let Some(mut pos) = self.chain.wait(k) else {
            self.chain.hand_on(k + 1, None);
            return (Vec::new(), Vec::new());
        };
        let chunk_end = at + bytes.len() as u64;
        let mut plain = Vec::new();
        let mut next = None;
        while pos >= at {
            if pos >= chunk_end {
                next = Some(pos);
                break;
            }
            // An entry header: offset, size, then the magic at byte 16.
            let mut head = [0u8; HEADER_SIZE_UP_TO_MAGIC];
            if self.end - pos <= HEADER_SIZE_UP_TO_MAGIC as u64 {
                break; // a torn tail or trailing zeros: the reader's to name
            }
            let off = (pos - at) as usize;
            match bytes.get(off..off + HEADER_SIZE_UP_TO_MAGIC) {
                Some(h) => head.copy_from_slice(h),
                // The header crosses into the next chunk: read it from the file.
                None => match read_full_at(&self.file, &mut head, pos) {
                    Ok(n) if n == head.len() => {}
                    _ => break,
                },
            }
            let Frame::Whole { total, magic } = frame(&head, self.end - pos) else {
                break;
            };
            let total = total as usize;
            if plain_v2(magic, bytes.get(off..).unwrap_or(&[])) && off + total <= bytes.len() {
                plain.push((pos, total));
            }
            pos += total as u64;
        }
        self.chain.hand_on(k + 1, next);
        let mut scratch = Vec::new();
        let mut rendered = match ahead {
            Ahead::Render(_) => self.rendered.take(),
            Ahead::Check(_) => Vec::new(),
        };
        let mut full = false;
        let checks = plain
            .into_iter()
            .filter_map(|(position, size)| {
                let start = (position - at) as usize;
                let b = BatchView::new(bytes.get(start..start + size)?, position).ok()?;
                let done = match ahead {
                    Ahead::Check(depth) => Done::Checked(b.check(*depth, &mut scratch)),
                    Ahead::Render(r) => {
                        let start = rendered.len();
                        let limit = RENDERED_PER_CHUNK * self.chunk_size;
                        if full || !r.render(&b, &mut scratch, &mut rendered, limit) {
                            // Past the bound: the rest of the chunk is the
                            // reading thread's.
                            full |= rendered.len() > limit;
                            rendered.truncate(start);
                            return None;
                        }
                        Done::Rendered {
                            start,
                            end: rendered.len(),
                        }
                    }
                };
                Some(Checked {
                    position,
                    size,
                    done,
                })
            })
            .collect();
        (checks, rendered)
    }
}

/// Whether the entry that starts `entry` (with `magic`, from its framing)
/// is a plain v2 batch: uncompressed, the batches a thread checks or
/// renders ahead of the reader (a compressed one is left to the reader,
/// whose decompression a permit bounds).
pub(crate) fn plain_v2(magic: i8, entry: &[u8]) -> bool {
    // attributes (int16 at 21): the codec is in the low 3 bits.
    magic == 2
        && entry
            .get(batch::ATTRIBUTES + 1)
            .is_some_and(|a| a & 0x07 == 0)
}

/// How an entry frames, from its first 17 bytes (offset, size, 4 bytes,
/// magic) and the bytes `left` from its start to the end of the file —
/// the checks of Kafka's `FileLogInputStream.nextBatch`, in its order: a
/// size below the minimum overhead, a size past the end of the file (a
/// torn tail), an unknown magic, a v2 batch shorter than its header.
pub(crate) enum Frame {
    /// A whole entry of `total` bytes.
    Whole { total: u64, magic: i8 },
    /// The declared size runs past the end of the file.
    PastEnd { declared: u64 },
    /// The header is impossible; `at` is the field's offset in the entry.
    Corrupt { at: u64, kind: DecodeErrorKind },
}

pub(crate) fn frame(head: &[u8; HEADER_SIZE_UP_TO_MAGIC], left: u64) -> Frame {
    let size = i32::from_be_bytes([head[8], head[9], head[10], head[11]]);
    let magic = head[batch::MAGIC] as i8;
    if size < MIN_ENTRY_SIZE {
        return Frame::Corrupt {
            at: batch::BATCH_LENGTH as u64,
            kind: DecodeErrorKind::SizeTooSmall { size },
        };
    }
    let total = LOG_OVERHEAD as u64 + size as u64;
    if total > left {
        return Frame::PastEnd { declared: total };
    }
    if !(0..=2).contains(&magic) {
        return Frame::Corrupt {
            at: batch::MAGIC as u64,
            kind: DecodeErrorKind::UnsupportedMagic(magic),
        };
    }
    if magic == 2 && total < batch::HEADER_LEN as u64 {
        return Frame::Corrupt {
            at: batch::BATCH_LENGTH as u64,
            kind: DecodeErrorKind::BatchTooSmall { size: total as i64 },
        };
    }
    Frame::Whole { total, magic }
}

impl Drop for SegmentReader {
    fn drop(&mut self) {
        if let Source::Threads(pool) = &mut self.source {
            for buf in pool.stop() {
                keep_spare(buf);
            }
        }
        keep_spare(std::mem::take(&mut self.chunk));
    }
}

impl SegmentReader {
    /// Open `path` read-only.
    pub fn open(path: &Path) -> Result<Self> {
        Self::open_at(path, 0)
    }

    /// Read `file` (of length `file_len`) from byte `start_at`.
    pub fn from_file(path: &Path, file: File, file_len: u64, start_at: u64) -> Self {
        SegmentReader {
            path: path.to_path_buf(),
            file: Arc::new(file),
            file_len,
            pos: start_at.min(file_len),
            tail: None,
            chunk: AlignedBuf::default(),
            chunk_start: 0,
            chunk_end: 0,
            checks: Vec::new(),
            check_at: 0,
            carry: Vec::new(),
            carry_start: 0,
            source: Source::Idle,
            chunk_size: READ_CHUNK,
            read_ahead: ReadAhead::Auto,
            ahead: None,
            rendered: Vec::new(),
            want_map: false,
            map_min: MAP_MIN,
            map: None,
            map_ahead: None,
            stretch: map_ahead::STRETCH,
            released: 0,
            populated: 0,
            populates: 0,
            current: None,
        }
    }

    /// Open `path` and start reading at `position` (e.g. from an index entry).
    pub fn open_at(path: &Path, position: u64) -> Result<Self> {
        let file = crate::log::files::open_regular(path)?;
        let meta = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
        Ok(Self::from_file(path, file, meta.len(), position))
    }

    /// Have the read-ahead threads (if the file is large enough to get
    /// them) run [`BatchView::check`] at `depth` on the
    /// plain (uncompressed) v2 batches of each chunk they read; the results
    /// come with the entries from [`next_entry_checked`](Self::next_entry_checked).
    /// Takes effect only before the first entry is read.
    pub fn check_ahead(&mut self, depth: Depth) {
        if let Source::Idle = self.source {
            self.ahead = Some(Ahead::Check(depth));
        }
    }

    /// Read the file through a memory map instead of reading it into
    /// buffers, when it is at least [`MAP_MIN`] bytes (else, or when it
    /// cannot be mapped, it is read as usual). Nothing is read ahead then:
    /// with nothing copied there is nothing to overlap, and a read+CRC pass
    /// over a map costs less on one core than over reads on two. With
    /// [`check_ahead`](Self::check_ahead), a file of at least
    /// [`READ_AHEAD_MIN`] bytes and a core free, a second thread checks
    /// every other stretch of the map instead ([`map_ahead`]).
    /// [`render_ahead`](Self::render_ahead) is not done on a map. Takes
    /// effect only before the first entry is read. A file that shrinks
    /// while mapped is the same error a short read gives (see
    /// [`mapped`](crate::log::mapped)).
    ///
    /// Measured on a 1 GiB segment of 58 KB batches in the page cache (Intel
    /// Xeon, 2 MiB L2 per core, Linux, tmpfs): the CRC of every batch took
    /// 0.14 s through a map against 0.164 s for reads into a 128 KiB buffer
    /// and 0.143 s for `cat` alone.
    pub fn map(&mut self) {
        if let Source::Idle = self.source {
            self.want_map = true;
        }
    }

    /// Have the read-ahead threads (if the file is large enough to get
    /// them) render the plain (uncompressed) v2 batches of each chunk they
    /// read with `renderer`, instead of checking them; a batch's rendering
    /// comes with it from [`rendered`](Self::rendered). Takes effect only
    /// before the first entry is read.
    pub fn render_ahead(&mut self, renderer: Arc<dyn RenderBatch>) {
        if let Source::Idle = self.source {
            self.ahead = Some(Ahead::Render(renderer));
        }
    }

    /// The file being read.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The file's length when it was opened.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// File position of the next entry.
    pub fn position(&self) -> u64 {
        self.pos
    }

    /// How the file ended; `None` until iteration has finished.
    pub fn tail(&self) -> Option<Tail> {
        self.tail
    }

    fn start_source(&mut self) {
        if self.want_map && self.file_len - self.pos >= self.map_min.max(1) {
            if let Some(map) = Map::new(&self.file, self.file_len) {
                let map = Arc::new(map);
                if let Some(Ahead::Check(depth)) = self.ahead.take() {
                    self.map_ahead = self.share_map(&map, depth);
                }
                self.map = Some(map);
                self.released = self.pos;
                self.source = Source::Mapped;
                return;
            }
        }
        // Threads that check do the work while this one frames, so its
        // core goes to the first; a thread that only reads runs beside it.
        let (most, lent) = match self.ahead {
            Some(_) => (CHECK_THREADS, 1),
            None => (1, 0),
        };
        let threads = match self.read_ahead {
            ReadAhead::Auto if self.file_len - self.pos >= READ_AHEAD_MIN => {
                let permits = cores::take(most - lent);
                match permits.count() {
                    0 => None,
                    n => Some((n + lent, permits)),
                }
            }
            ReadAhead::Auto => None,
            #[cfg(test)]
            ReadAhead::Never => None,
            #[cfg(test)]
            ReadAhead::Always => Some((most, cores::take(0))),
        };
        if let Some((threads, permits)) = threads {
            if let Some(pool) = self.spawn_pool(threads, permits, self.chunk_size) {
                self.source = Source::Threads(pool);
                return;
            }
        }
        self.ahead = None;
        self.source = Source::Inline { next: self.pos };
    }

    /// The thread that checks every other stretch of `map` at `depth`
    /// ([`map_ahead`]): for files (from the starting position) of at least
    /// [`READ_AHEAD_MIN`] bytes, when a core is free.
    fn share_map(&self, map: &Arc<Map>, depth: Depth) -> Option<MapAhead> {
        let core = match self.read_ahead {
            ReadAhead::Auto if self.file_len - self.pos >= READ_AHEAD_MIN => {
                Some(cores::take(1)).filter(|c| c.count() == 1)?
            }
            ReadAhead::Auto => return None,
            #[cfg(test)]
            ReadAhead::Never => return None,
            #[cfg(test)]
            ReadAhead::Always => cores::take(0),
        };
        MapAhead::start(
            Arc::clone(map),
            Arc::clone(&self.file),
            self.pos,
            depth,
            self.stretch,
            core,
        )
    }

    /// Start `threads` read-ahead threads, reading `chunk_size` bytes at a
    /// time, on the cores `permits` hold (and this one's); `None` if they
    /// could not be started.
    fn spawn_pool(
        &mut self,
        threads: usize,
        permits: Permits<'static>,
        chunk_size: usize,
    ) -> Option<Pool> {
        let chain = Arc::new(Chain::new(self.pos));
        let mut pool = Pool {
            chunks: Vec::new(),
            recycle: Vec::new(),
            chain: Arc::clone(&chain),
            threads: Vec::new(),
            next: 0,
            rendered: Arc::default(),
            _permits: permits,
        };
        for index in 0..threads {
            let (out, chunks) = mpsc::sync_channel(BUFFERS_PER_THREAD);
            let (recycle, returned) = mpsc::channel();
            let job = Job {
                file: Arc::clone(&self.file),
                start: self.pos,
                end: self.file_len,
                chunk_size,
                index,
                threads,
                ahead: self.ahead.clone(),
                rendered: Arc::clone(&pool.rendered),
                chain: Arc::clone(&chain),
                buffers: (0..BUFFERS_PER_THREAD)
                    .map_while(|_| SPARE.with(|s| s.try_borrow_mut().ok()?.pop()))
                    .collect(),
            };
            let spawned = std::thread::Builder::new()
                .name("klog-read-ahead".into())
                .spawn(move || job.run(out, returned));
            match spawned {
                Ok(t) => {
                    pool.chunks.push(chunks);
                    pool.recycle.push(recycle);
                    pool.threads.push(t);
                }
                // Dropping the pool stops the threads already started.
                Err(_) => return None,
            }
        }
        Some(pool)
    }

    /// Replace the chunk, whose bytes are all consumed, with the next one.
    fn next_chunk(&mut self) -> Result<()> {
        if let Source::Idle = self.source {
            self.start_source();
        }
        self.checks.clear();
        self.check_at = 0;
        match &mut self.source {
            Source::Idle => return Err(Error::io(&self.path, "read", shrank())),
            // The first chunk is the whole file from the starting position.
            Source::Mapped if self.chunk_end == 0 => {
                self.chunk_start = usize::try_from(self.pos).unwrap_or(usize::MAX);
                self.chunk_end = self.map.as_ref().map_or(0, |m| m.bytes().len());
                if self.chunk_start >= self.chunk_end {
                    return Err(Error::io(&self.path, "read", shrank()));
                }
            }
            Source::Mapped => return Err(Error::io(&self.path, "read", shrank())),
            Source::Inline { next } => {
                let left =
                    usize::try_from(self.file_len.saturating_sub(*next)).unwrap_or(usize::MAX);
                let want = self.chunk_size.min(left);
                if self.chunk.len() < want {
                    if self.chunk.is_empty() {
                        self.chunk = spare_buffer(want);
                    }
                    self.chunk.grow_to(want);
                }
                let dst = self.chunk.get_mut(..want).unwrap_or(&mut []);
                let got = read_full_at(&self.file, dst, *next)
                    .map_err(|e| Error::io(&self.path, "read", e))?;
                if got == 0 {
                    return Err(Error::io(&self.path, "read", shrank()));
                }
                *next += got as u64;
                self.chunk_start = 0;
                self.chunk_end = got;
            }
            Source::Threads(pool) => {
                let n = pool.chunks.len().max(1);
                let k = pool.next;
                let received = match pool.chunks.get(k % n) {
                    Some(chunks) => chunks.recv(),
                    None => return Err(Error::io(&self.path, "read", shrank())),
                };
                match received {
                    Ok(Ok(filled)) => {
                        let old = std::mem::replace(&mut self.chunk, filled.buf);
                        // The buffer of chunk k - 1 goes back to its thread.
                        let owner = (k + n - 1) % n;
                        // (Or, once that thread has ended, to this one's spares.)
                        if let (false, Some(recycle)) = (old.is_empty(), pool.recycle.get(owner)) {
                            if let Err(mpsc::SendError(old)) = recycle.send(old) {
                                keep_spare(old);
                            }
                        }
                        pool.next += 1;
                        self.chunk_start = 0;
                        self.chunk_end = filled.len.min(self.chunk.len());
                        self.checks = filled.checks;
                        pool.rendered
                            .give(std::mem::replace(&mut self.rendered, filled.rendered));
                    }
                    Ok(Err(e)) => return Err(Error::io(&self.path, "read", e)),
                    // The thread stopped at the end of the file it was given.
                    Err(_) => return Err(Error::io(&self.path, "read", shrank())),
                }
            }
        }
        Ok(())
    }

    /// Make the next `n` unread bytes contiguous (see [`unread`](Self::unread)).
    /// The caller has checked that the file holds them.
    fn ensure(&mut self, n: usize) -> Result<()> {
        let in_carry = self.carry.len() - self.carry_start;
        if in_carry == 0 {
            if self.chunk_end - self.chunk_start >= n {
                return Ok(());
            }
            self.carry.clear();
            self.carry_start = 0;
        } else if in_carry >= n {
            return Ok(());
        } else if self.carry_start > 0 {
            self.carry.drain(..self.carry_start);
            self.carry_start = 0;
        }
        // The entry straddles chunks: gather it in the carry buffer.
        self.carry.reserve_exact(n - self.carry.len());
        while self.carry.len() < n {
            if self.chunk_start == self.chunk_end {
                self.next_chunk()?;
            }
            let take = (n - self.carry.len()).min(self.chunk_end - self.chunk_start);
            let chunk = chunk_of(&self.map, &self.chunk);
            let Some(src) = chunk.get(self.chunk_start..self.chunk_start + take) else {
                return Err(Error::io(&self.path, "read", shrank()));
            };
            self.carry.extend_from_slice(src);
            self.chunk_start += take;
        }
        Ok(())
    }

    /// The current chunk's bytes (see [`chunk_of`]).
    fn chunk_bytes(&self) -> &[u8] {
        chunk_of(&self.map, &self.chunk)
    }

    /// An error if a read of the mapped file met a page the file no longer
    /// has (the file shrank after it was mapped: those bytes read as zeros).
    fn check_map(&self) -> Result<()> {
        match &self.map {
            Some(m) if m.shrank() => Err(Error::io(&self.path, "read", shrank())),
            _ => Ok(()),
        }
    }

    /// [`check_map`](Self::check_map), and whether the file is still as
    /// long as when it was opened: past the end of a file, the rest of its
    /// last page reads as zeros without a fault.
    fn check_map_len(&self) -> Result<()> {
        self.check_map()?;
        if self.map.is_some() {
            let now = self
                .file
                .metadata()
                .map_err(|e| Error::io(&self.path, "stat", e))?;
            if now.len() < self.file_len {
                return Err(Error::io(&self.path, "read", shrank()));
            }
        }
        Ok(())
    }

    /// Whether the unread bytes start in the carry buffer.
    fn in_carry(&self) -> bool {
        self.carry_start < self.carry.len()
    }

    /// The first `n` unread bytes, after [`ensure(n)`](Self::ensure).
    fn unread(&self, n: usize) -> &[u8] {
        let bytes = if self.in_carry() {
            self.carry.get(self.carry_start..self.carry_start + n)
        } else {
            self.chunk_bytes()
                .get(self.chunk_start..self.chunk_start + n)
        };
        bytes.unwrap_or(&[])
    }

    /// The check a read-ahead thread made of the batch of `size` bytes at
    /// `at`, which is about to be handed out from the current chunk.
    fn take_check(&mut self, at: u64, size: usize) -> Option<Done> {
        if let Some(ahead) = &mut self.map_ahead {
            return ahead.take(at, size);
        }
        while self.checks.get(self.check_at)?.position < at {
            self.check_at += 1;
        }
        let c = self.checks.get(self.check_at)?;
        (c.position == at && c.size == size).then_some(c.done)
    }

    fn finish<T>(&mut self, tail: Tail) -> Result<Option<T>> {
        // The tail was judged from bytes read just now.
        self.check_map_len()?;
        self.tail = Some(tail);
        self.current = None;
        Ok(None)
    }

    /// Whether every byte from the current position to the end is zero
    /// (read with positioned reads, leaving the buffers as they are).
    fn rest_is_zero(&self) -> Result<bool> {
        let mut at = self.pos;
        let mut chunk = vec![
            0u8;
            usize::try_from(self.file_len - at)
                .unwrap_or(READ_CHUNK)
                .min(READ_CHUNK)
        ];
        while at < self.file_len {
            let n = usize::try_from(self.file_len - at)
                .unwrap_or(READ_CHUNK)
                .min(chunk.len());
            let part = chunk.get_mut(..n).unwrap_or(&mut []);
            self.file
                .read_exact_at(part, at)
                .map_err(|e| Error::io(&self.path, "read", e))?;
            if part.iter().any(|&b| b != 0) {
                return Ok(false);
            }
            at += n as u64;
        }
        Ok(true)
    }

    /// Frame the next entry without handing it out (it is then
    /// [`current`](Self::current)); `false` at the end. This two-step form
    /// lets a caller skip entries in a loop and hand out the one it stops
    /// at, which a borrowing `next_entry` in a loop cannot.
    pub fn advance(&mut self) -> Result<bool> {
        Ok(self.next_entry_checked()?.is_some())
    }

    /// The entry the last [`advance`](Self::advance) (or `next_entry*`)
    /// framed, with its read-ahead check; `None` after the end.
    pub fn current(&self) -> Option<(Entry<'_>, Option<BatchCheck>)> {
        let c = self.current.as_ref()?;
        let buf: &[u8] = if c.from_carry {
            &self.carry
        } else {
            self.chunk_bytes()
        };
        let bytes = buf.get(c.range.clone())?;
        let entry = if c.magic == 2 {
            BatchView::new(bytes, c.at).ok().map(Entry::V2)
        } else {
            LegacyView::new(bytes, c.at).ok().map(Entry::Legacy)
        }?;
        let check = match c.done {
            Some(Done::Checked(check)) => Some(check),
            _ => None,
        };
        Some((entry, check))
    }

    /// The read-ahead threads' rendering of the entry the last
    /// [`advance`](Self::advance) (or `next_entry*`) framed (see
    /// [`render_ahead`](Self::render_ahead)); `None` when it was not rendered.
    pub fn rendered(&self) -> Option<&[u8]> {
        match self.current.as_ref()?.done? {
            Done::Rendered { start, end } => self.rendered.get(start..end),
            Done::Checked(_) => None,
        }
    }

    /// The next entry, or `None` at the end (then [`tail`](Self::tail) says how it ended).
    pub fn next_entry(&mut self) -> Result<Option<Entry<'_>>> {
        Ok(self.next_entry_checked()?.map(|(entry, _)| entry))
    }

    /// The next entry as [`next_entry`](Self::next_entry) reads it, with
    /// what [`BatchView::check`] returns for it when a
    /// read-ahead thread has already run it (see
    /// [`check_ahead`](Self::check_ahead)): computed on the same bytes, so
    /// it is exactly what calling it now would return.
    pub fn next_entry_checked(&mut self) -> Result<Option<(Entry<'_>, Option<BatchCheck>)>> {
        self.current = None;
        if let Some(map) = &self.map {
            // Covers what the caller read of the entry handed out last.
            self.check_map()?;
            if self.pos - self.released >= MAP_RELEASE_EVERY {
                // No entry before `pos` is borrowed any more.
                map.release(self.released as usize..self.pos as usize);
                self.released = self.pos;
            }
            if let Some(ahead) = &mut self.map_ahead {
                // Only this thread's own stretches (the other thread maps
                // its own), each once, as the first entry in it comes.
                if let Some(end) = ahead.enters_own_stretch(self.pos) {
                    map.populate(self.pos as usize..(end.min(self.file_len)) as usize);
                    self.populates += 1;
                }
            } else if self.populated < self.pos + MAP_POPULATE && self.populated < self.file_len {
                // Not past the end: the last page would be advised again
                // before every entry of the file's last MAP_POPULATE bytes.
                let from = self.populated.max(self.pos);
                self.populated = (self.pos + 2 * MAP_POPULATE).min(self.file_len);
                map.populate(from as usize..self.populated as usize);
                self.populates += 1;
            }
        }
        if self.tail.is_some() {
            return Ok(None);
        }
        let at = self.pos;
        let left = self.file_len - at;
        if left == 0 {
            return self.finish(Tail::Clean);
        }
        let torn = |declared: u64| {
            DecodeError::new(
                at,
                DecodeErrorKind::PastEndOfFile {
                    declared,
                    available: left,
                },
            )
        };
        if left <= HEADER_SIZE_UP_TO_MAGIC as u64 {
            self.ensure(left as usize)?;
            // Twelve or more zeros include a zero size field, which no real
            // entry has; fewer could be the start of a real batch header.
            let zeros = self.unread(left as usize).iter().all(|&x| x == 0);
            if zeros && left >= LOG_OVERHEAD as u64 {
                let error = DecodeError::new(at, DecodeErrorKind::TrailingZeros { len: left });
                return self.finish(Tail::Corrupt {
                    at,
                    len: left,
                    error,
                });
            }
            let error = torn(HEADER_SIZE_UP_TO_MAGIC as u64 + 1);
            return self.finish(Tail::Truncated {
                at,
                len: left,
                error,
            });
        }
        self.ensure(HEADER_SIZE_UP_TO_MAGIC)?;
        let mut head = [0u8; HEADER_SIZE_UP_TO_MAGIC];
        head.copy_from_slice(self.unread(HEADER_SIZE_UP_TO_MAGIC));
        // Zeros read from a map of a file that shrank are no trailing zeros.
        if head.iter().all(|&b| b == 0) {
            self.check_map_len()?;
        }
        if head.iter().all(|&b| b == 0) && self.rest_is_zero()? {
            let error = DecodeError::new(at, DecodeErrorKind::TrailingZeros { len: left });
            return self.finish(Tail::Corrupt {
                at,
                len: left,
                error,
            });
        }
        let (total, magic) = match frame(&head, left) {
            Frame::Whole { total, magic } => (total as usize, magic),
            Frame::PastEnd { declared } => {
                return self.finish(Tail::Truncated {
                    at,
                    len: left,
                    error: torn(declared),
                })
            }
            Frame::Corrupt { at: field, kind } => {
                let error = DecodeError::new(at + field, kind);
                return self.finish(Tail::Corrupt {
                    at,
                    len: left,
                    error,
                });
            }
        };
        self.ensure(total)?;
        self.pos += total as u64;
        let from_carry = self.in_carry();
        let checked = if from_carry {
            None
        } else {
            self.take_check(at, total)
        };
        // Borrow only the buffer field, so the error arm below may set others.
        let range = if from_carry {
            let range = self.carry_start..self.carry_start + total;
            self.carry_start += total;
            range
        } else {
            let range = self.chunk_start..self.chunk_start + total;
            self.chunk_start += total;
            range
        };
        self.current = Some(Current {
            from_carry,
            range: range.clone(),
            at,
            magic,
            done: checked,
        });
        // Covers the framing's reads of this entry.
        self.check_map()?;
        let bytes = if from_carry {
            self.carry.get(range)
        } else {
            chunk_of(&self.map, &self.chunk).get(range)
        }
        .unwrap_or(&[]);
        let entry = if magic == 2 {
            BatchView::new(bytes, at).map(Entry::V2)
        } else {
            LegacyView::new(bytes, at).map(Entry::Legacy)
        };
        match entry {
            Ok(e) => Ok(Some((
                e,
                match checked {
                    Some(Done::Checked(check)) => Some(check),
                    _ => None,
                },
            ))),
            Err(error) => {
                // The frame was whole but its fields do not parse: stop here.
                self.current = None;
                self.pos = at;
                self.tail = Some(Tail::Corrupt {
                    at,
                    len: left,
                    error,
                });
                Ok(None)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch::DecodeLimits;
    use crate::format::{crc, encode_batch, BatchSpec, Compression, NewRecord};

    fn batch(base: i64, n: usize, value_len: usize, compression: Compression) -> Vec<u8> {
        let records: Vec<_> = (0..n)
            .map(|i| NewRecord {
                key: Some(format!("k{base}-{i}").into_bytes()),
                value: Some(vec![b'a' + (i % 26) as u8; value_len]),
                headers: if i % 3 == 0 {
                    vec![(b"h".to_vec(), Some(vec![i as u8]))]
                } else {
                    vec![]
                },
                timestamp: 1_700_000_000_000 + i as i64,
            })
            .collect();
        let spec = BatchSpec {
            base_offset: base,
            compression,
            ..BatchSpec::default()
        };
        encode_batch(&spec, &records).unwrap()
    }

    /// Batches of many sizes, a compressed one, one whose CRC fails and one
    /// with a CRC-valid record defect.
    fn segment() -> Vec<u8> {
        let mut out = Vec::new();
        let mut base = 0;
        for (i, (n, len)) in [
            (1, 0),
            (3, 10),
            (50, 100),
            (2, 3000),
            (7, 1),
            (200, 40),
            (1, 9000),
            (20, 20),
        ]
        .iter()
        .cycle()
        .take(40)
        .enumerate()
        {
            let codec = if i % 9 == 4 {
                Compression::Gzip
            } else {
                Compression::None
            };
            let mut b = batch(base, *n, *len, codec);
            if i == 11 {
                let last = b.len() - 1;
                b[last] ^= 0x40; // CRC mismatch
            }
            if i == 17 {
                b[batch::HEADER_LEN + 1] ^= 0x20; // a record defect...
                let c = crc::batch_crc(&b);
                b[batch::CRC..batch::CRC + 4].copy_from_slice(&c.to_be_bytes());
                // ...under a valid CRC
            }
            base += *n as i64;
            out.extend_from_slice(&b);
        }
        out
    }

    /// An entry read: position, bytes, and the check made ahead, if one was.
    type Entried = (u64, Vec<u8>, Option<BatchCheck>);
    type Read = (Vec<Entried>, Option<Tail>);

    fn read_all(path: &Path, at: u64, chunk: usize, mode: ReadAhead, check: bool) -> Read {
        read_all_with(path, at, chunk, mode, check, None)
    }

    fn read_all_with(
        path: &Path,
        at: u64,
        chunk: usize,
        mode: ReadAhead,
        check: bool,
        // Through a map, dealt out to a thread checking ahead in stretches of this size.
        mapped: Option<u64>,
    ) -> Read {
        let mut r = SegmentReader::open_at(path, at).unwrap();
        if let Some(stretch) = mapped {
            r.map_min = 0;
            r.stretch = stretch;
            r.map();
        }
        if chunk > 0 {
            r.chunk_size = chunk;
        }
        r.read_ahead = mode;
        if check {
            r.check_ahead(Depth::Records(DecodeLimits::default()));
        }
        let mut out = Vec::new();
        while let Some((e, c)) = r.next_entry_checked().unwrap() {
            out.push((e.position(), e_bytes(&e).to_vec(), c));
        }
        (out, r.tail())
    }

    fn e_bytes<'a>(e: &Entry<'a>) -> &'a [u8] {
        match e {
            Entry::V2(b) => b.bytes(),
            Entry::Legacy(l) => l.bytes(),
        }
    }

    /// Assert that `read` has the reference's entries and tail, and that
    /// every check made ahead is what checking the batch now gives; the
    /// positions of those.
    fn like_reference(
        read: Read,
        (reference, tail): (&[Entried], Option<Tail>),
        ctx: &str,
    ) -> Vec<u64> {
        let (entries, t) = read;
        assert_eq!(t, tail, "{ctx}");
        assert_eq!(entries.len(), reference.len(), "{ctx}");
        let mut ahead = Vec::new();
        for ((pos, b, c), (rpos, rb, _)) in entries.iter().zip(reference) {
            assert_eq!((pos, b), (rpos, rb), "{ctx}");
            if let Some(c) = c {
                let view = BatchView::new(b, *pos).unwrap();
                let now = view.check_crc_and_records(&mut Vec::new(), DecodeLimits::default());
                assert_eq!(*c, now, "{ctx} at {pos}");
                ahead.push(*pos);
            }
        }
        ahead
    }

    fn check_variant(bytes: &[u8], at: u64) {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.log");
        std::fs::write(&path, bytes).unwrap();
        let (reference, tail) = read_all(&path, at, usize::MAX >> 1, ReadAhead::Never, false);
        let mut checked_ahead = 0;
        // 0: the sizes the reader picks itself.
        for chunk in [0, 1, 7, 61, 1000, 20_000, 1 << 20] {
            for mode in [ReadAhead::Never, ReadAhead::Always] {
                for check in [false, true] {
                    if chunk == 1 && (mode == ReadAhead::Always || check) {
                        continue; // slow, and 7 covers the same cases
                    }
                    let read = read_all(&path, at, chunk, mode, check);
                    let ctx = format!("chunk {chunk} {mode:?} check {check}");
                    let ahead = like_reference(read, (&reference, tail), &ctx);
                    assert!(
                        ahead.is_empty() || (check && mode == ReadAhead::Always),
                        "{ctx}"
                    );
                    checked_ahead += ahead.len();
                }
            }
        }
        if reference.len() > 10 {
            assert!(checked_ahead > reference.len(), "{checked_ahead}");
        }
        // Through a map: the same entries and tail; with checks, the
        // thread sharing the map checks some batches ahead, each as the
        // reader would now.
        let mut shared = 0;
        for stretch in [64, 1000, 4096, map_ahead::STRETCH] {
            for mode in [ReadAhead::Never, ReadAhead::Always] {
                for check in [false, true] {
                    let ctx = format!("mapped, stretch {stretch} {mode:?} check {check}");
                    let read = read_all_with(&path, at, 0, mode, check, Some(stretch));
                    let ahead = like_reference(read, (&reference, tail), &ctx);
                    assert!(
                        ahead.is_empty() || (check && mode == ReadAhead::Always),
                        "{ctx}"
                    );
                    for pos in &ahead {
                        assert_eq!((pos / stretch) % 2, 1, "{ctx}: not the thread's, at {pos}");
                    }
                    shared += ahead.len();
                }
            }
        }
        if reference.len() > 10 {
            assert!(
                shared > 0,
                "nothing was checked by the thread sharing the map"
            );
        }
    }

    #[test]
    fn a_map_is_populated_once_for_each_stretch_ahead() {
        // 2,000 small batches, a little over MAP_POPULATE (4 MiB): one
        // populate for the whole file at the first entry, one system call
        // (not one per entry of the file's last 4 MiB, as once).
        let mut seg = Vec::new();
        let mut base = 0;
        while (seg.len() as u64) < MAP_POPULATE + 100_000 {
            seg.extend(batch(base, 20, 100, Compression::None));
            base += 20;
        }
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.log");
        std::fs::write(&path, &seg).unwrap();
        let mut r = SegmentReader::open(&path).unwrap();
        r.map_min = 0;
        r.map();
        let mut entries = 0;
        while r.next_entry().unwrap().is_some() {
            entries += 1;
        }
        assert_eq!(entries as i64, base / 20);
        assert!(r.map.is_some());
        assert_eq!(r.populates, 1);
        // Further along a longer file: once every MAP_POPULATE bytes.
        let mut long = Vec::new();
        while (long.len() as u64) < 3 * MAP_POPULATE {
            long.extend_from_slice(&seg);
        }
        std::fs::write(&path, &long).unwrap();
        let mut r = SegmentReader::open(&path).unwrap();
        r.map_min = 0;
        r.map();
        while r.next_entry().unwrap().is_some() {}
        let most = (long.len() as u64).div_ceil(MAP_POPULATE) as u32;
        assert!((2..=most).contains(&r.populates), "{}", r.populates);
    }

    #[test]
    fn chunking_threads_and_checks_ahead_change_nothing() {
        let seg = segment();
        check_variant(&seg, 0);
        // Started from the middle (as from an index entry).
        let second = batch(0, 1, 0, Compression::None).len() as u64;
        check_variant(&seg, second);
        // A torn tail, trailing zeros, a frame that cannot be read in the middle.
        check_variant(&seg[..seg.len() - 5], 0);
        let mut zeros = seg.clone();
        zeros.extend_from_slice(&[0; 3000]);
        check_variant(&zeros, 0);
        let mut bad = seg.clone();
        let third = 2 * second as usize + batch(1, 3, 10, Compression::None).len();
        bad[third + 16] = 7; // an unknown magic
        check_variant(&bad, 0);
        // Batches whose CRC does not hold (one byte of a record flipped in
        // every fourth), framed as usual: the checks made ahead say so too.
        let mut flipped = seg.clone();
        let mut at = 0;
        let mut n = 0;
        while at + 12 <= flipped.len() {
            let size = i32::from_be_bytes(flipped[at + 8..at + 12].try_into().unwrap()) as usize;
            if n % 4 == 1 {
                flipped[at + 12 + size - 1] ^= 0x20;
            }
            at += 12 + size;
            n += 1;
        }
        check_variant(&flipped, 0);
        check_variant(&[], 0);
        check_variant(&[0; 5], 0);
    }

    /// [`segment`] in a file of a fresh folder.
    fn written_segment() -> (tempfile::TempDir, PathBuf, Vec<u8>) {
        let seg = segment();
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.log");
        std::fs::write(&path, &seg).unwrap();
        (dir, path, seg)
    }

    #[test]
    fn buffers_go_from_one_reader_to_the_next() {
        let (_dir, path, _) = written_segment();
        let spare = || SPARE.with(|s| s.borrow().iter().map(|b| b.as_ptr()).collect::<Vec<_>>());
        assert!(spare().is_empty());
        let reference = read_all(&path, 0, 1000, ReadAhead::Never, false);
        let kept = spare();
        assert_eq!(kept.len(), 1);
        // The next reader on this thread reads into the same buffer.
        let mut r = SegmentReader::open(&path).unwrap();
        r.chunk_size = 500;
        r.read_ahead = ReadAhead::Never;
        assert!(r.next_entry().unwrap().is_some());
        assert!(spare().is_empty());
        assert_eq!(r.chunk.as_ptr(), kept[0]);
        drop(r);
        // Read-ahead threads take them too and hand all of theirs back,
        // whether the reader finished or stopped early.
        for stop_early in [false, true] {
            let mut r = SegmentReader::open(&path).unwrap();
            r.chunk_size = 700;
            r.read_ahead = ReadAhead::Always;
            r.check_ahead(Depth::Records(DecodeLimits::default()));
            let mut n = 0;
            while r.next_entry().unwrap().is_some() {
                n += 1;
                if stop_early && n == 3 {
                    break;
                }
            }
            drop(r);
            let now = spare();
            assert!(now.contains(&kept[0]), "stop early {stop_early}");
            assert!(now.len() <= SPARE_MAX, "stop early {stop_early}");
            if !stop_early {
                assert_eq!(now.len(), SPARE_MAX);
            }
        }
        // Buffers of other sizes change nothing.
        for (chunk, mode) in [(61, ReadAhead::Always), (20_000, ReadAhead::Never)] {
            let (entries, tail) = read_all(&path, 0, chunk, mode, true);
            assert_eq!(tail, reference.1);
            assert_eq!(entries.len(), reference.0.len());
            for ((p, b, _), (rp, rb, _)) in entries.iter().zip(&reference.0) {
                assert_eq!((p, b), (rp, rb));
            }
        }
    }

    #[test]
    fn dropping_a_mapped_reader_stops_the_thread_checking_ahead() {
        let (_dir, path, _) = written_segment();
        for stop_after in [0, 1, 3] {
            let mut r = SegmentReader::open(&path).unwrap();
            r.map_min = 0;
            r.stretch = 64;
            r.read_ahead = ReadAhead::Always;
            r.check_ahead(Depth::Records(DecodeLimits::default()));
            r.map();
            for _ in 0..stop_after {
                assert!(r.next_entry().unwrap().is_some());
            }
            assert!(stop_after == 0 || r.map_ahead.is_some());
            drop(r); // joins the thread: would hang if it could not stop
        }
    }

    #[test]
    fn dropping_a_reader_stops_its_threads() {
        let (_dir, path, _) = written_segment();
        for check in [false, true] {
            let mut r = SegmentReader::open(&path).unwrap();
            r.chunk_size = 64;
            r.read_ahead = ReadAhead::Always;
            if check {
                r.check_ahead(Depth::Records(DecodeLimits::default()));
            }
            assert!(r.next_entry().unwrap().is_some());
            drop(r); // joins the threads: would hang if one could not stop
        }
    }

    #[test]
    fn a_file_that_shrinks_is_an_io_error() {
        let (_dir, path, seg) = written_segment();
        for mode in [ReadAhead::Never, ReadAhead::Always] {
            let file = File::open(&path).unwrap();
            let mut r = SegmentReader::from_file(&path, file, seg.len() as u64 + 100, 0);
            r.chunk_size = 1000;
            r.read_ahead = mode;
            r.check_ahead(Depth::Records(DecodeLimits::default()));
            let err = first_error(&mut r, &format!("{mode:?}"), |_| {});
            assert!(err.to_string().contains("shrank"), "{mode:?}: {err}");
        }
        // Mapped: a file whose length was taken before it shrank, and a
        // file cut short while its reader is half way through.
        let file = File::open(&path).unwrap();
        let mut r = SegmentReader::from_file(&path, file, seg.len() as u64 + 5000, 0);
        r.map_min = 0;
        r.map();
        let err = first_error(&mut r, "mapped", |_| {});
        assert!(err.to_string().contains("shrank"), "mapped: {err}");
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("00000000000000000000.log");
        let mut bytes = Vec::new();
        while bytes.len() < 64 << 10 {
            bytes.extend_from_slice(&seg);
        }
        // With and without a thread checking every other stretch ahead
        // (which then reads past the cut too, and must not end the process).
        for ahead in [false, true] {
            std::fs::write(&big, &bytes).unwrap();
            let mut r = SegmentReader::open(&big).unwrap();
            r.map_min = 0;
            if ahead {
                r.stretch = 4096;
                r.read_ahead = ReadAhead::Always;
                r.check_ahead(Depth::Records(DecodeLimits::default()));
            }
            r.map();
            assert!(r.next_entry().unwrap().is_some());
            assert_eq!(r.map_ahead.is_some(), ahead);
            std::fs::OpenOptions::new()
                .write(true)
                .open(&big)
                .unwrap()
                .set_len(4096)
                .unwrap();
            let ctx = format!("mapped, cut, ahead {ahead}");
            let err = first_error(&mut r, &ctx, |e| {
                // Entries handed out before the cut was noticed are whole.
                assert!(e.position() < bytes.len() as u64);
            });
            assert!(err.to_string().contains("shrank"), "{ctx}: {err}");
        }
    }

    /// Read `r` until it fails, handing each entry to `each`; the error
    /// (a panic if the file ends without one).
    fn first_error(r: &mut SegmentReader, ctx: &str, mut each: impl FnMut(&Entry<'_>)) -> Error {
        loop {
            match r.next_entry() {
                Ok(Some(e)) => each(&e),
                Ok(None) => panic!("{ctx}: no error"),
                Err(e) => break e,
            }
        }
    }

    /// Renders a batch as its position, base offset and length; declines
    /// every third base offset.
    struct TestRenderer;

    impl RenderBatch for TestRenderer {
        fn render(
            &self,
            b: &BatchView<'_>,
            scratch: &mut Vec<u8>,
            out: &mut Vec<u8>,
            _limit: usize,
        ) -> bool {
            scratch.clear();
            scratch.extend_from_slice(b"garbage the caller must drop");
            out.extend_from_slice(scratch);
            if b.header.base_offset % 3 == 0 {
                return false;
            }
            out.truncate(out.len() - scratch.len());
            let text = format!(
                "{}:{}:{};",
                b.position,
                b.header.base_offset,
                b.bytes().len()
            );
            out.extend_from_slice(text.as_bytes());
            true
        }
    }

    #[test]
    fn batches_rendered_ahead_are_the_renderers_output_for_that_batch() {
        let (_dir, path, _) = written_segment();
        let reference = read_all(&path, 0, 0, ReadAhead::Never, false);
        for chunk in [61, 700, 1000, 20_000, 0] {
            let mut r = SegmentReader::open(&path).unwrap();
            if chunk > 0 {
                r.chunk_size = chunk;
            }
            r.read_ahead = ReadAhead::Always;
            r.render_ahead(Arc::new(TestRenderer));
            let (mut n, mut rendered) = (0, 0);
            while let Some(e) = r.next_entry().unwrap() {
                let (pos, bytes) = (e.position(), e_bytes(&e).to_vec());
                assert_eq!(
                    (pos, &bytes),
                    (reference.0[n].0, &reference.0[n].1),
                    "chunk {chunk}"
                );
                n += 1;
                let Some(text) = r.rendered() else { continue };
                let view = BatchView::new(&bytes, pos).unwrap();
                // Only plain batches the renderer accepted.
                assert_ne!(view.header.base_offset % 3, 0, "chunk {chunk} at {pos}");
                assert_eq!(view.header.compression().unwrap(), Compression::None);
                let want = format!("{}:{}:{};", pos, view.header.base_offset, bytes.len());
                assert_eq!(text, want.as_bytes(), "chunk {chunk}");
                rendered += 1;
            }
            assert_eq!(n, reference.0.len(), "chunk {chunk}");
            assert_eq!(r.tail(), reference.1, "chunk {chunk}");
            // No batch fits in 61 bytes, some in 700, most in 20,000.
            let least = match chunk {
                61 => 0,
                700 | 1000 => 1,
                _ => reference.0.len() / 2,
            };
            assert!(rendered >= least, "chunk {chunk}: {rendered} of {n}");
        }
    }
}
