-- cronwheel schema, version 1.
--
-- Applied by `cronwheel-admin` on start (or `cronwheel-admin migrate`) inside one
-- transaction, recorded in schema_migrations. Never edit an applied migration: add a new
-- numbered file instead (the admin refuses to start when an applied file has changed).
--
-- Conventions: hot scheduling columns are epoch milliseconds (bigint), as in the wire
-- protocol; times people read are timestamptz. Enumerations are text with CHECK
-- constraints so a later migration can extend them in one statement.

-- Executor groups: the set of executors a job is routed to, keyed by app name.
CREATE TABLE job_group (
    id            bigserial    PRIMARY KEY,
    app_name      varchar(64)  NOT NULL UNIQUE
                  CONSTRAINT job_group_app_name_format
                  CHECK (app_name ~ '^[A-Za-z0-9][A-Za-z0-9._-]{3,63}$'),
    title         varchar(64)  NOT NULL CHECK (length(btrim(title)) > 0),
    -- 0: addresses come from executor registrations; 1: addresses are entered by hand.
    address_type  smallint     NOT NULL DEFAULT 0 CHECK (address_type IN (0, 1)),
    address_list  text[]       NOT NULL DEFAULT '{}',
    -- Sent as XXL-JOB-ACCESS-TOKEN to this group's executors; NULL uses the admin's token.
    access_token  varchar(255),
    created_at    timestamptz  NOT NULL DEFAULT now(),
    updated_at    timestamptz  NOT NULL DEFAULT now()
);

-- Jobs: XXL-JOB's job fields plus a time zone and a retry interval.
CREATE TABLE job_info (
    id                         bigserial    PRIMARY KEY,
    job_group                  bigint       NOT NULL REFERENCES job_group (id) ON DELETE RESTRICT,
    job_desc                   varchar(255) NOT NULL CHECK (length(btrim(job_desc)) > 0),
    author                     varchar(64)  NOT NULL DEFAULT '',
    alarm_email                varchar(255) NOT NULL DEFAULT '',
    schedule_type              varchar(16)  NOT NULL DEFAULT 'NONE'
                               CHECK (schedule_type IN ('NONE', 'CRON', 'FIX_RATE', 'FIX_DELAY')),
    schedule_conf              varchar(255) NOT NULL DEFAULT '',
    timezone                   varchar(64)  NOT NULL DEFAULT 'UTC',
    misfire_strategy           varchar(16)  NOT NULL DEFAULT 'DO_NOTHING'
                               CHECK (misfire_strategy IN ('DO_NOTHING', 'FIRE_ONCE_NOW')),
    executor_route_strategy    varchar(32)  NOT NULL DEFAULT 'FIRST'
                               CHECK (executor_route_strategy IN (
                                   'FIRST', 'LAST', 'ROUND', 'RANDOM', 'CONSISTENT_HASH',
                                   'LEAST_FREQUENTLY_USED', 'LEAST_RECENTLY_USED', 'FAILOVER',
                                   'BUSYOVER', 'SHARDING_BROADCAST')),
    executor_handler           varchar(255) NOT NULL DEFAULT '',
    executor_param             text         NOT NULL DEFAULT '',
    executor_block_strategy    varchar(32)  NOT NULL DEFAULT 'SERIAL_EXECUTION'
                               CHECK (executor_block_strategy IN (
                                   'SERIAL_EXECUTION', 'DISCARD_LATER', 'COVER_EARLY')),
    executor_timeout           integer      NOT NULL DEFAULT 0 CHECK (executor_timeout >= 0),
    executor_fail_retry_count  integer      NOT NULL DEFAULT 0
                               CHECK (executor_fail_retry_count BETWEEN 0 AND 100),
    -- Seconds between a failure and its retry; 0 retries at once.
    retry_interval             integer      NOT NULL DEFAULT 0 CHECK (retry_interval >= 0),
    glue_type                  varchar(32)  NOT NULL DEFAULT 'BEAN'
                               CHECK (glue_type IN ('BEAN', 'GLUE_GROOVY', 'GLUE_SHELL',
                                   'GLUE_PYTHON', 'GLUE_PHP', 'GLUE_NODEJS', 'GLUE_POWERSHELL')),
    glue_source                text         NOT NULL DEFAULT '',
    glue_remark                varchar(128) NOT NULL DEFAULT '',
    glue_updated_at            timestamptz  NOT NULL DEFAULT now(),
    child_job_ids              bigint[]     NOT NULL DEFAULT '{}',
    -- 1: scheduled (the schedule thread picks it up); 0: stopped.
    trigger_status             smallint     NOT NULL DEFAULT 0 CHECK (trigger_status IN (0, 1)),
    trigger_last_time          bigint       NOT NULL DEFAULT 0 CHECK (trigger_last_time >= 0),
    trigger_next_time          bigint       NOT NULL DEFAULT 0 CHECK (trigger_next_time >= 0),
    created_at                 timestamptz  NOT NULL DEFAULT now(),
    updated_at                 timestamptz  NOT NULL DEFAULT now(),

    CONSTRAINT job_info_bean_needs_handler
        CHECK (glue_type <> 'BEAN' OR length(executor_handler) > 0),
    CONSTRAINT job_info_fixed_schedule_is_seconds
        CHECK (schedule_type NOT IN ('FIX_RATE', 'FIX_DELAY') OR schedule_conf ~ '^[1-9][0-9]{0,9}$'),
    CONSTRAINT job_info_cron_has_expression
        CHECK (schedule_type <> 'CRON' OR length(btrim(schedule_conf)) > 0),
    CONSTRAINT job_info_running_needs_schedule
        CHECK (trigger_status = 0 OR schedule_type <> 'NONE'),
    CONSTRAINT job_info_not_own_child
        CHECK (NOT (id = ANY (child_job_ids)))
);

