//! Findings: what an inspection found, each with a kind, a severity and a place.
//!
//! One [`Finding`] type serves every check — verify-crc's batch and index
//! checks, recovery, the producer-state audit, snapshots, checkpoints, info.
//! The severity says what Kafka itself does with the state:
//!
//! - `error`: log bytes are damaged or lost (CRC, framing, torn tail, bad
//!   magic, offset order). A broker's recovery (`LogSegment.recover`) cuts
//!   the log there.
//! - `warning`: state the broker rebuilds or ignores on load (a missing or
//!   stale index, a stale snapshot, a producer-state anomaly the broker does
//!   not re-validate when it loads the log: `ProducerStateManager` replays
//!   batches without sequence checks).
//! - `note`: what a running or crashed broker normally has (preallocated
//!   index slots of the active segment, a marker for a partition with no data).
//!
//! A run fails (exit 1) when a finding is at or above the `--fail-on`
//! severity, `error` by default.

use std::collections::BTreeMap;
use std::fmt;
use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::error::{DecodeError, DecodeErrorKind};

/// How serious a finding is (ordered: note < warning < error).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum Severity {
    Note,
    Warning,
    Error,
}

impl Severity {
    /// The lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            Severity::Note => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// The name with a count: `1 error`, `2 warnings`.
    pub fn counted(self, n: u64) -> String {
        let s = if n == 1 { "" } else { "s" };
        format!("{n} {}{s}", self.name())
    }
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

macro_rules! kinds {
    ($( $(#[$doc:meta])* $variant:ident = $name:literal, $severity:ident; )*) => {
        /// What a finding is about. Each kind has a stable snake_case name
        /// (the JSON `kind`) and a default severity.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        #[non_exhaustive]
        pub enum Kind {
            $( $(#[$doc])* $variant, )*
        }

        impl Kind {
            /// Every kind, in declaration order.
            pub const ALL: &'static [Kind] = &[$(Kind::$variant),*];

            /// The stable snake_case name.
            pub fn name(self) -> &'static str {
                match self { $(Kind::$variant => $name,)* }
            }

            /// The severity of this kind unless the context says otherwise.
            pub fn severity(self) -> Severity {
                match self { $(Kind::$variant => Severity::$severity,)* }
            }
        }
    };
}

kinds! {
    // Log bytes: damage is an error.
    UnexpectedEof = "unexpected_eof", Error;
    CrcMismatch = "crc_mismatch", Error;
    BadMagic = "bad_magic", Error;
    NegativeLength = "negative_length", Error;
    VarintOverlong = "varint_overlong", Error;
    RecordCountMismatch = "record_count_mismatch", Error;
    RecordsRemaining = "records_remaining", Error;
    RecordLengthMismatch = "record_length_mismatch", Error;
    SizeTooSmall = "size_too_small", Error;
    BatchTooSmall = "batch_too_small", Error;
    /// The last entry of a file is cut short and nothing valid follows.
    TornTail = "torn_tail", Error;
    /// A declared length runs past the end of the file, but valid batches follow it.
    LengthPastEof = "length_past_eof", Error;
    OffsetOverflow = "offset_overflow", Error;
    /// Zero bytes to the end of a log (preallocated space): recovery truncates them, no record is lost.
    TrailingZeros = "trailing_zeros", Warning;
    UnknownCompression = "unknown_compression", Error;
    DecompressFailed = "decompress_failed", Error;
    DecompressedTooLarge = "decompressed_too_large", Error;
    InvalidRecordCount = "invalid_record_count", Error;
    OffsetDeltaOutOfRange = "offset_delta_out_of_range", Error;
    OffsetDeltaNotIncreasing = "offset_delta_not_increasing", Error;
    NegativeLastOffsetDelta = "negative_last_offset_delta", Error;
    TooManyRecords = "too_many_records", Error;
    OffsetNotIncreasing = "offset_not_increasing", Error;
    BelowSegmentBase = "below_segment_base", Error;
    RelativeOffsetOverflow = "relative_offset_overflow", Error;
    BadControlRecord = "bad_control_record", Error;
    ValueOutOfRange = "value_out_of_range", Error;
    InvalidUtf8 = "invalid_utf8", Error;
    UnknownVersion = "unknown_version", Error;
    UnexpectedNull = "unexpected_null", Error;
    TrailingBytes = "trailing_bytes", Error;
    BadWrapper = "bad_wrapper", Error;
    // Indexes: the broker rebuilds them (`LogLoader`, `LogSegment.sanityCheck`).
    IndexLength = "index_length", Warning;
    IndexMissing = "index_missing", Warning;
    IndexOrder = "index_order", Warning;
    IndexTarget = "index_target", Warning;
    IndexPastLog = "index_past_log", Warning;
    /// An index file over 2 GiB: larger than any Kafka writes
    /// (`segment.index.bytes` is an int) and than it can map (`AbstractIndex`).
    IndexTooLarge = "index_too_large", Error;
    /// All-zero slots after the used entries: preallocated by `AbstractIndex`.
    IndexTrailingZeros = "index_trailing_zeros", Note;
    /// A time index whose last entry is older than its segment's largest
    /// timestamp, where a broker trusts it (`LogSegment.readMaxTimestampAndOffsetSoFar`).
    TimeIndexStale = "time_index_stale", Warning;
    // Producer state: the broker does not re-validate it when it loads the log.
    OutOfOrderSequence = "out_of_order_sequence", Warning;
    DuplicateSequence = "duplicate_sequence", Warning;
    SequenceNotZeroOnNewEpoch = "sequence_not_zero_on_new_epoch", Warning;
    EpochRegression = "epoch_regression", Warning;
    ZombieTransactionalWrite = "zombie_transactional_write", Warning;
    /// A COMMIT/ABORT for a producer with no open transaction here: the
    /// coordinator writes markers to every partition of a transaction.
    MarkerWithoutTransaction = "marker_without_transaction", Note;
    HangingTransaction = "hanging_transaction", Warning;
    /// Open transactions find-hanging's rule could not judge: no "now"
    /// was given, or no `__transaction_state` was among the directories read.
    HangingNotJudged = "hanging_not_judged", Note;
    /// Offsets of a partition with tiered storage live in remote segments
    /// only, which klog cannot read: the transactions there are not among
    /// those shown (`__remote_log_metadata` says which remote segments hold
    /// aborted ones, when it is in a directory given).
    TransactionsInRemoteStorage = "transactions_in_remote_storage", Note;
    /// A `.txnindex` disagrees with the log: recovery rebuilds it.
    TxnIndexMismatch = "txn_index_mismatch", Warning;
    // Producer snapshots: `ProducerStateManager` skips one it cannot read and rebuilds from the log.
    SnapshotUnreadable = "snapshot_unreadable", Warning;
    SnapshotMismatch = "snapshot_mismatch", Warning;
    /// A file a broker would read is a FIFO, a device, a directory or too
    /// large for its kind: not read.
    NotRegularFile = "not_regular_file", Error;
    // Metadata files of a data directory.
    /// A broker refuses to start on a log directory whose meta.properties does not parse.
    MetaPropertiesMalformed = "meta_properties_malformed", Error;
    /// `LogManager` resets an unreadable recovery-point or log-start
    /// checkpoint (to 0, to the first segment's base offset): a warning; an
    /// unreadable replication-offset or leader-epoch checkpoint fails the
    /// log directory, which the reader marks as an error.
    CheckpointMalformed = "checkpoint_malformed", Warning;
    /// A partition.metadata that does not parse fails the log's load.
    PartitionMetadataMalformed = "partition_metadata_malformed", Error;
    /// `FileQuorumStateStore` cannot read `quorum-state`: the KRaft client does not start.
    QuorumStateMalformed = "quorum_state_malformed", Error;
    // The disk against the KRaft metadata (`klog info`).
    /// The metadata log could not be replayed (see the detail).
    MetadataUnreadable = "metadata_unreadable", Warning;
    /// The metadata assigns a partition to this node and no directory given has its folder.
    AssignedPartitionMissing = "assigned_partition_missing", Warning;
    /// A folder's partition.metadata names a topic id the metadata does not know.
    UnknownTopicId = "unknown_topic_id", Warning;
    /// A folder's topic id belongs to another topic name in the metadata
    /// (a stray left by a topic recreated under the old name).
    TopicIdOtherName = "topic_id_other_name", Warning;
    /// A folder of a topic the metadata removed (RemoveTopicRecord).
    DeletedTopicFolder = "deleted_topic_folder", Warning;
    /// A log that ends below the offset `log-start-offset-checkpoint` gives
    /// it: segments are missing, and a broker loading it deletes every
    /// segment and starts the log empty at that offset
    /// (`LogLoader.deleteSegmentsIfLogStartGreaterThanLogEnd`).
    LogEndBelowLogStart = "log_end_below_log_start", Error;
    /// A log that ends below the high watermark `replication-offset-checkpoint`
    /// gives it: records the cluster had committed are not on this copy (a
    /// crash lost unflushed writes, or a tail was cut). A broker lowers the
    /// high watermark to the log end (`UnifiedLog.updateHighWatermark`).
    HighWatermarkAboveLogEnd = "high_watermark_above_log_end", Warning;
    /// A high watermark in `replication-offset-checkpoint` below the log
    /// start: negative (Kafka never writes one) or older than the log
    /// start's checkpoint. `OffsetCheckpointFile` reads it as it is and a
    /// broker raises it to the log start (`Partition.createLog`,
    /// `UnifiedLog.updateHighWatermark`).
    HighWatermarkBelowLogStart = "high_watermark_below_log_start", Warning;
    /// A `-delete` folder `LogManager` has not removed yet.
    DeleteFolder = "delete_folder", Warning;
    /// A `-stray` folder: the broker found a partition the metadata does not place here.
    StrayFolder = "stray_folder", Warning;
    /// A KRaft snapshot whose first batch is not a control batch starting
    /// with SNAPSHOT_HEADER: `RecordsSnapshotReader` refuses it
    /// (`IllegalStateException`). In `bootstrap.checkpoint`, which Kafka
    /// reads without looking for it, a warning.
    SnapshotHeaderMissing = "snapshot_header_missing", Error;
    /// A KRaft snapshot that does not end with a SNAPSHOT_FOOTER record:
    /// Kafka's writers always end one with it and its readers do not check,
    /// so a snapshot cut at a batch boundary loads with records missing.
    SnapshotFooterMissing = "snapshot_footer_missing", Warning;
    /// A folder of a log directory that is not a partition folder klog can
    /// read: its name is not UTF-8, or not `<topic>-<partition>` (Kafka's
    /// `LocalLog.parseTopicPartitionName` then throws `KafkaException` in
    /// `LogManager.loadLogs`, and the broker fails to start: see
    /// `DataDir::foreign_folder_findings`). Its contents are not checked.
    NotAPartitionFolder = "not_a_partition_folder", Error;
    // Offsets-topic records the group coordinator loads as they are.
    /// A committed offset below zero (a non-Java client's): `OffsetMetadataManager` stores it.
    NegativeCommittedOffset = "negative_committed_offset", Warning;
    // The KRaft metadata log replayed into the cluster image.
    /// A metadata record of an apiKey no Kafka release klog knows has:
    /// Kafka's loader fails on it (`MetadataRecordType.fromId`).
    UnknownMetadataRecord = "unknown_metadata_record", Error;
    /// A metadata record version newer than klog knows: read with the
    /// newest layout klog knows, as Kafka's generated `read` does.
    NewerMetadataRecord = "newer_metadata_record", Warning;
    /// A metadata record Kafka's image replay refuses (`MetadataDelta.replay`
    /// or `MetadataBatchLoader` throws): a controller stops, a broker skips it.
    MetadataReplayRejected = "metadata_replay_rejected", Error;
    /// A metadata transaction ended by an AbortTransactionRecord: its records are not applied.
    MetadataTransactionAborted = "metadata_transaction_aborted", Note;
    /// A metadata transaction still open where the replay ends: its records are not applied.
    MetadataTransactionOpen = "metadata_transaction_open", Note;
    /// A partition registration no Kafka controller writes (a negative
    /// partition, duplicate replicas, a leader or ISR member that is not a
    /// replica): Kafka's image takes it as written.
    PartitionRegistrationInvalid = "partition_registration_invalid", Warning;
    /// A PartitionRecord for a partition that has one: Kafka's image takes
    /// the new one whole; a controller writes a PartitionChangeRecord instead.
    PartitionRecordAgain = "partition_record_again", Warning;
    /// A TopicRecord whose name a topic already has: a controller replaying
    /// the log stops (`ReplicationControlManager.replay`), a broker's image
    /// takes it.
    DuplicateTopicRecord = "duplicate_topic_record", Error;
}

impl Kind {
    /// The kind of a decoding defect.
    pub fn of_decode(kind: &DecodeErrorKind) -> Kind {
        use DecodeErrorKind as D;
        match kind {
            D::UnexpectedEof { .. } => Kind::UnexpectedEof,
            D::CrcMismatch { .. } => Kind::CrcMismatch,
            D::UnsupportedMagic(_) => Kind::BadMagic,
            D::NegativeLength { .. } => Kind::NegativeLength,
            D::VarintOverlong => Kind::VarintOverlong,
            D::RecordCountMismatch { .. } => Kind::RecordCountMismatch,
            D::RecordsRemaining { .. } => Kind::RecordsRemaining,
            D::RecordLengthMismatch { .. } => Kind::RecordLengthMismatch,
            D::SizeTooSmall { .. } => Kind::SizeTooSmall,
            D::BatchTooSmall { .. } => Kind::BatchTooSmall,
            D::PastEndOfFile { .. } => Kind::TornTail,
            D::LengthPastEof { .. } => Kind::LengthPastEof,
            D::OffsetOverflow { .. } => Kind::OffsetOverflow,
            D::TrailingZeros { .. } => Kind::TrailingZeros,
            D::UnknownCompression(_) => Kind::UnknownCompression,
            D::Decompress { .. } => Kind::DecompressFailed,
            D::DecompressedTooLarge { .. } => Kind::DecompressedTooLarge,
            D::InvalidRecordCount(_) => Kind::InvalidRecordCount,
            D::OffsetDeltaOutOfRange { .. } => Kind::OffsetDeltaOutOfRange,
            D::OffsetDeltaNotIncreasing { .. } => Kind::OffsetDeltaNotIncreasing,
            D::NegativeLastOffsetDelta(_) => Kind::NegativeLastOffsetDelta,
            D::TooManyRecords { .. } => Kind::TooManyRecords,
            D::OffsetNotIncreasing { .. } => Kind::OffsetNotIncreasing,
            D::BelowSegmentBase { .. } => Kind::BelowSegmentBase,
            D::RelativeOffsetOverflow { .. } => Kind::RelativeOffsetOverflow,
            D::BadControlRecord { .. } => Kind::BadControlRecord,
            D::IndexLength { .. } => Kind::IndexLength,
            D::ValueOutOfRange { .. } => Kind::ValueOutOfRange,
            D::InvalidUtf8 { .. } => Kind::InvalidUtf8,
            D::UnknownVersion { .. } => Kind::UnknownVersion,
            D::UnexpectedNull { .. } => Kind::UnexpectedNull,
            D::TrailingBytes { .. } => Kind::TrailingBytes,
            D::BadWrapper { .. } => Kind::BadWrapper,
            D::RecordVersion { .. } => Kind::UnknownVersion,
        }
    }
}

impl fmt::Display for Kind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A kind equals its stable name (`kind == "crc_mismatch"`).
impl PartialEq<&str> for Kind {
    fn eq(&self, name: &&str) -> bool {
        self.name() == *name
    }
}

impl Serialize for Kind {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.name())
    }
}

impl<'de> Deserialize<'de> for Kind {
    /// From the stable name ([`Kind::name`]).
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let name = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        Kind::ALL
            .iter()
            .copied()
            .find(|k| k.name() == name)
            .ok_or_else(|| serde::de::Error::custom(format!("no finding kind is named {name:?}")))
    }
}

impl JsonSchema for Kind {
    fn schema_name() -> std::borrow::Cow<'static, str> {
        "Kind".into()
    }
    fn json_schema(_: &mut schemars::SchemaGenerator) -> schemars::Schema {
        let names: Vec<&str> = Kind::ALL.iter().map(|k| k.name()).collect();
        schemars::json_schema!({ "type": "string", "enum": names })
    }
}

