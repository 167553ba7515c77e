#!/usr/bin/env python3
"""`klog export` read by Apache Spark (pyspark, local mode): the files are
engine-neutral.

Exports broker-1 of the newest real-cluster fixture (or --release) and
reads the tree with Spark, checking:

- the types Spark infers from the Parquet schema (long offsets, UTC
  timestamps, binary keys and values, headers as an array of
  struct<key: string, value: binary>, short producer epochs, booleans);
- the partition columns Spark discovers from the Hive folder names
  (`topic` a string, `partition` an integer) and the rows under each;
- timestamps as UTC milliseconds: `plain-0`'s offset i is stamped
  2026-01-01T00:00:00Z + i ms (fixtures/kafka-real/README.md), also with
  the session in another time zone;
- per data partition, the record count Kafka listed (list-offsets.json:
  the high watermark of a partition with no control records) and the
  read_committed offsets Kafka's consumer received (consumed.json);
- the one-file tables load, and the README's Spark SQL query runs.

pyspark (pinned below) is installed into a venv the first time; Java 17
must be on PATH. Prints the versions and the time taken.

Usage: spark_check.py --klog PATH [--venv DIR] [--work DIR] [--release X.Y.Z]
"""

import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

import pinned_venv

PYSPARK = "4.0.1"
REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = 1767225600000


def fail(msg):
    print(f"MISMATCH {msg}", file=sys.stderr)
    sys.exit(1)


