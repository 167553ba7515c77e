#!/usr/bin/env python3
"""`klog export` read back by DuckDB, on every real-cluster fixture.

For each release folder of fixtures/kafka-real and each log directory in it
(broker-N, crash/broker-N, writers/after-klog/broker-N), exports the
directory and loads the tree with DuckDB (the Python package, pinned below,
installed into a venv the first time), then compares:

1. every column of every `records` row and every `batches` row with
   `klog dump-segment --format jsonl --records` of the same partitions (the
   batches whose CRC fails are not exported: each must be a `findings` row
   instead, and the export must exit 1);
2. with what Kafka's own tools recorded (expected/): for every data-topic
   segment of broker-N, `kafka-dump-log --deep-iteration --print-data-log`'s
   batch and record fields (offsets, timestamps, sizes of key and value,
   key and payload text, sequence, header keys, producer, epochs, flags,
   position, codec, the marker of a control record); the offsets a real
   consumer received with read_uncommitted and read_committed
   (consumed.json) against the export without and with `--isolation
   read-committed`; each transactional record's outcome against those
   consumers and the last stable offset Kafka listed (list-offsets.json);
   and node_id against meta.properties;
3. on broker-1, `producers` with `kafka-transactions describe-producers`
   (epoch, last sequence, last timestamp, open transaction's start);
4. `offsets` and `offset_history` (`--history`) with `klog replay-offsets
   [--history] --format json`, and on broker-1 with
   the committed offsets Kafka's Admin listed for the classic and consumer
   groups (groups.json).

The first comparison also runs on klog's own fixtures/broker (whose
`__consumer_offsets-19` starts with a legacy, magic 1 gzip, entry),
fixtures/corrupt (a batch whose CRC fails) and fixtures/txn.

Prints one line per directory and exits 1 at the first difference, naming
the release, directory, table, row and column.

Usage: duckdb_check.py --klog PATH [--venv DIR] [--work DIR] [--fixtures DIR]
"""

import argparse
import base64
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

import pinned_venv

DUCKDB = "1.5.6"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


class Mismatch(Exception):
    pass


def same(where, column, ours, theirs):
    if ours != theirs:
        raise Mismatch(f"{where}: {column}: export has {ours!r}, expected {theirs!r}")


def json_bytes(v):
    """A key, value or header value of klog's JSON as bytes."""
    if v is None:
        return None
    if isinstance(v, dict):
        return base64.b64decode(v["base64"])
    return v.encode("utf-8")


def partition_dirs(log_dir):
    out = []
    for d in sorted(os.listdir(log_dir)):
        m = re.fullmatch(r"(.+)-(\d+)", d)
        if m and os.path.isdir(os.path.join(log_dir, d)):
            out.append((m.group(1), int(m.group(2)), os.path.join(log_dir, d)))
    return out


def klog(args, klog_bin, ok=(0,)):
    r = subprocess.run([klog_bin] + args, capture_output=True, text=True)
    if r.returncode not in ok:
        raise Mismatch(f"klog {' '.join(args)}: exit {r.returncode}\n{r.stderr}")
    return r


def export(klog_bin, log_dir, out, extra=()):
    """Export `log_dir` into `out`; returns the exit code (0 or 1)."""
    r = klog(["export", log_dir, "-o", out, "--now-ms", "0", "--format", "json", *extra],
             klog_bin, ok=(0, 1))
    return r.returncode, r.stderr


def dump(klog_bin, parts):
    """klog dump-segment's batches of the partition folders, by (topic, partition)."""
    out = {}
    for topic, partition, d in parts:
        r = klog(["dump-segment", "--format", "jsonl", "--records", d], klog_bin, ok=(0, 1))
        batches = [json.loads(l) for l in r.stdout.splitlines()]
        out[(topic, partition)] = [b for b in batches if b.get("type") in ("batch", "legacy_batch")]
    return out


