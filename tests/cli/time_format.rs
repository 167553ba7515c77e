//! One time rule: text shows every instant as ISO-8601 in UTC with
//! milliseconds unless `--time-format ms` (a global option, accepted
//! before or after the subcommand) asks for epoch milliseconds; JSON, JSONL
//! and CSV always carry epoch milliseconds.

use crate::support::{stderr, stdout, TestEnv};

/// Every command whose text shows instants, on a fixture that has some,
/// with the time column's header (ISO) and a time it shows (make.sh: TS =
/// 1700000000000 ms = 2023-11-14T22:13:20Z). `--now-ms` pins the clock.
const COMMANDS: &[(&[&str], &str, &str)] = &[
    (
        &["stats", "fixtures/data"],
        "MAX-TIMESTAMP",
        "2023-11-14T22:13:23.002Z",
    ),
    (
        &["stats", "fixtures/groups"],
        "MIN-TIMESTAMP",
        "2023-11-14T22:13:21.000Z",
    ),
    (
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "fixtures/kafka",
        ],
        "COMMIT-TIMESTAMP",
        "2023-11-14T22:13:20.002Z",
    ),
    (
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "--history",
            "--group",
            "kitchen",
            "fixtures/groups",
        ],
        "COMMIT-TIMESTAMP",
        "2023-11-14T22:13:21.000Z",
    ),
    (
        &["groups", "fixtures/kafka"],
        "STATE-TIMESTAMP",
        "2023-11-14T22:13:20.500Z",
    ),
    (
        &["groups", "fixtures/kraft"],
        "WRITTEN",
        "2023-11-14T22:13:20.019Z",
    ),
    (
        &["groups", "--share-state", "fixtures/kraft"],
        "WRITTEN",
        "2023-11-14T22:13:20.000Z",
    ),
    (
        &["transactions", "--now-ms", "1700000120000", "fixtures/txn"],
        "LAST-UPDATE",
        "2023-11-14T22:13:20.000Z",
    ),
    (
        &[
            "transactions",
            "--now-ms",
            "1700000960000",
            "--find-hanging",
            // Producers 9001 and 7002 have no transactional id there: hanging.
            "fixtures/groups",
            "fixtures/txn/__transaction_state-0",
        ],
        "LAST-TIMESTAMP",
        "2023-11-14T22:13:20.000Z",
    ),
];

/// Whether `text` holds a run of exactly 13 digits (epoch milliseconds of
/// 2001 to 2286) that is not part of a longer word or number.
fn has_epoch_ms(text: &str) -> Option<&str> {
    let bytes = text.as_bytes();
    let word = |i: usize| bytes.get(i).is_some_and(|b| b.is_ascii_alphanumeric());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i].is_ascii_digit() && (i == 0 || !word(i - 1)) {
            let end = (i..bytes.len())
                .find(|&j| !bytes[j].is_ascii_digit())
                .unwrap_or(bytes.len());
            if end - i == 13 && !word(end) && bytes.get(end) != Some(&b'.') {
                return Some(&text[i..end]);
            }
            i = end;
        } else {
            i += 1;
        }
    }
    None
}

fn run(env: &TestEnv, args: &[&str]) -> String {
    let o = env.run(args, None);
    assert!(
        matches!(o.status.code(), Some(0 | 1)),
        "klog {args:?}: {}",
        stderr(&o)
    );
    stdout(&o)
}

#[test]
fn text_shows_instants_as_iso_by_default_and_ms_when_asked() {
    let env = TestEnv::new();
    for &(args, header, iso) in COMMANDS {
        let text = run(&env, args);
        assert!(text.contains(iso), "klog {args:?}:\n{text}");
        assert!(
            text.lines()
                .any(|l| l.split_whitespace().any(|h| h == header)),
            "klog {args:?}: no {header} column:\n{text}"
        );
        assert_eq!(
            has_epoch_ms(&text),
            None,
            "klog {args:?}: raw epoch ms in text:\n{text}"
        );
        // `--time-format ms`, after the subcommand or before it: the numbers
        // come back, and no ISO time is left.
        let after = run(&env, &[args, &["--time-format", "ms"]].concat());
        let before = run(&env, &[&["--time-format", "ms"], args].concat());
        assert_eq!(after, before, "klog {args:?}");
        assert!(has_epoch_ms(&after).is_some(), "klog {args:?}:\n{after}");
        assert!(!after.contains(".000Z"), "klog {args:?}:\n{after}");
        // Explicit iso is the default.
        assert_eq!(
            run(&env, &[args, &["--time-format", "iso"]].concat()),
            text,
            "klog {args:?}"
        );
    }
}