-- The schedule thread's pre-read:
--   SELECT id, ... FROM job_info WHERE trigger_status = 1 AND trigger_next_time <= $1
--   ORDER BY trigger_next_time LIMIT $2
-- is an index-only scan of this partial index in due order: stopped jobs are not in it and
-- every column the scan needs is included.
CREATE INDEX job_info_due ON job_info (trigger_next_time)
    INCLUDE (id, schedule_type, schedule_conf, timezone, misfire_strategy, trigger_last_time)
    WHERE trigger_status = 1;
CREATE INDEX job_info_group ON job_info (job_group);

-- One row per fire of a job on one executor (a broadcast fire has one row per shard).
--
-- state:
--   pending    decided by a scan and owned by admin_node; not yet sent to an executor.
--              Written in the transaction that advances the job, so a fire survives the
--              death of the admin that decided it: another node takes over its pending rows.
--   triggered  sent; the executor accepted it and the result has not come back.
--   succeeded, failed
--              the executor's result arrived (or the trigger itself failed).
--   lost       the executor vanished and never reported a result.
--   cancelled  a pending one-shot fire was cancelled before it fired.
CREATE TABLE job_log (
    id                         bigserial    PRIMARY KEY,
    job_group                  bigint       NOT NULL,
    job_id                     bigint       NOT NULL REFERENCES job_info (id) ON DELETE CASCADE,
    state                      varchar(16)  NOT NULL DEFAULT 'pending'
                               CHECK (state IN ('pending', 'triggered', 'succeeded', 'failed',
                                                'lost', 'cancelled')),
    -- Why it fired: the schedule, a misfire catch-up, an operator, a parent job's success,
    -- a retry of a failure, or a one-shot fire requested through the API.
    trigger_type               varchar(16)  NOT NULL
                               CHECK (trigger_type IN ('SCHEDULE', 'MISFIRE', 'MANUAL', 'PARENT',
                                                       'RETRY', 'API')),
    -- The instant the fire was due (epoch ms).
    scheduled_time             bigint       NOT NULL CHECK (scheduled_time >= 0),
    -- The admin node that owns a pending fire, then the one that triggered it.
    admin_node                 varchar(64),
    executor_address           varchar(255) NOT NULL DEFAULT '',
    executor_handler           varchar(255) NOT NULL DEFAULT '',
    executor_param             text         NOT NULL DEFAULT '',
    shard_index                integer      NOT NULL DEFAULT 0,
    shard_total                integer      NOT NULL DEFAULT 1,
    -- Retries still allowed after this run fails.
    executor_fail_retry_count  integer      NOT NULL DEFAULT 0 CHECK (executor_fail_retry_count >= 0),
    -- For RETRY rows: the run it retries.
    parent_log_id              bigint,
    trigger_time               timestamptz,
    trigger_code               integer      NOT NULL DEFAULT 0,
    trigger_msg                text         NOT NULL DEFAULT '',
    handle_time                timestamptz,
    handle_code                integer      NOT NULL DEFAULT 0,
    handle_msg                 text         NOT NULL DEFAULT '',
    -- 0 not checked, 1 no alarm needed, 2 alarm sent, 3 alarm failed, -1 being alarmed.
    alarm_status               smallint     NOT NULL DEFAULT 0 CHECK (alarm_status BETWEEN -1 AND 3),
    created_at                 timestamptz  NOT NULL DEFAULT now(),

    CONSTRAINT job_log_shard_in_range
        CHECK (shard_total >= 1 AND shard_index >= 0 AND shard_index < shard_total),
    CONSTRAINT job_log_pending_has_owner
        CHECK (state <> 'pending' OR admin_node IS NOT NULL),
    CONSTRAINT job_log_sent_has_trigger_time
        CHECK (state IN ('pending', 'cancelled') OR trigger_time IS NOT NULL),
    CONSTRAINT job_log_result_has_handle_time
        CHECK (handle_code = 0 OR handle_time IS NOT NULL)
);

