//! What kafka-dump-log prints on stderr once every file is dumped
//! (`DumpLogSegments.main` after its loop, `TimeIndexDumpErrors.printErrors`):
//! the offset indexes' mismatches, the time indexes' three kinds of
//! disagreement, and the logs' non-consecutive offsets, each kind grouped
//! by file in the order of a `java.util.HashMap` keyed by the file's
//! absolute path ([`java_hash_map_order`]).

use std::collections::BTreeMap;
use std::io::Write;

use kaen_log::inspect::dump_log::Disagreement;

use super::super::table::escape_cell;
use super::Tool;

/// One kind of line, by file (absolute path), in the order the files came.
type ByFile<T> = Vec<(String, T)>;

/// Everything to print after the run.
#[derive(Debug, Default)]
pub struct AfterRun {
    /// The release whose tool's words and order these follow.
    tool: Tool,
    /// (index offset, the last offset of the batch at its position), as
    /// found.
    index: ByFile<Vec<(i64, i64)>>,
    time_mismatch: ByFile<Vec<(i64, i64)>>,
    out_of_order: ByFile<Vec<(i64, i64)>>,
    not_found: ByFile<Vec<(i64, i64)>>,
    /// (an offset, the offset of the record after it), where not the next,
    /// as found.
    non_consecutive: ByFile<Vec<(i64, i64)>>,
}

impl AfterRun {
    /// Nothing yet, for `tool`'s words.
    pub fn new(tool: Tool) -> Self {
        AfterRun {
            tool,
            ..AfterRun::default()
        }
    }
}

fn entry<'a, T: Default>(list: &'a mut ByFile<T>, file: &str) -> &'a mut T {
    let at = match list.iter().position(|(f, _)| f == file) {
        Some(at) => at,
        None => {
            list.push((file.to_string(), T::default()));
            list.len() - 1
        }
    };
    &mut list[at].1
}

impl AfterRun {
    /// What an index's dump found (`file`: its absolute path).
    pub fn index(&mut self, file: &str, found: &[Disagreement]) {
        for d in found {
            match *d {
                Disagreement::Offset {
                    index_offset,
                    log_offset,
                } => entry(&mut self.index, file).push((index_offset, log_offset)),
                Disagreement::Timestamp {
                    index_timestamp,
                    log_timestamp,
                } => entry(&mut self.time_mismatch, file).push((index_timestamp, log_timestamp)),
                Disagreement::OutOfOrder {
                    index_timestamp,
                    previous,
                } => entry(&mut self.out_of_order, file).push((index_timestamp, previous)),
                Disagreement::NotFound {
                    index_offset,
                    log_offset,
                } => entry(&mut self.not_found, file).push((index_offset, log_offset)),
            }
        }
    }

    /// A log's record offsets that do not follow the one before.
    pub fn non_consecutive(&mut self, file: &str, pairs: Vec<(i64, i64)>) {
        if !pairs.is_empty() {
            entry(&mut self.non_consecutive, file).extend(pairs);
        }
    }

    /// Whether there is nothing to print.
    pub fn is_empty(&self) -> bool {
        self.index.is_empty()
            && self.time_mismatch.is_empty()
            && self.out_of_order.is_empty()
            && self.not_found.is_empty()
            && self.non_consecutive.is_empty()
    }

    /// A list of pairs as the tool keeps it: the Java tool in a `TreeMap`
    /// (one per first value, the last put; `descending` for the index
    /// mismatches' `reverseOrder`), the Scala tool in a `List` it prepends
    /// to (the last found first).
    fn kept(&self, pairs: &[(i64, i64)], descending: bool) -> Vec<(i64, i64)> {
        if self.tool.scala() {
            return pairs.iter().rev().copied().collect();
        }
        let map: BTreeMap<i64, i64> = pairs.iter().copied().collect();
        if descending {
            map.into_iter().rev().collect()
        } else {
            map.into_iter().collect()
        }
    }

