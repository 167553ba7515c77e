//! `klog metadata`'s document: the replayed cluster image as tables
//! (text, CSV) and one JSON object.

use std::collections::BTreeMap;
use std::path::Path;

use kaen_log::metadata::image::{
    resource_type_name, Broker, Controller, Listener, Note, PartitionReg, ProducerIds, Section,
    Uuid,
};
use kaen_log::metadata::Replayed;
use schemars::JsonSchema;
use serde::Serialize;

use super::MetadataTable;
use crate::report::table::{cell, escape_cell, Column};
use crate::report::{Report, Table};

fn list<T: ToString>(v: &[T]) -> String {
    if v.is_empty() {
        "-".to_string()
    } else {
        v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
    }
}

fn listeners(ls: &[Listener]) -> String {
    if ls.is_empty() {
        return "-".to_string();
    }
    ls.iter()
        .map(|l| format!("{}://{}:{}", l.name, l.host, l.port))
        .collect::<Vec<_>>()
        .join(",")
}

/// One topic, with every partition's registration.
#[derive(Serialize, JsonSchema)]
struct TopicOut<'a> {
    name: &'a str,
    id: &'a Uuid,
    partitions: Vec<PartitionOut<'a>>,
}

#[derive(Serialize, JsonSchema)]
struct PartitionOut<'a> {
    partition: i32,
    #[serde(flatten)]
    registration: &'a PartitionReg,
}

/// A partition of its topic, one row of the partitions table.
type PartitionLine<'r, 'a> = (&'r TopicOut<'a>, &'r PartitionOut<'a>);

/// The text columns of a partition's registration (lists joined by commas).
fn partition_columns<'r, 'a>() -> [Column<PartitionLine<'r, 'a>>; 9] {
    [
        Column::text("topic", |(t, _)| cell(t.name)),
        Column::number("partition", |(_, p)| cell(&p.partition)),
        Column::text("topic_id", |(t, _)| cell(t.id)),
        Column::number("leader", |(_, p)| cell(&p.registration.leader)),
        Column::number("leader_epoch", |(_, p)| cell(&p.registration.leader_epoch)),
        Column::number("partition_epoch", |(_, p)| {
            cell(&p.registration.partition_epoch)
        }),
        Column::text("replicas", |(_, p)| Some(list(&p.registration.replicas))),
        Column::text("isr", |(_, p)| Some(list(&p.registration.isr))),
        Column::text("directories", |(_, p)| {
            Some(list(&p.registration.directories))
        }),
    ]
}

/// The CSV columns of a partition's topic, before the partition's JSON
/// fields (`partition` and the registration).
fn topic_columns<'r, 'a>() -> [Column<&'r TopicOut<'a>>; 2] {
    [
        Column::text("topic", |t| cell(t.name)),
        Column::text("topic_id", |t| cell(t.id)),
    ]
}

/// The text columns of a broker (listeners and lists joined by commas).
fn broker_columns<'r>() -> [Column<&'r Broker>; 9] {
    [
        Column::number("broker", |b| cell(&b.id)),
        Column::number("epoch", |b| cell(&b.epoch)),
        Column::text("rack", |b| cell(&b.rack)),
        Column::text("fenced", |b| cell(&b.fenced)),
        Column::text("controlled_shutdown", |b| cell(&b.in_controlled_shutdown)),
        Column::text("listeners", |b| Some(listeners(&b.listeners))),
        Column::text("incarnation", |b| cell(&b.incarnation_id)),
        Column::text("log_dirs", |b| Some(list(&b.log_dirs))),
        // The cordoned log directories; `unknown` until the broker sends them.
        Column::text("cordoned", |b| {
            Some(
                b.cordoned_log_dirs
                    .as_deref()
                    .map_or_else(|| "unknown".to_string(), list),
            )
        }),
    ]
}

/// The text columns of a controller.
fn controller_columns<'r>() -> [Column<&'r Controller>; 3] {
    [
        Column::number("controller", |c| cell(&c.id)),
        Column::text("listeners", |c| Some(listeners(&c.listeners))),
        Column::text("incarnation", |c| cell(&c.incarnation_id)),
    ]
}

/// One dynamic config.
#[derive(Serialize, JsonSchema)]
struct ConfigRow<'a> {
    resource_type: &'static str,
    /// The resource's name; `(default)` for the cluster- or broker-wide default.
    resource: &'a str,
    name: &'a str,
    value: &'a str,
}

/// The snapshot the replay started from.
#[derive(Serialize, JsonSchema)]
struct SnapshotOut {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    file: kaen_log::log::findings::FileFields,
    offset: i64,
    epoch: i32,
}

