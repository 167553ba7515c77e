//! `verify-crc --repair`: each partition's repair planned under its data
//! directory's lock, then each step said (text, as it is taken), recorded
//! for the document and (unless --dry-run) carried out.

use std::io::Write;
use std::path::PathBuf;

use kaen_log::inspect::repair::{self, Action, RepairOptions};
use kaen_log::inspect::targets::{partitions, recovery_point, Folders};
use kaen_log::log::lock::DirLock;
use kaen_log::log::Partition;

use super::{ActionOut, RepairOut, VerifyCrcArgs};
use crate::report::table::escape_cell;
use crate::report::Output;

/// A partition's repair as planned: its data directory, the partition, the
/// plan, and the options it was planned with (its recovery point and index
/// interval).
type Planned = (PathBuf, Partition, repair::Plan, RepairOptions);

/// Plan, print (text, as it goes) and (unless --dry-run) carry out the
/// repair. Returns the number of refused cases.
pub(super) fn run_repair(
    args: &VerifyCrcArgs,
    repair: &mut RepairOut,
    out: Option<&mut Output>,
) -> anyhow::Result<u64> {
    let mut steps = RepairSteps {
        args,
        verb: if args.dry_run { "would" } else { "will" },
        out,
        repair,
        refused: 0,
    };
    let mut locks: Vec<(PathBuf, DirLock)> = Vec::new();
    let (plans, image) = plan_repairs(args, &mut locks)?;
    let uneven = if args.salvage {
        uneven_salvages(&plans, image.as_ref())
    } else {
        Vec::new()
    };
    for (data_dir, p, mut plan, opts) in plans {
        if let Some(why) = uneven.iter().find(|(dir, _)| *dir == p.dir).map(|(_, w)| w) {
            steps.uneven_salvage(&p, &mut plan, why)?;
        }
        steps.partition(&data_dir, &p, &plan, &opts)?;
    }
    Ok(steps.refused)
}

/// Take each data directory's lock (unless --dry-run) and plan the repair
/// of every partition given, from its recovery point and at its topic's
/// index interval; with the newest KRaft metadata image among the
/// directories.
fn plan_repairs(
    args: &VerifyCrcArgs,
    locks: &mut Vec<(PathBuf, DirLock)>,
) -> anyhow::Result<(Vec<Planned>, Option<kaen_log::metadata::image::Image>)> {
    let mut opts = RepairOptions {
        force_truncate: args.force_truncate,
        salvage: args.salvage,
        ..RepairOptions::default()
    };
    let overrides = kaen_log::inspect::topic_config::parse_overrides(&args.write.config)?;
    opts.copy_hard_linked = args.write.copy_hard_linked;
    let mut plans = Vec::new();
    let partitions = partitions(&args.paths, Folders::Live)?;
    let mut data_dirs: Vec<PathBuf> = Vec::new();
    for (d, _) in &partitions {
        if !data_dirs.contains(d) {
            data_dirs.push(d.clone());
        }
    }
    // The newest KRaft metadata image among the directories: topic configs
    // and replica assignments are the cluster's.
    let image = kaen_log::metadata::newest_image(&data_dirs);
    for (data_dir, p) in partitions {
        if !args.dry_run && !locks.iter().any(|(d, _)| *d == data_dir) {
            locks.push((data_dir.clone(), DirLock::acquire(&data_dir)?));
        }
        opts.recovery_point = recovery_point(&data_dir, &p)?;
        // Indexes are rebuilt at the topic's index interval, as the broker
        // owning the directory would (`LogConfig`, `LogSegment.recover`).
        let config = kaen_log::inspect::topic_config::resolve(
            image.as_ref(),
            &data_dir,
            &p.topic,
            &overrides,
        );
        opts.index_interval_bytes = config.index_interval_bytes()?;
        let plan = repair::plan(&p, &opts)?;
        let rebuilds = plan
            .actions
            .iter()
            .any(|a| matches!(a, Action::RebuildIndexes { .. }));
        if rebuilds && args.write.verbose {
            eprintln!(
                "klog: {}: indexes {} with {}",
                p.dir.display(),
                if args.dry_run {
                    "would be rebuilt"
                } else {
                    "rebuilt"
                },
                config.describe_only(&["index.interval.bytes", "segment.index.bytes"])
            );
        }
        plans.push((data_dir, p, plan, opts));
    }
    Ok((plans, image))
}

/// The repair's steps as they are said and recorded, and the cases left
/// alone so far.
struct RepairSteps<'a, 'o> {
    args: &'a VerifyCrcArgs,
    /// "would" with --dry-run, else "will".
    verb: &'static str,
    /// The text output, where each step is said as it is taken (none in
    /// the other formats).
    out: Option<&'o mut Output>,
    repair: &'a mut RepairOut,
    refused: u64,
}

