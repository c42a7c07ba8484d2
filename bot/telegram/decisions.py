"""Taps and Revise notes: check who and what, record the decision once, or refuse and say why.

Who comes first: a tap or note from someone not on the allow list is refused before any
lookup, with the same words whatever it names, so a stranger learns nothing about which
approvals exist (and writes nothing to the database; the refusal is logged).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from telegram import (
    CallbackQuery,
    InlineKeyboardButton,
    InlineKeyboardMarkup,
    Message,
    Update,
    User,
)
from telegram.ext import ContextTypes

from bot.refusals import STRANGER, not_a_person, refusal_of
from bot.telegram.callback import Tap, decode
from bot.telegram.deps import Deps, deps
from bot.telegram.render import escape
from taskqueue import (
    AlreadyApproved,
    Approval,
    Conflict,
    Decision,
    NotFound,
    SignatureRequired,
)

log = logging.getLogger("signoff.telegram.decisions")

NOT_A_PERSON = not_a_person("Telegram account", "telegram_user_id")


class NotAPerson(Exception):
    """The Telegram user is allowed in the chat but is none of the configured people."""
# Telegram shows at most 200 characters of a callback query's answer.
MAX_ANSWER = 200


@dataclass(frozen=True)
class Refusal:
    """Why a tap or note was refused, and the task it concerns when known."""

    reason: str
    task_id: int | None = None


async def on_tap(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A button tap: check it against the stored message, then decide (Revise asks a note)."""
    query = update.callback_query
    assert query is not None
    d = deps(context)
    message = query.message if isinstance(query.message, Message) else None
    checked = await _check_tap(d, query, message)
    if isinstance(checked, Refusal):
        await answer(query, checked)
        await refuse(d, checked, query.from_user, message, data=query.data)
        return
    tap, task_id = checked
    assert message is not None
    if tap.decision is Decision.REVISED:
        await query.answer()
        await _ask_note(d, query.from_user, message, tap.approval_id, task_id)
        return
    await decide(d, tap.approval_id, task_id, tap.decision, query.from_user, message,
                 query=query)


async def answer(query: CallbackQuery, refusal: Refusal | None = None) -> None:
    """Answer a tap exactly once: empty when it worked, else with the refusal's words, so
    the person sees them at the button too."""
    if refusal is None:
        await query.answer()
    else:
        await query.answer(f"⛔ {refusal.reason}"[:MAX_ANSWER], show_alert=False)


