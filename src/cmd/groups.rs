//! `klog groups`: every group of the offsets topic, whatever its protocol.

use std::io::Write;
use std::path::PathBuf;

use kaen_log::offsets::groups::{self, GroupView, ShareState};
use kaen_log::offsets::ReplayOptions;
use serde_json::json;

use crate::cli::TableFormat;
use crate::exit::Outcome;
use crate::report::table::render_table_or_csv;
use crate::report::Output;

/// List the groups the offsets topic holds, as the group coordinator
/// rebuilds them on load: classic groups (GroupMetadataValue) and the new
/// protocols' consumer, share and streams groups (their coordinator records).
///
/// Per group: TYPE (classic, consumer, share, streams), STATE (classic:
/// Empty or Stable, as loaded; consumer and streams: Empty, Assigning,
/// Reconciling or Stable from the group, target-assignment and member
/// epochs; share: Empty or Stable), EPOCH (the classic generation or the
/// group epoch), ASSIGNMENT-EPOCH, PROTOCOL (classic: type/protocol;
/// consumer: the members' server assignors; share: simple), the member
/// count and RECORDED, when the state was written (ms: a classic group's
/// currentStateTimestamp, else the newest timestamp of the group's records). --members lists each member (member id, instance id, client id,
/// host, rack, member epoch, current assignment with topic ids resolved to
/// names through the KRaft metadata or partition.metadata). The state of
/// each share-partition (`__share_group_state`: start offset, state epoch,
/// state batches) follows the groups.
///
/// Exit 1 when the offsets topic has records that do not decode; exit 2 for
/// a --group that does not exist.
#[derive(Debug, clap::Args)]
pub struct GroupsArgs {
    /// Data directories (several: the log directories of one broker, merged).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Only this group ("group does not exist", exit 2, when it is not there).
    #[arg(long)]
    pub group: Option<String>,
    /// List each member with its assignment (text and CSV).
    #[arg(long)]
    pub members: bool,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
}

fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
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

pub fn run(args: &GroupsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let (dirs, replay, _) =
        crate::cmd::replay_offsets::replay_dirs(&args.dirs, ReplayOptions::default())?;
    let names = groups::topic_names(&dirs);
    let mut list: Vec<GroupView> = groups::groups(&replay, &names);
    let mut shares = groups::share_states(&dirs, &names)?;
    if let Some(g) = &args.group {
        list.retain(|x| &x.group == g);
        shares.retain(|x| &x.group == g);
        if list.is_empty() && shares.is_empty() {
            anyhow::bail!("group {g:?}: group does not exist");
        }
    }
    let csv = args.format == TableFormat::Csv;
    match args.format {
        TableFormat::Json => {
            let v: Vec<_> = list
                .iter()
                .map(|g| {
                    let mut o = serde_json::to_value(g).unwrap_or_default();
                    o["share_partitions"] = json!(shares
                        .iter()
                        .filter(|s| s.group == g.group)
                        .collect::<Vec<_>>());
                    o
                })
                .collect();
            serde_json::to_writer(&mut *out, &v)?;
            writeln!(out)?;
        }
        _ if args.members => {
            let headers = [
                "GROUP",
                "TYPE",
                "MEMBER-ID",
                "INSTANCE-ID",
                "CLIENT-ID",
                "HOST",
                "RACK",
                "MEMBER-EPOCH",
                "ASSIGNMENT",
            ];
            let rows: Vec<Vec<String>> = list
                .iter()
                .flat_map(|g| {
                    g.members.iter().map(move |m| {
                        vec![
                            g.group.clone(),
                            g.kind.to_string(),
                            m.member_id.clone(),
                            cell(m.instance_id.clone()),
                            m.client_id.clone(),
                            m.client_host.clone(),
                            cell(m.rack.clone()),
                            cell(m.member_epoch),
                            assignment_text(&m.assignment),
                        ]
                    })
                })
                .collect();
            out.write_all(render_table_or_csv(csv, &headers, &rows).as_bytes())?;
        }
        _ => {
            let headers = [
                "GROUP",
                "TYPE",
                "STATE",
                "EPOCH",
                "ASSIGNMENT-EPOCH",
                "PROTOCOL",
                "MEMBERS",
                "RECORDED",
            ];
            let rows: Vec<Vec<String>> = list
                .iter()
                .map(|g| {
                    vec![
                        g.group.clone(),
                        g.kind.to_string(),
                        g.state.to_string(),
                        cell(g.epoch),
                        cell(g.assignment_epoch),
                        cell(g.protocol.clone()),
                        g.members.len().to_string(),
                        cell(g.state_timestamp),
                    ]
                })
                .collect();
            out.write_all(render_table_or_csv(csv, &headers, &rows).as_bytes())?;
            if !shares.is_empty() && !csv {
                writeln!(out)?;
                let headers = [
                    "SHARE-GROUP",
                    "TOPIC",
                    "PARTITION",
                    "START-OFFSET",
                    "STATE-EPOCH",
                    "LEADER-EPOCH",
                    "UPDATES",
                    "STATE-BATCHES",
                ];
                let rows: Vec<Vec<String>> = shares
                    .iter()
                    .map(|s| {
                        vec![
                            s.group.clone(),
                            s.topic.clone(),
                            s.partition.to_string(),
                            s.start_offset.to_string(),
                            s.state_epoch.to_string(),
                            s.leader_epoch.to_string(),
                            s.updates.to_string(),
                            batches_text(s),
                        ]
                    })
                    .collect();
                out.write_all(render_table_or_csv(false, &headers, &rows).as_bytes())?;
            }
        }
    }
    Ok(Outcome::from_count(replay.bad_count))
}
