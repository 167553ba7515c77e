//! `klog reset-offsets`: move a group's committed offsets offline, as
//! `kafka-consumer-groups --reset-offsets` does online.

use std::io::Write;
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::ArgGroup;
use kaen_log::format::{BatchSpec, DecodeLimits};
use kaen_log::inspect::reset::{self, Catalog, PlanRow, Spec};
use kaen_log::offsets::group_state::live_members_refusal;
use kaen_log::offsets::write::Replicas;
use kaen_log::offsets::{commit_record, CommitFormat};
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::written::Written;
use crate::report::Output;
use crate::report::{emit, formats, Format, Report, Table};
use schemars::JsonSchema;

/// Reset a consumer group's committed offsets offline, with the rules of
/// `kafka-consumer-groups --reset-offsets`: the partitions (--topic T,
/// --topic T:0,2, --all-topics = the partitions the group has committed
/// offsets for, or a --from-file plan), one SPEC for the new offsets, a dry
/// run unless --execute.
///
/// --to-latest is the high watermark (what ListOffsets answers); --to-offset,
/// --shift-by and a plan are clamped into [log start, high watermark] with a
/// note; --to-datetime and --by-duration take the first offset stamped at or
/// after the time (the time index, then the batches), falling back to the
/// latest offset when there is none. Unknown topics and partitions (by the
/// KRaft metadata, else the partition folders) are refused, and so is a
/// group with members recorded unless --force: a running consumer would
/// overwrite the reset with its next commit.
///
/// --execute appends one batch of offset commits (key type 1, leader epoch
/// -1; value v4 with the topic's id when the KRaft metadata.version is
/// 4.1-IV0 or later, else v3, as the coordinator of that release writes) to
/// the group's offsets partition in
/// every DIR (the log directories of its replicas), after locking and
/// checking every one of them.
#[derive(Debug, clap::Args)]
#[command(
    group(ArgGroup::new("scope").required(true).args(["topic", "all_topics", "from_file"])),
    group(ArgGroup::new("spec").required(true).args([
        "to_earliest", "to_latest", "to_current", "to_offset", "shift_by",
        "to_datetime", "by_duration", "from_file",
    ])),
)]
pub struct ResetOffsetsArgs {
    /// This broker's log directories (its log.dirs, JBOD included), also
    /// read for the partitions' ends; other brokers' replicas with
    /// --replica DIR.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The consumer group.
    #[arg(long, short = 'g')]
    pub group: String,
    /// A topic (every partition) or `topic:0,1,2`; repeatable.
    #[arg(long, short = 't')]
    pub topic: Vec<String>,
    /// Every partition the group has a committed offset for.
    #[arg(long)]
    pub all_topics: bool,
    /// To the log start offset.
    #[arg(long)]
    pub to_earliest: bool,
    /// To the high watermark (the log end offset without a checkpoint).
    #[arg(long)]
    pub to_latest: bool,
    /// To the committed offset (the latest where there is none).
    #[arg(long)]
    pub to_current: bool,
    /// To this offset (clamped into the log).
    #[arg(long, allow_negative_numbers = true)]
    pub to_offset: Option<i64>,
    /// By this many offsets from the committed one (clamped).
    #[arg(long, allow_negative_numbers = true)]
    pub shift_by: Option<i64>,
    /// To the first offset stamped at or after this time (ISO-8601 such as
    /// 2026-01-30T17:00:00Z or with ±hh:mm; epoch ms; or now less a
    /// duration, now-PT2H).
    #[arg(long, value_parser = kaen_log::format::time::parse_when)]
    pub to_datetime: Option<kaen_log::format::time::When>,
    /// To the first offset stamped at or after now minus this ISO-8601
    /// duration (P1DT2H, PT30M).
    #[arg(long, value_parser = kaen_log::format::time::parse_duration_ms)]
    pub by_duration: Option<i64>,
    /// To the offsets of a plan in `kafka-consumer-groups --export` CSV
    /// (topic,partition,offset; or group,topic,partition,offset; fields
    /// quoted as CSV quotes them; at most 128 KiB a line and a million rows).
    #[arg(long)]
    pub from_file: Option<PathBuf>,
    /// Write the new offsets (without it: a dry run that prints the plan).
    #[arg(long)]
    pub execute: bool,
    /// Print the plan and write nothing (the default; Kafka's spelling).
    #[arg(long, conflicts_with = "execute")]
    pub dry_run: bool,
    /// Print the plan as `kafka-consumer-groups --export` CSV.
    #[arg(long)]
    pub export: bool,
    /// Reset a group that has members recorded.
    #[arg(long)]
    pub force: bool,
    /// "Now" (epoch ms or ISO-8601): the commits' timestamp and the end of
    /// --by-duration; default: now.
    #[arg(long, value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// Partitions of __consumer_offsets (offsets.topic.num.partitions), to
    /// place the group in a Kafka log directory. Taken from the KRaft
    /// metadata when the directory has it; without either, refused.
    #[arg(long)]
    pub offsets_partitions: Option<i32>,
    /// Output format of the plan.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub write: crate::cmd::args::WriteArgs,
    #[command(flatten)]
    pub replicas: crate::cmd::args::ReplicaArgs,
}

