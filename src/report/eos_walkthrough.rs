//! The text of `klog eos-demo`: the walk-through, every figure taken from
//! the run's document ([`kaen_log::demo::eos::EosDemo`]).

use std::fmt::Write;

use kaen_log::demo::eos::{
    Comparison, CrashPoint, EosDemo, Fencing, Idempotence, Instance, Logged, MarkerWritten,
    Pipeline, View,
};

use crate::report::table::{escape_cell, Fit};
use crate::report::Table;

/// `items` joined by ", " after `prefix`, wrapped before 100 columns with
/// continuation lines indented two more than the prefix.
fn wrapped(out: &mut String, prefix: &str, items: &[String]) {
    let indent = " ".repeat(prefix.len() - prefix.trim_start().len() + 2);
    let mut line = prefix.to_string();
    for (k, item) in items.iter().enumerate() {
        let sep = if k + 1 < items.len() { "," } else { "" };
        if k > 0 && line.len() + 1 + item.len() + sep.len() > 100 {
            let _ = writeln!(out, "{line}");
            line = indent.clone();
        } else if k > 0 {
            line.push(' ');
        }
        line.push_str(item);
        line.push_str(sep);
    }
    let _ = writeln!(out, "{line}");
}

/// A section title underlined with dashes, after a blank line.
pub(super) fn heading(out: &mut String, title: &str) {
    let _ = writeln!(out, "\n{title}\n{}", "-".repeat(title.chars().count()));
}

fn range(a: i64, b: i64) -> String {
    if a == b {
        a.to_string()
    } else {
        format!("{a}..={b}")
    }
}

fn orders(seen: &[u32]) -> String {
    if seen.is_empty() {
        return "nothing".into();
    }
    let list: Vec<String> = seen.iter().map(u32::to_string).collect();
    format!(
        "{} invoice{}: orders {}",
        seen.len(),
        if seen.len() == 1 { "" } else { "s" },
        list.join(" ")
    )
}

fn logged(l: &[Logged]) -> Vec<String> {
    l.iter()
        .map(|l| {
            if l.partitions.is_empty() {
                format!("{} {} e{}", l.offset, l.state, l.producer_epoch)
            } else {
                format!(
                    "{} {} e{} [{}]",
                    l.offset,
                    l.state,
                    l.producer_epoch,
                    l.partitions.join(" ")
                )
            }
        })
        .collect()
}

fn markers(m: &[MarkerWritten]) -> Vec<String> {
    m.iter()
        .map(|m| {
            format!(
                "{} e{} at {}-{} offset {}",
                m.marker, m.producer_epoch, m.topic, m.partition, m.offset
            )
        })
        .collect()
}

/// The whole walk-through.
pub fn text(dir: &str, d: &EosDemo, fit: Fit) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "klog eos-demo: exactly once, on disk");
    let _ = writeln!(out, "Data directory: {}", escape_cell(dir));
    let tv2 = d.transaction_version >= 2;
    if tv2 {
        let _ = writeln!(
            out,
            "Transaction version 2 (the cluster's transaction.version, Kafka 4.x's default,\n\
             TransactionVersion.LATEST_PRODUCTION; KIP-890): every commit and abort bumps the producer's\n\
             epoch. --transaction-version 1 runs the classic protocol, where only InitProducerId does."
        );
    } else {
        let _ = writeln!(
            out,
            "Transaction version 1 (--transaction-version 1): the classic protocol, where only\n\
             InitProducerId bumps the producer's epoch. Kafka 4.x's default is version 2 (KIP-890):\n\
             every commit and abort bumps it."
        );
    }
    idempotence(&mut out, &d.idempotence);
    pipeline(&mut out, &d.pipeline, tv2);
    fencing(&mut out, &d.fencing, tv2, fit);
    comparison(&mut out, &d.comparison, &d.pipeline, fit);
    out
}

