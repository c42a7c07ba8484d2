-- A tamper-evident record of who decided (issue 39): every decision, approve and gated
-- action is appended, by the triggers below, to a hash chain. Each record stores the
-- SHA-256 of its own content together with the previous record's hash:
--   hash = sha256(prev_hash || '\n' || seq || '\n' || kind || '\n' || ref || '\n' || content)
-- `signoff audit verify` (taskqueue/maintenance/audit.py) recomputes it and compares the
-- live rows the queue acts on with the chain's latest record of each.
--
-- Appends are serialized by one transaction-level advisory lock, so `seq` has no gaps and
-- each record names the one before it as committed. Only the moves Signoff itself makes are
-- recorded: a decision once (NULL -> a decision), an approve's insert and its uncount
-- (true -> false), a gated action's start, restart (attempts + 1), finish and the drop of an
-- unfinished one. Any other change of those rows, made with SQL (triggers on or off), is
-- not recorded, so verify finds the live row differs from the chain.
CREATE TABLE audit_chain (
    seq       bigint PRIMARY KEY,
    at        timestamptz NOT NULL DEFAULT clock_timestamp(),
    kind      text NOT NULL,
    ref       text NOT NULL,
    content   text NOT NULL,
    prev_hash text NOT NULL,
    hash      text NOT NULL
);
CREATE INDEX audit_chain_ref_idx ON audit_chain (ref, seq);

-- What a record says of each live row: one function per table, used by the triggers and
-- by verify, so both describe a row the same way (times in UTC, whatever the session's
-- TimeZone).
CREATE FUNCTION signoff_audit_time(t timestamptz) RETURNS text LANGUAGE sql STABLE AS $$
    SELECT to_char(t AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"')
$$;

CREATE FUNCTION signoff_audit_decision(a approvals) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('approval_id', a.id, 'task_id', a.task_id,
                              'decision', a.decision, 'decided_by', a.decided_by,
                              'decided_via', a.decided_via, 'decided_at', signoff_audit_time(a.decided_at),
                              'required', a.required)
$$;

CREATE FUNCTION signoff_audit_vote(v approval_votes) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('approval_id', v.approval_id, 'person', v.person,
                              'person_key', v.person_key, 'decided_at', signoff_audit_time(v.decided_at),
                              'counts', v.counts, 'via', v.via)
$$;

CREATE FUNCTION signoff_audit_action(g gated_actions) RETURNS jsonb LANGUAGE sql STABLE AS $$
    SELECT jsonb_build_object('approval_id', g.approval_id, 'task_id', g.task_id,
                              'kind', g.kind, 'fingerprint', g.fingerprint,
                              'idempotency_key', g.idempotency_key,
                              'approved_by', g.approved_by, 'attempts', g.attempts,
                              'started_at', signoff_audit_time(g.started_at), 'settled_by', g.settled_by,
                              'finished_at', signoff_audit_time(g.finished_at), 'result', g.result)
$$;

CREATE FUNCTION signoff_audit_append(p_kind text, p_ref text, p_content jsonb)
RETURNS void LANGUAGE plpgsql AS $$
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

CREATE FUNCTION signoff_audit_approvals() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF OLD.decision IS NULL AND NEW.decision IS NOT NULL THEN
        PERFORM signoff_audit_append('decision', 'approval:' || NEW.id,
                                     signoff_audit_decision(NEW));
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER approvals_audit AFTER UPDATE OF decision ON approvals
    FOR EACH ROW EXECUTE FUNCTION signoff_audit_approvals();

CREATE FUNCTION signoff_audit_votes() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER approval_votes_audit AFTER INSERT OR UPDATE ON approval_votes
    FOR EACH ROW EXECUTE FUNCTION signoff_audit_votes();

CREATE FUNCTION signoff_audit_actions() RETURNS trigger LANGUAGE plpgsql AS $$
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
CREATE TRIGGER gated_actions_audit AFTER INSERT OR UPDATE OR DELETE ON gated_actions
    FOR EACH ROW EXECUTE FUNCTION signoff_audit_actions();

-- What was decided before this migration starts the chain, oldest first.
SELECT signoff_audit_append(kind, ref, content) FROM (
    SELECT 'decision' AS kind, 'approval:' || a.id AS ref, signoff_audit_decision(a) AS content,
           a.decided_at AS at, 1 AS o
    FROM approvals a WHERE a.decision IS NOT NULL
    UNION ALL
    SELECT 'approve', 'vote:' || v.approval_id || ':' || v.person_key, signoff_audit_vote(v),
           v.decided_at, 0
    FROM approval_votes v
    UNION ALL
    SELECT 'action_started', 'action:' || g.approval_id, signoff_audit_action(g),
           g.started_at, 2
    FROM gated_actions g
) existing ORDER BY at, o, ref;
