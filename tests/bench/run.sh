#!/usr/bin/env bash
# tests/bench/run.sh -- read-path benchmark for klog against `cat`.
#
# What it does, end to end:
#   1. `cargo build --release`, then generates ONE segment of ~BENCH_BYTES
#      through klog's own append path: a deterministic python3 generator
#      (fixed seed, keys k<N>, 100-byte alphanumeric values) streams
#      `k<N> <value>` lines into
#        target/release/klog produce DIR --topic bench --key-separator ' '
#          --batch-size 500 --timestamp-ms 1700000000000 --segment-bytes <BENCH_BYTES+64MiB>
#      and checks that exactly one .log segment came out, that `klog verify-crc`
#      is clean, and that the record count matches what was generated.
#      Also builds tests/bench/crc_floor.rs, the CRC-32C floor: one thread
#      reads the file once and CRC-32Cs every byte with the crc32c crate klog
#      uses (no framing, no records). Cargo.toml has no target for it, so it
#      is compiled with `rustc -C opt-level=3` against the crc32c rlib of the
#      release build (located from `cargo build --message-format=json`); if
#      that fails the floor is left out and the rest still runs.
#   2. Warms the page cache (`cat FILE` once), then times, interleaved in one
#      run (command order rotated every round), BENCH_ROUNDS rounds of:
#        cat FILE > /dev/null
#        crc_floor FILE > /dev/null                        (read + CRC-32C)
#        klog verify-crc FILE
#        klog dump-segment --format json FILE > /dev/null   (records included)
#      with hyperfine (one `--runs 1 -N --output=null --export-json` call per
#      round, medians computed here) when it is installed, else with a python3 harness
#      (perf_counter_ns around fork/exec/wait). Then one extra run of each
#      command for peak RSS: `/usr/bin/time -f %M` if available, else the
#      child's rusage from python3 os.wait4().
#   3. Prints a markdown table (command, median s, ratio to cat, ratio to the
#      CRC-32C floor, MB/s with MB = 10^6 bytes, peak RSS MiB, min-max s) with
#      the date, nproc, CPU model, load average, file size and record count,
#      and writes it to BENCH_OUT.
#
# Usage:
#   tests/bench/run.sh            # full run (default 1 GiB, 5 rounds)
#   tests/bench/run.sh --smoke    # 8 MiB, 1 round; quick end-to-end check
#   tests/bench/run.sh --help
#
# Environment:
#   BENCH_BYTES      target segment size in bytes (default 1073741824; must stay
#                    below 2 GiB - 64 MiB because index positions are i32)
#   BENCH_ROUNDS     timed rounds per command (default 5)
#   BENCH_DIR        parent of the work dir (default ${TMPDIR:-/tmp}); a fresh
#                    mktemp dir is created inside it. Must be outside the repo.
#   BENCH_KEEP=1     keep the work dir (generated data) instead of deleting it
#   BENCH_OUT        markdown output (default tests/bench/last-run.md; with
#                    --smoke nothing is written unless BENCH_OUT is set, so a
#                    smoke run never overwrites the published numbers)
#   BENCH_SEED       generator seed (default 42)
#   BENCH_HYPERFINE=0  ignore hyperfine even if installed (use the harness)
#
# Needs: bash, cargo, python3, cat, nproc. Optional: rustc (the CRC floor),
# hyperfine, GNU time
# (/usr/bin/time). Nothing is installed by this script; on Debian/Ubuntu:
#   sudo apt-get update && sudo apt-get install -y hyperfine time
#
# Notes: timings are wall-clock on a warm page cache, so this measures CPU
# cost of parsing/CRC/JSON, not disk. On a small or busy machine (e.g. 2 cores
# with a compiler running) expect noise; the min-max column shows how much.
# Generating the input calls fdatasync once per 500-record batch.
set -euo pipefail

die() { echo "run.sh: $*" >&2; exit 2; }
log() { echo "[bench $(date +%H:%M:%S)] $*" >&2; }

SMOKE=0
for arg in "$@"; do
    case "$arg" in
        --smoke) SMOKE=1 ;;
        -h|--help) sed -n '2,/^set -euo pipefail/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
        *) die "unknown argument: $arg (try --help)" ;;
    esac
done

SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
REPO=$(cd "$SCRIPT_DIR/../.." && pwd)
[[ -f "$REPO/Cargo.toml" ]] || die "cannot find Cargo.toml at $REPO"

