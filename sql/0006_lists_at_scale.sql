-- Paged job and run lists that stay fast with millions of rows (admin/store/pg_keyset_list.h):
-- every order and filter the lists offer reads an index that ends at the page.
--
-- Upgrading: this builds five indexes on job_log in the migration's transaction, about 35 s
-- per 10,000,000 runs on 2 cores, while fires cannot be written, and the job search indexes,
-- about a minute per 1,000,000 jobs. Upgrade at a quiet time, or clear old runs first
-- (POST /api/v1/logs/clear).

-- Runs newest first, by (scheduled_time, id): for everyone, per group, per job. The per-group
-- and per-job indexes gain id so a page (and the key the next page starts from) needs no sort.
DROP INDEX job_log_job_time;
CREATE INDEX job_log_job_time ON job_log (job_id, scheduled_time DESC, id DESC);
DROP INDEX job_log_group_time;
CREATE INDEX job_log_group_time ON job_log (job_group, scheduled_time DESC, id DESC);
CREATE INDEX job_log_time ON job_log (scheduled_time DESC, id DESC);
-- The states that are rare among finished history, for the status filters: failures (per
-- group there is job_log_failed), and everything not finished (pending, sending, running)
-- or cancelled. Rows enter these only in those states, so they stay small.
CREATE INDEX job_log_failed_time ON job_log (scheduled_time DESC, id DESC) WHERE state IN ('failed', 'lost');
CREATE INDEX job_log_unsettled_time ON job_log (scheduled_time DESC, id DESC)
    WHERE state NOT IN ('succeeded', 'failed', 'lost');

-- Jobs newest first per group.
DROP INDEX job_info_group;
CREATE INDEX job_info_group ON job_info (job_group, id);

-- The text the job list searches (description, handler and author, lower-cased, joined by the
-- unit separator, which none of them may contain), kept beside job_info rather than indexed in
-- it: the scheduler rewrites a job_info row at every fire, and a text index on job_info would
-- be rewritten with it. Written only by the trigger below, which runs when a statement sets
-- one of the three columns (creating or editing a job), never for a fire. One narrow column
-- reads three times faster than three ILIKEs when no index can help (a search of one or two
-- characters).
CREATE TABLE job_info_text (
    job_id  bigint  PRIMARY KEY REFERENCES job_info (id) ON DELETE CASCADE,
    words   text    NOT NULL
);

CREATE FUNCTION job_info_words(job_desc text, executor_handler text, author text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT
    AS $$ SELECT lower(job_desc || chr(31) || executor_handler || chr(31) || author) $$;

CREATE FUNCTION job_info_text_sync() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_info_text (job_id, words)
    VALUES (NEW.id, job_info_words(NEW.job_desc, NEW.executor_handler, NEW.author))
    ON CONFLICT (job_id) DO UPDATE SET words = EXCLUDED.words;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_info_text_sync AFTER INSERT OR UPDATE OF job_desc, executor_handler, author ON job_info
    FOR EACH ROW EXECUTE FUNCTION job_info_text_sync();

INSERT INTO job_info_text (job_id, words)
SELECT id, job_info_words(job_desc, executor_handler, author) FROM job_info;

-- Substring search (LIKE '%text%') through trigrams, when the pg_trgm extension can be had:
-- it ships with PostgreSQL and is trusted, so a database owner may create it. Without it the
-- search reads the narrow job_info_text table instead (slower; the migration notes it).
DO $$
BEGIN
    CREATE EXTENSION IF NOT EXISTS pg_trgm;
EXCEPTION WHEN insufficient_privilege OR undefined_file THEN
    RAISE NOTICE 'pg_trgm is not available (%); the job list searches text without an index', SQLERRM;
END
$$;

DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'pg_trgm') THEN
        EXECUTE 'CREATE INDEX job_info_text_search ON job_info_text USING gin (words gin_trgm_ops)';
    END IF;
END
$$;

-- A search of one or two characters has no trigram: it finds its jobs through the one- and
-- two-character substrings of each job's words instead (the list asks for
-- job_info_grams(words) @> ARRAY[text] beside the LIKE).
-- (Each character, then each pair of neighbours; GIN drops the repeats.)
CREATE FUNCTION job_info_grams(words text) RETURNS text[] LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT chars || coalesce((SELECT array_agg(a || b) FROM unnest(chars[1:cardinality(chars) - 1], chars[2:]) AS p(a, b)),
                             '{}')
    FROM (SELECT string_to_array(words, NULL) AS chars) s
$$;
CREATE INDEX job_info_text_short ON job_info_text USING gin (job_info_grams(words));

ANALYZE job_info_text;

-- The dashboard's job figures per group (all jobs; those scheduled), so they are read rather
-- than counted over every job. Written only by the triggers below: jobs created or deleted
-- (once per statement, summed per group, so a bulk insert costs one update per group), and a
-- job started, stopped or moved to another group (per row; the WHEN clause skips the
-- scheduler's writes of fire times without calling the function). Many status changes of one
-- group in one transaction each rewrite that group's row: keep such bulk changes to a few
-- thousand rows a transaction.
CREATE TABLE job_count (
    job_group  bigint  PRIMARY KEY REFERENCES job_group (id) ON DELETE CASCADE,
    total      bigint  NOT NULL DEFAULT 0,
    enabled    bigint  NOT NULL DEFAULT 0
);

CREATE FUNCTION job_count_added() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO job_count (job_group, total, enabled)
    SELECT job_group, count(*), count(*) FILTER (WHERE trigger_status = 1) FROM added_jobs GROUP BY job_group
    ON CONFLICT (job_group) DO UPDATE
        SET total = job_count.total + EXCLUDED.total, enabled = job_count.enabled + EXCLUDED.enabled;
    RETURN NULL;
END
$$;

CREATE FUNCTION job_count_removed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_count c SET total = c.total - r.total, enabled = c.enabled - r.enabled
    FROM (SELECT job_group, count(*) AS total, count(*) FILTER (WHERE trigger_status = 1) AS enabled
          FROM removed_jobs GROUP BY job_group) r
    WHERE c.job_group = r.job_group;
    RETURN NULL;
END
$$;

CREATE FUNCTION job_count_changed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE job_count SET total = total - 1, enabled = enabled - (OLD.trigger_status = 1)::int
    WHERE job_group = OLD.job_group;
    INSERT INTO job_count (job_group, total, enabled) VALUES (NEW.job_group, 1, (NEW.trigger_status = 1)::int)
    ON CONFLICT (job_group) DO UPDATE
        SET total = job_count.total + 1, enabled = job_count.enabled + EXCLUDED.enabled;
    RETURN NULL;
END
$$;

CREATE TRIGGER job_count_added AFTER INSERT ON job_info REFERENCING NEW TABLE AS added_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION job_count_added();
CREATE TRIGGER job_count_removed AFTER DELETE ON job_info REFERENCING OLD TABLE AS removed_jobs
    FOR EACH STATEMENT EXECUTE FUNCTION job_count_removed();
CREATE TRIGGER job_count_changed AFTER UPDATE OF job_group, trigger_status ON job_info
    FOR EACH ROW WHEN (OLD.job_group IS DISTINCT FROM NEW.job_group OR OLD.trigger_status IS DISTINCT FROM NEW.trigger_status)
    EXECUTE FUNCTION job_count_changed();

INSERT INTO job_count (job_group, total, enabled)
SELECT job_group, count(*), count(*) FILTER (WHERE trigger_status = 1) FROM job_info GROUP BY job_group;
