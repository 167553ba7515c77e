//! On a terminal, tables fit its width (wrapping long cells) unless
//! `--wide`; off a terminal they are never wrapped. The terminal is a real
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
    assert_eq!(piped.lines().collect::<Vec<_>>(), wide);
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