/// The exact bytes of `p` in base64 when it is not UTF-8 (its text in
/// JSON is then lossy: U+FFFD for each byte that is not), else `None`.
pub fn path_base64(p: &std::path::Path) -> Option<String> {
    use base64::Engine;
    use std::os::unix::ffi::OsStrExt;
    p.to_str()
        .is_none()
        .then(|| base64::engine::general_purpose::STANDARD.encode(p.as_os_str().as_bytes()))
}

/// A path in a JSON document: `file`, its text, and beside it, only when
/// the path is not UTF-8, `file_base64` ([`path_base64`]).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, JsonSchema)]
pub struct FileFields {
    /// The file's path as text (a byte that is not UTF-8 shows as U+FFFD).
    pub file: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file_base64: Option<String>,
}

impl FileFields {
    /// The fields of `p`.
    pub fn of(p: &std::path::Path) -> Self {
        FileFields {
            file: p.to_string_lossy().into_owned(),
            file_base64: path_base64(p),
        }
    }
}

/// Serialize a path field as [`FileFields`] (with `#[serde(flatten)]`).
pub fn file_fields<S: Serializer>(p: &std::path::Path, s: S) -> Result<S::Ok, S::Error> {
    FileFields::of(p).serialize(s)
}

/// One thing an inspection found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, JsonSchema)]
pub struct Finding {
    pub kind: Kind,
    pub severity: Severity,
    /// The file it concerns (`file`, and `file_base64` when its path is
    /// not UTF-8: [`FileFields`]).
    #[serde(flatten, serialize_with = "file_fields")]
    #[schemars(with = "FileFields")]
    pub file: PathBuf,
    /// Byte position in that file where the damaged entry (batch, torn
    /// tail, index entry) starts.
    pub position: u64,
    /// The exact byte of the defect (at or after `position`).
    pub byte: u64,
    /// The Kafka offset concerned, when known (a batch's base offset).
    pub offset: Option<i64>,
    /// The producer concerned, for producer-state findings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub producer_id: Option<i64>,
    /// What exactly, for a person.
    pub detail: String,
}

