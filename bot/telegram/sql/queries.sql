-- The Telegram channel's queries on its own table, loaded once by bot/telegram/store.py.

-- name: message_save
-- A (re-)sent request; returns the message it replaces, if any, to be tidied up.
WITH old AS (
    SELECT * FROM telegram_messages WHERE approval_id = %(approval_id)s FOR UPDATE
), saved AS (
    INSERT INTO telegram_messages AS m (approval_id, token, chat_id, message_id)
    VALUES (%(approval_id)s, %(token)s, %(chat_id)s, %(message_id)s)
    ON CONFLICT (approval_id) DO UPDATE SET
        token = EXCLUDED.token, chat_id = EXCLUDED.chat_id,
        message_id = EXCLUDED.message_id, sent_at = now(), closed_at = NULL
    RETURNING m.approval_id
)
SELECT old.* FROM old, saved;

-- name: message_get
SELECT * FROM telegram_messages WHERE approval_id = %(approval_id)s;

-- name: message_find
SELECT * FROM telegram_messages WHERE chat_id = %(chat_id)s AND message_id = %(message_id)s;

-- name: message_close
UPDATE telegram_messages SET closed_at = now()
WHERE approval_id = %(approval_id)s AND closed_at IS NULL
RETURNING *;
