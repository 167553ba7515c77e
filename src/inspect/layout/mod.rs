//! The annotated byte layout behind `dump-segment --layout`: every field of
//! a batch header, of each record and of the keys and values klog decodes
//! (control records, the offsets topic's and the share coordinator's
//! records, KRaft metadata records), as `position  raw bytes  field
//! decoded value`, for people learning the format.
//!
//! The fields are the decoders' own reads: each decoder takes a
//! [`Trace`] and hands it every field as it
//! reads it (the batch header, the records, control records, the
//! coordinators' record types and versions, the metadata frame; the schema
//! interpreter's trace for the messages), so the layout shows what the
//! decoder read and stops where it stops, with its error. What the layout
//! adds is what each value says.

mod of_file;
pub mod sidecar;

pub use of_file::{of_file, MAX_FILE};

use crate::error::{DecodeError, DecodeErrorKind};
use crate::format::batch::{self, BatchHeader, BatchView};
use crate::format::control::{self, ControlType};
use crate::format::cursor::Cursor;
use crate::format::record;
use crate::format::schema::Schema;
use crate::format::trace::{Read, Trace, Value};
use crate::format::{compression, Compression, DecodeLimits};
use crate::offsets::records::RecordType;

pub use crate::format::annotation::Field;

/// What the batch belongs to, for decoding keys and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Plain,
    /// `__offsets` / `__consumer_offsets`.
    Offsets,
    /// `__cluster_metadata`, its snapshots and `bootstrap.checkpoint`.
    Metadata,
    /// `__share_group_state`.
    ShareGroupState,
}

struct Tracer<'a, 'o> {
    c: Cursor<'a>,
    out: &'o mut dyn FnMut(&Field<'_>),
    decompressed: bool,
    depth: u8,
}

impl<'a> Tracer<'a, '_> {
    fn field<T>(
        &mut self,
        name: &str,
        read: impl FnOnce(&mut Cursor<'a>) -> Result<T, DecodeError>,
        show: impl FnOnce(&T) -> String,
    ) -> Result<T, DecodeError> {
        let start = self.c.position();
        let before = self.c.rest();
        let v = read(&mut self.c)?;
        let len = (self.c.position() - start) as usize;
        (self.out)(&Field {
            position: start,
            decompressed: self.decompressed,
            depth: self.depth,
            bytes: before.get(..len).unwrap_or(&[]),
            name: name.to_string(),
            value: show(&v),
        });
        Ok(v)
    }

    fn note(&mut self, name: &str, value: String) {
        (self.out)(&Field {
            position: self.c.position(),
            decompressed: self.decompressed,
            depth: self.depth,
            bytes: &[],
            name: name.into(),
            value,
        });
    }
}

/// Most bytes of a key or value shown as text; the rest is counted.
const TEXT_SHOWN: usize = 4096;

fn text(b: &[u8]) -> String {
    match std::str::from_utf8(b) {
        Ok(s) if s.len() <= TEXT_SHOWN => format!("{s:?}"),
        Ok(s) => {
            let mut cut = TEXT_SHOWN;
            while !s.is_char_boundary(cut) {
                cut -= 1;
            }
            let shown = s.get(..cut).unwrap_or_default();
            format!("{shown:?}... ({} bytes)", s.len())
        }
        Err(_) => format!("{} bytes (not UTF-8)", b.len()),
    }
}

fn attributes_text(a: i16) -> String {
    let codec = Compression::from_id((a & batch::attr::COMPRESSION_MASK) as u8)
        .map_or("unknown".to_string(), |c| c.name().to_string());
    let mut parts = vec![format!(
        "codec {codec} ({})",
        a & batch::attr::COMPRESSION_MASK
    )];
    parts.push(if a & batch::attr::TIMESTAMP_TYPE != 0 {
        "LogAppendTime".into()
    } else {
        "CreateTime".into()
    });
    for (bit, name) in [
        (batch::attr::TRANSACTIONAL, "transactional"),
        (batch::attr::CONTROL, "control"),
        (batch::attr::DELETE_HORIZON, "delete horizon"),
    ] {
        if a & bit != 0 {
            parts.push(name.into());
        }
    }
    format!("0x{a:04x}: {}", parts.join(", "))
}

