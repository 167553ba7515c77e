//! One interpreter for Kafka's generated-message encoding, driven by small
//! hand-written schema tables (a field's name, type, versions, nullable
//! versions and tag), so each rule of a JSON schema file lives in one table
//! row and every record type shares one decoder.
//!
//! The encoding is Kafka's `MessageGenerator` output (see
//! `generator/src/main/java/org/apache/kafka/message/MessageDataGenerator.java`
//! and `clients/src/main/java/org/apache/kafka/common/protocol/types/Type.java`):
//!
//! - in a *flexible* version, strings, bytes and arrays carry an unsigned
//!   varint length + 1 (0 = null), and every struct ends with a tagged-field
//!   section: `uvarint count`, then per field `uvarint tag`, `uvarint size`,
//!   `size` bytes; a reader skips tags it does not know;
//! - in other versions strings carry an int16 length, bytes and arrays an
//!   int32 length (-1 = null);
//! - a nullable struct starts with a byte, -1 for null and 1 before the
//!   struct; as a tagged field, with an unsigned varint, 0 for null;
//! - a uuid is 16 bytes, shown as Kafka's `Uuid.toString` (URL-safe base64
//!   without padding); bool is one byte (non-zero is true); float64 is
//!   IEEE-754 big-endian.
//!
//! Decoded messages are JSON objects whose keys are the schema field names
//! with the first letter lowered, as Kafka's generated JSON converters write
//! them. Fields absent at the decoded version are left out, and so are tagged
//! fields the writer did not send (their schema default applies).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::cell::RefCell;

use base64::Engine;
use serde_json::{Map, Value};

use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};

pub mod defaults;

/// "N+" in a schema file: no upper bound.
pub const OPEN: i16 = i16::MAX;

/// A field type.
#[derive(Debug, Clone, Copy)]
pub enum Ty {
    Bool,
    Int8,
    Int16,
    Uint16,
    Int32,
    Int64,
    Float64,
    Uuid,
    String,
    Bytes,
    /// `[]T`
    Array(&'static Ty),
    /// A nested struct (its own tagged-field section in flexible versions).
    Struct(&'static [Field]),
}

impl Ty {
    /// Kafka's name of a type that is not a string, bytes, array or struct.
    pub fn scalar_name(&self) -> Option<&'static str> {
        Some(match self {
            Ty::Bool => "bool",
            Ty::Int8 => "int8",
            Ty::Int16 => "int16",
            Ty::Uint16 => "uint16",
            Ty::Int32 => "int32",
            Ty::Int64 => "int64",
            Ty::Float64 => "float64",
            Ty::Uuid => "uuid",
            Ty::String | Ty::Bytes | Ty::Array(_) | Ty::Struct(_) => return None,
        })
    }
}

/// One row of a schema table.
#[derive(Debug, Clone, Copy)]
pub struct Field {
    /// The name as in the JSON schema file (`BrokerId`).
    pub name: &'static str,
    pub ty: Ty,
    /// `versions`: first and last version holding the field.
    pub versions: (i16, i16),
    /// `nullableVersions`: the first version where null is allowed.
    pub nullable_from: Option<i16>,
    /// `tag` and the first of `taggedVersions`.
    pub tag: Option<(u32, i16)>,
    /// The first release whose schema file has the field: a tagged field
    /// added to versions an earlier release already had (a reader of that
    /// release keeps it as an unknown tag); 3.9 for every other field.
    pub since: Release,
    /// `default`, as the schema file writes it (`-1`, `true`, `null`); ""
    /// when it gives none, which is the type's own default (see
    /// [`Field::default_value`]).
    pub default: &'static str,
    /// The generated class of a nested struct whose `read` checks the
    /// version (see [`Nested`]); `None` for any other field.
    pub nested: Option<Nested>,
}

/// A struct-typed field's own generated class, when its `read` refuses
/// some versions: `MessageDataGenerator` gives the class of a struct
/// declared inline the versions of the struct holding it narrowed to the
/// field's `versions` (its `LOWEST_SUPPORTED_VERSION` and
/// `HIGHEST_SUPPORTED_VERSION`), and its `read` throws
/// `UnsupportedVersionException` ("Can't read version 5 of
/// BrokerEndpoint") for a version outside them. So a metadata record newer
/// than its schema (whose own `read` checks no version) fails as soon as
/// it holds one such struct. A `commonStructs` class reads any version.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Nested {
    /// The struct's type name in the schema file (`BrokerEndpoint`).
    pub name: &'static str,
    /// The versions its class reads.
    pub versions: (i16, i16),
}

