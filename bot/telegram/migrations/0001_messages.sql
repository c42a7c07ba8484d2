-- The Telegram channel's own record: which chat message shows which approval, with the
-- token its buttons carry (altered callback data does not match) and whether it was
-- closed (edited to show the outcome, buttons removed). Applied by the bot as owner
-- "telegram"; what the queue owes people is the core's notification outbox.
CREATE TABLE telegram_messages (
    approval_id bigint PRIMARY KEY REFERENCES approvals (id) ON DELETE CASCADE,
    token       text NOT NULL,
    chat_id     bigint NOT NULL,
    message_id  bigint NOT NULL,
    sent_at     timestamptz NOT NULL DEFAULT now(),
    closed_at   timestamptz,
    UNIQUE (chat_id, message_id)
);

-- Databases from before the notification outbox kept these in tables of their own:
-- carry the sent messages over, then drop the old tables and their trigger.
DO $$
BEGIN
    IF to_regclass('approval_messages') IS NOT NULL THEN
        INSERT INTO telegram_messages (approval_id, token, chat_id, message_id, sent_at, closed_at)
        SELECT approval_id, token, chat_id, message_id, sent_at, closed_at
        FROM approval_messages WHERE message_id IS NOT NULL;
        DROP TABLE approval_messages;
    END IF;
END $$;
DROP FUNCTION IF EXISTS signoff_approval_message_owed() CASCADE;
DROP TABLE IF EXISTS telegram_alerts;
