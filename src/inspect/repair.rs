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

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::inspect::recovery::{
    check_indexes, first_damage, rebuild_indexes, rebuild_txn_index, resync,
};
use crate::log::durable::{self, Disk};
use crate::log::findings::Severity;
use crate::log::storage::{Storage, SyncPoint};
use crate::log::{Partition, SegmentFiles};

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
    /// Salvage: move each damaged byte range `from..to` of `log` to its
    /// sidecar, then rewrite `log` without them; every valid batch stays
    /// where its offsets say (the gap reads like a compacted log).
    CutRanges {
        log: PathBuf,
        /// (from, to, sidecar), in file order.
        ranges: Vec<(u64, u64, PathBuf)>,
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
    /// With [`RepairOptions::salvage`]: what is lost, against what Kafka's recovery would lose.
    pub salvage: Option<Salvage>,
}

/// Offsets a salvage loses: `from..=to`; `to` is `None` for a cut that
/// runs to the end of the log (the torn bytes' offsets cannot be read).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lost {
    pub from: i64,
    pub to: Option<i64>,
}

/// What a salvage keeps and loses, and what Kafka's recovery would do.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Salvage {
    /// The offsets the cut ranges held (gaps between the kept batches).
    pub lost: Vec<Lost>,
    /// Bytes moved to sidecars, and bytes kept after the first cut.
    pub cut_bytes: u64,
    pub kept_after_damage_bytes: u64,
    /// Kafka's recovery (`LogSegment.recover`, `LogLoader`): the cut it
    /// makes, the later segments it deletes, and the offsets that disappear.
    pub kafka_cut: Option<(PathBuf, u64)>,
    pub kafka_deleted: Vec<PathBuf>,
    pub kafka_lost: Option<(i64, i64)>,
}

/// Options of a repair.
#[derive(Debug, Clone, Copy)]
pub struct RepairOptions {
    pub force_truncate: bool,
    /// Cut out only the damaged byte ranges and keep every valid batch
    /// after them (see [`plan_salvage`]).
    pub salvage: bool,
    /// The recovery point Kafka's recovery would start from (for the
    /// comparison a salvage reports).
    pub recovery_point: i64,
    /// The topic's `index.interval.bytes`, which rebuilt indexes follow
    /// (`LogSegment.recover` appends entries at the segment's configured interval).
    pub index_interval_bytes: u64,
    /// Give a log the plan cuts a private copy first when it has other hard
    /// links, instead of refusing it.
    pub copy_hard_linked: bool,
}

