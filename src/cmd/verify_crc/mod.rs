//! `klog verify-crc`: check every batch, index and (with --deep) producer
//! state; preview a broker's recovery; repair.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::log::lock::DirLock;
use kaen_log::log::{checkpoint, classify, DataDir, Partition, PathKind};
use kaen_log::repair::{self, Action, RepairOptions};
use kaen_log::txn::TxnOptions;
use kaen_log::verify;

use kaen_log::findings::{Counts, Finding, Summary};
use schemars::JsonSchema;
use serde::Serialize;

use crate::cmd::args::FailOn;
use crate::exit::Outcome;
use crate::report::document::STREAM_TABLE;
use crate::report::progress::Progress;
use crate::report::table::escape_cell;
use crate::report::{emit, formats, plural, Format, Jsonl, Output, Report, Table};

/// Check every batch's CRC-32C (CRC-32 for legacy messages), its framing and
/// header, the order of offsets within and across segments, each segment's
/// base offset against its file name, how each file ends (torn tail,
/// trailing zero bytes), and each segment's `.index` and `.timeindex`
/// against the log. Past damage that breaks the framing, the walk resumes
/// at the next CRC-valid batch and says where. That is what a broker's
/// recovery checks: it does not decode records either (records are counted
/// from the batch headers). --records also decodes every record
/// (decompressed when needed); --deep does that and adds the producer-state
/// checks of `klog transactions`.
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
    /// Output format (csv: one row per finding, the fields of a JSON
    /// finding; not with --repair or --recovery-preview).
    #[arg(long, value_parser = formats(STREAM_TABLE), default_value = "text")]
    pub format: Format,
    /// The most bytes one batch's records may decompress to.
    #[arg(long, default_value_t = DecodeLimits::default().max_decompressed)]
    pub max_decompressed_bytes: u64,
    /// Check only the indexes.
    #[arg(long, conflicts_with = "no_index_checks")]
    pub index_only: bool,
    /// Do not check the indexes (e.g. for segment files copied without them).
    #[arg(long)]
    pub no_index_checks: bool,
    /// Also decode every record of every batch (decompressed when needed).
    #[arg(long)]
    pub records: bool,
    /// Also decode every record, and check producer sequences, epochs,
    /// transactions and .txnindex files.
    #[arg(long)]
    pub deep: bool,
    /// With --deep: "now" (epoch ms or ISO-8601) for the age of open transactions; default: the clock.
    #[arg(long, value_parser = kaen_log::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// With --deep: an open transaction whose producer last wrote more than
    /// this long ago (ms, or an ISO-8601 duration) is a hanging candidate
    /// (find-hanging's --max-transaction-timeout, 15 minutes by default).
    #[arg(
        long,
        default_value_t = kaen_log::txn::hanging::DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
        value_parser = kaen_log::time::parse_duration_or_ms
    )]
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
    /// Partitions checked at once, each job on a thread of its own
    /// (default, and at most: the number of cores; more is clamped, with a
    /// note on stderr). Jobs and the read-ahead threads of large segments share the cores: a
    /// segment is read ahead only when there are fewer partitions than
    /// cores, on a core no job holds.
    #[arg(long)]
    pub jobs: Option<usize>,
    /// How segment files are read (the findings are the same whichever).
    #[arg(long, value_enum, default_value_t)]
    pub reads: crate::cmd::args::ReadsArg,
    /// The least severity that makes the run exit 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
    /// With --salvage: salvage a replicated partition even when not every
    /// replica is given, or the replicas given lose different offsets.
    /// Kafka never repairs that difference (the replicas' log ends and
    /// leader epochs agree, so no follower fetches again): the replicas
    /// keep serving different records.
    #[arg(long, requires = "salvage")]
    pub salvage_some_replicas: bool,
    #[command(flatten)]
    pub write: crate::cmd::args::WriteArgs,
}

