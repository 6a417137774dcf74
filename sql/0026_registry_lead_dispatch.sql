-- Whether a cronwheel executor said at its last registration that it takes lead dispatch (POST
-- /lead: a second's fires handed over ahead of their instant, docs/scheduling.md "Lead
-- dispatch"). It says so only together with a clock estimate within its bound; false for
-- XXL-JOB's executors, which never do.
ALTER TABLE job_registry ADD COLUMN lead_dispatch boolean NOT NULL DEFAULT false;
