//! `klog stats`'s document: the statistics per partition and in total, as tables and JSON.

use super::*;
use crate::report::table::{cell, Column};

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

const TOTAL: &str = "(total)";

/// A row of the text tables: a partition's name (or the total's) and its
/// statistics.
type Named<'r> = (&'r str, &'r StatsOut);

/// The columns of each text table but the codecs', a row per partition.
fn overview_columns<'r>() -> [Column<Named<'r>>; 7] {
    [
        Column::text("name", |(n, _)| cell(n)),
        Column::number("segments", |(_, s)| cell(&s.segments)),
        Column::number("batches", |(_, s)| cell(&s.batches)),
        Column::number("records", |(_, s)| cell(&s.records)),
        Column::number("bytes", |(_, s)| cell(&s.bytes)),
        Column::number("min_timestamp", |(_, s)| cell(&s.timestamps.min)),
        Column::number("max_timestamp", |(_, s)| cell(&s.timestamps.max)),
    ]
}

fn sizes_columns<'r>() -> [Column<Named<'r>>; 7] {
    [
        Column::text("name", |(n, _)| cell(n)),
        Column::number("min_records", |(_, s)| cell(&s.records_per_batch.min)),
        Column::number("median_records", |(_, s)| cell(&s.records_per_batch.median)),
        Column::number("max_records", |(_, s)| cell(&s.records_per_batch.max)),
        Column::number("min_batch_bytes", |(_, s)| cell(&s.batch_bytes.min)),
        Column::number("median_batch_bytes", |(_, s)| cell(&s.batch_bytes.median)),
        Column::number("max_batch_bytes", |(_, s)| cell(&s.batch_bytes.max)),
    ]
}

fn producers_columns<'r>() -> [Column<Named<'r>>; 8] {
    [
        Column::text("name", |(n, _)| cell(n)),
        Column::number("plain_batches", |(_, s)| cell(&s.producers.plain_batches)),
        Column::number("idempotent", |(_, s)| cell(&s.producers.idempotent)),
        Column::number("transactional", |(_, s)| cell(&s.producers.transactional)),
        Column::number("committed", |(_, s)| cell(&s.transactions.committed)),
        Column::number("aborted", |(_, s)| cell(&s.transactions.aborted)),
        Column::number("open", |(_, s)| cell(&s.transactions.open)),
        Column::number("control_batches", |(_, s)| {
            cell(&s.transactions.control_batches)
        }),
    ]
}

fn skipped_columns<'r>() -> [Column<Named<'r>>; 8] {
    [
        Column::text("name", |(n, _)| cell(n)),
        Column::number("legacy_entries", |(_, s)| cell(&s.legacy.entries)),
        Column::number("legacy_records", |(_, s)| cell(&s.legacy.records)),
        Column::number("legacy_bytes", |(_, s)| cell(&s.legacy.bytes)),
        Column::number("corrupt_batches", |(_, s)| cell(&s.corrupt_batches)),
        Column::number("undecodable_batches", |(_, s)| cell(&s.undecodable_batches)),
        Column::number("torn_tails", |(_, s)| cell(&s.torn_tails)),
        Column::number("corrupt_tails", |(_, s)| cell(&s.corrupt_tails)),
    ]
}

/// The text columns of a codec a partition used (the ratio with two
/// decimals).
fn codec_columns<'r>() -> [Column<(&'r str, &'r CodecOut)>; 6] {
    [
        Column::text("name", |(n, _)| cell(n)),
        Column::text("codec", |(_, c)| cell(c.codec)),
        Column::number("batches", |(_, c)| cell(&c.batches)),
        Column::number("stored_bytes", |(_, c)| cell(&c.stored_bytes)),
        Column::number("uncompressed_bytes", |(_, c)| cell(&c.uncompressed_bytes)),
        Column::number("ratio", |(_, c)| c.ratio.map(|r| format!("{r:.2}"))),
    ]
}

/// The codecs each of `all` used, with its name.
fn codecs_used<'r>(all: &[Named<'r>]) -> Vec<(&'r str, &'r CodecOut)> {
    all.iter()
        .flat_map(|&(name, s)| {
            s.codecs
                .iter()
                .filter(|c| c.batches > 0)
                .map(move |c| (name, c))
        })
        .collect()
}

impl Report for StatsReport {
    const COMMAND: &'static str = "stats";

    /// The JSON document's partitions, one row each (the total is not a
    /// row: it is the sum), or with `--table codecs` the codecs each used.
    fn csv_table(&self) -> Option<Table> {
        Some(match self.csv_table {
            StatsTable::Partitions => Table::flat(&self.partitions),
            StatsTable::Codecs => {
                // The partition's name, then the codec's JSON fields.
                let (names, codecs): (Vec<_>, Vec<_>) =
                    codecs_used(&self.named()).into_iter().unzip();
                Table::listed(names, &[Column::text("name", |n: &&str| cell(n))])
                    .beside(Table::flat(&codecs))
            }
        })
    }

    /// Five tables, each a row per partition and a total row: sizes and
    /// timestamps, distributions, codecs (only those used), producers and
    /// transactions, and what was skipped.
    fn tables(&self) -> Vec<Table> {
        let all = self.named();
        let with_total = || all.iter().copied().chain([(TOTAL, &self.total.stats)]);
        vec![
            Table::listed(with_total(), &overview_columns())
                .times(&["min_timestamp", "max_timestamp"], self.time_format),
            Table::listed(with_total(), &sizes_columns()),
            Table::listed(codecs_used(&with_total().collect::<Vec<_>>()), &codec_columns()),
            Table::listed(with_total(), &producers_columns()),
            Table::listed(with_total(), &skipped_columns()),
        ]
    }
}

impl StatsReport {
    /// Each partition's name and statistics.
    fn named(&self) -> Vec<Named<'_>> {
        self.partitions
            .iter()
            .map(|p| (p.name.as_str(), &p.stats))
            .collect()
    }

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
