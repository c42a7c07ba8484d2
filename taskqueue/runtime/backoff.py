"""Back-off for every retry and reconnect: tenacity's full jitter (a wait drawn uniformly
from 0 to min(cap, initial * 2**(attempt-1))), so parties that lost the database at the
same moment do not come back in lockstep."""

from __future__ import annotations

from tenacity import RetryCallState, Retrying, wait_random_exponential

# The call state a wait strategy reads (only its attempt number matters here).
_RETRYING = Retrying()


def full_jitter(initial: float, cap: float) -> wait_random_exponential:
    """tenacity's wait strategy for AsyncRetrying: full jitter from `initial` up to `cap`."""
    return wait_random_exponential(multiplier=initial, max=cap)


class Backoff:
    """The waits of one party's retries, for loops that outlive any one attempt (a
    reconnecting listener, a worker while the database is away): `next()` after each
    failure, `reset()` after a success."""

    def __init__(self, initial: float, cap: float) -> None:
        self.initial, self.cap = initial, cap
        self.wait = full_jitter(initial, cap)
        self.attempt = 0
        self.last: float | None = None  # the latest wait next() drew

    def delay(self, attempt: int) -> float:
        """The wait before retry number `attempt` (1 for the first), drawn afresh."""
        state = RetryCallState(_RETRYING, None, (), {})
        state.attempt_number = max(1, attempt)
        return float(self.wait(state))

    def next(self) -> float:
        """The wait after one more failure."""
        self.attempt += 1
        self.last = self.delay(self.attempt)
        return self.last

    def reset(self) -> None:
        self.attempt = 0
