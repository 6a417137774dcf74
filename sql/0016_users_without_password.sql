-- Users a jobs file brings (cronwheel import xxl-job: XXL-JOB keeps unsalted MD5 hashes, which
-- are not carried over) have no password until an admin sets one: '' is no password, and no
-- password verifies against it, so they cannot log in before.
ALTER TABLE app_user DROP CONSTRAINT app_user_password_hash_check;
ALTER TABLE app_user ADD CONSTRAINT app_user_password_hash_check
    CHECK (password_hash = '' OR password_hash LIKE '$argon2%');
