-- Runs that have not finished (pending, sending, triggered) move out of the history into a table
-- of their own, and a run's history row is written once, when it ends. Before, a fire wrote four
-- versions of one job_log row (inserted pending by the scan, then sending, triggered and its
-- result), none of them HOT (every transition changes `state`, which partial indexes name), so
-- each version took an entry in each of the history's full indexes: the lists by job, by group
-- and by time, and the scheduled fire's key. docs/benchmarks.md: the run row's writes alone take
-- half the database time this way (job_log_versions.sh); end to end, at 8,000 fires a second,
-- the database does 8 % less work and writes 7 % less WAL (fire_load).
--
--   job_log_active    the runs in flight: few indexes, each but the key, the job's and the time
--                     partial to a state, so a transition writes about five narrow entries
--   job_log_finished  what job_log was, renamed: finished runs only (succeeded, failed, lost,
--                     cancelled), every index the console's lists, the alarms and retention read;
--                     the run report's triggers stay on it
--   job_log           a view of both (UNION ALL), for everything that reads runs whatever their
--                     state: the lists, a run by id, the console. Each table's CHECK on `state`
--                     lets the planner leave out the table a state filter excludes.
--
-- A run keeps its id (both take it from job_log_id_seq) when it ends: the statement that
-- finishes it deletes it from job_log_active and inserts it into job_log_finished, in one
-- statement, so no reader sees it in both or in neither.
--
-- Upgrading: renaming is immediate, the unfinished runs are copied (a few), and the new CHECK on
-- the history is validated by one read of it: the whole migration took 0.3 s on a history of
-- 1,000,000 runs on 2 cores.

ALTER TABLE job_log RENAME TO job_log_finished;
ALTER INDEX job_log_pkey RENAME TO job_log_finished_pkey;

CREATE TABLE job_log_active (LIKE job_log_finished INCLUDING DEFAULTS INCLUDING CONSTRAINTS);
ALTER TABLE job_log_active ADD CONSTRAINT job_log_active_pkey PRIMARY KEY (id);
-- The names the history's constraints have, so a refusal names the same field (pg_store_support.cpp).
ALTER TABLE job_log_active
    ADD CONSTRAINT job_log_job_id_fkey FOREIGN KEY (job_id) REFERENCES job_info (id) ON DELETE CASCADE,
    ADD CONSTRAINT job_log_backfill_id_fkey FOREIGN KEY (backfill_id) REFERENCES backfill (id) ON DELETE CASCADE,
    ADD CONSTRAINT job_log_active_unfinished CHECK (state IN ('pending', 'sending', 'triggered'));

INSERT INTO job_log_active SELECT * FROM job_log_finished WHERE state IN ('pending', 'sending', 'triggered');
DELETE FROM job_log_finished WHERE state IN ('pending', 'sending', 'triggered');
ALTER TABLE job_log_finished
    ADD CONSTRAINT job_log_finished_state CHECK (state IN ('succeeded', 'failed', 'lost', 'cancelled')) NOT VALID;
ALTER TABLE job_log_finished VALIDATE CONSTRAINT job_log_finished_state;

-- What only runs in flight are read by: moved over.
DROP INDEX job_log_pending;
DROP INDEX job_log_sending;
DROP INDEX job_log_triggered;
DROP INDEX job_log_waiting_slot;
DROP INDEX job_log_holding_slot;
DROP INDEX job_log_backfill_unfinished;
-- A scheduled (backfill) fire is unique among the runs in flight; the statements that insert one
-- also look it up in the history, by job_log_job_time (job_log_backfill).
DROP INDEX job_log_scheduled_fire;
DROP INDEX job_log_backfill_fire;

CREATE UNIQUE INDEX job_log_active_scheduled_fire ON job_log_active (job_id, scheduled_time, shard_index)
    WHERE trigger_type IN ('SCHEDULE', 'MISFIRE');
CREATE UNIQUE INDEX job_log_active_backfill_fire ON job_log_active (backfill_id, scheduled_time, shard_index)
    WHERE trigger_type = 'BACKFILL';
