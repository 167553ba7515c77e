#!/usr/bin/env bash
# The hostile-input attacks at full size, each timed and measured: run
# before a release, at low priority:
#   nice -n 10 tests/hostile/soak.sh [WORK_DIR]
# tests/hostile/*.rs (cargo test) runs small versions of the same attacks
# in seconds; this runs the slow ones as they were found: 1 GiB segments
# with 4 and 16 MiB of random bytes in the middle, 400 MB of junk after a
# torn header, gzip wrappers of 10 M messages, 26 M and 35 M records in one
# batch, a 200 MiB record, a 2 GiB batch, diff of two 1 GiB copies, and 200
# rounds of SIGKILL during produce; then one quick run of every other item,
# a write failing past `ulimit -f` and writers meeting hard-linked files
# among them.
#
# Each attack prints one Markdown table row: item | attack | exit | wall s |
# peak RSS MiB | what klog said (a phrase that must appear in its output).
# A row whose exit status or phrase is not the expected one is marked
# UNEXPECTED and the script exits 1. Peak RSS comes from wait4 through
# tests/hostile/peak.py. Needs python3 and cargo; about 3 GB free in
# WORK_DIR (default: a temporary folder, removed at the end); root for the
# ENOSPC case (a 1 MiB tmpfs; skipped otherwise). klog is built with
# `cargo build --release`; the SIGKILL soak is tests/cli/crash.rs with
# KLOG_CRASH_ROUNDS=200, in the default profile. SOAK_SCALE=N divides every
# size and count by N (a quick check of the script itself).
set -uo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
cd "$repo"
cargo build -q --release || exit 2
K=$repo/target/release/klog
PEAK=$repo/tests/hostile/peak.py
if [ $# -gt 0 ]; then
    work=$1
    mkdir -p "$work"
else
    work=$(mktemp -d "${TMPDIR:-/tmp}/klog-soak.XXXXXX")
    trap 'rm -rf "$work"' EXIT
fi
cd "$work" || exit 2
failures=0
rows=()
scale=${SOAK_SCALE:-1}

# row ITEM ATTACK EXIT SECS PEAK_KIB TEXT
row() {
    local line
    line=$(printf '| %s | %s | %s | %s | %s | %s |' "$1" "$2" "$3" "$4" "$(($5 / 1024))" "$6")
    rows+=("$line")
    echo "$line"
}

# run ITEM ATTACK EXPECTED_EXIT PHRASE [--stdin FILE] -- COMMAND...
# Runs COMMAND through peak.py (stdout and stderr to files), checks the exit
# status and that PHRASE (an extended regex) occurs in stdout or stderr.
run() {
    local item=$1 attack=$2 want=$3 phrase=$4
    shift 4
    local stdin=()
    if [ "$1" = --stdin ]; then
        stdin=(--stdin "$2")
        shift 2
    fi
    [ "$1" = -- ] && shift
    local cost code secs peak said
    cost=$(python3 "$PEAK" "$work/out" "$work/err" "${stdin[@]}" "$@")
    code=$(python3 -c 'import json,sys; c=json.loads(sys.argv[1]); print(c["code"] if c["code"] is not None else "signal %s" % c["signal"])' "$cost")
    secs=$(python3 -c 'import json,sys; print("%.2f" % json.loads(sys.argv[1])["secs"])' "$cost")
    peak=$(python3 -c 'import json,sys; print(json.loads(sys.argv[1])["peak_kib"])' "$cost")
    said=$(cat "$work/out" "$work/err" | grep -a -m1 -oE "$phrase" | head -n1 | head -c 160)
    if [ "$code" != "$want" ] || [ -z "$said" ]; then
        said="UNEXPECTED (wanted exit $want and /$phrase/): $(head -c 300 "$work/err")"
        failures=$((failures + 1))
    fi
    row "$item" "$attack" "$code" "$secs" "$peak" "${said//|/\\|}"
}

# ---------------------------------------------------------------- inputs
cat > gen.py <<'PY'
"""Attack files, built with fixtures/encoder.py (independent of klog)."""
import gzip, os, struct, sys
sys.path.insert(0, os.path.join(sys.argv[1], "fixtures"))
from encoder import *

def seg(folder, data, name="00000000000000000000.log"):
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)

