//! The README's command synopsis (the first code block under "## Commands") is
//! checked against clap: every subcommand is there, every flag it names
//! exists, every flag a subcommand has is named, and `--format` lists
//! exactly the formats the subcommand offers.

use std::collections::{BTreeMap, BTreeSet};

use crate::support::{repo, TestEnv};

/// The synopsis block: subcommand → its text (continuation lines joined).
fn synopsis() -> BTreeMap<String, String> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let block = readme
        .split("\n## Commands\n")
        .nth(1)
        .and_then(|section| section.split("\n## ").next())
        .and_then(|section| section.split("\n```\n").nth(1))
        .expect("a ``` block in ## Commands");
    let mut out: BTreeMap<String, String> = BTreeMap::new();
    let mut current = String::new();
    for line in block.lines() {
        if let Some(rest) = line.strip_prefix("klog ") {
            current = rest
                .split_whitespace()
                .next()
                .unwrap_or_default()
                .to_string();
        }
        let entry = out.entry(current.clone()).or_default();
        entry.push(' ');
        entry.push_str(line.trim());
    }
    out
}

/// `--flag` names in a text.
fn flags(text: &str) -> BTreeSet<String> {
    text.split(|c: char| c.is_whitespace() || "[]|(),.:;`".contains(c))
        .filter(|w| w.starts_with("--") && w.len() > 2)
        .map(|w| {
            w.trim_end_matches('=')
                .split('=')
                .next()
                .unwrap()
                .to_string()
        })
        .filter(|w| {
            w.chars()
                .skip(2)
                .all(|c| c.is_ascii_lowercase() || c == '-')
        })
        .collect()
}

/// The subcommands and options `--help` lists.
fn help(env: &TestEnv, args: &[&str]) -> String {
    let o = env.run(args, None);
    assert_eq!(o.status.code(), Some(0), "{args:?}");
    String::from_utf8(o.stdout).unwrap()
}

fn subcommands(env: &TestEnv) -> BTreeSet<String> {
    let text = help(env, &["--help"]);
    text.split("Commands:")
        .nth(1)
        .unwrap()
        .split("Options:")
        .next()
        .unwrap()
        .lines()
        .filter_map(|l| l.strip_prefix("  "))
        .filter(|l| !l.starts_with(' '))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|n| *n != "help")
        .map(str::to_string)
        .collect()
}

/// Options of a subcommand, from its `--help` (its own, not the global
/// ones every subcommand shares).
fn options(env: &TestEnv, sub: &str) -> BTreeSet<String> {
    let text = help(env, &[sub, "--help"]);
    let global: BTreeSet<&str> = [
        "--help",
        "--version",
        "--wide",
        "--quiet",
        "--csv-cells",
        "--time-format",
    ]
    .into();
    text.lines()
        .filter(|l| l.len() - l.trim_start().len() <= 6)
        .map(str::trim_start)
        .filter(|l| l.starts_with('-'))
        .flat_map(|l| {
            l.split([',', ' '])
                .filter(|w| w.starts_with("--"))
                .map(|w| w.split('=').next().unwrap().to_string())
                .collect::<Vec<_>>()
        })
        .filter(|f| f[2..].chars().all(|c| c.is_ascii_lowercase() || c == '-'))
        .filter(|f| !global.contains(f.as_str()))
        .collect()
}

#[test]
fn readme_synopsis_matches_clap() {
    let env = TestEnv::new();
    let synopsis = synopsis();
    let subs = subcommands(&env);
    let listed: BTreeSet<String> = synopsis.keys().cloned().collect();
    assert_eq!(
        listed, subs,
        "README ## Commands lists exactly the subcommands"
    );
    for sub in &subs {
        let text = &synopsis[sub];
        let named = flags(text);
        let real = options(&env, sub);
        let unknown: Vec<_> = named.difference(&real).collect();
        let missing: Vec<_> = real.difference(&named).collect();
        assert!(
            unknown.is_empty(),
            "klog {sub}: README names {unknown:?}, not in --help"
        );
        assert!(
            missing.is_empty(),
            "klog {sub}: README's synopsis lacks {missing:?}"
        );
        // --format's values are the ones clap accepts.
        if let Some(values) = text.split("--format ").nth(1) {
            let shown: BTreeSet<&str> = values
                .split(|c: char| c.is_whitespace() || c == ']')
                .next()
                .unwrap()
                .split('|')
                .collect();
            let help_text = help(&env, &[sub, "--help"]);
            // The --format option's own help: up to the next option.
            let after = help_text.split("--format <FORMAT>").nth(1).unwrap();
            let after: String = after
                .lines()
                .skip(1)
                .take_while(|l| {
                    let indent = l.len() - l.trim_start().len();
                    !(indent <= 6 && l.trim_start().starts_with('-'))
                })
                .map(|l| format!("{l}\n"))
                .collect();
            let after = after.as_str();
            // `[possible values: a, b]`, or a `Possible values:` list of
            // `- a: …` lines when the values have help.
            let possible: BTreeSet<&str> = match after.split("[possible values: ").nth(1) {
                Some(t) if !after.contains("Possible values:") => {
                    t.split(']').next().unwrap().split(", ").collect()
                }
                _ => after
                    .split("Possible values:")
                    .nth(1)
                    .unwrap()
                    .lines()
                    .map(str::trim)
                    .take_while(|l| l.is_empty() || l.starts_with("- "))
                    .filter_map(|l| l.strip_prefix("- "))
                    .map(|l| l.split(':').next().unwrap())
                    .collect(),
            };
            assert_eq!(shown, possible, "klog {sub} --format");
        }
    }
}
