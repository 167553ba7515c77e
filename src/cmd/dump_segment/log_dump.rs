//! dump-segment of one log file (a segment, a KRaft snapshot, a captured
//! batch): its head, each entry (v2 batch or legacy magic 0/1 entry) in the
//! chosen format, and the damage the walk met.

use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;

use kaen_log::format::record::RecordIter;
use kaen_log::format::{BatchHeader, BatchView, DecodeLimits, Entry, LegacyView, RecordView};
use kaen_log::inspect::layout::batch_layout;
use kaen_log::log::findings::FileFields;
use kaen_log::log::{Damage, Partition, Policy, Walk};
use kaen_log::txn::Isolation;

use super::KafkaStops;
use super::{Decoder, DumpSegmentArgs};
use crate::report::document::Entries;
use crate::report::internal::{self, Internal};
use crate::report::kafka_dump::after_run::AfterRun;
use crate::report::segment_json::{
    self as json, BatchJson, JsonLine, LayoutHead, LegacyHead, RecordKind, RenderJson,
};
use crate::report::segment_text::{write_batch_line, write_legacy_lines, write_text_record};
use crate::report::table::escape_cell;
use crate::report::{kafka_dump, Output};
use kaen_log::inspect::select::{ReadCommittedView, RecordFilter, Shown};

/// Dump the log file `path` (a segment of base offset `base` when its name
/// says so), spending `budget` (--max-batches) one entry at a time; the
/// number of problems found.
pub(super) fn dump_log(
    path: &Path,
    base: Option<i64>,
    args: &DumpSegmentArgs,
    budget: &mut Option<u64>,
    (sink, after): (&mut Entries, &mut AfterRun),
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
    let mut dump = LogDump::new(path, args, sink.is_text())?;
    if dump.text {
        dump.write_head(path, base, out)?;
    }
    dump.render_ahead(&mut walk, sink);
    let mut shown = 0u64;
    while let Some(w) = walk.next_entry()? {
        let entry = w.entry;
        match budget {
            Some(0) => return Ok(dump.problems),
            Some(n) => *n -= 1,
            None => {}
        }
        shown += 1;
        if let (Some(rendered), Entry::V2(batch)) = (w.rendered, &entry) {
            match dump.filter.batch(batch) {
                Shown::Yes => {
                    out.write_all(sink.separator())?;
                    out.write_all(rendered)?;
                    continue;
                }
                Shown::Skip => continue,
                Shown::Stop => break,
            }
        }
        if dump.entry(entry, sink, out)?.is_break() {
            break;
        }
    }
    dump.report_damage(walk.take_damage(), path, shown, sink, out)?;
    after.non_consecutive(
        &super::kafka_index::absolute(path),
        std::mem::take(&mut dump.offsets.pairs),
    );
    Ok(dump.problems)
}

/// The state of dumping one log file: what the arguments settle for it, the
/// buffers reused from entry to entry, and the problems counted so far.
struct LogDump<'a> {
    args: &'a DumpSegmentArgs,
    text: bool,
    limits: DecodeLimits,
    /// The internal topic whose keys and values are decoded, if any.
    internal: Option<Internal>,
    /// With read-committed: what such a consumer sees of the partition.
    view: Option<ReadCommittedView>,
    fields: FileFields,
    filter: RecordFilter,
    /// --key or --grep: only batches with a record to show are shown.
    filtered: bool,
    /// How kafka-dump-log's lines print records (--print-data-log).
    lines: kafka_dump::Lines,
    scratch: Vec<u8>,
    line_buf: Vec<u8>,
    problems: u64,
    /// The offsets of the records printed in kafka-dump-log's lines.
    offsets: Consecutive,
}

/// `dumpBatchRecords`' check that each record's offset follows the one
/// before it: where one does not, the pair. The Java tool (4.3 on) takes
/// the first record to follow -1; the Scala tool does not check it.
#[derive(Debug)]
struct Consecutive {
    last: i64,
    scala: bool,
    pairs: Vec<(i64, i64)>,
}

impl Consecutive {
    fn new(tool: kafka_dump::Tool) -> Self {
        Consecutive {
            last: -1,
            scala: tool.scala(),
            pairs: Vec::new(),
        }
    }