/// The log records applied after the snapshot.
#[derive(Serialize, JsonSchema)]
struct RangeOut {
    first: i64,
    last: i64,
}

/// A damaged batch or record of the metadata log.
#[derive(Serialize, JsonSchema)]
struct DamageOut {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    file: kaen_log::log::findings::FileFields,
    offset: i64,
    error: String,
}

/// `klog metadata`'s document: the cluster image.
#[derive(Serialize, JsonSchema)]
pub struct MetadataReport<'a> {
    metadata_dir: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    metadata_dir_base64: Option<String>,
    snapshot: Option<SnapshotOut>,
    log_range: Option<RangeOut>,
    next_offset: i64,
    features: &'a BTreeMap<String, i16>,
    producer_ids: Option<ProducerIds>,
    brokers: Vec<&'a Broker>,
    controllers: Vec<&'a Controller>,
    topics: Vec<TopicOut<'a>>,
    configs: Vec<ConfigRow<'a>>,
    acls: u64,
    scram_credentials: u64,
    delegation_tokens: u64,
    client_quotas: u64,
    /// Records applied, by record name.
    record_counts: &'a BTreeMap<String, u64>,
    /// Records klog could not apply.
    not_applied: &'a [Note],
    damage: Vec<DamageOut>,
    /// The snapshot's framing (header first, footer last) and what the
    /// replay found record by record.
    findings: Vec<&'a kaen_log::log::findings::Finding>,
    /// The parts of the image klog could not build in full (`all` when a
    /// batch or record could not be read): a record there is newer than
    /// klog or cannot be read (see the findings).
    incomplete: Vec<Section>,
    #[serde(skip)]
    whole_cluster: bool,
    #[serde(skip)]
    csv_table: MetadataTable,
}

pub(super) fn report<'a>(
    folder: &Path,
    r: &'a Replayed,
    topic: Option<&str>,
    csv_table: MetadataTable,
) -> MetadataReport<'a> {
    let image = &r.image;
    let mut topics: Vec<_> = image
        .topics
        .values()
        .filter(|t| topic.is_none_or(|n| t.name == n))
        .collect();
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    let configs = image
        .configs
        .iter()
        .filter(|((t, name), _)| topic.is_none_or(|n| *t == 2 && name == n))
        .flat_map(|((t, name), kv)| {
            kv.iter().map(move |(k, v)| ConfigRow {
                resource_type: resource_type_name(*t),
                resource: if name.is_empty() { "(default)" } else { name },
                name: k,
                value: v,
            })
        })
        .collect();
    MetadataReport {
        metadata_dir: folder.display().to_string(),
        metadata_dir_base64: kaen_log::log::findings::path_base64(folder),
        snapshot: r.snapshot.as_ref().map(|(p, o, e)| SnapshotOut {
            file: kaen_log::log::findings::FileFields::of(p),
            offset: *o,
            epoch: *e,
        }),
        log_range: r.log_range.map(|(first, last)| RangeOut { first, last }),
        next_offset: r.next_offset,
        features: &image.features,
        producer_ids: image.producer_ids,
        brokers: image.brokers.values().collect(),
        controllers: image.controllers.values().collect(),
        topics: topics
            .into_iter()
            .map(|t| TopicOut {
                name: &t.name,
                id: &t.id,
                partitions: t
                    .partitions
                    .iter()
                    .map(|(p, registration)| PartitionOut {
                        partition: *p,
                        registration,
                    })
                    .collect(),
            })
            .collect(),
        configs,
        acls: image.acls.len() as u64,
        scram_credentials: image.scram_credentials.len() as u64,
        delegation_tokens: image.delegation_tokens.len() as u64,
        client_quotas: image.client_quotas.len() as u64,
        record_counts: &image.record_counts,
        not_applied: &image.notes,
        damage: r
            .damage
            .iter()
            .map(|(f, o, e)| DamageOut {
                file: kaen_log::log::findings::FileFields::of(f),
                offset: *o,
                error: e.clone(),
            })
            .collect(),
        findings: r.snapshot_findings.iter().chain(&r.findings).collect(),
        incomplete: r.incomplete(),
        whole_cluster: topic.is_none(),
        csv_table,
    }
}

