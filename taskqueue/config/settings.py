"""Reads and checks the configuration file (TOML) into a Config."""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from taskqueue.config.checker import Checker, KeyPath
from taskqueue.config.groups import check_capability_people, parse_groups
from taskqueue.config.location import CONFIG_ENV, config_path
from taskqueue.config.model import (
    CAP_SETTINGS,
    MODES,
    PERIODS,
    RANGES,
    CapabilityConfig,
    Config,
    ProducerConfig,
)
from taskqueue.config.reader import read_toml
from taskqueue.config.resolve import check_cron, check_imports, check_timezone
from taskqueue.config.section import remember_source
from taskqueue.errors import ConfigError
from taskqueue.maintenance.pruner import PrunerConfig
from taskqueue.maintenance.signals import SignalConfig
from taskqueue.queues.operator import OperatorQueue
from taskqueue.store.checks import DEFAULT_LIMITS, Limits
from taskqueue.store.models import Capability

_TOP = {"timezone", "reaper", "signals", "nudges", "scheduler", "worker", "capabilities",
        "workloads", "limits", "retention"}
_LIMITS = {"max_json_bytes", "max_json_depth", "max_attachment_bytes"}
# How a capability runs, plus every setting `signoff caps set` takes (CAP_SETTINGS).
_CAP = {"handler", "mode", "concurrency", "tick_minutes", "timeout_seconds", "retention_days",
        "producers", "approvers", "remind_after", "escalate_after", "escalate_to",
        "approval_groups"} | {
            s.key for s in CAP_SETTINGS}
_SIGNALS = {"incident_count", "incident_age_hours", "nudge_count", "nudge_age_hours",
            "check_minutes"}


def workload_section(name: str, path: str | os.PathLike[str] | None = None,
                     env: Mapping[str, str] | None = None) -> tuple[dict[str, Any], Path | None]:
    """A workload's raw `[workloads.NAME]` table (empty when absent) and the file it came
    from: `path`, else SIGNOFF_CONFIG, else no file. The workload checks its own keys."""
    file = config_path(path, env)
    remember_source(f"workloads.{name}", None, None)
    if file is None:
        return {}, None
    doc, text = read_toml(file)
    remember_source(f"workloads.{name}", text, file)
    tables = doc.get("workloads", {})
    section = tables.get(name, {}) if isinstance(tables, Mapping) else tables
    if not isinstance(section, Mapping):
        raise ConfigError(f"{file}: workloads.{name}: must be a table")
    return dict(section), file


def publish_path(config: Config) -> None:
    """Make a `--config FILE` visible as SIGNOFF_CONFIG to the handlers and producers this
    process runs, which read their own `[workloads.NAME]` table from the same file."""
    if config.path is not None:
        os.environ[CONFIG_ENV] = str(config.path.resolve())


def load_config(path: str | os.PathLike[str] | None = None, *,
                env: Mapping[str, str] | None = None, imports: bool = True) -> Config:
    """Read and check the file; a bad one raises ConfigError naming the key and line."""
    env = os.environ if env is None else env
    file = config_path(path, env)
    if file is None:
        return Config()
    doc, text = read_toml(file)
    config = _parse(doc, Checker(text, file), file, text)
    if imports:
        check_imports(config, Checker(text, file))
    return config


