//! Power loss at every sync point of produce, commit, tombstone and repair
//! (the tail cut, --force-truncate and --salvage).
//!
//! Each case runs the library operations behind a command through a
//! [`CrashStorage`]: once to count its sync calls, then once per call with
//! the power lost at that call, and once more to the end. After each run the
//! durable image (only synced bytes and synced directory entries) is
//! recovered the way the next writer would — the appender's open, and the
//! repair when the open refuses a damaged tail — and checked:
//! - every acknowledged record, commit and tombstone is there, every
//!   acknowledged ABORT marker is in a `.txnindex`, and every closed segment
//!   keeps the indexes the appender wrote for it;
//! - every byte a repair cut is in the durable image, in its file or in
//!   its sidecar, and running the repair again finishes it;
//! - a run that was acknowledged to its end left nothing for recovery: the
//!   durable image is the live image.
//!
//! The live image (a process killed with SIGKILL: the page cache survives)
//! must recover too — it always did, which is why the kill -9 test in
//! tests/cli/crash.rs cannot tell a missing fsync — and so must a torn
//! image (the durable one plus half of each file's unsynced appends).
//!
//! `every_sync_point_is_needed` then deletes one sync point at a time
//! (its syncs become no-ops) and requires some case to fail: no sync in the
//! write paths is there for nothing.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use kaen_log::format::{control, BatchSpec, DecodeLimits, Entry, NewRecord};
use kaen_log::inspect::recovery::{check_indexes, rebuild_indexes};
use kaen_log::inspect::repair::{self, Action, Plan, RepairOptions};
use kaen_log::log::read::{SegmentReader, Tail};
use kaen_log::log::storage::{Storage, SyncPoint};
use kaen_log::log::{AppendConfig, Partition, PartitionAppender};
use kaen_log::offsets::{commit_record, tombstone_records, write_target, Replay, ReplayOptions};
use kaen_log::Error;

use crate::crash_storage::{tree, CrashStorage};

/// What a run acknowledged before the power went.
#[derive(Debug, Default)]
struct Acks {
    /// Acknowledged records: offset -> value.
    records: BTreeMap<i64, Option<Vec<u8>>>,
    /// Values of the append in flight when the power went (may or may not be there).
    in_flight: Vec<Option<Vec<u8>>>,
    /// The index interval of the appends (closed segments are checked against it).
    index_interval: Option<u64>,
    /// The offset of an acknowledged ABORT marker.
    abort_marker: Option<i64>,
    /// The committed offsets acknowledged, in order, and the one in flight.
    commits: Vec<u64>,
    commit_in_flight: Option<u64>,
    /// Whether the tombstones were acknowledged.
    tombstoned: bool,
    /// Whether the appender was closed (its time index sealed).
    closed: bool,
    /// The partitionLeaderEpoch of the appends that a leader-epoch-checkpoint must hold.
    epoch: Option<i32>,
    /// A file outside the written folder that must keep its bytes (a hard link's other name).
    untouched: Option<(PathBuf, Vec<u8>)>,
    /// The repair plan and the partition's files before it ran.
    plan: Option<Plan>,
    before: BTreeMap<PathBuf, Vec<u8>>,
}

type Run = fn(&CrashStorage, &Path, &mut Acks) -> kaen_log::Result<()>;
type Check = fn(&Path, &Acks) -> Result<(), String>;

struct Case {
    name: &'static str,
    /// Builds the starting state (all of it durable).
    setup: fn(&Path),
    run: Run,
    check: Check,
}

const TOPIC: &str = "t";

fn config(segment_bytes: u64, index_interval_bytes: u64) -> AppendConfig {
    AppendConfig {
        segment_bytes,
        index_interval_bytes,
        partition_leader_epoch: Some(0),
        // The producer state that indexes ABORT markers, as every writer of markers hands in.
        aborted_txn: Some(kaen_log::txn::aborted_txn),
        ..AppendConfig::default()
    }
}

fn record(value: Vec<u8>, ts: i64) -> NewRecord {
    NewRecord {
        key: None,
        value: Some(value),
        headers: Vec::new(),
        timestamp: ts,
    }
}

fn value(k: usize) -> Vec<u8> {
    format!("v{k:03}-{}", "x".repeat(k * 37 % 90)).into_bytes()
}

/// Append through `appender`, recording the values as acknowledged once it returns.
fn append<S: Storage>(
    appender: &mut PartitionAppender<S>,
    acks: &mut Acks,
    spec: &BatchSpec,
    records: &[NewRecord],
) -> kaen_log::Result<()> {
    acks.in_flight = records.iter().map(|r| r.value.clone()).collect();
    let offsets = appender.append(spec, records)?;
    for (offset, r) in offsets.zip(records) {
        acks.records.insert(offset, r.value.clone());
    }
    acks.in_flight.clear();
    Ok(())
}

/// `n` batches of one record each, through the real disk.
fn produce_on_disk(data: &Path, n: usize, cfg: AppendConfig) {
    let mut a = PartitionAppender::open(data, TOPIC, 0, cfg).unwrap();
    for k in 0..n {
        a.append(
            &BatchSpec::default(),
            &[record(value(1000 + k), 1_700_000_000_000 + k as i64)],
        )
        .unwrap();
    }
}

