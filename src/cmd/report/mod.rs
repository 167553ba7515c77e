//! `klog report`: one self-contained HTML page of what the other commands
//! find, built from their documents (the renderer: `report::html`).

use std::collections::BTreeSet;
use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use kaen_log::cluster::broker_summary::{self, SummaryDoc, SummaryOptions};
use kaen_log::cluster::merge::{self, Source};
use kaen_log::format::escape::bounded;
use kaen_log::inspect::consumer_lag::{self, LagOptions, LagRow, LagTotals};
use kaen_log::inspect::fate::{kafka_does, LogDamage};
use kaen_log::log::findings::Finding;
use kaen_log::log::{DataDir, Partition};
use kaen_log::offsets::ReplayOptions;

use crate::exit::Outcome;
use crate::report::html::content::{
    Checked, DamageMark, FindingView, LagCell, LagSection, LagSums, PartitionView, RecoveryCut,
    ReplicaRuns, ReportDoc, RestartLine, Shown, Verdict,
};
use crate::report::Output;

mod lag_of_report;
use lag_of_report::{lag_of_dirs, lag_section};

/// Write one self-contained HTML page (inline SVG, CSS and a little plain
/// JavaScript for hover; nothing fetched) about data directories: the
/// verdict, a timeline per partition, the consumer lag and the replicas.
///
/// The page's content security policy fetches nothing, runs only the
/// page's own script (allowed by its SHA-256, not 'unsafe-inline'), posts
/// no form and refuses `<base>`.
///
/// PATH is a data directory (several: one broker's log directories, or
/// several brokers', compared as replicas as `klog cluster` compares
/// them), or a summary file written by `klog summary --format json` (all
/// the PATHs then summaries).
///
/// 0. Restart (first, on the first screen): how each broker went down
///    (`.kafka_cleanshutdown`, as `klog info` says it), crashed brokers
///    first, with what its restart re-reads; with several brokers, what
///    their restart costs as `klog cluster` judges it (batches followers
///    cut, partitions lost or under-replicated).
///
/// 1. Verdict: damaged (a finding at error severity, a partition lost or
///    diverged), warnings (a finding at warning severity, a partition
///    under-replicated) or healthy; the findings of `verify-crc` by
///    severity and kind, each with its file, byte position and what Kafka
///    does with it; notes of one kind (what a healthy broker leaves, such
///    as preallocated index slots) are one row with their count.
///
/// 2. Timeline: one row per partition, those that need attention first
///    (damage, what recovery drops, transactions, replicas that differ),
///    its replicas stacked as lanes on one offset axis ticked at round offsets (replicas with the same
///    segments, marks and transactions share a lane, labelled "brokers 1,
///    2, 3 identical"): the segments (`summary`'s document), log start,
///    recovery point, high watermark, last stable offset and log end as
///    lines with lettered flags (flags of marks closer than a few pixels
///    stand side by side, each telling all their values on hover), open
///    and aborted transactions (`transactions`), damage, what a restarting
///    broker's recovery drops (as verify-crc's recovery preview says) and
///    what a salvage repair would lose instead; transactions and losses at
///    least 6 pixels wide however few their offsets.
///
/// 3. Lag: a heatmap of groups × partitions coloured by `lag`'s lag,
///    linearly from pale yellow to red at the largest lag or 1000 records,
///    whichever is more (so a lag of 2 beside one of 216 is pale, not
///    alarming); hover for committed offset, log end, high watermark, last
///    stable offset (of the copy read), pending records; per group and per
///    topic totals.
///
/// 4. Replicas (several brokers): `cluster`'s verdict, each replica's
///    leader-epoch runs side by side on one axis, where it diverges and
///    where Kafka's truncation leaves it; the partitions that are ok
///    folded away.
///
/// Above --detail-limit partitions, timelines are drawn for the partitions
/// with damage or transactions only (every partition stays in a paged
/// table) and the heatmap is per topic. The tables of every partition and
/// every committed offset are folded (opened for print). The page is the same for the same
/// input: without --now-ms, offset expiry and hanging transactions are not
/// judged.
///
/// With --layout FILE the page is instead FILE's annotated byte layout (what
/// `dump-segment --layout` prints: log segments, indexes, snapshots,
/// checkpoints, meta.properties, partition.metadata, quorum-state) as a
/// hex view: hovering a byte lights its field and shows its name, type and
/// decoded value.
///
/// Exit 1 when the verdict is damaged (or, with --layout, when part of the
/// file does not decode); the page is written either way.
#[derive(Debug, clap::Args)]
pub struct ReportArgs {
    /// Data directories, or summary files (`klog summary --format json`).
    #[arg(
        value_name = "PATH",
        required_unless_present = "layout",
        conflicts_with = "layout"
    )]
    pub paths: Vec<PathBuf>,
    /// Write the page to FILE (default: stdout).
    #[arg(long, short, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Render this file's byte layout as a hex view.
    #[arg(long, value_name = "FILE")]
    pub layout: Option<PathBuf>,
    /// With --layout: show the file's first N bytes.
    #[arg(long, value_name = "N", default_value_t = 65536, requires = "layout")]
    pub max_bytes: u64,
    /// Draw every partition's timeline and the per-partition heatmap up to
    /// N partitions; above, aggregate.
    #[arg(long, value_name = "N", default_value_t = 200)]
    pub detail_limit: usize,
    /// Also decode every record and check producer state, as verify-crc --deep.
    #[arg(long)]
    pub deep: bool,
    /// "Now" (epoch ms or ISO-8601) for offset expiry and hanging transactions.
    #[arg(long, value_name = "MS", value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// The cluster's offsets.retention.minutes (with --now-ms).
    #[arg(long, value_name = "MINUTES", default_value_t = kaen_log::offsets::standing::DEFAULT_RETENTION_MINUTES,
          value_parser = clap::value_parser!(i64).range(1..=i64::from(i32::MAX)))]
    pub offsets_retention_minutes: i64,
}

