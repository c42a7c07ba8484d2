-- The leader's lease, for a database reached only through a transaction pooler (PgBouncer in
-- transaction mode, no SIGNOFF_DIRECT_URL), where a session advisory lock does not hold: the
-- process whose row this is leads until expires_at, and renews it every second
-- (taskqueue/runtime/leadership.py, LeaseLeadership). One row per lock key.
CREATE TABLE leader_leases (
    key        bigint PRIMARY KEY,
    holder     text NOT NULL,
    expires_at timestamptz NOT NULL
);
