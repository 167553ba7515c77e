//! What a broker does with what the checks find: for each finding, in
//! Kafka's words, whether its next start cuts it away
//! (`LogSegment.recover`), rebuilds it (`LogLoader`, `ProducerStateManager`)
//! or serves it as it is; the severities' meaning
//! ([`Severity`]) applied to one finding at a time.
//!
//! A damaged log is placed against its partition's restart: where the
//! recovery cuts ([`restart_cut`]), and from which recovery point.

use std::path::PathBuf;

use crate::error::Result;
use crate::inspect::recovery::{restart_cut, RestartCut};
use crate::log::findings::{Finding, Kind, Severity};
use crate::log::Partition;

/// One partition's damaged log as a restarting broker meets it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogDamage {
    /// The error findings in its log segments.
    pub findings: Vec<Finding>,
    /// Where its recovery cuts, if it reaches the damage.
    pub cut: Option<RestartCut>,
    /// Its recovery point (0 without one).
    pub recovery_point: i64,
}

impl LogDamage {
    /// The error findings of `findings` in `p`'s log segments, and where a
    /// restart after a shutdown that was `clean_shutdown` cuts `p`, from
    /// `recovery_point`; `None` when its logs have no error (recovery cuts
    /// only at damage the checks find too: framing and CRCs).
    pub fn of(
        p: &Partition,
        findings: &[Finding],
        clean_shutdown: bool,
        recovery_point: i64,
    ) -> Result<Option<LogDamage>> {
        let findings: Vec<Finding> = findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .filter(|f| f.file.parent() == Some(p.dir.as_path()))
            .filter(|f| is_log(f))
            .cloned()
            .collect();
        if findings.is_empty() {
            return Ok(None);
        }
        Ok(Some(LogDamage {
            findings,
            cut: restart_cut(p, clean_shutdown, recovery_point)?,
            recovery_point,
        }))
    }
}

fn is_log(f: &Finding) -> bool {
    f.file.extension().is_some_and(|e| e == "log")
}

/// What Kafka does with `f`, for people. Damage in a log segment is placed
/// against the restart of the partition among `damaged` that holds its
/// file (the first); the other kinds by what a broker loading them does.
pub fn kafka_does(f: &Finding, damaged: &[LogDamage]) -> String {
    if f.severity == Severity::Error && is_log(f) {
        let Some(d) = damaged
            .iter()
            .find(|d| d.findings.iter().any(|g| g.file == f.file))
        else {
            return "log bytes damaged: a broker's recovery (LogSegment.recover) cuts the log at the first invalid batch of the segments it recovers".into();
        };
        return log_damage(f, d);
    }
    match f.kind {
        Kind::TrailingZeros => {
            "recovery truncates the zero bytes; no record is lost".into()
        }
        Kind::IndexTrailingZeros => {
            "preallocated slots of an active segment's index: a broker trims them at roll or clean shutdown".into()
        }
        Kind::IndexLength
        | Kind::IndexMissing
        | Kind::IndexOrder
        | Kind::IndexTarget
        | Kind::IndexPastLog
        | Kind::TimeIndexStale => {
            "a broker rebuilds the index when its sanity check fails on load (LogLoader, LogSegment.sanityCheck)".into()
        }
        Kind::TxnIndexMismatch => "recovery rebuilds the .txnindex from the log".into(),
        Kind::SnapshotUnreadable | Kind::SnapshotMismatch => {
            "ProducerStateManager skips a snapshot it cannot use and rebuilds the state from the log".into()
        }
        Kind::HangingTransaction => {
            "the last stable offset stays at the transaction's first offset until it is aborted: read_committed consumers stop there".into()
        }
        Kind::HangingNotJudged => {
            "find-hanging's rule needs --now-ms and the __transaction_state partitions beside the data".into()
        }
        Kind::OutOfOrderSequence
        | Kind::DuplicateSequence
        | Kind::SequenceNotZeroOnNewEpoch
        | Kind::EpochRegression
        | Kind::ZombieTransactionalWrite => {
            "a broker loading the log replays producer state without re-validating sequences (ProducerStateManager)".into()
        }
        _ => match f.severity {
            Severity::Error => "a broker refuses or cuts this state when it loads it".into(),
            Severity::Warning => "a broker rebuilds or ignores this state when it loads it".into(),
            Severity::Note => "what a running or crashed broker normally leaves".into(),
        },
    }
}

/// Damage in a log segment of `d`'s partition: deleted with a later cut
/// (`LogLoader.recoverLog` deletes every segment after the one it cuts),
/// cut (`LogSegment.recover`), or not reached by the recovery.
fn log_damage(f: &Finding, d: &LogDamage) -> String {
    let shown = |p: &PathBuf| p.display().to_string();
    match &d.cut {
        Some(c) if c.deleted.contains(&f.file) => format!(
            "a restarting broker deletes this segment: its recovery cuts {} at position {} first",
            shown(&c.log),
            c.position
        ),
        Some(c) if c.log == f.file && f.position >= c.position => format!(
            "a restarting broker's recovery cuts this segment at position {}{}{}",
            c.position,
            if c.deleted.is_empty() {
                String::new()
            } else {
                format!(" and deletes {} later segment(s)", c.deleted.len())
            },
            c.lost
                .map_or_else(String::new, |(a, b)| format!(": offsets {a}..={b} disappear"))
        ),
        _ => format!(
            "a restarting broker's recovery does not reach it (a clean shutdown, or below the recovery point {}): the broker serves the segment as it is, and a consumer's CRC check fails there",
            d.recovery_point
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn crc(file: &str, position: u64) -> Finding {
        Finding::new(Kind::CrcMismatch, file, position, None, "")
    }

    #[test]
    fn damage_is_placed_against_the_partition_restart() {
        let cut = RestartCut {
            log: "t-0/00000000000000000000.log".into(),
            position: 100,
            bytes: 50,
            deleted: vec!["t-0/00000000000000000010.log".into()],
            lost: Some((4, 19)),
        };
        let damaged = [LogDamage {
            findings: vec![
                crc("t-0/00000000000000000000.log", 120),
                crc("t-0/00000000000000000010.log", 0),
            ],
            cut: Some(cut),
            recovery_point: 0,
        }];
        let cut_here = kafka_does(&crc("t-0/00000000000000000000.log", 120), &damaged);
        assert_eq!(
            cut_here,
            "a restarting broker's recovery cuts this segment at position 100 and deletes 1 later segment(s): offsets 4..=19 disappear"
        );
        let deleted = kafka_does(&crc("t-0/00000000000000000010.log", 0), &damaged);
        assert!(deleted.starts_with("a restarting broker deletes this segment"));
        // Before the cut, or in a partition not among `damaged`.
        let below = kafka_does(&crc("t-0/00000000000000000000.log", 20), &damaged);
        assert!(below.contains("does not reach it"), "{below}");
        let elsewhere = kafka_does(&crc("u-0/00000000000000000000.log", 20), &damaged);
        assert!(elsewhere.starts_with("log bytes damaged"), "{elsewhere}");
        // Not a log: what loading it does.
        let index = Finding::new(Kind::IndexLength, "t-0/0.index", 0, None, "");
        assert!(kafka_does(&index, &damaged).contains("rebuilds the index"));
    }
}
