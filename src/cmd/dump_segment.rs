//! `klog dump-segment`: print batches, records and index entries.

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use kaen_log::format::control::{self, ControlRecord};
use kaen_log::format::legacy::LegacyMessage;
use kaen_log::format::record::RecordIter;
use kaen_log::format::{DecodeLimits, Entry, RecordView};
use kaen_log::layout::{batch_layout, Field, Topic};
use kaen_log::log::{classify, parse_segment_name, Partition, PathKind, Policy};
use kaen_log::metadata::records::decode_control_value;
use serde::Serialize;

use crate::cli::OutputFormat;
use crate::exit::Outcome;
use crate::report::internal::{self, Internal};
use crate::report::{indexes, stream_json_bytes, write_json_bytes, write_text_bytes, Output};
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
/// (all its segments in offset order). A file with any other name is read
/// as a log (e.g. a batch captured to a `.bin` file). Text output has one
/// line per batch in the spirit of kafka-dump-log; `--format json` prints
/// one JSON object per batch per line, records included.
///
/// Exit 1 when a batch fails its CRC or does not decode, or the file ends
/// in a torn tail; the problem is described on stderr.
#[derive(Debug, clap::Args)]
pub struct DumpSegmentArgs {
    /// Segment files, index files or partition folders.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// Text: add one line per record.
    #[arg(long)]
    pub records: bool,
    /// JSON: omit the records array.
    #[arg(long)]
    pub batches_only: bool,
    /// Skip batches that end before this offset (uses the offset index to seek).
    #[arg(long)]
    pub from_offset: Option<i64>,
    /// Stop after this many batches (per path).
    #[arg(long)]
    pub max_batches: Option<u64>,
    /// The most bytes one batch's records may decompress to.
    #[arg(long, default_value_t = DecodeLimits::default().max_decompressed)]
    pub max_decompressed_bytes: u64,
    /// Show every field of each batch and record with its position and raw
    /// bytes (an annotated byte layout, for learning the format); offsets
    /// topic keys and values and KRaft metadata records field by field.
    #[arg(long)]
    pub layout: bool,
    /// read-uncommitted (everything), or read-committed: show what a
    /// read_committed consumer sees (records of
    /// aborted transactions hidden, control batches hidden, stop at the last
    /// stable offset).
    #[arg(long, value_parser = crate::cli::isolation, default_value = "read-uncommitted")]
    pub isolation: Isolation,
}

pub fn run(args: &DumpSegmentArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let mut problems = 0;
    let text = args.format == OutputFormat::Text;
    for path in &args.paths {
        match classify(path).with_context(|| format!("dump-segment {}", path.display()))? {
            PathKind::Partition => {
                let p = Partition::open(path)?;
                for seg in &p.segments {
                    problems += dump_log(&seg.log, Some(seg.base_offset), args, out)?;
                }
            }
            PathKind::DataDir => {
                // Says "holds no partition folders" for a folder that is not a data directory either.
                kaen_log::log::DataDir::open(path)?;
                anyhow::bail!(
                    "{}: is a data directory; give a partition folder or a segment file",
                    path.display()
                )
            }
            PathKind::File => {
                let name = path
                    .file_name()
                    .and_then(|n| n.to_str())
                    .and_then(parse_segment_name);
                problems += match name {
                    Some((base, "index")) => indexes::dump_index(path, base, false, text, out)?,
                    Some((base, "timeindex")) => indexes::dump_index(path, base, true, text, out)?,
                    Some((_, "txnindex")) => indexes::dump_txnindex(path, text, out)?,
                    Some((offset, "snapshot")) => indexes::dump_snapshot(path, offset, text, out)?,
                    Some((base, "log")) => dump_log(path, Some(base), args, out)?,
                    _ => dump_log(path, None, args, out)?,
                };
            }
        }
    }
    Ok(Outcome::from_count(problems))
}

