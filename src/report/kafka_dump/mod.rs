//! kafka-dump-log's line format (`DumpLogSegments` with `--deep-iteration
//! --print-data-log`), for `klog dump-segment --print-data-log`: the same
//! lines, so parsers written for kafka-dump-log keep working. Keys and
//! payloads are what the decoder flag's parser makes of them ([`parsers`]),
//! by default UTF-8 with replacement, as Kafka's default `StringDecoder`
//! does; hidden characters are escaped (a key cannot drive the terminal),
//! in JSON as JSON escapes. Where releases print differently, [`release`]
//! says how.

use kaen_log::format::batch::BatchHeader;
use kaen_log::format::control::ControlRecord;
use kaen_log::format::escape::escape_json_text;
use kaen_log::format::legacy::{LegacyMessage, LegacyView};
use kaen_log::format::RecordView;

use super::table::escape_cell;

pub mod after_run;
mod control_marker;
mod coordinator_json;
pub mod decoders;
mod parsed;
pub mod parsers;
pub mod release;
mod scala_hash_set;
mod txn_text;

pub use decoders::{ClassDecoder, Thrown};
pub use parsers::Parser;
pub use release::Tool;

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

/// A record line cut short where a decoder class threw: what the tool had
/// printed of it (`print`, no newline), and the exception.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Halted {
    pub partial: String,
    pub thrown: Thrown,
}

/// How records print: kafka-dump-log's options and the release it is.
#[derive(Debug, Clone, Copy, Default)]
pub struct Lines {
    pub tool: Tool,
    /// `--print-data-log` or a decoder flag: each record's key and payload
    /// (`printContents`); `--deep-iteration` alone prints only metadata.
    pub contents: bool,
    /// `--skip-record-metadata`.
    pub skip_metadata: bool,
    pub parser: Parser,
}

/// The start of a record's line: `| offset: <offset> <timestampType>:
/// <timestamp> keySize: <n> valueSize: <n>` (`printRecordMetadata`), the
/// sizes as stored (-1 for null).
fn metadata_head(offset: i64, ts_label: &str, timestamp: i64, sizes: (i64, i64)) -> String {
    format!(
        "| offset: {offset} {ts_label}: {timestamp} keySize: {} valueSize: {}",
        sizes.0, sizes.1
    )
}

/// A key's or value's size as `keySize`/`valueSize` print it: -1 for null.
fn size(b: Option<&[u8]>) -> i64 {
    b.map_or(-1, |b| b.len() as i64)
}

impl Lines {
    /// The `| offset: …` line of a v2 record (`control` for a control
    /// batch's record).
    pub fn record_line(
        &self,
        h: &BatchHeader,
        r: &RecordView<'_>,
        control: Option<&ControlRecord>,
    ) -> Result<String, Halted> {
        let mut line = String::new();
        if !self.skip_metadata {
            line = metadata_head(
                r.offset,
                h.timestamp_type().label(),
                r.timestamp,
                (size(r.key), size(r.value)),
            );
            let keys: Vec<String> = r.headers().map(|hd| text(hd.key)).collect();
            line.push_str(&format!(
                " sequence: {} headerKeys: [{}]",
                h.record_sequence(r.offset_delta),
                keys.join(",")
            ));
            if let Some(c) = control {
                line.push_str(&control_marker::control_text(self.tool, c, r.value));
            }
        }
        if !h.is_control() {
            self.push_contents(&mut line, r.offset, r.key, r.value)?;
        }
        Ok(line)
    }

    /// The `| offset: …` line of a legacy message: the entry's timestamp
    /// type, sizes, then the message's own `isValid` and stored `crc`
    /// (`crc: N}` in the Scala tool), its key and payload after it.
    pub fn legacy_record_line(
        &self,
        msg: &LegacyMessage<'_>,
        ts_label: &str,
    ) -> Result<String, Halted> {
        let mut line = String::new();
        if !self.skip_metadata {
            line = self.legacy_head(
                (msg.offset, ts_label, msg.timestamp),
                (size(msg.key), size(msg.value)),
                (msg.crc_valid, msg.crc),
            );
        }
        self.push_contents(&mut line, msg.offset, msg.key, msg.value)?;
        Ok(line)
    }

