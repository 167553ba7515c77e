//! How entries frame, and how a segment ends: the rules of Kafka's
//! `FileLogInputStream.nextBatch`, shared by the reader and by the threads
//! that frame ahead of it.

use crate::error::{DecodeError, DecodeErrorKind};
use crate::format::batch::{self, HEADER_SIZE_UP_TO_MAGIC, LOG_OVERHEAD, MIN_ENTRY_SIZE};
use crate::format::record::RecordsChecked;

/// What [`BatchView::check`](crate::format::batch::BatchView::check) returned for a batch.
pub type BatchCheck = std::result::Result<RecordsChecked, DecodeError>;

/// What a read-ahead thread made of one batch.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Done {
    Checked(BatchCheck),
    /// Prepared as `prepared[start..end]` of its chunk.
    Prepared {
        start: usize,
        end: usize,
    },
}

/// A batch checked or prepared by a read-ahead thread.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Checked {
    pub(crate) position: u64,
    pub(crate) size: usize,
    pub(crate) done: Done,
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

/// Whether the entry that starts `entry` (with `magic`, from its framing)
/// is a plain v2 batch: uncompressed, the batches a thread checks or
/// prepares ahead of the reader (a compressed one is left to the reader,
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
