//! `klog groups`: every group of the offsets topic, whatever its protocol.

use std::path::PathBuf;

use kaen_log::inspect::consumer_lag;
use kaen_log::log::DataDir;
use kaen_log::offsets::group_state::{self, GroupView};
use kaen_log::offsets::replay::Incomplete;
use kaen_log::offsets::share::{self, ShareState};
use kaen_log::offsets::ReplayOptions;

use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::table::{cell, Column};
use crate::report::TimeFormat;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// List the groups the offsets topic holds, as the group coordinator
/// rebuilds them on load: classic groups (GroupMetadataValue) and the new
/// protocols' consumer, share and streams groups (their coordinator records).
///
/// Per group: TYPE (classic, consumer, share, streams), STATE (classic:
/// Empty or Stable, as loaded; consumer and streams: Empty, Assigning,
/// Reconciling or Stable from the group, target-assignment and member
/// epochs; share: Empty or Stable), EPOCH (the classic generation or the
/// group epoch), ASSIGNMENT-EPOCH, PROTOCOL (classic: type/protocol;
/// consumer: the server assignor most members name, else the
/// coordinator's default `uniform`, as kafka-consumer-groups --state shows
/// it; streams: the members' assignors; share: simple), the member
/// count and STATE-TIMESTAMP, when the state was written (a classic group's
/// currentStateTimestamp, `-` (JSON null) when its GroupMetadataValue has
/// none: v0/v1, or -1; else the newest timestamp of the group's records). --members lists each member (member id, instance id, client id,
/// host, rack, member epoch, current assignment with topic ids resolved to
/// names through the KRaft metadata or partition.metadata; a streams
/// member's active tasks through its group's topology). The state of each
/// share-partition (`__share_group_state`, replayed as the share
/// coordinator does: start offset, epochs, state batches combined by
/// Kafka's rule) follows the groups in text; --share-state lists only it
/// (text and CSV).
///
/// Exit 1 when the offsets topic or the share-group state has records that
/// do not decode or cannot be applied; exit 2 for a --group that does not
/// exist.
#[derive(Debug, clap::Args)]
pub struct GroupsArgs {
    /// Data directories (several: the log directories of one broker, merged,
    /// or of several brokers of one cluster).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Only this group ("group does not exist", exit 2, when it is not there).
    #[arg(long)]
    pub group: Option<String>,
    /// List each member with its assignment (text and CSV).
    #[arg(long, conflicts_with = "share_state")]
    pub members: bool,
    /// List each share-partition's state (text and CSV).
    #[arg(long)]
    pub share_state: bool,
    /// Output format.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
}

