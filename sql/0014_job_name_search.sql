-- The job list's text search matches a job's name too: job_info_text's words hold the name
-- before the three fields of 0006, and the trigger also runs when the name changes.
CREATE FUNCTION job_info_named_words(name text, job_desc text, executor_handler text, author text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT lower(name || chr(31) || job_desc || chr(31) || executor_handler || chr(31) || author) $$;

CREATE OR REPLACE FUNCTION job_info_text_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_info_text (job_id, words)
    VALUES (NEW.id, job_info_named_words(NEW.name, NEW.job_desc, NEW.executor_handler, NEW.author))
    ON CONFLICT (job_id) DO UPDATE SET words = EXCLUDED.words;
    RETURN NULL;
END
$$;

DROP TRIGGER job_info_text_sync ON job_info;
CREATE TRIGGER job_info_text_sync AFTER INSERT OR UPDATE OF name, job_desc, executor_handler, author ON job_info
    FOR EACH ROW EXECUTE FUNCTION job_info_text_sync();

UPDATE job_info_text t
   SET words = job_info_named_words(j.name, j.job_desc, j.executor_handler, j.author)
  FROM job_info j
 WHERE t.job_id = j.id;

DROP FUNCTION job_info_words(text, text, text);
