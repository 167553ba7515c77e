//! Field defaults: the value Kafka's generated class holds for a field the
//! record does not set (a tagged field its writer left out, a field of
//! another version), the value a writer leaves a tagged field out at, and
//! the value a generated JSON converter leaves a tagged field out at
//! (`MessageDataGenerator.fieldDefault`, `JsonConverterGenerator`).
//!
//! A table row holds the schema file's text (`"-1"`, `"true"`, `"null"`);
//! without one the type's own default applies: 0 for the integers and
//! float64, false, the empty string, a zero uuid, empty bytes, an empty
//! array, and for a struct a new struct (each field at its default). An
//! integer may be written in hex (`0x7fffffff`). The values are JSON as
//! [`super`] decodes them (a uuid as text, bytes in base64).

use serde_json::{Map, Value};

use super::{json_name, Field, Schema, Ty, ZERO_UUID};

/// The default `text` gives a field of type `ty`, or why it is none
/// (`MessageDataGenerator.fieldDefault` throws on the same).
pub fn parse(ty: &Ty, text: &str) -> Result<Value, String> {
    let nullable = matches!(ty, Ty::String | Ty::Bytes | Ty::Array(_) | Ty::Struct(_));
    if text == "null" && nullable {
        return Ok(Value::Null);
    }
    let bad = || format!("{text:?} is no default of a {}", type_name(ty));
    match ty {
        Ty::Bool => match text {
            "" | "false" => Ok(Value::Bool(false)),
            "true" => Ok(Value::Bool(true)),
            _ => Err(bad()),
        },
        Ty::Int8 | Ty::Int16 | Ty::Uint16 | Ty::Int32 | Ty::Int64 => {
            let n = int(text).ok_or_else(bad)?;
            let (lo, hi) = int_range(ty);
            (lo..=hi)
                .contains(&n)
                .then(|| Value::from(n))
                .ok_or_else(bad)
        }
        Ty::Float64 if text.is_empty() => Ok(Value::from(0.0)),
        Ty::Float64 => text.parse::<f64>().map(Value::from).map_err(|_| bad()),
        Ty::String => Ok(Value::String(text.into())),
        Ty::Uuid | Ty::Bytes | Ty::Array(_) if !text.is_empty() => Err(bad()),
        Ty::Uuid => Ok(Value::String(ZERO_UUID.into())),
        Ty::Bytes => Ok(Value::String(String::new())),
        Ty::Array(_) => Ok(Value::Array(Vec::new())),
        Ty::Struct(_) if !text.is_empty() => Err(bad()),
        Ty::Struct(fields) => Ok(new_struct(fields)),
    }
}

/// The default of a field of type `ty` whose row says `text` (null when
/// the text is no default of the type; a test holds every row to
/// [`parse`]).
pub fn value_of(ty: &Ty, text: &str) -> Value {
    parse(ty, text).unwrap_or(Value::Null)
}

/// A struct as its generated no-argument constructor leaves it: every
/// field at its default.
fn new_struct(fields: &[Field]) -> Value {
    Value::Object(
        fields
            .iter()
            .map(|f| (json_name(f.name), f.default_value()))
            .collect(),
    )
}

/// An integer default: decimal, or hex after `0x`; "" is 0.
fn int(text: &str) -> Option<i64> {
    match text.strip_prefix("0x") {
        _ if text.is_empty() => Some(0),
        Some(hex) => i64::from_str_radix(hex, 16).ok(),
        None => text.parse().ok(),
    }
}

fn int_range(ty: &Ty) -> (i64, i64) {
    match ty {
        Ty::Int8 => (i8::MIN.into(), i8::MAX.into()),
        Ty::Int16 => (i16::MIN.into(), i16::MAX.into()),
        Ty::Uint16 => (0, u16::MAX.into()),
        Ty::Int32 => (i32::MIN.into(), i32::MAX.into()),
        _ => (i64::MIN, i64::MAX),
    }
}

fn type_name(ty: &Ty) -> &'static str {
    match ty {
        Ty::String => "string",
        Ty::Bytes => "bytes",
        Ty::Array(_) => "array",
        Ty::Struct(_) => "struct",
        scalar => scalar.scalar_name().unwrap_or("struct"),
    }
}

