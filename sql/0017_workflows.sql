-- Workflows (docs/workflows.md): DAGs of jobs. A workflow run's nodes run as ordinary run rows
-- (job_log, trigger type WORKFLOW) tied to the workflow run and the node; which node starts
-- when is decided once, under the workflow run's row lock, by the planner
-- (admin/model/workflow_plan.h), in the transaction that records the end of the node before.

CREATE TABLE workflow (
    id                  bigserial    PRIMARY KEY,
    -- Permissions: a normal user sees the workflows of their groups.
    job_group           bigint       NOT NULL REFERENCES job_group (id),
    name                varchar(64)  NOT NULL,
    description         varchar(255) NOT NULL DEFAULT '',
    author              varchar(64)  NOT NULL DEFAULT '',
    alarm_email         varchar(255) NOT NULL DEFAULT '',
    schedule_type       varchar(16)  NOT NULL DEFAULT 'NONE' CHECK (schedule_type IN ('NONE', 'CRON', 'FIX_RATE')),
    schedule_conf       varchar(128) NOT NULL DEFAULT '',
    timezone            varchar(64)  NOT NULL DEFAULT 'UTC',
    misfire_strategy    varchar(16)  NOT NULL DEFAULT 'DO_NOTHING',
    -- What a run due while others run does: WAIT (one at a time, the next waits), SKIP (the
    -- next is recorded skipped), PARALLEL (up to max_parallel at once; more wait).
    overlap             varchar(16)  NOT NULL DEFAULT 'WAIT' CHECK (overlap IN ('WAIT', 'SKIP', 'PARALLEL')),
    max_parallel        integer      NOT NULL DEFAULT 1 CHECK (max_parallel BETWEEN 1 AND 100),
    -- Seconds a run may take, start to end; 0: no limit.
    timeout_seconds     integer      NOT NULL DEFAULT 0 CHECK (timeout_seconds >= 0),
    -- [{"name","default","description"}]
    params              jsonb        NOT NULL DEFAULT '[]',
    -- {"nodes":[{"key","jobId","params","onFailure"}],"edges":[{"from","to"}],
    --  "onFailureRunning": what a failing run does to its nodes still running, FINISH or KILL}
    graph               jsonb        NOT NULL,
    trigger_status      smallint     NOT NULL DEFAULT 0 CHECK (trigger_status IN (0, 1)),
    trigger_last_time   bigint       NOT NULL DEFAULT 0,
    trigger_next_time   bigint       NOT NULL DEFAULT 0,
    -- Optimistic versioning: an update names the version it read.
    version             integer      NOT NULL DEFAULT 1,
    created_at          timestamptz  NOT NULL DEFAULT now(),
    updated_at          timestamptz  NOT NULL DEFAULT now(),
    CONSTRAINT workflow_name_unique UNIQUE (job_group, name)
);
CREATE INDEX workflow_due ON workflow (trigger_next_time) WHERE trigger_status = 1;

-- The jobs a workflow's graph names: a job in a workflow cannot be deleted.
CREATE TABLE workflow_job (
    workflow_id  bigint NOT NULL REFERENCES workflow (id) ON DELETE CASCADE,
    job_id       bigint NOT NULL REFERENCES job_info (id) ON DELETE RESTRICT,
    PRIMARY KEY (workflow_id, job_id)
);
CREATE INDEX workflow_job_by_job ON workflow_job (job_id);

