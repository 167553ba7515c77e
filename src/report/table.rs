//! Plain aligned tables and CSV, with no terminal detection, so the same
//! rows always render to the same bytes.

/// Render `rows` under `headers`: columns separated by two spaces, padded to
/// the widest cell (numbers right-aligned), no trailing spaces.
pub fn render(headers: &[&str], rows: &[Vec<String>]) -> String {
    let mut widths: Vec<usize> = headers.iter().map(|h| h.chars().count()).collect();
    for row in rows {
        for (w, cell) in widths.iter_mut().zip(row) {
            *w = (*w).max(cell.chars().count());
        }
    }
    let numeric: Vec<bool> = (0..headers.len())
        .map(|i| {
            !rows.is_empty()
                && rows.iter().all(|r| {
                    r.get(i)
                        .is_some_and(|c| c == "-" || c.parse::<f64>().is_ok())
                })
        })
        .collect();
    let mut out = String::new();
    let mut line = |cells: Vec<&str>| {
        let mut s = String::new();
        for (i, cell) in cells.iter().enumerate() {
            let w = widths.get(i).copied().unwrap_or(0);
            let pad = w.saturating_sub(cell.chars().count());
            if i > 0 {
                s.push_str("  ");
            }
            if numeric.get(i).copied().unwrap_or(false) {
                s.push_str(&" ".repeat(pad));
                s.push_str(cell);
            } else {
                s.push_str(cell);
                s.push_str(&" ".repeat(pad));
            }
        }
        out.push_str(s.trim_end());
        out.push('\n');
    };
    line(headers.to_vec());
    for row in rows {
        line(row.iter().map(String::as_str).collect());
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
