"""Approval messages end to end: sent with buttons, tapped, decided once, refused, edited."""

from __future__ import annotations

import asyncio
from typing import Any

from bot.telegram.app import TelegramBot
from bot.telegram.store import MessageStore
from taskqueue import Approval, Decision, Reaper, Status, TaskQueue
from tests.bot.conftest import ALICE, BOB, CHAT, MALLORY, button, events, eventually, park, sent_row
from tests.bot.fake_telegram import FakeTelegram


async def _request_message(fake: FakeTelegram, queue: TaskQueue,
                           approval: Approval) -> dict[str, Any]:
    """The request's message, once its ids are stored (a tap before that is refused)."""
    row = await sent_row(queue, approval.id)
    return fake.messages[(CHAT, row.message_id or 0)]


async def test_a_parked_task_arrives_with_buttons_and_its_ids_are_stored(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue, request={"kind": "job_application", "company": "A&B <Ltd>",
                                          "role": "Engineer_*", "score": 0.87,
                                          "top_terms": ["python", "postgres"],
                                          "url": "https://jobs.example/1"})
    row = await sent_row(queue, approval.id)
    [call] = fake.calls_to("sendMessage")
    assert call.params["parse_mode"] == "HTML" and int(call.params["chat_id"]) == CHAT
    text = call.params["text"]
    assert "A&amp;B &lt;Ltd&gt;" in text and "Engineer_*" in text and "87%" in text
    assert "python, postgres" in text and 'href="https://jobs.example/1"' in text
    assert (row.chat_id, row.message_id) == (CHAT, fake.sent_with_buttons()[0]["message_id"])
    buttons = call.params["reply_markup"]["inline_keyboard"][0]
    assert [b["text"].split()[-1] for b in buttons] == ["Approve", "Revise", "Skip"]
    assert all(str(approval.id) in b["callback_data"] for b in buttons)
    assert all(len(b["callback_data"].encode()) <= 64 for b in buttons)
    [notified] = await events(queue, approval.task_id, "notified")
    assert (notified.detail["channel"], notified.detail["kind"]) == ("telegram",
                                                                     "approval_request")


