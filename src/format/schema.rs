//! One interpreter for Kafka's generated-message encoding, driven by small
//! hand-written schema tables (a field's name, type, versions, nullable
//! versions, tag, default and nested class), so each rule of a JSON schema
//! file lives in one table row and every record type shares one decoder.
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
//! fields the writer did not send: [`Schema::filled`] sets each to its
//! table default ([`defaults`]), as Kafka's generated class holds it after
//! `read`. The class of a nested struct declared inline refuses a version
//! above its own range ([`Nested`]), as Kafka's does.
//!
//! Two readings: a strict one ([`Schema::decode`], and the traces of
//! `dump-segment --layout`), which refuses any malformed field, and
//! Kafka's ([`Schema::decode_prefix_as_kafka`]), which takes what the
//! generated `read` methods take: a malformed UTF-8 string with U+FFFD
//! (`new String(bytes, UTF_8)`), a known tagged field read where it starts
//! whatever size its header gives, a nullable field's negative length as
//! null. The coordinators' loaders, the metadata loader and kafka-dump-log
//! all read with those methods, so every decoder of a record Kafka loads
//! uses Kafka's reading and reports each such place as a [`Leniency`].
//!
//! The same tables write: [`Schema::encode`] writes a message as the
//! generated `write` methods do (the fields of the version in table order;
//! in flexible versions compact lengths and the tagged fields not at their
//! default, by tag), for klog's writers (offset commits, group and
//! transaction records).
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::cell::RefCell;

use base64::Engine;
use serde_json::Value;

use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};

pub mod defaults;
mod reader;
mod writer;