fn dump_log(
    path: &Path,
    base: Option<i64>,
    args: &DumpSegmentArgs,
    out: &mut Output,
) -> anyhow::Result<u64> {
    // The file as a partition of one segment, with its offset index when it
    // has one beside it, so --from-offset starts where the index says.
    let mut one = Partition::single_file(path, base.unwrap_or(0));
    if let Some(seg) = one.segments.first_mut().filter(|_| base.is_some()) {
        seg.index = Some(path.with_extension("index")).filter(|i| i.is_file());
    }
    let mut walk = one.walk_from(args.from_offset.unwrap_or(i64::MIN), Policy::HEADERS);
    let limits = DecodeLimits {
        max_decompressed: args.max_decompressed_bytes,
    };
    let text = args.format == OutputFormat::Text;
    let internal = internal::detect(path);
    let view = match args.isolation {
        Isolation::ReadCommitted => Some(read_committed_view(path)?),
        Isolation::ReadUncommitted => None,
    };
    if text {
        writeln!(out, "Dumping {}", path.display())?;
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
    let mut problems = 0u64;
    let mut shown = 0u64;
    let mut scratch = Vec::new();
    let mut line_buf = Vec::new();
    while let Some(w) = walk.next_entry()? {
        let entry = w.entry;
        if args.max_batches.is_some_and(|max| shown >= max) {
            return Ok(problems);
        }
        shown += 1;
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
                eprintln!("klog: {file}: {e}");
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
                if args.layout {
                    let topic = match internal {
                        Some(Internal::Offsets) => Topic::Offsets,
                        Some(Internal::ClusterMetadata) => Topic::Metadata,
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
                                failed = crate::report::layout::write(out, f).err().map(Into::into);
                            }
                        })
                    } else {
                        let head = LayoutJson {
                            file: &file,
                            position: batch.position,
                        };
                        let mut json = JsonLine::start(&mut line_buf, out, &head)?;
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
                        eprintln!("klog: {file}: {e}");
                    }
                    continue;
                }
                let want_records = if text {
                    args.records
                } else {
                    !args.batches_only
                };
                // Records are written as they decode, never collected: a
                // batch of millions of records costs its decompressed bytes
                // and a bounded output buffer (see `JsonLine`).
                let records = if want_records && crc_valid {
                    Some(batch.records(&mut scratch, limits))
                } else {
                    None
                };
                let ts_label = h.timestamp_type().label();
                let record_error;
                if text {
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
                        ts_label,
                        h.base_timestamp,
                        h.max_timestamp,
                        batch.bytes().len(),
                        codec_name(h.compression_id()),
                        h.crc,
                        crc_valid,
                    )?;
                    record_error = each_record(records, args.from_offset, |r| {
                        write_text_record(out, r, h.is_control(), ts_label, internal)
                    })?;
                } else {
                    let line = BatchJson {
                        file: &file,
                        position: batch.position,
                        base_offset: h.base_offset,
                        last_offset: h.last_offset(),
                        record_count: h.records_count,
                        size: batch.bytes().len(),
                        magic: 2,
                        crc: h.crc,
                        crc_valid,
                        computed_crc,
                        attributes: h.attributes,
                        compression: codec_name(h.compression_id()),
                        timestamp_type: h.timestamp_type().name(),
                        is_transactional: h.is_transactional(),
                        is_control: h.is_control(),
                        has_delete_horizon: h.has_delete_horizon(),
                        producer_id: h.producer_id,
                        producer_epoch: h.producer_epoch,
                        base_sequence: h.base_sequence,
                        last_sequence: h.last_sequence(),
                        partition_leader_epoch: h.partition_leader_epoch,
                        base_timestamp: h.base_timestamp,
                        max_timestamp: h.max_timestamp,
                    };
                    let mut json = JsonLine::start(&mut line_buf, out, &line)?;
                    record_error = if args.batches_only {
                        None
                    } else {
                        json.open("records");
                        let e = each_record(records, args.from_offset, |r| {
                            json.record(r, h.is_control(), internal)
                        })?;
                        json.close();
                        e
                    };
                    json.finish(record_error)?;
                }
                if let Some(e) = record_error {
                    problems += 1;
                    eprintln!("klog: {file}: {e}");
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
                            eprintln!("klog: {file}: {e}");
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
                    let head = LegacyJson {
                        file: &file,
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
                        compression: codec,
                        timestamp_type: m.timestamp_type().map(|t| t.name()),
                        max_timestamp: m.timestamp,
                    };
                    let mut json = JsonLine::start(&mut line_buf, out, &head)?;
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
            anyhow::bail!("{file}: {}{}", d.error, kaen_log::verify::NOT_A_SEGMENT);
        }
        problems += 1;
        if text && d.framing {
            writeln!(
                out,
                "Found {} invalid bytes at the end of {file} (position {})",
                d.file_len - d.position,
                d.position
            )?;
        }
        eprintln!("klog: {file}: {}", d.error);
    }
    Ok(problems)
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

/// The header fields of a v2 batch's JSON line, in output order.
#[derive(Serialize)]
struct BatchJson<'a> {
    file: &'a str,
    position: u64,
    base_offset: i64,
    last_offset: i64,
    record_count: i32,
    size: usize,
    magic: i8,
    crc: u32,
    crc_valid: bool,
    computed_crc: u32,
    attributes: i16,
    compression: String,
    timestamp_type: &'static str,
    is_transactional: bool,
    is_control: bool,
    has_delete_horizon: bool,
    producer_id: i64,
    producer_epoch: i16,
    base_sequence: i32,
    last_sequence: i32,
    partition_leader_epoch: i32,
    base_timestamp: i64,
    max_timestamp: i64,
}

