-- The HTTP API's bearer tokens. Only a SHA-256 of each token is kept (a token is 256
-- random bits, so a fast hash is enough); the token itself is printed once when made.
CREATE TABLE api_tokens (
    name         text PRIMARY KEY CHECK (name ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$'),
    token_hash   text NOT NULL UNIQUE,
    person       text,
    scopes       text[] NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
