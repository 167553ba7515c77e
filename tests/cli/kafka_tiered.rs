//! klog against a real Kafka cluster with tiered storage (KIP-405):
//! `fixtures/kafka-tiered/<version>/` holds its log directories, its
//! remote storage folder (Kafka's LocalTieredStorage) and Kafka's own
//! answers (written by `tests/kafka/tiered.sh`; see
//! fixtures/kafka-tiered/README.md). Every expected value here comes from
//! those recorded answers, never from klog.
//!
//! `KLOG_KAFKA_TIERED=DIR` points the tests at one other tree of the same
//! shape instead (`tests/kafka/tiered.sh --check`).

use std::path::{Path, PathBuf};
use std::process::Output;

use crate::support::{copy_dir, repo, stderr, stdout};

/// The trees to compare: `KLOG_KAFKA_TIERED` alone when set, else every
/// release folder of `fixtures/kafka-tiered/`.
fn trees() -> Vec<PathBuf> {
    if let Some(one) = std::env::var_os("KLOG_KAFKA_TIERED") {
        return vec![PathBuf::from(one)];
    }
    let root = repo().join("fixtures/kafka-tiered");
    let mut out: Vec<PathBuf> = std::fs::read_dir(&root)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("expected").is_dir())
        .collect();
    out.sort();
    assert!(!out.is_empty(), "no release under {}", root.display());
    out
}

/// One release's tree, copied (the preallocated indexes given back their
/// real size), and its answers.
struct Tree {
    _dir: tempfile::TempDir,
    root: PathBuf,
    source: PathBuf,
    /// `X.Y` of the release (`expected/VERSION`).
    release: String,
}

impl Tree {
    fn open(source: &Path) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().to_path_buf();
        for entry in std::fs::read_dir(source).unwrap() {
            let name = entry.unwrap().file_name().into_string().unwrap();
            if name != "expected" && source.join(&name).is_dir() {
                copy_dir(&source.join(&name), &root.join(&name));
            }
        }
        let sizes = std::fs::read_to_string(source.join("index-sizes.tsv")).unwrap();
        for line in sizes.lines().filter(|l| !l.starts_with('#')) {
            let (path, size) = line.split_once('\t').unwrap();
            let f = std::fs::OpenOptions::new()
                .write(true)
                .open(root.join(path))
                .unwrap();
            f.set_len(size.parse().unwrap()).unwrap();
        }
        let version = std::fs::read_to_string(source.join("expected/VERSION")).unwrap();
        let full = version.lines().next().unwrap().trim_start_matches("kafka ");
        let release = full.rsplit_once('.').unwrap().0.to_string();
        Tree {
            _dir: dir,
            root,
            source: source.to_path_buf(),
            release,
        }
    }

    fn run(&self, args: &[&str]) -> Output {
        assert_cmd::Command::cargo_bin("klog")
            .unwrap()
            .current_dir(&self.root)
            .env("COLUMNS", "100")
            .env("NO_COLOR", "1")
            .env("TZ", "UTC")
            .args(args)
            .output()
            .unwrap()
    }

    fn expected(&self, rel: &str) -> String {
        std::fs::read_to_string(self.source.join("expected").join(rel)).unwrap()
    }

    /// Every file under `expected/dump-log/<under>` ending in `suffix`,
    /// relative to `expected/dump-log/`.
    fn dumps(&self, under: &str, suffix: &str) -> Vec<String> {
        let base = self.source.join("expected/dump-log");
        let mut out = Vec::new();
        let mut stack = vec![base.join(under)];
        while let Some(d) = stack.pop() {
            for e in std::fs::read_dir(&d).unwrap() {
                let p = e.unwrap().path();
                if p.is_dir() {
                    stack.push(p);
                } else if p.to_str().unwrap().ends_with(suffix) {
                    out.push(p.strip_prefix(&base).unwrap().to_str().unwrap().to_string());
                }
            }
        }
        out.sort();
        out
    }
}

/// Run `test` on every release's tree; each failure names its tree.
fn each_tree(test: impl Fn(&Tree)) {
    for source in trees() {
        let t = Tree::open(&source);
        test(&t);
    }
}

#[test]
fn remote_log_metadata_decoder_matches_kafka_dump_log() {
    each_tree(|t| {
        let dumps: Vec<String> = t
            .dumps("", ".log.txt")
            .into_iter()
            .filter(|d| d.contains("/__remote_log_metadata-"))
            .collect();
        assert!(dumps.len() >= 7, "{dumps:?}");
        let mut records = 0;
        for d in dumps {
            let seg = d.trim_end_matches(".txt");
            let o = t.run(&[
                "dump-segment",
                "--deep-iteration",
                "--print-data-log",
                "--remote-log-metadata-decoder",
                "--kafka-release",
                &t.release,
                "--files",
                seg,
            ]);
            let kafka = t.expected(&format!("dump-log/{d}"));
            assert_eq!(stdout(&o), kafka, "{seg}: {}", stderr(&o));
            records += kafka.lines().filter(|l| l.starts_with("| offset:")).count();
        }
        // The crafted segment's 21 records and the cluster's own.
        assert!(records > 21, "{records} records compared");
    });
}

#[test]
fn remote_segment_files_are_read_by_their_kind() {
    // kafka-dump-log fails on the remote names (`<offset>-<segment id>.txnindex`):
    // its answer is for a copy renamed as a local file. klog reads the remote
    // name itself, by its suffix; the lines after `Dumping <path>` are the same
    // (an empty index's line names its path).
    each_tree(|t| {
        let mut compared = 0;
        for d in t.dumps("remote-as-local", ".txt") {
            let local = d
                .trim_start_matches("remote-as-local/")
                .trim_end_matches(".txt");
            let (folder, name) = local.rsplit_once('/').unwrap();
            let (base, suffix) = name.split_once('.').unwrap();
            // klog prints producer snapshots in its own form, not kafka-dump-log's.
            if suffix == "snapshot" {
                continue;
            }
            let remote = std::fs::read_dir(t.root.join(folder))
                .unwrap()
                .map(|e| e.unwrap().file_name().into_string().unwrap())
                .find(|n| n.starts_with(&format!("{base}-")) && n.ends_with(&format!(".{suffix}")))
                .unwrap();
            let path = format!("{folder}/{remote}");
            let o = t.run(&[
                "dump-segment",
                "--deep-iteration",
                "--print-data-log",
                "--kafka-release",
                &t.release,
                &path,
            ]);
            assert_eq!(o.status.code(), Some(0), "{path}: {}", stderr(&o));
            let kafka = t
                .expected(&format!("dump-log/{d}"))
                .replace(&format!("remote-as-local/{local}"), &path);
            let klog = stdout(&o);
            assert_eq!(
                klog.lines().skip(1).collect::<Vec<_>>(),
                kafka.lines().skip(1).collect::<Vec<_>>(),
                "{path}"
            );
            compared += 1;
        }
        assert!(compared >= 15, "{compared} remote files compared");
        // A file of a kind klog does not know is refused, not read as a log.
        let folder = std::fs::read_dir(t.root.join("remote/kafka-tiered-storage"))
            .unwrap()
            .next()
            .unwrap()
            .unwrap()
            .path();
        let manifest = folder.join("00000000000000000000-AAAAAAAAAAAAAAAAAAAAAA.rsm-manifest");
        std::fs::write(&manifest, b"{}").unwrap();
        let o = t.run(&["dump-segment", manifest.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(2), "{}", stdout(&o));
        assert!(stderr(&o).contains("remote segment"), "{}", stderr(&o));
    });
}
