"""The one-time sign-in link that lets the first person create their account in the browser.

While no web account exists, a web process on a loopback address makes a random token, keeps
only its SHA-256 (`web_first_links`) and prints `http://HOST:PORT/welcome?token=TOKEN` once,
as Jupyter prints its token URL. The link works once, for LINK_SECONDS, and only while there
is no account. Right after that one line the token is registered as a secret, so every other
log line (an error naming the URL, the request log) shows it masked.
"""

from __future__ import annotations

import hashlib
import logging
import secrets

from bot.web.store import AccountStore
from taskqueue import secret_register

# How long a printed link works (seconds).
LINK_SECONDS = 15 * 60
# The token's random bytes (256 bits: guessing one is out of reach, so no rate limit).
TOKEN_BYTES = 32
# A token longer than this is not one of ours (the query string is bounded before hashing).
MAX_TOKEN_CHARS = 100
PATH = "/welcome"


def token_hash(token: str) -> str:
    """What the database keeps of a token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


async def first_link_issue(store: AccountStore, seconds: float = LINK_SECONDS) -> str:
    """A new token, its hash stored; the caller prints it once (say_link_once)."""
    token = secrets.token_urlsafe(TOKEN_BYTES)
    await store.first_link_add(token_hash(token), seconds)
    return token


def base_url(host: str, port: int, scheme: str = "http") -> str:
    """`http://HOST:PORT` (an IPv6 address in brackets)."""
    shown = f"[{host}]" if ":" in host else host
    return f"{scheme}://{shown}:{port}"


def say_link_once(log: logging.Logger, base: str, token: str) -> None:
    """Log the link in one INFO line, then mask the token in every later line."""
    log.info("inbox: %s%s?token=%s (one-time link: create the first account there; it "
             "works once, for %d minutes)", base, PATH, token, LINK_SECONDS // 60)
    secret_register(token)
