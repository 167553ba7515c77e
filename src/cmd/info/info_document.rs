//! `klog info`'s document: what it shows of each data directory (its
//! `meta.properties`, quorum state, metadata image, checkpoints, shutdown
//! and partitions), built from the inspection in the parent module, and
//! how it is rendered in text, JSON and CSV.

use super::*;
use crate::report::table::{cell, Column};

fn epochs_text(epochs: &[EpochOut]) -> String {
    crate::report::table::leader_epochs_text(
        epochs.iter().map(|e| (e.leader_epoch, e.start_offset)),
    )
}

/// meta.properties as read.
#[derive(Serialize, JsonSchema)]
struct MetaOut {
    version: u8,
    /// `broker.id` (version 0).
    broker_id: Option<i32>,
    /// `node.id` (version 1).
    node_id: Option<i32>,
    cluster_id: Option<String>,
    directory_id: Option<String>,
}

/// The KRaft quorum-state file.
#[derive(Serialize, JsonSchema)]
struct QuorumOut {
    leader_id: i64,
    leader_epoch: i64,
    voted_id: i64,
    voted_directory_id: Option<String>,
    applied_offset: Option<i64>,
    current_voters: Option<Vec<i64>>,
    data_version: i64,
}

/// The replayed metadata, in brief (`klog metadata` shows it all).
#[derive(Serialize, JsonSchema)]
struct MetadataOut {
    snapshot_offset: Option<i64>,
    next_offset: i64,
    topics: u64,
    brokers: u64,
    /// The parts of the image klog could not build in full (see the
    /// findings): the counts may be short there.
    incomplete: Vec<kaen_log::metadata::image::Section>,
}

/// One leader-epoch-checkpoint entry.
#[derive(Serialize, JsonSchema)]
struct EpochOut {
    leader_epoch: i32,
    start_offset: i64,
}

/// One partition folder; the numbers are null for folders not read
/// (-delete, -future, -stray).
#[derive(Serialize, JsonSchema)]
struct PartitionOut {
    topic: String,
    partition: i32,
    state: &'static str,
    segments: Option<u64>,
    bytes: Option<u64>,
    /// Kafka's log start (ListOffsets earliest).
    log_start_offset: Option<i64>,
    /// Where the local copy starts (ListOffsets earliest-local): the same
    /// as the log start but for tiered storage, where the offsets between
    /// them live in remote segments only.
    local_log_start_offset: Option<i64>,
    /// Why klog takes the partition's topic for one with tiered storage
    /// (null: it has none).
    tiered_by: Option<kaen_log::tiered::TieredBy>,
    /// The first and last offsets of the readable remote segments
    /// (`__remote_log_metadata`; null without tiered storage, without a
    /// readable remote segment, or when no directory given holds the
    /// partition's remote log metadata).
    remote_start_offset: Option<i64>,
    remote_end_offset: Option<i64>,
    log_end_offset: Option<i64>,
    high_watermark: Option<i64>,
    recovery_point: Option<i64>,
    cleaner_offset: Option<i64>,
    leader_epochs: Option<Vec<EpochOut>>,
    topic_id: Option<String>,
    /// Not shown: whether the remote log metadata was read.
    #[serde(skip)]
    remote_read: bool,
}

impl PartitionOut {
    /// The remote segments' offsets, for a partition with tiered storage:
    /// `first..=last`, `none` (the remote log metadata read names none)
    /// or `?` (not read).
    fn remote_offsets(&self) -> Option<String> {
        self.tiered_by
            .map(|_| match (self.remote_start_offset, self.remote_end_offset) {
                (Some(a), Some(b)) => format!("{a}..={b}"),
                _ if self.remote_read => "none".into(),
                _ => "?".into(),
            })
    }
}

/// The text columns of a partition folder: the remote offsets as one
/// range, epochs as `epoch@offset`.
fn partition_columns<'r>() -> [Column<&'r PartitionOut>; 14] {
    [
        Column::text("topic", |p| cell(&p.topic)),
        Column::number("partition", |p| cell(&p.partition)),
        Column::text("state", |p| cell(p.state)),
        Column::number("segments", |p| cell(&p.segments)),
        Column::number("bytes", |p| cell(&p.bytes)),
        Column::number("log_start_offset", |p| cell(&p.log_start_offset)),
        Column::number("local_log_start_offset", |p| {
            cell(&p.local_log_start_offset)
        }),
        Column::text("remote_offsets", |p| p.remote_offsets()),
        Column::number("log_end_offset", |p| cell(&p.log_end_offset)),
        Column::number("high_watermark", |p| cell(&p.high_watermark)),
        Column::number("recovery_point", |p| cell(&p.recovery_point)),
        Column::number("cleaner_offset", |p| cell(&p.cleaner_offset)),
        Column::text("leader_epochs", |p| match p.leader_epochs.as_deref() {
            None | Some([]) => None,
            Some(e) => Some(epochs_text(e)),
        }),
        Column::text("topic_id", |p| cell(&p.topic_id)),
    ]
}

