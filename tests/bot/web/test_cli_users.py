"""`signoff web user add|remove|list`: accounts from the command line, passwords from stdin."""

from __future__ import annotations

import asyncio

from bot.web.passwords import verify_password
from bot.web.store import AccountStore
from taskqueue import TaskQueue
from tests.taskqueue.cli_helpers import CONFLICT, ERROR, NOT_FOUND, Cli


def _hash(dsn: str, name: str) -> str | None:
    async def read() -> str | None:
        async with TaskQueue.connect(dsn, max_size=1) as queue:
            found = await AccountStore(queue.pool).account_get(name)
        return found.password_hash if found else None
    return asyncio.run(read())


def test_add_list_update_and_remove_an_account(dsn: str) -> None:
    cli = Cli(dsn).fast
    assert "no accounts" in cli.ok("web", "user", "list")
    cli.ok("web", "user", "add", "alice", "--password-stdin", stdin="first password\n")
    stored = _hash(dsn, "alice")
    assert stored and stored.startswith("$argon2id$") and "first password" not in stored
    assert verify_password("first password", stored)
    assert "exists" in cli.fails(CONFLICT, "web", "user", "add", "alice", "--password-stdin",
                                 stdin="another one\n")
    cli.ok("web", "user", "add", "alice", "--update", "--password-stdin", stdin="second one!\n")
    assert verify_password("second one!", _hash(dsn, "alice") or "")
    assert [a["name"] for a in cli.json("web", "user", "list", "--json")] == ["alice"]
    cli.ok("web", "user", "remove", "alice")
    cli.fails(NOT_FOUND, "web", "user", "remove", "alice")
    assert _hash(dsn, "alice") is None


def test_each_account_command_prints_one_json_document_with_json(dsn: str) -> None:
    cli = Cli(dsn).fast
    assert cli.json("web", "user", "add", "bob", "--password-stdin", "--json",
                    stdin="a password\n") == {"name": "bob", "added": True}
    assert cli.json("web", "user", "add", "bob", "--update", "--password-stdin", "--json",
                    stdin="another one\n") == {"name": "bob", "changed": True}
    assert cli.json("web", "user", "remove", "bob", "--json") == {"name": "bob",
                                                                  "removed": True}


def test_bad_names_and_passwords_write_nothing(dsn: str) -> None:
    cli = Cli(dsn).fast
    assert "password is 8 to" in cli.fails(ERROR, "web", "user", "add", "bob",
                                           "--password-stdin", stdin="short\n")
    assert "account name" in cli.fails(ERROR, "web", "user", "add", "bad name",
                                       "--password-stdin", stdin="long enough\n")
    assert "--password-stdin" in cli.fails(ERROR, "web", "user", "add", "bob")  # no terminal
    assert cli.json("web", "user", "list", "--json") == []