def select_all(con, source, order=""):
    """Every column of `source`, timestamps as epoch ms (so no time zone
    library is needed), as dicts."""
    cols = con.execute(f"DESCRIBE SELECT * FROM {source}").fetchall()
    exprs = [f'epoch_ms("{c[0]}") AS "{c[0]}"' if c[1].startswith("TIMESTAMP") else f'"{c[0]}"' for c in cols]
    rows = con.execute(f"SELECT {', '.join(exprs)} FROM {source} {order}")
    names = [d[0] for d in rows.description]
    return [dict(zip(names, r)) for r in rows.fetchall()]


def records_of(con, out):
    files = glob.glob(os.path.join(out, "records", "*", "*", "*.parquet"))
    if not files:
        return {}
    pattern = os.path.join(out, "records", "*", "*", "*.parquet")
    by = {}
    for r in select_all(con, f"read_parquet('{pattern}', hive_partitioning = true)",
                        'ORDER BY topic, partition, "offset"'):
        by.setdefault((r["topic"], int(r["partition"])), []).append(r)
    return by


def table(con, out, name):
    path = os.path.join(out, name, f"{name}.parquet")
    return select_all(con, f"read_parquet('{path}')")


def ms(ts):
    """A timestamp column as select_all reads it: epoch ms."""
    return ts


def check_against_dump(where, con, out, log_dir, dumped, node_id, code):
    recs = records_of(con, out)
    batches = {}
    for b in table(con, out, "batches"):
        batches.setdefault((b["topic"], b["partition"]), []).append(b)
    findings = table(con, out, "findings")
    bad = 0
    n = 0
    for key, entries in dumped.items():
        ours = iter(recs.get(key, []))
        our_batches = iter(batches.get(key, []))
        for b in entries:
            legacy = b["type"] == "legacy_batch"
            if not b["crc_valid"]:
                bad += 1
                hit = [f for f in findings if f["file"] == b["file"] and f["position"] == b["position"]]
                if not hit:
                    raise Mismatch(f"{where}: {b['file']}@{b['position']}: CRC fails, and no finding says so")
                continue
            ob = next(our_batches, None)
            w = f"{where}: batches {key} @{b['position']}"
            if ob is None:
                raise Mismatch(f"{w}: missing")
            if legacy:
                # A legacy entry (magic 0/1) has no producer, sequence or epoch: -1, as Kafka shows them.
                b = dict(b, record_count=len(b["records"]), is_transactional=False, is_control=False,
                         producer_id=-1, producer_epoch=-1, base_sequence=-1, last_sequence=-1,
                         partition_leader_epoch=-1, base_timestamp=None)
                b["base_offset"] = b["records"][0]["offset"] if b["records"] else b["base_offset"]
            for col in ("file", "position", "base_offset", "last_offset", "record_count", "size", "magic",
                        "crc", "attributes", "compression", "timestamp_type", "is_transactional", "is_control",
                        "producer_id", "producer_epoch", "base_sequence", "last_sequence",
                        "partition_leader_epoch"):
                same(w, col, ob[col], b[col])
            same(w, "base_timestamp", ms(ob["base_timestamp"]), b["base_timestamp"])
            same(w, "max_timestamp", ms(ob["max_timestamp"]), b["max_timestamp"])
            same(w, "node_id", ob["node_id"], node_id)
            same(w, "log_dir", ob["log_dir"], log_dir)
            for rec in b["records"]:
                r = next(ours, None)
                w = f"{where}: records {key} offset {rec['offset']}"
                if r is None:
                    raise Mismatch(f"{w}: missing")
                n += 1
                same(w, "offset", r["offset"], rec["offset"])
                same(w, "timestamp", ms(r["timestamp"]), rec["timestamp"])
                same(w, "timestamp_type", r["timestamp_type"], b["timestamp_type"])
                same(w, "key", None if r["key"] is None else bytes(r["key"]), json_bytes(rec["key"]))
                same(w, "value", None if r["value"] is None else bytes(r["value"]), json_bytes(rec["value"]))
                kt = r["key_text"]
                same(w, "key_text", kt, rec["key"] if isinstance(rec["key"], str) else None)
                same(w, "value_text", r["value_text"], rec["value"] if isinstance(rec["value"], str) else None)
                hs = [(h["key"], None if h["value"] is None else bytes(h["value"])) for h in r["headers"]]
                same(w, "headers", hs, [(h["key"], json_bytes(h["value"])) for h in rec["headers"]])
                for col in ("producer_id", "producer_epoch", "is_transactional", "is_control", "compression",
                            "magic", "file", "position", "partition_leader_epoch"):
                    same(w, col, r[col], b[col])
                same(w, "base_offset", r["base_offset"], b["base_offset"])
                seq = -1 if b["base_sequence"] < 0 else (b["base_sequence"] + rec["offset"] - b["base_offset"]) % 2**31
                same(w, "sequence", r["sequence"], seq)
                if b["is_control"] and rec.get("control", {}).get("type") in ("COMMIT", "ABORT"):
                    same(w, "transaction_outcome", r["transaction_outcome"],
                         {"COMMIT": "committed", "ABORT": "aborted"}[rec["control"]["type"]])
                elif not b["is_transactional"]:
                    same(w, "transaction_outcome", r["transaction_outcome"], None)
                same(w, "node_id", r["node_id"], node_id)
                same(w, "log_dir", r["log_dir"], log_dir)
        extra = next(ours, None)
        if extra is not None:
            raise Mismatch(f"{where}: records {key}: an extra row at offset {extra['offset']}")
        extra = next(our_batches, None)
        if extra is not None:
            raise Mismatch(f"{where}: batches {key}: an extra row @{extra['position']}")
    errors = [f for f in findings if f["severity"] == "error"]
    same(where, "exit code", code, 1 if errors else 0)
    if bad and not errors:
        raise Mismatch(f"{where}: {bad} CRC-failing batches but no error finding")
    return n