/// Every record of a partition folder: offset -> value. Fails on any damage.
fn read_records(dir: &Path) -> Result<BTreeMap<i64, Option<Vec<u8>>>, String> {
    let mut out = BTreeMap::new();
    if !dir.is_dir() {
        return Ok(out);
    }
    let p = Partition::open(dir).map_err(|e| e.to_string())?;
    let mut scratch = Vec::new();
    for seg in &p.segments {
        let mut r = SegmentReader::open(&seg.log).map_err(|e| e.to_string())?;
        while let Some(e) = r.next_entry().map_err(|e| e.to_string())? {
            let Entry::V2(b) = e else {
                return Err(format!("a legacy entry in {}", seg.log.display()));
            };
            if !b.crc_valid() {
                return Err(format!("bad CRC at {}:{}", seg.log.display(), b.position));
            }
            let records = b
                .records(&mut scratch, DecodeLimits::default())
                .map_err(|e| e.to_string())?;
            for rec in records {
                let rec = rec.map_err(|e| e.to_string())?;
                out.insert(rec.offset, rec.value.map(<[u8]>::to_vec));
            }
        }
        if r.tail() != Some(Tail::Clean) {
            return Err(format!("{}: tail {:?}", seg.log.display(), r.tail()));
        }
    }
    Ok(out)
}

/// What the next writer does with the image: open the partition (which
/// refuses a damaged tail), repairing first if it must.
fn recover(data: &Path, topic: &str) -> Result<(), String> {
    if !data.join(format!("{topic}-0")).is_dir() {
        return Ok(());
    }
    match PartitionAppender::open(data, topic, 0, AppendConfig::default()) {
        Ok(_) => Ok(()),
        Err(Error::DamagedTail { .. }) => {
            let p = Partition::open(&data.join(format!("{topic}-0"))).map_err(|e| e.to_string())?;
            let plan = repair::plan(&p, &RepairOptions::default()).map_err(|e| e.to_string())?;
            if !plan.refused.is_empty() {
                return Err(format!("the repair refuses: {plan:?}"));
            }
            repair::execute(&plan, &RepairOptions::default()).map_err(|e| e.to_string())?;
            PartitionAppender::open(data, topic, 0, AppendConfig::default())
                .map(drop)
                .map_err(|e| format!("open after the repair: {e}"))
        }
        Err(e) => Err(format!("open after the crash: {e}")),
    }
}

/// Indexes that disagree with their log (a missing one is the broker's to rebuild).
fn index_problems(dir: &Path) -> Result<(), String> {
    if !dir.is_dir() {
        return Ok(());
    }
    let segments = Partition::open(dir).map_err(|e| e.to_string())?.segments;
    for (i, seg) in segments.iter().enumerate() {
        let problems: Vec<_> = check_indexes(seg, i + 1 == segments.len())
            .map_err(|e| e.to_string())?
            .into_iter()
            .filter(|p| p.kind != "index_missing")
            .collect();
        if !problems.is_empty() {
            return Err(format!("{}: {problems:?}", seg.log.display()));
        }
    }
    Ok(())
}

/// Recover `t-0` and check every acknowledged record is there, offsets dense.
fn check_records(image: &Path, acks: &Acks) -> Result<(), String> {
    let data = image.join("data");
    recover(&data, TOPIC)?;
    let part = data.join("t-0");
    let got = read_records(&part)?;
    for (offset, v) in &acks.records {
        if got.get(offset) != Some(v) {
            return Err(format!(
                "acknowledged offset {offset} lost: found {:?}",
                got.get(offset)
                    .map(|v| v.as_ref().map(|b| String::from_utf8_lossy(b).into_owned()))
            ));
        }
    }
    let first = got.keys().next().copied().unwrap_or(0);
    for (i, offset) in got.keys().enumerate() {
        if *offset != first + i as i64 {
            return Err(format!("offsets not dense at {offset}"));
        }
    }
    // Beyond the acknowledged records, at most the batch in flight.
    let extra: Vec<_> = got
        .iter()
        .filter(|(o, _)| !acks.records.contains_key(o))
        .map(|(_, v)| v.clone())
        .collect();
    if !extra.is_empty() && extra != acks.in_flight {
        return Err(format!("{} records never sent", extra.len()));
    }
    if let Some(marker) = acks.abort_marker {
        aborted_indexed(&part, marker)?;
    }
    if let Some(interval) = acks.index_interval {
        closed_segments_indexed(&part, interval)?;
    }
    if acks.closed {
        time_index_sealed(&part)?;
    }
    if let Some(epoch) = acks.epoch {
        epochs_cover(&part, epoch)?;
    }
    if let Some((path, bytes)) = &acks.untouched {
        let now = std::fs::read(image.join(path)).map_err(|e| e.to_string())?;
        if &now != bytes {
            return Err(format!("{} changed under its other name", path.display()));
        }
    }
    index_problems(&part)
}

/// After a close, the active segment's time index ends with the segment's
/// largest timestamp, as a broker's clean shutdown leaves it
/// (`LogSegment.close`): a broker that trusts it takes the segment's
/// largest timestamp from there.
fn time_index_sealed(part: &Path) -> Result<(), String> {
    let p = Partition::open(part).map_err(|e| e.to_string())?;
    let Some(seg) = p.segments.last() else {
        return Ok(());
    };
    let mut r = SegmentReader::open(&seg.log).map_err(|e| e.to_string())?;
    let mut max = -1;
    while let Some(e) = r.next_entry().map_err(|e| e.to_string())? {
        if let Entry::V2(b) = e {
            max = max.max(b.header.max_timestamp);
        }
    }
    let bytes = std::fs::read(seg.log.with_extension("timeindex")).unwrap_or_default();
    let entries = kaen_log::format::index::time_entries(&bytes, seg.base_offset)
        .map_err(|e| e.to_string())?;
    let last = entries.last().map_or(-1, |e| e.timestamp);
    if last != max {
        return Err(format!(
            "segment {}: the time index ends at {last}, the segment's largest timestamp is {max}",
            seg.base_offset
        ));
    }
    Ok(())
}

