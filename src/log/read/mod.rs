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
//! The reader frames; where its bytes come from is a `Source` chosen
//! when the first entry is read (`read/source.rs` says what each does): plain
//! positioned reads on the calling thread, or threads that read (and check
//! or prepare) ahead. An entry inside one chunk is handed out
//! as a slice of it; only an entry that straddles two chunks is copied,
//! into a carry buffer that grows to the largest such entry, and only after
//! checking that the file really has that many bytes. Each way of reading
//! besides the plain one is kept because the bench times it beside the
//! plain one (`tests/bench/last-run.md`, "Ways of reading").

mod ahead;
pub mod buffer;
pub mod compare;
mod frame;
mod source;

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::error::{DecodeError, DecodeErrorKind, Error, Result};
use crate::format::batch::{BatchView, Depth, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD};
use crate::format::{Entry, LegacyView};
pub use ahead::PrepareBatch;
use ahead::{Ahead, Threads};
use frame::Done;
pub(crate) use frame::{frame, Frame};
pub use frame::{BatchCheck, Tail};

/// Read `buf.len()` bytes of `file` at position `at`, the way the reader
/// reads: for the callers that must frame bytes by another tool's rules
/// (kafka-dump-log's, [`crate::inspect::dump_log`]). An end of file
/// before the buffer is full is `UnexpectedEof`.
pub fn read_exact_at(file: &std::fs::File, buf: &mut [u8], at: u64) -> std::io::Result<()> {
    if source::read_full_at(file, buf, at)? < buf.len() {
        return Err(source::shrank());
    }
    Ok(())
}
use source::{shrank, Plain, Source};

/// Bytes per read, and the size of each chunk buffer, on the calling
/// thread and on read-ahead threads alike. Large, because a batch that
/// straddles two chunks is gathered in the carry buffer (and, when reading
/// ahead, checked by the reader's own thread rather than by the one that
/// read it): at 2 MiB a few percent of 58 KB batches do, at 64 KiB nearly
/// all. Buffers are [page-aligned](buffer), without which a large buffer
/// costs more system time per read.
const READ_CHUNK: usize = 2 << 20;
/// Read-ahead threads that also check batches, at most; one when they only
/// read. Checking threads do nearly all the work, so the reader's own core
/// goes to the first of them and the others need a free core each.
const CHECK_THREADS: usize = 2;
/// Files (from the starting position) smaller than this are read on the
/// calling thread: threads would cost more than they save.
const READ_AHEAD_MIN: u64 = 16 << 20;

/// How a reader gets its bytes, chosen by its caller (a command's
/// `--reads` and `--threads`; a parallel verification gives each job its
/// share of the cores).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Reads {
    /// Read a large file ahead on threads, on the machine's cores besides
    /// the caller's ([`available_cores`]).
    #[default]
    Auto,
    /// Read a large file ahead on threads, on at most this many cores, the
    /// caller's included: 1 reads on the calling thread only.
    Cores(usize),
    /// Positioned reads on the calling thread only: no thread.
    Plain,
}

impl Reads {
    /// The cores a reader may run on, its caller's included.
    pub fn cores(self) -> usize {
        match self {
            Reads::Auto => available_cores(),
            Reads::Cores(n) => n.max(1),
            Reads::Plain => 1,
        }
    }
}

