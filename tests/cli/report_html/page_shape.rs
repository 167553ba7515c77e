//! The shape of the report of a real 3-broker cluster
//! (`fixtures/kafka-real/4.4.0`, brokers 1 to 3), checked in Chromium
//! against what the fixtures say independently of klog: the partition
//! folders on disk, and Kafka's own answers (`expected/list-offsets.json`,
//! `expected/groups.json`). One row per partition with its replicas on one
//! ticked axis, identical replicas drawn once, marks that do not hide each
//! other, bars wide enough to see, pale small lags, and a page short
//! enough to read.

use std::collections::BTreeMap;

use serde_json::Value;

use super::*;

/// The elements after `from`, up to the next that `stop` accepts.
fn within<'d>(dom: &'d Dom, from: &Elem, stop: impl Fn(&Elem) -> bool) -> Vec<&'d Elem> {
    dom.elems
        .iter()
        .filter(|e| e.at > from.at)
        .take_while(|e| !stop(e))
        .collect()
}

fn num(e: &Elem, attr: &str) -> f64 {
    e.get(attr)
        .unwrap_or_else(|| panic!("{attr} of {e:?}"))
        .parse()
        .unwrap()
}

fn json(path: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The brokers (1 to 3) whose directory holds the folder `topic-partition`.
fn holders(real: &Path, folder: &str) -> Vec<String> {
    (1..=3)
        .filter(|b| real.join(format!("broker-{b}/{folder}")).is_dir())
        .map(|b| b.to_string())
        .collect()
}

/// A folder's segment files (`.log`) by name, with their sizes (or, with
/// `bytes`, their bytes).
fn logs(dir: &Path, bytes: bool) -> BTreeMap<String, Vec<u8>> {
    std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let data = std::fs::read(&p).unwrap();
            match bytes {
                true => (name, data),
                false => (name, data.len().to_string().into_bytes()),
            }
        })
        .collect()
}

/// Hue (degrees) and lightness (0..1) of Chromium's `rgb(r, g, b)`.
fn hue_lightness(rgb: &str) -> (f64, f64) {
    let v: Vec<f64> = rgb
        .trim_start_matches("rgb(")
        .trim_end_matches(')')
        .split(',')
        .map(|x| x.trim().parse::<f64>().unwrap() / 255.0)
        .collect();
    let (max, min) = (v[0].max(v[1]).max(v[2]), v[0].min(v[1]).min(v[2]));
    let d = max - min;
    let h = if d == 0.0 {
        0.0
    } else if max == v[0] {
        60.0 * ((v[1] - v[2]) / d).rem_euclid(6.0)
    } else if max == v[1] {
        60.0 * ((v[2] - v[0]) / d + 2.0)
    } else {
        60.0 * ((v[0] - v[1]) / d + 4.0)
    };
    (h, (max + min) / 2.0)
}

/// What the probe measures in a 1400×900 window: the page's height, the
/// narrowest bar as drawn, and each lag cell's computed colour.
const PROBE: &str = "(function(){var b=document.body;\
    b.setAttribute('data-height',String(b.scrollHeight));\
    var m=1e9;document.querySelectorAll('rect.txn,rect.kafka-drops,rect.salvage-loses')\
    .forEach(function(r){m=Math.min(m,r.getBoundingClientRect().width);});\
    b.setAttribute('data-min-bar',String(m));\
    document.querySelectorAll('td.cell').forEach(function(c){\
    c.setAttribute('data-bg',getComputedStyle(c).backgroundColor);});})();";