    /// The lines, in kafka-dump-log's words and order.
    pub fn write(&self, w: &mut dyn Write) -> std::io::Result<()> {
        for (file, pairs) in in_hash_order(&self.index) {
            writeln!(w, "Mismatches in :{}", escape_cell(file))?;
            for (index, log) in self.kept(pairs, true) {
                writeln!(w, "  Index offset: {index}, log offset: {log}")?;
            }
        }
        for (file, list) in in_hash_order(&self.time_mismatch) {
            writeln!(w, "Found timestamp mismatch in :{}", escape_cell(file))?;
            for (index, log) in list {
                writeln!(w, "  Index timestamp: {index}, log timestamp: {log}")?;
            }
        }
        for (file, list) in in_hash_order(&self.out_of_order) {
            writeln!(w, "Found out of order timestamp in :{}", escape_cell(file))?;
            for (index, previous) in list {
                writeln!(
                    w,
                    "  Index timestamp: {index}, Previously indexed timestamp: {previous}"
                )?;
            }
        }
        for (file, list) in in_hash_order(&self.not_found) {
            if self.tool.scala() {
                writeln!(w, "The following indexed offsets are not found in the log.")?;
            } else {
                writeln!(
                    w,
                    "The following indexed offsets are not found in :{}",
                    escape_cell(file)
                )?;
            }
            for (index, log) in list {
                writeln!(w, "Indexed offset: {index}, found log offset: {log}")?;
            }
        }
        for (file, pairs) in in_hash_order(&self.non_consecutive) {
            writeln!(w, "Non-consecutive offsets in {}", escape_cell(file))?;
            for (offset, next) in self.kept(pairs, false) {
                writeln!(w, "  {offset} is followed by {next}")?;
            }
        }
        Ok(())
    }
}

fn in_hash_order<T>(list: &ByFile<T>) -> impl Iterator<Item = &(String, T)> {
    let keys: Vec<&str> = list.iter().map(|(k, _)| k.as_str()).collect();
    java_hash_map_order(&keys)
        .into_iter()
        .map(move |i| &list[i])
}

/// The order a `java.util.HashMap<String, _>` iterates keys put in this
/// order (indexes into `keys`): by bucket, `(h ^ h >>> 16) & (capacity -
/// 1)` of `String.hashCode`, then in insertion order within a bucket
/// (a resize keeps it); the capacity starts at 16 and doubles whenever the
/// size passes three quarters of it. (Buckets of 8 or more keys, which
/// Java turns into trees, are not modelled: file names do not collide so.)
pub fn java_hash_map_order(keys: &[&str]) -> Vec<usize> {
    let mut capacity = 16usize;
    while keys.len() > capacity * 3 / 4 {
        capacity *= 2;
    }
    let bucket = |k: &str| {
        let h = k
            .encode_utf16()
            .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)));
        let spread = (h ^ ((h as u32) >> 16) as i32) as u32;
        spread as usize & (capacity - 1)
    };
    let mut order: Vec<usize> = (0..keys.len()).collect();
    order.sort_by_key(|&i| (bucket(keys[i]), i));
    order
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hash_map_iteration_order() {
        // "Aa" and "BB" share a hashCode (2112), so they stay in insertion
        // order; "a" (97) falls in bucket 1, "b" (98) in 2, "c" (99) in 3.
        assert_eq!(java_hash_map_order(&["c", "a", "b"]), vec![1, 2, 0]);
        assert_eq!(java_hash_map_order(&["BB", "Aa"]), vec![0, 1]);
        // 2112 & 15 = 0: before "a".
        assert_eq!(java_hash_map_order(&["a", "Aa"]), vec![1, 0]);
    }

    #[test]
    fn kafka_words() {
        let mut after = AfterRun::new(Tool(kaen_log::format::schema::Release::R4_4));
        after.index(
            "/d/00.index",
            &[
                Disagreement::Offset {
                    index_offset: 5,
                    log_offset: 7,
                },
                Disagreement::Offset {
                    index_offset: 9,
                    log_offset: 12,
                },
            ],
        );
        after.non_consecutive("/d/00.log", vec![(-1, 108)]);
        let mut out = Vec::new();
        after.write(&mut out).unwrap();
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "Mismatches in :/d/00.index\n  Index offset: 9, log offset: 12\n  \
             Index offset: 5, log offset: 7\nNon-consecutive offsets in /d/00.log\n  \
             -1 is followed by 108\n"
        );
    }
}
