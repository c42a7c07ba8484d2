"""Stage 5: submit, only for the fill a person approved, and click at most once per approval.

At-most-once: `submit_started` is saved (fenced on the claim) after the approval is verified
and before the click. A slice that finds it without a recorded outcome cannot know whether
the click happened (the worker died around it), so it never clicks again: it asks the person
whether the application went through. Approve: it did (the task succeeds). Revise: it did
not; the form is filled again and a new approve is needed. Skip: drop it.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from taskqueue import Approval, Decision, Done, Fail, NewAttachment, Outcome, Park, Status, Task
from workloads.job_applications.applicant import ApplicantValues
from workloads.job_applications.artifacts import ArtifactMissing
from workloads.job_applications.forms import FormError, SubmitResult, submit_form
from workloads.job_applications.job import Job
from workloads.job_applications.review import KIND, form_error

__all__ = ["CONFIRM_KIND", "NotApproved", "resume_after_submit", "submit_stage",
           "verify_approval"]

CONFIRM_KIND = "job_application_confirm"
CONFIRM_QUESTION = "Did the application to {company} for {role} go through?"
CONFIRM_HELP = ("Approve: it went through (the task ends succeeded). Revise with any note: it "
                "did not; the form is filled again and you approve a new submit. Skip: drop it.")
UNKNOWN = ("the worker stopped after recording that it was about to click submit and before "
           "recording what happened; it will not click again without you")


class NotApproved(Exception):
    """The database does not show an approve by a person for this exact fill."""


def approval_problem(fresh: Task, job: Job, expected: str) -> str | None:
    """Why the latest approval does not allow this click; None when it does."""
    a = fresh.approval
    if fresh.status != Status.RUNNING or fresh.claim != job.task.claim:
        return f"this worker no longer holds the task (it is {fresh.status.value})"
    if a is None or a.decision != Decision.APPROVED:
        return f"the latest decision is {a.decision.value if a and a.decision else 'none'}"
    if not (a.decided_by or "").strip():
        return "the approval names no person"
    if a.request.get("kind") != KIND:
        return f"the latest approval is a {a.request.get('kind')!r} question, not the application"
    if a.request.get("fingerprint") != expected:
        return "the approved fill's fingerprint differs from the one about to be submitted"
    return None


async def verify_approval(job: Job, expected: str) -> Approval:
    """Read the task again and check its approval; NotApproved says what is wrong."""
    fresh = await job.ctx.queue.task_get(job.task.id)
    problem = approval_problem(fresh, job, expected)
    if problem is not None or fresh.approval is None:
        raise NotApproved(problem)
    return fresh.approval


async def _approved_files(job: Job) -> tuple[bytes, bytes]:
    """The CV and letter exactly as attached to the approval (the store as a fallback)."""
    wanted = (job.state["cv"]["sha256"], job.state["cover_letter"]["sha256"])
    found: dict[str, bytes] = {}
    for att in job.task.approval.attachments if job.task.approval else ():
        if att.sha256 in wanted and att.sha256 not in found:
            data = (await job.ctx.queue.attachment_get(att.id)).data
            found[att.sha256] = data or b""
    return found.get(wanted[0]) or job.rt.store.get(wanted[0]), \
        found.get(wanted[1]) or job.rt.store.get(wanted[1])


def _guard(job: Job, expected: str) -> Callable[[], Awaitable[None]]:
    """The last word before the click: verify the approval, then save `submit_started`.

    The save is fenced on this claim, so a worker that lost the task cannot click either."""

    async def before_click() -> None:
        await job.checkpoint("submit.filled")
        approval = await verify_approval(job, expected)
        await job.checkpoint("submit.verified")
        job.state["submit_started"] = {
            "fingerprint": expected, "approval_id": approval.id,
            "approved_by": approval.decided_by, "at": datetime.now(UTC).isoformat()}
        await job.save()
        await job.checkpoint("submit.marked")

    return before_click


async def _submit(job: Job, expected: str) -> SubmitResult:
    cv, letter = await _approved_files(job)
    values = ApplicantValues.from_dict(job.state["values"])
    with job.files(cv, letter) as files:
        return await submit_form(job.posting.apply_url, values, files, expected,
                                 browser=job.rt.browser, before_click=_guard(job, expected),
                                 timeout=job.rt.settings.browser_timeout)


async def submit_stage(job: Job) -> Outcome:
    """Refill, compare the fingerprint, verify the approval in the database, then click."""
    try:
        result = await _submit(job, job.state["fill"]["fingerprint"])
    except NotApproved as exc:
        await job.stage_event("submit_refused", reason=str(exc))
        return Fail(f"refusing to submit: {exc}", retryable=False)
    except ArtifactMissing as exc:
        return Fail(f"the approved files are gone: {exc}", retryable=False)
    except FormError as exc:
        return form_error(job, exc)
    if not result.clicked:
        return await _not_clicked(job, result)
    await job.checkpoint("submit.clicked")
    job.state["submit_result"] = _result_json(job, result)
    await job.save()
    await job.checkpoint("submit.end")
    return await _after_click(job)


def _result_json(job: Job, result: SubmitResult) -> dict[str, Any]:
    return {"status": result.status, "message": result.message, "url": result.url,
            "confirmation_text": result.confirmation_text,
            "screenshot": job.rt.store.put(result.screenshot)}


async def _not_clicked(job: Job, result: SubmitResult) -> Outcome:
    if result.status == "error":  # e.g. no submit button: nothing was sent, try again later
        await job.save()
        return Fail(f"submit not clicked: {result.message}", retryable=True)
    # Only a changed form is reported as one: required fields left empty are named as such.
    key = "form_changed" if result.status == "form_changed" else "not_submitted"
    job.state.update(stage="fill", **{key: result.message})
    await job.save()
    await job.stage_event("form_changed" if key == "form_changed" else "incomplete",
                          status=result.status)
    return job.release()


async def _after_click(job: Job) -> Outcome:
    result = job.state.get("submit_result") or {}
    if result.get("status") == "submitted":
        return await _done(job, result, confirmed_by=None)
    return await _confirm_park(job, result.get("message") or UNKNOWN)


async def resume_after_submit(job: Job) -> Outcome | None:
    """A slice of a task whose submit may have clicked: never click again.

    Returns the outcome, or None when the person said it did not go through (the
    caller then runs the fill stage to prepare a new approval)."""
    a = job.task.approval
    answered = (Decision.APPROVED, Decision.REVISED)  # an expired question is asked again
    fresh = (a is not None and a.request.get("kind") == CONFIRM_KIND and a.decision in answered
             and a.id != job.state.get("consumed"))
    if not fresh or a is None:
        return await _after_click(job)
    job.state["consumed"] = a.id
    if a.decision == Decision.APPROVED:
        return await _done(job, job.state.get("submit_result") or {}, confirmed_by=a.decided_by)
    for key in ("submit_started", "submit_result"):
        job.state.pop(key, None)
    job.state["stage"] = "fill"
    await job.stage_event("not_submitted", decided_by=a.decided_by)
    return None


async def _done(job: Job, result: dict[str, Any], confirmed_by: str | None) -> Done:
    started = job.state["submit_started"]
    await job.stage_event("submitted", confirmed_by=confirmed_by)
    return Done({
        "status": "submitted", "company": job.company, "role": job.role,
        "posting_url": job.posting.url, "approved_by": started["approved_by"],
        "approval_id": started["approval_id"], "fingerprint": started["fingerprint"],
        "confirmation_text": result.get("confirmation_text", ""),
        "confirmation_url": result.get("url"), "screenshot": result.get("screenshot"),
        "confirmed_by": confirmed_by,
    })


def _as_sentence(reason: str) -> str:
    """`reason` ending in one full stop: a page's "try again later." keeps its own."""
    reason = reason.rstrip()
    return reason if reason.endswith((".", "!", "?")) else f"{reason}."


async def _confirm_park(job: Job, reason: str) -> Park:
    shot = (job.state.get("submit_result") or {}).get("screenshot")
    files = []
    if shot:
        with contextlib.suppress(ArtifactMissing):
            files.append(NewAttachment("after_submit.png", job.rt.store.get(shot), "image/png"))
    await job.stage_event("confirm_asked")
    return Park(
        CONFIRM_QUESTION.format(company=job.company, role=job.role),
        request={"kind": CONFIRM_KIND, "company": job.company, "role": job.role,
                 "url": job.posting.url, "apply_url": job.posting.apply_url,
                 "summary": f"{_as_sentence(reason)} {CONFIRM_HELP}", "reason": reason,
                 "how_to_answer": CONFIRM_HELP},
        attachments=tuple(files), state=dict(job.state))
