//! Whether a live committed offset is one Kafka's coordinator would still
//! hand a consumer: it may belong to a topic that was deleted and created
//! again, or be past the offsets retention, which the coordinator removes
//! after loading the partition.
//!
//! - Topic recreated (`OffsetMetadataManager.isMismatchedTopicId`, Kafka
//!   4.1+): an OffsetCommitValue v4 carries the id of the topic it was
//!   committed for, and `onTopicsDeleted` tombstones only offsets whose id
//!   matches the deleted topic's, so a commit for an earlier topic of the
//!   same name can outlive it. Who sees it depends on how the offset is
//!   fetched. `OffsetMetadataManager.fetchOffsets` refuses it
//!   (`isOffsetInvalid`: offset -1, no error) only when the request names
//!   the topic by a set id that differs: OffsetFetch v10, which only the
//!   KIP-848 consumer sends (`CommitRequestManager`, consumer and streams
//!   groups; it then starts from `auto.offset.reset`). A request by name
//!   (v9 and below: the classic consumer's `ConsumerCoordinator`, the
//!   admin client's `ListConsumerGroupOffsetsHandler`) carries topic id
//!   zero and gets the offset, and `fetchAllOffsets` (the admin client
//!   asking for every topic, as kafka-consumer-groups does) never compares
//!   ids: a classic consumer resumes from it on the new topic and
//!   kafka-consumer-groups shows its offset and lag. The current id comes
//!   from the KRaft metadata of the data directories, else from the
//!   topic's partition.metadata files.
//! - Expired (`OffsetMetadataManager.cleanupExpiredOffsets`, run every
//!   `offsets.retention.check.interval.ms`): an offset of a topic the group
//!   is not subscribed to (`isSubscribedToTopic`) and with no pending
//!   transactional offset expires when `now - base >= offsets.retention.ms`,
//!   or, for a v1 value with an expireTimestamp other than -1 (-1 is "not
//!   set": `OffsetAndMetadata.fromRecord`, `Utils.ofSentinel`), when
//!   `now >= expireTimestamp` (`OffsetExpirationConditionImpl`). The base and whether a group
//!   expires offsets at all (`offsetExpirationCondition`): a classic group
//!   with a protocol type, when Empty: its currentStateTimestamp, or the
//!   commit timestamp when the group has none (GroupMetadataValue v0/v1,
//!   or -1: `GroupMetadataManager.replay`); with members: only a `consumer` group whose
//!   subscriptions are known, by commit timestamp; a classic group without
//!   a protocol type (a "simple" group, or one with committed offsets only):
//!   the commit timestamp; consumer and streams groups: the commit
//!   timestamp; share groups commit no offsets here.

use std::collections::{BTreeMap, BTreeSet};

use crate::offsets::group_state::GroupView;
use crate::offsets::replay::Commit;
use crate::offsets::Replay;

/// Kafka's default `offsets.retention.minutes` (7 days,
/// `GroupCoordinatorConfig.OFFSETS_RETENTION_MINUTES_DEFAULT`).
pub const DEFAULT_RETENTION_MINUTES: i64 = 7 * 24 * 60;

/// The offsets retention and the time to judge it at.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Retention {
    /// `offsets.retention.minutes` in ms.
    pub retention_ms: i64,
    pub now_ms: i64,
}

/// What Kafka makes of a live committed offset.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Fetched as it is.
    Live,
    /// Committed for an earlier topic of the same name: fetched by name
    /// (classic consumer, admin tools), not by topic id (KIP-848 consumer).
    TopicRecreated {
        stored_id: String,
        current_id: String,
    },
    /// Past the retention: removed by the coordinator's next expiration
    /// check; `at_ms` is when it expired.
    Expired { at_ms: i64 },
}

/// The status word of an offset committed for an earlier topic of the same
/// name, in every view (`replay-offsets`, `lag`).
pub const TOPIC_RECREATED: &str = "topic_recreated";

