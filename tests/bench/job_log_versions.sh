#!/usr/bin/env bash
# What the run table's indexes cost a fire: the four row versions of a fire's life (inserted
# pending, then sending, triggered and succeeded, each an UPDATE of 2,000 rows as the fire
# path's batches are) written to three copies of job_log that differ only in their indexes:
#
#   all       job_log as the migrations make it (every index)
#   no-lists  without the three full list indexes (by job, by group, all runs by time)
#   hot-able  without every index whose key or predicate a fire's life changes (state,
#             admin_node, executor_address), fillfactor 70: what updates need to be HOT
#   in-flight pending and sending in a narrow table of fires in flight (v_fire: its key, the
#             scheduled fire's key, the owner's fires by time; fillfactor 70), the run row
#             inserted into a copy of job_log with every index once the executor answered
#             (triggered), then updated once (succeeded): two versions of the run row
#   at-end    the same narrow table for every state until the run ends (pending, sending,
#             triggered), the run row inserted into a copy of job_log once, when it ended
#
# Starts a private PostgreSQL 15 (scripts/lib/pg.sh), migrates a database with the built
# cronwheel-admin and prints, per copy and round, the milliseconds for 30,000 fires and how
# many updates were HOT. No admin runs: this is the database's cost alone.
#
#   tests/bench/job_log_versions.sh [--fsync on|off] [--rounds N]
set -euo pipefail
cd "$(dirname "$0")/../.."
root=$(pwd)
fsync=on
rounds=3
while [ $# -gt 0 ]; do
  case $1 in
    --fsync) fsync=$2; shift 2 ;;
    --rounds) rounds=$2; shift 2 ;;
    *) echo "usage: $0 [--fsync on|off] [--rounds N]" >&2; exit 2 ;;
  esac
done
admin=$root/build/bin/cronwheel-admin
[ -x "$admin" ] || { echo "no $admin: build the cronwheel-admin target first" >&2; exit 2; }

. scripts/lib/pg.sh
pgdir=$(mktemp -d /tmp/cronwheel-job-log-versions.XXXXXX)
cleanup() {
  pg_stop "$pgdir/data"
  rm -rf "$pgdir"
}
trap cleanup EXIT
chmod 755 "$pgdir"
pg_init "$pgdir/data"
opts=""
[ "$fsync" = on ] || opts="-c fsync=off"
port=$(pg_start_free "$pgdir/data" "$opts")
url="postgresql://cronwheel@127.0.0.1:$port/postgres"
db="postgresql://cronwheel@127.0.0.1:$port/versions"
psql "$url" -qc "CREATE DATABASE versions"
"$admin" migrate --db-url "$db" >/dev/null
echo "PostgreSQL on 127.0.0.1:$port (fsync $fsync); $(nproc) cores; $(date -u '+%F %T UTC')"

psql "$db" -q <<'SQL'
CREATE TABLE v_all (LIKE job_log INCLUDING ALL);
CREATE TABLE v_no_lists (LIKE job_log INCLUDING ALL);
CREATE TABLE v_hot_able (LIKE job_log INCLUDING ALL) WITH (fillfactor = 70);
CREATE TABLE v_in_flight (LIKE job_log INCLUDING ALL);
CREATE TABLE v_at_end (LIKE job_log INCLUDING ALL);
CREATE TABLE v_fire (LIKE job_log INCLUDING DEFAULTS) WITH (fillfactor = 70);
ALTER TABLE v_fire ADD PRIMARY KEY (id);
CREATE UNIQUE INDEX v_fire_scheduled ON v_fire (job_id, scheduled_time, shard_index);
CREATE INDEX v_fire_owner ON v_fire (admin_node, scheduled_time);
DO $$
DECLARE i record;
BEGIN
  FOR i IN SELECT indexname FROM pg_indexes WHERE tablename = 'v_no_lists'
             AND indexdef ~ '\((job_id, |job_group, |)scheduled_time DESC, id DESC\)$' LOOP
    EXECUTE format('DROP INDEX %I', i.indexname);
  END LOOP;
  FOR i IN SELECT indexname FROM pg_indexes WHERE tablename = 'v_hot_able'
             AND indexdef ~ '(state|admin_node|executor_address)' LOOP
    EXECUTE format('DROP INDEX %I', i.indexname);
  END LOOP;
