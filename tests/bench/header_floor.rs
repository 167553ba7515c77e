//! The floor for `klog lag` counting pending records: read every v2 batch
//! header of every segment of one topic with one positioned read each,
//! stepping over the bodies, and add up the record counts of the data
//! batches. No index, no checkpoints, no offsets topic, one thread: what a
//! count taken from batch headers pays at least (a group far behind needs
//! every header after its committed offset; one at the end, almost none).
//!
//! A Cargo example (`cargo build --release --example header_floor`), built
//! by `tests/bench/run.sh`. It does not use kaen_log: the layout is Kafka's
//! (`DefaultRecordBatch`: baseOffset int64, batchLength int32, ...,
//! attributes int16 at byte 21, recordsCount int32 at byte 57 of 61).
//!
//! Usage: header_floor DIR TOPIC   (reads DIR/TOPIC-<n>/*.log)

use std::os::unix::fs::FileExt;
use std::path::Path;
use std::process::ExitCode;

/// v2 batch header length (DefaultRecordBatch.RECORD_BATCH_OVERHEAD).
const HEADER: usize = 61;
/// Bytes before batchLength counts from: baseOffset + batchLength.
const LOG_OVERHEAD: u64 = 12;
/// The control flag in attributes.
const CONTROL: u16 = 1 << 5;

/// (batches, data records) of one segment, or a message.
fn segment(path: &Path) -> Result<(u64, u64), String> {
    let file = std::fs::File::open(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let len = file
        .metadata()
        .map_err(|e| format!("{}: {e}", path.display()))?
        .len();
    let (mut at, mut batches, mut records) = (0u64, 0u64, 0u64);
    let mut h = [0u8; HEADER];
    while at + HEADER as u64 <= len {
        file.read_exact_at(&mut h, at)
            .map_err(|e| format!("{}:{at}: {e}", path.display()))?;
        let batch_length = i32::from_be_bytes([h[8], h[9], h[10], h[11]]);
        if h[16] != 2 || batch_length < (HEADER as i32 - LOG_OVERHEAD as i32) {
            return Err(format!("{}:{at}: not a v2 batch", path.display()));
        }
        let attributes = u16::from_be_bytes([h[21], h[22]]);
        if attributes & CONTROL == 0 {
            records += u64::from(u32::from_be_bytes([h[57], h[58], h[59], h[60]]));
        }
        batches += 1;
        at += LOG_OVERHEAD + batch_length as u64;
    }
    Ok((batches, records))
}

fn main() -> ExitCode {
    let args: Vec<_> = std::env::args_os().skip(1).collect();
    let [dir, topic] = args.as_slice() else {
        eprintln!("usage: header_floor DIR TOPIC");
        return ExitCode::from(2);
    };
    let prefix = format!("{}-", topic.to_string_lossy());
    let mut logs = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("header_floor: {}: {e}", Path::new(dir).display());
            return ExitCode::from(2);
        }
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let is_partition = name
            .to_str()
            .and_then(|n| n.strip_prefix(&prefix))
            .is_some_and(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !is_partition {
            continue;
        }
        let Ok(files) = std::fs::read_dir(e.path()) else {
            continue;
        };
        logs.extend(
            files
                .flatten()
                .map(|f| f.path())
                .filter(|p| p.extension().is_some_and(|x| x == "log")),
        );
    }
    logs.sort();
    let (mut batches, mut records) = (0u64, 0u64);
    for log in &logs {
        match segment(log) {
            Ok((b, r)) => {
                batches += b;
                records += r;
            }
            Err(e) => {
                eprintln!("header_floor: {e}");
                return ExitCode::from(2);
            }
        }
    }
    println!(
        "{records} records in {batches} batches of {} segments",
        logs.len()
    );
    ExitCode::SUCCESS
}
