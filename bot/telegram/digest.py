"""Scheduled messages: the nudge digest and the incident alert; the scheduler calls run_once()."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from telegram.error import TelegramError

from bot.telegram.courier import Courier, describe
from bot.telegram.views import digest_text, incident_text, recovery_text
from taskqueue import SignalConfig, TaskQueue, read_signals

log = logging.getLogger("signoff.telegram.digest")


class NudgeDigest:
    """Sends the list of unanswered approvals, oldest first, when there are any."""

    def __init__(self, queue: TaskQueue, courier: Courier, chat_id: int, *,
                 max_items: int = 30) -> None:
        self.queue, self.courier, self.chat_id = queue, courier, chat_id
        self.max_items = max_items

    async def run_once(self) -> int:
        """Send the digest; returns how many approvals it listed (0: nothing was sent)."""
        waiting = await self.queue.approval_list_open()
        if not waiting:
            log.info("nudge digest skipped: no unanswered approvals")
            return 0
        await self.courier.text(self.chat_id, digest_text(waiting, limit=self.max_items))
        log.info("nudge digest sent approvals=%d oldest_task=%s", len(waiting),
                 waiting[0].task_id)
        return len(waiting)


@dataclass(frozen=True)
class AlertReport:
    """What one check found: the signal's state and whether a message went out."""

    firing: bool
    announced: str | None  # "alert", "recovery" or None


class IncidentAlert:
    """Announces the incident signal once per change; the state lives in Postgres."""

    NAME = "incident"

    def __init__(self, queue: TaskQueue, courier: Courier, chat_id: int,
                 config: SignalConfig | None = None) -> None:
        self.queue, self.courier, self.chat_id = queue, courier, chat_id
        self.config = config

    async def run_once(self) -> AlertReport:
        """Check the signal; on a change, claim it (one process wins) and announce it."""
        signal = (await read_signals(self.queue, self.config)).incident
        if not await self.queue.alert_state_change(self.NAME, signal.firing):
            return AlertReport(signal.firing, None)
        text = incident_text(signal) if signal.firing else recovery_text(signal)
        try:
            await self.courier.text(self.chat_id, text)
        except TelegramError as exc:
            # Put the old state back, so the next check announces the change again.
            await self.queue.alert_state_change(self.NAME, not signal.firing)
            log.warning("incident %s not sent; will retry: %s",
                        "alert" if signal.firing else "recovery", describe(exc))
            raise
        kind = "alert" if signal.firing else "recovery"
        log.info("incident %s sent count=%d threshold=%d", kind, signal.count, signal.threshold)
        return AlertReport(signal.firing, kind)
