-- Capability settings: the per-capability caps and timings (TaskQueue.capability_*).
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py; the
-- TaskQueue method that runs a query has its name.

-- name: capability_get
SELECT * FROM capabilities WHERE capability = %(capability)s;

-- name: capability_list
SELECT * FROM capabilities ORDER BY capability;

-- name: capability_put
INSERT INTO capabilities AS c (capability, max_running, max_parked, daily_new, day_timezone,
        lease_seconds, approval_ttl_seconds, max_attempts, retry_base_seconds, required_approvals,
        approvers, remind_after_seconds, escalate_after_seconds, escalate_to, approval_groups,
        signed_approvals)
VALUES (%(capability)s, %(max_running)s, %(max_parked)s, %(daily_new)s, %(day_timezone)s,
        %(lease_seconds)s, %(approval_ttl_seconds)s, %(max_attempts)s, %(retry_base_seconds)s,
        %(required_approvals)s, %(approvers)s::text[], %(remind_after_seconds)s,
        %(escalate_after_seconds)s, %(escalate_to)s::text[], %(approval_groups)s,
        %(signed_approvals)s)
ON CONFLICT (capability) DO UPDATE SET
    max_running = EXCLUDED.max_running,
    max_parked = EXCLUDED.max_parked,
    daily_new = EXCLUDED.daily_new,
    day_timezone = EXCLUDED.day_timezone,
    lease_seconds = EXCLUDED.lease_seconds,
    approval_ttl_seconds = EXCLUDED.approval_ttl_seconds,
    max_attempts = EXCLUDED.max_attempts,
    retry_base_seconds = EXCLUDED.retry_base_seconds,
    required_approvals = EXCLUDED.required_approvals,
    approvers = EXCLUDED.approvers,
    remind_after_seconds = EXCLUDED.remind_after_seconds,
    escalate_after_seconds = EXCLUDED.escalate_after_seconds,
    escalate_to = EXCLUDED.escalate_to,
    approval_groups = EXCLUDED.approval_groups,
    signed_approvals = EXCLUDED.signed_approvals,
    updated_at = now()
RETURNING *;

-- name: capability_lock
-- Serializes writers of one capability's settings row.
SELECT pg_advisory_xact_lock(hashtextextended('signoff.caps:' || %(capability)s, 0));

-- name: timezone_exists
SELECT EXISTS (SELECT 1 FROM pg_timezone_names WHERE name = %(tz)s) AS ok;