def _parse(doc: Mapping[str, Any], c: Checker, file: Path, text: str) -> Config:
    sections = {k: v for k, v in doc.items() if k not in _TOP and isinstance(v, Mapping)}
    top = c.table({k: v for k, v in doc.items() if k not in sections}, (), _TOP)
    tz = c.get(top, ("timezone",), "str", "UTC")
    check_timezone(c, ("timezone",), tz)
    reaper = c.table(top, ("reaper",), {"interval_minutes", "orphan_after_seconds"})
    sig = c.table(top, ("signals",), _SIGNALS)
    nudges = c.table(top, ("nudges",), {"digest_times"})
    sched = c.table(top, ("scheduler",), {"misfire_grace_seconds"})
    worker = c.table(top, ("worker",), {"poll_interval_seconds", "grace_seconds"})
    caps = c.table(top, ("capabilities",), set(top.get("capabilities", {})))
    limits = c.table(top, ("limits",), _LIMITS)
    capabilities = {name: _capability(c, caps, name, tz) for name in caps}
    people = doc.get("people")
    names = [str(p) for p in people] if isinstance(people, Mapping) else []
    for name, cap in capabilities.items():
        check_capability_people(c, name, names, cap.approvers, cap.escalate_to,
                                cap.approval_groups)
    return Config(
        path=file, timezone=tz,
        reaper_interval_minutes=_number(c, reaper, ("reaper", "interval_minutes"), "num", 5),
        orphan_after_seconds=_number(c, reaper, ("reaper", "orphan_after_seconds"), "num", 3600),
        signals=_signals(c, sig),
        signal_check_minutes=_number(c, sig, ("signals", "check_minutes"), "num", 15),
        digest_times=c.get(nudges, ("nudges", "digest_times"), "times", ("09:00", "18:00")),
        misfire_grace_seconds=_number(c, sched, ("scheduler", "misfire_grace_seconds"), "int",
                                      3600),
        poll_interval_seconds=_number(c, worker, ("worker", "poll_interval_seconds"), "num", 5),
        grace_seconds=_number(c, worker, ("worker", "grace_seconds"), "num", 30),
        retention=_retention(c, top, capabilities),
        capabilities=capabilities,
        workloads=_workloads(c, top), sections=sections, source=text,
        limits=Limits(**{k: _number(c, limits, ("limits", k), "int", getattr(DEFAULT_LIMITS, k))
                         for k in sorted(_LIMITS)}),
    )


def _number(c: Checker, table: Mapping[str, Any], key: KeyPath, kind: str,
            default: float | None) -> Any:
    """A numeric key, finite and within its RANGES entry."""
    low, high = RANGES[(str(key[0]), str(key[-1]))]
    return c.get(table, key, kind, default, low, high)


def _workloads(c: Checker, top: Mapping[str, Any]) -> dict[str, Any]:
    raw = top.get("workloads", {})
    return dict(c.table(top, ("workloads",), set(raw) if isinstance(raw, Mapping) else set()))


def _signals(c: Checker, sig: Mapping[str, Any]) -> SignalConfig:
    d = SignalConfig()
    return SignalConfig(
        incident_count=_number(c, sig, ("signals", "incident_count"), "int", d.incident_count),
        incident_age_hours=_number(c, sig, ("signals", "incident_age_hours"), "num",
                                   d.incident_age_hours),
        nudge_count=_number(c, sig, ("signals", "nudge_count"), "int", d.nudge_count),
        nudge_age_hours=_number(c, sig, ("signals", "nudge_age_hours"), "num",
                                d.nudge_age_hours),
    )


def _retention(c: Checker, top: Mapping[str, Any],
               caps: Mapping[str, CapabilityConfig]) -> PrunerConfig:
    t = c.table(top, ("retention",), {"days", "audit_days", "batch", "vacuum_after"})
    d = PrunerConfig()
    return PrunerConfig(
        days=_number(c, t, ("retention", "days"), "num", d.days),
        audit_days=_number(c, t, ("retention", "audit_days"), "num", d.audit_days),
        batch=_number(c, t, ("retention", "batch"), "int", d.batch),
        vacuum_after=_number(c, t, ("retention", "vacuum_after"), "int", d.vacuum_after),
        capabilities={n: cap.retention_days for n, cap in caps.items()
                      if cap.retention_days is not None})


