//! The JSON Schema of every command's `--format json` document, generated
//! from the document types (`klog generate schema man/schema`; a test
//! checks the committed files are current and validates real output
//! against them).

use std::path::Path;

use anyhow::Context;

use crate::cmd;
use crate::report::document::{Document, Report};

fn schema_of<R: Report + 'static>() -> schemars::Schema {
    schemars::schema_for!(Document<'static, R>)
}

/// Every command's name and schema.
pub fn all() -> Vec<(&'static str, schemars::Schema)> {
    fn entry<R: Report + 'static>() -> (&'static str, schemars::Schema) {
        (R::COMMAND, schema_of::<R>())
    }
    vec![
        entry::<cmd::cluster::ClusterOut<'static>>(),
        entry::<cmd::commit::CommitReport>(),
        entry::<cmd::diff::DiffReport>(),
        (
            "dump-segment",
            schemars::schema_for!(cmd::dump_segment::DumpDocument),
        ),
        entry::<cmd::eos_demo::EosDemoReport>(),
        entry::<cmd::export::ExportReport>(),
        entry::<cmd::group_demo::GroupDemoReport>(),
        entry::<cmd::groups::GroupsReport>(),
        entry::<cmd::info::InfoReport>(),
        entry::<cmd::lag::LagReport>(),
        entry::<cmd::metadata::MetadataReport<'static>>(),
        entry::<cmd::produce::ProduceReport>(),
        entry::<cmd::replay_offsets::ReplayReport>(),
        entry::<cmd::reset_offsets::ResetReport<'static>>(),
        entry::<cmd::stats::StatsReport>(),
        entry::<cmd::summary::SummaryOut<'static>>(),
        entry::<cmd::tombstone::TombstoneReport>(),
        entry::<cmd::transactions::TransactionsReport>(),
        entry::<cmd::verify_crc::VerifyReport>(),
        (
            "verify-crc-recovery-preview",
            schema_of::<cmd::verify_crc::RecoveryReport>(),
        ),
    ]
}

/// Write `<command>.schema.json` for every command into `dir`.
pub fn write_all(dir: &Path) -> anyhow::Result<()> {
    for (name, schema) in all() {
        let path = dir.join(format!("{name}.schema.json"));
        let mut text = serde_json::to_string_pretty(&schema)?;
        text.push('\n');
        std::fs::write(&path, text).with_context(|| format!("write {}", path.display()))?;
    }
    Ok(())
}
