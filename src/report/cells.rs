//! A row struct's fields as table cells, straight from its `Serialize`
//! impl: the cells [`cell_text`] makes of `serde_json::to_value(row)`,
//! field by field, without building a JSON map of owned keys for every row
//! (for replay-offsets' 100,000 committed offsets that map was most of the
//! text and CSV output's cost).
//!
//! Strings, integers, booleans, units and unit variants become cells here;
//! a field of any other kind (a float, a nested struct, a sequence) is
//! handed to `serde_json` alone, and a row that is not a plain struct (a
//! map, a flattened struct) goes through `serde_json::to_value` whole, so
//! every cell is the text the JSON value gives.

use std::fmt;

use serde::ser::{self, Impossible, SerializeStruct, Serializer};
use serde::Serialize;

/// The cells of `row` for the columns `fields` (by serialized field name):
/// `None` for a null or missing field.
pub(crate) fn row_cells<R: Serialize + ?Sized>(row: &R, fields: &[&str]) -> Vec<Option<String>> {
    let mut cells = RowCells {
        fields,
        cells: vec![None; fields.len()],
        next: 0,
    };
    match row.serialize(&mut cells) {
        Ok(()) => cells.cells,
        Err(Fallback) => via_value(row, fields),
    }
}

/// One value as a cell, as a table of the JSON row it sits in shows it
/// (null is `None`; strings as they are; anything else as compact JSON).
pub(crate) fn value_cell<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    match value.serialize(Cell) {
        Ok(cell) => cell,
        Err(Fallback) => serde_json::to_value(value)
            .ok()
            .as_ref()
            .and_then(cell_text),
    }
}

/// The reference: the row as a JSON value, a lookup per column.
pub(crate) fn via_value<R: Serialize + ?Sized>(row: &R, fields: &[&str]) -> Vec<Option<String>> {
    let value = serde_json::to_value(row).unwrap_or(serde_json::Value::Null);
    fields
        .iter()
        .map(|f| value.get(f).and_then(cell_text))
        .collect()
}

/// What this serializer leaves to `serde_json`.
#[derive(Debug)]
struct Fallback;

impl fmt::Display for Fallback {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("left to serde_json")
    }
}

impl std::error::Error for Fallback {}

impl ser::Error for Fallback {
    fn custom<T: fmt::Display>(_: T) -> Self {
        Fallback
    }
}

/// Serializes one row struct into `cells`, by field name.
struct RowCells<'a> {
    fields: &'a [&'a str],
    cells: Vec<Option<String>>,
    /// The column the next field most likely fills (fields come in
    /// declaration order, as the columns do).
    next: usize,
}

impl SerializeStruct for &mut RowCells<'_> {
    type Ok = ();
    type Error = Fallback;

    fn serialize_field<T: Serialize + ?Sized>(
        &mut self,
        key: &'static str,
        value: &T,
    ) -> Result<(), Fallback> {
        let column = if self.fields.get(self.next) == Some(&key) {
            Some(self.next)
        } else {
            self.fields.iter().position(|f| *f == key)
        };
        let Some(i) = column else {
            return Ok(()); // a field no column shows
        };
        self.next = i + 1;
        let cell = match value.serialize(Cell) {
            Ok(cell) => cell,
            // serde_json::to_value of a row fails only where one of its
            // fields does; the whole row then goes to via_value.
            Err(Fallback) => cell_text(&serde_json::to_value(value).map_err(|_| Fallback)?),
        };
        // A later field of the same name replaces the earlier, as in a map.
        if let Some(slot) = self.cells.get_mut(i) {
            *slot = cell;
        }
        Ok(())
    }

    fn end(self) -> Result<(), Fallback> {
        Ok(())
    }
}

/// Rejects everything but a struct (rows are structs; anything else goes
/// to [`via_value`]).
macro_rules! reject {
    ($($name:ident($($arg:ty),*)),* $(,)?) => {
        $(fn $name(self, $(_: $arg),*) -> Result<Self::Ok, Fallback> {
            Err(Fallback)
        })*
    };
}