-- A job's runs (its cancels, its held runs, the foreign key's cascade, its list newest first).
CREATE INDEX job_log_active_job ON job_log_active (job_id, scheduled_time DESC, id DESC);
-- All runs newest first: the lists read both tables in this order, merged (a list of every run,
-- of a user's groups, of the pending ones), so a page stops after its rows here too instead of
-- sorting every run in flight (docs/benchmarks.md, list_bench).
CREATE INDEX job_log_active_time ON job_log_active (scheduled_time DESC, id DESC);
-- The feeder and a takeover: pending fires by owner, in due order (fires waiting for a slot apart).
CREATE INDEX job_log_active_pending ON job_log_active (admin_node, scheduled_time)
    WHERE state = 'pending' AND NOT waiting_slot;
CREATE INDEX job_log_active_sending ON job_log_active (admin_node) WHERE state = 'sending';
-- Runs waiting for a result (the lost-result monitor).
CREATE INDEX job_log_active_triggered ON job_log_active (executor_address, trigger_time) WHERE state = 'triggered';
-- Concurrency limits (0023).
CREATE INDEX job_log_active_waiting_slot ON job_log_active (job_group, scheduled_time)
    WHERE waiting_slot AND state = 'pending';
CREATE INDEX job_log_active_holding_slot ON job_log_active (job_group, job_id) WHERE slot_admitted;
CREATE INDEX job_log_active_backfill ON job_log_active (backfill_id) WHERE backfill_id IS NOT NULL;
CREATE INDEX job_log_active_workflow_run ON job_log_active (workflow_run_id) WHERE workflow_run_id IS NOT NULL;
CREATE INDEX job_log_active_retry_of ON job_log_active (parent_log_id) WHERE trigger_type = 'RETRY';

CREATE VIEW job_log AS
    SELECT * FROM job_log_active
    UNION ALL
    SELECT * FROM job_log_finished;

-- The view takes writes too, for whatever writes runs by plain SQL (an operator's script, a tool
-- of an older version, test fixtures): a row goes to the table its state belongs in, and moves
-- when an update changes that. One row at a time, through this trigger: the admin's own
-- statements write the tables.
ALTER VIEW job_log ALTER COLUMN id SET DEFAULT nextval('job_log_id_seq');
ALTER VIEW job_log ALTER COLUMN state SET DEFAULT 'pending';
ALTER VIEW job_log ALTER COLUMN executor_address SET DEFAULT '';
ALTER VIEW job_log ALTER COLUMN executor_handler SET DEFAULT '';
ALTER VIEW job_log ALTER COLUMN executor_param SET DEFAULT '';
ALTER VIEW job_log ALTER COLUMN shard_index SET DEFAULT 0;
ALTER VIEW job_log ALTER COLUMN shard_total SET DEFAULT 1;
ALTER VIEW job_log ALTER COLUMN executor_fail_retry_count SET DEFAULT 0;
ALTER VIEW job_log ALTER COLUMN trigger_code SET DEFAULT 0;
ALTER VIEW job_log ALTER COLUMN trigger_msg SET DEFAULT '';
ALTER VIEW job_log ALTER COLUMN handle_code SET DEFAULT 0;
ALTER VIEW job_log ALTER COLUMN handle_msg SET DEFAULT '';
ALTER VIEW job_log ALTER COLUMN alarm_status SET DEFAULT 0;
ALTER VIEW job_log ALTER COLUMN created_at SET DEFAULT now();
ALTER VIEW job_log ALTER COLUMN alarm_time SET DEFAULT 0;
ALTER VIEW job_log ALTER COLUMN chain_depth SET DEFAULT 0;
ALTER VIEW job_log ALTER COLUMN waiting_slot SET DEFAULT false;
ALTER VIEW job_log ALTER COLUMN slot_admitted SET DEFAULT false;

CREATE FUNCTION job_log_write() RETURNS trigger LANGUAGE plpgsql AS $fn$
DECLARE
    was_active boolean := false;
BEGIN
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM job_log_active WHERE id = OLD.id;
        was_active := FOUND;
    END IF;
    IF TG_OP = 'DELETE' THEN
        IF NOT was_active THEN
            DELETE FROM job_log_finished WHERE id = OLD.id;
        END IF;
        RETURN OLD;
    END IF;
    IF NEW.state IN ('pending', 'sending', 'triggered') THEN
        IF TG_OP = 'UPDATE' AND NOT was_active THEN
            -- Back from the history (no path of the admin does this): its report count goes too.
            DELETE FROM job_log_finished WHERE id = OLD.id;
            IF OLD.state IN ('succeeded', 'failed', 'lost') THEN
                PERFORM job_run_report_add(ARRAY[OLD.job_group], ARRAY[OLD.scheduled_time], ARRAY[OLD.state::text],
                                           ARRAY[-1::bigint]);
            END IF;
        END IF;
        INSERT INTO job_log_active SELECT NEW.*;
    ELSIF TG_OP = 'UPDATE' AND NOT was_active THEN
        -- Within the history: an update, as the run report's update trigger expects.
        UPDATE job_log_finished SET
            (id, job_group, job_id, state, trigger_type, scheduled_time, admin_node, executor_address, executor_handler,
             executor_param, shard_index, shard_total, executor_fail_retry_count, parent_log_id, trigger_time,
             trigger_code, trigger_msg, handle_time, handle_code, handle_msg, alarm_status, created_at, alarm_time,
             chain_depth, workflow_run_id, workflow_node, output, backfill_id, waiting_slot, slot_admitted,
             logical_time) =
            (NEW.id, NEW.job_group, NEW.job_id, NEW.state, NEW.trigger_type, NEW.scheduled_time, NEW.admin_node,
             NEW.executor_address, NEW.executor_handler, NEW.executor_param, NEW.shard_index, NEW.shard_total,
             NEW.executor_fail_retry_count, NEW.parent_log_id, NEW.trigger_time, NEW.trigger_code, NEW.trigger_msg,
             NEW.handle_time, NEW.handle_code, NEW.handle_msg, NEW.alarm_status, NEW.created_at, NEW.alarm_time,
             NEW.chain_depth, NEW.workflow_run_id, NEW.workflow_node, NEW.output, NEW.backfill_id, NEW.waiting_slot,
             NEW.slot_admitted, NEW.logical_time)
        WHERE id = OLD.id;
    ELSE
        INSERT INTO job_log_finished SELECT NEW.*;
    END IF;
    RETURN NEW;
END
$fn$;

CREATE TRIGGER job_log_write INSTEAD OF INSERT OR UPDATE OR DELETE ON job_log
    FOR EACH ROW EXECUTE FUNCTION job_log_write();
