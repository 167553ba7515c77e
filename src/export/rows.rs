//! The rows of an export, built from one walk of each partition.
//!
//! Invariant: every entry the walk hands out becomes a `batches` row and
//! its records `records` rows (filters and read_committed aside); every
//! damage the walk meets, every batch whose records do not decode and
//! every segment that cannot be read becomes a `findings` row.

use std::path::Path;
use std::sync::Mutex;

use super::parquet::{Run, Table, Val};
use super::{tables, Broker, Decode, ExportOptions, Exported};
use crate::error::{Error, Result};
use crate::format::{control, BatchView, Compression, Entry};
use crate::inspect::select::{ReadCommittedView, RecordFilter, Shown};
use crate::log::findings::{Finding, Kind};
use crate::log::{Partition, Policy};
use crate::txn::PartitionState;

/// The one-file tables, shared by the jobs.
pub struct Shared {
    tables: Vec<(&'static str, Mutex<Table>)>,
    records: Mutex<(u64, u64)>,
    findings: Mutex<Vec<Finding>>,
}

impl Shared {
    /// Start the one-file tables in `out`.
    pub fn create(out: &Path, opts: &ExportOptions) -> Result<Self> {
        let mut tables = Vec::new();
        for (name, cols) in [
            ("batches", tables::BATCHES),
            ("partitions", tables::PARTITIONS),
            ("findings", tables::FINDINGS),
            ("producers", tables::PRODUCERS),
            ("transactions", tables::TRANSACTIONS),
            ("offsets", tables::OFFSETS),
            ("offset_history", tables::OFFSET_HISTORY),
        ] {
            if name == "offset_history" && !opts.history {
                continue;
            }
            let dir = out.join(name);
            crate::log::durable::create_dir_all(&crate::log::durable::Disk, &dir)?;
            let t = Table::create(
                &dir.join(format!("{name}.parquet")),
                cols,
                opts.limits,
                opts.codec,
            )?;
            tables.push((name, Mutex::new(t)));
        }
        Ok(Shared {
            tables,
            records: Mutex::new((0, 0)),
            findings: Mutex::new(Vec::new()),
        })
    }

    /// Add a row to the table `name`.
    fn push(&self, name: &str, row: &[Val<'_>]) -> Result<()> {
        let Some((_, t)) = self.tables.iter().find(|(n, _)| *n == name) else {
            return Ok(());
        };
        t.lock()
            .map_err(|_| Error::layout(Path::new(name), "a job failed while writing this table"))?
            .push(row)
    }

    /// Add a finding: a `findings` row, and kept for the caller.
    fn finding(&self, f: &Finding, p: Option<&Partition>, b: &Broker) -> Result<()> {
        let file = f.file.to_string_lossy();
        self.push(
            "findings",
            &[
                p.map_or(Val::Null, |p| Val::Str(&p.topic)),
                p.map_or(Val::Null, |p| Val::I32(p.partition)),
                Val::Str(f.kind.name()),
                Val::Str(f.severity.name()),
                Val::Str(&file),
                Val::I64(f.position as i64),
                Val::I64(f.byte as i64),
                f.offset.map_or(Val::Null, Val::I64),
                f.producer_id.map_or(Val::Null, Val::I64),
                Val::Str(&f.detail),
                b.node_id.map_or(Val::Null, Val::I32),
                Val::Str(&b.log_dir),
            ],
        )?;
        if let Ok(mut all) = self.findings.lock() {
            all.push(f.clone());
        }
        Ok(())
    }

    /// Close every file; what was written and found.
    pub fn finish(self) -> Result<Exported> {
        let mut exported = Exported::default();
        let (files, rows) = self.records.into_inner().unwrap_or_default();
        exported.files = files;
        exported.rows.insert("records", rows);
        for (name, t) in self.tables {
            let t = t.into_inner().map_err(|_| {
                Error::layout(Path::new(name), "a job failed while writing this table")
            })?;
            exported.rows.insert(name, t.finish()?);
            exported.files += 1;
        }
        exported.findings = self.findings.into_inner().unwrap_or_default();
        Ok(exported)
    }
}

/// The outcome of a transactional batch of producer `pid` at `base`, as
/// the partition's transaction analysis left it.
fn outcome(st: &PartitionState, pid: i64, base: i64) -> &'static str {
    if st
        .aborted
        .iter()
        .any(|a| a.producer_id == pid && a.first_offset <= base && base <= a.last_offset)
    {
        "aborted"
    } else if st
        .producers
        .get(&pid)
        .and_then(|p| p.open)
        .is_some_and(|o| o.first_offset <= base)
    {
        "open"
    } else {
        "committed"
    }
}

/// The text of `bytes` for `key_text`/`value_text`.
fn text(decode: Decode, bytes: Option<&[u8]>) -> Option<&str> {
    let s = std::str::from_utf8(bytes?).ok()?;
    match decode {
        Decode::None => None,
        Decode::Utf8 => Some(s),
        Decode::Json => serde_json::from_str::<serde::de::IgnoredAny>(s)
            .is_ok()
            .then_some(s),
    }
}

/// The values of a batch's records that differ record by record, a
/// column each (`key_text` and `value_text` with `--decode` only).
#[derive(Default)]
struct Each<'a> {
    offset: Vec<Val<'a>>,
    timestamp: Vec<Val<'a>>,
    key: Vec<Val<'a>>,
    value: Vec<Val<'a>>,
    key_text: Vec<Val<'a>>,
    value_text: Vec<Val<'a>>,
    sequence: Vec<Val<'a>>,
}

