-- A question's capability on its own row (issue 44): `signoff stats --decisions` and the
-- decision metrics group approvals by capability, and read it from the task, one probe of
-- tasks_pkey per approval; at a million decisions those probes were a third of the report's
-- time (1.3 of 4 s). A task's capability never changes, so the copy cannot drift. A BEFORE
-- INSERT trigger fills it from the task, whoever inserts the approval (the park, `signoff
-- ask`, a script): no caller can give one that disagrees.
ALTER TABLE approvals ADD COLUMN capability text;

CREATE FUNCTION signoff_approval_capability() RETURNS trigger
    LANGUAGE plpgsql
    AS $$
BEGIN
    SELECT t.capability INTO NEW.capability FROM tasks t WHERE t.id = NEW.task_id;
    RETURN NEW;
END
$$;

CREATE TRIGGER approvals_capability BEFORE INSERT ON approvals
    FOR EACH ROW EXECUTE FUNCTION signoff_approval_capability();

-- The questions asked before this migration (it names no decision column: the triggers on
-- a decision do not fire).
UPDATE approvals a SET capability = t.capability FROM tasks t WHERE t.id = a.task_id;

ALTER TABLE approvals ALTER COLUMN capability SET NOT NULL;
