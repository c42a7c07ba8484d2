-- Leadership: one session-level advisory lock, held on a connection of its own by the
-- leader among the processes on one database (taskqueue/runtime/leadership.py).
-- Named blocks, loaded once with every .sql file here by taskqueue/store/queries.py.

-- name: leader_try_lock
-- True when this session now holds the lock (or already did); never waits.
SELECT pg_try_advisory_lock(%(key)s) AS held

-- name: leader_listen
-- Standbys hear a release at once (the channel is LEADER_CHANNEL).
LISTEN signoff_leader

-- name: leader_check
-- The leader's keepalive: fails when the lock connection is gone.
SELECT 1 AS alive

-- name: leader_release
-- Give the lock up and tell the standbys at once (they also try every second).
SELECT pg_advisory_unlock(%(key)s) AS released, pg_notify(%(channel)s, '') AS told

-- name: leader_lease_take
-- Through a transaction pooler, the leader holds a lease row instead of the lock: take it
-- when it is free or lapsed, or renew it when it is this holder's. A row back: this holder
-- leads until expires_at; none: another holder's lease still runs.
INSERT INTO leader_leases AS l (key, holder, expires_at)
VALUES (%(key)s, %(holder)s, now() + make_interval(secs => %(ttl)s))
ON CONFLICT (key) DO UPDATE SET holder = excluded.holder, expires_at = excluded.expires_at
WHERE l.holder = excluded.holder OR l.expires_at < now()
RETURNING holder

-- name: leader_lease_release
-- A clean stop gives the lease up, so a standby takes it at its next try (within a second).
DELETE FROM leader_leases WHERE key = %(key)s AND holder = %(holder)s RETURNING holder
