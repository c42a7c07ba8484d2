-- The notification outbox: what the queue owes to people, recorded in the same
-- transaction as the change that causes it, and delivered by channels (a chat bot, a web
-- inbox) that claim, deliver and mark each notification through the public API.
-- (Version 0002 is not used by the core: a delivery channel owns its own tables and
-- migrations, applied under its own name.)

-- A channel registers once (TaskQueue.notification_channel_register); every later
-- notification is owed to every registered channel.
CREATE TABLE notification_channels (
    name          text PRIMARY KEY CHECK (name ~ '^[a-z][a-z0-9_.-]{0,62}$'),
    registered_at timestamptz NOT NULL DEFAULT now()
);

-- Kinds:
--   approval_request  a parked task's question (written with the approval)
--   approval_closed   that question is settled: decided, expired, cancelled or superseded
--                     (body.outcome); at most one per approval
--   alert             a health signal changed state (body.name, body.firing, figures)
--   message           free-form text any workload sends (body.subject, body.text, body.html)
CREATE TABLE notifications (
    id          bigserial PRIMARY KEY,
    kind        text NOT NULL CHECK (kind IN ('approval_request', 'approval_closed', 'alert',
                                              'message')),
    task_id     bigint REFERENCES tasks (id) ON DELETE CASCADE,
    approval_id bigint REFERENCES approvals (id) ON DELETE CASCADE,
    body        jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at  timestamptz NOT NULL DEFAULT now(),
    CHECK ((kind IN ('approval_request', 'approval_closed')) = (approval_id IS NOT NULL))
);

CREATE UNIQUE INDEX notifications_closed_once_idx ON notifications (approval_id)
    WHERE kind = 'approval_closed';
CREATE INDEX notifications_approval_idx ON notifications (approval_id, kind)
    WHERE approval_id IS NOT NULL;

-- One row per (notification, channel). A sender claims rows with SKIP LOCKED under a
-- short claim lease it renews while it works, so a dead sender's rows are owed again
-- within seconds; it records only what it still holds (claimed_by is its fence).
CREATE TABLE notification_deliveries (
    notification_id bigint NOT NULL REFERENCES notifications (id) ON DELETE CASCADE,
    channel         text NOT NULL REFERENCES notification_channels (name) ON DELETE CASCADE,
    claimed_by      text,
    claim_until     timestamptz,
    attempts        integer NOT NULL DEFAULT 0,
    next_attempt_at timestamptz NOT NULL DEFAULT now(),
    last_error      text,
    delivered_at    timestamptz,
    receipt         jsonb,
    PRIMARY KEY (notification_id, channel)
);

CREATE INDEX notification_deliveries_due_idx ON notification_deliveries (channel, notification_id)
    WHERE delivered_at IS NULL;

CREATE FUNCTION signoff_notification_fan_out() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notification_deliveries (notification_id, channel)
    SELECT NEW.id, name FROM notification_channels;
    PERFORM pg_notify('signoff_notifications', NEW.id::text);
    RETURN NEW;
END $$;

CREATE TRIGGER notifications_fan_out AFTER INSERT ON notifications
    FOR EACH ROW EXECUTE FUNCTION signoff_notification_fan_out();

-- A new question owes a request; the task's previous question, if still open, is
-- superseded by it.
CREATE FUNCTION signoff_approval_requested() RETURNS trigger LANGUAGE plpgsql AS $$
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

CREATE TRIGGER approvals_requested AFTER INSERT ON approvals
    FOR EACH ROW EXECUTE FUNCTION signoff_approval_requested();

-- A decision or an expiry closes the question.
CREATE FUNCTION signoff_approval_decided() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notifications (kind, task_id, approval_id, body)
    VALUES ('approval_closed', NEW.task_id, NEW.id, jsonb_build_object('outcome', NEW.decision))
    ON CONFLICT (approval_id) WHERE kind = 'approval_closed' DO NOTHING;
    RETURN NEW;
END $$;

CREATE TRIGGER approvals_decided AFTER UPDATE OF decision ON approvals
    FOR EACH ROW WHEN (OLD.decision IS NULL AND NEW.decision IS NOT NULL)
    EXECUTE FUNCTION signoff_approval_decided();

-- A task that leaves needs_approval without a decision (an operator's cancel) closes
-- its open question too.
CREATE FUNCTION signoff_parked_task_left() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO notifications (kind, task_id, approval_id, body)
    SELECT 'approval_closed', a.task_id, a.id, jsonb_build_object('outcome', NEW.status)
    FROM approvals a
    WHERE a.task_id = NEW.id AND a.decision IS NULL
    ON CONFLICT (approval_id) WHERE kind = 'approval_closed' DO NOTHING;
    RETURN NEW;
END $$;

CREATE TRIGGER tasks_parked_left AFTER UPDATE OF status ON tasks
    FOR EACH ROW WHEN (OLD.status = 'needs_approval' AND NEW.status <> 'needs_approval')
    EXECUTE FUNCTION signoff_parked_task_left();

-- The last announced state of each alert, so an alert and its recovery are recorded
-- once per change, and a restart does not announce again.
CREATE TABLE alert_states (
    name       text PRIMARY KEY,
    firing     boolean NOT NULL DEFAULT false,
    changed_at timestamptz NOT NULL DEFAULT now()
);

-- Producer runs: one row per (capability, producer, period). A period that finished is
-- done: firing again (a restart, a second instance, `signoff produce`) runs nothing and
-- writes no second report. A run that died part way is taken over once its lease lapsed.
CREATE TABLE producer_runs (
    id          bigserial PRIMARY KEY,
    capability  text NOT NULL,
    producer    text NOT NULL,
    period      text NOT NULL,
    runner      text NOT NULL,
    started_at  timestamptz NOT NULL DEFAULT now(),
    lease_until timestamptz NOT NULL,
    finished_at timestamptz,
    created     integer,
    existing    integer,
    report      jsonb,
    UNIQUE (capability, producer, period)
);

CREATE INDEX producer_runs_finished_idx ON producer_runs (capability, finished_at)
    WHERE finished_at IS NOT NULL;

-- Questions already open when this migration runs are owed a request too.
INSERT INTO notifications (kind, task_id, approval_id)
SELECT 'approval_request', a.task_id, a.id
FROM approvals a JOIN tasks t ON t.id = a.task_id
WHERE a.decision IS NULL AND t.status = 'needs_approval'
  AND NOT EXISTS (SELECT 1 FROM approvals n WHERE n.task_id = a.task_id AND n.id > a.id);
