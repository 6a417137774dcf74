-- Concurrency limits and priorities (admin/model/slots.h): a group runs at most max_running runs
-- at once, a job at most max_concurrent (0: no limit); fires of a limited group or job wait for a
-- slot, higher job priority first.
ALTER TABLE job_group
    ADD COLUMN max_running integer NOT NULL DEFAULT 0
        CONSTRAINT job_group_max_running_check CHECK (max_running BETWEEN 0 AND 10000);
ALTER TABLE job_info
    ADD COLUMN max_concurrent integer NOT NULL DEFAULT 0
        CONSTRAINT job_info_max_concurrent_check CHECK (max_concurrent BETWEEN 0 AND 1000),
    ADD COLUMN priority integer NOT NULL DEFAULT 0
        CONSTRAINT job_info_priority_check CHECK (priority BETWEEN -1000 AND 1000);

-- A pending fire of a limited group or job either waits for a slot (waiting_slot: no node sends
-- it until one admits it) or holds one (slot_admitted) while it is pending, sending or
-- triggered. A waiting fire cancelled keeps its mark: only pending ones wait.
ALTER TABLE job_log
    ADD COLUMN waiting_slot boolean NOT NULL DEFAULT false,
    ADD COLUMN slot_admitted boolean NOT NULL DEFAULT false,
    ADD CONSTRAINT job_log_waiting_or_admitted CHECK (NOT (waiting_slot AND slot_admitted));

-- The feeder's pending fires leave out the waiting ones (0001's job_log_pending, narrowed).
DROP INDEX job_log_pending;
CREATE INDEX job_log_pending ON job_log (admin_node, scheduled_time) WHERE state = 'pending' AND NOT waiting_slot;
-- The waiting fires by group, and the runs holding a slot by group: both few.
CREATE INDEX job_log_waiting_slot ON job_log (job_group, scheduled_time) WHERE waiting_slot AND state = 'pending';
CREATE INDEX job_log_holding_slot ON job_log (job_group, job_id)
    WHERE slot_admitted AND state IN ('pending', 'sending', 'triggered');
