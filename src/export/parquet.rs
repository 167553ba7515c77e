//! Parquet files of flat rows (and one list of key/value structs, a
//! record's headers), written with the `parquet` crate's low-level writer.
//!
//! A [`Table`] buffers rows column by column and writes them as one row
//! group whenever it holds [`Limits::rows`] rows or [`Limits::bytes`]
//! bytes of values, so memory is bounded by one row group, never by the
//! input. The file goes through [`Staged`]: it gets its final name only
//! once its footer is written and synced.
//!
//! The schema and the buffers come from one list of [`Col`]umns, so they
//! cannot disagree.

use std::path::Path;
use std::sync::Arc;

use parquet::basic::{Compression as Codec, ZstdLevel};
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::properties::WriterProperties;
use parquet::file::writer::SerializedFileWriter;
use parquet::schema::parser::parse_message_type;

use crate::error::{Error, Result};
use crate::log::durable::Staged;

/// A column's Parquet type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `int64`.
    I64,
    /// `int32`.
    I32,
    /// `int32 (INTEGER(16,true))`: a Kafka int16.
    I16,
    /// `boolean`.
    Bool,
    /// `binary (STRING)`: UTF-8 text.
    Str,
    /// `binary`: bytes.
    Bytes,
    /// `int64 (TIMESTAMP(MILLIS,true))`: epoch milliseconds, UTC.
    TimestampMs,
    /// A list of `{key: string, value: binary}` (a record's headers): two
    /// leaf columns.
    Headers,
}

/// One column: its name, type, and whether it may be null.
#[derive(Debug, Clone, Copy)]
pub struct Col {
    pub name: &'static str,
    pub kind: Kind,
    pub optional: bool,
    /// Values that mostly differ from each other (record values): written
    /// without a dictionary or min/max statistics, which would cost a hash
    /// and comparisons per value and save nothing.
    pub plain: bool,
}

/// A column that is never null.
pub const fn req(name: &'static str, kind: Kind) -> Col {
    Col {
        name,
        kind,
        optional: false,
        plain: false,
    }
}

/// A column that may be null.
pub const fn opt(name: &'static str, kind: Kind) -> Col {
    Col {
        name,
        kind,
        optional: true,
        plain: false,
    }
}

/// A column that may be null, of values that mostly differ ([`Col::plain`]).
pub const fn opt_plain(name: &'static str, kind: Kind) -> Col {
    Col {
        name,
        kind,
        optional: true,
        plain: true,
    }
}

/// The Parquet schema (message type) of `cols`.
pub fn schema_text(cols: &[Col]) -> String {
    let mut s = String::from("message klog {\n");
    for c in cols {
        let rep = if c.optional { "optional" } else { "required" };
        let (name, line) = (
            c.name,
            match c.kind {
                Kind::I64 => "int64 {}".to_string(),
                Kind::I32 => "int32 {}".to_string(),
                Kind::I16 => "int32 {} (INTEGER(16,true))".to_string(),
                Kind::Bool => "boolean {}".to_string(),
                Kind::Str => "binary {} (STRING)".to_string(),
                Kind::Bytes => "binary {}".to_string(),
                Kind::TimestampMs => "int64 {} (TIMESTAMP(MILLIS,true))".to_string(),
                Kind::Headers => {
                    "group {} (LIST) { repeated group list { required group element { \
                              required binary key (STRING); optional binary value; } } }"
                        .to_string()
                }
            },
        );
        let end = if c.kind == Kind::Headers { "" } else { ";" };
        s.push_str(&format!("  {rep} {}{end}\n", line.replacen("{}", name, 1)));
    }
    s.push('}');
    s
}

/// One value of a row, in its column's order.
#[derive(Debug, Clone, Copy)]
pub enum Val<'a> {
    Null,
    I64(i64),
    I32(i32),
    Bool(bool),
    Str(&'a str),
    Bytes(&'a [u8]),
    /// A record's headers: key (as UTF-8 text) and value.
    Headers(&'a [(String, Option<&'a [u8]>)]),
}

/// The values buffered for one leaf column.
enum Values {
    I64(Vec<i64>),
    I32(Vec<i32>),
    Bool(Vec<bool>),
    Bytes(Arena),
}

