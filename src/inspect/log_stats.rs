//! Log statistics: what Kafka's proposed (never shipped) log statistics
//! tool would have reported, per partition and over all of them.
//!
//! - batches, records and bytes; records per batch and batch size in bytes
//!   (min, median, max);
//! - the codec mix: per codec the batches, the stored (compressed) bytes of
//!   their records sections and the bytes those decompress to;
//! - the range of record timestamps (-1, "no timestamp", is ignored);
//! - producers: batches without a producer id ("plain"), and distinct
//!   producer ids split into idempotent (never transactional) and
//!   transactional;
//! - transactions committed, aborted and open, counted by
//!   [`crate::txn::analyze`] (one definition of a
//!   transaction for every command), and control batches;
//! - legacy (magic 0/1) entries and the messages they hold, counted apart
//!   from the v2 figures;
//! - what was skipped: batches whose CRC fails, batches whose records do
//!   not decode, torn and unframeable tails.
//!
//! The statistics of a partition come from one streaming pass over its
//! segments (plus the producer-state pass of `txn::analyze` for the
//! transaction counts): memory is the segment reader's buffer (bounded by
//! the largest batch), one decompression buffer, and small accumulators.
//! The two distributions are exact counts per distinct value in a
//! `BTreeMap<u32, u64>`, so they are deterministic and bounded by the number
//! of distinct values (records per batch rarely has more than a few hundred;
//! batch sizes at most one per batch), and the producer table has one entry
//! per distinct producer id.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use crate::error::{DecodeErrorKind, Error, Result};
use crate::format::compression::{self, Compression};
use crate::format::{BatchView, DecodeLimits, Entry};
use crate::log::walk::Step;
use crate::log::{
    classify, parse_partition_dir, parse_segment_name, DataDir, Partition, PartitionState,
    PathKind, Policy, SegmentFiles,
};
use crate::txn::{self, TxnOptions};

/// Every codec, in the order of their ids (the order reports use).
pub const CODECS: [Compression; 5] = [
    Compression::None,
    Compression::Gzip,
    Compression::Snappy,
    Compression::Lz4,
    Compression::Zstd,
];

/// An exact distribution of small non-negative values: how many times each
/// distinct value was seen.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Distribution {
    counts: BTreeMap<u32, u64>,
}

impl Distribution {
    /// Count one more `value`.
    pub fn add(&mut self, value: u32) {
        *self.counts.entry(value).or_insert(0) += 1;
    }

    /// Add every value of `other`.
    pub fn merge(&mut self, other: &Distribution) {
        for (&v, &n) in &other.counts {
            *self.counts.entry(v).or_insert(0) += n;
        }
    }

    /// How many values were counted.
    pub fn count(&self) -> u64 {
        self.counts.values().sum()
    }

    /// The smallest value.
    pub fn min(&self) -> Option<u32> {
        self.counts.keys().next().copied()
    }

    /// The largest value.
    pub fn max(&self) -> Option<u32> {
        self.counts.keys().next_back().copied()
    }

    /// The lower median: the value at index `(n - 1) / 2` of the sorted
    /// values (for an even count the smaller of the two middle values, so
    /// the median is always a value that occurred).
    pub fn median(&self) -> Option<u32> {
        let n = self.count();
        if n == 0 {
            return None;
        }
        let target = (n - 1) / 2;
        let mut seen = 0u64;
        for (&v, &c) in &self.counts {
            seen += c;
            if seen > target {
                return Some(v);
            }
        }
        None
    }
}

/// The batches of one codec.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CodecStats {
    pub batches: u64,
    /// Bytes of the records sections as stored (compressed).
    pub stored_bytes: u64,
    /// Bytes the records sections decompress to (= stored for `none`).
    pub uncompressed_bytes: u64,
}

impl CodecStats {
    /// uncompressed / stored, or `None` when nothing is stored.
    pub fn ratio(&self) -> Option<f64> {
        (self.stored_bytes > 0).then(|| self.uncompressed_bytes as f64 / self.stored_bytes as f64)
    }

