#!/usr/bin/env bash
# Sets up everything, builds, and runs cronwheel locally:
#   - a PostgreSQL 15 cluster kept under .local/pgdata (created once, reused afterwards),
#   - cronwheel-admin on 127.0.0.1:8080, which applies the schema on start,
#   - cronwheel-executor on 127.0.0.1:9999 (CRONWHEEL_DEMO_EXECUTOR_LISTEN), app name
#     cronwheel-demo, registering with that admin; run logs under .local/executor-logs;
#   - through the REST API, the executor group cronwheel-demo and a few demo jobs on the
#     executor's built-in handlers, firing every few seconds (created once, kept afterwards).
# Everything runs in the background; `scripts/demo.sh stop` stops it, `scripts/demo.sh
# status` tells what runs. Settings: CRONWHEEL_DEMO_LISTEN (default 127.0.0.1:8080),
# CRONWHEEL_DEMO_PG_PORT (default 54329), CRONWHEEL_DEMO_ADMIN_PASSWORD (the `admin` user's
# password, set when the demo database gets its first user; default cronwheel-demo).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
state=$root/.local
pgdata=$state/pgdata
pg_port=${CRONWHEEL_DEMO_PG_PORT:-54329}
listen=${CRONWHEEL_DEMO_LISTEN:-127.0.0.1:8080}
executor_listen=${CRONWHEEL_DEMO_EXECUTOR_LISTEN:-127.0.0.1:9999}
db_url="postgresql://cronwheel@127.0.0.1:$pg_port/cronwheel"
admin_password=${CRONWHEEL_DEMO_ADMIN_PASSWORD:-cronwheel-demo}

. scripts/lib/pg.sh

stop_pidfile() {
  local name=$1 file=$state/$1.pid pid
  [ -f "$file" ] || return 0
  pid=$(cat "$file")
  if kill -0 "$pid" 2>/dev/null; then
    kill -TERM "$pid"
    for _ in $(seq 1 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; fi
    echo "stopped $name (pid $pid)"
  fi
  rm -f "$file"
}

status() {
  if pg_running "$pgdata"; then echo "PostgreSQL: running on 127.0.0.1:$pg_port, data in $pgdata"; else echo "PostgreSQL: stopped"; fi
  if [ -f "$state/admin.pid" ] && kill -0 "$(cat "$state/admin.pid")" 2>/dev/null; then
    echo "cronwheel-admin: running (pid $(cat "$state/admin.pid")) on http://$listen/, log $state/admin.log"
  else
    echo "cronwheel-admin: stopped"
  fi
  if [ -f "$state/executor.pid" ] && kill -0 "$(cat "$state/executor.pid")" 2>/dev/null; then
    echo "cronwheel-executor: running (pid $(cat "$state/executor.pid")) on http://$executor_listen/, app cronwheel-demo, log $state/executor.log"
  else
    echo "cronwheel-executor: stopped"
  fi
}

case "${1:-start}" in
  stop)
    stop_pidfile executor
    stop_pidfile admin
    if pg_running "$pgdata"; then pg_stop "$pgdata"; echo "stopped PostgreSQL"; fi
    exit 0 ;;
  status)
    status
    exit 0 ;;
  start) ;;
  *)
    echo "usage: scripts/demo.sh [start|stop|status]" >&2
    exit 2 ;;
esac

scripts/setup.sh
build=${CRONWHEEL_BUILD_DIR:-$root/build}
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build "$build" -j "$(nproc)" --target cronwheel-admin cronwheel-executor
. scripts/lib/console.sh
console_build "$build"

mkdir -p "$state"
chmod 755 "$state"
if [ ! -f "$pgdata/PG_VERSION" ]; then
  echo "Creating a PostgreSQL cluster in $pgdata"
  pg_init "$pgdata"
fi
if ! pg_running "$pgdata"; then
  pg_start "$pgdata" "$pg_port" || {
    echo "PostgreSQL did not start on port $pg_port (set CRONWHEEL_DEMO_PG_PORT to use another); its log:" >&2
    tail -n 20 "$pgdata/server.log" >&2
    exit 1
  }
fi
if ! psql -X -q -h 127.0.0.1 -p "$pg_port" -U cronwheel -d postgres -tAc \
     "SELECT 1 FROM pg_database WHERE datname = 'cronwheel'" | grep -q 1; then
  psql -X -q -h 127.0.0.1 -p "$pg_port" -U cronwheel -d postgres -c "CREATE DATABASE cronwheel"
fi

# A fresh admin each run, so the new build is what runs.
stop_pidfile admin
CRONWHEEL_DB_URL=$db_url CRONWHEEL_LISTEN=$listen CRONWHEEL_ADMIN_PASSWORD=$admin_password \
  nohup "$build/bin/cronwheel-admin" --node-id demo-admin >>"$state/admin.log" 2>&1 &
echo $! >"$state/admin.pid"

for _ in $(seq 1 100); do
  if curl -fsS "http://$listen/healthz" >/dev/null 2>&1; then break; fi
  if ! kill -0 "$(cat "$state/admin.pid")" 2>/dev/null; then
    echo "cronwheel-admin exited; the end of its log:" >&2
    tail -n 20 "$state/admin.log" >&2
    exit 1
  fi
  sleep 0.2
