//! `klog stats`'s document: the statistics per partition and in total, as tables and JSON.

use super::*;

/// Least, lower median and greatest (null when there is nothing).
#[derive(Serialize, JsonSchema)]
struct DistributionOut {
    min: Option<u64>,
    median: Option<u64>,
    max: Option<u64>,
}

impl DistributionOut {
    fn of(d: &Distribution) -> Self {
        DistributionOut {
            min: d.min().map(u64::from),
            median: d.median().map(u64::from),
            max: d.max().map(u64::from),
        }
    }
}

/// One codec's batches and bytes.
#[derive(Serialize, JsonSchema)]
struct CodecOut {
    codec: &'static str,
    batches: u64,
    stored_bytes: u64,
    uncompressed_bytes: u64,
    /// uncompressed / stored, rounded to 3 decimals (null when nothing is stored).
    ratio: Option<f64>,
}

#[derive(Serialize, JsonSchema)]
struct TimestampsOut {
    min: Option<i64>,
    max: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
struct ProducersOut {
    plain_batches: u64,
    idempotent: u64,
    transactional: u64,
}

#[derive(Serialize, JsonSchema)]
struct TransactionsOut {
    committed: u64,
    aborted: u64,
    open: u64,
    control_batches: u64,
}

#[derive(Serialize, JsonSchema)]
struct LegacyOut {
    entries: u64,
    records: u64,
    bytes: u64,
}

/// The statistics of one partition or of all.
#[derive(Serialize, JsonSchema)]
struct StatsOut {
    segments: u64,
    batches: u64,
    records: u64,
    bytes: u64,
    records_per_batch: DistributionOut,
    batch_bytes: DistributionOut,
    /// Every codec, used or not, in attribute order.
    codecs: Vec<CodecOut>,
    timestamps: TimestampsOut,
    producers: ProducersOut,
    transactions: TransactionsOut,
    legacy: LegacyOut,
    corrupt_batches: u64,
    undecodable_batches: u64,
    torn_tails: u64,
    corrupt_tails: u64,
}

impl StatsOut {
    fn of(s: &Stats) -> Self {
        let codecs = CODECS
            .iter()
            .map(|&codec| {
                let c = s.codec(codec);
                codec_out(codec.name(), &c)
            })
            .collect();
        StatsOut {
            segments: s.segments,
            batches: s.batches,
            records: s.records,
            bytes: s.bytes,
            records_per_batch: DistributionOut::of(&s.records_per_batch),
            batch_bytes: DistributionOut::of(&s.batch_bytes),
            codecs,
            timestamps: TimestampsOut {
                min: s.min_timestamp,
                max: s.max_timestamp,
            },
            producers: ProducersOut {
                plain_batches: s.plain_batches,
                idempotent: s.idempotent_producers(),
                transactional: s.transactional_producers(),
            },
            transactions: TransactionsOut {
                committed: s.transactions.committed,
                aborted: s.transactions.aborted,
                open: s.transactions.open,
                control_batches: s.control_batches,
            },
            legacy: LegacyOut {
                entries: s.legacy_entries,
                records: s.legacy_records,
                bytes: s.legacy_bytes,
            },
            corrupt_batches: s.corrupt_batches,
            undecodable_batches: s.undecodable_batches,
            torn_tails: s.torn_tails,
            corrupt_tails: s.corrupt_tails,
        }
    }
}

fn codec_out(codec: &'static str, c: &CodecStats) -> CodecOut {
    CodecOut {
        codec,
        batches: c.batches,
        stored_bytes: c.stored_bytes,
        uncompressed_bytes: c.uncompressed_bytes,
        ratio: c.ratio().map(|r| (r * 1000.0).round() / 1000.0),
    }
}

#[derive(Serialize, JsonSchema)]
struct PartitionOut {
    /// `topic-partition`, or the file's name for a lone segment.
    name: String,
    topic: Option<String>,
    partition: Option<i32>,
    path: String,
    /// Only when the path is not UTF-8: its exact bytes, in base64.
    #[serde(skip_serializing_if = "Option::is_none")]
    path_base64: Option<String>,
    #[serde(flatten)]
    stats: StatsOut,
}

#[derive(Serialize, JsonSchema)]
struct TotalOut {
    partitions: u64,
    #[serde(flatten)]
    stats: StatsOut,
}

/// `klog stats`'s document.
#[derive(Serialize, JsonSchema)]
pub struct StatsReport {
    partitions: Vec<PartitionOut>,
    total: TotalOut,
    #[serde(skip)]
    time_format: crate::report::TimeFormat,
    #[serde(skip)]
    csv_table: StatsTable,
}

/// A row of `--table codecs`: the partition's name, then the codec's fields.
#[derive(Serialize, JsonSchema)]
struct CodecCsv<'a> {
    name: &'a str,
    #[serde(flatten)]
    codec: &'a CodecOut,
}

const TOTAL: &str = "(total)";

#[derive(Serialize, JsonSchema)]
struct OverviewRow<'a> {
    name: &'a str,
    segments: u64,
    batches: u64,
    records: u64,
    bytes: u64,
    min_timestamp: Option<i64>,
    max_timestamp: Option<i64>,
}

#[derive(Serialize, JsonSchema)]
struct SizesRow<'a> {
    name: &'a str,
    min_records: Option<u64>,
    median_records: Option<u64>,
    max_records: Option<u64>,
    min_batch_bytes: Option<u64>,
    median_batch_bytes: Option<u64>,
    max_batch_bytes: Option<u64>,
}

