"""Each token's request rate (a token bucket per token name, in memory, per process)."""

from __future__ import annotations

import time

# Buckets remembered at most (the longest idle go first), so names cannot eat memory.
MAX_BUCKETS = 10_000


class TokenBuckets:
    """`take(name)` spends one request of `name`'s bucket: 0 when allowed, else the seconds
    until one is (the Retry-After)."""

    def __init__(self, rate_per_minute: int, burst: int) -> None:
        self.rate = rate_per_minute / 60.0
        self.burst = float(burst)
        self._buckets: dict[str, tuple[float, float]] = {}  # name: (tokens, at)

    def take(self, name: str) -> float:
        now = time.monotonic()
        tokens, at = self._buckets.pop(name, (self.burst, now))
        tokens = min(self.burst, tokens + (now - at) * self.rate)
        if tokens < 1:
            self._buckets[name] = (tokens, now)
            return (1 - tokens) / self.rate
        self._buckets[name] = (tokens - 1, now)
        while len(self._buckets) > MAX_BUCKETS:
            self._buckets.pop(next(iter(self._buckets)))
        return 0.0
