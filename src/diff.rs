//! Comparing two copies of one partition (two replicas, or a disk and its
//! backup) batch by batch: the longest common prefix, the first offset
//! where they diverge, which copy holds a valid batch there, and how far
//! each extends.

use std::path::{Path, PathBuf};

use crate::error::Result;
use crate::log::{classify, Partition, PathKind, Policy};

/// One batch, owned (two readers cannot lend at once).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BatchCopy {
    pub file: PathBuf,
    pub position: u64,
    pub base_offset: i64,
    pub last_offset: i64,
    pub crc_valid: bool,
    pub bytes: Vec<u8>,
}

/// Every framed batch of a partition folder or a segment file, in order.
fn batches(path: &Path) -> Result<Vec<BatchCopy>> {
    let p = match classify(path)? {
        PathKind::File => Partition::single_file(path, 0),
        _ => Partition::open(path)?,
    };
    let mut out = Vec::new();
    let mut walk = p.walk(Policy::EVERY_ENTRY);
    while let Some(w) = walk.next_entry()? {
        let e = w.entry;
        let bytes = match e {
            crate::format::Entry::V2(b) => b.bytes().to_vec(),
            crate::format::Entry::Legacy(l) => l.bytes().to_vec(),
        };
        out.push(BatchCopy {
            file: w.segment.log.clone(),
            position: e.position(),
            base_offset: e.base_offset(),
            last_offset: w.next_offset - 1,
            crc_valid: e.crc_valid(),
            bytes,
        });
    }
    Ok(out)
}

/// How two copies compare.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Comparison {
    /// Batches identical in both, from the start.
    pub common_batches: u64,
    /// The last offset of the common prefix, if any.
    pub common_last_offset: Option<i64>,
    /// The first offset where they differ, and each side's batch there (None: that copy ended).
    pub divergence: Option<(i64, Option<BatchCopy>, Option<BatchCopy>)>,
    /// One past the last offset of each copy's last CRC-valid batch.
    pub end_a: i64,
    pub end_b: i64,
}

/// Compare copy `a` with copy `b`.
pub fn compare(a: &Path, b: &Path) -> Result<Comparison> {
    let (xa, xb) = (batches(a)?, batches(b)?);
    let end = |v: &[BatchCopy]| {
        v.iter()
            .filter(|c| c.crc_valid)
            .map(|c| c.last_offset.saturating_add(1))
            .max()
            .unwrap_or(0)
    };
    let mut common = 0usize;
    while let (Some(x), Some(y)) = (xa.get(common), xb.get(common)) {
        if x.bytes != y.bytes {
            break;
        }
        common += 1;
    }
    let divergence = match (xa.get(common), xb.get(common)) {
        (None, None) => None,
        (x, y) => {
            let offset = [x, y]
                .iter()
                .flatten()
                .map(|c| c.base_offset)
                .min()
                .unwrap_or(0);
            Some((offset, x.cloned(), y.cloned()))
        }
    };
    Ok(Comparison {
        common_batches: common as u64,
        common_last_offset: common
            .checked_sub(1)
            .and_then(|i| xa.get(i))
            .map(|c| c.last_offset),
        divergence,
        end_a: end(&xa),
        end_b: end(&xb),
    })
}