    fn merge(&mut self, other: &CodecStats) {
        self.batches += other.batches;
        self.stored_bytes += other.stored_bytes;
        self.uncompressed_bytes += other.uncompressed_bytes;
    }
}

/// Transaction counts, as [`txn::analyze`] finds them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TxnCounts {
    pub committed: u64,
    pub aborted: u64,
    /// Transactions with data but no COMMIT or ABORT marker at the end of the log.
    pub open: u64,
}

/// The statistics of one partition (or of several, merged).
///
/// The v2 figures (batches, records, bytes, the distributions, codecs,
/// timestamps, producers, control batches) count only batches whose CRC
/// matches and whose records decode; the others are counted in
/// `corrupt_batches` and `undecodable_batches` and nothing else.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Stats {
    /// Segment files read.
    pub segments: u64,
    pub batches: u64,
    pub records: u64,
    /// Bytes on disk of those batches, headers included.
    pub bytes: u64,
    pub records_per_batch: Distribution,
    pub batch_bytes: Distribution,
    /// Per codec, indexed by codec id (see [`CODECS`]).
    pub codecs: [CodecStats; 5],
    /// The smallest record timestamp other than -1.
    pub min_timestamp: Option<i64>,
    /// The largest record or batch max timestamp other than -1.
    pub max_timestamp: Option<i64>,
    /// Batches with no producer id (-1).
    pub plain_batches: u64,
    /// Every producer id seen, and whether it wrote a transactional batch.
    pub producers: BTreeMap<i64, bool>,
    /// Batches with the control bit (transaction markers and KRaft records).
    pub control_batches: u64,
    pub transactions: TxnCounts,
    /// Legacy (magic 0/1) entries whose CRC matches and whose messages
    /// decode, the messages they hold (a compressed wrapper holds several),
    /// and their bytes on disk.
    pub legacy_entries: u64,
    pub legacy_records: u64,
    pub legacy_bytes: u64,
    /// Entries (v2 or legacy) whose CRC does not match: skipped.
    pub corrupt_batches: u64,
    /// Entries whose CRC matches but whose records do not decode (unknown
    /// codec, a stream that does not decompress, bad records): skipped.
    pub undecodable_batches: u64,
    /// Segments whose last entry is cut short.
    pub torn_tails: u64,
    /// Segments with bytes that cannot be framed (bad size or magic, trailing zeros).
    pub corrupt_tails: u64,
}

impl Stats {
    /// The figures of one codec.
    pub fn codec(&self, codec: Compression) -> CodecStats {
        self.codecs
            .get(usize::from(codec.id()))
            .copied()
            .unwrap_or_default()
    }

    /// Distinct producer ids that never wrote a transactional batch.
    pub fn idempotent_producers(&self) -> u64 {
        self.producers.values().filter(|&&t| !t).count() as u64
    }

    /// Distinct producer ids that wrote a transactional batch.
    pub fn transactional_producers(&self) -> u64 {
        self.producers.values().filter(|&&t| t).count() as u64
    }

    /// Damage seen: corrupt and undecodable batches, torn and corrupt tails.
    pub fn problems(&self) -> u64 {
        self.corrupt_batches + self.undecodable_batches + self.torn_tails + self.corrupt_tails
    }

    /// What was skipped, each kind of [`problems`](Self::problems) seen
    /// at least once: its count, then its name for one and for many.
    pub fn skipped(&self) -> Vec<(u64, &'static str, &'static str)> {
        [
            (self.corrupt_batches, "corrupt batch", "corrupt batches"),
            (
                self.undecodable_batches,
                "undecodable batch",
                "undecodable batches",
            ),
            (self.torn_tails, "torn tail", "torn tails"),
            (self.corrupt_tails, "corrupt tail", "corrupt tails"),
        ]
        .into_iter()
        .filter(|&(n, _, _)| n > 0)
        .collect()
    }

