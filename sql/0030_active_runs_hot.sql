-- A run's state changes in flight write no index entry. The claim (pending → sending: the executor,
-- the handler, the trigger time) and the executor's answer (sending → triggered: its code and
-- message) each wrote a new version of the run's row with an entry in each of job_log_active's
-- indexes (the key, the scheduled fire's key, the job's, the time's, and the partial index of the
-- new state), because three partial indexes were keyed on or restricted to what those changes
-- set: `state`, `executor_address`, `trigger_time`. PostgreSQL writes an update as HOT (a new
-- version on the same page, no index entry) only when no indexed column changes and the page
-- has room; with no index naming those columns, and three quarters of each page left free,
-- both changes are HOT (docs/benchmarks.md, "One write per fire").
--
-- What read through the dropped indexes:
--   job_log_active_pending, _sending   a node's fires by time (the feeder, a takeover): the
--                                      node's index below, the state a filter. Like them it
--                                      leaves out the runs waiting for a slot, so a statement on
--                                      one run whose guard names the owner (pg_guard.h) cannot
--                                      take it for the primary key: no guard says `NOT
--                                      waiting_slot`, whose value a claim never changes
--   job_log_active_triggered           the lost-result monitor, once a minute a node: reads the
--                                      runs in flight whole (they are the runs not finished)
--   job_log_active_waiting_slot        keyed as before, restricted to `waiting_slot` alone: only
--                                      a pending run waits for a slot (the CHECK below), and
--                                      admission clears it. The statements that read it name
--                                      `waiting_slot` alone too, so the index holds all they
--                                      read: with a filter on the state left, planned on an
--                                      empty table (a node's start), the count of waiting runs
--                                      read the whole table, 9 ms at 40,000 runs in flight
DROP INDEX job_log_active_pending;
DROP INDEX job_log_active_sending;
DROP INDEX job_log_active_triggered;
DROP INDEX job_log_active_waiting_slot;

CREATE INDEX job_log_active_node ON job_log_active (admin_node, scheduled_time) WHERE NOT waiting_slot;
CREATE INDEX job_log_active_waiting_slot ON job_log_active (job_group, scheduled_time) WHERE waiting_slot;
ALTER TABLE job_log_active ADD CONSTRAINT job_log_active_waiting_is_pending CHECK (NOT waiting_slot OR state = 'pending');

-- Room on each page for a row's next versions. A batch's rows are inserted side by side, then
-- claimed and answered together, each version a little longer than the one before (the
-- executor, the trigger time, the answer's message); a full page sends an update to another
-- page, with an entry in every index. A dead version is pruned only once no snapshot can see
-- it, and under load a scan's statement holds one for most of a second, so the claim's and the
-- answer's versions must fit beside the first without it. Pages filled to 50 %: a claim of 1,000
-- runs found no room for an eighth of them (fire_path_plans_pgtest); to 40 %, end to end at 8,000
-- fires a second, a third of the updates found none; to 25 %, a fifth (docs/benchmarks.md, "One
-- write per fire"). New pages only; a table of runs in flight is rewritten by its own churn
-- within seconds. The price: between two vacuums the table grows twice as fast as before, by a
-- page for every few runs that passed through it.
ALTER TABLE job_log_active SET (fillfactor = 25);