/// One partition of the plan, as JSON shows it.
#[derive(Serialize, JsonSchema)]
struct Row<'a> {
    group: &'a str,
    topic: &'a str,
    partition: i32,
    committed_offset: Option<i64>,
    new_offset: i64,
    log_start_offset: i64,
    high_watermark: Option<i64>,
    log_end_offset: i64,
    lag_after: i64,
    note: Option<&'a str>,
    /// The partition the commit goes to (`__consumer_offsets-8`).
    log_partition: &'a str,
    /// The offset the commit got there; null in a dry run.
    log_offset: Option<i64>,
}

/// `klog reset-offsets`'s document: the plan (and what was written).
#[derive(Serialize, JsonSchema)]
pub struct ResetReport<'a> {
    group: &'a str,
    /// The offsets partition written (or that would be).
    offsets_partition: String,
    executed: bool,
    /// The offsets the commits got, when executed.
    log_offsets: Option<(i64, i64)>,
    partitions: Vec<Row<'a>>,
    /// The batch each replica's partition folder got (empty in a dry run).
    written: Vec<Written>,
}

pub fn run(args: &ResetOffsetsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let now = args.now_ms.unwrap_or_else(crate::cmd::now_ms);
    let spec = spec(args, now)?;
    let dirs = args
        .replicas
        .write_dirs(&args.dirs, &args.group, args.offsets_partitions)?;
    let mut replicas = Replicas::open(
        &dirs,
        &args.group,
        args.offsets_partitions,
        !args.execute,
        false,
        args.replicas.policy(),
        &|dir, t, image| args.write.append_config(image, (dir, &t.topic), now, args.execute),
    )?;
    let replay = replicas.replay()?;
    crate::cmd::replayed::say_not_replayed(
        &replay,
        Some("the current offsets are those the rest of the log holds"),
    );
    let catalog = Catalog::open(&args.dirs)?;
    let partitions = scope(args, &catalog, &replay)?;
    let rows = reset::plan(
        &catalog,
        &replay,
        &args.group,
        &partitions,
        &spec,
        DecodeLimits::default(),
    )?;
    // As lag and groups: a group the offsets topic does not know is a bad
    // argument (exit 2), where an existing group with nothing in scope is
    // a finding (exit 1).
    if rows.is_empty() && !replay.knows_group(&args.group) {
        bail!("group {:?}: group does not exist", args.group);
    }
    if rows.is_empty() {
        crate::report::say!(
            "nothing to reset: no partition in scope for group {:?}",
            args.group
        );
        return Ok(Outcome::Findings(1));
    }
    if let Some(why) = live_members_refusal(&replay, &args.group, "reset") {
        if !args.force {
            bail!("{why}");
        }
        crate::report::say!("warning: --force: {why}");
    }
    for note in rows.iter().filter_map(|r| r.note.as_deref()) {
        crate::report::say!("note: {note}");
    }
    let mut written = None;
    if args.execute {
        let mut ids = std::collections::BTreeMap::new();
        for r in &rows {
            if !ids.contains_key(&r.topic) {
                ids.insert(
                    r.topic.clone(),
                    kaen_log::offsets::commit_format(&args.dirs, &r.topic)?,
                );
            }
        }
        let records: Vec<_> = rows
            .iter()
            .map(|r| {
                commit_record(
                    &args.group,
                    &r.topic,
                    r.partition,
                    r.new_offset.max(0) as u64,
                    -1,
                    "",
                    now,
                    ids.get(&r.topic).copied().unwrap_or(CommitFormat::V3),
                )
            })
            .collect();
        args.replicas.say_warning(&replicas);
        replicas.check_room(&records)?;
        let (range, dirs) = replicas.append(&BatchSpec::default(), &records)?;
        let log_partition = format!("{}-{}", replicas.target.topic, replicas.target.partition);
        let batches = Written::batch(&dirs, &log_partition, &range);
        for w in &batches {
            w.say(&crate::report::plural(
                records.len() as u64,
                "offset commit",
                "offset commits",
            ));
        }
        replicas.close()?;
        written = Some((range, batches));
    } else {
        crate::report::say!("dry run: nothing written (--execute writes these offsets)");
    }
    print(args, &replicas, &rows, written, out)?;
    Ok(Outcome::Clean)
}

