//! `klog report` in a real browser: headless Chromium loads each page from
//! disk (no network: the page's content security policy forbids every
//! request), and the DOM it built is checked against what the fixtures'
//! independent sources say: `fixtures/README.md` (the corrupt byte, the
//! cluster's story), the Python encoder's definitions, and the answers
//! real Kafka recorded under `fixtures/kafka-real/VERSION/expected/`. A
//! screenshot of each page is kept under the target directory
//! (`report-html/`).
//!
//! Without a browser the tests fail, unless `KLOG_SKIP_BROWSER=1` says to
//! skip them (what `.ci/run` sets, after printing a SKIPPED line, when it
//! cannot install one). `KLOG_BROWSER` names the browser's binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use crate::support::{repo, TestEnv};

mod page_shape;

/// The newest release of the oracle matrix (kafka-real/README.md).
const KAFKA_REAL: &str = "fixtures/kafka-real/4.4.0";

/// The browser, or `None` when the tests are told to skip without one.
fn browser() -> Option<PathBuf> {
    if let Some(b) = std::env::var_os("KLOG_BROWSER") {
        return Some(PathBuf::from(b));
    }
    let found = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .find_map(|name| {
        std::env::split_paths(&std::env::var_os("PATH").unwrap_or_default())
            .map(|d| d.join(name))
            .find(|p| p.is_file())
    });
    if found.is_none() {
        assert!(
            std::env::var("KLOG_SKIP_BROWSER").as_deref() == Ok("1"),
            "no chromium on PATH: install it (apt-get install chromium), name it with KLOG_BROWSER, \
             or set KLOG_SKIP_BROWSER=1 to skip the browser tests"
        );
        eprintln!("SKIPPED: report_html browser test (KLOG_SKIP_BROWSER=1, no chromium)");
    }
    found
}

/// Where screenshots are kept.
fn artifacts() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("report-html");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

fn headless(browser: &Path, profile: &Path) -> Command {
    let mut c = Command::new(browser);
    c.args([
        "--headless",
        "--no-sandbox",
        "--disable-gpu",
        "--no-first-run",
        "--disable-dev-shm-usage",
        "--hide-scrollbars",
    ])
    .arg(format!("--user-data-dir={}", profile.display()));
    c
}

/// The DOM Chromium builds from `page`, serialized; and a screenshot of
/// the page kept as `name.png`.
fn load(browser: &Path, page: &Path, name: &str) -> Dom {
    let profile = tempfile::tempdir().unwrap();
    let url = format!("file://{}", page.display());
    let o = headless(browser, profile.path())
        .arg("--dump-dom")
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success(), "{name}: {o:?}");
    let html = String::from_utf8(o.stdout).unwrap();
    let shot = artifacts().join(format!("{name}.png"));
    let o = headless(browser, profile.path())
        .arg(format!("--screenshot={}", shot.display()))
        .arg("--window-size=1280,2000")
        .arg(&url)
        .output()
        .unwrap();
    assert!(o.status.success() && shot.is_file(), "{name}: {o:?}");
    let dom = Dom::parse(&html);
    // The page's script ran to its end.
    assert_eq!(
        dom.all("body").first().and_then(|b| b.get("data-ready")),
        Some("1"),
        "{name}: the page's script did not run"
    );
    dom
}

/// A start tag of the serialized DOM: its name and attributes (unescaped).
#[derive(Debug, Clone)]
struct Elem {
    tag: String,
    attrs: BTreeMap<String, String>,
    /// The serialized DOM from the end of the tag on.
    at: usize,
}

impl Elem {
    fn get(&self, name: &str) -> Option<&str> {
        self.attrs.get(name).map(String::as_str)
    }
    fn has(&self, pairs: &[(&str, &str)]) -> bool {
        pairs.iter().all(|(k, v)| self.get(k) == Some(*v))
    }
    /// Whether it has class `c` (any element when `c` is empty).
    fn class(&self, c: &str) -> bool {
        c.is_empty()
            || self
                .get("class")
                .is_some_and(|v| v.split_whitespace().any(|x| x == c))
    }
}

struct Dom {
    html: String,
    elems: Vec<Elem>,
}

