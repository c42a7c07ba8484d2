"""`@require_approval(queue, capability, question)`: an agent framework's tool function
that runs only once a person approved it (TaskQueue.ask), and at most once per key."""

from __future__ import annotations

import functools
import json
from collections.abc import Awaitable, Callable
from typing import Any, ParamSpec, TypeVar, cast

from taskqueue.errors import SignoffError
from taskqueue.queues.whole import TaskQueue
from taskqueue.store.requests import AskedRequest

P = ParamSpec("P")
R = TypeVar("R")


class NotSignedOff(SignoffError):
    """A person did not approve the call (revised, skipped, expired, or still open)."""

    def __init__(self, request: AskedRequest) -> None:
        super().__init__(f"request {request.id} is {request.status}"
                         + (f": {request.note}" if request.note else ""))
        self.request = request


def require_approval(queue: TaskQueue | Callable[[], TaskQueue], capability: str,
                     question: str | Callable[..., str], *,
                     key: Callable[..., str] | None = None, wait: float | None = None,
                     asked_by: str = "python"
                     ) -> Callable[[Callable[P, Awaitable[R]]], Callable[P, Awaitable[R]]]:
    """Wrap an async function: each call asks `question` (a text, formatted with the
    call's keyword arguments, or a function of the call's arguments) with the arguments as
    the request, waits for the decision, runs the function on an approve and records its
    result as done; otherwise raises NotSignedOff. With `key` (a function of the call's
    arguments), a call after a restart resumes the same request, and one whose result is
    already recorded returns it without running again."""
    def decorate(fn: Callable[P, Awaitable[R]]) -> Callable[P, Awaitable[R]]:
        @functools.wraps(fn)
        async def wrapped(*args: P.args, **kwargs: P.kwargs) -> R:
            q = queue() if callable(queue) and not isinstance(queue, TaskQueue) else queue
            text = question(*args, **kwargs) if callable(question) else question.format(
                **kwargs)
            asked = await q.ask(capability, text, request=_arguments(fn, args, kwargs),
                                key=key(*args, **kwargs) if key else None, wait=wait,
                                asked_by=asked_by)
            if asked.status != "approved":
                raise NotSignedOff(asked)
            if asked.done_at is not None:  # done before a restart: never run twice
                return cast(R, (asked.result or {}).get("result"))
            result = await fn(*args, **kwargs)
            await q.request_done(asked.id, asked_by, {"result": _jsonable(result)})
            return result
        return wrapped
    return decorate


def _arguments(fn: Callable[..., Any], args: tuple[Any, ...], kwargs: dict[str, Any]
               ) -> dict[str, Any]:
    return {"function": getattr(fn, "__qualname__", "function"),
            "args": [_jsonable(a) for a in args],
            "kwargs": {k: _jsonable(v) for k, v in kwargs.items()}}


def _jsonable(value: Any) -> Any:
    try:
        json.dumps(value, allow_nan=False)
        return value
    except (TypeError, ValueError):
        return repr(value)[:2000]
