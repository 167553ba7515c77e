//! Every command the README shows (`$ ...` lines in code blocks) runs, and
//! the output lines it shows appear, in order, in what the command prints
//! (`...` stands for lines left out): its stdout, then its stderr, as a
//! terminal shows them (klog writes its data before the summary for people).

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

#[test]
fn every_readme_command_runs_and_prints_what_is_shown() {
    let env = TestEnv::new();
    let root = env.dir.path().to_path_buf();
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let bin = assert_cmd::cargo::cargo_bin("klog");
    let path = format!(
        "{}:{}",
        bin.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cwd = root.clone();
    let mut ran = 0;
    for ex in examples(&readme) {
        let ctx = format!("README.md:{}: `{}`", ex.line, ex.command);
        match ex.command.as_str() {
            c if c.starts_with("cargo ") => continue,
            "cp -r fixtures /tmp/klog-tour && cd /tmp/klog-tour" => {
                copy_dir(&root.join("fixtures"), &root.join("tour"));
                cwd = root.join("tour");
                continue;
            }
            "cd -" => {
                cwd = root.clone();
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
        // A command that exits non-zero says so in the README: `# exits N`.
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
    assert!(ran >= 10, "only {ran} README commands found");
    // The quick start's first command: klog's main job on the shipped fixtures.
    let quick = readme
        .lines()
        .find_map(|l| l.strip_prefix("cargo run --release -- "))
        .expect("the quick start command");
    let o = std::process::Command::new("bash")
        .arg("-c")
        .arg(format!("klog {quick}"))
        .current_dir(&root)
        .env("PATH", &path)
        .output()
        .unwrap();
    assert_eq!(
        o.status.code(),
        Some(0),
        "quick start `{quick}`: {}",
        String::from_utf8_lossy(&o.stdout)
    );
}
