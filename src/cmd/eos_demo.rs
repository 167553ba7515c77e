//! `klog eos-demo`: idempotence, transactions and fencing, done on disk.

use std::path::PathBuf;

use kaen_log::demo::delivery::Workspace;
use kaen_log::demo::eos::{self, CrashPoint, EosDemo, Options};
use kaen_log::txn::coordinator::TransactionVersion;

use crate::exit::Outcome;
use crate::report::demo_document::DemoReport;
use crate::report::document::TABLE;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// A teaching walk-through of what "exactly once" leaves on disk, done for
/// real in DIR.
///
/// An idempotent producer's retries, gaps and fenced epochs
/// against the leader's producer rules, with the producer snapshot it
/// leaves, byte by byte; a consume-transform-produce loop that writes
/// invoices and commits its offsets in one transaction, crashing at each
/// step (what read_committed and read_uncommitted consumers see, the last
/// stable offset, the aborted transactions of the .txnindex, the offset the
/// restarted application resumes from); a zombie instance fenced by a
/// newer one; and the same faults under at-least-once, idempotent and
/// transactional delivery. Every write goes through the append path, every
/// figure is read back with klog's own readers and checked.
///
/// The cluster runs transaction version 2 (Kafka 4.x's default, KIP-890):
/// every commit and abort bumps the producer's epoch and the markers carry
/// the bumped epoch. --transaction-version 1 runs the classic protocol,
/// where only InitProducerId moves the epoch.
///
/// DIR must be new or hold only what an earlier `eos-demo --keep` left,
/// unchanged; the demo removes what it wrote unless --keep.
#[derive(Debug, clap::Args)]
pub struct EosDemoArgs {
    /// The demo's data directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// Crash the application only at STEP (default: at each step in turn,
    /// one crash per attempt at the first transaction).
    #[arg(long, value_enum, value_name = "STEP")]
    pub crash_at: Option<Step>,
    /// The time stamped on the first request (ms); each request takes the next millisecond.
    #[arg(long, default_value_t = 1_700_000_000_000, value_parser = clap::value_parser!(i64).range(0..))]
    pub now_ms: i64,
    /// The cluster's transaction.version: 2 (the default, as Kafka 4.x's
    /// TransactionVersion.LATEST_PRODUCTION) or 1.
    #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(i16).range(1..=2))]
    pub transaction_version: i16,
    /// Leave the data directory in place and print commands to explore it.
    #[arg(long)]
    pub keep: bool,
    /// Output format. CSV is the comparison of the three guarantees, one
    /// row per guarantee: the JSON document's `comparison`.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
}

/// Where the application crashes (`--crash-at`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Step {
    /// After polling, before sending an invoice.
    BeforeProduce,
    /// After the invoices were appended, before the offsets were sent.
    AfterProduce,
    /// After the offset commit was written, before commitTransaction.
    AfterOffsets,
    /// After the COMMIT markers.
    AfterMarker,
}

impl From<Step> for CrashPoint {
    fn from(s: Step) -> Self {
        match s {
            Step::BeforeProduce => CrashPoint::BeforeProduce,
            Step::AfterProduce => CrashPoint::AfterProduce,
            Step::AfterOffsets => CrashPoint::AfterOffsets,
            Step::AfterMarker => CrashPoint::AfterMarker,
        }
    }
}

/// Written first into the demo's directory: only a directory carrying it
/// (and holding nothing but what the demo writes) is ever cleared.
const MARKER: &str = ".klog-eos-demo";
/// Orders in the input topic, and orders per poll (one transaction each).
const ORDERS: usize = 12;
const POLL_SIZE: usize = 4;

pub fn run(args: &EosDemoArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let folders = eos::folders();
    let names: Vec<&str> = folders.iter().map(String::as_str).collect();
    let ws = Workspace::prepare(&args.dir, "eos-demo", MARKER, &names)?;
    let opts = Options {
        now_ms: args.now_ms,
        orders: ORDERS,
        poll_size: POLL_SIZE,
        crash_points: match args.crash_at {
            Some(s) => vec![s.into()],
            None => CrashPoint::ALL.to_vec(),
        },
        transaction_version: if args.transaction_version == 1 {
            TransactionVersion::V1
        } else {
            TransactionVersion::V2
        },
    };
    let run = ws.close(args.keep, eos::run(&args.dir, &opts))?;
    let d = args.dir.display().to_string();
    let explore = if args.keep {
        vec![
            format!("klog transactions {d}"),
            format!(
                "klog dump-segment --layout {d}/{}",
                run.idempotence.snapshot_file
            ),
            format!("klog dump-segment --layout {d}/invoices-0/00000000000000000000.txnindex"),
            format!("klog dump-segment --records --isolation read-committed {d}/invoices-0"),
            format!("klog dump-segment --records {d}/__transaction_state-0"),
            format!("klog replay-offsets --history {d}"),
        ]
    } else {
        Vec::new()
    };
    let report = DemoReport {
        data_dir: d,
        run,
        explore,
    };
    emit(&report, args.format, out)?;
    Ok(Outcome::Clean)
}

/// `klog eos-demo`'s document: every step and figure of the run.
pub type EosDemoReport = DemoReport<EosDemo>;

impl Report for EosDemoReport {
    const COMMAND: &'static str = "eos-demo";

    fn tables(&self) -> Vec<Table> {
        vec![Table::of(&self.run.comparison)]
    }

    /// The comparison of the guarantees, whatever the text shows.
    fn csv_table(&self) -> Option<Table> {
        Some(Table::flat(&self.run.comparison))
    }

    fn text(&self, fit: crate::report::table::Fit) -> String {
        let mut text = crate::report::eos_walkthrough::text(&self.data_dir, &self.run, fit);
        text.push_str(&self.explore_text());
        text
    }
}

impl crate::cmd::CommandEntry for EosDemoArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[
        (
            "klog eos-demo --dir /tmp/eos --keep",
            "idempotence, transactions and fencing, done on disk",
        ),
        (
            "klog eos-demo --dir /tmp/eos --crash-at after-offsets",
            "one crash: the offset commit aborted with the invoices",
        ),
    ];
    const SEE_ALSO: &'static [&'static str] = &["transactions", "dump-segment", "group-demo"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/eos-demo.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<EosDemoReport>()]
    }
}
