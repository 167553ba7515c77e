//! A legacy (magic 0/1) entry of dump-segment's log dump.

use std::io::Write;

use kaen_log::format::{Compression, LegacyView};

use super::batch_forms::write_kafka_line;
use super::{EntryCrc, LogDump};
use crate::report::document::Entries;
use crate::report::kafka_dump;
use crate::report::segment_json::{JsonLine, LegacyHead};
use crate::report::segment_text::write_legacy_lines;
use crate::report::Output;

impl LogDump<'_> {
    /// A legacy (magic 0/1) entry: its line and (with --records) a line per
    /// inner message, or its `legacy_batch` JSON entry with the messages as
    /// `records`; a wrapper whose messages do not decode is a problem,
    /// reported before the entry.
    pub(super) fn legacy(
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
        let mut unreadable = None;
        // kafka-dump-log reads an entry's messages whatever its CRC says.
        if want_records && (crc.valid || kafka_form) {
            match m.messages(&mut self.scratch, self.limits) {
                Ok(list) => messages = Some(list),
                Err(e) => {
                    self.problems += 1;
                    sink.problem(out, &self.fields, &e.to_string())?;
                    // Kafka iterates an uncompressed entry's one record
                    // whatever its value length says, and fails at the value.
                    if m.compression() == Some(Compression::None) {
                        unreadable = Some(e.kind.to_string());
                    }
                }
            }
        }
        if kafka_form {
            let line = kafka_dump::legacy_batch_line(m, crc.valid, &codec, ts_label);
            writeln!(out, "{line}")?;
            let line =
                unreadable.and_then(|why| self.lines.unreadable_legacy_line(m, ts_label, &why));
            if let Some(line) = line {
                self.offsets.record(m.offset);
                writeln!(out, "{line}")?;
            }
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
}
