"""The queue's Prometheus metrics: a collector that reads the database at scrape time, and
the handler-duration histogram the worker runtime feeds in process.

prometheus_client is a dependency of the core for this module alone; the runtime knows
nothing of it (a pool calls `WorkerConfig.on_slice`, which `observe_slice` implements).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Histogram
from prometheus_client.core import (
    CounterMetricFamily,
    GaugeMetricFamily,
    HistogramMetricFamily,
    Metric,
)
from prometheus_client.registry import Collector
from prometheus_client.utils import floatToGoString

from taskqueue.errors import one_line
from taskqueue.maintenance.signals import SignalConfig, read_signals
from taskqueue.queues.maintenance import MaintenanceQueue

log = logging.getLogger("signoff.metrics")

# A scrape waits this long for the database (seconds); then it reports
# signoff_database_up 0 and the in-process metrics only.
SCRAPE_TIMEOUT = 5.0
# Handler slices run from milliseconds (a park) to an hour (a long build).
DURATION_BUCKETS = (0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800, 3600)
# A person answers in minutes to days: a minute, 5 and 15 minutes, half an hour, 1, 2, 4,
# 8 hours, a day, two days, a week.
DECISION_BUCKETS = (60, 300, 900, 1800, 3600, 7200, 14400, 28800, 86400, 172800, 604800)
_RESCUES = ("requeued", "orphans_requeued", "failed", "expired")


@dataclass(frozen=True)
class Snapshot:
    """What one scrape read from the database."""

    figures: dict[str, Any]
    signals: dict[str, bool]
    backlog: list[dict[str, Any]]


class QueueCollector(Collector):
    """Yields the database's figures of the last `refresh()`; call it before each scrape."""

    def __init__(self, queue: MaintenanceQueue, signal_config: SignalConfig | None = None, *,
                 timeout: float = SCRAPE_TIMEOUT) -> None:
        self.queue, self.timeout = queue, timeout
        self.signal_config = signal_config or SignalConfig()
        self.snapshot: Snapshot | None = None

    async def refresh(self) -> bool:
        """Read the figures (None after a failure or timeout); True when the database
        answered in time."""
        try:
            async with asyncio.timeout(self.timeout):
                self.snapshot = await self._read()
        except Exception as exc:
            log.warning("metrics: the database did not answer in %.0fs: %s", self.timeout,
                        one_line(exc) or type(exc).__name__)
            self.snapshot = None
        return self.snapshot is not None

    async def _read(self) -> Snapshot:
        figures = await self.queue.metrics_read(DECISION_BUCKETS)
        signals = await read_signals(self.queue, self.signal_config)
        return Snapshot(figures, {"incident": signals.incident.firing,
                                  "nudge": signals.nudge.firing},
                        await self.queue.notification_backlog())

    def describe(self) -> Iterable[Metric]:
        return []  # the names depend on the data; nothing to check at registration

    def collect(self) -> Iterable[Metric]:
        up = GaugeMetricFamily("signoff_database_up",
                               "1 when the database answered this scrape in time")
        up.add_metric([], 1 if self.snapshot else 0)
        yield up
        if self.snapshot is not None:
            yield from _tasks(self.snapshot.figures)
            yield from _approvals(self.snapshot.figures)
            yield from _decision_times(self.snapshot.figures)
            yield from _reaper(self.snapshot.figures["reaper"])
            yield from _signals(self.snapshot.signals)
            yield from _backlog(self.snapshot.backlog)


def _tasks(f: dict[str, Any]) -> Iterator[Metric]:
    tasks = GaugeMetricFamily("signoff_tasks", "Tasks by capability and status",
                              labels=["capability", "status"])
    for r in f["tasks"]:
        tasks.add_metric([r["capability"], r["status"]], r["n"])
    claimable = GaugeMetricFamily("signoff_claimable_tasks", "Tasks claimable now",
                                  labels=["capability"])
    age = GaugeMetricFamily("signoff_claimable_oldest_age_seconds",
                            "How long the oldest claimable task has waited",
                            labels=["capability"])
    for r in f["claimable"]:
        claimable.add_metric([r["capability"]], r["n"])
        age.add_metric([r["capability"]], r["oldest_seconds"])
    yield from (tasks, claimable, age)


