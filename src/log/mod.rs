//! Files: segment names, partition folders, data directories, the reader,
//! the lock and the one append path.
//!
//! A data directory holds partition folders `<topic>-<partition>`; each
//! holds segments `<20-digit base offset>.log` with `.index` and
//! `.timeindex` siblings. Reading never writes; [`appender`] is the only way
//! bytes are added, every change goes through a [`storage::Storage`], and
//! [`durable`] holds the order of writes and syncs and the only
//! implementation that touches the disk.
#![cfg_attr(not(test), deny(clippy::unwrap_used, clippy::indexing_slicing))]

pub mod appender;
pub mod beneath;
pub mod checkpoint;
pub mod dir;
pub mod durable;
pub mod epoch_cache;
pub mod files;
pub mod findings;
pub mod headers;
pub mod lock;
pub mod meta;
pub mod read;
pub mod shutdown;
pub mod storage;
pub mod walk;

pub use appender::{AbortedTxn, AbortedTxnLookup, AppendConfig, PartitionAppender};
pub use dir::{classify, DataDir, Partition, PartitionState, PathKind, SegmentFiles};
pub use read::{Reads, SegmentReader, Tail};
pub use walk::{Checks, Damage, OnDamage, Policy, Step, Walk, Walked};

/// The file name of the segment (or index) with `base_offset`, e.g.
/// `00000000000000000042.log`.
pub fn segment_file_name(base_offset: i64, suffix: &str) -> String {
    format!("{base_offset:020}.{suffix}")
}

/// The base offset in a segment-style file name (`<digits>.<suffix>`), if
/// the name is one: ASCII digits before the first `.`, fitting an i64.
pub fn parse_segment_name(name: &str) -> Option<(i64, &str)> {
    let (digits, suffix) = name.split_once('.')?;
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((digits.parse().ok()?, suffix))
}

/// The start offset, segment id and suffix in the name of a remote
/// segment's file, as RemoteStorageManager plugins name them:
/// `<20-digit start offset>-<segment uuid>.<suffix>` (Kafka's
/// `LocalTieredStorage`, `RemoteLogSegmentFileset`: `.log`, `.index`,
/// `.timeindex`, `.txnindex`, `.snapshot`, `.leader_epoch_checkpoint`),
/// and as a broker caches a remote segment's indexes in its
/// `remote-log-index-cache` folder: `<start offset>_<segment uuid>.<suffix>`
/// (`RemoteIndexCache.generateFileNamePrefixForIndex`). kafka-dump-log
/// takes such a name's offset for a number and fails.
pub fn parse_remote_segment_name(name: &str) -> Option<(i64, &str, &str)> {
    let (stem, suffix) = name.split_once('.')?;
    let at = stem.find(|c: char| !c.is_ascii_digit())?;
    let (digits, rest) = stem.split_at(at);
    let id = match rest.strip_prefix('-') {
        Some(id) if digits.len() == 20 => id,
        _ => rest.strip_prefix('_')?,
    };
    let uuid_like = id.len() == 22
        && id
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if digits.is_empty() || !uuid_like {
        return None;
    }
    Some((digits.parse().ok()?, id, suffix))
}

/// The base offset and suffix of a segment's file, a local one's
/// ([`parse_segment_name`]) or a remote one's
/// ([`parse_remote_segment_name`]).
pub fn parse_any_segment_name(name: &str) -> Option<(i64, &str)> {
    parse_segment_name(name)
        .or_else(|| parse_remote_segment_name(name).map(|(offset, _, suffix)| (offset, suffix)))
}

/// Split a partition folder name into topic, partition and state.
/// `my-topic.v2-17` → (`my-topic.v2`, 17, live);
/// `t-0.<32 hex>-delete` → (`t`, 0, delete); likewise `-future` and `-stray`.
pub fn parse_partition_dir(name: &str) -> Option<(String, i32, dir::PartitionState)> {
    use dir::PartitionState;
    let mut state = PartitionState::Live;
    let mut base = name;
    for (suffix, s) in [
        ("-delete", PartitionState::Delete),
        ("-future", PartitionState::Future),
        ("-stray", PartitionState::Stray),
    ] {
        if let Some(stripped) = name.strip_suffix(suffix) {
            // <topic>-<partition>.<uuid>-<suffix>: cut at the last '.'
            let (tp, uuid) = stripped.rsplit_once('.')?;
            if uuid.is_empty() {
                return None;
            }
            base = tp;
            state = s;
            break;
        }
    }
    let (topic, partition) = base.rsplit_once('-')?;
    if topic.is_empty()
        || topic == "."
        || topic == ".."
        || !topic
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
    {
        return None;
    }
    if partition.is_empty() || !partition.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    Some((topic.to_string(), partition.parse().ok()?, state))
}

#[cfg(test)]
mod tests {
    #[test]
    fn remote_segment_names() {
        use super::parse_remote_segment_name as p;
        let id = "WMWAfwiwTXyCp-pF6V0-_w";
        assert_eq!(
            p(&format!("00000000000000000010-{id}.txnindex")),
            Some((10, id, "txnindex"))
        );
        assert_eq!(p(&format!("10_{id}.index")), Some((10, id, "index")));
        assert_eq!(p(&format!("10-{id}.log")), None); // a remote name has 20 digits
        assert_eq!(p("00000000000000000010.log"), None);
        assert_eq!(p("00000000000000000010-short.log"), None);
        assert_eq!(
            super::parse_any_segment_name("00000000000000000010.log"),
            Some((10, "log"))
        );
    }

    use super::dir::PartitionState;
    use super::*;

    #[test]
    fn segment_names() {
        assert_eq!(segment_file_name(42, "log"), "00000000000000000042.log");
        assert_eq!(
            parse_segment_name("00000000000000000042.log"),
            Some((42, "log"))
        );
        assert_eq!(
            parse_segment_name("00000000000000000042.log.cut-100"),
            Some((42, "log.cut-100"))
        );
        assert_eq!(parse_segment_name("abc.log"), None);
        assert_eq!(parse_segment_name("99999999999999999999.log"), None);
    }

    #[test]
    fn partition_dirs_with_dashes_dots_and_states() {
        assert_eq!(
            parse_partition_dir("orders-0"),
            Some(("orders".into(), 0, PartitionState::Live))
        );
        assert_eq!(
            parse_partition_dir("my-topic.v2-17"),
            Some(("my-topic.v2".into(), 17, PartitionState::Live))
        );
        assert_eq!(
            parse_partition_dir("__consumer_offsets-49"),
            Some(("__consumer_offsets".into(), 49, PartitionState::Live))
        );
        assert_eq!(
            parse_partition_dir("t-x-3.0123456789abcdef0123456789abcdef-delete"),
            Some(("t-x".into(), 3, PartitionState::Delete))
        );
        assert_eq!(
            parse_partition_dir("t-3.0123456789abcdef0123456789abcdef-future"),
            Some(("t".into(), 3, PartitionState::Future))
        );
        assert_eq!(
            parse_partition_dir("t-3.0123456789abcdef0123456789abcdef-stray"),
            Some(("t".into(), 3, PartitionState::Stray))
        );
        assert_eq!(parse_partition_dir("orders"), None);
        assert_eq!(parse_partition_dir("orders-x"), None);
        assert_eq!(parse_partition_dir("-1"), None);
        assert_eq!(parse_partition_dir("bad topic-1"), None);
    }
}
