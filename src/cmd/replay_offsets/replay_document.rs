//! `klog replay-offsets`'s document: the committed offsets (or every commit), the pending ones, what could not be replayed.

use super::*;

/// One live committed offset.
#[derive(Serialize, JsonSchema)]
struct OffsetRow {
    group: String,
    topic: String,
    partition: i32,
    /// The next offset the group will read.
    committed_offset: i64,
    leader_epoch: i32,
    metadata: String,
    commit_timestamp_ms: i64,
    /// A v1 value's expireTimestamp; null for other versions and for -1 (not set).
    expire_timestamp_ms: Option<i64>,
    /// ok, topic_recreated or expired (see the command's help).
    status: &'static str,
    /// The OffsetCommitValue version of the record.
    value_version: i16,
    /// The id of the topic it was committed for (v4, Kafka 4.1+).
    topic_id: Option<String>,
    /// Where the record sits: offsets-topic partition and offset.
    log_partition: i32,
    log_offset: i64,
}

/// One commit or tombstone of a selected key, in log order (`--history`).
#[derive(Serialize, JsonSchema)]
struct HistoryRow {
    log_partition: i32,
    log_offset: i64,
    /// Byte position of the batch holding the record.
    position: u64,
    /// commit, tombstone, pending, txn_committed, txn_aborted,
    /// txn_superseded or txn_cancelled.
    event: &'static str,
    group: String,
    topic: String,
    partition: i32,
    committed_offset: Option<i64>,
    commit_timestamp_ms: Option<i64>,
}

/// A transactional commit still waiting for its producer's marker.
#[derive(Serialize, JsonSchema)]
struct PendingRow {
    log_partition: i32,
    producer_id: i64,
    group: String,
    topic: String,
    partition: i32,
    committed_offset: i64,
}

/// A record that did not decode.
#[derive(Serialize, JsonSchema)]
struct BadRow {
    /// `file` (and `file_base64` when the path is not UTF-8).
    #[serde(flatten)]
    file: kaen_log::log::findings::FileFields,
    log_partition: i32,
    /// -1 when unknown (a torn tail).
    log_offset: i64,
    error: String,
}

/// What the replay read.
#[derive(Serialize, JsonSchema)]
struct ReplaySummary {
    /// The offsets topic's name (`__offsets` or `__consumer_offsets`).
    topic: String,
    records: u64,
    offset_commits: u64,
    tombstones: u64,
    group_metadata_records: u64,
    live_keys: u64,
    /// Newer coordinator record types not part of the table, by name and
    /// type (`ConsumerGroupMetadata (type 3)`).
    other_record_types: BTreeMap<String, u64>,
    control_records: u64,
    txn_commits_applied: u64,
    txn_commits_aborted: u64,
    txn_commits_superseded: u64,
    txn_commits_cancelled: u64,
    txn_commits_pending: u64,
    bad_records: u64,
    warnings: u64,
    /// Log end offset of each offsets partition read.
    log_end_offsets: BTreeMap<i32, i64>,
}

/// `klog replay-offsets`'s document.
#[derive(Serialize, JsonSchema)]
pub struct ReplayReport {
    /// The offsets partitions not read whole: the table lacks their
    /// records (empty when every record was read and applied).
    incomplete: Vec<Incomplete>,
    /// The committed-offset table, by group, topic, partition (absent with
    /// `--history`).
    #[serde(skip_serializing_if = "Option::is_none")]
    offsets: Option<Vec<OffsetRow>>,
    /// Every event of the selected keys (only with `--history`).
    #[serde(skip_serializing_if = "Option::is_none")]
    history: Option<Vec<HistoryRow>>,
    pending: Vec<PendingRow>,
    bad_records: Vec<BadRow>,
    /// What the broker loads but is unusual.
    findings: Vec<Finding>,
    summary: ReplaySummary,
    #[serde(skip)]
    time_format: TimeFormat,
}

impl ReplayReport {
    pub(super) fn new(
        replay: &Replay,
        args: &ReplayOffsetsArgs,
        topic: &str,
        judge: &Judge<'_>,
        time_format: TimeFormat,
    ) -> Self {
        let offsets = (!args.history).then(|| offset_rows(replay, args, judge));
        let history = args.history.then(|| history_rows(replay));
        let pending = replay
            .pending()
            .map(|(lp, pid, g, t, p, o)| PendingRow {
                log_partition: lp,
                producer_id: pid,
                group: g.to_string(),
                topic: t.to_string(),
                partition: p,
                committed_offset: o,
            })
            .collect();
        let bad_records = replay
            .bad
            .iter()
            .map(|b| BadRow {
                file: kaen_log::log::findings::FileFields::of(&b.file),
                log_partition: b.log_partition,
                log_offset: b.log_offset,
                error: b.error.to_string(),
            })
            .collect();
        ReplayReport {
            incomplete: replay.incomplete.values().cloned().collect(),
            offsets,
            history,
            pending,
            bad_records,
            findings: replay.warnings.clone(),
            summary: ReplaySummary::of(replay, topic),
            time_format,
        }
    }
}

/// The committed offsets of the groups and topics `args` selects, each
/// with its standing as `judge` has it.
fn offset_rows(replay: &Replay, args: &ReplayOffsetsArgs, judge: &Judge<'_>) -> Vec<OffsetRow> {
    replay
        .commits()
        .filter(|(g, t, _, _)| {
            args.group.as_deref().is_none_or(|x| x == *g)
                && args.topic.as_deref().is_none_or(|x| x == *t)
        })
        .map(|(g, t, p, c)| OffsetRow {
            group: g.to_string(),
            topic: t.to_string(),
            partition: p,
            committed_offset: c.offset,
            leader_epoch: c.leader_epoch,
            metadata: c.metadata.clone(),
            commit_timestamp_ms: c.commit_timestamp,
            expire_timestamp_ms: c.expire_timestamp,
            status: judge.standing(g, t, p, c).name(),
            value_version: c.value_version,
            topic_id: c.topic_id.clone(),
            log_partition: c.log_partition,
            log_offset: c.log_offset,
        })
        .collect()
}