/// Annotate one batch (and its records): each field is handed to `each`
/// as it is read, nothing is collected (a batch of millions of records
/// costs its decompressed bytes, not millions of fields). The decode error
/// that ended the listing, if one did.
///
/// The fields are the ones the decoders read ([`BatchHeader::parse_traced`],
/// [`record::read_record_traced`], the control record's
/// [`control::decode_key_traced`] and [`control::decode_marker_traced`]),
/// each shown with what it says.
pub fn batch_layout(
    b: &BatchView<'_>,
    topic: Topic,
    limits: DecodeLimits,
    each: &mut dyn FnMut(&Field<'_>),
) -> Option<DecodeError> {
    trace_batch(b, topic, limits, each).err()
}

fn trace_batch(
    b: &BatchView<'_>,
    topic: Topic,
    limits: DecodeLimits,
    out: &mut dyn FnMut(&Field<'_>),
) -> Result<(), DecodeError> {
    let h = b.header;
    let mut shown = Shown {
        out,
        header: h,
        computed_crc: b.computed_crc(),
        topic,
        decompressed: false,
        depth: 0,
        header_no: 0,
        kind: Decoded::Plain,
    };
    BatchHeader::parse_traced(b.bytes(), b.position, &mut shown)?;
    let section = b.records_section();
    let codec = h.compression().unwrap_or(Compression::None);
    let mut scratch = Vec::new();
    let mut rc = if codec == Compression::None {
        Cursor::new(section, b.position + batch::HEADER_LEN as u64)
    } else {
        shown.note(b.position + batch::HEADER_LEN as u64, "records (compressed)", format!("{} bytes of {codec}; the records below are at positions inside the decompressed data", section.len()));
        compression::decompress(codec, section, &mut scratch, limits.max_decompressed)
            .map_err(|kind| DecodeError::new(b.position + batch::HEADER_LEN as u64, kind))?;
        shown.decompressed = true;
        Cursor::new(&scratch, 0)
    };
    for i in 0..h.records_count.max(0) {
        if rc.is_empty() {
            break;
        }
        shown.depth = 1;
        shown.header_no = 0;
        shown.note(rc.position(), &format!("record {i}"), String::new());
        record::read_record_traced(&mut rc, &h, &mut shown)?;
    }
    Ok(())
}

/// The fields the decoders read, each shown with what it says, in the
/// batch `header`'s terms; a record's key and value decoded as `topic`'s
/// records are, field by field, right after their bytes.
struct Shown<'o> {
    out: &'o mut dyn FnMut(&Field<'_>),
    header: BatchHeader,
    computed_crc: u32,
    topic: Topic,
    decompressed: bool,
    /// 0 the batch header, 1 a record, 2 its headers.
    depth: u8,
    /// The record header being read.
    header_no: u32,
    /// What the record's key said its value is.
    kind: Decoded,
}

impl<'a> Trace<'a> for Shown<'_> {
    fn read(&mut self, f: Read<'a>) {
        let h = &self.header;
        let n = f.value.number();
        let value = match (self.depth, f.name, f.value) {
            (_, _, Value::Bytes(b)) => self.bytes_text(f.name, b),
            (0, "batchLength", _) => format!("{n} (batch is {} bytes)", n + 12),
            (0, "crc", _) => format!(
                "stored 0x{n:08x}, computed 0x{:08x} over bytes 21..end: {}",
                self.computed_crc,
                if n == i64::from(self.computed_crc) {
                    "valid"
                } else {
                    "MISMATCH"
                }
            ),
            (0, "attributes", _) => attributes_text(n as i16),
            (0, "lastOffsetDelta", _) => format!("{n} (last offset {})", h.last_offset()),
            (0, "baseTimestamp", _) if h.has_delete_horizon() => {
                format!("{n} (the delete horizon)")
            }
            (0, "producerId", _) if n < 0 => format!("{n} (none)"),
            (0, "baseSequence", _) if n < 0 => format!("{n} (none)"),
            (0, "baseSequence", _) => format!("{n} (last sequence {})", h.last_sequence()),
            (_, "length", _) => format!("{n} bytes follow"),
            (_, "timestampDelta", _) => {
                format!("{n} (timestamp {})", h.base_timestamp.wrapping_add(n))
            }
            (_, "offsetDelta", _) => match h.base_offset.checked_add(n) {
                Some(offset) => format!("{n} (offset {offset})"),
                None => format!("{n} (offset past 2^63-1)"),
            },
            (_, "keyLength" | "valueLength" | "headerKeyLength" | "headerValueLength", _)
                if n < 0 =>
            {
                format!("{n} (null)")
            }
            _ => n.to_string(),
        };
        let name = match f.name {
            "headerKeyLength" => format!("header {} keyLength", self.header_no),
            "headerKey" => format!("header {} key", self.header_no),
            "headerValueLength" => format!("header {} valueLength", self.header_no),
            "headerValue" => format!("header {} value", self.header_no),
            other => other.to_string(),
        };
        let name = match f.value {
            Value::Bytes(_) => name,
            v => format!("{name} ({})", v.type_name()),
        };
        (self.out)(&Field {
            position: f.position,
            decompressed: self.decompressed,
            depth: self.depth,
            bytes: f.bytes,
            name,
            value,
        });
        self.after(&f);
    }
}

