#!/usr/bin/env bash
# Sets up everything, builds, and runs all tests (ctest labels unit, db and e2e) against a
# throwaway PostgreSQL cluster, which is stopped and removed whatever happens.
# Extra arguments go to ctest, e.g. `scripts/test.sh -L unit` or `scripts/test.sh -R Cron`.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

scripts/setup.sh

build=${CRONWHEEL_BUILD_DIR:-$root/build}
jobs=$(nproc)
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$jobs"

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
