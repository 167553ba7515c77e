//! Where a [`SegmentReader`](super::SegmentReader)'s bytes come from: the
//! seam between framing (the reader) and reading.
//!
//! A source hands the reader the file in chunks, in order, from the
//! position the reader starts at. The reader frames entries in a chunk and
//! gathers the one entry that straddles two chunks itself, so a source
//! knows nothing of entries, except that one may have checked or prepared
//! some batches while reading them ([`Source::take_done`]). Two sources:
//!
//! - [`Plain`] (here): positioned reads on the calling thread into one
//!   reused buffer. The default, and what every other source must beat.
//! - [`super::ahead::Threads`]: threads that read (and check or prepare)
//!   the chunks ahead of the reader.
//!
//! A memory map was a third, until the bench timed it beside these two:
//! on one large segment the read-ahead threads were faster, and with a map
//! per job a parallel verification was slower than with plain reads.

use std::fs::File;
use std::io;
use std::ops::Range;
use std::os::unix::fs::FileExt;
use std::sync::Arc;

use super::buffer::AlignedBuf;
use super::frame::Done;

/// A reader's supply of bytes.
pub(super) trait Source: Send {
    /// Make the bytes that follow the current chunk the current chunk, and
    /// say where they are in [`bytes`](Source::bytes); an error when there
    /// are none (the file is shorter than when it was opened).
    fn next_chunk(&mut self) -> io::Result<Range<usize>>;

    /// What the ranges [`next_chunk`](Source::next_chunk) returns index.
    fn bytes(&self) -> &[u8];

    /// What was made ahead of the batch of `size` bytes at file position
    /// `at`, which the reader is about to hand out from the current chunk.
    fn take_done(&mut self, _at: u64, _size: usize) -> Option<Done> {
        None
    }

    /// The preparations that [`Done::Prepared`] ranges index.
    fn prepared(&self) -> &[u8] {
        &[]
    }

    /// The source's name, for tests.
    #[cfg(test)]
    fn name(&self) -> &'static str;
}

/// The error of a file that ends before the length it had when opened.
pub(super) fn shrank() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "file shrank while being read")
}

/// Read into `buf` from file position `at` until it is full or the file
/// ends; returns the bytes read.
pub(super) fn read_full_at(file: &File, buf: &mut [u8], at: u64) -> io::Result<usize> {
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

/// Positioned reads of `chunk_size` bytes at a time on the calling thread,
/// into one buffer, reused from chunk to chunk.
pub(super) struct Plain {
    file: Arc<File>,
    /// The position of the next read.
    next: u64,
    end: u64,
    chunk_size: usize,
    buf: AlignedBuf,
}

impl Plain {
    /// Read `file` from `from` to `end`.
    pub(super) fn new(file: Arc<File>, from: u64, end: u64, chunk_size: usize) -> Self {
        Plain {
            file,
            next: from,
            end,
            chunk_size,
            buf: AlignedBuf::default(),
        }
    }
}

impl Source for Plain {
    fn next_chunk(&mut self) -> io::Result<Range<usize>> {
        let left = usize::try_from(self.end.saturating_sub(self.next)).unwrap_or(usize::MAX);
        let want = self.chunk_size.min(left);
        if self.buf.len() < want {
            self.buf.grow_to(want);
        }
        let dst = self.buf.get_mut(..want).unwrap_or(&mut []);
        let got = read_full_at(&self.file, dst, self.next)?;
        if got == 0 {
            return Err(shrank());
        }
        self.next += got as u64;
        Ok(0..got)
    }

    fn bytes(&self) -> &[u8] {
        &self.buf
    }

    #[cfg(test)]
    fn name(&self) -> &'static str {
        "plain"
    }
}
