//! Aligned tables (comfy-table) and CSV. Off a terminal (and with `--wide`)
//! tables are never wrapped, so the same rows always render to the same
//! bytes; on a terminal they are fitted to its width.
//!
//! Every cell is data from outside (group names, topics, client ids): in a
//! table each control and format character is shown escaped (`\x1b`, `\n`,
//! `\u{202e}`: `kaen_log::format::escape`), so a name can neither colour the
//! terminal, reorder what is read nor forge a row; a cell longer than a
//! name ever is shown bounded (its start, length and hash); widths are display
//! widths, so wide characters (CJK, emoji) keep the columns aligned. CSV
//! is written by the csv crate, quoted per RFC 4180 ([`csv_writer`]); its
//! cells are escaped the same way and made inert as formulas, or exact
//! with `--csv-cells raw` (`escape::csv_cell`).

use std::borrow::Cow;
use std::io;

use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table as Table_, Width};
use schemars::JsonSchema;
use serde::Serialize;
use unicode_width::UnicodeWidthStr;

pub use kaen_log::format::escape::escape_cell;
use kaen_log::format::escape::{csv_cell, CsvCells};

/// Whether every byte of `s` is printable ASCII (space to `~`).
fn plain_ascii(s: &str) -> bool {
    s.bytes().all(|b| (0x20..0x7f).contains(&b))
}

/// The display width of `s`: its length when it is printable ASCII (one
/// column a byte), else as Unicode says.
fn display_width(s: &str) -> usize {
    if plain_ascii(s) {
        s.len()
    } else {
        s.width()
    }
}

/// The width text tables are fitted to: `Some` on a terminal without
/// `--wide` (long cells wrap), `None` otherwise, when tables are never
/// wrapped, so the same rows always render to the same bytes. It travels
/// from the [`Output`](crate::report::Output) to each rendering.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Fit(pub Option<u16>);

impl Fit {
    /// The fit of a table shown indented by `columns`: that much narrower.
    pub fn indented(self, columns: u16) -> Fit {
        Fit(self.0.map(|w| w.saturating_sub(columns)))
    }
}

/// One column as a table holds it: its field name (CSV header, JSON key),
/// its text header, whether its type is a number (right-aligned), and, for
/// an instant in epoch milliseconds, how text shows it (CSV keeps the
/// milliseconds).
#[derive(Debug, Clone)]
struct Heading {
    field: String,
    header: String,
    numeric: bool,
    time: Option<crate::report::TimeFormat>,
}

/// Rows of one row type, ready for text or CSV: its columns from the
/// type's fields ([`Table::of`], [`Table::flat`]) or listed ([`Column`]).
#[derive(Debug, Clone, Default)]
pub struct Table {
    columns: Vec<Heading>,
    rows: Vec<Vec<Option<String>>>,
    show_empty: bool,
}

/// Whether a JSON Schema property's type is a number.
fn numeric_schema(prop: &serde_json::Value) -> bool {
    let is_number = |t: &serde_json::Value| matches!(t.as_str(), Some("integer" | "number"));
    match prop.get("type") {
        Some(serde_json::Value::Array(types)) => types.iter().any(is_number),
        Some(t) => is_number(t),
        None => false,
    }
}

/// `schema` with its `$ref` (to the root's `$defs`) followed, and an
/// optional value's (`anyOf`/`oneOf` of it and null, or `allOf` of one)
/// schema unwrapped.
fn resolved<'a>(
    root: &'a serde_json::Value,
    schema: &'a serde_json::Value,
) -> &'a serde_json::Value {
    let mut s = schema;
    for _ in 0..16 {
        if let Some(name) = s
            .get("$ref")
            .and_then(|r| r.as_str())
            .and_then(|r| r.strip_prefix("#/$defs/"))
        {
            match root.get("$defs").and_then(|d| d.get(name)) {
                Some(def) => s = def,
                None => return s,
            }
            continue;
        }
        let alternatives = ["anyOf", "oneOf", "allOf"]
            .iter()
            .find_map(|k| s.get(*k).and_then(|v| v.as_array()));
        let non_null: Vec<&serde_json::Value> = alternatives
            .into_iter()
            .flatten()
            .filter(|a| a.get("type").and_then(|t| t.as_str()) != Some("null"))
            .collect();
        match non_null.as_slice() {
            [one] if s.get("properties").is_none() => s = one,
            _ => return s,
        }
    }
    s
}

/// Each column of [`Table::flat`] for rows of `R`: its path of JSON keys,
/// and whether it holds numbers.
fn flat_paths<R: JsonSchema>() -> Vec<(Vec<String>, bool)> {
    let schema = schemars::schema_for!(R);
    let root = schema.as_value();
    let mut columns = Vec::new();
    flat_columns(root, root, &mut Vec::new(), &mut columns);
    columns
}