/// The records file of one segment, opened at its first row.
struct SegmentOut {
    base_offset: i64,
    table: Option<Table>,
}

/// Export one partition: its records (a file per segment), batches,
/// producers, transactions, its `partitions` row and its findings.
pub fn export_partition(
    p: &Partition,
    broker: &Broker,
    out: &Path,
    opts: &ExportOptions,
    shared: &Shared,
) -> Result<()> {
    let high_watermark = crate::log::checkpoint::high_watermark(p).ok().flatten();
    let st = crate::txn::analyze(
        p,
        &crate::txn::TxnOptions {
            high_watermark,
            limits: opts.decode_limits,
            ..Default::default()
        },
    )?;
    let committed = opts.read_committed.then(|| ReadCommittedView {
        last_stable: st.last_stable_offset(),
        aborted: st.aborted.clone(),
    });
    for (path, why) in &p.unreadable {
        let f = Finding::new(Kind::NotRegularFile, path, 0, None, *why);
        shared.finding(&f, Some(p), broker)?;
    }
    let filter = RecordFilter::new(opts.offsets, opts.times, (None, None), None);
    let dir = out
        .join("records")
        .join(format!("topic={}", p.topic))
        .join(format!("partition={}", p.partition));
    let cols = if opts.decode == Decode::None {
        tables::RECORDS
    } else {
        tables::RECORDS_TEXT
    };
    let mut seg: Option<SegmentOut> = None;
    let (mut files, mut rows) = (0u64, 0u64);
    let mut scratch = Vec::new();
    let policy = Policy {
        meter: opts.meter,
        ..Policy::VALID_ENTRIES
    };
    let mut walk = p.walk_from(opts.offsets.0.unwrap_or(i64::MIN), policy);
    while let Some(w) = walk.next_entry()? {
        let file = w.segment.log.to_string_lossy().into_owned();
        if seg
            .as_ref()
            .is_none_or(|s| s.base_offset != w.segment.base_offset)
        {
            if let Some(t) = seg.take().and_then(|s| s.table) {
                rows += t.finish()?;
                files += 1;
            }
            seg = Some(SegmentOut {
                base_offset: w.segment.base_offset,
                table: None,
            });
        }
        let batch = match w.entry {
            Entry::V2(b) => b,
            Entry::Legacy(m) => {
                let ctx = LegacyCtx {
                    p,
                    broker,
                    opts,
                    shared,
                    dir: &dir,
                    cols,
                };
                legacy(&ctx, &m, &file, &mut seg, &mut scratch)?;
                continue;
            }
        };
        let h = &batch.header;
        match filter.batch(&batch) {
            Shown::Stop => break,
            Shown::Skip => continue,
            Shown::Yes => {}
        }
        if opts.offsets.0.is_some_and(|from| h.last_offset() < from) {
            continue;
        }
        let txn_outcome = if h.is_control() {
            control_outcome(&batch, &mut scratch, opts)
        } else if h.is_transactional() {
            Some(outcome(&st, h.producer_id, h.base_offset))
        } else {
            None
        };
        let compression = Compression::label_of_id(h.compression_id());
        shared.push(
            "batches",
            &[
                Val::Str(&p.topic),
                Val::I32(p.partition),
                Val::Str(&file),
                Val::I64(batch.position as i64),
                Val::I64(h.base_offset),
                Val::I64(h.last_offset()),
                Val::I32(h.records_count),
                Val::I64(batch.bytes().len() as i64),
                Val::I32(2),
                Val::I64(i64::from(h.crc)),
                Val::I32(i32::from(h.attributes)),
                Val::Str(&compression),
                Val::Str(h.timestamp_type().name()),
                Val::Bool(h.is_transactional()),
                Val::Bool(h.is_control()),
                Val::I64(h.producer_id),
                Val::I32(i32::from(h.producer_epoch)),
                Val::I32(h.base_sequence),
                Val::I32(h.last_sequence()),
                Val::I32(h.partition_leader_epoch),
                Val::I64(h.base_timestamp),
                Val::I64(h.max_timestamp),
                txn_outcome.map_or(Val::Null, Val::Str),
                high_watermark.map_or(Val::Null, Val::I64),
                broker.node_id.map_or(Val::Null, Val::I32),
                Val::Str(&broker.log_dir),
            ],
        )?;
        if committed.as_ref().is_some_and(|v| v.shows(h) != Shown::Yes) {
            if committed
                .as_ref()
                .is_some_and(|v| v.shows(h) == Shown::Stop)
            {
                break;
            }
            continue;
        }
        let records = match batch.records(&mut scratch, opts.decode_limits) {
            Ok(r) => r,
            Err(e) => {
                let f = Finding::decode(&w.segment.log, batch.position, Some(h.base_offset), &e);
                shared.finding(&f, Some(p), broker)?;
                continue;
            }
        };
        let Some(s) = seg.as_mut() else { continue };
        // The batch's rows column by column: what its records share is
        // given once (Run::All), the rest a value per record.
        let mut each = Each::default();
        let mut headers: Vec<(String, Option<&[u8]>)> = Vec::new();
        let mut header_runs: Vec<(usize, usize)> = Vec::new();
        for r in records {
            let r = match r {
                Ok(r) => r,
                Err(e) => {
                    let f =
                        Finding::decode(&w.segment.log, batch.position, Some(h.base_offset), &e);
                    shared.finding(&f, Some(p), broker)?;
                    break;
                }
            };
            if !filter.wants(&r) {
                continue;
            }
            let from = headers.len();
            // Kafka reads a header key as UTF-8, a malformed byte replaced
            // (`Utils.utf8`): the same here.
            headers.extend(
                r.headers()
                    .map(|hv| (String::from_utf8_lossy(hv.key).into_owned(), hv.value)),
            );
            header_runs.push((from, headers.len()));
            let value = if opts.values { r.value } else { None };
            let sequence = if h.base_sequence < 0 {
                -1
            } else {
                // Kafka's sequences wrap at i32::MAX (DefaultRecordBatch.incrementSequence).
                (i64::from(h.base_sequence) + i64::from(r.offset_delta))
                    .rem_euclid(i64::from(i32::MAX) + 1) as i32
            };
            each.offset.push(Val::I64(r.offset));
            each.timestamp.push(Val::I64(r.timestamp));
            each.key.push(r.key.map_or(Val::Null, Val::Bytes));
            each.value.push(value.map_or(Val::Null, Val::Bytes));
            if opts.decode != Decode::None {
                each.key_text
                    .push(text(opts.decode, r.key).map_or(Val::Null, Val::Str));
                each.value_text
                    .push(text(opts.decode, value).map_or(Val::Null, Val::Str));
            }
            each.sequence.push(Val::I32(sequence));
        }
        let n = each.offset.len();
        if n == 0 {
            continue;
        }
        let header_vals: Vec<Val<'_>> = header_runs
            .iter()
            .map(|&(a, b)| Val::Headers(headers.get(a..b).unwrap_or_default()))
            .collect();
        let mut runs: Vec<Run<'_>> = Vec::with_capacity(cols.len());
        runs.extend([
            Run::Each(&each.offset),
            Run::Each(&each.timestamp),
            Run::All(Val::Str(h.timestamp_type().name())),
            Run::Each(&each.key),
            Run::Each(&each.value),
        ]);
        if opts.decode != Decode::None {
            runs.push(Run::Each(&each.key_text));
            runs.push(Run::Each(&each.value_text));
        }
        runs.extend([
            Run::Each(&header_vals),
            Run::All(Val::I64(h.producer_id)),
            Run::All(Val::I32(i32::from(h.producer_epoch))),
            Run::Each(&each.sequence),
            Run::All(Val::Bool(h.is_transactional())),
            Run::All(Val::Bool(h.is_control())),
            Run::All(txn_outcome.map_or(Val::Null, Val::Str)),
            Run::All(Val::I64(h.base_offset)),
            Run::All(Val::I32(h.partition_leader_epoch)),
            Run::All(Val::Str(&compression)),
            Run::All(Val::I32(2)),
            Run::All(Val::Str(&file)),
            Run::All(Val::I64(batch.position as i64)),
            Run::All(broker.node_id.map_or(Val::Null, Val::I32)),
            Run::All(Val::Str(&broker.log_dir)),
        ]);
        table_of(s, &dir, cols, opts)?.push_run(n, &runs)?;
    }
    let damage = walk.take_damage();
    drop(walk);
    for d in damage {
        shared.finding(&d.finding(), Some(p), broker)?;
    }
    if let Some(t) = seg.take().and_then(|s| s.table) {
        rows += t.finish()?;
        files += 1;
    }
    if let Ok(mut r) = shared.records.lock() {
        r.0 += files;
        r.1 += rows;
    }
    partition_rows(p, broker, &st, high_watermark, shared)
}

