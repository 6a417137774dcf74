-- The dashboard's figures without counting job_log on each request (docs/run-report.md),
-- and the node that ran the last scheduling scan.

-- Replaced by job_run_report: it counted per UTC day only, for every group at once, and
-- nothing wrote it.
DROP TABLE job_log_report;

-- Finished runs counted per hour of their scheduled time and per group, split by the quarter
-- of the hour the run was scheduled in, so days can be cut at any zone's midnight (every UTC
-- offset in use is a multiple of 15 minutes) while a year of one group is 8,784 rows.
--   succeeded_MM: runs that ended `succeeded`, scheduled in [hour + MM min, hour + MM + 15 min)
--   failed_MM:    runs that ended `failed` or `lost`, same quarter
-- Written only by the trigger below (and the backfill at the end of this file). Deleting runs
-- leaves it alone: it is the history of what ran. No foreign key: the history of a deleted
-- group stays in the totals an admin sees, as its runs did happen.
CREATE TABLE job_run_report (
    hour          timestamptz  NOT NULL
                  CONSTRAINT job_run_report_whole_hour CHECK (extract(epoch FROM hour)::bigint % 3600 = 0),
    job_group     bigint       NOT NULL,
    succeeded_00  integer      NOT NULL DEFAULT 0,
    succeeded_15  integer      NOT NULL DEFAULT 0,
    succeeded_30  integer      NOT NULL DEFAULT 0,
    succeeded_45  integer      NOT NULL DEFAULT 0,
    failed_00     integer      NOT NULL DEFAULT 0,
    failed_15     integer      NOT NULL DEFAULT 0,
    failed_30     integer      NOT NULL DEFAULT 0,
    failed_45     integer      NOT NULL DEFAULT 0,
    PRIMARY KEY (hour, job_group)
);
-- A normal user's dashboard: their groups' hours in a range.
CREATE INDEX job_run_report_group ON job_run_report (job_group, hour);

-- The one rule that keeps job_run_report: a run counts once, when its row reaches a counted
-- state (succeeded; failed or lost), whichever statement gets it there: a result callback, a
-- lost result, a trigger that failed, a misfire or delivery failure after a takeover, an
-- insert of a finished row. A row leaving a counted state (no path does so today) takes its
-- count back. One upsert per (hour, group) per statement, in key order, so batched updates
-- cost one row write per bucket and two finishing statements never lock buckets in opposite
-- orders. Statements that finish nothing (claims, takeovers, cancels) return after two
-- EXISTS probes of their transition tables.
-- Adds run counts to job_run_report: `counts[i]` runs of group `groups[i]` scheduled at
-- `times[i]` (epoch ms) ended in `states[i]`; a negative count takes runs back. One upsert per
-- (hour, group), in key order.
CREATE FUNCTION job_run_report_add(groups bigint[], times bigint[], states text[], counts bigint[])
RETURNS void LANGUAGE sql AS $fn$
    INSERT INTO job_run_report AS r (hour, job_group, succeeded_00, succeeded_15, succeeded_30, succeeded_45,
                                     failed_00, failed_15, failed_30, failed_45)
    SELECT to_timestamp((d.t / 3600000) * 3600), d.job_group,
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
    ON CONFLICT (hour, job_group) DO UPDATE SET
        succeeded_00 = r.succeeded_00 + EXCLUDED.succeeded_00,
        succeeded_15 = r.succeeded_15 + EXCLUDED.succeeded_15,
        succeeded_30 = r.succeeded_30 + EXCLUDED.succeeded_30,
        succeeded_45 = r.succeeded_45 + EXCLUDED.succeeded_45,
        failed_00 = r.failed_00 + EXCLUDED.failed_00,
        failed_15 = r.failed_15 + EXCLUDED.failed_15,
        failed_30 = r.failed_30 + EXCLUDED.failed_30,
        failed_45 = r.failed_45 + EXCLUDED.failed_45
$fn$;