impl ReportArgs {
    /// Every path the command reads.
    pub fn read_paths(&self) -> Vec<&Path> {
        self.paths
            .iter()
            .chain(&self.layout)
            .map(PathBuf::as_path)
            .collect()
    }
}

pub fn run(args: &ReportArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let (html, failing) = match &args.layout {
        Some(file) => {
            let doc = kaen_log::inspect::layout::of_file(file, layout_topic(file), args.max_bytes)?;
            // What makes the exit 1 is said here too, not only on the page.
            for problem in &doc.problems {
                crate::report::say!("{}: {problem}", file.display());
            }
            (
                crate::report::html::hex_view::render(&doc),
                doc.problems.len() as u64,
            )
        }
        None => {
            let doc = report_doc(args)?;
            let damaged = doc.verdict() == Verdict::Damaged;
            if damaged {
                crate::report::say!("verdict: damaged; the page says what and where");
            }
            (crate::report::html::render(&doc), u64::from(damaged))
        }
    };
    match &args.output {
        Some(path) => std::fs::write(path, html.as_bytes())
            .with_context(|| format!("write {}", path.display()))?,
        None => {
            out.write_all(html.as_bytes())?;
            out.flush()?;
        }
    }
    Ok(Outcome::from_count(failing))
}

/// The report of `args.paths`.
fn report_doc(args: &ReportArgs) -> anyhow::Result<ReportDoc> {
    let files = args.paths.iter().filter(|p| p.is_file()).count();
    anyhow::ensure!(
        files == 0 || files == args.paths.len(),
        "give data directories or summary files, not both"
    );
    let mut doc = ReportDoc {
        sources: args.paths.iter().map(|p| p.display().to_string()).collect(),
        now_ms: args.now_ms,
        detail_limit: args.detail_limit,
        ..ReportDoc::default()
    };
    if files > 0 {
        from_summaries(args, &mut doc)?;
    } else {
        from_dirs(args, &mut doc)?;
    }
    doc.partitions.sort_by(|a, b| {
        (&a.summary.topic, a.summary.partition, a.node).cmp(&(
            &b.summary.topic,
            b.summary.partition,
            b.node,
        ))
    });
    Ok(doc)
}

/// Summary files: `summary`'s partitions and `cluster`'s verdict and lag.
fn from_summaries(args: &ReportArgs, doc: &mut ReportDoc) -> anyhow::Result<()> {
    let sources = merge::read_sources(&args.paths)?;
    for s in &sources {
        for d in &s.doc.log_dirs {
            doc.restarts.extend(RestartLine::of_summary(d));
            for p in &d.partitions {
                if let Some(damage) = &p.damage {
                    doc.notes.push(format!(
                        "{} {}-{}: the summary's walk stopped at damage: {damage}",
                        bounded(&d.path),
                        p.topic,
                        p.partition
                    ));
                }
                doc.partitions.push(PartitionView::new(
                    d.node_id,
                    Shown::new(&d.path),
                    p.clone(),
                ));
            }
        }
    }
    // Each summary's findings (a folder that stops its broker from
    // starting, damage), in the verdict as verify-crc's are.
    let findings: Vec<Finding> = sources
        .iter()
        .flat_map(|s| s.doc.findings.clone())
        .collect();
    doc.findings = finding_views(findings, &[]);
    doc.replica_runs = ReplicaRuns::of(&sources);
    let cluster = merge::merge(&sources)?;
    let cells = cluster.groups.iter().map(LagCell::of_cluster).collect();
    let missing = "No committed offsets in these summaries.";
    doc.lag = lag_section(cells, Some(missing.into()));
    doc.cluster = Some(cluster);
    Ok(())
}

