-- Child jobs (childJobId): how many child-job steps led to a run. A run fired by its job's own
-- schedule, by hand or through the API is at depth 0; the fires its success starts for the
-- job's children are one deeper; a retry keeps its run's depth. Saving a cycle of child jobs is
-- refused, and this cuts a chain that still runs away (a cycle closed by two edits at once):
-- beyond the limit a child's fire is written cancelled, saying why, instead of run.
ALTER TABLE job_log ADD COLUMN chain_depth smallint NOT NULL DEFAULT 0 CHECK (chain_depth >= 0);
