//! `klog dump-segment`: print batches, records and index entries.

use std::io::IsTerminal;
use std::path::PathBuf;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::inspect::layout::sidecar::FileKind;
use kaen_log::log::{
    classify, parse_any_segment_name, parse_remote_segment_name, Partition, PathKind, Reads,
};

/// The suffixes of a segment's files that dump-segment reads by their kind.
const SEGMENT_SUFFIXES: [&str; 5] = ["log", "index", "timeindex", "txnindex", "snapshot"];

mod beside_files;
mod index_verify;
mod kafka_index;
mod log_dump;

use crate::report::segment_json::BatchJson;
pub use crate::report::segment_json::DumpDocument;
use log_dump::dump_log;

use crate::exit::Outcome;
use crate::report::document::{Entries, STREAM_TABLE};
use crate::report::kafka_dump::after_run::AfterRun;
use crate::report::kafka_dump::{self, Parser};
use crate::report::progress::Progress;
use crate::report::Output;
use crate::report::{formats, Format};
use beside_files::{dump_file, IndexCheck};
use kaen_log::inspect::select::RecordFilter;
use kaen_log::txn::Isolation;

/// Print the batches of a segment (with --records, every record), or the
/// entries of a `.index`, `.timeindex`, `.txnindex` or `.snapshot` file.
///
/// Records of the internal topics (`__offsets`, `__consumer_offsets`,
/// `__transaction_state`, `__cluster_metadata`, `__remote_log_metadata`) are decoded as well, and so
/// are the KRaft control records (leader change, snapshot header and
/// footer, kraft version, voters). A KRaft snapshot
/// (`<offset>-<epoch>.checkpoint`) or `bootstrap.checkpoint` is read as a log
/// of metadata records. Legacy (magic 0/1) compressed
/// wrappers are shown with their inner messages.
///
/// PATH is a `.log`, `.index`, `.timeindex`, `.txnindex` or `.snapshot` file, or a partition folder
/// (all its segments in offset order). Checkpoint files
/// (`replication-offset-checkpoint`, `recovery-point-offset-checkpoint`,
/// `log-start-offset-checkpoint`, `cleaner-offset-checkpoint`,
/// `leader-epoch-checkpoint`), `partition.metadata`, `meta.properties`,
/// `quorum-state` and `.kafka_cleanshutdown` are shown line by line with
/// what Kafka reads in each. A file with any other name is read
/// as a log (e.g. a batch captured to a `.bin` file). Text output has one
/// line per batch in the spirit of kafka-dump-log. `--format jsonl` prints
/// a header line and then one JSON object per batch (records included),
/// index entry or problem, each with its `type`; `--format json` prints the
/// same objects as the `entries` of one document. `--format csv` prints one
/// row per batch: the `batch` and `legacy_batch` objects of the JSON lines,
/// `type` first, a batch's `records` as their JSON (empty with
/// --batches-only); index entries and problems have no row (problems are
/// on stderr, as always).
///
/// Exit 1 when a batch fails its CRC or does not decode, the file ends in a
/// torn tail, or a snapshot does not begin with a SNAPSHOT_HEADER; the
/// problem is described on stderr (as is a snapshot without a
/// SNAPSHOT_FOOTER last, which does not change the exit code).
#[derive(Debug, Clone, clap::Args)]
// A flag given twice is taken once, as kafka-dump-log (joptsimple) takes it.
#[command(args_override_self = true)]
pub struct DumpSegmentArgs {
    /// Segment files, index files or partition folders.
    #[arg(required_unless_present = "files")]
    pub paths: Vec<PathBuf>,
    /// The same as PATHS, comma-separated (kafka-dump-log's spelling).
    #[arg(long, value_delimiter = ',', value_name = "PATH,...")]
    pub files: Vec<PathBuf>,
    /// Output format (csv: one row per batch, the JSON lines' batch
    /// objects).
    #[arg(long, value_parser = formats(STREAM_TABLE), default_value = "text")]
    pub format: Format,
    /// Text: add one line per record.
    #[arg(long)]
    pub records: bool,
    /// How to decode record keys and values: by the partition folder's
    /// topic (auto), or as one internal topic's whatever the folder (for a
    /// segment copied out of its folder), or not at all.
    #[arg(long, value_enum, default_value_t = Decoder::Auto)]
    pub decoder: Decoder,
    /// Text in kafka-dump-log's line format (`--deep-iteration
    /// --print-data-log`): a `baseOffset: …` line per batch (`offset: …`
    /// per legacy entry) and a `| offset: … key: … payload: …` line per
    /// record, so its parsers keep working. Keys and values are read as
    /// kafka-dump-log reads them without a decoder flag (UTF-8), unless
    /// --decoder or a decoder flag names an internal topic.
    /// As kafka-dump-log does, the records of a batch that fails its CRC
    /// are shown too (its line says `isvalid: false`); klog's own forms
    /// show only records a valid CRC vouches for.
    #[arg(long)]
    pub print_data_log: bool,
    /// kafka-dump-log's lines with each record's metadata, without its key
    /// and payload (unless --print-data-log or a decoder flag is given too).
    #[arg(long)]
    pub deep_iteration: bool,
    /// The Kafka release whose kafka-dump-log the kafka-dump-log lines
    /// follow where releases differ (3.9 to 4.4): 3.9 and 4.0 print
    /// `__transaction_state` records as text, later releases as JSON; 4.4
    /// names a transaction's status; 4.1 and later print a leader change's
    /// JSON; up to 4.2 a legacy record's line ends `crc: N}`.
    #[arg(long, value_name = "X.Y", default_value = "4.4", value_parser = kafka_dump::release::parse)]
    pub kafka_release: kafka_dump::Tool,
    /// With --deep-iteration only: records print without key and payload.
    #[arg(skip)]
    pub metadata_only: bool,
    /// `--print-data-log --decoder offsets` (kafka-dump-log's spelling).
    /// Of several decoder flags, the first of offsets, transaction log,
    /// cluster metadata, remote log metadata and share group state wins
    /// (`DumpLogSegmentsOptions.messageParser`).
    #[arg(long, conflicts_with = "decoder")]
    pub offsets_decoder: bool,
    /// `--print-data-log --decoder transactions` (kafka-dump-log's spelling).
    #[arg(long, conflicts_with = "decoder")]
    pub transaction_log_decoder: bool,
    /// `--print-data-log --decoder metadata` (kafka-dump-log's spelling).
    #[arg(long, conflicts_with = "decoder")]
    pub cluster_metadata_decoder: bool,
    /// `--print-data-log --decoder share` (kafka-dump-log's spelling).
    #[arg(long, conflicts_with = "decoder")]
    pub share_group_state_decoder: bool,
    /// `--print-data-log --decoder remote-log-metadata` (kafka-dump-log's
    /// spelling): each record as the `toString` of what Kafka's
    /// `RemoteLogMetadataSerde` makes of it.
    #[arg(long, conflicts_with = "decoder")]
    pub remote_log_metadata_decoder: bool,
    /// kafka-dump-log's `--key-decoder-class`: print each record's key as
    /// this Kafka decoder reads it (org.apache.kafka.tools.api.StringDecoder,
    /// the default without a name, IntegerDecoder or LongDecoder; with
    /// --kafka-release 3.9 also their kafka.serializer names). Implies
    /// --print-data-log; a decoder flag wins over it. Where the decoder
    /// throws (a key shorter than it reads), the dump stops there as
    /// kafka-dump-log's does, exit 1.
    #[arg(long, value_name = "CLASS", num_args = 0..=1,
          default_missing_value = kafka_dump::decoders::STRING_DECODER)]
    pub key_decoder_class: Option<String>,
    /// kafka-dump-log's `--value-decoder-class`: as --key-decoder-class,
    /// for each record's value.
    #[arg(long, value_name = "CLASS", num_args = 0..=1,
          default_missing_value = kafka_dump::decoders::STRING_DECODER)]
    pub value_decoder_class: Option<String>,
    /// The decoder classes, resolved by [`run`].
    #[arg(skip)]
    pub classes: Option<(kafka_dump::ClassDecoder, kafka_dump::ClassDecoder)>,
    /// For `.index` and `.timeindex` files: only run the check a broker runs
    /// on an index it opens (`OffsetIndex.sanityCheck`,
    /// `TimeIndex.sanityCheck`) and say whether it passed. Exit 1 if not.
    /// With --verify-index-only too, this check is the one run, as in
    /// kafka-dump-log.
    #[arg(long)]
    pub index_sanity_check: bool,
    /// For `.index` and `.timeindex` files: check every entry against the
    /// log beside it, as kafka-dump-log does, and print no entry: the
    /// disagreements go to stderr after every file is read, in
    /// kafka-dump-log's words (`Mismatches in :FILE`, `Found timestamp
    /// mismatch in :FILE`, ...). Exit 1 if there is any.
    #[arg(long)]
    pub verify_index_only: bool,
    /// kafka-dump-log's `--max-message-size`: the bytes read at each
    /// position an offset index names, for the batch there; a batch larger
    /// than this stops the index's dump (kafka-dump-log throws there), exit 1.
    #[arg(long, value_name = "BYTES", default_value_t = 5 * 1024 * 1024,
          value_parser = clap::value_parser!(i32).range(1..))]
    pub max_message_size: i32,
    /// JSON: omit the records array.
    #[arg(long)]
    pub batches_only: bool,
    /// Skip batches that end before this offset (uses the offset index to
    /// seek), and records before it.
    #[arg(long)]
    pub from_offset: Option<i64>,
    /// Stop at the first batch that starts after this offset; records after
    /// it are not shown.
    #[arg(long, value_name = "OFFSET")]
    pub to_offset: Option<i64>,
    /// Records stamped before this time (epoch ms, ISO-8601, or now less a
    /// duration: now-PT1H) are not shown, nor are batches whose max
    /// timestamp is before it.
    #[arg(long, value_name = "TIME", value_parser = kaen_log::format::time::parse_when)]
    pub from_time: Option<kaen_log::format::time::When>,
    /// Records stamped after this time (as --from-time) are not shown, nor
    /// are batches whose every record is after it.
    #[arg(long, value_name = "TIME", value_parser = kaen_log::format::time::parse_when)]
    pub to_time: Option<kaen_log::format::time::When>,
    /// Now, for --from-time and --to-time given as now less a duration
    /// (epoch ms or ISO-8601; default: the clock).
    #[arg(long, value_name = "MS", value_parser = kaen_log::format::time::parse_instant_ms)]
    pub now_ms: Option<i64>,
    /// Only records whose key is exactly K (UTF-8); batches without such a
    /// record are not shown.
    #[arg(long, value_name = "K")]
    pub key: Option<String>,
    /// Only records whose key or value contains PATTERN (a plain byte
    /// string); batches without such a record are not shown.
    #[arg(long, value_name = "PATTERN")]
    pub grep: Option<String>,
    /// Read only the first N bytes of each file (kafka-dump-log's
    /// --max-bytes): a batch that does not end within them is not shown.
    #[arg(long, value_name = "N")]
    pub max_bytes: Option<u64>,
    /// With the kafka-dump-log lines (--print-data-log, --deep-iteration
    /// or a decoder flag): omit the record metadata, print key and payload
    /// only (and an empty line for a control record).
    #[arg(long)]
    pub skip_record_metadata: bool,
    /// Stop after this many batches of each path (a folder's segments
    /// together).
    #[arg(long)]
    pub max_batches: Option<u64>,
    /// The most bytes one batch's records may decompress to.
    #[arg(long, default_value_t = DecodeLimits::default().max_decompressed)]
    pub max_decompressed_bytes: u64,
    /// Show every field of each batch and record with its position and raw
    /// bytes (an annotated byte layout, for learning the format); control
    /// records, the keys and values of the offsets topic and of
    /// `__share_group_state`, and KRaft metadata records field by field; of
    /// a `.index`, `.timeindex`, `.txnindex` or `.snapshot` file every
    /// entry field by field, with what Kafka does with each value.
    #[arg(long)]
    pub layout: bool,
    /// read-uncommitted (everything), or read-committed: show what a
    /// read_committed consumer sees (records of
    /// aborted transactions hidden, control batches hidden, stop at the last
    /// stable offset).
    #[arg(long, value_parser = crate::cmd::args::isolation, default_value = "read-uncommitted")]
    pub isolation: Isolation,
    /// Threads to run on (default, and at most: the cores; more is clamped,
    /// with a note on stderr). A segment of 16 MiB or more
    /// is read ahead on the spare ones, which in JSON output also render
    /// its uncompressed batches; with 1 everything runs on one thread.
    /// The output is the same whatever the number.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..))]
    pub threads: Option<u16>,
    /// How segment files are read (the output is the same whichever).
    #[arg(long, value_enum, default_value_t)]
    pub reads: crate::cmd::args::ReadsArg,
    /// Where the walks count the bytes they read, when progress is shown.
    #[arg(skip)]
    pub meter: Option<&'static kaen_log::log::walk::Meter>,
}

