//! What a broker's log recovery does, as functions klog can show before it
//! does anything: where the first invalid batch of a segment is, what lies
//! beyond it (resync), how indexes are rebuilt from the log, and what a
//! broker restarting after an unclean shutdown would cut and delete.
//!
//! Kafka's recovery (`LogSegment.recover`) checks only each batch's framing
//! and CRC; it truncates the segment at the first batch that fails and
//! deletes every later segment. The same definition of "valid" is used here,
//! so klog's plan and the broker's agree.

use std::os::unix::fs::FileExt;
use std::path::Path;

use crate::error::{DecodeError, Error, Result};
use crate::format::batch::{self, BatchView, HEADER_LEN};
use crate::format::index::{encode_offset_entry, encode_time_entry};
use crate::format::Entry;
use crate::log::segment::{SegmentReader, Tail};
use crate::log::{Partition, SegmentFiles};

/// Where a segment stops being valid.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Damage {
    /// Position of the first invalid byte (the start of the first bad batch, or of the torn tail).
    pub position: u64,
    /// The file's length.
    pub file_len: u64,
    /// What is wrong there.
    pub error: DecodeError,
    /// The last offset of the valid part (one below the next offset), if any batch is valid.
    pub last_valid_offset: Option<i64>,
}

/// The first position where framing or a CRC fails, as Kafka's recovery sees it.
pub fn first_damage(log: &Path) -> Result<Option<Damage>> {
    let mut r = SegmentReader::open(log)?;
    let mut last_valid_offset = None;
    while let Some(e) = r.next_entry()? {
        if let Err(error) = e.check_crc() {
            return Ok(Some(Damage {
                position: e.position(),
                file_len: r.file_len(),
                error,
                last_valid_offset,
            }));
        }
        last_valid_offset = Some(e.last_offset());
    }
    Ok(match r.tail() {
        Some(Tail::Truncated { at, error, .. } | Tail::Corrupt { at, error, .. }) => Some(Damage {
            position: at,
            file_len: r.file_len(),
            error,
            last_valid_offset,
        }),
        _ => None,
    })
}

/// A whole, CRC-valid v2 batch found by [`resync`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Resynced {
    pub position: u64,
    pub base_offset: i64,
}

/// Search `log` forward from `from` for the next position where a plausible
/// v2 batch starts: magic 2, a size that fits the file and the header, and a
/// CRC-32C that matches. Returns `None` when no such position exists.
pub fn resync(log: &Path, from: u64) -> Result<Option<Resynced>> {
    let file = std::fs::File::open(log).map_err(|e| Error::io(log, "open", e))?;
    let len = file
        .metadata()
        .map_err(|e| Error::io(log, "stat", e))?
        .len();
    const WINDOW: u64 = 1 << 20;
    let mut buf = vec![0u8; (WINDOW as usize) + HEADER_LEN];
    let mut start = from;
    let mut batch_buf = Vec::new();
    while start + (HEADER_LEN as u64) <= len {
        let n = (len - start).min(buf.len() as u64) as usize;
        let window = buf.get_mut(..n).unwrap_or(&mut []);
        file.read_exact_at(window, start)
            .map_err(|e| Error::io(log, "read", e))?;
        let candidates = n.saturating_sub(HEADER_LEN) + 1;
        for i in 0..candidates.min(WINDOW as usize) {
            let Some(head) = window.get(i..i + HEADER_LEN) else {
                break;
            };
            if head.get(batch::MAGIC) != Some(&2) {
                continue;
            }
            let Ok(h) = batch::BatchHeader::parse(head, start + i as u64) else {
                continue;
            };
            let pos = start + i as u64;
            if h.size() < HEADER_LEN as u64
                || pos + h.size() > len
                || h.last_offset_delta < 0
                || h.records_count < 0
            {
                continue;
            }
            batch_buf.resize(h.size() as usize, 0);
            file.read_exact_at(&mut batch_buf, pos)
                .map_err(|e| Error::io(log, "read", e))?;
            if BatchView::new(&batch_buf, pos).is_ok_and(|b| b.crc_valid()) {
                return Ok(Some(Resynced {
                    position: pos,
                    base_offset: h.base_offset,
                }));
            }
        }
        start += WINDOW;
    }
    Ok(None)
}

