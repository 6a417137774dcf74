-- Alarms (docs/alarms.md): a run that ended badly alarms its job's recipients once, whichever
-- admin node sees it first, and a job that keeps failing sends one summary per quiet period
-- rather than a message per run.
--
-- job_log.alarm_status (0001): 0 not decided, 1 no alarm needed, 2 alarm sent, 3 alarm failed,
-- -1 being sent. A run calls for an alarm when it ended `failed` or `lost` with no retry left,
-- or was `cancelled` by its job's misfire strategy (an operator's cancel is marked 1 at once).
-- A node claims such runs (-1) in a transaction, sends outside it and records 2 or 3; a claim
-- whose node died before recording it is claimed again after a while: a run is alarmed once,
-- or twice when its node died while sending.

-- When the run was claimed (-1), or its alarm sent or given up (2, 3); epoch ms, 0 before.
ALTER TABLE job_log ADD COLUMN alarm_time bigint NOT NULL DEFAULT 0;

-- Runs that ended before alarms were sent are history, not news: upgrading alarms none of them.
-- (Cancelled runs have no index of their own: on a large run table this reads it once, about
-- as long as 0006's index builds.)
UPDATE job_log SET alarm_status = 1 WHERE alarm_status = 0 AND state IN ('failed', 'lost', 'cancelled');

-- The runs a claim looks at: ended badly and not yet decided, or being sent. Rows leave it once
-- decided, so it holds only the undecided and in-flight alarms, however long the history.
DROP INDEX job_log_alarm;
CREATE INDEX job_log_alarm ON job_log (job_id, id)
    WHERE alarm_status IN (0, -1) AND state IN ('failed', 'lost', 'cancelled');

-- Per job, when its last alarm was claimed: the next one waits out the quiet period after it.
-- A node holds a job's row locked while it claims the job's runs, and skips rows another node
-- holds (FOR UPDATE SKIP LOCKED), so two nodes never claim the same job in one period. Every
-- job has its row from its creation on (the trigger below), so a claim never inserts one and
-- never waits for another node's insert.
CREATE TABLE job_alarm (
    job_id        bigint  PRIMARY KEY REFERENCES job_info (id) ON DELETE CASCADE,
    last_sent_at  bigint  NOT NULL DEFAULT 0  -- epoch ms
);
INSERT INTO job_alarm (job_id) SELECT id FROM job_info;

CREATE FUNCTION job_alarm_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_alarm (job_id) SELECT id FROM added_jobs;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_alarm_added AFTER INSERT ON job_info
    REFERENCING NEW TABLE AS added_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION job_alarm_added();
