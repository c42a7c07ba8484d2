-- The core's schema after all of its migrations (taskqueue/store/migrations/): tables,
-- functions, indexes, triggers. Generated: do not edit. After adding a migration, run
--     python -m taskqueue.store.schema_dump
-- (a fresh database migrated from zero, dumped by pg_dump --schema-only); a test fails while
-- this file and the migrations disagree.
--
-- The claim in force is signoff_claim(p_capability, p_worker, p_lease, p_n,
-- p_answered_only), defined by migration 0010_answered_claim.sql (it replaced 0005's);
-- store/sql/claim.sql's task_claim calls it.

-- Name: signoff_approval_capability(); Type: FUNCTION

CREATE FUNCTION public.signoff_approval_capability() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT t.capability INTO NEW.capability FROM tasks t WHERE t.id = NEW.task_id;
    RETURN NEW;
END
$$;

-- Name: signoff_approval_decided(); Type: FUNCTION

CREATE FUNCTION public.signoff_approval_decided() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO notifications (kind, task_id, approval_id, body)
    VALUES ('approval_closed', NEW.task_id, NEW.id, jsonb_build_object('outcome', NEW.decision))
    ON CONFLICT (approval_id) WHERE kind = 'approval_closed' DO NOTHING;
    RETURN NEW;
END $$;

-- Name: signoff_approval_decider_vote(); Type: FUNCTION

CREATE FUNCTION public.signoff_approval_decider_vote() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.decided_without_vote :=
        signoff_decided_without_vote(NEW.id, NEW.decision, NEW.decided_by);
    RETURN NEW;
END
$$;

-- Name: signoff_approval_needs_votes(); Type: FUNCTION

CREATE FUNCTION public.signoff_approval_needs_votes() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
DECLARE
    counted integer;
BEGIN
    IF NEW.decision IS DISTINCT FROM 'approved'
       OR (TG_OP = 'UPDATE' AND OLD.decision IS NOT DISTINCT FROM 'approved'
           AND NEW.required <= OLD.required) THEN
        RETURN NEW;
    END IF;
    SELECT count(*) INTO counted FROM approval_votes v
    WHERE v.approval_id = NEW.id AND v.counts;
    IF counted < NEW.required THEN
        RAISE EXCEPTION 'approval % cannot be approved with % of % required approves',
            NEW.id, counted, NEW.required
            USING ERRCODE = 'check_violation',
                  HINT = 'an approve is recorded in approval_votes first (signoff approve)';
    END IF;
    RETURN NEW;
END
$$;

-- Name: signoff_approval_requested(); Type: FUNCTION

CREATE FUNCTION public.signoff_approval_requested() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO notifications (kind, task_id, approval_id, body)
    SELECT 'approval_closed', prev.task_id, prev.id, jsonb_build_object('outcome', 'superseded')
    FROM approvals prev
    WHERE prev.task_id = NEW.task_id AND prev.id < NEW.id AND prev.decision IS NULL
    ON CONFLICT (approval_id) WHERE kind = 'approval_closed' DO NOTHING;
    INSERT INTO notifications (kind, task_id, approval_id)
    VALUES ('approval_request', NEW.task_id, NEW.id);
    RETURN NEW;
END $$;

-- Name: signoff_approval_votes_follow(); Type: FUNCTION

CREATE FUNCTION public.signoff_approval_votes_follow() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE approval_votes v SET decided_at = v.decided_at WHERE v.approval_id = NEW.id;
    RETURN NULL;
END
$$;

-- Name: gated_actions; Type: TABLE

CREATE TABLE public.gated_actions (
    approval_id bigint NOT NULL,
    task_id bigint NOT NULL,
    kind text NOT NULL,
    fingerprint text NOT NULL,
    idempotency_key uuid NOT NULL,
    approved_by text NOT NULL,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL,
    worker text NOT NULL,
    claim_token uuid NOT NULL,
    attempts integer DEFAULT 1 NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    result jsonb,
    settled_by text,
    finished_at timestamp with time zone,
    CONSTRAINT gated_actions_check CHECK (((finished_at IS NULL) = (settled_by IS NULL))),
    CONSTRAINT gated_actions_settled_by_check CHECK ((settled_by = ANY (ARRAY['acted'::text, 'verified'::text])))
);

-- Name: signoff_audit_action(public.gated_actions); Type: FUNCTION

CREATE FUNCTION public.signoff_audit_action(g public.gated_actions) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    SELECT jsonb_build_object('approval_id', g.approval_id, 'task_id', g.task_id,
                              'kind', g.kind, 'fingerprint', g.fingerprint,
                              'idempotency_key', g.idempotency_key,
                              'approved_by', g.approved_by, 'attempts', g.attempts,
                              'started_at', signoff_audit_time(g.started_at), 'settled_by', g.settled_by,
                              'finished_at', signoff_audit_time(g.finished_at), 'result', g.result)
$$;

-- Name: signoff_audit_actions(); Type: FUNCTION

CREATE FUNCTION public.signoff_audit_actions() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM signoff_audit_append('action_started', 'action:' || NEW.approval_id,
                                     signoff_audit_action(NEW));
    ELSIF TG_OP = 'DELETE' THEN
        IF OLD.finished_at IS NULL THEN
            PERFORM signoff_audit_append('action_dropped', 'action:' || OLD.approval_id,
                                         jsonb_build_object('approval_id', OLD.approval_id,
                                                            'dropped', true));
        END IF;
    ELSIF OLD.finished_at IS NULL AND NEW.finished_at IS NOT NULL THEN
        PERFORM signoff_audit_append('action_finished', 'action:' || NEW.approval_id,
                                     signoff_audit_action(NEW));
    ELSIF OLD.finished_at IS NULL AND NEW.finished_at IS NULL
          AND NEW.attempts = OLD.attempts + 1 THEN
        PERFORM signoff_audit_append('action_restarted', 'action:' || NEW.approval_id,
                                     signoff_audit_action(NEW));
    END IF;
    RETURN NULL;
END $$;

-- Name: signoff_audit_append(text, text, jsonb); Type: FUNCTION

CREATE FUNCTION public.signoff_audit_append(p_kind text, p_ref text, p_content jsonb) RETURNS void
    LANGUAGE plpgsql
    AS $$
DECLARE
    last_seq bigint;
    last_hash text;
    body text := p_content::text;
BEGIN
    PERFORM pg_advisory_xact_lock(hashtextextended('signoff.audit_chain', 0));
    -- A new snapshot after the lock (READ COMMITTED): the previous holder's record is seen.
    SELECT seq, hash INTO last_seq, last_hash FROM audit_chain ORDER BY seq DESC LIMIT 1;
    last_seq := COALESCE(last_seq, 0) + 1;
    last_hash := COALESCE(last_hash, repeat('0', 64));
    INSERT INTO audit_chain (seq, kind, ref, content, prev_hash, hash)
    VALUES (last_seq, p_kind, p_ref, body, last_hash,
            encode(sha256(convert_to(last_hash || E'\n' || last_seq || E'\n' || p_kind
                                     || E'\n' || p_ref || E'\n' || body, 'UTF8')), 'hex'));
END $$;

-- Name: signoff_audit_approvals(); Type: FUNCTION

CREATE FUNCTION public.signoff_audit_approvals() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF OLD.decision IS NULL AND NEW.decision IS NOT NULL THEN
        PERFORM signoff_audit_append('decision', 'approval:' || NEW.id,
                                     signoff_audit_decision(NEW));
    END IF;
    RETURN NULL;
END $$;

-- Name: approvals; Type: TABLE

CREATE TABLE public.approvals (
    id bigint NOT NULL,
    task_id bigint NOT NULL,
    question text NOT NULL,
    request jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    expires_at timestamp with time zone NOT NULL,
    decision text,
    decided_by text,
    decided_at timestamp with time zone,
    note text,
    required integer DEFAULT 1 NOT NULL,
    reminded_at timestamp with time zone,
    escalated_at timestamp with time zone,
    decided_via text,
    groups jsonb,
    capability text NOT NULL,
    decide_seconds double precision GENERATED ALWAYS AS ((EXTRACT(epoch FROM (decided_at - created_at)))::double precision) STORED,
    decided_without_vote boolean DEFAULT false NOT NULL,
    CONSTRAINT approvals_check CHECK (((decision IS NULL) = (decided_at IS NULL))),
    CONSTRAINT approvals_decision_check CHECK ((decision = ANY (ARRAY['approved'::text, 'revised'::text, 'skipped'::text, 'expired'::text]))),
    CONSTRAINT approvals_question_check CHECK ((question <> ''::text)),
    CONSTRAINT approvals_required_check CHECK (((required >= 1) AND (required <= 10)))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_cost_delay='0');

-- Name: signoff_audit_decision(public.approvals); Type: FUNCTION

CREATE FUNCTION public.signoff_audit_decision(a public.approvals) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    SELECT jsonb_build_object('approval_id', a.id, 'task_id', a.task_id,
                              'decision', a.decision, 'decided_by', a.decided_by,
                              'decided_via', a.decided_via, 'decided_at', signoff_audit_time(a.decided_at),
                              'required', a.required)
$$;

-- Name: signoff_audit_time(timestamp with time zone); Type: FUNCTION

CREATE FUNCTION public.signoff_audit_time(t timestamp with time zone) RETURNS text
    LANGUAGE sql STABLE
    AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

-- Name: approval_votes; Type: TABLE

CREATE TABLE public.approval_votes (
    approval_id bigint NOT NULL,
    person text NOT NULL,
    decided_at timestamp with time zone DEFAULT now() NOT NULL,
    counts boolean DEFAULT true NOT NULL,
    person_key text NOT NULL,
    via text,
    credential_id bytea,
    authenticator_data bytea,
    client_data bytea,
    signature bytea,
    origin text,
    seconds double precision,
    capability text
);

-- Name: signoff_audit_vote(public.approval_votes); Type: FUNCTION

CREATE FUNCTION public.signoff_audit_vote(v public.approval_votes) RETURNS jsonb
    LANGUAGE sql STABLE
    AS $$
    SELECT jsonb_build_object('approval_id', v.approval_id, 'person', v.person,
                              'person_key', v.person_key,
                              'decided_at', signoff_audit_time(v.decided_at),
                              'counts', v.counts, 'via', v.via)
           || CASE WHEN v.signature IS NULL AND v.credential_id IS NULL THEN '{}'::jsonb
                   ELSE jsonb_build_object(
                       'credential_id', encode(v.credential_id, 'hex'),
                       'signature_sha256', encode(sha256(COALESCE(v.signature, '')), 'hex'),
                       'origin', v.origin) END
$$;

-- Name: signoff_audit_votes(); Type: FUNCTION

CREATE FUNCTION public.signoff_audit_votes() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM signoff_audit_append('approve', 'vote:' || NEW.approval_id || ':' || NEW.person_key,
                                     signoff_audit_vote(NEW));
    ELSIF OLD.counts AND NOT NEW.counts AND OLD.person = NEW.person
          AND OLD.person_key = NEW.person_key AND OLD.decided_at = NEW.decided_at
          AND OLD.via IS NOT DISTINCT FROM NEW.via THEN
        PERFORM signoff_audit_append('approve_uncounted',
                                     'vote:' || NEW.approval_id || ':' || NEW.person_key,
                                     signoff_audit_vote(NEW));
    END IF;
    RETURN NULL;
END $$;

-- Name: tasks; Type: TABLE

CREATE TABLE public.tasks (
    id bigint NOT NULL,
    capability text NOT NULL,
    status text DEFAULT 'pending'::text NOT NULL,
    priority integer DEFAULT 0 NOT NULL,
    payload jsonb DEFAULT '{}'::jsonb NOT NULL,
    state jsonb DEFAULT '{}'::jsonb NOT NULL,
    result jsonb,
    last_error text,
    attempts integer DEFAULT 0 NOT NULL,
    max_attempts integer DEFAULT 3 NOT NULL,
    run_after timestamp with time zone DEFAULT now() NOT NULL,
    dedupe_key text,
    worker text,
    claim_token uuid,
    lease_expires_at timestamp with time zone,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    first_claimed_at timestamp with time zone,
    finished_at timestamp with time zone,
    enqueued_event_id bigint,
    enqueued_by text,
    CONSTRAINT tasks_attempts_check CHECK ((attempts >= 0)),
    CONSTRAINT tasks_capability_check CHECK ((capability <> ''::text)),
    CONSTRAINT tasks_max_attempts_check CHECK ((max_attempts > 0)),
    CONSTRAINT tasks_status_check CHECK ((status = ANY (ARRAY['pending'::text, 'running'::text, 'needs_approval'::text, 'approved'::text, 'succeeded'::text, 'failed'::text, 'skipped'::text, 'expired'::text, 'cancelled'::text])))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_insert_scale_factor='0.01', autovacuum_vacuum_cost_delay='0');

-- Name: signoff_claim(text, text, double precision, integer, boolean); Type: FUNCTION

CREATE FUNCTION public.signoff_claim(p_capability text, p_worker text, p_lease double precision, p_n integer, p_answered_only boolean DEFAULT false) RETURNS TABLE(claimed_task public.tasks, claimed_from text, latest_approval public.approvals, latest_files jsonb)
    LANGUAGE plpgsql
    SET plan_cache_mode TO 'force_generic_plan'
    SET enable_seqscan TO 'off'
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

-- Name: signoff_decided_without_vote(bigint, text, text); Type: FUNCTION

CREATE FUNCTION public.signoff_decided_without_vote(p_approval bigint, p_decision text, p_decided_by text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT p_decision = 'approved' AND p_decided_by IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM approval_votes v
                       WHERE v.approval_id = p_approval
                         AND (v.person_key = lower(btrim(p_decided_by))
                              OR lower(btrim(v.person)) = lower(btrim(p_decided_by))))
$$;

-- Name: signoff_enqueued_append_only(); Type: FUNCTION

CREATE FUNCTION public.signoff_enqueued_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'a task''s enqueued event is append-only, like task_events';
END $$;

-- Name: signoff_events_append_only(); Type: FUNCTION

CREATE FUNCTION public.signoff_events_append_only() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    RAISE EXCEPTION 'task_events is append-only';
END $$;

-- Name: signoff_notification_fan_out(); Type: FUNCTION

CREATE FUNCTION public.signoff_notification_fan_out() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO notification_deliveries (notification_id, channel)
    SELECT NEW.id, name FROM notification_channels;
    PERFORM pg_notify('signoff_notifications', NEW.id::text);
    RETURN NEW;
END $$;

-- Name: signoff_parked_task_left(); Type: FUNCTION

CREATE FUNCTION public.signoff_parked_task_left() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    INSERT INTO notifications (kind, task_id, approval_id, body)
    SELECT 'approval_closed', a.task_id, a.id, jsonb_build_object('outcome', NEW.status)
    FROM approvals a
    WHERE a.task_id = NEW.id AND a.decision IS NULL
    ON CONFLICT (approval_id) WHERE kind = 'approval_closed' DO NOTHING;
    RETURN NEW;
END $$;

-- Name: signoff_touch_updated_at(); Type: FUNCTION

CREATE FUNCTION public.signoff_touch_updated_at() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END $$;

-- Name: signoff_vote_decider_vote(); Type: FUNCTION

CREATE FUNCTION public.signoff_vote_decider_vote() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE approvals a
    SET decided_without_vote = signoff_decided_without_vote(a.id, a.decision, a.decided_by)
    WHERE a.id IN (CASE WHEN TG_OP <> 'INSERT' THEN OLD.approval_id END,
                   CASE WHEN TG_OP <> 'DELETE' THEN NEW.approval_id END)
      AND a.decision = 'approved'
      AND a.decided_without_vote IS DISTINCT FROM
          signoff_decided_without_vote(a.id, a.decision, a.decided_by);
    RETURN NULL;
END
$$;

-- Name: signoff_vote_person_key(); Type: FUNCTION

CREATE FUNCTION public.signoff_vote_person_key() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.person_key := COALESCE(NEW.person_key, lower(btrim(NEW.person)));
    RETURN NEW;
END $$;

-- Name: signoff_vote_times(); Type: FUNCTION

CREATE FUNCTION public.signoff_vote_times() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT EXTRACT(EPOCH FROM NEW.decided_at - a.created_at)::float8, a.capability
    INTO NEW.seconds, NEW.capability
    FROM approvals a WHERE a.id = NEW.approval_id;
    RETURN NEW;
END
$$;

-- Name: signoff_within(timestamp with time zone, timestamp with time zone, timestamp with time zone); Type: FUNCTION

CREATE FUNCTION public.signoff_within(p_at timestamp with time zone, p_since timestamp with time zone, p_until timestamp with time zone) RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT (p_since IS NULL OR p_at >= p_since) AND (p_until IS NULL OR p_at < p_until)
$$;

-- Name: alert_states; Type: TABLE

CREATE TABLE public.alert_states (
    name text NOT NULL,
    firing boolean DEFAULT false NOT NULL,
    changed_at timestamp with time zone DEFAULT now() NOT NULL
);

-- Name: approval_attachments; Type: TABLE

CREATE TABLE public.approval_attachments (
    id bigint NOT NULL,
    approval_id bigint NOT NULL,
    filename text NOT NULL,
    content_type text NOT NULL,
    size_bytes integer NOT NULL,
    sha256 text NOT NULL,
    data bytea NOT NULL
);

-- Name: approval_attachments_id_seq; Type: SEQUENCE

CREATE SEQUENCE public.approval_attachments_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: approval_attachments_id_seq; Type: SEQUENCE OWNED BY

ALTER SEQUENCE public.approval_attachments_id_seq OWNED BY public.approval_attachments.id;

-- Name: approvals_id_seq; Type: SEQUENCE

CREATE SEQUENCE public.approvals_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: approvals_id_seq; Type: SEQUENCE OWNED BY

ALTER SEQUENCE public.approvals_id_seq OWNED BY public.approvals.id;

-- Name: audit_chain; Type: TABLE

CREATE TABLE public.audit_chain (
    seq bigint NOT NULL,
    at timestamp with time zone DEFAULT clock_timestamp() NOT NULL,
    kind text NOT NULL,
    ref text NOT NULL,
    content text NOT NULL,
    prev_hash text NOT NULL,
    hash text NOT NULL
);

-- Name: capabilities; Type: TABLE

CREATE TABLE public.capabilities (
    capability text NOT NULL,
    max_running integer,
    max_parked integer,
    daily_new integer,
    day_timezone text DEFAULT 'UTC'::text NOT NULL,
    lease_seconds integer DEFAULT 300 NOT NULL,
    approval_ttl_seconds integer DEFAULT 172800 NOT NULL,
    max_attempts integer DEFAULT 3 NOT NULL,
    retry_base_seconds integer DEFAULT 30 NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    required_approvals integer DEFAULT 1 NOT NULL,
    approvers text[],
    remind_after_seconds integer,
    escalate_after_seconds integer,
    escalate_to text[] DEFAULT '{}'::text[] NOT NULL,
    approval_groups jsonb,
    signed_approvals boolean DEFAULT false NOT NULL,
    CONSTRAINT capabilities_approval_ttl_seconds_check CHECK ((approval_ttl_seconds > 0)),
    CONSTRAINT capabilities_daily_new_check CHECK ((daily_new >= 0)),
    CONSTRAINT capabilities_escalate_after_seconds_check CHECK ((escalate_after_seconds > 0)),
    CONSTRAINT capabilities_lease_seconds_check CHECK ((lease_seconds > 0)),
    CONSTRAINT capabilities_max_attempts_check CHECK ((max_attempts > 0)),
    CONSTRAINT capabilities_max_parked_check CHECK ((max_parked >= 0)),
    CONSTRAINT capabilities_max_running_check CHECK ((max_running >= 0)),
    CONSTRAINT capabilities_remind_after_seconds_check CHECK ((remind_after_seconds > 0)),
    CONSTRAINT capabilities_required_approvals_check CHECK (((required_approvals >= 1) AND (required_approvals <= 10))),
    CONSTRAINT capabilities_retry_base_seconds_check CHECK ((retry_base_seconds >= 0))
);

-- Name: leader_leases; Type: TABLE

CREATE TABLE public.leader_leases (
    key bigint NOT NULL,
    holder text NOT NULL,
    expires_at timestamp with time zone NOT NULL
);

-- Name: notification_channels; Type: TABLE

CREATE TABLE public.notification_channels (
    name text NOT NULL,
    registered_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notification_channels_name_check CHECK ((name ~ '^[a-z][a-z0-9_.-]{0,62}$'::text))
);

-- Name: notification_deliveries; Type: TABLE

CREATE TABLE public.notification_deliveries (
    notification_id bigint NOT NULL,
    channel text NOT NULL,
    claimed_by text,
    claim_until timestamp with time zone,
    attempts integer DEFAULT 0 NOT NULL,
    next_attempt_at timestamp with time zone DEFAULT now() NOT NULL,
    last_error text,
    delivered_at timestamp with time zone,
    receipt jsonb
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_cost_delay='0');

-- Name: notifications; Type: TABLE

CREATE TABLE public.notifications (
    id bigint NOT NULL,
    kind text NOT NULL,
    task_id bigint,
    approval_id bigint,
    body jsonb DEFAULT '{}'::jsonb NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT notifications_check CHECK (((kind = ANY (ARRAY['approval_request'::text, 'approval_progress'::text, 'approval_closed'::text])) = (approval_id IS NOT NULL))),
    CONSTRAINT notifications_kind_check CHECK ((kind = ANY (ARRAY['approval_request'::text, 'approval_progress'::text, 'approval_closed'::text, 'alert'::text, 'message'::text])))
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_cost_delay='0');

-- Name: notifications_id_seq; Type: SEQUENCE

CREATE SEQUENCE public.notifications_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: notifications_id_seq; Type: SEQUENCE OWNED BY

ALTER SEQUENCE public.notifications_id_seq OWNED BY public.notifications.id;

-- Name: passkeys; Type: TABLE

CREATE TABLE public.passkeys (
    credential_id bytea NOT NULL,
    person text NOT NULL,
    person_key text NOT NULL,
    public_key bytea NOT NULL,
    sign_count bigint DEFAULT 0 NOT NULL,
    rp_id text NOT NULL,
    label text,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    last_used_at timestamp with time zone,
    CONSTRAINT passkeys_credential_id_check CHECK (((octet_length(credential_id) >= 1) AND (octet_length(credential_id) <= 1023))),
    CONSTRAINT passkeys_public_key_check CHECK ((octet_length(public_key) <= 4096))
);

-- Name: producer_runs; Type: TABLE

CREATE TABLE public.producer_runs (
    id bigint NOT NULL,
    capability text NOT NULL,
    producer text NOT NULL,
    period text NOT NULL,
    runner text NOT NULL,
    started_at timestamp with time zone DEFAULT now() NOT NULL,
    lease_until timestamp with time zone NOT NULL,
    finished_at timestamp with time zone,
    created integer,
    existing integer,
    report jsonb
);

-- Name: producer_runs_id_seq; Type: SEQUENCE

CREATE SEQUENCE public.producer_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: producer_runs_id_seq; Type: SEQUENCE OWNED BY

ALTER SEQUENCE public.producer_runs_id_seq OWNED BY public.producer_runs.id;

-- Name: reaper_runs; Type: TABLE

CREATE TABLE public.reaper_runs (
    id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    requeued integer NOT NULL,
    orphans_requeued integer NOT NULL,
    failed integer NOT NULL,
    expired integer NOT NULL
);

-- Name: reaper_runs_id_seq; Type: SEQUENCE

CREATE SEQUENCE public.reaper_runs_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: reaper_runs_id_seq; Type: SEQUENCE OWNED BY

ALTER SEQUENCE public.reaper_runs_id_seq OWNED BY public.reaper_runs.id;

-- Name: schema_migrations; Type: TABLE

CREATE TABLE public.schema_migrations (
    version text NOT NULL,
    name text NOT NULL,
    checksum text NOT NULL,
    applied_at timestamp with time zone DEFAULT now() NOT NULL
);

-- Name: signing_links; Type: TABLE

CREATE TABLE public.signing_links (
    name text NOT NULL,
    url text NOT NULL,
    updated_at timestamp with time zone DEFAULT now() NOT NULL,
    CONSTRAINT signing_links_url_check CHECK ((length(url) <= 2000))
);

-- Name: task_events; Type: TABLE

CREATE TABLE public.task_events (
    id bigint NOT NULL,
    task_id bigint NOT NULL,
    at timestamp with time zone DEFAULT now() NOT NULL,
    kind text NOT NULL,
    actor text,
    detail jsonb DEFAULT '{}'::jsonb NOT NULL
)
WITH (autovacuum_vacuum_scale_factor='0.01', autovacuum_vacuum_insert_scale_factor='0.01', autovacuum_vacuum_cost_delay='0');

-- Name: task_events_id_seq; Type: SEQUENCE

CREATE SEQUENCE public.task_events_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: task_events_id_seq; Type: SEQUENCE OWNED BY

ALTER SEQUENCE public.task_events_id_seq OWNED BY public.task_events.id;

-- Name: task_history; Type: VIEW

CREATE VIEW public.task_history AS
 SELECT e.id,
    e.task_id,
    e.at,
    e.kind,
    e.actor,
    e.detail
   FROM public.task_events e
UNION ALL
 SELECT t.enqueued_event_id AS id,
    t.id AS task_id,
    t.created_at AS at,
    'enqueued'::text AS kind,
    t.enqueued_by AS actor,
    jsonb_build_object('to', 'pending', 'dedupe_key', t.dedupe_key) AS detail
   FROM public.tasks t
  WHERE (t.enqueued_event_id IS NOT NULL);

-- Name: task_requests; Type: TABLE

CREATE TABLE public.task_requests (
    task_id bigint NOT NULL,
    capability text NOT NULL,
    key text,
    asked_by text NOT NULL,
    created_at timestamp with time zone DEFAULT now() NOT NULL,
    result jsonb,
    done_by text,
    done_at timestamp with time zone,
    CONSTRAINT task_requests_check CHECK (((done_at IS NULL) = (done_by IS NULL))),
    CONSTRAINT task_requests_key_check CHECK ((key <> ''::text))
);

-- Name: tasks_id_seq; Type: SEQUENCE

CREATE SEQUENCE public.tasks_id_seq
    START WITH 1
    INCREMENT BY 1
    NO MINVALUE
    NO MAXVALUE
    CACHE 1;

-- Name: tasks_id_seq; Type: SEQUENCE OWNED BY

ALTER SEQUENCE public.tasks_id_seq OWNED BY public.tasks.id;

-- Name: approval_attachments id; Type: DEFAULT

ALTER TABLE ONLY public.approval_attachments ALTER COLUMN id SET DEFAULT nextval('public.approval_attachments_id_seq'::regclass);

-- Name: approvals id; Type: DEFAULT

ALTER TABLE ONLY public.approvals ALTER COLUMN id SET DEFAULT nextval('public.approvals_id_seq'::regclass);

-- Name: notifications id; Type: DEFAULT

ALTER TABLE ONLY public.notifications ALTER COLUMN id SET DEFAULT nextval('public.notifications_id_seq'::regclass);

-- Name: producer_runs id; Type: DEFAULT

ALTER TABLE ONLY public.producer_runs ALTER COLUMN id SET DEFAULT nextval('public.producer_runs_id_seq'::regclass);

-- Name: reaper_runs id; Type: DEFAULT

ALTER TABLE ONLY public.reaper_runs ALTER COLUMN id SET DEFAULT nextval('public.reaper_runs_id_seq'::regclass);

-- Name: task_events id; Type: DEFAULT

ALTER TABLE ONLY public.task_events ALTER COLUMN id SET DEFAULT nextval('public.task_events_id_seq'::regclass);

-- Name: tasks id; Type: DEFAULT

ALTER TABLE ONLY public.tasks ALTER COLUMN id SET DEFAULT nextval('public.tasks_id_seq'::regclass);

-- Name: alert_states alert_states_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.alert_states
    ADD CONSTRAINT alert_states_pkey PRIMARY KEY (name);

-- Name: approval_attachments approval_attachments_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.approval_attachments
    ADD CONSTRAINT approval_attachments_pkey PRIMARY KEY (id);

-- Name: approval_votes approval_votes_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.approval_votes
    ADD CONSTRAINT approval_votes_pkey PRIMARY KEY (approval_id, person_key);

-- Name: approvals approvals_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_pkey PRIMARY KEY (id);

-- Name: audit_chain audit_chain_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.audit_chain
    ADD CONSTRAINT audit_chain_pkey PRIMARY KEY (seq);

-- Name: capabilities capabilities_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.capabilities
    ADD CONSTRAINT capabilities_pkey PRIMARY KEY (capability);

-- Name: gated_actions gated_actions_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.gated_actions
    ADD CONSTRAINT gated_actions_pkey PRIMARY KEY (approval_id);

-- Name: leader_leases leader_leases_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.leader_leases
    ADD CONSTRAINT leader_leases_pkey PRIMARY KEY (key);

-- Name: notification_channels notification_channels_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.notification_channels
    ADD CONSTRAINT notification_channels_pkey PRIMARY KEY (name);

-- Name: notification_deliveries notification_deliveries_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.notification_deliveries
    ADD CONSTRAINT notification_deliveries_pkey PRIMARY KEY (notification_id, channel);

-- Name: notifications notifications_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_pkey PRIMARY KEY (id);

-- Name: passkeys passkeys_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.passkeys
    ADD CONSTRAINT passkeys_pkey PRIMARY KEY (credential_id);

-- Name: producer_runs producer_runs_capability_producer_period_key; Type: CONSTRAINT

ALTER TABLE ONLY public.producer_runs
    ADD CONSTRAINT producer_runs_capability_producer_period_key UNIQUE (capability, producer, period);

-- Name: producer_runs producer_runs_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.producer_runs
    ADD CONSTRAINT producer_runs_pkey PRIMARY KEY (id);

-- Name: reaper_runs reaper_runs_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.reaper_runs
    ADD CONSTRAINT reaper_runs_pkey PRIMARY KEY (id);

-- Name: schema_migrations schema_migrations_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.schema_migrations
    ADD CONSTRAINT schema_migrations_pkey PRIMARY KEY (version);

-- Name: signing_links signing_links_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.signing_links
    ADD CONSTRAINT signing_links_pkey PRIMARY KEY (name);

-- Name: task_events task_events_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.task_events
    ADD CONSTRAINT task_events_pkey PRIMARY KEY (id);

-- Name: task_requests task_requests_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.task_requests
    ADD CONSTRAINT task_requests_pkey PRIMARY KEY (task_id);

-- Name: tasks tasks_pkey; Type: CONSTRAINT

ALTER TABLE ONLY public.tasks
    ADD CONSTRAINT tasks_pkey PRIMARY KEY (id);

-- Name: approval_attachments_approval_idx; Type: INDEX

CREATE INDEX approval_attachments_approval_idx ON public.approval_attachments USING btree (approval_id, id);

-- Name: approval_votes_person_idx; Type: INDEX

CREATE INDEX approval_votes_person_idx ON public.approval_votes USING btree (lower(person));

-- Name: approval_votes_seconds_idx; Type: INDEX

CREATE INDEX approval_votes_seconds_idx ON public.approval_votes USING btree (lower(btrim(person)), seconds) INCLUDE (person, decided_at, capability);

-- Name: approvals_answers_idx; Type: INDEX

CREATE INDEX approvals_answers_idx ON public.approvals USING btree (lower(btrim(decided_by)), decide_seconds) INCLUDE (decided_by, decision, decided_at, capability) WHERE ((decided_by IS NOT NULL) AND ((decision = ANY (ARRAY['revised'::text, 'skipped'::text])) OR decided_without_vote));

-- Name: approvals_capability_seconds_idx; Type: INDEX

CREATE INDEX approvals_capability_seconds_idx ON public.approvals USING btree (capability, decide_seconds) INCLUDE (decision, created_at, decided_at);

-- Name: approvals_decided_by_idx; Type: INDEX

CREATE INDEX approvals_decided_by_idx ON public.approvals USING btree (lower(decided_by), task_id);

-- Name: approvals_decided_seconds_idx; Type: INDEX

CREATE INDEX approvals_decided_seconds_idx ON public.approvals USING btree (decide_seconds) INCLUDE (decided_at, capability) WHERE (decision = ANY (ARRAY['approved'::text, 'revised'::text, 'skipped'::text]));

-- Name: approvals_inbox_idx; Type: INDEX

CREATE INDEX approvals_inbox_idx ON public.approvals USING btree (created_at, id) INCLUDE (task_id) WHERE (decision IS NULL);

-- Name: approvals_open_idx; Type: INDEX

CREATE INDEX approvals_open_idx ON public.approvals USING btree (expires_at) WHERE (decision IS NULL);

-- Name: approvals_question_words_idx; Type: INDEX

CREATE INDEX approvals_question_words_idx ON public.approvals USING gin (to_tsvector('simple'::regconfig, question));

-- Name: approvals_sent_idx; Type: INDEX

CREATE INDEX approvals_sent_idx ON public.approvals USING btree (id) WHERE ((reminded_at IS NOT NULL) OR (escalated_at IS NOT NULL));

-- Name: approvals_task_idx; Type: INDEX

CREATE INDEX approvals_task_idx ON public.approvals USING btree (task_id, id);

-- Name: audit_chain_ref_idx; Type: INDEX

CREATE INDEX audit_chain_ref_idx ON public.audit_chain USING btree (ref, seq);

-- Name: gated_actions_task_idx; Type: INDEX

CREATE INDEX gated_actions_task_idx ON public.gated_actions USING btree (task_id);

-- Name: notification_deliveries_due_idx; Type: INDEX

CREATE INDEX notification_deliveries_due_idx ON public.notification_deliveries USING btree (channel, notification_id) WHERE (delivered_at IS NULL);

-- Name: notifications_approval_idx; Type: INDEX

CREATE INDEX notifications_approval_idx ON public.notifications USING btree (approval_id, kind) WHERE (approval_id IS NOT NULL);

-- Name: notifications_closed_once_idx; Type: INDEX

CREATE UNIQUE INDEX notifications_closed_once_idx ON public.notifications USING btree (approval_id) WHERE (kind = 'approval_closed'::text);

-- Name: notifications_task_idx; Type: INDEX

CREATE INDEX notifications_task_idx ON public.notifications USING btree (task_id) WHERE (task_id IS NOT NULL);

-- Name: passkeys_person_idx; Type: INDEX

CREATE INDEX passkeys_person_idx ON public.passkeys USING btree (person_key);

-- Name: producer_runs_finished_idx; Type: INDEX

CREATE INDEX producer_runs_finished_idx ON public.producer_runs USING btree (capability, finished_at) WHERE (finished_at IS NOT NULL);

-- Name: task_events_task_idx; Type: INDEX

CREATE INDEX task_events_task_idx ON public.task_events USING btree (task_id, id);

-- Name: task_requests_key_idx; Type: INDEX

CREATE UNIQUE INDEX task_requests_key_idx ON public.task_requests USING btree (capability, key) WHERE (key IS NOT NULL);

-- Name: tasks_active_idx; Type: INDEX

CREATE INDEX tasks_active_idx ON public.tasks USING btree (capability, status) WHERE (status = ANY (ARRAY['running'::text, 'needs_approval'::text]));

-- Name: tasks_at_rest_capability_idx; Type: INDEX

CREATE INDEX tasks_at_rest_capability_idx ON public.tasks USING btree (capability, created_at, id) WHERE (status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'skipped'::text, 'expired'::text, 'cancelled'::text, 'needs_approval'::text]));

