"""The configuration's shape: capabilities, schedules, signals, and the tables the core does
not read (a channel's, `[workloads.NAME]`), kept unparsed for their owners."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from taskqueue.config.checker import Checker
from taskqueue.maintenance.pruner import PrunerConfig
from taskqueue.maintenance.signals import SignalConfig
from taskqueue.store.checks import Limits
from taskqueue.store.models import ApproverGroup

MODES = ("pool", "tick", "external")
PERIODS = ("day", "hour", "week")

_DAY = 86400
_INT4 = 2**31 - 1  # the database's integer columns
# Each numeric key's range, both ends included (`[capabilities.NAME]` keys under
# "capabilities"): past it a value means nothing useful, or overflows the timer, the
# interval or the integer column it becomes. Documented in signoff.example.toml.
RANGES: dict[tuple[str, str], tuple[float, float]] = {
    ("reaper", "interval_minutes"): (0.01, 1440),
    ("reaper", "orphan_after_seconds"): (1, 30 * _DAY),
    ("signals", "incident_count"): (0, 1_000_000),
    ("signals", "incident_age_hours"): (0, 8760),
    ("signals", "nudge_count"): (0, 1_000_000),
    ("signals", "nudge_age_hours"): (0, 8760),
    ("signals", "check_minutes"): (0.01, 1440),
    ("scheduler", "misfire_grace_seconds"): (1, 30 * _DAY),
    ("worker", "poll_interval_seconds"): (0.01, 3600),
    ("worker", "grace_seconds"): (0, _DAY),
    ("retention", "days"): (0.0001, 36500),
    ("retention", "audit_days"): (0.0001, 36500),
    ("retention", "batch"): (1, 100_000),
    ("retention", "vacuum_after"): (0, 1_000_000_000),  # 0: never
    ("limits", "max_json_bytes"): (1, 256 * 1024 * 1024),
    ("limits", "max_json_depth"): (1, 500),
    ("limits", "max_attachment_bytes"): (1, 1024 * 1024 * 1024),
    ("capabilities", "concurrency"): (1, 1000),
    ("capabilities", "tick_minutes"): (0.01, 7 * 1440),
    ("capabilities", "max_running"): (0, _INT4),
    ("capabilities", "max_parked"): (0, _INT4),
    ("capabilities", "daily_new"): (0, _INT4),
    ("capabilities", "lease_seconds"): (1, 30 * _DAY),
    ("capabilities", "timeout_seconds"): (0.001, 30 * _DAY),
    ("capabilities", "approval_ttl_hours"): (0.0003, 87600),
    ("capabilities", "max_attempts"): (1, 1000),
    ("capabilities", "retry_base_seconds"): (0, _DAY),
    ("capabilities", "retention_days"): (0.0001, 36500),
    ("capabilities", "required_approvals"): (1, 10),
    ("capabilities", "remind_after"): (0.0003, 87600),
    ("capabilities", "escalate_after"): (0.0003, 87600),
}


@dataclass(frozen=True)
class CapSetting:
    """One capability setting, under its three names: `signoff caps set --OPTION`, the key
    in `[capabilities.NAME]`, and the column `TaskQueue.capability_set` writes.

    The file's value is multiplied by `scale` (hours there, seconds in the database)."""

    option: str
    key: str
    column: str
    help: str
    scale: float = 1


# The one list of capability settings: `caps set` builds its options from it and the config
# file accepts exactly these keys (beside how a capability runs: handler, mode, ...).
CAP_SETTINGS = (
    CapSetting("max_running", "max_running", "max_running",
               "at most this many running at once (none clears the cap)"),
    CapSetting("max_parked", "max_parked", "max_parked",
               "at most this many parked at a question at once (none clears the cap)"),
    CapSetting("daily_new", "daily_new", "daily_new",
               "at most this many new claims a day (none clears the cap)"),
    CapSetting("timezone", "timezone", "day_timezone",
               "the time zone whose midnight starts daily_new's day, e.g. Europe/Paris "
               "(in the file: defaults to the top-level timezone)"),
    CapSetting("lease", "lease_seconds", "lease_seconds",
               "seconds a claim holds without a heartbeat"),
    CapSetting("approval_ttl", "approval_ttl_hours", "approval_ttl_seconds",
               "how long an approval stays open before it expires (seconds on the command "
               "line, hours in the file)", scale=3600),
    CapSetting("max_attempts", "max_attempts", "max_attempts",
               "attempts before a failing task is dead"),
    CapSetting("retry_base", "retry_base_seconds", "retry_base_seconds",
               "the first retry's delay in seconds; each further retry doubles it, up to an hour"),
    CapSetting("required_approvals", "required_approvals", "required_approvals",
               "distinct people who must approve a request (four-eyes: 2)"),
    CapSetting("signed_approvals", "signed_approvals", "signed_approvals",
               "on: an approve counts only when the person confirmed it with their passkey "
               "(in the web inbox); chat channels and the CLI cannot sign"),
)