END $$;
-- The life of 15 seconds' fires of 2,000 jobs, batch by batch; answers the milliseconds.
CREATE FUNCTION lifecycle(t regclass, round int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE started timestamptz := clock_timestamp(); s int; first bigint; at bigint;
BEGIN
  FOR s IN 1..15 LOOP
    at := 1700000000000 + (round * 100 + s) * 1000;
    EXECUTE format('INSERT INTO %s (job_group, job_id, state, trigger_type, scheduled_time, admin_node, '
                   'executor_handler) SELECT 1, j, ''pending'', ''SCHEDULE'', $1, ''node-1'', ''fire'' '
                   'FROM generate_series(1, 2000) j', t) USING at;
    EXECUTE format('SELECT min(id) FROM %s WHERE scheduled_time = $1', t) INTO first USING at;
    EXECUTE format('UPDATE %s SET state = ''sending'', trigger_time = now(), '
                   'executor_address = ''http://127.0.0.1:9999/'' WHERE id >= $1 AND id < $1 + 2000', t) USING first;
    EXECUTE format('UPDATE %s SET state = ''triggered'', trigger_code = 200, trigger_msg = ''Code: 200'' '
                   'WHERE id >= $1 AND id < $1 + 2000', t) USING first;
    EXECUTE format('UPDATE %s SET state = ''succeeded'', handle_time = now(), handle_code = 200, '
                   'handle_msg = ''done'' WHERE id >= $1 AND id < $1 + 2000', t) USING first;
  END LOOP;
  RETURN round(extract(epoch FROM clock_timestamp() - started) * 1000);
END $$;
-- The same life with pending and sending in v_fire: the run row written twice.
CREATE FUNCTION lifecycle_in_flight(t regclass, at_end boolean, round int) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE started timestamptz := clock_timestamp(); s int; first bigint; at bigint; cols text;
BEGIN
  SELECT string_agg(quote_ident(column_name), ', ' ORDER BY ordinal_position) INTO cols
    FROM information_schema.columns
   WHERE table_name = 'v_fire'
     AND column_name NOT IN ('state', 'trigger_code', 'trigger_msg', 'handle_time', 'handle_code', 'handle_msg');
  FOR s IN 1..15 LOOP
    at := 1700000000000 + (round * 100 + s) * 1000;
    INSERT INTO v_fire (id, job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_handler)
      SELECT nextval('job_log_id_seq'), 1, j, 'pending', 'SCHEDULE', at, 'node-1', 'fire' FROM generate_series(1, 2000) j;
    SELECT min(id) INTO first FROM v_fire WHERE admin_node = 'node-1' AND scheduled_time = at;
    UPDATE v_fire SET state = 'sending', trigger_time = now(), executor_address = 'http://127.0.0.1:9999/'
      WHERE id >= first AND id < first + 2000;
    IF at_end THEN
      UPDATE v_fire SET state = 'triggered', trigger_code = 200, trigger_msg = 'Code: 200'
        WHERE id >= first AND id < first + 2000;
      EXECUTE format('WITH ended AS (DELETE FROM v_fire WHERE id >= $1 AND id < $1 + 2000 AND state = ''triggered'' '
                     'RETURNING *) INSERT INTO %s (%s, state, handle_time, handle_code, handle_msg) '
                     'SELECT %s, ''succeeded'', now(), 200, ''done'' FROM ended', t, cols, cols) USING first;
    ELSE
      EXECUTE format('WITH answered AS (DELETE FROM v_fire WHERE id >= $1 AND id < $1 + 2000 AND state = ''sending'' '
                     'RETURNING *) INSERT INTO %s (%s, state, trigger_code, trigger_msg) '
                     'SELECT %s, ''triggered'', 200, ''Code: 200'' FROM answered', t, cols, cols) USING first;
      EXECUTE format('UPDATE %s SET state = ''succeeded'', handle_time = now(), handle_code = 200, handle_msg = ''done'' '
                     'WHERE id >= $1 AND id < $1 + 2000', t) USING first;
    END IF;
  END LOOP;
  RETURN round(extract(epoch FROM clock_timestamp() - started) * 1000);
END $$;
SQL

echo
echo "| copy | indexes | round | ms for 30,000 fires | µs per fire | HOT updates so far |"
echo "|---|---:|---:|---:|---:|---|"
for r in $(seq 1 "$rounds"); do
  for t in v_all v_no_lists v_hot_able v_in_flight v_at_end; do
    n=$(psql "$db" -qAt -c "SELECT count(*) FROM pg_indexes WHERE tablename = '$t'")
    if [ $t = v_at_end ]; then
      ms=$(psql "$db" -qAt -c "SELECT lifecycle_in_flight('$t', true, $r)")
      n="$n + $(psql "$db" -qAt -c "SELECT count(*) FROM pg_indexes WHERE tablename = 'v_fire'")"
    elif [ $t = v_in_flight ]; then
      ms=$(psql "$db" -qAt -c "SELECT lifecycle_in_flight('$t', false, $r)")
      n="$n + $(psql "$db" -qAt -c "SELECT count(*) FROM pg_indexes WHERE tablename = 'v_fire'")"
    else
      ms=$(psql "$db" -qAt -c "SELECT lifecycle('$t', $r)")
    fi
    hot=$(psql "$db" -qAt -c "SELECT pg_stat_force_next_flush(); SELECT n_tup_hot_upd || ' of ' || n_tup_upd FROM pg_stat_user_tables WHERE relname = '$t'" | tail -1)
    case $t in
      v_in_flight|v_at_end) hot="$hot; v_fire (both copies): $(psql "$db" -qAt -c "SELECT n_tup_hot_upd || ' of ' || n_tup_upd FROM pg_stat_user_tables WHERE relname = 'v_fire'")" ;;
    esac
    echo "| ${t#v_} | $n | $r | $ms | $((ms * 1000 / 30000)) | $hot |"
  done
done