fn unescape(s: &str) -> String {
    s.replace("&quot;", "\"")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&nbsp;", "\u{a0}")
        .replace("&amp;", "&")
}

impl Dom {
    /// Start tags, as Chromium serializes them: `<name a="v" b="w">`,
    /// attribute values double-quoted with `&` and `"` escaped.
    fn parse(html: &str) -> Dom {
        let b = html.as_bytes();
        let mut elems = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'<' || !b.get(i + 1).is_some_and(u8::is_ascii_alphabetic) {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            while j < b.len() && !b[j].is_ascii_whitespace() && b[j] != b'>' && b[j] != b'/' {
                j += 1;
            }
            let tag = html[i + 1..j].to_ascii_lowercase();
            let mut attrs = BTreeMap::new();
            loop {
                while j < b.len() && (b[j].is_ascii_whitespace() || b[j] == b'/') {
                    j += 1;
                }
                if j >= b.len() || b[j] == b'>' {
                    break;
                }
                let start = j;
                while j < b.len() && b[j] != b'=' && b[j] != b'>' && !b[j].is_ascii_whitespace() {
                    j += 1;
                }
                let name = html[start..j].to_string();
                if j < b.len() && b[j] == b'=' && b.get(j + 1) == Some(&b'"') {
                    let end = j + 2 + html[j + 2..].find('"').unwrap();
                    attrs.insert(name, unescape(&html[j + 2..end]));
                    j = end + 1;
                } else {
                    attrs.insert(name, String::new());
                }
            }
            elems.push(Elem {
                tag,
                attrs,
                at: j + 1,
            });
            i = j + 1;
        }
        Dom {
            html: html.to_string(),
            elems,
        }
    }
    fn all(&self, tag: &str) -> Vec<&Elem> {
        self.elems.iter().filter(|e| e.tag == tag).collect()
    }
    fn find(&self, tag: &str, class: &str, pairs: &[(&str, &str)]) -> Vec<&Elem> {
        self.elems
            .iter()
            .filter(|e| e.tag == tag && e.class(class) && e.has(pairs))
            .collect()
    }
    fn one(&self, tag: &str, class: &str, pairs: &[(&str, &str)]) -> &Elem {
        let found = self.find(tag, class, pairs);
        assert_eq!(
            found.len(),
            1,
            "one <{tag} class={class}> with {pairs:?}: {found:?}"
        );
        found[0]
    }
    /// The element's serialized content to its end tag (tags included).
    fn html_after(&self, e: &Elem) -> String {
        let rest = &self.html[e.at..];
        let end = format!("</{}>", e.tag);
        unescape(&rest[..rest.find(&end).unwrap_or(rest.len())])
    }

    /// The text right after an element's start tag (to its next tag).
    fn text_after(&self, e: &Elem) -> String {
        let rest = &self.html[e.at..];
        unescape(&rest[..rest.find('<').unwrap_or(rest.len())])
    }
}

/// `klog report ARGS -o NAME.html` in `env`; the page's path and klog's exit code.
fn report(env: &TestEnv, name: &str, args: &[&str]) -> (PathBuf, i32) {
    let page = env.path(&format!("{name}.html"));
    let mut all = vec!["report", "-o", page.to_str().unwrap()];
    all.extend_from_slice(args);
    let o = env.run(&all, None);
    let code = o.status.code().unwrap();
    assert!(code == 0 || code == 1, "{args:?}: {o:?}");
    (page, code)
}

fn verdict(dom: &Dom) -> (&str, &str) {
    let v = dom.one("section", "", &[("id", "verdict")]);
    (
        v.get("data-verdict").unwrap(),
        v.get("data-errors").unwrap(),
    )
}

