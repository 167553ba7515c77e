//! `klog report --layout FILE`: the annotated byte view of `dump-segment
//! --layout` as a hex view. Each byte belongs to the innermost field that
//! covers it; hovering a byte lights its field in the hex view and in the
//! table and shows its name, type and decoded value. Fields of compressed
//! records (positions in the decompressed data) are listed in the table
//! only.

use std::fmt::Write;

use kaen_log::format::annotation::LayoutDoc;

use super::{esc, esc_shown};

/// Bytes per hex row.
pub const ROW: usize = 16;

/// The field that owns each byte shown: the last field listed that
/// covers it (fields are listed outer first, so the innermost wins).
pub fn owners(doc: &LayoutDoc) -> Vec<Option<usize>> {
    let mut owner = vec![None; doc.bytes.len()];
    for (i, f) in doc.fields.iter().enumerate() {
        let Some(pos) = f.position else { continue };
        let start = usize::try_from(pos).unwrap_or(usize::MAX).min(owner.len());
        let end = usize::try_from(pos.saturating_add(f.len))
            .unwrap_or(usize::MAX)
            .min(owner.len());
        for o in &mut owner[start..end] {
            *o = Some(i);
        }
    }
    owner
}

/// The layout page.
pub fn render(doc: &LayoutDoc) -> String {
    let mut b = String::new();
    let _ = writeln!(
        b,
        "<header><h1>klog report --layout</h1><p class=\"sources\"><code>{}</code>: {}</p>\
         <p class=\"muted\">{} bytes{}; {} fields. Hover a byte: its field lights up here and in the table.</p></header>",
        esc(&doc.file),
        esc(&doc.describe),
        doc.file_len,
        if (doc.bytes.len() as u64) < doc.file_len {
            format!(", the first {} shown", doc.bytes.len())
        } else {
            String::new()
        },
        doc.fields.len()
    );
    for p in &doc.problems {
        let _ = writeln!(b, "<p class=\"problem\">{}</p>", esc(p));
    }
    let owner = owners(doc);
    b.push_str("<section id=\"hex\"><h2>Bytes</h2><div class=\"hexview\">");
    for (r, chunk) in doc.bytes.chunks(ROW).enumerate() {
        let base = r * ROW;
        let _ = write!(
            b,
            "<div class=\"hexrow\"><span class=\"addr\">{base:08x}</span>"
        );
        let mut i = 0;
        while i < chunk.len() {
            let o = owner[base + i];
            let mut j = i;
            while j < chunk.len() && owner[base + j] == o {
                j += 1;
            }
            let hex: Vec<String> = chunk[i..j].iter().map(|x| format!("{x:02x}")).collect();
            match o {
                Some(k) => {
                    let _ = write!(
                        b,
                        "<span class=\"f d{}\" data-f=\"{k}\">{}</span> ",
                        doc.fields[k].depth.min(2),
                        hex.join(" ")
                    );
                }
                None => {
                    let _ = write!(b, "<span class=\"u\">{}</span> ", hex.join(" "));
                }
            }
            i = j;
        }
        b.push_str("</div>");
    }
    b.push_str("</div></section>\n<section id=\"fields\"><h2>Fields</h2><table class=\"fields\"><thead><tr><th>position</th><th>bytes</th><th>field</th><th>type</th><th>value</th></tr></thead><tbody>");
    for (k, f) in doc.fields.iter().enumerate() {
        let (name, ty) = f.name_and_type();
        let at = match (f.position, f.decompressed_position) {
            (Some(p), _) => p.to_string(),
            (None, Some(p)) => format!("records+{p}"),
            (None, None) => "-".to_string(),
        };
        let tip = format!(
            "{name}{}{} = {}\n{} byte{} at {at}",
            if ty.is_empty() { "" } else { " : " },
            ty,
            f.value,
            f.len,
            if f.len == 1 { "" } else { "s" }
        );
        let _ = write!(
            b,
            "<tr id=\"f-{k}\" class=\"field d{}\" data-f=\"{k}\" data-position=\"{}\" data-len=\"{}\" data-name=\"{}\" data-tip=\"{}\">\
             <td class=\"num\">{at}</td><td class=\"num\">{}</td><td>{}</td><td><code>{}</code></td><td>{}</td></tr>",
            f.depth.min(2),
            f.position.map_or_else(String::new, |p| p.to_string()),
            f.len,
            esc(name),
            esc_shown(&tip),
            f.len,
            esc(name),
            esc(ty),
            esc_shown(&f.value)
        );
    }
    b.push_str("</tbody></table></section>\n");
    super::page::page(&format!("klog layout: {}", doc.file), &[], &b)
}

#[cfg(test)]
mod tests {
    use super::*;
    use kaen_log::format::annotation::LayoutField;

    fn field(position: u64, len: u64, depth: u8, name: &str) -> LayoutField {
        LayoutField {
            position: Some(position),
            decompressed_position: None,
            len,
            depth,
            name: name.into(),
            value: String::new(),
        }
    }

    #[test]
    fn each_byte_belongs_to_the_innermost_field() {
        let doc = LayoutDoc {
            bytes: vec![0; 20],
            fields: vec![
                field(0, 8, 0, "baseOffset (int64)"),
                field(8, 12, 0, "records (bytes)"),
                field(10, 2, 1, "key (bytes)"),
                LayoutField {
                    position: None,
                    decompressed_position: Some(0),
                    ..field(0, 4, 1, "inner (int32)")
                },
            ],
            ..LayoutDoc::default()
        };
        let o = owners(&doc);
        assert_eq!(o[0], Some(0));
        assert_eq!(o[7], Some(0));
        assert_eq!(o[8], Some(1));
        assert_eq!(o[10], Some(2));
        assert_eq!(o[11], Some(2));
        assert_eq!(o[12], Some(1));
        assert_eq!(o[19], Some(1));
        assert_eq!(
            doc.fields[0].name_and_type(),
            ("baseOffset", "int64"),
            "name and type split"
        );
        let page = render(&doc);
        // Row 0 is bytes 0..16: field 0's eight bytes in one span.
        assert!(page.contains("<span class=\"f d0\" data-f=\"0\">00 00 00 00 00 00 00 00</span>"));
        // Row 1 starts at 0x10, inside field 1.
        assert!(page.contains("<span class=\"addr\">00000010</span><span class=\"f d0\" data-f=\"1\">00 00 00 00</span>"));
    }
}
