-- The BEAN handlers a cronwheel executor said it runs at its last registration (its `handlers`
-- field), so the console can suggest them for a job of its group. XXL-JOB's executors do not
-- say: theirs stay empty.
ALTER TABLE job_registry ADD COLUMN handlers text[] NOT NULL DEFAULT '{}';