def clean_segment(path, size, junk_at=None, junk=0):
    """Batches of one 16 KiB record (baseOffset patched: it lies outside the
    CRC) up to `size` bytes; `junk` random bytes inserted at the first batch
    boundary past `junk_at`."""
    one = batch(0, [(0, 0, None, os.urandom(16 << 10))], first_timestamp=1700000000000)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as f:
        written, i = 0, 0
        while written + len(one) <= size:
            if junk and junk_at is not None and written >= junk_at:
                f.write(os.urandom(junk))
                junk_at = None
            f.write(struct.pack(">q", i) + one[8:])
            written += len(one)
            i += 1

def legacy_bomb(n):
    inner = legacy_message(0, None, magic=0) * n
    return legacy_message(0, gzip.compress(inner, mtime=0), magic=0, attributes=GZIP)

def records_batch(section, n, last_offset_delta):
    packed = gzip.compress(section, compresslevel=1, mtime=0)
    head = bytearray(batch(0, [(0, 0, None, None)], last_offset_delta=last_offset_delta)[:61])
    head[21:23] = struct.pack(">h", 1)
    head[57:61] = struct.pack(">i", n)
    head[8:12] = struct.pack(">i", 49 + len(packed))
    head[17:21] = struct.pack(">I", crc32c(bytes(head[21:]) + packed))
    return bytes(head) + packed

what = sys.argv[2]
if what == "segment":
    size, junk_at, junk = (int(x) for x in sys.argv[4:7])
    clean_segment(sys.argv[3], size, junk_at, junk)
