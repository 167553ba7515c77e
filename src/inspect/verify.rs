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
use crate::format::batch::Depth;
use crate::format::{DecodeLimits, Entry};
use crate::log::findings::{Finding, Kind, Severity, Summary};
use crate::log::walk::{Damage, Meter, OnDamage, Policy, Step};
use crate::log::{classify, parse_segment_name, DataDir, Partition, PathKind, Reads};

/// Added to a problem at byte 0: nothing in the file could be framed.
pub const NOT_A_SEGMENT: &str =
    " (the file does not start with a record batch: is it a Kafka log segment?)";

/// Whether `path` is named as a broker names a segment (`<offset>.log`:
/// `LogLoader` loads every such file as one). Damage at byte 0 of such a
/// file is a segment whose first batch is damaged (a crash just after a
/// roll tears it), never "not a segment".
pub fn named_like_a_segment(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .and_then(parse_segment_name)
        .is_some_and(|(_, suffix)| suffix == "log")
}

/// Totals of what was checked.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
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
    pub findings: Vec<Finding>,
    /// Partition folders listed but not read: those a broker does not
    /// recover (`-delete` ones, a metadata topic's `-future` or `-stray`).
    pub skipped: Vec<(PathBuf, &'static str)>,
    /// With `deep`: what find-hanging's rule said of each open transaction
    /// it looked at ([`crate::txn::hanging::judge`]); the hanging ones are
    /// findings already, those not judged get one note from
    /// [`note_not_judged`](Self::note_not_judged).
    pub hanging: Vec<crate::txn::hanging::Judgement>,
}

impl Report {
    /// Whether nothing at error severity was found.
    pub fn ok(&self) -> bool {
        self.failing(Severity::Error) == 0
    }

    /// How many findings fail a run at `fail_on`.
    pub fn failing(&self, fail_on: Severity) -> u64 {
        self.findings.iter().filter(|f| f.fails(fail_on)).count() as u64
    }

    /// The findings counted per severity and kind.
    pub fn summary(&self) -> Summary {
        Summary::of(&self.findings)
    }

    fn push(&mut self, file: &Path, position: u64, base_offset: Option<i64>, error: DecodeError) {
        self.findings
            .push(Finding::decode(file, position, base_offset, &error));
    }

    /// Add another report's counts and findings.
    pub fn merge(&mut self, other: Report) {
        self.checked.files += other.checked.files;
        self.checked.batches += other.checked.batches;
        self.checked.records += other.checked.records;
        self.checked.bytes += other.checked.bytes;
        self.findings.extend(other.findings);
        self.skipped.extend(other.skipped);
        self.hanging.extend(other.hanging);
    }

    /// Once every path of a run is merged: the one `hanging_not_judged`
    /// note, when open transactions were not judged.
    pub fn note_not_judged(&mut self) {
        self.findings
            .extend(crate::txn::hanging::not_judged_note(&self.hanging));
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
    /// Decode every record of every batch (decompressed when needed), not
    /// only each batch's CRC and header (`--deep` sets it).
    pub records: bool,
    /// For `deep`: the producer-state options.
    pub txn: crate::txn::TxnOptions,
    /// For `deep`: what find-hanging's rule needs (now, the maximum
    /// transaction timeout, the coordinator's state).
    pub hanging: crate::txn::hanging::Inputs,
    /// Partitions verified at once in a data directory (0 or 1: one at a time).
    pub jobs: usize,
    /// Where to count the bytes of log read, for a progress display.
    pub meter: Option<&'static Meter>,
    /// How segment files are read.
    pub reads: Reads,
}

impl Options {
    /// How deep each batch is checked.
    pub fn depth(&self) -> Depth {
        self.depth_within(self.limits)
    }

