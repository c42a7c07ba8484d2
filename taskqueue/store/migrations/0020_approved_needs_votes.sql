-- The database keeps the four-eyes rule itself: an approval becomes 'approved' only with
-- `required` counted approves in approval_votes (the requester's own, counts = false, is
-- not one). A client that predates four-eyes (it sets the decision without recording a
-- vote), a bug or a hand-made UPDATE is refused with check_violation, and the transaction
-- that would have resumed the task rolls back with it. The decision's own transaction
-- writes the vote before the decision (approval_decide runs after decision_vote_insert),
-- so the trigger sees it. Counting rows of approval_votes as it is, the rule composes
-- with any later migration that adds columns to it.
CREATE FUNCTION signoff_approval_needs_votes() RETURNS trigger
LANGUAGE plpgsql AS $$
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

CREATE TRIGGER approvals_approved_needs_votes
    BEFORE INSERT OR UPDATE OF decision, required ON approvals
    FOR EACH ROW EXECUTE FUNCTION signoff_approval_needs_votes();
