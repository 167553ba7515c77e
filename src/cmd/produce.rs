//! `klog produce`: append records read from stdin through the append path.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::ValueEnum;
use kaen_log::format::{BatchSpec, Compression, NewRecord};
use kaen_log::log::{AppendConfig, PartitionAppender};

use crate::exit::Outcome;
use crate::report::Output;

/// How stdin lines become records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum InputFormat {
    /// Each line is a value (or `key<SEP>value` with --key-separator).
    Text,
    /// Each line is a JSON object: {"key", "value", "headers", "timestamp"}.
    Json,
}

/// Append records read from stdin to `<DIR>/<topic>-<partition>`.
///
/// The partition assigns the offsets (its log end offset), each batch is
/// written with its CRC-32C and fsynced, and its offsets are printed only
/// after that. The data directory's `.lock` is taken first: produce refuses
/// to run beside a broker, and refuses to append behind a damaged tail.
///
/// JSON lines: `{"key": "k", "value": "v", "headers": [{"key": "h", "value": "x"}],
/// "timestamp": 1700000000000}`; key, value and header values may be null;
/// headers may also be an object.
#[derive(Debug, clap::Args)]
pub struct ProduceArgs {
    /// The data directory (created if missing).
    pub dir: PathBuf,
    /// Topic name.
    #[arg(long)]
    pub topic: String,
    /// Partition number.
    #[arg(long, default_value_t = 0)]
    pub partition: i32,
    /// Input format.
    #[arg(long, value_enum, default_value_t = InputFormat::Text)]
    pub format: InputFormat,
    /// Split each text line at the first occurrence into key and value.
    #[arg(long)]
    pub key_separator: Option<String>,
    /// Lines per batch.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub batch_size: u32,
    /// Compression codec: none, gzip, snappy, lz4, zstd.
    #[arg(long, default_value = "none", value_parser = parse_codec)]
    pub compression: Compression,
    /// Timestamp (ms since the epoch) for records that carry none; default: now.
    #[arg(long)]
    pub timestamp_ms: Option<i64>,
    /// Roll to a new segment past this many bytes.
    #[arg(long, default_value_t = AppendConfig::default().segment_bytes)]
    pub segment_bytes: u64,
    /// partitionLeaderEpoch stamped on each batch.
    #[arg(long, default_value_t = 0)]
    pub leader_epoch: i32,
}

fn parse_codec(s: &str) -> Result<Compression, String> {
    Compression::from_name(s)
        .ok_or_else(|| format!("unknown codec {s:?} (none, gzip, snappy, lz4, zstd)"))
}

pub fn run(args: &ProduceArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let now = match args.timestamp_ms {
        Some(ts) => ts,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_millis() as i64)
            .unwrap_or(0),
    };
    let config = AppendConfig {
        segment_bytes: args.segment_bytes,
        partition_leader_epoch: args.leader_epoch,
        ..AppendConfig::default()
    };
    let mut appender = PartitionAppender::open(&args.dir, &args.topic, args.partition, config)?;
    let spec = BatchSpec {
        compression: args.compression,
        ..BatchSpec::default()
    };
    let name = format!("{}-{}", args.topic, args.partition);
    let stdin = std::io::stdin();
    let mut batch = Vec::with_capacity(args.batch_size as usize);
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.context("read stdin")?;
        let record =
            parse_line(&line, args, now).with_context(|| format!("stdin line {}", n + 1))?;
        batch.push(record);
        if batch.len() == args.batch_size as usize {
            flush(&mut appender, &spec, &mut batch, &name, out)?;
        }
    }
    if !batch.is_empty() {
        flush(&mut appender, &spec, &mut batch, &name, out)?;
    }
    Ok(Outcome::Clean)
}

fn flush(
    appender: &mut PartitionAppender,
    spec: &BatchSpec,
    batch: &mut Vec<NewRecord>,
    name: &str,
    out: &mut Output,
) -> anyhow::Result<()> {
    let offsets = appender.append(spec, batch)?;
    writeln!(
        out,
        "{name} offsets {}..={} ({} records)",
        offsets.start(),
        offsets.end(),
        batch.len()
    )?;
    out.flush()?;
    batch.clear();
    Ok(())
}

fn parse_line(line: &str, args: &ProduceArgs, now: i64) -> anyhow::Result<NewRecord> {
    match args.format {
        InputFormat::Text => {
            let (key, value) = match &args.key_separator {
                Some(sep) => match line.split_once(sep.as_str()) {
                    Some((k, v)) => (Some(k.as_bytes().to_vec()), v),
                    None => (None, line),
                },
                None => (None, line),
            };
            Ok(NewRecord {
                key,
                value: Some(value.as_bytes().to_vec()),
                headers: Vec::new(),
                timestamp: now,
            })
        }
        InputFormat::Json => {
            let v: serde_json::Value = serde_json::from_str(line).context("not a JSON object")?;
            let obj = v.as_object().context("not a JSON object")?;
            // Strings are taken as UTF-8 bytes; any other JSON value as its JSON text.
            let bytes = |v: Option<&serde_json::Value>| -> Option<Vec<u8>> {
                match v {
                    None | Some(serde_json::Value::Null) => None,
                    Some(serde_json::Value::String(s)) => Some(s.as_bytes().to_vec()),
                    Some(other) => Some(other.to_string().into_bytes()),
                }
            };
            let mut headers = Vec::new();
            match obj.get("headers") {
                None | Some(serde_json::Value::Null) => {}
                Some(serde_json::Value::Array(items)) => {
                    for h in items {
                        let key = h
                            .get("key")
                            .and_then(|k| k.as_str())
                            .context("header without a string key")?;
                        headers.push((key.as_bytes().to_vec(), bytes(h.get("value"))));
                    }
                }
                Some(serde_json::Value::Object(map)) => {
                    for (k, v) in map {
                        headers.push((k.as_bytes().to_vec(), bytes(Some(v))));
                    }
                }
                Some(_) => bail!("headers must be an array or an object"),
            }
            let timestamp = match obj.get("timestamp") {
                None | Some(serde_json::Value::Null) => now,
                Some(t) => t.as_i64().context("timestamp must be an integer (ms)")?,
            };
            Ok(NewRecord {
                key: bytes(obj.get("key")),
                value: bytes(obj.get("value")),
                headers,
                timestamp,
            })
        }
    }
}
