-- Requests asked from outside a worker (TaskQueue.request_park: the HTTP API, `signoff
-- ask`, the MCP server, TaskQueue.ask): a task parked at birth, with no worker. This row
-- marks the task as asked, holds the asker's idempotency key (kept whatever the task's
-- status, so the same key always finds the same request) and, once the asker reports
-- its gated action done, the result it reported.
CREATE TABLE task_requests (
    task_id    bigint PRIMARY KEY REFERENCES tasks (id) ON DELETE CASCADE,
    capability text NOT NULL,
    key        text CHECK (key <> ''),
    asked_by   text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    result     jsonb,
    done_by    text,
    done_at    timestamptz,
    CHECK ((done_at IS NULL) = (done_by IS NULL))
);

CREATE UNIQUE INDEX task_requests_key_idx ON task_requests (capability, key)
    WHERE key IS NOT NULL;
