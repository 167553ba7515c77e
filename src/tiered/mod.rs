//! Tiered storage (KIP-405): what the log directories say of the records a
//! broker moved to remote storage.
//!
//! A broker with `remote.log.storage.system.enable` copies the closed
//! segments of a topic with `remote.storage.enable=true` to its
//! RemoteStorageManager, records each copy in `__remote_log_metadata`
//! ([`remote_records`], folded by [`remote_state`]), and deletes local
//! segments past `local.retention.*` once copied: the local log then starts
//! above the log start ([`log_starts`]). klog cannot read the remote
//! segments (they live where the plugin put them), but the metadata says
//! which offsets they hold and whether their transaction indexes hold
//! aborted transactions.
//!
//! [`Tiering`] decides, per partition, whether its log has remote storage:
//! by the topic's config in the KRaft metadata when a metadata log was read
//! (`UnifiedLog.isRemoteLogEnabled`: `remote.storage.enable=true`, not
//! compacted, not internal), else by `__remote_log_metadata` records naming
//! it. The broker's own `remote.log.storage.system.enable` is in its
//! `server.properties`, which no log directory holds; Kafka refuses a topic
//! with remote storage on a cluster without it ("Tiered Storage
//! functionality is disabled in the broker"), so the topic's config stands
//! for both.

pub mod log_starts;
pub mod remote_records;
pub mod remote_state;
pub mod remote_txns;

use std::collections::BTreeMap;

use crate::error::Result;
use crate::log::checkpoint;
use crate::log::meta::{read_partition_metadata, PARTITION_METADATA};
use crate::log::{DataDir, Partition};
use crate::metadata::image::Image;

pub use log_starts::{LogStarts, Tiered, TieredBy};
pub use remote_state::{RemoteMetadata, RemotePartition, RemoteSegment, REMOTE_LOG_METADATA_TOPIC};

/// Kafka's internal topics, which never have remote storage
/// (`Topic.isInternal`, `__remote_log_metadata`, `__cluster_metadata`).
const INTERNAL: [&str; 5] = [
    "__consumer_offsets",
    "__transaction_state",
    "__share_group_state",
    REMOTE_LOG_METADATA_TOPIC,
    crate::metadata::METADATA_TOPIC,
];

/// Which partitions of the directories read have remote storage, and what
/// their remote segments hold.
#[derive(Debug, Clone, Default)]
pub struct Tiering {
    remote: RemoteMetadata,
    /// Per topic of the metadata image read: whether its config enables
    /// remote storage (`remote.storage.enable=true`, not compacted).
    topics: BTreeMap<String, bool>,
}

impl Tiering {
    /// The `__remote_log_metadata` copies of `dirs`, and the topic configs
    /// of `image` (the KRaft metadata of one of them), when there is one.
    pub fn read(dirs: &[&DataDir], image: Option<&Image>) -> Result<Tiering> {
        let mut topics = BTreeMap::new();
        if let Some(image) = image {
            for t in image.topics.values() {
                let config = image.configs.get(&(TOPIC_RESOURCE, t.name.clone()));
                let value = |k: &str| config.and_then(|c| c.get(k)).map(String::as_str);
                let enabled = value("remote.storage.enable") == Some("true")
                    && !value("cleanup.policy").is_some_and(|p| p.contains("compact"));
                topics.insert(t.name.clone(), enabled);
            }
        }
        Ok(Tiering {
            remote: RemoteMetadata::read(dirs)?,
            topics,
        })
    }

    /// The `__remote_log_metadata` copies of `dirs`, and the topic configs
    /// of the newest KRaft metadata among them, which is replayed only when
    /// it can matter: when some partition's first local segment starts
    /// above its `log-start-offset-checkpoint` entry (0 without one), the
    /// one place where the two rules of [`log_starts`] differ.
    pub fn for_dirs(dirs: &[DataDir]) -> Result<Tiering> {
        let refs: Vec<&DataDir> = dirs.iter().collect();
        let mut needed = false;
        for d in dirs {
            let starts = checkpoint::read_offsets(&d.path.join(checkpoint::LOG_START_OFFSET))
                .ok()
                .flatten()
                .unwrap_or_default();
            needed |= d.live().any(|p| {
                let checkpointed = starts.get(&(p.topic.clone(), p.partition)).copied();
                !INTERNAL.contains(&p.topic.as_str())
                    && p.segments
                        .first()
                        .is_some_and(|s| s.base_offset > checkpointed.unwrap_or(0))
            });
        }
        let image = if needed {
            let paths: Vec<std::path::PathBuf> = dirs.iter().map(|d| d.path.clone()).collect();
            crate::metadata::newest_image(&paths)
        } else {
            None
        };
        Tiering::read(&refs, image.as_ref())
    }

    /// What klog knows of `p`'s remote storage (`None`: it has none).
    pub fn of(&self, p: &Partition) -> Option<Tiered> {
        if INTERNAL.contains(&p.topic.as_str()) {
            return None;
        }
        let remote = self.remote_of(p);
        let by = match self.topics.get(&p.topic) {
            Some(true) => TieredBy::TopicConfig,
            Some(false) => return None,
            None if remote.is_some() => TieredBy::RemoteLogMetadata,
            None => return None,
        };
        Some(Tiered {
            by,
            metadata_read: remote.is_some(),
            remote: remote.and_then(RemotePartition::range),
        })
    }

    /// The remote segments of `p` in the metadata read (by the topic id of
    /// its `partition.metadata` when it has one).
    pub fn remote_of(&self, p: &Partition) -> Option<&RemotePartition> {
        let id = read_partition_metadata(&p.dir.join(PARTITION_METADATA))
            .ok()
            .flatten()
            .map(|m| m.topic_id.to_string());
        self.remote.get(&p.topic, p.partition, id.as_deref())
    }

    /// `p`'s log start and local log start, given its
    /// `log-start-offset-checkpoint` entry.
    pub fn log_starts(&self, p: &Partition, checkpointed: Option<i64>) -> LogStarts {
        LogStarts::of(p, checkpointed, self.of(p))
    }

    /// The same, with the entry of the checkpoint in `p`'s own data
    /// directory (its parent folder).
    pub fn starts_in_dir(&self, p: &Partition) -> LogStarts {
        let checkpointed = p
            .dir
            .parent()
            .and_then(|d| checkpoint::read_offsets(&d.join(checkpoint::LOG_START_OFFSET)).ok())
            .flatten()
            .and_then(|m| m.get(&(p.topic.clone(), p.partition)).copied());
        self.log_starts(p, checkpointed)
    }

    /// What `for_dirs` reads, for partitions given alone or with their
    /// data directories: the data directories holding them.
    pub fn for_partitions(partitions: &[Partition]) -> Result<Tiering> {
        let parents: std::collections::BTreeSet<&std::path::Path> =
            partitions.iter().filter_map(|p| p.dir.parent()).collect();
        let dirs: Vec<DataDir> = parents
            .into_iter()
            .filter_map(|d| DataDir::open(d).ok())
            .collect();
        Tiering::for_dirs(&dirs)
    }

    /// A note on `p` when some of its transactions live in remote segments
    /// only ([`remote_txns::unread_transactions`]).
    pub fn unread_transactions(&self, p: &Partition) -> Option<crate::log::findings::Finding> {
        let starts = self.starts_in_dir(p);
        remote_txns::unread_transactions(p, &starts, self.remote_of(p))
    }
}

/// `ConfigResource.Type.TOPIC` in a ConfigRecord.
const TOPIC_RESOURCE: i8 = 2;
