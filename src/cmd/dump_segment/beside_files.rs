//! The files beside a log (`.index`, `.timeindex`, `.txnindex`, producer
//! `.snapshot`, and with `--layout` every kind klog knows): read here,
//! checked by the library, written by [`crate::report::indexes`].

use std::io::Write;
use std::path::Path;

use anyhow::Context;
use kaen_log::format::DecodeLimits;
use kaen_log::inspect::layout::sidecar::{self, FileKind};

use super::index_verify::verify_findings;
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