/// The CSV columns of a partition folder's directory, before the
/// partition's JSON fields.
fn dir_columns<'r>() -> [Column<&'r DirOut>; 3] {
    [
        Column::text("dir", |d| cell(&d.dir)),
        // Only when the path is not UTF-8: its exact bytes, in base64.
        Column::text("dir_base64", |d| cell(&d.dir_base64)),
        // How the broker left the directory (empty for one that is not a
        // broker's).
        Column::text("shutdown", |d| {
            cell(&d.restart.as_ref().map(|r| r.restart.shutdown.state))
        }),
    ]
}

/// One data directory.
#[derive(Serialize, JsonSchema)]
struct DirOut {
    dir: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    dir_base64: Option<String>,
    /// null when absent or malformed (see the findings).
    meta_properties: Option<MetaOut>,
    #[serde(skip)]
    meta_malformed: bool,
    quorum_state: Option<QuorumOut>,
    #[serde(skip)]
    quorum_malformed: bool,
    metadata: Option<MetadataOut>,
    checkpoints: Vec<&'static str>,
    /// How the broker left the directory and what its next start
    /// re-reads (null for a directory that is not a broker's).
    restart: Option<crate::cmd::RestartOut>,
    partitions: Vec<PartitionOut>,
}

/// `klog info`'s document.
#[derive(Serialize, JsonSchema)]
pub struct InfoReport {
    directories: Vec<DirOut>,
    findings: Vec<Finding>,
    finding_counts: Counts,
}

impl InfoReport {
    /// The document of the directories inspected and all their findings.
    pub(super) fn new(infos: &[DirInfo], findings: Vec<Finding>) -> Self {
        InfoReport {
            directories: infos.iter().map(dir_out).collect(),
            finding_counts: Summary::of(&findings).counts(),
            findings,
        }
    }
}

fn dir_out(info: &DirInfo) -> DirOut {
    DirOut {
        dir: info.path.display().to_string(),
        dir_base64: kaen_log::log::findings::path_base64(&info.path),
        meta_properties: info.meta.ok().map(|m| MetaOut {
            version: m.version,
            broker_id: if m.version == 0 { m.node_id } else { None },
            node_id: if m.version == 0 { None } else { m.node_id },
            cluster_id: m.cluster_id.clone(),
            directory_id: m.directory_id.map(|d| d.to_string()),
        }),
        meta_malformed: matches!(info.meta, Loaded::Malformed),
        quorum_state: info.quorum.ok().map(|q| QuorumOut {
            leader_id: q.leader_id,
            leader_epoch: q.leader_epoch,
            voted_id: q.voted_id,
            voted_directory_id: q.voted_directory_id.clone(),
            applied_offset: q.applied_offset,
            current_voters: q.current_voters.clone(),
            data_version: q.data_version,
        }),
        quorum_malformed: matches!(info.quorum, Loaded::Malformed),
        metadata: info.metadata.as_ref().map(|m| MetadataOut {
            snapshot_offset: m.snapshot,
            next_offset: m.next_offset,
            topics: m.topics as u64,
            brokers: m.brokers as u64,
            incomplete: m.incomplete.clone(),
        }),
        checkpoints: info.checkpoints.clone(),
        restart: crate::cmd::restart_of(&info.path),
        partitions: info
            .partitions
            .iter()
            .map(|p| {
                let l = p.live.as_ref();
                PartitionOut {
                    topic: p.topic.clone(),
                    partition: p.partition,
                    state: p.state.name(),
                    segments: l.map(|l| l.segments as u64),
                    bytes: l.map(|l| l.bytes),
                    log_start_offset: l.map(|l| l.log_start),
                    local_log_start_offset: l.map(|l| l.local_log_start),
                    tiered_by: l.and_then(|l| l.tiered).map(|t| t.by),
                    remote_start_offset: l.and_then(|l| l.tiered?.remote).map(|r| r.0),
                    remote_end_offset: l.and_then(|l| l.tiered?.remote).map(|r| r.1),
                    remote_read: l.and_then(|l| l.tiered).is_some_and(|t| t.metadata_read),
                    log_end_offset: l.map(|l| l.log_end),
                    high_watermark: l.and_then(|l| l.high_watermark),
                    recovery_point: l.and_then(|l| l.recovery_point),
                    cleaner_offset: l.and_then(|l| l.cleaner_offset),
                    leader_epochs: l.and_then(|l| l.leader_epochs.as_ref()).map(|v| {
                        v.iter()
                            .map(|(e, o)| EpochOut {
                                leader_epoch: *e,
                                start_offset: *o,
                            })
                            .collect()
                    }),
                    topic_id: l.and_then(|l| l.topic_id).map(|m| m.topic_id.to_string()),
                }
            })
            .collect(),
    }
}

