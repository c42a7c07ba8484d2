"""TelegramBot: builds the python-telegram-bot Application, starts polling (or the webhook
listener) and the channel's delivery loop.

Only one process may long-poll a bot (Telegram answers a second getUpdates with 409
Conflict), and Telegram keeps only the last setWebhook, so with several services on one
database the service calls `lead()` on its leader and `follow()` on the others: they send
from the outbox and serve the webhook listener (with the same secret as the leader), but do
not poll and do not register the webhook. A bot the service never calls leads from the start.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import socket
from collections.abc import Awaitable, Callable
from datetime import timedelta
from typing import Any

from telegram.error import Conflict, InvalidToken, NetworkError, TelegramError
from telegram.ext import AIORateLimiter, Application, ApplicationBuilder, BaseRateLimiter

from bot.telegram.config import TelegramSettings
from bot.telegram.courier import Courier, RetryPolicy, describe
from bot.telegram.delivery import TelegramChannel
from bot.telegram.deps import KEY, Deps
from bot.telegram.digest import NudgeDigest
from bot.telegram.handlers import bot_commands, register
from bot.telegram.health import ReportingRequest
from bot.telegram.webhook import WebhookListener, derived_secret
from taskqueue import (
    UNREACHABLE_AFTER,
    Backoff,
    ChannelHealth,
    ConfigError,
    SignalConfig,
    TaskQueue,
    secret_register,
)

log = logging.getLogger("signoff.telegram")

TELEGRAM_OFF = ("Telegram is off (TELEGRAM_BOT_TOKEN is not set); approvals wait in the "
                "queue: decide them in the web inbox (`signoff web`, docs/web.md) or with the "
                "CLI, `signoff approve ID --by WHO` (or skip, "
                "revise --note)")
# While Telegram cannot be reached at start, try again at most this long apart (seconds).
RECONNECT_SECONDS = 15.0
# The only updates the handlers use; Telegram does not send (or queue) the others.
ALLOWED_UPDATES = ["message", "callback_query"]


def build_application(settings: TelegramSettings, health: ChannelHealth | None = None,
                      rate_limiter: BaseRateLimiter[Any] | None = None) -> Application:
    """A PTB Application pointed at `{api_base_url}/bot`; updates handled concurrently;
    every request reported to `health` (PTB's own pool sizes: 256, and 1 for getUpdates);
    every call paced by `rate_limiter` (default: AIORateLimiter with Telegram's documented
    limits, 30 messages a second in all and 20 a minute per group; a 429 is left to the
    Courier, which waits it out once or gives the row back to the outbox)."""
    assert settings.token
    health = health or ChannelHealth("telegram")
    return (ApplicationBuilder().token(settings.token)
            .rate_limiter(rate_limiter or AIORateLimiter(max_retries=0))
            .base_url(settings.base_url).base_file_url(settings.base_file_url)
            .request(ReportingRequest(health, connection_pool_size=256))
            .get_updates_request(ReportingRequest(health, retry_unauthorized=True,
                                                  connection_pool_size=1))
            .concurrent_updates(8).job_queue(None).build())


class TelegramBot:
    """The Telegram part of the service: `await start()`, `await stop()`."""

    def __init__(self, settings: TelegramSettings, queue: TaskQueue, *,
                 signal_config: SignalConfig | None = None, policy: RetryPolicy | None = None,
                 poll_timeout: float = 10.0, outbox_poll: float = 30.0,
                 sender_name: str | None = None, digest_max_items: int = 30,
                 reconnect: float = RECONNECT_SECONDS,
                 unreachable_after: float = UNREACHABLE_AFTER,
                 rate_limiter: BaseRateLimiter[Any] | None = None) -> None:
        settings.check()
        assert settings.chat_id is not None
        # The service's one queue; each part below sees it as its own part.
        self.settings, self.queue = settings, queue
        # What /healthz reads: unauthorized at once, unreachable after `unreachable_after` s.
        self.health = ChannelHealth("telegram", unreachable_after=unreachable_after)
        self.application = build_application(settings, self.health, rate_limiter)
        self.courier = Courier(self.application.bot, policy)
        self.sender = TelegramChannel(queue, self.courier, settings.chat_id, poll=outbox_poll,
                                      name=sender_name, people=settings.people)
        self.deps = Deps(queue, queue, settings, self.courier, self.sender, signal_config)
        self.application.bot_data[KEY] = self.deps
        register(self.application)
        self.poll_timeout = poll_timeout
        self.digest_max_items = digest_max_items
        self.reconnect = reconnect
        # Every service's listener must accept what the leader registered: the same
        # secret on all, derived from the token unless TELEGRAM_WEBHOOK_SECRET sets one.
        self.webhook_secret = settings.webhook_secret or derived_secret(settings.token or "")
        secret_register(settings.token, self.webhook_secret)
        self.listener: WebhookListener | None = None
        self.started = asyncio.Event()
        self.leading = True  # polls or registers the webhook; a standby does neither
        self._registered = False  # setWebhook done since this bot last began to lead
        self._polling = asyncio.Lock()  # lead() and follow() take turns
        self._tasks: list[asyncio.Task[None]] = []

    def nudge_digest(self) -> NudgeDigest:
        """The digest job's body; the scheduler calls its run_once()."""
        return NudgeDigest(self.queue, self.courier, self.deps.settings.chat_id or 0,
                           max_items=self.digest_max_items)

    async def start(self) -> None:
        """Check the token (fails fast when rejected), then poll and send in the background."""
        try:
            await self._connect()
        except ConfigError:
            await self.stop()  # the caller will not: close the HTTP clients before failing
            raise
        except NetworkError as exc:
            log.warning("telegram: retrying: the Bot API is unreachable (%s); trying again "
                        "every %gs in the background. Approvals wait in the notification "
                        "outbox until it answers.", describe(exc), self.reconnect)
            self._tasks.append(asyncio.create_task(self._connect_later()))

    async def _connect(self) -> None:
        app = self.application
        try:
            await app.initialize()
        except InvalidToken:
            raise ConfigError("Telegram rejected TELEGRAM_BOT_TOKEN (getMe: Unauthorized); "
                              "check the token @BotFather gave you") from None
        await self.courier.call("setMyCommands", lambda: app.bot.set_my_commands(bot_commands()))
        if not app.running:  # a retry after setWebhook or deleteWebhook failed
            await app.start()
        mode = await self._receive_updates()
        await self.sender.register()
        self._tasks.append(asyncio.create_task(self.sender.run(), name="signoff-delivery"))
        self.started.set()
        log.info("telegram bot started %s username=@%s chat=%s allowed_users=%d", mode,
                 app.bot.username, self.settings.chat_id, len(self.settings.allowed_user_ids))

    async def _receive_updates(self) -> str:
        """Long polling, or the webhook listener when a webhook URL is set; says which."""
        s = self.settings
        if not s.webhook:
            async with self._polling:
                if not self.leading:
                    return "mode=polling (standby: the leader polls)"
                await self._start_polling()
            return "mode=polling"
        await self._listen()
        mode = (f"mode=webhook url={s.webhook_url} "
                f"listen={s.webhook_listen}:{s.webhook_port}/{s.url_path}")
        async with self._polling:
            if not self.leading:
                return f"{mode} (standby: the leader registers the webhook)"
            if not self._registered:
                await self._register_webhook()
        return mode

    async def _listen(self) -> None:
        """Serve the webhook listener (once: a retried connection keeps it); before any
        setWebhook points Telegram at us."""
        if self.listener is not None:
            return
        s = self.settings
        listener = WebhookListener(self.application, s.webhook_listen, s.webhook_port,
                                   s.url_path, self.webhook_secret)
        try:
            await listener.start()
        except OSError as exc:
            raise ConfigError(f"cannot listen for the Telegram webhook on {s.webhook_listen}:"
                              f"{s.webhook_port} ({exc.strerror or exc}); check "
                              "TELEGRAM_WEBHOOK_LISTEN and TELEGRAM_WEBHOOK_PORT") from None
        self.listener = listener

    async def _register_webhook(self) -> None:
        """setWebhook with this service's URL and the shared secret (the leader's job:
        Telegram posts to the last URL registered)."""
        url, bot = self.settings.webhook_url, self.application.bot
        assert url is not None
        await self.courier.call("setWebhook", lambda: bot.set_webhook(
            url=url, secret_token=self.webhook_secret, allowed_updates=ALLOWED_UPDATES))
        self._registered = True
        log.info("telegram: webhook registered url=%s (this service leads)", url)

    async def _start_polling(self) -> None:
        updater = self.application.updater
        assert updater is not None
        if updater.running:  # lead() came first
            return
        await updater.start_polling(timeout=timedelta(seconds=self.poll_timeout),
                                    allowed_updates=ALLOWED_UPDATES,
                                    error_callback=polling_failed)

    async def lead(self) -> None:
        """Poll for updates, or register the webhook with this service's URL (this service
        became the leader; the webhook listener serves anyway). While Telegram cannot be
        reached, try again every `reconnect` seconds."""
        async with self._polling:
            self.leading = True
            if await self._poll_now():
                return
        self._tasks.append(asyncio.create_task(self._lead_later(), name="signoff-lead"))

    async def _poll_now(self) -> bool:
        """Start polling (or register the webhook) if this service leads and may now; False
        when Telegram could not be reached (try again later)."""
        # Before the application runs, the connection (`_receive_updates`) does it.
        if not self.leading or not self.application.running:
            return True
        if self.settings.webhook:  # registered once the listener serves (`_receive_updates`)
            if self._registered or self.listener is None:
                return True
            return await self._try(self._register_webhook, "register the webhook")
        updater = self.application.updater
        if updater is None or updater.running:
            return True
        if not await self._try(self._start_polling, "start polling"):
            return False
        log.info("telegram: polling for updates (this service leads)")
        return True

    async def _try(self, start: Callable[[], Awaitable[None]], what: str) -> bool:
        try:
            await start()
        except TelegramError as exc:  # unreachable, or a token revoked meanwhile
            log.warning("telegram: retrying: cannot %s (%s); again within %.0fs", what,
                        describe(exc), self.reconnect)
            return False
        return True

    async def _lead_later(self) -> None:
        backoff = Backoff(self.reconnect, self.reconnect)  # jittered, as _connect_later
        while True:
            await asyncio.sleep(backoff.next())
            async with self._polling:
                if await self._poll_now():
                    return

    async def follow(self) -> None:
        """Stop polling at once (another service leads, or this one lost its lock). A
        webhook stays registered (the new leader registers its own URL) and served."""
        async with self._polling:
            self.leading = False
            self._registered = False
            updater = self.application.updater
            if updater is not None and updater.running and not self.settings.webhook:
                await updater.stop()
                log.info("telegram: stopped polling (this service stands by)")

    async def _connect_later(self) -> None:
        # Jittered up to `reconnect`, so services restarted together do not retry together.
        backoff = Backoff(self.reconnect, self.reconnect)
        while True:
            await asyncio.sleep(backoff.next())
            try:
                await self._connect()
                return
            except NetworkError as exc:
                log.warning("telegram: retrying: the Bot API is still unreachable (%s)",
                            describe(exc))
            except ConfigError as exc:
                log.error("%s", exc)
                return

    async def stop(self) -> None:
        """Stop polling (or the webhook listener) and the sender; close the HTTP connections."""
        for task in self._tasks:
            task.cancel()
        await asyncio.gather(*self._tasks, return_exceptions=True)
        app = self.application
        if app.updater is not None and app.updater.running:
            await app.updater.stop()
        if self.listener is not None:
            await self.listener.stop()
            self.listener = None
        if app.running:
            await app.stop()
        with contextlib.suppress(Exception):
            await app.shutdown()
        await app.bot.shutdown()  # its HTTP clients stay open when getMe failed at start
        log.info("telegram bot stopped")


def polling_failed(exc: TelegramError) -> None:
    """PTB retries getUpdates with backoff (1 s, x1.5 up to 30 s); one line each, no
    traceback. A 409 means another process polls this bot (a leader change in flight)."""
    if isinstance(exc, Conflict):
        log.warning("telegram: retrying: getUpdates answered 409 Conflict (another process "
                    "polls this bot); backing off")
    else:
        log.warning("telegram: retrying: getUpdates failed (%s)", describe(exc))


def check_listen(host: str, port: int) -> None:
    """Raise OSError when the webhook listener could not bind `host:port`."""
    for family, kind, proto, _, address in socket.getaddrinfo(
            host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE):
        with socket.socket(family, kind, proto) as probe:
            probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            probe.bind(address)


def telegram_bot(settings: TelegramSettings, queue: TaskQueue,
                 **kwargs: Any) -> TelegramBot | None:
    """The bot, or None (said once in the log) when TELEGRAM_BOT_TOKEN is not set."""
    if not settings.enabled:
        log.warning(TELEGRAM_OFF)
        return None
    return TelegramBot(settings, queue, **kwargs)
