//! The leader followers are judged against: the metadata's, or the one
//! the controller would elect from the replicas found.

use super::super::broker_summary::AssignedPartition;
use super::LeaderSource;

/// A replica with a copy of a partition, as the leader choice sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub node: i32,
    /// The newest epoch of its leader-epoch cache.
    pub latest_epoch: Option<i32>,
    pub log_end: i64,
}

/// The replica followers are judged against: the metadata's leader when
/// its copy is in a summary; else the one Kafka's controller would elect
/// if every broker with a copy were up (`PartitionChangeBuilder.electAnyLeader`:
/// the first replica in assignment order in the ISR, or in the ELR when
/// the ISR is empty; else the first of the last known ELR; else, unclean,
/// the first replica); without metadata, the replica with the newest leader
/// epoch, then the longest log, then the lowest node id (an ISR member
/// holds the newest epoch and every acknowledged offset).
pub fn choose_leader(
    candidates: &[Candidate],
    assigned: Option<&AssignedPartition>,
) -> (Option<i32>, LeaderSource, String) {
    let has = |n: &i32| candidates.iter().any(|c| c.node == *n);
    let Some(a) = assigned else {
        let chosen = candidates
            .iter()
            .max_by_key(|c| (c.latest_epoch, c.log_end, std::cmp::Reverse(c.node)))
            .map(|c| c.node);
        return match chosen {
            Some(n) => (
                Some(n),
                LeaderSource::Chosen,
                format!("no metadata: node {n}, the replica with the newest leader epoch and the longest log"),
            ),
            None => (None, LeaderSource::None, String::new()),
        };
    };
    if a.leader >= 0 && has(&a.leader) {
        return (Some(a.leader), LeaderSource::Metadata, String::new());
    }
    let why = if a.leader < 0 {
        "no leader in the metadata".to_string()
    } else {
        format!("the metadata's leader {} left no copy", a.leader)
    };
    let pick = |n: i32, how: String| {
        (
            Some(n),
            LeaderSource::Chosen,
            format!("{why}: node {n}, {how}"),
        )
    };
    let (set, electable) = electable(candidates, a);
    if let [first, _, ..] = electable.as_slice() {
        let names: Vec<String> = electable.iter().map(i32::to_string).collect();
        return (
            Some(*first),
            LeaderSource::Undecided,
            format!(
                "{why}: the controller elects whichever of nodes {} (the {set}) comes back first, which \
                 cannot be known offline: the outcome under each is shown (judged here against node {first})",
                names.join(", ")
            ),
        );
    }
    if let Some(&n) = electable.first() {
        return pick(n, format!("the first replica in the {set} with a copy"));
    }
    if let Some(&n) = a.last_known_elr.first().filter(|n| has(n)) {
        return pick(n, "the last known ELR member".to_string());
    }
    match a.replicas.iter().find(|r| has(r)) {
        Some(&n) => pick(
            n,
            "the first replica with a copy (an unclean election)".to_string(),
        ),
        None => (None, LeaderSource::None, String::new()),
    }
}

/// The replicas with a copy the controller may elect cleanly, in assignment
/// order: those in the ISR, or in the ELR when the ISR is empty
/// (`PartitionChangeBuilder.isValidNewLeader`); and which set that is.
pub(super) fn electable(
    candidates: &[Candidate],
    a: &AssignedPartition,
) -> (&'static str, Vec<i32>) {
    let (set, eligible) = if a.isr.is_empty() {
        ("ELR", &a.eligible_leader_replicas)
    } else {
        ("ISR", &a.isr)
    };
    let mut out: Vec<i32> = Vec::new();
    for r in &a.replicas {
        if candidates.iter().any(|c| c.node == *r) && eligible.contains(r) && !out.contains(r) {
            out.push(*r);
        }
    }
    (set, out)
}
