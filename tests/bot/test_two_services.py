"""Two `python -m bot` services on one database: one leader polls Telegram and sends the digest
and the alerts; the other stands by and takes over when the leader dies or stops."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from taskqueue import TaskQueue
from tests.bot.conftest import ALICE, button, events, eventually, sent_row
from tests.bot.fake_telegram import FakeTelegram
from tests.bot.services import BotService, start_service, stop_all
from tests.taskqueue.worker_helpers import wait_status

pytestmark = pytest.mark.slow


class Started(list[BotService]):
    """The services a test started; all stopped at its end, whatever happened."""

    def start(self, name: str, dsn: str, fake: FakeTelegram, folder: Path,
              **kwargs: str) -> BotService:
        service = start_service(name, dsn, fake.url, fake.token, folder, **kwargs)
        self.append(service)
        return service


@pytest.fixture
async def started() -> AsyncIterator[Started]:
    services = Started()
    yield services
    await stop_all(*services)


def _leader(a: BotService, b: BotService) -> BotService | None:
    """The one whose /healthz says leader while the other's says standby, else None."""
    roles = {s.name: s.healthz()[1].get("role") for s in (a, b)}
    if sorted(str(r) for r in roles.values()) != ["leader", "standby"]:
        return None
    return a if roles[a.name] == "leader" else b


async def _roles_settled(a: BotService, b: BotService) -> BotService:
    try:
        return await eventually(lambda: asyncio.to_thread(_leader, a, b))
    except AssertionError:
        raise AssertionError("no leader and standby settled:\n"
                             + "\n".join(s.describe() for s in (a, b))) from None


def _texts(fake: FakeTelegram, word: str) -> list[str]:
    return [c.params["text"] for c in fake.calls_to("sendMessage") if word in c.params["text"]]


def _approval_messages(fake: FakeTelegram) -> list[str]:
    """The approval requests sent (each carries its buttons; a task id in its text)."""
    return [c.params["text"] for c in fake.calls_to("sendMessage", "sendPhoto", "sendDocument")
            if c.params.get("reply_markup")]


def _digest_minute() -> tuple[str, datetime]:
    """A digest time (UTC HH:MM) at least 25 s away, and when it fires."""
    at = (datetime.now(UTC) + timedelta(seconds=85)).replace(second=0, microsecond=0)
    return at.strftime("%H:%M"), at


async def test_two_services_share_the_work_and_only_the_leader_polls_digests_and_alerts(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, tmp_path: Path,
        started: Started) -> None:
    digest, fires_at = _digest_minute()
    a = started.start("a", dsn, fake, tmp_path, digest=digest)
    b = started.start("b", dsn, fake, tmp_path, digest=digest)
    try:
        leader = await _roles_settled(a, b)
        standby = b if leader is a else a
        ids = [(await queue.task_enqueue("asks", {"n": i})).id for i in range(12)]
        for task_id in ids:
            await wait_status(queue, task_id, "needs_approval")
        await fake.wait_for(lambda: len(_approval_messages(fake)) >= len(ids))
        # Incident: more than 3 claimable tasks nobody serves, checked every 1.2 s.
        for _ in range(5):
            await queue.task_enqueue("nobody", {})
        await fake.wait_for(lambda: _texts(fake, "Incident"))
        wait = (fires_at - datetime.now(UTC)).total_seconds() + 1
        await asyncio.sleep(max(wait, 0))
        await fake.wait_for(lambda: _texts(fake, "waiting for you"))
        await asyncio.sleep(3)  # room for a second digest or alert, which must not come
        assert leader.metric("signoff_leader") == 1 and standby.metric("signoff_leader") == 0
        assert _leader(a, b) is leader
    finally:
        await stop_all(a, b)
    assert sorted(_approval_messages(fake)) == sorted(set(_approval_messages(fake)))
    assert len(_approval_messages(fake)) == len(ids)
    assert len(_texts(fake, "Incident")) == 1
    assert len(_texts(fake, "waiting for you")) == 1
    # One poller at any moment: the standby never polled, nothing was answered 409.
    assert fake.pollers() == [leader.name] and fake.conflicts == []
    assert "job skipped job=incident_check: this service is a standby" in standby.output()
    assert "is now leader" in leader.output() and "is now leader" not in standby.output()