/// Data directories: `verify-crc`, `summary`, `transactions`, the
/// recovery preview and salvage plan, `lag`, and with several brokers
/// `cluster`.
fn from_dirs(args: &ReportArgs, doc: &mut ReportDoc) -> anyhow::Result<()> {
    // verify-crc's findings.
    // With --deep, hanging transactions as verify-crc --deep judges them.
    let coordinator = match args.deep {
        true => kaen_log::txn::hanging::coordinator_in(&args.paths, Default::default())
            .context("read the coordinator's state (__transaction_state)")?,
        false => None,
    };
    let opts = kaen_log::inspect::verify::Options {
        deep: args.deep,
        records: args.deep,
        hanging: kaen_log::txn::hanging::Inputs {
            now_ms: args.now_ms,
            coordinator: coordinator.map(std::sync::Arc::new),
            ..Default::default()
        },
        jobs: kaen_log::log::read::available_cores(),
        ..kaen_log::inspect::verify::Options::default()
    };
    let mut total = kaen_log::inspect::verify::Report::default();
    for dir in &args.paths {
        let r = kaen_log::inspect::verify::verify_path(dir, &opts)
            .with_context(|| format!("verify {}", dir.display()))?;
        total.merge(r);
    }
    total.note_not_judged();
    let c = total.checked;
    doc.checked = Some(Checked {
        files: c.files,
        batches: c.batches,
        records: c.records,
        bytes: c.bytes,
    });
    let mut findings = total.findings;
    // How each broker went down, for the page's top.
    for dir in &args.paths {
        if let Some(r) = crate::cmd::restart_of(dir) {
            doc.restarts.push(RestartLine {
                node: r.restart.shutdown.node_id,
                dir: Shown::new(&dir.display().to_string()),
                unclean: r.restart.shutdown.state
                    == kaen_log::log::shutdown::ShutdownState::Unclean,
                text: r.restart.headline(),
            });
        }
    }
    // summary's documents, and the partitions they describe.
    let mut damaged = Vec::new();
    let sources = summaries_of(args, &mut findings, doc, &mut damaged)?;
    doc.findings = finding_views(findings, &damaged);
    doc.lag = lag_of_dirs(args, &doc.partitions);
    // Several brokers: cluster's verdict.
    let nodes: BTreeSet<i32> = sources
        .iter()
        .flat_map(|s| &s.doc.log_dirs)
        .filter_map(|d| d.node_id)
        .collect();
    if nodes.len() > 1 {
        doc.replica_runs = ReplicaRuns::of(&sources);
        match merge::merge(&sources) {
            Ok(c) => doc.cluster = Some(c),
            Err(e) => doc.notes.push(format!("replicas not compared: {e}")),
        }
    }
    Ok(())
}

/// Each finding with what Kafka does with it, damage in a log placed
/// against the restart of the partition in `damaged` that holds it.
fn finding_views(findings: Vec<Finding>, damaged: &[LogDamage]) -> Vec<FindingView> {
    findings
        .into_iter()
        .map(|f| FindingView {
            kafka: kafka_does(&f, damaged),
            finding: f,
        })
        .collect()
}

/// `summary`'s document of each directory (names bounded: it is shown,
/// not written), its partitions into `doc` (their damaged logs into
/// `damaged`) and its findings into `findings` (those verify-crc did not
/// find already).
fn summaries_of(
    args: &ReportArgs,
    findings: &mut Vec<Finding>,
    doc: &mut ReportDoc,
    damaged: &mut Vec<LogDamage>,
) -> anyhow::Result<Vec<Source>> {
    let mut sources = Vec::new();
    for dir in &args.paths {
        let opts = SummaryOptions {
            bounded_names: true,
            ..SummaryOptions::default()
        };
        let (s, more) = broker_summary::summarize(dir, &opts)
            .with_context(|| format!("summary {}", dir.display()))?;
        kaen_log::log::findings::add_new(findings, &more);
        let opened = DataDir::open(dir)?;
        for ps in &s.partitions {
            let Some(p) = opened
                .live()
                .find(|p| p.topic == ps.topic && p.partition == ps.partition)
            else {
                continue;
            };
            let view = partition_view(&s, ps, p, findings, doc, damaged)?;
            doc.partitions.push(view);
        }
        sources.push(Source {
            file: dir.clone(),
            doc: SummaryDoc {
                schema_version: broker_summary::SCHEMA_VERSION,
                log_dirs: vec![s],
                findings: more,
            },
        });
    }
    Ok(sources)
}