#[test]
fn corrupt_report_marks_the_flipped_batch() {
    let Some(browser) = browser() else { return };
    let env = TestEnv::new();
    let (page, code) = report(&env, "corrupt", &["fixtures/corrupt"]);
    assert_eq!(code, 1, "a damaged verdict exits 1");
    let dom = load(&browser, &page, "corrupt");
    // fixtures/README.md: byte 1020 of 00000000000000000000.log inverted,
    // inside the batch at position 950, so its CRC fails: one damaged
    // batch, one error.
    assert_eq!(verdict(&dom), ("damaged", "1"));
    dom.one(
        "tr",
        "",
        &[
            ("data-kind", "crc_mismatch"),
            ("data-severity", "error"),
            ("data-count", "1"),
        ],
    );
    let log = "fixtures/corrupt/orders-0/00000000000000000000.log";
    let finding = dom.one("tr", "finding", &[("data-position", "950")]);
    assert_eq!(finding.get("data-file"), Some(log));
    // The damaged partition's mark, at the batch's position.
    let mark = dom.one("path", "damage", &[("data-position", "950")]);
    assert_eq!(mark.get("data-file"), Some(log));
    assert_eq!(mark.get("data-kind"), Some("crc_mismatch"));
    // Kafka's recovery (LogSegment.recover) cuts at the first batch whose
    // CRC fails: position 950; it drops every offset from that batch's to
    // the last, 127 (128 records, offsets 0..127); a salvage loses the
    // batch alone, 5 offsets (batches of 5).
    let cut = dom.one("p", "recovery", &[]);
    assert_eq!(cut.get("data-position"), Some("950"));
    let drop = dom.one("rect", "kafka-drops", &[]);
    assert_eq!(drop.get("data-last"), Some("127"));
    let salvage = dom.one("rect", "salvage-loses", &[]);
    let from: i64 = salvage.get("data-from").unwrap().parse().unwrap();
    assert_eq!(drop.get("data-from"), Some(from.to_string().as_str()));
    assert_eq!(
        salvage.get("data-last"),
        Some((from + 4).to_string().as_str())
    );
    assert_eq!(mark.get("data-offset"), Some(from.to_string().as_str()));
    // No data directory holds offsets here: the lag section says so.
    assert!(dom.find("td", "cell", &[]).is_empty());
}

#[test]
fn kafka_real_report_matches_kafkas_answers() {
    let Some(browser) = browser() else { return };
    let env = TestEnv::new();
    let real = repo().join(KAFKA_REAL);
    let dir = real.join("broker-1");
    let (page, code) = report(
        &env,
        "kafka-real-broker-1",
        &[dir.to_str().unwrap(), "--now-ms", "1767225600000"],
    );
    assert_eq!(code, 0);
    let dom = load(&browser, &page, "kafka-real-broker-1");
    // Broker 1 was stopped cleanly and Kafka served from it: no damage.
    let (v, errors) = verdict(&dom);
    assert_ne!(v, "damaged");
    assert_eq!(errors, "0");
    // Every group's heatmap cells: Kafka's committed offset, high
    // watermark and lag (Admin API, expected/groups.json).
    let groups: Value =
        serde_json::from_str(&std::fs::read_to_string(real.join("expected/groups.json")).unwrap())
            .unwrap();
    let mut cells = 0;
    for g in groups.as_array().unwrap() {
        if g["type"] == "Share" {
            continue;
        }
        let group = g["group"].as_str().unwrap();
        for p in g["offsets"].as_array().unwrap() {
            let partition = p["partition"].to_string();
            let cell = dom.one(
                "td",
                "cell",
                &[
                    ("data-group", group),
                    ("data-topic", p["topic"].as_str().unwrap()),
                    ("data-partition", &partition),
                ],
            );
            for (attr, field) in [
                ("data-committed", "committed"),
                ("data-high-watermark", "high_watermark"),
                ("data-lag", "lag"),
            ] {
                assert_eq!(
                    cell.get(attr),
                    Some(p[field].to_string().as_str()),
                    "{group} {partition}: {attr}"
                );
            }
            assert_eq!(dom.text_after(cell), p["lag"].to_string());
            cells += 1;
        }
    }
    assert!(cells >= 10, "{cells} cells");
    let shown = dom
        .find("td", "cell", &[])
        .iter()
        .filter(|c| c.get("data-committed").is_some())
        .count();
    assert_eq!(shown, cells, "the heatmap shows cells Kafka does not");
    // txn-0: tx-open left offsets 16..19 open: Kafka's READ_COMMITTED end
    // (the last stable offset) is 16, its high watermark 20
    // (expected/list-offsets.json).
    let offsets: Value = serde_json::from_str(
        &std::fs::read_to_string(real.join("expected/list-offsets.json")).unwrap(),
    )
    .unwrap();
    let txn = txn_0(&offsets);
    let fig = dom.one(
        "g",
        "lane",
        &[("data-topic", "txn"), ("data-partition", "0")],
    );
    let lso = txn["latest_read_committed"].to_string();
    assert_eq!(fig.get("data-last-stable"), Some(lso.as_str()));
    assert_eq!(
        fig.get("data-high-watermark"),
        Some(txn["latest_read_uncommitted"].to_string().as_str())
    );
    let open = dom.find("rect", "txn-open", &[("data-first", &lso)]);
    assert_eq!(open.len(), 1, "txn-0's open transaction from {lso}");
}

