//! `klog stats`: per-partition and total statistics of logs.

use std::io::Write;
use std::path::PathBuf;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::stats::{
    self, CodecStats, Distribution, PartitionStats, Stats, StatsOptions, CODECS,
};
use serde_json::{json, Value};

use crate::cli::OutputFormat;
use crate::exit::Outcome;
use crate::report::table::render;
use crate::report::Output;

/// Statistics of logs, per partition and in total
///
/// Batches, records and bytes; records per batch and batch size in bytes (min, lower median,
/// max); per codec the batches, the stored (compressed) bytes of their
/// records sections, the bytes those decompress to and the ratio
/// uncompressed/stored; the range of record timestamps; plain batches (no
/// producer id) and distinct idempotent and transactional producer ids;
/// transactions committed, aborted and still open, and control batches;
/// legacy (magic 0/1) entries and their messages.
///
/// Batches whose CRC fails or whose records do not decode are counted and
/// skipped, as are torn or unframeable tails (`klog verify-crc` shows where
/// they are). In the total, producers are distinct over all partitions.
///
/// Exit 0 when every batch was read, 1 when a batch was skipped or a
/// segment has a damaged tail.
#[derive(Debug, clap::Args)]
pub struct StatsArgs {
    /// Data directories, partition folders or segment files.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutputFormat::Text)]
    pub format: OutputFormat,
    /// The most bytes one batch's records may decompress to.
    #[arg(long, default_value_t = DecodeLimits::default().max_decompressed)]
    pub max_decompressed_bytes: u64,
}

pub fn run(args: &StatsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let opts = StatsOptions {
        limits: DecodeLimits {
            max_decompressed: args.max_decompressed_bytes,
        },
    };
    let mut parts: Vec<PartitionStats> = Vec::new();
    for path in &args.paths {
        parts.extend(
            stats::stats_path(path, &opts).with_context(|| format!("stats {}", path.display()))?,
        );
    }
    let mut total = Stats::default();
    for p in &parts {
        total.merge(&p.stats);
    }
    match args.format {
        OutputFormat::Text => text(&parts, &total, out)?,
        OutputFormat::Json => {
            let partitions: Vec<Value> = parts
                .iter()
                .map(|p| {
                    let mut v = json!({
                        "name": p.name,
                        "topic": p.topic,
                        "partition": p.partition,
                        "path": p.path.display().to_string(),
                    });
                    extend(&mut v, json_stats(&p.stats));
                    v
                })
                .collect();
            let mut t = json!({ "partitions": parts.len() });
            extend(&mut t, json_stats(&total));
            serde_json::to_writer(&mut *out, &json!({"partitions": partitions, "total": t}))?;
            writeln!(out)?;
        }
    }
    for p in parts.iter().filter(|p| p.stats.problems() > 0) {
        let s = &p.stats;
        let said: Vec<String> = [
            (s.corrupt_batches, "corrupt batch", "corrupt batches"),
            (
                s.undecodable_batches,
                "undecodable batch",
                "undecodable batches",
            ),
            (s.torn_tails, "torn tail", "torn tails"),
            (s.corrupt_tails, "corrupt tail", "corrupt tails"),
        ]
        .iter()
        .filter(|(n, _, _)| *n > 0)
        .map(|&(n, one, many)| format!("{n} {}", if n == 1 { one } else { many }))
        .collect();
        eprintln!(
            "klog: {}: skipped {} (`klog verify-crc {}` shows where)",
            p.name,
            said.join(", "),
            p.path.display()
        );
    }
    Ok(Outcome::from_count(total.problems()))
}

/// Move the fields of the object `more` into the object `v`.
fn extend(v: &mut Value, more: Value) {
    if let (Value::Object(v), Value::Object(more)) = (v, more) {
        v.extend(more);
    }
}

fn json_distribution(d: &Distribution) -> Value {
    json!({"min": d.min(), "median": d.median(), "max": d.max()})
}

/// The ratio rounded to 3 decimals (null when nothing is stored).
fn json_ratio(c: &CodecStats) -> Option<f64> {
    c.ratio().map(|r| (r * 1000.0).round() / 1000.0)
}

fn json_stats(s: &Stats) -> Value {
    let codecs: serde_json::Map<String, Value> = CODECS
        .iter()
        .map(|&codec| {
            let c = s.codec(codec);
            (
                codec.name().to_string(),
                json!({
                    "batches": c.batches,
                    "stored_bytes": c.stored_bytes,
                    "uncompressed_bytes": c.uncompressed_bytes,
                    "ratio": json_ratio(&c),
                }),
            )
        })
        .collect();
    json!({
        "segments": s.segments,
        "batches": s.batches,
        "records": s.records,
        "bytes": s.bytes,
        "records_per_batch": json_distribution(&s.records_per_batch),
        "batch_bytes": json_distribution(&s.batch_bytes),
        "codecs": codecs,
        "timestamps": {"min": s.min_timestamp, "max": s.max_timestamp},
        "producers": {
            "plain_batches": s.plain_batches,
            "idempotent": s.idempotent_producers(),
            "transactional": s.transactional_producers(),
        },
        "transactions": {
            "committed": s.transactions.committed,
            "aborted": s.transactions.aborted,
            "open": s.transactions.open,
            "control_batches": s.control_batches,
        },
        "legacy": {"entries": s.legacy_entries, "records": s.legacy_records, "bytes": s.legacy_bytes},
        "corrupt_batches": s.corrupt_batches,
        "undecodable_batches": s.undecodable_batches,
        "torn_tails": s.torn_tails,
        "corrupt_tails": s.corrupt_tails,
    })
}

fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

const TOTAL: &str = "(total)";

/// Five tables, each a row per partition and a total row: sizes and
/// timestamps, distributions, codecs, producers and transactions, and what
/// was skipped.
fn text(parts: &[PartitionStats], total: &Stats, out: &mut Output) -> anyhow::Result<()> {
    let rows = |f: &dyn Fn(&Stats) -> Vec<String>| -> Vec<Vec<String>> {
        parts
            .iter()
            .map(|p| (p.name.as_str(), &p.stats))
            .chain([(TOTAL, total)])
            .map(|(name, s)| {
                let mut row = vec![name.to_string()];
                row.extend(f(s));
                row
            })
            .collect()
    };
    let overview = rows(&|s| {
        vec![
            s.segments.to_string(),
            s.batches.to_string(),
            s.records.to_string(),
            s.bytes.to_string(),
            cell(s.min_timestamp),
            cell(s.max_timestamp),
        ]
    });
    let headers = [
        "PARTITION",
        "SEGMENTS",
        "BATCHES",
        "RECORDS",
        "BYTES",
        "MIN-TIMESTAMP",
        "MAX-TIMESTAMP",
    ];
    out.write_all(render(&headers, &overview).as_bytes())?;

    let sizes = rows(&|s| {
        let (r, b) = (&s.records_per_batch, &s.batch_bytes);
        vec![
            cell(r.min()),
            cell(r.median()),
            cell(r.max()),
            cell(b.min()),
            cell(b.median()),
            cell(b.max()),
        ]
    });
    let headers = [
        "PARTITION",
        "MIN-RECORDS",
        "MEDIAN-RECORDS",
        "MAX-RECORDS",
        "MIN-BATCH-BYTES",
        "MEDIAN-BATCH-BYTES",
        "MAX-BATCH-BYTES",
    ];
    writeln!(out)?;
    out.write_all(render(&headers, &sizes).as_bytes())?;

    // Only the codecs a partition uses.
    let mut codecs = Vec::new();
    for (name, s) in parts
        .iter()
        .map(|p| (p.name.as_str(), &p.stats))
        .chain([(TOTAL, total)])
    {
        for codec in CODECS {
            let c = s.codec(codec);
            if c.batches == 0 {
                continue;
            }
            codecs.push(vec![
                name.to_string(),
                codec.name().to_string(),
                c.batches.to_string(),
                c.stored_bytes.to_string(),
                c.uncompressed_bytes.to_string(),
                cell(c.ratio().map(|r| format!("{r:.2}"))),
            ]);
        }
    }
    let headers = [
        "PARTITION",
        "CODEC",
        "BATCHES",
        "STORED-BYTES",
        "UNCOMPRESSED-BYTES",
        "RATIO",
    ];
    writeln!(out)?;
    out.write_all(render(&headers, &codecs).as_bytes())?;

    let producers = rows(&|s| {
        vec![
            s.plain_batches.to_string(),
            s.idempotent_producers().to_string(),
            s.transactional_producers().to_string(),
            s.transactions.committed.to_string(),
            s.transactions.aborted.to_string(),
            s.transactions.open.to_string(),
            s.control_batches.to_string(),
        ]
    });
    let headers = [
        "PARTITION",
        "PLAIN-BATCHES",
        "IDEMPOTENT",
        "TRANSACTIONAL",
        "COMMITTED",
        "ABORTED",
        "OPEN",
        "CONTROL-BATCHES",
    ];
    writeln!(out)?;
    out.write_all(render(&headers, &producers).as_bytes())?;

    let skipped = rows(&|s| {
        vec![
            s.legacy_entries.to_string(),
            s.legacy_records.to_string(),
            s.legacy_bytes.to_string(),
            s.corrupt_batches.to_string(),
            s.undecodable_batches.to_string(),
            s.torn_tails.to_string(),
            s.corrupt_tails.to_string(),
        ]
    });
    let headers = [
        "PARTITION",
        "LEGACY-ENTRIES",
        "LEGACY-RECORDS",
        "LEGACY-BYTES",
        "CORRUPT-BATCHES",
        "UNDECODABLE-BATCHES",
        "TORN-TAILS",
        "CORRUPT-TAILS",
    ];
    writeln!(out)?;
    out.write_all(render(&headers, &skipped).as_bytes())?;
    Ok(())
}
