//! Offset-index entries as brokers write them, checked against the log:
//! what a follower's multi-batch appends and an active segment's
//! preallocation leave is valid; an entry whose offset runs past its range
//! is not. Indexes and logs are hand-assembled.

use kaen_log::inspect::recovery::check_indexes;
use kaen_log::log::findings::Severity;
use kaen_log::log::SegmentFiles;

use crate::builder::{batch, record, ByteBuilder};

/// Six one-record batches at offsets 0..=5; returns the log and each batch's position.
fn log() -> (Vec<u8>, Vec<u64>) {
    let mut bytes = Vec::new();
    let mut positions = Vec::new();
    for offset in 0..6 {
        positions.push(bytes.len() as u64);
        bytes.extend(batch(offset, 0, 1, &record(0, b"value")));
    }
    (bytes, positions)
}

/// An offset index of (relative offset, position) entries.
fn index(entries: &[(i32, u64)]) -> Vec<u8> {
    let mut b = ByteBuilder::new();
    for &(offset, position) in entries {
        b = b.i32(offset).i32(position as i32);
    }
    b.bytes
}

fn check(log: &[u8], index_bytes: &[u8], is_last: bool) -> Vec<kaen_log::log::findings::Finding> {
    let dir = tempfile::tempdir().unwrap();
    let seg = SegmentFiles {
        base_offset: 0,
        log: dir.path().join("00000000000000000000.log"),
        index: Some(dir.path().join("00000000000000000000.index")),
        timeindex: Some(dir.path().join("00000000000000000000.timeindex")),
    };
    std::fs::write(&seg.log, log).unwrap();
    std::fs::write(seg.index.as_ref().unwrap(), index_bytes).unwrap();
    std::fs::write(seg.timeindex.as_ref().unwrap(), []).unwrap();
    check_indexes(&seg, is_last).unwrap()
}

#[test]
fn a_follower_entry_names_its_appends_largest_offset_at_its_first_batch() {
    // LogSegment.append indexes an append's largest offset at the position of
    // its first batch. A follower appended batches 1-3 in one fetch, then 4-5:
    // entries (3 at batch 1's position) and (5 at batch 4's position).
    let (log, at) = log();
    let found = check(&log, &index(&[(3, at[1]), (5, at[4])]), true);
    assert!(found.is_empty(), "{found:?}");
    // An offset beyond the batches before the next entry is wrong.
    let found = check(&log, &index(&[(4, at[1]), (5, at[4])]), true);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].kind, "index_target");
    assert_eq!(found[0].position, 0, "the first entry");
    // So is one below the batch it points at.
    let found = check(&log, &index(&[(0, at[1])]), true);
    assert_eq!(found[0].kind, "index_target");
}

#[test]
fn preallocated_slots_are_a_note_in_the_active_segment_and_a_warning_before() {
    // AbstractIndex preallocates the active segment's index; a clean roll
    // trims it. An all-zero first slot is not an entry either: no batch at
    // position 0 is ever indexed.
    let (log, at) = log();
    let mut padded = index(&[(3, at[1])]);
    padded.extend_from_slice(&[0; 8 * 20]);
    let found = check(&log, &padded, true);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(
        (found[0].kind.name(), found[0].severity),
        ("index_trailing_zeros", Severity::Note)
    );
    let found = check(&log, &padded, false);
    assert_eq!(found[0].severity, Severity::Warning);
    let found = check(&log, &[0; 8 * 20], true);
    assert_eq!(found.len(), 1, "{found:?}");
    assert_eq!(found[0].position, 0, "no used entry at all");
}

/// A time index of (timestamp, relative offset) entries.
fn time_index(entries: &[(i64, i32)]) -> Vec<u8> {
    let mut b = ByteBuilder::new();
    for &(ts, offset) in entries {
        b = b.i64(ts).i32(offset);
    }
    b.bytes
}

/// The time-index findings of a segment at `data/t-0/` holding [`log`]
/// (every batch stamped 1_700_000_000_000), with `.kafka_cleanshutdown`
/// in `data` when `clean`.
fn check_time(
    timeindex: &[u8],
    is_last: bool,
    clean: bool,
) -> Vec<kaen_log::log::findings::Finding> {
    check_time_in("t-0", timeindex, is_last, clean)
}

/// [`check_time`] with the segment in partition folder `folder`.
fn check_time_in(
    folder: &str,
    timeindex: &[u8],
    is_last: bool,
    clean: bool,
) -> Vec<kaen_log::log::findings::Finding> {
    let dir = tempfile::tempdir().unwrap();
    let part = dir.path().join("data").join(folder);
    std::fs::create_dir_all(&part).unwrap();
    if clean {
        std::fs::write(dir.path().join("data/.kafka_cleanshutdown"), "").unwrap();
    }
    let seg = SegmentFiles {
        base_offset: 0,
        log: part.join("00000000000000000000.log"),
        index: Some(part.join("00000000000000000000.index")),
        timeindex: Some(part.join("00000000000000000000.timeindex")),
    };
    std::fs::write(&seg.log, log().0).unwrap();
    std::fs::write(seg.index.as_ref().unwrap(), []).unwrap();
    std::fs::write(seg.timeindex.as_ref().unwrap(), timeindex).unwrap();
    check_indexes(&seg, is_last).unwrap()
}

#[test]
fn a_time_index_short_of_the_largest_timestamp_is_stale_where_a_broker_trusts_it() {
    // LogSegment.onBecomeInactiveSegment (a roll) and LogSegment.close (a
    // clean shutdown) append (maxTimestampSoFar, its offset) to the time
    // index; a broker loading the segment without recovering it takes its
    // largest timestamp from the last entry (readMaxTimestampAndOffsetSoFar).
    let max = 1_700_000_000_000;
    let sealed = time_index(&[(max, 0)]);
    for (is_last, clean) in [(false, false), (false, true), (true, true), (true, false)] {
        assert!(check_time(&sealed, is_last, clean).is_empty());
    }
    for stale in [time_index(&[]), time_index(&[(max - 1, 0)])] {
        // An older segment (it was rolled) or the active one of a cleanly
        // stopped broker: trusted, so stale is a warning at the last entry.
        for (is_last, clean) in [(false, false), (false, true), (true, true)] {
            let found = check_time(&stale, is_last, clean);
            assert_eq!(found.len(), 1, "{found:?}");
            assert_eq!(
                (found[0].kind.name(), found[0].severity, found[0].position),
                ("time_index_stale", Severity::Warning, 0)
            );
            assert!(
                found[0].detail.contains(&max.to_string()),
                "{}",
                found[0].detail
            );
        }
        // The active segment without a clean shutdown: LogLoader recovers
        // it (from the recovery point on), rebuilding the time index.
        assert!(check_time(&stale, true, false).is_empty());
        // The KRaft metadata log: KafkaRaftLog.createLog opens it with
        // hadCleanShutdown = false and recovery point 0, so every segment is
        // recovered on every start, clean shutdown or not.
        for (is_last, clean) in [(false, false), (false, true), (true, true), (true, false)] {
            let found = check_time_in("__cluster_metadata-0", &stale, is_last, clean);
            assert!(found.is_empty(), "{found:?}");
        }
    }
}