def same(what, ours, theirs):
    if ours != theirs:
        fail(f"{what}: Spark reads {ours!r}, expected {theirs!r}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--klog", required=True)
    ap.add_argument("--venv", default=os.path.join(REPO, "target", "export-spark-venv"))
    ap.add_argument("--work")
    ap.add_argument("--release")
    args = ap.parse_args()
    pinned_venv.ensure("pyspark", "pyspark", PYSPARK, args.venv)
    started = time.time()
    import pyspark
    from pyspark.sql import SparkSession
    from pyspark.sql import types as T

    releases = sorted(d for d in glob.glob(os.path.join(REPO, "fixtures", "kafka-real", "*", "expected")))
    release_dir = os.path.dirname(releases[-1])
    if args.release:
        release_dir = os.path.join(REPO, "fixtures", "kafka-real", args.release)
    release = os.path.basename(release_dir)
    work = args.work or tempfile.mkdtemp(prefix="klog-export-spark-")
    out = os.path.join(work, "broker-1")
    shutil.rmtree(out, ignore_errors=True)
    r = subprocess.run([args.klog, "export", os.path.join(release_dir, "broker-1"), "-o", out,
                        "--decode", "utf8", "--history", "--now-ms", "0", "--format", "json"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        fail(f"klog export: exit {r.returncode}\n{r.stderr}")

    spark = (SparkSession.builder.master("local[2]").appName("klog-export-check")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.ui.enabled", "false")
             .config("spark.ui.showConsoleProgress", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    java = spark.sparkContext._jvm.java.lang.System.getProperty("java.version")

    records = spark.read.parquet(os.path.join(out, "records"))
    types = {f.name: f.dataType for f in records.schema.fields}
    want = {
        "offset": T.LongType(), "timestamp": T.TimestampType(), "timestamp_type": T.StringType(),
        "key": T.BinaryType(), "value": T.BinaryType(), "key_text": T.StringType(),
        "value_text": T.StringType(),
        "headers": T.ArrayType(T.StructType([T.StructField("key", T.StringType(), False),
                                             T.StructField("value", T.BinaryType(), True)]), False),
        "producer_id": T.LongType(), "producer_epoch": T.ShortType(), "sequence": T.IntegerType(),
        "is_transactional": T.BooleanType(), "is_control": T.BooleanType(),
        "transaction_outcome": T.StringType(), "base_offset": T.LongType(),
        "partition_leader_epoch": T.IntegerType(), "compression": T.StringType(),
        "magic": T.IntegerType(), "file": T.StringType(), "position": T.LongType(),
        "node_id": T.IntegerType(), "log_dir": T.StringType(),
        "topic": T.StringType(), "partition": T.IntegerType(),
    }
    for name, t in want.items():
        if name not in types:
            fail(f"records: no column {name} ({sorted(types)})")
        # Types as Spark SQL names them; nullability is Spark's to say on read.
        same(f"records.{name} type", types[name].simpleString(), t.simpleString())
    same("records columns", sorted(types), sorted(want))

    records.createOrReplaceTempView("records")
    plain = spark.sql("SELECT `offset`, unix_millis(timestamp) AS ms, key_text, hour(timestamp) AS h "
                      "FROM records WHERE topic = 'plain' AND partition = 0 ORDER BY `offset`").collect()
    same("plain-0 offsets", [p["offset"] for p in plain], list(range(30)))
    for p in plain:
        same(f"plain-0 offset {p['offset']} ms", p["ms"], BASE + p["offset"])
        same(f"plain-0 offset {p['offset']} key", p["key_text"], f"key-{p['offset']}")
        same(f"plain-0 offset {p['offset']} UTC hour", p["h"], 0)
    spark.conf.set("spark.sql.session.timeZone", "America/New_York")
    ms = spark.sql("SELECT unix_millis(timestamp) AS ms FROM records WHERE topic = 'plain' AND `offset` = 7").collect()
    same("plain-0 offset 7 ms in another session time zone", ms[0]["ms"], BASE + 7)
    spark.conf.set("spark.sql.session.timeZone", "UTC")

    listed = json.load(open(os.path.join(release_dir, "expected", "list-offsets.json")))
    counts = {(r["topic"], r["partition"]): r["n"] for r in
              spark.sql("SELECT topic, partition, count(*) AS n, sum(CAST(is_control AS INT)) AS c "
                        "FROM records GROUP BY topic, partition").collect() if r["c"] == 0}
    checked = 0
    for p in listed:
        key = (p["topic"], p["partition"])
        if key in counts and p["earliest"] == 0 and p["topic"] not in ("compacted", "killed", "recreated"):
            same(f"{key} rows (Kafka's high watermark)", counts[key], p["latest_read_uncommitted"])
            checked += 1
    consumed = json.load(open(os.path.join(release_dir, "expected", "consumed.json")))
    for c in consumed:
        if c["isolation"] != "read_committed":
            continue
        rows = spark.sql(
            "SELECT `offset` FROM records WHERE topic = '{t}' AND partition = {p} AND NOT is_control "
            "AND (transaction_outcome IS NULL OR transaction_outcome = 'committed') ORDER BY `offset`"
            .format(t=c["topic"], p=c["partition"])).collect()
        same(f"{c['topic']}-{c['partition']} committed offsets", [r["offset"] for r in rows], c["offsets"])

    tables = {}
    for name in ("batches", "partitions", "producers", "transactions", "offsets", "findings", "offset_history"):
        df = spark.read.parquet(os.path.join(out, name))
        df.createOrReplaceTempView(name)
        tables[name] = df.count()
    same("findings rows", tables["findings"], 0)
    # The README's Spark SQL query: producers of a set of partitions and their aborted transactions.
    aborted = spark.sql("""
        SELECT r.topic, r.partition, r.producer_id, count(*) AS records
        FROM records r
        WHERE r.topic IN ('txn', 'txn-timeout') AND r.transaction_outcome = 'aborted' AND NOT r.is_control
        GROUP BY r.topic, r.partition, r.producer_id ORDER BY 1, 2, 3""").collect()
    same("aborted records per partition", sorted((a["topic"], a["records"]) for a in aborted),
         [("txn", 5), ("txn-timeout", 5)])
    spark.stop()
    print(f"ok {release} broker-1: Spark {pyspark.__version__} (Java {java}) read {sum(tables.values())} rows "
          f"of the one-file tables and the records tree; {checked} partitions' counts as Kafka listed them; "
          f"{time.time() - started:.1f} s")


if __name__ == "__main__":
    main()