/// The leaf columns of `schema` under `path`: an object's properties, in
/// order, each nested object's own (a map without declared properties, a
/// list or a scalar is one column), with whether each is a number.
fn flat_columns(
    root: &serde_json::Value,
    schema: &serde_json::Value,
    path: &mut Vec<String>,
    out: &mut Vec<(Vec<String>, bool)>,
) {
    let s = resolved(root, schema);
    match s.get("properties").and_then(|p| p.as_object()) {
        Some(props) if path.len() < 8 => {
            for (name, prop) in props {
                path.push(name.clone());
                flat_columns(root, prop, path, out);
                path.pop();
            }
        }
        _ => out.push((path.clone(), numeric_schema(s))),
    }
}

/// One column of a table of `R` rows: its field name (the CSV header; the
/// text header is it upper-cased with dashes), whether it holds numbers
/// (right-aligned in text) and the cell a row gives it (`None`: null, `-`
/// in text, an empty CSV field). A row type's columns are listed in one
/// place, next to the type, and each format picks from that list: a
/// column added there shows in text and CSV alike.
pub struct Column<R: ?Sized> {
    field: &'static str,
    numeric: bool,
    cell: fn(&R) -> Option<String>,
}

impl<R: ?Sized> Column<R> {
    /// A column of numbers.
    pub const fn number(field: &'static str, cell: fn(&R) -> Option<String>) -> Self {
        Column {
            field,
            numeric: true,
            cell,
        }
    }

    /// A column of text.
    pub const fn text(field: &'static str, cell: fn(&R) -> Option<String>) -> Self {
        Column {
            field,
            numeric: false,
            cell,
        }
    }
}

/// A value as a cell, as a table of its JSON shows it: null is `None`, a
/// string is itself, anything else its compact JSON (a list is `[1,2]`).
pub fn cell<T: Serialize + ?Sized>(value: &T) -> Option<String> {
    super::cells::value_cell(value)
}

impl Table {
    /// A table whose columns are the fields of `R` in declaration order
    /// (numeric by their type), one row per element of `rows`. Text headers
    /// are the field names upper-cased with dashes (`log_end_offset` →
    /// `LOG-END-OFFSET`).
    pub fn of<R: Serialize + JsonSchema>(rows: &[R]) -> Table {
        let schema = schemars::schema_for!(R);
        let columns: Vec<Heading> = schema
            .get("properties")
            .and_then(|p| p.as_object())
            .map(|props| {
                props
                    .iter()
                    .map(|(name, prop)| Heading {
                        field: name.clone(),
                        header: name.to_uppercase().replace('_', "-"),
                        numeric: numeric_schema(prop),
                        time: None,
                    })
                    .collect()
            })
            .unwrap_or_default();
        let fields: Vec<&str> = columns.iter().map(|c| c.field.as_str()).collect();
        let rows = rows
            .iter()
            .map(|r| super::cells::row_cells(r, &fields))
            .collect();
        Table {
            columns,
            rows,
            show_empty: true,
        }
    }

    /// The CSV table of JSON rows: one row per element of `rows`, its
    /// columns the fields of `R` as its JSON has them, a nested object's
    /// fields (an optional one's too) as `parent_child`, a list as its
    /// JSON. The header is fixed by the type, whatever the rows hold: a
    /// nested object that is null, or a field left out, is an empty cell.
    pub fn flat<R: Serialize + JsonSchema>(rows: &[R]) -> Table {
        let columns = flat_paths::<R>();
        let rows = rows
            .iter()
            .map(|r| {
                let value = serde_json::to_value(r).unwrap_or(serde_json::Value::Null);
                columns
                    .iter()
                    .map(|(path, _)| {
                        path.iter()
                            .try_fold(&value, |v, key| v.get(key))
                            .and_then(super::cells::cell_text)
                    })
                    .collect()
            })
            .collect();
        Table {
            columns: columns
                .into_iter()
                .map(|(path, numeric)| {
                    let field = path.join("_");
                    Heading {
                        header: field.to_uppercase().replace('_', "-"),
                        field,
                        numeric,
                        time: None,
                    }
                })
                .collect(),
            rows,
            show_empty: true,
        }
    }

    /// A table of `rows` under `columns`, in their order.
    pub fn listed<R>(rows: impl IntoIterator<Item = R>, columns: &[Column<R>]) -> Table {
        Table {
            columns: columns
                .iter()
                .map(|c| Heading {
                    field: c.field.to_string(),
                    header: c.field.to_uppercase().replace('_', "-"),
                    numeric: c.numeric,
                    time: None,
                })
                .collect(),
            rows: rows
                .into_iter()
                .map(|r| columns.iter().map(|c| (c.cell)(&r)).collect())
                .collect(),
            show_empty: true,
        }
    }

    /// This table's columns, then `right`'s, row by row (a row's context,
    /// such as its directory, beside the row's own fields).
    pub fn beside(mut self, right: Table) -> Table {
        self.columns.extend(right.columns);
        for (row, more) in self.rows.iter_mut().zip(right.rows) {
            row.extend(more);
        }
        self
    }

