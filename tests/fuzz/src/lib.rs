//! What the fuzz targets check, as plain functions.
//!
//! `fuzz_targets/*.rs` call these, and `tests/lib/fuzz_regressions.rs`
//! includes this very file (`#[path]`) and runs them over every saved crash
//! input under `tests/fuzz/regressions/` and every fixture file, so a
//! finding stays a regression test of `cargo test` with the same code.
//! Only `std` and `kaen_log` are used here, so the file compiles in both
//! crates.
//!
//! Beyond "no panic, no hang, no unbounded allocation" (libFuzzer's
//! `-timeout` and `-rss_limit_mb` watch the last two), each function
//! asserts what must hold of the library's answer:
//! - every error is positioned inside the bytes it was given (an error in
//!   decompressed records points at the compressed section and carries a
//!   position inside the decompressed bytes);
//! - records come out contiguous, within their batch, never more than the
//!   header declares, and nothing follows the first error;
//! - the fast record check `verify-crc` uses (`validate_records`) agrees
//!   with iterating the records, exactly (count and error);
//! - what decodes re-encodes to what was read (records through
//!   `encode_batch`, offsets keys and values, transaction log records,
//!   index entries, producer snapshots);
//! - the segment reader frames the file contiguously and its tail verdict
//!   accounts for every byte; `verify_segment` counts every byte once and
//!   reports damage exactly where recovery (`first_damage`) and the repair
//!   plan see it; indexes rebuilt from a log `verify_segment` passes are
//!   clean by `check_indexes`.

use std::path::{Path, PathBuf};

use kaen_log::error::DecodeError;
use kaen_log::format::batch::{self, BatchView, DecodeLimits, TimestampType, HEADER_LEN};
use kaen_log::format::compression::{self, Compression};
use kaen_log::format::legacy::LegacyView;
use kaen_log::format::{control, crc, encode_batch, index, BatchSpec, Entry, NewRecord};
use kaen_log::inspect::recovery::{check_indexes, first_damage, rebuild_indexes};
use kaen_log::inspect::repair::{self, Action, RepairOptions};
use kaen_log::inspect::verify::{self, Report};
use kaen_log::log::read::{SegmentReader, Tail};
use kaen_log::log::{Partition, SegmentFiles};
use kaen_log::offsets::{self, OffsetsKey};
use kaen_log::txn::{snapshot, txnlog};

/// File position at which the decoders are told their input starts, so an
/// error reported relative to the slice instead of the file is caught.
pub const POSITION: u64 = 1 << 20;

/// A small decompression limit, so a decompression bomb stops early.
pub const LIMITS: DecodeLimits = DecodeLimits {
    max_decompressed: 1 << 20,
};

/// The smallest whole entry: offset + size (12) and the smallest size (14).
const MIN_ENTRY: u64 = 26;

fn within(e: &DecodeError, start: u64, end: u64, what: &str) {
    assert!(
        start <= e.offset && e.offset <= end,
        "{what}: error offset {} outside {start}..={end}: {e:?}",
        e.offset
    );
}

// ---------------------------------------------------------------- batch

/// Fuzz target `batch`: the input as one v2 batch at [`POSITION`]; then the
/// same bytes with `batchLength` and magic set so that they frame, to spend
/// the time past the framing.
pub fn batch(data: &[u8]) {
    check_batch_bytes(data, POSITION);
    if data.len() >= HEADER_LEN {
        let mut framed = data.to_vec();
        let len = i32::try_from(data.len() - batch::LOG_OVERHEAD).unwrap_or(i32::MAX);
        framed[batch::BATCH_LENGTH..batch::BATCH_LENGTH + 4].copy_from_slice(&len.to_be_bytes());
        framed[batch::MAGIC] = 2;
        if framed != data {
            check_batch_bytes(&framed, POSITION);
        }
    }
}

fn check_batch_bytes(data: &[u8], pos: u64) {
    match BatchView::new(data, pos) {
        Err(e) => within(&e, pos, pos + data.len() as u64, "BatchView::new"),
        Ok(b) => {
            check_batch(&b);
        }
    }
}

/// The records of one batch as iterating them gave them.
#[derive(Debug, Default)]
pub struct Walked {
    pub records: Vec<NewRecord>,
    pub error: Option<DecodeError>,
}

