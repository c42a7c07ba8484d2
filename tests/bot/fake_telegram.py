"""A fake Telegram Bot API server (aiohttp on 127.0.0.1) that real python-telegram-bot talks to.

It speaks the methods the bot uses, records every call, serves scripted updates through a
short long-poll, and can be told to fail: 429 with retry_after, 400 for a file, 401 for
getMe, or a dropped connection; or to be slow (`delays`: seconds a method hangs before it
answers; a request whose client went away meanwhile is dropped, not performed). Like the
real API, getUpdates answers 409 Conflict while a webhook is set (setWebhook records it;
deleteWebhook removes it), and a getUpdates that arrives while another one is open (a second
poller) as Telegram does: 409 Conflict, recorded in `conflicts`.

Several processes may share one fake and still be told apart: a client that puts a name
before the path (`api_base_url = URL/NAME`) has its calls recorded with `client` NAME.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web

from tests.timing import limit

JSON_KEYS = {"chat_id", "message_id", "reply_markup", "reply_parameters", "offset", "timeout",
             "limit", "commands", "allowed_updates", "show_alert", "link_preview_options",
             "max_connections", "drop_pending_updates"}


@dataclass
class Call:
    """One request the bot made: method, decoded params, uploaded files, and our status."""

    method: str
    params: dict[str, Any]
    files: dict[str, tuple[str, bytes]] = field(default_factory=dict)
    status: int = 200
    answered_at: float | None = None  # time.monotonic() when a success was answered
    client: str = ""  # the name before /bot<token> in the path, if any
    started_at: float = field(default_factory=time.monotonic)


@dataclass(frozen=True)
class Webhook:
    """What setWebhook registered: where Telegram would post updates, and the secret header."""

    url: str
    secret_token: str | None
    allowed_updates: list[str] | None


@dataclass
class Failure:
    status: int  # 0 = drop the connection
    description: str = ""
    retry_after: int | None = None


def user(user_id: int, first_name: str) -> dict[str, Any]:
    return {"id": user_id, "is_bot": False, "first_name": first_name}


class FakeTelegram:
    """`await fake.start()` gives the root URL for TELEGRAM_API_BASE_URL."""

    def __init__(self, token: str = "123456:TEST-TOKEN", *, long_poll: float = 0.2) -> None:
        self.token = token
        self.long_poll = long_poll
        self.me = {"id": 999, "is_bot": True, "first_name": "Signoff",
                   "username": "signoff_test_bot"}
        self.calls: list[Call] = []
        self.messages: dict[tuple[int, int], dict[str, Any]] = {}
        self.commands: list[Any] = []
        self.failures: dict[str, list[Failure]] = defaultdict(list)
        self.delays: dict[str, float] = {}
        self.webhook: Webhook | None = None
        self.polls_open: dict[int, web.Request] = {}  # getUpdates being answered, by id(call)
        self.conflicts: list[Call] = []  # those answered 409 because another was open
        self._updates: list[dict[str, Any]] = []
        self._update_ids = itertools.count(1)
        self._message_ids = itertools.count(1001)
        self._query_ids = itertools.count(1)
        self._changed = asyncio.Condition()
        self._runner: web.AppRunner | None = None
        self.port = 0
        self.url = ""

    # -- lifecycle -------------------------------------------------------------------

    async def start(self, port: int = 0) -> str:
        """Serve on `port` (0: a free one; a restart after stop() passes the old one)."""
        app = web.Application()
        app.router.add_route("*", "/bot{token}/{method}", self._handle)
        app.router.add_route("*", "/{client}/bot{token}/{method}", self._handle)
        self._runner = web.AppRunner(app, access_log=None)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", port)
        await site.start()
        self.port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
        self.url = f"http://127.0.0.1:{self.port}"
        return self.url

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()
            self._runner = None

    # -- scripting -------------------------------------------------------------------

    def fail(self, method: str, status: int, description: str = "", *,
             retry_after: int | None = None, times: int = 1) -> None:
        """The next `times` calls of `method` get this error (status 0 drops the connection)."""
        self.failures[method].extend([Failure(status, description, retry_after)] * times)

    async def push(self, update: dict[str, Any]) -> int:
        """Queue an update for getUpdates; returns its update_id."""
        update = self.update(update)
        async with self._changed:
            self._updates.append(update)
            self._changed.notify_all()
        return int(update["update_id"])

    async def command(self, chat_id: int, sender: dict[str, Any], text: str) -> int:
        command = text.split()[0]
        return await self.push({"message": self._incoming(chat_id, sender, text, entities=[
            {"type": "bot_command", "offset": 0, "length": len(command)}])})

    async def text(self, chat_id: int, sender: dict[str, Any], text: str,
                   reply_to: dict[str, Any] | None = None) -> int:
        extra = {"reply_to_message": reply_to} if reply_to else {}
        return await self.push({"message": self._incoming(chat_id, sender, text, **extra)})

    async def tap(self, message: dict[str, Any], sender: dict[str, Any], data: str) -> int:
        """A press of an inline button on one of the bot's messages."""
        return await self.push(self.tap_update(message, sender, data))

    def tap_update(self, message: dict[str, Any], sender: dict[str, Any],
                   data: str) -> dict[str, Any]:
        """The update a button press makes, without an update_id (push or post it yourself)."""
        return {"callback_query": {
            "id": str(next(self._query_ids)), "chat_instance": "ci-1", "from": sender,
            "data": data, "message": message}}

    def update(self, update: dict[str, Any]) -> dict[str, Any]:
        """`update` with a fresh update_id: what Telegram would post to a webhook."""
        return {"update_id": next(self._update_ids), **update}

    def _incoming(self, chat_id: int, sender: dict[str, Any], text: str,
                  **extra: Any) -> dict[str, Any]:
        return {"message_id": next(self._message_ids), "date": int(time.time()),
                "chat": _chat(chat_id), "from": sender, "text": text, **extra}

    # -- inspecting ------------------------------------------------------------------

    def calls_to(self, *methods: str, ok: bool = True) -> list[Call]:
        return [c for c in self.calls if c.method in methods and (c.status == 200 or not ok)]

    def sent_with_buttons(self) -> list[dict[str, Any]]:
        """The bot's messages that currently show inline buttons."""
        return [m for m in self.messages.values() if m.get("reply_markup")]

    async def wait_for(self, predicate: Callable[[], Any], timeout: float | None = None) -> Any:
        """Poll until `predicate()` is truthy; its value, or AssertionError past the suite's
        limit (tests/timing.py)."""
        deadline = time.monotonic() + limit(timeout)
        while not (value := predicate()):
            if time.monotonic() > deadline:
                raise AssertionError(f"timed out waiting; calls: {[c.method for c in self.calls]}")
            await asyncio.sleep(0.02)
        return value

    # -- the Bot API -----------------------------------------------------------------

    async def _handle(self, request: web.Request) -> web.StreamResponse:
        method = request.match_info["method"]
        call = Call(method, *await _params(request), client=request.match_info.get("client", ""))
        self.calls.append(call)
        if request.match_info["token"] != self.token:
            return _error(call, 401, "Unauthorized")
        if self.failures.get(method):
            failure = self.failures[method].pop(0)
            if failure.status == 0:
                call.status = 0
                assert request.transport is not None
                request.transport.close()
                return web.Response()
            return _error(call, failure.status, failure.description, failure.retry_after)
        if delay := self.delays.get(method):
            await asyncio.sleep(delay)
            if request.transport is None or request.transport.is_closing():
                call.status = 0  # the client gave up or died: Telegram never got it
                return web.Response()
        handler = getattr(self, f"_api_{method}", None)
        if handler is None:
            return _error(call, 404, "Not Found: method not found")
        result = await (self._poll(call, request) if method == "getUpdates"
                        else handler(call.params, call.files))
        if isinstance(result, web.Response):
            call.status = result.status
            return result
        call.answered_at = time.monotonic()
        return web.json_response({"ok": True, "result": result})

    async def _poll(self, call: Call, request: web.Request) -> Any:
        """getUpdates, one poller at a time: a second concurrent one gets 409 (a poll whose
        client went away, cancelled or killed, is over)."""
        if any(r.transport is not None and not r.transport.is_closing()
               for r in self.polls_open.values()):
            self.conflicts.append(call)
            return _error(None, 409, "Conflict: terminated by other getUpdates request; make "
                          "sure that only one bot instance is running")
        self.polls_open[id(call)] = request
        try:
            return await self._api_getUpdates(call.params, call.files)
        finally:
            del self.polls_open[id(call)]

    def pollers(self, since: float = 0.0) -> list[str]:
        """The clients whose getUpdates succeeded after `since` (time.monotonic())."""
        return sorted({c.client for c in self.calls_to("getUpdates") if c.started_at >= since})

    async def _api_getMe(self, p: dict[str, Any], f: Any) -> Any:
        return self.me

    async def _api_deleteWebhook(self, p: dict[str, Any], f: Any) -> Any:
        self.webhook = None
        return True

    async def _api_setWebhook(self, p: dict[str, Any], f: Any) -> Any:
        self.webhook = Webhook(p["url"], p.get("secret_token"), p.get("allowed_updates"))
        return True

    async def _api_setMyCommands(self, p: dict[str, Any], f: Any) -> Any:
        self.commands = p["commands"]
        return True

    async def _api_getMyCommands(self, p: dict[str, Any], f: Any) -> Any:
        return self.commands

    async def _api_answerCallbackQuery(self, p: dict[str, Any], f: Any) -> Any:
        return True

    async def _api_getUpdates(self, p: dict[str, Any], f: Any) -> Any:
        if self.webhook is not None:
            return _error(None, 409, "Conflict: can't use getUpdates method while webhook is "
                          "active; use deleteWebhook to delete the webhook first")
        offset = int(p.get("offset") or 0)
        wait = min(float(p.get("timeout") or 0), self.long_poll)
        async with self._changed:
            self._updates = [u for u in self._updates if u["update_id"] >= offset]
            if not self._updates and wait > 0:
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self._changed.wait(), wait)
            return list(self._updates)

    async def _api_sendMessage(self, p: dict[str, Any], f: Any) -> Any:
        return self._store(p, text=p["text"])

    async def _api_sendPhoto(self, p: dict[str, Any], f: Any) -> Any:
        return self._store(p, caption=p.get("caption"), photo=[
            {"file_id": "photo-1", "file_unique_id": "u-photo-1", "width": 8, "height": 8}])

    async def _api_sendDocument(self, p: dict[str, Any], f: dict[str, Any]) -> Any:
        name = f["document"][0] if "document" in f else "file"
        return self._store(p, caption=p.get("caption"), document={
            "file_id": "doc-1", "file_unique_id": "u-doc-1", "file_name": name})

    async def _api_editMessageText(self, p: dict[str, Any], f: Any) -> Any:
        return self._edit(p, "text", p["text"])

    async def _api_editMessageCaption(self, p: dict[str, Any], f: Any) -> Any:
        return self._edit(p, "caption", p.get("caption"))

    async def _api_editMessageReplyMarkup(self, p: dict[str, Any], f: Any) -> Any:
        return self._edit(p, None, None)

    def _store(self, p: dict[str, Any], **content: Any) -> dict[str, Any]:
        chat_id = int(p["chat_id"])
        msg = {"message_id": next(self._message_ids), "date": int(time.time()),
               "chat": _chat(chat_id), "from": self.me,
               **{k: v for k, v in content.items() if v is not None}}
        if p.get("reply_markup"):
            msg["reply_markup"] = p["reply_markup"]
        self.messages[(chat_id, msg["message_id"])] = msg
        return msg

    def _edit(self, p: dict[str, Any], key: str | None, value: Any) -> Any:
        msg = self.messages.get((int(p.get("chat_id", 0)), int(p.get("message_id", 0))))
        if msg is None:
            return _error(None, 400, "Bad Request: message to edit not found")
        markup = p.get("reply_markup") or None
        if (key is None or msg.get(key) == value) and msg.get("reply_markup") == markup:
            return _error(None, 400, "Bad Request: message is not modified")
        if key is not None:
            msg[key] = value
        msg.pop("reply_markup", None)
        if markup:
            msg["reply_markup"] = markup
        return msg


def _chat(chat_id: int) -> dict[str, Any]:
    if chat_id < 0:
        return {"id": chat_id, "type": "supergroup", "title": "Sign-off"}
    return {"id": chat_id, "type": "private", "first_name": "Private"}


def _error(call: Call | None, status: int, description: str,
           retry_after: int | None = None) -> web.Response:
    if call is not None:
        call.status = status
    body: dict[str, Any] = {"ok": False, "error_code": status, "description": description}
    if retry_after is not None:
        body["parameters"] = {"retry_after": retry_after}
    return web.json_response(body, status=status)


async def _params(request: web.Request) -> tuple[dict[str, Any], dict[str, tuple[str, bytes]]]:
    params: dict[str, Any] = {}
    files: dict[str, tuple[str, bytes]] = {}
    if request.content_type == "application/json":
        params = await request.json()
    elif request.can_read_body:
        for key, value in (await request.post()).items():
            if isinstance(value, web.FileField):
                files[key] = (value.filename, value.file.read())
            elif key in JSON_KEYS:
                params[key] = json.loads(value)
            else:
                params[key] = value
    return params, files
