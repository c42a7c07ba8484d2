"""Sign-in attempts, limited per account and per address (in memory, per process)."""

from __future__ import annotations

import time
from collections import deque

# At most this many failed sign-ins per account, and per address, within WINDOW seconds.
MAX_FAILURES = 5
WINDOW = 300.0
# Keys remembered at most (the oldest go first), so a flood of names cannot eat memory.
MAX_KEYS = 10_000


class LoginLimiter:
    """`retry_after(account, address)` says how long to wait (0: go ahead); `failed()`
    counts a failure; `succeeded()` forgets the account's failures."""

    def __init__(self, max_failures: int = MAX_FAILURES, window: float = WINDOW) -> None:
        self.max_failures, self.window = max_failures, window
        self._failures: dict[str, deque[float]] = {}

    def _recent(self, key: str, now: float) -> deque[float]:
        found = self._failures.get(key)
        if found is None:
            return deque()
        while found and now - found[0] > self.window:
            found.popleft()
        if not found:
            del self._failures[key]
        return found

    def retry_after(self, account: str, address: str) -> float:
        now = time.monotonic()
        wait = 0.0
        for key in (f"account:{account.lower()}", f"address:{address}"):
            recent = self._recent(key, now)
            if len(recent) >= self.max_failures:
                wait = max(wait, self.window - (now - recent[0]))
        return wait

    def failed(self, account: str, address: str) -> None:
        now = time.monotonic()
        for key in (f"account:{account.lower()}", f"address:{address}"):
            self._failures.setdefault(key, deque()).append(now)
            self._failures[key] = deque(list(self._failures[key])[-self.max_failures:])
        while len(self._failures) > MAX_KEYS:
            self._failures.pop(next(iter(self._failures)))

    def succeeded(self, account: str) -> None:
        self._failures.pop(f"account:{account.lower()}", None)