async def on_note(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """A text message: a Revise note, after a Revise tap or as a reply to the request."""
    message, user = update.effective_message, update.effective_user
    if message is None or user is None or not message.text:
        return
    d = deps(context)
    if not d.allowed(user):
        return  # strangers' chatter in the chat is not a note, and gets no answer
    approval_id = d.revising.get((message.chat_id, user.id))
    if approval_id is None:
        approval_id = await _replied_request(d, message)
    if approval_id is None:
        return
    approval = await d.queue.approval_get(approval_id)
    done = await decide(d, approval_id, approval.task_id, Decision.REVISED, user, message,
                        note=message.text)
    if done:
        await d.courier.text(message.chat_id, f"📝 Noted: task {approval.task_id} will be "
                             "redone with your note.", reply_to=message.message_id)


async def _replied_request(d: Deps, message: Message) -> int | None:
    """The approval whose request message this text replies to (in the approvals chat).

    A reply needs no Revise tap first, so a note survives a restart of the bot."""
    reply = message.reply_to_message
    if reply is None or message.chat_id != d.settings.chat_id:
        return None
    row = await d.sender.store.message_find(message.chat_id, reply.message_id)
    return row.approval_id if row else None


async def _check_tap(d: Deps, query: CallbackQuery,
                     message: Message | None) -> tuple[Tap, int] | Refusal:
    if not d.allowed(query.from_user):
        return Refusal(STRANGER)  # before any lookup: the same answer whatever the data
    tap = decode(query.data)
    if tap is None:
        return Refusal("this button's data is not valid")
    try:
        approval = await d.queue.approval_get(tap.approval_id)
    except NotFound:
        return Refusal(f"there is no approval {tap.approval_id}")
    row = await d.sender.store.message_get(tap.approval_id)
    matches = (message is not None and row is not None
               and message.chat_id == d.settings.chat_id == row.chat_id
               and message.message_id == row.message_id and tap.token == row.token)
    if not matches:
        return Refusal("this button does not match the approval's message", approval.task_id)
    task = await d.queue.task_get(approval.task_id)
    if not (await d.queue.capability_get(task.capability)).may_decide(d.who(query.from_user)):
        return Refusal(STRANGER, approval.task_id)  # not among the capability's approvers
    return tap, approval.task_id


async def decide(d: Deps, approval_id: int, task_id: int, decision: Decision, user: User,
                 message: Message, note: str | None = None,
                 query: CallbackQuery | None = None) -> bool:
    """Record the decision; tell the loser of a race who won, or that it expired (a tap's
    `query` is answered once the outcome is known)."""
    refusal: Refusal | None = None
    partly: Approval | None = None
    try:
        if d.settings.people and user.id not in d.settings.people:
            # People are configured: every decision resolves to one of them or is refused.
            raise NotAPerson
        decided = await d.queue.approval_decide(approval_id, decision, d.who(user), note)
        partly = decided if decided.is_open else None
    except NotAPerson:
        refusal = Refusal(NOT_A_PERSON, task_id)
    except SignatureRequired as exc:
        await _needs_passkey(d, exc, user, message, query)
        return False
    except (AlreadyApproved, Conflict) as exc:  # NotAnApprover: a stranger's words
        refusal = Refusal(refusal_of(exc), task_id)
    if query is not None:
        await answer(query, refusal)
    if partly is not None:  # four-eyes: counted, waiting for another person
        log.info("approval approved partly task=%s approval=%s by=%s (%d of %d)", task_id,
                 approval_id, d.who(user), partly.approved_count, partly.required)
        await d.sender.run_once(approval_id)  # its approval_progress row, now
        return True
    if refusal is None:
        d.revising.pop((message.chat_id, user.id), None)
        log.info("approval decided task=%s approval=%s decision=%s by=%s", task_id,
                 approval_id, decision.value, d.who(user))
        await d.sender.close(approval_id)
        return True
    d.revising.pop((message.chat_id, user.id), None)
    await refuse(d, refusal, user, message)
    await d.sender.close(approval_id)
    return False


async def _needs_passkey(d: Deps, exc: SignatureRequired, user: User, message: Message,
                         query: CallbackQuery | None) -> None:
    """Telegram cannot sign: nothing is recorded, and a button opens the request in the web
    inbox, where the person approves with their passkey."""
    words = "this needs your passkey: approve it in the web inbox"
    if query is not None:
        await query.answer(f"🔑 {words}"[:MAX_ANSWER], show_alert=False)
    log.info("telegram approve needs a passkey task=%s approval=%s by=%s", exc.task_id,
             exc.approval_id, d.who(user))
    markup = InlineKeyboardMarkup([[InlineKeyboardButton("🔑 Approve in the web inbox",
                                                         url=exc.link)]]) if exc.link else None
    where = "" if exc.link else " (no web inbox has registered its address yet)"
    await d.courier.text(message.chat_id, f"🔑 {escape(user.full_name)}: task {exc.task_id} "
                         f"counts only passkey-signed approves; nothing was recorded. Approve "
                         f"it in the web inbox with your passkey{where}.", markup=markup,
                         reply_to=message.message_id)


async def _ask_note(d: Deps, user: User, message: Message, approval_id: int,
                    task_id: int) -> None:
    d.revising[(message.chat_id, user.id)] = approval_id
    await d.queue.event_insert(task_id, "revise_requested", actor=d.who(user),
                               detail={"approval_id": approval_id})
    log.info("revise note asked task=%s approval=%s by=%s", task_id, approval_id, d.who(user))
    await d.courier.text(
        message.chat_id, f"📝 {escape(user.full_name)}, what should change in task {task_id}? "
        "Send your note as your next message here (or reply to the request).",
        reply_to=message.message_id)


async def refuse(d: Deps, refusal: Refusal, user: User | None, message: Message | None,
                 data: str | None = None) -> None:
    """Answer a refused tap or note in the chat, log it, and write it to the task's events."""
    actor = d.who(user) if user else "telegram:unknown"
    chat_id = message.chat_id if message else None
    log.warning("telegram refused task=%s user=%s chat=%s reason=%s data=%r",
                refusal.task_id, actor, chat_id, refusal.reason, data)
    if refusal.task_id is not None:
        await d.queue.event_insert(refusal.task_id, "refused", actor=actor, detail={
            "reason": refusal.reason, "data": data, "chat_id": chat_id})
    if message is not None:
        name = escape(user.full_name) if user else "Someone"
        await d.courier.text(message.chat_id, f"⛔ {name}: {escape(refusal.reason)}.",
                             reply_to=message.message_id)