    /// The column names [`Table::flat`] gives the rows of `R`.
    pub fn flat_fields<R: JsonSchema>() -> Vec<String> {
        flat_paths::<R>()
            .into_iter()
            .map(|(path, _)| path.join("_"))
            .collect()
    }

    /// Leave the table out of text output when it has no rows.
    pub fn hide_empty(mut self) -> Self {
        self.show_empty = false;
        self
    }

    /// The text header of `field`.
    pub fn header(mut self, field: &str, header: &str) -> Self {
        if let Some(c) = self.columns.iter_mut().find(|c| c.field == field) {
            c.header = header.to_string();
        }
        self
    }

    /// Show the epoch-millisecond `fields` in text as `format` says
    /// (ISO-8601 in UTC, or as they are); CSV and JSON always carry the
    /// milliseconds.
    pub fn times(mut self, fields: &[&str], format: crate::report::TimeFormat) -> Self {
        for c in &mut self.columns {
            if fields.contains(&c.field.as_str()) {
                c.time = Some(format);
            }
        }
        self
    }

    /// Keep only `fields`, in that order.
    pub fn only(mut self, fields: &[&str]) -> Self {
        let picks: Vec<usize> = fields
            .iter()
            .filter_map(|f| self.columns.iter().position(|c| c.field == *f))
            .collect();
        self.columns = picks.iter().map(|&i| self.columns[i].clone()).collect();
        // Each cell is moved to its new place, unless a field is named twice.
        let once = picks
            .iter()
            .enumerate()
            .all(|(n, i)| !picks[..n].contains(i));
        for row in &mut self.rows {
            *row = picks
                .iter()
                .map(|&i| match row.get_mut(i) {
                    Some(cell) if once => cell.take(),
                    cell => cell.cloned().flatten(),
                })
                .collect();
        }
        self
    }

    /// Keep only the fields of `columns`, in that order, each under its
    /// text header: `(field, header)`.
    pub fn pick(self, columns: &[(&str, &str)]) -> Self {
        let fields: Vec<&str> = columns.iter().map(|(f, _)| *f).collect();
        columns
            .iter()
            .fold(self.only(&fields), |t, (field, header)| {
                t.header(field, header)
            })
    }

    /// Leave out `field` (a column that only says something in some tables).
    pub fn without(self, field: &str) -> Self {
        let keep: Vec<String> = self
            .columns
            .iter()
            .filter(|c| c.field != field)
            .map(|c| c.field.clone())
            .collect();
        let keep: Vec<&str> = keep.iter().map(String::as_str).collect();
        self.only(&keep)
    }

    /// Whether it has no rows.
    pub fn is_empty(&self) -> bool {
        self.rows.is_empty()
    }

    /// Whether text output shows it when it has no rows.
    pub fn show_empty(&self) -> bool {
        self.show_empty
    }

    /// The aligned text table (null cells as `-`).
    pub fn render(&self, fit: Fit) -> String {
        use crate::report::TimeFormat;
        let iso = |c: &Heading| c.time == Some(TimeFormat::Iso);
        // An ISO time under a `...-MS` header would read wrong.
        let headers: Vec<&str> = self
            .columns
            .iter()
            .map(|c| match c.header.strip_suffix("-MS") {
                Some(h) if iso(c) => h,
                _ => c.header.as_str(),
            })
            .collect();
        let numeric: Vec<bool> = self.columns.iter().map(|c| c.numeric && !iso(c)).collect();
        if !self.columns.iter().any(iso) {
            return render_aligned(&headers, &self.rows, &numeric, fit);
        }
        let rows: Vec<Vec<Option<String>>> = self
            .rows
            .iter()
            .map(|row| {
                row.iter()
                    .zip(&self.columns)
                    .map(|(cell, c)| match (cell, c.time) {
                        (Some(cell), Some(format)) => Some(
                            cell.parse::<i64>()
                                .map_or_else(|_| cell.clone(), |ms| format.show(ms)),
                        ),
                        (cell, _) => cell.clone(),
                    })
                    .collect()
            })
            .collect();
        render_aligned(&headers, &rows, &numeric, fit)
    }

    /// Write the table as CSV to `out`: field names as the header, null
    /// as an empty field, each cell as `cells` says.
    pub fn write_csv(&self, out: impl io::Write, cells: CsvCells) -> io::Result<()> {
        let mut csv = csv_writer(out);
        write_csv_record(
            &mut csv,
            self.columns.iter().map(|c| Cow::Borrowed(c.field.as_str())),
        )?;
        for row in &self.rows {
            write_csv_row(&mut csv, row, cells)?;
        }
        csv.flush()
    }
}

/// Whether every cell of column `i` is a decimal number or `-`: used only
/// by [`render`], for rows that come without types.
fn numeric_column(rows: &[Vec<String>], i: usize) -> bool {
    let number = |c: &str| {
        let digits = c.strip_prefix('-').unwrap_or(c);
        !digits.is_empty()
            && digits.bytes().filter(|&b| b == b'.').count() <= 1
            && digits.bytes().all(|b| b.is_ascii_digit() || b == b'.')
            && digits.bytes().any(|b| b.is_ascii_digit())
    };
    !rows.is_empty()
        && rows
            .iter()
            .all(|r| r.get(i).is_some_and(|c| c == "-" || number(c)))
}