DUMP_RECORD = re.compile(r"^\| offset: (\d+) (CreateTime|LogAppendTime): (-?\d+) keySize: (-?\d+) valueSize: (-?\d+) "
                         r"sequence: (-?\d+) headerKeys: \[(.*?)\](.*)$")
DUMP_BATCH_FIELDS = re.compile(r"(\w+): (\S+)")


def check_against_kafka_dump(where, con, out, release_dir, broker):
    """kafka-dump-log's fields of every data-topic segment of `broker`."""
    recs = records_of(con, out)
    batches = {}
    for b in table(con, out, "batches"):
        batches[(b["topic"], b["partition"], b["file"].rsplit("/", 1)[-1], b["position"])] = b
    by_offset = {(k[0], k[1], r["offset"]): r for k, rows in recs.items() for r in rows}
    n = 0
    for path in sorted(glob.glob(os.path.join(release_dir, "expected", "dump-log", broker, "*", "*.txt"))):
        name = os.path.basename(path)
        if not re.fullmatch(r"\d{20}\.txt", name):
            continue
        folder = os.path.basename(os.path.dirname(path))
        m = re.fullmatch(r"(.+)-(\d+)", folder)
        if not m or m.group(1).startswith("__"):
            continue
        topic, partition = m.group(1), int(m.group(2))
        seg = name.replace(".txt", ".log")
        batch = None
        for line in open(path, encoding="utf-8", errors="surrogateescape"):
            line = line.rstrip("\n")
            if line.startswith("baseOffset:"):
                f = dict(DUMP_BATCH_FIELDS.findall(line))
                w = f"{where}: kafka-dump-log {folder}/{seg} @{f['position']}"
                batch = batches.get((topic, partition, seg, int(f["position"])))
                if batch is None:
                    raise Mismatch(f"{w}: no batches row")
                for ours, theirs in (("base_offset", "baseOffset"), ("last_offset", "lastOffset"),
                                     ("record_count", "count"), ("base_sequence", "baseSequence"),
                                     ("last_sequence", "lastSequence"), ("producer_id", "producerId"),
                                     ("producer_epoch", "producerEpoch"),
                                     ("partition_leader_epoch", "partitionLeaderEpoch"),
                                     ("size", "size"), ("magic", "magic"), ("crc", "crc")):
                    same(w, ours, batch[ours], int(f[theirs]))
                same(w, "is_transactional", batch["is_transactional"], f["isTransactional"] == "true")
                same(w, "is_control", batch["is_control"], f["isControl"] == "true")
                same(w, "compression", batch["compression"], f["compresscodec"])
                continue
            rm = DUMP_RECORD.match(line)
            if not rm:
                continue
            offset = int(rm.group(1))
            w = f"{where}: kafka-dump-log {folder}/{seg} offset {offset}"
            r = by_offset.get((topic, partition, offset))
            if r is None:
                raise Mismatch(f"{w}: no records row")
            n += 1
            same(w, "timestamp", ms(r["timestamp"]), int(rm.group(3)))
            same(w, "timestamp_type", r["timestamp_type"],
                 {"CreateTime": "create_time", "LogAppendTime": "log_append_time"}[rm.group(2)])
            same(w, "key size", -1 if r["key"] is None else len(r["key"]), int(rm.group(4)))
            same(w, "value size", -1 if r["value"] is None else len(r["value"]), int(rm.group(5)))
            same(w, "sequence", r["sequence"], int(rm.group(6)))
            keys = [k for k in rm.group(7).split(", ") if k]
            same(w, "header keys", [h["key"] for h in r["headers"]], keys)
            same(w, "base_offset", r["base_offset"], batch["base_offset"])
            rest = rm.group(8)
            marker = re.search(r"endTxnMarker: (\w+)", rest)
            if marker:
                same(w, "transaction_outcome", r["transaction_outcome"],
                     {"COMMIT": "committed", "ABORT": "aborted"}[marker.group(1)])
            data = re.match(r" key: (.*) payload: (.*)$", rest)
            if data:
                same(w, "key", r["key_text"] if r["key"] is not None else "null", data.group(1))
                same(w, "payload", r["value_text"] if r["value"] is not None else "null", data.group(2))
    return n