impl Shown<'_> {
    fn note(&mut self, position: u64, name: &str, value: String) {
        (self.out)(&Field {
            position,
            decompressed: self.decompressed,
            depth: self.depth,
            bytes: &[],
            name: name.into(),
            value,
        });
    }

    /// What a key's or value's bytes are shown as: text, or (a record the
    /// topic's decoders read) their length, its fields following.
    fn bytes_text(&self, name: &str, b: &[u8]) -> String {
        let inner = matches!(name, "key" | "value");
        if inner && self.header.is_control() {
            format!(
                "{} bytes of a control record, field by field below",
                b.len()
            )
        } else if inner && self.topic != Topic::Plain {
            format!("{} bytes, field by field below", b.len())
        } else {
            text(b)
        }
    }

    /// After a field: a key's or value's own fields, a record header's
    /// number and depth.
    fn after(&mut self, f: &Read<'_>) {
        let null = f.value == Value::Varint(-1);
        let end = f.position + f.bytes.len() as u64;
        match (f.name, f.value) {
            ("keyLength", _) if null => self.kind = self.key_fields(end, None),
            ("key", Value::Bytes(k)) => self.kind = self.key_fields(end, Some((f.position, k))),
            ("valueLength", _) if null => self.value_fields(end, None),
            ("value", Value::Bytes(v)) => self.value_fields(end, Some((f.position, v))),
            ("headerCount", _) => self.depth = 2,
            ("headerValueLength", _) if null => self.header_no += 1,
            ("headerValue", _) => self.header_no += 1,
            _ => {}
        }
    }

    /// Where a key's or value's own fields go: at the record's depth, a
    /// note about them at `end` (after their bytes).
    fn inner(&mut self, end: u64) -> Tracer<'static, '_> {
        Tracer {
            c: Cursor::new(&[], end),
            out: &mut *self.out,
            decompressed: self.decompressed,
            depth: 1,
        }
    }

    /// A key's own fields (a note about it at `end`, after its bytes);
    /// what they say the value is.
    fn key_fields(&mut self, end: u64, key: Option<(u64, &[u8])>) -> Decoded {
        let (control, topic) = (self.header.is_control(), self.topic);
        let mut t = self.inner(end);
        match (control, topic) {
            (true, _) => Decoded::Control(key.and_then(|(at, k)| control_key(&mut t, at, k))),
            (false, Topic::Offsets) => Decoded::Coordinator(
                key.and_then(|(at, k)| coordinator_key(&mut t, at, k, RecordTable::Offsets)),
            ),
            (false, Topic::ShareGroupState) => Decoded::Coordinator(
                key.and_then(|(at, k)| coordinator_key(&mut t, at, k, RecordTable::Share)),
            ),
            (false, Topic::Metadata) => Decoded::Metadata,
            (false, Topic::Plain) => Decoded::Plain,
        }
    }

    /// A value's own fields, as the key said (a note about it at `end`,
    /// after its bytes).
    fn value_fields(&mut self, end: u64, value: Option<(u64, &[u8])>) {
        let kind = self.kind;
        let mut t = self.inner(end);
        match kind {
            Decoded::Control(k) => control_value(&mut t, value, k),
            Decoded::Coordinator(rt) => coordinator_value(&mut t, value, rt),
            Decoded::Metadata => metadata_value(&mut t, value),
            Decoded::Plain => {}
        }
    }
}

