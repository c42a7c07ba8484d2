-- What a user of the core adds to its schema (taskqueue/store/schema.sql) with its own
-- migrations: bot/telegram/migrations, recorded as telegram/NNNN. Generated: do not edit.
-- After adding a migration, run
--     python -m taskqueue.store.schema_dump --migrations bot/telegram/migrations --owner telegram --output bot/telegram/schema.sql
-- (a fresh database migrated from zero, dumped by pg_dump --schema-only); a test fails while
-- this file and the migrations disagree.

-- Name: telegram_messages; Type: TABLE

CREATE TABLE public.telegram_messages (
    approval_id bigint NOT NULL,
    token text NOT NULL,
    chat_id bigint NOT NULL,
    message_id bigint NOT NULL,
    sent_at timestamp with time zone DEFAULT now() NOT NULL,
    closed_at timestamp with time zone
);

-- Name: telegram_messages telegram_messages_chat_id_message_id_key; Type: CONSTRAINT

ALTER TABLE ONLY public.telegram_messages
    ADD CONSTRAINT telegram_messages_chat_id_message_id_key UNIQUE (chat_id, message_id);

-- Name: telegram_messages telegram_messages_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.telegram_messages
    ADD CONSTRAINT telegram_messages_pkey PRIMARY KEY (approval_id);

-- Name: telegram_messages telegram_messages_approval_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.telegram_messages
    ADD CONSTRAINT telegram_messages_approval_id_fkey FOREIGN KEY (approval_id) REFERENCES public.approvals(id) ON DELETE CASCADE;