/// The decoder of record keys and values (`--decoder`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Decoder {
    /// By the partition folder's topic.
    Auto,
    /// `__consumer_offsets` (and klog's `__offsets`) records.
    Offsets,
    /// `__transaction_state` records.
    Transactions,
    /// KRaft metadata records (`__cluster_metadata`).
    Metadata,
    /// `__share_group_state` records.
    Share,
    /// `__remote_log_metadata` records (tiered storage).
    RemoteLogMetadata,
    /// None: keys and values as bytes.
    None,
}

impl DumpSegmentArgs {
    /// How segments are read: `--reads`, on `--threads` cores (clamped
    /// by [`run`]) or all of them.
    fn read_mode(&self) -> Reads {
        match (Reads::from(self.reads), self.threads) {
            (Reads::Auto, Some(n)) => Reads::Cores(usize::from(n)),
            (reads, _) => reads,
        }
    }

    /// kafka-dump-log's decoder flags in klog's terms: each sets
    /// `--decoder` and, as in `DumpLogSegmentsOptions.shouldPrintDataLog`,
    /// `--print-data-log`; `--deep-iteration` alone is the same lines
    /// without keys and payloads (`isDeepIteration` without `printContents`).
    fn with_kafka_decoders(&self) -> DumpSegmentArgs {
        let mut args = self.clone();
        let chosen = [
            (self.offsets_decoder, Decoder::Offsets),
            (self.transaction_log_decoder, Decoder::Transactions),
            (self.cluster_metadata_decoder, Decoder::Metadata),
            (self.remote_log_metadata_decoder, Decoder::RemoteLogMetadata),
            (self.share_group_state_decoder, Decoder::Share),
        ]
        .into_iter()
        .find_map(|(set, d)| set.then_some(d));
        if let Some(d) = chosen {
            args.decoder = d;
            args.print_data_log = true;
        }
        if self.key_decoder_class.is_some() || self.value_decoder_class.is_some() {
            args.print_data_log = true;
        }
        if args.deep_iteration && !args.print_data_log {
            args.print_data_log = true;
            args.metadata_only = true;
        }
        args
    }

