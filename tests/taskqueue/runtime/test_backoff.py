"""Back-off (runtime/backoff.py): full jitter under a doubling cap, so parties that fail at
the same moment do not retry in lockstep; every retry loop uses it."""

from __future__ import annotations

import ast
import asyncio
import inspect
from collections import Counter
from pathlib import Path

import pytest

from taskqueue import TASKS_CHANNEL, ListenerHub
from taskqueue.runtime import backoff as backoff_module
from taskqueue.runtime import heartbeat, leadership, listener, runner, worker
from taskqueue.runtime.backoff import Backoff
from tests.taskqueue.worker_helpers import terminate_backends, wait_for
from tests.timing import limit

PARTIES, ATTEMPTS = 20, 8
ROOT = Path(__file__).resolve().parents[3]
# Every sleep in the core and the service, by file and argument. A wait that follows an
# error is drawn from a Backoff; the others are not retries. A new sleep belongs here only
# once it is one of the two: a retry loop with a fixed sleep is what this list keeps out.
SLEEPS = Counter({
    ("taskqueue/runtime/heartbeat.py",
     "asyncio.sleep(self._retry_in(step) if failing else self.interval)"): 1,  # Backoff
    ("taskqueue/runtime/leadership.py", "asyncio.sleep(delay)"): 1,  # Backoff
    ("taskqueue/runtime/listener.py", "asyncio.sleep(delay)"): 1,  # Backoff
    ("taskqueue/runtime/runner.py", "asyncio.sleep(delay)"): 1,  # Backoff
    ("bot/telegram/app.py", "asyncio.sleep(backoff.next())"): 2,  # Backoff
    ("bot/telegram/delivery.py", "asyncio.sleep(delay)"): 1,  # Backoff (_durably)
    ("taskqueue/cli/remote.py", "asyncio.sleep(backoff.next())"): 1,  # Backoff (ask --url)
    # Not retries after an error:
    ("taskqueue/store/producing.py", "asyncio.sleep(0.01)"): 1,  # a dedupe key's race
    ("taskqueue/embedded/server.py", "time.sleep(0.2)"): 1,  # our own server's start-up
    ("bot/scheduler.py", "asyncio.sleep(0)"): 1,  # one turn of the loop
    ("bot/telegram/delivery.py", "asyncio.sleep(self.lease / 3)"): 2,  # the claims' renewal
    # the leader's lease row through a pooler: its renewal, or a standby's next try
    ("taskqueue/runtime/leadership.py",
     "asyncio.sleep(self.check_every if self.is_leader else self.try_every)"): 1,
    ("taskqueue/store/requests.py", "asyncio.sleep(min(WAIT_POLL_SECONDS, left))"): 1,  # a poll
    # a decision waiter's poll, when its DSN is computed
    ("taskqueue/runtime/approval_waker.py", "asyncio.sleep(min(seconds, 0.25))"): 1,
    ("taskqueue/runtime/command.py", "asyncio.sleep(every)"): 1,  # an outside command's heartbeats
    # the API's own Retry-After, honoured (at most a minute)
    ("taskqueue/cli/remote.py", "asyncio.sleep(min(float(found['retry_after']), 60))"): 1,
})


def _cap(initial: float, cap: float, attempt: int) -> float:
    return min(cap, initial * 2 ** (attempt - 1))


@pytest.mark.parametrize("initial, cap", [(worker.BACKOFF_MIN, worker.BACKOFF_MAX),
                                          (listener.RECONNECT_MIN, listener.RECONNECT_MAX),
                                          (leadership.RECONNECT_MIN, leadership.RECONNECT_MAX),
                                          (0.2, runner.APPLY_BACKOFF_MAX)])
def test_the_waits_lie_within_the_doubling_cap(initial: float, cap: float) -> None:
    b = Backoff(initial, cap)
    for attempt in range(1, 30):
        wait = b.next()
        assert 0 <= wait <= _cap(initial, cap, attempt)
    b.reset()
    assert b.next() <= initial


def test_parties_failing_together_do_not_retry_in_lockstep() -> None:
    parties = [Backoff(worker.BACKOFF_MIN, worker.BACKOFF_MAX) for _ in range(PARTIES)]
    for attempt in range(1, ATTEMPTS + 1):
        waits = [p.next() for p in parties]
        # Without jitter all 20 would wait exactly the same; with it they spread out.
        assert len({round(w, 6) for w in waits}) >= PARTIES - 2, (attempt, waits)
        top = _cap(worker.BACKOFF_MIN, worker.BACKOFF_MAX, attempt)
        assert max(waits) - min(waits) > top / 10


def test_the_spread_covers_the_range() -> None:
    # Full jitter draws from [0, cap]: over many draws at the cap, both halves are used.
    b = Backoff(1.0, 4.0)
    draws = [b.delay(10) for _ in range(400)]
    assert all(0 <= d <= 4.0 for d in draws)
    assert sum(d < 2.0 for d in draws) > 100 and sum(d >= 2.0 for d in draws) > 100


def test_no_hand_written_doubling_is_left_in_the_loops() -> None:
    for module in (worker, runner, listener, leadership, heartbeat):
        source = inspect.getsource(module)
        assert "* 2" not in source and "Backoff(" in source, module.__name__
    assert "wait_random_exponential" in inspect.getsource(backoff_module)


def test_every_sleep_in_the_core_and_the_service_is_a_backoff_or_no_retry() -> None:
    found: Counter[tuple[str, str]] = Counter()
    for top in ("taskqueue", "bot"):
        for path in sorted((ROOT / top).rglob("*.py")):
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                        and node.func.attr == "sleep"):
                    found[(path.relative_to(ROOT).as_posix(), ast.unparse(node))] += 1
    assert found == SLEEPS


async def test_hubs_cut_off_together_reconnect_at_different_moments(dsn: str) -> None:
    hubs = [ListenerHub(dsn) for _ in range(5)]
    subs = [hub.subscribe([TASKS_CHANNEL], lambda c, p: None) for hub in hubs]
    try:
        for hub in hubs:
            await asyncio.wait_for(hub.connected.wait(), limit(10))
        assert terminate_backends(dsn) >= len(hubs)
        for hub in hubs:
            await wait_for(lambda h=hub: _reconnected(h), timeout=limit(10))
        waits = [hub.backoff.last for hub in hubs]
        # Each drew its own wait from [0, RECONNECT_MIN]; without jitter all five would
        # have waited exactly RECONNECT_MIN and come back at the same moment.
        assert all(w is not None and 0 <= w <= listener.RECONNECT_MIN for w in waits), waits
        assert len(set(waits)) == len(hubs), waits
    finally:
        for sub in subs:
            await sub.close()


async def _reconnected(hub: ListenerHub) -> bool:
    return hub.connections >= 2 and hub.connected.is_set()