/// `.index` and `.timeindex` bytes rebuilt from the valid part of a log
/// (up to `valid_bytes`), with Kafka's recovery rule: an offset entry (the
/// batch's last offset, its position) when more than `interval` bytes lie
/// between the last entry's position and this batch's; a time entry at the
/// same moments when the max timestamp grew; and a final time entry.
pub fn rebuild_indexes(
    log: &Path,
    base_offset: i64,
    valid_bytes: u64,
    interval: u64,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut r = SegmentReader::open(log)?;
    let (mut index, mut timeindex) = (Vec::new(), Vec::new());
    let mut last_entry_position = 0u64;
    let (mut max_ts, mut offset_of_max) = (i64::MIN, -1i64);
    let mut last_time_entry = i64::MIN;
    let rel = |offset: i64| (offset - base_offset) as i32;
    while let Some(e) = r.next_entry()? {
        if e.position() + e.size() > valid_bytes {
            break;
        }
        let ts = match e {
            Entry::V2(b) => b.header.max_timestamp,
            Entry::Legacy(l) => l.timestamp,
        };
        if ts > max_ts {
            max_ts = ts;
            offset_of_max = e.last_offset();
        }
        if e.position() - last_entry_position > interval {
            index.extend_from_slice(&encode_offset_entry(
                rel(e.last_offset()),
                e.position() as i32,
            ));
            if max_ts > last_time_entry {
                timeindex.extend_from_slice(&encode_time_entry(max_ts, rel(offset_of_max)));
                last_time_entry = max_ts;
            }
            last_entry_position = e.position();
        }
    }
    if max_ts > last_time_entry && offset_of_max >= base_offset {
        timeindex.extend_from_slice(&encode_time_entry(max_ts, rel(offset_of_max)));
    }
    Ok((index, timeindex))
}

/// What a broker restarting on a partition would do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RecoveryPreview {
    /// The segment recovery starts from (the one holding the recovery point).
    pub from_segment: i64,
    /// The segment that gets truncated, with the damage found in it.
    pub truncate: Option<(SegmentFiles, Damage)>,
    /// Segments deleted after it (all later ones).
    pub deleted: Vec<SegmentFiles>,
    /// Offsets that disappear: [first lost, log end before) — None when nothing is lost.
    pub lost_offsets: Option<(i64, i64)>,
}

/// The broker's recovery of `p` after an unclean shutdown, from the segment
/// holding `recovery_point`: truncate the first segment with damage at the
/// first invalid batch and delete every later segment.
pub fn preview(p: &Partition, recovery_point: i64) -> Result<RecoveryPreview> {
    let start = p
        .segments
        .iter()
        .rposition(|s| s.base_offset <= recovery_point)
        .unwrap_or(0);
    let from_segment = p.segments.get(start).map_or(0, |s| s.base_offset);
    let log_end = crate::lag::log_end_offset(p)?;
    for (i, seg) in p.segments.iter().enumerate().skip(start) {
        if let Some(d) = first_damage(&seg.log)? {
            let deleted: Vec<SegmentFiles> = p.segments.iter().skip(i + 1).cloned().collect();
            let first_lost = d.last_valid_offset.map_or(seg.base_offset, |o| o + 1);
            let end = scan_end_including_damage(p, log_end)?;
            let lost = (end > first_lost).then_some((first_lost, end));
            return Ok(RecoveryPreview {
                from_segment,
                truncate: Some((seg.clone(), d)),
                deleted,
                lost_offsets: lost,
            });
        }
    }
    Ok(RecoveryPreview {
        from_segment,
        truncate: None,
        deleted: Vec::new(),
        lost_offsets: None,
    })
}

