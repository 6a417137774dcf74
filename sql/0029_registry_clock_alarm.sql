-- The alarm of an executor whose clock is off the admin's by more than the bound
-- (docs/alarms.md, "Executor clocks"), claimed once across admin nodes as a run's alarm is:
-- clock_alarm_status 0 none (its clock is within the bound, or no channel takes its group's
-- alarms yet), -1 claimed at clock_alarm_time (epoch ms) by a node sending it, 2 sent, 3 failed.
-- It goes back to 0 when the executor's clock comes back within the bound, so a later drift
-- alarms again; a registration made anew (the executor restarted, or expired) starts at 0.
ALTER TABLE job_registry ADD COLUMN clock_alarm_status smallint NOT NULL DEFAULT 0
                             CHECK (clock_alarm_status IN (-1, 0, 2, 3)),
                         ADD COLUMN clock_alarm_time bigint;