/// Render untyped `rows` under `headers` (numeric columns guessed from the
/// cells; typed rows go through [`Table`]).
pub fn render(headers: &[&str], rows: &[Vec<String>], fit: Fit) -> String {
    let numeric: Vec<bool> = (0..headers.len())
        .map(|i| numeric_column(rows, i))
        .collect();
    render_aligned(headers, rows, &numeric, fit)
}

/// A cell as a text table shows it: bounded (a 32 KB group id is its
/// first characters, its length and its hash:
/// [`bounded`](kaen_log::format::escape::bounded)), then escaped. CSV keeps
/// the whole cell: that is data.
fn shown(cell: &str) -> Cow<'_, str> {
    match kaen_log::format::escape::bounded(cell) {
        Cow::Borrowed(b) => escape_cell(b),
        Cow::Owned(o) => Cow::Owned(escape_cell(&o).into_owned()),
    }
}

/// A cell as text shows it: a null one as `-`.
trait CellText {
    fn text(&self) -> &str;

    /// The cell escaped for a terminal ([`shown`]).
    fn shown(&self) -> Cow<'_, str> {
        shown(self.text())
    }
}

/// A cell already escaped for a terminal (and perhaps cut short).
struct Escaped(String);

impl CellText for Escaped {
    fn text(&self) -> &str {
        &self.0
    }

    fn shown(&self) -> Cow<'_, str> {
        Cow::Borrowed(&self.0)
    }
}

impl CellText for String {
    fn text(&self) -> &str {
        self
    }
}

impl CellText for Option<String> {
    fn text(&self) -> &str {
        self.as_deref().unwrap_or("-")
    }
}

/// Columns separated by two spaces, padded by display width (numeric
/// columns right-aligned), cells escaped, no trailing spaces; never
/// wrapped unless `fit` gives a width.
///
/// Unfitted, each column is fixed at its widest cell and every line is its
/// cells padded to those widths: the lines comfy-table lays out (a test
/// holds the two together) without its cost per cell, which was most of
/// replay-offsets' time on 100,000 offsets and 60 MiB for a table of
/// 10,000 partitions. Fitted to a terminal, comfy-table shares the width
/// out and wraps.
fn render_aligned<C: CellText>(
    headers: &[&str],
    rows: &[Vec<C>],
    numeric: &[bool],
    fit: Fit,
) -> String {
    match fit.0 {
        None => pad_lines(headers, rows, numeric, &fixed_widths(headers, rows)),
        Some(width) => fitted_lines(headers, rows, numeric, width),
    }
}

/// The table within `width` columns, never broken inside a word: as it is
/// when it fits; else its widest columns narrowed, a header broken after
/// its hyphens (`COMMITTED-` over `OFFSET`), a text cell too long for its
/// column cut short with `…` (`--wide`, a pipe or another format shows it
/// whole; numbers are never cut); and when even that does not fit, one
/// record per block ([`record_lines`]).
fn fitted_lines<C: CellText>(
    headers: &[&str],
    rows: &[Vec<C>],
    numeric: &[bool],
    width: u16,
) -> String {
    let natural = fixed_widths(headers, rows);
    let width = usize::from(width);
    let total = |w: &[u16]| w.iter().map(|&x| usize::from(x)).sum::<usize>();
    if total(&natural) <= width {
        return pad_lines(headers, rows, numeric, &natural);
    }
    // How narrow each column may get: first with every cell whole (its
    // header broken after its hyphens), then with text cells cut (room for
    // one character and the ellipsis); numbers are never cut.
    let header_floor = |i: usize| {
        headers
            .get(i)
            .map_or(0, |h| hyphen_parts(h).map(display_width).max().unwrap_or(0))
    };
    let widest_cell = |i: usize| {
        rows.iter()
            .map(|r| r.get(i).map_or(0, |c| display_width(&c.shown())))
            .max()
            .unwrap_or(0)
    };
    let floor_with = |i: usize, cells: usize| {
        let w = u16::try_from(header_floor(i).max(cells) + gap(i, headers.len()));
        w.unwrap_or(u16::MAX).min(natural[i])
    };
    let whole: Vec<u16> = (0..natural.len())
        .map(|i| floor_with(i, widest_cell(i)))
        .collect();
    let floors: Vec<u16> = (0..natural.len())
        .map(|i| match numeric.get(i).copied().unwrap_or(false) {
            true => whole[i],
            false => floor_with(i, 2),
        })
        .collect();
    if total(&floors) > width {
        return record_lines(headers, rows);
    }
    let mut widths = natural.clone();
    for limit in [&whole, &floors] {
        while total(&widths) > width {
            // The widest column that can still narrow gives a column.
            let Some(i) = (0..widths.len())
                .filter(|&i| widths[i] > limit[i])
                .max_by_key(|&i| (widths[i], std::cmp::Reverse(i)))
            else {
                break;
            };
            widths[i] -= 1;
        }
    }
    let room = |i: usize| {
        usize::from(widths.get(i).copied().unwrap_or(0)).saturating_sub(gap(i, headers.len()))
    };
    let broken: Vec<String> = headers
        .iter()
        .enumerate()
        .map(|(i, h)| break_at_hyphens(h, room(i)))
        .collect();
    let broken: Vec<&str> = broken.iter().map(String::as_str).collect();
    let cut: Vec<Vec<Escaped>> = rows
        .iter()
        .map(|row| {
            row.iter()
                .enumerate()
                .map(|(i, c)| Escaped(cut_to(&c.shown(), room(i))))
                .collect()
        })
        .collect();
    comfy_lines(&broken, &cut, numeric, Ok(&widths))
}

