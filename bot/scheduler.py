"""The service's timetable (APScheduler 3.11): reaper, pruner, incident check, ticks, producers, and
the checks a channel adds (the nudge digest).

Every entry calls a small object's `run_once()`; scheduled jobs enqueue work and do not do
it, except ticks, which run one slice by design. Jobs coalesce and have a misfire grace, so
after downtime a missed run fires once; producers also catch up their last missed period at
start (a period runs to completion once, so that is safe to repeat).

With several services on one database, entries added `leader_only` (the nudge digest, the
incident check, the pruner) run on the leader alone: every service keeps the timetable and
the others skip those runs, so the one that takes over simply runs the next one.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

from apscheduler.schedulers.asyncio import AsyncIOScheduler
from apscheduler.triggers.base import BaseTrigger
from apscheduler.triggers.cron import CronTrigger
from apscheduler.triggers.interval import IntervalTrigger

from taskqueue import (
    CapabilityRun,
    Config,
    IncidentAlert,
    ProducerJob,
    Pruner,
    Reaper,
    ReaperConfig,
    Stopping,
    TaskQueue,
    Tick,
    cron_trigger,
    load_handler,
)

log = logging.getLogger("signoff.scheduler")

JobBody = Callable[[], Awaitable[Any]]
# The checks a channel provides bodies for; the schedule lives here.
CHECKS = ("nudge_digest",)


def previous_fire_time(trigger: BaseTrigger, now: datetime,
                       lookback: timedelta) -> datetime | None:
    """The trigger's latest fire time in (now - lookback, now], or None."""
    fire = trigger.get_next_fire_time(None, now - lookback)
    last = None
    while fire is not None and fire <= now:
        last = fire
        fire = trigger.get_next_fire_time(fire, fire + timedelta(microseconds=1))
    return last


