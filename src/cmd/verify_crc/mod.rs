//! `klog verify-crc`: check every batch, index and (with --deep) producer
//! state; preview a broker's recovery; repair.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::inspect::restart::PartitionRestart;
use kaen_log::inspect::targets::{self, Folders};
use kaen_log::inspect::verify;
use kaen_log::txn::TxnOptions;

use kaen_log::log::findings::{Counts, Finding, Summary};
use schemars::JsonSchema;
use serde::Serialize;

use crate::cmd::args::FailOn;
use crate::exit::Outcome;
use crate::report::document::STREAM_TABLE;
use crate::report::progress::Progress;
use crate::report::recovery_text::preview_lines;
use crate::report::table::escape_cell;
use crate::report::{emit, formats, plural, Format, Jsonl, Output, Report, Table};

mod repair_steps;

use repair_steps::run_repair;

mod recovery_preview;
pub use recovery_preview::*;

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
/// was found. In a data directory, `-future` and `-stray` folders are
/// checked as live ones (a broker's start recovers them); `-delete`
/// folders, loaded without recovery and then deleted, are listed as
/// skipped.
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
    /// With --deep: "now" (epoch ms or ISO-8601) for the age of open
    /// transactions. Without it no transaction is judged hanging: a note
    /// says so (the clock is not taken for now, see klog-verify-crc(1)).
    #[arg(long, value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// With --deep: an open transaction whose producer last wrote more than
    /// this long ago (ms, or an ISO-8601 duration) is a hanging candidate
    /// (find-hanging's --max-transaction-timeout, 15 minutes by default).
    #[arg(
        long,
        default_value_t = kaen_log::txn::hanging::DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
        value_parser = kaen_log::format::time::parse_duration_or_ms
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
    /// Say what a Kafka broker restarting on this directory will do, by the
    /// shutdown it left (`.kafka_cleanshutdown`): which segments it
    /// recovers and re-reads (bytes) and whose indexes it rebuilds, which
    /// segment it cuts where, which later segments it deletes, which
    /// offsets disappear, and the log start, log end and high watermark
    /// it loads. The metadata log is recovered on every start. Every
    /// folder a start loads is covered, under its own name: `-future` and
    /// `-stray` ones are recovered as live ones, `-delete` ones loaded
    /// without recovery, then deleted (`LogManager.loadLog`, `LogLoader.load`).
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
    let mut opts = options(args)?;
    let progress = Progress::over(
        || kaen_log::log::dir::log_bytes(&args.paths),
        out.shows_progress(args.format == Format::Text),
    );
    opts.meter = Progress::meter_of(&progress);
    let total = check(args, &opts)?;
    drop(progress);
    let mut report = VerifyReport::new(&total);
    report.restarts = crate::cmd::restarts_of(&args.paths);
    let fail_on = args.fail_on.severity();
    if !args.repair {
        if args.format == Format::Csv {
            // Text lists them before the findings; CSV's rows are findings.
            for r in &report.restarts {
                crate::report::say!("{}", r.headline);
            }
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
        opts.meter = None;
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
    file: kaen_log::log::findings::FileFields,
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
    /// Each broker log directory given: how its broker went down and what
    /// its next start re-reads (first in text).
    restarts: Vec<crate::cmd::RestartOut>,
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
                    dir_base64: kaen_log::log::findings::path_base64(d),
                    state,
                })
                .collect(),
            restarts: Vec::new(),
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
        for r in &self.restarts {
            out.push_str(&r.headline);
            out.push('\n');
        }
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

fn options(args: &VerifyCrcArgs) -> anyhow::Result<verify::Options> {
    let limits = DecodeLimits {
        max_decompressed: args.max_decompressed_bytes,
    };
    // find-hanging's rule, as `klog transactions` applies it: the
    // coordinator's state is the `__transaction_state` partitions among
    // the paths given, now is --now-ms (none: nothing is judged).
    let coordinator = match args.deep {
        true => kaen_log::txn::hanging::coordinator_in(&args.paths, limits)
            .context("read the coordinator's state (__transaction_state)")?,
        false => None,
    };
    Ok(verify::Options {
        limits,
        index_only: args.index_only,
        no_indexes: args.no_index_checks,
        deep: args.deep,
        records: args.records || args.deep,
        txn: TxnOptions::default(),
        hanging: kaen_log::txn::hanging::Inputs {
            now_ms: args.now_ms,
            max_transaction_timeout_ms: args.transaction_timeout_ms,
            coordinator: coordinator.map(std::sync::Arc::new),
        },
        jobs: match args.jobs {
            Some(n) => crate::cmd::clamp_to_cores("--jobs", n),
            None => kaen_log::log::read::available_cores(),
        },
        reads: args.reads.into(),
        ..verify::Options::default()
    })
}

fn check(args: &VerifyCrcArgs, opts: &verify::Options) -> anyhow::Result<verify::Report> {
    let mut total = verify::Report::default();
    for path in &args.paths {
        let r = verify::verify_path(path, opts)
            .with_context(|| format!("verify-crc {}", path.display()))?;
        total.merge(r);
    }
    total.note_not_judged();
    Ok(total)
}

impl crate::cmd::CommandEntry for VerifyCrcArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[
        (
            "klog verify-crc DIR",
            "check a data directory; exit 1 on damage",
        ),
        (
            "klog verify-crc --deep --format json DIR",
            "also producer state; one JSON document",
        ),
        (
            "klog verify-crc --recovery-preview DIR",
            "what a restarting broker would cut",
        ),
        (
            "klog verify-crc --repair --dry-run DIR",
            "the repair plan, changing nothing",
        ),
    ];
    const SEE_ALSO: &'static [&'static str] =
        &["dump-segment", "diff", "info", "reliability(7)", "crash(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("../generate/pages/verify-crc.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![
            json_schema::entry::<VerifyReport>(),
            (
                "verify-crc-recovery-preview",
                json_schema::schema_of::<RecoveryReport>(),
            ),
        ]
    }
}
