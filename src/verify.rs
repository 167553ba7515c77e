//! Integrity checks of segments, partitions and data directories.
//!
//! For every entry: framing (size, magic, length within the file), CRC
//! (CRC-32C for v2, CRC-32 for legacy), header rules (known codec,
//! lastOffsetDelta vs record count), and the records themselves
//! (decompressed when needed: lengths add up, count matches, offset deltas
//! in range). Across entries: offsets strictly increase, within a segment and
//! from one segment to the next; a segment's first batch is not below the
//! base offset in its name, and no offset overflows the segment's 32-bit
//! relative range. At the end: a torn tail or trailing zeros.
//!
//! A problem never stops the walk: every bad batch is reported with its
//! file and position, then the next one is read.

use std::path::{Path, PathBuf};

use crate::error::{DecodeError, DecodeErrorKind, Result};
use crate::format::{DecodeLimits, Entry};
use crate::log::segment::{SegmentReader, Tail};
use crate::log::{classify, parse_segment_name, DataDir, Partition, PathKind};

/// Added to a problem at byte 0: nothing in the file could be framed.
pub const NOT_A_SEGMENT: &str =
    " (the file does not start with a record batch: is it a Kafka log segment?)";

/// One problem found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Problem {
    pub file: PathBuf,
    /// Position of the entry (batch) the problem belongs to, or of the torn tail.
    pub position: u64,
    /// Stable snake_case kind (see [`DecodeErrorKind::name`]).
    pub kind: &'static str,
    /// Human-readable detail, with the exact byte position of the defect.
    pub detail: String,
    /// The batch's base offset when its header could be read.
    pub base_offset: Option<i64>,
    /// The underlying decode error.
    pub error: DecodeError,
}

/// Totals of what was checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Checked {
    pub files: u64,
    pub batches: u64,
    pub records: u64,
    pub bytes: u64,
}

/// The outcome of a verification.
#[derive(Debug, Clone, Default)]
pub struct Report {
    pub checked: Checked,
    pub problems: Vec<Problem>,
}

impl Report {
    /// Whether nothing was found.
    pub fn ok(&self) -> bool {
        self.problems.is_empty()
    }

    fn push(&mut self, file: &Path, position: u64, base_offset: Option<i64>, error: DecodeError) {
        self.problems.push(Problem {
            file: file.to_path_buf(),
            position,
            kind: error.kind_name(),
            detail: error.to_string(),
            base_offset,
            error,
        });
    }
}

/// What to check.
#[derive(Debug, Clone, Copy, Default)]
pub struct Options {
    pub limits: DecodeLimits,
}

/// Verify `path`: a data directory, a partition folder or one segment file.
pub fn verify_path(path: &Path, opts: &Options) -> Result<Report> {
    let mut report = Report::default();
    match classify(path)? {
        PathKind::File => {
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(parse_segment_name);
            let base = match name {
                Some((base, "log")) => Some(base),
                _ => None,
            };
            let mut last = None;
            verify_segment(path, base, &mut last, opts, &mut report)?;
        }
        PathKind::Partition => verify_partition(&Partition::open(path)?, opts, &mut report)?,
        PathKind::DataDir => {
            for p in DataDir::open(path)?.live() {
                verify_partition(p, opts, &mut report)?;
            }
        }
    }
    Ok(report)
}

/// Verify every segment of a partition, carrying the offset order across segments.
pub fn verify_partition(p: &Partition, opts: &Options, report: &mut Report) -> Result<()> {
    let mut last = None;
    for seg in &p.segments {
        verify_segment(&seg.log, Some(seg.base_offset), &mut last, opts, report)?;
    }
    Ok(())
}

/// Verify one segment. `segment_base` is the base offset from its name
/// (None for a file not named like a segment: then neither the base offset
/// nor the order of offsets is checked); `last_offset` carries the
/// previous entry's last offset in and this segment's out.
pub fn verify_segment(
    path: &Path,
    segment_base: Option<i64>,
    last_offset: &mut Option<i64>,
    opts: &Options,
    report: &mut Report,
) -> Result<()> {
    let mut reader = SegmentReader::open(path)?;
    // On a large file the read-ahead threads run check_crc_and_records on
    // the plain batches they read; the result comes with the entry.
    reader.check_ahead(opts.limits);
    report.checked.files += 1;
    let mut scratch = Vec::new();
    while let Some((entry, checked_ahead)) = reader.next_entry_checked()? {
        report.checked.batches += 1;
        report.checked.bytes += entry.size();
        let pos = entry.position();
        let base = entry.base_offset();
        let mut push = |e: DecodeError| report.push(path, pos, Some(base), e);
        if let Some(seg_base) = segment_base {
            if base < seg_base {
                push(DecodeError::new(
                    pos,
                    DecodeErrorKind::BelowSegmentBase {
                        segment_base: seg_base,
                        base_offset: base,
                    },
                ));
            } else if entry
                .checked_next_offset()
                .and_then(|next| (next - 1).checked_sub(seg_base))
                .is_none_or(|rel| rel > i64::from(i32::MAX))
            {
                push(DecodeError::new(
                    pos,
                    DecodeErrorKind::RelativeOffsetOverflow {
                        segment_base: seg_base,
                        offset: entry.last_offset(),
                    },
                ));
            }
        }
        // Offsets must increase in a real log. A file not named like a
        // segment may be batches captured from separate fetches, so the
        // order is not checked there.
        if let (Some(_), Some(prev)) = (segment_base, *last_offset) {
            if base <= prev {
                push(DecodeError::new(
                    pos,
                    DecodeErrorKind::OffsetNotIncreasing {
                        previous_last: prev,
                        base_offset: base,
                    },
                ));
            }
        }
        *last_offset = Some(entry.last_offset().max(last_offset.unwrap_or(i64::MIN)));
        // The CRC first: a batch that fails it is not read further.
        match entry {
            Entry::V2(batch) => match checked_ahead
                .unwrap_or_else(|| batch.check_crc_and_records(&mut scratch, opts.limits))
            {
                Ok(checked) => {
                    report.checked.records += checked.records;
                    if let Some(e) = checked.error {
                        report.push(path, pos, Some(base), e);
                    }
                }
                Err(e) => report.push(path, pos, Some(base), e),
            },
            Entry::Legacy(m) => match m.check_crc() {
                Ok(()) => report.checked.records += 1,
                Err(e) => report.push(path, pos, Some(base), e),
            },
        }
    }
    match reader.tail() {
        Some(Tail::Truncated { at, error, .. }) | Some(Tail::Corrupt { at, error, .. }) => {
            report.checked.bytes += reader.file_len() - at;
            report.push(path, at, None, error);
            if at == 0 {
                if let Some(p) = report.problems.last_mut() {
                    p.detail.push_str(NOT_A_SEGMENT);
                }
            }
        }
        _ => {}
    }
    Ok(())
}
