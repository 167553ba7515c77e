//! Finding partitions and segments: a data directory is a folder of
//! partition folders; a partition folder is a folder of segments.
//!
//! Listings are sorted (partitions by topic then partition number, segments
//! by base offset), so everything built on them is deterministic.

use std::path::{Path, PathBuf};

use crate::error::{Error, Result};
use crate::log::findings::{Finding, Kind};
use crate::log::{parse_partition_dir, parse_segment_name};

/// What a partition folder's name says about it (serialized as
/// [`PartitionState::name`]).
#[derive(
    Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, schemars::JsonSchema,
)]
#[serde(rename_all = "snake_case")]
pub enum PartitionState {
    /// `<topic>-<partition>`: a live replica.
    Live,
    /// `…-delete`: scheduled for deletion.
    Delete,
    /// `…-future`: a replica being moved between log directories.
    Future,
    /// `…-stray`: a replica the cluster no longer assigns here.
    Stray,
}

impl PartitionState {
    /// Whether a broker loading a folder in this state recovers it
    /// (`LogLoader.load`, Kafka 3.9 to 4.4): every folder but a `-delete`
    /// one, for which `recoverLog` is skipped (recovery offsets 0, 0); the
    /// segment files of every folder are opened and sanity-checked first
    /// (`loadSegmentFiles`), a `-delete` one's included.
    pub fn recovered_on_load(self) -> bool {
        self != PartitionState::Delete
    }

    /// Lowercase name.
    pub fn name(self) -> &'static str {
        match self {
            PartitionState::Live => "live",
            PartitionState::Delete => "delete",
            PartitionState::Future => "future",
            PartitionState::Stray => "stray",
        }
    }
}

/// One segment's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SegmentFiles {
    pub base_offset: i64,
    pub log: PathBuf,
    pub index: Option<PathBuf>,
    pub timeindex: Option<PathBuf>,
}

/// A partition folder and its segments in offset order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partition {
    pub dir: PathBuf,
    pub topic: String,
    pub partition: i32,
    pub state: PartitionState,
    pub segments: Vec<SegmentFiles>,
    /// Entries named like segment files that cannot be read as such (a
    /// dangling symlink, a FIFO or a folder named `<digits>.log`), with why:
    /// reported by the checks, passed over by the readers.
    pub unreadable: Vec<Unreadable>,
}

impl Partition {
    /// Whether the folder holds a file only a partition folder has (a
    /// segment, `partition.metadata` or `leader-epoch-checkpoint`) or is
    /// empty, as a log is between its folder's creation and its first
    /// segment's (`UnifiedLog.create` makes the folder, then `LogLoader.load`
    /// adds a segment to a log that has none).
    pub fn holds_kafka_files(&self) -> bool {
        std::fs::read_dir(&self.dir).is_ok_and(|mut d| d.next().is_none())
            || !self.segments.is_empty()
            || !self.unreadable.is_empty()
            || self.dir.join(crate::log::meta::PARTITION_METADATA).exists()
            || self.dir.join(crate::log::checkpoint::LEADER_EPOCH).exists()
    }

    /// Open the partition folder at `dir` (its name must parse as `<topic>-<partition>`).
    pub fn open(dir: &Path) -> Result<Self> {
        let name = folder_name(dir).ok_or_else(|| Error::layout(dir, "has no folder name"))?;
        let name = name.as_str();
        let (topic, partition, state) = parse_partition_dir(name).ok_or_else(|| {
            Error::layout(
                dir,
                "folder name is not <topic>-<partition> (e.g. orders-0)",
            )
        })?;
        let (segments, unreadable) = scan_segments(dir)?;
        Ok(Partition {
            dir: dir.to_path_buf(),
            topic,
            partition,
            state,
            segments,
            unreadable,
        })
    }

    /// A lone segment file seen as a partition of one segment (no topic,
    /// no indexes), for passes that work per partition.
    pub fn single_file(log: &Path, base_offset: i64) -> Self {
        Partition {
            dir: log.parent().unwrap_or(Path::new(".")).to_path_buf(),
            topic: String::new(),
            partition: 0,
            state: PartitionState::Live,
            segments: vec![SegmentFiles {
                base_offset,
                log: log.to_path_buf(),
                index: None,
                timeindex: None,
            }],
            unreadable: Vec::new(),
        }
    }

    /// `<topic>-<partition>`.
    pub fn name(&self) -> String {
        format!("{}-{}", self.topic, self.partition)
    }

    /// Whether a broker's start loads this folder (see [`DataDir::loaded`]).
    pub fn loaded_on_start(&self) -> bool {
        self.state == PartitionState::Live || self.topic != METADATA_TOPIC
    }