    /// The statistics of `parts` together: producers are distinct over
    /// all of them ([`merge`](Self::merge)).
    pub fn total<'a>(parts: impl IntoIterator<Item = &'a Stats>) -> Stats {
        let mut total = Stats::default();
        for s in parts {
            total.merge(s);
        }
        total
    }

    /// Add `other` into `self`. Counts add up, distributions and codecs
    /// merge, timestamps widen, and producers are the union of the ids (a
    /// producer id seen in two partitions is one producer, transactional
    /// when it was transactional in either).
    pub fn merge(&mut self, other: &Stats) {
        self.segments += other.segments;
        self.batches += other.batches;
        self.records += other.records;
        self.bytes += other.bytes;
        self.records_per_batch.merge(&other.records_per_batch);
        self.batch_bytes.merge(&other.batch_bytes);
        for (mine, theirs) in self.codecs.iter_mut().zip(&other.codecs) {
            mine.merge(theirs);
        }
        self.min_timestamp = min_opt(self.min_timestamp, other.min_timestamp);
        self.max_timestamp = max_opt(self.max_timestamp, other.max_timestamp);
        self.plain_batches += other.plain_batches;
        for (&pid, &transactional) in &other.producers {
            *self.producers.entry(pid).or_insert(false) |= transactional;
        }
        self.control_batches += other.control_batches;
        self.transactions.committed += other.transactions.committed;
        self.transactions.aborted += other.transactions.aborted;
        self.transactions.open += other.transactions.open;
        self.legacy_entries += other.legacy_entries;
        self.legacy_records += other.legacy_records;
        self.legacy_bytes += other.legacy_bytes;
        self.corrupt_batches += other.corrupt_batches;
        self.undecodable_batches += other.undecodable_batches;
        self.torn_tails += other.torn_tails;
        self.corrupt_tails += other.corrupt_tails;
    }

    /// Count one entry of a segment.
    fn add_entry(&mut self, entry: &Entry<'_>, scratch: &mut Vec<u8>, limits: DecodeLimits) {
        match entry {
            Entry::Legacy(m) => {
                if !m.crc_valid() {
                    self.corrupt_batches += 1;
                    return;
                }
                // A compressed wrapper holds several messages.
                match m.messages(scratch, limits) {
                    Ok(messages) => {
                        self.legacy_entries += 1;
                        self.legacy_records += messages.len() as u64;
                        self.legacy_bytes += entry.size();
                    }
                    Err(_) => self.undecodable_batches += 1,
                }
            }
            Entry::V2(b) => {
                if !b.crc_valid() {
                    self.corrupt_batches += 1;
                    return;
                }
                match measure(b, scratch, limits) {
                    Some(m) => self.add_batch(b, &m),
                    None => self.undecodable_batches += 1,
                }
            }
        }
    }

    fn add_batch(&mut self, b: &BatchView<'_>, m: &Measured) {
        let h = &b.header;
        let size = b.bytes().len() as u64;
        self.batches += 1;
        self.records += m.records;
        self.bytes += size;
        self.records_per_batch
            .add(u32::try_from(m.records).unwrap_or(u32::MAX));
        self.batch_bytes
            .add(u32::try_from(size).unwrap_or(u32::MAX));
        if let Some(c) = self.codecs.get_mut(usize::from(m.codec.id())) {
            c.batches += 1;
            c.stored_bytes += m.stored;
            c.uncompressed_bytes += m.uncompressed;
        }
        self.min_timestamp = min_opt(self.min_timestamp, m.min_timestamp);
        let batch_max = (h.max_timestamp != -1).then_some(h.max_timestamp);
        self.max_timestamp = max_opt(max_opt(self.max_timestamp, m.max_timestamp), batch_max);
        if h.producer_id < 0 {
            self.plain_batches += 1;
        } else {
            *self.producers.entry(h.producer_id).or_insert(false) |= h.is_transactional();
        }
        if h.is_control() {
            self.control_batches += 1;
        }
    }

    /// Count one step of a walk over every entry: segments, entries, and
    /// how damage breaks the framing (a torn tail, or corruption).
    fn add_step(&mut self, step: Step<'_, '_>, scratch: &mut Vec<u8>, limits: DecodeLimits) {
        match step {
            Step::SegmentStart { .. } => self.segments += 1,
            Step::Entry(w) => self.add_entry(&w.entry, scratch, limits),
            Step::Damage(d) if !d.framing => self.corrupt_batches += 1,
            Step::Damage(d) => match d.error.kind {
                DecodeErrorKind::PastEndOfFile { .. } => self.torn_tails += 1,
                _ => self.corrupt_tails += 1,
            },
            Step::SegmentEnd { .. } => {}
        }
    }
}

