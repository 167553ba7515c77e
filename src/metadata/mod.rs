//! KRaft cluster metadata: the records of `__cluster_metadata-0`, its
//! snapshots and `bootstrap.checkpoint` ([`records`]), their replay into the
//! cluster image ([`image`]), and the `quorum-state` file.
//!
//! Files (Kafka's `KafkaMetadataLog`, `Snapshots`, `FileQuorumStateStore`,
//! `BootstrapDirectory`):
//!
//! ```text
//! <log dir>/bootstrap.checkpoint            written by `kafka-storage format`
//! <log dir>/__cluster_metadata-0/
//!     00000000000000000000.log              the metadata log (null keys, framed values)
//!     <offset %020d>-<epoch %010d>.checkpoint  a snapshot: every record with an offset below <offset>
//!     quorum-state                          JSON: leaderId, leaderEpoch, votedId, … data_version
//! ```
//!
//! A snapshot holds batches like a segment: a SNAPSHOT_HEADER control
//! record, KRAFT_VERSION and KRAFT_VOTERS control records, the records,
//! then a SNAPSHOT_FOOTER.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod image;
pub mod records;

use std::path::{Path, PathBuf};
use std::rc::Rc;

use serde_json::Value;

use crate::error::{Error, Result};
use crate::format::control::ControlType;
use crate::format::{DecodeLimits, Entry};
use crate::log::findings::{Finding, Kind, Severity};
use crate::log::walk::Step;
use crate::log::{Partition, Policy};
pub use image::Image;

pub use crate::log::dir::METADATA_TOPIC;
/// Its one partition's folder name.
pub const METADATA_FOLDER: &str = "__cluster_metadata-0";
/// The bootstrap snapshot in the metadata log directory
/// (`BootstrapDirectory.BINARY_BOOTSTRAP_FILENAME`).
pub const BOOTSTRAP_FILE: &str = "bootstrap.checkpoint";
/// `FileQuorumStateStore.DEFAULT_FILE_NAME`.
pub const QUORUM_STATE_FILE: &str = "quorum-state";

/// The offset and epoch of a snapshot file name
/// (`Snapshots.parse`: `%020d-%010d.checkpoint`).
pub fn parse_snapshot_name(name: &str) -> Option<(i64, i32)> {
    let stem = name.strip_suffix(".checkpoint")?;
    let (offset, epoch) = stem.split_once('-')?;
    if offset.len() != 20 || epoch.len() != 10 {
        return None;
    }
    if !offset
        .bytes()
        .chain(epoch.bytes())
        .all(|b| b.is_ascii_digit())
    {
        return None;
    }
    Some((offset.parse().ok()?, epoch.parse().ok()?))
}

/// The snapshots of a metadata folder, sorted by offset then epoch.
pub fn snapshots(folder: &Path) -> Result<Vec<(i64, i32, PathBuf)>> {
    let mut out = Vec::new();
    let entries = std::fs::read_dir(folder).map_err(|e| Error::io(folder, "read directory", e))?;
    for e in entries {
        let e = e.map_err(|e| Error::io(folder, "read directory", e))?;
        if let Some((o, ep)) = e.file_name().to_str().and_then(parse_snapshot_name) {
            out.push((o, ep, e.path()));
        }
    }
    out.sort();
    Ok(out)
}

/// The metadata folder for `dir`: `dir` itself when it is one, else its
/// `__cluster_metadata-0` when that exists.
pub fn metadata_folder(dir: &Path) -> Option<PathBuf> {
    if dir.file_name().and_then(|n| n.to_str()) == Some(METADATA_FOLDER) {
        return Some(dir.to_path_buf());
    }
    let f = dir.join(METADATA_FOLDER);
    f.is_dir().then_some(f)
}

/// The `quorum-state` file (`QuorumStateData` as JSON, plus `data_version`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuorumState {
    pub leader_id: i64,
    pub leader_epoch: i64,
    pub voted_id: i64,
    pub voted_directory_id: Option<String>,
    pub applied_offset: Option<i64>,
    pub current_voters: Option<Vec<i64>>,
    pub data_version: i64,
}

/// The largest `quorum-state` read: Kafka's holds a few ids and epochs
/// and the voters, well under a kilobyte.
const QUORUM_STATE_MAX: u64 = 1 << 20;

