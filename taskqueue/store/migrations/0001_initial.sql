-- Signoff's initial schema: tasks, approvals and their attachments, the audit log,
-- per-capability settings and the reaper's run log. Tables live in the connection's
-- default schema (search_path), so tests and tenants can each have their own.

-- Per-capability settings. A capability with no row has no caps and the defaults below.
CREATE TABLE capabilities (
    capability           text PRIMARY KEY,
    max_running          integer CHECK (max_running >= 0),
    max_parked           integer CHECK (max_parked >= 0),
    daily_new            integer CHECK (daily_new >= 0),
    day_timezone         text NOT NULL DEFAULT 'UTC',
    lease_seconds        integer NOT NULL DEFAULT 300 CHECK (lease_seconds > 0),
    approval_ttl_seconds integer NOT NULL DEFAULT 172800 CHECK (approval_ttl_seconds > 0),
    max_attempts         integer NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
    retry_base_seconds   integer NOT NULL DEFAULT 30 CHECK (retry_base_seconds >= 0),
    updated_at           timestamptz NOT NULL DEFAULT now()
);

-- Task statuses; who moves a task in and out of each is documented in taskqueue/states.py.
CREATE TABLE tasks (
    id               bigserial PRIMARY KEY,
    capability       text NOT NULL CHECK (capability <> ''),
    status           text NOT NULL DEFAULT 'pending' CHECK (status IN (
                         'pending', 'running', 'needs_approval', 'approved',
                         'succeeded', 'failed', 'skipped', 'expired', 'cancelled')),
    priority         integer NOT NULL DEFAULT 0,
    payload          jsonb NOT NULL DEFAULT '{}'::jsonb,
    state            jsonb NOT NULL DEFAULT '{}'::jsonb,
    result           jsonb,
    last_error       text,
    attempts         integer NOT NULL DEFAULT 0 CHECK (attempts >= 0),
    max_attempts     integer NOT NULL DEFAULT 3 CHECK (max_attempts > 0),
    run_after        timestamptz NOT NULL DEFAULT now(),
    dedupe_key       text,
    worker           text,
    claim_token      uuid,
    lease_expires_at timestamptz,
    created_at       timestamptz NOT NULL DEFAULT now(),
    updated_at       timestamptz NOT NULL DEFAULT now(),
    first_claimed_at timestamptz,
    finished_at      timestamptz
);

-- The claim's scan: only claimable rows are indexed, in the claim's own order, so
-- millions of finished rows cost nothing.
CREATE INDEX tasks_claimable_idx ON tasks
    (capability, (status = 'approved') DESC, priority DESC, id)
    WHERE status IN ('pending', 'approved');

-- The caps' counts (running, parked) and the reaper's scan of running rows.
CREATE INDEX tasks_active_idx ON tasks (capability, status)
    WHERE status IN ('running', 'needs_approval');

-- daily_new counts today's first claims per capability.
CREATE INDEX tasks_first_claimed_idx ON tasks (capability, first_claimed_at)
    WHERE first_claimed_at IS NOT NULL;

-- Dedupe: one unfinished-or-succeeded task per (capability, key). Failed, skipped,
-- expired and cancelled tasks give their key back.
CREATE UNIQUE INDEX tasks_dedupe_idx ON tasks (capability, dedupe_key)
    WHERE dedupe_key IS NOT NULL
      AND status IN ('pending', 'running', 'needs_approval', 'approved', 'succeeded');

CREATE INDEX tasks_failed_idx ON tasks (finished_at) WHERE status = 'failed';

-- updated_at is kept by the database so hand-written updates (the kind that once
-- left a NULL lease behind) still age correctly for the reaper.
CREATE FUNCTION signoff_touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := now();
    RETURN NEW;
END $$;

CREATE TRIGGER tasks_touch_updated_at BEFORE UPDATE ON tasks
    FOR EACH ROW EXECUTE FUNCTION signoff_touch_updated_at();

CREATE TABLE approvals (
    id          bigserial PRIMARY KEY,
    task_id     bigint NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    question    text NOT NULL CHECK (question <> ''),
    request     jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    decision    text CHECK (decision IN ('approved', 'revised', 'skipped', 'expired')),
    decided_by  text,
    decided_at  timestamptz,
    note        text,
    CHECK ((decision IS NULL) = (decided_at IS NULL))
);

CREATE INDEX approvals_task_idx ON approvals (task_id, id);
CREATE INDEX approvals_open_idx ON approvals (expires_at) WHERE decision IS NULL;

-- Evidence for a question. Bytes stay in Postgres: one backup holds everything, and
-- the size limit is enforced by the API before the insert.
CREATE TABLE approval_attachments (
    id           bigserial PRIMARY KEY,
    approval_id  bigint NOT NULL REFERENCES approvals (id) ON DELETE CASCADE,
    filename     text NOT NULL,
    content_type text NOT NULL,
    size_bytes   integer NOT NULL,
    sha256       text NOT NULL,
    data         bytea NOT NULL
);

CREATE INDEX approval_attachments_approval_idx ON approval_attachments (approval_id, id);

-- Append-only audit log: every change the API makes writes one row in the same
-- transaction.
CREATE TABLE task_events (
    id      bigserial PRIMARY KEY,
    task_id bigint NOT NULL REFERENCES tasks (id) ON DELETE CASCADE,
    at      timestamptz NOT NULL DEFAULT now(),
    kind    text NOT NULL,
    actor   text,
    detail  jsonb NOT NULL DEFAULT '{}'::jsonb
);

CREATE INDEX task_events_task_idx ON task_events (task_id, id);

CREATE FUNCTION signoff_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'task_events is append-only';
END $$;

CREATE TRIGGER task_events_append_only BEFORE UPDATE ON task_events
    FOR EACH ROW EXECUTE FUNCTION signoff_events_append_only();

-- One row per reaper run, so signals can say when it last ran and what it did.
CREATE TABLE reaper_runs (
    id               bigserial PRIMARY KEY,
    at               timestamptz NOT NULL DEFAULT now(),
    requeued         integer NOT NULL,
    orphans_requeued integer NOT NULL,
    failed           integer NOT NULL,
    expired          integer NOT NULL
);
