//! The annotated byte layout behind `dump-segment --layout`: every field of
//! a batch header, of each record and of the keys and values klog decodes
//! (control records, the offsets topic's and the share coordinator's
//! records, KRaft metadata records), as `position  raw bytes  field
//! decoded value`, for people learning the format.
//!
//! Field positions and names come from the same constants and reads the
//! decoders use ([`batch`](mod@crate::format::batch) offsets, the
//! [`Cursor`]); a field that does not parse
//! ends the listing with the decode error, positioned like every other.

mod of_file;
pub mod sidecar;

pub use of_file::{of_file, MAX_FILE};

use crate::error::{DecodeError, DecodeErrorKind};
use crate::format::batch::{self, BatchHeader, BatchView};
use crate::format::control::ControlType;
use crate::format::cursor::Cursor;
use crate::format::schema::Schema;
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
    let mut t = Tracer {
        c: Cursor::new(b.bytes(), b.position),
        out,
        decompressed: false,
        depth: 0,
    };
    trace_header(&mut t, b)?;
    let section = b.records_section();
    let codec = h.compression().unwrap_or(Compression::None);
    let mut scratch = Vec::new();
    let mut rc = if codec == Compression::None {
        Cursor::new(section, b.position + batch::HEADER_LEN as u64)
    } else {
        t.note("records (compressed)", format!("{} bytes of {codec}; the records below are at positions inside the decompressed data", section.len()));
        compression::decompress(codec, section, &mut scratch, limits.max_decompressed)
            .map_err(|kind| DecodeError::new(b.position + batch::HEADER_LEN as u64, kind))?;
        t.decompressed = true;
        Cursor::new(&scratch, 0)
    };
    for i in 0..h.records_count.max(0) {
        if rc.is_empty() {
            break;
        }
        let mut r = Tracer {
            c: rc.clone(),
            out: &mut *t.out,
            decompressed: t.decompressed,
            depth: 1,
        };
        trace_record(&mut r, i, &h, topic)?;
        rc = r.c;
    }
    Ok(())
}

/// The batch header's fields, each with what it says.
fn trace_header(t: &mut Tracer<'_, '_>, b: &BatchView<'_>) -> Result<(), DecodeError> {
    let h = b.header;
    t.field("baseOffset (int64)", Cursor::i64, |v| v.to_string())?;
    t.field("batchLength (int32)", Cursor::i32, |v| {
        format!("{v} (batch is {} bytes)", i64::from(*v) + 12)
    })?;
    t.field("partitionLeaderEpoch (int32)", Cursor::i32, |v| {
        v.to_string()
    })?;
    t.field("magic (int8)", Cursor::i8, |v| v.to_string())?;
    let computed = b.computed_crc();
    t.field("crc (uint32)", Cursor::u32, |v| {
        format!(
            "stored 0x{v:08x}, computed 0x{computed:08x} over bytes 21..end: {}",
            if *v == computed { "valid" } else { "MISMATCH" }
        )
    })?;
    t.field("attributes (int16)", Cursor::i16, |v| attributes_text(*v))?;
    t.field("lastOffsetDelta (int32)", Cursor::i32, |v| {
        format!("{v} (last offset {})", h.last_offset())
    })?;
    t.field("baseTimestamp (int64)", Cursor::i64, |v| {
        if h.has_delete_horizon() {
            format!("{v} (the delete horizon)")
        } else {
            v.to_string()
        }
    })?;
    t.field("maxTimestamp (int64)", Cursor::i64, |v| v.to_string())?;
    t.field("producerId (int64)", Cursor::i64, |v| {
        if *v < 0 {
            format!("{v} (none)")
        } else {
            v.to_string()
        }
    })?;
    t.field("producerEpoch (int16)", Cursor::i16, |v| v.to_string())?;
    t.field("baseSequence (int32)", Cursor::i32, |v| {
        if *v < 0 {
            format!("{v} (none)")
        } else {
            format!("{v} (last sequence {})", h.last_sequence())
        }
    })?;
    t.field("recordsCount (int32)", Cursor::i32, |v| v.to_string())?;
    Ok(())
}