/// Every batch stamped with `epoch` lies at or after where the
/// leader-epoch-checkpoint starts that epoch: a broker that loads the
/// partition never holds a batch whose epoch its cache lacks.
fn epochs_cover(part: &Path, epoch: i32) -> Result<(), String> {
    let entries =
        kaen_log::log::checkpoint::read_leader_epochs(&part.join("leader-epoch-checkpoint"))
            .map_err(|e| e.to_string())?
            .ok_or("no leader-epoch-checkpoint")?;
    let p = Partition::open(part).map_err(|e| e.to_string())?;
    for seg in &p.segments {
        let mut r = SegmentReader::open(&seg.log).map_err(|e| e.to_string())?;
        while let Some(e) = r.next_entry().map_err(|e| e.to_string())? {
            let Entry::V2(b) = e else { continue };
            if b.header.partition_leader_epoch != epoch {
                continue;
            }
            let start = entries.iter().find(|(e, _)| *e == epoch).map(|(_, s)| *s);
            if start.is_none_or(|s| s > b.header.base_offset) {
                return Err(format!(
                    "a batch of epoch {epoch} at offset {} but the checkpoint holds {entries:?}",
                    b.header.base_offset
                ));
            }
        }
    }
    Ok(())
}

/// A segment the appender rolled away from has the indexes it wrote, its
/// final time-index entry included: a broker that finds
/// `.kafka_cleanshutdown` trusts them as they are, and takes a segment's
/// largest timestamp (for time retention) from its time index's last entry.
fn closed_segments_indexed(part: &Path, interval: u64) -> Result<(), String> {
    if !part.is_dir() {
        return Ok(());
    }
    let p = Partition::open(part).map_err(|e| e.to_string())?;
    let closed = p.segments.len().saturating_sub(1);
    for seg in &p.segments[..closed] {
        let len = std::fs::metadata(&seg.log)
            .map_err(|e| e.to_string())?
            .len();
        let (index, timeindex) =
            rebuild_indexes(&seg.log, seg.base_offset, len, interval).map_err(|e| e.to_string())?;
        for (ext, want) in [("index", index), ("timeindex", timeindex)] {
            let have = std::fs::read(seg.log.with_extension(ext)).unwrap_or_default();
            if have != want {
                return Err(format!(
                    "closed segment {}: {ext} has {} bytes, the append path wrote {}",
                    seg.base_offset,
                    have.len(),
                    want.len()
                ));
            }
        }
    }
    Ok(())
}

/// The acknowledged ABORT marker at `marker` is in a `.txnindex`: without it
/// a reader that trusts the index (a broker after a clean shutdown) serves
/// the aborted records to read_committed consumers.
fn aborted_indexed(part: &Path, marker: i64) -> Result<(), String> {
    for (name, bytes) in tree(part) {
        if name.extension().is_some_and(|e| e == "txnindex") {
            let (entries, _) =
                kaen_log::format::index::txn_entries(&bytes).map_err(|e| e.to_string())?;
            if entries.iter().any(|e| e.last_offset == marker) {
                return Ok(());
            }
        }
    }
    Err(format!(
        "the acknowledged ABORT marker at {marker} is in no .txnindex"
    ))
}

// ---- produce -------------------------------------------------------------

fn run_produce(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    // Small segments and index intervals: rolls, index and time-index entries.
    let cfg = config(700, 150);
    acks.index_interval = Some(cfg.index_interval_bytes);
    let mut a = PartitionAppender::open_with(s.clone(), &root.join("data"), TOPIC, 0, cfg)?;
    let plain = BatchSpec::default();
    let txn = BatchSpec {
        producer_id: 7,
        producer_epoch: 0,
        base_sequence: 0,
        transactional: true,
        ..BatchSpec::default()
    };
    for k in 0..14 {
        let ts = 1_700_000_000_000 + k as i64;
        match k {
            // A transaction, aborted: the marker gets a .txnindex entry.
            6 => append(&mut a, acks, &txn, &[record(value(k), ts)])?,
            8 => {
                let (key, v) = control::encode_marker(false, 0);
                let marker = NewRecord {
                    key: Some(key),
                    value: Some(v),
                    headers: Vec::new(),
                    timestamp: ts,
                };
                let spec = BatchSpec {
                    control: true,
                    base_sequence: -1,
                    ..txn
                };
                append(&mut a, acks, &spec, &[marker])?;
                acks.abort_marker = acks.records.keys().next_back().copied();
            }
            _ => append(
                &mut a,
                acks,
                &plain,
                &[record(value(k), ts), record(value(k + 100), ts)],
            )?,
        }
    }
    a.close()?;
    acks.closed = true;
    Ok(())
}

/// An active segment whose indexes carry preallocated zero slots, as a
/// broker's unclean shutdown leaves them: the appender cuts them first.
fn setup_padded_indexes(root: &Path) {
    let data = root.join("data");
    produce_on_disk(&data, 8, config(1 << 20, 150));
    for (ext, pad) in [("index", 80), ("timeindex", 120)] {
        let path = data.join(format!("t-0/00000000000000000000.{ext}"));
        let mut bytes = std::fs::read(&path).unwrap();
        assert!(!bytes.is_empty(), "{ext}: no entries to pad after");
        bytes.extend(std::iter::repeat_n(0u8, pad));
        std::fs::write(&path, bytes).unwrap();
    }
}

fn run_small_append(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    // The records of the setup are durable, hence acknowledged.
    for o in 0..8 {
        acks.records.insert(o, Some(value(1000 + o as usize)));
    }
    // The default interval: this batch adds no index entry.
    let mut a = PartitionAppender::open_with(
        s.clone(),
        &root.join("data"),
        TOPIC,
        0,
        AppendConfig::default(),
    )?;
    append(
        &mut a,
        acks,
        &BatchSpec::default(),
        &[record(value(1), 1_700_000_001_000)],
    )?;
    // No index interval passed: only closing gives the time index this batch's timestamp.
    a.close()?;
    acks.closed = true;
    Ok(())
}

/// Eight batches with their indexes.
fn setup_log_only_indexed(root: &Path) {
    produce_on_disk(&root.join("data"), 8, config(1 << 20, 150));
}