/// A header's parts, each ending after a hyphen (`LOG-`, `END-`, `OFFSET`).
fn hyphen_parts(header: &str) -> impl Iterator<Item = &str> {
    header.split_inclusive('-')
}

/// `header` on as few lines as fit `room` columns, broken only after its
/// hyphens.
fn break_at_hyphens(header: &str, room: usize) -> String {
    let mut out = String::new();
    let mut line = 0;
    for part in hyphen_parts(header) {
        let w = display_width(part);
        if line > 0 && line + w > room {
            out.push('\n');
            line = 0;
        }
        out.push_str(part);
        line += w;
    }
    out
}

/// `cell` within `room` columns: whole when it fits, else its first
/// characters and `…`.
fn cut_to(cell: &str, room: usize) -> String {
    if display_width(cell) <= room {
        return cell.to_string();
    }
    let mut out = String::new();
    let mut used = 0;
    for ch in cell.chars() {
        let w = unicode_width::UnicodeWidthChar::width(ch).unwrap_or(0);
        if used + w + 1 > room {
            break;
        }
        out.push(ch);
        used += w;
    }
    out.push('…');
    out
}

/// One record per block, as `psql \x` shows a table too wide for the
/// terminal: a `-[ RECORD n ]` line, then each column's header and cell on
/// a line of their own, the cells aligned.
fn record_lines<C: CellText>(headers: &[&str], rows: &[Vec<C>]) -> String {
    let label = headers.iter().map(|h| display_width(h)).max().unwrap_or(0);
    let mut out = String::new();
    for (n, row) in rows.iter().enumerate() {
        out.push_str(&format!("-[ RECORD {} ]\n", n + 1));
        for (h, c) in headers.iter().zip(row) {
            out.push_str(h);
            push_spaces(&mut out, label - display_width(h) + 2);
            out.push_str(&c.shown());
            out.push('\n');
        }
    }
    out
}

/// The gap after column `i` of `n`: two spaces, none after the last.
fn gap(i: usize, n: usize) -> usize {
    if i + 1 == n {
        0
    } else {
        2
    }
}

/// Each column's widest cell (escaped, by display width), plus its gap.
fn fixed_widths<C: CellText>(headers: &[&str], rows: &[Vec<C>]) -> Vec<u16> {
    (0..headers.len())
        .map(|i| {
            let widest = std::iter::once(headers.get(i).map_or(0, |h| display_width(h)))
                .chain(
                    rows.iter()
                        .map(|r| r.get(i).map_or(0, |c| display_width(&c.shown()))),
                )
                .max()
                .unwrap_or(0);
            u16::try_from(widest + gap(i, headers.len())).unwrap_or(u16::MAX)
        })
        .collect()
}

/// The table laid out by comfy-table: columns fixed at `widths`, or shared
/// out within a terminal's width (`Err(width)`).
fn comfy_lines<C: CellText>(
    headers: &[&str],
    rows: &[Vec<C>],
    numeric: &[bool],
    widths: Result<&[u16], u16>,
) -> String {
    let mut table = Table_::new();
    table
        .load_style(comfy_table::presets::NOTHING)
        .set_header(headers.iter().map(|h| h.to_string()));
    for row in rows {
        table.add_row(row.iter().map(|c| c.shown().into_owned()));
    }
    match widths {
        Err(width) => {
            table
                .set_content_arrangement(ContentArrangement::Dynamic)
                .set_width(width);
        }
        Ok(_) => {
            table.set_content_arrangement(ContentArrangement::Disabled);
        }
    }
    for (i, column) in table.column_iter_mut().enumerate() {
        column.set_padding((0, gap(i, headers.len()) as u16));
        if numeric.get(i).copied().unwrap_or(false) {
            column.set_cell_alignment(CellAlignment::Right);
        }
        if let Some(w) = widths.ok().and_then(|w| w.get(i)) {
            column.set_constraint(ColumnConstraint::Absolute(Width::Fixed(*w)));
        }
    }
    let mut out = String::new();
    for line in table.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// Lines of cells padded to `widths` (gaps included), numeric columns
/// right-aligned, trailing spaces trimmed.
fn pad_lines<C: CellText>(
    headers: &[&str],
    rows: &[Vec<C>],
    numeric: &[bool],
    widths: &[u16],
) -> String {
    let mut out = String::new();
    let mut line = String::new();
    let mut push_line = |cells: &mut dyn Iterator<Item = Cow<'_, str>>| {
        line.clear();
        for (i, cell) in cells.enumerate() {
            let gap = gap(i, headers.len());
            let room = usize::from(widths.get(i).copied().unwrap_or(0)).saturating_sub(gap);
            let fill = room.saturating_sub(display_width(&cell));
            if numeric.get(i).copied().unwrap_or(false) {
                push_spaces(&mut line, fill);
                line.push_str(&cell);
            } else {
                line.push_str(&cell);
                push_spaces(&mut line, fill);
            }
            push_spaces(&mut line, gap);
        }
        out.push_str(line.trim_end());
        out.push('\n');
    };
    push_line(&mut headers.iter().map(|h| Cow::Borrowed(*h)));
    for row in rows {
        push_line(&mut row.iter().map(|c| c.shown()));
    }
    out
}