pub fn run(args: &VerifyCrcArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        args.format != Format::Csv || !(args.repair || args.recovery_preview),
        "--format csv is the findings table: --{} prints text, json or jsonl",
        if args.repair {
            "repair"
        } else {
            "recovery-preview"
        }
    );
    if args.recovery_preview {
        return recovery_preview(args, out);
    }
    let mut opts = options(args);
    let progress = Progress::over(&args.paths, out.shows_progress(args.format == Format::Text));
    let total = check(args, &opts)?;
    drop(progress);
    let mut report = VerifyReport::new(&total);
    let fail_on = args.fail_on.severity();
    if !args.repair {
        if args.format == Format::Csv {
            // Text lists them before the findings; CSV's rows are findings.
            for line in report.skipped_lines() {
                crate::report::say!("{line}");
            }
        }
        emit(&report, args.format, out)?;
        return Ok(Outcome::from_count(total.failing(fail_on)));
    }
    let mut repair = RepairOut {
        dry_run: args.dry_run,
        ..RepairOut::default()
    };
    // Text shows each step as it is taken (so a failure leaves the steps
    // already done on the screen); the other formats print the document.
    let live = (args.format == Format::Text).then(|| {
        out.write_all(report.text(out.fit()).as_bytes())?;
        crate::report::say_lines(&report.summary());
        anyhow::Ok(())
    });
    live.transpose()?;
    let text = args.format == Format::Text;
    let refused = run_repair(args, &mut repair, text.then_some(&mut *out))?;
    let mut failing = refused;
    if args.dry_run {
        failing += total.failing(fail_on);
    } else {
        opts.progress = None;
        let after = check(args, &opts)?;
        failing += after.failing(fail_on);
        repair.after = Some(Box::new(VerifyReport::new(&after)));
    }
    if text {
        if let Some(after) = &repair.after {
            writeln!(out, "after repair:")?;
            out.write_all(after.text(out.fit()).as_bytes())?;
            out.flush()?;
            crate::report::say_lines(&after.summary());
        }
    } else {
        report.repair = Some(repair);
        emit(&report, args.format, out)?;
    }
    Ok(Outcome::from_count(failing))
}

/// What was checked.
#[derive(Serialize, JsonSchema)]
struct CheckedOut {
    files: u64,
    batches: u64,
    records: u64,
    bytes: u64,
}

/// A partition folder listed but not read.
#[derive(Serialize, JsonSchema)]
struct SkippedOut {
    dir: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    dir_base64: Option<String>,
    /// delete, future or stray.
    state: &'static str,
}

/// One step of a repair.
#[derive(Serialize, JsonSchema, Default)]
struct ActionOut {
    /// truncate, move_aside, rebuild_indexes or left_alone.
    action: &'static str,
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    file: kaen_log::findings::FileFields,
    /// truncate and left_alone: the byte position.
    position: Option<u64>,
    /// truncate: the bytes moved aside.
    bytes: Option<u64>,
    /// Where moved bytes go.
    sidecar: Option<String>,
    reason: String,
}

/// `--repair`: the plan, what was written, and the check after it.
#[derive(Serialize, JsonSchema, Default)]
struct RepairOut {
    dry_run: bool,
    actions: Vec<ActionOut>,
    /// Damage repair left alone (see --force-truncate).
    refused: Vec<ActionOut>,
    written: Vec<String>,
    /// With --salvage: the offsets lost, against what Kafka's recovery would lose.
    salvage: Vec<String>,
    /// The verification after the repair (absent with --dry-run).
    after: Option<Box<VerifyReport>>,
}

/// `klog verify-crc`'s document.
#[derive(Serialize, JsonSchema)]
pub struct VerifyReport {
    /// No finding at error severity.
    ok: bool,
    checked: CheckedOut,
    findings: Vec<Finding>,
    finding_counts: Counts,
    skipped: Vec<SkippedOut>,
    #[serde(skip_serializing_if = "Option::is_none")]
    repair: Option<RepairOut>,
}