/// Kafka's ListOffsets answers about txn-0 (expected/list-offsets.json).
fn txn_0(offsets: &Value) -> &Value {
    let all = offsets.as_array().unwrap();
    all.iter()
        .find(|p| p["topic"] == "txn" && p["partition"] == 0)
        .unwrap()
}

#[test]
fn cluster_report_shows_the_divergence_point() {
    let Some(browser) = browser() else { return };
    let env = TestEnv::new();
    let brokers = [
        "fixtures/cluster/broker-1",
        "fixtures/cluster/broker-2",
        "fixtures/cluster/broker-3",
    ];
    // The brokers' directories, and the summaries written on each.
    let mut summaries = Vec::new();
    for b in brokers {
        let o = env.run(&["summary", "--format", "json", b], None);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
        let file = env.path(&format!("{}.json", b.replace('/', "_")));
        std::fs::write(&file, &o.stdout).unwrap();
        summaries.push(file.to_str().unwrap().to_string());
    }
    let summary_args: Vec<&str> = summaries.iter().map(String::as_str).collect();
    for (name, args) in [
        ("cluster", &brokers[..]),
        ("cluster-summaries", &summary_args[..]),
    ] {
        let (page, code) = report(&env, name, args);
        assert_eq!(code, 1, "{name}: diverged and lost partitions exit 1");
        let dom = load(&browser, &page, name);
        // fixtures/README.md (cluster/): orders-0 diverged on broker 3,
        // which Kafka truncates to 4 (the leader's end of epoch 0);
        // audit-0 lost; payments-0 (broker 3 a prefix, 5 of 8) and
        // audit-1 (broker 4 has no directory) under-replicated, and
        // __consumer_offsets-0 (broker 1 holds 2 of 5 records).
        assert_eq!(verdict(&dom).0, "damaged", "{name}");
        let totals = dom.one("p", "totals", &[]);
        assert!(
            totals.has(&[
                ("data-diverged", "1"),
                ("data-lost", "1"),
                ("data-under-replicated", "3")
            ]),
            "{name}: {totals:?}"
        );
        dom.one(
            "figure",
            "replicas",
            &[
                ("data-topic", "orders"),
                ("data-partition", "0"),
                ("data-status", "diverged"),
            ],
        );
        dom.one(
            "line",
            "divergence",
            &[("data-node", "3"), ("data-offset", "4")],
        );
        dom.one(
            "tr",
            "replica",
            &[
                ("data-node", "3"),
                ("data-state", "diverged"),
                ("data-truncation", "4"),
            ],
        );
        dom.one(
            "figure",
            "replicas",
            &[
                ("data-topic", "audit"),
                ("data-partition", "0"),
                ("data-status", "lost"),
            ],
        );
        let payments = dom
            .find(
                "tr",
                "replica",
                &[("data-node", "3"), ("data-state", "behind")],
            )
            .into_iter()
            .filter(|r| r.get("data-behind") == Some("3"))
            .count();
        assert_eq!(
            payments, 1,
            "{name}: broker 3's payments-0 is 3 offsets behind"
        );
        // billing's commits on the coordinator's copy (broker 3): orders-0
        // at 7 of 9, payments-0 at 5 of 8.
        for (topic, committed, hw, lag) in [("orders", "7", "9", "2"), ("payments", "5", "8", "3")]
        {
            let cell = dom.one(
                "td",
                "cell",
                &[
                    ("data-group", "billing"),
                    ("data-topic", topic),
                    ("data-partition", "0"),
                ],
            );
            assert!(
                cell.has(&[
                    ("data-committed", committed),
                    ("data-high-watermark", hw),
                    ("data-lag", lag)
                ]),
                "{name}: {cell:?}"
            );
        }
        // auditor committed audit-0 = 1, a partition no broker holds.
        let auditor = dom.one(
            "td",
            "cell",
            &[
                ("data-group", "auditor"),
                ("data-topic", "audit"),
                ("data-partition", "0"),
            ],
        );
        assert_eq!(auditor.get("data-committed"), Some("1"));
        assert_eq!(auditor.get("data-lag"), Some(""));
    }
}

