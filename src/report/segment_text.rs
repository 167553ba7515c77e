//! `dump-segment`'s own text lines: a v2 batch's header fields, and a
//! record with its key, value, headers and what klog decodes of them (the
//! kafka-dump-log lines are [`super::kafka_dump`]'s).

use std::io::Write;

use kaen_log::format::legacy::LegacyMessage;
use kaen_log::format::{BatchView, LegacyView, RecordView};
use kaen_log::metadata::records::decode_control_value;

use super::internal::{self, Internal};
use super::{write_text_bytes, Output};

/// klog's text line of a v2 batch: its position and every header field,
/// in the spirit of kafka-dump-log.
pub fn write_batch_line(
    out: &mut Output,
    batch: &BatchView<'_>,
    crc_valid: bool,
) -> anyhow::Result<()> {
    let h = batch.header;
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
        kaen_log::format::Compression::label_of_id(h.compression_id()),
        h.crc,
        crc_valid,
    )?;
    Ok(())
}

/// Text: a record's `| offset: …` line, with its key, value and headers
/// (decoded as `internal` says), or for a control record its marker.
pub fn write_text_record(
    out: &mut Output,
    r: &RecordView<'_>,
    is_control: bool,
    ts_label: &str,
    internal: Option<Internal>,
) -> anyhow::Result<()> {
    write!(out, "| offset: {} {}: {}", r.offset, ts_label, r.timestamp)?;
    if is_control {
        match kaen_log::format::control::decode(r.key, r.value, r.position) {
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

/// Text: a legacy (magic 0/1) entry's line and a line per inner message
/// (with the entry's CRC validity, codec and timestamp type).
pub fn write_legacy_lines<'m>(
    out: &mut Output,
    m: &LegacyView<'_>,
    (crc_valid, codec, ts_label): (bool, &str, &str),
    messages: impl Iterator<Item = LegacyMessage<'m>>,
) -> anyhow::Result<()> {
    writeln!(
        out,
        "position: {} offset: {} {}: {} size: {} magic: {} compresscodec: {} crc: {} isvalid: {}",
        m.position,
        m.offset,
        ts_label,
        m.timestamp,
        m.bytes().len(),
        m.magic,
        codec,
        m.crc,
        crc_valid
    )?;
    for msg in messages {
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
    Ok(())
}