/// The compound kinds both serializers leave to `serde_json` (or refuse).
macro_rules! reject_compound {
    () => {
        fn serialize_newtype_variant<T: Serialize + ?Sized>(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: &T,
        ) -> Result<Self::Ok, Fallback> {
            Err(Fallback)
        }
        fn serialize_seq(self, _: Option<usize>) -> Result<Self::SerializeSeq, Fallback> {
            Err(Fallback)
        }
        fn serialize_tuple(self, _: usize) -> Result<Self::SerializeTuple, Fallback> {
            Err(Fallback)
        }
        fn serialize_tuple_struct(
            self,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleStruct, Fallback> {
            Err(Fallback)
        }
        fn serialize_tuple_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeTupleVariant, Fallback> {
            Err(Fallback)
        }
        fn serialize_map(self, _: Option<usize>) -> Result<Self::SerializeMap, Fallback> {
            Err(Fallback)
        }
        fn serialize_struct_variant(
            self,
            _: &'static str,
            _: u32,
            _: &'static str,
            _: usize,
        ) -> Result<Self::SerializeStructVariant, Fallback> {
            Err(Fallback)
        }
    };
}

impl<'a> Serializer for &mut RowCells<'a> {
    type Ok = ();
    type Error = Fallback;
    type SerializeSeq = Impossible<(), Fallback>;
    type SerializeTuple = Impossible<(), Fallback>;
    type SerializeTupleStruct = Impossible<(), Fallback>;
    type SerializeTupleVariant = Impossible<(), Fallback>;
    type SerializeMap = Impossible<(), Fallback>;
    type SerializeStruct = Self;
    type SerializeStructVariant = Impossible<(), Fallback>;

    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, Fallback> {
        Ok(self)
    }

    reject!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_char(char),
        serialize_str(&str),
        serialize_bytes(&[u8]),
        serialize_none(),
        serialize_unit(),
        serialize_unit_struct(&'static str),
        serialize_unit_variant(&'static str, u32, &'static str),
    );

    fn serialize_some<T: Serialize + ?Sized>(self, _: &T) -> Result<(), Fallback> {
        Err(Fallback)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: &T,
    ) -> Result<(), Fallback> {
        Err(Fallback)
    }
    reject_compound!();
}

/// One field's cell, as [`cell_text`] shows its JSON value: a string as it
/// is, an integer or boolean as JSON writes it, null (`None`, unit) as no
/// cell, a unit variant as its name; anything else is [`Fallback`].
struct Cell;

fn text(s: impl ToString) -> Result<Option<String>, Fallback> {
    Ok(Some(s.to_string()))
}

/// Serializes each of these kinds as its text.
macro_rules! as_text {
    ($($name:ident($arg:ty)),* $(,)?) => {
        $(fn $name(self, v: $arg) -> Result<Self::Ok, Fallback> {
            text(v)
        })*
    };
}

impl Serializer for Cell {
    type Ok = Option<String>;
    type Error = Fallback;
    type SerializeSeq = Impossible<Option<String>, Fallback>;
    type SerializeTuple = Impossible<Option<String>, Fallback>;
    type SerializeTupleStruct = Impossible<Option<String>, Fallback>;
    type SerializeTupleVariant = Impossible<Option<String>, Fallback>;
    type SerializeMap = Impossible<Option<String>, Fallback>;
    type SerializeStruct = Impossible<Option<String>, Fallback>;
    type SerializeStructVariant = Impossible<Option<String>, Fallback>;

    as_text!(
        serialize_bool(bool),
        serialize_i8(i8),
        serialize_i16(i16),
        serialize_i32(i32),
        serialize_i64(i64),
        serialize_u8(u8),
        serialize_u16(u16),
        serialize_u32(u32),
        serialize_u64(u64),
        serialize_char(char),
        serialize_str(&str),
    );
    fn serialize_none(self) -> Result<Self::Ok, Fallback> {
        Ok(None)
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> Result<Self::Ok, Fallback> {
        v.serialize(self)
    }
    fn serialize_unit(self) -> Result<Self::Ok, Fallback> {
        Ok(None)
    }
    fn serialize_unit_struct(self, _: &'static str) -> Result<Self::Ok, Fallback> {
        Ok(None)
    }
    fn serialize_unit_variant(
        self,
        _: &'static str,
        _: u32,
        variant: &'static str,
    ) -> Result<Self::Ok, Fallback> {
        text(variant)
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        v: &T,
    ) -> Result<Self::Ok, Fallback> {
        v.serialize(self)
    }

    // Floats (JSON's own number formatting), bytes and compound values
    // are serde_json's to write.
    reject!(
        serialize_f32(f32),
        serialize_f64(f64),
        serialize_bytes(&[u8])
    );

    reject_compound!();

    fn serialize_struct(
        self,
        _: &'static str,
        _: usize,
    ) -> Result<Self::SerializeStruct, Fallback> {
        Err(Fallback)
    }
}

/// A cell's text: null is `None`; strings as they are; anything else as
/// compact JSON.
pub(super) fn cell_text(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::Null => None,
        serde_json::Value::String(s) => Some(s.clone()),
        other => Some(other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde::Serialize;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    #[serde(rename_all = "snake_case")]
    enum Kind {
        Plain,
        Tagged(u8),
    }

    #[derive(Serialize)]
    struct Inner {
        a: i32,
    }

    #[derive(Serialize)]
    struct Unit;

    #[derive(Serialize)]
    struct Wrapped(u64);

    /// Every kind of field a row may have.
    #[derive(Serialize)]
    struct Row {
        name: String,
        #[serde(rename = "renamed")]
        count: i64,
        small: u8,
        big: u64,
        wide: i128,
        flag: bool,
        letter: char,
        maybe: Option<String>,
        nothing: Option<i32>,
        #[serde(skip_serializing_if = "Option::is_none")]
        skipped: Option<i32>,
        ratio: f64,
        kind: Kind,
        tagged: Kind,
        inner: Inner,
        list: Vec<u16>,
        map: BTreeMap<String, i32>,
        unit: (),
        unit_struct: Unit,
        wrapped: Wrapped,
        bytes: Vec<u8>,
    }

    #[derive(Serialize)]
    struct Flattened {
        top: i32,
        #[serde(flatten)]
        rest: Inner,
    }

    const FIELDS: &[&str] = &[
        "name",
        "renamed",
        "small",
        "big",
        "wide",
        "flag",
        "letter",
        "maybe",
        "nothing",
        "skipped",
        "ratio",
        "kind",
        "tagged",
        "inner",
        "list",
        "map",
        "unit",
        "unit_struct",
        "wrapped",
        "bytes",
        "absent",
    ];

    fn row(i: i64) -> Row {
        Row {
            name: format!("g\u{1b}[31m\n{i}\\é"),
            count: i * -7_000_000_000,
            small: (i % 256) as u8,
            big: u64::MAX.wrapping_sub(i as u64),
            wide: i128::from(i),
            flag: i % 2 == 0,
            letter: char::from_u32(0x41 + i.rem_euclid(3000) as u32).unwrap_or('?'),
            maybe: (i % 3 == 0).then(|| format!("m{i}")),
            nothing: None,
            skipped: (i % 2 == 0).then_some(i as i32),
            ratio: i as f64 / 3.0,
            kind: Kind::Plain,
            tagged: Kind::Tagged(i as u8),
            inner: Inner { a: i as i32 },
            list: vec![1, i as u16],
            map: [("k".to_string(), i as i32)].into(),
            unit: (),
            unit_struct: Unit,
            wrapped: Wrapped(i as u64),
            bytes: vec![i as u8, 0xff],
        }
    }

    #[test]
    fn cells_are_the_json_values_cells() {
        for i in [-5, 0, 1, 2, 3, 64, 1_000_003] {
            let r = row(i);
            assert_eq!(row_cells(&r, FIELDS), via_value(&r, FIELDS), "row {i}");
        }
        // Columns in another order than the fields, and fewer.
        let some = ["flag", "name", "renamed"];
        assert_eq!(row_cells(&row(9), &some), via_value(&row(9), &some));
    }

    #[test]
    fn rows_that_are_not_plain_structs_take_the_json_path() {
        let f = Flattened {
            top: 1,
            rest: Inner { a: 2 },
        };
        let fields = ["top", "a"];
        assert_eq!(
            row_cells(&f, &fields),
            vec![Some("1".into()), Some("2".into())]
        );
        let m: BTreeMap<&str, i32> = [("top", 3)].into();
        assert_eq!(row_cells(&m, &fields), vec![Some("3".into()), None]);
        // A field serde_json refuses (an i128 past 64 bits) makes the whole
        // row null there, and so here.
        #[derive(Serialize)]
        struct Huge {
            top: i32,
            a: i128,
        }
        let h = Huge {
            top: 1,
            a: i128::MIN,
        };
        assert_eq!(via_value(&h, &fields), vec![None, None]);
        assert_eq!(row_cells(&h, &fields), vec![None, None]);
    }
}