    /// How kafka-dump-log's lines print records.
    fn kafka_lines(&self) -> kafka_dump::Lines {
        kafka_dump::Lines {
            tool: self.kafka_release,
            contents: !self.metadata_only,
            skip_metadata: self.skip_record_metadata,
            parser: match self.decoder {
                Decoder::Offsets => Parser::Offsets,
                Decoder::Transactions => Parser::TransactionLog,
                Decoder::Metadata => Parser::ClusterMetadata,
                Decoder::Share => Parser::ShareGroupState,
                Decoder::RemoteLogMetadata => Parser::RemoteLogMetadata,
                // kafka-dump-log has no automatic decoder.
                Decoder::Auto | Decoder::None => match self.classes {
                    Some((key, value)) => Parser::Classes { key, value },
                    None => Parser::Strings,
                },
            },
        }
    }

    /// The index check asked for instead of an index's entries, if any.
    fn index_check(&self) -> Option<IndexCheck> {
        if self.index_sanity_check {
            Some(IndexCheck::Sanity)
        } else if self.verify_index_only {
            Some(IndexCheck::Verify)
        } else {
            None
        }
    }
}

pub fn run(args: &DumpSegmentArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let mut args = args.with_kafka_decoders();
    if args.key_decoder_class.is_some() || args.value_decoder_class.is_some() {
        let named = |name: &Option<String>| {
            let name = name
                .as_deref()
                .unwrap_or(kafka_dump::decoders::STRING_DECODER);
            kafka_dump::ClassDecoder::named(name, args.kafka_release).map_err(anyhow::Error::msg)
        };
        args.classes = Some((
            named(&args.key_decoder_class)?,
            named(&args.value_decoder_class)?,
        ));
    }
    if args.skip_record_metadata && !args.print_data_log {
        anyhow::bail!(
            "--skip-record-metadata is for kafka-dump-log's lines: give --print-data-log, \
             --deep-iteration or a decoder flag"
        );
    }
    // One now for every batch (a time given as now less a duration).
    args.now_ms.get_or_insert_with(crate::cmd::now_ms);
    if let Some(n) = args.threads {
        // At most the cores (said once); a clamped count still fits.
        let cores = crate::cmd::clamp_to_cores("--threads", usize::from(n));
        args.threads = Some(u16::try_from(cores).unwrap_or(n));
    }
    // Progress only when the text goes to a file or a pipe, not the terminal.
    let progress = Progress::over(
        || kaen_log::log::dir::log_bytes(&args.paths),
        out.shows_progress(args.format == Format::Text) && !std::io::stdout().is_terminal(),
    );
    args.meter = Progress::meter_of(&progress);
    let args = &args;
    // Paths that cannot be dumped at all are refused before any output
    // starts (exit 2, nothing on stdout).
    for path in args.paths.iter().chain(&args.files) {
        if classify(path).with_context(|| format!("dump-segment {}", path.display()))?
            == PathKind::DataDir
        {
            refuse_data_dir(path)?;
        }
    }
    if args.format == Format::Csv {
        // The CSV rows are the JSON lines' batches.
        out.start_csv_rows(csv_columns(), &["batch", "legacy_batch"])?;
        let lines = DumpSegmentArgs {
            format: Format::Jsonl,
            ..args.clone()
        };
        let mut sink = Entries::start(Format::Jsonl, out, "dump-segment")?;
        let result = dump_paths(&lines, (&mut sink, &mut AfterRun::default()), out);
        drop(progress);
        sink.finish(out)?;
        out.end_csv_rows()?;
        return Ok(Outcome::from_count(result?));
    }
    let mut sink = Entries::start(args.format, out, "dump-segment")?;
    // The JSON document is closed even when a path cannot be read (exit 2).
    let mut after = AfterRun::new(args.kafka_release);
    let result = dump_paths(args, (&mut sink, &mut after), out);
    let stopped = result.as_ref().is_err_and(|e| e.is::<KafkaStops>());
    let result = stopped_as_kafka(result);
    drop(progress);
    sink.finish(out)?;
    // kafka-dump-log's words after every file, on stderr (not after a stop:
    // the tool had thrown).
    if !after.is_empty() && result.as_ref().is_ok_and(|_| !stopped) {
        out.flush()?;
        after.write(&mut std::io::stderr().lock())?;
    }
    Ok(Outcome::from_count(result?))
}

