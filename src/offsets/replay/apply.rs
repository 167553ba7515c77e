//! Applying one decoded offsets-topic record, as `OffsetMetadataManager`
//! and `GroupMetadataManager` replay it, and a transaction's end.

use super::{
    trailing_detail, Commit, CoordinatorEntry, EventKind, Key, PendingCommit, RecordAt, Replay,
};
use crate::error::DecodeError;
use crate::log::findings::Kind;
use crate::offsets::group::decode_group_metadata;
use crate::offsets::records;
use crate::offsets::{
    decode_key_and_rest, decode_offset_commit_value_of, offset_commit_key_fast,
    offset_commit_value_fast, KeyRead, OffsetsKey,
};

impl Replay {
    /// Apply one offsets-topic record (`OffsetMetadataManager.replay` for
    /// offset commits; `GroupCoordinatorRecordSerde` decides the type).
    pub(super) fn record(
        &mut self,
        r: &RecordAt<'_>,
        key: Option<&[u8]>,
        value: Option<&[u8]>,
        txn_producer: Option<i64>,
    ) -> Result<(), DecodeError> {
        let key = key.ok_or(DecodeError::new(
            r.at,
            crate::error::DecodeErrorKind::UnexpectedNull {
                field: "offsets record key",
            },
        ))?;
        let fast = offset_commit_key_fast(key).filter(|_| !self.opts.plain_decoders);
        let read = match fast {
            Some((record_type, group, topic, partition)) => KeyRead {
                key: OffsetsKey::OffsetCommit {
                    record_type,
                    group: group.into(),
                    topic: topic.into(),
                    partition,
                },
                trailing: 0,
                lenient: Vec::new(),
            },
            None => decode_key_and_rest(key, r.at)?,
        };
        if read.trailing > 0 {
            self.warn(
                r,
                Kind::TrailingBytes,
                trailing_detail("key", read.trailing),
            );
        }
        self.lenient_warnings(r, "key", &read.lenient);
        match read.key {
            OffsetsKey::OffsetCommit {
                record_type,
                group,
                topic,
                partition,
            } => {
                let (group, topic) = (self.name(&group), self.name(&topic));
                let Some(v) = value else {
                    self.tombstone(r, &group, &topic, partition);
                    return Ok(());
                };
                self.offset_commit(r, record_type, (&group, &topic, partition), v, txn_producer)
            }
            OffsetsKey::GroupMetadata { group } => {
                let group = self.name(&group);
                self.group_metadata(r, &group, value)
            }
            OffsetsKey::Other { record_type } => {
                self.coordinator_record(r, record_type, key, value)
            }
        }
    }