/// Everything about one framed batch: CRC, header rules, records iterated
/// to the end, and the fast check against the iteration.
pub fn check_batch(b: &BatchView<'_>) -> Walked {
    let pos = b.position;
    let size = b.bytes().len() as u64;
    assert_eq!(b.header.size(), size, "a view holds exactly its batch");
    assert!(size >= HEADER_LEN as u64);
    let crc_ok = b.crc_valid();
    match b.check_crc() {
        Ok(()) => assert!(crc_ok),
        Err(e) => {
            assert!(!crc_ok);
            assert_eq!(
                e.offset,
                pos + batch::CRC as u64,
                "a CRC error names the crc field"
            );
        }
    }
    if let Err(e) = b.check_header() {
        within(&e, pos, pos + HEADER_LEN as u64, "check_header");
    }
    let mut scratch = Vec::new();
    let walked = walk_records(b, &mut scratch);
    let mut scratch2 = Vec::new();
    let checked = b.validate_records(&mut scratch2, LIMITS);
    assert_eq!(
        (checked.records, checked.error),
        (walked.records.len() as u64, walked.error),
        "validate_records disagrees with iterating the records of {:02x?}",
        b.bytes()
    );
    match b.check_crc_and_records(&mut scratch2, LIMITS) {
        Ok(c) => {
            assert!(crc_ok);
            assert_eq!((c.records, c.error), (checked.records, checked.error));
        }
        Err(e) => {
            assert!(!crc_ok);
            assert_eq!(Err(e), b.check_crc());
        }
    }
    walked
}

/// Iterate the records of `b` to the end, checking each.
pub fn walk_records(b: &BatchView<'_>, scratch: &mut Vec<u8>) -> Walked {
    let h = b.header;
    let pos = b.position;
    let end = pos + b.bytes().len() as u64;
    let section_at = pos + HEADER_LEN as u64;
    let compressed =
        h.records_count != 0 && h.compression().is_some_and(|c| c != Compression::None);
    let mut out = Walked::default();
    let mut next_at = if compressed { 0 } else { section_at };
    let mut records = match b.records(scratch, LIMITS) {
        Ok(it) => it,
        Err(e) => {
            within(&e, pos, end, "records()");
            assert_eq!(e.decompressed_at, None);
            out.error = Some(e);
            return out;
        }
    };
    let declared = u64::try_from(h.records_count).unwrap_or(0);
    loop {
        match records.next() {
            None => break,
            Some(Ok(r)) => {
                out.records.push(NewRecord {
                    key: r.key.map(<[u8]>::to_vec),
                    value: r.value.map(<[u8]>::to_vec),
                    headers: r
                        .headers()
                        .map(|hv| (hv.key.to_vec(), hv.value.map(<[u8]>::to_vec)))
                        .collect(),
                    timestamp: r.timestamp,
                });
                assert!(
                    out.records.len() as u64 <= declared,
                    "more records than recordsCount"
                );
                assert_eq!(r.position, next_at, "records are contiguous");
                next_at = r.position + u64::from(r.size);
                if !compressed {
                    assert!(next_at <= end, "a record runs past its batch");
                }
                assert!(
                    (0..=h.last_offset_delta).contains(&r.offset_delta),
                    "offset delta {} outside 0..={}",
                    r.offset_delta,
                    h.last_offset_delta
                );
                assert_eq!(
                    r.offset,
                    h.base_offset.wrapping_add(i64::from(r.offset_delta))
                );
                let expected_ts = match h.timestamp_type() {
                    TimestampType::LogAppendTime => h.max_timestamp,
                    TimestampType::CreateTime => h.base_timestamp.wrapping_add(r.timestamp_delta),
                };
                assert_eq!(r.timestamp, expected_ts);
                let headers = out.records.last().map_or(0, |n| n.headers.len());
                assert_eq!(headers, r.header_count as usize, "every header decodes");
            }
            Some(Err(e)) => {
                if compressed {
                    assert_eq!(e.offset, section_at, "{e:?}");
                    assert!(e.decompressed_at.is_some(), "{e:?}");
                } else {
                    within(&e, section_at, end, "record");
                    assert_eq!(e.decompressed_at, None);
                }
                out.error = Some(e);
                assert!(records.next().is_none(), "nothing after the first error");
                break;
            }
        }
    }
    if compressed {
        assert!(scratch.len() as u64 <= LIMITS.max_decompressed);
        assert!(next_at <= scratch.len() as u64);
        if let Some(at) = out.error.and_then(|e| e.decompressed_at) {
            assert!(
                at <= scratch.len() as u64,
                "decompressed_at {at} past the data"
            );
        }
    }
    if out.error.is_none() {
        assert_eq!(
            out.records.len() as u64,
            declared,
            "records missing, no error"
        );
    }
    out
}

// -------------------------------------------------------------- records

