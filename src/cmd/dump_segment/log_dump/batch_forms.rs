//! A v2 batch of dump-segment's log dump in each form: its field layout
//! (`--layout`), its text lines (klog's or kafka-dump-log's), its JSON
//! entry; records written as they decode.

use std::io::Write;
use std::ops::ControlFlow;

use kaen_log::format::record::RecordIter;
use kaen_log::format::{BatchHeader, BatchView, DecodeLimits, RecordView};
use kaen_log::inspect::layout::batch_layout;
use kaen_log::inspect::select::Shown;
use kaen_log::log::findings::FileFields;

use super::{EntryCrc, LogDump};
use crate::cmd::dump_segment::KafkaStops;
use crate::report::document::Entries;
use crate::report::kafka_dump;
use crate::report::segment_json::{BatchJson, JsonLine, LayoutHead, RecordKind};
use crate::report::segment_text::{write_batch_line, write_text_record};
use crate::report::Output;

impl LogDump<'_> {
    /// A v2 batch, unless read_committed, the offset and time range or
    /// --key/--grep leave it out: its field layout (--layout), or its line
    /// or JSON entry with the records kept; a record that does not decode
    /// is a problem.
    pub(super) fn v2_batch(
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
pub(super) fn write_kafka_line(
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
