-- What a user of the core adds to its schema (taskqueue/store/schema.sql) with its own
-- migrations: bot/web/migrations, recorded as web/NNNN. Generated: do not edit.
-- After adding a migration, run
--     python -m taskqueue.store.schema_dump --migrations bot/web/migrations --owner web --output bot/web/schema.sql
-- (a fresh database migrated from zero, dumped by pg_dump --schema-only); a test fails while
-- this file and the migrations disagree.

-- Name: web_accounts; Type: TABLE

CREATE TABLE public.web_accounts (
    name text NOT NULL,
    password_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    password_changed_at timestamp with time zone DEFAULT now() NOT NULL,
    last_login_at timestamp with time zone,
    CONSTRAINT web_accounts_name_check CHECK ((name ~ '^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$'::text))
);

-- Name: web_first_links; Type: TABLE

CREATE TABLE public.web_first_links (
    token_hash text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    used_at timestamp with time zone,
    used_by text,
    CONSTRAINT web_first_links_token_hash_check CHECK ((token_hash ~ '^[0-9a-f]{64}$'::text))
);

-- Name: web_secrets; Type: TABLE

CREATE TABLE public.web_secrets (
    name text NOT NULL,
    value bytea NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT web_secrets_value_check CHECK ((octet_length(value) >= 32))
);

-- Name: web_sessions; Type: TABLE

CREATE TABLE public.web_sessions (
    id text NOT NULL,
    account text NOT NULL,
    created_at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    CONSTRAINT web_sessions_id_check CHECK ((length(id) = 64))
);

-- Name: web_accounts web_accounts_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.web_accounts
    ADD CONSTRAINT web_accounts_pkey PRIMARY KEY (name);

-- Name: web_first_links web_first_links_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.web_first_links
    ADD CONSTRAINT web_first_links_pkey PRIMARY KEY (token_hash);

-- Name: web_secrets web_secrets_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.web_secrets
    ADD CONSTRAINT web_secrets_pkey PRIMARY KEY (name);

-- Name: web_sessions web_sessions_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.web_sessions
    ADD CONSTRAINT web_sessions_pkey PRIMARY KEY (id);

-- Name: web_sessions_account_idx; Type: INDEX

CREATE INDEX web_sessions_account_idx ON public.web_sessions USING btree (account);

-- Name: web_sessions_expires_idx; Type: INDEX

CREATE INDEX web_sessions_expires_idx ON public.web_sessions USING btree (expires_at);

-- Name: web_sessions web_sessions_account_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.web_sessions
    ADD CONSTRAINT web_sessions_account_fkey FOREIGN KEY (account) REFERENCES public.web_accounts(name) ON DELETE CASCADE;
