"""Config checks that reach outside the file: time zones, cron, and the code it names."""

from __future__ import annotations

import sys
import zoneinfo
from collections.abc import Callable

from taskqueue.config.checker import Checker, KeyPath
from taskqueue.config.model import Config
from taskqueue.errors import ConfigError


def check_timezone(c: Checker, key: KeyPath, name: str) -> None:
    try:
        zoneinfo.ZoneInfo(name)
    except (zoneinfo.ZoneInfoNotFoundError, ValueError):
        raise c.error(key, f"unknown time zone {name!r}") from None


def check_cron(c: Checker, key: KeyPath, expr: str, tz: str) -> None:
    """A five-field crontab expression (or a nickname such as @daily) APScheduler accepts."""
    # Imported here, as load_handler below: a command run without a config file (most
    # CLI calls) checks no schedule and no handler, and so never pays for their modules.
    from taskqueue.runtime.cron import cron_trigger

    try:
        cron_trigger(expr, tz)
    except ValueError as exc:
        raise c.error(key, f"invalid cron schedule {expr!r}: {exc}") from None


def check_imports(config: Config, c: Checker) -> None:
    """Import every handler and producer now, so a typo fails before anything starts; then
    run the `check_config(config)` of each one's module, so a workload's settings (a file
    it names, say) are checked at start too, instead of failing tasks at run time."""
    checks: list[Callable[[Config], None]] = []
    for name, cap in config.capabilities.items():
        if cap.handler:
            checks += _import(c, ("capabilities", name, "handler"), cap.handler, "handler")
        for i, p in enumerate(cap.producers):
            checks += _import(c, ("capabilities", name, "producers", i, "function"),
                              p.function, "producer")
    for check in dict.fromkeys(checks):
        check(config)


def _import(c: Checker, key: KeyPath, spec: str, what: str) -> list[Callable[[Config], None]]:
    from taskqueue.runtime.handler import load_handler

    try:
        load_handler(spec, what=what)
    except ConfigError as exc:
        raise c.error(key, str(exc)) from None
    check = getattr(sys.modules[spec.partition(":")[0]], "check_config", None)
    return [check] if callable(check) else []
