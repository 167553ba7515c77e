//! `klog verify-crc`: check every batch, index and (with --deep) producer
//! state; preview a broker's recovery; repair.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::log::lock::DirLock;
use kaen_log::log::{checkpoint, classify, DataDir, Partition, PathKind};
use kaen_log::repair::{self, Action, RepairOptions};
use kaen_log::txn::TxnOptions;
use kaen_log::verify::{self, Report};

use crate::cli::{FailOn, OutputFormat};
use crate::exit::Outcome;
use crate::report::Output;

/// Check every batch's CRC-32C (CRC-32 for legacy messages), its framing and
/// header, its records (decompressed when needed), the order of offsets
/// within and across segments, each segment's base offset against its file
/// name, how each file ends (torn tail, trailing zero bytes), and each
/// segment's `.index` and `.timeindex` against the log. Past damage that
/// breaks the framing, the walk resumes at the next CRC-valid batch and
/// says where. --deep adds the producer-state checks of `klog transactions`.
///
/// Each problem is printed as `file:position kind detail`, where position is
/// the byte where the damaged batch (or torn tail, or index entry) starts
/// and the detail names the exact byte. Exit 0 when clean, 1 when anything
/// was found.
///
/// --repair does what a broker's recovery would, auditable and without
/// deleting a byte: a torn or corrupt tail of a partition's last segment is
/// cut at the first invalid batch and the cut bytes are moved to
/// `<segment>.log.cut-<position>`; broken or missing indexes are rebuilt
/// (the old file kept as `.old`); damage followed by valid batches, or in a
/// segment that is not the last, is left alone unless --force-truncate.
/// --salvage instead moves only the damaged byte ranges aside and keeps
/// every valid batch after them. Repair takes the data directory's lock;
/// --dry-run prints the plan only.
#[derive(Debug, clap::Args)]
pub struct VerifyCrcArgs {
    /// Data directories, partition folders or segment files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// The most bytes one batch's records may decompress to.
    #[arg(long, default_value_t = DecodeLimits::default().max_decompressed)]
    pub max_decompressed_bytes: u64,
    /// Check only the indexes.
    #[arg(long, conflicts_with = "no_index_checks")]
    pub index_only: bool,
    /// Do not check the indexes (e.g. for segment files copied without them).
    #[arg(long)]
    pub no_index_checks: bool,
    /// Also check producer sequences, epochs, transactions and .txnindex files.
    #[arg(long)]
    pub deep: bool,
    /// With --deep: "now" (epoch ms or ISO-8601) for the age of open transactions.
    #[arg(long, value_parser = kaen_log::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// With --deep: an open transaction older than this (ms, or an ISO-8601 duration) is hanging.
    #[arg(long, default_value = "60000", value_parser = kaen_log::time::parse_duration_or_ms)]
    pub transaction_timeout_ms: i64,
    /// Repair what can be repaired safely (see above).
    #[arg(long)]
    pub repair: bool,
    /// With --repair: print the plan and change nothing.
    #[arg(long, requires = "repair")]
    pub dry_run: bool,
    /// With --repair: also cut at damage followed by valid batches or in an
    /// earlier segment, moving everything from there on aside.
    #[arg(long, requires = "repair")]
    pub force_truncate: bool,
    /// With --repair: move only each damaged byte range aside
    /// (`<segment>.log.cut-<start>-<end>`) and keep every valid batch after
    /// it, offsets unchanged, later segments too; report the offsets lost
    /// against what Kafka's recovery would drop. Refused when the batches
    /// kept would not have increasing offsets.
    #[arg(long, requires = "repair", conflicts_with = "force_truncate")]
    pub salvage: bool,
    /// Say what a Kafka broker restarting on this directory after an unclean
    /// shutdown would do: which segment it cuts where, which later segments
    /// it deletes, which offsets disappear.
    #[arg(long, conflicts_with = "repair")]
    pub recovery_preview: bool,
    /// Partitions checked at once (default: the number of cores).
    #[arg(long)]
    pub jobs: Option<usize>,
    /// No progress display.
    #[arg(long)]
    pub quiet: bool,
    /// The least severity that makes the run exit 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

pub fn run(args: &VerifyCrcArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    if args.recovery_preview {
        return recovery_preview(args, out);
    }
    let mut opts = options(args);
    let progress = start_progress(args, &mut opts)?;
    let mut total = check(args, &opts)?;
    if let Some(p) = progress {
        p.finish();
    }
    print_report(args, &total, out)?;
    let fail_on = args.fail_on.severity();
    if !args.repair {
        return Ok(Outcome::from_count(total.failing(fail_on)));
    }
    let refused = run_repair(args, out)?;
    if !args.dry_run {
        opts.progress = None;
        total = check(args, &opts)?;
        writeln!(out, "after repair:")?;
        print_report(args, &total, out)?;
    }
    Ok(Outcome::from_count(total.failing(fail_on) + refused))
}

fn options(args: &VerifyCrcArgs) -> verify::Options {
    verify::Options {
        limits: DecodeLimits {
            max_decompressed: args.max_decompressed_bytes,
        },
        index_only: args.index_only,
        no_indexes: args.no_index_checks,
        deep: args.deep,
        txn: TxnOptions {
            now_ms: args.now_ms,
            transaction_timeout_ms: args.transaction_timeout_ms,
            ..TxnOptions::default()
        },
        jobs: args
            .jobs
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
        ..verify::Options::default()
    }
}

fn check(args: &VerifyCrcArgs, opts: &verify::Options) -> anyhow::Result<Report> {
    let mut total = Report::default();
    for path in &args.paths {
        let r = verify::verify_path(path, opts)
            .with_context(|| format!("verify-crc {}", path.display()))?;
        total.merge(r);
    }
    Ok(total)
}

/// A progress bar on stderr, only for people: text output, stderr a terminal, no --quiet.
struct Progress {
    bar: indicatif::ProgressBar,
    stop: Arc<std::sync::atomic::AtomicBool>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl Progress {
    fn finish(mut self) {
        self.stop.store(true, Ordering::Relaxed);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        self.bar.finish_and_clear();
    }
}

fn start_progress(
    args: &VerifyCrcArgs,
    opts: &mut verify::Options,
) -> anyhow::Result<Option<Progress>> {
    if args.quiet || args.format != OutputFormat::Text || !std::io::stderr().is_terminal() {
        return Ok(None);
    }
    let total: u64 = args.paths.iter().map(|p| log_bytes(p)).sum();
    let done = Arc::new(AtomicU64::new(0));
    opts.progress = Some(done.clone());
    let bar = indicatif::ProgressBar::new(total);
    bar.set_style(
        indicatif::ProgressStyle::with_template(
            "{bar:30} {bytes}/{total_bytes} {bytes_per_sec} eta {eta}",
        )
        .unwrap_or_else(|_| indicatif::ProgressStyle::default_bar()),
    );
    let stop = Arc::new(std::sync::atomic::AtomicBool::new(false));
    let (b, s) = (bar.clone(), stop.clone());
    let thread = std::thread::spawn(move || {
        while !s.load(Ordering::Relaxed) {
            b.set_position(done.load(Ordering::Relaxed));
            std::thread::sleep(std::time::Duration::from_millis(100));
        }
    });
    Ok(Some(Progress {
        bar,
        stop,
        thread: Some(thread),
    }))
}

/// Bytes of `.log` files under a path (for the progress total).
fn log_bytes(path: &Path) -> u64 {
    walkdir::WalkDir::new(path)
        .max_depth(2)
        .into_iter()
        .flatten()
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

fn print_report(args: &VerifyCrcArgs, total: &Report, out: &mut Output) -> anyhow::Result<()> {
    let c = total.checked;
    match args.format {
        OutputFormat::Text => {
            for (dir, state) in &total.skipped {
                writeln!(
                    out,
                    "{}: skipped, a partition folder marked {state}",
                    dir.display()
                )?;
            }
            for f in &total.findings {
                writeln!(out, "{f}")?;
            }
            let verdict = if total.ok() { "ok" } else { "damaged" };
            writeln!(
                out,
                "{verdict}: checked {} files, {} batches, {} records, {} bytes; {}",
                c.files,
                c.batches,
                c.records,
                c.bytes,
                total.summary()
            )?;
        }
        OutputFormat::Json => {
            let mut doc = serde_json::json!({
                "ok": total.ok(),
                "checked": {"files": c.files, "batches": c.batches, "records": c.records, "bytes": c.bytes},
                "findings": total.findings,
            });
            if !total.skipped.is_empty() {
                doc["skipped"] = total
                    .skipped
                    .iter()
                    .map(|(d, s)| serde_json::json!({"dir": d.display().to_string(), "state": s}))
                    .collect();
            }
            serde_json::to_writer(&mut *out, &doc)?;
            writeln!(out)?;
        }
    }
    Ok(())
}

/// The partitions under the given paths, with the data directory each belongs to.
fn partitions(args: &VerifyCrcArgs) -> anyhow::Result<Vec<(PathBuf, Partition)>> {
    let mut out = Vec::new();
    for path in &args.paths {
        match classify(path)? {
            PathKind::DataDir => {
                for p in DataDir::open(path)?.live() {
                    out.push((path.clone(), p.clone()));
                }
            }
            PathKind::Partition => {
                // The lock to take is the real parent's: a partition folder
                // symlinked from another data directory is under that one's.
                let real = std::fs::canonicalize(path)
                    .with_context(|| format!("resolve {}", path.display()))?;
                let data_dir = real.parent().map_or_else(|| PathBuf::from("/"), Path::to_path_buf);
                out.push((data_dir, Partition::open(path)?));
            }
            PathKind::File => anyhow::bail!(
                "{}: give a partition folder or a data directory to repair or preview (a lone file has no segments around it)",
                path.display()
            ),
        }
    }
    Ok(out)
}

/// Plan, print and (unless --dry-run) carry out the repair. Returns the number of refused cases.
fn run_repair(args: &VerifyCrcArgs, out: &mut Output) -> anyhow::Result<u64> {
    let mut opts = RepairOptions {
        force_truncate: args.force_truncate,
        salvage: args.salvage,
        ..RepairOptions::default()
    };
    let mut refused = 0;
    let mut locks: Vec<(PathBuf, DirLock)> = Vec::new();
    for (data_dir, p) in partitions(args)? {
        if !args.dry_run && !locks.iter().any(|(d, _)| *d == data_dir) {
            locks.push((data_dir.clone(), DirLock::acquire(&data_dir)?));
        }
        opts.recovery_point = recovery_point(&data_dir, &p)?;
        let plan = repair::plan(&p, &opts)?;
        for a in &plan.actions {
            let verb = if args.dry_run { "would" } else { "will" };
            match a {
                Action::Truncate { log, at, len, sidecar, reason } => writeln!(
                    out,
                    "repair: {verb} move {len} bytes of {} from position {at} to {} and truncate there ({reason})",
                    log.display(),
                    sidecar.display()
                )?,
                Action::MoveAside { file, sidecar, reason } => {
                    writeln!(out, "repair: {verb} move {} to {} ({reason})", file.display(), sidecar.display())?
                }
                Action::RebuildIndexes { log, reason, .. } => {
                    writeln!(out, "repair: {verb} rebuild the indexes of {} ({reason})", log.display())?
                }
                Action::CutRanges { log, ranges, reason } => {
                    for (from, to, sidecar) in ranges {
                        writeln!(
                            out,
                            "repair: {verb} move bytes {from}..{to} ({} bytes) of {} to {}",
                            to - from,
                            log.display(),
                            sidecar.display()
                        )?;
                    }
                    writeln!(
                        out,
                        "repair: {verb} rewrite {} without them, keeping every valid batch ({reason})",
                        log.display()
                    )?;
                }
            }
        }
        if let Some(s) = &plan.salvage {
            write_salvage(&p, s, out)?;
        }
        for r in &plan.refused {
            refused += 1;
            writeln!(
                out,
                "repair: left alone {}:{} {}",
                r.log.display(),
                r.position,
                r.reason
            )?;
        }
        if !args.dry_run {
            kaen_log::log::appender::check_real_parent(&p.dir, &data_dir)?;
            for written in repair::execute(&plan, &opts)? {
                writeln!(out, "repair: wrote {}", written.display())?;
            }
        }
    }
    Ok(refused)
}

/// The recovery point of `p` in `data_dir`'s checkpoint (0 without one).
fn recovery_point(data_dir: &Path, p: &Partition) -> anyhow::Result<i64> {
    let points =
        checkpoint::read_offsets(&data_dir.join(checkpoint::RECOVERY_POINT))?.unwrap_or_default();
    Ok(points
        .get(&(p.topic.clone(), p.partition))
        .copied()
        .unwrap_or(0))
}

/// The offsets a salvage loses, against what Kafka's recovery would.
fn write_salvage(p: &Partition, s: &repair::Salvage, out: &mut Output) -> anyhow::Result<()> {
    let name = p.name();
    let lost: Vec<String> = s
        .lost
        .iter()
        .map(|l| match l.to {
            Some(to) if to == l.from => format!("{to}"),
            Some(to) => format!("{}..={to}", l.from),
            None => format!("{} and on (the cut tail's offsets cannot be read)", l.from),
        })
        .collect();
    let count = match s
        .lost
        .iter()
        .map(|l| l.to.and_then(|t| t.checked_sub(l.from)?.checked_add(1)))
        .try_fold(0i64, |acc, n| acc.checked_add(n?))
    {
        Some(n) => format!("{n} offsets, "),
        None => String::new(),
    };
    writeln!(
        out,
        "salvage: {name}: offsets lost: {} ({count}{} bytes cut); {} bytes of valid batches after the damage kept",
        if lost.is_empty() { "none".to_string() } else { lost.join(", ") },
        s.cut_bytes,
        s.kept_after_damage_bytes
    )?;
    match (&s.kafka_cut, s.kafka_lost) {
        (Some((log, at)), lost) => writeln!(
            out,
            "salvage: {name}: Kafka's recovery would cut {} at position {at}{}{}",
            log.display(),
            if s.kafka_deleted.is_empty() {
                String::new()
            } else {
                format!(" and delete {} later segment(s)", s.kafka_deleted.len())
            },
            match lost {
                Some((from, end)) => format!(
                    ", losing offsets {from}..={} ({} offsets)",
                    end.saturating_sub(1),
                    end.saturating_sub(from)
                ),
                None => ", losing only the unreadable tail".to_string(),
            }
        )?,
        (None, _) => writeln!(
            out,
            "salvage: {name}: Kafka's recovery, from the recovery point, would not reach this damage (it trusts the segments below the recovery point)"
        )?,
    }
    Ok(())
}

fn recovery_preview(args: &VerifyCrcArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let mut changes = 0;
    for (data_dir, p) in partitions(args)? {
        let clean = data_dir.join(".kafka_cleanshutdown").exists();
        let points = checkpoint::read_offsets(&data_dir.join(checkpoint::RECOVERY_POINT))?
            .unwrap_or_default();
        let point = points
            .get(&(p.topic.clone(), p.partition))
            .copied()
            .unwrap_or(0);
        let name = p.name();
        if clean {
            let recovered = kaen_log::recovery::recovered_after_clean_shutdown(&p)?;
            if recovered.is_empty() {
                writeln!(out, "{name}: .kafka_cleanshutdown is present: a broker would skip recovery and trust these files as they are")?;
            }
            for (seg, damage) in &recovered {
                changes += 1;
                writeln!(
                    out,
                    "{name}: .kafka_cleanshutdown is present, but {} has no usable offset index: a broker recovers that segment and rebuilds its indexes",
                    seg.log.display()
                )?;
                if let Some(d) = damage {
                    writeln!(
                        out,
                        "{name}: and cuts {} at position {} ({} bytes): {}",
                        seg.log.display(),
                        d.position,
                        d.file_len - d.position,
                        d.error
                    )?;
                }
            }
            continue;
        }
        let pv = kaen_log::recovery::preview(&p, point)?;
        match &pv.truncate {
            None => writeln!(
                out,
                "{name}: recovery from segment {} (recovery point {point}) finds nothing to cut",
                pv.from_segment
            )?,
            Some((seg, d)) => {
                changes += 1;
                writeln!(
                    out,
                    "{name}: recovery from segment {} (recovery point {point}) cuts {} at position {} ({} bytes): {}",
                    pv.from_segment,
                    seg.log.display(),
                    d.position,
                    d.file_len - d.position,
                    d.error
                )?;
                for s in &pv.deleted {
                    writeln!(
                        out,
                        "{name}: and deletes the later segment {}",
                        s.log.display()
                    )?;
                }
                if let Some((from, to)) = pv.lost_offsets {
                    writeln!(out, "{name}: offsets {from}..{} disappear", to - 1)?;
                }
            }
        }
    }
    Ok(Outcome::from_count(changes))
}