    fn record(&mut self, offset: i64) {
        if !(self.scala && self.last == -1) && offset != self.last.wrapping_add(1) {
            self.pairs.push((self.last, offset));
        }
        self.last = offset;
    }
}

/// An entry's CRC, computed once, and whether it is the one stored.
#[derive(Debug, Clone, Copy)]
struct EntryCrc {
    computed: u32,
    valid: bool,
}

impl<'a> LogDump<'a> {
    /// Settle the decoder and the read_committed view of `path`.
    fn new(path: &Path, args: &'a DumpSegmentArgs, text: bool) -> anyhow::Result<Self> {
        let limits = DecodeLimits {
            max_decompressed: args.max_decompressed_bytes,
        };
        let internal = match args.decoder {
            Decoder::Auto => internal::detect(path),
            Decoder::Offsets => Some(Internal::Offsets),
            Decoder::Transactions => Some(Internal::TransactionState),
            Decoder::Metadata => Some(Internal::ClusterMetadata),
            Decoder::Share => Some(Internal::ShareGroupState),
            Decoder::RemoteLogMetadata => Some(Internal::RemoteLogMetadata),
            Decoder::None => None,
        };
        let view = match args.isolation {
            Isolation::ReadCommitted => Some(ReadCommittedView::of_log(path)?),
            Isolation::ReadUncommitted => None,
        };
        let filter = args.record_filter();
        Ok(LogDump {
            args,
            text,
            limits,
            internal,
            view,
            fields: FileFields::of(path),
            filtered: filter.selects_batches(),
            filter,
            lines: args.kafka_lines(),
            scratch: Vec::new(),
            line_buf: Vec::new(),
            problems: 0,
            offsets: Consecutive::new(args.kafka_release),
        })
    }

    /// The text's head: the file, a segment's base offset, and what the
    /// read_committed view hides.
    fn write_head(&self, path: &Path, base: Option<i64>, out: &mut Output) -> anyhow::Result<()> {
        writeln!(out, "Dumping {}", escape_cell(&path.display().to_string()))?;
        if self.args.print_data_log {
            for line in self.lines.deprecation_lines() {
                writeln!(out, "{line}")?;
            }
        }
        if let Some(base) = base {
            writeln!(out, "Log starting offset: {base}")?;
        } else if self.args.print_data_log {
            // DumpLogSegments.dumpLog names a snapshot's place in the log.
            let name = path
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or_default();
            if name == kaen_log::metadata::BOOTSTRAP_FILE {
                writeln!(out, "KRaft bootstrap snapshot")?;
            } else if let Some((offset, epoch)) = kaen_log::metadata::parse_snapshot_name(name) {
                writeln!(out, "Snapshot end offset: {offset}, epoch: {epoch}")?;
            }
        }
        if let Some(v) = &self.view {
            writeln!(
                out,
                "read_committed view: last stable offset {}; control batches and {} aborted transactions hidden",
                v.last_stable, v.aborted.len()
            )?;
        }
        Ok(())
    }

    /// JSON of whole batches: rendered on the read-ahead threads when the
    /// file gets them (not with --layout, --key, --grep or read_committed).
    fn render_ahead(&self, walk: &mut Walk<'_>, sink: &Entries) {
        if !self.text && !self.args.layout && !self.filtered && self.view.is_none() {
            walk.render_ahead(json::shared(RenderJson {
                file: self.fields.clone(),
                end: sink.entry_end(),
                batches_only: self.args.batches_only,
                internal: self.internal,
                filter: self.filter.clone(),
                limits: self.limits,
            }));
        }
    }

    /// One entry of the walk, after a CRC mismatch is reported as a
    /// problem; `Break` when the file's output ends at it.
    fn entry(
        &mut self,
        entry: Entry<'_>,
        sink: &mut Entries,
        out: &mut Output,
    ) -> anyhow::Result<ControlFlow<()>> {
        // One CRC pass per entry; the check is repeated only to word a mismatch.
        let computed = match &entry {
            Entry::V2(b) => b.computed_crc(),
            Entry::Legacy(m) => m.computed_crc(),
        };
        let valid = match &entry {
            Entry::V2(b) => computed == b.header.crc,
            Entry::Legacy(m) => computed == m.crc,
        };
        if !valid {
            self.problems += 1;
            if let Err(e) = entry.check_crc() {
                sink.problem(out, &self.fields, &e.to_string())?;
            }
        }
        let crc = EntryCrc { computed, valid };
        match entry {
            Entry::V2(batch) => self.v2_batch(&batch, crc, sink, out),
            Entry::Legacy(m) => {
                self.legacy(&m, crc, sink, out)?;
                Ok(ControlFlow::Continue(()))
            }
        }
    }

