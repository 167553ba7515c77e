//! Streaming reader over one segment file, entry by entry, with a verdict
//! on how the file ends.
//!
//! The reader holds one buffer that grows only to the largest entry, and
//! only after checking that the file really has that many bytes, so memory
//! is bounded by the largest batch and never exceeds the file's size. It
//! frames entries the way Kafka's `FileLogInputStream` does: offset + size,
//! then the magic at byte 16. A size that runs past the end of the file is a
//! torn tail; a size below 14, an unknown magic or a v2 batch shorter than
//! its header is corruption, after which nothing can be framed and the
//! reader stops. A CRC mismatch does not break the framing, so the reader
//! goes on and leaves the CRC to the caller.

use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

use crate::error::{DecodeError, DecodeErrorKind, Error, Result};
use crate::format::batch::{
    self, BatchView, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_ENTRY_SIZE,
};
use crate::format::{Entry, LegacyView};

const READ_CHUNK: usize = 1 << 20;

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
    file: File,
    file_len: u64,
    buf: Vec<u8>,
    /// Window of valid bytes in `buf`.
    start: usize,
    end: usize,
    /// File position of `buf[start]`.
    pos: u64,
    tail: Option<Tail>,
}

impl SegmentReader {
    /// Open `path` read-only.
    pub fn open(path: &Path) -> Result<Self> {
        let file = File::open(path).map_err(|e| Error::io(path, "open", e))?;
        let meta = file.metadata().map_err(|e| Error::io(path, "stat", e))?;
        if meta.is_dir() {
            return Err(Error::layout(path, "is a directory, not a segment file"));
        }
        Ok(Self::from_file(path, file, meta.len(), 0))
    }

    /// Read `file` (of length `file_len`) from byte `start_at`.
    pub fn from_file(path: &Path, file: File, file_len: u64, start_at: u64) -> Self {
        SegmentReader {
            path: path.to_path_buf(),
            file,
            file_len,
            buf: Vec::new(),
            start: 0,
            end: 0,
            pos: start_at.min(file_len),
            tail: None,
        }
    }

    /// Open `path` and start reading at `position` (e.g. from an index entry).
    pub fn open_at(path: &Path, position: u64) -> Result<Self> {
        let mut r = Self::open(path)?;
        r.pos = position.min(r.file_len);
        use std::io::{Seek, SeekFrom};
        r.file
            .seek(SeekFrom::Start(r.pos))
            .map_err(|e| Error::io(path, "seek", e))?;
        Ok(r)
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

    fn available(&self) -> usize {
        self.end - self.start
    }

    /// Make `n` bytes from the current position available in the buffer.
    /// The caller has checked that the file holds them.
    fn fill(&mut self, n: usize) -> Result<()> {
        if self.available() >= n {
            return Ok(());
        }
        if self.start > 0 {
            self.buf.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let want = n.max(READ_CHUNK);
        if self.buf.len() < want {
            self.buf.resize(want, 0);
        }
        let file_left = self.file_len - self.pos - self.available() as u64;
        while self.end < n {
            let room =
                (self.buf.len() - self.end).min(usize::try_from(file_left).unwrap_or(usize::MAX));
            let dst = self
                .buf
                .get_mut(self.end..self.end + room)
                .unwrap_or(&mut []);
            let got = self
                .file
                .read(dst)
                .map_err(|e| Error::io(&self.path, "read", e))?;
            if got == 0 {
                return Err(Error::io(
                    &self.path,
                    "read",
                    std::io::Error::new(
                        std::io::ErrorKind::UnexpectedEof,
                        "file shrank while being read",
                    ),
                ));
            }
            self.end += got;
        }
        Ok(())
    }

    fn finish(&mut self, tail: Tail) -> Result<Option<Entry<'_>>> {
        self.tail = Some(tail);
        Ok(None)
    }

    /// Whether every byte from the current position to the end is zero
    /// (read with positioned reads, leaving the buffer as it is).
    fn rest_is_zero(&self) -> Result<bool> {
        use std::os::unix::fs::FileExt;
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

    /// The next entry, or `None` at the end (then [`tail`](Self::tail) says how it ended).
    pub fn next_entry(&mut self) -> Result<Option<Entry<'_>>> {
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
            self.fill(left as usize)?;
            // Twelve or more zeros include a zero size field, which no real
            // entry has; fewer could be the start of a real batch header.
            let zeros = self
                .buf
                .get(self.start..self.end)
                .is_some_and(|b| b.iter().all(|&x| x == 0));
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
        self.fill(HEADER_SIZE_UP_TO_MAGIC)?;
        let head = self
            .buf
            .get(self.start..self.start + HEADER_SIZE_UP_TO_MAGIC)
            .unwrap_or(&[]);
        let size = i32::from_be_bytes(
            head.get(8..12)
                .and_then(|b| b.try_into().ok())
                .unwrap_or([0; 4]),
        );
        let magic = head.get(16).map_or(0, |&m| m as i8);
        if size == 0 && head.iter().all(|&b| b == 0) && self.rest_is_zero()? {
            let error = DecodeError::new(at, DecodeErrorKind::TrailingZeros { len: left });
            return self.finish(Tail::Corrupt {
                at,
                len: left,
                error,
            });
        }
        if size < MIN_ENTRY_SIZE {
            let error = DecodeError::new(
                at + batch::BATCH_LENGTH as u64,
                DecodeErrorKind::SizeTooSmall { size },
            );
            return self.finish(Tail::Corrupt {
                at,
                len: left,
                error,
            });
        }
        let total = LOG_OVERHEAD as u64 + size as u64;
        if total > left {
            return self.finish(Tail::Truncated {
                at,
                len: left,
                error: torn(total),
            });
        }
        if !(0..=2).contains(&magic) {
            let error = DecodeError::new(
                at + batch::MAGIC as u64,
                DecodeErrorKind::UnsupportedMagic(magic),
            );
            return self.finish(Tail::Corrupt {
                at,
                len: left,
                error,
            });
        }
        if magic == 2 && total < batch::HEADER_LEN as u64 {
            let error = DecodeError::new(
                at + batch::BATCH_LENGTH as u64,
                DecodeErrorKind::BatchTooSmall { size: total as i64 },
            );
            return self.finish(Tail::Corrupt {
                at,
                len: left,
                error,
            });
        }
        let total = total as usize;
        self.fill(total)?;
        let range = self.start..self.start + total;
        self.start += total;
        self.pos += total as u64;
        let bytes = self.buf.get(range).unwrap_or(&[]);
        let entry = if magic == 2 {
            BatchView::new(bytes, at).map(Entry::V2)
        } else {
            LegacyView::new(bytes, at).map(Entry::Legacy)
        };
        match entry {
            Ok(e) => Ok(Some(e)),
            Err(error) => {
                // The frame was whole but its fields do not parse: stop here.
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
