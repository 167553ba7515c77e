//! What a summary document must satisfy before `klog cluster` merges it.
//!
//! A summary is a file from another host: it may have been edited, cut or
//! made by something else. Deserializing checks its shape; this checks the
//! invariants Kafka keeps for the same values, so a tampered number is
//! refused with the file and the field's JSON path (`log_dirs[0].
//! partitions[2].log_end_offset`) instead of turning into a verdict such
//! as "truncate to -5", or a diverged partition reported as only behind.

use super::broker_summary::{
    EpochEntry, LogDirSummary, MetadataSummary, PartitionSummary, SummaryDoc,
};

/// The command whose JSON document a summary is (`klog summary --format
/// json`).
pub const SUMMARY_COMMAND: &str = "summary";

/// A field that breaks an invariant: its JSON path and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Violation {
    pub path: String,
    pub why: String,
}

impl std::fmt::Display for Violation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.path, self.why)
    }
}

/// Offsets are below `Long.MAX_VALUE`: Kafka uses it as "no offset" and
/// "no end" (`LogLoader`'s `minSwapFileOffset`, `LogSegments.values(from,
/// Long.MAX_VALUE)`), and a log ending there could take no record more.
const OFFSET_LIMIT: i64 = i64::MAX;

/// `value` at `path` is an offset: at least `min` (named `what`, if it is
/// another field) and below [`OFFSET_LIMIT`].
fn offset(
    path: impl FnOnce() -> String,
    value: i64,
    min: i64,
    what: Option<&str>,
) -> Result<(), Violation> {
    if value < min || value == OFFSET_LIMIT {
        let range = match what {
            None => min.to_string(),
            Some(what) => format!("{what} {min}"),
        };
        return Err(Violation {
            path: path(),
            why: format!("{value} is not an offset from {range} to 2^63-2"),
        });
    }
    Ok(())
}

/// The leader-epoch cache as a broker holds it: every entry's epoch and
/// start offset at least 0 (`LeaderEpochFileCache.assign` throws
/// IllegalArgumentException otherwise), and both strictly increasing
/// (`maybeTruncateNonMonotonicEntries` removes every entry whose epoch or
/// start offset is not below the new one's).
fn epoch_cache(path: &str, entries: &[EpochEntry]) -> Result<(), Violation> {
    let mut last: Option<&EpochEntry> = None;
    for (i, e) in entries.iter().enumerate() {
        let at = |field: &str| format!("{path}[{i}].{field}");
        if e.leader_epoch < 0 {
            return Err(Violation {
                path: at("leader_epoch"),
                why: format!("{} is below 0", e.leader_epoch),
            });
        }
        offset(|| at("start_offset"), e.start_offset, 0, None)?;
        if let Some(prev) = last {
            if e.leader_epoch <= prev.leader_epoch {
                return Err(Violation {
                    path: at("leader_epoch"),
                    why: format!(
                        "epoch {} follows epoch {}: a leader-epoch cache's epochs increase",
                        e.leader_epoch, prev.leader_epoch
                    ),
                });
            }
            if e.start_offset <= prev.start_offset {
                return Err(Violation {
                    path: at("start_offset"),
                    why: format!(
                        "epoch {} starts at {}, not after epoch {}'s start {}: a leader-epoch cache's start offsets increase",
                        e.leader_epoch, e.start_offset, prev.leader_epoch, prev.start_offset
                    ),
                });
            }
        }
        last = Some(e);
    }
    Ok(())
}

/// One partition replica's summary at `path`.
fn partition(path: &str, p: &PartitionSummary) -> Result<(), Violation> {
    let at = |field: &str| format!("{path}.{field}");
    // A partition number is at least 0: `LocalLog.parseTopicPartitionName`
    // splits a folder's name at its last `-`, so none parses negative.
    if p.partition < 0 {
        return Err(Violation {
            path: at("partition"),
            why: format!("{} is below 0", p.partition),
        });
    }
    // `UnifiedLog`: the log start offset is at least 0 and the log end
    // offset at least the log start.
    offset(|| at("log_start_offset"), p.log_start_offset, 0, None)?;
    offset(
        || at("log_end_offset"),
        p.log_end_offset,
        p.log_start_offset,
        Some("the log start offset"),
    )?;
    if let Some(checkpoint) = &p.leader_epoch_checkpoint {
        // Loaded entry by entry through `LeaderEpochFileCache.assign`,
        // which throws on a negative epoch or start offset.
        for (i, e) in checkpoint.iter().enumerate() {
            if e.leader_epoch < 0 || e.start_offset < 0 {
                return Err(Violation {
                    path: format!("{path}.leader_epoch_checkpoint[{i}]"),
                    why: format!(
                        "epoch {} at {}: a broker refuses a negative entry",
                        e.leader_epoch, e.start_offset
                    ),
                });
            }
        }
    }
    epoch_cache(&at("leader_epochs"), &p.leader_epochs)?;
    // `LogSegments` holds segments by base offset: each at least 0, in
    // increasing order, none twice.
    let mut last: Option<i64> = None;
    for (i, s) in p.segments.iter().enumerate() {
        let at = || format!("{path}.segments[{i}].base_offset");
        offset(at, s.base_offset, 0, None)?;
        if last.is_some_and(|l| s.base_offset <= l) {
            return Err(Violation {
                path: format!("{path}.segments[{i}].base_offset"),
                why: format!(
                    "{} does not follow the segment before it ({}): segments are in increasing base offset order",
                    s.base_offset,
                    last.unwrap_or_default()
                ),
            });
        }
        last = Some(s.base_offset);
    }
    // The runs of batches by epoch: `summary` starts a run only where the
    // epoch goes up.
    for (i, pair) in p.epochs.windows(2).enumerate() {
        if let [a, b] = pair {
            if b.leader_epoch <= a.leader_epoch {
                return Err(Violation {
                    path: format!("{path}.epochs[{}].leader_epoch", i + 1),
                    why: format!(
                        "epoch {} follows epoch {}: runs of batches start where the epoch goes up",
                        b.leader_epoch, a.leader_epoch
                    ),
                });
            }
        }
    }
    Ok(())
}