/// The fields of a legacy (magic 0/1) entry's JSON line, in output order.
#[derive(Serialize)]
struct LegacyJson<'a> {
    file: &'a str,
    position: u64,
    base_offset: i64,
    last_offset: i64,
    size: usize,
    magic: i8,
    crc: u32,
    crc_valid: bool,
    computed_crc: u32,
    attributes: i8,
    compression: String,
    timestamp_type: Option<&'static str>,
    max_timestamp: i64,
}

/// Output bytes held before they are handed to stdout: a JSON line of any
/// length (millions of records, a value of hundreds of MiB) costs this
/// buffer, not its own size.
const FLUSH_AT: usize = 1 << 20;
/// A key, value or header value at least this long is written straight to
/// stdout instead of through the line buffer.
const STREAM_FROM: usize = 64 << 10;

/// One line of JSON for an entry: its header fields, then `records` as they
/// decode (when shown), then `records_error` (when there is one), and a
/// newline; the same bytes serde_json writes for the object with those
/// fields in that order. Built in a reused buffer that goes to stdout
/// whenever it holds [`FLUSH_AT`] bytes.
struct JsonLine<'b, 'o> {
    buf: &'b mut Vec<u8>,
    out: &'o mut Output,
    records: usize,
}

impl<'b, 'o> JsonLine<'b, 'o> {
    fn start(
        buf: &'b mut Vec<u8>,
        out: &'o mut Output,
        head: &impl Serialize,
    ) -> anyhow::Result<Self> {
        buf.clear();
        serde_json::to_writer(&mut *buf, head)?;
        // Reopen the object to append the remaining fields.
        anyhow::ensure!(buf.pop() == Some(b'}'), "a JSON object ends with a brace");
        Ok(JsonLine {
            buf,
            out,
            records: 0,
        })
    }

