#!/usr/bin/env bash
# tests/bench/offsets.sh -- committed-offsets benchmark for klog.
#
#   1. replay-offsets: an __offsets log of OFFSETS_RECORDS commits (default
#      10,000,000) over OFFSETS_KEYS keys (default 100,000: 1,000 groups x 10
#      topics x 10 partitions), written through `klog produce --format json`
#      in batches of 1,000; median of BENCH_ROUNDS runs of
#      `klog replay-offsets DIR > /dev/null`, as records/s.
#   2. lag over LAG_PARTITIONS partitions (default 1,000) twice: once where
#      each partition holds 20 batches, once 200 batches (10x the bytes), with
#      one committed offset per partition 5 records before its end. The lag
#      command reads each partition's last index entry and the tail after it,
#      so the two times should match.
#
# Generated data lives in a mktemp dir (under BENCH_DIR, default /tmp) and is
# removed at the end unless BENCH_KEEP=1. Prints a markdown table; writes it
# to BENCH_OUT when set. `--smoke` runs tiny sizes once.
set -euo pipefail
cd "$(dirname "$0")/../.."
ROOT=$PWD
RECORDS=${OFFSETS_RECORDS:-10000000}
KEYS=${OFFSETS_KEYS:-100000}
PARTS=${LAG_PARTITIONS:-1000}
ROUNDS=${BENCH_ROUNDS:-5}
if [[ ${1:-} == --smoke ]]; then RECORDS=20000; KEYS=1000; PARTS=20; ROUNDS=1; fi
cargo build --release -q
KLOG=$ROOT/target/release/klog
WORK=$(mktemp -d "${BENCH_DIR:-${TMPDIR:-/tmp}}/klog-offsets-bench.XXXXXX")
[[ ${BENCH_KEEP:-0} == 1 ]] || trap 'rm -rf "$WORK"' EXIT

median() { sort -n | awk '{a[NR]=$1} END {m=(NR%2)?a[(NR+1)/2]:(a[NR/2]+a[NR/2+1])/2; printf "%.3f", m}'; }
timeit() { # timeit(rounds, command...): median wall seconds
  local n=$1; shift
  for _ in $(seq "$n"); do
    local s e
    s=$(date +%s%N); "$@" >/dev/null 2>&1 || true; e=$(date +%s%N)
    awk -v s="$s" -v e="$e" 'BEGIN { printf "%.6f\n", (e - s) / 1e9 }'
  done | median
}

# 1. replay-offsets
gen_commits() {
  python3 - "$1" "$2" <<'PY'
import base64, struct, sys
n, keys = int(sys.argv[1]), int(sys.argv[2])
T = 1700000000000
def s16(s): b = s.encode(); return struct.pack(">h", len(b)) + b
out = sys.stdout
b64 = base64.b64encode
for i in range(n):
    k = i % keys
    key = struct.pack(">h", 1) + s16("group-%d" % (k // 100)) + s16("topic-%d" % (k % 10)) + struct.pack(">i", (k // 10) % 10)
    val = struct.pack(">hqi", 3, i, 0) + s16("") + struct.pack(">q", T + i)
    out.write('{"key":{"base64":"%s"},"value":{"base64":"%s"},"timestamp":%d}\n' % (b64(key).decode(), b64(val).decode(), T + i))
PY
}
s=$(date +%s)
gen_commits "$RECORDS" "$KEYS" | "$KLOG" produce "$WORK/offsets" --topic __offsets --format json --batch-size 1000 >/dev/null
gen_s=$(( $(date +%s) - s ))
cat "$WORK"/offsets/__offsets-0/*.log >/dev/null
replay_s=$(timeit "$ROUNDS" "$KLOG" replay-offsets "$WORK/offsets")
replay_rate=$(awk -v n="$RECORDS" -v t="$replay_s" 'BEGIN { printf "%.0f", n / t }')
replay_bytes=$(du -cb "$WORK"/offsets/__offsets-0/*.log | tail -1 | cut -f1)

# 2. lag over many partitions of two sizes
make_lag_dir() { # make_lag_dir(dir, batches per partition)
  local dir=$1 batches=$2
  seq 1 $((batches * 10)) | sed 's/^/value-/' |
    "$KLOG" produce "$dir" --topic t --partition 0 --batch-size 10 --timestamp-ms 1700000000000 >/dev/null
  for p in $(seq 1 $((PARTS - 1))); do cp -r "$dir/t-0" "$dir/t-$p"; done
  python3 - "$PARTS" $((batches * 10 - 5)) <<'PY' | "$KLOG" produce "$dir" --topic __offsets --format json --batch-size 1000 >/dev/null
import base64, struct, sys
parts, committed = int(sys.argv[1]), int(sys.argv[2])
def s16(s): b = s.encode(); return struct.pack(">h", len(b)) + b
for p in range(parts):
    key = struct.pack(">h", 1) + s16("g") + s16("t") + struct.pack(">i", p)
    val = struct.pack(">hqi", 3, committed, 0) + s16("") + struct.pack(">q", 1700000000000)
    print('{"key":{"base64":"%s"},"value":{"base64":"%s"}}' % (base64.b64encode(key).decode(), base64.b64encode(val).decode()))
PY
}
make_lag_dir "$WORK/lag-small" 20
make_lag_dir "$WORK/lag-large" 200
small_bytes=$(du -sb "$WORK/lag-small" | cut -f1)
large_bytes=$(du -sb "$WORK/lag-large" | cut -f1)
cat "$WORK"/lag-small/*/*.log "$WORK"/lag-large/*/*.log >/dev/null
lag_small=$(timeit "$ROUNDS" "$KLOG" lag "$WORK/lag-small")
lag_large=$(timeit "$ROUNDS" "$KLOG" lag "$WORK/lag-large")

table=$(cat <<MD
# klog committed-offsets benchmark

- Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC'); nproc = $(nproc); $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
- klog $(git rev-parse --short HEAD 2>/dev/null || echo '?'), release build; median of $ROUNDS run(s)

| measurement | input | median s | rate |
|---|---|---:|---:|
| \`klog replay-offsets DIR\` | $RECORDS commits over $KEYS keys ($((replay_bytes / 1048576)) MiB; generated in ${gen_s} s) | $replay_s | $replay_rate records/s |
| \`klog lag DIR\` | $PARTS partitions x 20 batches ($((small_bytes / 1048576)) MiB) | $lag_small | |
| \`klog lag DIR\` | $PARTS partitions x 200 batches ($((large_bytes / 1048576)) MiB) | $lag_large | ratio large/small: $(awk -v a="$lag_large" -v b="$lag_small" 'BEGIN { printf "%.2f", a / b }') |
MD
)
echo "$table"
if [[ -n ${BENCH_OUT:-} ]]; then echo "$table" >"$BENCH_OUT"; fi