#[test]
fn hostile_names_render_as_text() {
    let Some(browser) = browser() else { return };
    let env = TestEnv::new();
    // Group names a client may choose (Kafka accepts any string), written
    // with klog's append path into a copy of fixtures/groups.
    let names = [
        "<script>alert(1)</script>",
        "\"><img src=x onerror=alert(2)>",
        "evil\x1b[31m&amp;",
    ];
    for (i, name) in names.iter().enumerate() {
        let o = crate::support::commit_orders_0(&env, name, i + 3);
        assert_eq!(o.status.code(), Some(0), "{o:?}");
    }
    let (page, _) = report(&env, "hostile-names", &["fixtures/groups"]);
    let raw = std::fs::read_to_string(&page).unwrap();
    assert_eq!(
        raw.matches("<script").count(),
        1,
        "only the page's own script"
    );
    assert!(!raw.contains("<img"));
    let dom = load(&browser, &page, "hostile-names");
    assert_eq!(dom.all("script").len(), 1);
    assert!(dom.all("img").is_empty());
    // Each name is a row of the heatmap, as text: the exact name where it
    // is printable, control characters as text shows them.
    for (i, name) in names.iter().enumerate() {
        let shown = name.replace('\x1b', "\\x1b");
        let cell = dom.one(
            "td",
            "cell",
            &[
                ("data-group", shown.as_str()),
                ("data-topic", "orders"),
                ("data-partition", "0"),
            ],
        );
        assert_eq!(
            cell.get("data-committed"),
            Some((i + 3).to_string().as_str())
        );
        let row = dom
            .find("tr", "", &[("data-group", shown.as_str())])
            .into_iter()
            .next()
            .unwrap();
        let th = dom
            .elems
            .iter()
            .find(|e| e.at > row.at && e.tag == "th")
            .unwrap();
        assert_eq!(dom.text_after(th), shown);
    }
}

#[test]
fn layout_view_places_each_field_on_its_bytes() {
    let Some(browser) = browser() else { return };
    let env = TestEnv::new();
    let (page, code) = report(
        &env,
        "layout",
        &[
            "--layout",
            "fixtures/data/orders-0/00000000000000000000.log",
            "--max-bytes",
            "512",
        ],
    );
    assert_eq!(code, 0);
    let dom = load(&browser, &page, "layout");
    // RecordBatch v2 (Kafka's DefaultRecordBatch): baseOffset int64 at 0,
    // batchLength int32 at 8, partitionLeaderEpoch int32 at 12, magic int8
    // at 16, crc uint32 at 17, attributes int16 at 21; the first batch's
    // base offset is 0 and its magic 2.
    for (name, position, len) in [
        ("baseOffset", 0, 8),
        ("batchLength", 8, 4),
        ("partitionLeaderEpoch", 12, 4),
        ("magic", 16, 1),
        ("crc", 17, 4),
        ("attributes", 21, 2),
    ] {
        let row = dom.one(
            "tr",
            "field",
            &[
                ("data-name", name),
                ("data-position", &position.to_string()),
            ],
        );
        assert_eq!(
            row.get("data-len"),
            Some(len.to_string().as_str()),
            "{name}"
        );
        // Its bytes in the hex view carry the same field number.
        let k = row.get("data-f").unwrap();
        let spans = dom.find("span", "f", &[("data-f", k)]);
        let bytes: usize = spans
            .iter()
            .map(|s| dom.text_after(s).split_whitespace().count())
            .sum();
        assert_eq!(bytes, len, "{name}: bytes in the hex view");
    }
    let base = dom.one(
        "tr",
        "field",
        &[("data-name", "baseOffset"), ("data-position", "0")],
    );
    assert!(base.get("data-tip").unwrap().contains("= 0"));
    let magic = dom.one(
        "tr",
        "field",
        &[("data-name", "magic"), ("data-position", "16")],
    );
    assert!(magic.get("data-tip").unwrap().contains("= 2"));
}