use reader::Reader;

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
/// BrokerEndpoint") for a version above them (`if (_version > 4)`: no
/// lower bound is checked, as in `RegisterBrokerRecord.BrokerEndpoint` and
/// `ConsumerProtocolAssignment.TopicPartition` of 3.9.2 and 4.4.0). So a metadata record newer
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
        self.check_version(&Cursor::new(bytes, at), version)?;
        self.decode_any_version(bytes, at, version)
    }

    /// [`Schema::decode`] without checking `version` against
    /// `validVersions`, as the generated `read` of a message does (the
    /// metadata log's `AbstractApiMessageSerde.read` checks none): each
    /// field by its own `versions`, a version above the newest included,
    /// and only the classes of nested structs refuse a version outside
    /// their own ([`Nested`]).
    pub fn decode_any_version(
        &'static self,
        bytes: &[u8],
        at: u64,
        version: i16,
    ) -> Result<Value, DecodeError> {
        let mut c = Cursor::new(bytes, at);
        let v = self
            .reader(version, false, false)
            .fields(&mut c, self.fields, "")?;
        if !c.is_empty() {
            return Err(c.error(DecodeErrorKind::TrailingBytes {
                field: self.name,
                remaining: c.remaining() as u64,
            }));
        }
        Ok(v)
    }

    /// An `UnknownVersion` error for a version outside `validVersions`.
    fn check_version(&self, c: &Cursor<'_>, version: i16) -> Result<(), DecodeError> {
        if self.knows(version) {
            return Ok(());
        }
        Err(c.error(DecodeErrorKind::UnknownVersion {
            schema: self.name,
            version,
        }))
    }

    /// A reader of `version`. A version outside `validVersions` is read
    /// with the layout of the nearest one: the generated `read` tests a
    /// field's bounds only where they lie inside the message's versions
    /// (`_version >= 3` for a field of "3+" in a message of "0-4", nothing
    /// for one of "0+"), which is that layout's test. The classes of nested
    /// structs see the version as asked ([`Nested`]).
    fn reader(&self, version: i16, trace: bool, kafka: bool) -> Reader {
        let layout = version.clamp(self.versions.0, self.versions.1);
        Reader {
            version,
            layout,
            flexible: self.is_flexible(layout),
            trace: trace.then(|| RefCell::new(Vec::new())),
            kafka,
            lenient: RefCell::new(Vec::new()),
        }
    }

    /// Decode the message from the cursor, leaving whatever follows it, as
    /// Kafka's generated `read` methods read:
    /// a known tagged field is read in place, whatever size its header
    /// gives (`case TAG: this.field = _readable.readX(); break;`), a
    /// string is decoded with replacement (`new String(bytes, UTF_8)`) and
    /// refused above 0x7fff bytes ("had invalid length"), a nullable
    /// field's negative length is null (see [`KafkaReads`]). For a decoder
    /// that must fail, and succeed, exactly where Kafka's does.
    pub fn decode_prefix_as_kafka(
        &'static self,
        c: &mut Cursor<'_>,
        version: i16,
    ) -> Result<KafkaRead, DecodeError> {
        self.check_version(c, version)?;
        self.read_as_kafka(c, version)
    }

    /// [`Schema::decode_prefix_as_kafka`] without checking `version`
    /// against `validVersions`, as the generated `read` of a message does
    /// not: a version outside them is read with the layout of the nearest
    /// one (the generated `read` tests a field's bounds only where they lie
    /// inside the message's versions), and the classes of nested structs
    /// see the version as given ([`Nested`]).
    pub fn decode_prefix_any_version_as_kafka(
        &'static self,
        c: &mut Cursor<'_>,
        version: i16,
    ) -> Result<KafkaRead, DecodeError> {
        self.read_as_kafka(c, version)
    }

    /// [`Schema::decode_any_version`] as Kafka reads (see
    /// [`Schema::decode_prefix_as_kafka`]): bytes after the message are
    /// refused.
    pub fn decode_any_version_as_kafka(
        &'static self,
        bytes: &[u8],
        at: u64,
        version: i16,
    ) -> Result<KafkaRead, DecodeError> {
        let mut c = Cursor::new(bytes, at);
        let read = self.read_as_kafka(&mut c, version)?;
        if !c.is_empty() {
            return Err(c.error(DecodeErrorKind::TrailingBytes {
                field: self.name,
                remaining: c.remaining() as u64,
            }));
        }
        Ok(read)
    }

    fn read_as_kafka(
        &'static self,
        c: &mut Cursor<'_>,
        version: i16,
    ) -> Result<KafkaRead, DecodeError> {
        let r = self.reader(version, false, true);
        let data = r.fields(c, self.fields, "")?;
        Ok(KafkaRead {
            data,
            lenient: r.lenient.into_inner(),
        })
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
        if let Err(e) = self.check_version(&Cursor::new(bytes, at), version) {
            return (Vec::new(), Some(e));
        }
        self.trace_any_version(bytes, at, version)
    }

    /// [`Schema::trace`] without checking `version` against
    /// `validVersions` (see [`Schema::decode_any_version`]).
    pub fn trace_any_version(
        &'static self,
        bytes: &[u8],
        at: u64,
        version: i16,
    ) -> (Vec<Traced>, Option<DecodeError>) {
        let mut c = Cursor::new(bytes, at);
        let r = self.reader(version, true, false);
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

/// A place where Kafka's generated `read` takes bytes a strict reading
/// refuses (see the module's docs): what the strict reading finds there,
/// and what Kafka reads instead.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Leniency {
    /// The defect a strict reading stops at, at its byte.
    pub defect: DecodeError,
    pub kafka_reads: KafkaReads,
}

/// What Kafka's generated `read` makes of a [`Leniency`]'s bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KafkaReads {
    /// Malformed UTF-8: `Readable.readString` is `new String(bytes,
    /// UTF_8)`, each malformed sequence U+FFFD.
    Replaced,
    /// A nullable field's negative length other than -1: `if (length < 0)
    /// { this.field = null; }`.
    Null,
    /// A known tagged field whose size is not its value's: `case TAG:
    /// this.field = _readable.readX(); break;`, read where it starts, the
    /// next tag right after it.
    InPlace,
}

impl std::fmt::Display for Leniency {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let reads = match self.kafka_reads {
            KafkaReads::Replaced => "Kafka's reader replaces the malformed bytes with U+FFFD",
            KafkaReads::Null => "Kafka's reader reads the field as null",
            KafkaReads::InPlace => {
                "Kafka's reader reads the tagged field in place and does not use its size"
            }
        };
        write!(f, "{}; {reads}", self.defect)
    }
}