/// The records file of segment `s`, created at its first row.
fn table_of<'s>(
    s: &'s mut SegmentOut,
    dir: &Path,
    cols: &'static [super::parquet::Col],
    opts: &ExportOptions,
) -> Result<&'s mut Table> {
    if s.table.is_none() {
        crate::log::durable::create_dir_all(&crate::log::durable::Disk, dir)?;
        let path = dir.join(format!("{:020}.parquet", s.base_offset));
        s.table = Some(Table::create(&path, cols, opts.limits, opts.codec)?);
    }
    s.table
        .as_mut()
        .ok_or_else(|| Error::layout(dir, "no records file"))
}

/// A control batch's outcome: its marker's (COMMIT: committed, ABORT:
/// aborted); none for other control records.
fn control_outcome(
    batch: &BatchView<'_>,
    scratch: &mut Vec<u8>,
    opts: &ExportOptions,
) -> Option<&'static str> {
    let r = batch
        .records(scratch, opts.decode_limits)
        .ok()?
        .next()?
        .ok()?;
    match control::decode(r.key, r.value, r.position).ok()?.kind {
        control::ControlType::Commit => Some("committed"),
        control::ControlType::Abort => Some("aborted"),
        _ => None,
    }
}

/// Where a legacy entry's rows go.
struct LegacyCtx<'a> {
    p: &'a Partition,
    broker: &'a Broker,
    opts: &'a ExportOptions,
    shared: &'a Shared,
    dir: &'a Path,
    cols: &'static [super::parquet::Col],
}

