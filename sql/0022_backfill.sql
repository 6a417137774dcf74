-- Backfills (docs/scheduling.md, "Backfill"): a job run for every instant its schedule had in a
-- past range [from_time, to_time), as if on time. The runs are job_log rows of trigger type
-- BACKFILL scheduled at the historical instant, tied to their backfill; the admin nodes' pumps
-- write them a few at a time under the backfill's row lock (admin/model/backfill_store.h).

CREATE TABLE backfill (
    id              bigserial    PRIMARY KEY,
    job_id          bigint       NOT NULL REFERENCES job_info (id) ON DELETE CASCADE,
    from_time       bigint       NOT NULL CHECK (from_time >= 0),
    to_time         bigint       NOT NULL,
    -- At an instant that has a run of the schedule or of a backfill already: pass over it
    -- (SKIP) or run it again (RERUN).
    on_existing     varchar(8)   NOT NULL CHECK (on_existing IN ('SKIP', 'RERUN')),
    -- Runs of the backfill unfinished (pending, sending, triggered) at once.
    max_concurrent  integer      NOT NULL CHECK (max_concurrent BETWEEN 1 AND 100),
    state           varchar(16)  NOT NULL DEFAULT 'running' CHECK (state IN ('running', 'done', 'cancelled')),
    -- The last instant written or skipped; NULL before the first. Instants go oldest first.
    cursor_time     bigint,
    -- Instants the range had when the backfill was made; runs written, instants skipped since.
    total           integer      NOT NULL CHECK (total >= 0),
    written         integer      NOT NULL DEFAULT 0 CHECK (written >= 0),
    skipped         integer      NOT NULL DEFAULT 0 CHECK (skipped >= 0),
    created_by      varchar(64)  NOT NULL DEFAULT '',
    created_at      timestamptz  NOT NULL DEFAULT now(),
    ended_at        timestamptz,
    -- Why it ended, as an operator reads it.
    reason          text         NOT NULL DEFAULT '',
    CONSTRAINT backfill_range CHECK (from_time < to_time),
    CONSTRAINT backfill_cursor_in_range CHECK (cursor_time IS NULL OR (cursor_time >= from_time AND cursor_time < to_time)),
    CONSTRAINT backfill_ended_when_not_running CHECK ((state = 'running') = (ended_at IS NULL))
);
-- The pumps' read, every second on every node: the running ones, oldest first.
CREATE INDEX backfill_running ON backfill (id) WHERE state = 'running';
CREATE INDEX backfill_by_job ON backfill (job_id, id DESC);

-- A backfill's runs and the retries of them. Deleting a backfill (only ever with its job)
-- deletes them.
ALTER TABLE job_log ADD COLUMN backfill_id bigint;
ALTER TABLE job_log ADD CONSTRAINT job_log_backfill_id_fkey
    FOREIGN KEY (backfill_id) REFERENCES backfill (id) ON DELETE CASCADE NOT VALID;
ALTER TABLE job_log VALIDATE CONSTRAINT job_log_backfill_id_fkey;

ALTER TABLE job_log DROP CONSTRAINT job_log_trigger_type_check;
ALTER TABLE job_log ADD CONSTRAINT job_log_trigger_type_check
    CHECK (trigger_type IN ('SCHEDULE', 'MISFIRE', 'MANUAL', 'PARENT', 'RETRY', 'API', 'WORKFLOW', 'BACKFILL')) NOT VALID;
ALTER TABLE job_log VALIDATE CONSTRAINT job_log_trigger_type_check;
ALTER TABLE job_log ADD CONSTRAINT job_log_backfill_run_has_backfill
    CHECK (trigger_type <> 'BACKFILL' OR backfill_id IS NOT NULL) NOT VALID;
ALTER TABLE job_log VALIDATE CONSTRAINT job_log_backfill_run_has_backfill;

-- One backfill writes one run per instant and shard, whichever node steps it.
CREATE UNIQUE INDEX job_log_backfill_fire ON job_log (backfill_id, scheduled_time, shard_index)
    WHERE trigger_type = 'BACKFILL';
-- A backfill's runs, newest first (the run list filtered by backfill, its progress counts, the
-- foreign key's cascade).
CREATE INDEX job_log_backfill ON job_log (backfill_id, scheduled_time DESC, id DESC) WHERE backfill_id IS NOT NULL;
-- Its unfinished runs: what a pump counts every second, at most max_concurrent (and retries).
CREATE INDEX job_log_backfill_unfinished ON job_log (backfill_id)
    WHERE backfill_id IS NOT NULL AND state IN ('pending', 'sending', 'triggered');