/// Run `f` over a key's or value's own bytes at depth 2, then put the
/// tracer back where it was (after the record's length-prefixed bytes).
fn inside<'a>(
    t: &mut Tracer<'a, '_>,
    at: u64,
    bytes: &'a [u8],
    f: impl FnOnce(&mut Tracer<'a, '_>),
) {
    let (saved, depth) = (t.c.clone(), t.depth);
    t.c = Cursor::new(bytes, at);
    t.depth = 2;
    f(t);
    t.c = saved;
    t.depth = depth;
}

/// Every field of `schema` at `version` from the tracer's position, named
/// `{side}: {field path}`, then the cursor moved past them. A field that does
/// not decode ends the listing with a note; bytes after the last field are a
/// note too (`what_follows` says what Kafka does with them). `any_version`:
/// a version outside `validVersions` is read too, as a metadata record's
/// is ([`Schema::trace_any_version`]).
fn schema_fields(
    t: &mut Tracer<'_, '_>,
    side: &str,
    schema: &'static Schema,
    version: i16,
    any_version: bool,
    what_follows: &str,
) {
    let body = t.c.rest();
    let base = t.c.position();
    let (traced, err) = if any_version {
        schema.trace_any_version(body, base, version)
    } else {
        schema.trace(body, base, version)
    };
    let mut end = 0;
    for f in traced {
        let off = (f.position - base) as usize;
        end = end.max(off + f.len);
        (t.out)(&Field {
            position: f.position,
            decompressed: t.decompressed,
            depth: t.depth + f.depth.min(5),
            bytes: body.get(off..off + f.len).unwrap_or(&[]),
            name: format!("{side}: {}", f.name),
            // The interpreter shows a value as JSON, which leaves DEL and
            // the invisible characters raw: escaped as every value here is.
            value: crate::format::escape::escape_json_text(&f.value).into_owned(),
        });
    }
    let _ = t.c.bytes(end);
    match err {
        Some(e) if matches!(e.kind, DecodeErrorKind::TrailingBytes { .. }) => {
            let rest = t.c.remaining();
            let _ = t.field(
                &format!("{side}: bytes after the last field"),
                |c| c.bytes(rest),
                |_| what_follows.to_string(),
            );
        }
        Some(e) => t.note(side, format!("does not decode: {e}")),
        None => {}
    }
}

/// How a record's value is listed, from what its key said.
#[derive(Clone, Copy)]
enum Decoded {
    Plain,
    /// A control record, of the type its key names (when it decodes).
    Control(Option<ControlType>),
    /// A coordinator record, of the type its key names (when klog knows it).
    Coordinator(Option<&'static RecordType>),
    Metadata,
}

/// Field by field, a metadata record's value: the frame
/// (`AbstractApiMessageSerde`: uvarint frameVersion, apiKey, version), then
/// every field of the record's schema (`crate::metadata::records`).
fn metadata_value<'a>(t: &mut Tracer<'a, '_>, value: Option<(u64, &'a [u8])>) {
    use crate::metadata::records::{frame_traced, metadata_schema};
    let Some((at, v)) = value else { return };
    let show = |name: &str, n: i64| match name {
        "apiKey" => {
            let schema = u16::try_from(n).ok().and_then(metadata_schema);
            format!("{n} ({})", schema.map_or("unknown", |s| s.name))
        }
        _ => n.to_string(),
    };
    inside(t, at, v, |t| {
        let mut c = t.c.clone();
        let frame = frame_traced(&mut c, &mut Side::new(t, "value").showing(&show));
        t.c = c;
        match frame {
            Ok(frame) => match metadata_schema(frame.api_key) {
                Some(schema) => schema_fields(
                    t,
                    "value",
                    schema,
                    frame.version,
                    true,
                    "garbage to Kafka: AbstractApiMessageSerde refuses a record with bytes left",
                ),
                None => t.note("value", "an apiKey klog does not know: not decoded".into()),
            },
            Err(e) => t.note("value", format!("does not decode: {e}")),
        }
    });
}

/// What is left of a key or value after the fields Kafka reads.
fn rest_of(t: &mut Tracer<'_, '_>, name: &str, what: &str) -> Result<(), DecodeError> {
    if !t.c.is_empty() {
        let rest = t.c.remaining();
        t.field(name, |c| c.bytes(rest), |_| what.to_string())?;
    }
    Ok(())
}