/// A finding as a JSON document holds it (a summary's findings, read
/// back): its path as `file`, with `file_base64` when it is not UTF-8.
#[derive(Deserialize)]
struct FindingDoc {
    kind: Kind,
    severity: Severity,
    file: String,
    #[serde(default)]
    file_base64: Option<String>,
    position: u64,
    byte: u64,
    offset: Option<i64>,
    #[serde(default)]
    producer_id: Option<i64>,
    detail: String,
}

impl<'de> Deserialize<'de> for Finding {
    /// What [`Serialize`] writes; the path from `file_base64` when given
    /// (its exact bytes), else from `file`.
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use base64::Engine;
        use std::os::unix::ffi::OsStringExt;
        let doc = FindingDoc::deserialize(d)?;
        let file = match &doc.file_base64 {
            Some(b) => PathBuf::from(std::ffi::OsString::from_vec(
                base64::engine::general_purpose::STANDARD
                    .decode(b)
                    .map_err(|e| serde::de::Error::custom(format!("file_base64: {e}")))?,
            )),
            None => PathBuf::from(doc.file),
        };
        Ok(Finding {
            kind: doc.kind,
            severity: doc.severity,
            file,
            position: doc.position,
            byte: doc.byte,
            offset: doc.offset,
            producer_id: doc.producer_id,
            detail: doc.detail,
        })
    }
}

