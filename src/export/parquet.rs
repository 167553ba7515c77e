//! Parquet files of flat rows (and one list of key/value structs, a
//! record's headers), written with the `parquet` crate's Arrow writer.
//!
//! A [`Table`] buffers rows column by column in Arrow arrays (each column's
//! bytes in one buffer with an offset per value, nothing allocated or
//! reference-counted per value) and writes them as one row group whenever
//! it holds [`Limits::rows`] rows or [`Limits::bytes`] bytes of values, so
//! memory is bounded by one row group, never by the input. The file goes
//! through [`Staged`]: it gets its final name only once its footer is
//! written and synced.
//!
//! The Parquet schema, the Arrow schema and the buffers come from one list
//! of [`Col`]umns, so they cannot disagree. The Parquet schema is given to
//! the writer as [`schema_text`] says, and no Arrow schema is stored in the
//! file: a column buffered as an Arrow dictionary ([`Col::dict`]) is a plain
//! `binary (STRING)` column to every reader.

use std::path::Path;
use std::sync::Arc;

use arrow_array::builder::{
    ArrayBuilder, BinaryBuilder, BooleanBuilder, Int16Builder, Int32Builder, Int64Builder,
    StringBuilder, StringDictionaryBuilder, TimestampMillisecondBuilder,
};
use arrow_array::types::Int32Type;
use arrow_array::StructArray;
use arrow_array::{ArrayRef, ListArray, RecordBatch};
use arrow_buffer::{OffsetBuffer, ScalarBuffer};
use arrow_schema::{ArrowError, DataType, Field, Fields, Schema, TimeUnit};
use parquet::arrow::arrow_writer::{ArrowWriter, ArrowWriterOptions};
use parquet::basic::{Compression as Codec, ZstdLevel};
use parquet::file::properties::WriterProperties;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::SchemaDescriptor;

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
    /// Text that is the same over many rows in a row (a batch's or a
    /// file's: the compression, the segment file): buffered as an Arrow
    /// dictionary (`StringDictionaryBuilder`), each distinct value held
    /// once a row group; a batch's value is given once for all its records
    /// ([`Table::push_run`]), so it is looked up once a batch.
    pub dict: bool,
}

/// A column that is never null.
pub const fn req(name: &'static str, kind: Kind) -> Col {
    Col {
        name,
        kind,
        optional: false,
        plain: false,
        dict: false,
    }
}

/// A column that may be null.
pub const fn opt(name: &'static str, kind: Kind) -> Col {
    Col {
        optional: true,
        ..req(name, kind)
    }
}

/// A column that may be null, of values that mostly differ ([`Col::plain`]).
pub const fn opt_plain(name: &'static str, kind: Kind) -> Col {
    Col {
        plain: true,
        ..opt(name, kind)
    }
}

/// A text column that is never null, of values repeated row after row
/// ([`Col::dict`]).
pub const fn req_dict(name: &'static str) -> Col {
    Col {
        dict: true,
        ..req(name, Kind::Str)
    }
}

