"""The Telegram channel against the fake Bot API: exactly once, restarts, outages, limits."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator

import psycopg
import pytest
from telegram import Bot

from bot.telegram.courier import Courier
from bot.telegram.delivery import RECORD_RETRY_MAX, TelegramChannel
from bot.telegram.store import CHANNEL, MessageStore, SentMessage
from taskqueue import NewAttachment, TaskQueue
from tests.bot.conftest import CHAT, FAST, park, run_after_a_slow_listen
from tests.bot.fake_telegram import FakeTelegram
from tests.taskqueue.worker_helpers import set_connections, wait_for
from tests.timing import limit

PNG = b"\x89PNG\r\n\x1a\n" + b"\x00" * 32
PDF = b"%PDF-1.4\n" + b"x" * 64


@pytest.fixture
async def ptb_bot(fake: FakeTelegram) -> AsyncIterator[Bot]:
    async with Bot(fake.token, base_url=f"{fake.url}/bot",
                   base_file_url=f"{fake.url}/file/bot") as bot:
        yield bot


def sender(queue: TaskQueue, bot: Bot, name: str = "s1") -> TelegramChannel:
    return TelegramChannel(queue, Courier(bot, FAST), CHAT, name=name, retry_base=0.2,
                           retry_max=0.5)


@pytest.fixture(autouse=True)
async def registered(queue: TaskQueue) -> None:
    await queue.notification_channel_register(CHANNEL)


async def shown(queue: TaskQueue, approval_id: int) -> SentMessage | None:
    return await MessageStore(queue).message_get(approval_id)


async def delivery(queue: TaskQueue, task_id: int) -> dict[str, object]:
    """The Telegram delivery row of the task's (first) request."""
    [row] = [r for r in await queue.notification_list(task_id=task_id, kind="approval_request")
             if r["channel"] == CHANNEL]
    return row


def requests(fake: FakeTelegram) -> list[str]:
    """The texts of the approval messages sent (those with buttons)."""
    return [c.params["text"] for c in fake.calls_to("sendMessage")
            if "reply_markup" in c.params]