/// A partition with only `.log` files (no indexes at all).
fn setup_log_only(root: &Path) {
    let data = root.join("data");
    produce_on_disk(&data, 8, config(1 << 20, 150));
    for ext in ["index", "timeindex"] {
        std::fs::remove_file(data.join(format!("t-0/00000000000000000000.{ext}"))).unwrap();
    }
}

fn run_log_only(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    // The records of the setup are durable, hence acknowledged.
    for o in 0..8 {
        acks.records.insert(o, Some(value(1000 + o as usize)));
    }
    let mut a = PartitionAppender::open_with(
        s.clone(),
        &root.join("data"),
        TOPIC,
        0,
        config(1 << 20, 150),
    )?;
    for k in 0..4 {
        append(
            &mut a,
            acks,
            &BatchSpec::default(),
            &[record(value(k + 50), 1_700_000_002_000 + k as i64)],
        )?;
    }
    a.close()?;
    acks.closed = true;
    Ok(())
}

/// Appends that fail half-written (a full disk): the first write to the
/// log and the first to the offset index fail. Each failed append is cut
/// back and synced; the appends after it go on.
fn run_failing_appends(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    for o in 0..8 {
        acks.records.insert(o, Some(value(1000 + o as usize)));
    }
    let s = s
        .clone()
        .failing_append("log", 0)
        .failing_append("index", 0);
    let mut a = PartitionAppender::open_with(
        s.clone(),
        &root.join("data"),
        TOPIC,
        0,
        config(1 << 20, 150),
    )?;
    let mut failed = 0;
    for k in 0..6 {
        let rec = [record(value(k + 60), 1_700_000_003_000 + k as i64)];
        match append(&mut a, acks, &BatchSpec::default(), &rec) {
            Ok(()) => {}
            Err(e) if !s.crashed() => {
                let text = e.to_string();
                assert!(
                    text.contains("No space left")
                        && text.contains("rolled back: nothing of this append remains"),
                    "{text}"
                );
                // Not acknowledged, and nothing of it may remain.
                acks.in_flight.clear();
                failed += 1;
            }
            Err(e) => return Err(e),
        }
    }
    assert_eq!((failed, s.failed_appends()), (2, 2), "both failures met");
    a.close()?;
    acks.closed = true;
    Ok(())
}

/// An append that fails after it rolled (the batch half-written to the
/// new segment): the roll is undone with it, so the new segment's files
/// are gone and the previous segment's time index is back to its length
/// before the roll's closing entry; the appends after it roll again.
fn run_failing_after_roll(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    let s = s.clone().failing_append("log", 1);
    let part = root.join("data/t-0");
    // 150 bytes a segment: every batch rolls.
    let mut a =
        PartitionAppender::open_with(s.clone(), &root.join("data"), TOPIC, 0, config(150, 150))?;
    let mut failed = 0;
    for k in 0..3 {
        let rec = [record(value(k + 70), 1_700_000_004_000 + k as i64)];
        let before: Vec<_> = std::fs::read_dir(&part)
            .map(|d| {
                d.flatten()
                    .map(|e| (e.file_name(), e.metadata().unwrap().len()))
                    .collect()
            })
            .unwrap_or_default();
        match append(&mut a, acks, &BatchSpec::default(), &rec) {
            Ok(()) => {}
            Err(e) if !s.crashed() => {
                let text = e.to_string();
                assert!(
                    text.contains("rolled back: nothing of this append remains")
                        && text.contains("the segment it rolled to")
                        && text.contains("00000000000000000001.log, removed"),
                    "{text}"
                );
                let mut after: Vec<_> = std::fs::read_dir(&part)
                    .unwrap()
                    .flatten()
                    .map(|e| (e.file_name(), e.metadata().unwrap().len()))
                    .collect();
                let mut before = before.clone();
                before.sort();
                after.sort();
                assert_eq!(
                    after, before,
                    "the failed append after a roll left files behind"
                );
                acks.in_flight.clear();
                failed += 1;
            }
            Err(e) => return Err(e),
        }
    }
    assert_eq!((failed, s.failed_appends()), (1, 1), "the failure met");
    a.close()?;
    acks.closed = true;
    Ok(())
}

/// A Kafka partition: a leader-epoch-checkpoint saying epoch 0 from 0.
fn setup_epochs(root: &Path) {
    let data = root.join("data");
    produce_on_disk(&data, 4, config(1 << 20, 150));
    std::fs::write(data.join("t-0/leader-epoch-checkpoint"), "0\n1\n0 0\n").unwrap();
}

/// Appends under a newer leader epoch: the checkpoint gets (3, base) before
/// the first such batch is written, as `UnifiedLog.append` assigns it.
fn run_epochs(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    for o in 0..4 {
        acks.records.insert(o, Some(value(1000 + o as usize)));
    }
    acks.epoch = Some(3);
    let cfg = AppendConfig {
        partition_leader_epoch: Some(3),
        ..config(1 << 20, 150)
    };
    append_three_and_close(s, root, acks, cfg, 70, 1_700_000_004_000)
}

/// Three one-record batches appended with `cfg` (values from `first_value`,
/// timestamps from `first_ts`), then the appender closed.
fn append_three_and_close(
    s: &CrashStorage,
    root: &Path,
    acks: &mut Acks,
    cfg: AppendConfig,
    first_value: usize,
    first_ts: i64,
) -> kaen_log::Result<()> {
    let mut a = PartitionAppender::open_with(s.clone(), &root.join("data"), TOPIC, 0, cfg)?;
    for k in 0..3 {
        let rec = [record(value(k + first_value), first_ts + k as i64)];
        append(&mut a, acks, &BatchSpec::default(), &rec)?;
    }
    a.close()?;
    acks.closed = true;
    Ok(())
}

