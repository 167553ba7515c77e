//! `klog tombstone`: delete a group's committed offsets, or the whole
//! group, by appending tombstones.

use std::io::Write;
use std::path::PathBuf;

use anyhow::bail;
use kaen_log::format::{BatchSpec, NewRecord};
use kaen_log::offsets::group_state::live_members_refusal;
use kaen_log::offsets::share_delete::{self, SharePlan};
use kaen_log::offsets::write::Replicas;
use kaen_log::offsets::{group_tombstone_records, tombstone_records, DeletedKey, Replay};

use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::STREAM_TABLE;
use crate::report::table::escape_cell;
use crate::report::written::{Written, WriterReport, WrittenRows};
use crate::report::{emit, formats, Format, Output};

/// Delete a group's committed offsets offline: append a tombstone (the key
/// with a null value) for every live key of the group that matches, in one
/// batch, through the append path, into the offsets partition that owns the
/// group. Deleting is appending: the old commits stay in the log until
/// compaction, and a replay no longer shows them.
///
/// --delete-group deletes the whole group as the coordinator's DeleteGroups
/// does: every committed offset (and pending transactional one), then the
/// group's own records (classic GroupMetadata; a consumer, share or streams
/// group's member, assignment and epoch records, members first). A group
/// with members recorded is refused unless --force. For a share group it
/// first deletes the state of its share-partitions, as DeleteGroups does
/// (`GroupCoordinatorService.deleteShareGroups`, then the share
/// coordinator's `deleteState`): a ShareSnapshot tombstone, one batch each,
/// for every share-partition the group's ShareGroupStatePartitionMetadata
/// names that has state, in the partition of `__share_group_state` that
/// owns its key (`abs(hashCode("group:topicId:partition")) % partitions`).
///
/// Refuses (exit 1, nothing written) when nothing matches; refuses (exit 2)
/// when the directory lock is held or the offsets log has a damaged tail.
/// Several DIRs are the log directories of the partition's replicas: each
/// gets the same batch, and they must hold logs of the same length.
#[derive(Debug, clap::Args)]
pub struct TombstoneArgs {
    /// This broker's log directories (its log.dirs, JBOD included); other
    /// brokers' replicas with --replica DIR.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The consumer group whose committed offsets are deleted.
    #[arg(long, short = 'g')]
    pub group: String,
    /// Only this topic's offsets.
    #[arg(long, short = 't')]
    pub topic: Option<String>,
    /// Only this partition's offsets.
    #[arg(long, short = 'p')]
    pub partition: Option<i32>,
    /// Delete the whole group: its offsets and its group records.
    #[arg(long, conflicts_with_all = ["topic", "partition"])]
    pub delete_group: bool,
    /// With --delete-group: delete a group that has members recorded.
    #[arg(long, requires = "delete_group")]
    pub force: bool,
    /// Print what would be deleted; write nothing.
    #[arg(long)]
    pub dry_run: bool,
    /// The tombstones' timestamp (epoch ms or ISO-8601); default: now.
    #[arg(long, value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// Partitions of __consumer_offsets (offsets.topic.num.partitions), to
    /// place the group in a Kafka log directory. Taken from the KRaft
    /// metadata when the directory has it; without either, refused.
    #[arg(long)]
    pub offsets_partitions: Option<i32>,
    /// Partitions of __share_group_state
    /// (share.coordinator.state.topic.num.partitions), to place a share
    /// group's state with --delete-group. Taken from the KRaft metadata when
    /// the directory has it.
    #[arg(long, requires = "delete_group")]
    pub share_state_partitions: Option<i32>,
    /// Output format of what was written (or would be, with --dry-run).
    #[arg(long, value_parser = formats(STREAM_TABLE), default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub write: crate::cmd::args::WriteArgs,
    #[command(flatten)]
    pub replicas: crate::cmd::args::ReplicaArgs,
}

