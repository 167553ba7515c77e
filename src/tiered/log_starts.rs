//! Where a partition's log starts: Kafka's log start beside the start of
//! its local copy, with remote storage (KIP-405) or without.
//!
//! Without remote storage the two are one: the first segment's base
//! offset, or `log-start-offset-checkpoint` when higher (`LogLoader.load`:
//! `max(logStartOffsetCheckpoint, firstSegment.baseOffset)`; the
//! `UnifiedLog` constructor sets `logStartOffset = localLogStartOffset`).
//!
//! With it (`UnifiedLog.isRemoteLogEnabled`: the broker's
//! `remote.log.storage.system.enable`, the topic's `remote.storage.enable`,
//! a topic neither compacted nor internal), the records below the first
//! local segment live in remote segments, and:
//! - `LogLoader.load` takes the log start from the checkpoint alone (0
//!   without an entry: `LogManager` reads it with `getOrDefault(tp, 0L)`);
//! - the leader then raises it to where the remote log starts
//!   (`RemoteLogManager.RLMCopyTask.maybeUpdateLogStartOffsetOnBecomingLeader`:
//!   `findLogStartOffset`, the first remote segment's start offset, or the
//!   local log start when remote storage holds none;
//!   `UnifiedLog.updateLogStartOffsetFromRemoteTier` only raises it), and
//!   followers take the leader's; klog takes the first readable remote
//!   segment (COPY_SEGMENT_FINISHED) of `__remote_log_metadata`, when a
//!   directory given holds that metadata;
//! - the local log start is `max(logStartOffset, firstSegment.baseOffset)`
//!   (`UnifiedLog` constructor, `UnifiedLog.localLogStartOffset`), what
//!   ListOffsets `earliest-local` answers; `earliest` answers the log
//!   start.
//!
//! Offsets in `[log start, local log start)` are served from remote storage
//! (`RemoteLogManager.read`): a consumer committed there resumes there.

use serde::Serialize;

use crate::log::Partition;

/// Why klog takes a partition's log for one with remote storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, schemars::JsonSchema)]
#[serde(rename_all = "snake_case")]
pub enum TieredBy {
    /// The topic's `remote.storage.enable=true` in the KRaft metadata read.
    TopicConfig,
    /// `__remote_log_metadata` records name the partition.
    RemoteLogMetadata,
}

/// What klog knows of a partition's remote storage.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tiered {
    pub by: TieredBy,
    /// Whether a directory given held the partition's
    /// `__remote_log_metadata` records (so `remote` is known).
    pub metadata_read: bool,
    /// The first and last offsets of the readable remote segments (`None`:
    /// none, or no metadata read).
    pub remote: Option<(i64, i64)>,
}

/// A partition's log start, as Kafka serves it, and where its local copy
/// starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LogStarts {
    /// What `LogLoader.load` loads.
    pub loaded: i64,
    /// The local log start the `UnifiedLog` constructor sets on that load
    /// (what the broker logs as `local-log-start-offset` when it loads the
    /// log).
    pub loaded_local: i64,
    /// `UnifiedLog.logStartOffset` once a leader serves the partition
    /// (ListOffsets `earliest`).
    pub log_start: i64,
    /// `UnifiedLog.localLogStartOffset` (ListOffsets `earliest-local`).
    pub local_log_start: i64,
    /// Remote storage, when the partition has it.
    pub tiered: Option<Tiered>,
}

impl LogStarts {
    /// The starts of `p` given its `log-start-offset-checkpoint` entry and
    /// its remote storage, if any.
    pub fn of(p: &Partition, checkpointed: Option<i64>, tiered: Option<Tiered>) -> LogStarts {
        let first = p.segments.first().map(|s| s.base_offset);
        let Some(t) = tiered else {
            let start = p.log_start_offset(checkpointed);
            return LogStarts {
                loaded: start,
                loaded_local: start,
                log_start: start,
                local_log_start: start,
                tiered: None,
            };
        };
        let loaded = checkpointed.unwrap_or(0);
        let local_loaded = first.map_or(loaded, |f| f.max(loaded));
        let log_start = if t.metadata_read {
            loaded.max(t.remote.map_or(local_loaded, |(start, _)| start))
        } else {
            loaded
        };
        LogStarts {
            loaded,
            loaded_local: local_loaded,
            log_start,
            local_log_start: first.map_or(log_start, |f| f.max(log_start)),
            tiered: Some(t),
        }
    }

    /// Whether some offsets of the log live in remote segments only.
    pub fn has_remote_only(&self) -> bool {
        self.log_start < self.local_log_start
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::SegmentFiles;

    fn partition(bases: &[i64]) -> Partition {
        let dir = std::path::PathBuf::from("/nonexistent/t-0");
        Partition {
            dir: dir.clone(),
            topic: "t".into(),
            partition: 0,
            state: crate::log::PartitionState::Live,
            segments: bases
                .iter()
                .map(|&b| SegmentFiles {
                    base_offset: b,
                    log: dir.join(crate::log::segment_file_name(b, "log")),
                    index: None,
                    timeindex: None,
                })
                .collect(),
            unreadable: Vec::new(),
        }
    }

    #[test]
    fn without_remote_storage_the_first_segment_bounds_the_start() {
        let p = partition(&[32, 42]);
        let s = LogStarts::of(&p, Some(0), None);
        assert_eq!((s.log_start, s.local_log_start), (32, 32));
        assert_eq!(LogStarts::of(&p, Some(35), None).log_start, 35);
    }

    #[test]
    fn with_remote_storage_the_checkpoint_and_the_remote_log_say_the_start() {
        let p = partition(&[32, 42]);
        let by_config = Tiered {
            by: TieredBy::TopicConfig,
            metadata_read: false,
            remote: None,
        };
        let s = LogStarts::of(&p, Some(0), Some(by_config));
        assert_eq!((s.loaded, s.log_start, s.local_log_start), (0, 0, 32));
        // No entry: LogManager's default, 0.
        assert_eq!(LogStarts::of(&p, None, Some(by_config)).log_start, 0);
        // DeleteRecords inside the first local segment.
        let trimmed = LogStarts::of(&partition(&[10, 20]), Some(12), Some(by_config));
        assert_eq!((trimmed.log_start, trimmed.local_log_start), (12, 12));
        // The leader raises it to the first remote segment, or to the local
        // log start when remote storage holds nothing.
        let remote = |r| Tiered {
            by: TieredBy::RemoteLogMetadata,
            metadata_read: true,
            remote: r,
        };
        assert_eq!(
            LogStarts::of(&p, None, Some(remote(Some((20, 31))))).log_start,
            20
        );
        assert_eq!(
            LogStarts::of(&p, Some(25), Some(remote(Some((20, 31))))).log_start,
            25
        );
        assert_eq!(LogStarts::of(&p, None, Some(remote(None))).log_start, 32);
    }
}