-- Name: tasks_at_rest_created_idx; Type: INDEX

CREATE INDEX tasks_at_rest_created_idx ON public.tasks USING btree (created_at, id) WHERE (status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'skipped'::text, 'expired'::text, 'cancelled'::text, 'needs_approval'::text]));

-- Name: tasks_at_rest_status_idx; Type: INDEX

CREATE INDEX tasks_at_rest_status_idx ON public.tasks USING btree (status, created_at, id) WHERE (status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'skipped'::text, 'expired'::text, 'cancelled'::text, 'needs_approval'::text]));

-- Name: tasks_at_rest_updated_idx; Type: INDEX

CREATE INDEX tasks_at_rest_updated_idx ON public.tasks USING btree (updated_at, id) WHERE (status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'skipped'::text, 'expired'::text, 'cancelled'::text, 'needs_approval'::text]));

-- Name: tasks_at_rest_words_idx; Type: INDEX

CREATE INDEX tasks_at_rest_words_idx ON public.tasks USING gin (jsonb_to_tsvector('simple'::regconfig, payload, '["string", "numeric"]'::jsonb)) WHERE (status = ANY (ARRAY['succeeded'::text, 'failed'::text, 'skipped'::text, 'expired'::text, 'cancelled'::text, 'needs_approval'::text]));

