-- How long a failed run waits for its retry (admin/model/retry_backoff.h): FIXED waits
-- retry_interval every time (as before); EXPONENTIAL multiplies it by retry_multiplier for each
-- retry after the first, up to retry_max_interval seconds when that is set; retry_jitter
-- shortens each wait by up to that percentage.
ALTER TABLE job_info
    ADD COLUMN retry_backoff varchar(16) NOT NULL DEFAULT 'FIXED'
        CONSTRAINT job_info_retry_backoff_check CHECK (retry_backoff IN ('FIXED', 'EXPONENTIAL')),
    ADD COLUMN retry_multiplier double precision NOT NULL DEFAULT 2
        CONSTRAINT job_info_retry_multiplier_check CHECK (retry_multiplier BETWEEN 1 AND 10),
    ADD COLUMN retry_max_interval integer NOT NULL DEFAULT 0
        CONSTRAINT job_info_retry_max_interval_check CHECK (retry_max_interval BETWEEN 0 AND 2592000),
    ADD COLUMN retry_jitter smallint NOT NULL DEFAULT 0
        CONSTRAINT job_info_retry_jitter_check CHECK (retry_jitter BETWEEN 0 AND 100);

-- A run's retry, for the run's page ("retry due at ..."): retries are few, so the index is small.
CREATE INDEX job_log_retry_of ON job_log (parent_log_id) WHERE trigger_type = 'RETRY';