/// A v2 batch around `section`, with a valid CRC.
pub fn frame_batch(
    attributes: i16,
    last_offset_delta: i32,
    records_count: i32,
    section: &[u8],
) -> Vec<u8> {
    let mut out = Vec::with_capacity(HEADER_LEN + section.len());
    out.extend_from_slice(&1000i64.to_be_bytes()); // baseOffset
    let len = i32::try_from(HEADER_LEN - batch::LOG_OVERHEAD + section.len()).unwrap_or(i32::MAX);
    out.extend_from_slice(&len.to_be_bytes()); // batchLength
    out.extend_from_slice(&0i32.to_be_bytes()); // partitionLeaderEpoch
    out.push(2); // magic
    out.extend_from_slice(&[0; 4]); // crc, below
    out.extend_from_slice(&attributes.to_be_bytes());
    out.extend_from_slice(&last_offset_delta.to_be_bytes());
    out.extend_from_slice(&1_700_000_000_000i64.to_be_bytes()); // baseTimestamp
    out.extend_from_slice(&1_700_000_000_999i64.to_be_bytes()); // maxTimestamp
    out.extend_from_slice(&(-1i64).to_be_bytes()); // producerId
    out.extend_from_slice(&(-1i16).to_be_bytes()); // producerEpoch
    out.extend_from_slice(&(-1i32).to_be_bytes()); // baseSequence
    out.extend_from_slice(&records_count.to_be_bytes());
    out.extend_from_slice(section);
    let c = batch::batch_crc(&out);
    out[batch::CRC..batch::CRC + 4].copy_from_slice(&c.to_be_bytes());
    out
}

/// Fuzz target `records`: the input as a records section. Byte 0 is
/// recordsCount, byte 1 how far lastOffsetDelta lies above count - 1, byte
/// 2 the attributes (bit 0: LogAppendTime; bits 1..3: codec id, 1..4
/// compress the rest with that codec, 5..7 are unknown codecs). Records
/// that decode must survive `encode_batch` and decode again unchanged.
pub fn records(data: &[u8]) {
    let Some((&[count, extra, flags], rest)) = data.split_first_chunk::<3>() else {
        return;
    };
    let records_count = i32::from(count);
    let last_offset_delta = (records_count - 1).max(0) + i32::from(extra);
    let codec_id = (flags >> 1) & 0x07;
    let mut attributes = i16::from(codec_id);
    if flags & 1 != 0 {
        attributes |= batch::attr::TIMESTAMP_TYPE;
    }
    let section = match Compression::from_id(codec_id) {
        Some(c) if c != Compression::None => {
            let packed = compression::compress(c, rest).expect("compress");
            let mut back = Vec::new();
            compression::decompress(c, &packed, &mut back, u64::MAX).expect("round trip");
            assert_eq!(back, rest, "{c:?} does not round-trip");
            packed
        }
        _ => rest.to_vec(),
    };
    let bytes = frame_batch(attributes, last_offset_delta, records_count, &section);
    let b = BatchView::new(&bytes, POSITION).expect("a framed batch");
    assert!(b.crc_valid());
    let walked = check_batch(&b);
    if walked.error.is_some() || walked.records.is_empty() {
        return;
    }
    let spec = BatchSpec {
        base_offset: b.header.base_offset,
        ..BatchSpec::default()
    };
    let again = encode_batch(&spec, &walked.records).expect("encode");
    let b2 = BatchView::new(&again, 0).expect("an encoded batch frames");
    assert!(b2.crc_valid());
    let walked2 = check_batch(&b2);
    assert_eq!(walked2.error, None, "a re-encoded batch does not decode");
    assert_eq!(
        walked2.records, walked.records,
        "records change through encode_batch"
    );
}

// -------------------------------------------------------------- offsets

fn put_string(out: &mut Vec<u8>, s: &str) {
    out.extend_from_slice(&(s.len() as i16).to_be_bytes());
    out.extend_from_slice(s.as_bytes());
}

