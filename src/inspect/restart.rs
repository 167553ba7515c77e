//! What a broker's next start does to a log directory, by the shutdown it
//! left behind ([`Shutdown`]) and `LogLoader`'s rules (Kafka 3.9 to 4.4):
//!
//! - after a clean shutdown, a partition's segments are trusted as they are,
//!   except a segment whose offset index is missing or not whole entries
//!   (`LogSegment.sanityCheck`), which is recovered (`LogLoader.loadSegmentFiles`);
//! - after an unclean one, every partition is recovered from the segment
//!   holding its recovery point (`recovery-point-offset-checkpoint`; every
//!   segment when it has no entry) to its end (`LogLoader.recoverLog`):
//!   each batch re-read and CRC-checked, the offset, time and transaction
//!   indexes rebuilt (`LogSegment.recover`), the log cut at the first
//!   invalid batch and every later segment deleted;
//! - the KRaft metadata log is recovered whole on every start, clean or
//!   not (`KafkaMetadataLog`/`KafkaRaftLog` open it with recovery point 0
//!   and `hadCleanShutdown = false`);
//! - `-future` and `-stray` folders are loaded and recovered as live ones,
//!   with their topic-partition's recovery point, and a `-delete` folder
//!   is loaded without `recoverLog`, only its segments without a usable
//!   offset index recovered, then deleted ([`DataDir::loaded`],
//!   [`crate::log::PartitionState::recovered_on_load`]); each is reported
//!   under its folder's name.
//!
//! The cost here is what recovery re-reads: the segments and their bytes.
//! What it cuts is in [`crate::inspect::recovery`] (`verify-crc
//! --recovery-preview` shows it per partition).

use std::path::{Path, PathBuf};

use serde::Serialize;

use crate::error::Result;
use crate::inspect::recovery::trusted_after_clean_shutdown;
use crate::log::checkpoint;
use crate::log::shutdown::{Shutdown, ShutdownState};
use crate::log::{DataDir, Partition, PartitionState, SegmentFiles};
use crate::tiered::Tiering;

/// What recovery re-reads of one partition folder.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Recovered {
    /// The folder: `<topic>-<partition>`, or the name of a `-delete`,
    /// `-future` or `-stray` folder.
    pub folder: String,
    pub topic: String,
    pub partition: i32,
    /// Its `recovery-point-offset-checkpoint` entry (`None`: no entry, so
    /// recovery starts at the first segment).
    pub recovery_point: Option<i64>,
    /// The first segment recovered (its base offset).
    pub from_segment: i64,
    pub segments: u64,
    pub bytes: u64,
}

/// A log directory's next start.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Restart {
    pub shutdown: Shutdown,
    /// The partition folders recovery re-reads (the metadata log
    /// included), by topic and partition.
    pub recovered: Vec<Recovered>,
    /// Partition folders a start loads ([`DataDir::loaded`]: the live
    /// ones, the metadata log included, and the `-delete`, `-future` and
    /// `-stray` ones).
    pub partitions: u64,
    /// Segments and bytes recovery re-reads, in all.
    pub segments: u64,
    pub bytes: u64,
}

impl Restart {
    /// Plan the next start on `data_dir`.
    pub fn plan(data_dir: &Path) -> Result<Restart> {
        let shutdown = Shutdown::read(data_dir);
        let dir = DataDir::open(data_dir)?;
        let points = DirState::read(data_dir).recovery_points;
        let clean = shutdown.state != ShutdownState::Unclean;
        let mut recovered = Vec::new();
        let mut partitions = 0;
        for p in dir.loaded() {
            partitions += 1;
            let point = points.get(&(p.topic.clone(), p.partition)).copied();
            let segs = Recovery::of(p, clean, point).segments(p)?;
            let Some(first) = segs.first() else {
                continue;
            };
            recovered.push(Recovered {
                folder: p.label(),
                topic: p.topic.clone(),
                partition: p.partition,
                recovery_point: point,
                from_segment: first.base_offset,
                segments: segs.len() as u64,
                bytes: segs.iter().map(|s| file_len(&s.log)).sum(),
            });
        }
        let segments = recovered.iter().map(|r| r.segments).sum();
        let bytes = recovered.iter().map(|r| r.bytes).sum();
        Ok(Restart {
            shutdown,
            recovered,
            partitions,
            segments,
            bytes,
        })
    }

