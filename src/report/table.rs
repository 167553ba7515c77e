//! Aligned tables (comfy-table) and CSV, with no terminal detection, so the
//! same rows always render to the same bytes.
//!
//! Every cell is data from outside (group names, topics, client ids): in a
//! table each control character is shown escaped (`\x1b`, `\n`), so a name
//! can neither colour the terminal nor forge a row; widths are display
//! widths, so wide characters (CJK, emoji) keep the columns aligned. CSV
//! quotes per RFC 4180 and carries the exact text.

use comfy_table::{CellAlignment, ColumnConstraint, ContentArrangement, Table, Width};
use unicode_width::UnicodeWidthStr;

/// `s` with every control character escaped (`\n`, `\t`, `\x1b`, `\u{85}`),
/// and backslashes doubled so the escapes cannot be forged.
pub fn escape_cell(s: &str) -> std::borrow::Cow<'_, str> {
    if !s.chars().any(|c| c.is_control() || c == '\\') {
        return std::borrow::Cow::Borrowed(s);
    }
    let mut out = String::with_capacity(s.len() + 8);
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x80 && c.is_control() => {
                out.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if c.is_control() => out.push_str(&format!("\\u{{{:x}}}", c as u32)),
            c => out.push(c),
        }
    }
    std::borrow::Cow::Owned(out)
}

/// A cell for an optional value: the value, or `-`.
pub fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

/// Whether every cell of column `i` is a decimal number or `-` (a numeric
/// column, right-aligned). Only digits, one point and a sign: a name like
/// `inf` or `NaN` stays text.
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

/// Render `rows` under `headers`: columns separated by two spaces, padded to
/// the widest cell by display width (integer columns right-aligned), cells
/// escaped, no trailing spaces, never wrapped.
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut table = Table::new();
    table
        .load_style(comfy_table::presets::NOTHING)
        .set_content_arrangement(ContentArrangement::Disabled)
        .set_header(headers.iter().map(|h| h.to_string()));
    for row in rows {
        table.add_row(row.iter().map(|c| escape_cell(c).into_owned()));
    }
    let last = headers.len().saturating_sub(1);
    for (i, column) in table.column_iter_mut().enumerate() {
        let gap = if i == last { 0 } else { 2 };
        column.set_padding((0, gap));
        if numeric_column(rows, i) {
            column.set_cell_alignment(CellAlignment::Right);
        }
        // Fix each column at its widest cell so nothing is ever wrapped.
        let width = std::iter::once(headers.get(i).map_or(0, |h| h.width()))
            .chain(
                rows.iter()
                    .map(|r| r.get(i).map_or(0, |c| escape_cell(c).width())),
            )
            .max()
            .unwrap_or(0)
            + gap as usize;
        column.set_constraint(ColumnConstraint::Absolute(Width::Fixed(
            u16::try_from(width).unwrap_or(u16::MAX),
        )));
    }
    let mut out = String::new();
    for line in table.lines() {
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

/// One CSV field, quoted when it needs to be (RFC 4180).
pub fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// Render rows as CSV with a header line.
pub fn render_csv(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut out = headers.join(",");
    out.push('\n');
    for row in rows {
        out.push_str(
            &row.iter()
                .map(|c| csv_field(c))
                .collect::<Vec<_>>()
                .join(","),
        );
        out.push('\n');
    }
    out
}

/// Render as an aligned table, or as CSV whose header names are the table's
/// in snake_case (`LOG-END` → `log_end`).
pub fn render_table_or_csv(csv: bool, headers: &[&str], rows: &[Vec<String>]) -> String {
    if csv {
        let names: Vec<String> = headers
            .iter()
            .map(|h| h.to_lowercase().replace('-', "_"))
            .collect();
        let names: Vec<&str> = names.iter().map(String::as_str).collect();
        render_csv(&names, rows)
    } else {
        render(headers, rows)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hostile_names_are_escaped_and_wide_ones_aligned() {
        let rows = vec![
            vec!["evil\x1b[31mRED\nfake-row".to_string(), "1".to_string()],
            vec!["注文-🍣".to_string(), "22".to_string()],
            vec!["inf".to_string(), "3".to_string()],
            vec!["tab\there\\".to_string(), "4".to_string()],
        ];
        let out = render(&["GROUP", "OFFSET"], &rows);
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
            render(&["GROUP", "OFFSET"], &rows),
            "GROUP    OFFSET\nkitchen       7\na,b          10\n"
        );
        assert_eq!(
            render_csv(&["group", "offset"], &rows),
            "group,offset\nkitchen,7\n\"a,b\",10\n"
        );
    }
}