done
curl -fsS "http://$listen/healthz" >/dev/null || { echo "cronwheel-admin does not answer on http://$listen/healthz" >&2; exit 1; }

# The executor beside it. Until the admin serves the executor registry API it logs one warning
# per registration interval (30 s) and keeps serving.
stop_pidfile executor
nohup "$build/bin/cronwheel-executor" --admin "http://$listen/" --app-name cronwheel-demo \
  --listen "$executor_listen" --log-dir "$state/executor-logs" >>"$state/executor.log" 2>&1 &
echo $! >"$state/executor.pid"
executor_beat() {
  curl -fsS -X POST -H 'Content-Type: application/json' -d '""' "http://$executor_listen/beat" 2>/dev/null | grep -q '"code":200'
}
for _ in $(seq 1 100); do
  if executor_beat; then break; fi
  if ! kill -0 "$(cat "$state/executor.pid")" 2>/dev/null; then
    echo "cronwheel-executor exited; the end of its log:" >&2
    tail -n 20 "$state/executor.log" >&2
    exit 1
  fi
  sleep 0.2
done
executor_beat || { echo "cronwheel-executor does not answer on http://$executor_listen/beat" >&2; exit 1; }

# The demo group and jobs, through the REST API as an operator would create them. Created once:
# a later run finds them by name and leaves them (and whether they run) as they are.
api=http://$listen/api/v1
cookies=$state/cookies
csrf=$(curl -fsS -c "$cookies" -H 'Content-Type: application/json' \
  -d "{\"username\":\"admin\",\"password\":\"$admin_password\"}" "$api/auth/login" | jq -r .csrfToken) || {
  echo "cannot log in as admin with CRONWHEEL_DEMO_ADMIN_PASSWORD (the demo database keeps the password of its first start)" >&2
  exit 1
}
call() {  # call METHOD PATH [JSON]: the answer's body; fails on an error status
  curl -sS --fail-with-body -b "$cookies" -H 'Content-Type: application/json' -H "X-CSRF-Token: $csrf" -X "$1" "$api/$2" \
    ${3:+-d "$3"}
}
group_id=$(call GET "groups?text=cronwheel-demo" | jq -r '.items[] | select(.appName == "cronwheel-demo") | .id')
if [ -z "$group_id" ]; then
  group_id=$(call POST groups '{"appName":"cronwheel-demo","title":"cronwheel demo"}' | jq -r .id)
  echo "created executor group cronwheel-demo (id $group_id)"
fi
demo_job() {  # demo_job NAME DESCRIPTION JSON-FIELDS: creates and starts the job unless it exists
  local name=$1 desc=$2 fields=$3 id
  id=$(call GET "jobs?jobGroup=$group_id&limit=1000" | jq -r --arg d "$desc" '.items[] | select(.jobDesc == $d) | .id')
  [ -n "$id" ] && return 0
  id=$(call POST jobs "{\"jobGroup\":$group_id,\"name\":\"$name\",\"jobDesc\":\"$desc\",\"author\":\"demo\",$fields}" | jq -r .id)
  call POST "jobs/$id/start" '{}' >/dev/null
  echo "created and started job $id: $desc"
}
demo_job echo "echo every 5 seconds" \
  '"scheduleType":"CRON","scheduleConf":"*/5 * * * * ?","executorHandler":"echo","executorParam":"hello from cronwheel"'
demo_job shell "shell command every 10 seconds" \
  '"scheduleType":"CRON","scheduleConf":"*/10 * * * * ?","executorHandler":"shell","executorParam":"date; uptime"'
demo_job sharding "sharding broadcast every 15 seconds" \
  '"scheduleType":"CRON","scheduleConf":"*/15 * * * * ?","executorHandler":"sharding","executorRouteStrategy":"SHARDING_BROADCAST"'
demo_job fix-delay "every 7 seconds after the last run ended" \
  '"scheduleType":"FIX_DELAY","scheduleConf":"7","executorHandler":"sleep","executorParam":"1"'

echo
status
echo
console_host=${listen/#0.0.0.0:/127.0.0.1:}
if [ -f "$build/web/index.html" ]; then
  echo "Console: http://$console_host/"
fi
echo "Login: user admin, password $admin_password (set on the demo database's first start)"
echo
echo "Try:   curl http://$listen/healthz"
echo "       curl -c $state/cookies -H 'Content-Type: application/json' \\
         -d '{\"username\":\"admin\",\"password\":\"$admin_password\"}' http://$listen/api/v1/auth/login"
echo "       curl -b $cookies '$api/logs?jobGroup=$group_id&limit=5'   # the demo jobs' latest runs"
echo "       $build/bin/cronwheel-admin cron next '0 15 10 ? * 6L' --tz America/New_York --count 5"
echo "       curl -X POST -H 'Content-Type: application/json' -d '\"\"' http://$executor_listen/beat"
echo "Stop:  scripts/demo.sh stop"