-- Name: tasks_claimable_idx; Type: INDEX

CREATE INDEX tasks_claimable_idx ON public.tasks USING btree (capability, ((status = 'approved'::text)) DESC, priority DESC, id) WHERE (status = ANY (ARRAY['pending'::text, 'approved'::text]));

-- Name: tasks_dedupe_idx; Type: INDEX

CREATE UNIQUE INDEX tasks_dedupe_idx ON public.tasks USING btree (capability, dedupe_key) WHERE ((dedupe_key IS NOT NULL) AND (status = ANY (ARRAY['pending'::text, 'running'::text, 'needs_approval'::text, 'approved'::text, 'succeeded'::text])));

-- Name: tasks_failed_idx; Type: INDEX

CREATE INDEX tasks_failed_idx ON public.tasks USING btree (finished_at) WHERE (status = 'failed'::text);

-- Name: tasks_first_claimed_idx; Type: INDEX

CREATE INDEX tasks_first_claimed_idx ON public.tasks USING btree (capability, first_claimed_at) WHERE (first_claimed_at IS NOT NULL);

-- Name: tasks_held_idx; Type: INDEX

CREATE INDEX tasks_held_idx ON public.tasks USING btree (capability) WHERE ((first_claimed_at IS NOT NULL) AND (status = ANY (ARRAY['pending'::text, 'running'::text, 'needs_approval'::text, 'approved'::text])));

