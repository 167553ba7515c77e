//! The reader behind [`super::Schema::decode`] and [`super::Schema::trace`]:
//! one struct's fields at a version, then (flexible) its tagged fields.

use std::cell::RefCell;

use base64::Engine;
use serde_json::{Map, Value};

use super::{json_name, uuid_string, Field, KafkaReads, Leniency, Traced, Ty};
use crate::format::cursor::Cursor;
use crate::format::error::{DecodeError, DecodeErrorKind};

pub(super) struct Reader {
    /// The version the message was asked for: the classes of nested
    /// structs check it ([`Reader::nested`]).
    pub(super) version: i16,
    /// The version whose layout is read: `version` within the schema's
    /// `validVersions` (see [`super::Schema::reader`]).
    pub(super) layout: i16,
    pub(super) flexible: bool,
    /// Set when tracing: every field read, in order.
    pub(super) trace: Option<RefCell<Vec<Traced>>>,
    /// Read as Kafka's generated code reads ([`Schema::decode_prefix_as_kafka`](super::Schema::decode_prefix_as_kafka)).
    pub(super) kafka: bool,
    /// In `kafka` mode: where Kafka's reading took what a strict one refuses.
    pub(super) lenient: RefCell<Vec<Leniency>>,
}

impl Reader {
    fn present(&self, f: &Field) -> bool {
        f.present_at(self.layout)
    }

    fn nullable(&self, f: &Field) -> bool {
        f.nullable_from.is_some_and(|n| self.layout >= n)
    }

    fn tagged(&self, f: &Field) -> Option<u32> {
        f.tag_at(self.layout, self.flexible)
    }