/// The columns of `--format csv`: `type`, a v2 batch's fields (a legacy
/// entry's are among them), then `records`.
fn csv_columns() -> Vec<String> {
    let mut columns = vec!["type".to_string()];
    columns.extend(crate::report::Table::flat_fields::<BatchJson>());
    columns.push("records".to_string());
    columns
}

/// dump-segment reads partition folders and files, not whole data directories.
fn refuse_data_dir(path: &std::path::Path) -> anyhow::Result<()> {
    // Says "holds no partition folders" for a folder that is not a data directory either.
    kaen_log::log::DataDir::open(path)?;
    anyhow::bail!(
        "{}: is a data directory; give a partition folder or a segment file",
        path.display()
    )
}

/// Where kafka-dump-log throws and stops (a decoder class on a record, an
/// index entry whose batch it cannot read): klog stops there too, saying
/// where and why, exit 1 (not 2: the output so far is what it is).
#[derive(Debug)]
pub(crate) struct KafkaStops {
    file: String,
    position: u64,
    what: String,
    /// The problems klog's own rules find there (a decoder class that
    /// cannot read a record is one; an index entry Kafka's tool cannot
    /// follow is one only where the index is wrong by the broker's rules).
    problems: u64,
}

impl std::fmt::Display for KafkaStops {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "{}: byte {}: {}; kafka-dump-log stops here, and so does klog",
            crate::report::table::escape_cell(&self.file),
            self.position,
            self.what
        )
    }
}