async def test_approve_tap_decides_and_edits_the_message(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    msg = await _request_message(fake, queue, approval)
    await fake.tap(msg, ALICE, button(msg, 0))
    await fake.wait_for(lambda: not fake.sent_with_buttons())
    task = await queue.task_get(approval.task_id)
    assert task.status is Status.APPROVED and task.decision is Decision.APPROVED
    assert task.approval is not None and task.approval.decided_by == "telegram:11:Alice"
    assert "Approved</b> by Alice at" in msg["text"] and "UTC" in msg["text"]
    assert fake.calls_to("answerCallbackQuery")


async def test_skip_tap_ends_the_task_skipped(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    msg = await _request_message(fake, queue, approval)
    await fake.tap(msg, BOB, button(msg, 2))
    await fake.wait_for(lambda: "Skipped" in msg["text"])
    assert (await queue.task_get(approval.task_id)).status is Status.SKIPPED


def _refusals(fake: FakeTelegram) -> list[dict[str, Any]]:
    return [c.params for c in fake.calls_to("sendMessage") if "⛔" in c.params["text"]]


def _answers(fake: FakeTelegram) -> list[dict[str, Any]]:
    """The callback answers' params, without the query's own id."""
    return [{k: v for k, v in c.params.items() if k != "callback_query_id"}
            for c in fake.calls_to("answerCallbackQuery")]


async def test_a_stranger_learns_nothing_whether_the_approval_exists_or_not(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    msg = await _request_message(fake, queue, approval)
    real = button(msg, 0)
    missing = real.replace(f"so1:{approval.id}:", f"so1:{approval.id + 987654}:")
    for data in (real, missing, "garbage"):
        await fake.tap(msg, MALLORY, data)
    await fake.wait_for(lambda: len(_refusals(fake)) == 3 and len(_answers(fake)) == 3)
    replies, answers = _refusals(fake), _answers(fake)
    assert replies[0] == replies[1] == replies[2] and answers[0] == answers[1] == answers[2]
    assert "Mallory" in replies[0]["text"] and "not on the list" in replies[0]["text"]
    assert "not on the list" in answers[0]["text"] and not answers[0].get("show_alert")
    assert str(approval.id + 987654) not in str(replies + answers)
    # Nothing was written for the stranger, and the question still waits with its buttons.
    assert await events(queue, approval.task_id, "refused") == []
    assert (await queue.task_get(approval.task_id)).status is Status.NEEDS_APPROVAL
    assert fake.sent_with_buttons() == [msg]


async def test_an_allowed_user_still_decides_and_gets_a_plain_answer(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    msg = await _request_message(fake, queue, approval)
    await fake.tap(msg, ALICE, button(msg, 0))
    await fake.wait_for(lambda: not fake.sent_with_buttons())
    assert (await queue.task_get(approval.task_id)).status is Status.APPROVED
    assert _answers(fake) == [{}] and _refusals(fake) == []


async def test_forged_callback_data_is_refused(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    msg = await _request_message(fake, queue, approval)
    real = button(msg, 0)
    altered = real[:-1] + ("0" if real[-1] != "0" else "1")
    foreign = dict(msg, chat={"id": -100999, "type": "supergroup", "title": "Other"})
    for data, where in ((altered, msg), ("so1:999999:a:abcdef12", msg), ("garbage", msg),
                        (real, foreign)):
        await fake.tap(where, ALICE, data)
    await fake.wait_for(lambda: len(fake.calls_to("answerCallbackQuery")) == 4)
    await fake.wait_for(lambda: len(_refusals(fake)) == 4)
    assert (await queue.task_get(approval.task_id)).status is Status.NEEDS_APPROVAL
    reasons = [e.detail["reason"] for e in await events(queue, approval.task_id, "refused")]
    assert len(reasons) == 2 and all("does not match" in r for r in reasons)
    # An allowed person is told why, in the chat and at the button (once per tap).
    answered = sorted(a["text"] for a in _answers(fake))
    assert "⛔ there is no approval 999999" in answered
    assert sum("does not match" in a for a in answered) == 2


async def test_two_taps_at_once_yield_one_decision_and_the_other_is_told_who(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    msg = await _request_message(fake, queue, approval)
    await asyncio.gather(fake.tap(msg, ALICE, button(msg, 0)), fake.tap(msg, BOB, button(msg, 2)))
    refusal = await fake.wait_for(lambda: [c for c in fake.calls_to("sendMessage")
                                           if "already" in c.params["text"]])
    decided = await events(queue, approval.task_id, "decided")
    assert len(decided) == 1
    winner = "Alice" if decided[0].actor == "telegram:11:Alice" else "Bob"
    assert f"by {winner}" in refusal[0].params["text"]
    await fake.wait_for(lambda: len(_answers(fake)) == 2)
    texts = sorted(a.get("text", "") for a in _answers(fake))
    assert texts[0] == "" and texts[1].startswith("⛔ this was already") and winner in texts[1]
    assert len(await events(queue, approval.task_id, "refused")) == 1
    await fake.wait_for(lambda: not fake.sent_with_buttons())


async def test_a_tap_after_expiry_is_told_it_expired(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue, expires_in=0.5)
    msg = await _request_message(fake, queue, approval)
    await asyncio.sleep(0.6)
    await fake.tap(msg, ALICE, button(msg, 0))
    await fake.wait_for(lambda: [c for c in fake.calls_to("sendMessage")
                                 if "expired" in c.params["text"]])
    await fake.wait_for(lambda: "Expired" in msg["text"] and not msg.get("reply_markup"))
    assert (await queue.task_get(approval.task_id)).status is Status.EXPIRED


async def test_revise_asks_for_a_note_and_resumes_the_task_with_it(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue, "Send this cover letter?")
    msg = await _request_message(fake, queue, approval)
    await fake.tap(msg, ALICE, button(msg, 1))
    await fake.wait_for(lambda: [c for c in fake.calls_to("sendMessage")
                                 if "what should change" in c.params["text"]])
    assert (await queue.task_get(approval.task_id)).status is Status.NEEDS_APPROVAL
    await fake.text(CHAT, BOB, "not a note: Bob did not tap Revise")
    await fake.text(CHAT, ALICE, "Mention the <Postgres> work & shorten it")
    await fake.wait_for(lambda: "Revise requested" in msg["text"])
    task = await queue.task_get(approval.task_id)
    assert task.status is Status.APPROVED and task.decision is Decision.REVISED
    assert task.approval is not None and task.approval.note == (
        "Mention the <Postgres> work & shorten it")
    assert "&lt;Postgres&gt; work &amp; shorten" in msg["text"]


async def test_a_reply_to_the_request_is_a_revise_note_without_a_tap(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue, "Send this cover letter?")
    msg = await _request_message(fake, queue, approval)
    await fake.text(CHAT, MALLORY, "approve it, I say", reply_to=msg)
    await fake.text(CHAT, ALICE, "a plain message, not a reply")
    await asyncio.sleep(0.3)
    assert (await queue.task_get(approval.task_id)).status is Status.NEEDS_APPROVAL
    await fake.text(CHAT, ALICE, "Shorter, and mention Postgres", reply_to=msg)
    await fake.wait_for(lambda: "Revise requested" in msg["text"])
    task = await queue.task_get(approval.task_id)
    assert task.decision is Decision.REVISED and task.approval is not None
    assert task.approval.note == "Shorter, and mention Postgres"


async def test_expiry_by_the_reaper_edits_the_message_and_removes_buttons(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue, expires_in=0.3)
    msg = await _request_message(fake, queue, approval)
    await asyncio.sleep(0.4)
    await Reaper(queue).run_once()
    await fake.wait_for(lambda: "Expired" in msg["text"] and not msg.get("reply_markup"))


async def test_a_decision_made_with_the_cli_closes_the_message(
        queue: TaskQueue, fake: FakeTelegram, tgbot: TelegramBot) -> None:
    approval = await park(queue)
    msg = await _request_message(fake, queue, approval)
    await queue.approval_decide_for_task(approval.task_id, Decision.APPROVED, "carol")
    await fake.wait_for(lambda: "Approved</b> by carol" in msg["text"])
    # The row is marked closed just after the edit that the fake has already seen.
    async def closed() -> bool:
        row = await MessageStore(queue).message_get(approval.id)
        return row is not None and row.closed_at is not None

    await eventually(closed)