    /// [`depth`](Self::depth), decoding records under `limits` instead.
    fn depth_within(&self, limits: DecodeLimits) -> Depth {
        match self.records {
            true => Depth::Records(limits),
            false => Depth::Batch,
        }
    }
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
            if crate::metadata::is_snapshot_file(path) {
                verify_snapshot(path, opts, &mut report)?;
            } else {
                verify_segment(path, base, &mut last, opts, &mut report)?;
            }
            if opts.deep {
                // A lone file is a partition of one segment for the producer-state pass.
                let p = Partition::single_file(path, base.unwrap_or(0));
                deep_checks(&p, opts, &mut report)?;
            }
        }
        PathKind::Partition => verify_partition(&Partition::open(path)?, opts, &mut report)?,
        PathKind::DataDir => {
            let dir = DataDir::open(path)?;
            report.findings.extend(dir.foreign_folder_findings());
            // What a broker's start recovers (its batches CRC-checked): the
            // folders it loads but the `-delete` ones, which it loads
            // without recovery and then deletes (DataDir::loaded).
            let (recovered, skipped): (Vec<&Partition>, Vec<&Partition>) = dir
                .partitions
                .iter()
                .partition(|p| p.loaded_on_start() && p.state.recovered_on_load());
            for p in skipped {
                report.skipped.push((p.dir.clone(), p.state.name()));
            }
            for r in verify_partitions(&recovered, opts)? {
                report.merge(r);
            }
            let bootstrap = path.join(crate::metadata::BOOTSTRAP_FILE);
            if bootstrap.is_file() {
                verify_snapshot(&bootstrap, opts, &mut report)?;
            }
        }
    }
    Ok(report)
}

/// Verify partitions as up to `opts.jobs` jobs; the reports come back in
/// the partitions' order, so the output does not depend on the scheduling.
///
/// The first job runs on this thread, the others on threads of their own
/// (`std::thread::scope`); each takes the next partition no job has taken
/// and puts its report in that partition's slot, so the output does not
/// depend on which job verified what.
///
/// Each job runs on a core of its own (the first on this thread's). With
/// at least as many partitions as cores the partitions are the
/// parallelism and no segment is read ahead: read-ahead threads cost more
/// CPU for the same checks than reading on the job's own thread, and
/// `--jobs 1` means one core. With fewer, the cores the jobs leave are
/// shared out among them for read-ahead ([`Reads::Cores`]).
pub fn verify_partitions(parts: &[&Partition], opts: &Options) -> Result<Vec<Report>> {
    let jobs = opts.jobs.clamp(1, parts.len().max(1));
    let shared;
    let opts = match opts.reads {
        Reads::Plain => opts,
        reads => {
            let cores = reads.cores();
            let per_job = if parts.len() >= cores {
                1
            } else {
                1 + cores.saturating_sub(jobs) / jobs
            };
            shared = Options {
                reads: Reads::Cores(per_job),
                ..opts.clone()
            };
            &shared
        }
    };
    if jobs == 1 {
        return parts.iter().map(|p| verify_one(p, opts, None)).collect();
    }
    let run = Jobs {
        parts,
        opts,
        next: std::sync::atomic::AtomicUsize::new(0),
        large: std::sync::Mutex::new(()),
        results: std::sync::Mutex::new((0..parts.len()).map(|_| None).collect()),
    };
    std::thread::scope(|s| {
        let run = &run;
        for _ in 1..jobs {
            s.spawn(move || verify_jobs(run));
        }
        verify_jobs(run);
    });
    let all = run.results.into_inner().unwrap_or_default();
    all.into_iter()
        .map(|r| r.unwrap_or_else(|| Ok(Report::default())))
        .collect()
}

/// What the jobs of one parallel verification share.
struct Jobs<'a> {
    parts: &'a [&'a Partition],
    opts: &'a Options,
    /// The first partition no job has taken yet.
    next: std::sync::atomic::AtomicUsize,
    /// The permit to decompress more than [`JOB_SCRATCH`] bytes.
    large: std::sync::Mutex<()>,
    /// One slot per partition for its report.
    results: std::sync::Mutex<Vec<Option<Result<Report>>>>,
}

/// One job of [`verify_partitions`]: take the next partition not taken
/// yet, verify it, put its report in its slot, until none is left.
fn verify_jobs(run: &Jobs<'_>) {
    loop {
        let i = run.next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let Some(p) = run.parts.get(i) else {
            break;
        };
        let out = verify_one(p, run.opts, Some(&run.large));
        if let Ok(mut all) = run.results.lock() {
            if let Some(slot) = all.get_mut(i) {
                *slot = Some(out);
            }
        }
    }
}