/// Every event the replay recorded, in log order.
fn history_rows(replay: &Replay) -> Vec<HistoryRow> {
    replay
        .history
        .iter()
        .map(|e| HistoryRow {
            log_partition: e.log_partition,
            log_offset: e.log_offset,
            position: e.position,
            event: e.kind.name(),
            group: e.group.clone(),
            topic: e.topic.clone(),
            partition: e.partition,
            committed_offset: e.offset,
            commit_timestamp_ms: e.commit_timestamp,
        })
        .collect()
}

impl ReplaySummary {
    /// The counts of `replay` over the offsets topic `topic`.
    fn of(replay: &Replay, topic: &str) -> Self {
        let s = &replay.stats;
        let other_record_types = s
            .skipped_types
            .iter()
            .map(|(t, n)| {
                let name = kaen_log::offsets::records::group_record_name(*t);
                let name = if name.starts_with("unknown") {
                    format!("type {t}")
                } else {
                    format!("{name} (type {t})")
                };
                (name, *n)
            })
            .collect();
        ReplaySummary {
            topic: topic.to_string(),
            records: s.records,
            offset_commits: s.offset_commits,
            tombstones: s.tombstones,
            group_metadata_records: s.group_metadata,
            live_keys: replay.live_keys() as u64,
            other_record_types,
            control_records: s.control_records,
            txn_commits_applied: s.txn_commits_applied,
            txn_commits_aborted: s.txn_commits_aborted,
            txn_commits_superseded: s.txn_commits_superseded,
            txn_commits_cancelled: s.txn_commits_cancelled,
            txn_commits_pending: replay.pending_count() as u64,
            bad_records: replay.bad_count,
            warnings: replay.warning_count,
            log_end_offsets: s.log_end_offsets.clone(),
        }
    }
}

/// The columns of the offsets table in text and CSV.
const OFFSET_COLUMNS: &[&str] = &[
    "group",
    "topic",
    "partition",
    "committed_offset",
    "leader_epoch",
    "metadata",
    "commit_timestamp_ms",
    "status",
];

impl Report for ReplayReport {
    const COMMAND: &'static str = "replay-offsets";

    fn tables(&self) -> Vec<Table> {
        match (&self.offsets, &self.history) {
            (_, Some(history)) => {
                vec![Table::of(history).times(&["commit_timestamp_ms"], self.time_format)]
            }
            (Some(offsets), _) => vec![Table::of(offsets).only(OFFSET_COLUMNS).times(
                &["commit_timestamp_ms", "expire_timestamp_ms"],
                self.time_format,
            )],
            (None, None) => Vec::new(),
        }
    }

    fn summary(&self) -> String {
        let s = &self.summary;
        let others = if s.other_record_types.is_empty() {
            "0".to_string()
        } else {
            let by_type: Vec<String> = s
                .other_record_types
                .iter()
                .map(|(t, n)| format!("{t}: {n}"))
                .collect();
            format!(
                "{} ({})",
                s.other_record_types.values().sum::<u64>(),
                by_type.join(", ")
            )
        };
        let ends: Vec<String> = s
            .log_end_offsets
            .iter()
            .map(|(p, e)| format!("{}-{p}: {e}", s.topic))
            .collect();
        let mut text = crate::report::document::incomplete_text(&self.incomplete);
        text += &format!(
            "records read: {}\noffset commits: {}\ntombstones: {}\ngroup metadata records: {}\nlive keys: {}\n\
             other record types: {others}\ntransactional commits applied: {}, aborted: {}, superseded: {}, cancelled: {}, pending: {}\n\
             bad records: {}\nwarnings: {}\nlog end offsets: {}\n",
            s.records,
            s.offset_commits,
            s.tombstones,
            s.group_metadata_records,
            s.live_keys,
            s.txn_commits_applied,
            s.txn_commits_aborted,
            s.txn_commits_superseded,
            s.txn_commits_cancelled,
            s.txn_commits_pending,
            s.bad_records,
            s.warnings,
            ends.join(", "),
        );
        text += &crate::report::document::topic_recreated_text(
            self.offsets.iter().flatten().map(|r| r.status),
        );
        for p in &self.pending {
            text.push_str(&format!(
                "pending: producer {} in {}-{}: {} {}-{} -> {} (no COMMIT or ABORT marker yet)\n",
                p.producer_id,
                s.topic,
                p.log_partition,
                p.group,
                p.topic,
                p.partition,
                p.committed_offset
            ));
        }
        text
    }

    fn write_lines(&self, lines: &mut Jsonl<'_>) -> anyhow::Result<()> {
        for row in &self.incomplete {
            lines.line("incomplete", row)?;
        }
        for row in self.offsets.iter().flatten() {
            lines.line("offset", row)?;
        }
        for row in self.history.iter().flatten() {
            lines.line("event", row)?;
        }
        for row in &self.pending {
            lines.line("pending", row)?;
        }
        for row in &self.bad_records {
            lines.line("bad_record", row)?;
        }
        for f in &self.findings {
            lines.line("finding", f)?;
        }
        lines.line("summary", &self.summary)
    }
}