/// A message as Kafka's generated `read` reads it: its fields, and the
/// places where that reading took what a strict one refuses.
#[derive(Debug, Clone, PartialEq)]
pub struct KafkaRead {
    pub data: Value,
    pub lenient: Vec<Leniency>,
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

/// The fields of a message the interpreter read, by their JSON names: the
/// typed view its decoders build their structs from. The interpreter has
/// checked every type, so a field missing here is one the version does not
/// hold (or a tagged field its writer left out): `opt_` gives `None`, the
/// others the type's zero, and each caller names the field's default.
#[derive(Clone, Copy)]
pub struct Fields<'v>(pub &'v serde_json::Value);

impl<'v> Fields<'v> {
    pub fn get(self, name: &str) -> Option<&'v serde_json::Value> {
        self.0.get(name)
    }

    pub fn int(self, name: &str) -> i64 {
        self.opt_int(name).unwrap_or_default()
    }

    pub fn opt_int(self, name: &str) -> Option<i64> {
        self.get(name).and_then(serde_json::Value::as_i64)
    }

    pub fn string(self, name: &str) -> String {
        self.opt_string(name).unwrap_or_default()
    }

    pub fn opt_string(self, name: &str) -> Option<String> {
        self.get(name)
            .and_then(serde_json::Value::as_str)
            .map(str::to_string)
    }
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

    /// The writer writes the bytes the reader's test reads (its unknown
    /// tag aside, which no writer keeps), and leaves a tagged field at its
    /// default out.
    #[test]
    fn the_writer_writes_what_the_reader_reads() {
        let mut b = vec![0, 0, 0, 7];
        b.extend_from_slice(&[1; 16]);
        b.push(0); // null rack
        b.extend_from_slice(&[2, 2, b'h', 0x23, 0x84, 0]); // one endpoint "h":9092, no tags
        b.extend_from_slice(&[1, 0, 17, 2]); // one tag: 0 (dirs)
        b.extend_from_slice(&[1; 16]);
        let v = S.decode(&b, 0, 1).unwrap();
        assert_eq!(S.encode(1, &v), b);
        // Without the dirs (the tag's default, an empty array): no tag.
        let mut plain = v.clone();
        plain["dirs"] = Value::Array(Vec::new());
        let mut untagged = b[..b.len() - 20].to_vec();
        untagged.push(0);
        assert_eq!(S.encode(1, &plain), untagged);
        // Version 0 has no dirs field at all; a field left out is its default.
        let v0 = serde_json::json!({ "id": 7, "rack": "r" });
        let mut b0 = vec![0, 0, 0, 7];
        b0.extend_from_slice(&[0; 16]); // topicId: the zero uuid
        b0.extend_from_slice(&[2, b'r', 1, 0]); // rack "r", no ends, no tags
        assert_eq!(S.encode(0, &v0), b0);
        assert_eq!(S.decode(&b0, 0, 0).unwrap()["rack"], "r");
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

    /// Kafka's generated `read` (`MessageDataGenerator`): a nullable
    /// field's negative length is null, a known tag is read in place, a
    /// string's malformed UTF-8 is U+FFFD; a strict reading refuses each.
    #[test]
    fn kafka_reads_what_a_strict_reading_refuses() {
        static NULLABLE: [Field; 2] = [
            Field {
                name: "Rack",
                ty: Ty::String,
                nullable_from: Some(0),
                ..FIELD
            },
            Field {
                name: "Data",
                ty: Ty::Bytes,
                nullable_from: Some(0),
                ..FIELD
            },
        ];
        static N: Schema = Schema {
            name: "Nullable",
            versions: (0, 0),
            since: &[],
            flexible_from: None,
            fields: &NULLABLE,
        };
        // Rack: int16 length -257; Data: int32 length -2.
        let b = [0xfe, 0xff, 0xff, 0xff, 0xff, 0xfe];
        assert!(N.decode(&b, 0, 0).is_err());
        let read = N
            .decode_prefix_as_kafka(&mut Cursor::new(&b, 10), 0)
            .unwrap();
        assert_eq!(read.data, serde_json::json!({"rack": null, "data": null}));
        let defects: Vec<_> = read
            .lenient
            .iter()
            .map(|l| (l.defect.offset, l.kafka_reads))
            .collect();
        assert_eq!(defects, [(10, KafkaReads::Null), (12, KafkaReads::Null)]);
        assert!(read.lenient[0]
            .to_string()
            .starts_with("byte 10: negative length -257 in Rack; "));
        // Rack "a\xff", then Data null.
        let b = [0, 2, b'a', 0xff, 0xff, 0xff, 0xff, 0xff];
        let read = N
            .decode_prefix_as_kafka(&mut Cursor::new(&b, 0), 0)
            .unwrap();
        assert_eq!(read.data["rack"], "a\u{fffd}");
        assert_eq!(read.lenient[0].kafka_reads, KafkaReads::Replaced);

        // Test v1, Dirs (tag 0) whose size says 3 for its 17 bytes: read
        // in place, then the next tag (9) right after it.
        let mut b = vec![0, 0, 0, 7];
        b.extend_from_slice(&[1; 16]);
        b.extend_from_slice(&[0, 1]); // null rack, no endpoints
        b.extend_from_slice(&[2, 0, 3, 2]); // two tags: 0 (dirs, "3 bytes") …
        b.extend_from_slice(&[1; 16]);
        b.extend_from_slice(&[9, 1, 0xff]); // … and an unknown tag 9
        assert!(S.decode(&b, 0, 1).is_err());
        let read = S
            .decode_prefix_as_kafka(&mut Cursor::new(&b, 0), 1)
            .unwrap();
        assert_eq!(read.data["dirs"][0], "AQEBAQEBAQEBAQEBAQEBAQ");
        assert_eq!(read.data["unknownTaggedFields"][0]["tag"], 9);
        assert_eq!(
            read.lenient,
            [Leniency {
                defect: DecodeError::new(
                    25,
                    DecodeErrorKind::UnexpectedEof {
                        needed: 17,
                        available: 3
                    }
                ),
                kafka_reads: KafkaReads::InPlace
            }]
        );
    }

    /// A version outside `validVersions` is read with the nearest one's
    /// layout; a nested struct's class refuses only a version above its
    /// own (`if (_version > 3) throw new UnsupportedVersionException`, as
    /// `ConsumerProtocolAssignment.TopicPartition.read` of 3.9.2 and 4.4.0).
    #[test]
    fn versions_outside_the_schema() {
        static INNER_NESTED: [Field; 1] = [Field {
            name: "Ends",
            ty: Ty::Array(&Ty::Struct(&INNER)),
            nested: nested("Endpoint", 0, 1),
            ..FIELD
        }];
        static M: Schema = Schema {
            name: "M",
            versions: (0, 1),
            since: &[],
            flexible_from: None,
            fields: &INNER_NESTED,
        };
        let one = [0, 0, 0, 1, 0, 1, b'h', 0x23, 0x84];
        let none = [0, 0, 0, 0];
        for version in [-1, 0, 1] {
            let read = M
                .decode_prefix_any_version_as_kafka(&mut Cursor::new(&one, 0), version)
                .unwrap();
            assert_eq!(read.data["ends"][0]["port"], 9092);
        }
        let e = M
            .decode_prefix_any_version_as_kafka(&mut Cursor::new(&one, 0), 2)
            .unwrap_err();
        assert_eq!(
            e.kind,
            DecodeErrorKind::UnknownVersion {
                schema: "Endpoint",
                version: 2
            }
        );
        // No element, no nested class: read.
        let read = M
            .decode_prefix_any_version_as_kafka(&mut Cursor::new(&none, 0), 2)
            .unwrap();
        assert_eq!(read.data["ends"], serde_json::json!([]));
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
