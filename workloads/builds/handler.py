"""The build handler's stage machine, shared by iOS and Roblox.

Stages, in `state["stage"]`: build → park → (await a decision) → publish. The build saves
its result (stored artifact path and checksum) before it parks, so a crash later never
builds again. A decision is read once (its approval id is kept in `state["consumed"]`):
approve → publish; revise → build again; skip and expiry end the task in the queue itself.
"""

from __future__ import annotations

from collections.abc import Callable

from taskqueue import Approval, ConfigError, Decision, Fail, Handler, Outcome, Task, TaskContext
from workloads.builds.build import build_stage
from workloads.builds.checkpoints import Checkpoint, env_checkpoint
from workloads.builds.git import CheckoutError
from workloads.builds.job import BuildJob, Publisher
from workloads.builds.publish import publish_stage, resume_after_publish
from workloads.builds.review import KIND, park_stage
from workloads.builds.settings import BuildSettings

__all__ = ["make_handler", "run"]


def make_handler(settings: Callable[[], BuildSettings] | BuildSettings, publisher: Publisher,
                 *, checkpoint: Checkpoint = env_checkpoint) -> Handler:
    """A handler for one build capability (settings read at each slice when a callable)."""

    async def handler(task: Task, ctx: TaskContext) -> Outcome:
        try:
            current = settings() if callable(settings) else settings
            job = BuildJob(task, ctx, current, publisher, checkpoint)
        except ConfigError as exc:
            return Fail(str(exc), retryable=False)
        except CheckoutError as exc:
            return Fail(f"bad payload: {exc}", retryable=False)
        return await run(job)

    return handler


def take_answer(job: BuildJob) -> Approval | None:
    """The latest approval if it is a new answer to one of our questions (marked consumed)."""
    a = job.task.approval
    if a is None or a.id == job.state.get("consumed") or a.request.get("kind") != KIND:
        return None
    if a.decision not in (Decision.APPROVED, Decision.REVISED):
        return None
    job.state["consumed"] = a.id
    return a


async def run(job: BuildJob) -> Outcome:
    """Read a new answer (if any), then run the stage the state names."""
    answer = take_answer(job)
    if "publish_started" in job.state:
        outcome = await resume_after_publish(job, answer)
        if outcome is not None:
            return outcome
    elif answer is not None:
        await _apply(job, answer)
    stage = job.state.get("stage", "build")
    if stage == "build":
        outcome = await build_stage(job)
        if outcome is not None:
            return outcome
        stage = "park"
    if stage == "publish":
        return await publish_stage(job)
    return await park_stage(job)  # "park", or "await" resumed without a new answer


async def _apply(job: BuildJob, answer: Approval) -> None:
    if answer.decision == Decision.APPROVED and answer.request.get("step") == "publish":
        job.state.update(stage="publish", approved={"sha256": answer.request.get("sha256"),
                                                    "approval_id": answer.id})
        await job.stage_event("approved", by=answer.decided_by)
    elif answer.decision == Decision.REVISED:
        for key in ("build", "approved", "parked_sha256"):
            job.state.pop(key, None)
        job.state["stage"] = "build"
        await job.stage_event("rebuild_requested", by=answer.decided_by)
