use kaen_log::log::Partition;
use kaen_log::txn::{self, TxnOptions};

use crate::support::{check_golden, repo, stdout, TestEnv};

#[test]
fn golden_producers_findings_and_coordinator() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["transactions", "--now-ms", "1700000120000", "fixtures/txn"],
        1,
        "transactions/txn-hanging",
    );
    check_golden(
        &env,
        &[
            "transactions",
            "--format",
            "json",
            "--now-ms",
            "1700000120000",
            "fixtures/txn",
        ],
        1,
        "transactions/txn-json",
    );
}

#[test]
fn an_open_transaction_is_hanging_only_past_its_timeout() {
    let env = TestEnv::new();
    // The log's own max timestamp is "now": the open transaction is 0 ms old,
    // but the sequence and epoch violations still make the exit code 1.
    let o = env.run(
        &[
            "transactions",
            "--format",
            "json",
            "fixtures/txn/payments-0",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_str(&stdout(&o)).unwrap();
    let kinds: Vec<&str> = v["partitions"][0]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["kind"].as_str().unwrap())
        .collect();
    assert_eq!(
        kinds,
        [
            "out_of_order_sequence",
            "duplicate_sequence",
            "epoch_regression"
        ]
    );
    // A directory with only clean transactions: exit 0.
    let o = env.run(&["transactions", "fixtures/groups/ledger-0"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stdout(&o));
}

#[test]
fn last_stable_offset_is_the_first_open_transaction_or_the_end() {
    for (dir, lso, end) in [
        ("fixtures/txn/payments-0", 6, 17),
        ("fixtures/groups/ledger-1", 0, 2),
        ("fixtures/groups/ledger-0", 7, 7),
        ("fixtures/data/orders-0", 128, 128),
    ] {
        let st = txn::analyze(
            &Partition::open(&repo().join(dir)).unwrap(),
            &TxnOptions::default(),
        )
        .unwrap();
        assert_eq!(
            (st.first_unstable_or_end(), st.log_end),
            (lso, end),
            "{dir}"
        );
        assert_eq!(
            kaen_log::lag::first_open_transaction(
                &Partition::open(&repo().join(dir)).unwrap(),
                Default::default()
            )
            .unwrap()
            .unwrap_or(end),
            lso,
            "{dir}: lag's LSO agrees"
        );
    }
}

#[test]
fn the_append_path_indexes_aborted_transactions() {
    let bytes = std::fs::read(repo().join("fixtures/txn/payments-0/00000000000000000000.txnindex"))
        .unwrap();
    let (entries, partial) = kaen_log::format::index::txn_entries(&bytes).unwrap();
    assert_eq!(partial, 0);
    assert_eq!(entries.len(), 1);
    let e = entries[0];
    // Producer 200's transaction 8-9 was aborted at 10 while producer 300's (from 6) was open.
    assert_eq!(
        (
            e.producer_id,
            e.first_offset,
            e.last_offset,
            e.last_stable_offset
        ),
        (200, 8, 10, 6)
    );
    let st = txn::analyze(
        &Partition::open(&repo().join("fixtures/txn/payments-0")).unwrap(),
        &TxnOptions::default(),
    )
    .unwrap();
    assert_eq!(st.aborted.len(), 1);
    assert_eq!(
        (st.aborted[0].first_offset, st.aborted[0].last_offset),
        (e.first_offset, e.last_offset)
    );
}