/// `obj`, a struct decoded with `fields`, as its generated class holds it
/// after `read`: every field the record does not set (a tagged field its
/// writer left out, a field of another version) at its default, in nested
/// structs too. Other keys (`unknownTaggedFields`) stay.
pub fn filled(fields: &[Field], obj: &Value) -> Value {
    let Value::Object(map) = obj else {
        return obj.clone();
    };
    let mut out = Map::new();
    for f in fields {
        let name = json_name(f.name);
        let v = match map.get(&name) {
            Some(v) => filled_value(&f.ty, v),
            None => f.default_value(),
        };
        out.insert(name, v);
    }
    for (k, v) in map {
        if !out.contains_key(k) {
            out.insert(k.clone(), v.clone());
        }
    }
    Value::Object(out)
}

fn filled_value(ty: &Ty, v: &Value) -> Value {
    match (ty, v) {
        (Ty::Struct(fields), Value::Object(_)) => filled(fields, v),
        (Ty::Array(elem), Value::Array(items)) => {
            Value::Array(items.iter().map(|i| filled_value(elem, i)).collect())
        }
        _ => v.clone(),
    }
}

/// Whether `v`, a decoded value of field `f`, is the field's default, as
/// the generated writer and JSON converter test a tagged field (a struct
/// by `equals`: every field, and no unknown tagged fields).
pub fn is_default(f: &Field, v: &Value) -> bool {
    filled_value(&f.ty, v) == f.default_value()
}

impl Schema {
    /// A message decoded with this schema as Kafka's generated class holds
    /// it after `read` (see [`filled`]): what Kafka's code acts on.
    pub fn filled(&self, data: &Value) -> Value {
        filled(self.fields, data)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::schema::{f, types::*, OPEN};
    use serde_json::json;

    #[test]
    fn the_file_text_or_the_type_default() {
        assert_eq!(parse(&I32, "-1"), Ok(json!(-1)));
        assert_eq!(parse(&I32, "0x7fffffff"), Ok(json!(i32::MAX)));
        assert_eq!(parse(&I64, ""), Ok(json!(0)));
        assert_eq!(parse(&B, "true"), Ok(json!(true)));
        assert_eq!(parse(&B, ""), Ok(json!(false)));
        assert_eq!(parse(&S, ""), Ok(json!("")));
        assert_eq!(parse(&S, "null"), Ok(Value::Null));
        assert_eq!(parse(&U, ""), Ok(json!(ZERO_UUID)));
        assert_eq!(parse(&I32S, ""), Ok(json!([])));
        assert_eq!(parse(&I32S, "null"), Ok(Value::Null));
        assert_eq!(parse(&Ty::Float64, ""), Ok(json!(0.0)));
        assert!(parse(&I8, "128").is_err());
        assert!(parse(&I32, "null").is_err());
        assert!(parse(&B, "yes").is_err());
        assert!(parse(&U, "x").is_err());
    }

    #[test]
    fn a_struct_is_new_unless_null() {
        static INNER: [Field; 2] = [f!("Port", Ty::Uint16), f!("Host", S, default: "null")];
        static OUTER: [Field; 3] = [
            f!("Id", I32, default: "-2"),
            f!("End", Ty::Struct(&INNER)),
            f!("Dirs", US, versions: (1, OPEN), tag: Some((0, 1)), default: "null"),
        ];
        let s = Schema {
            name: "T",
            versions: (0, 1),
            since: &[],
            flexible_from: Some(0),
            fields: &OUTER,
        };
        let read = s.filled(&json!({"end": {"port": 1}, "unknownTaggedFields": []}));
        assert_eq!(
            read,
            json!({"id": -2, "end": {"port": 1, "host": null}, "dirs": null, "unknownTaggedFields": []})
        );
        assert!(is_default(&OUTER[1], &json!({"port": 0})));
        let unknown = json!({"port": 0, "unknownTaggedFields": [{"tag": 9, "bytes": ""}]});
        assert!(!is_default(&OUTER[1], &unknown));
        assert!(!is_default(&OUTER[1], &Value::Null));
        assert!(is_default(&OUTER[2], &Value::Null));
        assert!(!is_default(&OUTER[2], &json!([])));
    }
}
