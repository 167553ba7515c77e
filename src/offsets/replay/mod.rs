//! Replaying the offsets topic into the committed-offset table.
//!
//! Records are applied in log order, partition by partition, as Kafka's
//! group coordinator loads them (`CoordinatorLoaderImpl` feeding
//! `OffsetMetadataManager.replay` and `replayEndTransactionMarker`):
//!
//! - a plain commit replaces the stored one for its (group, topic, partition);
//! - a commit in a batch with a producer id (the coordinator writes one
//!   only into transactional batches) is held as pending for its producer
//!   (one per key: a later one of the same producer replaces it) until that
//!   producer's marker follows in the same partition: COMMIT applies it
//!   only if its record offset is greater than the record offset of the
//!   commit stored by then (a plain commit written after it wins), ABORT
//!   discards it;
//! - a tombstone (null value), transactional or not, deletes the key at
//!   once and drops it from every open transaction's pending commits;
//! - the messages inside a legacy (magic 0/1) compressed wrapper are
//!   replayed one by one at their own offsets, as plain commits.
//!
//! A record that does not decode is reported with its partition, offset and
//! byte position and skipped, so one bad record never hides the rest of the
//! table. What the broker loads but a person should know of (a negative
//! committed offset, bytes after a key or value, a value version outside
//! the known ones) is a warning.
//!
//! While records are applied, the table is a hash map keyed by the bytes of
//! each OffsetCommitKey's fields as written: a plain commit of a key the
//! table holds already replaces it with one lookup of those bytes, and its
//! strings are not checked again (they were when the key went in). Every
//! listing sorts the keys by group, then topic, then partition, so it
//! comes out in the same order on every run.

use std::collections::{BTreeMap, BTreeSet};
use std::path::PathBuf;

use crate::error::DecodeError;
use crate::format::schema::Leniency;
use crate::format::DecodeLimits;
use crate::log::findings::{Finding, Kind, Severity};
use crate::offsets::group::GroupMetadata;
use crate::offsets::records::CoordinatorRecord;
use crate::offsets::CommitValueRef;

mod apply;
mod batches;
mod commits;

use commits::Commits;

/// One committed offset.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Commit {
    /// The next offset the group will read. Negative only when a non-Java
    /// client committed one: the coordinator stores it as it is.
    pub offset: i64,
    pub leader_epoch: i32,
    pub metadata: String,
    pub commit_timestamp: i64,
    /// A v1 value's expireTimestamp, unless -1, which means "not set"
    /// (`OffsetAndMetadata.fromRecord` reads it through `Utils.ofSentinel`).
    pub expire_timestamp: Option<i64>,
    pub value_version: i16,
    /// The id of the topic the offset was committed for (OffsetCommitValue
    /// v4, Kafka 4.1+), when written.
    pub topic_id: Option<String>,
    /// Where the record sits in the offsets topic.
    pub log_partition: i32,
    pub log_offset: i64,
}

impl Commit {
    /// Store `d`, written at `log_offset` of offsets partition
    /// `log_partition`, in place of this commit, keeping the metadata's
    /// buffer.
    fn set(&mut self, d: CommitValueRef<'_>, log_partition: i32, log_offset: i64) {
        self.offset = d.offset;
        self.leader_epoch = d.leader_epoch;
        // Two empty strings (almost every commit's metadata) are not handed
        // to memcmp: glibc's AVX-512 memcmp of zero bytes still issues a
        // masked load at the empty String's dangling pointer, which an AMD
        // EPYC completes slowly (a suppressed fault): a third of the replay.
        if !(self.metadata.is_empty() && d.metadata.is_empty()) && self.metadata != d.metadata {
            self.metadata.clear();
            self.metadata.push_str(d.metadata);
        }
        self.commit_timestamp = d.commit_timestamp;
        // Utils.ofSentinel: -1 is no expire timestamp (OffsetAndMetadata.fromRecord).
        self.expire_timestamp = d.expire_timestamp.filter(|&e| e != -1);
        self.value_version = d.version;
        if self.topic_id.as_deref() != d.topic_id {
            self.topic_id = d.topic_id.map(str::to_string);
        }
        self.log_partition = log_partition;
        self.log_offset = log_offset;
    }
}

