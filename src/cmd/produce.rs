//! `klog produce`: append records read from stdin through the append path.

use std::io::{BufRead, Write};
use std::path::PathBuf;

use anyhow::{bail, Context};
use clap::ValueEnum;
use kaen_log::format::batch::HEADER_LEN;
use kaen_log::format::{control, BatchSpec, Compression, NewRecord};
use kaen_log::log::AppendConfig;
use kaen_log::offsets::write::Replicas;

use schemars::JsonSchema;
use serde::Serialize;

use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::{emit, formats, Format, Output, Report, Table};

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
/// A partition of a Kafka log directory is written as the other writers
/// write (klog-writers(7)): every replica's log directory is given
/// (`--replica DIR` for each other broker, or --allow-missing-replicas),
/// all of one cluster and one topic id, ending at one offset; each batch
/// carries the partition's newest leader epoch, and the
/// leader-epoch-checkpoint is only ever extended.
///
/// JSON lines: `{"key": "k", "value": "v", "headers": [{"key": "h", "value": "x"}],
/// "timestamp": 1700000000000}`; key, value and header values may be null;
/// headers may also be an object.
///
/// What was written is reported in every format: text, a line per batch as
/// it is written (`orders-0 offsets 0..=2 (3 records)`); JSON, the document's
/// `batches`; CSV, one row per batch written (`topic`, `partition`,
/// `first_offset`, `last_offset`, `records`, `control`). When a later line
/// fails, the batches already written are still reported.
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
    /// What stdin holds: text lines (the default), or JSON records (one
    /// object a line). Earlier releases named it --format, which is now
    /// the output's, as for every command: `--format json` therefore needs
    /// --input-format said, so that it is never taken the old way.
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub input_format: Option<InputFormat>,
    /// Output format: what was written, one row per batch.
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
    /// Split each text line at the first occurrence into key and value.
    #[arg(long)]
    pub key_separator: Option<String>,
    /// Lines per batch.
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=1_000_000))]
    pub batch_size: u32,
    /// Compression codec: none, gzip, snappy, lz4, zstd.
    #[arg(long, default_value = "none", value_parser = parse_codec)]
    pub compression: Compression,
    /// Timestamp (epoch ms or ISO-8601) for records that carry none; default: now.
    #[arg(long, value_parser = kaen_log::format::time::parse_instant_ms)]
    pub timestamp_ms: Option<i64>,
    /// Roll to a new segment past this many bytes (Kafka's segment.bytes: at
    /// most 2^31 - 1). Default: the topic's, as --config says.
    #[arg(long, value_parser = clap::value_parser!(u64).range(1..=i32::MAX as u64))]
    pub segment_bytes: Option<u64>,
    /// Refuse a batch larger than this, log overhead included (Kafka's
    /// max.message.bytes; its default message.max.bytes is 1 MiB + 12).
    /// Default: the topic's, as --config says.
    #[arg(long, value_parser = clap::value_parser!(u64).range(61..=i32::MAX as u64))]
    pub max_message_bytes: Option<u64>,
    /// partitionLeaderEpoch stamped on each batch. Default: the partition's
    /// latest leader epoch (its leader-epoch-checkpoint), else 0.
    #[arg(long)]
    pub leader_epoch: Option<i32>,
    /// Stamp batches with this producer id (an idempotent or transactional producer).
    #[arg(long)]
    pub producer_id: Option<i64>,
    /// The producer epoch.
    #[arg(long, default_value_t = 0)]
    pub producer_epoch: i16,
    /// The first batch's base sequence; later batches continue from it.
    #[arg(long, default_value_t = 0)]
    pub base_sequence: i32,
    /// Mark batches transactional (needs --producer-id); close the
    /// transaction with `--control commit|abort`.
    #[arg(long, requires = "producer_id")]
    pub transactional: bool,
    /// Instead of reading stdin, write one transaction marker (a control
    /// batch with a COMMIT or ABORT record) for --producer-id.
    #[arg(long, value_parser = ["commit", "abort"], requires = "producer_id")]
    pub control: Option<String>,
    /// The coordinator epoch in a --control marker.
    #[arg(long, default_value_t = 0)]
    pub coordinator_epoch: i32,
    #[command(flatten)]
    pub replicas: crate::cmd::args::ReplicaArgs,
    #[command(flatten)]
    pub write: crate::cmd::args::WriteArgs,
}

fn parse_codec(s: &str) -> Result<Compression, String> {
    Compression::from_name(s)
        .ok_or_else(|| format!("unknown codec {s:?} (none, gzip, snappy, lz4, zstd)"))
}