fn meta_text(d: &DirOut) -> String {
    if d.meta_malformed {
        return "malformed (see the findings)".to_string();
    }
    let Some(m) = &d.meta_properties else {
        return "-".to_string();
    };
    let mut parts = vec![format!("version={}", m.version)];
    if let Some(id) = m.broker_id {
        parts.push(format!("broker.id={id}"));
    }
    if let Some(id) = m.node_id {
        parts.push(format!("node.id={id}"));
    }
    if let Some(c) = &m.cluster_id {
        parts.push(format!("cluster.id={c}"));
    }
    if let Some(d) = &m.directory_id {
        parts.push(format!("directory.id={d}"));
    }
    escape_cell(&parts.join(" ")).into_owned()
}

fn dir_text(d: &DirOut, fit: crate::report::table::Fit) -> String {
    // Counts in the order of PartitionState (live first).
    let rank = |s: &str| {
        ["live", "delete", "future", "stray"]
            .iter()
            .position(|x| *x == s)
    };
    let mut states: BTreeMap<(Option<usize>, &str), usize> = BTreeMap::new();
    for p in &d.partitions {
        *states.entry((rank(p.state), p.state)).or_default() += 1;
    }
    let states = states
        .iter()
        .map(|((_, s), n)| format!("{n} {s}"))
        .collect::<Vec<_>>()
        .join(", ");
    let mut out = String::new();
    out.push_str(&format!("directory:        {}\n", escape_cell(&d.dir)));
    if let Some(r) = &d.restart {
        out.push_str(&format!("shutdown:         {}\n", r.restart.headline()));
    }
    out.push_str(&format!("meta.properties:  {}\n", meta_text(d)));
    out.push_str(&format!(
        "checkpoints:      {}\n",
        if d.checkpoints.is_empty() {
            "-".to_string()
        } else {
            d.checkpoints.join(", ")
        }
    ));
    if d.quorum_malformed {
        out.push_str("quorum-state:     malformed (see the findings)\n");
    }
    if let Some(q) = &d.quorum_state {
        out.push_str(&format!(
            "quorum-state:     leader {} epoch {} voted {}{} data_version {}\n",
            q.leader_id,
            q.leader_epoch,
            q.voted_id,
            q.voted_directory_id
                .as_ref()
                .map_or(String::new(), |d| format!(
                    " (directory {})",
                    escape_cell(d)
                )),
            q.data_version
        ));
    }
    if let Some(m) = &d.metadata {
        out.push_str(&format!(
            "metadata:         {}, next offset {}: {}, {}{}\n",
            m.snapshot_offset
                .map_or("no snapshot".to_string(), |o| format!("snapshot at {o}")),
            m.next_offset,
            crate::report::plural(m.topics, "topic", "topics"),
            crate::report::plural(m.brokers, "broker", "brokers"),
            kaen_log::metadata::image::Section::remark(&m.incomplete)
        ));
    }
    out.push_str(&format!(
        "partitions:       {} ({states})\n\n",
        d.partitions.len()
    ));
    out.push_str(&partition_table(d).render(fit));
    out
}

fn partition_table(d: &DirOut) -> Table {
    let rows = &d.partitions;
    let mut table = Table::listed(rows, &partition_columns());
    // The tiered storage columns only say something for tiered partitions.
    if rows.iter().all(|r| r.tiered_by.is_none()) {
        table = table.without("remote_offsets");
    }
    if rows
        .iter()
        .all(|r| r.local_log_start_offset == r.log_start_offset)
    {
        table = table.without("local_log_start_offset");
    }
    table
}

impl Report for InfoReport {
    const COMMAND: &'static str = "info";

    fn tables(&self) -> Vec<Table> {
        self.directories.iter().map(partition_table).collect()
    }

    /// One row per partition folder of every directory.
    fn csv_table(&self) -> Option<Table> {
        let (dirs, partitions): (Vec<_>, Vec<_>) = self
            .directories
            .iter()
            .flat_map(|d| d.partitions.iter().map(move |p| (d, p)))
            .unzip();
        Some(Table::listed(dirs, &dir_columns()).beside(Table::of(&partitions)))
    }

    fn text(&self, fit: crate::report::table::Fit) -> String {
        self.directories
            .iter()
            .map(|d| dir_text(d, fit))
            .collect::<Vec<_>>()
            .join("\n")
    }

    fn summary(&self) -> String {
        crate::report::document::findings_text(&self.findings)
    }
}
