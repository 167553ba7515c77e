//! What klog cannot see of a tiered partition's transactions: the records
//! below its local log start live in remote segments, and with them their
//! transaction indexes (`RemoteStorageManager.fetchIndex(TRANSACTION)`,
//! which a consumer's fetch from remote storage reads to drop aborted
//! records: `RemoteLogManager.collectAbortedTransactions`). The remote log
//! metadata says which of those segments hold aborted transactions
//! (`RemoteLogSegmentMetadata.isTxnIdxEmpty`).

use crate::log::findings::{Finding, Kind};
use crate::log::Partition;

use super::{LogStarts, RemotePartition};

/// A note on `p` when some of its offsets live in remote segments only
/// (`starts`), naming the remote segments whose transaction index is not
/// empty when the metadata (`remote`) is at hand.
pub fn unread_transactions(
    p: &Partition,
    starts: &LogStarts,
    remote: Option<&RemotePartition>,
) -> Option<Finding> {
    if !starts.has_remote_only() {
        return None;
    }
    let (from, to) = (starts.log_start, starts.local_log_start - 1);
    let said = match remote {
        None => {
            "no directory given holds its __remote_log_metadata records, which say which remote \
                 segments hold aborted transactions"
                .to_string()
        }
        Some(rp) => {
            let aborted: Vec<String> = rp
                .readable()
                .filter(|s| !s.txn_index_empty && s.end_offset >= from && s.start_offset <= to)
                .map(|s| format!("{}..={}", s.start_offset, s.end_offset))
                .collect();
            if aborted.is_empty() {
                "__remote_log_metadata says none of their segments holds an aborted transaction (every \
                 transaction index is empty)"
                    .to_string()
            } else {
                format!(
                    "__remote_log_metadata says the transaction index of remote segment{} {} holds aborted \
                     transactions",
                    if aborted.len() == 1 { "" } else { "s" },
                    aborted.join(", ")
                )
            }
        }
    };
    Some(Finding::new(
        Kind::TransactionsInRemoteStorage,
        &p.dir,
        0,
        Some(from),
        format!(
            "{}-{}: offsets {from}..={to} live in remote segments only (tiered storage), which klog cannot \
             read: the producers, transactions and aborted transactions shown are the local log's, from \
             {}; {said}",
            p.topic, p.partition, starts.local_log_start
        ),
    ))
}
