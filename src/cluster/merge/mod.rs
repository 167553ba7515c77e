//! `klog cluster`: the summaries of every broker merged into one verdict.
//!
//! Per partition: the replicas found (one per node) and the ones the
//! metadata assigns that no summary holds; the leader (the metadata's, or
//! when it has none or left no summary, the replica with the newest leader
//! epoch, then the longest log, then the lowest node id: Kafka elects a
//! leader from the ISR, and every ISR member holds the newest epoch and
//! every acknowledged offset); each follower's divergence as Kafka's
//! truncation computes it ([`truncate_follower`](super::epochs::truncate_follower) against the leader, whose
//! cache gets the metadata's leader epoch at its log end, as
//! `Partition.makeLeader` assigns it), then checked by the epoch checksums
//! below the truncation point: a run both replicas hold whose checksums
//! differ is a divergence Kafka does not see. A partition is `lost` when no
//! assigned replica is found, `diverged` when a replica holds batches Kafka
//! would cut or that differ from the leader's, `under_replicated` when a
//! replica is missing or behind the leader's log end, else `ok`.
//!
//! Group lag: each offsets partition's committed offsets are taken from
//! its leader's summary (the group coordinator's), and compared with the
//! high watermark of the leader of each partition the group read.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::broker_summary::{
    AssignedPartition, LogDirSummary, MetadataSummary, PartitionSummary, SummaryDoc, SCHEMA_VERSION,
};
use super::epochs::{EpochCache, ReplicaLog};
use crate::error::{Error, Result};

mod group_lag;
mod leader;
pub mod lost;
mod replicas;
mod verdict;

use group_lag::group_lag;
pub use leader::{choose_leader, registers_unclean, Candidate, Election, Rules};
use replicas::partition_verdict;
pub use verdict::{
    ClusterReport, GroupLag, LagStatus, Landing, LandsUnder, LeaderOutcome, LeaderSource,
    MetadataSource, PartitionStatus, PartitionVerdict, ReplicaState, ReplicaVerdict, SourceRow,
    Totals,
};

/// The largest summary file read.
pub const MAX_SUMMARY_FILE: u64 = 1 << 30;

/// A summary document and the file it came from.
#[derive(Debug, Clone)]
pub struct Source {
    pub file: PathBuf,
    pub doc: SummaryDoc,
}

/// Parse a summary document, refusing a major version this klog does not read.
pub fn parse(bytes: &[u8], file: &Path) -> Result<SummaryDoc> {
    #[derive(Deserialize)]
    struct Probe {
        schema_version: Option<serde_json::Value>,
        command: Option<serde_json::Value>,
    }
    let not_summary = |why: String| {
        Error::layout(
            file,
            format!("is not a klog summary (`klog summary --format json`): {why}"),
        )
    };
    let probe: Probe = serde_json::from_slice(bytes).map_err(|e| not_summary(e.to_string()))?;
    let version = probe
        .schema_version
        .ok_or_else(|| not_summary("no schema_version".into()))?;
    if version.as_u64() != Some(u64::from(SCHEMA_VERSION)) {
        return Err(Error::layout(
            file,
            format!(
                "summary schema version {version} is not one this klog reads ({SCHEMA_VERSION}); \
                 summarize with the same klog version as the one merging"
            ),
        ));
    }
    let doc: SummaryDoc = serde_json::from_slice(bytes).map_err(|e| not_summary(e.to_string()))?;
    let command = probe
        .command
        .as_ref()
        .map(|c| c.as_str().unwrap_or("(not a string)"));
    super::check::check(command, &doc)
        .map_err(|v| Error::layout(file, format!("is not a summary klog can trust: {v}")))?;
    Ok(doc)
}

