#!/usr/bin/env bash
# PostgreSQL failover under load (docs/operations.md, "PostgreSQL high availability"): starts a
# private primary and a streaming standby of it (scripts/lib/pg.sh; fsync on, as in production),
# then runs build/bin/chaos_soak against both with a multi-host URL
# (target_session_attrs=read-write): two admins, two executors, jobs firing every second, and
# once, mid-window, the primary crashes (immediate stop) and the standby is promoted. chaos_soak
# then checks every fire of the window, as in the chaos soak. Both clusters are stopped and
# removed whatever happens. Exits with chaos_soak's status (0: nothing lost or repeated).
#
#   tests/chaos/failover.sh [--sync | --async] [-- chaos_soak options]
#     --sync    synchronous replication (synchronous_standby_names = '*'): a commit returns once
#               the standby has it on disk, so the promoted standby has everything (the default)
#     --async   asynchronous replication, PostgreSQL's default: what the primary had not sent
#               when it crashed is lost; the checks say what that cost
#     --lag MS  the standby's WAL receiver is paused MS milliseconds before the crash (default
#               0), as a standby that far behind: what asynchronous replication then loses, and
#               that synchronous replication loses nothing, are measured rather than assumed
#   CHAOS_SOAK_KEEP=1 keeps the work directory.
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

mode=sync
lag=0
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --sync) mode=sync; shift ;;
    --async) mode=async; shift ;;
    --lag) lag=$2; shift 2 ;;
    --) shift; extra=("$@"); break ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
[[ $lag =~ ^[0-9]+$ ]] || { echo "--lag takes milliseconds, not '$lag'" >&2; exit 2; }
bin=${CHAOS_SOAK_BIN:-$root/build/bin/chaos_soak}
[ -x "$bin" ] || { echo "no $bin: build the chaos_soak target first" >&2; exit 2; }

. scripts/lib/pg.sh
work=$(mktemp -d /tmp/cronwheel-failover.XXXXXX)
cleanup() {
  pg_stop "$work/standby"
  pg_stop "$work/primary"
  if [ "${CHAOS_SOAK_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
chmod 755 "$work"
pg_init "$work/primary"
primary=$(pg_start_free "$work/primary")
pg_init_standby "$work/standby" "$primary"
standby=$(pg_start_free "$work/standby")
psql_primary() { "$PG_BIN/psql" -X -q -t -A "postgresql://cronwheel@127.0.0.1:$primary/postgres" "$@"; }
for _ in $(seq 1 100); do
  [ "$(psql_primary -c "SELECT count(*) FROM pg_stat_replication WHERE state = 'streaming'")" = 1 ] && break
  sleep 0.1
done
if [ "$mode" = sync ]; then
  # Set on the primary only (postgresql.auto.conf is not replicated): the promoted standby must
  # not wait for a standby of its own.
  psql_primary -c "ALTER SYSTEM SET synchronous_standby_names = '*'" -c "SELECT pg_reload_conf()" >/dev/null
  for _ in $(seq 1 100); do
    [ "$(psql_primary -c "SELECT sync_state FROM pg_stat_replication")" = sync ] && break
    sleep 0.1
  done
fi
echo "PostgreSQL primary on 127.0.0.1:$primary, standby on 127.0.0.1:$standby:" \
  "$(psql_primary -c "SELECT state || ', ' || sync_state FROM pg_stat_replication")" \
  "($mode replication, standby paused ${lag} ms before the crash); $(nproc) cores; $(date -u '+%F %T UTC')"

status=0
"$bin" --db-url "postgresql://cronwheel@127.0.0.1:$primary,127.0.0.1:$standby/postgres?target_session_attrs=read-write" \
  --work-dir "$work/soak" \
  --pg-failover-cmd "bash -c '. \"$root/scripts/lib/pg.sh\" && pg_failover \"$work/primary\" \"$work/standby\" $lag'" \
  --admins 2 --executors 2 --jobs 100 --seconds 40 --faults pg-failover --fault-every 40 \
  "${extra[@]}" || status=$?
exit "$status"