-- A scheduled fire exists at most once per job, due time and shard, whichever node
-- decided it.
CREATE UNIQUE INDEX job_log_scheduled_fire ON job_log (job_id, scheduled_time, shard_index)
    WHERE trigger_type IN ('SCHEDULE', 'MISFIRE');
-- Recovery and the ring: pending fires by owner, in due order.
CREATE INDEX job_log_pending ON job_log (admin_node, scheduled_time) WHERE state = 'pending';
-- Runs waiting for a result (lost-result monitor).
CREATE INDEX job_log_triggered ON job_log (executor_address, trigger_time) WHERE state = 'triggered';
-- Listing and clearing a job's or a group's history, newest first.
CREATE INDEX job_log_job_time ON job_log (job_id, scheduled_time DESC);
CREATE INDEX job_log_group_time ON job_log (job_group, scheduled_time DESC);
CREATE INDEX job_log_alarm ON job_log (id) WHERE alarm_status = 0 AND state IN ('failed', 'lost');

-- Run counts per day for the dashboard.
CREATE TABLE job_log_report (
    trigger_day    date         PRIMARY KEY,
    running_count  integer      NOT NULL DEFAULT 0 CHECK (running_count >= 0),
    suc_count      integer      NOT NULL DEFAULT 0 CHECK (suc_count >= 0),
    fail_count     integer      NOT NULL DEFAULT 0 CHECK (fail_count >= 0),
    updated_at     timestamptz  NOT NULL DEFAULT now()
);

-- Earlier versions of a script job's source (the console keeps the last 30).
CREATE TABLE job_logglue (
    id           bigserial    PRIMARY KEY,
    job_id       bigint       NOT NULL REFERENCES job_info (id) ON DELETE CASCADE,
    glue_type    varchar(32)  NOT NULL,
    glue_source  text         NOT NULL,
    glue_remark  varchar(128) NOT NULL CHECK (length(btrim(glue_remark)) > 0),
    created_at   timestamptz  NOT NULL DEFAULT now()
);
CREATE INDEX job_logglue_job ON job_logglue (job_id, id DESC);

