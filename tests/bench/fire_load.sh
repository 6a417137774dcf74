#!/usr/bin/env bash
# End-to-end load on the fire path (docs/benchmarks.md, "Fire path"): runs build/bin/fire_load
# once per configuration and admin build, each run on a private PostgreSQL 15 of its own
# (tests/bench/load_pg.sh, initialised afresh; fsync on unless --fsync off; pg_stat_statements loaded)
# and fresh admins, and prints the results as one markdown table. PostgreSQL is stopped and its
# directory removed whatever happens.
#
#   tests/bench/fire_load.sh [options]
#     --mode steady|burst      (default steady; repeatable as "steady burst")
#     --jobs "100 500"         job counts (default "100 500 1000 2000"; burst: "1000 5000")
#     --admins "1 2"           admin node counts (default 1)
#     --seconds S              steady window, scheduled seconds (default 20)
#     --warmup S               steady warm-up after the last first fire (default 5)
#     --admin LABEL=PATH       an admin build to measure (repeatable; default
#                              baseline=build/bin/cronwheel-admin); every configuration runs
#                              each build in turn, so builds are compared in the same run
#     --fsync on|off           PostgreSQL's fsync (default on)
#     --pg-option OPT          a server option for every run's PostgreSQL, e.g. "-c max_wal_size=8GB"
#                              (repeatable)
#     --out FILE               also append every run's JSON line to FILE
#     --                       the rest goes to every fire_load run (e.g. --admin-arg='--db-pool-size 16')
#   FIRE_LOAD_WRAP="flock /tmp/lock"   a command each run is wrapped in (e.g. to keep builds and
#                                      runs on a shared machine apart)
#   FIRE_LOAD_BIN=path                 the fire_load binary (default build/bin/fire_load)
#
# Per-fire posting against lead dispatch (docs/scheduling.md, "Lead dispatch"), in the same run:
#
#   tests/bench/fire_load.sh --admin perfire=tests/bench/admin_without_lead.sh \
#       --admin lead=build/bin/cronwheel-admin -- --executor-lead true
#
# --executor-lead true makes the fake executors register with the admins as executors that take
# lead dispatch (and gives the admins --registry-refresh-ms 500, so they know within a second);
# admin_without_lead.sh runs the same admin binary with --lead-dispatch false (or
# $CRONWHEEL_ADMIN), so that build posts every fire to /run at its instant while the other hands
# each second's fires over by /lead ahead of it. fire_load reports how many measured runs arrived
# each way (JSON "led" and "posted"); lateness is to the receipt either way.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

modes="steady"
jobs=""
admins="1"
seconds=20
warmup=5
fsync=on
pg_options=""
out=""
builds=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --mode) modes=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --admins) admins=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --admin) builds+=("$2"); shift 2 ;;
    --fsync) fsync=$2; shift 2 ;;
    --pg-option) pg_options="$pg_options $2"; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
[ ${#builds[@]} -gt 0 ] || builds=("baseline=$root/build/bin/cronwheel-admin")
bin=${FIRE_LOAD_BIN:-$root/build/bin/fire_load}
[ -x "$bin" ] || { echo "no $bin: build the fire_load target first" >&2; exit 2; }

. tests/bench/load_pg.sh
# wal_keep_size: the window's WAL stays readable for fire_load's count of its records (pg_walinspect).
load_pg_start fire-load "$fsync" "-c wal_keep_size=16GB $pg_options"

rows=()
for mode in $modes; do
  mode_jobs=$jobs
  if [ -z "$mode_jobs" ]; then
    if [ "$mode" = burst ]; then mode_jobs="1000 5000"; else mode_jobs="100 500 1000 2000"; fi
  fi
  for n in $mode_jobs; do
    for a in $admins; do
      for build in "${builds[@]}"; do
        label=${build%%=*}
        admin_bin=${build#*=}
        echo
        load_pg_fresh
        cmd=("$bin" --db-url "$load_pg_url" --pg-pid "$load_pg_pid" --admin-bin "$admin_bin" --label "$label"
             --mode "$mode" --jobs "$n" --admins "$a" --seconds "$seconds" --warmup "$warmup")
        [ -z "$out" ] || cmd+=(--json-out "$out")
        cmd+=("${extra[@]}")
        echo
        echo "\$ ${cmd[*]}"
        status=0
        ${FIRE_LOAD_WRAP:-} "${cmd[@]}" >"$load_pg_dir/run.log" 2>&1 || status=$?
        grep -v '^FIRE_LOAD_' "$load_pg_dir/run.log" || true
        [ "$status" = 0 ] || echo "(fire_load exited $status)"
        row=$(sed -n 's/^FIRE_LOAD_ROW //p' "$load_pg_dir/run.log")
        [ -z "$row" ] || rows+=("$row")
      done
    done
  done
done

echo
echo "| build | mode | jobs | admins | delivered % | fires/s | late p50 ms | p99 ms | max ms | failed | not final | dup | gaps | admin CPU (cores) | admin RSS MB | DB CPU (cores) | statements/fire | transactions/fire |"
echo "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"
for row in "${rows[@]}"; do echo "$row"; done
