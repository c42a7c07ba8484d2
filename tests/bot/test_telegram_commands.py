"""Commands over the fake Bot API: /help, /queue, /signals, /task, /pending, /retry, /cancel."""

from __future__ import annotations

import dataclasses
from datetime import UTC, datetime

import pytest

from bot.telegram.app import TelegramBot
from bot.telegram.store import MessageStore
from bot.telegram.views import signals_text
from taskqueue import Status, TaskQueue, read_signals
from tests.bot.conftest import ALICE, CHAT, MALLORY, eventually, park, sent_row
from tests.bot.fake_telegram import FakeTelegram


async def _reply(fake: FakeTelegram, contains: str) -> str:
    found = await fake.wait_for(lambda: [c.params["text"] for c in fake.calls_to("sendMessage")
                                         if contains in c.params["text"]])
    return str(found[-1])


async def test_commands_are_registered_with_set_my_commands(
        fake: FakeTelegram, tgbot: TelegramBot) -> None:
    names = [c["command"] for c in fake.commands]
    assert names == ["queue", "signals", "task", "pending", "retry", "cancel", "help"]


async def test_help_and_queue(queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    await queue.task_enqueue("jobs <scrape>", {})
    await park(queue)
    await fake.command(CHAT, ALICE, "/help")
    assert "/pending" in await _reply(fake, "Revise asks for a note")
    await fake.command(CHAT, ALICE, "/queue@signoff_test_bot")
    text = await _reply(fake, "<b>Queue</b>")
    assert "<b>jobs &lt;scrape&gt;</b>: pending 1; oldest waiting" in text
    assert "<b>jobs</b>: needs_approval 1" in text


async def test_signals_show_state_count_threshold_and_owner(
        fake: FakeTelegram, tgbot: TelegramBot) -> None:
    await fake.command(CHAT, ALICE, "/signals")
    text = await _reply(fake, "<b>Signals</b>")
    assert "<b>incident</b>: 🟢 ok; 0" in text and "fires above 5" in text
    assert "the system's move" in text and "your move" in text


async def test_signals_name_what_the_reaper_did_in_words_and_escape_what_they_read(
        queue: TaskQueue) -> None:
    s = dataclasses.replace(await read_signals(queue), reaper_at=datetime.now(UTC),
                            reaper_outcome={"orphans_requeued": 2, "<b>odd</b>": 1})
    text = signals_text(s)
    assert "orphans requeued 2" in text and "orphans_requeued" not in text
    assert "&lt;b&gt;odd&lt;/b&gt; 1" in text and "<b>odd" not in text


async def test_task_shows_status_history_and_approval(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue, "Ship <it>?")
    await fake.command(CHAT, ALICE, f"/task {approval.task_id}")
    text = await _reply(fake, f"<b>Task {approval.task_id}</b>")
    assert "needs_approval" in text and "Ship &lt;it&gt;?" in text and "parked" in text
    await fake.command(CHAT, ALICE, "/task 424242")
    assert "no such task" in await _reply(fake, "⚠️")
    await fake.command(CHAT, ALICE, "/task abc")
    await _reply(fake, "Usage: /task ID")


async def test_cancel_and_retry(queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    await sent_row(queue, approval.id)
    await fake.command(CHAT, ALICE, f"/cancel {approval.task_id}")
    await _reply(fake, "is now <b>cancelled</b>")
    await fake.wait_for(lambda: not fake.sent_with_buttons())
    await fake.command(CHAT, ALICE, f"/retry {approval.task_id}")
    await _reply(fake, "is now <b>pending</b>")
    task = await queue.task_get(approval.task_id)
    assert task.status is Status.PENDING
    await fake.command(CHAT, ALICE, f"/retry {approval.task_id}")
    assert "is pending" in await _reply(fake, "⚠️")


async def test_pending_resends_unanswered_approvals(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    first = await sent_row(queue, approval.id)
    await fake.command(CHAT, ALICE, "/pending")
    await _reply(fake, "Re-sending 1 unanswered approval")
    new = await fake.wait_for(lambda: [m for m in fake.sent_with_buttons()
                                       if m["message_id"] != first.message_id])
    # The new ids are stored, and the old message edited, just after the new one is sent.
    await eventually(lambda: _message_id_is(queue, approval.id, new[0]["message_id"]))
    await fake.wait_for(
        lambda: "Re-sent below" in fake.messages[(CHAT, first.message_id or 0)]["text"])


async def _message_id_is(queue: TaskQueue, approval_id: int, message_id: int) -> bool:
    row = await MessageStore(queue).message_get(approval_id)
    return row is not None and row.message_id == message_id


async def test_users_not_on_the_allow_list_are_refused(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    task = await queue.task_enqueue("jobs", {})
    await fake.command(CHAT, MALLORY, f"/cancel {task.id}")
    await fake.command(CHAT, MALLORY, f"/task {task.id + 1000}")
    await fake.command(CHAT, MALLORY, f"/task {task.id}")
    await fake.wait_for(lambda: len(fake.calls_to("sendMessage")) == 3)
    texts = {c.params["text"] for c in fake.calls_to("sendMessage")}
    assert len(texts) == 1 and "not on the list" in texts.pop()
    assert (await queue.task_get(task.id)).status is Status.PENDING
    await fake.command(CHAT, ALICE, f"/task {task.id + 1000}")
    await _reply(fake, f"no such task: {task.id + 1000}")


async def test_an_unexpected_error_is_logged_and_the_operator_is_told(
        fake: FakeTelegram, tgbot: TelegramBot, caplog: pytest.LogCaptureFixture) -> None:
    fake.fail("sendMessage", 400, "Bad Request: can't parse entities")
    await fake.command(CHAT, ALICE, "/help")
    text = await _reply(fake, "The bot hit an error")
    assert "BadRequest" in text and "parse entities" in text
    assert any("telegram handler failed" in r.getMessage() for r in caplog.records)
