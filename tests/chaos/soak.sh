#!/usr/bin/env bash
# The chaos soak (tests/chaos/chaos_soak.cpp; docs/operations.md, "Faults"): starts a private
# PostgreSQL 15 (scripts/lib/pg.sh, fsync on, as in production), runs build/bin/chaos_soak on it
# with admins and executors it starts itself, and removes everything afterwards, whatever happens.
# Exits with chaos_soak's status: 0 every check passed, 1 a check failed, 2 it could not run.
#
#   tests/chaos/soak.sh [--short | --long] [-- chaos_soak options]
#     --short   the CI version: 2 admins, 3 executors, 100 jobs every second, a 75 s window with
#               a fault every 8 s (each of the four kinds twice) (the default)
#     --long    3 admins, 4 executors, 500 jobs every second, a 10 min window, a fault every 15 s
#   Options after -- go to chaos_soak and override these (e.g. -- --seconds 300 --jobs 300).
#   CHAOS_SOAK_KEEP=1 keeps the work directory (outputs of every admin and executor incarnation).
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)

profile=(--admins 2 --executors 3 --jobs 100 --seconds 75 --fault-every 8)
extra=()
while [ $# -gt 0 ]; do
  case "$1" in
    --short) shift ;;
    --long) profile=(--admins 3 --executors 4 --jobs 500 --seconds 600 --fault-every 15); shift ;;
    --) shift; extra=("$@"); break ;;
    *) sed -n '2,/^set -euo/p' "$0" | sed '$d' >&2; exit 2 ;;
  esac
done
bin=${CHAOS_SOAK_BIN:-$root/build/bin/chaos_soak}
[ -x "$bin" ] || { echo "no $bin: build the chaos_soak target first" >&2; exit 2; }

. scripts/lib/pg.sh
work=$(mktemp -d /tmp/cronwheel-chaos.XXXXXX)
cleanup() {
  pg_stop "$work/pg"
  if [ "${CHAOS_SOAK_KEEP:-0}" = 1 ]; then echo "kept $work"; else rm -rf "$work"; fi
}
trap cleanup EXIT
chmod 755 "$work"
pg_init "$work/pg"
port=$(pg_start_free "$work/pg")
echo "PostgreSQL on 127.0.0.1:$port; $(nproc) cores; $(date -u '+%F %T UTC')"

status=0
"$bin" --db-url "postgresql://cronwheel@127.0.0.1:$port/postgres" --work-dir "$work/soak" \
  --pg-restart-cmd "bash -c '. \"$root/scripts/lib/pg.sh\" && pg_restart_immediate \"$work/pg\"'" \
  "${profile[@]}" "${extra[@]}" || status=$?
exit "$status"
