//! lag's pending-record count from batch headers agrees exactly with
//! counting every record, on every partition of the fixtures, for every
//! range of offsets.

use kaen_log::format::DecodeLimits;
use kaen_log::lag::{data_records_between, records_between_slowly};
use kaen_log::log::DataDir;

#[test]
fn the_header_count_equals_the_record_count_for_every_range() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures");
    let mut compared = 0;
    for dir in ["data", "groups", "kafka", "txn", "broker"] {
        let d = DataDir::open(&root.join(dir)).unwrap();
        for p in d.live() {
            let end = p.log_end_offset().unwrap();
            let start = p.log_start_offset(None);
            for from in start..=end {
                for to in from..=end + 1 {
                    let limits = DecodeLimits::default();
                    assert_eq!(
                        data_records_between(p, from, to, limits).unwrap(),
                        records_between_slowly(p, from, to, limits).unwrap(),
                        "{}: [{from}, {to})",
                        p.name()
                    );
                    compared += 1;
                }
            }
        }
    }
    assert!(compared > 1000, "{compared} ranges");
}
