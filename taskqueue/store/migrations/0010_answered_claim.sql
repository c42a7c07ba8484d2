-- The worker's answer slot (issue 26): a person's answer must not queue behind bulk work.
-- signoff_claim takes p_answered_only (default false, so every call before this one reads
-- as it did): true claims only tasks a person answered (status 'approved') of the
-- capability, up to p_n, under the capability's running cap. A worker whose slots are all
-- busy claims with it when a decision's NOTIFY arrives, and runs the answer in one slot kept
-- for answers.
DROP FUNCTION signoff_claim(text, text, double precision, integer);

CREATE FUNCTION signoff_claim(p_capability text, p_worker text, p_lease double precision,
                              p_n integer, p_answered_only boolean DEFAULT false)
RETURNS TABLE (claimed_task tasks, claimed_from text, latest_approval approvals,
               latest_files jsonb)
LANGUAGE plpgsql
SET plan_cache_mode = force_generic_plan
SET enable_seqscan = off
AS $$
DECLARE
    v_cap   capabilities%ROWTYPE;
    v_count bigint;
    v_run   integer := p_n;
    v_new   integer;
    v_ids   bigint[];
    v_from  text[];
BEGIN
    SELECT * INTO v_cap FROM capabilities WHERE capability = p_capability;

    IF v_cap.max_running IS NULL AND v_cap.max_parked IS NULL AND v_cap.daily_new IS NULL
       AND NOT p_answered_only THEN
        SELECT array_agg(c.id ORDER BY c.rank), array_agg(c.old_status ORDER BY c.rank)
        INTO v_ids, v_from
        FROM (SELECT t.id, t.status AS old_status, row_number() OVER (
                         ORDER BY (t.status = 'approved') DESC, t.priority DESC, t.id) AS rank
              FROM (SELECT t.id, t.status, t.priority FROM tasks t
                    WHERE t.capability = p_capability
                      AND t.status IN ('pending', 'approved')
                      AND t.run_after <= now()
                    ORDER BY (t.status = 'approved') DESC, t.priority DESC, t.id
                    LIMIT p_n
                    FOR UPDATE OF t SKIP LOCKED) t) c;
    ELSE
        -- A capability with caps, or a claim of answered work only (which needs no lock
        -- when there are no caps, and takes it for one short statement then): its
        -- claimers take turns. Each statement below takes its
        -- snapshot after this lock was granted (READ COMMITTED, a volatile function), so
        -- the counts include every claim committed before ours and no two claimers can both
        -- see "one slot left"; the lock is held until this claim commits.
        PERFORM pg_advisory_xact_lock(hashtextextended('signoff.claim:' || p_capability, 0));
        IF v_cap.max_running IS NOT NULL THEN
            SELECT count(*) INTO v_count FROM tasks
            WHERE capability = p_capability AND status = 'running';
            v_run := least(v_run, v_cap.max_running - v_count);
        END IF;
        v_new := v_run;
        -- max_parked is a true ceiling: it bounds the tasks that are "held", i.e. admitted
        -- (claimed at least once) and not finished. Only a held task can park, and resumed
        -- work (approved, revised, released, retried after a failure) is held all along, so
        -- it never passes this gate again and can never push the parked count over the cap.
        IF v_cap.max_parked IS NOT NULL THEN
            SELECT count(*) INTO v_count FROM tasks
            WHERE capability = p_capability AND first_claimed_at IS NOT NULL
              AND status IN ('pending', 'running', 'needs_approval', 'approved');
            v_new := least(v_new, v_cap.max_parked - v_count);
        END IF;
        IF v_cap.daily_new IS NOT NULL THEN
            SELECT count(*) INTO v_count FROM tasks
            WHERE capability = p_capability
              AND first_claimed_at >= (date_trunc('day', now() AT TIME ZONE v_cap.day_timezone)
                                       AT TIME ZONE v_cap.day_timezone);
            v_new := least(v_new, v_cap.daily_new - v_count);
        END IF;
        IF v_run <= 0 THEN
            RETURN;
        END IF;
        IF p_answered_only THEN
            -- Answered work only, for a worker's answer slot: approved rows lead the
            -- claimable index, so (status = 'approved') is an index condition and a backlog
            -- of new work behind them is never read. The running cap (v_run) holds; the
            -- held and daily caps bound new work only.
            SELECT array_agg(a.id ORDER BY a.priority DESC, a.id),
                   array_agg(a.status ORDER BY a.priority DESC, a.id)
            INTO v_ids, v_from
            FROM (SELECT t.id, t.status, t.priority FROM tasks t
                  WHERE t.capability = p_capability
                    AND (t.status = 'approved')
                    AND t.run_after <= now()
                  ORDER BY (t.status = 'approved') DESC, t.priority DESC, t.id
                  LIMIT v_run
                  FOR UPDATE OF t SKIP LOCKED) a;
        ELSE
            -- Resumed work fills free running slots first; new work (never claimed) also has
            -- to fit the held and daily caps. Rows locked here but cut by the outer LIMIT are
            -- unlocked at this claim's commit.
            SELECT array_agg(u.id ORDER BY u.rank), array_agg(u.old_status ORDER BY u.rank)
            INTO v_ids, v_from
            FROM (SELECT u.id, u.old_status, row_number() OVER (
                             ORDER BY (u.old_status = 'approved') DESC, u.priority DESC, u.id)
                             AS rank
                  FROM (SELECT * FROM (
                            SELECT t.id, t.status AS old_status, t.priority FROM tasks t
                            WHERE t.capability = p_capability
                              AND t.status IN ('pending', 'approved')
                              AND t.first_claimed_at IS NOT NULL
                              AND t.run_after <= now()
                            ORDER BY (t.status = 'approved') DESC, t.priority DESC, t.id
                            LIMIT v_run
                            FOR UPDATE OF t SKIP LOCKED) resumed
                        UNION ALL
                        SELECT * FROM (
                            SELECT t.id, t.status AS old_status, t.priority FROM tasks t
                            WHERE t.capability = p_capability
                              AND t.status = 'pending' AND t.first_claimed_at IS NULL
                              AND t.run_after <= now()
                            -- The claimable index's own order (status is always 'pending'
                            -- here), so the scan stops after the first rows.
                            ORDER BY (t.status = 'approved') DESC, t.priority DESC, t.id
                            LIMIT greatest(v_new, 0)
                            FOR UPDATE OF t SKIP LOCKED) fresh) u
                  ORDER BY rank
                  LIMIT v_run) u;
        END IF;
    END IF;

    IF v_ids IS NULL THEN
        RETURN;
    END IF;

    RETURN QUERY
    WITH candidate AS (
        SELECT c.id, c.old_status, c.rank
        FROM unnest(v_ids, v_from) WITH ORDINALITY AS c(id, old_status, rank)
    ), claimed AS (
        UPDATE tasks t SET
            status = 'running',
            worker = p_worker,
            claim_token = gen_random_uuid(),
            lease_expires_at = now() + make_interval(
                secs => COALESCE(p_lease, v_cap.lease_seconds, 300)),
            first_claimed_at = COALESCE(t.first_claimed_at, now())
        WHERE t.id = ANY (v_ids)
        RETURNING t AS row, t.id, t.claim_token, t.lease_expires_at
    ), ev AS (
        INSERT INTO task_events (task_id, kind, actor, detail)
        SELECT k.id, 'claimed', p_worker,
               jsonb_build_object('from', c.old_status, 'to', 'running',
                                  'claim', k.claim_token,
                                  'lease_expires_at', k.lease_expires_at)
        FROM claimed k JOIN candidate c ON c.id = k.id
    )
    SELECT k.row, c.old_status, a.ap,
           (SELECT jsonb_agg(jsonb_build_object(
                       'id', f.id, 'approval_id', f.approval_id, 'filename', f.filename,
                       'content_type', f.content_type, 'size_bytes', f.size_bytes,
                       'sha256', f.sha256) ORDER BY f.id)
            FROM approval_attachments f WHERE f.approval_id = (a.ap).id)
    FROM claimed k
    JOIN candidate c ON c.id = k.id
    LEFT JOIN LATERAL (
        SELECT ap FROM approvals ap WHERE ap.task_id = k.id ORDER BY ap.id DESC LIMIT 1
    ) a ON true
    ORDER BY c.rank;
END $$;
