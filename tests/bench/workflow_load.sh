#!/usr/bin/env bash
# Workflows under load (docs/benchmarks.md, "Workflows under load"): runs build/bin/workflow_load
# once per shape and admin build, each run on a private PostgreSQL 15 initialised afresh
# (tests/bench/load_pg.sh; fsync on unless --fsync off; pg_stat_statements loaded, nested
# statements tracked) and a fresh admin, and prints the results as one markdown table.
# PostgreSQL is stopped and its directory removed whatever happens.
#
#   tests/bench/workflow_load.sh [options]
#     --shape "chain fanout"   shapes (default both)
#     --runs N                 runs triggered at once (default 1000)
#     --admin LABEL=PATH       an admin build to measure (repeatable; default
#                              current=build/bin/cronwheel-admin); every shape runs each build in
#                              turn, so builds are compared in the same run of the script
#     --fsync on|off           PostgreSQL's fsync (default on)
#     --out FILE               also append every run's JSON line to FILE
#     --                       the rest goes to every workflow_load run (e.g. --sample-ms 0, or
#                              --pace 1000: the runs triggered evenly, for 1,000 node ends a second)
#   WORKFLOW_LOAD_WRAP="flock /tmp/lock"   a command each run is wrapped in (e.g. to keep builds
#                                          and runs on a shared machine apart)
#   WORKFLOW_LOAD_BIN=path                 the workflow_load binary (default build/bin/workflow_load)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

shapes="chain fanout"
runs=1000
fsync=on
out=""
builds=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shapes=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    --admin) builds+=("$2"); shift 2 ;;
    --fsync) fsync=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
[ ${#builds[@]} -gt 0 ] || builds=("current=$root/build/bin/cronwheel-admin")
bin=${WORKFLOW_LOAD_BIN:-$root/build/bin/workflow_load}
[ -x "$bin" ] || { echo "no $bin: build the workflow_load target first" >&2; exit 2; }

. tests/bench/load_pg.sh
# track = all: statements run by triggers (the run report's) are counted apart, beside their callers.
load_pg_start workflow-load "$fsync" "-c pg_stat_statements.track=all"

rows=()
for shape in $shapes; do
  for build in "${builds[@]}"; do
    label=${build%%=*}
    admin_bin=${build#*=}
    echo
    load_pg_fresh
    cmd=("$bin" --db-url "$load_pg_url" --pg-pid "$load_pg_pid" --admin-bin "$admin_bin" --label "$label"
         --shape "$shape" --runs "$runs")
    [ -z "$out" ] || cmd+=(--json-out "$out")
    cmd+=("${extra[@]}")
    echo
    echo "\$ ${cmd[*]}"
    status=0
    ${WORKFLOW_LOAD_WRAP:-} "${cmd[@]}" >"$load_pg_dir/run.log" 2>&1 || status=$?
    grep -v '^WORKFLOW_LOAD_' "$load_pg_dir/run.log" || true
    [ "$status" = 0 ] || echo "(workflow_load exited $status)"
    row=$(sed -n 's/^WORKFLOW_LOAD_ROW //p' "$load_pg_dir/run.log")
    [ -z "$row" ] || rows+=("$row")
  done
done

echo
echo "| build | shape | runs | all once, succeeded | triggers (s) | node ends/s | busiest s | hand-off p50 / p99 ms | one at a time p50 / p99 | ratio p50 / p99 | end → claim p50 / p99 | claim → /run p50 / p99 | admin CPU | DB CPU | statements/node | transactions/node | deadlocks | lock-waiting sessions |"
echo "|---|---|---:|---|---:|---:|---:|---|---|---|---|---|---:|---:|---:|---:|---:|---:|"
for row in "${rows[@]}"; do echo "$row"; done