fn min_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.min(y)),
        (x, y) => x.or(y),
    }
}

fn max_opt(a: Option<i64>, b: Option<i64>) -> Option<i64> {
    match (a, b) {
        (Some(x), Some(y)) => Some(x.max(y)),
        (x, y) => x.or(y),
    }
}

/// What one batch's records section holds.
struct Measured {
    codec: Compression,
    records: u64,
    stored: u64,
    uncompressed: u64,
    min_timestamp: Option<i64>,
    max_timestamp: Option<i64>,
}

/// Decode every record of `b` (decompressing into `scratch`), or `None`
/// when the codec is unknown, the section does not decompress within the
/// limit, or a record does not decode.
fn measure(b: &BatchView<'_>, scratch: &mut Vec<u8>, limits: DecodeLimits) -> Option<Measured> {
    let codec = b.header.compression()?;
    let mut records = 0u64;
    let (mut min_ts, mut max_ts) = (None, None);
    for r in b.records(scratch, limits).ok()? {
        let r = r.ok()?;
        records += 1;
        if r.timestamp != -1 {
            min_ts = min_opt(min_ts, Some(r.timestamp));
            max_ts = max_opt(max_ts, Some(r.timestamp));
        }
    }
    let section = b.records_section();
    let stored = section.len() as u64;
    let uncompressed = match codec {
        Compression::None => stored,
        // records() leaves an empty batch's section alone: measure it here.
        _ if b.header.records_count == 0 => {
            if section.is_empty() {
                0
            } else {
                compression::decompress(codec, section, scratch, limits.max_decompressed).ok()?;
                scratch.len() as u64
            }
        }
        _ => scratch.len() as u64,
    };
    Some(Measured {
        codec,
        records,
        stored,
        uncompressed,
        min_timestamp: min_ts,
        max_timestamp: max_ts,
    })
}

/// Options of the pass.
#[derive(Debug, Clone, Copy, Default)]
pub struct StatsOptions {
    pub limits: DecodeLimits,
    /// Where to count the bytes of log read, for a progress display.
    pub meter: Option<&'static crate::log::walk::Meter>,
}

/// The statistics of one partition folder, or of one segment file.
#[derive(Debug, Clone)]
pub struct PartitionStats {
    /// `<topic>-<partition>`, or the file's path for a segment file outside
    /// a partition folder.
    pub name: String,
    /// Topic and partition, from the folder name (of the file's folder for
    /// a segment file), when it is a partition folder name.
    pub topic: Option<String>,
    pub partition: Option<i32>,
    /// The partition folder or the segment file.
    pub path: PathBuf,
    pub stats: Stats,
}

/// The statistics of `p`: one pass over its segments, then the
/// producer-state pass of [`txn::analyze`] for the transaction counts.
pub fn partition_stats(p: &Partition, opts: &StatsOptions) -> Result<Stats> {
    let mut stats = Stats::default();
    let mut scratch = Vec::new();
    let mut walk = p.walk(Policy {
        meter: opts.meter,
        ..Policy::EVERY_ENTRY
    });
    while let Some(step) = walk.next_step()? {
        stats.add_step(step, &mut scratch, opts.limits);
    }
    let state = txn::analyze(
        p,
        &TxnOptions {
            limits: opts.limits,
            ..TxnOptions::default()
        },
    )?;
    stats.transactions = TxnCounts {
        committed: state.producers.values().map(|s| s.committed).sum(),
        aborted: state.producers.values().map(|s| s.aborted).sum(),
        open: state.open_transactions().len() as u64,
    };
    Ok(stats)
}

