#!/usr/bin/env bash
# How soon "Run once" reaches its executor (docs/benchmarks.md, "Run once"): starts a private
# PostgreSQL 15, one cronwheel-admin and one cronwheel-executor on loopback, makes a job on the
# executor's `echo` handler, then triggers it COUNT times one after the other (POST
# /api/v1/jobs/{id}/trigger) and reads each run back: the time from the call to the run's
# trigger time (posted to the executor) and to its result. Prints the median, p90 and max of
# both, a table row per build. Each build gets a fresh database and fresh processes; everything
# started is stopped, and its directory removed, whatever happens.
#
#   tests/bench/trigger_now.sh [--count N] [LABEL=BIN_DIR ...]
#     --count N          runs per build (default 50)
#     LABEL=BIN_DIR      a build's bin directory (cronwheel-admin, cronwheel-executor); default
#                        current=build/bin. Several are measured in turn, in the same run.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
count=50
builds=()
while [ $# -gt 0 ]; do
  case "$1" in
    --count) count=$2; shift 2 ;;
    *=*) builds+=("$1"); shift ;;
    *) echo "trigger_now.sh: unknown argument $1" >&2; exit 2 ;;
  esac
done
[ ${#builds[@]} -gt 0 ] || builds=("current=$root/build/bin")

. scripts/lib/pg.sh
dir="" admin_pid="" executor_pid=""
cleanup() {
  [ -n "$executor_pid" ] && kill "$executor_pid" 2>/dev/null && wait "$executor_pid" 2>/dev/null
  [ -n "$admin_pid" ] && kill "$admin_pid" 2>/dev/null && wait "$admin_pid" 2>/dev/null
  executor_pid="" admin_pid=""
  if [ -n "$dir" ]; then
    pg_stop "$dir/data"
    rm -rf "$dir"
  fi
  dir=""
}
trap cleanup EXIT

echo "| build | runs | call → posted p50 / p90 / max | call → result p50 / p90 / max |"
echo "|---|---|---|---|"
measure() {
local label=$1 bin=$2
dir=$(mktemp -d /tmp/cronwheel-trigger-now.XXXXXX)
chmod 755 "$dir"
pg_init "$dir/data"
pg_port=$(pg_start_free "$dir/data" "-c fsync=off")

free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'; }
admin_port=$(free_port)
executor_port=$(free_port)
url="http://127.0.0.1:$admin_port"

CRONWHEEL_ADMIN_PASSWORD=bench-password "$bin/cronwheel-admin" --listen "127.0.0.1:$admin_port" \
  --db-url "postgresql://cronwheel@127.0.0.1:$pg_port/postgres" --log-level warn >"$dir/admin.log" 2>&1 &
admin_pid=$!
for _ in $(seq 100); do curl -sf "$url/healthz" >/dev/null && break; sleep 0.2; done
"$bin/cronwheel-executor" --admin "$url/" --app-name trigger-now --listen "127.0.0.1:$executor_port" \
  --log-dir "$dir/logs" >"$dir/executor.log" 2>&1 &
executor_pid=$!

jar=$dir/cookies
csrf=$(curl -sf -c "$jar" -H 'Content-Type: application/json' \
  -d '{"username":"admin","password":"bench-password"}' "$url/api/v1/auth/login" | jq -r .csrfToken)
api() { curl -sf -b "$jar" -H "X-CSRF-Token: $csrf" -H 'Content-Type: application/json' "$@"; }
group=$(api -d '{"appName":"trigger-now","title":"Run once"}' "$url/api/v1/groups" | jq .id)
job=$(api -d "{\"jobGroup\":$group,\"jobDesc\":\"run once\",\"author\":\"bench\",\"scheduleType\":\"NONE\",\"executorHandler\":\"echo\"}" \
  "$url/api/v1/jobs" | jq .id)
# The executor registers within a moment; wait until a run reaches it.
for _ in $(seq 100); do
  run=$(api -X POST "$url/api/v1/jobs/$job/trigger" | jq .id)
  sleep 0.3
  [ "$(api "$url/api/v1/logs/$run" | jq .handleCode)" = 200 ] && break
done

now_ms() { date +%s%3N; }
: >"$dir/times"
for _ in $(seq "$count"); do
  called=$(now_ms)
  run=$(api -X POST "$url/api/v1/jobs/$job/trigger" | jq .id)
  for _ in $(seq 200); do
    row=$(api "$url/api/v1/logs/$run")
    [ "$(jq .handleCode <<<"$row")" != 0 ] && break
    sleep 0.01
  done
  jq -r --argjson called "$called" '"\(.triggerTime - $called) \(.handleTime - $called)"' <<<"$row" >>"$dir/times"
done

summary() {  # column of $dir/times → "median p90 max" in ms
  cut -d' ' -f"$1" "$dir/times" | sort -n | awk '{v[NR]=$1} END {print v[int((NR+1)/2)], v[int(NR*0.9+0.5)], v[NR]}'
}
read -r t50 t90 tmax <<<"$(summary 1)"
read -r h50 h90 hmax <<<"$(summary 2)"
echo "| $label | $count | $t50 / $t90 / $tmax ms | $h50 / $h90 / $hmax ms |"
cleanup
}

for build in "${builds[@]}"; do measure "${build%%=*}" "${build#*=}"; done
