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
    /// Position of the entry (batch) the problem belongs to, or of the torn
    /// tail; for an index problem, the entry's position in the index file.
    pub position: u64,
    /// The exact byte where the defect was found.
    pub offset: u64,
    /// Stable snake_case kind (see [`DecodeErrorKind::name`], and `index_*`,
    /// the producer-state kinds of [`crate::txn::FindingKind`]).
    pub kind: &'static str,
    /// Human-readable detail, with the exact byte position of the defect.
    pub detail: String,
    /// The batch's base offset when its header could be read.
    pub base_offset: Option<i64>,
    /// The underlying decode error, for decoding problems.
    pub error: Option<DecodeError>,
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
    /// Partition folders listed but not read (`-delete`, `-future`, `-stray`).
    pub skipped: Vec<(PathBuf, &'static str)>,
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
            offset: error.offset,
            kind: error.kind_name(),
            detail: error.to_string(),
            base_offset,
            error: Some(error),
        });
    }

    /// Add another report's counts and findings.
    pub fn merge(&mut self, other: Report) {
        self.checked.files += other.checked.files;
        self.checked.batches += other.checked.batches;
        self.checked.records += other.checked.records;
        self.checked.bytes += other.checked.bytes;
        self.problems.extend(other.problems);
        self.skipped.extend(other.skipped);
    }
}

/// What to check.
#[derive(Debug, Clone, Default)]
pub struct Options {
    pub limits: DecodeLimits,
    /// Skip the `.index` / `.timeindex` checks.
    pub no_indexes: bool,
    /// Check only the indexes (against the log's batch boundaries).
    pub index_only: bool,
    /// Also check producer state: sequences, epochs, transactions, `.txnindex`.
    pub deep: bool,
    /// For `deep`: the producer-state options (now, transaction timeout).
    pub txn: crate::txn::TxnOptions,
    /// Partitions verified at once in a data directory (0 or 1: one at a time).
    pub jobs: usize,
    /// Bytes of log read so far, for a progress display.
    pub progress: Option<std::sync::Arc<std::sync::atomic::AtomicU64>>,
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
            if opts.deep {
                // A lone file is a partition of one segment for the producer-state pass.
                let p = Partition::single_file(path, base.unwrap_or(0));
                deep_checks(&p, opts, &mut report)?;
            }
        }
        PathKind::Partition => verify_partition(&Partition::open(path)?, opts, &mut report)?,
        PathKind::DataDir => {
            let dir = DataDir::open(path)?;
            for p in dir
                .partitions
                .iter()
                .filter(|p| p.state != crate::log::PartitionState::Live)
            {
                report.skipped.push((p.dir.clone(), p.state.name()));
            }
            let live: Vec<&Partition> = dir.live().collect();
            for r in verify_partitions(&live, opts)? {
                report.merge(r);
            }
        }
    }
    Ok(report)
}

/// Verify partitions on up to `opts.jobs` threads; the reports come back in
/// the partitions' order, so the output does not depend on the scheduling.
pub fn verify_partitions(parts: &[&Partition], opts: &Options) -> Result<Vec<Report>> {
    let jobs = opts.jobs.clamp(1, parts.len().max(1));
    if jobs == 1 {
        return parts
            .iter()
            .map(|p| {
                let mut r = Report::default();
                verify_partition(p, opts, &mut r).map(|()| r)
            })
            .collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results: std::sync::Mutex<Vec<Option<Result<Report>>>> =
        std::sync::Mutex::new((0..parts.len()).map(|_| None).collect());
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(p) = parts.get(i) else { break };
                let mut r = Report::default();
                let out = verify_partition(p, opts, &mut r).map(|()| r);
                if let Ok(mut all) = results.lock() {
                    if let Some(slot) = all.get_mut(i) {
                        *slot = Some(out);
                    }
                }
            });
        }
    });
    let all = results.into_inner().unwrap_or_default();
    all.into_iter()
        .map(|r| r.unwrap_or_else(|| Ok(Report::default())))
        .collect()
}