/// The longest path a log directory can have (Linux's `PATH_MAX`).
const MAX_PATH: usize = 4096;
/// The longest file name (`NAME_MAX`): a partition folder's topic, and
/// (generously) a Kafka topic name (249 characters) or an id.
const MAX_NAME: usize = 255;
/// The longest string an offsets record's key or a metadata record's
/// string16 field holds (`Short.MAX_VALUE` bytes): a group id, a rack.
const MAX_STRING16: usize = i16::MAX as usize;
/// The longest message klog writes about damage (a path and the error).
const MAX_MESSAGE: usize = 64 * 1024;

/// `value` at `path` is text of at most `max` bytes (`what` says why).
/// Refused before anything shows it: a summary is a file from another
/// host, and a 100 MB "path" would otherwise be copied into every line,
/// cell and page that names it.
fn text(
    path: impl FnOnce() -> String,
    value: &str,
    max: usize,
    what: &str,
) -> Result<(), Violation> {
    if value.len() > max {
        return Err(Violation {
            path: path(),
            why: format!(
                "{} bytes, over the {max} bytes {what}: not a summary klog wrote",
                value.len()
            ),
        });
    }
    Ok(())
}

/// Every string of the log directory `d` (at `path`) within what it can be.
fn dir_strings(path: &str, d: &LogDirSummary) -> Result<(), Violation> {
    let at = |field: &str| format!("{path}.{field}");
    text(
        || at("path"),
        &d.path,
        MAX_PATH,
        "a path can hold (PATH_MAX)",
    )?;
    if let Some(b) = &d.path_base64 {
        text(
            || at("path_base64"),
            b,
            MAX_PATH.div_ceil(3) * 4,
            "a path takes in base64",
        )?;
    }
    for (field, id) in [
        ("cluster_id", &d.cluster_id),
        ("directory_id", &d.directory_id),
    ] {
        if let Some(id) = id {
            text(|| at(field), id, MAX_NAME, "an id may take")?;
        }
    }
    for (i, p) in d.partitions.iter().enumerate() {
        let at = |field: &str| format!("{path}.partitions[{i}].{field}");
        text(
            || at("topic"),
            &p.topic,
            MAX_NAME,
            "a folder name can hold (NAME_MAX)",
        )?;
        if let Some(id) = &p.topic_id {
            text(|| at("topic_id"), id, MAX_NAME, "an id may take")?;
        }
        if let Some(damage) = &p.damage {
            text(
                || at("damage"),
                damage,
                MAX_MESSAGE,
                "klog writes about damage",
            )?;
        }
    }
    if let Some(c) = &d.committed_offsets {
        text(
            || at("committed_offsets.offsets_topic"),
            &c.offsets_topic,
            MAX_NAME,
            "a topic name may take",
        )?;
        for (i, o) in c.offsets.iter().enumerate() {
            let at = |field: &str| format!("{path}.committed_offsets.offsets[{i}].{field}");
            text(
                || at("group"),
                &o.group,
                MAX_STRING16,
                "an offsets record's group id can hold",
            )?;
            text(
                || at("topic"),
                &o.topic,
                MAX_STRING16,
                "an offsets record's topic can hold",
            )?;
        }
    }
    if let Some(m) = &d.metadata {
        metadata_strings(&at("metadata"), m)?;
    }
    Ok(())
}

/// Every string of a metadata image's summary (at `path`) within what it can be.
fn metadata_strings(path: &str, m: &MetadataSummary) -> Result<(), Violation> {
    for (i, b) in m.brokers.iter().enumerate() {
        if let Some(rack) = &b.rack {
            text(
                || format!("{path}.brokers[{i}].rack"),
                rack,
                MAX_STRING16,
                "a rack may take",
            )?;
        }
    }
    for (i, t) in m.topics.iter().enumerate() {
        let at = |field: &str| format!("{path}.topics[{i}].{field}");
        text(|| at("topic"), &t.topic, MAX_NAME, "a topic name may take")?;
        text(|| at("topic_id"), &t.topic_id, MAX_NAME, "an id may take")?;
    }
    Ok(())
}

/// Check `doc`, whose envelope named `command`, against the invariants
/// above; the first field that breaks one.
pub fn check(command: Option<&str>, doc: &SummaryDoc) -> Result<(), Violation> {
    if command != Some(SUMMARY_COMMAND) {
        return Err(Violation {
            path: "command".into(),
            why: match command {
                Some(c) => format!("{c:?} is not {SUMMARY_COMMAND:?}: the document of `klog {c}`, not of `klog summary`"),
                None => format!("missing: a summary says \"command\": {SUMMARY_COMMAND:?}"),
            },
        });
    }
    for (i, f) in doc.findings.iter().enumerate() {
        let at = |field: &str| format!("findings[{i}].{field}");
        let file = f.file.to_string_lossy();
        text(|| at("file"), &file, MAX_PATH, "a path can hold (PATH_MAX)")?;
        text(
            || at("detail"),
            &f.detail,
            MAX_MESSAGE,
            "klog writes about a finding",
        )?;
    }
    for (d, dir) in doc.log_dirs.iter().enumerate() {
        dir_strings(&format!("log_dirs[{d}]"), dir)?;
        for (i, p) in dir.partitions.iter().enumerate() {
            partition(&format!("log_dirs[{d}].partitions[{i}]"), p)?;
        }
    }
    Ok(())
}
