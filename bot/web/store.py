"""The web channel's own tables (`web_accounts`, `web_sessions`, `web_secrets`,
`web_first_links`): who may sign in, who is signed in, the key CSRF tokens are made with, and
the one-time links that create the first account. Migrated by the bot as owner "web"; queries
are named blocks in sql/queries.sql, loaded once."""

from __future__ import annotations

import re
import secrets
from dataclasses import dataclass
from datetime import datetime
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from taskqueue import BadInput, ConnectionSource, migrate, parse_queries

OWNER = "web"
NAME_RULE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.@-]{0,63}$")


@dataclass(frozen=True)
class Account:
    """A person who may sign in (the hash only when read for a sign-in)."""

    name: str
    created_at: datetime
    password_changed_at: datetime
    last_login_at: datetime | None = None
    password_hash: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "created_at": self.created_at.isoformat(),
                "password_changed_at": self.password_changed_at.isoformat(),
                "last_login_at": self.last_login_at.isoformat() if self.last_login_at else None}


def check_account_name(name: str) -> str:
    """An account name: 1-64 letters, digits, `_.@-`, starting with a letter or digit."""
    if not isinstance(name, str) or not NAME_RULE.match(name):
        raise BadInput("an account name is 1-64 letters, digits, _ . @ or -, starting with a "
                       "letter or digit")
    return name


@cache
def _queries() -> dict[str, str]:
    return parse_queries(resources.files(__package__).joinpath("sql", "queries.sql")
                         .read_text("utf-8"))


async def migrate_accounts(dsn: str) -> list[str]:
    """Apply the channel's own migrations (after the core's)."""
    folder = Path(str(resources.files(__package__).joinpath("migrations")))
    return await migrate(dsn, folder, owner=OWNER)


class AccountStore:
    """Reads and writes the web channel's tables on a connection pool."""

    def __init__(self, pool: ConnectionSource) -> None:
        self.pool = pool

    async def _rows(self, name: str, params: dict[str, Any]) -> list[dict[str, Any]]:
        async with self.pool.connection() as conn, conn.transaction():
            cur = await conn.execute(_queries()[name], params)
            if cur.description is None:
                return []
            return [dict(row) for row in await cur.fetchall()]  # the pool makes dict rows

    async def account_add(self, name: str, password_hash: str) -> bool:
        """Create an account; False when the name is taken."""
        found = await self._rows("account_add", {"name": check_account_name(name),
                                                 "hash": password_hash})
        return bool(found)

    async def account_password_set(self, name: str, password_hash: str) -> bool:
        """Change a password (ending the account's sessions); False when there is none."""
        return bool(await self._rows("account_password_set", {"name": name,
                                                               "hash": password_hash}))

    async def account_remove(self, name: str) -> bool:
        return bool(await self._rows("account_remove", {"name": name}))

    async def account_get(self, name: str) -> Account | None:
        found = await self._rows("account_get", {"name": name})
        return Account(**found[0]) if found else None

    async def account_list(self) -> list[Account]:
        return [Account(**r) for r in await self._rows("account_list", {})]

    async def account_count(self) -> int:
        return int((await self._rows("account_count", {}))[0]["n"])

    async def account_logged_in(self, name: str) -> None:
        await self._rows("account_logged_in", {"name": name})

    async def account_hash_upgrade(self, name: str, old: str, new: str) -> bool:
        """Replace a hash with a stronger one of the same password (sessions stand)."""
        return bool(await self._rows("account_hash_upgrade", {"name": name, "old": old,
                                                              "hash": new}))

    async def session_add(self, sid: str, account: str, seconds: int) -> dict[str, Any]:
        """A new session row (`sid` is the cookie token's hash)."""
        return (await self._rows("session_add", {"id": sid, "account": account,
                                                 "seconds": seconds}))[0]

    async def session_get(self, sid: str) -> dict[str, Any] | None:
        """The live session `sid`, when its account stands and its password is unchanged."""
        found = await self._rows("session_get", {"id": sid})
        return found[0] if found else None

    async def session_remove(self, sid: str) -> bool:
        return bool(await self._rows("session_remove", {"id": sid}))

    async def session_remove_all(self, account: str) -> int:
        """End every session of `account` (sign out everywhere); how many there were."""
        return len(await self._rows("session_remove_all", {"account": account}))

    async def session_count(self, account: str) -> int:
        return int((await self._rows("session_count", {"account": account}))[0]["n"])

    async def secret_ensure(self, name: str = "session") -> bytes:
        """The database's signing key, made on first use."""
        found = await self._rows("secret_ensure", {"name": name,
                                                   "value": secrets.token_hex(32)})
        return bytes.fromhex(found[0]["value"])

    async def first_link_add(self, token_hash: str, seconds: float) -> None:
        """Keep a new one-time link's hash, valid for `seconds`."""
        await self._rows("first_link_add", {"hash": token_hash, "seconds": seconds})

    async def first_link_open(self, token_hash: str) -> tuple[bool, bool]:
        """(whether the link still works, whether any account exists)."""
        found = await self._rows("first_link_open", {"hash": token_hash})
        if not found:
            return False, await self.account_count() > 0
        return bool(found[0]["usable"]), bool(found[0]["accounts"])

    async def first_link_use(self, token_hash: str, name: str, password_hash: str) -> bool:
        """Use the link to create the first account, at most once; False (nothing written)
        when it is used, expired, unknown, or an account exists."""
        params = {"hash": token_hash, "name": check_account_name(name),
                  "password_hash": password_hash}
        async with self.pool.connection() as conn, conn.transaction():
            await conn.execute(_queries()["first_link_lock"])
            cur = await conn.execute(_queries()["first_link_use"], params)
            return bool(await cur.fetchall())
