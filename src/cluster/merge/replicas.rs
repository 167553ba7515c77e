//! Each replica of a partition against its leader: Kafka's truncation,
//! then the epoch checksums below the truncation point.

use std::collections::{BTreeMap, BTreeSet};

use super::super::broker_summary::{AssignedPartition, PartitionSummary};
use super::super::epochs::{truncate_follower, ReplicaLog};
use super::leader::Rules;
use super::{
    choose_leader, latest_epoch, loaded_high_watermark, replica_log, Candidate, Found,
    LeaderOutcome, LeaderSource, PartitionStatus, PartitionVerdict, ReplicaState, ReplicaVerdict,
};

/// What the metadata says of elections: whether eligible leader replicas
/// are on, which topics allow an unclean election, and each broker's
/// registered epoch (against which its clean-shutdown marker is judged).
#[derive(Debug, Default)]
pub(super) struct ElectionFacts<'m> {
    pub elr: bool,
    pub unclean_topics: BTreeSet<&'m str>,
    pub registered: BTreeMap<i32, i64>,
}

impl ElectionFacts<'_> {
    fn rules(&self, topic: &str) -> Rules {
        Rules {
            elr: self.elr,
            unclean: self.unclean_topics.contains(topic),
        }
    }

    /// Node `node`'s broker registers again as after an unclean shutdown
    /// ([`registers_unclean`](super::leader::registers_unclean)).
    fn unclean_restart(
        &self,
        node: i32,
        dir: &crate::cluster::broker_summary::LogDirSummary,
    ) -> bool {
        super::leader::registers_unclean(
            dir.shutdown_state(),
            dir.broker_epoch,
            self.registered.get(&node).copied(),
        )
    }
}

pub(super) fn partition_verdict<'a>(
    (topic, partition): (&str, i32),
    all_found: &BTreeMap<i32, Found<'a>>,
    registration: Option<(&AssignedPartition, &str)>,
    nodes: &BTreeSet<i32>,
    election: &ElectionFacts<'_>,
) -> (PartitionVerdict, Option<Found<'a>>) {
    let assigned = registration.map(|(a, _)| a);
    // A copy whose partition.metadata names another topic id belongs to a
    // deleted topic of the same name: not a replica of this one.
    let other_topic = |f: &Found<'_>| match (registration, f.p.topic_id.as_deref()) {
        (Some((_, id)), Some(theirs)) => theirs != id,
        _ => false,
    };
    let found: BTreeMap<i32, Found<'a>> = all_found
        .iter()
        .filter(|(_, f)| !other_topic(f))
        .map(|(n, f)| (*n, *f))
        .collect();
    let found = &found;
    let is_assigned = |n: i32| assigned.map(|a| a.replicas.contains(&n));
    // Copies the metadata does not place here are reported, not judged.
    let candidates: Vec<(i32, Found<'a>)> = found
        .iter()
        .filter(|(n, _)| is_assigned(**n) != Some(false))
        .map(|(n, f)| (*n, *f))
        .collect();
    let copies: Vec<Candidate> = candidates
        .iter()
        .map(|(n, f)| Candidate {
            node: *n,
            latest_epoch: latest_epoch(f.p),
            log_end: f.p.log_end_offset,
            unclean_restart: election.unclean_restart(*n, f.dir),
        })
        .collect();
    let chosen = choose_leader(&copies, assigned, election.rules(topic));
    let (leader, mut source, mut detail) = (chosen.leader, chosen.source, chosen.detail);
    let mut zookeeper = zookeeper_eligible(&candidates, assigned);
    if assigned.is_none() && election.unclean_topics.contains(topic) && candidates.len() > 1 {
        // An unclean election may elect any replica that comes back first.
        if zookeeper.is_empty() {
            zookeeper.extend(leader);
        }
        for (n, _) in &candidates {
            if !zookeeper.contains(n) {
                zookeeper.push(*n);
            }
        }
    }
    if let [first, _, ..] = zookeeper.as_slice() {
        let names: Vec<String> = zookeeper.iter().map(i32::to_string).collect();
        source = LeaderSource::Undecided;
        detail = format!(
            "ZooKeeper mode: the leader and ISR live in ZooKeeper, not on these disks; any of nodes {} ({}) \
             can be elected: the outcome under each is shown (judged here against node {})",
            names.join(", "),
            if election.unclean_topics.contains(topic) {
                "the topic allows an unclean election"
            } else {
                "each holds every record below the high watermark"
            },
            leader.unwrap_or(*first)
        );
    }
    let leader_found = leader.and_then(|l| found.get(&l).copied());
    let judge = |leader: Option<i32>, source: LeaderSource| {
        judge_replicas(
            leader,
            source,
            found,
            all_found,
            assigned,
            nodes,
            &candidates,
        )
    };
    let (replicas, mut status) = judge(leader, source);
    let mut outcomes = Vec::new();
    let eligible = match assigned {
        Some(_) => chosen.outcomes,
        None => zookeeper.clone(),
    };
    if source == LeaderSource::Undecided {
        for n in eligible {
            let (replicas, outcome) = judge(Some(n), source);
            status = status.max(outcome);
            outcomes.push(LeaderOutcome {
                leader: n,
                status: outcome,
                replicas,
            });
        }
    }
    if leader.is_none() && status != PartitionStatus::Lost && assigned.is_some() {
        status = PartitionStatus::Offline;
    }
    if status == PartitionStatus::Lost {
        let strays: Vec<String> = found.keys().map(|n| n.to_string()).collect();
        detail = if strays.is_empty() {
            "no replica in any summary".to_string()
        } else {
            format!(
                "no assigned replica in any summary; a copy the metadata does not assign is on node {}",
                strays.join(", ")
            )
        };
    }
    let verdict = PartitionVerdict {
        topic: topic.to_string(),
        partition,
        status,
        assigned_replicas: assigned.map(|a| a.replicas.clone()),
        isr: assigned.map(|a| a.isr.clone()),
        leader,
        leader_source: source,
        leader_epoch: assigned.map(|a| a.leader_epoch),
        log_end_offset: leader_found.map(|f| f.p.log_end_offset),
        high_watermark: leader_found
            .and_then(|f| f.p.high_watermark.map(|_| loaded_high_watermark(f.p))),
        replicas,
        outcomes,
        detail,
    };
    (verdict, leader_found)
}

