//! `klog commit`: append an offset commit through the append path.

use std::io::Write;
use std::path::PathBuf;

use anyhow::bail;
use kaen_log::format::BatchSpec;
use kaen_log::inspect::reset::{clamp, Catalog};
use kaen_log::offsets::commit_record;
use kaen_log::offsets::write::Replicas;

use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::STREAM_TABLE;
use crate::report::table::escape_cell;
use crate::report::written::{Written, WriterReport, WrittenRows};
use crate::report::{emit, formats, Format, Output, Report};

/// Set a group's committed offset offline: append an OffsetCommit record
/// (key type 1; value v4 with the topic's id when the KRaft metadata.version
/// is 4.1-IV0 or later, as Kafka 4.1 and later write it, else v3, as 4.0
/// wrote it) to the offsets partition that owns the group, through the same
/// append path as everything else.
///
/// The offset is the next record the group will read (last processed + 1).
/// The topic and partition must exist (by the KRaft metadata, else the
/// partition folders), and the offset is clamped into [log start, high
/// watermark] with a note, as `reset-offsets` does. Several DIRs are the
/// log directories of the offsets partition's replicas: each is locked and
/// checked, then gets the same batch.
#[derive(Debug, clap::Args)]
pub struct CommitArgs {
    /// This broker's log directories (its log.dirs, JBOD included); other
    /// brokers' replicas with --replica DIR.
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// The consumer group whose offset is set.
    #[arg(long, short = 'g')]
    pub group: String,
    /// The topic the group reads.
    #[arg(long, short = 't')]
    pub topic: String,
    /// The partition of that topic.
    #[arg(long, short = 'p')]
    pub partition: i32,
    /// The committed offset: the next offset the group will read.
    #[arg(long, allow_negative_numbers = true)]
    pub offset: i64,
    /// Commit metadata.
    #[arg(long, default_value = "")]
    pub metadata: String,
    /// The leader epoch of the committed record (-1 = unknown).
    #[arg(long, default_value_t = -1, allow_negative_numbers = true)]
    pub committed_leader_epoch: i32,
    /// The commit timestamp (epoch ms or ISO-8601); default: now.
    #[arg(long, value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// Partitions of __consumer_offsets (offsets.topic.num.partitions), to
    /// place the group in a Kafka log directory. Taken from the KRaft
    /// metadata when the directory has it; without either, refused.
    #[arg(long)]
    pub offsets_partitions: Option<i32>,
    /// Write the commit inside a transaction of this producer id (it then
    /// counts only after a COMMIT marker: `klog produce --control commit`).
    #[arg(long)]
    pub producer_id: Option<i64>,
    /// The producer epoch of --producer-id.
    #[arg(long, default_value_t = 0)]
    pub producer_epoch: i16,
    /// Output format of what was written.
    #[arg(long, value_parser = formats(STREAM_TABLE), default_value = "text")]
    pub format: Format,
    #[command(flatten)]
    pub write: crate::cmd::args::WriteArgs,
    #[command(flatten)]
    pub replicas: crate::cmd::args::ReplicaArgs,
}

/// One offset commit written.
#[derive(Serialize, JsonSchema)]
pub struct CommitRow {
    group: String,
    topic: String,
    partition: i32,
    /// The offset committed: the next the group will read (clamped into
    /// the log).
    new_offset: i64,
    /// Why the offset asked for was changed, if it was.
    note: Option<String>,
    /// The producer whose transaction holds the commit (it counts only
    /// after a COMMIT marker); null for a plain commit.
    producer_id: Option<i64>,
    /// The partition the commit went to (`__consumer_offsets-1`).
    log_partition: String,
    /// The offset it got there.
    log_offset: i64,
}

/// The commit written: `klog commit`'s document is a
/// [`WriterReport`] of them.
#[derive(Serialize, JsonSchema)]
pub struct Commits {
    commits: Vec<CommitRow>,
}

pub type CommitReport = WriterReport<Commits>;

