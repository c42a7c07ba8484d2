-- Wake-ups (NOTIFY) and the notification outbox with its alert states.
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: notify
SELECT pg_notify(%(channel)s, %(payload)s);

-- name: notification_channel_known
SELECT 1 AS known FROM notification_channels WHERE name = %(channel)s;

-- name: notification_channel_fence
-- Before a new channel's backfill: waits for every transaction that has written
-- notifications to commit, and holds new ones off until this one does. Without it a park
-- in flight is lost to the channel: its fan-out ran before the channel existed, and the
-- backfill's snapshot was taken before the park committed.
LOCK TABLE notifications IN SHARE MODE;

-- Run by taskqueue/store/notifications.py. "The sender's fence" is `claimed_by =
-- %(sender)s`: a sender records only what it still holds, so two processes of one
-- channel never both deliver or mark the same row.
-- name: notification_channel_register
-- A channel new to this database is owed every question still open (and nothing older).
WITH ch AS (
    INSERT INTO notification_channels (name) VALUES (%(channel)s)
    ON CONFLICT (name) DO NOTHING
    RETURNING name
)
INSERT INTO notification_deliveries (notification_id, channel)
SELECT n.id, ch.name
FROM ch, notifications n
JOIN approvals a ON a.id = n.approval_id
JOIN tasks t ON t.id = a.task_id
WHERE n.kind = 'approval_request' AND a.decision IS NULL AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals l WHERE l.task_id = a.task_id AND l.id > a.id)
RETURNING notification_id;

-- name: notification_claim
-- Undelivered rows of one channel, oldest first, past their backoff and not held by a
-- live sender (a lapsed claim means that sender died: the row is owed again). A request
-- whose question was settled before it went out is delivered as nothing: the channel
-- gets its closing instead. SKIP LOCKED lets senders claim side by side. Without
-- take_lapsed, another sender's lapsed claim is left alone (a sender just back from an
-- outage: the other may have sent the row and be recording it now).
WITH candidate AS (
    SELECT d.notification_id
    FROM notification_deliveries d
    WHERE d.channel = %(channel)s AND d.delivered_at IS NULL
      AND d.next_attempt_at <= now()
      AND (d.claim_until IS NULL
           OR (d.claim_until < now() AND (%(take_lapsed)s OR d.claimed_by = %(sender)s)))
      AND (%(approval_id)s::bigint IS NULL OR d.notification_id IN (
              SELECT id FROM notifications WHERE approval_id = %(approval_id)s::bigint))
    ORDER BY d.notification_id
    LIMIT %(limit)s
    FOR UPDATE OF d SKIP LOCKED
), claimed AS (
    UPDATE notification_deliveries d SET
        claimed_by = %(sender)s,
        claim_until = now() + make_interval(secs => %(lease)s)
    FROM candidate c
    WHERE d.channel = %(channel)s AND d.notification_id = c.notification_id
    RETURNING d.*
)
SELECT n.id, n.kind, n.task_id, n.approval_id, n.body, n.created_at, c.channel,
       c.attempts, c.last_error, c.claimed_by, c.claim_until, c.receipt IS NOT NULL AS redelivery,
       (n.kind = 'approval_request' AND (
            a.decision IS NOT NULL OR t.status <> 'needs_approval'
            OR EXISTS (SELECT 1 FROM approvals l WHERE l.task_id = a.task_id AND l.id > a.id)
       )) AS settled
FROM claimed c
JOIN notifications n ON n.id = c.notification_id
LEFT JOIN approvals a ON a.id = n.approval_id
LEFT JOIN tasks t ON t.id = a.task_id
ORDER BY n.id;

-- name: notification_renew
-- A live sender's heartbeat: everything it holds stays its own for another lease.
UPDATE notification_deliveries SET claim_until = now() + make_interval(secs => %(lease)s)
WHERE channel = %(channel)s AND claimed_by = %(sender)s AND delivered_at IS NULL
RETURNING notification_id;

