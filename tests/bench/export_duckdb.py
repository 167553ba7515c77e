"""The DuckDB rows of tests/bench/export.sh: a count of records by key over
an export's records and over the jsonl `dump-segment` printed for the same
segment, timed in interleaved rounds in one DuckDB connection each.

Prints tab-separated lines: `version`, `parquet` and `jsonl` (the seconds of
each round), `groups` (the keys counted). Fails when the two answers differ.

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
times = {k: [] for k in QUERIES}
answers = {}
for r in range(args.rounds):
    order = list(QUERIES) if r % 2 == 0 else list(reversed(QUERIES))
    for k in order:
        con = duckdb.connect()
        t0 = time.perf_counter()
        answers[k] = con.execute(QUERIES[k]).fetchall()
        times[k].append(time.perf_counter() - t0)
        con.close()
if answers["parquet"] != answers["jsonl"]:
    sys.exit(f"the answers differ: parquet {answers['parquet']}, jsonl {answers['jsonl']}")
print(f"version\t{duckdb.__version__}")
for k, v in times.items():
    print(k + "\t" + "\t".join(f"{t:.6f}" for t in v))
print(f"groups\t{answers['parquet'][0][0]}")
