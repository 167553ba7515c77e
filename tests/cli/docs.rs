//! Generated documentation stays in step with the code.

use crate::support::{repo, stdout, TestEnv};

#[test]
fn man_pages_are_up_to_date() {
    let env = TestEnv::new();
    let o = env.run(&["generate", "man", "man-out"], None);
    assert_eq!(o.status.code(), Some(0));
    let mut names: Vec<_> = std::fs::read_dir(env.path("man-out"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .collect();
    names.sort();
    let mut committed: Vec<_> = std::fs::read_dir(repo().join("man"))
        .unwrap()
        .map(|e| e.unwrap().file_name().into_string().unwrap())
        .filter(|n| n.ends_with(".1") || n.ends_with(".7"))
        .collect();
    committed.sort();
    assert_eq!(
        names, committed,
        "man/ pages: run `cargo run -- generate man man`"
    );
    for n in names {
        assert_eq!(
            std::fs::read(env.path("man-out").join(&n)).unwrap(),
            std::fs::read(repo().join("man").join(&n)).unwrap(),
            "man/{n} is stale: run `cargo run -- generate man man`"
        );
    }
}

#[test]
fn completions_are_generated() {
    let env = TestEnv::new();
    for shell in ["bash", "zsh", "fish"] {
        let o = env.run(&["completions", shell], None);
        assert_eq!(o.status.code(), Some(0));
        assert!(stdout(&o).contains("verify-crc"), "{shell}");
    }
}

/// The README's first two commands are the quick start: they must be the
/// ones CI runs.
#[test]
fn readme_quick_start_matches_ci() {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let cmds: Vec<&str> = readme
        .lines()
        .filter(|l| l.starts_with("cargo "))
        .take(2)
        .collect();
    assert_eq!(cmds.len(), 2, "README starts with two commands");
    assert!(
        cmds[0].starts_with("cargo run --release -- ") && cmds[0].contains("fixtures/"),
        "{}",
        cmds[0]
    );
    let ci = std::fs::read_to_string(repo().join(".ci/run")).unwrap();
    assert!(
        ci.contains(cmds[1]),
        ".ci/run runs the README's test command `{}`",
        cmds[1]
    );
}

#[test]
fn completions_leave_the_hidden_generate_out() {
    let env = crate::support::TestEnv::new();
    for shell in ["bash", "zsh", "fish"] {
        let o = env.run(&["completions", shell], None);
        assert_eq!(o.status.code(), Some(0));
        let text = crate::support::stdout(&o);
        assert!(text.contains("verify-crc"), "{shell}");
        assert!(!text.contains("generate"), "{shell}: {text}");
    }
}

/// Every man page's synopsis names a placeholder after each option that
/// takes a value (`[--group GROUP]`, never `[--group]`): checked against
/// the values each option's `--help` line shows (`--group <GROUP>`).
#[test]
fn man_synopses_have_placeholders() {
    let env = TestEnv::new();
    for page in std::fs::read_dir(repo().join("man")).unwrap() {
        let page = page.unwrap().path();
        let name = page.file_name().unwrap().to_string_lossy().into_owned();
        let Some(sub) = name
            .strip_prefix("klog-")
            .and_then(|n| n.strip_suffix(".1"))
        else {
            continue;
        };
        let roff = std::fs::read_to_string(&page).unwrap();
        let synopsis = roff
            .split(".SH SYNOPSIS\n")
            .nth(1)
            .unwrap()
            .lines()
            .next()
            .unwrap();
        let synopsis = synopsis
            .replace("\\fB", "")
            .replace("\\fI", "")
            .replace("\\fR", "")
            .replace("\\-", "-");
        let help = stdout(&env.run(&[sub, "--help"], None));
        for line in help.lines().map(str::trim).filter(|l| l.starts_with('-')) {
            // "-g, --group <GROUP>  The consumer group."
            let spec = line.split("  ").next().unwrap();
            let Some(long) = spec.split_whitespace().find(|w| w.starts_with("--")) else {
                continue;
            };
            let long = long.trim_end_matches(',');
            if let Some(value) = spec.split_whitespace().find(|w| w.starts_with('<')) {
                let value = value.trim_start_matches('<').trim_end_matches(['>', '.']);
                assert!(
                    synopsis.contains(&format!("{long} {value}")),
                    "{name}: {long} takes <{value}>, the synopsis says: {synopsis}"
                );
            }
        }
    }
}

/// A misspelt subcommand is answered with the visible ones only.
#[test]
fn suggestions_name_only_visible_subcommands() {
    let env = TestEnv::new();
    let o = env.run(&["verify-cr"], None);
    assert_eq!(o.status.code(), Some(2));
    let err = crate::support::stderr(&o);
    assert!(err.contains("'verify-crc'"), "{err}");
}
