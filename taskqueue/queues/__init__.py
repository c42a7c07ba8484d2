"""The queue's API split by who uses it: one small facade per role, each over the one
shared base (the pool, the limits and the methods every role calls, store/common.py).

- `worker.WorkerQueue`: claim, the outcomes of a claimed task (one and in batches),
  heartbeat, saved state, the gate.
- `producer.ProducerQueue`: enqueue, the dedupe keys already held, producer runs.
- `asker.AskerQueue`: a program's own question to a person and its wait (ask, request_*).
- `people.PeopleQueue`: decide, the reads behind a card, the inbox and the task pages,
  passkeys and signing links.
- `outbox.OutboxQueue`: the notification outbox as a channel sends from it.
- `maintenance.MaintenanceQueue`: the reaper, the pruner, reminders and alerts, metrics,
  analytics and the audit.
- `operator.OperatorQueue`: a capability's settings, retry and cancel.
- `channel.ChannelQueue`: people's part and the outbox in one type, as the chat and web
  channels use them (not a facade of its own).
- `shared.SharedQueue`: the base every facade shares.
- `whole.TaskQueue`: every facade in one object, the one-import convenience (scripts, the
  CLI, the service that builds the queue and hands it to each part).

A caller imports the module of its own part (not this package, which imports none of
them), so import-linter can say who may import which (pyproject.toml); a TaskQueue is an
instance of every facade, so each caller receives the one queue the service built.
"""