    /// Note that Kafka's reading took what a strict one refuses (`defect`).
    fn lenient(&self, defect: DecodeError, kafka_reads: KafkaReads) {
        self.lenient.borrow_mut().push(Leniency {
            defect,
            kafka_reads,
        });
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

    /// Start a traced entry (filled in by [`Reader::end`]); `None` when
    /// not tracing, and then `name` is not called.
    fn begin(&self, c: &Cursor<'_>, prefix: &str, name: impl FnOnce() -> String) -> Option<usize> {
        let t = self.trace.as_ref()?;
        let mut t = t.borrow_mut();
        let depth = prefix.matches(['.', '[']).count() as u8;
        t.push(Traced {
            position: c.position(),
            len: 0,
            depth,
            name: format!("{prefix}{}", name()),
            value: String::new(),
        });
        Some(t.len() - 1)
    }

    /// A field's path for the trace (`endPoints[0].port`): only a trace
    /// names fields, so none is built when not tracing.
    fn path(&self, path: impl FnOnce() -> String) -> String {
        match self.trace {
            Some(_) => path(),
            None => String::new(),
        }
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
    pub(super) fn fields(
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
            let name = json_name(f.name);
            let slot = self.begin(c, prefix, || format!("{name} ({})", self.type_label(&f.ty)));
            let v = self.value(c, f, &f.ty, &self.path(|| format!("{prefix}{name}")))?;
            self.end(slot, c, &v);
            obj.insert(name, v);
        }
        if self.flexible {
            let slot = self.begin(c, prefix, || "taggedFields (count)".into());
            let count = c.uvarint()?;
            self.end(slot, c, &Value::from(count));
            let mut unknown = Vec::new();
            for _ in 0..count {
                let slot = self.begin(c, prefix, || "tag, size".into());
                let tag = c.uvarint()?;
                let size = c.uvarint()? as usize;
                self.end_text(slot, c, format!("tag {tag}, {size} bytes"));
                let known = fields
                    .iter()
                    .find(|f| self.present(f) && self.tagged(f) == Some(tag));
                if let (true, Some(f)) = (self.kafka, known) {
                    // `case TAG: this.field = _readable.readX(); break;`:
                    // the field is read where it starts, its size unused.
                    let start = c.position();
                    let path = self.path(|| format!("{prefix}{}", json_name(f.name)));
                    let v = self.value(c, f, &f.ty, &path)?;
                    let taken = c.position() - start;
                    let declared = size as u64;
                    if taken < declared {
                        let kind = DecodeErrorKind::TrailingBytes {
                            field: f.name,
                            remaining: declared - taken,
                        };
                        self.lenient(c.error(kind), KafkaReads::InPlace);
                    } else if taken > declared {
                        let kind = DecodeErrorKind::UnexpectedEof {
                            needed: taken,
                            available: declared,
                        };
                        self.lenient(DecodeError::new(start, kind), KafkaReads::InPlace);
                    }
                    obj.insert(json_name(f.name), v);
                    continue;
                }
                let mut sub = c.take(size)?;
                match known {
                    Some(f) => {
                        let label = || {
                            let ty = self.type_label(&f.ty);
                            format!("{} ({ty}, tag {tag})", json_name(f.name))
                        };
                        let slot = self.begin(&sub, prefix, label);
                        let path = self.path(|| format!("{prefix}{}", json_name(f.name)));
                        let v = self.value(&mut sub, f, &f.ty, &path)?;
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
    /// strings and int32 for bytes and arrays. `None` is null. In `kafka`
    /// mode as the generated code takes it: the uvarint is a Java `int`
    /// (`readUnsignedVarint() - 1`), and a nullable field's negative
    /// length is null (`if (length < 0) { this.field = null; }`).
    fn length(
        &self,
        c: &mut Cursor<'_>,
        f: &Field,
        int16: bool,
    ) -> Result<Option<usize>, DecodeError> {
        let at = c.position();
        let len: i64 = if self.flexible {
            let n = c.uvarint()?;
            if self.kafka {
                i64::from((n as i32).wrapping_sub(1))
            } else {
                i64::from(n) - 1
            }
        } else if int16 {
            i64::from(c.i16()?)
        } else {
            i64::from(c.i32()?)
        };
        match len {
            -1 if self.nullable(f) => Ok(None),
            n if n < 0 && self.kafka && self.nullable(f) => {
                let kind = DecodeErrorKind::NegativeLength {
                    field: f.name,
                    value: n,
                };
                self.lenient(DecodeError::new(at, kind), KafkaReads::Null);
                Ok(None)
            }
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
                    Some(n) if self.kafka => {
                        if n > 0x7fff {
                            return Err(DecodeError::new(
                                at,
                                DecodeErrorKind::ValueOutOfRange {
                                    field: f.name,
                                    value: n as i64,
                                },
                            ));
                        }
                        let bytes = c.bytes(n)?;
                        if std::str::from_utf8(bytes).is_err() {
                            let kind = DecodeErrorKind::InvalidUtf8 { field: f.name };
                            self.lenient(DecodeError::new(at, kind), KafkaReads::Replaced);
                        }
                        Value::String(String::from_utf8_lossy(bytes).into_owned())
                    }
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
                    self.nested(c, f)?;
                    self.fields(c, fields, &self.path(|| format!("{path}.")))?
                }
            }
            Ty::Struct(fields) => {
                self.nested(c, f)?;
                self.fields(c, fields, &self.path(|| format!("{path}.")))?
            }
        })
    }

    /// A nested struct's class refuses a version above its own as its
    /// `read` starts ([`Nested`]: "Can't read version 5 of BrokerEndpoint";
    /// the generated check is `if (_version > N)`, no lower bound).
    fn nested(&self, c: &Cursor<'_>, f: &Field) -> Result<(), DecodeError> {
        match f.nested {
            Some(n) if self.version > n.versions.1 => {
                Err(c.error(DecodeErrorKind::UnknownVersion {
                    schema: n.name,
                    version: self.version,
                }))
            }
            _ => Ok(()),
        }
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
            let slot = match elem {
                // A struct element's fields are traced one by one.
                Ty::Struct(_) => None,
                _ => self.begin(c, path, || format!("[{i}] ({})", self.type_label(elem))),
            };
            let v = self.value(c, &element, elem, &self.path(|| format!("{path}[{i}]")))?;
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
