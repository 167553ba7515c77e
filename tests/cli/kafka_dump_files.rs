//! `dump-segment` with kafka-dump-log's other files and options, against
//! what each release's `DumpLogSegments` printed on the real clusters' files
//! (tests/kafka/run.sh, `--dump-log`; fixtures/kafka-real/README.md names
//! the recordings): producer-state snapshots, transaction indexes, the KRaft
//! snapshot, `--verify-index-only`, `--max-message-size`, the decoder
//! classes. stdout is compared byte for byte; what Kafka printed on stderr
//! (its mismatch lists, a snapshot that does not load) must be among klog's
//! stderr lines, paths made relative as the recording's are; where Kafka
//! threw (`threw:` in the recording), klog must say it stops there.

use std::collections::BTreeMap;
use std::path::Path;

use crate::kafka_real::{each_release, Real};

/// One recording: the file or files kafka-dump-log read, what it printed.
struct Recorded {
    files: String,
    stdout: String,
    stderr: String,
    threw: bool,
}

/// The recordings under `expected/dump-log/` whose name ends in `suffix`
/// (e.g. `.snapshot.txt`), by the file they name (the name less `strip`).
fn recorded(r: &Real, suffix: &str, strip: &str) -> Vec<Recorded> {
    let expected = r.source.join("expected/dump-log");
    let mut out = Vec::new();
    let mut stack = vec![expected.clone()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_str().unwrap().to_string();
            if p.is_dir() {
                stack.push(p);
                continue;
            }
            let Some(stem) = name.strip_suffix(suffix) else {
                continue;
            };
            if name.ends_with(".stderr.txt") && !suffix.ends_with(".stderr.txt") {
                continue;
            }
            let rel = p.parent().unwrap().strip_prefix(&expected).unwrap();
            let file = rel.join(format!("{stem}{strip}"));
            let err = p.with_file_name(name.replace(".txt", ".stderr.txt"));
            let stderr = std::fs::read_to_string(&err).unwrap_or_default();
            out.push(Recorded {
                files: file.to_str().unwrap().to_string(),
                stdout: std::fs::read_to_string(&p).unwrap(),
                threw: stderr.lines().any(|l| l.starts_with("threw: ")),
                stderr: stderr
                    .lines()
                    .filter(|l| !l.starts_with("threw: "))
                    .map(|l| format!("{l}\n"))
                    .collect(),
            });
        }
    }
    out.sort_by(|a, b| a.files.cmp(&b.files));
    out
}

/// Run klog as kafka-dump-log ran (`args` before `--files FILES`) and
/// compare: stdout, Kafka's stderr lines among klog's, the stop.
fn compare(r: &Real, rec: &Recorded, args: &[&str]) {
    let release = r.release.as_str();
    let mut argv = vec!["dump-segment", "--kafka-release", release];
    argv.extend(args);
    argv.extend(["--files", rec.files.as_str()]);
    let o = r.run(&argv);
    let root = std::fs::canonicalize(&r.root).unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr).replace(&format!("{}/", root.display()), "");
    assert_eq!(stdout, rec.stdout, "klog {argv:?} in {}", r.root.display());
    let ours: Vec<&str> = stderr.lines().collect();
    for line in rec.stderr.lines() {
        assert!(
            ours.contains(&line),
            "{argv:?}: Kafka said {line:?} on stderr; klog said:\n{stderr}"
        );
    }
    // What klog says in Kafka's words is no more than Kafka said.
    assert_eq!(
        ours.iter().filter(|l| !l.starts_with("klog: ")).count(),
        rec.stderr.lines().count(),
        "{argv:?}: klog's stderr:\n{stderr}\nKafka's:\n{}",
        rec.stderr
    );
    if rec.stderr.is_empty() && !rec.threw {
        assert_eq!(o.status.code(), Some(0), "{argv:?}: {stderr}");
    }
    if rec.threw {
        assert!(
            stderr.contains("kafka-dump-log stops here"),
            "{argv:?}: Kafka threw; klog:\n{stderr}"
        );
    }
}

fn compare_all(r: &Real, suffix: &str, strip: &str, args: &[&str], at_least: usize) -> usize {
    let all = recorded(r, suffix, strip);
    assert!(
        all.len() >= at_least,
        "{suffix}: only {} recordings in {}",
        all.len(),
        r.source.display()
    );
    for rec in &all {
        compare(r, rec, args);
    }
    all.len()
}