/// The replicas of a partition judged against `leader` (chosen as
/// `source` says), those the metadata assigns but no summary holds
/// included, and the partition's status under that leader.
/// In ZooKeeper mode (no KRaft metadata; `meta.properties` version 0) the
/// controller's choice is not on disk: the controller elects a live ISR
/// member (`PartitionLeaderElectionAlgorithms.offlinePartitionLeaderElection`),
/// and every ISR member holds every record below the high watermark. So the
/// eligible replicas are those whose log reaches the highest checkpointed
/// high watermark among the copies, in the order the chosen leader would
/// be (newest epoch, longest log, lowest node). Empty outside ZooKeeper
/// mode, with fewer than two eligible, or when they all end alike.
fn zookeeper_eligible(
    candidates: &[(i32, Found<'_>)],
    assigned: Option<&AssignedPartition>,
) -> Vec<i32> {
    let zookeeper = assigned.is_none()
        && !candidates.is_empty()
        && candidates
            .iter()
            .all(|(_, f)| f.dir.meta_version == Some(0));
    if !zookeeper {
        return Vec::new();
    }
    let hw = candidates
        .iter()
        .filter_map(|(_, f)| f.p.high_watermark)
        .max()
        .unwrap_or(0);
    let mut eligible: Vec<&(i32, Found<'_>)> = candidates
        .iter()
        .filter(|(_, f)| f.p.log_end_offset >= hw)
        .collect();
    eligible.sort_by_key(|(n, f)| {
        (
            std::cmp::Reverse(latest_epoch(f.p)),
            std::cmp::Reverse(f.p.log_end_offset),
            *n,
        )
    });
    // Replicas with the same newest epoch and log end give the same
    // outcome whichever is elected: nothing to choose between.
    let same = eligible.windows(2).all(|w| {
        let key = |f: &Found<'_>| (latest_epoch(f.p), f.p.log_end_offset);
        key(&w[0].1) == key(&w[1].1)
    });
    if eligible.len() < 2 || same {
        return Vec::new();
    }
    eligible.into_iter().map(|(n, _)| *n).collect()
}

/// The log `leader` serves once elected: its own, its epoch cache given
/// the epoch it leads in from its log end (`Partition.makeLeader`): the
/// metadata's epoch when the metadata names it, else the next one the
/// controller assigns; with no metadata (ZooKeeper mode), one above every
/// epoch any replica has seen. Followers truncate against it, and a
/// consumer's committed epoch is validated against it.
pub(super) fn serving_log(
    leader: Found<'_>,
    found: &BTreeMap<i32, Found<'_>>,
    assigned: Option<&AssignedPartition>,
    source: LeaderSource,
) -> ReplicaLog {
    let mut log = replica_log(leader.p);
    let epoch = match (assigned, source) {
        (Some(a), LeaderSource::Metadata) => Some(a.leader_epoch),
        (Some(a), _) => Some(a.leader_epoch.saturating_add(1)),
        (None, _) => found
            .values()
            .filter_map(|f| latest_epoch(f.p))
            .max()
            .map(|e| e.saturating_add(1)),
    };
    if let Some(epoch) = epoch {
        log.cache.assign(epoch, log.log_end);
    }
    log
}

fn judge_replicas(
    leader: Option<i32>,
    source: LeaderSource,
    found: &BTreeMap<i32, Found<'_>>,
    all_found: &BTreeMap<i32, Found<'_>>,
    assigned: Option<&AssignedPartition>,
    nodes: &BTreeSet<i32>,
    candidates: &[(i32, Found<'_>)],
) -> (Vec<ReplicaVerdict>, PartitionStatus) {
    let is_assigned = |n: i32| assigned.map(|a| a.replicas.contains(&n));
    let leader_found = leader.and_then(|l| found.get(&l).copied());
    let leader_log = leader_found.map(|f| serving_log(f, found, assigned, source));
    let leader_side = match (leader, &leader_log, leader_found) {
        (Some(n), Some(log), Some(f)) => Some(LeaderSide {
            node: n,
            log,
            checkpoints: checkpoints(f.p),
            cleaner_offset: f.p.cleaner_offset,
        }),
        _ => None,
    };
    let mut replicas = Vec::new();
    for (&node, f) in found {
        replicas.push(replica_verdict(
            node,
            *f,
            leader_side.as_ref(),
            is_assigned(node),
        ));
    }
    let mut missing = Vec::new();
    for &node in assigned.map(|a| a.replicas.as_slice()).unwrap_or_default() {
        if found.contains_key(&node) || missing.contains(&node) {
            continue;
        }
        missing.push(node);
        let why = if let Some(f) = all_found.get(&node) {
            format!(
                "node {node}'s copy is of another topic of this name (topic id {})",
                f.p.topic_id.as_deref().unwrap_or("-")
            )
        } else if nodes.contains(&node) {
            format!("node {node}'s summaries have no folder for it")
        } else {
            format!("no summary from node {node}")
        };
        replicas.push(ReplicaVerdict {
            assigned: Some(true),
            detail: why,
            ..ReplicaVerdict::new(node, ReplicaState::Missing)
        });
    }
    let judged = || replicas.iter().filter(|r| r.assigned != Some(false));
    let status = if candidates.is_empty() {
        PartitionStatus::Lost
    } else if judged().any(|r| r.state == ReplicaState::Diverged) {
        PartitionStatus::Diverged
    } else if judged().any(|r| matches!(r.state, ReplicaState::Missing | ReplicaState::Behind)) {
        PartitionStatus::UnderReplicated
    } else {
        PartitionStatus::Ok
    };
    (replicas, status)
}

/// The leader, as followers are judged against it.
struct LeaderSide<'a> {
    node: i32,
    log: &'a ReplicaLog,
    checkpoints: Checkpoints,
    cleaner_offset: Option<i64>,
}

fn replica_verdict(
    node: i32,
    f: Found<'_>,
    leader: Option<&LeaderSide<'_>>,
    assigned: Option<bool>,
) -> ReplicaVerdict {
    let p = f.p;
    let mut v = ReplicaVerdict {
        assigned,
        summary: Some(f.file.display().to_string()),
        log_start_offset: Some(p.log_start_offset),
        log_end_offset: Some(p.log_end_offset),
        high_watermark: p.high_watermark,
        leader_epoch: latest_epoch(p),
        detail: if assigned == Some(false) {
            "not assigned to this node by the metadata (a stray copy)".to_string()
        } else {
            String::new()
        },
        ..ReplicaVerdict::new(node, ReplicaState::InSync)
    };
    let Some(leader) = leader else {
        return v;
    };
    if leader.node == node {
        v.state = ReplicaState::Leader;
        return v;
    }
    let t = truncate_follower(&replica_log(p), leader.log);
    let leader_summary_end = leader.log.log_end;
    v.truncation_offset = Some(t.offset);
    // Below the truncation point, the checksums of what both hold must agree.
    let cleaned = p.cleaner_offset.max(leader.cleaner_offset);
    let check = compare(
        p,
        &leader.checkpoints,
        t.offset,
        cleaned.unwrap_or(i64::MIN),
    );
    let cut = !t.fully && t.offset < p.log_end_offset;
    let differs = check.mismatch.filter(|&m| m < p.log_end_offset);
    v.verified_through = check.verified_through;
    let note = |v: &mut ReplicaVerdict, s: String| {
        if !v.detail.is_empty() {
            v.detail.push_str("; ");
        }
        v.detail.push_str(&s);
    };
    if cut || differs.is_some() {
        let from = differs.map_or(t.offset, |m| m.min(t.offset));
        let (n, exact) = batches_from(p, from);
        v.state = ReplicaState::Diverged;
        v.divergence_offset = Some(from);
        v.batches_beyond = Some(n);
        v.batches_beyond_exact = Some(exact);
        v.behind_by = Some(leader_summary_end.saturating_sub(from).max(0));
        let batches = if exact {
            format!("{n} batches")
        } else {
            format!("at least {n} batches")
        };
        match differs {
            Some(m) if m < t.offset || !cut => note(
                &mut v,
                format!(
                    "its batches from offset {m} differ from the leader's (epoch checksums), below where Kafka truncates ({}): Kafka keeps them; {batches} from {from}",
                    t.offset
                ),
            ),
            _ => note(
                &mut v,
                format!(
                    "Kafka truncates it to {} ({}); {batches} from {from} to its log end {} go",
                    t.offset,
                    t.steps.join("; "),
                    p.log_end_offset
                ),
            ),
        }
    } else if t.fully {
        v.state = ReplicaState::Behind;
        v.behind_by = Some(leader_summary_end.saturating_sub(t.offset).max(0));
        note(&mut v, t.steps.join("; "));
    } else if p.log_end_offset < leader_summary_end {
        v.state = ReplicaState::Behind;
        v.behind_by = Some(leader_summary_end.saturating_sub(p.log_end_offset));
    }
    if check.compacted && v.state != ReplicaState::Diverged {
        if let Some(c) = cleaned {
            note(
                &mut v,
                format!("compacted by the log cleaner below {c}: the epoch checksums are compared only above it"),
            );
        }
    }
    v
}

/// Checksum checkpoints: (end offset, epoch, run start) → the run's chain there.
type Checkpoints = BTreeMap<(i64, i32, i64), u32>;

/// A replica's checkpoints: each run's end, and each tail batch.
fn checkpoints(p: &PartitionSummary) -> Checkpoints {
    let mut out = BTreeMap::new();
    for r in &p.epochs {
        out.insert((r.end_offset, r.leader_epoch, r.start_offset), r.crc32c);
    }
    for t in &p.tail {
        let run = p.epochs.iter().rev().find(|r| {
            r.leader_epoch == t.leader_epoch
                && r.start_offset <= t.base_offset
                && t.base_offset < r.end_offset
        });
        if let Some(r) = run {
            out.insert((t.end_offset, t.leader_epoch, r.start_offset), t.crc32c);
        }
    }
    out
}

/// What the checksums say below an offset.
struct Comparison {
    /// The first offset from which the batches differ, as far as the
    /// checkpoints place it.
    mismatch: Option<i64>,
    verified_through: Option<i64>,
    /// Some checkpoints were passed over as compacted.
    compacted: bool,
}

/// Compare `p`'s checkpoints up to `upto` with the leader's.
/// Runs starting below `cleaned` hold batches the log cleaner rewrote on
/// one replica or the other (each compacts on its own, and a tombstone's
/// delete horizon is the cleaning time): they are not compared.
fn compare(p: &PartitionSummary, leader: &Checkpoints, upto: i64, cleaned: i64) -> Comparison {
    let mut covered = p.epochs.first().map(|r| r.start_offset);
    let start = covered;
    let mut last_match: BTreeMap<(i32, i64), i64> = BTreeMap::new();
    let mut out = Comparison {
        mismatch: None,
        verified_through: None,
        compacted: false,
    };
    for ((end, epoch, run_start), crc) in checkpoints(p) {
        if end > upto {
            break;
        }
        if run_start < cleaned {
            out.compacted = true;
            continue;
        }
        let Some(&theirs) = leader.get(&(end, epoch, run_start)) else {
            continue;
        };
        if theirs != crc {
            out.mismatch = Some(
                last_match
                    .get(&(epoch, run_start))
                    .copied()
                    .unwrap_or(run_start),
            );
            break;
        }
        last_match.insert((epoch, run_start), end);
        if covered.is_some_and(|c| run_start <= c) {
            covered = covered.map(|c| c.max(end));
        }
    }
    out.verified_through = covered.filter(|&c| Some(c) != start);
    out
}

/// `p`'s batches at and after `from`, and whether the count is exact.
fn batches_from(p: &PartitionSummary, from: i64) -> (u64, bool) {
    let mut n = 0u64;
    let mut exact = true;
    for r in &p.epochs {
        if r.end_offset <= from {
            continue;
        }
        if r.start_offset >= from {
            n = n.saturating_add(r.batches);
            continue;
        }
        // `from` falls inside this run: count its batches from the tail.
        let tail: Vec<_> = p
            .tail
            .iter()
            .filter(|t| {
                t.leader_epoch == r.leader_epoch
                    && r.start_offset <= t.base_offset
                    && t.base_offset < r.end_offset
            })
            .collect();
        let covers =
            tail.first().is_some_and(|t| t.base_offset <= from) || tail.len() as u64 == r.batches;
        exact &= covers;
        n = n.saturating_add(tail.iter().filter(|t| t.end_offset > from).count() as u64);
    }
    (n, exact)
}
