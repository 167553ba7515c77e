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
        let points = checkpoint::read_offsets(&data_dir.join(checkpoint::RECOVERY_POINT))
            .ok()
            .flatten()
            .unwrap_or_default();
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
                from_recovery_point(p, point)
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

/// The segments from the one holding `point` on (all without a point).
fn from_recovery_point(p: &Partition, point: Option<i64>) -> Vec<&SegmentFiles> {
    let start = point
        .and_then(|rp| p.segments.iter().rposition(|s| s.base_offset <= rp))
        .unwrap_or(0);
    p.segments.iter().skip(start).collect()
}

fn file_len(path: &Path) -> u64 {
    std::fs::metadata(path).map_or(0, |m| m.len())
}
