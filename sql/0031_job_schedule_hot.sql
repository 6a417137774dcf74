-- The scan's advance of a job's schedule (its last and next fire time, written each time the job
-- fires: every second for a job firing each second) becomes a HOT update most of the time: a new
-- version of the row on its page and no index entry. job_schedule_due was keyed on
-- trigger_next_time, which every advance changes, so every advance wrote an entry in both of the
-- table's indexes and logged a lock of the old version when the new one went to another page.
--
-- The due index is now keyed on due_slot, the 10-second slot of the next fire time (a stored
-- generated column: every writer of trigger_next_time keeps it right without knowing). An
-- advance that stays in its slot changes no indexed column; a job firing each second changes
-- slot once in ten fires. The scan's pre-read walks the index slot by slot up to the window's
-- end, and sorts each slot's entries by next time as it goes (ordering by slot, then time, is
-- ordering by time, so a LIMIT stops after the slots it needs, however long the backlog): it
-- reads the rows of jobs due later in the window's last slot too, and leaves them, a read of
-- up to 10 s of fires more than the window's 5 s.
--
-- Upgrading: adding the stored column rewrites job_schedule under an exclusive lock (a few
-- seconds for a million jobs; the scans wait for it).
ALTER TABLE job_schedule ADD COLUMN due_slot bigint GENERATED ALWAYS AS (trigger_next_time / 10000) STORED;
DROP INDEX job_schedule_due;
CREATE INDEX job_schedule_due ON job_schedule (due_slot) WHERE trigger_status = 1;