/// `orders:0,1 payments:3`.
pub fn assignment_text(a: &[(String, Vec<i32>)]) -> String {
    if a.is_empty() {
        return "-".to_string();
    }
    a.iter()
        .map(|(t, ps)| {
            format!(
                "{t}:{}",
                ps.iter().map(i32::to_string).collect::<Vec<_>>().join(",")
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

fn batches_text(s: &ShareState) -> String {
    if s.batches.is_empty() {
        return "-".to_string();
    }
    s.batches
        .iter()
        .map(|b| {
            format!(
                "{}-{}:{}x{}",
                b.first_offset, b.last_offset, b.delivery_state, b.delivery_count
            )
        })
        .collect::<Vec<_>>()
        .join(" ")
}

/// Each share-partition's lag ([`share::share_lag`]) against the partition's
/// high watermark in `dirs`: the highest of its copies (a follower's is
/// never ahead of the leader's, which ListOffsets answers from).
fn share_lags(dirs: &[DataDir], shares: &mut [ShareState]) -> anyhow::Result<()> {
    let tiering = kaen_log::tiered::Tiering::for_dirs(dirs)?;
    for s in shares.iter_mut() {
        let mut latest = None;
        for d in dirs {
            for p in d.live() {
                if p.topic == s.topic && p.partition == s.partition {
                    latest = latest.max(Some(
                        consumer_lag::partition_ends(p, &d.path, &tiering)?.latest(),
                    ));
                }
            }
        }
        s.lag = latest.and_then(|l| share::share_lag(s, l));
    }
    Ok(())
}

pub fn run(args: &GroupsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let (dirs, replay, _) =
        crate::cmd::replayed::replay_dirs(&args.dirs, ReplayOptions::default())?;
    let names = group_state::topic_names(&dirs);
    let mut list: Vec<GroupView> =
        group_state::groups(&replay, &names, group_state::Loader::of(&dirs));
    group_state::settle_release(&mut list, &dirs);
    let share::ShareReplayed {
        states: mut shares,
        not_applied,
        read_as_kafka,
    } = share::share_states(&dirs, &names)?;
    share_lags(&dirs, &mut shares)?;
    let mut incomplete = replay.incomplete.clone();
    for (file, offset, why) in &not_applied {
        crate::report::say!("{}: offset {offset}: not applied: {}", file.display(), why);
        Incomplete::note(&mut incomplete, file, *offset, || why.clone());
    }
    for (file, offset, why) in &read_as_kafka {
        crate::report::say!("warning: {}: offset {offset}: {why}", file.display());
    }
    if let Some(g) = &args.group {
        list.retain(|x| &x.group == g);
        shares.retain(|x| &x.group == g);
        if list.is_empty() && shares.is_empty() {
            anyhow::bail!("group {g:?}: group does not exist");
        }
    }
    let report = GroupsReport {
        incomplete: incomplete.into_values().collect(),
        groups: list,
        share_partitions: shares,
        members: args.members,
        share_state: args.share_state,
        time_format: out.time_format(),
    };
    emit(&report, args.format, out)?;
    Ok(Outcome::from_count(
        replay.bad_count + not_applied.len() as u64,
    ))
}

/// The columns of a group (text and CSV).
fn group_columns<'r>() -> [Column<&'r GroupView>; 8] {
    [
        Column::text("group", |g| cell(&g.group)),
        Column::text("type", |g| cell(g.kind)),
        Column::text("state", |g| cell(g.state)),
        Column::number("epoch", |g| cell(&g.epoch)),
        Column::number("assignment_epoch", |g| cell(&g.assignment_epoch)),
        Column::text("protocol", |g| cell(&g.protocol)),
        Column::number("members", |g| cell(&g.members.len())),
        Column::number("state_timestamp_ms", |g| cell(&g.state_timestamp)),
    ]
}

/// A member of its group.
type Member<'r> = (&'r GroupView, &'r group_state::MemberView);

/// The columns of a member (text and CSV with --members).
fn member_columns<'r>() -> [Column<Member<'r>>; 9] {
    [
        Column::text("group", |(g, _)| cell(&g.group)),
        Column::text("type", |(g, _)| cell(g.kind)),
        Column::text("member_id", |(_, m)| cell(&m.member_id)),
        Column::text("instance_id", |(_, m)| cell(&m.instance_id)),
        Column::text("client_id", |(_, m)| cell(&m.client_id)),
        Column::text("host", |(_, m)| cell(&m.client_host)),
        Column::text("rack", |(_, m)| cell(&m.rack)),
        Column::number("member_epoch", |(_, m)| cell(&m.member_epoch)),
        Column::text("assignment", |(_, m)| Some(assignment_text(&m.assignment))),
    ]
}

/// The columns of a share-partition's state (text and CSV).
fn share_columns<'r>() -> [Column<&'r ShareState>; 11] {
    [
        Column::text("share_group", |s| cell(&s.group)),
        Column::text("topic", |s| cell(&s.topic)),
        Column::number("partition", |s| cell(&s.partition)),
        Column::number("start_offset", |s| cell(&s.start_offset)),
        // Kafka 4.2+'s share lag (`kafka-share-groups --describe`'s LAG).
        Column::number("lag", |s| cell(&s.lag)),
        Column::number("state_epoch", |s| cell(&s.state_epoch)),
        Column::number("leader_epoch", |s| cell(&s.leader_epoch)),
        Column::number("snapshot_epoch", |s| cell(&s.snapshot_epoch)),
        Column::number("updates", |s| cell(&s.updates)),
        // When the state was written (null: a state that began with a
        // ShareUpdate has no timestamps).
        Column::number("written_ms", |s| {
            cell(&Some(s.write_timestamp_ms).filter(|t| *t != 0))
        }),
        Column::text("state_batches", |s| Some(batches_text(s))),
    ]
}

/// `klog groups`'s document.
#[derive(Serialize, JsonSchema)]
pub struct GroupsReport {
    /// The partitions of `__consumer_offsets` / `__offsets` and
    /// `__share_group_state` not read whole: the groups and states shown
    /// lack what they hold (empty when every record was read and applied).
    incomplete: Vec<Incomplete>,
    groups: Vec<GroupView>,
    share_partitions: Vec<ShareState>,
    #[serde(skip)]
    members: bool,
    #[serde(skip)]
    share_state: bool,
    #[serde(skip)]
    time_format: TimeFormat,
}

impl Report for GroupsReport {
    const COMMAND: &'static str = "groups";

    fn summary(&self) -> String {
        let mut text = crate::report::document::incomplete_text(&self.incomplete);
        for g in &self.groups {
            if let Some(from_4_4) = g.state_from_4_4 {
                text += &format!(
                    "klog: group {}: a streams group without a StreamsGroupMetadata record: Kafka 4.2 and 4.3 \
                     load it {} (validated topology epoch 0), Kafka 4.4 and later {} (-1); the broker that \
                     restarts decides, and the metadata.version of these directories does not say it runs 4.4 \
                     (STATE is 4.2 and 4.3's; JSON: state_from_4_4)\n",
                    crate::report::table::escape_cell(&format!("{:?}", g.group)),
                    g.state,
                    from_4_4
                );
            }
        }
        text
    }

    fn tables(&self) -> Vec<Table> {
        let main = if self.members {
            let members = self
                .groups
                .iter()
                .flat_map(|g| g.members.iter().map(move |m| (g, m)));
            Table::listed(members, &member_columns())
        } else {
            Table::listed(&self.groups, &group_columns())
                .times(&["state_timestamp_ms"], self.time_format)
        };
        let shares = Table::listed(&self.share_partitions, &share_columns())
            .times(&["written_ms"], self.time_format);
        if self.share_state {
            return vec![shares];
        }
        vec![main, shares.hide_empty()]
    }
}

impl crate::cmd::CommandEntry for GroupsArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog groups --members DIR",
        "every group of every protocol with its members",
    )];
    const SEE_ALSO: &'static [&'static str] = &["replay-offsets", "lag", "metadata", "kafka(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/groups.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<GroupsReport>()]
    }
}
