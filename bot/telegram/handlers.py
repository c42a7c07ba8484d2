"""Command handlers (/queue, /signals, /task, /pending, /retry, /cancel, /help), error handler."""

from __future__ import annotations

import html
import logging

from telegram import BotCommand, Update
from telegram.error import TelegramError
from telegram.ext import (
    Application,
    CallbackQueryHandler,
    CommandHandler,
    ContextTypes,
    MessageHandler,
    filters,
)

from bot.telegram.courier import describe
from bot.telegram.decisions import on_note, on_tap
from bot.telegram.deps import Deps, deps
from bot.telegram.render import escape
from bot.telegram.store import CHANNEL
from bot.telegram.views import COMMANDS, HELP, queue_text, signals_text, task_text
from taskqueue import SignoffError, read_signals, redact

log = logging.getLogger("signoff.telegram.handlers")


async def _allowed(update: Update, context: ContextTypes.DEFAULT_TYPE) -> Deps | None:
    """The Deps when the sender may use commands; otherwise refuse, log, and None."""
    d = deps(context)
    user, message = update.effective_user, update.effective_message
    if d.allowed(user):
        return d
    log.warning("telegram refused command user=%s chat=%s text=%r",
                user.id if user else None, message.chat_id if message else None,
                message.text if message else None)
    if message is not None:
        await message.reply_text("⛔ You are not on the list of people who may use this bot.")
    return None


async def _reply(update: Update, text: str) -> None:
    message = update.effective_message
    assert message is not None
    await message.reply_html(redact(text), do_quote=False)  # an error may quote a secret


def _task_id(context: ContextTypes.DEFAULT_TYPE) -> int | None:
    args = context.args or []
    return int(args[0]) if len(args) == 1 and args[0].isdigit() else None


async def help_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/help: what the bot does and its commands."""
    if await _allowed(update, context):
        await _reply(update, HELP)


async def queue_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/queue: per capability, counts by status and the oldest waiting task's age."""
    if d := await _allowed(update, context):
        await _reply(update, queue_text(await d.queue.queue_summary()))


async def signals_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/signals: incident and nudge with their counts, thresholds and owners."""
    if d := await _allowed(update, context):
        await _reply(update, signals_text(await read_signals(d.queue, d.signal_config)))


async def task_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/task ID: a task's status, history and latest approval."""
    if d := await _allowed(update, context):
        task_id = _task_id(context)
        if task_id is None:
            await _reply(update, "Usage: /task ID")
            return
        try:
            await _reply(update, task_text(await d.queue.task_detail(task_id)))
        except SignoffError as exc:
            await _reply(update, f"⚠️ {escape(exc)}")


async def pending_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/pending: send every unanswered approval again (the old messages lose their buttons)."""
    if d := await _allowed(update, context):
        waiting = await d.queue.approval_list_open()
        if not waiting:
            await _reply(update, "No approvals are waiting.")
            return
        for approval in waiting:
            await d.queue.notification_redeliver(approval.id, CHANNEL)
        await _reply(update, f"Re-sending {len(waiting)} unanswered approval"
                     f"{'s' if len(waiting) != 1 else ''}, oldest first.")
        await d.sender.run_once()


async def retry_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/retry ID: put a failed, expired or cancelled task back to pending."""
    await _operator(update, context, "retry")


async def cancel_command(update: Update, context: ContextTypes.DEFAULT_TYPE) -> None:
    """/cancel ID: cancel an unfinished task."""
    await _operator(update, context, "cancel")


async def _operator(update: Update, context: ContextTypes.DEFAULT_TYPE, verb: str) -> None:
    d = await _allowed(update, context)
    if d is None:
        return
    task_id, user = _task_id(context), update.effective_user
    if task_id is None or user is None:
        await _reply(update, f"Usage: /{verb} ID")
        return
    try:
        if verb == "retry":
            task = await d.operator.task_retry(task_id, actor=d.who(user))
        else:
            task = await d.operator.task_cancel(task_id, actor=d.who(user),
                                             reason="cancelled from Telegram")
    except SignoffError as exc:
        await _reply(update, f"⚠️ {escape(exc)}")
        return
    log.info("task %s from telegram task=%s by=%s to=%s", verb, task_id, d.who(user), task.status)
    await _reply(update, f"Task {task.id} is now <b>{task.status.value}</b>.")
    if verb == "cancel":
        await d.sender.run_once()


async def on_error(update: object, context: ContextTypes.DEFAULT_TYPE) -> None:
    """Log the error with its update and tell the operator in the approvals chat."""
    error = context.error
    log.error("telegram handler failed update=%r", update, exc_info=error)
    chat_id = deps(context).settings.chat_id
    if chat_id is None or error is None:
        return
    what = html.escape(redact(describe(error)))
    try:
        await context.bot.send_message(
            chat_id, f"⚠️ The bot hit an error: <code>{what}</code>. "
            "Details are in the service log.", parse_mode="HTML")
    except TelegramError as exc:
        log.warning("could not tell the operator about the error: %s", describe(exc))


def register(app: Application) -> None:
    """Add every handler to the application."""
    for name, handler in (("help", help_command), ("start", help_command),
                          ("queue", queue_command), ("signals", signals_command),
                          ("task", task_command), ("pending", pending_command),
                          ("retry", retry_command), ("cancel", cancel_command)):
        app.add_handler(CommandHandler(name, handler))
    app.add_handler(CallbackQueryHandler(on_tap))
    app.add_handler(MessageHandler(filters.TEXT & ~filters.COMMAND, on_note))
    app.add_error_handler(on_error)


def bot_commands() -> list[BotCommand]:
    """The commands registered with setMyCommands."""
    return [BotCommand(name, text) for name, text in COMMANDS]
