-- A job's schedule state (running or stopped, its last and next fire time) moves out of job_info
-- into a narrow table of its own. The schedule thread rewrites it for every job it advances: for
-- a job firing each second, every second. In job_info such an update could never be HOT
-- (job_info_due is keyed on the time it changes), so each one wrote a new ~300-byte row version
-- and an entry in each of job_info's five indexes, job_info_due's holding the whole schedule.
-- Here it writes a ~60-byte row and two narrow index entries (docs/benchmarks.md, schedule_bench),
-- and job_info is written only when an operator or a jobs file changes a job.
--
-- Every job has exactly one row here from its creation on: the stores insert both in one
-- statement, and the trigger below gives a job inserted any other way a stopped schedule;
-- deleting the job deletes it. count_group is the job's group, kept here by a trigger on
-- job_info, so the per-group count of scheduled jobs (job_count.enabled) follows this table's own
-- rows; named apart from job_info.job_group so that a join of the two reads that one unqualified.
CREATE TABLE job_schedule (
    job_id             bigint   PRIMARY KEY REFERENCES job_info (id) ON DELETE CASCADE,
    count_group        bigint   NOT NULL,
    -- 1: scheduled (the schedule thread picks it up); 0: stopped.
    trigger_status     smallint NOT NULL DEFAULT 0,
    trigger_last_time  bigint   NOT NULL DEFAULT 0,
    trigger_next_time  bigint   NOT NULL DEFAULT 0
) WITH (fillfactor = 50);
-- Half of each page is left free: a row's next version then fits beside it (its dead versions
-- are pruned as the page is read), where a full page sends it to another page, one more page
-- written and a lock record logged per update.

INSERT INTO job_schedule (job_id, count_group, trigger_status, trigger_last_time, trigger_next_time)
SELECT id, job_group, trigger_status, trigger_last_time, trigger_next_time FROM job_info;

-- 0006's counts per group: the total follows job_info, the scheduled jobs follow job_schedule.
DROP TRIGGER job_count_changed ON job_info;
DROP INDEX job_info_due;
ALTER TABLE job_info DROP CONSTRAINT job_info_running_needs_schedule;
ALTER TABLE job_info
    DROP COLUMN trigger_status,
    DROP COLUMN trigger_last_time,
    DROP COLUMN trigger_next_time;

-- The rules keep their names (the API names the field from them: pg_store_support.cpp).
ALTER TABLE job_schedule
    ADD CONSTRAINT job_info_trigger_status_check CHECK (trigger_status IN (0, 1)),
    ADD CONSTRAINT job_info_trigger_last_time_check CHECK (trigger_last_time >= 0),
    ADD CONSTRAINT job_info_trigger_next_time_check CHECK (trigger_next_time >= 0);

-- The schedule thread's pre-read walks this in due order and reads each job's schedule from
-- job_info by its key (pg_schedule_store.cpp, sched_due); stopped jobs are not in it.
CREATE INDEX job_schedule_due ON job_schedule (trigger_next_time) INCLUDE (job_id, trigger_last_time)
    WHERE trigger_status = 1;

CREATE FUNCTION job_schedule_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_schedule (job_id, count_group) SELECT id, job_group FROM added_jobs ON CONFLICT (job_id) DO NOTHING;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_schedule_added AFTER INSERT ON job_info
    REFERENCING NEW TABLE AS added_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION job_schedule_added();

CREATE FUNCTION job_schedule_group() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_schedule SET count_group = NEW.job_group WHERE job_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_schedule_group AFTER UPDATE OF job_group ON job_info
    FOR EACH ROW WHEN (OLD.job_group IS DISTINCT FROM NEW.job_group) EXECUTE FUNCTION job_schedule_group();