    /// A legacy message's metadata: [`metadata_head`], then its own
    /// `isValid` and stored `crc` (`crc: N}` in the Scala tool).
    fn legacy_head(
        &self,
        (offset, ts_label, timestamp): (i64, &str, i64),
        sizes: (i64, i64),
        (crc_valid, crc): (bool, u32),
    ) -> String {
        let brace = if self.tool.scala() { "}" } else { "" };
        format!(
            "{} isValid: {crc_valid} crc: {crc}{brace}",
            metadata_head(offset, ts_label, timestamp, sizes)
        )
    }

    /// The `| offset: …` line of an uncompressed legacy entry whose value
    /// runs past its end (`why`): the sizes as stored, then what the
    /// parser prints when `record.value()` throws
    /// ([`Parser::parse_unreadable_value`]). `None` when a size field lies
    /// past the end too: Kafka's `printRecordMetadata` throws at it.
    pub fn unreadable_legacy_line(
        &self,
        m: &LegacyView<'_>,
        ts_label: &str,
        why: &str,
    ) -> Option<String> {
        let (Ok(key), Some(key_size), Some(value_size)) = (m.key, m.key_size(), m.value_size())
        else {
            return None;
        };
        let mut line = String::new();
        if !self.skip_metadata {
            line = self.legacy_head(
                (m.offset, ts_label, m.timestamp),
                (key_size.into(), value_size.into()),
                (m.crc_valid(), m.crc),
            );
        }
        if self.contents {
            let parsed = self
                .parser
                .parse_unreadable_value(self.tool, m.offset, key, &why);
            self.push_parsed(&mut line, parsed.unwrap_or_default());
        }
        Some(line)
    }

    /// `printRecordContents`: ` key: …` when the parser gives a key, `
    /// payload: …` when it gives a payload; with --skip-record-metadata
    /// the first of them starts `| ` (in the Scala tool a payload after no
    /// key does not). A decoder class that throws halts the line.
    fn push_contents(
        &self,
        line: &mut String,
        offset: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> Result<(), Halted> {
        if !self.contents {
            return Ok(());
        }
        let parsed = self
            .parser
            .parse(self.tool, offset, key, value)
            .map_err(|thrown| Halted {
                partial: std::mem::take(line),
                thrown,
            })?;
        self.push_parsed(line, parsed);
        Ok(())
    }

    /// ` key: …` and ` payload: …` as `printRecordContents` prints what
    /// the parser gave.
    fn push_parsed(&self, line: &mut String, parsed: parsers::Parsed) {
        let shown = |t: &str| -> String {
            if self.parser.prints_json(self.tool) {
                escape_json_text(t).into_owned()
            } else {
                escape_cell(t).into_owned()
            }
        };
        let mut prefix = if self.skip_metadata { "| " } else { " " };
        if let Some(k) = &parsed.key {
            line.push_str(&format!("{prefix}key: {}", shown(k)));
            prefix = " ";
        }
        if let Some(p) = &parsed.payload {
            if self.tool.scala() {
                prefix = " ";
            }
            line.push_str(&format!("{prefix}payload: {}", shown(p)));
        }
    }

    /// 3.9's deprecation lines, printed after a log file's `Dumping` line:
    /// the value's decoder is made first.
    pub fn deprecation_lines(&self) -> Vec<String> {
        match self.parser {
            Parser::Classes { key, value } => [value, key]
                .iter()
                .filter_map(|d| d.deprecation_line())
                .collect(),
            _ => Vec::new(),
        }
    }
}

fn text(b: &[u8]) -> String {
    escape_cell(&String::from_utf8_lossy(b)).into_owned()
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