    /// A name of a key as the replay keeps it: exact, or bounded for
    /// display ([`ReplayOptions::bounded_names`](super::ReplayOptions::bounded_names)).
    fn name<'a>(&self, name: &'a str) -> std::borrow::Cow<'a, str> {
        if self.opts.bounded_names {
            crate::format::escape::bounded(name)
        } else {
            std::borrow::Cow::Borrowed(name)
        }
    }

    /// An OffsetCommit tombstone, in a transaction or not: it deletes at
    /// once and cancels the key in every open transaction of this shard.
    fn tombstone(&mut self, r: &RecordAt<'_>, group: &str, topic: &str, partition: i32) {
        let (lp, log_offset, batch_position) = (r.lp, r.offset, r.batch_position);
        self.stats.tombstones += 1;
        self.event(
            lp,
            log_offset,
            batch_position,
            EventKind::Tombstone,
            group,
            topic,
            partition,
            None,
        );
        self.apply(group, topic, partition, None);
        let key: Key = (group.to_string(), topic.to_string(), partition);
        let cancelled: Vec<Commit> = self
            .pending
            .range_mut((lp, i64::MIN)..=(lp, i64::MAX))
            .filter_map(|(_, commits)| commits.remove(&key))
            .map(|p| p.value)
            .collect();
        for c in &cancelled {
            self.stats.txn_commits_cancelled += 1;
            let kind = EventKind::TxnCancelled;
            self.event(
                lp,
                log_offset,
                batch_position,
                kind,
                group,
                topic,
                partition,
                Some(c),
            );
        }
    }

    /// An OffsetCommit value `v` of `(group, topic, partition)`: stored, or
    /// held as pending for the producer of a transactional batch.
    fn offset_commit(
        &mut self,
        r: &RecordAt<'_>,
        record_type: i16,
        (group, topic, partition): (&str, &str, i32),
        v: &[u8],
        txn_producer: Option<i64>,
    ) -> Result<(), DecodeError> {
        let (lp, log_offset, batch_position) = (r.lp, r.offset, r.batch_position);
        // Under the LegacyOffsetCommit key type 0 Kafka reads value version
        // 0 alone: any other is the exact decoder's to refuse.
        let fast = offset_commit_value_fast(v)
            .filter(|d| !self.opts.plain_decoders && (record_type != 0 || d.version == 0));
        let exact;
        let d = match fast {
            Some(d) => d,
            None => {
                exact = decode_offset_commit_value_of(record_type, v, r.at)?;
                self.value_warnings(r, exact.trailing_bytes);
                self.lenient_warnings(r, "value", &exact.lenient);
                exact.borrowed()
            }
        };
        if d.offset < 0 {
            // Java clients never commit one; the coordinator stores what it is given.
            self.warn(
                r,
                Kind::NegativeCommittedOffset,
                format!("{group} {topic}-{partition}: committed offset {} is negative (loaded as it is)", d.offset),
            );
        }
        let mut commit = Commit::default();
        commit.set(d, lp, log_offset);
        if self.opts.group.as_deref().is_none_or(|g| g == group)
            && !self.offset_groups.contains(group)
        {
            self.removed_groups.remove(group);
            self.offset_groups.insert(group.to_string());
        }
        if let Some(pid) = txn_producer {
            self.event(
                lp,
                log_offset,
                batch_position,
                EventKind::Pending,
                group,
                topic,
                partition,
                Some(&commit),
            );
            self.pending.entry((lp, pid)).or_default().insert(
                (group.to_string(), topic.to_string(), partition),
                PendingCommit {
                    value: commit,
                    position: batch_position,
                },
            );
            return Ok(());
        }
        self.stats.offset_commits += 1;
        self.event(
            lp,
            log_offset,
            batch_position,
            EventKind::Commit,
            group,
            topic,
            partition,
            Some(&commit),
        );
        self.apply(group, topic, partition, Some(commit));
        Ok(())
    }

    /// A classic group's GroupMetadata, or its tombstone (which also ends
    /// the simple group offset commits made).
    fn group_metadata(
        &mut self,
        r: &RecordAt<'_>,
        group: &str,
        value: Option<&[u8]>,
    ) -> Result<(), DecodeError> {
        self.stats.group_metadata += 1;
        match value {
            None => {
                self.groups.remove(group);
                if self.offset_groups.remove(group) {
                    self.removed_groups.insert(group.to_string());
                }
            }
            Some(v) => {
                let mut g = decode_group_metadata(v, r.at)?;
                if self.opts.bounded_names {
                    g = g.bounded();
                }
                self.value_warnings(r, g.trailing_bytes);
                self.lenient_warnings(r, "value", &g.lenient);
                self.groups.insert(group.to_string(), g);
            }
        }
        Ok(())
    }

    /// A record of another type (consumer, share and streams groups):
    /// the last value of its key is kept, a tombstone deletes it.
    fn coordinator_record(
        &mut self,
        r: &RecordAt<'_>,
        record_type: i16,
        key: &[u8],
        value: Option<&[u8]>,
    ) -> Result<(), DecodeError> {
        *self.stats.skipped_types.entry(record_type).or_default() += 1;
        // A type the coordinator no longer knows is skipped on load
        // (CoordinatorLoaderImpl catches UnknownRecordTypeException).
        if records::group_record_type(record_type).is_some_and(|t| t.gone_since.is_some()) {
            return Ok(());
        }
        let rec = records::decode(records::GROUP_RECORDS, key, value, r.at);
        // A record of a known type that does not decode fails
        // Kafka's load of the partition (CoordinatorLoaderImpl
        // rethrows all but UnknownRecordTypeException): not applied.
        if let Some(e) = rec.fault {
            return Err(e);
        }
        self.lenient_warnings(r, "record", &rec.lenient);
        // A consumer or streams group record replaces the simple classic
        // group offsets created for its group id, and its tombstone
        // removes the group (GroupMetadataManager
        // .getOrMaybeCreatePersistedConsumerGroup / ...StreamsGroup,
        // removeGroup). (A share group record finding a simple group
        // fails the load there; here it replaces it as well.)
        if let Some(g) = rec.key.as_ref().and_then(|k| k["groupId"].as_str()) {
            if self.offset_groups.remove(g) {
                self.removed_groups.insert(g.to_string());
            }
        }
        if let Some(k) = &rec.key {
            let id = (record_type, k.to_string());
            if rec.value.is_none() {
                self.coordinator.remove(&id);
            } else {
                self.coordinator.insert(
                    id,
                    CoordinatorEntry {
                        log_partition: r.lp,
                        log_offset: r.offset,
                        timestamp: r.timestamp,
                        record: rec,
                        key: key.to_vec(),
                    },
                );
            }
        }
        Ok(())
    }

    /// A COMMIT or ABORT marker of `pid` (`OffsetMetadataManager.replayEndTransactionMarker`).
    pub(super) fn end_transaction(&mut self, lp: i32, pid: i64, commit: bool, marker_offset: i64) {
        let Some(commits) = self.pending.remove(&(lp, pid)) else {
            return;
        };
        for ((group, topic, partition), p) in commits {
            if !commit {
                self.stats.txn_commits_aborted += 1;
                self.event(
                    lp,
                    marker_offset,
                    p.position,
                    EventKind::TxnAborted,
                    &group,
                    &topic,
                    partition,
                    Some(&p.value),
                );
                continue;
            }
            // "We always keep the most recent committed offset": the pending
            // commit wins only if it was written after the stored one.
            let newer = self
                .get(&group, &topic, partition)
                .is_none_or(|stored| p.value.log_offset > stored.log_offset);
            let kind = if newer {
                EventKind::TxnCommitted
            } else {
                EventKind::TxnSuperseded
            };
            self.event(
                lp,
                marker_offset,
                p.position,
                kind,
                &group,
                &topic,
                partition,
                Some(&p.value),
            );
            if newer {
                self.stats.txn_commits_applied += 1;
                self.stats.offset_commits += 1;
                self.apply(&group, &topic, partition, Some(p.value));
            } else {
                self.stats.txn_commits_superseded += 1;
            }
        }
    }
}
