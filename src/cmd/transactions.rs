//! `klog transactions`: producers, open and hanging transactions, and the
//! coordinator's view.

use std::path::PathBuf;

use kaen_log::inspect::txn_overview::{self, CoordinatorTxn, HangingOut, ProducerOut, TxnOverview};
use kaen_log::log::findings::Summary;
use kaen_log::log::{classify, DataDir, Partition, PathKind};
use kaen_log::txn;
use kaen_log::txn::txnlog::{CoordinatorEnd, TRANSACTION_STATE_TOPIC};
use schemars::JsonSchema;
use serde::Serialize;

use crate::cmd::args::FailOn;
use crate::exit::Outcome;
use crate::report::document::TABLE;
use crate::report::progress::Progress;
use crate::report::table::{cell, escape_cell, Column};
use crate::report::TimeFormat;
use crate::report::{emit, formats, plural, Format, Output, Report, Table};

/// What idempotent and transactional producers left on disk, per partition:
/// each producer's epoch, last sequence and offsets, committed and aborted
/// transactions, transactions still open, the last stable offset, and
/// sequence and epoch violations (out-of-order or duplicate sequences,
/// epoch regressions, zombie transactional writes). When a
/// `__transaction_state-N` folder is present, the coordinator's view of
/// every transactional id follows, with its transaction version (TV 2:
/// the epoch is bumped at every commit and abort) and what the coordinator
/// does with it on its own once it loads its log again (COORDINATOR-END):
/// a PrepareCommit or PrepareAbort is completed at once, its markers
/// written; an Ongoing transaction is aborted once its start plus its
/// timeout has passed (`TransactionStateManager.timedOutTransactions`),
/// an ABORT marker landing at the log end of each of its partitions.
///
/// Hanging transactions follow `kafka-transactions find-hanging`, as
/// `verify-crc --deep` does: an open transaction whose producer last wrote
/// more than --transaction-timeout-ms (15 minutes) before --now-ms is
/// hanging unless the coordinator's state (the `__transaction_state`
/// partitions among the paths given) lists the partition in its
/// producer's transaction. Without --now-ms, or without a
/// `__transaction_state` partition, none is judged: a note
/// (`hanging_not_judged`) says why instead. --find-hanging prints only
/// the hanging ones, in find-hanging's columns.
/// A `__transaction_state` record or batch klog cannot read (an unknown
/// version, a batch that does not decompress) is an error finding, and the
/// views it affects say "incomplete".
///
/// Each segment's `.txnindex` is checked against the aborted transactions in
/// the log. Of a partition with tiered storage (KIP-405) only the local log
/// is read: a note (`transactions_in_remote_storage`) says which offsets
/// live in remote segments only, and, from `__remote_log_metadata` when a
/// directory given holds it, which of those segments hold aborted
/// transactions. Producer-state snapshots (`<offset>.snapshot`) in a partition folder are
/// decoded and compared with the state the log gives up to their offset.
///
/// Every finding has a severity: damage the walk stepped over is an error;
/// hanging transactions, sequence and epoch anomalies (which a broker does
/// not re-validate when it loads a log), transaction indexes and snapshots
/// that disagree with the log (which it rebuilds) are warnings; a marker
/// with no transaction is a note. Exit 1 when a finding reaches --fail-on
/// (default: error).
#[derive(Debug, clap::Args)]
pub struct TransactionsArgs {
    /// Data directories or partition folders.
    #[arg(required = true)]
    pub paths: Vec<PathBuf>,
    /// "Now" (epoch ms or ISO-8601) for the age of open transactions.
    /// Without it no transaction is judged hanging: a note says so (the
    /// clock is not taken for now, see klog-transactions(1)).
    #[arg(long, value_parser = kaen_log::format::time::parse_instant_ms_non_negative)]
    pub now_ms: Option<i64>,
    /// An open transaction whose producer last wrote more than this long
    /// ago (ms, or an ISO-8601 duration) may be hanging: find-hanging's
    /// --max-transaction-timeout, 15 minutes by default.
    #[arg(
        long,
        default_value_t = txn::hanging::DEFAULT_MAX_TRANSACTION_TIMEOUT_MS,
        value_parser = kaen_log::format::time::parse_duration_or_ms
    )]
    pub transaction_timeout_ms: i64,
    /// The same in minutes, in `kafka-transactions find-hanging`'s spelling:
    /// any Java int, as its argument parser takes it (0 makes every open
    /// transaction a candidate once its producer has written at all).
    #[arg(long, value_name = "MINUTES", conflicts_with = "transaction_timeout_ms",
          allow_negative_numbers = true,
          value_parser = clap::value_parser!(i64).range(i64::from(i32::MIN)..=i64::from(i32::MAX)))]
    pub max_transaction_timeout: Option<i64>,
    /// Print only the hanging transactions, in the columns of
    /// `kafka-transactions find-hanging` (text; JSON has every candidate
    /// under `find_hanging`, CSV is always the producers table).
    #[arg(long)]
    pub find_hanging: bool,
    /// Text: every partition with producers and every transactional id of
    /// the coordinator. By default text lists the partitions with an open
    /// transaction or a finding and the transactional ids the coordinator
    /// still acts on, and counts the rest (JSON and CSV always hold all).
    #[arg(long)]
    pub all: bool,
    /// Output format (csv: one row per producer of each partition, after
    /// its topic and partition, `open_transaction`'s fields as
    /// `open_transaction_first_offset` and
    /// `open_transaction_start_timestamp_ms`).
    #[arg(long, value_parser = formats(TABLE), default_value = "text")]
    pub format: Format,
    /// The least severity that makes the run exit 1.
    #[arg(long, value_enum, default_value_t = FailOn::Error)]
    pub fail_on: FailOn,
}

