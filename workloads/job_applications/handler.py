"""The job-application handler: one stage per slice, and a submit only after a person's approve.

Stages, in `state["stage"]`: draft → compile → fill → park → (await a decision) → submit.
Each saves the state before it returns, so a crash never redoes a finished stage. A decision
is read once (its approval id is kept in `state["consumed"]`): approve → submit; revise →
`field: answer` lines refill the form, anything else redrafts; skip and expiry end the task
in the queue itself, so the handler never sees them.

The stages' modules bring Playwright (the browser stages), Jinja2 and pypdf (the CV's
LaTeX and its page count): they are imported when the first slice runs, not when the
service imports this module to check its config at start (issue 26, goal 8).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING

from taskqueue import Decision, Fail, Handler, Outcome, Task, TaskContext
from workloads.job_applications.artifacts import ArtifactStore
from workloads.job_applications.checkpoints import Checkpoint, env_checkpoint
from workloads.job_applications.job import Job, Runtime
from workloads.job_applications.profile import load_profile
from workloads.job_applications.settings import JobSettings, check_config, load_settings

if TYPE_CHECKING:
    from playwright.async_api import Browser

__all__ = ["CAPABILITY", "check_config", "handle", "make_handler", "split_note"]

CAPABILITY = "job_applications"

# A revise note's lines with these keys steer the drafter; other `key: value` lines answer
# form fields (see drafting.parse_feedback and applicant.parse_field_answers).
DRAFT_KEYS = {"emphasize", "emphasise", "focus", "highlight", "omit", "drop", "paragraph"}

StageFn = Callable[[Job], Awaitable[Outcome]]


def stages() -> dict[str, StageFn]:
    """The stages by the name `state["stage"]` holds, imported on the first slice."""
    from workloads.job_applications.prepare import compile_stage, draft_stage
    from workloads.job_applications.review import fill_stage, park_stage
    from workloads.job_applications.submit import submit_stage

    return {"draft": draft_stage, "compile": compile_stage, "fill": fill_stage,
            "park": park_stage, "submit": submit_stage}


async def handle(task: Task, ctx: TaskContext) -> Outcome:
    """The configured handler (`workloads.job_applications.handler:handle`)."""
    return await make_handler(load_settings())(task, ctx)


def make_handler(settings: JobSettings, *, browser: Browser | None = None,
                 checkpoint: Checkpoint = env_checkpoint) -> Handler:
    """A handler bound to `settings` (and, in tests, a shared browser and crash hooks)."""

    async def handler(task: Task, ctx: TaskContext) -> Outcome:
        rt = Runtime(settings, load_profile(settings.profile),
                     ArtifactStore(settings.artifacts), browser, checkpoint)
        try:
            job = Job(task, ctx, rt)
        except (KeyError, TypeError) as exc:
            return Fail(f"the payload is not a posting from the scrape: {exc!r}", retryable=False)
        return await run(job)

    return handler


async def run(job: Job) -> Outcome:
    """Read a new decision (if any), then run the stage the state names."""
    from workloads.job_applications.submit import resume_after_submit

    if "submit_started" in job.state:
        outcome = await resume_after_submit(job)
        if outcome is not None:
            return outcome
    else:
        await read_decision(job)
    stage = job.state.get("stage", "draft")
    if stage == "await":  # resumed without a new answer (a retried expiry): ask again
        stage = job.state["stage"] = "fill"
    return await stages()[stage](job)


async def read_decision(job: Job) -> None:
    """Act on the latest approval once: approve → submit; revise → refill or redraft."""
    from workloads.job_applications.review import KIND, blocked_reason

    a = job.task.approval
    if a is None or a.id == job.state.get("consumed") or a.request.get("kind") != KIND:
        return
    if a.decision not in (Decision.APPROVED, Decision.REVISED):
        return
    job.state["consumed"] = a.id
    if a.decision == Decision.APPROVED:
        blocked = blocked_reason(job.state)
        if blocked:  # ask again, naming the real cause; nothing is opened or clicked
            job.state.update(stage="park", not_submitted=f"you approved, but it {blocked}")
            await job.stage_event("approve_blocked")
            return
        job.state["stage"] = "submit"
        return
    answers, feedback = split_note(a.note or "")
    if answers:
        job.state["extra_answers"] = {**job.state.get("extra_answers", {}), **answers}
    if feedback:
        job.state["feedback"] = [*job.state.get("feedback", []), feedback]
        for key in ("draft", "cv", "cover_letter", "fill"):
            job.state.pop(key, None)
    job.state["stage"] = "draft" if feedback else "fill"
    await job.stage_event("revised", redraft=bool(feedback), fields=sorted(answers))


def split_note(note: str) -> tuple[dict[str, str], str]:
    """(`field: answer` pairs, drafting feedback) from a revise note."""
    answers: dict[str, str] = {}
    feedback: list[str] = []
    for line in filter(str.strip, note.splitlines()):
        key, sep, value = (part.strip() for part in line.partition(":"))
        if sep and key and value and key.lower() not in DRAFT_KEYS:
            answers[key] = value
        else:
            feedback.append(line.strip())
    return answers, "\n".join(feedback)
