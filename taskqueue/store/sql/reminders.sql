-- Reminders and escalation of unanswered approvals (taskqueue/maintenance/reminders.py).
-- Named blocks, loaded once with every .sql file here. Each is one statement: the mark on
-- the approval (reminded_at, escalated_at), its task event and its outbox message commit
-- together. The UPDATE re-checks `... IS NULL` on a row a concurrent run just marked, so
-- two runs at once send each reminder exactly once.

-- name: approval_remind_due
WITH due AS (
    UPDATE approvals a SET reminded_at = now()
    FROM tasks t, capabilities c
    WHERE t.id = a.task_id AND c.capability = t.capability
      AND a.decision IS NULL AND t.status = 'needs_approval' AND a.reminded_at IS NULL
      AND c.remind_after_seconds IS NOT NULL
      AND a.created_at + make_interval(secs => c.remind_after_seconds) <= now()
      AND a.expires_at > now()
      AND a.id = (SELECT max(id) FROM approvals l WHERE l.task_id = a.task_id)
    RETURNING a.id, a.task_id, a.question, t.capability
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT task_id, 'reminded', 'reminders', jsonb_build_object('approval_id', id) FROM due
), msg AS (
    INSERT INTO notifications (kind, task_id, body)
    SELECT 'message', task_id, jsonb_build_object(
        'subject', 'Reminder: task ' || task_id || ' (' || capability || ') is waiting',
        'text', 'Still waiting for a decision: ' || question,
        'reminder', id)
    FROM due
)
SELECT * FROM due ORDER BY id;

-- name: approval_escalate_due
WITH due AS (
    UPDATE approvals a SET escalated_at = now()
    FROM tasks t, capabilities c
    WHERE t.id = a.task_id AND c.capability = t.capability
      AND a.decision IS NULL AND t.status = 'needs_approval' AND a.escalated_at IS NULL
      AND c.escalate_after_seconds IS NOT NULL
      AND a.created_at + make_interval(secs => c.escalate_after_seconds) <= now()
      AND a.expires_at > now()
      AND a.id = (SELECT max(id) FROM approvals l WHERE l.task_id = a.task_id)
    RETURNING a.id, a.task_id, a.question, t.capability, c.escalate_to
), ev AS (
    INSERT INTO task_events (task_id, kind, actor, detail)
    SELECT task_id, 'escalated', 'reminders',
           jsonb_build_object('approval_id', id, 'to', to_jsonb(escalate_to))
    FROM due
), msg AS (
    INSERT INTO notifications (kind, task_id, body)
    SELECT 'message', task_id, jsonb_build_object(
        'subject', 'Escalated: task ' || task_id || ' (' || capability || ') is unanswered',
        'text', 'Unanswered for too long: ' || question,
        'escalation', id, 'escalate_to', to_jsonb(escalate_to))
    FROM due
)
SELECT * FROM due ORDER BY id;
