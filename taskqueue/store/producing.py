"""What a producer writes: new tasks (one, or a batch that is all or nothing), the dedupe
keys it already holds, and its runs (one per period, leased to one runner)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from psycopg.types.json import Jsonb

from taskqueue.errors import Conflict
from taskqueue.store.base import TASKS_CHANNEL, Conn, QueueBase, jsonb
from taskqueue.store.checks import check_capability, check_name, check_new_task, json_text
from taskqueue.store.models import JSON
from taskqueue.store.queries import query
from taskqueue.store.work_models import Enqueued, NewTask, ProducerRun


class ProducingMixin(QueueBase):
    """Each method is one transaction, named like its query."""

    async def task_enqueue(self, capability: str, payload: JSON | None = None, *,
                           priority: int = 0, dedupe_key: str | None = None,
                           delay: float = 0, max_attempts: int | None = None,
                           actor: str | None = None) -> Enqueued:
        """Add a task; a dedupe key held by an unfinished or succeeded task returns that task.
        `actor` is who asks for it, recorded on the task as its requester (`requested_by`):
        a person, `producer:NAME`, `cli`. Their own approve of it never counts."""
        payload = {} if payload is None else payload
        item = NewTask(payload, priority, dedupe_key, delay, max_attempts)
        [result] = await self.task_enqueue_many(capability, [item], actor=actor)
        return result

    async def task_enqueue_many(self, capability: str, items: Sequence[NewTask], *,
                                actor: str | None = None) -> list[Enqueued]:
        """Add several tasks in one transaction: all of them or none."""
        check_capability(capability)
        check_name(actor, "the actor")
        payloads = []
        for number, item in enumerate(items, start=1):
            check_new_task(item)
            payloads.append(json_text(item.payload, "the payload" if len(items) == 1
                                      else f"the payload of item {number}", self.limits))
        if not items:
            return []
        params = {
            "capability": capability, "actor": actor, "channel": TASKS_CHANNEL,
            "priorities": [i.priority for i in items],
            "payloads": payloads,  # checked JSON text, sent in binary: nothing to escape
            "max_attempts": [i.max_attempts for i in items],
            "delays": [float(i.delay) for i in items]}
        keys = sorted({item.dedupe_key for item in items if item.dedupe_key is not None})
        if not keys:
            # Nothing to deduplicate: the batch, its events and its NOTIFY are one
            # statement in autocommit, one round trip.
            async with self.pool.connection() as conn:
                cur = await conn.execute(query("task_enqueue_plain"), params, prepare=True)
                return [Enqueued(row["id"], True) for row in await cur.fetchall()]
        # BEGIN, the key locks and the batch go out in one round trip, COMMIT in a second;
        # the batch's statement sends its own NOTIFY.
        async with self._pipelined_tx() as tx:
            await tx.conn.execute(query("dedupe_lock"), {"capability": capability, "keys": keys})
            return await self._enqueue_batch(tx.conn, capability, items, actor, params)

    def _enqueue_params(self, capability: str, item: NewTask, actor: str | None) -> dict[str, Any]:
        return {
            "capability": capability, "priority": item.priority,
            "payload": Jsonb(item.payload), "max_attempts": item.max_attempts,
            "delay": float(item.delay), "dedupe_key": item.dedupe_key, "actor": actor,
        }

    async def _enqueue_batch(self, conn: Conn, capability: str, items: Sequence[NewTask],
                             actor: str | None, params: dict[str, Any]) -> list[Enqueued]:
        """The whole batch in one statement; a row it could not settle runs alone."""
        params = params | {"dedupe_keys": [i.dedupe_key for i in items]}
        cur = await conn.execute(query("task_enqueue_many"), params, prepare=True)
        found = await cur.fetchall()
        return [Enqueued(row["id"], row["inserted"]) if row["id"] is not None
                else await self._enqueue_one(conn, capability, item, actor)
                for row, item in zip(found, items, strict=True)]

    async def _enqueue_one(self, conn: Conn, capability: str, item: NewTask,
                           actor: str | None) -> Enqueued:
        params = self._enqueue_params(capability, item, actor)
        for _ in range(10):
            row = await self._one(conn, "task_enqueue", params)
            if row is not None:
                return Enqueued(row["id"], row["inserted"])
            await asyncio.sleep(0.01)
        raise Conflict(f"dedupe key {item.dedupe_key!r} is contended; try again")

    async def task_dedupe_known(self, capability: str, keys: Sequence[str]) -> set[str]:
        """Which of `keys` a task of `capability` holds as its dedupe key, in any status."""
        if not keys:
            return set()
        async with self.pool.connection() as conn:
            found = await self._all(conn, "task_dedupe_known",
                                    {"capability": capability, "keys": list(keys)})
        return {r["dedupe_key"] for r in found}

    # -- producer runs -------------------------------------------------------------------

    async def producer_run_begin(self, capability: str, producer: str, period: str,
                                 runner: str, *, lease: float) -> ProducerRun | None:
        """Take the period for `runner`; None when it finished or a live runner holds it."""
        async with self._tx() as conn:
            row = await self._one(conn, "producer_run_begin", {
                "capability": capability, "producer": producer, "period": period,
                "runner": runner, "lease": lease})
        return _run_from_row(row) if row else None

    async def producer_run_finish(self, run: ProducerRun, *, created: int, existing: int,
                                  report: JSON | None) -> ProducerRun | None:
        """Record the run's counts and report; None when another runner took it over."""
        async with self._tx() as conn:
            row = await self._one(conn, "producer_run_finish", {
                "id": run.id, "runner": run.runner, "created": created, "existing": existing,
                "report": jsonb(report, "the producer's report")})
        return _run_from_row(row) if row else None

    async def producer_run_abandon(self, run: ProducerRun) -> None:
        """Give an unfinished period back at once (the producer raised)."""
        async with self._tx() as conn:
            await self._all(conn, "producer_run_abandon", {"id": run.id, "runner": run.runner})

    async def producer_run_get(self, capability: str, producer: str,
                               period: str) -> ProducerRun | None:
        async with self.pool.connection() as conn:
            row = await self._one(conn, "producer_run_get", {
                "capability": capability, "producer": producer, "period": period})
        return _run_from_row(row) if row else None


def _run_from_row(row: dict[str, Any]) -> ProducerRun:
    return ProducerRun(
        id=row["id"], capability=row["capability"], producer=row["producer"],
        period=row["period"], runner=row["runner"], started_at=row["started_at"],
        finished_at=row["finished_at"], created=row["created"], existing=row["existing"],
        report=row["report"])
