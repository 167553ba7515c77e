//! `klog metadata`: the KRaft cluster image, replayed offline.

use std::io::Write;
use std::path::PathBuf;

use kaen_log::metadata::image::{resource_type_name, Listener};
use kaen_log::metadata::{self, Image, Replayed};
use serde_json::json;

use crate::cli::TableFormat;
use crate::exit::Outcome;
use crate::report::table::{render, render_csv};
use crate::report::Output;

/// Replay a KRaft metadata log into the cluster image, as a broker does on
/// startup: the newest snapshot (`<offset>-<epoch>.checkpoint` in
/// `__cluster_metadata-0`), then every metadata record of the log from the
/// snapshot's offset on.
///
/// Text output: where the image came from, the features and the producer id
/// block, then tables of brokers, controllers, partitions (leader, epochs,
/// replicas, ISR, directories) and configs. `--format json` prints the whole
/// image as one object; `--format csv` prints the partitions table.
///
/// A record klog cannot apply (an unknown apiKey or version, a change for an
/// unknown partition or broker) is listed under "not applied" (stderr in
/// text) and the replay goes on. The snapshot read must begin with a
/// SNAPSHOT_HEADER control record (Kafka refuses it otherwise: an error)
/// and end with a SNAPSHOT_FOOTER (a warning: it may have been cut short).
/// Exit 1 when a batch or record of the metadata log does not decode or the
/// snapshot has no header; exit 2 when DIR has no metadata log, or the log
/// starts after offset 0 with no snapshot before --as-of.
#[derive(Debug, clap::Args)]
pub struct MetadataArgs {
    /// A KRaft data directory (holding `__cluster_metadata-0`) or the
    /// `__cluster_metadata-0` folder itself.
    pub dir: PathBuf,
    /// The image before metadata offset N (`offset:N`): records at N and
    /// after are not applied, and only snapshots at or below N are used.
    #[arg(long, value_parser = parse_as_of, value_name = "offset:N")]
    pub as_of: Option<i64>,
    /// Only this topic (its partitions and configs).
    #[arg(long)]
    pub topic: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = TableFormat::Text)]
    pub format: TableFormat,
}

fn parse_as_of(s: &str) -> Result<i64, String> {
    let v = s.strip_prefix("offset:").unwrap_or(s);
    match v.parse::<i64>() {
        Ok(n) if n >= 0 => Ok(n),
        _ => Err(format!(
            "{s:?} is not offset:N with N a non-negative offset"
        )),
    }
}

fn list<T: ToString>(v: &[T]) -> String {
    if v.is_empty() {
        "-".to_string()
    } else {
        v.iter().map(T::to_string).collect::<Vec<_>>().join(",")
    }
}

fn listeners(ls: &[Listener]) -> String {
    if ls.is_empty() {
        return "-".to_string();
    }
    ls.iter()
        .map(|l| format!("{}://{}:{}", l.name, l.host, l.port))
        .collect::<Vec<_>>()
        .join(",")
}

const PARTITION_HEADERS: [&str; 9] = [
    "TOPIC",
    "PARTITION",
    "TOPIC-ID",
    "LEADER",
    "LEADER-EPOCH",
    "PARTITION-EPOCH",
    "REPLICAS",
    "ISR",
    "DIRECTORIES",
];

fn partition_rows(image: &Image, topic: Option<&str>) -> Vec<Vec<String>> {
    let mut topics: Vec<_> = image
        .topics
        .values()
        .filter(|t| topic.is_none_or(|n| t.name == n))
        .collect();
    topics.sort_by(|a, b| a.name.cmp(&b.name));
    let mut rows = Vec::new();
    for t in topics {
        for (p, r) in &t.partitions {
            rows.push(vec![
                t.name.clone(),
                p.to_string(),
                t.id.clone(),
                r.leader.to_string(),
                r.leader_epoch.to_string(),
                r.partition_epoch.to_string(),
                list(&r.replicas),
                list(&r.isr),
                list(&r.directories),
            ]);
        }
    }
    rows
}

fn config_rows(image: &Image, topic: Option<&str>) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    for ((t, name), kv) in &image.configs {
        if topic.is_some_and(|n| *t != 2 || name != n) {
            continue;
        }
        for (k, v) in kv {
            rows.push(vec![
                resource_type_name(*t).to_string(),
                if name.is_empty() {
                    "(default)".to_string()
                } else {
                    name.clone()
                },
                k.clone(),
                v.clone(),
            ]);
        }
    }
    rows
}

fn source_lines(r: &Replayed) -> Vec<String> {
    let mut out = Vec::new();
    match &r.snapshot {
        Some((path, offset, epoch)) => out.push(format!(
            "snapshot:     {} (offset {offset}, epoch {epoch})",
            path.file_name()
                .map_or_else(String::new, |n| n.to_string_lossy().into_owned())
        )),
        None => out.push("snapshot:     - (the log from offset 0)".to_string()),
    }
    match r.log_range {
        Some((a, b)) => out.push(format!(
            "log records:  offsets {a}..={b} applied (next offset {})",
            r.next_offset
        )),
        None => out.push(format!(
            "log records:  none after the snapshot (next offset {})",
            r.next_offset
        )),
    }
    out
}

