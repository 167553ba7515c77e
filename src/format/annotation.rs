//! Annotated bytes: the fields of a file's layout as klog shows them,
//! each with its position, its bytes, its name with its wire type and its
//! decoded value. `inspect::layout` makes them (a batch's fields, the files
//! beside a log, a whole file for `report --layout`); `dump-segment
//! --layout`, `report --layout` and the demos show them.

use schemars::JsonSchema;
use serde::{Serialize, Serializer};

/// One annotated field of a batch, borrowing its bytes from the batch (or
/// the decompressed records).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Field<'a> {
    /// Absolute file position, or the position in the decompressed data when `decompressed`.
    pub position: u64,
    pub decompressed: bool,
    /// Nesting: 0 batch header, 1 record, 2 header / key / value fields.
    pub depth: u8,
    pub bytes: &'a [u8],
    pub name: String,
    pub value: String,
}

/// One annotated field or line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileField {
    /// Byte position in the file.
    pub position: u64,
    /// 0: the file's header or an entry's title, 1: a field of an entry.
    pub depth: u8,
    /// The field's bytes, in hex in JSON (empty for a note).
    #[serde(serialize_with = "hex")]
    #[schemars(with = "String")]
    pub bytes: Vec<u8>,
    pub field: String,
    pub value: String,
}

fn hex<S: Serializer>(b: &[u8], s: S) -> Result<S::Ok, S::Error> {
    let text: String = b.iter().map(|x| format!("{x:02x}")).collect();
    s.serialize_str(&text)
}

/// One file, field by field (`report --layout`): its first bytes and the
/// fields that start in them.
#[derive(Debug, Clone, Default)]
pub struct LayoutDoc {
    pub file: String,
    /// What the file is.
    pub describe: String,
    /// The bytes shown (the file's first `--max-bytes`).
    pub bytes: Vec<u8>,
    /// The file's length.
    pub file_len: u64,
    pub fields: Vec<LayoutField>,
    /// What did not decode, if anything.
    pub problems: Vec<String>,
}

/// One annotated field of a [`LayoutDoc`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LayoutField {
    /// File position (`None`: a field of decompressed records, at
    /// `decompressed_position` of the decompressed data).
    pub position: Option<u64>,
    pub decompressed_position: Option<u64>,
    pub len: u64,
    pub depth: u8,
    /// As `dump-segment --layout` names it: `name (type)`.
    pub name: String,
    /// The decoded value as text shows it (data escaped, strings quoted).
    pub value: String,
}

impl LayoutField {
    /// The name and the type, split at ` (`: `baseOffset (int64)` is
    /// `baseOffset` of type `int64`.
    pub fn name_and_type(&self) -> (&str, &str) {
        match self
            .name
            .rsplit_once(" (")
            .and_then(|(n, t)| Some((n, t.strip_suffix(')')?)))
        {
            Some(split) => split,
            None => (self.name.as_str(), ""),
        }
    }
}
