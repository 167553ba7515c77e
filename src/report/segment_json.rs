//! `dump-segment`'s JSON: entries written as they decode, and the rendering
//! of plain batches that read-ahead threads run ([`RenderJson`]).

use std::io::Write;
use std::sync::Arc;

use kaen_log::format::legacy::LegacyMessage;
use kaen_log::format::{BatchView, DecodeLimits, RecordView};
use kaen_log::inspect::layout::Field;
use kaen_log::log::read::PrepareBatch;
use kaen_log::metadata::records::{decode_control_value, Hex};
use schemars::JsonSchema;
use serde::Serialize;

use crate::report::document::{entry_head, Entries};
use crate::report::internal::{self, Internal};
use crate::report::{indexes, stream_json_bytes, write_json_bytes};
use crate::report::{JsonBytes, Output};

/// One field of `--layout`.
#[derive(Serialize, JsonSchema)]
pub struct LayoutField<'a> {
    position: u64,
    decompressed: bool,
    depth: u8,
    /// The field's bytes in hex.
    #[schemars(with = "String")]
    bytes: Hex<'a>,
    field: &'a str,
    value: &'a str,
}

/// The head of a `--layout` entry; its `fields` follow as they are read.
#[derive(Serialize, JsonSchema)]
pub struct LayoutHead<'a> {
    #[serde(flatten)]
    pub file: &'a kaen_log::log::findings::FileFields,
    pub position: u64,
}

/// A legacy (magic 0/1) entry's head; its inner messages follow as
/// `records` as they decode.
#[derive(Serialize, JsonSchema)]
pub struct LegacyHead<'a> {
    #[serde(flatten)]
    pub file: &'a kaen_log::log::findings::FileFields,
    pub position: u64,
    pub base_offset: i64,
    pub last_offset: i64,
    pub size: usize,
    pub magic: i8,
    pub crc: u32,
    pub crc_valid: bool,
    pub computed_crc: u32,
    pub attributes: i8,
    pub compression: &'a str,
    pub timestamp_type: Option<&'static str>,
    pub max_timestamp: i64,
}

/// The header fields of a v2 batch's JSON line, in output order.
#[derive(Serialize, JsonSchema)]
pub struct BatchJson<'a> {
    #[serde(flatten)]
    file: &'a kaen_log::log::findings::FileFields,
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

impl<'a> BatchJson<'a> {
    /// The head of `batch` in `file`, whose CRC computes to `computed_crc`.
    pub fn of(
        file: &'a kaen_log::log::findings::FileFields,
        batch: &BatchView<'_>,
        computed_crc: u32,
    ) -> Self {
        let h = &batch.header;
        BatchJson {
            file,
            position: batch.position,
            base_offset: h.base_offset,
            last_offset: h.last_offset(),
            record_count: h.records_count,
            size: batch.bytes().len(),
            magic: 2,
            crc: h.crc,
            crc_valid: computed_crc == h.crc,
            computed_crc,
            attributes: h.attributes,
            compression: kaen_log::format::Compression::label_of_id(h.compression_id()),
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
        }
    }
}

/// What a record of a v2 batch shows beyond its fields: the control
/// marker, or an internal topic's decoded key and value.
#[derive(Clone, Copy)]
pub struct RecordKind {
    pub is_control: bool,
    pub internal: Option<Internal>,
}

/// Output bytes held before they are handed to stdout: an entry of any
/// length (millions of records, a value of hundreds of MiB) costs this
/// buffer, not its own size.
const FLUSH_AT: usize = 1 << 20;
/// A key, value or header value at least this long is written straight to
/// stdout instead of through the entry buffer.
const STREAM_FROM: usize = 64 << 10;

/// One JSON entry: `{"type":…` and its head's fields, then `records` (or
/// `fields`) as they decode, then `records_error` when there is one; the
/// same bytes serde_json writes for the object with those fields in that
/// order. Built in a reused buffer that goes to stdout whenever it holds
/// [`FLUSH_AT`] bytes; [`Entries`] frames it (separators, line ends). A
/// detached entry (a read-ahead thread's, of a batch of at most one read
/// chunk) has no stdout and is built whole in its buffer.
pub struct JsonLine<'b, 'o> {
    buf: &'b mut Vec<u8>,
    out: Option<&'o mut Output>,
    end: &'static [u8],
    elements: usize,
    offset: LastNumber,
    timestamp: LastNumber,
}

/// The last number written in one place and its digits: the records of a
/// batch mostly share their timestamp (always, under LogAppendTime), and
/// their offsets count up by one, so digits are formatted once a batch and
/// then reused or counted up in place.
#[derive(Default)]
struct LastNumber {
    value: Option<i64>,
    /// Room for `-9223372036854775808`; the digits are `digits[..len]`.
    digits: [u8; 20],
    len: usize,
}