impl WrittenRows for Commits {
    const COMMAND: &'static str = "commit";
    type Row = CommitRow;

    fn rows(&self) -> &[CommitRow] {
        &self.commits
    }

    /// `G T-P -> N committed at __offsets-0 offset O`, names escaped.
    fn line(c: &CommitRow) -> String {
        format!(
            "{} {}-{} -> {} committed at {} offset {}{}",
            escape_cell(&c.group),
            escape_cell(&c.topic),
            c.partition,
            c.new_offset,
            c.log_partition,
            c.log_offset,
            if c.producer_id.is_some() {
                " (transactional: pending until a COMMIT marker)"
            } else {
                ""
            }
        )
    }
}

pub fn run(args: &CommitArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    if args.offset < 0 {
        bail!(
            "--offset {} is negative: a committed offset is the next offset to read (0 or more)",
            args.offset
        );
    }
    kaen_log::offsets::check_commit_strings(&args.group, &args.topic, &args.metadata)?;
    // The topic and partition must exist (the metadata, else the folders
    // say), and the offset is clamped into the log as reset-offsets does.
    let catalog = Catalog::open(&args.dirs)?;
    let (ends, _) = catalog.ends(&args.topic, args.partition)?;
    let (offset, note) = clamp(&args.topic, args.partition, args.offset, &ends);
    if let Some(note) = &note {
        crate::report::say!("note: {note}");
    }
    let now = args.now_ms.unwrap_or_else(crate::cmd::now_ms);
    let dirs = args
        .replicas
        .write_dirs(&args.dirs, &args.group, args.offsets_partitions)?;
    let mut replicas = Replicas::open(
        &dirs,
        &args.group,
        args.offsets_partitions,
        false,
        false,
        args.replicas.policy(),
        &|dir, t, image| args.write.append_config(image, (dir, &t.topic), now, true),
    )?;
    let target = replicas.target.clone();
    let format = kaen_log::offsets::commit_format(&args.dirs, &args.topic)?;
    let record = commit_record(
        &args.group,
        &args.topic,
        args.partition,
        offset as u64,
        args.committed_leader_epoch,
        &args.metadata,
        now,
        format,
    );
    let spec = match args.producer_id {
        Some(pid) => BatchSpec {
            transactional: true,
            producer_id: pid,
            producer_epoch: args.producer_epoch,
            base_sequence: 0,
            ..BatchSpec::default()
        },
        None => BatchSpec::default(),
    };
    // Every replica is locked and checked by now: refuse a write that leaves some out.
    args.replicas.say_warning(&replicas);
    let records = [record];
    replicas.check_room(&records)?;
    let (offsets, dirs) = replicas.append(&spec, &records)?;
    replicas.close()?;
    let log_partition = format!("{}-{}", target.topic, target.partition);
    let written = Written::batch(&dirs, &log_partition, &offsets);
    for w in &written {
        w.say(&crate::report::plural(
            records.len() as u64,
            "offset commit",
            "offset commits",
        ));
    }
    let report = CommitReport {
        group: args.group.clone(),
        executed: true,
        rows: Commits {
            commits: vec![CommitRow {
            group: args.group.clone(),
            topic: args.topic.clone(),
            partition: args.partition,
            new_offset: offset,
            note,
            producer_id: args.producer_id,
            log_partition,
            log_offset: *offsets.start(),
            }],
        },
        written,
    };
    if args.format == Format::Text {
        // Exactly the line, as it always was (escaped as it is built).
        out.write_all(report.text(out.fit()).as_bytes())?;
    } else {
        emit(&report, args.format, out)?;
    }
    Ok(Outcome::Clean)
}

impl crate::cmd::CommandEntry for CommitArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog commit --group billing --topic orders --partition 0 --offset 42 DIR",
        "append one offset commit",
    )];
    const SEE_ALSO: &'static [&'static str] = &["tombstone", "replay-offsets", "lag", "writers(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/commit.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<CommitReport>()]
    }
}