impl Finding {
    /// A finding of `kind` with its default severity.
    pub fn new(
        kind: Kind,
        file: impl Into<PathBuf>,
        position: u64,
        offset: Option<i64>,
        detail: impl Into<String>,
    ) -> Self {
        Finding {
            kind,
            severity: kind.severity(),
            file: file.into(),
            position,
            byte: position,
            offset,
            producer_id: None,
            detail: detail.into(),
        }
    }

    /// The same finding about producer `producer_id`.
    pub fn with_producer(mut self, producer_id: i64) -> Self {
        self.producer_id = Some(producer_id);
        self
    }

    /// A decoding defect of the entry at `position` of `file`.
    pub fn decode(
        file: impl Into<PathBuf>,
        position: u64,
        offset: Option<i64>,
        error: &DecodeError,
    ) -> Self {
        let mut f = Finding::new(
            Kind::of_decode(&error.kind),
            file,
            position,
            offset,
            error.to_string(),
        );
        f.byte = error.offset;
        f
    }

    /// The same finding as another kind, with that kind's severity.
    pub fn with_kind(mut self, kind: Kind) -> Self {
        self.kind = kind;
        self.severity = kind.severity();
        self
    }

    /// The same finding with another severity (when the context decides).
    pub fn with_severity(mut self, severity: Severity) -> Self {
        self.severity = severity;
        self
    }