fn idempotence(out: &mut String, i: &Idempotence) {
    heading(out, "1. Idempotence: producer id, epoch, sequence numbers");
    let _ = writeln!(
        out,
        "InitProducerId without a transactional id: producer {}, epoch 0 (a fresh id from the\n\
         coordinator's block: TransactionCoordinator.handleInitProducerId). Every batch carries\n\
         producerId (batch bytes 43..50), producerEpoch (51..52) and baseSequence (53..56); its last\n\
         sequence is baseSequence + lastOffsetDelta (23..26). The leader checks them before it appends\n\
         (Kafka: UnifiedLog.analyzeAndValidateProducerState, ProducerStateEntry.findDuplicateBatch,\n\
         ProducerAppendInfo.checkProducerEpoch and checkSequence; klog: txn::producer, the same rule):",
        i.producer_id
    );
    for r in &i.requests {
        let _ = writeln!(out, "  {}. {}", r.request, r.note);
        let verdict = match (r.outcome.as_str(), r.first_offset, r.last_offset) {
            ("appended", Some(a), Some(b)) => format!(
                "appended at offsets {}, the batch at byte {}",
                range(a, b),
                r.position.unwrap_or_default()
            ),
            ("duplicate", Some(a), Some(b)) => {
                format!("a duplicate, answered with offsets {}", range(a, b))
            }
            _ => format!("refused with {}", r.error.as_deref().unwrap_or("rejected")),
        };
        let _ = writeln!(
            out,
            "     epoch {}, sequences {}: {verdict}; log end {}",
            r.producer_epoch,
            range(i64::from(r.first_sequence), i64::from(r.last_sequence)),
            r.log_end_offset
        );
        let _ = writeln!(out, "     rule: {}", r.rule);
    }
    let appended = i
        .requests
        .iter()
        .filter(|r| r.outcome == "appended")
        .count();
    let _ = writeln!(
        out,
        "{}-{} holds {appended} of the {} batches sent: log end offset {}.",
        i.topic,
        i.partition,
        i.requests.len(),
        i.log_end_offset
    );
    let _ = writeln!(
        out,
        "\nThe producer snapshot a broker writes at a segment roll or a clean shutdown\n\
         (ProducerStateManager.takeSnapshot, writeSnapshot), named after the offset it is\n\
         valid up to: {}. Each field, and the rule that reads it:",
        i.snapshot_file
    );
    let mut buf = Vec::new();
    let _ = crate::report::annotated::write_file_fields(&mut buf, "", &i.snapshot);
    out.push_str(&String::from_utf8_lossy(&buf));
    let _ = writeln!(
        out,
        "Checked: klog's snapshot check (verify-crc --deep) finds it agrees with the log, and the\n\
         producer pass of klog transactions finds no sequence or epoch anomaly in {}-{}: the\n\
         refused batches never reached the disk. Kafka keeps a producer's last 5 batches in memory\n\
         but writes only the last one here: after a restart, a retry of an older batch is out of order.",
        i.topic, i.partition
    );
}