impl std::error::Error for KafkaStops {}

/// A stop where kafka-dump-log's ends ([`KafkaStops`]) is said on stderr;
/// the exit is 1 where klog's rules find a problem there.
fn stopped_as_kafka(result: anyhow::Result<u64>) -> anyhow::Result<u64> {
    match result.map_err(|e| e.downcast::<KafkaStops>()) {
        Ok(problems) => Ok(problems),
        Err(Ok(threw)) => {
            crate::report::say!("{threw}");
            Ok(threw.problems)
        }
        Err(Err(e)) => Err(e),
    }
}

fn dump_paths(
    args: &DumpSegmentArgs,
    (sink, after): (&mut Entries, &mut AfterRun),
    out: &mut Output,
) -> anyhow::Result<u64> {
    let mut problems = 0;
    for path in args.paths.iter().chain(&args.files) {
        // --max-batches counts per path, across a folder's segments.
        let mut budget = args.max_batches;
        let budget = &mut budget;
        match classify(path).with_context(|| format!("dump-segment {}", path.display()))? {
            PathKind::Partition => {
                let p = Partition::open(path)?;
                for seg in &p.segments {
                    problems += dump_log(
                        &seg.log,
                        Some(seg.base_offset),
                        args,
                        budget,
                        (sink, after),
                        out,
                    )?;
                }
            }
            PathKind::DataDir => refuse_data_dir(path)?,
            PathKind::File => {
                let file_name = path.file_name().and_then(|n| n.to_str());
                // Files beside a log: field by field with --layout; text
                // files (checkpoints, metadata) have only that view.
                if let Some(kind) = file_name
                    .and_then(FileKind::of)
                    .filter(|k| args.layout || !k.has_entries())
                {
                    problems += beside_files::dump_layout(path, kind, sink, out)?;
                    continue;
                }
                let name = file_name.and_then(parse_any_segment_name);
                if let Some((_, suffix)) = name.filter(|(_, s)| !SEGMENT_SUFFIXES.contains(s)) {
                    // A remote segment's file of a kind klog does not know
                    // (a plugin's manifest, say) is no log either.
                    if file_name.is_some_and(|n| parse_remote_segment_name(n).is_some()) {
                        anyhow::bail!(
                            "{}: a remote segment's .{suffix} file, which klog cannot read (it reads \
                             .log, .index, .timeindex, .txnindex, .snapshot and .leader_epoch_checkpoint)",
                            path.display()
                        );
                    }
                }
                problems += dump_file(path, name, args, budget, (sink, after), out)?;
                if kaen_log::metadata::is_snapshot_file(path) {
                    for f in kaen_log::metadata::check_snapshot(path)? {
                        crate::report::say!("{f}");
                        problems += u64::from(f.fails(kaen_log::log::findings::Severity::Error));
                    }
                }
            }
        }
    }
    Ok(problems)
}