/// Read `folder/quorum-state`; `None` when there is none. A file that is not
/// the JSON object `FileQuorumStateStore` writes is a layout error.
pub fn read_quorum_state(folder: &Path) -> Result<Option<QuorumState>> {
    let path = folder.join(QUORUM_STATE_FILE);
    let Some(bytes) = crate::log::files::read_regular(&path, QUORUM_STATE_MAX)? else {
        return Ok(None);
    };
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| Error::layout(&path, format!("not JSON: {e}")))?;
    let int = |k: &str| v.get(k).and_then(Value::as_i64);
    let need = |k: &str| int(k).ok_or_else(|| Error::layout(&path, format!("no integer {k}")));
    Ok(Some(QuorumState {
        leader_id: need("leaderId")?,
        leader_epoch: need("leaderEpoch")?,
        voted_id: need("votedId")?,
        voted_directory_id: v
            .get("votedDirectoryId")
            .and_then(Value::as_str)
            .map(String::from),
        applied_offset: int("appliedOffset"),
        current_voters: v.get("currentVoters").and_then(Value::as_array).map(|a| {
            a.iter()
                .filter_map(|x| x.get("voterId").and_then(Value::as_i64))
                .collect()
        }),
        data_version: need("data_version")?,
    }))
}

/// Whether `path` is read as a KRaft snapshot: `<offset>-<epoch>.checkpoint`
/// or `bootstrap.checkpoint`.
pub fn is_snapshot_file(path: &Path) -> bool {
    path.file_name()
        .and_then(|n| n.to_str())
        .is_some_and(|n| n == BOOTSTRAP_FILE || parse_snapshot_name(n).is_some())
}

/// The control types of a control batch's records (an undecodable key is
/// `Unknown(-1)`).
fn control_types(batch: &crate::format::BatchView<'_>, scratch: &mut Vec<u8>) -> Vec<ControlType> {
    let Ok(records) = batch.records(scratch, DecodeLimits::default()) else {
        return Vec::new();
    };
    records
        .map_while(|r| r.ok())
        .map(|r| {
            crate::format::control::decode(r.key, r.value, r.position)
                .map_or(ControlType::Unknown(-1), |c| c.kind)
        })
        .collect()
}

/// A batch as [`check_snapshot`] sees it: position, base offset, whether it
/// is a control batch, and its records' control types.
type Seen = (u64, i64, bool, Vec<ControlType>);