/// A nested struct `name` whose class reads versions `from..=to`, for a
/// table row (`nested: nested("BrokerEndpoint", 0, 4)`).
pub const fn nested(name: &'static str, from: i16, to: i16) -> Option<Nested> {
    Some(Nested {
        name,
        versions: (from, to),
    })
}

impl Field {
    /// Whether the field is in `version` (`versions`).
    pub fn present_at(&self, version: i16) -> bool {
        self.versions.0 <= version && version <= self.versions.1
    }

    /// Whether the field is a tagged field at `version`, of a message
    /// that is `flexible` at that version (`taggedVersions`).
    pub fn tagged_at(&self, version: i16, flexible: bool) -> bool {
        self.tag_at(version, flexible).is_some()
    }

    /// The field's tag at `version`, when it is a tagged field there.
    pub fn tag_at(&self, version: i16, flexible: bool) -> Option<u32> {
        match self.tag {
            Some((tag, from)) if flexible && version >= from => Some(tag),
            _ => None,
        }
    }

    /// The field's default as klog decodes values (see
    /// [`defaults::value_of`]).
    pub fn default_value(&self) -> Value {
        defaults::value_of(&self.ty, self.default)
    }
}

/// A field present in versions `from`.. (the defaults of a table row).
pub const FIELD: Field = Field {
    name: "",
    ty: Ty::Int8,
    versions: (0, OPEN),
    nullable_from: None,
    tag: None,
    since: Release::R3_9,
    default: "",
    nested: None,
};

/// The Kafka release that first shipped a version of a record schema, as
/// the schema files of each release's jars tell (a version is new in a
/// release when its `validVersions` holds it and the previous release's do
/// not). Releases before 4.0 are not told apart: 3.9 is the oldest compared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Release {
    /// In 3.9's schema files already.
    R3_9,
    R4_0,
    R4_1,
    R4_2,
    R4_3,
    R4_4,
    /// In no release's schema files (written by unreleased code only).
    Unreleased,
}

impl Release {
    /// Every release, oldest first.
    pub const ALL: &'static [Release] = &[
        Release::R3_9,
        Release::R4_0,
        Release::R4_1,
        Release::R4_2,
        Release::R4_3,
        Release::R4_4,
        Release::Unreleased,
    ];

    /// How the release is named in tables: `4.3`, `3.9 or earlier`.
    pub fn name(self) -> &'static str {
        match self {
            Release::R3_9 => "3.9 or earlier",
            Release::R4_0 => "4.0",
            Release::R4_1 => "4.1",
            Release::R4_2 => "4.2",
            Release::R4_3 => "4.3",
            Release::R4_4 => "4.4",
            Release::Unreleased => "none",
        }
    }
}

/// The last version of a schema whose versions from 0 were introduced in
/// the releases `since` (one entry per version).
pub const fn last_version(since: &[Release]) -> i16 {
    since.len() as i16 - 1
}

/// A message schema (one JSON schema file).
#[derive(Debug, Clone, Copy)]
pub struct Schema {
    /// The message's name (`TopicRecord`).
    pub name: &'static str,
    /// `validVersions`.
    pub versions: (i16, i16),
    /// The release that introduced each of `versions`, the lowest first
    /// (empty for a schema whose versions mean nothing on their own: the
    /// key of a coordinator record, named by its record type).
    pub since: &'static [Release],
    /// The first of `flexibleVersions` (`None` for "none").
    pub flexible_from: Option<i16>,
    pub fields: &'static [Field],
}

impl Schema {
    /// The release that introduced `version`, when the table says.
    pub fn since(&self, version: i16) -> Option<Release> {
        let i = usize::try_from(i32::from(version) - i32::from(self.versions.0)).ok()?;
        self.since.get(i).copied().filter(|_| self.knows(version))
    }

    /// Whether `version` is one of the schema's `flexibleVersions`.
    pub fn is_flexible(&self, version: i16) -> bool {
        self.flexible_from.is_some_and(|f| version >= f)
    }

    /// Whether `version` is one of the schema's `validVersions`.
    pub fn knows(&self, version: i16) -> bool {
        self.versions.0 <= version && version <= self.versions.1
    }

