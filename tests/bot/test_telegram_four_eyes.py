"""Four-eyes in Telegram, through the fake Bot API: people's names on decisions, the message
edited with the progress while buttons stay, a second tap by the same person counted once,
and someone outside the capability's `approvers` refused like a stranger."""

from __future__ import annotations

import dataclasses
import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from bot.people import parse_people
from bot.telegram.app import TelegramBot
from bot.telegram.config import TelegramSettings, parse
from taskqueue import (
    ConfigChecker,
    ConfigError,
    Decision,
    Reminders,
    RemindReport,
    Status,
    TaskQueue,
)
from tests.bot.conftest import (
    ALICE,
    BOB,
    CHAT,
    MALLORY,
    button,
    make_bot,
    sent_row,
    stopped,
)
from tests.bot.fake_telegram import FakeTelegram

CAROL = {"id": 33, "is_bot": False, "first_name": "Carol"}


@pytest.fixture
async def named_bot(settings: TelegramSettings, queue: TaskQueue) -> AsyncIterator[TelegramBot]:
    people = {ALICE["id"]: "alice", BOB["id"]: "bob", CAROL["id"]: "carol"}
    bot = make_bot(dataclasses.replace(
        settings, allowed_user_ids=settings.allowed_user_ids | {CAROL["id"], MALLORY["id"]},
        people=people), queue)
    await bot.start()
    yield bot
    await stopped(bot.stop(), "the Telegram bot")


async def _parked(queue: TaskQueue, fake: FakeTelegram, required: int) -> tuple[int, Any]:
    await queue.task_enqueue("vm", {"n": 1})
    task = await queue.task_claim("vm", "w1")
    assert task is not None
    approval = await queue.task_park(task.id, "w1", "Delete vm-1?", claim=task.claim,
                                     request={"kind": "delete"}, required_approvals=required)
    row = await sent_row(queue, approval.id)
    return approval.id, fake.messages[(CHAT, row.message_id or 0)]


async def test_two_people_approve_and_the_message_shows_the_progress(
        queue: TaskQueue, fake: FakeTelegram, named_bot: TelegramBot) -> None:
    approval_id, msg = await _parked(queue, fake, 2)
    assert "Needs 2 approves from different people" in msg["text"]
    await fake.tap(msg, ALICE, button(msg, 0))
    await fake.wait_for(lambda: "waiting for a second person" in msg["text"])
    assert "Approved by alice (1 of 2): waiting for a second person" in msg["text"]
    assert fake.sent_with_buttons(), "the buttons stay for the second person"
    assert (await queue.approval_get(approval_id)).is_open
    await fake.tap(msg, ALICE, button(msg, 0))  # the same person again: counted once
    await fake.wait_for(lambda: any("counts once" in c.params.get("text", "")
                                    for c in fake.calls_to("answerCallbackQuery")))
    assert (await queue.approval_get(approval_id)).approved_count == 1
    await fake.tap(msg, BOB, button(msg, 0))
    await fake.wait_for(lambda: not fake.sent_with_buttons())
    done = await queue.approval_get(approval_id)
    assert done.decision is Decision.APPROVED and done.decided_by == "bob"
    assert [v.by for v in done.approvals] == ["alice", "bob"]
    assert (await queue.task_get(done.task_id)).status is Status.APPROVED
    assert "Approved</b> by bob" in msg["text"]


async def test_an_approve_from_the_web_or_the_cli_edits_the_message(
        queue: TaskQueue, fake: FakeTelegram, named_bot: TelegramBot) -> None:
    approval_id, msg = await _parked(queue, fake, 2)
    await queue.approval_decide(approval_id, Decision.APPROVED, "alice")  # as the web does
    await fake.wait_for(lambda: "Approved by alice (1 of 2)" in msg["text"])
    assert "waiting for a second person" in msg["text"]
    assert fake.sent_with_buttons(), "the buttons stay for the second person"
    await fake.tap(msg, BOB, button(msg, 0))
    await fake.wait_for(lambda: not fake.sent_with_buttons())
    assert "Approved</b> by bob" in msg["text"]
    assert (await queue.approval_get(approval_id)).decided_by == "bob"


async def test_the_progress_names_the_person_never_the_channels_actor_string(
        queue: TaskQueue, fake: FakeTelegram, named_bot: TelegramBot) -> None:
    """An approve recorded by a channel's actor string (the web's `web:ACCOUNT` when no
    people are configured) reads as the person in Telegram's message, as in the web."""
    approval_id, msg = await _parked(queue, fake, 2)
    await queue.approval_decide(approval_id, Decision.APPROVED, "web:carol")
    await fake.wait_for(lambda: "Approved by carol (1 of 2)" in msg["text"])
    assert "web:carol" not in msg["text"]
    assert [v.by for v in (await queue.approval_get(approval_id)).approvals] == ["web:carol"]


async def test_someone_outside_approvers_is_refused_like_a_stranger(
        queue: TaskQueue, fake: FakeTelegram, named_bot: TelegramBot) -> None:
    await queue.capability_set("vm", approvers=["alice", "bob"])
    approval_id, msg = await _parked(queue, fake, 1)
    for tapped in (0, 1, 2):  # approve, revise, skip
        await fake.tap(msg, CAROL, button(msg, tapped))
    await fake.wait_for(lambda: len([c for c in fake.calls_to("answerCallbackQuery")
                                     if "not on the list" in c.params.get("text", "")]) == 3)
    assert (await queue.approval_get(approval_id)).is_open
    await fake.tap(msg, MALLORY, button(msg, 0))  # not a person at all: the old stranger
    await fake.wait_for(lambda: len([c for c in fake.calls_to("answerCallbackQuery")
                                     if "not on the list" in c.params.get("text", "")]) == 4)
    assert (await queue.approval_get(approval_id)).is_open
    await fake.tap(msg, BOB, button(msg, 0))
    await fake.wait_for(lambda: not fake.sent_with_buttons())
    assert (await queue.approval_get(approval_id)).decided_by == "bob"


