# Sourced by the end-to-end load scripts (fire_load.sh, workflow_load.sh, slot_load.sh): a private
# PostgreSQL 15 (scripts/lib/pg.sh) with pg_stat_statements loaded, initialised afresh for every
# run of a script, stopped and its directory removed when the script exits, whatever happens.
#
#   load_pg_start NAME FSYNC [EXTRA_OPTIONS]
#     NAME   names the directory (/tmp/cronwheel-NAME.XXXXXX)
#     FSYNC  on|off
#   sets load_pg_dir (the directory: data/ and room for the script's own files); starts nothing.
#
#   load_pg_fresh
#   before each run: stops the server the run before had, if any, and starts one initialised
#   afresh, with the options above. A run measured on a server that served the run before it
#   pays for that run's checkpoints and WAL (the second of two builds compared back to back used
#   0.1-0.15 of a core more of the database's time, whichever build it was; docs/benchmarks.md,
#   "Fire path"). Sets load_pg_port, load_pg_pid (the postmaster) and load_pg_url (a superuser's
#   URL) and prints one line saying what runs where.
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/pg.sh"

load_pg_cleanup() {
  [ -n "${load_pg_dir:-}" ] || return 0
  pg_stop "$load_pg_dir/data"
  rm -rf "$load_pg_dir"
}

load_pg_start() {
  local name=$1
  load_pg_fsync=$2
  load_pg_opts="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=10000 ${3:-}"
  [ "$load_pg_fsync" = on ] || load_pg_opts="$load_pg_opts -c fsync=off"
  load_pg_dir=$(mktemp -d "/tmp/cronwheel-$name.XXXXXX")
  trap load_pg_cleanup EXIT
  chmod 755 "$load_pg_dir"
}

load_pg_fresh() {
  if [ -d "$load_pg_dir/data" ]; then
    pg_stop "$load_pg_dir/data"
    rm -rf "$load_pg_dir/data"
  fi
  pg_init "$load_pg_dir/data" >/dev/null
  load_pg_port=$(pg_start_free "$load_pg_dir/data" "$load_pg_opts")
  load_pg_pid=$(head -n 1 "$load_pg_dir/data/postmaster.pid")
  load_pg_url="postgresql://cronwheel@127.0.0.1:$load_pg_port/postgres"
  echo "PostgreSQL on 127.0.0.1:$load_pg_port (fsync $load_pg_fsync, pid $load_pg_pid); $(nproc) cores; load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%F %T UTC')"
}
