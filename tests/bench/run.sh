#!/usr/bin/env bash
# tests/bench/run.sh -- read-path benchmark for klog, in one run.
#
# What it does, end to end:
#   1. `cargo build --release` of klog and of four Cargo examples kept in
#      tests/bench/ (declared as [[example]]s at the end of Cargo.toml):
#        crc_floor              read + CRC-32C of every byte, one thread, the
#                               crc32c crate klog uses: the floor for verify-crc
#        header_floor           every v2 batch header of one topic's segments,
#                               one positioned read each, record counts added
#                               up: the floor for lag's pending count
#        klog_decode            SegmentReader + BatchView::check_crc + records():
#                               every record decoded by kaen_log
#        kafka_protocol_decode  the same file decoded batch by batch by the
#                               kafka-protocol crate's RecordBatchDecoder::decode
#                               (which checks the CRC too)
#      An example that does not build is left out with its rows; the rest runs.
#   2. Generates its inputs through klog's own append path: a deterministic
#      python3 generator (fixed seed, keys k<N>, 100-byte alphanumeric values
#      cut from a seeded pool) streams `k<N> <value>` lines into
#        klog produce DIR --topic T --key-separator ' ' --batch-size 500
#          --timestamp-ms 1700000000000 [...]
#      a. ONE segment of ~BENCH_BYTES, written as an idempotent producer
#         (--producer-id 1 --producer-epoch 0 --base-sequence 0) so that
#         `verify-crc --deep` has a real producer-state pass to do (each
#         batch continues the sequence: 0, 500, 1000, ...). Checked: one .log
#         segment, `verify-crc` clean, record count as generated, both
#         decoders agree; the --deep row is timed only if `verify-crc --deep`
#         is clean (klog before 57c5a8a repeated --base-sequence on every
#         batch, which --deep reports as duplicate sequences).
#      b. For each size in BENCH_JOB_SIZES (MiB; default 8 16 64), a data
#         directory of BENCH_PARTITIONS (64) partitions of one segment of
#         that size: one partition is produced, the others are copies of its
#         folder. Below and above the 16 MiB where SegmentReader may read
#         ahead on threads, so `--jobs 2` is measured against `--jobs 1`
#         with klog's thread budget deciding who reads ahead. The same
#         partitions are also split into two data directories of 32 (hard
#         links), for a yardstick: two klog processes started at once, one
#         on each, which is as fast as two jobs can be on the machine then.
#      c. One segment per codec (none gzip snappy lz4 zstd) from the same
#         ~BENCH_CODEC_BYTES of input (size estimated uncompressed), via
#         `klog produce --compression CODEC`.
#      d. An offsets log of OFFSETS_RECORDS (10,000,000) commits over
#         OFFSETS_KEYS (100,000) keys (1,000 groups x 10 topics x 10
#         partitions), OffsetCommit records written by
#         `klog produce --input-format json` in batches of 1,000.
#      e. A data directory of LAG_PARTITIONS (1,000) partitions of
#         ~LAG_PARTITION_BYTES (2 MiB: 2 GB in all) whose offsets log holds two
#         groups: `near` committed 5 records before each partition's end,
#         `far` at offset 5 (2 GB behind).
#      f. (after the timing, unless BENCH_MEMORY=0) memory: a partition of
#         ~MEM_BYTES (10 GiB) made of copies of the `none` codec segment with
#         their base offsets moved on (baseOffset is outside the CRC), and a
#         data directory of MEM_PARTITIONS (10,000) small partitions; each with
#         an offsets log holding a commit for every partition. Every reading
#         command runs once on each, for its peak RSS, wall and CPU time.
#   3. Warms the page cache (`cat` of every segment), then times, interleaved
#      in one run (every command once per round, the order rotated every
#      round), BENCH_ROUNDS rounds of:
#        a. on the one segment: cat, crc_floor, klog verify-crc FILE,
#           klog verify-crc PARTITION, klog verify-crc --deep PARTITION,
#           klog dump-segment --format json FILE > /dev/null, klog_decode FILE,
#           klog_decode --no-crc FILE, klog_decode pinned to one CPU
#           (taskset), kafka_protocol_decode FILE
#           (--deep runs its producer-state pass per partition only: given a
#           FILE it checks what plain verify-crc checks, so it is timed on
#           the partition folder, next to plain verify-crc on the same folder)
#           and, pinned to one CPU (taskset -c 0): crc_floor FILE and
#           klog verify-crc FILE; klog dump-segment --format jsonl FILE
#        b. for each partition size: cat of all segments, klog verify-crc
#           --jobs 1 DIR, --jobs 2 DIR, and DIR (default: one job per core),
#           and the two-process yardstick (bash starting both)
#           and, when java and mvn are installed, Kafka's own kafka-dump-log
#           (DumpLogSegments --deep-iteration --print-data-log
#           --files FILE, from the Kafka release pinned in tests/kafka/pom.xml,
#           resolved by mvn into ~/.m2): the peer a Kafka operator uses today.
#           Its record count is checked once before timing. It prints every
#           record as text from a JVM, so on the full 1 GiB segment it is by
#           far the slowest row: expect it to add minutes (BENCH_KAFKA=0
#           leaves it out).
#        c. per codec: klog dump-segment --format json FILE > /dev/null,
#           klog_decode FILE, kafka_protocol_decode FILE
#        d. klog replay-offsets DIR on the offsets log, and with --decoders
#           plain (the schema tables alone, no fast path)
#        e. klog lag --group near DIR and --group far DIR, at both
#           isolation levels, and header_floor DIR t (what the far group's
#           pending count reads at least: every batch header)
#      with hyperfine (one `--runs 1 --shell=none --output=null --export-json`
#      call per round with every command; medians computed here) when it is
#      installed, else with a python3 harness (perf_counter_ns around
#      fork/exec/wait). Wall time and CPU time (user + system) are kept for
#      every run. Then one extra run of each command for peak RSS:
#      `/usr/bin/time -f %M` if available, else the child's rusage from
#      python3 os.wait4().
#   4. Writes a markdown report (date, nproc, CPU model, load average, inputs;
#      one table per part with medians, ratios, MB/s with MB = 10^6 bytes,
#      records/s, CPU s, peak RSS, min-max; then each target met or not) to
#      BENCH_OUT and prints it.
#
# Usage:
#   tests/bench/run.sh            # full run (1 GiB segment, 64 partitions of
#                                 # 8, 16 and 64 MiB, 5 x 128 MiB codecs,
#                                 # 10 M commits, 1,000 x 2 MiB for lag, 3
#                                 # rounds; 10 GiB and 10,000 partitions for
#                                 # memory: about 25 minutes on 2 cores and
#                                 # 25 GiB of disk)
#   tests/bench/run.sh --smoke    # small inputs, 1 round; quick end-to-end check
#   tests/bench/run.sh --help
#
# Environment:
#   BENCH_BYTES      size of the one segment in bytes (default 1073741824; must
#                    stay below 2 GiB - 64 MiB because index positions are i32)
#   BENCH_PARTITIONS partitions in each --jobs data directory (default 64)
#   BENCH_JOB_SIZES  partition sizes in MiB for the --jobs rows (default "8 16 64")
#   OFFSETS_RECORDS, OFFSETS_KEYS  the offsets log (default 10000000, 100000)
#   LAG_PARTITIONS, LAG_PARTITION_BYTES  the lag directory (default 1000, 2097152)
#   MEM_BYTES, MEM_PARTITIONS  the memory inputs (default 10737418240, 10000)
#   BENCH_MEMORY=0   leave out the memory part (f)
#   BENCH_CODEC_BYTES  uncompressed bytes per codec segment (default 134217728)
#   BENCH_CODECS     codecs to measure (default "none gzip snappy lz4 zstd")
#   BENCH_ROUNDS     timed rounds (default 7: medians of seven, for a noisy machine)
#   BENCH_DIR        parent of the work dir (default ${TMPDIR:-/tmp}); a fresh
#                    mktemp dir is created inside it. Must be outside the repo.
#   BENCH_KEEP=1     keep the work dir (generated data) instead of deleting it
#   BENCH_OUT        markdown output (default tests/bench/last-run.md; with
#                    --smoke nothing is written unless BENCH_OUT is set, so a
#                    smoke run never overwrites the published numbers)
#   BENCH_SEED       generator seed (default 42)
#   BENCH_HYPERFINE=0  ignore hyperfine even if installed (use the harness)
#   BENCH_KAFKA=0    leave out the kafka-dump-log row even if java and mvn exist
#   BENCH_KLOG_BEFORE  another klog binary (e.g. a build of an earlier commit):
#                    adds its `verify-crc --jobs 2 DIR` to each --jobs table, in
#                    the same interleaved rounds, labelled BENCH_BEFORE_LABEL
#
# Needs: bash, cargo, python3, cat, nproc, about 25 GiB free in BENCH_DIR
# (and 12 GiB of page cache for the timed inputs). Optional: hyperfine, GNU time (/usr/bin/time),
# taskset (the one-CPU decode row), java 17+ and mvn (the kafka-dump-log row;
# Maven Central reachable the first time). Nothing is installed by this script; on
# Debian/Ubuntu:
#   sudo apt-get update && sudo apt-get install -y hyperfine time
#
# Notes: timings are wall-clock on a warm page cache, so this measures CPU
# cost of parsing/CRC/JSON/decompression, not disk. On a small or busy
# machine (e.g. 2 cores with a compiler running) expect noise; the min-max
# column shows how much, and the load average is in the report. Generating
# the inputs calls fdatasync once per 500-record batch.
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
    BENCH_PARTITIONS=${BENCH_PARTITIONS:-4}
    BENCH_JOB_SIZES=${BENCH_JOB_SIZES:-1 2}
    OFFSETS_RECORDS=${OFFSETS_RECORDS:-20000}
    OFFSETS_KEYS=${OFFSETS_KEYS:-1000}
    LAG_PARTITIONS=${LAG_PARTITIONS:-20}
    LAG_PARTITION_BYTES=${LAG_PARTITION_BYTES:-262144}
    MEM_BYTES=${MEM_BYTES:-67108864}
    MEM_PARTITIONS=${MEM_PARTITIONS:-50}
    BENCH_CODEC_BYTES=${BENCH_CODEC_BYTES:-2097152}
    BENCH_ROUNDS=1
    BENCH_OUT=${BENCH_OUT:-}
