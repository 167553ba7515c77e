//! The records a follower's truncation cuts when the brokers restart, read
//! from the follower's own log directory (when `klog cluster` was given
//! the directory, not only its summary): by offset and key, whether that
//! replica had counted them committed (below its checkpointed high
//! watermark), and whether an idempotent producer's copy survives on the
//! leader.
//!
//! A producer with a producer id re-sends a batch it got no answer for
//! with the same producer id, epoch and sequence; when the new leader
//! already holds that sequence, the record is not lost, only moved to the
//! offset the leader gave it (`ProducerStateManager`, `ProducerAppendInfo`:
//! a duplicate sequence is answered with the first append's offset, never
//! written twice).

use std::collections::BTreeMap;
use std::path::Path;

use serde::Serialize;

use crate::error::Result;
use crate::format::{DecodeLimits, Entry};
use crate::log::{Partition, Policy};

/// At most this many records are listed per replica (all are counted).
pub const LISTED: usize = 100;

/// What a replica's truncation cuts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LostRecords {
    /// Records cut (control records left out).
    pub count: u64,
    /// Of them, below the replica's checkpointed high watermark: records
    /// that replica had seen committed (acknowledged to `acks=all`).
    pub below_high_watermark: u64,
    /// Of them, re-sent by their idempotent producer and held by the leader.
    pub resent: u64,
    /// The first [`LISTED`] of them.
    pub records: Vec<LostRecord>,
}

/// One record cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, schemars::JsonSchema)]
pub struct LostRecord {
    pub offset: i64,
    /// The key as text (lossy UTF-8), `None` for a null key.
    pub key: Option<String>,
    pub producer_id: i64,
    /// Its sequence (`None` without an idempotent producer).
    pub sequence: Option<i32>,
    /// The leader's offset of the same producer's same sequence.
    pub resent_at: Option<i64>,
}

/// The records of `follower` (a partition folder) from `from` on, against
/// the leader's partition folder `leader` (when here) for re-sends.
/// `Ok(None)` when the follower's folder is not a directory here.
pub fn cut_records(
    follower: &Path,
    leader: Option<&Path>,
    from: i64,
    high_watermark: Option<i64>,
) -> Result<Option<LostRecords>> {
    if !follower.is_dir() {
        return Ok(None);
    }
    let resends = match leader.filter(|l| l.is_dir()) {
        Some(l) => sequences(&Partition::open(l)?, from)?,
        None => BTreeMap::new(),
    };
    let p = Partition::open(follower)?;
    let mut out = LostRecords {
        count: 0,
        below_high_watermark: 0,
        resent: 0,
        records: Vec::new(),
    };
    let mut walk = p.walk_from(from, Policy::VALID_ENTRIES);
    let mut scratch = Vec::new();
    while let Some(w) = walk.next_entry()? {
        let Entry::V2(b) = w.entry else {
            continue;
        };
        let h = b.header;
        if h.is_control() {
            continue;
        }
        let Ok(records) = b.records(&mut scratch, DecodeLimits::default()) else {
            continue;
        };
        for r in records.flatten() {
            if r.offset < from {
                continue;
            }
            let sequence = (h.producer_id >= 0 && h.base_sequence >= 0)
                .then(|| crate::format::batch::increment_sequence(h.base_sequence, r.offset_delta));
            let resent_at = sequence.and_then(|s| {
                resends
                    .get(&(h.producer_id, h.producer_epoch))?
                    .iter()
                    .find(|(first, last, _)| (*first..=*last).contains(&s))
                    .map(|(first, _, base)| base + i64::from(s - first))
            });
            out.count += 1;
            if high_watermark.is_some_and(|hw| r.offset < hw) {
                out.below_high_watermark += 1;
            }
            if resent_at.is_some() {
                out.resent += 1;
            }
            if out.records.len() < LISTED {
                out.records.push(LostRecord {
                    offset: r.offset,
                    key: r.key.map(|k| String::from_utf8_lossy(k).into_owned()),
                    producer_id: h.producer_id,
                    sequence,
                    resent_at,
                });
            }
        }
    }
    Ok(Some(out))
}

/// By (producer id, producer epoch): its batches' (first sequence, last
/// sequence, base offset).
type Sequences = BTreeMap<(i64, i16), Vec<(i32, i32, i64)>>;

/// Each (producer id, epoch)'s sequence ranges in `p` from `from` on, with
/// the offset of each range's first record: (first, last, base offset).
fn sequences(p: &Partition, from: i64) -> Result<Sequences> {
    let mut out = Sequences::new();
    let mut walk = p.walk_from(from, Policy::VALID_ENTRIES);
    while let Some(w) = walk.next_entry()? {
        let Entry::V2(b) = w.entry else {
            continue;
        };
        let h = b.header;
        if h.producer_id < 0 || h.base_sequence < 0 || h.is_control() {
            continue;
        }
        out.entry((h.producer_id, h.producer_epoch))
            .or_default()
            .push((h.base_sequence, h.last_sequence(), h.base_offset));
    }
    Ok(out)
}