-- The one rule that keeps job_run_report: a run counts once, when its row reaches a counted
-- state (succeeded; failed or lost), whichever statement gets it there: a result callback, a
-- lost result, a trigger that failed, a misfire or delivery failure after a takeover, an
-- insert of a finished row. A row leaving a counted state (no path does so today) takes its
-- count back. Statement-level with transition tables, so a batched update costs one upsert
-- per (hour, group); statements that finish nothing (claims, takeovers, cancels) return after
-- probing their transition tables. DELETE has no trigger: removing runs keeps the history.
CREATE FUNCTION job_run_report_on_insert() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF EXISTS (SELECT 1 FROM new_runs WHERE state IN ('succeeded', 'failed', 'lost')) THEN
        PERFORM job_run_report_add(array_agg(job_group), array_agg(scheduled_time), array_agg(state::text),
                                   array_agg(1::bigint))
        FROM new_runs WHERE state IN ('succeeded', 'failed', 'lost');
    END IF;
    RETURN NULL;
END
$fn$;

CREATE FUNCTION job_run_report_on_update() RETURNS trigger LANGUAGE plpgsql AS $fn$
BEGIN
    IF NOT EXISTS (SELECT 1 FROM new_runs WHERE state IN ('succeeded', 'failed', 'lost'))
       AND NOT EXISTS (SELECT 1 FROM old_runs WHERE state IN ('succeeded', 'failed', 'lost')) THEN
        RETURN NULL;
    END IF;
    PERFORM job_run_report_add(array_agg(d.job_group), array_agg(d.t), array_agg(d.state), array_agg(d.sign::bigint))
    FROM (
        SELECT n.job_group, n.scheduled_time AS t, n.state::text AS state, 1 AS sign
        FROM old_runs o JOIN new_runs n ON n.id = o.id
        WHERE n.state IN ('succeeded', 'failed', 'lost')
          AND (o.state, o.job_group, o.scheduled_time) IS DISTINCT FROM (n.state, n.job_group, n.scheduled_time)
        UNION ALL
        SELECT o.job_group, o.scheduled_time, o.state::text, -1
        FROM old_runs o JOIN new_runs n ON n.id = o.id
        WHERE o.state IN ('succeeded', 'failed', 'lost')
          AND (o.state, o.job_group, o.scheduled_time) IS DISTINCT FROM (n.state, n.job_group, n.scheduled_time)
    ) d
    HAVING count(*) > 0;
    RETURN NULL;
END
$fn$;

CREATE TRIGGER job_run_report_on_insert AFTER INSERT ON job_log
    REFERENCING NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION job_run_report_on_insert();
CREATE TRIGGER job_run_report_on_update AFTER UPDATE ON job_log
    REFERENCING OLD TABLE AS old_runs NEW TABLE AS new_runs
    FOR EACH STATEMENT EXECUTE FUNCTION job_run_report_on_update();

-- The runs that finished before this migration, counted per quarter hour first.
SELECT job_run_report_add(array_agg(job_group), array_agg(t), array_agg(state), array_agg(n))
FROM (SELECT job_group, scheduled_time / 900000 * 900000 AS t,
             CASE WHEN state = 'succeeded' THEN 'succeeded' ELSE 'failed' END AS state, count(*) AS n
      FROM job_log WHERE state IN ('succeeded', 'failed', 'lost') GROUP BY 1, 2, 3) finished
HAVING count(*) > 0;

-- The dashboard's latest failures, per group, newest first (small: failed runs only).
CREATE INDEX job_log_failed ON job_log (job_group, scheduled_time DESC, id DESC) WHERE state IN ('failed', 'lost');

-- Which node ran the last scheduling scan, and when (database clock): written by the scan in
-- its transaction, on the lock row it holds already.
ALTER TABLE job_lock ADD COLUMN last_scan_node varchar(64);
ALTER TABLE job_lock ADD COLUMN last_scan_at timestamptz;