fn view(out: &mut String, p: &Pipeline, v: &View, indent: &str) {
    let pinned = if v.last_stable_offset < v.log_end_offset {
        " (an open transaction pins it)"
    } else {
        ""
    };
    let _ = writeln!(
        out,
        "{indent}{}: log end offset {}, last stable offset {}{pinned}",
        p.output, v.log_end_offset, v.last_stable_offset
    );
    let aborted: Vec<String> = v
        .aborted
        .iter()
        .map(|a| {
            format!(
                "producer {} offsets {} (last stable offset {})",
                a.producer_id,
                range(a.first_offset, a.last_offset),
                a.last_stable_offset
            )
        })
        .collect();
    let prefix = format!("{indent}  aborted transactions (.txnindex): ");
    if aborted.is_empty() {
        let _ = writeln!(out, "{prefix}none");
    } else {
        wrapped(out, &prefix, &aborted);
    }
    let _ = writeln!(
        out,
        "{indent}  read_committed reads:   {}",
        orders(&v.read_committed)
    );
    let _ = writeln!(
        out,
        "{indent}  read_uncommitted reads: {}",
        orders(&v.read_uncommitted)
    );
    let pending = if v.pending.is_empty() {
        "none".to_string()
    } else {
        v.pending
            .iter()
            .map(|x| format!("{} from producer {}", x.committed_offset, x.producer_id))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let _ = writeln!(
        out,
        "{indent}  {}'s committed offset of {}: {}",
        p.group,
        p.input,
        v.committed_offset
            .map_or("none".to_string(), |o| o.to_string())
    );
    let _ = writeln!(out, "{indent}  pending transactional commits: {pending}");
}

fn instance(out: &mut String, p: &Pipeline, i: &Instance, tv2: bool) {
    let who = if i.producer_id < 0 {
        "a plain producer".to_string()
    } else {
        format!("producer {}, epoch {}", i.producer_id, i.producer_epoch)
    };
    let _ = writeln!(out, "Instance {}: {who}", i.instance);
    if let Some(f) = i.fenced_with {
        let _ = writeln!(
            out,
            "  InitProducerId found the previous transaction Ongoing: the coordinator fenced it with\n  \
             epoch {f} and aborted it:"
        );
        wrapped(out, "    ", &markers(&i.markers));
    }
    if !i.coordinator.is_empty() {
        wrapped(out, "  __transaction_state-0: ", &logged(&i.coordinator));
    }
    let _ = writeln!(out, "  resumes from committed offset {}", i.resumed_from);
    for poll in &i.polls {
        let _ = writeln!(
            out,
            "  poll orders {}",
            range(poll.first_order, poll.last_order)
        );
        if let Some(o) = poll.invoices {
            let _ = writeln!(
                out,
                "    invoices at {}",
                range(o.first_offset, o.last_offset)
            );
        }
        if let Some(r) = &poll.resend {
            let _ = writeln!(
                out,
                "    the same request resent (its acknowledgement was lost): {r}"
            );
        }
        if let (Some(c), Some(at)) = (poll.committed_offset, poll.commit_log_offset) {
            let _ = writeln!(
                out,
                "    committed {c} ({}__offsets-0 offset {at})",
                if p.transactional_id.is_some() {
                    "transactional, "
                } else {
                    ""
                }
            );
        }
        if !poll.markers.is_empty() {
            wrapped(out, "    ", &markers(&poll.markers));
        }
        if let Some(e) = poll.epoch_after_commit.filter(|_| tv2) {
            let _ = writeln!(
                out,
                "    EndTxn answers with epoch {e}: the next transaction runs at it, sequences from 0"
            );
        }
        if !poll.coordinator.is_empty() {
            wrapped(
                out,
                "    __transaction_state-0: ",
                &logged(&poll.coordinator),
            );
        }
    }
    if let Some(c) = &i.crash {
        let _ = writeln!(out, "  CRASH {}; right after it:", c.at.name());
        view(out, p, &c.view, "    ");
    }
}

fn pipeline(out: &mut String, p: &Pipeline, tv2: bool) {
    heading(out, "2. Consume, transform, produce: exactly once");
    let _ = writeln!(
        out,
        "{} orders in {}. The application reads them in polls of {} as group {}, writes one\n\
         invoice per order to {} and commits its position in the same transaction\n({}):",
        p.orders,
        p.input,
        p.poll_size,
        p.group,
        p.output,
        p.transactional_id
            .as_deref()
            .map_or(String::new(), |t| format!("transactional id {t}"))
    );
    let _ = writeln!(
        out,
        "  send     AddPartitionsToTxn: the coordinator logs Ongoing; the invoices are a transactional batch\n  \
         offsets  AddOffsetsToTxn adds __offsets-0, then TxnOffsetCommit: the group coordinator writes a\n  \
         \x20        transactional batch to __offsets-0, pending until its marker (OffsetMetadataManager)"
    );
    if tv2 {
        let _ = writeln!(
            out,
            "  commit   PrepareCommit logged at the epoch + 1, COMMIT markers with that epoch to both\n  \
             \x20        partitions, CompleteCommit logged; EndTxn answers with the new epoch\n  \
             \x20        (TransactionCoordinator.endTransaction, TransactionMetadata.prepareAbortOrCommit,\n  \
             \x20        TransactionMarkerChannelManager; a leader takes a version 2 marker only above the\n  \
             \x20        producer's epoch, ProducerAppendInfo.checkProducerEpoch)"
        );
    } else {
        let _ = writeln!(
            out,
            "  commit   PrepareCommit logged, COMMIT markers to both partitions, CompleteCommit logged\n  \
             \x20        (TransactionCoordinator.endTransaction, TransactionMarkerChannelManager)"
        );
    }
    let points: Vec<&str> = p.crash_points.iter().map(|c| c.name()).collect();
    let _ = writeln!(
        out,
        "Faults: the acknowledgement of the first produce request is lost and the producer resends it;"
    );
    let _ = writeln!(
        out,
        "the application crashes at its first poll, once per attempt, at:"
    );
    wrapped(
        out,
        "  ",
        &points.iter().map(|p| p.to_string()).collect::<Vec<_>>(),
    );
    let _ = writeln!(
        out,
        "A restarted instance calls InitProducerId with the same transactional id and reads its\n\
         committed offset back."
    );
    for i in &p.instances {
        instance(out, p, i, tv2);
    }
    let e = &p.end;
    let _ = writeln!(out, "The end:");
    view(out, p, e, "  ");
    let dups = e.read_uncommitted.len() - e.read_committed.len();
    let _ = writeln!(
        out,
        "Every order is read exactly once by read_committed consumers; read_uncommitted consumers read\n\
         {dups} more invoice{}, all in aborted transactions. The committed offset {} is {}'s log end.",
        if dups == 1 { "" } else { "s" },
        e.committed_offset.unwrap_or(-1),
        p.input
    );
    let _ = writeln!(out, "What each crash point leaves:");
    for line in crash_summary(p) {
        let _ = writeln!(out, "  {line}");
    }
    versions(out, p, tv2);
}

/// The committed transactions' epochs, against the other transaction version.
fn versions(out: &mut String, p: &Pipeline, tv2: bool) {
    // (the transaction's epoch, its COMMIT markers' epoch)
    let mut commits = Vec::new();
    for i in &p.instances {
        let mut epoch = i.producer_epoch;
        for poll in &i.polls {
            if let (Some(m), Some(after)) = (poll.markers.first(), poll.epoch_after_commit) {
                commits.push((epoch, m.producer_epoch));
                epoch = after;
            }
        }
    }
    if commits.is_empty() {
        return;
    }
    let data: Vec<String> = commits.iter().map(|(d, _)| d.to_string()).collect();
    let marks: Vec<String> = commits.iter().map(|(_, m)| m.to_string()).collect();
    if tv2 {
        let _ = writeln!(
            out,
            "Transaction version 2 at work: the committed transactions ran at epochs {} and their COMMIT\n\
             markers carry {}: each commit bumped the epoch, and the producer went on with it. Under\n\
             --transaction-version 1 the markers carry the transaction's own epoch and only InitProducerId\n\
             moves it; a fenced transaction's ABORT carries the epoch + 1 under both.",
            data.join(", "),
            marks.join(", ")
        );
    } else {
        let _ = writeln!(
            out,
            "Transaction version 1: the committed transactions ran at epochs {} and their COMMIT markers\n\
             carry the same, {}: only InitProducerId moved the epoch. Under transaction version 2 (Kafka\n\
             4.x's default) each marker would carry the epoch + 1, and the producer would go on with it.",
            data.join(", "),
            marks.join(", ")
        );
    }
}

/// One line per crash point that was run.
fn crash_summary(p: &Pipeline) -> Vec<String> {
    p.crash_points
        .iter()
        .map(|c| {
            let what = match c {
                CrashPoint::BeforeProduce => "nothing written, the orders are read again",
                CrashPoint::AfterProduce => {
                    "an open transaction pins the last stable offset until the restart aborts it"
                }
                CrashPoint::AfterOffsets => {
                    "the pending offset commit is aborted too: the restart reads the old offset"
                }
                CrashPoint::AfterMarker => "committed: the restart goes on from the new offset",
            };
            format!("{:<15} {what}", c.name())
        })
        .collect()
}

fn fencing(out: &mut String, f: &Fencing, tv2: bool, fit: Fit) {
    heading(out, "3. Zombie fencing");
    let _ = writeln!(
        out,
        "Two instances with transactional id {}: A begins a transaction and stalls; B starts.",
        f.transactional_id
    );
    let rows: Vec<Vec<String>> = f
        .steps
        .iter()
        .map(|s| vec![s.instance.clone(), s.action.clone(), s.result.clone()])
        .collect();
    for line in crate::report::table::render(&["INSTANCE", "REQUEST", "ANSWER"], &rows, fit).lines()
    {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(out, "On disk, {}-{}:", f.topic, f.partition);
    let rows: Vec<Vec<String>> = f
        .batches
        .iter()
        .map(|b| {
            vec![
                range(b.first_offset, b.last_offset),
                b.position.to_string(),
                b.producer_id.to_string(),
                b.producer_epoch.to_string(),
                b.kind.clone(),
                b.keys.join(" "),
            ]
        })
        .collect();
    for line in crate::report::table::render(
        &["OFFSETS", "POSITION", "PRODUCER", "EPOCH", "KIND", "KEYS"],
        &rows,
        fit,
    )
    .lines()
    {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(
        out,
        "Log end offset {}: A's late write is not there. A read_committed consumer reads {}; the\n\
         partition's producer state holds epoch {}. The rule (Kafka's ProducerAppendInfo.checkProducerEpoch,\n\
         klog's txn::producer): a batch or marker below the producer's epoch is refused with\n\
         InvalidProducerEpochException, and the coordinator answers an old epoch with PRODUCER_FENCED.\n\
         A follower copying the leader's log (origin REPLICATION) only logs such a batch, so one found in\n\
         a log is what klog transactions reports as an epoch regression.",
        f.log_end_offset,
        f.read_committed.join(", "),
        f.producer_epoch
    );
    if tv2 {
        let _ = writeln!(
            out,
            "(Transaction version 2: B's commit bumped the epoch to {}, which its COMMIT carries; under\n\
             version 1 the COMMIT would carry B's {}.)",
            f.producer_epoch,
            f.producer_epoch - 1
        );
    }
}

fn comparison(out: &mut String, rows: &[Comparison], p: &Pipeline, fit: Fit) {
    heading(
        out,
        "4. At-least-once, idempotent, transactional: the same faults",
    );
    let points: Vec<&str> = p.crash_points.iter().map(|c| c.name()).collect();
    let _ = writeln!(
        out,
        "The same loop over the same {} orders, with the same resend and crashes\n({}), under each guarantee:",
        p.orders,
        points.join(", ")
    );
    let table = Table::of(rows)
        .header("read_uncommitted", "READ-UNCOMMITTED")
        .header("read_uncommitted_duplicates", "DUPLICATES")
        .header("read_committed", "READ-COMMITTED")
        .header("read_committed_duplicates", "DUPLICATES");
    for line in table.render(fit.indented(2)).lines() {
        let _ = writeln!(out, "  {line}");
    }
    let _ = writeln!(
        out,
        "At-least-once: the resend and the re-processed orders reach every reader. Idempotent: the\n\
         leader drops the resend, but a restarted producer gets a new producer id, so re-processed\n\
         orders are new batches. Transactional: re-processed orders were in aborted transactions,\n\
         which read_uncommitted consumers still read and read_committed consumers never do."
    );
}
