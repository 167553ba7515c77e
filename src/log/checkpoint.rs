//! Text checkpoint files of a log directory and of partition folders.
//!
//! ```text
//! 0                  version line (must be 0)
//! 2                  entry count
//! my-topic 0 1234    topic partition offset   (leader-epoch-checkpoint: epoch startOffset)
//! my-topic 1 99
//! ```
//!
//! `replication-offset-checkpoint` holds high watermarks,
//! `log-start-offset-checkpoint` log start offsets above the first segment,
//! `recovery-point-offset-checkpoint` flushed offsets, `cleaner-offset-checkpoint`
//! the first dirty offset of compacted partitions. Parsing is as strict
//! as Kafka's: exact version, exact count, exactly 3 (or 2) fields, no blank
//! lines; an empty file is an empty checkpoint. Errors name the line.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::{Error, Result};

/// High watermarks, written by the replica manager.
pub const REPLICATION_OFFSET: &str = "replication-offset-checkpoint";
/// Log start offsets (only where above the first segment's base offset).
pub const LOG_START_OFFSET: &str = "log-start-offset-checkpoint";
/// Recovery points.
pub const RECOVERY_POINT: &str = "recovery-point-offset-checkpoint";
/// First dirty offsets of compacted partitions, written by the log cleaner.
pub const CLEANER_OFFSET: &str = "cleaner-offset-checkpoint";
/// A partition's leader epochs.
pub const LEADER_EPOCH: &str = "leader-epoch-checkpoint";

/// The `topic partition offset` checkpoints at the root of a log directory,
/// in name order.
pub const DIR_CHECKPOINTS: [&str; 4] = [
    CLEANER_OFFSET,
    LOG_START_OFFSET,
    RECOVERY_POINT,
    REPLICATION_OFFSET,
];

/// What a checkpoint's entry lines hold, as its formatter reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Entries {
    /// `topic partition offset` (`OffsetCheckpointFile.Formatter`).
    TopicPartitionOffset,
    /// `epoch startOffset` (`LeaderEpochCheckpointFile.Formatter`).
    EpochStartOffset,
}

/// What one field of an entry line must be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum FieldType {
    Text,
    /// `Integer.parseInt`.
    Int32,
    /// `Long.parseLong`.
    Int64,
}

impl Entries {
    /// The fields of a line: each one's name and what it must be.
    fn fields(self) -> &'static [(&'static str, FieldType)] {
        use FieldType::*;
        match self {
            Entries::TopicPartitionOffset => {
                &[("topic", Text), ("partition", Int32), ("offset", Int64)]
            }
            Entries::EpochStartOffset => &[("epoch", Int32), ("start offset", Int64)],
        }
    }
}

/// One line of a checkpoint, as `CheckpointFile.CheckpointReadBuffer`
/// reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line<'a> {
    /// Line 1: the version, 0.
    Version,
    /// Line 2: how many entry lines follow.
    Count(usize),
    /// An entry, its whitespace-separated fields.
    Entry(Vec<&'a str>),
}

/// Why Kafka refuses a line, and with it the whole file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refused {
    Version(String),
    Count(String),
    /// An entry line with the wrong number of fields.
    Fields {
        line: String,
        wanted: usize,
    },
    /// A field that is not a number.
    Number(&'static str),
}

impl std::fmt::Display for Refused {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Refused::Version(v) => write!(f, "unsupported checkpoint version {v:?} (expected 0)"),
            Refused::Count(c) => write!(f, "entry count {c:?} is not a number"),
            Refused::Fields { line, wanted } => {
                write!(f, "malformed line {line:?} (expected {wanted} fields)")
            }
            Refused::Number(what) => write!(f, "{what} is not a number"),
        }
    }
}

/// Read line `n` (from 1) of a checkpoint whose entries are `entries`.
pub fn read_line(n: usize, line: &str, entries: Entries) -> Result<Line<'_>, Refused> {
    match n {
        1 if line.trim() == "0" => Ok(Line::Version),
        1 => Err(Refused::Version(line.to_string())),
        2 => line
            .trim()
            .parse()
            .map(Line::Count)
            .map_err(|_| Refused::Count(line.to_string())),
        _ => {
            let parts: Vec<&str> = line.split_whitespace().collect();
            let fields = entries.fields();
            if parts.len() != fields.len() {
                return Err(Refused::Fields {
                    line: line.to_string(),
                    wanted: fields.len(),
                });
            }
            for (p, (what, ty)) in parts.iter().zip(fields) {
                let ok = match ty {
                    FieldType::Text => true,
                    FieldType::Int32 => p.parse::<i32>().is_ok(),
                    FieldType::Int64 => p.parse::<i64>().is_ok(),
                };
                if !ok {
                    return Err(Refused::Number(what));
                }
            }
            Ok(Line::Entry(parts))
        }
    }
}

/// Why a checkpoint whose count line says `count` and which holds `found`
/// entry lines is refused whole (`CheckpointFile`: "Expected \[N\] entries").
pub fn count_mismatch(count: usize, found: usize) -> Option<String> {
    (count != found).then(|| format!("expected {count} entries, found {found}"))
}

