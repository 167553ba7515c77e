//! `klog lag`: committed offsets against the ends of their partitions.

use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

use kaen_log::lag::{self, LagOptions, LagRow};
use kaen_log::offsets::ReplayOptions;

use crate::cli::TableFormat;
use crate::exit::Outcome;
use crate::report::table::{render, render_csv};
use crate::report::Output;
use kaen_log::txn::Isolation;

/// For every committed offset, how far the group is behind.
///
/// lag = end − committed, where end is the high watermark (from
/// replication-offset-checkpoint) when known, else the log end offset, and
/// the last stable offset with --isolation read_committed. LOG-END is the
/// log end offset; HIGH-WATERMARK is what kafka-consumer-groups calls
/// LOG-END-OFFSET. PENDING counts the data records (control records
/// excluded) a consumer still has to read: an exactly-once group that has
/// read everything shows 0 even though its lag is 1 (the last COMMIT marker
/// takes an offset). STATUS is ok, below_log_start (retention deleted
/// committed records: the consumer will reset), above_log_end (the log was
/// truncated under the group), no_committed_offset (a negative committed
/// offset, which Kafka's clients read as none) or no_partition (no such
/// partition on these disks). CONSUMER-ID, HOST and CLIENT-ID name the
/// member whose current assignment holds the partition, in a classic
/// group's metadata or a new-protocol (consumer, share, streams) group's
/// assignment records. Each group ends with a
/// total row in text output (the sum of its positive lags and pending records).
///
/// Exit 1 when --fail-above is given and some lag exceeds it, or when the
/// offsets topic has records that do not decode.
#[derive(Debug, clap::Args)]
pub struct LagArgs {
    /// Data directories (several: the log directories of one broker, merged).
    #[arg(required = true)]
    pub dirs: Vec<PathBuf>,
    /// Only this group.
    #[arg(long)]
    pub group: Option<String>,
    /// Which end the consumer reads to: read-uncommitted (the high watermark)
    /// or read-committed (the last stable offset).
    #[arg(long, value_parser = crate::cli::isolation, default_value = "read-uncommitted")]
    pub isolation: Isolation,
    /// Exit 1 when any partition's lag is above N.
    #[arg(long, value_name = "N")]
    pub fail_above: Option<i64>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
}

fn cell<T: ToString>(v: Option<T>) -> String {
    v.map_or_else(|| "-".to_string(), |v| v.to_string())
}

pub fn run(args: &LagArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let opts = ReplayOptions {
        group: args.group.clone(),
        ..ReplayOptions::default()
    };
    let (dirs, replay, _) = crate::cmd::replay_offsets::replay_dirs(&args.dirs, opts)?;
    if let Some(g) = &args.group {
        let known = replay.table.contains_key(g)
            || replay.groups.contains_key(g)
            || replay.coordinator.values().any(|e| {
                e.record
                    .key
                    .as_ref()
                    .and_then(|k| k.get("groupId"))
                    .and_then(|v| v.as_str())
                    == Some(g.as_str())
            });
        anyhow::ensure!(known, "group {g:?}: group does not exist");
    }
    let isolation = args.isolation;
    let rows = lag::compute(
        &dirs,
        &replay,
        &LagOptions {
            isolation,
            group: args.group.clone(),
            ..LagOptions::default()
        },
    )?;
    match args.format {
        TableFormat::Json => {
            let json: Vec<_> = rows.iter().map(json_row).collect();
            serde_json::to_writer(&mut *out, &json)?;
            writeln!(out)?;
        }
        TableFormat::Csv => {
            let headers = [
                "group",
                "topic",
                "partition",
                "committed",
                "log_start",
                "log_end",
                "high_watermark",
                "last_stable",
                "lag",
                "pending_records",
                "status",
                "consumer_id",
                "host",
                "client_id",
            ];
            out.write_all(
                render_csv(&headers, &rows.iter().map(text_row).collect::<Vec<_>>()).as_bytes(),
            )?;
        }
        TableFormat::Text => {
            let headers = [
                "GROUP",
                "TOPIC",
                "PARTITION",
                "COMMITTED",
                "LOG-START",
                "LOG-END",
                "HIGH-WATERMARK",
                "LAST-STABLE",
                "LAG",
                "PENDING",
                "STATUS",
                "CONSUMER-ID",
                "HOST",
                "CLIENT-ID",
            ];
            let mut table = Vec::new();
            let mut totals: BTreeMap<&str, (i64, u64)> = BTreeMap::new();
            for (i, r) in rows.iter().enumerate() {
                table.push(text_row(r));
                let t = totals.entry(&r.group).or_default();
                t.0 += r.lag.unwrap_or(0).max(0);
                t.1 += r.pending_records.unwrap_or(0);
                if rows.get(i + 1).is_none_or(|next| next.group != r.group) {
                    let mut total = vec!["-".to_string(); headers.len()];
                    total[0] = r.group.clone();
                    total[1] = "(total)".to_string();
                    total[8] = t.0.to_string();
                    total[9] = t.1.to_string();
                    total[10] = String::new();
                    total[11] = String::new();
                    total[12] = String::new();
                    total[13] = String::new();
                    table.push(total);
                }
            }
            out.write_all(render(&headers, &table).as_bytes())?;
        }
    }
    let over = args.fail_above.map_or(0, |n| {
        rows.iter().filter(|r| r.lag.is_some_and(|l| l > n)).count()
    });
    if let Some(n) = args.fail_above {
        if over > 0 {
            eprintln!("klog: {over} partitions lag more than {n}");
        }
    }
    Ok(Outcome::from_count(over as u64 + replay.bad_count))
}

fn text_row(r: &LagRow) -> Vec<String> {
    let e = r.ends;
    vec![
        r.group.clone(),
        r.topic.clone(),
        r.partition.to_string(),
        r.committed.to_string(),
        cell(e.map(|e| e.log_start)),
        cell(e.map(|e| e.log_end)),
        cell(e.and_then(|e| e.high_watermark)),
        cell(e.and_then(|e| e.last_stable)),
        cell(r.lag),
        cell(r.pending_records),
        r.status.name().to_string(),
        cell(r.member.clone()),
        cell(r.host.clone()),
        cell(r.client.clone()),
    ]
}

fn json_row(r: &LagRow) -> serde_json::Value {
    let e = r.ends;
    serde_json::json!({
        "group": r.group,
        "topic": r.topic,
        "partition": r.partition,
        "committed": r.committed,
        "log_start": e.map(|e| e.log_start),
        "log_end": e.map(|e| e.log_end),
        "high_watermark": e.and_then(|e| e.high_watermark),
        "last_stable": e.and_then(|e| e.last_stable),
        "lag": r.lag,
        "pending_records": r.pending_records,
        "status": r.status.name(),
        "consumer_id": r.member,
        "host": r.host,
        "client_id": r.client,
    })
}