class ServiceScheduler:
    """Owns the AsyncIOScheduler; `jobs` maps each entry's id to the callable it runs."""

    def __init__(self, queue: TaskQueue, config: Config, *, worker: str,
                 stopping: Stopping | None = None) -> None:
        self.queue = queue
        self.config = config
        self.worker = worker
        self.stopping = stopping or Stopping()
        self.tz = ZoneInfo(config.timezone)
        self.scheduler = AsyncIOScheduler(timezone=self.tz, job_defaults={
            "coalesce": True, "max_instances": 1,
            "misfire_grace_time": config.misfire_grace_seconds})
        self.jobs: dict[str, JobBody] = {}
        self.leader_only: set[str] = set()
        # The service's Leadership says; alone (tests, no service) it always leads.
        self.is_leader: Callable[[], bool] = lambda: True
        self._inflight: set[asyncio.Task[Any]] = set()

    # -- building the timetable ----------------------------------------------------------

    def add(self, job_id: str, body: JobBody, trigger: BaseTrigger, *,
            catch_up: bool = False, at_start: bool = False, leader_only: bool = False) -> None:
        """Add (or replace) an entry; with `catch_up`, its last missed run fires at start;
        with `at_start`, it also runs as soon as the scheduler starts; with `leader_only`,
        it runs only while `is_leader()`."""
        self.jobs[job_id] = body
        if leader_only:
            self.leader_only.add(job_id)
        options: dict[str, Any] = {}
        if at_start:
            options["next_run_time"] = datetime.now(self.tz)
        if catch_up:
            lookback = timedelta(seconds=self.config.misfire_grace_seconds)
            missed = previous_fire_time(trigger, datetime.now(self.tz), lookback)
            if missed is not None:
                options["next_run_time"] = missed
        self.scheduler.add_job(self._timed, trigger, args=[job_id], id=job_id, name=job_id,
                               replace_existing=True, **options)

    def add_reaper(self) -> None:
        reaper = Reaper(self.queue, ReaperConfig(self.config.orphan_after_seconds))
        # At start too: a dead worker's tasks are rescued at once, and /healthz sees a run.
        self.add("reaper", reaper.run_once,
                 IntervalTrigger(minutes=self.config.reaper_interval_minutes, timezone=self.tz),
                 at_start=True)

    def add_pruner(self) -> None:
        """Retention, daily at 03:17 (off the hour, when little else runs), on the leader:
        its deletes would be safe on every service (SKIP LOCKED), but each run ends with a
        VACUUM of the tables it pruned, and one a day is enough."""
        pruner = Pruner(self.queue, self.config.retention)
        self.add("pruner", pruner.run_once,
                 CronTrigger(hour=3, minute=17, timezone=self.tz), leader_only=True)

    def add_incident_check(self) -> None:
        """Record the incident signal's changes as alert notifications for the channels."""
        alert = IncidentAlert(self.queue, self.config.signals)
        self.add("incident_check", alert.run_once, IntervalTrigger(
            minutes=self.config.signal_check_minutes, timezone=self.tz), leader_only=True)

    def add_tick(self, run: CapabilityRun, minutes: float) -> Tick:
        tick = Tick(self.queue, run, self.worker, self.stopping)
        self.add(f"tick:{run.capability}", tick.run_once,
                 IntervalTrigger(minutes=minutes, timezone=self.tz))
        return tick

    def add_producers(self) -> None:
        for cap in self.config.capabilities.values():
            for p in cap.producers:
                job = ProducerJob(self.queue, p.name, cap.name, load_handler(p.function),
                                  period=p.period, timezone=self.config.timezone)
                trigger = cron_trigger(p.cron, self.config.timezone)
                self.add(f"producer:{cap.name}:{p.name}", self._producer_body(job, trigger),
                         trigger, catch_up=True)

    def _producer_body(self, job: ProducerJob, trigger: BaseTrigger) -> JobBody:
        lookback = timedelta(seconds=self.config.misfire_grace_seconds)

        async def body() -> Any:
            # The period is the schedule's, not the clock's: a late run keeps its date.
            now = datetime.now(self.tz)
            return await job.run_once(previous_fire_time(trigger, now, lookback) or now)

        return body

    def set_check(self, name: str, body: JobBody, *,
                  times: tuple[str, ...] | None = None) -> None:
        """A channel's hook: run `body` at `times` (HH:MM; default the config's
        digest_times) for `name` (see CHECKS)."""
        if name not in CHECKS:
            raise ValueError(f"unknown check {name!r}; one of {', '.join(CHECKS)}")
        for at in times or self.config.digest_times:
            hour, minute = (int(x) for x in at.split(":"))
            self.add(f"{name}:{at}", body, CronTrigger(hour=hour, minute=minute, timezone=self.tz),
                     leader_only=True)

    # -- running ---------------------------------------------------------------------------

    async def _timed(self, job_id: str) -> Any:
        """What the timer runs: the entry, unless it is the leader's and this is a standby."""
        if job_id in self.leader_only and not self.is_leader():
            log.info("job skipped job=%s: this service is a standby", job_id)
            return None
        return await self._guarded(job_id)

    async def _guarded(self, job_id: str) -> Any:
        """Run one entry, log its failure in one line, and keep the timetable going."""
        me = asyncio.current_task()
        if me is not None:
            self._inflight.add(me)
        try:
            return await self.jobs[job_id]()
        except Exception as exc:
            log.exception("job failed job=%s error=%s", job_id, exc)
            return None
        finally:
            if me is not None:
                self._inflight.discard(me)

    async def run_job(self, job_id: str) -> Any:
        """Run an entry now, as the timer would, even on a standby (tests and
        `signoff`-style triggers)."""
        return await self._guarded(job_id)

    def start(self) -> None:
        self.scheduler.start()
        for job in self.scheduler.get_jobs():
            log.info("scheduler job=%s trigger=%s next=%s", job.id, job.trigger,
                     job.next_run_time.isoformat() if job.next_run_time else None)

    async def stop(self, grace: float) -> None:
        """No new runs; give running ones `grace` seconds, then abort (ticks release)."""
        if not self.scheduler.running:
            return
        self.scheduler.pause()
        if self._inflight:
            _, pending = await asyncio.wait(set(self._inflight), timeout=grace)
            if pending:
                self.stopping.abort.set()
                await asyncio.wait(pending)
        self.scheduler.shutdown(wait=False)
        await asyncio.sleep(0)  # the shutdown runs on the loop's next turn
