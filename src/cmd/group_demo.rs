//! `klog group-demo`: a consumer's two numbers, run for real.

use std::path::PathBuf;

use kaen_log::demo::delivery::Workspace;
use kaen_log::demo::group_run::{self, DeliveryOut, GroupDemo};

use crate::exit::Outcome;
use crate::report::demo_document::DemoReport;
use crate::report::document::TABLE;
use crate::report::table::{cell, Column};
use crate::report::{emit, formats, Format, Output, Report, Table};

/// A teaching walk-through of a consumer's two numbers: the position it
/// holds in memory and the committed offset on disk. Everything runs for
/// real in DIR through the append path and the replay the other commands
/// use: at-least-once and at-most-once delivery around a crash, the orders
/// log beside the offsets log, three groups on one offsets log, a tombstone,
/// and generation fencing.
///
/// DIR must be new or hold only what an earlier `group-demo --keep` left,
/// unchanged (a kept run records each file it leaves with its size; once
/// one changed, the demo refuses rather than remove data that may be
/// yours); the demo removes its own folders before and after the run
/// unless --keep.
#[derive(Debug, clap::Args)]
pub struct GroupDemoArgs {
    /// The demo's data directory.
    #[arg(long)]
    pub dir: PathBuf,
    /// The consumer group.
    #[arg(long, default_value = "kitchen")]
    pub group: String,
    /// The consumer crashes right after processing this many records.
    #[arg(long, default_value_t = 12, value_parser = clap::value_parser!(u32).range(1..20))]
    pub crash_after: u32,
    /// Records per poll.
    #[arg(long, default_value_t = 5, value_parser = clap::value_parser!(u32).range(1..=20))]
    pub poll_size: u32,
    /// The time stamped on records and commits (epoch ms or ISO-8601).
    #[arg(long, default_value_t = 1_700_000_000_000, value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: i64,
    /// Leave the data directory in place and print commands to explore it.
    #[arg(long)]
    pub keep: bool,
    /// Output format. JSON is every step and figure of the run; CSV one
    /// row per poll of the two deliveries (`delivery`, then the poll's
    /// JSON fields).
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
}

/// Written first into the demo's directory: only a directory carrying it
/// (and holding nothing but what the demo writes) is ever cleared.
const MARKER: &str = ".klog-group-demo";

pub fn run(args: &GroupDemoArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let ws = Workspace::prepare(
        &args.dir,
        "group-demo",
        MARKER,
        &["orders-0", "__offsets-0"],
    )?;
    let opts = group_run::Options {
        group: &args.group,
        poll_size: args.poll_size,
        crash_after: args.crash_after,
        now_ms: args.now_ms,
    };
    let run = ws.close(args.keep, group_run::run(&args.dir, &opts))?;
    let d = args.dir.display();
    let explore = if args.keep {
        vec![
            format!("klog dump-segment --records {d}/orders-0"),
            format!("klog dump-segment --records {d}/__offsets-0"),
            format!("klog replay-offsets --history {d}"),
            format!("klog lag {d}"),
        ]
    } else {
        Vec::new()
    };
    let report = DemoReport {
        data_dir: d.to_string(),
        run,
        explore,
    };
    emit(&report, args.format, out)?;
    Ok(Outcome::Clean)
}

/// `klog group-demo`'s document: every step and figure of the run.
pub type GroupDemoReport = DemoReport<GroupDemo>;

impl Report for GroupDemoReport {
    const COMMAND: &'static str = "group-demo";

    fn tables(&self) -> Vec<Table> {
        Vec::new()
    }

    /// One row per poll of both deliveries.
    fn csv_table(&self) -> Option<Table> {
        // A poll's delivery, then the poll's JSON fields.
        let (deliveries, polls): (Vec<_>, Vec<_>) = self
            .run
            .deliveries
            .iter()
            .flat_map(|d| d.polls.iter().map(move |p| (d, p)))
            .unzip();
        let delivery = Column::text("delivery", |d: &&DeliveryOut| cell(d.delivery));
        Some(Table::listed(deliveries, &[delivery]).beside(Table::flat(&polls)))
    }

    /// The walk-through; with --keep, the commands to explore what is left.
    fn text(&self, _fit: crate::report::table::Fit) -> String {
        let mut text = crate::report::group_walkthrough::text(&self.data_dir, &self.run);
        text.push_str(&self.explore_text());
        text
    }
}

impl crate::cmd::CommandEntry for GroupDemoArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog group-demo --dir /tmp/demo --keep",
        "a consumer group's two numbers, done on disk",
    )];
    const SEE_ALSO: &'static [&'static str] = &["produce", "lag", "eos-demo"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/group-demo.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<GroupDemoReport>()]
    }
}
