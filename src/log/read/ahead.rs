//! Threads that read a large file ahead of its reader.
//!
//! Positioned reads into two recycled buffers per thread overlap reading
//! from the page cache with the reader's work, but only on the cores its
//! caller's [`Reads`](super::Reads) leaves beside its own: when every core
//! already walks a partition of its own, the reader reads on its own thread
//! ([`super::source::Plain`]). Memory is bounded by those buffers plus the
//! largest batch. With [`Ahead::Check`] the threads also run
//! [`BatchView::check`] on the plain batches of the chunk they just read,
//! while its bytes are in their cache, and the reader hands the result out
//! with the entry; with [`Ahead::Prepare`] they prepare those batches instead
//! (bytes the caller makes of them), and the reader hands out those bytes
//! with the entry.
//! The reader's own framing stays the authority: it uses a result only for
//! a batch at the same position with the same size, read from the very
//! buffer it frames.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender, TryRecvError};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use super::buffer::AlignedBuf;
use super::frame::{frame, plain_v2, Checked, Done, Frame};
use super::source::{read_full_at, shrank, Source};
use crate::format::batch::{BatchView, Depth, HEADER_SIZE_UP_TO_MAGIC};

/// Read-ahead buffers per thread (being filled, queued, being parsed).
const BUFFERS_PER_THREAD: usize = 2;
/// Read-ahead threads that also check batches, at most; one when they only
/// read. Checking threads do nearly all the work, so the reader's own core
/// goes to the first of them and the others need a free core each.
const CHECK_THREADS: usize = 2;
/// A preparation of whole batches into bytes that read-ahead threads run
/// (see [`SegmentReader::prepare_ahead`](super::SegmentReader::prepare_ahead)).
pub trait PrepareBatch: Send + Sync {
    /// Append `batch` prepared to `out` and return `true`; or return
    /// `false` to leave the batch to the caller (whatever was appended is
    /// dropped). `scratch` is the thread's, kept from batch to batch.
    /// Once `out` holds more than `limit` bytes the preparer gives up
    /// (returns `false`), checking as it goes: prepared bytes in flight stay
    /// bounded however much a batch's preparation outgrows its bytes.
    fn prepare(
        &self,
        batch: &BatchView<'_>,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> bool;
}

/// The prepared bytes a chunk may hold, as a multiple of its size. JSON of
/// records of about 100 bytes is about twice their size, so such chunks are
/// prepared whole; records of a few bytes prepare to ten times their size,
/// and the batches past the bound are left to the reading thread. With
/// every chunk in flight at the bound (6), a reader holds 12 MiB of chunks
/// and 36 MiB of prepared bytes, plus what one record prepares to past the
/// bound on each thread.
const RENDERED_PER_CHUNK: usize = 3;

/// What read-ahead threads do with the plain v2 batches (uncompressed,
/// wholly inside the chunk) of each chunk they read.
#[derive(Clone)]
pub(super) enum Ahead {
    Check(Depth),
    Prepare(Arc<dyn PrepareBatch>),
}

/// The reader's side of the read-ahead threads: the chunk it frames, and
/// what the thread that read it made of its batches.
pub(super) struct Threads {
    pool: Pool,
    chunk: AlignedBuf,
    /// Batches of the chunk checked by the thread that read it, by
    /// position; `checks[check_at..]` may still be handed out.
    checks: Vec<Checked>,
    check_at: usize,
    /// The preparations of the chunk's batches (see [`Done::Prepared`]).
    prepared: Vec<u8>,
}

impl Threads {
    /// Start `threads` threads reading `file` from `from` (an entry's
    /// start) to `end`, `chunk_size` bytes at a time, doing `ahead` with
    /// the plain batches; `None` if they could not be started.
    pub(super) fn start(
        file: &Arc<File>,
        (from, end): (u64, u64),
        chunk_size: usize,
        threads: usize,
        ahead: Option<Ahead>,
    ) -> Option<Threads> {
        let chain = Arc::new(Chain::new(from));
        let mut pool = Pool {
            chunks: Vec::new(),
            recycle: Vec::new(),
            chain: Arc::clone(&chain),
            threads: Vec::new(),
            next: 0,
            prepared: Arc::default(),
        };
        for index in 0..threads {
            let (out, chunks) = mpsc::sync_channel(BUFFERS_PER_THREAD);
            let (recycle, returned) = mpsc::channel();
            let job = Job {
                file: Arc::clone(file),
                start: from,
                end,
                chunk_size,
                index,
                threads,
                ahead: ahead.clone(),
                prepared: Arc::clone(&pool.prepared),
                chain: Arc::clone(&chain),
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
        Some(Threads {
            pool,
            chunk: AlignedBuf::default(),
            checks: Vec::new(),
            check_at: 0,
            prepared: Vec::new(),
        })
    }
}

impl Source for Threads {
    fn next_chunk(&mut self) -> io::Result<Range<usize>> {
        self.checks.clear();
        self.check_at = 0;
        let pool = &mut self.pool;
        let n = pool.chunks.len().max(1);
        let k = pool.next;
        let received = match pool.chunks.get(k % n) {
            Some(chunks) => chunks.recv(),
            None => return Err(shrank()),
        };
        match received {
            Ok(Ok(filled)) => {
                let old = std::mem::replace(&mut self.chunk, filled.buf);
                // The buffer of chunk k - 1 goes back to its thread.
                let owner = (k + n - 1) % n;
                if let (false, Some(recycle)) = (old.is_empty(), pool.recycle.get(owner)) {
                    // A thread that has ended needs it no more.
                    let _ = recycle.send(old);
                }
                pool.next += 1;
                self.checks = filled.checks;
                pool.prepared
                    .give(std::mem::replace(&mut self.prepared, filled.prepared));
                Ok(0..filled.len.min(self.chunk.len()))
            }
            Ok(Err(e)) => Err(e),
            // The thread stopped at the end of the file it was given.
            Err(_) => Err(shrank()),
        }
    }

    fn bytes(&self) -> &[u8] {
        &self.chunk
    }

    fn take_done(&mut self, at: u64, size: usize) -> Option<Done> {
        while self.checks.get(self.check_at)?.position < at {
            self.check_at += 1;
        }
        let c = self.checks.get(self.check_at)?;
        (c.position == at && c.size == size).then_some(c.done)
    }

    fn prepared(&self) -> &[u8] {
        &self.prepared
    }

    #[cfg(test)]
    fn name(&self) -> &'static str {
        "threads"
    }
}

/// A chunk read by a read-ahead thread: `buf[..len]`, the batches in it the
/// thread checked or prepared, and their preparations.
struct Filled {
    buf: AlignedBuf,
    len: usize,
    checks: Vec<Checked>,
    prepared: Vec<u8>,
}

type Message = io::Result<Filled>;

/// The read-ahead threads. Thread `w` of `n` reads chunks `w, w + n, ...`
/// (chunk `k` starts `k` chunk sizes after the starting position) and sends
/// them, in order, on its own channel, so taking chunk `k` from channel
/// `k % n` puts them back in file order.
struct Pool {
    chunks: Vec<Receiver<Message>>,
    /// Buffers handed back, to the thread that filled them.
    recycle: Vec<Sender<AlignedBuf>>,
    chain: Arc<Chain>,
    threads: Vec<JoinHandle<()>>,
    /// The chunk to take next.
    next: usize,
    /// Preparation buffers handed back, for any thread to prepare into.
    prepared: Arc<Spares>,
}

impl Pool {
    /// Stop the threads and wait for them.
    fn stop(&mut self) {
        // Wake threads waiting on the chain or for a recycled buffer, so
        // that each stops at its next wait or turn of its loop; take what
        // they send until they hang up (at most one read each is in
        // progress), then wait for them.
        self.chain.stop();
        self.recycle.clear();
        for chunks in self.chunks.drain(..) {
            chunks.iter().for_each(drop);
        }
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

impl Drop for Pool {
    fn drop(&mut self) {
        self.stop();
    }
}

/// Preparation buffers the reader has finished with, kept for the threads to
/// prepare the next chunks into (a fresh buffer per chunk would be faulted
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
    /// Check or prepare the plain batches of each chunk.
    ahead: Option<Ahead>,
    /// Buffers to prepare into.
    prepared: Arc<Spares>,
    chain: Arc<Chain>,
}

impl Job {
    /// Read (and check) this thread's chunks until the end of the file,
    /// an error, or a reader that has hung up.
    fn run(mut self, out: SyncSender<Message>, recycle: Receiver<AlignedBuf>) {
        self.fill(&out, &recycle);
    }