/// The report of fixtures/kafka-real's three brokers, judged at
/// 2026-01-01, as `NAME.html`.
fn cluster_page(env: &TestEnv, name: &str) -> PathBuf {
    let real = repo().join(KAFKA_REAL);
    let dirs: Vec<String> = (1..=3)
        .map(|b| real.join(format!("broker-{b}")).display().to_string())
        .collect();
    let mut args: Vec<&str> = dirs.iter().map(String::as_str).collect();
    args.extend(["--now-ms", "1767225600000"]);
    report(env, name, &args).0
}

/// The DOM of a probed page (see [`probe`]) in a 1400×900 window.
fn probed(browser: &Path, profile: &Path, page: &Path) -> Dom {
    let o = headless(browser, profile)
        .arg("--window-size=1400,900")
        .arg("--dump-dom")
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(o.status.success(), "{o:?}");
    Dom::parse(&String::from_utf8(o.stdout).unwrap())
}

/// A screenshot of `page`, 1400 pixels wide and `height` high, kept as
/// `NAME.png` with the others.
fn screenshot(browser: &Path, profile: &Path, page: &Path, name: &str, height: i64) {
    let shot = artifacts().join(format!("{name}.png"));
    let o = headless(browser, profile)
        .arg(format!("--screenshot={}", shot.display()))
        .arg(format!("--window-size=1400,{height}"))
        .arg(format!("file://{}", page.display()))
        .output()
        .unwrap();
    assert!(o.status.success() && shot.is_file(), "{o:?}");
}

/// A copy of `page` with a script that marks on `<body>` where the restart
/// section ends in a 1400×900 window (`data-restart-bottom`, CSS pixels).
fn first_screen_probe(page: &Path) -> PathBuf {
    probe(
        page,
        "(function(){var s=document.getElementById('restart');\
         document.body.setAttribute('data-restart-bottom',\
         s?String(Math.ceil(s.getBoundingClientRect().bottom)):'none');})();",
    )
}

/// A copy of `page` (`NAME.probe.html`) with `script` run at its end; the
/// page's content security policy is given the script's hash, or it would
/// not run.
fn probe(page: &Path, script: &str) -> PathBuf {
    let html = std::fs::read_to_string(page).unwrap();
    let probe = format!("<script>{script}</script></body>");
    let allowed = format!("script-src 'sha256-{}' ", sha256_base64(script));
    let html = html
        .replacen("script-src ", &allowed, 1)
        .replacen("</body>", &probe, 1);
    let out = page.with_extension("probe.html");
    std::fs::write(&out, html).unwrap();
    out
}

#[test]
fn the_first_screen_names_the_crashed_broker_and_its_restart() {
    let Some(browser) = browser() else { return };
    let env = TestEnv::new();
    // fixtures/kafka-real (the `killed` scenario): node 3 was killed with
    // SIGKILL, so Kafka left no .kafka_cleanshutdown in its directory;
    // nodes 1 and 2 stopped cleanly.
    let page = cluster_page(&env, "restart");
    let profile = tempfile::tempdir().unwrap();
    let dom = probed(&browser, profile.path(), &first_screen_probe(&page));
    let section = dom.one("section", "", &[("id", "restart")]);
    assert_eq!(section.get("data-unclean"), Some("1"));
    // The crashed broker comes first, named, with what its restart re-reads.
    let first = dom.find("li", "unclean", &[]);
    assert_eq!(first.len(), 1);
    assert_eq!(first[0].get("data-node"), Some("3"));
    let text = dom.html_after(first[0]);
    assert!(
        text.contains("UNCLEAN shutdown") && text.contains("re-reading"),
        "{text}"
    );
    assert_eq!(dom.find("li", "clean", &[]).len(), 2);
    // And it all fits the first screen of a 1400×900 window.
    let body = dom.all("body")[0];
    let bottom: f64 = body.get("data-restart-bottom").unwrap().parse().unwrap();
    assert!(bottom <= 900.0, "the restart section ends at {bottom} px");
    // A screenshot of that first screen, kept with the others.
    screenshot(&browser, profile.path(), &page, "restart-first-screen", 900);
}