/// Record `i` of a batch with header `h`, field by field, its key and
/// value decoded as `topic`'s records are.
fn trace_record(
    r: &mut Tracer<'_, '_>,
    i: i32,
    h: &BatchHeader,
    topic: Topic,
) -> Result<(), DecodeError> {
    r.note(&format!("record {i}"), String::new());
    let len = r.field("length (varint)", Cursor::varint, |v| {
        format!("{v} bytes follow")
    })?;
    r.field("attributes (int8)", Cursor::i8, |v| v.to_string())?;
    let ts = r.field("timestampDelta (varlong)", Cursor::varlong, |v| {
        format!("{v} (timestamp {})", h.base_timestamp.wrapping_add(*v))
    })?;
    let _ = ts;
    r.field("offsetDelta (varint)", Cursor::varint, |v| {
        match h.base_offset.checked_add(i64::from(*v)) {
            Some(offset) => format!("{v} (offset {offset})"),
            None => format!("{v} (offset past 2^63-1)"),
        }
    })?;
    // Each decoded key or value is listed field by field right after its bytes.
    let key = kv(r, "key", topic, h.is_control())?;
    let kind = match (h.is_control(), topic) {
        (true, _) => Decoded::Control(key.and_then(|(at, k)| control_key(r, at, k))),
        (false, Topic::Offsets) => Decoded::Coordinator(
            key.and_then(|(at, k)| coordinator_key(r, at, k, RecordTable::Offsets)),
        ),
        (false, Topic::ShareGroupState) => Decoded::Coordinator(
            key.and_then(|(at, k)| coordinator_key(r, at, k, RecordTable::Share)),
        ),
        (false, Topic::Metadata) => Decoded::Metadata,
        (false, Topic::Plain) => Decoded::Plain,
    };
    let value = kv(r, "value", topic, h.is_control())?;
    match kind {
        Decoded::Control(k) => control_value(r, value, k),
        Decoded::Coordinator(rt) => coordinator_value(r, value, rt),
        Decoded::Metadata => metadata_value(r, value),
        Decoded::Plain => {}
    }
    let n = r.field("headerCount (varint)", Cursor::varint, |v| v.to_string())?;
    r.depth = 2;
    for j in 0..n.max(0) {
        kv(r, &format!("header {j} key"), Topic::Plain, false)?;
        kv(r, &format!("header {j} value"), Topic::Plain, false)?;
    }
    let _ = len;
    Ok(())
}

/// A length-prefixed key or value: the length varint, then the bytes.
fn kv<'a>(
    t: &mut Tracer<'a, '_>,
    name: &str,
    topic: Topic,
    control: bool,
) -> Result<Option<(u64, &'a [u8])>, DecodeError> {
    let len = t.field(&format!("{name}Length (varint)"), Cursor::varint, |v| {
        if *v < 0 {
            format!("{v} (null)")
        } else {
            v.to_string()
        }
    })?;
    if len < 0 {
        return Ok(None);
    }
    let at = t.c.position();
    let show = |b: &&[u8]| {
        if control {
            format!(
                "{} bytes of a control record, field by field below",
                b.len()
            )
        } else if topic != Topic::Plain {
            format!("{} bytes, field by field below", b.len())
        } else {
            text(b)
        }
    };
    let bytes = t.field(name, |c| c.bytes(len as usize), show)?;
    Ok(Some((at, bytes)))
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
            value: f.value,
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
    let Some((at, v)) = value else { return };
    inside(t, at, v, |t| {
        let _ = (|| -> Result<(), DecodeError> {
            t.field("value: frameVersion (uvarint)", Cursor::uvarint, |v| {
                v.to_string()
            })?;
            let key = t.field("value: apiKey (uvarint)", Cursor::uvarint, |v| {
                let name = u16::try_from(*v)
                    .ok()
                    .and_then(crate::metadata::records::metadata_schema)
                    .map_or("unknown", |s| s.name);
                format!("{v} ({name})")
            })?;
            let version = t.field("value: version (uvarint)", Cursor::uvarint, |v| {
                v.to_string()
            })?;
            match u16::try_from(key)
                .ok()
                .and_then(crate::metadata::records::metadata_schema)
            {
                Some(schema) => schema_fields(
                    t,
                    "value",
                    schema,
                    i16::try_from(version).unwrap_or(i16::MAX),
                    true,
                    "garbage to Kafka: AbstractApiMessageSerde refuses a record with bytes left",
                ),
                None => t.note("value", "an apiKey klog does not know: not decoded".into()),
            }
            Ok(())
        })();
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
        let _ = (|| -> Result<(), DecodeError> {
            t.field("key: version (int16)", Cursor::i16, |v| v.to_string())?;
            let id = t.field("key: type (int16)", Cursor::i16, |v| {
                format!("{v} ({})", ControlType::from_id(*v).name())
            })?;
            kind = Some(ControlType::from_id(id));
            rest_of(t, "key: bytes after the type", "not read by Kafka")
        })();
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
            let _ = (|| -> Result<(), DecodeError> {
                t.field("value: version (int16)", Cursor::i16, |v| v.to_string())?;
                t.field("value: coordinatorEpoch (int32)", Cursor::i32, |v| {
                    v.to_string()
                })?;
                rest_of(
                    t,
                    "value: bytes after the marker",
                    "not read by Kafka (a newer marker version's fields)",
                )
            })();
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
    let mut record_type = None;
    inside(t, at, k, |t| {
        let Ok(id) = t.field("key: recordType (int16)", Cursor::i16, |v| {
            format!(
                "{v} ({})",
                find(*v).map_or("unknown: not decoded", |r| r.name)
            )
        }) else {
            return;
        };
        record_type = find(id);
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
        let Ok(version) = t.field("value: version (int16)", Cursor::i16, |v| v.to_string()) else {
            return;
        };
        let Some(rt) = record_type else { return };
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
