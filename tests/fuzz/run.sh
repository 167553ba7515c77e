#!/usr/bin/env bash
# Run every fuzz target (or those named) for a bounded time each, one job,
# one after the other, after seeding the corpora from the fixtures.
#   tests/fuzz/run.sh [SECONDS] [TARGET...]      (default: 180 s, all four)
# Needs cargo-fuzz (`cargo install cargo-fuzz`). Only a stable toolchain is
# needed: RUSTC_BOOTSTRAP=1 lets cargo-fuzz use its nightly flags
# (-Zsanitizer=address). Add SANITIZER=none to build without ASan.
# Findings land in tests/fuzz/artifacts/<target>/; minimise one with
#   cargo fuzz tmin -O -a --fuzz-dir tests/fuzz TARGET ARTIFACT
# and keep it as tests/fuzz/regressions/<target>/<name>.
set -euo pipefail
cd "$(dirname "$0")/../.."
secs=${1:-180}
shift || true
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(batch records offsets segment)
export RUSTC_BOOTSTRAP=1 CARGO_BUILD_JOBS=${CARGO_BUILD_JOBS:-1}
san=(--sanitizer "${SANITIZER:-address}")
mkdir -p tests/fuzz/artifacts
bash tests/fuzz/seed.sh
cargo fuzz build -O -a "${san[@]}" --fuzz-dir tests/fuzz
for t in "${targets[@]}"; do
    echo "== $t: ${secs}s"
    cargo fuzz run -O -a "${san[@]}" --fuzz-dir tests/fuzz "$t" -- \
        -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
        2>&1 | tee "tests/fuzz/artifacts/$t.log" | grep -E '^(Done|stat::|==|INFO: seed)|panicked|ERROR' || true
done
