#!/usr/bin/env bash
# Sets up everything, builds, and runs all tests, in two stages (docs/testing.md):
#  1. the normal build (build/, the web console in build/web): ctest labels db, e2e, browser and
#     the console's unit tests against a throwaway PostgreSQL cluster and a throwaway MariaDB
#     server (XXL-JOB's database for the importer's tests), which are stopped and removed
#     whatever happens;
#  2. the sanitizer build (build-asan/, clang): the unit tests (tests/unit) under
#     AddressSanitizer and UndefinedBehaviorSanitizer, and beside them each fuzz target (label
#     fuzz) for CRONWHEEL_FUZZ_SECONDS seconds (default 20; 0 replays the seed corpora only).
#     CRONWHEEL_TEST_SANITIZERS=0 skips this stage, and the unit tests then run in stage 1. Its
#     build compiles while stage 1 builds and runs its tests, at the lowest CPU priority (below).
#     The unit tests run once, there: the normal build is configured without them
#     (CRONWHEEL_BUILD_UNIT_TESTS=OFF; configure build/ with it ON to have them there too).
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

sanitizers=${CRONWHEEL_TEST_SANITIZERS:-1}
asan_pid=""
asan_log=""
fuzz_pid=""
fuzz_log=""
tests_pid=""
tests_log=""

. scripts/lib/pg.sh
. scripts/lib/mariadb.sh
pgdir=$(mktemp -d /tmp/cronwheel-test-pg.XXXXXX)
mariadbdir=$(mktemp -d /tmp/cronwheel-test-mariadb.XXXXXX)
cleanup() {
  for pid in "$asan_pid" "$fuzz_pid" "$tests_pid"; do
    if [ -n "$pid" ]; then
      kill -TERM -- "-$pid" 2>/dev/null || true
      wait "$pid" 2>/dev/null || true
    fi
  done
  [ -z "$asan_log" ] || rm -f "$asan_log"
  [ -z "$fuzz_log" ] || rm -f "$fuzz_log"
  [ -z "$tests_log" ] || rm -f "$tests_log"
  pg_stop "$pgdir/data"
  rm -rf "$pgdir"
  mariadb_stop "$mariadbdir/server"
  rm -rf "$mariadbdir"
}
trap cleanup EXIT

# The sanitizer build compiles while the normal build and the tests below run. The normal
# build leaves CPU idle while it links and builds the console, and the tests spend much of
# their time waiting (on the processes they start, on deadlines, on the network); the sanitizer
# build, at nice 19, takes only the CPU they leave: a compiler or a test that wants a core gets
# it (a nice-19 process weighs 15 against a normal one's 1024), so they run as on an otherwise
# idle machine. One clang build for both uses: every object carries ASan and UBSan, and every
# library's libFuzzer's coverage; the unit tests link the sanitizers, the fuzz targets libFuzzer
# too. Only the unit
# test binaries and the fuzz targets are built, all at -O0 with line tables only (stack traces
# still name file:line): clang compiles sanitized code about twice as fast at -O0 as at -O1, and
# the build's CPU is what the whole run waits for, while the fuzzers run about half as many inputs
# in their time (docs/testing.md, "Fuzzing for longer", for real fuzzing). In a process group of
# its own (job control on while it starts), so that a failure or an interrupt stops all of it.
if [ "$sanitizers" != 0 ]; then
  asan_log=$(mktemp /tmp/cronwheel-asan-build.XXXXXX)
  asan_started=$SECONDS
  set -m
  CW_ROOT=$root CW_ASAN_BUILD=$asan_build CW_JOBS=$jobs nice -n 19 bash -c '
    cmake -S "$CW_ROOT" -B "$CW_ASAN_BUILD" -DCMAKE_CXX_COMPILER=clang++-14 -DCMAKE_BUILD_TYPE=Debug \
      "-DCMAKE_CXX_FLAGS_DEBUG=-O0 -gline-tables-only" -DCRONWHEEL_BUILD_BENCHMARKS=OFF -DCRONWHEEL_BUILD_UNIT_TESTS=ON \
      -DCRONWHEEL_SANITIZE=ON -DCRONWHEEL_FUZZ=ON >/dev/null &&
    cmake --build "$CW_ASAN_BUILD" -j "$CW_JOBS" --target unit_tests fuzz_targets' >"$asan_log" 2>&1 &
  asan_pid=$!
  set +m
fi

# Optimized as in production, with line tables only (-g1: backtraces name file:line, and the
# build is a fifth quicker than with full debug information). Without the unit tests when the
# sanitizer stage runs them: they run once, there, checked by ASan and UBSan as well, and
# compiling them a second time, with g++, was about a third of this build. The optimized build
# keeps the db, e2e and browser tests.
unit_tests_here=ON
[ "$sanitizers" = 0 ] || unit_tests_here=OFF
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O2 -g1 -DNDEBUG" -DCRONWHEEL_BUILD_UNIT_TESTS="$unit_tests_here" >/dev/null
cmake --build "$build" -j "$jobs"
. scripts/lib/console.sh
console_build "$build"
stage_done "build"

