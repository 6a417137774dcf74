-- A fire being delivered: its owner chose the executor and is calling /run. The only state
-- whose outcome is unknown when the owner dies mid-call; a node taking it over asks the
-- executor before sending again (docs/scheduling.md, "When a node dies").
ALTER TABLE job_log DROP CONSTRAINT job_log_state_check;
ALTER TABLE job_log ADD CONSTRAINT job_log_state_check
    CHECK (state IN ('pending', 'sending', 'triggered', 'succeeded', 'failed', 'lost', 'cancelled'));

-- A fire being sent has an owner, like a pending one.
ALTER TABLE job_log DROP CONSTRAINT job_log_pending_has_owner;
ALTER TABLE job_log ADD CONSTRAINT job_log_pending_has_owner
    CHECK (state NOT IN ('pending', 'sending') OR admin_node IS NOT NULL);

-- Recovery: the fires a dead node was sending.
CREATE INDEX job_log_sending ON job_log (admin_node) WHERE state = 'sending';
