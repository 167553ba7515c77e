//! What a read_committed consumer reads, from the `.txnindex` files as
//! Kafka's broker answers a fetch and as its consumer filters it, on the
//! broker fixture (see fixtures/README.md, `broker/`): the expected
//! offsets come from the fixture's definition, not from klog.

use std::path::Path;

use kaen_log::inspect::consumer::Consumer;
use kaen_log::log::Partition;
use kaen_log::txn::fetch::collect_aborted;
use kaen_log::txn::Isolation;

fn broker() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/broker")
}

fn read(topic: &str, isolation: Isolation, from: i64) -> Vec<i64> {
    let mut c = Consumer::new(&broker(), "reader", topic, 0).with_isolation(isolation);
    c.position = from;
    let mut out = Vec::new();
    loop {
        let batch = c.poll(3).unwrap();
        if batch.is_empty() {
            return out;
        }
        out.extend(batch.iter().map(|r| r.offset));
    }
}

#[test]
fn ledger_0_hides_the_aborted_transaction() {
    // Producer 4000: records 0..2 COMMIT 3, 4..5 COMMIT 6, 7..8 ABORT 9,
    // 10 COMMIT 11; producer 4200's ABORT at 12 had no data.
    assert_eq!(
        read("ledger", Isolation::ReadUncommitted, 0),
        [0, 1, 2, 4, 5, 7, 8, 10]
    );
    assert_eq!(
        read("ledger", Isolation::ReadCommitted, 0),
        [0, 1, 2, 4, 5, 10]
    );
    // From inside the aborted transaction, and past it.
    assert_eq!(read("ledger", Isolation::ReadCommitted, 8), [10]);
    assert_eq!(read("ledger", Isolation::ReadCommitted, 10), [10]);
}

#[test]
fn the_index_answers_a_fetch_as_the_broker_does() {
    let p = Partition::open(&broker().join("ledger-0")).unwrap();
    // The one entry: producer 4000, first 7, last 9, last stable offset 10.
    let all = collect_aborted(&p, 0, 13).unwrap();
    assert_eq!(
        all.iter()
            .map(|a| (
                a.producer_id,
                a.first_offset,
                a.last_offset,
                a.last_stable_offset
            ))
            .collect::<Vec<_>>(),
        [(4000, 7, 9, 10)]
    );
    // Entries that end before the fetch or start at its upper bound are not returned.
    assert!(collect_aborted(&p, 10, 13).unwrap().is_empty());
    assert!(collect_aborted(&p, 0, 7).unwrap().is_empty());
    assert_eq!(collect_aborted(&p, 9, 10).unwrap().len(), 1);
}

#[test]
fn an_unreplicated_commit_is_not_stable_yet() {
    // ledger-1: producer 4100's records 0..2 and COMMIT at 3; the high
    // watermark is 3, so the transaction is not stable (last stable
    // offset 0) and read_uncommitted stops at the high watermark.
    let mut c =
        Consumer::new(&broker(), "reader", "ledger", 1).with_isolation(Isolation::ReadCommitted);
    assert!(c.poll(10).unwrap().is_empty());
    assert_eq!(c.position, 0);
    let mut c = Consumer::new(&broker(), "reader", "ledger", 1);
    assert_eq!(
        c.poll(10)
            .unwrap()
            .iter()
            .map(|r| r.offset)
            .collect::<Vec<_>>(),
        [0, 1, 2]
    );
}