/// Producer-state snapshots in kafka-dump-log's line
/// (`dumpProducerIdSnapshot`) with --print-data-log; transaction indexes
/// (`dumpTxnIndex`) as they are; the KRaft snapshot with the cluster
/// metadata decoder.
#[test]
fn snapshots_txn_indexes_and_kraft_snapshots_are_kafka_dump_logs() {
    each_release(|r| {
        compare_all(r, ".snapshot.txt", ".snapshot", &["--print-data-log"], 50);
        compare_all(r, ".txnindex.txt", ".txnindex", &[], 1);
        compare_all(
            r,
            ".checkpoint.txt",
            ".checkpoint",
            &["--cluster-metadata-decoder"],
            0,
        );
    });
}

/// `--verify-index-only` on every offset and time index, and the plain
/// dump of each in text: the entries, and Kafka's words on stderr after
/// the run (`Mismatches in :…`, the time index's three lists).
#[test]
fn index_dumps_and_verify_index_only_are_kafka_dump_logs() {
    each_release(|r| {
        let verified = compare_all(
            r,
            ".index.verify.txt",
            ".index",
            &["--verify-index-only"],
            50,
        ) + compare_all(
            r,
            ".timeindex.verify.txt",
            ".timeindex",
            &["--verify-index-only"],
            50,
        );
        assert!(verified >= 100);
        // The folder's indexes in one run.
        for rec in recorded(r, "all.verify.txt", "") {
            let folder = Path::new(&rec.files);
            let mut indexes: Vec<String> = std::fs::read_dir(r.root.join(folder))
                .unwrap()
                .map(|e| e.unwrap().path())
                .filter(|p| p.extension().is_some_and(|x| x == "index"))
                .map(|p| {
                    p.strip_prefix(&r.root)
                        .unwrap()
                        .to_str()
                        .unwrap()
                        .to_string()
                })
                .collect();
            indexes.sort();
            let many = Recorded {
                files: indexes.join(","),
                ..rec
            };
            compare(r, &many, &["--verify-index-only"]);
        }
        // The plain text dumps recorded before (stdout only).
        for rec in recorded(r, ".index.txt", ".index")
            .into_iter()
            .chain(recorded(r, ".timeindex.txt", ".timeindex"))
        {
            let o = r.run(&["dump-segment", "--files", &rec.files]);
            assert_eq!(
                String::from_utf8_lossy(&o.stdout),
                rec.stdout,
                "{}",
                rec.files
            );
        }
    });
}

/// `--max-message-size 100`: the slice kafka-dump-log reads at each
/// offset-index entry; a batch larger than it stops the tool.
#[test]
fn max_message_size_is_kafka_dump_logs() {
    each_release(|r| {
        let all = recorded(r, ".index.max100.txt", ".index");
        assert!(all.len() >= 20, "{} recordings", all.len());
        assert!(all.iter().any(|rec| rec.threw), "no batch over 100 bytes");
        assert!(all.iter().any(|rec| !rec.threw));
        for rec in &all {
            compare(r, rec, &["--max-message-size", "100"]);
        }
    });
}

/// The decoder classes: IntegerDecoder keys and LongDecoder values (which
/// throw on a value shorter than 8 bytes, where klog stops as Kafka does),
/// StringDecoder by name and by default, and 3.9's deprecated names.
#[test]
fn decoder_classes_are_kafka_dump_logs() {
    each_release(|r| {
        let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
        for (suffix, args) in [
            (
                ".int-long.txt",
                &[
                    "--key-decoder-class",
                    "org.apache.kafka.tools.api.IntegerDecoder",
                    "--value-decoder-class",
                    "org.apache.kafka.tools.api.LongDecoder",
                ][..],
            ),
            (
                ".string.txt",
                &[
                    "--value-decoder-class",
                    "org.apache.kafka.tools.api.StringDecoder",
                    "--key-decoder-class",
                ][..],
            ),
            (
                ".deprecated.txt",
                &["--value-decoder-class", "kafka.serializer.StringDecoder"][..],
            ),
        ] {
            let all = recorded(r, suffix, ".log");
            for rec in &all {
                compare(r, rec, args);
            }
            seen.insert(suffix, all.len());
        }
        assert!(seen[".int-long.txt"] >= 30, "{seen:?}");
        assert!(seen[".string.txt"] >= 30, "{seen:?}");
        if r.release.starts_with("3.") {
            assert!(seen[".deprecated.txt"] >= 30, "{seen:?}");
        }
    });
}
