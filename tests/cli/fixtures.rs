//! The committed fixtures are exactly what fixtures/make.sh produces
//! (`fixtures/kafka-real/` is written by tests/kafka/run.sh instead, and
//! `fixtures/kafka-tiered/` by tests/kafka/tiered.sh).

use crate::support::repo;

fn files(root: &std::path::Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(root).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn fixtures_regenerate_byte_for_byte() {
    let tmp = tempfile::tempdir().unwrap();
    let status = std::process::Command::new("bash")
        .arg(repo().join("fixtures/make.sh"))
        .arg(tmp.path())
        .env("KLOG", assert_cmd::cargo::cargo_bin("klog"))
        .status()
        .unwrap();
    assert!(status.success());
    let committed: Vec<_> = files(&repo().join("fixtures"))
        .into_iter()
        .filter(|p| {
            p.extension()
                .is_none_or(|e| e != "sh" && e != "md" && e != "py")
        })
        .filter(|p| !p.starts_with("kafka-real") && !p.starts_with("kafka-tiered"))
        .collect();
    assert_eq!(files(tmp.path()), committed);
    for f in committed {
        assert_eq!(
            std::fs::read(tmp.path().join(&f)).unwrap(),
            std::fs::read(repo().join("fixtures").join(&f)).unwrap(),
            "fixtures/{} differs from what make.sh writes",
            f.display()
        );
    }
}
