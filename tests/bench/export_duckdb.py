"""The DuckDB rows of tests/bench/export.sh: a count of records by key over
an export's records and over the jsonl `dump-segment` printed for the same
segment, timed in interleaved rounds in one DuckDB connection each; and the
floor of that query: the same count by key over the keys already in an
in-memory DuckDB table (loaded from the export once, before the rounds, not
timed), the most any file format could make of it.

Prints tab-separated lines: `version`, `parquet`, `jsonl` and `memory` (the
seconds of each round), `groups` (the keys counted). Fails when the answers
differ.

Usage: export_duckdb.py --venv DIR --rounds N EXPORT_DIR FILE.jsonl
"""

import argparse
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "export"))
import pinned_venv  # noqa: E402
from duckdb_check import DUCKDB  # noqa: E402

ap = argparse.ArgumentParser()
ap.add_argument("--venv", required=True)
ap.add_argument("--rounds", type=int, default=5)
ap.add_argument("export")
ap.add_argument("jsonl")
args = ap.parse_args()
pinned_venv.ensure("duckdb", "duckdb", DUCKDB, args.venv)
import duckdb  # noqa: E402

records = os.path.join(args.export, "records", "*", "*", "*.parquet")
QUERIES = {
    # The key column is binary in Parquet, a string in the jsonl: each
    # query groups by its own, and both answers are summed the same way.
    "parquet": f"""SELECT count(*), sum(n) FROM (
        SELECT key, count(*) AS n
        FROM read_parquet('{records}', hive_partitioning = true)
        GROUP BY key)""",
    "jsonl": f"""SELECT count(*), sum(n) FROM (
        SELECT r.key AS key, count(*) AS n
        FROM (SELECT unnest(records) AS r
              FROM read_json('{args.jsonl}', format = 'newline_delimited',
                             columns = {{type: 'VARCHAR', records: 'STRUCT(key VARCHAR)[]'}})
              WHERE type = 'batch')
        GROUP BY r.key)""",
}
MEMORY = """SELECT count(*), sum(n) FROM (
    SELECT key, count(*) AS n FROM keys GROUP BY key)"""
memory = duckdb.connect()
memory.execute(f"CREATE TABLE keys AS SELECT key FROM read_parquet('{records}', hive_partitioning = true)")
times = {k: [] for k in [*QUERIES, "memory"]}
answers = {}
for r in range(args.rounds):
    order = list(QUERIES) if r % 2 == 0 else list(reversed(QUERIES))
    for k in order:
        con = duckdb.connect()
        t0 = time.perf_counter()
        answers[k] = con.execute(QUERIES[k]).fetchall()
        times[k].append(time.perf_counter() - t0)
        con.close()
    t0 = time.perf_counter()
    answers["memory"] = memory.execute(MEMORY).fetchall()
    times["memory"].append(time.perf_counter() - t0)
memory.close()
for k in ("jsonl", "memory"):
    if answers["parquet"] != answers[k]:
        sys.exit(f"the answers differ: parquet {answers['parquet']}, {k} {answers[k]}")
print(f"version\t{duckdb.__version__}")
for k, v in times.items():
    print(k + "\t" + "\t".join(f"{t:.6f}" for t in v))
print(f"groups\t{answers['parquet'][0][0]}")