if (( SMOKE )); then
    BENCH_BYTES=${BENCH_BYTES:-8388608}
    BENCH_ROUNDS=1
    BENCH_OUT=${BENCH_OUT:-}
else
    BENCH_BYTES=${BENCH_BYTES:-1073741824}
    BENCH_ROUNDS=${BENCH_ROUNDS:-5}
    BENCH_OUT=${BENCH_OUT-$REPO/tests/bench/last-run.md}
fi
BENCH_SEED=${BENCH_SEED:-42}
BENCH_KEEP=${BENCH_KEEP:-0}
BENCH_HYPERFINE=${BENCH_HYPERFINE:-1}

[[ "$BENCH_BYTES" =~ ^[0-9]+$ ]] && (( BENCH_BYTES >= 65536 )) || die "BENCH_BYTES must be an integer >= 65536"
[[ "$BENCH_ROUNDS" =~ ^[0-9]+$ ]] && (( BENCH_ROUNDS >= 1 )) || die "BENCH_ROUNDS must be an integer >= 1"
SEGMENT_BYTES=$(( BENCH_BYTES + 64 * 1024 * 1024 ))
(( SEGMENT_BYTES <= 2147483647 )) || die "BENCH_BYTES too large: one segment must stay below 2 GiB (i32 index positions)"

# ---- tools -----------------------------------------------------------------
command -v cargo >/dev/null || die "cargo not found (install Rust: https://rustup.rs)"
command -v python3 >/dev/null || die "python3 not found (e.g. apt-get install -y python3); it generates the input and computes medians"
HYPERFINE=""
if [[ "$BENCH_HYPERFINE" != 0 ]] && command -v hyperfine >/dev/null; then
    HYPERFINE=$(command -v hyperfine)
else
    [[ "$BENCH_HYPERFINE" == 0 ]] || log "hyperfine not found: using the python3 harness (to get it: apt-get install -y hyperfine)"
fi
GNU_TIME=""
if [[ -x /usr/bin/time ]] && /usr/bin/time -f %M -o /dev/null true 2>/dev/null; then
    GNU_TIME=/usr/bin/time
else
    log "GNU time not found: peak RSS from python3 os.wait4 (to get it: apt-get install -y time)"
fi

