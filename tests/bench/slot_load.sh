#!/usr/bin/env bash
# Concurrency limits under load (docs/benchmarks.md, "Concurrency limits"): runs build/bin/slot_load
# for each admin count and admin build twice, each run on a private PostgreSQL 15 initialised
# afresh (tests/bench/load_pg.sh; fsync on unless --fsync off) and fresh admins: with
# the group's limit, then the same fires without one (the baseline); prints the results as one
# markdown table and, per admin count and build, fires/s with the limit over fires/s without.
#
#   tests/bench/slot_load.sh [options]
#     --fires N              fires due at once (default 1000)
#     --limit N              the group's maxRunning (default 10)
#     --hold-ms MS           how long the fake executors hold each run (default 30)
#     --admins "1 2"         admin node counts (default "1 2")
#     --admin LABEL=PATH     an admin build to measure (repeatable; default
#                            current=build/bin/cronwheel-admin)
#     --fsync on|off         PostgreSQL's fsync (default on)
#     --out FILE             also append every run's JSON line to FILE
#     --                     the rest goes to every slot_load run (e.g. --priorities 3)
#   SLOT_LOAD_WRAP="flock /tmp/lock"   a command each run is wrapped in (e.g. to keep builds and
#                                      runs on a shared machine apart)
#   SLOT_LOAD_BIN=path                 the slot_load binary (default build/bin/slot_load)
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

fires=1000
limit=10
hold=30
admin_counts="1 2"
fsync=on
out=""
builds=()
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --fires) fires=$2; shift 2 ;;
    --limit) limit=$2; shift 2 ;;
    --hold-ms) hold=$2; shift 2 ;;
    --admins) admin_counts=$2; shift 2 ;;
    --admin) builds+=("$2"); shift 2 ;;
    --fsync) fsync=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
[ ${#builds[@]} -gt 0 ] || builds=("current=$root/build/bin/cronwheel-admin")
bin=${SLOT_LOAD_BIN:-$root/build/bin/slot_load}
[ -x "$bin" ] || { echo "no $bin: build the slot_load target first" >&2; exit 2; }

. tests/bench/load_pg.sh
load_pg_start slot-load "$fsync"

rows=()
ratios=()
for admins in $admin_counts; do
  for build in "${builds[@]}"; do
    label=${build%%=*}
    admin_bin=${build#*=}
    declare -A rate=()
    for max_running in "$limit" 0; do
      echo
      load_pg_fresh
      cmd=("$bin" --db-url "$load_pg_url" --pg-pid "$load_pg_pid" --admin-bin "$admin_bin" --label "$label"
           --fires "$fires" --max-running "$max_running" --hold-ms "$hold" --admins "$admins")
      [ -z "$out" ] || cmd+=(--json-out "$out")
      cmd+=("${extra[@]}")
      echo
      echo "\$ ${cmd[*]}"
      status=0
      ${SLOT_LOAD_WRAP:-} "${cmd[@]}" >"$load_pg_dir/run.log" 2>&1 || status=$?
      grep -v '^SLOT_LOAD_' "$load_pg_dir/run.log" || true
      [ "$status" = 0 ] || echo "(slot_load exited $status)"
      row=$(sed -n 's/^SLOT_LOAD_ROW //p' "$load_pg_dir/run.log")
      [ -z "$row" ] || rows+=("$row")
      rate[$max_running]=$(sed -n 's/^SLOT_LOAD_RATE [0-9]* [0-9]* //p' "$load_pg_dir/run.log")
    done
    if [ -n "${rate[$limit]:-}" ] && [ -n "${rate[0]:-}" ]; then
      ratios+=("$label, $admins admin(s): $(awk -v a="${rate[$limit]}" -v b="${rate[0]}" \
        'BEGIN { printf "%.1f fires/s with maxRunning '"$limit"', %.1f without: %.3f of it", a, b, (b > 0 ? a / b : 0) }')")
    fi
    unset rate
  done
done

echo
echo "| build | admins | fires | maxRunning | hold ms | all done once | most at once: executors / admin / sampled | drain s | fires/s | ideal drain s | runs at once, mean | slot freed → next /run p50 / p99 ms | of it p50: end → recorded / recorded → claim / claim → /run | started while a higher priority waited (by claim) | pairs out of priority order | admins' CPU | runs by node (admitting; without a limit, sending) |"
echo "|---|---:|---:|---:|---:|---|---|---:|---:|---:|---:|---|---|---|---:|---:|---|"
for row in "${rows[@]}"; do echo "$row"; done
echo
for r in "${ratios[@]}"; do echo "$r"; done