impl VerifyReport {
    fn new(r: &verify::Report) -> Self {
        let c = r.checked;
        VerifyReport {
            ok: r.ok(),
            checked: CheckedOut {
                files: c.files,
                batches: c.batches,
                records: c.records,
                bytes: c.bytes,
            },
            findings: r.findings.clone(),
            finding_counts: r.summary().counts(),
            skipped: r
                .skipped
                .iter()
                .map(|(d, state)| SkippedOut {
                    dir: d.display().to_string(),
                    dir_base64: kaen_log::findings::path_base64(d),
                    state,
                })
                .collect(),
            repair: None,
        }
    }

    /// The partition folders listed but not read, a line each.
    fn skipped_lines(&self) -> impl Iterator<Item = String> + '_ {
        self.skipped
            .iter()
            .map(|s| format!("{}: skipped, a partition folder marked {}", s.dir, s.state))
    }
}

/// The columns of the CSV of findings: where, how bad, what.
const FINDING_COLUMNS: &[&str] = &[
    "file",
    "file_base64",
    "position",
    "byte",
    "severity",
    "kind",
    "offset",
    "producer_id",
    "detail",
];

impl Report for VerifyReport {
    const COMMAND: &'static str = "verify-crc";

    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }

    /// One row per finding, every field of the JSON finding.
    fn csv_table(&self) -> Option<Table> {
        Some(Table::of(&self.findings).only(FINDING_COLUMNS))
    }

    /// `file:position severity kind detail`, one finding per line.
    fn text(&self, _fit: crate::report::table::Fit) -> String {
        let mut out = String::new();
        for line in self.skipped_lines() {
            out.push_str(&escape_cell(&line));
            out.push('\n');
        }
        for f in &self.findings {
            out.push_str(&escape_cell(&f.to_string()));
            out.push('\n');
        }
        out
    }

    fn summary(&self) -> String {
        let c = &self.checked;
        format!(
            "{}: checked {}, {}, {}, {}; {}\n",
            if self.ok { "ok" } else { "damaged" },
            plural(c.files, "file", "files"),
            plural(c.batches, "batch", "batches"),
            plural(c.records, "record", "records"),
            plural(c.bytes, "byte", "bytes"),
            Summary::of(&self.findings)
        )
    }

    fn write_lines(&self, lines: &mut Jsonl<'_>) -> anyhow::Result<()> {
        for s in &self.skipped {
            lines.line("skipped", s)?;
        }
        for f in &self.findings {
            lines.line("finding", f)?;
        }
        #[derive(Serialize)]
        struct Total<'a> {
            ok: bool,
            checked: &'a CheckedOut,
            finding_counts: &'a Counts,
        }
        lines.line(
            "summary",
            &Total {
                ok: self.ok,
                checked: &self.checked,
                finding_counts: &self.finding_counts,
            },
        )?;
        // With --repair: the plan, what was written and the check after it,
        // as in the JSON document.
        if let Some(repair) = &self.repair {
            lines.line("repair", repair)?;
        }
        Ok(())
    }
}

fn options(args: &VerifyCrcArgs) -> verify::Options {
    verify::Options {
        limits: DecodeLimits {
            max_decompressed: args.max_decompressed_bytes,
        },
        index_only: args.index_only,
        no_indexes: args.no_index_checks,
        deep: args.deep,
        records: args.records || args.deep,
        txn: TxnOptions {
            now_ms: Some(args.now_ms.unwrap_or_else(crate::cmd::now_ms)),
            transaction_timeout_ms: args.transaction_timeout_ms,
            ..TxnOptions::default()
        },
        jobs: match args.jobs {
            Some(n) => crate::cmd::clamp_to_cores("--jobs", n),
            None => std::thread::available_parallelism().map_or(1, |n| n.get()),
        },
        reads: args.reads.into(),
        ..verify::Options::default()
    }
}

