"""The one-time links' rules in the database (bot/web/firstlink.py, store.py): only a hash is
kept; a link makes one account, once, before it expires and while no account exists, also
when several requests use links at the same moment."""

from __future__ import annotations

import asyncio

import psycopg

from bot.web.firstlink import first_link_issue, token_hash
from bot.web.store import AccountStore
from taskqueue import TaskQueue
from tests.bot.web.conftest import PASSWORD_HASH


def _rows(dsn: str, sql: str) -> list[tuple[object, ...]]:
    with psycopg.connect(dsn) as conn:
        return conn.execute(sql).fetchall()


async def test_only_the_tokens_hash_is_kept(dsn: str, queue: TaskQueue) -> None:
    store = AccountStore(queue.pool)
    token = await first_link_issue(store)
    assert len(token) >= 40
    rows = _rows(dsn, "SELECT token_hash, expires_at - created_at, used_at FROM web_first_links")
    assert [(r[0], round(r[1].total_seconds()), r[2]) for r in rows] == [  # type: ignore[union-attr]
        (token_hash(token), 900, None)]
    dump = str(_rows(dsn, "SELECT * FROM web_first_links"))
    assert token not in dump


async def test_a_link_makes_one_account_once(queue: TaskQueue) -> None:
    store = AccountStore(queue.pool)
    token = await first_link_issue(store)
    assert await store.first_link_open(token_hash(token)) == (True, False)
    assert await store.first_link_use(token_hash(token), "ada", PASSWORD_HASH)
    assert [a.name for a in await store.account_list()] == ["ada"]
    assert await store.first_link_open(token_hash(token)) == (False, True)
    assert not await store.first_link_use(token_hash(token), "eve", PASSWORD_HASH)
    assert [a.name for a in await store.account_list()] == ["ada"]


async def test_an_expired_or_unknown_link_or_one_after_an_account_makes_nothing(
        dsn: str, queue: TaskQueue) -> None:
    store = AccountStore(queue.pool)
    expired, later = await first_link_issue(store), await first_link_issue(store)
    _rows(dsn, "UPDATE web_first_links SET expires_at = now() - interval '1 second' "
               f"WHERE token_hash = '{token_hash(expired)}' RETURNING 1")
    assert await store.first_link_open(token_hash(expired)) == (False, False)
    assert not await store.first_link_use(token_hash(expired), "ada", PASSWORD_HASH)
    assert not await store.first_link_use(token_hash("not a token"), "ada", PASSWORD_HASH)
    assert await store.account_count() == 0
    # The other direction: a link that has not expired works until an account exists.
    assert await store.first_link_open(token_hash(later)) == (True, False)
    assert await store.account_add("bob", PASSWORD_HASH)
    assert await store.first_link_open(token_hash(later)) == (False, True)
    assert not await store.first_link_use(token_hash(later), "ada", PASSWORD_HASH)
    assert [a.name for a in await store.account_list()] == ["bob"]


async def test_one_link_used_by_many_requests_at_once_makes_one_account(
        queue: TaskQueue) -> None:
    store = AccountStore(queue.pool)
    token = await first_link_issue(store)
    names = [f"user{i}" for i in range(8)]
    made = await asyncio.gather(*(store.first_link_use(token_hash(token), name, PASSWORD_HASH)
                                  for name in names))
    assert sum(made) == 1
    assert [a.name for a in await store.account_list()] == [names[made.index(True)]]


async def test_two_links_used_at_once_make_one_first_account(queue: TaskQueue) -> None:
    # Two services started with no account each print a link; both opened at once.
    store = AccountStore(queue.pool)
    tokens = [await first_link_issue(store) for _ in range(6)]
    made = await asyncio.gather(*(store.first_link_use(token_hash(t), f"p{i}", PASSWORD_HASH)
                                  for i, t in enumerate(tokens)))
    assert sum(made) == 1 and await store.account_count() == 1
