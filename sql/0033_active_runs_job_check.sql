-- The scan writes its fires into job_log_active without a foreign-key check of their job. The
-- check took a KEY SHARE lock of the job's row for every fire (a row lock written to the WAL, a
-- page of job_info dirtied, among 1,000,000 jobs a page read too): the scan holds the scheduling
-- lock while it writes, and that lock bounds how many fires a second one admin decides
-- (docs/benchmarks.md, "A run in flight without its job's foreign key"). The history dropped the
-- same key in 0032.
--
-- What the key did stays done:
--   - A job's runs in flight go with the job: the statement trigger on job_info deletes them,
--     then the job's history (0032), after the job's other rows went by their keys' cascades.
--     Each statement of the trigger reads with a snapshot of its own, so it sees what committed
--     while the delete waited:
--       - a scheduled fire is written by the scan under its schedule row's lock (the scan
--         advances the schedule, then writes the fires of exactly the jobs it advanced); the
--         delete's cascade to job_schedule waits for that lock, so the fire is committed
--         before the trigger reads, or the scan finds the schedule gone and writes none;
--       - every other run is checked as the key checked it (below): its writer holds the job's
--         row in KEY SHARE until it commits, which the delete of that row waits for.
--   - A run cannot be in flight for a job that does not exist: every writer other than the
--     scan is refused as the key refused it, under the key's name (pg_store_support.cpp maps it
--     to "job does not exist"). The scan's own fires are the rows of type SCHEDULE or MISFIRE
--     and shard 0; the other shards of a broadcast fire are copies written when it is sent, and
--     are checked.

ALTER TABLE job_log_active DROP CONSTRAINT job_log_job_id_fkey;

CREATE FUNCTION job_run_job_exists() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    PERFORM 1 FROM job_info WHERE id = NEW.job_id FOR KEY SHARE;
    IF NOT FOUND THEN
        RAISE foreign_key_violation USING
            MESSAGE = 'insert or update on table "job_log_active" violates foreign key constraint '
                      '"job_log_job_id_fkey"',
            DETAIL = format('Key (job_id)=(%s) is not present in table "job_info".', NEW.job_id),
            CONSTRAINT = 'job_log_job_id_fkey', TABLE = 'job_log_active', COLUMN = 'job_id';
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER job_run_job_exists BEFORE INSERT ON job_log_active
    FOR EACH ROW WHEN (NOT (NEW.trigger_type IN ('SCHEDULE', 'MISFIRE') AND NEW.shard_index = 0))
    EXECUTE FUNCTION job_run_job_exists();
CREATE TRIGGER job_run_job_changed BEFORE UPDATE OF job_id ON job_log_active
    FOR EACH ROW WHEN (NEW.job_id IS DISTINCT FROM OLD.job_id)
    EXECUTE FUNCTION job_run_job_exists();

-- The runs in flight first: a run that ends while the delete waits leaves job_log_active and
-- reaches the history in one statement, which the second statement then sees.
CREATE FUNCTION job_runs_removed() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM job_log_active a USING removed_jobs r WHERE a.job_id = r.id;
    DELETE FROM job_log_finished f USING removed_jobs r WHERE f.job_id = r.id;
    RETURN NULL;
END
$fn$;

DROP TRIGGER job_history_removed ON job_info;
DROP FUNCTION job_history_removed();
CREATE TRIGGER job_runs_removed AFTER DELETE ON job_info
    REFERENCING OLD TABLE AS removed_jobs FOR EACH STATEMENT EXECUTE FUNCTION job_runs_removed();
