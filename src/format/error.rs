//! Error types of the library.
//!
//! [`DecodeError`] is what every decoder returns: the absolute byte position
//! in the file where the defect was found and a [`DecodeErrorKind`] naming the
//! defect with the offending values. It is `Copy`, carries no path (the caller
//! knows which file it was reading) and never allocates, so decoding hostile
//! input cannot make error handling itself expensive.
//!
//! [`Error`] is the library's general error: I/O with the path it concerned,
//! a decode error with its path, or a refusal of the append path.

use std::fmt;
use std::path::PathBuf;

use super::codec::Compression;

/// A decoding defect at an absolute byte position.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DecodeError {
    /// Absolute byte position in the file. For a defect inside decompressed
    /// records this is the position of the compressed records section.
    pub offset: u64,
    /// Position inside the decompressed records of a compressed batch, when
    /// the defect lies there (the file has no byte to point at).
    pub decompressed_at: Option<u64>,
    /// What is wrong.
    pub kind: DecodeErrorKind,
}

/// The kinds of defect a decoder reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum DecodeErrorKind {
    /// A field needs more bytes than remain.
    UnexpectedEof { needed: u64, available: u64 },
    /// The stored CRC does not match the bytes it covers.
    CrcMismatch { stored: u32, computed: u32 },
    /// The magic byte is not one this reader knows.
    UnsupportedMagic(i8),
    /// A length field is negative where only -1 (null) or nothing is allowed.
    NegativeLength { field: &'static str, value: i64 },
    /// A varint runs past 5 bytes or a varlong past 10.
    VarintOverlong,
    /// The header's record count and the records present disagree.
    RecordCountMismatch { header: i32, actual: u64 },
    /// Bytes are left in the records section after the declared records.
    RecordsRemaining { count: i32, remaining: u64 },
    /// A record's length prefix disagrees with the bytes its fields took.
    RecordLengthMismatch { declared: i32, consumed: u64 },
    /// The entry size field is below the minimum any magic allows (14).
    SizeTooSmall { size: i32 },
    /// A magic-2 batch declares fewer bytes than its fixed header (61).
    BatchTooSmall { size: i64 },
    /// The entry's declared size runs past the end of the file.
    PastEndOfFile { declared: u64, available: u64 },
    /// An entry's declared size runs past the end of the file, yet valid
    /// batches resume later in it: damage in the middle, not a torn tail.
    LengthPastEof {
        declared: u64,
        available: u64,
        resumes_at: u64,
    },
    /// An entry's offsets run past `i64::MAX`.
    OffsetOverflow {
        base_offset: i64,
        last_offset_delta: i64,
    },
    /// The rest of the file is zero bytes (preallocation after a crash).
    TrailingZeros { len: u64 },
    /// Compression codec id 5..7.
    UnknownCompression(u8),
    /// The compressed records section does not decompress.
    Decompress {
        codec: Compression,
        reason: &'static str,
    },
    /// The decompressed records exceed the configured limit.
    DecompressedTooLarge { limit: u64 },
    /// The record count is negative.
    InvalidRecordCount(i32),
    /// A record's offset delta lies outside 0..=lastOffsetDelta.
    OffsetDeltaOutOfRange {
        offset_delta: i32,
        last_offset_delta: i32,
    },
    /// A record's offset delta is not above the previous record's.
    OffsetDeltaNotIncreasing { offset_delta: i32, previous: i32 },
    /// lastOffsetDelta is negative.
    NegativeLastOffsetDelta(i32),
    /// More records than lastOffsetDelta + 1 allows.
    TooManyRecords { count: i32, last_offset_delta: i32 },
    /// A batch's base offset is not above the previous batch's last offset.
    OffsetNotIncreasing {
        previous_last: i64,
        base_offset: i64,
    },
    /// A segment's first batch lies below the base offset in its file name.
    BelowSegmentBase { segment_base: i64, base_offset: i64 },
    /// An offset does not fit the segment's 32-bit relative offset range.
    RelativeOffsetOverflow { segment_base: i64, offset: i64 },
    /// A control record key or value is malformed.
    BadControlRecord { reason: &'static str },
    /// An index file's length is not a multiple of its entry size.
    IndexLength { len: u64, entry_size: u64 },
    /// A negative or out-of-range value in a field that has a range.
    ValueOutOfRange { field: &'static str, value: i64 },
    /// A string field is not valid UTF-8.
    InvalidUtf8 { field: &'static str },
    /// A schema version this reader does not know.
    UnknownVersion { schema: &'static str, version: i16 },
    /// A non-nullable field holds null.
    UnexpectedNull { field: &'static str },
    /// Bytes are left after a key or value was decoded.
    TrailingBytes { field: &'static str, remaining: u64 },
    /// A legacy compressed wrapper message breaks a rule of the format.
    BadWrapper { reason: &'static str },
    /// A coordinator record value's version outside the versions Kafka
    /// reads for its record type (`lowest..=newest`, the newest klog knows).
    RecordVersion {
        schema: &'static str,
        version: i16,
        lowest: i16,
        newest: i16,
    },
}

impl DecodeError {
    /// A defect at `offset`.
    pub fn new(offset: u64, kind: DecodeErrorKind) -> Self {
        DecodeError {
            offset,
            decompressed_at: None,
            kind,
        }
    }
}

/// A coordinator record's value `version` outside the versions klog knows
/// of `schema` (`lowest..=newest`).
fn write_record_version(
    f: &mut fmt::Formatter<'_>,
    schema: &str,
    version: i16,
    (lowest, newest): (i16, i16),
) -> fmt::Result {
    let known = if lowest == newest {
        format!("version {newest} only")
    } else {
        format!("versions {lowest} to {newest}")
    };
    write!(
        f,
        "{schema} version {version}: klog knows {known} (as Kafka 4.1 to 4.4 do); \
         Kafka's coordinator fails to load the partition on it \
         (CoordinatorRecordSerde: UnknownRecordVersionException), so the record is not applied"
    )
}

impl fmt::Display for DecodeErrorKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        use DecodeErrorKind::*;
        match *self {
            UnexpectedEof { needed, available } => {
                write!(f, "unexpected end of data: needed {needed} bytes, {available} available")
            }
            CrcMismatch { stored, computed } => {
                write!(f, "CRC mismatch: stored 0x{stored:08X}, computed 0x{computed:08X}")
            }
            UnsupportedMagic(m) => write!(f, "unsupported magic {m} (expected 0, 1 or 2)"),
            NegativeLength { field, value } => write!(f, "negative length {value} in {field}"),
            VarintOverlong => write!(f, "varint longer than its maximum encoded length"),
            RecordCountMismatch { header, actual } => write!(
                f,
                "header declares {header} records but the records section ends after {actual}"
            ),
            RecordsRemaining { count, remaining } => write!(
                f,
                "{remaining} bytes remain in the records section after the {count} declared records"
            ),
            RecordLengthMismatch { declared, consumed } => write!(
                f,
                "record length prefix says {declared} bytes but its fields take {consumed}"
            ),
            SizeTooSmall { size } => {
                write!(f, "entry size {size} is smaller than the minimum overhead 14")
            }
            BatchTooSmall { size } => write!(
                f,
                "batch size {size} is smaller than the record batch header (61 bytes)"
            ),
            PastEndOfFile { declared, available } => write!(
                f,
                "torn tail: entry declares {declared} bytes but only {available} remain in the file"
            ),
            LengthPastEof { declared, available, resumes_at } => write!(
                f,
                "entry declares {declared} bytes but only {available} remain in the file, \
                 and valid batches resume at position {resumes_at}: damage, not a torn tail"
            ),
            OffsetOverflow { base_offset, last_offset_delta } => write!(
                f,
                "base offset {base_offset} + lastOffsetDelta {last_offset_delta} runs past the largest offset (2^63 - 1)"
            ),
            TrailingZeros { len } => write!(f, "{len} trailing zero bytes (preallocated space)"),
            UnknownCompression(c) => write!(f, "unknown compression codec id {c}"),
            Decompress { codec, reason } => write!(f, "{codec} records do not decompress: {reason}"),
            DecompressedTooLarge { limit } => {
                write!(f, "decompressed records exceed the limit of {limit} bytes")
            }
            InvalidRecordCount(c) => write!(f, "invalid record count {c}"),
            OffsetDeltaOutOfRange { offset_delta, last_offset_delta } => write!(
                f,
                "record offset delta {offset_delta} outside 0..={last_offset_delta} (lastOffsetDelta)"
            ),
            NegativeLastOffsetDelta(d) => write!(f, "negative lastOffsetDelta {d}"),
            OffsetDeltaNotIncreasing { offset_delta, previous } => write!(
                f,
                "record offset delta {offset_delta} is not above the previous record's {previous}"
            ),
            TooManyRecords { count, last_offset_delta } => write!(
                f,
                "{count} records cannot fit lastOffsetDelta {last_offset_delta} ({} offsets)",
                i64::from(last_offset_delta) + 1
            ),
            OffsetNotIncreasing { previous_last, base_offset } => write!(
                f,
                "base offset {base_offset} is not above the previous batch's last offset {previous_last}"
            ),
            BelowSegmentBase { segment_base, base_offset } => write!(
                f,
                "batch base offset {base_offset} lies below the segment's base offset {segment_base}"
            ),
            RelativeOffsetOverflow { segment_base, offset } => write!(
                f,
                "offset {offset} does not fit a 32-bit offset relative to segment base {segment_base}"
            ),
            BadControlRecord { reason } => write!(f, "malformed control record: {reason}"),
            IndexLength { len, entry_size } => write!(
                f,
                "index length {len} is not a multiple of the entry size {entry_size}"
            ),
            ValueOutOfRange { field, value } => write!(f, "{field} {value} is out of range"),
            InvalidUtf8 { field } => write!(f, "{field} is not valid UTF-8"),
            UnknownVersion { schema, version } => write!(f, "unknown {schema} version {version}"),
            UnexpectedNull { field } => write!(f, "{field} is null but may not be"),
            BadWrapper { reason } => write!(f, "invalid compressed wrapper message: {reason}"),
            RecordVersion {
                schema,
                version,
                lowest,
                newest,
            } => write_record_version(f, schema, version, (lowest, newest)),
            TrailingBytes { field, remaining } => {
                write!(f, "{remaining} bytes left over after the {field}")
            }
        }
    }
}

impl fmt::Display for DecodeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.decompressed_at {
            Some(inner) => write!(
                f,
                "byte {} (compressed records; byte {inner} of the decompressed data): {}",
                self.offset, self.kind
            ),
            None => write!(f, "byte {}: {}", self.offset, self.kind),
        }
    }
}

impl std::error::Error for DecodeError {}

/// The library's error type.
#[derive(Debug)]
#[non_exhaustive]
pub enum Error {
    /// An I/O operation on `path` failed.
    Io {
        path: PathBuf,
        op: &'static str,
        source: std::io::Error,
    },
    /// Bytes of `path` did not decode.
    Decode { path: PathBuf, error: DecodeError },
    /// A path is not what the operation needs (not a segment, no partitions, bad name...).
    Layout { path: PathBuf, reason: String },
    /// The data directory's lock is held by another process (`holder`, when
    /// the OS names it), or by another lock in this one.
    Locked { path: PathBuf, holder: Option<u32> },
    /// The append path refuses to write behind a damaged tail.
    DamagedTail { path: PathBuf, error: DecodeError },
    /// The caller asked for something invalid (no records, bad offset ...).
    Invalid(String),
    /// A write failed; `after` says what it left (what was rolled back).
    Failed { error: Box<Error>, after: String },
}

impl Error {
    /// Wrap an I/O error with the path and the operation that failed.
    pub fn io(path: impl Into<PathBuf>, op: &'static str, source: std::io::Error) -> Self {
        Error::Io {
            path: path.into(),
            op,
            source,
        }
    }

    /// A layout error for `path`.
    pub fn layout(path: impl Into<PathBuf>, reason: impl Into<String>) -> Self {
        Error::Layout {
            path: path.into(),
            reason: reason.into(),
        }
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::Io { path, op, source } => write!(f, "{}: {op}: {source}", path.display()),
            Error::Decode { path, error } => write!(f, "{}: {error}", path.display()),
            Error::Layout { path, reason } => write!(f, "{}: {reason}", path.display()),
            Error::Locked { path, holder } => write!(
                f,
                "{}: the data directory is locked by {} (a running broker or another klog); \
                 stop it before writing",
                path.display(),
                match holder {
                    Some(pid) => format!("process {pid}"),
                    None => "another process".to_string(),
                }
            ),
            Error::DamagedTail { path, error } => write!(
                f,
                "{}: refusing to append behind a damaged tail: {error}; run `klog verify-crc {}` \
                 to inspect it",
                path.display(),
                path.display()
            ),
            Error::Invalid(msg) => f.write_str(msg),
            Error::Failed { error, after } => write!(f, "{error}; {after}"),
        }
    }
}

/// The causes are part of each message (`Display`), so no `source()` is
/// exposed: chained printing would repeat them.
impl std::error::Error for Error {}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
