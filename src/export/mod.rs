//! `klog export`: one broker's log directories as a tree of Parquet files
//! that DuckDB, Spark or Trino read where they run.
//!
//! A layer beside [`inspect`](crate::inspect), above the topic models: it
//! walks each partition once with the one walker (CRC-checked entries,
//! resynced past damage), reads its producer state and transactions from
//! [`txn`](crate::txn) (the outcome of each transactional record, and what
//! a read_committed consumer sees, as
//! [`ReadCommittedView`](crate::inspect::select::ReadCommittedView) says),
//! and the committed offsets from [`offsets`](crate::offsets). Rows are
//! built here ([`rows`]); [`parquet`] writes them, row group by row group,
//! each file under a temporary name until it is whole.
//!
//! Invariants: memory is bounded by a row group per open file (one records
//! file per job, plus the one-file tables), never by the input; damage in
//! the input becomes rows of `findings` (and the caller says so), never a
//! silently shorter table; nothing in the output folder is replaced or
//! removed that an export does not write itself.

pub mod parquet;
pub mod rows;
pub mod tables;

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Mutex;

use crate::error::{Error, Result};
use crate::format::DecodeLimits;
use crate::log::findings::{Finding, Severity};
use crate::log::walk::Meter;
use crate::log::{durable, DataDir, Partition};

pub use self::parquet::{Limits, PageCodec};

/// What the text columns `key_text` and `value_text` hold (`--decode`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Decode {
    /// No text columns.
    #[default]
    None,
    /// The bytes when they are valid UTF-8, else null.
    Utf8,
    /// The bytes when they are one valid JSON value (UTF-8), else null.
    Json,
}

/// What to export and how.
#[derive(Debug, Clone)]
pub struct ExportOptions {
    /// Topic name globs (`*`, `?`); empty: every topic.
    pub topics: Vec<String>,
    /// Partition numbers; empty: every partition.
    pub partitions: Vec<i32>,
    /// Offsets, inclusive, either end open.
    pub offsets: (Option<i64>, Option<i64>),
    /// Record timestamps (epoch ms), inclusive, either end open.
    pub times: (Option<i64>, Option<i64>),
    /// Leave out what a read_committed consumer does not see: aborted
    /// transactions' records, control records, and everything from the
    /// last stable offset on.
    pub read_committed: bool,
    /// Write record values (false: `value` is null).
    pub values: bool,
    pub decode: Decode,
    /// Write `offset_history` too.
    pub history: bool,
    /// Threads over partitions.
    pub jobs: usize,
    pub limits: Limits,
    pub codec: PageCodec,
    pub decode_limits: DecodeLimits,
    pub meter: Option<&'static Meter>,
}

/// The `_SUCCESS` marker's content: what the finished export holds.
#[derive(serde::Serialize)]
struct DoneMarker<'a> {
    files: u64,
    partitions: u64,
    rows: &'a std::collections::BTreeMap<&'static str, u64>,
    errors: u64,
}

/// What an export wrote and found.
#[derive(Debug, Default)]
pub struct Exported {
    /// Parquet files written.
    pub files: u64,
    /// Rows per table, by name.
    pub rows: std::collections::BTreeMap<&'static str, u64>,
    /// Partitions exported.
    pub partitions: u64,
    /// Damage and other problems met (also rows of `findings`).
    pub findings: Vec<Finding>,
}

impl Exported {
    /// Findings of severity error.
    pub fn errors(&self) -> u64 {
        self.findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
            .count() as u64
    }
}

/// One log directory given: its path and its broker's node id.
#[derive(Debug, Clone)]
pub struct Broker {
    pub log_dir: String,
    pub node_id: Option<i32>,
    /// How the broker left the directory (`partitions.shutdown`).
    pub shutdown: &'static str,
}