/// Field by field, a control record's key (`ControlRecordType`: int16
/// version, int16 type); its type when the key decodes.
fn control_key<'a>(t: &mut Tracer<'a, '_>, at: u64, k: &'a [u8]) -> Option<ControlType> {
    let mut kind = None;
    inside(t, at, k, |t| {
        let mut side = Side::new(t, "key").showing(&control_type);
        let decoded = control::decode_key_traced(k, at, &mut side);
        let read = side.read;
        t.c.skip(read);
        match decoded {
            Ok((_, k)) => {
                kind = Some(k);
                let _ = rest_of(t, "key: bytes after the type", "not read by Kafka");
            }
            Err(e) => t.note("key", format!("does not decode: {e}")),
        }
    });
    kind
}

/// Field by field, a control record's value: a transaction marker's
/// (`EndTransactionMarker`: int16 version, int32 coordinatorEpoch) or a
/// KRaft control record's message at version 0 (`ControlRecordUtils`).
fn control_value<'a>(
    t: &mut Tracer<'a, '_>,
    value: Option<(u64, &'a [u8])>,
    kind: Option<ControlType>,
) {
    let Some((at, v)) = value else {
        t.note("value", "null".into());
        return;
    };
    inside(t, at, v, |t| match kind {
        Some(ControlType::Abort | ControlType::Commit) => {
            let mut side = Side::new(t, "value");
            let decoded = control::decode_marker_traced(v, at, at, &mut side);
            let read = side.read;
            t.c.skip(read);
            match decoded {
                Ok(_) => {
                    let _ = rest_of(
                        t,
                        "value: bytes after the marker",
                        "not read by Kafka (a newer marker version's fields)",
                    );
                }
                Err(e) => t.note("value", format!("does not decode: {e}")),
            }
        }
        Some(k) => match crate::metadata::records::CONTROL
            .iter()
            .find(|(id, _)| *id == k.id())
        {
            Some((_, schema)) => schema_fields(
                t,
                "value",
                schema,
                0,
                false,
                "not read by Kafka (ControlRecordUtils reads version 0)",
            ),
            None => t.note(
                "value",
                "a control type klog does not know: not decoded".into(),
            ),
        },
        None => t.note("value", "the key does not decode: not decoded".into()),
    });
}

/// The fields a decoder reads inside a key or value, named `{side}:
/// {field} ({type})`, each value shown by `show` (the field's name, its
/// number): a type's name beside its id.
struct Side<'t, 'a, 'o, 's> {
    t: &'t mut Tracer<'a, 'o>,
    side: &'static str,
    show: &'s dyn Fn(&str, i64) -> String,
    /// How many bytes the fields read took, from the first.
    read: usize,
}

impl<'t, 'a, 'o, 's> Side<'t, 'a, 'o, 's> {
    fn new(t: &'t mut Tracer<'a, 'o>, side: &'static str) -> Self {
        Side {
            t,
            side,
            show: &|_, n| n.to_string(),
            read: 0,
        }
    }

    fn showing(mut self, show: &'s dyn Fn(&str, i64) -> String) -> Self {
        self.show = show;
        self
    }
}

impl<'b> Trace<'b> for Side<'_, '_, '_, '_> {
    fn read(&mut self, f: Read<'b>) {
        self.read += f.bytes.len();
        let t = &mut *self.t;
        (t.out)(&Field {
            position: f.position,
            decompressed: t.decompressed,
            depth: t.depth,
            bytes: f.bytes,
            name: format!("{}: {} ({})", self.side, f.name, f.value.type_name()),
            value: (self.show)(f.name, f.value.number()),
        });
    }
}

/// A control record key's type beside its id.
fn control_type(name: &str, n: i64) -> String {
    match name {
        "type" => format!("{n} ({})", ControlType::from_id(n as i16).name()),
        _ => n.to_string(),
    }
}

/// Which coordinator's records a topic holds.
#[derive(Clone, Copy)]
enum RecordTable {
    /// The group coordinator's (`__consumer_offsets`, klog's `__offsets`).
    Offsets,
    /// The share coordinator's (`__share_group_state`).
    Share,
}

