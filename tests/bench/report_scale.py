#!/usr/bin/env python3
"""tests/bench/report_scale.py -- `klog report` at 10,000 partitions.

What it does:
  1. Writes a data directory with fixtures/encoder.py (Kafka's formats
     encoded in Python, no klog involved): TOPICS topics of PER_TOPIC
     partitions (default 100 x 100 = 10,000), each one segment of 10
     batches of 10 records (small enough that Kafka leaves its index
     empty), every 100th partition with a transaction left open at its end
     and every 500th with an aborted one (so some timelines are drawn);
     the three offset checkpoints, meta.properties, .kafka_cleanshutdown;
     and __consumer_offsets-0 with GROUPS groups each committed on every
     partition, lag 0 to 49.
  2. Times `klog report DIR -o page.html` (median of ROUNDS wall times) and
     notes the page's size.
  3. Times headless Chromium's `--dump-dom` of the page (median of ROUNDS;
     the browser's own start included), beside the same for the small page
     of fixtures/corrupt; then loads a copy of the page with a probe script
     (allowed by its hash, as the page's content security policy asks) that
     reports the page's height, its element count, and the time to scroll
     through it a 900-pixel screen at a time (each step forces layout and a
     hit test).
  4. Prints a markdown table of the figures (README.md publishes them).

Usage: tests/bench/report_scale.py [--klog PATH] [--topics N] [--per-topic N]
         [--groups N] [--rounds N] [--browser PATH] [--keep]
The klog binary defaults to $CARGO_TARGET_DIR/release/klog (else
target/release/klog); build it with `cargo build --release` first.
"""

import argparse
import base64
import hashlib
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(REPO, "fixtures"))
import encoder as e  # noqa: E402

T = 1700000000000


def write_segment(folder, log, max_timestamp, offset_of_max):
    """A segment at base offset 0 as a cleanly shut down broker leaves it:
    its offset index empty (under index.interval.bytes), its time index
    one entry, the largest timestamp (LogSegment.close)."""
    with open(os.path.join(folder, e.segment_name(0, "log")), "wb") as f:
        f.write(log)
    open(os.path.join(folder, e.segment_name(0, "index")), "wb").close()
    with open(os.path.join(folder, e.segment_name(0, "timeindex")), "wb") as f:
        f.write(e.time_entry(max_timestamp, offset_of_max))


def partition_log(index):
    """The segment of partition number `index` and its log end."""
    out, offset = [], 0
    for b in range(10):
        records = [(i, i, b"k%d" % i, b"value-%04d" % (offset + i)) for i in range(10)]
        out.append(e.batch(offset, records, first_timestamp=T + offset))
        offset += 10
    if index % 500 == 250:  # an aborted transaction: 5 records, then the marker
        records = [(i, 0, None, b"aborted") for i in range(5)]
        out.append(e.batch(offset, records, first_timestamp=T, producer_id=7, producer_epoch=0,
                           base_sequence=0, attributes=e.TRANSACTIONAL))
        out.append(e.control_batch(offset + 5, False, 7, 0, timestamp=T))
        offset += 6
    if index % 100 == 0:  # a transaction left open at the end: 3 records
        records = [(i, 0, None, b"open") for i in range(3)]
        out.append(e.batch(offset, records, first_timestamp=T, producer_id=9, producer_epoch=0,
                           base_sequence=0, attributes=e.TRANSACTIONAL))
        offset += 3
    return b"".join(out), offset


def write_dir(root, topics, per_topic, groups):
    """The data directory; returns its partitions."""
    os.makedirs(root)
    ends, commits = [], []
    for t in range(topics):
        for p in range(per_topic):
            topic, index = "t%03d" % t, t * per_topic + p
            folder = os.path.join(root, "%s-%d" % (topic, p))
            os.makedirs(folder)
            log, end = partition_log(index)
            write_segment(folder, log, T + 99, 99)
            ends.append((topic, p, end))
            for g in range(groups):
                commits.append(("g%d" % g, topic, p, max(0, 100 - (index + g) % 50)))
    offsets = os.path.join(root, "__consumer_offsets-0")
    os.makedirs(offsets)
    batches, at = [], 0
    for i in range(0, len(commits), 500):
        chunk = commits[i:i + 500]
        records = [(k, 0, e.offset_commit_key(g, t, p), e.offset_commit_value(o, T))
                   for k, (g, t, p, o) in enumerate(chunk)]
        batches.append(e.batch(at, records, first_timestamp=T))
        at += len(chunk)
    write_segment(offsets, b"".join(batches), T, 0)
    ends.append(("__consumer_offsets", 0, at))
    for name in ("replication-offset-checkpoint", "recovery-point-offset-checkpoint"):
        with open(os.path.join(root, name), "wb") as f:
            f.write(e.checkpoint(ends))
    with open(os.path.join(root, "log-start-offset-checkpoint"), "wb") as f:
        f.write(e.checkpoint([(t, p, 0) for t, p, _ in ends]))
    with open(os.path.join(root, "meta.properties"), "w") as f:
        f.write("version=1\nnode.id=1\ncluster.id=a2xvZy1iZW5jaC0wMDAwMQ\n")
    open(os.path.join(root, ".kafka_cleanshutdown"), "w").close()
    return len(ends) - 1


