//! kafka-dump-log's line format (`DumpLogSegments` with `--deep-iteration
//! --print-data-log`), for `klog dump-segment --print-data-log`: the same
//! lines, so parsers written for kafka-dump-log keep working. Keys and
//! payloads are decoded as UTF-8 with replacement, as Kafka's default
//! `StringDecoder` does, and control characters are escaped (a key cannot
//! drive the terminal).

use kaen_log::format::batch::BatchHeader;
use kaen_log::format::control::{ControlRecord, ControlType};
use kaen_log::format::legacy::{LegacyMessage, LegacyView};
use kaen_log::format::RecordView;

use super::table::escape_cell;

/// `printBatchLevel` for a v2 batch at `position` of `size` bytes.
pub fn batch_line(
    h: &BatchHeader,
    position: u64,
    size: usize,
    crc_valid: bool,
    codec: &str,
) -> String {
    // deleteHorizonMs is an OptionalLong: the base timestamp when the
    // delete-horizon attribute is set (DefaultRecordBatch.deleteHorizonMs).
    let horizon = if h.has_delete_horizon() {
        format!("OptionalLong[{}]", h.base_timestamp)
    } else {
        "OptionalLong.empty".to_string()
    };
    format!(
        "baseOffset: {} lastOffset: {} count: {} baseSequence: {} lastSequence: {} producerId: {} \
         producerEpoch: {} partitionLeaderEpoch: {} isTransactional: {} isControl: {} deleteHorizonMs: {horizon} \
         position: {position} {}: {} size: {size} magic: 2 compresscodec: {codec} crc: {} isvalid: {crc_valid}",
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
        h.timestamp_type().label(),
        h.max_timestamp,
        h.crc,
    )
}

/// `printRecordContents`: ` key: …` when there is a key, ` payload: …`
/// when there is a value.
fn push_contents(line: &mut String, key: Option<&[u8]>, value: Option<&[u8]>) {
    if let Some(k) = key {
        line.push_str(&format!(" key: {}", text(k)));
    }
    if let Some(v) = value {
        line.push_str(&format!(" payload: {}", text(v)));
    }
}

fn text(b: &[u8]) -> String {
    escape_cell(&String::from_utf8_lossy(b)).into_owned()
}

/// One `| offset: …` line of a v2 record (`control` for a control batch).
pub fn record_line(h: &BatchHeader, r: &RecordView<'_>, control: Option<&ControlRecord>) -> String {
    let size = |b: Option<&[u8]>| b.map_or(-1, |b| b.len() as i64);
    let keys: Vec<String> = r.headers().map(|hd| text(hd.key)).collect();
    let mut line = format!(
        "| offset: {} {}: {} keySize: {} valueSize: {} sequence: {} headerKeys: [{}]",
        r.offset,
        h.timestamp_type().label(),
        r.timestamp,
        size(r.key),
        size(r.value),
        h.record_sequence(r.offset_delta),
        keys.join(",")
    );
    if h.is_control() {
        match control {
            Some(c) if matches!(c.kind, ControlType::Abort | ControlType::Commit) => {
                line.push_str(&format!(
                    " endTxnMarker: {} coordinatorEpoch: {}",
                    c.kind.name(),
                    c.coordinator_epoch.unwrap_or(0)
                ));
            }
            Some(c) => line.push_str(&format!(" controlType: {}({})", c.kind.name(), c.kind.id())),
            None => {}
        }
        return line;
    }
    push_contents(&mut line, r.key, r.value);
    line
}

/// `printBatchLevel` for a legacy (magic 0 or 1) entry: `offset:` its last
/// offset, then what every batch line ends with; `ts_label` is its
/// timestamp type (`NoTimestampType` for magic 0).
pub fn legacy_batch_line(
    m: &LegacyView<'_>,
    crc_valid: bool,
    codec: &str,
    ts_label: &str,
) -> String {
    format!(
        "offset: {} position: {} {ts_label}: {} size: {} magic: {} compresscodec: {codec} crc: {} isvalid: {crc_valid}",
        m.offset,
        m.position,
        m.timestamp,
        m.bytes().len(),
        m.magic,
        m.crc,
    )
}

/// One `| offset: …` line of a legacy message (`printRecordMetadata`: the
/// entry's timestamp type, sizes, then the message's own `isValid` and
/// stored `crc`), its key and payload after it unless `skip_metadata`.
pub fn legacy_record_line(msg: &LegacyMessage<'_>, ts_label: &str, skip_metadata: bool) -> String {
    let size = |b: Option<&[u8]>| b.map_or(-1, |b| b.len() as i64);
    let mut line = if skip_metadata {
        "|".to_string()
    } else {
        format!(
            "| offset: {} {ts_label}: {} keySize: {} valueSize: {} isValid: {} crc: {}",
            msg.offset,
            msg.timestamp,
            size(msg.key),
            size(msg.value),
            msg.crc_valid,
            msg.crc,
        )
    };
    push_contents(&mut line, msg.key, msg.value);
    line
}

/// A record line without metadata (`--skip-record-metadata`): `| key: …
/// payload: …` as Kafka prints it; a control record's line is empty there.
pub fn data_line(h: &BatchHeader, r: &RecordView<'_>) -> String {
    if h.is_control() {
        return String::new();
    }
    let mut line = "|".to_string();
    push_contents(&mut line, r.key, r.value);
    line
}
