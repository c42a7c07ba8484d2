"""WebhookListener: the HTTP server that takes Telegram's webhook posts and hands their
updates to the Application; and the webhook's shared secret.

Every service serves the listener, so a proxy may route Telegram's posts to any of them; only
the leader calls setWebhook (TelegramBot.lead). PTB's `Updater.start_webhook` always calls
setWebhook itself (its `_bootstrap`), so a standby could not use it without taking the
registration over: this listener is PTB's documented alternative for a custom webhook server
(put `Update.de_json(...)` on `application.update_queue`), on aiohttp like the service's
other endpoints.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import logging

from aiohttp import web
from telegram import Update
from telegram.ext import Application

from taskqueue import RequestLog

log = logging.getLogger("signoff.telegram")

SECRET_HEADER = "X-Telegram-Bot-Api-Secret-Token"
# Updates are small JSON documents (files arrive as ids); anything larger is not Telegram.
MAX_BODY = 1024 * 1024
# HMAC key of the derived secret: changing it would refuse posts until a leader re-registers.
SECRET_LABEL = b"signoff-webhook"


def derived_secret(token: str) -> str:
    """The webhook's secret when TELEGRAM_WEBHOOK_SECRET is unset: HMAC-SHA256 of a fixed
    label keyed by the bot token, in hex (64 characters, within Telegram's 1-256 of
    [A-Za-z0-9_-]). Every service with the same token derives the same one, so whichever
    registered it, all accept the posts; it reveals nothing about the token."""
    return hmac.new(token.encode(), SECRET_LABEL, hashlib.sha256).hexdigest()


class WebhookListener:
    """`await start()` binds `host:port` (OSError when it cannot) and serves POST /`path`;
    `await stop()`. A post without the secret header's exact value is refused with 403."""

    def __init__(self, application: Application, host: str, port: int, path: str,
                 secret: str) -> None:
        self.application = application
        self.host, self.port, self.path = host, port, "/" + path.strip("/")
        self._secret = secret.encode()
        self._runner: web.AppRunner | None = None

    @property
    def running(self) -> bool:
        return self._runner is not None

    async def start(self) -> None:
        app = web.Application(client_max_size=MAX_BODY)
        app.router.add_post(self.path, self._post)
        app.router.add_post(self.path + "/", self._post)
        # A request aiohttp cannot parse is one rate-limited line, as on /healthz.
        runner = web.AppRunner(app, access_log=None, logger=RequestLog(
            logging.getLogger("signoff.telegram.webhook")))
        await runner.setup()
        try:
            await web.TCPSite(runner, self.host, self.port).start()
        except OSError:
            await runner.cleanup()
            raise
        self._runner = runner

    async def stop(self) -> None:
        runner, self._runner = self._runner, None
        if runner is not None:
            await runner.cleanup()

    async def _post(self, request: web.Request) -> web.Response:
        given = request.headers.get(SECRET_HEADER, "").encode()
        if not hmac.compare_digest(given, self._secret):
            return web.Response(status=403, text="forbidden")
        try:
            data = json.loads(await request.read())
            if not isinstance(data, dict) or not isinstance(data.get("update_id"), int):
                raise ValueError("not an update object")
            update = Update.de_json(data, self.application.bot)
        # What PTB's parsing raises on a malformed update (it does not validate types).
        except (ValueError, TypeError, KeyError, AttributeError) as exc:
            # Telegram does not retry a 400; one short line, never the body.
            log.warning("telegram: webhook post refused (400): not an update (%s)",
                        type(exc).__name__)
            return web.Response(status=400, text="not an update")
        await self.application.update_queue.put(update)
        return web.Response(text="ok")