/// How many records that do not decode, and how many warnings, are kept
/// with their details: a compressed batch of a few kilobytes can hold
/// millions of records, each of which could be one, and what is kept must
/// not grow with them. The rest are counted.
pub const KEPT: usize = 1000;

/// A record that could not be decoded (or a damaged batch or tail).
#[derive(Debug, Clone)]
pub struct BadRecord {
    pub file: PathBuf,
    pub log_partition: i32,
    /// The record's (or batch's) offset; -1 when unknown (a torn tail).
    pub log_offset: i64,
    pub error: DecodeError,
}

impl BadRecord {
    /// The record as a finding, at the error's byte (the one place a
    /// record the replay could not use becomes a [`Finding`]).
    pub fn finding(&self) -> Finding {
        let offset = (self.log_offset >= 0).then_some(self.log_offset);
        Finding::decode(&self.file, self.error.offset, offset, &self.error)
    }
}

/// A partition of an internal topic whose records were not all read and
/// applied (damaged bytes, a record that does not decode, a value version
/// Kafka does not read): what is shown of it is incomplete. Kafka's
/// coordinator fails the load of such a partition on a record it cannot
/// read (`CoordinatorLoaderImpl`), and its log recovery cuts damaged bytes.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Incomplete {
    /// The partition folder (`__consumer_offsets-3`).
    pub partition: String,
    /// Records (or batches) not read or not applied.
    pub unread: u64,
    /// The offset of the first of them (-1 when unknown: a torn tail).
    pub first_offset: i64,
    /// Why the first of them was not read or applied.
    pub first_error: String,
}

impl Incomplete {
    /// Count one record of `file`'s partition not read or applied.
    pub fn note(
        map: &mut BTreeMap<String, Incomplete>,
        file: &std::path::Path,
        offset: i64,
        why: impl FnOnce() -> String,
    ) {
        let folder = file
            .parent()
            .and_then(|d| d.file_name())
            .unwrap_or(file.as_os_str())
            .to_string_lossy()
            .into_owned();
        map.entry(folder.clone())
            .or_insert_with(|| Incomplete {
                partition: folder,
                unread: 0,
                first_offset: offset,
                first_error: why(),
            })
            .unread += 1;
    }

    /// The line that says so, for people.
    pub fn line(&self) -> String {
        let s = if self.unread == 1 { "" } else { "s" };
        let at = if self.first_offset >= 0 {
            format!("offset {}", self.first_offset)
        } else {
            "its tail".to_string()
        };
        format!(
            "incomplete: {}: {} record{s} not read or not applied (the first at {at}: {}); \
             what is shown of this partition lacks them",
            self.partition, self.unread, self.first_error
        )
    }
}

/// What happened to a key, for `--history`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EventKind {
    Commit,
    Tombstone,
    /// A transactional commit, not yet applied.
    Pending,
    /// A pending commit applied by its producer's COMMIT marker.
    TxnCommitted,
    /// A pending commit discarded by an ABORT marker.
    TxnAborted,
    /// A pending commit not applied at COMMIT: the stored commit was written
    /// after it (a greater record offset).
    TxnSuperseded,
    /// A pending commit dropped by a tombstone of its key.
    TxnCancelled,
}

impl EventKind {
    /// snake_case name.
    pub fn name(self) -> &'static str {
        match self {
            EventKind::Commit => "commit",
            EventKind::Tombstone => "tombstone",
            EventKind::Pending => "pending",
            EventKind::TxnCommitted => "txn_committed",
            EventKind::TxnAborted => "txn_aborted",
            EventKind::TxnSuperseded => "txn_superseded",
            EventKind::TxnCancelled => "txn_cancelled",
        }
    }
}

/// One entry of the history.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Event {
    pub log_partition: i32,
    pub log_offset: i64,
    /// Byte position of the batch holding the record.
    pub position: u64,
    pub kind: EventKind,
    pub group: String,
    pub topic: String,
    pub partition: i32,
    pub offset: Option<i64>,
    pub commit_timestamp: Option<i64>,
}