/// Byte values buffered in one growing buffer, each a range of it: a row
/// group of byte values costs a few allocations, not one per value (the
/// allocator was most of an export's time). At the flush the buffer
/// becomes one shared `Bytes` that every value is a slice of.
#[derive(Default)]
struct Arena {
    buf: Vec<u8>,
    ranges: Vec<(usize, usize)>,
}

impl Arena {
    fn push(&mut self, b: &[u8]) {
        let at = self.buf.len();
        self.buf.extend_from_slice(b);
        self.ranges.push((at, self.buf.len()));
    }

    /// The values, and the buffer emptied for the next row group (with
    /// room for as much).
    fn take(&mut self) -> Vec<ByteArray> {
        let room = self.buf.len();
        let all = bytes::Bytes::from(std::mem::replace(&mut self.buf, Vec::with_capacity(room)));
        let values = self
            .ranges
            .drain(..)
            .map(|(a, b)| ByteArray::from(all.slice(a..b)))
            .collect();
        values
    }
}

/// One leaf column's buffer: values, and definition and repetition levels
/// when the column has them.
struct Leaf {
    values: Values,
    def: Vec<i16>,
    rep: Vec<i16>,
    /// Whether `def` (`rep`) is written: an optional or nested column.
    has_def: bool,
    has_rep: bool,
}

impl Leaf {
    fn new(values: Values, has_def: bool, has_rep: bool) -> Self {
        Leaf {
            values,
            def: Vec::new(),
            rep: Vec::new(),
            has_def,
            has_rep,
        }
    }

    fn clear(&mut self) {
        match &mut self.values {
            Values::I64(v) => v.clear(),
            Values::I32(v) => v.clear(),
            Values::Bool(v) => v.clear(),
            Values::Bytes(v) => {
                v.buf.clear();
                v.ranges.clear();
            }
        }
        self.def.clear();
        self.rep.clear();
    }
}

/// When a row group is written.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Rows in a row group.
    pub rows: usize,
    /// Bytes of keys, values and text a row group may buffer before it is
    /// written (whatever its rows): large values do not grow memory.
    pub bytes: usize,
}

/// The compression of the pages written.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PageCodec {
    #[default]
    Zstd,
    Snappy,
    None,
}

/// A Parquet file being written: rows buffered by column, written as a
/// row group at [`Limits`], the file renamed into place by
/// [`finish`](Self::finish).
pub struct Table {
    cols: &'static [Col],
    leaves: Vec<Leaf>,
    rows: usize,
    bytes: usize,
    written: u64,
    limits: Limits,
    writer: SerializedFileWriter<Staged>,
    path: std::path::PathBuf,
}

fn parquet_err(path: &Path, what: &'static str, e: parquet::errors::ParquetError) -> Error {
    Error::io(path, what, std::io::Error::other(e))
}

impl Table {
    /// Start the file `path` with the columns `cols`.
    pub fn create(
        path: &Path,
        cols: &'static [Col],
        limits: Limits,
        codec: PageCodec,
    ) -> Result<Self> {
        let schema = parse_message_type(&schema_text(cols))
            .map_err(|e| parquet_err(path, "build the Parquet schema of", e))?;
        let codec = match codec {
            PageCodec::Zstd => Codec::ZSTD(ZstdLevel::default()),
            PageCodec::Snappy => Codec::SNAPPY,
            PageCodec::None => Codec::UNCOMPRESSED,
        };
        let mut props = WriterProperties::builder()
            .set_compression(codec)
            .set_created_by(format!("klog {}", env!("CARGO_PKG_VERSION")))
            .set_max_row_group_row_count(Some(limits.rows.max(1)));
        for c in cols.iter().filter(|c| c.plain) {
            let path = parquet::schema::types::ColumnPath::from(c.name);
            props = props
                .set_column_dictionary_enabled(path.clone(), false)
                .set_column_statistics_enabled(
                    path,
                    parquet::file::properties::EnabledStatistics::None,
                );
        }
        let props = props.build();
        let staged = Staged::create(path)?;
        let writer = SerializedFileWriter::new(staged, Arc::new(schema), Arc::new(props))
            .map_err(|e| parquet_err(path, "start the Parquet file", e))?;
        let mut leaves = Vec::new();
        for c in cols {
            match c.kind {
                Kind::I64 | Kind::TimestampMs => {
                    leaves.push(Leaf::new(Values::I64(Vec::new()), c.optional, false))
                }
                Kind::I32 | Kind::I16 => {
                    leaves.push(Leaf::new(Values::I32(Vec::new()), c.optional, false))
                }
                Kind::Bool => leaves.push(Leaf::new(Values::Bool(Vec::new()), c.optional, false)),
                Kind::Str | Kind::Bytes => leaves.push(Leaf::new(
                    Values::Bytes(Arena::default()),
                    c.optional,
                    false,
                )),
                Kind::Headers => {
                    leaves.push(Leaf::new(Values::Bytes(Arena::default()), true, true));
                    leaves.push(Leaf::new(Values::Bytes(Arena::default()), true, true));
                }
            }
        }
        Ok(Table {
            cols,
            leaves,
            rows: 0,
            bytes: 0,
            written: 0,
            limits,
            writer,
            path: path.to_path_buf(),
        })
    }

