"""Listening: one shared LISTEN connection per event loop and DSN, reconnecting with backoff.

Every part of a process that wants NOTIFY (its worker pools on signoff_tasks, a delivery
channel on the notification outbox's channel) subscribes to the same `ListenerHub`, so a
process holds one listening connection however many parts it runs. The hub LISTENs on the
union of its subscriptions' channels and hands each notification to every subscriber of
its channel. After a reconnect it calls every subscriber with payload None for each of its
channels ("you may have missed some"). It connects when the first subscription arrives and
closes the connection when the last one leaves.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable, Iterable, Sequence

import psycopg
from psycopg import sql

from taskqueue.errors import TRANSIENT, one_line
from taskqueue.runtime.backoff import Backoff
from taskqueue.store.pooler import session_dsn

log = logging.getLogger("signoff.listener")

# Backoff between reconnection attempts (seconds): full jitter under a cap that doubles
# from MIN up to MAX (runtime/backoff.py).
RECONNECT_MIN = 0.2
RECONNECT_MAX = 10.0
# An idle connection is checked this often, so a silently dead one is noticed (seconds).
CHECK_EVERY = 30.0
# The longest a part polls when no LISTEN can hold (a transaction pooler, no direct URL).
UNHEARD_POLL = 2.0
# How the connection shows in pg_stat_activity.
APPLICATION_NAME = "signoff-listener"

_LISTEN = sql.SQL("LISTEN {}")
_UNLISTEN = sql.SQL("UNLISTEN {}")

# Called with (channel, payload); payload None means "reconnected: you may have missed some".
OnNotify = Callable[[str, str | None], None]


class Subscription:
    """Some channels and the callback told of their notifications. `connected` is set while
    the hub listens on all of them; `connections` counts how often that began."""

    def __init__(self, channels: Iterable[str], on_notify: OnNotify) -> None:
        self.channels = tuple(dict.fromkeys(channels))
        self.on_notify = on_notify
        self.connected = asyncio.Event()
        self.connections = 0
        self.hub: ListenerHub | None = None

    async def close(self) -> None:
        """Stop hearing these channels (UNLISTEN those nobody else wants); idempotent."""
        if self.hub is not None:
            await self.hub.unsubscribe(self)


# The hub of each (event loop, DSN); a hub leaves when its last subscription does.
_SHARED: dict[tuple[int, str], ListenerHub] = {}


def _dsn_key(dsn: str) -> str:
    """The same server and database however the DSN is spelled (URL or key=value)."""
    try:
        return repr(sorted(psycopg.conninfo.conninfo_to_dict(dsn).items()))
    except psycopg.ProgrammingError:
        return dsn


class ListenerHub:
    """`sub = hub.subscribe(channels, on_notify)`, later `await sub.close()`;
    `ListenerHub.shared(dsn)` is the running loop's hub for that database."""

    def __init__(self, dsn: str, *, check_every: float = CHECK_EVERY) -> None:
        self.dsn = dsn
        self.check_every = check_every
        self.subscriptions: list[Subscription] = []
        self.connected = asyncio.Event()
        self.connections = 0
        self._listening: set[str] = set()  # channels LISTENed on the live connection
        self._changed = asyncio.Event()
        self._task: asyncio.Task[None] | None = None
        self._key: tuple[int, str] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.backoff = Backoff(RECONNECT_MIN, RECONNECT_MAX)
        # What this outage was said to be ("lost", "refused"), each once; and whether the
        # connection of the current try got through.
        self._said: set[str] = set()
        self._live = False

    @classmethod
    def shared(cls, dsn: str) -> ListenerHub:
        """The hub every part of this event loop uses for `dsn` (made on first use)."""
        loop = asyncio.get_running_loop()
        key = (id(loop), _dsn_key(dsn))
        hub = _SHARED.get(key)
        # The hub holds its loop, so the id is not reused while the hub is registered.
        if hub is None or hub._loop is None or hub._loop.is_closed():
            hub = _SHARED[key] = cls(dsn)
            hub._key, hub._loop = key, loop
        return hub

    @property
    def hears(self) -> bool:
        """False through a transaction pooler without a direct URL: no LISTEN at all."""
        return session_dsn(self.dsn) is not None

    def poll_for(self, seconds: float) -> float:
        """A part's wait between polls: its own `seconds` while NOTIFY wakes it, at most
        UNHEARD_POLL when nothing can (so a message waits seconds, not a whole poll)."""
        return seconds if self.hears else min(seconds, UNHEARD_POLL)

    def subscribe(self, channels: Sequence[str], on_notify: OnNotify) -> Subscription:
        """Hear `channels` from now on (LISTEN on the live connection, or connect)."""
        sub = Subscription(channels, on_notify)
        self.add(sub)
        return sub

    @contextlib.asynccontextmanager
    async def subscribed(self, channels: Sequence[str],
                         on_notify: OnNotify) -> AsyncIterator[Subscription]:
        """`subscribe()` for the duration of a block."""
        sub = self.subscribe(channels, on_notify)
        try:
            yield sub
        finally:
            await sub.close()

    def add(self, sub: Subscription) -> None:
        """Subscribe a Subscription made beforehand (what `Listener` does)."""
        if sub.hub is not None:
            raise ValueError("the subscription already belongs to a hub")
        sub.hub = self
        self.subscriptions.append(sub)
        self._changed.set()
        if self._task is None:
            if self._key is not None:
                _SHARED.setdefault(self._key, self)
            self._task = asyncio.create_task(self._run(), name="signoff-listener")

    async def unsubscribe(self, sub: Subscription) -> None:
        """Stop telling `sub`; the last one to leave closes the connection."""
        if sub.hub is not self:
            return
        self.subscriptions.remove(sub)
        sub.hub = None
        sub.connected.clear()
        if self.subscriptions:
            self._changed.set()
            return
        task, self._task = self._task, None
        if self._key is not None and _SHARED.get(self._key) is self:
            del _SHARED[self._key]
        if task is not None:
            task.cancel()
            await asyncio.gather(task, return_exceptions=True)

    async def _run(self) -> None:
        while True:
            try:
                await self._listen()
            except Exception as exc:
                delay = self.backoff.next()
                if isinstance(exc, TRANSIENT):
                    self._say_away(exc, delay)
                else:  # a bug must not leave every part of the process deaf for good
                    log.exception("listener failed; reconnecting in %.1fs", delay)
                await asyncio.sleep(delay)

    def _say_away(self, exc: BaseException, delay: float) -> None:
        """The loss of a live connection and the first refused reconnect, once each per
        outage (its end says "listener reconnected"); each further try, of which a server
        that refuses connections for a while sees many, only at debug."""
        phase = "lost" if self._live else "refused"
        level = logging.DEBUG if phase in self._said else logging.WARNING
        self._said.add(phase)
        if phase == "lost":
            log.log(level, "listener lost its connection; reconnecting in %.1fs: %s", delay,
                    one_line(exc))
        else:
            log.log(level, "listener cannot connect; trying again in %.1fs, quietly until it "
                    "does: %s", delay, one_line(exc))

    async def _listen(self) -> None:
        target = session_dsn(self.dsn)
        if target is None:
            # A transaction pooler and no direct URL: LISTEN cannot hold, so nobody hears
            # anything here and every part polls (said once at connect, store/pooler.py).
            await asyncio.Event().wait()
            return
        self._live = False
        conn = await psycopg.AsyncConnection.connect(
            target, autocommit=True, connect_timeout=5, application_name=APPLICATION_NAME)
        self._live = True
        self._listening = set()
        try:
            while True:
                self._changed.clear()
                await self._sync(conn)
                if not await self._hear(conn):
                    await conn.execute("SELECT 1")
        finally:
            self.connected.clear()
            for sub in self.subscriptions:
                sub.connected.clear()
            await conn.close()

    async def _sync(self, conn: psycopg.AsyncConnection) -> None:
        """LISTEN and UNLISTEN until the connection hears exactly what is subscribed."""
        wanted = {c for sub in self.subscriptions for c in sub.channels}
        for channel in sorted(wanted - self._listening):
            await conn.execute(_LISTEN.format(sql.Identifier(channel)))
            self._listening.add(channel)
        for channel in sorted(self._listening - wanted):
            await conn.execute(_UNLISTEN.format(sql.Identifier(channel)))
            self._listening.discard(channel)
        if not self.connected.is_set():
            self._on_connected()
        for sub in list(self.subscriptions):
            # One that arrived during the awaits above waits for the next pass.
            if not sub.connected.is_set() and self._listening.issuperset(sub.channels):
                self._on_subscribed(sub)

    def _on_connected(self) -> None:
        self._said.clear()
        self.connected.set()
        self.backoff.reset()
        verb = "reconnected" if self.connections else "listening"
        log.info("listener %s channels=%s", verb, ",".join(sorted(self._listening)))
        self.connections += 1

    def _on_subscribed(self, sub: Subscription) -> None:
        sub.connected.set()
        if sub.connections:  # it was listening before: what came meanwhile was missed
            for channel in sub.channels:
                self._tell(sub, channel, None)
        sub.connections += 1

    async def _hear(self, conn: psycopg.AsyncConnection) -> bool:
        """Dispatch notifications for `check_every` seconds; True when the subscriptions
        changed meanwhile (then the connection must LISTEN or UNLISTEN first)."""
        hearing = asyncio.create_task(self._dispatch(conn))
        changed = asyncio.create_task(self._changed.wait())
        try:
            await asyncio.wait({hearing, changed}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            # Cancelling the wait for notifications is safe: no query is in flight then.
            hearing.cancel()
            changed.cancel()
            await asyncio.gather(hearing, changed, return_exceptions=True)
        if not hearing.cancelled() and (exc := hearing.exception()) is not None:
            raise exc
        return changed.done() and not changed.cancelled()

    async def _dispatch(self, conn: psycopg.AsyncConnection) -> None:
        async for note in conn.notifies(timeout=self.check_every):
            for sub in list(self.subscriptions):
                if note.channel in sub.channels:
                    self._tell(sub, note.channel, note.payload)

    @staticmethod
    def _tell(sub: Subscription, channel: str, payload: str | None) -> None:
        try:
            sub.on_notify(channel, payload)
        except Exception:  # one subscriber's bug must not deafen the others
            log.exception("listener subscriber failed channel=%s", channel)


class Listener:
    """`await listener.run()` until cancelled: a subscription to the loop's shared hub for
    `dsn` (ListenerHub.shared) while it runs; `connected` is set while it listens."""

    def __init__(self, dsn: str, channels: Sequence[str], on_notify: OnNotify, *,
                 check_every: float = CHECK_EVERY) -> None:
        self.dsn = dsn
        self.channels = tuple(channels)
        self.on_notify = on_notify
        self.check_every = check_every
        self.subscription = Subscription(self.channels, on_notify)
        self.connected = self.subscription.connected

    @property
    def reconnects(self) -> int:
        """How often it began listening (1 after the first connection)."""
        return self.subscription.connections

    async def run(self) -> None:
        hub = ListenerHub.shared(self.dsn)
        # The shared connection is checked as often as its most demanding user asks.
        hub.check_every = min(hub.check_every, self.check_every)
        hub.add(self.subscription)
        try:
            await asyncio.Event().wait()
        finally:
            await self.subscription.close()
