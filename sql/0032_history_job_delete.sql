-- A run's history row is written without a foreign-key check of its job. The check took a
-- KEY SHARE lock of the job's row for every run that ended (a row lock written to the WAL, the
-- job's page dirtied) and 4-5 µs of the database's time: a fifth of the statement that moves
-- ended runs from job_log_active to the history (docs/benchmarks.md, "One write per fire").
--
-- What the key did stays done:
--   - A job's history goes with the job: a statement trigger on job_info deletes it, after the
--     job's other rows (its schedule, its runs in flight) went by their keys' cascades. Each of
--     its statements reads with a snapshot of its own, so it also sees a run that ended while the
--     delete waited: an ended run leaves job_log_active under a row lock the job's cascade
--     waits for, and a fire the scan records as skipped is written under its schedule row's lock.
--   - A run cannot reach the history for a job that does not exist: every run the admin ends
--     comes from job_log_active, which keeps its key (a run is inserted there checked), and the
--     scan's skipped fires are written for jobs whose schedule it has just advanced. A row written
--     through the job_log view straight into the history is checked by the view's trigger below.
ALTER TABLE job_log_finished DROP CONSTRAINT job_log_job_id_fkey;

CREATE FUNCTION job_history_removed() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    DELETE FROM job_log_finished f USING removed_jobs r WHERE f.job_id = r.id;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER job_history_removed AFTER DELETE ON job_info
    REFERENCING OLD TABLE AS removed_jobs FOR EACH STATEMENT EXECUTE FUNCTION job_history_removed();

-- The view's writes (sql/0028_active_runs.sql), with the key's check for a row that goes to the
-- history under a job it did not have before: the same refusal, by the same constraint name.
CREATE OR REPLACE FUNCTION job_log_write() RETURNS trigger LANGUAGE plpgsql AS $fn$
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
    IF NEW.state NOT IN ('pending', 'sending', 'triggered')
       AND (TG_OP = 'INSERT' OR NEW.job_id IS DISTINCT FROM OLD.job_id OR was_active) THEN
        PERFORM 1 FROM job_info WHERE id = NEW.job_id FOR KEY SHARE;
        IF NOT FOUND THEN
            RAISE foreign_key_violation USING
                MESSAGE = 'insert or update on table "job_log_finished" violates foreign key constraint '
                          '"job_log_job_id_fkey"',
                DETAIL = format('Key (job_id)=(%s) is not present in table "job_info".', NEW.job_id),
                CONSTRAINT = 'job_log_job_id_fkey', TABLE = 'job_log_finished', COLUMN = 'job_id';
        END IF;
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