impl RepairSteps<'_, '_> {
    /// Say one line of the repair (text only), flushed at once so a failure
    /// leaves the steps already taken on the screen.
    fn say(&mut self, line: String) -> anyhow::Result<()> {
        if let Some(out) = self.out.as_mut() {
            writeln!(out, "{}", escape_cell(&line))?;
            out.flush()?;
        }
        Ok(())
    }

    /// A salvage that would leave the partition's replicas different
    /// (`why`): said and kept with --salvage-some-replicas, else refused and
    /// the plan emptied.
    fn uneven_salvage(
        &mut self,
        p: &Partition,
        plan: &mut repair::Plan,
        why: &str,
    ) -> anyhow::Result<()> {
        if self.args.salvage_some_replicas {
            self.say(format!(
                "salvage: {}: {why} (accepted: --salvage-some-replicas)",
                p.name()
            ))?;
        } else {
            plan.refused.push(repair::Refusal {
                log: p.dir.clone(),
                position: 0,
                reason: format!("{why}; give --salvage-some-replicas to salvage it anyway"),
            });
            plan.actions.clear();
            plan.salvage = None;
        }
        Ok(())
    }

    /// One partition: say and record each planned step, a salvage's lost
    /// offsets and the damage left alone; then (unless --dry-run) carry the
    /// plan out, saying each file written.
    fn partition(
        &mut self,
        data_dir: &std::path::Path,
        p: &Partition,
        plan: &repair::Plan,
        opts: &RepairOptions,
    ) -> anyhow::Result<()> {
        for a in &plan.actions {
            let step = self.action(a)?;
            self.repair.actions.push(step);
        }
        if let Some(s) = &plan.salvage {
            for line in salvage_lines(p, s) {
                self.say(line.clone())?;
                self.repair.salvage.push(line);
            }
        }
        for r in &plan.refused {
            self.refused += 1;
            self.say(format!(
                "repair: left alone {}:{} {}",
                r.log.display(),
                r.position,
                r.reason
            ))?;
            self.repair.refused.push(ActionOut {
                action: "left_alone",
                file: kaen_log::log::findings::FileFields::of(&r.log),
                position: Some(r.position),
                reason: r.reason.to_string(),
                ..ActionOut::default()
            });
        }
        if !self.args.dry_run && !plan.actions.is_empty() {
            kaen_log::log::appender::check_real_parent(&p.dir, data_dir)?;
            for written in repair::execute(plan, opts)? {
                self.say(format!("repair: wrote {}", written.display()))?;
                self.repair.written.push(written.display().to_string());
            }
        }
        Ok(())
    }

    /// Say one planned step (cut a tail aside, move a file aside, rebuild
    /// indexes, cut damaged ranges out) and give its entry in the document.
    fn action(&mut self, a: &Action) -> anyhow::Result<ActionOut> {
        let verb = self.verb;
        Ok(match a {
            Action::Truncate {
                log,
                at,
                len,
                sidecar,
                reason,
            } => {
                self.say(format!(
                    "repair: {verb} move {len} bytes of {} from position {at} to {} and truncate there ({reason})",
                    log.display(),
                    sidecar.display()
                ))?;
                ActionOut {
                    action: "truncate",
                    file: kaen_log::log::findings::FileFields::of(log),
                    position: Some(*at),
                    bytes: Some(*len),
                    sidecar: Some(sidecar.display().to_string()),
                    reason: reason.to_string(),
                }
            }
            Action::MoveAside {
                file,
                sidecar,
                reason,
            } => {
                self.say(format!(
                    "repair: {verb} move {} to {} ({reason})",
                    file.display(),
                    sidecar.display()
                ))?;
                ActionOut {
                    action: "move_aside",
                    file: kaen_log::log::findings::FileFields::of(file),
                    sidecar: Some(sidecar.display().to_string()),
                    reason: reason.to_string(),
                    ..ActionOut::default()
                }
            }
            Action::RebuildIndexes { log, reason, .. } => {
                self.say(format!(
                    "repair: {verb} rebuild the indexes of {} ({reason})",
                    log.display()
                ))?;
                ActionOut {
                    action: "rebuild_indexes",
                    file: kaen_log::log::findings::FileFields::of(log),
                    reason: reason.to_string(),
                    ..ActionOut::default()
                }
            }
            Action::CutRanges {
                log,
                ranges,
                reason,
            } => {
                for (from, to, sidecar) in ranges {
                    self.say(format!(
                        "repair: {verb} move bytes {from}..{to} ({} bytes) of {} to {}",
                        to - from,
                        log.display(),
                        sidecar.display()
                    ))?;
                }
                self.say(format!(
                    "repair: {verb} rewrite {} without them, keeping every valid batch ({reason})",
                    log.display()
                ))?;
                ActionOut {
                    action: "cut_ranges",
                    file: kaen_log::log::findings::FileFields::of(log),
                    sidecar: Some(
                        ranges
                            .iter()
                            .map(|(from, to, sidecar)| {
                                format!("{from}..{to}:{}", sidecar.display())
                            })
                            .collect::<Vec<_>>()
                            .join(","),
                    ),
                    reason: reason.to_string(),
                    ..ActionOut::default()
                }
            }
        })
    }
}

