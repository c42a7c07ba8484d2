-- People are the one identity (issue 39): a person's name is compared case-folded and
-- trimmed everywhere, so `alice` and `ALICE` are one person. An approve's row keeps the
-- spelling it was written with (`person`, what every channel shows) and is keyed by the
-- folded name (`person_key`, written by the API: Python's str.casefold of the trimmed name).
-- Existing approves of one request that differ only in case are merged here, keeping the
-- earliest; this migration folds them with lower(btrim()), the same as casefold for every
-- name a person can be configured with ([people.NAME]: ASCII letters, digits, _ . -).
ALTER TABLE approval_votes ADD COLUMN person_key text;
UPDATE approval_votes SET person_key = lower(btrim(person));
DELETE FROM approval_votes v
USING approval_votes w
WHERE v.approval_id = w.approval_id AND v.person_key = w.person_key
  AND (w.decided_at, w.person) < (v.decided_at, v.person);
ALTER TABLE approval_votes ALTER COLUMN person_key SET NOT NULL;
ALTER TABLE approval_votes DROP CONSTRAINT approval_votes_pkey;
ALTER TABLE approval_votes ADD PRIMARY KEY (approval_id, person_key);

-- A row written without the key (by hand, or by an older client) gets the same fold.
CREATE FUNCTION signoff_vote_person_key() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.person_key := COALESCE(NEW.person_key, lower(btrim(NEW.person)));
    RETURN NEW;
END $$;
CREATE TRIGGER approval_votes_person_key BEFORE INSERT ON approval_votes
    FOR EACH ROW EXECUTE FUNCTION signoff_vote_person_key();

-- Who typed a decision, beside the person it names: the CLI records `cli:USER@HOST`
-- (a claimed name and the OS account that claimed it). NULL: the channel's own identity is
-- the proof (a chat channel's user id, a web session).
ALTER TABLE approval_votes ADD COLUMN via text;
ALTER TABLE approvals ADD COLUMN decided_via text;
