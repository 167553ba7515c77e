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
//!   and `hadCleanShutdown = false`).
//!
//! The cost here is what recovery re-reads: the segments and their bytes.
//! What it cuts is in [`crate::inspect::recovery`] (`verify-crc
//! --recovery-preview` shows it per partition).

use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::inspect::recovery::trusted_after_clean_shutdown;
use crate::log::checkpoint;
use crate::log::shutdown::{Shutdown, ShutdownState};
use crate::log::{DataDir, Partition, SegmentFiles};
use crate::tiered::Tiering;

/// What recovery re-reads of one partition.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct Recovered {
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
    /// The partitions recovery re-reads (the metadata log included), by
    /// topic and partition.
    pub recovered: Vec<Recovered>,
    /// Live partitions in the directory (the metadata log included).
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
        for p in dir.live() {
            partitions += 1;
            let point = points.get(&(p.topic.clone(), p.partition)).copied();
            let metadata = p.topic == crate::metadata::METADATA_TOPIC;
            let segs: Vec<&SegmentFiles> = if metadata {
                p.segments.iter().collect()
            } else if clean {
                let mut untrusted = Vec::new();
                for s in &p.segments {
                    if !trusted_after_clean_shutdown(s)? {
                        untrusted.push(s);
                    }
                }
                untrusted
            } else {
                let start = crate::inspect::recovery::first_recovered(p, point.unwrap_or(0));
                p.segments.iter().skip(start).collect()
            };
            let Some(first) = segs.first() else {
                continue;
            };
            recovered.push(Recovered {
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

/// What a broker's next start does to one partition (`LogLoader.load`):
/// the segments it recovers and re-reads, what recovery cuts and deletes,
/// the indexes it rebuilds, and the log start, log end and high watermark
/// it loads.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct PartitionRestart {
    pub topic: String,
    pub partition: i32,
    /// `.kafka_cleanshutdown` is present: recovery is skipped except for
    /// segments without a usable offset index.
    pub clean_shutdown: bool,
    /// The `recovery-point-offset-checkpoint` entry (0 without one, as
    /// `LogManager` reads a missing entry).
    pub recovery_point: i64,
    /// The first segment recovery reads (unclean shutdown).
    pub from_segment: Option<i64>,
    /// Segments recovered although the shutdown was clean.
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
    /// (`UnifiedLog.updateHighWatermark`).
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
    /// Predict the next start on `p`, a partition of the log directory
    /// whose state is `dir`, with what `tiering` knows of its remote
    /// storage; reads the segments recovery reads.
    pub fn predict(dir: &DirState, p: &Partition, tiering: &Tiering) -> Result<PartitionRestart> {
        use crate::inspect::recovery;
        let key = (p.topic.clone(), p.partition);
        let metadata = p.topic == crate::metadata::METADATA_TOPIC;
        let clean = dir.clean_shutdown && !metadata;
        let recovery_point = if metadata {
            0
        } else {
            dir.recovery_points.get(&key).copied().unwrap_or(0)
        };
        let mut out = PartitionRestart {
            topic: p.topic.clone(),
            partition: p.partition,
            clean_shutdown: clean,
            recovery_point,
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
        let mut log_end = p.log_end_offset()?;
        let mut cut_read: Option<(i64, u64)> = None;
        let recovered: Vec<&SegmentFiles> = if clean {
            let mut cut_end = None;
            let list = recovery::recovered_after_clean_shutdown(p)?;
            for (seg, damage) in &list {
                out.recovered_segments.push(seg.log.display().to_string());
                if let Some(d) = damage {
                    out.cuts.push(PlannedCut::at(&seg.log, d));
                    cut_end.get_or_insert(d.last_valid_offset.map_or(seg.base_offset, |o| o + 1));
                }
            }
            if let Some(end) = cut_end {
                log_end = log_end.min(end);
            }
            p.segments
                .iter()
                .filter(|s| list.iter().any(|(r, _)| r.log == s.log))
                .collect()
        } else {
            let pv = recovery::preview(p, recovery_point)?;
            out.from_segment = Some(pv.from_segment);
            // Recovery reads each segment up to its first invalid batch; past
            // a cut, the later segments are deleted unread.
            let mut last_read = i64::MAX;
            if let Some((seg, d)) = &pv.truncate {
                out.cuts.push(PlannedCut::at(&seg.log, d));
                log_end = d.last_valid_offset.map_or(seg.base_offset, |o| o + 1);
                last_read = seg.base_offset;
                cut_read = Some((seg.base_offset, d.position));
            }
            out.deleted_segments = pv
                .deleted
                .iter()
                .map(|s| s.log.display().to_string())
                .collect();
            out.lost_offsets = pv.lost_offsets.map(|(from, to)| [from, to - 1]);
            p.segments
                .iter()
                .filter(|s| s.base_offset >= pv.from_segment && s.base_offset <= last_read)
                .collect()
        };
        out.rescanned_segments = recovered.len() as u64;
        out.rescanned_bytes = recovered
            .iter()
            .map(|s| match cut_read {
                Some((base, position)) if base == s.base_offset => position,
                _ => file_len(&s.log),
            })
            .sum();
        out.rebuilt_indexes = 3 * recovered.len() as u64;
        let start_checkpoint = dir.log_starts.get(&key).copied();
        let starts = tiering.log_starts(p, start_checkpoint);
        out.log_start_offset = starts.loaded;
        out.local_log_start_offset = starts.loaded_local;
        out.log_end_offset = p.loaded_log_end(log_end, start_checkpoint);
        out.high_watermark = dir
            .high_watermarks
            .get(&key)
            .map(|&hw| hw.clamp(out.log_start_offset, out.log_end_offset));
        Ok(out)
    }
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
