//! A classic consumer group as the coordinator sees it, reduced to what
//! decides whether an offset commit or fetch is accepted: the group's
//! state, its generation (one i32) and its members.
//!
//! [`ClassicGroup::validate_commit`] and [`ClassicGroup::validate_fetch`] are
//! klog's rules; [`ClassicGroup::kafka_validate_commit`] and
//! [`ClassicGroup::kafka_validate_fetch`] are the rules Kafka documents for
//! its classic groups. klog is stricter in two places: it refuses a fetch in
//! state Dead (Kafka allows offset fetches in every state), and in
//! PreparingRebalance it accepts only the current generation (Kafka also
//! accepts a commit from the previous one, so members can commit what they
//! processed before rejoining). Being stricter costs a wider redelivery
//! window after a rebalance, never a lost record: a refused commit leaves the
//! older committed offset in place.

use std::fmt;

/// Classic group states.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupState {
    Empty,
    PreparingRebalance,
    CompletingRebalance,
    Stable,
    Dead,
}

impl fmt::Display for GroupState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GroupState::Empty => "Empty",
            GroupState::PreparingRebalance => "PreparingRebalance",
            GroupState::CompletingRebalance => "CompletingRebalance",
            GroupState::Stable => "Stable",
            GroupState::Dead => "Dead",
        })
    }
}

/// The error codes a commit or fetch can get (Kafka's names).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GroupError {
    IllegalGeneration,
    UnknownMemberId,
    RebalanceInProgress,
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            GroupError::IllegalGeneration => "ILLEGAL_GENERATION",
            GroupError::UnknownMemberId => "UNKNOWN_MEMBER_ID",
            GroupError::RebalanceInProgress => "REBALANCE_IN_PROGRESS",
        })
    }
}

/// A classic group: state, generation and member ids.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClassicGroup {
    pub group: String,
    pub state: GroupState,
    pub generation: i32,
    pub members: Vec<String>,
}

impl ClassicGroup {
    fn member_check(&self, member: &str, generation: i32) -> Result<(), GroupError> {
        if !self.members.iter().any(|m| m == member) {
            return Err(GroupError::UnknownMemberId);
        }
        if generation != self.generation {
            return Err(GroupError::IllegalGeneration);
        }
        Ok(())
    }

    /// klog's rule for an offset commit from `member` at `generation`.
    pub fn validate_commit(&self, member: &str, generation: i32) -> Result<(), GroupError> {
        match self.state {
            GroupState::Dead => Err(GroupError::UnknownMemberId),
            GroupState::CompletingRebalance => Err(GroupError::RebalanceInProgress),
            GroupState::Empty | GroupState::PreparingRebalance | GroupState::Stable => {
                self.member_check(member, generation)
            }
        }
    }

    /// klog's rule for an offset fetch.
    pub fn validate_fetch(&self, _member: &str, _generation: i32) -> Result<(), GroupError> {
        match self.state {
            GroupState::Dead => Err(GroupError::UnknownMemberId),
            _ => Ok(()),
        }
    }

    /// Kafka's documented rule for a commit: as klog's, except that in
    /// PreparingRebalance a member of the previous generation may still commit.
    pub fn kafka_validate_commit(&self, member: &str, generation: i32) -> Result<(), GroupError> {
        match self.state {
            GroupState::PreparingRebalance
                if self.members.iter().any(|m| m == member)
                    && (generation == self.generation || generation == self.generation - 1) =>
            {
                Ok(())
            }
            _ => self.validate_commit(member, generation),
        }
    }

    /// Kafka's documented rule for a fetch: allowed in every state, Dead included.
    pub fn kafka_validate_fetch(&self, _member: &str, _generation: i32) -> Result<(), GroupError> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn group(state: GroupState) -> ClassicGroup {
        ClassicGroup {
            group: "kitchen".into(),
            state,
            generation: 2,
            members: vec!["member-a".into(), "member-b".into()],
        }
    }

    #[test]
    fn fencing_rules() {
        let g = group(GroupState::Stable);
        assert_eq!(g.validate_commit("member-a", 2), Ok(()));
        assert_eq!(
            g.validate_commit("member-a", 1),
            Err(GroupError::IllegalGeneration)
        );
        assert_eq!(
            g.validate_commit("member-z", 2),
            Err(GroupError::UnknownMemberId)
        );
        let p = group(GroupState::PreparingRebalance);
        assert_eq!(
            p.validate_commit("member-a", 1),
            Err(GroupError::IllegalGeneration)
        );
        assert_eq!(p.kafka_validate_commit("member-a", 1), Ok(()));
        assert_eq!(
            group(GroupState::CompletingRebalance).validate_commit("member-a", 2),
            Err(GroupError::RebalanceInProgress)
        );
        let d = group(GroupState::Dead);
        assert_eq!(
            d.validate_fetch("member-a", 2),
            Err(GroupError::UnknownMemberId)
        );
        assert_eq!(d.kafka_validate_fetch("member-a", 2), Ok(()));
    }
}