elif what == "torn":
    # 64 MiB of batches, the first 30 bytes of one more, then 400 MB of junk
    # (each divided by the scale).
    path, scale = sys.argv[3], int(sys.argv[4])
    clean_segment(path, (64 << 20) // scale)
    head = batch(1 << 20, [(0, 0, None, b"x" * 1000)])[:30]
    with open(path, "ab") as f:
        f.write(head)
        for _ in range(400 // scale):
            f.write(os.urandom(1000 * 1000))
elif what == "legacy":
    n = int(sys.argv[4])
    seg(sys.argv[3], legacy_bomb(n))
elif what == "records":
    # n records of null key and value in one gzip batch: offset deltas
    # 0..n-1, or all 0 (refused: deltas must increase).
    n, increasing = int(sys.argv[4]), sys.argv[5] == "1"
    if increasing:
        section = b"".join(record(i, 0, None, None) for i in range(n))
        seg(sys.argv[3], records_batch(section, n, n - 1))
    else:
        seg(sys.argv[3], records_batch(record(0, 0, None, None) * n, n, n - 1))
elif what == "big":
    seg(sys.argv[3], batch(0, [(0, 0, None, bytes(int(sys.argv[4])))],
                           first_timestamp=1700000000000))
elif what == "lines":
    # n lines of `size` bytes on stdout.
    n, size = int(sys.argv[3]), int(sys.argv[4])
    line = b"x" * size + b"\n"
    out = sys.stdout.buffer
    try:
        for _ in range(n):
            out.write(line)
    except BrokenPipeError:
        pass
elif what == "deltas":
    seg(sys.argv[3], batch(0, [(0, 0, None, b"v")] * 3, last_offset_delta=2))
PY
gen() { python3 gen.py "$repo" "$@"; }
cp -a "$repo/fixtures" fixtures

echo "| item | attack | exit | wall s | peak RSS MiB | what klog said |"
echo "|---|---|---:|---:|---:|---|"

# ---------------------------------------------------- 5: resync, 1 GiB
GiB=$(((1 << 30) / scale))
gen segment big/t-0/00000000000000000000.log $GiB 0 0
run 5 "1 GiB clean segment (baseline)" 0 "ok: checked 1 file" -- \
    "$K" verify-crc --no-index-checks big/t-0
for mib in 4 16; do
    rm -rf junk
    gen segment junk/t-0/00000000000000000000.log $GiB $((GiB / 2)) $(((mib << 20) / scale))
    run 5 "1 GiB segment, $mib MiB of random bytes in the middle" 1 \
        "valid batches resume at position [0-9]+" -- "$K" verify-crc --no-index-checks junk/t-0
done
rm -rf junk
gen torn torn/t-0/00000000000000000000.log "$scale"
cp -a torn copy-torn
run 5 "400 MB of junk after a torn header: verify-crc" 1 \
    "(crc_mismatch|torn_tail|size_too_small|bad_magic)[^;]*" -- "$K" verify-crc --no-index-checks torn/t-0
run 8 "the same: verify-crc --repair (400 MB moved to a sidecar)" 0 \
    "will move [0-9]+ bytes" -- "$K" verify-crc --repair torn/t-0
run 7 "diff of the torn copy and its repaired copy" 1 "verdict: keep B[^(]*" -- \
    "$K" diff copy-torn/t-0 torn/t-0
rm -rf torn copy-torn

# ------------------------------------------------------- 7: diff, 1 GiB
mkdir -p copy && cp -a big/t-0 copy/t-0
run 7 "diff of two identical 1 GiB copies" 0 "verdict: identical" -- "$K" diff big/t-0 copy/t-0
size=$(stat -c %s copy/t-0/00000000000000000000.log)
printf 'x' | dd of=copy/t-0/00000000000000000000.log bs=1 seek=$((size - 100)) conv=notrunc status=none
run 7 "diff of two 1 GiB copies, one byte of the last batch changed" 1 "verdict: keep A[^,]*" -- \
    "$K" diff big/t-0 copy/t-0
rm -rf copy big

# -------------------------------------------------- 6: amplification
m=$((10000000 / scale))
gen legacy bomb/t-0 $m
run 6 "gzip wrapper of $m empty magic-0 messages ($(stat -c %s bomb/t-0/00000000000000000000.log) bytes, $((m * 26 >> 20)) MiB decompressed): verify-crc" 0 \
    "ok: checked 1 file, 1 batch, $m records" -- "$K" verify-crc bomb/t-0
run 6 "the same: dump-segment --format json" 0 '"offset":0,"timestamp":-1' -- \
    "$K" dump-segment --format json bomb/t-0
run 6 "the same: dump-segment --records" 0 "offset: 0 NoTimestampType" -- \
    "$K" dump-segment --records bomb/t-0
run 6 "the same: stats" 0 "$m" -- "$K" stats bomb/t-0
for p in 1 2 3; do mkdir -p bombs && cp -a bomb/t-0 "bombs/t-$p"; done
mv bomb/t-0 bombs/t-0
run 6 "four copies: verify-crc --jobs 4" 0 "$((4 * m)) records" -- \
    "$K" verify-crc --jobs 4 --no-index-checks bombs
rm -rf bomb bombs
n=$((26000000 / scale))
gen records recs/t-0 $n 1
run 6 "$n records (offset deltas 0..$((n - 1))) in one gzip batch of $(stat -c %s recs/t-0/00000000000000000000.log) bytes: dump-segment --format json" 0 \
    "\"offset\":$((n - 1))" -- "$K" dump-segment --format json recs/t-0
run 6 "the same: verify-crc" 0 "$n records" -- "$K" verify-crc recs/t-0
mkdir -p offs && mv recs/t-0 offs/__consumer_offsets-0
run 6 "the same batch as __consumer_offsets-0 (every key null): replay-offsets" 1 \
    "and $((n - 1000)) more records that do not decode" -- "$K" replay-offsets offs
rm -rf recs offs
n=$((35000000 / scale))
gen records recs/t-0 $n 0
run 6 "$n records, offset deltas all 0, in one gzip batch of $(stat -c %s recs/t-0/00000000000000000000.log) bytes: dump-segment --format json" 1 \
    "offset_delta_not_increasing|offset delta [^,]*" -- "$K" dump-segment --format json recs/t-0
rm -rf recs
n=$((1000000 / scale))
gen records recs/t-0 $n 1
run 6 "$n records in one gzip batch: dump-segment --layout --format json" 0 "record $((n - 1))" -- \
    "$K" dump-segment --layout --format json recs/t-0
rm -rf recs
gen big huge/t-0 $(((200 << 20) / scale))
run 6 "one record of $((200 / scale)) MiB (zero bytes): dump-segment --format json" 0 '"value":"\\u0000' -- \
    "$K" dump-segment --format json huge/t-0
run 6 "the same: dump-segment --records" 0 'value: "\\u0000' -- "$K" dump-segment --records huge/t-0
run 6 "the same: dump-segment --layout --format json" 0 '"field":"value"' -- \
    "$K" dump-segment --layout --format json huge/t-0
rm -rf huge

# ------------------------------------------------------ 1: 2 GiB batch
mkfifo lines
gen lines $((2100 / scale)) $((1 << 20)) > lines &
run 1 "$((2100 / scale)) lines of 1 MiB, --batch-size 5000" 2 "over the limit of [0-9]+[^;]*" --stdin lines -- \
    "$K" produce data1 --topic big --batch-size 5000
wait
if [ "$scale" -eq 1 ]; then
    # Refused once the batch passes 2^31 - 1 bytes: about 2 GiB is read first.
    rm -f lines && mkfifo lines
    gen lines 2100 $((1 << 20)) > lines &
    run 1 "the same with --max-message-bytes 2147483647 (i32::MAX)" 2 "over the limit of [0-9]+[^;]*" \
        --stdin lines -- "$K" produce data1 --topic big --batch-size 5000 --max-message-bytes 2147483647
    wait
fi
rm -f lines
[ ! -e data1/big-0 ] || [ "$(du -sb data1/big-0 | cut -f1)" -lt 100000 ] ||
    { echo "produce wrote a refused batch" >&2; failures=$((failures + 1)); }

# ------------------------------------------------ the other items, once
run 2 "commit --group of 40,000 bytes" 2 "is 40000 bytes; an offsets record holds at most 32767" -- \
    "$K" commit data2 --group "$(head -c 40000 /dev/zero | tr '\0' g)" --topic t --partition 0 --offset 1
run 3 "produce --segment-bytes 4294967296" 2 "invalid value .*" -- \
    "$K" produce data3 --topic t --segment-bytes 4294967296
if mkdir -p full && mount -t tmpfs -o size=1m tmpfs full 2>/dev/null; then
    for r in r1 r2; do cp -a fixtures/groups "$r"; done
    cp -a fixtures/groups full/r3 2>/dev/null
    head -c 2000000 /dev/zero > full/filler 2>/dev/null
    before=$(cat r1/__offsets-0/*.log | cksum)
    run 4 "tombstone r1 --replica r2 --replica r3, r3 on a full filesystem" 2 "bytes free[^:]*: nothing was written to any replica" -- \
        "$K" tombstone r1 --replica r2 --replica full/r3 --group kitchen
    [ "$(cat r1/__offsets-0/*.log | cksum)" = "$before" ] ||
        { echo "tombstone wrote r1 before refusing" >&2; failures=$((failures + 1)); }
    umount full
else
    echo "(item 4 skipped: mounting a tmpfs needs root)" >&2
fi
mkfifo fixtures/txn/payments-0/00000000000000000000.index.fifo
rm fixtures/txn/payments-0/00000000000000000000.index
mv fixtures/txn/payments-0/00000000000000000000.index.fifo fixtures/txn/payments-0/00000000000000000000.index
run 9 "a FIFO in place of an .index" 1 "00000000000000000000.index:0 error not_regular_file" -- \
    "$K" verify-crc fixtures/txn/payments-0
head -c 16 /dev/zero >> fixtures/data/orders-0/00000000000000000000.index
ln -s "$work/outside" fixtures/data/orders-0/00000000000000000000.index.klog-tmp
echo precious > outside
run 10 "a symlink at the index's temporary name during --repair" 2 "does not write through symlinks" -- \
    "$K" verify-crc --repair fixtures/data/orders-0
grep -q precious outside || { echo "the symlink target was written" >&2; failures=$((failures + 1)); }
mkdir -p data11 && cp -a fixtures/truncated other11 && ln -s "$work/other11/orders-0" data11/orders-0
run 11 "a partition folder symlinked from another data directory" 2 "outside the locked data directory" -- \
    "$K" produce data11 --topic orders
mkdir -p data12 && cp -a fixtures/data/orders-0 data12/ && mkdir "data12/$(printf 't\xff-0')"
ln -s "$work/nowhere" data12/orders-0/00000000000000000200.log
run 12 "a non-UTF-8 partition folder and a dangling 200.log" 1 "not_a_partition_folder is a folder whose name is not UTF-8" -- \
    "$K" verify-crc --no-index-checks data12
gen deltas data13/t-0
run 13 "record offset deltas 0, 0, 0 in a CRC-valid batch" 1 "offset_delta_not_increasing" -- \
    "$K" verify-crc --records --no-index-checks data13/t-0
printf '\x01' | dd of=fixtures/txn/payments-0/00000000000000000000.log bs=1 seek=320 conv=notrunc status=none
run 14 "one flipped byte in fixtures/txn: transactions" 1 "00000000000000000000.log:250 error crc_mismatch" -- \
    "$K" transactions --now-ms 1700000000000 fixtures/txn/payments-0
mkdir -p data15/t-0 && cp "$repo/tests/fuzz/regressions/segment/i64-max-base-offset.log" data15/t-0/00000000000000000000.log
run 15 "a batch at baseOffset 2^63-1 with offsets past it" 1 "offset_overflow" -- \
    "$K" verify-crc --no-index-checks data15/t-0
run 15 "transactions --now-ms=-9223372036854775808" 2 "invalid value .*" -- \
    "$K" transactions --now-ms=-9223372036854775808 fixtures/txn
"$K" group-demo --dir demo --keep --now-ms 1700000000000 > /dev/null 2>&1
echo "mine" | "$K" produce demo --topic orders > /dev/null
before=$(cat demo/orders-0/*.log | cksum)
run 16 "group-demo again over a kept run the user produced into" 2 "[^.]*changed[^.]*" -- \
    "$K" group-demo --dir demo --now-ms 1700000000000
[ "$(cat demo/orders-0/*.log | cksum)" = "$before" ] ||
    { echo "group-demo removed the user's records" >&2; failures=$((failures + 1)); }
run 17 "produce --topic of 250 characters" 2 "topic name of 250 characters: Kafka allows at most 249" -- \
    "$K" produce data17 --topic "$(head -c 250 /dev/zero | tr '\0' t)"

# ------------------------------------------- write failures and hard links
# A write that fails half done (a file size limit: EFBIG) is cut back to
# the lengths before it and synced; nothing torn is left for later writers.
# "Now" is a minute after the fixture's commits: a later one would roll a
# new segment (segment.ms), and the batch would fit under the limit there.
mkdir -p fsz && cp -a fixtures/groups fsz/g
sizes() { stat -c '%n %s' "$1"/* | sort; }
before=$(sizes fsz/g/__offsets-0)
run 36.2 "commit past ulimit -f 2 (EFBIG, SIGXFSZ ignored)" 2 "rolled back: nothing of this append remains" -- \
    bash -c 'ulimit -f 2; trap "" XFSZ; exec "$0" "$@"' "$K" commit fsz/g --group kitchen --topic orders \
    --partition 0 --offset 3 --now-ms 1700000100000 --metadata "$(head -c 1000 /dev/zero | tr '\0' m)"
[ "$(sizes fsz/g/__offsets-0)" = "$before" ] ||
    { echo "the failed append left bytes behind" >&2; failures=$((failures + 1)); }
run 36.2 "the same commit without the limit" 0 "committed at" -- \
    "$K" commit fsz/g --group kitchen --topic orders --partition 0 --offset 3 --now-ms 1700000100000
# A writer never changes a file under another name (cp -al).
cp -a fixtures/truncated hl && cp -al hl hl-backup
before=$(cksum < hl-backup/orders-0/00000000000000000090.log)
run 36.3 "verify-crc --repair of a directory with a cp -al backup" 2 "has 2 hard links" -- \
    "$K" verify-crc --repair hl
run 36.3 "the same with --copy-hard-linked" 0 "repair: wrote" -- \
    "$K" verify-crc --repair --copy-hard-linked hl
[ "$(cksum < hl-backup/orders-0/00000000000000000090.log)" = "$before" ] ||
    { echo "repair cut the backup's log" >&2; failures=$((failures + 1)); }
cp -a fixtures/groups hg && cp -al hg hg-backup
before=$(cksum < hg-backup/__offsets-0/00000000000000000000.log)
run 36.3 "commit into a hard-linked offsets log" 2 "has 2 hard links" -- \
    "$K" commit hg --group kitchen --topic orders --partition 0 --offset 3
run 36.3 "the same with --copy-hard-linked" 0 "committed at" -- \
    "$K" commit hg --group kitchen --topic orders --partition 0 --offset 3 --copy-hard-linked
[ "$(cksum < hg-backup/__offsets-0/00000000000000000000.log)" = "$before" ] ||
    { echo "commit wrote through the backup's link" >&2; failures=$((failures + 1)); }

# ------------------------------------------------- SIGKILL soak of produce
cd "$repo" || exit 2
started=$(date +%s)
rounds=$((200 / scale))
[ "$rounds" -ge 30 ] || rounds=30
summary=$(KLOG_CRASH_ROUNDS=$rounds cargo test -q --test cli kill_9_during_produce_loses_no_acknowledged_record \
    -- --nocapture 2>&1)
status=$?
said=$(echo "$summary" | grep -m1 -oE "$rounds rounds killed with SIGKILL[^;]*")
[ $status -eq 0 ] && [ -n "$said" ] || { said="UNEXPECTED: $(echo "$summary" | tail -5)"; failures=$((failures + 1)); }
row "crash" "SIGKILL of produce, $rounds rounds (tests/cli/crash.rs)" "$status" "$(($(date +%s) - started))" 0 "$said"

echo
echo "$failures unexpected"
[ "$failures" -eq 0 ]