pub fn run(args: &TransactionsArgs, out: &mut Output) -> anyhow::Result<Outcome> {
    let progress = Progress::spinner(out.shows_progress(args.format == Format::Text));
    let mut partitions = Vec::new();
    for path in &args.paths {
        match classify(path)? {
            PathKind::Partition => partitions.push(Partition::open(path)?),
            PathKind::DataDir => partitions.extend(DataDir::open(path)?.live().cloned()),
            PathKind::File => anyhow::bail!(
                "{}: give a data directory or a partition folder",
                path.display()
            ),
        }
    }
    let opts = txn_overview::Options {
        now_ms: args.now_ms,
        max_transaction_timeout_ms: args
            .max_transaction_timeout
            .map_or(args.transaction_timeout_ms, |minutes| minutes * 60_000),
        meter: Progress::meter_of(&progress),
    };
    let doc = txn_overview::survey(&partitions, &opts)?;
    drop(progress);
    let fail_on = args.fail_on.severity();
    let failing = doc.findings.iter().filter(|f| f.fails(fail_on)).count() as u64;
    let report = TransactionsReport {
        doc,
        time_format: out.time_format(),
        only_hanging: args.find_hanging,
        all: args.all,
    };
    emit(&report, args.format, out)?;
    Ok(Outcome::from_count(failing))
}

/// The text columns of a producer of a partition.
fn producer_columns<'r>() -> [Column<&'r ProducerOut>; 10] {
    [
        Column::number("producer", |s| cell(&s.producer_id)),
        Column::number("epoch", |s| cell(&s.producer_epoch)),
        Column::number("last_sequence", |s| cell(&s.last_sequence)),
        Column::number("first_offset", |s| cell(&s.first_offset)),
        Column::number("last_offset", |s| cell(&s.last_offset)),
        Column::number("batches", |s| cell(&s.batches)),
        Column::text("txn", |s| cell(if s.transactional { "yes" } else { "no" })),
        Column::number("committed", |s| cell(&s.committed)),
        Column::number("aborted", |s| cell(&s.aborted)),
        Column::number("open_since", |s| {
            cell(&s.open_transaction.as_ref().map(|o| o.first_offset))
        }),
    ]
}

/// The CSV columns of a producer's partition, before the producer's JSON
/// fields (the open transaction's flattened).
fn partition_columns<'r>() -> [Column<&'r txn_overview::PartitionOut>; 2] {
    [
        Column::text("topic", |p| cell(&p.topic)),
        Column::number("partition", |p| cell(&p.partition)),
    ]
}