/// Whether `name` matches the glob `pattern` (`*`: any run of characters,
/// `?`: one character).
pub fn glob_match(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni, mut star, mut mark) = (0, 0, None, 0);
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some(pi);
                mark = ni;
                pi += 1;
            }
            Some(&c) if c == '?' || Some(&c) == n.get(ni) => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                Some(s) => {
                    pi = s + 1;
                    mark += 1;
                    ni = mark;
                }
                None => return false,
            },
        }
    }
    p.get(pi..)
        .is_some_and(|rest| rest.iter().all(|&c| c == '*'))
}

/// A file name an export writes in `out` (relative path), so that
/// `--overwrite` removes only those: `records/topic=T/partition=P/<20
/// digits>.parquet`, `NAME/NAME.parquet` of a one-file table, and the
/// temporary name of either.
pub fn is_export_file(rel: &Path) -> bool {
    let parts: Vec<&str> = rel.iter().filter_map(|c| c.to_str()).collect();
    let file_ok = |name: &str, want: &dyn Fn(&str) -> bool| {
        let name = name
            .strip_prefix('.')
            .and_then(|n| n.strip_suffix(".klog-tmp"))
            .unwrap_or(name);
        name.strip_suffix(".parquet").is_some_and(want)
    };
    match parts.as_slice() {
        ["records", topic, partition, name] => {
            topic.starts_with("topic=")
                && partition
                    .strip_prefix("partition=")
                    .is_some_and(|p| p.parse::<i32>().is_ok())
                && file_ok(name, &|stem| {
                    stem.len() == 20 && stem.bytes().all(|b| b.is_ascii_digit())
                })
        }
        [table, name] => tables::SINGLE.contains(table) && file_ok(name, &|stem| stem == *table),
        [name] => *name == DONE || name.strip_suffix(".klog-tmp") == Some(DONE),
        _ => false,
    }
}

/// The file an export writes last, once every other file is whole: a tree
/// without it is an export that failed or was interrupted. Its name starts
/// with `_`, which Spark and Hive-style readers skip (Spark's own
/// `_SUCCESS`); it holds the rows written per table, as JSON.
pub const DONE: &str = "_SUCCESS";

/// Make `out` ready: created when missing; refused when it holds anything
/// unless `overwrite`, which then removes the files an earlier export
/// wrote there ([`is_export_file`]) and nothing else.
pub fn prepare_out(out: &Path, overwrite: bool) -> Result<()> {
    if !out.exists() {
        return durable::create_dir_all(&durable::Disk, out);
    }
    if !out.is_dir() {
        return Err(Error::layout(out, "is not a folder"));
    }
    let mut theirs = 0u64;
    let mut ours = Vec::new();
    for entry in walkdir::WalkDir::new(out).min_depth(1) {
        let entry = entry.map_err(|e| Error::io(out, "list", e.into()))?;
        if entry.file_type().is_dir() {
            continue;
        }
        let rel = entry.path().strip_prefix(out).unwrap_or(entry.path());
        if entry.file_type().is_file() && is_export_file(rel) {
            ours.push(entry.path().to_path_buf());
        } else {
            theirs += 1;
        }
    }
    let empty = ours.is_empty()
        && theirs == 0
        && std::fs::read_dir(out).map_or(true, |mut d| d.next().is_none());
    if empty {
        return Ok(());
    }
    if !overwrite {
        return Err(Error::layout(
            out,
            "is not empty: give --overwrite to replace an earlier export's files there (nothing else is touched), or name a new folder",
        ));
    }
    // The marker first: an overwrite stopped half way must not leave a
    // tree that says it is whole.
    ours.sort_by_key(|p| p != &out.join(DONE));
    for path in ours {
        durable::remove_exported(&path)?;
    }
    Ok(())
}

/// The partitions to export, with the log directory each is in.
struct Work<'a> {
    partition: &'a Partition,
    broker: &'a Broker,
}

