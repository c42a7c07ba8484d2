-- Autovacuum for the queue's high-churn tables, as PgQueuer (`pgq autovac`) and Oban's
-- scaling guide set it on theirs: every row of these tables is inserted, updated and later
-- deleted by the pruner, and PostgreSQL reuses a dead row's space only after a VACUUM.
-- These are storage parameters of the tables alone; the server's settings (autovacuum
-- itself, autovacuum_naptime, the workers) stay the operator's. ALTER TABLE ... SET takes a
-- SHARE UPDATE EXCLUSIVE lock: claims, enqueues and the pruner go on while it runs, and
-- nothing is rewritten.
--
-- Why each value:
-- * autovacuum_vacuum_scale_factor = 0.01 (default 0.2): the default waits until dead rows
--   are 20% of the table. `tasks` and `task_events` hold every finished task for the
--   retention (30 days by default), so a daily prune deletes about 3% of them and would
--   wait six days for a VACUUM, and the claim and complete updates of a busy day pile up
--   a fifth of the table in dead versions first. At 1% a VACUUM follows each prune and
--   keeps up with the updates; it is cheap because it skips the pages the visibility map
--   marks all-visible (the finished rows no one writes).
-- * autovacuum_vacuum_insert_scale_factor = 0.01 (default 0.2), on `tasks` and
--   `task_events`: they grow by inserts between prunes; a VACUUM after each 1% of new rows
--   marks those pages all-visible early, so the VACUUM after the next prune reads only
--   the pages that changed.
-- * autovacuum_vacuum_cost_delay = 0 (default 2 ms): the default sleeps 2 ms per 200 cost
--   units, which stretches a pass over a hot table while its dead rows keep coming; these
--   passes are small (see above), so they run unthrottled and end quickly.
-- * fillfactor stays 100 on `tasks`: the claim and complete updates change `status`, which
--   the partial indexes name, so they are never HOT, and the finished rows the retention
--   keeps would take a fifth more pages; the soak measured no smaller `tasks` with 80.
ALTER TABLE tasks SET (autovacuum_vacuum_scale_factor = 0.01,
                       autovacuum_vacuum_insert_scale_factor = 0.01,
                       autovacuum_vacuum_cost_delay = 0);
ALTER TABLE task_events SET (autovacuum_vacuum_scale_factor = 0.01,
                             autovacuum_vacuum_insert_scale_factor = 0.01,
                             autovacuum_vacuum_cost_delay = 0);
ALTER TABLE approvals SET (autovacuum_vacuum_scale_factor = 0.01,
                           autovacuum_vacuum_cost_delay = 0);
ALTER TABLE notifications SET (autovacuum_vacuum_scale_factor = 0.01,
                               autovacuum_vacuum_cost_delay = 0);
ALTER TABLE notification_deliveries SET (autovacuum_vacuum_scale_factor = 0.01,
                                         autovacuum_vacuum_cost_delay = 0);