pub fn run(args: &MetadataArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let Some(folder) = metadata::metadata_folder(&args.dir) else {
        anyhow::bail!(
            "{}: no {} folder (not a KRaft data directory holding the metadata log)",
            args.dir.display(),
            metadata::METADATA_FOLDER
        );
    };
    let r = metadata::replay(&folder, args.as_of)?;
    let image = &r.image;
    let topic = args.topic.as_deref();
    match args.format {
        TableFormat::Csv => {
            out.write_all(
                render_csv(
                    &PARTITION_HEADERS
                        .map(|h| h.to_lowercase().replace('-', "_"))
                        .iter()
                        .map(String::as_str)
                        .collect::<Vec<_>>(),
                    &partition_rows(image, topic),
                )
                .as_bytes(),
            )?;
        }
        TableFormat::Json => {
            let topics: Vec<_> = image
                .topics
                .values()
                .filter(|t| topic.is_none_or(|n| t.name == n))
                .map(|t| {
                    json!({
                        "name": t.name,
                        "id": t.id,
                        "partitions": t.partitions.iter().map(|(p, r)| {
                            let mut v = serde_json::to_value(r).unwrap_or_default();
                            v["partition"] = json!(p);
                            v
                        }).collect::<Vec<_>>(),
                    })
                })
                .collect();
            let configs: Vec<_> = config_rows(image, topic)
                .into_iter()
                .map(|r| match r.as_slice() {
                    [t, res, name, value] => {
                        json!({"resource_type": t, "resource": res, "name": name, "value": value})
                    }
                    _ => json!(null),
                })
                .collect();
            let v = json!({
                "metadata_dir": folder.display().to_string(),
                "snapshot": r.snapshot.as_ref().map(|(p, o, e)| json!({"file": p.display().to_string(), "offset": o, "epoch": e})),
                "log_range": r.log_range.map(|(a, b)| json!({"first": a, "last": b})),
                "next_offset": r.next_offset,
                "features": image.features,
                "producer_ids": image.producer_ids,
                "brokers": image.brokers.values().collect::<Vec<_>>(),
                "controllers": image.controllers.values().collect::<Vec<_>>(),
                "topics": topics,
                "configs": configs,
                "acls": image.acls.len(),
                "scram_credentials": image.scram_credentials.len(),
                "delegation_tokens": image.delegation_tokens.len(),
                "client_quotas": image.client_quotas.len(),
                "record_counts": image.record_counts,
                "not_applied": image.notes,
                "damage": r.damage.iter().map(|(f, o, e)| json!({"file": f.display().to_string(), "offset": o, "error": e})).collect::<Vec<_>>(),
                "findings": r.findings,
            });
            serde_json::to_writer(&mut *out, &v)?;
            writeln!(out)?;
        }
        TableFormat::Text => {
            writeln!(out, "metadata log: {}", folder.display())?;
            for l in source_lines(&r) {
                writeln!(out, "{l}")?;
            }
            let features = image
                .features
                .iter()
                .map(|(k, v)| format!("{k}={v}"))
                .collect::<Vec<_>>();
            writeln!(
                out,
                "features:     {}",
                if features.is_empty() {
                    "-".to_string()
                } else {
                    features.join(" ")
                }
            )?;
            match image.producer_ids {
                Some(p) => writeln!(
                    out,
                    "producer ids: next {} (block of broker {}, epoch {})",
                    p.next_producer_id, p.broker_id, p.broker_epoch
                )?,
                None => writeln!(out, "producer ids: -")?,
            }
            writeln!(
                out,
                "security:     {} ACLs, {} SCRAM credentials, {} delegation tokens, {} client quotas",
                image.acls.len(),
                image.scram_credentials.len(),
                image.delegation_tokens.len(),
                image.client_quotas.len()
            )?;
            if topic.is_none() {
                writeln!(out)?;
                let rows: Vec<Vec<String>> = image
                    .brokers
                    .values()
                    .map(|b| {
                        vec![
                            b.id.to_string(),
                            b.epoch.to_string(),
                            b.rack.clone().unwrap_or_else(|| "-".into()),
                            b.fenced.to_string(),
                            b.in_controlled_shutdown.to_string(),
                            listeners(&b.listeners),
                            b.incarnation_id.clone(),
                            list(&b.log_dirs),
                        ]
                    })
                    .collect();
                out.write_all(
                    render(
                        &[
                            "BROKER",
                            "EPOCH",
                            "RACK",
                            "FENCED",
                            "CONTROLLED-SHUTDOWN",
                            "LISTENERS",
                            "INCARNATION",
                            "LOG-DIRS",
                        ],
                        &rows,
                    )
                    .as_bytes(),
                )?;
                writeln!(out)?;
                let rows: Vec<Vec<String>> = image
                    .controllers
                    .values()
                    .map(|c| {
                        vec![
                            c.id.to_string(),
                            listeners(&c.listeners),
                            c.incarnation_id.clone(),
                        ]
                    })
                    .collect();
                out.write_all(
                    render(&["CONTROLLER", "LISTENERS", "INCARNATION"], &rows).as_bytes(),
                )?;
            }
            writeln!(out)?;
            out.write_all(render(&PARTITION_HEADERS, &partition_rows(image, topic)).as_bytes())?;
            let configs = config_rows(image, topic);
            if !configs.is_empty() {
                writeln!(out)?;
                out.write_all(
                    render(&["RESOURCE-TYPE", "RESOURCE", "CONFIG", "VALUE"], &configs).as_bytes(),
                )?;
            }
            for n in &image.notes {
                eprintln!(
                    "klog: not applied: {} at offset {}: {}",
                    n.record, n.offset, n.detail
                );
            }
            for (f, o, e) in &r.damage {
                eprintln!("klog: {}: offset {o}: {e}", f.display());
            }
            for f in &r.findings {
                eprintln!("klog: {f}");
            }
        }
    }
    let failing = r
        .findings
        .iter()
        .filter(|f| f.fails(kaen_log::findings::Severity::Error))
        .count();
    Ok(Outcome::from_count((r.damage.len() + failing) as u64))
}
