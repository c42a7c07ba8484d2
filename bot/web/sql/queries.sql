-- The web channel's queries on its own tables, loaded once by bot/web/store.py.

-- name: account_add
INSERT INTO web_accounts (name, password_hash) VALUES (%(name)s, %(hash)s)
ON CONFLICT (name) DO NOTHING
RETURNING name;

-- name: account_password_set
-- A new password ends every session issued before it.
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