    /// A v2 batch, unless read_committed, the offset and time range or
    /// --key/--grep leave it out: its field layout (--layout), or its line
    /// or JSON entry with the records kept; a record that does not decode
    /// is a problem.
    fn v2_batch(
        &mut self,
        batch: &BatchView<'_>,
        crc: EntryCrc,
        sink: &mut Entries,
        out: &mut Output,
    ) -> anyhow::Result<ControlFlow<()>> {
        let args = self.args;
        let shown = match self
            .view
            .as_ref()
            .map_or(Shown::Yes, |v| v.shows(&batch.header))
        {
            Shown::Yes => self.filter.batch(batch),
            hidden => hidden,
        };
        match shown {
            Shown::Yes => {}
            Shown::Skip => return Ok(ControlFlow::Continue(())),
            Shown::Stop => return Ok(ControlFlow::Break(())),
        }
        if args.layout {
            self.layout(batch, sink, out)?;
            return Ok(ControlFlow::Continue(()));
        }
        let want_records = if self.text {
            args.records || args.print_data_log || self.filtered
        } else {
            !args.batches_only
        };
        // Records are written as they decode, never collected: a
        // batch of millions of records costs its decompressed bytes
        // and a bounded output buffer (see `JsonLine`). With --key or
        // --grep, a first pass looks for a record to show.
        if self.filtered
            && !(crc.valid
                && any_record(batch, &mut self.scratch, self.limits, |r| {
                    self.filter.wants(r)
                }))
        {
            return Ok(ControlFlow::Continue(()));
        }
        // kafka-dump-log's deep iteration decodes a batch whatever its CRC
        // says (`isvalid: false` on its line); klog's own forms show only
        // the records a valid CRC vouches for.
        let decode = want_records && (crc.valid || (self.text && args.print_data_log));
        let record_error = if self.text {
            self.text_batch(batch, crc.valid, decode, out)?
        } else {
            self.json_batch(batch, crc.computed, decode, sink, out)?
        };
        if let Some(e) = record_error {
            self.problems += 1;
            sink.problem(out, &self.fields, &e.to_string())?;
        }
        Ok(ControlFlow::Continue(()))
    }

