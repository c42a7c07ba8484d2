"""The `[api]` table: whether the service serves the HTTP API, and each token's rate limit.

`enabled` (default true) mounts /api/v1/ on the service's `[http]` listener and on
`signoff web`; `rate_per_minute` (default 120) and `burst` (default 60) bound each token's
requests (beyond them: 429 with Retry-After).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from bot.people import people_from_config
from taskqueue import Config, person_key

_KEYS = {"enabled", "rate_per_minute", "burst"}


@dataclass(frozen=True)
class ApiSettings:
    enabled: bool = True
    rate_per_minute: int = 120
    burst: int = 60
    # The configured people's names, case-folded ([people.NAME]; empty: none configured,
    # and a token's person decides as given).
    people: frozenset[str] = field(default_factory=frozenset)


def from_config(config: Config) -> ApiSettings:
    """The checked `[api]` table (absent: the defaults)."""
    c = config.checker()
    t = c.table({"api": config.sections.get("api", {})}, ("api",), _KEYS)
    enabled: bool = c.get(t, ("api", "enabled"), "bool", True)
    rate: int = c.get(t, ("api", "rate_per_minute"), "int", 120, minimum=1, maximum=1_000_000)
    burst: int = c.get(t, ("api", "burst"), "int", 60, minimum=1, maximum=1_000_000)
    people = frozenset(person_key(n) for n in people_from_config(config).by_name)
    return ApiSettings(bool(enabled), int(rate), int(burst), people)