-- name: notification_mark_delivered
WITH d AS (
    UPDATE notification_deliveries SET
        delivered_at = now(), receipt = %(receipt)s, claimed_by = NULL, claim_until = NULL,
        attempts = attempts + 1, last_error = NULL
    WHERE notification_id = %(id)s AND channel = %(channel)s AND claimed_by = %(sender)s
      AND delivered_at IS NULL
    RETURNING *
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT n.task_id, 'notified', %(sender)s,
           jsonb_build_object('notification_id', n.id, 'kind', n.kind, 'channel', d.channel,
                              'approval_id', n.approval_id)
    FROM d JOIN notifications n ON n.id = d.notification_id
    WHERE n.task_id IS NOT NULL AND %(receipt)s::jsonb IS DISTINCT FROM '{"skipped": true}'::jsonb
)
SELECT * FROM d;

-- name: notification_release
-- A failed delivery: give the row back with the error, to be tried after `delay`.
-- Rows claimed in the same batch but not tried give theirs back without an attempt.
UPDATE notification_deliveries SET
    claimed_by = NULL, claim_until = NULL,
    attempts = attempts + CASE WHEN %(attempted)s THEN 1 ELSE 0 END,
    last_error = %(error)s, next_attempt_at = now() + make_interval(secs => %(delay)s)
WHERE notification_id = %(id)s AND channel = %(channel)s AND claimed_by = %(sender)s
RETURNING *;

-- name: notification_redeliver
-- Owe one channel the request of a still-open question again (a chat's "show me what
-- waits" command); whatever the channel showed before is its own to tidy up. The old
-- receipt stays, so the channel can tell a re-delivery from a first one.
UPDATE notification_deliveries d SET
    delivered_at = NULL, claimed_by = NULL, claim_until = NULL, next_attempt_at = now(),
    last_error = NULL
FROM notifications n, approvals a, tasks t
WHERE d.channel = %(channel)s AND d.notification_id = n.id
  AND n.kind = 'approval_request' AND n.approval_id = %(approval_id)s
  AND a.id = n.approval_id AND a.decision IS NULL
  AND t.id = a.task_id AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals l WHERE l.task_id = a.task_id AND l.id > a.id)
  AND d.delivered_at IS NOT NULL
RETURNING d.notification_id;

-- name: notification_wake
-- Make every undelivered row of a channel due now (the channel is back: skip the backoff).
UPDATE notification_deliveries SET next_attempt_at = now()
WHERE channel = %(channel)s AND delivered_at IS NULL AND next_attempt_at > now();

-- name: notification_next_due
-- Seconds until the channel's next undelivered row is due (0: now; NULL: none owed).
SELECT CASE WHEN count(*) > 0 THEN GREATEST(0, EXTRACT(EPOCH FROM
           min(GREATEST(next_attempt_at, COALESCE(claim_until, next_attempt_at))) - now()))
       END::float8 AS seconds
FROM notification_deliveries
WHERE channel = %(channel)s AND delivered_at IS NULL;

-- name: notification_insert
INSERT INTO notifications (kind, task_id, body)
VALUES (%(kind)s, %(task_id)s, %(body)s)
RETURNING id;

-- name: notification_list
SELECT n.*, d.channel, d.delivered_at, d.attempts, d.last_error, d.receipt
FROM notifications n
LEFT JOIN notification_deliveries d ON d.notification_id = n.id
WHERE (%(task_id)s::bigint IS NULL OR n.task_id = %(task_id)s::bigint)
  AND (%(kind)s::text IS NULL OR n.kind = %(kind)s::text)
ORDER BY n.id, d.channel;

-- name: notification_backlog
-- Per channel: undelivered rows and the age of the oldest (for /metrics and health).
SELECT d.channel, count(*)::int AS undelivered,
       COALESCE(EXTRACT(EPOCH FROM now() - min(n.created_at)), 0)::float8 AS oldest_seconds
FROM notification_deliveries d JOIN notifications n ON n.id = d.notification_id
WHERE d.delivered_at IS NULL
GROUP BY d.channel ORDER BY d.channel;

-- name: alert_state_ensure
INSERT INTO alert_states (name) VALUES (%(name)s) ON CONFLICT (name) DO NOTHING;

-- name: alert_state_change
-- Exactly one caller sees a change: the update matches only while the state differs;
-- the alert notification is written in the same transaction.
WITH s AS (
    UPDATE alert_states SET firing = %(firing)s, changed_at = now()
    WHERE name = %(name)s AND firing <> %(firing)s
    RETURNING *
)
INSERT INTO notifications (kind, body)
SELECT 'alert', %(body)s::jsonb || jsonb_build_object('name', s.name, 'firing', s.firing)
FROM s
RETURNING id;
