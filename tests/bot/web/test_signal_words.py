"""The signals page's words agree in number with what they count ("1 task was put back",
"2 tasks were put back"), and name no internal key."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

from bot.web.pages.signals import sentences
from taskqueue import TaskQueue, read_signals


async def test_the_reapers_words_agree_with_their_counts(queue: TaskQueue) -> None:
    s = dataclasses.replace(await read_signals(queue), reaper_at=datetime.now(UTC),
                            reaper_outcome={"requeued": 1, "orphans_requeued": 2,
                                            "failed": 1, "expired": 3})
    assert sentences(s)["reaper_did"] == [
        "1 task whose worker's lease ran out was put back in the queue",
        "2 tasks left running with no lease at all were put back in the queue",
        "1 task that had used all its attempts was marked failed",
        "3 questions nobody answered in time were closed as expired"]


async def test_a_reaper_that_did_nothing_says_so(queue: TaskQueue) -> None:
    s = dataclasses.replace(await read_signals(queue), reaper_at=datetime.now(UTC),
                            reaper_outcome={"requeued": 0, "expired": 0})
    assert sentences(s)["reaper_did"] == ["it found nothing to do"]