impl Default for RepairOptions {
    fn default() -> Self {
        RepairOptions {
            force_truncate: false,
            salvage: false,
            recovery_point: 0,
            index_interval_bytes: 4096,
            copy_hard_linked: false,
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
    range_sidecar(log, format!(".cut-{position}"), position, len)
}

/// [`cut_sidecar`] named `<log><base>`: the first free name, or one holding
/// (a prefix of) bytes `position..len` of `log`.
fn range_sidecar(log: &Path, base: String, position: u64, len: u64) -> Result<PathBuf> {
    use crate::log::read::compare::{compare_range, RangeCopy};
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
    if opts.salvage {
        return plan_salvage(p, opts);
    }
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
    // A log the plan changes must not change under another name too (a
    // backup made with `cp -al`): refused, or copied, before anything is done.
    for action in &plan.actions {
        if let Action::Truncate { log, .. } | Action::CutRanges { log, .. } = action {
            durable::unlink_or_refuse(storage, log, opts.copy_hard_linked)?;
        }
    }
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
            Action::CutRanges { log, ranges, .. } => {
                // 1. Every cut range becomes durable in its sidecar. A crash
                //    here leaves the log as it was.
                for (from, to, sidecar) in ranges {
                    durable::save_range(storage, log, *from, *to, sidecar)?;
                    sidecars.push(sidecar.clone());
                }
                // 2. Only then is the log rewritten without them (a new file
                //    renamed over it): a crash leaves the old log or the new.
                //    The plan rebuilds the indexes next, which syncs the rename.
                let len = std::fs::metadata(log)
                    .map_err(|e| crate::Error::io(log, "stat", e))?
                    .len();
                let mut keep = Vec::new();
                let mut at = 0;
                for (from, to, _) in ranges {
                    keep.push((at, *from));
                    at = *to;
                }
                keep.push((at, len));
                durable::rewrite_keeping(storage, log, &keep)?;
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
                    // An index larger than the new one, or unreadable, differs: kept aside.
                    let differs = match crate::log::files::read_regular(&path, bytes.len() as u64) {
                        Ok(Some(old)) => old != bytes && !old.is_empty(),
                        Ok(None) => false,
                        Err(_) => true,
                    };
                    if differs {
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

/// Plan a salvage of `p`: instead of cutting everything from the first
/// damage on, as Kafka's recovery does (`LogSegment.recover` truncates at
/// the first invalid batch and `LogLoader` deletes every later segment),
/// move only each damaged byte range aside — a batch that fails its CRC
/// or offset checks, or the bytes from a broken frame to where valid
/// batches resume — and keep every valid batch after it, with its offsets:
/// the gap reads like a compacted log. Later segments stay. A damaged
/// range that runs to the end of a file is cut like a torn tail. Indexes
/// of the changed segments are rebuilt.
///
/// Refused when the batches kept would not have strictly increasing
/// offsets (a batch after the damage at or below the last offset kept
/// before it): a log like that is not one Kafka can read.
pub fn plan_salvage(p: &Partition, opts: &RepairOptions) -> Result<Plan> {
    let mut plan = Plan::default();
    let mut report = Salvage::default();
    let Some(ranges) = damaged_ranges(p, &mut plan, &mut report)? else {
        return Ok(plan);
    };
    let last_seg = p.segments.len().saturating_sub(1);
    let txn_state = crate::txn::analyze(p, &Default::default())?;
    let stale_txn: Vec<PathBuf> = crate::txn::check_txn_indexes(p, &txn_state)?
        .into_iter()
        .map(|f| f.file)
        .collect();
    for (i, seg) in p.segments.iter().enumerate() {
        let Some(cuts) = ranges.get(&i) else {
            index_actions(seg, i == last_seg, &stale_txn, &mut plan)?;
            continue;
        };
        cut_actions(seg, cuts, i == last_seg, &mut plan)?;
    }
    if !ranges.is_empty() {
        let kafka = crate::inspect::recovery::preview(p, opts.recovery_point)?;
        report.kafka_cut = kafka.truncate.map(|(s, d)| (s.log, d.position));
        report.kafka_deleted = kafka.deleted.into_iter().map(|s| s.log).collect();
        report.kafka_lost = kafka.lost_offsets;
        plan.salvage = Some(report);
    }
    Ok(plan)
}

/// Damaged byte ranges by segment index: (from, to, why).
type DamagedRanges = BTreeMap<usize, Vec<(u64, u64, String)>>;

/// The damaged byte ranges of `p`, walking it as a salvage keeps it; the
/// offsets lost and the bytes kept after the damage go to `report`. `None`
/// when the batches kept would not have increasing offsets (the refusal is
/// in `plan`).
fn damaged_ranges(
    p: &Partition,
    plan: &mut Plan,
    report: &mut Salvage,
) -> Result<Option<DamagedRanges>> {
    use crate::log::walk::Step;
    // Damaged ranges by segment index; the last kept offset; where a gap opened.
    let mut ranges: DamagedRanges = BTreeMap::new();
    let mut last_kept: Option<i64> = None;
    let mut gap_from: Option<i64> = None;
    let mut walk = p.walk(crate::log::Policy::VALID_ENTRIES);
    while let Some(step) = walk.next_step()? {
        match step {
            Step::Entry(w) => {
                let base = w.entry.base_offset();
                if let Some(last) = last_kept.filter(|&l| base <= l) {
                    plan.refused.push(Refusal {
                        log: w.segment.log.clone(),
                        position: w.entry.position(),
                        reason: format!(
                            "the batch at position {} starts at offset {base}, not above {last}, the last \
                             offset kept before it: a salvage would leave offsets that do not increase",
                            w.entry.position()
                        ),
                    });
                    return Ok(None);
                }
                if let Some(from) = gap_from.take() {
                    report.lost.push(Lost {
                        from,
                        to: Some(base.saturating_sub(1)),
                    });
                }
                if !ranges.is_empty() {
                    report.kept_after_damage_bytes += w.entry.size();
                }
                last_kept = Some(w.next_offset - 1);
            }
            Step::Damage(d) => {
                let seg = p
                    .segments
                    .iter()
                    .position(|s| s.log == d.file)
                    .unwrap_or_default();
                let end = match (d.framing, d.entry_size, d.resumes) {
                    (false, Some(size), _) => d.position.saturating_add(size).min(d.file_len),
                    (_, _, Some(r)) => r.position,
                    _ => d.file_len,
                };
                let claimed = match d.base_offset {
                    Some(b) => format!(" (its header claims base offset {b})"),
                    None => String::new(),
                };
                ranges.entry(seg).or_default().push((
                    d.position,
                    end,
                    format!("{}{claimed}", d.error),
                ));
                report.cut_bytes += end.saturating_sub(d.position);
                if gap_from.is_none() {
                    let seg_base = p.segments.get(seg).map_or(0, |s| s.base_offset);
                    gap_from = Some(
                        last_kept
                            .map_or(seg_base, |l| l.saturating_add(1))
                            .max(seg_base),
                    );
                }
            }
            _ => {}
        }
    }
    if let Some(from) = gap_from {
        report.lost.push(Lost { from, to: None });
    }
    Ok(Some(ranges))
}

/// The actions on segment `seg` with damaged ranges `cuts`: a torn tail
/// of the last segment cut, any other range moved aside; then its indexes
/// rebuilt.
fn cut_actions(
    seg: &SegmentFiles,
    cuts: &[(u64, u64, String)],
    is_last: bool,
    plan: &mut Plan,
) -> Result<()> {
    let file_len = std::fs::metadata(&seg.log)
        .map_err(|e| crate::Error::io(&seg.log, "stat", e))?
        .len();
    let reason = cuts
        .iter()
        .map(|(from, to, why)| format!("bytes {from}..{to}: {why}"))
        .collect::<Vec<_>>()
        .join("; ");
    match cuts {
        // A torn or corrupt tail of the last segment: the ordinary cut.
        [(from, to, why)] if *to == file_len && is_last => plan.actions.push(Action::Truncate {
            log: seg.log.clone(),
            at: *from,
            len: to - from,
            sidecar: cut_sidecar(&seg.log, *from, *to)?,
            reason: why.clone(),
        }),
        _ => {
            let mut named = Vec::new();
            for (from, to, _) in cuts {
                let suffix = format!(".cut-{from}-{to}");
                named.push((*from, *to, range_sidecar(&seg.log, suffix, *from, *to)?));
            }
            plan.actions.push(Action::CutRanges {
                log: seg.log.clone(),
                ranges: named,
                reason,
            });
        }
    }
    plan.actions.push(Action::RebuildIndexes {
        log: seg.log.clone(),
        base_offset: seg.base_offset,
        reason: "after the salvage".into(),
    });
    Ok(())
}
