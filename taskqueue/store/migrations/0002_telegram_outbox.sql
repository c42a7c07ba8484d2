-- The Telegram outbox (issue 4). Every approval owes one message: a trigger writes its
-- outbox row in the approval's own transaction, so no approval can be parked without
-- it. Bot processes claim unsent rows with FOR UPDATE SKIP LOCKED and a short claim
-- lease (claimed_by, claim_until), send, and record the chat and message ids. A row is
-- "closed" once its message was edited to show the final decision (or the expiry) and
-- its buttons were removed.
CREATE TABLE approval_messages (
    approval_id     bigint PRIMARY KEY REFERENCES approvals (id) ON DELETE CASCADE,
    -- A random tag carried in the buttons' callback data: altered data does not match.
    token           text NOT NULL DEFAULT left(replace(gen_random_uuid()::text, '-', ''), 10),
    chat_id         bigint,
    message_id      bigint,
    sent_at         timestamptz,
    claimed_by      text,
    claim_until     timestamptz,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    closed_at       timestamptz,
    -- The message a re-send (/pending) replaced; its buttons are removed after the re-send.
    old_chat_id     bigint,
    old_message_id  bigint,
    CHECK ((sent_at IS NULL) = (message_id IS NULL))
);

CREATE INDEX approval_messages_unsent_idx ON approval_messages (approval_id)
    WHERE sent_at IS NULL;
CREATE INDEX approval_messages_unclosed_idx ON approval_messages (approval_id)
    WHERE sent_at IS NOT NULL AND closed_at IS NULL;
CREATE UNIQUE INDEX approval_messages_message_idx ON approval_messages (chat_id, message_id)
    WHERE message_id IS NOT NULL;

CREATE FUNCTION signoff_approval_message_owed() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO approval_messages (approval_id) VALUES (NEW.id);
    RETURN NEW;
END $$;

CREATE TRIGGER approvals_message_owed AFTER INSERT ON approvals
    FOR EACH ROW EXECUTE FUNCTION signoff_approval_message_owed();

-- Approvals parked before this migration are owed a message too.
INSERT INTO approval_messages (approval_id)
SELECT id FROM approvals WHERE decision IS NULL;

-- The last announced state of each alert (the incident signal), so an alert and its
-- recovery go out once per change, and a restart does not announce again.
CREATE TABLE telegram_alerts (
    name       text PRIMARY KEY,
    firing     boolean NOT NULL DEFAULT false,
    changed_at timestamptz NOT NULL DEFAULT now()
);

INSERT INTO telegram_alerts (name) VALUES ('incident');