-- Live registrations of executors (registry_group 'EXECUTOR', key = app name, value = the
-- executor's URL). A row older than the dead timeout no longer counts.
CREATE TABLE job_registry (
    id              bigserial    PRIMARY KEY,
    registry_group  varchar(32)  NOT NULL CHECK (registry_group IN ('EXECUTOR', 'ADMIN')),
    registry_key    varchar(255) NOT NULL CHECK (length(registry_key) > 0),
    registry_value  varchar(255) NOT NULL CHECK (length(registry_value) > 0),
    updated_at      timestamptz  NOT NULL DEFAULT now(),
    UNIQUE (registry_group, registry_key, registry_value)
);
CREATE INDEX job_registry_updated ON job_registry (updated_at);

-- Console and API users. A normal user sees and acts on the groups in user_group only.
CREATE TABLE app_user (
    id             bigserial    PRIMARY KEY,
    username       varchar(64)  NOT NULL UNIQUE
                   CONSTRAINT app_user_username_format CHECK (username ~ '^[A-Za-z0-9._@-]{1,64}$'),
    -- libsodium crypto_pwhash_str (argon2id) string.
    password_hash  text         NOT NULL CHECK (password_hash LIKE '$argon2%'),
    role           varchar(16)  NOT NULL DEFAULT 'normal' CHECK (role IN ('admin', 'normal')),
    created_at     timestamptz  NOT NULL DEFAULT now(),
    updated_at     timestamptz  NOT NULL DEFAULT now()
);

CREATE TABLE user_group (
    user_id   bigint NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    group_id  bigint NOT NULL REFERENCES job_group (id) ON DELETE CASCADE,
    PRIMARY KEY (user_id, group_id)
);
CREATE INDEX user_group_group ON user_group (group_id);

-- Console sessions, shared by every admin node (a load balancer may switch nodes).
CREATE TABLE user_session (
    -- SHA-256 of the cookie's secret; the secret itself is never stored.
    token_hash   bytea        PRIMARY KEY CHECK (length(token_hash) = 32),
    user_id      bigint       NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    csrf_token   varchar(64)  NOT NULL,
    created_at   timestamptz  NOT NULL DEFAULT now(),
    expires_at   timestamptz  NOT NULL,
    CHECK (expires_at > created_at)
);
CREATE INDEX user_session_expiry ON user_session (expires_at);

-- Bearer tokens for automation. Only the hash is kept; the secret is shown once.
CREATE TABLE api_token (
    id            bigserial    PRIMARY KEY,
    user_id       bigint       NOT NULL REFERENCES app_user (id) ON DELETE CASCADE,
    name          varchar(64)  NOT NULL CHECK (length(btrim(name)) > 0),
    token_hash    bytea        NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at    timestamptz  NOT NULL DEFAULT now(),
    last_used_at  timestamptz,
    revoked_at    timestamptz,
    UNIQUE (user_id, name)
);

-- The row the schedule thread locks with SELECT ... FOR UPDATE: one scan at a time across
-- all admin nodes.
CREATE TABLE job_lock (
    lock_name  varchar(50) PRIMARY KEY
);
INSERT INTO job_lock (lock_name) VALUES ('schedule_lock');

-- Admin nodes and their heartbeat lease. Pending fires of a node whose lease expired are
-- taken over by a live node. Leases are compared with the database's clock, not the nodes'.
CREATE TABLE admin_node (
    node_id       varchar(64)  PRIMARY KEY CHECK (length(node_id) > 0),
    address       varchar(255) NOT NULL DEFAULT '',
    version       varchar(32)  NOT NULL DEFAULT '',
    started_at    timestamptz  NOT NULL DEFAULT now(),
    heartbeat_at  timestamptz  NOT NULL DEFAULT now(),
    lease_until   timestamptz  NOT NULL,
    CHECK (lease_until >= heartbeat_at)
);

-- Every change made through the API: who, when, what, and the object before and after.
CREATE TABLE audit_log (
    id           bigserial    PRIMARY KEY,
    at           timestamptz  NOT NULL DEFAULT now(),
    user_id      bigint       REFERENCES app_user (id) ON DELETE SET NULL,
    username     varchar(64)  NOT NULL,
    action       varchar(64)  NOT NULL CHECK (length(action) > 0),
    entity_type  varchar(32)  NOT NULL,
    entity_id    bigint,
    before       jsonb,
    after        jsonb,
    remote_addr  inet
);
CREATE INDEX audit_log_at ON audit_log (at DESC);
CREATE INDEX audit_log_entity ON audit_log (entity_type, entity_id);