/// One partition of a data directory (its log damage, if any, into
/// `damaged`).
fn partition_view(
    s: &broker_summary::LogDirSummary,
    ps: &broker_summary::PartitionSummary,
    p: &Partition,
    findings: &[Finding],
    doc: &mut ReportDoc,
    damaged: &mut Vec<LogDamage>,
) -> anyhow::Result<PartitionView> {
    let mut view = PartitionView::new(s.node_id, Shown::new(&s.path), ps.clone());
    transactions_of(ps, p, &mut view, doc);
    let point = ps.recovery_point.unwrap_or(0);
    if let Some(d) = LogDamage::of(p, findings, s.clean_shutdown, point)? {
        view.damage = d.findings.iter().map(DamageMark::of).collect();
        // verify-crc --recovery-preview.
        view.recovery = d.cut.as_ref().map(|c| RecoveryCut {
            file: c.log.display().to_string(),
            position: c.position,
            bytes: c.bytes,
            deleted_segments: c.deleted.iter().map(|s| s.display().to_string()).collect(),
            lost: c.lost,
        });
        // verify-crc --repair --salvage, planned only.
        view.salvage_lost = salvage_lost(p, point, doc);
        damaged.push(d);
    }
    Ok(view)
}

/// `transactions`' producer state of `p` into `view`: its last stable
/// offset, open and aborted transactions (a note when it cannot be read).
fn transactions_of(
    ps: &broker_summary::PartitionSummary,
    p: &Partition,
    view: &mut PartitionView,
    doc: &mut ReportDoc,
) {
    let txn = kaen_log::txn::TxnOptions {
        high_watermark: ps.high_watermark,
        ..kaen_log::txn::TxnOptions::default()
    };
    match kaen_log::txn::analyze(p, &txn) {
        Ok(st) => {
            view.last_stable = Some(st.last_stable_offset());
            view.open_txns = st
                .open_transactions()
                .into_iter()
                .map(|(pid, o)| (pid, o.first_offset))
                .collect();
            view.aborted = st
                .aborted
                .iter()
                .map(|a| (a.producer_id, a.first_offset, a.last_offset))
                .collect();
        }
        Err(e) => doc
            .notes
            .push(format!("{}: transactions not read: {e}", p.dir.display())),
    }
}

/// The offset ranges a salvage repair of `p` would lose (`None`, and a
/// note, when it cannot be planned).
fn salvage_lost(p: &Partition, point: i64, doc: &mut ReportDoc) -> Option<Vec<(i64, Option<i64>)>> {
    let opts = kaen_log::inspect::repair::RepairOptions {
        salvage: true,
        recovery_point: point,
        ..kaen_log::inspect::repair::RepairOptions::default()
    };
    match kaen_log::inspect::repair::plan_salvage(p, &opts) {
        Ok(plan) => plan
            .salvage
            .map(|s| s.lost.iter().map(|l| (l.from, l.to)).collect()),
        Err(e) => {
            doc.notes
                .push(format!("{}: no salvage plan: {e}", p.dir.display()));
            None
        }
    }
}

/// How the records of the segment at `path` decode: as the internal topic
/// its folder names, else as plain records.
fn layout_topic(path: &Path) -> kaen_log::inspect::layout::Topic {
    crate::cmd::args::layout_topic(crate::cmd::args::internal_topic(path))
}

impl crate::cmd::CommandEntry for ReportArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[
        (
            "klog report /var/lib/kafka/data -o report.html",
            "one page: the verdict, what needs attention, each partition's timeline and the lag",
        ),
        (
            "klog report data-1 data-2 data-3 -o cluster.html",
            "three brokers' log directories on one page, replicas side by side",
        ),
        (
            "klog report --layout DIR/orders-0/00000000000000000000.log -o layout.html",
            "a segment's bytes with every field named on hover",
        ),
    ];
    const SEE_ALSO: &'static [&'static str] =
        &["verify-crc", "lag", "cluster", "transactions", "brokers(7)"];
    const DETAILS: Option<&'static str> = None;

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        Vec::new()
    }
}
