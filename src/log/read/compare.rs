//! Comparing files byte for byte: a copy against a range of its source
//! (a repair's sidecar, a salvage's cut), two replicas' files.

use std::fs::File;
use std::path::Path;

use super::buffer::AlignedBuf;
use crate::error::{Error, Result};
use crate::log::files::open_regular;

/// How an existing file compares with bytes `from..to` of `src`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RangeCopy {
    /// It holds exactly those bytes.
    Equal,
    /// It holds the first `n` of them (a copy that was interrupted).
    Prefix(u64),
    /// It holds other bytes.
    Different,
}

/// Compare `copy` with bytes `from..to` of `src`, in fixed chunks.
pub fn compare_range(copy: &Path, src: &Path, from: u64, to: u64) -> Result<RangeCopy> {
    let a = open_regular(copy)?;
    let b = open_regular(src)?;
    let len = a.metadata().map_err(|e| Error::io(copy, "stat", e))?.len();
    let want = to.saturating_sub(from);
    if len > want {
        return Ok(RangeCopy::Different);
    }
    Ok(match mismatch((&a, copy, 0), (&b, src, from), len)? {
        Some(_) => RangeCopy::Different,
        None if len == want => RangeCopy::Equal,
        None => RangeCopy::Prefix(len),
    })
}

/// Where the regular files `a` and `b` first differ: the first byte that
/// is not the same in both, or the shorter one's length when it is a
/// prefix of the other; `None` when they are identical. Read in chunks.
pub fn first_difference(a: &Path, b: &Path) -> Result<Option<u64>> {
    let (fa, fb) = (open_regular(a)?, open_regular(b)?);
    let la = fa.metadata().map_err(|e| Error::io(a, "stat", e))?.len();
    let lb = fb.metadata().map_err(|e| Error::io(b, "stat", e))?.len();
    let common = la.min(lb);
    Ok(match mismatch((&fa, a, 0), (&fb, b, 0), common)? {
        Some(at) => Some(at),
        None if la == lb => None,
        None => Some(common),
    })
}

/// The first `i < len` at which byte `at_a + i` of file `a` differs from
/// byte `at_b + i` of file `b`, reading both in 1 MiB chunks.
fn mismatch(
    (a, a_path, at_a): (&File, &Path, u64),
    (b, b_path, at_b): (&File, &Path, u64),
    len: u64,
) -> Result<Option<u64>> {
    let chunk = len.min(1 << 20) as usize;
    let (mut x, mut y) = (AlignedBuf::zeroed(chunk), AlignedBuf::zeroed(chunk));
    let mut at = 0u64;
    while at < len {
        let n = ((len - at) as usize).min(chunk);
        let (xs, ys) = (
            x.get_mut(..n).unwrap_or(&mut []),
            y.get_mut(..n).unwrap_or(&mut []),
        );
        super::read_exact_at(a, xs, at_a + at).map_err(|e| Error::io(a_path, "read", e))?;
        super::read_exact_at(b, ys, at_b + at).map_err(|e| Error::io(b_path, "read", e))?;
        if let Some(i) = xs.iter().zip(ys.iter()).position(|(p, q)| p != q) {
            return Ok(Some(at + i as u64));
        }
        at += n as u64;
    }
    Ok(None)
}