CREATE TABLE workflow_run (
    id               bigserial    PRIMARY KEY,
    workflow_id      bigint       NOT NULL REFERENCES workflow (id) ON DELETE CASCADE,
    job_group        bigint       NOT NULL,
    state            varchar(16)  NOT NULL
                     CHECK (state IN ('waiting', 'running', 'succeeded', 'failed', 'cancelled', 'skipped', 'timed_out')),
    trigger_type     varchar(16)  NOT NULL,
    -- A scheduled run exists at most once per workflow and time (below).
    scheduled_time   bigint       NOT NULL,
    started_at       bigint,
    ended_at         bigint,
    -- started_at + the workflow's timeout when it started; none: no limit.
    deadline         bigint,
    -- The run's inputs, every declared parameter with its value: {"name": value}.
    params           jsonb        NOT NULL DEFAULT '{}',
    -- The graph as it was when the run was created: a run follows it to its end whatever
    -- later edits do. {"nodes":[...],"edges":[...],"onFailureRunning":"FINISH"}
    graph            jsonb        NOT NULL,
    reason           text         NOT NULL DEFAULT '',
    created_by       varchar(64)  NOT NULL DEFAULT '',
    -- As job_log.alarm_status: 0 undecided, 1 no alarm, 2 sent, 3 failed, -1 being sent.
    alarm_status     smallint     NOT NULL DEFAULT 0,
    alarm_claimed_at bigint,
    created_at       timestamptz  NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX workflow_run_scheduled ON workflow_run (workflow_id, scheduled_time)
    WHERE trigger_type IN ('SCHEDULE', 'MISFIRE');
CREATE INDEX workflow_run_by_workflow ON workflow_run (workflow_id, id DESC);
CREATE INDEX workflow_run_by_group ON workflow_run (job_group, id DESC);
CREATE INDEX workflow_run_active ON workflow_run (workflow_id, id) WHERE state IN ('waiting', 'running');
CREATE INDEX workflow_run_deadline ON workflow_run (deadline) WHERE state = 'running' AND deadline IS NOT NULL;
CREATE INDEX workflow_run_alarm ON workflow_run (id) WHERE alarm_status IN (0, -1) AND state IN ('failed', 'timed_out');

-- Each node of each run: waiting → started → succeeded | failed; waiting → cancelled (the run
-- failed or was cancelled first). `log_id` is the run row of its current attempt.
CREATE TABLE workflow_run_node (
    run_id      bigint       NOT NULL REFERENCES workflow_run (id) ON DELETE CASCADE,
    node_key    varchar(64)  NOT NULL,
    job_id      bigint       NOT NULL,
    state       varchar(16)  NOT NULL CHECK (state IN ('waiting', 'started', 'succeeded', 'failed', 'cancelled')),
    log_id      bigint,
    attempts    integer      NOT NULL DEFAULT 0,
    -- The parameters as rendered for its run.
    param       text         NOT NULL DEFAULT '',
    -- Its output, as the templates of the nodes after it read it (JSON text).
    output      text,
    message     text         NOT NULL DEFAULT '',
    started_at  bigint,
    ended_at    bigint,
    -- The run ended (cancelled, timed out, failed with KILL) while this node ran: its run is
    -- to be killed at its executor.
    kill_requested  boolean  NOT NULL DEFAULT false,
    PRIMARY KEY (run_id, node_key)
);
CREATE INDEX workflow_run_node_log ON workflow_run_node (log_id) WHERE log_id IS NOT NULL;
CREATE INDEX workflow_run_node_kill ON workflow_run_node (log_id) WHERE kill_requested AND state = 'started';

-- A node's runs: tied to their workflow run and node. `output` is the structured output a
-- cronwheel executor reported with the result (JSON text).
ALTER TABLE job_log ADD COLUMN workflow_run_id bigint;
ALTER TABLE job_log ADD COLUMN workflow_node varchar(64);
ALTER TABLE job_log ADD COLUMN output text;
CREATE INDEX job_log_workflow_run ON job_log (workflow_run_id) WHERE workflow_run_id IS NOT NULL;

ALTER TABLE job_log DROP CONSTRAINT job_log_trigger_type_check;
ALTER TABLE job_log ADD CONSTRAINT job_log_trigger_type_check
    CHECK (trigger_type IN ('SCHEDULE', 'MISFIRE', 'MANUAL', 'PARENT', 'RETRY', 'API', 'WORKFLOW')) NOT VALID;
ALTER TABLE job_log VALIDATE CONSTRAINT job_log_trigger_type_check;

-- The workflow scan: one at a time across the nodes, like the job scan.
INSERT INTO job_lock (lock_name) VALUES ('workflow_schedule_lock');