impl Report for MetadataReport<'_> {
    const COMMAND: &'static str = "metadata";

    fn tables(&self) -> Vec<Table> {
        let mut tables = Vec::new();
        if self.whole_cluster {
            tables.push(self.table(MetadataTable::Brokers));
            tables.push(self.table(MetadataTable::Controllers));
        }
        tables.push(self.table(MetadataTable::Partitions));
        tables.push(self.table(MetadataTable::Configs));
        tables
    }

    /// The table --table names (brokers by default), whatever --topic:
    /// the JSON document's rows, a nested object's fields as
    /// `parent_child`, a list as its JSON.
    fn csv_table(&self) -> Option<Table> {
        Some(match self.csv_table {
            MetadataTable::Brokers => Table::flat(&self.brokers),
            MetadataTable::Controllers => Table::flat(&self.controllers),
            MetadataTable::Partitions => {
                let (topics, partitions): (Vec<_>, Vec<_>) = self.partition_lines().unzip();
                Table::listed(topics, &topic_columns()).beside(Table::flat(&partitions))
            }
            MetadataTable::Configs => Table::flat(&self.configs),
        })
    }

    fn text(&self, fit: crate::report::table::Fit) -> String {
        let mut out = String::new();
        out.push_str(&format!(
            "metadata log: {}\n",
            escape_cell(&self.metadata_dir)
        ));
        match &self.snapshot {
            Some(s) => out.push_str(&format!(
                "snapshot:     {} (offset {}, epoch {})\n",
                escape_cell(
                    Path::new(&s.file.file)
                        .file_name()
                        .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
                        .as_str()
                ),
                s.offset,
                s.epoch
            )),
            None => out.push_str("snapshot:     - (the log from offset 0)\n"),
        }
        match &self.log_range {
            Some(r) => out.push_str(&format!(
                "log records:  offsets {}..={} applied (next offset {})\n",
                r.first, r.last, self.next_offset
            )),
            None => out.push_str(&format!(
                "log records:  none after the snapshot (next offset {})\n",
                self.next_offset
            )),
        }
        if !self.incomplete.is_empty() {
            out.push_str(&format!(
                "incomplete:   {} (records klog cannot read as they were written: see the findings)\n",
                kaen_log::metadata::image::Section::list(&self.incomplete)
            ));
        }
        let features: Vec<String> = self
            .features
            .iter()
            .map(|(k, v)| format!("{}={v}", escape_cell(k)))
            .collect();
        out.push_str(&format!(
            "features:     {}\n",
            if features.is_empty() {
                "-".to_string()
            } else {
                features.join(" ")
            }
        ));
        match self.producer_ids {
            Some(p) => out.push_str(&format!(
                "producer ids: next {} (block of broker {}, epoch {})\n",
                p.next_producer_id, p.broker_id, p.broker_epoch
            )),
            None => out.push_str("producer ids: -\n"),
        }
        out.push_str(&format!(
            "security:     {} ACLs, {} SCRAM credentials, {} delegation tokens, {} client quotas\n",
            self.acls, self.scram_credentials, self.delegation_tokens, self.client_quotas
        ));
        let tables = self.tables();
        let mut sections = vec![Section::Topics, Section::Configs];
        if self.whole_cluster {
            sections.splice(0..0, [Section::Brokers, Section::Controllers]);
        }
        for (t, section) in tables.iter().zip(sections) {
            if t.is_empty() && !t.show_empty() {
                continue;
            }
            out.push('\n');
            if self.incomplete.contains(&section) || self.incomplete.contains(&Section::All) {
                out.push_str(&format!(
                    "{} (incomplete: see the findings)\n",
                    section.name()
                ));
            }
            out.push_str(&t.render(fit));
        }
        out
    }

    fn summary(&self) -> String {
        // Every record not applied has its finding.
        let mut out = String::new();
        // Damage is among the findings.
        for f in &self.findings {
            out.push_str(&format!("klog: {}\n", escape_cell(&f.to_string())));
        }
        out
    }
}

impl<'a> MetadataReport<'a> {
    /// Every partition of the topics shown, with its topic.
    fn partition_lines(&self) -> impl Iterator<Item = PartitionLine<'_, 'a>> {
        self.topics
            .iter()
            .flat_map(|t| t.partitions.iter().map(move |p| (t, p)))
    }

    /// One of the image's tables.
    fn table(&self, which: MetadataTable) -> Table {
        match which {
            MetadataTable::Brokers => {
                Table::listed(self.brokers.iter().copied(), &broker_columns())
            }
            MetadataTable::Controllers => {
                Table::listed(self.controllers.iter().copied(), &controller_columns())
            }
            MetadataTable::Partitions => {
                Table::listed(self.partition_lines(), &partition_columns())
            }
            MetadataTable::Configs => Table::of(&self.configs).hide_empty(),
        }
    }
}
