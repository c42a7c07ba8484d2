-- Sessions kept on the server (aiohttp-session's storage, bot/web/sessions.py): signing
-- out deletes the row, so a copied cookie is refused after it. `id` is the SHA-256 of the
-- cookie's random token, never the token itself. Removing an account removes its sessions.
CREATE TABLE web_sessions (
    id         text PRIMARY KEY CHECK (length(id) = 64),
    account    text NOT NULL REFERENCES web_accounts (name) ON DELETE CASCADE,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at timestamptz NOT NULL
);

CREATE INDEX web_sessions_account_idx ON web_sessions (account);
CREATE INDEX web_sessions_expires_idx ON web_sessions (expires_at);