/// The permit a job holds while it decompresses more than [`JOB_SCRATCH`]
/// bytes, one for all the jobs of a run.
type Permit<'a> = &'a std::sync::Mutex<()>;

/// One partition's report, as one of several jobs when `large` is the
/// run's permit ([`verify_partition_in`]).
fn verify_one(p: &Partition, opts: &Options, large: Option<Permit<'_>>) -> Result<Report> {
    let mut r = Report::default();
    verify_partition_in(p, opts, large, &mut r).map(|()| r)
}

/// Verify every segment of a partition, carrying the offset order across
/// segments; then its indexes and, with `deep`, its producer state.
pub fn verify_partition(p: &Partition, opts: &Options, report: &mut Report) -> Result<()> {
    verify_partition_in(p, opts, None, report)
}

/// [`verify_partition`] as one of several jobs: `large` is the permit a
/// job holds while it decompresses more than [`JOB_SCRATCH`] bytes.
fn verify_partition_in(
    p: &Partition,
    opts: &Options,
    large: Option<Permit<'_>>,
    report: &mut Report,
) -> Result<()> {
    for (path, why) in &p.unreadable {
        report
            .findings
            .push(Finding::new(Kind::NotRegularFile, path, 0, None, *why));
    }
    let mut last = None;
    let indexes = !opts.no_indexes;
    let mut scratch = Scratch {
        buf: Vec::new(),
        large,
    };
    walk_and_check(p, true, indexes, &mut last, opts, &mut scratch, report)?;
    if opts.deep && !opts.index_only {
        deep_checks(p, opts, report)?;
    }
    if p.topic == crate::metadata::METADATA_TOPIC {
        for (_, _, snapshot) in crate::metadata::snapshots(&p.dir)? {
            verify_snapshot(&snapshot, opts, report)?;
        }
    }
    Ok(())
}

/// A KRaft snapshot file beside a metadata log (or `bootstrap.checkpoint`):
/// its batches like a lone segment's, then its frame
/// ([`crate::metadata::check_snapshot`]).
fn verify_snapshot(path: &Path, opts: &Options, report: &mut Report) -> Result<()> {
    if opts.index_only {
        return Ok(());
    }
    let mut last = None;
    verify_segment(path, None, &mut last, opts, report)?;
    report
        .findings
        .extend(crate::metadata::check_snapshot(path)?);
    Ok(())
}

/// The producer-state checks of `--deep`, as findings.
fn deep_checks(p: &Partition, opts: &Options, report: &mut Report) -> Result<()> {
    let st = crate::txn::analyze(p, &opts.txn)?;
    let index_findings = crate::txn::check_txn_indexes(p, &st)?;
    let judgements = crate::txn::hanging::judge(p, &st, &opts.hanging);
    report.findings.extend(
        st.findings
            .into_iter()
            // Damage is reported by the byte checks already.
            .filter(|f| f.producer_id.is_some() || f.kind == Kind::TxnIndexMismatch),
    );
    // After the producer-state findings, as `klog transactions` lists them.
    report
        .findings
        .extend(crate::txn::hanging::findings(p, &judgements, &opts.hanging));
    report.findings.extend(index_findings);
    report.hanging.extend(judgements);
    Ok(())
}

/// Verify one segment file. `segment_base` is the base offset from its name
/// (None for a file not named like a segment: then neither the base offset
/// nor the order of offsets is checked); `last_offset` carries the
/// previous entry's last offset in and this segment's out. Its indexes are
/// not checked (see [`verify_partition`]).
pub fn verify_segment(
    path: &Path,
    segment_base: Option<i64>,
    last_offset: &mut Option<i64>,
    opts: &Options,
    report: &mut Report,
) -> Result<()> {
    let p = Partition::single_file(path, segment_base.unwrap_or(0));
    let mut scratch = Scratch {
        buf: Vec::new(),
        large: None,
    };
    walk_and_check(
        &p,
        segment_base.is_some(),
        false,
        last_offset,
        opts,
        &mut scratch,
        report,
    )
}

/// Decompressed bytes a job of a parallel verification holds without the
/// shared permit. A batch that decompresses to more is checked again under
/// the permit, so however many jobs run, one of them at a time holds a large
/// decompressed batch (a few compressed kilobytes can expand to the 256 MiB
/// limit): the memory is this per job plus one batch, not one batch per job.
const JOB_SCRATCH: u64 = 4 << 20;