/// Verify every segment of a partition, carrying the offset order across
/// segments; then its indexes and, with `deep`, its producer state.
pub fn verify_partition(p: &Partition, opts: &Options, report: &mut Report) -> Result<()> {
    let mut last = None;
    for seg in &p.segments {
        let index_problems = if opts.index_only {
            report.checked.files += 1;
            crate::recovery::check_indexes(seg)?
        } else if opts.no_indexes {
            verify_segment_with(
                &seg.log,
                Some(seg.base_offset),
                &mut last,
                opts,
                report,
                None,
            )?;
            Vec::new()
        } else {
            let mut checker = crate::recovery::IndexChecker::open(seg)?;
            verify_segment_with(
                &seg.log,
                Some(seg.base_offset),
                &mut last,
                opts,
                report,
                Some(&mut checker),
            )?;
            let len = std::fs::metadata(&seg.log)
                .map_err(|e| crate::Error::io(&seg.log, "stat", e))?
                .len();
            checker.finish(len)
        };
        {
            for ip in index_problems {
                report.problems.push(Problem {
                    file: ip.file,
                    position: ip.position,
                    offset: ip.position,
                    kind: ip.kind,
                    detail: ip.detail,
                    base_offset: Some(seg.base_offset),
                    error: None,
                });
            }
        }
    }
    if opts.deep && !opts.index_only {
        deep_checks(p, opts, report)?;
    }
    Ok(())
}

/// The producer-state checks of `--deep`, as problems.
fn deep_checks(p: &Partition, opts: &Options, report: &mut Report) -> Result<()> {
    {
        let mut st = crate::txn::analyze(p, &opts.txn)?;
        let index_findings = crate::txn::check_txn_indexes(p, &st)?;
        st.findings.extend(index_findings);
        for f in st.findings.into_iter().filter(|f| f.kind.is_problem()) {
            report.problems.push(Problem {
                file: f.file,
                position: f.position,
                offset: f.position,
                kind: f.kind.name(),
                detail: format!("producer {}: {}", f.producer_id, f.detail),
                base_offset: Some(f.base_offset),
                error: None,
            });
        }
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
    verify_segment_with(path, segment_base, last_offset, opts, report, None)
}

/// [`verify_segment`], feeding each batch's position and offsets to an
/// index checker on the way, so the indexes are checked in the same pass.
fn verify_segment_with(
    path: &Path,
    segment_base: Option<i64>,
    last_offset: &mut Option<i64>,
    opts: &Options,
    report: &mut Report,
    mut indexes: Option<&mut crate::recovery::IndexChecker>,
) -> Result<()> {
    report.checked.files += 1;
    let mut scratch = Vec::new();
    // Past damage that breaks the framing, the walk resumes at the next
    // position where a CRC-valid batch starts (resync) and goes on.
    let mut start = 0u64;
    let mut read_any = false;
    loop {
        let mut reader = SegmentReader::open_at(path, start)?;
        // On a large file the read-ahead threads run check_crc_and_records on
        // the plain batches they read; the result comes with the entry.
        reader.check_ahead(opts.limits);
        while let Some((entry, checked_ahead)) = reader.next_entry_checked()? {
            read_any = true;
            report.checked.batches += 1;
            report.checked.bytes += entry.size();
            if let Some(p) = &opts.progress {
                p.fetch_add(entry.size(), std::sync::atomic::Ordering::Relaxed);
            }
            let pos = entry.position();
            let base = entry.base_offset();
            if let Some(c) = indexes.as_deref_mut() {
                c.observe(pos, base, entry.last_offset());
            }
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
                    // A compressed wrapper's inner messages are checked too.
                    Ok(()) => match m.messages(&mut scratch, opts.limits) {
                        Ok(msgs) => {
                            report.checked.records += msgs.len() as u64;
                            for msg in &msgs {
                                if !msg.crc_valid {
                                    let at = msg.inner_position.unwrap_or(0);
                                    let mut e = DecodeError::new(
                                        pos,
                                        DecodeErrorKind::BadWrapper {
                                            reason: "an inner message fails its CRC",
                                        },
                                    );
                                    e.decompressed_at = Some(at);
                                    report.push(path, pos, Some(base), e);
                                }
                            }
                        }
                        Err(e) => report.push(path, pos, Some(base), e),
                    },
                    Err(e) => report.push(path, pos, Some(base), e),
                },
            }
        }
        let Some(Tail::Truncated { at, error, .. } | Tail::Corrupt { at, error, .. }) =
            reader.tail()
        else {
            break;
        };
        report.push(path, at, None, error);
        let resumed = crate::recovery::resync(path, at + 1)?;
        let len = reader.file_len();
        if let Some(p) = report.problems.last_mut() {
            match resumed {
                Some(r) => p.detail.push_str(&format!(
                    "; {} bytes cannot be framed; valid batches resume at position {} (offset {})",
                    r.position - at,
                    r.position,
                    r.base_offset
                )),
                None if at == 0 && !read_any => p.detail.push_str(NOT_A_SEGMENT),
                None => {}
            }
        }
        match resumed {
            Some(r) => {
                report.checked.bytes += r.position - at;
                start = r.position;
            }
            None => {
                report.checked.bytes += len - at;
                break;
            }
        }
    }
    Ok(())
}
