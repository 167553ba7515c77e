//! The leader followers are judged against: the metadata's, or the one
//! the controller would elect from the replicas found.
//!
//! After a crash the brokers come back in an order nobody knows offline,
//! and KRaft's controller elects on each return (`ReplicationControlManager`,
//! `PartitionChangeBuilder`, Kafka 3.9 to 4.4 alike):
//! - a broker registering again is judged by its clean-shutdown marker:
//!   the shutdown was clean only when the marker's broker epoch equals the
//!   epoch of its registration (`ClusterControlManager.registerBroker`).
//!   With eligible leader replicas on (KIP-966), an unclean one leaves
//!   every ISR and ELR first (`handleBrokerShutdown`), leadership included;
//! - a partition without a leader elects, when a broker unfences, the first
//!   live replica in assignment order of the ISR, or of the ELR when the ISR
//!   is empty (`electAnyLeader`, `isValidNewLeader`); failing that, with
//!   ELR on, its last known leader once it is back (`canElectLastKnownLeader`:
//!   `lastKnownElr` holds the leader it had when it first went leaderless,
//!   `maybeUpdateLastKnownLeader`); failing that, when the topic allows an
//!   unclean election, any live replica (`Election.UNCLEAN`).
//!
//! So the leader after a restart is one of a set: each replica that can be
//! elected when it is the first to come back.

use super::super::broker_summary::AssignedPartition;
use super::LeaderSource;

/// A replica with a copy of a partition, as the leader choice sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Candidate {
    pub node: i32,
    /// The newest epoch of its leader-epoch cache.
    pub latest_epoch: Option<i32>,
    pub log_end: i64,
    /// Its broker registers again as after an unclean shutdown (no
    /// marker, or one whose broker epoch is not its registration's).
    pub unclean_restart: bool,
}

/// Whether a broker registers again as after an unclean shutdown: the
/// controller calls a shutdown clean only when the marker's broker epoch is
/// the epoch of the broker's registration (`ClusterControlManager.registerBroker`:
/// `storedBrokerEpoch == request.previousBrokerEpoch()`); no marker is an
/// unclean shutdown. `registered` is `None` without metadata naming the
/// broker, and then only the marker counts.
pub fn registers_unclean(
    state: crate::log::shutdown::ShutdownState,
    marker_epoch: Option<i64>,
    registered: Option<i64>,
) -> bool {
    use crate::log::shutdown::ShutdownState;
    match state {
        ShutdownState::Unclean => true,
        ShutdownState::Clean => matches!((marker_epoch, registered), (Some(m), Some(r)) if m != r),
        ShutdownState::Running | ShutdownState::NotABroker => false,
    }
}

/// What the metadata says of elections beyond a partition's registration.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Rules {
    /// Eligible leader replicas are on (KIP-966).
    pub elr: bool,
    /// The topic allows an unclean election
    /// (`unclean.leader.election.enable`).
    pub unclean: bool,
}

/// The leader choice: the replica followers are judged against, how it
/// was chosen, why (for people), and every replica the controller may
/// elect depending on the order the brokers return (empty unless the
/// choice is open).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Election {
    pub leader: Option<i32>,
    pub source: LeaderSource,
    pub detail: String,
    pub outcomes: Vec<i32>,
}

impl Election {
    fn of(leader: Option<i32>, source: LeaderSource, detail: String) -> Self {
        Election {
            leader,
            source,
            detail,
            outcomes: Vec::new(),
        }
    }
}

