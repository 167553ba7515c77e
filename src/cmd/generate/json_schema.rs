//! The JSON Schema of every command's `--format json` document, generated
//! from the document types (`klog generate schema man/schema`; a test
//! checks the committed files are current and validates real output
//! against them).

use std::path::Path;

use anyhow::Context;

use crate::cmd::Declared;
use crate::report::document::{Document, Report};

/// The schema of a command's document `R`.
pub fn schema_of<R: Report + 'static>() -> schemars::Schema {
    schemars::schema_for!(Document<'static, R>)
}

/// A command's document `R`: its command's name and its schema.
pub fn entry<R: Report + 'static>() -> (&'static str, schemars::Schema) {
    (R::COMMAND, schema_of::<R>())
}

/// Write `<command>.schema.json` for every command of `commands` into `dir`.
pub fn write_all(dir: &Path, commands: &[Declared]) -> anyhow::Result<()> {
    let mut all: Vec<_> = commands.iter().flat_map(|c| (c.schemas)()).collect();
    all.sort_by_key(|(name, _)| *name);
    for (name, schema) in all {
        let path = dir.join(format!("{name}.schema.json"));
        let mut text = serde_json::to_string_pretty(&schema)?;
        text.push('\n');
        std::fs::write(&path, text).with_context(|| format!("write {}", path.display()))?;
    }
    Ok(())
}