impl LastNumber {
    /// Append `value` as serde_json writes it (itoa: what serde_json calls).
    #[inline]
    fn write(&mut self, value: i64, out: &mut Vec<u8>) {
        if self.value != Some(value) {
            let next = self.value.and_then(|v| v.checked_add(1)) == Some(value);
            if !(next && value > 0 && self.count_up()) {
                let mut digits = itoa::Buffer::new();
                let text = digits.format(value).as_bytes();
                self.len = text.len();
                self.digits[..text.len()].copy_from_slice(text);
            }
            self.value = Some(value);
        }
        // All 20 bytes, then the extra ones dropped: a copy of a known
        // length is a few stores, where one of `len` bytes is a call.
        out.extend_from_slice(&self.digits);
        out.truncate(out.len() - (self.digits.len() - self.len));
    }

    /// Add one to the (non-negative) decimal digits in place; false when
    /// every digit is 9 (the number grows a digit: formatted again).
    #[inline]
    fn count_up(&mut self) -> bool {
        for d in self.digits[..self.len].iter_mut().rev() {
            if *d < b'9' {
                *d += 1;
                return true;
            }
            *d = b'0';
        }
        false
    }
}

impl<'b, 'o> JsonLine<'b, 'o> {
    /// Start an entry of `kind` in `buf` (cleared first), with `sink`'s
    /// separator before it.
    pub fn start(
        buf: &'b mut Vec<u8>,
        out: &'o mut Output,
        sink: &mut Entries,
        kind: &str,
        head: &impl Serialize,
    ) -> anyhow::Result<Self> {
        buf.clear();
        let end = sink.open_entry(buf, kind)?;
        Self::head(buf, Some(out), end, head)
    }

    /// Start an entry of `kind` at the end of `buf`, without a separator
    /// (the caller writes that when it writes the entry out), ending in `end`.
    fn detached(
        buf: &'b mut Vec<u8>,
        end: &'static [u8],
        kind: &str,
        head: &impl Serialize,
    ) -> anyhow::Result<Self> {
        entry_head(buf, kind)?;
        Self::head(buf, None, end, head)
    }

    /// Bytes in the buffer so far.
    fn len(&self) -> usize {
        self.buf.len()
    }

    /// The head's fields after `{"type":kind`.
    fn head(
        buf: &'b mut Vec<u8>,
        out: Option<&'o mut Output>,
        end: &'static [u8],
        head: &impl Serialize,
    ) -> anyhow::Result<Self> {
        let at = buf.len();
        serde_json::to_writer(&mut *buf, head)?;
        // The head's fields follow the type: its braces go.
        anyhow::ensure!(
            buf.get(at) == Some(&b'{') && buf.pop() == Some(b'}'),
            "an entry's head is a JSON object"
        );
        if buf.len() == at + 1 {
            buf.truncate(at);
        } else {
            buf[at] = b',';
        }
        Ok(JsonLine {
            buf,
            out,
            end,
            elements: 0,
            offset: LastNumber::default(),
            timestamp: LastNumber::default(),
        })
    }

    /// Open the array field `name` (`records`, `fields`).
    pub fn open(&mut self, name: &str) {
        self.buf.extend_from_slice(b",\"");
        self.buf.extend_from_slice(name.as_bytes());
        self.buf.extend_from_slice(b"\":[");
        self.elements = 0;
    }

    pub fn close(&mut self) {
        self.buf.push(b']');
    }

    /// Start the next element of the open array.
    fn next_element(&mut self) -> std::io::Result<()> {
        if let Some(out) = self.out.as_mut().filter(|_| self.buf.len() >= FLUSH_AT) {
            out.write_all(self.buf)?;
            self.buf.clear();
        }
        if self.elements > 0 {
            self.buf.push(b',');
        }
        self.elements += 1;
        Ok(())
    }

    /// Bytes as [`write_json_bytes`] writes them; a large value goes
    /// straight to stdout.
    #[inline(always)]
    fn bytes(&mut self, b: Option<&[u8]>) -> anyhow::Result<()> {
        match self.out.as_mut() {
            Some(out) if b.map_or(0, <[u8]>::len) >= STREAM_FROM => {
                out.write_all(self.buf)?;
                self.buf.clear();
                stream_json_bytes(*out, b)?;
            }
            _ => write_json_bytes(self.buf, b)?,
        }
        Ok(())
    }