def check_consumers(where, con, klog_bin, release_dir, log_dir, work):
    """The offsets Kafka's consumers received, and each transactional record's outcome."""
    consumed = json.load(open(os.path.join(release_dir, "expected", "consumed.json")))
    listed = {}
    lo = json.load(open(os.path.join(release_dir, "expected", "list-offsets.json")))
    for p in lo if isinstance(lo, list) else lo.get("partitions", []):
        listed[(p["topic"], p["partition"])] = p
    out_rc = os.path.join(work, "read-committed")
    topics = sorted({c["topic"] for c in consumed})
    args = ["--isolation", "read-committed"] + [a for t in topics for a in ("--topic", t)]
    export(klog_bin, log_dir, out_rc, args)
    rc = records_of(con, out_rc)
    ru = records_of(con, os.path.join(work, "all"))
    for c in consumed:
        key = (c["topic"], c["partition"])
        w = f"{where}: {c['topic']}-{c['partition']} {c['isolation']}"
        rows = ru if c["isolation"] == "read_uncommitted" else rc
        ours = [r["offset"] for r in rows.get(key, []) if not r["is_control"]]
        same(w, "offsets", ours, c["offsets"])
    for c in consumed:
        if c["isolation"] != "read_committed":
            continue
        key = (c["topic"], c["partition"])
        committed = set(c["offsets"])
        lso = None
        p = listed.get(key)
        if p is not None:
            lso = p.get("latest_read_committed", p.get("lso"))
        for r in ru.get(key, []):
            if not r["is_transactional"] or r["is_control"]:
                continue
            w = f"{where}: {c['topic']}-{c['partition']} offset {r['offset']}"
            if r["offset"] in committed:
                want = "committed"
            elif lso is not None and r["offset"] >= lso:
                want = "open"
            else:
                want = "aborted"
            same(w, "transaction_outcome", r["transaction_outcome"], want)