/// The text columns of a transactional id.
fn coordinator_columns<'r>() -> [Column<&'r txn_overview::CoordinatorTxn>; 10] {
    [
        Column::text("transactional_id", |m| {
            Some(if m.incomplete {
                format!("{} (incomplete)", m.transactional_id)
            } else {
                m.transactional_id.clone()
            })
        }),
        Column::number("producer", |m| cell(&m.producer_id)),
        Column::number("epoch", |m| cell(&m.producer_epoch)),
        Column::number("tv", |m| cell(&m.client_transaction_version)),
        Column::text("state", |m| cell(m.state)),
        Column::number("timeout_ms", |m| cell(&m.timeout_ms)),
        Column::text("partitions", |m| {
            Some(m.partitions.as_ref().map_or("-".to_string(), |ps| {
                ps.iter()
                    .flat_map(|tp| {
                        tp.partitions
                            .iter()
                            .map(move |i| format!("{}-{i}", tp.topic))
                    })
                    .collect::<Vec<_>>()
                    .join(",")
            }))
        }),
        Column::number("last_update_ms", |m| cell(&m.last_update_timestamp_ms)),
        // What the coordinator does on its own once it loads its log.
        Column::text("coordinator_end", |m| {
            cell(match m.coordinator_end {
                Some(CoordinatorEnd::AbortsAt { .. }) => "aborts on timeout",
                Some(CoordinatorEnd::CompletesOnLoad { commit: true }) => {
                    "completes on load (COMMIT)"
                }
                Some(CoordinatorEnd::CompletesOnLoad { commit: false }) => {
                    "completes on load (ABORT)"
                }
                None => "-",
            })
        }),
        // When its timeout check aborts an Ongoing transaction (start + timeout).
        Column::number("aborts_at_ms", |m| match m.coordinator_end {
            Some(CoordinatorEnd::AbortsAt { ms }) => cell(&ms),
            _ => None,
        }),
    ]
}

/// `klog transactions`'s document.
#[derive(Serialize, JsonSchema)]
pub struct TransactionsReport {
    #[serde(flatten)]
    doc: TxnOverview,
    #[serde(skip)]
    time_format: TimeFormat,
    #[serde(skip)]
    only_hanging: bool,
    #[serde(skip)]
    all: bool,
}

impl TransactionsReport {
    /// The find-hanging table: the hanging candidates in Kafka's columns.
    fn hanging_table(&self) -> Table {
        let rows: Vec<&HangingOut> = self
            .doc
            .find_hanging
            .candidates
            .iter()
            .filter(|c| c.hanging)
            .collect();
        Table::of(&rows)
            .only(&[
                "topic",
                "partition",
                "producer_id",
                "producer_epoch",
                "coordinator_epoch",
                "start_offset",
                "last_timestamp",
                "duration_min",
            ])
            .times(&["last_timestamp"], self.time_format)
    }