    /// `--layout`: every field of the batch with its position and raw
    /// bytes, as text lines or one JSON `layout` entry; records that do not
    /// decode are a problem after the fields read.
    fn layout(
        &mut self,
        batch: &BatchView<'_>,
        sink: &mut Entries,
        out: &mut Output,
    ) -> anyhow::Result<()> {
        let h = batch.header;
        let limits = self.limits;
        let topic = crate::cmd::args::layout_topic(self.internal);
        // Fields are written as they are read; the first write
        // error is kept and returned once the listing ends.
        let mut failed: Option<anyhow::Error> = None;
        let err = if self.text {
            writeln!(
                out,
                "batch at position {} (offsets {}..={}), {} bytes:",
                batch.position,
                h.base_offset,
                h.last_offset(),
                batch.bytes().len()
            )?;
            batch_layout(batch, topic, limits, &mut |f| {
                if failed.is_none() {
                    failed = crate::report::annotated::write(out, f)
                        .err()
                        .map(Into::into);
                }
            })
        } else {
            let head = LayoutHead {
                file: &self.fields,
                position: batch.position,
            };
            let mut json = JsonLine::start(&mut self.line_buf, out, sink, "layout", &head)?;
            json.open("fields");
            let err = batch_layout(batch, topic, limits, &mut |f| {
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
            self.problems += 1;
            sink.problem(out, &self.fields, &e.to_string())?;
        }
        Ok(())
    }

    /// Text: the batch's line and, as they decode, a line per record kept:
    /// with --print-data-log kafka-dump-log's `baseOffset: …` and `|
    /// offset: …` lines (key and payload alone with
    /// --skip-record-metadata), else klog's `position: …` and `| offset: …`
    /// lines; the first record that does not decode.
    fn text_batch(
        &mut self,
        batch: &BatchView<'_>,
        crc_valid: bool,
        decode: bool,
        out: &mut Output,
    ) -> anyhow::Result<Option<kaen_log::DecodeError>> {
        let h = batch.header;
        let args = self.args;
        let internal = self.internal;
        if args.print_data_log {
            let codec = kaen_log::format::Compression::label_of_id(h.compression_id());
            let line =
                kafka_dump::batch_line(&h, batch.position, batch.bytes().len(), crc_valid, &codec);
            writeln!(out, "{line}")?;
        } else {
            write_batch_line(out, batch, crc_valid)?;
        }
        let ts_label = h.timestamp_type().label();
        let lines = self.lines;
        let fields = &self.fields;
        let position = batch.position;
        let offsets = &mut self.offsets;
        each_record(
            decode.then(|| batch.records(&mut self.scratch, self.limits)),
            |r| self.filter.wants(r),
            |r| {
                if args.print_data_log {
                    offsets.record(r.offset);
                    write_kafka_dump_record(out, &lines, (&h, position), r, fields)
                } else {
                    write_text_record(out, r, h.is_control(), ts_label, internal)
                }
            },
        )
    }

    /// JSON: the batch's `batch` entry, its `records` (not with
    /// --batches-only) written as they decode, and `records_error` when
    /// one does not; that error.
    fn json_batch(
        &mut self,
        batch: &BatchView<'_>,
        computed_crc: u32,
        decode: bool,
        sink: &mut Entries,
        out: &mut Output,
    ) -> anyhow::Result<Option<kaen_log::DecodeError>> {
        let h = batch.header;
        let line = BatchJson::of(&self.fields, batch, computed_crc);
        let mut json = JsonLine::start(&mut self.line_buf, out, sink, "batch", &line)?;
        let record_error = if self.args.batches_only {
            None
        } else {
            json.open("records");
            let e = each_record(
                decode.then(|| batch.records(&mut self.scratch, self.limits)),
                |r| self.filter.wants(r),
                |r| {
                    json.record(
                        r,
                        RecordKind {
                            is_control: h.is_control(),
                            internal: self.internal,
                        },
                    )
                },
            )?;
            json.close();
            e
        };
        json.finish(record_error)?;
        Ok(record_error)
    }

    /// A legacy (magic 0/1) entry: its line and (with --records) a line per
    /// inner message, or its `legacy_batch` JSON entry with the messages as
    /// `records`; a wrapper whose messages do not decode is a problem,
    /// reported before the entry.
    fn legacy(
        &mut self,
        m: &LegacyView<'_>,
        crc: EntryCrc,
        sink: &mut Entries,
        out: &mut Output,
    ) -> anyhow::Result<()> {
        let ts_label = m.timestamp_type().map_or("NoTimestampType", |t| t.label());
        let codec = kaen_log::format::Compression::label_of_id((m.attributes & 0x07) as u8);
        let kafka_form = self.text && self.args.print_data_log;
        let want_records = if self.text {
            self.args.records || self.args.print_data_log
        } else {
            !self.args.batches_only
        };
        let mut messages = None;
        // kafka-dump-log reads an entry's messages whatever its CRC says.
        if want_records && (crc.valid || kafka_form) {
            match m.messages(&mut self.scratch, self.limits) {
                Ok(list) => messages = Some(list),
                Err(e) => {
                    self.problems += 1;
                    sink.problem(out, &self.fields, &e.to_string())?;
                }
            }
        }
        if kafka_form {
            let line = kafka_dump::legacy_batch_line(m, crc.valid, &codec, ts_label);
            writeln!(out, "{line}")?;
            for msg in messages.into_iter().flatten() {
                self.offsets.record(msg.offset);
                let line = self.lines.legacy_record_line(&msg, ts_label);
                write_kafka_line(out, line, &self.fields, m.position, msg.offset)?;
            }
        } else if self.text {
            write_legacy_lines(
                out,
                m,
                (crc.valid, &codec, ts_label),
                messages.into_iter().flatten(),
            )?;
        } else {
            let head = LegacyHead {
                file: &self.fields,
                position: m.position,
                base_offset: messages
                    .as_ref()
                    .map_or(m.offset, |list| list.first_offset()),
                last_offset: m.offset,
                size: m.bytes().len(),
                magic: m.magic,
                crc: m.crc,
                crc_valid: crc.valid,
                computed_crc: crc.computed,
                attributes: m.attributes,
                compression: &codec,
                timestamp_type: m.timestamp_type().map(|t| t.name()),
                max_timestamp: m.timestamp,
            };
            let mut json = JsonLine::start(&mut self.line_buf, out, sink, "legacy_batch", &head)?;
            if !self.args.batches_only {
                json.open("records");
                for msg in messages.into_iter().flatten() {
                    json.message(&msg)?;
                }
                json.close();
            }
            json.finish(None)?;
        }
        Ok(())
    }

    /// The damage the walk met, each a problem: a file whose first bytes
    /// do not frame (and nothing shown) is not a segment at all, an error,
    /// unless it is named like one (then its first batch is torn);
    /// a torn tail is also said in the text, in kafka-dump-log's words with
    /// --print-data-log (not with --max-bytes, as kafka-dump-log).
    fn report_damage(
        &mut self,
        damage: Vec<Damage>,
        path: &Path,
        shown: u64,
        sink: &mut Entries,
        out: &mut Output,
    ) -> anyhow::Result<()> {
        let file = path.display().to_string();
        for d in damage {
            if d.framing
                && d.position == 0
                && shown == 0
                && self.args.from_offset.is_none()
                && !kaen_log::inspect::verify::named_like_a_segment(path)
            {
                anyhow::bail!(
                    "{file}: {}{}",
                    d.error,
                    kaen_log::inspect::verify::NOT_A_SEGMENT
                );
            }
            self.problems += 1;
            // DumpLogSegments.dumpLog says so only when --max-bytes is
            // its default, Integer.MAX_VALUE.
            let whole_file = self.args.max_bytes.is_none_or(|max| max == i32::MAX as u64);
            if self.text && d.framing && self.args.print_data_log && whole_file {
                let name = path
                    .file_name()
                    .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
                writeln!(
                    out,
                    "Found {} invalid bytes at the end of {}",
                    d.file_len - d.position,
                    escape_cell(&name)
                )?;
            } else if self.text && d.framing && !self.args.print_data_log {
                writeln!(
                    out,
                    "Found {} invalid bytes at the end of {} (position {})",
                    d.file_len - d.position,
                    escape_cell(&file),
                    d.position
                )?;
            }
            sink.problem(out, &self.fields, &d.error.to_string())?;
        }
        Ok(())
    }
}

/// `--print-data-log`: a record's `| offset: …` line as kafka-dump-log
/// prints it (a control record's marker or KRaft record decoded).
fn write_kafka_dump_record(
    out: &mut Output,
    lines: &kafka_dump::Lines,
    (h, position): (&BatchHeader, u64),
    r: &RecordView<'_>,
    fields: &FileFields,
) -> anyhow::Result<()> {
    let control = if h.is_control() {
        kaen_log::format::control::decode(r.key, r.value, r.position).ok()
    } else {
        None
    };
    let line = lines.record_line(h, r, control.as_ref());
    write_kafka_line(out, line, fields, position, r.offset)
}

/// A record's kafka-dump-log line, or, where a decoder class threw, what
/// Kafka's tool had printed of it before it stopped: then the dump stops
/// too ([`KafkaStops`]).
fn write_kafka_line(
    out: &mut Output,
    line: Result<String, kafka_dump::Halted>,
    fields: &FileFields,
    position: u64,
    offset: i64,
) -> anyhow::Result<()> {
    match line {
        Ok(line) => {
            writeln!(out, "{line}")?;
            Ok(())
        }
        Err(halted) => {
            write!(out, "{}", halted.partial)?;
            Err(KafkaStops {
                file: fields.file.clone(),
                position,
                what: format!(
                    "the record at offset {offset}: {} ({})",
                    halted.thrown.why, halted.thrown.exception
                ),
                problems: 1,
            }
            .into())
        }
    }
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