-- Name: tasks_resumable_idx; Type: INDEX

CREATE INDEX tasks_resumable_idx ON public.tasks USING btree (capability, ((status = 'approved'::text)) DESC, priority DESC, id) WHERE ((status = ANY (ARRAY['pending'::text, 'approved'::text])) AND (first_claimed_at IS NOT NULL));

-- Name: approval_votes approval_votes_audit; Type: TRIGGER

CREATE TRIGGER approval_votes_audit AFTER INSERT OR UPDATE ON public.approval_votes FOR EACH ROW EXECUTE FUNCTION public.signoff_audit_votes();

-- Name: approval_votes approval_votes_decider_vote; Type: TRIGGER

CREATE TRIGGER approval_votes_decider_vote AFTER INSERT OR DELETE OR UPDATE OF approval_id, person, person_key ON public.approval_votes FOR EACH ROW EXECUTE FUNCTION public.signoff_vote_decider_vote();

-- Name: approval_votes approval_votes_person_key; Type: TRIGGER

CREATE TRIGGER approval_votes_person_key BEFORE INSERT ON public.approval_votes FOR EACH ROW EXECUTE FUNCTION public.signoff_vote_person_key();

-- Name: approval_votes approval_votes_times; Type: TRIGGER

CREATE TRIGGER approval_votes_times BEFORE INSERT OR UPDATE OF approval_id, decided_at ON public.approval_votes FOR EACH ROW EXECUTE FUNCTION public.signoff_vote_times();