/// Fuzz target `offsets`: the input through every decoder of internal-topic
/// records and side files: offsets keys and values, GroupMetadataValue,
/// `__transaction_state` keys and values, control records, producer
/// snapshots, and `.index`, `.timeindex` and `.txnindex` entries.
pub fn offsets(data: &[u8]) {
    let at = POSITION;
    let end = at + data.len() as u64;
    // A key read leniently, as Kafka reads it (a name's malformed UTF-8 as
    // U+FFFD), has no round trip.
    match offsets::decode_key_and_rest(data, at) {
        Ok(read) if !read.lenient.is_empty() => {
            for l in &read.lenient {
                within(&l.defect, at, end, "offsets key leniency");
            }
        }
        Ok(read) => match read.key {
            OffsetsKey::OffsetCommit {
                record_type,
                group,
                topic,
                partition,
            } => {
                assert!(record_type == 0 || record_type == 1);
                // Bytes after the fields are ignored, as the broker's reader does.
                let enc = offsets::encode_offset_commit_key(&group, &topic, partition);
                assert_eq!(
                    enc.get(2..),
                    data.get(2..enc.len()),
                    "OffsetCommitKey round trip"
                );
            }
            OffsetsKey::GroupMetadata { group } => {
                let mut enc = 2i16.to_be_bytes().to_vec();
                put_string(&mut enc, &group);
                assert_eq!(
                    Some(enc.as_slice()),
                    data.get(..enc.len()),
                    "GroupMetadataKey round trip"
                );
            }
            OffsetsKey::Other { record_type } => assert!(!(0..=2).contains(&record_type)),
        },
        Err(e) => within(&e, at, end, "offsets key"),
    }
    match offsets::decode_offset_commit_value(data, at) {
        Ok(v) => {
            assert!((0..=4).contains(&v.version));
            if v.version == 3 && v.lenient.is_empty() {
                let enc = offsets::encode_offset_commit_value(
                    offsets::CommitFormat::V3,
                    v.offset as u64,
                    v.leader_epoch,
                    &v.metadata,
                    v.commit_timestamp,
                );
                assert_eq!(
                    Some(enc.as_slice()),
                    data.get(..data.len() - v.trailing_bytes as usize),
                    "OffsetCommitValue v3 round trip"
                );
            }
        }
        Err(e) => within(&e, at, end, "OffsetCommitValue"),
    }
    // Schema-driven decoders: every metadata schema at every version it
    // knows (and one past), the KRaft control values, coordinator records.
    let schemas = kaen_log::metadata::records::METADATA
        .iter()
        .map(|(_, s)| s)
        .chain(kaen_log::metadata::records::CONTROL.iter().map(|(_, s)| s));
    for schema in schemas {
        for version in schema.versions.0..=schema.versions.1.saturating_add(1) {
            if let Err(e) = schema.decode(data, at, version) {
                within(&e, at, end, schema.name);
            }
            let (traced, err) = schema.trace(data, at, version);
            for t in &traced {
                assert!(
                    t.position >= at && t.position + t.len as u64 <= end,
                    "{}: trace outside the input",
                    schema.name
                );
            }
            if let Some(e) = err {
                within(&e, at, end, schema.name);
            }
        }
    }
    let _ = kaen_log::metadata::records::decode_metadata(data, at);
    for t in 2..=6 {
        let _ = kaen_log::metadata::records::decode_control_value(t, Some(data), at);
    }
    for table in [
        offsets::records::GROUP_RECORDS,
        offsets::records::SHARE_RECORDS,
    ] {
        let r = offsets::records::decode(table, data, Some(data), at);
        if let Some(k) = &r.key {
            assert!(k.is_object());
        }
    }
    match offsets::group::decode_group_metadata(data, at) {
        Ok(g) => assert!(g.members.len() <= data.len()),
        Err(e) => within(&e, at, end, "GroupMetadataValue"),
    }
    // Bytes after the last field are read past, as Kafka's generated
    // readers do: the round trip covers the bytes before them.
    let head = |rest: u64| &data[..data.len() - rest as usize];
    // A value read leniently, as Kafka reads it (a string with U+FFFD, a
    // negative length as null, a tag read in place), has no round trip.
    match txnlog::decode_key_rest(data, at) {
        Ok(read) => {
            let mut enc = 0i16.to_be_bytes().to_vec();
            put_string(&mut enc, &read.value);
            if read.lenient.is_empty() {
                assert_eq!(enc, head(read.trailing), "TransactionLogKey round trip");
            }
            for l in &read.lenient {
                within(&l.defect, at, end, "TransactionLogKey leniency");
            }
        }
        Err(e) => within(&e, at, end, "TransactionLogKey"),
    }
    match txnlog::decode_value_rest(data, at) {
        Ok(read) => {
            // v0 has one encoding of each value; v1 may carry unknown tags
            // or tags at their default, which the encoder leaves out.
            let m = read.value;
            let enc = txnlog::encode_value(&m);
            if m.version == 0 && read.lenient.is_empty() {
                assert_eq!(
                    enc,
                    head(read.trailing),
                    "TransactionLogValue v0 round trip"
                );
            }
            // What was read leniently encodes as what was read.
            assert_eq!(txnlog::decode_value(&enc, 0).ok(), Some(m));
        }
        Err(e) => within(&e, at, end, "TransactionLogValue"),
    }
    if let Err(e) = control::decode(Some(data), data.get(4..), at) {
        assert_eq!(e.offset, at, "control record errors name the key");
    }
    let len = data.len() as u64;
    match snapshot::decode(data) {
        Ok(s) => {
            assert_eq!(10 + s.entries.len() * snapshot::ENTRY_LEN, data.len());
            if s.crc == s.computed_crc {
                assert_eq!(snapshot::encode(&s.entries), data, "snapshot round trip");
            }
        }
        Err(e) => within(&e, 0, len, "snapshot"),
    }
    let base = 1_000_000;
    match index::offset_entries(data, base) {
        Ok(entries) => {
            let enc: Vec<u8> = entries
                .iter()
                .flat_map(|e| index::encode_offset_entry(e.relative_offset, e.position))
                .collect();
            assert_eq!(enc, data, "offset index round trip");
        }
        Err(e) => assert_eq!(e.offset, len / 8 * 8, "{e:?}"),
    }
    match index::time_entries(data, base) {
        Ok(entries) => {
            let enc: Vec<u8> = entries
                .iter()
                .flat_map(|e| index::encode_time_entry(e.timestamp, e.relative_offset))
                .collect();
            assert_eq!(enc, data, "time index round trip");
        }
        Err(e) => assert_eq!(e.offset, len / 12 * 12, "{e:?}"),
    }
    match index::txn_entries(data) {
        Ok((entries, partial)) => {
            assert_eq!(partial, data.len() % index::TXN_ENTRY_LEN);
            let enc: Vec<u8> = entries
                .iter()
                .flat_map(|e| {
                    index::encode_txn_entry(
                        e.producer_id,
                        e.first_offset,
                        e.last_offset,
                        e.last_stable_offset,
                    )
                })
                .collect();
            assert_eq!(Some(enc.as_slice()), data.get(..data.len() - partial));
        }
        Err(e) => {
            assert_eq!(e.offset % index::TXN_ENTRY_LEN as u64, 0);
            within(&e, 0, len, "txnindex");
        }
    }
}

