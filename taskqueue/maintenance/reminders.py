"""Reminders and escalation of unanswered approvals: one run marks, records and sends each
once (the reaper runs it on its schedule; see docs/semantics.md, "Four-eyes approvals")."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from taskqueue.queues.maintenance import MaintenanceQueue

log = logging.getLogger("signoff.reminders")


@dataclass(frozen=True)
class RemindReport:
    """The approvals one run reminded and escalated (their ids)."""

    reminded: tuple[int, ...] = ()
    escalated: tuple[int, ...] = ()


class Reminders:
    """`run_once()`: a reminder for each open approval past its capability's `remind_after`,
    then an escalation to `escalate_to` past `escalate_after`; each exactly once, also
    when two runs overlap (the mark is taken under the approval's row lock)."""

    def __init__(self, queue: MaintenanceQueue) -> None:
        self.queue = queue

    async def run_once(self) -> RemindReport:
        reminded = await self.queue.approval_remind_due()
        escalated = await self.queue.approval_escalate_due()
        for r in reminded:
            log.info("approval reminded task=%s approval=%s capability=%s", r["task_id"],
                     r["id"], r["capability"])
        for r in escalated:
            log.info("approval escalated task=%s approval=%s capability=%s to=%s",
                     r["task_id"], r["id"], r["capability"], ",".join(r["escalate_to"]))
        return RemindReport(tuple(r["id"] for r in reminded), tuple(r["id"] for r in escalated))