    fn fill(&mut self, out: &SyncSender<Message>, recycle: &Receiver<AlignedBuf>) {
        let mut allocated = 0;
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
            let mut buf = match recycle.try_recv() {
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
            // The last chunk may be shorter: read exactly one chunk.
            buf.grow_to(want);
            let len = match read_full_at(&self.file, buf.get_mut(..want).unwrap_or(&mut []), at) {
                Ok(len) => len,
                Err(e) => {
                    self.chain.hand_on(k, None);
                    let _ = out.send(Err(e));
                    return;
                }
            };
            let bytes = buf.get(..len).unwrap_or(&[]);
            let (checks, prepared) = match &self.ahead {
                Some(ahead) if len == want => self.frame_and_check(k, at, bytes, ahead),
                _ => {
                    self.chain.hand_on(k + 1, None);
                    (Vec::new(), Vec::new())
                }
            };
            let sent = len == 0
                || out
                    .send(Ok(Filled {
                        buf,
                        len,
                        checks,
                        prepared,
                    }))
                    .is_ok();
            if !sent {
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
    /// check or prepare the plain v2 batches that lie wholly inside the
    /// chunk (the preparations, one after the other, come second).
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
        let mut prepared = match ahead {
            Ahead::Prepare(_) => self.prepared.take(),
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
                    Ahead::Prepare(r) => {
                        let start = prepared.len();
                        let limit = RENDERED_PER_CHUNK * self.chunk_size;
                        if full || !r.prepare(&b, &mut scratch, &mut prepared, limit) {
                            // Past the bound: the rest of the chunk is the
                            // reading thread's.
                            full |= prepared.len() > limit;
                            prepared.truncate(start);
                            return None;
                        }
                        Done::Prepared {
                            start,
                            end: prepared.len(),
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
        (checks, prepared)
    }
}