    /// The coordinator's table of `rows`.
    fn coordinator_table<'r>(&self, rows: impl IntoIterator<Item = &'r CoordinatorTxn>) -> Table {
        Table::listed(rows, &coordinator_columns())
            .times(&["last_update_ms", "aborts_at_ms"], self.time_format)
    }

    /// The first line of the text: the open transactions, then what the
    /// partitions with producers hold (nothing when none has one).
    fn answer(&self) -> String {
        let parts = &self.doc.partitions;
        let open: u64 = parts.iter().map(|p| p.open).sum();
        let open_in = parts.iter().filter(|p| p.open > 0).count() as u64;
        let with_producers = parts.iter().filter(|p| !p.producers.is_empty()).count() as u64;
        let committed: u64 = parts
            .iter()
            .flat_map(|p| &p.producers)
            .map(|s| s.committed)
            .sum();
        let aborted: u64 = parts.iter().map(|p| p.aborted.len() as u64).sum();
        if with_producers == 0 {
            // The count of partitions without producers says it all.
            return String::new();
        }
        let open = match open {
            0 => "no open transaction".to_string(),
            n => format!(
                "{} in {}",
                plural(n, "open transaction", "open transactions"),
                plural(open_in, "partition", "partitions")
            ),
        };
        format!(
            "{open}; {committed} committed and {aborted} aborted in {}\n",
            plural(with_producers, "partition with producers", "partitions with producers")
        )
    }

    /// Why the coordinator's table may lack something, or `None`.
    fn coordinator_incomplete(&self) -> Option<String> {
        if self.doc.coordinator_complete != Some(false) {
            return None;
        }
        let mut why = Vec::new();
        if !self.doc.coordinator_findings.is_empty() {
            why.push(format!(
                "{} not read (see the findings)",
                plural(
                    self.doc.coordinator_findings.len() as u64,
                    "record or batch",
                    "records or batches"
                )
            ));
        }
        if self.doc.damaged_batches > 0 {
            why.push(format!(
                "{} damaged",
                plural(self.doc.damaged_batches, "batch", "batches")
            ));
        }
        Some(why.join(", "))
    }
}

impl Report for TransactionsReport {
    const COMMAND: &'static str = "transactions";

    /// One row per producer of each partition, whatever --find-hanging.
    fn csv_table(&self) -> Option<Table> {
        let (partitions, producers): (Vec<_>, Vec<_>) = self
            .doc
            .partitions
            .iter()
            .flat_map(|p| p.producers.iter().map(move |s| (p, s)))
            .unzip();
        Some(Table::listed(partitions, &partition_columns()).beside(Table::flat(&producers)))
    }

    fn tables(&self) -> Vec<Table> {
        if self.only_hanging {
            return vec![self.hanging_table()];
        }
        let mut tables: Vec<Table> = self
            .doc
            .partitions
            .iter()
            .map(|p| Table::listed(&p.producers, &producer_columns()))
            .collect();
        if let Some(coordinator) = &self.doc.coordinator {
            tables.push(self.coordinator_table(coordinator.iter()));
        }
        tables
    }

    /// Per partition with producers or snapshots: a line, the producers
    /// table and the findings, indented; then the coordinator's table and
    /// what of its log was not read. With --find-hanging: find-hanging's
    /// table alone.
    fn text(&self, fit: crate::report::table::Fit) -> String {
        if self.only_hanging {
            return self.hanging_table().render(fit);
        }
        let indent =
            |text: String| -> String { text.lines().map(|l| format!("  {l}\n")).collect() };
        let mut tables = self.tables().into_iter();
        let mut out = self.answer();
        let (mut quiet, mut calm) = (0u64, 0u64);
        for p in &self.doc.partitions {
            let table = tables.next().unwrap_or_default();
            // Nothing to read in a partition without producers whose
            // snapshots (if any) match the log, nor (without --all) in one
            // with nothing open and nothing found: they are counted below.
            if p.producers.is_empty() && p.findings.is_empty() {
                quiet += 1;
                continue;
            }
            if !self.all && p.open == 0 && p.findings.is_empty() {
                calm += 1;
                continue;
            }
            let committed: u64 = p.producers.iter().map(|s| s.committed).sum();
            out.push_str(&format!(
                "{}: log end {}, last stable offset {}, {}, {} committed, {} aborted, {} open\n",
                escape_cell(&p.name),
                p.log_end_offset,
                p.last_stable_offset,
                plural(p.producers.len() as u64, "producer", "producers"),
                plural(committed, "transaction", "transactions"),
                p.aborted.len(),
                p.open
            ));
            // No producers: the counts say it, with no empty table under them.
            if !p.producers.is_empty() {
                out.push_str(&indent(table.render(fit.indented(2))));
            }
            for f in &p.findings {
                out.push_str(&indent(escape_cell(&f.to_string()).into_owned()));
            }
            let matching: Vec<_> = p.snapshots.iter().filter(|s| s.matches_log).collect();
            if let Some(last) = matching.last() {
                out.push_str(&format!(
                    "  {} the log (the last at offset {}, {})\n",
                    if matching.len() == 1 {
                        "1 producer snapshot matches".to_string()
                    } else {
                        format!("{} producer snapshots match", matching.len())
                    },
                    last.offset,
                    plural(last.producers, "producer", "producers")
                ));
            }
        }
        if calm > 0 {
            out.push_str(&format!(
                "{} with producers, nothing open and nothing found (--all lists {})\n",
                plural(calm, "more partition", "more partitions"),
                if calm == 1 { "it" } else { "them" }
            ));
        }
        if quiet > 0 {
            out.push_str(&format!(
                "{} no idempotent or transactional producers\n",
                if quiet == 1 {
                    "1 partition has".to_string()
                } else {
                    format!("{quiet} partitions have")
                }
            ));
        }
        if self.doc.coordinator.is_some() {
            match self.coordinator_incomplete() {
                None => out.push_str(&format!("coordinator ({TRANSACTION_STATE_TOPIC}):\n")),
                Some(why) => out.push_str(&format!(
                    "coordinator ({TRANSACTION_STATE_TOPIC}), incomplete: {why}:\n"
                )),
            }
            // Without --all, the ids the coordinator still acts on when it
            // loads its log (and those it could not read whole).
            let rows = self.doc.coordinator.iter().flatten();
            let acting: Vec<&CoordinatorTxn> = rows
                .clone()
                .filter(|m| self.all || m.coordinator_end.is_some() || m.incomplete)
                .collect();
            let done = rows.count() - acting.len();
            if !acting.is_empty() {
                let table = self.coordinator_table(acting);
                out.push_str(&indent(table.render(fit.indented(2))));
            }
            if done > 0 {
                out.push_str(&format!(
                    "  {} complete, nothing left to do (--all lists {})\n",
                    plural(done as u64, "transactional id", "transactional ids"),
                    if done == 1 { "it" } else { "them" }
                ));
            }
            for f in &self.doc.coordinator_findings {
                out.push_str(&indent(escape_cell(&f.to_string()).into_owned()));
            }
        }
        out
    }