else
    BENCH_BYTES=${BENCH_BYTES:-1073741824}
    BENCH_PARTITIONS=${BENCH_PARTITIONS:-64}
    BENCH_JOB_SIZES=${BENCH_JOB_SIZES:-8 16 64}
    OFFSETS_RECORDS=${OFFSETS_RECORDS:-10000000}
    OFFSETS_KEYS=${OFFSETS_KEYS:-100000}
    LAG_PARTITIONS=${LAG_PARTITIONS:-1000}
    LAG_PARTITION_BYTES=${LAG_PARTITION_BYTES:-2097152}
    MEM_BYTES=${MEM_BYTES:-10737418240}
    MEM_PARTITIONS=${MEM_PARTITIONS:-10000}
    BENCH_CODEC_BYTES=${BENCH_CODEC_BYTES:-134217728}
    BENCH_ROUNDS=${BENCH_ROUNDS:-7}
    BENCH_OUT=${BENCH_OUT-$REPO/tests/bench/last-run.md}
fi
BENCH_CODECS=${BENCH_CODECS:-none gzip snappy lz4 zstd}
BENCH_SEED=${BENCH_SEED:-42}
BENCH_KEEP=${BENCH_KEEP:-0}
BENCH_HYPERFINE=${BENCH_HYPERFINE:-1}
BENCH_KAFKA=${BENCH_KAFKA:-1}
BENCH_KLOG_BEFORE=${BENCH_KLOG_BEFORE:-}
BENCH_BEFORE_LABEL=${BENCH_BEFORE_LABEL:-before}
BENCH_MEMORY=${BENCH_MEMORY:-1}

is_int() { [[ "$1" =~ ^[0-9]+$ ]]; }
is_int "$BENCH_BYTES" && (( BENCH_BYTES >= 65536 )) || die "BENCH_BYTES must be an integer >= 65536"
is_int "$BENCH_ROUNDS" && (( BENCH_ROUNDS >= 1 )) || die "BENCH_ROUNDS must be an integer >= 1"
is_int "$BENCH_PARTITIONS" && (( BENCH_PARTITIONS >= 2 )) || die "BENCH_PARTITIONS must be an integer >= 2"
for v in OFFSETS_RECORDS OFFSETS_KEYS LAG_PARTITIONS LAG_PARTITION_BYTES MEM_BYTES MEM_PARTITIONS; do
    is_int "${!v}" && (( ${!v} >= 1 )) || die "$v must be a positive integer"
done
for m in $BENCH_JOB_SIZES; do is_int "$m" && (( m >= 1 )) || die "BENCH_JOB_SIZES: $m is not a size in MiB"; done
is_int "$BENCH_CODEC_BYTES" && (( BENCH_CODEC_BYTES >= 65536 )) || die "BENCH_CODEC_BYTES must be an integer >= 65536"
SEGMENT_BYTES=$(( BENCH_BYTES + 64 * 1024 * 1024 ))
(( SEGMENT_BYTES <= 2147483647 )) || die "BENCH_BYTES too large: one segment must stay below 2 GiB (i32 index positions)"
for c in $BENCH_CODECS; do
    case "$c" in none|gzip|snappy|lz4|zstd) ;; *) die "unknown codec in BENCH_CODECS: $c" ;; esac
done

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
TASKSET=""
if command -v taskset >/dev/null && taskset -c 0 true 2>/dev/null; then
    TASKSET=$(command -v taskset)
    ONE_CPU=$(python3 -c 'import os; print(min(os.sched_getaffinity(0)))')
else
    log "taskset not found: the one-CPU klog_decode row is left out"
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

NCODECS=$(wc -w <<< "$BENCH_CODECS")
JOB_MIB=0
for m in $BENCH_JOB_SIZES; do JOB_MIB=$(( JOB_MIB + m )); done
NEED=$(( BENCH_BYTES + BENCH_PARTITIONS * JOB_MIB * 1048576 + (NCODECS + 1) * BENCH_CODEC_BYTES
    + OFFSETS_RECORDS * 60 + LAG_PARTITIONS * LAG_PARTITION_BYTES ))
(( BENCH_MEMORY == 0 )) || NEED=$(( NEED + MEM_BYTES + MEM_PARTITIONS * 65536 ))
avail_kb=$(df -Pk "$WORK" | awk 'NR==2 {print $4}')
(( avail_kb * 1024 > NEED * 11 / 10 )) || die "not enough free space in $PARENT: need about $(( NEED * 11 / 10 / 1048576 )) MiB"

START_TS=$(date +%s)
LOADAVG_START=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")

# ---- build -----------------------------------------------------------------
log "cargo build --release (klog, then the examples in tests/bench)"
(cd "$REPO" && cargo build --release --quiet --bin klog) || die "cargo build --release failed"
TARGET_DIR=$(cd "$REPO" && cargo metadata --format-version 1 --no-deps \
    | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])') \
    || die "cargo metadata failed"
KLOG="$TARGET_DIR/release/klog"
[[ -x "$KLOG" ]] || die "no binary at $KLOG"
example() {  # example NAME -> prints its path, or nothing if it does not build
    if (cd "$REPO" && cargo build --release --quiet --example "$1") 2> "$WORK/build-$1.err" \
            && [[ -x "$TARGET_DIR/release/examples/$1" ]]; then
        echo "$TARGET_DIR/release/examples/$1"
    else
        cat "$WORK/build-$1.err" >&2
        log "could not build the example $1 (tests/bench/$1.rs): its rows are left out"
    fi
}
CRC_FLOOR=$(example crc_floor)
HEADER_FLOOR=$(example header_floor)
KLOG_DECODE=$(example klog_decode)
KP_DECODE=$(example kafka_protocol_decode)
KAFKA_CP=""
KAFKA_VERSION=""
if [[ "$BENCH_KAFKA" == 0 ]]; then
    :
elif command -v java >/dev/null && command -v mvn >/dev/null; then
    log "resolving Kafka's jars (tests/kafka/pom.xml) for the kafka-dump-log row"
    if timeout 900 mvn -q -B -f "$REPO/tests/kafka/pom.xml" dependency:build-classpath \
            -Dmdep.outputFile="$WORK/kafka-cp.txt" > "$WORK/mvn.log" 2>&1; then
        KAFKA_CP=$(cat "$WORK/kafka-cp.txt")
        KAFKA_VERSION=$(sed -n 's:.*<kafka.version>\(.*\)</kafka.version>.*:\1:p' "$REPO/tests/kafka/pom.xml")
    else
        cat "$WORK/mvn.log" >&2
        log "mvn could not resolve Kafka's jars: the kafka-dump-log row is left out"
    fi
else
    log "java or mvn not found: the kafka-dump-log row is left out (to get them: apt-get install -y openjdk-17-jdk-headless maven)"
fi
# DumpLogSegments' class by release, as tests/kafka/damaged_dump.py picks it:
# in the tools module (org.apache.kafka.tools) from Kafka 4.3 on, in the core
# jar (kafka.tools) before. Found by looking into the jars of the classpath.
dump_log_class() {
    python3 - "$1" <<'PY'
import os, sys, zipfile
for jar in sys.argv[1].split(os.pathsep):
    if jar.endswith('.jar') and 'org/apache/kafka/tools/DumpLogSegments.class' in zipfile.ZipFile(jar).namelist():
        print('org.apache.kafka.tools.DumpLogSegments')
        break
else:
    print('kafka.tools.DumpLogSegments')
PY
}
KAFKA_DUMP=()
[[ -z "$KAFKA_CP" ]] || KAFKA_DUMP=(java -Dorg.slf4j.simpleLogger.defaultLogLevel=warn -cp "$KAFKA_CP" "$(dump_log_class "$KAFKA_CP")" --deep-iteration --print-data-log --files)