/// One batch written.
#[derive(Serialize, JsonSchema)]
struct BatchOut {
    topic: String,
    partition: i32,
    first_offset: i64,
    last_offset: i64,
    records: u64,
    /// `commit` or `abort` for a transaction marker (--control), else null.
    control: Option<String>,
}

/// `klog produce`'s document: the batches written, in order.
#[derive(Serialize, JsonSchema)]
pub struct ProduceReport {
    batches: Vec<BatchOut>,
}

impl Report for ProduceReport {
    const COMMAND: &'static str = "produce";

    fn tables(&self) -> Vec<Table> {
        vec![Table::flat(&self.batches)]
    }

    fn csv_table(&self) -> Option<Table> {
        Some(Table::flat(&self.batches))
    }
}

pub fn run(args: &ProduceArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    anyhow::ensure!(
        args.format != Format::Json || args.input_format.is_some(),
        "produce: --format names the output format (text, json, csv); for JSON records on \
         stdin give --input-format json (with --format json: JSON in and out)"
    );
    let mut written = Vec::new();
    let result = append(args, &mut written, out);
    // Text said each batch as it was written; the other formats say them
    // now, those written before a failure too.
    if args.format != Format::Text && (result.is_ok() || !written.is_empty()) {
        emit(&ProduceReport { batches: written }, args.format, out)?;
    }
    result
}

fn append(
    args: &ProduceArgs,
    written: &mut Vec<BatchOut>,
    out: &mut Output,
) -> anyhow::Result<Outcome> {
    let now = args.timestamp_ms.unwrap_or_else(crate::cmd::now_ms);
    // Every replica given is written alike, under the writers' rules: one
    // cluster, one log end, one leader epoch (the partition's newest), the
    // leader-epoch-checkpoint only ever extended, and a Kafka partition's
    // replicas all given (or --allow-missing-replicas).
    let mut dirs = vec![args.dir.clone()];
    dirs.extend(args.replicas.replica_dirs.iter().cloned());
    let mut replicas = Replicas::open_partition(
        &dirs,
        &args.topic,
        args.partition,
        args.replicas.policy(),
        &|dir, t, image| {
            let resolved = args
                .write
                .append_config(image, (dir, &t.topic), now, true)?;
            Ok(AppendConfig {
                segment_bytes: args.segment_bytes.unwrap_or(resolved.segment_bytes),
                max_batch_bytes: args.max_message_bytes.unwrap_or(resolved.max_batch_bytes),
                ..resolved
            })
        },
    )?;
    args.replicas.say_warning(&replicas);
    if let Some(epoch) = args.leader_epoch {
        replicas.set_leader_epoch(epoch);
    }
    let max_message_bytes = replicas
        .configs
        .iter()
        .map(|c| c.max_batch_bytes)
        .min()
        .unwrap_or(kaen_log::log::appender::DEFAULT_MAX_MESSAGE_BYTES);
    let mut spec = BatchSpec {
        compression: args.compression,
        ..BatchSpec::default()
    };
    if let Some(pid) = args.producer_id {
        spec.producer_id = pid;
        spec.producer_epoch = args.producer_epoch;
        spec.base_sequence = args.base_sequence;
        spec.transactional = args.transactional;
    }
    let name = format!("{}-{}", args.topic, args.partition);
    if let Some(kind) = &args.control {
        let (key, value) = control::encode_marker(kind == "commit", args.coordinator_epoch);
        let marker = NewRecord {
            key: Some(key),
            value: Some(value),
            headers: Vec::new(),
            timestamp: now,
        };
        let spec = BatchSpec {
            control: true,
            transactional: true,
            base_sequence: -1,
            compression: Compression::None,
            ..spec
        };
        let (offsets, _) = replicas.append(&spec, &[marker])?;
        if args.format == Format::Text {
            writeln!(
                out,
                "{} {} marker for producer {} at offset {}",
                crate::report::table::escape_cell(&name),
                kind.to_uppercase(),
                spec.producer_id,
                offsets.start()
            )?;
        }
        written.push(BatchOut {
            topic: args.topic.clone(),
            partition: args.partition,
            first_offset: *offsets.start(),
            last_offset: *offsets.end(),
            records: 1,
            control: Some(kind.clone()),
        });
        replicas.close()?;
        return Ok(Outcome::Clean);
    }
    let stdin = std::io::stdin();
    let mut batch = Vec::with_capacity(args.batch_size as usize);
    // The least the pending batch will take uncompressed: once that is over
    // the limit the batch will be refused (the broker's
    // RecordTooLargeException, `LogValidator`), so it is refused at once
    // instead of after reading and encoding gigabytes.
    let mut at_least = HEADER_LEN as u64;
    for (n, line) in stdin.lock().lines().enumerate() {
        let line = line.context("read stdin")?;
        let record =
            parse_line(&line, args, now).with_context(|| format!("stdin line {}", n + 1))?;
        at_least += record.min_encoded_len();
        batch.push(record);
        if args.compression == Compression::None && at_least > max_message_bytes {
            anyhow::bail!(
                "{name}: a batch of {} records (stdin lines {}..={}) is at least {at_least} bytes, \
                 over the limit of {} (Kafka's max.message.bytes); nothing was written",
                batch.len(),
                n + 2 - batch.len(),
                n + 1,
                max_message_bytes
            );
        }
        if batch.len() == args.batch_size as usize {
            flush(&mut replicas, &mut spec, &mut batch, args, written, out)?;
            at_least = HEADER_LEN as u64;
        }
    }
    if !batch.is_empty() {
        flush(&mut replicas, &mut spec, &mut batch, args, written, out)?;
    }
    replicas.close()?;
    Ok(Outcome::Clean)
}

