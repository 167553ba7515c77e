//! Group lag across brokers: each offsets partition's committed offsets,
//! from its leader's summary, against the high watermark of the leader of
//! each partition the group read.

use std::collections::BTreeMap;

use super::super::broker_summary::AssignedPartition;
use super::super::epochs::ReplicaLog;
use super::replicas::serving_log;
use super::{
    loaded_high_watermark, Found, GroupLag, LagStatus, Landing, LandsUnder, PartitionStatus,
    PartitionVerdict,
};

/// The lag of every committed offset, from each offsets partition's leader.
pub(super) fn group_lag(
    partitions: &[PartitionVerdict],
    leaders: &BTreeMap<(&str, i32), Found<'_>>,
    found: &BTreeMap<(&str, i32), BTreeMap<i32, Found<'_>>>,
    assigned: &BTreeMap<(&str, i32), (&AssignedPartition, &str)>,
) -> Vec<GroupLag> {
    let by_key: BTreeMap<(&str, i32), &PartitionVerdict> = partitions
        .iter()
        .map(|p| ((p.topic.as_str(), p.partition), p))
        .collect();
    let mut rows = Vec::new();
    let mut logs: BTreeMap<((&str, i32), i32), Option<ReplicaLog>> = BTreeMap::new();
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
            // Where the consumer lands on the log `node` serves once elected
            // (its new epoch included), that log built once per partition
            // and leader: every commit of the partition lands on it.
            let mut lands_on = |node: i32| -> Option<Landing> {
                let log = logs.entry((key, node)).or_insert_with(|| {
                    let copies = found.get(&key)?;
                    Some(serving_log(
                        *copies.get(&node)?,
                        copies,
                        assigned.get(&key).map(|(a, _)| *a),
                        verdict?.leader_source,
                    ))
                });
                log.as_ref()
                    .map(|l| landing(o.committed_offset, o.leader_epoch, l))
            };
            let lands = target
                .and(verdict.and_then(|v| v.leader))
                .and_then(&mut lands_on);
            let lands_under: Vec<LandsUnder> = verdict
                .map(|v| v.outcomes.as_slice())
                .unwrap_or_default()
                .iter()
                .filter_map(|outcome| {
                    Some(LandsUnder {
                        leader: outcome.leader,
                        lands: lands_on(outcome.leader)?,
                    })
                })
                .collect();
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
                committed_leader_epoch: o.leader_epoch,
                lands,
                lands_under,
            });
        }
    }
    rows.sort_by(|a, b| (&a.group, &a.topic, a.partition).cmp(&(&b.group, &b.topic, b.partition)));
    rows
}

/// Where a consumer resuming at `committed` (with leader epoch `epoch`)
/// lands on the log its leader serves (see [`Landing`]).
fn landing(committed: i64, epoch: i32, log: &ReplicaLog) -> Landing {
    let reset = Landing::Reset {
        earliest: log.log_start,
        latest: log.log_end,
    };
    if committed < 0 {
        return reset;
    }
    if epoch >= 0 {
        return match log.cache.end_offset_for(epoch, log.log_end) {
            None => reset,
            Some((_, end)) if end < committed => Landing::DivergencePoint { offset: end },
            Some(_) if committed < log.log_start => reset,
            Some(_) => Landing::Resumes { offset: committed },
        };
    }
    if committed < log.log_start || committed > log.log_end {
        reset
    } else {
        Landing::Resumes { offset: committed }
    }
}
