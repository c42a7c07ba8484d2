"""Courier: every Bot API call the bot makes, with 429s honoured, retries and fallbacks."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import timedelta
from typing import TypeVar

from telegram import (
    Bot,
    InlineKeyboardMarkup,
    InputFile,
    LinkPreviewOptions,
    Message,
    ReplyParameters,
)
from telegram.constants import ParseMode
from telegram.error import BadRequest, NetworkError, RetryAfter, TelegramError
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception, stop_after_attempt

from bot.telegram.render import MAX_TEXT, caption, escape
from taskqueue import Attachment, full_jitter, redact

log = logging.getLogger("signoff.telegram")

T = TypeVar("T")

# Text attachments up to this many characters are shown inline; longer ones as files.
INLINE_TEXT = 3000
_NO_PREVIEW = LinkPreviewOptions(is_disabled=True)


@dataclass(frozen=True)
class RetryPolicy:
    """How hard one call tries: attempts, backoff (full jitter under a cap doubling from
    `backoff` to `max_backoff`), and the longest 429 wait."""

    attempts: int = 5
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_retry_after: float = 30.0


def seconds(value: int | float | timedelta) -> float:
    """A duration PTB gives as seconds or as a timedelta, in seconds."""
    return value.total_seconds() if isinstance(value, timedelta) else float(value)


class Courier:
    """Sends and edits messages in the bot's chats; raises only when retries are exhausted."""

    def __init__(self, bot: Bot, policy: RetryPolicy | None = None) -> None:
        self.bot = bot
        self.policy = policy or RetryPolicy()

    async def call(self, what: str, make: Callable[[], Awaitable[T]]) -> T:
        """Run one Bot API call; wait out a 429 (once per attempt, up to max_retry_after)
        and retry network errors with jittered backoff (tenacity). Pacing ahead of
        Telegram's flood limits is the Application's AIORateLimiter's job."""
        retrying = AsyncRetrying(
            stop=stop_after_attempt(self.policy.attempts), retry=retry_if_exception(
                self._retryable), wait=self._wait, before_sleep=self._logger(what),
            reraise=True, sleep=asyncio.sleep)
        async for attempt in retrying:
            with attempt:
                return await make()
        raise AssertionError("unreachable")  # pragma: no cover: reraise=True

    def _retryable(self, exc: BaseException) -> bool:
        if isinstance(exc, RetryAfter):
            return seconds(exc.retry_after) <= self.policy.max_retry_after
        # BadRequest is a NetworkError subclass, but retrying cannot fix it.
        return isinstance(exc, NetworkError) and not isinstance(exc, BadRequest)

    def _wait(self, state: RetryCallState) -> float:
        exc = state.outcome.exception() if state.outcome else None
        if isinstance(exc, RetryAfter):
            return seconds(exc.retry_after)
        return float(full_jitter(self.policy.backoff, self.policy.max_backoff)(state))

    def _logger(self, what: str) -> Callable[[RetryCallState], None]:
        def log_retry(state: RetryCallState) -> None:
            exc = state.outcome.exception() if state.outcome else None
            wait = state.next_action.sleep if state.next_action else 0.0
            if isinstance(exc, RetryAfter):
                log.warning("telegram flood control call=%s retry_after=%.1fs", what, wait)
            else:
                log.warning("telegram network error call=%s attempt=%d retry_in=%.1fs: %s",
                            what, state.attempt_number, wait, exc)
        return log_retry

    async def text(self, chat_id: int, html: str, *,
                   markup: InlineKeyboardMarkup | None = None,
                   reply_to: int | None = None) -> Message:
        """Send an HTML message; text past Telegram's limit goes as a document instead.
        Registered secrets (a token in a task's error, say) are masked, as in every
        message this courier sends."""
        html = redact(html)
        if len(html) > MAX_TEXT:
            return await self.document(chat_id, html.encode("utf-8"), "message.html",
                                       "The message was too long; here it is as a file.",
                                       reply_to=reply_to, markup=markup)
        return await self.call("sendMessage", lambda: self.bot.send_message(
            chat_id, html, parse_mode=ParseMode.HTML, reply_markup=markup,
            reply_parameters=_reply(reply_to), link_preview_options=_NO_PREVIEW))

    async def document(self, chat_id: int, data: bytes, filename: str, note: str, *,
                       reply_to: int | None = None,
                       markup: InlineKeyboardMarkup | None = None) -> Message:
        """Send bytes as a document with a caption (cut to the caption limit)."""
        return await self.call("sendDocument", lambda: self.bot.send_document(
            chat_id, InputFile(data, filename=filename), caption=caption(redact(note)),
            reply_markup=markup, reply_parameters=_reply(reply_to)))

    async def attachment(self, chat_id: int, item: Attachment, *,
                         reply_to: int | None = None) -> Message:
        """Send one piece of evidence: images as photos, PDFs and long text as documents.

        A file Telegram refuses falls back to a plain message naming it.
        """
        data = item.data or b""
        label = caption(f"📎 {item.filename}")
        try:
            if item.content_type.startswith("image/"):
                return await self.call("sendPhoto", lambda: self.bot.send_photo(
                    chat_id, InputFile(data, filename=item.filename), caption=label,
                    reply_parameters=_reply(reply_to)))
            if item.content_type.startswith("text/") and len(data) <= INLINE_TEXT:
                text = data.decode("utf-8", "replace")
                return await self.text(chat_id, f"{label}\n<pre>{escape(text)}</pre>",
                                       reply_to=reply_to)
            return await self.document(chat_id, data, item.filename, label, reply_to=reply_to)
        except BadRequest as exc:
            log.warning("telegram refused attachment=%s approval=%s: %s; sending a note",
                        item.id, item.approval_id, exc.message)
            return await self.text(
                chat_id, f"📎 {escape(item.filename)} ({item.size_bytes} bytes) could not be "
                f"shown here: {escape(exc.message)}. See it with <code>signoff show</code>.",
                reply_to=reply_to)

    async def edit(self, chat_id: int, message_id: int, html: str, *,
                   markup: InlineKeyboardMarkup | None = None) -> None:
        """Replace a message's text and remove its buttons (or set `markup`); an unchanged
        message is fine."""
        try:
            await self.call("editMessageText", lambda: self.bot.edit_message_text(
                redact(html)[:MAX_TEXT], chat_id=chat_id, message_id=message_id,
                parse_mode=ParseMode.HTML, link_preview_options=_NO_PREVIEW,
                reply_markup=markup))
        except BadRequest as exc:
            if "not modified" in exc.message.lower():
                return
            log.warning("telegram refused an edit chat=%s message=%s: %s; removing buttons",
                        chat_id, message_id, exc.message)
            await self.drop_buttons(chat_id, message_id)

    async def drop_buttons(self, chat_id: int, message_id: int) -> None:
        """Remove a message's buttons, whatever its text; a message already without is fine."""
        try:
            await self.call("editMessageReplyMarkup", lambda: self.bot.edit_message_reply_markup(
                chat_id=chat_id, message_id=message_id, reply_markup=None))
        except BadRequest as exc:
            log.warning("telegram could not remove buttons chat=%s message=%s: %s",
                        chat_id, message_id, exc.message)


def _reply(message_id: int | None) -> ReplyParameters | None:
    if message_id is None:
        return None
    return ReplyParameters(message_id, allow_sending_without_reply=True)


def describe(exc: BaseException) -> str:
    """One line for logs and the outbox's last_error."""
    if isinstance(exc, TelegramError):
        return f"{type(exc).__name__}: {exc.message}"
    return f"{type(exc).__name__}: {exc}"
