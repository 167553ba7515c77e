//! The CLI test binary: one module per subcommand.

mod support;

mod broker;
mod cluster;
mod crash;
mod diff;
mod docs;
mod dump_segment;
mod eos_demo;
mod every_fixture;
mod export;
mod fixtures;
mod formats;
mod group_demo;
mod groups;
mod hostile_names;
mod info;
mod kafka_crash;
mod kafka_dump;
mod kafka_dump_files;
mod kafka_real;
mod kafka_tiered;
mod kafka_writers;
mod kraft;
mod kraft44;
mod lag;
mod layouts;
mod locking;
mod overflow;
mod produce;
mod readme;
mod replay_offsets;
mod report_html;
mod reset_offsets;
mod schema;
mod shutdown;
mod stats;
mod synopsis;
mod terminal;
mod time_format;
mod tombstone;
mod transactions;
mod verify_crc;

/// Every .rs file in tests/cli is declared above.
#[test]
fn no_forgotten_test_files() {
    let src = std::fs::read_to_string(support::repo().join("tests/cli/main.rs")).unwrap();
    for entry in std::fs::read_dir(support::repo().join("tests/cli")).unwrap() {
        let name = entry.unwrap().file_name().into_string().unwrap();
        if let Some(module) = name.strip_suffix(".rs") {
            if module != "main" {
                assert!(
                    src.contains(&format!("mod {module};")),
                    "tests/cli/{name} is not declared in main.rs"
                );
            }
        }
    }
}