/// Read the summaries named by `paths`: summary files (`-` for standard
/// input; a pipe such as a process substitution is read as it comes),
/// directories whose `*.json` files (in name order) are summaries, or log
/// directories, summarized here as `klog summary` would (its default
/// options).
pub fn read_sources(paths: &[PathBuf]) -> Result<Vec<Source>> {
    let mut sources = Vec::new();
    for path in paths {
        if path.as_os_str() == "-" {
            let bytes = read_stream(std::io::stdin().lock(), path)?;
            sources.push(Source {
                file: path.clone(),
                doc: parse(&bytes, path)?,
            });
            continue;
        }
        let meta = std::fs::metadata(path).map_err(|e| Error::io(path, "stat", e))?;
        if !meta.is_dir() {
            let bytes = if meta.is_file() {
                crate::log::files::read_regular(path, MAX_SUMMARY_FILE)?
                    .ok_or_else(|| Error::layout(path, "does not exist"))?
            } else {
                let file = std::fs::File::open(path).map_err(|e| Error::io(path, "open", e))?;
                read_stream(file, path)?
            };
            sources.push(Source {
                file: path.clone(),
                doc: parse(&bytes, path)?,
            });
            continue;
        }
        let mut found = Vec::new();
        for entry in std::fs::read_dir(path).map_err(|e| Error::io(path, "list directory", e))? {
            let entry = entry.map_err(|e| Error::io(path, "list directory", e))?;
            let p = entry.path();
            if p.extension().is_some_and(|e| e == "json") && p.is_file() {
                found.push(p);
            }
        }
        if found.is_empty() {
            // No summary in it: a log directory, summarized here.
            if crate::log::DataDir::open(path).is_err()
                && !path.join(crate::log::meta::META_PROPERTIES).exists()
            {
                return Err(Error::layout(
                    path,
                    "holds no summaries (*.json files) and is not a log directory",
                ));
            }
            let (summary, findings) =
                crate::cluster::broker_summary::summarize(path, &Default::default())?;
            sources.push(Source {
                file: path.clone(),
                doc: SummaryDoc {
                    schema_version: crate::cluster::broker_summary::SCHEMA_VERSION,
                    log_dirs: vec![summary],
                    findings,
                },
            });
            continue;
        }
        found.sort();
        for file in found {
            let bytes = crate::log::files::read_regular(&file, MAX_SUMMARY_FILE)?
                .ok_or_else(|| Error::layout(&file, "does not exist"))?;
            let doc = parse(&bytes, &file)?;
            sources.push(Source { file, doc });
        }
    }
    Ok(sources)
}

/// A summary read from a stream, refused past [`MAX_SUMMARY_FILE`] bytes.
fn read_stream(r: impl std::io::Read, path: &Path) -> Result<Vec<u8>> {
    use std::io::Read;
    let mut bytes = Vec::new();
    r.take(MAX_SUMMARY_FILE + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| Error::io(path, "read", e))?;
    if bytes.len() as u64 > MAX_SUMMARY_FILE {
        return Err(Error::layout(
            path,
            format!("is more than a summary may be ({MAX_SUMMARY_FILE} bytes): not read"),
        ));
    }
    Ok(bytes)
}

/// A log directory of a summary.
struct Dir<'a> {
    file: &'a Path,
    node: i32,
    dir: &'a LogDirSummary,
    /// The summary it is in.
    doc: &'a SummaryDoc,
}

impl Dir<'_> {
    /// The summary's warnings and errors about this directory (notes are
    /// what a healthy broker leaves): those whose file is in it, or all of
    /// them in a summary of this directory alone. A folder that stops the
    /// broker from starting is one.
    fn findings(&self) -> Vec<crate::log::findings::Finding> {
        use crate::log::findings::Severity;
        let alone = self.doc.log_dirs.len() == 1;
        self.doc
            .findings
            .iter()
            .filter(|f| f.severity >= Severity::Warning)
            .filter(|f| alone || f.file.starts_with(&self.dir.path))
            .cloned()
            .collect()
    }

    /// The directory's row of the report.
    fn row(&self) -> SourceRow {
        SourceRow {
            file: crate::log::findings::FileFields::of(self.file),
            node_id: self.node,
            log_dir: self.dir.path.clone(),
            log_dir_base64: self.dir.path_base64.clone(),
            directory_id: self.dir.directory_id.clone(),
            partitions: self.dir.partitions.len(),
            shutdown: self.dir.shutdown_state(),
            findings: self.findings(),
        }
    }
}

/// A replica found in a summary.
#[derive(Clone, Copy)]
struct Found<'a> {
    file: &'a Path,
    dir: &'a LogDirSummary,
    p: &'a PartitionSummary,
}

/// What the summaries cannot say, given by the user.
#[derive(Debug, Clone, Default)]
pub struct MergeOptions {
    /// Topics that allow an unclean election beyond what the metadata
    /// says (ZooKeeper mode keeps topic configs in ZooKeeper).
    pub unclean_election: Vec<String>,
}

/// Merge the summaries (see the module docs). Summaries that contradict
/// each other (another cluster, the same directory twice, a partition twice
/// on one node, no node id) are refused.
pub fn merge(sources: &[Source]) -> Result<ClusterReport> {
    merge_with(sources, &MergeOptions::default())
}

