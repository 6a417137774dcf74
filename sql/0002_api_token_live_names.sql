-- API token names are unique among a user's live tokens only: revoking "ci" and creating a new
-- "ci" is the usual way to rotate a secret. Revoked tokens stay listed (with revoked_at) so a
-- user sees what existed, which is why the name cannot stay unique across all rows.
ALTER TABLE api_token DROP CONSTRAINT api_token_user_id_name_key;
CREATE UNIQUE INDEX api_token_live_name ON api_token (user_id, name) WHERE revoked_at IS NULL;
