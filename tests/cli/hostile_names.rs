//! Names from the data in every format: group names with ESC, newline,
//! tab, CJK and emoji, 300 characters (shown bounded in text), commas and quotes (all accepted by
//! `klog commit`, as by Kafka; NUL cannot be a command-line argument) neither drive the terminal nor forge rows in
//! text, are shown as text shows them in CSV (exactly with `--csv-cells
//! raw`, RFC 4180) and round-trip exactly through JSON.

use crate::support::{parse_csv, TestEnv};

fn names() -> Vec<String> {
    vec![
        "evil\x1b[31mRED\nfake-row".to_string(),
        "tab\there\\back".to_string(),
        "注文-🍣-グループ".to_string(),
        "x".repeat(300),
        "comma,\"quoted\" name".to_string(),
        "cr\rdel\u{7f}nel\u{85}".to_string(),
    ]
}

/// `name` as text shows it.
fn shown(name: &str) -> String {
    name.replace('\\', "\\\\")
        .replace('\x1b', "\\x1b")
        .replace('\n', "\\n")
        .replace('\t', "\\t")
        .replace('\r', "\\r")
        .replace('\u{7f}', "\\x7f")
        .replace('\u{85}', "\\u{85}")
}

#[test]
fn hostile_group_names_in_every_format() {
    let env = TestEnv::new();
    for (i, name) in names().iter().enumerate() {
        let o = crate::support::commit_orders_0(&env, name, i + 1);
        assert_eq!(o.status.code(), Some(0), "{name:?}: {o:?}");
        // The acknowledgement is escaped too.
        assert!(!o.stdout.contains(&0x1b), "{name:?}");
    }
    for command in ["replay-offsets", "lag"] {
        // Text: no control character reaches the terminal, and each group
        // is one line.
        let o = env.run(&[command, "fixtures/groups"], None);
        let text = String::from_utf8(o.stdout).unwrap();
        assert!(
            !text.chars().any(|c| c.is_control() && c != '\n'),
            "{command}: a control character in {text:?}"
        );
        for name in names() {
            // A name longer than any name is shown bounded in text (its
            // start, length and hash); CSV and JSON keep it whole.
            let shown = shown(&kaen_log::format::escape::bounded(&name));
            let lines = text.lines().filter(|l| l.starts_with(&shown)).count();
            assert!(
                lines >= 1,
                "{command}: {shown:?} not shown as one line:\n{text}"
            );
        }
        assert!(
            !text.lines().any(|l| l.starts_with("fake-row")),
            "{command}: a forged row"
        );

        // CSV: the names as text shows them; with --csv-cells raw, the
        // exact names come back.
        for (cells, exact) in [("escape", false), ("raw", true)] {
            let o = env.run(
                &[
                    command,
                    "fixtures/groups",
                    "--format",
                    "csv",
                    "--csv-cells",
                    cells,
                ],
                None,
            );
            let rows = parse_csv(&String::from_utf8(o.stdout).unwrap());
            assert_eq!(rows[0][0], "group");
            let width = rows[0].len();
            assert!(
                rows.iter().all(|r| r.len() == width),
                "{command}: ragged CSV {rows:?}"
            );
            for name in names() {
                let want = if exact { name.clone() } else { shown(&name) };
                assert!(
                    rows.iter().any(|r| r[0] == want),
                    "{command} --csv-cells {cells}: {want:?} not in the CSV"
                );
            }
        }

        // JSON: the exact strings.
        let o = env.run(&[command, "fixtures/groups", "--format", "json"], None);
        let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        let rows = doc
            .get("offsets")
            .or_else(|| doc.get("partitions"))
            .and_then(|v| v.as_array())
            .unwrap();
        for name in names() {
            assert!(
                rows.iter().any(|r| r["group"] == name.as_str()),
                "{command}: {name:?}"
            );
        }
    }
    // jsonl carries the exact strings line by line.
    let o = env.run(
        &["replay-offsets", "fixtures/groups", "--format", "jsonl"],
        None,
    );
    let text = String::from_utf8(o.stdout).unwrap();
    let groups: Vec<String> = text
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
        .filter(|v| v["type"] == "offset")
        .map(|v| v["group"].as_str().unwrap().to_string())
        .collect();
    for name in names() {
        assert!(groups.contains(&name), "jsonl: {name:?}");
    }
}