    /// One line: how the broker went down and what its next start re-reads.
    pub fn headline(&self) -> String {
        let s = &self.shutdown;
        let who = match s.node_id {
            Some(n) => format!("node {n}"),
            None => "this directory".to_string(),
        };
        let plural =
            |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
        let bytes = format!(
            "{}, {}",
            plural(self.segments, "segment", "segments"),
            plural(self.bytes, "byte", "bytes")
        );
        let cost = |parts: usize| {
            format!(
                "{parts} of {}: {bytes}",
                plural(self.partitions, "partition", "partitions")
            )
        };
        let metadata_only = self
            .recovered
            .iter()
            .all(|r| r.topic == crate::metadata::METADATA_TOPIC);
        match s.state {
            ShutdownState::Clean => {
                let epoch = s
                    .broker_epoch
                    .map_or(String::new(), |e| format!(", broker epoch {e}"));
                if metadata_only {
                    format!(
                        "{who}: clean shutdown (.kafka_cleanshutdown{epoch}): a restart trusts every partition's \
                         files{}",
                        if self.recovered.is_empty() {
                            String::new()
                        } else {
                            format!("; it re-reads only the metadata log ({bytes})")
                        }
                    )
                } else {
                    format!(
                        "{who}: clean shutdown (.kafka_cleanshutdown{epoch}), but segments without a usable offset \
                         index are recovered: a restart re-reads {}",
                        cost(self.recovered.len())
                    )
                }
            }
            ShutdownState::Unclean => format!(
                "{who}: UNCLEAN shutdown (no .kafka_cleanshutdown: the broker was killed, crashed or lost power): a \
                 restart recovers from each partition's recovery point, re-reading {}",
                cost(self.recovered.len())
            ),
            ShutdownState::Running => format!(
                "{who}: running (its .lock is held{}): not shut down; what is read may change",
                s.lock_holder_pid
                    .map_or(String::new(), |p| format!(" by process {p}"))
            ),
            ShutdownState::NotABroker => format!(
                "{who}: no meta.properties and no .kafka_cleanshutdown: not a broker's log directory, no shutdown \
                 to judge"
            ),
        }
    }
}

/// How a start recovers one partition folder (`LogLoader.load`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Recovery {
    /// From the segment holding the recovery point to the end
    /// (`LogLoader.recoverLog`): after an unclean shutdown, and the
    /// metadata log (from 0) on every start.
    FromPoint(i64),
    /// Only the segments without a usable offset index
    /// (`LogLoader.loadSegmentFiles`): after a clean shutdown, and in a
    /// `-delete` folder whatever the shutdown.
    Untrusted,
}

impl Recovery {
    /// The recovery of `p` on a start after a shutdown that was `clean`
    /// (its marker present), `point` being its topic-partition's entry in
    /// `recovery-point-offset-checkpoint`.
    fn of(p: &Partition, clean: bool, point: Option<i64>) -> Recovery {
        if p.topic == crate::metadata::METADATA_TOPIC {
            Recovery::FromPoint(0)
        } else if clean || !p.state.recovered_on_load() {
            Recovery::Untrusted
        } else {
            Recovery::FromPoint(point.unwrap_or(0))
        }
    }

    /// The segments of `p` it reads.
    fn segments(self, p: &Partition) -> Result<Vec<&SegmentFiles>> {
        Ok(match self {
            Recovery::FromPoint(point) => {
                let start = crate::inspect::recovery::first_recovered(p, point);
                p.segments.iter().skip(start).collect()
            }
            Recovery::Untrusted => {
                let mut untrusted = Vec::new();
                for s in &p.segments {
                    if !trusted_after_clean_shutdown(s)? {
                        untrusted.push(s);
                    }
                }
                untrusted
            }
        })
    }
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}

/// A cut recovery makes: every byte of `file` from `position` on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PlannedCut {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    pub file: crate::log::findings::FileFields,
    pub position: u64,
    pub bytes: u64,
    pub error: String,
}

