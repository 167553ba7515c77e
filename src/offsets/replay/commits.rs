//! The committed-offset table: hashed by the bytes of each key's fields,
//! or keyed by the decoded strings (the exact path it is tested against).

use std::collections::BTreeMap;

use indexmap::map::Entry as Slotted;
use indexmap::IndexMap;

use super::{Commit, Key};
use crate::offsets::encode_offset_commit_key;
#[cfg(doc)]
use crate::offsets::offset_commit_fields;

/// A live key of the hashed table, its strings checked once, and its commit.
#[derive(Debug)]
pub(super) struct Slot {
    pub(super) group: Box<str>,
    pub(super) topic: Box<str>,
    pub(super) partition: i32,
    pub(super) commit: Commit,
}

/// The committed-offset table.
#[derive(Debug)]
pub(super) enum Commits {
    /// Keyed by an OffsetCommitKey's field bytes ([`offset_commit_fields`];
    /// [`encode_offset_commit_key`] writes the same bytes for the strings),
    /// with a seeded hasher: keys from a file cannot be chosen to collide.
    /// The hash table holds indexes into the slots, which stay in the order
    /// the keys came. A group commits its partitions in the same order at
    /// every commit, so the key after the last one looked up is tried
    /// first, at `next`: then the slots are read in order, and the hash
    /// table (whose lookups land anywhere in it) only when that guess fails.
    Hashed {
        map: IndexMap<Box<[u8]>, Slot, foldhash::fast::RandomState>,
        next: usize,
    },
    /// Keyed by the decoded strings, every key decoded again at every
    /// record: the exact path the hashed table is tested against.
    Exact(BTreeMap<Key, Commit>),
}

impl Default for Commits {
    fn default() -> Self {
        Commits::Hashed {
            map: IndexMap::default(),
            next: 0,
        }
    }
}

/// The bytes the hashed table keys (group, topic, partition) by.
fn field_bytes(group: &str, topic: &str, partition: i32) -> Vec<u8> {
    let mut key = encode_offset_commit_key(group, topic, partition);
    key.drain(..2); // recordType: int16
    key
}

impl Commits {
    pub(super) fn len(&self) -> usize {
        match self {
            Commits::Hashed { map, .. } => map.len(),
            Commits::Exact(map) => map.len(),
        }
    }

    pub(super) fn get(&self, group: &str, topic: &str, partition: i32) -> Option<&Commit> {
        match self {
            Commits::Hashed { map, .. } => map
                .get(field_bytes(group, topic, partition).as_slice())
                .map(|s| &s.commit),
            Commits::Exact(map) => map.get(&(group.to_string(), topic.to_string(), partition)),
        }
    }

    pub(super) fn insert(&mut self, group: &str, topic: &str, partition: i32, commit: Commit) {
        match self {
            Commits::Hashed { map, next } => {
                let entry = map.entry(field_bytes(group, topic, partition).into_boxed_slice());
                *next = entry.index() + 1;
                match entry {
                    Slotted::Occupied(mut slot) => slot.get_mut().commit = commit,
                    Slotted::Vacant(slot) => {
                        slot.insert(Slot {
                            group: group.into(),
                            topic: topic.into(),
                            partition,
                            commit,
                        });
                    }
                }
            }
            Commits::Exact(map) => {
                map.insert((group.to_string(), topic.to_string(), partition), commit);
            }
        }
    }

    pub(super) fn remove(&mut self, group: &str, topic: &str, partition: i32) {
        match self {
            Commits::Hashed { map, .. } => {
                map.swap_remove(field_bytes(group, topic, partition).as_slice());
            }
            Commits::Exact(map) => {
                map.remove(&(group.to_string(), topic.to_string(), partition));
            }
        }
    }

    /// Every live commit, sorted by group, topic and partition.
    pub(super) fn sorted(&self) -> Vec<(&str, &str, i32, &Commit)> {
        match self {
            Commits::Hashed { map, .. } => {
                let mut all: Vec<_> = map
                    .values()
                    .map(|s| (&*s.group, &*s.topic, s.partition, &s.commit))
                    .collect();
                all.sort_unstable_by(|a, b| (a.0, a.1, a.2).cmp(&(b.0, b.1, b.2)));
                all
            }
            Commits::Exact(map) => map
                .iter()
                .map(|((g, t, p), c)| (g.as_str(), t.as_str(), *p, c))
                .collect(),
        }
    }
}
