"""The API's own table (`api_tokens`): tokens by name, stored as hashes, with a person and
scopes. Migrated by the bot as owner "api"; queries are named blocks in sql/queries.sql."""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from taskqueue import BadInput, ConnectionSource, migrate, parse_queries

OWNER = "api"
NAME_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")
SCOPES = ("ask", "decide", "read", "work")
# Every token starts with this, so a leaked one is recognisable (and grep-able).
PREFIX = "signoff_"
MAX_TOKEN_CHARS = 200


@dataclass(frozen=True)
class Token:
    """A token's record (never the token itself)."""

    name: str
    person: str | None
    scopes: tuple[str, ...]
    created_at: datetime
    last_used_at: datetime | None = None
    revoked_at: datetime | None = None

    @property
    def actor(self) -> str:
        """Who its actions are recorded as: its person, else `agent:NAME`."""
        return self.person or f"agent:{self.name}"

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "person": self.person, "scopes": list(self.scopes),
                "created_at": self.created_at.isoformat(),
                "last_used_at": self.last_used_at.isoformat() if self.last_used_at else None,
                "revoked": self.revoked_at is not None}


def check_token_name(name: str) -> str:
    if not isinstance(name, str) or not NAME_RULE.match(name):
        raise BadInput("a token name is 1-64 letters, digits, _ . @ or -, starting with a "
                       "letter or digit")
    return name


def check_scopes(text: str) -> tuple[str, ...]:
    """`ask,decide,read,work` (any of them, comma-separated) as a sorted tuple."""
    wanted = tuple(sorted({s.strip() for s in text.split(",") if s.strip()}))
    unknown = [s for s in wanted if s not in SCOPES]
    if not wanted or unknown:
        raise BadInput(f"--scopes takes a comma-separated list of {', '.join(SCOPES)}"
                       + (f", not {unknown[0][:40]!r}" if unknown else ""))
    return wanted


def new_token() -> str:
    return PREFIX + secrets.token_urlsafe(32)


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


def _token(row: dict[str, Any]) -> Token:
    return Token(row["name"], row["person"], tuple(row["scopes"]), row["created_at"],
                 row["last_used_at"], row["revoked_at"])


@cache
def _queries() -> dict[str, str]:
    return parse_queries(resources.files(__package__).joinpath("sql", "queries.sql")
                         .read_text("utf-8"))


async def migrate_tokens(dsn: str) -> list[str]:
    """Apply the API's own migrations (after the core's)."""
    folder = Path(str(resources.files(__package__).joinpath("migrations")))
    return await migrate(dsn, folder, owner=OWNER)


class TokenStore:
    """Add, find (by the token presented), list and revoke tokens."""

    def __init__(self, pool: ConnectionSource) -> None:
        self.pool = pool

    async def _rows(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        async with self.pool.connection() as conn:
            cur = await conn.execute(_queries()[name], params)
            return list(await cur.fetchall())

    async def token_add(self, name: str, person: str | None, scopes: tuple[str, ...]
                        ) -> str | None:
        """A new token (returned once, stored as its hash); None when the name is taken."""
        token = new_token()
        found = await self._rows("token_add", {"name": name, "token_hash": token_hash(token),
                                               "person": person, "scopes": list(scopes)})
        return token if found else None

    async def token_find(self, token: str) -> Token | None:
        """The live token presented, or None."""
        if not token.startswith(PREFIX) or len(token) > MAX_TOKEN_CHARS:
            return None
        found = await self._rows("token_find", {"token_hash": token_hash(token)})
        return _token(found[0]) if found else None

    async def token_list(self) -> list[Token]:
        return [_token(r) for r in await self._rows("token_list", {})]

    async def token_revoke(self, name: str) -> bool:
        return bool(await self._rows("token_revoke", {"name": name}))