/// The highest next-offset any readable batch claims, damaged region or not
/// (what the log held before recovery cuts it).
fn scan_end_including_damage(p: &Partition, valid_end: i64) -> Result<i64> {
    let mut end = valid_end;
    for seg in &p.segments {
        let mut at = 0;
        let len = std::fs::metadata(&seg.log)
            .map_err(|e| Error::io(&seg.log, "stat", e))?
            .len();
        while at < len {
            let mut r = SegmentReader::open_at(&seg.log, at)?;
            while let Some(e) = r.next_entry()? {
                if e.crc_valid() {
                    end = end.max(e.last_offset() + 1);
                }
            }
            let Some(next) = r.tail().and_then(|t| match t {
                Tail::Clean => None,
                Tail::Truncated { at, .. } | Tail::Corrupt { at, .. } => Some(at),
            }) else {
                break;
            };
            match resync(&seg.log, next + 1)? {
                Some(found) => at = found.position,
                None => break,
            }
        }
    }
    Ok(end)
}

/// A problem with a segment's `.index` or `.timeindex`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexProblem {
    pub file: std::path::PathBuf,
    /// Byte position in the index file.
    pub position: u64,
    /// `index_length`, `index_order`, `index_target`, `index_past_log`,
    /// `index_trailing_zeros`, `index_missing`.
    pub kind: &'static str,
    pub detail: String,
}

/// Check a segment's indexes against its log: lengths are whole entries;
/// offset entries increase and point at the start of a batch whose offsets
/// include the entry's offset; time entries never go back in time or offset
/// and name offsets inside the segment. A trailing run of zero entries (a
/// preallocated index left by an unclean shutdown) is reported as such, not
/// as corruption of the data.
pub fn check_indexes(seg: &SegmentFiles) -> Result<Vec<IndexProblem>> {
    let mut checker = IndexChecker::open(seg)?;
    let mut r = SegmentReader::open(&seg.log)?;
    while let Some(e) = r.next_entry()? {
        checker.observe(e.position(), e.base_offset(), e.last_offset());
    }
    Ok(checker.finish(r.file_len()))
}

/// The index checks of [`check_indexes`], fed batch by batch by a walk over
/// the log that is under way anyway (so `verify-crc` reads each segment
/// once). Holds the index entries only: memory is bounded by the index
/// files, not the log.
#[derive(Debug)]
pub struct IndexChecker {
    base_offset: i64,
    index_path: std::path::PathBuf,
    time_path: std::path::PathBuf,
    problems: Vec<IndexProblem>,
    /// Offset-index entries to meet at batch starts: (position, offset, entry position), by position.
    targets: Vec<(u64, i64, u64)>,
    next: usize,
    /// Time-index entries: (offset, entry position).
    time_offsets: Vec<(i64, u64)>,
    last_offset: i64,
}

/// The used entries of an index file, after the length and zero-slot checks.
fn index_body(
    path: &Path,
    entry_len: usize,
    problems: &mut Vec<IndexProblem>,
) -> Result<Option<Vec<u8>>> {
    let mut bytes = match std::fs::read(path) {
        Ok(b) => b,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            problems.push(IndexProblem {
                file: path.to_path_buf(),
                position: 0,
                kind: "index_missing",
                detail: "missing: rebuild it from the log".into(),
            });
            return Ok(None);
        }
        Err(e) => return Err(Error::io(path, "read", e)),
    };
    let mut push = |position: u64, kind: &'static str, detail: String| {
        problems.push(IndexProblem {
            file: path.to_path_buf(),
            position,
            kind,
            detail,
        })
    };
    let whole = bytes.len() / entry_len * entry_len;
    if whole != bytes.len() {
        push(
            whole as u64,
            "index_length",
            format!(
                "{} bytes is not a whole number of {entry_len}-byte entries",
                bytes.len()
            ),
        );
    }
    // A run of all-zero entries at the end (after the first entry) is preallocated space.
    let used = crate::format::index::used_entries(&bytes, entry_len);
    if used < whole / entry_len {
        push(
            (used * entry_len) as u64,
            "index_trailing_zeros",
            format!(
                "{} zero entries at the end: preallocated space left by an unclean shutdown",
                whole / entry_len - used
            ),
        );
    }
    bytes.truncate(used * entry_len);
    Ok(Some(bytes))
}

