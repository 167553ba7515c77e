//! `--verify-index-only` by klog's own rules, for `.index` and
//! `.timeindex` files given alone and after kafka-dump-log's checks.

use std::path::Path;

use kaen_log::log::findings::Severity;

use crate::report::document::Entries;
use crate::report::Output;

/// `--verify-index-only` by klog's rules: every entry of the `.index` or
/// `.timeindex` at `path` against the log beside it
/// ([`kaen_log::inspect::recovery::check_indexes`]), each disagreement a
/// finding; the problems found.
pub(super) fn verify_findings(
    path: &Path,
    base: i64,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let file = path.display().to_string();
    let log = path.with_extension("log");
    anyhow::ensure!(
        log.is_file(),
        "{file}: no log {} beside it to verify the index against",
        log.display()
    );
    let seg = kaen_log::log::SegmentFiles {
        base_offset: base,
        index: Some(log.with_extension("index")).filter(|p| p.is_file()),
        timeindex: Some(log.with_extension("timeindex")).filter(|p| p.is_file()),
        log,
    };
    let findings = kaen_log::inspect::recovery::check_indexes(&seg, is_active_segment(path, base))?;
    let mut problems = 0;
    for f in findings.iter().filter(|f| f.file == path) {
        problems += u64::from(f.fails(Severity::Warning));
        if sink.is_text() {
            eprintln!("klog: {f}");
        } else {
            sink.entry(out, "finding", f)?;
        }
    }
    Ok(problems)
}

/// Whether the segment at `base` is the last of the folder `path` is in
/// (its active segment, whose index may end in preallocated zeros).
fn is_active_segment(path: &Path, base: i64) -> bool {
    let folder = path.parent().unwrap_or(Path::new("."));
    let Ok(entries) = std::fs::read_dir(folder) else {
        return true;
    };
    !entries.flatten().any(|e| {
        let name = e.file_name();
        let name = name.to_string_lossy();
        name.strip_suffix(".log")
            .and_then(|n| n.parse::<i64>().ok())
            .is_some_and(|b| b > base)
    })
}