/// Export the log directories `dirs` (one broker's, JBOD) into `out`,
/// which [`prepare_out`] made ready.
pub fn export(dirs: &[PathBuf], out: &Path, opts: &ExportOptions) -> Result<Exported> {
    let mut opened = Vec::new();
    for d in dirs {
        let dir = DataDir::open(d)?;
        let meta =
            crate::log::meta::read_meta_properties(&d.join(crate::log::meta::META_PROPERTIES))
                .ok()
                .flatten();
        use crate::log::shutdown::{Shutdown, ShutdownState};
        let broker = Broker {
            log_dir: d.to_string_lossy().into_owned(),
            node_id: meta.and_then(|m| m.node_id),
            shutdown: match Shutdown::read(d).state {
                ShutdownState::Clean => "clean",
                ShutdownState::Unclean => "unclean",
                ShutdownState::Running => "running",
                ShutdownState::NotABroker => "not_a_broker",
            },
        };
        opened.push((dir, broker));
    }
    let mut work: Vec<Work<'_>> = Vec::new();
    let mut seen = std::collections::BTreeMap::new();
    for (dir, broker) in &opened {
        for p in dir.live() {
            let wanted = (opts.topics.is_empty()
                || opts.topics.iter().any(|g| glob_match(g, &p.topic)))
                && (opts.partitions.is_empty() || opts.partitions.contains(&p.partition));
            if !wanted {
                continue;
            }
            if let Some(other) = seen.insert((p.topic.clone(), p.partition), p.dir.clone()) {
                return Err(Error::layout(
                    &p.dir,
                    format!(
                        "holds the partition {} holds too: give each log directory of a broker once",
                        other.display()
                    ),
                ));
            }
            work.push(Work {
                partition: p,
                broker,
            });
        }
    }
    let shared = rows::Shared::create(out, opts)?;
    let next = AtomicUsize::new(0);
    let failed: Mutex<Option<Error>> = Mutex::new(None);
    let jobs = opts.jobs.clamp(1, work.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::Relaxed);
                let Some(w) = work.get(i) else { break };
                if failed.lock().map_or(true, |f| f.is_some()) {
                    break;
                }
                if let Err(e) = rows::export_partition(w.partition, w.broker, out, opts, &shared) {
                    if let Ok(mut f) = failed.lock() {
                        f.get_or_insert(e);
                    }
                }
            });
        }
    });
    if let Some(e) = failed.into_inner().ok().flatten() {
        return Err(e);
    }
    if let Some((_, broker)) = opened.first() {
        let all: Vec<&DataDir> = opened.iter().map(|(d, _)| d).collect();
        rows::export_offsets(&all, broker, opts, &shared)?;
    }
    let mut exported = shared.finish()?;
    exported.partitions = work.len() as u64;
    let done = DoneMarker {
        files: exported.files,
        partitions: exported.partitions,
        rows: &exported.rows,
        errors: exported.errors(),
    };
    let mut text = serde_json::to_vec(&done).map_err(|e| Error::Io {
        path: out.join(DONE),
        op: "serialize",
        source: std::io::Error::other(e),
    })?;
    text.push(b'\n');
    durable::replace(&durable::Disk, &out.join(DONE), &text)?;
    Ok(exported)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn globs() {
        assert!(glob_match("*", "orders"));
        assert!(glob_match("ord*", "orders"));
        assert!(glob_match("*ers", "orders"));
        assert!(glob_match("o?ders", "orders"));
        assert!(glob_match("o*d*s", "orders"));
        assert!(!glob_match("ord", "orders"));
        assert!(!glob_match("x*", "orders"));
        assert!(glob_match("__consumer_offsets", "__consumer_offsets"));
    }

    #[test]
    fn export_file_names() {
        for ok in [
            "records/topic=a/partition=0/00000000000000000010.parquet",
            "records/topic=a/partition=0/.00000000000000000010.parquet.klog-tmp",
            "batches/batches.parquet",
            "findings/.findings.parquet.klog-tmp",
            "_SUCCESS",
            "_SUCCESS.klog-tmp",
        ] {
            assert!(is_export_file(Path::new(ok)), "{ok}");
        }
        for not in [
            "records/topic=a/partition=0/notes.parquet",
            "records/topic=a/partition=x/00000000000000000010.parquet",
            "batches/mine.parquet",
            "README",
            "batches/batches.parquet.bak",
            "records/_SUCCESS",
        ] {
            assert!(!is_export_file(Path::new(not)), "{not}");
        }
    }
}
