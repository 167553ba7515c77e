//! The annotated byte layout behind `dump-segment --layout`: every field of
//! a batch header, of each record and (for offsets topics) of each key and
//! value, as `position  raw bytes  field  decoded value`, for people
//! learning the format.
//!
//! Field positions and names come from the same constants and reads the
//! decoders use ([`batch`](crate::format::batch) offsets, the
//! [`Cursor`](crate::format::cursor::Cursor)); a field that does not parse
//! ends the listing with the decode error, positioned like every other.

use crate::error::DecodeError;
use crate::format::batch::{self, BatchView};
use crate::format::cursor::Cursor;
use crate::format::{compression, Compression, DecodeLimits};

/// One annotated field, borrowing its bytes from the batch (or the
/// decompressed records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    /// Absolute file position, or the position in the decompressed data when `decompressed`.
    pub position: u64,
    pub decompressed: bool,
    /// Nesting: 0 batch header, 1 record, 2 header / key / value fields.
    pub depth: u8,
    pub bytes: &'a [u8],
    pub name: String,
    pub value: String,
}

/// What the batch belongs to, for decoding keys and values.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Topic {
    Plain,
    /// `__offsets` / `__consumer_offsets`.
    Offsets,
    /// `__cluster_metadata`, its snapshots and `bootstrap.checkpoint`.
    Metadata,
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
        let key = kv(&mut r, "key", topic, h.is_control())?;
        let value = kv(&mut r, "value", topic, h.is_control())?;
        if h.is_control() {
            let at = key.map_or(0, |(at, _)| at);
            let note =
                match crate::format::control::decode(key.map(|k| k.1), value.map(|v| v.1), at) {
                    Ok(c) => match c.coordinator_epoch {
                        Some(e) => format!(
                            "key version {}, type {} ({}); value: coordinatorEpoch {e}",
                            c.version,
                            c.kind.id(),
                            c.kind.name()
                        ),
                        None => format!(
                            "key version {}, type {} ({})",
                            c.version,
                            c.kind.id(),
                            c.kind.name()
                        ),
                    },
                    Err(e) => format!("does not decode: {e}"),
                };
            r.note("control record", note);
        } else if topic == Topic::Offsets {
            annotate_offsets(&mut r, key, value);
        } else if topic == Topic::Metadata {
            annotate_metadata(&mut r, value);
        }
        let n = r.field("headerCount (varint)", Cursor::varint, |v| v.to_string())?;
        r.depth = 2;
        for j in 0..n.max(0) {
            kv(&mut r, &format!("header {j} key"), Topic::Plain, false)?;
            kv(&mut r, &format!("header {j} value"), Topic::Plain, false)?;
        }
        let _ = len;
        rc = r.c;
    }
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
            "control record bytes (decoded below)".to_string()
        } else if topic == Topic::Offsets || topic == Topic::Metadata {
            format!("{} bytes (decoded below)", b.len())
        } else {
            text(b)
        }
    };
    let bytes = t.field(name, |c| c.bytes(len as usize), show)?;
    Ok(Some((at, bytes)))
}

/// Field-by-field annotation of a metadata record: the frame
/// (`AbstractApiMessageSerde`: uvarint frameVersion, apiKey, version), then
/// every field of the record's schema (`crate::metadata::records`).
fn annotate_metadata<'a>(t: &mut Tracer<'a, '_>, value: Option<(u64, &'a [u8])>) {
    let Some((at, v)) = value else { return };
    let depth = t.depth;
    let saved = t.c.clone();
    t.c = Cursor::new(v, at);
    t.depth = 2;
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
        let schema = u16::try_from(key)
            .ok()
            .and_then(crate::metadata::records::metadata_schema);
        let Some(schema) = schema else {
            t.note("value", "an apiKey klog does not know: not decoded".into());
            return Ok(());
        };
        let body = t.c.rest();
        let base = t.c.position();
        let (traced, err) = schema.trace(body, base, i16::try_from(version).unwrap_or(i16::MAX));
        for f in traced {
            let off = (f.position - base) as usize;
            (t.out)(&Field {
                position: f.position,
                decompressed: t.decompressed,
                depth: 2 + f.depth.min(5),
                bytes: body.get(off..off + f.len).unwrap_or(&[]),
                name: format!("value: {}", f.name),
                value: f.value,
            });
        }
        if let Some(e) = err {
            t.note("value", format!("does not decode: {e}"));
        }
        Ok(())
    })();
    t.c = saved;
    t.depth = depth;
}

/// Field-by-field annotation of an offsets-topic key and value.
fn annotate_offsets<'a>(
    t: &mut Tracer<'a, '_>,
    key: Option<(u64, &'a [u8])>,
    value: Option<(u64, &'a [u8])>,
) {
    let depth = t.depth;
    let saved = t.c.clone();
    if let Some((at, k)) = key {
        t.c = Cursor::new(k, at);
        t.depth = 2;
        let _ = (|| -> Result<(), DecodeError> {
            let ty = t.field("key: recordType (int16)", Cursor::i16, |v| match v {
                0 | 1 => format!("{v} (offset commit)"),
                2 => format!("{v} (group metadata)"),
                _ => format!("{v} (newer record type, skipped by replay)"),
            })?;
            if ty <= 2 {
                let g = t.field("key: group length (int16)", Cursor::i16, |v| v.to_string())?;
                t.field("key: group", |c| c.bytes(g.max(0) as usize), |b| text(b))?;
            }
            if ty <= 1 {
                let l = t.field("key: topic length (int16)", Cursor::i16, |v| v.to_string())?;
                t.field("key: topic", |c| c.bytes(l.max(0) as usize), |b| text(b))?;
                t.field("key: partition (int32)", Cursor::i32, |v| v.to_string())?;
            }
            Ok(())
        })();
    }
    match value {
        None => t.note("value", "null: a tombstone, the key is deleted".into()),
        Some((at, v)) => {
            t.c = Cursor::new(v, at);
            let _ = (|| -> Result<(), DecodeError> {
                let ver = t.field("value: version (int16)", Cursor::i16, |v| v.to_string())?;
                if !(0..=3).contains(&ver) {
                    return Ok(());
                }
                t.field("value: offset (int64)", Cursor::i64, |v| {
                    format!("{v} (the next offset to read)")
                })?;
                if ver >= 3 {
                    t.field("value: leaderEpoch (int32)", Cursor::i32, |v| v.to_string())?;
                }
                let l = t.field("value: metadata length (int16)", Cursor::i16, |v| {
                    v.to_string()
                })?;
                t.field(
                    "value: metadata",
                    |c| c.bytes(l.max(0) as usize),
                    |b| text(b),
                )?;
                t.field("value: commitTimestamp (int64)", Cursor::i64, |v| {
                    v.to_string()
                })?;
                if ver == 1 {
                    t.field("value: expireTimestamp (int64)", Cursor::i64, |v| {
                        v.to_string()
                    })?;
                }
                Ok(())
            })();
        }
    }
    t.c = saved;
    t.depth = depth;
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