fn check(args: &VerifyCrcArgs, opts: &verify::Options) -> anyhow::Result<verify::Report> {
    let mut total = verify::Report::default();
    for path in &args.paths {
        let r = verify::verify_path(path, opts)
            .with_context(|| format!("verify-crc {}", path.display()))?;
        total.merge(r);
    }
    Ok(total)
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

/// Plan, print (text, as it goes) and (unless --dry-run) carry out the
/// repair. Returns the number of refused cases.
fn run_repair(
    args: &VerifyCrcArgs,
    repair: &mut RepairOut,
    mut out: Option<&mut Output>,
) -> anyhow::Result<u64> {
    let mut opts = RepairOptions {
        force_truncate: args.force_truncate,
        salvage: args.salvage,
        ..RepairOptions::default()
    };
    let mut say = |line: String| -> anyhow::Result<()> {
        if let Some(out) = out.as_mut() {
            writeln!(out, "{}", escape_cell(&line))?;
            out.flush()?;
        }
        Ok(())
    };
    let verb = if args.dry_run { "would" } else { "will" };
    let mut refused = 0;
    let mut locks: Vec<(PathBuf, DirLock)> = Vec::new();
    let overrides = kaen_log::topic_config::parse_overrides(&args.write.config)?;
    opts.copy_hard_linked = args.write.copy_hard_linked;
    let mut plans = Vec::new();
    let partitions = partitions(args)?;
    let mut data_dirs: Vec<PathBuf> = Vec::new();
    for (d, _) in &partitions {
        if !data_dirs.contains(d) {
            data_dirs.push(d.clone());
        }
    }
    // The newest KRaft metadata image among the directories: topic configs
    // and replica assignments are the cluster's.
    let image = kaen_log::metadata::newest_image(&data_dirs);
    for (data_dir, p) in partitions {
        if !args.dry_run && !locks.iter().any(|(d, _)| *d == data_dir) {
            locks.push((data_dir.clone(), DirLock::acquire(&data_dir)?));
        }
        opts.recovery_point = recovery_point(&data_dir, &p)?;
        // Indexes are rebuilt at the topic's index interval, as the broker
        // owning the directory would (`LogConfig`, `LogSegment.recover`).
        let config =
            kaen_log::topic_config::resolve(image.as_ref(), &data_dir, &p.topic, &overrides);
        opts.index_interval_bytes = config.index_interval_bytes()?;
        let plan = repair::plan(&p, &opts)?;
        if plan
            .actions
            .iter()
            .any(|a| matches!(a, Action::RebuildIndexes { .. }))
        {
            eprintln!(
                "klog: {}: indexes {} with {}",
                p.dir.display(),
                if args.dry_run {
                    "would be rebuilt"
                } else {
                    "rebuilt"
                },
                config.describe_only(&["index.interval.bytes", "segment.index.bytes"])
            );
        }
        plans.push((data_dir, p, plan, opts));
    }
    let uneven = if args.salvage {
        uneven_salvages(&plans, image.as_ref())
    } else {
        Vec::new()
    };
    for (data_dir, p, mut plan, opts) in plans {
        if let Some(why) = uneven.iter().find(|(dir, _)| *dir == p.dir).map(|(_, w)| w) {
            if args.salvage_some_replicas {
                say(format!(
                    "salvage: {}: {why} (accepted: --salvage-some-replicas)",
                    p.name()
                ))?;
            } else {
                plan.refused.push(repair::Refusal {
                    log: p.dir.clone(),
                    position: 0,
                    reason: format!("{why}; give --salvage-some-replicas to salvage it anyway"),
                });
                plan.actions.clear();
                plan.salvage = None;
            }
        }
        for a in &plan.actions {
            let step = match a {
                Action::Truncate {
                    log,
                    at,
                    len,
                    sidecar,
                    reason,
                } => {
                    say(format!(
                        "repair: {verb} move {len} bytes of {} from position {at} to {} and truncate there ({reason})",
                        log.display(),
                        sidecar.display()
                    ))?;
                    ActionOut {
                        action: "truncate",
                        file: kaen_log::findings::FileFields::of(log),
                        position: Some(*at),
                        bytes: Some(*len),
                        sidecar: Some(sidecar.display().to_string()),
                        reason: reason.to_string(),
                    }
                }
                Action::MoveAside {
                    file,
                    sidecar,
                    reason,
                } => {
                    say(format!(
                        "repair: {verb} move {} to {} ({reason})",
                        file.display(),
                        sidecar.display()
                    ))?;
                    ActionOut {
                        action: "move_aside",
                        file: kaen_log::findings::FileFields::of(file),
                        sidecar: Some(sidecar.display().to_string()),
                        reason: reason.to_string(),
                        ..ActionOut::default()
                    }
                }
                Action::RebuildIndexes { log, reason, .. } => {
                    say(format!(
                        "repair: {verb} rebuild the indexes of {} ({reason})",
                        log.display()
                    ))?;
                    ActionOut {
                        action: "rebuild_indexes",
                        file: kaen_log::findings::FileFields::of(log),
                        reason: reason.to_string(),
                        ..ActionOut::default()
                    }
                }
                Action::CutRanges {
                    log,
                    ranges,
                    reason,
                } => {
                    for (from, to, sidecar) in ranges {
                        say(format!(
                            "repair: {verb} move bytes {from}..{to} ({} bytes) of {} to {}",
                            to - from,
                            log.display(),
                            sidecar.display()
                        ))?;
                    }
                    say(format!(
                        "repair: {verb} rewrite {} without them, keeping every valid batch ({reason})",
                        log.display()
                    ))?;
                    ActionOut {
                        action: "cut_ranges",
                        file: kaen_log::findings::FileFields::of(log),
                        sidecar: Some(
                            ranges
                                .iter()
                                .map(|(from, to, sidecar)| {
                                    format!("{from}..{to}:{}", sidecar.display())
                                })
                                .collect::<Vec<_>>()
                                .join(","),
                        ),
                        reason: reason.to_string(),
                        ..ActionOut::default()
                    }
                }
            };
            repair.actions.push(step);
        }
        if let Some(s) = &plan.salvage {
            for line in salvage_lines(&p, s) {
                say(line.clone())?;
                repair.salvage.push(line);
            }
        }
        for r in &plan.refused {
            refused += 1;
            say(format!(
                "repair: left alone {}:{} {}",
                r.log.display(),
                r.position,
                r.reason
            ))?;
            repair.refused.push(ActionOut {
                action: "left_alone",
                file: kaen_log::findings::FileFields::of(&r.log),
                position: Some(r.position),
                reason: r.reason.to_string(),
                ..ActionOut::default()
            });
        }
        if !args.dry_run && !plan.actions.is_empty() {
            kaen_log::log::appender::check_real_parent(&p.dir, &data_dir)?;
            for written in repair::execute(&plan, &opts)? {
                say(format!("repair: wrote {}", written.display()))?;
                repair.written.push(written.display().to_string());
            }
        }
    }
    Ok(refused)
}

/// The partitions whose salvage would leave their replicas different, and
/// why: a replicated partition (its replicas in the newest KRaft metadata
/// among the directories given) salvaged on fewer than all its replicas,
/// or on replicas that lose different offsets. A broker never repairs
/// that: after the restart the replicas' log ends and leader epochs agree,
/// so no follower truncates or fetches the offsets one of them lost
/// (`AbstractFetcherThread`: truncation by leader epoch only), while the
/// leader serves its own. The broker's own remedy is named.
fn uneven_salvages(
    plans: &[(PathBuf, Partition, repair::Plan, RepairOptions)],
    image: Option<&kaen_log::metadata::image::Image>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut seen: Vec<(&str, i32)> = Vec::new();
    for (_, p, ..) in plans {
        let key = (p.topic.as_str(), p.partition);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let copies: Vec<_> = plans
            .iter()
            .filter(|(_, q, ..)| (q.topic.as_str(), q.partition) == key)
            .collect();
        let lost = |plan: &repair::Plan| {
            plan.salvage
                .as_ref()
                .map(|s| s.lost.clone())
                .unwrap_or_default()
        };
        if copies.iter().all(|(_, _, plan, _)| lost(plan).is_empty()) {
            continue;
        }
        let Some(reg) = kaen_log::offsets::write::registration(image, key.0, key.1) else {
            continue;
        };
        if reg.replicas.len() < 2 {
            continue;
        }
        let given: Vec<i32> = copies
            .iter()
            .filter_map(|(d, ..)| kaen_log::log::meta::node_id(d))
            .collect();
        let missing: Vec<String> = reg
            .replicas
            .iter()
            .filter(|n| !given.contains(n))
            .map(i32::to_string)
            .collect();
        let differ = copies.windows(2).any(|w| lost(&w[0].2) != lost(&w[1].2));
        if missing.is_empty() && !differ {
            continue;
        }
        let nodes: Vec<String> = reg.replicas.iter().map(i32::to_string).collect();
        let what = if missing.is_empty() {
            "the replicas given would lose different offsets".to_string()
        } else {
            format!("node(s) {} not given", missing.join(", "))
        };
        for (_, q, plan, _) in &copies {
            if lost(plan).is_empty() {
                continue;
            }
            out.push((
                q.dir.clone(),
                format!(
                    "{}-{} is replicated on nodes {} and {what}: this salvage would leave its replicas \
                     different, which Kafka never repairs (their log ends and leader epochs agree, so no \
                     follower fetches what one lacks). The broker's remedy: with the brokers stopped, remove \
                     this replica's partition folder ({}) so that it re-replicates from the leader, or salvage \
                     every replica alike (give each broker's data directory, damaged alike)",
                    key.0,
                    key.1,
                    nodes.join(", "),
                    q.dir.display()
                ),
            ));
        }
    }
    out
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
fn salvage_lines(p: &Partition, s: &repair::Salvage) -> Vec<String> {
    let name = p.name();
    let mut out = Vec::new();
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
    out.push(format!(
        "salvage: {name}: offsets lost: {} ({count}{} bytes cut); {} bytes of valid batches after the damage kept",
        if lost.is_empty() { "none".to_string() } else { lost.join(", ") },
        s.cut_bytes,
        s.kept_after_damage_bytes
    ));
    match (&s.kafka_cut, s.kafka_lost) {
        (Some((log, at)), lost) => out.push(format!(
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
        )),
        (None, _) => out.push(format!(
            "salvage: {name}: Kafka's recovery, from the recovery point, would not reach this damage (it trusts the segments below the recovery point)"
        )),
    }
    out
}

/// A cut a restarting broker would make.
#[derive(Serialize, JsonSchema)]
struct CutOut {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    file: kaen_log::findings::FileFields,
    position: u64,
    bytes: u64,
    error: String,
}

/// What a broker's recovery would do to one partition.
#[derive(Serialize, JsonSchema)]
struct PreviewOut {
    topic: String,
    partition: i32,
    /// `.kafka_cleanshutdown` is present: recovery is skipped except for
    /// segments without a usable offset index.
    clean_shutdown: bool,
    recovery_point: i64,
    /// The first segment recovery reads (unclean shutdown).
    from_segment: Option<i64>,
    /// Segments recovered although the shutdown was clean.
    recovered_segments: Vec<String>,
    cuts: Vec<CutOut>,
    deleted_segments: Vec<String>,
    /// The offsets that disappear, first and last.
    lost_offsets: Option<[i64; 2]>,
    #[serde(skip)]
    lines: Vec<String>,
}

/// `verify-crc --recovery-preview`'s document.
#[derive(Serialize, JsonSchema)]
pub struct RecoveryReport {
    partitions: Vec<PreviewOut>,
    /// Partitions recovery would change.
    changes: u64,
}

impl Report for RecoveryReport {
    const COMMAND: &'static str = "verify-crc";

    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }

    fn text(&self, _fit: crate::report::table::Fit) -> String {
        self.partitions
            .iter()
            .flat_map(|p| &p.lines)
            .map(|l| format!("{}\n", escape_cell(l)))
            .collect()
    }

    fn write_lines(&self, lines: &mut Jsonl<'_>) -> anyhow::Result<()> {
        for p in &self.partitions {
            lines.line("recovery", p)?;
        }
        Ok(())
    }
}

fn recovery_preview(args: &VerifyCrcArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let mut changes = 0;
    let mut partitions_out = Vec::new();
    for (data_dir, p) in partitions(args)? {
        let clean = data_dir.join(".kafka_cleanshutdown").exists();
        let points = checkpoint::read_offsets(&data_dir.join(checkpoint::RECOVERY_POINT))?
            .unwrap_or_default();
        let point = points
            .get(&(p.topic.clone(), p.partition))
            .copied()
            .unwrap_or(0);
        let name = p.name();
        let mut doc = PreviewOut {
            topic: p.topic.clone(),
            partition: p.partition,
            clean_shutdown: clean,
            recovery_point: point,
            from_segment: None,
            recovered_segments: Vec::new(),
            cuts: Vec::new(),
            deleted_segments: Vec::new(),
            lost_offsets: None,
            lines: Vec::new(),
        };
        if clean {
            let recovered = kaen_log::recovery::recovered_after_clean_shutdown(&p)?;
            if recovered.is_empty() {
                doc.lines.push(format!("{name}: .kafka_cleanshutdown is present: a broker would skip recovery and trust these files as they are"));
            }
            for (seg, damage) in &recovered {
                changes += 1;
                doc.recovered_segments.push(seg.log.display().to_string());
                doc.lines.push(format!(
                    "{name}: .kafka_cleanshutdown is present, but {} has no usable offset index: a broker recovers that segment and rebuilds its indexes",
                    seg.log.display()
                ));
                if let Some(d) = damage {
                    doc.lines.push(format!(
                        "{name}: and cuts {} at position {} ({} bytes): {}",
                        seg.log.display(),
                        d.position,
                        d.file_len - d.position,
                        d.error
                    ));
                    doc.cuts.push(CutOut {
                        file: kaen_log::findings::FileFields::of(&seg.log),
                        position: d.position,
                        bytes: d.file_len - d.position,
                        error: d.error.to_string(),
                    });
                }
            }
            partitions_out.push(doc);
            continue;
        }
        let pv = kaen_log::recovery::preview(&p, point)?;
        doc.from_segment = Some(pv.from_segment);
        match &pv.truncate {
            None => doc.lines.push(format!(
                "{name}: recovery from segment {} (recovery point {point}) finds nothing to cut",
                pv.from_segment
            )),
            Some((seg, d)) => {
                changes += 1;
                doc.lines.push(format!(
                    "{name}: recovery from segment {} (recovery point {point}) cuts {} at position {} ({} bytes): {}",
                    pv.from_segment,
                    seg.log.display(),
                    d.position,
                    d.file_len - d.position,
                    d.error
                ));
                doc.cuts.push(CutOut {
                    file: kaen_log::findings::FileFields::of(&seg.log),
                    position: d.position,
                    bytes: d.file_len - d.position,
                    error: d.error.to_string(),
                });
                for s in &pv.deleted {
                    doc.lines.push(format!(
                        "{name}: and deletes the later segment {}",
                        s.log.display()
                    ));
                    doc.deleted_segments.push(s.log.display().to_string());
                }
                if let Some((from, to)) = pv.lost_offsets {
                    doc.lines
                        .push(format!("{name}: offsets {from}..={} disappear", to - 1));
                    doc.lost_offsets = Some([from, to - 1]);
                }
            }
        }
        partitions_out.push(doc);
    }
    emit(
        &RecoveryReport {
            partitions: partitions_out,
            changes,
        },
        args.format,
        out,
    )?;
    Ok(Outcome::from_count(changes))
}