/// The active segment also has a name outside the partition folder (`cp -al`).
fn setup_linked(root: &Path) {
    let data = root.join("data");
    produce_on_disk(&data, 4, config(1 << 20, 150));
    std::fs::create_dir(root.join("backup")).unwrap();
    for ext in ["log", "index", "timeindex"] {
        std::fs::hard_link(
            data.join(format!("t-0/00000000000000000000.{ext}")),
            root.join(format!("backup/00000000000000000000.{ext}")),
        )
        .unwrap();
    }
}

/// Appending with `copy_hard_linked`: the segment's files get private copies first.
fn run_linked(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    for o in 0..4 {
        acks.records.insert(o, Some(value(1000 + o as usize)));
    }
    let backup = PathBuf::from("backup/00000000000000000000.log");
    acks.untouched = Some((backup.clone(), std::fs::read(root.join(&backup)).unwrap()));
    // Refused without the flag, before anything is written.
    let refused = PartitionAppender::open_with(
        s.clone(),
        &root.join("data"),
        TOPIC,
        0,
        config(1 << 20, 150),
    );
    assert!(
        matches!(&refused, Err(e) if e.to_string().contains("hard links")),
        "{:?}",
        refused.err()
    );
    let cfg = AppendConfig {
        copy_hard_linked: true,
        ..config(1 << 20, 150)
    };
    append_three_and_close(s, root, acks, cfg, 80, 1_700_000_005_000)
}

// ---- commit and tombstone --------------------------------------------------

const GROUP: &str = "g";
const OTHER: &str = "h";

fn committed(data: &Path, group: &str) -> Result<Option<u64>, String> {
    let target = write_target(data, group, None).map_err(|e| e.to_string())?;
    let dir = data.join(format!("{}-{}", target.topic, target.partition));
    if !dir.is_dir() {
        return Ok(None);
    }
    let mut replay = Replay::new(ReplayOptions::default());
    replay
        .replay_partition(&Partition::open(&dir).map_err(|e| e.to_string())?)
        .map_err(|e| e.to_string())?;
    Ok(replay.get(group, "orders", 0).map(|c| c.offset as u64))
}

/// `klog commit`: each commit opens the offsets partition, appends one record.
fn commit<S: Storage>(s: S, data: &Path, group: &str, offset: u64) -> kaen_log::Result<()> {
    let target = write_target(data, group, None)?;
    let mut a = PartitionAppender::open_with(
        s,
        data,
        &target.topic,
        target.partition,
        AppendConfig::default(),
    )?;
    let r = commit_record(
        group,
        "orders",
        0,
        offset,
        -1,
        "",
        1_700_000_000_000,
        kaen_log::offsets::CommitFormat::V3,
    );
    a.append(&BatchSpec::default(), &[r])?;
    a.close()
}

fn run_commits(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    let data = root.join("data");
    for offset in [5, 9, 14, 20] {
        acks.commit_in_flight = Some(offset);
        commit(s.clone(), &data, GROUP, offset)?;
        acks.commits.push(offset);
        acks.commit_in_flight = None;
    }
    Ok(())
}

fn check_commits(image: &Path, acks: &Acks) -> Result<(), String> {
    let data = image.join("data");
    let target = write_target(&data, GROUP, None).map_err(|e| e.to_string())?;
    recover(&data, &target.topic)?;
    let got = committed(&data, GROUP)?;
    let ok = got == acks.commits.last().copied() || (got.is_some() && got == acks.commit_in_flight);
    if !ok {
        return Err(format!(
            "committed offset {got:?} after acknowledging {:?}",
            acks.commits
        ));
    }
    Ok(())
}

fn setup_commits(root: &Path) {
    let data = root.join("data");
    commit(kaen_log::log::durable::Disk, &data, GROUP, 3).unwrap();
    commit(kaen_log::log::durable::Disk, &data, OTHER, 11).unwrap();
}

/// `klog tombstone`: open, replay, append the group's tombstones; then a
/// commit of another group behind them.
fn run_tombstone(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    let data = root.join("data");
    let target = write_target(&data, GROUP, None)?;
    let mut a = PartitionAppender::open_with(
        s.clone(),
        &data,
        &target.topic,
        target.partition,
        AppendConfig::default(),
    )?;
    let mut replay = Replay::new(ReplayOptions::default());
    replay.replay_partition(&Partition::open(a.dir())?)?;
    let records: Vec<_> = tombstone_records(&replay, GROUP, None, None, 1_700_000_000_500)
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    assert!(!records.is_empty());
    a.append(&BatchSpec::default(), &records)?;
    acks.tombstoned = true;
    a.close()?;
    acks.commit_in_flight = Some(12);
    commit(s.clone(), &data, OTHER, 12)?;
    acks.commits.push(12);
    Ok(())
}

fn check_tombstone(image: &Path, acks: &Acks) -> Result<(), String> {
    let data = image.join("data");
    let target = write_target(&data, GROUP, None).map_err(|e| e.to_string())?;
    recover(&data, &target.topic)?;
    let g = committed(&data, GROUP)?;
    if acks.tombstoned && g.is_some() {
        return Err(format!(
            "acknowledged tombstone lost: {GROUP} still at {g:?}"
        ));
    }
    if !acks.tombstoned && g.is_some() && g != Some(3) {
        return Err(format!("{GROUP} at {g:?}"));
    }
    let h = committed(&data, OTHER)?;
    let expected = if acks.commits.is_empty() {
        Some(11)
    } else {
        Some(12)
    };
    if h != expected && !(h == Some(12) && acks.commit_in_flight == Some(12)) {
        return Err(format!("{OTHER} at {h:?}, acknowledged {expected:?}"));
    }
    Ok(())
}

// ---- repair ----------------------------------------------------------------