# ---- input generator ---------------------------------------------------------
# Stops once the on-disk size estimate (Kafka v2 record/batch framing, all
# timestamps equal so deltas are 0, no compression) reaches the target.
# Values are 100-byte slices of a seeded alphanumeric pool, so no value
# contains the separator.
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
generate() {  # generate TARGET_BYTES SUMMARY_FILE: lines on stdout
    python3 -c "$GEN_PY" "$1" "$BENCH_SEED" 500 "$2"
}
PRODUCE_ARGS=(--key-separator ' ' --batch-size 500 --timestamp-ms 1700000000000)
only_segment() {  # only_segment PARTITION_DIR -> the one .log in it
    local logs
    mapfile -t logs < <(find "$1" -maxdepth 1 -name '*.log' | sort)
    (( ${#logs[@]} == 1 )) || die "expected exactly one segment in $1, got ${#logs[@]}: ${logs[*]}"
    echo "${logs[0]}"
}
checked_records() {  # checked_records PATH -> "records batches"; dies unless verify-crc is clean
    local json
    json=$("$KLOG" verify-crc --format json "$1") || die "klog verify-crc found problems in $1: $json"
    python3 -c '
import json, sys
c = json.loads(sys.argv[1])["checked"]
print(c["records"], c["batches"])' "$json"
}
copy_partition() {  # copy_partition DIR TOPIC N: DIR/TOPIC-0 copied to TOPIC-1 .. TOPIC-(N-1)
    python3 -c 'import shutil, sys
d, t, n = sys.argv[1:4]
for p in range(1, int(n)):
    shutil.copytree("%s/%s-0" % (d, t), "%s/%s-%d" % (d, t, p))' "$1" "$2" "$3" || die "could not copy $1/$2-0"
}
now_s() { python3 -c 'import time; print(time.monotonic())'; }
since() { python3 -c "import time; print(f'{time.monotonic() - $1:.1f}')"; }

# ---- a. the one segment, idempotent producer ---------------------------------
DATA="$WORK/data"
PART="$DATA/bench-0"
log "generating ~$BENCH_BYTES bytes through klog produce (seed $BENCH_SEED, producer id 1) into $DATA"
t0=$(now_s)
generate "$BENCH_BYTES" "$WORK/gen.txt" \
    | "$KLOG" produce "$DATA" --topic bench "${PRODUCE_ARGS[@]}" --segment-bytes "$SEGMENT_BYTES" \
        --producer-id 1 --producer-epoch 0 --base-sequence 0 > /dev/null \
    || die "generator | klog produce failed"
GEN_SECS=$(since "$t0")
read -r GEN_RECORDS GEN_EST < "$WORK/gen.txt"
FILE=$(only_segment "$PART")
FILE_BYTES=$(stat -c %s "$FILE")

rb=$(checked_records "$FILE") || exit 2
read -r RECORDS BATCHES <<< "$rb"
[[ "$RECORDS" == "$GEN_RECORDS" ]] || die "segment has $RECORDS records, generator wrote $GEN_RECORDS"
DEEP=1
DEEP_NOTE=""
if ! "$KLOG" verify-crc --deep "$PART" > "$WORK/deep.out"; then
    DEEP=0
    DEEP_NOTE="\`klog verify-crc --deep\` is not clean on this partition ($(tail -n 1 "$WORK/deep.out")), so it is not timed."
    head -n 5 "$WORK/deep.out" >&2
    log "klog verify-crc --deep $PART is not clean: the --deep row is left out"
fi
log "segment: $FILE_BYTES bytes (estimate $GEN_EST), $RECORDS records, $BATCHES batches; generated in ${GEN_SECS}s"
# What `klog export` writes for the segment against what `dump-segment
# --format jsonl` prints for it (the issue's target: at most half).
JSONL_BYTES=$("$KLOG" dump-segment --format jsonl "$FILE" | wc -c)
"$KLOG" export "$DATA" --topic bench -o "$WORK/export-size" > /dev/null || die "klog export of $DATA failed"
EXPORT_BYTES=$(du -sb "$WORK/export-size/records" | cut -f1)
rm -rf "$WORK/export-size"
export JSONL_BYTES EXPORT_BYTES
log "export: $EXPORT_BYTES bytes of Parquet records for $JSONL_BYTES bytes of jsonl"

expect_line() {  # expect_line TOOL FILE RECORDS BATCHES -> the tool's output line
    local out
    out=$("$1" "$2") || die "$1 $2 failed"
    [[ "$out" == "$3 records in $4 batches "* ]] || die "$(basename "$1") $2: '$out', expected $3 records in $4 batches"
    echo "$out"
}
if [[ -n "$CRC_FLOOR" ]]; then
    floor_out=$("$CRC_FLOOR" "$FILE") || die "crc_floor failed"
    [[ "$floor_out" == "$FILE_BYTES bytes,"* ]] || die "crc_floor read ${floor_out%% *} bytes, the file has $FILE_BYTES"
fi
DECODED=""
for tool in "$KLOG_DECODE" "$KP_DECODE"; do
    [[ -n "$tool" ]] || continue
    line=$(expect_line "$tool" "$FILE" "$RECORDS" "$BATCHES")
    [[ -z "$DECODED" || "$line" == "$DECODED" ]] || die "decoders disagree: '$DECODED' vs '$line'"
    DECODED=$line
done

if (( ${#KAFKA_DUMP[@]} )); then
    log "checking kafka-dump-log's record count on the segment"
    kafka_records=$("${KAFKA_DUMP[@]}" "$FILE" | grep -c '^| offset: ') || die "kafka-dump-log failed on $FILE"
    [[ "$kafka_records" == "$RECORDS" ]] || die "kafka-dump-log printed $kafka_records records, klog counted $RECORDS"
fi

# ---- b. partitions of several sizes for --jobs ------------------------------
declare -A JOB_DIR JOB_BYTES JOB_RECORDS JOB_FILE_BYTES
JOB_LOGS=()
t0=$(now_s)
for m in $BENCH_JOB_SIZES; do
    dir="$WORK/parts-$m"
    log "generating $BENCH_PARTITIONS partitions of ~$m MiB into $dir"
    generate $(( m * 1048576 )) "$WORK/gen-parts-$m.txt" \
        | "$KLOG" produce "$dir" --topic p "${PRODUCE_ARGS[@]}" > /dev/null \
        || die "generator | klog produce (partitions of $m MiB) failed"
    f=$(only_segment "$dir/p-0")
    copy_partition "$dir" p "$BENCH_PARTITIONS"
    rb=$(checked_records "$f") || exit 2
    read -r one_records _ <<< "$rb"
    rb=$(checked_records "$dir") || exit 2
    read -r all_records _ <<< "$rb"
    (( all_records == one_records * BENCH_PARTITIONS )) || die "$dir has $all_records records, expected $BENCH_PARTITIONS x $one_records"
    JOB_DIR[$m]=$dir
    JOB_FILE_BYTES[$m]=$(stat -c %s "$f")
    JOB_BYTES[$m]=$(( JOB_FILE_BYTES[$m] * BENCH_PARTITIONS ))
    JOB_RECORDS[$m]=$all_records
    mapfile -t logs < <(find "$dir" -mindepth 2 -maxdepth 2 -name '*.log' | sort)
    JOB_LOGS+=("${logs[@]}")
    # The same partitions in two data directories of half as many (hard
    # links: the same files, the same page cache), for the yardstick.
    mapfile -t folders < <(find "$dir" -mindepth 1 -maxdepth 1 -type d | sort)
    half=$(( ${#folders[@]} / 2 ))
    mkdir -p "$WORK/halves-$m/first" "$WORK/halves-$m/second"
    cp -al "${folders[@]:0:half}" "$WORK/halves-$m/first/"
    cp -al "${folders[@]:half}" "$WORK/halves-$m/second/"
done
PARTS_SECS=$(since "$t0")
log "partitions made in ${PARTS_SECS}s"

# ---- c. one segment per codec ------------------------------------------------
CODECS="$WORK/codecs"
log "generating ~$BENCH_CODEC_BYTES bytes of input once, then one segment per codec ($BENCH_CODECS)"
t0=$(now_s)
generate "$BENCH_CODEC_BYTES" "$WORK/gen-codecs.txt" > "$WORK/codec-input.txt" || die "generator failed"
read -r CODEC_RECORDS _ < "$WORK/gen-codecs.txt"
declare -A CODEC_FILE CODEC_BATCHES
for c in $BENCH_CODECS; do
    "$KLOG" produce "$CODECS" --topic "$c" --compression "$c" "${PRODUCE_ARGS[@]}" \
        < "$WORK/codec-input.txt" > /dev/null || die "klog produce --compression $c failed"
    CODEC_FILE[$c]=$(only_segment "$CODECS/$c-0")
    rb=$(checked_records "${CODEC_FILE[$c]}") || exit 2
    read -r n b <<< "$rb"
    (( n == CODEC_RECORDS )) || die "$c segment has $n records, generator wrote $CODEC_RECORDS"
    CODEC_BATCHES[$c]=$b
    for tool in "$KLOG_DECODE" "$KP_DECODE"; do
        [[ -z "$tool" ]] || expect_line "$tool" "${CODEC_FILE[$c]}" "$n" "$b" > /dev/null
    done
done
rm -f "$WORK/codec-input.txt"
CODECS_SECS=$(since "$t0")
log "codec segments made in ${CODECS_SECS}s"

# ---- d. the offsets log --------------------------------------------------------
# OffsetCommit records (key v1: group, topic, partition; value v3: offset,
# leader epoch, metadata, commit timestamp) as raw bytes for
# `klog produce --input-format json`.
COMMITS_PY='
import base64, struct, sys
mode = sys.argv[1]
T = 1700000000000
def s16(s): b = s.encode(); return struct.pack(">h", len(b)) + b
def commit(group, topic, partition, offset, ts):
    key = struct.pack(">h", 1) + s16(group) + s16(topic) + struct.pack(">i", partition)
    val = struct.pack(">hqi", 3, offset, -1) + s16("") + struct.pack(">q", ts)
    return "{\"key\":{\"base64\":\"%s\"},\"value\":{\"base64\":\"%s\"},\"timestamp\":%d}\n" % (
        base64.b64encode(key).decode(), base64.b64encode(val).decode(), ts)
out = sys.stdout
if mode == "many":
    n, keys = int(sys.argv[2]), int(sys.argv[3])
    chunk = []
    for i in range(n):
        k = i % keys
        chunk.append(commit("group-%d" % (k // 100), "topic-%d" % (k % 10), (k // 10) % 10, i, T + i))
        if len(chunk) == 10000:
            out.write("".join(chunk)); chunk = []
    out.write("".join(chunk))
else:  # groups TOPIC PARTITIONS GROUP=OFFSET...: OFFSET < 0 counts from END (argv end)
    topic, parts, end = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    for spec in sys.argv[5:]:
        group, offset = spec.split("=")
        offset = int(offset)
        for p in range(parts):
            out.write(commit(group, topic, p, offset if offset >= 0 else end + offset, T))
'
OFFSETS="$WORK/offsets"
log "generating $OFFSETS_RECORDS commits over $OFFSETS_KEYS keys into $OFFSETS"
t0=$(now_s)
python3 -c "$COMMITS_PY" many "$OFFSETS_RECORDS" "$OFFSETS_KEYS" \
    | "$KLOG" produce "$OFFSETS" --topic __offsets --input-format json --batch-size 1000 > /dev/null \
    || die "generator | klog produce (offsets) failed"
OFFSETS_SECS=$(since "$t0")
mapfile -t OFFSETS_LOGS < <(find "$OFFSETS" -mindepth 2 -maxdepth 2 -name '*.log' | sort)
OFFSETS_BYTES=$(cat "${OFFSETS_LOGS[@]}" | wc -c)
live=$("$KLOG" replay-offsets --format csv "$OFFSETS" 2> /dev/null | tail -n +2 | wc -l)
(( live == OFFSETS_KEYS )) || die "replay-offsets found $live committed offsets, expected $OFFSETS_KEYS"

# ---- e. lag: one group near the end, one 2 GB behind -------------------------
LAG="$WORK/lag"
log "generating $LAG_PARTITIONS partitions of ~$LAG_PARTITION_BYTES bytes into $LAG"
t0=$(now_s)
generate "$LAG_PARTITION_BYTES" "$WORK/gen-lag.txt" \
    | "$KLOG" produce "$LAG" --topic t "${PRODUCE_ARGS[@]}" > /dev/null \
    || die "generator | klog produce (lag) failed"
read -r LAG_END _ < "$WORK/gen-lag.txt"
copy_partition "$LAG" t "$LAG_PARTITIONS"
python3 -c "$COMMITS_PY" groups t "$LAG_PARTITIONS" "$LAG_END" near=-5 far=5 \
    | "$KLOG" produce "$LAG" --topic __offsets --input-format json --batch-size 1000 > /dev/null \
    || die "klog produce (lag commits) failed"
LAG_BYTES=$(( $(stat -c %s "$(only_segment "$LAG/t-0")") * LAG_PARTITIONS ))
mapfile -t LAG_LOGS < <(find "$LAG" -mindepth 2 -maxdepth 2 -name '*.log' | sort)
for g in near far; do
    sum=$("$KLOG" lag --group "$g" --format csv "$LAG" 2> /dev/null | python3 -c '
import csv, sys
rows = list(csv.DictReader(sys.stdin))
print(len(rows), sum(int(r["lag"]) for r in rows))')
    behind=5
    [[ $g == near ]] || behind=$(( LAG_END - 5 ))
    want_lag=$(( LAG_PARTITIONS * behind ))
    [[ "$sum" == "$LAG_PARTITIONS $want_lag" ]] || die "klog lag --group $g: '$sum' (rows, total lag), expected '$LAG_PARTITIONS $want_lag'"
done
if [[ -n "$HEADER_FLOOR" ]]; then
    floor_out=$("$HEADER_FLOOR" "$LAG" t) || die "header_floor failed"
    want="$(( LAG_PARTITIONS * LAG_END )) records in "
    [[ "$floor_out" == "$want"* ]] || die "header_floor $LAG t: '$floor_out', expected $want..."
fi
LAG_SECS=$(since "$t0")
log "offsets log made in ${OFFSETS_SECS}s, lag directory in ${LAG_SECS}s"

# ---- the commands ------------------------------------------------------------
# NAMES[i] short id, GRPS[i] table, SHOWN[i] as printed, NBYTES[i]/NRECS[i]
# for the rates, CMDS[i] the argv quoted with printf %q (hyperfine splits it
# like a shell with --shell=none; the harness evals it back into an array).
NAMES=(); GRPS=(); SHOWN=(); NBYTES=(); NRECS=(); CMDS=()
# bash -c "$HALVES_SH" halves KLOG DIR DIR: verify the two data
# directories in two processes at once; fails if either does.
HALVES_SH='"$1" verify-crc --jobs 1 "$2" > /dev/null & first=$!; "$1" verify-crc --jobs 1 "$3" > /dev/null; second=$?; wait "$first" && exit "$second"'

add() {  # add NAME GROUP SHOWN BYTES RECORDS ARGV...
    NAMES+=("$1"); GRPS+=("$2"); SHOWN+=("$3"); NBYTES+=("$4"); NRECS+=("$5")
    shift 5
    local q
    printf -v q '%q ' "$@"
    CMDS+=("${q% }")
}
S=segment
add cat $S "cat FILE > /dev/null" "$FILE_BYTES" "$RECORDS" cat "$FILE"
[[ -z "$CRC_FLOOR" ]] || add crc-floor $S "crc_floor FILE (read + CRC-32C, one thread)" "$FILE_BYTES" "$RECORDS" "$CRC_FLOOR" "$FILE"
add verify-crc $S "klog verify-crc FILE" "$FILE_BYTES" "$RECORDS" "$KLOG" verify-crc "$FILE"
add verify-part $S "klog verify-crc PARTITION" "$FILE_BYTES" "$RECORDS" "$KLOG" verify-crc "$PART"
(( ! DEEP )) || add verify-deep $S "klog verify-crc --deep PARTITION" "$FILE_BYTES" "$RECORDS" "$KLOG" verify-crc --deep "$PART"
# The same commands with plain positioned reads on one thread (`--reads
# plain`): each way of reading that klog keeps must beat the plain one by
# 10% somewhere.
add verify-crc-plain $S "klog verify-crc --reads plain FILE" "$FILE_BYTES" "$RECORDS" "$KLOG" verify-crc --reads plain "$FILE"
add dump-json $S "klog dump-segment --format json FILE > /dev/null" "$FILE_BYTES" "$RECORDS" "$KLOG" dump-segment --format json "$FILE"
add dump-json-plain $S "klog dump-segment --reads plain --format json FILE > /dev/null" "$FILE_BYTES" "$RECORDS" "$KLOG" dump-segment --reads plain --format json "$FILE"
add dump-jsonl $S "klog dump-segment --format jsonl FILE > /dev/null" "$FILE_BYTES" "$RECORDS" "$KLOG" dump-segment --format jsonl "$FILE"
# klog export of the same segment (its data directory, the one topic) to
# Parquet, written over the last round's files (--overwrite).
add export $S "klog export DIR --topic bench -o OUT --overwrite (the FILE's partition as Parquet)" "$FILE_BYTES" "$RECORDS" "$KLOG" export "$DATA" --topic bench -o "$WORK/export-out" --overwrite
if [[ -n "$TASKSET" ]]; then
    [[ -z "$CRC_FLOOR" ]] || add crc-floor-1cpu $S "taskset -c $ONE_CPU crc_floor FILE (one CPU)" "$FILE_BYTES" "$RECORDS" "$TASKSET" -c "$ONE_CPU" "$CRC_FLOOR" "$FILE"
    add verify-crc-1cpu $S "taskset -c $ONE_CPU klog verify-crc FILE (one CPU)" "$FILE_BYTES" "$RECORDS" "$TASKSET" -c "$ONE_CPU" "$KLOG" verify-crc "$FILE"
fi
if [[ -n "$KLOG_DECODE" ]]; then
    add klog-decode $S "klog_decode FILE (CRC + every record)" "$FILE_BYTES" "$RECORDS" "$KLOG_DECODE" "$FILE"
    add klog-decode-nocrc $S "klog_decode --no-crc FILE (every record)" "$FILE_BYTES" "$RECORDS" "$KLOG_DECODE" "$FILE" --no-crc
    [[ -z "$TASKSET" ]] || add klog-decode-1cpu $S "taskset -c $ONE_CPU klog_decode FILE (one CPU)" "$FILE_BYTES" "$RECORDS" "$TASKSET" -c "$ONE_CPU" "$KLOG_DECODE" "$FILE"
fi
[[ -z "$KP_DECODE" ]] || add kp-decode $S "kafka_protocol_decode FILE (CRC + every record)" "$FILE_BYTES" "$RECORDS" "$KP_DECODE" "$FILE"
(( ! ${#KAFKA_DUMP[@]} )) || add kafka-dump-log $S "kafka-dump-log --deep-iteration --print-data-log --files FILE > /dev/null (Kafka $KAFKA_VERSION)" "$FILE_BYTES" "$RECORDS" "${KAFKA_DUMP[@]}" "$FILE"
for m in $BENCH_JOB_SIZES; do
    d=${JOB_DIR[$m]}
    mapfile -t logs < <(find "$d" -mindepth 2 -maxdepth 2 -name '*.log' | sort)
    add "cat-parts-$m" "jobs:$m" "cat DIR/*/*.log > /dev/null" "${JOB_BYTES[$m]}" "${JOB_RECORDS[$m]}" cat "${logs[@]}"
    add "jobs-1-$m" "jobs:$m" "klog verify-crc --jobs 1 DIR" "${JOB_BYTES[$m]}" "${JOB_RECORDS[$m]}" "$KLOG" verify-crc --jobs 1 "$d"
    add "jobs-2-$m" "jobs:$m" "klog verify-crc --jobs 2 DIR" "${JOB_BYTES[$m]}" "${JOB_RECORDS[$m]}" "$KLOG" verify-crc --jobs 2 "$d"
    add "jobs-default-$m" "jobs:$m" "klog verify-crc DIR (default: $(nproc) jobs)" "${JOB_BYTES[$m]}" "${JOB_RECORDS[$m]}" "$KLOG" verify-crc "$d"
    # Another build of klog beside this one, for a change of how the jobs
    # run (BENCH_KLOG_BEFORE).
    [[ -z "$BENCH_KLOG_BEFORE" ]] || add "jobs-2-before-$m" "jobs:$m" "klog verify-crc --jobs 2 DIR ($BENCH_BEFORE_LABEL)" "${JOB_BYTES[$m]}" "${JOB_RECORDS[$m]}" "$BENCH_KLOG_BEFORE" verify-crc --jobs 2 "$d"
    # The yardstick for --jobs 2: two klog processes started at once, each
    # on a data directory of half the partitions (bash's own start
    # included), as fast as two jobs can be on this machine at this moment.
    add "halves-$m" "jobs:$m" "two klog verify-crc --jobs 1 on halves of DIR, at once (bash)" "${JOB_BYTES[$m]}" "${JOB_RECORDS[$m]}" \
        bash -c "$HALVES_SH" halves "$KLOG" "$WORK/halves-$m/first" "$WORK/halves-$m/second"
done
for c in $BENCH_CODECS; do
    f=${CODEC_FILE[$c]}
    fb=$(stat -c %s "$f")
    add "dump-$c" "codec:$c" "dump-segment --format json" "$fb" "$CODEC_RECORDS" "$KLOG" dump-segment --format json "$f"
    [[ -z "$KLOG_DECODE" ]] || add "klog-$c" "codec:$c" "klog_decode" "$fb" "$CODEC_RECORDS" "$KLOG_DECODE" "$f"
    [[ -z "$KP_DECODE" ]] || add "kp-$c" "codec:$c" "kafka_protocol_decode" "$fb" "$CODEC_RECORDS" "$KP_DECODE" "$f"
done
add cat-offsets offsets "cat the offsets log > /dev/null" "$OFFSETS_BYTES" "$OFFSETS_RECORDS" cat "${OFFSETS_LOGS[@]}"
add replay offsets "klog replay-offsets DIR" "$OFFSETS_BYTES" "$OFFSETS_RECORDS" "$KLOG" replay-offsets "$OFFSETS"
# The same with the schema tables' decoders alone (`--decoders plain`): the
# fast paths of plain offset commits must beat them by 10%.
add replay-plain offsets "klog replay-offsets --decoders plain DIR" "$OFFSETS_BYTES" "$OFFSETS_RECORDS" "$KLOG" replay-offsets --decoders plain "$OFFSETS"
for iso in read-uncommitted read-committed; do
    for g in near far; do
        add "lag-$g-$iso" lag "klog lag --group $g --isolation $iso DIR" "$LAG_BYTES" "$LAG_PARTITIONS" "$KLOG" lag --group "$g" --isolation "$iso" "$LAG"
    done
done
[[ -z "$HEADER_FLOOR" ]] || add header-floor lag "header_floor DIR t (every batch header, one pread each)" "$LAG_BYTES" "$LAG_PARTITIONS" "$HEADER_FLOOR" "$LAG" t
NCMD=${#NAMES[@]}

# ---- warm up, then time interleaved rounds ---------------------------------
# The inputs were just written: their writeback would compete with the
# timed rounds (a stalled round reads as a slow `cat`), so it goes first.
log "writing back the generated inputs (sync), then warming the page cache"
sync
cat "$FILE" "${JOB_LOGS[@]}" "${CODEC_FILE[@]}" "${OFFSETS_LOGS[@]}" "${LAG_LOGS[@]}" > /dev/null

TIMES="$WORK/times.tsv"   # name <TAB> wall seconds <TAB> CPU seconds, one line per run
: > "$TIMES"
if [[ -n "$HYPERFINE" ]]; then
    TOOL="hyperfine $("$HYPERFINE" --version | awk '{print $2}') (one --runs 1 --shell=none --output=null call per round with all $NCMD commands)"
else
    TOOL="python3 harness (perf_counter_ns around fork/exec/wait, no shell)"
fi
log "timing $BENCH_ROUNDS interleaved rounds of $NCMD commands with $TOOL"

HARNESS_PY='
import os, subprocess, sys, time
name, out = sys.argv[1], sys.argv[2]
argv = sys.argv[3:]
t0 = time.perf_counter_ns()
p = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
t1 = time.perf_counter_ns()
code = os.waitstatus_to_exitcode(status)
if code != 0:
    sys.exit("%s exited %d" % (" ".join(argv), code))
with open(out, "a") as f:
    f.write("%s\t%.9f\t%.6f\n" % (name, (t1 - t0) / 1e9, ru.ru_utime + ru.ru_stime))
'
for (( r = 0; r < BENCH_ROUNDS; r++ )); do
    # Read every input again first: a kernel may page out what has not been
    # touched for a while (DAMON's pageout scheme, below), even with memory free.
    cat "$FILE" "${JOB_LOGS[@]}" "${CODEC_FILE[@]}" "${OFFSETS_LOGS[@]}" "${LAG_LOGS[@]}" > /dev/null
    order=()
    for (( i = 0; i < NCMD; i++ )); do order+=("$(( (i + r) % NCMD ))"); done
    if [[ -n "$HYPERFINE" ]]; then
        hf_args=()
        for i in "${order[@]}"; do hf_args+=(-n "${NAMES[$i]}" "${CMDS[$i]}"); done
        "$HYPERFINE" --runs 1 --shell=none --output=null --style none --export-json "$WORK/hf-$r.json" "${hf_args[@]}" \
            > "$WORK/hf-$r.out" 2>&1 || { cat "$WORK/hf-$r.out" >&2; die "hyperfine failed in round $((r + 1))"; }
        python3 -c '
import json, sys
for res in json.load(open(sys.argv[1]))["results"]:
    for t in res["times"]:
        print("%s\t%.9f\t%.6f" % (res["command"], t, res["user"] + res["system"]))' "$WORK/hf-$r.json" >> "$TIMES"
    else
        for i in "${order[@]}"; do
            eval "CMD=(${CMDS[$i]})"
            python3 -c "$HARNESS_PY" "${NAMES[$i]}" "$TIMES" "${CMD[@]}" || die "${SHOWN[$i]} failed"
        done
    fi
    log "round $((r + 1))/$BENCH_ROUNDS done (load $(cut -d' ' -f1 /proc/loadavg 2>/dev/null || echo ?))"
done

# ---- peak RSS (one extra run each) -----------------------------------------
RSS_PY='
import os, subprocess, sys
p = subprocess.Popen(sys.argv[1:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
if os.waitstatus_to_exitcode(status) != 0:
    sys.exit("%s failed" % " ".join(sys.argv[1:]))
print(ru.ru_maxrss)  # KiB on Linux
'
RSS="$WORK/rss.tsv"
: > "$RSS"
for (( i = 0; i < NCMD; i++ )); do
    eval "CMD=(${CMDS[$i]})"
    if [[ -n "$GNU_TIME" ]]; then
        "$GNU_TIME" -f %M -o "$WORK/rss.one" "${CMD[@]}" > /dev/null 2>&1 || die "${SHOWN[$i]} failed under $GNU_TIME"
        kib=$(tail -n 1 "$WORK/rss.one")
    else
        kib=$(python3 -c "$RSS_PY" "${CMD[@]}") || die "${SHOWN[$i]} failed"
    fi
    printf '%s\t%s\n' "${NAMES[$i]}" "$kib" >> "$RSS"
done
RSS_TOOL=$([[ -n "$GNU_TIME" ]] && echo "/usr/bin/time -f %M" || echo "python3 os.wait4 ru_maxrss")

# ---- f. memory on a 10 GiB partition and on 10,000 partitions ---------------
# Each command once: exit status, wall s, CPU s, peak RSS KiB (os.wait4).
MEMRUN_PY='
import os, subprocess, sys, time
name, out = sys.argv[1], sys.argv[2]
t0 = time.perf_counter_ns()
p = subprocess.Popen(sys.argv[3:], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
t1 = time.perf_counter_ns()
with open(out, "a") as f:
    f.write("%s\t%d\t%.3f\t%.3f\t%d\n" % (name, os.waitstatus_to_exitcode(status), (t1 - t0) / 1e9,
        ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
'
# Copies of a segment with every batch's baseOffset moved on by `shift`
# (baseOffset is not covered by the batch CRC): a long partition from one
# generated segment. The offset and time indexes hold relative offsets and
# positions, so they are copied as they are.
SHIFT_PY='
import struct, sys, os, shutil
src, dest, copies = sys.argv[1], sys.argv[2], int(sys.argv[3])
data = bytearray(open(src, "rb").read())
first = struct.unpack_from(">q", data, 0)[0]
starts, pos = [], 0
while pos + 12 <= len(data):
    starts.append(pos)
    pos += 12 + struct.unpack_from(">i", data, pos + 8)[0]
last_base = struct.unpack_from(">q", data, starts[-1])[0]
last_delta = struct.unpack_from(">i", data, starts[-1] + 23)[0]
span = last_base + last_delta + 1 - first
os.makedirs(dest, exist_ok=True)
base = os.path.splitext(src)[0]
for k in range(copies):
    shift = k * span
    for at in starts:
        struct.pack_into(">q", data, at, struct.unpack_from(">q", data, at)[0] + (span if k else 0))
    name = os.path.join(dest, "%020d" % (first + shift))
    open(name + ".log", "wb").write(data)
    for ext in (".index", ".timeindex"):
        if os.path.exists(base + ext):
            shutil.copyfile(base + ext, name + ext)
print(copies * span)
'
MEM="$WORK/memory.tsv"
: > "$MEM"
MEM_NOTE=""
if [[ "$BENCH_MEMORY" != 0 ]]; then
    rm -rf "${JOB_DIR[@]}" "$WORK"/halves-* "$LAG"   # room on the disk and in the page cache
    BIG="$WORK/big"
    src=${CODEC_FILE[none]:-}
    [[ -n "$src" ]] || die "the memory part needs the none codec segment (BENCH_CODECS)"
    copies=$(( (MEM_BYTES + $(stat -c %s "$src") - 1) / $(stat -c %s "$src") ))
    log "memory: a partition of $copies copies of $(basename "$src") in $BIG/m-0"
    BIG_RECORDS=$(python3 -c "$SHIFT_PY" "$src" "$BIG/m-0" "$copies") || die "could not make the long partition"
    # The writers (reset-offsets --execute, commit, produce of nothing,
    # tombstone) come last: they append to the offsets log or the partition.
    python3 -c "$COMMITS_PY" groups m 1 "$BIG_RECORDS" g=5 \
        | "$KLOG" produce "$BIG" --topic __offsets --input-format json > /dev/null || die "klog produce (memory commits) failed"
    BIG_BYTES=$(du -sb "$BIG/m-0" | cut -f1)
    MANY="$WORK/many"
    log "memory: $MEM_PARTITIONS partitions in $MANY"
    seq 1 200 | sed 's/^/value-/' | "$KLOG" produce "$MANY" --topic m --batch-size 10 --timestamp-ms 1700000000000 > /dev/null \
        || die "klog produce (many) failed"
    copy_partition "$MANY" m "$MEM_PARTITIONS"
    python3 -c "$COMMITS_PY" groups m "$MEM_PARTITIONS" 200 g=5 \
        | "$KLOG" produce "$MANY" --topic __offsets --input-format json --batch-size 1000 > /dev/null || die "klog produce (many commits) failed"
    for input in big many; do
        d=$([[ $input == big ]] && echo "$BIG" || echo "$MANY")
        part="$d/m-0"
        for spec in "verify-crc DIR" "verify-crc --deep DIR" "verify-crc --repair --dry-run DIR" \
                "dump-segment --format jsonl PARTITION" "dump-segment --records PARTITION" "stats DIR" "info DIR" \
                "transactions DIR" "diff PARTITION PARTITION" "summary DIR" "replay-offsets DIR" "lag DIR" \
                "lag --isolation read-committed DIR" "groups DIR" \
                "reset-offsets --group g --all-topics --to-earliest DIR" \
                "reset-offsets --group g --all-topics --to-latest --execute DIR" \
                "commit --group h --topic m --partition 0 --offset 1 DIR" \
                "produce DIR --topic m --partition 0" "tombstone --group g DIR" \
                "export DIR --overwrite -o OUT"; do
            read -ra argv <<< "$spec"
            for k in "${!argv[@]}"; do
                case ${argv[$k]} in
                    DIR) argv[$k]=$d ;; PARTITION) argv[$k]=$part ;; OUT) argv[$k]="$WORK/export-mem" ;;
                esac
            done
            python3 -c "$MEMRUN_PY" "$input: klog $spec" "$MEM" "$KLOG" "${argv[@]}"
        done
        log "memory: $input done"
    done
    MEM_NOTE="Memory inputs: a partition of $BIG_BYTES bytes ($(python3 -c "print(f'{$BIG_BYTES / 2**30:.1f}')") GiB, $copies segments, $BIG_RECORDS records: copies of the \`none\` codec segment with their base offsets moved on) and $MEM_PARTITIONS partitions of 200 records each, each directory with an offsets log holding one commit per partition."
fi

# ---- report ------------------------------------------------------------------
CPU_MODEL=$(awk -F': *' '/^model name/ {print $2; exit}' /proc/cpuinfo 2>/dev/null || true)
CPU_MODEL=${CPU_MODEL:-unknown}
NPROC=$(nproc)
MEM_GIB=$(awk '/^MemTotal/ {printf "%.1f", $2 / 1048576}' /proc/meminfo 2>/dev/null || echo "?")
LOADAVG_END=$(cut -d' ' -f1-3 /proc/loadavg 2>/dev/null || echo "?")
GIT_REV=$(cd "$REPO" && git rev-parse --short HEAD 2>/dev/null || echo "?")
if [[ "$GIT_REV" != "?" ]] && [[ -n "$(cd "$REPO" && git status --porcelain -- src Cargo.toml Cargo.lock 2>/dev/null)" ]]; then
    GIT_REV="$GIT_REV + uncommitted changes"
fi
KLOG_VERSION=$("$KLOG" --version 2>/dev/null || echo klog)
# A kernel running DAMON with a pageout scheme drops pages (the page cache
# included) that have gone unread for a while, however much memory is free.
PAGEOUT_NOTE=""
for k in /sys/kernel/mm/damon/admin/kdamonds/*; do
    [[ "$(cat "$k/state" 2>/dev/null)" == on ]] || continue
    if grep -qx pageout "$k"/contexts/*/schemes/*/action 2>/dev/null; then
        PAGEOUT_NOTE="The kernel runs DAMON with a pageout scheme: pages unread for a while leave memory, the page cache's too, with memory free (each round reads its inputs first)."
    fi
done
ELAPSED=$(( $(date +%s) - START_TS ))

META="$WORK/meta.tsv"
for (( i = 0; i < NCMD; i++ )); do
    printf '%s\t%s\t%s\t%s\t%s\n' "${NAMES[$i]}" "${GRPS[$i]}" "${SHOWN[$i]}" "${NBYTES[$i]}" "${NRECS[$i]}"
done > "$META"
python3 - "$TIMES" "$RSS" "$META" "$FILE_BYTES" "$BENCH_PARTITIONS" "$MEM" "$CODEC_RECORDS" "$LAG_PARTITIONS" \
    > "$WORK/tables.md" <<'PY'
import statistics, sys
times_path, rss_path, meta_path = sys.argv[1:4]
file_bytes, nparts = int(sys.argv[4]), int(sys.argv[5])
mem_path, codec_records, lag_parts = sys.argv[6], int(sys.argv[7]), int(sys.argv[8])
meta = {}
for line in open(meta_path):
    name, group, shown, nbytes, nrecs = line.rstrip("\n").split("\t")
    meta[name] = dict(group=group, shown=shown, bytes=int(nbytes), records=int(nrecs))
wall, cpu = {}, {}
for line in open(times_path):
    name, w, c = line.rstrip("\n").split("\t")
    wall.setdefault(name, []).append(float(w))
    cpu.setdefault(name, []).append(float(c))
rss = {n: int(k) / 1024 for n, k in (l.rstrip("\n").split("\t") for l in open(rss_path))}
med = {n: max(statistics.median(v), 1e-6) for n, v in wall.items()}
cmed = {n: statistics.median(v) for n, v in cpu.items()}
def mbs(n): return meta[n]["bytes"] / 1e6 / med[n]
def mrs(n): return meta[n]["records"] / 1e6 / med[n]
def minmax(n): return "%.3f–%.3f" % (min(wall[n]), max(wall[n]))
def x(a, b): return "%.2f×" % (a / b)
def names(group): return [n for n in meta if meta[n]["group"] == group]
out = []
p = out.append
targets = []  # (target, measured, met)

# -- the one segment
seg = names("segment")
floor = med.get("crc-floor")
p("## One segment of %.1f MiB" % (file_bytes / 2**20))
p("")
p("| command | median s | ratio to cat | ratio to CRC floor | MB/s | M records/s | CPU s | peak RSS MiB | min–max s |")
p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
for n in seg:
    p("| `%s` | %.3f | %s | %s | %.0f | %.1f | %.3f | %.1f | %s |" % (
        meta[n]["shown"], med[n], x(med[n], med["cat"]), x(med[n], floor) if floor else "–",
        mbs(n), mrs(n), cmed[n], rss[n], minmax(n)))
p("")
v = med["verify-crc"]
if floor:
    r = cmed["verify-crc"] / cmed["crc-floor"]
    targets.append(("`verify-crc FILE` CPU ≤ 1.3× the CRC floor's CPU", "%.2f× (%.3f s vs %.3f s)" % (r, cmed["verify-crc"], cmed["crc-floor"]), r <= 1.3))
targets.append(("`verify-crc FILE` wall ≤ 1.2× `cat` (second core free)", "%.2f×" % (v / med["cat"]), v / med["cat"] <= 1.2))
if "verify-crc-1cpu" in med and "crc-floor-1cpu" in med:
    r = med["verify-crc-1cpu"] / med["crc-floor-1cpu"]
    targets.append(("`verify-crc FILE` wall ≤ 1.5× the floor's, both pinned to one CPU", "%.2f×" % r, r <= 1.5))
vp = med["verify-part"]
p("`verify-crc PARTITION` (the folder holding FILE) adds the `.index` and `.timeindex` checks to `verify-crc FILE`: %+.3f s (%.2f×), CPU %+.3f s." % (
    vp - v, vp / v, cmed["verify-part"] - cmed["verify-crc"]))
p("")
# Each way of reading beside the plain one (positioned reads on one
# thread), in the same rounds: a way earns its place with a 10% gain.
p("Ways of reading against plain positioned reads on one thread (`--reads plain`), wall time:")
p("")
p("| way | command | median s | plain s | ratio to plain | CPU s | plain CPU s |")
p("|---|---|---:|---:|---:|---:|---:|")
ways = [("checking ahead on threads (`auto`)", "verify-crc", "verify-crc-plain"),
        ("rendering ahead on threads (`auto`)", "dump-json", "dump-json-plain")]
for way, n, plain in ways:
    if n in med and plain in med:
        r = med[n] / med[plain]
        p("| %s | `%s` | %.3f | %.3f | %.2f× | %.3f | %.3f |" % (way, meta[n]["shown"], med[n], med[plain], r, cmed[n], cmed[plain]))
        targets.append(("%s ≥ 10%% faster than plain reads" % way, "%.2f× plain's wall time" % r, r <= 0.9))
p("")
vrss = max(rss[n] for n in meta if n.startswith(("verify", "jobs")))
targets.append(("`verify-crc` peak RSS < 64 MiB (largest over every verify-crc row)", "%.1f MiB" % vrss, vrss < 64))
if "verify-deep" in med:
    p("`--deep` (timed on the partition folder: its producer-state pass runs per partition, not for a bare FILE) adds %.3f s (%.2f×) to `verify-crc PARTITION`: %.0f MB/s, %.1f M records/s, peak RSS %.1f MiB." % (
        med["verify-deep"] - med["verify-part"], med["verify-deep"] / med["verify-part"],
        mbs("verify-deep"), mrs("verify-deep"), rss["verify-deep"]))
    p("")
dj = mrs("dump-json")
if "kafka-dump-log" in med:
    p("Kafka's own `kafka-dump-log` (what a Kafka operator runs today; JVM start included) decodes the same segment in %.3f s: `klog dump-segment --format json` takes %.3f s, %.2f× as fast. Peak RSS %.1f MiB vs %.1f MiB." % (
        med["kafka-dump-log"], med["dump-json"], med["kafka-dump-log"] / med["dump-json"], rss["kafka-dump-log"], rss["dump-json"]))
    p("")
djl = mrs("dump-jsonl")
targets.append(("`dump-segment --format jsonl` ≥ 15 M records/s uncompressed", "%.2f M/s (json: %.2f M/s)" % (djl, dj), djl >= 15))
if "export" in med:
    import os
    r = med["export"] / med["dump-jsonl"]
    p("`klog export` writes the segment's %d records as Parquet in %.3f s (%.1f M records/s, peak RSS %.1f MiB): %.2f× the wall time of `dump-segment --format jsonl` to /dev/null." % (
        meta["export"]["records"], med["export"], mrs("export"), rss["export"], r))
    p("")
    targets.append(("`export` wall ≤ 2× `dump-segment --format jsonl` to /dev/null", "%.2f×" % r, r <= 2))
    eb, jb = int(os.environ["EXPORT_BYTES"]), int(os.environ["JSONL_BYTES"])
    targets.append(("`export` output ≤ half of jsonl's bytes", "%.1f MiB vs %.1f MiB (%.2f×)" % (eb / 2**20, jb / 2**20, eb / jb), eb * 2 <= jb))
if "kp-decode" in med and "klog-decode" in med:
    r = med["kp-decode"] / med["klog-decode"]
    line = "Full decode, CRC included on both sides: klog_decode %.3f s, kafka_protocol_decode %.3f s: klog is %.2f× as fast" % (
        med["klog-decode"], med["kp-decode"], r)
    if "klog-decode-1cpu" in med:
        r1 = med["kp-decode"] / med["klog-decode-1cpu"]
        line += " (%.2f× pinned to one CPU%s)" % (r1, "; unpinned, SegmentReader reads a file of 16 MiB or more ahead on a second thread" if file_bytes >= 16 << 20 else "")
        measured = "%.2f× as fast (%.2f× on one CPU)" % (r, r1)
        met = min(r, r1) >= 1
    else:
        measured, met = "%.2f× as fast" % r, r >= 1
    p(line + ". Peak RSS %.1f MiB vs %.1f MiB." % (rss["klog-decode"], rss["kp-decode"]))
    p("")
    targets.append(("klog's full decode at least as fast as kafka-protocol's", measured, met))

# -- partitions
for g in dict.fromkeys(meta[n]["group"] for n in meta):
    if not g.startswith("jobs:"):
        continue
    m = g.split(":", 1)[1]
    jobs = names(g)
    total = meta["cat-parts-" + m]["bytes"]
    p("## verify-crc over %d partitions of %s MiB (%.1f MiB in all)" % (nparts, m, total / 2**20))
    p("")
    p("| command | median s | speedup vs --jobs 1 | ratio to cat | MB/s | M records/s | CPU s | peak RSS MiB | min–max s |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|")
    one = med["jobs-1-" + m]
    for n in jobs:
        p("| `%s` | %.3f | %s | %s | %.0f | %.1f | %.3f | %.1f | %s |" % (
            meta[n]["shown"], med[n], "–" if n.startswith("cat") else x(one, med[n]),
            x(med[n], med["cat-parts-" + m]), mbs(n), mrs(n), cmed[n], rss[n], minmax(n)))
    p("")
    sp = one / med["jobs-2-" + m]
    halves = ("; two processes on halves: %.2f×" % (one / med["halves-" + m])) if "halves-" + m in med else ""
    targets.append(("`verify-crc --jobs 2` ≥ 1.8× `--jobs 1` on %d partitions of %s MiB" % (nparts, m), "%.2f× (default: %.2f×%s)" % (
        sp, one / med["jobs-default-" + m], halves), sp >= 1.8))
    if "halves-" + m in med:
        r = med["jobs-2-" + m] / med["halves-" + m]
        targets.append(("`verify-crc --jobs 2` (threads) within 5%% of two processes on halves, %s MiB" % m, "%.3f× their wall time" % r, r <= 1.05))

# -- offsets and lag
p("## Committed offsets and lag")
p("")
p("| command | input | median s | rate | CPU s | peak RSS MiB | min–max s |")
p("|---|---|---:|---:|---:|---:|---:|")
for n in names("offsets"):
    p("| `%s` | %d commits, %.0f MiB | %.3f | %.2f M records/s | %.3f | %.1f | %s |" % (
        meta[n]["shown"], meta[n]["records"], meta[n]["bytes"] / 2**20, med[n], mrs(n), cmed[n], rss[n], minmax(n)))
for n in names("lag"):
    p("| `%s` | %d partitions, %.0f MiB | %.3f | | %.3f | %.1f | %s |" % (
        meta[n]["shown"], lag_parts, meta[n]["bytes"] / 2**20, med[n], cmed[n], rss[n], minmax(n)))
p("")
rr = mrs("replay")
targets.append(("`replay-offsets` ≥ 10 M records/s", "%.2f M/s (%.1f× cat)" % (rr, med["replay"] / med["cat-offsets"]), rr >= 10))
if "replay-plain" in med:
    r = med["replay"] / med["replay-plain"]
    targets.append(("`replay-offsets`' fast paths of plain commits ≥ 10% faster than the schema tables' decoders alone (`--decoders plain`)",
        "%.2f× plain's wall time" % r, r <= 0.9))
for iso in ("read-uncommitted", "read-committed"):
    far, near = med["lag-far-" + iso], med["lag-near-" + iso]
    floor = ""
    if iso == "read-uncommitted" and "header-floor" in med:
        floor = "; the gap %.3f s, reading every header once (header_floor) %.3f s" % (far - near, med["header-floor"])
    targets.append(("`lag --isolation %s`: a group %.1f GB behind ≤ 1.2× one 5 records behind" % (iso, meta["lag-far-" + iso]["bytes"] / 1e9),
        "%.2f× (%.3f s vs %.3f s%s)" % (far / near, far, near, floor), far / near <= 1.2))

# -- memory
mem = [l.rstrip("\n").split("\t") for l in open(mem_path)]
if mem:
    p("## Memory: every command on a 10 GiB partition and on many partitions")
    p("")
    p("| command | exit | wall s | CPU s | peak RSS MiB |")
    p("|---|---:|---:|---:|---:|")
    for name, code, w, c, kib in mem:
        p("| `%s` | %s | %s | %s | %.1f |" % (name, code, w, c, int(kib) / 1024))
    p("")
    # `export` buffers a row group per open Parquet file: its own bound.
    worst = max((r for r in mem if not r[0].split(": klog ", 1)[-1].startswith("export")), key=lambda r: int(r[4]))
    targets.append(("peak RSS < 64 MiB for every command on both memory inputs (export aside)", "largest %.1f MiB (`%s`)" % (int(worst[4]) / 1024, worst[0]), int(worst[4]) < 64 * 1024))
    ex = [r for r in mem if r[0].split(": klog ", 1)[-1].startswith("export")]
    if ex:
        worst = max(ex, key=lambda r: int(r[4]))
        targets.append(("`export` peak RSS ≤ 256 MiB on both memory inputs", "largest %.1f MiB (`%s`)" % (int(worst[4]) / 1024, worst[0]), int(worst[4]) <= 256 * 1024))

# -- codecs
codecs = [g.split(":", 1)[1] for g in dict.fromkeys(meta[n]["group"] for n in meta) if g.startswith("codec:")]
if codecs:
    none_size = meta["dump-none"]["bytes"] if "dump-none" in meta else None
    p("## Per codec: %d records (%.1f MiB uncompressed) per segment" % (codec_records, (none_size or 0) / 2**20))
    p("")
    p("| codec | segment MiB | size vs none | dump json s | dump M records/s | dump vs none | klog_decode s | klog M records/s | kafka_protocol_decode s | kafka-protocol M records/s | klog speed ÷ kafka-protocol | peak RSS MiB dump / klog / k-p |")
    p("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for c in codecs:
        d, k, q = "dump-" + c, "klog-" + c, "kp-" + c
        size = meta[d]["bytes"]
        p("| %s | %.1f | %s | %.3f | %.2f | %s | %s | %s | %s | %s | %s | %s |" % (
            c, size / 2**20, x(size, none_size) if none_size else "–", med[d], mrs(d),
            x(med[d], med["dump-none"]) if "dump-none" in med else "–",
            "%.3f" % med[k] if k in med else "–", "%.1f" % mrs(k) if k in med else "–",
            "%.3f" % med[q] if q in med else "–", "%.1f" % mrs(q) if q in med else "–",
            x(med[q], med[k]) if k in med and q in med else "–",
            " / ".join("%.1f" % rss[n] if n in rss else "–" for n in (d, k, q))))
    p("")
    p("Dump throughput per codec: " + ", ".join("%s %.2f M records/s" % (c, mrs("dump-" + c)) for c in codecs) + ".")
    p("")
    slow = [c for c in codecs if "klog-" + c in med and "kp-" + c in med and med["klog-" + c] > med["kp-" + c]]
    if any("kp-" + c in med for c in codecs):
        p("klog_decode vs kafka_protocol_decode per codec: " + (
            "klog is as fast or faster for every codec." if not slow else "kafka-protocol is faster for " + ", ".join(slow) + "."))
        p("")

# `cat` of page-cached files costs about as much wall time as CPU time; a
# run whose `cat` waited much longer in the median read from the disk (the
# page cache did not keep the inputs), and its ratios measure the disk, not
# klog. (One slow round of three is the min–max column's to show.)
cold = [n for n in meta if n.startswith("cat")
        and med[n] > 2 * cmed[n] + 0.05]
if cold:
    p("**Warning: the page cache did not hold the inputs in this run** (%s: "
      "wall time far above CPU time): its timings measure the disk; rerun it." % ", ".join(
          "`%s` %.3f s wall for %.3f s CPU" % (meta[n]["shown"], med[n], cmed[n])
          for n in cold))
    p("")
p("## Targets (this run)")
p("")
p("| target | measured | verdict |")
p("|---|---:|---|")
for t, m, ok in targets:
    p("| %s | %s | %s |" % (t, m, "met" if ok else "**not met**"))
print("\n".join(out))
PY

REPORT="$WORK/report.md"
{
    echo "# klog read-path benchmark"
    echo
    echo "Generated by \`tests/bench/run.sh$( ((SMOKE)) && echo ' --smoke')\`; do not edit by hand."
    echo
    echo "- Date: $(date -u '+%Y-%m-%d %H:%M:%S UTC')"
    echo "- Machine: nproc = $NPROC, CPU: $CPU_MODEL, $MEM_GIB GiB RAM; load average $LOADAVG_START at start, $LOADAVG_END at end"
    [[ -z "$PAGEOUT_NOTE" ]] || echo "  - $PAGEOUT_NOTE"
    echo "- klog: $KLOG_VERSION, release build, git $GIT_REV"
    echo "- One segment: $FILE_BYTES bytes ($(python3 -c "print(f'{$FILE_BYTES / 2**20:.1f}')") MiB), $RECORDS records in $BATCHES batches (uncompressed, keys \`k<N>\`, 100-byte values, seed $BENCH_SEED), written by \`klog produce --batch-size 500 --producer-id 1 --producer-epoch 0 --base-sequence 0\` in ${GEN_SECS} s (one fdatasync per batch)"
    [[ -z "$DEEP_NOTE" ]] || echo "  - $DEEP_NOTE"
    echo "- Partitions for --jobs: $BENCH_PARTITIONS partition folders of one segment, for each size in MiB of: $BENCH_JOB_SIZES; in each, one written by \`klog produce\`, the others copies of its folder (${PARTS_SECS} s in all)"
    echo "- Offsets: $OFFSETS_RECORDS OffsetCommit records over $OFFSETS_KEYS keys in batches of 1,000 (${OFFSETS_SECS} s); lag: $LAG_PARTITIONS partitions of one segment, $LAG_END records each, groups \`near\` (5 records behind each partition's end) and \`far\` (at offset 5) (${LAG_SECS} s)"
    [[ -z "$MEM_NOTE" ]] || echo "- $MEM_NOTE"
    echo "- Codecs: the same $CODEC_RECORDS records through \`klog produce --compression CODEC\` for $BENCH_CODECS (${CODECS_SECS} s). The values are random alphanumerics, so they compress little: this measures what decompression costs, not what it saves."
    echo "- Method: page cache warmed with \`cat\` of every input before each round; $BENCH_ROUNDS interleaved round(s) of all $NCMD commands (order rotated each round), medians shown; timed with $TOOL. Every command's stdout goes to /dev/null. CPU s = median user + system time. MB = 10^6 bytes. Peak RSS from one extra run with $RSS_TOOL."
    echo "- Whole script (build, generation, timing): ${ELAPSED} s"
    echo
    cat "$WORK/tables.md"
} > "$REPORT"

echo
cat "$REPORT"
if [[ -n "$BENCH_OUT" ]]; then
    mkdir -p "$(dirname "$BENCH_OUT")"
    # tests/bench/export.sh's section (between its markers) is its own:
    # kept at the end, as it was.
    if [[ -f "$BENCH_OUT" ]] && grep -q '^<!-- export.sh: ' "$BENCH_OUT"; then
        sed -n '/^<!-- export.sh: /,/^<!-- \/export.sh -->/p' "$BENCH_OUT" > "$WORK/export-section.md"
        { cat "$REPORT"; echo; cat "$WORK/export-section.md"; } > "$BENCH_OUT"
    else
        cp "$REPORT" "$BENCH_OUT"
    fi
    log "wrote $BENCH_OUT"
fi
log "done in $(( $(date +%s) - START_TS )) s"