chmod 755 "$pgdir"
pg_init "$pgdir/data"
# Durability is not under test here; speed is welcome.
port=$(pg_start_free "$pgdir/data" "-c fsync=off -c synchronous_commit=off -c full_page_writes=off")
echo "PostgreSQL for tests on 127.0.0.1:$port"
export CRONWHEEL_TEST_DB_URL="postgresql://cronwheel@127.0.0.1:$port/postgres"

# MariaDB for the tests of `cronwheel import xxl-job` (they load XXL-JOB's tables into databases
# of their own): a user with a random password, as an XXL-JOB installation would have.
chmod 755 "$mariadbdir"
mariadb_init "$mariadbdir/server"
mysql_port=$(mariadb_start_free "$mariadbdir/server")
mysql_password=$(od -An -N12 -tx1 /dev/urandom | tr -d ' \n')
mariadb_create_user "$mariadbdir/server" cronwheel "$mysql_password"
mariadb_create_database "$mariadbdir/server" cronwheel
echo "MariaDB for tests on 127.0.0.1:$mysql_port"
export CRONWHEEL_TEST_MYSQL_URL="mysql://cronwheel:$mysql_password@127.0.0.1:$mysql_port/cronwheel"

# One test per core: a third at a time saves the tests some 45 s, but the sanitizer build beside
# them (nice 19) then loses 150 s.
if [ "$sanitizers" = 0 ]; then
  ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600 "$@"
  stage_done "tests"
  exit 0
fi

# With the sanitizer stage, the tests run in the background and their output is shown once they
# end: the sanitizer stage starts as soon as its build does, beside the tests' last minutes (the
# browser tests and the package test, alone in ctest, leave a core partly idle), instead of
# after them. Its unit tests hold up on a busy machine as every test must; its fuzzers, whose
# time is fixed, run at nice 10 so the tests come first.
tests_log=$(mktemp /tmp/cronwheel-tests.XXXXXX)
set -m
ctest --test-dir "$build" --output-on-failure -j "$jobs" --timeout 600 "$@" </dev/null >"$tests_log" 2>&1 &
tests_pid=$!
set +m

if ! wait "$asan_pid"; then
  asan_pid=""
  tail -n 60 "$asan_log"
  echo "the sanitizer build failed (above: the end of its output)" >&2
  exit 1
fi
asan_pid=""
if kill -0 "$tests_pid" 2>/dev/null; then
  echo "== sanitizer build: $((SECONDS - asan_started)) s from its start beside the build, the tests still running"
else
  echo "== sanitizer build: $((SECONDS - asan_started)) s from its start beside the build, after the tests"
fi
asan_stage_start=$SECONDS

export ASAN_SYMBOLIZER_PATH=${ASAN_SYMBOLIZER_PATH:-/usr/bin/llvm-symbolizer-14}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1}
# The fuzz targets run beside the unit tests: each fuzzes for a fixed time whatever else runs,
# and the unit tests hold up on a busy machine (docs/testing.md), so the two take the time of
# the longer one. One more fuzzer at a time than there are cores: eight targets take three
# rounds instead of four. The fuzzers' output is shown once both are done.
fuzz_timeout=$((fuzz_seconds + 300))
fuzz_log=$(mktemp /tmp/cronwheel-fuzz.XXXXXX)
set -m
CRONWHEEL_FUZZ_SECONDS=$fuzz_seconds \
  nice -n 10 ctest --test-dir "$asan_build" --output-on-failure -j "$((jobs + 1))" --timeout "$fuzz_timeout" -L '^fuzz$' "$@" \
  >"$fuzz_log" 2>&1 &
fuzz_pid=$!
set +m
unit_status=0
ctest --test-dir "$asan_build" --output-on-failure -j "$jobs" --timeout 600 -L '^unit$' "$@" || unit_status=$?
echo "== unit tests under ASan and UBSan (the fuzz targets beside them): $((SECONDS - asan_stage_start)) s"
fuzz_status=0
wait "$fuzz_pid" || fuzz_status=$?
fuzz_pid=""
cat "$fuzz_log"
echo "== fuzz targets, ${fuzz_seconds} s each: $((SECONDS - asan_stage_start)) s from the sanitizer stage's start"

tests_status=0
wait "$tests_pid" || tests_status=$?
tests_pid=""
cat "$tests_log"
stage_done "tests (the sanitizer stage beside them once its build ended)"
[ "$tests_status" = 0 ] || exit "$tests_status"
[ "$unit_status" = 0 ] || exit "$unit_status"
[ "$fuzz_status" = 0 ] || exit "$fuzz_status"
