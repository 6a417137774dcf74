-- Jobs files (docs/jobs-as-code.md): POST /api/v1/apply holds this row locked for its whole
-- transaction, so two applies, on any nodes, never interleave: the second reads what the first
-- wrote.
INSERT INTO job_lock (lock_name) VALUES ('apply_lock');
