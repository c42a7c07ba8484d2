-- Four-eyes approvals: how many distinct people must approve a request (per capability and
-- per approval), and each person's approve of a request (one row per person: the same
-- person approving twice counts once). The approval's decision becomes 'approved' only when
-- enough distinct people approved it (see docs/semantics.md, "Four-eyes approvals").
ALTER TABLE capabilities
    ADD COLUMN required_approvals integer NOT NULL DEFAULT 1
        CHECK (required_approvals BETWEEN 1 AND 10);

ALTER TABLE approvals
    ADD COLUMN required integer NOT NULL DEFAULT 1 CHECK (required BETWEEN 1 AND 10);

CREATE TABLE approval_votes (
    approval_id bigint NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
    person      text NOT NULL,
    decided_at  timestamptz NOT NULL DEFAULT now(),
    -- false: the requester's own approve, recorded but not counted toward `required`.
    counts      boolean NOT NULL DEFAULT true,
    PRIMARY KEY (approval_id, person)
);

-- Approves decided before this migration: their one approve, so `approvals` lists it.
INSERT INTO approval_votes (approval_id, person, decided_at)
SELECT id, decided_by, COALESCE(decided_at, created_at) FROM approvals
WHERE decision = 'approved' AND decided_by IS NOT NULL
ON CONFLICT DO NOTHING;

-- Who may decide a capability's approvals (NULL: everyone a channel lets in), and its
-- reminder and escalation (taskqueue/maintenance/reminders.py): after remind_after_seconds
-- unanswered one reminder, after escalate_after_seconds the escalate_to people too.
ALTER TABLE capabilities
    ADD COLUMN approvers text[],
    ADD COLUMN remind_after_seconds integer CHECK (remind_after_seconds > 0),
    ADD COLUMN escalate_after_seconds integer CHECK (escalate_after_seconds > 0),
    ADD COLUMN escalate_to text[] NOT NULL DEFAULT '{}';

-- When the reminder and the escalation of an open approval went out (once each).
ALTER TABLE approvals
    ADD COLUMN reminded_at timestamptz,
    ADD COLUMN escalated_at timestamptz;
