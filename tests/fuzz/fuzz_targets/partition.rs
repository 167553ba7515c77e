//! `cargo fuzz run partition`: see src/lib.rs for what is checked.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| kaen_log_fuzz::partition(data));
