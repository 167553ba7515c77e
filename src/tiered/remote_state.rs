//! What `__remote_log_metadata` says of each partition's remote segments,
//! replayed from the copies of its partitions in the data directories
//! given.
//!
//! Kafka's `TopicBasedRemoteLogMetadataManager` keeps every record of a
//! user partition (a `TopicIdPartition`) in one partition of the metadata
//! topic (`RemoteLogMetadataTopicPartitioner`), and its
//! `RemoteLogMetadataCache` folds them: a RemoteLogSegmentMetadataRecord
//! adds a segment (COPY_SEGMENT_STARTED), each
//! RemoteLogSegmentMetadataUpdateRecord moves it on (COPY_SEGMENT_FINISHED:
//! readable from remote storage; DELETE_SEGMENT_STARTED and
//! DELETE_SEGMENT_FINISHED: going, gone), a
//! RemotePartitionDeleteMetadataRecord marks the partition's remote data
//! deleted. klog folds them the same way, in offset order; an update of a
//! segment it has not seen is passed over, as the cache refuses it
//! (`RemoteResourceNotFoundException`), and records that do not decode are
//! counted.
//!
//! When several directories hold a copy of the same metadata partition
//! (replicas on several brokers), the copy reaching furthest is read.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

use std::collections::BTreeMap;

use crate::error::Result;
use crate::format::{DecodeLimits, Entry};
use crate::log::{DataDir, Partition, Policy};

use super::remote_records::{
    decode_remote_log_metadata, PartitionDeleteState, RemoteLogMetadata, SegmentState,
    TopicIdPartition,
};

/// The metadata topic of KIP-405's `TopicBasedRemoteLogMetadataManager`.
pub const REMOTE_LOG_METADATA_TOPIC: &str = "__remote_log_metadata";

/// One remote segment, in its latest state.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteSegment {
    /// The segment's uuid (`RemoteLogSegmentId.id`).
    pub id: String,
    pub start_offset: i64,
    pub end_offset: i64,
    pub state: SegmentState,
    /// Its transaction index holds no aborted transaction.
    pub txn_index_empty: bool,
    pub size_in_bytes: i32,
    /// The largest record timestamp in the segment.
    pub max_timestamp_ms: i64,
}

impl RemoteSegment {
    /// Copied and not being deleted: readable from remote storage
    /// (COPY_SEGMENT_FINISHED).
    pub fn readable(&self) -> bool {
        self.state == SegmentState::CopySegmentFinished
    }
}

/// The remote segments of one partition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemotePartition {
    pub partition: TopicIdPartition,
    /// By start offset (then id).
    pub segments: Vec<RemoteSegment>,
    /// The partition's remote data is being or was deleted (topic deletion).
    pub delete_state: Option<PartitionDeleteState>,
    /// The number of the last record that named it, in reading order.
    last_named: u64,
}

impl RemotePartition {
    /// The readable segments (COPY_SEGMENT_FINISHED).
    pub fn readable(&self) -> impl Iterator<Item = &RemoteSegment> {
        self.segments.iter().filter(|s| s.readable())
    }

    /// The first and last offsets the readable segments hold (`None`: no
    /// readable segment). The last is what ListOffsets `latest-tiered`
    /// answers (`RemoteLogManager.findHighestRemoteOffset`).
    pub fn range(&self) -> Option<(i64, i64)> {
        let start = self.readable().map(|s| s.start_offset).min()?;
        let end = self.readable().map(|s| s.end_offset).max()?;
        Some((start, end))
    }
}

/// Every partition `__remote_log_metadata` speaks of, in the directories
/// read.
#[derive(Debug, Clone, Default)]
pub struct RemoteMetadata {
    partitions: BTreeMap<TopicIdPartition, RemotePartition>,
    /// The metadata partitions read (their numbers).
    pub metadata_partitions: Vec<i32>,
    /// Records that did not decode (Kafka's consumer of the topic fails on them).
    pub undecoded: u64,
    /// Records read.
    records: u64,
}