/// What a broker's next start does to one partition folder
/// (`LogLoader.load`): the segments it recovers and re-reads, what
/// recovery cuts and deletes, the indexes it rebuilds, and the log start,
/// log end and high watermark it loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PartitionRestart {
    /// The folder: `<topic>-<partition>`, or the name of a `-delete`,
    /// `-future` or `-stray` folder.
    pub folder: String,
    /// live, delete, future or stray (the folder name's suffix).
    pub state: PartitionState,
    pub topic: String,
    pub partition: i32,
    /// `.kafka_cleanshutdown` is present: recovery is skipped except for
    /// segments without a usable offset index.
    pub clean_shutdown: bool,
    /// Recovery runs from the recovery point (`LogLoader.recoverLog`):
    /// after an unclean shutdown, in a folder other than `-delete`.
    /// Otherwise only the segments without a usable offset index are
    /// recovered (`recovered_segments`).
    pub full_recovery: bool,
    /// The `recovery-point-offset-checkpoint` entry of the topic-partition
    /// (0 without one, as `LogManager` reads a missing entry).
    pub recovery_point: i64,
    /// The first segment recovery reads (full recovery).
    pub from_segment: Option<i64>,
    /// Segments recovered without a full recovery (no usable offset index).
    pub recovered_segments: Vec<String>,
    /// Segments and bytes recovery re-reads (the restart's cost).
    pub rescanned_segments: u64,
    pub rescanned_bytes: u64,
    /// Index files recovery rebuilds: the offset, time and transaction
    /// index of every segment it recovers (`LogSegment.recover`).
    pub rebuilt_indexes: u64,
    pub cuts: Vec<PlannedCut>,
    pub deleted_segments: Vec<String>,
    /// The offsets that disappear, first and last.
    pub lost_offsets: Option<[i64; 2]>,
    /// What the broker loads: the log start (`max(log-start-offset-checkpoint,
    /// first segment)`; for a topic with tiered storage the checkpoint
    /// alone, `LogLoader.load`, see [`crate::tiered::log_starts`]), the
    /// local log start (`max(log start, first segment)`, the same but for
    /// tiered storage), the log end after recovery, and the checkpointed
    /// high watermark clamped into `[log start, log end]`
    /// (`UnifiedLog.updateHighWatermark`, from `Partition.createLog`: none
    /// for a `-delete` or `-stray` folder, which no partition hosts).
    pub log_start_offset: i64,
    pub local_log_start_offset: i64,
    pub log_end_offset: i64,
    pub high_watermark: Option<i64>,
}

/// What a start reads from a log directory beside the partitions: its
/// clean-shutdown marker and checkpoints (read once for all its partitions).
#[derive(Debug, Clone, Default)]
pub struct DirState {
    pub clean_shutdown: bool,
    pub recovery_points: std::collections::BTreeMap<(String, i32), i64>,
    pub log_starts: std::collections::BTreeMap<(String, i32), i64>,
    pub high_watermarks: std::collections::BTreeMap<(String, i32), i64>,
}

impl DirState {
    /// Read `data_dir`'s marker and checkpoints (a missing or unreadable
    /// checkpoint holds no entry).
    pub fn read(data_dir: &Path) -> DirState {
        let offsets = |name: &str| {
            checkpoint::read_offsets(&data_dir.join(name))
                .ok()
                .flatten()
                .unwrap_or_default()
        };
        DirState {
            clean_shutdown: data_dir
                .join(crate::log::shutdown::CLEAN_SHUTDOWN_FILE)
                .exists(),
            recovery_points: offsets(checkpoint::RECOVERY_POINT),
            log_starts: offsets(checkpoint::LOG_START_OFFSET),
            high_watermarks: offsets(checkpoint::REPLICATION_OFFSET),
        }
    }
}

impl PartitionRestart {
    /// Predict the next start on `p`, a partition folder of the log
    /// directory whose state is `dir`, with what `tiering` knows of its
    /// remote storage; reads the segments recovery reads.
    pub fn predict(dir: &DirState, p: &Partition, tiering: &Tiering) -> Result<PartitionRestart> {
        let key = (p.topic.clone(), p.partition);
        let metadata = p.topic == crate::metadata::METADATA_TOPIC;
        let recovery = Recovery::of(
            p,
            dir.clean_shutdown,
            dir.recovery_points.get(&key).copied(),
        );
        let mut out = PartitionRestart {
            folder: p.label(),
            state: p.state,
            topic: p.topic.clone(),
            partition: p.partition,
            clean_shutdown: dir.clean_shutdown && !metadata,
            full_recovery: matches!(recovery, Recovery::FromPoint(_)),
            recovery_point: match recovery {
                Recovery::FromPoint(point) => point,
                Recovery::Untrusted => dir.recovery_points.get(&key).copied().unwrap_or(0),
            },
            from_segment: None,
            recovered_segments: Vec::new(),
            rescanned_segments: 0,
            rescanned_bytes: 0,
            rebuilt_indexes: 0,
            cuts: Vec::new(),
            deleted_segments: Vec::new(),
            lost_offsets: None,
            log_start_offset: 0,
            local_log_start_offset: 0,
            log_end_offset: 0,
            high_watermark: None,
        };
        let read = match recovery {
            Recovery::FromPoint(point) => out.recover_from(p, point)?,
            Recovery::Untrusted => out.recover_untrusted(p)?,
        };
        out.rescanned_segments = read.segments.len() as u64;
        out.rescanned_bytes = read
            .segments
            .iter()
            .map(|s| match read.cut {
                Some((base, position)) if base == s.base_offset => position,
                _ => file_len(&s.log),
            })
            .sum();
        out.rebuilt_indexes = 3 * read.segments.len() as u64;
        let start_checkpoint = dir.log_starts.get(&key).copied();
        let starts = tiering.log_starts(p, start_checkpoint);
        out.log_start_offset = starts.loaded;
        out.local_log_start_offset = starts.loaded_local;
        out.log_end_offset = p.loaded_log_end(read.log_end, start_checkpoint);
        out.high_watermark = dir
            .high_watermarks
            .get(&key)
            .filter(|_| p.state != PartitionState::Delete && p.state != PartitionState::Stray)
            .map(|&hw| hw.clamp(out.log_start_offset, out.log_end_offset));
        Ok(out)
    }

