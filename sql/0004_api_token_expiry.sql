-- API tokens may expire: POST tokens takes an optional lifetime, and a token past its
-- expires_at no longer authenticates (it stays listed, like a revoked one). NULL: never.
ALTER TABLE api_token ADD COLUMN expires_at timestamptz;
ALTER TABLE api_token ADD CONSTRAINT api_token_expires_after_creation
    CHECK (expires_at IS NULL OR expires_at > created_at);
