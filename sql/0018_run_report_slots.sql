-- The run report (docs/run-report.md) in slots: a finishing statement adds to its bucket's row of
-- its own database session's slot (pg_backend_pid() % 8) instead of the one row of its hour and
-- group. The row stays locked until its transaction commits, so with one row per bucket every
-- result of a group in an hour committed after the one before it: callbacks from several
-- executors, and a workflow's node ends, waited for each other there. Readers sum the slots.

ALTER TABLE job_run_report ADD COLUMN slot smallint NOT NULL DEFAULT 0 CHECK (slot BETWEEN 0 AND 7);
ALTER TABLE job_run_report DROP CONSTRAINT job_run_report_pkey;
ALTER TABLE job_run_report ADD PRIMARY KEY (hour, job_group, slot);

CREATE OR REPLACE FUNCTION job_run_report_add(groups bigint[], times bigint[], states text[], counts bigint[])
RETURNS void LANGUAGE sql AS $fn$
    INSERT INTO job_run_report AS r (hour, job_group, slot, succeeded_00, succeeded_15, succeeded_30, succeeded_45,
                                     failed_00, failed_15, failed_30, failed_45)
    SELECT to_timestamp((d.t / 3600000) * 3600), d.job_group, (pg_backend_pid() % 8)::smallint,
           coalesce(sum(d.sign) FILTER (WHERE d.state = 'succeeded' AND d.t % 3600000 / 900000 = 0), 0),
           coalesce(sum(d.sign) FILTER (WHERE d.state = 'succeeded' AND d.t % 3600000 / 900000 = 1), 0),
           coalesce(sum(d.sign) FILTER (WHERE d.state = 'succeeded' AND d.t % 3600000 / 900000 = 2), 0),
           coalesce(sum(d.sign) FILTER (WHERE d.state = 'succeeded' AND d.t % 3600000 / 900000 = 3), 0),
           coalesce(sum(d.sign) FILTER (WHERE d.state <> 'succeeded' AND d.t % 3600000 / 900000 = 0), 0),
           coalesce(sum(d.sign) FILTER (WHERE d.state <> 'succeeded' AND d.t % 3600000 / 900000 = 1), 0),
           coalesce(sum(d.sign) FILTER (WHERE d.state <> 'succeeded' AND d.t % 3600000 / 900000 = 2), 0),
           coalesce(sum(d.sign) FILTER (WHERE d.state <> 'succeeded' AND d.t % 3600000 / 900000 = 3), 0)
    FROM unnest(groups, times, states, counts) AS d(job_group, t, state, sign)
    GROUP BY 1, 2
    ORDER BY 1, 2
    ON CONFLICT (hour, job_group, slot) DO UPDATE SET
        succeeded_00 = r.succeeded_00 + EXCLUDED.succeeded_00,
        succeeded_15 = r.succeeded_15 + EXCLUDED.succeeded_15,
        succeeded_30 = r.succeeded_30 + EXCLUDED.succeeded_30,
        succeeded_45 = r.succeeded_45 + EXCLUDED.succeeded_45,
        failed_00 = r.failed_00 + EXCLUDED.failed_00,
        failed_15 = r.failed_15 + EXCLUDED.failed_15,
        failed_30 = r.failed_30 + EXCLUDED.failed_30,
        failed_45 = r.failed_45 + EXCLUDED.failed_45
$fn$;