# ---- work dir (outside the repo) -------------------------------------------
PARENT=${BENCH_DIR:-${TMPDIR:-/tmp}}
mkdir -p "$PARENT"
PARENT=$(cd "$PARENT" && pwd -P)
REPO_REAL=$(cd "$REPO" && pwd -P)
case "$PARENT/" in
    "$REPO_REAL"/*) die "BENCH_DIR ($PARENT) is inside the repository; generated data must live outside it" ;;
esac
WORK=$(mktemp -d "$PARENT/klog-bench.XXXXXX")
cleanup() {
    if [[ "$BENCH_KEEP" == 1 ]]; then
        log "kept work dir: $WORK"
    else
        rm -rf -- "$WORK"
    fi
}
trap cleanup EXIT

avail_kb=$(df -Pk "$WORK" | awk 'NR==2 {print $4}')
(( avail_kb * 1024 > BENCH_BYTES * 11 / 10 )) || die "not enough free space in $PARENT for $BENCH_BYTES bytes"

START_TS=$(date +%s)
LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# ---- build -----------------------------------------------------------------
log "cargo build --release"
(cd "$REPO" && cargo build --release --quiet) || die "cargo build --release failed"
KLOG="$REPO/target/release/klog"
[[ -x "$KLOG" ]] || die "no binary at $KLOG"

# ---- the CRC-32C floor -------------------------------------------------------
CRC_FLOOR=""
CRC_RLIB=$(cd "$REPO" && cargo build --release --message-format=json 2>/dev/null | python3 -c '
import json, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m["target"]["name"] == "crc32c":
        print(next(f for f in m["filenames"] if f.endswith(".rlib")))
        break') || CRC_RLIB=""
if [[ -n "$CRC_RLIB" ]] && (cd "$REPO" && rustc --edition 2021 -C opt-level=3 \
        --extern "crc32c=$CRC_RLIB" -L "dependency=$(dirname "$CRC_RLIB")" \
        -o "$WORK/crc_floor" "$SCRIPT_DIR/crc_floor.rs") 2> "$WORK/crc_floor.err"; then
    CRC_FLOOR="$WORK/crc_floor"
else
    cat "$WORK/crc_floor.err" >&2 2>/dev/null || true
    log "could not build tests/bench/crc_floor.rs against the crc32c rlib ('${CRC_RLIB:-not found}'): the CRC-32C floor is left out"
fi

# ---- generate input through klog produce -----------------------------------
# Stops once the on-disk size estimate (Kafka v2 record/batch framing, all
# timestamps equal so deltas are 0) reaches BENCH_BYTES. Values are 100-byte
# slices of a seeded alphanumeric pool, so no value contains the separator.
GEN_PY='
import random, sys
target, seed, batch, summary = int(sys.argv[1]), int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
rng = random.Random(seed)
alpha = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
pool = bytes(rng.choice(alpha) for _ in range(1 << 20))
hi = len(pool) - 100
rand = rng.random
def varint_len(n):
    n = (n << 1) ^ (n >> 63)  # zigzag
    k = 1
    while n >= 0x80:
        n >>= 7; k += 1
    return k
out = sys.stdout.buffer
est = 0
n = 0
chunk = []
while est < target:
    od = n % batch
    if od == 0:
        est += 61  # record batch header
    key = b"k%d" % n
    o = int(rand() * hi)
    chunk.append(key + b" " + pool[o:o + 100] + b"\n")
    body = 1 + 1 + varint_len(od) + varint_len(len(key)) + len(key) + varint_len(100) + 100 + 1
    est += varint_len(body) + body
    n += 1
    if len(chunk) == 20000:
        out.write(b"".join(chunk)); chunk = []
out.write(b"".join(chunk))
out.flush()
with open(summary, "w") as f:
    f.write("%d %d\n" % (n, est))
'
DATA="$WORK/data"
log "generating ~$BENCH_BYTES bytes through klog produce (seed $BENCH_SEED) into $DATA"
gen_t0=$(date +%s%N)
python3 -c "$GEN_PY" "$BENCH_BYTES" "$BENCH_SEED" 500 "$WORK/gen.txt" \
    | "$KLOG" produce "$DATA" --topic bench --key-separator ' ' --batch-size 500 \
        --timestamp-ms 1700000000000 --segment-bytes "$SEGMENT_BYTES" > "$WORK/produce.out" \
    || die "generator | klog produce failed"
gen_t1=$(date +%s%N)
GEN_SECS=$(python3 -c "print(f'{($gen_t1 - $gen_t0) / 1e9:.1f}')")
read -r GEN_RECORDS GEN_EST < "$WORK/gen.txt"

mapfile -t LOGS < <(find "$DATA/bench-0" -maxdepth 1 -name '*.log' | sort)
(( ${#LOGS[@]} == 1 )) || die "expected exactly one segment, got ${#LOGS[@]}: ${LOGS[*]}"
FILE=${LOGS[0]}
FILE_BYTES=$(stat -c %s "$FILE")

VERIFY_JSON=$("$KLOG" verify-crc --format json "$FILE") || die "klog verify-crc found problems: $VERIFY_JSON"
read -r RECORDS BATCHES < <(python3 -c '
import json, sys
c = json.loads(sys.argv[1])["checked"]
print(c["records"], c["batches"])' "$VERIFY_JSON")
[[ "$RECORDS" == "$GEN_RECORDS" ]] || die "segment has $RECORDS records, generator wrote $GEN_RECORDS"
log "segment: $FILE_BYTES bytes (estimate $GEN_EST), $RECORDS records, $BATCHES batches; generated in ${GEN_SECS}s"
if [[ -n "$CRC_FLOOR" ]]; then
    floor_out=$("$CRC_FLOOR" "$FILE") || die "crc_floor failed"
    [[ "$floor_out" == "$FILE_BYTES bytes,"* ]] || die "crc_floor read ${floor_out%% *} bytes, the file has $FILE_BYTES"
fi

# ---- warm up, then time interleaved rounds ---------------------------------
log "warming the page cache"
cat "$FILE" > /dev/null

qF=$(printf %q "$FILE"); qK=$(printf %q "$KLOG")
# hyperfine runs these with --shell=none --output=null, i.e. stdout is /dev/null
NAMES=(cat); SHOWN=("cat FILE > /dev/null"); HF_CMDS=("cat $qF")
if [[ -n "$CRC_FLOOR" ]]; then
    NAMES+=(crc-floor); SHOWN+=("crc_floor FILE > /dev/null"); HF_CMDS+=("$(printf %q "$CRC_FLOOR") $qF")
fi
NAMES+=(verify-crc dump-json)
SHOWN+=("klog verify-crc FILE" "klog dump-segment --format json FILE > /dev/null")
HF_CMDS+=("$qK verify-crc $qF" "$qK dump-segment --format json $qF")
NCMD=${#NAMES[@]}
TIMES="$WORK/times.tsv"   # name <TAB> seconds, one line per run
: > "$TIMES"

if [[ -n "$HYPERFINE" ]]; then
    TOOL="hyperfine $("$HYPERFINE" --version | awk '{print $2}') (one --runs 1 --shell=none --output=null call per round)"
else
    TOOL="python3 harness (perf_counter_ns around fork/exec/wait, no shell)"
fi
log "timing $BENCH_ROUNDS interleaved rounds with $TOOL"

HARNESS_PY='
import os, subprocess, sys, time
name, out = sys.argv[1], sys.argv[2]
argv = sys.argv[3:]
t0 = time.perf_counter_ns()
p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
_, status, _ = os.wait4(p.pid, 0)
t1 = time.perf_counter_ns()
p.returncode = os.waitstatus_to_exitcode(status)
if p.returncode != 0:
    sys.exit("%s exited %d" % (" ".join(argv), p.returncode))
with open(out, "a") as f:
    f.write("%s\t%.9f\n" % (name, (t1 - t0) / 1e9))
'
argv_of() {  # command index -> argv (stdout goes to /dev/null in the harness)
    case "${NAMES[$1]}" in
        cat) CMD=(cat "$FILE") ;;
        crc-floor) CMD=("$CRC_FLOOR" "$FILE") ;;
        verify-crc) CMD=("$KLOG" verify-crc "$FILE") ;;
        dump-json) CMD=("$KLOG" dump-segment --format json "$FILE") ;;
    esac
}

for (( r = 0; r < BENCH_ROUNDS; r++ )); do
    order=()
    for (( i = 0; i < NCMD; i++ )); do order+=("$(( (i + r) % NCMD ))"); done
    if [[ -n "$HYPERFINE" ]]; then
        hf_args=()
        for i in "${order[@]}"; do hf_args+=(-n "${NAMES[$i]}" "${HF_CMDS[$i]}"); done
        "$HYPERFINE" --runs 1 --shell=none --output=null --style none --export-json "$WORK/hf-$r.json" "${hf_args[@]}" \
            > "$WORK/hf-$r.out" 2>&1 || { cat "$WORK/hf-$r.out" >&2; die "hyperfine failed in round $((r + 1))"; }
        python3 -c '
import json, sys
for res in json.load(open(sys.argv[1]))["results"]:
    for t in res["times"]:
        print("%s\t%.9f" % (res["command"], t))' "$WORK/hf-$r.json" >> "$TIMES"
    else
        for i in "${order[@]}"; do
            argv_of "$i"
            python3 -c "$HARNESS_PY" "${NAMES[$i]}" "$TIMES" "${CMD[@]}" || die "${SHOWN[$i]} failed"
        done
    fi
    log "round $((r + 1))/$BENCH_ROUNDS: $(awk -F'\t' -v n="$NCMD" '{a[NR]=$1"="sprintf("%.3fs",$2)} END {for (i=NR-n+1;i<=NR;i++) printf "%s ", a[i]}' "$TIMES")"
done

# ---- peak RSS (one extra run each) -----------------------------------------
RSS_PY='
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("%s failed" % " ".join(sys.argv[1:]))
print(ru.ru_maxrss)  # KiB on Linux
'
RSS="$WORK/rss.tsv"
: > "$RSS"
for (( i = 0; i < NCMD; i++ )); do
    argv_of "$i"
    if [[ -n "$GNU_TIME" ]]; then
        "$GNU_TIME" -f %M -o "$WORK/rss.one" "${CMD[@]}" > /dev/null || die "${SHOWN[$i]} failed under $GNU_TIME"
        kib=$(tail -n 1 "$WORK/rss.one")
    else
        kib=$(python3 -c "$RSS_PY" "${CMD[@]}") || die "${SHOWN[$i]} failed"
    fi
    printf '%s\t%s\n' "${NAMES[$i]}" "$kib" >> "$RSS"
done
RSS_TOOL=$([[ -n "$GNU_TIME" ]] && echo "/usr/bin/time -f %M" || echo "python3 os.wait4 ru_maxrss")

# ---- report ------------------------------------------------------------------
CPU_MODEL=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
CPU_MODEL=${CPU_MODEL:-unknown}
NPROC=$(nproc)
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
GIT_REV=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo "?")
if [[ "$GIT_REV" != "?" ]] && [[ -n "$(cd "$REPO" && git status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null)" ]]; then
    GIT_REV="$GIT_REV + uncommitted changes"
fi
KLOG_VERSION=$("$KLOG" --version 2>/dev/null || echo klog)
ELAPSED=$(( $(date +%s) - START_TS ))

REPORT="$WORK/report.md"
SHOWN_TSV="$WORK/shown.tsv"
for (( i = 0; i < NCMD; i++ )); do printf '%s\t%s\n' "${NAMES[$i]}" "${SHOWN[$i]}"; done > "$SHOWN_TSV"
python3 - "$TIMES" "$RSS" "$FILE_BYTES" "$RECORDS" "$SHOWN_TSV" > "$WORK/table.md" <<'PY'
import statistics, sys
times_path, rss_path, size, records = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
shown = dict(l.rstrip("\n").split("\t", 1) for l in open(sys.argv[5]))
times = {}
for line in open(times_path):
    name, t = line.rstrip("\n").split("\t")
    times.setdefault(name, []).append(float(t))
rss = dict(l.rstrip("\n").split("\t") for l in open(rss_path))
med = {n: max(statistics.median(v), 1e-6) for n, v in times.items()}
floor = med.get("crc-floor")
print("| command | median s | ratio to cat | ratio to CRC floor | MB/s | peak RSS MiB | min–max s |")
print("|---|---:|---:|---:|---:|---:|---:|")
for n in shown:
    m = med[n]
    print("| `%s` | %.3f | %.2f× | %s | %.0f | %.1f | %.3f–%.3f |" % (
        shown[n], m, m / med["cat"], "%.2f×" % (m / floor) if floor else "–",
        size / 1e6 / m, int(rss[n]) / 1024, min(times[n]), max(times[n])))
print()
if floor:
    print("CRC floor: `crc_floor` (tests/bench/crc_floor.rs) reads the file once on one thread and CRC-32Cs every byte with the crc32c crate klog uses; no framing, no records.")
    print()
print("Ratios (medians): verify-crc %.2f× cat%s." % (
    med["verify-crc"] / med["cat"], ", %.2f× the CRC floor" % (med["verify-crc"] / floor) if floor else ""))
print()
print("Records/s (median): verify-crc %.1f M/s, dump-segment JSON %.2f M/s." % (
    records / med["verify-crc"] / 1e6, records / med["dump-json"] / 1e6))
PY

{
    echo "# klog read-path benchmark"
    echo
    echo "Generated by \`tests/bench/run.sh$( ((SMOKE)) && echo ' --smoke')\`; do not edit by hand."
    echo
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- Machine: nproc = $NPROC, CPU: $CPU_MODEL; load average $LOADAVG_START at start, $LOADAVG_END at end"
    echo "- klog: $KLOG_VERSION, release build, git $GIT_REV"
    echo "- Input: one segment of $FILE_BYTES bytes ($(python3 -c "print(f'{$FILE_BYTES / 2**20:.1f}')") MiB), $RECORDS records in $BATCHES batches (uncompressed, keys \`k<N>\`, 100-byte values, seed $BENCH_SEED), written by \`klog produce --batch-size 500\` in ${GEN_SECS} s (one fdatasync per batch)"
    echo "- Method: page cache warmed with one \`cat\`; $BENCH_ROUNDS interleaved round(s) (order rotated each round), median shown; timed with $TOOL. MB = 10^6 bytes. Peak RSS from one extra run with $RSS_TOOL."
    echo "- Whole script (build, generation, timing): ${ELAPSED} s"
    echo
    cat "$WORK/table.md"
} > "$REPORT"

echo
cat "$REPORT"
if [[ -n "$BENCH_OUT" ]]; then
    mkdir -p "$(dirname "$BENCH_OUT")"
    cp "$REPORT" "$BENCH_OUT"
    log "wrote $BENCH_OUT"
fi
log "done in $(( $(date +%s) - START_TS )) s"