/// One tombstone written (or that would be, in a dry run).
#[derive(Serialize, JsonSchema)]
pub struct TombstoneRow {
    group: String,
    /// The record type whose key is deleted (`OffsetCommit`,
    /// `GroupMetadata`, `ConsumerGroupMemberMetadata`, `ShareSnapshot`, ...).
    record: String,
    /// The topic of an offset commit's or a share-partition state's key.
    topic: Option<String>,
    /// Its partition.
    partition: Option<i32>,
    /// The offset an offset commit's key held: the committed one, else the
    /// pending transactional commit's.
    committed_offset: Option<i64>,
    /// What the key names, as the text line says it (`orders-0 (was 15)`,
    /// a member id, `group G`, `share state of T-P`).
    deleted: String,
    /// The partition the tombstone went to (`__consumer_offsets-2`).
    log_partition: String,
    /// The offset it got there (would get, in a dry run).
    log_offset: i64,
    /// The text line (names escaped).
    #[serde(skip)]
    text: String,
}

/// Every tombstone written, in the order written: `klog tombstone`'s
/// document is a [`WriterReport`] of them.
#[derive(Serialize, JsonSchema)]
pub struct Tombstones {
    tombstones: Vec<TombstoneRow>,
}

pub type TombstoneReport = WriterReport<Tombstones>;

impl WrittenRows for Tombstones {
    const COMMAND: &'static str = "tombstone";
    type Row = TombstoneRow;

    fn rows(&self) -> &[TombstoneRow] {
        &self.tombstones
    }

    /// `deleted G T-P (was N): tombstone at __offsets-0 offset 14`.
    fn line(r: &TombstoneRow) -> String {
        r.text.clone()
    }
}

pub fn run(args: &TombstoneArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let now = args.now_ms.unwrap_or_else(crate::cmd::now_ms);
    let dirs = args
        .replicas
        .write_dirs(&args.dirs, &args.group, args.offsets_partitions)?;
    let mut replicas = Replicas::open(
        &dirs,
        &args.group,
        args.offsets_partitions,
        args.dry_run,
        true,
        args.replicas.policy(),
        &|dir, t, image| args.write.append_config(image, (dir, &t.topic), now, !args.dry_run),
    )?;
    let replay = replicas.replay()?;
    // A record that does not decode is said and passed over, as the
    // coordinator's loader would: it must not lock a group in for good.
    crate::cmd::replayed::say_not_replayed(
        &replay,
        Some("tombstoning the keys the rest of the log holds"),
    );
    let (keys, records) = deletions(args, &replay, now)?;
    // A share group's state goes first, as in DeleteGroups.
    let share = if args.delete_group {
        share_delete::plan(&replay, &args.group, &dirs, args.share_state_partitions)?
    } else {
        SharePlan::default()
    };
    for (s, why) in &share.left {
        crate::report::say!(
            "note: {} state of {}-{} left: {why}",
            s.group,
            s.topic,
            s.partition
        );
    }
    let target = replicas.target.clone();
    if keys.is_empty() {
        let what = if args.delete_group {
            "records of"
        } else {
            "live committed offsets match"
        };
        crate::report::say!(
            "no {what} group \"{}\" in {}-{}; nothing written",
            args.group,
            target.topic,
            target.partition
        );
        return Ok(Outcome::Findings(1));
    }
    let rows = Rows {
        args,
        offsets_partition: format!("{}-{}", target.topic, target.partition),
    };
    let mut report = TombstoneReport {
        group: args.group.clone(),
        executed: !args.dry_run,
        rows: Tombstones {
            tombstones: Vec::new(),
        },
        written: Vec::new(),
    };
    let mut share_targets = share_delete::targets(&share, &dirs, |d| replicas.lock(d))?;
    if args.dry_run {
        would_delete(
            &share,
            &mut share_targets,
            &keys,
            replicas.end,
            &rows,
            &mut report,
            out,
        )?;
        return finish(args, &report, out);
    }
    args.replicas.say_warning(&replicas);
    replicas.check_room(&records)?;
    let written_share = delete_share_states(&share, share_targets, &rows, now, &mut report, out)?;
    let (range, written) = replicas.append(&BatchSpec::default(), &records)?;
    replicas.close()?;
    let what = crate::report::plural(records.len() as u64, "tombstone", "tombstones");
    let written = Written::batch(&written, &rows.offsets_partition, &range);
    for w in &written {
        w.say(&what);
    }
    for (i, k) in keys.iter().enumerate() {
        let at = range.start() + i as i64;
        let text = format!(
            "deleted {}: tombstone at {} offset {at}",
            rows.label(k),
            rows.offsets_partition
        );
        report.push(rows.key_row(k, at, text), args, out)?;
    }
    report.written = written_share;
    report.written.extend(written);
    finish(args, &report, out)
}