    /// What reports call the folder: `<topic>-<partition>` when it is
    /// live, its own name (`<topic>-<partition>.<id>-future`) otherwise, so
    /// two folders of one partition are told apart.
    pub fn label(&self) -> String {
        match self.state {
            PartitionState::Live => self.name(),
            _ => folder_name(&self.dir).unwrap_or_else(|| self.name()),
        }
    }
}

/// An entry named like a segment file that is not a readable one, and why.
pub type Unreadable = (PathBuf, &'static str);

/// The name of the folder `dir` names: its last component, or, for `.`
/// and `..`, the name of the folder they resolve to.
pub fn folder_name(dir: &Path) -> Option<String> {
    match dir.file_name() {
        Some(n) => n.to_str().map(String::from),
        None => std::fs::canonicalize(dir)
            .ok()?
            .file_name()?
            .to_str()
            .map(String::from),
    }
}

/// Bytes of `.log` files under `paths` (files, partition folders, data
/// directories: two levels down), for a progress total; what cannot be
/// read counts nothing.
pub fn log_bytes<P: AsRef<Path>>(paths: &[P]) -> u64 {
    paths
        .iter()
        .flat_map(|p| walkdir::WalkDir::new(p).max_depth(2).into_iter().flatten())
        .filter(|e| e.path().extension().is_some_and(|x| x == "log"))
        .filter_map(|e| e.metadata().ok())
        .map(|m| m.len())
        .sum()
}

/// The segments of a partition folder, sorted by base offset; an entry
/// named like a segment that cannot be read (see [`scan_segments`]) is an
/// error here, for writers.
pub fn list_segments(dir: &Path) -> Result<Vec<SegmentFiles>> {
    let (segments, unreadable) = scan_segments(dir)?;
    if let Some((path, why)) = unreadable.into_iter().next() {
        return Err(Error::layout(path, why));
    }
    Ok(segments)
}

/// The segments of a partition folder, sorted by base offset, and the
/// entries named like segment files that are not readable ones: a dangling
/// symlink, a FIFO, a device or a folder.
pub fn scan_segments(dir: &Path) -> Result<(Vec<SegmentFiles>, Vec<Unreadable>)> {
    let mut logs = Vec::new();
    let mut unreadable = Vec::new();
    let mut indexes = std::collections::BTreeMap::new();
    let mut timeindexes = std::collections::BTreeMap::new();
    for entry in walkdir::WalkDir::new(dir)
        .min_depth(1)
        .max_depth(1)
        .sort_by_file_name()
    {
        let entry = entry.map_err(|e| walk_error(dir, e))?;
        let Some(name) = entry.file_name().to_str() else {
            continue;
        };
        let Some((base, suffix)) = parse_segment_name(name) else {
            continue;
        };
        let readable = if entry.file_type().is_symlink() {
            // A symlinked segment is read through its link.
            entry.path().is_file()
        } else {
            entry.file_type().is_file()
        };
        if !readable {
            if suffix == "log" {
                let why = if entry.file_type().is_symlink() {
                    "is a symlink that does not lead to a file"
                } else {
                    "is not a regular file (a FIFO, a device, a socket or a folder)"
                };
                unreadable.push((entry.path().to_path_buf(), why));
            }
            continue;
        }
        match suffix {
            "log" => logs.push((base, entry.path().to_path_buf())),
            "index" => {
                indexes.insert(base, entry.path().to_path_buf());
            }
            "timeindex" => {
                timeindexes.insert(base, entry.path().to_path_buf());
            }
            _ => {}
        }
    }
    logs.sort();
    let segments = logs
        .into_iter()
        .map(|(base_offset, log)| SegmentFiles {
            base_offset,
            log,
            index: indexes.remove(&base_offset),
            timeindex: timeindexes.remove(&base_offset),
        })
        .collect();
    Ok((segments, unreadable))
}

fn walk_error(dir: &Path, e: walkdir::Error) -> Error {
    let path = e.path().unwrap_or(dir).to_path_buf();
    match e.into_io_error() {
        Some(io) => Error::io(path, "list directory", io),
        None => Error::layout(path, "directory loop"),
    }
}

/// Tiered storage's index cache in a log directory (`RemoteIndexCache.DIR_NAME`),
/// which `LogManager.loadLogs` does not take for a log.
/// The metadata log's topic (`Topic.CLUSTER_METADATA_TOPIC_NAME`): a
/// folder of it that is not live is not loaded at a broker's start
/// ([`Partition::loaded_on_start`]).
pub const METADATA_TOPIC: &str = "__cluster_metadata";
const REMOTE_LOG_INDEX_CACHE: &str = "remote-log-index-cache";

/// A data directory (a broker's log directory, or one klog wrote).
#[derive(Debug, Clone)]
pub struct DataDir {
    pub path: PathBuf,
    /// Every partition folder, sorted by (topic, partition, state).
    pub partitions: Vec<Partition>,
    /// Sub-folders whose names are not partition folders (e.g. `__cluster_metadata-0`
    /// is listed as a partition; `remote-log-index-cache` lands here).
    pub other_dirs: Vec<PathBuf>,
}

impl DataDir {
    /// List the partition folders of `path`. A folder with no partition
    /// folders is an error: it is not a data directory.
    pub fn open(path: &Path) -> Result<Self> {
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "stat", e))?;
        if !meta.is_dir() {
            return Err(Error::layout(path, "is not a directory"));
        }
        let mut partitions = Vec::new();
        let mut other_dirs = Vec::new();
        for folder in folders(path) {
            let (entry, named) = folder?;
            match named {
                true => partitions.push(Partition::open(entry.path())?),
                false => other_dirs.push(entry.path().to_path_buf()),
            }
        }
        partitions.sort_by(|a, b| {
            (&a.topic, a.partition, a.state).cmp(&(&b.topic, b.partition, b.state))
        });
        if partitions.is_empty() {
            return Err(Error::layout(
                path,
                "holds no partition folders (<topic>-<partition>); is this a data directory?",
            ));
        }
        // A broker writes meta.properties into every log directory it
        // formats or starts on (`MetaPropertiesEnsemble`, ZooKeeper mode
        // included); a directory klog wrote has none, but its partition
        // folders hold segments. A folder of folders that merely have
        // names like `dbus-1` is neither.
        if !path.join(crate::log::meta::META_PROPERTIES).exists()
            && !partitions.iter().any(Partition::holds_kafka_files)
        {
            return Err(Error::layout(
                path,
                "is not a Kafka log directory: no meta.properties, and no folder named \
                 <topic>-<partition> is empty or holds a segment (<offset>.log), \
                 partition.metadata or leader-epoch-checkpoint",
            ));
        }
        Ok(DataDir {
            path: path.to_path_buf(),
            partitions,
            other_dirs,
        })
    }

    /// A finding for each folder of the directory that is not a partition
    /// folder ([`Kind::NotAPartitionFolder`], an error), which `verify-crc`,
    /// `info` and `summary` (so `cluster`) all report.
    ///
    /// Kafka 4.3's `LogManager.loadLogs` lists the log directory's
    /// sub-folders and, to choose the logs to load, calls
    /// `UnifiedLog.parseTopicPartitionName` (`LocalLog`) on every one but
    /// `remote-log-index-cache` (tiered storage's cache, skipped here too).
    /// For a name that is not `<topic>-<partition>` (or a well-formed
    /// `-delete`, `-future`, `-stray` name) it throws a `KafkaException`
    /// ("Found directory …, '…' is not in the form of topic-partition or
    /// topic-partition.uniqueId-delete …"). `loadLogs` catches only
    /// `IOException`, so the exception leaves `LogManager.startup`, and
    /// `BrokerMetadataPublisher.initializeManagers` hands it to the fatal
    /// fault handler ("Error starting LogManager"): the broker does not
    /// start, and no log of any of its directories is loaded.
    pub fn foreign_folder_findings(&self) -> Vec<Finding> {
        self.other_dirs
            .iter()
            .filter_map(|d| {
                let why = match d.file_name().map(|n| n.to_str()) {
                    Some(Some(REMOTE_LOG_INDEX_CACHE)) => return None,
                    Some(Some(_)) => {
                        "is not a partition folder (<topic>-<partition>): not read; a broker \
                         with this log directory fails to start (LogManager.loadLogs: \
                         UnifiedLog.parseTopicPartitionName throws KafkaException \"is not in \
                         the form of topic-partition\", and the broker stops on \"Error \
                         starting LogManager\"). Move the folder out of the log directory"
                    }
                    _ => {
                        "is a folder whose name is not UTF-8, so not a partition folder klog \
                         can read: not read; unless Kafka reads its name as \
                         <topic>-<partition>, a broker with this log directory fails to start \
                         (LogManager.loadLogs: UnifiedLog.parseTopicPartitionName throws \
                         KafkaException)"
                    }
                };
                Some(Finding::new(Kind::NotAPartitionFolder, d, 0, None, why))
            })
            .collect()
    }

    /// The live partitions.
    pub fn live(&self) -> impl Iterator<Item = &Partition> {
        self.partitions
            .iter()
            .filter(|p| p.state == PartitionState::Live)
    }

    /// The partition folders a broker's start loads, in listing order:
    /// every live one (the metadata log's through `KafkaRaftLog`), and the
    /// `-delete`, `-future` and `-stray` folders of every topic but the
    /// metadata topic. `LogManager.loadLogs` (Kafka 4.3 `LogManager.scala`,
    /// 4.4 `LogManager.java`) loads every folder of the log directory but
    /// `remote-log-index-cache` and `__cluster_metadata`'s, and `loadLog`
    /// runs `UnifiedLog.create` (the segments loaded and, but in a
    /// `-delete` folder, recovered: [`PartitionState::recovered_on_load`])
    /// before it looks at the name's suffix: a `-delete` log is then
    /// scheduled for deletion (`addLogToBeDeleted`, deleted
    /// file.delete.delay.ms later), a `-stray` one kept aside ("Loaded
    /// stray log"), a `-future` one becomes the partition's future replica.
    pub fn loaded(&self) -> impl Iterator<Item = &Partition> {
        self.partitions.iter().filter(|p| p.loaded_on_start())
    }
}