/// A torn last batch: 30 bytes of it, written twice over.
fn setup_torn(root: &Path) {
    let data = root.join("data");
    produce_on_disk(&data, 30, config(1 << 20, 150));
    let log = data.join("t-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let prefix = bytes[..30].to_vec();
    bytes.extend_from_slice(&prefix);
    std::fs::write(&log, bytes).unwrap();
    // A stale index entry too, so the rebuild moves the old index aside.
    let index = data.join("t-0/00000000000000000000.index");
    let mut ix = std::fs::read(&index).unwrap();
    let n = ix.len();
    ix[n - 1] ^= 0x40;
    std::fs::write(&index, ix).unwrap();
}

/// Damage in the middle segment of three: --force-truncate cuts there and
/// moves the later segment aside.
fn setup_forced(root: &Path) {
    let data = root.join("data");
    produce_on_disk(&data, 30, config(900, 150));
    let p = Partition::open(&data.join("t-0")).unwrap();
    assert!(p.segments.len() >= 3, "{} segments", p.segments.len());
    let log = &p.segments[1].log;
    let mut bytes = std::fs::read(log).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(log, bytes).unwrap();
}

/// A damaged batch in the middle of a segment, valid batches after it: the
/// salvage cuts only that batch out.
fn setup_salvage(root: &Path) {
    let data = root.join("data");
    produce_on_disk(&data, 30, config(1 << 20, 150));
    let log = data.join("t-0/00000000000000000000.log");
    let mut bytes = std::fs::read(&log).unwrap();
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    std::fs::write(&log, bytes).unwrap();
}

fn salvage() -> RepairOptions {
    RepairOptions {
        salvage: true,
        ..RepairOptions::default()
    }
}

fn run_salvage(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    run_repair_with(s, root, acks, salvage())
}

fn check_salvage(image: &Path, acks: &Acks) -> Result<(), String> {
    check_repair_with(image, acks, salvage())
}

fn force() -> RepairOptions {
    RepairOptions {
        force_truncate: true,
        ..RepairOptions::default()
    }
}

fn run_repair_with(
    s: &CrashStorage,
    root: &Path,
    acks: &mut Acks,
    opts: RepairOptions,
) -> kaen_log::Result<()> {
    let part = root.join("data/t-0");
    let plan = repair::plan(&Partition::open(&part)?, &opts)?;
    assert!(plan.refused.is_empty(), "{plan:?}");
    assert!(!plan.actions.is_empty());
    acks.before = tree(&part);
    acks.plan = Some(plan.clone());
    let _lock = s.lock(&root.join("data"))?;
    repair::execute_with(s, &plan, &opts)?;
    Ok(())
}

fn run_repair(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    run_repair_with(s, root, acks, RepairOptions::default())
}

fn run_forced_repair(s: &CrashStorage, root: &Path, acks: &mut Acks) -> kaen_log::Result<()> {
    run_repair_with(s, root, acks, force())
}

/// The name of `path` (in the live root) inside the partition folder.
fn name(path: &Path) -> PathBuf {
    PathBuf::from(path.file_name().unwrap())
}

/// No byte the plan cuts or moves is missing from the partition folder `files`.
fn nothing_lost(files: &BTreeMap<PathBuf, Vec<u8>>, acks: &Acks) -> Result<(), String> {
    let Some(plan) = &acks.plan else {
        return Ok(());
    };
    for a in &plan.actions {
        match a {
            Action::Truncate {
                log, at, sidecar, ..
            } => {
                let before = &acks.before[&name(log)];
                let (kept, cut) = before.split_at(*at as usize);
                let now = files.get(&name(log));
                let side = files.get(&name(sidecar));
                let whole = now == Some(before);
                let saved =
                    now.map(Vec::as_slice) == Some(kept) && side.map(Vec::as_slice) == Some(cut);
                if !whole && !saved {
                    return Err(format!(
                        "bytes of {} lost: log {:?} bytes, sidecar {:?} bytes (of {} cut at {at})",
                        name(log).display(),
                        now.map(Vec::len),
                        side.map(Vec::len),
                        cut.len()
                    ));
                }
            }
            Action::MoveAside { file, sidecar, .. } => {
                let before = &acks.before[&name(file)];
                if files.get(&name(file)) != Some(before)
                    && files.get(&name(sidecar)) != Some(before)
                {
                    return Err(format!("{} lost in its move aside", name(file).display()));
                }
            }
            Action::CutRanges { log, ranges, .. } => {
                let before = &acks.before[&name(log)];
                let now = files.get(&name(log));
                let mut kept = Vec::new();
                let mut at = 0;
                for (from, to, _) in ranges {
                    kept.extend_from_slice(&before[at..*from as usize]);
                    at = *to as usize;
                }
                kept.extend_from_slice(&before[at..]);
                let sidecars_whole = ranges.iter().all(|(from, to, side)| {
                    files.get(&name(side)).map(Vec::as_slice)
                        == Some(&before[*from as usize..*to as usize])
                });
                if now != Some(before) && !(now == Some(&kept) && sidecars_whole) {
                    return Err(format!(
                        "bytes of {} lost: log {:?} bytes, kept {} of {}, sidecars whole: {sidecars_whole}",
                        name(log).display(),
                        now.map(Vec::len),
                        kept.len(),
                        before.len()
                    ));
                }
            }
            Action::RebuildIndexes { .. } => {}
        }
    }
    Ok(())
}

fn check_repair_with(image: &Path, acks: &Acks, opts: RepairOptions) -> Result<(), String> {
    let part = image.join("data/t-0");
    nothing_lost(&tree(&part), acks)?;
    // The repair, run again, finishes (or finds nothing to do).
    let p = Partition::open(&part).map_err(|e| e.to_string())?;
    let plan = repair::plan(&p, &opts).map_err(|e| e.to_string())?;
    if !plan.refused.is_empty() {
        return Err(format!("the second repair refuses: {:?}", plan.refused));
    }
    repair::execute(&plan, &opts).map_err(|e| format!("the second repair: {e}"))?;
    nothing_lost(&tree(&part), acks)?;
    read_records(&part)?;
    index_problems(&part)
}

fn check_repair(image: &Path, acks: &Acks) -> Result<(), String> {
    check_repair_with(image, acks, RepairOptions::default())
}

fn check_forced_repair(image: &Path, acks: &Acks) -> Result<(), String> {
    check_repair_with(image, acks, force())
}

// ---- the driver -------------------------------------------------------------

fn cases() -> Vec<Case> {
    vec![
        Case {
            name: "produce into a new data directory",
            setup: |_| {},
            run: run_produce,
            check: check_records,
        },
        Case {
            name: "produce behind preallocated index slots",
            setup: setup_padded_indexes,
            run: run_small_append,
            check: check_records,
        },
        Case {
            name: "produce into a partition without indexes",
            setup: setup_log_only,
            run: run_log_only,
            check: check_records,
        },
        Case {
            name: "appends that fail half-written are rolled back",
            setup: setup_log_only_indexed,
            run: run_failing_appends,
            check: check_records,
        },
        Case {
            name: "an append that fails after rolling undoes the roll",
            setup: |_| {},
            run: run_failing_after_roll,
            check: check_records,
        },
        Case {
            name: "append under a newer leader epoch",
            setup: setup_epochs,
            run: run_epochs,
            check: check_records,
        },
        Case {
            name: "append to a hard-linked segment",
            setup: setup_linked,
            run: run_linked,
            check: check_records,
        },
        Case {
            name: "commit",
            setup: |_| {},
            run: run_commits,
            check: check_commits,
        },
        Case {
            name: "tombstone",
            setup: setup_commits,
            run: run_tombstone,
            check: check_tombstone,
        },
        Case {
            name: "repair a torn tail",
            setup: setup_torn,
            run: run_repair,
            check: check_repair,
        },
        Case {
            name: "repair --force-truncate",
            setup: setup_forced,
            run: run_forced_repair,
            check: check_forced_repair,
        },
        Case {
            name: "repair --salvage",
            setup: setup_salvage,
            run: run_salvage,
            check: check_salvage,
        },
    ]
}

/// One run of `case`, the power lost at sync call `crash_at` (never when it
/// is past the last), with the syncs of `ignore` deleted: the sync calls
/// made, and what went wrong.
fn run_once(
    case: &Case,
    crash_at: Option<usize>,
    ignore: Option<SyncPoint>,
    all_images: bool,
) -> (Vec<SyncPoint>, Result<(), String>) {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("live");
    std::fs::create_dir(&root).unwrap();
    (case.setup)(&root);
    let mut storage = CrashStorage::new(&root).ignoring(ignore);
    if let Some(n) = crash_at {
        storage = storage.crash_at(n);
    }
    let mut acks = Acks::default();
    let result = (case.run)(&storage, &root, &mut acks);
    let crashed = storage.crashed();
    let calls = storage.calls();
    let checked = (|| {
        match (&result, crashed) {
            (Err(e), false) => return Err(format!("failed without a crash: {e}")),
            (Ok(()), true) => return Err("succeeded through a crash".into()),
            _ => {}
        }
        let durable = tmp.path().join("durable");
        storage.durable_image(&durable);
        let live = tmp.path().join("live-copy");
        storage.live_image(&live);
        if !crashed {
            // Acknowledged to the end: nothing may be left for recovery to redo.
            let (d, l) = (tree(&durable), tree(&live));
            if d != l {
                let differ: BTreeSet<_> = d
                    .keys()
                    .chain(l.keys())
                    .filter(|k| d.get(*k) != l.get(*k))
                    .map(|k| k.display().to_string())
                    .collect();
                return Err(format!("acknowledged but not durable: {differ:?}"));
            }
        }
        (case.check)(&durable, &acks).map_err(|e| format!("durable image: {e}"))?;
        if all_images {
            (case.check)(&live, &acks).map_err(|e| format!("live image: {e}"))?;
            let torn = tmp.path().join("torn");
            storage.torn_image(&torn);
            (case.check)(&torn, &acks).map_err(|e| format!("torn image: {e}"))?;
        }
        Ok(())
    })();
    (calls, checked)
}

/// A case run to its end and crashed at each of its sync calls.
struct Sweep {
    /// The sync calls of the run to the end.
    calls: Vec<SyncPoint>,
    /// What the run to the end left wrong.
    at_end: Result<(), String>,
    /// The first crash point whose recovery went wrong.
    crash: Option<String>,
}

fn sweep(case: &Case, ignore: Option<SyncPoint>, all_images: bool) -> Sweep {
    let (calls, at_end) = run_once(case, None, ignore, all_images);
    let crash = (0..calls.len()).find_map(|n| {
        run_once(case, Some(n), ignore, all_images)
            .1
            .err()
            .map(|e| format!("crash at sync {n} ({:?}): {e}", calls[n]))
    });
    Sweep {
        calls,
        at_end,
        crash,
    }
}

fn case(name: &str) -> Case {
    cases().into_iter().find(|c| c.name == name).unwrap()
}

fn assert_survives(name: &str) -> Vec<SyncPoint> {
    let Sweep {
        calls,
        at_end,
        crash,
    } = sweep(&case(name), None, true);
    if let Err(e) = at_end {
        panic!("{name}, run to the end: {e}");
    }
    if let Some(e) = crash {
        panic!("{name}: {e}");
    }
    assert!(!calls.is_empty(), "{name}: no sync at all");
    calls
}

#[test]
fn produce_survives_a_crash_at_every_sync_point() {
    let calls = assert_survives("produce into a new data directory");
    for p in [
        SyncPoint::CreateDir,
        SyncPoint::NewSegment,
        SyncPoint::LogAppend,
        SyncPoint::OffsetIndexAppend,
        SyncPoint::TimeIndexAppend,
        SyncPoint::TxnIndexAppend,
        SyncPoint::TxnIndexCreate,
    ] {
        assert!(calls.contains(&p), "{p:?} never reached: {calls:?}");
    }
    let calls = assert_survives("produce behind preallocated index slots");
    assert!(calls.contains(&SyncPoint::IndexTrim), "{calls:?}");
    let calls = assert_survives("produce into a partition without indexes");
    assert!(calls.contains(&SyncPoint::IndexCreate), "{calls:?}");
    let calls = assert_survives("produce behind preallocated index slots");
    assert!(calls.contains(&SyncPoint::TimeIndexClose), "{calls:?}");
}

#[test]
fn a_failed_append_is_rolled_back_at_every_sync_point() {
    let calls = assert_survives("appends that fail half-written are rolled back");
    assert!(calls.contains(&SyncPoint::Rollback), "{calls:?}");
    let calls = assert_survives("an append that fails after rolling undoes the roll");
    for p in [
        SyncPoint::TimeIndexClose,
        SyncPoint::NewSegment,
        SyncPoint::Rollback,
        SyncPoint::RollbackRemove,
    ] {
        assert!(calls.contains(&p), "{p:?} never reached: {calls:?}");
    }
}

#[test]
fn the_leader_epoch_checkpoint_survives_a_crash_at_every_sync_point() {
    let calls = assert_survives("append under a newer leader epoch");
    for p in [SyncPoint::CheckpointData, SyncPoint::CheckpointRename] {
        assert!(calls.contains(&p), "{p:?} never reached: {calls:?}");
    }
}

#[test]
fn a_hard_linked_segment_is_copied_at_every_sync_point() {
    let calls = assert_survives("append to a hard-linked segment");
    for p in [SyncPoint::LinkCopyData, SyncPoint::LinkCopyRename] {
        assert!(calls.contains(&p), "{p:?} never reached: {calls:?}");
    }
}

#[test]
fn commit_survives_a_crash_at_every_sync_point() {
    assert_survives("commit");
}

#[test]
fn tombstone_survives_a_crash_at_every_sync_point() {
    assert_survives("tombstone");
}

#[test]
fn repair_loses_no_byte_at_any_sync_point() {
    let calls = assert_survives("repair a torn tail");
    for p in [
        SyncPoint::SidecarData,
        SyncPoint::SidecarEntry,
        SyncPoint::LogTruncate,
        SyncPoint::MoveAside,
        SyncPoint::ReplaceData,
        SyncPoint::ReplaceRename,
    ] {
        assert!(calls.contains(&p), "{p:?} never reached: {calls:?}");
    }
    assert_survives("repair --force-truncate");
    let calls = assert_survives("repair --salvage");
    for p in [
        SyncPoint::SidecarData,
        SyncPoint::SidecarEntry,
        SyncPoint::SalvageData,
        SyncPoint::ReplaceRename,
    ] {
        assert!(calls.contains(&p), "{p:?} never reached: {calls:?}");
    }
}

/// Delete each sync point in turn: some case must then lose an
/// acknowledged record, commit, tombstone, ABORT index entry, closed
/// segment's index or cut byte at some crash point, or leave a run that was
/// acknowledged to its end not durable. Prints, for each point, what broke.
#[test]
fn every_sync_point_is_needed() {
    let cases = cases();
    let mut report = Vec::new();
    for point in SyncPoint::ALL {
        let mut at_crash = None;
        let mut at_end = None;
        for c in &cases {
            let s = sweep(c, Some(point), false);
            if !s.calls.contains(&point) {
                continue;
            }
            if at_end.is_none() {
                at_end = s.at_end.err().map(|e| format!("{}: {e}", c.name));
            }
            if let Some(e) = s.crash {
                at_crash = Some(format!("{}: {e}", c.name));
                break;
            }
        }
        match (at_crash, at_end) {
            (Some(e), _) => report.push(format!(
                "{point:?}: a crash loses what was acknowledged: {e}"
            )),
            (None, Some(e)) => report.push(format!(
                "{point:?}: only an acknowledged run is not durable: {e}"
            )),
            (None, None) => panic!("deleting the syncs at {point:?} breaks no case"),
        }
    }
    for line in &report {
        eprintln!("{line}");
    }
}

/// What `every_sync_point_is_needed` deletes is a line of code: each sync
/// point is named once in src/ (at the sync call, or at the one call of a
/// durable.rs helper that syncs with it), and only the real storage calls
/// the OS's sync functions.
#[test]
fn each_sync_point_is_one_call_site() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut uses: BTreeMap<String, usize> = BTreeMap::new();
    let mut os_syncs = Vec::new();
    for entry in walkdir::WalkDir::new(&src) {
        let entry = entry.unwrap();
        if entry.path().extension().is_none_or(|e| e != "rs") {
            continue;
        }
        let rel = entry.path().strip_prefix(&src).unwrap().to_path_buf();
        let text = std::fs::read_to_string(entry.path()).unwrap();
        if rel != Path::new("log/storage.rs") {
            for point in SyncPoint::ALL {
                let name = format!("SyncPoint::{point:?}");
                let n = text
                    .match_indices(&name)
                    .filter(|(i, _)| {
                        !text[i + name.len()..].starts_with(|c: char| c.is_alphanumeric())
                    })
                    .count();
                *uses.entry(name).or_default() += n;
            }
        }
        for os in [
            ".sync_all()",
            ".sync_data()",
            "libc::fsync",
            "libc::fdatasync",
            "rustix::fs::fsync",
            "rustix::fs::fdatasync",
        ] {
            if text.contains(os) {
                os_syncs.push(format!("{} {os}", rel.display()));
            }
        }
    }
    for (name, n) in &uses {
        assert_eq!(*n, 1, "{name} is used {n} times in src/");
    }
    assert_eq!(
        os_syncs,
        [
            "log/durable.rs .sync_data()",
            "log/durable.rs rustix::fs::fsync"
        ],
        "OS syncs outside the real storage"
    );
}
