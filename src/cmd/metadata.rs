//! `klog metadata`: the KRaft cluster image, replayed offline.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use kaen_log::metadata::image::{
    resource_type_name, Broker, Controller, Listener, Note, PartitionReg, ProducerIds, Section,
    Uuid,
};
use kaen_log::metadata::{self, Replayed};
use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::table::escape_cell;
use crate::report::{emit, formats, Format, Output, Report, Table};

/// Replay a KRaft metadata log into the cluster image, as a broker does on
/// startup: the newest snapshot (`<offset>-<epoch>.checkpoint` in
/// `__cluster_metadata-0`), then every metadata record of the log from the
/// snapshot's offset on.
///
/// Text output: where the image came from, the features and the producer id
/// block, then tables of brokers, controllers, partitions (leader, epochs,
/// replicas, ISR, directories) and configs. `--format json` prints the whole
/// image as one object; `--format csv` prints one table of its rows, the
/// brokers by default, or the one --table names (--topic filters the
/// partitions and configs tables, it does not choose one): the header is
/// the JSON field names (a partition's after its topic's `topic` and
/// `topic_id`), a list is its JSON.
///
/// Metadata transactions are applied as Kafka's MetadataBatchLoader does:
/// a transaction's records at its EndTransactionRecord, none of an aborted
/// one or of one still open (notes).
///
/// What Kafka's loader would fail on is an error finding (stderr in text)
/// and the record is not applied: a record that does not decode (an apiKey
/// no Kafka release klog knows has, a malformed field) or that Kafka's
/// replay refuses (a change for an unknown partition or broker epoch, a
/// transaction record out of place), or a version newer than klog knows
/// of a record holding a nested struct (its generated `read` refuses the
/// version). Any other newer version is read with the newest layout, as
/// Kafka does, and is a warning. Either
/// way the parts of the image the record may touch are marked incomplete
/// ("incomplete:" in text, `incomplete` in JSON). What Kafka's image takes
/// as written but no controller writes is a warning: a partition
/// registration with a negative partition, repeated replicas, a leader or
/// ISR member that is not a replica, a second PartitionRecord for a
/// partition; a TopicRecord for a name a topic has is an error (a
/// controller replaying the log stops). The snapshot read must
/// begin with a SNAPSHOT_HEADER control record (Kafka refuses it
/// otherwise: an error) and end with a SNAPSHOT_FOOTER (a warning: it may
/// have been cut short). Exit 1 when a batch or record of the metadata log
/// cannot be read or is refused, or the snapshot has no header; exit 2 when
/// DIR has no metadata log, or the log starts after offset 0 with no
/// snapshot before --as-of.
#[derive(Debug, clap::Args)]
pub struct MetadataArgs {
    /// A KRaft data directory (holding `__cluster_metadata-0`) or the
    /// `__cluster_metadata-0` folder itself.
    pub dir: PathBuf,
    /// The image before metadata offset N (`offset:N`): records at N and
    /// after are not applied, and only snapshots at or below N are used.
    #[arg(long, value_parser = parse_as_of, value_name = "offset:N")]
    pub as_of: Option<i64>,
    /// Only this topic (its partitions and configs).
    #[arg(long)]
    pub topic: Option<String>,
    /// Output format.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
    /// With --format csv: the table to print (default: brokers). Text
    /// shows every table, and JSON the whole image.
    #[arg(long, value_enum)]
    pub table: Option<MetadataTable>,
}

/// A table of the cluster image (`--table`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum MetadataTable {
    /// The registered brokers.
    #[default]
    Brokers,
    /// The KRaft controllers.
    Controllers,
    /// Every partition's registration (leader, epochs, replicas, ISR, directories).
    Partitions,
    /// The dynamic configs.
    Configs,
}

fn parse_as_of(s: &str) -> Result<i64, String> {
    let v = s.strip_prefix("offset:").unwrap_or(s);
    match v.parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(format!(
            "{s:?} is not offset:N with N a non-negative offset"
        )),
    }
}

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

/// One partition's registration.
#[derive(Serialize, JsonSchema)]
struct PartitionRow<'a> {
    topic: &'a str,
    partition: i32,
    topic_id: &'a Uuid,
    leader: i32,
    leader_epoch: i32,
    partition_epoch: i32,
    replicas: String,
    isr: String,
    directories: String,
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

