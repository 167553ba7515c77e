//! On a terminal, tables fit its width (wrapping long cells) unless
//! `--wide`; off a terminal they are never wrapped. The terminal is a real
//! pseudo-terminal from util-linux `script`.

use std::process::Command;

use crate::support::TestEnv;

/// Run `klog ARGS` on a pseudo-terminal `columns` wide; its output lines.
fn on_terminal(env: &TestEnv, columns: u16, args: &str) -> Vec<String> {
    let klog = assert_cmd::cargo::cargo_bin("klog");
    let o = Command::new("script")
        .args(["-qec", &format!("{} {args}", klog.display()), "/dev/null"])
        .current_dir(env.path(""))
        .env("COLUMNS", columns.to_string())
        .output()
        .expect("util-linux `script` runs klog on a pseudo-terminal");
    assert!(o.status.success(), "{o:?}");
    String::from_utf8(o.stdout)
        .unwrap()
        .lines()
        .map(|l| l.trim_end_matches('\r').to_string())
        .collect()
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