impl RemoteMetadata {
    /// Replay the `__remote_log_metadata` partitions of `dirs`.
    pub fn read(dirs: &[&DataDir]) -> Result<RemoteMetadata> {
        // Per metadata partition, the copy reaching furthest (the first on a tie).
        let mut copies: BTreeMap<i32, (&Partition, i64)> = BTreeMap::new();
        for d in dirs {
            for p in d.live().filter(|p| p.topic == REMOTE_LOG_METADATA_TOPIC) {
                let end = p.log_end_offset()?;
                if copies.get(&p.partition).is_none_or(|(_, e)| end > *e) {
                    copies.insert(p.partition, (p, end));
                }
            }
        }
        let mut out = RemoteMetadata {
            metadata_partitions: copies.keys().copied().collect(),
            ..RemoteMetadata::default()
        };
        for (p, _) in copies.values() {
            out.replay(p)?;
        }
        for rp in out.partitions.values_mut() {
            rp.segments
                .sort_by(|a, b| (a.start_offset, &a.id).cmp(&(b.start_offset, &b.id)));
        }
        Ok(out)
    }

    /// The remote segments of `topic`-`partition`: of its topic id when
    /// known, else of the topic id the metadata names last.
    pub fn get(
        &self,
        topic: &str,
        partition: i32,
        topic_id: Option<&str>,
    ) -> Option<&RemotePartition> {
        let mut named = self
            .partitions
            .values()
            .filter(|rp| rp.partition.topic == topic && rp.partition.partition == partition);
        match topic_id {
            Some(id) => named.find(|rp| rp.partition.topic_id == id),
            None => named.max_by_key(|rp| rp.last_named),
        }
    }

    fn replay(&mut self, p: &Partition) -> Result<()> {
        let mut scratch = Vec::new();
        let mut walk = p.walk(Policy::VALID_ENTRIES);
        while let Some(w) = walk.next_entry()? {
            let Entry::V2(b) = w.entry else {
                continue;
            };
            if b.header.is_control() {
                continue;
            }
            let Ok(records) = b.records(&mut scratch, DecodeLimits::default()) else {
                continue;
            };
            for r in records.flatten() {
                self.records += 1;
                match r.value.map(decode_remote_log_metadata) {
                    Some(Ok(m)) => self.apply(m),
                    _ => self.undecoded += 1,
                }
            }
        }
        Ok(())
    }

    /// `RemoteLogMetadataCache`'s fold of one record.
    fn apply(&mut self, m: RemoteLogMetadata) {
        match m {
            RemoteLogMetadata::Segment(id, s) => {
                let rp = self.partition_mut(id.partition);
                rp.segments.retain(|x| x.id != id.id);
                rp.segments.push(RemoteSegment {
                    id: id.id,
                    start_offset: s.start_offset,
                    end_offset: s.end_offset,
                    state: s.state,
                    txn_index_empty: s.txn_index_empty,
                    size_in_bytes: s.size_in_bytes,
                    max_timestamp_ms: s.max_timestamp_ms,
                });
            }
            RemoteLogMetadata::Update { id, state, .. } => {
                let records = self.records;
                if let Some(rp) = self.partitions.get_mut(&id.partition) {
                    if let Some(seg) = rp.segments.iter_mut().find(|s| s.id == id.id) {
                        seg.state = state;
                        rp.last_named = records;
                    }
                }
            }
            RemoteLogMetadata::PartitionDelete {
                partition, state, ..
            } => self.partition_mut(partition).delete_state = Some(state),
            // Written to the manager's snapshot files, not to the topic.
            RemoteLogMetadata::Snapshot { .. } => {}
        }
    }

    fn partition_mut(&mut self, tp: TopicIdPartition) -> &mut RemotePartition {
        let rp = self
            .partitions
            .entry(tp.clone())
            .or_insert_with(|| RemotePartition {
                partition: tp,
                segments: Vec::new(),
                delete_state: None,
                last_named: 0,
            });
        rp.last_named = self.records;
        rp
    }
}
