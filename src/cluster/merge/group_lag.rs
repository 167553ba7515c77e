//! Group lag across brokers: each offsets partition's committed offsets,
//! from its leader's summary, against the high watermark of the leader of
//! each partition the group read.

use std::collections::BTreeMap;

use super::super::broker_summary::AssignedPartition;
use super::{loaded_high_watermark, Found, GroupLag, LagStatus, PartitionStatus, PartitionVerdict};

/// The lag of every committed offset, from each offsets partition's leader.
pub(super) fn group_lag(
    partitions: &[PartitionVerdict],
    leaders: &BTreeMap<(&str, i32), Found<'_>>,
    assigned: &BTreeMap<(&str, i32), (&AssignedPartition, &str)>,
) -> Vec<GroupLag> {
    let by_key: BTreeMap<(&str, i32), &PartitionVerdict> = partitions
        .iter()
        .map(|p| ((p.topic.as_str(), p.partition), p))
        .collect();
    let mut rows = Vec::new();
    for (&(topic, partition), coordinator) in leaders {
        let Some(c) = &coordinator.dir.committed_offsets else {
            continue;
        };
        if c.offsets_topic != topic {
            continue;
        }
        let Some(&coordinator_node) = by_key
            .get(&(topic, partition))
            .and_then(|v| v.leader.as_ref())
        else {
            continue;
        };
        for o in c
            .offsets
            .iter()
            .filter(|o| o.offsets_partition == partition)
        {
            let key = (o.topic.as_str(), o.partition);
            let target = leaders.get(&key);
            let verdict = by_key.get(&key);
            let known = verdict.is_some() || assigned.contains_key(&key);
            let ends = target.map(|t| {
                let hw = t.p.high_watermark.map(|_| loaded_high_watermark(t.p));
                (t.p.log_start_offset, t.p.log_end_offset, hw)
            });
            let (status, lag) = match ends {
                _ if o.committed_offset < 0 && known => (LagStatus::NoCommittedOffset, None),
                None if verdict.is_some_and(|v| v.status == PartitionStatus::Lost) => {
                    (LagStatus::PartitionLost, None)
                }
                None => (LagStatus::NoPartition, None),
                Some((start, end, hw)) => {
                    // kafka-consumer-groups' lag, unclamped
                    // (`ConsumerGroupCommand.getLag`: end - offset).
                    let upto = hw.unwrap_or(end);
                    let lag = upto.saturating_sub(o.committed_offset);
                    if o.committed_offset < start {
                        (LagStatus::BelowLogStart, Some(lag))
                    } else if o.committed_offset > end {
                        (LagStatus::AboveLogEnd, Some(lag))
                    } else if hw.is_some_and(|hw| o.committed_offset > hw) {
                        (LagStatus::AboveHighWatermark, Some(lag))
                    } else {
                        (LagStatus::Ok, Some(lag))
                    }
                }
            };
            rows.push(GroupLag {
                group: o.group.clone(),
                topic: o.topic.clone(),
                partition: o.partition,
                committed_offset: o.committed_offset,
                commit_timestamp_ms: o.commit_timestamp_ms,
                offsets_partition: partition,
                coordinator: coordinator_node,
                leader: verdict.and_then(|v| v.leader),
                log_start_offset: ends.map(|e| e.0),
                log_end_offset: ends.map(|e| e.1),
                high_watermark: ends.and_then(|e| e.2),
                lag,
                status,
            });
        }
    }
    rows.sort_by(|a, b| (&a.group, &a.topic, a.partition).cmp(&(&b.group, &b.topic, b.partition)));
    rows
}