/// Check the frame of a KRaft snapshot file (see [`is_snapshot_file`]):
/// its first batch must be a control batch whose first record is a
/// SNAPSHOT_HEADER (`RecordsSnapshotReader.nextBatch`, which refuses the
/// snapshot otherwise), and its last batch a control batch ending with a
/// SNAPSHOT_FOOTER (what `RecordsSnapshotWriter.freeze` and
/// `BatchFileWriter.close` always write last; no reader checks it).
/// `bootstrap.checkpoint` is read by `BootstrapDirectory` through
/// `BatchFileReader`, which looks at neither: there both are warnings.
/// Damaged bytes are not reported here (the walk's damage is
/// `verify-crc`'s); the check is over the valid batches.
pub fn check_snapshot(path: &Path) -> Result<Vec<Finding>> {
    let bootstrap = path.file_name().and_then(|n| n.to_str()) == Some(BOOTSTRAP_FILE);
    let p = Partition::single_file(path, 0);
    let mut walk = p.walk(Policy::VALID_ENTRIES);
    let mut scratch = Vec::new();
    let mut first: Option<Seen> = None;
    let mut last: Option<Seen> = None;
    while let Some(step) = walk.next_step()? {
        let Step::Entry(w) = step else { continue };
        let seen = match w.entry {
            Entry::V2(b) => {
                let control = b.header.is_control();
                let types = if control {
                    control_types(&b, &mut scratch)
                } else {
                    Vec::new()
                };
                (b.position, b.header.base_offset, control, types)
            }
            Entry::Legacy(m) => (m.position, m.offset, false, Vec::new()),
        };
        if first.is_none() {
            first = Some(seen.clone());
        }
        last = Some(seen);
    }
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    let describe = |b: &Option<Seen>| match b {
        None => "the file holds no batch".to_string(),
        Some((_, offset, false, _)) => format!("it is a data batch at offset {offset}"),
        Some((_, offset, true, types)) => format!(
            "it is a control batch at offset {offset} of {}",
            if types.is_empty() {
                "no records".to_string()
            } else {
                types
                    .iter()
                    .map(|t| t.name())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        ),
    };
    let mut out = Vec::new();
    let header_ok =
        matches!(&first, Some((_, _, true, t)) if t.first() == Some(&ControlType::SnapshotHeader));
    let at = |kind, b: &Option<Seen>, detail| {
        let (position, offset) = b.as_ref().map_or((0, None), |b| (b.0, Some(b.1)));
        Finding::new(kind, path, position, offset, detail)
    };
    if !header_ok {
        let f = at(
            Kind::SnapshotHeaderMissing,
            &first,
            format!(
                "{name}: the first batch is not a control batch starting with a SNAPSHOT_HEADER ({}): {}",
                describe(&first),
                if bootstrap {
                    "kafka-storage format writes one; BootstrapDirectory reads the file without it"
                } else {
                    "Kafka's RecordsSnapshotReader refuses the snapshot"
                }
            ),
        );
        out.push(if bootstrap {
            f.with_severity(Severity::Warning)
        } else {
            f
        });
    }
    let footer_ok =
        matches!(&last, Some((_, _, true, t)) if t.last() == Some(&ControlType::SnapshotFooter));
    if !footer_ok && last.is_some() {
        out.push(at(
            Kind::SnapshotFooterMissing,
            &last,
            format!(
                "{name}: the last batch does not end with a SNAPSHOT_FOOTER ({}): Kafka ends every snapshot with one \
                 and reads it without checking, so a snapshot cut short at a batch boundary loads with records missing",
                describe(&last)
            ),
        ));
    }
    Ok(out)
}

/// Where a replayed image came from.
#[derive(Debug, Clone, Default)]
pub struct Replayed {
    pub image: Image,
    /// The snapshot read first (its file, offset and epoch).
    pub snapshot: Option<(PathBuf, i64, i32)>,
    /// The log's first and last applied offsets, when any record was applied.
    pub log_range: Option<(i64, i64)>,
    /// The next offset after the last applied record.
    pub next_offset: i64,
    /// Damaged batches or records: (file, offset, error). Each is in
    /// `findings` as well.
    pub damage: Vec<(PathBuf, i64, String)>,
    /// What [`check_snapshot`] says of the snapshot read.
    pub snapshot_findings: Vec<Finding>,
    /// What the replay could not read or apply, batch by batch and record
    /// by record (see [`image::Problem`]).
    pub findings: Vec<Finding>,
}

impl Replayed {
    /// The parts of the image klog could not build in full: those a record
    /// touched that klog cannot read as it was meant, and all of it when a
    /// batch or record could not be read at all.
    pub fn incomplete(&self) -> Vec<image::Section> {
        let all = image::Section::All;
        if !self.damage.is_empty() || self.image.incomplete.contains(&all) {
            vec![all]
        } else {
            self.image.incomplete.iter().copied().collect()
        }
    }
}

/// The image of the KRaft metadata log replayed furthest among the data
/// directories `dirs` (a broker's copy may lag), if any has one it can read.
pub fn newest_image(dirs: &[PathBuf]) -> Option<Image> {
    dirs.iter()
        .filter_map(|d| replay(&metadata_folder(d)?, None).ok())
        .max_by_key(|r| r.next_offset)
        .map(|r| r.image)
}

/// Where a record lies.
#[derive(Debug, Clone)]
struct Place {
    file: Rc<PathBuf>,
    position: u64,
    offset: i64,
}

/// A metadata transaction the replay is inside: where it began and the
/// records it holds so far (their values, decoded again when applied).
struct Txn {
    begin: Place,
    records: Vec<(Place, Vec<u8>)>,
}

/// Applies metadata records to the image in log order as Kafka's
/// `MetadataBatchLoader` does: the records after a BeginTransactionRecord
/// are applied at its EndTransactionRecord and dropped at an
/// AbortTransactionRecord; those of a transaction still open where the
/// replay stops are not applied (the loader publishes nothing while a
/// transaction is in progress). A Begin inside a transaction, or an End or
/// Abort outside one, throws in `MetadataBatchLoader.replay`: an error,
/// the record ignored.
///
/// (Kafka's loader drops an aborted transaction's records only when the
/// abort is the last record it was handed in one `handleCommit`; a record
/// after it in the same commit publishes the whole delta, aborted records
/// included. klog follows the controller, whose `OffsetControlManager`
/// reverts an aborted transaction whole.)
#[derive(Default)]
struct Loader {
    image: Image,
    findings: Vec<Finding>,
    damage: Vec<(PathBuf, i64, String)>,
    txn: Option<Txn>,
}

impl Loader {
    /// Bytes that cannot be read: a finding, and the damage listed.
    fn damaged(&mut self, f: Finding) {
        self.damage
            .push((f.file.clone(), f.offset.unwrap_or(-1), f.detail.clone()));
        self.findings.push(f.with_severity(Severity::Error));
    }

    fn finding(&mut self, at: &Place, kind: Kind, severity: Severity, detail: String) {
        self.findings.push(
            Finding::new(
                kind,
                at.file.as_path(),
                at.position,
                Some(at.offset),
                detail,
            )
            .with_severity(severity),
        );
    }

    /// Apply a decoded record now.
    fn apply(&mut self, at: &Place, r: &records::MetadataRecord) {
        for p in self.image.apply(at.offset, r) {
            self.finding(at, p.kind, p.severity, p.detail);
        }
    }

    /// One metadata record's value at `at`; `snapshot` when it comes from
    /// a snapshot, which Kafka replays record by record without the
    /// loader's transactions (`MetadataLoader.handleLoadSnapshot`).
    fn record(&mut self, at: Place, value: &[u8], snapshot: bool) {
        let r = records::decode_metadata(value, at.position);
        let marker = r.data.is_some()
            && matches!(
                r.name.as_str(),
                "BeginTransactionRecord" | "EndTransactionRecord" | "AbortTransactionRecord"
            );
        if marker && snapshot {
            // MetadataDelta.replay has no case for them.
            let detail = format!(
                "{} in a snapshot: Kafka replays a snapshot's records into the image and \
                 MetadataDelta.replay throws on it (\"Unknown metadata record type\")",
                r.name
            );
            self.image.notes.push(image::Note {
                offset: at.offset,
                record: r.name.clone(),
                detail: detail.clone(),
            });
            self.finding(&at, Kind::MetadataReplayRejected, Severity::Error, detail);
            return;
        }
        if !marker {
            match &mut self.txn {
                // A record that does not decode is reported at once: Kafka's
                // raft reader fails on it before the loader sees it.
                Some(t) if r.defect.is_none() => t.records.push((at, value.to_vec())),
                _ => self.apply(&at, &r),
            }
            return;
        }
        *self.image.record_counts.entry(r.name.clone()).or_default() += 1;
        let name = r.name.as_str();
        match (name, self.txn.take()) {
            ("BeginTransactionRecord", None) => {
                self.txn = Some(Txn {
                    begin: at,
                    records: Vec::new(),
                });
            }
            ("EndTransactionRecord", Some(t)) => {
                for (place, value) in &t.records {
                    let r = records::decode_metadata(value, place.position);
                    self.apply(place, &r);
                }
            }
            ("AbortTransactionRecord", Some(t)) => {
                let reason = r
                    .data
                    .as_ref()
                    .and_then(|d| d.get("reason"))
                    .and_then(Value::as_str)
                    .map_or(String::new(), |s| format!(" (reason: {s:?})"));
                self.finding(
                    &at,
                    Kind::MetadataTransactionAborted,
                    Severity::Note,
                    format!(
                        "the metadata transaction begun at offset {} is aborted{reason}: {} not applied \
                         (MetadataBatchLoader)",
                        t.begin.offset,
                        records_of(t.records.len())
                    ),
                );
            }
            (_, open) => {
                let detail = match &open {
                    Some(t) => format!(
                        "{name} inside the metadata transaction begun at offset {} (MetadataBatchLoader.replay throws: \
                         \"Encountered BeginTransactionRecord while already in a transaction\"); the record is ignored",
                        t.begin.offset
                    ),
                    None => format!(
                        "{name} with no metadata transaction open (MetadataBatchLoader.replay throws: \
                         \"Encountered {name} without having seen a BeginTransactionRecord\"); the record is ignored"
                    ),
                };
                self.txn = open;
                self.image.notes.push(image::Note {
                    offset: at.offset,
                    record: r.name.clone(),
                    detail: detail.clone(),
                });
                self.finding(&at, Kind::MetadataReplayRejected, Severity::Error, detail);
            }
        }
    }

    /// The replay stops here: a transaction still open is not applied.
    fn finish(mut self) -> Loader {
        if let Some(t) = self.txn.take() {
            self.finding(
                &t.begin,
                Kind::MetadataTransactionOpen,
                Severity::Note,
                format!(
                    "the metadata transaction begun at offset {} is still open where the replay ends: {} not applied \
                     (MetadataBatchLoader publishes nothing while a transaction is in progress)",
                    t.begin.offset,
                    records_of(t.records.len())
                ),
            );
        }
        self
    }
}

/// "its 3 records are", "its record is", "it holds no record, so nothing is".
fn records_of(n: usize) -> String {
    match n {
        0 => "it holds no record, so nothing is".into(),
        1 => "its record is".into(),
        n => format!("its {n} records are"),
    }
}

/// Apply the metadata records of one file or partition, from offset `from`
/// and below `end`; control records are skipped. Returns the offsets applied.
fn replay_partition(
    p: &Partition,
    from: i64,
    end: Option<i64>,
    loader: &mut Loader,
    snapshot: bool,
) -> Result<Option<(i64, i64)>> {
    let mut scratch = Vec::new();
    let mut walk = if snapshot {
        p.walk(Policy::VALID_ENTRIES)
    } else {
        p.walk_from(from, Policy::VALID_ENTRIES)
    };
    let mut range: Option<(i64, i64)> = None;
    'walk: loop {
        let w = match walk.next_step()? {
            None => break,
            Some(Step::Entry(w)) => w,
            Some(Step::Damage(d)) => {
                loader.damaged(d.finding());
                continue;
            }
            Some(_) => continue,
        };
        let file = Rc::new(w.segment.log.clone());
        let Entry::V2(batch) = w.entry else {
            // KafkaRaftClient reads the metadata log as RecordBatch v2 only.
            loader.damaged(Finding::new(
                Kind::BadMagic,
                file.as_path(),
                w.entry.position(),
                Some(w.entry.base_offset()),
                "a legacy (magic 0/1) entry in the metadata log: Kafka's raft layer reads only RecordBatch v2",
            ));
            continue;
        };
        if batch.header.is_control() {
            // Control records (leader change, snapshot header/footer,
            // kraft version, voters) are not metadata records.
            continue;
        }
        let at_batch = |e: &crate::error::DecodeError| {
            Finding::decode(
                file.as_path(),
                batch.position,
                Some(batch.header.base_offset),
                e,
            )
        };
        let records = match batch.records(&mut scratch, DecodeLimits::default()) {
            Ok(r) => r,
            Err(e) => {
                loader.damaged(at_batch(&e));
                continue;
            }
        };
        for r in records {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    loader.damaged(at_batch(&e));
                    break;
                }
            };
            if !snapshot && (r.offset < from) {
                continue;
            }
            if !snapshot && end.is_some_and(|e| r.offset >= e) {
                break 'walk;
            }
            let Some(value) = r.value else {
                loader.damaged(Finding::new(
                    Kind::UnexpectedNull,
                    file.as_path(),
                    r.position,
                    Some(r.offset),
                    "a metadata record with a null value: Kafka's RecordsIterator throws \
                     (\"Missing value in the record when a value was expected\")",
                ));
                continue;
            };
            let at = Place {
                file: Rc::clone(&file),
                position: r.position.max(batch.position),
                offset: r.offset,
            };
            loader.record(at, value, snapshot);
            range = Some((range.map_or(r.offset, |(a, _)| a), r.offset));
        }
    }
    for d in walk.take_damage() {
        loader.damaged(d.finding());
    }
    Ok(range)
}