    /// Decode `bytes` as this message at `version`; `at` is the absolute
    /// position of the first byte. Fails on a version outside
    /// `validVersions`, on any malformed field and on trailing bytes.
    pub fn decode(
        &'static self,
        bytes: &[u8],
        at: u64,
        version: i16,
    ) -> Result<Value, DecodeError> {
        let mut c = Cursor::new(bytes, at);
        let v = self.decode_prefix(&mut c, version)?;
        if !c.is_empty() {
            return Err(c.error(DecodeErrorKind::TrailingBytes {
                field: self.name,
                remaining: c.remaining() as u64,
            }));
        }
        Ok(v)
    }

    /// Decode the message from the cursor, leaving whatever follows it.
    pub fn decode_prefix(
        &'static self,
        c: &mut Cursor<'_>,
        version: i16,
    ) -> Result<Value, DecodeError> {
        if !self.knows(version) {
            return Err(c.error(DecodeErrorKind::UnknownVersion {
                schema: self.name,
                version,
            }));
        }
        let flexible = self.is_flexible(version);
        let r = Reader {
            version,
            flexible,
            trace: None,
        };
        r.fields(c, self.fields, "")
    }

    /// Decode `bytes` at `version` field by field: each field's position,
    /// length, name (a path: `endPoints[0].port`) and value, for
    /// `dump-segment --layout`; decoding stops at the first error.
    pub fn trace(
        &'static self,
        bytes: &[u8],
        at: u64,
        version: i16,
    ) -> (Vec<Traced>, Option<DecodeError>) {
        let mut c = Cursor::new(bytes, at);
        if !self.knows(version) {
            let e = c.error(DecodeErrorKind::UnknownVersion {
                schema: self.name,
                version,
            });
            return (Vec::new(), Some(e));
        }
        let flexible = self.is_flexible(version);
        let r = Reader {
            version,
            flexible,
            trace: Some(RefCell::new(Vec::new())),
        };
        let err = r.fields(&mut c, self.fields, "").err();
        let err = err.or_else(|| {
            (!c.is_empty()).then(|| {
                c.error(DecodeErrorKind::TrailingBytes {
                    field: self.name,
                    remaining: c.remaining() as u64,
                })
            })
        });
        (r.trace.map(RefCell::into_inner).unwrap_or_default(), err)
    }
}

/// One traced field (see [`Schema::trace`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Traced {
    /// Absolute position of its first byte.
    pub position: u64,
    pub len: usize,
    /// Nesting below the message (0 for its own fields).
    pub depth: u8,
    pub name: String,
    pub value: String,
}

/// Kafka's JSON name of a schema field: the first letter lowered.
pub fn json_name(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(first) => first.to_lowercase().chain(chars).collect(),
        None => String::new(),
    }
}

/// A uuid as Kafka prints it (`Uuid.toString`: URL-safe base64, no padding).
pub fn uuid_string(bytes: &[u8]) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// Kafka's `Uuid.ZERO_UUID` as text.
pub const ZERO_UUID: &str = "AAAAAAAAAAAAAAAAAAAAAA";

struct Reader {
    version: i16,
    flexible: bool,
    /// Set when tracing: every field read, in order.
    trace: Option<RefCell<Vec<Traced>>>,
}

impl Reader {
    fn present(&self, f: &Field) -> bool {
        f.present_at(self.version)
    }

    fn nullable(&self, f: &Field) -> bool {
        f.nullable_from.is_some_and(|n| self.version >= n)
    }

    fn tagged(&self, f: &Field) -> Option<u32> {
        f.tag_at(self.version, self.flexible)
    }

    /// The wire type of `ty` for a trace: Kafka's type name, `compact`
    /// when its length is an unsigned varint (flexible versions).
    fn type_label(&self, ty: &Ty) -> String {
        let compact = if self.flexible { "compact " } else { "" };
        if let Some(name) = ty.scalar_name() {
            return name.into();
        }
        match ty {
            Ty::String => format!("{compact}string"),
            Ty::Bytes => format!("{compact}bytes"),
            Ty::Array(elem) => format!("{compact}array of {}", self.type_label(elem)),
            _ => "struct".into(),
        }
    }

    /// Start a traced entry (filled in by [`Reader::end`]); `None` when not tracing.
    fn begin(&self, c: &Cursor<'_>, prefix: &str, name: &str) -> Option<usize> {
        let t = self.trace.as_ref()?;
        let mut t = t.borrow_mut();
        let depth = prefix.matches(['.', '[']).count() as u8;
        t.push(Traced {
            position: c.position(),
            len: 0,
            depth,
            name: format!("{prefix}{name}"),
            value: String::new(),
        });
        Some(t.len() - 1)
    }

