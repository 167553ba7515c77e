//! `verify-crc --repair`: what a broker's recovery would do, made auditable.
//!
//! A plan is computed first (and is all `--dry-run` shows); executing it
//! writes through a [`Storage`] in the order [`durable`] writes down, and
//! never deletes a byte — at every moment a crash can leave, each byte of
//! the partition is in the durable image, in its file or in a sidecar:
//! - a torn or corrupt tail of a partition's last segment: the bytes from
//!   the first invalid batch on are copied to `<segment>.log.cut-<position>`
//!   and made durable, then the segment is truncated there and its indexes
//!   are rebuilt;
//! - missing or broken indexes: rebuilt from the log (the old file is moved
//!   aside to `<name>.old` first);
//! - damage with valid batches after it, or in a segment that is not the
//!   last: reported and left alone, unless `force_truncate`, which cuts at
//!   the first bad batch and moves every later segment's files aside
//!   (`<file>.cut-0`);
//! - producer snapshots above the new log end are moved aside, as the broker
//!   would delete them.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::findings::Severity;
use crate::log::durable::{self, Disk};
use crate::log::storage::{Storage, SyncPoint};
use crate::log::{Partition, SegmentFiles};
use crate::recovery::{check_indexes, first_damage, rebuild_indexes, rebuild_txn_index, resync};

/// One step of a repair.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// Move `log[at..]` to `sidecar`, then truncate `log` at `at`.
    Truncate {
        log: PathBuf,
        at: u64,
        len: u64,
        sidecar: PathBuf,
        reason: String,
    },
    /// Move a whole file aside (a later segment's file, or a stale snapshot).
    MoveAside {
        file: PathBuf,
        sidecar: PathBuf,
        reason: String,
    },
    /// Write new `.index`, `.timeindex` and (when the segment has aborted
    /// transactions or had one) `.txnindex` files for the segment.
    RebuildIndexes {
        log: PathBuf,
        base_offset: i64,
        reason: String,
    },
}

/// Damage left alone because it needs `--force-truncate`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Refusal {
    pub log: PathBuf,
    pub position: u64,
    pub reason: String,
}

/// What a repair would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Plan {
    pub actions: Vec<Action>,
    pub refused: Vec<Refusal>,
}

/// Options of a repair.
#[derive(Debug, Clone, Copy)]
pub struct RepairOptions {
    pub force_truncate: bool,
    pub index_interval_bytes: u64,
}

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            force_truncate: false,
            index_interval_bytes: 4096,
        }
    }
}