/// The replica followers are judged against: the metadata's leader when
/// its copy is in a summary and it keeps its place after a restart; else
/// the ones Kafka's controller may elect (see the module docs); without
/// metadata, the replica with the newest leader epoch, then the longest
/// log, then the lowest node id (an ISR member holds the newest epoch and
/// every acknowledged offset).
pub fn choose_leader(
    candidates: &[Candidate],
    assigned: Option<&AssignedPartition>,
    rules: Rules,
) -> Election {
    let candidate = |n: i32| candidates.iter().find(|c| c.node == n);
    let has = |n: &i32| candidate(*n).is_some();
    let Some(a) = assigned else {
        let chosen = candidates
            .iter()
            .max_by_key(|c| (c.latest_epoch, c.log_end, std::cmp::Reverse(c.node)))
            .map(|c| c.node);
        return match chosen {
            Some(n) => Election::of(
                Some(n),
                LeaderSource::Chosen,
                format!("no metadata: node {n}, the replica with the newest leader epoch and the longest log"),
            ),
            None => Election::of(None, LeaderSource::None, String::new()),
        };
    };
    // Leaves every ISR and ELR when its broker registers again.
    let leaves = |n: i32| rules.elr && candidate(n).is_some_and(|c| c.unclean_restart);
    if a.leader >= 0 && has(&a.leader) && !leaves(a.leader) {
        return Election::of(Some(a.leader), LeaderSource::Metadata, String::new());
    }
    if a.leader >= 0 && !has(&a.leader) {
        return without_leader_copy(candidates, a);
    }
    let why = if a.leader < 0 {
        "no leader in the metadata".to_string()
    } else {
        format!(
            "the metadata's leader {} went down uncleanly: registering again, it leaves the ISR and ELR (KIP-966)",
            a.leader
        )
    };
    let isr: Vec<i32> = a.isr.iter().copied().filter(|&n| !leaves(n)).collect();
    let elr: Vec<i32> = a
        .eligible_leader_replicas
        .iter()
        .copied()
        .filter(|&n| !leaves(n))
        .collect();
    let (set, eligible) = if isr.is_empty() {
        ("ELR", &elr)
    } else {
        ("ISR", &isr)
    };
    let mut outcomes: Vec<(i32, String)> = Vec::new();
    let mut add = |n: i32, how: String| {
        if has(&n) && !outcomes.iter().any(|(m, _)| *m == n) {
            outcomes.push((n, how));
        }
    };
    for &r in &a.replicas {
        if eligible.contains(&r) {
            add(r, format!("in the {set}"));
        }
    }
    if rules.elr && isr.is_empty() && elr.is_empty() {
        let last_known = match a.last_known_elr.as_slice() {
            [one] => Some(*one),
            [] if a.leader >= 0 => Some(a.leader),
            _ => None,
        };
        if let Some(n) = last_known {
            add(n, "its last known leader".to_string());
        }
    }
    if rules.unclean {
        for &r in &a.replicas {
            add(r, "an unclean election, which the topic allows".to_string());
        }
    }
    match outcomes.as_slice() {
        [] => Election::of(
            None,
            LeaderSource::None,
            format!(
                "{why}: no replica found can be elected (ISR {:?}, ELR {:?}{}): the partition stays offline until one comes back",
                a.isr,
                a.eligible_leader_replicas,
                if rules.unclean { "" } else { ", unclean election off" }
            ),
        ),
        [(n, how)] => Election::of(Some(*n), LeaderSource::Chosen, format!("{why}: node {n}, {how}")),
        [(first, _), ..] => {
            let names: Vec<String> = outcomes.iter().map(|(n, how)| format!("{n} ({how})")).collect();
            Election {
                leader: Some(*first),
                source: LeaderSource::Undecided,
                detail: format!(
                    "{why}: the controller elects whichever of nodes {} comes back first, which cannot be \
                     known offline: the outcome under each is shown (judged here against node {first})",
                    names.join(", ")
                ),
                outcomes: outcomes.iter().map(|(n, _)| *n).collect(),
            }
        }
    }
}

