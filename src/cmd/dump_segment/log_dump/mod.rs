//! dump-segment of one log file (a segment, a KRaft snapshot, a captured
//! batch): its head, each entry (v2 batch or legacy magic 0/1 entry) in the
//! chosen format, and the damage the walk met. A v2 batch's forms are in
//! [`batch_forms`], a legacy entry's in [`legacy_entry`].

use std::io::Write;
use std::ops::ControlFlow;
use std::path::Path;

use kaen_log::format::{DecodeLimits, Entry};
use kaen_log::log::findings::FileFields;
use kaen_log::log::{Damage, Partition, Policy, Walk};
use kaen_log::txn::Isolation;

use super::{Decoder, DumpSegmentArgs};
use crate::report::document::Entries;
use crate::report::internal::Internal;
use crate::report::kafka_dump::after_run::AfterRun;
use crate::report::segment_json::{self as json, RenderJson};
use crate::report::table::escape_cell;
use crate::report::{kafka_dump, Output};
use kaen_log::inspect::select::{ReadCommittedView, RecordFilter, Shown};

mod batch_forms;
mod legacy_entry;

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
        if let (Some(prepared), Entry::V2(batch)) = (w.prepared, &entry) {
            match dump.filter.batch(batch) {
                Shown::Yes => {
                    out.write_all(sink.separator())?;
                    out.write_all(prepared)?;
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
            Decoder::Auto => crate::cmd::args::internal_topic(path),
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
            let filter = self.filter.clone();
            walk.prepare_ahead(json::shared(RenderJson {
                file: self.fields.clone(),
                end: sink.entry_end(),
                batches_only: self.args.batches_only,
                internal: self.internal,
                wants: Box::new(move |r| filter.wants(r)),
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
