-- The API's tokens (bot/api/store.py). Named blocks, loaded once.

-- name: token_add
INSERT INTO api_tokens (name, token_hash, person, scopes)
VALUES (%(name)s, %(token_hash)s, %(person)s, %(scopes)s)
ON CONFLICT (name) DO NOTHING
RETURNING *;

-- name: token_find
-- A live token by its hash, marked used (at most once a minute, so a busy agent does
-- not write a row per request).
WITH t AS (
    SELECT * FROM api_tokens WHERE token_hash = %(token_hash)s AND revoked_at IS NULL
), used AS (
    UPDATE api_tokens SET last_used_at = now()
    WHERE name = (SELECT name FROM t)
      AND (last_used_at IS NULL OR last_used_at < now() - interval '1 minute')
)
SELECT * FROM t;

-- name: token_list
SELECT * FROM api_tokens ORDER BY name;

-- name: token_revoke
UPDATE api_tokens SET revoked_at = now()
WHERE name = %(name)s AND revoked_at IS NULL
RETURNING *;