/// Append `n` spaces.
fn push_spaces(line: &mut String, mut n: usize) {
    const SPACES: &str = "                                ";
    while n > 0 {
        let k = n.min(SPACES.len());
        line.push_str(&SPACES[..k]);
        n -= k;
    }
}

/// A CSV writer over `out`, writing CSV as klog always has: RFC 4180
/// quoting (a field is quoted only when it holds a comma, a quote, CR or
/// LF, its quotes doubled), every line ended by `\n`, and no check that
/// rows have the same length (each caller writes rows of its columns).
pub(crate) fn csv_writer<W: io::Write>(out: W) -> csv::Writer<W> {
    csv::WriterBuilder::new()
        .quote_style(csv::QuoteStyle::Necessary)
        .terminator(csv::Terminator::Any(b'\n'))
        .flexible(true)
        .from_writer(out)
}

/// Write `cells` (null as an empty field) as one CSV line, each as `mode`
/// says ([`csv_cell`]).
pub(crate) fn write_csv_row<W: io::Write>(
    csv: &mut csv::Writer<W>,
    cells: &[Option<String>],
    mode: CsvCells,
) -> io::Result<()> {
    write_csv_record(
        csv,
        cells
            .iter()
            .map(|c| csv_cell(c.as_deref().unwrap_or(""), mode)),
    )
}

/// Write `fields` as one CSV line.
fn write_csv_record<'a, W: io::Write>(
    csv: &mut csv::Writer<W>,
    fields: impl IntoIterator<Item = Cow<'a, str>>,
) -> io::Result<()> {
    for field in fields {
        csv.write_field(field.as_bytes()).map_err(io_error)?;
    }
    // An empty record after the fields ends the line.
    csv.write_record(None::<&[u8]>).map_err(io_error)
}

/// The I/O error a CSV writer met, as it was: the csv crate's own
/// conversion makes every error `Other`, and a closed pipe must stay
/// `BrokenPipe` (it ends a run cleanly: `exit.rs`). Its writer meets no
/// other error: rows of any length are allowed and nothing is serialized.
fn io_error(e: csv::Error) -> io::Error {
    match e.into_kind() {
        csv::ErrorKind::Io(e) => e,
        other => io::Error::other(format!("CSV: {other:?}")),
    }
}

/// Leader epochs as text shows them: `EPOCH@START_OFFSET`, comma-separated
/// (`0@0,1@4`), the one notation of `info` and `summary`.
pub fn leader_epochs_text(epochs: impl IntoIterator<Item = (i32, i64)>) -> String {
    epochs
        .into_iter()
        .map(|(epoch, start)| format!("{epoch}@{start}"))
        .collect::<Vec<_>>()
        .join(",")
}

#[cfg(test)]
mod tests {
    use super::*;

    impl Table {
        /// The table's CSV.
        fn csv(&self, cells: CsvCells) -> String {
            let mut out = Vec::new();
            self.write_csv(&mut out, cells).unwrap();
            String::from_utf8(out).unwrap()
        }
    }

    #[test]
    fn time_columns_follow_the_time_format_in_text_and_stay_ms_in_csv() {
        use crate::report::TimeFormat;
        #[derive(Serialize, JsonSchema)]
        struct Row {
            name: &'static str,
            written_ms: Option<i64>,
        }
        let rows = [
            Row {
                name: "a",
                written_ms: Some(1_700_000_000_000),
            },
            Row {
                name: "b",
                written_ms: None,
            },
        ];
        let iso = Table::of(&rows).times(&["written_ms"], TimeFormat::Iso);
        assert_eq!(
            iso.render(super::Fit::default()),
            "NAME  WRITTEN\na     2023-11-14T22:13:20.000Z\nb     -\n"
        );
        let ms = Table::of(&rows).times(&["written_ms"], TimeFormat::Ms);
        assert_eq!(
            ms.render(super::Fit::default()),
            "NAME     WRITTEN-MS\na     1700000000000\nb                 -\n"
        );
        for t in [iso, ms] {
            assert_eq!(
                t.csv(CsvCells::Raw),
                "name,written_ms\na,1700000000000\nb,\n"
            );
        }
    }