impl IndexChecker {
    /// Read and check the segment's `.index` and `.timeindex` on their own.
    pub fn open(seg: &SegmentFiles) -> Result<Self> {
        use crate::format::index::{
            offset_entries, time_entries, OFFSET_ENTRY_LEN, TIME_ENTRY_LEN,
        };
        let index_path = seg.log.with_extension("index");
        let time_path = seg.log.with_extension("timeindex");
        let mut problems = Vec::new();
        let mut targets = Vec::new();
        if let Some(body) = index_body(&index_path, OFFSET_ENTRY_LEN, &mut problems)? {
            let entries =
                offset_entries(&body, seg.base_offset).map_err(|error| Error::Decode {
                    path: index_path.clone(),
                    error,
                })?;
            let mut prev = i64::MIN;
            for e in entries {
                if e.offset <= prev {
                    problems.push(IndexProblem {
                        file: index_path.clone(),
                        position: e.at,
                        kind: "index_order",
                        detail: format!("offset {} does not increase (previous {prev})", e.offset),
                    });
                }
                prev = e.offset;
                if e.position < 0 {
                    problems.push(IndexProblem {
                        file: index_path.clone(),
                        position: e.at,
                        kind: "index_past_log",
                        detail: format!("negative position {}", e.position),
                    });
                } else {
                    targets.push((e.position as u64, e.offset, e.at));
                }
            }
        }
        targets.sort_by_key(|&(position, _, at)| (position, at));
        let mut time_offsets = Vec::new();
        if let Some(body) = index_body(&time_path, TIME_ENTRY_LEN, &mut problems)? {
            let entries = time_entries(&body, seg.base_offset).map_err(|error| Error::Decode {
                path: time_path.clone(),
                error,
            })?;
            let (mut prev_ts, mut prev_off) = (i64::MIN, i64::MIN);
            for e in entries {
                if e.timestamp < prev_ts || e.offset < prev_off {
                    problems.push(IndexProblem {
                        file: time_path.clone(),
                        position: e.at,
                        kind: "index_order",
                        detail: format!(
                            "entry ({}, offset {}) goes back after ({prev_ts}, offset {prev_off})",
                            e.timestamp, e.offset
                        ),
                    });
                }
                prev_ts = e.timestamp;
                prev_off = e.offset;
                time_offsets.push((e.offset, e.at));
            }
        }
        Ok(IndexChecker {
            base_offset: seg.base_offset,
            index_path,
            time_path,
            problems,
            targets,
            next: 0,
            time_offsets,
            last_offset: seg.base_offset - 1,
        })
    }

    fn target_problem(&mut self, at: u64, detail: String) {
        self.problems.push(IndexProblem {
            file: self.index_path.clone(),
            position: at,
            kind: "index_target",
            detail,
        });
    }

    /// The batch at `position` holds offsets `base..=last`.
    pub fn observe(&mut self, position: u64, base: i64, last: i64) {
        self.last_offset = self.last_offset.max(last);
        while let Some(&(p, offset, at)) = self.targets.get(self.next) {
            if p > position {
                break;
            }
            self.next += 1;
            if p < position {
                self.target_problem(
                    at,
                    format!(
                        "offset {offset} points at position {p}, which is not the start of a batch"
                    ),
                );
            } else if offset < base || offset > last {
                self.target_problem(at, format!("offset {offset} points at position {p}, a batch of offsets {base}..={last}"));
            }
        }
    }

    /// The problems found, once every batch of a log of `log_len` bytes was observed.
    pub fn finish(mut self, log_len: u64) -> Vec<IndexProblem> {
        while let Some(&(p, offset, at)) = self.targets.get(self.next) {
            self.next += 1;
            if p >= log_len {
                self.problems.push(IndexProblem {
                    file: self.index_path.clone(),
                    position: at,
                    kind: "index_past_log",
                    detail: format!("position {p} lies past the end of the log ({log_len} bytes)"),
                });
            } else {
                self.target_problem(
                    at,
                    format!(
                        "offset {offset} points at position {p}, which is not the start of a batch"
                    ),
                );
            }
        }
        for &(offset, at) in &self.time_offsets {
            if offset < self.base_offset || offset > self.last_offset {
                self.problems.push(IndexProblem {
                    file: self.time_path.clone(),
                    position: at,
                    kind: "index_past_log",
                    detail: format!(
                        "offset {offset} lies outside the segment's offsets {}..={}",
                        self.base_offset, self.last_offset
                    ),
                });
            }
        }
        self.problems
    }
}