impl DumpSegmentArgs {
    /// --from-time as an instant (now less a duration against --now-ms or the clock).
    fn start_ms(&self) -> Option<i64> {
        self.from_time.map(|w| w.at(self.now()))
    }

    /// --to-time as an instant.
    fn end_ms(&self) -> Option<i64> {
        self.to_time.map(|w| w.at(self.now()))
    }

    fn now(&self) -> i64 {
        self.now_ms.unwrap_or_else(crate::cmd::now_ms)
    }

    /// Which batches and records are shown: --from-offset, --to-offset,
    /// the time range, --key, --grep and --max-bytes.
    fn record_filter(&self) -> RecordFilter {
        RecordFilter::new(
            (self.from_offset, self.to_offset),
            (self.start_ms(), self.end_ms()),
            (
                self.key.as_ref().map(|k| k.as_bytes().to_vec()),
                self.grep.as_ref().map(|g| g.as_bytes().to_vec()),
            ),
            self.max_bytes,
        )
    }
}

impl crate::cmd::CommandEntry for DumpSegmentArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[
        (
            "klog dump-segment --records DIR/orders-0/00000000000000000000.log",
            "one line per batch and per record",
        ),
        (
            "klog dump-segment --print-data-log DIR/orders-0",
            "kafka-dump-log's line format, for its parsers",
        ),
        (
            "klog dump-segment --format jsonl --from-offset 100 --max-batches 10 DIR/orders-0",
            "ten batches from offset 100 as JSON lines",
        ),
        (
            "klog dump-segment --layout DIR/__consumer_offsets-7/00000000000000000000.log",
            "every field with its byte position",
        ),
    ];
    const SEE_ALSO: &'static [&'static str] = &["verify-crc", "stats", "records(7)", "kafka(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("../generate/pages/dump-segment.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        vec![("dump-segment", schemars::schema_for!(DumpDocument))]
    }
}