// -------------------------------------------------------------- segment

/// A partition folder `t-0` of this thread, in a temporary folder removed
/// when the thread ends.
struct Scratch {
    root: PathBuf,
    partition: PathBuf,
}

impl Scratch {
    fn new() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let root = std::env::temp_dir().join(format!(
            "kaen-log-fuzz-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        let partition = root.join("t-0");
        std::fs::create_dir_all(&partition).expect("create a scratch folder");
        Scratch { root, partition }
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

thread_local! {
    static SCRATCH: Scratch = Scratch::new();
}

/// The input with the CRC of every entry that frames recomputed (CRC-32C
/// of a v2 batch, CRC-32 of a legacy message), so that fuzzing reaches the
/// checks behind the CRC.
pub fn fix_crcs(data: &[u8]) -> Vec<u8> {
    let mut out = data.to_vec();
    let mut at = 0usize;
    while out.len() - at > batch::HEADER_SIZE_UP_TO_MAGIC {
        let size = i32::from_be_bytes(out[at + 8..at + 12].try_into().unwrap_or([0; 4]));
        if size < batch::MIN_ENTRY_SIZE {
            break;
        }
        let total = batch::LOG_OVERHEAD + size as usize;
        if total > out.len() - at {
            break;
        }
        let entry = &mut out[at..at + total];
        match entry[batch::MAGIC] {
            2 if total >= HEADER_LEN => {
                let c = batch::batch_crc(entry);
                entry[batch::CRC..batch::CRC + 4].copy_from_slice(&c.to_be_bytes());
            }
            0 | 1 => {
                let c = crc::crc32_ieee(&entry[16..]);
                entry[12..16].copy_from_slice(&c.to_be_bytes());
            }
            _ => break,
        }
        at += total;
    }
    out
}

/// Fuzz target `segment`: the input as a segment file, then with its CRCs
/// fixed (see [`fix_crcs`]).
pub fn segment(data: &[u8]) {
    let fixed = fix_crcs(data);
    SCRATCH.with(|s| {
        check_segment(&s.partition, data);
        if fixed != data {
            check_segment(&s.partition, &fixed);
        }
    });
}

/// Write `data` as `00000000000000000000.log` in the partition folder
/// `partition` (any other segment files there are removed first) and check
/// everything that reads it.
pub fn check_segment(partition: &Path, data: &[u8]) {
    for entry in std::fs::read_dir(partition).expect("list the scratch folder") {
        let path = entry.expect("list the scratch folder").path();
        std::fs::remove_file(&path).expect("clear the scratch folder");
    }
    let log = partition.join("00000000000000000000.log");
    std::fs::write(&log, data).expect("write the segment");
    let len = data.len() as u64;

    // 1. The reader frames the file contiguously and accounts for every byte.
    let mut reader = SegmentReader::open(&log).expect("open");
    let (mut at, mut entries) = (0u64, 0u64);
    let mut first_bad = None;
    let mut first_base = None;
    let mut scratch = Vec::new();
    while let Some(e) = reader.next_entry().expect("a regular file reads") {
        entries += 1;
        assert!(
            entries <= len / MIN_ENTRY + 1,
            "more entries than bytes allow"
        );
        assert_eq!(e.position(), at, "entries are contiguous");
        assert!(
            e.size() >= MIN_ENTRY && at + e.size() <= len,
            "entry past the file"
        );
        // A CRC failure, or offsets past i64::MAX, is damage to recovery.
        if first_bad.is_none() && (!e.crc_valid() || e.checked_next_offset().is_none()) {
            first_bad = Some(at);
        }
        first_base.get_or_insert(e.base_offset());
        match e {
            Entry::V2(b) => {
                check_batch(&b);
            }
            Entry::Legacy(l) => check_legacy(&l, &mut scratch),
        }
        at += e.size();
    }
    let tail = reader.tail().expect("a verdict once the walk ends");
    assert_eq!(tail.valid_bytes(len), at);
    match tail {
        Tail::Clean => assert_eq!(at, len, "a clean tail at the end of the file"),
        Tail::Truncated {
            at: t,
            len: l,
            error,
        }
        | Tail::Corrupt {
            at: t,
            len: l,
            error,
        } => {
            assert_eq!((t, t + l), (at, len), "the tail is the rest of the file");
            within(&error, t, len, "tail");
            first_bad.get_or_insert(t);
        }
    }
    assert!(
        reader.next_entry().expect("read").is_none(),
        "stays at the end"
    );

    // 2. Recovery's first damage is the first bad CRC or the tail.
    let damage = first_damage(&kaen_log::log::SegmentFiles {
        base_offset: 0,
        log: log.clone(),
        index: None,
        timeindex: None,
    })
    .expect("first_damage");
    assert_eq!(damage.map(|d| d.position), first_bad, "first_damage");

    // 3. verify_segment: every byte counted once, every problem in the file,
    //    with the segment's base offset from its name (0), with the first
    //    batch's base offset as the name's, and as a file with no segment name.
    let mut bases = vec![Some(0), None];
    if let Some(b) = first_base.filter(|&b| b > 0) {
        bases.push(Some(b));
    }
    let mut clean_as_segment_0 = false;
    for base in bases {
        let mut report = Report::default();
        let mut last = None;
        let opts = verify::Options {
            limits: LIMITS,
            ..verify::Options::default()
        };
        verify::verify_segment(&log, base, &mut last, &opts, &mut report).expect("verify");
        assert_eq!(report.checked.files, 1);
        // Past framing damage verify resyncs and reads on, so it may see more.
        assert!(report.checked.batches >= entries);
        assert_eq!(report.checked.bytes, len, "every byte counted once");
        for p in &report.findings {
            assert!(p.position < len, "problem at {} past the file", p.position);
            assert!(
                p.byte >= p.position && p.byte <= len,
                "{}: byte {} outside {}..={len}",
                p.kind,
                p.byte,
                p.position
            );
        }
        if first_bad.is_some() {
            assert!(
                !report.findings.is_empty(),
                "damage that verify does not report"
            );
        }
        if base == Some(0) {
            clean_as_segment_0 = report.ok();
        }
    }

    // 4. The repair plan cuts (or refuses) exactly at the first damage.
    let p = Partition::open(partition).expect("open the partition");
    let plan = repair::plan(&p, &RepairOptions::default()).expect("plan");
    let cut = plan.actions.iter().find_map(|a| match a {
        Action::Truncate { at, len: l, .. } => Some((*at, *l)),
        _ => None,
    });
    match (cut, plan.refused.first()) {
        (Some((a, l)), None) => {
            assert_eq!(Some(a), first_bad);
            assert_eq!(a + l, len);
        }
        (None, Some(r)) => assert_eq!(Some(r.position), first_bad),
        (None, None) => assert_eq!(first_bad, None, "damage the plan ignores"),
        (Some(_), Some(_)) => panic!("a plan that both cuts and refuses: {plan:?}"),
    }

    // 4b. A salvage plan never cuts outside the file, and keeps no damage.
    let salvage = RepairOptions {
        salvage: true,
        ..RepairOptions::default()
    };
    let plan = repair::plan(&p, &salvage).expect("salvage plan");
    for a in &plan.actions {
        if let Action::CutRanges { ranges, .. } = a {
            for (from, to, _) in ranges {
                assert!(from < to && *to <= len, "cut {from}..{to} of {len} bytes");
            }
        }
    }

    // 5. Indexes rebuilt from a log that verifies clean are clean.
    if clean_as_segment_0 {
        let (idx, tidx) = rebuild_indexes(&log, 0, len, 64).expect("rebuild indexes");
        let (index, timeindex) = (log.with_extension("index"), log.with_extension("timeindex"));
        std::fs::write(&index, &idx).expect("write index");
        std::fs::write(&timeindex, &tidx).expect("write timeindex");
        let seg = SegmentFiles {
            base_offset: 0,
            log: log.clone(),
            index: Some(index),
            timeindex: Some(timeindex),
        };
        let problems = check_indexes(&seg, true).expect("check_indexes");
        assert!(
            problems.is_empty(),
            "rebuilt indexes of a clean log: {problems:?}"
        );
    }
}

/// A legacy entry: its CRC check and its messages (decompressed when it is
/// a compressed wrapper).
pub fn check_legacy(l: &LegacyView<'_>, scratch: &mut Vec<u8>) {
    let pos = l.position;
    let end = pos + l.bytes().len() as u64;
    match l.check_crc() {
        Ok(()) => assert!(l.crc_valid()),
        Err(e) => {
            assert!(!l.crc_valid());
            assert_eq!(e.offset, pos + 12);
        }
    }
    let inner: Vec<Option<u64>> = match l.messages(scratch, LIMITS) {
        Ok(msgs) => {
            let count = msgs.len();
            let first = msgs.first_offset();
            assert!(count > 0, "an entry holds at least one message");
            let all: Vec<_> = msgs.collect();
            assert_eq!(all.len(), count, "as many messages as announced");
            assert_eq!(all.first().map(|m| m.offset), Some(first));
            if l.compression() == Some(Compression::None) {
                assert_eq!(count, 1);
                assert_eq!(first, l.offset);
            } else {
                // Inner messages come out in the order they are stored.
                for pair in all.windows(2) {
                    assert!(
                        pair[0].inner_position < pair[1].inner_position,
                        "inner messages in order"
                    );
                }
            }
            all.iter().map(|m| m.inner_position).collect()
        }
        Err(e) => {
            within(&e, pos, end, "legacy messages");
            if let Some(d) = e.decompressed_at {
                assert!(d <= scratch.len() as u64);
            }
            Vec::new()
        }
    };
    for p in inner.into_iter().flatten() {
        assert!(p < scratch.len() as u64);
    }
}

// ------------------------------------------------------------ partition

/// A data directory with one offsets partition `__consumer_offsets-0`, its
/// segments, index and checkpoint built from the input (see
/// [`partition`]), in a temporary folder of this thread.
struct DataScratch {
    root: PathBuf,
}

impl DataScratch {
    fn new() -> Self {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let root = std::env::temp_dir().join(format!(
            "kaen-log-fuzz-dir-{}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Ordering::Relaxed)
        ));
        DataScratch { root }
    }
}

impl Drop for DataScratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.root);
    }
}