/// Field by field, a coordinator record's key (`CoordinatorRecordSerde`:
/// int16 record type, then the key's fields); its type when klog knows it.
fn coordinator_key<'a>(
    t: &mut Tracer<'a, '_>,
    at: u64,
    k: &'a [u8],
    table: RecordTable,
) -> Option<&'static RecordType> {
    use crate::offsets::records;
    let find = |id: i16| match table {
        RecordTable::Offsets => records::group_record_type(id),
        RecordTable::Share => records::SHARE_RECORDS.iter().find(|r| r.id == id),
    };
    let show = |_: &str, n: i64| {
        let name = i16::try_from(n)
            .ok()
            .and_then(find)
            .map_or("unknown: not decoded", |r| r.name);
        format!("{n} ({name})")
    };
    let mut record_type = None;
    inside(t, at, k, |t| {
        let mut c = t.c.clone();
        let read = records::record_type_traced(&mut c, &mut Side::new(t, "key").showing(&show));
        t.c = c;
        record_type = read.ok().and_then(find);
        if let Some(rt) = record_type {
            schema_fields(t, "key", &rt.key, 0, false, "not read by Kafka");
        }
    });
    record_type
}

/// Field by field, a coordinator record's value: int16 version, then the
/// value's fields at that version; or a tombstone.
fn coordinator_value<'a>(
    t: &mut Tracer<'a, '_>,
    value: Option<(u64, &'a [u8])>,
    record_type: Option<&'static RecordType>,
) {
    let Some((at, v)) = value else {
        t.note("value", "null: a tombstone, the key is deleted".into());
        return;
    };
    inside(t, at, v, |t| {
        let mut c = t.c.clone();
        let read =
            crate::offsets::records::value_version_traced(&mut c, &mut Side::new(t, "value"));
        t.c = c;
        let (Ok(version), Some(rt)) = (read, record_type) else {
            return;
        };
        schema_fields(t, "value", &rt.value, version, false, "not read by Kafka");
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::{encode_batch, BatchSpec, NewRecord};

    /// A field with its bytes copied out.
    struct Owned {
        position: u64,
        decompressed: bool,
        bytes: Vec<u8>,
        name: String,
        value: String,
    }

    fn collect(b: &BatchView<'_>) -> (Vec<Owned>, Option<DecodeError>) {
        let mut out = Vec::new();
        let err = batch_layout(b, Topic::Plain, DecodeLimits::default(), &mut |f| {
            out.push(Owned {
                position: f.position,
                decompressed: f.decompressed,
                bytes: f.bytes.to_vec(),
                name: f.name.clone(),
                value: f.value.clone(),
            })
        });
        (out, err)
    }

    #[test]
    fn reference_vector_field_by_field() {
        let rec = NewRecord {
            value: Some(b"hi".to_vec()),
            timestamp: 1_700_000_000_000,
            ..Default::default()
        };
        let bytes = encode_batch(
            &BatchSpec {
                partition_leader_epoch: 0,
                ..BatchSpec::default()
            },
            &[rec],
        )
        .unwrap();
        let b = BatchView::new(&bytes, 100).unwrap();
        let (fields, err) = collect(&b);
        assert!(err.is_none());
        let find = |name: &str| fields.iter().find(|f| f.name == name).unwrap();
        assert_eq!(
            (
                find("baseOffset (int64)").position,
                find("baseOffset (int64)").bytes.len()
            ),
            (100, 8)
        );
        assert_eq!(find("crc (uint32)").position, 117);
        assert!(find("crc (uint32)").value.ends_with("valid"));
        assert_eq!(find("crc (uint32)").bytes, [0xbb, 0xcc, 0x41, 0x15]);
        assert_eq!(find("length (varint)").position, 161);
        assert_eq!(find("length (varint)").bytes, [0x10]);
        assert_eq!(find("keyLength (varint)").value, "-1 (null)");
        assert_eq!(find("value").value, "\"hi\"");
        // The sum of the fields' bytes is the batch.
        assert_eq!(
            fields.iter().map(|f| f.bytes.len()).sum::<usize>(),
            bytes.len()
        );
    }

    #[test]
    fn compressed_records_are_labelled_decompressed() {
        let recs: Vec<NewRecord> = (0..3)
            .map(|i| NewRecord {
                value: Some(vec![b'x'; 30]),
                timestamp: i,
                ..Default::default()
            })
            .collect();
        let bytes = encode_batch(
            &BatchSpec {
                compression: Compression::Gzip,
                ..BatchSpec::default()
            },
            &recs,
        )
        .unwrap();
        let b = BatchView::new(&bytes, 0).unwrap();
        let (fields, err) = collect(&b);
        assert!(err.is_none());
        assert!(fields.iter().any(|f| f.name == "records (compressed)"));
        let first_len = fields.iter().find(|f| f.name == "length (varint)").unwrap();
        assert!(first_len.decompressed);
        assert_eq!(first_len.position, 0);
    }
}