#[test]
fn notes_of_one_kind_are_one_row_with_their_count() {
    let Some(browser) = browser() else { return };
    // fixtures/broker crashed with every active segment's indexes still
    // preallocated (fixtures/broker/PREALLOCATED, restored by TestEnv):
    // one index_trailing_zeros note per file, which a healthy broker
    // leaves; the findings table shows them as one row.
    let env = TestEnv::new();
    let preallocated = std::fs::read_to_string(env.path("fixtures/broker/PREALLOCATED"))
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .count();
    let (page, _) = report(&env, "broker", &["fixtures/broker"]);
    let dom = load(&browser, &page, "broker");
    let rows = dom.find("tr", "finding", &[("data-kind", "index_trailing_zeros")]);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(
        rows[0].get("data-count"),
        Some(preallocated.to_string().as_str())
    );
    // The restart section names the crash: no .kafka_cleanshutdown there.
    let restart = dom.one("section", "", &[("id", "restart")]);
    assert_eq!(restart.get("data-unclean"), Some("1"));
}

/// The SHA-256 of `s`, base64, from Python's hashlib (independent of klog).
fn sha256_base64(s: &str) -> String {
    let o = Command::new("python3")
        .args([
            "-c",
            "import sys, hashlib, base64; \
             print(base64.b64encode(hashlib.sha256(sys.stdin.buffer.read()).digest()).decode())",
        ])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .and_then(|mut c| {
            use std::io::Write;
            c.stdin.take().unwrap().write_all(s.as_bytes())?;
            c.wait_with_output()
        })
        .unwrap();
    assert!(o.status.success());
    String::from_utf8(o.stdout).unwrap().trim().to_string()
}

/// See: hostile input, round three, item 15. The page's content security
/// policy lets only its own inline script run: `script-src` holds the
/// SHA-256 of each inline script (CSP Level 2 hash source), never
/// 'unsafe-inline'; forms post nowhere and `<base>` is refused. In the
/// browser the page's script still runs, and a script smuggled into the
/// page does not.
#[test]
fn r15_the_csp_allows_only_the_pages_own_script_by_its_hash() {
    let env = TestEnv::new();
    let (page, _) = report(&env, "csp", &["fixtures/corrupt"]);
    let html = std::fs::read_to_string(&page).unwrap();
    let meta = "<meta http-equiv=\"Content-Security-Policy\" content=\"";
    let at = html.find(meta).expect("a CSP meta tag") + meta.len();
    let csp = &html[at..at + html[at..].find('"').unwrap()];
    let directives: BTreeMap<&str, Vec<&str>> = csp
        .split(';')
        .map(|d| {
            let mut w = d.split_whitespace();
            (w.next().unwrap(), w.collect())
        })
        .collect();
    assert_eq!(directives["default-src"], ["'none'"], "{csp}");
    assert_eq!(directives["form-action"], ["'none'"], "{csp}");
    assert_eq!(directives["base-uri"], ["'none'"], "{csp}");
    let script_src = &directives["script-src"];
    assert!(!script_src.contains(&"'unsafe-inline'"), "{csp}");
    // Every inline script, by its hash, and nothing else.
    let mut hashes = Vec::new();
    let mut rest = html.as_str();
    while let Some(i) = rest.find("<script>") {
        let body = &rest[i + "<script>".len()..];
        let end = body.find("</script>").unwrap();
        hashes.push(format!("'sha256-{}'", sha256_base64(&body[..end])));
        rest = &body[end..];
    }
    assert!(!hashes.is_empty());
    assert_eq!(
        script_src.iter().map(|s| s.to_string()).collect::<Vec<_>>(),
        hashes,
        "{csp}"
    );

    let Some(browser) = browser() else { return };
    // The page's own script runs (`load` checks data-ready)...
    load(&browser, &page, "csp");
    // ...and one added to the page does not.
    let smuggled = env.path("csp-smuggled.html");
    std::fs::write(
        &smuggled,
        html.replacen(
            "<body>",
            "<body><script>document.documentElement.setAttribute(\"data-smuggled\",\"1\")</script>\
             <img src=\"data:,\" onerror=\"document.documentElement.setAttribute('data-smuggled','2')\">",
            1,
        ),
    )
    .unwrap();
    let dom = load(&browser, &smuggled, "csp-smuggled");
    assert_eq!(
        dom.all("html").first().and_then(|h| h.get("data-smuggled")),
        None
    );
}

