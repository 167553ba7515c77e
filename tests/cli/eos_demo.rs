//! `klog eos-demo`: every figure it prints is checked against values
//! derived from the scenario — Kafka's rules applied by hand in [`model`],
//! the bytes from the independent encoder `fixtures/encoder.py` and the
//! format's field positions — for every crash point; and the directory
//! contract it shares with group-demo.

use serde_json::Value;

use crate::support::{check_golden, encoded, stderr, stdout, TestEnv};

const T: i64 = 1_700_000_000_000;
const ORDERS: i64 = 12;
const POLL: i64 = 4;
const CRASHES: [&str; 4] = [
    "before-produce",
    "after-produce",
    "after-offsets",
    "after-marker",
];
/// Producer ids come from the coordinator's block in the order the demo
/// asks: the idempotent producer, invoicer-tx, refunder, then the
/// idempotent loop's instances.
const PAYMENTS_PID: i64 = 1000;
const LOOP_PID: i64 = 1001;
const FENCING_PID: i64 = 1002;

fn run(env: &TestEnv, dir: &str, crash: Option<&str>, keep: bool) -> Value {
    run_at(env, dir, crash, keep, 2)
}

/// `run` on a cluster at `transaction.version` `tv`.
fn run_at(env: &TestEnv, dir: &str, crash: Option<&str>, keep: bool, tv: i16) -> Value {
    let tv = tv.to_string();
    let mut args = vec![
        "eos-demo",
        "--dir",
        dir,
        "--format",
        "json",
        "--transaction-version",
        &tv,
    ];
    if let Some(c) = crash {
        args.extend(["--crash-at", c]);
    }
    if keep {
        args.push("--keep");
    }
    let o = env.run(&args, None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).is_empty(), "{}", stderr(&o));
    serde_json::from_str(&stdout(&o)).unwrap()
}

fn i(v: &Value) -> i64 {
    v.as_i64().unwrap_or_else(|| panic!("not an integer: {v}"))
}

fn ints(v: &Value) -> Vec<i64> {
    v.as_array().unwrap().iter().map(i).collect()
}

/// What a reader sees of invoices-0 and the group's offsets.
#[derive(Debug, Clone, PartialEq)]
struct View {
    log_end_offset: i64,
    last_stable_offset: i64,
    /// (producer, first, last, last stable offset) of each `.txnindex` entry.
    aborted: Vec<(i64, i64, i64, i64)>,
    read_committed: Vec<i64>,
    read_uncommitted: Vec<i64>,
    committed_offset: Option<i64>,
    /// (producer, offset) of pending transactional commits.
    pending: Vec<(i64, i64)>,
}

impl View {
    fn of(v: &Value) -> View {
        View {
            log_end_offset: i(&v["log_end_offset"]),
            last_stable_offset: i(&v["last_stable_offset"]),
            aborted: v["aborted"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| {
                    (
                        i(&a["producer_id"]),
                        i(&a["first_offset"]),
                        i(&a["last_offset"]),
                        i(&a["last_stable_offset"]),
                    )
                })
                .collect(),
            read_committed: ints(&v["read_committed"]),
            read_uncommitted: ints(&v["read_uncommitted"]),
            committed_offset: v["committed_offset"].as_i64(),
            pending: v["pending"]
                .as_array()
                .unwrap()
                .iter()
                .map(|p| (i(&p["producer_id"]), i(&p["committed_offset"])))
                .collect(),
        }
    }
}

/// A `__transaction_state-0` record: (offset, state, epoch, partitions).
type Logged = (i64, &'static str, i64, Vec<&'static str>);

fn logged_of(v: &Value) -> Vec<(i64, String, i64, Vec<String>)> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|l| {
            (
                i(&l["offset"]),
                l["state"].as_str().unwrap().to_string(),
                i(&l["producer_epoch"]),
                l["partitions"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .map(|p| p.as_str().unwrap().to_string())
                    .collect(),
            )
        })
        .collect()
}