thread_local! {
    static DATA_SCRATCH: DataScratch = DataScratch::new();
}

/// Take `n` bytes off the front of `rest`.
fn take<'a>(rest: &mut &'a [u8], n: usize) -> &'a [u8] {
    let (head, tail) = rest.split_at(n.min(rest.len()));
    *rest = tail;
    head
}

/// Take a big-endian integer of `N` bytes (zero-padded when the input runs out).
fn take_be<const N: usize>(rest: &mut &[u8]) -> [u8; N] {
    let mut out = [0u8; N];
    let got = take(rest, N);
    out[..got.len()].copy_from_slice(got);
    out
}

/// Fuzz target `partition`: a small partition folder made from the input,
/// run through everything that walks a partition — every walk policy,
/// log start and end, producer state and the last stable offset, the
/// `.txnindex` check, committed-offset replay, lag under both isolation
/// levels, recovery preview, verification with `--deep`, statistics and
/// diff. The input:
///
/// ```text
/// byte 0: flags. bit 0: an .index for the first segment follows
///                        (u8 length, then its bytes);
///                bit 1: two segments: u16 split position, then the second
///                        segment's base offset (i64);
///                bit 2: a replication-offset-checkpoint follows (i64 high watermark);
///                bit 3: a log-start-offset-checkpoint follows (i64).
/// the rest: the log bytes (split in two with bit 1).
/// ```
///
/// With flags 0 the input is one byte, then a segment file as it is.
pub fn partition(data: &[u8]) {
    DATA_SCRATCH.with(|s| check_partition(&s.root, data));
}

