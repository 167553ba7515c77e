#!/usr/bin/env bash
# Run every fuzz target (or those named), one job, one after the other,
# after seeding the corpora from the fixtures:
#   tests/fuzz/run.sh [SECONDS] [TARGET...]     each for SECONDS (default 180)
#   tests/fuzz/run.sh --runs N [TARGET...]      each for N executions
# Needs cargo-fuzz (`cargo install cargo-fuzz`). Only a stable toolchain is
# needed: RUSTC_BOOTSTRAP=1 lets cargo-fuzz use its nightly flags
# (-Zsanitizer=address). SANITIZER=none builds without ASan (debug
# assertions and overflow checks stay on: `-a`, and the release profile of
# tests/fuzz/Cargo.toml). TRACE_COMPARES=0 builds without libFuzzer's
# comparison tracing (about twice the executions a second, at the cost of
# its guidance toward magic values). MAX_LEN=N overrides each target's input
# bound below. The segment and partition targets write their files under
# TMPDIR: a tmpfs (TMPDIR=/dev/shm) spares the disk. Each run's output is
# in tests/fuzz/artifacts/<target>.log; findings land in
# tests/fuzz/artifacts/<target>/; minimise one with
#   cargo fuzz tmin -O -a --fuzz-dir tests/fuzz TARGET ARTIFACT
# and keep it as tests/fuzz/regressions/<target>/<name>.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [[ "${1:-}" == -h || "${1:-}" == --help ]]; then
    sed -n '2,/^set -euo/p' tests/fuzz/run.sh | sed '$d; s/^# \{0,1\}//'
    exit 0
fi
limit=(-max_total_time=180)
if [ "${1:-}" = --runs ]; then
    limit=(-runs="$2")
    shift 2
elif [ $# -gt 0 ] && [[ $1 =~ ^[0-9]+$ ]]; then
    limit=(-max_total_time="$1")
    shift
fi
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(batch records offsets segment partition)
for t in "${targets[@]}"; do
    [ -f "tests/fuzz/fuzz_targets/$t.rs" ] || { echo "run.sh: no fuzz target '$t' (see --help)" >&2; exit 2; }
done
export RUSTC_BOOTSTRAP=1 CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
san=(--sanitizer "${SANITIZER:-address}")
[ "${TRACE_COMPARES:-1}" = 1 ] || san+=(--no-trace-compares)
mkdir -p tests/fuzz/artifacts
bash tests/fuzz/seed.sh
cargo fuzz build -O -a "${san[@]}" --fuzz-dir tests/fuzz
# The largest input each target is given: a batch or a records section of a
# few records, one internal-topic value or index, a segment or a small
# partition of a few dozen batches (most fixture segments are under 6 KiB).
max_len() {
    case $1 in
        batch | records) echo 16384 ;;
        offsets) echo 4096 ;;
        segment | partition) echo 16384 ;;
        *) echo 4096 ;;
    esac
}
for t in "${targets[@]}"; do
    len=${MAX_LEN:-$(max_len "$t")}
    echo "== $t: ${limit[*]} -max_len=$len ${san[*]}"
    cargo fuzz run -O -a "${san[@]}" --fuzz-dir tests/fuzz "$t" -- \
        "${limit[@]}" -max_len="$len" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        2>&1 | tee "tests/fuzz/artifacts/$t.log" | grep -E '^(Done|stat::|==|INFO: seed)|panicked|ERROR' || true
done