/// [`merge`], with what the summaries cannot say.
pub fn merge_with(sources: &[Source], options: &MergeOptions) -> Result<ClusterReport> {
    let (dirs, cluster_id) = log_dirs(sources)?;
    let metadata = dirs
        .iter()
        .filter_map(|d| d.dir.metadata.as_ref().map(|m| (d, m)))
        .max_by_key(|(d, m)| (m.next_offset, std::cmp::Reverse(d.node)));
    let found = found_replicas(&dirs)?;
    let nodes: BTreeSet<i32> = dirs.iter().map(|d| d.node).collect();
    let assigned: BTreeMap<(&str, i32), (&AssignedPartition, &str)> = metadata
        .iter()
        .flat_map(|(_, m)| &m.topics)
        .flat_map(|t| {
            t.partitions
                .iter()
                .map(move |a| ((t.topic.as_str(), a.partition), (a, t.topic_id.as_str())))
        })
        .collect();
    let election = match metadata {
        Some((_, m)) => replicas::ElectionFacts {
            elr: m.elr_enabled,
            unclean_topics: m
                .topics
                .iter()
                .filter(|t| t.unclean_leader_election == Some(true))
                .map(|t| t.topic.as_str())
                .collect(),
            registered: m
                .brokers
                .iter()
                .filter_map(|b| Some((b.node_id, b.epoch?)))
                .collect(),
        },
        None => replicas::ElectionFacts::default(),
    };
    let mut election = election;
    election
        .unclean_topics
        .extend(options.unclean_election.iter().map(String::as_str));
    let keys: BTreeSet<(&str, i32)> = assigned.keys().chain(found.keys()).copied().collect();
    let empty = BTreeMap::new();
    let mut partitions = Vec::new();
    let mut leaders: BTreeMap<(&str, i32), Found<'_>> = BTreeMap::new();
    for key in keys {
        let replicas = found.get(&key).unwrap_or(&empty);
        let (verdict, leader) = partition_verdict(
            key,
            replicas,
            assigned.get(&key).copied(),
            &nodes,
            &election,
        );
        if let Some(l) = leader {
            leaders.insert(key, l);
        }
        partitions.push(verdict);
    }
    for verdict in &mut partitions {
        let key = (verdict.topic.as_str(), verdict.partition);
        if let Some(replicas) = found.get(&key) {
            fill_lost(
                &verdict.topic,
                verdict.partition,
                verdict.leader,
                &mut verdict.replicas,
                replicas,
            )?;
            for o in &mut verdict.outcomes {
                fill_lost(
                    &verdict.topic,
                    verdict.partition,
                    Some(o.leader),
                    &mut o.replicas,
                    replicas,
                )?;
            }
        }
    }
    let groups = group_lag(&partitions, &leaders, &found, &assigned);
    Ok(ClusterReport {
        schema_version: SCHEMA_VERSION,
        cluster_id: cluster_id.map(|(c, _)| c.to_string()),
        summaries: dirs.iter().map(Dir::row).collect(),
        metadata: metadata.map(|(d, m): (&Dir<'_>, &MetadataSummary)| MetadataSource {
            node_id: d.node,
            file: crate::log::findings::FileFields::of(d.file),
            next_offset: m.next_offset,
            incomplete: m.incomplete.clone(),
        }),
        totals: Totals::of(&partitions),
        partitions,
        groups,
    })
}

/// The records each truncating replica of `replicas` (a follower whose
/// truncation offset is below its log end) loses under `leader`, for the
/// replicas whose log directory was given as such.
fn fill_lost(
    topic: &str,
    partition: i32,
    leader: Option<i32>,
    verdicts: &mut [ReplicaVerdict],
    replicas: &BTreeMap<i32, Found<'_>>,
) -> Result<()> {
    let folder = |f: &Found<'_>| {
        f.file
            .is_dir()
            .then(|| f.file.join(format!("{topic}-{partition}")))
    };
    let leader_dir = leader.and_then(|l| replicas.get(&l)).and_then(folder);
    for r in verdicts.iter_mut() {
        let (Some(to), Some(end)) = (r.truncation_offset, r.log_end_offset) else {
            continue;
        };
        if to >= end || Some(r.node_id) == leader {
            continue;
        }
        let Some(dir) = replicas.get(&r.node_id).and_then(folder) else {
            continue;
        };
        r.lost = lost::cut_records(&dir, leader_dir.as_deref(), to, r.high_watermark)?;
    }
    Ok(())
}

/// A cluster id and the summary that named it first.
type ClusterId<'a> = Option<(&'a str, &'a Path)>;

