# Sourced by the end-to-end load scripts (slot_load.sh): a private PostgreSQL 15 for one run of
# the script (scripts/lib/pg.sh), with pg_stat_statements loaded, stopped and its directory
# removed when the script exits, whatever happens.
#
#   load_pg_start NAME FSYNC [EXTRA_OPTIONS]
#     NAME   names the directory (/tmp/cronwheel-NAME.XXXXXX)
#     FSYNC  on|off
# sets load_pg_dir (the directory: data/ and room for the script's own files), load_pg_port,
# load_pg_pid (the postmaster) and load_pg_url (a superuser's URL) and prints one line saying
# what runs where.
. "$(dirname "${BASH_SOURCE[0]}")/../../scripts/lib/pg.sh"

load_pg_cleanup() {
  [ -n "${load_pg_dir:-}" ] || return 0
  pg_stop "$load_pg_dir/data"
  rm -rf "$load_pg_dir"
}

load_pg_start() {
  local name=$1 fsync=$2 extra=${3:-} opts
  load_pg_dir=$(mktemp -d "/tmp/cronwheel-$name.XXXXXX")
  trap load_pg_cleanup EXIT
  chmod 755 "$load_pg_dir"
  pg_init "$load_pg_dir/data"
  opts="-c shared_preload_libraries=pg_stat_statements -c pg_stat_statements.max=10000 $extra"
  [ "$fsync" = on ] || opts="$opts -c fsync=off"
  load_pg_port=$(pg_start_free "$load_pg_dir/data" "$opts")
  load_pg_pid=$(head -n 1 "$load_pg_dir/data/postmaster.pid")
  load_pg_url="postgresql://cronwheel@127.0.0.1:$load_pg_port/postgres"
  echo "PostgreSQL on 127.0.0.1:$load_pg_port (fsync $fsync, pid $load_pg_pid); $(nproc) cores; load average" \
    "$(cut -d' ' -f1-3 /proc/loadavg); $(date -u '+%F %T UTC')"
}