async def _first_poll_after(fake: FakeTelegram, name: str, since: float) -> float:
    polls = await fake.wait_for(lambda: [c.started_at for c in fake.calls_to("getUpdates")
                                         if c.client == name and c.started_at >= since])
    return float(polls[0])


async def _started_pair(dsn: str, queue: TaskQueue, fake: FakeTelegram, folder: Path,
                        started: Started,
                        ) -> tuple[BotService, BotService, int, dict[str, object]]:
    """Two services; one approval request sent; (leader, standby, task id, message)."""
    a = started.start("a", dsn, fake, folder)
    b = started.start("b", dsn, fake, folder)
    leader = await _roles_settled(a, b)
    standby = b if leader is a else a
    await fake.wait_for(lambda: fake.pollers() == [leader.name])
    task_id = (await queue.task_enqueue("asks", {})).id
    await wait_status(queue, task_id, "needs_approval")
    [approval] = await queue.approval_list_open()
    await sent_row(queue, approval.id)  # recorded: a leader killed now owes nothing
    [message] = await fake.wait_for(fake.sent_with_buttons)
    return leader, standby, task_id, message


async def test_a_killed_leader_is_replaced_within_ten_seconds_and_a_tap_is_answered_once(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, tmp_path: Path, started: Started,
        ) -> None:
    leader, standby, task_id, message = await _started_pair(dsn, queue, fake, tmp_path,
                                                            started)
    try:
        killed = time.monotonic()
        leader.kill()
        await leader.exit_code()
        await fake.tap(message, ALICE, button(message, 0))  # tapped while nobody polls
        took = await _first_poll_after(fake, standby.name, killed) - killed
        await wait_status(queue, task_id, "succeeded")
        status, body = await asyncio.to_thread(standby.healthz)
        assert (status, body["role"]) == (200, "leader")
    finally:
        await stop_all(leader, standby)
    print(f"takeover after kill -9: {took:.2f}s")  # shown with -s
    assert took < 10, f"the standby polled {took:.1f}s after the leader died"
    answers = fake.calls_to("answerCallbackQuery")
    assert len(answers) == 1 and answers[0].client == standby.name
    assert len(await events(queue, task_id, "decided")) == 1


async def test_a_stopped_leader_hands_over_within_two_seconds(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, tmp_path: Path, started: Started,
        ) -> None:
    leader, standby, _, _ = await _started_pair(dsn, queue, fake, tmp_path, started)
    try:
        stopped = time.monotonic()
        leader.terminate()
        took = await _first_poll_after(fake, standby.name, stopped) - stopped
        assert await leader.exit_code() == 0
    finally:
        await stop_all(leader, standby)
    print(f"takeover after SIGTERM: {took:.2f}s")  # shown with -s
    assert took < 2, f"the standby polled {took:.1f}s after SIGTERM"
    assert "leadership: released" in leader.output()
    assert fake.conflicts == []


async def test_a_leader_whose_lock_connection_is_cut_stops_polling(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, tmp_path: Path,
        started: Started) -> None:
    from tests.taskqueue.runtime.test_leadership import lock_holders, terminate

    leader, standby, _, _ = await _started_pair(dsn, queue, fake, tmp_path, started)
    try:
        [pid] = lock_holders(dsn)
        cut = time.monotonic()
        terminate(pid)
        await eventually(lambda: asyncio.to_thread(
            lambda: "stopped polling" in leader.output()))
        await eventually(lambda: asyncio.to_thread(lambda: _leader(leader, standby)))
        new = _leader(leader, standby)
        assert new is not None
        took = await _first_poll_after(fake, new.name, cut) - cut
        print(f"a leader polls again after a cut lock connection: {took:.2f}s")  # with -s
        assert took < 10, f"nobody polled until {took:.1f}s after the cut"
        await asyncio.sleep(2)
        # From now on only the new leader polls.
        since = time.monotonic()
        await asyncio.sleep(2)
        assert fake.pollers(since) == [new.name]
    finally:
        await stop_all(leader, standby)
    assert "lost its database connection" in leader.output()