    fn end(&self, slot: Option<usize>, c: &Cursor<'_>, v: &Value) {
        let text = match v {
            Value::Array(a) if a.len() == 1 => "1 element".to_string(),
            Value::Array(a) => format!("{} elements", a.len()),
            Value::Object(_) => "struct".into(),
            other => other.to_string(),
        };
        self.end_text(slot, c, text);
    }

    fn end_text(&self, slot: Option<usize>, c: &Cursor<'_>, text: String) {
        let (Some(i), Some(t)) = (slot, self.trace.as_ref()) else {
            return;
        };
        let mut t = t.borrow_mut();
        if let Some(e) = t.get_mut(i) {
            e.len = (c.position().saturating_sub(e.position)) as usize;
            e.value = text;
        }
    }

    /// The fields of one struct, then (flexible) its tagged-field section.
    fn fields(
        &self,
        c: &mut Cursor<'_>,
        fields: &'static [Field],
        prefix: &str,
    ) -> Result<Value, DecodeError> {
        let mut obj = Map::new();
        for f in fields {
            if !self.present(f) || self.tagged(f).is_some() {
                continue;
            }
            let label = format!("{} ({})", json_name(f.name), self.type_label(&f.ty));
            let slot = self.begin(c, prefix, &label);
            let v = self.value(c, f, &f.ty, &format!("{prefix}{}", json_name(f.name)))?;
            self.end(slot, c, &v);
            obj.insert(json_name(f.name), v);
        }
        if self.flexible {
            let slot = self.begin(c, prefix, "taggedFields (count)");
            let count = c.uvarint()?;
            self.end(slot, c, &Value::from(count));
            let mut unknown = Vec::new();
            for _ in 0..count {
                let slot = self.begin(c, prefix, "tag, size");
                let tag = c.uvarint()?;
                let size = c.uvarint()? as usize;
                self.end_text(slot, c, format!("tag {tag}, {size} bytes"));
                let mut sub = c.take(size)?;
                let known = fields
                    .iter()
                    .find(|f| self.present(f) && self.tagged(f) == Some(tag));
                match known {
                    Some(f) => {
                        let label = format!(
                            "{} ({}, tag {tag})",
                            json_name(f.name),
                            self.type_label(&f.ty)
                        );
                        let slot = self.begin(&sub, prefix, &label);
                        let v = self.value(
                            &mut sub,
                            f,
                            &f.ty,
                            &format!("{prefix}{}", json_name(f.name)),
                        )?;
                        self.end(slot, &sub, &v);
                        if !sub.is_empty() {
                            return Err(sub.error(DecodeErrorKind::TrailingBytes {
                                field: f.name,
                                remaining: sub.remaining() as u64,
                            }));
                        }
                        obj.insert(json_name(f.name), v);
                    }
                    None => unknown.push(unknown_tag(tag, sub.rest())),
                }
            }
            if !unknown.is_empty() {
                obj.insert("unknownTaggedFields".into(), Value::Array(unknown));
            }
        }
        Ok(Value::Object(obj))
    }

    /// A length: compact (uvarint − 1) in flexible versions, else int16 for
    /// strings and int32 for bytes and arrays. `None` is null.
    fn length(
        &self,
        c: &mut Cursor<'_>,
        f: &Field,
        int16: bool,
    ) -> Result<Option<usize>, DecodeError> {
        let at = c.position();
        let len: i64 = if self.flexible {
            i64::from(c.uvarint()?) - 1
        } else if int16 {
            i64::from(c.i16()?)
        } else {
            i64::from(c.i32()?)
        };
        match len {
            -1 if self.nullable(f) => Ok(None),
            -1 => Err(DecodeError::new(
                at,
                DecodeErrorKind::UnexpectedNull { field: f.name },
            )),
            n if n < 0 => Err(DecodeError::new(
                at,
                DecodeErrorKind::NegativeLength {
                    field: f.name,
                    value: n,
                },
            )),
            n => Ok(Some(n as usize)),
        }
    }

