//! The files beside a log (`.index`, `.timeindex`, `.txnindex`, producer
//! `.snapshot`, and with `--layout` every kind klog knows): read here,
//! checked by the library, written by [`crate::report::indexes`].

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::inspect::layout::sidecar::{self, FileKind};
use kaen_log::log::findings::Severity;

use super::log_dump::dump_log;
use super::{kafka_index, DumpSegmentArgs};
use crate::report::document::Entries;
use crate::report::kafka_dump::after_run::AfterRun;
use crate::report::table::escape_cell;
use crate::report::{indexes, Output};

/// Kafka's index checks, instead of an index's entries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IndexCheck {
    /// `--index-sanity-check`: the check a broker runs on an index it
    /// opens ([`kaen_log::format::index::sanity_check`]).
    Sanity,
    /// `--verify-index-only`: every entry against the log beside the index
    /// ([`kaen_log::inspect::recovery::check_indexes`]).
    Verify,
}

/// A file's bytes (an index or snapshot may be as large as a segment).
fn read(path: &Path, max: u64) -> anyhow::Result<Vec<u8>> {
    kaen_log::log::files::read_regular(path, max)?
        .with_context(|| format!("{}: no such file", path.display()))
}

/// A file beside a log, field by field (`--layout`, and the text files,
/// which have only that view).
pub(super) fn dump_layout(
    path: &Path,
    kind: FileKind,
    sink: &mut Entries,
    out: &mut Output,
) -> anyhow::Result<u64> {
    let max = if kind.has_entries() {
        i32::MAX as u64
    } else {
        kaen_log::log::files::MAX_METADATA_FILE
    };
    let bytes = read(path, max)?;
    indexes::dump_file_layout(
        (path, &bytes),
        kind,
        |emit| sidecar::layout(kind, &bytes, emit),
        (sink, out),
    )
}

/// A segment's file by its kind (`name`: its offset and suffix, when
/// named as a segment's): the problems found.
pub(super) fn dump_file(
    path: &Path,
    name: Option<(i64, &str)>,
    args: &DumpSegmentArgs,
    budget: &mut Option<u64>,
    (sink, after): (&mut Entries, &mut AfterRun),
    out: &mut Output,
) -> anyhow::Result<u64> {
    let check = args.index_check();
    let beside = path.with_extension("log");
    // In text, an index with its log beside it is dumped as kafka-dump-log
    // dumps it (its sanity check aside); by klog's rules otherwise.
    let kafka_index = sink.is_text() && check != Some(IndexCheck::Sanity) && beside.is_file();
    let whole = || read(path, i32::MAX as u64);
    Ok(match (name, check) {
        (Some((base, kind @ ("index" | "timeindex"))), _) if kafka_index => {
            writeln!(out, "Dumping {}", escape_cell(&path.display().to_string()))?;
            let index_args = kafka_index::IndexArgs {
                time: kind == "timeindex",
                verify_only: check == Some(IndexCheck::Verify),
                max_message_size: args.max_message_size,
                limits: DecodeLimits {
                    max_decompressed: args.max_decompressed_bytes,
                },
                eager: !args.kafka_release.scala(),
            };
            kafka_index::dump(path, &beside, base, &index_args, (sink, after), out)?;
            if check == Some(IndexCheck::Verify) {
                verify_findings(path, base, sink, out)?
            } else {
                0
            }
        }
        (Some((base, kind @ ("index" | "timeindex"))), Some(IndexCheck::Sanity)) => {
            indexes::sanity_check((path, &whole()?), base, kind == "timeindex", sink, out)?
        }
        (Some((base, _)), Some(IndexCheck::Verify))
            if name.is_some_and(|(_, k)| k.ends_with("index") && k != "txnindex") =>
        {
            if sink.is_text() {
                writeln!(out, "Dumping {}", escape_cell(&path.display().to_string()))?;
            }
            verify_findings(path, base, sink, out)?
        }
        (Some((base, kind @ ("index" | "timeindex"))), _) => {
            indexes::dump_index((path, &whole()?), base, kind == "timeindex", sink, out)?
        }
        (Some((_, "txnindex")), _) => indexes::dump_txnindex((path, &whole()?), sink, out)?,
        (Some((_, "snapshot")), _) if sink.is_text() && args.print_data_log => {
            indexes::dump_snapshot_as_kafka((path, &whole()?), args.kafka_release, out)?
        }
        (Some((offset, "snapshot")), _) => {
            indexes::dump_snapshot((path, &whole()?), offset, sink, out)?
        }
        (Some((base, "log")), _) => dump_log(path, Some(base), args, budget, (sink, after), out)?,
        _ => dump_log(path, None, args, budget, (sink, after), out)?,
    })
}

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
