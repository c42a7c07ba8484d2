"""The handler contract: what a workload's handler receives (Task, TaskContext) and returns."""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any

from taskqueue.errors import ConfigError
from taskqueue.queues.whole import TaskQueue
from taskqueue.runtime.crashpoints import Checkpoint
from taskqueue.runtime.gate import Act, Gate, Gated, Verify
from taskqueue.store.models import JSON, Task
from taskqueue.store.work_models import NewAttachment


@dataclass(frozen=True)
class Done:
    """The task is finished; `result` is stored on it (status succeeded)."""

    result: JSON | None = None


@dataclass(frozen=True)
class Park:
    """Stop at a question for a person; the task resumes (status approved) once answered."""

    question: str
    request: JSON | None = None
    attachments: tuple[NewAttachment, ...] = ()
    expires_in: float | None = None
    state: JSON | None = None
    # Four-eyes: distinct people who must approve (None: the capability's, default 1).
    required_approvals: int | None = None


@dataclass(frozen=True)
class Release:
    """Not finished: save `state` (None keeps the saved one) and run the next slice later."""

    state: JSON | None = None
    delay: float = 0


@dataclass(frozen=True)
class Fail:
    """The slice failed: retried with backoff when `retryable`, else the task ends failed."""

    error: str
    retryable: bool = True


Outcome = Done | Park | Release | Fail
Handler = Callable[[Task, "TaskContext"], Awaitable[Outcome]]


class TaskLogger(logging.LoggerAdapter):
    """A logger whose lines carry `task=ID capability=CAP` (and the ids in `extra`)."""

    def process(self, msg: Any, kwargs: MutableMapping[str, Any]) -> tuple[Any, Any]:
        extra = self.extra or {}
        kwargs["extra"] = {**extra, **kwargs.get("extra", {})}
        return f"task={extra['task_id']} capability={extra['capability']} {msg}", kwargs


@dataclass
class TaskContext:
    """What a handler gets besides its task: a logger, heartbeat, saved state, cancellation.

    `cancelled` is set when the runtime wants the slice to stop: the worker is shutting
    down, the lease was lost, or the timeout passed. A handler that checks it can return
    `Release(state)` early; one that does not is cancelled (CancelledError) at the deadline.
    """

    task: Task
    queue: TaskQueue
    worker: str
    lease: float | None = None
    cancelled: asyncio.Event = field(default_factory=asyncio.Event)
    log: TaskLogger = field(init=False)
    state: JSON = field(init=False)

    def __post_init__(self) -> None:
        self.log = TaskLogger(logging.getLogger(f"signoff.task.{self.task.capability}"),
                              {"task_id": self.task.id, "capability": self.task.capability})
        self.state = dict(self.task.state or {})

    async def heartbeat(self) -> None:
        """Extend the lease now (the runtime also does it on its own); raises LeaseLost."""
        await self.queue.task_heartbeat(self.task.id, self.worker, claim=self.task.claim,
                                        lease=self.lease)

    async def save_state(self, state: JSON) -> None:
        """Store intermediate state without releasing, so a crash does not redo the work."""
        await self.queue.task_save_state(self.task.id, self.worker, state, claim=self.task.claim)
        self.state = dict(state)
        self.log.info("state saved")

    def gate(self, kind: str, *, field: str = "fingerprint",
             checkpoint: Checkpoint | None = None) -> Gate:
        """The gated action `kind` of this task: only what a person approved (a request with
        this `kind` naming the fingerprint under `field`), checked right before, done at
        most once (taskqueue/runtime/gate.py)."""
        return Gate(self.queue, self.task, self.worker, kind, field=field,
                    checkpoint=checkpoint, log=self.log)

    async def gated(self, kind: str, fingerprint: str, act: Act, *,
                    verify: Verify | None = None, check: str | None = None,
                    field: str = "fingerprint") -> Gated:
        """`ctx.gate(kind).run(fingerprint, act, ...)`: act once on a person's approve of
        exactly `fingerprint`. Uncaught, NotApproved fails the task and ActionUncertain
        parks it with its question."""
        return await self.gate(kind, field=field).run(fingerprint, act, verify=verify,
                                                      check=check)


def load_handler(spec: str, *, what: str = "handler") -> Callable[..., Any]:
    """Import `module:function`; a bad spec is a ConfigError naming it."""
    module_name, sep, attr = spec.partition(":")
    if not sep or not module_name or not attr:
        raise ConfigError(f"{what} {spec!r} must look like 'package.module:function'")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise ConfigError(f"{what} {spec!r}: cannot import {module_name}: {exc}") from None
    target: Any = module
    for part in attr.split("."):
        target = getattr(target, part, None)
        if target is None:
            raise ConfigError(f"{what} {spec!r}: {module_name} has no {attr}")
    if not callable(target):
        raise ConfigError(f"{what} {spec!r} is not callable")
    return target
