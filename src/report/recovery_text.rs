//! The text of `klog verify-crc --recovery-preview`: what a broker's next
//! start does to each partition folder
//! ([`kaen_log::inspect::restart::PartitionRestart`]), a line each.

use kaen_log::inspect::restart::PartitionRestart;
use kaen_log::log::PartitionState;

use crate::report::plural;

/// The text of one partition folder's prediction, under the folder's
/// name. After a clean shutdown a live folder whose segments are all
/// trusted gets no line when its directory's headline (`headline`) says
/// it once.
pub fn preview_lines(r: &PartitionRestart, headline: bool) -> Vec<String> {
    let name = r.folder.as_str();
    let local = if r.local_log_start_offset == r.log_start_offset {
        String::new()
    } else {
        format!(
            ", local log start {} (tiered storage: the offsets below it live in remote segments)",
            r.local_log_start_offset
        )
    };
    let loads = format!(
        "loads log start {}{local}, log end {}{}",
        r.log_start_offset,
        r.log_end_offset,
        r.high_watermark
            .map_or(String::new(), |hw| format!(", high watermark {hw}"))
    );
    let cost = format!(
        "re-reads {} ({} bytes) and rebuilds {} index files",
        plural(r.rescanned_segments, "segment", "segments"),
        r.rescanned_bytes,
        r.rebuilt_indexes
    );
    let mut lines = Vec::new();
    if !r.full_recovery {
        untrusted_lines(r, headline, &mut lines);
        if !r.recovered_segments.is_empty() {
            lines.push(format!("{name}: {cost}; {loads}"));
        }
    } else {
        recovery_lines(r, &format!("{cost}; {loads}"), &mut lines);
    }
    if let Some(then) = after_load(r.state).filter(|_| !lines.is_empty()) {
        lines.insert(0, format!("{name}: {then}"));
    }
    lines
}

/// What `LogManager.loadLog` does with a folder once it is loaded, by its
/// name's suffix (a live folder: nothing to say; a `-delete` one: said by
/// [`untrusted_lines`]).
fn after_load(state: PartitionState) -> Option<&'static str> {
    Some(match state {
        PartitionState::Future => {
            "a -future folder: a start loads and recovers it as a live one, and it becomes the \
             partition's future replica (LogManager.loadLog)"
        }
        PartitionState::Stray => {
            "a -stray folder: a start loads and recovers it as a live one, and keeps it aside, \
             unserved (LogManager.loadLog: \"Loaded stray log\")"
        }
        _ => return None,
    })
}

/// The lines of a start that recovers only the segments without a usable
/// offset index: after a clean shutdown, or in a `-delete` folder.
fn untrusted_lines(r: &PartitionRestart, headline: bool, lines: &mut Vec<String>) {
    let name = r.folder.as_str();
    let but = if r.state == PartitionState::Delete {
        lines.push(format!(
            "{name}: a -delete folder: a start loads it without recovery (LogLoader.load skips \
             recoverLog) and deletes it file.delete.delay.ms later (LogManager.addLogToBeDeleted)"
        ));
        "but"
    } else {
        if r.recovered_segments.is_empty() && !headline {
            lines.push(format!(
                "{name}: .kafka_cleanshutdown is present: a broker would skip recovery and trust these files as they are"
            ));
        }
        ".kafka_cleanshutdown is present, but"
    };
    for seg in &r.recovered_segments {
        lines.push(format!(
            "{name}: {but} {seg} has no usable offset index: a broker recovers that segment and rebuilds its indexes"
        ));
        if let Some(c) = r.cuts.iter().find(|c| c.file.file == *seg) {
            lines.push(format!(
                "{name}: and cuts {} at position {} ({} bytes): {}",
                c.file.file, c.position, c.bytes, c.error
            ));
        }
    }
}

/// The lines of a recovery from the recovery point: its cut, the later
/// segments it deletes and the offsets lost, then `tail` (its cost and
/// what it loads).
fn recovery_lines(r: &PartitionRestart, tail: &str, lines: &mut Vec<String>) {
    let name = r.folder.as_str();
    let from = r.from_segment.unwrap_or(0);
    let point = r.recovery_point;
    let Some(c) = r.cuts.first() else {
        lines.push(format!(
            "{name}: recovery from segment {from} (recovery point {point}) finds nothing to cut; {tail}"
        ));
        return;
    };
    lines.push(format!(
        "{name}: recovery from segment {from} (recovery point {point}) cuts {} at position {} ({} bytes): {}",
        c.file.file, c.position, c.bytes, c.error
    ));
    for s in &r.deleted_segments {
        lines.push(format!("{name}: and deletes the later segment {s}"));
    }
    if let Some([from, to]) = r.lost_offsets {
        lines.push(format!("{name}: offsets {from}..={to} disappear"));
    }
    lines.push(format!("{name}: {tail}"));
}