fn own(l: &[Logged]) -> Vec<(i64, String, i64, Vec<String>)> {
    l.iter()
        .map(|(o, s, e, p)| {
            (
                *o,
                s.to_string(),
                *e,
                p.iter().map(|x| x.to_string()).collect(),
            )
        })
        .collect()
}

#[derive(Debug, Default)]
struct Poll {
    first_order: i64,
    invoices: Option<(i64, i64)>,
    committed_offset: Option<i64>,
    commit_log_offset: Option<i64>,
    /// (topic-partition, offset) of the COMMIT markers.
    markers: Vec<(&'static str, i64)>,
    /// Their epoch, which EndTxn answers with.
    commit_epoch: Option<i64>,
    coordinator: Vec<Logged>,
}

#[derive(Debug)]
struct Instance {
    producer_epoch: i64,
    fenced_with: Option<i64>,
    /// (topic-partition, offset) of the ABORT markers of the fencing.
    aborts: Vec<(&'static str, i64)>,
    coordinator: Vec<Logged>,
    resumed_from: i64,
    polls: Vec<Poll>,
    crash: Option<(&'static str, View)>,
}

/// The transactional loop by Kafka's rules: a restarted instance's
/// InitProducerId bumps the epoch, and first fences an Ongoing transaction
/// (one more bump, PrepareAbort, ABORT markers to its partitions in name
/// order, CompleteAbort); a transaction writes its invoices (Ongoing logged
/// on the first send), then AddOffsetsToTxn (Ongoing with __offsets-0) and
/// the transactional commit, then PrepareCommit, the COMMIT markers and
/// CompleteCommit. An ABORT's `.txnindex` entry has the marker's offset + 1
/// as its last stable offset (no other transaction is open).
///
/// With transaction version 2 (`tv2`) every commit bumps the epoch
/// (`TransactionMetadata.prepareAbortOrCommit`): PrepareCommit, the COMMIT
/// markers and CompleteCommit carry epoch + 1, and the producer goes on
/// with it. The fencing gives the same epochs under both versions (version
/// 1 bumps in `prepareFenceProducerEpoch`, version 2 in
/// `prepareAbortOrCommit`).
fn model(crashes: &[&'static str], tv2: bool) -> (Vec<Instance>, View) {
    let (mut inv, mut off, mut ts) = (0i64, 0i64, 0i64);
    let mut log = |state: &'static str, epoch: i64, parts: Vec<&'static str>| {
        ts += 1;
        (ts - 1, state, epoch, parts)
    };
    let mut epoch = -1i64;
    // The open transaction: its first invoice offset, and whether the offsets partition joined.
    let mut ongoing: Option<(i64, bool)> = None;
    let (mut aborted, mut rc, mut ru) = (Vec::new(), Vec::new(), Vec::new());
    let mut committed: Option<i64> = None;
    let mut pending = Vec::new();
    let mut instances = Vec::new();
    let view = |inv: i64,
                ongoing: Option<(i64, bool)>,
                aborted: &Vec<(i64, i64, i64, i64)>,
                rc: &Vec<i64>,
                ru: &Vec<i64>,
                committed: Option<i64>,
                pending: &Vec<(i64, i64)>| View {
        log_end_offset: inv,
        last_stable_offset: ongoing.map_or(inv, |o| o.0),
        aborted: aborted.clone(),
        read_committed: rc.clone(),
        read_uncommitted: ru.clone(),
        committed_offset: committed,
        pending: pending.clone(),
    };
    for crash in crashes.iter().copied().map(Some).chain([None]) {
        let mut coordinator = Vec::new();
        let mut aborts = Vec::new();
        let fenced_with = match ongoing.take() {
            Some((first, with_offsets)) => {
                epoch += 1;
                let both = if with_offsets {
                    vec!["__offsets-0", "invoices-0"]
                } else {
                    vec!["invoices-0"]
                };
                coordinator.push(log("PrepareAbort", epoch, both));
                if with_offsets {
                    aborts.push(("__offsets-0", off));
                    off += 1;
                    pending.clear();
                }
                aborts.push(("invoices-0", inv));
                aborted.push((LOOP_PID, first, inv, inv + 1));
                inv += 1;
                coordinator.push(log("CompleteAbort", epoch, vec![]));
                Some(epoch)
            }
            None => None,
        };
        epoch += 1;
        coordinator.push(log("Empty", epoch, vec![]));
        let producer_epoch = epoch;
        let resumed_from = committed.unwrap_or(0);
        let mut pos = resumed_from;
        let mut polls: Vec<Poll> = Vec::new();
        let mut crashed = None;
        while pos < ORDERS {
            let hit = |c: &str, polls: &Vec<Poll>| polls.is_empty() && crash == Some(c);
            let mut poll = Poll {
                first_order: pos,
                ..Poll::default()
            };
            if hit("before-produce", &polls) {
                crashed = Some("before-produce");
                polls.push(poll);
                break;
            }
            poll.coordinator
                .push(log("Ongoing", epoch, vec!["invoices-0"]));
            poll.invoices = Some((inv, inv + POLL - 1));
            ongoing = Some((inv, false));
            ru.extend(pos..pos + POLL);
            inv += POLL;
            if hit("after-produce", &polls) {
                crashed = Some("after-produce");
                polls.push(poll);
                break;
            }
            poll.coordinator
                .push(log("Ongoing", epoch, vec!["__offsets-0", "invoices-0"]));
            poll.committed_offset = Some(pos + POLL);
            poll.commit_log_offset = Some(off);
            off += 1;
            ongoing = ongoing.map(|(f, _)| (f, true));
            pending = vec![(LOOP_PID, pos + POLL)];
            if hit("after-offsets", &polls) {
                crashed = Some("after-offsets");
                polls.push(poll);
                break;
            }
            if tv2 {
                epoch += 1;
            }
            poll.commit_epoch = Some(epoch);
            poll.coordinator.push(log(
                "PrepareCommit",
                epoch,
                vec!["__offsets-0", "invoices-0"],
            ));
            poll.markers = vec![("__offsets-0", off), ("invoices-0", inv)];
            off += 1;
            inv += 1;
            poll.coordinator.push(log("CompleteCommit", epoch, vec![]));
            rc.extend(pos..pos + POLL);
            committed = Some(pos + POLL);
            pending.clear();
            ongoing = None;
            pos += POLL;
            let first = polls.is_empty();
            polls.push(poll);
            if first && crash == Some("after-marker") {
                crashed = Some("after-marker");
                break;
            }
        }
        instances.push(Instance {
            producer_epoch,
            fenced_with,
            aborts,
            coordinator,
            resumed_from,
            polls,
            crash: crashed.map(|c| {
                (
                    c,
                    view(inv, ongoing, &aborted, &rc, &ru, committed, &pending),
                )
            }),
        });
    }
    let end = view(inv, ongoing, &aborted, &rc, &ru, committed, &pending);
    (instances, end)
}

fn check_pipeline(p: &Value, crashes: &[&'static str], tv2: bool) {
    let (instances, end) = model(crashes, tv2);
    let got = p["instances"].as_array().unwrap();
    assert_eq!(got.len(), instances.len(), "instances");
    for (n, (g, m)) in got.iter().zip(&instances).enumerate() {
        let at = format!("instance {}", n + 1);
        assert_eq!(i(&g["instance"]), n as i64 + 1);
        assert_eq!(i(&g["producer_id"]), LOOP_PID, "{at}");
        assert_eq!(i(&g["producer_epoch"]), m.producer_epoch, "{at}");
        assert_eq!(g["fenced_with"].as_i64(), m.fenced_with, "{at}");
        assert_eq!(logged_of(&g["coordinator"]), own(&m.coordinator), "{at}");
        let aborts: Vec<(String, i64)> = g["markers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| {
                assert_eq!(x["marker"], "ABORT");
                assert_eq!(x["producer_epoch"].as_i64(), m.fenced_with);
                (
                    format!("{}-{}", x["topic"].as_str().unwrap(), x["partition"]),
                    i(&x["offset"]),
                )
            })
            .collect();
        let want: Vec<(String, i64)> = m.aborts.iter().map(|(t, o)| (t.to_string(), *o)).collect();
        assert_eq!(aborts, want, "{at}");
        assert_eq!(i(&g["resumed_from"]), m.resumed_from, "{at}");
        let polls = g["polls"].as_array().unwrap();
        assert_eq!(polls.len(), m.polls.len(), "{at}");
        for (gp, mp) in polls.iter().zip(&m.polls) {
            assert_eq!(i(&gp["first_order"]), mp.first_order, "{at}");
            assert_eq!(
                i(&gp["last_order"]),
                (mp.first_order + POLL - 1).min(ORDERS - 1)
            );
            let inv = gp["invoices"]
                .as_object()
                .map(|o| (i(&o["first_offset"]), i(&o["last_offset"])));
            assert_eq!(inv, mp.invoices, "{at}");
            assert_eq!(gp["committed_offset"].as_i64(), mp.committed_offset, "{at}");
            assert_eq!(
                gp["commit_log_offset"].as_i64(),
                mp.commit_log_offset,
                "{at}"
            );
            let markers: Vec<(String, i64)> = gp["markers"]
                .as_array()
                .unwrap()
                .iter()
                .map(|x| {
                    assert_eq!(x["marker"], "COMMIT");
                    assert_eq!(x["producer_epoch"].as_i64(), mp.commit_epoch, "{at}");
                    (
                        format!("{}-{}", x["topic"].as_str().unwrap(), x["partition"]),
                        i(&x["offset"]),
                    )
                })
                .collect();
            let want: Vec<(String, i64)> = mp
                .markers
                .iter()
                .map(|(t, o)| (t.to_string(), *o))
                .collect();
            assert_eq!(markers, want, "{at}");
            assert_eq!(gp["epoch_after_commit"].as_i64(), mp.commit_epoch, "{at}");
            assert_eq!(logged_of(&gp["coordinator"]), own(&mp.coordinator), "{at}");
        }
        match (&g["crash"], &m.crash) {
            (Value::Null, None) => {}
            (c, Some((point, view))) => {
                assert_eq!(c["at"], *point, "{at}");
                assert_eq!(View::of(&c["view"]), *view, "{at} after {point}");
            }
            (c, None) => panic!("{at}: an unexpected crash {c}"),
        }
    }
    assert_eq!(View::of(&p["end"]), end, "the end");
    // The proof: every order exactly once under read_committed.
    assert_eq!(end.read_committed, (0..ORDERS).collect::<Vec<_>>());
    assert_eq!(end.committed_offset, Some(ORDERS));
}

/// The three guarantees' figures: a resend duplicates its batch only
/// without a producer id; each crash after the produce and before the
/// offsets are durable re-processes one poll, which without transactions
/// is read again by everyone and with them is an aborted transaction.
fn check_comparison(rows: &Value, crashes: &[&str]) {
    let after_produce = crashes.iter().filter(|c| **c == "after-produce").count() as i64;
    let aborted_polls = crashes
        .iter()
        .filter(|c| matches!(**c, "after-produce" | "after-offsets"))
        .count() as i64;
    let want = [
        (
            "at-least-once",
            "invoices.at-least-once-0",
            POLL + POLL * after_produce,
            POLL + POLL * after_produce,
        ),
        (
            "idempotent",
            "invoices.idempotent-0",
            POLL * after_produce,
            POLL * after_produce,
        ),
        ("transactional", "invoices-0", POLL * aborted_polls, 0),
    ];
    let rows = rows.as_array().unwrap();
    assert_eq!(rows.len(), 3);
    for (r, (g, topic, ru_dups, rc_dups)) in rows.iter().zip(want) {
        assert_eq!(r["guarantee"], g);
        assert_eq!(r["topic"], topic);
        assert_eq!(i(&r["read_uncommitted_duplicates"]), ru_dups, "{g}");
        assert_eq!(i(&r["read_uncommitted"]), ORDERS + ru_dups, "{g}");
        assert_eq!(i(&r["read_committed_duplicates"]), rc_dups, "{g}");
        assert_eq!(i(&r["read_committed"]), ORDERS + rc_dups, "{g}");
        assert_eq!(i(&r["missing"]), 0, "{g}");
        let dropped = g != "at-least-once";
        assert_eq!(
            r["resend"]
                .as_str()
                .unwrap()
                .starts_with("dropped, a duplicate of 0..=3"),
            dropped,
            "{g}: {}",
            r["resend"]
        );
    }
}

#[test]
fn every_crash_point_in_turn() {
    let env = TestEnv::new();
    for tv in [2, 1] {
        let d = run_at(&env, "d", None, false, tv);
        assert_eq!(d["schema_version"], 1);
        assert_eq!(d["command"], "eos-demo");
        assert_eq!(i(&d["transaction_version"]), i64::from(tv));
        check_pipeline(&d["pipeline"], &CRASHES, tv == 2);
        check_comparison(&d["comparison"], &CRASHES);
        assert!(!env.path("d").exists(), "the demo removes what it created");
    }
}

#[test]
fn each_crash_point_alone() {
    let env = TestEnv::new();
    for c in CRASHES {
        let d = run(&env, "d", Some(c), false);
        check_pipeline(&d["pipeline"], &[c], true);
        check_comparison(&d["comparison"], &[c]);
        let points: Vec<&str> = d["pipeline"]["crash_points"]
            .as_array()
            .unwrap()
            .iter()
            .map(|x| x.as_str().unwrap())
            .collect();
        assert_eq!(points, [c]);
    }
}

/// The leader's answer to a request: outcome, exception, offsets, log end after it.
type Answer = (&'static str, Option<&'static str>, Option<(i64, i64)>, i64);

/// The payments the idempotent producer sends: (epoch, first sequence,
/// key numbers); request k is stamped T + k.
const SENDS: [(i16, i32, [u32; 2]); 8] = [
    (0, 0, [0, 1]),
    (0, 2, [2, 3]),
    (0, 2, [2, 3]),
    (0, 6, [6, 7]),
    (0, 4, [4, 5]),
    (0, 6, [6, 7]),
    (1, 0, [8, 9]),
    (0, 8, [10, 11]),
];

#[test]
fn idempotence_and_the_snapshot_byte_for_byte() {
    let env = TestEnv::new();
    let d = run(&env, "kept", None, true);
    let idem = &d["idempotence"];
    assert_eq!(i(&idem["producer_id"]), PAYMENTS_PID);
    // The leader's answers by the rules: a new producer takes any first
    // sequence; 2..3 again is among the kept batches; 6 after 3 is a gap;
    // 4..5 then 6..7 follow; epoch 1 starts at 0; epoch 0 is then fenced.
    let answers: [Answer; 8] = [
        ("appended", None, Some((0, 1)), 2),
        ("appended", None, Some((2, 3)), 4),
        ("duplicate", None, Some((2, 3)), 4),
        ("rejected", Some("OutOfOrderSequenceException"), None, 4),
        ("appended", None, Some((4, 5)), 6),
        ("appended", None, Some((6, 7)), 8),
        ("appended", None, Some((8, 9)), 10),
        ("rejected", Some("InvalidProducerEpochException"), None, 10),
    ];
    // The batches on disk, from the independent encoder: the appended
    // requests at their offsets, stamped T + request number.
    let mut script = String::from("out = b''\n");
    let mut position = 0usize;
    let mut positions = Vec::new();
    let requests = idem["requests"].as_array().unwrap();
    assert_eq!(requests.len(), 8);
    for (k, (r, ((epoch, seq, keys), (outcome, error, offsets, end)))) in
        requests.iter().zip(SENDS.iter().zip(answers)).enumerate()
    {
        assert_eq!(r["outcome"], outcome, "request {}", k + 1);
        assert_eq!(r["error"].as_str(), error, "request {}", k + 1);
        assert_eq!(i(&r["producer_epoch"]), i64::from(*epoch));
        assert_eq!(i(&r["first_sequence"]), i64::from(*seq));
        assert_eq!(i(&r["last_sequence"]), i64::from(*seq) + 1);
        let got = r["first_offset"].as_i64().zip(r["last_offset"].as_i64());
        assert_eq!(got, offsets, "request {}", k + 1);
        assert_eq!(i(&r["log_end_offset"]), end, "request {}", k + 1);
        if outcome == "appended" {
            let (base, _) = offsets.unwrap();
            let recs: Vec<String> = keys
                .iter()
                .enumerate()
                .map(|(d, n)| format!("({d}, 0, b'payment-{n:02}', b'payment-{n:02}: paid')"))
                .collect();
            let one = format!(
                "batch({base}, [{}], first_timestamp={}, producer_id={PAYMENTS_PID}, producer_epoch={epoch}, base_sequence={seq})",
                recs.join(", "),
                T + k as i64 + 1
            );
            positions.push(position as i64);
            position += encoded(&format!("out = {one}")).len();
            script.push_str(&format!("out += {one}\n"));
        }
    }
    let appended: Vec<i64> = requests
        .iter()
        .filter_map(|r| r["position"].as_i64())
        .collect();
    assert_eq!(appended, positions);
    let log = std::fs::read(env.path("kept/payments-0/00000000000000000000.log")).unwrap();
    assert_eq!(log, encoded(&script), "payments-0, byte for byte");
    // The snapshot at the log end (10): producer 1000, epoch 1, last
    // sequence 1 at offset 9, offset delta 1, the timestamp of request 7,
    // no coordinator epoch, no open transaction.
    assert_eq!(
        idem["snapshot_file"],
        "payments-0/00000000000000000010.snapshot"
    );
    assert_eq!(i(&idem["snapshot_offset"]), 10);
    let snap = std::fs::read(env.path("kept/payments-0/00000000000000000010.snapshot")).unwrap();
    assert_eq!(
        snap,
        encoded(&format!(
            "out = producer_snapshot([({PAYMENTS_PID}, 1, 1, 9, 1, {}, -1, -1)])",
            T + 7
        ))
    );
    // Every field at its position (ProducerSnapshot: version int16, crc
    // uint32, count int32, then producerId int64, epoch int16, lastSequence
    // int32, lastOffset int64, offsetDelta int32, timestamp int64,
    // coordinatorEpoch int32, currentTxnFirstOffset int64), its bytes the file's.
    let fields: Vec<(i64, String, Vec<u8>)> = idem["snapshot"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| !f["bytes"].as_str().unwrap().is_empty())
        .map(|f| {
            let hex = f["bytes"].as_str().unwrap();
            let bytes = (0..hex.len())
                .step_by(2)
                .map(|k| u8::from_str_radix(&hex[k..k + 2], 16).unwrap())
                .collect();
            (
                i(&f["position"]),
                f["field"].as_str().unwrap().to_string(),
                bytes,
            )
        })
        .collect();
    let layout = [
        (0, "version (int16)", 2),
        (2, "crc (uint32)", 4),
        (6, "producer count (int32)", 4),
        (10, "producerId (int64)", 8),
        (18, "epoch (int16)", 2),
        (20, "lastSequence (int32)", 4),
        (24, "lastOffset (int64)", 8),
        (32, "offsetDelta (int32)", 4),
        (36, "timestamp (int64)", 8),
        (44, "coordinatorEpoch (int32)", 4),
        (48, "currentTxnFirstOffset (int64)", 8),
    ];
    assert_eq!(fields.len(), layout.len());
    for ((pos, name, bytes), (wpos, wname, len)) in fields.iter().zip(layout) {
        assert_eq!((*pos, name.as_str()), (wpos, wname));
        assert_eq!(bytes.as_slice(), &snap[wpos as usize..wpos as usize + len]);
    }
    // klog's other readers agree: the kept directory verifies with the
    // producer checks and holds no producer anomaly.
    let o = env.run(&["verify-crc", "--deep", "kept"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(&["transactions", "--format", "json", "kept"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let t: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(t["findings"].as_array().map_or(0, Vec::len), 0, "{t}");
}

/// A batch header's fields, read by the format's positions.
fn headers(log: &[u8]) -> Vec<(u64, i64, i64, i16, i16)> {
    let mut out = Vec::new();
    let mut at = 0usize;
    while at + 61 <= log.len() {
        let be = |from: usize, n: usize| {
            let mut v = 0i64;
            for b in &log[at + from..at + from + n] {
                v = v << 8 | i64::from(*b);
            }
            v
        };
        let len = be(8, 4) as usize + 12;
        out.push((
            at as u64,
            be(0, 8),         // baseOffset
            be(43, 8),        // producerId
            be(51, 2) as i16, // producerEpoch
            be(21, 2) as i16, // attributes
        ));
        at += len;
    }
    assert_eq!(at, log.len());
    out
}

#[test]
fn the_zombie_is_fenced_on_disk() {
    let env = TestEnv::new();
    for tv in [2i16, 1] {
        let kept = format!("kept{tv}");
        let d = run_at(&env, &kept, Some("after-produce"), true, tv);
        let f = &d["fencing"];
        // A (epoch 0) writes; B's InitProducerId fences the Ongoing
        // transaction with epoch 1 (its ABORT) and gets epoch 2; B writes
        // and commits: under transaction version 2 the commit bumps the
        // epoch, so the COMMIT carries 3, under version 1 B's 2. A's epoch-0
        // write and commit are refused, nothing appended.
        let commit_epoch = if tv == 2 { 3 } else { 2 };
        let log =
            std::fs::read(env.path(&format!("{kept}/refunds-0/00000000000000000000.log"))).unwrap();
        let transactional = 0x10;
        let control = 0x20;
        let on_disk = headers(&log);
        assert_eq!(
            on_disk
                .iter()
                .map(|h| (h.1, h.2, h.3, h.4))
                .collect::<Vec<_>>(),
            [
                (0, FENCING_PID, 0, transactional),
                (1, FENCING_PID, 1, transactional | control),
                (2, FENCING_PID, 2, transactional),
                (3, FENCING_PID, commit_epoch, transactional | control),
            ]
        );
        let shown: Vec<(u64, i64, i64, i64, String)> = f["batches"]
            .as_array()
            .unwrap()
            .iter()
            .map(|b| {
                (
                    b["position"].as_u64().unwrap(),
                    i(&b["first_offset"]),
                    i(&b["producer_id"]),
                    i(&b["producer_epoch"]),
                    b["kind"].as_str().unwrap().to_string(),
                )
            })
            .collect();
        let kinds = ["data", "ABORT", "data", "COMMIT"];
        let want: Vec<(u64, i64, i64, i64, String)> = on_disk
            .iter()
            .zip(kinds)
            .map(|(h, k)| (h.0, h.1, h.2, i64::from(h.3), k.to_string()))
            .collect();
        assert_eq!(shown, want);
        assert_eq!(i(&f["log_end_offset"]), 4);
        assert_eq!(i(&f["producer_epoch"]), i64::from(commit_epoch));
        assert_eq!(f["read_committed"], serde_json::json!(["refund-1"]));
        let answers: Vec<&str> = f["steps"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s["result"].as_str().unwrap())
            .collect();
        assert!(
            answers[5].starts_with("InvalidProducerEpochException"),
            "{answers:?}"
        );
        assert!(answers[6].starts_with("PRODUCER_FENCED"), "{answers:?}");
        // The coordinator's log ends with refunder committed, and tells the
        // transaction version: ClientTransactionVersion 2, or 0 for the
        // classic protocol (TransactionLogValue v1 on both).
        let o = env.run(&["transactions", "--format", "json", &kept], None);
        let t: Value = serde_json::from_str(&stdout(&o)).unwrap();
        let refunder = t["coordinator"]
            .as_array()
            .unwrap()
            .iter()
            .find(|m| m["transactional_id"] == "refunder")
            .unwrap_or_else(|| panic!("{t}"));
        assert_eq!(refunder["state"], "CompleteCommit");
        assert_eq!(i(&refunder["producer_epoch"]), i64::from(commit_epoch));
        assert_eq!(i(&refunder["record_version"]), 1);
        assert_eq!(
            i(&refunder["client_transaction_version"]),
            if tv == 2 { 2 } else { 0 }
        );
    }
}

#[test]
fn the_walk_through_is_golden() {
    let env = TestEnv::new();
    check_golden(
        &env,
        &["eos-demo", "--dir", "data", "--now-ms", "1700000000000"],
        0,
        "eos-demo/all",
    );
    assert!(!env.path("data").exists());
    check_golden(
        &env,
        &[
            "eos-demo",
            "--dir",
            "data",
            "--now-ms",
            "1700000000000",
            "--transaction-version",
            "1",
        ],
        0,
        "eos-demo/tv1",
    );
}

#[test]
fn it_only_takes_a_new_or_its_own_directory() {
    let env = TestEnv::new();
    // Someone else's data: refused, nothing touched.
    let before: Vec<_> = std::fs::read_dir(env.path("fixtures/txn"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    let o = env.run(&["eos-demo", "--dir", "fixtures/txn"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(
        stderr(&o).contains("holds other data (.lock, __transaction_state-0, payments-0)"),
        "{}",
        stderr(&o)
    );
    let after: Vec<_> = std::fs::read_dir(env.path("fixtures/txn"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(before, after);
    // Folders named like the demo's but without its marker are not its own.
    std::fs::create_dir_all(env.path("mine/invoices-0")).unwrap();
    let o = env.run(&["eos-demo", "--dir", "mine"], None);
    assert_eq!(o.status.code(), Some(2));
    assert!(env.path("mine/invoices-0").exists());
    // A kept run is cleared by the next, until a file in it changes.
    let o = env.run(&["eos-demo", "--dir", "kept", "--keep"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(
        stdout(&o).contains("klog transactions kept"),
        "{}",
        stdout(&o)
    );
    let o = env.run(&["eos-demo", "--dir", "kept", "--keep"], None);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let o = env.run(
        &[
            "produce",
            "kept",
            "--topic",
            "invoices",
            "--timestamp-ms",
            "1",
        ],
        Some("mine\n"),
    );
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let log = env.path("kept/invoices-0/00000000000000000000.log");
    let mine = std::fs::read(&log).unwrap();
    let o = env.run(&["eos-demo", "--dir", "kept"], None);
    assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
    assert!(
        stderr(&o).contains(
            "the demo's files changed since it left them (invoices-0/00000000000000000000"
        ),
        "{}",
        stderr(&o)
    );
    assert_eq!(
        std::fs::read(&log).unwrap(),
        mine,
        "the user's record is kept"
    );
}

#[test]
fn a_bad_crash_point_is_refused() {
    let env = TestEnv::new();
    let o = env.run(
        &["eos-demo", "--dir", "d", "--crash-at", "during-lunch"],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(!env.path("d").exists());
}