    /// The rows added so far.
    pub fn rows(&self) -> u64 {
        self.written + self.rows as u64
    }

    /// Add one row: a value per column, in the columns' order. A value of
    /// the wrong type (a bug in the row builder) is an error naming the
    /// column.
    pub fn push(&mut self, row: &[Val<'_>]) -> Result<()> {
        if row.len() != self.cols.len() {
            return Err(Error::layout(
                &self.path,
                format!(
                    "a row of {} values for {} columns",
                    row.len(),
                    self.cols.len()
                ),
            ));
        }
        // Every value checked before any is buffered: a refused row leaves
        // no column a value longer than the others.
        if let Some((c, v)) = self.cols.iter().zip(row).find(|(c, v)| !fits(c, v)) {
            return Err(Error::layout(
                &self.path,
                format!("column {} ({:?}) was given {v:?}", c.name, c.kind),
            ));
        }
        let mut leaf = 0;
        for (c, v) in self.cols.iter().zip(row) {
            if let (Kind::Headers, Val::Headers(hs)) = (c.kind, v) {
                self.bytes += push_headers(self.leaves.get_mut(leaf..).unwrap_or_default(), hs);
                leaf += 2;
                continue;
            }
            let Some(l) = self.leaves.get_mut(leaf) else {
                break;
            };
            let def = i16::from(c.optional);
            match (c.kind, *v, &mut l.values) {
                (kind, Val::Null, _) if c.optional && kind != Kind::Headers => l.def.push(0),
                (Kind::I64 | Kind::TimestampMs, Val::I64(x), Values::I64(vs)) => {
                    vs.push(x);
                    l.def.push(def);
                }
                (Kind::I32 | Kind::I16, Val::I32(x), Values::I32(vs)) => {
                    vs.push(x);
                    l.def.push(def);
                }
                (Kind::Bool, Val::Bool(x), Values::Bool(vs)) => {
                    vs.push(x);
                    l.def.push(def);
                }
                (Kind::Str, Val::Str(x), Values::Bytes(vs)) => {
                    self.bytes += x.len();
                    vs.push(x.as_bytes());
                    l.def.push(def);
                }
                (Kind::Bytes, Val::Bytes(x), Values::Bytes(vs)) => {
                    self.bytes += x.len();
                    vs.push(x);
                    l.def.push(def);
                }
                // `fits` let through no other pair.
                _ => {}
            }
            leaf += 1;
        }
        self.rows += 1;
        if self.rows >= self.limits.rows || self.bytes >= self.limits.bytes {
            self.flush()?;
        }
        Ok(())
    }

    /// Write the buffered rows as one row group.
    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let path = self.path.clone();
        let err = |e| parquet_err(&path, "write a row group of", e);
        let mut rg = self.writer.next_row_group().map_err(err)?;
        for l in &mut self.leaves {
            let Some(mut col) = rg.next_column().map_err(err)? else {
                break;
            };
            let def = l.has_def.then_some(l.def.as_slice());
            let rep = l.has_rep.then_some(l.rep.as_slice());
            match &mut l.values {
                Values::I64(v) => col.typed::<Int64Type>().write_batch(v, def, rep),
                Values::I32(v) => col.typed::<Int32Type>().write_batch(v, def, rep),
                Values::Bool(v) => col.typed::<BoolType>().write_batch(v, def, rep),
                Values::Bytes(v) => col
                    .typed::<ByteArrayType>()
                    .write_batch(&v.take(), def, rep),
            }
            .map_err(err)?;
            col.close().map_err(err)?;
        }
        rg.close().map_err(err)?;
        for l in &mut self.leaves {
            l.clear();
        }
        self.written += self.rows as u64;
        self.rows = 0;
        self.bytes = 0;
        Ok(())
    }