/// The cores this process may run on: `available_parallelism`, which
/// follows the CPU affinity mask (under `taskset -c 0` it is one).
pub fn available_cores() -> usize {
    std::thread::available_parallelism().map_or(1, |n| n.get())
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

/// What the caller asked of the reader before its first entry: which
/// source it gets ([`SegmentReader::start_source`]).
struct Asked {
    reads: Reads,
    ahead: Option<Ahead>,
    read_ahead: ReadAhead,
    /// Bytes per read: [`READ_CHUNK`] (tests set others).
    chunk_size: usize,
}

/// Reads the entries of one `.log` file in order.
pub struct SegmentReader {
    path: PathBuf,
    file: Arc<File>,
    file_len: u64,
    /// File position of the next unread byte (the next entry).
    pos: u64,
    tail: Option<Tail>,
    /// Where the bytes come from; `None` before the first entry.
    source: Option<Box<dyn Source>>,
    /// `source.bytes()[chunk_start..chunk_end]` is the unread part of the current chunk.
    chunk_start: usize,
    chunk_end: usize,
    /// Unread bytes that come before the chunk's: the start of an entry
    /// that straddles chunks, gathered in one place.
    carry: Vec<u8>,
    carry_start: usize,
    asked: Asked,
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
            source: None,
            chunk_start: 0,
            chunk_end: 0,
            carry: Vec::new(),
            carry_start: 0,
            asked: Asked {
                reads: Reads::Auto,
                ahead: None,
                read_ahead: ReadAhead::Auto,
                chunk_size: READ_CHUNK,
            },
            current: None,
        }
    }

    /// Open `path` and start reading at `position` (e.g. from an index entry).
    pub fn open_at(path: &Path, position: u64) -> Result<Self> {
        let file = crate::log::files::open_regular(path)?;
        let meta = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
        Ok(Self::from_file(path, file, meta.len(), position))
    }

    /// Get the bytes only as `reads` allows. Takes effect only before the
    /// first entry is read.
    pub fn reads(&mut self, reads: Reads) {
        self.asked.reads = reads;
    }

    /// Have the read-ahead threads (if the file is large enough to get
    /// them) run [`BatchView::check`] at `depth` on the plain
    /// (uncompressed) v2 batches of each chunk they read; the results come
    /// with the entries from
    /// [`next_entry_checked`](Self::next_entry_checked). Takes effect only
    /// before the first entry is read.
    pub fn check_ahead(&mut self, depth: Depth) {
        self.asked.ahead = Some(Ahead::Check(depth));
    }

    /// Have the read-ahead threads (if the file is large enough to get
    /// them) prepare the plain (uncompressed) v2 batches of each chunk they
    /// read with `preparer`, instead of checking them; a batch's preparation
    /// comes with it from [`prepared`](Self::prepared). Takes effect only
    /// before the first entry is read.
    pub fn prepare_ahead(&mut self, preparer: Arc<dyn PrepareBatch>) {
        self.asked.ahead = Some(Ahead::Prepare(preparer));
    }

    /// The file's length when it was opened.
    pub fn file_len(&self) -> u64 {
        self.file_len
    }

    /// How the file ended; `None` until iteration has finished.
    pub fn tail(&self) -> Option<Tail> {
        self.tail
    }

    /// The source for what the caller asked and the file's size from the
    /// starting position: read-ahead threads for a large file when the
    /// caller's [`Reads`] leaves cores beside its own, else plain reads.
    fn start_source(&mut self) -> Box<dyn Source> {
        let asked = &self.asked;
        let left = self.file_len - self.pos;
        let large = left >= READ_AHEAD_MIN;
        // Threads that check do the work while this one frames, so its
        // core goes to the first; a thread that only reads runs beside it.
        let (most, lent) = match asked.ahead {
            Some(_) => (CHECK_THREADS, 1),
            None => (1, 0),
        };
        let threads = match asked.read_ahead {
            _ if asked.reads == Reads::Plain => None,
            // The cores are asked for only here: a small file (most
            // segments) costs no look at the affinity mask or cgroup.
            ReadAhead::Auto if large => match (most - lent).min(asked.reads.cores() - 1) {
                0 => None,
                n => Some(n + lent),
            },
            ReadAhead::Auto => None,
            #[cfg(test)]
            ReadAhead::Never => None,
            #[cfg(test)]
            ReadAhead::Always => Some(most),
        };
        if let Some(n) = threads {
            let span = (self.pos, self.file_len);
            let ahead = asked.ahead.clone();
            if let Some(t) = Threads::start(&self.file, span, asked.chunk_size, n, ahead) {
                return Box::new(t);
            }
        }
        Box::new(Plain::new(
            Arc::clone(&self.file),
            self.pos,
            self.file_len,
            asked.chunk_size,
        ))
    }

    /// Replace the chunk, whose bytes are all consumed, with the next one.
    fn next_chunk(&mut self) -> Result<()> {
        if self.source.is_none() {
            self.source = Some(self.start_source());
        }
        let Some(source) = self.source.as_mut() else {
            return Err(Error::io(&self.path, "read", shrank()));
        };
        let range = source
            .next_chunk()
            .map_err(|e| Error::io(&self.path, "read", e))?;
        self.chunk_start = range.start;
        self.chunk_end = range.end;
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
            // Only the source's field: the carry buffer is borrowed beside it.
            let chunk = self.source.as_ref().map_or(&[][..], |s| s.bytes());
            let Some(src) = chunk.get(self.chunk_start..self.chunk_start + take) else {
                return Err(Error::io(&self.path, "read", shrank()));
            };
            self.carry.extend_from_slice(src);
            self.chunk_start += take;
        }
        Ok(())
    }

    /// The current chunk's bytes.
    fn chunk_bytes(&self) -> &[u8] {
        self.source.as_ref().map_or(&[], |s| s.bytes())
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

    /// The check a source made ahead of the batch of `size` bytes at `at`,
    /// which is about to be handed out from the current chunk.
    fn take_check(&mut self, at: u64, size: usize) -> Option<Done> {
        self.source.as_mut()?.take_done(at, size)
    }

    fn finish<T>(&mut self, tail: Tail) -> Result<Option<T>> {
        self.tail = Some(tail);
        self.current = None;
        Ok(None)
    }

    /// Whether every byte from the current position to the end is zero
    /// (read with positioned reads, leaving the buffers as they are).
    ///
    /// Only the file's data is read: the holes of a sparse file (space a
    /// preallocation or a `truncate` extended the file by, never written)
    /// read as zeros, and `lseek(SEEK_DATA)` skips them, then
    /// `SEEK_HOLE` bounds the data read. A 100 GB file of holes after its
    /// last batch is answered without reading it. (Kafka does not look
    /// past the zero size field: `FileLogInputStream.nextBatch` throws
    /// `CorruptRecordException` on a size below 14, and `LogSegment.recover`
    /// truncates there; klog tells preallocated zeros from damage, so it
    /// must know that the rest is zeros.)
    fn rest_is_zero(&self) -> Result<bool> {
        let mut at = self.pos;
        let mut chunk = Vec::new();
        while at < self.file_len {
            let (data, hole) = match crate::log::files::data_extent(&self.file, at, self.file_len) {
                Some(extent) => extent,
                None => return Ok(true), // holes to the end
            };
            at = data;
            while at < hole {
                let n = usize::try_from(hole - at)
                    .unwrap_or(READ_CHUNK)
                    .min(READ_CHUNK);
                if chunk.len() < n {
                    chunk.resize(n, 0);
                }
                let part = chunk.get_mut(..n).unwrap_or(&mut []);
                self.file
                    .read_exact_at(part, at)
                    .map_err(|e| Error::io(&self.path, "read", e))?;
                if part.iter().any(|&b| b != 0) {
                    return Ok(false);
                }
                at += n as u64;
            }
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

    /// The read-ahead threads' preparation of the entry the last
    /// [`advance`](Self::advance) (or `next_entry*`) framed (see
    /// [`prepare_ahead`](Self::prepare_ahead)); `None` when it was not prepared.
    pub fn prepared(&self) -> Option<&[u8]> {
        match self.current.as_ref()?.done? {
            Done::Prepared { start, end } => self.source.as_ref()?.prepared().get(start..end),
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
        if self.tail.is_some() {
            return Ok(None);
        }
        let at = self.pos;
        let left = self.file_len - at;
        if left == 0 {
            return self.finish(Tail::Clean);
        }
        let (total, magic) = match self.frame_next(at, left)? {
            Ok(framed) => framed,
            Err(tail) => return self.finish(tail),
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
        let bytes = if from_carry {
            self.carry.get(range)
        } else {
            self.source.as_ref().and_then(|s| s.bytes().get(range))
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

    /// Frame the entry at `at` (`left` bytes before the end of the file):
    /// its size and magic, or the tail the file ends with there.
    fn frame_next(&mut self, at: u64, left: u64) -> Result<std::result::Result<(usize, i8), Tail>> {
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
                return Ok(Err(Tail::Corrupt {
                    at,
                    len: left,
                    error,
                }));
            }
            let error = torn(HEADER_SIZE_UP_TO_MAGIC as u64 + 1);
            return Ok(Err(Tail::Truncated {
                at,
                len: left,
                error,
            }));
        }
        self.ensure(HEADER_SIZE_UP_TO_MAGIC)?;
        let mut head = [0u8; HEADER_SIZE_UP_TO_MAGIC];
        head.copy_from_slice(self.unread(HEADER_SIZE_UP_TO_MAGIC));
        if head.iter().all(|&b| b == 0) && self.rest_is_zero()? {
            let error = DecodeError::new(at, DecodeErrorKind::TrailingZeros { len: left });
            return Ok(Err(Tail::Corrupt {
                at,
                len: left,
                error,
            }));
        }
        Ok(match frame(&head, left) {
            Frame::Whole { total, magic } => Ok((total as usize, magic)),
            Frame::PastEnd { declared } => Err(Tail::Truncated {
                at,
                len: left,
                error: torn(declared),
            }),
            Frame::Corrupt { at: field, kind } => Err(Tail::Corrupt {
                at,
                len: left,
                error: DecodeError::new(at + field, kind),
            }),
        })
    }
}

#[cfg(test)]
impl SegmentReader {
    /// The source's name (see [`Source::name`]); "" before the first entry.
    fn source_name(&self) -> &'static str {
        self.source.as_ref().map_or("", |s| s.name())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::batch;
    use crate::format::batch::DecodeLimits;
    use crate::format::{encode_batch, BatchSpec, Compression, NewRecord};

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
                let c = crate::format::batch::batch_crc(&b);
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
        let mut r = SegmentReader::open_at(path, at).unwrap();
        if chunk > 0 {
            r.asked.chunk_size = chunk;
        }
        r.asked.read_ahead = mode;
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
    }

    #[test]
    fn reads_plain_keeps_threads_out_and_changes_nothing() {
        let (_dir, path, _) = written_segment();
        let read = |reads: Reads| {
            let mut r = SegmentReader::open(&path).unwrap();
            r.asked.chunk_size = 700;
            r.asked.read_ahead = ReadAhead::Always;
            r.check_ahead(Depth::Batch);
            r.reads(reads);
            let mut entries = Vec::new();
            while let Some((e, _)) = r.next_entry_checked().unwrap() {
                entries.push((e.position(), e_bytes(&e).to_vec()));
            }
            (entries, r.tail(), r.source_name())
        };
        let (auto, auto_tail, auto_source) = read(Reads::Auto);
        assert_eq!(auto_source, "threads");
        let (plain, plain_tail, plain_source) = read(Reads::Plain);
        assert_eq!(plain_source, "plain");
        assert_eq!((plain, plain_tail), (auto.clone(), auto_tail));
        assert!(auto.len() > 3);
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
    fn dropping_a_reader_stops_its_threads() {
        let (_dir, path, _) = written_segment();
        for check in [false, true] {
            let mut r = SegmentReader::open(&path).unwrap();
            r.asked.chunk_size = 64;
            r.asked.read_ahead = ReadAhead::Always;
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
            r.asked.chunk_size = 1000;
            r.asked.read_ahead = mode;
            r.check_ahead(Depth::Records(DecodeLimits::default()));
            let err = first_error(&mut r, &format!("{mode:?}"), |_| {});
            assert!(err.to_string().contains("shrank"), "{mode:?}: {err}");
        }
        // A file cut short while its reader is half way through.
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("00000000000000000000.log");
        let mut bytes = Vec::new();
        while bytes.len() < 64 << 10 {
            bytes.extend_from_slice(&seg);
        }
        for mode in [ReadAhead::Never, ReadAhead::Always] {
            std::fs::write(&big, &bytes).unwrap();
            let mut r = SegmentReader::open(&big).unwrap();
            r.asked.chunk_size = 4096;
            r.asked.read_ahead = mode;
            r.check_ahead(Depth::Records(DecodeLimits::default()));
            assert!(r.next_entry().unwrap().is_some());
            std::fs::OpenOptions::new()
                .write(true)
                .open(&big)
                .unwrap()
                .set_len(4096)
                .unwrap();
            let ctx = format!("cut, {mode:?}");
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

    /// Prepares a batch as its position, base offset and length; declines
    /// every third base offset.
    struct TestPrepareer;

    impl PrepareBatch for TestPrepareer {
        fn prepare(
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
    fn batches_prepared_ahead_are_the_preparers_output_for_that_batch() {
        let (_dir, path, _) = written_segment();
        let reference = read_all(&path, 0, 0, ReadAhead::Never, false);
        for chunk in [61, 700, 1000, 20_000, 0] {
            let mut r = SegmentReader::open(&path).unwrap();
            if chunk > 0 {
                r.asked.chunk_size = chunk;
            }
            r.asked.read_ahead = ReadAhead::Always;
            r.prepare_ahead(Arc::new(TestPrepareer));
            let (mut n, mut prepared) = (0, 0);
            while let Some(e) = r.next_entry().unwrap() {
                let (pos, bytes) = (e.position(), e_bytes(&e).to_vec());
                assert_eq!(
                    (pos, &bytes),
                    (reference.0[n].0, &reference.0[n].1),
                    "chunk {chunk}"
                );
                n += 1;
                let Some(text) = r.prepared() else { continue };
                let view = BatchView::new(&bytes, pos).unwrap();
                // Only plain batches the preparer accepted.
                assert_ne!(view.header.base_offset % 3, 0, "chunk {chunk} at {pos}");
                assert_eq!(view.header.compression().unwrap(), Compression::None);
                let want = format!("{}:{}:{};", pos, view.header.base_offset, bytes.len());
                assert_eq!(text, want.as_bytes(), "chunk {chunk}");
                prepared += 1;
            }
            assert_eq!(n, reference.0.len(), "chunk {chunk}");
            assert_eq!(r.tail(), reference.1, "chunk {chunk}");
            // No batch fits in 61 bytes, some in 700, most in 20,000.
            let least = match chunk {
                61 => 0,
                700 | 1000 => 1,
                _ => reference.0.len() / 2,
            };
            assert!(prepared >= least, "chunk {chunk}: {prepared} of {n}");
        }
    }
}
