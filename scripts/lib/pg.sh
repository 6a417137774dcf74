# Helpers for running a private PostgreSQL 15 cluster (sourced by demo.sh and test.sh).
#
# PostgreSQL refuses to run as root, so as root the server runs as the unprivileged
# `postgres` account; the cluster directory is then owned by it. The cluster listens on
# 127.0.0.1 only, its socket lives in the data directory, and local connections are
# trusted: it is for tests and demos on one machine, never for production.

PG_BIN=${PG_BIN:-/usr/lib/postgresql/15/bin}

pg_as_owner() {
  if [ "$(id -u)" -eq 0 ]; then
    (cd / && runuser -u postgres -- "$@")
  else
    "$@"
  fi
}

# pg_init DIR: creates a cluster in DIR (which must not exist or be empty) with a superuser
# named cronwheel.
pg_init() {
  local dir=$1
  mkdir -p "$dir"
  if [ "$(id -u)" -eq 0 ]; then
    chown postgres: "$dir"
    if ! runuser -u postgres -- test -w "$dir"; then
      echo "PostgreSQL runs as the postgres account, which cannot write $dir" >&2
      echo "(a parent directory is not accessible to it); move the checkout, or set PGDATA_DIR" >&2
      return 1
    fi
  fi
  chmod 700 "$dir"
  pg_as_owner "$PG_BIN/initdb" -D "$dir" -U cronwheel --auth=trust -E UTF8 --no-locale >"$dir.initdb.log" 2>&1 || {
    cat "$dir.initdb.log" >&2
    return 1
  }
  rm -f "$dir.initdb.log"
}

# pg_start DIR PORT [EXTRA_OPTIONS]: starts the cluster in DIR on 127.0.0.1:PORT and waits
# until it accepts connections. Fails if the port is taken.
pg_start() {
  local dir=$1 port=$2 extra=${3:-}
  pg_as_owner "$PG_BIN/pg_ctl" -D "$dir" -l "$dir/server.log" -w -t 60 \
    -o "-c listen_addresses=127.0.0.1 -p $port -k $dir -c max_connections=300 $extra" start >/dev/null
}

# pg_start_free DIR [EXTRA_OPTIONS]: starts the cluster on a free port and prints the port.
pg_start_free() {
  local dir=$1 extra=${2:-} port attempt
  for attempt in 1 2 3 4 5 6 7 8 9 10; do
    port=$((20000 + RANDOM % 30000))
    if pg_start "$dir" "$port" "$extra" 2>/dev/null; then
      echo "$port"
      return 0
    fi
  done
  echo "could not start PostgreSQL in $dir; its log:" >&2
  tail -n 20 "$dir/server.log" >&2 || true
  return 1
}

# pg_running DIR: true if the cluster in DIR is running.
pg_running() {
  [ -f "$1/postmaster.pid" ] && pg_as_owner "$PG_BIN/pg_ctl" -D "$1" status >/dev/null 2>&1
}

# pg_restart_immediate DIR: stops the cluster in DIR as a crash would (immediate mode: no
# checkpoint, every connection cut) and starts it again with the same options; it replays its WAL.
pg_restart_immediate() {
  local dir=$1
  pg_as_owner "$PG_BIN/pg_ctl" -D "$dir" -l "$dir/server.log" -m immediate -w -t 60 restart >/dev/null
}

# pg_init_standby DIR PRIMARY_PORT: makes DIR a streaming replica of the cluster on
# 127.0.0.1:PRIMARY_PORT (pg_basebackup -R: it follows the primary once started with pg_start).
pg_init_standby() {
  local dir=$1 primary_port=$2
  mkdir -p "$dir"
  [ "$(id -u)" -ne 0 ] || chown postgres: "$dir"
  chmod 700 "$dir"
  pg_as_owner "$PG_BIN/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U cronwheel -D "$dir" -R -X stream \
    -c fast >"$dir.basebackup.log" 2>&1 || {
    cat "$dir.basebackup.log" >&2
    return 1
  }
  rm -f "$dir.basebackup.log"
}

# pg_failover PRIMARY_DIR STANDBY_DIR [LAG_MS]: the primary crashes (immediate stop: what it had
# not sent its standby yet is lost with it) and the standby is promoted to primary. With LAG_MS,
# the standby's WAL receiver is paused (SIGSTOP) that long before the crash, as a standby that far
# behind on a slow network: under asynchronous replication the primary's commits of that time
# are lost; under synchronous replication none returned.
pg_failover() {
  local primary=$1 standby=$2 lag=${3:-0} receiver=""
  if [ "$lag" -gt 0 ]; then
    receiver=$(pgrep -P "$(head -n 1 "$standby/postmaster.pid")" -f 'walreceiver' | head -n 1)
    [ -n "$receiver" ] || { echo "no WAL receiver under the standby in $standby" >&2; return 1; }
    kill -STOP "$receiver"
    sleep "$(awk "BEGIN { print $lag / 1000 }")"
  fi
  pg_as_owner "$PG_BIN/pg_ctl" -D "$primary" -m immediate -w -t 60 stop >/dev/null
  # What the paused receiver had not read is in flight on the network: it never arrives.
  [ -z "$receiver" ] || kill -KILL "$receiver" 2>/dev/null || true
  # A killed WAL receiver is a crash to the standby's postmaster: it restarts its processes, and
  # a promote request that arrives while no startup process runs is lost (the signal file alone
  # does not promote). So the request is repeated until the cluster is in production.
  local deadline=$((SECONDS + 120)) attempt
  while :; do
    pg_as_owner "$PG_BIN/pg_ctl" -D "$standby" -W promote >/dev/null 2>&1 || true
    for attempt in 1 2 3 4 5 6 7 8 9 10; do
      if pg_as_owner "$PG_BIN/pg_controldata" -D "$standby" 2>/dev/null | grep -q '^Database cluster state: *in production'; then
        return 0
      fi
      sleep 0.3
    done
    if [ "$SECONDS" -ge "$deadline" ]; then
      echo "the standby in $standby was not promoted within 120 s" >&2
      return 1
    fi
  done
}

# pg_stop DIR: stops the cluster in DIR if it runs.
pg_stop() {
  local dir=$1
  if pg_running "$dir"; then
    pg_as_owner "$PG_BIN/pg_ctl" -D "$dir" -m fast -w -t 60 stop >/dev/null || true
  fi
}