    #[test]
    fn csv_quotes_only_what_rfc_4180_needs() {
        #[derive(Serialize, JsonSchema)]
        struct Row {
            a: &'static str,
            b: Option<&'static str>,
        }
        let rows = [
            ("sp ace", Some("\ttab")),
            ("q\"uote", Some("c,d")),
            ("cr\r", Some("lf\n")),
            ("#x 'y", None),
            ("", Some("")),
            ("é東", Some("\"")),
        ]
        .map(|(a, b)| Row { a, b });
        assert_eq!(
            Table::of(&rows).csv(CsvCells::Raw),
            "a,b\nsp ace,\ttab\n\"q\"\"uote\",\"c,d\"\n\"cr\r\",\"lf\n\"\n\
             #x 'y,\n,\né東,\"\"\"\"\n"
        );
        // A line of one empty field is written `""` (the csv crate's
        // writer does so a reader keeps the row; no table has one column).
        #[derive(Serialize, JsonSchema)]
        struct One {
            a: Option<&'static str>,
        }
        let one = [One { a: None }, One { a: Some("x") }];
        assert_eq!(Table::of(&one).csv(CsvCells::Raw), "a\n\"\"\nx\n");
    }

    #[test]
    fn listed_columns_render_as_the_row_struct_would() {
        #[derive(Serialize, JsonSchema)]
        struct Row {
            name: String,
            n: Option<i64>,
            tags: Vec<u8>,
            flag: bool,
        }
        let rows = [
            Row {
                name: "a,b".into(),
                n: Some(-7),
                tags: vec![1, 2],
                flag: true,
            },
            Row {
                name: "long name".into(),
                n: None,
                tags: Vec::new(),
                flag: false,
            },
        ];
        let columns: [Column<&Row>; 4] = [
            Column::text("name", |r| cell(&r.name)),
            Column::number("n", |r| cell(&r.n)),
            Column::text("tags", |r| cell(&r.tags)),
            Column::text("flag", |r| cell(&r.flag)),
        ];
        let listed = Table::listed(&rows, &columns);
        let of = Table::of(&rows);
        assert_eq!(listed.render(Fit(None)), of.render(Fit(None)));
        assert_eq!(listed.csv(CsvCells::Raw), of.csv(CsvCells::Raw));
        // A row's context beside it; text picks and renames.
        let context = [Column::text("dir", |d: &&str| cell(d))];
        let both = Table::listed(["d1", "d2"], &context).beside(listed);
        assert_eq!(
            both.csv(CsvCells::Raw),
            "dir,name,n,tags,flag\nd1,\"a,b\",-7,\"[1,2]\",true\nd2,long name,,[],false\n"
        );
        assert_eq!(
            both.pick(&[("n", "NUMBER"), ("dir", "DIR")])
                .render(Fit(None)),
            "NUMBER  DIR\n    -7  d1\n     -  d2\n"
        );
    }

    #[test]
    fn flat_tables_name_nested_fields_parent_child() {
        #[derive(Serialize, JsonSchema)]
        struct Span {
            min: Option<u64>,
            max: Option<u64>,
        }
        #[derive(Serialize, JsonSchema)]
        struct Head {
            file: String,
        }
        #[derive(Serialize, JsonSchema)]
        struct Row {
            #[serde(flatten)]
            head: Head,
            count: u32,
            span: Span,
            open: Option<Span>,
            list: Vec<Span>,
            #[serde(skip_serializing_if = "Option::is_none")]
            extra: Option<String>,
        }
        let rows = [
            Row {
                head: Head { file: "a".into() },
                count: 2,
                span: Span {
                    min: Some(1),
                    max: None,
                },
                open: None,
                list: vec![Span {
                    min: Some(3),
                    max: Some(4),
                }],
                extra: None,
            },
            Row {
                head: Head { file: "b,c".into() },
                count: 0,
                span: Span {
                    min: None,
                    max: Some(9),
                },
                open: Some(Span {
                    min: Some(5),
                    max: Some(6),
                }),
                list: Vec::new(),
                extra: Some("x".into()),
            },
        ];
        assert_eq!(
            Table::flat(&rows).csv(CsvCells::Raw),
            "file,count,span_min,span_max,open_min,open_max,list,extra\n\
             a,2,1,,,,\"[{\"\"min\"\":3,\"\"max\"\":4}]\",\n\
             \"b,c\",0,,9,5,6,[],x\n"
        );
        // An empty table still has its header.
        assert_eq!(
            Table::flat(&rows[..0]).csv(CsvCells::Raw),
            "file,count,span_min,span_max,open_min,open_max,list,extra\n"
        );
    }

