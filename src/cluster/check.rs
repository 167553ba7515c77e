//! What a summary document must satisfy before `klog cluster` merges it.
//!
//! A summary is a file from another host: it may have been edited, cut or
//! made by something else. Deserializing checks its shape; this checks the
//! invariants Kafka keeps for the same values, so a tampered number is
//! refused with the file and the field's JSON path (`log_dirs[0].
//! partitions[2].log_end_offset`) instead of turning into a verdict such
//! as "truncate to -5", or a diverged partition reported as only behind.

use super::broker_summary::{EpochEntry, PartitionSummary, SummaryDoc};

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
    for (d, dir) in doc.log_dirs.iter().enumerate() {
        for (i, p) in dir.partitions.iter().enumerate() {
            partition(&format!("log_dirs[{d}].partitions[{i}]"), p)?;
        }
    }
    Ok(())
}