#[test]
fn kafka_real_cluster_page_has_a_row_per_partition_on_one_axis() {
    let Some(browser) = browser() else { return };
    let env = TestEnv::new();
    let real = repo().join(KAFKA_REAL);
    let page = cluster_page(&env, "kafka-real-cluster");
    let profile = tempfile::tempdir().unwrap();
    let dom = probed(&browser, profile.path(), &probe(&page, PROBE));
    let body = dom.all("body")[0];
    let offsets = json(&real.join("expected/list-offsets.json"));
    let mut checked = 0;
    for p in offsets.as_array().unwrap() {
        let (topic, partition) = (p["topic"].as_str().unwrap(), p["partition"].to_string());
        let folder = format!("{topic}-{partition}");
        let nodes = holders(&real, &folder);
        // One row per partition, every broker's replica in it.
        let fig = dom.one(
            "figure",
            "partition",
            &[("data-topic", topic), ("data-partition", &partition)],
        );
        assert_eq!(num(fig, "data-replicas") as usize, nodes.len(), "{folder}");
        let inside = within(&dom, fig, |e| e.tag == "figure" || e.tag == "section");
        let svg = inside.iter().find(|e| e.tag == "svg").unwrap();
        let lanes: Vec<&&Elem> = inside.iter().filter(|e| e.class("lane")).collect();
        let in_lanes: Vec<String> = lanes
            .iter()
            .flat_map(|l| l.get("data-nodes").unwrap().split(' '))
            .map(String::from)
            .collect();
        let mut sorted = in_lanes.clone();
        sorted.sort();
        assert_eq!(sorted, nodes, "{folder}: each replica in one lane");
        // One axis: Kafka's offsets inside it, round ticks placed by it.
        let (lo, hi, x0, x1) = ["data-lo", "data-hi", "data-x0", "data-x1"]
            .map(|a| num(svg, a))
            .into();
        assert!(lo <= p["earliest"].as_f64().unwrap(), "{folder}");
        assert!(
            hi >= p["latest_read_uncommitted"].as_f64().unwrap(),
            "{folder}"
        );
        let ticks: Vec<&&Elem> = inside.iter().filter(|e| e.class("tick")).collect();
        assert!(ticks.len() >= 2, "{folder}: {ticks:?}");
        for t in &ticks {
            let x = x0 + (num(t, "data-offset") - lo) * (x1 - x0) / (hi - lo);
            assert!((num(t, "x1") - x).abs() < 0.06, "{folder}: {t:?}");
        }
        // Every lane's segment at an offset at one x.
        let mut xs: BTreeMap<String, Vec<String>> = BTreeMap::new();
        for e in inside.iter().filter(|e| e.class("segment")) {
            let base = e.get("data-base-offset").unwrap().to_string();
            xs.entry(base).or_default().push(e.get("x").unwrap().into());
        }
        for (base, at) in &xs {
            assert!(
                at.windows(2).all(|w| w[0] == w[1]),
                "{folder} {base}: {at:?}"
            );
        }
        lanes_are_honest(&dom, &real, &folder, &lanes);
        checked += 1;
    }
    assert_eq!(checked, 25);
    marks_tell_each_other(&dom, &offsets);
    // Transactions and losses as drawn: at least 6 pixels wide.
    let min_bar = num(body, "data-min-bar");
    assert!((6.0..1e9).contains(&min_bar), "narrowest bar {min_bar}");
    small_lags_are_pale(&dom, &real, &offsets);
    // The page: restart and verdict on the first screen (900 px, checked
    // above), then per partition an axis and a lane (60 px; 80 with a
    // second lane or a transaction row), the lag heatmaps (~ 1000 px for
    // its 15 groups) and the replicas needing attention (~ 200 px each):
    // 900 + 32 × 80 + 1000 + 2 × 200 < 5000; 6000 leaves room for fonts.
    let height = num(body, "data-height");
    assert!(height <= 6000.0, "the page is {height} px high");
    screenshot(&browser, profile.path(), &page, "cluster-first-screen", 900);
    screenshot(
        &browser,
        profile.path(),
        &page,
        "cluster-full-page",
        height as i64,
    );
}

/// A lane of several brokers is labelled so, and their segment files have
/// the same names and sizes on disk (what the lane draws; a compacted
/// topic's bytes differ, each broker's cleaner having run on its own);
/// where Kafka kept all three in sync with the same bytes, one lane holds
/// them.
fn lanes_are_honest(dom: &Dom, real: &Path, folder: &str, lanes: &[&&Elem]) {
    let dir = |n: &str| real.join(format!("broker-{n}/{folder}"));
    let files = |n: &str| logs(&dir(n), false);
    for l in lanes {
        let nodes: Vec<&str> = l.get("data-nodes").unwrap().split(' ').collect();
        let label = dom.text_after(
            dom.elems
                .iter()
                .find(|e| e.at > l.at && e.class("lane-label"))
                .unwrap(),
        );
        if nodes.len() > 1 {
            assert_eq!(label, format!("brokers {} identical", nodes.join(", ")));
            assert!(
                nodes.iter().all(|n| files(n) == files(nodes[0])),
                "{folder}"
            );
        } else {
            assert_eq!(label, format!("broker {}", nodes[0]));
        }
    }
    let all = holders(real, folder);
    if folder.starts_with("codecs-") {
        let bytes = |n: &str| logs(&dir(n), true);
        assert!(all.iter().all(|n| bytes(n) == bytes(&all[0])), "{folder}");
        assert_eq!(
            lanes.len(),
            1,
            "{folder}: three identical replicas, one lane"
        );
    }
}