    #[test]
    fn padded_lines_are_comfy_tables_on_random_cells() {
        let pieces = [
            "a",
            "Zz",
            "0",
            "12345",
            "-",
            "\u{1b}[31m",
            "\n",
            "\t",
            "\u{7f}",
            "\u{85}",
            "東京",
            "🦀",
            "é",
            "e\u{301}",
            " ",
            "\"q\"",
            ",",
            "\\",
            "\u{200b}",
            "",
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: usize| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % n as u64) as usize
        };
        for round in 0..200 {
            let cols = 1 + next(5);
            let headers: Vec<String> = (0..cols)
                .map(|i| format!("h{i}{}", "_".repeat(next(4))))
                .collect();
            let headers: Vec<&str> = headers.iter().map(String::as_str).collect();
            let numeric: Vec<bool> = (0..cols).map(|_| next(2) == 0).collect();
            let rows: Vec<Vec<String>> = (0..next(12))
                .map(|_| {
                    (0..cols)
                        .map(|_| (0..next(4)).map(|_| pieces[next(pieces.len())]).collect())
                        .collect()
                })
                .collect();
            let widths = fixed_widths(&headers, &rows);
            assert_eq!(
                pad_lines(&headers, &rows, &numeric, &widths),
                comfy_lines(&headers, &rows, &numeric, Ok(&widths)),
                "round {round}: {rows:?}"
            );
        }
    }

    #[test]
    fn ascii_shortcuts_agree_with_the_character_rules() {
        // Every character below U+00A0 (every ASCII control, DEL, the C1
        // controls, the backslash), alone and between letters.
        for c in (0u32..0xa0).filter_map(char::from_u32) {
            for s in [c.to_string(), format!("a{c}z")] {
                let escaped = escape_cell(&s);
                let needs = s.chars().any(|c| c.is_control() || c == '\\');
                assert_eq!(matches!(escaped, Cow::Owned(_)), needs, "{s:?}");
                assert!(!escaped.chars().any(char::is_control), "{s:?}");
                assert_eq!(display_width(&escaped), escaped.width(), "{s:?}");
                assert_eq!(display_width(&s), s.width(), "{s:?}");
            }
        }
    }

    #[test]
    fn hostile_names_are_escaped_and_wide_ones_aligned() {
        let rows = vec![
            vec!["evil\x1b[31mRED\nfake-row".to_string(), "1".to_string()],
            vec!["注文-🍣".to_string(), "22".to_string()],
            vec!["inf".to_string(), "3".to_string()],
            vec!["tab\there\\".to_string(), "4".to_string()],
        ];
        let out = render(&["GROUP", "OFFSET"], &rows, Fit::default());
        // The widest escaped name is 25 columns, then 2 spaces, then the
        // 6-column OFFSET: every line ends at display column 33, its number
        // right-aligned there.
        for line in out.lines() {
            assert_eq!(line.width(), 33, "{line:?}");
        }
        assert!(
            out.contains("evil\\x1b[31mRED\\nfake-row       1\n"),
            "{out}"
        );
        assert!(out.contains("tab\\there\\\\"), "{out}");
        assert!(!out.contains('\x1b'));
        assert_eq!(out.lines().count(), 5, "no forged row");
    }

    #[test]
    fn aligned_and_csv() {
        let rows = vec![
            vec!["kitchen".to_string(), "7".to_string()],
            vec!["a,b".to_string(), "10".to_string()],
        ];
        assert_eq!(
            render(&["GROUP", "OFFSET"], &rows, Fit::default()),
            "GROUP    OFFSET\nkitchen       7\na,b          10\n"
        );
        #[derive(Serialize, JsonSchema)]
        struct Row {
            group: String,
            offset: i64,
        }
        let typed =
            [("kitchen", 7), ("a,b", 10), ("say \"hi\"\n", -1)].map(|(group, offset)| Row {
                group: group.to_string(),
                offset,
            });
        // Columns picked, reordered and one named twice.
        assert_eq!(
            Table::of(&typed)
                .only(&["offset", "group"])
                .csv(CsvCells::Raw),
            "offset,group\n7,kitchen\n10,\"a,b\"\n-1,\"say \"\"hi\"\"\n\"\n"
        );
        // Escaped (the default): the line end shown, numbers as they are.
        assert_eq!(
            Table::of(&typed)
                .only(&["offset", "group"])
                .csv(CsvCells::Escape),
            "offset,group\n7,kitchen\n10,\"a,b\"\n-1,\"say \"\"hi\"\"\\n\"\n"
        );
        assert_eq!(
            Table::of(&typed[..1])
                .only(&["offset", "nope", "offset"])
                .csv(CsvCells::Raw),
            "offset,offset\n7,7\n"
        );
        assert_eq!(
            Table::of(&typed).csv(CsvCells::Raw),
            "group,offset\nkitchen,7\n\"a,b\",10\n\"say \"\"hi\"\"\n\",-1\n"
        );
    }
}
