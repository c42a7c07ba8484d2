-- The web channel's queries on its own tables, loaded once by bot/web/store.py.

-- name: account_add
INSERT INTO web_accounts (name, password_hash) VALUES (%(name)s, %(hash)s)
ON CONFLICT (name) DO NOTHING
RETURNING name;

-- name: account_password_set
-- A new password ends every session issued before it.
WITH ended AS (DELETE FROM web_sessions WHERE account = %(name)s)
UPDATE web_accounts SET password_hash = %(hash)s, password_changed_at = clock_timestamp()
WHERE name = %(name)s
RETURNING name;

-- name: account_remove
DELETE FROM web_accounts WHERE name = %(name)s RETURNING name;

-- name: account_get
SELECT * FROM web_accounts WHERE name = %(name)s;

-- name: account_list
SELECT name, created_at, password_changed_at, last_login_at FROM web_accounts ORDER BY name;

-- name: account_count
SELECT count(*)::int AS n FROM web_accounts;

-- name: account_logged_in
UPDATE web_accounts SET last_login_at = now() WHERE name = %(name)s RETURNING name;

-- name: secret_ensure
-- The first process to ask makes the key; everyone after reads that one. DO UPDATE (a no-op
-- write) rather than DO NOTHING: it returns the row a concurrent first start committed after
-- this statement's snapshot, which a DO NOTHING followed by a SELECT would not see.
INSERT INTO web_secrets (name, value) VALUES (%(name)s, decode(%(value)s, 'hex'))
ON CONFLICT (name) DO UPDATE SET value = web_secrets.value
RETURNING encode(value, 'hex') AS value;

-- name: first_link_add
-- A new one-time link (its token's hash); links past their expiry by a day go at the same time,
-- so the table stays as small as the number of recent starts.
WITH old AS (DELETE FROM web_first_links WHERE expires_at < now() - interval '1 day')
INSERT INTO web_first_links (token_hash, expires_at)
VALUES (%(hash)s, now() + make_interval(secs => %(seconds)s::float8))
RETURNING token_hash;

-- name: first_link_open
-- Whether the link still works: unused, not expired, and nobody has an account yet.
SELECT (used_at IS NULL AND expires_at > now()
        AND NOT EXISTS (SELECT 1 FROM web_accounts)) AS usable,
       EXISTS (SELECT 1 FROM web_accounts) AS accounts
FROM web_first_links WHERE token_hash = %(hash)s;

-- name: first_link_lock
-- Serializes the first accounts' creation: two links (two services started with no account)
-- used at the same moment still make one first account, the other is refused.
SELECT pg_advisory_xact_lock(hashtext('signoff web first account'));

-- name: first_link_use
-- Marks the link used and creates the account in one statement, after first_link_lock in the
-- same transaction. A link used twice at once: the second UPDATE waits for the first's row
-- lock, then sees used_at set and changes nothing, so it creates nothing.
WITH used AS (
    UPDATE web_first_links SET used_at = now(), used_by = %(name)s
    WHERE token_hash = %(hash)s AND used_at IS NULL AND expires_at > now()
      AND NOT EXISTS (SELECT 1 FROM web_accounts)
    RETURNING token_hash
)
INSERT INTO web_accounts (name, password_hash)
SELECT %(name)s, %(password_hash)s FROM used
ON CONFLICT (name) DO NOTHING
RETURNING name;

-- name: account_hash_upgrade
-- A stronger hash of the same password (scrypt to argon2id at sign-in): sessions stand.
UPDATE web_accounts SET password_hash = %(hash)s
WHERE name = %(name)s AND password_hash = %(old)s
RETURNING name;

-- name: session_add
-- Lapsed rows of anyone go at the next sign-in, so the table holds live sessions only.
WITH lapsed AS (DELETE FROM web_sessions WHERE expires_at < clock_timestamp())
INSERT INTO web_sessions (id, account, expires_at)
VALUES (%(id)s, %(account)s, clock_timestamp() + make_interval(secs => %(seconds)s))
RETURNING id, account, created_at;

-- name: session_get
-- A live session of an account that still stands, issued after its last new password.
SELECT s.id, s.account, s.created_at
FROM web_sessions s JOIN web_accounts a ON a.name = s.account
WHERE s.id = %(id)s AND s.expires_at > clock_timestamp()
  AND s.created_at >= a.password_changed_at;

-- name: session_remove
DELETE FROM web_sessions WHERE id = %(id)s RETURNING id;

-- name: session_remove_all
DELETE FROM web_sessions WHERE account = %(account)s RETURNING id;

-- name: session_count
SELECT count(*)::int AS n FROM web_sessions
WHERE account = %(account)s AND expires_at > clock_timestamp();