@dataclass(frozen=True)
class ProducerConfig:
    """A cron-scheduled producer: `function(queue, context)` enqueues one period's work."""

    name: str
    function: str
    cron: str
    period: str = "day"


@dataclass(frozen=True)
class CapabilityConfig:
    """One capability: its handler, how it runs (pool, tick or external), caps and timings.

    `external` means workers elsewhere (`signoff worker` on another host) run it."""

    name: str
    handler: str | None = None
    mode: str = "pool"
    concurrency: int = 1
    tick_minutes: float = 5
    max_running: int | None = None
    max_parked: int | None = None
    daily_new: int | None = None
    lease_seconds: int | None = None
    timeout_seconds: float | None = None
    approval_ttl_hours: float | None = None
    max_attempts: int | None = None
    retry_base_seconds: int | None = None
    timezone: str | None = None
    retention_days: float | None = None
    producers: tuple[ProducerConfig, ...] = ()
    # Four-eyes (docs/semantics.md): distinct approves required, who may decide, and
    # when (hours) to remind and escalate to whom. None: not set by the file.
    required_approvals: int | None = None
    approvers: tuple[str, ...] | None = None
    remind_after_hours: float | None = None
    escalate_after_hours: float | None = None
    escalate_to: tuple[str, ...] | None = None
    # Approver groups (issue 39): every group's minimum of distinct people must approve.
    approval_groups: tuple[ApproverGroup, ...] | None = None
    signed_approvals: bool | None = None

    def settings(self, timezone: str) -> dict[str, Any]:
        """The keyword arguments of `TaskQueue.capability_set` this file sets."""
        out: dict[str, Any] = {"day_timezone": self.timezone or timezone}
        for s in CAP_SETTINGS:
            value = getattr(self, s.key)
            if value is not None and s.key != "timezone":
                out[s.column] = round(value * s.scale) if s.scale != 1 else value
        if self.approvers is not None:
            out["approvers"] = list(self.approvers)
        if self.escalate_to is not None:
            out["escalate_to"] = list(self.escalate_to)
        if self.approval_groups is not None:
            out["approval_groups"] = list(self.approval_groups)
        for key, hours in (("remind_after_seconds", self.remind_after_hours),
                           ("escalate_after_seconds", self.escalate_after_hours)):
            if hours is not None:
                out[key] = max(1, round(hours * 3600))
        return out


@dataclass(frozen=True)
class Config:
    """Everything the service and workers read from the file (defaults when there is none)."""

    path: Path | None = None
    timezone: str = "UTC"
    reaper_interval_minutes: float = 5
    orphan_after_seconds: float = 3600
    signals: SignalConfig = field(default_factory=SignalConfig)
    signal_check_minutes: float = 15
    digest_times: tuple[str, ...] = ("09:00", "18:00")
    misfire_grace_seconds: int = 3600
    poll_interval_seconds: float = 5
    grace_seconds: float = 30
    retention: PrunerConfig = field(default_factory=PrunerConfig)
    capabilities: Mapping[str, CapabilityConfig] = field(default_factory=dict)
    # [workloads.NAME] tables, passed through unchecked: each workload reads and checks its own.
    workloads: Mapping[str, Any] = field(default_factory=dict)
    # Other top-level tables (a delivery channel's, a web inbox's), unparsed: their owners
    # check them.
    sections: Mapping[str, Any] = field(default_factory=dict)
    # [limits]: what the queue stores at most (JSON size and depth, attachment size).
    limits: Limits = field(default_factory=Limits)
    source: str = field(default="", repr=False)

    def capability(self, name: str) -> CapabilityConfig | None:
        return self.capabilities.get(name)

    def checker(self) -> Checker:
        """Typed reads of this file whose errors name the key and its line (for the owners
        of `sections` and `workloads`)."""
        return Checker(self.source, self.path)