/// A text column that may be null, of values repeated row after row
/// ([`Col::dict`]).
pub const fn opt_dict(name: &'static str) -> Col {
    Col {
        dict: true,
        ..opt(name, Kind::Str)
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

/// One column's values over a run of rows ([`Table::push_run`]).
#[derive(Debug, Clone, Copy)]
pub enum Run<'a> {
    /// The same value in every row (a batch's producer, its file).
    All(Val<'a>),
    /// A value per row.
    Each(&'a [Val<'a>]),
}

/// The Arrow type a column is buffered as.
fn arrow_type(c: &Col) -> DataType {
    match c.kind {
        Kind::I64 => DataType::Int64,
        Kind::I32 => DataType::Int32,
        Kind::I16 => DataType::Int16,
        Kind::Bool => DataType::Boolean,
        Kind::Str if c.dict => {
            DataType::Dictionary(Box::new(DataType::Int32), Box::new(DataType::Utf8))
        }
        Kind::Str => DataType::Utf8,
        Kind::Bytes => DataType::Binary,
        Kind::TimestampMs => DataType::Timestamp(TimeUnit::Millisecond, Some("UTC".into())),
        Kind::Headers => DataType::List(header_element()),
    }
}

/// The list element of the headers column: one header, never null.
fn header_element() -> Arc<Field> {
    Arc::new(Field::new(
        "element",
        DataType::Struct(header_fields()),
        false,
    ))
}

/// The fields of one header: `key` (text, never null), `value` (bytes).
fn header_fields() -> Fields {
    Fields::from(vec![
        Field::new("key", DataType::Utf8, false),
        Field::new("value", DataType::Binary, true),
    ])
}

/// The Arrow schema of `cols`: the Parquet schema of [`schema_text`], as
/// the buffers hold it.
fn arrow_schema(cols: &[Col]) -> Schema {
    Schema::new(
        cols.iter()
            .map(|c| Field::new(c.name, arrow_type(c), c.optional))
            .collect::<Vec<_>>(),
    )
}

/// A record's headers: a list per row of `{key, value}` structs.
struct Headers {
    offsets: Vec<i32>,
    keys: StringBuilder,
    values: BinaryBuilder,
}

impl Headers {
    fn new() -> Self {
        Headers {
            offsets: vec![0],
            keys: StringBuilder::new(),
            values: BinaryBuilder::new(),
        }
    }

    /// Add one row's headers; the bytes buffered.
    fn push(&mut self, hs: &[(String, Option<&[u8]>)]) -> usize {
        let mut bytes = 0;
        for (k, v) in hs {
            self.keys.append_value(k);
            self.values.append_option(*v);
            bytes += k.len() + v.map_or(0, <[u8]>::len);
        }
        self.offsets.push(self.keys.len() as i32);
        bytes
    }

    fn finish(&mut self) -> std::result::Result<ArrayRef, arrow_schema::ArrowError> {
        let entries = StructArray::try_new(
            header_fields(),
            vec![
                Arc::new(self.keys.finish()) as ArrayRef,
                Arc::new(self.values.finish()),
            ],
            None,
        )?;
        let offsets = std::mem::replace(&mut self.offsets, vec![0]);
        Ok(Arc::new(ListArray::try_new(
            header_element(),
            OffsetBuffer::new(ScalarBuffer::from(offsets)),
            Arc::new(entries),
            None,
        )?))
    }
}

/// One column's buffer.
enum Buf {
    I64(Int64Builder),
    I32(Int32Builder),
    I16(Int16Builder),
    Bool(BooleanBuilder),
    Timestamp(TimestampMillisecondBuilder),
    Str(StringBuilder),
    Dict(StringDictionaryBuilder<Int32Type>),
    Bytes(BinaryBuilder),
    Headers(Headers),
}

impl Buf {
    fn new(c: &Col) -> Self {
        match c.kind {
            Kind::I64 => Buf::I64(Int64Builder::new()),
            Kind::I32 => Buf::I32(Int32Builder::new()),
            Kind::I16 => Buf::I16(Int16Builder::new()),
            Kind::Bool => Buf::Bool(BooleanBuilder::new()),
            Kind::TimestampMs => {
                Buf::Timestamp(TimestampMillisecondBuilder::new().with_timezone("UTC"))
            }
            Kind::Str if c.dict => Buf::Dict(StringDictionaryBuilder::new()),
            Kind::Str => Buf::Str(StringBuilder::new()),
            Kind::Bytes => Buf::Bytes(BinaryBuilder::new()),
            Kind::Headers => Buf::Headers(Headers::new()),
        }
    }

    /// Add `v`, which [`fits`] the column; the bytes buffered. An error
    /// only when a dictionary column has more distinct values than its
    /// int32 keys count.
    fn push(&mut self, v: Val<'_>) -> std::result::Result<usize, ArrowError> {
        self.push_n(v, 1)
    }

    /// Add `v`, which [`fits`] the column, to `n` rows; the bytes buffered.
    fn push_n(&mut self, v: Val<'_>, n: usize) -> std::result::Result<usize, ArrowError> {
        match (self, v) {
            (Buf::I64(b), Val::I64(x)) => b.append_value_n(x, n),
            (Buf::Timestamp(b), Val::I64(x)) => b.append_value_n(x, n),
            (Buf::I32(b), Val::I32(x)) => b.append_value_n(x, n),
            (Buf::I16(b), Val::I32(x)) => b.append_value_n(x as i16, n),
            (Buf::Bool(b), Val::Bool(x)) => b.append_n(n, x),
            (Buf::Str(b), Val::Str(x)) => {
                b.append_value_n(x, n);
                return Ok(x.len() * n);
            }
            (Buf::Dict(d), Val::Str(x)) => {
                d.append_n(x, n)?;
            }
            (Buf::Bytes(b), Val::Bytes(x)) => {
                b.append_value_n(x, n);
                return Ok(x.len() * n);
            }
            (Buf::Headers(h), Val::Headers(hs)) => {
                return Ok((0..n).map(|_| h.push(hs)).sum());
            }
            (Buf::I64(b), Val::Null) => b.append_nulls(n),
            (Buf::Timestamp(b), Val::Null) => b.append_nulls(n),
            (Buf::I32(b), Val::Null) => b.append_nulls(n),
            (Buf::I16(b), Val::Null) => b.append_nulls(n),
            (Buf::Bool(b), Val::Null) => b.append_nulls(n),
            (Buf::Str(b), Val::Null) => b.append_nulls(n),
            (Buf::Dict(d), Val::Null) => d.append_nulls(n),
            (Buf::Bytes(b), Val::Null) => b.append_nulls(n),
            // `fits` let through no other pair.
            _ => {}
        }
        Ok(0)
    }

    /// The buffered values as an array; the buffer empty.
    fn finish(&mut self) -> std::result::Result<ArrayRef, arrow_schema::ArrowError> {
        Ok(match self {
            Buf::I64(b) => Arc::new(b.finish()),
            Buf::I32(b) => Arc::new(b.finish()),
            Buf::I16(b) => Arc::new(b.finish()),
            Buf::Bool(b) => Arc::new(b.finish()),
            Buf::Timestamp(b) => Arc::new(b.finish()),
            Buf::Str(b) => Arc::new(b.finish()),
            Buf::Dict(d) => Arc::new(d.finish()),
            Buf::Bytes(b) => Arc::new(b.finish()),
            Buf::Headers(h) => h.finish()?,
        })
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
    bufs: Vec<Buf>,
    schema: Arc<Schema>,
    rows: usize,
    bytes: usize,
    written: u64,
    limits: Limits,
    writer: Writer,
    path: std::path::PathBuf,
}

/// The thread that encodes, compresses and writes a table's row groups,
/// one at a time, while the next one is buffered: a file's writing takes
/// the wall time of the slower of the two, not of both. Memory holds two
/// row groups at most (the one written, the one buffered): the hand-over
/// waits for the thread to be free.
struct Writer {
    tx: Option<std::sync::mpsc::SyncSender<RecordBatch>>,
    thread: Option<std::thread::JoinHandle<parquet::errors::Result<ArrowWriter<Staged>>>>,
}

impl Writer {
    fn start(mut writer: ArrowWriter<Staged>) -> std::io::Result<Self> {
        let (tx, rx) = std::sync::mpsc::sync_channel::<RecordBatch>(0);
        let thread = std::thread::Builder::new()
            .name("klog-parquet".into())
            .spawn(move || {
                for batch in rx {
                    writer.write(&batch)?;
                    writer.flush()?;
                }
                Ok(writer)
            })?;
        Ok(Writer {
            tx: Some(tx),
            thread: Some(thread),
        })
    }

    /// Hand a row group to the thread; false when it has stopped (an
    /// error, which [`end`](Self::end) returns).
    fn send(&mut self, batch: RecordBatch) -> bool {
        self.tx.as_ref().is_some_and(|tx| tx.send(batch).is_ok())
    }

    /// Wait for the thread to write what it was given; the writer, or the
    /// error that stopped it.
    fn end(&mut self) -> parquet::errors::Result<ArrowWriter<Staged>> {
        self.tx = None;
        match self.thread.take().map(std::thread::JoinHandle::join) {
            Some(Ok(done)) => done,
            Some(Err(_)) => Err(parquet::errors::ParquetError::General(
                "the Parquet writing thread panicked".into(),
            )),
            None => Err(parquet::errors::ParquetError::General(
                "the Parquet file was already finished".into(),
            )),
        }
    }
}

impl Drop for Writer {
    /// A table dropped unfinished: the thread is stopped and waited for,
    /// so its temporary file is gone when the drop returns.
    fn drop(&mut self) {
        let _ = self.end();
    }
}

fn parquet_err(path: &Path, what: &'static str, e: parquet::errors::ParquetError) -> Error {
    Error::io(path, what, std::io::Error::other(e))
}

fn arrow_err(path: &Path, what: &'static str, e: arrow_schema::ArrowError) -> Error {
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
        // Integers (offsets, positions, sequences, times, ids) mostly run
        // up by steps or stay the same: delta-encoded, they take a few bits
        // each with no hash per value, where a dictionary would hash every
        // one and hold as many entries as there are distinct offsets.
        for c in cols.iter().filter(|c| {
            matches!(
                c.kind,
                Kind::I64 | Kind::I32 | Kind::I16 | Kind::TimestampMs
            )
        }) {
            let path = parquet::schema::types::ColumnPath::from(c.name);
            props = props
                .set_column_dictionary_enabled(path.clone(), false)
                .set_column_encoding(path, parquet::basic::Encoding::DELTA_BINARY_PACKED);
        }
        let options = ArrowWriterOptions::new()
            .with_properties(props.build())
            .with_skip_arrow_metadata(true)
            .with_parquet_schema(SchemaDescriptor::new(Arc::new(schema)));
        let arrow = Arc::new(arrow_schema(cols));
        let staged = Staged::create(path)?;
        let writer = ArrowWriter::try_new_with_options(staged, arrow.clone(), options)
            .map_err(|e| parquet_err(path, "start the Parquet file", e))?;
        let writer =
            Writer::start(writer).map_err(|e| Error::io(path, "start a thread to write", e))?;
        Ok(Table {
            cols,
            bufs: cols.iter().map(Buf::new).collect(),
            schema: arrow,
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
        for (b, v) in self.bufs.iter_mut().zip(row) {
            self.bytes += b
                .push(*v)
                .map_err(|e| arrow_err(&self.path, "buffer a row of", e))?;
        }
        self.rows += 1;
        if self.rows >= self.limits.rows || self.bytes >= self.limits.bytes {
            self.flush()?;
        }
        Ok(())
    }

    /// Add `n` rows given column by column, a [`Run`] per column in the
    /// columns' order: what a batch's records share given once. The rows
    /// are those of `n` calls of [`push`](Self::push), and a row group is
    /// written at [`Limits::rows`] as they would; [`Limits::bytes`] is
    /// looked at once the run is in (the run's values are in memory
    /// anyway). A run of the wrong length or a value of the wrong type is
    /// an error naming the column, and then no row is added.
    pub fn push_run(&mut self, n: usize, runs: &[Run<'_>]) -> Result<()> {
        if runs.len() != self.cols.len() {
            return Err(Error::layout(
                &self.path,
                format!(
                    "a run of {} columns for {} columns",
                    runs.len(),
                    self.cols.len()
                ),
            ));
        }
        for (c, r) in self.cols.iter().zip(runs) {
            let bad = match r {
                Run::All(v) => (!fits(c, v)).then(|| format!("{v:?}")),
                Run::Each(vs) if vs.len() != n => Some(format!("{} values for {n} rows", vs.len())),
                Run::Each(vs) => vs.iter().find(|v| !fits(c, v)).map(|v| format!("{v:?}")),
            };
            if let Some(bad) = bad {
                return Err(Error::layout(
                    &self.path,
                    format!("column {} ({:?}) was given {bad}", c.name, c.kind),
                ));
            }
        }
        let mut done = 0;
        while done < n {
            let k = (n - done).min(self.limits.rows.saturating_sub(self.rows).max(1));
            for (b, r) in self.bufs.iter_mut().zip(runs) {
                self.bytes += match r {
                    Run::All(v) => b.push_n(*v, k),
                    Run::Each(vs) => vs
                        .get(done..done + k)
                        .unwrap_or_default()
                        .iter()
                        .map(|v| b.push(*v))
                        .sum(),
                }
                .map_err(|e| arrow_err(&self.path, "buffer rows of", e))?;
            }
            self.rows += k;
            done += k;
            if self.rows >= self.limits.rows || self.bytes >= self.limits.bytes {
                self.flush()?;
            }
        }
        Ok(())
    }

    /// Write the buffered rows as one row group.
    fn flush(&mut self) -> Result<()> {
        if self.rows == 0 {
            return Ok(());
        }
        let path = self.path.clone();
        let columns = self
            .bufs
            .iter_mut()
            .map(Buf::finish)
            .collect::<std::result::Result<Vec<_>, _>>()
            .and_then(|columns| RecordBatch::try_new(self.schema.clone(), columns))
            .map_err(|e| arrow_err(&path, "buffer a row group of", e))?;
        if !self.writer.send(columns) {
            let e = match self.writer.end() {
                Err(e) => e,
                Ok(_) => parquet::errors::ParquetError::General("the writer stopped".into()),
            };
            return Err(parquet_err(&path, "write a row group of", e));
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
            .end()
            .and_then(ArrowWriter::into_inner)
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
            | (Kind::I32, Val::I32(_))
            | (Kind::Bool, Val::Bool(_))
            | (Kind::Str, Val::Str(_))
            | (Kind::Bytes, Val::Bytes(_))
            | (Kind::Headers, Val::Headers(_))
    ) || matches!((c.kind, v), (Kind::I16, Val::I32(x)) if i16::try_from(*x).is_ok())
        || (c.optional && c.kind != Kind::Headers && matches!(v, Val::Null))
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

    /// Rows given as runs are the rows given one by one, across row
    /// groups; a run of the wrong length adds nothing.
    #[test]
    fn runs_are_rows() {
        const R: &[Col] = &[
            req("n", Kind::I64),
            opt_dict("file"),
            opt("key", Kind::Bytes),
            req("epoch", Kind::I16),
        ];
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            rows: 4,
            bytes: 1 << 20,
        };
        let keys: Vec<Val<'_>> = (0..7)
            .map(|i| {
                if i % 3 == 0 {
                    Val::Null
                } else {
                    Val::Bytes(b"k")
                }
            })
            .collect();
        let ns: Vec<Val<'_>> = (0..7).map(Val::I64).collect();
        let one = dir.path().join("one.parquet");
        let mut t = Table::create(&one, R, limits, PageCodec::Zstd).unwrap();
        for (n, k) in ns.iter().zip(&keys) {
            t.push(&[*n, Val::Str("f"), *k, Val::I32(-1)]).unwrap();
        }
        t.push(&[Val::I64(7), Val::Null, Val::Null, Val::I32(3)])
            .unwrap();
        assert_eq!(t.finish().unwrap(), 8);
        let runs = dir.path().join("runs.parquet");
        let mut t = Table::create(&runs, R, limits, PageCodec::Zstd).unwrap();
        let bad = [
            Run::Each(&ns[..6]),
            Run::All(Val::Str("f")),
            Run::Each(&keys),
            Run::All(Val::I32(-1)),
        ];
        assert!(t.push_run(7, &bad).is_err());
        assert_eq!(t.rows(), 0);
        let run = [
            Run::Each(&ns),
            Run::All(Val::Str("f")),
            Run::Each(&keys),
            Run::All(Val::I32(-1)),
        ];
        t.push_run(7, &run).unwrap();
        let last = [
            Run::All(Val::I64(7)),
            Run::All(Val::Null),
            Run::All(Val::Null),
            Run::All(Val::I32(3)),
        ];
        t.push_run(1, &last).unwrap();
        assert_eq!(t.finish().unwrap(), 8);
        let read = |path: &Path| {
            use parquet::file::reader::FileReader;
            let r = parquet::file::reader::SerializedFileReader::new(
                std::fs::File::open(path).unwrap(),
            )
            .unwrap();
            let groups = r.metadata().num_row_groups();
            let rows: Vec<String> = r
                .get_row_iter(None)
                .unwrap()
                .map(|row| row.unwrap().to_string())
                .collect();
            (groups, rows)
        };
        assert_eq!(read(&one), read(&runs));
        assert_eq!(read(&runs).0, 2);
    }

    /// An int16 column takes an int32 value only when it fits.
    #[test]
    fn an_int16_column_refuses_a_wider_value() {
        const I16: &[Col] = &[req("epoch", Kind::I16)];
        let dir = tempfile::tempdir().unwrap();
        let limits = Limits {
            rows: 10,
            bytes: 1 << 20,
        };
        let mut t =
            Table::create(&dir.path().join("t.parquet"), I16, limits, PageCodec::None).unwrap();
        assert!(t.push(&[Val::I32(i32::from(i16::MIN))]).is_ok());
        assert!(t.push(&[Val::I32(i32::from(i16::MAX) + 1)]).is_err());
        assert_eq!(t.finish().unwrap(), 1);
    }

    /// A dictionary column keeps each row's value, nulls among them, over
    /// row groups whose values differ.
    #[test]
    fn a_dictionary_column_keeps_its_values() {
        const D: &[Col] = &[req("n", Kind::I64), opt_dict("what")];
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("d.parquet");
        let limits = Limits {
            rows: 3,
            bytes: 1 << 20,
        };
        let mut t = Table::create(&path, D, limits, PageCodec::Zstd).unwrap();
        let want = [None, Some("a"), Some("a"), Some("b"), None, Some("a"), None];
        for (i, w) in want.iter().enumerate() {
            t.push(&[Val::I64(i as i64), w.map_or(Val::Null, Val::Str)])
                .unwrap();
        }
        assert_eq!(t.finish().unwrap(), want.len() as u64);
        let file = std::fs::File::open(&path).unwrap();
        let reader = parquet::file::reader::SerializedFileReader::new(file).unwrap();
        use parquet::file::reader::FileReader;
        use parquet::record::RowAccessor;
        assert_eq!(reader.metadata().num_row_groups(), 3);
        let got: Vec<Option<String>> = reader
            .get_row_iter(None)
            .unwrap()
            .map(|r| {
                let r = r.unwrap();
                r.get_string(1).ok().cloned()
            })
            .collect();
        let want: Vec<Option<String>> = want.iter().map(|w| w.map(String::from)).collect();
        assert_eq!(got, want);
    }
}