def check_offsets(where, con, klog_bin, out, log_dir, groups_json):
    """`offsets` against `klog replay-offsets --format json` and, given
    Kafka's groups.json, the committed offsets Admin listed for the
    classic and consumer groups."""
    ours = {(r["group"], r["topic"], r["partition"]): r for r in table(con, out, "offsets")}
    replayed = json.loads(klog(["replay-offsets", "--format", "json", log_dir], klog_bin, ok=(0, 1)).stdout)
    theirs = {(o["group"], o["topic"], o["partition"]): o for o in replayed["offsets"]}
    same(where, "offsets keys", sorted(ours), sorted(theirs))
    for key, o in theirs.items():
        r = ours[key]
        w = f"{where}: offsets {key}"
        same(w, "committed_offset", r["committed_offset"], o["committed_offset"])
        same(w, "leader_epoch", r["leader_epoch"], o["leader_epoch"])
        same(w, "metadata", r["metadata"], o["metadata"])
        same(w, "commit_timestamp_ms", ms(r["commit_timestamp_ms"]), o["commit_timestamp_ms"])
    history = table(con, out, "offset_history")
    replayed = json.loads(klog(["replay-offsets", "--history", "--format", "json", log_dir], klog_bin,
                               ok=(0, 1)).stdout)["history"]
    same(where, "offset_history rows", len(history), len(replayed))
    for r, o in zip(history, replayed):
        w = f"{where}: offset_history log partition {o['log_partition']} offset {o['log_offset']}"
        for col in ("log_partition", "log_offset", "position", "event", "group", "topic", "partition",
                    "committed_offset"):
            same(w, col, r[col], o.get(col))
        same(w, "commit_timestamp_ms", ms(r["commit_timestamp_ms"]), o.get("commit_timestamp_ms"))
    n = 0
    if groups_json:
        for g in json.load(open(groups_json)):
            if g.get("type") not in ("Classic", "Consumer"):
                continue
            for o in g.get("offsets", []):
                key = (g["group"], o["topic"], o["partition"])
                w = f"{where}: Kafka's groups.json {key}"
                if key not in ours:
                    raise Mismatch(f"{w}: committed {o['committed']}, no offsets row")
                same(w, "committed_offset", ours[key]["committed_offset"], o["committed"])
                n += 1
    return n


def check_producers(where, con, out, release_dir):
    """`producers` against `kafka-transactions describe-producers` of each
    partition Kafka's tools described (on its leader, node 1)."""
    ours = {}
    for r in table(con, out, "producers"):
        ours[(r["topic"], r["partition"], r["producer_id"])] = r
    n = 0
    for path in sorted(glob.glob(os.path.join(release_dir, "expected", "tools", "transactions-describe-producers-*.txt"))):
        m = re.fullmatch(r"transactions-describe-producers-(.+)-(\d+)\.txt", os.path.basename(path))
        topic, partition = m.group(1), int(m.group(2))
        lines = [l.split("\t") for l in open(path).read().splitlines() if l.strip()]
        head = [h.strip() for h in lines[0]]
        for line in lines[1:]:
            f = dict(zip(head, (c.strip() for c in line)))
            pid = int(f["ProducerId"])
            w = f"{where}: describe-producers {topic}-{partition} producer {pid}"
            r = ours.get((topic, partition, pid))
            if r is None:
                raise Mismatch(f"{w}: no producers row")
            same(w, "producer_epoch", r["producer_epoch"], int(f["ProducerEpoch"]))
            same(w, "last_sequence", r["last_sequence"], int(f["LastSequence"]))
            same(w, "last_timestamp", ms(r["last_timestamp"]), int(f["LastTimestamp"]))
            start = f["CurrentTransactionStartOffset"]
            same(w, "open_transaction_first_offset", r["open_transaction_first_offset"],
                 None if start == "None" else int(start))
            n += 1
    return n