#[derive(Serialize, JsonSchema)]
struct CodecRow<'a> {
    name: &'a str,
    codec: &'a str,
    batches: u64,
    stored_bytes: u64,
    uncompressed_bytes: u64,
    /// Two decimals in text.
    ratio: Option<String>,
}

#[derive(Serialize, JsonSchema)]
struct ProducersRow<'a> {
    name: &'a str,
    plain_batches: u64,
    idempotent: u64,
    transactional: u64,
    committed: u64,
    aborted: u64,
    open: u64,
    control_batches: u64,
}

#[derive(Serialize, JsonSchema)]
struct SkippedRow<'a> {
    name: &'a str,
    legacy_entries: u64,
    legacy_records: u64,
    legacy_bytes: u64,
    corrupt_batches: u64,
    undecodable_batches: u64,
    torn_tails: u64,
    corrupt_tails: u64,
}

impl Report for StatsReport {
    const COMMAND: &'static str = "stats";

    /// The JSON document's partitions, one row each (the total is not a
    /// row: it is the sum), or with `--table codecs` the codecs each used.
    fn csv_table(&self) -> Option<Table> {
        Some(match self.csv_table {
            StatsTable::Partitions => Table::flat(&self.partitions),
            StatsTable::Codecs => {
                let rows: Vec<CodecCsv> = self
                    .partitions
                    .iter()
                    .flat_map(|p| {
                        p.stats
                            .codecs
                            .iter()
                            .filter(|c| c.batches > 0)
                            .map(|codec| CodecCsv {
                                name: &p.name,
                                codec,
                            })
                    })
                    .collect();
                Table::flat(&rows)
            }
        })
    }

    /// Five tables, each a row per partition and a total row: sizes and
    /// timestamps, distributions, codecs (only those used), producers and
    /// transactions, and what was skipped.
    fn tables(&self) -> Vec<Table> {
        let all: Vec<(&str, &StatsOut)> = self
            .partitions
            .iter()
            .map(|p| (p.name.as_str(), &p.stats))
            .chain([(TOTAL, &self.total.stats)])
            .collect();
        let overview: Vec<OverviewRow> = all
            .iter()
            .map(|&(name, s)| OverviewRow {
                name,
                segments: s.segments,
                batches: s.batches,
                records: s.records,
                bytes: s.bytes,
                min_timestamp: s.timestamps.min,
                max_timestamp: s.timestamps.max,
            })
            .collect();
        let sizes: Vec<SizesRow> = all
            .iter()
            .map(|&(name, s)| SizesRow {
                name,
                min_records: s.records_per_batch.min,
                median_records: s.records_per_batch.median,
                max_records: s.records_per_batch.max,
                min_batch_bytes: s.batch_bytes.min,
                median_batch_bytes: s.batch_bytes.median,
                max_batch_bytes: s.batch_bytes.max,
            })
            .collect();
        let codecs: Vec<CodecRow> = all
            .iter()
            .flat_map(|&(name, s)| {
                s.codecs
                    .iter()
                    .filter(|c| c.batches > 0)
                    .map(move |c| CodecRow {
                        name,
                        codec: c.codec,
                        batches: c.batches,
                        stored_bytes: c.stored_bytes,
                        uncompressed_bytes: c.uncompressed_bytes,
                        ratio: c.ratio.map(|r| format!("{r:.2}")),
                    })
            })
            .collect();
        let producers: Vec<ProducersRow> = all
            .iter()
            .map(|&(name, s)| ProducersRow {
                name,
                plain_batches: s.producers.plain_batches,
                idempotent: s.producers.idempotent,
                transactional: s.producers.transactional,
                committed: s.transactions.committed,
                aborted: s.transactions.aborted,
                open: s.transactions.open,
                control_batches: s.transactions.control_batches,
            })
            .collect();
        let skipped: Vec<SkippedRow> = all
            .iter()
            .map(|&(name, s)| SkippedRow {
                name,
                legacy_entries: s.legacy.entries,
                legacy_records: s.legacy.records,
                legacy_bytes: s.legacy.bytes,
                corrupt_batches: s.corrupt_batches,
                undecodable_batches: s.undecodable_batches,
                torn_tails: s.torn_tails,
                corrupt_tails: s.corrupt_tails,
            })
            .collect();
        vec![
            Table::of(&overview).times(&["min_timestamp", "max_timestamp"], self.time_format),
            Table::of(&sizes),
            Table::of(&codecs).numeric("ratio"),
            Table::of(&producers),
            Table::of(&skipped),
        ]
    }
}

impl StatsReport {
    /// The document of the partitions `parts` and their `total`.
    pub(super) fn of(
        parts: &[PartitionStats],
        total: &Stats,
        time_format: crate::report::TimeFormat,
        csv_table: StatsTable,
    ) -> StatsReport {
        StatsReport {
            partitions: parts
                .iter()
                .map(|p| PartitionOut {
                    name: p.name.clone(),
                    topic: p.topic.clone(),
                    partition: p.partition,
                    path: p.path.display().to_string(),
                    path_base64: kaen_log::log::findings::path_base64(&p.path),
                    stats: StatsOut::of(&p.stats),
                })
                .collect(),
            total: TotalOut {
                partitions: parts.len() as u64,
                stats: StatsOut::of(total),
            },
            time_format,
            csv_table,
        }
    }
}