    /// One value of field `f` of type `ty`; `path` names it in a trace.
    fn value(
        &self,
        c: &mut Cursor<'_>,
        f: &Field,
        ty: &'static Ty,
        path: &str,
    ) -> Result<Value, DecodeError> {
        Ok(match ty {
            Ty::Bool => Value::Bool(c.i8()? != 0),
            Ty::Int8 => c.i8()?.into(),
            Ty::Int16 => c.i16()?.into(),
            Ty::Uint16 => c.u16()?.into(),
            Ty::Int32 => c.i32()?.into(),
            Ty::Int64 => c.i64()?.into(),
            Ty::Float64 => {
                let bits = c.i64()? as u64;
                serde_json::Number::from_f64(f64::from_bits(bits)).map_or_else(
                    || Value::String(f64::from_bits(bits).to_string()),
                    Value::Number,
                )
            }
            Ty::Uuid => Value::String(uuid_string(c.bytes(16)?)),
            Ty::String => {
                let at = c.position();
                match self.length(c, f, true)? {
                    None => Value::Null,
                    Some(n) => Value::String(
                        std::str::from_utf8(c.bytes(n)?)
                            .map_err(|_| {
                                DecodeError::new(at, DecodeErrorKind::InvalidUtf8 { field: f.name })
                            })?
                            .to_string(),
                    ),
                }
            }
            Ty::Bytes => match self.length(c, f, false)? {
                None => Value::Null,
                Some(n) => {
                    Value::String(base64::engine::general_purpose::STANDARD.encode(c.bytes(n)?))
                }
            },
            Ty::Array(elem) => self.array(c, f, elem, path)?,
            // A nullable struct starts with a presence marker
            // (MessageDataGenerator.generateStructReader): a byte, negative
            // for null, or inside a tagged field an unsigned varint, 0 for null.
            Ty::Struct(fields) if self.nullable(f) => {
                let null = if self.tagged(f).is_some() {
                    c.uvarint()? == 0
                } else {
                    c.i8()? < 0
                };
                if null {
                    Value::Null
                } else {
                    self.fields(c, fields, &format!("{path}."))?
                }
            }
            Ty::Struct(fields) => self.fields(c, fields, &format!("{path}."))?,
        })
    }

    /// An array of `elem` values of field `f` (null when the field is).
    fn array(
        &self,
        c: &mut Cursor<'_>,
        f: &Field,
        elem: &'static Ty,
        path: &str,
    ) -> Result<Value, DecodeError> {
        let at = c.position();
        let Some(n) = self.length(c, f, false)? else {
            return Ok(Value::Null);
        };
        // Every element of every schema here takes at least one byte: a
        // count past the bytes left is malformed, so no count drives an
        // allocation or a long loop.
        if n > c.remaining() {
            return Err(DecodeError::new(
                at,
                DecodeErrorKind::ValueOutOfRange {
                    field: f.name,
                    value: n as i64,
                },
            ));
        }
        let mut items = Vec::with_capacity(n);
        // `nullableVersions` is the array's: its elements are never null
        // (no presence marker before a struct).
        let element = Field {
            nullable_from: None,
            ..*f
        };
        for i in 0..n {
            let name = format!("[{i}]");
            let slot = match elem {
                // A struct element's fields are traced one by one.
                Ty::Struct(_) => None,
                _ => self.begin(c, path, &format!("{name} ({})", self.type_label(elem))),
            };
            let v = self.value(c, &element, elem, &format!("{path}{name}"))?;
            self.end(slot, c, &v);
            items.push(v);
        }
        Ok(Value::Array(items))
    }
}

/// A tagged field the schema does not name, as the decoded message lists it
/// under `unknownTaggedFields`: its tag and its bytes in base64.
#[derive(serde::Serialize)]
struct UnknownTag {
    tag: u32,
    bytes: String,
}

fn unknown_tag(tag: u32, bytes: &[u8]) -> Value {
    use base64::Engine;
    serde_json::to_value(UnknownTag {
        tag,
        bytes: base64::engine::general_purpose::STANDARD.encode(bytes),
    })
    .unwrap_or(Value::Null)
}

#[cfg(test)]
mod tests {
    use super::*;

    static INNER: [Field; 2] = [
        Field {
            name: "Name",
            ty: Ty::String,
            ..FIELD
        },
        Field {
            name: "Port",
            ty: Ty::Uint16,
            ..FIELD
        },
    ];
    static FIELDS: [Field; 5] = [
        Field {
            name: "Id",
            ty: Ty::Int32,
            ..FIELD
        },
        Field {
            name: "TopicId",
            ty: Ty::Uuid,
            ..FIELD
        },
        Field {
            name: "Rack",
            ty: Ty::String,
            nullable_from: Some(0),
            ..FIELD
        },
        Field {
            name: "Ends",
            ty: Ty::Array(&Ty::Struct(&INNER)),
            ..FIELD
        },
        Field {
            name: "Dirs",
            ty: Ty::Array(&Ty::Uuid),
            versions: (1, OPEN),
            tag: Some((0, 1)),
            ..FIELD
        },
    ];
    static S: Schema = Schema {
        name: "Test",
        versions: (0, 1),
        since: &[Release::R3_9, Release::R4_4],
        flexible_from: Some(0),
        fields: &FIELDS,
    };