def _capability(c: Checker, caps: Mapping[str, Any], name: str, tz: str) -> CapabilityConfig:
    k: KeyPath = ("capabilities", name)
    t = c.table(caps, k, _CAP)
    mode = c.get(t, (*k, "mode"), "str", "pool")
    if mode not in MODES:
        raise c.error((*k, "mode"), f"must be one of {', '.join(MODES)}, not {mode!r}")
    handler = c.get(t, (*k, "handler"), "str")
    if handler is None and mode != "external":
        raise c.error(k, f'needs a handler ("module:function") to run in mode {mode!r}')
    producers = t.get("producers", [])
    if not isinstance(producers, list):
        raise c.error((*k, "producers"), "must be an array of tables ([[...producers]])")
    return CapabilityConfig(
        name=name, handler=handler, mode=mode,
        concurrency=_number(c, t, (*k, "concurrency"), "int", 1),
        tick_minutes=_number(c, t, (*k, "tick_minutes"), "num", 5),
        max_running=_number(c, t, (*k, "max_running"), "int", None),
        max_parked=_number(c, t, (*k, "max_parked"), "int", None),
        daily_new=_number(c, t, (*k, "daily_new"), "int", None),
        lease_seconds=_number(c, t, (*k, "lease_seconds"), "int", None),
        timeout_seconds=_number(c, t, (*k, "timeout_seconds"), "num", None),
        approval_ttl_hours=_number(c, t, (*k, "approval_ttl_hours"), "num", None),
        max_attempts=_number(c, t, (*k, "max_attempts"), "int", None),
        retry_base_seconds=_number(c, t, (*k, "retry_base_seconds"), "int", None),
        timezone=_cap_timezone(c, t, k),
        retention_days=_number(c, t, (*k, "retention_days"), "num", None),
        required_approvals=_number(c, t, (*k, "required_approvals"), "int", None),
        approvers=_people(c, t, (*k, "approvers")),
        remind_after_hours=_number(c, t, (*k, "remind_after"), "num", None),
        escalate_after_hours=_number(c, t, (*k, "escalate_after"), "num", None),
        escalate_to=_people(c, t, (*k, "escalate_to")),
        approval_groups=parse_groups(c, t, k),
        signed_approvals=c.get(t, (*k, "signed_approvals"), "bool", None),
        producers=tuple(_producer(c, (*k, "producers", i), p, tz)
                        for i, p in enumerate(producers)),
    )


def _cap_timezone(c: Checker, t: Mapping[str, Any], k: KeyPath) -> str | None:
    tz = c.get(t, (*k, "timezone"), "str")
    if tz is not None:
        check_timezone(c, (*k, "timezone"), tz)
    return tz


def _people(c: Checker, table: Mapping[str, Any], key: KeyPath) -> tuple[str, ...] | None:
    """A list of person names (`[people.NAME]`), or None when the key is absent."""
    raw = table.get(str(key[-1]))
    if raw is None:
        return None
    if (not isinstance(raw, list) or len(raw) > 100
            or not all(isinstance(n, str) and n.strip() and len(n) <= 200 for n in raw)):
        raise c.error(key, "must be a list of person names, e.g. [\"alice\", \"bob\"]")
    return tuple(raw)


def _producer(c: Checker, k: KeyPath, raw: Any, tz: str) -> ProducerConfig:
    t = c.keys(raw, k, {"name", "function", "cron", "period"})
    for key in ("name", "function", "cron"):
        if key not in t:
            raise c.error(k, f"a producer needs {key!r}")
    cron = c.get(t, (*k, "cron"), "str")
    check_cron(c, (*k, "cron"), cron, tz)
    period = c.get(t, (*k, "period"), "str", "day")
    if period not in PERIODS:
        raise c.error((*k, "period"), f"must be one of {', '.join(PERIODS)}, not {period!r}")
    return ProducerConfig(c.get(t, (*k, "name"), "str"), c.get(t, (*k, "function"), "str"),
                          cron, period)


async def apply_capabilities(queue: OperatorQueue, config: Config, *,
                             only: Iterable[str] | None = None) -> list[Capability]:
    """Write each configured capability's caps and timings (or only those named) to the
    database, and make the file's `[limits]` this queue's (the service and `signoff worker`
    both call this right after connecting)."""
    queue.limits = config.limits
    names = None if only is None else set(only)
    return [await queue.capability_set(name, **cap.settings(config.timezone))
            for name, cap in sorted(config.capabilities.items())
            if names is None or name in names]
