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
