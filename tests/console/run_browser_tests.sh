#!/usr/bin/env bash
# tests/console/run_browser_tests.sh BUILD_DIR [PLAYWRIGHT_ARGS...]
#
# The console's browser tests (ctest console.browser, label browser): starts a real
# cronwheel-admin serving BUILD_DIR/web on a fresh database of its own and a real
# cronwheel-executor registering with it, then runs Playwright (web/tests/browser) in Debian's
# chromium against them. Both processes are stopped and the database and temporary files
# removed on every way out.
#
# Needs CRONWHEEL_TEST_DB_URL: a PostgreSQL URL whose user may create databases
# (scripts/test.sh exports one). Optional environment:
#   CRONWHEEL_CHROMIUM            the browser (default /usr/bin/chromium)
#   CRONWHEEL_BROWSER_OUTPUT      traces and screenshots of failures (default BUILD_DIR/browser-tests)
#   CRONWHEEL_SCREENSHOT_DIR      one screenshot per test, of the page it exercised
#   CRONWHEEL_UPDATE_DOCS_IMAGES  1: also rewrite docs/images/console-*.png
# Extra arguments go to `playwright test` (e.g. -g "live log", --headed is not available).
set -euo pipefail

if [ $# -lt 1 ]; then
  echo "usage: $0 BUILD_DIR [PLAYWRIGHT_ARGS...]" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
shift
root=$(cd "$(dirname "$0")/../.." && pwd)

: "${CRONWHEEL_TEST_DB_URL:?needs a PostgreSQL URL whose user may create databases (scripts/test.sh sets it)}"
chromium=${CRONWHEEL_CHROMIUM:-/usr/bin/chromium}
if [ ! -x "$chromium" ]; then
  echo "no browser at $chromium (Debian: apt-get install chromium; or set CRONWHEEL_CHROMIUM)" >&2
  exit 1
fi
for f in "$build/bin/cronwheel-admin" "$build/bin/cronwheel-executor" "$build/web/index.html" \
  "$root/web/node_modules/.bin/playwright"; do
  if [ ! -e "$f" ]; then
    echo "missing $f (build with scripts/test.sh, or cmake --build and scripts/build-console.sh)" >&2
    exit 1
  fi
done

output=${CRONWHEEL_BROWSER_OUTPUT:-$build/browser-tests}
tmp=$(mktemp -d /tmp/cronwheel-browser.XXXXXX)
database="cronwheel_browser_$$_${RANDOM}"
admin_pid=""
executor_pid=""
database_created=0

# SIGTERM, then SIGKILL if the process is still there after 10 s.
stop_process() {
  local pid=$1 i
  [ -n "$pid" ] || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for i in $(seq 1 100); do
    kill -0 "$pid" 2>/dev/null || { wait "$pid" 2>/dev/null || true; return 0; }
    sleep 0.1
  done
  echo "pid $pid did not stop within 10 s: killing it" >&2
  kill -KILL "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}

cleanup() {
  local status=$?
  trap - EXIT INT TERM
  stop_process "$executor_pid"
  stop_process "$admin_pid"
  if [ "$status" -ne 0 ]; then
    for log in admin executor; do
      if [ -s "$tmp/$log.log" ]; then
        echo "---- last lines of cronwheel-$log's log" >&2
        tail -n 30 "$tmp/$log.log" >&2
      fi
    done
  fi
  if [ "$database_created" = 1 ]; then
    psql "$CRONWHEEL_TEST_DB_URL" -qX -v ON_ERROR_STOP=1 -c "DROP DATABASE IF EXISTS $database WITH (FORCE)" >/dev/null ||
      echo "could not drop the database $database" >&2
  fi
  rm -rf "$tmp"
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# The same server and user, another database: replace the URL's path (keeping any ?query).
db_url=$(printf '%s' "$CRONWHEEL_TEST_DB_URL" | sed -E "s#^([a-z]+://[^/]*)(/[^?]*)?#\1/$database#")
psql "$CRONWHEEL_TEST_DB_URL" -qX -v ON_ERROR_STOP=1 -c "CREATE DATABASE $database" >/dev/null
database_created=1

# Waits up to $3 seconds for "listening on http://127.0.0.1:PORT/" in the log $2 of pid $1 and
# prints PORT.
wait_listening() {
  local pid=$1 log=$2 seconds=$3 port="" i
  for i in $(seq 1 $((seconds * 10))); do
    # (The log may not exist yet: the process opens it as it starts.)
    port=$(sed -nE 's#.*listening on http://127\.0\.0\.1:([0-9]+)/.*#\1#p' "$log" 2>/dev/null | head -n 1)
    if [ -n "$port" ]; then
      echo "$port"
      return 0
    fi
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$(basename "$log" .log) did not start listening within $seconds s" >&2
  return 1
}

admin_password="browser-admin-password"
# Fast registry refresh and heartbeats: the tests watch executors come online and runs end.
CRONWHEEL_ADMIN_PASSWORD=$admin_password "$build/bin/cronwheel-admin" \
  --listen 127.0.0.1:0 --web-dir "$build/web" --db-url "$db_url" --db-wait 10 \
  --registry-refresh-ms 1000 --heartbeat-ms 1000 --lease-ms 3000 \
  --http-threads 16 --fast-pool-max 8 --slow-pool-max 4 \
  >"$tmp/admin.log" 2>&1 &
admin_pid=$!
admin_port=$(wait_listening "$admin_pid" "$tmp/admin.log" 60)
admin_url="http://127.0.0.1:$admin_port"

app_name="browser-executors"
mkdir -p "$tmp/executor-logs"
# Registering every 2 s, its clock's offset from the admin's is measured within seconds.
"$build/bin/cronwheel-executor" --admin "$admin_url/" --app-name "$app_name" \
  --listen 127.0.0.1:0 --log-dir "$tmp/executor-logs" --registry-interval-seconds 2 \
  >"$tmp/executor.log" 2>&1 &
executor_pid=$!
executor_port=$(wait_listening "$executor_pid" "$tmp/executor.log" 30)

# Both answer before the browser starts.
for i in $(seq 1 100); do
  if curl -fsS -o /dev/null "$admin_url/healthz" 2>/dev/null &&
    curl -sS -o /dev/null -X POST "http://127.0.0.1:$executor_port/beat" 2>/dev/null; then
    break
  fi
  if [ "$i" = 100 ]; then
    echo "the admin or the executor does not answer" >&2
    exit 1
  fi
  sleep 0.1
done
echo "admin $admin_url (database $database), executor http://127.0.0.1:$executor_port/ ($app_name)"

mkdir -p "$output"
cd "$root/web"
export CRONWHEEL_CONSOLE_URL="$admin_url"
export CRONWHEEL_CHROMIUM="$chromium"
export CRONWHEEL_BROWSER_OUTPUT="$output"
export CRONWHEEL_ADMIN_USER=admin
export CRONWHEEL_ADMIN_PASSWORD=$admin_password
export CRONWHEEL_EXECUTOR_APP_NAME=$app_name
export CRONWHEEL_EXECUTOR_ADDRESS="http://127.0.0.1:$executor_port/"
# Bounded in time whatever happens inside (ctest's timeout is above this one).
timeout --signal=TERM --kill-after=10 400 node_modules/.bin/playwright test "$@"