fn flush(
    replicas: &mut Replicas,
    spec: &mut BatchSpec,
    batch: &mut Vec<NewRecord>,
    args: &ProduceArgs,
    written: &mut Vec<BatchOut>,
    out: &mut Output,
) -> anyhow::Result<()> {
    let (offsets, _) = replicas.append(spec, batch)?;
    if args.format == Format::Text {
        writeln!(
            out,
            "{}-{} offsets {}..={} ({})",
            crate::report::table::escape_cell(&args.topic),
            args.partition,
            offsets.start(),
            offsets.end(),
            crate::report::plural(batch.len() as u64, "record", "records")
        )?;
        out.flush()?;
    }
    written.push(BatchOut {
        topic: args.topic.clone(),
        partition: args.partition,
        first_offset: *offsets.start(),
        last_offset: *offsets.end(),
        records: batch.len() as u64,
        control: None,
    });
    if spec.base_sequence >= 0 {
        // The next batch of an idempotent producer continues the sequence,
        // wrapping at i32::MAX to 0 as Kafka's incrementSequence does.
        let next = i64::from(spec.base_sequence) + batch.len() as i64;
        spec.base_sequence = (next % (i64::from(i32::MAX) + 1)) as i32;
    }
    batch.clear();
    Ok(())
}

fn parse_line(line: &str, args: &ProduceArgs, now: i64) -> anyhow::Result<NewRecord> {
    match args.input_format.unwrap_or(InputFormat::Text) {
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
            // Strings are taken as UTF-8 bytes, {"base64": "..."} as the bytes it
            // encodes (what dump-segment prints for non-UTF-8 data), any other
            // JSON value as its JSON text.
            let bytes = |v: Option<&serde_json::Value>| -> anyhow::Result<Option<Vec<u8>>> {
                use base64::Engine;
                Ok(match v {
                    None | Some(serde_json::Value::Null) => None,
                    Some(serde_json::Value::String(s)) => Some(s.as_bytes().to_vec()),
                    Some(serde_json::Value::Object(o))
                        if o.len() == 1 && o.contains_key("base64") =>
                    {
                        let text = o
                            .get("base64")
                            .and_then(|b| b.as_str())
                            .context("base64 must be a string")?;
                        Some(
                            base64::engine::general_purpose::STANDARD
                                .decode(text)
                                .context("invalid base64")?,
                        )
                    }
                    Some(other) => Some(other.to_string().into_bytes()),
                })
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
                        headers.push((key.as_bytes().to_vec(), bytes(h.get("value"))?));
                    }
                }
                Some(serde_json::Value::Object(map)) => {
                    for (k, v) in map {
                        headers.push((k.as_bytes().to_vec(), bytes(Some(v))?));
                    }
                }
                Some(_) => bail!("headers must be an array or an object"),
            }
            let timestamp = match obj.get("timestamp") {
                None | Some(serde_json::Value::Null) => now,
                Some(t) => t.as_i64().context("timestamp must be an integer (ms)")?,
            };
            Ok(NewRecord {
                key: bytes(obj.get("key"))?,
                value: bytes(obj.get("value"))?,
                headers,
                timestamp,
            })
        }
    }
}

impl crate::cmd::CommandEntry for ProduceArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "printf 'k1\\tv1\\n' | klog produce --topic orders --key-separator '\\t' DIR",
        "append records read from stdin",
    )];
    const SEE_ALSO: &'static [&'static str] = &["dump-segment", "group-demo", "writers(7)"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/produce.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<ProduceReport>()]
    }
}