/// Replay the cluster image of the metadata folder `folder`: the newest
/// snapshot whose offset is at most `end` (every snapshot when `end` is
/// `None`), then the log's records from the snapshot's offset, below `end`.
/// Without a usable snapshot the log is read from its start, which must be
/// offset 0 (else records are missing and this is an error).
pub fn replay(folder: &Path, end: Option<i64>) -> Result<Replayed> {
    let snaps = snapshots(folder)?;
    let usable = snaps
        .iter()
        .rev()
        .find(|(o, _, _)| end.is_none_or(|e| *o <= e));
    let mut out = Replayed::default();
    let mut loader = Loader::default();
    let log = Partition::open(folder)?;
    let mut from = 0;
    if let Some((offset, epoch, path)) = usable {
        let sp = Partition::single_file(path, 0);
        out.snapshot_findings = check_snapshot(path)?;
        replay_partition(&sp, 0, None, &mut loader, true)?;
        out.snapshot = Some((path.clone(), *offset, *epoch));
        from = *offset;
    } else {
        let start = log.segments.first().map_or(0, |s| s.base_offset);
        if start > 0 {
            return Err(Error::layout(
                folder,
                format!(
                    "the log starts at offset {start} and no snapshot is at or below {}: the records before {start} are gone",
                    end.map_or("its end".to_string(), |e| e.to_string())
                ),
            ));
        }
    }
    out.log_range = replay_partition(&log, from, end, &mut loader, false)?;
    let loader = loader.finish();
    out.image = loader.image;
    out.findings = loader.findings;
    out.damage = loader.damage;
    out.next_offset = out.log_range.map_or(from, |(_, last)| last + 1);
    Ok(out)
}