fn lines_of(path: &Path, entries: Entries) -> Result<Option<Vec<Vec<String>>>> {
    let Some(bytes) = crate::log::files::read_regular(path, crate::log::files::MAX_METADATA_FILE)?
    else {
        return Ok(None);
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        Error::layout(
            path,
            format!("byte {}: not UTF-8 text", e.utf8_error().valid_up_to()),
        )
    })?;
    let mut count = 0;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let line = line.strip_suffix('\r').unwrap_or(line);
        match read_line(i + 1, line, entries) {
            Ok(Line::Version) => {}
            Ok(Line::Count(c)) => count = c,
            Ok(Line::Entry(parts)) => out.push(parts.into_iter().map(str::to_string).collect()),
            Err(why) => return Err(Error::layout(path, format!("line {}: {why}", i + 1))),
        }
    }
    if let Some(why) = count_mismatch(count, out.len()) {
        return Err(Error::layout(path, format!("line 2: {why}")));
    }
    Ok(Some(out))
}

/// Read a `topic partition offset` checkpoint; `None` when the file does not exist.
pub fn read_offsets(path: &Path) -> Result<Option<BTreeMap<(String, i32), i64>>> {
    let Some(lines) = lines_of(path, Entries::TopicPartitionOffset)? else {
        return Ok(None);
    };
    let mut map = BTreeMap::new();
    for (i, parts) in lines.iter().enumerate() {
        let bad =
            |what: &str| Error::layout(path, format!("line {}: {what} is not a number", i + 3));
        let (Some(topic), Some(p), Some(o)) = (parts.first(), parts.get(1), parts.get(2)) else {
            continue;
        };
        let partition: i32 = p.parse().map_err(|_| bad("partition"))?;
        let offset: i64 = o.parse().map_err(|_| bad("offset"))?;
        map.insert((topic.clone(), partition), offset);
    }
    Ok(Some(map))
}

/// The high watermark of `p` from its data directory's
/// `replication-offset-checkpoint`, when the file has an entry for it.
pub fn high_watermark(p: &crate::log::Partition) -> Result<Option<i64>> {
    let Some(dir) = p.dir.parent() else {
        return Ok(None);
    };
    Ok(read_offsets(&dir.join(REPLICATION_OFFSET))?
        .and_then(|m| m.get(&(p.topic.clone(), p.partition)).copied()))
}

/// Read a `leader-epoch-checkpoint`: (epoch, start offset) pairs; `None` when absent.
pub fn read_leader_epochs(path: &Path) -> Result<Option<Vec<(i32, i64)>>> {
    let Some(lines) = lines_of(path, Entries::EpochStartOffset)? else {
        return Ok(None);
    };
    let mut out = Vec::new();
    for (i, parts) in lines.iter().enumerate() {
        let bad =
            |what: &str| Error::layout(path, format!("line {}: {what} is not a number", i + 3));
        let (Some(e), Some(o)) = (parts.first(), parts.get(1)) else {
            continue;
        };
        out.push((
            e.parse().map_err(|_| bad("epoch"))?,
            o.parse().map_err(|_| bad("start offset"))?,
        ));
    }
    Ok(Some(out))
}

/// Render a `leader-epoch-checkpoint` (the bytes Kafka writes:
/// `LeaderEpochCheckpointFile`'s formatter, `epoch startOffset`, through
/// `CheckpointFile.CheckpointWriteBuffer`: version, count, one line each,
/// every line ended by `\n`).
pub fn render_leader_epochs(entries: &[(i32, i64)]) -> String {
    let mut s = format!("0\n{}\n", entries.len());
    for (epoch, start) in entries {
        s.push_str(&format!("{epoch} {start}\n"));
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_malformed_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("cp");
        let mut m = BTreeMap::new();
        m.insert(("orders".to_string(), 0), 42);
        m.insert(("my.topic-x".to_string(), 3), 7);
        // The bytes Kafka writes: version, count, `topic partition offset`.
        std::fs::write(&p, "0\n2\nmy.topic-x 3 7\norders 0 42\n").unwrap();
        assert_eq!(read_offsets(&p).unwrap().unwrap(), m);
        std::fs::write(&p, "0\r\n1\r\norders 0 5\r\n").unwrap();
        assert_eq!(
            read_offsets(&p)
                .unwrap()
                .unwrap()
                .get(&("orders".into(), 0)),
            Some(&5)
        );
        for (text, needle) in [
            ("1\n0\n", "line 1: unsupported checkpoint version"),
            ("0\n2\norders 0 5\n", "line 2: expected 2 entries, found 1"),
            ("0\n1\norders 0\n", "line 3: malformed line"),
            ("0\n1\n\n", "line 3: malformed line"),
            ("0\n1\norders x 5\n", "line 3: partition is not a number"),
            ("0\nx\n", "line 2: entry count"),
        ] {
            std::fs::write(&p, text).unwrap();
            let err = read_offsets(&p).unwrap_err().to_string();
            assert!(err.contains(needle), "{text:?}: {err}");
        }
        std::fs::write(&p, "").unwrap();
        assert!(read_offsets(&p).unwrap().unwrap().is_empty());
        assert!(read_offsets(&dir.path().join("missing")).unwrap().is_none());
        let mut sorted = DIR_CHECKPOINTS;
        sorted.sort_unstable();
        assert_eq!(sorted, DIR_CHECKPOINTS, "kept in name order");
        std::fs::write(&p, "0\n2\n0 0\n3 120\n").unwrap();
        assert_eq!(
            read_leader_epochs(&p).unwrap().unwrap(),
            vec![(0, 0), (3, 120)]
        );
        assert_eq!(
            render_leader_epochs(&[(0, 0), (3, 120)]),
            "0\n2\n0 0\n3 120\n"
        );
        assert_eq!(render_leader_epochs(&[]), "0\n0\n");
    }
}