/// Counters for the summary.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Stats {
    pub records: u64,
    pub offset_commits: u64,
    pub tombstones: u64,
    pub group_metadata: u64,
    /// Newer record types (3 and up), by type.
    pub skipped_types: BTreeMap<i16, u64>,
    pub control_records: u64,
    pub txn_commits_applied: u64,
    pub txn_commits_aborted: u64,
    /// Pending commits a COMMIT marker did not apply (a later commit was stored).
    pub txn_commits_superseded: u64,
    /// Pending commits a tombstone of their key dropped.
    pub txn_commits_cancelled: u64,
    /// Log end offset of each offsets partition read.
    pub log_end_offsets: BTreeMap<i32, i64>,
}

/// Where to stop replaying.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AsOf {
    /// Replay records with offsets below this one (in every offsets partition).
    Offset(i64),
    /// Replay records up to the first one stamped later than this (ms).
    Timestamp(i64),
}

/// How to replay.
#[derive(Debug, Clone, Default)]
pub struct ReplayOptions {
    pub as_of: Option<AsOf>,
    /// Keep every event (for `--history`), filtered by `group` and `topic`.
    pub history: bool,
    pub group: Option<String>,
    pub topic: Option<String>,
    pub limits: DecodeLimits,
    /// Where to count the bytes of log read, for a progress display.
    pub meter: Option<&'static crate::log::walk::Meter>,
    /// Keep names for display only: every group id and topic of a key, and
    /// the names of a group's metadata, bounded where they enter
    /// ([`bounded`](crate::format::escape::bounded): a 32 KB group id is held
    /// as its first characters, its length and its hash), so that the state
    /// and what is rendered from it stay small whatever the names. For a
    /// page (`report`), never for data outputs, which keep exact names.
    pub bounded_names: bool,
    /// Read every record with the decoders of the schema tables alone: no
    /// fast path for plain offset commits ([`offset_commit_key_fast`],
    /// [`offset_commit_value_fast`]). The table is the same; the bench
    /// times the fast paths against this.
    ///
    /// [`offset_commit_key_fast`]: crate::offsets::offset_commit_key_fast
    /// [`offset_commit_value_fast`]: crate::offsets::offset_commit_value_fast
    pub plain_decoders: bool,
}

#[derive(Debug, Clone)]
struct PendingCommit {
    value: Commit,
    position: u64,
}

/// A key of the committed-offset table: (group, topic, partition).
type Key = (String, String, i32);

/// A live coordinator record and where it was written.
#[derive(Debug, Clone)]
pub struct CoordinatorEntry {
    pub log_partition: i32,
    pub log_offset: i64,
    /// The record's timestamp (ms): when the coordinator wrote this state.
    pub timestamp: i64,
    pub record: CoordinatorRecord,
    /// The key's bytes (what a tombstone of this record repeats).
    pub key: Vec<u8>,
}

/// The replayed state of one or more offsets partitions.
#[derive(Debug, Default)]
pub struct Replay {
    pub opts: ReplayOptions,
    /// The committed offsets: listed by [`Replay::commits`].
    table: Commits,
    /// Classic groups' latest metadata, by group.
    pub groups: BTreeMap<String, GroupMetadata>,
    /// The groups an offset commit created: every group with a non-null
    /// OffsetCommitValue replayed, transactional or not (aborted later or
    /// not), since its last GroupMetadata tombstone.
    /// `OffsetMetadataManager.replay` creates such a group, a "simple"
    /// classic group, unless one of the group id exists; only
    /// `GroupMetadataManager.replay` of a GroupMetadata tombstone removes it,
    /// not the tombstones of its offsets.
    pub offset_groups: BTreeSet<String>,
    /// Groups a GroupMetadata tombstone took out of `offset_groups`: the
    /// next commit of one of them (which may take the fast path of a live
    /// key) creates it again.
    removed_groups: BTreeSet<String>,
    pub stats: Stats,
    /// The first [`KEPT`] records that do not decode; `bad_count` counts them all.
    pub bad: Vec<BadRecord>,
    pub bad_count: u64,
    /// The first [`KEPT`] records loaded as the broker loads them, with
    /// something to say; `warning_count` counts them all.
    pub warnings: Vec<Finding>,
    pub warning_count: u64,
    pub history: Vec<Event>,
    /// The newer coordinator records (types 3 and up: consumer, share and
    /// streams groups) that are live: keyed by type and key, the last value
    /// wins and a tombstone deletes, as the coordinator loads them.
    pub coordinator: BTreeMap<(i16, String), CoordinatorEntry>,
    /// The partitions whose records were not all read and applied, by
    /// partition folder (`__consumer_offsets-3`): every view of the replay
    /// says so.
    pub incomplete: BTreeMap<String, Incomplete>,
    /// Transactional commits still waiting for a marker: (offsets partition,
    /// producer id) → key → commit (`OffsetMetadataManager`'s
    /// `pendingTransactionalOffsets`, one per coordinator shard here).
    pending: BTreeMap<(i32, i64), BTreeMap<Key, PendingCommit>>,
}

