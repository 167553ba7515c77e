//! The order Kafka 3.9 and 4.0 list a transaction's partitions in
//! `--transaction-log-decoder`'s text: `TransactionLog.readTxnRecordValue`
//! adds each topic's partitions (an immutable `Set` per topic) to
//! `TransactionMetadata.topicPartitions`, a Scala 2.13
//! `mutable.HashSet[TopicPartition]`, whose iteration order `mkString`
//! prints.
//!
//! That set (`scala.collection.mutable.HashSet`, 2.13) is a table of
//! buckets, 16 to start with, load factor 0.75; an element's hash is
//! `TopicPartition.hashCode` improved as `h ^ (h >>> 16)`, its bucket the
//! hash's low bits, and each bucket a list kept in ascending (signed)
//! hash order, equal hashes in insertion order. `addAll` first grows the
//! table for the elements to add (`sizeHint`: the power of two above
//! `(n + 1) / 0.75`, at least 8); adding an element of a small set (up to
//! four elements: `Set1`..`Set4`) doubles the table first when the size
//! would reach the threshold, while the elements of a larger one
//! (`immutable.HashSet`) are added without that check. Iteration walks
//! the buckets in order, so the order is (bucket, hash, insertion) of the
//! final table.

/// The (topic, partition) pairs of `topics` in the order Scala's set
/// iterates them after adding each topic's partitions in turn.
pub fn topic_partition_order(topics: &[(String, Vec<i32>)]) -> Vec<(String, i32)> {
    let mut table = 16usize;
    // A topic's partitions form a small immutable set (`Set1` to `Set4`,
    // added one `add` at a time) or an `immutable.HashSet`.
    // (improved hash, insertion number, topic, partition)
    let mut set: Vec<(i32, usize, &str, i32)> = Vec::new();
    for (topic, ids) in topics {
        // `partitionIds.asScala.map(...).toSet`: each partition once.
        let mut distinct: Vec<i32> = Vec::new();
        for p in ids {
            if !distinct.contains(p) {
                distinct.push(*p);
            }
        }
        let target = table_size_for((((distinct.len() + 1) as f64) / 0.75) as usize);
        table = table.max(target);
        let small = distinct.len() <= 4;
        for p in distinct {
            if small && set.len() + 1 >= threshold(table) {
                table *= 2;
            }
            let hash = improve(topic_partition_hash(topic, p));
            if !set
                .iter()
                .any(|(_, _, t, q)| *t == topic.as_str() && *q == p)
            {
                let n = set.len();
                set.push((hash, n, topic, p));
            }
        }
    }
    let mask = table - 1;
    set.sort_by_key(|(h, n, _, _)| ((*h as u32 as usize) & mask, *h, *n));
    set.into_iter()
        .map(|(_, _, t, p)| (t.to_string(), p))
        .collect()
}

/// `HashSet.tableSizeFor`: the power of two above `capacity - 1`, at least 8.
fn table_size_for(capacity: usize) -> usize {
    let n = capacity.saturating_sub(1).max(4);
    let highest = 1usize << (usize::BITS - 1 - n.leading_zeros());
    (highest * 2).min(1 << 30)
}

/// `HashSet.newThreshold`: the size at which the table doubles.
fn threshold(table: usize) -> usize {
    (table as f64 * 0.75) as usize
}

/// `HashSet.improveHash`.
fn improve(h: i32) -> i32 {
    h ^ ((h as u32) >> 16) as i32
}

/// `TopicPartition.hashCode`: `31 * (31 + partition) + topic.hashCode()`.
fn topic_partition_hash(topic: &str, partition: i32) -> i32 {
    31i32
        .wrapping_add(partition)
        .wrapping_mul(31)
        .wrapping_add(java_string_hash(topic))
}

/// `String.hashCode`: `s[0]*31^(n-1) + … + s[n-1]` over UTF-16 units.
fn java_string_hash(s: &str) -> i32 {
    s.encode_utf16()
        .fold(0i32, |h, u| h.wrapping_mul(31).wrapping_add(i32::from(u)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn java_hashes() {
        // "hello".hashCode() and new TopicPartition("t", 0).hashCode() in Java.
        assert_eq!(java_string_hash("hello"), 99162322);
        assert_eq!(topic_partition_hash("t", 0), 31 * 31 + 116);
    }

    #[test]
    fn table_sizes() {
        assert_eq!(table_size_for(2), 8);
        assert_eq!(table_size_for(16), 16);
        assert_eq!(table_size_for(17), 32);
        assert_eq!(table_size_for(33), 64);
    }

    #[test]
    fn one_topic_in_bucket_order() {
        // Same topic: hash grows with the partition, 31 per step, so
        // buckets (hash & 15) decide the order.
        let order = topic_partition_order(&[("t".into(), vec![0, 1, 2])]);
        let h = |p: i32| (improve(topic_partition_hash("t", p)) & 15, p);
        let mut want: Vec<(i32, i32)> = (0..3).map(h).collect();
        want.sort();
        let got: Vec<i32> = order.iter().map(|(_, p)| *p).collect();
        assert_eq!(got, want.iter().map(|(_, p)| *p).collect::<Vec<_>>());
    }
}