/// A legacy (magic 0/1) entry: its `batches` row and its messages' rows.
fn legacy(
    ctx: &LegacyCtx<'_>,
    m: &crate::format::legacy::LegacyView<'_>,
    file: &str,
    seg: &mut Option<SegmentOut>,
    scratch: &mut Vec<u8>,
) -> Result<()> {
    let LegacyCtx {
        p,
        broker,
        opts,
        shared,
        dir,
        cols,
    } = *ctx;
    let compression = m
        .compression()
        .map_or_else(|| "unknown".to_string(), |c| c.name().to_string());
    let ts_type = m.timestamp_type().map(|t| t.name());
    let messages = match m.messages(scratch, opts.decode_limits) {
        Ok(ms) => ms.collect::<Vec<_>>(),
        Err(e) => {
            let f = Finding::decode(p.dir.join(file), m.position, Some(m.offset), &e);
            shared.finding(&f, Some(p), broker)?;
            return Ok(());
        }
    };
    let first = messages.first().map_or(m.offset, |x| x.offset);
    shared.push(
        "batches",
        &[
            Val::Str(&p.topic),
            Val::I32(p.partition),
            Val::Str(file),
            Val::I64(m.position as i64),
            Val::I64(first),
            Val::I64(m.offset),
            Val::I32(messages.len() as i32),
            Val::I64(m.bytes().len() as i64),
            Val::I32(i32::from(m.magic)),
            Val::I64(i64::from(m.crc)),
            Val::I32(i32::from(m.attributes)),
            Val::Str(&compression),
            ts_type.map_or(Val::Null, Val::Str),
            Val::Bool(false),
            Val::Bool(false),
            Val::I64(-1),
            Val::I32(-1),
            Val::I32(-1),
            Val::I32(-1),
            Val::I32(-1),
            Val::Null,
            Val::I64(m.timestamp),
            Val::Null,
            Val::Null,
            broker.node_id.map_or(Val::Null, Val::I32),
            Val::Str(&broker.log_dir),
        ],
    )?;
    let Some(s) = seg.as_mut() else {
        return Ok(());
    };
    for msg in messages {
        let in_range = opts.offsets.0.is_none_or(|f| msg.offset >= f)
            && opts.offsets.1.is_none_or(|t| msg.offset <= t)
            && opts.times.0.is_none_or(|t| msg.timestamp >= t)
            && opts.times.1.is_none_or(|t| msg.timestamp <= t);
        if !in_range {
            continue;
        }
        let value = if opts.values { msg.value } else { None };
        let t = table_of(s, dir, cols, opts)?;
        let mut row: Vec<Val<'_>> = vec![
            Val::I64(msg.offset),
            Val::I64(msg.timestamp),
            ts_type.map_or(Val::Null, Val::Str),
            msg.key.map_or(Val::Null, Val::Bytes),
            value.map_or(Val::Null, Val::Bytes),
        ];
        if opts.decode != Decode::None {
            row.push(text(opts.decode, msg.key).map_or(Val::Null, Val::Str));
            row.push(text(opts.decode, value).map_or(Val::Null, Val::Str));
        }
        row.extend([
            Val::Headers(&[]),
            Val::I64(-1),
            Val::I32(-1),
            Val::I32(-1),
            Val::Bool(false),
            Val::Bool(false),
            Val::Null,
            Val::I64(first),
            Val::I32(-1),
            Val::Str(&compression),
            Val::I32(i32::from(m.magic)),
            Val::Str(file),
            Val::I64(m.position as i64),
            broker.node_id.map_or(Val::Null, Val::I32),
            Val::Str(&broker.log_dir),
        ]);
        t.push(&row)?;
    }
    Ok(())
}