impl Replay {
    /// An empty replay.
    pub fn new(opts: ReplayOptions) -> Self {
        Replay {
            opts,
            ..Replay::default()
        }
    }

    /// An empty replay that decodes every key of every record and keeps
    /// the table in a `BTreeMap` of strings: slower, and the reference the
    /// hashed table's replay is tested against (it must give the same
    /// result in every respect).
    #[doc(hidden)]
    pub fn new_exact(opts: ReplayOptions) -> Self {
        Replay {
            opts,
            table: Commits::Exact(BTreeMap::new()),
            ..Replay::default()
        }
    }

    /// Number of live keys in the table.
    pub fn live_keys(&self) -> usize {
        self.table.len()
    }

    /// Transactional commits still pending (no marker yet), as (partition, producer id, group, topic, partition, offset).
    pub fn pending(&self) -> impl Iterator<Item = (i32, i64, &str, &str, i32, i64)> {
        self.pending.iter().flat_map(|((lp, pid), commits)| {
            commits
                .iter()
                .map(move |((g, t, p), c)| (*lp, *pid, g.as_str(), t.as_str(), *p, c.value.offset))
        })
    }

    /// Number of pending transactional commits.
    pub fn pending_count(&self) -> usize {
        self.pending.values().map(BTreeMap::len).sum()
    }

    /// Every live commit, ordered by group, then topic, then partition
    /// (sorted at each call).
    pub fn commits(&self) -> impl Iterator<Item = (&str, &str, i32, &Commit)> {
        self.table.sorted().into_iter()
    }

    /// The groups with a live commit, in order, once each.
    pub fn committed_groups(&self) -> Vec<&str> {
        let mut groups: Vec<&str> = self.commits().map(|(g, ..)| g).collect();
        groups.dedup();
        groups
    }

    /// Whether the replay knows `group`: a live commit of it, its group
    /// metadata, or a record of its in the coordinator's other record
    /// types (KIP-848, streams, share groups). Kafka's tools say a group
    /// they do not know "does not exist".
    pub fn knows_group(&self, group: &str) -> bool {
        self.committed_groups().contains(&group)
            || self.groups.contains_key(group)
            || self.coordinator.values().any(|e| {
                e.record
                    .key
                    .as_ref()
                    .and_then(|k| k.get("groupId"))
                    .and_then(|v| v.as_str())
                    == Some(group)
            })
    }

    /// The commit for one key, if live.
    pub fn get(&self, group: &str, topic: &str, partition: i32) -> Option<&Commit> {
        self.table.get(group, topic, partition)
    }

    fn wanted(&self, group: &str, topic: &str) -> bool {
        self.opts.group.as_deref().is_none_or(|g| g == group)
            && self.opts.topic.as_deref().is_none_or(|t| t == topic)
    }

    #[allow(clippy::too_many_arguments)]
    fn event(
        &mut self,
        lp: i32,
        log_offset: i64,
        position: u64,
        kind: EventKind,
        group: &str,
        topic: &str,
        partition: i32,
        c: Option<&Commit>,
    ) {
        if self.opts.history && self.wanted(group, topic) {
            self.history.push(Event {
                log_partition: lp,
                log_offset,
                position,
                kind,
                group: group.to_string(),
                topic: topic.to_string(),
                partition,
                offset: c.map(|c| c.offset),
                commit_timestamp: c.map(|c| c.commit_timestamp),
            });
        }
    }

    fn apply(&mut self, group: &str, topic: &str, partition: i32, value: Option<Commit>) {
        match value {
            Some(c) => self.table.insert(group, topic, partition, c),
            None => self.table.remove(group, topic, partition),
        }
    }