-- Name: approvals approvals_approved_needs_votes; Type: TRIGGER

CREATE TRIGGER approvals_approved_needs_votes BEFORE INSERT OR UPDATE OF decision, required ON public.approvals FOR EACH ROW EXECUTE FUNCTION public.signoff_approval_needs_votes();

-- Name: approvals approvals_audit; Type: TRIGGER

CREATE TRIGGER approvals_audit AFTER UPDATE OF decision ON public.approvals FOR EACH ROW EXECUTE FUNCTION public.signoff_audit_approvals();

-- Name: approvals approvals_capability; Type: TRIGGER

CREATE TRIGGER approvals_capability BEFORE INSERT ON public.approvals FOR EACH ROW EXECUTE FUNCTION public.signoff_approval_capability();

-- Name: approvals approvals_decided; Type: TRIGGER

CREATE TRIGGER approvals_decided AFTER UPDATE OF decision ON public.approvals FOR EACH ROW WHEN (((old.decision IS NULL) AND (new.decision IS NOT NULL))) EXECUTE FUNCTION public.signoff_approval_decided();

-- Name: approvals approvals_decider_vote; Type: TRIGGER

CREATE TRIGGER approvals_decider_vote BEFORE INSERT OR UPDATE OF decision, decided_by ON public.approvals FOR EACH ROW EXECUTE FUNCTION public.signoff_approval_decider_vote();