/// The metadata names a leader whose copy no summary holds: the first
/// ISR member (or ELR member, the ISR empty) with a copy; else the first
/// of the last known ELR; else, uncleanly, the first replica with one.
fn without_leader_copy(candidates: &[Candidate], a: &AssignedPartition) -> Election {
    let has = |n: &i32| candidates.iter().any(|c| c.node == *n);
    let pick = |n: i32, how: &str| {
        Election::of(
            Some(n),
            LeaderSource::Chosen,
            format!(
                "the metadata's leader {} left no copy: node {n}, {how}",
                a.leader
            ),
        )
    };
    let set = if a.isr.is_empty() {
        &a.eligible_leader_replicas
    } else {
        &a.isr
    };
    if let Some(&n) = a.replicas.iter().find(|r| set.contains(r) && has(r)) {
        return pick(n, "the first replica in the ISR (or ELR) with a copy");
    }
    if let Some(&n) = a.last_known_elr.first().filter(|n| has(n)) {
        return pick(n, "the last known ELR member");
    }
    match a.replicas.iter().find(|r| has(r)) {
        Some(&n) => pick(n, "the first replica with a copy (an unclean election)"),
        None => Election::of(None, LeaderSource::None, String::new()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::log::shutdown::ShutdownState;

    fn copy(node: i32, unclean_restart: bool) -> Candidate {
        Candidate {
            node,
            latest_epoch: Some(0),
            log_end: 10,
            unclean_restart,
        }
    }

    fn registration(replicas: &[i32], isr: &[i32], elr: &[i32], leader: i32) -> AssignedPartition {
        AssignedPartition {
            partition: 0,
            replicas: replicas.to_vec(),
            isr: isr.to_vec(),
            leader,
            leader_epoch: 1,
            partition_epoch: 1,
            eligible_leader_replicas: elr.to_vec(),
            last_known_elr: Vec::new(),
        }
    }

    const ELR: Rules = Rules {
        elr: true,
        unclean: false,
    };

    #[test]
    fn a_leader_that_went_down_uncleanly_leaves_the_isr_when_elr_is_on() {
        // crash-all: leader 2 killed, node 1 stopped cleanly into the ELR.
        let a = registration(&[3, 2, 1], &[2], &[1], 2);
        let copies = [copy(1, false), copy(2, true), copy(3, true)];
        let e = choose_leader(&copies, Some(&a), ELR);
        assert_eq!((e.leader, e.source), (Some(1), LeaderSource::Chosen));
        assert!(e.outcomes.is_empty());
        // Without ELR the controller keeps no such rule: the leader stays.
        let e = choose_leader(&copies, Some(&a), Rules::default());
        assert_eq!((e.leader, e.source), (Some(2), LeaderSource::Metadata));
    }

    #[test]
    fn with_isr_and_elr_empty_the_last_known_leader_returns() {
        // crash-one: leader 2, alone in the ISR, killed; node 3 out of it.
        let a = registration(&[3, 2], &[2], &[], 2);
        let copies = [copy(2, true), copy(3, true)];
        let e = choose_leader(&copies, Some(&a), ELR);
        assert_eq!(e.leader, Some(2));
        assert!(e.detail.contains("last known leader"), "{}", e.detail);
        // A topic that allows an unclean election: node 3 too, if first back.
        let e = choose_leader(
            &copies,
            Some(&a),
            Rules {
                elr: true,
                unclean: true,
            },
        );
        assert_eq!(
            (e.source, e.outcomes.clone()),
            (LeaderSource::Undecided, vec![2, 3])
        );
    }

    #[test]
    fn nobody_electable_is_an_offline_partition() {
        // ELR off, ISR [2] whose copy is gone... the leader -1, node 3 out.
        let a = registration(&[3, 2], &[2], &[], -1);
        let e = choose_leader(&[copy(3, false)], Some(&a), Rules::default());
        assert_eq!((e.leader, e.source), (None, LeaderSource::None));
        assert!(e.detail.contains("offline"), "{}", e.detail);
    }

    #[test]
    fn a_clean_marker_of_an_older_registration_is_an_unclean_shutdown() {
        assert!(!registers_unclean(ShutdownState::Clean, Some(7), Some(7)));
        assert!(registers_unclean(ShutdownState::Clean, Some(6), Some(7)));
        assert!(!registers_unclean(ShutdownState::Clean, Some(6), None));
        assert!(registers_unclean(ShutdownState::Unclean, None, Some(7)));
        assert!(!registers_unclean(ShutdownState::NotABroker, None, None));
    }
}
