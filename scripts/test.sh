#!/usr/bin/env bash
# Sets up everything, builds, and runs all tests, in two stages (docs/testing.md):
#  1. the normal build (build/, the web console in build/web): ctest labels unit (the console's
#     own included), db, e2e and browser against a throwaway PostgreSQL cluster, which is
#     stopped and removed whatever happens;
#  2. the sanitizer build (build-asan/, clang): the unit tests under AddressSanitizer and
#     UndefinedBehaviorSanitizer, then each fuzz target (label fuzz) for
#     CRONWHEEL_FUZZ_SECONDS seconds (default 20; 0 replays the seed corpora only).
#     CRONWHEEL_TEST_SANITIZERS=0 skips this stage.
# Extra arguments go to every ctest run, e.g. `scripts/test.sh -L unit` or
# `scripts/test.sh -R Cron`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scripts/setup.sh

build=${CRONWHEEL_BUILD_DIR:-$root/build}
asan_build=${CRONWHEEL_ASAN_BUILD_DIR:-$root/build-asan}
jobs=$(nproc)
fuzz_seconds=${CRONWHEEL_FUZZ_SECONDS:-20}

stage_start=$SECONDS
stage_done() { echo "== $1: $((SECONDS - stage_start)) s"; stage_start=$SECONDS; }

# Optimized as in production, with line tables only (-g1: backtraces name file:line, and the
# build is a fifth quicker than with full debug information).
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" >/dev/null
cmake --build "$build" -j "$jobs"
. scripts/lib/console.sh
console_build "$build"
stage_done "build"

. scripts/lib/pg.sh
pgdir=$(mktemp -d /tmp/cronwheel-test-pg.XXXXXX)
cleanup() {
  pg_stop "$pgdir/data"
  rm -rf "$pgdir"
}
trap cleanup EXIT
chmod 755 "$pgdir"
pg_init "$pgdir/data"
# Durability is not under test here; speed is welcome.
port=$(pg_start_free "$pgdir/data" "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
echo "PostgreSQL for tests on 127.0.0.1:$port"
export CRONWHEEL_TEST_DB_URL="postgresql://cronwheel@127.0.0.1:$port/postgres"

ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600 "$@"
stage_done "tests"

if [ "${CRONWHEEL_TEST_SANITIZERS:-1}" = 0 ]; then
  exit 0
fi

# One clang build for both: every object carries ASan, UBSan and libFuzzer's coverage; the
# unit tests link the sanitizers, the fuzz targets libFuzzer too. Only the unit test binaries
# and the fuzz targets are built. The code under test is built at -O1 with line tables only
# (quick to build, and stack traces still name file:line); the tests' own code at -O0.
cmake -S "$root" -B "$asan_build" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
  "-DCMAKE_CXX_FLAGS_DEBUG=-O1 -gline-tables-only" -DCRONWHEEL_BUILD_BENCHMARKS=OFF \
  -DCRONWHEEL_SANITIZE=ON -DCRONWHEEL_FUZZ=ON >/dev/null
cmake --build "$asan_build" -j "$jobs" --target unit_tests fuzz_targets
stage_done "sanitizer build"

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/bin/llvm-symbolizer-14}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
ctest --test-dir "$asan_build" --output-on-failure -j "$jobs" --timeout 600 -L '^unit$' "$@"
stage_done "unit tests under ASan and UBSan"

fuzz_timeout=$((fuzz_seconds + 300))
CRONWHEEL_FUZZ_SECONDS=$fuzz_seconds \
  ctest --test-dir "$asan_build" --output-on-failure -j "$jobs" --timeout "$fuzz_timeout" -L '^fuzz$' "$@"
stage_done "fuzz targets, ${fuzz_seconds} s each"
