//! Entry headers without their bodies: counts that a header answers
//! (records, control batches, offsets) over gigabytes of log, with one
//! positioned read per header, or per window of small entries.

use crate::error::{Error, Result};
use crate::format::batch::{self, HEADER_LEN};
use crate::log::walk::Meter;
use crate::log::Partition;

/// One entry's header, read without its body (see [`Partition::headers_from`]).
#[derive(Debug, Clone, Copy)]
pub struct EntryHeader {
    /// Position in its segment file.
    pub position: u64,
    /// Bytes on disk.
    pub size: u64,
    /// The v2 batch header; `None` for a legacy (magic 0/1) entry.
    pub batch: Option<batch::BatchHeader>,
}

/// Entry headers from an offset on, bodies stepped over (see
/// [`Partition::headers_from`]).
pub struct HeaderWalk<'p> {
    partition: &'p Partition,
    seg: usize,
    file: Option<(std::fs::File, u64)>,
    pos: u64,
    from: i64,
    done: bool,
    /// Bytes of the current segment from `window_at` on, as last read.
    window: Vec<u8>,
    window_at: u64,
    /// Whether the last entry stepped over was small enough that reading
    /// [`HEADER_WINDOW`] bytes at once serves several headers.
    small: bool,
    meter: Option<&'static Meter>,
}

/// Bytes read at once while entries are small. One system call costs
/// about as much as copying a few KiB from the page cache, so a window
/// pays off once it holds several headers: after an entry of at most
/// [`SMALL_ENTRY`] bytes. Larger entries are stepped over with a read of
/// the header alone.
const HEADER_WINDOW: usize = 16 * 1024;
const SMALL_ENTRY: u64 = 4 * 1024;

impl Partition {
    /// The headers of the entries holding offsets from `offset` on, read
    /// with positioned reads of each header and the bodies stepped over —
    /// for counts a header answers (records, control, offsets) without
    /// reading gigabytes. No CRC is checked; the walk ends at the first
    /// framing damage or at an entry whose offsets overflow.
    pub fn headers_from(&self, offset: i64) -> HeaderWalk<'_> {
        let (seg, pos) = self.seek(offset).unwrap_or((0, 0));
        HeaderWalk {
            partition: self,
            seg,
            file: None,
            pos,
            from: offset,
            done: false,
            window: Vec::new(),
            window_at: 0,
            small: false,
            meter: None,
        }
    }
}

impl HeaderWalk<'_> {
    /// Count the bytes of the entries passed in `meter` (none if `None`).
    pub fn metered(mut self, meter: Option<&'static Meter>) -> Self {
        self.meter = meter;
        self
    }

    /// The next entry's header, or `None` at the end (or at damage).
    pub fn next_header(&mut self) -> Result<Option<EntryHeader>> {
        use crate::log::read::{frame, Frame};
        loop {
            if self.done {
                return Ok(None);
            }
            let Some(segment) = self.partition.segments.get(self.seg) else {
                self.done = true;
                return Ok(None);
            };
            let (file, len) = match &self.file {
                Some((f, len)) => (f, *len),
                None => {
                    let f = crate::log::files::open_regular(&segment.log)?;
                    let len = f
                        .metadata()
                        .map_err(|e| Error::io(&segment.log, "stat", e))?
                        .len();
                    self.file = Some((f, len));
                    continue;
                }
            };
            if self.pos >= len {
                self.file = None;
                self.window.clear();
                self.seg += 1;
                self.pos = 0;
                continue;
            }
            let left = len - self.pos;
            let n = (left.min(HEADER_LEN as u64)) as usize;
            let offset_in_window = self.pos.checked_sub(self.window_at);
            let held = offset_in_window
                .and_then(|o| usize::try_from(o).ok())
                .filter(|&o| o + n <= self.window.len());
            let at = match held {
                Some(o) => o,
                None => {
                    let want = if self.small { HEADER_WINDOW } else { n };
                    let want = (left.min(want as u64) as usize).max(n);
                    self.window.resize(want, 0);
                    crate::log::read::read_exact_at(file, &mut self.window, self.pos)
                        .map_err(|e| Error::io(&segment.log, "read", e))?;
                    self.window_at = self.pos;
                    0
                }
            };
            let mut head = [0u8; HEADER_LEN];
            if let (Some(to), Some(from)) = (head.get_mut(..n), self.window.get(at..at + n)) {
                to.copy_from_slice(from);
            }
            const UP_TO_MAGIC: usize = batch::HEADER_SIZE_UP_TO_MAGIC;
            let mut up_to_magic = [0u8; UP_TO_MAGIC];
            match head.get(..UP_TO_MAGIC) {
                Some(h) if n >= UP_TO_MAGIC => up_to_magic.copy_from_slice(h),
                _ => {
                    self.done = true;
                    return Ok(None);
                }
            }
            let Frame::Whole { total, magic } = frame(&up_to_magic, left) else {
                self.done = true;
                return Ok(None);
            };
            let position = self.pos;
            self.pos += total;
            self.small = total <= SMALL_ENTRY;
            if let Some(m) = self.meter {
                m.add(total);
            }
            let header = if magic == 2 {
                let Ok(h) = batch::BatchHeader::parse(&head, position) else {
                    self.done = true;
                    return Ok(None);
                };
                let last = h.base_offset.checked_add(i64::from(h.last_offset_delta));
                match last {
                    None => {
                        self.done = true;
                        return Ok(None);
                    }
                    Some(last) if last < self.from => continue,
                    Some(_) => Some(h),
                }
            } else {
                None
            };
            return Ok(Some(EntryHeader {
                position,
                size: total,
                batch: header,
            }));
        }
    }
}