/// What a path given on the command line is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PathKind {
    /// A regular file.
    File,
    /// A partition folder (named `<topic>-<partition>`, holding segments or no partition folders).
    Partition,
    /// A folder of partition folders.
    DataDir,
}

/// Classify `path`. A folder named like a partition is a partition unless it
/// holds partition folders itself (a data directory may be called `data-1`).
pub fn classify(path: &Path) -> Result<PathKind> {
    let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "stat", e))?;
    if !meta.is_dir() {
        return Ok(PathKind::File);
    }
    let named = folder_name(path)
        .as_deref()
        .and_then(parse_partition_dir)
        .is_some();
    if named && (!scan_segments(path)?.0.is_empty() || !holds_partition_folders(path)?) {
        Ok(PathKind::Partition)
    } else {
        Ok(PathKind::DataDir)
    }
}

/// Whether `path` holds a folder named like a partition folder, from one
/// listing of `path` alone: a data directory's partitions are listed once,
/// by whoever reads them.
fn holds_partition_folders(path: &Path) -> Result<bool> {
    for folder in folders(path) {
        if folder?.1 {
            return Ok(true);
        }
    }
    Ok(false)
}

/// The folders in `path`, by name (a link to a folder is not one), each
/// with whether it is named like a partition folder.
fn folders(path: &Path) -> impl Iterator<Item = Result<(walkdir::DirEntry, bool)>> + '_ {
    walkdir::WalkDir::new(path)
        .min_depth(1)
        .max_depth(1)
        .sort_by_file_name()
        .into_iter()
        .filter_map(move |entry| match entry {
            Err(e) => Some(Err(walk_error(path, e))),
            Ok(entry) if entry.file_type().is_dir() => {
                let named = entry.file_name().to_str().and_then(parse_partition_dir);
                Some(Ok((entry, named.is_some())))
            }
            Ok(_) => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_folder_named_like_a_partition_is_a_data_directory_when_it_holds_partition_folders() {
        let tmp = tempfile::tempdir().unwrap();
        let at = |name: &str| tmp.path().join(name);
        let segment = "00000000000000000000.log";

        // `data-1` holding a partition folder: a data directory.
        std::fs::create_dir_all(at("data-1/orders-0")).unwrap();
        std::fs::write(at("data-1/orders-0").join(segment), b"").unwrap();
        assert_eq!(classify(&at("data-1")).unwrap(), PathKind::DataDir);
        assert_eq!(
            classify(&at("data-1/orders-0")).unwrap(),
            PathKind::Partition
        );

        // Named like a partition and holding segments: a partition, even
        // beside a folder named like one.
        std::fs::create_dir_all(at("logs-2/orders-0")).unwrap();
        std::fs::write(at("logs-2").join(segment), b"").unwrap();
        assert_eq!(classify(&at("logs-2")).unwrap(), PathKind::Partition);

        // Named like a partition, holding no partition folder (an empty
        // partition, one holding other folders, or a link to a folder,
        // which the listing of a data directory does not follow).
        std::fs::create_dir_all(at("orders-3")).unwrap();
        assert_eq!(classify(&at("orders-3")).unwrap(), PathKind::Partition);
        std::fs::create_dir_all(at("orders-4/notes")).unwrap();
        assert_eq!(classify(&at("orders-4")).unwrap(), PathKind::Partition);
        std::fs::create_dir_all(at("orders-5")).unwrap();
        std::os::unix::fs::symlink(at("data-1/orders-0"), at("orders-5/orders-0")).unwrap();
        assert_eq!(classify(&at("orders-5")).unwrap(), PathKind::Partition);
        assert!(DataDir::open(&at("orders-5")).is_err());

        // Not named like a partition: a data directory, whatever it holds.
        std::fs::create_dir_all(at("kafka-logs")).unwrap();
        assert_eq!(classify(&at("kafka-logs")).unwrap(), PathKind::DataDir);
        // A file.
        assert_eq!(
            classify(&at("data-1/orders-0").join(segment)).unwrap(),
            PathKind::File
        );
    }
}