/// The partition's `partitions`, `producers` and `transactions` rows.
fn partition_rows(
    p: &Partition,
    broker: &Broker,
    st: &PartitionState,
    high_watermark: Option<i64>,
    shared: &Shared,
) -> Result<()> {
    let node = broker.node_id.map_or(Val::Null, Val::I32);
    let dir = p.dir.to_string_lossy();
    shared.push(
        "partitions",
        &[
            Val::Str(&p.topic),
            Val::I32(p.partition),
            Val::I64(p.segments.len() as i64),
            Val::I64(st.log_start),
            Val::I64(st.log_end),
            high_watermark.map_or(Val::Null, Val::I64),
            Val::I64(st.last_stable_offset()),
            Val::Str(&dir),
            Val::Str(broker.shutdown),
            node,
            Val::Str(&broker.log_dir),
        ],
    )?;
    for (pid, ps) in &st.producers {
        shared.push(
            "producers",
            &[
                Val::Str(&p.topic),
                Val::I32(p.partition),
                Val::I64(*pid),
                Val::I32(i32::from(ps.epoch)),
                Val::I32(ps.last_sequence),
                Val::I64(ps.first_offset),
                Val::I64(ps.last_offset),
                Val::I64(ps.last_timestamp),
                Val::Bool(ps.transactional),
                Val::I64(ps.batches as i64),
                Val::I64(ps.committed as i64),
                Val::I64(ps.aborted as i64),
                ps.open.map_or(Val::Null, |o| Val::I64(o.first_offset)),
                node,
                Val::Str(&broker.log_dir),
            ],
        )?;
    }
    let aborted = st.aborted.iter().map(|a| {
        (
            a.producer_id,
            a.first_offset,
            Some(a.last_offset),
            "aborted",
        )
    });
    let open = st
        .open_transactions()
        .into_iter()
        .map(|(pid, o)| (pid, o.first_offset, None, "open"));
    for (pid, first, last, what) in aborted.chain(open) {
        shared.push(
            "transactions",
            &[
                Val::Str(&p.topic),
                Val::I32(p.partition),
                Val::I64(pid),
                Val::I64(first),
                last.map_or(Val::Null, Val::I64),
                Val::Str(what),
                node,
                Val::Str(&broker.log_dir),
            ],
        )?;
    }
    Ok(())
}

