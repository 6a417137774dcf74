-- A username is taken whatever the case of its letters: ALICE cannot be made beside alice, so
-- no user passes for another in the console, the audit log or a mail. Logins still match the
-- name exactly as it was created.
--
-- An installation that already holds two such names keeps them (the index is not made then,
-- and the admin says so in its log at every start); the API refuses new ones either way.
DO $$
BEGIN
  IF NOT EXISTS (SELECT 1 FROM app_user GROUP BY lower(username) HAVING count(*) > 1) THEN
    CREATE UNIQUE INDEX app_user_username_lower ON app_user (lower(username));
  END IF;
END
$$;
