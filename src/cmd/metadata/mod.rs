//! `klog metadata`: the KRaft cluster image, replayed offline.

use std::path::PathBuf;

use kaen_log::metadata;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::{emit, formats, Format, Output};

mod image_document;
pub use image_document::MetadataReport;

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
        &image_document::report(
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

impl crate::cmd::CommandEntry for MetadataArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog metadata --topic orders DIR",
        "one topic's partitions and configs from the metadata log",
    )];
    const SEE_ALSO: &'static [&'static str] = &["info", "groups", "records(7)", "kafka(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("../generate/pages/metadata.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<MetadataReport<'static>>()]
    }
}