/// The `offsets` rows (and `offset_history`'s with `--history`): the
/// offsets topic of the given directories replayed.
pub fn export_offsets(
    dirs: &[&crate::log::DataDir],
    broker: &Broker,
    opts: &ExportOptions,
    shared: &Shared,
) -> Result<()> {
    let mut replay = crate::offsets::Replay::new(crate::offsets::ReplayOptions {
        history: opts.history,
        limits: opts.decode_limits,
        ..Default::default()
    });
    for d in dirs {
        for p in d
            .live()
            .filter(|p| crate::offsets::is_offsets_topic(&p.topic))
        {
            replay.replay_partition(p)?;
        }
    }
    let node = broker.node_id.map_or(Val::Null, Val::I32);
    for (group, topic, partition, c) in replay.commits() {
        shared.push(
            "offsets",
            &[
                Val::Str(group),
                Val::Str(topic),
                Val::I32(partition),
                Val::I64(c.offset),
                Val::I32(c.leader_epoch),
                Val::Str(&c.metadata),
                Val::I64(c.commit_timestamp),
                node,
                Val::Str(&broker.log_dir),
            ],
        )?;
    }
    for e in &replay.history {
        shared.push(
            "offset_history",
            &[
                Val::I32(e.log_partition),
                Val::I64(e.log_offset),
                Val::I64(e.position as i64),
                Val::Str(e.kind.name()),
                Val::Str(&e.group),
                Val::Str(&e.topic),
                Val::I32(e.partition),
                e.offset.map_or(Val::Null, Val::I64),
                e.commit_timestamp.map_or(Val::Null, Val::I64),
                node,
                Val::Str(&broker.log_dir),
            ],
        )?;
    }
    Ok(())
}
