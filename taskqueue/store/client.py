"""TaskQueue: the queue's public async API (producers, workers, people, operators)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterable, Sequence
from contextlib import asynccontextmanager
from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg import AsyncCursor
from psycopg.rows import dict_row
from psycopg.types.json import Jsonb
from psycopg_pool import AsyncConnectionPool

from taskqueue.errors import (
    AlreadyApproved,
    ApprovalExpired,
    ApprovalNotFound,
    BadInput,
    Conflict,
    LeaseLost,
    NotAnApprover,
    SignatureRequired,
    TaskNotFound,
    human_time,
)
from taskqueue.redact import redact
from taskqueue.store import pooler, reconnect, rows
from taskqueue.store.analytics import AnalyticsMixin
from taskqueue.store.audit import AuditMixin
from taskqueue.store.base import (
    ANSWERS_CHANNEL,
    APPROVALS_CHANNEL,
    TASKS_CHANNEL,
    Conn,
    Pipelined,
    QueueBase,
    jsonb,
)
from taskqueue.store.batches import BatchesMixin
from taskqueue.store.checks import (
    MAX_ERROR_CHARS,
    MAX_NOTE_CHARS,
    MAX_QUESTION_CHARS,
    MAX_TRACEBACK_CHARS,
    check_capability,
    check_claim,
    check_decision,
    check_delay,
    check_name,
    check_new_task,
    check_setting,
    check_text,
    is_requester,
    json_text,
    person_key,
    refuse_decided,
)
from taskqueue.store.db import check_pooled, check_reachable, resolve_dsn
from taskqueue.store.gates import GatesMixin
from taskqueue.store.groups import groups_from_json, groups_missing
from taskqueue.store.models import (
    JSON,
    Approval,
    Enqueued,
    Event,
    NewAttachment,
    NewTask,
    Task,
)
from taskqueue.store.notifications import NotificationsMixin
from taskqueue.store.passkeys import PasskeysMixin
from taskqueue.store.queries import query
from taskqueue.store.reads import ReadsMixin
from taskqueue.store.requests import RequestsMixin
from taskqueue.store.services import ServicesMixin
from taskqueue.store.signing import Assertion, SignatureInvalid, verify_assertion
from taskqueue.store.states import RETRYABLE, UNFINISHED, Decision, Status


@dataclass(frozen=True)
class DecisionReads:
    """What a decision sent beside its locks, fetched as its checks need them."""

    task: AsyncCursor[Any]
    cap: AsyncCursor[Any]
    vote: AsyncCursor[Any] | None = None
    votes: AsyncCursor[Any] | None = None


class TaskQueue(BatchesMixin, ReadsMixin, ServicesMixin, NotificationsMixin, GatesMixin,
                AnalyticsMixin, AuditMixin, PasskeysMixin, RequestsMixin, QueueBase):
    """Durable tasks in PostgreSQL. Every method is one transaction."""

    @classmethod
    @asynccontextmanager
    async def connect(cls, dsn: str | None = None, *, min_size: int = 1, max_size: int = 4,
                      **kwargs: Any) -> AsyncIterator[TaskQueue]:
        """Open a pool on `dsn` (DATABASE_URL or the embedded server when None)."""
        dsn = dsn or resolve_dsn()
        await check_reachable(dsn)
        pooler.say_once(dsn)
        reconnect.install()
        pool: AsyncConnectionPool[Conn] = AsyncConnectionPool(
            dsn, min_size=min_size, max_size=max_size, open=False,
            kwargs={"autocommit": True, "row_factory": dict_row, **pooler.pool_kwargs(dsn)},
            check=check_pooled,
        )
        await pool.open(wait=True, timeout=30)
        try:
            queue = cls(pool, **kwargs)
            await queue._check_schema()
            yield queue
        finally:
            await pool.close()

    # -- producers ---------------------------------------------------------------

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

    # -- workers -----------------------------------------------------------------

    async def task_claim(self, capability: str, worker: str, *,
                         lease: float | None = None) -> Task | None:
        """Take the next claimable task of `capability` for `worker`, or None."""
        found = await self.task_claim_many(capability, worker, 1, lease=lease)
        return found[0] if found else None

    async def task_claim_many(self, capability: str, worker: str, n: int, *,
                              lease: float | None = None,
                              answered_only: bool = False) -> list[Task]:
        """Take up to `n` claimable tasks in one statement, in claim order; caps stay exact.
        With `answered_only`, only tasks a person answered (approved or revised), which a
        worker's answer slot runs while its other slots are busy."""
        check_capability(capability)
        check_name(worker, "the worker name", required=True)
        self.schema_check_writable()
        if lease is not None and lease <= 0:
            raise BadInput("the lease must be a positive number of seconds")
        if n < 1:
            raise BadInput("n must be at least 1")
        params = {"capability": capability, "worker": worker, "lease": lease, "n": n,
                  "answered_only": answered_only}
        # One statement in autocommit, capped or not: the caps, the claim, its events and
        # the latest approvals are decided in the server's signoff_claim.
        async with self.pool.connection() as conn:
            cur = await conn.execute(query("task_claim"), params, prepare=True)
            return rows.claimed_from_rows(await cur.fetchall())

    async def _fenced(self, conn: Conn, name: str, params: dict[str, Any]) -> dict[str, Any]:
        """Run a worker-side update; no row means the task is gone or the claim is lost."""
        row = await self._one(conn, name, params)
        if row is not None:
            return row
        status = await self._one(conn, "task_status", {"id": params["id"]})
        if status is None:
            raise TaskNotFound(f"no such task: {params['id']}")
        raise LeaseLost(
            f"lease lost: task {params['id']} is {status['status']}"
            + (f", held by {status['worker']}" if status["worker"] else "")
            + f"; {params['worker']} no longer holds it"
        )

    @staticmethod
    def _fence(task_id: int, worker: str, claim: str | None) -> dict[str, Any]:
        return {"id": task_id, "worker": worker, "claim": check_claim(claim)}

    async def task_heartbeat(self, task_id: int, worker: str, *, claim: str | None = None,
                             lease: float | None = None) -> Task:
        """Extend the lease of a task this worker holds."""
        if lease is not None and lease <= 0:
            raise BadInput("the lease must be a positive number of seconds")
        async with self.pool.connection() as conn:  # one statement: autocommit
            params = self._fence(task_id, worker, claim) | {"lease": lease}
            row = await self._fenced(conn, "task_heartbeat", params)
        return rows.task_from_row(row)

    async def task_save_state(self, task_id: int, worker: str, state: JSON, *,
                              claim: str | None = None) -> Task:
        """Save intermediate state without releasing, so a crash does not redo the work."""
        params = self._fence(task_id, worker, claim) | {"state": self._jsonb(state, "the state")}
        async with self._tx() as conn:
            row = await self._fenced(conn, "task_save_state", params)
        return rows.task_from_row(row)

    async def task_release(self, task_id: int, worker: str, *, claim: str | None = None,
                           state: JSON | None = None, delay: float = 0,
                           reason: str | None = None) -> Task:
        """Put a running task back to pending with its state, optionally after a delay."""
        check_delay(delay)
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {
                "state": self._jsonb(state, "the state"), "delay": float(delay), "reason": reason}
            row = await self._fenced(conn, "task_release", params)
            await self._notify(conn, TASKS_CHANNEL, row["capability"])
        return rows.task_from_row(row)

    async def task_park(self, task_id: int, worker: str, question: str, *,
                        claim: str | None = None, request: JSON | None = None,
                        attachments: Iterable[NewAttachment] = (),
                        expires_in: float | None = None, state: JSON | None = None,
                        required_approvals: int | None = None) -> Approval:
        """Stop a running task at a question for a person; returns the new approval.
        `required_approvals` (default: the capability's, else 1) distinct people must approve."""
        check_text(question, "the question", MAX_QUESTION_CHARS, required=True)
        self.schema_check_writable()
        if required_approvals is not None:
            check_setting("required_approvals", required_approvals)
        if expires_in is not None and expires_in <= 0:
            raise BadInput("expires-in must be a positive number of seconds")
        files = [rows.check_attachment(a, self.max_attachment_bytes) for a in attachments]
        params = self._fence(task_id, worker, claim) | {"state": self._jsonb(state, "the state")}
        request_value = self._jsonb(request or {}, "the request")
        async with self._tx() as conn:
            task = await self._fenced(conn, "task_park", params)
            approval = await self._one(conn, "approval_insert", {
                "task_id": task_id, "question": question,
                "request": request_value, "expires_in": expires_in,
                "capability": task["capability"], "worker": worker,
                "required": required_approvals})
            assert approval is not None
            stored = [await self._one(conn, "attachment_insert",
                                      f | {"approval_id": approval["id"]}) for f in files]
            await self._notify(conn, APPROVALS_CHANNEL, str(approval["id"]))
        return rows.approval_from_row(
            approval, [rows.attachment_from_row(r) for r in stored if r is not None])

    async def task_complete(self, task_id: int, worker: str, *, claim: str | None = None,
                            result: JSON | None = None) -> Task:
        """Finish a running task as succeeded with its result."""
        # One statement (the update and its event) in autocommit: its own transaction.
        params = self._fence(task_id, worker, claim) | {"result": self._jsonb(result, "the result")}
        async with self.pool.connection() as conn:
            row = await self._fenced(conn, "task_complete", params)
        return rows.task_from_row(row)

    async def task_fail(self, task_id: int, worker: str, error: str, *,
                        claim: str | None = None, retry: bool = True,
                        traceback: str | None = None, state: JSON | None = None) -> Task:
        """Record a failure: back to pending with backoff, or failed past max_attempts.
        Registered secrets in the error and the traceback are masked before they are stored."""
        error, traceback = redact(error), redact(traceback) if traceback else traceback
        check_text(error, "the error", MAX_ERROR_CHARS, required=True)
        check_text(traceback, "the traceback", MAX_TRACEBACK_CHARS)
        async with self._tx() as conn:
            params = self._fence(task_id, worker, claim) | {
                "error": error, "retry": retry, "traceback": traceback,
                "state": self._jsonb(state, "the state")}
            row = await self._fenced(conn, "task_fail", params)
            if row["status"] == Status.PENDING:
                await self._notify(conn, TASKS_CHANNEL, row["capability"])
        return rows.task_from_row(row)

    # -- people --------------------------------------------------------------------

    async def approval_decide(self, approval_id: int, decision: Decision | str, by: str,
                              note: str | None = None, *, via: str | None = None,
                              assertion: Assertion | None = None) -> Approval:
        """Record a person's decision on an open approval, once. `via` records who typed it
        when the channel cannot prove the person (the CLI's `cli:USER@HOST`); `assertion`
        is the person's passkey signature over this request (an approve of a capability
        with signed_approvals needs one: SignatureRequired without, SignatureInvalid when
        it does not verify; nothing is recorded either way)."""
        choice = check_decision(decision, by, note)
        check_name(via, "via")
        self.schema_check_writable()
        signed = await self._checked_assertion(approval_id, by, assertion) \
            if assertion is not None and choice is Decision.APPROVED else None
        decider = Decider(by, via, signed[0] if signed else None)
        async with self._signature_link(), self._pipelined_tx() as tx:
            found = await self._send(tx.conn, "approval_lock", {"id": approval_id})
            sent = await self._send_decision_reads(tx.conn, choice, decider,
                                                   approval_id=approval_id)
            row = await found.fetchone()
            if row is None:
                raise ApprovalNotFound(f"no such approval: {approval_id}")
            result = await self._decide(tx, row, await sent.task.fetchone(), sent, choice,
                                        decider, note)
        if signed is not None:
            assertion, count = signed
            async with self.pool.connection() as conn:
                await self._all(conn, "passkey_used", {
                    "credential_id": assertion.credential_id, "sign_count": count})
        return self._decided(result)

    async def _checked_assertion(self, approval_id: int, by: str,
                                 assertion: Assertion) -> tuple[Assertion, int]:
        """The assertion and its new signature counter, once it verifies against `by`'s own
        stored credential over this approval's request, its counter past the stored one
        (SignatureInvalid otherwise)."""
        passkey = await self.passkey_get(assertion.credential_id)
        if passkey is None or person_key(passkey.person) != person_key(by):
            raise SignatureInvalid(f"that passkey is not one of {by}'s: nothing recorded")
        approval = await self.approval_get(approval_id)
        count = verify_assertion(assertion, passkey.public_key, passkey.rp_id, approval_id,
                                 approval.request, passkey.sign_count)
        return assertion, count

    @asynccontextmanager
    async def _signature_link(self) -> AsyncIterator[None]:
        """A SignatureRequired names where the person can sign (a registered link)."""
        try:
            yield
        except SignatureRequired as exc:
            link = await self.signing_link(exc.approval_id, exc.task_id)
            exc.link = link
            exc.args = (f"{exc.args[0]}: approve it with your passkey at {link}" if link else
                        f"{exc.args[0]}: approve it with your passkey in the web inbox (no "
                        "web inbox has registered its address yet)",)
            raise

    async def approval_decide_for_task(self, task_id: int, decision: Decision | str, by: str,
                                       note: str | None = None, *,
                                       via: str | None = None) -> Approval:
        """Decide the latest approval of a task (what the CLI's approve/revise/skip do)."""
        choice = check_decision(decision, by, note)
        check_name(via, "via")
        self.schema_check_writable()
        async with self._signature_link(), self._pipelined_tx() as tx:
            found = await self._send(tx.conn, "approval_lock_latest_for_task",
                                     {"task_id": task_id})
            sent = await self._send_decision_reads(tx.conn, choice, Decider(by, via),
                                                   task_id=task_id)
            row, task = await found.fetchone(), await sent.task.fetchone()
            if task is None:
                raise TaskNotFound(f"no such task: {task_id}")
            if row is None:
                raise Conflict(f"task {task_id} is {task['status']} and has no approval")
            result = await self._decide(tx, row, task, sent, choice, Decider(by, via), note)
        return self._decided(result)

    async def _send_decision_reads(self, conn: Conn, choice: Decision, decider: Decider, *,
                                   task_id: int | None = None,
                                   approval_id: int | None = None) -> DecisionReads:
        """Send, after the approval's lock (sent first), the task's lock, its capability's
        read and, for an approve, the vote with the votes so far: one round trip before any
        check ran. The vote is written only while the approval is open and unexpired; a
        check that refuses the decision rolls it back with everything else."""
        by, signed = decider.by, decider.assertion
        params = {"task_id": task_id, "approval_id": approval_id, "by": by,
                  "by_key": person_key(by), "via": decider.via,
                  "credential_id": signed.credential_id if signed else None,
                  "authenticator_data": signed.authenticator_data if signed else None,
                  "client_data": signed.client_data if signed else None,
                  "signature": signed.signature if signed else None,
                  "origin": signed.origin if signed else None}
        task = await self._send(conn, "decision_task_lock", params)
        cap = await self._send(conn, "decision_capability", params)
        if choice is not Decision.APPROVED:
            return DecisionReads(task, cap)
        return DecisionReads(task, cap, await self._send(conn, "decision_vote_insert", params),
                             await self._send(conn, "decision_votes", params))

    @staticmethod
    def _decided(result: Approval | ApprovalExpired) -> Approval:
        # An expiry found at decision time is committed before it is reported.
        if isinstance(result, ApprovalExpired):
            raise result
        return result

    async def _decide(self, tx: Pipelined, row: dict[str, Any], task: dict[str, Any] | None,
                      sent: DecisionReads, choice: Decision, decider: Decider,
                      note: str | None) -> Approval | ApprovalExpired:
        """Decide the locked approval `row` of the locked `task`, with the reads `sent`
        beside their locks."""
        conn, by = tx.conn, decider.by
        refuse_decided(row)
        if not row.get("is_current", True):
            raise Conflict(f"approval {row['id']} of task {row['task_id']} was superseded by "
                           "a newer question")
        assert task is not None
        if task["status"] != Status.NEEDS_APPROVAL:
            raise Conflict(f"task {task['id']} is {task['status']}; its approval cannot be decided")
        cap = await sent.cap.fetchone()
        # The requester may always skip their own request: a withdrawal.
        withdrawn = choice is Decision.SKIPPED and _asked(row, task, by)
        if cap is not None and not withdrawn \
                and not rows.capability_from_row(cap).may_decide(by):
            raise NotAnApprover(f"{by} is not an approver of {task['capability']}: "
                                "nothing recorded")
        if row["past_expiry"]:
            await self._all(conn, "approval_expire_many", {"approval_id": row["id"]})
            return ApprovalExpired(f"approval {row['id']} of task {task['id']} expired at "
                                   f"{human_time(row['expires_at'])}")
        if choice is Decision.APPROVED and cap is not None and cap["signed_approvals"] \
                and decider.assertion is None:
            raise SignatureRequired(
                f"{task['capability']} counts only passkey-signed approves; {by}'s approve "
                f"of task {task['id']} was not recorded", task_id=task["id"],
                approval_id=row["id"])
        if choice is Decision.APPROVED:
            votes = await self._cast_vote(conn, row, task, decider, sent)
            if _counted(votes) < row["required"] or _groups_short(row, votes):
                return await self._partly_approved(conn, row, task, by, votes)
        if choice is Decision.REVISED:
            await self._discard_votes(conn, row)
        # Everything from here, COMMIT included, is sent before anything is fetched: one
        # round trip, so the task is claimable again as soon as the decision is recorded.
        decided = await self._send(conn, "approval_decide", {
            "id": row["id"], "decision": choice.value, "by": by, "note": note,
            "via": decider.via})
        await self._send(conn, "task_after_decision", {
            "id": task["id"], "decision": choice.value, "by": by, "note": note,
            "approval_id": row["id"], "via": decider.via, "withdrawn": withdrawn})
        await self._notify(conn, APPROVALS_CHANNEL, str(row["id"]))
        if choice is not Decision.SKIPPED:
            await self._notify(conn, TASKS_CHANNEL, task["capability"])
            await self._notify(conn, ANSWERS_CHANNEL, task["capability"])
        parts = await self._send_approval_parts(conn, [row["id"]])
        await tx.commit()
        decided_row = await decided.fetchone()
        assert decided_row is not None
        return (await self._approval_models([decided_row], parts))[0]

    async def _cast_vote(self, conn: Conn, row: dict[str, Any], task: dict[str, Any],
                         decider: Decider, sent: DecisionReads) -> list[dict[str, Any]]:
        """`by`'s approve, written beside the locks: the request's approves with it (the
        requester's own counts for nothing). AlreadyApproved when `by` approved it before."""
        assert sent.vote is not None and sent.votes is not None
        by = decider.by
        vote = await sent.vote.fetchone()
        votes = await sent.votes.fetchall()
        if vote is None:
            raise AlreadyApproved(
                f"{by} already approved approval {row['id']} of task {row['task_id']} "
                f"({_counted(votes)} of {row['required']}); an approve counts once per person",
                by=by, approved=_counted(votes), required=row["required"])
        if _asked(row, task, by):
            # Written as counted before the request was read: the requester's own approve
            # is recorded but does not count. Sent, not awaited: it runs before whatever
            # this decision sends next.
            await self._send(conn, "approval_vote_uncount", {"approval_id": row["id"],
                                                             "by_key": person_key(by)})
            votes = [v | {"counts": False} if v["person"] == vote["person"] else v
                     for v in votes]
        return votes

    async def _partly_approved(self, conn: Conn, row: dict[str, Any], task: dict[str, Any],
                               by: str, votes: list[dict[str, Any]]) -> Approval:
        """An approve short of the count, with the request's `votes` so far: recorded as an
        event and owed to every channel as an `approval_progress` notification; the
        approval stays open. Sent, not awaited: COMMIT follows them in one round trip."""
        approved, short = _counted(votes), _groups_short(row, votes)
        await self._send(conn, "event_insert", {
            "task_id": task["id"], "kind": "approved_partly", "actor": by,
            "detail": Jsonb({"approval_id": row["id"], "approved": approved,
                             "required": row["required"],
                             "counted": not _asked(row, task, by)}
                            | ({"waiting_for": short} if short else {}))})
        await self._send(conn, "approval_progress_insert", {
            "task_id": task["id"], "approval_id": row["id"], "approved": approved,
            "required": row["required"], "by": by, "waiting_for": short})
        await self._notify(conn, APPROVALS_CHANNEL, str(row["id"]))
        return rows.approval_from_row(row, (), votes)

    async def _discard_votes(self, conn: Conn, row: dict[str, Any]) -> None:
        gone = await self._all(conn, "approval_votes_discard", {"approval_id": row["id"]})
        if gone:
            await self._one(conn, "event_insert", {
                "task_id": row["task_id"], "kind": "approvals_discarded", "actor": None,
                "detail": Jsonb({"approval_id": row["id"],
                                 "people": sorted(g["person"] for g in gone)})})

    # -- operators -----------------------------------------------------------------

    async def task_retry(self, task_id: int, *, actor: str | None = None) -> Task:
        """Put a failed, expired or cancelled task back to pending with attempts reset."""
        check_name(actor, "the actor")
        return await self._operator_move(task_id, RETRYABLE, Status.PENDING, "retried", actor)

    async def task_cancel(self, task_id: int, *, actor: str | None = None,
                          reason: str | None = None) -> Task:
        """Cancel an unfinished task; a running one's worker then finds its lease lost."""
        check_name(actor, "the actor")
        check_text(reason, "the reason", MAX_NOTE_CHARS)
        return await self._operator_move(task_id, UNFINISHED, Status.CANCELLED, "cancelled",
                                         actor, {"reason": reason} if reason else {})

    async def _operator_move(self, task_id: int, sources: frozenset[Status], target: Status,
                             kind: str, actor: str | None,
                             detail: JSON | None = None) -> Task:
        try:
            async with self._tx() as conn:
                old = await self._one(conn, "task_lock", {"id": task_id})
                if old is None:
                    raise TaskNotFound(f"no such task: {task_id}")
                if old["status"] not in sources:
                    verb = {"retried": "retry", "cancelled": "cancel"}.get(kind, kind)
                    raise Conflict(f"task {task_id} is {old['status']}; cannot {verb} it")
                row = await self._one(conn, "task_set_status", {
                    "id": task_id, "status": target.value, "old_status": old["status"],
                    "reset_attempts": target is Status.PENDING, "kind": kind, "actor": actor,
                    "detail": jsonb(detail or {}, "the detail")})
                assert row is not None
                await self._notify(conn, TASKS_CHANNEL, row["capability"])
        except psycopg.errors.UniqueViolation:
            raise Conflict(f"task {task_id}: another task now holds its dedupe key") from None
        return rows.task_from_row(row)

    async def event_insert(self, task_id: int, kind: str, *, actor: str | None = None,
                           detail: JSON | None = None) -> Event:
        """Append an event that is not a transition (a refused tap, a sent message)."""
        check_name(kind, "the event kind", required=True)
        check_name(actor, "the actor")
        try:
            async with self._tx() as conn:
                row = await self._one(conn, "event_insert", {
                    "task_id": task_id, "kind": kind, "actor": actor,
                    "detail": jsonb(detail or {}, "the detail")})
        except psycopg.errors.ForeignKeyViolation:
            raise TaskNotFound(f"no such task: {task_id}") from None
        assert row is not None
        return rows.event_from_row(row)


@dataclass(frozen=True)
class Decider:
    """Who decides: the person, and who typed it when the channel cannot prove it."""

    by: str
    via: str | None = None
    # A verified passkey assertion, stored with the approve.
    assertion: Assertion | None = None


def _asked(row: dict[str, Any], task: dict[str, Any], by: str) -> bool:
    """Whether `by` asked for this request: the task's requester recorded at enqueue, or
    the one its request names."""
    return is_requester(row["request"], by, task.get("enqueued_by"))


def _groups_short(row: dict[str, Any], votes: list[dict[str, Any]]) -> list[str]:
    """The approval's groups whose minimum its counted approves do not meet yet."""
    return groups_missing(groups_from_json(row.get("groups")),
                          [v["person"] for v in votes if v["counts"]])


def _counted(votes: list[dict[str, Any]]) -> int:
    """The approves that count toward an approval's `required` (not the requester's own)."""
    return sum(1 for v in votes if v["counts"])