fn spec(args: &ResetOffsetsArgs, now: i64) -> anyhow::Result<Spec> {
    Ok(if args.to_earliest {
        Spec::Earliest
    } else if args.to_latest {
        Spec::Latest
    } else if args.to_current {
        Spec::Current
    } else if let Some(n) = args.to_offset {
        Spec::Offset(n)
    } else if let Some(n) = args.shift_by {
        Spec::ShiftBy(n)
    } else if let Some(t) = args.to_datetime {
        Spec::Datetime(t.at(now))
    } else if let Some(d) = args.by_duration {
        Spec::Datetime(now.saturating_sub(d))
    } else if let Some(path) = &args.from_file {
        let file = std::fs::File::open(path).with_context(|| format!("open {}", path.display()))?;
        Spec::Plan(reset::read_plan(file, &args.group, path)?)
    } else {
        bail!("give one of --to-earliest, --to-latest, --to-current, --to-offset, --shift-by, --to-datetime, --by-duration, --from-file")
    })
}

/// The partitions to reset: every --topic (all its partitions, or those
/// listed), or with --all-topics those the group has committed offsets for.
fn scope(
    args: &ResetOffsetsArgs,
    catalog: &Catalog,
    replay: &kaen_log::offsets::Replay,
) -> anyhow::Result<Vec<(String, i32)>> {
    let mut out = Vec::new();
    if args.all_topics {
        for (g, t, p, _) in replay.commits() {
            if g == args.group {
                out.push((t.to_string(), p));
            }
        }
        return Ok(out);
    }
    for arg in &args.topic {
        match arg.split_once(':') {
            None => {
                for p in catalog.partitions_of(arg)? {
                    out.push((arg.clone(), p));
                }
            }
            Some((t, list)) => {
                for p in list.split(',') {
                    let p: i32 = p.trim().parse().with_context(|| {
                        format!("invalid partition {p:?} in --topic {arg:?} (expected topic:0,1,2)")
                    })?;
                    catalog.check(t, p)?;
                    out.push((t.to_string(), p));
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

fn print(
    args: &ResetOffsetsArgs,
    replicas: &Replicas,
    rows: &[PlanRow],
    written: Option<(std::ops::RangeInclusive<i64>, Vec<Written>)>,
    out: &mut Output,
) -> anyhow::Result<()> {
    if args.export {
        out.write_all(reset::export_csv(rows, out.csv_cells()).as_bytes())?;
        return Ok(());
    }
    let offsets_partition = format!("{}-{}", replicas.target.topic, replicas.target.partition);
    // The batch's records are the rows, in order.
    let first = written.as_ref().map(|(range, _)| *range.start());
    let doc = ResetReport {
        group: &args.group,
        offsets_partition: offsets_partition.clone(),
        executed: written.is_some(),
        log_offsets: written
            .as_ref()
            .map(|(range, _)| (*range.start(), *range.end())),
        partitions: rows
            .iter()
            .enumerate()
            .map(|(i, r)| Row {
                group: &args.group,
                topic: &r.topic,
                partition: r.partition,
                committed_offset: r.current,
                new_offset: r.new_offset,
                log_start_offset: r.log_start,
                high_watermark: r.high_watermark,
                log_end_offset: r.log_end,
                lag_after: r.lag_after,
                note: r.note.as_deref(),
                log_partition: &offsets_partition,
                log_offset: first.map(|f| f + i as i64),
            })
            .collect(),
        written: written.map(|(_, w)| w).unwrap_or_default(),
    };
    emit(&doc, args.format, out)?;
    Ok(())
}

impl Report for ResetReport<'_> {
    const COMMAND: &'static str = "reset-offsets";

    /// kafka-consumer-groups' plan columns, CURRENT-OFFSET being the
    /// committed offset (null when the group has none for the partition);
    /// executed, the CSV adds where each commit went.
    fn tables(&self) -> Vec<Table> {
        let mut columns = vec![
            "group",
            "topic",
            "partition",
            "committed_offset",
            "new_offset",
            "lag_after",
        ];
        if self.executed {
            columns.extend(["log_partition", "log_offset"]);
        }
        vec![Table::of(&self.partitions)
            .only(&columns)
            .header("committed_offset", "CURRENT-OFFSET")]
    }

    /// The plan (what was written is on stderr).
    fn text(&self, fit: crate::report::table::Fit) -> String {
        Table::of(&self.partitions)
            .only(&[
                "group",
                "topic",
                "partition",
                "committed_offset",
                "new_offset",
                "lag_after",
            ])
            .header("committed_offset", "CURRENT-OFFSET")
            .render(fit)
    }
}

impl crate::cmd::CommandEntry for ResetOffsetsArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[
        ("klog reset-offsets DIR --group billing --topic orders --to-datetime 2026-01-30T17:00:00Z", "the plan (a dry run): each partition's current and new offset"),
        ("klog reset-offsets DIR --group billing --all-topics --to-latest --execute", "append the commits through the append path"),
        ("klog reset-offsets DIR --group billing --all-topics --shift-by -100 --export > plan.csv", "kafka-consumer-groups' CSV, to review and replay with --from-file"),
    ];
    const SEE_ALSO: &'static [&'static str] =
        &["commit", "tombstone", "lag", "writers(7)", "crash(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/reset-offsets.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<ResetReport<'static>>()]
    }
}