async def test_two_senders_send_each_approval_exactly_once(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    parked = [await park(queue, f"Question {i}?") for i in range(12)]
    one, two = sender(queue, ptb_bot, "s1"), sender(queue, ptb_bot, "s2")
    one.batch = two.batch = 2
    reports = await asyncio.gather(one.run_once(), two.run_once(), one.run_once())
    assert sum(r.sent for r in reports) == 12
    texts = requests(fake)
    assert sorted(texts) == sorted(set(texts)) and len(texts) == 12
    for approval in parked:
        row = await shown(queue, approval.id)
        assert row is not None and row.message_id is not None and row.chat_id == CHAT
    assert (await one.run_once()).sent == 0


async def test_an_outage_loses_nothing_and_a_restart_sends_what_is_owed(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    approval = await park(queue)
    fake.fail("sendMessage", 502, "Bad Gateway", times=10)
    report = await sender(queue, ptb_bot, "before-restart").run_once()
    assert report.sent == 0 and report.failed == 1
    assert await shown(queue, approval.id) is None
    row = await delivery(queue, approval.task_id)
    assert row["delivered_at"] is None and "Bad Gateway" in str(row["last_error"])
    fake.failures.clear()
    await asyncio.sleep(0.25)
    restarted = sender(queue, ptb_bot, "after-restart")
    assert (await restarted.run_once()).sent == 1
    assert len(requests(fake)) == 1


async def test_a_sender_that_died_mid_send_is_taken_over_after_its_claim_lapses(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    await park(queue)
    [held] = await queue.notification_claim(CHANNEL, "crashed", lease=0.3)
    assert (await sender(queue, ptb_bot).run_once()).sent == 0
    await asyncio.sleep(0.35)
    assert (await sender(queue, ptb_bot).run_once()).sent == 1
    assert not await queue.notification_mark_delivered(held.id, CHANNEL, "crashed")
    assert len(requests(fake)) == 1


async def test_a_sender_back_from_an_outage_leaves_a_lapsed_claim_to_its_sender(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    """Both senders saw the database go away; the first had sent the row and records it
    once the database is back. The other, back for less than two leases (4 s here), does
    not send it again; a row whose sender never records it is taken once that has passed."""
    approval = await park(queue)
    [held] = await queue.notification_claim(CHANNEL, "first", lease=1)
    other = TelegramChannel(queue, Courier(ptb_bot, FAST), CHAT, name="other", lease=2)
    other._database(False)  # the outage, as its pings saw it
    other._database(True)  # the database is back
    await asyncio.sleep(1.5)  # the first sender's claim lapsed meanwhile
    assert (await other.run_once()).sent == 0
    assert requests(fake) == []
    # The first sender records what it sent: nothing is owed any more.
    await MessageStore(queue).message_save(approval.id, "tok", CHAT, 4242)
    assert await queue.notification_mark_delivered(held.id, CHANNEL, "first", {"m": 4242})
    await asyncio.sleep(4)  # past two leases: the other may take lapsed claims again
    assert (await other.run_once()).sent == 0
    assert requests(fake) == []
    # A row whose sender died: taken once the other has been back for two leases.
    await park(queue, "Another?")
    await queue.notification_claim(CHANNEL, "dead", lease=1)
    other._database(False)
    other._database(True)
    await asyncio.sleep(1.5)
    assert (await other.run_once()).sent == 0
    await asyncio.sleep(4)
    assert (await other.run_once()).sent == 1
    assert len(requests(fake)) == 1


async def test_a_crash_after_the_ids_were_stored_does_not_send_again(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    approval = await park(queue)
    [held] = await queue.notification_claim(CHANNEL, "crashed", lease=0.3)
    # The crashed sender got as far as storing the message's ids, not marking it delivered.
    await MessageStore(queue).message_save(approval.id, "tok", CHAT, 4242)
    await asyncio.sleep(0.35)
    await sender(queue, ptb_bot).run_once()
    assert requests(fake) == []
    row = await delivery(queue, approval.task_id)
    assert row["delivered_at"] is not None and row["receipt"] == {"skipped": True}
    assert held.id


async def test_recording_a_sent_message_waits_out_the_database_and_stops_at_success(
        queue: TaskQueue, dsn: str, ptb_bot: Bot) -> None:
    channel = sender(queue, ptb_bot)
    tries = 0

    async def record() -> str:  # a write on a connection of its own, as after a restart
        nonlocal tries
        tries += 1
        async with await psycopg.AsyncConnection.connect(dsn, connect_timeout=5) as conn:
            await conn.execute("SELECT 1")
        return "recorded"

    set_connections(dsn, allowed=False)
    try:
        recording = asyncio.create_task(channel._durably(record))
        await wait_for(lambda: _true(tries >= 4), timeout=limit(10))
        assert not recording.done()  # still trying while the database is away
        assert channel.record_backoff.attempt >= 3
    finally:
        set_connections(dsn, allowed=True)
    assert await asyncio.wait_for(recording, limit(10)) == "recorded"
    settled = tries
    await asyncio.sleep(1)
    assert tries == settled  # it stopped at the success
    assert channel.record_backoff.attempt == 0  # and starts afresh at the next outage
    last = channel.record_backoff.last
    assert last is not None and 0 <= last <= RECORD_RETRY_MAX
    # Jittered under the cap however long the outage: never a fixed beat, never past it.
    draws = [channel.record_backoff.delay(n) for n in range(1, 40)]
    assert max(draws) <= RECORD_RETRY_MAX and len(set(draws)) == len(draws)


async def _true(value: bool) -> bool:
    return value


async def test_flood_control_429_is_honoured(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    await park(queue)
    fake.fail("sendMessage", 429, "Too Many Requests: retry after 1", retry_after=1)
    started = time.monotonic()
    assert (await sender(queue, ptb_bot).run_once()).sent == 1
    assert time.monotonic() - started >= 1.0
    assert [c.status for c in fake.calls if c.method == "sendMessage"] == [429, 200]


async def test_dropped_connections_are_retried_with_backoff(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    await park(queue)
    fake.fail("sendMessage", 0, times=2)
    assert (await sender(queue, ptb_bot).run_once()).sent == 1
    assert [c.status for c in fake.calls if c.method == "sendMessage"] == [0, 0, 200]


async def test_evidence_goes_as_photo_documents_and_inline_text(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    files = (NewAttachment("shot.png", PNG), NewAttachment("cv.pdf", PDF),
             NewAttachment("note.txt", b"short <note>"),
             NewAttachment("long.txt", b"line\n" * 2000))
    await park(queue, attachments=files)
    assert (await sender(queue, ptb_bot).run_once()).sent == 1
    [photo] = fake.calls_to("sendPhoto")
    assert photo.files["photo"] == ("shot.png", PNG)
    docs = {c.files["document"][0]: c for c in fake.calls_to("sendDocument")}
    assert set(docs) == {"cv.pdf", "long.txt"} and docs["cv.pdf"].files["document"][1] == PDF
    assert any("short &lt;note&gt;" in t for t in (c.params["text"]
                                                   for c in fake.calls_to("sendMessage")))
    request_id = fake.sent_with_buttons()[0]["message_id"]
    assert photo.params["reply_parameters"]["message_id"] == request_id


async def test_a_rejected_photo_falls_back_to_a_plain_message(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    await park(queue, attachments=(NewAttachment("shot.png", PNG),))
    fake.fail("sendPhoto", 400, "Bad Request: IMAGE_PROCESS_FAILED")
    assert (await sender(queue, ptb_bot).run_once()).sent == 1
    notes = [c.params["text"] for c in fake.calls_to("sendMessage")
             if "shot.png" in c.params["text"]]
    assert notes and "image_process_failed" in notes[0].lower()


async def test_a_long_request_goes_as_a_document_and_captions_fit(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    long = {"kind": "other", "title": "Huge & <long>"} | {
        f"field{i}": "word " * 60 for i in range(30)}
    await park(queue, "Q" * 1500 + "?", request=long,
               attachments=(NewAttachment("x" * 200 + ".pdf", PDF),))
    assert (await sender(queue, ptb_bot).run_once()).sent == 1
    [request] = [c for c in fake.calls_to("sendMessage") if "reply_markup" in c.params]
    text = request.params["text"]
    assert len(text) <= 4096 and "attached as a document" in text
    docs = fake.calls_to("sendDocument")
    assert any(b"word word" in c.files["document"][1] for c in docs)
    assert all(len(c.params.get("caption", "")) <= 1024 for c in docs)


async def test_pending_resend_replaces_the_old_message(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    approval = await park(queue)
    s = sender(queue, ptb_bot)
    await s.run_once()
    first = await shown(queue, approval.id)
    assert first is not None and await queue.notification_redeliver(approval.id, CHANNEL)
    assert (await s.run_once()).sent == 1
    second = await shown(queue, approval.id)
    assert second is not None and second.message_id != first.message_id
    assert [m["message_id"] for m in fake.sent_with_buttons()] == [second.message_id]


async def test_when_telegram_is_back_the_backed_off_rows_go_at_once(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    first = await park(queue, "First?")
    s = sender(queue, ptb_bot)
    s.retry_base = s.retry_max = 60
    fake.fail("sendMessage", 0, times=FAST.attempts)
    assert (await s.run_once()).failed == 1
    second = await park(queue, "Second?")
    assert (await s.run_once()).sent == 2
    for approval in (first, second):
        assert await shown(queue, approval.id) is not None


async def test_a_failure_gives_the_untried_rows_of_the_batch_back_without_an_attempt(
        queue: TaskQueue, fake: FakeTelegram, ptb_bot: Bot) -> None:
    parked = [await park(queue, f"Q{i}?") for i in range(3)]
    fake.fail("sendMessage", 0, times=FAST.attempts)
    assert (await sender(queue, ptb_bot).run_once()).failed == 1
    rows = [await delivery(queue, a.task_id) for a in parked]
    assert [r["attempts"] for r in rows] == [1, 0, 0]
    assert all(r["delivered_at"] is None for r in rows)
    await asyncio.sleep(0.6)  # past every row's backoff: none is left claimed by the failure
    assert len(await queue.notification_claim(CHANNEL, "another")) == 3
    assert len(fake.calls_to("sendMessage", ok=False)) == FAST.attempts


async def test_a_request_parked_before_listen_holds_goes_out_without_waiting_a_poll(
        queue: TaskQueue, ptb_bot: Bot, fake: FakeTelegram,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The sender's first pass reads the outbox only once its LISTEN holds: a request parked
    while the listener was still connecting (its NOTIFY heard by nobody) went out only at the
    next poll before."""
    channel = TelegramChannel(queue, Courier(ptb_bot, FAST), CHAT, poll=600)
    async with run_after_a_slow_listen(monkeypatch, channel):
        await park(queue)
        # Seconds on a busy machine; the poll it waited for before is ten minutes.
        await fake.wait_for(lambda: requests(fake), timeout=limit(None))
    assert len(requests(fake)) == 1