/// The CSV row of a partition: its topic's name and id, then its JSON
/// fields (`partition` and the registration).
#[derive(Serialize, JsonSchema)]
struct PartitionCsv<'a> {
    topic: &'a str,
    topic_id: &'a Uuid,
    #[serde(flatten)]
    partition: &'a PartitionOut<'a>,
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

#[derive(Serialize, JsonSchema)]
struct BrokerRow<'a> {
    broker: i32,
    epoch: i64,
    rack: Option<&'a str>,
    fenced: bool,
    controlled_shutdown: bool,
    listeners: String,
    incarnation: &'a str,
    log_dirs: String,
    /// The cordoned log directories; `unknown` until the broker sends them.
    cordoned: String,
}

#[derive(Serialize, JsonSchema)]
struct ControllerRow<'a> {
    controller: i32,
    listeners: String,
    incarnation: &'a str,
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

fn report<'a>(
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
                let rows: Vec<PartitionCsv> = self
                    .topics
                    .iter()
                    .flat_map(|t| {
                        t.partitions.iter().map(|p| PartitionCsv {
                            topic: t.name,
                            topic_id: t.id,
                            partition: p,
                        })
                    })
                    .collect();
                Table::flat(&rows)
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

impl MetadataReport<'_> {
    /// One of the image's tables.
    fn table(&self, which: MetadataTable) -> Table {
        match which {
            MetadataTable::Brokers => {
                let brokers: Vec<BrokerRow> = self
                    .brokers
                    .iter()
                    .map(|b| BrokerRow {
                        broker: b.id,
                        epoch: b.epoch,
                        rack: b.rack.as_deref(),
                        fenced: b.fenced,
                        controlled_shutdown: b.in_controlled_shutdown,
                        listeners: listeners(&b.listeners),
                        incarnation: &b.incarnation_id,
                        log_dirs: list(&b.log_dirs),
                        cordoned: b
                            .cordoned_log_dirs
                            .as_deref()
                            .map_or_else(|| "unknown".to_string(), list),
                    })
                    .collect();
                Table::of(&brokers)
            }
            MetadataTable::Controllers => {
                let controllers: Vec<ControllerRow> = self
                    .controllers
                    .iter()
                    .map(|c| ControllerRow {
                        controller: c.id,
                        listeners: listeners(&c.listeners),
                        incarnation: &c.incarnation_id,
                    })
                    .collect();
                Table::of(&controllers)
            }
            MetadataTable::Partitions => {
                let partitions: Vec<PartitionRow> = self
                    .topics
                    .iter()
                    .flat_map(|t| {
                        t.partitions.iter().map(move |p| {
                            let r = p.registration;
                            PartitionRow {
                                topic: t.name,
                                partition: p.partition,
                                topic_id: t.id,
                                leader: r.leader,
                                leader_epoch: r.leader_epoch,
                                partition_epoch: r.partition_epoch,
                                replicas: list(&r.replicas),
                                isr: list(&r.isr),
                                directories: list(&r.directories),
                            }
                        })
                    })
                    .collect();
                Table::of(&partitions)
            }
            MetadataTable::Configs => Table::of(&self.configs).hide_empty(),
        }
    }
}

pub fn run(args: &MetadataArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        args.table.is_none() || args.format == Format::Csv,
        "--table chooses the table of --format csv: text shows every table, json the whole image"
    );
    let Some(folder) = metadata::metadata_folder(&args.dir) else {
        anyhow::bail!(
            "{}: no {} folder (not a KRaft data directory holding the metadata log)",
            args.dir.display(),
            metadata::METADATA_FOLDER
        );
    };
    let r = metadata::replay(&folder, args.as_of)?;
    emit(
        &report(
            &folder,
            &r,
            args.topic.as_deref(),
            args.table.unwrap_or_default(),
        ),
        args.format,
        out,
    )?;
    let failing = r
        .snapshot_findings
        .iter()
        .chain(&r.findings)
        .filter(|f| f.fails(kaen_log::log::findings::Severity::Error))
        .count();
    Ok(Outcome::from_count(failing as u64))
}
