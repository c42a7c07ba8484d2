"""`signoff enqueue` and the capability's settings: the config's, or a warning that there are none.

A task takes its capability's `max_attempts` when it is enqueued. Without this, a task
enqueued before any worker or the service wrote the capability's settings would keep the
default for good, whatever the config file says.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from taskqueue.config.model import Config
from taskqueue.config.settings import apply_capabilities
from taskqueue.queues.whole import TaskQueue
from taskqueue.store.models import Capability
from taskqueue.store.work_models import NewTask

__all__ = ["missing_settings_warning", "with_configured_attempts", "write_configured_settings"]


def with_configured_attempts(items: Sequence[NewTask], config: Config, capability: str
                             ) -> list[NewTask]:
    """`items`, those without their own max_attempts given the config's for `capability`."""
    cap = config.capabilities.get(capability)
    if cap is None or cap.max_attempts is None:
        return list(items)
    return [item if item.max_attempts is not None
            else dataclasses.replace(item, max_attempts=cap.max_attempts) for item in items]


async def write_configured_settings(queue: TaskQueue, config: Config, capability: str) -> None:
    """Write `capability`'s settings from the config file, as a worker does when it starts
    (after the enqueue succeeded: bad input writes nothing)."""
    if capability in config.capabilities:
        await apply_capabilities(queue, config, only=[capability])


async def missing_settings_warning(queue: TaskQueue, config: Config, capability: str
                                   ) -> str | None:
    """The one-line warning when neither the config nor the database has settings for
    `capability`; None otherwise."""
    if capability in config.capabilities:
        return None
    if any(cap.capability == capability for cap in await queue.capability_list()):
        return None
    where = (f"{config.path} has no [capabilities.{capability}]" if config.path is not None
             else "no config file (--config or SIGNOFF_CONFIG)")
    return (f"signoff: warning: capability {capability!r} has no settings in the database yet "
            f"and {where}: defaults apply (max_attempts {Capability(capability).max_attempts})")
