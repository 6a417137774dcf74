-- A job's name: its identity across installations, unique within its group (files kept in
-- git, exports, imports and the command line name jobs by (group app name, job name); ids stay
-- the API's keys). Lower-case letters, digits, '.', '_' and '-', starting with a letter or a
-- digit, at most 100 characters. A job given no name is named after its id, "job-42", which is
-- also what every existing job gets here.
ALTER TABLE job_info ADD COLUMN name text;
UPDATE job_info SET name = 'job-' || id;
ALTER TABLE job_info ALTER COLUMN name SET NOT NULL;
ALTER TABLE job_info ADD CONSTRAINT job_info_name_format CHECK (name ~ '^[a-z0-9][a-z0-9._-]{0,99}$');
ALTER TABLE job_info ADD CONSTRAINT job_info_group_name_key UNIQUE (job_group, name);

-- Named after the id when an insert gives no name (NULL or ''): the id's default is in NEW by
-- the time a BEFORE trigger runs.
CREATE FUNCTION job_info_default_name() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF NEW.name IS NULL OR NEW.name = '' THEN
    NEW.name := 'job-' || NEW.id;
  END IF;
  RETURN NEW;
END
$$;
CREATE TRIGGER job_info_default_name BEFORE INSERT ON job_info
  FOR EACH ROW EXECUTE FUNCTION job_info_default_name();
