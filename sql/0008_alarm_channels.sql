-- Alarm channels (docs/alarms.md): where the alarms of chosen groups and jobs go besides the
-- jobs' own alarmEmail addresses. Admins manage them; a normal user never chooses where the
-- admin sends anything.
--
-- A channel is an e-mail list or a webhook. It takes the alarms of every job of its groups and
-- of its jobs. Deleted groups and jobs may linger in the arrays: readers keep only the ids
-- that still exist (ids are never reused).
CREATE TABLE alarm_channel (
    id          bigserial     PRIMARY KEY,
    name        varchar(64)   NOT NULL UNIQUE CHECK (length(btrim(name)) > 0),
    kind        varchar(16)   NOT NULL CHECK (kind IN ('email', 'webhook')),
    -- email: comma-separated addresses; webhook: the http(s) URL it POSTs to.
    target      varchar(2048) NOT NULL CHECK (length(target) > 0),
    -- webhook: the key of the HMAC-SHA256 signature of every request; '' for email.
    secret      varchar(256)  NOT NULL DEFAULT '',
    groups      bigint[]      NOT NULL DEFAULT '{}',
    jobs        bigint[]      NOT NULL DEFAULT '{}',
    created_at  timestamptz   NOT NULL DEFAULT now(),
    updated_at  timestamptz   NOT NULL DEFAULT now()
);