    /// A warning about the record at `r`.
    fn warn(&mut self, r: &RecordAt<'_>, kind: Kind, detail: String) {
        let detail = format!("offset {}: {detail}", r.offset);
        let mut f = Finding::new(kind, r.file, r.batch_position, Some(r.offset), detail);
        f.byte = r.at;
        self.warning_count += 1;
        if self.warnings.len() < KEPT {
            self.warnings.push(f.with_severity(Severity::Warning));
        }
    }

    /// Count a record that does not decode, and keep it while fewer than
    /// [`KEPT`] are; its partition's replay is incomplete.
    fn push_bad(&mut self, bad: BadRecord) {
        Incomplete::note(&mut self.incomplete, &bad.file, bad.log_offset, || {
            bad.error.to_string()
        });
        self.bad_count += 1;
        if self.bad.len() < KEPT {
            self.bad.push(bad);
        }
    }

    /// A warning about bytes after a value's last field, which the broker
    /// reads anyway.
    fn value_warnings(&mut self, r: &RecordAt<'_>, trailing: u64) {
        if trailing > 0 {
            self.warn(r, Kind::TrailingBytes, trailing_detail("value", trailing));
        }
    }

    /// A warning for each place of the record's `what` (key, value) read as
    /// Kafka's generated reader reads it, where a strict reading refuses it:
    /// the coordinator loads the record so (`CoordinatorRecordSerde.readMessage`),
    /// and so does the replay.
    fn lenient_warnings(&mut self, r: &RecordAt<'_>, what: &str, lenient: &[Leniency]) {
        for l in lenient {
            let detail = format!("the {what}: {l}; loaded as the coordinator reads it");
            self.warn(r, Kind::of_decode(&l.defect.kind), detail);
        }
    }
}

/// Where a record sits: its file, offsets partition and offset, the
/// position of its batch and of its first byte.
struct RecordAt<'a> {
    file: &'a std::path::Path,
    lp: i32,
    offset: i64,
    batch_position: u64,
    at: u64,
    /// The record's timestamp (ms).
    timestamp: i64,
}

