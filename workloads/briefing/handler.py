"""The briefing handler: gather, render, send once through the notification outbox, Done.

Never twice across a crash: the message's id is saved in the task's state right after the
send, and a slice that finds no saved id asks the outbox whether this task already sent
its message (a crash between the send and the save) before sending.
"""

from __future__ import annotations

from datetime import UTC, date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from taskqueue import (
    Config,
    Done,
    Fail,
    Outcome,
    Task,
    TaskContext,
    TaskQueue,
    load_config,
    require_extra,
)
from workloads.briefing.checkpoints import env_checkpoint
from workloads.briefing.gather import Briefing, gather
from workloads.briefing.producer import check_config
from workloads.briefing.render import Rendered, render
from workloads.briefing.settings import load_settings

# Loading the handler checks its library (Jinja2, loaded when it first renders).
require_extra("briefing", "the briefing workload", "jinja2")

__all__ = ["check_config", "compose", "handle", "today"]


def today(config: Config, now: datetime | None = None) -> date:
    """The date in the config's time zone."""
    return (now or datetime.now(UTC)).astimezone(ZoneInfo(config.timezone)).date()


async def compose(queue: TaskQueue, day: date | None = None, *,
                  config: Config | None = None) -> tuple[Briefing, Rendered]:
    """One day's briefing (default today's) read now from the database and the config."""
    config = config or load_config(imports=False)
    settings = load_settings(config.path) if config.path else load_settings()
    now = datetime.now(UTC)
    briefing = await gather(queue, config, settings, day or today(config, now), now)
    return briefing, render(briefing, settings)


def _result(b: Briefing, r: Rendered) -> dict[str, Any]:
    return {"day": b.day.isoformat(), "covers": b.covers.isoformat(), **b.totals(),
            "open_approvals": b.waiting_total, "incident": b.signals.incident.firing,
            "nudge": b.signals.nudge.firing, "empty": b.empty, "html_chars": len(r.html),
            "items": r.items}


async def _sent_before(queue: TaskQueue, task_id: int) -> int | None:
    """The id of a message this task already put in the outbox, if any."""
    rows = await queue.notification_list(task_id=task_id, kind="message")
    return min((int(r["id"]) for r in rows), default=None)


async def _stage(ctx: TaskContext, name: str, **detail: Any) -> None:
    await ctx.queue.event_insert(ctx.task.id, "stage", actor=ctx.worker,
                                 detail={"stage": name, **detail})


async def handle(task: Task, ctx: TaskContext) -> Outcome:
    """`workloads.briefing.handler:handle`: one slice sends the day's briefing once."""
    if (sent := ctx.state.get("notification_id")) is not None:
        return Done({**ctx.state.get("result", {}), "notification_id": sent})
    if (earlier := await _sent_before(ctx.queue, task.id)) is not None:
        ctx.log.info("briefing already in the outbox notification=%s: not sending again",
                     earlier)
        await _stage(ctx, "sent", notification_id=earlier, recovered=True)
        return Done({**ctx.state.get("result", {}), "notification_id": earlier,
                     "recovered": True})
    try:
        day = date.fromisoformat(str(task.payload.get("day", "")))
    except ValueError:
        return Fail(f"payload.day must be a date (YYYY-MM-DD), not {task.payload.get('day')!r}",
                    retryable=False)
    briefing, rendered = await compose(ctx.queue, day)
    result = _result(briefing, rendered)
    await ctx.save_state({"result": result})
    await _stage(ctx, "gathered", **{k: result[k] for k in ("succeeded", "failed")})
    await env_checkpoint("send.before")
    notification_id = await ctx.queue.notification_send(
        rendered.subject, rendered.text, html=rendered.html, task_id=task.id)
    await env_checkpoint("send.after")
    await ctx.save_state({"result": result, "notification_id": notification_id})
    await _stage(ctx, "sent", notification_id=notification_id)
    ctx.log.info("briefing sent day=%s notification=%s chars=%d", day, notification_id,
                 len(rendered.html))
    await env_checkpoint("send.saved")
    return Done({**result, "notification_id": notification_id})
