-- The one-time sign-in links a web process prints while no account exists (bot/web/firstlink.py):
-- the first person opens one and creates their account in the browser. Only a SHA-256 of the
-- link's random token is kept, never the token; a link works once, until expires_at, and only
-- while web_accounts is empty.
CREATE TABLE web_first_links (
    token_hash  text PRIMARY KEY CHECK (token_hash ~ '^[0-9a-f]{64}$'),
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    -- Set once, by the request that created the account with it.
    used_at     timestamptz,
    used_by     text
);