/// The decompression buffer of one walk, and the permit to grow it past
/// [`JOB_SCRATCH`] when other jobs run beside it.
struct Scratch<'l> {
    buf: Vec<u8>,
    large: Option<Permit<'l>>,
}

/// One walk over `p`: every entry checked (unless `index_only`), offsets
/// in order across segments when `named` (the files are real segments),
/// each segment's indexes fed by the same pass when `indexes`. Past damage
/// that breaks the framing, the walk resumes at the next position where a
/// CRC-valid batch starts and goes on.
fn walk_and_check(
    p: &Partition,
    named: bool,
    indexes: bool,
    last_offset: &mut Option<i64>,
    opts: &Options,
    scratch: &mut Scratch<'_>,
    report: &mut Report,
) -> Result<()> {
    let policy = Policy {
        on_damage: OnDamage::Resync,
        checks: crate::log::Checks::HeadersOnly,
        // On a large file the read-ahead threads check the plain batches
        // they read; the result comes with the entry.
        check_ahead: (!opts.index_only).then_some(opts.depth()),
        reads: opts.reads,
        meter: opts.meter,
    };
    let last_segment = p.segments.last().map(|s| s.base_offset);
    let mut walk = p.walk(policy);
    let mut checker = None;
    // Whether anything was framed in the current segment.
    let mut read_any = false;
    while let Some(step) = walk.next_step()? {
        match step {
            Step::SegmentStart { segment, .. } => {
                report.checked.files += 1;
                read_any = false;
                if indexes {
                    let is_last = last_segment == Some(segment.base_offset);
                    checker = Some(crate::inspect::recovery::IndexChecker::open(
                        segment, is_last,
                    )?);
                }
            }
            Step::SegmentEnd { file_len, .. } => {
                if let Some(c) = checker.take() {
                    report.findings.extend(c.finish(file_len));
                }
            }
            Step::Damage(d) => damage_finding(&d, &mut read_any, report),
            Step::Entry(w) => {
                read_any = true;
                let entry = w.entry;
                let path = &w.segment.log;
                report.checked.batches += 1;
                report.checked.bytes += entry.size();
                let pos = entry.position();
                let base = entry.base_offset();
                let last = w.next_offset - 1;
                if let Some(c) = checker.as_mut() {
                    c.observe(pos, base, last, entry.max_timestamp());
                }
                if named {
                    for kind in offset_order(w.segment.base_offset, *last_offset, base, last) {
                        report.push(path, pos, Some(base), DecodeError::new(pos, kind));
                    }
                }
                *last_offset = Some(last.max(last_offset.unwrap_or(i64::MIN)));
                if opts.index_only {
                    continue;
                }
                check_entry_in(entry, w.check, path, opts, scratch, report);
            }
        }
    }
    Ok(())
}

/// The finding for damage a verification walk met, with what it knows
/// beyond the damage itself (where valid batches resume, a search that
/// gave up, a file that is no segment at all), and the bytes it covers
/// counted as checked. `read_any`: whether anything was framed in the
/// segment so far.
fn damage_finding(d: &Damage, read_any: &mut bool, report: &mut Report) {
    let mut f = d.finding();
    if let Some(size) = d.entry_size {
        // A whole entry the walk could not hand out (its offsets overflow).
        *read_any = true;
        report.checked.batches += 1;
        report.checked.bytes += size;
    }
    if d.framing {
        match d.resumes {
            Some(r) => {
                if !matches!(d.error.kind, DecodeErrorKind::LengthPastEof { .. }) {
                    f.detail.push_str(&format!(
                        "; {} bytes cannot be framed; valid batches resume at position {} (offset {})",
                        r.position - d.position,
                        r.position,
                        r.base_offset
                    ));
                }
                report.checked.bytes += r.position - d.position;
            }
            None => {
                if let Some(at) = d.search_gave_up {
                    f.detail.push_str(&format!(
                        "; the search for valid batches after it gave up at position {at}: \
                         too many plausible batch headers (the rest of the file is not checked)"
                    ));
                }
                let zeros = matches!(d.error.kind, DecodeErrorKind::TrailingZeros { .. });
                if d.position == 0 && !*read_any && !zeros && !named_like_a_segment(&d.file) {
                    f.detail.push_str(NOT_A_SEGMENT);
                }
                report.checked.bytes += d.file_len - d.position;
            }
        }
    }
    report.findings.push(f);
}

