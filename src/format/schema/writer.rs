//! The writer behind [`super::Schema::encode`]: a message's fields at a
//! version, as Kafka's generated `write` methods write them
//! (`MessageDataGenerator.generateClassWriter`): each field the version
//! holds, in the table's order; in flexible versions compact lengths and,
//! after a struct's fields, its tagged fields that are not at their
//! default, in tag order (`_numTaggedFields`, then each tag ascending).

use base64::Engine;
use serde_json::Value;

use super::defaults::is_default;
use super::{json_name, Field, Schema, Ty};
use crate::format::varint::put_uvarint;

struct Writer {
    version: i16,
    flexible: bool,
}

impl Schema {
    /// Encode `data`, a message whose serialized fields bear their JSON
    /// names (as [`Schema::decode`] gives them), at `version`, without the int16 version or
    /// record type in front of it. A field `data` leaves out, or gives a
    /// value of another type, is written at its default. Lengths are the
    /// caller's to bound: a non-flexible string holds at most 32,767
    /// bytes, which Kafka's writer refuses to pass ("field is too long to
    /// be serialized"), and klog's writers refuse first
    /// ([`check_commit_strings`](crate::offsets::check_commit_strings)).
    /// `data` that does not serialize to a JSON object (a map with keys
    /// that are not strings) writes every field at its default.
    pub fn encode<T: serde::Serialize + ?Sized>(&self, version: i16, data: &T) -> Vec<u8> {
        let data = serde_json::to_value(data).unwrap_or(Value::Null);
        let w = Writer {
            version,
            flexible: self.is_flexible(version),
        };
        let mut out = Vec::new();
        w.fields(&mut out, self.fields, &data);
        out
    }
}

impl Writer {
    fn fields(&self, out: &mut Vec<u8>, fields: &[Field], data: &Value) {
        let present = fields.iter().filter(|f| f.present_at(self.version));
        let mut tagged = Vec::new();
        for f in present {
            let default;
            let v = match data.get(json_name(f.name)) {
                Some(v) => v,
                None => {
                    default = f.default_value();
                    &default
                }
            };
            match f.tag_at(self.version, self.flexible) {
                Some(tag) if !is_default(f, v) => {
                    let mut bytes = Vec::new();
                    self.value(&mut bytes, f, &f.ty, v);
                    tagged.push((tag, bytes));
                }
                Some(_) => {}
                None => self.value(out, f, &f.ty, v),
            }
        }
        if self.flexible {
            tagged.sort_by_key(|(tag, _)| *tag);
            put_uvarint(out, tagged.len() as u32);
            for (tag, bytes) in tagged {
                put_uvarint(out, tag);
                put_uvarint(out, bytes.len() as u32);
                out.extend_from_slice(&bytes);
            }
        }
    }

    fn nullable(&self, f: &Field) -> bool {
        f.nullable_from.is_some_and(|n| self.version >= n)
    }

    /// A length (`None` for null): compact in flexible versions, else
    /// int16 for strings and int32 for bytes and arrays.
    fn length(&self, out: &mut Vec<u8>, n: Option<usize>, int16: bool) {
        match (self.flexible, n) {
            (true, None) => out.push(0),
            (true, Some(n)) => put_uvarint(out, n as u32 + 1),
            (false, None) if int16 => out.extend_from_slice(&(-1i16).to_be_bytes()),
            (false, None) => out.extend_from_slice(&(-1i32).to_be_bytes()),
            (false, Some(n)) if int16 => out.extend_from_slice(&(n as i16).to_be_bytes()),
            (false, Some(n)) => out.extend_from_slice(&(n as i32).to_be_bytes()),
        }
    }

    fn value(&self, out: &mut Vec<u8>, f: &Field, ty: &Ty, v: &Value) {
        let int = || v.as_i64().unwrap_or_default();
        if v.is_null() && self.nullable(f) && ty.scalar_name().is_none() {
            match ty {
                // A nullable struct's presence marker: in a tagged field an
                // unsigned varint, 0 for null; elsewhere a byte, -1.
                Ty::Struct(_) if f.tag_at(self.version, self.flexible).is_some() => out.push(0),
                Ty::Struct(_) => out.push(0xff),
                _ => self.length(out, None, matches!(ty, Ty::String)),
            }
            return;
        }
        match ty {
            Ty::Bool => out.push(u8::from(v.as_bool().unwrap_or_default())),
            Ty::Int8 => out.extend_from_slice(&(int() as i8).to_be_bytes()),
            Ty::Int16 => out.extend_from_slice(&(int() as i16).to_be_bytes()),
            Ty::Uint16 => out.extend_from_slice(&(int() as u16).to_be_bytes()),
            Ty::Int32 => out.extend_from_slice(&(int() as i32).to_be_bytes()),
            Ty::Int64 => out.extend_from_slice(&int().to_be_bytes()),
            Ty::Float64 => {
                let x = v.as_f64().unwrap_or_default();
                out.extend_from_slice(&x.to_bits().to_be_bytes());
            }
            Ty::Uuid => {
                let text = v.as_str().unwrap_or_default();
                let id = base64::engine::general_purpose::URL_SAFE_NO_PAD
                    .decode(text)
                    .unwrap_or_default();
                let mut bytes = [0u8; 16];
                if id.len() == 16 {
                    bytes.copy_from_slice(&id);
                }
                out.extend_from_slice(&bytes);
            }
            Ty::String => {
                let s = v.as_str().unwrap_or_default().as_bytes();
                let s = s.get(..i16::MAX as usize).unwrap_or(s);
                self.length(out, Some(s.len()), true);
                out.extend_from_slice(s);
            }
            Ty::Bytes => {
                let b = base64::engine::general_purpose::STANDARD
                    .decode(v.as_str().unwrap_or_default())
                    .unwrap_or_default();
                self.length(out, Some(b.len()), false);
                out.extend_from_slice(&b);
            }
            Ty::Array(elem) => {
                let items = v.as_array().map(Vec::as_slice).unwrap_or_default();
                self.length(out, Some(items.len()), false);
                // `nullableVersions` is the array's: its elements are never null.
                let element = Field {
                    nullable_from: None,
                    ..*f
                };
                for item in items {
                    self.value(out, &element, elem, item);
                }
            }
            Ty::Struct(fields) => {
                if self.nullable(f) {
                    out.push(1); // presence marker
                }
                self.fields(out, fields, v);
            }
        }
    }
}
