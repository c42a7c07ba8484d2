"""The one way a long-running loop waits for its wake-up with a time limit (the worker's
idle wait, the outbox deliveries', the decision waker's, the service's wait for leadership):
asyncio.timeout around Event.wait, which keeps a stop's cancel."""

from __future__ import annotations

import asyncio
import contextlib


async def wait_at_most(event: asyncio.Event, seconds: float) -> bool:
    """Wait until `event` is set or `seconds` have passed; True when it is set.

    Not asyncio.wait_for: Python 3.11's returns the result instead of raising when its task
    is cancelled in the same step as the wait ends (a wake at the moment of a stop), and the
    loop around it then ran on; a stop waited for it for ever (issue 37)."""
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(seconds):
            await event.wait()
    return event.is_set()
