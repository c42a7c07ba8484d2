-- The time to decide kept on the rows it belongs to, in the orders `signoff stats
-- --decisions` reads it (issue 44). At a million decisions the report sorted every time
-- three ways (per capability, in total, per person), joined every vote to its approval for
-- the request's time and capability, and hashed every approve against the votes to find an
-- approve whose decider has no vote: 2.3 s. With the times on the rows and indexed by
-- (group, time), each group's percentiles read one index range that arrives sorted.
--
-- approvals.decide_seconds: decided_at - created_at in seconds, computed by the server (a
-- generated column: no writer can give one that disagrees).
ALTER TABLE approvals
    ADD COLUMN decide_seconds float8
        GENERATED ALWAYS AS (EXTRACT(EPOCH FROM decided_at - created_at)::float8) STORED,
    -- An approve whose decider has no vote of their own on it (an approve older than the
    -- votes table, or a row edited by hand): the report counts it as the decider's answer.
    -- Kept by the triggers below whenever the decision, the decider or the votes change.
    ADD COLUMN decided_without_vote boolean NOT NULL DEFAULT false;

-- Whether a moment is in the window [since, until), a NULL bound open. An SQL function the
-- planner writes in place, where a NULL bound folds to true: `signoff stats --decisions`
-- with no window compares nothing.
CREATE FUNCTION signoff_within(p_at timestamptz, p_since timestamptz, p_until timestamptz)
    RETURNS boolean
    LANGUAGE sql IMMUTABLE
    AS $$
    SELECT (p_since IS NULL OR p_at >= p_since) AND (p_until IS NULL OR p_at < p_until)
$$;

-- A vote's time from the request to this person's approve, and the request's capability:
-- copies of the approval's, kept in step by the triggers below (a request's created_at and
-- capability never change in the queue's own statements; a hand edit is followed too).
-- Nullable: a row written with the triggers off (session_replication_role = replica, as
-- the audit's own tests forge one) has none, and counts as an approve without a time.
ALTER TABLE approval_votes
    ADD COLUMN seconds float8,
    ADD COLUMN capability text;

CREATE FUNCTION signoff_vote_times() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT EXTRACT(EPOCH FROM NEW.decided_at - a.created_at)::float8, a.capability
    INTO NEW.seconds, NEW.capability
    FROM approvals a WHERE a.id = NEW.approval_id;
    RETURN NEW;
END
$$;

CREATE TRIGGER approval_votes_times BEFORE INSERT OR UPDATE OF approval_id, decided_at
    ON approval_votes FOR EACH ROW EXECUTE FUNCTION signoff_vote_times();

-- The request's votes written again from it: naming decided_at runs approval_votes_times
-- on each, the one place that writes a vote's copy.
CREATE FUNCTION signoff_approval_votes_follow() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    UPDATE approval_votes v SET decided_at = v.decided_at WHERE v.approval_id = NEW.id;
    RETURN NULL;
END
$$;

CREATE TRIGGER approvals_votes_follow AFTER UPDATE OF created_at, capability ON approvals
    FOR EACH ROW WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at
                       OR OLD.capability IS DISTINCT FROM NEW.capability)
    EXECUTE FUNCTION signoff_approval_votes_follow();

-- Whether an approval is an approve without its decider's vote, as of now. The vote is the
-- decider's by its key (Python's casefold of the name, migration 0013) or by the report's
-- fold of its spelling, lower(btrim()): the two differ for a name such as `Straße`, whose
-- approve the report would otherwise count twice (once as the vote, once as the decider's).
CREATE FUNCTION signoff_decided_without_vote(p_approval bigint, p_decision text,
                                             p_decided_by text) RETURNS boolean
    LANGUAGE sql STABLE
    AS $$
    SELECT p_decision = 'approved' AND p_decided_by IS NOT NULL
       AND NOT EXISTS (SELECT 1 FROM approval_votes v
                       WHERE v.approval_id = p_approval
                         AND (v.person_key = lower(btrim(p_decided_by))
                              OR lower(btrim(v.person)) = lower(btrim(p_decided_by))))
$$;

CREATE FUNCTION signoff_approval_decider_vote() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    NEW.decided_without_vote :=
        signoff_decided_without_vote(NEW.id, NEW.decision, NEW.decided_by);
    RETURN NEW;
END
$$;

CREATE TRIGGER approvals_decider_vote BEFORE INSERT OR UPDATE OF decision, decided_by
    ON approvals FOR EACH ROW EXECUTE FUNCTION signoff_approval_decider_vote();

-- A vote written, moved or deleted after its approval was decided (by hand: the queue
-- writes an approve's vote before the decision) re-reads the approval's mark. While the
-- approval is open, or once it is deleted (prune), the UPDATE finds no row to change.
CREATE FUNCTION signoff_vote_decider_vote() RETURNS trigger
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

CREATE TRIGGER approval_votes_decider_vote
    AFTER INSERT OR DELETE OR UPDATE OF approval_id, person, person_key ON approval_votes
    FOR EACH ROW EXECUTE FUNCTION signoff_vote_decider_vote();

-- The rows written before this migration. Naming a vote's decided_at runs
-- approval_votes_times on it (1.6 s more than a join at 750,000 votes, for one place that
-- writes the copy); the votes' audit trigger runs and records nothing (it records an
-- approve made uncounted, migration 0015). The approvals' UPDATE names no column a trigger
-- watches.
UPDATE approval_votes SET decided_at = decided_at;

UPDATE approvals a SET decided_without_vote = true
WHERE a.decision = 'approved' AND a.decided_by IS NOT NULL
  AND signoff_decided_without_vote(a.id, a.decision, a.decided_by);

-- The report's orders. A capability's requests with their times (open ones last: NULL);
-- every decision by its time (the total); a person's answers by time: their votes, and the
-- revises, skips and approves without a vote decided in their name, a person being
-- lower(btrim()) of the name written (the report's fold since issue 39). INCLUDE holds
-- what the window and the filters read, so each is read from the index alone.
CREATE INDEX approvals_capability_seconds_idx ON approvals (capability, decide_seconds)
    INCLUDE (decision, created_at, decided_at);
CREATE INDEX approvals_decided_seconds_idx ON approvals (decide_seconds)
    INCLUDE (decided_at, capability)
    WHERE decision IN ('approved', 'revised', 'skipped');
CREATE INDEX approvals_answers_idx ON approvals (lower(btrim(decided_by)), decide_seconds)
    INCLUDE (decided_by, decision, decided_at, capability)
    WHERE decided_by IS NOT NULL
      AND (decision IN ('revised', 'skipped') OR decided_without_vote);
CREATE INDEX approval_votes_seconds_idx ON approval_votes (lower(btrim(person)), seconds)
    INCLUDE (person, decided_at, capability);
-- The few requests a reminder or an escalation went out for (their events are counted).
CREATE INDEX approvals_sent_idx ON approvals (id)
    WHERE reminded_at IS NOT NULL OR escalated_at IS NOT NULL;
