"""The `[web]` table: whether the service serves the web inbox, and cookie settings.

`enabled` (default true) mounts the inbox on the service's `[http]` listener;
`secure_cookies` (default false) marks the session cookie Secure even when the request came
over plain HTTP (behind a proxy that terminates TLS); over TLS it is always Secure.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field

from bot.people import people_from_config
from taskqueue import Config

_KEYS = {"enabled", "secure_cookies"}


@dataclass(frozen=True)
class WebSettings:
    enabled: bool = True
    secure_cookies: bool = False
    # [people.NAME] web_account: the person's name a decision records (bot/people.py).
    people: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)


def from_config(config: Config) -> WebSettings:
    """The checked `[web]` table (absent: the defaults)."""
    c = config.checker()
    t = c.table({"web": config.sections.get("web", {})}, ("web",), _KEYS)
    enabled: bool = c.get(t, ("web", "enabled"), "bool", True)
    secure: bool = c.get(t, ("web", "secure_cookies"), "bool", False)
    people = {p.web_account: p.name for p in people_from_config(config).by_name.values()
              if p.web_account is not None}
    return WebSettings(bool(enabled), bool(secure), people)


def is_loopback(host: str) -> bool:
    """Whether `host` is only reachable from this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
