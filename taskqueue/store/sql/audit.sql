-- The audit: the hash chain of who decided (migration 0015) and the live rows it vouches
-- for, read by `signoff audit verify`, and the figures `signoff audit` prints. Named blocks,
-- loaded once with every .sql file here by taskqueue/store/queries.py; the TaskQueue method
-- that runs a query has its name (taskqueue/store/audit.py).

-- name: audit_chain_read
-- The chain in order, a page at a time.
SELECT seq, kind, ref, content, prev_hash, hash FROM audit_chain
WHERE seq > %(after)s ORDER BY seq LIMIT %(n)s;

-- name: audit_live_read
-- Every live row the chain speaks of, described as the chain's records describe it: each
-- approval (decided or not, to find a decision removed), each approve, each gated action;
-- with what tells a legitimate disappearance (the task pruned, a revise's discard) apart.
SELECT 'approval:' || a.id AS ref, 'approval' AS what, a.id AS approval_id,
       a.decision, CASE WHEN a.decision IS NOT NULL THEN signoff_audit_decision(a)::text END
           AS content
FROM approvals a
UNION ALL
SELECT 'vote:' || v.approval_id || ':' || v.person_key, 'vote', v.approval_id, NULL,
       signoff_audit_vote(v)::text
FROM approval_votes v
UNION ALL
SELECT 'action:' || g.approval_id, 'action', g.approval_id, NULL, signoff_audit_action(g)::text
FROM gated_actions g;

-- name: audit_tasks_by_capability
-- Per capability, the tasks created in the window and how far each moved: claimed,
-- parked at a question, approved, completed; and what its workload's stages report.
SELECT t.capability, count(*)::int AS tasks,
       count(t.first_claimed_at)::int AS claimed,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM approvals a WHERE a.task_id = t.id))::int
           AS asked,
       count(*) FILTER (WHERE EXISTS (SELECT 1 FROM approvals a WHERE a.task_id = t.id
                                      AND a.decision = 'approved'))::int AS approved,
       count(*) FILTER (WHERE t.status = 'succeeded')::int AS completed,
       count(*) FILTER (WHERE t.status = 'skipped')::int AS skipped,
       count(*) FILTER (WHERE t.status = 'expired')::int AS expired,
       count(*) FILTER (WHERE t.status = 'failed')::int AS failed,
       COALESCE((SELECT jsonb_object_agg(s.stage, s.n) FROM (
           SELECT e.detail->>'stage' AS stage, count(DISTINCT e.task_id) AS n
           FROM task_events e JOIN tasks u ON u.id = e.task_id
           WHERE u.capability = t.capability AND e.kind = 'stage' AND e.detail ? 'stage'
             AND u.created_at >= %(since)s
           GROUP BY 1) s), '{}'::jsonb) AS stages
FROM tasks t
WHERE t.created_at >= %(since)s
GROUP BY t.capability ORDER BY t.capability;

-- name: audit_producer_reasons
-- What the producers filtered out, by reason (e.g. skipped on hard requirements), per
-- capability, over the runs that finished in the window.
SELECT p.capability, r.key AS reason, sum((r.value)::text::numeric)::int AS n
FROM producer_runs p,
     jsonb_each(CASE WHEN jsonb_typeof(p.report->'filtered_by_reason') = 'object'
                     THEN p.report->'filtered_by_reason' ELSE '{}'::jsonb END) r
WHERE p.finished_at IS NOT NULL AND p.finished_at >= %(since)s
  AND jsonb_typeof(r.value) = 'number'
GROUP BY 1, 2 ORDER BY 1, 2;

-- name: audit_gates_asked
SELECT count(*)::int AS n FROM approvals WHERE created_at >= %(since)s;

-- name: audit_expired
SELECT count(*)::int AS n FROM approvals
WHERE decision = 'expired' AND decided_at >= %(since)s;

-- name: audit_gated_actions
-- Every gated action performed in the window (its result recorded), joined to the approval
-- that permitted it and that approval's counted approves. `decided` is false when no human
-- decision permits it: no approval, one not approved, none naming a person, or fewer
-- counted approves than it required (the groups are checked by the caller).
SELECT g.approval_id, g.task_id, t.capability, g.kind, g.fingerprint, g.settled_by,
       g.finished_at, a.decision, a.decided_by, a.required, a.groups,
       COALESCE((SELECT jsonb_agg(jsonb_build_object('by', v.person, 'at', v.decided_at,
                                                     'via', v.via)
                                  ORDER BY v.decided_at, v.person)
                 FROM approval_votes v WHERE v.approval_id = g.approval_id AND v.counts),
                '[]'::jsonb) AS approves,
       (a.id IS NOT NULL AND a.decision = 'approved' AND a.decided_by IS NOT NULL
        AND (SELECT count(*) FROM approval_votes v
             WHERE v.approval_id = a.id AND v.counts) >= a.required) AS decided
FROM gated_actions g
LEFT JOIN approvals a ON a.id = g.approval_id
LEFT JOIN tasks t ON t.id = g.task_id
WHERE g.finished_at IS NOT NULL AND g.finished_at >= %(since)s
ORDER BY g.finished_at, g.approval_id;
