//! One whole file's annotated layout, read from disk: its first bytes and
//! the fields that start in them, for `report --layout`'s hex view. A file
//! beside a log ([`FileKind`]) is annotated by [`sidecar::layout`], a log
//! segment (or a KRaft snapshot) batch by batch by [`batch_layout`].

use std::path::Path;

use super::sidecar::{self, FileKind};
use super::{batch_layout, Topic};
use crate::error::{Error, Result};
use crate::format::annotation::{LayoutDoc, LayoutField};
use crate::format::{BatchView, DecodeLimits, Entry};
use crate::log::walk::Policy;
use crate::log::{files, parse_segment_name, Partition};

/// The most bytes of a file beside a log read for its layout (it is
/// annotated whole, its fields then cut to the bytes shown).
pub const MAX_FILE: u64 = 1 << 30;

/// The layout of the file at `path`, its first `max_bytes` bytes; a log
/// segment's records decoded as `topic`'s. A part that does not decode is
/// one of the document's problems, not an error.
pub fn of_file(path: &Path, topic: Topic, max_bytes: u64) -> Result<LayoutDoc> {
    let (bytes, file_len) = files::read_head(path, max_bytes)?;
    let mut doc = LayoutDoc {
        file: path.display().to_string(),
        file_len,
        bytes,
        ..LayoutDoc::default()
    };
    let name = path.file_name().and_then(|n| n.to_str());
    match name.and_then(FileKind::of) {
        Some(kind) => file_fields(&mut doc, kind, path, max_bytes)?,
        None => segment_fields(&mut doc, path, name, topic, max_bytes)?,
    }
    Ok(doc)
}

/// The fields of a file that is not a log segment (an index, a snapshot,
/// a checkpoint, ...) that start in its first `max_bytes` bytes, and where
/// it stops decoding.
fn file_fields(doc: &mut LayoutDoc, kind: FileKind, path: &Path, max_bytes: u64) -> Result<()> {
    doc.describe = kind.describe();
    let whole = files::read_regular(path, MAX_FILE)?
        .ok_or_else(|| Error::layout(path, "does not exist"))?;
    let mut fields = Vec::new();
    let problem = sidecar::layout(kind, &whole, &mut |f| {
        if f.position < max_bytes {
            fields.push(LayoutField {
                position: Some(f.position),
                decompressed_position: None,
                len: f.bytes.len() as u64,
                depth: f.depth,
                name: f.field,
                // As dump-segment shows it: batch_layout's values come
                // escaped, these raw.
                value: crate::format::escape::escape_cell(&f.value).into_owned(),
            });
        }
    });
    doc.fields = fields;
    doc.problems.extend(problem);
    Ok(())
}

/// The batches of a log segment that start in its first `max_bytes`
/// bytes, each a line of its own then its fields, and the damage the walk
/// stepped over.
fn segment_fields(
    doc: &mut LayoutDoc,
    path: &Path,
    name: Option<&str>,
    topic: Topic,
    max_bytes: u64,
) -> Result<()> {
    let base = name.and_then(parse_segment_name).map(|(b, _)| b);
    doc.describe = format!(
        "log segment{}: record batches (RecordBatch v2: a 61-byte header, then the records; legacy messages of magic 0 and 1 are shown whole)",
        base.map_or_else(String::new, |b| format!(" at base offset {b}"))
    );
    let one = Partition::single_file(path, base.unwrap_or(0));
    let mut walk = one.walk(Policy::HEADERS);
    let limits = DecodeLimits::default();
    while let Some(w) = walk.next_entry()? {
        let entry = w.entry;
        if entry.position() >= max_bytes {
            break;
        }
        match entry {
            Entry::V2(batch) => batch_fields(doc, &batch, topic, limits),
            Entry::Legacy(m) => doc.fields.push(LayoutField {
                position: Some(m.position),
                decompressed_position: None,
                len: entry.size(),
                depth: 0,
                name: "legacy message (magic 0 or 1)".into(),
                value: format!("offset {}, not annotated field by field", m.offset),
            }),
        }
    }
    for d in walk.take_damage() {
        doc.problems
            .push(format!("position {}: {}", d.position, d.error));
    }
    Ok(())
}

/// One v2 batch: a line for the whole batch, then [`batch_layout`]'s
/// fields (decompressed ones by their position in the decompressed
/// records), and where it stops decoding.
fn batch_fields(doc: &mut LayoutDoc, batch: &BatchView<'_>, topic: Topic, limits: DecodeLimits) {
    let h = batch.header;
    doc.fields.push(LayoutField {
        position: Some(batch.position),
        decompressed_position: None,
        len: 0,
        depth: 0,
        name: format!(
            "batch at position {}, offsets {}..={}",
            batch.position,
            h.base_offset,
            h.last_offset()
        ),
        value: format!("{} bytes", batch.bytes().len()),
    });
    let fields = &mut doc.fields;
    let err = batch_layout(batch, topic, limits, &mut |f| {
        fields.push(LayoutField {
            position: (!f.decompressed).then_some(f.position),
            decompressed_position: f.decompressed.then_some(f.position),
            len: f.bytes.len() as u64,
            depth: f.depth,
            name: f.name.clone(),
            value: f.value.clone(),
        })
    });
    if let Some(e) = err {
        doc.problems.push(e.to_string());
    }
}