/// What a dry run would write: each share-partition's tombstone and each
/// key's, at the offsets they would get (the offsets partition's from
/// `end`).
fn would_delete(
    share: &SharePlan,
    share_targets: &mut [share_delete::Target],
    keys: &[DeletedKey],
    end: i64,
    rows: &Rows<'_>,
    report: &mut TombstoneReport,
    out: &mut Output,
) -> anyhow::Result<()> {
    for d in &share.deletes {
        let t = share_targets
            .iter_mut()
            .find(|t| t.state_partition == d.state_partition);
        if let Some(t) = t {
            let text = format!(
                "would delete {}: ShareSnapshot tombstone to {} at offset {}",
                rows.share_label(d),
                share_partition(d),
                t.next_offset
            );
            report.push(rows.share_row(d, t.next_offset, text), rows.args, out)?;
            t.next_offset += 1;
        }
    }
    for (i, k) in keys.iter().enumerate() {
        let at = end + i as i64;
        let text = format!(
            "would delete {}: tombstone to {} at offset {at}",
            rows.label(k),
            rows.offsets_partition
        );
        report.push(rows.key_row(k, at, text), rows.args, out)?;
    }
    Ok(())
}

/// The keys to delete and their tombstones: the whole group's records
/// (--delete-group; a group with members recorded refused unless --force),
/// else its live committed offsets that match.
fn deletions(
    args: &TombstoneArgs,
    replay: &Replay,
    now: i64,
) -> anyhow::Result<(Vec<DeletedKey>, Vec<NewRecord>)> {
    if args.delete_group {
        if let Some(why) = live_members_refusal(replay, &args.group, "deletion") {
            if !args.force {
                bail!("{why}");
            }
            crate::report::say!("warning: --force: {why}");
        }
        return Ok(group_tombstone_records(replay, &args.group, now)
            .into_iter()
            .unzip());
    }
    Ok(tombstone_records(
        replay,
        &args.group,
        args.topic.as_deref(),
        args.partition,
        now,
    )
    .into_iter()
    .map(|((t, p), r)| {
        let was = replay.get(&args.group, &t, p).map_or(0, |c| c.offset);
        let key = DeletedKey {
            record: "OffsetCommit".into(),
            what: format!("{t}-{p} (was {was})"),
            topic_partition: Some((t, p)),
            offset: Some(was),
        };
        (key, r)
    })
    .unzip())
}

/// `ShareCoordinatorShard.deleteState`: one write, so one batch, per
/// share-partition; each row reported as soon as its batch is written.
/// The batches written.
fn delete_share_states(
    share: &SharePlan,
    mut share_targets: Vec<share_delete::Target>,
    rows: &Rows<'_>,
    now: i64,
    report: &mut TombstoneReport,
    out: &mut Output,
) -> anyhow::Result<Vec<Written>> {
    let mut written_share = Vec::new();
    for d in &share.deletes {
        let Some(t) = share_targets
            .iter_mut()
            .find(|t| t.state_partition == d.state_partition)
        else {
            continue;
        };
        let range = t.append(&[share_delete::tombstone(d, now)])?;
        let text = format!(
            "deleted {}: ShareSnapshot tombstone at {} offset {}",
            rows.share_label(d),
            share_partition(d),
            range.start()
        );
        report.push(rows.share_row(d, *range.start(), text), rows.args, out)?;
        written_share.extend(Written::batch(&t.folders, &share_partition(d), &range));
    }
    for t in share_targets {
        t.close()?;
    }
    Ok(written_share)
}

