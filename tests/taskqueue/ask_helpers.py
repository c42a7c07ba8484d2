"""Runs `signoff ask` as a real subprocess (on the test's event loop, so the test decides
while it waits), locally on a database or against a service's API."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from taskqueue import AskedRequest, TaskQueue

from .cli_helpers import ROOT


@dataclass(frozen=True)
class Asking:
    """`signoff ask` with this environment (DATABASE_URL, or SIGNOFF_URL and SIGNOFF_TOKEN)."""

    env: dict[str, str]

    async def start(self, *args: str, shell: str | None = None) -> asyncio.subprocess.Process:
        env = {**os.environ, **self.env}
        if shell is not None:
            return await asyncio.create_subprocess_exec(
                "bash", "-c", shell, env=env, cwd=ROOT, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE, start_new_session=True)
        return await asyncio.create_subprocess_exec(
            sys.executable, "-m", "taskqueue", "ask", *args, env=env, cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)

    async def run(self, *args: str, decide: Callable[[], Awaitable[object]] | None = None,
                  shell: str | None = None) -> tuple[int, str, str]:
        """Run to the end; `decide` runs once the process has asked."""
        proc = await self.start(*args, shell=shell)
        if decide is not None:
            await decide()
        out, err = await asyncio.wait_for(proc.communicate(), 120)
        assert proc.returncode is not None
        return proc.returncode, out.decode(), err.decode()


async def asked(queue: TaskQueue, capability: str, key: str, timeout: float = 60
                ) -> AskedRequest:
    """The request `key` made, once a child process has made it."""
    for _ in range(int(timeout / 0.1)):
        found = await queue.request_find(capability, key)
        if found is not None:
            return found
        await asyncio.sleep(0.1)
    raise AssertionError(f"no request with key {key}")


def kill(proc: asyncio.subprocess.Process) -> None:
    proc.send_signal(signal.SIGKILL)