-- Name: approvals approvals_requested; Type: TRIGGER

CREATE TRIGGER approvals_requested AFTER INSERT ON public.approvals FOR EACH ROW EXECUTE FUNCTION public.signoff_approval_requested();

-- Name: approvals approvals_votes_follow; Type: TRIGGER

CREATE TRIGGER approvals_votes_follow AFTER UPDATE OF created_at, capability ON public.approvals FOR EACH ROW WHEN (((old.created_at IS DISTINCT FROM new.created_at) OR (old.capability IS DISTINCT FROM new.capability))) EXECUTE FUNCTION public.signoff_approval_votes_follow();

-- Name: gated_actions gated_actions_audit; Type: TRIGGER

CREATE TRIGGER gated_actions_audit AFTER INSERT OR DELETE OR UPDATE ON public.gated_actions FOR EACH ROW EXECUTE FUNCTION public.signoff_audit_actions();

-- Name: notifications notifications_fan_out; Type: TRIGGER

CREATE TRIGGER notifications_fan_out AFTER INSERT ON public.notifications FOR EACH ROW EXECUTE FUNCTION public.signoff_notification_fan_out();

-- Name: task_events task_events_append_only; Type: TRIGGER

CREATE TRIGGER task_events_append_only BEFORE UPDATE ON public.task_events FOR EACH ROW EXECUTE FUNCTION public.signoff_events_append_only();

