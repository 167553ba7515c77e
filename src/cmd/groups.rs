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

/// One group (text and CSV).
#[derive(Serialize, JsonSchema)]
struct GroupRow<'a> {
    group: &'a str,
    r#type: &'a str,
    state: &'a str,
    epoch: Option<i32>,
    assignment_epoch: Option<i32>,
    protocol: Option<&'a str>,
    members: u64,
    state_timestamp_ms: Option<i64>,
}

/// One member (text and CSV with --members).
#[derive(Serialize, JsonSchema)]
struct MemberRow<'a> {
    group: &'a str,
    r#type: &'a str,
    member_id: &'a str,
    instance_id: Option<&'a str>,
    client_id: &'a str,
    host: &'a str,
    rack: Option<&'a str>,
    member_epoch: Option<i32>,
    assignment: String,
}

/// One share-partition's state (text and CSV).
#[derive(Serialize, JsonSchema)]
struct ShareRow<'a> {
    share_group: &'a str,
    topic: &'a str,
    partition: i32,
    start_offset: i64,
    /// Kafka 4.2+'s share lag (`kafka-share-groups --describe`'s LAG).
    lag: Option<i64>,
    state_epoch: i32,
    leader_epoch: i32,
    snapshot_epoch: i32,
    updates: u32,
    /// When the state was written (null: a state that began with a
    /// ShareUpdate has no timestamps).
    written_ms: Option<i64>,
    state_batches: String,
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
            let rows: Vec<MemberRow> = self
                .groups
                .iter()
                .flat_map(|g| {
                    g.members.iter().map(move |m| MemberRow {
                        group: &g.group,
                        r#type: g.kind,
                        member_id: &m.member_id,
                        instance_id: m.instance_id.as_deref(),
                        client_id: &m.client_id,
                        host: &m.client_host,
                        rack: m.rack.as_deref(),
                        member_epoch: m.member_epoch,
                        assignment: assignment_text(&m.assignment),
                    })
                })
                .collect();
            Table::of(&rows)
        } else {
            let rows: Vec<GroupRow> = self
                .groups
                .iter()
                .map(|g| GroupRow {
                    group: &g.group,
                    r#type: g.kind,
                    state: g.state,
                    epoch: g.epoch,
                    assignment_epoch: g.assignment_epoch,
                    protocol: g.protocol.as_deref(),
                    members: g.members.len() as u64,
                    state_timestamp_ms: g.state_timestamp,
                })
                .collect();
            Table::of(&rows).times(&["state_timestamp_ms"], self.time_format)
        };
        let shares: Vec<ShareRow> = self
            .share_partitions
            .iter()
            .map(|s| ShareRow {
                share_group: &s.group,
                topic: &s.topic,
                partition: s.partition,
                start_offset: s.start_offset,
                lag: s.lag,
                state_epoch: s.state_epoch,
                leader_epoch: s.leader_epoch,
                snapshot_epoch: s.snapshot_epoch,
                updates: s.updates,
                written_ms: Some(s.write_timestamp_ms).filter(|t| *t != 0),
                state_batches: batches_text(s),
            })
            .collect();
        if self.share_state {
            return vec![Table::of(&shares).times(&["written_ms"], self.time_format)];
        }
        vec![
            main,
            Table::of(&shares)
                .times(&["written_ms"], self.time_format)
                .hide_empty(),
        ]
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