    /// Open the array field `name` (`records`, `fields`).
    fn open(&mut self, name: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\":[");
        self.records = 0;
    }

    fn close(&mut self) {
        self.buf.push(b']');
    }

    /// Start the next element of the open array.
    fn next_element(&mut self) -> std::io::Result<()> {
        if self.buf.len() >= FLUSH_AT {
            self.out.write_all(self.buf)?;
            self.buf.clear();
        }
        if self.records > 0 {
            self.buf.push(b',');
        }
        self.records += 1;
        Ok(())
    }

    /// Bytes as [`write_json_bytes`] writes them; a large value goes
    /// straight to stdout.
    fn bytes(&mut self, b: Option<&[u8]>) -> anyhow::Result<()> {
        if b.map_or(0, <[u8]>::len) < STREAM_FROM {
            write_json_bytes(self.buf, b)?;
        } else {
            self.out.write_all(self.buf)?;
            self.buf.clear();
            stream_json_bytes(self.out, b)?;
        }
        Ok(())
    }

    /// The next element of the records array, up to its value:
    /// `{"offset","timestamp","key","value"`.
    fn record_start(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> anyhow::Result<()> {
        self.next_element()?;
        self.buf.extend_from_slice(b"{\"offset\":");
        serde_json::to_writer(&mut *self.buf, &offset)?;
        self.buf.extend_from_slice(b",\"timestamp\":");
        serde_json::to_writer(&mut *self.buf, &timestamp)?;
        self.buf.extend_from_slice(b",\"key\":");
        self.bytes(key)?;
        self.buf.extend_from_slice(b",\"value\":");
        self.bytes(value)
    }

    /// One v2 record: `{"offset","timestamp","key","value","headers":[{"key","value"}]}`,
    /// plus `"control"` in a control batch; numbers as serde_json writes them.
    fn record(
        &mut self,
        r: &RecordView<'_>,
        is_control: bool,
        internal: Option<Internal>,
    ) -> anyhow::Result<()> {
        self.record_start(r.offset, r.timestamp, r.key, r.value)?;
        self.buf.extend_from_slice(b",\"headers\":[");
        for (i, h) in r.headers().enumerate() {
            if i > 0 {
                self.buf.push(b',');
            }
            self.buf.extend_from_slice(b"{\"key\":");
            self.bytes(Some(h.key))?;
            self.buf.extend_from_slice(b",\"value\":");
            self.bytes(h.value)?;
            self.buf.push(b'}');
        }
        self.buf.push(b']');
        let buf = &mut *self.buf;
        if is_control {
            buf.extend_from_slice(b",\"control\":");
            let mut decoded = None;
            let control = match control_of(r) {
                Ok(c) => ControlJson::Marker {
                    kind: c.kind.name(),
                    type_id: c.kind.id(),
                    version: c.version,
                    coordinator_epoch: c.coordinator_epoch,
                },
                Err(e) => ControlJson::Invalid {
                    error: e.to_string(),
                },
            };
            if let ControlJson::Marker { type_id, .. } = control {
                decoded = decode_control_value(type_id, r.value, r.position);
            }
            serde_json::to_writer(&mut *buf, &control)?;
            if let Some(d) = decoded {
                buf.extend_from_slice(b",\"decoded\":");
                serde_json::to_writer(&mut *buf, &d)?;
            }
        } else if let Some(kind) = internal {
            buf.extend_from_slice(b",\"decoded\":");
            serde_json::to_writer(
                &mut *buf,
                &internal::decode(kind, r.key, r.value, r.position),
            )?;
        }
        buf.push(b'}');
        Ok(())
    }

    /// One message of a legacy entry:
    /// `{"offset","timestamp","key","value","headers":[],"crc_valid"}`.
    fn message(&mut self, m: &LegacyMessage<'_>) -> anyhow::Result<()> {
        self.record_start(m.offset, m.timestamp, m.key, m.value)?;
        self.buf
            .extend_from_slice(b",\"headers\":[],\"crc_valid\":");
        serde_json::to_writer(&mut *self.buf, &m.crc_valid)?;
        self.buf.push(b'}');
        Ok(())
    }

    /// One field of `--layout`: `{"position","decompressed","depth","bytes"
    /// (hex),"field","value"}`; a large one goes straight to stdout.
    fn field(&mut self, f: &Field<'_>) -> anyhow::Result<()> {
        self.next_element()?;
        let json = FieldJson {
            position: f.position,
            decompressed: f.decompressed,
            depth: f.depth,
            bytes: Hex(f.bytes),
            field: &f.name,
            value: &f.value,
        };
        if f.bytes.len() < STREAM_FROM {
            serde_json::to_writer(&mut *self.buf, &json)?;
        } else {
            self.out.write_all(self.buf)?;
            self.buf.clear();
            serde_json::to_writer(&mut *self.out, &json)?;
        }
        Ok(())
    }

    /// Close the line (with `records_error` when there is one) and write it out.
    fn finish(self, error: Option<kaen_log::DecodeError>) -> anyhow::Result<()> {
        if let Some(e) = error {
            self.buf.extend_from_slice(b",\"records_error\":");
            let detail = ErrorJson {
                kind: e.kind_name(),
                detail: e.to_string(),
            };
            serde_json::to_writer(&mut *self.buf, &detail)?;
        }
        self.buf.extend_from_slice(b"}\n");
        self.out.write_all(self.buf)?;
        self.buf.clear();
        Ok(())
    }
}

/// The head of a `--layout` JSON line.
#[derive(Serialize)]
struct LayoutJson<'a> {
    file: &'a str,
    position: u64,
}

/// One field of a `--layout` JSON line.
#[derive(Serialize)]
struct FieldJson<'a> {
    position: u64,
    decompressed: bool,
    depth: u8,
    bytes: Hex<'a>,
    field: &'a str,
    value: &'a str,
}

/// Bytes as a lowercase hex string, written as serialized (no copy).
struct Hex<'a>(&'a [u8]);

impl std::fmt::Display for Hex<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.0.iter().try_for_each(|b| write!(f, "{b:02x}"))
    }
}

impl Serialize for Hex<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

#[derive(Serialize)]
struct ErrorJson {
    kind: &'static str,
    detail: String,
}

/// Hand each record at or past `from` to `write` as it decodes (none when
/// `records` is `None`); the first decode error, after which nothing more is read.
fn each_record(
    records: Option<Result<RecordIter<'_>, kaen_log::DecodeError>>,
    from: Option<i64>,
    mut write: impl FnMut(&RecordView<'_>) -> anyhow::Result<()>,
) -> anyhow::Result<Option<kaen_log::DecodeError>> {
    let iter = match records {
        None => return Ok(None),
        Some(Err(e)) => return Ok(Some(e)),
        Some(Ok(iter)) => iter,
    };
    for r in iter {
        match r {
            Ok(r) if from.is_none_or(|from| r.offset >= from) => write(&r)?,
            Ok(_) => {}
            Err(e) => return Ok(Some(e)),
        }
    }
    Ok(None)
}

/// A control record's `control` object.
#[derive(Serialize)]
#[serde(untagged)]
enum ControlJson {
    Marker {
        #[serde(rename = "type")]
        kind: &'static str,
        type_id: i16,
        version: i16,
        coordinator_epoch: Option<i32>,
    },
    Invalid {
        error: String,
    },
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