/// The replicas found: by partition (topic, partition), then by node.
type Replicas<'a> = BTreeMap<(&'a str, i32), BTreeMap<i32, Found<'a>>>;

/// Every log directory of the summaries, with its node id, and the
/// cluster id they name (with the file that named it first); refused when
/// a directory has no node id, two name other clusters, or a node's
/// directory is summarized twice.
fn log_dirs(sources: &[Source]) -> Result<(Vec<Dir<'_>>, ClusterId<'_>)> {
    let mut dirs: Vec<Dir<'_>> = Vec::new();
    let mut seen: BTreeMap<(i32, String), &Path> = BTreeMap::new();
    let mut cluster_id: Option<(&str, &Path)> = None;
    for s in sources {
        for d in &s.doc.log_dirs {
            let node = d.node_id.ok_or_else(|| {
                Error::layout(
                    &s.file,
                    format!(
                        "log directory {:?} has no node id (meta.properties missing or unreadable): summarize it with --node-id N",
                        d.path
                    ),
                )
            })?;
            if let Some(c) = &d.cluster_id {
                match cluster_id {
                    Some((other, from)) if other != c => {
                        return Err(Error::layout(
                            &s.file,
                            format!(
                            "cluster id {c:?} differs from {other:?} in {}: summaries of two clusters",
                            from.display()
                        ),
                        ))
                    }
                    Some(_) => {}
                    None => cluster_id = Some((c, &s.file)),
                }
            }
            let key = (
                node,
                d.directory_id.clone().unwrap_or_else(|| d.path.clone()),
            );
            if let Some(other) = seen.insert(key, &s.file) {
                return Err(Error::layout(
                    &s.file,
                    format!(
                        "node {node}'s log directory {:?} is also summarized in {}",
                        d.path,
                        other.display()
                    ),
                ));
            }
            dirs.push(Dir {
                file: &s.file,
                node,
                dir: d,
                doc: &s.doc,
            });
        }
    }
    Ok((dirs, cluster_id))
}

/// The replicas found, by partition then node; refused when a node holds
/// a partition in two log directories.
fn found_replicas<'a>(dirs: &[Dir<'a>]) -> Result<Replicas<'a>> {
    let mut found: BTreeMap<(&str, i32), BTreeMap<i32, Found<'_>>> = BTreeMap::new();
    for d in dirs {
        for p in &d.dir.partitions {
            let replicas = found.entry((p.topic.as_str(), p.partition)).or_default();
            let f = Found {
                file: d.file,
                dir: d.dir,
                p,
            };
            if let Some(other) = replicas.insert(d.node, f) {
                return Err(Error::layout(
                    d.file,
                    format!(
                        "node {} holds {:?} partition {} in two log directories ({:?} and {:?})",
                        d.node, p.topic, p.partition, other.dir.path, d.dir.path
                    ),
                ));
            }
        }
    }
    Ok(found)
}

impl Totals {
    /// The counts of `partitions`' verdicts.
    fn of(partitions: &[PartitionVerdict]) -> Totals {
        let mut totals = Totals {
            partitions: partitions.len(),
            ..Totals::default()
        };
        for p in partitions {
            match p.status {
                PartitionStatus::Ok => totals.ok += 1,
                PartitionStatus::UnderReplicated => totals.under_replicated += 1,
                PartitionStatus::Diverged => totals.diverged += 1,
                PartitionStatus::Offline => totals.offline += 1,
                PartitionStatus::Lost => totals.lost += 1,
            }
            totals.diverged_replicas += p
                .replicas
                .iter()
                .filter(|r| r.state == ReplicaState::Diverged && r.assigned != Some(false))
                .count();
        }
        totals
    }
}

/// The high watermark as the broker loads it: the checkpointed one within
/// the log's ends (`UnifiedLog.updateHighWatermark`), else the log start.
fn loaded_high_watermark(p: &PartitionSummary) -> i64 {
    p.high_watermark
        .unwrap_or(p.log_start_offset)
        .max(p.log_start_offset)
        .min(p.log_end_offset)
}

fn replica_log(p: &PartitionSummary) -> ReplicaLog {
    ReplicaLog {
        cache: EpochCache::from_entries(
            p.leader_epochs
                .iter()
                .map(|e| (e.leader_epoch, e.start_offset)),
        ),
        log_start: p.log_start_offset,
        log_end: p.log_end_offset,
        high_watermark: loaded_high_watermark(p),
    }
}

fn latest_epoch(p: &PartitionSummary) -> Option<i32> {
    p.leader_epochs.iter().map(|e| e.leader_epoch).max()
}
