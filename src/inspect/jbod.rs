//! A broker's log directories given only in part (JBOD). The KRaft
//! metadata says in which log directory each replica lives
//! (`PartitionRecord.directories`, KIP-858: the `directory.id` of that
//! directory's meta.properties, `PartitionRegistration.directory`); a
//! partition the given directories' node holds in a directory that was not
//! given is named, so that a command reading the offsets topic or the
//! groups does not silently show part of them.

use std::collections::{BTreeMap, BTreeSet};

use crate::log::meta::{read_meta_properties, Uuid, META_PROPERTIES};
use crate::log::DataDir;

/// The partitions node `node` holds in log directory `directory`, which
/// was not given.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ElsewhereDir {
    pub node: i32,
    pub directory: Uuid,
    /// `(topic, partition)`, in order.
    pub partitions: Vec<(String, i32)>,
}

/// Directory ids Kafka reserves (`DirectoryId.reserved`: the most
/// significant long zero, the least, signed, below 100): UNASSIGNED, LOST
/// and MIGRATING name no directory.
fn reserved(id: &Uuid) -> bool {
    let (most, least) = id.0.split_at(8);
    most.iter().all(|&b| b == 0) && i64::from_be_bytes(least.try_into().unwrap_or([0; 8])) < 100
}

/// The log directories of the given directories' nodes that the newest
/// KRaft metadata among them places partitions in, and that were not
/// given, with those partitions (the ones not found in a given directory).
/// Empty without metadata or without directory ids.
pub fn partitions_elsewhere(dirs: &[DataDir]) -> Vec<ElsewhereDir> {
    let mut given: BTreeMap<i32, BTreeSet<Uuid>> = BTreeMap::new();
    for d in dirs {
        let Ok(Some(meta)) = read_meta_properties(&d.path.join(META_PROPERTIES)) else {
            continue;
        };
        if let (Some(node), Some(id)) = (meta.node_id, meta.directory_id) {
            given.entry(node).or_default().insert(id);
        }
    }
    if given.is_empty() {
        return Vec::new();
    }
    let paths: Vec<std::path::PathBuf> = dirs.iter().map(|d| d.path.clone()).collect();
    let Some(image) = crate::metadata::newest_image(&paths) else {
        return Vec::new();
    };
    let here: BTreeSet<(&str, i32)> = dirs
        .iter()
        .flat_map(|d| d.live().map(|p| (p.topic.as_str(), p.partition)))
        .collect();
    let mut elsewhere: BTreeMap<(i32, Uuid), Vec<(String, i32)>> = BTreeMap::new();
    for topic in image.topics.values() {
        for (&partition, reg) in &topic.partitions {
            if here.contains(&(topic.name.as_str(), partition)) {
                continue;
            }
            for (node, directory) in reg.replicas.iter().zip(reg.directories.iter()) {
                let Some(ours) = given.get(node) else {
                    continue;
                };
                if !reserved(directory) && !ours.contains(directory) {
                    elsewhere
                        .entry((*node, *directory))
                        .or_default()
                        .push((topic.name.clone(), partition));
                }
            }
        }
    }
    elsewhere
        .into_iter()
        .map(|((node, directory), mut partitions)| {
            partitions.sort();
            ElsewhereDir {
                node,
                directory,
                partitions,
            }
        })
        .collect()
}