def test_people_join_the_allow_list_and_an_unknown_id_keeps_its_old_form() -> None:
    people = parse_people({"alice": {"telegram_user_id": 11, "web_account": "alice"}})
    ids = {p.telegram_user_id: p.name for p in people.by_name.values() if p.telegram_user_id}
    s = parse({"telegram": {"allowed_user_ids": [22]}}, ConfigChecker("", None),
              {"TELEGRAM_BOT_TOKEN": "1:x", "TELEGRAM_CHAT_ID": "-5"}, ("09:00",), ids)
    assert s.allowed_user_ids == {11, 22} and s.people == {11: "alice"}
    env = {"TELEGRAM_BOT_TOKEN": "1:x", "TELEGRAM_CHAT_ID": "-5",
           "TELEGRAM_ALLOWED_USER_IDS": "44"}
    assert parse({}, ConfigChecker("", None), env, ("09:00",), ids).allowed_user_ids == {11, 44}
    assert people.telegram(11) == "alice" and people.telegram(99) is None
    assert people.web("alice") == "alice" and people.web("bob") is None
    for bad in ({"a b": {}}, {"x": {"telegram_user_id": 0}}, {"x": {"phone": "1"}},
                {"x": {"web_account": "a"}, "y": {"web_account": "a"}}):
        with pytest.raises(ConfigError):
            parse_people(bad)


async def test_a_reminder_goes_to_the_chat_and_an_escalation_also_to_the_person(
        queue: TaskQueue, fake: FakeTelegram, named_bot: TelegramBot) -> None:
    await queue.capability_set("vm", remind_after_seconds=60, escalate_after_seconds=120,
                               escalate_to=["carol"])
    approval_id, _ = await _parked(queue, fake, 2)
    async with queue.pool.connection() as conn:
        await conn.execute("UPDATE approvals SET created_at = now() - interval '1 hour' "
                           "WHERE id = %s", (approval_id,))
    report = await Reminders(queue).run_once()
    assert report == RemindReport((approval_id,), (approval_id,))
    await fake.wait_for(lambda: [c for c in fake.calls_to("sendMessage")
                                 if int(c.params["chat_id"]) == CAROL["id"]])
    texts = [c.params["text"] for c in fake.calls_to("sendMessage")
             if int(c.params["chat_id"]) == CHAT]
    assert any("Reminder: task" in t for t in texts)
    assert any("Escalated: task" in t for t in texts)
    [direct] = [c.params["text"] for c in fake.calls_to("sendMessage")
                if int(c.params["chat_id"]) == CAROL["id"]]
    assert "Escalated: task" in direct
    assert await Reminders(queue).run_once() == RemindReport()


async def test_a_signed_capability_refuses_a_telegram_approve_with_a_web_button(
        queue: TaskQueue, fake: FakeTelegram, named_bot: TelegramBot) -> None:
    """Telegram cannot sign (issue 39): nothing is recorded, and a button opens the request
    in the web inbox, at the address the inbox registered."""
    await queue.capability_set("vm", signed_approvals=True)
    await queue.signing_link_set("web", "http://localhost:8080/#approval-{approval_id}")
    approval_id, msg = await _parked(queue, fake, 1)
    await fake.tap(msg, ALICE, button(msg, 0))
    await fake.wait_for(lambda: any("passkey" in c.params.get("text", "")
                                    for c in fake.calls_to("sendMessage")))
    [reply] = [c for c in fake.calls_to("sendMessage") if "passkey" in c.params["text"]]
    markup = reply.params["reply_markup"]
    markup = json.loads(markup) if isinstance(markup, str) else markup
    [[web_button]] = markup["inline_keyboard"]
    assert web_button["url"] == f"http://localhost:8080/#approval-{approval_id}"
    assert "nothing was recorded" in reply.params["text"]
    approval = await queue.approval_get(approval_id)
    assert approval.is_open and approval.approvals == ()
    assert fake.calls_to("editMessageText") == [], "the request keeps its buttons"
    # An unsigned capability still takes the tap.
    await queue.capability_set("vm", signed_approvals=False)
    await fake.tap(msg, ALICE, button(msg, 0))
    await fake.wait_for(lambda: len(fake.calls_to("editMessageText")) > 0)
    assert (await queue.approval_get(approval_id)).decision is Decision.APPROVED


async def test_with_people_configured_a_tap_by_no_person_is_refused(
        queue: TaskQueue, fake: FakeTelegram, named_bot: TelegramBot) -> None:
    """Mallory may be in the chat, but is none of the configured people: refused, nothing
    recorded; a configured person's tap still decides."""
    approval_id, msg = await _parked(queue, fake, 1)
    await fake.tap(msg, MALLORY, button(msg, 0))
    await fake.wait_for(lambda: any("not one of the configured people" in c.params.get(
        "text", "") for c in fake.calls_to("answerCallbackQuery")))
    approval = await queue.approval_get(approval_id)
    assert approval.is_open and approval.approvals == ()
    await fake.tap(msg, ALICE, button(msg, 0))
    await fake.wait_for(lambda: len(fake.calls_to("editMessageText")) > 0)
    assert (await queue.approval_get(approval_id)).decided_by == "alice"