    /// The next element of the records array, up to its value:
    /// `{"offset","timestamp","key","value"`.
    #[inline(always)]
    fn record_start(
        &mut self,
        offset: i64,
        timestamp: i64,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
    ) -> anyhow::Result<()> {
        self.next_element()?;
        // (itoa writes integers as serde_json does: it is what serde_json calls.)
        self.buf.extend_from_slice(b"{\"offset\":");
        self.offset.write(offset, self.buf);
        self.buf.extend_from_slice(b",\"timestamp\":");
        self.timestamp.write(timestamp, self.buf);
        self.buf.extend_from_slice(b",\"key\":");
        self.bytes(key)?;
        self.buf.extend_from_slice(b",\"value\":");
        self.bytes(value)
    }

    /// One v2 record: `{"offset","timestamp","key","value","headers":[{"key","value"}]}`,
    /// plus `"control"` in a control batch, `"decoded"` in an internal
    /// topic; numbers as serde_json writes them.
    pub fn record(&mut self, r: &RecordView<'_>, kind: RecordKind) -> anyhow::Result<()> {
        let RecordKind {
            is_control,
            internal,
        } = kind;
        self.record_start(r.offset, r.timestamp, r.key, r.value)?;
        self.buf.extend_from_slice(b",\"headers\":[");
        // (Most records have none: then the header iterator is not built.)
        if r.header_count > 0 {
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
        }
        self.buf.push(b']');
        let buf = &mut *self.buf;
        if is_control {
            buf.extend_from_slice(b",\"control\":");
            let mut decoded = None;
            let control = match kaen_log::format::control::decode(r.key, r.value, r.position) {
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
    pub fn message(&mut self, m: &LegacyMessage<'_>) -> anyhow::Result<()> {
        self.record_start(m.offset, m.timestamp, m.key, m.value)?;
        self.buf
            .extend_from_slice(b",\"headers\":[],\"crc_valid\":");
        let crc_valid: &[u8] = if m.crc_valid { b"true" } else { b"false" };
        self.buf.extend_from_slice(crc_valid);
        self.buf.push(b'}');
        Ok(())
    }

    /// One field of `--layout`; a large one goes straight to stdout.
    pub fn field(&mut self, f: &Field<'_>) -> anyhow::Result<()> {
        self.next_element()?;
        let json = LayoutField {
            position: f.position,
            decompressed: f.decompressed,
            depth: f.depth,
            bytes: Hex(f.bytes),
            field: &f.name,
            value: &f.value,
        };
        match self.out.as_mut() {
            Some(out) if f.bytes.len() >= STREAM_FROM => {
                out.write_all(self.buf)?;
                self.buf.clear();
                serde_json::to_writer(&mut **out, &json)?;
            }
            _ => serde_json::to_writer(&mut *self.buf, &json)?,
        }
        Ok(())
    }

    /// Close the entry (with `records_error` when there is one) and write
    /// it out; a detached entry stays in its buffer.
    pub fn finish(self, error: Option<kaen_log::DecodeError>) -> anyhow::Result<()> {
        if let Some(e) = error {
            self.buf.extend_from_slice(b",\"records_error\":");
            let detail = ErrorJson {
                kind: kaen_log::log::findings::Kind::of_decode(&e.kind).name(),
                detail: e.to_string(),
            };
            serde_json::to_writer(&mut *self.buf, &detail)?;
        }
        self.buf.extend_from_slice(self.end);
        if let Some(out) = self.out {
            out.write_all(self.buf)?;
            self.buf.clear();
        }
        Ok(())
    }
}

/// The JSON entry of a plain batch, rendered by a read-ahead thread while
/// the batch's bytes are in its cache (see
/// [`SegmentReader::prepare_ahead`](kaen_log::log::read::SegmentReader::prepare_ahead)):
/// the very bytes the reading thread would write, separator aside. A batch
/// with a problem to report (a CRC mismatch, a record that does not
/// decode) is left to the reading thread, which reports it in order.
pub struct RenderJson {
    pub file: kaen_log::log::findings::FileFields,
    pub end: &'static [u8],
    pub batches_only: bool,
    pub internal: Option<Internal>,
    /// Whether a record is shown (the command's selection).
    pub wants: Box<dyn Fn(&RecordView<'_>) -> bool + Send + Sync>,
    pub limits: DecodeLimits,
}

impl RenderJson {
    fn entry(
        &self,
        batch: &BatchView<'_>,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> anyhow::Result<bool> {
        let computed_crc = batch.computed_crc();
        if computed_crc != batch.header.crc {
            return Ok(false);
        }
        let head = BatchJson::of(&self.file, batch, computed_crc);
        let mut json = JsonLine::detached(out, self.end, "batch", &head)?;
        if !self.batches_only {
            let kind = RecordKind {
                is_control: batch.header.is_control(),
                internal: self.internal,
            };
            json.open("records");
            let mut fits = true;
            let error = batch.records(scratch, self.limits)?.try_each(|r| {
                if (self.wants)(r) {
                    json.record(r, kind)?;
                    fits = json.len() <= limit;
                }
                anyhow::Ok(fits)
            })?;
            if !fits || error.is_some() {
                return Ok(false);
            }
            json.close();
        }
        json.finish(None)?;
        Ok(true)
    }
}

impl PrepareBatch for RenderJson {
    fn prepare(
        &self,
        batch: &BatchView<'_>,
        scratch: &mut Vec<u8>,
        out: &mut Vec<u8>,
        limit: usize,
    ) -> bool {
        self.entry(batch, scratch, out, limit).unwrap_or(false)
    }
}

/// A [`RenderJson`] shared with read-ahead threads.
pub fn shared(r: RenderJson) -> Arc<dyn PrepareBatch> {
    Arc::new(r)
}

#[derive(Serialize, JsonSchema)]
struct ErrorJson {
    kind: &'static str,
    detail: String,
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

/// The shape of `dump-segment --format json`, for its JSON Schema (the
/// writer above is hand-tuned; `tests/cli/schema.rs` validates real output
/// against this).
#[derive(JsonSchema)]
#[allow(dead_code)]
pub struct DumpDocument {
    schema_version: u32,
    command: String,
    entries: Vec<DumpEntry>,
}

#[derive(JsonSchema)]
#[serde(tag = "type", rename_all = "snake_case")]
#[allow(dead_code)]
enum DumpEntry {
    Batch(V2Batch),
    LegacyBatch(LegacyEntry),
    Layout(LayoutEntry),
    OffsetIndexEntry(indexes::OffsetEntry<'static>),
    TimeIndexEntry(indexes::TimeEntry<'static>),
    TxnIndexEntry(indexes::TxnEntry<'static>),
    SnapshotEntry(indexes::SnapshotEntry<'static>),
    FileField(indexes::FileFieldEntry<'static>),
    Error(crate::report::document::Problem<'static>),
}

/// A legacy (magic 0/1) entry with its inner messages.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct LegacyEntry {
    #[serde(flatten)]
    head: LegacyHead<'static>,
    #[serde(default)]
    records: Vec<LegacyRecord>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct LegacyRecord {
    offset: i64,
    timestamp: i64,
    key: JsonBytes<'static>,
    value: JsonBytes<'static>,
    headers: [(); 0],
    crc_valid: bool,
}

/// A batch field by field (`--layout`).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct LayoutEntry {
    #[serde(flatten)]
    head: LayoutHead<'static>,
    fields: Vec<LayoutField<'static>>,
}

/// A v2 batch with its records.
#[derive(JsonSchema)]
#[allow(dead_code)]
struct V2Batch {
    #[serde(flatten)]
    head: BatchJson<'static>,
    #[serde(default)]
    records: Vec<RecordSchema>,
    #[serde(default)]
    records_error: Option<ErrorJson>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct RecordSchema {
    offset: i64,
    timestamp: i64,
    key: JsonBytes<'static>,
    value: JsonBytes<'static>,
    headers: Vec<HeaderSchema>,
    /// In a control batch: the marker (or why it is invalid).
    #[serde(default)]
    control: Option<serde_json::Value>,
    /// Internal topics and KRaft control records: the decoded key and value.
    #[serde(default)]
    decoded: Option<serde_json::Value>,
}

#[derive(JsonSchema)]
#[allow(dead_code)]
struct HeaderSchema {
    key: JsonBytes<'static>,
    value: JsonBytes<'static>,
}

#[cfg(test)]
mod tests {
    use super::LastNumber;

    /// Every value written through one LastNumber reads as itoa formats it:
    /// runs counting up (across 9 → 10, 99 → 100, zero, i64::MAX), repeats,
    /// jumps, negatives.
    #[test]
    fn last_number_writes_what_itoa_writes() {
        let mut values: Vec<i64> = Vec::new();
        values.extend(-12..1_200);
        values.extend([5, 5, 5, 99_999, 100_000, 100_001, 7, 8, 8, 9, 10]);
        values.extend((i64::MAX - 3..=i64::MAX).chain([i64::MIN, i64::MIN + 1, -1, 0, 1]));
        values.extend(999_999_990..1_000_000_010);
        let mut n = LastNumber::default();
        let mut out = b"x".to_vec();
        let mut expected = b"x".to_vec();
        for &v in &values {
            n.write(v, &mut out);
            out.push(b',');
            expected.extend_from_slice(itoa::Buffer::new().format(v).as_bytes());
            expected.push(b',');
        }
        assert_eq!(String::from_utf8(out), String::from_utf8(expected));
    }
}