/// The replica figures say who leads as the cluster verdict found it: on
/// the crash scenario's directories (fixtures/kafka-real/4.4.0/crash) the
/// metadata still names node 2, which went down uncleanly; Kafka's restart
/// elected node 1 for crash-all and node 3 for crash-unclean
/// (expected/crash/outcome.json). No caption may call node 2 the leader of
/// crash-all, and the captions name the leader Kafka elected.
#[test]
fn replica_captions_name_the_leader_after_a_restart() {
    let env = TestEnv::new();
    let real = repo().join(KAFKA_REAL);
    let outcome: Value = serde_json::from_str(
        &std::fs::read_to_string(real.join("expected/crash/outcome.json")).unwrap(),
    )
    .unwrap();
    let dirs: Vec<String> = (1..=3)
        .map(|n| real.join(format!("crash/broker-{n}")).display().to_string())
        .collect();
    let mut args: Vec<&str> = dirs.iter().map(String::as_str).collect();
    args.extend(["--now-ms", "1767225600000"]);
    let (page, _) = report(&env, "crash-captions", &args);
    let html = std::fs::read_to_string(page).unwrap();
    let caption = |topic: &str| {
        let at = html
            .find(&format!(
                "<figure class=\"replicas\" data-topic=\"{topic}\""
            ))
            .unwrap_or_else(|| panic!("no replica figure of {topic}"));
        let rest = &html[at..];
        rest[rest.find("<figcaption>").unwrap()..rest.find("</figcaption>").unwrap()].to_string()
    };
    for p in outcome["partitions"].as_array().unwrap() {
        let topic = p["topic"].as_str().unwrap();
        let leader = p["leader"].to_string();
        let c = caption(topic);
        assert!(
            c.contains("after a restart") && c.contains(&leader),
            "{topic}: Kafka elected {leader}: {c}"
        );
        assert!(!c.contains("leader 2,"), "{topic}: {c}");
    }
}

/// Whatever makes `report` exit 1 is said on stderr too, not only on the
/// page: a damaged verdict (fixtures/corrupt: one batch fails its CRC), and
/// with --layout the file's problems (a text file read as a log: its bytes
/// 8 to 12, ":0:r", are an entry size past its end).
#[test]
fn every_failure_of_report_is_said_on_stderr() {
    let env = TestEnv::new();
    let page = env.path("corrupt.html");
    let o = env.run(
        &["report", "-o", page.to_str().unwrap(), "fixtures/corrupt"],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let err = crate::support::stderr(&o);
    assert!(err.contains("verdict: damaged"), "{err}");

    let text = env.path("passwd");
    std::fs::write(&text, "root:x:0:0:root:/root:/bin/bash\n").unwrap();
    let page = env.path("layout.html");
    let o = env.run(
        &[
            "report",
            "--layout",
            text.to_str().unwrap(),
            "-o",
            page.to_str().unwrap(),
        ],
        None,
    );
    assert_eq!(o.status.code(), Some(1));
    let err = crate::support::stderr(&o);
    let name = text.display().to_string();
    assert!(err.contains(&name) && err.contains("torn tail"), "{err}");
    assert!(page.is_file());
}