/// What is wrong with the offsets `base..=last` of an entry in the segment
/// named `segment_base`, after an entry ending at `previous`: below the
/// name's base offset, past the 32-bit relative range, or not above the
/// previous entry. (A file not named like a segment may hold batches
/// captured from separate fetches, so the caller skips this for one.)
fn offset_order(
    segment_base: i64,
    previous: Option<i64>,
    base: i64,
    last: i64,
) -> Vec<DecodeErrorKind> {
    let mut out = Vec::new();
    if base < segment_base {
        out.push(DecodeErrorKind::BelowSegmentBase {
            segment_base,
            base_offset: base,
        });
    } else if last
        .checked_sub(segment_base)
        .is_none_or(|rel| rel > i64::from(i32::MAX))
    {
        out.push(DecodeErrorKind::RelativeOffsetOverflow {
            segment_base,
            offset: last,
        });
    }
    if let Some(previous_last) = previous.filter(|&p| base <= p) {
        out.push(DecodeErrorKind::OffsetNotIncreasing {
            previous_last,
            base_offset: base,
        });
    }
    out
}

/// [`check_entry`] within a job's share of memory: when other jobs run,
/// first under a [`JOB_SCRATCH`] limit, and only if the entry needs more,
/// again under the shared permit, after which the buffer shrinks back.
fn check_entry_in(
    entry: Entry<'_>,
    checked_ahead: Option<crate::log::read::BatchCheck>,
    path: &Path,
    opts: &Options,
    scratch: &mut Scratch<'_>,
    report: &mut Report,
) {
    let limits = opts.limits;
    let check = |limits, buf: &mut Vec<u8>, report: &mut Report| {
        check_entry(entry, checked_ahead, path, opts, limits, buf, report)
    };
    // Only decoding records decompresses (a legacy wrapper's always does).
    let decompresses = opts.records || matches!(entry, Entry::Legacy(_));
    let Some(large) = scratch
        .large
        .filter(|_| decompresses && limits.max_decompressed > JOB_SCRATCH)
    else {
        return check(limits, &mut scratch.buf, report);
    };
    let small = DecodeLimits {
        max_decompressed: JOB_SCRATCH,
    };
    let mut trial = Report::default();
    check(small, &mut scratch.buf, &mut trial);
    if !trial
        .findings
        .iter()
        .any(|f| f.kind == Kind::DecompressedTooLarge)
    {
        report.merge(trial);
        return;
    }
    // A poisoned lock only means another job panicked: the permit still serves.
    let _permit = large.lock().unwrap_or_else(|e| e.into_inner());
    check(limits, &mut scratch.buf, report);
    scratch.buf.clear();
    scratch.buf.shrink_to(JOB_SCRATCH as usize);
}

/// The CRC first, then (if it holds) the header and, with `opts.records`,
/// the records: a batch that fails its CRC is not read further. A legacy
/// wrapper's inner messages are always read: nothing but its decompressed
/// contents says how many there are.
fn check_entry(
    entry: Entry<'_>,
    checked_ahead: Option<crate::log::read::BatchCheck>,
    path: &Path,
    opts: &Options,
    limits: DecodeLimits,
    scratch: &mut Vec<u8>,
    report: &mut Report,
) {
    let pos = entry.position();
    let base = entry.base_offset();
    match entry {
        Entry::V2(batch) => {
            let depth = opts.depth_within(limits);
            match checked_ahead.unwrap_or_else(|| batch.check(depth, scratch)) {
                Ok(checked) => {
                    report.checked.records += checked.records;
                    if let Some(e) = checked.error {
                        report.push(path, pos, Some(base), e);
                    }
                }
                Err(e) => report.push(path, pos, Some(base), e),
            }
        }
        Entry::Legacy(m) => match m.check_crc() {
            // A compressed wrapper's inner messages are checked too.
            Ok(()) => match m.messages(scratch, limits) {
                Ok(msgs) => {
                    report.checked.records += msgs.len() as u64;
                    for msg in msgs {
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
