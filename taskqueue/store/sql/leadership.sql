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
