"""A gated handler for the gate's process tests (`signoff worker --handler`): it posts the
payload's message to the far side (FAR_SIDE_URL) with the action's idempotency key, and
dies (SIGKILL) where SIGNOFF_GATETEST_CRASH_AT names a gate step."""

from __future__ import annotations

import os
from typing import Any

import aiohttp

from taskqueue import (
    Decision,
    Done,
    GatedAction,
    NothingHappened,
    Park,
    Task,
    TaskContext,
    env_crash_points,
)

KIND = "message"
crash = env_crash_points("SIGNOFF_GATETEST")


async def post_message(task: Task, ctx: TaskContext) -> Done | Park:
    """Ask, then post the message once."""
    text = str(task.payload["text"])
    if task.decision is not Decision.APPROVED:
        return Park("Send it?", request={"kind": KIND, "fingerprint": text, "text": text})

    async def send(action: GatedAction) -> dict[str, Any]:
        async with aiohttp.ClientSession() as http, http.post(
                f"{os.environ['FAR_SIDE_URL']}/messages", json={"text": text},
                headers={"Idempotency-Key": action.key}) as answer:
            if 400 <= answer.status < 500:
                raise NothingHappened(f"refused: HTTP {answer.status}")
            answer.raise_for_status()
            return dict(await answer.json())

    gate = ctx.gate(KIND, checkpoint=crash)
    sent = await gate.run(text, send, check="the far side's messages")
    return Done({"sent": sent.result, "acted_now": sent.acted_now})