/// What a `topic_recreated` offset is to each client, for people (stderr):
/// see the module docs.
pub const TOPIC_RECREATED_NOTE: &str = "committed for an earlier topic of the same name (the \
     commit's topic id is not the topic's current one). kafka-consumer-groups and a classic consumer \
     fetch offsets by topic name and see these: a classic consumer resumes from them on the new \
     topic. A KIP-848 consumer (consumer and streams groups) fetches by topic id (OffsetFetch v10) \
     and gets none (OffsetMetadataManager.isOffsetInvalid): it starts from auto.offset.reset";

impl Standing {
    /// The status word the views show: `ok`, `topic_recreated` or `expired`.
    pub fn name(&self) -> &'static str {
        match self {
            Standing::Live => "ok",
            Standing::TopicRecreated { .. } => TOPIC_RECREATED,
            Standing::Expired { .. } => "expired",
        }
    }
}

/// Judges the commits of one replay.
pub struct Judge<'a> {
    replay: &'a Replay,
    views: BTreeMap<&'a str, &'a GroupView>,
    topic_ids: &'a BTreeMap<String, String>,
    retention: Option<Retention>,
    pending: BTreeSet<(&'a str, &'a str, i32)>,
}

impl<'a> Judge<'a> {
    /// `views` are the replay's groups, `topic_ids` each topic's current id
    /// by name; without `retention` nothing expires.
    pub fn new(
        replay: &'a Replay,
        views: &'a [GroupView],
        topic_ids: &'a BTreeMap<String, String>,
        retention: Option<Retention>,
    ) -> Self {
        Judge {
            replay,
            views: views.iter().map(|g| (g.group.as_str(), g)).collect(),
            topic_ids,
            retention,
            pending: replay
                .pending()
                .map(|(_, _, g, t, p, _)| (g, t, p))
                .collect(),
        }
    }

    /// The standing of `c`, the commit of (group, topic, partition).
    pub fn standing(&self, group: &str, topic: &str, partition: i32, c: &Commit) -> Standing {
        // isMismatchedTopicId: both ids set (neither ZERO_UUID) and different.
        if let (Some(stored), Some(current)) = (&c.topic_id, self.topic_ids.get(topic)) {
            if current != crate::format::schema::ZERO_UUID && stored != current {
                return Standing::TopicRecreated {
                    stored_id: stored.clone(),
                    current_id: current.clone(),
                };
            }
        }
        match self.expired_at(group, topic, partition, c) {
            Some(at_ms) => Standing::Expired { at_ms },
            None => Standing::Live,
        }
    }

    /// When the commit expired, if it has (see the module docs).
    fn expired_at(&self, group: &str, topic: &str, partition: i32, c: &Commit) -> Option<i64> {
        let r = self.retention?;
        if self.pending.contains(&(group, topic, partition)) {
            return None;
        }
        let view = self.views.get(group);
        let base = match view {
            Some(g) if g.kind == "share" => return None,
            Some(g) if g.kind == "classic" => match self.replay.groups.get(group) {
                // No protocol type: a simple group.
                Some(m) if !m.protocol_type.is_empty() => {
                    if m.members.is_empty() {
                        m.state_timestamp().unwrap_or(c.commit_timestamp)
                    } else if m.protocol_type == "consumer" && g.subscribed_topics.is_some() {
                        c.commit_timestamp
                    } else {
                        return None;
                    }
                }
                _ => c.commit_timestamp,
            },
            _ => c.commit_timestamp,
        };
        if view
            .and_then(|g| g.subscribed_topics.as_ref())
            .is_some_and(|t| t.contains(topic))
        {
            return None;
        }
        // Java's longs: now - base >= retention, or now >= expireTimestamp.
        let at = match c.expire_timestamp {
            Some(e) => i128::from(e),
            None => i128::from(base) + i128::from(r.retention_ms),
        };
        (i128::from(r.now_ms) >= at).then(|| at.clamp(i64::MIN.into(), i64::MAX.into()) as i64)
    }
}