/// Build the folder under `root` from `data` and check it (see [`partition`]).
pub fn check_partition(root: &Path, data: &[u8]) {
    use kaen_log::log::walk::{Policy, Step};
    let _ = std::fs::remove_dir_all(root);
    let dir = root.join("__consumer_offsets-0");
    std::fs::create_dir_all(&dir).expect("create the scratch folder");
    let mut rest = data;
    let flags = take(&mut rest, 1).first().copied().unwrap_or(0);
    let index = if flags & 1 != 0 {
        let n = take(&mut rest, 1).first().copied().unwrap_or(0);
        Some(take(&mut rest, usize::from(n)).to_vec())
    } else {
        None
    };
    let split = if flags & 2 != 0 {
        let at = u16::from_be_bytes(take_be(&mut rest));
        let base = i64::from_be_bytes(take_be(&mut rest));
        Some((usize::from(at), base))
    } else {
        None
    };
    let hw = (flags & 4 != 0).then(|| i64::from_be_bytes(take_be(&mut rest)));
    let start = (flags & 8 != 0).then(|| i64::from_be_bytes(take_be(&mut rest)));
    let name = |base: i64, ext: &str| dir.join(format!("{:020}.{ext}", base.max(0)));
    match split {
        Some((at, base)) if base > 0 => {
            let (a, b) = rest.split_at(at.min(rest.len()));
            std::fs::write(name(0, "log"), a).expect("write");
            std::fs::write(name(base, "log"), b).expect("write");
        }
        _ => std::fs::write(name(0, "log"), rest).expect("write"),
    }
    if let Some(index) = &index {
        std::fs::write(name(0, "index"), index).expect("write");
    }
    let checkpoint = |file: &str, value: i64| {
        let text = format!("0\n1\n__consumer_offsets 0 {value}\n");
        std::fs::write(root.join(file), text).expect("write");
    };
    if let Some(hw) = hw {
        checkpoint("replication-offset-checkpoint", hw);
    }
    if let Some(start) = start {
        checkpoint("log-start-offset-checkpoint", start);
    }

    let p = Partition::open(&dir).expect("open the partition");
    let lens: Vec<u64> = p
        .segments
        .iter()
        .map(|s| std::fs::metadata(&s.log).map_or(0, |m| m.len()))
        .collect();
    // Every policy: entries inside their files, offsets that do not wrap,
    // CRC-valid entries only where the policy checks CRCs.
    for policy in [
        Policy::VALID_PREFIX,
        Policy::VALID_ENTRIES,
        Policy::EVERY_ENTRY,
        Policy::HEADERS,
    ] {
        let mut walk = p.walk(policy);
        let mut previous_damage = 0;
        while let Some(step) = walk.next_step().expect("walk") {
            match step {
                Step::Entry(w) => {
                    let i = p
                        .segments
                        .iter()
                        .position(|s| s.base_offset == w.segment.base_offset)
                        .expect("the entry's segment is the partition's");
                    assert!(w.entry.position() + w.entry.size() <= lens[i]);
                    // A negative lastOffsetDelta passes Kafka's checks
                    // (DefaultRecordBatch.ensureValid: size and CRC only), so
                    // the next offset need not exceed the base offset; it
                    // must be base + lastOffsetDelta + 1, without wrapping.
                    assert_eq!(
                        Some(w.next_offset),
                        w.entry.checked_next_offset(),
                        "next offset wraps"
                    );
                    if policy.checks == kaen_log::log::Checks::Crc {
                        assert!(w.entry.crc_valid(), "a damaged entry handed out");
                    }
                }
                Step::Damage(d) => {
                    previous_damage += 1;
                    assert!(d.position <= d.file_len);
                    assert!(d.error.offset <= d.file_len.max(d.position + 4096));
                }
                Step::SegmentStart { .. } | Step::SegmentEnd { .. } => {}
            }
        }
        assert_eq!(walk.damage().len(), previous_damage);
    }
    let end = p.log_end_offset().expect("log end");
    let start = p.log_start_offset(start);
    assert!(end >= p.segments.last().map_or(0, |s| s.base_offset));
    assert!(start >= p.segments.first().map_or(0, |s| s.base_offset));
    // Producer state, the LSO and the transaction index check.
    let opts = kaen_log::txn::TxnOptions {
        high_watermark: hw,
        ..Default::default()
    };
    let st = kaen_log::txn::analyze(&p, &opts).expect("analyze");
    assert!(st.last_stable_offset() <= hw.unwrap_or(st.log_end));
    kaen_log::txn::check_txn_indexes(&p, &st).expect("txn indexes");
    // Recovery, verification, statistics, diff.
    let pv = kaen_log::inspect::recovery::preview(&p, 0).expect("preview");
    if let Some((from, to)) = pv.lost_offsets {
        assert!(from < to);
    }
    let mut report = Report::default();
    let opts = verify::Options {
        limits: LIMITS,
        deep: true,
        ..verify::Options::default()
    };
    verify::verify_partition(&p, &opts, &mut report).expect("verify");
    kaen_log::inspect::log_stats::partition_stats(
        &p,
        &kaen_log::inspect::log_stats::StatsOptions {
            limits: LIMITS,
            meter: None,
        },
    )
    .expect("stats");
    let same = kaen_log::inspect::replica_diff::compare(&dir, &dir).expect("diff");
    assert!(same.identical(), "a copy differs from itself: {same:?}");
    // Committed offsets and lag.
    let mut replay = kaen_log::offsets::Replay::new(kaen_log::offsets::ReplayOptions {
        limits: LIMITS,
        ..Default::default()
    });
    replay.replay_partition(&p).expect("replay");
    // The hashed table replays as the exact path does.
    let mut exact = kaen_log::offsets::Replay::new_exact(kaen_log::offsets::ReplayOptions {
        limits: LIMITS,
        ..Default::default()
    });
    exact.replay_partition(&p).expect("exact replay");
    assert!(
        replay.commits().eq(exact.commits()),
        "the replays' tables differ"
    );
    assert!(
        replay.pending().eq(exact.pending()),
        "the replays' pending commits differ"
    );
    assert_eq!(replay.stats, exact.stats);
    assert_eq!(
        (replay.bad_count, replay.warning_count),
        (exact.bad_count, exact.warning_count)
    );
    let data_dir = kaen_log::log::DataDir::open(root).expect("data dir");
    for isolation in [
        kaen_log::txn::Isolation::ReadUncommitted,
        kaen_log::txn::Isolation::ReadCommitted,
    ] {
        let rows = kaen_log::inspect::consumer_lag::compute(
            std::slice::from_ref(&data_dir),
            &replay,
            &kaen_log::inspect::consumer_lag::LagOptions {
                isolation,
                limits: LIMITS,
                ..Default::default()
            },
        )
        .expect("lag");
        for r in rows {
            if let Some(e) = r.ends {
                assert!(e.log_start <= e.log_end.max(e.log_start));
            }
        }
    }
}
