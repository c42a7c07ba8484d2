"""The code-changes handler: one stage per slice, and a push only after a person's approve.

Stages, in `state["stage"]`: work (agent + commit) → test → park → (await a decision) →
push → pr → done. Each saves the state before it returns, so a crash never redoes a finished
stage (a crash inside `work` redoes that round from a fresh worktree). A decision is read
once (its approval id is kept in `state["consumed"]`): approve → push; revise → the note is
added to the instruction and the agent runs again; skip and expiry end the task in the queue
itself, so the handler never sees them (the janitor removes their worktrees and branches).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

from taskqueue import Config, Decision, Fail, Handler, Outcome, Task, TaskContext, require_extra
from workloads.code_changes.change import Change, Checkpoint, no_checkpoint
from workloads.code_changes.payload import BadPayload, parse_payload
from workloads.code_changes.publish import done_stage, pr_stage, push_stage
from workloads.code_changes.review import KIND, park_stage
from workloads.code_changes.sandbox import refusal
from workloads.code_changes.settings import CodeSettings, SettingsError, load_settings
from workloads.code_changes.work import test_stage, work_stage

# Loading the handler checks its libraries (aiohttp, loaded when it first opens a PR).
require_extra("code", "the code_changes workload", "aiohttp")

__all__ = ["CAPABILITY", "MAX_NOTE", "check_config", "handle", "make_handler", "read_decision"]

CAPABILITY = "code_changes"
MAX_NOTE = 4000

StageFn = Callable[[Change], Awaitable[Outcome]]
STAGES: dict[str, StageFn] = {
    "work": work_stage, "test": test_stage, "park": park_stage,
    "push": push_stage, "pr": pr_stage, "done": done_stage,
}


async def handle(task: Task, ctx: TaskContext) -> Outcome:
    """The configured handler (`workloads.code_changes.handler:handle`)."""
    return await make_handler(load_settings())(task, ctx)


def check_config(config: Config) -> None:
    """At start: the section parses, and the agent's sandbox can run here (or `sandbox =
    false` says to go without), so the capability refuses to start with one line instead."""
    settings = load_settings(config.path) if config.path else load_settings()
    if why := refusal(settings):
        raise SettingsError(why)


def make_handler(settings: CodeSettings, *, checkpoint: Checkpoint = no_checkpoint) -> Handler:
    """A handler bound to `settings` (and, in tests, crash hooks)."""

    async def handler(task: Task, ctx: TaskContext) -> Outcome:
        if why := await asyncio.to_thread(refusal, settings):
            return Fail(why, retryable=True)  # nothing ran; a fixed config lets it run
        try:
            payload = parse_payload(task.payload,
                                    max_instruction_bytes=settings.max_instruction_bytes,
                                    allowed_repos=settings.allowed_repos)
        except BadPayload as exc:
            return Fail(f"bad payload: {exc}", retryable=False)
        settings.workspace.mkdir(parents=True, exist_ok=True)
        return await run(Change(task, ctx, settings, payload, checkpoint))

    return handler


async def run(c: Change) -> Outcome:
    """Read a new decision (if any), then run the stage the state names."""
    await read_decision(c)
    stage = c.state.get("stage", "work")
    if stage == "await":  # resumed without a new answer (a retried expiry): test, ask again
        stage = c.state["stage"] = "test"
    return await STAGES[stage](c)


async def read_decision(c: Change) -> None:
    """Act on the latest approval once: approve → push; revise → the agent runs again."""
    a = c.task.approval
    if a is None or a.id == c.state.get("consumed") or a.request.get("kind") != KIND:
        return
    if a.decision not in (Decision.APPROVED, Decision.REVISED) or c.state.get("pushed"):
        return
    c.state["consumed"] = a.id
    if a.decision == Decision.APPROVED:
        c.state["stage"] = "push"
        await c.stage_event("approved", commit=a.request.get("commit"), by=a.decided_by)
        return
    note = (a.note or "").strip()[:MAX_NOTE] or "Please revise the change."
    c.state["notes"] = [*c.state.get("notes", []), note]
    c.state["stage"] = "work"
    c.state.pop("work_started", None)
    await c.stage_event("revised", round=c.state.get("round", 1))
