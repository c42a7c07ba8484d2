"""The first two stages: draft the CV and letter, then compile them to PDF."""

from __future__ import annotations

from taskqueue import Fail, Outcome
from workloads.job_applications.board_jobs import check_posting
from workloads.job_applications.codec import draft_from_json, draft_to_json
from workloads.job_applications.drafting import Draft, draft_deterministic
from workloads.job_applications.job import Job
from workloads.job_applications.latex import (
    CompileError,
    PageLimitError,
    build_cover_letter,
    build_cv,
)
from workloads.job_applications.model_drafter import DrafterError, draft_with_model

__all__ = ["compile_stage", "draft_stage"]


def _feedback(job: Job) -> str | None:
    notes = job.state.get("feedback", [])
    return "\n".join(notes) if notes else None


async def _draft(job: Job) -> Draft:
    """The model's draft when one is configured; DrafterError before the last attempt.

    On the task's last attempt a failing model gives way to the deterministic drafter,
    and the reason goes into the state (and so into the request the person sees).
    """
    model, profile = job.rt.settings.model, job.rt.profile
    if model is None:
        return draft_deterministic(job.posting, profile, _feedback(job))
    try:
        return await draft_with_model(job.posting, profile, model, _feedback(job))
    except DrafterError as exc:
        if job.task.attempts < job.task.max_attempts - 1:
            raise
        job.state["drafter_note"] = (
            f"the model drafter failed on the last attempt ({exc}); "
            "the deterministic drafter wrote this draft instead")
        return draft_deterministic(job.posting, profile, _feedback(job))


async def _gone(job: Job) -> Fail | None:
    """A posting the board no longer has ends the task before any drafting (Fail, final).

    Only a 404/410 from the board's one-job view counts: a board that cannot be reached now
    says nothing about the posting, so drafting goes on and the form is the later check."""
    settings = job.rt.settings
    check = await check_posting(job.posting, settings.boards, timeout=settings.board_timeout)
    if check.gone:
        await job.stage_event("gone", error=check.error)
        return Fail(f"the posting is gone: the board answers {check.error}", retryable=False)
    if check.error:
        job.ctx.log.warning("cannot check the posting is live (%s); drafting anyway", check.error)
    return None


async def draft_stage(job: Job) -> Outcome:
    """Stage 1: check the posting is still live, then choose what the CV and letter say."""
    gone = await _gone(job)
    if gone is not None:
        return gone
    job.state.pop("drafter_note", None)
    try:
        draft = await _draft(job)
    except DrafterError as exc:
        job.ctx.log.warning("model drafter failed: %s", exc)
        await job.save()  # a retry starts from what is saved, not from nothing
        return Fail(f"model drafter failed: {exc}", retryable=True)
    await job.checkpoint("draft.middle")
    job.state.update(draft=draft_to_json(draft), drafter=draft.drafter, stage="compile")
    await job.save()
    await job.stage_event("drafted", drafter=draft.drafter)
    await job.checkpoint("draft.end")
    return job.release()


async def compile_stage(job: Job) -> Outcome:
    """Stage 2: the CV (at most cv_max_pages, shortened if needed) and the one-page letter."""
    draft = draft_from_json(job.state["draft"])
    profile, store = job.rt.profile, job.rt.store
    try:
        cv = await build_cv(draft, profile, max_pages=job.rt.settings.cv_max_pages)
        await job.checkpoint("compile.middle")
        letter = await build_cover_letter(draft, profile)
    except CompileError as exc:
        await job.ctx.queue.event_insert(job.task.id, "compile_failed", actor=job.ctx.worker,
                                         detail={"error": str(exc), "log": exc.log})
        return Fail(f"LaTeX compile failed: {exc}\n{exc.log[-2000:]}",
                    retryable="timed out" in str(exc))
    except PageLimitError as exc:
        return Fail(f"LaTeX page limit: {exc}", retryable=False)
    job.state.update(
        cv={"sha256": store.put(cv.pdf), "pages": cv.pages, "dropped_bullets": cv.dropped},
        cover_letter={"sha256": store.put(letter)},
        stage="fill",
    )
    await job.save()
    await job.stage_event("compiled", cv_pages=cv.pages, dropped_bullets=cv.dropped)
    await job.checkpoint("compile.end")
    return job.release()