/// Marks at one offset each tell every value there; their flags do not
/// overlap; on txn-0, the leader's lane has Kafka's high watermark and last
/// stable offset, and the high watermark's flag also names the log end.
fn marks_tell_each_other(dom: &Dom, offsets: &Value) {
    for l in dom.find("g", "lane", &[]) {
        let inside = within(dom, l, |e| e.class("lane") || e.tag == "figure");
        let marks: Vec<&Elem> = inside.iter().copied().filter(|e| e.class("mark")).collect();
        for a in &marks {
            for b in marks
                .iter()
                .filter(|b| b.get("data-offset") == a.get("data-offset"))
            {
                let told = format!(
                    "{} {}",
                    b.get("data-label").unwrap(),
                    b.get("data-offset").unwrap()
                );
                assert!(
                    a.get("data-tip").unwrap().contains(&told),
                    "{a:?} hides {told}"
                );
            }
        }
        // Side by side: each flag at least a flag's width from the next.
        let flags: Vec<&Elem> = inside.iter().copied().filter(|e| e.class("flag")).collect();
        let mut xs: Vec<f64> = flags.iter().map(|f| num(f, "x")).collect();
        xs.sort_by(f64::total_cmp);
        if let Some(f) = flags.first() {
            let w = num(f, "width");
            assert!(xs.windows(2).all(|p| p[1] - p[0] >= w), "{xs:?}");
        }
    }
    let txn = txn_0(offsets);
    let leader = txn["leader"].to_string();
    let lanes = dom.find(
        "g",
        "lane",
        &[("data-topic", "txn"), ("data-partition", "0")],
    );
    let holds = |l: &&&Elem| l.get("data-nodes").unwrap().split(' ').any(|n| n == leader);
    let lane = *lanes.iter().find(holds).unwrap();
    let inside = within(dom, lane, |e| e.class("lane") || e.tag == "figure");
    let mark = |class: &str| *inside.iter().find(|e| e.class(class)).unwrap();
    let (hw, lso) = (
        txn["latest_read_uncommitted"].to_string(),
        txn["latest_read_committed"].to_string(),
    );
    assert_eq!(
        mark("m-high-watermark").get("data-offset"),
        Some(hw.as_str())
    );
    assert_eq!(mark("m-last-stable").get("data-offset"), Some(lso.as_str()));
    let tip = mark("m-high-watermark").get("data-tip").unwrap();
    assert!(
        tip.contains(&format!("high watermark {hw}")) && tip.contains(&format!("log end {hw}")),
        "{tip}"
    );
    assert!(mark("m-last-stable")
        .get("data-tip")
        .unwrap()
        .contains(&format!("last stable offset {lso}")));
}

/// Kafka's small lags (expected/groups.json: at most 100 records) are
/// coloured pale and yellow, far from the alarm red; each cell shows the
/// partition's last stable offset as Kafka answers it at read_committed.
fn small_lags_are_pale(dom: &Dom, real: &Path, offsets: &Value) {
    // Kafka's read_committed end of each partition, by folder name.
    let lso: BTreeMap<String, String> = offsets
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            let folder = format!("{}-{}", p["topic"].as_str().unwrap(), p["partition"]);
            (folder, p["latest_read_committed"].to_string())
        })
        .collect();
    let mut small = 0;
    for g in json(&real.join("expected/groups.json")).as_array().unwrap() {
        if g["type"] == "Share" {
            continue;
        }
        for p in g["offsets"].as_array().unwrap() {
            let (topic, partition) = (p["topic"].as_str().unwrap(), p["partition"].to_string());
            let cell = dom.one(
                "td",
                "cell",
                &[
                    ("data-group", g["group"].as_str().unwrap()),
                    ("data-topic", topic),
                    ("data-partition", &partition),
                ],
            );
            if let Some(want) = lso.get(&format!("{topic}-{partition}")) {
                assert_eq!(
                    cell.get("data-last-stable"),
                    Some(want.as_str()),
                    "{cell:?}"
                );
            }
            let lag = p["lag"].as_i64().unwrap();
            if (1..=100).contains(&lag) {
                let (h, l) = hue_lightness(cell.get("data-bg").unwrap());
                assert!(h >= 40.0 && l >= 0.75, "lag {lag}: {cell:?}");
                small += 1;
            }
        }
    }
    assert!(small >= 5, "{small} small lags");
}

/// What needs attention comes first: node 3 was killed in the middle of
/// the `killed` produce loop (fixtures/kafka-real/README.md), so its
/// replica of `killed-0` differs from the others' and the partition's
/// figure precedes those whose replicas are alike and hold nothing to
/// look at (`plain-0`, the `plain` scenario's, done before the crash).
#[test]
fn partitions_that_need_attention_come_first() {
    let Some(browser) = browser() else { return };
    let env = TestEnv::new();
    let page = cluster_page(&env, "kafka-real-attention");
    let dom = load(&browser, &page, "kafka-real-attention");
    let figures = dom.find("figure", "partition", &[]);
    let at = |topic: &str| {
        figures
            .iter()
            .position(|f| {
                f.get("data-topic") == Some(topic) && f.get("data-partition") == Some("0")
            })
            .unwrap_or_else(|| panic!("no figure of {topic}-0"))
    };
    let killed = figures[at("killed")];
    assert!(num(killed, "data-lanes") > 1.0, "{killed:?}");
    assert_eq!(num(figures[at("plain")], "data-lanes"), 1.0);
    assert!(at("killed") < at("plain"));
    // Every figure of several lanes comes before every one of one lane
    // with no transaction or damage drawn in it.
    let quiet = |f: &Elem| {
        num(f, "data-lanes") == 1.0
            && within(&dom, f, |e| e.tag == "figure" || e.tag == "section")
                .iter()
                .all(|e| !(e.class("txn") || e.class("damage")))
    };
    let first_quiet = figures.iter().position(|f| quiet(f)).unwrap();
    assert!(
        figures[first_quiet..]
            .iter()
            .all(|f| num(f, "data-lanes") == 1.0),
        "a figure of several lanes after the first quiet one"
    );
}
