-- The web channel's own tables, applied by the bot as owner "web": the people who may
-- sign in (scrypt password hashes, never the passwords) and the key that signs session
-- cookies and CSRF tokens (made once per database, so every web process accepts the same
-- sessions).
CREATE TABLE web_accounts (
    name                text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$'),
    password_hash       text NOT NULL,
    created_at          timestamptz NOT NULL DEFAULT now(),
    -- Sessions issued before this moment are void (a new password ends them).
    password_changed_at timestamptz NOT NULL DEFAULT now(),
    last_login_at       timestamptz
);

CREATE TABLE web_secrets (
    name       text PRIMARY KEY,
    value      bytea NOT NULL CHECK (octet_length(value) >= 32),
    created_at timestamptz NOT NULL DEFAULT now()
);