impl TombstoneReport {
    /// Add a row; text is printed as it is written (a share-partition's
    /// line as soon as its batch is).
    fn push(
        &mut self,
        row: TombstoneRow,
        args: &TombstoneArgs,
        out: &mut Output,
    ) -> anyhow::Result<()> {
        if args.format == Format::Text {
            writeln!(out, "{}", row.text)?;
        }
        self.rows.tombstones.push(row);
        Ok(())
    }
}

/// `share state of topic-partition`.
fn share_what(d: &share_delete::StateDelete) -> String {
    format!("share state of {}-{}", d.topic, d.partition)
}

/// The `__share_group_state` partition that owns `d`'s key.
fn share_partition(d: &share_delete::StateDelete) -> String {
    format!(
        "{}-{}",
        kaen_log::offsets::records::SHARE_GROUP_STATE_TOPIC,
        d.state_partition
    )
}

/// The report's rows of one group, and the labels its text lines give
/// them.
struct Rows<'a> {
    args: &'a TombstoneArgs,
    /// The offsets partition written to: `topic-partition`.
    offsets_partition: String,
}

impl Rows<'_> {
    /// A deleted key as a text line names it. Topic names and member ids
    /// come from the log: escaped before they reach a terminal.
    fn label(&self, k: &DeletedKey) -> String {
        let text = if self.args.delete_group {
            format!("{} {} {}", self.args.group, k.record, k.what)
        } else {
            format!("{} {}", self.args.group, k.what)
        };
        escape_cell(&text).into_owned()
    }

    /// A share-partition's state as a text line names it (escaped).
    fn share_label(&self, d: &share_delete::StateDelete) -> String {
        escape_cell(&format!("{} {}", self.args.group, share_what(d))).into_owned()
    }

    /// The row of a share-partition's tombstone at offset `at`.
    fn share_row(&self, d: &share_delete::StateDelete, at: i64, text: String) -> TombstoneRow {
        TombstoneRow {
            group: self.args.group.clone(),
            record: "ShareSnapshot".into(),
            topic: Some(d.topic.clone()),
            partition: Some(d.partition),
            committed_offset: None,
            deleted: share_what(d),
            log_partition: share_partition(d),
            log_offset: at,
            text,
        }
    }

    /// The row of a key's tombstone at offset `at`.
    fn key_row(&self, k: &DeletedKey, at: i64, text: String) -> TombstoneRow {
        TombstoneRow {
            group: self.args.group.clone(),
            record: k.record.clone(),
            topic: k.topic_partition.as_ref().map(|(t, _)| t.clone()),
            partition: k.topic_partition.as_ref().map(|(_, p)| *p),
            committed_offset: k.offset,
            deleted: k.what.clone(),
            log_partition: self.offsets_partition.clone(),
            log_offset: at,
            text,
        }
    }
}

/// The document in a format other than text (whose lines are printed as
/// they are written).
fn finish(
    args: &TombstoneArgs,
    report: &TombstoneReport,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    if args.format != Format::Text {
        emit(report, args.format, out)?;
    }
    Ok(Outcome::Clean)
}

impl crate::cmd::CommandEntry for TombstoneArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog tombstone --group old-app --dry-run DIR",
        "the keys a tombstone run would delete",
    )];
    const SEE_ALSO: &'static [&'static str] =
        &["commit", "reset-offsets", "replay-offsets", "writers(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/tombstone.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<TombstoneReport>()]
    }
}