-- job_count: as 0006 wrote it (once per statement for inserts and deletes, per row for a move
-- or a start or stop, the WHEN clauses skipping the schedule thread's writes of fire times).
CREATE OR REPLACE FUNCTION job_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_count (job_group, total) SELECT job_group, count(*) FROM added_jobs GROUP BY job_group
    ON CONFLICT (job_group) DO UPDATE SET total = job_count.total + EXCLUDED.total;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION job_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_count c SET total = c.total - r.total
    FROM (SELECT job_group, count(*) AS total FROM removed_jobs GROUP BY job_group) r
    WHERE c.job_group = r.job_group;
    RETURN NULL;
END
$$;

CREATE OR REPLACE FUNCTION job_count_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_count SET total = total - 1 WHERE job_group = OLD.job_group;
    INSERT INTO job_count (job_group, total) VALUES (NEW.job_group, 1)
    ON CONFLICT (job_group) DO UPDATE SET total = job_count.total + 1;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_count_changed AFTER UPDATE OF job_group ON job_info
    FOR EACH ROW WHEN (OLD.job_group IS DISTINCT FROM NEW.job_group) EXECUTE FUNCTION job_count_changed();

CREATE FUNCTION job_count_scheduled_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_count (job_group, enabled)
    SELECT count_group, count(*) FROM added_schedules WHERE trigger_status = 1 GROUP BY count_group
    ON CONFLICT (job_group) DO UPDATE SET enabled = job_count.enabled + EXCLUDED.enabled;
    RETURN NULL;
END
$$;

CREATE FUNCTION job_count_scheduled_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_count c SET enabled = c.enabled - r.enabled
    FROM (SELECT count_group, count(*) AS enabled FROM removed_schedules WHERE trigger_status = 1 GROUP BY count_group) r
    WHERE c.job_group = r.count_group;
    RETURN NULL;
END
$$;

CREATE FUNCTION job_count_scheduled_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_count SET enabled = enabled - 1 WHERE job_group = OLD.count_group AND OLD.trigger_status = 1;
    IF NEW.trigger_status = 1 THEN
        INSERT INTO job_count (job_group, enabled) VALUES (NEW.count_group, 1)
        ON CONFLICT (job_group) DO UPDATE SET enabled = job_count.enabled + 1;
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_count_scheduled_added AFTER INSERT ON job_schedule REFERENCING NEW TABLE AS added_schedules
    FOR EACH STATEMENT EXECUTE FUNCTION job_count_scheduled_added();
CREATE TRIGGER job_count_scheduled_removed AFTER DELETE ON job_schedule REFERENCING OLD TABLE AS removed_schedules
    FOR EACH STATEMENT EXECUTE FUNCTION job_count_scheduled_removed();
CREATE TRIGGER job_count_scheduled_changed AFTER UPDATE OF count_group, trigger_status ON job_schedule
    FOR EACH ROW WHEN (OLD.count_group IS DISTINCT FROM NEW.count_group OR OLD.trigger_status IS DISTINCT FROM NEW.trigger_status)
    EXECUTE FUNCTION job_count_scheduled_changed();

-- 0001's job_info_running_needs_schedule (a job without a schedule cannot run) spans both tables
-- now: checked when a job starts and when a running job's schedule type becomes NONE, under the
-- same name. The WHEN clauses keep it off the schedule thread's updates, which never start a job.
CREATE FUNCTION job_running_needs_schedule() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    job bigint := (to_jsonb(NEW) ->> CASE TG_TABLE_NAME WHEN 'job_schedule' THEN 'job_id' ELSE 'id' END)::bigint;
BEGIN
    IF EXISTS (SELECT 1 FROM job_info j JOIN job_schedule s ON s.job_id = j.id
               WHERE j.id = job AND s.trigger_status = 1 AND j.schedule_type = 'NONE') THEN
        RAISE EXCEPTION 'job % violates check constraint "job_info_running_needs_schedule": a job without a schedule cannot run', job
            USING ERRCODE = 'check_violation', CONSTRAINT = 'job_info_running_needs_schedule';
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_schedule_start_needs_schedule AFTER INSERT ON job_schedule
    FOR EACH ROW WHEN (NEW.trigger_status = 1) EXECUTE FUNCTION job_running_needs_schedule();
CREATE TRIGGER job_schedule_restart_needs_schedule AFTER UPDATE OF trigger_status ON job_schedule
    FOR EACH ROW WHEN (OLD.trigger_status = 0 AND NEW.trigger_status = 1) EXECUTE FUNCTION job_running_needs_schedule();
CREATE TRIGGER job_info_running_needs_schedule AFTER UPDATE OF schedule_type ON job_info
    FOR EACH ROW WHEN (NEW.schedule_type = 'NONE' AND OLD.schedule_type <> 'NONE')
    EXECUTE FUNCTION job_running_needs_schedule();
