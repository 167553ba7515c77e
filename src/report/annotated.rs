//! Text rendering of `dump-segment --layout`: one line per field,
//! `position  raw bytes  field  value`.

use std::io::Write;

use kaen_log::format::annotation::{Field, FileField};

const HEX_SHOWN: usize = 12;

fn hex(b: &[u8]) -> String {
    let mut s: String = b
        .iter()
        .take(HEX_SHOWN)
        .map(|x| format!("{x:02x} "))
        .collect();
    s.pop();
    if b.len() > HEX_SHOWN {
        s.push_str(&format!(" ..({} bytes)", b.len()));
    }
    s
}

/// Write one field of a batch.
pub fn write(out: &mut impl Write, f: &Field<'_>) -> std::io::Result<()> {
    let indent = "  ".repeat(usize::from(f.depth));
    let pos = if f.decompressed {
        format!("+{}", f.position)
    } else {
        f.position.to_string()
    };
    if f.bytes.is_empty() {
        writeln!(out, "{pos:>10}  {indent}-- {} {}", f.name, f.value)
    } else {
        writeln!(
            out,
            "{pos:>10}  {:<50}  {indent}{:<32} {}",
            hex(f.bytes),
            f.name,
            f.value
        )
    }
}

/// Write the fields of a file beside a log (`.index`, `.snapshot`,
/// checkpoints, ...), one line each, indented by `indent`.
pub fn write_file_fields(
    out: &mut impl Write,
    indent: &str,
    fields: &[FileField],
) -> std::io::Result<()> {
    for f in fields {
        let nest = "  ".repeat(usize::from(f.depth));
        let value = crate::report::table::escape_cell(&f.value);
        if f.bytes.is_empty() {
            if value.is_empty() {
                writeln!(out, "{indent}{:>10}  {nest}-- {}", f.position, f.field)?;
            } else {
                writeln!(
                    out,
                    "{indent}{:>10}  {nest}-- {}: {value}",
                    f.position, f.field
                )?;
            }
        } else {
            writeln!(
                out,
                "{indent}{:>10}  {:<50}  {nest}{:<32} {value}",
                f.position,
                hex(&f.bytes),
                crate::report::table::escape_cell(&f.field),
            )?;
        }
    }
    Ok(())
}