def node_id_of(log_dir):
    path = os.path.join(log_dir, "meta.properties")
    if not os.path.exists(path):
        return None
    for line in open(path, encoding="latin-1"):
        m = re.match(r"\s*(node\.id|broker\.id)\s*[=:]\s*(-?\d+)", line)
        if m:
            return int(m.group(2))
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--klog", required=True)
    ap.add_argument("--venv", default=os.path.join(REPO, "target", "export-duckdb-venv"))
    ap.add_argument("--work")
    ap.add_argument("--fixtures", default=os.path.join(REPO, "fixtures", "kafka-real"))
    args = ap.parse_args()
    pinned_venv.ensure("duckdb", "duckdb", DUCKDB, args.venv)
    import duckdb

    started = time.time()
    work = args.work or tempfile.mkdtemp(prefix="klog-export-duckdb-")
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    total = 0
    try:
        for release_dir in sorted(glob.glob(os.path.join(args.fixtures, "*", ""))):
            release = os.path.basename(os.path.dirname(release_dir))
            if not os.path.isdir(os.path.join(release_dir, "expected")):
                continue
            log_dirs = sorted(glob.glob(os.path.join(release_dir, "broker-*"))) + \
                sorted(glob.glob(os.path.join(release_dir, "crash", "broker-*"))) + \
                sorted(glob.glob(os.path.join(release_dir, "writers", "after-klog", "broker-*")))
            for log_dir in log_dirs:
                rel = os.path.relpath(log_dir, release_dir)
                where = f"{release} {rel}"
                out_dir = os.path.join(work, release, rel.replace("/", "_"))
                out = os.path.join(out_dir, "all")
                shutil.rmtree(out_dir, ignore_errors=True)
                code, stderr = export(args.klog, log_dir, out, ["--decode", "utf8", "--history"])
                parts = partition_dirs(log_dir)
                n = check_against_dump(where, con, out, log_dir, dump(args.klog, parts), node_id_of(log_dir), code)
                k = 0
                if rel.startswith("broker-"):
                    k = check_against_kafka_dump(where, con, out, release_dir, rel)
                if rel == "broker-1":
                    check_consumers(where, con, args.klog, release_dir, log_dir, out_dir)
                    g_p = check_producers(where, con, out, release_dir)
                    print(f"ok {where}: {g_p} producers as kafka-transactions describe-producers listed them")
                groups = os.path.join(release_dir, "expected", "groups.json") if rel == "broker-1" else None
                g = check_offsets(where, con, args.klog, out, log_dir, groups)
                total += n
                print(f"ok {where}: {n} records as klog dump-segment shows them, {k} as kafka-dump-log does"
                      f"{f', {g} committed offsets as Kafka Admin listed them' if g else ''}"
                      f"{', exit 1 with findings' if code else ''}", flush=True)
        # klog's own fixtures: a broker's directory with legacy (magic 1, gzip) entries among v2
        # batches; a CRC mismatch (a findings row and exit 1); transactions and markers.
        for name in ("broker", "corrupt", "txn"):
            log_dir = os.path.join(REPO, "fixtures", name)
            out = os.path.join(work, f"fixtures-{name}")
            shutil.rmtree(out, ignore_errors=True)
            code, _ = export(args.klog, log_dir, out, ["--decode", "utf8"])
            n = check_against_dump(f"fixtures/{name}", con, out, log_dir, dump(args.klog, partition_dirs(log_dir)),
                                   node_id_of(log_dir), code)
            total += n
            print(f"ok fixtures/{name}: {n} records as klog dump-segment shows them"
                  f"{', exit 1 with findings' if code else ''}", flush=True)
    except Mismatch as e:
        print(f"MISMATCH {e}", file=sys.stderr)
        sys.exit(1)
    print(f"duckdb {duckdb.__version__}: {total} records compared in {time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