    /// Recovery of only the segments without a usable offset index
    /// (`LogLoader.loadSegmentFiles`), each cut at its damage.
    fn recover_untrusted<'p>(&mut self, p: &'p Partition) -> Result<Read<'p>> {
        let mut log_end = p.log_end_offset()?;
        let mut cut_end = None;
        let list = crate::inspect::recovery::recovered_after_clean_shutdown(p)?;
        for (seg, damage) in &list {
            self.recovered_segments.push(seg.log.display().to_string());
            if let Some(d) = damage {
                self.cuts.push(PlannedCut::at(&seg.log, d));
                cut_end.get_or_insert(d.last_valid_offset.map_or(seg.base_offset, |o| o + 1));
            }
        }
        if let Some(end) = cut_end {
            log_end = log_end.min(end);
        }
        Ok(Read {
            segments: p
                .segments
                .iter()
                .filter(|s| list.iter().any(|(r, _)| r.log == s.log))
                .collect(),
            cut: None,
            log_end,
        })
    }

    /// Recovery from the segment holding `point` (`LogLoader.recoverLog`):
    /// each segment read up to its first invalid batch; past a cut, the
    /// later segments are deleted unread.
    fn recover_from<'p>(&mut self, p: &'p Partition, point: i64) -> Result<Read<'p>> {
        let pv = crate::inspect::recovery::preview(p, point)?;
        self.from_segment = Some(pv.from_segment);
        let mut log_end = p.log_end_offset()?;
        let mut last_read = i64::MAX;
        let mut cut = None;
        if let Some((seg, d)) = &pv.truncate {
            self.cuts.push(PlannedCut::at(&seg.log, d));
            log_end = d.last_valid_offset.map_or(seg.base_offset, |o| o + 1);
            last_read = seg.base_offset;
            cut = Some((seg.base_offset, d.position));
        }
        self.deleted_segments = pv
            .deleted
            .iter()
            .map(|s| s.log.display().to_string())
            .collect();
        self.lost_offsets = pv.lost_offsets.map(|(from, to)| [from, to - 1]);
        Ok(Read {
            segments: p
                .segments
                .iter()
                .filter(|s| s.base_offset >= pv.from_segment && s.base_offset <= last_read)
                .collect(),
            cut,
            log_end,
        })
    }
}

/// What a start's recovery of one folder reads.
struct Read<'p> {
    /// The segments it re-reads.
    segments: Vec<&'p SegmentFiles>,
    /// The segment it cuts (base offset) and where: it is read up to there.
    cut: Option<(i64, u64)>,
    /// The log end after recovery.
    log_end: i64,
}

impl PlannedCut {
    /// The cut of `log` at the damage recovery finds there.
    fn at(log: &Path, d: &crate::inspect::recovery::Cut) -> Self {
        PlannedCut {
            file: crate::log::findings::FileFields::of(log),
            position: d.position,
            bytes: d.file_len - d.position,
            error: d.error.to_string(),
        }
    }
}

impl PartitionRestart {
    /// 1 when the start changes this folder: a full recovery that cuts,
    /// else each segment recovered for want of a usable offset index.
    pub fn changes(&self) -> u64 {
        if self.full_recovery {
            u64::from(!self.cuts.is_empty())
        } else {
            self.recovered_segments.len() as u64
        }
    }
}

/// The next start's prediction for each of `partitions` (each with its
/// data directory, as [`crate::inspect::targets::partitions`] lists them),
/// in order: every data directory's marker and checkpoints are read once,
/// and its tiered storage (a log with it loads its log start from the
/// checkpoint alone).
pub fn preview(partitions: Vec<(PathBuf, Partition)>) -> Result<Vec<(PathBuf, PartitionRestart)>> {
    let data_dirs: std::collections::BTreeSet<&PathBuf> =
        partitions.iter().map(|(d, _)| d).collect();
    let opened: Vec<DataDir> = data_dirs
        .into_iter()
        .filter_map(|d| DataDir::open(d).ok())
        .collect();
    let tiering = Tiering::for_dirs(&opened)?;
    let mut dirs: std::collections::BTreeMap<PathBuf, DirState> = Default::default();
    let mut out = Vec::new();
    for (data_dir, p) in partitions {
        let dir = dirs
            .entry(data_dir.clone())
            .or_insert_with(|| DirState::read(&data_dir));
        let restart = PartitionRestart::predict(dir, &p, &tiering)?;
        out.push((data_dir, restart));
    }
    Ok(out)
}
