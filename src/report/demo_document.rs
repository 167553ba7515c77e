//! A demo's document (`eos-demo`, `group-demo`): the data directory, every
//! step and figure of the run, and with `--keep` the commands to explore
//! what was left.

use schemars::JsonSchema;
use serde::Serialize;

use crate::report::table::escape_cell;

/// The document of a demo whose run is `R`.
#[derive(Serialize, JsonSchema)]
pub struct DemoReport<R> {
    pub data_dir: String,
    #[serde(flatten)]
    pub run: R,
    /// With --keep: commands to explore what was left.
    pub explore: Vec<String>,
}

impl<R> DemoReport<R> {
    /// With --keep, the commands to explore what was left, after a blank
    /// line; else nothing.
    pub fn explore_text(&self) -> String {
        if self.explore.is_empty() {
            return String::new();
        }
        let mut text = String::from("\nThe data directory is kept. Explore it with:\n");
        for c in &self.explore {
            text.push_str(&format!("  {}\n", escape_cell(c)));
        }
        text
    }
}