async def _all_recorded(queue: TaskQueue) -> bool:
    """Every owed Telegram message of the outbox is recorded as delivered."""
    async with queue.pool.connection() as conn:
        cur = await conn.execute("SELECT count(*) AS n FROM notification_deliveries "
                                 "WHERE channel = 'telegram' AND delivered_at IS NULL")
        row = await cur.fetchone()
    return row is not None and row["n"] == 0


@pytest.mark.parametrize("mode", ["direct", "polling"])
async def test_two_services_through_pgbouncer_one_leader_each_message_once(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, tmp_path: Path, started: Started,
        mode: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """Both services reach the database through PgBouncer in transaction mode: with
    SIGNOFF_DIRECT_URL (the leader's lock and LISTEN on the server) or without (a lease
    row, polling). One leads, each request is sent once, a killed leader is replaced."""
    from tests.conftest import ADMIN_DSN
    from tests.pgbouncer import pgbouncer

    monkeypatch.delenv("SIGNOFF_POOLER", raising=False)
    if mode == "direct":
        monkeypatch.setenv("SIGNOFF_DIRECT_URL", dsn)
    else:
        monkeypatch.delenv("SIGNOFF_DIRECT_URL", raising=False)
    with pgbouncer(ADMIN_DSN) as bouncer:
        pooled = bouncer.dsn_for(dsn)
        a = started.start("a", pooled, fake, tmp_path)
        b = started.start("b", pooled, fake, tmp_path)
        try:
            leader = await _roles_settled(a, b)
            standby = b if leader is a else a
            ids = [(await queue.task_enqueue("asks", {"n": i})).id for i in range(6)]
            for task_id in ids:
                await wait_status(queue, task_id, "needs_approval")
            await fake.wait_for(lambda: len(_approval_messages(fake)) >= len(ids))
            # Killed only once every send is recorded: a sender killed between Telegram's
            # answer and its record sends again after the lease (at least once, documented in
            # docs/deployment.md), which is not what this test is about.
            await eventually(lambda: _all_recorded(queue))
            assert fake.pollers() == [leader.name]
            killed = time.monotonic()
            leader.kill()
            await leader.exit_code()
            took = await _first_poll_after(fake, standby.name, killed) - killed
        finally:
            await stop_all(a, b)
    print(f"takeover through PgBouncer ({mode}): {took:.2f}s")  # shown with -s
    assert took < 10
    assert len(_approval_messages(fake)) == len(ids)
    assert sorted(_approval_messages(fake)) == sorted(set(_approval_messages(fake)))
    said = "through a transaction pooler without SIGNOFF_DIRECT_URL"
    for s in (a, b):
        assert s.output().count(said) == (1 if mode == "polling" else 0), s.output()
        assert "prepared statement" not in s.output()


async def test_a_thirty_second_outage_under_two_services_sends_nothing_twice(
        dsn: str, queue: TaskQueue, fake: FakeTelegram, tmp_path: Path,
        started: Started) -> None:
    """Telegram accepts a request's message just as the database goes away for 30 s (far past
    the outbox's 6 s claim lease); its sender records it once the database is back, and the
    other service, which saw the same outage, does not send it again."""
    from tests.taskqueue.worker_helpers import set_connections, terminate_backends

    a = started.start("a", dsn, fake, tmp_path)
    b = started.start("b", dsn, fake, tmp_path)
    await _roles_settled(a, b)
    fake.delays["sendMessage"] = 3.0  # Telegram answers after the database went away
    task_id = (await queue.task_enqueue("asks", {})).id
    await wait_status(queue, task_id, "needs_approval")
    await fake.wait_for(lambda: [c for c in fake.calls if c.method == "sendMessage"])
    set_connections(dsn, allowed=False)
    try:
        terminate_backends(dsn)
        await asyncio.sleep(30)
    finally:
        set_connections(dsn, allowed=True)
    [approval] = await eventually(queue.approval_list_open)
    await sent_row(queue, approval.id)  # its sender recorded it
    await asyncio.sleep(15)  # past two leases: room for a second send, which must not come
    await stop_all(a, b)
    sends = [c for c in fake.calls if c.method == "sendMessage" and c.params.get("reply_markup")]
    assert len(sends) == 1, [c.client for c in sends]
    notified = [e for e in await events(queue, task_id, "notified")
                if e.detail.get("channel") == "telegram"]
    assert len(notified) == 1