/// The statistics of `path`: a data directory (each live partition, in
/// order), a partition folder, or one segment file.
pub fn stats_path(path: &Path, opts: &StatsOptions) -> Result<Vec<PartitionStats>> {
    match classify(path)? {
        PathKind::DataDir => DataDir::open(path)?
            .live()
            .map(|p| one_partition(p, opts))
            .collect(),
        PathKind::Partition => Ok(vec![one_partition(&Partition::open(path)?, opts)?]),
        PathKind::File => {
            let file_name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
            let named = parse_segment_name(file_name);
            if let Some((_, suffix)) = named {
                if suffix != "log" {
                    return Err(Error::layout(
                        path,
                        format!("is a .{suffix} file, not a log segment (.log)"),
                    ));
                }
            }
            let dir = path.parent().unwrap_or(Path::new("")).to_path_buf();
            let folder = dir
                .file_name()
                .and_then(|n| n.to_str())
                .and_then(parse_partition_dir);
            // A partition of one segment, so txn::analyze can read it too.
            let p = Partition {
                dir,
                topic: folder.as_ref().map_or_else(String::new, |f| f.0.clone()),
                partition: folder.as_ref().map_or(-1, |f| f.1),
                state: PartitionState::Live,
                segments: vec![SegmentFiles {
                    base_offset: named.map_or(0, |n| n.0),
                    log: path.to_path_buf(),
                    index: None,
                    timeindex: None,
                }],
                unreadable: Vec::new(),
            };
            Ok(vec![PartitionStats {
                name: path.display().to_string(),
                topic: folder.as_ref().map(|f| f.0.clone()),
                partition: folder.map(|f| f.1),
                path: path.to_path_buf(),
                stats: partition_stats(&p, opts)?,
            }])
        }
    }
}

fn one_partition(p: &Partition, opts: &StatsOptions) -> Result<PartitionStats> {
    Ok(PartitionStats {
        name: p.name(),
        topic: Some(p.topic.clone()),
        partition: Some(p.partition),
        path: p.dir.clone(),
        stats: partition_stats(p, opts)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lower_median_min_max() {
        let mut d = Distribution::default();
        assert_eq!((d.min(), d.median(), d.max()), (None, None, None));
        for v in [5, 1, 5, 9] {
            d.add(v);
        }
        // Sorted 1 5 5 9: index (4 - 1) / 2 = 1.
        assert_eq!((d.min(), d.median(), d.max()), (Some(1), Some(5), Some(9)));
        let mut e = Distribution::default();
        for v in [1, 1, 1] {
            e.add(v);
        }
        d.merge(&e);
        // Sorted 1 1 1 1 5 5 9: index 3.
        assert_eq!((d.count(), d.median()), (7, Some(1)));
        let mut two = Distribution::default();
        two.add(2);
        two.add(8);
        assert_eq!(two.median(), Some(2), "the lower of the two middle values");
    }

    #[test]
    fn merge_unions_producers_and_widens_timestamps() {
        let mut a = Stats {
            min_timestamp: Some(10),
            max_timestamp: Some(20),
            ..Stats::default()
        };
        a.producers.insert(1, false);
        a.producers.insert(2, false);
        let mut b = Stats {
            min_timestamp: Some(5),
            max_timestamp: None,
            ..Stats::default()
        };
        b.producers.insert(2, true);
        b.producers.insert(3, false);
        a.merge(&b);
        assert_eq!((a.min_timestamp, a.max_timestamp), (Some(5), Some(20)));
        assert_eq!(
            (a.idempotent_producers(), a.transactional_producers()),
            (2, 1)
        );
    }

    #[test]
    fn ratio_is_none_without_stored_bytes() {
        assert_eq!(CodecStats::default().ratio(), None);
        let c = CodecStats {
            batches: 1,
            stored_bytes: 50,
            uncompressed_bytes: 200,
        };
        assert_eq!(c.ratio(), Some(4.0));
    }
}
