"""IncidentAlert: records the incident signal's changes as alert notifications, once each.

The announced state lives in `alert_states`, so an alert and its recovery are each owed to
the channels once per change, whichever process checks first, and a restart announces
nothing again. The scheduler calls `run_once()`; channels deliver what it records.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass

from taskqueue.maintenance.signals import SignalConfig, read_signals
from taskqueue.queues.maintenance import MaintenanceQueue

log = logging.getLogger("signoff.alerts")


@dataclass(frozen=True)
class AlertReport:
    """What one check found: the signal's state and whether a change was recorded."""

    firing: bool
    announced: str | None  # "alert", "recovery" or None


class IncidentAlert:
    """Checks the incident signal; on a change, one caller records the alert."""

    NAME = "incident"

    def __init__(self, queue: MaintenanceQueue, config: SignalConfig | None = None) -> None:
        self.queue = queue
        self.config = config

    async def run_once(self) -> AlertReport:
        signal = (await read_signals(self.queue, self.config)).incident
        if not await self.queue.alert_state_change(self.NAME, signal.firing, signal.to_json()):
            return AlertReport(signal.firing, None)
        kind = "alert" if signal.firing else "recovery"
        log.info("incident %s recorded count=%d threshold=%d", kind, signal.count,
                 signal.threshold)
        return AlertReport(signal.firing, kind)