-- Name: tasks tasks_enqueued_append_only; Type: TRIGGER

CREATE TRIGGER tasks_enqueued_append_only BEFORE UPDATE OF enqueued_event_id, enqueued_by ON public.tasks FOR EACH ROW WHEN (((old.enqueued_event_id IS NOT NULL) AND ((new.enqueued_event_id IS DISTINCT FROM old.enqueued_event_id) OR (new.enqueued_by IS DISTINCT FROM old.enqueued_by)))) EXECUTE FUNCTION public.signoff_enqueued_append_only();

-- Name: tasks tasks_parked_left; Type: TRIGGER

CREATE TRIGGER tasks_parked_left AFTER UPDATE OF status ON public.tasks FOR EACH ROW WHEN (((old.status = 'needs_approval'::text) AND (new.status <> 'needs_approval'::text))) EXECUTE FUNCTION public.signoff_parked_task_left();

-- Name: tasks tasks_touch_updated_at; Type: TRIGGER

CREATE TRIGGER tasks_touch_updated_at BEFORE UPDATE ON public.tasks FOR EACH ROW EXECUTE FUNCTION public.signoff_touch_updated_at();

-- Name: approval_attachments approval_attachments_approval_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.approval_attachments
    ADD CONSTRAINT approval_attachments_approval_id_fkey FOREIGN KEY (approval_id) REFERENCES public.approvals(id) ON DELETE CASCADE;

