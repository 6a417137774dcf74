-- Backfills of workflows, and the logical time of a run (docs/scheduling.md, "Backfill";
-- docs/workflows.md, "Backfill").

-- A run's logical time: the instant it stands for, sent to its executor as logDateTime (the day
-- its log is filed under) and asked for with every /log of it. Written when the row is inserted
-- and never changed: a backfill's run, each retry of it, and for a backfill of a workflow every
-- node run and their retries carry the backfill's historical instant. NULL for every other run,
-- whose logical time is its scheduled time (admin/model/records.h, log_date_time).
ALTER TABLE job_log ADD COLUMN logical_time bigint;
-- Runs of job backfills already written stand for their instants, and so do the retries of them
-- (a retry of a retry too): a retry still pending goes out with its run's instant.
WITH RECURSIVE stands_for (id, instant) AS (
    SELECT id, scheduled_time FROM job_log WHERE backfill_id IS NOT NULL AND trigger_type = 'BACKFILL'
    UNION ALL
    SELECT r.id, s.instant FROM job_log r JOIN stands_for s ON r.parent_log_id = s.id
     WHERE r.trigger_type = 'RETRY'
)
UPDATE job_log l SET logical_time = s.instant FROM stands_for s WHERE l.id = s.id;

-- A backfill runs a job or a workflow, never both.
ALTER TABLE backfill ALTER COLUMN job_id DROP NOT NULL;
ALTER TABLE backfill ADD COLUMN workflow_id bigint REFERENCES workflow (id) ON DELETE CASCADE;
-- A workflow's backfill: the inputs each of its runs gets, every declared parameter with its
-- value ({"name": value}); NULL for a job's.
ALTER TABLE backfill ADD COLUMN params jsonb;
ALTER TABLE backfill ADD CONSTRAINT backfill_of_job_or_workflow CHECK ((job_id IS NULL) <> (workflow_id IS NULL));
ALTER TABLE backfill ADD CONSTRAINT backfill_params_of_workflow CHECK (params IS NULL OR workflow_id IS NOT NULL);
CREATE INDEX backfill_by_workflow ON backfill (workflow_id, id DESC) WHERE workflow_id IS NOT NULL;

-- A workflow backfill's runs are workflow runs of trigger type BACKFILL at their instant, tied to
-- it; deleting the backfill (only ever with its workflow) deletes them.
ALTER TABLE workflow_run ADD COLUMN backfill_id bigint;
ALTER TABLE workflow_run ADD CONSTRAINT workflow_run_backfill_id_fkey
    FOREIGN KEY (backfill_id) REFERENCES backfill (id) ON DELETE CASCADE NOT VALID;
ALTER TABLE workflow_run VALIDATE CONSTRAINT workflow_run_backfill_id_fkey;
ALTER TABLE workflow_run ADD CONSTRAINT workflow_run_backfill_run_has_backfill
    CHECK (trigger_type <> 'BACKFILL' OR backfill_id IS NOT NULL) NOT VALID;
ALTER TABLE workflow_run VALIDATE CONSTRAINT workflow_run_backfill_run_has_backfill;

-- One backfill writes one workflow run per instant, whichever node steps it.
CREATE UNIQUE INDEX workflow_run_backfill_fire ON workflow_run (backfill_id, scheduled_time)
    WHERE backfill_id IS NOT NULL;
-- A backfill's runs newest first (workflow-runs?backfillId=, the foreign key's cascade), and its
-- unfinished ones: what a pump counts every second, at most max_concurrent.
CREATE INDEX workflow_run_by_backfill ON workflow_run (backfill_id, id DESC) WHERE backfill_id IS NOT NULL;
CREATE INDEX workflow_run_backfill_unfinished ON workflow_run (backfill_id)
    WHERE backfill_id IS NOT NULL AND state IN ('waiting', 'running');
-- The runs a workflow has at given instants (a backfill's SKIP): its schedule's and backfills'.
CREATE INDEX workflow_run_at ON workflow_run (workflow_id, scheduled_time)
    WHERE trigger_type IN ('SCHEDULE', 'MISFIRE', 'BACKFILL');