def _approvals(f: dict[str, Any]) -> Iterator[Metric]:
    a = f["approvals"] or {"open": 0, "oldest_seconds": 0.0}
    yield GaugeMetricFamily("signoff_approvals_open", "Questions waiting for a person",
                            value=a["open"])
    yield GaugeMetricFamily("signoff_approval_oldest_age_seconds",
                            "How long the oldest open question has waited (0: none)",
                            value=a["oldest_seconds"])
    decisions = CounterMetricFamily("signoff_decisions", "Approvals settled, by decision",
                                    labels=["decision"])
    for r in f["decisions"]:
        decisions.add_metric([r["decision"]], r["n"])
    yield decisions


def _decision_times(f: dict[str, Any]) -> Iterator[Metric]:
    """Computed at scrape from every decided approval still in the database, so the
    figures survive restarts and agree across processes. Labels are capability and
    decision only: a person's name would make a series per person (unbounded)."""
    hist = HistogramMetricFamily(
        "signoff_decision_seconds", "Time from a question to its decision, by capability "
        "and decision (approved, revised, skipped)", labels=["capability", "decision"])
    series: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in f["decision_seconds"]:
        series.setdefault((r["capability"], r["decision"]), []).append(r)
    for (cap, decision), rows in series.items():
        buckets = [(floatToGoString(r["le"]), int(r["n"])) for r in rows]
        buckets.append(("+Inf", int(rows[0]["total"])))
        hist.add_metric([cap, decision], buckets, float(rows[0]["seconds"] or 0.0))
    yield hist
    expired = CounterMetricFamily("signoff_approvals_expired",
                                  "Questions that expired unanswered, by capability",
                                  labels=["capability"])
    for r in f["expired"]:
        expired.add_metric([r["capability"]], int(r["n"]))
    yield expired


def _reaper(r: dict[str, Any]) -> Iterator[Metric]:
    yield CounterMetricFamily("signoff_reaper_runs", "Reaper runs recorded", value=r["runs"])
    rescued = CounterMetricFamily("signoff_reaper_rescued",
                                  "What the reaper's runs did, by kind", labels=["kind"])
    for kind in _RESCUES:
        rescued.add_metric([kind], r[kind])
    yield rescued
    if r["last_seconds"] is not None:
        yield GaugeMetricFamily("signoff_reaper_last_run_age_seconds",
                                "Seconds since the reaper's last run", value=r["last_seconds"])


def _signals(signals: dict[str, bool]) -> Iterator[Metric]:
    firing = GaugeMetricFamily("signoff_signal_firing", "1 while a signal fires",
                               labels=["signal"])
    for name, on in signals.items():
        firing.add_metric([name], 1 if on else 0)
    yield firing


def _backlog(rows: list[dict[str, Any]]) -> Iterator[Metric]:
    owed = GaugeMetricFamily("signoff_notification_backlog",
                             "Notifications not yet delivered, per channel", labels=["channel"])
    age = GaugeMetricFamily("signoff_notification_oldest_age_seconds",
                            "Age of the oldest undelivered notification, per channel",
                            labels=["channel"])
    for r in rows:
        owed.add_metric([r["channel"]], r["undelivered"])
        age.add_metric([r["channel"]], r["oldest_seconds"])
    yield from (owed, age)


class SliceDurations:
    """The handler-duration histogram; `observe` is a WorkerConfig.on_slice observer."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.histogram = Histogram(
            "signoff_handler_duration_seconds", "Handler slices' wall time in this process",
            ["capability", "outcome"], buckets=DURATION_BUCKETS, registry=registry)

    def observe(self, capability: str, outcome: str, seconds: float) -> None:
        self.histogram.labels(capability, outcome).observe(seconds)
