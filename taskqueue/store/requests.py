"""TaskQueue's requests asked from outside a worker: a task parked at birth for an agent,
a script or a CI job (the HTTP API, `signoff ask`, the MCP server), found again by its
idempotency key, waited on, and marked done with the result of the asker's action."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from psycopg.types.json import Jsonb

from taskqueue.errors import BadInput, Conflict, TaskNotFound
from taskqueue.store import rows
from taskqueue.store.base import APPROVALS_CHANNEL, Conn, QueueBase
from taskqueue.store.checks import (
    MAX_QUESTION_CHARS,
    check_capability,
    check_name,
    check_setting,
    check_text,
)
from taskqueue.store.models import JSON, Approval, iso
from taskqueue.store.queries import query
from taskqueue.store.states import Decision, Status
from taskqueue.store.work_models import NewAttachment

# The longest idempotency key, in characters.
MAX_KEY_CHARS = 200
# How often a wait reads the request again (seconds); with a `changed` signal, at least
# this often.
WAIT_POLL_SECONDS = 0.25
CHANGED_CHECK_SECONDS = 1.0


@dataclass(frozen=True)
class AskedRequest:
    """A request asked from outside a worker: its task, its latest approval, and what the
    asker reported done. `status` uses the approval's words: needs_approval while open,
    then approved, revised, skipped or expired (cancelled when an operator cancelled it)."""

    id: int
    capability: str
    task_status: Status
    approval: Approval
    key: str | None
    asked_by: str
    result: Any = None
    done_by: str | None = None
    done_at: datetime | None = None

    @property
    def status(self) -> str:
        if self.approval.decision is not None:
            return self.approval.decision.value
        if self.task_status is Status.CANCELLED:
            return "cancelled"
        return "needs_approval"

    @property
    def is_open(self) -> bool:
        return self.status == "needs_approval"

    @property
    def decision(self) -> Decision | None:
        """The decision (None while open)."""
        return self.approval.decision

    @property
    def note(self) -> str | None:
        return self.approval.note

    def to_json(self) -> JSON:
        a = self.approval
        return {
            "id": self.id,
            "status": self.status,
            "decision": a.decision.value if a.decision else None,
            "decided_by": a.decided_by,
            "note": a.note,
            "approvals": a.approved_count,
            "required": a.required,
            "capability": self.capability,
            "question": a.question,
            "key": self.key,
            "asked_by": self.asked_by,
            "expires_at": iso(a.expires_at),
            "done": self.done_at is not None,
            "done_by": self.done_by,
            "result": self.result,
        }


def check_key(key: str | None) -> None:
    """BadInput unless the idempotency key is None or 1 to MAX_KEY_CHARS printable chars."""
    if key is None:
        return
    if not isinstance(key, str) or not key or len(key) > MAX_KEY_CHARS or not key.isprintable():
        raise BadInput(f"the key must be 1 to {MAX_KEY_CHARS} printable characters")


class RequestsMixin(QueueBase):
    """Asking, reading, waiting on and finishing requests from outside a worker."""

    async def request_park(self, capability: str, question: str, *, asked_by: str,
                           request: JSON | None = None,
                           attachments: Iterable[NewAttachment] = (),
                           expires_in: float | None = None,
                           required_approvals: int | None = None,
                           key: str | None = None) -> tuple[AskedRequest, bool]:
        """Park a new request (a task of `capability` born needs_approval, with its
        question), or find the one `key` already made; (request, created). Conflict when
        the capability's max_parked questions already wait."""
        check_capability(capability)
        check_name(asked_by, "the asker", required=True)
        check_text(question, "the question", MAX_QUESTION_CHARS, required=True)
        check_key(key)
        if required_approvals is not None:
            check_setting("required_approvals", required_approvals)
        if expires_in is not None and not 0 < expires_in <= 10 * 365 * 86400:
            raise BadInput("expires-in must be a positive number of seconds (at most ten years)")
        files = [rows.check_attachment(a, self.max_attachment_bytes) for a in attachments]
        request_value = self._jsonb(request or {}, "the request")
        params = {"capability": capability, "key": key, "asked_by": asked_by}
        async with self._tx() as conn:
            if key is not None:
                await conn.execute(query("request_key_lock"), params)
                found = await self._one(conn, "request_find", params)
                if found is not None:
                    return await self._request_read(conn, found["task_id"]), False
            await conn.execute(query("request_capability_ensure"), params)
            await self._request_room(conn, capability)
            task = await self._one(conn, "request_task_insert", params | {
                "payload": Jsonb({"asked_by": asked_by})})
            assert task is not None
            params |= {"task_id": task["id"]}
            approval = await self._one(conn, "request_approval_insert", params | {
                "question": question, "request": request_value, "expires_in": expires_in,
                "required": required_approvals})
            assert approval is not None
            for f in files:
                await self._one(conn, "attachment_insert", f | {"approval_id": approval["id"]})
            await self._one(conn, "request_insert", params)
            await self._notify(conn, APPROVALS_CHANNEL, str(approval["id"]))
            return await self._request_read(conn, task["id"]), True

    async def _request_room(self, conn: Conn, capability: str) -> None:
        """Conflict when the capability's max_parked questions already wait."""
        await conn.execute(query("request_capability_lock"), {"capability": capability})
        room = await self._one(conn, "request_room", {"capability": capability})
        if room is not None and room["max_parked"] is not None and \
                room["parked"] >= room["max_parked"]:
            raise Conflict(f"capability {capability} already has {room['parked']} questions "
                           f"waiting (max_parked {room['max_parked']}); ask again once "
                           "one is decided")

    async def request_get(self, task_id: int) -> AskedRequest:
        """One request by its task's id; TaskNotFound when no ask made that task."""
        async with self._tx() as conn:
            return await self._request_read(conn, task_id)

    async def request_find(self, capability: str, key: str) -> AskedRequest | None:
        """The request `key` made for `capability`, or None."""
        async with self._tx() as conn:
            found = await self._one(conn, "request_find", {"capability": capability,
                                                            "key": key})
            return None if found is None else await self._request_read(conn, found["task_id"])

    async def request_wait(self, task_id: int, timeout: float, *,
                           changed: Callable[[float], Awaitable[object]] | None = None
                           ) -> AskedRequest:
        """The request once it is decided (or expired, or cancelled), or as it is when
        `timeout` seconds have passed. It reads the request again every WAIT_POLL_SECONDS,
        or, given `changed` (which returns when an approval may have changed, or after the
        seconds it is given), whenever that returns and at least every second."""
        deadline = time.monotonic() + max(timeout, 0)
        while True:
            found = await self.request_get(task_id)
            left = deadline - time.monotonic()
            if not found.is_open or left <= 0:
                return found
            if found.approval.expires_at.timestamp() <= time.time():
                # Past its expiry and not yet reaped: expire it now, as a decision would.
                async with self._tx() as conn:
                    await self._all(conn, "approval_expire_many",
                                    {"approval_id": found.approval.id})
                    await self._notify(conn, APPROVALS_CHANNEL, str(found.approval.id))
                continue
            if changed is None:
                await asyncio.sleep(min(WAIT_POLL_SECONDS, left))
            else:
                await changed(min(CHANGED_CHECK_SECONDS, left))

    async def ask(self, capability: str, question: str, *, request: JSON | None = None,
                  key: str | None = None, wait: float | None = None,
                  asked_by: str = "python", attachments: Iterable[NewAttachment] = (),
                  expires_in: float | None = None,
                  required_approvals: int | None = None) -> AskedRequest:
        """Ask a person from code outside a worker and wait durably: park a request (or
        find the one `key` made, so a restarted process resumes the same wait) and return
        it once decided, or as it is after `wait` seconds (None: until decided)."""
        asked, _ = await self.request_park(
            capability, question, asked_by=asked_by, request=request,
            attachments=attachments, expires_in=expires_in,
            required_approvals=required_approvals, key=key)
        while True:
            found = await self.request_wait(asked.id, 60 if wait is None else wait)
            if wait is not None or not found.is_open:
                return found

    async def request_done(self, task_id: int, by: str, result: JSON | None = None
                           ) -> AskedRequest:
        """Record that the asker did what was approved, with its result (once)."""
        check_name(by, "the reporter", required=True)
        value = self._jsonb(result, "the result")
        async with self._tx() as conn:
            current = await self._request_read(conn, task_id, lock=True)
            if current.status != "approved":
                raise Conflict(f"request {task_id} is {current.status}; only an approved "
                               "request can be done")
            if current.done_at is not None:
                raise Conflict(f"request {task_id} was already done by {current.done_by}")
            await self._one(conn, "request_done", {"id": task_id, "by": by, "result": value})
            return await self._request_read(conn, task_id)

    async def _request_read(self, conn: Conn, task_id: int, *, lock: bool = False
                            ) -> AskedRequest:
        if lock:
            await self._one(conn, "task_lock", {"id": task_id})
        found = await self._one(conn, "request_get", {"id": task_id})
        task = await self._one(conn, "task_get", {"id": task_id})
        if found is None or task is None:
            raise TaskNotFound(f"no such request: {task_id}")
        latest = await self._latest_approvals(conn, [task_id])
        return AskedRequest(
            id=task_id, capability=task["capability"], task_status=Status(task["status"]),
            approval=latest[task_id], key=found["key"], asked_by=found["asked_by"],
            result=found["result"], done_by=found["done_by"], done_at=found["done_at"])
