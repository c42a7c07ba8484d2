-- What a user of the core adds to its schema (taskqueue/store/schema.sql) with its own
-- migrations: bot/api/migrations, recorded as api/NNNN. Generated: do not edit.
-- After adding a migration, run
--     python -m taskqueue.store.schema_dump --migrations bot/api/migrations --owner api --output bot/api/schema.sql
-- (a fresh database migrated from zero, dumped by pg_dump --schema-only); a test fails while
-- this file and the migrations disagree.

-- Name: api_tokens; Type: TABLE

CREATE TABLE public.api_tokens (
    name text NOT NULL,
    token_hash text NOT NULL,
    person text,
    scopes text[] NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    revoked_at timestamp with time zone,
    CONSTRAINT api_tokens_name_check CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$'::text))
);

-- Name: api_tokens api_tokens_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_pkey PRIMARY KEY (name);

-- Name: api_tokens api_tokens_token_hash_key; Type: CONSTRAINT

ALTER TABLE ONLY public.api_tokens
    ADD CONSTRAINT api_tokens_token_hash_key UNIQUE (token_hash);