/// The partitions whose salvage would leave their replicas different, and
/// why: a replicated partition (its replicas in the newest KRaft metadata
/// among the directories given) salvaged on fewer than all its replicas,
/// or on replicas that lose different offsets. A broker never repairs
/// that: after the restart the replicas' log ends and leader epochs agree,
/// so no follower truncates or fetches the offsets one of them lost
/// (`AbstractFetcherThread`: truncation by leader epoch only), while the
/// leader serves its own. The broker's own remedy is named.
fn uneven_salvages(
    plans: &[Planned],
    image: Option<&kaen_log::metadata::image::Image>,
) -> Vec<(PathBuf, String)> {
    let mut out = Vec::new();
    let mut seen: Vec<(&str, i32)> = Vec::new();
    for (_, p, ..) in plans {
        let key = (p.topic.as_str(), p.partition);
        if seen.contains(&key) {
            continue;
        }
        seen.push(key);
        let copies: Vec<_> = plans
            .iter()
            .filter(|(_, q, ..)| (q.topic.as_str(), q.partition) == key)
            .collect();
        let lost = |plan: &repair::Plan| {
            plan.salvage
                .as_ref()
                .map(|s| s.lost.clone())
                .unwrap_or_default()
        };
        if copies.iter().all(|(_, _, plan, _)| lost(plan).is_empty()) {
            continue;
        }
        let Some(reg) = kaen_log::offsets::write::registration(image, key.0, key.1) else {
            continue;
        };
        if reg.replicas.len() < 2 {
            continue;
        }
        let given: Vec<i32> = copies
            .iter()
            .filter_map(|(d, ..)| kaen_log::log::meta::node_id(d))
            .collect();
        let missing: Vec<String> = reg
            .replicas
            .iter()
            .filter(|n| !given.contains(n))
            .map(i32::to_string)
            .collect();
        let differ = copies.windows(2).any(|w| lost(&w[0].2) != lost(&w[1].2));
        if missing.is_empty() && !differ {
            continue;
        }
        let nodes: Vec<String> = reg.replicas.iter().map(i32::to_string).collect();
        let what = if missing.is_empty() {
            "the replicas given would lose different offsets".to_string()
        } else {
            format!("node(s) {} not given", missing.join(", "))
        };
        for (_, q, plan, _) in &copies {
            if lost(plan).is_empty() {
                continue;
            }
            out.push((
                q.dir.clone(),
                format!(
                    "{}-{} is replicated on nodes {} and {what}: this salvage would leave its replicas \
                     different, which Kafka never repairs (their log ends and leader epochs agree, so no \
                     follower fetches what one lacks). The broker's remedy: with the brokers stopped, remove \
                     this replica's partition folder ({}) so that it re-replicates from the leader, or salvage \
                     every replica alike (give each broker's data directory, damaged alike)",
                    key.0,
                    key.1,
                    nodes.join(", "),
                    q.dir.display()
                ),
            ));
        }
    }
    out
}

/// The offsets a salvage loses, against what Kafka's recovery would.
fn salvage_lines(p: &Partition, s: &repair::Salvage) -> Vec<String> {
    let name = p.name();
    let mut out = Vec::new();
    let lost: Vec<String> = s
        .lost
        .iter()
        .map(|l| match l.to {
            Some(to) if to == l.from => format!("{to}"),
            Some(to) => format!("{}..={to}", l.from),
            None => format!("{} and on (the cut tail's offsets cannot be read)", l.from),
        })
        .collect();
    let count = match s
        .lost
        .iter()
        .map(|l| l.to.and_then(|t| t.checked_sub(l.from)?.checked_add(1)))
        .try_fold(0i64, |acc, n| acc.checked_add(n?))
    {
        Some(n) => format!("{n} offsets, "),
        None => String::new(),
    };
    out.push(format!(
        "salvage: {name}: offsets lost: {} ({count}{} bytes cut); {} bytes of valid batches after the damage kept",
        if lost.is_empty() { "none".to_string() } else { lost.join(", ") },
        s.cut_bytes,
        s.kept_after_damage_bytes
    ));
    match (&s.kafka_cut, s.kafka_lost) {
        (Some((log, at)), lost) => out.push(format!(
            "salvage: {name}: Kafka's recovery would cut {} at position {at}{}{}",
            log.display(),
            if s.kafka_deleted.is_empty() {
                String::new()
            } else {
                format!(" and delete {} later segment(s)", s.kafka_deleted.len())
            },
            match lost {
                Some((from, end)) => format!(
                    ", losing offsets {from}..={} ({} offsets)",
                    end.saturating_sub(1),
                    end.saturating_sub(from)
                ),
                None => ", losing only the unreadable tail".to_string(),
            }
        )),
        (None, _) => out.push(format!(
            "salvage: {name}: Kafka's recovery, from the recovery point, would not reach this damage (it trusts the segments below the recovery point)"
        )),
    }
    out
}
