-- The claim as one server-side function: one round trip per claim, capped or not, and no
-- planning per call. A plain prepared statement was re-planned on every call (its generic
-- plan, with LIMIT unknown, was never chosen), which cost more than running it; here
-- plan_cache_mode is scoped to the function, so every statement in it is planned once per
-- session and the plans are written to be good for any n. A plan cached once is kept for the
-- session, so it must not depend on how big the tables were when it was made: with
-- enable_seqscan off (scoped to the function too) a session that started on an empty queue
-- does not keep a sequential scan of tasks as the table grows; every statement here has an
-- index to use. It replaces the statements task_claim (uncapped) and task_claim_capped
-- (behind claim_lock) of queries.sql.
--
-- Returns each claimed task with the status it was claimed from and its latest approval
-- with that approval's attachment metadata, in claim order: approved work (a human
-- answered) first, then priority, then age.
CREATE FUNCTION signoff_claim(p_capability text, p_worker text, p_lease double precision,
                              p_n integer)
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

    IF v_cap.max_running IS NULL AND v_cap.max_parked IS NULL AND v_cap.daily_new IS NULL THEN
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
        -- A capability with caps: its claimers take turns. Each statement below takes its
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
