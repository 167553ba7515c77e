//! On a terminal, tables fit its width unless `--wide`, never broken
//! inside a word; off a terminal they are never fitted. The terminal is a real
//! pseudo-terminal from util-linux `script`.

use std::process::Command;

use crate::support::TestEnv;

/// Run `klog ARGS` on a pseudo-terminal `columns` wide; its output lines.
fn on_terminal(env: &TestEnv, columns: u16, args: &str) -> Vec<String> {
    String::from_utf8(terminal_bytes(env, columns, &format!("--quiet {args}")))
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect()
}

/// What a pseudo-terminal shows (stdout and stderr both) while `klog ARGS`
/// runs; a redirection in ARGS applies inside.
fn terminal_bytes(env: &TestEnv, columns: u16, args: &str) -> Vec<u8> {
    let klog = assert_cmd::cargo::cargo_bin("klog");
    let o = Command::new("script")
        .args(["-qec", &format!("{} {args}", klog.display()), "/dev/null"])
        .current_dir(env.path(""))
        .env("COLUMNS", columns.to_string())
        .env("KLOG_PROGRESS_DELAY_MS", "0")
        .output()
        .expect("util-linux `script` runs klog on a pseudo-terminal");
    assert!(o.status.success(), "{o:?}");
    o.stdout
}

fn width(line: &str) -> usize {
    unicode_width::UnicodeWidthStr::width(line)
}

#[test]
fn tables_fit_the_terminal_unless_wide() {
    let env = TestEnv::new();
    let fitted = on_terminal(&env, 70, "lag fixtures/broker");
    assert!(fitted.len() > 8, "{fitted:?}");
    for line in &fitted {
        assert!(width(line) <= 70, "{line:?} is wider than the terminal");
    }
    let wide = on_terminal(&env, 70, "lag --wide fixtures/broker");
    assert!(width(&wide[0]) > 70, "--wide does not wrap: {:?}", wide[0]);
    // Off a terminal: the same table as --wide, whatever COLUMNS says.
    let piped = env.run(&["lag", "fixtures/broker"], None);
    let piped = String::from_utf8(piped.stdout).unwrap();
    // (The terminal shows stderr too: its `klog:` lines are not the table.)
    let table: Vec<&String> = wide.iter().filter(|l| !l.starts_with("klog: ")).collect();
    assert_eq!(piped.lines().collect::<Vec<_>>(), table);
}

/// Without `COLUMNS`, tables fit the terminal's own width (its window
/// size, set here with `stty`), as they fit `COLUMNS` when it is set.
#[test]
fn without_columns_tables_fit_the_window_size() {
    let env = TestEnv::new();
    let klog = assert_cmd::cargo::cargo_bin("klog");
    let o = Command::new("script")
        .args([
            "-qec",
            &format!(
                "stty cols 70 rows 24; {} --quiet lag fixtures/broker",
                klog.display()
            ),
            "/dev/null",
        ])
        .current_dir(env.path(""))
        .env_remove("COLUMNS")
        .output()
        .expect("util-linux `script` runs klog on a pseudo-terminal");
    assert!(o.status.success(), "{o:?}");
    let sized: Vec<String> = String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect();
    assert_eq!(sized, on_terminal(&env, 70, "lag fixtures/broker"));
}

/// A progress bar (its byte counts) on a terminal's stderr; none with
/// `--quiet`, none when stderr is not a terminal, none in JSON output.
#[test]
fn progress_is_for_terminals_only() {
    let env = TestEnv::new();
    let bar = |args: &str| {
        let shown = String::from_utf8_lossy(&terminal_bytes(&env, 100, args)).into_owned();
        // A bar shows `done/total` bytes, a spinner `... of log read`.
        shown.contains("KiB") || shown.contains("of log read")
    };
    assert!(
        bar("stats fixtures/data >/dev/null"),
        "stats shows progress"
    );
    assert!(
        bar("replay-offsets fixtures/broker >/dev/null"),
        "a spinner"
    );
    assert!(bar("verify-crc fixtures/data >/dev/null"));
    assert!(!bar("--quiet stats fixtures/data >/dev/null"), "--quiet");
    assert!(!bar("stats --format json fixtures/data >/dev/null"), "json");
    assert!(
        !bar("stats fixtures/data 2>/dev/null >/dev/null"),
        "stderr not a terminal"
    );
    let piped = env.run(&["stats", "fixtures/data"], None);
    let piped = String::from_utf8_lossy(&piped.stderr).into_owned();
    assert!(
        !piped.contains("KiB") && !piped.contains("of log read"),
        "{piped}"
    );
}