    /// Write what is buffered and the footer, and give the file its name.
    /// Returns the rows written.
    pub fn finish(mut self) -> Result<u64> {
        self.flush()?;
        let path = self.path.clone();
        let rows = self.written;
        let staged = self
            .writer
            .into_inner()
            .map_err(|e| parquet_err(&path, "finish the Parquet file", e))?;
        staged.commit()?;
        Ok(rows)
    }
}

/// Whether `v` may be a value of column `c`.
fn fits(c: &Col, v: &Val<'_>) -> bool {
    matches!(
        (c.kind, v),
        (Kind::I64 | Kind::TimestampMs, Val::I64(_))
            | (Kind::I32 | Kind::I16, Val::I32(_))
            | (Kind::Bool, Val::Bool(_))
            | (Kind::Str, Val::Str(_))
            | (Kind::Bytes, Val::Bytes(_))
            | (Kind::Headers, Val::Headers(_))
    ) || (c.optional && c.kind != Kind::Headers && matches!(v, Val::Null))
}

/// Add one record's headers to the key and value leaves (`leaves[0]`,
/// `leaves[1]`): a list that is always there (definition level 0 for an
/// empty one), each element's key required (level 1), its value optional
/// (level 2 when present). Returns the bytes buffered.
fn push_headers(leaves: &mut [Leaf], hs: &[(String, Option<&[u8]>)]) -> usize {
    let [keys, values, ..] = leaves else {
        return 0;
    };
    let mut bytes = 0;
    if hs.is_empty() {
        for l in [&mut *keys, &mut *values] {
            l.def.push(0);
            l.rep.push(0);
        }
        return 0;
    }
    for (i, (k, v)) in hs.iter().enumerate() {
        let rep = i16::from(i > 0);
        if let Values::Bytes(ks) = &mut keys.values {
            ks.push(k.as_bytes());
        }
        keys.def.push(1);
        keys.rep.push(rep);
        bytes += k.len();
        match (v, &mut values.values) {
            (Some(v), Values::Bytes(vs)) => {
                vs.push(v);
                values.def.push(2);
                bytes += v.len();
            }
            _ => values.def.push(1),
        }
        values.rep.push(rep);
    }
    bytes
}

#[cfg(test)]
mod tests {
    use super::*;

    const COLS: &[Col] = &[req("offset", Kind::I64), opt("key", Kind::Bytes)];

    fn names(dir: &Path) -> Vec<String> {
        let mut n: Vec<String> = std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        n.sort();
        n
    }

    /// A table dropped before `finish` (an error, an interrupt) leaves no
    /// file under its name, and removes its temporary one; while it is
    /// written, only the temporary name exists.
    #[test]
    fn an_unfinished_table_leaves_no_file_under_its_name() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("00000000000000000000.parquet");
        let limits = Limits {
            rows: 2,
            bytes: 1 << 20,
        };
        let mut t = Table::create(&path, COLS, limits, PageCodec::Zstd).unwrap();
        for i in 0..5 {
            t.push(&[Val::I64(i), Val::Bytes(b"k")]).unwrap();
        }
        assert_eq!(
            names(dir.path()),
            [".00000000000000000000.parquet.klog-tmp"]
        );
        drop(t);
        assert!(names(dir.path()).is_empty());

        let mut t = Table::create(&path, COLS, limits, PageCodec::Zstd).unwrap();
        t.push(&[Val::I64(7), Val::Null]).unwrap();
        assert_eq!(t.finish().unwrap(), 1);
        assert_eq!(names(dir.path()), ["00000000000000000000.parquet"]);
    }

    /// A value of the wrong type for its column is an error, not a file
    /// whose columns disagree.
    #[test]
    fn a_row_of_the_wrong_shape_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("t.parquet");
        let limits = Limits {
            rows: 10,
            bytes: 1 << 20,
        };
        let mut t = Table::create(&path, COLS, limits, PageCodec::None).unwrap();
        assert!(t.push(&[Val::I64(1)]).is_err());
        assert!(
            t.push(&[Val::Null, Val::Null]).is_err(),
            "offset is required"
        );
        assert!(t.push(&[Val::Str("x"), Val::Null]).is_err());
    }
}
