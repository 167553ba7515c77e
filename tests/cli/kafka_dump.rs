//! `dump-segment --print-data-log` prints kafka-dump-log's lines: on every
//! data-topic segment a real Kafka 4.x cluster wrote (fixtures/kafka-real),
//! klog's output is Kafka's `DumpLogSegments --deep-iteration
//! --print-data-log` output byte for byte. (Internal topics are left out:
//! Kafka printed those through its offsets, transaction and metadata
//! decoders, which klog's `decoded` JSON field covers instead.)

use crate::support::repo;

const INTERNAL: &[&str] = &[
    "__cluster_metadata",
    "__consumer_offsets",
    "__share_group_state",
    "__transaction_state",
];

#[test]
fn print_data_log_is_kafka_dump_log_byte_for_byte() {
    let root = repo().join("fixtures/kafka-real");
    let expected = root.join("expected/dump-log");
    let mut compared = 0;
    for broker in std::fs::read_dir(&expected).unwrap() {
        let broker = broker.unwrap().path();
        for folder in std::fs::read_dir(&broker).unwrap() {
            let folder = folder.unwrap().path();
            let name = folder.file_name().unwrap().to_string_lossy().into_owned();
            if INTERNAL.iter().any(|t| name.starts_with(t)) {
                continue;
            }
            for txt in std::fs::read_dir(&folder).unwrap() {
                let txt = txt.unwrap().path();
                let stem = txt.file_name().unwrap().to_string_lossy().into_owned();
                if stem.contains("index") {
                    continue;
                }
                // expected/dump-log/<broker>/<folder>/<base>.txt for <broker>/<folder>/<base>.log
                let seg = txt.strip_prefix(&expected).unwrap().with_extension("log");
                let o = assert_cmd::Command::cargo_bin("klog")
                    .unwrap()
                    .current_dir(&root)
                    .args(["dump-segment", "--print-data-log"])
                    .arg(&seg)
                    .output()
                    .unwrap();
                let kafka = std::fs::read(&txt).unwrap();
                assert_eq!(
                    String::from_utf8_lossy(&o.stdout),
                    String::from_utf8_lossy(&kafka),
                    "{}",
                    seg.display()
                );
                compared += 1;
            }
        }
    }
    assert!(compared >= 100, "only {compared} segments compared");
}