/// Fitted to a terminal, a table is never broken inside a word: headers
/// break only after a hyphen, a row stays one line, each cell is whole or
/// its start and `…`, numbers whole. Where even that does not fit, one
/// record per block (`-[ RECORD n ]`, a line per column), every value whole.
#[test]
fn tables_are_never_broken_inside_a_word() {
    let env = TestEnv::new();
    let broker = crate::support::repo().join("fixtures/kafka-real/4.4.0/broker-1");
    let args = format!("lag {}", broker.display());
    let args = args.as_str();
    let wide = on_terminal(&env, 400, &format!("{args} --wide"));
    let headers: Vec<&str> = wide[0].split_whitespace().collect();
    for columns in [150, 120] {
        let fitted = on_terminal(&env, columns, args);
        assert!(
            fitted.iter().all(|l| width(l) <= usize::from(columns)),
            "{fitted:#?}"
        );
        // The header block: each of its words is a header, or a run of a
        // header's parts broken after a hyphen.
        let head = fitted.len() - (wide.len() - 1);
        for word in fitted[..head].iter().flat_map(|l| l.split_whitespace()) {
            assert!(
                headers.iter().any(|h| hyphen_piece(word, h)),
                "{columns}: {word:?} is cut inside a word"
            );
        }
        // A row per row, each cell whole or cut with an ellipsis.
        for (row, whole) in fitted[head..].iter().zip(&wide[1..]) {
            let cells: Vec<&str> = row.split_whitespace().collect();
            let wholes: Vec<&str> = whole.split_whitespace().collect();
            assert_eq!(cells.len(), wholes.len(), "{columns}: {row:?} / {whole:?}");
            for (c, w) in cells.iter().zip(&wholes) {
                let kept = c.strip_suffix('…').unwrap_or(c);
                assert!(
                    c == w || (c.ends_with('…') && w.starts_with(kept)),
                    "{c:?} / {w:?}"
                );
                if w.parse::<i64>().is_ok() {
                    assert_eq!(c, w, "a number is never cut");
                }
            }
        }
    }
    // At 100 columns and below the lag table's headers alone do not fit.
    assert_eq!(on_terminal(&env, 100, args)[0], "-[ RECORD 1 ]");
    let records = on_terminal(&env, 60, args);
    assert_eq!(records[0], "-[ RECORD 1 ]");
    let block: Vec<&String> = records[1..]
        .iter()
        .take_while(|l| !l.starts_with("-["))
        .collect();
    assert_eq!(block.len(), headers.len());
    let first: Vec<&str> = wide[1].split_whitespace().collect();
    for ((line, h), v) in block.iter().zip(&headers).zip(&first) {
        let parts: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(parts, [*h, *v], "{line:?}");
    }
}

/// Whether `token`, a word of a table fitted to a terminal, is whole: a
/// word of the same output unfitted (`wide`), its start cut with `…`, a
/// header's parts broken after a hyphen, or a word of a record block's
/// marker (`-[ RECORD 3 ]`).
fn whole_or_marked(token: &str, wide: &std::collections::BTreeSet<&str>) -> bool {
    if wide.contains(token)
        || ["-[", "RECORD", "]"].contains(&token)
        || token.parse::<u64>().is_ok()
    {
        return true;
    }
    if let Some(kept) = token.strip_suffix('…') {
        return wide.iter().any(|w| w.starts_with(kept));
    }
    wide.iter().any(|w| hyphen_piece(token, w))
}

/// Whether `piece` is `word` or a part of it broken after a hyphen
/// (`COMMITTED-` then `OFFSET` of `COMMITTED-OFFSET`).
fn hyphen_piece(piece: &str, word: &str) -> bool {
    word.match_indices(piece).any(|(at, _)| {
        let end = at + piece.len();
        (at == 0 || word[..at].ends_with('-')) && (end == word.len() || piece.ends_with('-'))
    })
}

/// Every table klog prints, fitted to terminals of 60, 100 and 150
/// columns on the real cluster's brokers: no table line wider than the
/// terminal, and no word broken (each is whole, or cut with `…`, or a header broken
/// after a hyphen).
#[test]
fn every_table_fits_60_100_and_150_columns_without_breaking_a_word() {
    let env = TestEnv::new();
    let real = "fixtures/kafka-real/4.4.0";
    crate::kafka_real::copy_tree(&crate::support::repo().join(real), &env.path(real));
    let b = |n: u8| format!("{real}/broker-{n}");
    let commands = [
        format!("info {}", b(1)),
        format!("transactions {}", b(1)),
        format!("replay-offsets {}", b(1)),
        format!("groups {}", b(1)),
        format!("stats {}", b(3)),
        format!("cluster --all {} {} {}", b(1), b(2), b(3)),
        format!("lag --by topic {}", b(1)),
    ];
    for args in &commands {
        let wide_lines = on_terminal(&env, 1000, &format!("{args} --wide"));
        let wide: std::collections::BTreeSet<&str> = wide_lines
            .iter()
            .flat_map(|l| l.split_whitespace())
            .collect();
        for columns in [60u16, 100, 150] {
            let fitted = on_terminal(&env, columns, args);
            for line in &fitted {
                // A table's line (cells apart by runs of spaces) fits; a
                // line of prose is the terminal's to wrap.
                let gaps = line
                    .trim()
                    .split("  ")
                    .filter(|p| !p.trim().is_empty())
                    .count();
                assert!(
                    gaps < 3 || width(line) <= usize::from(columns),
                    "{args} at {columns}: {line:?} is wider"
                );
                for token in line.split_whitespace() {
                    assert!(
                        whole_or_marked(token, &wide),
                        "{args} at {columns}: {token:?} is broken inside a word in {line:?}"
                    );
                }
            }
        }
    }
}
