"""Stage 5: submit, only for the fill a person approved, and click at most once per approval.

The click is the core's gated action (kind `job_application`, the fill's fingerprint), run
in two steps because the click happens inside the browser: right before it the gate reads
the approval again from the database and saves its started marker (with `submit_started`
in the state) fenced on the claim; after it the result is recorded. A slice that finds the
marker without a recorded result cannot know whether the click happened (the worker died
around it), so it never clicks again: it asks the person whether the application went
through. Approve: it did (the task succeeds). Revise: it did not; the form is filled again
and a new approve is needed. Skip: drop it. Job boards' forms take no idempotency key.
"""

from __future__ import annotations

import contextlib
from collections.abc import Awaitable, Callable
from datetime import UTC, datetime
from typing import Any

from taskqueue import (
    ActionUncertain,
    AlreadyActed,
    Decision,
    Done,
    Fail,
    Gate,
    GatedAction,
    NewAttachment,
    NotApproved,
    Outcome,
    Park,
    rename_points,
)
from workloads.job_applications.applicant import ApplicantValues
from workloads.job_applications.artifacts import ArtifactMissing
from workloads.job_applications.forms import FormError, SubmitResult, submit_form
from workloads.job_applications.job import Job
from workloads.job_applications.review import KIND, form_error

__all__ = ["CONFIRM_KIND", "resume_after_submit", "submit_stage"]

CONFIRM_KIND = "job_application_confirm"
CONFIRM_QUESTION = "Did the application to {company} for {role} go through?"
CONFIRM_HELP = ("Approve: it went through (the task ends succeeded). Revise with any note: it "
                "did not; the form is filled again and you approve a new submit. Skip: drop it.")
UNKNOWN = ("the worker stopped after recording that it was about to click submit and before "
           "recording what happened; it will not click again without you")
# The gate's steps under this workload's crash-point names.
POINT_NAMES = {"verified": "submit.verified", "marked": "submit.marked"}


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


def _started(action: GatedAction) -> dict[str, Any]:
    return {"fingerprint": action.fingerprint, "approval_id": action.approval_id,
            "approved_by": action.approved_by, "at": action.started_at.isoformat()}


def _guard(job: Job, gate: Gate, expected: str,
           started: list[GatedAction]) -> Callable[[], Awaitable[None]]:
    """The last word before the click: the gate checks the approval in the database and
    saves its marker with `submit_started`, fenced on this claim (LeaseLost if it is gone)."""

    async def before_click() -> None:
        await job.checkpoint("submit.filled")
        a = job.task.approval  # the gate refuses unless this is the latest, approved, by a person
        job.state["submit_started"] = {
            "fingerprint": expected, "approval_id": a.id if a else None,
            "approved_by": a.decided_by if a else None, "at": datetime.now(UTC).isoformat()}
        try:
            started.append(await gate.begin(expected, state=job.state))
        except BaseException:
            job.state.pop("submit_started", None)
            raise

    return before_click


async def _submit(job: Job, expected: str,
                  before_click: Callable[[], Awaitable[None]]) -> SubmitResult:
    cv, letter = await _approved_files(job)
    values = ApplicantValues.from_dict(job.state["values"])
    with job.files(cv, letter) as files:
        return await submit_form(job.posting.apply_url, values, files, expected,
                                 browser=job.rt.browser, before_click=before_click,
                                 timeout=job.rt.settings.browser_timeout)


async def submit_stage(job: Job) -> Outcome:
    """Refill, compare the fingerprint, let the gate check the approval, then click once."""
    expected = job.state["fill"]["fingerprint"]
    gate = job.ctx.gate(KIND, checkpoint=rename_points(job.checkpoint, POINT_NAMES))
    started: list[GatedAction] = []
    try:
        result = await _submit(job, expected, _guard(job, gate, expected, started))
    except NotApproved as exc:
        await job.stage_event("submit_refused", reason=str(exc))
        return Fail(f"refusing to submit: {exc}", retryable=False)
    except ActionUncertain as exc:  # a click started in an earlier slice, never recorded
        job.state["submit_started"] = _started(exc.action)
        return await _confirm_park(job, UNKNOWN)
    except AlreadyActed as exc:  # recorded, then the worker died before saving its state
        job.state.update(submit_started=_started(exc.action),
                         submit_result=exc.action.result or {})
        return await _after_click(job)
    except ArtifactMissing as exc:
        return Fail(f"the approved files are gone: {exc}", retryable=False)
    except FormError as exc:
        return form_error(job, exc)
    if not result.clicked:
        return await _not_clicked(job, result)
    await job.checkpoint("submit.clicked")
    job.state["submit_result"] = _result_json(job, result)
    await gate.finish(started[0], job.state["submit_result"], state=job.state)
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