fn trailing_detail(what: &str, n: u64) -> String {
    let s = if n == 1 { "" } else { "s" };
    format!("{n} byte{s} after the {what}'s last field (ignored, as the broker's reader does)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::encode::{encode_batch, BatchSpec, NewRecord};
    use crate::format::record::tests::Rng;
    use crate::log::Partition;
    use crate::offsets::encode_offset_commit_key;
    use std::path::Path;

    /// Everything a replay holds, in a comparable form.
    fn everything(r: &Replay) -> Vec<String> {
        let commits: Vec<_> = r.commits().collect();
        let pending: Vec<_> = r.pending().collect();
        vec![
            format!("{commits:?}"),
            format!("{} {}", r.live_keys(), r.pending_count()),
            format!("{pending:?}"),
            format!("{:?}", r.history),
            format!("{} {:?}", r.bad_count, r.bad),
            format!("{} {:?}", r.warning_count, r.warnings),
            format!("{:?}", r.stats),
            format!("{:?}", r.groups),
            format!("{:?}", r.coordinator),
            format!("{:?}", r.committed_groups()),
            format!("{:?}", r.offset_groups),
        ]
    }

    /// Replay `partitions` with the hashed table and with the exact path;
    /// the two must agree in every respect, and answer `get` alike.
    fn same_as_exact(partitions: &[Partition], opts: &ReplayOptions) -> Replay {
        let mut fast = Replay::new(opts.clone());
        let mut exact = Replay::new_exact(opts.clone());
        for p in partitions {
            fast.replay_partition(p).unwrap();
            exact.replay_partition(p).unwrap();
        }
        let (a, b) = (everything(&fast), everything(&exact));
        for (a, b) in a.iter().zip(&b) {
            assert_eq!(a, b, "{:?} {opts:?}", partitions[0].dir);
        }
        for (g, t, p, c) in exact.commits() {
            assert_eq!(fast.get(g, t, p), Some(c));
            assert_eq!(fast.get(g, t, p + 1), exact.get(g, t, p + 1));
        }
        fast
    }

    fn option_sets() -> Vec<ReplayOptions> {
        let mut sets = vec![ReplayOptions::default()];
        for (group, topic) in [
            (None, None),
            (Some("g1"), None),
            (Some("billing"), Some("orders")),
        ] {
            sets.push(ReplayOptions {
                history: true,
                group: group.map(str::to_string),
                topic: topic.map(str::to_string),
                ..ReplayOptions::default()
            });
        }
        for as_of in [
            AsOf::Offset(3),
            AsOf::Offset(40),
            AsOf::Timestamp(1_700_000_000_050),
        ] {
            sets.push(ReplayOptions {
                as_of: Some(as_of),
                ..ReplayOptions::default()
            });
        }
        sets
    }

    /// The offsets partitions under `root`, grouped by the folder holding them.
    fn offsets_partitions(root: &Path) -> BTreeMap<PathBuf, Vec<PathBuf>> {
        let mut by_parent: BTreeMap<PathBuf, Vec<PathBuf>> = BTreeMap::new();
        for e in walkdir::WalkDir::new(root).sort_by_file_name() {
            let e = e.unwrap();
            let name = e.file_name().to_string_lossy();
            if e.file_type().is_dir()
                && (name.starts_with("__consumer_offsets-") || name.starts_with("__offsets-"))
            {
                let parent = e.path().parent().unwrap().to_path_buf();
                by_parent
                    .entry(parent)
                    .or_default()
                    .push(e.path().to_path_buf());
            }
        }
        by_parent
    }

    #[test]
    fn fixtures_replay_as_the_exact_path_does() {
        let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
        let mut replayed = 0;
        for dirs in offsets_partitions(&root).values() {
            let partitions: Vec<Partition> = dirs
                .iter()
                .filter_map(|d| Partition::open(d).ok())
                .filter(|p| !p.segments.is_empty())
                .collect();
            if partitions.is_empty() {
                continue;
            }
            for opts in option_sets() {
                same_as_exact(&partitions, &opts);
            }
            replayed += 1;
        }
        assert!(replayed >= 8, "{replayed} offsets folders");
    }

    fn one_in(rng: &mut Rng, n: u64) -> bool {
        rng.below(n) == 0
    }

    fn string16(out: &mut Vec<u8>, s: &[u8]) {
        out.extend((s.len() as i16).to_be_bytes());
        out.extend(s);
    }

    /// An offsets-topic key: mostly OffsetCommitKeys of a few groups,
    /// topics and partitions (some with other versions, trailing bytes or
    /// strings that are not UTF-8), some group metadata and other types.
    fn random_key(rng: &mut Rng) -> Option<Vec<u8>> {
        const NAMES: [&[u8]; 6] = [
            b"g1",
            b"g2",
            b"orders",
            b"\xc3\xa9t\xc3\xa9",
            b"",
            b"bad\xff",
        ];
        if one_in(rng, 60) {
            return None;
        }
        let mut k = Vec::new();
        match rng.below(20) {
            0 => {
                k.extend(2i16.to_be_bytes());
                string16(&mut k, NAMES[rng.below(3) as usize]);
            }
            1 => k.extend([0x00, 0x07, 0x01]), // another type, short
            2 => k.extend([0x00]),             // shorter than a type
            _ => {
                k.extend(if one_in(rng, 4) { 0i16 } else { 1i16 }.to_be_bytes());
                let mut name = || {
                    let pool = if one_in(rng, 8) { 6 } else { 3 };
                    let i = rng.below(pool);
                    NAMES[i as usize]
                };
                let (g, t) = (name(), name());
                string16(&mut k, g);
                if one_in(rng, 40) {
                    k.extend((-1i16).to_be_bytes()); // a null topic
                } else {
                    string16(&mut k, t);
                }
                k.extend((rng.below(3) as i32).to_be_bytes());
                if one_in(rng, 30) {
                    k.push(0xee); // trailing
                }
                if one_in(rng, 50) {
                    k.truncate(k.len() - 2); // torn partition
                }
            }
        }
        Some(k)
    }

    /// An OffsetCommitValue of any version, sometimes odd.
    fn random_value(rng: &mut Rng, offset: i64) -> Option<Vec<u8>> {
        if one_in(rng, 10) {
            return None; // tombstone
        }
        let version = [0i16, 1, 2, 3, 3, 3, 4, 7, -2][rng.below(9) as usize];
        let read_as = version.clamp(0, 4);
        let mut v = version.to_be_bytes().to_vec();
        v.extend((if one_in(rng, 25) { -5 } else { offset }).to_be_bytes());
        if read_as >= 3 {
            v.extend(2i32.to_be_bytes());
        }
        let meta: &[u8] = [b"" as &[u8], b"m", b"\xff"][rng.below(3) as usize];
        if read_as >= 4 {
            v.push(meta.len() as u8 + 1);
            v.extend(meta);
        } else {
            string16(&mut v, meta);
        }
        v.extend(1_700_000_000_000i64.to_be_bytes());
        if read_as == 1 {
            v.extend(1_700_000_100_000i64.to_be_bytes());
        }
        if read_as >= 4 {
            v.push(0); // no tagged fields
        }
        if one_in(rng, 30) {
            v.push(1); // trailing
        }
        if one_in(rng, 40) {
            v.truncate(rng.below(v.len() as u64) as usize);
        }
        Some(v)
    }

    /// A log of plain, transactional and control batches over a few keys:
    /// in some stretches a fixed list of keys committed again and again in
    /// the same order, in others keys at random.
    fn random_log(seed: u64) -> Vec<u8> {
        let mut rng = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
        let fixed: Vec<Option<Vec<u8>>> = (0..12).map(|_| random_key(&mut rng)).collect();
        let (mut out, mut offset) = (Vec::new(), 0i64);
        for _ in 0..(20 + rng.below(40)) {
            let pid = [-1i64, -1, -1, 1, 2, 3][rng.below(6) as usize];
            let control = pid >= 0 && one_in(&mut rng, 3);
            let n = if control {
                1
            } else {
                1 + rng.below(15) as usize
            };
            let in_order = one_in(&mut rng, 2);
            let start = rng.below(fixed.len() as u64) as usize;
            let records: Vec<NewRecord> = (0..n)
                .map(|i| {
                    let at = offset + i as i64;
                    let (key, value) = if control {
                        let kind = rng.below(2) as i16; // ABORT, COMMIT
                        let mut k = 0i16.to_be_bytes().to_vec();
                        k.extend(kind.to_be_bytes());
                        let mut v = 0i16.to_be_bytes().to_vec();
                        v.extend(3i32.to_be_bytes());
                        (Some(k), Some(v))
                    } else if in_order {
                        let key = fixed[(start + i) % fixed.len()].clone();
                        (key, random_value(&mut rng, at))
                    } else {
                        (random_key(&mut rng), random_value(&mut rng, at))
                    };
                    NewRecord {
                        key,
                        value,
                        headers: vec![],
                        timestamp: 1_700_000_000_000 + at,
                    }
                })
                .collect();
            let spec = BatchSpec {
                base_offset: offset,
                transactional: pid >= 0,
                control,
                producer_id: pid,
                producer_epoch: if pid >= 0 { 0 } else { -1 },
                ..BatchSpec::default()
            };
            out.extend(encode_batch(&spec, &records).unwrap());
            offset += n as i64;
        }
        out
    }

    #[test]
    fn random_logs_replay_as_the_exact_path_does() {
        let dir = tempfile::tempdir().unwrap();
        for seed in 0..150u64 {
            let mut partitions = Vec::new();
            for lp in 0..2u64 {
                let folder = dir
                    .path()
                    .join(format!("s{seed}"))
                    .join(format!("__offsets-{lp}"));
                std::fs::create_dir_all(&folder).unwrap();
                let log = random_log(seed * 2 + lp);
                std::fs::write(folder.join("00000000000000000000.log"), log).unwrap();
                partitions.push(Partition::open(&folder).unwrap());
            }
            for opts in option_sets() {
                same_as_exact(&partitions, &opts);
            }
        }
    }

    /// Replay, by both paths ([`same_as_exact`]), one offsets partition
    /// holding one batch of the plain records `pairs` (key, value).
    fn replay_one_batch(pairs: Vec<(Vec<u8>, Vec<u8>)>) -> Replay {
        let dir = tempfile::tempdir().unwrap();
        let folder = dir.path().join("__offsets-0");
        std::fs::create_dir_all(&folder).unwrap();
        let records: Vec<NewRecord> = pairs
            .into_iter()
            .map(|(k, v)| NewRecord {
                key: Some(k),
                value: Some(v),
                headers: vec![],
                timestamp: 1,
            })
            .collect();
        let log = encode_batch(&BatchSpec::default(), &records).unwrap();
        std::fs::write(folder.join("00000000000000000000.log"), log).unwrap();
        let p = Partition::open(&folder).unwrap();
        same_as_exact(&[p], &ReplayOptions::default())
    }

    #[test]
    fn repeated_commits_take_the_hashed_path() {
        // The same keys committed in the same order, then in another order:
        // the table must hold the last commit of each.
        let key = |g: &str, p: i32| encode_offset_commit_key(g, "t", p);
        let value = |o: i64| {
            crate::offsets::encode_offset_commit_value(
                crate::offsets::CommitFormat::V3,
                o as u64,
                0,
                "",
                5,
            )
        };
        let order: Vec<(usize, i32)> = (0..3)
            .flat_map(|round| (0..4).map(move |p| (round, if round == 2 { 3 - p } else { p })))
            .collect();
        let pairs = order
            .iter()
            .enumerate()
            .map(|(i, (_, p))| (key("g", *p), value(i as i64)))
            .collect();
        let r = replay_one_batch(pairs);
        let got: Vec<(i32, i64)> = r.commits().map(|(_, _, p, c)| (p, c.offset)).collect();
        assert_eq!(got, vec![(0, 11), (1, 10), (2, 9), (3, 8)]);
        assert_eq!(r.stats.offset_commits, 12);
    }

    /// Keys and values Kafka's generated readers read where a strict
    /// reading refuses them are loaded as the coordinator loads them
    /// (`CoordinatorRecordSerde.readMessage` calls `OffsetCommitKey.read`,
    /// `GroupMetadataValue.read`), each with a warning: a name's malformed
    /// UTF-8 is U+FFFD (`new String(bytes, UTF_8)`: two keys that differ
    /// there are one key to the coordinator), a nullable string of length
    /// -257 is null.
    #[test]
    fn what_kafka_reads_leniently_is_loaded_with_a_warning() {
        let key = |group: &[u8]| {
            let mut k = 1i16.to_be_bytes().to_vec();
            string16(&mut k, group);
            string16(&mut k, b"t");
            k.extend(0i32.to_be_bytes());
            k
        };
        let value = |o: u64| {
            crate::offsets::encode_offset_commit_value(
                crate::offsets::CommitFormat::V3,
                o,
                0,
                "",
                5,
            )
        };
        // GroupMetadataValue v3: protocolType "", generation 0, protocol of
        // length -257, leader null, currentStateTimestamp 0, no members.
        let mut group = 3i16.to_be_bytes().to_vec();
        string16(&mut group, b"");
        group.extend(0i32.to_be_bytes());
        group.extend((-257i16).to_be_bytes());
        group.extend((-1i16).to_be_bytes());
        group.extend(0i64.to_be_bytes());
        group.extend(0i32.to_be_bytes());
        let mut group_key = 2i16.to_be_bytes().to_vec();
        string16(&mut group_key, b"h");
        let r = replay_one_batch(vec![
            (key(b"g\xff"), value(5)),
            (key(b"g\xfe"), value(9)),
            (group_key, group),
        ]);
        let got: Vec<(&str, i64)> = r.commits().map(|(g, _, _, c)| (g, c.offset)).collect();
        assert_eq!(got, vec![("g\u{fffd}", 9)]);
        assert_eq!(r.groups["h"].protocol, None);
        assert!(r.bad.is_empty(), "{:?}", r.bad);
        let kinds: Vec<(Kind, Severity)> =
            r.warnings.iter().map(|f| (f.kind, f.severity)).collect();
        assert_eq!(
            kinds,
            [
                (Kind::InvalidUtf8, Severity::Warning),
                (Kind::InvalidUtf8, Severity::Warning),
                (Kind::NegativeLength, Severity::Warning),
            ]
        );
        assert!(r.warnings[2]
            .detail
            .contains("negative length -257 in protocol"));
        assert!(r.warnings[2].detail.contains("reads the field as null"));
    }
}
