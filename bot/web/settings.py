"""The `[web]` table: whether the service serves the web inbox, and cookie settings.

`enabled` (default true) mounts the inbox on the service's `[http]` listener;
`secure_cookies` (default false) marks the session cookie Secure even when the request came
over plain HTTP (behind a proxy that terminates TLS); over TLS it is always Secure.
"""

from __future__ import annotations

import ipaddress
from collections.abc import Mapping
from dataclasses import dataclass, field
from urllib.parse import urlsplit

from bot.people import people_from_config
from taskqueue import Config

_KEYS = {"enabled", "secure_cookies", "public_url"}


@dataclass(frozen=True)
class WebSettings:
    enabled: bool = True
    secure_cookies: bool = False
    # [people.NAME] web_account: the person's name a decision records (bot/people.py).
    people: Mapping[str, str] = field(default_factory=dict, hash=False, compare=False)
    # The address people reach the inbox at (passkeys' relying party; None: the host the
    # browser used).
    public_url: str | None = None


def from_config(config: Config) -> WebSettings:
    """The checked `[web]` table (absent: the defaults)."""
    c = config.checker()
    t = c.table({"web": config.sections.get("web", {})}, ("web",), _KEYS)
    enabled: bool = c.get(t, ("web", "enabled"), "bool", True)
    secure: bool = c.get(t, ("web", "secure_cookies"), "bool", False)
    people = {p.web_account: p.name for p in people_from_config(config).by_name.values()
              if p.web_account is not None}
    public_url = c.get(t, ("web", "public_url"), "str", None)
    if public_url is not None:
        parts = urlsplit(public_url)
        if parts.scheme not in ("http", "https") or not parts.hostname or parts.path not in (
                "", "/") or parts.query or parts.fragment:
            raise c.error(("web", "public_url"), "must be the inbox's address, e.g. "
                                                 "https://signoff.example.com")
        public_url = f"{parts.scheme}://{parts.netloc}"
    return WebSettings(bool(enabled), bool(secure), people, public_url)


def is_loopback(host: str) -> bool:
    """Whether `host` is only reachable from this machine (127.0.0.0/8, ::1, localhost)."""
    if host.lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False