def timed(cmd, rounds):
    """Median wall seconds of `rounds` runs of `cmd` (exit 0 or 1)."""
    walls = []
    for _ in range(rounds):
        t0 = time.perf_counter()
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        walls.append(time.perf_counter() - t0)
        if r.returncode not in (0, 1):
            sys.exit("%s: exit %d: %s" % (cmd[0], r.returncode, r.stderr.decode()[-2000:]))
    return statistics.median(walls)


def chromium(browser, profile, *args):
    return [browser, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-dev-shm-usage", "--hide-scrollbars", "--user-data-dir=" + profile, *args]


PROBE = ("(function(){var b=document.body,t0=performance.now(),h=b.scrollHeight,n=0;"
         "for(var y=0;y<h;y+=900){window.scrollTo(0,y);document.elementFromPoint(700,450);n++;}"
         "b.setAttribute('data-scroll-ms',String(Math.round(performance.now()-t0)));"
         "b.setAttribute('data-screens',String(n));b.setAttribute('data-height',String(h));"
         "b.setAttribute('data-elements',String(document.getElementsByTagName('*').length));"
         "b.setAttribute('data-parsed-ms',String(Math.round(t0)));})();")


def probe(browser, profile, page):
    """The probe's figures on a copy of `page`."""
    html = open(page, encoding="utf-8").read()
    digest = base64.b64encode(hashlib.sha256(PROBE.encode()).digest()).decode()
    html = html.replace("script-src ", "script-src 'sha256-%s' " % digest, 1)
    html = html.replace("</body>", "<script>%s</script></body>" % PROBE, 1)
    probed = page[:-len(".html")] + ".probe.html"
    with open(probed, "w", encoding="utf-8") as f:
        f.write(html)
    out = subprocess.run(chromium(browser, profile, "--window-size=1400,900", "--dump-dom",
                                  "file://" + probed), capture_output=True, text=True).stdout
    body = re.search(r"<body[^>]*>", out).group(0)
    return {k: int(v) for k, v in re.findall(r'data-([a-z-]+)="(\d+)"', body)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(REPO, "target"))
    ap.add_argument("--klog", default=os.path.join(target, "release", "klog"))
    ap.add_argument("--topics", type=int, default=100)
    ap.add_argument("--per-topic", type=int, default=100)
    ap.add_argument("--groups", type=int, default=2)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--browser", default=shutil.which("chromium") or "chromium")
    ap.add_argument("--keep", action="store_true", help="keep the temporary directory")
    a = ap.parse_args()
    work = tempfile.mkdtemp(prefix="klog-report-scale-")
    try:
        data = os.path.join(work, "data")
        t0 = time.perf_counter()
        n = write_dir(data, a.topics, a.per_topic, a.groups)
        print("wrote %d partitions in %.1f s: %s" % (n, time.perf_counter() - t0, data), file=sys.stderr)
        page, small = os.path.join(work, "page.html"), os.path.join(work, "small.html")
        generation = timed([a.klog, "report", data, "-o", page], a.rounds)
        timed([a.klog, "report", os.path.join(REPO, "fixtures/corrupt"), "-o", small], 1)
        profile = os.path.join(work, "profile")
        load = timed(chromium(a.browser, profile, "--dump-dom", "file://" + page), a.rounds)
        base = timed(chromium(a.browser, profile, "--dump-dom", "file://" + small), a.rounds)
        p = probe(a.browser, profile, page)
        drawn = open(page, encoding="utf-8").read().count('<figure class="partition"')
        rows = [
            ("partitions (topics x partitions, groups)", "%d (%d x %d, %d groups)" % (n, a.topics, a.per_topic, a.groups)),
            ("`klog report` wall time (median of %d)" % a.rounds, "%.2f s" % generation),
            ("page size", "%.1f MB" % (os.path.getsize(page) / 1e6)),
            ("timelines drawn (the rest in a paged table)", str(drawn)),
            ("page height, elements", "%d px, %d elements" % (p["height"], p["elements"])),
            ("Chromium `--dump-dom` wall time (median of %d)" % a.rounds, "%.2f s (%.2f s for fixtures/corrupt's page)" % (load, base)),
            ("parsed and laid out (the probe's start)", "%d ms" % p["parsed-ms"]),
            ("scroll through, 900 px at a time", "%d ms for %d screens (%.1f ms a screen)" % (
                p["scroll-ms"], p["screens"], p["scroll-ms"] / max(1, p["screens"]))),
        ]
        print("| measure | figure |\n|---|---|")
        for k, v in rows:
            print("| %s | %s |" % (k, v))
        print("\n%d cores, load average %.2f; %s" % (os.cpu_count(), os.getloadavg()[0], a.klog))
    finally:
        if a.keep:
            print("kept " + work, file=sys.stderr)
        else:
            shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
