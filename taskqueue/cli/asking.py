"""One way to ask for both `signoff ask` and `signoff mcp`: against the database
(DATABASE_URL, or the embedded server) or against a service's HTTP API (`--url` and
SIGNOFF_TOKEN); either way a request is a dict in the API's JSON shape."""

from __future__ import annotations

import argparse
import os
from collections.abc import AsyncIterator, Iterable
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any, Protocol

from taskqueue.cli.remote import URL_ENV, RemoteQueue
from taskqueue.config.settings import load_config
from taskqueue.errors import Conflict
from taskqueue.runtime.approval_waker import ApprovalWaker
from taskqueue.store.work_models import NewAttachment

if TYPE_CHECKING:
    from taskqueue.queues.asker import AskerQueue

# Exit codes of `signoff ask --wait` for each way a request ends (0: approved).
EXIT_CODES = {"approved": 0, "revised": 10, "skipped": 11, "expired": 12, "cancelled": 13,
              "needs_approval": 14}


class Asker(Protocol):
    async def park(self, capability: str, question: str, *, request: Any = None,
                   attachments: Iterable[NewAttachment] = (),
                   expires_in: float | None = None, required_approvals: int | None = None,
                   key: str | None = None) -> dict[str, Any]: ...

    async def wait(self, request_id: int, timeout: float | None) -> dict[str, Any]: ...

    async def get(self, request_id: int) -> dict[str, Any]: ...


class LocalAsker:
    """Asks through the database, as `asked_by`; a capability configured with a worker
    (mode pool or tick) is refused, as the API refuses it."""

    def __init__(self, queue: AskerQueue, asked_by: str, modes: dict[str, str],
                 waker: ApprovalWaker | None = None) -> None:
        self.queue, self.asked_by, self.modes = queue, asked_by, modes
        self.waker = waker

    async def park(self, capability: str, question: str, *, request: Any = None,
                   attachments: Iterable[NewAttachment] = (),
                   expires_in: float | None = None, required_approvals: int | None = None,
                   key: str | None = None) -> dict[str, Any]:
        mode = self.modes.get(capability)
        if mode not in (None, "external"):
            raise Conflict(f"capability {capability} has mode {mode}: its worker owns its "
                           "tasks; ask with a capability of mode external")
        asked, created = await self.queue.request_park(
            capability, question, asked_by=self.asked_by, request=request,
            attachments=attachments, expires_in=expires_in,
            required_approvals=required_approvals, key=key)
        return asked.to_json() | {"created": created}

    async def wait(self, request_id: int, timeout: float | None) -> dict[str, Any]:
        # A decision wakes the wait through NOTIFY (listening before the first read, so
        # none is missed); without a waker it reads the request four times a second.
        changed = None
        if self.waker is not None:
            await self.waker.listen()
            changed = self.waker.changed
        while True:
            found = await self.queue.request_wait(request_id, 60 if timeout is None
                                                  else timeout, changed=changed)
            if timeout is not None or not found.is_open:
                return found.to_json()

    async def get(self, request_id: int) -> dict[str, Any]:
        return (await self.queue.request_get(request_id)).to_json()


def add_asker_options(p: argparse.ArgumentParser, default_by: str, by_help: str) -> None:
    """The options of a command that asks (`ask`, `mcp`): where it asks and as whom."""
    p.add_argument("--url", metavar="URL",
                   help="ask through the service at URL (default $SIGNOFF_URL) with the "
                        "token in $SIGNOFF_TOKEN, instead of the database")
    p.add_argument("--by", default=default_by, metavar="NAME", help=by_help)
    p.add_argument("--config", metavar="FILE", help="config file (default $SIGNOFF_CONFIG)")


@asynccontextmanager
async def open_asker(url: str | None, config: str | None, asked_by: str
                     ) -> AsyncIterator[Asker]:
    """A RemoteQueue for `url` (or SIGNOFF_URL), else a LocalAsker on the CLI's database."""
    url = url or os.environ.get(URL_ENV)
    if url:
        yield RemoteQueue(url)
        return
    from taskqueue.cli.commands import open_queue

    cfg = load_config(config, imports=False)
    modes = {name: cap.mode for name, cap in cfg.capabilities.items()}
    async with open_queue(max_size=2, limits=cfg.limits) as queue:
        waker = ApprovalWaker.for_pool(queue.pool)
        try:
            yield LocalAsker(queue, asked_by, modes, waker)
        finally:
            await waker.close()