#[test]
fn json_and_csv_keep_epoch_ms_whatever_the_time_format() {
    let env = TestEnv::new();
    for &(args, _, _) in COMMANDS {
        let json = run(&env, &[args, &["--format", "json"]].concat());
        assert!(has_epoch_ms(&json).is_some(), "klog {args:?}:\n{json}");
        assert!(!json.contains(".000Z\""), "klog {args:?}:\n{json}");
        for format in ["iso", "ms"] {
            assert_eq!(
                run(
                    &env,
                    &[args, &["--format", "json", "--time-format", format]].concat()
                ),
                json,
                "klog {args:?} --time-format {format}"
            );
        }
    }
    for args in [
        &[
            "replay-offsets",
            "--now-ms",
            "1700000100000",
            "fixtures/kafka",
        ][..],
        &["groups", "fixtures/kafka"],
        &["transactions", "--now-ms", "1700000120000", "fixtures/txn"],
    ] {
        let csv = run(&env, &[args, &["--format", "csv"]].concat());
        assert!(has_epoch_ms(&csv).is_some(), "klog {args:?}:\n{csv}");
        assert!(!csv.contains("Z,") && !csv.contains("Z\n"), "{csv}");
        let ms = run(
            &env,
            &[args, &["--format", "csv", "--time-format", "ms"]].concat(),
        );
        assert_eq!(ms, csv, "klog {args:?}");
    }
}

#[test]
fn the_epoch_ms_scan_finds_only_13_digit_numbers() {
    assert_eq!(has_epoch_ms("a 1700000000000 b"), Some("1700000000000"));
    assert_eq!(has_epoch_ms("x  1700000000000\n"), Some("1700000000000"));
    assert_eq!(has_epoch_ms("00000000000000000000.log"), None);
    assert_eq!(has_epoch_ms("2023-11-14T22:13:20.000Z 170000000000"), None);
    assert_eq!(has_epoch_ms("0x1700000000000"), None);
}

/// A time input may be now less an ISO-8601 duration (`now-PT1M`),
/// resolved against the command's `--now-ms`: it selects what the instant
/// now − duration selects. fixtures/data/orders-0 (make.sh): records
/// stamped from TS = 1700000000000 on, a millisecond apart within a batch.
#[test]
fn a_time_may_be_a_duration_before_now() {
    let env = TestEnv::new();
    let now = 1_700_000_060_000i64;
    let cases: &[(&[&str], &str, i64)] = &[
        (
            &[
                "dump-segment",
                "--format",
                "json",
                "fixtures/data/orders-0",
                "--from-time",
            ],
            "--to-time",
            0,
        ),
        (
            &[
                "replay-offsets",
                "--format",
                "json",
                "fixtures/kafka",
                "--as-of",
            ],
            "",
            0,
        ),
    ];
    for (args, _, _) in cases {
        for ago in [58_000i64, 59_998, 60_000] {
            let at = now - ago;
            let value = |v: String| -> Vec<String> {
                let mut a: Vec<String> = args.iter().map(|s| s.to_string()).collect();
                let v = if args.last() == Some(&"--as-of") {
                    format!("time:{v}")
                } else {
                    v
                };
                a.push(v);
                a.extend(["--now-ms".to_string(), now.to_string()]);
                a
            };
            let by_ago = value(format!("now-PT{}.{:03}S", ago / 1000, ago % 1000));
            let by_instant = value(at.to_string());
            let one = env.run(&by_ago.iter().map(String::as_str).collect::<Vec<_>>(), None);
            let two = env.run(
                &by_instant.iter().map(String::as_str).collect::<Vec<_>>(),
                None,
            );
            assert_eq!(one.status.code(), Some(0), "{by_ago:?}: {}", stderr(&one));
            assert_eq!(stdout(&one), stdout(&two), "{by_ago:?} vs {by_instant:?}");
        }
    }
    // A bad duration is refused with the parser's message, exit 2.
    let o = env.run(
        &[
            "dump-segment",
            "fixtures/data/orders-0",
            "--from-time",
            "now-1h",
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("ISO-8601 duration"), "{}", stderr(&o));
}
