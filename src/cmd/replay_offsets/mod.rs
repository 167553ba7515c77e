//! `klog replay-offsets`: rebuild the committed-offset table from the offsets topic.

use std::collections::BTreeMap;
use std::path::PathBuf;

use kaen_log::format::time::{parse_when, When};
use kaen_log::offsets::group_state;
use kaen_log::offsets::replay::{AsOf, Incomplete, Replay};
use kaen_log::offsets::standing::Judge;
use kaen_log::offsets::ReplayOptions;

use kaen_log::log::findings::Finding;
use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::STREAM_TABLE;
use crate::report::progress::Progress;
use crate::report::TimeFormat;
use crate::report::{emit, formats, Format, Jsonl, Output, Report, Table};

mod replay_document;
pub use replay_document::*;

/// Replay the offsets topic (`__offsets` in a klog data directory,
/// `__consumer_offsets` in a Kafka log directory) in log order and print
/// the committed offset of every (group, topic, partition), sorted by group,
/// topic, partition. The offset is the next record the group will read.
///
/// Tombstones delete keys (and cancel the key in open transactions);
/// transactional commits count only once their producer's COMMIT marker
/// follows, and only if no later commit of the key was stored by then
/// (aborted ones are dropped, open ones are shown as pending). Commits inside
/// legacy compressed wrappers are replayed. A record that does not decode,
/// or whose value version Kafka does not read (its coordinator fails to load
/// the partition on it), is reported on stderr with its partition, offset and
/// byte position and skipped; the table is then incomplete (stderr says so
/// in text and CSV, the document's `incomplete` list in JSON) and the exit
/// code 1. What the broker loads but is unusual (a negative committed
/// offset, bytes after a key or value) is a warning on stderr.
///
/// STATUS: ok; topic_recreated (an OffsetCommitValue v4 whose topic id is not
/// the topic's current id, from the KRaft metadata or partition.metadata:
/// kafka-consumer-groups and a classic consumer fetch it by name and see
/// it, a KIP-848 consumer fetches by topic id and gets none; stderr says
/// so); expired (past
/// --offsets-retention-minutes at --now-ms, as Kafka counts it: the
/// coordinator removes it at its next expiration check). An OffsetCommitValue
/// v1's expireTimestamp (expire_timestamp_ms in JSON and CSV) then decides
/// expiry; -1 means none (null), and the retention counts from the commit
/// timestamp, or from an Empty classic group's state time when it has one.
#[derive(Debug, clap::Args)]
pub struct ReplayOffsetsArgs {
    /// Data directories (several: the log directories of one broker, or of
    /// several brokers of one cluster).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Only this group.
    #[arg(long)]
    pub group: Option<String>,
    /// Only this topic.
    #[arg(long)]
    pub topic: Option<String>,
    /// List every commit and tombstone of the selected keys in log order.
    #[arg(long)]
    pub history: bool,
    /// Replay only up to a point: `offset:N` (records below offset N of each
    /// offsets partition), `time:T` (records stamped at or before T, epoch ms
    /// or ISO-8601 such as 2023-11-14T22:13:20Z, or now less a duration:
    /// now-P1D against --now-ms or the clock), a bare number (an offset
    /// below 10^11, else a timestamp in ms), or a bare ISO-8601 date-time.
    #[arg(long, value_parser = parse_as_of)]
    pub as_of: Option<AsOfArg>,
    /// Output format: text (the table on stdout, the summary on stderr),
    /// json (one document), jsonl (one object per line) or csv.
    #[arg(long, value_parser = formats(STREAM_TABLE), default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub retention: crate::cmd::args::RetentionArgs,
    /// `plain`: read every record with the schema tables' decoders alone,
    /// without the fast paths of plain offset commits (the way the bench
    /// times them against). The output is the same whichever.
    #[arg(long, value_enum, default_value = "auto", hide = true)]
    pub decoders: crate::cmd::args::ReadsArg,
}

/// `--as-of`: an offset, or a time (which may be a duration before now).
#[derive(Debug, Clone, Copy)]
pub enum AsOfArg {
    Offset(i64),
    Time(When),
}

impl AsOfArg {
    /// The replay's [`AsOf`], with `now_ms` as now.
    fn at(self, now_ms: i64) -> AsOf {
        match self {
            AsOfArg::Offset(n) => AsOf::Offset(n),
            AsOfArg::Time(w) => AsOf::Timestamp(w.at(now_ms)),
        }
    }
}

fn parse_as_of(s: &str) -> Result<AsOfArg, String> {
    if let Some(v) = s.strip_prefix("offset:") {
        return v
            .parse::<i64>()
            .map(AsOfArg::Offset)
            .map_err(|_| format!("{v:?} is not an offset"));
    }
    if let Some(v) = s.strip_prefix("time:") {
        return parse_when(v).map(AsOfArg::Time);
    }
    Ok(match s.parse::<i64>() {
        Ok(n) if n < 100_000_000_000 => AsOfArg::Offset(n),
        Ok(n) => AsOfArg::Time(When::At(n)),
        Err(_) => AsOfArg::Time(parse_when(s)?),
    })
}

pub fn run(args: &ReplayOffsetsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let progress = Progress::spinner(out.shows_progress(args.format == Format::Text));
    let opts = ReplayOptions {
        as_of: args
            .as_of
            .map(|a| a.at(args.retention.now_ms.unwrap_or_else(crate::cmd::now_ms))),
        history: args.history,
        group: args.group.clone(),
        topic: args.topic.clone(),
        meter: Progress::meter_of(&progress),
        plain_decoders: args.decoders == crate::cmd::args::ReadsArg::Plain,
        ..ReplayOptions::default()
    };
    let (dirs, replay, topic) = crate::cmd::replayed::replay_dirs(&args.dirs, opts)?;
    drop(progress);
    let views = group_state::groups(
        &replay,
        &group_state::topic_names(&dirs),
        group_state::Loader::of(&dirs),
    );
    let topic_ids = group_state::topic_ids(&dirs);
    let judge = Judge::new(
        &replay,
        &views,
        &topic_ids,
        Some(args.retention.retention()),
    );
    let report = ReplayReport::new(&replay, args, topic, &judge, out.time_format());
    emit(&report, args.format, out)?;
    Ok(Outcome::from_count(replay.bad_count))
}

impl crate::cmd::CommandEntry for ReplayOffsetsArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[
        (
            "klog replay-offsets DIR",
            "the committed-offset table on stdout, the summary on stderr",
        ),
        (
            "klog replay-offsets --group billing --history DIR",
            "every commit of one group in log order",
        ),
        (
            "klog replay-offsets --as-of time:1700000000000 DIR",
            "the table as it was at that time",
        ),
    ];
    const SEE_ALSO: &'static [&'static str] = &["lag", "groups", "commit", "tombstone"];
    const DETAILS: Option<&'static str> = Some(include_str!("../generate/pages/replay-offsets.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<ReplayReport>()]
    }
}