    /// Whether it makes a run fail at `fail_on`.
    pub fn fails(&self, fail_on: Severity) -> bool {
        self.severity >= fail_on
    }

    /// Whether `other` reports the same defect: the same kind at the same
    /// byte of the same file (two checks can meet one defect).
    pub fn same_as(&self, other: &Finding) -> bool {
        self.kind == other.kind && self.file == other.file && self.position == other.position
    }
}

/// Add to `findings` each of `more` it does not hold already
/// ([`Finding::same_as`]).
pub fn add_new(findings: &mut Vec<Finding>, more: &[Finding]) {
    for f in more {
        if !findings.iter().any(|g| g.same_as(f)) {
            findings.push(f.clone());
        }
    }
}

impl fmt::Display for Finding {
    /// `file:position severity kind [producer N: ]detail`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{}:{} {} {} ",
            self.file.display(),
            self.position,
            self.severity,
            self.kind
        )?;
        if let Some(pid) = self.producer_id {
            write!(f, "producer {pid}: ")?;
        }
        f.write_str(&self.detail)
    }
}

/// Counts of findings per severity and kind.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    counts: BTreeMap<(std::cmp::Reverse<Severity>, Kind), u64>,
}

impl Summary {
    /// Count `findings`.
    pub fn of<'a>(findings: impl IntoIterator<Item = &'a Finding>) -> Self {
        let mut counts = BTreeMap::new();
        for f in findings {
            *counts
                .entry((std::cmp::Reverse(f.severity), f.kind))
                .or_insert(0) += 1;
        }
        Summary { counts }
    }

    /// How many findings have `severity`.
    pub fn count(&self, severity: Severity) -> u64 {
        self.counts
            .iter()
            .filter(|((s, _), _)| s.0 == severity)
            .map(|(_, n)| n)
            .sum()
    }
}