-- Name: approval_votes approval_votes_approval_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.approval_votes
    ADD CONSTRAINT approval_votes_approval_id_fkey FOREIGN KEY (approval_id) REFERENCES public.approvals(id) ON DELETE CASCADE;

-- Name: approvals approvals_task_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.approvals
    ADD CONSTRAINT approvals_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.tasks(id) ON DELETE CASCADE;

-- Name: gated_actions gated_actions_approval_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.gated_actions
    ADD CONSTRAINT gated_actions_approval_id_fkey FOREIGN KEY (approval_id) REFERENCES public.approvals(id) ON DELETE CASCADE;

-- Name: gated_actions gated_actions_task_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.gated_actions
    ADD CONSTRAINT gated_actions_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.tasks(id) ON DELETE CASCADE;

-- Name: notification_deliveries notification_deliveries_channel_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.notification_deliveries
    ADD CONSTRAINT notification_deliveries_channel_fkey FOREIGN KEY (channel) REFERENCES public.notification_channels(name) ON DELETE CASCADE;

-- Name: notification_deliveries notification_deliveries_notification_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.notification_deliveries
    ADD CONSTRAINT notification_deliveries_notification_id_fkey FOREIGN KEY (notification_id) REFERENCES public.notifications(id) ON DELETE CASCADE;

-- Name: notifications notifications_approval_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_approval_id_fkey FOREIGN KEY (approval_id) REFERENCES public.approvals(id) ON DELETE CASCADE;

-- Name: notifications notifications_task_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.notifications
    ADD CONSTRAINT notifications_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.tasks(id) ON DELETE CASCADE;

-- Name: task_events task_events_task_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.task_events
    ADD CONSTRAINT task_events_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.tasks(id) ON DELETE CASCADE;

-- Name: task_requests task_requests_task_id_fkey; Type: FK CONSTRAINT

ALTER TABLE ONLY public.task_requests
    ADD CONSTRAINT task_requests_task_id_fkey FOREIGN KEY (task_id) REFERENCES public.tasks(id) ON DELETE CASCADE;
