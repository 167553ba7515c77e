//! Every command the README and the man pages show (`$ ...` lines in code
//! blocks of README.md and of the man pages' text, src/cmd/generate/pages/)
//! runs, and the output lines it shows appear, in order, in what the command
//! prints (`...` stands for lines left out): its stdout, then its stderr, as
//! a terminal shows them (klog writes its data before the summary for
//! people).

use crate::support::{copy_dir, repo, TestEnv};

struct Example {
    line: usize,
    command: String,
    shown: Vec<String>,
}

fn examples(readme: &str) -> Vec<Example> {
    let mut out: Vec<Example> = Vec::new();
    let mut in_block = false;
    // Output lines belong to the last command of the same code block.
    let mut current: Option<usize> = None;
    for (i, line) in readme.lines().enumerate() {
        if line.starts_with("```") {
            in_block = !in_block;
            current = None;
            continue;
        }
        if !in_block {
            continue;
        }
        if let Some(cmd) = line.strip_prefix("$ ") {
            out.push(Example {
                line: i + 1,
                command: cmd.to_string(),
                shown: Vec::new(),
            });
            current = Some(out.len() - 1);
        } else if let Some(ex) = current.and_then(|c| out.get_mut(c)) {
            ex.shown.push(line.to_string());
        }
    }
    out
}

/// klog's folder on PATH.
fn path_with_klog() -> String {
    let bin = assert_cmd::cargo::cargo_bin("klog");
    format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Run every example of `text` (named `name` in messages) in `root`, a
/// copy of the fixtures; the number of commands run.
fn run_examples(name: &str, text: &str, root: &std::path::Path) -> usize {
    let path = path_with_klog();
    let mut cwd = root.to_path_buf();
    let mut ran = 0;
    for ex in examples(text) {
        let ctx = format!("{name}:{}: `{}`", ex.line, ex.command);
        match ex.command.as_str() {
            c if c.starts_with("cargo ") => continue,
            // A walk-through that writes works on its own copy of the fixtures.
            c if c.starts_with("cp -r fixtures /tmp/") => {
                let name = c
                    .strip_prefix("cp -r fixtures /tmp/")
                    .and_then(|rest| rest.split_once(" && cd /tmp/"))
                    .filter(|(a, b)| a == b)
                    .map(|(a, _)| a.to_string())
                    .unwrap_or_else(|| {
                        panic!("{ctx}: expected `cp -r fixtures /tmp/X && cd /tmp/X`")
                    });
                copy_dir(&root.join("fixtures"), &root.join(&name));
                cwd = root.join(name);
                continue;
            }
            "cd -" => {
                cwd = root.to_path_buf();
                continue;
            }
            _ => {}
        }
        let o = std::process::Command::new("bash")
            .arg("-c")
            .arg(&ex.command)
            .current_dir(&cwd)
            .env("PATH", &path)
            .env("TZ", "UTC")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&o.stdout);
        let stderr = String::from_utf8_lossy(&o.stderr);
        // A command that exits non-zero says so: `# exits N`.
        let expected = ex
            .command
            .rsplit_once("# exits ")
            .and_then(|(_, n)| n.trim().parse::<i32>().ok())
            .unwrap_or(0);
        assert_eq!(
            o.status.code(),
            Some(expected),
            "{ctx}: exit status (mark a non-zero one `# exits N`): {stderr}"
        );
        assert!(!stderr.contains("panicked"), "{ctx}: {stderr}");
        let actual: Vec<&str> = stdout
            .lines()
            .chain(stderr.lines())
            .map(str::trim_end)
            .collect();
        let mut at = 0;
        for want in ex
            .shown
            .iter()
            .map(|s| s.trim_end())
            .filter(|s| s.trim() != "...")
        {
            match actual.iter().skip(at).position(|a| *a == want) {
                Some(i) => at += i + 1,
                None => panic!(
                    "{ctx}: shown line not printed (in order):\n  {want}\nactual output:\n{stdout}{stderr}"
                ),
            }
        }
        ran += 1;
    }
    ran
}

#[test]
fn every_readme_command_runs_and_prints_what_is_shown() {
    let env = TestEnv::new();
    let root = env.dir.path().to_path_buf();
    // The tour of a crashed Kafka cluster reads the newest release's
    // brokers as the crash left them (their indexes at their real sizes).
    let real = "fixtures/kafka-real/4.4.0";
    crate::kafka_real::copy_tree(&repo().join(real), &root.join(real));
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let ran = run_examples("README.md", &readme, &root);
    assert!(ran >= 8, "only {ran} README commands found");
    // The quick start's first command: klog's main job on the shipped fixtures.
    let quick = readme
        .lines()
        .find_map(|l| l.strip_prefix("cargo run --release -- "))
        .expect("the quick start command");
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("klog {quick}"))
        .current_dir(&root)
        .env("PATH", path_with_klog())
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "quick start `{quick}`: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}

/// The man pages' examples: each page's text runs in a fresh copy of the
/// fixtures, its commands in order (a page's later command may read what an
/// earlier one wrote).
#[test]
fn every_man_page_command_runs_and_prints_what_is_shown() {
    let dir = repo().join("src/cmd/generate/pages");
    let mut pages: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
        .collect();
    pages.sort();
    let mut ran = 0;
    for page in &pages {
        let text = std::fs::read_to_string(page).unwrap();
        let env = TestEnv::new();
        let name = format!(
            "src/cmd/generate/pages/{}",
            page.file_name().unwrap().to_string_lossy()
        );
        ran += run_examples(&name, &text, env.dir.path());
    }
    assert!(
        ran >= 40,
        "only {ran} man page commands found in {} pages",
        pages.len()
    );
}