/// Counts of findings per severity and per kind, for JSON documents.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct Counts {
    pub errors: u64,
    pub warnings: u64,
    pub notes: u64,
    /// Findings per kind name.
    pub kinds: BTreeMap<String, u64>,
}

impl Summary {
    /// The counts, for a JSON document.
    pub fn counts(&self) -> Counts {
        let mut kinds = BTreeMap::new();
        for ((_, kind), n) in &self.counts {
            *kinds.entry(kind.name().to_string()).or_insert(0) += n;
        }
        Counts {
            errors: self.count(Severity::Error),
            warnings: self.count(Severity::Warning),
            notes: self.count(Severity::Note),
            kinds,
        }
    }
}

impl fmt::Display for Summary {
    /// `1 error: 1 crc_mismatch; 49 warnings: 49 index_missing` (or `no findings`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.counts.is_empty() {
            return f.write_str("no findings");
        }
        let mut first = true;
        for severity in [Severity::Error, Severity::Warning, Severity::Note] {
            let total = self.count(severity);
            if total == 0 {
                continue;
            }
            if !first {
                f.write_str("; ")?;
            }
            first = false;
            write!(f, "{}:", severity.counted(total))?;
            let kinds = self.counts.iter().filter(|((s, _), _)| s.0 == severity);
            for (i, ((_, kind), n)) in kinds.enumerate() {
                let sep = if i == 0 { " " } else { ", " };
                write!(f, "{sep}{n} {kind}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_and_snake_case() {
        let mut seen = std::collections::BTreeSet::new();
        for k in Kind::ALL {
            assert!(seen.insert(k.name()), "{} twice", k.name());
            assert!(k
                .name()
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_'));
        }
    }

    #[test]
    fn summary_groups_by_severity_then_kind() {
        let f = |k: Kind| Finding::new(k, "x", 0, None, "");
        let all = vec![
            f(Kind::IndexMissing),
            f(Kind::CrcMismatch),
            f(Kind::IndexMissing),
            f(Kind::IndexTrailingZeros),
            f(Kind::TornTail),
        ];
        let s = Summary::of(&all);
        assert_eq!(
            s.to_string(),
            "2 errors: 1 crc_mismatch, 1 torn_tail; 2 warnings: 2 index_missing; \
             1 note: 1 index_trailing_zeros"
        );
        let failing = |at| all.iter().filter(|f| f.fails(at)).count();
        assert_eq!(failing(Severity::Error), 2);
        assert_eq!(failing(Severity::Warning), 4);
        assert_eq!(failing(Severity::Note), 5);
    }

    #[test]
    fn decode_kinds_keep_their_names() {
        let e = DecodeErrorKind::PastEndOfFile {
            declared: 1,
            available: 0,
        };
        // The name a batch's decode error is reported under in JSON.
        assert_eq!(Kind::of_decode(&e).name(), "torn_tail");
    }
}