    #[test]
    fn flexible_struct_with_tags() {
        let mut b = vec![0, 0, 0, 7];
        b.extend_from_slice(&[1; 16]);
        b.push(0); // null rack
        b.extend_from_slice(&[2, 2, b'h', 0x23, 0x84, 0]); // one endpoint "h":9092, no tags
        b.extend_from_slice(&[2, 0, 17, 2]); // two tags: 0 (dirs) …
        b.extend_from_slice(&[1; 16]);
        b.extend_from_slice(&[9, 1, 0xff]); // … and an unknown tag 9
        let v = S.decode(&b, 0, 1).unwrap();
        assert_eq!(v["id"], 7);
        assert_eq!(v["rack"], Value::Null);
        assert_eq!(v["ends"][0]["port"], 9092);
        assert_eq!(v["dirs"][0], "AQEBAQEBAQEBAQEBAQEBAQ");
        assert_eq!(v["unknownTaggedFields"][0]["tag"], 9);
        // Version 0 does not know the tag: it is shown as unknown.
        let v0 = S.decode(&b, 0, 0).unwrap();
        assert!(v0.get("dirs").is_none());
        assert!(S.decode(&b, 0, 2).is_err());
    }

    #[test]
    fn a_nullable_array_of_structs_has_no_marker_per_element() {
        static ELEMS: [Field; 1] = [Field {
            name: "Topics",
            ty: Ty::Array(&Ty::Struct(&INNER)),
            nullable_from: Some(0),
            ..FIELD
        }];
        static N: Schema = Schema {
            name: "Nullable",
            versions: (0, 0),
            since: &[],
            flexible_from: None,
            fields: &ELEMS,
        };
        // One element: int32 count 1, then "h" (int16 length) and port 9092.
        let b = [0, 0, 0, 1, 0, 1, b'h', 0x23, 0x84];
        assert_eq!(N.decode(&b, 0, 0).unwrap()["topics"][0]["port"], 9092);
        assert_eq!(N.decode(&[0xff; 4], 0, 0).unwrap()["topics"], Value::Null);
    }

    #[test]
    fn hostile_lengths_fail_without_allocating() {
        let mut b = vec![0, 0, 0, 7];
        b.extend_from_slice(&[1; 16]);
        b.push(0);
        b.extend_from_slice(&[0xff, 0xff, 0xff, 0xff, 0x0f]); // array of 2^32-2 elements
        assert!(S.decode(&b, 0, 0).is_err());
        for cut in 0..b.len() {
            let _ = S.decode(&b[..cut], 0, 0);
        }
    }
}

/// A field of a schema table: `f!("Name", TYPE)`, or with more settings
/// (`f!("Name", TYPE, versions: (1, 3), nullable: true)`); the rest is [`FIELD`].
macro_rules! f {
    ($n:literal, $t:expr) => {
        $crate::format::schema::Field { name: $n, ty: $t, ..$crate::format::schema::FIELD }
    };
    // No block around it: a row's nested `&[…]` tables stay promotable
    // to statics. (A row never sets every setting, so `..FIELD` is no
    // needless update.)
    ($n:literal, $t:expr, $($k:ident: $v:expr),+) => {
        $crate::format::schema::Field {
            name: $n,
            ty: $t,
            $($k: $v,)+
            ..$crate::format::schema::FIELD
        }
    };
}
pub(crate) use f;

/// Short names for the types schema tables use.
pub mod types {
    use super::Ty;
    pub const S: Ty = Ty::String;
    pub const I8: Ty = Ty::Int8;
    pub const I16: Ty = Ty::Int16;
    pub const I32: Ty = Ty::Int32;
    pub const I64: Ty = Ty::Int64;
    pub const U: Ty = Ty::Uuid;
    pub const B: Ty = Ty::Bool;
    pub const I32S: Ty = Ty::Array(&Ty::Int32);
    pub const US: Ty = Ty::Array(&Ty::Uuid);
    pub const STRS: Ty = Ty::Array(&Ty::String);
}
