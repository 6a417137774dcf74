-- What a CRON job does on the days its zone's clocks change (common/cron/cron_expression.h,
-- DstPolicy): dst_gap SKIP (Quartz: a wall time the clocks jump over does not fire that day) or
-- FIRE_AFTER (it fires at the first instant after the gap); dst_repeat ONCE (Quartz: a wall time
-- that happens twice fires at its second occurrence) or BOTH. Existing jobs keep Quartz's rules.
ALTER TABLE job_info
    ADD COLUMN dst_gap text NOT NULL DEFAULT 'SKIP'
        CONSTRAINT job_info_dst_gap_check CHECK (dst_gap IN ('SKIP', 'FIRE_AFTER')),
    ADD COLUMN dst_repeat text NOT NULL DEFAULT 'ONCE'
        CONSTRAINT job_info_dst_repeat_check CHECK (dst_repeat IN ('ONCE', 'BOTH'));

-- The schedule thread's pre-read reads the policy with the schedule, and stays an index-only
-- scan in due order.
DROP INDEX job_info_due;
CREATE INDEX job_info_due ON job_info (trigger_next_time)
    INCLUDE (id, schedule_type, schedule_conf, timezone, misfire_strategy, trigger_last_time, calendar_id, calendar_mode,
             dst_gap, dst_repeat)
    WHERE trigger_status = 1;
