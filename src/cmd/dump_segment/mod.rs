//! `klog dump-segment`: print batches, records and index entries.

use std::io::{IsTerminal, Write};
use std::path::{Path, PathBuf};

use anyhow::Context;
use kaen_log::format::control::{self, ControlRecord};
use kaen_log::format::record::RecordIter;
use kaen_log::format::{DecodeLimits, Entry, RecordView};
use kaen_log::inspect::layout::sidecar::FileKind;
use kaen_log::inspect::layout::{batch_layout, Topic};
use kaen_log::log::{classify, parse_segment_name, Partition, PathKind, Policy, Reads};
use kaen_log::metadata::records::decode_control_value;

mod json;

pub use json::DumpDocument;
use json::{BatchJson, JsonLine, LayoutHead, LegacyHead, RecordKind, RenderJson};

use crate::exit::Outcome;
use crate::report::document::{Entries, STREAM_TABLE};
use crate::report::indexes::IndexCheck;
use crate::report::internal::{self, Internal};
use crate::report::progress::Progress;
use crate::report::table::escape_cell;
use crate::report::{formats, kafka_dump, Format};
use crate::report::{indexes, write_text_bytes, Output};
use kaen_log::txn::Isolation;

/// Print the batches of a segment (with --records, every record), or the
/// entries of a `.index`, `.timeindex`, `.txnindex` or `.snapshot` file.
///
/// Records of the internal topics (`__offsets`, `__consumer_offsets`,
/// `__transaction_state`, `__cluster_metadata`) are decoded as well, and so
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
    /// --print-data-log`): a `baseOffset: …` line per batch and a `| offset:
    /// … key: … payload: …` line per record, so its parsers keep working.
    #[arg(long, alias = "deep-iteration")]
    pub print_data_log: bool,
    /// `--print-data-log --decoder offsets` (kafka-dump-log's spelling).
    #[arg(long, group = "kafka_decoder", conflicts_with = "decoder")]
    pub offsets_decoder: bool,
    /// `--print-data-log --decoder transactions` (kafka-dump-log's spelling).
    #[arg(long, group = "kafka_decoder", conflicts_with = "decoder")]
    pub transaction_log_decoder: bool,
    /// `--print-data-log --decoder metadata` (kafka-dump-log's spelling).
    #[arg(long, group = "kafka_decoder", conflicts_with = "decoder")]
    pub cluster_metadata_decoder: bool,
    /// `--print-data-log --decoder share` (kafka-dump-log's spelling).
    #[arg(long, group = "kafka_decoder", conflicts_with = "decoder")]
    pub share_group_state_decoder: bool,
    /// For `.index` and `.timeindex` files: only run the check a broker runs
    /// on an index it opens (`OffsetIndex.sanityCheck`,
    /// `TimeIndex.sanityCheck`) and say whether it passed. Exit 1 if not.
    #[arg(long, conflicts_with = "verify_index_only")]
    pub index_sanity_check: bool,
    /// For `.index` and `.timeindex` files: check every entry against the
    /// log beside it and print only the entries that disagree (as
    /// verify-crc does), not the entries. Exit 1 if any does.
    #[arg(long)]
    pub verify_index_only: bool,
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
    /// With --print-data-log: omit the record metadata, print key and payload only.
    #[arg(long, requires = "print_data_log")]
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
    /// `--print-data-log`.
    fn with_kafka_decoders(&self) -> DumpSegmentArgs {
        let mut args = self.clone();
        let chosen = [
            (self.offsets_decoder, Decoder::Offsets),
            (self.transaction_log_decoder, Decoder::Transactions),
            (self.cluster_metadata_decoder, Decoder::Metadata),
            (self.share_group_state_decoder, Decoder::Share),
        ]
        .into_iter()
        .find_map(|(set, d)| set.then_some(d));
        if let Some(d) = chosen {
            args.decoder = d;
            args.print_data_log = true;
        }
        args
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
    // One now for every batch (a time given as now less a duration).
    args.now_ms.get_or_insert_with(crate::cmd::now_ms);
    if let Some(n) = args.threads {
        // At most the cores (said once); a clamped count still fits.
        let cores = crate::cmd::clamp_to_cores("--threads", usize::from(n));
        args.threads = Some(u16::try_from(cores).unwrap_or(n));
    }
    // Progress only when the text goes to a file or a pipe, not the terminal.
    let progress = Progress::over(
        &args.paths,
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
        let result = dump_paths(&lines, &mut sink, out);
        drop(progress);
        sink.finish(out)?;
        out.end_csv_rows()?;
        return Ok(Outcome::from_count(result?));
    }
    let mut sink = Entries::start(args.format, out, "dump-segment")?;
    // The JSON document is closed even when a path cannot be read (exit 2).
    let result = dump_paths(args, &mut sink, out);
    drop(progress);
    sink.finish(out)?;
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

fn dump_paths(args: &DumpSegmentArgs, sink: &mut Entries, out: &mut Output) -> anyhow::Result<u64> {
    let mut problems = 0;
    for path in args.paths.iter().chain(&args.files) {
        // --max-batches counts per path, across a folder's segments.
        let mut budget = args.max_batches;
        let budget = &mut budget;
        match classify(path).with_context(|| format!("dump-segment {}", path.display()))? {
            PathKind::Partition => {
                let p = Partition::open(path)?;
                for seg in &p.segments {
                    problems += dump_log(&seg.log, Some(seg.base_offset), args, budget, sink, out)?;
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
                    problems += indexes::dump_file_layout(path, kind, sink, out)?;
                    continue;
                }
                let name = file_name.and_then(parse_segment_name);
                problems += match (name, args.index_check()) {
                    (Some((base, "index")), Some(check)) => {
                        indexes::check_index(path, base, false, check, sink, out)?
                    }
                    (Some((base, "timeindex")), Some(check)) => {
                        indexes::check_index(path, base, true, check, sink, out)?
                    }
                    (name, _) => match name {
                        Some((base, "index")) => indexes::dump_index(path, base, false, sink, out)?,
                        Some((base, "timeindex")) => {
                            indexes::dump_index(path, base, true, sink, out)?
                        }
                        Some((_, "txnindex")) => indexes::dump_txnindex(path, sink, out)?,
                        Some((offset, "snapshot")) => {
                            indexes::dump_snapshot(path, offset, sink, out)?
                        }
                        Some((base, "log")) => dump_log(path, Some(base), args, budget, sink, out)?,
                        _ => dump_log(path, None, args, budget, sink, out)?,
                    },
                };
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

fn dump_log(
    path: &Path,
    base: Option<i64>,
    args: &DumpSegmentArgs,
    budget: &mut Option<u64>,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    // The file as a partition of one segment, with its offset index when it
    // has one beside it, so --from-offset starts where the index says.
    let mut one = Partition::single_file(path, base.unwrap_or(0));
    if let Some(seg) = one.segments.first_mut().filter(|_| base.is_some()) {
        seg.index = Some(path.with_extension("index")).filter(|i| i.is_file());
    }
    let mut walk = one.walk_from(
        args.from_offset.unwrap_or(i64::MIN),
        Policy {
            reads: args.read_mode(),
            meter: args.meter,
            ..Policy::HEADERS
        },
    );
    let limits = DecodeLimits {
        max_decompressed: args.max_decompressed_bytes,
    };
    let text = sink.is_text();
    let internal = match args.decoder {
        Decoder::Auto => internal::detect(path),
        Decoder::Offsets => Some(Internal::Offsets),
        Decoder::Transactions => Some(Internal::TransactionState),
        Decoder::Metadata => Some(Internal::ClusterMetadata),
        Decoder::Share => Some(Internal::ShareGroupState),
        Decoder::None => None,
    };
    let view = match args.isolation {
        Isolation::ReadCommitted => Some(read_committed_view(path)?),
        Isolation::ReadUncommitted => None,
    };
    if text {
        writeln!(out, "Dumping {}", escape_cell(&path.display().to_string()))?;
        if let Some(base) = base {
            writeln!(out, "Log starting offset: {base}")?;
        }
        if let Some(v) = &view {
            writeln!(
                out,
                "read_committed view: last stable offset {}; control batches and {} aborted transactions hidden",
                v.last_stable, v.aborted.len()
            )?;
        }
    }
    let file = path.display().to_string();
    let fields = kaen_log::log::findings::FileFields::of(path);
    let filter = RecordFilter::of(args);
    let filtered = filter.selects_batches();
    let wanted = |r: &RecordView<'_>| filter.wants(r);
    // JSON of whole batches: rendered on the read-ahead threads when the
    // file gets them.
    if !text && !args.layout && !filtered && view.is_none() {
        walk.render_ahead(json::shared(RenderJson {
            file: fields.clone(),
            end: sink.entry_end(),
            batches_only: args.batches_only,
            internal,
            filter: filter.clone(),
            limits,
        }));
    }
    let mut problems = 0u64;
    let mut shown = 0u64;
    let mut scratch = Vec::new();
    let mut line_buf = Vec::new();
    while let Some(w) = walk.next_entry()? {
        let entry = w.entry;
        match budget {
            Some(0) => return Ok(problems),
            Some(n) => *n -= 1,
            None => {}
        }
        shown += 1;
        if let (Some(rendered), Entry::V2(batch)) = (w.rendered, &entry) {
            match batch_shown(args, batch) {
                Shown::Yes => {
                    out.write_all(sink.separator())?;
                    out.write_all(rendered)?;
                    continue;
                }
                Shown::Skip => continue,
                Shown::Stop => break,
            }
        }
        // One CRC pass per entry; the check is repeated only to word a mismatch.
        let computed_crc = match &entry {
            Entry::V2(b) => b.computed_crc(),
            Entry::Legacy(m) => m.computed_crc(),
        };
        let crc_valid = match &entry {
            Entry::V2(b) => computed_crc == b.header.crc,
            Entry::Legacy(m) => computed_crc == m.crc,
        };
        if !crc_valid {
            problems += 1;
            if let Err(e) = entry.check_crc() {
                sink.problem(out, &fields, &e.to_string())?;
            }
        }
        match entry {
            Entry::V2(batch) => {
                let h = batch.header;
                if let Some(v) = &view {
                    if h.base_offset >= v.last_stable {
                        break;
                    }
                    if h.is_control()
                        || h.is_transactional() && v.is_aborted(h.producer_id, h.base_offset)
                    {
                        continue;
                    }
                }
                match batch_shown(args, &batch) {
                    Shown::Yes => {}
                    Shown::Skip => continue,
                    Shown::Stop => break,
                }
                if args.layout {
                    let topic = match internal {
                        Some(Internal::Offsets) => Topic::Offsets,
                        Some(Internal::ClusterMetadata) => Topic::Metadata,
                        Some(Internal::ShareGroupState) => Topic::ShareGroupState,
                        _ => Topic::Plain,
                    };
                    // Fields are written as they are read; the first write
                    // error is kept and returned once the listing ends.
                    let mut failed: Option<anyhow::Error> = None;
                    let err = if text {
                        writeln!(
                            out,
                            "batch at position {} (offsets {}..={}), {} bytes:",
                            batch.position,
                            h.base_offset,
                            h.last_offset(),
                            batch.bytes().len()
                        )?;
                        batch_layout(&batch, topic, limits, &mut |f| {
                            if failed.is_none() {
                                failed = crate::report::annotated::write(out, f)
                                    .err()
                                    .map(Into::into);
                            }
                        })
                    } else {
                        let head = LayoutHead {
                            file: &fields,
                            position: batch.position,
                        };
                        let mut json = JsonLine::start(&mut line_buf, out, sink, "layout", &head)?;
                        json.open("fields");
                        let err = batch_layout(&batch, topic, limits, &mut |f| {
                            if failed.is_none() {
                                failed = json.field(f).err();
                            }
                        });
                        json.close();
                        json.finish(None)?;
                        err
                    };
                    if let Some(e) = failed {
                        return Err(e);
                    }
                    if let Some(e) = err {
                        problems += 1;
                        sink.problem(out, &fields, &e.to_string())?;
                    }
                    continue;
                }
                let want_records = if text {
                    args.records || args.print_data_log || filtered
                } else {
                    !args.batches_only
                };
                // Records are written as they decode, never collected: a
                // batch of millions of records costs its decompressed bytes
                // and a bounded output buffer (see `JsonLine`). With --key or
                // --grep, a first pass looks for a record to show.
                if filtered && !(crc_valid && any_record(&batch, &mut scratch, limits, wanted)) {
                    continue;
                }
                let decode = want_records && crc_valid;
                let record_error = if text && args.print_data_log {
                    let codec = codec_name(h.compression_id());
                    let line = kafka_dump::batch_line(
                        &h,
                        batch.position,
                        batch.bytes().len(),
                        crc_valid,
                        &codec,
                    );
                    writeln!(out, "{line}")?;
                    each_record(
                        decode.then(|| batch.records(&mut scratch, limits)),
                        wanted,
                        |r| {
                            let control = if h.is_control() {
                                control_of(r).ok()
                            } else {
                                None
                            };
                            let line = if args.skip_record_metadata {
                                kafka_dump::data_line(&h, r)
                            } else {
                                kafka_dump::record_line(&h, r, control.as_ref())
                            };
                            writeln!(out, "{line}")?;
                            Ok(())
                        },
                    )?
                } else if text {
                    writeln!(
                        out,
                        "position: {} baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} \
                         producerId: {} producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} \
                         isControl: {} deleteHorizon: {} timestampType: {} baseTimestamp: {} maxTimestamp: {} \
                         size: {} magic: 2 compresscodec: {} crc: {} isvalid: {}",
                        batch.position,
                        h.base_offset,
                        h.last_offset(),
                        h.records_count,
                        h.base_sequence,
                        h.last_sequence(),
                        h.producer_id,
                        h.producer_epoch,
                        h.partition_leader_epoch,
                        h.is_transactional(),
                        h.is_control(),
                        h.has_delete_horizon(),
                        h.timestamp_type().label(),
                        h.base_timestamp,
                        h.max_timestamp,
                        batch.bytes().len(),
                        codec_name(h.compression_id()),
                        h.crc,
                        crc_valid,
                    )?;
                    let ts_label = h.timestamp_type().label();
                    each_record(
                        decode.then(|| batch.records(&mut scratch, limits)),
                        wanted,
                        |r| write_text_record(out, r, h.is_control(), ts_label, internal),
                    )?
                } else {
                    let line = BatchJson::of(&fields, &batch, computed_crc);
                    let mut json = JsonLine::start(&mut line_buf, out, sink, "batch", &line)?;
                    let record_error = if args.batches_only {
                        None
                    } else {
                        json.open("records");
                        let e = each_record(
                            decode.then(|| batch.records(&mut scratch, limits)),
                            wanted,
                            |r| {
                                json.record(
                                    r,
                                    RecordKind {
                                        is_control: h.is_control(),
                                        internal,
                                    },
                                )
                            },
                        )?;
                        json.close();
                        e
                    };
                    json.finish(record_error)?;
                    record_error
                };
                if let Some(e) = record_error {
                    problems += 1;
                    sink.problem(out, &fields, &e.to_string())?;
                }
            }
            Entry::Legacy(m) => {
                let ts_label = m.timestamp_type().map_or("NoTimestampType", |t| t.label());
                let codec = codec_name((m.attributes & 0x07) as u8);
                let want_records = if text {
                    args.records
                } else {
                    !args.batches_only
                };
                let mut messages = None;
                if want_records && crc_valid {
                    match m.messages(&mut scratch, limits) {
                        Ok(list) => messages = Some(list),
                        Err(e) => {
                            problems += 1;
                            sink.problem(out, &fields, &e.to_string())?;
                        }
                    }
                }
                if text {
                    writeln!(
                        out,
                        "position: {} offset: {} {}: {} size: {} magic: {} compresscodec: {} crc: {} isvalid: {}",
                        m.position, m.offset, ts_label, m.timestamp, m.bytes().len(), m.magic, codec, m.crc, crc_valid
                    )?;
                    for msg in messages.into_iter().flatten() {
                        write!(
                            out,
                            "| offset: {} {}: {} key: ",
                            msg.offset, ts_label, msg.timestamp
                        )?;
                        write_text_bytes(out, msg.key)?;
                        write!(out, " value: ")?;
                        write_text_bytes(out, msg.value)?;
                        writeln!(out, " isvalid: {}", msg.crc_valid)?;
                    }
                } else {
                    let head = LegacyHead {
                        file: &fields,
                        position: m.position,
                        base_offset: messages
                            .as_ref()
                            .map_or(m.offset, |list| list.first_offset()),
                        last_offset: m.offset,
                        size: m.bytes().len(),
                        magic: m.magic,
                        crc: m.crc,
                        crc_valid,
                        computed_crc,
                        attributes: m.attributes,
                        compression: &codec,
                        timestamp_type: m.timestamp_type().map(|t| t.name()),
                        max_timestamp: m.timestamp,
                    };
                    let mut json =
                        JsonLine::start(&mut line_buf, out, sink, "legacy_batch", &head)?;
                    if !args.batches_only {
                        json.open("records");
                        for msg in messages.into_iter().flatten() {
                            json.message(&msg)?;
                        }
                        json.close();
                    }
                    json.finish(None)?;
                }
            }
        }
    }
    for d in walk.take_damage() {
        if d.framing && d.position == 0 && shown == 0 && args.from_offset.is_none() {
            anyhow::bail!(
                "{file}: {}{}",
                d.error,
                kaen_log::inspect::verify::NOT_A_SEGMENT
            );
        }
        problems += 1;
        if text && d.framing && args.print_data_log {
            let name = path
                .file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
            writeln!(
                out,
                "Found {} invalid bytes at the end of {}",
                d.file_len - d.position,
                escape_cell(&name)
            )?;
        } else if text && d.framing {
            writeln!(
                out,
                "Found {} invalid bytes at the end of {} (position {})",
                d.file_len - d.position,
                escape_cell(&file),
                d.position
            )?;
        }
        sink.problem(out, &fields, &d.error.to_string())?;
    }
    Ok(problems)
}

/// Which records are shown: --from-offset, --to-offset, the time range,
/// --key and --grep.
#[derive(Debug, Clone)]
struct RecordFilter {
    from_offset: Option<i64>,
    to_offset: Option<i64>,
    from_time: Option<i64>,
    to_time: Option<i64>,
    key: Option<String>,
    grep: Option<String>,
    /// None of the above: every record is shown.
    everything: bool,
}

impl RecordFilter {
    fn of(args: &DumpSegmentArgs) -> Self {
        let mut f = RecordFilter {
            from_offset: args.from_offset,
            to_offset: args.to_offset,
            from_time: args.start_ms(),
            to_time: args.end_ms(),
            key: args.key.clone(),
            grep: args.grep.clone(),
            everything: false,
        };
        f.everything = [f.from_offset, f.to_offset, f.from_time, f.to_time]
            .iter()
            .all(Option::is_none)
            && !f.selects_batches();
        f
    }

    /// Whether only some batches hold a record to show (--key, --grep).
    fn selects_batches(&self) -> bool {
        self.key.is_some() || self.grep.is_some()
    }

    /// Whether `r` is shown (settled inline when nothing filters: the
    /// renderers ask for every record).
    #[inline(always)]
    fn wants(&self, r: &RecordView<'_>) -> bool {
        self.everything || self.wants_filtered(r)
    }

    fn wants_filtered(&self, r: &RecordView<'_>) -> bool {
        let contains = |hay: Option<&[u8]>, needle: &[u8]| {
            hay.is_some_and(|h| needle.is_empty() || h.windows(needle.len()).any(|w| w == needle))
        };
        self.from_offset.is_none_or(|from| r.offset >= from)
            && self.to_offset.is_none_or(|to| r.offset <= to)
            && self.from_time.is_none_or(|t| r.timestamp >= t)
            && self.to_time.is_none_or(|t| r.timestamp <= t)
            && self
                .key
                .as_ref()
                .is_none_or(|k| r.key == Some(k.as_bytes()))
            && self
                .grep
                .as_ref()
                .is_none_or(|g| contains(r.key, g.as_bytes()) || contains(r.value, g.as_bytes()))
    }
}

/// What becomes of a v2 batch, by its header: shown, skipped (outside the
/// time range), or the end of the file's output (past --to-offset or
/// --max-bytes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shown {
    Yes,
    Skip,
    Stop,
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
}

fn batch_shown(args: &DumpSegmentArgs, batch: &kaen_log::format::BatchView<'_>) -> Shown {
    let h = &batch.header;
    if args.to_offset.is_some_and(|to| h.base_offset > to)
        || args
            .max_bytes
            .is_some_and(|max| batch.position + batch.bytes().len() as u64 > max)
    {
        Shown::Stop
    } else if args.start_ms().is_some_and(|t| h.max_timestamp < t)
        || args
            .end_ms()
            .is_some_and(|t| h.base_timestamp > t && !h.is_control())
    {
        Shown::Skip
    } else {
        Shown::Yes
    }
}

fn codec_name(id: u8) -> String {
    match kaen_log::format::Compression::from_id(id) {
        Some(c) => c.name().to_string(),
        None => format!("unknown({id})"),
    }
}

fn control_of(r: &RecordView<'_>) -> Result<ControlRecord, kaen_log::DecodeError> {
    control::decode(r.key, r.value, r.position)
}

fn write_text_record(
    out: &mut Output,
    r: &RecordView<'_>,
    is_control: bool,
    ts_label: &str,
    internal: Option<Internal>,
) -> anyhow::Result<()> {
    write!(out, "| offset: {} {}: {}", r.offset, ts_label, r.timestamp)?;
    if is_control {
        match control_of(r) {
            Ok(c) => match c.coordinator_epoch {
                Some(epoch) => write!(
                    out,
                    " endTxnMarker: {} coordinatorEpoch: {epoch}",
                    c.kind.name()
                )?,
                None => {
                    write!(out, " controlType: {}({})", c.kind.name(), c.kind.id())?;
                    if let Some(d) = decode_control_value(c.kind.id(), r.value, r.position) {
                        write!(out, " decoded: {d}")?;
                    }
                }
            },
            Err(e) => write!(out, " control: invalid ({e})")?,
        }
        writeln!(out)?;
        return Ok(());
    }
    write!(out, " key: ")?;
    write_text_bytes(out, r.key)?;
    write!(out, " value: ")?;
    write_text_bytes(out, r.value)?;
    write!(out, " headers: [")?;
    for (i, h) in r.headers().enumerate() {
        if i > 0 {
            write!(out, ", ")?;
        }
        write_text_bytes(out, Some(h.key))?;
        write!(out, "=")?;
        write_text_bytes(out, h.value)?;
    }
    write!(out, "]")?;
    if let Some(kind) = internal {
        write!(
            out,
            " decoded: {}",
            internal::decode_text(kind, r.key, r.value, r.position)
        )?;
    }
    writeln!(out)?;
    Ok(())
}

/// Hand each record `wanted` keeps to `write` as it decodes (none when
/// `records` is `None`); the first decode error, after which nothing more
/// is read.
fn each_record(
    records: Option<Result<RecordIter<'_>, kaen_log::DecodeError>>,
    wanted: impl Fn(&RecordView<'_>) -> bool,
    mut write: impl FnMut(&RecordView<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<Option<kaen_log::DecodeError>> {
    let iter = match records {
        None => return Ok(None),
        Some(Err(e)) => return Ok(Some(e)),
        Some(Ok(iter)) => iter,
    };
    iter.try_each(|r| {
        if wanted(r) {
            write(r)?;
        }
        Ok(true)
    })
}

/// Whether any record of `batch` that decodes is one `wanted` keeps.
fn any_record(
    batch: &kaen_log::format::BatchView<'_>,
    scratch: &mut Vec<u8>,
    limits: DecodeLimits,
    wanted: impl Fn(&RecordView<'_>) -> bool,
) -> bool {
    batch
        .records(scratch, limits)
        .is_ok_and(|mut iter| iter.any(|r| r.is_ok_and(|r| wanted(&r))))
}

/// What a read_committed consumer may see of a partition.
struct ReadCommitted {
    last_stable: i64,
    aborted: Vec<kaen_log::txn::AbortedTxn>,
}

impl ReadCommitted {
    fn is_aborted(&self, producer_id: i64, offset: i64) -> bool {
        self.aborted.iter().any(|a| {
            a.producer_id == producer_id && a.first_offset <= offset && offset <= a.last_offset
        })
    }
}

/// The last stable offset and the aborted transactions of the partition
/// holding `log` (or of the file alone when it is not in a partition folder).
fn read_committed_view(log: &Path) -> anyhow::Result<ReadCommitted> {
    let parent = log
        .parent()
        .filter(|d| classify(d).is_ok_and(|k| k == PathKind::Partition));
    let (partition, high_watermark) = match parent {
        Some(dir) => {
            let p = Partition::open(dir)?;
            let hw = kaen_log::log::checkpoint::high_watermark(&p)?;
            (p, hw)
        }
        None => (Partition::single_file(log, 0), None),
    };
    let opts = kaen_log::txn::TxnOptions {
        high_watermark,
        ..Default::default()
    };
    let st = kaen_log::txn::analyze(&partition, &opts)?;
    Ok(ReadCommitted {
        last_stable: st.last_stable_offset(),
        aborted: st.aborted,
    })
}