fn sidecar(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

/// A sidecar name not taken yet: `<path><suffix>`, else `<path><suffix>.2`, `.3`, …
/// (an earlier repair may have cut at the same position).
fn free_sidecar(path: &Path, suffix: &str) -> PathBuf {
    let first = sidecar(path, suffix);
    if !first.exists() {
        return first;
    }
    (2..)
        .map(|n| sidecar(path, &format!("{suffix}.{n}")))
        .find(|p| !p.exists())
        .unwrap_or(first)
}

/// The sidecar for the bytes `position..len` of `log`: `<log>.cut-<position>`,
/// or `.cut-<position>.2`, `.3`, … — the first that does not exist yet, or
/// holds those bytes or a prefix of them (an earlier, interrupted repair of
/// this same cut: it is reused and completed, not duplicated).
fn cut_sidecar(log: &Path, position: u64, len: u64) -> Result<PathBuf> {
    use crate::log::files::{compare_range, RangeCopy};
    let base = format!(".cut-{position}");
    for n in 1.. {
        let candidate = if n == 1 {
            sidecar(log, &base)
        } else {
            sidecar(log, &format!("{base}.{n}"))
        };
        if !candidate.exists()
            || compare_range(&candidate, log, position, len)? != RangeCopy::Different
        {
            return Ok(candidate);
        }
    }
    Ok(sidecar(log, &base))
}

/// Plan the repair of one partition.
pub fn plan(p: &Partition, opts: &RepairOptions) -> Result<Plan> {
    let mut plan = Plan::default();
    let mut cut_from: Option<(usize, i64)> = None; // (segment index, new log end)
                                                   // `.txnindex` files that disagree with the log (`LogSegment.recover` rebuilds them too).
    let txn_state = crate::txn::analyze(p, &Default::default())?;
    let stale_txn_indexes: Vec<PathBuf> = crate::txn::check_txn_indexes(p, &txn_state)?
        .into_iter()
        .map(|f| f.file)
        .collect();
    for (i, seg) in p.segments.iter().enumerate() {
        let is_last = i + 1 == p.segments.len();
        let Some(d) = first_damage(seg)? else {
            index_actions(seg, is_last, &stale_txn_indexes, &mut plan)?;
            continue;
        };
        let beyond = resync(&seg.log, d.position + 1)?;
        let tail_only = is_last && beyond.is_none();
        let what = match beyond {
            Some(r) => format!(
                "{}; a valid batch resumes at position {} (offset {})",
                d.error, r.position, r.base_offset
            ),
            None => d.error.to_string(),
        };
        if tail_only || opts.force_truncate {
            plan.actions.push(Action::Truncate {
                log: seg.log.clone(),
                at: d.position,
                len: d.file_len - d.position,
                sidecar: cut_sidecar(&seg.log, d.position, d.file_len)?,
                reason: what,
            });
            plan.actions.push(Action::RebuildIndexes {
                log: seg.log.clone(),
                base_offset: seg.base_offset,
                reason: "after truncation".into(),
            });
            cut_from = Some((i, d.last_valid_offset.map_or(seg.base_offset, |o| o + 1)));
            break;
        }
        plan.refused.push(Refusal {
            log: seg.log.clone(),
            position: d.position,
            reason: if is_last {
                format!("{what}: valid batches follow the damage; --force-truncate moves everything from here on aside")
            } else {
                format!("{what}: in a segment that is not the last; --force-truncate moves it and every later segment aside")
            },
        });
        return Ok(plan);
    }
    if let Some((i, new_end)) = cut_from {
        for seg in p.segments.iter().skip(i + 1) {
            for file in segment_files(seg) {
                plan.actions.push(Action::MoveAside {
                    sidecar: free_sidecar(&file, ".cut-0"),
                    file,
                    reason: "a later segment, after the cut".into(),
                });
            }
        }
        for (offset, path) in crate::txn::snapshot::list(&p.dir)? {
            if offset > new_end {
                plan.actions.push(Action::MoveAside {
                    sidecar: free_sidecar(&path, ".cut"),
                    file: path,
                    reason: format!("a producer snapshot above the new log end {new_end}"),
                });
            }
        }
    }
    Ok(plan)
}

fn segment_files(seg: &SegmentFiles) -> Vec<PathBuf> {
    ["log", "index", "timeindex", "txnindex"]
        .iter()
        .map(|ext| seg.log.with_extension(ext))
        .filter(|p| p.exists())
        .collect()
}

fn index_actions(
    seg: &SegmentFiles,
    is_last: bool,
    stale_txn_indexes: &[PathBuf],
    plan: &mut Plan,
) -> Result<()> {
    // An index problem a broker would rebuild (a warning) is answered by a
    // rebuild: indexes are derived from the log, and the old file is kept
    // aside. Notes (the active segment's preallocated slots) are normal state.
    let findings = check_indexes(seg, is_last)?;
    let reason = match findings.iter().find(|f| f.severity >= Severity::Warning) {
        Some(first) => format!("{} ({})", first.detail, first.kind),
        None if stale_txn_indexes.contains(&seg.log.with_extension("txnindex")) => {
            "its .txnindex disagrees with the aborted transactions in the log".into()
        }
        None => return Ok(()),
    };
    plan.actions.push(Action::RebuildIndexes {
        log: seg.log.clone(),
        base_offset: seg.base_offset,
        reason,
    });
    Ok(())
}

/// Carry out a plan (the caller holds the data directory's lock). Returns
/// the sidecar files written, for the report.
pub fn execute(plan: &Plan, opts: &RepairOptions) -> Result<Vec<PathBuf>> {
    execute_with(&Disk, plan, opts)
}

/// [`execute`] writing through `storage`.
pub fn execute_with<S: Storage>(
    storage: &S,
    plan: &Plan,
    opts: &RepairOptions,
) -> Result<Vec<PathBuf>> {
    let mut sidecars = Vec::new();
    for action in &plan.actions {
        match action {
            Action::Truncate {
                log,
                at,
                len,
                sidecar,
                ..
            } => {
                // 1. The cut bytes become durable elsewhere. A crash here leaves the log as it was.
                durable::save_range(storage, log, *at, at + len, sidecar)?;
                sidecars.push(sidecar.clone());
                // 2. Only then is the log cut. A crash before this leaves both copies.
                durable::truncate(storage, log, *at, SyncPoint::LogTruncate)?;
            }
            Action::MoveAside { file, sidecar, .. } => {
                durable::move_aside(storage, file, sidecar)?;
                sidecars.push(sidecar.clone());
            }
            Action::RebuildIndexes {
                log, base_offset, ..
            } => {
                let valid = std::fs::metadata(log)
                    .map_err(|e| crate::Error::io(log, "stat", e))?
                    .len();
                let (index, timeindex) =
                    rebuild_indexes(log, *base_offset, valid, opts.index_interval_bytes)?;
                // `LogSegment.recover` rebuilds the transaction index too.
                let txnindex = rebuild_txn_index(log, *base_offset)?;
                let txn_path = log.with_extension("txnindex");
                let mut rebuilt = vec![("index", index), ("timeindex", timeindex)];
                if txn_path.exists() || !txnindex.is_empty() {
                    rebuilt.push(("txnindex", txnindex));
                }
                for (ext, bytes) in rebuilt {
                    let path = log.with_extension(ext);
                    if std::fs::read(&path).is_ok_and(|old| old != bytes && !old.is_empty()) {
                        let old = free_sidecar(&path, ".old");
                        durable::move_aside(storage, &path, &old)?;
                        sidecars.push(old);
                    }
                    // A crash before the rename leaves the old (or no) index: harmless, rebuilt next time.
                    durable::replace(storage, &path, &bytes)?;
                }
            }
        }
    }
    Ok(sidecars)
}