    fn summary(&self) -> String {
        let mut out = String::new();
        if self.only_hanging {
            let h = &self.doc.find_hanging;
            if let Some(now) = h.now_ms {
                let listed = h.candidates.iter().filter(|c| !c.hanging).count();
                let hanging = h.candidates.len() - listed;
                out.push_str(&format!(
                    "klog: {} whose producer last wrote more than {} before {}: {}\n",
                    plural(
                        h.candidates.len() as u64,
                        "open transaction",
                        "open transactions"
                    ),
                    kaen_log::format::time::human_duration_ms(h.max_transaction_timeout_ms),
                    kaen_log::format::time::format_iso_ms(now),
                    match h.not_judged {
                        None => format!("{hanging} hanging, {listed} listed by their coordinator"),
                        Some(_) => "none judged".to_string(),
                    }
                ));
            }
            match (&h.not_judged, self.coordinator_incomplete()) {
                (Some(why), _) => out.push_str(&format!(
                    "klog: hanging transactions not judged: {why}\n"
                )),
                (None, Some(why)) => out.push_str(&format!(
                    "klog: incomplete: the coordinator's state ({TRANSACTION_STATE_TOPIC}) was not read whole: {why}\n"
                )),
                (None, None) => {}
            }
        }
        out.push_str(&format!("findings: {}\n", Summary::of(&self.doc.findings)));
        out
    }
}

impl crate::cmd::CommandEntry for TransactionsArgs {
    const EXAMPLES: &'static [(&'static str, &'static str)] = &[(
        "klog transactions --now-ms 1700000120000 DIR/payments-0",
        "producers, open and hanging transactions, the last stable offset",
    )];
    const SEE_ALSO: &'static [&'static str] = &["lag", "verify-crc", "eos-demo"];
    const DETAILS: Option<&'static str> = Some(include_str!("generate/pages/transactions.md"));

    fn schemas() -> Vec<(&'static str, schemars::Schema)> {
        use crate::cmd::generate::json_schema;
        vec![json_schema::entry::<TransactionsReport>()]
    }
}
